//! 2D image filters over the last two axes: morphology (grey dilation and erosion of any
//! rectangle, gradient, opening, closing) and linear filters (Gaussian, Sobel, 2D and separable
//! correlation), with scipy.ndimage semantics and every [`Border`].
//!
//! | scipy.ndimage / OpenCV                                   | gpuprims                         |
//! |----------------------------------------------------------|----------------------------------|
//! | `grey_dilation(x, size=(h, w))` / `cv2.dilate` (rect)     | [`Gpu::dilate`]                  |
//! | `grey_erosion(x, size=(h, w))` / `cv2.erode` (rect)       | [`Gpu::erode`]                   |
//! | `morphological_gradient(x, size=…)` / `MORPH_GRADIENT`    | [`Gpu::morphological_gradient`]  |
//! | `grey_opening` / `grey_closing` (`MORPH_OPEN`/`CLOSE`)    | [`Gpu::opening`] / [`Gpu::closing`] |
//! | `gaussian_filter(x, sigma)` (`truncate=4.0`)             | [`Gpu::gaussian`]                |
//! | `[1 2 1]ᵀ[1 2 1] / 16` (`cv2.GaussianBlur(x, (3, 3), 0)`) | [`Gpu::gaussian3x3`]             |
//! | `sobel(x, axis)`                                          | [`Gpu::sobel`], [`Gpu::sobel_magnitude`] |
//! | `correlate(x, k)` (2D)                                    | [`Gpu::correlate2d`]             |
//! | `correlate1d` along axis 0, then axis 1                   | [`Gpu::separable2d`]             |
//!
//! **Windows.** A `(h, w)` window of [`Gpu::dilate`] covers rows `y − (h − 1)/2 ..` and columns
//! `x − (w − 1)/2 ..` (scipy's `grey_dilation`, which mirrors the structuring element: for even
//! sizes the window reaches one more sample forward); [`Gpu::erode`] covers `y − h/2 ..`,
//! `x − w/2 ..` (`grey_erosion`, `minimum_filter`). Correlations centre the kernel at
//! `(kh/2, kw/2)`. Windows larger than the image are valid: the border defines them.
//!
//! **Values.** Max and min propagate NaN (a window holding a NaN gives NaN; other windows are
//! unaffected), like numpy's `maximum`. Integer filters are bit-exact:
//! [`Gpu::gaussian3x3`] on integers is `(Σ + 8) >> 4` of the exact integer sum (round half up),
//! [`Gpu::sobel`] of `u8` is the exact `i16`. [`Gpu::gaussian`] and [`Gpu::separable2d`] of
//! integer images follow scipy: each 1D pass sums in f64 and truncates toward zero into the
//! image type (so the column pass's result is truncated before the row pass). `f32` correlations
//! sum with FMA in f32: `|error| ≤ (n + 1)·2⁻²⁴·Σ|t·x|` for `n` taps (per pass for separable).
//!
//! **The ladder** ([`MorphVariant`], [`Filter2dVariant`]) is documented on each variant and in
//! `kernels-gpu/src/filter2d/`.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use ndarray::{ArrayView2, Dimension};

use crate::abi::border::BorderMode;
use crate::abi::filter2d::*;
use crate::array::{DeviceArray, Operand};
use crate::bank::BankContent;
use crate::border::Border;
use crate::error::{Error, Result};
use crate::family::Family;
use crate::gpu::Gpu;
use crate::kernels::{KernelId, Resolver};
use crate::loader::Kernel;
use crate::ops::{check_buffers, planes_and_size};

mod kernels;
mod launch;
mod linear;
mod morph;
mod ops;
mod plan;

pub use kernels::*;
pub use launch::*;
pub use linear::*;
pub use plan::*;

// ---------------------------------------------------------------------------------------------
// Variants
// ---------------------------------------------------------------------------------------------

