//! Sliding-window statistics: window sums and sums of squares along the last axis, box sums over
//! the last two axes, and the local mean, variance and standard deviation built on them, through
//! the ladder of `kernels-gpu/src/window.rs`.
//!
//! # Semantics
//! For a window of `w` samples anchored at `w / 2` (scipy's centring: output `i` covers
//! `[i − w/2, i − w/2 + w)`), on rows extended by the [`Border`]:
//!
//! | gpuprims | value at `i` | scipy.ndimage equivalent |
//! |---|---|---|
//! | [`Gpu::window_sum_sumsq`] | `(Σ x̃, Σ x̃²)` over the window | `w · uniform_filter1d(x, w)`, and of `x²` |
//! | [`Gpu::box_sum`] / [`Gpu::box_sum_sumsq`] | the same over an `h × w` box of the last two axes | `h·w · uniform_filter(x, (h, w))` |
//! | [`Gpu::local_mean_variance`] | mean and population variance of the box | `uniform_filter(x)`, `uniform_filter(x²) − uniform_filter(x)²` |
//! | [`Gpu::local_std`] | `√variance` | |
//!
//! A 2D position outside the plane in either axis reads the border's value (each axis mapped
//! independently for the other modes), so the box equals scipy's separable `uniform_filter` times
//! `h·w`. Windows larger than the signal are valid (the border defines them). Leading axes are a
//! batch: a `(frames, H, W)` stack gets one box per frame. The classic tutorial's "interior only"
//! output of an image padded by hand is a slice of the full result:
//! `full.slice(s![.., r..n - r])` with `r = w / 2`, computed on the unpadded image with
//! `Border::Zero` (or on the padded one, then sliced).
//!
//! # Output types
//! Image outputs are floats `F` chosen by the caller ([`WindowFloat`]: `window_sum_sumsq::<f32, _>`,
//! or the binding's annotation); the `_exact` ops return integer inputs' sums exactly
//! ([`ExactElement`]). Sums are exact in the kernels and rounded once on output (the
//! accumulate-in-global rungs, as the tutorial, accumulate in the output type itself):
//!
//! | input | `_exact` sums `(Σx, Σx²)` | float outputs `F` | mean / variance / std |
//! |---|---|---|---|
//! | u8  | `(u32, u64)` (windows ≤ 16,843,009 samples) | f32, f64 | f32, f64 |
//! | u16 | `(u64, u64)` | f32, f64 | f32, f64 |
//! | i32 | `(i64, u128)` (windows ≤ 2^32 samples) | f32, f64 | f32, f64 |
//! | f32 | — (accumulated in f64) | f32, f64 | f32, f64 |
//! | f64 | — | f64 | f64 |
//!
//! ```no_run
//! use gpuprims::{Border, Gpu};
//! use ndarray::{Array2, s};
//!
//! let gpu = Gpu::new()?;
//! let img = Array2::from_shape_fn((480, 640), |(y, x)| ((x * 7 + y * 13) % 256) as u8);
//! // The tutorial's row statistics as f32 images, and exactly:
//! let (sum, sumsq) = gpu.window_sum_sumsq::<f32, _>(&img, 15, Border::Zero)?;
//! let (exact, exact_sq) = gpu.window_sum_sumsq_exact(&img, 15, Border::Zero)?; // u32, u64
//! // Local statistics of 15 × 15 boxes:
//! let (mean, var) = gpu.local_mean_variance::<f32, _>(&img, (15, 15), Border::Reflect)?;
//! let interior = sum.slice(s![.., 7..640 - 7]);
//! # let _ = (sumsq, exact, exact_sq, mean, var, interior);
//! # Ok::<(), gpuprims::Error>(())
//! ```
//!
//! # Accuracy
//! Integer sums are exact (the running sums wrap, and a window's sum is their difference). Float
//! inputs accumulate in f64; every variant but the first two sums each window's terms in some
//! fixed order without subtracting (the running-sum rung restarts every `w` samples: van
//! Herk/Gil-Werman), so `|error| ≤ (w − 1)·2⁻⁵³·Σ|x|` before the one rounding to the output type,
//! and a NaN or infinity only affects the windows that contain it. The first two rungs accumulate
//! in the output type (f32 outputs: `(w − 1)·2⁻²⁴·Σ|x|`). Mean and variance multiply by `1/n` and
//! `1/n²` rounded once on the host: integers form `n·Σx² − (Σx)²` exactly and round it once, so
//! the mean is within 2 ulps and the variance within 3 ulps of f64 before the rounding to the
//! output type (u8 windows of at most 513 samples into f32 form both in f32 from the exact sums:
//! within 1 and 1.5 ulps of f32). Floats use `Σx²/n − mean²` in f64 (relative error about
//! `2⁻⁵³·mean²/variance`). Either is clamped at 0, so the variance is never negative.
//!
//! # Errors
//! Width or a window side of 0, or an input with too few dimensions: [`Error::InvalidArgument`].
//! Windows whose sums would not be exact in the accumulators, too large for the shared memory
//! of an explicitly chosen variant, or wider than the fused 2D variant takes (129; u8 boxes of at
//! most 66051 samples): [`Error::WindowTooLarge`] (`Auto` never picks a variant that cannot
//! run). The fused 2D variant on float input: [`Error::Unsupported`]. Empty input gives empty
//! results.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use ndarray::Dimension;

use crate::abi::border::BorderMode;
use crate::abi::reduce::W128;
use crate::abi::window::{
    BoxArgs, BoxKind, FUSED_BLOCK, FUSED_MAX_WIDTH, RowArgs, SLIDING_MAX_WIDTH, STREAM_BOX_ANY_NAMES,
    STREAM_BOX_MAX_WIDTH, STREAM_BOX_NAMES, STREAM_BOX_PACKED_MAX_WIDTH, STREAM_BOX_SPAN, STREAM_BOX_WARPS, Seg, Sums,
    WARP_BOX_MAX_WIDTH, WARP_BOX_SHARED, WARP_BOX_WARPS, WINDOW_BLOCK, WindowIn, WindowKernel, fused_layout,
    running_shared_bytes, running_tile, sliding_layout, sliding_outputs, stream_box_reads_words, stream_box_ring_bytes,
    warp_box_geometry,
};
use crate::array::{DeviceArray, Operand};
use crate::border::Border;
use crate::error::{Error, Result};
use crate::family::Family;
use crate::gpu::Gpu;
use crate::kernels::KernelId;
use crate::loader::Kernel;
use crate::ops::{planes_and_size, rows_and_len};

/// Which rung of the row-window ladder runs (see the table in `kernels-gpu/src/window.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum WindowVariant {
    /// 1 — the tutorial's first kernel: one output per thread, both sums read-modify-written in
    /// global memory for every sample of the window. Bottleneck: `2w` global round trips per
    /// output.
    GlobalAccumulate,
    /// 2 — the tutorial's second: one loop per sum, still in global memory. Bottleneck: as 1,
    /// one output stream at a time.
    SplitLoops,
    /// 3 — the tutorial's third: each thread stages its own window in shared memory and sums it
    /// in registers. Removes the read-modify-writes. Bottleneck: each sample is read from global
    /// memory `w` times (once per window), and the window must fit the thread's share of shared
    /// memory.
    StagedWindow,
    /// 4 — the block stages its 256 outputs' samples and halo in shared memory once (coalesced),
    /// threads sum from there in registers. Removes the `w` global reads. Bottleneck: `w` shared
    /// reads and adds per output.
    SharedTile,
    /// 5 — running sums: O(1) per output whatever the width. Integers with windows up to 1024
    /// samples: each thread slides a window sum over 16 bytes of input (add the entering sample,
    /// subtract the leaving one; exact in wrapping arithmetic) from a shared tile staged with
    /// 16-byte loads, and the block writes its outputs through a swizzled shared stage as whole
    /// 512-byte warp rows (u8 8192² at 94% of the copy bandwidth). Wider integer windows and
    /// floats: block scans (integers: the difference of two running sums; floats: van
    /// Herk/Gil-Werman, no subtraction).
    RunningSum,
    /// Running sums: the fastest rung at every width measured (docs/PERFORMANCE.md).
    #[default]
    Auto,
}

