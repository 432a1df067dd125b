//! GPU pooling trials: every variant (Auto included) × instance against the CPU oracle over
//! kernels {1×1, 2×2, 3×3, 3×2, 5×3, 7×7, 2×4, 1×16} × stride {kernel, 1, 2} × padding {0, k/2}
//! × dilation {1, 2} × ceil mode × planes {1×1, 5×7, 8×8, 25×25, 13×17, 6×32}, the batch shape
//! and layout rotating through (H, W), (1, 3, H, W), (2, 5, H, W) × contiguous, transposed view,
//! device array; values and argmax bit for bit, NaN and −∞ included; PyTorch's own outputs on the
//! GPU; the constant bank shared by pooling and 1D filters from several threads and handles;
//! texture plans reused across buffers; errors. Every output the ops allocate is poisoned first.

use std::fmt::Debug;

use cudarc::driver::DeviceRepr;
use gpuprims::cpu::pool as cpu;
use gpuprims::{
    AvgPool2d, AvgPoolElement, Border, Conv1dVariant, DeviceArray, Error, Gpu, Pool2d, PoolElement, PoolPlan,
    PoolShape, PoolVariant,
};
use libtest_mimic::{Failed, Trial};
use ndarray::{Array1, ArrayD, ArrayViewD, Axis, IxDyn};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::common::{gpu_trial, one_element_in, rng};
use crate::cpu_pool::{TorchOp, TorchResult, same, torch_cases};

const VARIANTS: [PoolVariant; 7] = [
    PoolVariant::Global,
    PoolVariant::ConstantInput,
    PoolVariant::Texture,
    PoolVariant::ReadOnly,
    PoolVariant::Vectorized,
    PoolVariant::SharedTile,
    PoolVariant::Auto,
];

/// An element type the trials generate and compare.
trait El: PoolElement + Copy + Debug + DeviceRepr {
    const FLOAT: bool;
    /// A random value: from a small set (`ties`: equal maxima everywhere) or the type's range.
    fn draw(r: &mut ChaCha8Rng, ties: bool) -> Self;
    fn f(self) -> f64;
    fn from_f64(v: f64) -> Self;
}

macro_rules! el_int {
    ($($t:ty),*) => {$(
        impl El for $t {
            const FLOAT: bool = false;
            fn draw(r: &mut ChaCha8Rng, ties: bool) -> $t {
                if ties { r.random_range(0..3) as $t } else { r.random::<$t>() }
            }
            fn f(self) -> f64 { self as f64 }
            fn from_f64(v: f64) -> $t { v as $t }
        }
    )*};
}
el_int!(u8, u16, i32);

macro_rules! el_float {
    ($($t:ty),*) => {$(
        impl El for $t {
            const FLOAT: bool = true;
            fn draw(r: &mut ChaCha8Rng, ties: bool) -> $t {
                if ties { r.random_range(0..3) as $t } else { r.random_range(-1.0..1.0) }
            }
            fn f(self) -> f64 { self as f64 }
            fn from_f64(v: f64) -> $t { v as $t }
        }
    )*};
}
el_float!(f32, f64);

/// How a case hands its input to the op.
#[derive(Clone, Copy, Debug)]
enum Layout {
    Contiguous,
    Transposed,
    Device,
}

/// The (batch shape, layout) rotation.
const ROTATION: [(&[usize], Layout); 6] = [
    (&[], Layout::Contiguous),
    (&[1, 3], Layout::Contiguous),
    (&[2, 5], Layout::Device),
    (&[], Layout::Transposed),
    (&[1, 3], Layout::Transposed),
    (&[2, 5], Layout::Contiguous),
];

