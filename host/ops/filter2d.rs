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
//! `kernels-gpu/src/filter2d.rs`.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use ndarray::{ArrayView2, Dimension};

use crate::abi::border::BorderMode;
use crate::abi::filter2d::*;
use crate::array::{DeviceArray, Operand};
use crate::bank::BankContent;
use crate::border::Border;
use crate::error::{Error, Result};
use crate::family::Family;
use crate::gpu::Gpu;
use crate::kernels::{KernelId, required_all, required_list, required_table};
use crate::loader::Kernel;
use crate::ops::planes_and_size;

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
}

impl Filter2dPlanVariant {
    /// Short name (tables, errors).
    pub const fn name(self) -> &'static str {
        match self {
            Filter2dPlanVariant::Morph(v) => v.name(),
            Filter2dPlanVariant::Linear(v) => v.name(),
            Filter2dPlanVariant::Separable => "separable",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Kernel table
// ---------------------------------------------------------------------------------------------

/// Index of each morphology kernel in `morph_kernel_names!` order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MorphKernel {
    OnePixel = 0,
    MultiPixel,
    SharedTile,
    ComposedShared,
    PassCols,
    PassRows,
    VanHerkCols,
    VanHerkRows,
    RowVector3,
    RowVector5,
    Difference,
    VanHerkColWords,
    DoublingRows,
}

macro_rules! instance_enum {
    ($enum:ident, $names:ident, $n:expr, $doc:literal; $($inst:ident)*) => {
        #[doc = $doc]
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[doc(hidden)]
        pub enum $enum {
            $($inst),*
        }
        impl $enum {
            const ALL: &'static [$enum] = &[$($enum::$inst),*];
            const fn names(self) -> [&'static str; $n] {
                match self {
                    $($enum::$inst => crate::$names!($inst)),*
                }
            }
        }
    };
}

macro_rules! morph_table {
    ($($inst:ident => $t:ty, $fold:ident, $lanes:literal;)*) => {
        instance_enum!(MorphInstance, morph_kernel_names, 13, "A morphology kernel instance."; $($inst)*);
    };
}
crate::for_each_morph_instance!(morph_table);

macro_rules! linear_table {
    ($($inst:ident => $i:ty, $o:ty, $fold:ident;)*) => {
        instance_enum!(LinearInstance, linear_kernel_names, 3, "A 2D-taps linear kernel instance."; $($inst)*);
    };
}
crate::for_each_linear_instance!(linear_table);

macro_rules! pass_table {
    ($($inst:ident => $t:ty, $acc:ty;)*) => {
        instance_enum!(PassInstance, pass_kernel_names, 2, "A separable-pass kernel instance."; $($inst)*);
    };
}
crate::for_each_pass_instance!(pass_table);

macro_rules! fixed3_table {
    ($($inst:ident => $i:ty, $o:ty, $op:ident, $lanes:literal;)*) => {
        /// A fixed 3 × 3 row-vector kernel.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[doc(hidden)]
        pub enum Fixed3 {
            $($inst),*
        }
        impl Fixed3 {
            const NAMES: &'static [&'static str] = &[$(crate::fixed3_kernel_name!($inst)),*];
        }
    };
}
crate::for_each_fixed3_instance!(fixed3_table);

macro_rules! word_tile_table {
    ($($inst:ident => $f:ty, $k:literal, $o:ty, $p:literal, $r:literal;)*) => {
        /// A word-tile kernel (u8 images).
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        enum WordTile {
            $($inst),*
        }
        impl WordTile {
            const NAMES: &'static [&'static str] = &[$(crate::word_tile_kernel_name!($inst)),*];
            const ANY_NAMES: &'static [&'static str] = &[$(crate::word_tile_any_kernel_name!($inst)),*];
            /// Words per lane of each kernel.
            const WORDS: &'static [u32] = &[$($p),*];
            /// Output rows per lane of each kernel.
            const ROWS: &'static [u32] = &[$($r),*];
        }
    };
}
crate::for_each_word_tile_instance!(word_tile_table);

macro_rules! doubling_u8_table {
    ($($inst:ident => $fold:ident, $steps:literal;)*) => {
        /// The fixed-steps u8 doubling row passes: symbol, fold and step count of each.
        const DOUBLING_U8: &[(&str, Extremum, u32)] = &[$((crate::doubling_u8_kernel_name!($inst), Extremum::$fold, $steps)),*];
    };
}
crate::for_each_doubling_u8_instance!(doubling_u8_table);

/// The u8 tile van Herk entries, `Max` then `Min`.
const TILE_VH_NAMES: [&str; 2] = [crate::tile_vh_kernel_name!(Max), crate::tile_vh_kernel_name!(Min)];

const MAGNITUDE_NAMES: [&str; 2] = [
    crate::fixed3_kernel_name!(magnitude_i16),
    crate::fixed3_kernel_name!(magnitude_f32),
];

// SAFETY: `repr(C)` plain data; the layout is the contract both sides compile.
unsafe impl<T: DeviceRepr> DeviceRepr for Filter2dArgs<T> {}

/// The 2D filter family's state on one `Gpu`: its kernel table.
pub(crate) struct Filter2dKernels {
    morph: Vec<[KernelId; 13]>,
    linear: Vec<[KernelId; 3]>,
    passes: Vec<[KernelId; 2]>,
    fixed3: Vec<KernelId>,
    word_tile: Vec<KernelId>,
    word_tile_any: Vec<KernelId>,
    /// In `DOUBLING_U8` order.
    doubling_u8: Vec<KernelId>,
    magnitude: [KernelId; 2],
    /// In `TILE_VH_NAMES` order.
    tile_vh: [KernelId; 2],
}

impl Family for Filter2dKernels {
    fn load(_: &Gpu) -> Result<Self> {
        Ok(Filter2dKernels {
            morph: required_table(MorphInstance::ALL, MorphInstance::names)?,
            linear: required_table(LinearInstance::ALL, LinearInstance::names)?,
            passes: required_table(PassInstance::ALL, PassInstance::names)?,
            fixed3: required_list(Fixed3::NAMES)?,
            word_tile: required_list(WordTile::NAMES)?,
            word_tile_any: required_list(WordTile::ANY_NAMES)?,
            doubling_u8: required_list(&DOUBLING_U8.iter().map(|&(n, _, _)| n).collect::<Vec<_>>())?,
            magnitude: required_all(MAGNITUDE_NAMES)?,
            tile_vh: required_all(TILE_VH_NAMES)?,
        })
    }

    fn kernel_names() -> Vec<&'static str> {
        let mut v: Vec<&'static str> = MorphInstance::ALL.iter().flat_map(|i| i.names()).collect();
        v.extend(LinearInstance::ALL.iter().flat_map(|i| i.names()));
        v.extend(PassInstance::ALL.iter().flat_map(|i| i.names()));
        v.extend(Fixed3::NAMES);
        v.extend(WordTile::NAMES);
        v.extend(WordTile::ANY_NAMES);
        v.extend(DOUBLING_U8.iter().map(|&(n, _, _)| n));
        v.extend(MAGNITUDE_NAMES);
        v.extend(TILE_VH_NAMES);
        v
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

// ---------------------------------------------------------------------------------------------
// Geometry and launches
// ---------------------------------------------------------------------------------------------

/// Planes and plane size of a filter's input, and the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Filter2dShape {
    pub planes: usize,
    pub h: usize,
    pub w: usize,
}

impl Filter2dShape {
    fn len(&self) -> usize {
        self.planes * self.h * self.w
    }
}

/// Largest image side and window side (32-bit row arithmetic with border positions).
const MAX_SIDE: usize = 1 << 30;

