//! Contract of the 2D filter family (morphology and linear filters over the last two axes):
//! launch arguments, the element rules both sides share (extremes, NaN-propagating max/min), the
//! tile geometry of the shared-memory rungs and the instance lists that name every kernel.

/// Launch arguments of every 2D filter kernel: `planes` planes of `h × w` (C order), a window of
/// `kh × kw` whose output `(y, x)` reads rows `y − ay .. y − ay + kh` and columns
/// `x − ax .. x − ax + kw` of the border-extended plane.
///
/// The separable passes read only their axis: the column pass uses `kh`/`ay`, the row pass
/// `kw`/`ax`. Geometry is 32-bit (the host checks `h, w < 2^30` and the window the same); the
/// plane index and flat offsets are 64-bit.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Filter2dArgs<T> {
    pub planes: u64,
    pub h: u32,
    pub w: u32,
    pub kh: u32,
    pub kw: u32,
    pub ay: u32,
    pub ax: u32,
    /// `BorderMode` code.
    pub border: u32,
    /// Rows per thread (row-vector kernel), tile count per plane row (van Herk), or unused.
    pub strip: u32,
    /// Byte offset in the constant bank of the first tap (linear filters; taps row-major).
    pub tap_offset: u32,
    /// Integer linear filters: the sum is divided by `2^(shift & !SHIFT_TRUNCATE)`, rounding
    /// half up, or down (an arithmetic shift) when [`SHIFT_TRUNCATE`] is set.
    pub shift: u32,
    /// 1 when the row-vector kernel may use 16-byte loads (rows of whole vectors, aligned
    /// buffers); 0: element loads throughout.
    pub vector_rows: u32,
    /// Word tile: rows below its own tile whose tile's output rows a warp asks L2 for as it
    /// starts (a fraction of a wave of warps ahead, set by the host, so a later warp's loads find
    /// their rows on the way to L2); 0: none. Unused by the others.
    pub prefetch_rows: u32,
    /// The kernels whose tiles are warps (`warp_tile_origin`): dividers by the warp tiles across
    /// a plane and down it, which split a warp's index into its tile in a multiply-high and a
    /// shift each. Unused by the others.
    pub tiles: WarpTiles,
    /// The value outside the plane in the constant mode.
    pub cval: T,
}

/// [`Filter2dArgs::shift`] flag of the integer 2D-taps kernels: divide by rounding down (the
/// classic tutorial's `Σ >> 4`) rather than half up.
pub const SHIFT_TRUNCATE: u32 = 1 << 31;

/// Warp tiles of a plane: `across` divides by the tiles across a row of tiles, `down` by the
/// rows of tiles. Warp `t` of a launch takes tile `t mod across` of row of tiles
/// `(t / across) mod down` of plane `t / (across · down)` (the word tile launches its last row of
/// tiles first: `edge_strips_first` in kernels-gpu/src/filter2d/direct.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpTiles {
    pub across: super::FastDiv,
    pub down: super::FastDiv,
}

impl WarpTiles {
    /// `across × down` tiles per plane.
    pub const fn new(across: u32, down: u32) -> WarpTiles {
        WarpTiles {
            across: super::FastDiv::new(across),
            down: super::FastDiv::new(down),
        }
    }
}

/// An element of the morphology kernels: its extremes (the identity of max and min) and the
/// NaN-propagating max/min both sides use (numpy's `maximum`/`minimum`: a NaN in the window makes
/// the result NaN; windows without one are unaffected).
pub trait MorphValue: Copy + PartialOrd {
    const LOWEST: Self;
    const HIGHEST: Self;
    /// `max(a, b)`, NaN if either is NaN.
    #[inline(always)]
    #[allow(clippy::eq_op)]
    fn max_nan(a: Self, b: Self) -> Self {
        if b > a || b != b { b } else { a }
    }
    /// `min(a, b)`, NaN if either is NaN.
    #[inline(always)]
    #[allow(clippy::eq_op)]
    fn min_nan(a: Self, b: Self) -> Self {
        if b < a || b != b { b } else { a }
    }
}

