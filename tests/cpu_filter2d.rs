//! CPU trials of the 2D filters: the oracle against scipy.ndimage's own outputs
//! (tests/data/scipy_filter2d.txt: grey_dilation, grey_erosion, gaussian_filter, sobel, correlate,
//! every mode, windows larger than the plane, even sizes).

use gpuprims::Border;
use gpuprims::cpu::filter2d as cpu;
use gpuprims::ops::filter2d::gaussian_taps;
use libtest_mimic::{Failed, Trial};

use crate::common::{fixture_border, fixture_numbers};

/// One scipy case.
pub struct ScipyFilter {
    pub op: String,
    /// `u8` or `f32`.
    pub dtype: String,
    pub border: Border,
    pub shape: (usize, usize),
    pub params: Vec<f64>,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
}

/// The cases of tests/data/scipy_filter2d.txt, without scipy's Sobel under a non-zero constant
/// border: scipy applies the constant to each 1D pass's intermediate result, gpuprims extends the
/// image once (documented on `Gpu::sobel`; the outputs differ next to the border only).
pub fn scipy_filters() -> Vec<ScipyFilter> {
    scipy_filters_all()
        .into_iter()
        .filter(|c| !(c.op == "sobel" && matches!(c.border, Border::Constant(v) if v != 0.0)))
        .collect()
}

fn scipy_filters_all() -> Vec<ScipyFilter> {
    include_str!("data/scipy_filter2d.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let parts: Vec<&str> = l.split('|').collect();
            let head: Vec<&str> = parts[0].split_whitespace().collect();
            let s = fixture_numbers(parts[1]);
            ScipyFilter {
                op: head[0].into(),
                dtype: head[1].into(),
                border: fixture_border(head[2], head[3].parse().expect("cval")),
                shape: (s[0] as usize, s[1] as usize),
                params: fixture_numbers(parts[2]),
                x: fixture_numbers(parts[3]),
                y: fixture_numbers(parts[4]),
            }
        })
        .collect()
}

/// The oracle's answer to a scipy case, as f64 (`None` for an op the oracle has no form of).
pub fn oracle(c: &ScipyFilter) -> Vec<f64> {
    let (h, w) = c.shape;
    let p = &c.params;
    macro_rules! typed {
        ($t:ty) => {{
            let x: Vec<$t> = c.x.iter().map(|&v| v as $t).collect();
            match c.op.as_str() {
                "dilate" => cpu::dilate(&x, h, w, (p[0] as usize, p[1] as usize), c.border)
                    .iter()
                    .map(|&v| v as f64)
                    .collect(),
                "erode" => cpu::erode(&x, h, w, (p[0] as usize, p[1] as usize), c.border)
                    .iter()
                    .map(|&v| v as f64)
                    .collect(),
                "gaussian" => {
                    let t = gaussian_taps(p[0]).expect("sigma");
                    cpu::separable2d(&x, h, w, &t, &t, c.border)
                        .iter()
                        .map(|&v| v as f64)
                        .collect()
                }
                "sobel" => cpu::sobel(&x, h, w, p[0] as usize, c.border),
                "correlate" => {
                    let (kh, kw) = (p[0] as usize, p[1] as usize);
                    cpu::correlate2d(&x, h, w, &p[2..], (kh, kw), c.border)
                }
                op => panic!("unknown op {op}"),
            }
        }};
    }
    if c.dtype == "u8" { typed!(u8) } else { typed!(f32) }
}

/// Whether `got` matches scipy's `want` for case `c`: integers exactly (the Gaussian's taps and
/// passes reproduce scipy's arithmetic bit for bit), f32 within a few ulps of the magnitudes
/// involved.
pub fn scipy_match(c: &ScipyFilter, got: f64, want: f64) -> bool {
    if c.dtype == "u8" {
        return got == want;
    }
    let scale = c.x.iter().fold(1.0f64, |m, v| m.max(v.abs())) * 16.0;
    (got - want).abs() <= 4e-6 * scale
}

fn oracle_vs_scipy() -> Result<(), Failed> {
    let cases = scipy_filters();
    let mut checked = 0;
    for c in &cases {
        let got = oracle(c);
        for (i, (&g, &want)) in got.iter().zip(&c.y).enumerate() {
            if !scipy_match(c, g, want) {
                return Err(format!(
                    "{} {} {:?} {:?} params {:?} at {i}: oracle {g} vs scipy {want}",
                    c.op, c.dtype, c.border, c.shape, c.params
                )
                .into());
            }
            checked += 1;
        }
    }
    if checked < 10_000 {
        return Err(format!("only {checked} values checked").into());
    }
    Ok(())
}

fn gaussian_taps_match_scipy() -> Result<(), Failed> {
    // scipy.ndimage._gaussian_kernel1d(1.0, 0, 4) (radius 4).
    let want = [
        0.00013383062461474175,
        0.0044318616200312655,
        0.05399112742070441,
        0.24197144565660073,
        0.39894346935609776,
        0.24197144565660073,
        0.05399112742070441,
        0.0044318616200312655,
        0.00013383062461474175,
    ];
    let got = gaussian_taps(1.0)?;
    if got.len() != want.len() || got.iter().zip(want).any(|(g, w)| (g - w).abs() > 1e-15) {
        return Err(format!("{got:?}").into());
    }
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        if gaussian_taps(bad).is_ok() {
            return Err(format!("sigma {bad} accepted").into());
        }
    }
    Ok(())
}

/// The row-run pass's contract: which taps take it, and its staged segment's layout (sample `q`
/// at `q + q / PASS_RUN`): every slot a lane reads lies inside the warp's slots, and the 64-bit
/// reads of a half-warp (one shared-memory wavefront) fall in 16 distinct bank pairs.
fn row_run_contract() -> Result<(), Failed> {
    use gpuprims::abi::filter2d::*;
    let sym = |r: usize| vec![1.0; 2 * r + 1];
    let cases = [
        (sym(0), true),
        (sym(8), true),
        (sym(9), false),
        (vec![-1.0, 0.0, 1.0], true),
        (vec![1.0, 2.0, 4.0], false),
        (vec![1.0, 1.0], false),
    ];
    for (taps, want) in cases {
        if pass_runs(&taps) != want {
            return Err(format!("pass_runs({taps:?}) is not {want}").into());
        }
    }
    let (run, segment) = (PASS_RUN as usize, PASS_ROW_SEGMENT as usize);
    let slot = |q: usize| q + q / run;
    if slot(segment - 1) >= PASS_ROW_SLOTS as usize || PASS_ROW_SHARED_BYTES > 48 << 10 {
        return Err(format!(
            "slots {} of {PASS_ROW_SLOTS}, {PASS_ROW_SHARED_BYTES} bytes",
            slot(segment - 1) + 1
        )
        .into());
    }
    for t in 0..run + 2 * PASS_MAX_RADIUS as usize {
        for half in [0..16, 16..32] {
            let mut banks: Vec<usize> = half.map(|lane| slot(run * lane + t) % 16).collect();
            banks.sort_unstable();
            banks.dedup();
            if banks.len() != 16 {
                return Err(format!("sample {t}: a half-warp's reads share bank pairs").into());
            }
        }
    }
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("cpu_filter2d::oracle_vs_scipy", oracle_vs_scipy),
        Trial::test("cpu_filter2d::gaussian_taps_match_scipy", gaussian_taps_match_scipy),
        Trial::test("cpu_filter2d::row_run_contract", row_run_contract),
    ]
}