/// A random input of shape `lead × (h, w)`, in `layout` (a transposed view holds the same
/// logical values), with NaN and −∞ sprinkled in when `specials`.
fn input<T: El>(lead: &[usize], (h, w): (usize, usize), seed: u64, ties: bool, specials: bool) -> ArrayD<T> {
    let mut r = rng(seed);
    let mut shape = lead.to_vec();
    shape.extend([h, w]);
    let mut x = ArrayD::from_shape_fn(IxDyn(&shape), |_| T::draw(&mut r, ties));
    if specials && T::FLOAT {
        for v in x.iter_mut() {
            match r.random_range(0..20) {
                0 => *v = T::from_f64(f64::NAN),
                1 => *v = T::from_f64(f64::NEG_INFINITY),
                _ => {}
            }
        }
    }
    x
}

/// The op's output for `x` given as `layout`: values and (max pooling) indices, on the host.
type Got<T> = gpuprims::Result<(ArrayD<T>, Option<ArrayD<i64>>)>;

/// Calls `f` with `x` as a host view in `layout`: `x` itself, or the same logical array as a
/// view of its swapped-axes copy (transposed strides).
fn host_view<T: Clone, R>(x: &ArrayD<T>, layout: Layout, f: impl FnOnce(ArrayViewD<'_, T>) -> R) -> R {
    let n = x.ndim();
    match layout {
        Layout::Transposed => {
            let mut t = x.view();
            t.swap_axes(n - 1, n - 2);
            let owned = t.as_standard_layout().into_owned();
            let mut back = owned.view();
            back.swap_axes(n - 1, n - 2);
            f(back)
        }
        _ => f(x.view()),
    }
}

fn run_max<T: El>(gpu: &Gpu, x: &ArrayD<T>, layout: Layout, p: Pool2d, v: PoolVariant, indices: bool) -> Got<T> {
    match layout {
        Layout::Device => {
            let d = DeviceArray::upload(gpu, x)?;
            if indices {
                let (y, i) = gpu.max_pool2d_indices_with(&d, p, v)?;
                Ok((y.download(gpu)?, Some(i.download(gpu)?)))
            } else {
                Ok((gpu.max_pool2d_with(&d, p, v)?.download(gpu)?, None))
            }
        }
        _ => host_view(x, layout, |view| {
            if indices {
                let (y, i) = gpu.max_pool2d_indices_with(&view, p, v)?;
                Ok((y, Some(i)))
            } else {
                Ok((gpu.max_pool2d_with(&view, p, v)?, None))
            }
        }),
    }
}

fn run_avg<T: El + AvgPoolElement>(gpu: &Gpu, x: &ArrayD<T>, layout: Layout, p: AvgPool2d, v: PoolVariant) -> Got<T> {
    match layout {
        Layout::Device => {
            let d = DeviceArray::upload(gpu, x)?;
            Ok((gpu.avg_pool2d_with(&d, p, v)?.download(gpu)?, None))
        }
        _ => host_view(x, layout, |view| Ok((gpu.avg_pool2d_with(&view, p, v)?, None))),
    }
}

/// Whether `got` is the error the variant owes for this input, when it cannot run it.
fn expected_refusal(v: PoolVariant, e: &Error) -> bool {
    matches!(
        (v, e),
        (PoolVariant::ConstantInput, Error::ConstantBankFull { .. })
            | (PoolVariant::Vectorized, Error::Unsupported { .. })
            | (PoolVariant::SharedTile, Error::Unsupported { .. })
    )
}

/// Judges one matrix case: both refuse invalid parameters, the variant refuses what it owes
/// refusing, or both ran and `check` compares them. Returns whether the GPU ran.
fn judge<A, B>(
    what: &str,
    v: PoolVariant,
    got: gpuprims::Result<A>,
    want: gpuprims::Result<B>,
    check: impl FnOnce(A, B) -> Result<(), Failed>,
) -> Result<bool, Failed> {
    match (got, want) {
        (Err(Error::InvalidArgument { .. }), Err(_)) => Ok(false),
        (Err(e), Ok(_)) if expected_refusal(v, &e) => Ok(false),
        (Ok(g), Ok(w)) => check(g, w).map(|_| true),
        (got, want) => Err(format!("{what}: got {:?}, oracle {:?}", got.err(), want.err()).into()),
    }
}

/// Fails when fewer than `min` cases ran, or `min_vectorized` for the vectorized kernel (it runs
/// only widths that divide a 16-byte vector over rows of whole vectors).
fn enough(ran: usize, v: PoolVariant, min: usize, min_vectorized: usize) -> Result<(), Failed> {
    let min = if v == PoolVariant::Vectorized {
        min_vectorized
    } else {
        min
    };
    if ran < min {
        return Err(format!("only {ran} cases ran").into());
    }
    Ok(())
}

/// Compares one GPU result with the oracle's (values bit for bit, NaN = NaN; indices exactly).
fn compare<T: El>(
    what: &str,
    got: &ArrayD<T>,
    want: &ArrayD<T>,
    gi: Option<&ArrayD<i64>>,
    wi: Option<&ArrayD<i64>>,
) -> Result<(), Failed> {
    if got.shape() != want.shape() {
        return Err(format!("{what}: shape {:?}, expected {:?}", got.shape(), want.shape()).into());
    }
    for (k, (a, b)) in got.iter().zip(want.iter()).enumerate() {
        if !same(a.f(), b.f()) || (a.f() == 0.0 && a.f().is_sign_negative() != b.f().is_sign_negative()) {
            return Err(format!("{what}: output {k} is {a:?}, expected {b:?}").into());
        }
    }
    if let (Some(gi), Some(wi)) = (gi, wi)
        && let Some(k) = gi.iter().zip(wi.iter()).position(|(a, b)| a != b)
    {
        return Err(format!(
            "{what}: index {k} is {}, expected {}",
            gi.as_slice().unwrap()[k],
            wi.as_slice().unwrap()[k]
        )
        .into());
    }
    Ok(())
}

/// The kernels, plus (2, 4) and (1, 16): the vectorized kernel's 4- and 16-lane windows.
/// (5, 3): the 3-wide kernels' windows of more rows than one pass loads.
const KERNELS: [(usize, usize); 8] = [(1, 1), (2, 2), (3, 3), (3, 2), (5, 3), (7, 7), (2, 4), (1, 16)];
const PLANES: [(usize, usize); 6] = [(1, 1), (5, 7), (8, 8), (25, 25), (13, 17), (6, 32)];

/// Every window geometry of the matrix (`dilated`: max pooling's dilation 2 too).
fn geometries(dilated: bool) -> Vec<Pool2d> {
    let mut out = Vec::new();
    for k in KERNELS {
        for s in [k, (1, 1), (2, 2)] {
            for pad in [(0, 0), (k.0 / 2, k.1 / 2)] {
                for d in if dilated { &[(1, 1), (2, 2)][..] } else { &[(1, 1)][..] } {
                    for ceil in [false, true] {
                        out.push(Pool2d::new(k).stride(s).padding(pad).dilation(*d).ceil_mode(ceil));
                    }
                }
            }
        }
    }
    out
}

fn max_matrix<T: El>(gpu: &Gpu, v: PoolVariant) -> Result<(), Failed> {
    let mut case = 0u64;
    let mut ran = 0;
    for p in geometries(true) {
        for plane in PLANES {
            case += 1;
            let (lead, layout) = ROTATION[case as usize % ROTATION.len()];
            let x = input::<T>(lead, plane, case, case.is_multiple_of(3), case % 3 == 1);
            let what = format!("{v:?} {} {p:?} {:?} {layout:?}", std::any::type_name::<T>(), x.shape());
            let indices = case.is_multiple_of(2);
            let got = run_max(gpu, &x, layout, p, v, indices);
            ran += judge(&what, v, got, cpu::max_pool2d(&x, &p), |(y, i), (wy, wi)| {
                compare(&what, &y, &wy, i.as_ref(), indices.then_some(&wi))
            })? as usize;
        }
    }
    enough(ran, v, 100, 20)
}

fn avg_matrix<T: El + AvgPoolElement>(gpu: &Gpu, v: PoolVariant) -> Result<(), Failed> {
    let mut case = 0u64;
    let mut ran = 0;
    for g in geometries(false) {
        for plane in PLANES {
            for (cip, div) in [(true, None), (false, None), (true, Some(-3))] {
                case += 1;
                let p = AvgPool2d::new(g.kernel)
                    .stride(g.stride)
                    .padding(g.padding)
                    .ceil_mode(g.ceil_mode)
                    .count_include_pad(cip)
                    .divisor_override(div);
                let (lead, layout) = ROTATION[case as usize % ROTATION.len()];
                let x = input::<T>(lead, plane, case, case.is_multiple_of(3), false);
                let what = format!("{v:?} {} {p:?} {:?} {layout:?}", std::any::type_name::<T>(), x.shape());
                let got = run_avg(gpu, &x, layout, p, v);
                ran += judge(&what, v, got, cpu::avg_pool2d(&x, &p), |(y, _), wy| {
                    compare(&what, &y, &wy, None, None)
                })? as usize;
            }
        }
    }
    enough(ran, v, 100, 20)
}

/// PyTorch's own outputs (tests/data/torch_pool.txt) through one variant: f64 and f32 planes,
/// and the integer planes as i32 for max pooling.
fn torch_on_gpu(gpu: &Gpu, v: PoolVariant) -> Result<(), Failed> {
    let mut ran = 0;
    for (n, case) in torch_cases().iter().enumerate() {
        let Ok(want) = &case.result else { continue };
        let what = format!("fixture case {n} {v:?}");
        ran += if case.f32 {
            torch_case::<f32>(gpu, case, want, v, &what)?
        } else {
            torch_case::<f64>(gpu, case, want, v, &what)?
        } as usize;
        let integral = case.x.iter().all(|a| a.is_finite() && a.fract() == 0.0);
        if let (TorchOp::Max(p), false, true) = (&case.op, case.f32, integral) {
            let got = run_max(gpu, &fixture_plane::<i32>(case), Layout::Contiguous, *p, v, true);
            torch_match(got, want, v, &format!("{what} i32"))?;
        }
    }
    enough(ran, v, 1000, 50)
}

/// A fixture case's plane as a (1, 1, H, W) array of `T`.
fn fixture_plane<T: El>(case: &crate::cpu_pool::TorchCase) -> ArrayD<T> {
    let shape = IxDyn(&[1, 1, case.shape.0, case.shape.1]);
    ArrayD::from_shape_vec(shape, case.x.iter().map(|&a| T::from_f64(a)).collect()).expect("shape")
}

/// Runs one fixture case in `T` through `v`; whether it ran.
fn torch_case<T: El + AvgPoolElement>(
    gpu: &Gpu,
    case: &crate::cpu_pool::TorchCase,
    want: &TorchResult,
    v: PoolVariant,
    what: &str,
) -> Result<bool, Failed> {
    let x = fixture_plane::<T>(case);
    let got = match &case.op {
        TorchOp::Max(p) => run_max(gpu, &x, Layout::Contiguous, *p, v, true),
        TorchOp::Avg(p) => run_avg(gpu, &x, Layout::Contiguous, *p, v),
    };
    torch_match(got, want, v, what)
}

/// Checks a GPU result against PyTorch's (a window without a sample in the plane is the type's
/// lowest value: PyTorch's −∞ for floats, `MIN` for integers); whether the variant ran.
fn torch_match<T: El>(got: Got<T>, want: &TorchResult, v: PoolVariant, what: &str) -> Result<bool, Failed> {
    let (y, i) = match got {
        Err(e) if expected_refusal(v, &e) => return Ok(false),
        Err(e) => return Err(format!("{what}: {e}").into()),
        Ok(r) => r,
    };
    let y: Vec<f64> = y.iter().map(|a| a.f()).collect();
    let want_y = want
        .y
        .iter()
        .map(|&w| if w == f64::NEG_INFINITY { T::LOWEST.f() } else { w });
    if y.len() != want.y.len() || y.iter().zip(want_y).any(|(&a, b)| !same(a, b)) {
        return Err(format!("{what}: {y:?}, PyTorch {:?}", want.y).into());
    }
    if let Some(i) = i
        && i.iter().copied().collect::<Vec<_>>() != want.idx
    {
        return Err(format!("{what}: indices {i:?}, PyTorch {:?}", want.idx).into());
    }
    Ok(true)
}

/// Pooling through the constant bank and 1D filters with constant taps, interleaved from several
/// threads on one `Gpu` and on a second handle: each result checked against a variant that does
/// not use the bank.
fn constant_bank_shared(gpu: &Gpu) -> Result<(), Failed> {
    let second = Gpu::new()?;
    let plane = input::<f32>(&[3, 4], (24, 24), 7, false, false); // 27,648 bytes: fits the bank
    let other = input::<f32>(&[5, 5], (25, 25), 8, false, true); // 62,500 bytes
    let signal = Array1::from_iter((0..4099).map(|i| ((i * 37) % 101) as f64 - 50.0));
    let taps: Vec<f64> = (0..31).map(|k| (k as f64 - 15.0) / 7.0).collect();
    let p = Pool2d::new((2, 2)).ceil_mode(true);
    let want_a = gpu.max_pool2d_with(&plane, p, PoolVariant::Global)?;
    let want_b = gpu.max_pool2d_with(&other, p, PoolVariant::Global)?;
    let want_f = gpu.conv1d_with(&signal, &taps, Border::Reflect, Conv1dVariant::GlobalTaps)?;
    let pool = |g: &Gpu, x: &ArrayD<f32>, want: &ArrayD<f32>| -> Result<(), String> {
        for _ in 0..200 {
            let y = g
                .max_pool2d_with(x, p, PoolVariant::ConstantInput)
                .map_err(|e| e.to_string())?;
            if y.iter().zip(want.iter()).any(|(a, b)| !same(*a as f64, *b as f64)) {
                return Err("pooling through the shared constant bank went wrong".into());
            }
        }
        Ok(())
    };
    let filter = |g: &Gpu| -> Result<(), String> {
        for _ in 0..200 {
            let y = g
                .conv1d_with(&signal, &taps, Border::Reflect, Conv1dVariant::ConstantTaps)
                .map_err(|e| e.to_string())?;
            if y.iter()
                .zip(want_f.iter())
                .any(|(a, b)| (a - b).abs() > 1e-9 * b.abs().max(1.0))
            {
                return Err("a 1D filter through the shared constant bank went wrong".into());
            }
        }
        Ok(())
    };
    std::thread::scope(|s| -> Result<(), Failed> {
        let jobs = [
            s.spawn(|| pool(gpu, &plane, &want_a)),
            s.spawn(|| pool(gpu, &other, &want_b)),
            s.spawn(|| filter(gpu)),
            s.spawn(|| pool(&second, &plane, &want_a)),
            s.spawn(|| filter(&second)),
        ];
        for j in jobs {
            j.join().map_err(|_| "a thread panicked")??;
        }
        Ok(())
    })
}

/// A texture plan over one buffer, then another, then the first again; and released in between.
fn texture_plan_reuse(gpu: &Gpu) -> Result<(), Failed> {
    let shape = PoolShape::max(6, 33, 40, Pool2d::new((3, 3)).stride((2, 2)).padding((1, 1)));
    let plan = PoolPlan::<f32>::max(gpu, shape, PoolVariant::Texture)?;
    let (oh, ow) = plan.output_size();
    let xs: Vec<ArrayD<f32>> = (0..2)
        .map(|s| input::<f32>(&[6], (33, 40), 40 + s, false, true))
        .collect();
    let dev: Vec<DeviceArray<f32, IxDyn>> = xs
        .iter()
        .map(|x| DeviceArray::upload(gpu, x))
        .collect::<Result<_, _>>()?;
    for (round, k) in [0, 1, 0, 1].into_iter().enumerate() {
        if round == 2 {
            plan.release_texture();
        }
        let mut y = DeviceArray::<f32, IxDyn>::uninit(gpu, IxDyn(&[6, oh, ow]))?;
        let mut i = DeviceArray::<i64, IxDyn>::uninit(gpu, IxDyn(&[6, oh, ow]))?;
        gpu.poison(y.as_mut_slice())?;
        plan.enqueue(gpu, dev[k].as_slice(), y.as_mut_slice(), Some(i.as_mut_slice()))?;
        let (wy, wi) = cpu::max_pool2d(&xs[k], &shape.window)?;
        compare(
            "texture reuse",
            &y.download(gpu)?,
            &wy,
            Some(&i.download(gpu)?),
            Some(&wi),
        )?;
    }
    Ok(())
}

fn errors_and_empty(gpu: &Gpu) -> Result<(), Failed> {
    let big = ArrayD::<f32>::zeros(IxDyn(&[5, 5, 32, 32])); // 102,400 bytes
    match gpu.max_pool2d_with(&big, Pool2d::new((2, 2)), PoolVariant::ConstantInput) {
        Err(Error::ConstantBankFull {
            bytes: 102_400,
            max: 65_536,
            ..
        }) => {}
        other => return Err(format!("constant input of 100 KiB: {:?}", other.err()).into()),
    }
    match gpu.max_pool2d_with(&big, Pool2d::new((3, 3)), PoolVariant::Vectorized) {
        Err(Error::Unsupported {
            variant: "vectorized", ..
        }) => {}
        other => return Err(format!("vectorized 3×3/1: {:?}", other.err()).into()),
    }
    match gpu.max_pool2d(&Array1::<f32>::zeros(8), Pool2d::new((2, 2))) {
        Err(Error::InvalidArgument { name: "x", .. }) => {}
        other => return Err(format!("1-D input: {:?}", other.err()).into()),
    }
    match gpu.avg_pool2d(&big, AvgPool2d::new((2, 2)).padding((2, 0))) {
        Err(Error::InvalidArgument { name: "padding", .. }) => {}
        other => return Err(format!("padding above half the kernel: {:?}", other.err()).into()),
    }
    for v in VARIANTS {
        let empty = ArrayD::<u8>::zeros(IxDyn(&[0, 3, 9, 8]));
        let y = gpu.max_pool2d_with(&empty, Pool2d::new((2, 2)).ceil_mode(true), v)?;
        if y.shape() != [0, 3, 5, 4] {
            return Err(format!("{v:?} on an empty batch: shape {:?}", y.shape()).into());
        }
        let e = ArrayD::<f64>::zeros(IxDyn(&[2, 0, 4, 4]));
        if gpu.avg_pool2d_with(&e, AvgPool2d::new((2, 2)), v)?.shape() != [2, 0, 2, 2] {
            return Err(format!("{v:?}: empty average").into());
        }
    }
    // An empty plane is an output size below 1, as in PyTorch.
    let flat = ArrayD::<f32>::zeros(IxDyn(&[2, 0, 5]));
    match gpu.max_pool2d(&flat, Pool2d::new((1, 1))) {
        Err(Error::InvalidArgument {
            name: "output size", ..
        }) => Ok(()),
        other => Err(format!("a 0 × 5 plane: {:?}", other.err()).into()),
    }
}

/// The shared tile over planes of several tiles (128-column tiles past 256 outputs a row, row
/// tiles, rows of whole 16-byte vectors or not) and from an input that is not 16-byte aligned
/// (the plan's vector loads turn to element loads), and the vectorized rung's 3-wide kernel
/// where it fits (stride 2, rows of whole vectors, rows dilated or not): values and argmax
/// against the oracle, outputs poisoned first; `Auto` takes the vectorized rung where it fits,
/// else the tile.
fn shared_tile_planes(gpu: &Gpu) -> Result<(), Failed> {
    fn err(e: cudarc::driver::DriverError) -> Failed {
        Failed::from(e.to_string())
    }
    fn check<T: El + cudarc::driver::ValidAsZeroBits>(
        gpu: &Gpu,
        planes: usize,
        (h, w): (usize, usize),
        p: Pool2d,
        seed: u64,
    ) -> Result<(), Failed> {
        let x = input::<T>(&[planes], (h, w), seed, seed.is_multiple_of(2), true);
        let (wy, wi) = cpu::max_pool2d(&x, &p)?;
        let what = format!("shared tile {} {p:?} {planes}×{h}×{w}", std::any::type_name::<T>());
        let shape = PoolShape::max(planes, h, w, p);
        let vectorized = PoolPlan::<T>::max(gpu, shape, PoolVariant::Vectorized).ok();
        let want = match vectorized {
            Some(_) => PoolVariant::Vectorized,
            None => PoolVariant::SharedTile,
        };
        if PoolPlan::<T>::max(gpu, shape, PoolVariant::Auto)?.variant() != want {
            return Err(format!("{what}: Auto does not take {want:?}").into());
        }
        let plans = [
            Some(PoolPlan::<T>::max(gpu, shape, PoolVariant::SharedTile)?),
            vectorized,
        ];
        let xs = x.as_slice().expect("contiguous");
        let n = xs.len();
        let out = wy.len();
        let stream = gpu.stream();
        // The vectorized rung refuses an unaligned input (its error is checked elsewhere).
        for (plan, aligned) in plans
            .iter()
            .flatten()
            .flat_map(|p| [(p, true), (p, false)])
            .filter(|(p, aligned)| *aligned || p.variant() == PoolVariant::SharedTile)
        {
            let mut xbuf = stream.alloc_zeros::<T>(n + 1).map_err(err)?;
            let mut ybuf = stream.alloc_zeros::<T>(out + 1).map_err(err)?;
            let mut ibuf = stream.alloc_zeros::<i64>(out + 1).map_err(err)?;
            gpu.poison(&mut ybuf)?;
            gpu.poison(&mut ibuf)?;
            let (got, idx) = if aligned {
                stream.memcpy_htod(xs, &mut xbuf.slice_mut(..n)).map_err(err)?;
                plan.enqueue(gpu, &xbuf, &mut ybuf, Some(&mut ibuf))?;
                (
                    stream.clone_dtoh(&ybuf).map_err(err)?,
                    stream.clone_dtoh(&ibuf).map_err(err)?,
                )
            } else {
                stream.memcpy_htod(xs, &mut xbuf.slice_mut(1..)).map_err(err)?;
                let x1 = one_element_in(gpu, &xbuf, n);
                let mut y1 = one_element_in(gpu, &ybuf, out);
                let mut i1 = one_element_in(gpu, &ibuf, out);
                plan.enqueue(gpu, &x1, &mut y1, Some(&mut i1))?;
                let got = (
                    stream.clone_dtoh(&y1).map_err(err)?,
                    stream.clone_dtoh(&i1).map_err(err)?,
                );
                x1.leak();
                y1.leak();
                i1.leak();
                got
            };
            let got = ArrayD::from_shape_vec(wy.raw_dim(), got[..out].to_vec()).expect("shape");
            let idx = ArrayD::from_shape_vec(wi.raw_dim(), idx[..out].to_vec()).expect("shape");
            let what = format!("{what} {:?} aligned {aligned}", plan.variant());
            compare(&what, &got, &wy, Some(&idx), Some(&wi))?;
        }
        Ok(())
    }
    let windows = [
        Pool2d::new((3, 3)).stride((2, 2)).padding((1, 1)),
        Pool2d::new((3, 3)).stride((2, 2)).ceil_mode(true),
        Pool2d::new((3, 2)).stride((2, 2)).padding((1, 1)).ceil_mode(true),
        Pool2d::new((3, 3)).padding((1, 1)),
        Pool2d::new((5, 5)).stride((3, 2)).padding((2, 2)).ceil_mode(true),
        Pool2d::new((3, 3)).stride((2, 2)).dilation((2, 3)),
        // Dilated rows only: the 3-wide kernel steps its window rows by the dilation.
        Pool2d::new((3, 3)).stride((2, 2)).padding((1, 1)).dilation((2, 1)),
        Pool2d::new((5, 3))
            .stride((2, 2))
            .padding((2, 1))
            .dilation((3, 1))
            .ceil_mode(true),
    ];
    for (k, p) in windows.into_iter().enumerate() {
        let seed = 900 + k as u64;
        for plane in [(300, 517), (61, 640), (37, 1030), (20, 224)] {
            check::<f32>(gpu, 2, plane, p, seed)?;
            check::<u8>(gpu, 2, plane, p, seed)?;
        }
        check::<f64>(gpu, 3, (45, 258), p, seed)?;
        check::<u16>(gpu, 3, (45, 258), p, seed)?;
    }
    Ok(())
}

/// Indexing of a batch by the last two axes only: pooling each plane alone equals pooling the stack.
fn batch_is_planewise(gpu: &Gpu) -> Result<(), Failed> {
    let x = input::<u16>(&[3, 2], (17, 24), 99, false, false);
    let p = Pool2d::new((2, 3)).stride((2, 3)).ceil_mode(true);
    let whole = gpu.max_pool2d(&x, p)?;
    for a in 0..3 {
        for b in 0..2 {
            let plane = x.index_axis(Axis(0), a).index_axis(Axis(0), b).to_owned();
            let alone = gpu.max_pool2d(&plane, p)?;
            if whole.index_axis(Axis(0), a).index_axis(Axis(0), b) != alone.view().into_dyn() {
                return Err(format!("plane ({a}, {b}) differs").into());
            }
        }
    }
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    let mut t = Vec::new();
    for v in VARIANTS {
        let name = v.name();
        t.push(gpu_trial(format!("gpu_pool::{name}::max_u8"), move |g| {
            max_matrix::<u8>(g, v)
        }));
        t.push(gpu_trial(format!("gpu_pool::{name}::max_u16"), move |g| {
            max_matrix::<u16>(g, v)
        }));
        t.push(gpu_trial(format!("gpu_pool::{name}::max_i32"), move |g| {
            max_matrix::<i32>(g, v)
        }));
        t.push(gpu_trial(format!("gpu_pool::{name}::max_f32"), move |g| {
            max_matrix::<f32>(g, v)
        }));
        t.push(gpu_trial(format!("gpu_pool::{name}::max_f64"), move |g| {
            max_matrix::<f64>(g, v)
        }));
        t.push(gpu_trial(format!("gpu_pool::{name}::avg_f32"), move |g| {
            avg_matrix::<f32>(g, v)
        }));
        t.push(gpu_trial(format!("gpu_pool::{name}::avg_f64"), move |g| {
            avg_matrix::<f64>(g, v)
        }));
        t.push(gpu_trial(format!("gpu_pool::{name}::pytorch_fixture"), move |g| {
            torch_on_gpu(g, v)
        }));
    }
    t.push(gpu_trial(
        "gpu_pool::constant_bank_shared_with_filters".into(),
        constant_bank_shared,
    ));
    t.push(gpu_trial("gpu_pool::texture_plan_reuse".into(), texture_plan_reuse));
    t.push(gpu_trial("gpu_pool::errors_and_empty_batches".into(), errors_and_empty));
    t.push(gpu_trial("gpu_pool::batch_is_planewise".into(), batch_is_planewise));
    t.push(gpu_trial(
        "gpu_pool::shared_tile::planes_of_several_tiles".into(),
        shared_tile_planes,
    ));
    t
}
