//! Window sums along any axis of an n-dimensional array, and what is built from them: scipy's
//! `uniform_filter1d` / `uniform_filter` (the mean, bit for bit), n-D box sums and sums of
//! squares (exact for integers) and the local mean and variance of n-D boxes.
//!
//! Every op here runs one pass per filtered axis (`kernels-gpu/src/axis.rs`): a thread per column
//! of the fastest axis walks down its line, so a pass along a slow axis reads and writes whole
//! warp rows without a transpose. Sizes follow scipy's convention, one per trailing axis
//! (see [`crate::ops::nd`]).
//!
//! # Errors
//! A size list longer than the array's dimensions, a zero size, an axis out of range:
//! [`Error::InvalidArgument`]. A side or window past 2^30, or a box whose exact sums could
//! overflow: [`Error::WindowTooLarge`] / [`Error::Unsupported`]. Empty arrays give empty results.

use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use ndarray::Dimension;

use crate::abi::FastDiv;
use crate::abi::axis::{
    AXIS_BLOCK, AXIS_MAX_SIDE, AxisArgs, MomentsArgs, ROWS_LINES, ROWS_MAX_WINDOW, rows_shared_bytes,
};
use crate::array::{DeviceArray, Operand};
use crate::border::Border;
use crate::error::{Error, Result};
use crate::family::Family;
use crate::gpu::Gpu;
use crate::kernels::{KernelId, Resolver};
use crate::ops::check_buffers;
use crate::shape::{axis_split, per_axis};

macro_rules! axis_table {
    ($($name:ident: $op:ident, $i:ty, $a:ty;)*) => {
        /// An axis kernel instance (op, input, accumulator), in contract order.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[doc(hidden)]
        pub enum AxisInstance { $($name),* }

        /// Every axis kernel's symbol, in `AxisInstance` order and [`Walker`] order.
        const AXIS_NAMES: [[&str; 3]; [$(stringify!($name)),*].len()] = [$([
            crate::axis_kernel_name!(lines, $op, $i, $a),
            crate::axis_kernel_name!(four, $op, $i, $a),
            crate::axis_kernel_name!(rows, $op, $i, $a),
        ]),*];
    };
}
crate::for_each_axis_instance!(axis_table);

macro_rules! axis_out_bytes {
    ($($name:ident: $op:ident, $i:ty, $a:ty;)*) => {
        impl AxisInstance {
            /// Bytes of the element the instance writes (a slot of the last-axis kernel's ring).
            fn out_bytes(self) -> usize {
                match self {
                    $(AxisInstance::$name => size_of::<crate::axis_out_type!($op, $i, $a)>()),*
                }
            }
        }
    };
}
crate::for_each_axis_instance!(axis_out_bytes);

macro_rules! moments_table {
    ($($name:ident: $s:ty, $q:ty, $f:ty, $float:literal;)*) => {
        /// A moments kernel instance (sums, squares, output), in contract order.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[doc(hidden)]
        pub enum MomentsInstance { $($name),* }

        /// Every moments kernel's symbol, in `MomentsInstance` order.
        const MOMENTS_NAMES: [&str; [$(stringify!($name)),*].len()] = [$(crate::axis_moments_name!($s, $q, $f)),*];
    };
}
crate::for_each_axis_moments!(moments_table);

// SAFETY: `repr(C)` plain data (`FastDiv`s, `u32`s, an `f64` at offset 48), the layout both sides
// compile.
unsafe impl DeviceRepr for AxisArgs {}
// SAFETY: as above (`u64`s and `f64`s).
unsafe impl DeviceRepr for MomentsArgs {}

/// The axis family's state on one `Gpu`: its kernels.
pub(crate) struct AxisKernels {
    /// Per instance: its kernel per [`Walker`].
    passes: Vec<[KernelId; 3]>,
    moments: [KernelId; MOMENTS_NAMES.len()],
}