/// Which rung of the morphology ladder runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum MorphVariant {
    /// One output per thread, `h · w` global loads (L1 serves the overlap). The tutorial's first
    /// kernel. Bottleneck: load instructions and border mappings per output.
    OnePixel,
    /// A 4 × 4 block of outputs per thread, lanes on neighbouring columns; row and column
    /// mappings shared across the block. Bottleneck: still one load per output per tap.
    MultiPixel,
    /// The block's 64 × 32 outputs plus halo staged once in shared memory (each sample read from
    /// global memory once per block), windows folded from shared memory. Windows whose tile
    /// exceeds 48 KiB: [`Error::WindowTooLarge`].
    SharedTile,
    /// Odd squares only: the staged tile filtered by `(k − 1)/2` passes of 3 × 3 through two
    /// shared buffers (the tutorial's 5 × 5 as two 3 × 3). Other windows: [`Error::Unsupported`].
    ComposedShared,
    /// A column pass then a row pass through a scratch image, `h` then `w` loads per output
    /// (a rectangle's max is separable). Bottleneck: O(h + w) per output and the scratch round trip.
    Separable,
    /// The separable passes for long windows. Columns: van Herk/Gil-Werman in O(1) per output
    /// (three comparisons per pixel whatever `k`), each lane streaming one 4-byte word down a
    /// strip of rows with its block's suffix maxima in a shared-memory stack, bytes compared
    /// four at a time in a register (windows up to `VAN_HERK_WORDS_MAX` = 96 rows). Rows: a
    /// doubling in registers and warp shuffles (`log2 k + 1` comparisons per pixel), 16 bytes
    /// per lane (windows up to 16 vectors' elements: 256 u8, 128 u16, 64 f32 columns). Longer
    /// windows take tiled van Herk passes (prefix and suffix scans in shared memory). Axes of
    /// length 1 are skipped. Bottleneck (31 × 31 u8): latency in both passes at 19–39%
    /// occupancy, plus the scratch image's round trip.
    VanHerk,
    /// u8 images, windows up to 33 × 33: both van Herk passes in one kernel on a block's tile of
    /// 128 × 224 outputs staged in shared memory (16-byte `cp.async` copies), so the image is
    /// read once and written once (`VanHerk` writes and reads a scratch image between its
    /// passes). Columns: each lane streams a 4-byte word down 32 rows; rows: each lane streams 4
    /// rows' pixels of one column (a word, the column phase's form) along 28 columns; both in van
    /// Herk runs of up to `k + 1` outputs (unrolled, the suffixes in registers, for windows of 7
    /// and more), two pixels per packed 16-bit max/min on sm_90. Bottleneck (31 × 31):
    /// instruction issue (three phases behind barriers, 3 blocks per SM for the 73 KiB tile).
    /// Other element types or windows: [`Error::Unsupported`].
    VanHerkTile,
    /// 3 × 3 and 5 × 5 only: 16 bytes of a row per thread (one vector load per row, the halo from
    /// the neighbouring lanes by warp shuffles), the window separably in registers while the thread
    /// walks down a strip of rows, 16-byte stores. Other windows: [`Error::Unsupported`].
    RowVector,
    /// u8 images, 3 × 3 and 5 × 5 only: each thread owns one 4-byte word (4 pixels) of 8 output
    /// rows and issues the loads of all its `8 + k − 1` rows before filtering any (that many
    /// independent loads in flight per thread at 72–89 registers), the neighbouring pixels from
    /// the adjacent lanes by warp shuffles, no border logic outside the plane's edge lanes and
    /// rows. Bottleneck: latency (each warp loads, waits, computes, stores). Other element types
    /// or windows: [`Error::Unsupported`].
    WordTile,
    /// u8: `WordTile` for 3 × 3 and 5 × 5, `VanHerkTile` for other windows up to 33 × 33 with
    /// both sides above 1; other types: `RowVector` for 3 × 3 and 5 × 5; `VanHerk` otherwise
    /// (`Separable` where the van Herk tiles do not fit shared memory).
    /// docs/PERFORMANCE.md has the measurements.
    #[default]
    Auto,
}

