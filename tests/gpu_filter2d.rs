//! GPU trials of the 2D filters: every morphology rung (Auto included) × {u8, u16, f32} × dilate
//! and erode over windows {1×1, 3×3, 5×5, 7×7, 1×9, 9×1, 2×4, 31×31, 60×90} × shapes {1×1, 1×37,
//! 41×1, 37×53, 8192×3, 3×4160, a 2×3×19×70 batch, 67×160, 40×256, a 2×13×528 batch} × every
//! border, layouts rotating through contiguous, transposed view and device array, values bit for
//! bit (NaNs in f32 inputs);
//! van Herk and Auto on long windows (up to 97 rows, 300 columns: each row pass) over images
//! several warps wide and several strips tall;
//! the linear rungs (Gaussian 3×3, Sobel, correlate2d) and the separable Gaussian against the
//! oracle; gradient, opening, closing and the Sobel magnitude; scipy.ndimage's own outputs on
//! the GPU; errors and empty images. Every output the ops allocate is poisoned first.

use std::fmt::Debug;

use gpuprims::cpu::filter2d::{self as cpu, Pixel2d};
use gpuprims::ops::filter2d::gaussian_taps;
use gpuprims::{
    Border, DeviceArray, Error, Filter2dElement, Filter2dPlan, Filter2dShape, Filter2dVariant, Gpu, MorphVariant,
    Rounding,
};
use libtest_mimic::{Failed, Trial};
use ndarray::{Array2, ArrayD, IxDyn};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::common::{gpu_trial, one_element_in, rng};
use crate::cpu_filter2d::{oracle, scipy_filters, scipy_match};

trait El: Filter2dElement + Pixel2d + Debug + PartialEq {
    fn draw(r: &mut ChaCha8Rng) -> Self;
    fn nan() -> Option<Self>;
}

macro_rules! el {
    ($($t:ty: $name:literal, $draw:expr, $nan:expr;)*) => {$(
        impl El for $t {
            fn draw(r: &mut ChaCha8Rng) -> $t {
                $draw(r)
            }
            fn nan() -> Option<$t> {
                $nan
            }
        }
    )*};
}
el! {
    u8: "u8", |r: &mut ChaCha8Rng| r.random::<u8>(), None;
    u16: "u16", |r: &mut ChaCha8Rng| r.random::<u16>(), None;
    f32: "f32", |r: &mut ChaCha8Rng| r.random_range(-100.0f32..100.0), Some(f32::NAN);
}

const SHAPES: [&[usize]; 10] = [
    &[1, 1],
    &[1, 37],
    &[41, 1],
    &[37, 53],
    &[8192, 3],
    &[3, 4160],
    &[2, 3, 19, 70],
    &[67, 160],
    &[40, 256],
    // The word tile's paths in one plane: a warp of whole columns (512) and a partial one,
    // strips of rows inside the plane and border-mapped strips at its top and bottom.
    &[2, 13, 528],
];
const WINDOWS: [(usize, usize); 9] = [
    (1, 1),
    (3, 3),
    (5, 5),
    (7, 7),
    (1, 9),
    (9, 1),
    (2, 4),
    (31, 31),
    (60, 90),
];

/// A random image of `shape` (a few NaNs in f32 images when `nans`).
fn image<T: El>(shape: &[usize], seed: u64, nans: bool) -> ArrayD<T> {
    let mut r = rng(seed);
    let mut x = ArrayD::from_shape_fn(IxDyn(shape), |_| T::draw(&mut r));
    if let (true, Some(nan)) = (nans, T::nan()) {
        let n = x.len();
        for _ in 0..(n / 500).max(1) {
            let i = r.random_range(0..n);
            x.as_slice_mut().expect("contiguous")[i] = nan;
        }
    }
    x
}