impl Family for AxisKernels {
    fn load(k: &mut Resolver) -> Result<Self> {
        Ok(AxisKernels {
            passes: AXIS_NAMES.iter().map(|&names| k.all(names)).collect::<Result<_>>()?,
            moments: k.all(MOMENTS_NAMES)?,
        })
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// An element the axis ops take: `u8`, `u16`, `f32`, `f64`, with the accumulators of its exact
/// (integers) or f64 (floats) box sums.
pub trait AxisElement: sealed::Sealed + DeviceRepr + Copy + Default + Send + Sync + 'static {
    /// The sum of a box: `u32` for `u8`, `u64` for `u16`, `f64` for floats.
    type Sum: DeviceRepr + Copy + Default + Send + Sync + 'static;
    /// The sum of squares of a box: `u64` for integers, `f64` for floats.
    type SumSq: DeviceRepr + Copy + Default + Send + Sync + 'static;
    #[doc(hidden)]
    const MEAN: AxisInstance;
    /// First pass (sums, squares), later passes (sums, squares).
    #[doc(hidden)]
    const SUMS: [AxisInstance; 4];
    /// Largest box (samples) whose sums stay exact.
    #[doc(hidden)]
    const MAX_BOX: u64;
    /// `v` as the element (rounded to nearest and saturated for integers): the constant border.
    #[doc(hidden)]
    fn border_value(v: f64) -> f64;
    /// The moments kernels of the sums, into f32 and into f64.
    #[doc(hidden)]
    const MOMENTS: [MomentsInstance; 2];
}

macro_rules! axis_element {
    ($($t:ty: $sum:ty, $sq:ty, $mean:ident, [$s0:ident, $q0:ident, $s1:ident, $q1:ident], $max:expr, [$m32:ident, $m64:ident], $int:literal;)*) => {$(
        impl AxisElement for $t {
            type Sum = $sum;
            type SumSq = $sq;
            const MEAN: AxisInstance = AxisInstance::$mean;
            const SUMS: [AxisInstance; 4] =
                [AxisInstance::$s0, AxisInstance::$q0, AxisInstance::$s1, AxisInstance::$q1];
            const MAX_BOX: u64 = $max;
            fn border_value(v: f64) -> f64 {
                if $int { (v.round() as $t) as f64 } else { (v as $t) as f64 }
            }
            const MOMENTS: [MomentsInstance; 2] = [MomentsInstance::$m32, MomentsInstance::$m64];
        }
    )*};
}
axis_element! {
    u8: u32, u64, mean_u8, [sum_u8, sumsq_u8, sum_u32, sum_u64], (u32::MAX / 255) as u64,
        [moments_u32_u64_f32, moments_u32_u64_f64], true;
    u16: u64, u64, mean_u16, [sum_u16, sumsq_u16, sum_u64, sum_u64], u64::MAX / (65535 * 65535),
        [moments_u64_u64_f32, moments_u64_u64_f64], true;
    f32: f64, f64, mean_f32, [sum_f32, sumsq_f32, sum_f64, sum_f64], u64::MAX,
        [moments_f64_f64_f32, moments_f64_f64_f64], false;
    f64: f64, f64, mean_f64, [sum_f64, sumsq_f64, sum_f64, sum_f64], u64::MAX,
        [moments_f64_f64_f32, moments_f64_f64_f64], false;
}

/// A float the n-D local moments are written in (`f32`, `f64`).
pub trait MomentsFloat: DeviceRepr + Copy + Default + Send + Sync + 'static {
    #[doc(hidden)]
    const INDEX: usize;
}
impl MomentsFloat for f32 {
    const INDEX: usize = 0;
}
impl MomentsFloat for f64 {
    const INDEX: usize = 1;
}

/// Lines of threads an exact-sum pass aims for: a line shorter than the axis is cut into runs
/// until the launch has about this many threads (four waves of an H100).
const TARGET_THREADS: u64 = 1 << 20;
/// Shortest run of an exact-sum pass (its first window is summed directly).
const MIN_RUN: u64 = 64;

/// How an axis pass's threads walk the array (the kernel of [`AXIS_NAMES`] it launches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Walker {
    /// A thread per column (`outer · inner` lines), down a run of its line.
    Lines = 0,
    /// A thread per four neighbouring columns, one vector access per step: 1- and 2-byte
    /// samples, `inner` a multiple of 4 and both buffers aligned for it.
    Four = 1,
    /// The last axis (`inner = 1`) staged through a shared ring, a thread per line (windows up
    /// to `ROWS_MAX_WINDOW`).
    Rows = 2,
}