fn check_shape(s: Filter2dShape) -> Result<()> {
    for (name, v) in [("height", s.h), ("width", s.w)] {
        if v >= MAX_SIDE {
            return Err(Error::InvalidArgument {
                name,
                reason: format!("{v} exceeds the 2D filters' maximum side of {}", MAX_SIDE - 1),
            });
        }
    }
    Ok(())
}

fn check_window((kh, kw): (usize, usize)) -> Result<()> {
    if kh == 0 || kw == 0 {
        return Err(Error::InvalidArgument {
            name: "window",
            reason: format!("a window needs at least one sample along each axis, got {kh} × {kw}"),
        });
    }
    for v in [kh, kw] {
        if v >= MAX_SIDE {
            return Err(Error::WindowTooLarge {
                window: v,
                max: MAX_SIDE - 1,
                what: "one side of a 2D window",
            });
        }
    }
    Ok(())
}

/// The base launch arguments.
fn args<T: Filter2dElement>(
    s: Filter2dShape,
    (kh, kw): (usize, usize),
    (ay, ax): (usize, usize),
    border: Border,
) -> Filter2dArgs<T> {
    let (mode, v): (BorderMode, f64) = border.device();
    Filter2dArgs {
        planes: s.planes as u64,
        h: s.h as u32,
        w: s.w as u32,
        kh: kh as u32,
        kw: kw as u32,
        ay: ay as u32,
        ax: ax as u32,
        border: mode as u32,
        strip: 0,
        tap_offset: 0,
        shift: 0,
        vector_rows: 0,
        prefetch_rows: 0,
        tiles: WarpTiles::new(1, 1),
        cval: T::from_f64(v),
    }
}

fn blocks(n: u64, what: &'static str) -> Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|&b| b < i32::MAX as u32)
        .ok_or_else(|| Error::Unsupported {
            variant: what,
            reason: format!("{n} blocks exceed the grid limit; split the batch of planes"),
        })
}

fn cfg(grid: u32, block: u32, smem: u64) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: smem as u32,
    }
}

/// Grid of the grid-stride elementwise kernels (gradient, magnitude) over `n` elements: one
/// thread per element up to 4096 blocks.
fn elementwise_grid(n: usize) -> u32 {
    (n as u64).div_ceil(BLOCK_THREADS as u64).min(4 * 1024) as u32
}

/// Grid of `bw × bh`-output tiles.
fn tiles(s: Filter2dShape, bw: usize, bh: usize, what: &'static str) -> Result<u32> {
    blocks((s.w.div_ceil(bw) * s.h.div_ceil(bh) * s.planes) as u64, what)
}

/// Where a stage reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Buf {
    Input,
    Scratch,
    Output,
}

/// One kernel launch of a plan.
#[derive(Clone)]
struct Stage<T> {
    func: Arc<Kernel>,
    cfg: LaunchConfig,
    args: Filter2dArgs<T>,
    from: Buf,
    to: Buf,
    /// The kernel launched instead of `func` when the buffers are not 16-byte aligned (`func`
    /// then takes `vector_rows = 0`), for kernels that require aligned rows. Loaded at the first
    /// launch that needs it (device arrays are always aligned; views at an offset may not be).
    unaligned: Option<KernelId>,
}

/// The launches for the shared-tile / composed rung; `Err` past the opt-in shared memory.
fn tile_launch<T: Filter2dElement>(
    gpu: &Gpu,
    s: Filter2dShape,
    (kh, kw): (usize, usize),
    composed: bool,
    what: &'static str,
) -> Result<LaunchConfig> {
    let smem = tile_smem_bytes(kh as u32, kw as u32, size_of::<T>() as u32, composed);
    let max = gpu.props().shared_mem_per_block_optin as u64;
    if smem > max {
        return Err(Error::WindowTooLarge {
            window: kh * kw,
            max: (max / size_of::<T>() as u64) as usize,
            what,
        });
    }
    Ok(cfg(
        tiles(s, TILE_W as usize, TILE_H as usize, what)?,
        BLOCK_THREADS,
        smem,
    ))
}

/// The row-vector launch: strips of 64 rows (each strip re-reads `K − 1` halo rows, and a thread
/// needs a long strip to keep its `K` row loads in flight), halved (down to 8) only while the grid
/// has fewer than 3 blocks per SM (about one wave at the kernel's occupancy); 16-byte rows when
/// the width is a whole number of vectors (`enqueue` also checks the buffers' alignment).
fn row_vector_launch<T: Filter2dElement>(gpu: &Gpu, s: Filter2dShape) -> Result<(LaunchConfig, WarpTiles, u32, u32)> {
    let lanes = 16 / size_of::<T>();
    // A tile is one warp's 32 vectors of a strip (the kernel's `warp_tile_origin`).
    let across = s.w.div_ceil(32 * lanes);
    let strip = warp_strip(gpu, s, across, 64);
    let vector_rows = s.w.is_multiple_of(lanes) as u32;
    let (c, tiles) = warp_tile_grid(s, across, strip, "row-vector")?;
    Ok((c, tiles, strip as u32, vector_rows))
}

/// Rows per warp tile for `columns` warp tiles across a plane: `longest`, halved (down to 8)
/// while the grid would hold fewer than three blocks of warps per SM.
fn warp_strip(gpu: &Gpu, s: Filter2dShape, columns: usize, longest: usize) -> usize {
    let warps_per_block = (ROW_VECTOR_THREADS / 32) as usize;
    let target = 3 * gpu.props().sm_count as usize * warps_per_block;
    let mut strip = longest;
    while strip > 8 && columns * s.h.div_ceil(strip) * s.planes < target {
        strip /= 2;
    }
    strip
}

/// Output rows per warp of the word-stream van Herk column pass for a window of `k` rows: 24
/// below 25 rows, 28 up to 47, 32 beyond — whether or not that is a whole number of van Herk
/// blocks (a strip shorter than `k` ends inside its first block's prefix stream; one longer ends
/// part way through a block, whose suffix sweep it still pays). Measured on the H100 (u8 8192²,
/// the column pass alone, docs/PERFORMANCE.md): against the earlier first multiple of `k` from
/// 30 rows these strips took `k` = 7 from 70.1 to 56.0 µs, 15 from 58.6 to 52.9, 25 from 63.7 to
/// 56.8, 31 from 58.3 to 57.4 and 63 from 80.3 to 68.4. Shorter strips (16, 12) lost again:
/// fewer outputs per halo row loaded.
fn van_herk_col_strip(k: usize) -> usize {
    match k {
        0..25 => 24,
        25..48 => 28,
        _ => 32,
    }
}

/// The word-stream van Herk column pass for a window of `k` rows: one warp per 128 bytes of
/// columns and a strip of [`van_herk_col_strip`]`(k)` rows (each strip loads `k − 1` rows of
/// halo), shortened while the grid would leave SMs idle. Returns the pass's `(kernel, launch,
/// tiles, strip, vector_rows)`.
fn van_herk_col_words_pass(
    gpu: &Gpu,
    s: Filter2dShape,
    k: usize,
    size: usize,
) -> Result<(MorphKernel, LaunchConfig, WarpTiles, u32, u32)> {
    let per = 4 / size;
    let across = s.w.div_ceil(32 * per);
    let strip = warp_strip(gpu, s, across, van_herk_col_strip(k));
    let (mut c, tiles) = warp_tile_grid(s, across, strip, "van-herk")?;
    c.shared_mem_bytes = van_herk_words_smem(k as u32) as u32;
    let vector = s.w.is_multiple_of(per) as u32;
    Ok((MorphKernel::VanHerkColWords, c, tiles, strip as u32, vector))
}

