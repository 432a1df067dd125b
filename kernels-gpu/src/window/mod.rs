//! The sliding-window statistics ladder: window sums and sums of squares along rows (1D), and
//! box sums over the last two axes (2D). See `abi::window` for the formulas and accumulators.
//!
//! Row ladder (one launch each, every kernel writes both sums):
//!
//! | kernel | thread ↦ | samples from | sums in | cost per output | removes |
//! |---|---|---|---|---|---|
//! | global accumulate | 1 output | global | the output arrays (global RMW) | 2w global RMW | (the tutorial's first kernel) |
//! | split loops | 1 output | global | the output arrays, one loop each | 2w global RMW | one output stream per loop |
//! | staged window | 1 output | its own window, copied to shared memory | registers | w | the read-modify-writes |
//! | shared tile | 1 output | the block's tile + halo in shared memory | registers | w | `w` global reads per output |
//! | running sum | 16 or 8 positions | global, once per block | running sums in shared memory | O(1) | the `w` in the cost |
//! | sliding (integers, `w ≤ 1024`) | 16 outputs (4-byte outputs), else 16 bytes of input | a shared tile, 16-byte loads | one running pair in registers, in the tile's accumulator class | O(1) | the scans; uncoalesced stores |
//! | float sliding (f32, f64, `w ≤ 1024`) | 16 outputs | a transposed tile of the input type, 16-byte loads, each read widened to f64 | suffix sums per half run in registers | O(1) (`w ≥ 16` and `w ≤ 2`), direct sums of groups of 4 over shared blocks of 4 samples (3 to 15: 142 f64 operations per 16 outputs at 15) | the block scans; per-read conversions |
//!
//! The running sum: a block scans positions `[0, T + w)` of its tile (`T` outputs), each thread a
//! chunk of `CHUNK` consecutive positions, chunks chained by a block-wide scan (warp shuffles, one
//! shared slot per warp). Integers keep the exclusive running sum `E[p]` and output
//! `E[s + w] − E[s]` with wrapping arithmetic: exact, whatever the window. Floats never subtract
//! (that would let a NaN or an infinity leave its window in everything after it, and lose
//! precision to the running sum's magnitude): they restart the running sum at every multiple of
//! `w` (van Herk/Gil-Werman) and output `suffix[s] + prefix[s + w]`, the suffix sum of `s`'s
//! `w`-block from `s` and the prefix sum of the next block up to `s + w − 1` — exactly the window,
//! a sum of at most `w` terms in a fixed order (so the error bound of a direct sum holds, and
//! non-finite values stay in their windows). Both are segmented scans; the integer one has no
//! segments.
//!
//! 2D boxes: separable (the running-sum row kernel into an accumulator-typed scratch, then
//! [`box_columns`]: integers slide running sums down each column, floats run van Herk/Gil-Werman
//! down the columns with a scratch of suffix sums) or fused ([`box_fused`], integers only: a
//! block slides down a strip of rows keeping vertical running sums per column in registers and
//! sums each output row's windows across a shared row of those column sums), or, for u8,
//! warp-prefix ([`warp_box`]: warps without block barriers, each output the difference of two
//! entries of a warp-scanned prefix row).

use crate::abi::border::{BorderMode, border_index, border_index_i32};
use crate::abi::reduce::W128;
use crate::abi::window::{
    Acc, BoxArgs, BoxKind, FUSED_BLOCK, FUSED_HALO, RowArgs, SLIDING_CHUNK, SLIDING_DIRECT_MAX, Seg, SlideIn, Sums,
    WINDOW_BLOCK, WINDOW_WARPS, WindowIn, fits_small32, fused_layout, fused_slot, moments, running_single_round,
    sliding_byte, sliding_layout, sliding_stage_slot,
};
use crate::device::*;

mod boxes;
mod float_rows;
mod out;
mod rungs;
mod running;

pub use boxes::*;
pub use float_rows::*;
pub use out::*;
pub use rungs::*;
pub use running::*;

pub mod stream_box;
pub mod warp_box;

type SumsOf<T> = Sums<<T as WindowIn>::S, <T as WindowIn>::Q>;
/// The sliding kernel's accumulators (squares in [`SlideIn::SQ`]).
type SlideSums<T> = Sums<<T as WindowIn>::S, <T as SlideIn>::SQ>;
type SegSums<S, Q> = Seg<Sums<S, Q>>;

