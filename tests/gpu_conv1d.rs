//! GPU 1D filter trials: every variant × dtype × border × tap count over the lengths and
//! three layouts (1D, batched 2D, strided view), against the f64 CPU oracle, with NaN-poisoned
//! outputs; plus convolution, the mean filter, non-finite values, empty input, errors, the
//! constant bank under interleaved plans and two handles, and device arrays.

use gpuprims::abi::conv1d::max_constant_taps;
use gpuprims::cpu::conv1d as cpu;
use gpuprims::{Border, Conv1dElement, Conv1dPlan, Conv1dVariant, DeviceArray, Error, Filter1d, Gpu};
use libtest_mimic::{Failed, Trial};
use ndarray::{Array1, Array2, Array3, ArrayView2, Axis, s};
use rand::Rng;

use crate::common::{gpu_trial, rng};
use crate::cpu_conv1d::{scipy_cases, scipy_match};

/// Every variant the tests run: the ladder and `Auto`.
fn variants() -> impl Iterator<Item = Conv1dVariant> {
    Conv1dVariant::ALL.into_iter().chain([Conv1dVariant::Auto])
}

/// An element type under test: its unit roundoff and the tolerance rule of `ops::conv1d`.
trait Elem: Conv1dElement {
    const NAME: &'static str;
    /// Unit roundoff (2⁻²⁴ or 2⁻⁵³).
    const U: f64;
    /// Floor of the relative tolerance (f64 is held to 1e-12 of Σ|t·x|).
    const FLOOR: f64;

    /// Allowed |gpu − oracle| for a filter of `taps` taps (`extra` more roundings) and scale
    /// Σ|t·x|.
    fn tol(taps: usize, extra: usize, scale: f64) -> f64 {
        ((taps + 2 + extra) as f64 * Self::U).max(Self::FLOOR) * scale
    }
}

impl Elem for f32 {
    const NAME: &'static str = "f32";
    const U: f64 = 1.0 / (1u64 << 24) as f64;
    const FLOOR: f64 = 0.0;
}

impl Elem for f64 {
    const NAME: &'static str = "f64";
    const U: f64 = 1.0 / (1u64 << 53) as f64;
    const FLOOR: f64 = 1e-12;
}

fn random<T: Elem>(len: usize, seed: u64) -> Vec<T> {
    let mut r = rng(seed);
    (0..len).map(|_| T::from_f64(r.random_range(-1.0..1.0))).collect()
}

/// Same value, NaN equal to NaN.
fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// A device buffer of `len` NaNs.
fn poisoned<T: Elem>(gpu: &Gpu, len: usize) -> Result<cudarc::driver::CudaSlice<T>, Failed> {
    // SAFETY: every byte is written by the poison before anything reads it.
    let mut y = unsafe { gpu.stream().alloc::<T>(len) }.map_err(|e| e.to_string())?;
    gpu.poison(&mut y)?;
    Ok(y)
}

/// Runs one plan into a NaN-poisoned output and downloads the result.
fn run_plan<T: Elem>(
    gpu: &Gpu,
    x: &cudarc::driver::CudaSlice<T>,
    shape: (usize, usize),
    filter: &Filter1d<T>,
    border: Border,
    variant: Conv1dVariant,
) -> Result<Vec<T>, Failed> {
    let plan = Conv1dPlan::new(gpu, shape.0, shape.1, filter, border, variant)?;
    let mut y = poisoned::<T>(gpu, x.len())?;
    plan.enqueue(gpu, x, &mut y)?;
    Ok(gpu.stream().clone_dtoh(&y).map_err(|e| e.to_string())?)
}

/// Positions the oracle checks in a row of `n` outputs: all of them when that costs at most
/// 4·10⁷ multiply-adds, else both edges (`taps + 64` each) and 4096 random positions.
fn check_positions(n: usize, taps: usize, seed: u64) -> Vec<usize> {
    if n * taps <= 40_000_000 {
        return (0..n).collect();
    }
    let edge = (taps + 64).min(n);
    let mut r = rng(seed);
    let mut p: Vec<usize> = (0..edge).chain(n - edge..n).collect();
    p.extend((0..4096).map(|_| r.random_range(0..n)));
    p
}

