//! CPU trials of the window-statistics references: the oracle against scipy.ndimage's own outputs
//! (uniform_filter1d cases of tests/data/scipy_conv1d.txt, uniform_filter cases of
//! tests/data/scipy_window.txt), and the sliding-sum baselines against the oracle.

use gpuprims::Border;
use gpuprims::cpu::window as cpu;
use libtest_mimic::{Failed, Trial};
use rand::Rng;

use crate::common::{fixture_border, fixture_numbers, rng};
use crate::cpu_conv1d::scipy_cases;

/// One scipy uniform_filter case.
pub struct ScipyBox {
    pub border: Border,
    pub shape: (usize, usize),
    pub window: (usize, usize),
    pub x: Vec<f64>,
    /// scipy's means; box sums are these times h·w.
    pub y: Vec<f64>,
}

/// The cases of tests/data/scipy_window.txt.
pub fn scipy_boxes() -> Vec<ScipyBox> {
    let text = include_str!("data/scipy_window.txt");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let parts: Vec<&str> = l.split('|').collect();
            let head: Vec<&str> = parts[0].split_whitespace().collect();
            let cval: f64 = head[1].parse().expect("cval");
            let border = fixture_border(head[0], cval);
            let (s, w) = (fixture_numbers(parts[1]), fixture_numbers(parts[2]));
            ScipyBox {
                border,
                shape: (s[0] as usize, s[1] as usize),
                window: (w[0] as usize, w[1] as usize),
                x: fixture_numbers(parts[3]),
                y: fixture_numbers(parts[4]),
            }
        })
        .collect()
}

/// Whether a box sum matches scipy's mean times the box size (scipy's mean is rounded once).
pub fn scipy_box_match(got_sum: f64, want_mean: f64, n: usize) -> bool {
    (got_sum - want_mean * n as f64).abs() <= 1e-12 * (want_mean.abs() * n as f64).max(1.0)
}

fn oracle_vs_scipy_rows() -> Result<(), Failed> {
    let mut checked = 0;
    for case in scipy_cases().iter().filter(|c| c.op == "uniform_filter1d") {
        let w = case.taps[0] as usize;
        for (i, &want) in case.y.iter().enumerate() {
            let got = cpu::row_oracle(&case.x, w, case.border, i).sum / w as f64;
            if (got - want).abs() > 1e-12 * want.abs().max(1.0) {
                return Err(format!("{:?} x={:?} w={w} i={i}: {got} vs scipy {want}", case.border, case.x).into());
            }
            checked += 1;
        }
    }
    if checked < 100 {
        return Err(format!("only {checked} scipy outputs checked").into());
    }
    Ok(())
}

fn oracle_vs_scipy_boxes() -> Result<(), Failed> {
    let cases = scipy_boxes();
    if cases.len() < 200 {
        return Err(format!("only {} scipy cases", cases.len()).into());
    }
    for c in &cases {
        let (hh, ww) = c.shape;
        for r in 0..hh {
            for col in 0..ww {
                let got = cpu::box_oracle(&c.x, ww, c.window, c.border, (r, col)).sum;
                let want = c.y[r * ww + col];
                if !scipy_box_match(got, want, c.window.0 * c.window.1) {
                    return Err(format!(
                        "{:?} {:?} box {:?} at ({r}, {col}): {got} vs scipy {want} × n",
                        c.border, c.shape, c.window
                    )
                    .into());
                }
            }
        }
    }
    Ok(())
}

