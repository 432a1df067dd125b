//! Streamed chains (`abi::chain::for_each_chain_stream`): three steps of reach 1 fixed at compile
//! time, every intermediate in registers.
//!
//! - **Mapping.** Each warp takes a strip of rows of 32 consecutive words of a plane (lane `i` on
//!   word `30g − 1 + i` of warp column `g`) and runs down it: each input row is loaded once (a
//!   word per lane, 128 contiguous bytes a warp) and flows through the three steps, each keeping
//!   the across results of its last three input rows; a step's neighbour words come from the
//!   lanes beside it by `shfl`. Lanes 1–30 store; lanes 0 and 31 are the halo (after three steps
//!   of reach 1 their outer 3 pixels are garbage, never stored). No shared memory, no barrier:
//!   the tile kernel's staging, slack rows, per-step strips and barriers are gone, and a row of a
//!   step costs its arithmetic, two shuffles and a rotation of its window (free in the loop
//!   unrolled by three).
//! - **Borders.** Each step extends *its* input as the op alone does. Across: in the warps at a
//!   plane's left or right edge, each step's input word at pixel `−1` or `w` is patched with the
//!   mapped pixel (or the constant) before its neighbours are shuffled ([`Edge`]); down: in the
//!   plane's first and last strips each step's window takes the mapped row's across result (a
//!   copy, or the constant row's) for row `−1` and row `h` ([`vmap`]). Under wrap the loads are
//!   periodic and every step with them; nothing is patched.
//! - **Pipeline.** Input row `y` gives the first step's output row `y − 1`, the second's `y − 2`
//!   and the chain's `y − 3`. A strip starts with a prologue of seven rows (or four at the
//!   plane's top) and the plane's last strip ends with three epilogue rows.

use core::marker::PhantomData;

use super::steps::{Gauss, Linear3, Morph, Packed};
use crate::abi::border::BorderMode;
use crate::abi::chain::{CHAIN_OUT_I16, CHAIN_STREAM_BLOCK, CHAIN_STREAM_WORDS, ChainStreamArgs};
use crate::device::{block_idx, byte_perm, lane_idx, shfl_down_u32, shfl_up_u32, store_words_if, warp_idx};
use crate::filter2d::{Max, Min, Sobel0, Sobel1};

/// How the warps at a plane's left and right edges patch a step's input word: the word holding
/// pixel `−1` takes, in its byte 3, byte `sel`'s source of the word after it (pixel 0 or 1),
/// or the constant; the word holding pixel `w` (`w` a multiple of 4: its byte 0) takes pixel
/// `w − 1` or `w − 2` from the word before it, or the constant. Other lanes keep their word
/// (selector `0x3210`).
#[derive(Clone, Copy)]
struct Edge {
    sel: u32,
    from_left: bool,
    from_const: bool,
    /// The constant in every byte.
    cw: u32,
}

impl Edge {
    fn new(wj: i32, nw: i32, mode: BorderMode, cw: u32) -> Edge {
        let mirror = mode as u32 == BorderMode::Mirror as u32;
        let from_const = mode as u32 == BorderMode::Constant as u32;
        let (sel, from_left) = if wj == -1 {
            // Byte 3 from the next word's byte 0 (reflect, replicate), 1 (mirror), or the
            // constant's byte 0.
            (if mirror { 0x5210 } else { 0x4210 }, false)
        } else if wj == nw {
            // Byte 0 from the previous word's byte 3 (reflect, replicate), 2 (mirror), or the
            // constant's byte 0 (source bytes 4–7: `0x3214`).
            let s = if from_const {
                0x3214
            } else if mirror {
                0x3216
            } else {
                0x3217
            };
            (s, true)
        } else {
            (0x3210, false)
        };
        Edge {
            sel,
            from_left,
            from_const,
            cw,
        }
    }

    /// Word `o` patched (its neighbours' words `l` and `r` as loaded).
    #[inline(always)]
    fn patch(&self, l: u32, o: u32, r: u32) -> u32 {
        let src = if self.from_const {
            self.cw
        } else if self.from_left {
            l
        } else {
            r
        };
        byte_perm(o, src, self.sel)
    }
}

/// One input row word of a step and its neighbours `[left, own, right]` from the lanes beside
/// it; in an edge warp (`EDGE`) the word patched first ([`Edge`]).
#[inline(always)]
fn row3<const EDGE: bool>(o: u32, edge: &Edge) -> [u32; 3] {
    let o = if EDGE {
        edge.patch(shfl_up_u32(o, 1), o, shfl_down_u32(o, 1))
    } else {
        o
    };
    [shfl_up_u32(o, 1), o, shfl_down_u32(o, 1)]
}

