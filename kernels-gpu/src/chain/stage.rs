//! A chain tile's input: the staged region of the plane, and the border fix-ups before each
//! step (what the op run alone reads outside the image).

use super::{Frame, PITCH, lookup_word, near_index};
use crate::abi::border::BorderMode;
use crate::abi::chain::{CHAIN_BLOCK, CHAIN_MAX_HALO, CHAIN_TILE_H};
use crate::device::{load_nc_v4, store_shared_v4, sync_threads, thread_idx};

/// After a step wrote the region rows `[y0, y1)` × words `[j0, j1)` of `buf` (or the block
/// staged it): each of its positions outside the image that the later steps still read — within
/// `rest` (rows above, below, columns left, right: the extents of the steps still to run) of the
/// image's edge — takes the constant, or the value at its border-mapped position (inside the
/// image, so not written here). Two passes, each over the bytes it fixes and nothing else:
/// threads over the region's inside rows write their outside columns (a few bytes a row), then,
/// after a barrier, threads over the words of the outside rows copy their mapped row, whose
/// outside columns the first pass fixed (the mapping is separable). Every chained step's extents
/// are symmetric (odd windows), so a mapped position within `rest` of the edge lies in the region.
///
/// # Safety
/// `buf` is a buffer of the frame; only the block's threads touch it, and they sync after.
#[inline(always)]
pub(super) unsafe fn fix_border(
    buf: *mut u32,
    f: &Frame,
    [y0, y1, j0, j1]: [u32; 4],
    rest: [u32; 4],
    mode: BorderMode,
    cval: u8,
) {
    let [rest_top, rest_bottom, rest_left, rest_right] = rest.map(|r| r as i32);
    let (y0, y1) = (y0 as i32, y1 as i32);
    let bytes = buf as *mut u8;
    let width = (4 * PITCH) as i32;
    let (c0, c1) = (4 * j0 as i32, 4 * j1 as i32);
    let tid = thread_idx() as i32;
    // The outside columns to fix, [left0, left0 + n_left) and [right0, right0 + n_right).
    let left0 = (-f.ox - rest_left).max(c0);
    let n_left = ((-f.ox).min(c1) - left0).max(0);
    let right0 = (f.w - f.ox).max(c0);
    let n_right = ((f.w - f.ox + rest_right).min(c1) - right0).max(0);
    // The region's inside rows; the threads take (row, side) pairs, sides with bytes only.
    let (in0, in1) = ((-f.oy).max(y0), (f.h - f.oy).min(y1));
    let sides = (n_left > 0) as i32 + (n_right > 0) as i32;
    let mut i = tid;
    while i < sides * (in1 - in0) {
        let (r, left) = match sides {
            2 => (in0 + (i >> 1), i & 1 == 0),
            _ => (in0 + i, n_left > 0),
        };
        let (start, n) = if left { (left0, n_left) } else { (right0, n_right) };
        let row = r * width;
        for c in start..start + n {
            let v = match near_index(f.ox + c, f.w, mode) {
                // SAFETY: inside the row (clamped to the region).
                Some(mx) => unsafe { *bytes.add((row + (mx - f.ox).clamp(c0, c1 - 1)) as usize) },
                None => cval,
            };
            // SAFETY: inside the buffer.
            unsafe { *bytes.add((row + c) as usize) = v };
        }
        i += CHAIN_BLOCK as i32;
    }
    // The outside rows to fix, [top0, top0 + n_top) and [bottom0, bottom0 + n_bottom).
    let top0 = (-f.oy - rest_top).max(y0);
    let n_top = ((-f.oy).min(y1) - top0).max(0);
    let bottom0 = (f.h - f.oy).max(y0);
    let n_bottom = ((f.h - f.oy + rest_bottom).min(y1) - bottom0).max(0);
    if n_top + n_bottom == 0 {
        return;
    }
    // SAFETY: block-uniform; the mapped rows' outside columns are fixed.
    unsafe { sync_threads() };
    let words = (j1 - j0) as i32;
    let fill = u32::from_ne_bytes([cval; 4]);
    let mut i = tid;
    while i < (n_top + n_bottom) * words {
        let (q, j) = (i / words, j0 as i32 + i % words);
        let r = if q < n_top { top0 + q } else { bottom0 + q - n_top };
        let v = match near_index(f.oy + r, f.h, mode) {
            // SAFETY: a word of the region (the row clamped to it).
            Some(my) => unsafe { *buf.add(((my - f.oy).clamp(y0, y1 - 1) * PITCH as i32 + j) as usize) },
            None => fill,
        };
        // SAFETY: inside the buffer.
        unsafe { *buf.add((r * PITCH as i32 + j) as usize) = v };
        i += CHAIN_BLOCK as i32;
    }
}

/// 16-byte chunks of a buffer row.
const CHUNKS: u32 = PITCH / 4;
/// Rows a pass of the block stages: thread `t < STAGE_ROWS · CHUNKS` keeps chunk `t mod CHUNKS`
/// of the rows `⌊t / CHUNKS⌋ + STAGE_ROWS · u` (25 rows of 10 chunks; 6 threads idle).
const STAGE_ROWS: u32 = CHAIN_BLOCK / CHUNKS;
/// Chunks a thread stages at most: the largest region ([`CHAIN_TILE_H`]` + 2 ·
/// `[`CHAIN_MAX_HALO`] rows) over [`STAGE_ROWS`] (6: 24 registers of loads in flight).
const STAGE_BATCH: usize = (CHAIN_TILE_H + 2 * CHAIN_MAX_HALO).div_ceil(STAGE_ROWS) as usize;