// ---------------------------------------------------------------------------------------------
// Entries
// ---------------------------------------------------------------------------------------------

macro_rules! window_entries {
    ($($inst:ident => $t:ty, $s:ty, $q:ty, $kind:ident $(($slide:literal $(, $boxed:literal $(, $warp:literal)?)?))?, $blocks:literal;)*) => {$(
        pub mod $inst {
            use super::*;
            type A = RowArgs<$t>;
            type B = BoxArgs<$t>;
            type AccS = <$t as WindowIn>::S;
            type AccQ = <$t as WindowIn>::Q;
            const C: usize = <$t as WindowIn>::CHUNK as usize;

            #[unsafe(export_name = $crate::window_kernel_name!($inst, "global_accumulate"))]
            pub unsafe extern "ptx-kernel" fn global_accumulate(x: *const $t, s: *mut $s, q: *mut $q, a: A) {
                unsafe { super::global_accumulate(x, s, q, a) }
            }
            #[unsafe(export_name = $crate::window_kernel_name!($inst, "split_loops"))]
            pub unsafe extern "ptx-kernel" fn split_loops(x: *const $t, s: *mut $s, q: *mut $q, a: A) {
                unsafe { super::split_loops(x, s, q, a) }
            }
            #[unsafe(export_name = $crate::window_kernel_name!($inst, "staged_window"))]
            pub unsafe extern "ptx-kernel" fn staged_window(x: *const $t, s: *mut $s, q: *mut $q, a: A) {
                unsafe { super::staged_window(x, s, q, a) }
            }
            #[unsafe(export_name = $crate::window_kernel_name!($inst, "shared_tile"))]
            pub unsafe extern "ptx-kernel" fn shared_tile(x: *const $t, s: *mut $s, q: *mut $q, a: A) {
                unsafe { super::shared_tile(x, s, q, a) }
            }
            $crate::launch_bounds!($crate::window_kernel_name!($inst, "running_sum"), 256, $blocks);
            #[unsafe(export_name = $crate::window_kernel_name!($inst, "running_sum"))]
            pub unsafe extern "ptx-kernel" fn running_sum(x: *const $t, s: *mut $s, q: *mut $q, a: A) {
                unsafe { super::running_sum::<$t, $s, $q, C>(x, s, q, a) }
            }
            #[unsafe(export_name = $crate::window_kernel_name!($inst, "box_columns"))]
            pub unsafe extern "ptx-kernel" fn box_columns(
                rs: *const AccS, rq: *const AccQ, ts: *mut AccS, tq: *mut AccQ, o0: *mut $s, o1: *mut $q, a: B,
            ) {
                unsafe { super::box_columns::<$t, $s, $q>(rs, rq, ts, tq, o0, o1, a) }
            }
            window_entries!(@kind $kind $inst, $t, $s, $q $(, $slide $(, $boxed)?)?);
            $($($($crate::launch_bounds!($crate::window_kernel_name!($inst, "warp_box"), 128, $warp);
            #[unsafe(export_name = $crate::window_kernel_name!($inst, "warp_box"))]
            pub unsafe extern "ptx-kernel" fn warp_box(x: *const u8, o0: *mut $s, o1: *mut $q, a: BoxArgs<u8>) {
                const { assert!($crate::abi::window::WARP_BOX_WARPS * 32 == 128) };
                unsafe { super::warp_box::warp_prefix_box::<$s, $q>(x, o0, o1, a) }
            })?)?)?
        }
    )*};
    (@kind fused $inst:ident, $t:ty, $s:ty, $q:ty, $slide:literal, $boxed:literal) => {
        // The most resident blocks of WINDOW_BLOCK ptxas sm_90 reaches without spilling.
        $crate::launch_bounds!($crate::window_sliding_name!($inst), 256, $slide);
        #[unsafe(export_name = $crate::window_sliding_name!($inst))]
        pub unsafe extern "ptx-kernel" fn sliding_sum(x: *const $t, s: *mut $s, q: *mut $q, a: RowArgs<$t>) {
            const P: usize = $crate::abi::window::sliding_outputs(
                core::mem::size_of::<$t>(),
                $crate::abi::window::max_size(core::mem::size_of::<$s>(), core::mem::size_of::<$q>()),
                false,
            ) as usize;
            const V: usize = $crate::abi::window::sliding_vectors(P * core::mem::size_of::<$t>());
            unsafe { super::sliding_sum::<$t, $s, $q, P, V>(x, s, q, a) }
        }
        $crate::launch_bounds!($crate::window_fused_name!($inst), 128, $boxed);
        #[unsafe(export_name = $crate::window_fused_name!($inst))]
        pub unsafe extern "ptx-kernel" fn box_fused(x: *const $t, o0: *mut $s, o1: *mut $q, a: BoxArgs<$t>) {
            const P: usize = <$t as WindowIn>::FUSED_COLS as usize;
            unsafe { super::box_fused::<$t, $s, $q, P>(x, o0, o1, a) }
        }
    };
    (@kind float_rows $inst:ident, $t:ty, $s:ty, $q:ty, $slide:literal, $narrow:literal) => {
        $crate::launch_bounds!($crate::window_sliding_name!($inst), 256, $slide);
        #[unsafe(export_name = $crate::window_sliding_name!($inst))]
        pub unsafe extern "ptx-kernel" fn sliding_sum(x: *const $t, s: *mut $s, q: *mut $q, a: RowArgs<$t>) {
            const V: usize = $crate::abi::window::sliding_vectors($crate::abi::window::SLIDING_CHUNK as usize * core::mem::size_of::<$t>());
            unsafe { super::float_sliding_sum::<$t, $s, $q, V, false>(x, s, q, a) }
        }
        $crate::launch_bounds!($crate::window_narrow_name!($inst), 256, $narrow);
        #[unsafe(export_name = $crate::window_narrow_name!($inst))]
        pub unsafe extern "ptx-kernel" fn sliding_narrow(x: *const $t, s: *mut $s, q: *mut $q, a: RowArgs<$t>) {
            const V: usize = $crate::abi::window::sliding_vectors($crate::abi::window::SLIDING_CHUNK as usize * core::mem::size_of::<$t>());
            unsafe { super::float_sliding_sum::<$t, $s, $q, V, true>(x, s, q, a) }
        }
    };
    (@kind separable $inst:ident, $t:ty, $s:ty, $q:ty) => {};
}

