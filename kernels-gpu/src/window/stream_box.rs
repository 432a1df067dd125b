//! The stream-rows 2D box for u8 images into f32, windows up to 17 columns wide: one pass, every
//! warp on its own (no barrier), each row's window sums formed in registers by byte dot products
//! and kept in a per-warp shared ring until the row leaves the window, O(1) work per output down
//! the columns.
//!
//! Warp `(plane, strip, segment)` owns output columns `[c, c + 256)` of rows `[s0, s1)`. Lane `l`
//! holds the 4-byte word at `c + 4·l` of group 0 and at `c + 128 + 4·l` of group 1, so every warp
//! load is 128 contiguous bytes and every warp store of a group's outputs 512 contiguous bytes.
//! Walking down the rows, each lane
//! 1. loads the words of the entering row (issued one row ahead), lanes 0, 1 and 30, 31 also the
//!    two words left and right of the warp; every 16 rows the warp asks L2 for the 16 rows 32
//!    ahead (`prefetch.global.L2`: one instruction, no register held), so these loads find their
//!    lines in L2 instead of waiting on DRAM (15 × 15 on the H100: 253.8 → 231.2 µs);
//! 2. gathers the two words either side of each of its words by `shfl.idx` (a window reaches at
//!    most 8 columns from its output), and forms the row's window sums of its 4 + 4 columns:
//!    the first window of a word by `dp4a` against byte masks (4 samples, or their squares, per
//!    instruction), the next three by sliding — one `prmt` pairs the entering and leaving
//!    samples, two `dp4a` give their difference and sum, so `Σx += d` and `Σx² += d · sum`;
//! 3. updates its 8 vertical running sums, `+ entering − leaving` row sums (exact in wrapping
//!    u32: a window's true sums fit), the leaving row's from the ring slot the entering row's
//!    then take (below);
//! 4. once `h` rows are in, forms the outputs (f32 moments from the exact u32 spread where
//!    `h · w ≤ 513`) and stores each group's four with one 16-byte store.
//!
//! The ring: each warp keeps the row sums of its last `h` rows in shared memory, one 16-byte slot
//! per lane, group and row (`Σx | Σx² << 12` packed in one word per output for windows up to 16
//! wide, so a row of 256 outputs is 1 KB; two 16-byte slots, sums then squares, at 17). A lane
//! reads back only what it wrote, so the ring needs no barrier, and the warp's 16-byte accesses
//! are 512 contiguous bytes (no bank conflicts). Forming the leaving row's sums again from the
//! input instead costs as many instructions as the entering row's, and its loads.
//!
//! One kernel per window width (`L` columns before the output, `R` after), so every byte position
//! and mask is a constant. Warps whose words and side words all lie in the plane load words
//! directly; the warps at a plane's left and right edges whose own 256 columns lie in the plane
//! load those directly and their side words through per-lane maps (two loads, and a `prmt` when
//! the row is used, give the border-extended word; the maps are computed once per lane); warps
//! cut by the plane's right edge read each word through a map. Unaligned planes, widths that are
//! not a multiple of 4 and planes narrower than 16 columns take a kernel of their own (`ANY`),
//! which gathers every byte through the border mapping: in the word kernel that path was half
//! of what the driver's JIT compiled (ptxas 13.0, 15 columns: 629 ms, 320 without it), for planes
//! few callers have.
//!
//! Outputs: the mean and variance of windows up to `NARROW32_MAX_WINDOW` samples into aligned
//! buffers (`local_mean_variance`'s case) are formed and stored inline for both groups; every
//! other kind and layout goes through one cold loop over the two groups, written once per row
//! source rather than once per group (the JIT's time again: 320 → 236 ms at 15 columns).

use crate::abi::border::border_index_i32;
use crate::abi::window::{
    BoxArgs, BoxKind, NARROW32_MAX_WINDOW, STREAM_BOX_MAX_WIDTH, STREAM_BOX_PACKED_MAX_WIDTH, STREAM_BOX_SPAN, Sums,
    stream_box_reads_words, stream_box_ring_bytes,
};
use crate::device::*;

