//! CPU trials of the n-dimensional oracle (host/cpu/nd.rs) against scipy.ndimage's own outputs
//! (tests/data/scipy_nd.txt: 3-D and 4-D arrays, every mode; correlate1d along every axis,
//! uniform_filter, grey_dilation, grey_erosion, maximum_filter, minimum_filter, gaussian_filter,
//! sobel), and the along-axis passes against a transposed last-axis pass.

use gpuprims::Border;
use gpuprims::cpu::filter2d::Pixel2d;
use gpuprims::cpu::nd::{self, Anchor};
use libtest_mimic::{Failed, Trial};

use crate::common::{fixture_border, fixture_numbers};

/// One scipy case.
pub struct ScipyNd {
    pub op: String,
    /// `u8`, `i16`, `f32` or `f64`.
    pub dtype: String,
    pub border: Border,
    pub shape: Vec<usize>,
    pub params: Vec<f64>,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
}

impl ScipyNd {
    fn name(&self) -> String {
        format!(
            "{} {} {:?} {:?} {:?}",
            self.op, self.dtype, self.border, self.shape, self.params
        )
    }
}

/// The cases of tests/data/scipy_nd.txt, without scipy's Sobel under a non-zero constant border
/// (scipy applies the constant to each 1D pass's intermediate result; gpuprims' Sobel extends the
/// input once, as its 2D Sobel does).
pub fn scipy_nd() -> Vec<ScipyNd> {
    include_str!("data/scipy_nd.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let parts: Vec<&str> = l.split('|').collect();
            let head: Vec<&str> = parts[0].split_whitespace().collect();
            ScipyNd {
                op: head[0].into(),
                dtype: head[1].into(),
                border: fixture_border(head[2], head[3].parse().expect("cval")),
                shape: fixture_numbers(parts[1]).into_iter().map(|v| v as usize).collect(),
                params: fixture_numbers(parts[2]),
                x: fixture_numbers(parts[3]),
                y: fixture_numbers(parts[4]),
            }
        })
        .filter(|c| !(c.op == "sobel" && matches!(c.border, Border::Constant(v) if v != 0.0)))
        .collect()
}

/// How close the oracle must come to scipy: `rel` of the value (at least 1), or `abs`.
#[derive(Clone, Copy)]
struct Tol {
    rel: f64,
    abs: f64,
}

const EXACT: Tol = Tol { rel: 0.0, abs: 0.0 };

/// The oracle's answer to a case, as f64, and how close it must come.
fn oracle(c: &ScipyNd) -> (Vec<f64>, Tol) {
    fn typed<T: Pixel2d>(c: &ScipyNd, from: impl Fn(f64) -> T) -> (Vec<f64>, Tol) {
        let x: Vec<T> = c.x.iter().map(|&v| from(v)).collect();
        let (shape, p, b) = (&c.shape[..], &c.params, c.border);
        let sizes = || p.iter().map(|&k| k as usize).collect::<Vec<_>>();
        let f64s = |v: Vec<T>| v.into_iter().map(|e| e.to_f64()).collect::<Vec<_>>();
        match c.op.as_str() {
            "correlate1d" if c.dtype == "f64" => (nd::correlate_axis(&x, shape, p[0] as usize, &p[1..], b), EXACT),
            "correlate1d" => (
                f64s(nd::separable(&x, shape, &[(p[0] as usize, p[1..].to_vec())], b)),
                EXACT,
            ),
            "uniform" => (f64s(nd::uniform(&x, shape, &sizes(), b)), EXACT),
            "dilate" => (
                f64s(nd::extremum(&x, shape, &sizes(), b, true, Anchor::Mirrored)),
                EXACT,
            ),
            "erode" | "minimum" => (f64s(nd::extremum(&x, shape, &sizes(), b, false, Anchor::Centre)), EXACT),
            "maximum" => (f64s(nd::extremum(&x, shape, &sizes(), b, true, Anchor::Centre)), EXACT),
            // scipy's taps come from numpy's `exp`, which on some CPUs differs from the C
            // library's in the last bit (at sigma 2.3 here): a pass's truncation into an integer
            // type may then land one lower or higher; floats stay within a few ulps of f32.
            "gaussian" if T::INTEGER => (
                f64s(nd::gaussian(&x, shape, &p[1..], p[0], b)),
                Tol { rel: 0.0, abs: 1.0 },
            ),
            "gaussian" => (
                f64s(nd::gaussian(&x, shape, &p[1..], p[0], b)),
                Tol { rel: 1e-6, abs: 0.0 },
            ),
            "sobel" => (f64s(nd::sobel(&x, shape, p[0] as usize, b)), EXACT),
            other => panic!("unknown op {other}"),
        }
    }
    match c.dtype.as_str() {
        "u8" => typed(c, |v| v as u8),
        "i16" => typed(c, |v| v as i16),
        "f32" => typed(c, |v| v as f32),
        "f64" => typed(c, |v| v),
        other => panic!("unknown dtype {other}"),
    }
}

