//! The warp-prefix 2D box for u8 images: one pass, every warp on its own (no block barrier), O(1)
//! work per output in both axes, outputs written coalesced straight from registers.
//!
//! Warp `(plane, strip, segment)` owns output columns `[c0, c0 + outputs)` of rows `[s0, s1)` and
//! loads the span of [`WARP_BOX_SPAN`] columns from `c0 − left` ([`warp_box_geometry`]). Lane `l`
//! holds the 4-byte word at span column `128·j + 4·l` of each group `j < 4`: every warp load reads
//! 128 contiguous bytes. Walking down the rows, each lane
//! 1. loads the words of the entering row and of the leaving row `h` rows up (issued one row
//!    ahead, so their latency hides behind the current row's work; the leaving row comes back
//!    from L2),
//! 2. updates the vertical running sums of its 16 columns: `+ entering − leaving` for the sums
//!    and the sums of squares, exact in wrapping u32;
//! 3. once `h` rows are in, turns them into the *inclusive prefix sums along the span* — a
//!    4-column scan in registers, a 5-step shuffle scan of the lane totals per group, the groups
//!    chained by the last lanes' totals — and stores them with conflict-free 16-byte shared stores
//!    into one of two buffers (alternate rows: one warp barrier per row);
//! 4. after the warp barrier, computes the outputs `x = l + 32·i` of the row as differences of two
//!    prefix entries `w` apart (consecutive lanes read consecutive words: no bank conflict; exact
//!    in wrapping u32, since the window's true sums fit) and stores them — consecutive lanes write
//!    consecutive outputs, 128 contiguous bytes per f32 store, so nothing needs staging.
//!
//! Against [`box_fused`](super::box_fused) it removes the block barriers, the `w` shared loads per
//! thread and row (two per output instead, whatever `w`), the output stages and the 64-bit shared
//! addressing; its time barely grows with the window. Cost: the span's `w − 1` halo columns are
//! loaded and summed by two warps, and at 128 registers (16 warps per SM) it is latency-bound —
//! slower than the fused kernel up to 31 columns on the H100.

use crate::abi::window::{
    BoxArgs, BoxKind, NARROW32_MAX_WINDOW, SlideIn, Sums, WARP_BOX_SPAN, WARP_BOX_WARPS, warp_box_geometry,
};
use crate::device::*;

use super::{FromAcc, box_plane, fused_outputs, narrow_moments, narrow_outputs, warp_strip};

/// Words per lane and row (groups of 128 columns).
const GROUPS: usize = (WARP_BOX_SPAN / 128) as usize;
/// Output steps per row: lane `l` writes outputs `l + 32·i`.
const STEPS: usize = (WARP_BOX_SPAN / 32) as usize;
/// Bytes of one prefix row (u32 per span column).
const ROW_BYTES: u32 = WARP_BOX_SPAN * 4;

/// Where a lane's words come from: one plane with its border, the lane's first column.
struct Source {
    plane: Plane<u8>,
    /// Image column of the lane's word in group 0 (may be negative).
    col: i32,
    /// Bit `j`: the word of group `j` lies in the row and is 4-byte aligned (a plain load).
    direct: u32,
}

impl Source {
    /// The lane's words of extended row `y` (border-mapped; the constant outside the plane in
    /// `Constant` mode).
    ///
    /// # Safety
    /// The plane holds `h · w` samples that no thread writes.
    #[inline(always)]
    unsafe fn fetch(&self, y: i32) -> [u32; GROUPS] {
        let row = self.plane.row(y);
        if let Some(q) = row
            && self.direct == (1 << GROUPS) - 1
        {
            // SAFETY: every word lies in the row, 4-byte aligned (`direct`); read-only input.
            return core::array::from_fn(|j| {
                crate::load_nc!(q.wrapping_add((self.col + 128 * j as i32) as usize) as *const u32, u32)
            });
        }
        // Constant rows and the lanes at the plane's edges (or every lane of an unaligned plane):
        // one rolled loop over the words, rotated into place, so the border mapping exists once
        // and its registers do not add to the hot path's.
        core::hint::cold_path();
        let mut w = [0u32; GROUPS];
        for j in 0..GROUPS as i32 {
            // SAFETY: row from plane.row; `direct` promises the word lies in the row, aligned.
            let v = unsafe { word_at(&self.plane, row, self.col + 128 * j, self.direct >> j & 1 != 0) };
            w = [w[1], w[2], w[3], v];
        }
        w
    }

    /// The entering row `y` and the leaving row `y − h` (zeros while the strip's first window,
    /// from `y_first`, fills).
    ///
    /// # Safety
    /// As [`Source::fetch`].
    #[inline(always)]
    unsafe fn fetch_pair(&self, y: i32, h: i32, y_first: i32) -> ([u32; GROUPS], [u32; GROUPS]) {
        // SAFETY: forwarded.
        unsafe {
            (
                self.fetch(y),
                if y - h >= y_first {
                    self.fetch(y - h)
                } else {
                    [0; GROUPS]
                },
            )
        }
    }
}