use super::{box_plane, fused_outputs, narrow_moments, narrow_outputs, warp_strip};

/// Columns per group: lane `l` holds the word at `4·l` of each group.
const GROUP: i32 = 128;

/// Rows ahead of its loads that a warp asks L2 for (`prefetch.global.L2`, no register held):
/// the row loads one row ahead then find their lines in L2 instead of waiting on DRAM.
const PREFETCH_AHEAD: i32 = 32;

/// The warp's 256 columns of a row as L2 lines.
type Span = RowSpan<{ STREAM_BOX_SPAN as usize / 128 }>;

/// Rows one prefetch instruction covers.
const PREFETCH_ROWS: i32 = Span::ROWS_PER_PREFETCH;

/// A border-extended word of a plane of width `w ≥ 16` (a multiple of 4): bytes `sel` of the 8 at
/// column `base` (4-aligned, `base + 8 ≤ w`) of the row, or the constant.
#[derive(Clone, Copy)]
struct WordMap {
    base: i32,
    sel: u32,
    konst: bool,
}

impl WordMap {
    /// The map of the word at column `c` (4-aligned, any integer). Words at most 8 columns outside
    /// the plane map onto 4 bytes inside one aligned 8-byte window (every mode is a shift or a
    /// reversal there); words further out feed no output and read any bytes of the row.
    #[inline(always)]
    fn of(plane: &Plane<u8>, c: i32) -> WordMap {
        let m: [i32; 4] = core::array::from_fn(|i| border_index_i32(c + i as i32, plane.w, plane.mode).unwrap_or(-1));
        let lo = m[0].min(m[1]).min(m[2]).min(m[3]);
        let base = (lo & !3).min(plane.w - 8).max(0);
        let mut sel = 0;
        crate::unroll!(4, |i| {
            sel |= ((m[i] - base) as u32 & 7) << (4 * i);
        });
        WordMap {
            base,
            sel,
            konst: lo < 0,
        }
    }
}

/// A lane's place in its warp: the plane, the columns of its group-0 and group-1 words and of its
/// two side words, and whether it loads side words (lanes 0, 1: the two words left of the warp;
/// 30, 31: the two right of it).
struct Lane {
    plane: Plane<u8>,
    cols: [i32; 4],
    side: bool,
    /// The constant border's value in every byte.
    cval4: u32,
}

/// The lane's four words of a row, `$get` of each of `$at` (what locates the words in `cols`
/// order: columns or maps): the two group words on every lane, the two side words only on the
/// side lanes (zero elsewhere). A macro rather than a function taking a closure: a closure called
/// four times is not always inlined, and the gather's then passed the lane through local memory.
macro_rules! four_words {
    ($lane:expr, $at:expr, |$x:ident| $get:expr) => {{
        let at = $at;
        let (mut a, mut b) = (0u32, 0u32);
        if $lane.side {
            a = {
                let $x = at[2];
                $get
            };
            b = {
                let $x = at[3];
                $get
            };
        }
        [
            {
                let $x = at[0];
                $get
            },
            {
                let $x = at[1];
                $get
            },
            a,
            b,
        ]
    }};
}

/// How a warp reads its words of a row: `[group 0, group 1, side 0, side 1]` of extended row `y`
/// (warp-uniform choice, one specialized loop each), in two steps: `fetch` issues the loads one
/// row ahead, `words` forms the words from what they loaded when the row is used, so work that
/// waits for the loads (a border map's `prmt`) waits a row's work later.
trait RowSource {
    /// What a row's loads leave in registers until the row is used.
    type Fetched: Copy;

    /// # Safety
    /// The plane holds `h · w` samples that no thread writes.
    unsafe fn fetch(&self, y: i32) -> Self::Fetched;

