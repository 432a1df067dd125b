//! The reduction ladder: eight kernels that compute the same reduction, each removing one
//! bottleneck of the step before. Every kernel is generic over a [`Reducer`] (sum, sum of squares,
//! min, max, moments) and instantiated per input type by [`for_each_reduce_instance!`].
//!
//! Common contract (see `abi::reduce`): `input` holds `args.n ≥ 1` elements (the host never
//! launches on empty input); `partials` holds `ReduceStep::partial_count(grid)` accumulators;
//! `finish` is step 8's zeroed buffer of `FINISH_WORDS` u64 (a ticket, or two limb slots).
//! Unlike the tutorial's kernels, shared memory is always written before it is read, warps never
//! rely on implicit lock-step execution, and integer squares accumulate in 128 bits.

use crate::abi::reduce::{
    AtomicLimbs, LIMB_SLOT_WORDS, REDUCE_BLOCK, ReduceArgs, Reducer, VEC_LOADS_IN_FLIGHT, last_block_flag_offset,
};
use crate::device::*;

/// Loads element `i` (plain global load, as the tutorial does in steps 1–7).
#[inline(always)]
unsafe fn load<T: Copy>(input: *const T, i: u64) -> T {
    // SAFETY: callers pass i < n.
    unsafe { input.add(i as usize).read() }
}

/// The shift of a [`Reducer`] (first element; n ≥ 1 by contract).
#[inline(always)]
unsafe fn shift_of<R: Reducer>(input: *const R::In) -> R::Shift {
    // SAFETY: n ≥ 1.
    R::shift(unsafe { load(input, 0) })
}

/// Accumulates `input[i]` for `i = start, start + stride, ..` below `end`.
#[inline(always)]
unsafe fn accumulate_strided<R: Reducer>(
    input: *const R::In,
    start: u64,
    end: u64,
    stride: u64,
    shift: R::Shift,
) -> R::Acc {
    let mut acc = R::identity();
    let mut i = start;
    while i < end {
        // SAFETY: i < end ≤ n.
        acc = R::combine(acc, R::map(unsafe { load(input, i) }, shift));
        i += stride;
    }
    acc
}

/// Step 1 — one thread does everything: no parallelism at all, the baseline.
pub unsafe fn single_thread<R: Reducer>(input: *const R::In, args: ReduceArgs, partials: *mut R::Acc) {
    // SAFETY: launched as one thread; partials holds 1 accumulator.
    unsafe {
        let acc = accumulate_strided::<R>(input, 0, args.n, 1, shift_of::<R>(input));
        partials.write(acc);
    }
}

/// Step 2 — one block of 256 threads, thread `t` sums its own contiguous chunk. Parallel, but
/// at each instant the warp's 32 loads hit 32 different chunks: uncoalesced.
pub unsafe fn one_block_chunked<R: Reducer>(input: *const R::In, args: ReduceArgs, partials: *mut R::Acc) {
    let t = thread_idx() as u64;
    let chunk = args.n.div_ceil(REDUCE_BLOCK as u64);
    let start = (t * chunk).min(args.n);
    let end = (start + chunk).min(args.n);
    // SAFETY: one block of REDUCE_BLOCK threads; partials holds REDUCE_BLOCK accumulators.
    unsafe {
        let acc = accumulate_strided::<R>(input, start, end, 1, shift_of::<R>(input));
        partials.add(t as usize).write(acc);
    }
}

/// Step 3 — one block, thread `t` reads `t, t + 256, ..`: neighbouring threads read neighbouring
/// words, so each warp load is one coalesced transaction. Still one SM.
pub unsafe fn one_block_strided<R: Reducer>(input: *const R::In, args: ReduceArgs, partials: *mut R::Acc) {
    let t = thread_idx() as u64;
    // SAFETY: as step 2.
    unsafe {
        let acc = accumulate_strided::<R>(input, t, args.n, REDUCE_BLOCK as u64, shift_of::<R>(input));
        partials.add(t as usize).write(acc);
    }
}

/// Per-thread grid-stride accumulation shared by steps 4–7.
#[inline(always)]
unsafe fn grid_stride_acc<R: Reducer>(input: *const R::In, args: ReduceArgs) -> R::Acc {
    // SAFETY: the loop stays below n.
    unsafe { accumulate_strided::<R>(input, global_thread_idx(), args.n, grid_threads(), shift_of::<R>(input)) }
}