impl MorphValue for u8 {
    const LOWEST: u8 = 0;
    const HIGHEST: u8 = u8::MAX;
}
impl MorphValue for u16 {
    const LOWEST: u16 = 0;
    const HIGHEST: u16 = u16::MAX;
}
impl MorphValue for f32 {
    const LOWEST: f32 = f32::NEG_INFINITY;
    const HIGHEST: f32 = f32::INFINITY;
}

/// Threads per block of every 2D filter kernel.
pub const BLOCK_THREADS: u32 = 256;
/// Threads per block of the row-vector kernel (one row of 128 vectors).
pub const ROW_VECTOR_THREADS: u32 = 128;
/// Outputs per thread of `MultiPixel` along each axis (a 4 × 4 block).
pub const MULTI_PIXEL: u32 = 4;
/// Output tile of `SharedTile` and `ComposedShared`: 64 columns × 32 rows, 256 threads of 2 × 4
/// outputs.
pub const TILE_W: u32 = 64;
pub const TILE_H: u32 = 32;

/// Elements of one staged tile for a `kh × kw` window (the outputs' tile plus the window's halo).
pub const fn tile_elems(kh: u32, kw: u32) -> u64 {
    (TILE_H + kh - 1) as u64 * (TILE_W + kw - 1) as u64
}

/// Dynamic shared memory of `SharedTile` (one staged tile) and `ComposedShared` (two tiles, the
/// passes ping-pong between them) for elements of `size` bytes.
pub const fn tile_smem_bytes(kh: u32, kw: u32, size: u32, composed: bool) -> u64 {
    let one = tile_elems(kh, kw) * size as u64;
    // 16-byte alignment of the second buffer.
    if composed { 2 * one.div_ceil(16) * 16 } else { one }
}

/// Outputs of a van Herk row tile for a window of `k`: the tile plus its `k − 1` halo, twice
/// (prefix and suffix maxima), must fit `smem` bytes; `None` when not even one output per
/// thread fits (the window is too long for the rung).
pub const fn van_herk_row_tile(k: u32, size: u32, smem: u32) -> Option<u32> {
    let elems = smem / (2 * size);
    if elems < k - 1 + BLOCK_THREADS {
        return None;
    }
    let t = elems - (k - 1);
    Some(t - t % BLOCK_THREADS)
}

/// Columns of a van Herk column tile (one warp wide); its rows follow from the window like the
/// row tile's outputs.
pub const VAN_HERK_COLS: u32 = 32;

/// Rows of a van Herk column tile of `VAN_HERK_COLS` columns for a window of `k` (see
/// [`van_herk_row_tile`]).
pub const fn van_herk_col_tile(k: u32, size: u32, smem: u32) -> Option<u32> {
    let rows = smem / (2 * size * VAN_HERK_COLS);
    let groups = BLOCK_THREADS / VAN_HERK_COLS;
    if rows < k - 1 + groups {
        return None;
    }
    let t = rows - (k - 1);
    Some(t - t % groups)
}

/// Shared memory the van Herk kernels are sized for (below the 48 KiB every launch may use).
pub const VAN_HERK_SMEM: u32 = 32 * 1024;

/// Warps per block of the word-stream column pass and the doubling row pass (blocks of
/// `ROW_VECTOR_THREADS`, one tile per warp).
pub const WORD_PASS_WARPS: u32 = ROW_VECTOR_THREADS / 32;

/// Dynamic shared memory of the word-stream van Herk column pass for a window of `k` rows: each
/// lane keeps one 4-byte word per row of a van Herk block (`k` words).
pub const fn van_herk_words_smem(k: u32) -> u64 {
    WORD_PASS_WARPS as u64 * 32 * 4 * k as u64
}

/// Most rows of a window the word-stream column pass takes (its stacks within 48 KiB); longer
/// windows take the tiled van Herk column pass.
pub const VAN_HERK_WORDS_MAX: u32 = 48 * 1024 / (WORD_PASS_WARPS * 32 * 4);