/// The launch of a kernel whose tiles are warps (`warp_tile_origin`), `across` tiles of `rows`
/// rows across each plane: one warp per tile in blocks of `ROW_VECTOR_THREADS`, and the dividers
/// the kernel splits its warp index with (`Filter2dArgs::tiles`). At most 2^32 − 1 warps.
fn warp_tile_grid(
    s: Filter2dShape,
    across: usize,
    rows: usize,
    what: &'static str,
) -> Result<(LaunchConfig, WarpTiles)> {
    let down = s.h.div_ceil(rows);
    let warps = across as u64 * down as u64 * s.planes as u64;
    let fits = |n: usize| u32::try_from(n).ok();
    let (Some(a), Some(d), true) = (fits(across), fits(down), warps <= u32::MAX as u64) else {
        return Err(Error::Unsupported {
            variant: what,
            reason: format!("{warps} warp tiles exceed 2^32 − 1; split the batch of planes"),
        });
    };
    let warps_per_block = (ROW_VECTOR_THREADS / 32) as u64;
    let c = cfg(blocks(warps.div_ceil(warps_per_block), what)?, ROW_VECTOR_THREADS, 0);
    Ok((c, WarpTiles::new(a, d)))
}

/// The one stage of a word-tile plan of kernel `inst`: one warp per `word_tile_cols(words) ×
/// rows` tile. Widths that are whole 16-byte vectors take the vector kernel (`word_tile`, with
/// `word_tile_any` for unaligned buffers, which `enqueue` checks), the others `word_tile_any`
/// (word loads when the width is a whole number of words). `Unsupported` for element types other
/// than u8.
fn word_tile_stage<T: Filter2dElement>(
    gpu: &Gpu,
    inst: WordTile,
    s: Filter2dShape,
    k: usize,
    border: Border,
) -> Result<Stage<T>> {
    if !T::WORD_TILE {
        return Err(Error::Unsupported {
            variant: "word-tile",
            reason: format!(
                "packs u8 pixels four to a word; {} images take row-vector",
                std::any::type_name::<T>()
            ),
        });
    }
    let kernels = gpu.family::<Filter2dKernels>()?;
    let any = kernels.word_tile_any[inst as usize];
    let words = WordTile::WORDS[inst as usize];
    let vectors = s.w.is_multiple_of(4 * words as usize);
    let func = gpu.kernel(if vectors { kernels.word_tile[inst as usize] } else { any })?;
    let cols = word_tile_cols(words) as usize;
    let rows = WordTile::ROWS[inst as usize] as usize;
    let (c, tiles) = warp_tile_grid(s, s.w.div_ceil(cols), rows, "word-tile")?;
    let mut a = args::<T>(s, (k, k), (k / 2, k / 2), border);
    a.vector_rows = s.w.is_multiple_of(4) as u32;
    a.prefetch_rows = word_tile_prefetch_rows(gpu, func.function(), s, cols, rows, inst.prefetch_fraction())?;
    a.tiles = tiles;
    Ok(Stage {
        func: func.clone(),
        cfg: c,
        args: a,
        from: Buf::Input,
        to: Buf::Output,
        unaligned: vectors.then_some(any),
    })
}

/// The one stage of a `VanHerkTile` plan: a block of `TILE_VH_THREADS` per tile of
/// `TILE_VH_ROWS × TILE_VH_COLS` outputs (tiles across, then down, then planes), the staged
/// input and the column phase's results in shared memory (`tile_vh_smem`, 73 KiB at 31 rows:
/// 3 blocks per SM). Rows of whole 16-byte chunks take vector copies and stores (`enqueue`
/// clears `vector_rows` for unaligned buffers).
fn tile_vh_stage<T: Filter2dElement>(
    gpu: &Gpu,
    ext: Extremum,
    s: Filter2dShape,
    kh: usize,
    base: Filter2dArgs<T>,
    what: &'static str,
) -> Result<Stage<T>> {
    let grid = tiles(s, TILE_VH_COLS as usize, TILE_VH_ROWS as usize, what)?;
    let mut a = base;
    a.vector_rows = s.w.is_multiple_of(16) as u32;
    Ok(Stage {
        func: gpu
            .kernel(gpu.family::<Filter2dKernels>()?.tile_vh[ext as usize])?
            .clone(),
        cfg: cfg(grid, TILE_VH_THREADS, tile_vh_smem(kh as u32) as u64),
        args: a,
        from: Buf::Input,
        to: Buf::Output,
        unaligned: None,
    })
}

/// How far below its own tile a word-tile warp prefetches (`Filter2dArgs::prefetch_rows`): one
/// `fraction`-th of the warps resident on the device ([`WordTile::prefetch_fraction`]), as whole
/// bands of tiles across the plane, so the rows a warp asks L2 for are those of a warp that
/// starts a little later. Warps filter a tile and exit, so each waits out its loads once; with its
/// rows on the way to L2 the wait is shorter.
fn word_tile_prefetch_rows(
    gpu: &Gpu,
    func: &CudaFunction,
    s: Filter2dShape,
    cols: usize,
    rows: usize,
    fraction: usize,
) -> Result<u32> {
    let warps_per_block = (ROW_VECTOR_THREADS / 32) as usize;
    let blocks = func.occupancy_max_active_blocks_per_multiprocessor(ROW_VECTOR_THREADS, 0, None)? as usize;
    let resident = blocks * warps_per_block * gpu.props().sm_count as usize;
    let bands = resident.div_ceil(fraction * s.w.div_ceil(cols).max(1));
    Ok((bands * rows).min(s.h).try_into().unwrap_or(u32::MAX))
}

impl WordTile {
    /// The fraction of the resident warps a tile of this kernel prefetches ahead
    /// ([`word_tile_prefetch_rows`]), as measured on the H100 (u8 8192², the border strips
    /// launched first, each warp prefetching its own output rows only; µs, two rounds in one
    /// call): a quarter for the 3 × 3 u8 outputs (3 × 3 dilation 48.34 / 48.74 against 48.86 /
    /// 48.88 at 1/8 and 49.02 / 49.10 at 1/16; Gaussian 48.64 / 48.64, 48.86 / 48.88, 49.01 /
    /// 49.02), a third for the 5 × 5 tiles (50.32 / 50.35 against 50.56 / 50.69 at 1/2, 50.62 /
    /// 50.72 at 1/4, 51.34 / 51.38 at 1/6) and an eighth for the i16 outputs of Sobel, whose
    /// writes keep L2 busier (axis 0 71.47 / 71.87 against 72.03 / 72.03 at 1/16, 72.02 / 72.10
    /// at 1/32, 72.13 / 72.16 at 1/64). Without a prefetch (plain order, half the resident
    /// warps: 50.8) the 3 × 3 dilation took 51.6 (docs/PERFORMANCE.md).
    const fn prefetch_fraction(self) -> usize {
        match self {
            WordTile::max5 | WordTile::min5 => 3,
            WordTile::sobel0 | WordTile::sobel1 => 8,
            WordTile::max3 | WordTile::min3 | WordTile::gauss => 4,
        }
    }
}

/// The doubling row pass for a window of `kw` columns anchored at `ax` on elements of `size`
/// bytes: its kernel, elements per lane and outputs per warp, or `None` when the window is too
/// long for it. u8 rows take 8 bytes per lane where the window allows, in the entry compiled for
/// the window's doubling steps (`DOUBLING_U8`); 16 bytes otherwise, and for the other types,
/// whose 8-byte passes were not faster (docs/PERFORMANCE.md). On the H100 (u8 8192²): 8 bytes
/// (77 registers, 6 blocks per SM, against 16 bytes' 123 and 4) made the 15 × 15 and 31 × 31
/// dilations 9% and 6–7% faster; the fixed steps then took the 31 × 31 row pass from 101.5 to
/// 90.0 µs.
fn doubling_row_kernel(
    k: &Filter2dKernels,
    fs: &[KernelId; 13],
    ext: Extremum,
    size: u32,
    kw: u32,
    ax: u32,
) -> Option<(KernelId, u32, u32)> {
    let half = (size == 1).then(|| {
        let steps = doubling_steps(kw, 8);
        let i = DOUBLING_U8.iter().position(|&(_, e, s)| e == ext && s == steps)?;
        doubling_row_outputs(kw, ax, 8).map(|outs| (k.doubling_u8[i], 8, outs))
    });
    half.flatten().or_else(|| {
        doubling_row_outputs(kw, ax, 16 / size).map(|outs| (fs[MorphKernel::DoublingRows as usize], 16 / size, outs))
    })
}