impl MorphVariant {
    /// The ladder, in order (without `Auto`).
    pub const ALL: [MorphVariant; 9] = [
        MorphVariant::OnePixel,
        MorphVariant::MultiPixel,
        MorphVariant::SharedTile,
        MorphVariant::ComposedShared,
        MorphVariant::Separable,
        MorphVariant::VanHerk,
        MorphVariant::VanHerkTile,
        MorphVariant::RowVector,
        MorphVariant::WordTile,
    ];

    /// Short name (tables, errors).
    pub const fn name(self) -> &'static str {
        match self {
            MorphVariant::OnePixel => "one-pixel",
            MorphVariant::MultiPixel => "multi-pixel",
            MorphVariant::SharedTile => "shared-tile",
            MorphVariant::ComposedShared => "composed-shared",
            MorphVariant::Separable => "separable",
            MorphVariant::VanHerk => "van-herk",
            MorphVariant::VanHerkTile => "van-herk-tile",
            MorphVariant::RowVector => "row-vector",
            MorphVariant::WordTile => "word-tile",
            MorphVariant::Auto => "auto",
        }
    }
}

/// Which rung of the linear-filter ladder runs ([`Gpu::gaussian3x3`], [`Gpu::sobel`],
/// [`Gpu::correlate2d`]; [`Gpu::gaussian`] and [`Gpu::separable2d`] are separable by definition).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Filter2dVariant {
    /// One output per thread, taps from the constant bank (one broadcast per tap per warp).
    OnePixel,
    /// A 4 × 4 block of outputs per thread (see [`MorphVariant::MultiPixel`]).
    MultiPixel,
    /// The 64 × 32 output tile plus halo staged in shared memory.
    SharedTile,
    /// The fixed 3 × 3 filters (Gaussian, Sobel) separably in registers, 16 bytes of a row per
    /// thread (see [`MorphVariant::RowVector`]). [`Gpu::correlate2d`]: [`Error::Unsupported`].
    RowVector,
    /// The fixed 3 × 3 filters of u8 images on packed words (see [`MorphVariant::WordTile`], with
    /// 4 output rows per thread): the Gaussian and Sobel add two pixels per 32-bit instruction,
    /// in 16-bit lanes. Other element types and [`Gpu::correlate2d`]: [`Error::Unsupported`].
    WordTile,
    /// The fixed filters: `WordTile` for u8, `RowVector` for the other types; `SharedTile` for
    /// [`Gpu::correlate2d`] (falling back to `MultiPixel` past the shared tile's 48 KiB).
    #[default]
    Auto,
}

impl Filter2dVariant {
    /// The ladder, in order (without `Auto`).
    pub const ALL: [Filter2dVariant; 5] = [
        Filter2dVariant::OnePixel,
        Filter2dVariant::MultiPixel,
        Filter2dVariant::SharedTile,
        Filter2dVariant::RowVector,
        Filter2dVariant::WordTile,
    ];

    /// Short name (tables, errors).
    pub const fn name(self) -> &'static str {
        match self {
            Filter2dVariant::OnePixel => "one-pixel",
            Filter2dVariant::MultiPixel => "multi-pixel",
            Filter2dVariant::SharedTile => "shared-tile",
            Filter2dVariant::RowVector => "row-vector",
            Filter2dVariant::WordTile => "word-tile",
            Filter2dVariant::Auto => "auto",
        }
    }
}

/// How the integer 3 × 3 Gaussian divides its exact sum by 16 ([`Gpu::gaussian3x3_rounding`]).
/// Float images divide exactly and ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Rounding {
    /// `(Σ + 8) >> 4`: round half up (the default, and OpenCV's `GaussianBlur` on 8-bit images).
    #[default]
    HalfUp,
    /// `Σ >> 4`: round down, as the classic tutorial's kernel (`gx >> 4`) does, bit for bit on
    /// the interior (its kernel leaves the border). Runs the 2D-taps rungs (shared tile under
    /// `Auto`), slower than the rounding word tile.
    Truncate,
}

/// The rung a [`Filter2dPlan`] runs (`Auto` resolved): a morphology rung, a linear rung, or the
/// separable passes of [`Gpu::gaussian`] and [`Gpu::separable2d`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Filter2dPlanVariant {
    /// Dilation, erosion and what is built of them.
    Morph(MorphVariant),
    /// The 3 × 3 Gaussian, Sobel and 2D correlation.
    Linear(Filter2dVariant),
    /// A column pass then a row pass of 1D taps (f64 taps, scipy's arithmetic).
    Separable,
    /// The same two passes in one kernel, the intermediate kept in shared memory.
    SeparableTile,
}

