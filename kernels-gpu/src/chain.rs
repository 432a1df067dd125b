//! Fused chains of u8 2D ops (`abi::chain`): one block per output tile of one plane.
//!
//! Thread mapping: warps over the rows of a region, lanes over its columns. Shared memory: two
//! u8 buffers of the tile plus the launch's halo. The block stages its region of the input
//! (border-mapped), then each step but the last computes, from one buffer into the other, the
//! region the following steps still read — the halo shrinks by the step's extents — and the last
//! step writes the tile. Between steps, the positions of a region that lie outside the image
//! take what the op run alone would read there: the constant, or (replicate, reflect, mirror) the
//! step's own value at the mapped position inside the image, which the region holds; under wrap
//! the step is computed there as anywhere (the periodic extension of the input gives the periodic
//! extension of every step). So the chain is bit-exact with its ops run one by one.

use crate::abi::border::{BorderMode, border_index_i32};
use crate::abi::chain::{CHAIN_BLOCK, CHAIN_MAX_STEPS, CHAIN_TILE_H, CHAIN_TILE_W, ChainArgs, ChainKind, ChainStep};
use crate::device::{block_idx, dynamic_shared, lane_idx, sync_threads, warp_idx};

const WARPS: u32 = CHAIN_BLOCK / 32;

/// The tile's frame: buffer position `(by, bx)` is image position `(oy + by, ox + bx)`.
#[derive(Clone, Copy)]
struct Frame {
    oy: i32,
    ox: i32,
    h: i32,
    w: i32,
}

impl Frame {
    #[inline(always)]
    fn inside(&self, by: u32, bx: u32) -> bool {
        let (gy, gx) = (self.oy + by as i32, self.ox + bx as i32);
        0 <= gy && gy < self.h && 0 <= gx && gx < self.w
    }
}

/// Calls `f(by, bx)` for every position of the buffer region `[y0, y1) × [x0, x1)`, warps over
/// rows, lanes over columns.
#[inline(always)]
fn for_region(y0: u32, y1: u32, x0: u32, x1: u32, mut f: impl FnMut(u32, u32)) {
    let mut by = y0 + warp_idx();
    while by < y1 {
        let mut bx = x0 + lane_idx();
        while bx < x1 {
            f(by, bx);
            bx += 32;
        }
        by += WARPS;
    }
}

/// Step `s` at buffer position `(by, bx)` of `src` (whose rows are `pitch` bytes): the u8 ops'
/// values, or the Sobel derivative (as i32).
///
/// # Safety
/// `src` holds the step's window around `(by, bx)`.
#[inline(always)]
unsafe fn step_at(s: &ChainStep, src: *const u8, pitch: u32, by: u32, bx: u32) -> i32 {
    // SAFETY: the caller's window.
    let at = |dy: i32, dx: i32| unsafe {
        *src.add(((by as i32 + dy) as u32 * pitch + (bx as i32 + dx) as u32) as usize) as i32
    };
    let kind = s.kind;
    if kind == ChainKind::Gaussian3x3 as u32 {
        let row = |dy| at(dy, -1) + 2 * at(dy, 0) + at(dy, 1);
        (row(-1) + 2 * row(0) + row(1) + 8) >> 4
    } else if kind == ChainKind::Dilate as u32 || kind == ChainKind::Erode as u32 {
        let [top, _, left, _] = s.extents();
        let max = kind == ChainKind::Dilate as u32;
        let mut best = if max { 0 } else { 255 };
        for i in 0..s.kh as i32 {
            for j in 0..s.kw as i32 {
                let v = at(i - top as i32, j - left as i32);
                best = if max { best.max(v) } else { best.min(v) };
            }
        }
        best
    } else if kind == ChainKind::Threshold as u32 {
        if at(0, 0) > s.param as i32 { 255 } else { 0 }
    } else if kind == ChainKind::Sobel0 as u32 {
        let row = |dy| at(dy, -1) + 2 * at(dy, 0) + at(dy, 1);
        row(1) - row(-1)
    } else {
        let col = |dx| at(-1, dx) + 2 * at(0, dx) + at(1, dx);
        col(1) - col(-1)
    }
}

/// Step `k` of the launch, read with constant indices: a dynamic index into the by-value
/// arguments would copy them to local memory (a stack frame).
#[inline(always)]
fn step(a: &ChainArgs, k: usize) -> ChainStep {
    let mut s = a.steps[0];
    crate::unroll!(CHAIN_MAX_STEPS, |i| {
        if i == k {
            s = a.steps[i];
        }
    });
    s
}

