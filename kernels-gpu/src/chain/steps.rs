//! A chain step over its region: each thread down a strip of one word column, rows loaded and
//! filtered across once, a window of their across results filtered down; the u8 steps into the
//! other buffer, a Sobel last step into the planes' memory.

use core::marker::PhantomData;

use super::{Frame, PITCH, lookup_word, out_bytes, store_word};
use crate::abi::chain::{
    CHAIN_BLOCK, CHAIN_LUT_BYTES, CHAIN_MAX_HALO, CHAIN_OUT_F32, CHAIN_SIDE, CHAIN_TILE_H, CHAIN_TILE_W, ChainKind,
    ChainStep,
};
use crate::device::{div_small, funnel16, lane_idx, warp_idx};
use crate::filter2d::packed::{join_lane_words, split_lane_words};
use crate::filter2d::{AcrossDown, Gauss121, LaneOp, Max, Min, Sobel0, Sobel1, gradient_magnitude};

/// One row of a `kw`-wide max or min (`E`; odd `kw` up to `K`, the instantiation's reach 3 or
/// 5) of the word `own`, whose neighbours are `left` and `right`, as its even and odd pixels'
/// lane words ([`split_lane_words`]): the pair's, then the neighbours one and two pixels away
/// from `funnel16` of the adjacent lane words. A side below `K` selects fewer terms.
#[inline(always)]
fn fold_across<M: LaneOp, const K: usize>(left: u32, own: u32, right: u32, kw: u32) -> [u32; 2] {
    let [left_even, left_odd] = split_lane_words(left);
    let [even, odd] = split_lane_words(own);
    let [right_even, right_odd] = split_lane_words(right);
    let pair = M::lanes(even, odd);
    // [p−1, p1]: the pixels one before the even ones; [p2, p4]: one after the odd ones.
    let (one_before, one_after) = (funnel16(left_odd, odd), funnel16(even, right_even));
    let three = [M::lanes(pair, one_before), M::lanes(pair, one_after)];
    if kw == 1 {
        [even, odd]
    } else if K == 3 || kw == 3 {
        three
    } else {
        // [p−2, p0] and [p3, p5]: two before the even pixels, two after the odd ones.
        let core = M::lanes(three[0], one_after);
        [
            M::lanes(core, funnel16(left_even, even)),
            M::lanes(core, funnel16(odd, right_odd)),
        ]
    }
}

/// The lane-wise max or min (`E`) of two rows' lane words.
#[inline(always)]
fn fold_lanes<E: LaneOp>(a: [u32; 2], b: [u32; 2]) -> [u32; 2] {
    [E::lanes(a[0], b[0]), E::lanes(a[1], b[1])]
}

/// The four pixels' gradient magnitudes as f32 bits ([`gradient_magnitude`], as
/// `Gpu::sobel_magnitude`), from both Sobel derivatives as i16 words (`Sobel0`/`Sobel1::down`).
#[inline(always)]
fn magnitude(d0: [u32; 2], d1: [u32; 2]) -> [u32; 4] {
    let g = |w: [u32; 2], e: usize| (w[e / 2] >> (16 * (e % 2))) as i16 as f32;
    core::array::from_fn(|e| gradient_magnitude(g(d0, e), g(d1, e)).to_bits())
}

/// A thread's strip of a step's region: word column `j`, output rows `[r0, r1)`. The step runs
/// down the strip, one row at a time: each buffer row it reads is loaded (the word and its two
/// neighbours) and filtered across once, and a window of the last across results gives each
/// output row. Units of four rows (each reloading and refiltering its window's rows) cost a
/// step 1.5 × the loads and across passes and a loop and store set-up per unit.
#[derive(Clone, Copy)]
struct Strip {
    j: u32,
    r0: u32,
    r1: u32,
}

