//! GPU window-statistics trials: every row variant (Auto included) × element type × output pair ×
//! border × width {1, 2, 3, 15, 16, 255, ≥ row} × shape {1×1, 1×N, N×1, primes, 8192×7, 7×8193,
//! a 3-D batch}, and every box variant × kind × output type × border × window {1×1, 3×3, 5×5,
//! 1×9, 9×1, ≥ plane} × shape, against the CPU oracle; layouts (transposed, strided, device
//! arrays); scipy's own outputs on the GPU; float drift on long rows and NaN/∞ locality; errors.
//! Every output the ops allocate is poisoned first (tests/main.rs sets GPUPRIMS_POISON_OUTPUTS).

use gpuprims::abi::window::stream_box_ring_bytes;
use gpuprims::cpu::window::{self as cpu, OracleElement, WindowRef};
use gpuprims::{
    Border, BoxPlan, BoxVariant, DeviceArray, Error, ExactElement, Gpu, WindowElement, WindowFloat, WindowVariant,
};
use libtest_mimic::{Failed, Trial};
use ndarray::{Array1, Array2, Array3, ArrayD, IxDyn, s};
use rand::Rng;

use crate::common::{gpu_trial, rng};
use crate::cpu_window::{scipy_box_match, scipy_boxes};

const ROW_VARIANTS: [WindowVariant; 6] = [
    WindowVariant::GlobalAccumulate,
    WindowVariant::SplitLoops,
    WindowVariant::StagedWindow,
    WindowVariant::SharedTile,
    WindowVariant::RunningSum,
    WindowVariant::Auto,
];

/// Two device outputs, as the pair ops return them.
type Pair<A, B> = Result<(DeviceArray<A, IxDyn>, DeviceArray<B, IxDyn>), Error>;

/// An output form under test and the ops that write it: floats `F` (`window_sum_sumsq::<F, _>`
/// and its kin) or the exact integer sums (the `_exact` ops).
trait Outputs<T: In> {
    type S: Out;
    type Q: Out;
    fn rows(c: &RowCase<T>) -> Pair<Self::S, Self::Q>;
    fn boxes(c: &BoxCase<T>) -> Pair<Self::S, Self::Q>;
    fn box_sum(c: &BoxCase<T>) -> Result<DeviceArray<Self::S, IxDyn>, Error>;
}

struct Float<F>(std::marker::PhantomData<F>);
struct Exact;

impl<T: In, F: Out + WindowFloat<T>> Outputs<T> for Float<F> {
    type S = F;
    type Q = F;
    fn rows(c: &RowCase<T>) -> Pair<F, F> {
        c.gpu.window_sum_sumsq_with::<F, _>(&c.x, c.width, c.border, c.variant)
    }
    fn boxes(c: &BoxCase<T>) -> Pair<F, F> {
        c.gpu.box_sum_sumsq_with::<F, _>(c.x, c.window, c.border, c.variant)
    }
    fn box_sum(c: &BoxCase<T>) -> Result<DeviceArray<F, IxDyn>, Error> {
        c.gpu.box_sum_with::<F, _>(c.x, c.window, c.border, c.variant)
    }
}

impl<T: In + ExactElement<Sum: Out, SumSq: Out>> Outputs<T> for Exact {
    type S = T::Sum;
    type Q = T::SumSq;
    fn rows(c: &RowCase<T>) -> Pair<T::Sum, T::SumSq> {
        c.gpu.window_sum_sumsq_exact_with(&c.x, c.width, c.border, c.variant)
    }
    fn boxes(c: &BoxCase<T>) -> Pair<T::Sum, T::SumSq> {
        c.gpu.box_sum_sumsq_exact_with(c.x, c.window, c.border, c.variant)
    }
    fn box_sum(c: &BoxCase<T>) -> Result<DeviceArray<T::Sum, IxDyn>, Error> {
        c.gpu.box_sum_exact_with(c.x, c.window, c.border, c.variant)
    }
}

const BOX_VARIANTS: [BoxVariant; 5] = [
    BoxVariant::Separable,
    BoxVariant::Fused,
    BoxVariant::WarpPrefix,
    BoxVariant::StreamRows,
    BoxVariant::Auto,
];

/// An output element the trials read back.
trait Out: Copy + cudarc::driver::DeviceRepr + Clone + std::fmt::Debug + 'static {
    /// Unit roundoff (0: an exact integer type).
    const U: f64;
    fn f(self) -> f64;
    fn exact(self) -> Option<i128>;
}

macro_rules! out_float {
    ($($t:ty: $u:expr),*) => {$(
        impl Out for $t {
            const U: f64 = $u;
            fn f(self) -> f64 { self as f64 }
            fn exact(self) -> Option<i128> { None }
        }
    )*};
}
out_float!(f32: 1.0 / (1u64 << 24) as f64, f64: 1.0 / (1u64 << 53) as f64);

macro_rules! out_int {
    ($($t:ty),*) => {$(
        impl Out for $t {
            const U: f64 = 0.0;
            fn f(self) -> f64 { self as f64 }
            fn exact(self) -> Option<i128> { Some(self as i128) }
        }
    )*};
}
out_int!(u32, u64, i64);

impl Out for u128 {
    const U: f64 = 0.0;
    fn f(self) -> f64 {
        self as f64
    }
    fn exact(self) -> Option<i128> {
        i128::try_from(self).ok()
    }
}

/// Same value, NaN equal to NaN.
fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// Checks one output against the oracle's exact value (integer outputs) or within the bound of
/// the module docs: accumulated in the output type (`in_output`: the first two rungs) or in exact
/// / f64 arithmetic then rounded once.
fn check_value<O: Out>(g: O, exact: Option<i128>, value: f64, scale: f64, width: usize, in_output: bool) -> bool {
    if O::U == 0.0 {
        return g.exact() == exact;
    }
    let got = g.f();
    if !value.is_finite() {
        return same(got, value);
    }
    let f64u = 1.0 / (1u64 << 53) as f64;
    let tol = if in_output {
        (width as f64 + 1.0) * O::U * scale
    } else {
        2.0 * O::U * value.abs() + (width as f64 + 1.0) * f64u * scale
    };
    (got - value).abs() <= tol
}

