//! The tile van Herk: u8 max/min of windows up to 33 × 33 in one kernel, both van Herk passes
//! on a block's tile in shared memory, so the image is read once and written once (the
//! two-pass `VanHerk` writes and reads a scratch image between its passes) and every comparison
//! is a packed `max.u16x2` on two pixels ([`Held`]).
//!
//! A block of [`TILE_VH_THREADS`] owns [`TILE_VH_ROWS`] × [`TILE_VH_COLS`] outputs:
//!
//! 1. **Stage.** The input rows the tile's windows reach (`kh − 1` rows of halo) and 16 columns
//!    on each side are copied to shared memory in 16-byte chunks (`cp.async` on sm_90, border
//!    chunks border-mapped byte by byte).
//! 2. **Columns.** Lane `l` of a 64-lane group streams the word column `l` (4 pixels) down a strip
//!    of [`TILE_VH_STRIP_ROWS`] rows, van Herk/Gil-Werman over runs of at most `kh + 1` outputs
//!    (one backward suffix sweep, one forward prefix sweep; [`van_herk_strip`]: the whole strip,
//!    two halves or four quarters fully unrolled with the suffixes in registers where `kh + 1`
//!    allows, else loops); results to the middle buffer (rows of an odd number of words).
//! 3. **Rows.** Warp `w` takes columns `28 w ..` of the tile, lane `l` the rows `l`, `l + 32`,
//!    `l + 64`, `l + 96` — four pixels of one column, one word as the column phase's — and streams
//!    along the columns through the same van Herk runs; the lane's suffixes and outputs go to its
//!    own slots in the first buffer (the staged input is dead by then). Byte loads of rows an odd
//!    number of words apart: no bank conflicts.
//! 4. **Out.** Each lane transposes its outputs (4 × 4 bytes, 8 `prmt`s) into rows of the middle
//!    buffer, and lanes 0–27 of each warp store two tile rows 16 bytes each (coalesced).

use super::Args;
use super::words::{Held, LaneExtremum};
use crate::abi::filter2d::*;
use crate::device::{Pixel, Plane};
use crate::device::{block_idx, byte_perm, cp_async_16, cp_async_wait_all, dynamic_shared, sync_threads, thread_idx};

const ROWS: usize = TILE_VH_ROWS as usize;
const COLS: usize = TILE_VH_COLS as usize;
const THREADS: usize = TILE_VH_THREADS as usize;
const IN_STRIDE: usize = TILE_VH_IN_STRIDE as usize;
const MID_STRIDE: usize = TILE_VH_MID_STRIDE as usize;
const STRIP_ROWS: usize = TILE_VH_STRIP_ROWS as usize;
const STRIP_COLS: usize = TILE_VH_STRIP_COLS as usize;
const HALO: i32 = TILE_VH_HALO as i32;
/// Word columns of the staged input: the column phase's lanes per strip.
const WORD_COLS: usize = IN_STRIDE / 4;

/// 16 bytes with their alignment, so a copy through a pointer to it is one vector access.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Chunk([u32; 4]);