/// Output rows per warp of the doubling row passes of 16 bytes per lane (u16, f32, u8 windows
/// past 129 columns).
pub const DOUBLING_ROWS: u32 = 16;
/// Output rows per warp of the u8 doubling row passes of 8 bytes per lane. More, shorter warps
/// ran faster on the H100 up to a point: the 1 × 31 row pass (8192²) took 63.8–64.1 µs at 10 rows
/// against 66.3–67.0 at 16, 89.7–90.0 at 32 and 63.9–64.2 at 8; 73.3–74.7 at 4 in a build with
/// the count a run-time knob. The 16-byte passes were not timed with
/// other counts and keep [`DOUBLING_ROWS`].
pub const DOUBLING_U8_ROWS: u32 = 10;

/// Output rows per warp of a doubling row pass of `lane_bytes` (8 or 16) bytes per lane.
pub const fn doubling_rows_per_warp(lane_bytes: u32) -> u32 {
    if lane_bytes == 8 {
        DOUBLING_U8_ROWS
    } else {
        DOUBLING_ROWS
    }
}

/// Rows whose loads a doubling-row warp keeps in flight ahead of the row it filters (its rows
/// are in L2 already: the warp prefetched them): the 16-byte passes.
pub const DOUBLING_AHEAD: u32 = 2;
/// [`DOUBLING_AHEAD`] of the u8 8-byte passes: with 10-row warps one row ran faster than two on
/// the H100 (1 × 31 row pass 63.7–64.0 → 62.4–62.5 µs; three rows 64.2–64.6).
pub const DOUBLING_U8_AHEAD: u32 = 1;

/// Outputs per warp of the doubling row pass for a window of `k` columns anchored at `ax`, with
/// `n` elements per lane (16 or 8 bytes): the warp loads `32 · n` columns from a boundary of
/// `n` elements `ceil(ax / n)` lanes left of its first output, so its last window must end
/// inside them; a multiple of `n`. `None` when that leaves fewer than half the warp's lanes
/// producing outputs (the window is too long for the pass: the tiled van Herk row pass takes it).
pub const fn doubling_row_outputs(k: u32, ax: u32, n: u32) -> Option<u32> {
    let halo = ax.div_ceil(n) * n;
    let span = 32 * n;
    if halo + k - 1 - ax + 16 * n > span {
        return None;
    }
    // Columns from the first window's start to the span's end, less the last window's tail.
    let avail = span - (halo - ax) - (k - 1);
    Some(avail - avail % n)
}

/// Whether the doubling row pass for a window of `k` columns with `n` elements per lane takes
/// the step from runs of `d` elements to runs of `2d` (`d` a power of two): while `2d ≤ k`, and
/// `d ≤ 8n` (the farthest shuffle, 8 lanes).
pub const fn doubling_takes_step(d: u32, k: u32, n: u32) -> bool {
    d as u64 <= 8 * n as u64 && 2 * d as u64 <= k as u64
}

/// Doubling steps of the doubling row pass for a window of `k` columns with `n` elements per
/// lane: the run lengths `d = 1, 2, 4, …` that [`doubling_takes_step`] takes.
pub const fn doubling_steps(k: u32, n: u32) -> u32 {
    let (mut steps, mut d) = (0, 1u32);
    while doubling_takes_step(d, k, n) {
        steps += 1;
        d *= 2;
    }
    steps
}

/// The u8 doubling row passes of 8 bytes per lane, one per fold and number of doubling steps
/// (every step count of the windows that pass takes, 2 to 129 columns): `name => fold, steps`.
/// The steps run as straight-line code; the run-time-steps pass (the 16-byte `doubling_rows`)
/// tests `k` before each step and joins the registers after it, about 40 more instructions per
/// row at 8 bytes per lane.
#[macro_export]
macro_rules! for_each_doubling_u8_instance {
    ($m:ident) => {
        $m! {
            max_u8_s1 => Max, 1;
            max_u8_s2 => Max, 2;
            max_u8_s3 => Max, 3;
            max_u8_s4 => Max, 4;
            max_u8_s5 => Max, 5;
            max_u8_s6 => Max, 6;
            max_u8_s7 => Max, 7;
            min_u8_s1 => Min, 1;
            min_u8_s2 => Min, 2;
            min_u8_s3 => Min, 3;
            min_u8_s4 => Min, 4;
            min_u8_s5 => Min, 5;
            min_u8_s6 => Min, 6;
            min_u8_s7 => Min, 7;
        }
    };
}