    /// The row's words from its `fetch`.
    fn words(&self, f: Self::Fetched) -> [u32; 4];

    /// Asks L2 for rows `y .. y + PREFETCH_ROWS` of the warp's 256 columns (rows outside the
    /// plane skipped) where they all lie in the plane; nothing otherwise.
    ///
    /// # Safety
    /// As `fetch`.
    #[inline(always)]
    unsafe fn prefetch(&self, _y: i32) {}
}

/// Asks L2 for rows `y .. y + PREFETCH_ROWS` of the 256 columns of the warp of `l` (its group-0
/// word at `cols[0] = c_seg + 4·lane`), which lie in the plane. The span is rebuilt from the
/// lane at each call rather than kept: the row loops have no registers to spare.
///
/// # Safety
/// The warp's 256 columns lie in the plane.
#[inline(always)]
unsafe fn prefetch_span(l: &Lane, y: i32) {
    let c_seg = l.cols[0] - 4 * lane_idx() as i32;
    let span = Span {
        base: l.plane.base.wrapping_add(c_seg as usize),
        stride: l.plane.w as usize,
        rows: l.plane.h,
    };
    // SAFETY: forwarded to the caller.
    unsafe { span.prefetch_l2(y) };
}

/// Every word and side word lies in the plane (aligned): plain 4-byte loads.
struct Interior(Lane);

/// A warp at a plane's left or right edge (aligned planes of at least 16 columns, a multiple of
/// 4): each word through its map — two loads and a `prmt`, or the constant.
struct Mapped(Lane, [WordMap; 4]);

/// Unaligned planes, narrower than 16 columns or not a multiple of 4: every byte border-mapped.
struct Gather(Lane);

/// A warp at a plane's left or right edge whose own 256 columns lie in the plane (aligned planes
/// of at least 16 columns, a multiple of 4): plain loads of its own words, and the side words
/// through their maps (lanes 0, 1, 30, 31), whose `prmt` waits for the loads only when the row is
/// used (a `prmt` at the loads stalled these warps for a whole load latency every row, and a
/// block holding one finished last).
struct EdgeSides(Lane, [WordMap; 2]);

impl RowSource for EdgeSides {
    /// The own words, then each side word's two loaded words (or the constant).
    type Fetched = ([u32; 2], [u32; 4]);

    #[inline(always)]
    unsafe fn prefetch(&self, y: i32) {
        // SAFETY: EdgeSides' promise: the own 256 columns lie in the plane.
        unsafe { prefetch_span(&self.0, y) }
    }

    #[inline(always)]
    fn words(&self, (own, raw): Self::Fetched) -> [u32; 4] {
        let [m0, m1] = self.1;
        [
            own[0],
            own[1],
            byte_perm(raw[0], raw[1], m0.sel),
            byte_perm(raw[2], raw[3], m1.sel),
        ]
    }

    #[inline(always)]
    unsafe fn fetch(&self, y: i32) -> Self::Fetched {
        let l = &self.0;
        let k = l.cval4;
        let Some(q) = l.plane.row(y) else {
            return ([k; 2], [k; 4]);
        };
        // SAFETY: EdgeSides' promise: the own words lie in the row, 4-byte aligned; a map reads 8
        // bytes inside the row (WordMap::of).
        let ld = |c: i32| crate::load_nc!(q.wrapping_add(c as usize) as *const u32, u32);
        let own = [ld(l.cols[0]), ld(l.cols[1])];
        let mut raw = [k; 4];
        if l.side {
            crate::unroll!(2, |i| {
                let m = self.1[i];
                if !m.konst {
                    raw[2 * i] = ld(m.base);
                    raw[2 * i + 1] = ld(m.base + 4);
                }
            });
        }
        (own, raw)
    }
}

impl RowSource for Interior {
    type Fetched = [u32; 4];

