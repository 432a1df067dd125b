//! CPU trials of the 1D filter references: the border mapping against the kernels' closed form,
//! scipy.ndimage's own outputs (tests/data/scipy_conv1d.txt), and the CPU baselines.

use gpuprims::Border;
use gpuprims::abi::border::{border_index, border_index_i32};
use gpuprims::cpu::conv1d as cpu;
use libtest_mimic::Trial;
use rand::Rng;

use crate::common::{fixture_border, fixture_numbers, rng};

/// One scipy.ndimage case.
pub struct ScipyCase {
    pub op: String,
    pub border: Border,
    pub x: Vec<f64>,
    /// Taps (correlate1d, convolve1d) or `[width]` (uniform_filter1d).
    pub taps: Vec<f64>,
    pub y: Vec<f64>,
}

impl ScipyCase {
    /// The case in correlation form: taps and anchor.
    pub fn correlation(&self) -> (Vec<f64>, usize) {
        let l = self.taps.len();
        match self.op.as_str() {
            "correlate1d" => (self.taps.clone(), l / 2),
            "convolve1d" => (self.taps.iter().rev().copied().collect(), l - 1 - l / 2),
            _ => {
                let w = self.taps[0] as usize;
                (vec![1.0 / w as f64; w], w / 2)
            }
        }
    }
}

/// The cases of tests/data/scipy_conv1d.txt.
pub fn scipy_cases() -> Vec<ScipyCase> {
    let text = include_str!("data/scipy_conv1d.txt");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let parts: Vec<&str> = l.split('|').collect();
            let head: Vec<&str> = parts[0].split_whitespace().collect();
            let cval: f64 = head[2].parse().expect("cval");
            let border = fixture_border(head[1], cval);
            ScipyCase {
                op: head[0].to_string(),
                border,
                x: fixture_numbers(parts[1]),
                taps: fixture_numbers(parts[2]),
                y: fixture_numbers(parts[3]),
            }
        })
        .collect()
}

/// Whether `got` matches scipy: exactly for integer taps, to 1e-12 for the mean.
pub fn scipy_match(case: &ScipyCase, got: f64, want: f64) -> bool {
    if case.op == "uniform_filter1d" {
        (got - want).abs() <= 1e-12 * want.abs().max(1.0)
    } else {
        got == want
    }
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("cpu::conv1d::border_mapping_matches_kernel_closed_form", || {
            for border in Border::ALL {
                let (mode, _) = border.device();
                for n in 1..=9usize {
                    for i in -200i64..200 {
                        let reference = cpu::extended_index(i, n, border).map(|j| j as i64);
                        let kernel = border_index(i, n as i64, mode);
                        let kernel32 = border_index_i32(i as i32, n as i32, mode).map(i64::from);
                        if reference != kernel || reference != kernel32 {
                            return Err(
                                format!("{border:?} n={n} i={i}: {reference:?} vs {kernel:?}, {kernel32:?}").into(),
                            );
                        }
                    }
                }
            }
            Ok(())
        }),
        Trial::test("cpu::conv1d::reference_matches_scipy", || {
            let cases = scipy_cases();
            if cases.len() != 630 {
                return Err(format!("fixture has {} cases, expected 630", cases.len()).into());
            }
            for c in &cases {
                let (taps, anchor) = c.correlation();
                for (i, &want) in c.y.iter().enumerate() {
                    let (got, _) = cpu::oracle(&c.x, &taps, anchor, c.border, i);
                    if !scipy_match(c, got, want) {
                        return Err(format!(
                            "{} {:?} x={:?} taps={:?}: y[{i}] = {got}, scipy {want}",
                            c.op, c.border, c.x, c.taps
                        )
                        .into());
                    }
                }
            }
            Ok(())
        }),
        Trial::test("cpu::conv1d::scipy_documented_examples", || {
            // scipy.ndimage.correlate1d / convolve1d docstrings (default mode "reflect").
            let x = [2.0, 8.0, 0.0, 4.0, 1.0, 9.0, 9.0, 0.0];
            let corr: Vec<f64> = (0..8)
                .map(|i| cpu::oracle(&x, &[1.0, 3.0], 1, Border::Reflect, i).0)
                .collect();
            let conv: Vec<f64> = (0..8)
                .map(|i| cpu::oracle(&x, &[3.0, 1.0], 0, Border::Reflect, i).0)
                .collect();
            if corr != [8.0, 26.0, 8.0, 12.0, 7.0, 28.0, 36.0, 9.0]
                || conv != [14.0, 24.0, 4.0, 13.0, 12.0, 36.0, 27.0, 0.0]
            {
                return Err(format!("correlate {corr:?}, convolve {conv:?}").into());
            }
            Ok(())
        }),
        Trial::test("cpu::conv1d::baselines_match_oracle", || {
            let mut r = rng(77);
            for (rows, n, taps_len) in [(1, 100_000, 5), (3, 1_000, 31), (5, 7, 12), (2, 1, 3)] {
                let x: Vec<f64> = (0..rows * n).map(|_| r.random_range(-1.0..1.0)).collect();
                let taps: Vec<f64> = (0..taps_len).map(|_| r.random_range(-1.0..1.0)).collect();
                for border in Border::ALL {
                    let anchor = taps_len / 2;
                    let mut serial = vec![0.0; x.len()];
                    let mut par = vec![0.0; x.len()];
                    cpu::correlate(&x, n, &taps, anchor, border, &mut serial);
                    cpu::par_correlate(&x, n, &taps, anchor, border, &mut par);
                    for o in 0..x.len() {
                        let (want, scale) = cpu::oracle(&x[o / n * n..(o / n + 1) * n], &taps, anchor, border, o % n);
                        let tol = 1e-13 * scale;
                        if (serial[o] - want).abs() > tol || (par[o] - want).abs() > tol {
                            return Err(format!("{border:?} rows={rows} n={n} output {o}").into());
                        }
                    }
                }
            }
            Ok(())
        }),
    ]
}