/// The u8 tile van Herk (module docs). Launch: one block of [`TILE_VH_THREADS`] per tile (tiles
/// across a plane, then down, then planes), [`tile_vh_smem`]`(kh)` bytes of shared memory;
/// `a.vector_rows` set when rows are whole 16-byte chunks of 16-byte-aligned buffers.
///
/// # Safety
/// `x` and `y` hold `a.planes` planes of `a.h × a.w`; the grid covers only those; `kh`, `kw` ≤
/// [`TILE_VH_MAX_WINDOW`], `ax ≤ TILE_VH_HALO`, `kw − 1 − ax ≤ TILE_VH_HALO`.
#[inline(always)]
pub unsafe fn tile_van_herk<E: LaneExtremum<T = u8>>(x: *const u8, y: *mut u8, a: &Args<u8>) {
    let across = a.w.div_ceil(COLS as u32);
    let down = a.h.div_ceil(ROWS as u32);
    let b = block_idx();
    let (tx, rest) = (b % across, b / across);
    let (ty, p) = (rest % down, rest / down);
    let (r0, c0) = ((ty as usize * ROWS) as i32, (tx as usize * COLS) as i32);
    let plane = Plane::of(x, p as u64, a);
    let t = thread_idx() as usize;
    let kh = a.kh as usize;
    let smem = unsafe { dynamic_shared::<u8>() };
    let staged = smem;
    let mid = unsafe { smem.add(tile_vh_input_bytes(a.kh) as usize) };
    let vector = a.vector_rows != 0;

    // 1. Stage rows r0 − ay … r0 − ay + ROWS + kh − 2, columns c0 − HALO … + IN_STRIDE. A
    // thread's chunk is the same 16 columns in every row: a chunk across the plane's edge
    // border-maps its columns once (`-1`: the constant).
    let q = t % (IN_STRIDE / 16);
    let col = c0 - HALO + 16 * q as i32;
    let inside = vector && col >= 0 && col + 16 <= plane.w;
    let mut cols = [0i32; 16];
    if !inside {
        crate::unroll!(16, |e| {
            cols[e] = plane.col(col + e as i32).unwrap_or(-1);
        });
    }
    let top = r0 - a.ay as i32;
    let staged_rows = ROWS + kh - 1;
    let mut tr = t / (IN_STRIDE / 16);
    let row_step = THREADS / (IN_STRIDE / 16);
    if inside && top >= 0 && top + staged_rows as i32 <= plane.h {
        // Every staged row in the plane: a running pointer, no row mapping.
        let mut src = plane
            .base
            .wrapping_add((top as usize + tr) * plane.w as usize + col as usize);
        while tr < staged_rows {
            // SAFETY: row top + tr of the plane, its 16 bytes from col inside it (`inside`).
            unsafe { cp_async_16(staged.add(tr * IN_STRIDE + 16 * q), src) };
            src = src.wrapping_add(row_step * plane.w as usize);
            tr += row_step;
        }
    }
    while tr < staged_rows {
        let row = plane.row(top + tr as i32);
        // SAFETY: tr below the staged rows, 16 bytes of the row's stride; the source lies in the
        // row when `inside`, the mapped columns below w.
        unsafe {
            let dst = staged.add(tr * IN_STRIDE + 16 * q);
            match row {
                Some(src) if inside => cp_async_16(dst, src.add(col as usize)),
                _ => {
                    let mut w = [0u32; 4];
                    crate::unroll!(16, |e| {
                        let v = match row {
                            Some(src) if cols[e] >= 0 => u8::load(src.add(cols[e] as usize)),
                            _ => plane.cval,
                        };
                        w[e / 4] |= (v as u32) << (8 * (e % 4));
                    });
                    (dst as *mut Chunk).write(Chunk(w));
                }
            }
        }
        tr += row_step;
    }
    // SAFETY: every thread reaches the barriers.
    unsafe {
        cp_async_wait_all();
        sync_threads();
    }

    // 2. Columns: output row o of the strip is the fold of staged rows o … o + kh − 1.
    {
        let wc = t % WORD_COLS;
        let strip = t / WORD_COLS;
        let src = unsafe { staged.add(strip * STRIP_ROWS * IN_STRIDE + 4 * wc) } as *const u32;
        let dst = unsafe { mid.add(strip * STRIP_ROWS * MID_STRIDE + 4 * wc) } as *mut u32;
        if r0 + ((strip * STRIP_ROWS) as i32) < plane.h {
            // SAFETY: positions below STRIP_ROWS + kh − 1 rows of the staged input, slots below
            // STRIP_ROWS rows of the middle buffer; this lane's word column only.
            unsafe {
                van_herk_strip::<E, STRIP_ROWS, { STRIP_ROWS / 2 }, { STRIP_ROWS / 4 }>(
                    kh,
                    |j| E::Held::hold::<E>(src.add(j * IN_STRIDE / 4).read()),
                    |i| dst.add(i * MID_STRIDE / 4),
                )
            };
        }
    }
    unsafe { sync_threads() };

    // 3. Rows: output column i of the warp's strip is the fold of middle columns i … i + kw − 1
    // from the strip's first window column.
    let (warp, lane) = (t / 32, t % 32);
    let slots = staged as *mut u32;
    {
        let first = STRIP_COLS * warp + (HALO - a.ax as i32) as usize;
        let row = |m: usize| unsafe { mid.add((lane + 32 * m) * MID_STRIDE + first) } as *const u8;
        let rows = [row(0), row(1), row(2), row(3)];
        // SAFETY: columns below STRIP_COLS + kw − 1 from `first` lie in the middle rows
        // (`kw − 1 − ax ≤ HALO`); slots below STRIP_COLS of this thread's.
        unsafe {
            van_herk_strip::<E, STRIP_COLS, { STRIP_COLS / 2 }, { STRIP_COLS / 4 }>(
                a.kw as usize,
                |j| E::Held::hold_bytes::<E>(rows.map(|r| r.add(j).read() as u32)),
                |i| slots.add(i * THREADS + t),
            )
        };
    }
    unsafe { sync_threads() };

    // 4. Out: the lane's 4 × STRIP_COLS outputs as rows of the middle buffer, then the tile.
    crate::unroll!(7, |g| {
        // SAFETY: this thread's slots; middle rows below ROWS, columns below COLS.
        unsafe {
            let c = [0, 1, 2, 3].map(|u| slots.add((4 * g + u) * THREADS + t).read());
            let rows = transpose4(c);
            crate::unroll!(4, |m| {
                (mid.add((lane + 32 * m) * MID_STRIDE + STRIP_COLS * warp + 4 * g) as *mut u32).write(rows[m]);
            });
        }
    });
    unsafe { sync_threads() };
    // Lanes 0 … 27 store 16 bytes each of two tile rows (14 chunks a row), a warp every eighth
    // pair of rows.
    const CHUNKS: usize = COLS / 16;
    if lane < 2 * CHUNKS {
        let (half, chunk) = (lane / CHUNKS, lane % CHUNKS);
        let c = c0 + 16 * chunk as i32;
        let whole = vector && c + 16 <= plane.w;
        let r = 2 * warp + half;
        let w = a.w as usize;
        let src0 = unsafe { mid.add(r * MID_STRIDE + 16 * chunk) } as *const u32;
        // Dereferenced only inside the plane.
        let dst0 = y.wrapping_add((p as usize * a.h as usize + r0 as usize + r) * w + c as usize);
        crate::unroll!(8, |i| {
            let rr = r0 + (r + 16 * i) as i32;
            let src = src0.wrapping_add(i * 16 * MID_STRIDE / 4);
            let dst = dst0.wrapping_add(i * 16 * w);
            if rr < plane.h {
                // SAFETY: a middle row; `dst` is row rr of the plane at column c, 16 bytes
                // inside it when `whole` (rows of whole aligned chunks), else bytes below w.
                unsafe {
                    let v = Chunk([src.read(), src.add(1).read(), src.add(2).read(), src.add(3).read()]);
                    if whole {
                        (dst as *mut Chunk).write(v);
                    } else {
                        crate::unroll!(16, |e| {
                            if c + (e as i32) < plane.w {
                                dst.add(e).write((v.0[e / 4] >> (8 * (e % 4))) as u8);
                            }
                        });
                    }
                }
            }
        });
    }
}