// ---------------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------------

/// Taps a plan keeps on the device and puts in the constant bank for its launches.
struct BankTaps {
    bytes: CudaSlice<u8>,
    content: BankContent,
}

impl BankTaps {
    fn new(gpu: &Gpu, bytes: &[u8]) -> Result<Self> {
        if bytes.len() > crate::abi::CONSTANT_BANK_BYTES {
            return Err(Error::TooManyTaps {
                taps: bytes.len() / 4,
                max: crate::abi::CONSTANT_BANK_BYTES / 4,
            });
        }
        Ok(BankTaps {
            bytes: gpu.stream().clone_htod(bytes)?,
            content: BankContent::fresh(),
        })
    }
}

/// A planned 2D filter of images of `I` into images of `O`: its launches, scratch image and
/// taps. Plans are reusable (timing loops enqueue one plan many times); build one with the
/// constructors below or let the `Gpu` ops do it.
pub struct Filter2dPlan<I: Filter2dElement, O: DeviceRepr = I> {
    shape: Filter2dShape,
    stages: Vec<Stage<I>>,
    scratch: Option<CudaSlice<I>>,
    taps: Option<BankTaps>,
    variant: Filter2dPlanVariant,
    needs_aligned: bool,
    _out: std::marker::PhantomData<O>,
}

impl<I: Filter2dElement, O: DeviceRepr> Filter2dPlan<I, O> {
    /// The rung this plan runs (`Auto` resolved).
    pub fn variant(&self) -> Filter2dPlanVariant {
        self.variant
    }

    /// Enqueues the filter of `x` (`planes · h · w` elements, C order) into `y`. Asynchronous.
    pub fn enqueue(&self, gpu: &Gpu, x: &CudaSlice<I>, y: &mut CudaSlice<O>) -> Result<()> {
        let n = self.shape.len();
        for (name, len) in [("x", x.len()), ("y", y.len())] {
            if len < n {
                return Err(Error::InvalidArgument {
                    name,
                    reason: format!("holds {len} elements, the plan needs {n}"),
                });
            }
        }
        if n == 0 {
            return Ok(());
        }
        let _order = gpu.order_after(
            [x.stream(), y.stream()]
                .into_iter()
                .chain(self.scratch.as_ref().map(|s| s.stream()))
                .chain(self.taps.as_ref().map(|t| t.bytes.stream())),
        )?;
        let stream = gpu.stream();
        let (xp, yp) = (x.device_ptr(stream).0, y.device_ptr(stream).0);
        let aligned = xp % 16 == 0 && yp % 16 == 0;
        let scratch = self.scratch.as_ref();
        let bad = || Error::Unsupported {
            variant: self.variant.name(),
            reason: "plan without its scratch image".into(),
        };
        for st in &self.stages {
            let mut args = st.args;
            let mut func = &st.func;
            if self.needs_aligned && !aligned {
                args.vector_rows = 0;
                if let Some(id) = st.unaligned {
                    func = gpu.kernel(id)?;
                }
            }
            let mut b = func.launch_on(gpu)?;
            match st.from {
                Buf::Input => b.arg(x),
                Buf::Scratch => b.arg(scratch.ok_or_else(bad)?),
                Buf::Output => unreachable!("no stage reads the output"),
            };
            match st.to {
                Buf::Output => b.arg(&mut *y),
                Buf::Scratch => b.arg(scratch.ok_or_else(bad)?),
                Buf::Input => unreachable!("no stage writes the input"),
            };
            b.arg(&args);
            // SAFETY: every filter entry is `(x: *const I, y: *mut O or I, a: Filter2dArgs<I>)`;
            // x, y and the scratch hold the plan's planes (checked above); the grid covers only
            // those planes; the shared-memory size is the kernel's tile for the window; a kernel
            // that reads constant memory gets the plan's taps in its bank first (below).
            let mut launch = || Ok(unsafe { b.launch(st.cfg) }.map(|_| ())?);
            match (func.bank(), &self.taps) {
                (Some(bank), Some(t)) => {
                    let (src, _sync) = t.bytes.device_ptr(stream);
                    // SAFETY: the plan owns the taps' device buffer, unchanged for its lifetime.
                    unsafe { bank.with_content(gpu, t.content, src, t.bytes.len(), launch) }?
                }
                (Some(_), None) => {
                    return Err(Error::Unsupported {
                        variant: self.variant.name(),
                        reason: format!("{} reads constant memory but the plan has no taps", func.name()),
                    });
                }
                (None, _) => launch()?,
            }
        }
        Ok(())
    }

    fn new(
        gpu: &Gpu,
        shape: Filter2dShape,
        stages: Vec<Stage<I>>,
        taps: Option<&[u8]>,
        variant: Filter2dPlanVariant,
    ) -> Result<Self> {
        let needs_scratch = stages.iter().any(|s| s.to == Buf::Scratch);
        let scratch = if needs_scratch && shape.len() > 0 {
            // SAFETY: every stage writing the scratch covers all of it before a later stage reads it.
            Some(unsafe { gpu.stream().alloc::<I>(shape.len()) }?)
        } else {
            None
        };
        Ok(Filter2dPlan {
            shape,
            needs_aligned: stages.iter().any(|s| s.args.vector_rows != 0),
            stages,
            scratch,
            taps: taps.map(|t| BankTaps::new(gpu, t)).transpose()?,
            variant,
            _out: std::marker::PhantomData,
        })
    }
}

/// Which extremum a morphology plan computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Extremum {
    Max,
    Min,
}

impl<T: Filter2dElement> Filter2dPlan<T, T> {
    /// Plans a grey dilation (max over the window, scipy's `grey_dilation` anchoring) of images of
    /// `shape` with `variant`.
    pub fn dilate(
        gpu: &Gpu,
        shape: Filter2dShape,
        window: (usize, usize),
        border: Border,
        variant: MorphVariant,
    ) -> Result<Self> {
        Self::morph(gpu, shape, window, border, variant, Extremum::Max)
    }

    /// Plans a grey erosion (min over the window, `grey_erosion` anchoring).
    pub fn erode(
        gpu: &Gpu,
        shape: Filter2dShape,
        window: (usize, usize),
        border: Border,
        variant: MorphVariant,
    ) -> Result<Self> {
        Self::morph(gpu, shape, window, border, variant, Extremum::Min)
    }

