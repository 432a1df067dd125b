//! The direct 2D rungs: block and warp tile geometry, one pixel and a 4 × 4 block of pixels per
//! thread, the shared tile, and the composed 3 × 3 passes through shared memory.

use super::*;

// ---------------------------------------------------------------------------------------------
// Block geometry
// ---------------------------------------------------------------------------------------------

/// The block's place in a grid of `ceil(w / bw) × ceil(h / bh) × planes` tiles (a 1D grid; the
/// decomposition is block-uniform): `(plane, first row, first column)`.
#[inline(always)]
pub(super) fn tile_origin<T>(a: &Args<T>, bw: u32, bh: u32) -> (u64, i32, i32) {
    let gx = a.w.div_ceil(bw);
    let gy = a.h.div_ceil(bh);
    let b = block_idx();
    let (bx, rest) = (b % gx, b / gx);
    let (by, plane) = (rest % gy, rest / gy);
    (plane as u64, (by * bh) as i32, (bx * bw) as i32)
}

/// The `(plane, first row, first column)` of this *warp*'s `bw × bh` tile, tiles numbered warp by
/// warp over the grid (columns fastest, then rows, then planes: `a.tiles`, which the host built
/// for `bw × bh` tiles, with fewer than 2^32 warps per launch); `None` past the last tile. The
/// dividers take the place of two integer divisions (about 60 instructions of a word-tile
/// warp's prologue). With `edges_first`, the rows of tiles go in [`edge_strips_first`] order.
#[inline(always)]
pub(super) fn warp_tile_origin<T>(a: &Args<T>, bw: u32, bh: u32, edges_first: bool) -> Option<(u64, i32, i32)> {
    let t = block_idx() * (ROW_VECTOR_THREADS / 32) + warp_idx();
    let (rest, bx) = a.tiles.across.divrem(t);
    let (plane, by) = a.tiles.down.divrem(rest);
    let by = if edges_first {
        edge_strips_first(by, a.tiles.down.d)
    } else {
        by
    };
    ((plane as u64) < a.planes).then_some((plane as u64, (by * bh) as i32, (bx * bw) as i32))
}

/// The row of tiles that launch-order row `by` (of `rows`) takes: the plane's last row of tiles
/// first, then the others from the top. The first and last strips of a word tile take its
/// border-mapped path, whose warps run longest; in the plain order the last strip's warps are the
/// grid's last and ran on after the rest had finished. Launched first, they overlap the interior:
/// on the H100 (u8 8192², same calls) the 5 × 5 dilation went from 60.4–60.6 to 53.7 µs (the SMs
/// active 94% of the kernel instead of 82%), the 3 × 3 dilation from 50.7–50.9 to 49.5–49.7, the
/// Gaussian from 50.9–51.0 to 49.4–49.5 and Sobel from 75.8–76.3 to 74.7–74.9.
#[inline(always)]
pub(super) fn edge_strips_first(by: u32, rows: u32) -> u32 {
    if by == 0 { rows - 1 } else { by - 1 }
}

/// [`warp_tile_origin`] by two integer divisions by the tile counts instead of `a.tiles` (for
/// the kernels where that measured faster: [`WordFilter::DIVIDED_ORIGIN`]).
#[inline(always)]
pub(super) fn warp_tile_origin_divided<T>(a: &Args<T>, bw: u32, bh: u32, edges_first: bool) -> Option<(u64, i32, i32)> {
    let gx = a.w.div_ceil(bw) as u64;
    let gy = a.h.div_ceil(bh) as u64;
    let t = block_idx() as u64 * (ROW_VECTOR_THREADS / 32) as u64 + warp_idx() as u64;
    let (bx, rest) = (t % gx, t / gx);
    let (by, plane) = (rest % gy, rest / gy);
    let by = if edges_first {
        edge_strips_first(by as u32, gy as u32) as u64
    } else {
        by
    };
    (plane < a.planes).then_some((plane, (by * bh as u64) as i32, (bx * bw as u64) as i32))
}

/// The one output `(plane, row, col)` of this thread in a grid of 32 × 8-output blocks (warps on
/// rows, lanes on columns); `None` past the plane's edge.
#[inline(always)]
pub(super) fn thread_pixel<T>(a: &Args<T>) -> Option<(u64, i32, i32)> {
    let (p, r0, c0) = tile_origin(a, 32, 8);
    let (r, c) = (r0 + (thread_idx() >> 5) as i32, c0 + (thread_idx() & 31) as i32);
    (r < a.h as i32 && c < a.w as i32).then_some((p, r, c))
}