/// Step 4 — many blocks (every SM busy), grid-stride loop, one partial per thread: the host now
/// has `grid × 256` partials to add.
pub unsafe fn grid_stride<R: Reducer>(input: *const R::In, args: ReduceArgs, partials: *mut R::Acc) {
    // SAFETY: partials holds grid × REDUCE_BLOCK accumulators.
    unsafe {
        let acc = grid_stride_acc::<R>(input, args);
        partials.add(global_thread_idx() as usize).write(acc);
    }
}

/// Parks each thread's accumulator in the block's shared array and waits for the whole block.
#[inline(always)]
unsafe fn park_in_shared<R: Reducer>(acc: R::Acc) -> *mut R::Acc {
    // SAFETY: the host sizes shared memory as REDUCE_BLOCK accumulators; every slot is written
    // (no uninitialized reads) before the barrier that all threads reach.
    unsafe {
        let s = dynamic_shared::<R::Acc>();
        s.add(thread_idx() as usize).write(acc);
        sync_threads();
        s
    }
}

/// Step 5 — the block's partials meet in shared memory and thread 0 adds them: one partial per
/// block, so the host's work shrinks 256×, but thread 0 works serially while 255 threads wait.
pub unsafe fn shared_partial<R: Reducer>(input: *const R::In, args: ReduceArgs, partials: *mut R::Acc) {
    // SAFETY: shared memory holds REDUCE_BLOCK accumulators; partials holds grid.
    unsafe {
        let s = park_in_shared::<R>(grid_stride_acc::<R>(input, args));
        if thread_idx() == 0 {
            let mut acc = R::identity();
            for j in 0..REDUCE_BLOCK as usize {
                acc = R::combine(acc, s.add(j).read());
            }
            partials.add(block_idx() as usize).write(acc);
        }
    }
}

/// Step 6 — tree reduction in shared memory with interleaved addressing: at stride `s`, threads
/// whose index is a multiple of `2s` (`tid & (2s − 1) == 0`) combine. log2(256) = 8 rounds
/// instead of 255 serial adds, but active threads are scattered across warps (divergence) and
/// the strided accesses conflict in the banks.
pub unsafe fn shared_tree_interleaved<R: Reducer>(input: *const R::In, args: ReduceArgs, partials: *mut R::Acc) {
    // SAFETY: as step 5; reads only slots written before a barrier.
    unsafe {
        let s = park_in_shared::<R>(grid_stride_acc::<R>(input, args));
        let t = thread_idx() as usize;
        let mut stride = 1usize;
        while stride < REDUCE_BLOCK as usize {
            if t & (2 * stride - 1) == 0 {
                s.add(t).write(R::combine(s.add(t).read(), s.add(t + stride).read()));
            }
            sync_threads();
            stride *= 2;
        }
        if t == 0 {
            partials.add(block_idx() as usize).write(s.read());
        }
    }
}

/// Step 7 — sequential addressing: at stride `s` the first `s` threads combine `[t]` and
/// `[t + s]`, so active threads are contiguous (whole warps retire) and accesses are
/// conflict-free. Once 64 values remain, warp 0 finishes with register shuffles: no barrier, no
/// shared memory, and no reliance on implicit warp synchrony (the tutorial's `volatile` trick
/// races since Volta).
pub unsafe fn shared_tree_sequential<R: Reducer>(input: *const R::In, args: ReduceArgs, partials: *mut R::Acc)
where
    R::Acc: WarpShuffle,
{
    // SAFETY: as step 5.
    unsafe {
        let s = park_in_shared::<R>(grid_stride_acc::<R>(input, args));
        let t = thread_idx() as usize;
        let mut stride = REDUCE_BLOCK as usize / 2;
        while stride > 32 {
            if t < stride {
                s.add(t).write(R::combine(s.add(t).read(), s.add(t + stride).read()));
            }
            sync_threads();
            stride /= 2;
        }
        if t < 32 {
            let v = warp_reduce::<R>(R::combine(s.add(t).read(), s.add(t + 32).read()));
            if t == 0 {
                partials.add(block_idx() as usize).write(v);
            }
        }
    }
}

