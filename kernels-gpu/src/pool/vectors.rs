//! Pooling kernels with several outputs per thread from 16-byte loads: `vectorized` (windows
//! that do not overlap, stride = kernel) and `vectorized3` (3-wide windows at stride 2).

use super::*;

/// Stores `v` (`P` consecutive outputs, `P · size ≤ 16` bytes) with one store of that width.
///
/// # Safety
/// `p` must point to `P` writable elements aligned to `P · size` bytes.
#[inline(always)]
unsafe fn store_packed<T: PoolIn, const P: usize>(p: *mut T, v: &[T; P]) {
    let size = size_of::<T>();
    let mut words = [0u32; 4];
    crate::unroll!(P, |j| {
        let bits = v[j].bits();
        let bit = j * size * 8;
        words[bit / 32] |= (bits << (bit % 32)) as u32;
        if size == 8 {
            words[bit / 32 + 1] = (bits >> 32) as u32;
        }
    });
    // SAFETY: forwarded to the caller (alignment = width).
    unsafe {
        match P * size {
            16 => store_v4(p.cast(), words),
            8 => store_v2(p.cast(), [words[0], words[1]]),
            4 => *p.cast::<u32>() = words[0],
            2 => *p.cast::<u16>() = words[0] as u16,
            _ => *p.cast::<u8>() = words[0] as u8,
        }
    }
}

/// `P` outputs per thread when one 16-byte vector holds `P` whole windows of a row (`kw = lanes /
/// P`, stride `kw`, no horizontal padding or dilation): thread `t` takes vector column `c` of
/// output row `oy`, loads that vector from each of its window's rows with `ld.global.nc.v4`
/// (consecutive threads, consecutive vectors: a warp reads 512 contiguous bytes per row) and
/// writes its `P` outputs with one store.
///
/// # Safety
/// As [`pool_one`]; additionally `w` is a multiple of the vector's lanes, `kw = lanes / P`, `sw =
/// kw`, `pw = 0`, `dw = 1`, and `x`, `y` are 16-byte aligned.
#[inline(always)]
unsafe fn pool_vectorized<T: PoolIn, R: PoolOp<T>, const P: usize, const INDEXED: bool>(
    x: *const T,
    y: *mut T,
    idx: *mut i64,
    a: &PoolArgs,
) {
    let lanes = T::LANES as u32;
    let kw = if lanes / P as u32 > 0 { lanes / P as u32 } else { 1 };
    let Some((plane, oy, c)) = thread_coordinates(a) else {
        return;
    };
    let rows = R::span(oy, a.sh, a.ph, a.kh, a.dh, a.h);
    let col0 = c * lanes;
    let cols = Extent { len: kw, padded: kw };
    let first_row = rows.start as u32 * a.w + col0;
    let mut acc = [R::begin(0); P];
    if INDEXED {
        crate::unroll!(P, |j| {
            acc[j] = R::begin(first_row + j as u32 * kw);
        });
    }
    // The plane's first element once; the rows in 32 bits (in-plane positions: h · w < 2^32).
    let xp = x.wrapping_add((plane * a.h as u64 * a.w as u64) as usize);
    let row_vector = |row: u32| {
        let at = row * a.w + col0;
        // SAFETY: the vector lies inside row `row` (w is a multiple of lanes) and is 16-byte
        // aligned (the buffer is, and so is every row start).
        (at, unsafe { load_nc_v4(xp.add(at as usize).cast()) })
    };
    let mut fold = |(at, words): (u32, [u32; 4])| {
        let mut lane = 0u32;
        T::for_each_lane(words, |v| {
            // Without indices every index is 0, so the compiler drops their bookkeeping.
            R::take(&mut acc[(lane / kw) as usize], v, if INDEXED { at + lane } else { 0 });
            lane += 1;
        });
    };
    // Two rows per step: both loads are in flight before either is folded in.
    let (end, step) = (rows.end.max(rows.start) as u32, rows.step as u32);
    let mut row = rows.start as u32;
    while row + step < end {
        let (first, second) = (row_vector(row), row_vector(row + step));
        fold(first);
        fold(second);
        row += 2 * step;
    }
    if row < end {
        fold(row_vector(row));
    }
    let mut out = [T::LOWEST; P];
    let mut index = [0u32; P];
    crate::unroll!(P, |j| {
        (out[j], index[j]) = R::finish(acc[j], a, rows.extent(), cols);
    });
    let o = ((plane * a.oh as u64 + oy as u64) * a.ow as u64 + c as u64 * P as u64) as usize;
    // SAFETY: the P outputs are inside the output row, aligned to P · size (see the contract).
    unsafe {
        store_packed(y.add(o), &out);
        if INDEXED {
            crate::unroll!(P, |j| {
                *idx.add(o + j) = index[j] as i64;
            });
        }
    }
}