/// Outputs `0 … N − 1` of a lane's stream, output `i` the fold of positions `i … i + k − 1`
/// (`at(j)`, held), written to `slot(i)` (a word the stream may also use before: each run's
/// suffixes go there first). Runs of `N`, `N / 2` or `N / 4` outputs (`HALF`, `QUARTER`),
/// the longest that `k + 1` allows, each run unrolled ([`van_herk_run_n`]) but the 2 or 4 runs
/// of a strip in a loop: unrolled, their copies made the kernel's PTX 46% larger and its first
/// use (the driver's JIT) 0.15–0.33 s longer, at the same speed (H200, 15 × 15 and 31 × 31).
/// Windows below `N / 4 − 1` take runs of at most `k + 1` in loops ([`van_herk_run`]).
#[inline(always)]
unsafe fn van_herk_strip<E: LaneExtremum, const N: usize, const HALF: usize, const QUARTER: usize>(
    k: usize,
    at: impl Fn(usize) -> E::Held,
    slot: impl Fn(usize) -> *mut u32,
) {
    const { assert!(N == 2 * HALF && HALF == 2 * QUARTER) };
    // SAFETY (of every run): forwarded to the caller; runs cover disjoint outputs.
    unsafe {
        if k + 1 >= N {
            van_herk_run_n::<E, N>(k, &at, &slot);
        } else if k + 1 >= HALF {
            for r in 0..2 {
                let o = r * HALF;
                van_herk_run_n::<E, HALF>(k, &|j| at(o + j), &|i| slot(o + i));
            }
        } else if k + 1 >= QUARTER {
            for r in 0..4 {
                let o = r * QUARTER;
                van_herk_run_n::<E, QUARTER>(k, &|j| at(o + j), &|i| slot(o + i));
            }
        } else {
            let mut o0 = 0;
            while o0 < N {
                let len = (N - o0).min(k + 1);
                van_herk_run::<E>(o0, len, k, &at, &slot);
                o0 += len;
            }
        }
    }
}