/// Step 8 — the modern kernel. The input is cut into tiles of `REDUCE_BLOCK × VEC_LOADS_IN_FLIGHT`
/// 16-byte vectors; block `b` takes tiles `b, b + grid, ..` (inputs of fewer tiles than SMs are
/// spread instead, one vector per thread), and each of its threads issues its
/// `VEC_LOADS_IN_FLIGHT` independent read-only loads of a tile (at `t`, `t + 256`, ..: every
/// warp load is 512 contiguous bytes) before using any, so enough bytes are in flight to cover
/// DRAM latency, and a small input needs a single trip. It reduces in registers, then warps
/// reduce by shuffles and meet in one shared slot per warp. A grid of one block writes its
/// result directly. Otherwise the blocks' partials meet in one of two ways, both finishing in
/// this launch with a deterministic result:
/// - exact integer sums ([`AtomicLimbs`]): thread 0 of each block adds its partial's limbs into
///   slot `args.parity` of `finish` with fire-and-forget `red.add.u64`, and block 0 zeroes the
///   other slot for the next launch. Nothing waits for another block: on the H100 this removed
///   1.2–1.5 µs of ticket round trips from small inputs;
/// - the others: the block's partial goes to global memory; the last block to finish
///   (acquire-release atomic ticket in `finish`) reduces all partials in index order, writes the
///   result after them and resets the ticket.
pub unsafe fn warp_shuffle_vec<R: Reducer>(
    input: *const R::In,
    args: ReduceArgs,
    partials: *mut R::Acc,
    finish: *mut u64,
) where
    R::In: Vec16,
    R::Acc: WarpShuffle,
{
    let lanes = <R::In as Vec16>::LANES;
    let vec_n = args.n / lanes;
    let gtid = global_thread_idx();
    let grid = grid_dim() as u64;
    // SAFETY: vector loads stay below vec_n (the input is 16-byte aligned, host-checked); the
    // scalar tail covers [vec_n·lanes, n); shared memory holds `flag_offset + 8` bytes; partials
    // holds grid + 1 accumulators; counter is a zeroed u32.
    unsafe {
        let shift = shift_of::<R>(input);
        let vecs = input as *const [u32; 4];
        let eat = |acc: &mut R::Acc, words: [u32; 4]| {
            <R::In as Vec16>::for_each_lane(words, |x| *acc = R::combine(*acc, R::map(x, shift)))
        };
        let mut acc = R::identity();
        // Four independent loads are issued before any is used (named values, not an array, so
        // nothing is placed in local memory).
        const U: u64 = VEC_LOADS_IN_FLIGHT;
        const B: u64 = REDUCE_BLOCK as u64;
        // A grid larger than the input's tiles (the host spreads inputs of fewer tiles than SMs
        // over one vector per thread) skips the tiles: the grid-stride loop below then loads one
        // vector per thread.
        let full_tiles = if (grid - 1) * B * U >= vec_n {
            0
        } else {
            vec_n / (B * U)
        };
        let mut tile = block_idx() as u64;
        while tile < full_tiles {
            let i = tile * B * U + thread_idx() as u64;
            let w0 = load_nc_v4(vecs.add(i as usize));
            let w1 = load_nc_v4(vecs.add((i + B) as usize));
            let w2 = load_nc_v4(vecs.add((i + 2 * B) as usize));
            let w3 = load_nc_v4(vecs.add((i + 3 * B) as usize));
            eat(&mut acc, w0);
            eat(&mut acc, w1);
            eat(&mut acc, w2);
            eat(&mut acc, w3);
            tile += grid;
        }
        // The last partial tile (fewer than B · U vectors), grid-stride.
        let mut i = full_tiles * B * U + gtid;
        while i < vec_n {
            eat(&mut acc, load_nc_v4(vecs.add(i as usize)));
            i += grid_threads();
        }
        let tail = vec_n * lanes + gtid;
        if tail < args.n {
            acc = R::combine(acc, R::map(load(input, tail), shift));
        }

        let smem = dynamic_shared::<u8>();
        let slots = smem as *mut R::Acc;
        let flag = smem.add(last_block_flag_offset(core::mem::size_of::<R::Acc>())) as *mut u32;
        let block_acc = block_reduce::<R>(acc, slots);
        if grid == 1 {
            if thread_idx() == 0 {
                partials.add(1).write(block_acc);
            }
            return;
        }
        let limbs = <R::Acc as AtomicLimbs>::COUNT;
        if limbs > 0 {
            if thread_idx() == 0 {
                let parity = args.parity as usize & 1;
                if block_idx() == 0 {
                    let next = finish.add((1 - parity) * LIMB_SLOT_WORDS);
                    crate::unroll!(LIMB_SLOT_WORDS, |i| {
                        if i < limbs {
                            next.add(i).write(0);
                        }
                    });
                }
                let slot = finish.add(parity * LIMB_SLOT_WORDS);
                let l = block_acc.to_limbs();
                crate::unroll!(LIMB_SLOT_WORDS, |i| {
                    if i < limbs {
                        red_add_u64(slot.add(i), l[i]);
                    }
                });
            }
            return;
        }
        let counter = finish as *mut u32;
        if thread_idx() == 0 {
            partials.add(block_idx() as usize).write(block_acc);
            // Release our partial, acquire everyone's before us.
            let ticket = atomic_add_u32(counter, 1);
            flag.write((ticket == grid_dim() - 1) as u32);
        }
        sync_threads();
        if flag.read() == 0 {
            return;
        }
        // Last block: every partial is visible (each writer released it with its ticket; thread 0
        // acquired them all, and the barrier above orders the block's reads after that).
        let grid = grid as usize;
        let mut total = R::identity();
        let mut j = thread_idx() as usize;
        while j < grid {
            total = R::combine(total, core::ptr::read_volatile(partials.add(j)));
            j += REDUCE_BLOCK as usize;
        }
        let total = block_reduce::<R>(total, slots);
        if thread_idx() == 0 {
            partials.add(grid).write(total);
            counter.write(0);
        }
    }
}