/// The oracle at the checked positions of every row: `(row, i, value, scale)`.
fn oracle_rows<T: Elem>(
    rows: ArrayView2<T>,
    taps: &[f64],
    anchor: usize,
    border: Border,
    seed: u64,
) -> Vec<(usize, usize, f64, f64)> {
    let n = rows.ncols();
    let mut out = Vec::new();
    for (r, row) in rows.axis_iter(Axis(0)).enumerate() {
        let row = row.to_vec();
        for i in check_positions(n, taps.len(), seed ^ r as u64) {
            let (v, scale) = cpu::oracle(&row, taps, anchor, border, i);
            out.push((r, i, v, scale));
        }
    }
    out
}

/// Compares a row-major output of `n` columns with the oracle.
fn compare<T: Elem>(
    got: &[T],
    n: usize,
    want: &[(usize, usize, f64, f64)],
    taps: usize,
    extra: usize,
    what: &str,
) -> Result<(), Failed> {
    for &(r, i, v, scale) in want {
        let g = got[r * n + i].to_f64();
        let ok = if v.is_finite() {
            (g - v).abs() <= T::tol(taps, extra, scale)
        } else {
            same(g, v)
        };
        if !ok {
            return Err(format!(
                "{what}: row {r} output {i}: got {g:e}, want {v:e} (tol {:e})",
                T::tol(taps, extra, scale)
            )
            .into());
        }
    }
    Ok(())
}

/// Every output of `b` within twice the worst-case bound of `a` (catches unwritten outputs the
/// sampled oracle skips: the poison is NaN).
fn agree<T: Elem>(a: &[T], b: &[T], taps: usize, bound: f64, what: &str) -> Result<(), Failed> {
    let tol = 2.0 * T::tol(taps, 0, bound);
    match a
        .iter()
        .zip(b)
        .position(|(x, y)| !(same(x.to_f64(), y.to_f64()) || (x.to_f64() - y.to_f64()).abs() <= tol))
    {
        None => Ok(()),
        Some(p) => Err(format!("{what}: output {p}: {:?} vs {:?}", a[p], b[p]).into()),
    }
}

/// The lengths for `taps` taps (0 dropped: empty input has its own trial).
fn lengths(taps: usize) -> Vec<usize> {
    let mut v = vec![1, 2, taps - 1, 255, 256, 257, 10_003, 1_000_000];
    v.retain(|&n| n > 0);
    v.sort_unstable();
    v.dedup();
    v
}

/// One layout of the input: the logical rows (as a 2D view) and the array the API receives.
enum Layout<T> {
    OneD(Array1<T>),
    Batched(Array2<T>),
    /// Every other column of a (2, 2n) array: a non-contiguous view.
    Strided(Array2<T>),
}

impl<T: Elem> Layout<T> {
    fn all(n: usize, seed: u64) -> [Layout<T>; 3] {
        [
            Layout::OneD(Array1::from(random::<T>(n, seed))),
            Layout::Batched(Array2::from_shape_vec((3, n), random::<T>(3 * n, seed + 1)).expect("shape")),
            Layout::Strided(Array2::from_shape_vec((2, 2 * n), random::<T>(4 * n, seed + 2)).expect("shape")),
        ]
    }

    fn name(&self) -> &'static str {
        match self {
            Layout::OneD(_) => "1d",
            Layout::Batched(_) => "batched",
            Layout::Strided(_) => "strided",
        }
    }

    /// The logical rows, one signal each.
    fn rows(&self) -> ArrayView2<'_, T> {
        match self {
            Layout::OneD(a) => a.view().insert_axis(Axis(0)),
            Layout::Batched(a) => a.view(),
            Layout::Strided(a) => a.slice(s![.., ..;2]),
        }
    }
}