/// An input element type under test.
trait In: WindowElement + OracleElement + Copy {
    const NAME: &'static str;
    fn random(n: usize, seed: u64) -> Vec<Self>;
    /// Runs `f` with every output pair of the type.
    fn each_pair(c: &RowCase<Self>) -> Result<(), Failed>;
    /// Runs every box kind with every output type of the type.
    fn each_box(c: &BoxCase<Self>) -> Result<(), Failed>;
}

macro_rules! input {
    ($t:ty, $name:literal, |$r:ident| $gen:expr, pairs: [$($o:ty),*], sums: [$($one:ty),*], moments: [$($f:ty),*]) => {
        impl In for $t {
            const NAME: &'static str = $name;
            fn random(n: usize, seed: u64) -> Vec<$t> {
                let mut $r = rng(seed);
                (0..n).map(|_| $gen).collect()
            }
            fn each_pair(c: &RowCase<$t>) -> Result<(), Failed> {
                $(row_pair::<$t, $o>(c)?;)*
                Ok(())
            }
            fn each_box(c: &BoxCase<$t>) -> Result<(), Failed> {
                $(box_pair::<$t, $o>(c)?;)*
                $(box_sum_only::<$t, $one>(c)?;)*
                $(box_moments::<$t, $f>(c)?;)*
                Ok(())
            }
        }
    };
}
input!(u8, "u8", |r| r.random::<u8>(), pairs: [Float<f32>, Float<f64>, Exact], sums: [Float<f32>, Exact], moments: [f32, f64]);
input!(u16, "u16", |r| r.random::<u16>(), pairs: [Float<f32>, Float<f64>, Exact], sums: [Float<f64>, Exact], moments: [f32, f64]);
input!(i32, "i32", |r| r.random::<i32>(), pairs: [Float<f32>, Float<f64>, Exact], sums: [Float<f32>, Exact], moments: [f32, f64]);
input!(f32, "f32", |r| r.random_range(-1000.0f32..1000.0), pairs: [Float<f32>, Float<f64>], sums: [Float<f32>], moments: [f32, f64]);
input!(f64, "f64", |r| r.random_range(-1000.0f64..1000.0), pairs: [Float<f64>], sums: [Float<f64>], moments: [f64]);

/// Positions the oracle checks among `rows × n` outputs of a `width` window: all when that costs
/// at most 2·10⁶ samples, else both edges of the first and last rows and 3000 random positions.
fn positions(rows: usize, n: usize, width: usize, seed: u64) -> Vec<(usize, usize)> {
    if rows * n * width <= 2_000_000 {
        return (0..rows).flat_map(|r| (0..n).map(move |i| (r, i))).collect();
    }
    let edge = (width + 8).min(n);
    let mut p: Vec<(usize, usize)> = [0, rows - 1]
        .into_iter()
        .flat_map(|r| (0..edge).chain(n - edge..n).map(move |i| (r, i)))
        .collect();
    let mut g = rng(seed);
    p.extend((0..3000).map(|_| (g.random_range(0..rows), g.random_range(0..n))));
    p
}

/// One row-window case: the input on the device and the oracle at the checked positions.
struct RowCase<'a, T> {
    gpu: &'a Gpu,
    x: DeviceArray<T, IxDyn>,
    n: usize,
    width: usize,
    border: Border,
    variant: WindowVariant,
    want: &'a [((usize, usize), WindowRef)],
    /// Exact sums of every output (integers): catches unwritten outputs the sampling skips.
    all_exact: &'a Option<Vec<(i128, i128)>>,
}

fn row_pair<T: In, O: Outputs<T>>(c: &RowCase<T>) -> Result<(), Failed> {
    check_row_pair(c, O::rows(c))
}

fn check_row_pair<T: In, S: Out, Q: Out>(c: &RowCase<T>, result: Pair<S, Q>) -> Result<(), Failed> {
    let what = format!(
        "{} → ({}, {}) {} w={} {:?}",
        T::NAME,
        std::any::type_name::<S>(),
        std::any::type_name::<Q>(),
        c.variant.name(),
        c.width,
        c.border
    );
    let (s, q) = match result {
        Err(Error::WindowTooLarge { window, max, .. })
            if window > max && matches!(c.variant, WindowVariant::StagedWindow | WindowVariant::SharedTile) =>
        {
            return Ok(());
        }
        other => other.map_err(|e| format!("{what}: {e}"))?,
    };
    let (s, q) = (s.download(c.gpu)?, q.download(c.gpu)?);
    let (s, q) = (s.as_slice().expect("C order"), q.as_slice().expect("C order"));
    let in_output = matches!(c.variant, WindowVariant::GlobalAccumulate | WindowVariant::SplitLoops);
    for &((r, i), w) in c.want {
        let k = r * c.n + i;
        let exact = w.exact.map(|e| e.0);
        let exact_q = w.exact.map(|e| e.1);
        if !check_value(s[k], exact, w.sum, w.abs, c.width, in_output)
            || !check_value(q[k], exact_q, w.sumsq, w.abs_sq, c.width, in_output)
        {
            return Err(format!("{what}: row {r} output {i}: got ({:?}, {:?}), want {w:?}", s[k], q[k]).into());
        }
    }
    if let Some(all) = c.all_exact
        && S::U == 0.0
    {
        if let Some(k) = (0..all.len()).find(|&k| s[k].exact() != Some(all[k].0) || q[k].exact() != Some(all[k].1)) {
            return Err(format!("{what}: output {k}: ({:?}, {:?}) vs {:?}", s[k], q[k], all[k]).into());
        }
    } else if let Some(k) = s.iter().position(|v| v.f().is_nan()) {
        return Err(format!("{what}: output {k} is NaN (unwritten?)").into());
    }
    Ok(())
}

/// Row shapes: (leading dims…, n).
const ROW_SHAPES: [&[usize]; 7] = [
    &[1, 1],
    &[1, 37],
    &[29, 1],
    &[7, 131],
    &[8192, 7],
    &[2, 8193],
    &[3, 5, 17],
];

fn widths(n: usize) -> Vec<usize> {
    let mut w = vec![1, 2, 3, 15, 16, 33, 64, 255, n + 5];
    w.sort_unstable();
    w.dedup();
    w
}

fn row_trial<T: In>(gpu: &Gpu, border: Border, shape: &[usize], seed: u64) -> Result<(), Failed> {
    let len: usize = shape.iter().product();
    let n = *shape.last().expect("shape");
    row_trial_on::<T>(gpu, border, shape, T::random(len, seed), &widths(n), seed)
}