impl Strip {
    /// The calling thread's strip of the region rows `[y0, y1)` × words `[j0, j1)` (32 to 36
    /// words: the tile's 32 and up to `CHAIN_MAX_HALO` bytes each side), in bands of equal
    /// height, each warp on one band: with 32 words, warp `b` runs band `b` (8 bands); with
    /// `32 + e`, warps `0 .. 7` run the first 32 words of bands `0 .. 7` and the last warp their
    /// `e` others (`7e` lanes). `None` for a thread past them (or the region's rows). Bands
    /// spread over the block's threads in turn (a band of `32 + e` threads, then the next) put
    /// two bands' rows in most warps, whose shared loads then conflicted 2-way (`ncu`: 34% of
    /// the kernel's shared wavefronts excess, 9% after). The divisions by run-time counts are
    /// [`div_small`]'s (integer divisions took a tenth of a step's instructions).
    #[inline(always)]
    fn of([y0, y1, j0, j1]: [u32; 4]) -> Option<Strip> {
        const WARPS: u32 = CHAIN_BLOCK / 32;
        // div_small's range: the lane, and the height's numerator below 1024; the region's
        // words; the last warp's lanes.
        const {
            assert!(CHAIN_BLOCK.is_multiple_of(32) && CHAIN_TILE_H + 2 * CHAIN_MAX_HALO + WARPS <= 1024);
            assert!(CHAIN_TILE_W == 4 * 32 && CHAIN_MAX_HALO <= CHAIN_SIDE);
            assert!((WARPS - 1) * 2 * CHAIN_MAX_HALO.div_ceil(4) <= 32);
        };
        let extra = j1 - j0 - 32;
        let (lane, warp) = (lane_idx(), warp_idx());
        let bands = if extra == 0 { WARPS } else { WARPS - 1 };
        let (band, q) = if warp < bands {
            (warp, lane)
        } else {
            let band = div_small(lane, extra);
            (band, 32 + lane - band * extra)
        };
        let height = div_small(y1 - y0 + bands - 1, bands);
        let r0 = y0 + band * height;
        let r1 = (r0 + height).min(y1);
        (band < bands && r0 < r1).then_some(Strip { j: j0 + q, r0, r1 })
    }
}

/// Where a step's outputs go, one output row of the strip at a time.
trait Sink<O> {
    /// # Safety
    /// `r` is an output row of the sink's strip, called for each of them in order from its
    /// first (the buffer and inside-plane sinks step a pointer and do not read `r`).
    unsafe fn put(&mut self, r: u32, o: O);
}

/// A u8 step's outputs into the other buffer, each word through `lut` if `LUT` (a constant, so
/// the rows of a step without a table test nothing). Rows come in order from the strip's first
/// (`r` is not read): one pointer steps down the strip.
struct BufferSink<const LUT: bool> {
    /// The strip's word in its next row.
    dst: *mut u32,
    lut: *const u8,
}

impl<const LUT: bool> Sink<u32> for BufferSink<LUT> {
    #[inline(always)]
    unsafe fn put(&mut self, _r: u32, w: u32) {
        // SAFETY: the step's table.
        let w = if LUT { unsafe { lookup_word(w, self.lut) } } else { w };
        // SAFETY: the strip's next row lies in the buffer's region.
        unsafe {
            *self.dst = w;
            self.dst = self.dst.add(PITCH as usize);
        }
    }
}

/// A row's word `j − 1`, `j` and `j + 1` at `p` (word `j`).
///
/// # Safety
/// `p − 1 ..= p + 1` lie in a buffer.
#[inline(always)]
unsafe fn row_words(p: *const u32) -> [u32; 3] {
    // SAFETY: the caller's words.
    unsafe { [*p.sub(1), *p, *p.add(1)] }
}

/// A linear 3 × 3 filter: `across` of one row's word and its neighbours, `down` of three rows'
/// across results (top to bottom) into one output word's value.
pub(super) trait Linear3 {
    type Mid: Copy + Default;
    type Out: Copy;
    fn across(&self, w: [u32; 3]) -> Self::Mid;
    fn down(&self, m: [Self::Mid; 3]) -> Self::Out;
}