/// One pass along `axis` of an array of `shape`: what it computes and how the border extends it.
#[derive(Clone, Copy, Debug)]
struct Pass {
    instance: AxisInstance,
    axis: usize,
    size: usize,
    mode: u32,
    /// The constant outside the line, in the accumulator's terms.
    cval: f64,
    /// Whether a thread walks its whole line (the scipy mean's summation order).
    whole_lines: bool,
}

impl Gpu {
    /// Enqueues `pass` from `x` into `y`, both C-order arrays of `shape`.
    fn axis_pass<I: DeviceRepr, O: DeviceRepr>(
        &self,
        pass: Pass,
        shape: &[usize],
        x: &CudaSlice<I>,
        y: &mut CudaSlice<O>,
    ) -> Result<()> {
        let (outer, n, inner) = axis_split(shape, pass.axis)?;
        let total = outer * n * inner;
        check_buffers([("x", x.len(), total), ("y", y.len(), total)])?;
        if total == 0 {
            return Ok(());
        }
        for (what, v) in [("an axis pass's line", n), ("an axis pass's window", pass.size)] {
            if v as u64 > AXIS_MAX_SIDE {
                return Err(Error::WindowTooLarge {
                    window: v,
                    max: AXIS_MAX_SIDE as usize,
                    what,
                });
            }
        }
        if inner > u32::MAX as usize || outer > u32::MAX as usize {
            return Err(Error::Unsupported {
                variant: "axis pass",
                reason: format!("an array of shape {shape:?} has more than 2^32 lines"),
            });
        }
        // Along the last axis a thread's line is contiguous: stage it through shared memory.
        // Elsewhere, four columns per thread for 1- and 2-byte samples where their vector accesses
        // are aligned (measured on an H100: u8 7–11% faster than a column per thread; f32 1–5%
        // slower, so 4- and 8-byte samples keep a column per thread).
        let aligned = |p: u64, elem: usize| p.is_multiple_of((4 * elem).min(16) as u64);
        let (px, py) = (x.device_ptr(self.stream()).0, y.device_ptr(self.stream()).0);
        let walker = if inner == 1 && pass.size <= ROWS_MAX_WINDOW as usize {
            Walker::Rows
        } else if size_of::<I>() <= 2
            && inner.is_multiple_of(4)
            && aligned(px, size_of::<I>())
            && aligned(py, size_of::<O>())
        {
            Walker::Four
        } else {
            Walker::Lines
        };
        let lanes = if walker == Walker::Four { 4 } else { 1 };
        let lines = (outer * inner / lanes) as u64;
        let strip = if pass.whole_lines || walker == Walker::Rows {
            n as u64
        } else {
            let runs = TARGET_THREADS.div_ceil(lines).max(1);
            (n as u64)
                .div_ceil(runs)
                .max(MIN_RUN.max(pass.size as u64))
                .min(n as u64)
        };
        let threads = (n as u64).div_ceil(strip) * lines;
        let threads = u32::try_from(threads).map_err(|_| Error::Unsupported {
            variant: "axis pass",
            reason: format!("{threads} threads (lines × runs) exceed 2^32; split the array"),
        })?;
        let args = AxisArgs {
            inner: FastDiv::new((inner / lanes) as u32),
            outer: FastDiv::new(outer as u32),
            n: n as u32,
            size: pass.size as u32,
            before: (pass.size / 2) as u32,
            strip: strip as u32,
            threads,
            mode: pass.mode,
            cval: pass.cval,
        };
        let func = self.kernel(self.family::<AxisKernels>()?.passes[pass.instance as usize][walker as usize])?;
        let _order = self.order_after([x.stream(), y.stream()])?;
        let mut b = func.launch_on(self)?;
        b.arg(x).arg(y).arg(&args);
        let cfg = if walker == Walker::Rows {
            LaunchConfig {
                grid_dim: ((outer as u32).div_ceil(ROWS_LINES), 1, 1),
                block_dim: (ROWS_LINES, 1, 1),
                shared_mem_bytes: rows_shared_bytes(pass.instance.out_bytes()) as u32,
            }
        } else {
            LaunchConfig {
                grid_dim: (threads.div_ceil(AXIS_BLOCK), 1, 1),
                block_dim: (AXIS_BLOCK, 1, 1),
                shared_mem_bytes: 0,
            }
        };
        // SAFETY: every axis entry is `(x: *const I, y: *mut O, a: AxisArgs)` for the instance's
        // I and O (the callers pair instances with buffer types); both hold `outer · n · inner`
        // elements (checked above); the line kernels' grid covers `threads` threads and returns
        // for the rest (the four-column one only with `inner` a multiple of 4, `a.inner` counting
        // groups of four, and both pointers aligned for its vector accesses); the rows kernel
        // (inner = 1, size ≤ ROWS_MAX_WINDOW) gets a block per ROWS_LINES lines and the shared
        // memory `rows_shared_bytes` gives for its output element; all read only x and write only y.
        unsafe { b.launch(cfg) }?;
        Ok(())
    }