    #[inline(always)]
    unsafe fn prefetch(&self, y: i32) {
        // SAFETY: Interior's promise: the warp's columns lie in the plane.
        unsafe { prefetch_span(&self.0, y) }
    }

    #[inline(always)]
    fn words(&self, f: [u32; 4]) -> [u32; 4] {
        f
    }

    #[inline(always)]
    unsafe fn fetch(&self, y: i32) -> [u32; 4] {
        let l = &self.0;
        let Some(q) = l.plane.row(y) else {
            return [l.cval4; 4];
        };
        // SAFETY: Interior's promise: each column lies in the row, 4-byte aligned.
        four_words!(l, l.cols, |c| {
            crate::load_nc!(q.wrapping_add(c as usize) as *const u32, u32)
        })
    }
}

impl RowSource for Mapped {
    type Fetched = [u32; 4];

    #[inline(always)]
    fn words(&self, f: [u32; 4]) -> [u32; 4] {
        f
    }

    #[inline(always)]
    unsafe fn fetch(&self, y: i32) -> [u32; 4] {
        let l = &self.0;
        let Some(q) = l.plane.row(y) else {
            return [l.cval4; 4];
        };
        // SAFETY: a map reads 8 bytes inside the row (WordMap::of).
        let ld = |c: i32| crate::load_nc!(q.wrapping_add(c as usize) as *const u32, u32);
        four_words!(l, self.1, |m| {
            if m.konst {
                l.cval4
            } else {
                byte_perm(ld(m.base), ld(m.base + 4), m.sel)
            }
        })
    }
}

impl RowSource for Gather {
    type Fetched = [u32; 4];

    #[inline(always)]
    fn words(&self, f: [u32; 4]) -> [u32; 4] {
        f
    }

    #[inline(always)]
    unsafe fn fetch(&self, y: i32) -> [u32; 4] {
        let l = &self.0;
        let row = l.plane.row(y);
        // SAFETY: row from plane.row; word_at maps every byte.
        four_words!(l, l.cols, |c| unsafe { word_at(&l.plane, row, c, false) })
    }
}

/// Each group's five words of a row around the lane's own (`[−2, −1, own, +1, +2]` words), from
/// the warp's words by `shfl.idx` rotations. The warp's 64 words run group 0 then group 1; lanes
/// 0, 1 hold words −2, −1 and lanes 30, 31 words 64, 65 as side words. `far`: the ±2 words are
/// needed (windows reaching past 4 columns; a constant where it is inlined).
#[inline(always)]
fn spans(w: [u32; 4], lane: u32, far: bool) -> [[u32; 5]; 2] {
    let [g0, g1, sa, sb] = w;
    let rot = |v: u32, d: i32| shfl_idx_u32(v, (lane as i32 + d) as u32 & 31);
    let (a_m1, b_m1, a_p1, b_p1) = (rot(g0, -1), rot(g1, -1), rot(g0, 1), rot(g1, 1));
    let first = lane == 0;
    let last = lane == 31;
    let g0_m1 = if first { sb } else { a_m1 };
    let g1_m1 = if first { a_m1 } else { b_m1 };
    let g0_p1 = if last { b_p1 } else { a_p1 };
    let g1_p1 = if last { sa } else { b_p1 };
    let (mut g0_m2, mut g1_m2, mut g0_p2, mut g1_p2) = (0, 0, 0, 0);
    if far {
        let (a_m2, b_m2, a_p2, b_p2) = (rot(g0, -2), rot(g1, -2), rot(g0, 2), rot(g1, 2));
        g0_m2 = if lane >= 2 {
            a_m2
        } else if lane == 1 {
            sb
        } else {
            sa
        };
        g1_m2 = if lane >= 2 { b_m2 } else { a_m2 };
        g0_p2 = if lane <= 29 { a_p2 } else { b_p2 };
        g1_p2 = if lane <= 29 {
            b_p2
        } else if lane == 30 {
            sa
        } else {
            sb
        };
    }
    [[g0_m2, g0_m1, g0, g0_p1, g0_p2], [g1_m2, g1_m1, g1, g1_p1, g1_p2]]
}