/// A packed filter ([`AcrossDown`]) as its two output lane words.
pub(super) struct Packed<F>(pub(super) PhantomData<F>);

impl<F: AcrossDown> Linear3 for Packed<F>
where
    F::Mid: Default,
{
    type Mid = F::Mid;
    type Out = [u32; 2];
    #[inline(always)]
    fn across(&self, [l, o, r]: [u32; 3]) -> F::Mid {
        F::across(l, o, r)
    }
    #[inline(always)]
    fn down(&self, m: [F::Mid; 3]) -> [u32; 2] {
        F::down(m)
    }
}

/// The Gaussian's output word (its second lane word is unused).
pub(super) struct Gauss;

impl Linear3 for Gauss {
    type Mid = <Gauss121<u8, u8> as AcrossDown>::Mid;
    type Out = u32;
    #[inline(always)]
    fn across(&self, [l, o, r]: [u32; 3]) -> Self::Mid {
        Gauss121::<u8, u8>::across(l, o, r)
    }
    #[inline(always)]
    fn down(&self, m: [Self::Mid; 3]) -> u32 {
        Gauss121::<u8, u8>::down(m)[0]
    }
}

/// Both Sobel derivatives of the same loads, as the gradient magnitude's four f32 words.
pub(super) struct Magnitude;

impl Linear3 for Magnitude {
    type Mid = ([u32; 2], [u32; 2]);
    type Out = [u32; 4];
    #[inline(always)]
    fn across(&self, [l, o, r]: [u32; 3]) -> Self::Mid {
        (Sobel0::<u8, i16>::across(l, o, r), Sobel1::<u8, i16>::across(l, o, r))
    }
    #[inline(always)]
    fn down(&self, m: [Self::Mid; 3]) -> [u32; 4] {
        let d0 = Sobel0::<u8, i16>::down([m[0].0, m[1].0, m[2].0]);
        let d1 = Sobel1::<u8, i16>::down([m[0].1, m[1].1, m[2].1]);
        magnitude(d0, d1)
    }
}

/// Max (dilation) or min (erosion) of `kh × KW` (`E`; odd `kh`, `KW` up to 5): each row across
/// ([`fold_across`], its width a constant), then the `kh` rows centred on the output. As a
/// [`Linear3`], the windows of reach 3 (`kh` 1 or 3); [`morph5_strip`] takes reach 5. The min is
/// its own instantiation: as the max of the inverted words it cost four XORs a row (a fifth of
/// the step).
pub(super) struct Morph<E, const KW: usize> {
    kh: u32,
    op: PhantomData<E>,
}

impl<E: LaneOp, const KW: usize> Morph<E, KW> {
    pub(super) fn new(kh: u32) -> Self {
        Morph { kh, op: PhantomData }
    }
    /// The fold of the three rows centred on the output (the centre row alone for `kh = 1`).
    #[inline(always)]
    fn centre(&self, [a, b, c]: [[u32; 2]; 3]) -> [u32; 2] {
        if self.kh >= 3 {
            fold_lanes::<E>(b, fold_lanes::<E>(a, c))
        } else {
            b
        }
    }
    /// The output word of the fold's lane words.
    #[inline(always)]
    fn join(&self, m: [u32; 2]) -> u32 {
        join_lane_words(m[0], m[1])
    }
}

impl<E: LaneOp, const KW: usize> Linear3 for Morph<E, KW> {
    type Mid = [u32; 2];
    type Out = u32;
    #[inline(always)]
    fn across(&self, [l, o, r]: [u32; 3]) -> [u32; 2] {
        fold_across::<E, KW>(l, o, r, KW as u32)
    }
    #[inline(always)]
    fn down(&self, m: [[u32; 2]; 3]) -> u32 {
        self.join(self.centre(m))
    }
}

