//! GPU trials of the n-D ops and the along-axis passes: scipy.ndimage's own n-D outputs
//! (tests/data/scipy_nd.txt) on the GPU; random 2-D, 3-D and 4-D arrays against the CPU oracle
//! (host/cpu/nd.rs, itself pinned to scipy) bit for bit — every border, sizes 1 to past the axis,
//! even sizes, sides of 1 and 2, lines long enough for the unrolled interior and for runs split
//! into strips, inputs as contiguous arrays, strided views and device arrays; box sums and local
//! moments exact for integers; errors and empty arrays.

use std::fmt::Debug;

use gpuprims::cpu::filter2d::Pixel2d;
use gpuprims::cpu::nd::{self, Anchor};
use gpuprims::{AxisElement, Border, DeviceArray, Error, Filter2dElement, Gpu};
use libtest_mimic::{Failed, Trial};
use ndarray::{ArrayD, IxDyn, Slice};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::common::{gpu_trial, rng};
use crate::cpu_nd::{ScipyNd, scipy_nd};

trait El: Pixel2d + Debug + PartialEq + cudarc::driver::DeviceRepr {
    fn draw(r: &mut ChaCha8Rng) -> Self;
    fn from(v: f64) -> Self;
}

macro_rules! el {
    ($($t:ty: $draw:expr;)*) => {$(
        impl El for $t {
            fn draw(r: &mut ChaCha8Rng) -> $t {
                $draw(r)
            }
            fn from(v: f64) -> $t {
                v as $t
            }
        }
    )*};
}
el! {
    u8: |r: &mut ChaCha8Rng| r.random::<u8>();
    u16: |r: &mut ChaCha8Rng| r.random::<u16>();
    f32: |r: &mut ChaCha8Rng| r.random_range(-100.0f32..100.0);
    f64: |r: &mut ChaCha8Rng| r.random_range(-100.0f64..100.0);
}

fn random<T: El>(shape: &[usize], seed: u64) -> ArrayD<T> {
    let mut r = rng(seed);
    ArrayD::from_shape_simple_fn(IxDyn(shape), || T::draw(&mut r))
}

/// The first difference between a GPU result and the oracle's, bit for bit (NaN equals NaN).
fn same<T: El>(what: &str, got: &ArrayD<T>, want: &[T]) -> Result<(), Failed> {
    let got: Vec<T> = got.iter().copied().collect();
    if got.len() != want.len() {
        return Err(format!("{what}: {} outputs against {}", got.len(), want.len()).into());
    }
    match got
        .iter()
        .zip(want)
        .position(|(g, w)| !(g == w || (g.is_nan() && w.is_nan())))
    {
        Some(i) => Err(format!("{what}: element {i}: {:?} against the oracle's {:?}", got[i], want[i]).into()),
        None => Ok(()),
    }
}