/// One trial: dtype × border × tap count, over all lengths, layouts and variants.
fn ladder_case<T: Elem>(gpu: &Gpu, border: Border, taps_len: usize, seed: u64) -> Result<(), Failed> {
    let taps = random::<T>(taps_len, seed);
    let taps64: Vec<f64> = taps.iter().map(|t| t.to_f64()).collect();
    let filter = Filter1d::correlation(&taps)?;
    let sum_abs_taps: f64 = taps64.iter().map(|t| t.abs()).sum();
    let bound = sum_abs_taps * 1.0_f64.max(border_abs(border));
    for n in lengths(taps_len) {
        for layout in Layout::<T>::all(n, seed ^ (n as u64) << 8) {
            let rows = layout.rows();
            let shape = (rows.nrows(), n);
            let want = oracle_rows(rows, &taps64, filter.anchor(), border, seed);
            let contiguous = rows.as_standard_layout();
            let x = gpu
                .stream()
                .clone_htod(contiguous.as_slice().expect("standard layout"))
                .map_err(|e| e.to_string())?;
            let mut first: Option<Vec<T>> = None;
            for variant in variants() {
                let what = format!("{} n={n} {} {}", T::NAME, layout.name(), variant.name());
                let got = run_plan(gpu, &x, shape, &filter, border, variant)?;
                compare(&got, n, &want, taps_len, 0, &what)?;
                match &first {
                    None => first = Some(got),
                    Some(f) => agree(f, &got, taps_len, bound, &what)?,
                }
            }
            // The public API on the layout itself (uploads views, returns the input's shape).
            let what = format!("{} n={n} {} public conv1d", T::NAME, layout.name());
            let got = match &layout {
                Layout::OneD(a) => gpu.conv1d(a, &taps, border)?.into_raw_vec_and_offset().0,
                Layout::Batched(a) => gpu.conv1d(a, &taps, border)?.into_raw_vec_and_offset().0,
                Layout::Strided(a) => {
                    let y = gpu.conv1d(&a.slice(s![.., ..;2]), &taps, border)?;
                    if y.shape() != [2, n] {
                        return Err(format!("{what}: shape {:?}", y.shape()).into());
                    }
                    y.into_raw_vec_and_offset().0
                }
            };
            compare(&got, n, &want, taps_len, 0, &what)?;
        }
    }
    Ok(())
}

/// |cval| of a constant border (enters the error scale of the cross-variant check).
fn border_abs(border: Border) -> f64 {
    match border {
        Border::Constant(v) => v.abs(),
        _ => 0.0,
    }
}

fn ladder_trials<T: Elem>() -> Vec<Trial> {
    let max = max_constant_taps(size_of::<T>());
    let mut trials = Vec::new();
    for (b, border) in Border::ALL.into_iter().enumerate() {
        for taps in [1, 2, 3, 5, 8, 31, 129, max] {
            let name = format!("gpu::conv1d::{}::{}::taps{taps}", T::NAME, border.name());
            let seed = (b as u64) << 32 | taps as u64;
            trials.push(gpu_trial(name, move |gpu| ladder_case::<T>(gpu, border, taps, seed)));
        }
    }
    trials
}

/// convolve1d = correlation with reversed taps, anchor L − 1 − L/2 (odd and even L).
fn convolution_case<T: Elem>(gpu: &Gpu) -> Result<(), Failed> {
    let x = Array2::from_shape_vec((2, 1001), random::<T>(2002, 7)).expect("shape");
    for taps_len in [1, 2, 4, 5, 30] {
        let taps = random::<T>(taps_len, taps_len as u64);
        let flipped: Vec<f64> = taps.iter().rev().map(|t| t.to_f64()).collect();
        let anchor = taps_len - 1 - taps_len / 2;
        for border in Border::ALL {
            let want = oracle_rows(x.view(), &flipped, anchor, border, 1);
            for variant in variants() {
                let got = gpu.convolve1d_with(&x, &taps, border, variant)?;
                let what = format!(
                    "{} convolve1d L={taps_len} {} {}",
                    T::NAME,
                    border.name(),
                    variant.name()
                );
                compare(got.as_slice().expect("standard"), 1001, &want, taps_len, 0, &what)?;
            }
        }
    }
    Ok(())
}

/// The mean filter against the exact mean (taps 1/w in f64): one more rounding for 1/w.
fn mean_filter_case<T: Elem>(gpu: &Gpu) -> Result<(), Failed> {
    let x = Array1::from(random::<T>(100_003, 11));
    for width in [1, 2, 5, 6, 31, 200] {
        let taps = vec![1.0 / width as f64; width];
        for border in Border::ALL {
            let want = oracle_rows(x.view().insert_axis(Axis(0)), &taps, width / 2, border, 3);
            for variant in variants() {
                let got = gpu.mean_filter1d_with(&x, width, border, variant)?;
                let what = format!("{} mean w={width} {} {}", T::NAME, border.name(), variant.name());
                compare(got.as_slice().expect("standard"), x.len(), &want, width, 1, &what)?;
            }
        }
    }
    Ok(())
}