/// Symbol of a fixed-steps u8 doubling row pass.
#[macro_export]
macro_rules! doubling_u8_kernel_name {
    ($inst:ident) => {
        concat!($crate::kernel_prefix!(), "doubling_rows_", stringify!($inst))
    };
}

/// Outputs one thread of a separable pass computes in a run, consecutive along the pass: a
/// column-pass block covers 32 columns × `8 · PASS_RUN` rows, a row-run block `32 · PASS_RUN`
/// columns × [`PASS_ROW_WARPS`] rows (a warp a row). (The plain row pass computes one output a thread.)
pub const PASS_RUN: u32 = 8;
/// Largest radius (`len / 2`) of symmetric and antisymmetric taps whose runs convert each sample
/// to f64 once and keep the run's window in registers; other taps (and runs whose windows leave
/// the line) are summed output by output.
pub const PASS_MAX_RADIUS: u32 = 8;

/// Samples a warp of the row-run pass stages: its 32 runs and the largest window's halo.
pub const PASS_ROW_SEGMENT: u32 = 32 * PASS_RUN + 2 * PASS_MAX_RADIUS;
/// f64 slots of a warp's staged segment: sample `q` at `q + q / PASS_RUN` (a pad after each run
/// of `PASS_RUN`), so the 32 lanes reading their runs' `t`-th samples hit distinct banks.
pub const PASS_ROW_SLOTS: u32 = PASS_ROW_SEGMENT + PASS_ROW_SEGMENT.div_ceil(PASS_RUN);
/// Warps (rows) of a row-run block: blocks of 4 warps fit 5 to an SM at the pass's 92 registers
/// (20 warps), where blocks of 8 fit 2 (16), and bounding those to 3 an SM spills.
pub const PASS_ROW_WARPS: u32 = 4;
/// Dynamic shared memory of a row-run block: its warps' segments.
pub const PASS_ROW_SHARED_BYTES: u32 = PASS_ROW_WARPS * PASS_ROW_SLOTS * 8;

/// Output tile of the fused separable kernel (`linear_*_tile`): 48 columns × 32 rows. A block of
/// [`BLOCK_THREADS`] stages the tile and [`PASS_MAX_RADIUS`] on every side (64 × 48 samples), so
/// its column pass is one run of [`PASS_RUN`] rows for every thread (64 columns × 4 runs).
pub const PASS_TILE_W: u32 = 48;
pub const PASS_TILE_H: u32 = 32;
const _: () = assert!((PASS_TILE_W + 2 * PASS_MAX_RADIUS) * (PASS_TILE_H / PASS_RUN) == BLOCK_THREADS);
const _: () = assert!(PASS_TILE_W + 2 * PASS_MAX_RADIUS == 64 && PASS_TILE_H == 32);
/// f64 slots between two staged rows of the fused kernel: the staged row and one pad, an odd
/// count, so 32 lanes on 32 rows of one column hit distinct banks (the row pass's lanes).
pub const PASS_TILE_PITCH: u32 = PASS_TILE_W + 2 * PASS_MAX_RADIUS + 1;
/// Dynamic shared memory of a fused-kernel block: its staged rows as f64. The column pass's
/// results replace the rows it has read, the row pass's the first rows, so nothing else is kept.
pub const PASS_TILE_SHARED_BYTES: u32 = (PASS_TILE_H + 2 * PASS_MAX_RADIUS) * PASS_TILE_PITCH * 8;

/// [`Filter2dArgs::shift`] of the fused kernel: the column taps' symmetry code in the low byte,
/// the row taps' in the next (each a [`symmetry`] code).
pub const fn tile_symmetries(cols: u32, rows: u32) -> u32 {
    cols | rows << 8
}