/// A linear 3 × 3 filter down the strip: rows `r0 − 1` and `r0` across first, then per output
/// row the row below it across and the three rows down, into `sink`.
///
/// # Safety
/// `src` is a buffer of the frame (row 0 of its region, slack rows around it); the strip's rows
/// `r0 − 1 ..= r1` and words `j − 1 ..= j + 1` lie in it; `sink` takes the strip's rows.
#[inline(always)]
unsafe fn linear_strip<F: Linear3>(f: &F, src: *const u32, s: Strip, sink: &mut impl Sink<F::Out>) {
    // SAFETY: the caller's rows (slack rows above the region take row −1).
    let mut p = unsafe { src.offset(((s.r0 as i32 - 1) * PITCH as i32 + s.j as i32) as isize) };
    // SAFETY: as above, for every row loaded below.
    let mut next = || unsafe {
        let m = f.across(row_words(p));
        p = p.add(PITCH as usize);
        m
    };
    let (mut a, mut b) = (next(), next());
    // Three rows per pass: the window's registers rotate through the pass, no moves.
    let mut r = s.r0;
    while r + 3 <= s.r1 {
        let c = next();
        // SAFETY: output rows of the strip.
        unsafe { sink.put(r, f.down([a, b, c])) };
        let d = next();
        unsafe { sink.put(r + 1, f.down([b, c, d])) };
        let e = next();
        unsafe { sink.put(r + 2, f.down([c, d, e])) };
        (a, b) = (d, e);
        r += 3;
    }
    while r < s.r1 {
        let c = next();
        // SAFETY: an output row of the strip.
        unsafe { sink.put(r, f.down([a, b, c])) };
        (a, b) = (b, c);
        r += 1;
    }
}

/// A [`Morph`] of reach 5 down the strip (`kh` up to 5): each row across once, then the `kh`
/// rows centred on each output from a window of the last five, moved a row per output.
///
/// # Safety
/// As [`linear_strip`], for the rows `r0 − 2 ..= r1 + 1`.
#[inline(always)]
unsafe fn morph5_strip<E: LaneOp, const KW: usize>(
    m: &Morph<E, KW>,
    src: *const u32,
    s: Strip,
    sink: &mut impl Sink<u32>,
) {
    // SAFETY: the caller's rows (slack rows around the region).
    let mut p = unsafe { src.offset(((s.r0 as i32 - 2) * PITCH as i32 + s.j as i32) as isize) };
    // SAFETY: as above, for every row loaded below.
    let mut next = || unsafe {
        let a = m.across(row_words(p));
        p = p.add(PITCH as usize);
        a
    };
    let mut win = [[0u32; 2]; 5];
    crate::unroll!(4, |i| {
        win[i + 1] = next();
    });
    for r in s.r0..s.r1 {
        crate::unroll!(4, |i| {
            win[i] = win[i + 1];
        });
        win[4] = next();
        let mut w = m.centre([win[1], win[2], win[3]]);
        if m.kh == 5 {
            w = fold_lanes::<E>(w, fold_lanes::<E>(win[0], win[4]));
        }
        // SAFETY: an output row of the strip.
        unsafe { sink.put(r, m.join(w)) };
    }
}

