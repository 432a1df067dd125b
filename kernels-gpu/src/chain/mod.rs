//! Fused chains of u8 2D ops (`abi::chain`): one block per output tile of one plane, every step
//! on packed 4-pixel words.
//!
//! - **Staging.** The block loads its tile plus [`CHAIN_SIDE`] bytes each side and the halo's rows
//!   into a shared buffer ([`ChainLayout`]): 16-byte vectors where the rows are whole vectors
//!   (a thread's loads all in flight before it stores), else words, else bytes at the plane's
//!   edges; positions outside the image are the periodic extension under wrap, else filled as
//!   below. With a staging table (the chain's leading point steps), every staged pixel goes
//!   through it.
//! - **Steps.** Each step reads one buffer and writes the other. A thread takes a *strip*: one
//!   word column of a band of rows ([`Strip`]), which it runs down a row at a time — each row it
//!   reads loaded once (the word and the words beside it; slack rows around each buffer take the
//!   reads past its region) and filtered across once, a window of the last rows' across results
//!   filtered down — with the pixels packed two per 16-bit lane ([`AcrossDown`] for the Gaussian
//!   and Sobel, the word tile's packed max for morphology, one instantiation per window
//!   width). A step's outputs go through its table if point steps followed it. A step computes
//!   the rows and the words the later steps still read (the halo shrinks by its extents); the
//!   bytes of an edge word past that are garbage, never read into the tile.
//! - **Borders.** A tile whose region crosses the image's edge fills the positions outside the
//!   image that later steps read, before each step ([`fix_border`]: threads over those bytes):
//!   the constant, or (replicate, reflect, mirror) the value at the mapped position inside the
//!   image — what the op run alone reads there. Under wrap the staged region is the periodic extension, so every
//!   step is too, and nothing is filled. Interior tiles skip this (a block-uniform branch).
//! - **Output.** A u8 last step writes the tile into the other buffer, which the block then
//!   stores as whole words (a warp: 128 contiguous bytes); a Sobel last step stores its i16
//!   words (or the magnitude's f32) straight from registers.
//!
//! Dilation and erosion are instantiations of one morphology step (packed max or min), per
//! window reach.
//!
//! Rooms: `stage.rs` (staging and the border fix-ups), `steps.rs` (a step down the strips, the
//! Sobel last step), this file (the tile's driver, its buffers and the entries); `stream.rs`
//! the streamed chains (three 3 × 3 steps fixed at compile time, each warp down a strip of rows
//! with every step in registers: no shared memory, no barrier), which reuse the steps'
//! arithmetic (`steps::Linear3`).

use crate::abi::border::{BorderMode, border_index_i32};
use crate::abi::chain::{
    CHAIN_BLOCK, CHAIN_LUT_BYTES, CHAIN_MAX_STEPS, CHAIN_OUT_F32, CHAIN_OUT_I16, CHAIN_OUT_U8, CHAIN_PITCH_WORDS,
    CHAIN_SIDE, CHAIN_SLACK_ABOVE, CHAIN_SLACK_BELOW, CHAIN_TILE_H, CHAIN_TILE_W, ChainArgs, ChainLayout, ChainStep,
    chain_layout,
};
use crate::device::{block_idx, byte_perm, dynamic_shared, store_v2, store_v4, sync_threads, thread_idx};

mod stage;
mod steps;
mod stream;

use stage::{fix_border, stage};
use steps::{run_step, sobel_last};

/// Where the block's buffers lie in the image.
#[derive(Clone, Copy)]
pub(super) struct Frame {
    /// Image row of buffer row 0 and image column of buffer word 0's first byte.
    pub(super) oy: i32,
    pub(super) ox: i32,
    pub(super) h: i32,
    pub(super) w: i32,
    /// Rows per buffer.
    pub(super) rows: u32,
}

/// Words per buffer row.
pub(super) const PITCH: u32 = CHAIN_PITCH_WORDS;

