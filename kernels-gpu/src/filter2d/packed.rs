//! The word tile: 3 × 3 and 5 × 5 filters of u8 images on packed words. Each lane owns 16 bytes
//! (four 4-byte words) of a few output rows; it loads all its rows' words at once, filters them in
//! registers with the pixels kept packed, and stores whole words.
//!
//! - Max/min ([`LaneOp`]) go **down first**: each row's words are split once into the even and
//!   odd pixels' 16-bit lanes, every lane word is reduced over the rows (van Herk over blocks of
//!   `K` rows, [`sliding_lanes`]), and only the output rows are filtered across.
//! - The linear filters ([`AcrossDown`]: Gaussian, Sobel) go **across first**, every row then
//!   every output row down, two pixels per 32-bit add.

use super::*;

/// A `K × K` filter of u8 images computed on packed words: each lane owns `P` 4-byte words (four
/// neighbouring pixels each) of `R` output rows.
pub trait WordFilter<const K: usize>: Sized {
    type Out: Pixel;
    /// Words of output per word of input (the output element's size).
    const OUT_WORDS: usize;
    /// Output rows `0..R` of a lane's `P` words (`P · OUT_WORDS` words each, packed as the
    /// output lies in memory) from its `R + K − 1` rows of words and the words beside them,
    /// each handed to `emit(i, row)` as soon as it is known (its store then frees its registers
    /// while the later rows are filtered).
    fn tile<const P: usize, const R: usize>(rows: &TileRows<P>, emit: impl FnMut(usize, &[u32; 8]));
    /// Whether the warp splits its index into its tile with two integer divisions
    /// ([`warp_tile_origin_divided`]) rather than the host-built dividers. Measured per filter:
    /// with the dividers ptxas gave the axis-1 Sobel tile 83 registers instead of 96 and a body
    /// that ran 8% slower on the H100 (86.5 → 93.7 µs, u8 8192²), while every other tile gained
    /// 2–4%; once the word-by-word path moved to its own kernel, the axis-0 Sobel tile too ran
    /// faster divided (89.3–89.6 → 86.3–86.4 µs, same call).
    const DIVIDED_ORIGIN: bool = false;
}

/// A word-tile lane's input, by row position: its `P` words (`own`), the word before them
/// (`left`: bytes 2 and 3 are the two pixels before `own`) and the word after them (`right`:
/// bytes 0 and 1 are the two pixels after).
pub struct TileRows<const P: usize> {
    own: [[u32; P]; ROWS_CAP],
    left: [u32; ROWS_CAP],
    right: [u32; ROWS_CAP],
}

impl<const P: usize> TileRows<P> {
    #[inline(always)]
    fn new() -> TileRows<P> {
        TileRows {
            own: [[0; P]; ROWS_CAP],
            left: [0; ROWS_CAP],
            right: [0; ROWS_CAP],
        }
    }
}

/// Row positions a word-tile thread can hold: `R + K − 1 ≤ WORD_TILE_MAX_ROWS + 4`.
const ROWS_CAP: usize = WORD_TILE_MAX_ROWS as usize + 4;
/// Output rows a word-tile thread can hold.
const OUT_ROWS_CAP: usize = WORD_TILE_MAX_ROWS as usize;

// ---------------------------------------------------------------------------------------------
// Max and min: down first
// ---------------------------------------------------------------------------------------------

/// Max/min of the 16-bit lanes of two lane words ([`split_lane_words`]): of *biased* pixels,
/// each lane `2^15 + v` (`v` < 256), or on sm_90 of pixels in each lane's high byte; the result
/// is in the same form.
pub trait LaneOp {
    fn lanes(a: u32, b: u32) -> u32;
}

/// `a ≥ b` in each 16-bit lane of two words of biased pixels: `0xffff` or `0` per lane.
/// `a − b + 2^15` keeps each lane in `[2^15 − 255, 2^15 + 255]` (no borrow crosses a lane) and
/// its bit 15 is the answer; one `prmt` replicates bits 15 and 31 (selector nibbles with the
/// sign bit set) over their lanes. The select then folds into one `lop3`: three instructions
/// per two pixels where sm_70 PTX has no packed 16-bit max (`vmax2` costs about seven on sm_90);
/// sm_90 builds use `max.u16x2`, one.
#[cfg(not(target_feature = "sm_90"))]
#[inline(always)]
fn lanes_at_least(a: u32, b: u32) -> u32 {
    byte_perm(a.wrapping_sub(b).wrapping_add(0x8000_8000), 0, 0xbb99)
}