/// The window sums `(Σx, Σx²)` of the four columns of the middle word of `x` (bytes 8–11 of the
/// 20): window `j` covers bytes `8 + j − L ..= 8 + j + R`. The first by `dp4a` against constant
/// byte masks, the next three by sliding (module docs). Exact in wrapping u32.
#[inline(always)]
fn row_sums<const L: usize, const R: usize>(x: [u32; 5]) -> [(u32, u32); 4] {
    let (mut s, mut q) = (0u32, 0u32);
    crate::unroll!(5, |k| {
        let mut mask = 0u32;
        crate::unroll!(4, |b| {
            let t = 4 * k + b;
            if t + L >= 8 && t <= 8 + R {
                mask |= 0xff << (8 * b);
            }
        });
        if mask != 0 {
            s = dp4a_uu(x[k], mask & 0x0101_0101, s);
            let masked = if mask == u32::MAX { x[k] } else { x[k] & mask };
            q = dp4a_uu(masked, x[k], q);
        }
    });
    let mut out = [(s, q); 4];
    crate::unroll!(3, |i| {
        let j = i + 1;
        let (t_out, t_in) = (8 + j - 1 - L, 8 + j + R);
        // Byte 0: the entering sample, byte 1: the leaving one.
        let pair = byte_perm(
            x[t_in / 4],
            x[t_out / 4],
            (t_in % 4) as u32 | ((4 + t_out % 4) as u32) << 4,
        );
        let d = dp4a_us(pair, 0x0000_ff01, 0);
        let sum = dp4a_uu(pair, 0x0000_0101, 0);
        s = s.wrapping_add(d);
        q = q.wrapping_add(d.wrapping_mul(sum));
        out[j] = (s, q);
    });
    out
}

/// A lane's slots of its warp's ring (module docs): shared-window addresses.
#[derive(Clone, Copy)]
struct Ring {
    /// The lane's group-0 slot of ring row 0.
    base: u32,
    /// The slot of the current row.
    at: u32,
    /// `base` + the ring's bytes: where `at` wraps.
    end: u32,
}

impl Ring {
    /// Bytes of one warp's ring row for windows `win_w` wide: the abi's layout
    /// ([`stream_box_ring_bytes`]), group 0's slots then group 1's, each group's `Σx²` slots after
    /// its `Σx` slots when they are not packed.
    #[inline(always)]
    const fn row_bytes(win_w: usize) -> u32 {
        stream_box_ring_bytes(win_w as u32, 1) as u32
    }

    /// The current row's slot for windows `win_w` wide (a constant where it is inlined): the row
    /// sums `h` rows up (`[group][output]`, `(Σx, Σx²)`).
    ///
    /// # Safety
    /// This lane wrote the slot (`store_and_advance`) `h` rows ago.
    #[inline(always)]
    unsafe fn load(&self, win_w: usize) -> [[(u32, u32); 4]; 2] {
        let group = Ring::row_bytes(win_w) / 2;
        let mut out = [[(0, 0); 4]; 2];
        crate::unroll!(2, |g| {
            let at = self.at + g as u32 * group;
            // SAFETY: forwarded; the slots lie in the block's ring (stream_box_ring_bytes).
            if win_w <= STREAM_BOX_PACKED_MAX_WIDTH as usize {
                let p = unsafe { load_shared_v4_at(at) };
                crate::unroll!(4, |j| {
                    out[g][j] = (p[j] & 0xfff, p[j] >> 12);
                });
            } else {
                let (s, q) = unsafe { (load_shared_v4_at(at), load_shared_v4_at(at + group / 2)) };
                crate::unroll!(4, |j| {
                    out[g][j] = (s[j], q[j]);
                });
            }
        });
        out
    }

