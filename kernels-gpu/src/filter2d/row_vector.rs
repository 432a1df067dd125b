//! The row-vector rung: 16 bytes of a row per thread, the window separably in registers while
//! the thread walks down a strip of rows (the fixed 3 × 3 filters and 3 × 3 / 5 × 5 max and min).

use super::*;

// ---------------------------------------------------------------------------------------------
// RowVector
// ---------------------------------------------------------------------------------------------

/// A separable `K × K` filter the row-vector kernel applies in registers: a horizontal 1D filter
/// on each row, then a vertical one on `K` rows of its results.
pub trait Separable<const K: usize> {
    type In: Pixel;
    type Mid: Copy;
    type Out: Pixel;
    fn horizontal(w: [Self::In; K]) -> Self::Mid;
    fn vertical(w: [Self::Mid; K]) -> Self::Out;
}

macro_rules! extremum_separable {
    ($($e:ident),*) => {$(
        /// The window's extremum, a row's then a column's (max and min are separable).
        impl<T: Pixel + MorphValue, const K: usize> Separable<K> for $e<T> {
            type In = T;
            type Mid = T;
            type Out = T;
            #[inline(always)]
            fn horizontal(w: [T; K]) -> T {
                let mut m = w[0];
                crate::unroll!(K, |i| {
                    m = <Self as Extremum>::op(m, w[i]);
                });
                m
            }
            #[inline(always)]
            fn vertical(w: [T; K]) -> T {
                <Self as Separable<K>>::horizontal(w)
            }
        }
    )*};
}
extremum_separable!(Max, Min);

/// The classic integer Gaussian `[1 2 1]ᵀ[1 2 1] / 16`: exact integer sums, `(Σ + 8) >> 4`
/// (round half up); `f32`: the same weights, `Σ / 16`.
pub struct Gauss121<I, O>(PhantomData<(I, O)>);
/// Sobel along axis 0 (rows: `[-1 0 1]` down the column, `[1 2 1]` along the row), scipy's sign.
pub struct Sobel0<I, O>(PhantomData<(I, O)>);
/// Sobel along axis 1 (columns: `[-1 0 1]` along the row, `[1 2 1]` down the column).
pub struct Sobel1<I, O>(PhantomData<(I, O)>);

/// Arithmetic of the fixed 3 × 3 filters: integers widen to `i32`, `f32` stays.
pub trait Widen: Pixel {
    type W: Copy + core::ops::Add<Output = Self::W> + core::ops::Sub<Output = Self::W>;
    fn widen(self) -> Self::W;
}
impl Widen for u8 {
    type W = i32;
    #[inline(always)]
    fn widen(self) -> i32 {
        self as i32
    }
}
impl Widen for u16 {
    type W = i32;
    #[inline(always)]
    fn widen(self) -> i32 {
        self as i32
    }
}
impl Widen for f32 {
    type W = f32;
    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }
}

/// The output of a fixed filter from its widened sum (`GAUSS`: the Gaussian's division by 16).
pub trait Narrow<W>: Pixel {
    fn narrow(v: W, gauss: bool) -> Self;
}
impl<O: FromI32> Narrow<i32> for O {
    #[inline(always)]
    fn narrow(v: i32, gauss: bool) -> O {
        O::saturate(if gauss { round_shift(v, 4) } else { v })
    }
}
impl Narrow<f32> for f32 {
    #[inline(always)]
    fn narrow(v: f32, gauss: bool) -> f32 {
        if gauss { v * (1.0 / 16.0) } else { v }
    }
}

#[inline(always)]
pub(super) fn smooth<W: Copy + core::ops::Add<Output = W>>(w: [W; 3]) -> W {
    w[0] + w[1] + w[1] + w[2]
}

macro_rules! fixed3 {
    ($($op:ident: $h:ident, $v:ident, $gauss:literal;)*) => {$(
        impl<I: Widen, O: Narrow<I::W>> Separable<3> for $op<I, O> {
            type In = I;
            type Mid = I::W;
            type Out = O;
            #[inline(always)]
            fn horizontal(w: [I; 3]) -> I::W {
                $h([w[0].widen(), w[1].widen(), w[2].widen()])
            }
            #[inline(always)]
            fn vertical(w: [I::W; 3]) -> O {
                O::narrow($v(w), $gauss)
            }
        }
    )*};
}

#[inline(always)]
pub(super) fn derive<W: Copy + core::ops::Sub<Output = W>>(w: [W; 3]) -> W {
    w[2] - w[0]
}

fixed3! {
    Gauss121: smooth, smooth, true;
    Sobel0: smooth, derive, false;
    Sobel1: derive, smooth, false;
}

/// The loads of one row position for one row-vector thread.
#[derive(Clone, Copy)]
pub(super) struct RowFetch {
    /// The thread's 16 bytes of samples (zero unless `fast`).
    pub(super) words: [u32; 4],
    /// Lane 0: the 8 bytes before its vector; lane 31: the 8 bytes after it (the halo no lane of
    /// the warp holds); zero when outside the row.
    pub(super) edge: [u32; 2],
    /// The row is in memory (not a constant border row), the launch has vector rows and the
    /// thread's columns lie in the row.
    pub(super) fast: bool,
}