impl WindowVariant {
    /// The ladder, in order (without `Auto`).
    pub const ALL: [WindowVariant; 5] = [
        WindowVariant::GlobalAccumulate,
        WindowVariant::SplitLoops,
        WindowVariant::StagedWindow,
        WindowVariant::SharedTile,
        WindowVariant::RunningSum,
    ];

    /// Short name (tables, errors).
    pub const fn name(self) -> &'static str {
        match self {
            WindowVariant::GlobalAccumulate => "1-global-accumulate",
            WindowVariant::SplitLoops => "2-split-loops",
            WindowVariant::StagedWindow => "3-staged-window",
            WindowVariant::SharedTile => "4-shared-tile",
            WindowVariant::RunningSum => "5-running-sum",
            WindowVariant::Auto => "auto",
        }
    }

    const fn kernel(self) -> WindowKernel {
        match self {
            WindowVariant::GlobalAccumulate => WindowKernel::GlobalAccumulate,
            WindowVariant::SplitLoops => WindowKernel::SplitLoops,
            WindowVariant::StagedWindow => WindowKernel::StagedWindow,
            WindowVariant::SharedTile => WindowKernel::SharedTile,
            WindowVariant::RunningSum | WindowVariant::Auto => WindowKernel::RunningSum,
        }
    }
}

/// How a 2D box runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BoxVariant {
    /// Two passes: running sums along the rows into a device scratch of exact accumulators, then
    /// down the columns (integers: add the entering row sum, subtract the leaving one; floats:
    /// van Herk/Gil-Werman). O(1) per output for any box, any type. Bottleneck: the scratch
    /// round trip (8–32 bytes per pixel written and read again).
    Separable,
    /// One pass, integers only, windows up to 129 wide (any height): a block slides down a strip
    /// of rows keeping each column's vertical running sums in registers (`+ entering − leaving`
    /// row, exact), writes them to one shared row per output row and sums each output's `w`
    /// column sums from it, staging the outputs so they are written back coalesced. Reads the
    /// input once (the leaving row again from L2) and writes the outputs once. Bottleneck:
    /// latency — 12 warps per SM (168 registers, 68 KB of shared memory per 128-thread block for
    /// u8 → f32) and `w` shared loads per thread and row (docs/PERFORMANCE.md).
    Fused,
    /// One pass, u8 input, windows up to 129 wide (any height): each warp owns a column segment
    /// of a strip of rows (no block barrier), keeps its 16 columns' vertical running sums per lane
    /// in registers, turns each row of them into prefix sums along the segment (a shuffle scan)
    /// in shared memory, and forms every output as the difference of two prefix entries — two
    /// shared loads per output whatever the window — written coalesced straight from registers.
    /// Removes the fused variant's barriers, `w`-load window sums and output stages, so its time
    /// barely grows with the window; but at 16 warps per SM (128 registers) it is latency-bound
    /// and slower than `Fused` up to 31 columns (docs/PERFORMANCE.md).
    WarpPrefix,
    /// One pass, u8 input into f32 outputs, windows up to 17 wide and as tall as a warp's ring
    /// fits in shared memory (1 KB per row up to 16 columns, 2 KB at 17: 227 or 113 rows on the
    /// H100): each warp owns 256 columns of a strip of rows (no barrier); every row's window
    /// sums come from registers — the words either side of a lane's own by `shfl.idx`, the
    /// first window of each word by byte dot products (`dp4a`: four samples or their squares per
    /// instruction), the next three by sliding — and go into the warp's shared ring of its last
    /// `h` rows, from which the vertical running sums subtract them when the row leaves the
    /// window. Outputs leave as 16-byte stores, 512 contiguous bytes per warp store. One kernel
    /// per window width, so every byte position is a constant. Removes the fused variant's
    /// shared rows, barriers and `w` loads per output; bottleneck: waiting on the entering row's
    /// loads at 14 warps per SM (docs/PERFORMANCE.md).
    StreamRows,
    /// For integers: `StreamRows` for u8 → f32 windows up to 17 wide whose ring fits (images of
    /// at least 16 columns, a multiple of 4), `Fused` up to 64 columns wide, except u8 windows
    /// 32–129 wide, which run `WarpPrefix`; else `Separable` (the crossovers measured on the
    /// H100: docs/PERFORMANCE.md).
    #[default]
    Auto,
}

impl BoxVariant {
    /// Every variant (without `Auto`).
    pub const ALL: [BoxVariant; 4] = [
        BoxVariant::Separable,
        BoxVariant::Fused,
        BoxVariant::WarpPrefix,
        BoxVariant::StreamRows,
    ];

    /// Short name (tables, errors).
    pub const fn name(self) -> &'static str {
        match self {
            BoxVariant::Separable => "separable",
            BoxVariant::Fused => "fused",
            BoxVariant::WarpPrefix => "warp-prefix",
            BoxVariant::StreamRows => "stream-rows",
            BoxVariant::Auto => "auto",
        }
    }
}

macro_rules! window_table {
    ($($inst:ident => $t:ty, $s:ty, $q:ty, $fused:ident $(($slide:literal, $boxed:literal $(, $warp:literal)?))?, $blocks:literal;)*) => {
        /// One window kernel instance (input type × output types), in contract order.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum WindowInstance {
            $($inst),*
        }

        impl WindowInstance {
            /// Every instance, in contract order (`inst as usize` indexes this).
            pub const ALL: &'static [WindowInstance] = &[$(WindowInstance::$inst),*];

            /// The instance's kernel symbols, in `WindowKernel::ALL` order.
            pub const fn names(self) -> [&'static str; WindowKernel::ALL.len()] {
                match self {
                    $(WindowInstance::$inst => crate::window_kernel_names!($inst)),*
                }
            }

            /// Bytes of one sum and of one sum of squares the instance writes.
            pub const fn output_sizes(self) -> (usize, usize) {
                match self {
                    $(WindowInstance::$inst => (size_of::<$s>(), size_of::<$q>())),*
                }
            }

            /// The integer-only kernels' symbols: the sliding row kernel and the fused 2D box.
            pub const fn int_names(self) -> Option<[&'static str; 2]> {
                match self {
                    $(WindowInstance::$inst => window_table!(@fused $fused $inst)),*
                }
            }

            /// The warp-prefix 2D box's symbol (u8 instances).
            pub const fn warp_name(self) -> Option<&'static str> {
                match self {
                    $(WindowInstance::$inst => window_table!(@warp $inst $($(, $warp)?)?)),*
                }
            }
        }
    };
    (@fused fused $inst:ident) => { Some(crate::window_int_names!($inst)) };
    (@fused separable $inst:ident) => { None };
    (@warp $inst:ident, $warp:literal) => { Some(crate::window_kernel_name!($inst, "warp_box")) };
    (@warp $inst:ident) => { None };
}

crate::for_each_window_instance!(window_table);

// SAFETY: `repr(C)` plain data (integers and the element type); the layout is the contract both
// sides compile.
unsafe impl<T: WindowElement> DeviceRepr for RowArgs<T> {}
// SAFETY: as above.
unsafe impl<T: WindowElement> DeviceRepr for BoxArgs<T> {}

/// The window family's state on one `Gpu`: each instance's kernels, and the integer instances'
/// sliding and fused kernels.
pub(crate) struct WindowKernels {
    ids: Vec<[KernelId; WindowKernel::ALL.len()]>,
    int: Vec<Option<IntKernels>>,
    /// The stream-rows box (u8 → f32), indexed by window width − 1: the word kernels, then the
    /// gathering ones (any plane).
    stream: [Vec<KernelId>; 2],
}