/// Whether a pass with these taps runs in runs (the column pass's register path, the row-run
/// pass): symmetric or antisymmetric taps of radius at most [`PASS_MAX_RADIUS`].
pub fn pass_runs(k: &[f64]) -> bool {
    symmetry(k) != TAPS_GENERAL && k.len() / 2 <= PASS_MAX_RADIUS as usize
}

/// Symmetry codes of a separable pass's taps (`Filter2dArgs::shift` of the pass launches), as
/// scipy's `NI_Correlate1D` detects them (odd lengths): they select its summation order.
pub const TAPS_GENERAL: u32 = 0;
pub const TAPS_SYMMETRIC: u32 = 1;
pub const TAPS_ANTISYMMETRIC: u32 = 2;

/// scipy's symmetry test of 1D taps (odd lengths only): symmetric, antisymmetric or neither,
/// which selects `NI_Correlate1D`'s summation order (the passes reproduce it bit for bit).
pub fn symmetry(k: &[f64]) -> u32 {
    let r = k.len() / 2;
    if k.len().is_multiple_of(2) {
        return TAPS_GENERAL;
    }
    let pairs = || (1..=r).map(|i| (k[r - i], k[r + i]));
    // |v| ≤ ε written as two comparisons (no float `abs` needed in this no_std module).
    let small = |v: f64| v <= f64::EPSILON && -v <= f64::EPSILON;
    if pairs().all(|(a, b)| small(a - b)) {
        TAPS_SYMMETRIC
    } else if pairs().all(|(a, b)| small(a + b)) {
        TAPS_ANTISYMMETRIC
    } else {
        TAPS_GENERAL
    }
}

/// Symbol of morphology kernel `$k` of instance `$inst`.
#[macro_export]
macro_rules! morph_kernel_name {
    ($inst:ident, $k:literal) => {
        concat!($crate::kernel_prefix!(), "morph_", stringify!($inst), "_", $k)
    };
}

/// Symbol of linear-filter kernel `$k` of instance `$inst`.
#[macro_export]
macro_rules! linear_kernel_name {
    ($inst:ident, $k:literal) => {
        concat!($crate::kernel_prefix!(), "linear_", stringify!($inst), "_", $k)
    };
}

/// The morphology kernels of one instance, in the host's `MorphKernel` order.
#[macro_export]
macro_rules! morph_kernel_names {
    ($inst:ident) => {
        [
            $crate::morph_kernel_name!($inst, "one_pixel"),
            $crate::morph_kernel_name!($inst, "multi_pixel"),
            $crate::morph_kernel_name!($inst, "shared_tile"),
            $crate::morph_kernel_name!($inst, "composed_shared"),
            $crate::morph_kernel_name!($inst, "pass_cols"),
            $crate::morph_kernel_name!($inst, "pass_rows"),
            $crate::morph_kernel_name!($inst, "van_herk_cols"),
            $crate::morph_kernel_name!($inst, "van_herk_rows"),
            $crate::morph_kernel_name!($inst, "row_vector3"),
            $crate::morph_kernel_name!($inst, "row_vector5"),
            $crate::morph_kernel_name!($inst, "difference"),
            $crate::morph_kernel_name!($inst, "van_herk_col_words"),
            $crate::morph_kernel_name!($inst, "doubling_rows"),
        ]
    };
}

/// Every morphology instance: `name => element, fold, row-vector lanes (16 bytes of elements)`.
#[macro_export]
macro_rules! for_each_morph_instance {
    ($m:ident) => {
        $m! {
            max_u8 => u8, Max, 16;
            min_u8 => u8, Min, 16;
            max_u16 => u16, Max, 8;
            min_u16 => u16, Min, 8;
            max_f32 => f32, Max, 4;
            min_f32 => f32, Min, 4;
        }
    };
}

/// The 2D-taps kernels of a linear instance (correlation with a `kh × kw` kernel from the
/// constant bank), in the host's order: one pixel, multi pixel, shared tile.
#[macro_export]
macro_rules! linear_kernel_names {
    ($inst:ident) => {
        [
            $crate::linear_kernel_name!($inst, "one_pixel"),
            $crate::linear_kernel_name!($inst, "multi_pixel"),
            $crate::linear_kernel_name!($inst, "shared_tile"),
        ]
    };
}