/// Non-finite taps and samples propagate exactly as in the f64 oracle (NaN where it is NaN).
fn non_finite_case<T: Elem>(gpu: &Gpu) -> Result<(), Failed> {
    // Long enough that the vector-window kernel's interior blocks (2048 outputs) meet the
    // non-finite samples too, not only its border blocks.
    let mut xv = random::<T>(10_000, 5);
    xv[1500] = T::from_f64(f64::NAN);
    xv[2000] = T::from_f64(f64::INFINITY);
    xv[4500] = T::from_f64(f64::NAN);
    xv[7001] = T::from_f64(f64::NEG_INFINITY);
    let x = Array1::from(xv);
    let cases: [&[f64]; 4] = [
        &[0.25, f64::NAN, 0.25],
        &[f64::INFINITY],
        &[1.0, 2.0, f64::NEG_INFINITY, 0.5, 0.1],
        &[0.2; 5],
    ];
    for taps64 in cases {
        let taps: Vec<T> = taps64.iter().map(|&t| T::from_f64(t)).collect();
        let exact: Vec<f64> = taps.iter().map(|t| t.to_f64()).collect();
        for border in Border::ALL {
            let want = oracle_rows(x.view().insert_axis(Axis(0)), &exact, taps.len() / 2, border, 9);
            for variant in variants() {
                let got = gpu.conv1d_with(&x, &taps, border, variant)?;
                let what = format!("{} taps {taps64:?} {} {}", T::NAME, border.name(), variant.name());
                compare(got.as_slice().expect("standard"), x.len(), &want, taps.len(), 0, &what)?;
            }
        }
    }
    // A NaN tap under a zero border makes every output NaN (0 · NaN = NaN), as in scipy.
    let y = gpu.conv1d(
        &Array1::from(random::<T>(100, 1)),
        &[T::from_f64(f64::NAN)],
        Border::Zero,
    )?;
    if !y.iter().all(|v| v.to_f64().is_nan()) {
        return Err("a NaN tap did not reach every output".into());
    }
    Ok(())
}

fn empty_and_errors<T: Elem>(gpu: &Gpu) -> Result<(), Failed> {
    let taps = [T::from_f64(0.5); 3];
    let empty1 = gpu.conv1d(&Array1::from_elem(0, T::ZERO), &taps, Border::Zero)?;
    let empty_rows = gpu.conv1d(&Array2::from_elem((0, 5), T::ZERO), &taps, Border::Reflect)?;
    let empty_cols = gpu.conv1d(&Array2::from_elem((3, 0), T::ZERO), &taps, Border::Wrap)?;
    if !empty1.is_empty() || empty_rows.shape() != [0, 5] || empty_cols.shape() != [3, 0] {
        return Err("empty input must give an empty result of the same shape".into());
    }
    let dev = DeviceArray::upload(gpu, &Array2::from_elem((4, 0), T::ZERO))?;
    let out = gpu.filter1d(&dev, &Filter1d::correlation(&taps)?, Border::Zero, Conv1dVariant::Auto)?;
    if out.shape() != [4, 0] || !out.download(gpu)?.is_empty() {
        return Err("empty device array must give an empty device array".into());
    }
    let x = Array1::from(random::<T>(1000, 3));
    match gpu.conv1d(&x, &[], Border::Zero) {
        Err(Error::InvalidArgument { name: "taps", .. }) => {}
        other => return Err(format!("empty taps: {other:?}").into()),
    }
    match gpu.mean_filter1d(&x, 0, Border::Zero) {
        Err(Error::InvalidArgument { name: "width", .. }) => {}
        other => return Err(format!("width 0: {other:?}").into()),
    }
    match gpu.conv1d(&ndarray::arr0(T::from_f64(1.0)), &taps, Border::Zero) {
        Err(Error::InvalidArgument { name: "x", .. }) => {}
        other => return Err(format!("0-d input: {other:?}").into()),
    }
    match Filter1d::with_anchor(&taps, 3) {
        Err(Error::InvalidArgument { name: "anchor", .. }) => {}
        other => return Err(format!("anchor past the taps: {other:?}").into()),
    }
    // One tap more than the constant bank holds.
    let max = max_constant_taps(size_of::<T>());
    let many = random::<T>(max + 1, 17);
    for variant in [
        Conv1dVariant::ConstantTaps,
        Conv1dVariant::SharedTile,
        Conv1dVariant::RegisterBlocked,
        Conv1dVariant::RegisterBlockedVector,
    ] {
        match gpu.conv1d_with(&x, &many, Border::Zero, variant) {
            Err(Error::TooManyTaps { taps, max: m }) if taps == max + 1 && m == max => {}
            other => return Err(format!("{}: {other:?}", variant.name()).into()),
        }
    }
    // GlobalTaps takes them; Auto falls back to register blocking with global taps.
    let long = Array1::from(random::<T>(40_000, 4));
    let many64: Vec<f64> = many.iter().map(|t| t.to_f64()).collect();
    let want = oracle_rows(
        long.view().insert_axis(Axis(0)),
        &many64,
        many.len() / 2,
        Border::Reflect,
        5,
    );
    for variant in [Conv1dVariant::GlobalTaps, Conv1dVariant::Auto] {
        let got = gpu.conv1d_with(&long, &many, Border::Reflect, variant)?;
        let what = format!("{} max+1 taps {}", T::NAME, variant.name());
        compare(
            got.as_slice().expect("standard"),
            long.len(),
            &want,
            many.len(),
            0,
            &what,
        )?;
    }
    // A plan refuses buffers shorter than its shape.
    let plan = Conv1dPlan::new(
        gpu,
        2,
        100,
        &Filter1d::correlation(&taps)?,
        Border::Zero,
        Conv1dVariant::Auto,
    )?;
    let short = gpu
        .stream()
        .clone_htod(&random::<T>(150, 1))
        .map_err(|e| e.to_string())?;
    let mut y = poisoned::<T>(gpu, 200)?;
    match plan.enqueue(gpu, &short, &mut y) {
        Err(Error::InvalidArgument { name: "x", .. }) => Ok(()),
        other => Err(format!("short input: {other:?}").into()),
    }
}