/// `+ entering − leaving` for the 16 column sums (and squares) of a lane.
#[inline(always)]
fn slide_columns(
    sums: &mut [u32; 4 * GROUPS],
    squares: Option<&mut [u32; 4 * GROUPS]>,
    enter: [u32; 4],
    leave: [u32; 4],
) {
    let byte = |w: u32, k: usize| (w >> (8 * k)) & 0xff;
    crate::unroll!(GROUPS, |j| {
        crate::unroll!(4, |k| {
            sums[4 * j + k] = sums[4 * j + k]
                .wrapping_add(byte(enter[j], k))
                .wrapping_sub(byte(leave[j], k));
        });
    });
    if let Some(q) = squares {
        crate::unroll!(GROUPS, |j| {
            crate::unroll!(4, |k| {
                let (e, l) = (byte(enter[j], k), byte(leave[j], k));
                q[4 * j + k] = q[4 * j + k].wrapping_add(e * e).wrapping_sub(l * l);
            });
        });
    }
}

/// Stores the inclusive prefix sums along the span of each of the `N` column-value sets `v[r]`
/// (lane `l` holds span columns `128·j + 4·l ..+4`) at shared address `rows[r]`: per group a
/// shuffle scan of the lane totals (the `N · GROUPS` scans interleaved, so their shuffle latencies
/// overlap), the groups chained by their last lane's inclusive total, then each lane's four
/// entries from its base (formed just before their 16-byte store). Wrapping u32: differences of
/// entries are exact wherever the true sum fits.
///
/// # Safety
/// All 32 lanes call it; each `rows[r]` addresses `WARP_BOX_SPAN` writable u32 of shared memory
/// that no lane reads until a warp barrier.
#[inline(always)]
#[allow(unused_assignments)] // the last group's carry
unsafe fn store_prefixes<const N: usize>(rows: [u32; N], v: [&[u32; 4 * GROUPS]; N], lane: u32) {
    let totals: [[u32; GROUPS]; N] = core::array::from_fn(|r| {
        core::array::from_fn(|j| {
            let c = &v[r][4 * j..4 * j + 4];
            c[0].wrapping_add(c[1]).wrapping_add(c[2]).wrapping_add(c[3])
        })
    });
    let mut inclusive = totals;
    let mut d = 1;
    while d < 32 {
        crate::unroll!(N, |r| {
            crate::unroll!(GROUPS, |j| {
                let other = shfl_up_u32(inclusive[r][j], d);
                if lane >= d {
                    inclusive[r][j] = inclusive[r][j].wrapping_add(other);
                }
            });
        });
        d <<= 1;
    }
    crate::unroll!(N, |r| {
        let mut carry = 0u32;
        crate::unroll!(GROUPS, |j| {
            let mut run = carry.wrapping_add(inclusive[r][j]).wrapping_sub(totals[r][j]);
            if j + 1 < GROUPS {
                carry = carry.wrapping_add(shfl_idx_u32(inclusive[r][j], 31));
            }
            let words = core::array::from_fn(|k| {
                run = run.wrapping_add(v[r][4 * j + k]);
                run
            });
            // SAFETY: 16-byte aligned slot 128·j + 4·lane of the row (forwarded).
            unsafe { store_shared_v4_at(rows[r] + 4 * (128 * j as u32 + 4 * lane), words) };
        });
    });
}