/// Every width the float sliding kernels split between them below 18 (1–2 and 16–17: van Herk;
/// 3–15: the narrow kernel's groups of 4 outputs, each width sharing a different number of
/// samples) and van Herk's chunk boundaries (the first window's end at each position of the
/// next chunk, then middles of one and two chunks), on rows of two tiles and a partial one.
fn float_narrow_widths<T: In>(gpu: &Gpu, border: Border, seed: u64) -> Result<(), Failed> {
    use gpuprims::abi::window::{SLIDING_CHUNK, WINDOW_BLOCK};
    let shape = [3, 2 * (WINDOW_BLOCK * SLIDING_CHUNK) as usize + 61];
    let widths: Vec<usize> = (1..=17).chain([24, 31, 32, 33, 34, 48, 49, 50]).collect();
    row_trial_on::<T>(gpu, border, &shape, T::random(shape[0] * shape[1], seed), &widths, seed)
}

/// Rows whose samples lie in `[lo, hi]`, both ends included, so the sliding kernel's tiles take a
/// narrower accumulator class ([`SlideIn`](gpuprims::abi::window::SlideIn)); every shape's last
/// row (and on rows of several tiles, one tile only) holds one sample at `hi + 1`, so tiles of the
/// next class sit beside them. Against the same oracles as every row trial.
fn row_trial_within<T: In + TryFrom<i64>>(
    gpu: &Gpu,
    border: Border,
    shape: &[usize],
    seed: u64,
    (lo, hi): (i64, i64),
) -> Result<(), Failed> {
    let len: usize = shape.iter().product();
    let n = *shape.last().expect("shape");
    let mut g = rng(seed);
    let mut x: Vec<i64> = (0..len)
        .map(|k| match k % 97 {
            0 => hi,
            1 => lo,
            _ => g.random_range(lo..=hi),
        })
        .collect();
    let last_row = len - n;
    x[last_row + n / 2] = hi + 1;
    let x = x
        .into_iter()
        .map(|v| T::try_from(v).ok().expect("in the type's range"))
        .collect();
    row_trial_on::<T>(gpu, border, shape, x, &widths(n), seed)
}

/// The sample ranges of the sliding kernel's narrower classes, by input type and class name:
/// i32 within ±`I32_NARROW_MAX` (squares in u64), i32 and u16 within the 32-bit class's bound
/// at width 255 (`fits_small32`: ±4104; so widths up to 255 slide in 32 bits, wider ones not).
fn class_ranges() -> [(&'static str, &'static str, (i64, i64)); 3] {
    use gpuprims::abi::window::{I32_NARROW_MAX, fits_small32};
    let m = I32_NARROW_MAX as i64;
    let small = (0..=u16::MAX as u32)
        .take_while(|&v| fits_small32(v, 255))
        .last()
        .expect("0 fits") as i64;
    [
        ("i32", "narrow", (-m, m)),
        ("i32", "small", (-small, small)),
        ("u16", "small", (0, small)),
    ]
}

fn row_trial_on<T: In>(
    gpu: &Gpu,
    border: Border,
    shape: &[usize],
    data: Vec<T>,
    widths: &[usize],
    seed: u64,
) -> Result<(), Failed> {
    let len: usize = shape.iter().product();
    let n = *shape.last().expect("shape");
    let rows = len / n;
    let host = ArrayD::from_shape_vec(IxDyn(shape), data).expect("shape");
    let flat = host.as_slice().expect("C order");
    let x = DeviceArray::upload(gpu, &host)?;
    for &width in widths {
        let want: Vec<_> = positions(rows, n, width, seed ^ width as u64)
            .into_iter()
            .map(|(r, i)| ((r, i), cpu::row_oracle(&flat[r * n..][..n], width, border, i)))
            .collect();
        let all_exact = flat[0].to_i128().map(|_| {
            cpu::window_sums(flat, n, width, border)
                .iter()
                .map(|v| {
                    let q = gpuprims::abi::window::Acc::to_w128(v.q).to_i128();
                    (gpuprims::abi::window::Acc::to_w128(v.s).to_i128(), q)
                })
                .collect::<Vec<_>>()
        });
        for variant in ROW_VARIANTS {
            let case = RowCase {
                gpu,
                x: DeviceArray::upload(gpu, &host)?,
                n,
                width,
                border,
                variant,
                want: &want,
                all_exact: &all_exact,
            };
            T::each_pair(&case)?;
        }
    }
    drop(x);
    Ok(())
}

/// One box case: input on the device, its plane-major host copy, the window.
struct BoxCase<'a, T> {
    gpu: &'a Gpu,
    x: &'a DeviceArray<T, IxDyn>,
    host: &'a [T],
    planes: usize,
    size: (usize, usize),
    window: (usize, usize),
    border: Border,
    variant: BoxVariant,
    want: &'a [((usize, usize, usize), WindowRef)],
}

impl<T: In> BoxCase<'_, T> {
    fn what(&self, op: &str, out: &str) -> String {
        format!(
            "{} {op} → {out} {} {:?} {:?} on {} × {:?}",
            T::NAME,
            self.variant.name(),
            self.window,
            self.border,
            self.planes,
            self.size
        )
    }

    /// Accepts the documented refusals (fused on floats, warp-prefix on anything but u8,
    /// stream-rows on anything but u8 into f32 (`out_f32`: every output is f32), windows the
    /// one-pass kernels do not take).
    fn refused<V>(&self, r: Result<V, Error>, what: &str, out_f32: bool) -> Result<Option<V>, Failed> {
        let one_pass = matches!(
            self.variant,
            BoxVariant::Fused | BoxVariant::WarpPrefix | BoxVariant::StreamRows
        );
        let stream_refuses = !(T::NAME == "u8" && out_f32);
        match r {
            Err(Error::Unsupported { .. }) if T::FLOAT && self.variant == BoxVariant::Fused => Ok(None),
            Err(Error::Unsupported { .. }) if T::NAME != "u8" && self.variant == BoxVariant::WarpPrefix => Ok(None),
            Err(Error::Unsupported { .. }) if stream_refuses && self.variant == BoxVariant::StreamRows => Ok(None),
            Err(Error::WindowTooLarge { window, max, .. }) if one_pass && window > max => Ok(None),
            Err(e) => Err(format!("{what}: {e}").into()),
            Ok(v) => Ok(Some(v)),
        }
    }

    fn index(&self, (p, r, c): (usize, usize, usize)) -> usize {
        (p * self.size.0 + r) * self.size.1 + c
    }
}

