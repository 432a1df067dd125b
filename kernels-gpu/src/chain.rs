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
//! Erosion is dilation of the inverted image, inverted back (`min(v) = 255 − max(255 − v)`):
//! one XOR per loaded and stored word, one morphology instantiation per window reach.

use core::marker::PhantomData;

use crate::abi::border::{BorderMode, border_index_i32};
use crate::abi::chain::{
    CHAIN_BLOCK, CHAIN_LUT_BYTES, CHAIN_MAX_HALO, CHAIN_MAX_STEPS, CHAIN_OUT_F32, CHAIN_OUT_I16, CHAIN_OUT_U8,
    CHAIN_PITCH_WORDS, CHAIN_SIDE, CHAIN_SLACK_ABOVE, CHAIN_SLACK_BELOW, CHAIN_TILE_H, CHAIN_TILE_W, ChainArgs,
    ChainKind, ChainLayout, ChainStep, chain_layout,
};
use crate::device::{
    block_idx, byte_perm, dynamic_shared, funnel16, load_nc_v4, store_shared_v4, store_v2, store_v4, sync_threads,
    thread_idx,
};
use crate::filter2d::packed::{join_lane_words, split_lane_words};
use crate::filter2d::{AcrossDown, Gauss121, LaneOp, Max, Sobel0, Sobel1, gradient_magnitude};

/// Where the block's buffers lie in the image.
#[derive(Clone, Copy)]
struct Frame {
    /// Image row of buffer row 0 and image column of buffer word 0's first byte.
    oy: i32,
    ox: i32,
    h: i32,
    w: i32,
    /// Rows per buffer.
    rows: u32,
}

/// Words per buffer row.
const PITCH: u32 = CHAIN_PITCH_WORDS;