/// Plans with different taps enqueued back to back (no synchronization between them) each find
/// their own taps in the one constant bank.
fn constant_bank_interleaved<T: Elem>(gpu: &Gpu) -> Result<(), Failed> {
    let n = 50_000;
    let xh = random::<T>(n, 21);
    let x = gpu.stream().clone_htod(&xh).map_err(|e| e.to_string())?;
    let filters: Vec<Filter1d<T>> = [5, 31, 3, 129]
        .iter()
        .map(|&l| Filter1d::correlation(&random::<T>(l, l as u64 + 100)))
        .collect::<Result<_, _>>()?;
    let variants = [
        Conv1dVariant::ConstantTaps,
        Conv1dVariant::SharedTile,
        Conv1dVariant::RegisterBlocked,
        Conv1dVariant::RegisterBlockedShared,
        Conv1dVariant::RegisterBlockedVector,
    ];
    let mut outs = Vec::new();
    for round in 0..5 {
        for (f, filter) in filters.iter().enumerate() {
            let variant = variants[(f + round) % variants.len()];
            let plan = Conv1dPlan::new(gpu, 1, n, filter, Border::Mirror, variant)?;
            let mut y = poisoned::<T>(gpu, n)?;
            plan.enqueue(gpu, &x, &mut y)?;
            outs.push((f, variant, y));
        }
    }
    let row = Array1::from(xh);
    for (f, variant, y) in outs {
        let filter = &filters[f];
        let taps64: Vec<f64> = filter.taps().iter().map(|t| t.to_f64()).collect();
        let want = oracle_rows(
            row.view().insert_axis(Axis(0)),
            &taps64,
            filter.anchor(),
            Border::Mirror,
            2,
        );
        let got = gpu.stream().clone_dtoh(&y).map_err(|e| e.to_string())?;
        let what = format!("interleaved filter {f} {}", variant.name());
        compare(&got, n, &want, taps64.len(), 0, &what)?;
    }
    Ok(())
}