/// The across result a step's window takes for the row past a plane's edge: that of the row
/// next to the edge (`near`: reflect, replicate), the one after it (`far`: mirror), or the
/// constant row's (`konst`).
#[inline(always)]
fn vmap<M: Copy>(mode: BorderMode, near: M, far: M, konst: M) -> M {
    if mode as u32 == BorderMode::Mirror as u32 {
        far
    } else if mode as u32 == BorderMode::Constant as u32 {
        konst
    } else {
        near
    }
}

/// The window's rows moved up one, `m` the newest.
#[inline(always)]
fn push<M: Copy>(w: &mut [M; 3], m: M) {
    *w = [w[1], w[2], m];
}

/// Three steps and the across results of each one's last three input rows, oldest first.
struct Pipe<A: Linear3, B: Linear3, C: Linear3> {
    a: A,
    b: B,
    c: C,
    wa: [A::Mid; 3],
    wb: [B::Mid; 3],
    wc: [C::Mid; 3],
    edge: Edge,
}

impl<A: Linear3<Out = u32>, B: Linear3<Out = u32>, C: Linear3> Pipe<A, B, C> {
    /// The first step takes input row word `x`.
    #[inline(always)]
    fn step_a<const EDGE: bool>(&mut self, x: u32) {
        push(&mut self.wa, self.a.across(row3::<EDGE>(x, &self.edge)));
    }
    /// The first step's output row (of its window) into the second.
    #[inline(always)]
    fn step_b<const EDGE: bool>(&mut self) {
        let o = self.a.down(self.wa);
        push(&mut self.wb, self.b.across(row3::<EDGE>(o, &self.edge)));
    }
    /// The second step's output row into the third.
    #[inline(always)]
    fn step_c<const EDGE: bool>(&mut self) {
        let o = self.b.down(self.wb);
        push(&mut self.wc, self.c.across(row3::<EDGE>(o, &self.edge)));
    }
    /// Input row word `x` through all three: the chain's output row three above it.
    #[inline(always)]
    fn full<const EDGE: bool>(&mut self, x: u32) -> C::Out {
        self.step_a::<EDGE>(x);
        self.step_b::<EDGE>();
        self.step_c::<EDGE>();
        self.c.down(self.wc)
    }
    /// Each step's across result of a constant row (the border's constant in every byte).
    #[inline(always)]
    fn constant_rows(&self) -> (A::Mid, B::Mid, C::Mid) {
        let r = [self.edge.cw; 3];
        (self.a.across(r), self.b.across(r), self.c.across(r))
    }
}

/// Where a warp's outputs go: the lane's word of the next output row (i16, two words).
struct Out {
    p: *mut u8,
    /// Bytes per plane row of outputs.
    pitch: usize,
    store: bool,
}

impl Out {
    /// Stores one row's word (lanes with `store`), then steps to the next row.
    ///
    /// # Safety
    /// The lane's word of this row lies in the output when `store`.
    #[inline(always)]
    unsafe fn put(&mut self, w: [u32; 2]) {
        // SAFETY: the caller's word, 8-byte aligned (rows and words of whole outputs). A
        // predicated store: under an `if`, the compiler moved the Sobel's down pass into the
        // branch, a convergence barrier per row.
        unsafe { store_words_if(self.p as *mut u32, w, self.store) };
        self.p = self.p.wrapping_add(self.pitch);
    }
}