impl LaneOp for Max<u8> {
    #[inline(always)]
    fn lanes(a: u32, b: u32) -> u32 {
        #[cfg(target_feature = "sm_90")]
        return max_u16x2(a, b);
        #[cfg(not(target_feature = "sm_90"))]
        {
            let m = lanes_at_least(a, b);
            (a & m) | (b & !m)
        }
    }
}
impl LaneOp for Min<u8> {
    #[inline(always)]
    fn lanes(a: u32, b: u32) -> u32 {
        #[cfg(target_feature = "sm_90")]
        return min_u16x2(a, b);
        #[cfg(not(target_feature = "sm_90"))]
        {
            let m = lanes_at_least(a, b);
            (b & m) | (a & !m)
        }
    }
}

/// The even pixels (bytes 0, 2) and the odd pixels (bytes 1, 3) of a word, biased into the
/// 16-bit lanes of two words: `[2^15 + b0, 2^15 + b2]`, `[2^15 + b1, 2^15 + b3]`. One `prmt`
/// each, the bias bytes taken from a constant.
#[cfg(not(target_feature = "sm_90"))]
#[inline(always)]
pub fn split_lane_words(w: u32) -> [u32; 2] {
    [byte_perm(w, 0x8080_8080, 0x4240), byte_perm(w, 0x8080_8080, 0x4341)]
}

/// sm_90: [`high_byte_lanes`] — `max.u16x2` needs no bias, so one shift per word where the
/// biased split takes two `prmt`.
#[cfg(target_feature = "sm_90")]
#[inline(always)]
pub fn split_lane_words(w: u32) -> [u32; 2] {
    high_byte_lanes(w)
}

/// The word of pixels whose even and odd pixels are in the lane words `even` and `odd` (the
/// inverse of [`split_lane_words`]): one `prmt`.
#[inline(always)]
pub fn join_lane_words(even: u32, odd: u32) -> u32 {
    #[cfg(target_feature = "sm_90")]
    return join_high_byte_lanes(even, odd);
    #[cfg(not(target_feature = "sm_90"))]
    byte_perm(even, odd, 0x6240)
}

/// The `R` windows of `K` consecutive values of `v[0 .. R + K − 1]` (lane words), by van
/// Herk/Gil-Werman over blocks of `K`: window `i` is the fold of its block's suffix from `i` and
/// the next block's prefix up to `i + K − 1`. `K + 2R − 4` lane operations for `R ≤ K + 1`
/// (9 for `K = 5`, `R = 4`; 6 for `K = 3`) where one window at a time takes `R (K − 1)`.
#[allow(unconditional_panic)]
#[inline(always)]
fn sliding_lanes<E: LaneOp, const K: usize, const R: usize>(v: &[u32; ROWS_CAP]) -> [u32; OUT_ROWS_CAP] {
    let n = R + K - 1;
    let mut suffix = [0u32; ROWS_CAP];
    crate::unroll!(ROWS_CAP, |u| {
        let t = ROWS_CAP - 1 - u;
        if t < n {
            suffix[t] = if (t + 1).is_multiple_of(K) || t + 1 == n {
                v[t]
            } else {
                E::lanes(v[t], suffix[t + 1])
            };
        }
    });
    let mut prefix = [0u32; ROWS_CAP];
    crate::unroll!(ROWS_CAP, |t| {
        if t < n {
            prefix[t] = if t.is_multiple_of(K) {
                v[t]
            } else {
                E::lanes(prefix[t - 1], v[t])
            };
        }
    });
    let mut out = [0u32; OUT_ROWS_CAP];
    crate::unroll!(OUT_ROWS_CAP, |i| {
        if i < R {
            out[i] = if i.is_multiple_of(K) {
                suffix[i]
            } else {
                E::lanes(suffix[i], prefix[i + K - 1])
            };
        }
    });
    out
}