/// The sliding baselines (add the entering sample, subtract the leaving one) equal the direct
/// oracle exactly on integers, for every border and widths shorter and longer than the rows.
fn baselines_vs_oracle() -> Result<(), Failed> {
    let mut r = rng(77);
    for border in Border::ALL {
        for (rows, n) in [(1, 1), (3, 7), (2, 40)] {
            let x: Vec<i32> = (0..rows * n).map(|_| r.random_range(-1000..1000)).collect();
            for width in [1, 2, 5, 16, 3 * n + 1] {
                let serial = cpu::window_sums(&x, n, width, border);
                let par = cpu::par_window_sums(&x, n, width, border);
                for (k, (s, p)) in serial.iter().zip(&par).enumerate() {
                    let want = cpu::row_oracle(&x[k / n * n..][..n], width, border, k % n)
                        .exact
                        .expect("int");
                    let got = (s.s as i128, s.q.to_i128());
                    if got != want || s != p {
                        return Err(format!("{border:?} n={n} w={width} at {k}: {got:?} vs {want:?}").into());
                    }
                }
            }
            for window in [(1, 1), (3, 2), (5, 9)] {
                let (h, w) = (rows, n);
                let sums = cpu::box_sums(&x, w, window, border, false);
                let par = cpu::box_sums(&x, w, window, border, true);
                for k in 0..h * w {
                    let want = cpu::box_oracle(&x, w, window, border, (k / w, k % w))
                        .exact
                        .expect("int");
                    let got = (sums[k].s as i128, sums[k].q.to_i128());
                    if got != want || sums[k] != par[k] {
                        return Err(format!("box {border:?} {window:?} at {k}: {got:?} vs {want:?}").into());
                    }
                }
            }
        }
    }
    Ok(())
}

/// The moments oracle against a hand computation, and never negative.
fn moments_by_hand() -> Result<(), Failed> {
    // Plane [[1, 2], [3, 4]], 2 × 2 box at (0, 0) with a zero border: rows −1..1 × cols −1..1
    // hold 0 0 / 0 1 → mean 1/4, variance 1/4 − 1/16.
    let plane = [1u8, 2, 3, 4];
    let (m, v) = cpu::moments_oracle(&plane, 2, (2, 2), Border::Zero, (0, 0));
    if (m, v) != (0.25, 0.25 - 0.0625) {
        return Err(format!("got ({m}, {v})").into());
    }
    let (m, v) = cpu::moments_oracle(&[7.5f32; 9], 3, (3, 3), Border::Reflect, (1, 1));
    if (m, v) != (7.5, 0.0) {
        return Err(format!("constant plane: ({m}, {v})").into());
    }
    Ok(())
}

/// The sliding kernel's shared layout holds every read its threads make: runs of `P` positions
/// load whole (first windows and partial chunks read up to `SLIDING_CHUNK − 1` positions past
/// the tile, from the highest alignment lead-in), and none may reach the output stages, which
/// other threads write meanwhile.
fn sliding_layout_holds_its_reads() -> Result<(), Failed> {
    use gpuprims::abi::window::{
        SLIDING_CHUNK, SLIDING_MAX_WIDTH, WINDOW_BLOCK, sliding_byte, sliding_layout, sliding_outputs,
    };
    let widths = (1..=64).chain([127, 128, 255, 256, 511, 1000, SLIDING_MAX_WIDTH]);
    for w in widths {
        for elem in [1usize, 2, 4] {
            for out in [4usize, 8] {
                let p = sliding_outputs(elem, out, false) as usize;
                let span = WINDOW_BLOCK * p as u32;
                let layout = sliding_layout(span, w, elem, 16, out, out);
                let run = p * elem;
                let (lead_max, len) = (16 / elem - 1, span as usize + w as usize - 1);
                let last = lead_max + len - 1 + SLIDING_CHUNK as usize - 1;
                let end = sliding_byte(last, elem, run) + elem;
                if end > layout.stage_sum || !layout.stage_sum.is_multiple_of(16) {
                    return Err(format!(
                        "w={w} elem={elem} out={out}: reads end at byte {end}, stage at {}",
                        layout.stage_sum
                    )
                    .into());
                }
            }
        }
    }
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "cpu::window::oracle_matches_scipy_uniform_filter1d",
            oracle_vs_scipy_rows,
        ),
        Trial::test(
            "cpu::window::oracle_matches_scipy_uniform_filter",
            oracle_vs_scipy_boxes,
        ),
        Trial::test("cpu::window::sliding_baselines_match_oracle", baselines_vs_oracle),
        Trial::test("cpu::window::moments_oracle_by_hand", moments_by_hand),
        Trial::test(
            "cpu::window::sliding_layout_holds_its_reads",
            sliding_layout_holds_its_reads,
        ),
    ]
}