/// The chain `a → b → c` over the warp's strip ([module docs](self)), `c` a Sobel (i16).
///
/// # Safety
/// `x` holds the planes' `h · w` pixels and `y` as many i16 outputs, both aligned to 4
/// outputs; `w` is a multiple of 4, `h` and `strip_h` at least `CHAIN_STREAM_MIN_ROWS`; the
/// grid covers `a.warps` warps of [`CHAIN_STREAM_BLOCK`]-thread blocks.
#[inline(always)]
unsafe fn stream<A, B, C>(pipe_steps: (A, B, C), x: *const u8, y: *mut u8, a: &ChainStreamArgs)
where
    A: Linear3<Out = u32>,
    B: Linear3<Out = u32>,
    C: Linear3<Out = [u32; 2]>,
{
    let gw = block_idx() * (CHAIN_STREAM_BLOCK / 32) + warp_idx();
    if gw >= a.warps {
        return;
    }
    let per_plane = a.groups * a.strips;
    let (plane, k) = (gw / per_plane, gw % per_plane);
    let (strip, group) = (k / a.groups, k % a.groups);
    let (h, w) = (a.h, a.w);
    let nw = (w / 4) as i32;
    let wj = (group * CHAIN_STREAM_WORDS + lane_idx()) as i32 - 1;
    let mode = BorderMode::from_code(a.border);
    let wrap = mode as u32 == BorderMode::Wrap as u32;
    let y0 = strip * a.strip_h;
    let y1 = if strip + 1 == a.strips { h } else { y0 + a.strip_h };
    // The lane's word column in the plane: periodic under wrap, else clamped (a word past the
    // edge is garbage but for the pixel its step patches).
    let lw = if wrap { wj.rem_euclid(nw) } else { wj.clamp(0, nw - 1) };
    let plane_len = h as usize * w as usize;
    let src = x.wrapping_add(plane as usize * plane_len + 4 * lw as usize) as *const u32;
    let row = |r: u32| src.wrapping_byte_add(r as usize * w as usize);
    let cw = (a.cval & 0xff) * 0x0101_0101;
    let mut pipe = Pipe {
        a: pipe_steps.0,
        b: pipe_steps.1,
        c: pipe_steps.2,
        wa: Default::default(),
        wb: Default::default(),
        wc: Default::default(),
        edge: Edge::new(wj, nw, mode, cw),
    };
    let size = super::out_bytes(CHAIN_OUT_I16);
    // The lane's output word of row y0 (before the plane for lane 0 of the first column: never
    // stored).
    let first = (plane as usize * plane_len) as isize + y0 as isize * w as isize + 4 * wj as isize;
    let mut out = Out {
        p: y.wrapping_offset(first * size as isize),
        pitch: w as usize * size,
        store: (1..=CHAIN_STREAM_WORDS).contains(&lane_idx()) && wj < nw,
    };
    // Warps holding pixel −1 (the first column) or w (lane 31's word at or past word nw) patch
    // each step's input; never under wrap.
    let edge = !wrap && (group == 0 || (group * CHAIN_STREAM_WORDS + 31) as i32 > nw);
    // SAFETY: the rows loaded are the plane's (mapped under wrap); the stores the lane's words.
    unsafe {
        if edge {
            strip_rows::<A, B, C, true>(&mut pipe, &mut out, row, [y0, y1, h], mode)
        } else {
            strip_rows::<A, B, C, false>(&mut pipe, &mut out, row, [y0, y1, h], mode)
        }
    }
}