/// [`van_herk_run`] of outputs `0 … N − 1` (`N ≤ k + 1`), unrolled: every position but the
/// prefix's first `k + 1 − N` a constant offset.
#[inline(always)]
unsafe fn van_herk_run_n<E: LaneExtremum, const N: usize>(
    k: usize,
    at: &impl Fn(usize) -> E::Held,
    slot: &impl Fn(usize) -> *mut u32,
) {
    let m = N - 1;
    let start = E::Held::hold::<E>(E::start_word());
    // The suffixes stay in registers, released (one word each).
    let mut suffixes = [0u32; N];
    let mut suffix = start;
    crate::unroll!(2, |hi| {
        crate::unroll!(16, |lo| {
            let n = 16 * hi + lo;
            if n < m {
                let i = m - 1 - n;
                suffix = suffix.op::<E>(at(i));
                suffixes[i] = suffix.release();
            }
        });
    });
    // Positions m … k − 2, then one per output: k − 1 + i (output 0's only when k − 1 ≥ m; at
    // k = N − 1 its window ends at m − 1, inside its suffix).
    let mut prefix = start;
    for j in m..k - 1 {
        prefix = prefix.op::<E>(at(j));
    }
    crate::unroll!(2, |hi| {
        crate::unroll!(16, |lo| {
            let i = 16 * hi + lo;
            if i < N {
                if i > 0 || k >= N {
                    prefix = prefix.op::<E>(at(i + k - 1));
                }
                let v = if i < m {
                    E::Held::hold::<E>(suffixes[i]).op::<E>(prefix)
                } else {
                    prefix
                };
                // SAFETY: the caller's slot.
                unsafe { slot(i).write(v.release()) };
            }
        });
    });
}

/// One van Herk/Gil-Werman run: outputs `o0 … o0 + len − 1` (`len ≤ k + 1`) split at `m =
/// o0 + len − 1`: output `i` is the suffix fold of positions `i … m − 1` (a backward sweep,
/// stored in the slots) with the prefix fold of `m … i + k − 1` (a forward sweep in registers).
/// `k + len − 1` positions read, three comparisons per output.
#[inline(always)]
unsafe fn van_herk_run<E: LaneExtremum>(
    o0: usize,
    len: usize,
    k: usize,
    at: &impl Fn(usize) -> E::Held,
    slot: &impl Fn(usize) -> *mut u32,
) {
    let m = o0 + len - 1;
    let start = E::Held::hold::<E>(E::start_word());
    let mut suffix = start;
    let mut i = m;
    while i > o0 {
        i -= 1;
        suffix = suffix.op::<E>(at(i));
        // SAFETY: the caller's slot.
        unsafe { slot(i).write(suffix.release()) };
    }
    let mut prefix = start;
    for j in m..o0 + k {
        prefix = prefix.op::<E>(at(j));
    }
    for i in o0..o0 + len {
        if i > o0 {
            prefix = prefix.op::<E>(at(i + k - 1));
        }
        let v = if i < m {
            // SAFETY: written by the backward sweep.
            E::Held::hold::<E>(unsafe { slot(i).read() }).op::<E>(prefix)
        } else {
            prefix
        };
        unsafe { slot(i).write(v.release()) };
    }
}

/// The 4 × 4 bytes of `c` transposed: byte `r` of word `u` becomes byte `u` of word `r`.
#[inline(always)]
fn transpose4(c: [u32; 4]) -> [u32; 4] {
    let lo01 = byte_perm(c[0], c[1], 0x5140);
    let hi01 = byte_perm(c[0], c[1], 0x7362);
    let lo23 = byte_perm(c[2], c[3], 0x5140);
    let hi23 = byte_perm(c[2], c[3], 0x7362);
    [
        byte_perm(lo01, lo23, 0x5410),
        byte_perm(lo01, lo23, 0x7632),
        byte_perm(hi01, hi23, 0x5410),
        byte_perm(hi01, hi23, 0x7632),
    ]
}