    /// Runs `first` from `x` into a fresh array, then each of `later` from the last result (two
    /// buffers taken in turn).
    fn axis_passes<I: DeviceRepr, O: DeviceRepr + Clone, D: Dimension>(
        &self,
        x: &CudaSlice<I>,
        dim: &D,
        first: Pass,
        later: &[Pass],
    ) -> Result<DeviceArray<O, D>> {
        let shape = dim.slice();
        let mut cur = DeviceArray::<O, D>::uninit(self, dim.clone())?;
        self.axis_pass(first, shape, x, cur.as_mut_slice())?;
        if later.is_empty() {
            return Ok(cur);
        }
        let mut next = DeviceArray::<O, D>::uninit(self, dim.clone())?;
        for &p in later {
            self.axis_pass(p, shape, cur.as_slice(), next.as_mut_slice())?;
            std::mem::swap(&mut cur, &mut next);
        }
        Ok(cur)
    }

    /// scipy's `uniform_filter1d(x, size, axis, mode, cval)`: the mean of the `size` samples
    /// centred (`size / 2` before) on each position along `axis`, bit for bit as scipy computes it
    /// (an f64 running sum walked along each whole line, divided by `size`, written in the input
    /// type — integers truncated toward zero). `Border::Constant(v)` is first rounded to the
    /// element type (scipy uses `v` as given).
    ///
    /// ```no_run
    /// # use gpuprims::{Gpu, Border};
    /// let gpu = Gpu::new()?;
    /// let vol = ndarray::Array3::<f32>::from_shape_fn((64, 128, 128), |(z, y, x)| (z + y + x) as f32);
    /// let smooth_z = gpu.uniform_filter1d(&vol, 5, 0, Border::Reflect)?;
    /// assert_eq!(smooth_z.shape(), vol.shape());
    /// # Ok::<(), gpuprims::Error>(())
    /// ```
    pub fn uniform_filter1d<T: AxisElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        size: usize,
        axis: usize,
        border: Border,
    ) -> Result<X::Output<T>> {
        let dim = x.dims();
        axis_split(dim.slice(), axis)?;
        self.uniform_filter_nd(x, &one_axis(dim.ndim(), axis, size), border)
    }

    /// scipy's `uniform_filter(x, size, mode, cval)` with a size per trailing axis (1 leaves an
    /// axis alone; a shorter list leaves the leading axes alone): [`Gpu::uniform_filter1d`] along
    /// each axis in order, each pass written in the input type, as scipy does. All sizes 1 give a
    /// copy of `x` (so does `uniform_filter1d` of size 1, where scipy's running sum can move a
    /// float in its last bit).
    pub fn uniform_filter_nd<T: AxisElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        sizes: &[usize],
        border: Border,
    ) -> Result<X::Output<T>> {
        let dim = x.dims();
        let sizes = checked_sizes(dim.slice(), sizes)?;
        let (mode, c) = border.device();
        let pass = |axis: usize, size: usize| Pass {
            instance: T::MEAN,
            axis,
            size,
            mode: mode as u32,
            cval: T::border_value(c),
            whole_lines: true,
        };
        let mut passes = filtered(&sizes).map(|(a, k)| pass(a, k));
        let y = match (x.device(self)?, passes.next()) {
            (Some(input), Some(first)) => self.axis_passes(input.slice(), &dim, first, &passes.collect::<Vec<_>>())?,
            (Some(input), None) => {
                // Every size is 1: the input itself (a size-1 running sum would drift in the
                // last bit for floats; scipy's uniform_filter skips such axes too).
                let mut y = DeviceArray::uninit(self, dim)?;
                let _order = self.order_after([input.slice().stream()])?;
                self.stream().memcpy_dtod(input.slice(), y.as_mut_slice())?;
                y
            }
            (None, _) => DeviceArray::uninit(self, dim)?,
        };
        X::finish(self, y)
    }

    /// Sums and sums of squares over boxes of `sizes` (one per trailing axis, centred as
    /// `uniform_filter` centres them; 1 leaves an axis alone), exact for integers (`u8 → (u32,
    /// u64)`, `u16 → (u64, u64)`) and in f64 for floats, under any border (a constant stands for
    /// the element-typed value at every position outside the array).
    ///
    /// ```no_run
    /// # use gpuprims::{Gpu, Border};
    /// let gpu = Gpu::new()?;
    /// let vol = ndarray::Array3::<u8>::from_elem((32, 64, 64), 3);
    /// let (s, q) = gpu.box_sum_sumsq_nd(&vol, &[3, 3, 3], Border::Replicate)?;
    /// assert!(s.iter().all(|&v| v == 81) && q.iter().all(|&v| v == 243));
    /// # Ok::<(), gpuprims::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn box_sum_sumsq_nd<T: AxisElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        sizes: &[usize],
        border: Border,
    ) -> Result<(X::Output<T::Sum>, X::Output<T::SumSq>)> {
        let (s, q) = self.box_sums_nd::<T, X::Dim>(&x, sizes, border)?;
        Ok((X::finish(self, s)?, X::finish(self, q)?))
    }

    /// The sums of [`Gpu::box_sum_sumsq_nd`] alone.
    pub fn box_sum_nd<T: AxisElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        sizes: &[usize],
        border: Border,
    ) -> Result<X::Output<T::Sum>> {
        let dim = x.dims();
        let sizes = checked_sizes(dim.slice(), sizes)?;
        check_box::<T>(&sizes)?;
        let passes = sum_passes::<T>(dim.slice(), &sizes, border, false);
        let y = match x.device(self)? {
            Some(input) => self.axis_passes(input.slice(), &dim, passes[0], &passes[1..])?,
            None => DeviceArray::uninit(self, dim)?,
        };
        X::finish(self, y)
    }

    /// Local mean and population variance over boxes of `sizes` (one per trailing axis) as
    /// floats `F`: from the exact sums of [`Gpu::box_sum_sumsq_nd`] (integers: the variance
    /// numerator `n·Σx² − (Σx)²` exact in 128 bits, the one rounding at the end; floats: f64 sums,
    /// `Σx²/n − mean²` clamped at 0).
    pub fn local_mean_variance_nd<F: MomentsFloat, T: AxisElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        sizes: &[usize],
        border: Border,
    ) -> Result<(X::Output<F>, X::Output<F>)> {
        let dim = x.dims();
        let (s, q) = self.box_sums_nd::<T, X::Dim>(&x, sizes, border)?;
        let mut mean = DeviceArray::<F, X::Dim>::uninit(self, dim.clone())?;
        let mut var = DeviceArray::<F, X::Dim>::uninit(self, dim.clone())?;
        let len = dim.size();
        if len > 0 {
            let samples: u64 = per_axis(dim.slice(), sizes, 1, "sizes")?
                .iter()
                .map(|&k| k as u64)
                .product();
            let args = MomentsArgs {
                len: len as u64,
                samples,
                inv_n: 1.0 / samples as f64,
                inv_n2: 1.0 / (samples as f64 * samples as f64),
            };
            let func = self.kernel(self.family::<AxisKernels>()?.moments[T::MOMENTS[F::INDEX] as usize])?;
            let mut b = func.launch_on(self)?;
            b.arg(s.as_slice())
                .arg(q.as_slice())
                .arg(mean.as_mut_slice())
                .arg(var.as_mut_slice())
                .arg(&args);
            let blocks =
                u32::try_from((len as u64).div_ceil(AXIS_BLOCK as u64)).map_err(|_| Error::TooManyElements {
                    op: "local_mean_variance_nd",
                    len,
                    max: u32::MAX as usize * AXIS_BLOCK as usize,
                })?;
            let cfg = LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (AXIS_BLOCK, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: `(s: *const S, q: *const Q, mean: *mut F, var: *mut F, a: MomentsArgs)` with
            // the element's sum types and F; all four hold `len` elements; one thread per element.
            unsafe { b.launch(cfg) }?;
        }
        Ok((X::finish(self, mean)?, X::finish(self, var)?))
    }

    /// The device sums and squares of n-D boxes.
    #[allow(clippy::type_complexity)]
    fn box_sums_nd<T: AxisElement, D: Dimension>(
        &self,
        x: &impl Operand<Elem = T, Dim = D>,
        sizes: &[usize],
        border: Border,
    ) -> Result<(DeviceArray<T::Sum, D>, DeviceArray<T::SumSq, D>)> {
        let dim = x.dims();
        let sizes = checked_sizes(dim.slice(), sizes)?;
        check_box::<T>(&sizes)?;
        let sums = sum_passes::<T>(dim.slice(), &sizes, border, false);
        let squares = sum_passes::<T>(dim.slice(), &sizes, border, true);
        match x.device(self)? {
            Some(input) => Ok((
                self.axis_passes(input.slice(), &dim, sums[0], &sums[1..])?,
                self.axis_passes(input.slice(), &dim, squares[0], &squares[1..])?,
            )),
            None => Ok((DeviceArray::uninit(self, dim.clone())?, DeviceArray::uninit(self, dim)?)),
        }
    }
}