/// The warp-prefix box (module docs) of the u8 plane stack `x` into `o0` (and `o1` for the
/// two-output kinds).
///
/// # Safety
/// Input and outputs hold `planes · height · width` elements; the grid has at least `planes ·
/// ⌈height / strip⌉ · ⌈width / outputs⌉` warps in blocks of `WARP_BOX_WARPS` warps; `w ≤
/// WARP_BOX_MAX_WIDTH`, `h · w ≤ FUSED_MAX_WINDOW` of u8 and the sides below 2^29; dynamic shared
/// memory of `WARP_BOX_SHARED` bytes.
#[inline(always)]
pub unsafe fn warp_prefix_box<S: FromAcc<u32>, Q: FromAcc<u32>>(x: *const u8, o0: *mut S, o1: *mut Q, a: BoxArgs<u8>) {
    let kind = BoxKind::from_code(a.kind);
    let squares = kind.needs_sumsq();
    let (left, outputs) = warp_box_geometry(a.win_w, a.anchor_x);
    let Some((plane, strip, segment)) = warp_strip(&a, outputs as u64, WARP_BOX_WARPS) else {
        return; // a warp past the last strip (warp-uniform)
    };
    let c0 = segment * outputs as u64;
    let lane = lane_idx();
    let width = a.width as i32;
    let first_col = c0 as i32 - left as i32 + 4 * lane as i32;
    let aligned = (x as usize).is_multiple_of(4) && width % 4 == 0;
    let plane_len = a.height * a.width;
    let src = Source {
        // SAFETY: plane < planes.
        plane: unsafe { box_plane(x, plane, &a) },
        col: first_col,
        direct: (0..GROUPS as i32).fold(0, |bits, j| {
            let c = first_col + 128 * j;
            bits | ((aligned && c >= 0 && c + 4 <= width) as u32) << j
        }),
    };
    // SAFETY: the host sized shared memory for WARP_BOX_WARPS warps of two buffers of two rows.
    let region = shared_address(unsafe { dynamic_shared::<u32>() }) + warp_idx() * 4 * ROW_BYTES;
    let (h, ay, ax, w) = (a.win_h as i32, a.anchor_y as i32, a.anchor_x, a.win_w);
    let s0 = strip * a.strip as u64;
    let s1 = (s0 + a.strip as u64).min(a.height);
    let y_first = s0 as i32 - ay;
    // Output row s completes when row s − ay + h − 1 enters: the last is s1 − 1.
    let y_end = s1 as i32 - ay + h - 1;
    let inv32 = (a.inv_n as f32, a.inv_n2 as f32);
    let n = a.samples();
    let narrow = narrow_moments::<S, Q>(kind) && n <= NARROW32_MAX_WINDOW;
    // Byte offset of the prefix entry before lane l's first output window: slot left + l − ax − 1.
    let lo0 = 4 * (left + lane - ax - 1);
    let hi0 = lo0 + 4 * w;
    let columns = (a.width - c0).min(outputs as u64) as u32;
    let steps = columns.div_ceil(32);
    let full_steps = columns / 32;
    let out_plane = plane * plane_len + c0;
    let mut sums = [0u32; 4 * GROUPS];
    let mut sq = [0u32; 4 * GROUPS];
    // SAFETY (every fetch): the plane holds height · width read-only samples.
    let mut next = unsafe { src.fetch_pair(y_first, h, y_first) };
    let mut y = y_first;
    while y < y_end {
        slide_columns(&mut sums, squares.then_some(&mut sq), next.0, next.1);
        if y + 1 < y_end {
            // The next row's loads, in flight during this row's scans and outputs.
            next = unsafe { src.fetch_pair(y + 1, h, y_first) };
        }
        if y - y_first >= h - 1 {
            let buf = region + (y & 1) as u32 * 2 * ROW_BYTES;
            // SAFETY: every lane runs the warp-uniform branch; the buffer was last read two rows
            // ago, before the warp barrier of the previous row.
            unsafe {
                if squares {
                    store_prefixes([buf, buf + ROW_BYTES], [&sums, &sq], lane);
                } else {
                    store_prefixes([buf], [&sums], lane);
                }
                sync_warp();
            }
            let s = (y - h + 1 + ay) as u64;
            // Lane l's outputs of row s: step i writes column c0 + l + 32·i.
            let first = (out_plane + s * a.width) as usize + lane as usize;
            let (p0, p1) = (o0.wrapping_add(first), o1.wrapping_add(first));
            // Lane l's window sums of step i (prefix slots w apart, module docs).
            let window = |i: u32| {
                let (lo, hi) = (buf + lo0 + 128 * i, buf + hi0 + 128 * i);
                // SAFETY: lo and hi are span slots (warp_box_geometry) written before the warp
                // barrier.
                unsafe {
                    Sums {
                        s: load_shared_u32_at(hi).wrapping_sub(load_shared_u32_at(lo)),
                        q: if squares {
                            load_shared_u32_at(hi + ROW_BYTES).wrapping_sub(load_shared_u32_at(lo + ROW_BYTES))
                        } else {
                            0
                        },
                    }
                }
            };
            let write = |i: u32, (v0, v1): (S, Q)| {
                // SAFETY: the caller checked lane + 32·i < columns: the output lies in row s of
                // the plane, inside this warp's segment.
                unsafe {
                    p0.add(32 * i as usize).write(v0);
                    if kind.two_outputs() {
                        p1.add(32 * i as usize).write(v1);
                    }
                }
            };
            if narrow {
                // Moments in f32 from the exact u32 spread. The steps whose 32 outputs all lie in
                // the segment run unrolled (shared and global addresses as immediate offsets, the
                // loads of several steps in flight); the partial last step, if any, after them.
                let step = |i: u32| {
                    let wnd = window(i);
                    let spread = u8::narrow_spread32(wnd.s, wnd.q, n).unwrap_or(0);
                    write(i, narrow_outputs::<u8, S, Q>(wnd.s, spread, kind, inv32));
                };
                crate::unroll!(STEPS, |i| {
                    if (i as u32) < full_steps {
                        step(i as u32);
                    }
                });
                if full_steps < STEPS as u32 && lane + 32 * full_steps < columns {
                    step(full_steps);
                }
            } else {
                // Sums, or moments through f64: one rolled copy of the longer arithmetic.
                for i in 0..steps {
                    if lane + 32 * i < columns {
                        write(i, fused_outputs::<u8, S, Q>(window(i), kind, &a, inv32));
                    }
                }
            }
        }
        y += 1;
    }
}