    fn morph(
        gpu: &Gpu,
        s: Filter2dShape,
        (kh, kw): (usize, usize),
        border: Border,
        variant: MorphVariant,
        ext: Extremum,
    ) -> Result<Self> {
        check_window((kh, kw))?;
        check_shape(s)?;
        let anchor = match ext {
            Extremum::Max => ((kh - 1) / 2, (kw - 1) / 2),
            Extremum::Min => (kh / 2, kw / 2),
        };
        let inst = match ext {
            Extremum::Max => T::MAX,
            Extremum::Min => T::MIN,
        };
        let kernels = gpu.family::<Filter2dKernels>()?;
        let fs = &kernels.morph[inst as usize];
        let f = |k: MorphKernel| gpu.kernel(fs[k as usize]).cloned();
        let base = args::<T>(s, (kh, kw), anchor, border);
        let size = size_of::<T>() as u32;
        let small = matches!((kh, kw), (3, 3) | (5, 5));
        let vh_fits = (kh == 1 || van_herk_col_tile(kh as u32, size, VAN_HERK_SMEM).is_some())
            && (kw == 1 || van_herk_row_tile(kw as u32, size, VAN_HERK_SMEM).is_some());
        let tile_fits = T::WORD_TILE && kh as u32 <= TILE_VH_MAX_WINDOW && kw as u32 <= TILE_VH_MAX_WINDOW;
        let v = match variant {
            MorphVariant::Auto if small && T::WORD_TILE => MorphVariant::WordTile,
            MorphVariant::Auto if small => MorphVariant::RowVector,
            MorphVariant::Auto if tile_fits && kh > 1 && kw > 1 => MorphVariant::VanHerkTile,
            MorphVariant::Auto if vh_fits => MorphVariant::VanHerk,
            MorphVariant::Auto => MorphVariant::Separable,
            v => v,
        };
        let one = |k: MorphKernel, cfg: LaunchConfig| -> Result<Vec<Stage<T>>> {
            Ok(vec![Stage {
                func: f(k)?,
                cfg,
                args: base,
                from: Buf::Input,
                to: Buf::Output,
                unaligned: None,
            }])
        };
        let stages = match v {
            MorphVariant::OnePixel => one(MorphKernel::OnePixel, cfg(tiles(s, 32, 8, v.name())?, BLOCK_THREADS, 0))?,
            MorphVariant::MultiPixel => {
                let m = MULTI_PIXEL as usize;
                one(
                    MorphKernel::MultiPixel,
                    cfg(tiles(s, 32 * m, 8 * m, v.name())?, BLOCK_THREADS, 0),
                )?
            }
            MorphVariant::SharedTile => one(
                MorphKernel::SharedTile,
                tile_launch::<T>(gpu, s, (kh, kw), false, "the shared tile")?,
            )?,
            MorphVariant::ComposedShared => {
                if kh != kw || kh.is_multiple_of(2) {
                    return Err(Error::Unsupported {
                        variant: v.name(),
                        reason: format!("composes 3 × 3 passes into odd squares only, got {kh} × {kw}"),
                    });
                }
                one(
                    MorphKernel::ComposedShared,
                    tile_launch::<T>(gpu, s, (kh, kw), true, "the composed shared tiles")?,
                )?
            }
            MorphVariant::RowVector => {
                let k = match (kh, kw) {
                    (3, 3) => MorphKernel::RowVector3,
                    (5, 5) => MorphKernel::RowVector5,
                    _ => {
                        return Err(Error::Unsupported {
                            variant: v.name(),
                            reason: format!("is compiled for 3 × 3 and 5 × 5 windows, got {kh} × {kw}"),
                        });
                    }
                };
                let (c, tiles, strip, vector_rows) = row_vector_launch::<T>(gpu, s)?;
                let mut a = base;
                a.strip = strip;
                a.vector_rows = vector_rows;
                a.tiles = tiles;
                vec![Stage {
                    func: f(k)?,
                    cfg: c,
                    args: a,
                    from: Buf::Input,
                    to: Buf::Output,
                    unaligned: None,
                }]
            }
            MorphVariant::WordTile => {
                let inst = match (ext, kh, kw) {
                    (Extremum::Max, 3, 3) => WordTile::max3,
                    (Extremum::Max, 5, 5) => WordTile::max5,
                    (Extremum::Min, 3, 3) => WordTile::min3,
                    (Extremum::Min, 5, 5) => WordTile::min5,
                    _ => {
                        return Err(Error::Unsupported {
                            variant: v.name(),
                            reason: format!("is compiled for 3 × 3 and 5 × 5 windows, got {kh} × {kw}"),
                        });
                    }
                };
                vec![word_tile_stage::<T>(gpu, inst, s, kh, border)?]
            }
            MorphVariant::VanHerkTile => {
                if !tile_fits {
                    return Err(Error::Unsupported {
                        variant: v.name(),
                        reason: format!(
                            "takes u8 windows up to {TILE_VH_MAX_WINDOW} × {TILE_VH_MAX_WINDOW}, got {kh} × {kw} of {}",
                            std::any::type_name::<T>()
                        ),
                    });
                }
                vec![tile_vh_stage(gpu, ext, s, kh, base, v.name())?]
            }
            MorphVariant::Separable | MorphVariant::VanHerk => {
                let vh = v == MorphVariant::VanHerk;
                let no_tiles = WarpTiles::new(1, 1);
                let mut passes: Vec<(Arc<Kernel>, LaunchConfig, WarpTiles, u32, u32)> = Vec::new();
                if kh > 1 || kw == 1 {
                    passes.push(if vh && kh as u32 <= VAN_HERK_WORDS_MAX {
                        let (kernel, c, tiles, strip, vector) = van_herk_col_words_pass(gpu, s, kh, size as usize)?;
                        (f(kernel)?, c, tiles, strip, vector)
                    } else if vh && kh > 1 {
                        let rows =
                            van_herk_col_tile(kh as u32, size, VAN_HERK_SMEM).ok_or_else(|| Error::WindowTooLarge {
                                window: kh,
                                max: (VAN_HERK_SMEM / (2 * size * VAN_HERK_COLS)) as usize - 8,
                                what: "a van Herk column pass",
                            })?;
                        let rows = rows.min((s.h as u32).div_ceil(8) * 8);
                        let smem = 2 * (rows + kh as u32 - 1) as u64 * VAN_HERK_COLS as u64 * size as u64;
                        let grid = tiles(s, VAN_HERK_COLS as usize, rows as usize, v.name())?;
                        (
                            f(MorphKernel::VanHerkCols)?,
                            cfg(grid, BLOCK_THREADS, smem),
                            no_tiles,
                            rows,
                            0,
                        )
                    } else {
                        (
                            f(MorphKernel::PassCols)?,
                            cfg(tiles(s, 32, 8, v.name())?, BLOCK_THREADS, 0),
                            no_tiles,
                            0,
                            0,
                        )
                    });
                }
                if kw > 1 {
                    let doubling = doubling_row_kernel(kernels, fs, ext, size, kw as u32, anchor.1 as u32);
                    passes.push(if let (true, Some((kernel, lanes, outs))) = (vh, doubling) {
                        let (c, warps) = warp_tile_grid(
                            s,
                            s.w.div_ceil(outs as usize),
                            doubling_rows_per_warp(lanes * size) as usize,
                            v.name(),
                        )?;
                        let vector = s.w.is_multiple_of(lanes as usize) as u32;
                        (gpu.kernel(kernel)?.clone(), c, warps, outs, vector)
                    } else if vh {
                        let tile =
                            van_herk_row_tile(kw as u32, size, VAN_HERK_SMEM).ok_or_else(|| Error::WindowTooLarge {
                                window: kw,
                                max: (VAN_HERK_SMEM / (2 * size)) as usize - BLOCK_THREADS as usize,
                                what: "a van Herk row pass",
                            })?;
                        let tile = tile.min((s.w as u32).div_ceil(BLOCK_THREADS) * BLOCK_THREADS);
                        let smem = 2 * (tile + kw as u32 - 1) as u64 * size as u64;
                        let grid = blocks((s.w.div_ceil(tile as usize) * s.h * s.planes) as u64, v.name())?;
                        (
                            f(MorphKernel::VanHerkRows)?,
                            cfg(grid, BLOCK_THREADS, smem),
                            no_tiles,
                            tile,
                            0,
                        )
                    } else {
                        (
                            f(MorphKernel::PassRows)?,
                            cfg(tiles(s, 32, 8, v.name())?, BLOCK_THREADS, 0),
                            no_tiles,
                            0,
                            0,
                        )
                    });
                }
                let last = passes.len() - 1;
                passes
                    .into_iter()
                    .enumerate()
                    .map(|(i, (func, c, warps, strip, vector_rows))| {
                        let mut a = base;
                        a.strip = strip;
                        a.vector_rows = vector_rows;
                        a.tiles = warps;
                        Stage {
                            func,
                            cfg: c,
                            args: a,
                            from: if i == 0 { Buf::Input } else { Buf::Scratch },
                            to: if i == last { Buf::Output } else { Buf::Scratch },
                            unaligned: None,
                        }
                    })
                    .collect()
            }
            MorphVariant::Auto => unreachable!("resolved above"),
        };
        Self::new(gpu, s, stages, None, Filter2dPlanVariant::Morph(v))
    }