/// The vectorized kernel for the launch's `kw` (one instance per outputs-per-vector count);
/// `INDEXED`: also the argmax (a separate entry, so the value-only kernel is not sized for the
/// argmax bookkeeping's registers).
///
/// # Safety
/// As [`pool_vectorized`]; `idx` holds the outputs when `INDEXED`.
#[inline(always)]
pub unsafe fn vectorized<T: PoolIn, R: PoolOp<T>, const INDEXED: bool>(
    x: *const T,
    y: *mut T,
    idx: *mut i64,
    a: &PoolArgs,
) {
    let lanes = T::LANES as u32;
    // SAFETY: forwarded; the host launches this kernel only for kw dividing the lanes.
    unsafe {
        match lanes / a.kw {
            1 => pool_vectorized::<T, R, 1, INDEXED>(x, y, idx, a),
            2 => pool_vectorized::<T, R, 2, INDEXED>(x, y, idx, a),
            4 if lanes >= 4 => pool_vectorized::<T, R, 4, INDEXED>(x, y, idx, a),
            8 if lanes >= 8 => pool_vectorized::<T, R, 8, INDEXED>(x, y, idx, a),
            16 if lanes >= 16 => pool_vectorized::<T, R, 16, INDEXED>(x, y, idx, a),
            _ => {}
        }
    }
}

/// `P = lanes / SW` outputs per thread for 3-wide windows without dilation at stride `SW` whose
/// horizontal padding `PW ≤ 1` keeps every tap within one element of the thread's 16-byte vector
/// (the host runs stride 2: 3 × 3 stride 2 padding 1 is ResNet's pooling). Thread `t` takes
/// vector column `c` of output row `oy` as the vectorized kernel does; per window row it loads
/// that vector with `ld.global.nc.v4` and the one element on each side its windows reach with
/// scalar loads (L1 hits: the neighbouring threads' vectors hold them), `ROWS` window rows a pass
/// with all their loads in flight, then folds the taps of each output in row-major order, so
/// ties, NaN and the average's summation order are the one-output rungs'. Which taps lie in the
/// row follows from two flags ([`Sides`]), the average's counts are 32-bit ([`Extent`]), and the
/// `P` outputs (and indices) leave as one store where they are whole and aligned.
///
/// # Safety
/// As [`pool_one`]; additionally `w` is a multiple of the vector's lanes, `kw = 3`, `dw = 1`,
/// `sw = SW`, `pw = PW`, `(w / lanes) · P ≥ ow`, and `x` is 16-byte aligned.
#[inline(always)]
unsafe fn pool_vectorized3<
    T: PoolIn,
    R: PoolOp<T>,
    const SW: usize,
    const PW: usize,
    const P: usize,
    const ROWS: usize,
    const INDEXED: bool,