/// Linear instances with 2D taps: `name => input, output, tap type, accumulator`.
/// Integer instances take `i32` taps, sum exactly in `i32` and divide by `2^shift` rounding half
/// up, saturating to the output; `f32` sums with FMA in `f32`.
#[macro_export]
macro_rules! for_each_linear_instance {
    ($m:ident) => {
        $m! {
            u8_u8 => u8, u8, IntTaps;
            u8_i16 => u8, i16, IntTaps;
            u16_u16 => u16, u16, IntTaps;
            f32_f32 => f32, f32, FloatTaps;
        }
    };
}

/// Separable (1D-pass) linear instances: `name => input, output, accumulator`. Passes run along
/// columns, then rows (scipy's axis order); integer images accumulate in f64 and truncate toward
/// zero after each pass, as scipy.ndimage's `correlate1d` into an integer output does.
#[macro_export]
macro_rules! for_each_pass_instance {
    ($m:ident) => {
        $m! {
            sep_u8 => u8, f64;
            sep_u16 => u16, f64;
            sep_f32 => f32, f32;
        }
    };
}

/// Symbols of a pass instance: column pass, row pass, row-run pass ([`pass_runs`] taps), and the
/// fused column-then-row tile ([`pass_runs`] taps on both axes).
#[macro_export]
macro_rules! pass_kernel_names {
    ($inst:ident) => {
        [
            $crate::linear_kernel_name!($inst, "cols"),
            $crate::linear_kernel_name!($inst, "rows"),
            $crate::linear_kernel_name!($inst, "rows_run"),
            $crate::linear_kernel_name!($inst, "tile"),
        ]
    };
}

/// The fixed 3 × 3 filters of the row-vector kernel: `name => input, output, op`.
#[macro_export]
macro_rules! for_each_fixed3_instance {
    ($m:ident) => {
        $m! {
            gauss_u8 => u8, u8, Gauss121, 16;
            gauss_u16 => u16, u16, Gauss121, 8;
            gauss_f32 => f32, f32, Gauss121, 4;
            sobel0_u8 => u8, i16, Sobel0, 16;
            sobel1_u8 => u8, i16, Sobel1, 16;
            sobel0_f32 => f32, f32, Sobel0, 4;
            sobel1_f32 => f32, f32, Sobel1, 4;
        }
    };
}

/// Most output rows per thread of a word-tile kernel. A thread issues the loads of all
/// `rows + K − 1` row positions of its words before it filters any row, so that many independent
/// loads are in flight per thread.
pub const WORD_TILE_MAX_ROWS: u32 = 8;
/// Columns of one warp's word tile when each lane owns `words` 4-byte words of u8 pixels (1, 2
/// or 4: one 4-, 8- or 16-byte load per row): 32 lanes × `words` × 4 pixels.
pub const fn word_tile_cols(words: u32) -> u32 {
    32 * 4 * words
}

/// The word-tile kernels (u8 images, four pixels packed in each word): `name => filter, K,
/// output, words per lane, output rows per lane`. From the H100 measurements of
/// 2026-11-24: 16 bytes per lane and 4 rows, with the registers ptxas
/// chooses. 8 bytes per lane capped at 64 registers lost 1.5–3.5 µs for the u8 outputs (it won
/// 2–3 µs for Sobel, but only with a lighter edge path that cost the others more), and 16 bytes
/// capped at 80 registers lost 1–8 µs. Sobel (i16 outputs) takes 8 bytes per lane since the
/// word-by-word path has its own kernel (2026-11-26): 68 registers instead of 82–84, and each
/// lane's 16 bytes of output per row one store, the warp's 512 contiguous bytes (16 input bytes
/// made two stores 32 bytes apart per lane); u8 8192² on the H100, axis 0 86.3–86.6 → 75.9–76.3
/// µs, axis 1 78.4–78.7 → 76.0–76.4 (same call).
#[macro_export]
macro_rules! for_each_word_tile_instance {
    ($m:ident) => {
        $m! {
            max3 => Max<u8>, 3, u8, 4, 4;
            max5 => Max<u8>, 5, u8, 4, 4;
            min3 => Min<u8>, 3, u8, 4, 4;
            min5 => Min<u8>, 5, u8, 4, 4;
            gauss => Gauss121<u8, u8>, 3, u8, 4, 4;
            sobel0 => Sobel0<u8, i16>, 3, i16, 2, 4;
            sobel1 => Sobel1<u8, i16>, 3, i16, 2, 4;
        }
    };
}