struct IntKernels {
    sliding: KernelId,
    fused: KernelId,
    /// The warp-prefix box (u8 instances).
    warp: Option<KernelId>,
}

impl WindowKernels {
    /// The one-pass box kernel of `variant` (`Fused`, or for u8 `WarpPrefix` and `StreamRows`)
    /// for `instance` and a window `win_w` wide; `words`: the stream-rows kernel that reads whole
    /// words (`stream_box_reads_words`), else the one that gathers.
    fn one_pass(&self, instance: WindowInstance, variant: BoxVariant, win_w: u32, words: bool) -> Result<KernelId> {
        if variant == BoxVariant::StreamRows {
            return match (instance, self.stream[!words as usize].get(win_w as usize - 1)) {
                (WindowInstance::u8_f32, Some(&f)) => Ok(f),
                _ => Err(no_int_kernels(instance)),
            };
        }
        match (&self.int[instance as usize], variant) {
            (Some(IntKernels { warp: Some(warp), .. }), BoxVariant::WarpPrefix) => Ok(*warp),
            (Some(int), BoxVariant::Fused) => Ok(int.fused),
            _ => Err(no_int_kernels(instance)),
        }
    }
}

impl Family for WindowKernels {
    fn load(_: &Gpu) -> Result<Self> {
        let id = crate::kernels::required;
        let ids = crate::kernels::required_table(WindowInstance::ALL, WindowInstance::names)?;
        let int = WindowInstance::ALL
            .iter()
            .map(|i| {
                i.int_names()
                    .map(|[s, f]| -> Result<IntKernels> {
                        Ok(IntKernels {
                            sliding: id(s)?,
                            fused: id(f)?,
                            warp: i.warp_name().map(id).transpose()?,
                        })
                    })
                    .transpose()
            })
            .collect::<Result<Vec<_>>>()?;
        let list = crate::kernels::required_list;
        let stream = [list(&STREAM_BOX_NAMES)?, list(&STREAM_BOX_ANY_NAMES)?];
        Ok(WindowKernels { ids, int, stream })
    }

    fn kernel_names() -> Vec<&'static str> {
        WindowInstance::ALL
            .iter()
            .flat_map(|i| {
                i.names()
                    .into_iter()
                    .chain(i.int_names().into_iter().flatten())
                    .chain(i.warp_name())
            })
            .chain(STREAM_BOX_NAMES)
            .chain(STREAM_BOX_ANY_NAMES)
            .collect()
    }
}

/// An input element type of the window statistics (u8, u16, i32, f32, f64).
pub trait WindowElement: WindowIn<S: DeviceRepr, Q: DeviceRepr> + DeviceRepr + Send + Sync + 'static {
    /// The instance whose outputs are the exact accumulators (the separable row pass).
    #[doc(hidden)]
    const ACC_INSTANCE: WindowInstance;
    /// `v` in this type (the constant border's value: rounded, saturating for integers).
    #[doc(hidden)]
    fn from_f64(v: f64) -> Self;
}

macro_rules! window_element {
    ($($t:ty => $acc:ident),*) => {$(
        impl WindowElement for $t {
            const ACC_INSTANCE: WindowInstance = WindowInstance::$acc;
            fn from_f64(v: f64) -> $t {
                v as $t
            }
        }
    )*};
}
window_element!(u8 => u8_exact, u16 => u16_exact, i32 => i32_exact, f32 => f32_f64, f64 => f64_f64);

/// The float type `F` (f32, f64) an input of type `T` can be summarized in: image outputs of
/// the window sums and the local means, variances and deviations. Chosen by the caller
/// (`window_sum_sumsq::<f32, _>`, or the binding's annotation).
pub trait WindowFloat<T>: DeviceRepr + Clone {
    #[doc(hidden)]
    const INSTANCE: WindowInstance;
}

/// An integer input whose window sums the `_exact` ops return in integers: u8 (`u32`, `u64`),
/// u16 (`u64`, `u64`), i32 (`i64`, `u128`).
pub trait ExactElement: WindowElement {
    /// Type of an exact window sum.
    type Sum: DeviceRepr + Clone;
    /// Type of an exact window sum of squares.
    type SumSq: DeviceRepr + Clone;
}

macro_rules! float_outputs {
    ($($t:ty: $($f:ty => $inst:ident),+;)*) => {$($(
        impl WindowFloat<$t> for $f {
            const INSTANCE: WindowInstance = WindowInstance::$inst;
        }
    )+)*};
}
float_outputs! {
    u8: f32 => u8_f32, f64 => u8_f64;
    u16: f32 => u16_f32, f64 => u16_f64;
    i32: f32 => i32_f32, f64 => i32_f64;
    f32: f32 => f32_f32, f64 => f32_f64;
    f64: f64 => f64_f64;
}

macro_rules! exact_outputs {
    ($($t:ty: ($s:ty, $q:ty);)*) => {$(
        impl ExactElement for $t {
            type Sum = $s;
            type SumSq = $q;
        }
    )*};
}
exact_outputs! {
    u8: (u32, u64);
    u16: (u64, u64);
    i32: (i64, u128);
}

/// `(mode, cval)` of `border` for elements `T`.
fn border_of<T: WindowElement>(border: Border) -> (BorderMode, T) {
    let (mode, v) = border.device();
    (mode, T::from_f64(v))
}

fn check_side(name: &'static str, v: usize) -> Result<u32> {
    if v == 0 {
        return Err(Error::InvalidArgument {
            name,
            reason: "a window needs at least one sample along each axis".into(),
        });
    }
    u32::try_from(v).map_err(|_| Error::WindowTooLarge {
        window: v,
        max: u32::MAX as usize,
        what: "one side of a window",
    })
}

/// Checks that window sums of `samples` samples are exact in `T`'s accumulators.
fn check_exact<T: WindowIn>(samples: u64) -> Result<()> {
    if samples > T::MAX_WINDOW {
        return Err(Error::WindowTooLarge {
            window: samples as usize,
            max: T::MAX_WINDOW as usize,
            what: "sums exact in this element type's accumulators",
        });
    }
    Ok(())
}

fn launch_grid(blocks: u64, what: &'static str, len: usize) -> Result<u32> {
    u32::try_from(blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or(Error::TooManyElements {
            op: what,
            len,
            max: i32::MAX as usize,
        })
}

/// Planning never picks an integer-only kernel for a float instance; this is the error if it did.
fn no_int_kernels(instance: WindowInstance) -> Error {
    Error::Unsupported {
        variant: "running sums that subtract",
        reason: format!("{instance:?} has no integer-only kernels"),
    }
}

/// The kernel a row plan launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowKernel {
    /// One of every instance's kernels.
    Table(WindowKernel),
    /// The integer sliding kernel.
    Sliding,
}

/// A prepared row-window launch for `rows` rows of `n` samples: kernel, grid and arguments.
/// Reusable across inputs of that shape; [`WindowPlan`] is its typed public face.
pub(crate) struct RowPlan<T: WindowElement> {
    kernel: RowKernel,
    function: Arc<Kernel>,
    cfg: LaunchConfig,
    args: RowArgs<T>,
}