crate::for_each_window_instance!(window_entries);

macro_rules! stream_box_entries {
    ($($name:ident, $w:literal, $l:literal, $r:literal;)*) => {
        /// The stream-rows box (u8 → f32), one kernel per window width, and one per width for
        /// any plane (`any`).
        pub mod u8_f32_stream_box {
            use super::*;
            $(
                // 16 warps per SM (stated as 4 blocks of 128 threads; the host launches blocks
                // of 1, 2 or 4 warps): at most 128 registers. At 20 warps (102 registers) ptxas
                // spilled 12–44 bytes per kernel, which the PTX check (no local memory in any
                // kernel) refuses.
                $crate::launch_bounds!($crate::stream_box_name!($w), 128, 4);
                #[unsafe(export_name = $crate::stream_box_name!($w))]
                pub unsafe extern "ptx-kernel" fn $name(x: *const u8, o0: *mut f32, o1: *mut f32, a: BoxArgs<u8>) {
                    const { assert!($crate::abi::window::STREAM_BOX_WARPS * 32 == 128 && $l + 1 + $r == $w) };
                    unsafe { super::stream_box::stream_box::<$l, $r, false>(x, o0, o1, a) }
                }
            )*
            /// The gathering kernels.
            pub mod any {
                use super::*;
                $(
                    $crate::launch_bounds!($crate::stream_box_any_name!($w), 128, 4);
                    #[unsafe(export_name = $crate::stream_box_any_name!($w))]
                    pub unsafe extern "ptx-kernel" fn $name(x: *const u8, o0: *mut f32, o1: *mut f32, a: BoxArgs<u8>) {
                        unsafe { super::super::stream_box::stream_box::<$l, $r, true>(x, o0, o1, a) }
                    }
                )*
            }
        }
    };
}

crate::for_each_stream_box_width!(stream_box_entries);