>(
    x: *const T,
    y: *mut T,
    idx: *mut i64,
    a: &PoolArgs,
) {
    const { assert!(P * SW <= 16 && PW <= 1 && 2 <= SW + PW) };
    let lanes = T::LANES as usize;
    let Some((plane, oy, c)) = thread_coordinates(a) else {
        return;
    };
    let rows = R::span(oy, a.sh, a.ph, a.kh, a.dh, a.h);
    // The window's rows as the average divides by them, formed before the row loop: the span's
    // 64-bit ends then hold no registers across it (at the 6-block bound, 40 registers, they
    // spilled one in the padding-0 path).
    let row_extent = rows.extent();
    let col0 = c * lanes as u32;
    // The elements just before and after the vector, the only taps that can fall outside the row
    // (`w` is a multiple of the lanes), lie in it unless the vector starts or ends the row.
    let sides = Sides {
        lanes: lanes as i32,
        left: col0 > 0,
        right: col0 + (lanes as u32) < a.w,
    };
    let tap = |j: usize, k: usize| (j * SW + k) as i32 - PW as i32;
    // Each output's columns: its in-row taps, and with the padding column before the row (the
    // only padded tap a window reaches: the last one ends inside the row for PW = 1) its padded
    // length. 32-bit counts, no spans: the average's divisor costs a few integer operations.
    let mut cols = [Extent { len: 0, padded: 0 }; P];
    crate::unroll!(P, |j| {
        crate::unroll!(3, |k| {
            let inside = sides.holds(tap(j, k));
            cols[j].len += inside as u32;
            cols[j].padded += (inside || tap(j, k) < 0) as u32;
        });
    });
    let mut acc = [R::begin(0); P];
    if INDEXED {
        crate::unroll!(P, |j| {
            // Only the first tap can lie before the row.
            let first = tap(j, 0) + !sides.holds(tap(j, 0)) as i32;
            acc[j] = R::begin(rows.start as u32 * a.w + col0.wrapping_add_signed(first));
        });
    }
    // The plane's first element once; the rows in 32 bits (in-plane positions: h · w < 2^32).
    let xp = x.wrapping_add((plane * a.h as u64 * a.w as u64) as usize);
    // Row `r`'s vector and the element each side of it that the windows reach (`LOWEST` where
    // outside the row, never folded).
    let load_row = |r: u32| {
        let at = (r * a.w + col0) as usize;
        let (mut before, mut after) = (T::LOWEST, T::LOWEST);
        // SAFETY: the vector lies inside the row (w is a multiple of lanes), 16-byte aligned;
        // the side elements are read only when inside the row.
        unsafe {
            if PW == 1 && sides.left {
                before = T::read_only(xp.add(at - 1));
            }
            if SW + PW <= 2 && sides.right {
                after = T::read_only(xp.add(at + lanes));
            }
            (load_nc_v4(xp.add(at).cast()), before, after)
        }
    };
    let mut fold = |r: u32, (words, before, after): ([u32; 4], T, T)| {
        // Taps -1 ..= lanes of the row (vector-relative): the vector, and one element each side.
        let mut e = [T::LOWEST; 18];
        (e[0], e[lanes + 1]) = (before, after);
        let mut k = 1;
        T::for_each_lane(words, |v| {
            e[k] = v;
            k += 1;
        });
        let index0 = r * a.w + col0;
        crate::unroll!(P, |j| {
            crate::unroll!(3, |k| {
                let t = tap(j, k);
                if sides.holds(t) {
                    let index = if INDEXED { index0.wrapping_add_signed(t) } else { 0 };
                    R::take(&mut acc[j], e[(t + 1) as usize], index);
                }
            });
        });
    };
    // Up to ROWS window rows a pass, every load of the pass in flight before the first fold
    // (one row a pass waits a memory round trip per window row). The saturating steps keep a
    // dilated window's next rows from wrapping past the plane.
    let (end, step) = (rows.end.max(rows.start) as u32, rows.step as u32);
    let mut row = rows.start as u32;
    while row < end {
        let mut pass = [([0u32; 4], T::LOWEST, T::LOWEST); ROWS];
        crate::unroll!(ROWS, |b| {
            let r = row.saturating_add(step.saturating_mul(b as u32));
            if r < end {
                pass[b] = load_row(r);
            }
        });
        crate::unroll!(ROWS, |b| {
            let r = row.saturating_add(step.saturating_mul(b as u32));
            if r < end {
                fold(r, pass[b]);
            }
        });
        row = row.saturating_add(step.saturating_mul(ROWS as u32));
    }
    let o = (plane * a.oh as u64 + oy as u64) * a.ow as u64;
    let first = (o + c as u64 * P as u64) as usize;
    let mut out = [T::LOWEST; P];
    let mut index = [0u32; P];
    crate::unroll!(P, |j| {
        (out[j], index[j]) = R::finish(acc[j], a, row_extent, cols[j]);
    });
    // The P outputs as one store (the indices as 16-byte stores) where all lie in the row and
    // the address is aligned to their width: a warp then writes its outputs with one contiguous
    // store instead of P strided ones.
    let whole = c * P as u32 + P as u32 <= a.ow;
    let (packed, indices16) = (
        whole && (y.wrapping_add(first) as usize).is_multiple_of(P * size_of::<T>()),
        whole && P.is_multiple_of(2) && (idx.wrapping_add(first) as usize).is_multiple_of(16),
    );
    // SAFETY: the outputs first .. first + P of the row that are < ow, inside the caller's
    // buffers; the packed stores only when all P are and aligned to their width.
    unsafe {
        if packed {
            store_packed(y.add(first), &out);
        }
        if INDEXED && indices16 {
            crate::unroll!(P / 2, |k| {
                let pair = [index[2 * k], 0, index[2 * k + 1], 0];
                store_v4(idx.add(first + 2 * k) as *mut [u32; 4], pair);
            });
        }
        crate::unroll!(P, |j| {
            if c * P as u32 + (j as u32) < a.ow {
                if !packed {
                    *y.add(first + j) = out[j];
                }
                if INDEXED && !indices16 {
                    *idx.add(first + j) = index[j] as i64;
                }
            }
        });
    }
}

