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
//! | sliding (integers, `w ≤ 1024`) | 16 bytes of input | a shared tile, 16-byte loads | one running pair in registers | O(1) | the scans; uncoalesced stores |
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
    Acc, BoxArgs, BoxKind, FUSED_BLOCK, FUSED_HALO, RowArgs, SLIDING_CHUNK, SLIDING_DIRECT_MAX, SLIDING_VECTORS, Seg,
    SlideIn, Sums, WINDOW_BLOCK, WINDOW_WARPS, WindowIn, fused_layout, fused_slot, running_single_round, sliding_byte,
    sliding_layout, sliding_stage_slot,
};
use crate::device::*;

pub mod stream_box;
pub mod warp_box;

type SumsOf<T> = Sums<<T as WindowIn>::S, <T as WindowIn>::Q>;
/// The sliding kernel's accumulators (squares in [`SlideIn::SQ`]).
type SlideSums<T> = Sums<<T as WindowIn>::S, <T as SlideIn>::SQ>;
type SegSums<S, Q> = Seg<Sums<S, Q>>;

// ---------------------------------------------------------------------------------------------
// Output elements
// ---------------------------------------------------------------------------------------------

/// An element the kernels write: arithmetic for the accumulate-in-global rungs and 16-byte
/// packing.
pub trait OutElem: Copy {
    const ZERO: Self;
    /// Values per 16-byte store.
    const LANES: usize;
    fn plus(self, o: Self) -> Self;
    /// A statistic (mean, variance, deviation) in this type (float outputs; integer outputs
    /// never receive one).
    fn from_f64(v: f64) -> Self;
    /// Whether the type is f32 (statistics may then be formed in f32 where that is exact
    /// enough: [`SlideIn::narrow_spread32`]).
    const SINGLE: bool = false;
    /// A statistic formed in f32 (only called when `SINGLE`).
    fn from_f32(v: f32) -> Self {
        Self::from_f64(v as f64)
    }
    /// Packs `LANES` values, `lane(0)` first in memory, into the four words of a 16-byte store.
    fn pack(lane: impl FnMut(usize) -> Self) -> [u32; 4];
}

/// An output element that an accumulator of type `A` converts to (exact types: identity; f32 and
/// f64: rounded once, W128 → f32 through f64).
pub trait FromAcc<A>: OutElem {
    fn from_acc(a: A) -> Self;
}

impl OutElem for f32 {
    const ZERO: f32 = 0.0;
    const LANES: usize = 4;
    #[inline(always)]
    fn plus(self, o: f32) -> f32 {
        self + o
    }
    #[inline(always)]
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
    const SINGLE: bool = true;
    #[inline(always)]
    fn from_f32(v: f32) -> f32 {
        v
    }
    #[inline(always)]
    fn pack(mut lane: impl FnMut(usize) -> f32) -> [u32; 4] {
        [
            lane(0).to_bits(),
            lane(1).to_bits(),
            lane(2).to_bits(),
            lane(3).to_bits(),
        ]
    }
}