impl<T: WindowElement> RowPlan<T> {
    fn for_instance(
        gpu: &Gpu,
        instance: WindowInstance,
        rows: usize,
        n: usize,
        width: usize,
        border: Border,
        variant: WindowVariant,
    ) -> Result<Self> {
        if rows == 0 || n == 0 {
            return Err(Error::InvalidArgument {
                name: "shape",
                reason: format!("a plan needs at least one sample, got {rows} rows of {n}"),
            });
        }
        let w = check_side("width", width)?;
        check_exact::<T>(width as u64)?;
        let size = size_of::<T>();
        let optin = gpu.props().shared_mem_per_block_optin as usize;
        let table = variant.kernel();
        let sums = size_of::<Sums<T::S, T::Q>>();
        let span = WINDOW_BLOCK * sliding_outputs(size);
        let (sum_size, sumsq_size) = instance.output_sizes();
        let sliding_bytes = sliding_layout(span, width as u64, size, sums, sum_size, sumsq_size).bytes;
        let kernel = if table == WindowKernel::RunningSum
            && !T::FLOAT
            && width as u64 <= SLIDING_MAX_WIDTH
            && sliding_bytes <= optin
        {
            RowKernel::Sliding
        } else {
            RowKernel::Table(table)
        };
        let total = rows as u64 * n as u64;
        let block = WINDOW_BLOCK as u64;
        let too_large = |max: usize, what| Error::WindowTooLarge {
            window: width,
            max,
            what,
        };
        let (blocks, shared, tile) = match table {
            _ if kernel == RowKernel::Sliding => (rows as u64 * (n as u64).div_ceil(span as u64), sliding_bytes, 0),
            WindowKernel::StagedWindow => {
                let max = optin / (WINDOW_BLOCK as usize * size);
                if width > max {
                    return Err(too_large(
                        max,
                        "the staged-window variant (a window per thread in shared memory)",
                    ));
                }
                (total.div_ceil(block), WINDOW_BLOCK as usize * width * size, 0)
            }
            WindowKernel::SharedTile => {
                let max = optin / size + 1 - WINDOW_BLOCK as usize;
                if width > max {
                    return Err(too_large(
                        max,
                        "the shared-tile variant (tile and halo in shared memory)",
                    ));
                }
                let blocks = rows as u64 * (n as u64).div_ceil(block);
                (blocks, (WINDOW_BLOCK as usize + width - 1) * size, 0)
            }
            WindowKernel::RunningSum => {
                let geometry = running_tile(width as u64, T::CHUNK, T::FLOAT);
                // Balance each row over equal tiles (multiples of CHUNK) of at most max_outputs.
                let per_row = (n as u64).div_ceil(geometry.max_outputs as u64);
                let tile = (n as u64)
                    .div_ceil(per_row)
                    .next_multiple_of(T::CHUNK as u64)
                    .min(geometry.max_outputs as u64) as u32;
                let blocks = rows as u64 * (n as u64).div_ceil(tile as u64);
                let seg = size_of::<Seg<Sums<T::S, T::Q>>>();
                let shared = running_shared_bytes(geometry.slots, size_of::<T::S>(), size_of::<T::Q>(), seg, size);
                (blocks, shared, tile)
            }
            _ => (total.div_ceil(block), 0, 0),
        };
        let (mode, cval) = border_of::<T>(border);
        let args = RowArgs {
            n: n as u64,
            rows: rows as u64,
            width: w,
            anchor: w / 2,
            border: mode as u32,
            tile,
            cval,
        };
        let cfg = LaunchConfig {
            grid_dim: (launch_grid(blocks, "window_sum_sumsq", total as usize)?, 1, 1),
            block_dim: (WINDOW_BLOCK, 1, 1),
            shared_mem_bytes: shared as u32,
        };
        let kernels = gpu.family::<WindowKernels>()?;
        let id = match kernel {
            RowKernel::Table(k) => kernels.ids[instance as usize][k.index()],
            RowKernel::Sliding => match &kernels.int[instance as usize] {
                Some(int) => int.sliding,
                None => return Err(no_int_kernels(instance)),
            },
        };
        Ok(RowPlan {
            kernel,
            function: gpu.kernel(id)?.clone(),
            cfg,
            args,
        })
    }

    /// Blocks in the grid.
    fn grid(&self) -> u32 {
        self.cfg.grid_dim.0
    }

    /// The rung this plan runs.
    fn variant(&self) -> WindowVariant {
        match self.kernel {
            RowKernel::Table(k) => WindowVariant::ALL[k as usize],
            RowKernel::Sliding => WindowVariant::RunningSum,
        }
    }

    /// Launches into untyped outputs of the plan's instance (`sumsq = None`: the sum-only pass).
    fn launch<S: DeviceRepr, Q: DeviceRepr>(
        &self,
        gpu: &Gpu,
        x: &CudaSlice<T>,
        sum: &mut CudaSlice<S>,
        sumsq: Option<&mut CudaSlice<Q>>,
    ) -> Result<()> {
        let total = (self.args.rows * self.args.n) as usize;
        let short = |name, len: usize| Error::InvalidArgument {
            name,
            reason: format!("holds {len} elements, the plan is for {total}"),
        };
        if x.len() < total {
            return Err(short("x", x.len()));
        }
        if sum.len() < total {
            return Err(short("sum", sum.len()));
        }
        if let Some(q) = &sumsq
            && q.len() < total
        {
            return Err(short("sumsq", q.len()));
        }
        if let RowKernel::Table(k) = self.kernel
            && sumsq.is_none()
            && k != WindowKernel::RunningSum
        {
            return Err(Error::Unsupported {
                variant: "window row kernel",
                reason: "only the running-sum kernels may skip the sums of squares".into(),
            });
        }
        let _order = gpu.order_after(
            [x.stream(), sum.stream()]
                .into_iter()
                .chain(sumsq.as_ref().map(|q| q.stream())),
        )?;
        let null = 0u64;
        let mut launch = self.function.launch_on(gpu)?;
        launch.arg(x).arg(sum);
        match sumsq {
            Some(q) => launch.arg(q),
            None => launch.arg(&null),
        };
        launch.arg(&self.args);
        // SAFETY: the arguments match `(x: *const T, sum: *mut S, sumsq: *mut Q, a: RowArgs<T>)`
        // of every row kernel of the instance (a null sumsq only for the running sum, which then
        // skips it); the buffers hold rows · n elements (checked above); the grid and dynamic
        // shared memory come from the same geometry functions the kernel uses (`running_tile`,
        // `running_shared_bytes`, the tile and window sizes).
        unsafe { launch.launch(self.cfg) }?;
        Ok(())
    }
}

/// A prepared 2D box launch over `planes` planes of `height × width`: one kernel (fused) or two
/// (separable, with its device scratch). Reusable across inputs of that shape.
pub(crate) struct BoxPasses<T: WindowElement> {
    kind: BoxKind,
    variant: BoxVariant,
    args: BoxArgs<T>,
    cfg: LaunchConfig,
    /// The one-pass kernel, or the separable variant's column pass.
    function: Arc<Kernel>,
    /// The kernel an unaligned input takes instead of `function` (the stream-rows word kernel's
    /// gathering twin), loaded at its first use.
    unaligned: Option<KernelId>,
    /// Separable: the row pass and the scratch (row sums; floats also the suffix sums).
    rows: Option<(RowPlan<T>, Scratch<T>)>,
}

/// Device buffers of one accumulator pair per pixel.
struct AccBuffers<T: WindowIn> {
    s: CudaSlice<T::S>,
    q: CudaSlice<T::Q>,
}

/// The separable pass's scratch: the row sums, and for floats the column pass's suffix sums.
struct Scratch<T: WindowIn> {
    rows: AccBuffers<T>,
    suffix: Option<AccBuffers<T>>,
}

/// Output rows per thread of the integer column pass: enough that the `h` reads starting each
/// strip are amortized (`h + 2·strip` reads for `strip` outputs), at least 64.
fn column_strip(h: u32) -> u32 {
    (2 * h).max(64)
}