/// Defines the eight `extern "ptx-kernel"` entries of one instance under the contract's names.
macro_rules! reduce_entries {
    ($inst:ident, $r:ty) => {
        pub mod $inst {
            use crate::abi::reduce::{ReduceArgs, Reducer};
            type R = $r;
            type In = <R as Reducer>::In;
            type Acc = <R as Reducer>::Acc;

            #[unsafe(export_name = $crate::reduce_kernel_name!($inst, "1"))]
            pub unsafe extern "ptx-kernel" fn s1(i: *const In, a: ReduceArgs, p: *mut Acc, _c: *mut u64) {
                unsafe { super::single_thread::<R>(i, a, p) }
            }
            #[unsafe(export_name = $crate::reduce_kernel_name!($inst, "2"))]
            pub unsafe extern "ptx-kernel" fn s2(i: *const In, a: ReduceArgs, p: *mut Acc, _c: *mut u64) {
                unsafe { super::one_block_chunked::<R>(i, a, p) }
            }
            #[unsafe(export_name = $crate::reduce_kernel_name!($inst, "3"))]
            pub unsafe extern "ptx-kernel" fn s3(i: *const In, a: ReduceArgs, p: *mut Acc, _c: *mut u64) {
                unsafe { super::one_block_strided::<R>(i, a, p) }
            }
            #[unsafe(export_name = $crate::reduce_kernel_name!($inst, "4"))]
            pub unsafe extern "ptx-kernel" fn s4(i: *const In, a: ReduceArgs, p: *mut Acc, _c: *mut u64) {
                unsafe { super::grid_stride::<R>(i, a, p) }
            }
            #[unsafe(export_name = $crate::reduce_kernel_name!($inst, "5"))]
            pub unsafe extern "ptx-kernel" fn s5(i: *const In, a: ReduceArgs, p: *mut Acc, _c: *mut u64) {
                unsafe { super::shared_partial::<R>(i, a, p) }
            }
            #[unsafe(export_name = $crate::reduce_kernel_name!($inst, "6"))]
            pub unsafe extern "ptx-kernel" fn s6(i: *const In, a: ReduceArgs, p: *mut Acc, _c: *mut u64) {
                unsafe { super::shared_tree_interleaved::<R>(i, a, p) }
            }
            #[unsafe(export_name = $crate::reduce_kernel_name!($inst, "7"))]
            pub unsafe extern "ptx-kernel" fn s7(i: *const In, a: ReduceArgs, p: *mut Acc, _c: *mut u64) {
                unsafe { super::shared_tree_sequential::<R>(i, a, p) }
            }
            #[unsafe(export_name = $crate::reduce_kernel_name!($inst, "8"))]
            pub unsafe extern "ptx-kernel" fn s8(i: *const In, a: ReduceArgs, p: *mut Acc, c: *mut u64) {
                unsafe { super::warp_shuffle_vec::<R>(i, a, p, c) }
            }
        }
    };
}

macro_rules! all_reduce_entries {
    ($($inst:ident => $r:ty),* $(,)?) => {
        $(reduce_entries!($inst, $r);)*
    };
}

crate::for_each_reduce_instance!(all_reduce_entries);