/// Stages the frame's region of the plane `src` into `buf`: threads over 16-byte chunks of the
/// rows, each down one chunk column, [`STAGE_BATCH`] rows [`STAGE_ROWS`] apart (the column's
/// tests once, then per chunk a row test and a load or store at a constant offset; a chunk index
/// per chunk cost a division and the tests again). A chunk inside a row of whole vectors
/// (`row_align` 16) is one vector load, and a thread issues all of its vector loads before it
/// stores any (one memory latency per block, not one per chunk: the loop of one chunk at a time
/// waited on each load in turn). Other chunks follow: their words are loaded whole where they
/// lie in a row of whole words, else byte by byte. Positions outside the image are the periodic
/// extension under wrap (mapped rows and bytes), else zero: the block then fixes them as after a
/// step ([`fix_border`]). An `interior` region (inside the plane) of rows of whole vectors skips
/// the tests: its threads step one pointer down their chunk column (the tests and an offset
/// product per chunk took a seventh of the W12 kernel's instructions). With `lut`, every staged
/// pixel goes through it (the chain's leading point steps).
/// (`Plane::row` with `word_at` would say the same in fewer lines, but their division-based
/// mapping made the kernel slower on the H200: W12 64 × 512² 104.2 µs, 8192² 175.2 µs, against
/// 84.4 and 163.5 with this staging.)
///
/// # Safety
/// `buf` is a buffer of the frame; `src` the plane's `h · w` pixels, 16-byte aligned if
/// `row_align > 1`; `interior` only if the frame's region lies inside the plane; `lut` 256 bytes
/// of shared memory the block has written (and synced).
#[inline(always)]
pub(super) unsafe fn stage(
    buf: *mut u32,
    f: &Frame,
    src: *const u8,
    row_align: u32,
    interior: bool,
    mode: BorderMode,
    lut: Option<*const u8>,
) {
    let wrap = mode as u32 == BorderMode::Wrap as u32;
    let tid = thread_idx();
    if tid >= STAGE_ROWS * CHUNKS {
        return;
    }
    // The thread's chunk column, its first image column, and how it lies in the image's rows.
    let (q, r0) = (tid % CHUNKS, tid / CHUNKS);
    let gx = f.ox + 16 * q as i32;
    let whole = row_align == 16 && gx >= 0 && gx + 16 <= f.w;
    let touches = wrap || (gx + 16 > 0 && gx < f.w);
    // The image row a buffer row holds (the periodic extension's under wrap, else only an
    // inside row).
    let image_row = |r: u32| {
        let iy = f.oy + r as i32;
        match wrap {
            true => near_index(iy, f.h, mode),
            false => (0 <= iy && iy < f.h).then_some(iy),
        }
    };
    let row_of = |my: i32| src.wrapping_add(my as usize * f.w as usize);
    let put = |r: u32, v: [u32; 4]| {
        let v = match lut {
            // SAFETY: the caller's table.
            Some(lut) => v.map(|w| unsafe { lookup_word(w, lut) }),
            None => v,
        };
        // SAFETY: chunk q of row r, 16-byte aligned (the buffers start on a multiple of 16).
        unsafe { store_shared_v4(buf.add((r * PITCH + 4 * q) as usize) as *mut [u32; 4], v) };
    };
    // The vector loads (and the chunks of zeros), all in flight; bit u of `rest` marks a chunk
    // left to the word and byte path.
    let mut rest = 0u32;
    let mut v = [[0u32; 4]; STAGE_BATCH];
    if interior && row_align == 16 {
        // Every chunk is one aligned vector of an inside row: a pointer stepped down the column.
        let pitch = (STAGE_ROWS * f.w as u32) as usize;
        let first = src.wrapping_add((f.oy as u32 + r0) as usize * f.w as usize + gx as usize);
        crate::unroll!(STAGE_BATCH, |u| {
            if r0 + STAGE_ROWS * (u as u32) < f.rows {
                // SAFETY: 16 bytes of an inside row, 16-byte aligned (`row_align`).
                v[u] = unsafe { load_nc_v4(first.wrapping_add(u * pitch) as *const [u32; 4]) };
            }
        });
    } else {
        crate::unroll!(STAGE_BATCH, |u| {
            let r = r0 + STAGE_ROWS * u as u32;
            if r < f.rows
                && let Some(my) = image_row(r)
            {
                if whole {
                    // SAFETY: 16 bytes of the row, 16-byte aligned (`row_align`).
                    v[u] = unsafe { load_nc_v4(row_of(my).add(gx as usize) as *const [u32; 4]) };
                } else if touches {
                    rest |= 1 << u;
                }
            }
        });
    }
    crate::unroll!(STAGE_BATCH, |u| {
        let r = r0 + STAGE_ROWS * u as u32;
        if r < f.rows && rest & (1 << u) == 0 {
            put(r, v[u]);
        }
    });
    // The chunks at a row's ends: words, else bytes.
    while rest != 0 {
        let u = rest.trailing_zeros();
        rest &= rest - 1;
        let r = r0 + STAGE_ROWS * u;
        let row = row_of(image_row(r).unwrap_or(0));
        let mut v = [0u32; 4];
        crate::unroll!(4, |e| {
            let c = gx + 4 * e as i32;
            v[e] = if row_align >= 4 && c >= 0 && c + 4 <= f.w {
                crate::load_nc!(row.wrapping_add(c as usize) as *const u32, u32)
            } else {
                let mut word = 0u32;
                crate::unroll!(4, |k| {
                    let x = c + k as i32;
                    let mx = match wrap {
                        true => near_index(x, f.w, mode),
                        false => (0 <= x && x < f.w).then_some(x),
                    };
                    if let Some(mx) = mx {
                        word |= (crate::load_nc!(row.wrapping_add(mx as usize), u8) as u32) << (8 * k);
                    }
                });
                word
            };
        });
        put(r, v);
    }
}