impl RowFetch {
    const NONE: RowFetch = RowFetch {
        words: [0; 4],
        edge: [0; 2],
        fast: false,
    };
}

/// Issues row position `r`'s loads for the thread at columns `[c0, c0 + P)` (16 bytes): one
/// 16-byte load, and on the warp's edge lanes one 8-byte load of the halo outside the warp.
#[inline(always)]
pub(super) unsafe fn fetch_row<T: Pixel, const P: usize>(
    plane: &Plane<T>,
    r: i32,
    c0: i32,
    vector_rows: bool,
) -> RowFetch {
    const { assert!(P * T::SIZE == 16) };
    let fast = vector_rows && c0 < plane.w;
    let mut f = RowFetch::NONE;
    if let Some(q) = plane.row(r)
        && fast
    {
        f.fast = true;
        // SAFETY: c0 + P ≤ w (rows of whole vectors), so the vector lies in the row, 16-byte
        // aligned; the edge loads are the last 8 bytes of the previous vector (c0 > 0) or the
        // first 8 of the next one (c0 + P < w), 8-byte aligned.
        unsafe {
            f.words = load_nc_v4(q.add(c0 as usize) as *const [u32; 4]);
            let lane = lane_idx();
            if lane == 0 && c0 > 0 {
                f.edge = load_nc_v2(q.add(c0 as usize - 8 / T::SIZE) as *const [u32; 2]);
            } else if lane == 31 && c0 + (P as i32) < plane.w {
                f.edge = load_nc_v2(q.add(c0 as usize + P) as *const [u32; 2]);
            }
        }
    }
    f
}

/// Row position `r`'s `P` samples at columns `[c0, c0 + P)` and the `H ≤ 2` halo samples each
/// side, from its fetch: the halo from the neighbouring lanes' vectors by `shfl.sync` (every lane
/// of the warp must call this) or the edge lanes' own loads, border-mapped element loads (the
/// row mapped again: cold paths only) at the row's ends and when the launch has no vector rows.
// unroll! bodies past a generic bound are dead code the lint cannot see through.
#[allow(unconditional_panic)]
#[inline(always)]
pub(super) unsafe fn expand_row<T: Pixel, const P: usize, const H: usize>(
    plane: &Plane<T>,
    r: i32,
    c0: i32,
    f: &RowFetch,
) -> ([T; 2], [T; P], [T; 2]) {
    const { assert!(H <= 2) };
    let lane = lane_idx();
    let up = [shfl_up_u32(f.words[2], 1), shfl_up_u32(f.words[3], 1)];
    let down = [shfl_down_u32(f.words[0], 1), shfl_down_u32(f.words[1], 1)];
    let prev = if lane == 0 { f.edge } else { up };
    let next = if lane == 31 { f.edge } else { down };
    let mut mid = [plane.cval; P];
    // One branch per part (not one per sample): the fast parts are register moves.
    if f.fast {
        crate::unroll!(P, |i| {
            mid[i] = T::lane(&f.words, i);
        });
    } else {
        let row = plane.row(r);
        crate::unroll!(P, |i| {
            // SAFETY: row from plane.row.
            mid[i] = unsafe { plane.at(row, c0 + i as i32) };
        });
    }
    let (mut left, mut right) = ([plane.cval; 2], [plane.cval; 2]);
    // Halo sample t: columns c0 − H + t (left) and c0 + P + t (right).
    if f.fast && c0 > 0 {
        crate::unroll!(H, |t| {
            left[t] = T::lane(&[0, 0, prev[0], prev[1]], P - H + t);
        });
    } else {
        let row = plane.row(r);
        crate::unroll!(H, |t| {
            // SAFETY: row from plane.row.
            left[t] = unsafe { plane.at(row, c0 - H as i32 + t as i32) };
        });
    }
    if f.fast && c0 + (P as i32) < plane.w {
        crate::unroll!(H, |t| {
            right[t] = T::lane(&[next[0], next[1], 0, 0], t);
        });
    } else {
        let row = plane.row(r);
        crate::unroll!(H, |t| {
            // SAFETY: as above.
            right[t] = unsafe { plane.at(row, c0 + P as i32 + t as i32) };
        });
    }
    (left, mid, right)
}