/// Symbol of a word-tile kernel: rows of whole 16-byte vectors (widths that are multiples of 16,
/// 16-byte-aligned buffers).
#[macro_export]
macro_rules! word_tile_kernel_name {
    ($inst:ident) => {
        concat!($crate::kernel_prefix!(), "word_tile_", stringify!($inst))
    };
}

/// Symbol of a word-tile kernel for any width and alignment (the word-by-word path).
#[macro_export]
macro_rules! word_tile_any_kernel_name {
    ($inst:ident) => {
        concat!($crate::kernel_prefix!(), "word_tile_any_", stringify!($inst))
    };
}

/// Symbol of a fixed 3 × 3 row-vector kernel.
#[macro_export]
macro_rules! fixed3_kernel_name {
    ($inst:ident) => {
        concat!($crate::kernel_prefix!(), "fixed3_", stringify!($inst))
    };
}

/// Output rows of a tile van Herk block (`van_herk_tile` in kernels-gpu/src/filter2d/tile.rs):
/// four strips of [`TILE_VH_STRIP_ROWS`] in the column phase, four rows per lane in the row phase.
pub const TILE_VH_ROWS: u32 = 128;
/// Output columns of a tile van Herk block: eight warps' strips of [`TILE_VH_STRIP_COLS`].
pub const TILE_VH_COLS: u32 = 224;
/// Threads of a tile van Herk block.
pub const TILE_VH_THREADS: u32 = 256;
/// Rows of a column-phase strip (one lane's stream, a word wide).
pub const TILE_VH_STRIP_ROWS: u32 = 32;
/// Columns of a row-phase strip (one warp's, four rows per lane).
pub const TILE_VH_STRIP_COLS: u32 = 28;
/// Columns staged on each side of the outputs: windows of at most `2 · TILE_VH_HALO + 1` columns.
pub const TILE_VH_HALO: u32 = 16;
/// Bytes per staged input row: `TILE_VH_COLS + 2 · TILE_VH_HALO`, whole 16-byte chunks.
pub const TILE_VH_IN_STRIDE: u32 = TILE_VH_COLS + 2 * TILE_VH_HALO;
/// Bytes per row of the column phase's results: the input row and a word, an odd number of
/// words, so lanes on consecutive rows of one column fall in distinct banks.
pub const TILE_VH_MID_STRIDE: u32 = TILE_VH_IN_STRIDE + 4;
/// Longest window side of the tile van Herk.
pub const TILE_VH_MAX_WINDOW: u32 = 2 * TILE_VH_HALO + 1;

/// Bytes of a tile van Herk block's first region: the staged input (`TILE_VH_ROWS + kh − 1`
/// rows), later the row phase's per-thread slots (a word per strip column and thread).
pub const fn tile_vh_input_bytes(kh: u32) -> u32 {
    let staged = (TILE_VH_ROWS + kh - 1) * TILE_VH_IN_STRIDE;
    let slots = TILE_VH_STRIP_COLS * TILE_VH_THREADS * 4;
    if staged > slots { staged } else { slots }
}

/// Shared memory of a tile van Herk block for a window of `kh` rows: the first region and the
/// column phase's results (later the output rows on their way out).
pub const fn tile_vh_smem(kh: u32) -> u32 {
    tile_vh_input_bytes(kh) + TILE_VH_ROWS * TILE_VH_MID_STRIDE
}

/// Symbol of the u8 tile van Herk kernel for `Max` or `Min`.
#[macro_export]
macro_rules! tile_vh_kernel_name {
    ($fold:ident) => {
        concat!($crate::kernel_prefix!(), "tile_van_herk_", stringify!($fold))
    };
}
