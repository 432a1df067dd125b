//! The shared-tile pooling kernel: a block per output tile, its input rows staged in shared
//! memory once; any overlapping geometry.

use super::*;

/// Up to this many 16-byte loads per thread are in flight before the first is stored to shared.
const TILE_LOADS: usize = 4;

/// The output tile of one block and the input rows and columns it reads, all in plane
/// coordinates: outputs `[oy0, oy0 + rows) × [ox0, ox0 + cols)` read input rows `[iy, iy_end)`
/// and columns `[ix, ix_end)`; the stage holds columns from `ix_base` (`ix` rounded down to a
/// 16-byte vector when the rows load as vectors).
struct TileRegion {
    plane: u64,
    oy0: u32,
    ox0: u32,
    rows: u32,
    cols: u32,
    iy: i64,
    iy_end: i64,
    ix_base: i64,
    ix_end: i64,
}

impl TileRegion {
    /// Block `b`'s tile: `b = (plane · tiles_down + ty) · tiles_across + tx` (`a.cols` divides by
    /// the tiles across, `a.rows` by the tiles down), or `None` past the launch's last plane.
    #[inline(always)]
    fn of_block<T: PoolIn, R: PoolOp<T>>(a: &PoolArgs, vectors: bool) -> Option<Self> {
        let (rest, tx) = a.cols.divrem(block_idx());
        let (plane, ty) = a.rows.divrem(rest);
        let plane = a.plane_begin + plane as u64;
        if plane >= a.plane_end {
            return None;
        }
        let (oy0, ox0) = (ty * a.tile_rows, tx * a.tile_cols);
        let rows = a.tile_rows.min(a.oh - oy0);
        let cols = a.tile_cols.min(a.ow - ox0);
        // The first window's unclipped start bounds every window's first sample (max pooling
        // steps a start inside the padding forward by whole dilations, so a later window can
        // start before the first one's clipped start); ends grow with the window.
        let iy = (oy0 as i64 * a.sh as i64 - a.ph as i64).max(0);
        let ix = (ox0 as i64 * a.sw as i64 - a.pw as i64).max(0);
        let iy_end = R::span(oy0 + rows - 1, a.sh, a.ph, a.kh, a.dh, a.h).end;
        let ix_end = R::span(ox0 + cols - 1, a.sw, a.pw, a.kw, a.dw, a.w).end;
        let lanes = T::LANES as i64;
        let (ix_base, ix_end) = if vectors {
            (ix / lanes * lanes, (ix_end + lanes - 1) / lanes * lanes)
        } else {
            (ix, ix_end)
        };
        Some(TileRegion {
            plane,
            oy0,
            ox0,
            rows,
            cols,
            iy,
            iy_end: iy_end.max(iy),
            ix_base,
            ix_end: ix_end.max(ix_base),
        })
    }
}

/// Stages the tile's input rows in shared memory (row `r` of the stage is input row `iy + r`, at
/// `pitch` elements per row): 16-byte read-only loads, `TILE_LOADS` in flight per thread, when
/// `vectors`; else one element per load.
///
/// # Safety
/// `x` holds the plane; `stage` holds `(iy_end − iy) · pitch` elements; with `vectors`, `x` is
/// 16-byte aligned, `w` and `pitch` are multiples of the lanes and `[ix_base, ix_end)` are whole
/// vectors inside the row.
#[inline(always)]
unsafe fn stage_tile<T: PoolIn>(x: *const T, stage: *mut T, g: &TileRegion, a: &PoolArgs, pitch: u32, vectors: bool) {
    let t = thread_idx();
    // SAFETY: the plane lies in the input (the caller's contract).
    let plane = unsafe { x.add((g.plane * a.h as u64 * a.w as u64) as usize) };
    let rows = (g.iy_end - g.iy) as u32;
    let width = (g.ix_end - g.ix_base) as u32;
    // Input element (plane-relative) and stage element of tile element (r, c).
    let at = |r: u32, c: u32| {
        (
            (g.iy as u32 + r) as usize * a.w as usize + g.ix_base as usize + c as usize,
            (r * pitch + c) as usize,
        )
    };
    if vectors {
        let lanes = T::LANES as u32;
        let per_row = width / lanes;
        let total = rows * per_row;
        let mut i = t;
        while i < total {
            let mut v = [[0u32; 4]; TILE_LOADS];
            let mut dst = [0usize; TILE_LOADS];
            crate::unroll!(TILE_LOADS, |u| {
                let j = i + u as u32 * POOL_BLOCK;
                if j < total {
                    let r = j / per_row;
                    let (src, d) = at(r, (j - r * per_row) * lanes);
                    dst[u] = d;
                    // SAFETY: a whole aligned vector of row iy + r (the contract).
                    v[u] = unsafe { load_nc_v4(plane.add(src).cast()) };
                }
            });
            crate::unroll!(TILE_LOADS, |u| {
                if i + (u as u32) * POOL_BLOCK < total {
                    // SAFETY: inside the stage, 16-byte aligned (pitch is whole vectors).
                    unsafe { store_shared_v4(stage.add(dst[u]).cast(), v[u]) };
                }
            });
            i += TILE_LOADS as u32 * POOL_BLOCK;
        }
    } else {
        let total = rows * width;
        let mut i = t;
        while i < total {
            let r = i / width;
            let (src, d) = at(r, i - r * width);
            // SAFETY: inside the plane and the stage.
            unsafe { *stage.add(d) = T::read_only(plane.add(src)) };
            i += POOL_BLOCK;
        }
    }
}