fn check_scipy(ops: &'static [&'static str]) -> Result<(), Failed> {
    let mut checked = 0;
    for c in scipy_nd().iter().filter(|c| ops.contains(&c.op.as_str())) {
        let (got, tol) = oracle(c);
        let bad = got
            .iter()
            .zip(&c.y)
            .position(|(&g, &w)| !(g == w || (g - w).abs() <= (tol.rel * w.abs().max(1.0)).max(tol.abs)));
        if got.len() != c.y.len() || bad.is_some() {
            let i = bad.unwrap_or(0);
            return Err(format!(
                "{}: element {i}: {:?} against scipy's {:?} ({} values against {})",
                c.name(),
                got.get(i),
                c.y.get(i),
                got.len(),
                c.y.len()
            )
            .into());
        }
        checked += 1;
    }
    if checked == 0 {
        return Err(format!("no scipy case of {ops:?}").into());
    }
    Ok(())
}

/// A pass along `axis` equals the same pass along the last axis of the array transposed so that
/// `axis` comes last.
fn along_axis_matches_transposed() -> Result<(), Failed> {
    let shape = [3usize, 4, 5, 2];
    let x: Vec<f32> = (0..shape.iter().product::<usize>())
        .map(|i| ((i * 37 + 11) % 23) as f32 - 11.0)
        .collect();
    let taps = [0.25, -1.0, 2.0, 0.5];
    for axis in 0..shape.len() {
        let got = nd::correlate_axis(&x, &shape, axis, &taps, Border::Reflect);
        let a = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), x.clone())?;
        let mut order: Vec<usize> = (0..shape.len()).filter(|&d| d != axis).collect();
        order.push(axis);
        let t = a.view().permuted_axes(order.clone()).as_standard_layout().to_owned();
        let tshape = t.shape().to_vec();
        let last = nd::correlate_axis(
            t.as_slice().expect("standard"),
            &tshape,
            shape.len() - 1,
            &taps,
            Border::Reflect,
        );
        let back = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&tshape), last)?;
        let mut inverse = vec![0; order.len()];
        for (i, &o) in order.iter().enumerate() {
            inverse[o] = i;
        }
        let want = back.view().permuted_axes(inverse).as_standard_layout().to_owned();
        if want.as_slice().expect("standard") != &got[..] {
            return Err(format!("axis {axis}: the pass differs from the transposed last-axis pass").into());
        }
    }
    Ok(())
}

/// Box sums under a constant border equal the direct sum over the extended array (the constant
/// for every position outside along any axis).
fn box_sums_match_direct_sums() -> Result<(), Failed> {
    let shape = [3usize, 2, 4];
    let x: Vec<u8> = (0..24).map(|i| (i * 53 % 251) as u8).collect();
    let sizes = [3usize, 4, 2];
    for border in [Border::Constant(7.0), Border::Reflect, Border::Wrap] {
        let (sums, squares) = nd::box_sums(&x, &shape, &sizes, border);
        for (o, (&s, &q)) in sums.iter().zip(&squares).enumerate() {
            let (i0, i1, i2) = (o / 8, o / 4 % 2, o % 4);
            let (mut ws, mut wq) = (0.0, 0.0);
            for a in 0..3i64 {
                for b in 0..4i64 {
                    for c in 0..2i64 {
                        let p = [i0 as i64 + a - 1, i1 as i64 + b - 2, i2 as i64 + c - 1];
                        let idx: Option<Vec<usize>> = p
                            .iter()
                            .zip(shape)
                            .map(|(&pi, n)| gpuprims::cpu::conv1d::extended_index(pi, n, border))
                            .collect();
                        let v = match idx {
                            Some(i) => x[i[0] * 8 + i[1] * 4 + i[2]] as f64,
                            None => 7.0,
                        };
                        ws += v;
                        wq += v * v;
                    }
                }
            }
            if (s, q) != (ws, wq) {
                return Err(format!("{border:?} output {o}: ({s}, {q}) against ({ws}, {wq})").into());
            }
        }
    }
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    let scipy = |name: &str, ops: &'static [&'static str]| {
        Trial::test(format!("cpu_nd::scipy::{name}"), move || check_scipy(ops))
    };
    vec![
        scipy("correlate1d_every_axis", &["correlate1d"]),
        scipy("uniform_filter", &["uniform"]),
        scipy("grey_dilation_and_erosion", &["dilate", "erode"]),
        scipy("maximum_and_minimum_filter", &["maximum", "minimum"]),
        scipy("gaussian_filter", &["gaussian"]),
        scipy("sobel", &["sobel"]),
        Trial::test("cpu_nd::along_axis_matches_transposed", along_axis_matches_transposed),
        Trial::test("cpu_nd::box_sums_match_direct_sums", box_sums_match_direct_sums),
    ]
}
