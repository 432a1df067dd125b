//! 2D filters over the last two axes: morphology (max/min of a `kh × kw` rectangle) and linear
//! filters (correlation with taps in the constant bank), one ladder shared by both.
//!
//! Every rung is generic over a [`Fold`] (what the window computes) and reads the plane through
//! [`Plane`] (border-extended samples, 32-bit row/column arithmetic):
//!
//! - `one_pixel`: one output per thread, every window sample loaded from global memory
//!   (`ld.global.nc`; L1 serves the overlap of neighbouring windows). Bottleneck: `kh · kw` load
//!   instructions and border mappings per output.
//! - `multi_pixel`: a 4 × 4 block of outputs per thread (lanes on neighbouring columns, so every
//!   load instruction is coalesced); the row and column mappings are shared by the block's
//!   outputs. Bottleneck: still one load per output per tap.
//! - `shared_tile`: the block stages its 64 × 32 output tile plus the window's halo in shared
//!   memory once (each sample read from global memory once per block), then every thread folds
//!   its 2 × 4 outputs from shared memory. Bottleneck: `kh · kw` shared loads per output.
//! - `composed_shared` (max/min, odd squares): the tile is staged once and a `k × k` window is
//!   `(k − 1) / 2` passes of 3 × 3 through two shared buffers (the tutorial's 5 × 5 = two 3 × 3).
//! - `pass_cols` / `pass_rows`: separable 1D passes through a scratch image, columns then rows
//!   (scipy's axis order); `van_herk_cols` / `van_herk_rows`: the same passes in O(1) per output
//!   for max/min (van Herk/Gil-Werman: per block of `k` samples a prefix and a suffix scan in
//!   shared memory, each window the max of one suffix and one prefix); `van_herk_col_words` /
//!   `doubling_rows` ([`words`]): the `VanHerk` rung's fast passes on 4-byte words (a column van
//!   Herk streamed per lane with packed SIMD-within-a-register extrema, a row doubling in
//!   registers and shuffles).
//! - `row_vector`: 16 bytes of a row per thread (one `ld.global.nc.v4` per row), the
//!   neighbours' halo samples from the adjacent lanes by `shfl.sync`, the filter applied
//!   separably in registers (a horizontal 1D filter per row, a ring of the last `K` rows' results
//!   for the vertical one) while the thread walks down a strip of rows, each row's load issued
//!   `K` rows ahead; outputs stored as 16-byte vectors. Compile-time `K` (3 × 3, 5 × 5).
//! - `word_tile` ([`packed`]): u8 3 × 3 and 5 × 5 filters on packed words, 16 bytes of a few
//!   rows per lane, all loads issued before any filtering; max/min down first (van Herk over the
//!   rows), the linear filters across first. `word_tile_any` is the same filter word by word, for
//!   widths that are not whole 16-byte vectors and unaligned buffers.

use core::marker::PhantomData;

use crate::abi::filter2d::*;
use crate::device::*;

mod direct;
mod fold;
mod row_vector;
mod separable;

pub use direct::*;
pub use fold::*;
pub use row_vector::*;
pub use separable::*;

pub mod packed;
pub mod tile;
pub mod words;
pub use packed::{AcrossDown, LaneOp, WordFilter, word_tile, word_tile_any};
pub use words::{LaneExtremum, doubling_rows, van_herk_col_words};

type Args<T> = Filter2dArgs<T>;

// ---------------------------------------------------------------------------------------------
// Elementwise finishers
// ---------------------------------------------------------------------------------------------

/// `y[i] = a[i] − b[i]` (wrapping for integers: the morphological gradient's dilation is never
/// below its erosion, both windows holding the centre sample), grid-stride.
pub unsafe fn difference<T: Pixel + Diff>(a: *const T, b: *const T, y: *mut T, n: u64) {
    let mut i = global_thread_idx();
    while i < n {
        // SAFETY: i < n, the buffers' length.
        unsafe {
            y.add(i as usize)
                .write(T::diff(T::load(a.add(i as usize)), T::load(b.add(i as usize))))
        };
        i += grid_threads();
    }
}

/// Subtraction of the morphology elements.
pub trait Diff {
    fn diff(a: Self, b: Self) -> Self;
}
impl Diff for u8 {
    #[inline(always)]
    fn diff(a: u8, b: u8) -> u8 {
        a.wrapping_sub(b)
    }
}
impl Diff for u16 {
    #[inline(always)]
    fn diff(a: u16, b: u16) -> u16 {
        a.wrapping_sub(b)
    }
}
impl Diff for f32 {
    #[inline(always)]
    fn diff(a: f32, b: f32) -> f32 {
        a - b
    }
}

/// The gradient magnitude `√(u² + v²)` of two derivatives, in f32: `u · u + v · v` rounded per
/// operation, then a correctly rounded square root. The one definition `Gpu::sobel_magnitude`
/// and a chain's magnitude step share, so they agree bit for bit.
#[inline(always)]
pub fn gradient_magnitude(u: f32, v: f32) -> f32 {
    core::intrinsics::sqrtf32(u * u + v * v)
}