fn box_pair<T: In, O: Outputs<T>>(c: &BoxCase<T>) -> Result<(), Failed> {
    check_box_pair(c, O::boxes(c))
}

fn check_box_pair<T: In, S: Out, Q: Out>(c: &BoxCase<T>, r: Pair<S, Q>) -> Result<(), Failed> {
    let what = c.what("box_sum_sumsq", std::any::type_name::<(S, Q)>());
    let f32_out = std::any::type_name::<S>() == "f32" && std::any::type_name::<Q>() == "f32";
    let Some((s, q)) = c.refused(r, &what, f32_out)? else {
        return Ok(());
    };
    let (s, q) = (
        s.download(c.gpu)?.into_raw_vec_and_offset().0,
        q.download(c.gpu)?.into_raw_vec_and_offset().0,
    );
    let n = c.window.0 * c.window.1;
    for &(at, w) in c.want {
        let k = c.index(at);
        if !check_value(s[k], w.exact.map(|e| e.0), w.sum, w.abs, n, false)
            || !check_value(q[k], w.exact.map(|e| e.1), w.sumsq, w.abs_sq, n, false)
        {
            return Err(format!("{what}: at {at:?}: ({:?}, {:?}) vs {w:?}", s[k], q[k]).into());
        }
    }
    if let Some(k) = s
        .iter()
        .position(|v| v.f().is_nan() || v.exact() == Some(u32::MAX as i128))
    {
        return Err(format!("{what}: output {k} unwritten? {:?}", s[k]).into());
    }
    Ok(())
}

fn box_sum_only<T: In, O: Outputs<T>>(c: &BoxCase<T>) -> Result<(), Failed> {
    check_box_sum(c, O::box_sum(c))
}

fn check_box_sum<T: In, S: Out>(c: &BoxCase<T>, r: Result<DeviceArray<S, IxDyn>, Error>) -> Result<(), Failed> {
    let what = c.what("box_sum", std::any::type_name::<S>());
    let Some(s) = c.refused(r, &what, std::any::type_name::<S>() == "f32")? else {
        return Ok(());
    };
    let s = s.download(c.gpu)?.into_raw_vec_and_offset().0;
    let n = c.window.0 * c.window.1;
    for &(at, w) in c.want {
        let k = c.index(at);
        if !check_value(s[k], w.exact.map(|e| e.0), w.sum, w.abs, n, false) {
            return Err(format!("{what}: at {at:?}: {:?} vs {w:?}", s[k]).into());
        }
    }
    Ok(())
}

fn box_moments<T: In, F: Out + WindowFloat<T>>(c: &BoxCase<T>) -> Result<(), Failed> {
    let what = c.what("local_mean_variance / local_std", std::any::type_name::<F>());
    let r: Pair<F, F> = c.gpu.local_mean_variance_with(c.x, c.window, c.border, c.variant);
    let Some((m, v)) = c.refused(r, &what, std::any::type_name::<F>() == "f32")? else {
        return Ok(());
    };
    let sd: DeviceArray<F, IxDyn> = c.gpu.local_std_with(c.x, c.window, c.border, c.variant)?;
    let (m, v, sd) = (
        m.download(c.gpu)?.into_raw_vec_and_offset().0,
        v.download(c.gpu)?.into_raw_vec_and_offset().0,
        sd.download(c.gpu)?.into_raw_vec_and_offset().0,
    );
    let plane_len = c.size.0 * c.size.1;
    let f64u = 1.0 / (1u64 << 53) as f64;
    for &((p, r, col), w) in c.want {
        let k = c.index((p, r, col));
        let plane = &c.host[p * plane_len..][..plane_len];
        let (mean, var) = cpu::moments_oracle(plane, c.size.1, c.window, c.border, (r, col));
        let sq_scale = w.abs_sq / w.n as f64;
        // The box sum's own bound (n terms in f64), divided by n, then one rounding to F.
        let tol_m = 2.0 * F::U * mean.abs() + (w.n as f64 + 2.0) * f64u * w.abs / w.n as f64;
        let tol_v = 4.0 * F::U * var + 16.0 * (w.n as f64 + 2.0) * f64u * sq_scale;
        let (gm, gv, gs) = (m[k].f(), v[k].f(), sd[k].f());
        let ok = (gm - mean).abs() <= tol_m
            && (gv - var).abs() <= tol_v
            && gv >= 0.0
            && gs >= 0.0
            && (gs * gs - var).abs() <= tol_v + 4.0 * F::U * var;
        if !ok {
            return Err(format!(
                "{what}: at {:?}: mean {gm} var {gv} std {gs}, want {mean} {var} (tol {tol_m:e}, {tol_v:e})",
                (p, r, col)
            )
            .into());
        }
    }
    if let Some(k) = m.iter().chain(&v).chain(&sd).position(|x| x.f().is_nan()) {
        return Err(format!("{what}: output {k} is NaN (unwritten?)").into());
    }
    Ok(())
}

/// Box shapes: (planes, height, width).
const BOX_SHAPES: [(usize, usize, usize); 8] = [
    (1, 1, 1),
    (1, 1, 23),
    (1, 19, 1),
    (1, 13, 17),
    (2, 7, 11),
    (1, 67, 1031),
    (1, 8192, 3),
    // Wider than one fused column block of every type (u8: 2048), rows of whole vectors.
    (1, 6, 4160),
];

/// (40, 1100) is wider than the fused kernel takes; (7, 200) spreads its halo over two columns
/// per thread; (15, 15) is the benchmark's box; (6, 128) nearly fills the warp-prefix halo, with
/// an even width (anchor right of centre).
const BOX_WINDOWS: [(usize, usize); 9] = [
    (1, 1),
    (3, 3),
    (5, 5),
    (1, 9),
    (9, 1),
    (15, 15),
    (6, 128),
    (7, 200),
    (40, 1100),
];

/// Where a box test checks the oracle: every position of the `planes × h × w` stack when that
/// costs at most 3·10⁶ window samples, else the positions `always` lists plus 1500 random ones
/// drawn from `seed`.
fn box_picks(
    (planes, h, w): (usize, usize, usize),
    window: (usize, usize),
    seed: u64,
    always: impl FnOnce() -> Vec<(usize, usize, usize)>,
) -> Vec<(usize, usize, usize)> {
    let len = planes * h * w;
    if len * window.0 * window.1 <= 3_000_000 {
        return (0..len).map(|k| (k / (h * w), k / w % h, k % w)).collect();
    }
    let mut g = rng(seed);
    let mut p = always();
    p.extend((0..1500).map(|_| (g.random_range(0..planes), g.random_range(0..h), g.random_range(0..w))));
    p
}