/// Why a one-pass variant (`Fused`, `WarpPrefix`) refuses a box it does not fit: the first of its
/// limits the box exceeds — the widest window (`(win_w, max)`), the window samples its exact sums
/// of squares allow (`(n, max)`), then 32-bit row arithmetic (`side`: the longest of the image
/// sides and the window height; also the answer when only shared memory is short).
fn one_pass_refusal(variant: BoxVariant, (win_w, max_w): (usize, usize), (n, max_n): (u64, u64), side: usize) -> Error {
    let (width, squares, sides) = match variant {
        BoxVariant::StreamRows => (
            "the stream-rows variant's reach of 8 columns either side of an output (window width)",
            "the stream-rows variant's u32 sums of squares (window samples)",
            "the stream-rows variant's 32-bit row arithmetic (image side or window height)",
        ),
        BoxVariant::WarpPrefix => (
            "the warp-prefix variant's halo inside a warp's 512 columns (window width)",
            "the warp-prefix variant's u32 sums of squares (window samples)",
            "the warp-prefix variant's 32-bit row arithmetic (image side or window height)",
        ),
        _ => (
            "the fused variant's halo of column sums (window width)",
            "the fused variant's running sums of squares (window samples)",
            "the fused variant's 32-bit row arithmetic (image side or window height)",
        ),
    };
    let (window, max, what) = if win_w > max_w {
        (win_w, max_w, width)
    } else if n > max_n {
        (n as usize, max_n as usize, squares)
    } else {
        (side, FUSED_MAX_SIDE - 1, sides)
    };
    Error::WindowTooLarge { window, max, what }
}

/// Output rows per block (fused) or warp (warp-prefix) for `columns` column blocks or segments
/// (all planes) of `height` rows: the strips that make the grid one wave of `wave` resident
/// blocks or warps, but no shorter than `min_h · h` rows (each strip first reads `h − 1` rows
/// before its first output) or 16.
fn one_pass_strip(columns: u64, height: u64, h: u32, min_h: u64, wave: u64) -> u32 {
    let strips = (wave / columns).max(1);
    let strip = height.div_ceil(strips).max(min_h * h as u64).max(16);
    strip.min(height).clamp(1, u32::MAX as u64) as u32
}

/// How a one-pass box variant sizes its strips of output rows.
#[derive(Clone, Copy)]
enum StripRule {
    /// One wave of resident tiles, strips no shorter than `min_h · h` rows ([`one_pass_strip`]).
    OneWave { min_h: u64 },
    /// Strips of this many rows, in as many waves as they take ([`stream_rows_strip`]).
    Rows(u32),
}

/// Output rows per stream-rows warp for windows `h` rows by `w` columns: `max(16, ⌈1.4 h⌉)`
/// (`max(16, 2h)` for the two-word rings past 16 columns), many waves of short strips rather
/// than one wave of long ones. Each strip first reads `h − 1` rows, but on the H100 the SMs ran
/// through one wave of equal strips at speeds up to 37% apart (ncu: SM active cycles 345 k to
/// 550 k of 559 k), so a fifth of the run had idle SMs; with short strips the block scheduler
/// hands the SMs that finish early more work, and the warps in flight write one narrow band of
/// the output. 15 × 15: 331 µs in one wave, 273 µs at 18 rows; the lengths were measured from 15
/// to 144 rows, and work stealing over long strips measured slower (docs/PERFORMANCE.md). Once
/// the edge warps stopped stalling on their border maps, 21 rows at 15 × 15 measured 0.3–0.5%
/// faster than 18 in three device calls (and 24 to 36 slower), hence 1.4 rather than 1.2.
fn stream_rows_strip(height: u64, h: u32, w: u32) -> u32 {
    let h = h as u64;
    let rows = if w <= STREAM_BOX_PACKED_MAX_WIDTH {
        (7 * h).div_ceil(5)
    } else {
        2 * h
    };
    rows.max(16).min(height).clamp(1, u32::MAX as u64) as u32
}

/// Warps per stream-rows block for rings of `ring` bytes per warp: of 4, 2 and 1 warps whose
/// rings fit the opt-in shared memory, the block that keeps the most warps resident per SM (ties:
/// the larger block). At 15 rows of 16 columns (15 KB per warp) blocks of 4 leave 12 warps per
/// H100 SM and blocks of 2 leave 14.
fn stream_box_warps(func: &CudaFunction, ring: usize, optin: usize) -> Result<u32> {
    let mut best = (0, 1);
    for warps in (0..3).map(|k| STREAM_BOX_WARPS >> k) {
        let shared = warps as usize * ring;
        if shared > optin {
            continue;
        }
        let resident = func.occupancy_max_active_blocks_per_multiprocessor(32 * warps, shared, None)? * warps;
        if resident > best.0 {
            best = (resident, warps);
        }
    }
    Ok(best.1)
}

/// The fused kernel works in 32-bit row and column arithmetic: sides and window height below
/// this.
const FUSED_MAX_SIDE: usize = 1 << 29;

/// `Auto` runs the warp-prefix box (u8) for windows wider than this, as wide as it takes
/// (`WARP_BOX_MAX_WIDTH`): measured on the H100 (u8 8192², docs/PERFORMANCE.md), it is slower
/// than the fused box at 5, 15 and 31 columns, faster than both others at 63 (753 µs against
/// fused 1063 and separable 1289) and at 127 (1243 µs against separable 1290).
const WARP_AUTO_MIN_WIDTH: u64 = 31;

/// `Auto` runs the fused box up to this window width (its horizontal sums cost `w` shared loads
/// per thread and row; the separable variant's cost does not grow with the window).
const FUSED_AUTO_MAX_WIDTH: u64 = 64;