/// Runs `op` on `x` as a contiguous array, as a strided view of a larger array holding the same
/// elements, and as a device array; every result must be `want`.
fn layouts<T: El, U: El>(
    gpu: &Gpu,
    what: &str,
    x: &ArrayD<T>,
    want: &[U],
    op: impl Fn(&Gpu, Input<'_, T>) -> gpuprims::Result<ArrayD<U>>,
) -> Result<(), Failed> {
    same(&format!("{what}, contiguous"), &op(gpu, Input::Host(x))?, want)?;
    // Every element of x at every other position of the last axis of a wider array.
    let mut wide_shape = x.shape().to_vec();
    if let Some(last) = wide_shape.last_mut() {
        *last *= 2;
    }
    let mut wide = ArrayD::<T>::from_elem(IxDyn(&wide_shape), T::from(7.0));
    let d = x.ndim() - 1;
    wide.slice_axis_mut(ndarray::Axis(d), Slice::new(0, None, 2)).assign(x);
    let view = wide.slice_axis(ndarray::Axis(d), Slice::new(0, None, 2));
    same(&format!("{what}, strided view"), &op(gpu, Input::View(&view))?, want)?;
    let dev = DeviceArray::upload(gpu, x)?;
    same(&format!("{what}, device array"), &op(gpu, Input::Device(&dev))?, want)
}

/// An input in one of the layouts an op takes.
enum Input<'a, T> {
    Host(&'a ArrayD<T>),
    View(&'a ndarray::ArrayViewD<'a, T>),
    Device(&'a DeviceArray<T, IxDyn>),
}

/// Calls `$op` on an [`Input`], downloading a device result.
macro_rules! run {
    ($gpu:expr, $input:expr, |$x:ident| $call:expr) => {
        match $input {
            Input::Host(a) => {
                let $x = a;
                $call
            }
            Input::View(v) => {
                let $x = v;
                $call
            }
            Input::Device(d) => {
                let $x = d;
                $call.and_then(|y| y.download($gpu))
            }
        }
    };
}

const SHAPES: [&[usize]; 8] = [
    &[1, 1, 1],
    &[2, 1, 5],
    &[5, 4, 3],
    &[7, 33, 65],
    &[3, 5, 17, 9],
    &[2, 300],
    &[300, 2, 3],
    &[1, 9, 1],
];

/// Size lists for `shape`: one axis alone, every axis, a leading batch, even sizes, 1s, sizes
/// past their axes, the last two axes joined.
fn sizes_for(shape: &[usize]) -> Vec<Vec<usize>> {
    let n = shape.len();
    let mut out = vec![
        (0..n).map(|a| if a == 0 { 5 } else { 1 }).collect::<Vec<_>>(),
        vec![3; n],
        (0..n).map(|a| [2, 3, 4, 1][a % 4]).collect(),
        shape.iter().map(|&s| s + 2).collect(),
        vec![4, 1],
        vec![31],
    ];
    out.retain(|s| s.len() <= n);
    out
}

fn morphology<T: El + Filter2dElement>(gpu: &Gpu, seed: u64) -> Result<(), Failed> {
    for (i, shape) in SHAPES.iter().enumerate() {
        let x = random::<T>(shape, seed + i as u64);
        let flat: Vec<T> = x.iter().copied().collect();
        for sizes in sizes_for(shape) {
            let all = pad(shape, &sizes);
            for border in Border::ALL {
                let what = |op: &str| format!("{op} {shape:?} {sizes:?} {border:?}");
                let dil = nd::extremum(&flat, shape, &all, border, true, Anchor::Mirrored);
                let ero = nd::extremum(&flat, shape, &all, border, false, Anchor::Centre);
                layouts(gpu, &what("dilate_nd"), &x, &dil, |g, inp| {
                    run!(g, inp, |x| g.dilate_nd(x, &sizes, border))
                })?;
                let y = gpu.erode_nd(&x, &sizes, border)?;
                same(&what("erode_nd"), &y, &ero)?;
                let open = nd::extremum(&ero, shape, &all, border, true, Anchor::Mirrored);
                same(&what("opening_nd"), &gpu.opening_nd(&x, &sizes, border)?, &open)?;
                let close = nd::extremum(&dil, shape, &all, border, false, Anchor::Centre);
                same(&what("closing_nd"), &gpu.closing_nd(&x, &sizes, border)?, &close)?;
                let grad: Vec<T> = dil
                    .iter()
                    .zip(&ero)
                    .map(|(&a, &b)| T::from(a.to_f64() - b.to_f64()))
                    .collect();
                same(
                    &what("gradient_nd"),
                    &gpu.morphological_gradient_nd(&x, &sizes, border)?,
                    &grad,
                )?;
            }
        }
    }
    Ok(())
}

/// The full size list the oracle takes: 1 for the leading axes a short list leaves alone.
fn pad(shape: &[usize], sizes: &[usize]) -> Vec<usize> {
    let mut all = vec![1; shape.len() - sizes.len()];
    all.extend_from_slice(sizes);
    all
}

/// Taps of each pass path: general (scipy's last-tap-first order, summed output by output),
/// symmetric of radius 8 (the register runs' largest), symmetric of radius 9 (one past them),
/// and, for floats (an integer output would clamp the negative half), antisymmetric of radius 2.
fn pass_taps(float: bool) -> Vec<Vec<f64>> {
    let symmetric = |r: usize| {
        let t: Vec<f64> = (0..=2 * r).map(|i| 1.0 / (1.0 + i.abs_diff(r) as f64)).collect();
        let sum: f64 = t.iter().sum();
        t.iter().map(|v| v / sum).collect::<Vec<f64>>()
    };
    let mut all = vec![vec![0.25, 0.5, 0.125, 0.0625], symmetric(8), symmetric(9)];
    if float {
        all.push(vec![-0.5, -1.0, 0.0, 1.0, 0.5]);
    }
    all
}

/// Rows wider than a row-run block's 256 columns, the last block partial.
const WIDE: &[usize] = &[2, 3, 530];

fn linear<T: El + Filter2dElement>(gpu: &Gpu, seed: u64) -> Result<(), Failed> {
    for (i, shape) in SHAPES.iter().chain([&WIDE]).enumerate() {
        let x = random::<T>(shape, seed + i as u64);
        let flat: Vec<T> = x.iter().copied().collect();
        let n = shape.len();
        for border in Border::ALL {
            for axis in 0..n {
                for taps in pass_taps(!<T as Pixel2d>::INTEGER) {
                    let want = nd::separable(&flat, shape, &[(axis, taps.clone())], border);
                    let what = format!("correlate1d {shape:?} axis {axis} {} taps {border:?}", taps.len());
                    layouts(gpu, &what, &x, &want, |g, inp| {
                        run!(g, inp, |x| g.correlate1d(x, &taps, axis, border))
                    })?;
                }
                if !<T as Pixel2d>::INTEGER {
                    let want = nd::sobel(&flat, shape, axis, border);
                    let got = gpu.sobel_nd(&x, axis, border)?;
                    same(&format!("sobel_nd {shape:?} axis {axis} {border:?}"), &got, &want)?;
                }
            }
            for sigmas in [
                vec![1.0; n],
                (0..n).map(|a| [0.0, 0.7, 2.0][a % 3]).collect(),
                vec![1.5],
            ] {
                for truncate in [4.0, 2.0] {
                    let want = nd::gaussian(&flat, shape, &pad_f(n, &sigmas), truncate, border);
                    let got = gpu.gaussian_nd(&x, &sigmas, truncate, border)?;
                    same(
                        &format!("gaussian_nd {shape:?} {sigmas:?} {truncate} {border:?}"),
                        &got,
                        &want,
                    )?;
                }
            }
        }
    }
    Ok(())
}

fn pad_f(n: usize, sigmas: &[f64]) -> Vec<f64> {
    let mut all = vec![0.0; n - sigmas.len()];
    all.extend_from_slice(sigmas);
    all
}

/// Shapes whose lines exercise the unrolled interior and the strips of the exact sums: a long
/// slow axis, a long fast axis (one thread per line), a long middle axis, and long axes whose
/// columns go four to a thread (`inner` a multiple of 4).
const LONG: [&[usize]; 5] = [&[700, 3, 40], &[3, 5000], &[4, 600, 33], &[600, 2, 64], &[3000, 12]];

fn uniform<T: El + AxisElement>(gpu: &Gpu, seed: u64) -> Result<(), Failed> {
    for (i, shape) in SHAPES.iter().chain(&LONG).enumerate() {
        let x = random::<T>(shape, seed + i as u64);
        let flat: Vec<T> = x.iter().copied().collect();
        for border in Border::ALL {
            for axis in 0..shape.len() {
                for size in [1, 2, 5, 31] {
                    let want = nd::uniform(&flat, shape, &nd_one(shape.len(), axis, size), border);
                    let what = format!("uniform_filter1d {shape:?} axis {axis} size {size} {border:?}");
                    layouts(gpu, &what, &x, &want, |g, inp| {
                        run!(g, inp, |x| g.uniform_filter1d(x, size, axis, border))
                    })?;
                }
            }
            for sizes in sizes_for(shape) {
                let want = nd::uniform(&flat, shape, &pad(shape, &sizes), border);
                let got = gpu.uniform_filter_nd(&x, &sizes, border)?;
                same(
                    &format!("uniform_filter_nd {shape:?} {sizes:?} {border:?}"),
                    &got,
                    &want,
                )?;
            }
        }
    }
    Ok(())
}

fn nd_one(n: usize, axis: usize, size: usize) -> Vec<usize> {
    (0..n).map(|a| if a == axis { size } else { 1 }).collect()
}

/// Box sums, squares and moments against the oracle's exact f64 sums: integers exactly, floats
/// within the f64 running sums' rounding.
fn boxes<T: El + AxisElement>(gpu: &Gpu, seed: u64) -> Result<(), Failed>
where
    T::Sum: Into<Wide>,
    T::SumSq: Into<Wide>,
{
    for (i, shape) in SHAPES.iter().chain(&LONG).enumerate() {
        let x = random::<T>(shape, seed + i as u64);
        let flat: Vec<T> = x.iter().copied().collect();
        for sizes in sizes_for(shape).into_iter().chain([vec![1]]) {
            let all = pad(shape, &sizes);
            let samples: f64 = all.iter().map(|&k| k as f64).product();
            for border in Border::ALL {
                let what = format!("{shape:?} {sizes:?} {border:?}");
                let (ws, wq) = nd::box_sums(&flat, shape, &all, border);
                let (s, q) = gpu.box_sum_sumsq_nd(&x, &sizes, border)?;
                let s1 = gpu.box_sum_nd(&x, &sizes, border)?;
                let (m, v) = gpu.local_mean_variance_nd::<f64, _, _>(&x, &sizes, border)?;
                let scale = samples * 100.0 * 100.0;
                for (j, (&a, &b)) in ws.iter().zip(&wq).enumerate() {
                    let (gs, gq, gs1) = (
                        s.as_slice().unwrap()[j].into().0,
                        q.as_slice().unwrap()[j].into().0,
                        s1.as_slice().unwrap()[j].into().0,
                    );
                    let tol = if T::INTEGER { 0.0 } else { 1e-9 * scale };
                    if (gs - a).abs() > tol || (gq - b).abs() > tol || gs1 != gs {
                        return Err(
                            format!("box sums {what} element {j}: ({gs}, {gq}, {gs1}) against ({a}, {b})").into(),
                        );
                    }
                    let mean = a / samples;
                    let var = if T::INTEGER {
                        // n·Σx² − (Σx)² exactly, as the kernel forms it.
                        let n = samples as u128;
                        (n * b as u128 - (a as u128).pow(2)) as f64 / (samples * samples)
                    } else {
                        (b / samples - mean * mean).max(0.0)
                    };
                    let (gm, gv) = (m.as_slice().unwrap()[j], v.as_slice().unwrap()[j]);
                    let vtol = if T::INTEGER {
                        1e-14 * var.abs().max(1e-300)
                    } else {
                        1e-9 * scale / samples
                    };
                    if (gm - mean).abs() > 1e-12 * mean.abs().max(1.0) + tol / samples || (gv - var).abs() > vtol {
                        return Err(
                            format!("local moments {what} element {j}: ({gm}, {gv}) against ({mean}, {var})").into(),
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

/// An accumulator read back as f64 (exact below 2^53, which every test sum is).
struct Wide(f64);
impl From<u32> for Wide {
    fn from(v: u32) -> Self {
        Wide(v as f64)
    }
}
impl From<u64> for Wide {
    fn from(v: u64) -> Self {
        Wide(v as f64)
    }
}
impl From<f64> for Wide {
    fn from(v: f64) -> Self {
        Wide(v)
    }
}

/// scipy's own outputs, on the GPU: the ops with the same semantics, bit for bit (the Gaussian
/// against the oracle, whose taps use the C library's `exp` as the GPU's do; the CPU trials hold
/// the oracle to scipy within numpy's `exp`).
fn scipy_cases(gpu: &Gpu) -> Result<(), Failed> {
    fn case<T: El + Filter2dElement + AxisElement>(gpu: &Gpu, c: &ScipyNd) -> Result<bool, Failed> {
        let x = ArrayD::from_shape_vec(IxDyn(&c.shape), c.x.iter().map(|&v| T::from(v)).collect())?;
        let p = &c.params;
        let sizes: Vec<usize> = p.iter().map(|&k| k as usize).collect();
        let got = match c.op.as_str() {
            "correlate1d" => gpu.correlate1d(&x, &p[1..], p[0] as usize, c.border)?,
            "uniform" => gpu.uniform_filter_nd(&x, &sizes, c.border)?,
            "dilate" => gpu.dilate_nd(&x, &sizes, c.border)?,
            "erode" => gpu.erode_nd(&x, &sizes, c.border)?,
            "sobel" if !<T as Pixel2d>::INTEGER => gpu.sobel_nd(&x, p[0] as usize, c.border)?,
            "gaussian" => {
                let flat: Vec<T> = x.iter().copied().collect();
                let want = nd::gaussian(&flat, &c.shape, &p[1..], p[0], c.border);
                same(&c.op, &gpu.gaussian_nd(&x, &p[1..], p[0], c.border)?, &want)?;
                return Ok(true);
            }
            _ => return Ok(false),
        };
        let want: Vec<T> = c.y.iter().map(|&v| T::from(v)).collect();
        same(
            &format!("{} {} {:?} {:?} {:?}", c.op, c.dtype, c.border, c.shape, c.params),
            &got,
            &want,
        )?;
        Ok(true)
    }
    let mut checked = 0;
    for c in scipy_nd() {
        let ran = match c.dtype.as_str() {
            "u8" => case::<u8>(gpu, &c)?,
            "f32" => case::<f32>(gpu, &c)?,
            "f64" if c.op == "uniform" => {
                let x = ArrayD::from_shape_vec(IxDyn(&c.shape), c.x.clone())?;
                let sizes: Vec<usize> = c.params.iter().map(|&k| k as usize).collect();
                same("uniform f64", &gpu.uniform_filter_nd(&x, &sizes, c.border)?, &c.y)?;
                true
            }
            _ => false,
        };
        checked += ran as usize;
    }
    if checked < 2000 {
        return Err(format!("only {checked} scipy cases ran on the GPU").into());
    }
    Ok(())
}

fn errors(gpu: &Gpu) -> Result<(), Failed> {
    let x = ArrayD::<u8>::zeros(IxDyn(&[4, 5, 6]));
    let invalid = |r: gpuprims::Result<ArrayD<u8>>, name: &str| -> Result<(), Failed> {
        match r {
            Err(Error::InvalidArgument { name: n, .. }) if n == name => Ok(()),
            other => Err(format!("expected InvalidArgument({name}), got {other:?}").into()),
        }
    };
    invalid(gpu.dilate_nd(&x, &[3, 3, 3, 3], Border::Zero), "sizes")?;
    invalid(gpu.dilate_nd(&x, &[3, 0, 3], Border::Zero), "sizes")?;
    invalid(gpu.uniform_filter_nd(&x, &[1, 2, 3, 4], Border::Zero), "sizes")?;
    invalid(gpu.uniform_filter1d(&x, 3, 3, Border::Zero), "axis")?;
    invalid(gpu.uniform_filter1d(&x, 0, 1, Border::Zero), "sizes")?;
    invalid(gpu.correlate1d(&x, &[1.0], 5, Border::Zero), "axis")?;
    invalid(gpu.sobel_nd(&x, 3, Border::Zero), "axis")?;
    invalid(gpu.gaussian_nd(&x, &[f64::NAN], 4.0, Border::Zero), "sigmas")?;
    invalid(gpu.gaussian_nd(&x, &[-1.0], 4.0, Border::Zero), "sigmas")?;
    invalid(gpu.gaussian_nd(&x, &[1.0], f64::INFINITY, Border::Zero), "truncate")?;
    invalid(gpu.gaussian_nd(&x, &[1.0; 4], 4.0, Border::Zero), "sigmas")?;
    match gpu.box_sum_nd(&x, &[5000, 5000, 5000], Border::Zero) {
        Err(Error::WindowTooLarge { .. }) => {}
        other => return Err(format!("a box past u8's exact sums: {other:?}").into()),
    }
    // Empty arrays give empty results.
    for shape in [&[0usize, 5, 6][..], &[4, 0, 6], &[4, 5, 0]] {
        let e = ArrayD::<u8>::zeros(IxDyn(shape));
        for y in [
            gpu.dilate_nd(&e, &[3, 3, 3], Border::Reflect)?,
            gpu.uniform_filter_nd(&e, &[3, 3, 3], Border::Reflect)?,
            gpu.gaussian_nd(&e, &[1.0, 1.0, 1.0], 4.0, Border::Reflect)?,
        ] {
            if y.shape() != shape {
                return Err(format!("empty {shape:?} gave {:?}", y.shape()).into());
            }
        }
        let (s, _) = gpu.box_sum_sumsq_nd(&e, &[3, 3, 3], Border::Reflect)?;
        if s.shape() != shape {
            return Err(format!("empty box sums {shape:?} gave {:?}", s.shape()).into());
        }
    }
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    let t = |name: &str, f: fn(&Gpu) -> Result<(), Failed>| gpu_trial(format!("gpu_nd::{name}"), f);
    vec![
        t("scipy_outputs", scipy_cases),
        t("morphology_u8", |g| morphology::<u8>(g, 10)),
        t("morphology_u16", |g| morphology::<u16>(g, 20)),
        t("morphology_f32", |g| morphology::<f32>(g, 30)),
        t("linear_u8", |g| linear::<u8>(g, 40)),
        t("linear_u16", |g| linear::<u16>(g, 50)),
        t("linear_f32", |g| linear::<f32>(g, 60)),
        t("uniform_u8", |g| uniform::<u8>(g, 70)),
        t("uniform_u16", |g| uniform::<u16>(g, 80)),
        t("uniform_f32", |g| uniform::<f32>(g, 90)),
        t("uniform_f64", |g| uniform::<f64>(g, 100)),
        t("boxes_u8", |g| boxes::<u8>(g, 110)),
        t("boxes_u16", |g| boxes::<u16>(g, 120)),
        t("boxes_f32", |g| boxes::<f32>(g, 130)),
        t("boxes_f64", |g| boxes::<f64>(g, 140)),
        t("errors_and_empty", errors),
    ]
}