/// `y[i] = √(a[i]² + b[i]²)` in f32 (the gradient magnitude of two Sobel images), grid-stride.
pub unsafe fn magnitude<T: Pixel + Into<f32>>(a: *const T, b: *const T, y: *mut f32, n: u64) {
    let mut i = global_thread_idx();
    while i < n {
        // SAFETY: i < n.
        unsafe {
            let (u, v): (f32, f32) = (T::load(a.add(i as usize)).into(), T::load(b.add(i as usize)).into());
            y.add(i as usize).write(gradient_magnitude(u, v));
        }
        i += grid_threads();
    }
}

// ---------------------------------------------------------------------------------------------
// Entries
// ---------------------------------------------------------------------------------------------

/// One `(x, y, args)` kernel entry named `$symbol` that calls the generic body `$body`.
macro_rules! entry {
    ($symbol:expr, $name:ident, $x:ty, $y:ty, $body:path) => {
        #[unsafe(export_name = $symbol)]
        pub unsafe extern "ptx-kernel" fn $name(x: *const $x, y: *mut $y, a: Filter2dArgs<$x>) {
            unsafe { $body(x, y, &a) }
        }
    };
}

/// Blocks per SM the word van Herk column pass of instance `$inst` is bounded to: 7 (73
/// registers). f32's NaN-propagating max/min (two compares and a select) needs one register more
/// than that: ptxas spilled 4 bytes at 7, so the f32 passes take 6.
macro_rules! col_words_min_blocks {
    (max_f32) => {
        6
    };
    (min_f32) => {
        6
    };
    ($inst:ident) => {
        7
    };
}

macro_rules! morph_entries {
    ($($inst:ident => $t:ty, $fold:ident, $lanes:literal;)*) => {$(
        pub mod $inst {
            use super::*;
            type F = $fold<$t>;

            entry!($crate::morph_kernel_name!($inst, "one_pixel"), one_pixel, $t, $t, super::one_pixel::<F>);
            entry!($crate::morph_kernel_name!($inst, "multi_pixel"), multi_pixel, $t, $t, super::multi_pixel::<F>);
            entry!($crate::morph_kernel_name!($inst, "shared_tile"), shared_tile, $t, $t, super::shared_tile::<F>);
            entry!($crate::morph_kernel_name!($inst, "composed_shared"), composed_shared, $t, $t, super::composed_shared::<F>);
            entry!($crate::morph_kernel_name!($inst, "pass_cols"), pass_cols, $t, $t, super::pass_cols::<F>);
            entry!($crate::morph_kernel_name!($inst, "pass_rows"), pass_rows, $t, $t, super::pass_rows::<F>);
            entry!($crate::morph_kernel_name!($inst, "van_herk_cols"), van_herk_cols, $t, $t, super::van_herk_cols::<F>);
            entry!($crate::morph_kernel_name!($inst, "van_herk_rows"), van_herk_rows, $t, $t, super::van_herk_rows::<F>);
            entry!($crate::morph_kernel_name!($inst, "row_vector3"), row_vector3, $t, $t, super::row_vector::<F, $lanes, 3>);
            #[unsafe(export_name = $crate::morph_kernel_name!($inst, "difference"))]
            pub unsafe extern "ptx-kernel" fn difference(a: *const $t, b: *const $t, y: *mut $t, n: u64) {
                unsafe { super::difference::<$t>(a, b, y, n) }
            }
            entry!($crate::morph_kernel_name!($inst, "row_vector5"), row_vector5, $t, $t, super::row_vector::<F, $lanes, 5>);
            entry!($crate::morph_kernel_name!($inst, "van_herk_col_words"), van_herk_col_words, $t, $t, super::van_herk_col_words::<F>);
            entry!($crate::morph_kernel_name!($inst, "doubling_rows"), doubling_rows, $t, $t, super::doubling_rows::<F, $lanes, 4, { DOUBLING_AHEAD as usize }, 0>);
            // Occupancy for latency hiding: at least 7 (column pass; f32 6, see
            // `col_words_min_blocks!`) and 4 (row pass, 16 bytes per lane) blocks of 4 warps per
            // SM, so ptxas keeps them within 73 (80) and 128 registers. u8 rows take the 8-byte
            // passes of `doubling_u8`.
            $crate::launch_bounds!($crate::morph_kernel_name!($inst, "van_herk_col_words"), 128, col_words_min_blocks!($inst));
            $crate::launch_bounds!($crate::morph_kernel_name!($inst, "doubling_rows"), 128, 4);
        }
    )*};
}
crate::for_each_morph_instance!(morph_entries);

macro_rules! linear_entries {
    ($($inst:ident => $i:ty, $o:ty, $fold:ident;)*) => {$(
        pub mod $inst {
            use super::*;
            type F = $fold<$i, $o>;

            entry!($crate::linear_kernel_name!($inst, "one_pixel"), one_pixel, $i, $o, super::one_pixel::<F>);
            entry!($crate::linear_kernel_name!($inst, "multi_pixel"), multi_pixel, $i, $o, super::multi_pixel::<F>);
            entry!($crate::linear_kernel_name!($inst, "shared_tile"), shared_tile, $i, $o, super::shared_tile::<F>);
        }
    )*};
}
crate::for_each_linear_instance!(linear_entries);