impl<T: WindowElement> BoxPasses<T> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        gpu: &Gpu,
        instance: WindowInstance,
        kind: BoxKind,
        (planes, height, width): (usize, usize, usize),
        (win_h, win_w): (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<Self> {
        if planes * height * width == 0 {
            return Err(Error::InvalidArgument {
                name: "shape",
                reason: format!("a plan needs at least one pixel, got {planes} planes of {height} × {width}"),
            });
        }
        let (h, w) = (check_side("window height", win_h)?, check_side("window width", win_w)?);
        let n = win_h as u64 * win_w as u64;
        check_exact::<T>(n)?;
        let optin = gpu.props().shared_mem_per_block_optin as usize;
        let cols = FUSED_BLOCK as usize * T::FUSED_COLS as usize;
        let shared = fused_layout(
            T::FUSED_COLS as usize,
            win_w,
            T::FUSED_ACC_BYTES,
            instance.output_sizes(),
        )
        .bytes;
        // The first limit each one-pass variant's box exceeds, as its error (`None`: it fits).
        let side = height.max(width).max(win_h);
        let one_pass_limit = |variant: BoxVariant, max_w: usize, shared: usize| {
            (win_w > max_w || n > T::FUSED_MAX_WINDOW || side >= FUSED_MAX_SIDE || shared > optin)
                .then(|| one_pass_refusal(variant, (win_w, max_w), (n, T::FUSED_MAX_WINDOW), side))
        };
        let fused_limit = one_pass_limit(BoxVariant::Fused, FUSED_MAX_WIDTH as usize, shared);
        let fused_fits = !T::FLOAT && fused_limit.is_none();
        let has_warp = instance.warp_name().is_some();
        let warp_limit = one_pass_limit(BoxVariant::WarpPrefix, WARP_BOX_MAX_WIDTH as usize, WARP_BOX_SHARED);
        let warp_fits = has_warp && warp_limit.is_none();
        let has_stream = instance == WindowInstance::u8_f32;
        let ring = stream_box_ring_bytes(w, h) as usize;
        // A block of one warp must hold that warp's ring of h rows.
        let ring_rows = (optin as u64 / stream_box_ring_bytes(w, 1)) as usize;
        let stream_limit = one_pass_limit(BoxVariant::StreamRows, STREAM_BOX_MAX_WIDTH as usize, 0).or_else(|| {
            (win_h > ring_rows).then_some(Error::WindowTooLarge {
                window: win_h,
                max: ring_rows,
                what: "the stream-rows variant's shared ring of one warp's last h rows (window height)",
            })
        });
        // Auto takes it where its words load directly (the word kernel: at least 16 columns, a
        // multiple of 4); other shapes it computes correctly but byte by byte (the gathering
        // kernel, also the fallback for an unaligned buffer).
        let stream_fast = stream_box_reads_words(0, width as u64);
        let variant = match variant {
            BoxVariant::Auto if has_stream && stream_limit.is_none() && stream_fast => BoxVariant::StreamRows,
            BoxVariant::Auto if warp_fits && win_w as u64 > WARP_AUTO_MIN_WIDTH => BoxVariant::WarpPrefix,
            BoxVariant::Auto if fused_fits && win_w as u64 <= FUSED_AUTO_MAX_WIDTH => BoxVariant::Fused,
            BoxVariant::Auto => BoxVariant::Separable,
            BoxVariant::Fused if T::FLOAT => {
                return Err(Error::Unsupported {
                    variant: BoxVariant::Fused.name(),
                    reason: "the fused box slides running sums that subtract, exact only for integers; \
                             floats run separable (van Herk/Gil-Werman)"
                        .into(),
                });
            }
            BoxVariant::StreamRows if !has_stream => {
                return Err(Error::Unsupported {
                    variant: BoxVariant::StreamRows.name(),
                    reason: format!(
                        "the stream-rows box reads u8 images into f32 outputs (byte dot products, squares in \
                         u32); {} input into {:?} runs fused or separable",
                        std::any::type_name::<T>(),
                        instance
                    ),
                });
            }
            BoxVariant::WarpPrefix if !has_warp => {
                return Err(Error::Unsupported {
                    variant: BoxVariant::WarpPrefix.name(),
                    reason: format!(
                        "the warp-prefix box reads u8 images (4 pixels per load, squares in u32); {} input \
                         runs fused or separable",
                        std::any::type_name::<T>()
                    ),
                });
            }
            v => v,
        };
        let limit = match variant {
            BoxVariant::Fused => fused_limit,
            BoxVariant::WarpPrefix => warp_limit,
            BoxVariant::StreamRows => stream_limit,
            _ => None,
        };
        if let Some(e) = limit {
            return Err(e);
        }
        let (mode, cval) = border_of::<T>(border);
        let total = planes * height * width;
        let mut args = BoxArgs {
            height: height as u64,
            width: width as u64,
            planes: planes as u64,
            win_h: h,
            win_w: w,
            anchor_y: h / 2,
            anchor_x: w / 2,
            border: mode as u32,
            kind: kind as u32,
            strip: 0,
            _pad: 0,
            inv_n: 1.0 / n as f64,
            inv_n2: 1.0 / (n as f64 * n as f64),
            cval,
        };
        let one_pass = match variant {
            // (threads per block, shared bytes, tiles per block, columns per tile, strip rule)
            BoxVariant::WarpPrefix => Some((
                32 * WARP_BOX_WARPS,
                WARP_BOX_SHARED,
                WARP_BOX_WARPS as u64,
                warp_box_geometry(w, w / 2).1 as u64,
                // A warm-up row costs a warp only its loads and column updates (about a sixth
                // of an output row): strips down to h rows keep the grid one full wave for tall
                // windows.
                StripRule::OneWave { min_h: 1 },
            )),
            BoxVariant::Fused => Some((FUSED_BLOCK, shared, 1, cols as u64, StripRule::OneWave { min_h: 4 })),
            BoxVariant::StreamRows => {
                let id = gpu
                    .family::<WindowKernels>()?
                    .one_pass(instance, variant, w, stream_fast)?;
                let warps = stream_box_warps(gpu.kernel(id)?.function(), ring, optin)?;
                Some((
                    32 * warps,
                    warps as usize * ring,
                    warps as u64,
                    STREAM_BOX_SPAN as u64,
                    StripRule::Rows(stream_rows_strip(height as u64, h, w)),
                ))
            }
            _ => None,
        };
        let kernels = gpu.family::<WindowKernels>()?;
        let (cfg, rows, function) = if let Some((threads, shared, per_block, tile_cols, strips)) = one_pass {
            let function = gpu
                .kernel(kernels.one_pass(instance, variant, w, stream_fast)?)?
                .clone();
            let per_sm = function
                .function()
                .occupancy_max_active_blocks_per_multiprocessor(threads, shared, None)?;
            let wave = gpu.props().sm_count as u64 * per_sm.max(1) as u64 * per_block;
            let columns = planes as u64 * (width as u64).div_ceil(tile_cols);
            args.strip = match strips {
                StripRule::OneWave { min_h } => one_pass_strip(columns, height as u64, h, min_h, wave),
                StripRule::Rows(rows) => rows,
            };
            let tiles = columns * (height as u64).div_ceil(args.strip as u64);
            let cfg = LaunchConfig {
                grid_dim: (launch_grid(tiles.div_ceil(per_block), "box", total)?, 1, 1),
                block_dim: (threads, 1, 1),
                shared_mem_bytes: shared as u32,
            };
            (cfg, None, function)
        } else {
            args.strip = if T::FLOAT { h } else { column_strip(h) };
            let threads = planes as u64 * width as u64 * (height as u64).div_ceil(args.strip as u64);
            let cfg = LaunchConfig {
                grid_dim: (launch_grid(threads.div_ceil(WINDOW_BLOCK as u64), "box", total)?, 1, 1),
                block_dim: (WINDOW_BLOCK, 1, 1),
                shared_mem_bytes: 0,
            };
            let row_plan = RowPlan::for_instance(
                gpu,
                T::ACC_INSTANCE,
                planes * height,
                width,
                win_w,
                border,
                WindowVariant::RunningSum,
            )?;
            let stream = gpu.stream();
            // SAFETY: the row pass writes every element of rs (and rq) before the column pass
            // reads them; the float column pass writes each ts/tq element before reading it.
            let scratch = unsafe {
                let buffers = || -> Result<AccBuffers<T>> {
                    Ok(AccBuffers {
                        s: stream.alloc::<T::S>(total)?,
                        q: stream.alloc::<T::Q>(total)?,
                    })
                };
                Scratch {
                    rows: buffers()?,
                    suffix: if T::FLOAT { Some(buffers()?) } else { None },
                }
            };
            let columns = kernels.ids[instance as usize][WindowKernel::BoxColumns.index()];
            (cfg, Some((row_plan, scratch)), gpu.kernel(columns)?.clone())
        };
        // The word kernel refuses an unaligned input; that launch takes the gathering kernel,
        // loaded then (device arrays are aligned; views at an offset may not be).
        let unaligned = (variant == BoxVariant::StreamRows && stream_fast)
            .then(|| kernels.one_pass(instance, variant, w, false))
            .transpose()?;
        Ok(BoxPasses {
            kind,
            variant,
            args,
            cfg,
            function,
            unaligned,
            rows,
        })
    }

    /// The variant this plan runs (`Auto` resolved).
    pub fn variant(&self) -> BoxVariant {
        self.variant
    }

    fn total(&self) -> usize {
        (self.args.planes * self.args.height * self.args.width) as usize
    }

    /// Enqueues the box over `x` into `o0` (and `o1` for the two-output kinds). Asynchronous.
    fn enqueue<U0: DeviceRepr, U1: DeviceRepr>(
        &mut self,
        gpu: &Gpu,
        x: &CudaSlice<T>,
        o0: &mut CudaSlice<U0>,
        o1: Option<&mut CudaSlice<U1>>,
    ) -> Result<()> {
        let total = self.total();
        if x.len() < total || o0.len() < total || o1.as_ref().is_some_and(|o| o.len() < total) {
            return Err(Error::InvalidArgument {
                name: "buffers",
                reason: format!("a buffer holds fewer than the plan's {total} elements"),
            });
        }
        if self.kind.two_outputs() != o1.is_some() {
            return Err(Error::InvalidArgument {
                name: "outputs",
                reason: format!(
                    "{:?} writes {} output(s)",
                    self.kind,
                    1 + self.kind.two_outputs() as usize
                ),
            });
        }
        let scratch_stream = self.rows.as_ref().map(|(_, s)| s.rows.s.stream().clone());
        let _order = gpu.order_after(
            [x.stream(), o0.stream()]
                .into_iter()
                .chain(o1.as_ref().map(|o| o.stream()))
                .chain(scratch_stream.as_ref()),
        )?;
        let null = 0u64;
        match &mut self.rows {
            None => {
                let mut function = &self.function;
                if let Some(id) = self.unaligned
                    && !stream_box_reads_words(x.device_ptr(gpu.stream()).0, self.args.width)
                {
                    function = gpu.kernel(id)?;
                }
                let mut launch = function.launch_on(gpu)?;
                launch.arg(x).arg(o0);
                match o1 {
                    Some(o) => launch.arg(o),
                    None => launch.arg(&null),
                };
                launch.arg(&self.args);
                // SAFETY: matches `(x: *const T, o0: *mut S, o1: *mut Q, a: BoxArgs<T>)` of the
                // instance's fused, warp-prefix and stream-rows entries (the latter two's T is
                // u8: only u8 instances have them; stream-rows only u8_f32, S = Q = f32, the
                // kernel of the plan's window width); the buffers hold planes · height · width
                // elements (checked); o1 is read only for two-output kinds, which pass it; grid
                // and shared memory come from the same geometry (FUSED_BLOCK and FUSED_COLS,
                // warp_box_geometry and WARP_BOX_WARPS, or STREAM_BOX_SPAN and whole warps
                // with stream_box_ring_bytes per warp) and strip the kernel uses.
                unsafe { launch.launch(self.cfg) }?;
            }
            Some((row_plan, scratch)) => {
                let needs_sq = self.kind.needs_sumsq();
                row_plan.launch(gpu, x, &mut scratch.rows.s, needs_sq.then_some(&mut scratch.rows.q))?;
                let mut launch = self.function.launch_on(gpu)?;
                launch.arg(&scratch.rows.s).arg(&scratch.rows.q);
                match &mut scratch.suffix {
                    Some(t) => launch.arg(&mut t.s).arg(&mut t.q),
                    None => launch.arg(&null).arg(&null),
                };
                launch.arg(o0);
                match o1 {
                    Some(o) => launch.arg(o),
                    None => launch.arg(&null),
                };
                launch.arg(&self.args);
                // SAFETY: matches `(rs, rq, ts, tq, o0, o1, a: BoxArgs<T>)` of the instance's
                // box_columns entry; rs (and rq, written when the kind needs squares) hold the row
                // pass's accumulators for every pixel; ts/tq (floats) hold as many; the grid covers
                // planes · width · ⌈height / strip⌉ threads with the kernel's own strip rule.
                unsafe { launch.launch(self.cfg) }?;
            }
        }
        Ok(())
    }
}