/// A u8 step over the region rows `[y0, y1)` × word columns `[j0, j1)`, from `src` into `dst`:
/// the kind chosen once per step, then the thread's strip.
///
/// Its outputs go through the step's table (`s.table`, of `tables`) if it has one: the point
/// steps after it cost a lookup per pixel, not a pass through the buffers of their own.
///
/// # Safety
/// `src` and `dst` are distinct buffers of the frame; `1 ≤ j0 ≤ j1 ≤ pitch − 1`; `tables` holds
/// the step's table.
#[inline(always)]
pub(super) unsafe fn run_step(s: &ChainStep, src: *const u32, dst: *mut u32, region: [u32; 4], tables: *const u8) {
    let Some(strip) = Strip::of(region) else {
        return;
    };
    // SAFETY: word j of the strip's first row.
    let dst = unsafe { dst.add((strip.r0 * PITCH + strip.j) as usize) };
    // SAFETY: forwarded.
    unsafe {
        match s.table {
            0 => step_strip(s, src, strip, &mut BufferSink::<false> { dst, lut: tables }),
            t => {
                let lut = tables.wrapping_add((t - 1) as usize * CHAIN_LUT_BYTES as usize);
                step_strip(s, src, strip, &mut BufferSink::<true> { dst, lut })
            }
        }
    }
}

/// The step's kind, chosen once, down the strip.
///
/// # Safety
/// As [`run_step`]; `sink` writes the strip's rows of the other buffer.
#[inline(always)]
unsafe fn step_strip(s: &ChainStep, src: *const u32, strip: Strip, sink: &mut impl Sink<u32>) {
    let kind = s.kind;
    // SAFETY: the caller's buffers; every region's strip reads its rows and their window.
    unsafe {
        if kind == ChainKind::Gaussian3x3 as u32 {
            linear_strip(&Gauss, src, strip, sink)
        } else if kind == ChainKind::Point as u32 {
            for r in strip.r0..strip.r1 {
                sink.put(r, *src.add((r * PITCH + strip.j) as usize));
            }
        } else if kind == ChainKind::Erode as u32 {
            morph_strip::<Min<u8>>(s, src, strip, sink)
        } else {
            morph_strip::<Max<u8>>(s, src, strip, sink)
        }
    }
}

/// A morphology step (`E`: max or min) down the strip, instantiated per window reach.
///
/// # Safety
/// As [`step_strip`].
#[inline(always)]
unsafe fn morph_strip<E: LaneOp>(s: &ChainStep, src: *const u32, strip: Strip, sink: &mut impl Sink<u32>) {
    let kh = s.kh;
    // SAFETY: forwarded.
    unsafe {
        match (kh == 5, s.kw) {
            (_, 5) => morph5_strip(&Morph::<E, 5>::new(kh), src, strip, sink),
            (true, 3) => morph5_strip(&Morph::<E, 3>::new(kh), src, strip, sink),
            (true, _) => morph5_strip(&Morph::<E, 1>::new(kh), src, strip, sink),
            (false, 3) => linear_strip(&Morph::<E, 3>::new(kh), src, strip, sink),
            (false, _) => linear_strip(&Morph::<E, 1>::new(kh), src, strip, sink),
        }
    }
}

/// A Sobel last step's outputs into the planes' memory: the derivative as i16 (two words per
/// input word; a warp: 256 contiguous bytes per row), or the magnitude as f32 (four words),
/// each word checked against the plane's edges ([`InsideSink`] takes the strips inside it).
struct PlaneSink<const OUT: u32> {
    y: *mut u8,
    /// Element offset of the strip's word in buffer row 0 (may lie before the plane: only rows
    /// of the strip are stored).
    o: isize,
    /// The strip's word: its first pixel's image column, and the image row of buffer row 0.
    gx: u32,
    gy0: i32,
    h: u32,
    w: u32,
    whole_words: bool,
}

/// [`PlaneSink`] for a strip inside the plane with whole aligned words: one store per row from a
/// pointer stepped by the row length (no bounds test, no offset product per row: a fifth of
/// the Sobel step's instructions).
struct InsideSink<const OUT: u32> {
    /// The next row's first output of the strip's word.
    y: *mut u8,
    /// Bytes per plane row.
    pitch: usize,
}

impl<const OUT: u32> Sink<[u32; 4]> for InsideSink<OUT> {
    /// Rows come in order from the strip's first (`r` is not read).
    #[inline(always)]
    unsafe fn put(&mut self, _r: u32, words: [u32; 4]) {
        // SAFETY: the strip's pixels lie in the plane; rows of whole aligned words.
        unsafe {
            store_word::<OUT>(self.y, 0, words, 4, true);
            self.y = self.y.add(self.pitch);
        }
    }
}