/// [`border_index_i32`] without its division for the positions within one image of the edge
/// (all a chain's halo reaches on an image wider than it): a clamp or one reflection.
#[inline(always)]
fn near_index(i: i32, n: i32, mode: BorderMode) -> Option<i32> {
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

/// One row of a `kw`-wide max (odd `kw` up to `K`, the instantiation's reach 3 or 5) of the word
/// `own`, whose neighbours are `left` and `right`, as its even and odd pixels' lane words
/// ([`split_lane_words`]): the pair max, then the neighbours one and two pixels away from
/// `funnel16` of the adjacent lane words. A side below `K` selects fewer terms.
#[inline(always)]
fn max_across<const K: usize>(left: u32, own: u32, right: u32, kw: u32) -> [u32; 2] {
    type M = Max<u8>;
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

/// The lane-wise max of two rows' lane words.
#[inline(always)]
fn max_lanes(a: [u32; 2], b: [u32; 2]) -> [u32; 2] {
    [Max::<u8>::lanes(a[0], b[0]), Max::<u8>::lanes(a[1], b[1])]
}

/// Each pixel of `w` through the 256-byte table at `lut` (shared memory).
///
/// # Safety
/// `lut` holds 256 readable bytes.
#[inline(always)]
unsafe fn lookup_word(w: u32, lut: *const u8) -> u32 {
    // SAFETY: a byte indexes the 256-byte table.
    let b = |k: u32| unsafe { *lut.add(((w >> (8 * k)) & 0xff) as usize) as u32 };
    byte_perm(b(0) | (b(1) << 8), b(2) | (b(3) << 8), 0x5410)
}

/// The four pixels' gradient magnitudes as f32 bits ([`gradient_magnitude`], as
/// `Gpu::sobel_magnitude`), from both Sobel derivatives as i16 words (`Sobel0`/`Sobel1::down`).
#[inline(always)]
fn magnitude(d0: [u32; 2], d1: [u32; 2]) -> [u32; 4] {
    let g = |w: [u32; 2], e: usize| (w[e / 2] >> (16 * (e % 2))) as i16 as f32;
    core::array::from_fn(|e| gradient_magnitude(g(d0, e), g(d1, e)).to_bits())
}

/// Stores one word's four outputs at element `o` of `y`, `OUT` (`CHAIN_OUT_*`) saying their
/// type; `words` holds them as they lie in memory (u8: one word, i16: two, f32: four). The first
/// `min(n, 4)` are stored: all four as one store when `aligned`, else one element at a time.
///
/// # Safety
/// `y` holds outputs of `OUT`'s type; elements `o .. o + min(n, 4)` are in it, and when
/// `aligned` and `n ≥ 4`, `o`'s address is aligned to the four outputs' size.
#[inline(always)]
unsafe fn store_word<const OUT: u32>(y: *mut u8, o: usize, words: [u32; 4], n: u32, aligned: bool) {
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
    /// The calling thread's strip of the region rows `[y0, y1)` × words `[j0, j1)`: consecutive
    /// threads on consecutive words of a band, `⌊CHAIN_BLOCK / words⌋` bands of equal height;
    /// `None` for a thread past the last band (or the region's rows).
    #[inline(always)]
    fn of([y0, y1, j0, j1]: [u32; 4]) -> Option<Strip> {
        let cols = j1 - j0;
        let bands = CHAIN_BLOCK / cols;
        let t = thread_idx();
        let (band, q) = (t / cols, t % cols);
        let height = (y1 - y0).div_ceil(bands);
        let r0 = y0 + band * height;
        let r1 = (r0 + height).min(y1);
        (band < bands && r0 < r1).then_some(Strip { j: j0 + q, r0, r1 })
    }
}

/// Where a step's outputs go, one output row of the strip at a time.
trait Sink<O> {
    /// # Safety
    /// `r` is an output row of the sink's strip.
    unsafe fn put(&mut self, r: u32, o: O);
}

/// A u8 step's outputs into the other buffer, each word through `lut` if `LUT` (a constant, so
/// the rows of a step without a table test nothing).
struct BufferSink<const LUT: bool> {
    /// Word `j` of buffer row 0.
    dst: *mut u32,
    lut: *const u8,
}

impl<const LUT: bool> Sink<u32> for BufferSink<LUT> {
    #[inline(always)]
    unsafe fn put(&mut self, r: u32, w: u32) {
        // SAFETY: the step's table.
        let w = if LUT { unsafe { lookup_word(w, self.lut) } } else { w };
        // SAFETY: row r of the strip lies in the buffer's region.
        unsafe { *self.dst.add((r * PITCH) as usize) = w };
    }
}

/// A row's word `j − 1`, `j` and `j + 1` at `p` (word `j`), each XORed with `flip`.
///
/// # Safety
/// `p − 1 ..= p + 1` lie in a buffer.
#[inline(always)]
unsafe fn row_words(p: *const u32, flip: u32) -> [u32; 3] {
    // SAFETY: the caller's words.
    unsafe { [*p.sub(1), *p, *p.add(1)].map(|w| w ^ flip) }
}

/// A linear 3 × 3 filter: `across` of one row's word and its neighbours, `down` of three rows'
/// across results (top to bottom) into one output word's value.
trait Linear3 {
    type Mid: Copy;
    type Out: Copy;
    fn across(&self, w: [u32; 3]) -> Self::Mid;
    fn down(&self, m: [Self::Mid; 3]) -> Self::Out;
}

/// A packed filter ([`AcrossDown`]) as its two output lane words.
struct Packed<F>(PhantomData<F>);

impl<F: AcrossDown> Linear3 for Packed<F> {
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
struct Gauss;

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
struct Magnitude;

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

/// Max of `kh × KW` (`kh` 1 or 3, `KW` 1 or 3) on words XORed with `flip` (all ones: the
/// erosion): each row across ([`max_across`], its width a constant), then the `kh` rows
/// centred on the output.
struct Morph3<const KW: usize> {
    kh: u32,
    flip: u32,
}

impl<const KW: usize> Linear3 for Morph3<KW> {
    type Mid = [u32; 2];
    type Out = u32;
    #[inline(always)]
    fn across(&self, w: [u32; 3]) -> [u32; 2] {
        let [l, o, r] = w.map(|w| w ^ self.flip);
        max_across::<KW>(l, o, r, KW as u32)
    }
    #[inline(always)]
    fn down(&self, [a, b, c]: [[u32; 2]; 3]) -> u32 {
        let m = if self.kh >= 3 { max_lanes(b, max_lanes(a, c)) } else { b };
        join_lane_words(m[0], m[1]) ^ self.flip
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
        let m = f.across(row_words(p, 0));
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

/// Max of `kh × KW` (odd `kh` up to `K`, the instantiation's reach down, 3 or 5) down the strip,
/// on words XORed with `flip` (all ones: the erosion): each row across once ([`max_across`], its
/// width a constant), then the `kh` rows centred on each output from a window of the last `K`.
///
/// # Safety
/// As [`linear_strip`], for the rows `r0 − K / 2 ..= r1 − 1 + K / 2`.
#[inline(always)]
unsafe fn morph_strip<const K: usize, const KW: usize>(
    src: *const u32,
    s: Strip,
    kh: u32,
    flip: u32,
    sink: &mut impl Sink<u32>,
) {
    let c = K / 2;
    // SAFETY: the caller's rows (slack rows around the region).
    let mut p = unsafe { src.offset(((s.r0 as i32 - c as i32) * PITCH as i32 + s.j as i32) as isize) };
    // SAFETY: as above, for every row loaded below.
    let mut next = || unsafe {
        let [l, o, r] = row_words(p, flip);
        p = p.add(PITCH as usize);
        max_across::<KW>(l, o, r, KW as u32)
    };
    let mut win = [[0u32; 2]; K];
    crate::unroll!(K, |i| {
        if i + 1 < K {
            win[i + 1] = next();
        }
    });
    for r in s.r0..s.r1 {
        crate::unroll!(K, |i| {
            if i + 1 < K {
                win[i] = win[i + 1];
            }
        });
        win[K - 1] = next();
        let mut m = win[c];
        if kh >= 3 {
            m = max_lanes(m, max_lanes(win[c - 1], win[c + 1]));
        }
        if K == 5 && kh == 5 {
            m = max_lanes(m, max_lanes(win[0], win[4]));
        }
        // SAFETY: an output row of the strip.
        unsafe { sink.put(r, join_lane_words(m[0], m[1]) ^ flip) };
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
unsafe fn run_step(s: &ChainStep, src: *const u32, dst: *mut u32, region: [u32; 4], tables: *const u8) {
    let Some(strip) = Strip::of(region) else {
        return;
    };
    // SAFETY: word j of the buffer's row 0 (rows are added per output).
    let dst = unsafe { dst.add(strip.j as usize) };
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
    let (kind, kh, kw) = (s.kind, s.kh, s.kw);
    let flip = if kind == ChainKind::Erode as u32 { u32::MAX } else { 0 };
    // SAFETY: the caller's buffers; every region's strip reads its rows and their window.
    unsafe {
        if kind == ChainKind::Gaussian3x3 as u32 {
            linear_strip(&Gauss, src, strip, sink)
        } else if kind == ChainKind::Point as u32 {
            for r in strip.r0..strip.r1 {
                sink.put(r, *src.add((r * PITCH + strip.j) as usize));
            }
        } else {
            match (kh == 5, kw) {
                (_, 5) => morph_strip::<5, 5>(src, strip, kh, flip, sink),
                (true, 3) => morph_strip::<5, 3>(src, strip, kh, flip, sink),
                (true, _) => morph_strip::<5, 1>(src, strip, kh, flip, sink),
                (false, 3) => linear_strip(&Morph3::<3> { kh, flip }, src, strip, sink),
                (false, _) => linear_strip(&Morph3::<1> { kh, flip }, src, strip, sink),
            }
        }
    }
}

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
unsafe fn fix_border(buf: *mut u32, f: &Frame, [y0, y1, j0, j1]: [u32; 4], rest: [u32; 4], mode: BorderMode, cval: u8) {
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
    // SAFETY: the frame's buffer; the plane's rows; the staging's table.
    unsafe { stage(cur, &f, src, a.row_align, mode, stage_lut) };
    // SAFETY: every thread reaches it.
    unsafe { sync_threads() };
    let edge = f.oy < 0 || f.oy + rows as i32 > f.h || f.ox < 0 || f.ox + 4 * PITCH as i32 > f.w;
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

/// 16-byte chunks of a buffer row.
const CHUNKS: u32 = PITCH / 4;
/// Chunks a thread stages at most: the largest region ([`CHAIN_TILE_H`]` + 2 ·
/// `[`CHAIN_MAX_HALO`] rows) over the block (6: 24 registers of loads in flight).
const STAGE_BATCH: usize = ((CHAIN_TILE_H + 2 * CHAIN_MAX_HALO) * CHUNKS).div_ceil(CHAIN_BLOCK) as usize;

/// Where chunk `i` of the staged region lies: its buffer row and chunk, its first image column,
/// and the image row it holds (the periodic extension's under wrap, else only an inside row).
#[inline(always)]
fn chunk_at(i: u32, f: &Frame, mode: BorderMode) -> (u32, u32, i32, Option<i32>) {
    let (r, q) = (i / CHUNKS, i % CHUNKS);
    let iy = f.oy + r as i32;
    let my = match mode as u32 == BorderMode::Wrap as u32 {
        true => near_index(iy, f.h, mode),
        false => (0 <= iy && iy < f.h).then_some(iy),
    };
    (r, q, f.ox + 16 * q as i32, my)
}

/// Stages the frame's region of the plane `src` into `buf`: threads over 16-byte chunks of the
/// rows, [`STAGE_BATCH`] chunks a thread. A chunk inside a row of whole vectors (`row_align` 16)
/// is one vector load, and a thread issues all of its vector loads before it stores any (one
/// memory latency per block, not one per chunk: the loop of one chunk at a time waited on each
/// load in turn). Other chunks follow: their words are loaded whole where they lie in a row of
/// whole words, else byte by byte. Positions outside the image are the periodic extension under
/// wrap (mapped rows and bytes), else zero: the block then fixes them as after a step
/// ([`fix_border`]). With `lut`, every staged pixel goes through it (the chain's leading point
/// steps).
/// (`Plane::row` with `word_at` would say the same in fewer lines, but their division-based
/// mapping made the kernel slower on the H200: W12 64 × 512² 104.2 µs, 8192² 175.2 µs, against
/// 84.4 and 163.5 in an earlier call.)
///
/// # Safety
/// `buf` is a buffer of the frame; `src` the plane's `h · w` pixels, 16-byte aligned if
/// `row_align > 1`; `lut` 256 bytes of shared memory the block has written (and synced).
#[inline(always)]
unsafe fn stage(buf: *mut u32, f: &Frame, src: *const u8, row_align: u32, mode: BorderMode, lut: Option<*const u8>) {
    let wrap = mode as u32 == BorderMode::Wrap as u32;
    let (n, tid) = (f.rows * CHUNKS, thread_idx());
    let row_of = |my: i32| src.wrapping_add(my as usize * f.w as usize);
    let put = |r: u32, q: u32, v: [u32; 4]| {
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
    crate::unroll!(STAGE_BATCH, |u| {
        let i = tid + u as u32 * CHAIN_BLOCK;
        if i < n {
            let (_, _, gx, my) = chunk_at(i, f, mode);
            if let Some(my) = my {
                if row_align == 16 && gx >= 0 && gx + 16 <= f.w {
                    // SAFETY: 16 bytes of the row, 16-byte aligned (`row_align`).
                    v[u] = unsafe { load_nc_v4(row_of(my).add(gx as usize) as *const [u32; 4]) };
                } else if wrap || (gx + 16 > 0 && gx < f.w) {
                    rest |= 1 << u;
                }
            }
        }
    });
    crate::unroll!(STAGE_BATCH, |u| {
        let i = tid + u as u32 * CHAIN_BLOCK;
        if i < n && rest & (1 << u) == 0 {
            let (r, q, _, _) = chunk_at(i, f, mode);
            put(r, q, v[u]);
        }
    });
    // The chunks at a row's ends: words, else bytes.
    while rest != 0 {
        let u = rest.trailing_zeros();
        rest &= rest - 1;
        let (r, q, gx, my) = chunk_at(tid + u * CHAIN_BLOCK, f, mode);
        let row = row_of(my.unwrap_or(0));
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
        put(r, q, v);
    }
}

/// A Sobel last step's outputs into the planes' memory: the derivative as i16 (two words per
/// input word; a warp: 256 contiguous bytes per row), or the magnitude as f32 (four words). A
/// strip inside the plane stores whole words from one offset stepped by the row length; the
/// others check each word.
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
    inside: bool,
}

impl<const OUT: u32> Sink<[u32; 4]> for PlaneSink<OUT> {
    #[inline(always)]
    unsafe fn put(&mut self, r: u32, words: [u32; 4]) {
        let o = (self.o + r as isize * self.w as isize) as usize;
        if self.inside {
            // SAFETY: the strip's pixels lie in the plane; rows of whole aligned words.
            unsafe { store_word::<OUT>(self.y, o, words, 4, true) };
            return;
        }
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
unsafe fn sobel_last<const OUT: u32>(
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
    let sink = &mut PlaneSink::<OUT> {
        y,
        o: out0 as isize + gy0 as isize * w as isize + gx as isize,
        gx,
        gy0,
        h,
        w,
        whole_words,
        inside: whole_words && last_gy < h && gx + 4 <= w,
    };
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
// The magnitude's last step holds both derivatives: at 64 registers ptxas spilled 4 bytes on
// sm_90, so its kernel takes three blocks.
crate::launch_bounds!(crate::chain_kernel_name!("f32"), 256, 3);