/// Which vector-relative taps of a row lie in it: those of the vector, the one before it unless
/// the vector starts the row, the one after it unless the vector ends it.
#[derive(Clone, Copy)]
struct Sides {
    lanes: i32,
    left: bool,
    right: bool,
}

impl Sides {
    #[inline(always)]
    fn holds(&self, tap: i32) -> bool {
        (tap >= 0 || self.left) && (tap < self.lanes || self.right)
    }
}

/// The 3-wide overlapping vectorized kernel for the launch's stride and padding
/// (`pool_vectorized3`), `ROWS` window rows loaded a pass (`for_each_pool_instance!`'s `rows3`).
///
/// # Safety
/// As [`pool_vectorized3`]; the host launches it only for `(sw, pw)` of `(2, 1)` or `(2, 0)`.
#[inline(always)]
pub unsafe fn vectorized3<T: PoolIn, R: PoolOp<T>, const ROWS: usize, const INDEXED: bool>(
    x: *const T,
    y: *mut T,
    idx: *mut i64,
    a: &PoolArgs,
) {
    // SAFETY: forwarded.
    unsafe {
        match (a.sw, a.pw, T::LANES) {
            (2, 1, 16) => pool_vectorized3::<T, R, 2, 1, 8, ROWS, INDEXED>(x, y, idx, a),
            (2, 1, 8) => pool_vectorized3::<T, R, 2, 1, 4, ROWS, INDEXED>(x, y, idx, a),
            (2, 1, 4) => pool_vectorized3::<T, R, 2, 1, 2, ROWS, INDEXED>(x, y, idx, a),
            (2, 1, _) => pool_vectorized3::<T, R, 2, 1, 1, ROWS, INDEXED>(x, y, idx, a),
            (2, 0, 16) => pool_vectorized3::<T, R, 2, 0, 8, ROWS, INDEXED>(x, y, idx, a),
            (2, 0, 8) => pool_vectorized3::<T, R, 2, 0, 4, ROWS, INDEXED>(x, y, idx, a),
            (2, 0, 4) => pool_vectorized3::<T, R, 2, 0, 2, ROWS, INDEXED>(x, y, idx, a),
            (2, 0, _) => pool_vectorized3::<T, R, 2, 0, 1, ROWS, INDEXED>(x, y, idx, a),
            _ => {}
        }
    }
}