impl OutElem for u32 {
    const ZERO: u32 = 0;
    const LANES: usize = 4;
    #[inline(always)]
    fn plus(self, o: u32) -> u32 {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn from_f64(v: f64) -> u32 {
        v as u32
    }
    #[inline(always)]
    fn pack(mut lane: impl FnMut(usize) -> u32) -> [u32; 4] {
        [lane(0), lane(1), lane(2), lane(3)]
    }
}

macro_rules! out_elem_64 {
    ($($t:ty: $bits:expr, $add:expr, $from:expr);*) => {$(
        impl OutElem for $t {
            const ZERO: $t = 0 as $t;
            const LANES: usize = 2;
            #[inline(always)]
            fn plus(self, o: $t) -> $t {
                $add(self, o)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> $t {
                $from(v)
            }
            #[inline(always)]
            fn pack(mut lane: impl FnMut(usize) -> $t) -> [u32; 4] {
                let (a, b): (u64, u64) = ($bits(lane(0)), $bits(lane(1)));
                [a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32]
            }
        }
    )*};
}
out_elem_64! {
    f64: f64::to_bits, |a: f64, b: f64| a + b, |v: f64| v;
    u64: |v: u64| v, u64::wrapping_add, |v: f64| v as u64;
    i64: |v: i64| v as u64, i64::wrapping_add, |v: f64| v as i64
}

impl OutElem for W128 {
    const ZERO: W128 = W128::ZERO;
    const LANES: usize = 1;
    #[inline(always)]
    fn plus(self, o: W128) -> W128 {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn from_f64(v: f64) -> W128 {
        W128::from_i64(v as i64)
    }
    #[inline(always)]
    fn pack(mut lane: impl FnMut(usize) -> W128) -> [u32; 4] {
        let v = lane(0);
        [v.lo as u32, (v.lo >> 32) as u32, v.hi as u32, (v.hi >> 32) as u32]
    }
}

macro_rules! from_acc {
    ($($o:ty: $($a:ty),* => $conv:expr;)*) => {$($(
        impl FromAcc<$a> for $o {
            #[inline(always)]
            fn from_acc(a: $a) -> $o {
                $conv(a)
            }
        }
    )*)*};
}
from_acc! {
    f32: u32, u64, i64, f64 => |a| a as f32;
    f32: W128 => |a: W128| a.to_f64_signed() as f32;
    f64: u32, u64, i64 => |a| a as f64;
    f64: W128 => |a: W128| a.to_f64_signed();
    f64: f64 => |a| a;
    u32: u32 => |a| a;
    u64: u32 => |a| a as u64;
    u64: u64 => |a| a;
    i64: i64 => |a| a;
    W128: W128 => |a| a;
}

/// Writes `count ≤ C` values at `p`: 16-byte stores when the whole run is written and `p` is
/// 16-byte aligned, else one store per value.
///
/// # Safety
/// `p` must address `count` writable values.
#[inline(always)]
unsafe fn store_run<O: OutElem, const C: usize>(p: *mut O, v: &[O; C], count: usize) {
    if count == C && (p as usize).is_multiple_of(16) {
        crate::unroll!(C / O::LANES, |j| {
            // SAFETY: aligned, and (j + 1) · LANES ≤ C = count values are writable.
            unsafe { store_v4(p.add(j * O::LANES) as *mut [u32; 4], O::pack(|l| v[j * O::LANES + l])) };
        });
    } else {
        crate::unroll!(C, |c| {
            if c < count {
                // SAFETY: c < count.
                unsafe { p.add(c).write(v[c]) };
            }
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Samples
// ---------------------------------------------------------------------------------------------

/// The row at `row` of a row launch, extended by its border.
#[inline(always)]
fn bordered<T: Copy>(row: *const T, a: &RowArgs<T>) -> BorderedRow<T> {
    BorderedRow {
        row,
        n: a.n,
        mode: BorderMode::from_code(a.border),
        cval: a.cval,
    }
}

/// `(row, column)` of flat output index `o` in rows of `n`; 32-bit division when it suffices.
#[inline(always)]
fn split(o: u64, n: u64, rows: u64) -> (u64, u64) {
    if rows == 1 {
        (0, o)
    } else if o <= u32::MAX as u64 && n <= u32::MAX as u64 {
        ((o as u32 / n as u32) as u64, (o as u32 % n as u32) as u64)
    } else {
        (o / n, o % n)
    }
}

/// Flat output index of this thread and its `(row, column)`, or `None` past the last output.
#[inline(always)]
fn one_output<T>(a: &RowArgs<T>) -> Option<(u64, u64, u64)> {
    let o = global_thread_idx();
    if o >= a.n * a.rows {
        return None;
    }
    let (r, i) = split(o, a.n, a.rows);
    Some((o, r, i))
}

/// The window of output `i` of `row`: calls `f` on each extended sample, in order.
///
/// # Safety
/// `row` holds `a.n` samples.
#[inline(always)]
unsafe fn for_window<T: Copy>(row: *const T, i: u64, a: &RowArgs<T>, f: impl FnMut(u32, T)) {
    // SAFETY: forwarded.
    unsafe { bordered(row, a).for_each_with(i as i64 - a.anchor as i64, a.width, |p| p.read(), f) }
}

// ---------------------------------------------------------------------------------------------
// Rungs 1–4: one output per thread
// ---------------------------------------------------------------------------------------------

/// Rung 1 (the tutorial's first kernel): thread `o` zeroes `sum[o]` and `sumsq[o]`, then adds each
/// sample of its window and its square to them *in global memory* (volatile read-modify-writes:
/// `2w` round trips per output, which is the bottleneck this rung shows). Sums accumulate in the
/// output type (as the tutorial's float outputs did).
///
/// # Safety
/// `x`, `sum`, `sumsq` hold `rows · n` elements; one thread per output.
pub unsafe fn global_accumulate<T, S, Q>(x: *const T, sum: *mut S, sumsq: *mut Q, a: RowArgs<T>)
where
    T: WindowIn,
    S: FromAcc<T::S>,
    Q: FromAcc<T::Q>,
{
    let Some((o, r, i)) = one_output(&a) else { return };
    // SAFETY: o < rows · n; the row holds n samples.
    unsafe {
        let (ps, pq) = (sum.add(o as usize), sumsq.add(o as usize));
        ps.write_volatile(S::ZERO);
        pq.write_volatile(Q::ZERO);
        for_window(x.add((r * a.n) as usize), i, &a, |_, v| {
            let l = v.lift();
            ps.write_volatile(ps.read_volatile().plus(S::from_acc(l.s)));
            pq.write_volatile(pq.read_volatile().plus(Q::from_acc(l.q)));
        });
    }
}

/// Rung 2 (the tutorial's second): as rung 1, one loop for the sums and a second for the
/// squares, so each loop streams one output array.
///
/// # Safety
/// As [`global_accumulate`].
pub unsafe fn split_loops<T, S, Q>(x: *const T, sum: *mut S, sumsq: *mut Q, a: RowArgs<T>)
where
    T: WindowIn,
    S: FromAcc<T::S>,
    Q: FromAcc<T::Q>,
{
    let Some((o, r, i)) = one_output(&a) else { return };
    // SAFETY: as rung 1.
    unsafe {
        let row = x.add((r * a.n) as usize);
        let ps = sum.add(o as usize);
        ps.write_volatile(S::ZERO);
        for_window(row, i, &a, |_, v| {
            ps.write_volatile(ps.read_volatile().plus(S::from_acc(v.lift().s)))
        });
        let pq = sumsq.add(o as usize);
        pq.write_volatile(Q::ZERO);
        for_window(row, i, &a, |_, v| {
            pq.write_volatile(pq.read_volatile().plus(Q::from_acc(v.lift().q)))
        });
    }
}

/// Rung 3 (the tutorial's third): each thread copies its own window into its private slice of
/// shared memory (`w` samples at `thread · w`), then sums it in registers and writes once. Every
/// sample is still read from global memory `w` times (once per window it belongs to), but the
/// read-modify-writes are gone. The slice is written before it is read by the same thread, so no
/// barrier is needed and nothing uninitialized is read.
///
/// # Safety
/// As rung 1; dynamic shared memory holds `WINDOW_BLOCK · w` samples.
pub unsafe fn staged_window<T, S, Q>(x: *const T, sum: *mut S, sumsq: *mut Q, a: RowArgs<T>)
where
    T: WindowIn,
    S: FromAcc<T::S>,
    Q: FromAcc<T::Q>,
{
    let Some((o, r, i)) = one_output(&a) else { return };
    // SAFETY: the host sized shared memory for every thread's slice; o < rows · n.
    unsafe {
        let slice: *mut T = dynamic_shared::<T>().add(thread_idx() as usize * a.width as usize);
        for_window(x.add((r * a.n) as usize), i, &a, |k, v| slice.add(k as usize).write(v));
        let mut acc = SumsOf::<T>::ZERO;
        for k in 0..a.width as usize {
            acc = acc.plus(slice.add(k).read().lift());
        }
        sum.add(o as usize).write(S::from_acc(acc.s));
        sumsq.add(o as usize).write(Q::from_acc(acc.q));
    }
}

/// Rung 4: block `b` computes outputs `[256·t, 256·t + 256)` of row `r` (`b = r · tiles + t`).
/// Its threads stage the `256 + w − 1` samples of the tile and its halo in shared memory with
/// coalesced loads (border applied once), then each sums its window from shared memory into
/// registers: each input sample leaves global memory once per block.
///
/// # Safety
/// Outputs and input hold `rows · n`; grid = `rows · ⌈n / 256⌉` blocks of 256; dynamic shared
/// memory holds `256 + w − 1` samples.
pub unsafe fn shared_tile<T, S, Q>(x: *const T, sum: *mut S, sumsq: *mut Q, a: RowArgs<T>)
where
    T: WindowIn,
    S: FromAcc<T::S>,
    Q: FromAcc<T::Q>,
{
    let block = WINDOW_BLOCK as u64;
    let tiles = a.n.div_ceil(block);
    let b = block_idx() as u64;
    let (r, tile) = (b / tiles, b % tiles);
    // SAFETY: r < rows by the grid shape.
    let row = unsafe { x.add((r * a.n) as usize) };
    let i0 = tile * block;
    let first = i0 as i64 - a.anchor as i64;
    let len = WINDOW_BLOCK + a.width - 1;
    // SAFETY: the host sized shared memory to `len` samples; the row holds n samples.
    let tile_mem: *mut T = unsafe { dynamic_shared() };
    unsafe { bordered(row, &a).stage(first, len, tile_mem, thread_idx(), WINDOW_BLOCK, |p| p.read()) };
    // SAFETY: every thread reaches this barrier (no early return above).
    unsafe { sync_threads() };
    let t = thread_idx();
    let i = i0 + t as u64;
    if i < a.n {
        let mut acc = SumsOf::<T>::ZERO;
        for k in 0..a.width {
            // SAFETY: t + k < len, written before the barrier.
            acc = acc.plus(unsafe { tile_mem.add((t + k) as usize).read() }.lift());
        }
        let o = (r * a.n + i) as usize;
        // SAFETY: o < rows · n.
        unsafe {
            sum.add(o).write(S::from_acc(acc.s));
            sumsq.add(o).write(Q::from_acc(acc.q));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Rung 5: running sums over block scans
// ---------------------------------------------------------------------------------------------

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
unsafe fn block_exclusive_scan<S, Q>(x: SegSums<S, Q>, slots: *mut SegSums<S, Q>) -> (SegSums<S, Q>, SegSums<S, Q>)
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

/// A placeholder sample (never stored: positions outside the pass are skipped).
#[inline(always)]
fn xs_zero<T: WindowIn>() -> T {
    // SAFETY: every WindowIn type is a plain integer or float, valid for any bit pattern.
    unsafe { core::mem::zeroed() }
}

/// One direction of a segmented running-sum pass over the tile's positions `[0, count)`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// Ascending positions, exclusive running sums (`E[p]` = sum of the positions before `p`
    /// since the last restart); restarts at positions `≡ 0 mod period`.
    ForwardExclusive,
    /// Descending positions, inclusive running sums (sum of `p` and the positions after it up to
    /// the end of its restart block); restarts at positions `≡ period − 1 mod period`.
    BackwardInclusive,
}

/// Runs one pass of the block's running sums over positions `[0, count)` in rounds of
/// `WINDOW_BLOCK · C` positions; `period = 0` means no restarts. Each round first stages its
/// positions' samples in shared memory (`xs`, one coalesced border-mapped loop, `sample_at(p)`
/// giving the sample at position `p`), then thread `t` scans the `C` consecutive staged positions
/// `t·C ..` (descending positions for the backward pass). Calls `store(p, running sum at p)` for
/// every position.
///
/// # Safety
/// All threads of the block call it with the same arguments; `slots` as [`block_exclusive_scan`];
/// `xs` holds `WINDOW_BLOCK · C` samples of shared memory.
#[inline(always)]
#[allow(unused_assignments)] // the last unrolled step's phase update
unsafe fn running_pass<T: WindowIn, const C: usize>(
    pass: Pass,
    count: u32,
    period: u32,
    slots: *mut Seg<SumsOf<T>>,
    xs: *mut T,
    sample_at: impl Fn(u32) -> T,
    mut store: impl FnMut(u32, SumsOf<T>),
) where
    T::S: WarpShuffle,
    T::Q: WarpShuffle,
{
    let round = WINDOW_BLOCK * C as u32;
    let t = thread_idx();
    let mut carry = Seg::IDENTITY;
    let mut r0 = 0;
    while r0 < count {
        // Position of the j-th staged sample of this round: ascending from r0, or descending
        // from count − 1 − r0.
        let position = |j: u32| match pass {
            Pass::ForwardExclusive => r0 as i64 + j as i64,
            Pass::BackwardInclusive => count as i64 - 1 - r0 as i64 - j as i64,
        };
        let valid = |p: i64| p >= 0 && p < count as i64;
        // C samples per thread, strided by the block (coalesced), all loads issued first.
        let mut staged = [xs_zero::<T>(); C];
        crate::unroll!(C, |k| {
            let p = position(t + k as u32 * WINDOW_BLOCK);
            if valid(p) {
                staged[k] = sample_at(p as u32);
            }
        });
        crate::unroll!(C, |k| {
            // SAFETY: t + k · WINDOW_BLOCK < round staged slots.
            unsafe { xs.add((t + k as u32 * WINDOW_BLOCK) as usize).write(staged[k]) };
        });
        // SAFETY: every thread reaches it (uniform loop bounds).
        unsafe { sync_threads() };
        let base = t * C as u32;
        let mut v = [SumsOf::<T>::ZERO; C];
        crate::unroll!(C, |c| {
            if valid(position(base + c as u32)) {
                // SAFETY: staged above, before the barrier.
                v[c] = unsafe { xs.add(base as usize + c).read() }.lift();
            }
        });
        // Local scan with restarts; `phase` tracks position mod period without a division per
        // element.
        let mut phase = if period == 0 {
            0
        } else {
            (position(base).max(0) as u32) % period
        };
        let restart_phase = match pass {
            Pass::ForwardExclusive => 0,
            Pass::BackwardInclusive => period.wrapping_sub(1),
        };
        // The scan runs in place: v[c] becomes the running sum at c (local to the chunk).
        let mut acc = SumsOf::<T>::ZERO;
        let mut first_restart = C;
        crate::unroll!(C, |c| {
            if period != 0 && phase == restart_phase {
                acc = SumsOf::<T>::ZERO;
                if first_restart == C {
                    first_restart = c;
                }
            }
            match pass {
                Pass::ForwardExclusive => {
                    let x = v[c];
                    v[c] = acc;
                    acc = acc.plus(x);
                }
                Pass::BackwardInclusive => {
                    acc = acc.plus(v[c]);
                    v[c] = acc;
                }
            }
            if period != 0 {
                phase = match pass {
                    Pass::ForwardExclusive => {
                        if phase + 1 == period {
                            0
                        } else {
                            phase + 1
                        }
                    }
                    Pass::BackwardInclusive => {
                        if phase == 0 {
                            period - 1
                        } else {
                            phase - 1
                        }
                    }
                };
            }
        });
        let aggregate = Seg {
            value: acc,
            reset: (first_restart < C) as u32,
        };
        // SAFETY: every thread runs the same number of rounds (the loop bound is uniform). Its
        // barriers also order this round's reads of `xs` before the next round's staging.
        let (exclusive, total) = unsafe { block_exclusive_scan(aggregate, slots) };
        let carry_in = carry.then(exclusive).value;
        crate::unroll!(C, |c| {
            let p = position(base + c as u32);
            if valid(p) {
                let value = if c < first_restart { carry_in.plus(v[c]) } else { v[c] };
                store(p as u32, value);
            }
        });
        carry = carry.then(total);
        r0 += round;
    }
}

/// Rung 5: block `b` produces outputs `[tile·k, tile·k + tile)` of row `r` (`b = r · tiles + k`)
/// from running sums (see the module docs): `E[s + w] − E[s]` for integers, `suffix[s] +
/// prefix[s + w]` for floats, read back from shared memory by thread `t` for its `C` outputs
/// `t·C ..` and written with 16-byte stores where aligned. A null `sumsq` skips the squares'
/// stores (the 2D sum-only pass).
///
/// # Safety
/// `x` and the outputs hold `rows · n`; grid = `rows · ⌈n / tile⌉` blocks of `WINDOW_BLOCK`;
/// `a.tile` ≤ `running_tile(..).max_outputs` and a multiple of `C`; dynamic shared memory holds
/// `running_shared_bytes(WINDOW_BLOCK · C, ..)` bytes.
pub unsafe fn running_sum<T, S, Q, const C: usize>(x: *const T, sum: *mut S, sumsq: *mut Q, a: RowArgs<T>)
where
    T: WindowIn,
    T::S: WarpShuffle,
    T::Q: WarpShuffle,
    S: FromAcc<T::S>,
    Q: FromAcc<T::Q>,
{
    const { assert!(C.is_power_of_two() && C <= 16) };
    let tile = a.tile as u64;
    let tiles = a.n.div_ceil(tile);
    let b = block_idx() as u64;
    let (r, k) = (b / tiles, b % tiles);
    let o0 = k * tile;
    let outputs = tile.min(a.n - o0) as u32;
    let width = a.width;
    let single = running_single_round(width as u64, a.tile, C as u32, T::FLOAT);
    let end_base = if single { width } else { a.tile };
    let slots_n = WINDOW_BLOCK * C as u32;
    // SAFETY: r < rows by the grid shape; shared memory holds slots_n sums, slots_n squares and
    // one scan slot per warp (the host sizes it with running_shared_bytes).
    let (row, s_mem, q_mem, scan, xs) = unsafe {
        let base: *mut u8 = dynamic_shared();
        let s_mem = base as *mut T::S;
        let q_mem = s_mem.add(slots_n as usize) as *mut T::Q;
        let scan = q_mem.add(slots_n as usize) as *mut Seg<SumsOf<T>>;
        let staged = scan.add(WINDOW_WARPS as usize) as usize - base as usize;
        let xs = base.add(staged.next_multiple_of(16)) as *mut T;
        (x.add((r * a.n) as usize), s_mem, q_mem, scan, xs)
    };
    let first = o0 as i64 - a.anchor as i64;
    let interior = first >= 0 && first as u64 + outputs as u64 + width as u64 <= a.n;
    let extended = bordered(row, &a);
    let load = |p: u32| {
        let pos = first + p as i64;
        // SAFETY: interior tiles read inside the row; others map through the border.
        unsafe {
            if interior {
                row.add(pos as usize).read()
            } else {
                extended.sample(pos)
            }
        }
    };
    let put = |slot: u32, v: SumsOf<T>| {
        // SAFETY: slot < slots_n (the tile geometry keeps every stored slot in range).
        unsafe {
            s_mem.add(slot as usize).write(v.s);
            q_mem.add(slot as usize).write(v.q);
        }
    };
    let ends = width..width + outputs;
    if T::FLOAT {
        // Prefix sums restarting at multiples of w: the window ends, slots [tile, tile + outputs).
        // SAFETY: uniform arguments; every thread calls.
        unsafe {
            running_pass::<T, C>(
                Pass::ForwardExclusive,
                width + outputs,
                width,
                scan,
                xs,
                load,
                |p, v| {
                    if ends.contains(&p) {
                        put(end_base + p - width, v);
                    }
                },
            );
        }
        // Suffix sums to the end of each w-block: the window starts, slots [0, outputs).
        let span = outputs.div_ceil(width) * width;
        // SAFETY: as above.
        unsafe {
            running_pass::<T, C>(Pass::BackwardInclusive, span, width, scan, xs, load, |p, v| {
                if p < outputs {
                    put(p, v);
                }
            });
        }
    } else {
        // SAFETY: as above.
        unsafe {
            running_pass::<T, C>(Pass::ForwardExclusive, width + outputs, 0, scan, xs, load, |p, v| {
                if single || p < outputs {
                    if p < outputs || ends.contains(&p) {
                        put(p, v);
                    }
                } else if ends.contains(&p) {
                    put(end_base + p - width, v);
                }
            });
        }
    }
    // SAFETY: every thread reaches it; the slots read below were stored before it.
    unsafe { sync_threads() };
    let s0 = thread_idx() * C as u32;
    if s0 >= outputs {
        return;
    }
    let count = (outputs - s0).min(C as u32) as usize;
    let mut vs = [S::ZERO; C];
    let mut vq = [Q::ZERO; C];
    crate::unroll!(C, |c| {
        if c < count {
            let s = s0 + c as u32;
            // SAFETY: s < outputs and end_base + s < slots_n by the geometry.
            let (start, end) = unsafe {
                let e = (end_base + s) as usize;
                (
                    Sums {
                        s: s_mem.add(s as usize).read(),
                        q: q_mem.add(s as usize).read(),
                    },
                    Sums {
                        s: s_mem.add(e).read(),
                        q: q_mem.add(e).read(),
                    },
                )
            };
            let w = if T::FLOAT { start.plus(end) } else { end.minus(start) };
            vs[c] = S::from_acc(w.s);
            vq[c] = Q::from_acc(w.q);
        }
    });
    let o = (r * a.n + o0 + s0 as u64) as usize;
    // SAFETY: outputs o .. o + count lie in row r.
    unsafe {
        store_run(sum.add(o), &vs, count);
        if !sumsq.is_null() {
            store_run(sumsq.add(o), &vq, count);
        }
    }
}

/// 16 bytes written to the padded tile as four word stores (the padded layout keeps words only
/// 4-byte aligned).
#[derive(Clone, Copy)]
#[repr(C)]
struct Words([u32; 4]);

/// One tile of the sliding kernel: outputs `[o0, o0 + outputs)` of the row starting at flat index
/// `row_start`, which read the row's samples at positions `[first, first + len)`. The samples
/// inside the row that fill whole aligned 16-byte vectors (`vectors` of them from vector
/// `v_begin`) are staged with vector loads, the rest (row ends, border positions) one by one.
#[derive(Clone, Copy)]
struct SlidingTile {
    row_start: u64,
    o0: u64,
    outputs: usize,
    len: usize,
    first: i64,
    /// Tile element 0 sits at shared element `lead` (`g0 mod P`), so vectors land aligned.
    lead: usize,
    v_begin: u64,
    vectors: usize,
}

impl SlidingTile {
    #[inline(always)]
    fn new<T, const P: usize>(k: u64, span: u64, a: &RowArgs<T>, vector_loads: bool) -> Self {
        let tiles = a.n.div_ceil(span);
        let (r, kk) = (k / tiles, k % tiles);
        let row_start = r * a.n;
        let o0 = kk * span;
        let outputs = span.min(a.n - o0) as usize;
        let len = outputs + a.width as usize - 1;
        let first = o0 as i64 - a.anchor as i64;
        let g0 = row_start as i64 + first;
        // The in-row samples [lo, hi), as flat indices.
        let lo = row_start as i64 + first.max(0);
        let hi = row_start as i64 + (first + len as i64).min(a.n as i64);
        let (v_begin, v_end) = ((lo as u64).div_ceil(P as u64), (hi.max(lo) as u64) / P as u64);
        let vectors = if vector_loads && v_end > v_begin {
            ((v_end - v_begin) as usize).min(SLIDING_VECTORS * WINDOW_BLOCK as usize)
        } else {
            0
        };
        SlidingTile {
            row_start,
            o0,
            outputs,
            len,
            first,
            lead: g0.rem_euclid(P as i64) as usize,
            v_begin,
            vectors,
        }
    }

    /// Tile position of vector `j`'s first sample.
    #[inline(always)]
    fn vector_pos<const P: usize>(&self, j: usize) -> usize {
        ((self.v_begin as i64 + j as i64) * P as i64 - (self.row_start as i64 + self.first)) as usize
    }

    /// This thread's vector loads (vectors `t`, `t + B`, ...), all issued before any is used.
    ///
    /// # Safety
    /// `x` is the kernel's input, 16-byte aligned when `vectors > 0`.
    #[inline(always)]
    unsafe fn load_vectors<T, const P: usize>(&self, x: *const T, t: usize) -> [[u32; 4]; SLIDING_VECTORS] {
        let mut v = [[0u32; 4]; SLIDING_VECTORS];
        crate::unroll!(SLIDING_VECTORS, |i| {
            let j = t + i * WINDOW_BLOCK as usize;
            if j < self.vectors {
                // SAFETY: vector v_begin + j lies inside the row (SlidingTile::new), aligned.
                v[i] = unsafe { load_nc_v4(x.add((self.v_begin as usize + j) * P) as *const [u32; 4]) };
            }
        });
        v
    }

    /// Stages the tile: the aligned in-row vectors, then the remaining positions one by one
    /// (border-mapped).
    ///
    /// # Safety
    /// `tile` is the padded shared tile sized for this span and width; `x` the kernel's input.
    #[inline(always)]
    unsafe fn stage<T: WindowIn, const P: usize>(&self, tile: *mut u8, x: *const T, a: &RowArgs<T>, t: usize) {
        let size = core::mem::size_of::<T>();
        // SAFETY: forwarded.
        let pre = unsafe { self.load_vectors::<T, P>(x, t) };
        crate::unroll!(SLIDING_VECTORS, |i| {
            let j = t + i * WINDOW_BLOCK as usize;
            if j < self.vectors {
                // SAFETY: the vector's 16 bytes land at a 4-byte aligned padded offset inside
                // the tile.
                unsafe {
                    let dst = tile.add(sliding_byte(self.lead + self.vector_pos::<P>(j), size)) as *mut Words;
                    dst.write(Words(pre[i]));
                }
            }
        });
        // Scalar positions: [0, head) and [tail, len).
        let (head, tail) = if self.vectors > 0 {
            (self.vector_pos::<P>(0), self.vector_pos::<P>(self.vectors))
        } else {
            (self.len, self.len)
        };
        // SAFETY: the tile's row is inside the input.
        let row = bordered(unsafe { x.add(self.row_start as usize) }, a);
        let scalars = head + (self.len - tail);
        let mut j = t;
        while j < scalars {
            let p = if j < head { j } else { tail + (j - head) };
            // SAFETY: p < len positions of the tile; the row holds n samples.
            unsafe {
                let v = row.sample(self.first + p as i64);
                (tile.add(sliding_byte(self.lead + p, size)) as *mut T).write(v);
            }
            j += WINDOW_BLOCK as usize;
        }
    }
}

/// Collects one thread's run of `C` outputs into 16-byte vectors and writes each, once full, to
/// the thread's swizzled slot of a shared stage (so only one vector lives in registers).
struct StageWriter<O: OutElem, const C: usize> {
    stage: *mut u8,
    t: usize,
    lanes: [O; 4],
}

impl<O: OutElem, const C: usize> StageWriter<O, C> {
    #[inline(always)]
    fn new(stage: *mut u8, t: usize) -> Self {
        const { assert!(O::LANES <= 4 && C.is_multiple_of(O::LANES)) };
        StageWriter {
            stage,
            t,
            lanes: [O::ZERO; 4],
        }
    }

    /// Output `c < C` of the run (called for `c = 0, 1, ..` in order, with constant `c`).
    ///
    /// # Safety
    /// `stage` is a 16-byte aligned shared region of `WINDOW_BLOCK · C` values, and `t` this
    /// thread's index.
    #[inline(always)]
    unsafe fn put(&mut self, c: usize, v: O) {
        self.lanes[c % O::LANES] = v;
        if (c + 1).is_multiple_of(O::LANES) {
            let slot = sliding_stage_slot(self.t, c / O::LANES, C / O::LANES);
            // SAFETY: slot < WINDOW_BLOCK · C / LANES, 16-byte aligned (forwarded).
            unsafe { store_shared_v4(self.stage.add(16 * slot) as *mut [u32; 4], O::pack(|l| self.lanes[l])) };
        }
    }
}

/// The sliding step of one thread's run of `P` window sums (the sliding and fused kernels):
/// hands output `c` (a constant after
/// unrolling) and its window sums to `put`, then moves the window by `step(c)` (entering minus
/// leaving sample) while outputs remain.
#[inline(always)]
#[allow(unused_assignments)] // the last unrolled slide
fn slide_run<S: Acc, Q: Acc, const P: usize>(
    mut acc: Sums<S, Q>,
    count: usize,
    step: impl Fn(usize) -> Sums<S, Q>,
    mut put: impl FnMut(usize, Sums<S, Q>),
) {
    crate::unroll!(P, |c| {
        put(c, acc);
        if c + 1 < count {
            acc = acc.plus(step(c));
        }
    });
}

/// Copies the block's `outputs` staged values to `dst` with coalesced stores: consecutive threads
/// write consecutive 16-byte vectors (a warp writes 512 contiguous bytes), or consecutive values
/// when `dst` is not 16-byte aligned.
///
/// # Safety
/// `stage` holds the values a [`StageWriter`] with the same `C` wrote (after a barrier); `dst`
/// addresses `outputs` writable values.
#[inline(always)]
unsafe fn stage_flush<O: OutElem, const C: usize>(
    stage: *const u8,
    dst: *mut O,
    outputs: usize,
    t: usize,
    block: usize,
) {
    let vecs = C / O::LANES;
    let slot_of = |j: usize| 16 * sliding_stage_slot(j / vecs, j % vecs, vecs);
    // SAFETY: element e < outputs was staged.
    let value = |e: usize| unsafe {
        (stage.add(slot_of(e / O::LANES) + (e % O::LANES) * core::mem::size_of::<O>()) as *const O).read()
    };
    let mut e = t;
    if (dst as usize).is_multiple_of(16) {
        let full = outputs / O::LANES;
        let mut j = t;
        while j < full {
            // SAFETY: vector j < full lies in the stage and in dst, both 16-byte aligned.
            unsafe {
                store_v4(
                    dst.add(j * O::LANES) as *mut [u32; 4],
                    load_shared_v4(stage.add(slot_of(j)) as *const [u32; 4]),
                )
            };
            j += block;
        }
        e = full * O::LANES + t;
    }
    while e < outputs {
        // SAFETY: e < outputs.
        unsafe { dst.add(e).write(value(e)) };
        e += block;
    }
}

/// Rung 5 for integers: running sums slid by each thread. Tile `k` holds outputs
/// `[S·k', S·k' + S)` of a row (`S = WINDOW_BLOCK · P`, `P` = 16 bytes of input per thread); a
/// block loops over tiles `k, k + grid, ..` (the host launches one block per tile, which measured
/// faster on the H100 than persistent blocks prefetching the next tile).
///
/// 1. The block stages the tile's `S + w − 1` samples in shared memory: the aligned 16-byte
///    vectors inside the row with read-only vector loads, row ends and border positions one by
///    one. The layout inserts 4 bytes after every 16 ([`sliding_byte`]), so the threads'
///    16-byte-strided reads below fall in distinct banks.
/// 2. Windows wider than `SLIDING_DIRECT_MAX`: the block sums each 16-element chunk once, and
///    on long tiles (`P = 16`, u8) scans those sums into prefix sums.
/// 3. Thread `t` forms the sum of its first window (directly, or from whole chunks — two prefix
///    sums or `w/16` chunk sums — plus at most two partial ones), then slides it over its `P`
///    outputs, adding the entering sample and
///    subtracting the leaving one — exact in wrapping integer arithmetic ([`SlideIn`]).
/// 4. The outputs go through a swizzled shared stage, so global stores are whole 512-byte warp
///    rows instead of one 16-byte piece per thread every `16·P / size` bytes.
///
/// # Safety
/// As [`running_sum`] (a null `sumsq` skips the squares' stores), with blocks of `WINDOW_BLOCK`
/// and dynamic shared memory of `sliding_layout(S, w, ..).bytes`; widths up to
/// `SLIDING_MAX_WIDTH`.
#[allow(unused_assignments)] // the last unrolled slide
pub unsafe fn sliding_sum<T, S, Q, const P: usize>(x: *const T, sum: *mut S, sumsq: *mut Q, a: RowArgs<T>)
where
    T: SlideIn,
    T::S: WarpShuffle,
    T::SQ: WarpShuffle,
    S: FromAcc<T::S>,
    Q: FromAcc<T::SQ>,
{
    let size = core::mem::size_of::<T>();
    const { assert!(P * core::mem::size_of::<T>() == 16) };
    // Outputs of one vector per thread skip the stage.
    let direct = const { P == S::LANES && P == Q::LANES };
    // Wide windows: chunk prefix sums by a block scan (O(1) per window) on long tiles only.
    let scan = P >= 16;
    let span = WINDOW_BLOCK as u64 * P as u64;
    let total_tiles = a.rows * a.n.div_ceil(span);
    let w = a.width as usize;
    let t = thread_idx() as usize;
    let layout = sliding_layout(
        span as u32,
        a.width as u64,
        size,
        core::mem::size_of::<SumsOf<T>>(),
        core::mem::size_of::<S>(),
        core::mem::size_of::<Q>(),
    );
    // SAFETY: the host sized shared memory with sliding_layout for this span and width.
    let (tile, chunks, stage_s, stage_q) = unsafe {
        let base: *mut u8 = dynamic_shared();
        (
            base,
            base.add(layout.chunks) as *mut SlideSums<T>,
            base.add(layout.stage_sum),
            base.add(layout.stage_sumsq),
        )
    };
    let vector_loads = (x as usize).is_multiple_of(16);
    let chunk = SLIDING_CHUNK as usize;
    let wide = w > SLIDING_DIRECT_MAX as usize;
    let mut k = block_idx() as u64;
    while k < total_tiles {
        let cur = SlidingTile::new::<T, P>(k, span, &a, vector_loads);
        // SAFETY: every thread reaches it (k is block-uniform): the previous tile's readers of
        // the tile, chunk sums and stages are done.
        unsafe { sync_threads() };
        // SAFETY: the layout's tile region.
        unsafe { cur.stage::<T, P>(tile, x, &a, t) };
        // SAFETY: every thread reaches it.
        unsafe { sync_threads() };
        let lead = cur.lead as u32;
        let len = cur.len;
        // Shared offsets in 32-bit arithmetic (sliding_byte's layout).
        let elem = |p: usize| {
            let b = (lead + p as u32) * size as u32;
            // SAFETY: callers pass p < len (inside the staged tile).
            unsafe { (tile.add((b + 4 * (b / 16)) as usize) as *const T).read() }.lift_slide()
        };
        if wide {
            // Long tiles: prefix[c], the sums of chunks 0..c (16 tile positions each). Thread t
            // sums chunks 2t and 2t + 1; a block scan of those pairs gives every prefix.
            let n_chunks = len.div_ceil(chunk);
            let chunk_sum = |j: usize| {
                let mut acc = SlideSums::<T>::ZERO;
                if j < n_chunks {
                    for p in j * chunk..(j * chunk + chunk).min(len) {
                        acc = acc.plus(elem(p));
                    }
                }
                acc
            };
            if !scan {
                // Short tiles (P < 16): a block scan per tile costs more than it saves; each
                // chunk's own sum instead, summed per window below.
                let mut j = t;
                while j < n_chunks {
                    // SAFETY: j < n_chunks slots of the chunk region.
                    unsafe { chunks.add(j).write(chunk_sum(j)) };
                    j += WINDOW_BLOCK as usize;
                }
            }
            let (a0, a1) = if scan {
                (chunk_sum(2 * t), chunk_sum(2 * t + 1))
            } else {
                (SlideSums::<T>::ZERO, SlideSums::<T>::ZERO)
            };
            let pair = Seg {
                value: a0.plus(a1),
                reset: 0,
            };
            if scan {
                // SAFETY: every thread calls it (scan is uniform); the stage is free until the
                // outputs are staged (the scan's last barrier precedes any stage write).
                let (before, _) = unsafe { block_exclusive_scan(pair, stage_s as *mut SegSums<T::S, T::SQ>) };
                // SAFETY: 2t + 1 ≤ n_chunks + 1 slots of the chunk region (layout).
                unsafe {
                    if 2 * t <= n_chunks {
                        chunks.add(2 * t).write(before.value);
                    }
                    if 2 * t < n_chunks {
                        chunks.add(2 * t + 1).write(before.value.plus(a0));
                    }
                }
            }
            // SAFETY: every thread reaches it (wide is uniform).
            unsafe { sync_threads() };
        }
        let s0 = t * P;
        let squares = !sumsq.is_null();
        let o = (cur.row_start + cur.o0) as usize;
        if s0 < cur.outputs {
            let count = (cur.outputs - s0).min(P);
            // The first window [s0, s0 + w).
            let mut acc = SlideSums::<T>::ZERO;
            if wide {
                // Whole chunks from two prefix sums (w > 32 spans at least one), then the partial
                // chunks at both ends.
                let c_first = s0.div_ceil(chunk);
                let c_end = (s0 + w) / chunk;
                if scan {
                    // SAFETY: c_first ≤ c_end ≤ n_chunks, written before the barrier.
                    acc = unsafe { chunks.add(c_end).read().minus(chunks.add(c_first).read()) };
                } else {
                    for c in c_first..c_end {
                        // SAFETY: chunk sums written before the barrier.
                        acc = acc.plus(unsafe { chunks.add(c).read() });
                    }
                }
                for p in s0..c_first * chunk {
                    acc = acc.plus(elem(p));
                }
                for p in c_end * chunk..s0 + w {
                    acc = acc.plus(elem(p));
                }
            } else {
                for p in s0..s0 + w {
                    acc = acc.plus(elem(p));
                }
            }
            let step = |c: usize| elem(s0 + c + w).minus(elem(s0 + c));
            if direct {
                // One 16-byte vector per thread and output: the stores already coalesce.
                let mut vs = [S::ZERO; P];
                let mut vq = [Q::ZERO; P];
                slide_run::<_, _, P>(acc, count, step, |c, v| {
                    vs[c] = S::from_acc(v.s);
                    vq[c] = Q::from_acc(v.q);
                });
                // SAFETY: outputs o + s0 .. o + s0 + count lie in the tile's row.
                unsafe {
                    store_run(sum.add(o + s0), &vs, count);
                    if squares {
                        store_run(sumsq.add(o + s0), &vq, count);
                    }
                }
            } else {
                let mut ws = StageWriter::<S, P>::new(stage_s, t);
                let mut wq = StageWriter::<Q, P>::new(stage_q, t);
                // Positions past `count` stage stale values that are never flushed.
                // SAFETY: the stages hold WINDOW_BLOCK · P values each.
                slide_run::<_, _, P>(acc, count, step, |c, v| unsafe {
                    ws.put(c, S::from_acc(v.s));
                    if squares {
                        wq.put(c, Q::from_acc(v.q));
                    }
                });
            }
        }
        if direct {
            k += grid_dim() as u64;
            continue;
        }
        // SAFETY: every thread reaches it.
        unsafe { sync_threads() };
        // SAFETY: outputs o .. o + outputs lie in the tile's row; the stages were filled above.
        unsafe {
            stage_flush::<S, P>(stage_s, sum.add(o), cur.outputs, t, WINDOW_BLOCK as usize);
            if !sumsq.is_null() {
                stage_flush::<Q, P>(stage_q, sumsq.add(o), cur.outputs, t, WINDOW_BLOCK as usize);
            }
        }
        k += grid_dim() as u64;
    }
}

// ---------------------------------------------------------------------------------------------
// 2D boxes
// ---------------------------------------------------------------------------------------------

/// Mean and population variance of a window from its exact sums (`a.inv_n = 1/n`, `a.inv_n2 =
/// 1/n²`, rounded by the host). Integers form `n·Σx² − (Σx)²` exactly in 128 bits (it is ≥ 0 by
/// Cauchy–Schwarz), round it once into f64 and multiply by `1/n²`; floats use `Σx²/n − mean²`,
/// clamped at 0 (rounding can push a constant window's variance a few ulps below zero; NaN stays
/// NaN). Multiplying by the rounded reciprocals keeps the mean within 2 ulps of f64 and the
/// integer variance within 3 (a division would give 1 and 2, at a dozen dependent FP64
/// instructions per output).
#[inline(always)]
fn mean_variance<T: WindowIn>(w: SumsOf<T>, a: &BoxArgs<T>) -> (f64, f64) {
    let mean = w.s.to_f64() * a.inv_n;
    let variance = if T::FLOAT {
        let v = w.q.to_f64() * a.inv_n - mean * mean;
        if v < 0.0 { 0.0 } else { v }
    } else {
        let s = w.s.to_w128();
        let magnitude = if s.is_negative() { W128::ZERO.wrapping_sub(s) } else { s };
        // |Σx| < 2^64 for every integer instance (MAX_WINDOW), so its square is one wide product.
        let square = W128::mul_wide(magnitude.lo, magnitude.lo);
        let numerator = w.q.to_w128().wrapping_mul_u64(a.samples()).wrapping_sub(square);
        numerator.to_f64_unsigned() * a.inv_n2
    };
    (mean, variance)
}

/// [`mean_variance`] of the sliding accumulators (squares in [`SlideIn::SQ`]): the spread
/// `n·Σx² − (Σx)²` in 64-bit arithmetic where it fits (u8 always), else the 128-bit path.
#[inline(always)]
fn slide_mean_variance<T: SlideIn>(w: SlideSums<T>, a: &BoxArgs<T>) -> (f64, f64) {
    match T::narrow_spread(w.s, w.q, a.samples()) {
        Some(spread) => (w.s.to_f64() * a.inv_n, spread * a.inv_n2),
        None => mean_variance::<T>(
            Sums {
                s: w.s,
                q: T::widen_sq(w.q),
            },
            a,
        ),
    }
}

/// The two outputs of a box kind from a window's sums `w` (the second is unused for one-output
/// kinds), given how to form the moments.
#[inline(always)]
fn box_outputs<A: Acc, B: Acc, S: FromAcc<A>, Q: FromAcc<B>>(
    w: Sums<A, B>,
    kind: BoxKind,
    moments: impl Fn(Sums<A, B>) -> (f64, f64),
) -> (S, Q) {
    match kind {
        BoxKind::Sum | BoxKind::SumSumSq => (S::from_acc(w.s), Q::from_acc(w.q)),
        BoxKind::MeanVar => {
            let (m, v) = moments(w);
            (S::from_f64(m), Q::from_f64(v))
        }
        BoxKind::Std => {
            let (_, v) = moments(w);
            (S::from_f64(core::intrinsics::sqrtf64(v)), Q::ZERO)
        }
    }
}

/// Writes the box kernel's outputs at flat index `o` for the window sums `w`.
///
/// # Safety
/// `o0` (and `o1` for two-output kinds) hold index `o`.
#[inline(always)]
unsafe fn write_box<T, S, Q>(o0: *mut S, o1: *mut Q, o: usize, w: SumsOf<T>, a: &BoxArgs<T>)
where
    T: WindowIn,
    S: FromAcc<T::S>,
    Q: FromAcc<T::Q>,
{
    let kind = BoxKind::from_code(a.kind);
    let (v0, v1) = box_outputs::<_, _, S, Q>(w, kind, |w| mean_variance::<T>(w, a));
    // SAFETY: forwarded.
    unsafe {
        o0.add(o).write(v0);
        if kind.two_outputs() {
            o1.add(o).write(v1);
        }
    }
}

/// Second pass of the separable box: windows of `h` rows down each column of the row sums
/// (`rs`, `rq`: accumulator-typed, one per pixel, from the running-sum row kernel). An extended
/// row outside the plane is all border: its row sum is that of the border's row (mapped index),
/// or `w` copies of the constant.
///
/// Integers: thread `(plane, column, strip)` slides a running sum down its strip of `a.strip`
/// output rows, adding the entering row sum and subtracting the leaving one (exact, wrapping);
/// neighbouring threads take neighbouring columns, so every load and store is coalesced.
///
/// Floats: van Herk/Gil-Werman down the columns. Thread `(plane, column, block)` owns the outputs
/// of one `h`-row block: it writes the suffix sums of its block (descending) to the `ts`/`tq`
/// scratch, then walks the next block down, adding its prefix sums to them.
///
/// # Safety
/// `rs`, `rq` (and `ts`, `tq` for floats) hold `planes · height · width` accumulators; the
/// outputs as many elements; grid covers `planes · width · ⌈height / strip⌉` threads (integers) or
/// `planes · width · ⌈height / h⌉` (floats) in blocks of `WINDOW_BLOCK`.
pub unsafe fn box_columns<T, S, Q>(
    rs: *const T::S,
    rq: *const T::Q,
    ts: *mut T::S,
    tq: *mut T::Q,
    o0: *mut S,
    o1: *mut Q,
    a: BoxArgs<T>,
) where
    T: WindowIn,
    S: FromAcc<T::S>,
    Q: FromAcc<T::Q>,
{
    let kind = BoxKind::from_code(a.kind);
    let h = a.win_h as u64;
    let rows_per_thread = if T::FLOAT { h } else { a.strip as u64 };
    let strips = a.height.div_ceil(rows_per_thread);
    let g = global_thread_idx();
    let per_plane = a.width * strips;
    if g >= a.planes * per_plane {
        return;
    }
    let (plane, rest) = (g / per_plane, g % per_plane);
    let (strip, col) = (rest / a.width, rest % a.width);
    let mode = BorderMode::from_code(a.border);
    let border_row = a.cval.lift().times(a.win_w as u64);
    let plane_base = plane * a.height * a.width;
    let at = |row: u64| (plane_base + row * a.width + col) as usize;
    // Row sum of extended row `y` (any integer) of this column.
    // Sum-only boxes: the row pass wrote no squares, so none are read.
    let squares = kind.needs_sumsq();
    let row_sum = |y: i64| match border_index(y, a.height as i64, mode) {
        // SAFETY: j < height; the scratch holds the plane.
        Some(j) => unsafe {
            let i = at(j as u64);
            Sums {
                s: rs.add(i).read(),
                q: if squares { rq.add(i).read() } else { T::Q::ZERO },
            }
        },
        None => border_row,
    };
    let ay = a.anchor_y as i64;
    let s0 = strip * rows_per_thread;
    let s1 = (s0 + rows_per_thread).min(a.height);
    if T::FLOAT {
        // Outputs s0 .. s1 form one h-block of window starts: suffix sums of this block, then
        // prefix sums of the next one.
        let mut suffix = SumsOf::<T>::ZERO;
        let mut y = s0 + h;
        while y > s0 {
            y -= 1;
            suffix = row_sum(y as i64 - ay).plus(suffix);
            if y < s1 {
                // SAFETY: y < height.
                unsafe {
                    ts.add(at(y)).write(suffix.s);
                    tq.add(at(y)).write(suffix.q);
                }
            }
        }
        let mut prefix = SumsOf::<T>::ZERO;
        for s in s0..s1 {
            // SAFETY: s < height; the scratch at s was written above by this thread.
            unsafe {
                let start = Sums {
                    s: ts.add(at(s)).read(),
                    q: tq.add(at(s)).read(),
                };
                write_box::<T, S, Q>(o0, o1, at(s), start.plus(prefix), &a);
            }
            prefix = prefix.plus(row_sum((s + h) as i64 - ay));
        }
    } else {
        let mut acc = SumsOf::<T>::ZERO;
        for k in 0..h as i64 {
            acc = acc.plus(row_sum(s0 as i64 - ay + k));
        }
        for s in s0..s1 {
            // SAFETY: s < height.
            unsafe { write_box::<T, S, Q>(o0, o1, at(s), acc, &a) };
            let y = s as i64 - ay;
            acc = acc.plus(row_sum(y + h as i64)).minus(row_sum(y));
        }
    }
}

/// An integer input of the fused 2D kernel: `16 / size` samples packed in the four words of one
/// 16-byte vector (kept packed in registers between the load and their use: 4 registers instead
/// of one per sample).
pub trait FusedIn: SlideIn {
    const ZERO: Self;
    /// Sample `i` of the vector.
    fn lane(words: &[u32; 4], i: usize) -> Self;
    /// Sets sample `i` of a vector whose sample `i` is zero.
    fn set_lane(words: &mut [u32; 4], i: usize, v: Self);
    /// The sample's bits, zero-extended.
    fn bits(self) -> u32;
    /// Shifts `v` in at the vector's last sample, dropping the first: `16 / size` pushes fill the
    /// vector in order (lets a rolled loop fill it without indexing registers).
    #[inline(always)]
    fn push_lane(words: [u32; 4], v: Self) -> [u32; 4] {
        let shift = 8 * size_of::<Self>() as u32;
        let x = words[0] as u128 | (words[1] as u128) << 32 | (words[2] as u128) << 64 | (words[3] as u128) << 96;
        let x = (x >> shift) | (v.bits() as u128) << (128 - shift);
        [x as u32, (x >> 32) as u32, (x >> 64) as u32, (x >> 96) as u32]
    }
}

impl FusedIn for u8 {
    const ZERO: u8 = 0;
    #[inline(always)]
    fn lane(words: &[u32; 4], i: usize) -> u8 {
        (words[i / 4] >> (8 * (i % 4))) as u8
    }
    #[inline(always)]
    fn set_lane(words: &mut [u32; 4], i: usize, v: u8) {
        words[i / 4] |= (v as u32) << (8 * (i % 4));
    }
    #[inline(always)]
    fn bits(self) -> u32 {
        self as u32
    }
}

impl FusedIn for u16 {
    const ZERO: u16 = 0;
    #[inline(always)]
    fn lane(words: &[u32; 4], i: usize) -> u16 {
        (words[i / 2] >> (16 * (i % 2))) as u16
    }
    #[inline(always)]
    fn set_lane(words: &mut [u32; 4], i: usize, v: u16) {
        words[i / 2] |= (v as u32) << (16 * (i % 2));
    }
    #[inline(always)]
    fn bits(self) -> u32 {
        self as u32
    }
}

impl FusedIn for i32 {
    const ZERO: i32 = 0;
    #[inline(always)]
    fn lane(words: &[u32; 4], i: usize) -> i32 {
        words[i] as i32
    }
    #[inline(always)]
    fn set_lane(words: &mut [u32; 4], i: usize, v: i32) {
        words[i] = v as u32;
    }
    #[inline(always)]
    fn bits(self) -> u32 {
        self as u32
    }
}

/// One extended input row as a thread of the fused kernel sees it: its `P` columns (one vector)
/// and its halo columns.
#[derive(Clone, Copy)]
struct FusedRow<T> {
    main: [u32; 4],
    halo: [T; FUSED_HALO],
}

/// Where a thread of the fused kernel reads its samples: its plane, its first main column, and
/// the border-mapped source column of each of its halo columns (`None`: the constant).
struct FusedSource<T> {
    plane_x: *const T,
    height: i32,
    width: i32,
    mode: BorderMode,
    cval: T,
    col: i32,
    /// The `P` main columns are one aligned vector inside every row.
    vector: bool,
    halo_src: [Option<i32>; FUSED_HALO],
}

impl<T: FusedIn> FusedSource<T> {
    /// This thread's samples of extended row `y` (any integer).
    ///
    /// # Safety
    /// `plane_x` holds `height` rows of `width` samples, read-only during the kernel.
    #[inline(always)]
    unsafe fn fetch<const P: usize>(&self, y: i32) -> FusedRow<T> {
        let mut r = FusedRow {
            main: [0u32; 4],
            halo: [self.cval; FUSED_HALO],
        };
        let Some(yy) = border_index_i32(y, self.height, self.mode) else {
            crate::unroll!(P, |p| { T::set_lane(&mut r.main, p, self.cval) });
            return r;
        };
        // SAFETY: yy < height: the row lies in the plane.
        let row = unsafe { self.plane_x.add(yy as usize * self.width as usize) };
        if self.vector {
            // SAFETY: 16 aligned bytes inside the row (vector); the input is read-only.
            r.main = unsafe { load_nc_v4(row.add(self.col as usize) as *const [u32; 4]) };
        } else if self.col + P as i32 <= self.width {
            crate::unroll!(P, |p| {
                // SAFETY: col + p < width.
                T::set_lane(&mut r.main, p, unsafe { row.add(self.col as usize + p).read() });
            });
        } else {
            // Past the row's end (the last column block only): border-mapped, in a rolled loop
            // (one copy of the mapping's 64-bit remainder, not P).
            for p in 0..P as i32 {
                let v = match border_index_i32(self.col + p, self.width, self.mode) {
                    // SAFETY: j < width.
                    Some(j) => unsafe { row.add(j as usize).read() },
                    None => self.cval,
                };
                r.main = T::push_lane(r.main, v);
            }
        }
        crate::unroll!(FUSED_HALO, |k| {
            if let Some(j) = self.halo_src[k] {
                // SAFETY: j < width.
                r.halo[k] = unsafe { row.add(j as usize).read() };
            }
        });
        r
    }

    /// The samples of the row entering at `y` and of the row leaving (`y − h`; zeros while the
    /// first window of the strip, which starts at `y_first`, fills).
    ///
    /// # Safety
    /// As [`FusedSource::fetch`].
    #[inline(always)]
    unsafe fn fetch_pair<const P: usize>(&self, y: i32, h: i32, y_first: i32) -> (FusedRow<T>, FusedRow<T>) {
        let none = FusedRow {
            main: [0u32; 4],
            halo: [T::ZERO; FUSED_HALO],
        };
        // SAFETY: forwarded.
        unsafe {
            (
                self.fetch::<P>(y),
                if y - h >= y_first { self.fetch::<P>(y - h) } else { none },
            )
        }
    }
}

/// Fused 2D box for integers: one pass over the input, O(1) work per output in both axes for
/// windows up to [`FUSED_MAX_WIDTH`](crate::abi::window::FUSED_MAX_WIDTH) wide (any height).
///
/// Block `(plane, strip, column block)` owns output columns `[c0, c0 + FUSED_BLOCK·P)` and output
/// rows `[s0, s1)` (`a.strip` of them); the outputs need the *extended* columns
/// `e ∈ [0, FUSED_BLOCK·P + w − 1)` (column `c0 − ax + e`, border-mapped). Thread `t` owns the `P`
/// main columns `c0 + t·P ..` (one 16-byte vector of input: `P = 16 / size`) and up to
/// [`FUSED_HALO`] of the `w − 1` halo columns, and keeps their *vertical* running sums in
/// registers.
///
/// Walking down the extended rows `y` from `s0 − ay`, each thread
/// 1. loads its samples of the entering row `y` and of the leaving row `y − h` (one read-only
///    vector load each, the next step's loads issued before this step's work, so their latency
///    hides behind it; border-mapped scalar loads at the plane's edges);
/// 2. updates its column sums: `+ entering − leaving` (exact in wrapping integer arithmetic,
///    [`SlideIn`]);
/// 3. once `h` rows are in, writes them to a shared row of column sums ([`fused_slot`] padding:
///    conflict-free), and after one barrier (two alternating buffers) sums the `w` column sums of
///    its first output's window, slides it across its `P` outputs (`+ entering − leaving`
///    column) and writes them (16-byte stores where aligned).
///
/// Each input sample leaves DRAM once (the leaving row is re-read `h` rows later, from L1/L2) and
/// each output is written once. Removes the bottleneck of the separable variant (its scratch
/// round trip); costs `w + 2P` shared loads per thread and row.
///
/// # Safety
/// Input and outputs hold `planes · height · width`; grid = `planes · ⌈height / strip⌉ ·
/// ⌈width / (FUSED_BLOCK · P)⌉` blocks of `FUSED_BLOCK`; `w ≤ FUSED_MAX_WIDTH` and `h·w ≤
/// T::FUSED_MAX_WINDOW`; dynamic shared memory of `fused_layout(P, w, ..).bytes`.
#[inline(always)]
#[allow(unused_assignments)] // the last unrolled slide
pub unsafe fn box_fused<T, S, Q, const P: usize>(x: *const T, o0: *mut S, o1: *mut Q, a: BoxArgs<T>)
where
    T: FusedIn,
    S: FromAcc<T::S>,
    Q: FromAcc<T::SQ>,
{
    const { assert!(P * core::mem::size_of::<T>() == 16 && P.is_multiple_of(4)) };
    let kind = BoxKind::from_code(a.kind);
    let squares = kind.needs_sumsq();
    let (h, w) = (a.win_h as i32, a.win_w as usize);
    let cols = FUSED_BLOCK as usize * P;
    let col_blocks = a.width.div_ceil(cols as u64);
    let strips = a.height.div_ceil(a.strip as u64);
    let b = block_idx() as u64;
    let plane = b / (strips * col_blocks);
    let rest = b % (strips * col_blocks);
    let (strip, cb) = (rest / col_blocks, rest % col_blocks);
    let c0 = cb * cols as u64;
    let s0 = strip * a.strip as u64;
    let s1 = (s0 + a.strip as u64).min(a.height);
    let mode = BorderMode::from_code(a.border);
    let t = thread_idx() as usize;
    let ax = a.anchor_x as usize;
    let my_col = c0 + (t * P) as u64;
    // Sides and window height below 2^29 (the host's condition for this kernel): 32-bit rows.
    let (height, width) = (a.height as i32, a.width as i32);
    // SAFETY: plane < planes by the grid shape.
    let plane_x = unsafe { x.add((plane * a.height * a.width) as usize) };
    const {
        assert!(T::FUSED_ACC_BYTES.0 == size_of::<T::S>() && T::FUSED_ACC_BYTES.1 == size_of::<T::SQ>());
    }
    let layout = fused_layout(P, w, T::FUSED_ACC_BYTES, (size_of::<S>(), size_of::<Q>()));
    // SAFETY: the host sized shared memory with fused_layout.
    let shared: *mut u8 = unsafe { dynamic_shared() };
    // Whole aligned vectors inside every row.
    let vector = (x as usize).is_multiple_of(16)
        && (a.width as usize * size_of::<T>()).is_multiple_of(16)
        && my_col + P as u64 <= a.width;
    // Halo column k of this thread: its extended index (NONE: not one) and source column (None:
    // the constant).
    const NONE: usize = usize::MAX;
    let mut halo_e = [NONE; FUSED_HALO];
    let mut halo_src = [None; FUSED_HALO];
    crate::unroll!(FUSED_HALO, |k| {
        let j = t + k * FUSED_BLOCK as usize;
        if j + 1 < w {
            let e = if j < ax { j } else { j + cols };
            halo_e[k] = e;
            halo_src[k] = border_index_i32(c0 as i32 - ax as i32 + e as i32, width, mode);
        }
    });
    let src = FusedSource {
        plane_x,
        height,
        width,
        mode,
        cval: a.cval,
        col: my_col as i32,
        vector,
        halo_src,
    };
    let ay = a.anchor_y as i32;
    let y_first = s0 as i32 - ay;
    // Output s completes when row s − ay + h − 1 enters: the last is s1 − 1.
    let y_end = s1 as i32 - ay + h - 1; // exclusive
    let inv32 = (a.inv_n as f32, a.inv_n2 as f32);
    // This block's outputs in each row.
    let outputs = ((a.width - c0) as usize).min(cols);
    // The previous output row's stages and its first output's flat index: written back after
    // the barrier that follows their writes (the next row's).
    let mut pending: Option<(*mut u8, *mut u8, usize)> = None;
    let flush = |(st0, st1, o): (*mut u8, *mut u8, usize)| {
        // SAFETY: the stages hold this block's outputs of one row (StageWriter, before a
        // barrier); outputs o .. o + outputs lie in that row.
        unsafe {
            stage_flush::<S, P>(st0, o0.add(o), outputs, t, FUSED_BLOCK as usize);
            if kind.two_outputs() {
                stage_flush::<Q, P>(st1, o1.add(o), outputs, t, FUSED_BLOCK as usize);
            }
        }
    };
    let mut col_sums = [SlideSums::<T>::ZERO; P];
    let mut halo_sums = [SlideSums::<T>::ZERO; FUSED_HALO];
    let mut y = y_first;
    while y < y_end {
        // SAFETY: the plane holds `height` rows of `width` samples, read-only.
        let (enter, leave) = unsafe { src.fetch_pair::<P>(y, h, y_first) };
        crate::unroll!(P, |p| {
            col_sums[p] = col_sums[p]
                .plus(T::lane(&enter.main, p).lift_slide())
                .minus(T::lane(&leave.main, p).lift_slide());
        });
        crate::unroll!(FUSED_HALO, |k| {
            halo_sums[k] = halo_sums[k]
                .plus(enter.halo[k].lift_slide())
                .minus(leave.halo[k].lift_slide());
        });
        if y - y_first >= h - 1 {
            // SAFETY: buffer (y & 1) of the layout.
            let buf = unsafe { shared.add((y & 1) as usize * layout.buffer) };
            let (ss, sq) = (buf as *mut T::S, unsafe { buf.add(layout.squares) } as *mut T::SQ);
            let put = |i: usize, v: SlideSums<T>| {
                // SAFETY: i is the slot of one of the FUSED_BLOCK·P + w − 1 extended columns.
                unsafe {
                    ss.add(i).write(v.s);
                    if squares {
                        sq.add(i).write(v.q);
                    }
                }
            };
            crate::unroll!(P, |p| { put(fused_slot(ax + t * P + p, P), col_sums[p]) });
            crate::unroll!(FUSED_HALO, |k| {
                if halo_e[k] != NONE {
                    put(fused_slot(halo_e[k], P), halo_sums[k]);
                }
            });
            // SAFETY: every thread reaches it (the condition is block-uniform). It publishes this
            // row's column sums and the previous row's stages; the readers of this buffer's
            // previous contents (two rows ago) passed the last barrier.
            unsafe { sync_threads() };
            if let Some(prev) = pending {
                flush(prev);
            }
            let (st0, st1) = unsafe { (buf.add(layout.stage0), buf.add(layout.stage1)) };
            if my_col < a.width {
                let get = |i: usize| {
                    // SAFETY: i is the slot of an extended column, written before the barrier.
                    unsafe {
                        Sums {
                            s: ss.add(i).read(),
                            q: if squares { sq.add(i).read() } else { T::SQ::ZERO },
                        }
                    }
                };
                // Slots: extended column t·P + c (c < P) is chunk t's slot c; chunks are P
                // columns and one pad slot.
                let chunk = |j: usize| j * (P + 1);
                let mut acc = SlideSums::<T>::ZERO;
                for j in 0..w / P {
                    crate::unroll!(P, |k| {
                        acc = acc.plus(get(chunk(t + j) + k));
                    });
                }
                crate::unroll!(P, |k| {
                    if k < w % P {
                        acc = acc.plus(get(chunk(t + w / P) + k));
                    }
                });
                // The entering column t·P + w + c: one slot further once it crosses into the
                // next chunk (c ≥ P − w % P).
                let enter0 = chunk(t + w / P) + w % P;
                let cross = P - w % P;
                let mut s0 = StageWriter::<S, P>::new(st0, t);
                let mut s1 = StageWriter::<Q, P>::new(st1, t);
                crate::unroll!(P, |c| {
                    let (v0, v1) = fused_outputs::<T, S, Q>(acc, kind, &a, inv32);
                    // SAFETY: the stages hold FUSED_BLOCK·P outputs each.
                    unsafe {
                        s0.put(c, v0);
                        s1.put(c, v1);
                    }
                    if c + 1 < P {
                        let entering = get(enter0 + c + (c >= cross) as usize);
                        acc = acc.plus(entering.minus(get(chunk(t) + c)));
                    }
                });
            }
            let s = (y - h + 1 + ay) as u64;
            pending = Some((st0, st1, (plane * a.height * a.width + s * a.width + c0) as usize));
        }
        y += 1;
    }
    // SAFETY: every thread reaches it; it publishes the last row's stages.
    unsafe { sync_threads() };
    if let Some(prev) = pending {
        flush(prev);
    }
}

/// The `(plane, strip, segment)` of this *warp* in a one-pass box grid of `planes ·
/// ⌈height / strip⌉ · ⌈width / outputs⌉` warps, `warps` per block, numbered segments fastest
/// (neighbouring warps of a block read neighbouring columns); `None` past the last.
#[inline(always)]
fn warp_strip<T>(a: &BoxArgs<T>, outputs: u64, warps: u32) -> Option<(u64, u64, u64)> {
    let segments = a.width.div_ceil(outputs);
    let strips = a.height.div_ceil(a.strip as u64);
    let warp = block_idx() as u64 * warps as u64 + warp_idx() as u64;
    if warp >= a.planes * strips * segments {
        return None;
    }
    let (plane, rest) = (warp / (strips * segments), warp % (strips * segments));
    Some((plane, rest / segments, rest % segments))
}

/// Plane `p` of a u8 box launch's input `x`, with the launch's border.
///
/// # Safety
/// `p < a.planes`, and `x` holds the launch's `planes · height · width` samples.
#[inline(always)]
unsafe fn box_plane(x: *const u8, p: u64, a: &BoxArgs<u8>) -> crate::filter2d::Plane<u8> {
    crate::filter2d::Plane {
        // SAFETY: forwarded to the caller.
        base: unsafe { x.add((p * a.height * a.width) as usize) },
        h: a.height as i32,
        w: a.width as i32,
        mode: BorderMode::from_code(a.border),
        cval: a.cval,
    }
}

/// The outputs of a fused box window: statistics into f32 formed in f32 where
/// [`SlideIn::narrow_spread32`] allows (u8 windows up to 513 samples: the mean within 1 ulp,
/// the variance within 1.5 ulps of f32, a third of the instructions of the f64 path), else as
/// [`box_outputs`].
#[inline(always)]
fn fused_outputs<T: SlideIn, S: FromAcc<T::S>, Q: FromAcc<T::SQ>>(
    w: SlideSums<T>,
    kind: BoxKind,
    a: &BoxArgs<T>,
    (inv_n, inv_n2): (f32, f32),
) -> (S, Q) {
    if narrow_moments::<S, Q>(kind)
        && let Some(spread) = T::narrow_spread32(w.s, w.q, a.samples())
    {
        return narrow_outputs::<T, S, Q>(w.s, spread, kind, (inv_n, inv_n2));
    }
    box_outputs::<_, _, S, Q>(w, kind, |w| slide_mean_variance::<T>(w, a))
}

/// Whether [`fused_outputs`] forms the statistics of `kind` in f32 (moments into f32 outputs),
/// given a window narrow enough for [`SlideIn::narrow_spread32`].
#[inline(always)]
fn narrow_moments<S: OutElem, Q: OutElem>(kind: BoxKind) -> bool {
    S::SINGLE && Q::SINGLE && matches!(kind, BoxKind::MeanVar | BoxKind::Std)
}

/// The f32 statistics of a window with sum `s` and spread `n·Σx² − (Σx)²` (exact in u32): the
/// mean `s / n` and the variance `spread / n²`, or the standard deviation (`kind` is `MeanVar` or
/// `Std`, [`narrow_moments`]).
#[inline(always)]
fn narrow_outputs<T: SlideIn, S: OutElem, Q: OutElem>(
    s: T::S,
    spread: u32,
    kind: BoxKind,
    (inv_n, inv_n2): (f32, f32),
) -> (S, Q) {
    let variance = spread as f32 * inv_n2;
    match kind {
        BoxKind::MeanVar => (S::from_f32(s.to_f32() * inv_n), Q::from_f32(variance)),
        _ => (S::from_f32(core::intrinsics::sqrtf32(variance)), Q::ZERO),
    }
}

// ---------------------------------------------------------------------------------------------
// Entries
// ---------------------------------------------------------------------------------------------

macro_rules! window_entries {
    ($($inst:ident => $t:ty, $s:ty, $q:ty, $fused:ident $(($slide:literal, $boxed:literal $(, $warp:literal)?))?, $blocks:literal;)*) => {$(
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
            window_entries!(@fused $fused $inst, $t, $s, $q $(, $slide, $boxed)?);
            $($($crate::launch_bounds!($crate::window_kernel_name!($inst, "warp_box"), 128, $warp);
            #[unsafe(export_name = $crate::window_kernel_name!($inst, "warp_box"))]
            pub unsafe extern "ptx-kernel" fn warp_box(x: *const u8, o0: *mut $s, o1: *mut $q, a: BoxArgs<u8>) {
                const { assert!($crate::abi::window::WARP_BOX_WARPS * 32 == 128) };
                unsafe { super::warp_box::warp_prefix_box::<$s, $q>(x, o0, o1, a) }
            })?)?
        }
    )*};
    (@fused fused $inst:ident, $t:ty, $s:ty, $q:ty, $slide:literal, $boxed:literal) => {
        // The most resident blocks of WINDOW_BLOCK ptxas sm_90 reaches without spilling.
        $crate::launch_bounds!($crate::window_kernel_name!($inst, "sliding_sum"), 256, $slide);
        #[unsafe(export_name = $crate::window_kernel_name!($inst, "sliding_sum"))]
        pub unsafe extern "ptx-kernel" fn sliding_sum(x: *const $t, s: *mut $s, q: *mut $q, a: RowArgs<$t>) {
            const P: usize = $crate::abi::window::sliding_outputs(core::mem::size_of::<$t>()) as usize;
            unsafe { super::sliding_sum::<$t, $s, $q, P>(x, s, q, a) }
        }
        $crate::launch_bounds!($crate::window_kernel_name!($inst, "box_fused"), 128, $boxed);
        #[unsafe(export_name = $crate::window_kernel_name!($inst, "box_fused"))]
        pub unsafe extern "ptx-kernel" fn box_fused(x: *const $t, o0: *mut $s, o1: *mut $q, a: BoxArgs<$t>) {
            const P: usize = <$t as WindowIn>::FUSED_COLS as usize;
            unsafe { super::box_fused::<$t, $s, $q, P>(x, o0, o1, a) }
        }
    };
    (@fused separable $inst:ident, $t:ty, $s:ty, $q:ty) => {};
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
