//! The separable passes: a column pass then a row pass through a scratch image, and van
//! Herk/Gil-Werman's O(1) passes for long windows.

use super::*;

// ---------------------------------------------------------------------------------------------
// Separable passes
// ---------------------------------------------------------------------------------------------

/// Column pass: output `(r, c)` folds `kh` samples of column `c` from row `r − ay`. One output per
/// thread, lanes on neighbouring columns.
pub unsafe fn pass_cols<F: Fold>(x: *const F::In, y: *mut F::Out, a: &Args<F::In>) {
    let Some((p, r, c)) = thread_pixel(a) else {
        return;
    };
    let plane = Plane::of(x, p, a);
    let mut acc = F::start();
    for i in 0..a.kh {
        let row = plane.row(r + i as i32 - a.ay as i32);
        let v = match row {
            // SAFETY: c < w.
            Some(q) => unsafe { F::In::load(q.add(c as usize)) },
            None => plane.cval,
        };
        acc = F::take(acc, v, i, a);
    }
    // SAFETY: inside the plane.
    unsafe { y.add(flat(a, p, r, c)).write(F::finish(acc, a)) }
}

/// Row pass: output `(r, c)` folds `kw` samples of row `r` from column `c − ax`.
pub unsafe fn pass_rows<F: Fold>(x: *const F::In, y: *mut F::Out, a: &Args<F::In>) {
    let Some((p, r, c)) = thread_pixel(a) else {
        return;
    };
    let plane = Plane::of(x, p, a);
    let row = plane.row(r);
    let mut acc = F::start();
    for j in 0..a.kw {
        // SAFETY: row from plane.row.
        acc = F::take(acc, unsafe { plane.at(row, c + j as i32 - a.ax as i32) }, j, a);
    }
    // SAFETY: inside the plane.
    unsafe { y.add(flat(a, p, r, c)).write(F::finish(acc, a)) }
}

/// Prefix and suffix scans of van Herk blocks of `k` samples: `line[e]` (element `e` at
/// `line[e · stride]`, `len` elements) becomes the fold of its block's samples up to `e`, and
/// `suffix[e · stride]` the fold from `e` to its block's end. Block `b` is scanned by thread
/// `first + b · step`'s loop.
#[inline(always)]
pub(super) unsafe fn van_herk_scan<E: Extremum>(
    line: *mut E::T,
    suffix: *mut E::T,
    len: u32,
    stride: u32,
    k: u32,
    first: u32,
    step: u32,
) {
    let mut b = first;
    while b * k < len {
        let (start, end) = (b * k, ((b + 1) * k).min(len));
        let mut m = E::START;
        let mut e = end;
        while e > start {
            e -= 1;
            // SAFETY: e < len.
            unsafe {
                m = E::op(m, *line.add((e * stride) as usize));
                suffix.add((e * stride) as usize).write(m);
            }
        }
        m = E::START;
        while e < end {
            // SAFETY: as above; the prefix overwrites the sample it has just read.
            unsafe {
                let q = line.add((e * stride) as usize);
                m = E::op(m, *q);
                q.write(m);
            }
            e += 1;
        }
        b += step;
    }
}

/// Row pass in O(1) per output: a block stages `a.strip` outputs' samples of one row (plus the
/// `kw − 1` halo), scans van Herk blocks of `kw`, then output `o` is
/// `suffix[o] ⊕ prefix[o + kw − 1]`. Shared memory: `VAN_HERK_SMEM`.
pub unsafe fn van_herk_rows<E: Extremum>(x: *const E::T, y: *mut E::T, a: &Args<E::T>) {
    let tile = a.strip;
    let tiles = a.w.div_ceil(tile);
    let (b, tid) = (block_idx(), thread_idx());
    let (t, row_all) = (b % tiles, b / tiles);
    let (p, r) = ((row_all / a.h) as u64, (row_all % a.h) as i32);
    let c0 = (t * tile) as i32;
    let plane = Plane::of(x, p, a);
    let len = tile + a.kw - 1;
    // SAFETY: the launch provides VAN_HERK_SMEM ≥ 2 · len elements (van_herk_row_tile).
    let line = unsafe { dynamic_shared::<E::T>() };
    let suffix = unsafe { line.add(len as usize) };
    let row = plane.row(r);
    let mut e = tid;
    while e < len {
        // SAFETY: e < len; row from plane.row.
        unsafe { line.add(e as usize).write(plane.at(row, c0 - a.ax as i32 + e as i32)) };
        e += BLOCK_THREADS;
    }
    // SAFETY: barriers reached by every thread; scans stay inside the line.
    unsafe {
        sync_threads();
        van_herk_scan::<E>(line, suffix, len, 1, a.kw, tid, BLOCK_THREADS);
        sync_threads();
    }
    let mut o = tid;
    while o < tile && c0 + (o as i32) < a.w as i32 {
        // SAFETY: o + kw − 1 < len; inside the plane.
        unsafe {
            let v = E::op(*suffix.add(o as usize), *line.add((o + a.kw - 1) as usize));
            y.add(flat(a, p, r, c0 + o as i32)).write(v);
        }
        o += BLOCK_THREADS;
    }
}

/// Column pass in O(1) per output: a block owns `VAN_HERK_COLS` columns and `a.strip` output
/// rows; lanes on columns, the block's 8 warps on van Herk blocks of `kh` rows.
pub unsafe fn van_herk_cols<E: Extremum>(x: *const E::T, y: *mut E::T, a: &Args<E::T>) {
    const COLS: u32 = VAN_HERK_COLS;
    const GROUPS: u32 = BLOCK_THREADS / COLS;
    let (p, r0, c0) = tile_origin(a, COLS, a.strip);
    let plane = Plane::of(x, p, a);
    let len = a.strip + a.kh - 1;
    let (lane, g) = (thread_idx() % COLS, thread_idx() / COLS);
    let c = c0 + lane as i32;
    // SAFETY: the launch provides VAN_HERK_SMEM ≥ 2 · len · COLS elements (van_herk_col_tile).
    let line = unsafe { dynamic_shared::<E::T>() };
    let suffix = unsafe { line.add((len * COLS) as usize) };
    let col = plane.col(c.min(a.w as i32 - 1));
    let mut e = g;
    while e < len {
        let v = match (plane.row(r0 - a.ay as i32 + e as i32), col) {
            // SAFETY: the column is below w.
            (Some(q), Some(j)) => unsafe { E::T::load(q.add(j as usize)) },
            _ => plane.cval,
        };
        // SAFETY: inside the staged columns.
        unsafe { line.add((e * COLS + lane) as usize).write(v) };
        e += GROUPS;
    }
    // SAFETY: as van_herk_rows.
    unsafe {
        sync_threads();
        van_herk_scan::<E>(
            line.add(lane as usize),
            suffix.add(lane as usize),
            len,
            COLS,
            a.kh,
            g,
            GROUPS,
        );
        sync_threads();
    }
    if c >= a.w as i32 {
        return;
    }
    let mut o = g;
    while o < a.strip && r0 + (o as i32) < a.h as i32 {
        // SAFETY: o + kh − 1 < len; inside the plane.
        unsafe {
            let v = E::op(
                *suffix.add((o * COLS + lane) as usize),
                *line.add(((o + a.kh - 1) * COLS + lane) as usize),
            );
            y.add(flat(a, p, r0 + o as i32, c)).write(v);
        }
        o += GROUPS;
    }
}