impl<const OUT: u32> Sink<[u32; 4]> for PlaneSink<OUT> {
    #[inline(always)]
    unsafe fn put(&mut self, r: u32, words: [u32; 4]) {
        let o = (self.o + r as isize * self.w as isize) as usize;
        let gy = (self.gy0 + r as i32) as u32;
        if gy < self.h && self.gx < self.w {
            // SAFETY: pixel (gy, gx) of the plane and those after it in the row.
            unsafe { store_word::<OUT>(self.y, o, words, self.w - self.gx, self.whole_words) };
        }
    }
}

/// The i16 Sobel's two lane words as the sink's words.
struct I16Words<'a, S>(&'a mut S);

impl<S: Sink<[u32; 4]>> Sink<[u32; 2]> for I16Words<'_, S> {
    #[inline(always)]
    unsafe fn put(&mut self, r: u32, [lo, hi]: [u32; 2]) {
        // SAFETY: forwarded.
        unsafe { self.0.put(r, [lo, hi, 0, 0]) }
    }
}

/// A Sobel last step over the tile's region, stored from registers: the derivative as i16, or
/// with `OUT` f32 both derivatives' `√(g0² + g1²)` as f32 (the same f32 arithmetic as the op
/// alone: `u · u + v · v` rounded per operation, then a correctly rounded square root).
///
/// # Safety
/// As [`run_step`]; `y` holds the planes' outputs, 16-byte aligned if `whole_words`.
#[inline(always)]
pub(super) unsafe fn sobel_last<const OUT: u32>(
    s: &ChainStep,
    src: *const u32,
    y: *mut u8,
    f: &Frame,
    tile: [u32; 4],
    out0: usize,
    whole_words: bool,
) {
    let Some(strip) = Strip::of(tile) else {
        return;
    };
    let (h, w) = (f.h as u32, f.w as u32);
    let gx = (f.ox + 4 * strip.j as i32) as u32;
    let (last_gy, gy0) = ((f.oy + strip.r1 as i32 - 1) as u32, f.oy);
    let o = out0 as isize + gy0 as isize * w as isize + gx as isize;
    // SAFETY: forwarded; a strip of whole words inside the plane from its first row.
    unsafe {
        if whole_words && last_gy < h && gx + 4 <= w {
            let size = out_bytes(OUT);
            let first = o + strip.r0 as isize * w as isize;
            let sink = &mut InsideSink::<OUT> {
                y: y.wrapping_add(first as usize * size),
                pitch: w as usize * size,
            };
            sobel_strip::<OUT>(s, src, strip, sink)
        } else {
            let sink = &mut PlaneSink::<OUT> {
                y,
                o,
                gx,
                gy0,
                h,
                w,
                whole_words,
            };
            sobel_strip::<OUT>(s, src, strip, sink)
        }
    }
}

/// The Sobel (or, `OUT` f32, the magnitude) down the strip into `sink`.
///
/// # Safety
/// As [`linear_strip`].
#[inline(always)]
unsafe fn sobel_strip<const OUT: u32>(s: &ChainStep, src: *const u32, strip: Strip, sink: &mut impl Sink<[u32; 4]>) {
    // SAFETY: forwarded.
    unsafe {
        if OUT == CHAIN_OUT_F32 {
            linear_strip(&Magnitude, src, strip, sink)
        } else if s.kind == ChainKind::Sobel0 as u32 {
            linear_strip(&Packed::<Sobel0<u8, i16>>(PhantomData), src, strip, &mut I16Words(sink))
        } else {
            linear_strip(&Packed::<Sobel1<u8, i16>>(PhantomData), src, strip, &mut I16Words(sink))
        }
    }
}