/// Flat index of `(row, col)` of plane `p`.
#[inline(always)]
pub(super) fn flat<T>(a: &Args<T>, p: u64, r: i32, c: i32) -> usize {
    ((p * a.h as u64 + r as u64) * a.w as u64 + c as u64) as usize
}

// ---------------------------------------------------------------------------------------------
// OnePixel, MultiPixel
// ---------------------------------------------------------------------------------------------

/// One output per thread; blocks of 32 × 8 outputs.
pub unsafe fn one_pixel<F: Fold>(x: *const F::In, y: *mut F::Out, a: &Args<F::In>) {
    let Some((p, r, c)) = thread_pixel(a) else {
        return;
    };
    let plane = Plane::of(x, p, a);
    let mut acc = F::start();
    let mut tap = 0;
    for i in 0..a.kh as i32 {
        let row = plane.row(r + i - a.ay as i32);
        for j in 0..a.kw as i32 {
            // SAFETY: row from plane.row.
            acc = F::take(acc, unsafe { plane.at(row, c + j - a.ax as i32) }, tap, a);
            tap += 1;
        }
    }
    // SAFETY: (r, c) is inside the plane; y holds the launch's planes.
    unsafe { y.add(flat(a, p, r, c)).write(F::finish(acc, a)) }
}

/// A 4 × 4 block of outputs per thread: outputs `(r0 + ty + 8m, c0 + tx + 32n)`, so each load
/// instruction of a warp reads 32 neighbouring columns. Blocks of 128 × 32 outputs.
pub unsafe fn multi_pixel<F: Fold>(x: *const F::In, y: *mut F::Out, a: &Args<F::In>) {
    const M: usize = MULTI_PIXEL as usize;
    let (p, r0, c0) = tile_origin(a, 32 * MULTI_PIXEL, 8 * MULTI_PIXEL);
    let (r0, c0) = (r0 + (thread_idx() >> 5) as i32, c0 + (thread_idx() & 31) as i32);
    let plane = Plane::of(x, p, a);
    let mut acc = [[F::start(); M]; M];
    let mut tap = 0;
    for i in 0..a.kh as i32 {
        let mut rows = [None; M];
        crate::unroll!(M, |m| {
            rows[m] = plane.row(r0 + 8 * m as i32 + i - a.ay as i32);
        });
        for j in 0..a.kw as i32 {
            crate::unroll!(M, |n| {
                let c = c0 + 32 * n as i32 + j - a.ax as i32;
                crate::unroll!(M, |m| {
                    // SAFETY: rows from plane.row.
                    acc[m][n] = F::take(acc[m][n], unsafe { plane.at(rows[m], c) }, tap, a);
                });
            });
            tap += 1;
        }
    }
    crate::unroll!(M, |m| {
        crate::unroll!(M, |n| {
            let (r, c) = (r0 + 8 * m as i32, c0 + 32 * n as i32);
            if r < a.h as i32 && c < a.w as i32 {
                // SAFETY: inside the plane.
                unsafe { y.add(flat(a, p, r, c)).write(F::finish(acc[m][n], a)) }
            }
        });
    });
}

// ---------------------------------------------------------------------------------------------
// SharedTile, ComposedShared
// ---------------------------------------------------------------------------------------------

/// Stages the extended plane's samples `[r0 − ay, r0 − ay + th) × [c0 − ax, c0 − ax + tw)` into
/// `tile` (row-major, `tw` per row): warps on rows, lanes on columns (coalesced).
#[inline(always)]
pub(super) unsafe fn stage_tile<T: Pixel>(plane: &Plane<T>, tile: *mut T, top: i32, left: i32, th: u32, tw: u32) {
    let (tx, ty) = (thread_idx() & 31, thread_idx() >> 5);
    let mut tr = ty;
    while tr < th {
        let row = plane.row(top + tr as i32);
        let mut tc = tx;
        while tc < tw {
            // SAFETY: tile holds th · tw elements; row from plane.row.
            unsafe { tile.add((tr * tw + tc) as usize).write(plane.at(row, left + tc as i32)) };
            tc += 32;
        }
        tr += BLOCK_THREADS / 32;
    }
}

/// Thread `(tx, ty)`'s outputs of a 64 × 32 tile: `(ty + 8m, tx + 32n)`, `m < 4`, `n < 2`.
pub(super) const TILE_M: usize = (TILE_H / 8) as usize;
pub(super) const TILE_N: usize = (TILE_W / 32) as usize;