macro_rules! pass_entries {
    ($($inst:ident => $t:ty, $acc:ty;)*) => {$(
        pub mod $inst {
            use super::*;
            entry!($crate::linear_kernel_name!($inst, "cols"), cols, $t, $t, super::correlate_cols::<$t>);
            entry!($crate::linear_kernel_name!($inst, "rows"), rows, $t, $t, super::correlate_rows::<$t>);
            entry!($crate::linear_kernel_name!($inst, "rows_run"), rows_run, $t, $t, super::correlate_rows_run::<$t>);
            // 5 blocks of PASS_ROW_WARPS warps per SM: at most 102 registers (ptxas takes 92).
            $crate::launch_bounds!($crate::linear_kernel_name!($inst, "rows_run"), 128, 5);
            entry!($crate::linear_kernel_name!($inst, "tile"), tile, $t, $t, super::correlate_tile::<$t>);
            // 2 blocks of 8 warps per SM: at 3 (85 registers) ptxas spilled 28 bytes.
            $crate::launch_bounds!($crate::linear_kernel_name!($inst, "tile"), 256, 2);
        }
    )*};
}
crate::for_each_pass_instance!(pass_entries);

macro_rules! fixed3_entries {
    ($($inst:ident => $i:ty, $o:ty, $op:ident, $lanes:literal;)*) => {$(
        entry!($crate::fixed3_kernel_name!($inst), $inst, $i, $o, row_vector::<$op<$i, $o>, $lanes, 3>);
    )*};
}

/// The fixed 3 × 3 row-vector kernels (Gaussian, Sobel) and the Sobel magnitudes.
pub mod fixed3 {
    use super::*;
    crate::for_each_fixed3_instance!(fixed3_entries);

    #[unsafe(export_name = crate::fixed3_kernel_name!(magnitude_i16))]
    pub unsafe extern "ptx-kernel" fn magnitude_i16(a: *const i16, b: *const i16, y: *mut f32, n: u64) {
        unsafe { super::magnitude::<i16>(a, b, y, n) }
    }
    #[unsafe(export_name = crate::fixed3_kernel_name!(magnitude_f32))]
    pub unsafe extern "ptx-kernel" fn magnitude_f32(a: *const f32, b: *const f32, y: *mut f32, n: u64) {
        unsafe { super::magnitude::<f32>(a, b, y, n) }
    }
}

macro_rules! word_tile_entries {
    ($($inst:ident => $f:ty, $k:literal, $o:ty, $p:literal, $r:literal;)*) => {$(
        entry!($crate::word_tile_kernel_name!($inst), $inst, u8, $o, word_tile::<$f, $k, $p, $r>);
    )*};
}

macro_rules! word_tile_any_entries {
    ($($inst:ident => $f:ty, $k:literal, $o:ty, $p:literal, $r:literal;)*) => {$(
        entry!($crate::word_tile_any_kernel_name!($inst), $inst, u8, $o, word_tile_any::<$f, $k, $p, $r>);
    )*};
}

/// The word-tile kernels of u8 images whose rows are whole 16-byte vectors.
pub mod word_tile {
    use super::*;
    crate::for_each_word_tile_instance!(word_tile_entries);
}

/// The word-tile kernels of u8 images of any width and alignment.
pub mod word_tile_any {
    use super::*;
    crate::for_each_word_tile_instance!(word_tile_any_entries);
}

macro_rules! doubling_u8_entries {
    ($($inst:ident => $fold:ident, $steps:literal;)*) => {$(
        entry!($crate::doubling_u8_kernel_name!($inst), $inst, u8, u8, super::doubling_rows::<$fold<u8>, 8, 2, { DOUBLING_U8_AHEAD as usize }, $steps>);
        // 7 blocks of 4 warps per SM: 72 registers without spills (at 6 blocks ptxas took 75–80
        // in the whole-module build, which leaves room for 6 only).
        $crate::launch_bounds!($crate::doubling_u8_kernel_name!($inst), 128, 7);
    )*};
}

/// The u8 doubling row passes of 8 bytes per lane with a fixed number of doubling steps.
pub mod doubling_u8 {
    use super::*;
    crate::for_each_doubling_u8_instance!(doubling_u8_entries);
}

/// The u8 tile van Herk, max and min (windows up to 33 × 33): 256 threads, 3 blocks per SM.
pub mod tile_vh {
    use super::*;
    entry!(
        crate::tile_vh_kernel_name!(Max),
        max,
        u8,
        u8,
        tile::tile_van_herk::<Max<u8>>
    );
    entry!(
        crate::tile_vh_kernel_name!(Min),
        min,
        u8,
        u8,
        tile::tile_van_herk::<Min<u8>>
    );
    crate::launch_bounds!(crate::tile_vh_kernel_name!(Max), 256, 3);
    crate::launch_bounds!(crate::tile_vh_kernel_name!(Min), 256, 3);
}