/// The CPU oracle's window sums at `picks` of the plane stack `host` (planes of `h × w`).
fn box_wants<T: In>(
    host: &[T],
    (h, w): (usize, usize),
    window: (usize, usize),
    border: Border,
    picks: Vec<(usize, usize, usize)>,
) -> Vec<((usize, usize, usize), WindowRef)> {
    picks
        .into_iter()
        .map(|(p, r, c)| {
            (
                (p, r, c),
                cpu::box_oracle(&host[p * h * w..][..h * w], w, window, border, (r, c)),
            )
        })
        .collect()
}

/// A box input uploaded once: `planes` planes of `size` on the device and their host copy.
struct BoxInput<'a, T> {
    gpu: &'a Gpu,
    x: DeviceArray<T, IxDyn>,
    host: &'a [T],
    planes: usize,
    size: (usize, usize),
}

impl<'a, T: In> BoxInput<'a, T> {
    fn upload(gpu: &'a Gpu, host: &'a [T], planes: usize, size: (usize, usize)) -> Result<Self, Failed> {
        let shape = IxDyn(&[planes, size.0, size.1]);
        let x = DeviceArray::upload(gpu, &ArrayD::from_shape_vec(shape, host.to_vec()).expect("shape"))?;
        Ok(BoxInput {
            gpu,
            x,
            host,
            planes,
            size,
        })
    }

    /// The case of one window, border and variant on this input.
    fn case<'c>(
        &'c self,
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
        want: &'c [((usize, usize, usize), WindowRef)],
    ) -> BoxCase<'c, T> {
        BoxCase {
            gpu: self.gpu,
            x: &self.x,
            host: self.host,
            planes: self.planes,
            size: self.size,
            window,
            border,
            variant,
            want,
        }
    }
}

fn box_trial<T: In>(gpu: &Gpu, border: Border, (planes, h, w): (usize, usize, usize), seed: u64) -> Result<(), Failed> {
    let host = T::random(planes * h * w, seed);
    let input = BoxInput::upload(gpu, &host, planes, (h, w))?;
    for window in BOX_WINDOWS {
        let budget = window.0 * window.1;
        let picks = box_picks((planes, h, w), window, seed ^ budget as u64, || {
            (0..h.min(3))
                .flat_map(|r| (0..w.min(64)).map(move |c| (0, r, c)))
                .collect()
        });
        let want = box_wants(&host, (h, w), window, border, picks);
        for variant in BOX_VARIANTS {
            T::each_box(&input.case(window, border, variant, &want))?;
        }
    }
    Ok(())
}

/// The stream-rows box where `Auto` runs it — planes of at least 16 columns, a multiple of 4, so
/// warps load words directly in the interior and through the border maps at the plane's edges
/// (widths that cut a warp's 256 columns, a plane of exactly 16) — at every window width it
/// compiles (1–17), heights from 1 to taller than the plane, against the CPU oracle.
fn stream_rows_every_width(gpu: &Gpu, border: Border) -> Result<(), Failed> {
    let shapes = [(2, 37, 300), (1, 21, 1024), (1, 6, 16), (1, 9, 532)];
    for (si, (planes, h, w)) in shapes.into_iter().enumerate() {
        let host = u8::random(planes * h * w, 700 + si as u64);
        let input = BoxInput::upload(gpu, &host, planes, (h, w))?;
        for win_w in 1..=17 {
            for win_h in [1, 4, 15, h + 3] {
                let window = (win_h, win_w);
                let plan = BoxPlan::<u8, f32>::new(gpu, (planes, h, w), window, border, BoxVariant::Auto)?;
                if plan.variant() != BoxVariant::StreamRows {
                    return Err(format!("Auto runs {} for {window:?} on {w} columns", plan.variant().name()).into());
                }
                let picks = box_picks((planes, h, w), window, si as u64 * 100 + win_w as u64, || {
                    (0..h)
                        .flat_map(|r| {
                            (0..8)
                                .chain(w - 8..w)
                                .chain(248..264)
                                .map(move |c| (0, r, c.min(w - 1)))
                        })
                        .collect()
                });
                let want = box_wants(&host, (h, w), window, border, picks);
                let case = input.case(window, border, BoxVariant::StreamRows, &want);
                box_pair::<u8, Float<f32>>(&case)?;
                box_sum_only::<u8, Float<f32>>(&case)?;
                box_moments::<u8, f32>(&case)?;
            }
        }
    }
    Ok(())
}

/// The stream-rows word kernel given an input one byte past an aligned address: the plan
/// launches the gathering kernel instead, with the same results as from the aligned input.
fn stream_rows_unaligned(gpu: &Gpu) -> Result<(), Failed> {
    use cudarc::driver::DevicePtr;
    let (h, w) = (37, 532);
    let host = u8::random(h * w, 811);
    let stream = gpu.stream();
    let err = |e: cudarc::driver::DriverError| Failed::from(e.to_string());
    for window in [(7, 15), (15, 3)] {
        let mut plan = BoxPlan::<u8, f32>::new(gpu, (1, h, w), window, Border::Reflect, BoxVariant::Auto)?;
        if plan.variant() != BoxVariant::StreamRows {
            return Err(format!("Auto runs {} on {w} columns", plan.variant().name()).into());
        }
        let mut outs = Vec::new();
        for offset in [0u64, 1] {
            let buf = stream.alloc_zeros::<u8>(h * w + 1).map_err(err)?;
            let (ptr, _sync) = buf.device_ptr(stream);
            // SAFETY: h · w bytes from `offset` lie in `buf`; the alias is leaked before `buf` drops.
            let mut x = unsafe { stream.upgrade_device_ptr::<u8>(ptr + offset, h * w) };
            stream.memcpy_htod(&host, &mut x).map_err(err)?;
            let mut mean = stream.alloc_zeros::<f32>(h * w).map_err(err)?;
            let mut var = stream.alloc_zeros::<f32>(h * w).map_err(err)?;
            gpu.poison(&mut mean)?;
            gpu.poison(&mut var)?;
            plan.enqueue(gpu, &x, &mut mean, &mut var)?;
            outs.push((
                stream.clone_dtoh(&mean).map_err(err)?,
                stream.clone_dtoh(&var).map_err(err)?,
            ));
            x.leak();
        }
        if outs[0] != outs[1] || outs[0].0.iter().chain(&outs[0].1).any(|v| !v.is_finite()) {
            return Err(format!("{window:?}: the unaligned input's results differ from the aligned one's").into());
        }
    }
    Ok(())
}

