//! Rungs 1–4 of the row ladder, one output per thread: global accumulation, split loops, the
//! thread's own staged window, the block's shared tile (the classic tutorial's kernels), with the
//! bordered-row sampling they share.

use super::*;

// ---------------------------------------------------------------------------------------------
// Samples
// ---------------------------------------------------------------------------------------------

/// `(row, column)` of flat output index `o` in rows of `n`; 32-bit division when it suffices.
#[inline(always)]
pub(super) fn split(o: u64, n: u64, rows: u64) -> (u64, u64) {
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
pub(super) fn one_output<T>(a: &RowArgs<T>) -> Option<(u64, u64, u64)> {
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
pub(super) unsafe fn for_window<T: Copy>(row: *const T, i: u64, a: &RowArgs<T>, f: impl FnMut(u32, T)) {
    // SAFETY: forwarded.
    unsafe {
        BorderedRow::new(row, a.n, a.border, a.cval).for_each_with(i as i64 - a.anchor as i64, a.width, |p| p.read(), f)
    }
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
    unsafe {
        BorderedRow::new(row, a.n, a.border, a.cval)
            .stage(first, len, tile_mem, thread_idx(), WINDOW_BLOCK, |p| p.read())
    };
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