    /// Plans [`Gpu::gaussian3x3`].
    pub fn gaussian3x3(gpu: &Gpu, shape: Filter2dShape, border: Border, variant: Filter2dVariant) -> Result<Self> {
        let taps = [1, 2, 1, 2, 4, 2, 1, 2, 1];
        let k = gpu.family::<Filter2dKernels>()?;
        let (linear, fixed) = (&k.linear[T::GAUSS_LINEAR as usize], k.fixed3[T::GAUSS_FIXED as usize]);
        fixed3_plan::<T, T>(gpu, shape, border, variant, &taps, 4, linear, (fixed, WordTile::gauss))
    }

    /// Plans [`Gpu::separable2d`]: `ky` down the columns, then `kx` along the rows.
    pub fn separable(gpu: &Gpu, s: Filter2dShape, ky: &[f64], kx: &[f64], border: Border) -> Result<Self> {
        check_shape(s)?;
        for (name, k) in [("ky", ky), ("kx", kx)] {
            if k.is_empty() {
                return Err(Error::InvalidArgument {
                    name,
                    reason: "a 1D kernel needs at least one tap".into(),
                });
            }
            if let Some(t) = k.iter().find(|t| !t.is_finite()) {
                return Err(Error::InvalidArgument {
                    name,
                    reason: format!("taps must be finite, got {t}"),
                });
            }
        }
        let taps = ky.len() + kx.len();
        if taps * 8 > crate::abi::CONSTANT_BANK_BYTES {
            return Err(Error::TooManyTaps {
                taps,
                max: crate::abi::CONSTANT_BANK_BYTES / 8,
            });
        }
        check_window((ky.len(), kx.len()))?;
        let bytes: Vec<u8> = ky.iter().chain(kx).flat_map(|t| t.to_le_bytes()).collect();
        let fs = &gpu.family::<Filter2dKernels>()?.passes[T::PASS as usize];
        let base = args::<T>(s, (ky.len(), kx.len()), (ky.len() / 2, kx.len() / 2), border);
        let grid = cfg(tiles(s, 32, 8, "separable")?, BLOCK_THREADS, 0);
        let mut cols = base;
        cols.shift = symmetry(ky);
        let mut rows = base;
        rows.tap_offset = (ky.len() * 8) as u32;
        rows.shift = symmetry(kx);
        let stages = vec![
            Stage {
                func: gpu.kernel(fs[0])?.clone(),
                cfg: grid,
                args: cols,
                from: Buf::Input,
                to: Buf::Scratch,
                unaligned: None,
            },
            Stage {
                func: gpu.kernel(fs[1])?.clone(),
                cfg: grid,
                args: rows,
                from: Buf::Scratch,
                to: Buf::Output,
                unaligned: None,
            },
        ];
        Self::new(gpu, s, stages, Some(&bytes), Filter2dPlanVariant::Separable)
    }
}

impl<T: SobelElement> Filter2dPlan<T, T::Out> {
    /// Plans [`Gpu::sobel`] along `axis` (0: down the columns, 1: along the rows).
    pub fn sobel(
        gpu: &Gpu,
        shape: Filter2dShape,
        axis: usize,
        border: Border,
        variant: Filter2dVariant,
    ) -> Result<Self> {
        let taps: [i32; 9] = match axis {
            0 => [-1, -2, -1, 0, 0, 0, 1, 2, 1],
            1 => [-1, 0, 1, -2, 0, 2, -1, 0, 1],
            _ => {
                return Err(Error::InvalidArgument {
                    name: "axis",
                    reason: format!("a 2D Sobel filter differentiates along axis 0 or 1, got {axis}"),
                });
            }
        };
        let k = gpu.family::<Filter2dKernels>()?;
        fixed3_plan::<T, T::Out>(
            gpu,
            shape,
            border,
            variant,
            &taps,
            0,
            &k.linear[T::LINEAR as usize],
            (
                k.fixed3[T::FIXED[axis] as usize],
                [WordTile::sobel0, WordTile::sobel1][axis],
            ),
        )
    }
}

impl Filter2dPlan<f32, f32> {
    /// Plans [`Gpu::correlate2d`] with `kernel` (row-major `kh × kw`, f32 taps in the constant
    /// bank: at most 16384).
    pub fn correlate(
        gpu: &Gpu,
        s: Filter2dShape,
        kernel: ArrayView2<f32>,
        border: Border,
        variant: Filter2dVariant,
    ) -> Result<Self> {
        let (kh, kw) = kernel.dim();
        check_window((kh, kw))?;
        check_shape(s)?;
        let max = crate::abi::CONSTANT_BANK_BYTES / 4;
        if kh * kw > max {
            return Err(Error::TooManyTaps { taps: kh * kw, max });
        }
        if let Some(t) = kernel.iter().find(|t| !t.is_finite()) {
            return Err(Error::InvalidArgument {
                name: "kernel",
                reason: format!("taps must be finite, got {t}"),
            });
        }
        let bytes: Vec<u8> = kernel.iter().flat_map(|t| t.to_le_bytes()).collect();
        let fs = &gpu.family::<Filter2dKernels>()?.linear[LinearInstance::f32_f32 as usize];
        let v = match variant {
            Filter2dVariant::Auto => {
                if tile_launch::<f32>(gpu, s, (kh, kw), false, "").is_ok() {
                    Filter2dVariant::SharedTile
                } else {
                    Filter2dVariant::MultiPixel
                }
            }
            Filter2dVariant::RowVector | Filter2dVariant::WordTile => {
                return Err(Error::Unsupported {
                    variant: variant.name(),
                    reason: "runs the fixed 3 × 3 filters (gaussian3x3, sobel) only".into(),
                });
            }
            v => v,
        };
        let stage = taps2d_stage::<f32>(gpu, s, (kh, kw), border, v, fs, 0)?;
        Self::new(gpu, s, vec![stage], Some(&bytes), Filter2dPlanVariant::Linear(v))
    }
}

/// scipy's symmetry test of 1D taps (odd lengths only): symmetric, antisymmetric or neither,
/// which selects `NI_Correlate1D`'s summation order (the passes reproduce it bit for bit).
pub fn symmetry(k: &[f64]) -> u32 {
    let r = k.len() / 2;
    if k.len().is_multiple_of(2) {
        return TAPS_GENERAL;
    }
    let pairs = || (1..=r).map(|i| (k[r - i], k[r + i]));
    if pairs().all(|(a, b)| (a - b).abs() <= f64::EPSILON) {
        TAPS_SYMMETRIC
    } else if pairs().all(|(a, b)| (a + b).abs() <= f64::EPSILON) {
        TAPS_ANTISYMMETRIC
    } else {
        TAPS_GENERAL
    }
}