/// Host views in every layout give what the device array gives: a transposed 2D view, a strided
/// slice, a 3-D batch (rows and boxes).
fn layouts<T: In>(gpu: &Gpu) -> Result<(), Failed>
where
    f64: WindowFloat<T>,
{
    let base = Array2::from_shape_vec((23, 40), T::random(23 * 40, 91)).expect("shape");
    let views = [
        (
            "transposed",
            base.t().as_standard_layout().into_owned(),
            base.t().into_dyn(),
        ),
        (
            "strided",
            base.slice(s![.., ..;3]).to_owned(),
            base.slice(s![.., ..;3]).into_dyn(),
        ),
    ];
    for (name, owned, view) in views {
        let owned = owned.into_dyn();
        for border in [Border::Reflect, Border::Constant(3.0)] {
            let (s, q): (ArrayD<f64>, ArrayD<f64>) = gpu.window_sum_sumsq(&view, 5, border)?;
            let d = DeviceArray::upload(gpu, &owned)?;
            let (ds, dq): (DeviceArray<f64, IxDyn>, DeviceArray<f64, IxDyn>) = gpu.window_sum_sumsq(&d, 5, border)?;
            if s != ds.download(gpu)? || q != dq.download(gpu)? {
                return Err(format!("{name} {border:?}: host view and device array disagree (rows)").into());
            }
            let (m, v): (ArrayD<f64>, ArrayD<f64>) = gpu.local_mean_variance(&view, (3, 5), border)?;
            let (dm, dv): (DeviceArray<f64, IxDyn>, DeviceArray<f64, IxDyn>) =
                gpu.local_mean_variance(&d, (3, 5), border)?;
            if m != dm.download(gpu)? || v != dv.download(gpu)? {
                return Err(format!("{name} {border:?}: host view and device array disagree (boxes)").into());
            }
            let plane = owned.as_slice().expect("C order");
            let width = owned.shape()[1];
            for (r, c) in [(0, 0), (owned.shape()[0] - 1, width - 1), (2, 1)] {
                let want = cpu::row_oracle(&plane[r * width..][..width], 5, border, c);
                if (s[[r, c]] - want.sum).abs() > 1e-9 * want.abs.max(1.0) {
                    return Err(format!("{name}: row sum at ({r}, {c}) {} vs {}", s[[r, c]], want.sum).into());
                }
            }
        }
    }
    // A 3-D batch: each plane boxed on its own.
    let batch = Array3::from_shape_vec((3, 9, 14), T::random(3 * 9 * 14, 92)).expect("shape");
    let (m, _): (Array3<f64>, Array3<f64>) = gpu.local_mean_variance(&batch, (3, 3), Border::Wrap)?;
    for p in 0..3 {
        let plane = batch.slice(s![p, .., ..]).to_owned();
        let (mp, _): (Array2<f64>, Array2<f64>) = gpu.local_mean_variance(&plane, (3, 3), Border::Wrap)?;
        if m.slice(s![p, .., ..]) != mp {
            return Err(format!("plane {p} of the batch differs from the plane alone").into());
        }
    }
    Ok(())
}

/// scipy's uniform_filter outputs (f64 inputs), on every box variant and output kind.
fn scipy_on_gpu(gpu: &Gpu) -> Result<(), Failed> {
    for c in scipy_boxes() {
        let x = Array2::from_shape_vec(c.shape, c.x.clone()).expect("shape");
        let n = c.window.0 * c.window.1;
        for variant in [BoxVariant::Separable, BoxVariant::Auto] {
            let s: Array2<f64> = gpu.box_sum_with(&x, c.window, c.border, variant)?;
            let (m, _): (Array2<f64>, Array2<f64>) = gpu.local_mean_variance_with(&x, c.window, c.border, variant)?;
            for (k, (&got, &want)) in s.iter().zip(&c.y).enumerate() {
                if !scipy_box_match(got, want, n)
                    || (m.as_slice().expect("C")[k] - want).abs() > 1e-12 * want.abs().max(1.0)
                {
                    return Err(format!(
                        "{:?} {:?} {:?} {}: at {k}: {got} vs scipy {want}",
                        c.border,
                        c.shape,
                        c.window,
                        variant.name()
                    )
                    .into());
                }
            }
            // Integer inputs (the fused path), where the constant rounds to an integer as well.
            if !matches!(c.border, Border::Constant(_)) {
                let xi = x.mapv(|v| v as i32);
                let si: Array2<i64> = gpu.box_sum_exact_with(&xi, c.window, c.border, BoxVariant::Fused)?;
                for (k, (&got, &want)) in si.iter().zip(&c.y).enumerate() {
                    if !scipy_box_match(got as f64, want, n) {
                        return Err(format!(
                            "i32 fused {:?} {:?} {:?}: at {k}: {got} vs scipy {want}",
                            c.border, c.shape, c.window
                        )
                        .into());
                    }
                }
            }
        }
    }
    Ok(())
}

/// Wide windows on long f32 rows: the running sums (restarting every w samples) stay within the
/// direct sum's bound, on data with a large offset (where a subtracting running sum drifts).
fn float_drift(gpu: &Gpu) -> Result<(), Failed> {
    let n = 1 << 20;
    let mut r = rng(5);
    let x: Vec<f32> = (0..n).map(|_| 1.0e6 + r.random_range(-1.0f32..1.0)).collect();
    let a = Array1::from(x.clone());
    for width in [1001, 4097, 65537] {
        for variant in [WindowVariant::RunningSum, WindowVariant::Auto] {
            let (s, q): (Array1<f32>, Array1<f32>) = gpu.window_sum_sumsq_with(&a, width, Border::Reflect, variant)?;
            let (s64, _): (Array1<f64>, Array1<f64>) =
                gpu.window_sum_sumsq_with(&a, width, Border::Reflect, variant)?;
            // Both ends and 300 random positions (each oracle output costs `width` terms).
            let mut g = rng(width as u64);
            let picks = (0..40).chain(n - 40..n).chain((0..300).map(|_| g.random_range(0..n)));
            for i in picks {
                let w = cpu::row_oracle(&x, width, Border::Reflect, i);
                let u32_ = 1.0 / (1u64 << 24) as f64;
                let f64u = 1.0 / (1u64 << 53) as f64;
                let tol = |v: f64, scale: f64, u: f64| 2.0 * u * v.abs() + (width as f64 + 1.0) * f64u * scale;
                if (s[i] as f64 - w.sum).abs() > tol(w.sum, w.abs, u32_)
                    || (q[i] as f64 - w.sumsq).abs() > tol(w.sumsq, w.abs_sq, u32_)
                    || (s64[i] - w.sum).abs() > tol(w.sum, w.abs, f64u)
                {
                    return Err(format!(
                        "width {width} {} at {i}: {} / {} vs {w:?}",
                        variant.name(),
                        s[i],
                        s64[i]
                    )
                    .into());
                }
            }
        }
    }
    Ok(())
}