/// The warp's strip: output rows `[y0, y1)` of a plane of `h` rows, input row `r`'s word at
/// `row(r)`.
///
/// # Safety
/// As [`stream`]; `out` at the lane's word of output row `y0`.
#[inline(always)]
unsafe fn strip_rows<A, B, C, const EDGE: bool>(
    pipe: &mut Pipe<A, B, C>,
    out: &mut Out,
    row: impl Fn(u32) -> *const u32,
    [y0, y1, h]: [u32; 3],
    mode: BorderMode,
) where
    A: Linear3<Out = u32>,
    B: Linear3<Out = u32>,
    C: Linear3<Out = [u32; 2]>,
{
    let wrap = mode as u32 == BorderMode::Wrap as u32;
    let load = |r: u32| crate::load_nc!(row(r), u32);
    // Prologue: output row y0.
    if y0 == 0 && !wrap {
        // Each step's row −1 is its input's mapped row, taken once rows 0 and 1 are in.
        let (ka, kb, kc) = pipe.constant_rows();
        pipe.step_a::<EDGE>(load(0));
        pipe.step_a::<EDGE>(load(1));
        pipe.wa[0] = vmap(mode, pipe.wa[1], pipe.wa[2], ka);
        pipe.step_b::<EDGE>();
        pipe.step_a::<EDGE>(load(2));
        pipe.step_b::<EDGE>();
        pipe.wb[0] = vmap(mode, pipe.wb[1], pipe.wb[2], kb);
        pipe.step_c::<EDGE>();
        pipe.step_a::<EDGE>(load(3));
        pipe.step_b::<EDGE>();
        pipe.step_c::<EDGE>();
        pipe.wc[0] = vmap(mode, pipe.wc[1], pipe.wc[2], kc);
    } else {
        // Rows y0 − 3 ..= y0 + 3 (periodic under wrap), each step from its first needed row.
        let r = |d: u32| (y0 + h + d - 3) % h;
        pipe.step_a::<EDGE>(load(r(0)));
        pipe.step_a::<EDGE>(load(r(1)));
        pipe.step_a::<EDGE>(load(r(2)));
        pipe.step_b::<EDGE>();
        pipe.step_a::<EDGE>(load(r(3)));
        pipe.step_b::<EDGE>();
        crate::unroll!(2, |i| {
            pipe.step_a::<EDGE>(load(r(4 + i as u32)));
            pipe.step_b::<EDGE>();
            pipe.step_c::<EDGE>();
        });
        pipe.step_a::<EDGE>(load(r(6)));
        pipe.step_b::<EDGE>();
        pipe.step_c::<EDGE>();
    }
    // SAFETY: the lane's word of output row y0.
    unsafe { out.put(pipe.c.down(pipe.wc)) };
    // The rows whose inputs lie in the plane; the plane's last three take the epilogue.
    let bottom = y1 == h;
    let end = if bottom { h - 3 } else { y1 };
    let mut p = row(y0 + 4);
    let step = row(1) as usize - row(0) as usize;
    // Three rows a pass, the windows rotating without moves; the next pass's rows are loaded
    // before this pass runs (six rows in flight a warp). The last pass loads rows past the
    // strip, clamped to the plane's last three rows and never used.
    let lim = row(h - 3) as usize;
    let load3 = |p: *const u32| -> [u32; 3] {
        let q = (p as usize).min(lim) as *const u32;
        core::array::from_fn(|i| crate::load_nc!(q.wrapping_byte_add(i * step), u32))
    };
    let mut r = y0 + 1;
    let mut v = load3(p);
    while r + 3 <= end {
        p = p.wrapping_byte_add(3 * step);
        let next = load3(p);
        crate::unroll!(3, |i| {
            let o = pipe.full::<EDGE>(v[i]);
            // SAFETY: the lane's word of output row r + i.
            unsafe { out.put(o) };
        });
        v = next;
        r += 3;
    }
    while r < end {
        let o = pipe.full::<EDGE>(crate::load_nc!(p, u32));
        p = p.wrapping_byte_add(step);
        // SAFETY: the lane's word of output row r.
        unsafe { out.put(o) };
        r += 1;
    }
    if !bottom {
        return;
    }
    // Epilogue: output rows h − 3, h − 2, h − 1; input rows h, h + 1, h + 2 are rows 0, 1, 2
    // under wrap, else each step's row h is its input's mapped row.
    if wrap {
        crate::unroll!(3, |i| {
            let o = pipe.full::<EDGE>(load(i as u32));
            // SAFETY: the lane's word of output row h − 3 + i.
            unsafe { out.put(o) };
        });
        return;
    }
    let (ka, kb, kc) = pipe.constant_rows();
    let m = vmap(mode, pipe.wa[2], pipe.wa[1], ka);
    push(&mut pipe.wa, m);
    pipe.step_b::<EDGE>();
    pipe.step_c::<EDGE>();
    // SAFETY: the lane's words of output rows h − 3 .. h.
    unsafe { out.put(pipe.c.down(pipe.wc)) };
    let m = vmap(mode, pipe.wb[2], pipe.wb[1], kb);
    push(&mut pipe.wb, m);
    pipe.step_c::<EDGE>();
    unsafe { out.put(pipe.c.down(pipe.wc)) };
    let m = vmap(mode, pipe.wc[2], pipe.wc[1], kc);
    push(&mut pipe.wc, m);
    unsafe { out.put(pipe.c.down(pipe.wc)) };
}

/// The step of a streamed chain's kind (morphology 3 × 3).
macro_rules! stream_step {
    (Gaussian3x3) => {
        Gauss
    };
    (Dilate) => {
        Morph::<Max<u8>, 3>::new(3)
    };
    (Erode) => {
        Morph::<Min<u8>, 3>::new(3)
    };
    (Sobel0) => {
        Packed::<Sobel0<u8, i16>>(PhantomData)
    };
    (Sobel1) => {
        Packed::<Sobel1<u8, i16>>(PhantomData)
    };
}

macro_rules! stream_entries {
    ($($name:ident => $a:ident, $b:ident, $c:ident;)*) => {$(
        #[unsafe(export_name = crate::chain_stream_name!($name))]
        pub unsafe extern "ptx-kernel" fn $name(x: *const u8, y: *mut u8, a: ChainStreamArgs) {
            // SAFETY: the host's launch contract (`ChainPlan`).
            unsafe { stream((stream_step!($a), stream_step!($b), stream_step!($c)), x, y, &a) }
        }
        // 9 blocks of 4 warps per SM: 56 registers (at 10 blocks, 48, the prefetched rows spilled).
        crate::launch_bounds!(crate::chain_stream_name!($name), 128, 9);
    )*};
}
crate::for_each_chain_stream!(stream_entries);
