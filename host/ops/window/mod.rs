//! Sliding-window statistics: window sums and sums of squares along the last axis, box sums over
//! the last two axes, and the local mean, variance and standard deviation built on them, through
//! the ladder of `kernels-gpu/src/window/`.
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

use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use ndarray::Dimension;

use crate::abi::border::BorderMode;
use crate::abi::reduce::W128;
use crate::abi::window::{
    BoxArgs, BoxKind, FLOAT_NARROW_WIDTHS, FUSED_BLOCK, FUSED_MAX_WIDTH, RowArgs, SLIDING_MAX_WIDTH,
    STREAM_BOX_ANY_NAMES, STREAM_BOX_MAX_WIDTH, STREAM_BOX_NAMES, STREAM_BOX_PACKED_MAX_WIDTH, STREAM_BOX_SPAN,
    STREAM_BOX_WARPS, Seg, Sums, WARP_BOX_MAX_WIDTH, WARP_BOX_SHARED, WARP_BOX_WARPS, WINDOW_BLOCK, WindowIn,
    WindowKernel, float_sliding_layout, fused_layout, running_shared_bytes, running_tile, sliding_layout,
    sliding_outputs, stream_box_reads_words, stream_box_ring_bytes, warp_box_geometry,
};
use crate::array::{DeviceArray, Operand};
use crate::border::Border;
use crate::error::{Error, Result};
use crate::family::Family;
use crate::gpu::Gpu;
use crate::kernels::{KernelId, Resolver};
use crate::loader::Kernel;
use crate::ops::{check_buffers, planes_and_size, rows_and_len};

mod boxes;
mod kernels;
mod ops;
mod plans;
mod rows;

use boxes::*;
pub use kernels::*;
pub use plans::*;
use rows::*;

/// Which rung of the row-window ladder runs (see the table in `kernels-gpu/src/window/`).
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
    /// 512-byte warp rows (u8 8192² at 94% of the copy bandwidth). Floats with windows up to
    /// 1024 samples (no subtraction): each thread's 16 outputs, summed in f64, from a transposed
    /// tile of the input type, van Herk/Gil-Werman over 16-sample chunks for windows of 16 or
    /// more, direct sums below. Wider windows: block scans (integers: the difference of two
    /// running sums; floats: van Herk/Gil-Werman restarting every `w` samples).
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

/// `W128` is how `u128` outputs travel (two 64-bit words, low first, as `u128` lies in memory on
/// the little-endian hosts cudarc supports).
const _: () = assert!(size_of::<W128>() == size_of::<u128>());