/// A NaN (and infinities) only reach the windows that contain them, on every row variant and the
/// separable box; elsewhere the outputs are finite and right.
fn non_finite_locality(gpu: &Gpu) -> Result<(), Failed> {
    let n = 20_000;
    let mut x = vec![1.5f32; n];
    x[5000] = f32::NAN;
    x[12_000] = f32::INFINITY;
    x[12_003] = f32::NEG_INFINITY;
    let a = Array1::from(x.clone());
    // Van Herk (301, 16, 2) and the narrow kernel's groups (3, 4, 15).
    for width in [301, 16, 15, 4, 3, 2] {
        for variant in ROW_VARIANTS {
            let (s, _): (Array1<f32>, Array1<f32>) = match gpu.window_sum_sumsq_with(&a, width, Border::Zero, variant) {
                Err(Error::WindowTooLarge { .. }) if variant == WindowVariant::StagedWindow => continue,
                r => r?,
            };
            for i in 0..n {
                let w = cpu::row_oracle(&x, width, Border::Zero, i);
                let ok = if w.sum.is_finite() {
                    (s[i] as f64 - w.sum).abs() <= 1e-3
                } else {
                    same(s[i] as f64, w.sum)
                };
                if !ok {
                    return Err(format!("{} width {width} at {i}: {} vs {}", variant.name(), s[i], w.sum).into());
                }
            }
        }
    }
    let img = Array2::from_shape_fn((40, 50), |(r, c)| if (r, c) == (20, 25) { f64::NAN } else { 2.0 });
    let (m, v): (Array2<f64>, Array2<f64>) = gpu.local_mean_variance(&img, (5, 7), Border::Reflect)?;
    for ((r, c), &mv) in m.indexed_iter() {
        let inside = r.abs_diff(20) <= 2 && c.abs_diff(25) <= 3;
        if inside != mv.is_nan() || inside != v[[r, c]].is_nan() || (!inside && (mv != 2.0 || v[[r, c]] != 0.0)) {
            return Err(format!("box at ({r}, {c}): mean {mv}, variance {}", v[[r, c]]).into());
        }
    }
    Ok(())
}

/// Bad input: typed errors with the values; empty input gives empty output.
fn errors_and_empties(gpu: &Gpu) -> Result<(), Failed> {
    let x = Array2::<u8>::zeros((4, 5));
    let r: Result<(Array2<f32>, Array2<f32>), _> = gpu.window_sum_sumsq(&x, 0, Border::Zero);
    if !matches!(r, Err(Error::InvalidArgument { name: "width", .. })) {
        return Err(format!("width 0: {r:?}").into());
    }
    for window in [(0, 3), (3, 0)] {
        let r: Result<Array2<f32>, _> = gpu.box_sum(&x, window, Border::Zero);
        if !matches!(r, Err(Error::InvalidArgument { .. })) {
            return Err(format!("window {window:?}: {r:?}").into());
        }
    }
    let one_d = Array1::<u8>::zeros(9);
    let r: Result<(Array1<f32>, Array1<f32>), _> = gpu.local_mean_variance(&one_d, (3, 3), Border::Zero);
    if !matches!(r, Err(Error::InvalidArgument { name: "x", .. })) {
        return Err(format!("1-D box: {r:?}").into());
    }
    let zero_d = ndarray::arr0(1u8);
    let r: Result<(ndarray::Array0<f32>, ndarray::Array0<f32>), _> = gpu.window_sum_sumsq(&zero_d, 3, Border::Zero);
    if !matches!(r, Err(Error::InvalidArgument { .. })) {
        return Err(format!("0-d rows: {r:?}").into());
    }
    let xf = Array2::<f32>::zeros((4, 5));
    let r: Result<Array2<f32>, _> = gpu.box_sum_with(&xf, (3, 3), Border::Zero, BoxVariant::Fused);
    if !matches!(r, Err(Error::Unsupported { variant: "fused", .. })) {
        return Err(format!("fused on f32: {r:?}").into());
    }
    let r: Result<(Array2<f32>, Array2<f32>), _> =
        gpu.window_sum_sumsq_with(&xf, 100_000, Border::Zero, WindowVariant::StagedWindow);
    if !matches!(r, Err(Error::WindowTooLarge { window: 100_000, .. })) {
        return Err(format!("staged window too large: {r:?}").into());
    }
    let r: Result<(Array2<u32>, Array2<u64>), _> = gpu.window_sum_sumsq_exact(&x, 20_000_000, Border::Zero);
    if !matches!(
        r,
        Err(Error::WindowTooLarge {
            window: 20_000_000,
            max: 16_843_009,
            ..
        })
    ) {
        return Err(format!("u8 sum past u32: {r:?}").into());
    }
    // Stream-rows keeps a warp's last h rows of window sums in shared memory (1 KB per row up to
    // 16 columns): taller windows are refused with the most rows that fit; Auto runs another
    // variant, correctly.
    let ring_rows = (gpu.props().shared_mem_per_block_optin as u64 / stream_box_ring_bytes(5, 1)) as usize;
    let tall = (ring_rows + 1, 5);
    let xt =
        Array2::from_shape_vec((ring_rows + 9, 64), u8::random((ring_rows + 9) * 64, 5)).map_err(|e| e.to_string())?;
    let r: Result<(Array2<f32>, Array2<f32>), _> =
        gpu.local_mean_variance_with(&xt, tall, Border::Reflect, BoxVariant::StreamRows);
    if !matches!(r, Err(Error::WindowTooLarge { window, max, .. }) if window == tall.0 && max == ring_rows) {
        return Err(format!("stream-rows ring past shared memory: {r:?}").into());
    }
    let (m, v): (Array2<f32>, Array2<f32>) = gpu.local_mean_variance(&xt, tall, Border::Reflect)?;
    let (mw, vw): (Array2<f32>, Array2<f32>) =
        gpu.local_mean_variance_with(&xt, tall, Border::Reflect, BoxVariant::Separable)?;
    let close =
        |a: &Array2<f32>, b: &Array2<f32>| a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-3 * y.abs().max(1.0));
    if !close(&m, &mw) || !close(&v, &vw) {
        return Err(format!("Auto on a {tall:?} box differs from the separable variant").into());
    }
    for shape in [(0, 5), (4, 0)] {
        let e = Array2::<i32>::zeros(shape);
        let (s, q): (Array2<i64>, Array2<u128>) = gpu.window_sum_sumsq_exact(&e, 3, Border::Wrap)?;
        let m: Array2<f32> = gpu.local_std(&e, (3, 3), Border::Wrap)?;
        if s.shape() != [shape.0, shape.1] || q.shape() != s.shape() || m.shape() != s.shape() {
            return Err(format!("empty {shape:?}: shapes {:?} {:?}", s.shape(), m.shape()).into());
        }
    }
    Ok(())
}