/// Runs `op` on `x` handed over as case `k` of the layout rotation (contiguous, transposed
/// view, device array); the result as a contiguous host array.
fn run_rotated<T: El, O: Copy + cudarc::driver::DeviceRepr + Default>(
    gpu: &Gpu,
    x: &ArrayD<T>,
    k: usize,
    op: impl Fn(OperandOf<'_, T>) -> Result<ArrayD<O>, Error>,
) -> Result<ArrayD<O>, Error> {
    match k % 3 {
        0 => op(OperandOf::Host(x.view())),
        1 => {
            let mut t = x.clone();
            t.swap_axes(x.ndim() - 1, x.ndim() - 2);
            let t = t.as_standard_layout().into_owned();
            let mut v = t.view();
            v.swap_axes(x.ndim() - 1, x.ndim() - 2);
            op(OperandOf::Host(v))
        }
        _ => op(OperandOf::Device(DeviceArray::upload(gpu, x)?)),
    }
}

enum OperandOf<'a, T> {
    Host(ndarray::ArrayViewD<'a, T>),
    Device(DeviceArray<T, IxDyn>),
}

macro_rules! call {
    ($gpu:expr, $x:expr, |$v:ident| $e:expr) => {
        match $x {
            OperandOf::Host($v) => {
                let $v = &$v;
                $e
            }
            OperandOf::Device(d) => {
                let $v = &d;
                ($e).and_then(|y: DeviceArray<_, IxDyn>| y.download($gpu))
            }
        }
    };
}

/// Bitwise equality (NaN equals NaN).
fn same<T: Pixel2d + PartialEq>(a: T, b: T) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// Long windows on images wide and tall enough for several warps of the van Herk passes per row
/// and several strips per column (the oracle is the separable composition, exact for max/min
/// under every border mode: the border extends each axis independently).
const LONG_SHAPES: [&[usize]; 3] = [&[300, 1000], &[2, 130, 517], &[97, 2053]];
/// Row windows for each doubling row pass: u8 takes 8 bytes per lane up to 129 columns (with the
/// entries compiled for 1 to 7 doubling steps: 2–3, 4–7, 8–15, 16–31, 32–63, 64–127, 128–129
/// columns; 16 is a power of two, with no final shift) and 16 bytes at 200; u16 16 bytes up to
/// 200; 300 columns the tiled van Herk row pass.
const LONG_WINDOWS: [(usize, usize); 9] = [
    (31, 31),
    (17, 64),
    (96, 7),
    (97, 3),
    (6, 129),
    (5, 40),
    (2, 16),
    (4, 200),
    (3, 300),
];

fn morph_trial<T: El>(gpu: &Gpu, variant: MorphVariant, dilate: bool) -> Result<(), Failed> {
    morph_cases::<T>(gpu, variant, dilate, &SHAPES, &WINDOWS, false)
}

fn long_window_trial<T: El>(gpu: &Gpu, variant: MorphVariant, dilate: bool) -> Result<(), Failed> {
    morph_cases::<T>(gpu, variant, dilate, &LONG_SHAPES, &LONG_WINDOWS, true)
}

/// The CPU oracle of a dilation or erosion: the 2D definition, or (`separable`) a column pass
/// then a row pass of it.
fn morph_oracle<T: El>(
    xs: &[T],
    (h, w): (usize, usize),
    win: (usize, usize),
    border: Border,
    dilate: bool,
    separable: bool,
) -> Vec<T> {
    let f = if dilate { cpu::dilate::<T> } else { cpu::erode::<T> };
    if separable {
        f(&f(xs, h, w, (win.0, 1), border), h, w, (1, win.1), border)
    } else {
        f(xs, h, w, win, border)
    }
}

fn morph_cases<T: El>(
    gpu: &Gpu,
    variant: MorphVariant,
    dilate: bool,
    shapes: &[&[usize]],
    windows: &[(usize, usize)],
    separable: bool,
) -> Result<(), Failed> {
    let mut cases = 0;
    for (si, shape) in shapes.iter().enumerate() {
        for (wi, &win) in windows.iter().enumerate() {
            let n: usize = shape.iter().product();
            if !separable && n * win.0 * win.1 > 6_000_000 {
                continue;
            }
            let (h, w) = (shape[shape.len() - 2], shape[shape.len() - 1]);
            let x = image::<T>(shape, (si * 100 + wi) as u64, true);
            let unsupported = match variant {
                MorphVariant::RowVector => !matches!(win, (3, 3) | (5, 5)),
                MorphVariant::WordTile => !matches!(win, (3, 3) | (5, 5)) || size_of::<T>() != 1,
                MorphVariant::ComposedShared => win.0 != win.1 || win.0 % 2 == 0,
                MorphVariant::VanHerkTile => size_of::<T>() != 1 || win.0 > 33 || win.1 > 33,
                _ => false,
            };
            for (bi, border) in Border::ALL.into_iter().enumerate() {
                let k = si + wi + bi;
                let got = run_rotated(gpu, &x, k, |o| {
                    call!(gpu, o, |v| if dilate {
                        gpu.dilate_with(v, win, border, variant)
                    } else {
                        gpu.erode_with(v, win, border, variant)
                    })
                });
                let got = match (got, unsupported) {
                    (Err(Error::Unsupported { .. }), true) => continue,
                    (Ok(_), true) => {
                        return Err(format!("{shape:?} {win:?}: {} ran an unsupported window", variant.name()).into());
                    }
                    (Err(e), _) => return Err(format!("{shape:?} {win:?} {border:?}: {e}").into()),
                    (Ok(g), false) => g,
                };
                let xs = x.as_slice().expect("contiguous");
                let want = morph_oracle(xs, (h, w), win, border, dilate, separable);
                if got.shape() != x.shape() {
                    return Err(format!("shape {:?} for {shape:?}", got.shape()).into());
                }
                let gs = got.as_standard_layout();
                if let Some(i) = gs.iter().zip(&want).position(|(&g, &e)| !same(g, e)) {
                    return Err(format!(
                        "{} {shape:?} {win:?} {border:?} layout {}: at {i} got {:?}, oracle {:?}",
                        variant.name(),
                        k % 3,
                        gs.iter().nth(i),
                        want[i]
                    )
                    .into());
                }
                cases += 1;
            }
        }
    }
    if cases < 30 {
        return Err(format!("only {cases} cases ran").into());
    }
    Ok(())
}

/// `|got − want| ≤ tol` elementwise, integers exactly when `tol` is 0.
fn close(got: &[f64], want: &[f64], tol: f64, what: &str) -> Result<(), Failed> {
    match got
        .iter()
        .zip(want)
        .position(|(g, w)| !((g - w).abs() <= tol || (g.is_nan() && w.is_nan())))
    {
        Some(i) => Err(format!("{what}: at {i} got {}, want {} (tol {tol})", got[i], want[i]).into()),
        None if got.len() == want.len() => Ok(()),
        None => Err(format!("{what}: {} values, want {}", got.len(), want.len()).into()),
    }
}

fn f64s<T: Pixel2d>(a: &ArrayD<T>) -> Vec<f64> {
    a.as_standard_layout().iter().map(|v| v.to_f64()).collect()
}

/// The f32 tolerance of a sum of `n` products of magnitude ≤ `scale`: `(n + 1)·2⁻²⁴·n·scale`.
fn f32_tol(n: usize, scale: f64) -> f64 {
    (n as f64 + 1.0) * 2f64.powi(-24) * n as f64 * scale
}

/// A fixed filter's result, `None` where the rung rejects the element type as it must (the word
/// tile takes u8 images only); an error where it rejects a supported one or runs an unsupported
/// one.
fn supported<O>(got: Result<O, Error>, variant: Filter2dVariant, size: usize) -> Result<Option<O>, Failed> {
    let unsupported = variant == Filter2dVariant::WordTile && size != 1;
    match (got, unsupported) {
        (Err(Error::Unsupported { .. }), true) => Ok(None),
        (Ok(_), true) => Err(format!("{} ran a {size}-byte element", variant.name()).into()),
        (Err(e), _) => Err(format!("{}: {e}", variant.name()).into()),
        (Ok(g), false) => Ok(Some(g)),
    }
}

fn gaussian3x3_trial<T: El>(gpu: &Gpu, variant: Filter2dVariant) -> Result<(), Failed> {
    for (si, shape) in SHAPES.iter().enumerate() {
        let (h, w) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        let x = image::<T>(shape, 7 + si as u64, false);
        for (bi, border) in Border::ALL.into_iter().enumerate() {
            let got = run_rotated(gpu, &x, si + bi, |o| {
                call!(gpu, o, |v| gpu.gaussian3x3_with(v, border, variant))
            });
            let Some(got) = supported(got, variant, size_of::<T>())? else {
                continue;
            };
            let want = cpu::gaussian3x3(x.as_slice().expect("contiguous"), h, w, border);
            let tol = if <T as Pixel2d>::INTEGER {
                0.0
            } else {
                f32_tol(9, 4.0 * 100.0) / 16.0
            };
            close(
                &f64s(&got),
                &want,
                tol,
                &format!("{} {shape:?} {border:?}", variant.name()),
            )?;
        }
    }
    Ok(())
}

/// The truncating 3 × 3 Gaussian through every rung that runs it (the 2D-taps rungs and `Auto`;
/// the rounding rungs must refuse it for integers) against the CPU reference at every border, and
/// on the interior against a literal transcription of the classic tutorial's kernel.
fn gaussian3x3_truncate_trial<T: El>(gpu: &Gpu) -> Result<(), Failed> {
    for (si, shape) in SHAPES.iter().enumerate() {
        let (h, w) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        let planes = shape.iter().product::<usize>() / (h * w);
        let x = image::<T>(shape, 700 + si as u64, false);
        let xs = x.as_slice().expect("contiguous");
        let s = Filter2dShape { planes, h, w };
        for border in Border::ALL {
            let want = cpu::gaussian3x3_rounding(xs, h, w, border, true);
            for v in Filter2dVariant::ALL.into_iter().chain([Filter2dVariant::Auto]) {
                let what = format!("truncate {} {shape:?} {border:?}", v.name());
                let plan = Filter2dPlan::<T>::gaussian3x3_rounding(gpu, s, border, Rounding::Truncate, v);
                let refuses =
                    <T as Pixel2d>::INTEGER && matches!(v, Filter2dVariant::RowVector | Filter2dVariant::WordTile);
                let plan = match (plan, refuses) {
                    (Err(Error::Unsupported { .. }), true) => continue,
                    (Err(Error::Unsupported { .. }), false) if v == Filter2dVariant::WordTile => continue,
                    (Ok(_), true) => return Err(format!("{what}: ran, must refuse").into()),
                    (p, _) => p.map_err(|e| format!("{what}: {e}"))?,
                };
                let xd = DeviceArray::upload(gpu, &x)?;
                let mut y = DeviceArray::<T, IxDyn>::uninit(gpu, x.raw_dim())?;
                plan.enqueue(gpu, xd.as_slice(), y.as_mut_slice())?;
                let got = f64s(&y.download(gpu)?);
                let tol = if <T as Pixel2d>::INTEGER {
                    0.0
                } else {
                    f32_tol(9, 4.0 * 100.0) / 16.0
                };
                close(&got, &want, tol, &what)?;
            }
            let got = f64s(&gpu.gaussian3x3_rounding(&x, border, Rounding::Truncate)?);
            close(
                &got,
                &want,
                if <T as Pixel2d>::INTEGER {
                    0.0
                } else {
                    f32_tol(9, 4.0 * 100.0) / 16.0
                },
                "op",
            )?;
            if <T as Pixel2d>::INTEGER && h > 2 && w > 2 {
                // The tutorial's kernel: weights 1 2 1 / 2 4 2 / 1 2 1, `gx >> 4`, interior only.
                for p in 0..planes {
                    let px = |r: usize, c: usize| xs[(p * h + r) * w + c].to_f64() as i64;
                    for r in 1..h - 1 {
                        for c in 1..w - 1 {
                            let gx = px(r - 1, c - 1)
                                + 2 * px(r - 1, c)
                                + px(r - 1, c + 1)
                                + 2 * px(r, c - 1)
                                + 4 * px(r, c)
                                + 2 * px(r, c + 1)
                                + px(r + 1, c - 1)
                                + 2 * px(r + 1, c)
                                + px(r + 1, c + 1);
                            let g = got[(p * h + r) * w + c];
                            if g != (gx >> 4) as f64 {
                                return Err(format!(
                                    "tutorial interior {shape:?} at ({p}, {r}, {c}): {g} vs {}",
                                    gx >> 4
                                )
                                .into());
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

fn sobel_trial<T: El + gpuprims::SobelElement>(gpu: &Gpu, variant: Filter2dVariant) -> Result<(), Failed>
where
    T::Out: Pixel2d + Default,
{
    for (si, shape) in SHAPES.iter().enumerate() {
        let (h, w) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        let x = image::<T>(shape, 70 + si as u64, false);
        for (bi, border) in Border::ALL.into_iter().enumerate() {
            for axis in 0..2 {
                let got = run_rotated(gpu, &x, si + bi + axis, |o| {
                    call!(gpu, o, |v| gpu.sobel_with(v, axis, border, variant))
                });
                let Some(got) = supported(got, variant, size_of::<T>())? else {
                    continue;
                };
                let want = cpu::sobel(x.as_slice().expect("contiguous"), h, w, axis, border);
                let tol = if <T as Pixel2d>::INTEGER {
                    0.0
                } else {
                    f32_tol(9, 4.0 * 100.0)
                };
                close(
                    &f64s(&got),
                    &want,
                    tol,
                    &format!("{} {shape:?} {border:?} axis {axis}", variant.name()),
                )?;
            }
        }
    }
    Ok(())
}

fn correlate_trial(gpu: &Gpu, variant: Filter2dVariant) -> Result<(), Failed> {
    let mut r = rng(99);
    for (si, shape) in SHAPES.iter().enumerate() {
        let (h, w) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        let x = image::<f32>(shape, 170 + si as u64, false);
        for (wi, &(kh, kw)) in [(1, 1), (3, 5), (7, 7), (1, 9), (9, 1), (2, 4), (31, 31)]
            .iter()
            .enumerate()
        {
            if shape.iter().product::<usize>() * kh * kw > 6_000_000 {
                continue;
            }
            let k = Array2::from_shape_fn((kh, kw), |_| r.random_range(-1.0f32..1.0));
            let taps: Vec<f64> = k.iter().map(|&t| t as f64).collect();
            for (bi, border) in Border::ALL.into_iter().enumerate() {
                let got = run_rotated(gpu, &x, si + wi + bi, |o| {
                    call!(gpu, o, |v| gpu.correlate2d_with(v, k.view(), border, variant))
                });
                let got = match (got, variant) {
                    (Err(Error::Unsupported { .. }), Filter2dVariant::RowVector | Filter2dVariant::WordTile) => {
                        continue;
                    }
                    (g, _) => g?,
                };
                let want = cpu::correlate2d(x.as_slice().expect("contiguous"), h, w, &taps, (kh, kw), border);
                close(
                    &f64s(&got),
                    &want,
                    f32_tol(kh * kw, 100.0),
                    &format!("{} {shape:?} {kh}×{kw} {border:?}", variant.name()),
                )?;
            }
        }
    }
    Ok(())
}

fn gaussian_sigma_trial<T: El>(gpu: &Gpu) -> Result<(), Failed> {
    for (si, shape) in SHAPES.iter().enumerate() {
        let (h, w) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        let x = image::<T>(shape, 270 + si as u64, false);
        for sigma in [0.5, 1.0, 2.5] {
            let t = gaussian_taps(sigma)?;
            for (bi, border) in Border::ALL.into_iter().enumerate() {
                let got = run_rotated(gpu, &x, si + bi, |o| call!(gpu, o, |v| gpu.gaussian(v, sigma, border)))?;
                let want: Vec<f64> = cpu::separable2d(x.as_slice().expect("contiguous"), h, w, &t, &t, border)
                    .iter()
                    .map(|v| v.to_f64())
                    .collect();
                // The passes reproduce scipy's (and the oracle's) f64 arithmetic bit for bit.
                close(&f64s(&got), &want, 0.0, &format!("sigma {sigma} {shape:?} {border:?}"))?;
            }
        }
    }
    Ok(())
}

/// The fused separable kernel (one launch, the intermediate in shared memory) against the CPU
/// oracle and the two-pass plan, bit for bit: symmetric and antisymmetric taps of radius 0 to 8
/// on either axis, tiles cut by the plane's edges (48 × 32 outputs a block), planes narrower and
/// shorter than the halo, NaNs in f32, every border.
fn separable_tile_trial<T: El>(gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(31);
    let mut taps = |radius: usize, anti: bool| -> Vec<f64> {
        let half: Vec<f64> = (0..radius).map(|_| r.random_range(-2.0..2.0)).collect();
        let centre = if anti { 0.0 } else { r.random_range(0.5..3.0) };
        let sign = if anti { -1.0 } else { 1.0 };
        half.iter()
            .rev()
            .map(|v| sign * v)
            .chain([centre])
            .chain(half.iter().copied())
            .collect()
    };
    let cases = [
        (taps(8, false), taps(8, false)),
        (taps(0, false), taps(3, false)),
        (taps(1, true), taps(1, false)),
        (taps(8, true), taps(5, true)),
        (taps(2, false), taps(8, true)),
    ];
    let shapes: [&[usize]; 7] = [&[1, 1], &[1, 37], &[41, 1], &[5, 7], &[33, 49], &[2, 97, 95], &[64, 96]];
    for (si, shape) in shapes.iter().enumerate() {
        let (h, w) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        let planes = shape.iter().product::<usize>() / (h * w);
        let s = Filter2dShape { planes, h, w };
        let x = image::<T>(shape, 900 + si as u64, true);
        let xd = DeviceArray::upload(gpu, &x)?;
        for (ky, kx) in &cases {
            for border in Border::ALL {
                let what = format!("{shape:?} {}×{} {border:?}", ky.len(), kx.len());
                let fused = Filter2dPlan::<T>::separable(gpu, s, ky, kx, border)?;
                if fused.variant() != gpuprims::Filter2dPlanVariant::SeparableTile {
                    return Err(format!("{what}: planned {}, want the fused tile", fused.variant().name()).into());
                }
                let passes = Filter2dPlan::<T>::separable_passes(gpu, s, ky, kx, border)?;
                let mut got = Vec::new();
                for plan in [fused, passes] {
                    let mut y = DeviceArray::<T, IxDyn>::uninit(gpu, x.raw_dim())?;
                    gpu.poison(y.as_mut_slice())?;
                    plan.enqueue(gpu, xd.as_slice(), y.as_mut_slice())?;
                    got.push(f64s(&y.download(gpu)?));
                }
                let want: Vec<f64> = x
                    .as_slice()
                    .expect("contiguous")
                    .chunks(h * w)
                    .flat_map(|p| cpu::separable2d(p, h, w, ky, kx, border))
                    .map(|v| v.to_f64())
                    .collect();
                close(&got[0], &want, 0.0, &format!("fused {what}"))?;
                close(&got[1], &want, 0.0, &format!("two passes {what}"))?;
            }
        }
    }
    Ok(())
}

fn composites(gpu: &Gpu) -> Result<(), Failed> {
    let x = image::<u8>(&[2, 45, 77], 5, false);
    let xs = x.as_slice().expect("contiguous");
    let (h, w) = (45, 77);
    for (win, border) in [
        ((3, 3), Border::Reflect),
        ((4, 7), Border::Constant(9.0)),
        ((15, 2), Border::Wrap),
    ] {
        let d = cpu::dilate(xs, h, w, win, border);
        let e = cpu::erode(xs, h, w, win, border);
        let grad: Vec<u8> = d.iter().zip(&e).map(|(a, b)| a.wrapping_sub(*b)).collect();
        let opening = cpu::dilate(&cpu::erode(xs, h, w, win, border), h, w, win, border);
        let closing = cpu::erode(&cpu::dilate(xs, h, w, win, border), h, w, win, border);
        for (name, got, want) in [
            ("gradient", gpu.morphological_gradient(&x, win, border)?, grad),
            ("opening", gpu.opening(&x, win, border)?, opening),
            ("closing", gpu.closing(&x, win, border)?, closing),
        ] {
            if got.as_slice().expect("contiguous") != want.as_slice() {
                return Err(format!("{name} {win:?} {border:?}").into());
            }
        }
    }
    for border in Border::ALL {
        sobel_magnitude_case::<f32>(gpu, 6, border)?;
        sobel_magnitude_case::<u8>(gpu, 8, border)?;
    }
    Ok(())
}

/// `sobel_magnitude` of a 33 × 41 image against the hypot of the oracle's two Sobel images.
fn sobel_magnitude_case<T: El + gpuprims::SobelElement>(gpu: &Gpu, seed: u64, border: Border) -> Result<(), Failed> {
    let x = image::<T>(&[33, 41], seed, false);
    let got = gpu.sobel_magnitude(&x, border)?;
    let xs = x.as_slice().expect("contiguous");
    let (a, b) = (cpu::sobel(xs, 33, 41, 0, border), cpu::sobel(xs, 33, 41, 1, border));
    let want: Vec<f64> = a.iter().zip(&b).map(|(u, v)| u.hypot(*v)).collect();
    close(
        &f64s(&got),
        &want,
        1e-3,
        &format!("sobel_magnitude {} {border:?}", std::any::type_name::<T>()),
    )
}

fn scipy_on_gpu(gpu: &Gpu) -> Result<(), Failed> {
    let mut checked = 0;
    for c in scipy_filters() {
        let (h, w) = c.shape;
        let p = &c.params;
        macro_rules! run {
            ($t:ty) => {{
                let x = ArrayD::from_shape_vec(IxDyn(&[h, w]), c.x.iter().map(|&v| v as $t).collect()).expect("shape");
                let got: Vec<f64> = match c.op.as_str() {
                    "dilate" => f64s(&gpu.dilate(&x, (p[0] as usize, p[1] as usize), c.border)?),
                    "erode" => f64s(&gpu.erode(&x, (p[0] as usize, p[1] as usize), c.border)?),
                    "gaussian" => f64s(&gpu.gaussian(&x, p[0], c.border)?),
                    "sobel" => sobel_any(gpu, &x, p[0] as usize, c.border)?,
                    _ => continue,
                };
                got
            }};
        }
        let got = if c.op == "correlate" {
            let (kh, kw) = (p[0] as usize, p[1] as usize);
            let k = Array2::from_shape_vec((kh, kw), p[2..].iter().map(|&t| t as f32).collect()).expect("kernel");
            let x = ArrayD::from_shape_vec(IxDyn(&[h, w]), c.x.iter().map(|&v| v as f32).collect()).expect("shape");
            f64s(&gpu.correlate2d(&x, k.view(), c.border)?)
        } else if c.dtype == "u8" {
            run!(u8)
        } else {
            run!(f32)
        };
        if let Some(i) = got.iter().zip(&c.y).position(|(&g, &want)| !scipy_match(&c, g, want)) {
            return Err(format!(
                "{} {} {:?} {:?} params {:?} at {i}: gpu {} vs scipy {} (oracle {})",
                c.op,
                c.dtype,
                c.border,
                c.shape,
                c.params,
                got[i],
                c.y[i],
                oracle(&c)[i]
            )
            .into());
        }
        checked += got.len();
    }
    if checked < 10_000 {
        return Err(format!("only {checked} values checked").into());
    }
    Ok(())
}

/// Sobel of a u8 or f32 image as f64s (the fixture's u8 cases are scipy's int16 results).
fn sobel_any<T: El>(gpu: &Gpu, x: &ArrayD<T>, axis: usize, border: Border) -> Result<Vec<f64>, Failed> {
    if let Some(x8) = (x as &dyn std::any::Any).downcast_ref::<ArrayD<u8>>() {
        return Ok(f64s(&gpu.sobel(x8, axis, border)?));
    }
    let xf = (x as &dyn std::any::Any)
        .downcast_ref::<ArrayD<f32>>()
        .ok_or("sobel of u8 or f32")?;
    Ok(f64s(&gpu.sobel(xf, axis, border)?))
}

/// The word-tile kernels on a large image: many tiles down each column and 65 warps across, the
/// last one's interior path ending at the right border (and tall enough for 64-row strips). Every op once with a border of its own,
/// bit-exact against the oracle.
fn word_tile_long_strips(gpu: &Gpu) -> Result<(), Failed> {
    let (h, w) = (1600, 8320);
    let x = image::<u8>(&[h, w], 4242, false);
    let xs = x.as_slice().expect("contiguous");
    let (v, m) = (Filter2dVariant::WordTile, MorphVariant::WordTile);
    let b = Border::ALL;
    let cases = [
        ("dilate", 3, b[3]),
        ("dilate", 5, b[1]),
        ("erode", 3, b[5]),
        ("erode", 5, b[2]),
        ("gaussian3x3", 3, b[4]),
        ("sobel0", 3, b[0]),
        ("sobel1", 3, b[3]),
    ];
    for (op, k, border) in cases {
        let (got, want) = match op {
            "dilate" | "erode" => {
                let dilate = op == "dilate";
                let got = if dilate {
                    gpu.dilate_with(&x, (k, k), border, m)?
                } else {
                    gpu.erode_with(&x, (k, k), border, m)?
                };
                let want = morph_oracle(xs, (h, w), (k, k), border, dilate, false);
                (f64s(&got), want.iter().map(|v| v.to_f64()).collect())
            }
            "gaussian3x3" => (
                f64s(&gpu.gaussian3x3_with(&x, border, v)?),
                cpu::gaussian3x3(xs, h, w, border),
            ),
            _ => {
                let axis = usize::from(op == "sobel1");
                (
                    f64s(&gpu.sobel_with(&x, axis, border, v)?),
                    cpu::sobel(xs, h, w, axis, border),
                )
            }
        };
        close(&got, &want, 0.0, &format!("word-tile {op} {k}×{k} {border:?} {h}×{w}"))?;
    }
    Ok(())
}

/// Input and output buffers that are not 16-byte aligned: the word-tile plans (widths that are
/// whole 16-byte vectors, so planned for the vector kernel) launch the word-by-word kernel
/// instead, the van Herk tile copies and stores byte by byte. Every word-tile op and the van
/// Herk tile against the oracle (a width across three of its tiles), outputs poisoned first.
fn unaligned_buffers(gpu: &Gpu) -> Result<(), Failed> {
    fn err(e: cudarc::driver::DriverError) -> Failed {
        Failed::from(e.to_string())
    }
    fn run<O: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + Copy + Into<f64>>(
        gpu: &Gpu,
        plan: Filter2dPlan<u8, O>,
        x1: &cudarc::driver::CudaSlice<u8>,
        n: usize,
    ) -> Result<Vec<f64>, Failed> {
        let mut ybuf = gpu.stream().alloc_zeros::<O>(n + 1).map_err(err)?;
        gpu.poison(&mut ybuf)?;
        let mut y1 = one_element_in(gpu, &ybuf, n);
        plan.enqueue(gpu, x1, &mut y1)?;
        let got = gpu.stream().clone_dtoh(&y1).map_err(err)?;
        y1.leak();
        Ok(got.into_iter().map(Into::into).collect())
    }
    let (planes, h, w) = (2, 13, 528);
    let shape = Filter2dShape { planes, h, w };
    let x = image::<u8>(&[planes, h, w], 515, false);
    let xs = x.as_slice().expect("contiguous");
    let n = xs.len();
    let stream = gpu.stream();
    let xbuf = stream.alloc_zeros::<u8>(n + 1).map_err(err)?;
    let mut x1 = one_element_in(gpu, &xbuf, n);
    stream.memcpy_htod(xs, &mut x1).map_err(err)?;
    let (m, v) = (MorphVariant::WordTile, Filter2dVariant::WordTile);
    for (i, border) in Border::ALL.into_iter().enumerate() {
        let k = [3, 5][i % 2];
        let what = |op: &str| format!("unaligned word-tile {op} {border:?} {planes}×{h}×{w}");
        for dilate in [true, false] {
            let plan = if dilate {
                Filter2dPlan::<u8>::dilate(gpu, shape, (k, k), border, m)?
            } else {
                Filter2dPlan::<u8>::erode(gpu, shape, (k, k), border, m)?
            };
            let want: Vec<f64> = morph_oracle(xs, (h, w), (k, k), border, dilate, false)
                .iter()
                .map(|v| v.to_f64())
                .collect();
            let op = if dilate { "dilate" } else { "erode" };
            close(&run(gpu, plan, &x1, n)?, &want, 0.0, &what(&format!("{op} {k}×{k}")))?;
        }
        for (dilate, win) in [(true, (31, 31)), (false, (8, 17))] {
            let tile = MorphVariant::VanHerkTile;
            let plan = if dilate {
                Filter2dPlan::<u8>::dilate(gpu, shape, win, border, tile)?
            } else {
                Filter2dPlan::<u8>::erode(gpu, shape, win, border, tile)?
            };
            let want: Vec<f64> = morph_oracle(xs, (h, w), win, border, dilate, false)
                .iter()
                .map(|v| v.to_f64())
                .collect();
            let what = format!("unaligned van-herk-tile {win:?} {border:?} {planes}×{h}×{w}");
            close(&run(gpu, plan, &x1, n)?, &want, 0.0, &what)?;
        }
        let got = run(gpu, Filter2dPlan::<u8>::gaussian3x3(gpu, shape, border, v)?, &x1, n)?;
        close(&got, &cpu::gaussian3x3(xs, h, w, border), 0.0, &what("gaussian3x3"))?;
        for axis in 0..2 {
            let got = run(
                gpu,
                Filter2dPlan::<u8, i16>::sobel(gpu, shape, axis, border, v)?,
                &x1,
                n,
            )?;
            close(
                &got,
                &cpu::sobel(xs, h, w, axis, border),
                0.0,
                &what(&format!("sobel axis {axis}")),
            )?;
        }
    }
    x1.leak();
    drop(xbuf);
    Ok(())
}

fn errors_and_empty(gpu: &Gpu) -> Result<(), Failed> {
    let x = Array2::<u8>::zeros((4, 5));
    let bad = |r: Result<_, Error>, what: &str, want: fn(&Error) -> bool| -> Result<(), Failed> {
        match r {
            Err(e) if want(&e) => Ok(()),
            Err(e) => Err(format!("{what}: unexpected error {e}").into()),
            Ok(_) => Err(format!("{what}: accepted").into()),
        }
    };
    let invalid = |e: &Error| matches!(e, Error::InvalidArgument { .. });
    bad(gpu.dilate(&x, (0, 3), Border::Zero).map(|_| ()), "zero window", invalid)?;
    bad(gpu.erode(&x, (3, 0), Border::Zero).map(|_| ()), "zero window", invalid)?;
    bad(gpu.gaussian(&x, 0.0, Border::Zero).map(|_| ()), "sigma 0", invalid)?;
    bad(
        gpu.gaussian(&x, f64::NAN, Border::Zero).map(|_| ()),
        "sigma NaN",
        invalid,
    )?;
    bad(gpu.gaussian(&x, -1.0, Border::Zero).map(|_| ()), "sigma < 0", invalid)?;
    bad(gpu.sobel(&x, 2, Border::Zero).map(|_| ()), "sobel axis 2", invalid)?;
    bad(
        gpu.separable2d(&x, &[], &[1.0], Border::Zero).map(|_| ()),
        "empty ky",
        invalid,
    )?;
    bad(
        gpu.separable2d(&x, &[f64::NAN], &[1.0], Border::Zero).map(|_| ()),
        "NaN tap",
        invalid,
    )?;
    let one_d = ndarray::Array1::<u8>::zeros(7);
    bad(
        gpu.dilate(&one_d, (3, 3), Border::Zero).map(|_| ()),
        "1-D input",
        invalid,
    )?;
    let xf = Array2::<f32>::zeros((4, 5));
    let huge = Array2::<f32>::zeros((129, 128));
    bad(
        gpu.correlate2d(&xf, huge.view(), Border::Zero).map(|_| ()),
        "too many taps",
        |e| {
            matches!(
                e,
                Error::TooManyTaps {
                    taps: 16512,
                    max: 16384
                }
            )
        },
    )?;
    bad(
        gpu.dilate_with(&x, (7, 7), Border::Zero, MorphVariant::RowVector)
            .map(|_| ()),
        "row-vector 7×7",
        |e| matches!(e, Error::Unsupported { .. }),
    )?;
    bad(
        gpu.dilate_with(&x, (3, 5), Border::Zero, MorphVariant::ComposedShared)
            .map(|_| ()),
        "composed 3×5",
        |e| matches!(e, Error::Unsupported { .. }),
    )?;
    bad(
        gpu.correlate2d_with(
            &xf,
            Array2::<f32>::ones((3, 3)).view(),
            Border::Zero,
            Filter2dVariant::RowVector,
        )
        .map(|_| ()),
        "row-vector correlate",
        |e| matches!(e, Error::Unsupported { .. }),
    )?;
    bad(
        gpu.dilate_with(&x, (7, 7), Border::Zero, MorphVariant::WordTile)
            .map(|_| ()),
        "word-tile 7×7",
        |e| matches!(e, Error::Unsupported { .. }),
    )?;
    bad(
        gpu.erode_with(
            &Array2::<f32>::zeros((4, 8)),
            (3, 3),
            Border::Zero,
            MorphVariant::WordTile,
        )
        .map(|_| ()),
        "word-tile f32",
        |e| matches!(e, Error::Unsupported { .. }),
    )?;
    bad(
        gpu.dilate_with(&x, (34, 5), Border::Zero, MorphVariant::VanHerkTile)
            .map(|_| ()),
        "van-herk-tile 34×5",
        |e| matches!(e, Error::Unsupported { .. }),
    )?;
    bad(
        gpu.erode_with(
            &Array2::<u16>::zeros((4, 8)),
            (7, 7),
            Border::Zero,
            MorphVariant::VanHerkTile,
        )
        .map(|_| ()),
        "van-herk-tile u16",
        |e| matches!(e, Error::Unsupported { .. }),
    )?;
    bad(
        gpu.gaussian3x3_with(&Array2::<u16>::zeros((4, 8)), Border::Zero, Filter2dVariant::WordTile)
            .map(|_| ()),
        "word-tile u16",
        |e| matches!(e, Error::Unsupported { .. }),
    )?;
    let kernel_nan = Array2::from_elem((3, 3), f32::NAN);
    bad(
        gpu.correlate2d(&xf, kernel_nan.view(), Border::Zero).map(|_| ()),
        "NaN kernel",
        invalid,
    )?;
    for shape in [[0usize, 5], [5, 0], [0, 0]] {
        let e = Array2::<u8>::zeros(shape);
        if gpu.dilate(&e, (3, 3), Border::Reflect)?.shape() != shape
            || gpu.gaussian(&e, 1.0, Border::Reflect)?.shape() != shape
        {
            return Err(format!("empty {shape:?}").into());
        }
        let ef = Array2::<f32>::zeros(shape);
        if gpu.sobel_magnitude(&ef, Border::Reflect)?.shape() != shape {
            return Err(format!("empty sobel_magnitude {shape:?}").into());
        }
    }
    // Windows larger than the image are defined by the border: 1×1 image, 9×9 window.
    let one = Array2::from_elem((1, 1), 7u8);
    if gpu.dilate(&one, (9, 9), Border::Constant(200.0))?[[0, 0]] != 200
        || gpu.erode(&one, (9, 9), Border::Reflect)?[[0, 0]] != 7
    {
        return Err("1×1 image, 9×9 window".into());
    }
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    let mut t = Vec::new();
    let morph_variants = MorphVariant::ALL.into_iter().chain([MorphVariant::Auto]);
    for v in morph_variants {
        for dilate in [true, false] {
            let op = if dilate { "dilate" } else { "erode" };
            t.push(gpu_trial(format!("gpu_filter2d::{op}_{}_u8", v.name()), move |g| {
                morph_trial::<u8>(g, v, dilate)
            }));
            if matches!(v, MorphVariant::WordTile | MorphVariant::VanHerkTile) {
                continue; // u8 only (errors_and_empty checks the others' error)
            }
            t.push(gpu_trial(format!("gpu_filter2d::{op}_{}_u16", v.name()), move |g| {
                morph_trial::<u16>(g, v, dilate)
            }));
            t.push(gpu_trial(format!("gpu_filter2d::{op}_{}_f32", v.name()), move |g| {
                morph_trial::<f32>(g, v, dilate)
            }));
        }
    }
    for v in [MorphVariant::VanHerk, MorphVariant::VanHerkTile, MorphVariant::Auto] {
        for dilate in [true, false] {
            let op = if dilate { "dilate" } else { "erode" };
            let n = v.name();
            t.push(gpu_trial(format!("gpu_filter2d::long_{op}_{n}_u8"), move |g| {
                long_window_trial::<u8>(g, v, dilate)
            }));
            if v == MorphVariant::VanHerkTile {
                continue;
            }
            t.push(gpu_trial(format!("gpu_filter2d::long_{op}_{n}_u16"), move |g| {
                long_window_trial::<u16>(g, v, dilate)
            }));
            t.push(gpu_trial(format!("gpu_filter2d::long_{op}_{n}_f32"), move |g| {
                long_window_trial::<f32>(g, v, dilate)
            }));
        }
    }
    for v in Filter2dVariant::ALL.into_iter().chain([Filter2dVariant::Auto]) {
        let n = v.name();
        t.push(gpu_trial(format!("gpu_filter2d::gaussian3x3_{n}_u8"), move |g| {
            gaussian3x3_trial::<u8>(g, v)
        }));
        t.push(gpu_trial(format!("gpu_filter2d::gaussian3x3_{n}_u16"), move |g| {
            gaussian3x3_trial::<u16>(g, v)
        }));
        t.push(gpu_trial(format!("gpu_filter2d::gaussian3x3_{n}_f32"), move |g| {
            gaussian3x3_trial::<f32>(g, v)
        }));
        t.push(gpu_trial(format!("gpu_filter2d::sobel_{n}_u8"), move |g| {
            sobel_trial::<u8>(g, v)
        }));
        t.push(gpu_trial(format!("gpu_filter2d::sobel_{n}_f32"), move |g| {
            sobel_trial::<f32>(g, v)
        }));
        t.push(gpu_trial(format!("gpu_filter2d::correlate2d_{n}_f32"), move |g| {
            correlate_trial(g, v)
        }));
    }
    t.push(gpu_trial(
        "gpu_filter2d::gaussian3x3_truncate_u8".into(),
        gaussian3x3_truncate_trial::<u8>,
    ));
    t.push(gpu_trial(
        "gpu_filter2d::gaussian3x3_truncate_u16".into(),
        gaussian3x3_truncate_trial::<u16>,
    ));
    t.push(gpu_trial(
        "gpu_filter2d::gaussian3x3_truncate_f32".into(),
        gaussian3x3_truncate_trial::<f32>,
    ));
    t.push(gpu_trial(
        "gpu_filter2d::gaussian_sigma_u8".into(),
        gaussian_sigma_trial::<u8>,
    ));
    t.push(gpu_trial(
        "gpu_filter2d::gaussian_sigma_u16".into(),
        gaussian_sigma_trial::<u16>,
    ));
    t.push(gpu_trial(
        "gpu_filter2d::gaussian_sigma_f32".into(),
        gaussian_sigma_trial::<f32>,
    ));
    t.push(gpu_trial(
        "gpu_filter2d::separable_tile_u8".into(),
        separable_tile_trial::<u8>,
    ));
    t.push(gpu_trial(
        "gpu_filter2d::separable_tile_u16".into(),
        separable_tile_trial::<u16>,
    ));
    t.push(gpu_trial(
        "gpu_filter2d::separable_tile_f32".into(),
        separable_tile_trial::<f32>,
    ));
    t.push(gpu_trial(
        "gpu_filter2d::gradient_opening_closing_magnitude".into(),
        composites,
    ));
    t.push(gpu_trial("gpu_filter2d::scipy_fixture".into(), scipy_on_gpu));
    t.push(gpu_trial("gpu_filter2d::errors_and_empty".into(), errors_and_empty));
    t.push(gpu_trial(
        "gpu_filter2d::word_tile_long_strips".into(),
        word_tile_long_strips,
    ));
    t.push(gpu_trial("gpu_filter2d::unaligned_buffers".into(), unaligned_buffers));
    t
}