/// The one launch of a 2D-taps rung (`OnePixel`, `MultiPixel`, `SharedTile`).
fn taps2d_stage<T: Filter2dElement>(
    gpu: &Gpu,
    s: Filter2dShape,
    (kh, kw): (usize, usize),
    border: Border,
    v: Filter2dVariant,
    fs: &[KernelId; 3],
    shift: u32,
) -> Result<Stage<T>> {
    let mut a = args::<T>(s, (kh, kw), (kh / 2, kw / 2), border);
    a.shift = shift;
    let m = MULTI_PIXEL as usize;
    let (i, c) = match v {
        Filter2dVariant::OnePixel => (0, cfg(tiles(s, 32, 8, v.name())?, BLOCK_THREADS, 0)),
        Filter2dVariant::MultiPixel => (1, cfg(tiles(s, 32 * m, 8 * m, v.name())?, BLOCK_THREADS, 0)),
        Filter2dVariant::SharedTile => (2, tile_launch::<T>(gpu, s, (kh, kw), false, "the shared tile")?),
        _ => unreachable!("callers resolve the fixed rungs"),
    };
    Ok(Stage {
        func: gpu.kernel(fs[i])?.clone(),
        cfg: c,
        args: a,
        from: Buf::Input,
        to: Buf::Output,
        unaligned: None,
    })
}

/// A fixed 3 × 3 filter's plan: its integer taps for the 2D-taps rungs (divided by `2^shift`;
/// f32 images get the taps scaled by `2^−shift`), `fixed` = the row-vector and the word-tile
/// kernels for those rungs (`Auto`: word tile for u8, row vector otherwise).
#[allow(clippy::too_many_arguments)]
fn fixed3_plan<I: Filter2dElement, O: DeviceRepr>(
    gpu: &Gpu,
    s: Filter2dShape,
    border: Border,
    variant: Filter2dVariant,
    taps: &[i32; 9],
    shift: u32,
    linear: &[KernelId; 3],
    (fixed, words): (KernelId, WordTile),
) -> Result<Filter2dPlan<I, O>> {
    check_shape(s)?;
    let v = match variant {
        Filter2dVariant::Auto if I::WORD_TILE => Filter2dVariant::WordTile,
        Filter2dVariant::Auto => Filter2dVariant::RowVector,
        v => v,
    };
    if v == Filter2dVariant::WordTile {
        let stage = word_tile_stage::<I>(gpu, words, s, 3, border)?;
        return Filter2dPlan::new(gpu, s, vec![stage], None, Filter2dPlanVariant::Linear(v));
    }
    if v == Filter2dVariant::RowVector {
        let (c, tiles, strip, vector_rows) = row_vector_launch::<I>(gpu, s)?;
        let mut a = args::<I>(s, (3, 3), (1, 1), border);
        a.strip = strip;
        a.vector_rows = vector_rows;
        a.tiles = tiles;
        let stage = Stage {
            func: gpu.kernel(fixed)?.clone(),
            cfg: c,
            args: a,
            from: Buf::Input,
            to: Buf::Output,
            unaligned: None,
        };
        return Filter2dPlan::new(gpu, s, vec![stage], None, Filter2dPlanVariant::Linear(v));
    }
    let bytes: Vec<u8> = if I::INTEGER {
        taps.iter().flat_map(|t| t.to_le_bytes()).collect()
    } else {
        let scale = 1.0 / (1u32 << shift) as f32;
        taps.iter().flat_map(|&t| (t as f32 * scale).to_le_bytes()).collect()
    };
    let shift = if I::INTEGER { shift } else { 0 };
    let stage = taps2d_stage::<I>(gpu, s, (3, 3), border, v, linear, shift)?;
    Filter2dPlan::new(gpu, s, vec![stage], Some(&bytes), Filter2dPlanVariant::Linear(v))
}

// ---------------------------------------------------------------------------------------------
// Ops
// ---------------------------------------------------------------------------------------------

/// scipy's Gaussian taps: radius `⌊4σ + 0.5⌋`, `exp(−x²/2σ²)` normalized to sum 1.
pub fn gaussian_taps(sigma: f64) -> Result<Vec<f64>> {
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(Error::InvalidArgument {
            name: "sigma",
            reason: format!("must be finite and > 0, got {sigma}"),
        });
    }
    let radius = (4.0 * sigma + 0.5) as i64;
    if radius > 63 {
        return Err(Error::InvalidArgument {
            name: "sigma",
            reason: format!(
                "{sigma} gives a {}-tap kernel; at most 127 taps (sigma < 15.75)",
                2 * radius + 1
            ),
        });
    }
    let phi: Vec<f64> = (-radius..=radius)
        .map(|x| (-0.5 / (sigma * sigma) * (x * x) as f64).exp())
        .collect();
    let sum = numpy_sum(&phi);
    Ok(phi.into_iter().map(|p| p / sum).collect())
}

/// `np.sum` of a short f64 array, in numpy's order (`pairwise_sum`: below 8 elements a plain
/// loop; up to 128, eight interleaved partial sums combined as a tree, then the rest in order),
/// so that the taps equal scipy's to the last bit.
fn numpy_sum(a: &[f64]) -> f64 {
    if a.len() < 8 {
        return a.iter().fold(-0.0, |s, v| s + v);
    }
    debug_assert!(a.len() <= 128, "numpy recurses past 128 elements");
    let mut r: [f64; 8] = a[..8].try_into().expect("eight elements");
    let blocks = a.len() - a.len() % 8;
    for chunk in a[8..blocks].chunks_exact(8) {
        for (ri, v) in r.iter_mut().zip(chunk) {
            *ri += v;
        }
    }
    let mut s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for v in &a[blocks..] {
        s += v;
    }
    s
}

impl Gpu {
    /// Runs a plan built for `x`'s shape into a fresh output.
    fn run_filter2d<I, O, D, X>(
        &self,
        x: &X,
        plan: impl FnOnce(Filter2dShape) -> Result<Filter2dPlan<I, O>>,
    ) -> Result<DeviceArray<O, D>>
    where
        I: Filter2dElement,
        O: DeviceRepr + Clone,
        D: Dimension,
        X: Operand<Elem = I, Dim = D>,
    {
        let dim = x.dims();
        let (planes, h, w) = planes_and_size(dim.slice())?;
        let plan = plan(Filter2dShape { planes, h, w })?;
        let mut y = DeviceArray::<O, D>::uninit(self, dim)?;
        if let Some(input) = x.device(self)? {
            plan.enqueue(self, input.slice(), y.as_mut_slice())?;
        }
        Ok(y)
    }

    /// Grey dilation: the maximum over a `(h, w)` rectangle (scipy `grey_dilation(x, size=(h, w))`,
    /// OpenCV `dilate` with a rectangle), over the last two axes, `Auto` variant.
    ///
    /// ```no_run
    /// # use gpuprims::{Gpu, Border};
    /// let gpu = Gpu::new()?;
    /// let img = ndarray::Array2::<u8>::from_shape_fn((480, 640), |(y, x)| ((x * y) % 251) as u8);
    /// let d = gpu.dilate(&img, (5, 5), Border::Reflect)?;
    /// assert!(d.iter().zip(img.iter()).all(|(d, x)| d >= x));
    /// # Ok::<(), gpuprims::Error>(())
    /// ```
    pub fn dilate<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<X::Output<T>> {
        self.dilate_with(x, window, border, MorphVariant::Auto)
    }