impl Filter2dPlanVariant {
    /// Short name (tables, errors).
    pub const fn name(self) -> &'static str {
        match self {
            Filter2dPlanVariant::Morph(v) => v.name(),
            Filter2dPlanVariant::Linear(v) => v.name(),
            Filter2dPlanVariant::Separable => "separable",
            Filter2dPlanVariant::SeparableTile => "separable-tile",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Element types
// ---------------------------------------------------------------------------------------------

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for f32 {}
}

/// An image element of the 2D filters: `u8`, `u16`, `f32`.
pub trait Filter2dElement: sealed::Sealed + DeviceRepr + Copy + Default + Send + Sync + 'static {
    #[doc(hidden)]
    const MAX: MorphInstance;
    #[doc(hidden)]
    const MIN: MorphInstance;
    #[doc(hidden)]
    const PASS: PassInstance;
    #[doc(hidden)]
    const GAUSS_LINEAR: LinearInstance;
    #[doc(hidden)]
    const GAUSS_FIXED: Fixed3;
    /// Whether the element is an integer (integer taps, exact sums).
    #[doc(hidden)]
    const INTEGER: bool;
    /// Whether the word-tile kernels take the element (u8).
    #[doc(hidden)]
    const WORD_TILE: bool;
    /// Largest value (integer tap-sum bounds).
    #[doc(hidden)]
    const MAX_VALUE: f64;
    /// `v` in this type: rounded to nearest and saturated for integers (the constant border).
    #[doc(hidden)]
    fn from_f64(v: f64) -> Self;
}

macro_rules! filter2d_element {
    ($($t:ty: $max:ident, $min:ident, $pass:ident, $gl:ident, $gf:ident, $int:literal;)*) => {$(
        impl Filter2dElement for $t {
            const MAX: MorphInstance = MorphInstance::$max;
            const MIN: MorphInstance = MorphInstance::$min;
            const PASS: PassInstance = PassInstance::$pass;
            const GAUSS_LINEAR: LinearInstance = LinearInstance::$gl;
            const GAUSS_FIXED: Fixed3 = Fixed3::$gf;
            const INTEGER: bool = $int;
            const WORD_TILE: bool = size_of::<$t>() == 1;
            const MAX_VALUE: f64 = <$t>::MAX as f64;
            fn from_f64(v: f64) -> $t {
                if $int { v.round() as $t } else { v as $t }
            }
        }
    )*};
}
filter2d_element! {
    u8: max_u8, min_u8, sep_u8, u8_u8, gauss_u8, true;
    u16: max_u16, min_u16, sep_u16, u16_u16, gauss_u16, true;
    f32: max_f32, min_f32, sep_f32, f32_f32, gauss_f32, false;
}

/// An element [`Gpu::sobel`] takes, and what it returns: `u8 → i16` (exact), `f32 → f32`.
pub trait SobelElement: Filter2dElement {
    type Out: DeviceRepr + Copy + Default + Send + Sync + 'static;
    #[doc(hidden)]
    const LINEAR: LinearInstance;
    #[doc(hidden)]
    const FIXED: [Fixed3; 2];
    #[doc(hidden)]
    const MAGNITUDE: usize;
}
impl SobelElement for u8 {
    type Out = i16;
    const LINEAR: LinearInstance = LinearInstance::u8_i16;
    const FIXED: [Fixed3; 2] = [Fixed3::sobel0_u8, Fixed3::sobel1_u8];
    const MAGNITUDE: usize = 0;
}
impl SobelElement for f32 {
    type Out = f32;
    const LINEAR: LinearInstance = LinearInstance::f32_f32;
    const FIXED: [Fixed3; 2] = [Fixed3::sobel0_f32, Fixed3::sobel1_f32];
    const MAGNITUDE: usize = 1;
}