/// Sizes for `ndim` axes: `size` along `axis`, 1 elsewhere.
fn one_axis(ndim: usize, axis: usize, size: usize) -> Vec<usize> {
    (0..ndim).map(|a| if a == axis { size } else { 1 }).collect()
}

/// One size per axis of `shape` (see [`per_axis`]); a zero size is [`Error::InvalidArgument`].
pub(crate) fn checked_sizes(shape: &[usize], sizes: &[usize]) -> Result<Vec<usize>> {
    if shape.is_empty() {
        return Err(Error::InvalidArgument {
            name: "x",
            reason: "a 0-dimensional array has no axis to filter".into(),
        });
    }
    if let Some(a) = sizes.iter().position(|&k| k == 0) {
        return Err(Error::InvalidArgument {
            name: "sizes",
            reason: format!("sizes {sizes:?}: entry {a} is 0, a window holds at least one sample"),
        });
    }
    per_axis(shape, sizes, 1, "sizes")
}

/// The axes a size list filters, with their sizes, in axis order.
pub(crate) fn filtered(sizes: &[usize]) -> impl Iterator<Item = (usize, usize)> + '_ {
    sizes.iter().copied().enumerate().filter(|&(_, k)| k > 1)
}

/// [`Error::WindowTooLarge`] when a box of `sizes` could overflow `T`'s exact sums.
fn check_box<T: AxisElement>(sizes: &[usize]) -> Result<()> {
    let samples = sizes.iter().try_fold(1u64, |p, &k| p.checked_mul(k as u64));
    match samples {
        Some(s) if s <= T::MAX_BOX => Ok(()),
        _ => Err(Error::WindowTooLarge {
            window: sizes.iter().product(),
            max: T::MAX_BOX.min(usize::MAX as u64) as usize,
            what: "exact box sums of this element type",
        }),
    }
}