    /// Stores the entering row's sums in the current slot (windows `win_w` wide, a constant where
    /// it is inlined) and moves to the next row's.
    ///
    /// # Safety
    /// The ring holds `h` rows of this warp's slots (stream_box_ring_bytes).
    #[inline(always)]
    unsafe fn store_and_advance(&mut self, win_w: usize, sums: [[(u32, u32); 4]; 2]) {
        let group = Ring::row_bytes(win_w) / 2;
        crate::unroll!(2, |g| {
            let at = self.at + g as u32 * group;
            let v = sums[g];
            // SAFETY: forwarded.
            unsafe {
                if win_w <= STREAM_BOX_PACKED_MAX_WIDTH as usize {
                    store_shared_v4_at(at, v.map(|(s, q)| s | q << 12));
                } else {
                    store_shared_v4_at(at, v.map(|(s, _)| s));
                    store_shared_v4_at(at + group / 2, v.map(|(_, q)| q));
                }
            }
        });
        self.at += Ring::row_bytes(win_w);
        if self.at == self.end {
            self.at = self.base;
        }
    }
}

/// The stream-rows box (module docs) of the u8 plane stack `x` into `o0` (and `o1` for the
/// two-output kinds), for windows `L + 1 + R` columns wide.
///
/// # Safety
/// Input and outputs hold `planes · height · width` elements; the grid has at least `planes ·
/// ⌈height / strip⌉ · ⌈width / 256⌉` warps in blocks of whole warps (at most `STREAM_BOX_WARPS`),
/// each block with `stream_box_ring_bytes(w, h)` of dynamic shared memory per warp; `win_w = L +
/// 1 + R`, `anchor_x = L`, `h · w ≤ FUSED_MAX_WINDOW` of u8 and the sides below 2^29.
#[inline(always)]
pub unsafe fn stream_box<const L: usize, const R: usize, const ANY: bool>(
    x: *const u8,
    o0: *mut f32,
    o1: *mut f32,
    a: BoxArgs<u8>,
) {
    let Some((plane, strip, segment)) = warp_strip(&a, STREAM_BOX_SPAN as u64, block_dim() / 32) else {
        return; // a warp past the last strip (warp-uniform)
    };
    let lane = lane_idx();
    let width = a.width as i32;
    let c_seg = (segment * STREAM_BOX_SPAN as u64) as i32;
    let plane_len = a.height * a.width;
    // SAFETY: plane < planes.
    let pl = unsafe { box_plane(x, plane, &a) };
    let fast = stream_box_reads_words(x as u64, a.width);
    let c0 = c_seg + 4 * lane as i32;
    let cols = if lane < 16 {
        [c0, c0 + GROUP, c_seg - 8, c_seg - 4]
    } else {
        [c0, c0 + GROUP, c_seg + 2 * GROUP, c_seg + 2 * GROUP + 4]
    };
    let me = Lane {
        plane: pl,
        cols,
        side: !(2..30).contains(&lane),
        cval4: a.cval as u32 * 0x0101_0101,
    };
    let row_bytes = Ring::row_bytes(L + 1 + R);
    // SAFETY: the block's dynamic shared memory is its warps' rings.
    let shared = shared_address(unsafe { dynamic_shared::<u8>() });
    let base = shared + warp_idx() * a.win_h * row_bytes + 16 * lane;
    let strip = Strip {
        plane: plane * plane_len,
        c0,
        lane,
        fast,
        first: strip * a.strip as u64,
        ring: Ring {
            base,
            at: base,
            end: base + a.win_h * row_bytes,
        },
    };
    // SAFETY (all four): forwarded; each source's promise is the condition that picks it.
    unsafe {
        if ANY {
            run_strip::<L, R, _>(Gather(me), o0, o1, &a, strip);
        } else if !fast {
            // The host launches the word kernel on such planes only by mistake.
            core::hint::cold_path();
            trap();
        } else if c_seg >= 8 && c_seg + STREAM_BOX_SPAN as i32 + 8 <= width {
            run_strip::<L, R, _>(Interior(me), o0, o1, &a, strip);
        } else if c_seg + STREAM_BOX_SPAN as i32 <= width {
            let maps = [WordMap::of(&pl, me.cols[2]), WordMap::of(&pl, me.cols[3])];
            run_strip::<L, R, _>(EdgeSides(me, maps), o0, o1, &a, strip);
        } else {
            let maps = me.cols.map(|c| WordMap::of(&pl, c));
            run_strip::<L, R, _>(Mapped(me, maps), o0, o1, &a, strip);
        }
    }
}