/// Max/min down first. Each row position's `P` words, and one word of the two pixels each side
/// (`[l2, l3, r0, r1]`), are split into even/odd lane words (`2P + 2`, [`split_lane_words`]); each lane word
/// is reduced down its `R + K − 1` rows to the `R` windows ([`sliding_lanes`]); then each output
/// row is reduced across, per word: the pair `op(even, odd)` and the neighbours one and two
/// pixels away from `prmt`s of the adjacent lane words, `K` lane operations, and one `prmt` to
/// interleave the bytes back. Down first shares the vertical work between the overlapping
/// windows and filters only `R` rows across instead of `R + K − 1`. The kernel is bound by
/// integer issue, so this is its time: on the H100 (u8 8192², same calls) the 5 × 5 dilation went
/// from 123.3–123.6 to 88.6–89.6 µs and the 3 × 3 from 74.5–75.1 to 70.1–70.7 µs.
impl<E: LaneOp, const K: usize> WordFilter<K> for E {
    type Out = u8;
    const OUT_WORDS: usize = 1;
    #[allow(unconditional_panic)]
    #[inline(always)]
    fn tile<const P: usize, const R: usize>(rows: &TileRows<P>, mut emit: impl FnMut(usize, &[u32; 8])) {
        // Lane words 2q and 2q + 1: the even and odd pixels of word q; 2P and 2P + 1: those of
        // the side word.
        const LANE_WORDS_CAP: usize = 10;
        let mut down = [[0u32; OUT_ROWS_CAP]; LANE_WORDS_CAP];
        crate::unroll!(LANE_WORDS_CAP, |c| {
            if c < 2 * P + 2 {
                let mut v = [0u32; ROWS_CAP];
                crate::unroll!(ROWS_CAP, |j| {
                    if j < R + K - 1 {
                        let w = if c < 2 * P {
                            rows.own[j][c / 2]
                        } else {
                            byte_perm(rows.left[j], rows.right[j], 0x5432)
                        };
                        v[j] = split_lane_words(w)[c % 2];
                    }
                });
                down[c] = sliding_lanes::<E, K, R>(&v);
            }
        });
        crate::unroll!(OUT_ROWS_CAP, |i| {
            if i < R {
                let mut out = [0u32; 8];
                let (side_even, side_odd) = (down[2 * P][i], down[2 * P + 1][i]);
                crate::unroll!(P, |q| {
                    let (even, odd) = (down[2 * q][i], down[2 * q + 1][i]);
                    // The previous word's lanes (its high lane is beside ours) and the next
                    // word's (its low lane is).
                    let (even_prev, odd_prev) = if q == 0 {
                        (side_even << 16, side_odd << 16)
                    } else {
                        (down[2 * q - 2][i], down[2 * q - 1][i])
                    };
                    let (even_next, odd_next) = if q + 1 == P {
                        (side_even >> 16, side_odd >> 16)
                    } else {
                        (down[2 * q + 2][i], down[2 * q + 3][i])
                    };
                    let pair = E::lanes(even, odd);
                    // [v−1, v1] and [v2, v4]: the pixels one before the even ones, one after the odd.
                    let (one_before, one_after) = (funnel16(odd_prev, odd), funnel16(even, even_next));
                    let [e, o] = if K == 3 {
                        [E::lanes(pair, one_before), E::lanes(pair, one_after)]
                    } else {
                        // [v−2, v0] and [v3, v5]: two before the even pixels, two after the odd.
                        let core = E::lanes(E::lanes(pair, one_before), one_after);
                        [
                            E::lanes(core, funnel16(even_prev, even)),
                            E::lanes(core, funnel16(odd, odd_next)),
                        ]
                    };
                    out[q] = join_lane_words(e, o);
                });
                emit(i, &out);
            }
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Linear filters: across first
// ---------------------------------------------------------------------------------------------

/// A separable linear 3 × 3 filter on packed words, computed across first: `across` filters one
/// row from a word and its neighbours (`left` ends with the pixel before `own`, `right` starts
/// with the one after it); `down` combines three rows' results, top to bottom, into the four
/// outputs packed as the output type lies in memory (`OUT_WORDS` words).
pub trait AcrossDown {
    type Mid: Copy;
    type Out: Pixel;
    const OUT_WORDS: usize;
    fn across(left: u32, own: u32, right: u32) -> Self::Mid;
    fn down(m: [Self::Mid; 3]) -> [u32; 2];
}

/// Every row position's `P` words across, then every output row down.
#[inline(always)]
fn across_then_down<F: AcrossDown, const P: usize, const R: usize>(
    rows: &TileRows<P>,
    mut emit: impl FnMut(usize, &[u32; 8]),
) {
    let across = |j: usize| -> [F::Mid; P] {
        core::array::from_fn(|q| {
            let l = if q == 0 { rows.left[j] } else { rows.own[j][q - 1] };
            let r = if q + 1 == P { rows.right[j] } else { rows.own[j][q + 1] };
            F::across(l, rows.own[j][q], r)
        })
    };
    let mut mid = [across(0); ROWS_CAP];
    crate::unroll!(ROWS_CAP, |j| {
        if j > 0 && j < R + 2 {
            mid[j] = across(j);
        }
    });
    crate::unroll!(OUT_ROWS_CAP, |i| {
        if i < R {
            let mut out = [0u32; 8];
            crate::unroll!(P, |q| {
                let o = F::down([mid[i][q], mid[i + 1][q], mid[i + 2][q]]);
                crate::unroll!(2, |e| {
                    if e < F::OUT_WORDS {
                        out[q * F::OUT_WORDS + e] = o[e];
                    }
                });
            });
            emit(i, &out);
        }
    });
}

macro_rules! across_down_word_filters {
    ($($t:ty => $divided:literal),*) => {$(
        impl WordFilter<3> for $t {
            type Out = <$t as AcrossDown>::Out;
            const OUT_WORDS: usize = <$t as AcrossDown>::OUT_WORDS;
            const DIVIDED_ORIGIN: bool = $divided;
            #[inline(always)]
            fn tile<const P: usize, const R: usize>(rows: &TileRows<P>, emit: impl FnMut(usize, &[u32; 8])) {
                across_then_down::<Self, P, R>(rows, emit)
            }
        }
    )*};
}
across_down_word_filters!(Gauss121<u8, u8> => false, Sobel0<u8, i16> => true, Sobel1<u8, i16> => true);

/// The even pixels (bytes 0, 2) and the odd pixels (bytes 1, 3) of a word, each zero-extended
/// into the 16-bit lanes of a word: `[b0, b2]`, `[b1, b3]`.
#[inline(always)]
fn split_lanes(w: u32) -> (u32, u32) {
    (w & 0x00ff_00ff, (w >> 8) & 0x00ff_00ff)
}

/// The linear 3 × 3 filters work on two pixels per 32-bit add: the even and the odd pixels of
/// a word in the 16-bit lanes of two words, every partial sum below 2^16 so no carry crosses a
/// lane. The neighbours one pixel away come from `byte_perm`: `[l3, b1]` (odd lanes shifted
/// right, with the last pixel of `left`) and `[b2, r0]` (even lanes shifted left, with the first
/// pixel of `right`).
#[inline(always)]
fn lanes_with_neighbours(left: u32, own: u32, right: u32) -> [u32; 4] {
    let (even, odd) = split_lanes(own);
    let odd_prev = byte_perm(odd, left, 0x1017);
    let even_next = byte_perm(even, right, 0x1412);
    [odd_prev, even, odd, even_next]
}

/// `[1 2 1]` along the row: `[h0, h2]` and `[h1, h3]`, each at most 1020.
#[inline(always)]
fn smooth_across(left: u32, own: u32, right: u32) -> [u32; 2] {
    let [odd_prev, even, odd, even_next] = lanes_with_neighbours(left, own, right);
    [odd_prev + 2 * even + odd, even + 2 * odd + even_next]
}

/// `[1 2 1]` down the column of two lane words, plus `bias` in each lane.
#[inline(always)]
fn smooth_down(m: [u32; 3], bias: u32) -> u32 {
    m[0] + 2 * m[1] + m[2] + bias
}

/// Two words of 16-bit lanes holding `v + 2^15` (`v` in `±2^15`): the signed values as i16,
/// interleaved even/odd into the memory order of four i16 pixels.
#[inline(always)]
fn signed_pairs(even: u32, odd: u32) -> [u32; 2] {
    let (e, o) = (even ^ 0x8000_8000, odd ^ 0x8000_8000);
    [byte_perm(e, o, 0x5410), byte_perm(e, o, 0x7632)]
}

impl AcrossDown for Gauss121<u8, u8> {
    type Mid = [u32; 2];
    type Out = u8;
    const OUT_WORDS: usize = 1;
    #[inline(always)]
    fn across(left: u32, own: u32, right: u32) -> [u32; 2] {
        smooth_across(left, own, right)
    }
    /// `(Σ + 8) >> 4` in each lane (Σ ≤ 4080), the even results to bytes 0, 2 and the odd ones
    /// to bytes 1, 3.
    #[inline(always)]
    fn down(m: [[u32; 2]; 3]) -> [u32; 2] {
        let even = smooth_down([m[0][0], m[1][0], m[2][0]], 0x0008_0008);
        let odd = smooth_down([m[0][1], m[1][1], m[2][1]], 0x0008_0008);
        [((even >> 4) & 0x00ff_00ff) | ((odd << 4) & 0xff00_ff00), 0]
    }
}

impl AcrossDown for Sobel0<u8, i16> {
    type Mid = [u32; 2];
    type Out = i16;
    const OUT_WORDS: usize = 2;
    #[inline(always)]
    fn across(left: u32, own: u32, right: u32) -> [u32; 2] {
        smooth_across(left, own, right)
    }
    /// Row below minus row above, `+ 2^15` in each lane first so no lane borrows.
    #[inline(always)]
    fn down(m: [[u32; 2]; 3]) -> [u32; 2] {
        let d = |k: usize| m[2][k] + 0x8000_8000 - m[0][k];
        signed_pairs(d(0), d(1))
    }
}

impl AcrossDown for Sobel1<u8, i16> {
    type Mid = [u32; 2];
    type Out = i16;
    const OUT_WORDS: usize = 2;
    /// Right minus left neighbour, `+ 256` in each lane (so the lanes stay non-negative).
    #[inline(always)]
    fn across(left: u32, own: u32, right: u32) -> [u32; 2] {
        let [odd_prev, even, odd, even_next] = lanes_with_neighbours(left, own, right);
        [odd + 0x0100_0100 - odd_prev, even_next + 0x0100_0100 - even]
    }
    /// `[1 2 1]` of the biased differences carries `4 · 256`: the bias `2^15 − 1024` makes it
    /// `2^15`.
    #[inline(always)]
    fn down(m: [[u32; 2]; 3]) -> [u32; 2] {
        let s = |k: usize| smooth_down([m[0][k], m[1][k], m[2][k]], 0x7c00_7c00);
        signed_pairs(s(0), s(1))
    }
}

// ---------------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------------

/// `P` words (`P` = 1, 2 or 4) from `p` with one load instruction.
///
/// # Safety
/// `4 · P` readable bytes at `p`, aligned to `4 · P`, not written during the kernel.
#[inline(always)]
unsafe fn load_words<const P: usize>(p: *const u8) -> [u32; P] {
    let mut w = [0u32; P];
    match P {
        // SAFETY (all three): forwarded to the caller.
        1 => w[0] = crate::load_nc!(p as *const u32, u32),
        2 => w.copy_from_slice(&unsafe { load_nc_v2(p as *const [u32; 2]) }),
        _ => w.copy_from_slice(&unsafe { load_nc_v4(p as *const [u32; 4]) }),
    }
    w
}

/// Stores the first `n` of `words` (`n` = 1, 2, 4 or 8) at `dst` with 4-, 8- or 16-byte stores,
/// if `keep` (predicated stores, [`store_words_if`]).
///
/// # Safety
/// If `keep`, `4 · n` writable bytes at `dst`, aligned to `min(4 · n, 16)`.
#[inline(always)]
unsafe fn store_words(dst: *mut u32, words: &[u32; 8], n: usize, keep: bool) {
    // SAFETY: forwarded to the caller.
    unsafe {
        match n {
            1 => store_words_if::<1>(dst, [words[0]], keep),
            2 => store_words_if::<2>(dst, [words[0], words[1]], keep),
            _ => {
                crate::unroll!(2, |h| {
                    if 4 * h < n {
                        let q = [words[4 * h], words[4 * h + 1], words[4 * h + 2], words[4 * h + 3]];
                        store_words_if::<4>(dst.wrapping_add(4 * h), q, keep);
                    }
                });
            }
        }
    }
}

/// The word tile: each warp owns 32 × `P` words (`word_tile_cols(P)` pixels) of `R` output rows,
/// a lane `P` neighbouring words. A lane first issues the loads of all `R + K − 1` row positions of
/// its words (one vector load per row: the warp reads `128 · P` contiguous bytes; the words beside
/// them are loaded too, see [`word_tile_interior`]), then filters them as its [`WordFilter`] says
/// (max/min down first, the linear filters across first) and stores its packed outputs with one
/// streaming vector store per row ([`store_words_if`]). Registers only; pixels stay packed, and
/// the linear filters add two pixels per instruction. A warp first asks L2 for the output rows of
/// the tile `a.prefetch_rows` rows below its own (`prefetch.global.L2`), the tile a warp starting
/// a little later will filter: that warp's loads then wait on L2 rather than DRAM.
///
/// This kernel takes rows of whole `4·P`-byte vectors only (the host launches it for widths that
/// are multiples of `4·P` and aligned buffers, else [`word_tile_any`]): it has no word-by-word
/// path. That path's registers were the kernel's: with it in the same kernel ptxas gave the
/// Gaussian 95 registers (5 blocks of 4 warps per SM), without it 72 (7), and on the H100 (u8
/// 8192²) the 3 × 3 dilation went from 56.2 to 50.9 µs, the Gaussian from 56.3 to 50.9.
///
/// # Safety
/// `x` and `y` hold the launch's planes; `a.w` is a multiple of `4·P` and both buffers are
/// aligned to `4·P` bytes.
// unroll! bodies past a generic bound are dead code the lint cannot see through.
#[allow(unconditional_panic)]
#[inline(always)]
pub unsafe fn word_tile<F: WordFilter<K>, const K: usize, const P: usize, const R: usize>(
    x: *const u8,
    y: *mut F::Out,
    a: &Args<u8>,
) {
    let Some((p, r0, c_warp)) = word_tile_origin::<F, K, P, R>(a) else {
        return; // a warp past the last tile (warp-uniform)
    };
    let top = r0 - (K / 2) as i32;
    let cols = word_tile_cols(P as u32) as i32;
    if a.prefetch_rows != 0 && c_warp + cols <= a.w as i32 {
        // Into L2 for the warp that will filter them: the `R` output rows of the tile
        // `prefetch_rows` below (rows past the plane skipped), one instruction, no register
        // held. Each warp asks for its own `R` rows only, so every input line is asked for once;
        // asking for all `R + K − 1` rows the tile reads (rounded up to an instruction's 32 / P)
        // asked for each line twice (four times for Sobel's 16-row instruction), and on the H100
        // (u8 8192²) the 5 × 5 dilation took 53.3 µs against 50.9.
        let span = RowSpan::<P> {
            base: x.wrapping_add((p * a.h as u64 * a.w as u64) as usize + c_warp as usize),
            stride: a.w as usize,
            rows: a.h as i32,
        };
        // SAFETY: rows of the plane, the warp's 128 · P columns inside each.
        unsafe { span.prefetch_rows_l2(r0 + a.prefetch_rows as i32, R as i32) };
    }
    let whole_warp = c_warp + cols <= a.w as i32;
    let mapped = !(whole_warp && top >= 0 && top + (R + K - 1) as i32 <= a.h as i32);
    // SAFETY: forwarded; the rows are whole aligned vectors (the caller's promise) and, unmapped,
    // the tile's rows and columns lie in the plane.
    unsafe { word_tile_interior::<F, K, P, R>(x, y, a, p, r0, c_warp, mapped) }
}

/// [`word_tile`] for any width and alignment: a lane's `P` words filtered one after the other,
/// every row position and every word border-mapped ([`word_tile_edges`]). For the widths that are
/// not multiples of `4·P` and for unaligned buffers.
///
/// # Safety
/// `x` and `y` hold the launch's planes; if `a.vector_rows`, the width is a multiple of 4 and
/// both buffers are 4-byte aligned.
// unroll! bodies past a generic bound are dead code the lint cannot see through.
#[allow(unconditional_panic)]
#[inline(always)]
pub unsafe fn word_tile_any<F: WordFilter<K>, const K: usize, const P: usize, const R: usize>(
    x: *const u8,
    y: *mut F::Out,
    a: &Args<u8>,
) {
    let Some((p, r0, c_warp)) = word_tile_origin::<F, K, P, R>(a) else {
        return; // a warp past the last tile (warp-uniform)
    };
    // SAFETY: forwarded.
    unsafe { word_tile_edges::<F, K, P, R>(x, y, a, p, r0, c_warp) }
}

/// A word-tile warp's plane, first output row and first column, the plane's border strips
/// launched first (`edge_strips_first`); `None` past the last tile.
#[inline(always)]
fn word_tile_origin<F: WordFilter<K>, const K: usize, const P: usize, const R: usize>(
    a: &Args<u8>,
) -> Option<(u64, i32, i32)> {
    const { assert!(K % 2 == 1 && K <= 5 && (P == 1 || P == 2 || P == 4) && R <= WORD_TILE_MAX_ROWS as usize) };
    let cols = word_tile_cols(P as u32);
    if F::DIVIDED_ORIGIN {
        warp_tile_origin_divided(a, cols, R as u32, true)
    } else {
        warp_tile_origin(a, cols, R as u32, true)
    }
}

/// A lane's place in its warp's word tile: the row positions it reads (`R + K − 1`, from `top`)
/// and the column of its first word.
struct WordLane {
    positions: usize,
    top: i32,
    c0: i32,
}

impl WordLane {
    #[inline(always)]
    fn new<const K: usize, const P: usize, const R: usize>(r0: i32, c_warp: i32) -> WordLane {
        WordLane {
            positions: R + K - 1,
            top: r0 - (K / 2) as i32,
            c0: c_warp + (4 * P) as i32 * lane_idx() as i32,
        }
    }
}

/// The interior path of [`word_tile`]: straight-line loads from one row pointer advanced by
/// the width, no per-lane bounds, and no row mapping unless `mapped` (the first and last strips
/// of rows: each row position border-mapped once, a constant row filled with the constant, and
/// only the output rows inside the plane stored). The strips of the plane's top and bottom took
/// the word-by-word [`word_tile_edges`] before; the last strip's warps, launched last, then ran
/// about 10 µs past the others at 8192² (`ncu`: SMs active 71% of the kernel's time). Every
/// lane loads, besides its own `P` words, the word before and the word after them (4-byte loads
/// that mostly hit L1, since the neighbouring lanes load those words as their own): on the H100
/// that was faster than taking them from the neighbouring lanes by `shfl.sync` (a CUDA C probe
/// of this tile, 3 × 3 Gaussian on u8 8192²: 53 against 59 µs with 16 bytes per lane, 61
/// against 70 µs with 4), because each row's horizontal filter then waits only on its own
/// loads. The plane's left and right borders replace those words only in the lanes at those
/// edges.
///
/// `mapped` also serves a partial last warp: its lanes past the width load the last lane's words
/// and store nothing.
///
/// The two paths differ only in their loads and in which stores they keep: they branch for the
/// loads and meet for the filter, which the driver's JIT then compiles once (the word-tile
/// kernels took half the time to JIT, ptxas 13.0: 3 × 3 dilation 236 → 128 ms).
///
/// # Safety
/// Row `r0` lies in plane `p`, column `c_warp` lies in its rows, the rows are whole vectors of
/// `4·P` bytes aligned to `4·P` bytes, and unless `mapped`, rows `r0 − K/2 .. r0 − K/2 + R + K − 1`
/// and columns `c_warp .. c_warp + word_tile_cols(P)` lie in the plane.
// unroll! bodies past a generic bound are dead code the lint cannot see through.
#[allow(unconditional_panic)]
#[inline(always)]
unsafe fn word_tile_interior<F: WordFilter<K>, const K: usize, const P: usize, const R: usize>(
    x: *const u8,
    y: *mut F::Out,
    a: &Args<u8>,
    p: u64,
    r0: i32,
    c_warp: i32,
    mapped: bool,
) {
    let WordLane { positions, top, c0 } = WordLane::new::<K, P, R>(r0, c_warp);
    // The lanes of a partial last warp (`mapped`) past the width filter the last lane's words
    // again and store nothing.
    let lane_inside = !mapped || c0 < a.w as i32;
    let c0 = if mapped { c0.min(a.w as i32 - 4 * P as i32) } else { c0 };
    let w = a.w as usize;
    let plane = Plane::of(x, p, a);
    let end = c0 + 4 * P as i32;
    let (at_left, at_right) = (c0 == 0, end >= a.w as i32);
    // Row position j: its start, `None` for a constant row (`mapped` only).
    let row_at = |j: usize| -> Option<*const u8> {
        if mapped {
            plane.row(top + j as i32)
        } else {
            Some(plane.base.wrapping_add((top as usize + j) * w))
        }
    };
    let constant = u32::from(a.cval) * 0x0101_0101;
    let mut t = TileRows::<P>::new();
    // SAFETY: forwarded (row_at's rows, the lane's columns).
    unsafe {
        if mapped {
            load_tile_rows(
                &mut t,
                positions,
                |j| plane.row(top + j as i32),
                c0,
                (at_left, at_right),
                constant,
            );
        } else {
            let base = plane.base.wrapping_add(top as usize * w);
            load_tile_rows(
                &mut t,
                positions,
                |j| Some(base.wrapping_add(j * w)),
                c0,
                (at_left, at_right),
                constant,
            );
        }
    }
    // The plane's border columns, in one cold block per edge (not between the rows' hot code,
    // where it would spread the loop over the instruction cache). The two border columns a lane
    // needs are the same in every row: mapped once, then read row by row (mapping each sample,
    // every border mode's arithmetic per row, was most of what the driver's JIT compiled: the
    // 3 × 3 dilation took 147 ms in ptxas 13.0, 32 without these blocks).
    if at_left {
        let cols = [plane.col(-2), plane.col(-1)];
        crate::unroll!(ROWS_CAP, |j| {
            if j < positions {
                // SAFETY: a plane.row result (or the unmapped row inside); border-mapped columns.
                t.left[j] = unsafe { border_word(&plane, row_at(j), cols) } << 16;
            }
        });
    }
    if at_right {
        let cols = [plane.col(end), plane.col(end + 1)];
        crate::unroll!(ROWS_CAP, |j| {
            if j < positions {
                // SAFETY: as above.
                t.right[j] = unsafe { border_word(&plane, row_at(j), cols) };
            }
        });
    }
    // SAFETY: output row r0 of plane p, column c0: the caller's promise (the output has the
    // input's shape and alignment).
    let out0 = unsafe { y.add(flat(a, p, r0, c0)) };
    F::tile::<P, R>(&t, |i, out| {
        // Rows past the plane and lanes past the width (`mapped` only) store nothing, by
        // predicated stores: `if`s around the stores were branches before which the compiler
        // computed every row's outputs (the Gaussian's mapped path then took 94 registers, 76
        // with predicates).
        let keep = !mapped || (lane_inside && r0 + (i as i32) < a.h as i32);
        // SAFETY: if keep, row r0 + i < h and column c0 < w (the caller's promise unless
        // mapped), aligned whole words.
        unsafe { store_words(out0.wrapping_add(i * w) as *mut u32, out, P * F::OUT_WORDS, keep) };
    });
}

/// Loads the `positions` row positions of a lane's tile: its `P` words at column `c0` of row
/// `row_at(j)` (`None`: a constant row), and the words before and after them unless the lane is
/// at the plane's left or right edge (`edges`; the caller fills those from the border).
///
/// # Safety
/// Each `row_at` row is a row of the plane whose columns `c0 − 4 .. c0 + 4·P + 4` (those not
/// skipped at an edge) lie in it, aligned to `4·P` bytes at `c0`.
// unroll! bodies past a generic bound are dead code the lint cannot see through.
#[allow(unconditional_panic)]
#[inline(always)]
unsafe fn load_tile_rows<const P: usize>(
    t: &mut TileRows<P>,
    positions: usize,
    row_at: impl Fn(usize) -> Option<*const u8>,
    c0: i32,
    (at_left, at_right): (bool, bool),
    constant: u32,
) {
    crate::unroll!(ROWS_CAP, |j| {
        if j < positions {
            match row_at(j) {
                // SAFETY: a row of the plane; the lane's words lie in it, aligned, and the side
                // words are loaded at fixed offsets from the same address (predicated off in the
                // edge lanes, which take them from the border).
                Some(row) => unsafe {
                    let own = row.add(c0 as usize);
                    t.own[j] = load_words::<P>(own);
                    if !at_left {
                        t.left[j] = load_words::<1>(own.sub(4))[0];
                    }
                    if !at_right {
                        t.right[j] = load_words::<1>(own.add(4 * P))[0];
                    }
                },
                None => {
                    t.own[j] = [constant; P];
                    t.left[j] = constant;
                    t.right[j] = constant;
                }
            }
        }
    });
}

/// The samples of `row` (a `plane.row` result) at the mapped columns `cols` (`Plane::col`
/// results; `None`: the constant) as bytes 0 and 1 of a word: the border samples a lane at the
/// plane's right edge needs after its words, or, shifted up by 16, those at columns −2 and −1
/// before a left-edge lane's.
#[inline(always)]
unsafe fn border_word(plane: &Plane<u8>, row: Option<*const u8>, cols: [Option<i32>; 2]) -> u32 {
    // SAFETY: row from the plane; columns from its border mapping.
    unsafe { (plane.at_col(row, cols[0]) as u32) | ((plane.at_col(row, cols[1]) as u32) << 8) }
}

/// The path of [`word_tile_any`] (widths that are not whole vectors, unaligned images): every
/// row position border-mapped, and a
/// lane's `P` words filtered one after the other (a run-time loop). Each word, and the words
/// before and after it, is loaded whole where it lies in an aligned row, else gathered sample by
/// sample through the border — so the samples past a partial word, or past either edge, are the
/// border's. (Streaming the rows through a ring of `K` results instead, with the columns mapped
/// once, cut the kernels' registers from 89–126 to 72–95 but made the interior path 1–8 µs
/// slower at 8192²: ptxas then kept fewer of its loads in flight.)
// unroll! bodies past a generic bound are dead code the lint cannot see through.
#[allow(unconditional_panic)]
#[inline(always)]
unsafe fn word_tile_edges<F: WordFilter<K>, const K: usize, const P: usize, const R: usize>(
    x: *const u8,
    y: *mut F::Out,
    a: &Args<u8>,
    p: u64,
    r0: i32,
    c_warp: i32,
) {
    let WordLane { positions, top, c0 } = WordLane::new::<K, P, R>(r0, c_warp);
    let plane = Plane::of(x, p, a);
    let w = a.w as i32;
    let words = a.vector_rows != 0;
    // Whether the word at column c lies in the row whole (rows of whole words are aligned).
    let whole = |c: i32| words && c >= 0 && c + 4 <= w;
    let count = ((w - c0).max(0) as u32).div_ceil(4).min(P as u32);
    for q in 0..count {
        let c = c0 + 4 * q as i32;
        let mut t = TileRows::<1>::new();
        crate::unroll!(ROWS_CAP, |j| {
            if j < positions {
                let row = plane.row(top + j as i32);
                // SAFETY: plane.row rows; word_at gathers what is not whole through the border.
                unsafe {
                    t.left[j] = word_at(&plane, row, c - 4, whole(c - 4));
                    t.own[j] = [word_at(&plane, row, c, whole(c))];
                    t.right[j] = word_at(&plane, row, c + 4, whole(c + 4));
                }
            }
        });
        F::tile::<1, R>(&t, |i, o| {
            let r = r0 + i as i32;
            if r < a.h as i32 {
                // SAFETY: row r of the plane, columns from c; whole words only where they lie in
                // the row (the host's alignment check covers the output too).
                unsafe {
                    let dst = y.add(flat(a, p, r, c));
                    if whole(c) {
                        store_words(dst as *mut u32, o, F::OUT_WORDS, true);
                    } else {
                        let o = [o[0], o[F::OUT_WORDS - 1], 0, 0];
                        crate::unroll!(4, |e| {
                            if c + (e as i32) < w {
                                dst.add(e).write(F::Out::lane(&o, e));
                            }
                        });
                    }
                }
            }
        });
    }
}