/// The passes of n-D box sums (or sums of squares): the first from the input, later ones over
/// the sums. Under a constant border a position outside the array along an axis stands for the
/// constant summed over the box's extent along the axes already passed (`c · volume`, squared
/// terms `c² · volume`). A box of ones is one pass of size 1 along the last axis (a conversion).
fn sum_passes<T: AxisElement>(shape: &[usize], sizes: &[usize], border: Border, square: bool) -> Vec<Pass> {
    let (mode, c) = border.device();
    let c = T::border_value(c);
    let c = if square { c * c } else { c };
    let [s0, q0, s1, q1] = T::SUMS;
    let mut volume = 1.0;
    let mut passes: Vec<Pass> = Vec::new();
    for (axis, &k) in sizes.iter().enumerate() {
        if k > 1 {
            let instance = match (passes.is_empty(), square) {
                (true, false) => s0,
                (true, true) => q0,
                (false, false) => s1,
                (false, true) => q1,
            };
            passes.push(Pass {
                instance,
                axis,
                size: k,
                mode: mode as u32,
                cval: c * volume,
                whole_lines: false,
            });
        }
        volume *= k as f64;
    }
    if passes.is_empty() {
        passes.push(Pass {
            instance: if square { q0 } else { s0 },
            axis: shape.len() - 1,
            size: 1,
            mode: mode as u32,
            cval: c,
            whole_lines: false,
        });
    }
    passes
}