/// Stores `P` outputs at `dst` (columns `c0 ..` of a row of `w`): 16-byte vectors when the
/// launch has vector rows and the thread's `P` columns are inside the row, else element stores.
// unroll! bodies past a generic bound are dead code the lint cannot see through.
#[allow(unconditional_panic)]
#[inline(always)]
pub(super) unsafe fn store_row_vector<O: Pixel, const P: usize>(
    dst: *mut O,
    vals: &[O; P],
    c0: i32,
    w: i32,
    vector_rows: bool,
) {
    const { assert!((P * O::SIZE).is_multiple_of(16)) };
    let per = 4 / O::SIZE;
    if vector_rows && c0 + P as i32 <= w {
        crate::unroll!(P * O::SIZE / 16, |q| {
            let mut words = [0u32; 4];
            crate::unroll!(16 / O::SIZE, |e| {
                words[e / per] |= vals[16 / O::SIZE * q + e].bits() << (8 * O::SIZE * (e % per));
            });
            // SAFETY: aligned (vector rows), inside the row.
            unsafe { store_v4((dst as *mut [u32; 4]).add(q), words) };
        });
    } else {
        crate::unroll!(P, |i| {
            if c0 + (i as i32) < w {
                // SAFETY: inside the row.
                unsafe { dst.add(i).write(vals[i]) };
            }
        });
    }
}

/// The row-vector kernel: each warp owns `32 · P` columns (one 16-byte vector per lane) of one
/// strip of `a.strip` rows — warps, not blocks, are the tiles, so rows narrower than a block
/// (512 u8 pixels fill one warp) keep every lane busy; a block's 4 warps take consecutive tiles
/// (neighbouring column groups of a wide row). Each lane walks down its `P` columns, applying
/// `S`'s horizontal filter to each row and its vertical one to the last `K` rows' results (a
/// register ring). Each row's loads are issued `K` rows before the row is filtered: a thread's
/// rows are otherwise a chain of dependent load latencies with one load in flight, too few bytes
/// in flight to cover the memory latency at the occupancy its registers allow. The loop is
/// unrolled `K` times so that ring and fetch slots are compile-time registers (no moves).
/// Registers, no shared memory.
// unroll! bodies past a generic bound are dead code the lint cannot see through.
#[allow(unconditional_panic)]
// Inlined into each entry, so `a` stays in parameter space (a call would copy it to local memory).
#[inline(always)]
pub unsafe fn row_vector<S: Separable<K>, const P: usize, const K: usize>(
    x: *const S::In,
    y: *mut S::Out,
    a: &Args<S::In>,
) {
    const { assert!(K % 2 == 1 && K <= 5) };
    let h = K / 2;
    let Some((p, r_first, c_warp)) = warp_tile_origin(a, 32 * P as u32, a.strip, false) else {
        return; // a warp past the last tile (warp-uniform: no lane of it has work)
    };
    let c0 = c_warp + (lane_idx() * P as u32) as i32;
    let plane = Plane::of(x, p, a);
    let vector_rows = a.vector_rows != 0;
    let r_end = (r_first + a.strip as i32).min(a.h as i32);
    let r_stop = r_end + h as i32;
    let mut r = r_first - h as i32;
    // Slot `s` of `fetched` holds row position r's loads, issued K rows earlier; slot `s` of
    // `ring` receives its horizontal results. Positions past r_stop are not fetched.
    let mut fetched = [RowFetch::NONE; K];
    crate::unroll!(K, |d| {
        if r + (d as i32) < r_stop {
            // SAFETY: every row position is border-mapped.
            fetched[d] = unsafe { fetch_row::<S::In, P>(&plane, r + d as i32, c0, vector_rows) };
        }
    });
    // The ring's slots are written before any output reads them (outputs start at r_first + h).
    let mut ring = [[S::horizontal([plane.cval; K]); P]; K];
    'rows: loop {
        crate::unroll!(K, |s| {
            if r >= r_stop {
                break 'rows;
            }
            let current = fetched[s];
            if r + (K as i32) < r_stop {
                // SAFETY: border-mapped row position.
                fetched[s] = unsafe { fetch_row::<S::In, P>(&plane, r + K as i32, c0, vector_rows) };
            }
            // SAFETY: every lane of the warp runs the same rows (block-uniform bounds).
            let (left, mid, right) = unsafe { expand_row::<S::In, P, 2>(&plane, r, c0, &current) };
            crate::unroll!(P, |i| {
                let mut w = [mid[0]; K];
                crate::unroll!(K, |j| {
                    let col = i as isize + j as isize - h as isize;
                    w[j] = if col < 0 {
                        left[(col + 2) as usize]
                    } else if col >= P as isize {
                        right[(col - P as isize) as usize]
                    } else {
                        mid[col as usize]
                    };
                });
                ring[s][i] = S::horizontal(w);
            });
            if r >= r_first + h as i32 && c0 < a.w as i32 {
                let mut out = [S::vertical([ring[0][0]; K]); P];
                crate::unroll!(P, |i| {
                    // Oldest to newest: slots s + 1, …, s + K (mod K).
                    let mut v = [ring[0][i]; K];
                    crate::unroll!(K, |k| {
                        v[k] = ring[(s + 1 + k) % K][i];
                    });
                    out[i] = S::vertical(v);
                });
                // SAFETY: output row r − h is inside the plane.
                unsafe {
                    store_row_vector(y.add(flat(a, p, r - h as i32, c0)), &out, c0, a.w as i32, vector_rows);
                }
            }
            r += 1;
        });
    }
}