/// Two handles (two modules, two streams) filtering with different taps from two threads at once.
fn two_handles(gpu: &Gpu) -> Result<(), Failed> {
    let other = Gpu::new()?;
    let x = Array2::from_shape_vec((4, 30_000), random::<f64>(120_000, 31)).expect("shape");
    let taps_a = random::<f64>(7, 1);
    let taps_b = random::<f64>(31, 2);
    let run = |g: &Gpu, taps: &[f64]| -> Result<Vec<Array2<f64>>, Error> {
        (0..20)
            .map(|_| g.conv1d_with(&x, taps, Border::Wrap, Conv1dVariant::RegisterBlocked))
            .collect()
    };
    let (ya, yb) = std::thread::scope(|s| {
        let a = s.spawn(|| run(gpu, &taps_a));
        let b = s.spawn(|| run(&other, &taps_b));
        (a.join().expect("thread a"), b.join().expect("thread b"))
    });
    for (taps, ys) in [(&taps_a, ya?), (&taps_b, yb?)] {
        let want = oracle_rows(x.view(), taps, taps.len() / 2, Border::Wrap, 4);
        for y in ys {
            compare(
                y.as_slice().expect("standard"),
                30_000,
                &want,
                taps.len(),
                0,
                "two handles",
            )?;
        }
    }
    Ok(())
}

/// Device-resident 3D input: leading axes are a batch; the result stays on the device.
fn device_array_3d(gpu: &Gpu) -> Result<(), Failed> {
    let x = Array3::from_shape_vec((2, 3, 777), random::<f32>(2 * 3 * 777, 41)).expect("shape");
    let dev = DeviceArray::upload(gpu, &x)?;
    let taps = random::<f32>(9, 42);
    let taps64: Vec<f64> = taps.iter().map(|&t| t as f64).collect();
    let y = gpu.filter1d(
        &dev,
        &Filter1d::correlation(&taps)?,
        Border::Replicate,
        Conv1dVariant::Auto,
    )?;
    if y.shape() != [2, 3, 777] {
        return Err(format!("shape {:?}", y.shape()).into());
    }
    let got = y.download(gpu)?;
    let rows = x.to_shape((6, 777)).expect("contiguous");
    let want = oracle_rows(rows.view(), &taps64, 4, Border::Replicate, 6);
    compare(got.as_slice().expect("standard"), 777, &want, 9, 0, "3d device array")
}

/// scipy.ndimage's own outputs (tests/data/scipy_conv1d.txt) through the public ops, every
/// variant: integer data, so correlation and convolution must match exactly.
fn scipy_fixture(gpu: &Gpu) -> Result<(), Failed> {
    for c in scipy_cases() {
        let x = Array1::from(c.x.clone());
        for variant in variants() {
            let y = match c.op.as_str() {
                "correlate1d" => gpu.conv1d_with(&x, &c.taps, c.border, variant)?,
                "convolve1d" => gpu.convolve1d_with(&x, &c.taps, c.border, variant)?,
                _ => gpu.mean_filter1d_with(&x, c.taps[0] as usize, c.border, variant)?,
            };
            for (i, (&got, &want)) in y.iter().zip(&c.y).enumerate() {
                if !scipy_match(&c, got, want) {
                    return Err(format!(
                        "{} {} {:?} x={:?} taps={:?}: y[{i}] = {got}, scipy {want}",
                        variant.name(),
                        c.op,
                        c.border,
                        c.x,
                        c.taps
                    )
                    .into());
                }
            }
        }
    }
    Ok(())
}

fn typed_trials<T: Elem>() -> Vec<Trial> {
    let t = T::NAME;
    vec![
        gpu_trial(format!("gpu::conv1d::{t}::convolve1d_flips"), convolution_case::<T>),
        gpu_trial(
            format!("gpu::conv1d::{t}::mean_filter_vs_exact_mean"),
            mean_filter_case::<T>,
        ),
        gpu_trial(format!("gpu::conv1d::{t}::non_finite_propagates"), non_finite_case::<T>),
        gpu_trial(format!("gpu::conv1d::{t}::empty_and_errors"), empty_and_errors::<T>),
        gpu_trial(
            format!("gpu::conv1d::{t}::constant_bank_interleaved"),
            constant_bank_interleaved::<T>,
        ),
    ]
}

pub fn trials() -> Vec<Trial> {
    let mut v = ladder_trials::<f32>();
    v.extend(ladder_trials::<f64>());
    v.extend(typed_trials::<f32>());
    v.extend(typed_trials::<f64>());
    v.push(gpu_trial("gpu::conv1d::scipy_fixture".into(), scipy_fixture));
    v.push(gpu_trial("gpu::conv1d::two_handles_two_streams".into(), two_handles));
    v.push(gpu_trial("gpu::conv1d::device_array_3d".into(), device_array_3d));
    v
}