/// Taps of a window span (its samples along one axis).
#[inline(always)]
fn taps(s: &Span) -> u32 {
    if s.end > s.start {
        ((s.end - s.start + s.step - 1) / s.step) as u32
    } else {
        0
    }
}

/// A block per output tile for windows that overlap (stride below the kernel) or straddle
/// vectors: the block stages the input rows and columns its tile's windows read in shared
/// memory — each input element loaded from DRAM once, as 16-byte vectors where the rows allow —
/// then thread `t` takes output column `t mod cols` of the tile (tiles are at most 256 wide)
/// and walks its rows `t / cols, + ⌊256 / cols⌋, …`: the column window is found once per
/// thread, consecutive threads write consecutive outputs. Each window is walked row-major out
/// of the stage (so max ties, NaN and the average's summation order are the other rungs'
/// exactly); whole 3 × 3 windows without dilation (ResNet's pooling) are unrolled. `INDEXED`:
/// also the argmax.
///
/// # Safety
/// As [`pool_one`]; the grid is `tiles_across · tiles_down` blocks per plane of the launch,
/// `tile_cols ≤ POOL_BLOCK`; dynamic shared memory holds `stage_rows · stage_pitch` elements
/// (the host's tile geometry); with vector loads (`a.vectors`), `x` is 16-byte aligned and `w` a
/// multiple of the lanes.
#[inline(always)]
pub unsafe fn shared_tile<T: PoolIn, R: PoolOp<T>, const INDEXED: bool>(
    x: *const T,
    y: *mut T,
    idx: *mut i64,
    a: &PoolArgs,
) {
    let vectors = a.vectors != 0;
    let Some(g) = TileRegion::of_block::<T, R>(a, vectors) else {
        return;
    };
    // SAFETY: the host sized the stage for every tile of this geometry.
    let stage: *mut T = unsafe { dynamic_shared() };
    let pitch = a.stage_pitch;
    // SAFETY: forwarded (the stage and the input's layout are the contract's).
    unsafe { stage_tile(x, stage, &g, a, pitch, vectors) };
    // SAFETY: every thread of the block reaches it.
    unsafe { sync_threads() };
    let t = thread_idx();
    let step = POOL_BLOCK / g.cols;
    let (r0, c) = (t / g.cols, t % g.cols);
    if r0 >= step {
        return;
    }
    let ox = g.ox0 + c;
    let cols = R::span(ox, a.sw, a.pw, a.kw, a.dw, a.w);
    let ncols = taps(&cols);
    // Stage column of the first tap, and the step between taps.
    let col0 = (cols.start - g.ix_base) as u32;
    let dc = cols.step as u32;
    let whole3 = a.kh == 3 && a.dh == 1 && a.kw == 3 && a.dw == 1 && ncols == 3;
    // SAFETY (every read below): the element lies in the staged region, which
    // TileRegion::of_block sized to cover every window of the tile.
    let at = |p: *const T| unsafe { *p };
    let mut r = r0;
    while r < g.rows {
        let oy = g.oy0 + r;
        let rows = R::span(oy, a.sh, a.ph, a.kh, a.dh, a.h);
        let nrows = taps(&rows);
        let first = if INDEXED {
            (rows.start * a.w as i64 + cols.start) as u32
        } else {
            0
        };
        let mut acc = R::begin(first);
        // SAFETY: the window's first tap, inside the stage.
        let base = unsafe { stage.add(((rows.start - g.iy) as u32 * pitch + col0) as usize) };
        if whole3 && nrows == 3 {
            crate::unroll!(3, |i| {
                // SAFETY: row i of the window, inside the stage.
                let line = unsafe { base.add(i * pitch as usize) };
                crate::unroll!(3, |j| {
                    // SAFETY: tap j of the row.
                    let v = at(unsafe { line.add(j) });
                    R::take(&mut acc, v, first + i as u32 * a.w + j as u32);
                });
            });
        } else {
            let (dr, drow) = ((rows.step as u32 * pitch) as usize, rows.step as u32 * a.w);
            let (mut line, mut index) = (base, first);
            for _ in 0..nrows {
                let (mut p, mut i) = (line, index);
                for _ in 0..ncols {
                    R::take(&mut acc, at(p), i);
                    // SAFETY: the next tap (read only while taps remain).
                    p = unsafe { p.add(dc as usize) };
                    i += dc;
                }
                // SAFETY: the next row (read only while rows remain).
                line = unsafe { line.add(dr) };
                index += drow;
            }
        }
        let (v, index) = R::finish(acc, a, rows.extent(), cols.extent());
        let out = (g.plane * a.oh as u64 + oy as u64) * a.ow as u64 + ox as u64;
        // SAFETY: out < plane_end · oh · ow, which the caller's buffers hold.
        unsafe {
            *y.add(out as usize) = v;
            if INDEXED {
                *idx.add(out as usize) = index as i64;
            }
        }
        r += step;
    }
}