impl Gpu {
    /// Window sums and sums of squares of `width` samples along the last axis of `x` (leading
    /// axes are a batch) as two images of floats `F` (f32 or f64: `window_sum_sumsq::<f32, _>`,
    /// or from the binding), `Auto` variant. Exact integer sums: [`Gpu::window_sum_sumsq_exact`].
    pub fn window_sum_sumsq<F, X>(&self, x: X, width: usize, border: Border) -> Result<(X::Output<F>, X::Output<F>)>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        self.window_sum_sumsq_with(x, width, border, WindowVariant::Auto)
    }

    /// [`Gpu::window_sum_sumsq`] with a chosen rung of the ladder.
    pub fn window_sum_sumsq_with<F, X>(
        &self,
        x: X,
        width: usize,
        border: Border,
        variant: WindowVariant,
    ) -> Result<(X::Output<F>, X::Output<F>)>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        self.row_sums::<F, F, X>(x, F::INSTANCE, width, border, variant)
    }

    /// Window sums and sums of squares of an integer `x`, exact (module docs: the types and the
    /// longest windows), `Auto` variant.
    #[allow(clippy::type_complexity)]
    pub fn window_sum_sumsq_exact<T: ExactElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        width: usize,
        border: Border,
    ) -> Result<(X::Output<T::Sum>, X::Output<T::SumSq>)> {
        self.window_sum_sumsq_exact_with(x, width, border, WindowVariant::Auto)
    }

    /// [`Gpu::window_sum_sumsq_exact`] with a chosen rung of the ladder.
    #[allow(clippy::type_complexity)]
    pub fn window_sum_sumsq_exact_with<T: ExactElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        width: usize,
        border: Border,
        variant: WindowVariant,
    ) -> Result<(X::Output<T::Sum>, X::Output<T::SumSq>)> {
        self.row_sums::<T::Sum, T::SumSq, X>(x, T::ACC_INSTANCE, width, border, variant)
    }

    /// Runs the row sums of `instance` (outputs `S`, `Q`) over `x` into fresh outputs.
    fn row_sums<S, Q, X>(
        &self,
        x: X,
        instance: WindowInstance,
        width: usize,
        border: Border,
        variant: WindowVariant,
    ) -> Result<(X::Output<S>, X::Output<Q>)>
    where
        X: Operand<Elem: WindowElement>,
        S: DeviceRepr + Clone,
        Q: DeviceRepr + Clone,
    {
        let dim = x.dims();
        let (rows, n) = rows_and_len(dim.slice())?;
        check_side("width", width)?;
        let mut sum = DeviceArray::<S, X::Dim>::uninit(self, dim.clone())?;
        let mut sumsq = DeviceArray::<Q, X::Dim>::uninit(self, dim)?;
        if let Some(input) = x.device(self)? {
            let plan = RowPlan::<X::Elem>::for_instance(self, instance, rows, n, width, border, variant)?;
            plan.launch(self, input.slice(), sum.as_mut_slice(), Some(sumsq.as_mut_slice()))?;
        }
        Ok((X::finish(self, sum)?, X::finish(self, sumsq)?))
    }

    /// Runs a box plan of `kind` over `x` into fresh outputs.
    #[allow(clippy::too_many_arguments)]
    fn run_box<U0, U1, X>(
        &self,
        x: X,
        instance: WindowInstance,
        kind: BoxKind,
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<(X::Output<U0>, Option<X::Output<U1>>)>
    where
        X: Operand<Elem: WindowElement>,
        U0: DeviceRepr + Clone,
        U1: DeviceRepr + Clone,
    {
        let dim = x.dims();
        let shape = planes_and_size(dim.slice())?;
        check_side("window height", window.0)?;
        check_side("window width", window.1)?;
        let mut o0 = DeviceArray::<U0, X::Dim>::uninit(self, dim.clone())?;
        let mut o1 = if kind.two_outputs() {
            Some(DeviceArray::<U1, X::Dim>::uninit(self, dim)?)
        } else {
            None
        };
        if let Some(input) = x.device(self)? {
            let mut plan = BoxPasses::<X::Elem>::new(self, instance, kind, shape, window, border, variant)?;
            plan.enqueue(
                self,
                input.slice(),
                o0.as_mut_slice(),
                o1.as_mut().map(|o| o.as_mut_slice()),
            )?;
        }
        Ok((X::finish(self, o0)?, o1.map(|o| X::finish(self, o)).transpose()?))
    }

    /// Sums over `(h, w)` boxes of the last two axes of `x` (leading axes are a batch of planes)
    /// as floats `F`, `Auto` variant. Exact integer sums: [`Gpu::box_sum_exact`].
    pub fn box_sum<F, X>(&self, x: X, window: (usize, usize), border: Border) -> Result<X::Output<F>>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        self.box_sum_with(x, window, border, BoxVariant::Auto)
    }

    /// [`Gpu::box_sum`] with a chosen rung of the ladder.
    pub fn box_sum_with<F, X>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<X::Output<F>>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        Ok(self
            .run_box::<F, F, X>(x, F::INSTANCE, BoxKind::Sum, window, border, variant)?
            .0)
    }

    /// Exact sums over `(h, w)` boxes of an integer `x`, `Auto` variant.
    pub fn box_sum_exact<T: ExactElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<X::Output<T::Sum>> {
        self.box_sum_exact_with(x, window, border, BoxVariant::Auto)
    }

    /// [`Gpu::box_sum_exact`] with a chosen rung of the ladder.
    pub fn box_sum_exact_with<T: ExactElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<X::Output<T::Sum>> {
        let kind = BoxKind::Sum;
        Ok(self
            .run_box::<T::Sum, T::Sum, X>(x, T::ACC_INSTANCE, kind, window, border, variant)?
            .0)
    }

    /// Sums and sums of squares over `(h, w)` boxes of the last two axes as floats `F`, `Auto`.
    pub fn box_sum_sumsq<F, X>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<(X::Output<F>, X::Output<F>)>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        self.box_sum_sumsq_with(x, window, border, BoxVariant::Auto)
    }

    /// [`Gpu::box_sum_sumsq`] with a chosen rung of the ladder.
    pub fn box_sum_sumsq_with<F, X>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<(X::Output<F>, X::Output<F>)>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        let (o0, o1) = self.run_box::<F, F, X>(x, F::INSTANCE, BoxKind::SumSumSq, window, border, variant)?;
        Ok((o0, o1.expect("two-output kind")))
    }

    /// Exact sums and sums of squares over `(h, w)` boxes of an integer `x`, `Auto` variant.
    #[allow(clippy::type_complexity)]
    pub fn box_sum_sumsq_exact<T: ExactElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<(X::Output<T::Sum>, X::Output<T::SumSq>)> {
        self.box_sum_sumsq_exact_with(x, window, border, BoxVariant::Auto)
    }

    /// [`Gpu::box_sum_sumsq_exact`] with a chosen rung of the ladder.
    #[allow(clippy::type_complexity)]
    pub fn box_sum_sumsq_exact_with<T: ExactElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<(X::Output<T::Sum>, X::Output<T::SumSq>)> {
        let kind = BoxKind::SumSumSq;
        let (o0, o1) = self.run_box::<T::Sum, T::SumSq, X>(x, T::ACC_INSTANCE, kind, window, border, variant)?;
        Ok((o0, o1.expect("two-output kind")))
    }

    /// Local mean and population variance over `(h, w)` boxes of the last two axes (variance
    /// clamped at 0) as floats `F`, `Auto` variant.
    pub fn local_mean_variance<F, X>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<(X::Output<F>, X::Output<F>)>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        self.local_mean_variance_with(x, window, border, BoxVariant::Auto)
    }

    /// [`Gpu::local_mean_variance`] with a chosen rung of the ladder.
    pub fn local_mean_variance_with<F, X>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<(X::Output<F>, X::Output<F>)>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        let (o0, o1) = self.run_box::<F, F, X>(x, F::INSTANCE, BoxKind::MeanVar, window, border, variant)?;
        Ok((o0, o1.expect("two-output kind")))
    }

    /// Local standard deviation (population) over `(h, w)` boxes of the last two axes as floats
    /// `F`, `Auto` variant.
    pub fn local_std<F, X>(&self, x: X, window: (usize, usize), border: Border) -> Result<X::Output<F>>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        self.local_std_with(x, window, border, BoxVariant::Auto)
    }

    /// [`Gpu::local_std`] with a chosen rung of the ladder.
    pub fn local_std_with<F, X>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<X::Output<F>>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        Ok(self
            .run_box::<F, F, X>(x, F::INSTANCE, BoxKind::Std, window, border, variant)?
            .0)
    }
}