/// Writes the tile's outputs that lie inside the plane: `$value` with `$m`, `$n` (the thread's
/// output indices, constants after unrolling) and `$tr`, `$tc` (tile row and column) bound.
macro_rules! write_tile {
    ($a:expr, $y:expr, $p:expr, $r0:expr, $c0:expr, |$m:ident, $n:ident, $tr:ident, $tc:ident| $value:expr) => {{
        let (tx, ty) = (thread_idx() & 31, thread_idx() >> 5);
        crate::unroll!(TILE_M, |$m| {
            crate::unroll!(TILE_N, |$n| {
                let ($tr, $tc) = (ty + 8 * $m as u32, tx + 32 * $n as u32);
                let (r, c) = ($r0 + $tr as i32, $c0 + $tc as i32);
                if r < $a.h as i32 && c < $a.w as i32 {
                    // SAFETY: inside the plane; y holds the launch's planes.
                    unsafe { $y.add(flat($a, $p, r, c)).write($value) }
                }
            });
        });
    }};
}

/// The block's 64 × 32 outputs from a staged tile (dynamic shared memory: `tile_smem_bytes`).
pub unsafe fn shared_tile<F: Fold>(x: *const F::In, y: *mut F::Out, a: &Args<F::In>) {
    let (p, r0, c0) = tile_origin(a, TILE_W, TILE_H);
    let plane = Plane::of(x, p, a);
    // SAFETY: the launch provides tile_smem_bytes(kh, kw, size, false).
    let tile = unsafe { dynamic_shared::<F::In>() };
    let tw = TILE_W + a.kw - 1;
    // SAFETY: staged before the barrier every thread reaches.
    unsafe {
        stage_tile(&plane, tile, r0 - a.ay as i32, c0 - a.ax as i32, TILE_H + a.kh - 1, tw);
        sync_threads();
    }
    let (tx, ty) = (thread_idx() & 31, thread_idx() >> 5);
    let mut acc = [[F::start(); TILE_N]; TILE_M];
    let mut tap = 0;
    for i in 0..a.kh {
        for j in 0..a.kw {
            crate::unroll!(TILE_M, |m| {
                crate::unroll!(TILE_N, |n| {
                    let e = (ty + 8 * m as u32 + i) * tw + tx + 32 * n as u32 + j;
                    // SAFETY: inside the staged tile.
                    acc[m][n] = F::take(acc[m][n], unsafe { *tile.add(e as usize) }, tap, a);
                });
            });
            tap += 1;
        }
    }
    write_tile!(a, y, p, r0, c0, |m, n, _tr, _tc| F::finish(acc[m][n], a));
}

/// A max/min of an odd square `k = 2h + 1` as `h` passes of 3 × 3 over the staged tile, through
/// two shared buffers (`tile_smem_bytes(k, k, size, true)`). Pass `s` computes the tile rows and
/// columns `[s, extent − s)` from pass `s − 1`'s, so after `h` passes the output tile is exact.
pub unsafe fn composed_shared<E: Extremum>(x: *const E::T, y: *mut E::T, a: &Args<E::T>) {
    let (p, r0, c0) = tile_origin(a, TILE_W, TILE_H);
    let plane = Plane::of(x, p, a);
    let half = a.kh / 2;
    let (th, tw) = (TILE_H + a.kh - 1, TILE_W + a.kw - 1);
    // SAFETY: the launch provides two tiles (tile_smem_bytes(.., true)).
    let first = unsafe { dynamic_shared::<E::T>() };
    let second = unsafe { first.byte_add(tile_smem_bytes(a.kh, a.kw, E::T::SIZE as u32, true) as usize / 2) };
    // SAFETY: staged before the barrier.
    unsafe {
        stage_tile(&plane, first, r0 - a.ay as i32, c0 - a.ax as i32, th, tw);
        sync_threads();
    }
    let (tx, ty) = (thread_idx() & 31, thread_idx() >> 5);
    let (mut src, mut dst) = (first, second);
    for s in 1..=half {
        let mut tr = s + ty;
        while tr < th - s {
            let mut tc = s + tx;
            while tc < tw - s {
                let mut acc = E::START;
                crate::unroll!(3, |i| {
                    crate::unroll!(3, |j| {
                        let e = (tr + i as u32 - 1) * tw + tc + j as u32 - 1;
                        // SAFETY: rows and columns [s − 1, extent − s + 1) hold pass s − 1.
                        acc = E::op(acc, unsafe { *src.add(e as usize) });
                    });
                });
                // SAFETY: inside the tile.
                unsafe { dst.add((tr * tw + tc) as usize).write(acc) };
                tc += 32;
            }
            tr += BLOCK_THREADS / 32;
        }
        // SAFETY: every thread runs the same passes.
        unsafe { sync_threads() };
        (src, dst) = (dst, src);
    }
    // SAFETY (of the read): src holds the last pass.
    write_tile!(a, y, p, r0, c0, |_m, _n, tr, tc| *src
        .add(((tr + half) * tw + tc + half) as usize));
}
