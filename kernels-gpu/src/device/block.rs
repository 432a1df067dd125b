//! Block-level collectives built on warp shuffles and one shared slot per warp: the reduction
//! of the reduce family and the segmented exclusive scan of the window family's running sums.

use crate::abi::reduce::{REDUCE_WARPS, Reducer};
use crate::abi::window::{Acc, Seg, Sums, WINDOW_WARPS};
use crate::device::thread::{lane_idx, sync_threads, thread_idx, warp_idx};
use crate::device::warp::{WarpShuffle, warp_reduce};

/// Block reduction with one shared slot per warp: each warp reduces by shuffles, lane 0 parks
/// the warp's value, then warp 0 reduces the `REDUCE_WARPS` slots by shuffles. Thread 0 returns
/// the block's value (other threads return an unspecified accumulator).
///
/// # Safety
/// All `REDUCE_BLOCK` threads of the block must call it; `slots` must point to at least
/// `REDUCE_WARPS` accumulators of shared memory that no other code uses meanwhile.
#[inline(always)]
pub unsafe fn block_reduce<R: Reducer>(v: R::Acc, slots: *mut R::Acc) -> R::Acc
where
    R::Acc: WarpShuffle,
{
    let v = warp_reduce::<R>(v);
    if lane_idx() == 0 {
        // SAFETY: warp_idx() < REDUCE_WARPS slots.
        unsafe { slots.add(warp_idx() as usize).write(v) };
    }
    // SAFETY: all threads reach this barrier (caller contract).
    unsafe { sync_threads() };
    let mut r = R::identity();
    if warp_idx() == 0 {
        if thread_idx() < REDUCE_WARPS {
            // SAFETY: in bounds; written before the barrier above.
            r = unsafe { slots.add(thread_idx() as usize).read() };
        }
        r = warp_reduce::<R>(r);
    }
    r
}

/// The window family's segmented scan element: a pair of running sums with a reset flag.
type SegSums<S, Q> = Seg<Sums<S, Q>>;

impl<V: WarpShuffle> WarpShuffle for Seg<V> {
    #[inline(always)]
    fn map_words(self, mut f: impl FnMut(u32) -> u32) -> Self {
        let value = self.value.map_words(&mut f);
        Seg {
            value,
            reset: f(self.reset),
        }
    }
}

impl<S: WarpShuffle, Q: WarpShuffle> WarpShuffle for Sums<S, Q> {
    #[inline(always)]
    fn map_words(self, mut f: impl FnMut(u32) -> u32) -> Self {
        let s = self.s.map_words(&mut f);
        Sums {
            s,
            q: self.q.map_words(f),
        }
    }
}

/// Exclusive segmented scan of one element per thread, in thread order, over the block; returns
/// this thread's exclusive prefix and the block's total. Kogge–Stone inside each warp with
/// `shfl.up`; each warp parks its total in one shared slot; after a barrier, lanes `0..8` of
/// every warp load the eight totals and scan them the same way, so each thread gets the totals
/// of the warps before it with shuffles (few live registers). Two barriers; `slots` may be
/// reused after it returns.
///
/// # Safety
/// All `WINDOW_BLOCK` threads call it; `slots` holds `WINDOW_WARPS` elements of shared memory.
#[inline(always)]
pub unsafe fn block_exclusive_scan<S, Q>(x: SegSums<S, Q>, slots: *mut SegSums<S, Q>) -> (SegSums<S, Q>, SegSums<S, Q>)
where
    S: Acc + WarpShuffle,
    Q: Acc + WarpShuffle,
{
    const { assert!(WINDOW_WARPS == 8) };
    let lane = lane_idx();
    let warp_inclusive = |mut v: SegSums<S, Q>, lanes: u32| {
        let mut d = 1;
        while d < lanes {
            let other = v.shfl_up(d);
            if lane >= d {
                v = other.then(v);
            }
            d <<= 1;
        }
        v
    };
    let inclusive = warp_inclusive(x, 32);
    let before_lane = inclusive.shfl_up(1);
    let exclusive_in_warp = if lane == 0 { Seg::IDENTITY } else { before_lane };
    let warp = warp_idx();
    // SAFETY: warp < WINDOW_WARPS slots; the barriers order the writes before the reads and the
    // reads before any later reuse; every thread of the block reaches both.
    let totals = unsafe {
        if lane == 31 {
            slots.add(warp as usize).write(inclusive);
        }
        sync_threads();
        let mine = if lane < WINDOW_WARPS {
            slots.add(lane as usize).read()
        } else {
            Seg::IDENTITY
        };
        sync_threads();
        mine
    };
    // Lane k holds the totals of warps 0..=k (lanes ≥ 8 hold the block total, unused).
    let scanned = warp_inclusive(totals, WINDOW_WARPS);
    let before_warp = scanned.shfl_idx(warp.wrapping_sub(1) & 31);
    let total = scanned.shfl_idx(WINDOW_WARPS - 1);
    let before_warp = if warp == 0 { Seg::IDENTITY } else { before_warp };
    (before_warp.then(exclusive_in_warp), total)
}