/// A warp's strip: the plane's first output element, the lane's group-0 column, whether the
/// plane takes the direct loads (and so 16-byte stores), the strip's first output row, the lane's
/// ring.
#[derive(Clone, Copy)]
struct Strip {
    plane: u64,
    c0: i32,
    lane: u32,
    fast: bool,
    first: u64,
    ring: Ring,
}

/// The row loop of [`stream_box`] over one strip, words from `src`.
///
/// # Safety
/// As [`stream_box`]; `src` reads the warp's plane.
#[inline(always)]
unsafe fn run_strip<const L: usize, const R: usize, S: RowSource>(
    src: S,
    o0: *mut f32,
    o1: *mut f32,
    a: &BoxArgs<u8>,
    st: Strip,
) {
    let kind = BoxKind::from_code(a.kind);
    let width = a.width as i32;
    let Strip { c0, lane, .. } = st;
    let (h, ay) = (a.win_h as i32, a.anchor_y as i32);
    let s0 = st.first;
    let s1 = (s0 + a.strip as u64).min(a.height);
    let y_first = s0 as i32 - ay;
    // Output row s completes when row s − ay + h − 1 enters: the last is s1 − 1.
    let y_end = s1 as i32 - ay + h - 1;
    let inv32 = (a.inv_n as f32, a.inv_n2 as f32);
    let n = a.samples();
    let narrow = narrow_moments::<f32, f32>(kind) && n <= NARROW32_MAX_WINDOW;
    // Outputs formed in a few instructions each: f32 moments from the exact spread, or the sums
    // themselves (exact in f32 below 2^24, one rounding above); wider moments go through f64.
    let light = narrow || matches!(kind, BoxKind::Sum | BoxKind::SumSumSq);
    let vector_out = st.fast && (o0 as usize).is_multiple_of(16) && (o1 as usize).is_multiple_of(16);
    let mean_var = vector_out && narrow && kind == BoxKind::MeanVar;
    let out_plane = st.plane;
    const { assert!(L + 1 + R <= STREAM_BOX_MAX_WIDTH as usize) };
    let mut ring = st.ring;
    let mut sums = [Sums::<u32, u32> { s: 0, q: 0 }; 8];
    // SAFETY (every fetch): the plane holds height · width read-only samples.
    let mut next = unsafe { src.fetch(y_first) };
    let mut y = y_first;
    let mut t = 0;
    while t < PREFETCH_AHEAD {
        // SAFETY: the plane's rows.
        unsafe { src.prefetch(y_first + t) };
        t += PREFETCH_ROWS;
    }
    while y < y_end {
        let enter = next;
        if ((y - y_first) as u32).is_multiple_of(PREFETCH_ROWS as u32) {
            // SAFETY: as above.
            unsafe { src.prefetch(y + PREFETCH_AHEAD) };
        }
        if y + 1 < y_end {
            // The next row's loads, in flight during this row's sums and outputs (loads two or
            // three rows ahead measured slower on the H100).
            next = unsafe { src.fetch(y + 1) };
        }
        // SAFETY: the slot of row y − h, written h rows ago (read only once it was).
        let leave = (y - h >= y_first).then(|| unsafe { ring.load(L + 1 + R) });
        let x = spans(src.words(enter), lane, L > 4 || R > 4);
        let row = [row_sums::<L, R>(x[0]), row_sums::<L, R>(x[1])];
        crate::unroll!(2, |g| {
            crate::unroll!(4, |j| {
                let v = &mut sums[4 * g + j];
                let (s_out, q_out) = match leave {
                    Some(l) => l[g][j],
                    None => (0, 0),
                };
                v.s = v.s.wrapping_add(row[g][j].0).wrapping_sub(s_out);
                v.q = v.q.wrapping_add(row[g][j].1).wrapping_sub(q_out);
            });
        });
        // SAFETY: the ring holds h rows of the lane's slots (the launch's shared memory).
        unsafe { ring.store_and_advance(L + 1 + R, row) };
        if y - y_first >= h - 1 {
            let s = (y - h + 1 + ay) as u64;
            let row = out_plane + s * a.width;
            if mean_var {
                // The hot case, written out: mean and variance in f32 from the exact spread (as
                // narrow_outputs), both groups.
                crate::unroll!(2, |g| {
                    let c = c0 + g as i32 * GROUP;
                    if c < width {
                        let at = (row + c as u64) as usize;
                        let (mut m, mut v) = ([0u32; 4], [0u32; 4]);
                        crate::unroll!(4, |j| {
                            let w = sums[4 * g + j];
                            let spread = w.q.wrapping_mul(n as u32).wrapping_sub(w.s.wrapping_mul(w.s));
                            m[j] = (w.s as f32 * inv32.0).to_bits();
                            v[j] = (spread as f32 * inv32.1).to_bits();
                        });
                        // SAFETY: columns c .. c + 4 of output row s of the plane (the width is a
                        // multiple of 4: mean_var implies vector_out); 16-byte aligned
                        // (vector_out: aligned buffers, c a multiple of 4).
                        unsafe {
                            store_v4_streaming(o0.add(at) as *mut [u32; 4], m);
                            store_v4_streaming(o1.add(at) as *mut [u32; 4], v);
                        }
                    }
                });
            } else {
                core::hint::cold_path();
                // A loop, not unrolled: this code once per row source rather than per group.
                for g in 0..2 {
                    let c = c0 + g * GROUP;
                    let at = (row + c as u64) as usize;
                    let group: [Sums<u32, u32>; 4] =
                        core::array::from_fn(|j| if g == 0 { sums[j] } else { sums[4 + j] });
                    if vector_out && light && c + 4 <= width {
                        let v: [(f32, f32); 4] = core::array::from_fn(|j| {
                            let w = group[j];
                            if narrow {
                                let spread = w.q.wrapping_mul(n as u32).wrapping_sub(w.s.wrapping_mul(w.s));
                                narrow_outputs::<u8, f32, f32>(w.s, spread, kind, inv32)
                            } else {
                                (w.s as f32, w.q as f32)
                            }
                        });
                        // SAFETY: columns c .. c + 4 of output row s of the plane; 16-byte aligned
                        // (vector_out: aligned buffers, width a multiple of 4, c a multiple of 4).
                        unsafe {
                            store_v4_streaming(o0.add(at) as *mut [u32; 4], v.map(|p| p.0.to_bits()));
                            if kind.two_outputs() {
                                store_v4_streaming(o1.add(at) as *mut [u32; 4], v.map(|p| p.1.to_bits()));
                            }
                        }
                    } else if c < width {
                        crate::unroll!(4, |j| {
                            if c + (j as i32) < width {
                                let (v0, v1) = fused_outputs::<u8, f32, f32>(group[j], kind, a, inv32);
                                // SAFETY: column c + j < width of output row s of the plane.
                                unsafe {
                                    o0.add(at + j).write(v0);
                                    if kind.two_outputs() {
                                        o1.add(at + j).write(v1);
                                    }
                                }
                            }
                        });
                    }
                }
            }
        }
        y += 1;
    }
}