/// A prepared row-window launch — sums and sums of squares of `width` samples along rows —
/// writing `S` and `Q` outputs: `(F, F)` for a [`WindowFloat`] `F` ([`WindowPlan::new`]), or the
/// exact pair of an [`ExactElement`] ([`WindowPlan::exact`]). Reusable across inputs of its
/// shape (the examples and the bench time [`WindowPlan::enqueue`] alone).
pub struct WindowPlan<T: WindowElement, S, Q> {
    row: RowPlan<T>,
    _out: PhantomData<fn() -> (S, Q)>,
}

impl<T: WindowElement, F: WindowFloat<T>> WindowPlan<T, F, F> {
    /// Plans window sums of `width` samples over `rows ≥ 1` rows of `n ≥ 1` samples, as floats.
    pub fn new(
        gpu: &Gpu,
        (rows, n): (usize, usize),
        width: usize,
        border: Border,
        variant: WindowVariant,
    ) -> Result<Self> {
        let row = RowPlan::for_instance(gpu, F::INSTANCE, rows, n, width, border, variant)?;
        Ok(WindowPlan { row, _out: PhantomData })
    }
}

impl<T: ExactElement> WindowPlan<T, T::Sum, T::SumSq> {
    /// Plans exact window sums of `width` samples over `rows ≥ 1` rows of `n ≥ 1` samples.
    pub fn exact(
        gpu: &Gpu,
        (rows, n): (usize, usize),
        width: usize,
        border: Border,
        variant: WindowVariant,
    ) -> Result<Self> {
        let row = RowPlan::for_instance(gpu, T::ACC_INSTANCE, rows, n, width, border, variant)?;
        Ok(WindowPlan { row, _out: PhantomData })
    }
}

impl<T: WindowElement, S: DeviceRepr, Q: DeviceRepr> WindowPlan<T, S, Q> {
    /// The rung this plan runs (`Auto` resolved).
    pub fn variant(&self) -> WindowVariant {
        self.row.variant()
    }

    /// Blocks in the grid.
    pub fn grid(&self) -> u32 {
        self.row.grid()
    }

    /// Enqueues the window sums of `x` into `sum` and `sumsq` (their first `rows · n` elements,
    /// C order). Asynchronous.
    pub fn enqueue(&self, gpu: &Gpu, x: &CudaSlice<T>, sum: &mut CudaSlice<S>, sumsq: &mut CudaSlice<Q>) -> Result<()> {
        self.row.launch(gpu, x, sum, Some(sumsq))
    }
}

/// A prepared local mean and variance launch over `(h, w)` boxes of `planes` planes of
/// `height × width`, writing `F` outputs: one fused kernel or the separable passes with their
/// scratch (the variant decides). Reusable across inputs of its shape.
pub struct BoxPlan<T: WindowElement, F> {
    passes: BoxPasses<T>,
    _out: PhantomData<fn() -> F>,
}

impl<T: WindowElement, F: WindowFloat<T>> BoxPlan<T, F> {
    /// Plans local mean and variance of `(h, w)` boxes over `(planes, height, width)`.
    pub fn new(
        gpu: &Gpu,
        shape: (usize, usize, usize),
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<Self> {
        let passes = BoxPasses::new(gpu, F::INSTANCE, BoxKind::MeanVar, shape, window, border, variant)?;
        Ok(BoxPlan {
            passes,
            _out: PhantomData,
        })
    }

    /// The rung this plan runs (`Auto` resolved).
    pub fn variant(&self) -> BoxVariant {
        self.passes.variant()
    }

    /// Enqueues mean and variance of `x` into `mean` and `var`. Asynchronous.
    pub fn enqueue(
        &mut self,
        gpu: &Gpu,
        x: &CudaSlice<T>,
        mean: &mut CudaSlice<F>,
        var: &mut CudaSlice<F>,
    ) -> Result<()> {
        self.passes.enqueue(gpu, x, mean, Some(var))
    }
}

/// `W128` is how `u128` outputs travel (two 64-bit words, low first, as `u128` lies in memory on
/// the little-endian hosts cudarc supports).
const _: () = assert!(size_of::<W128>() == size_of::<u128>());