/// [`border_index_i32`] without its division for the positions within one image of the edge
/// (all a chain's halo reaches on an image wider than it): a clamp or one reflection.
#[inline(always)]
pub(super) fn near_index(i: i32, n: i32, mode: BorderMode) -> Option<i32> {
    if 0 <= i && i < n {
        return Some(i);
    }
    let m = match mode {
        BorderMode::Replicate => return Some(i.clamp(0, n - 1)),
        BorderMode::Reflect => {
            if i < 0 {
                -i - 1
            } else {
                2 * n - 1 - i
            }
        }
        BorderMode::Mirror => {
            if i < 0 {
                -i
            } else {
                2 * n - 2 - i
            }
        }
        _ => -1,
    };
    if 0 <= m && m < n {
        Some(m)
    } else {
        border_index_i32(i, n, mode)
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

/// Each pixel of `w` through the 256-byte table at `lut` (shared memory).
///
/// # Safety
/// `lut` holds 256 readable bytes.
#[inline(always)]
pub(super) unsafe fn lookup_word(w: u32, lut: *const u8) -> u32 {
    // SAFETY: a byte indexes the 256-byte table.
    let b = |k: u32| unsafe { *lut.add(((w >> (8 * k)) & 0xff) as usize) as u32 };
    byte_perm(b(0) | (b(1) << 8), b(2) | (b(3) << 8), 0x5410)
}

/// Bytes of one output of `OUT`'s type (`CHAIN_OUT_*`: u8, i16, f32), as [`store_word`] writes them.
pub(super) const fn out_bytes(out: u32) -> usize {
    match out {
        CHAIN_OUT_U8 => 1,
        CHAIN_OUT_I16 => 2,
        _ => 4,
    }
}

/// Stores one word's four outputs at element `o` of `y`, `OUT` (`CHAIN_OUT_*`) saying their
/// type; `words` holds them as they lie in memory (u8: one word, i16: two, f32: four). The first
/// `min(n, 4)` are stored: all four as one store when `aligned`, else one element at a time.
///
/// # Safety
/// `y` holds outputs of `OUT`'s type; elements `o .. o + min(n, 4)` are in it, and when
/// `aligned` and `n ≥ 4`, `o`'s address is aligned to the four outputs' size.
#[inline(always)]
pub(super) unsafe fn store_word<const OUT: u32>(y: *mut u8, o: usize, words: [u32; 4], n: u32, aligned: bool) {
    let whole = aligned && n >= 4;
    // SAFETY: the caller's elements.
    unsafe {
        match OUT {
            CHAIN_OUT_U8 if whole => *(y.add(o) as *mut u32) = words[0],
            CHAIN_OUT_I16 if whole => store_v2((y as *mut i16).add(o) as *mut [u32; 2], [words[0], words[1]]),
            CHAIN_OUT_F32 if whole => store_v4((y as *mut f32).add(o) as *mut [u32; 4], words),
            _ => {
                crate::unroll!(4, |e| {
                    if (e as u32) < n {
                        match OUT {
                            CHAIN_OUT_U8 => *y.add(o + e) = (words[0] >> (8 * e)) as u8,
                            CHAIN_OUT_I16 => *(y as *mut i16).add(o + e) = (words[e / 2] >> (16 * (e % 2))) as i16,
                            _ => *(y as *mut u32).add(o + e) = words[e],
                        }
                    }
                });
            }
        }
    }
}

/// Word columns `[j0, j1)` a step computes: those the later steps still read, `rest = [left,
/// right]` bytes past the tile on each side.
#[inline(always)]
fn step_words(rest: [u32; 2]) -> [u32; 2] {
    let j0 = (CHAIN_SIDE - rest[0]) / 4;
    let j1 = (CHAIN_SIDE + CHAIN_TILE_W + rest[1]).div_ceil(4);
    [j0, j1]
}

/// The chain over one tile; `OUT` (`CHAIN_OUT_*`): the last step writes u8, or is a Sobel
/// stored as i16, or a Sobel magnitude stored as f32.
///
/// # Safety
/// `x` holds the planes' `h · w` pixels, `y` as many outputs of `OUT`'s type, both
/// 16-byte aligned if `a.row_align > 1`; `lut` holds `n_tables` tables of 256 bytes (every
/// step's and the staging's `table` names one of them, or none); the grid is `tiles_x ·
/// tiles_y` blocks per plane of [`CHAIN_BLOCK`] threads; dynamic shared memory holds
/// `chain_layout(halo, n_tables).shared_bytes`; `1 ≤ n_steps ≤ CHAIN_MAX_STEPS`, the steps'
/// extents sum to `halo`, every side at most `CHAIN_MAX_HALO`, and the last step is a Sobel
/// (magnitude) exactly when `OUT` says so, never an earlier one (and has no table).
#[inline(always)]
pub unsafe fn chain<const OUT: u32>(x: *const u8, y: *mut u8, lut: *const u8, a: &ChainArgs) {
    let b = block_idx();
    let tiles = a.tiles_x * a.tiles_y;
    let (plane, t) = (b / tiles, b % tiles);
    let (ty, tx) = (t / a.tiles_x, t % a.tiles_x);
    let ChainLayout { rows, buffer_words, .. } = chain_layout(a.halo, a.n_tables);
    let f = Frame {
        oy: (ty * CHAIN_TILE_H) as i32 - a.halo[0] as i32,
        ox: (tx * CHAIN_TILE_W) as i32 - CHAIN_SIDE as i32,
        h: a.h as i32,
        w: a.w as i32,
        rows,
    };
    let mode = BorderMode::from_code(a.border);
    let cval = a.cval as u8;
    let plane_len = a.h as usize * a.w as usize;
    // SAFETY: the plane lies in the input.
    let src = unsafe { x.add(plane as usize * plane_len) };
    let n = a.n_steps as usize;
    // SAFETY: the tables, then two buffers of `buffer_words` words (the host sized them); each
    // buffer's row 0 after its slack rows.
    let (tables, bufs): (*mut u8, *mut u32) = unsafe {
        let base: *mut u8 = dynamic_shared();
        (base, base.add((a.n_tables * CHAIN_LUT_BYTES) as usize) as *mut u32)
    };
    let slack = (CHAIN_SLACK_ABOVE * PITCH) as usize;
    // SAFETY: inside the buffers.
    let (mut cur, mut next) = unsafe { (bufs.add(slack), bufs.add(buffer_words as usize + slack)) };
    let tid = thread_idx();
    // The slack rows, zeroed: the units' reads past a region load defined (unused) words.
    let slack_words = PITCH * (CHAIN_SLACK_ABOVE + CHAIN_SLACK_BELOW);
    let mut i = tid;
    while i < 2 * slack_words {
        let (b, k) = (i / slack_words, i % slack_words);
        let above = slack as u32;
        let row_word = if k < above { k } else { rows * PITCH + k };
        // SAFETY: a slack word of buffer b.
        unsafe { *bufs.add((b * buffer_words + row_word) as usize) = 0 };
        i += CHAIN_BLOCK;
    }
    // The tables: 64 threads a table.
    let mut i = tid;
    while i < a.n_tables * CHAIN_LUT_BYTES / 4 {
        let v = crate::load_nc!(lut.wrapping_add(4 * i as usize) as *const u32, u32);
        // SAFETY: a word of the shared tables.
        unsafe { *(tables.add(4 * i as usize) as *mut u32) = v };
        i += CHAIN_BLOCK;
    }
    let stage_lut = match a.stage_table {
        0 => None,
        t => {
            // SAFETY: every thread reaches it (the staging reads the table).
            unsafe { sync_threads() };
            Some(tables.wrapping_add(((t - 1) * CHAIN_LUT_BYTES) as usize) as *const u8)
        }
    };
    let edge = f.oy < 0 || f.oy + rows as i32 > f.h || f.ox < 0 || f.ox + 4 * PITCH as i32 > f.w;
    // SAFETY: the frame's buffer; the plane's rows; the staging's table.
    unsafe { stage(cur, &f, src, a.row_align, !edge, mode, stage_lut) };
    // SAFETY: every thread reaches it.
    unsafe { sync_threads() };
    let fix = edge && mode as u32 != BorderMode::Wrap as u32;
    // The region of `cur` the next step reads, its rows [y0, y1) and words [j0, j1) (the staged
    // buffer: all of it), and the columns past the tile the later steps read, `rest`. Each
    // step's input is fixed at the image's edges first (one call site: a second made ptxas spill
    // the u8 kernel at four blocks per SM).
    let mut region = [0, rows, 0, PITCH];
    let mut rest = [a.halo[2], a.halo[3]];
    let last = n - 1;
    let mut k = 0;
    loop {
        if fix {
            // SAFETY: the block's buffer; every thread reaches the barrier.
            let rest_rows = [a.halo[0] - region[0], region[1] - (a.halo[0] + CHAIN_TILE_H)];
            unsafe {
                fix_border(
                    cur,
                    &f,
                    region,
                    [rest_rows[0], rest_rows[1], rest[0], rest[1]],
                    mode,
                    cval,
                );
                sync_threads();
            }
        }
        if k == last {
            break;
        }
        let s = step(a, k);
        let [st, sb, sl, sr] = s.extents();
        rest = [rest[0] - sl, rest[1] - sr];
        let [j0, j1] = step_words(rest);
        region = [region[0] + st, region[1] - sb, j0, j1];
        // SAFETY: distinct buffers; every computed word has both neighbours; table k.
        unsafe {
            run_step(&s, cur, next, region, tables);
            sync_threads();
        }
        core::mem::swap(&mut cur, &mut next);
        k += 1;
    }
    let s = step(a, last);
    let [j0, j1] = step_words([0, 0]);
    let tile = [a.halo[0], a.halo[0] + CHAIN_TILE_H, j0, j1];
    let (gy0, gx0) = (ty * CHAIN_TILE_H, tx * CHAIN_TILE_W);
    let out0 = plane as usize * plane_len;
    let whole_words = a.row_align > 1;
    if OUT == CHAIN_OUT_I16 || OUT == CHAIN_OUT_F32 {
        // SAFETY: as the u8 steps; the output's rows and columns checked per store.
        unsafe {
            if OUT == CHAIN_OUT_F32 {
                sobel_last::<CHAIN_OUT_F32>(&s, cur, y, &f, tile, out0, whole_words)
            } else {
                sobel_last::<CHAIN_OUT_I16>(&s, cur, y, &f, tile, out0, whole_words)
            }
        };
        return;
    }
    // SAFETY: as above.
    unsafe {
        run_step(&s, cur, next, tile, tables);
        sync_threads();
    }
    // Store the tile: lanes over its 32 words, warps over rows.
    let (lane, warp) = (tid % 32, tid / 32);
    let gx = gx0 + 4 * lane;
    let mut r = warp;
    while r < CHAIN_TILE_H {
        let gy = gy0 + r;
        if gy < a.h && gx < a.w {
            // SAFETY: the tile's word in the buffer.
            let v = unsafe { *next.add(((tile[0] + r) * PITCH + j0 + lane) as usize) };
            let o = out0 + gy as usize * a.w as usize + gx as usize;
            // SAFETY: pixel (gy, gx) of the plane and those after it in the row.
            unsafe { store_word::<CHAIN_OUT_U8>(y, o, [v, 0, 0, 0], a.w - gx, whole_words) };
        }
        r += CHAIN_BLOCK / 32;
    }
}

#[unsafe(export_name = crate::chain_kernel_name!("u8"))]
pub unsafe extern "ptx-kernel" fn chain_u8(x: *const u8, y: *mut u8, lut: *const u8, a: ChainArgs) {
    unsafe { chain::<{ crate::abi::chain::CHAIN_OUT_U8 }>(x, y, lut, &a) }
}

#[unsafe(export_name = crate::chain_kernel_name!("i16"))]
pub unsafe extern "ptx-kernel" fn chain_i16(x: *const u8, y: *mut u8, lut: *const u8, a: ChainArgs) {
    unsafe { chain::<CHAIN_OUT_I16>(x, y, lut, &a) }
}

#[unsafe(export_name = crate::chain_kernel_name!("f32"))]
pub unsafe extern "ptx-kernel" fn chain_f32(x: *const u8, y: *mut u8, lut: *const u8, a: ChainArgs) {
    unsafe { chain::<CHAIN_OUT_F32>(x, y, lut, &a) }
}

// Four blocks of 256 threads per SM (64 registers, no spills): the steps are issue-bound between
// barriers, and the fourth block keeps the schedulers fed while a block waits at one. On the H200
// (W12) the unbounded kernel took 80 registers and three blocks: 8192² 182.7 → 164.0 µs, 64 ×
// 512² 93.2 → 83.4 µs. Shared memory (44 KB a block) would allow five: at 48 registers ptxas
// spilled 84 bytes and the kernel took 148.3 µs against 107.2 (8192², strips).
crate::launch_bounds!(crate::chain_kernel_name!("i16"), 256, 4);
crate::launch_bounds!(crate::chain_kernel_name!("u8"), 256, 4);
// The magnitude's last step holds both derivatives; down strips it fits 64 registers too.
crate::launch_bounds!(crate::chain_kernel_name!("f32"), 256, 4);