/// The chain over one tile; `WIDE`: the last step is a Sobel written as i16.
///
/// # Safety
/// `x` holds the planes' `h · w` pixels, `y` as many outputs (`u8`, or `i16` when `WIDE`); the
/// grid is `tiles_x · tiles_y` blocks per plane; dynamic shared memory holds
/// `chain_shared_bytes(halo)`; `1 ≤ n_steps ≤ CHAIN_MAX_STEPS`, the steps' extents sum to `halo`.
#[inline(always)]
pub unsafe fn chain<const WIDE: bool>(x: *const u8, y: *mut u8, a: &ChainArgs) {
    let b = block_idx();
    let tiles = a.tiles_x * a.tiles_y;
    let (plane, t) = (b / tiles, b % tiles);
    let (ty, tx) = (t / a.tiles_x, t % a.tiles_x);
    let [top, bottom, left, right] = a.halo;
    let pitch = a.pitch;
    let f = Frame {
        oy: (ty * CHAIN_TILE_H) as i32 - top as i32,
        ox: (tx * CHAIN_TILE_W) as i32 - left as i32,
        h: a.h as i32,
        w: a.w as i32,
    };
    let rows = CHAIN_TILE_H + top + bottom;
    let mode = BorderMode::from_code(a.border);
    let plane_len = a.h as usize * a.w as usize;
    // SAFETY: the plane lies in the input.
    let src = unsafe { x.add(plane as usize * plane_len) };
    // SAFETY: two buffers of `rows · pitch` bytes (the host sized them).
    let (mut cur, mut next): (*mut u8, *mut u8) = unsafe {
        let base: *mut u8 = dynamic_shared();
        (base, base.add((rows * pitch) as usize))
    };
    // Stage the input region, border-mapped.
    for_region(0, rows, 0, pitch.min(CHAIN_TILE_W + left + right), |by, bx| {
        let (gy, gx) = (f.oy + by as i32, f.ox + bx as i32);
        let v = match (border_index_i32(gy, f.h, mode), border_index_i32(gx, f.w, mode)) {
            // SAFETY: (my, mx) inside the plane.
            (Some(my), Some(mx)) => unsafe { *src.add(my as usize * a.w as usize + mx as usize) },
            _ => a.cval as u8,
        };
        // SAFETY: inside the buffer.
        unsafe { *cur.add((by * pitch + bx) as usize) = v };
    });
    // SAFETY: every thread reaches it.
    unsafe { sync_threads() };
    // The region still needed after each step: [y0, y1) × [x0, x1) of the buffer.
    let (mut y0, mut y1, mut x0, mut x1) = (0u32, rows, 0u32, CHAIN_TILE_W + left + right);
    let last = a.n_steps as usize - 1;
    for k in 0..last {
        let s = step(a, k);
        let [st, sb, sl, sr] = s.extents();
        (y0, y1, x0, x1) = (y0 + st, y1 - sb, x0 + sl, x1 - sr);
        let wrap = mode as u32 == BorderMode::Wrap as u32;
        let constant = mode as u32 == BorderMode::Constant as u32;
        for_region(y0, y1, x0, x1, |by, bx| {
            let inside = f.inside(by, bx);
            if inside || wrap || constant {
                let v = if inside || wrap {
                    // SAFETY: the step's window lies in the previous region.
                    unsafe { step_at(&s, cur, pitch, by, bx) as u8 }
                } else {
                    a.cval as u8
                };
                // SAFETY: inside the buffer.
                unsafe { *next.add((by * pitch + bx) as usize) = v };
            }
        });
        // SAFETY: every thread reaches it.
        unsafe { sync_threads() };
        if !wrap && !constant {
            // Outside the image, within the halo the later steps still read (`near`): the step's
            // value where the border maps the position — inside the image and, the chain's
            // extents being symmetric, inside the region, so computed above (only inside
            // positions are read). Positions farther out are never read.
            let near = |gy: i32, gx: i32| {
                let (ry0, ry1) = (f.oy + y0 as i32, f.oy + y1 as i32);
                let (rx0, rx1) = (f.ox + x0 as i32, f.ox + x1 as i32);
                let (rt, rb) = ((top - y0) as i32, (y1 - top - CHAIN_TILE_H) as i32);
                let (rl, rr) = ((left - x0) as i32, (x1 - left - CHAIN_TILE_W) as i32);
                ry0 <= gy
                    && gy < ry1
                    && rx0 <= gx
                    && gx < rx1
                    && -rt <= gy
                    && gy < f.h + rb
                    && -rl <= gx
                    && gx < f.w + rr
            };
            for_region(y0, y1, x0, x1, |by, bx| {
                let (gy, gx) = (f.oy + by as i32, f.ox + bx as i32);
                if !f.inside(by, bx) && near(gy, gx) {
                    let my = border_index_i32(gy, f.h, mode).unwrap_or(0) - f.oy;
                    let mx = border_index_i32(gx, f.w, mode).unwrap_or(0) - f.ox;
                    // SAFETY: both positions inside the buffer.
                    unsafe {
                        *next.add((by * pitch + bx) as usize) = *next.add((my as u32 * pitch + mx as u32) as usize);
                    }
                }
            });
            // SAFETY: every thread reaches it.
            unsafe { sync_threads() };
        }
        core::mem::swap(&mut cur, &mut next);
    }
    // The last step writes the tile's pixels inside the image.
    let s = step(a, last);
    for_region(top, top + CHAIN_TILE_H, left, left + CHAIN_TILE_W, |by, bx| {
        if f.inside(by, bx) {
            let (gy, gx) = ((f.oy + by as i32) as usize, (f.ox + bx as i32) as usize);
            let o = plane as usize * plane_len + gy * a.w as usize + gx;
            // SAFETY: the window lies in the staged region; o is a pixel of the output.
            unsafe {
                let v = step_at(&s, cur, pitch, by, bx);
                if WIDE {
                    *(y as *mut i16).add(o) = v as i16;
                } else {
                    *y.add(o) = v as u8;
                }
            }
        }
    });
}

#[unsafe(export_name = crate::chain_kernel_name!("u8"))]
pub unsafe extern "ptx-kernel" fn chain_u8(x: *const u8, y: *mut u8, a: ChainArgs) {
    unsafe { chain::<false>(x, y, &a) }
}

#[unsafe(export_name = crate::chain_kernel_name!("i16"))]
pub unsafe extern "ptx-kernel" fn chain_i16(x: *const u8, y: *mut u8, a: ChainArgs) {
    unsafe { chain::<true>(x, y, &a) }
}