    /// [`Gpu::dilate`] with a chosen rung of the ladder.
    pub fn dilate_with<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: MorphVariant,
    ) -> Result<X::Output<T>> {
        let y = self.run_filter2d(&x, |s| Filter2dPlan::dilate(self, s, window, border, variant))?;
        X::finish(self, y)
    }

    /// Grey erosion: the minimum over a `(h, w)` rectangle (scipy `grey_erosion(x, size=(h, w))`),
    /// `Auto` variant.
    pub fn erode<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<X::Output<T>> {
        self.erode_with(x, window, border, MorphVariant::Auto)
    }

    /// [`Gpu::erode`] with a chosen rung of the ladder.
    pub fn erode_with<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: MorphVariant,
    ) -> Result<X::Output<T>> {
        let y = self.run_filter2d(&x, |s| Filter2dPlan::erode(self, s, window, border, variant))?;
        X::finish(self, y)
    }

    /// Morphological gradient, dilation − erosion (scipy `morphological_gradient(x, size=…)`).
    pub fn morphological_gradient<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<X::Output<T>> {
        let mut dil = self.run_filter2d(&x, |s| {
            Filter2dPlan::dilate(self, s, window, border, MorphVariant::Auto)
        })?;
        let ero = self.run_filter2d(&x, |s| Filter2dPlan::erode(self, s, window, border, MorphVariant::Auto))?;
        let n = dil.len();
        if n > 0 {
            let inst = T::MAX as usize;
            let func = self.kernel(self.family::<Filter2dKernels>()?.morph[inst][MorphKernel::Difference as usize])?;
            let grid = elementwise_grid(n);
            let stream = self.stream();
            let dil_ptr = dil.as_slice().device_ptr(stream).0;
            let n64 = n as u64;
            let mut b = func.launch_on(self)?;
            b.arg(&dil_ptr).arg(ero.as_slice()).arg(dil.as_mut_slice()).arg(&n64);
            // SAFETY: `(a, b: *const T, y: *mut T, n: u64)`, y = a − b in place over the
            // dilation (`a` is its address: each thread reads element i before writing it); all
            // hold n elements.
            unsafe { b.launch(cfg(grid, BLOCK_THREADS, 0)) }?;
        }
        X::finish(self, dil)
    }

    /// Grey opening, erosion then dilation (scipy `grey_opening(x, size=…)`).
    pub fn opening<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<X::Output<T>> {
        let e = self.run_filter2d(&x, |s| Filter2dPlan::erode(self, s, window, border, MorphVariant::Auto))?;
        let y = self.run_filter2d(&&e, |s| {
            Filter2dPlan::dilate(self, s, window, border, MorphVariant::Auto)
        })?;
        X::finish(self, y)
    }

    /// Grey closing, dilation then erosion (scipy `grey_closing(x, size=…)`).
    pub fn closing<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<X::Output<T>> {
        let d = self.run_filter2d(&x, |s| {
            Filter2dPlan::dilate(self, s, window, border, MorphVariant::Auto)
        })?;
        let y = self.run_filter2d(&&d, |s| {
            Filter2dPlan::erode(self, s, window, border, MorphVariant::Auto)
        })?;
        X::finish(self, y)
    }

    /// The classic 3 × 3 Gaussian `[1 2 1]ᵀ[1 2 1] / 16`: integers `(Σ + 8) >> 4` of the exact sum
    /// (bit-exact), f32 `Σ / 16`. `Auto` variant.
    pub fn gaussian3x3<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        border: Border,
    ) -> Result<X::Output<T>> {
        self.gaussian3x3_with(x, border, Filter2dVariant::Auto)
    }

    /// [`Gpu::gaussian3x3`] with a chosen rung.
    pub fn gaussian3x3_with<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        border: Border,
        variant: Filter2dVariant,
    ) -> Result<X::Output<T>> {
        let y = self.run_filter2d(&x, |s| Filter2dPlan::gaussian3x3(self, s, border, variant))?;
        X::finish(self, y)
    }

    /// Gaussian filter with scipy's `gaussian_filter(x, sigma, mode, cval, truncate=4.0)` taps,
    /// applied down the columns then along the rows (integers: each pass truncated, as scipy).
    pub fn gaussian<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        sigma: f64,
        border: Border,
    ) -> Result<X::Output<T>> {
        let taps = gaussian_taps(sigma)?;
        self.separable2d(x, &taps, &taps, border)
    }

    /// Separable correlation: `ky` along axis −2 (scipy `correlate1d(x, ky, axis=0)`), then `kx`
    /// along axis −1, each pass extending its input by `border` (scipy's `gaussian_filter`/`sobel`
    /// order and semantics). Taps are centred at `len / 2`.
    pub fn separable2d<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        ky: &[f64],
        kx: &[f64],
        border: Border,
    ) -> Result<X::Output<T>> {
        let y = self.run_filter2d(&x, |s| Filter2dPlan::separable(self, s, ky, kx, border))?;
        X::finish(self, y)
    }

    /// Sobel derivative along `axis` (0: rows, i.e. down the columns; 1: columns), scipy's
    /// `sobel(x, axis)` kernel and sign (`[-1 0 1]` along the axis, `[1 2 1]` across). `u8` gives
    /// the exact `i16`; `f32` gives `f32`. `Auto` variant.
    ///
    /// One difference from scipy: under `Border::Constant(v)` with `v ≠ 0`, scipy applies the
    /// constant again to its first 1D pass's result, gpuprims extends the image once (the 2D
    /// definition); the outputs next to the border differ. `Zero` and the other modes agree.
    pub fn sobel<T: SobelElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        axis: usize,
        border: Border,
    ) -> Result<X::Output<T::Out>> {
        self.sobel_with(x, axis, border, Filter2dVariant::Auto)
    }

    /// [`Gpu::sobel`] with a chosen rung.
    pub fn sobel_with<T: SobelElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        axis: usize,
        border: Border,
        variant: Filter2dVariant,
    ) -> Result<X::Output<T::Out>> {
        let y = self.run_filter2d(&x, |s| Filter2dPlan::sobel(self, s, axis, border, variant))?;
        X::finish(self, y)
    }

    /// Gradient magnitude `√(sobel(x, 0)² + sobel(x, 1)²)` in f32 (`np.hypot` of scipy's two Sobel
    /// images).
    pub fn sobel_magnitude<T: SobelElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        border: Border,
    ) -> Result<X::Output<f32>> {
        let g0 = self.run_filter2d(&x, |s| Filter2dPlan::sobel(self, s, 0, border, Filter2dVariant::Auto))?;
        let g1 = self.run_filter2d(&x, |s| Filter2dPlan::sobel(self, s, 1, border, Filter2dVariant::Auto))?;
        let mut y = DeviceArray::<f32, X::Dim>::uninit(self, x.dims())?;
        let n = y.len();
        if n > 0 {
            let func = self.kernel(self.family::<Filter2dKernels>()?.magnitude[T::MAGNITUDE])?;
            let grid = elementwise_grid(n);
            let n64 = n as u64;
            let mut b = func.launch_on(self)?;
            b.arg(g0.as_slice()).arg(g1.as_slice()).arg(y.as_mut_slice()).arg(&n64);
            // SAFETY: `(a, b: *const T::Out, y: *mut f32, n: u64)`; all hold n elements.
            unsafe { b.launch(cfg(grid, BLOCK_THREADS, 0)) }?;
        }
        X::finish(self, y)
    }

    /// 2D correlation with a small `f32` kernel (scipy `correlate(x, kernel)`, centred at
    /// `(kh/2, kw/2)`), taps in the constant bank (at most 16384). `Auto` variant.
    pub fn correlate2d<X: Operand<Elem = f32>>(
        &self,
        x: X,
        kernel: ArrayView2<f32>,
        border: Border,
    ) -> Result<X::Output<f32>> {
        self.correlate2d_with(x, kernel, border, Filter2dVariant::Auto)
    }

    /// [`Gpu::correlate2d`] with a chosen rung.
    pub fn correlate2d_with<X: Operand<Elem = f32>>(
        &self,
        x: X,
        kernel: ArrayView2<f32>,
        border: Border,
        variant: Filter2dVariant,
    ) -> Result<X::Output<f32>> {
        let y = self.run_filter2d(&x, |s| Filter2dPlan::correlate(self, s, kernel, border, variant))?;
        X::finish(self, y)
    }
}