/// The running-sum plan API on poisoned buffers, and sizes that need several tiles per row and
/// several scan rounds (width past half a tile).
fn plans_and_rounds(gpu: &Gpu) -> Result<(), Failed> {
    use gpuprims::WindowPlan;
    for (n, width) in [(10_000, 3000), (5000, 9000), (70_001, 15)] {
        let x: Vec<i32> = i32::random(n, n as u64);
        let dx = gpu.stream().clone_htod(&x).map_err(|e| e.to_string())?;
        // SAFETY: poisoned before use.
        let mut s = unsafe { gpu.stream().alloc::<i64>(n) }.map_err(|e| e.to_string())?;
        let mut q = unsafe { gpu.stream().alloc::<u128>(n) }.map_err(|e| e.to_string())?;
        gpu.poison(&mut s)?;
        gpu.poison(&mut q)?;
        let plan = WindowPlan::<i32, i64, u128>::exact(gpu, (1, n), width, Border::Mirror, WindowVariant::RunningSum)?;
        plan.enqueue(gpu, &dx, &mut s, &mut q)?;
        let (s, q) = (
            gpu.stream().clone_dtoh(&s).map_err(|e| e.to_string())?,
            gpu.stream().clone_dtoh(&q).map_err(|e| e.to_string())?,
        );
        let want = cpu::window_sums(&x, n, width, Border::Mirror);
        for i in 0..n {
            if s[i] != want[i].s || q[i] != want[i].q.to_u128() {
                return Err(format!("n={n} w={width} at {i}: ({}, {}) vs {:?}", s[i], q[i], want[i]).into());
            }
        }
    }
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    let mut t = Vec::new();
    macro_rules! per_type {
        ($($ty:ty),*) => {$(
            for (bi, border) in Border::ALL.into_iter().enumerate() {
                for (si, shape) in ROW_SHAPES.iter().enumerate() {
                    let name = format!("gpu::window::rows::{}::{}::{}", <$ty as In>::NAME, border.name(), shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x"));
                    let seed = 1000 + (bi * 16 + si) as u64;
                    t.push(gpu_trial(name, move |g| row_trial::<$ty>(g, border, shape, seed)));
                }
                for (si, &shape) in BOX_SHAPES.iter().enumerate() {
                    let name = format!("gpu::window::boxes::{}::{}::{}x{}x{}", <$ty as In>::NAME, border.name(), shape.0, shape.1, shape.2);
                    let seed = 5000 + (bi * 16 + si) as u64;
                    t.push(gpu_trial(name, move |g| box_trial::<$ty>(g, border, shape, seed)));
                }
            }
            t.push(gpu_trial(format!("gpu::window::{}::layouts", <$ty as In>::NAME), layouts::<$ty>));
        )*};
    }
    per_type!(u8, u16, i32, f32, f64);
    macro_rules! per_float {
        ($($ty:ty),*) => {$(
            for (bi, border) in Border::ALL.into_iter().enumerate() {
                let name = format!("gpu::window::rows::{}::narrow_widths::{}", <$ty as In>::NAME, border.name());
                let seed = 12_000 + bi as u64;
                t.push(gpu_trial(name, move |g| float_narrow_widths::<$ty>(g, border, seed)));
            }
        )*};
    }
    per_float!(f32, f64);
    for (ci, (ty, class, range)) in class_ranges().into_iter().enumerate() {
        for (bi, border) in Border::ALL.into_iter().enumerate() {
            for (si, shape) in ROW_SHAPES.iter().enumerate() {
                let dims = shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x");
                let name = format!("gpu::window::rows::{ty}_{class}::{}::{dims}", border.name());
                let seed = 9000 + (ci * 256 + bi * 16 + si) as u64;
                t.push(match ty {
                    "i32" => gpu_trial(name, move |g| row_trial_within::<i32>(g, border, shape, seed, range)),
                    _ => gpu_trial(name, move |g| row_trial_within::<u16>(g, border, shape, seed, range)),
                });
            }
        }
    }
    for border in Border::ALL {
        t.push(gpu_trial(
            format!("gpu::window::boxes::u8::stream_rows_every_width::{}", border.name()),
            move |g| stream_rows_every_width(g, border),
        ));
    }
    t.push(gpu_trial(
        "gpu::window::boxes::u8::stream_rows_unaligned_input".into(),
        stream_rows_unaligned,
    ));
    t.push(gpu_trial("gpu::window::scipy_uniform_filter".into(), scipy_on_gpu));
    t.push(gpu_trial(
        "gpu::window::float_running_sums_within_direct_bound".into(),
        float_drift,
    ));
    t.push(gpu_trial(
        "gpu::window::non_finite_values_stay_in_their_windows".into(),
        non_finite_locality,
    ));
    t.push(gpu_trial(
        "gpu::window::errors_and_empty_inputs".into(),
        errors_and_empties,
    ));
    t.push(gpu_trial(
        "gpu::window::running_sum_plans_tiles_and_rounds".into(),
        plans_and_rounds,
    ));
    t
}
