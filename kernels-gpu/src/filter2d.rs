//! 2D filters over the last two axes: morphology (max/min of a `kh × kw` rectangle) and linear
//! filters (correlation with taps in the constant bank), one ladder shared by both.
//!
//! Every rung is generic over a [`Fold`] (what the window computes) and reads the plane through
//! [`Plane`] (border-extended samples, 32-bit row/column arithmetic):
//!
//! - `one_pixel`: one output per thread, every window sample loaded from global memory
//!   (`ld.global.nc`; L1 serves the overlap of neighbouring windows). Bottleneck: `kh · kw` load
//!   instructions and border mappings per output.
//! - `multi_pixel`: a 4 × 4 block of outputs per thread (lanes on neighbouring columns, so every
//!   load instruction is coalesced); the row and column mappings are shared by the block's
//!   outputs. Bottleneck: still one load per output per tap.
//! - `shared_tile`: the block stages its 64 × 32 output tile plus the window's halo in shared
//!   memory once (each sample read from global memory once per block), then every thread folds
//!   its 2 × 4 outputs from shared memory. Bottleneck: `kh · kw` shared loads per output.
//! - `composed_shared` (max/min, odd squares): the tile is staged once and a `k × k` window is
//!   `(k − 1) / 2` passes of 3 × 3 through two shared buffers (the tutorial's 5 × 5 = two 3 × 3).
//! - `pass_cols` / `pass_rows`: separable 1D passes through a scratch image, columns then rows
//!   (scipy's axis order); `van_herk_cols` / `van_herk_rows`: the same passes in O(1) per output
//!   for max/min (van Herk/Gil-Werman: per block of `k` samples a prefix and a suffix scan in
//!   shared memory, each window the max of one suffix and one prefix); `van_herk_col_words` /
//!   `doubling_rows` ([`words`]): the `VanHerk` rung's fast passes on 4-byte words (a column van
//!   Herk streamed per lane with packed SIMD-within-a-register extrema, a row doubling in
//!   registers and shuffles).
//! - `row_vector`: 16 bytes of a row per thread (one `ld.global.nc.v4` per row), the
//!   neighbours' halo samples from the adjacent lanes by `shfl.sync`, the filter applied
//!   separably in registers (a horizontal 1D filter per row, a ring of the last `K` rows' results
//!   for the vertical one) while the thread walks down a strip of rows, each row's load issued
//!   `K` rows ahead; outputs stored as 16-byte vectors. Compile-time `K` (3 × 3, 5 × 5).
//! - `word_tile` ([`packed`]): u8 3 × 3 and 5 × 5 filters on packed words, 16 bytes of a few
//!   rows per lane, all loads issued before any filtering; max/min down first (van Herk over the
//!   rows), the linear filters across first. `word_tile_any` is the same filter word by word, for
//!   widths that are not whole 16-byte vectors and unaligned buffers.

use core::marker::PhantomData;

use crate::abi::filter2d::*;
use crate::device::*;

pub mod packed;
pub mod tile;
pub mod words;
pub use packed::{AcrossDown, LaneOp, WordFilter, word_tile, word_tile_any};
pub use words::{LaneExtremum, doubling_rows, van_herk_col_words};

type Args<T> = Filter2dArgs<T>;

// ---------------------------------------------------------------------------------------------
// What a window computes
// ---------------------------------------------------------------------------------------------

/// A window reduction: `finish(take(… take(start(), x₀, 0) …, x_{n−1}, n − 1))`, the samples in
/// row-major window order and `tap` their row-major index (correlations read their taps with it;
/// max/min ignore it).
pub trait Fold {
    type In: Pixel;
    type Acc: Copy;
    type Out: Pixel;
    fn start() -> Self::Acc;
    fn take(acc: Self::Acc, x: Self::In, tap: u32, a: &Args<Self::In>) -> Self::Acc;
    fn finish(acc: Self::Acc, a: &Args<Self::In>) -> Self::Out;
}

/// Maximum of the window (grey dilation); NaN-propagating.
pub struct Max<T>(PhantomData<T>);
/// Minimum of the window (grey erosion); NaN-propagating.
pub struct Min<T>(PhantomData<T>);

/// Max or min: the folds of the morphology-only rungs (composed passes, van Herk), whose
/// accumulator is a sample.
pub trait Extremum {
    type T: Pixel + MorphValue;
    /// The identity (`LOWEST` for max).
    const START: Self::T;
    fn op(a: Self::T, b: Self::T) -> Self::T;
}

impl<T: Pixel + MorphValue> Extremum for Max<T> {
    type T = T;
    const START: T = T::LOWEST;
    #[inline(always)]
    fn op(a: T, b: T) -> T {
        T::max_nan(a, b)
    }
}

impl<T: Pixel + MorphValue> Extremum for Min<T> {
    type T = T;
    const START: T = T::HIGHEST;
    #[inline(always)]
    fn op(a: T, b: T) -> T {
        T::min_nan(a, b)
    }
}

macro_rules! extremum_fold {
    ($($e:ident),*) => {$(
        impl<T: Pixel + MorphValue> Fold for $e<T> {
            type In = T;
            type Acc = T;
            type Out = T;
            #[inline(always)]
            fn start() -> T {
                <Self as Extremum>::START
            }
            #[inline(always)]
            fn take(acc: T, x: T, _: u32, _: &Args<T>) -> T {
                <Self as Extremum>::op(acc, x)
            }
            #[inline(always)]
            fn finish(acc: T, _: &Args<T>) -> T {
                acc
            }
        }
    )*};
}
extremum_fold!(Max, Min);

/// An integer result saturated into an output type.
pub trait FromI32: Pixel {
    fn saturate(v: i32) -> Self;
}
impl FromI32 for u8 {
    #[inline(always)]
    fn saturate(v: i32) -> u8 {
        v.clamp(0, u8::MAX as i32) as u8
    }
}
impl FromI32 for u16 {
    #[inline(always)]
    fn saturate(v: i32) -> u16 {
        v.clamp(0, u16::MAX as i32) as u16
    }
}
impl FromI32 for i16 {
    #[inline(always)]
    fn saturate(v: i32) -> i16 {
        v.clamp(i16::MIN as i32, i16::MAX as i32) as i16
    }
}

/// Integer correlation: `i32` taps from the bank, an exact `i32` sum (the host bounds
/// `Σ|t| · max x` below 2^31), divided by `2^shift` rounding half up, saturated to `O`.
pub struct IntTaps<I, O>(PhantomData<(I, O)>);

impl<I: Pixel, O: FromI32> Fold for IntTaps<I, O> {
    type In = I;
    type Acc = i32;
    type Out = O;
    #[inline(always)]
    fn start() -> i32 {
        0
    }
    #[inline(always)]
    fn take(acc: i32, x: I, tap: u32, a: &Args<I>) -> i32 {
        let t = bank_u32(a.tap_offset as u64 + 4 * tap as u64) as i32;
        acc.wrapping_add(t.wrapping_mul(x.bits() as i32))
    }
    #[inline(always)]
    fn finish(acc: i32, a: &Args<I>) -> O {
        O::saturate(round_shift(acc, a.shift))
    }
}

/// `v / 2^shift` rounded half up (an arithmetic shift floors).
#[inline(always)]
fn round_shift(v: i32, shift: u32) -> i32 {
    if shift == 0 {
        v
    } else {
        v.wrapping_add(1 << (shift - 1)) >> shift
    }
}

/// `f32` correlation: `f32` taps from the bank, an FMA sum in window order.
pub struct FloatTaps<I, O>(PhantomData<(I, O)>);

impl Fold for FloatTaps<f32, f32> {
    type In = f32;
    type Acc = f32;
    type Out = f32;
    #[inline(always)]
    fn start() -> f32 {
        0.0
    }
    #[inline(always)]
    fn take(acc: f32, x: f32, tap: u32, a: &Args<f32>) -> f32 {
        let t = f32::from_bits(bank_u32(a.tap_offset as u64 + 4 * tap as u64));
        core::intrinsics::fmaf32(t, x, acc)
    }
    #[inline(always)]
    fn finish(acc: f32, _: &Args<f32>) -> f32 {
        acc
    }
}

/// An image element of the separable correlation passes: summed in f64, written back as scipy's
/// `correlate1d` does (C casts: truncation toward zero for integers, rounding for f32).
pub trait PassPixel: Pixel {
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
}
macro_rules! pass_pixel {
    ($($t:ty),*) => {$(
        impl PassPixel for $t {
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_f64(v: f64) -> $t {
                v as $t
            }
        }
    )*};
}
pass_pixel!(u8, u16, f32);

/// One output of a 1D correlation pass with f64 taps from the bank, summed in scipy's order and
/// with its unfused multiply-adds (`NI_Correlate1D`): for symmetric taps
/// `x₀·w₀ + Σ_{j = −r..−1} (x_j + x_{−j})·w_j`, antisymmetric with `x_j − x_{−j}`, otherwise the
/// last tap first, then the others in order. `sample(d)` is the input at offset `d` along the axis.
#[inline(always)]
fn scipy_correlate1d(k: u32, symmetry: u32, tap_offset: u32, sample: impl Fn(i32) -> f64) -> f64 {
    let before = (k / 2) as i32;
    let after = k as i32 - before - 1;
    let w = |d: i32| f64::from_bits(bank_u64(tap_offset as u64 + 8 * (d + before) as u64));
    // `mul` then `add`, each rounded: scipy's C loop is compiled without contraction.
    let mut acc;
    if symmetry == TAPS_GENERAL {
        acc = mul_rn(sample(after), w(after));
        let mut j = -before;
        while j < after {
            acc = add_rn(acc, mul_rn(sample(j), w(j)));
            j += 1;
        }
    } else {
        acc = mul_rn(sample(0), w(0));
        let mut j = -before;
        while j < 0 {
            let pair = if symmetry == TAPS_SYMMETRIC {
                add_rn(sample(j), sample(-j))
            } else {
                sub_rn(sample(j), sample(-j))
            };
            acc = add_rn(acc, mul_rn(pair, w(j)));
            j += 1;
        }
    }
    acc
}

/// Column pass of a separable correlation (taps `kh` at `tap_offset`, symmetry in `shift`).
pub unsafe fn correlate_cols<T: PassPixel>(x: *const T, y: *mut T, a: &Args<T>) {
    let Some((p, r, c)) = thread_pixel(a) else {
        return;
    };
    let plane = Plane::of(x, p, a);
    // SAFETY: rows from plane.row; c < w.
    let v = scipy_correlate1d(a.kh, a.shift, a.tap_offset, |d| {
        unsafe { plane.at(plane.row(r + d), c) }.to_f64()
    });
    // SAFETY: inside the plane.
    unsafe { y.add(flat(a, p, r, c)).write(T::from_f64(v)) }
}

/// Row pass of a separable correlation (taps `kw`).
pub unsafe fn correlate_rows<T: PassPixel>(x: *const T, y: *mut T, a: &Args<T>) {
    let Some((p, r, c)) = thread_pixel(a) else {
        return;
    };
    let plane = Plane::of(x, p, a);
    let row = plane.row(r);
    // SAFETY: row from plane.row.
    let v = scipy_correlate1d(a.kw, a.shift, a.tap_offset, |d| {
        unsafe { plane.at(row, c + d) }.to_f64()
    });
    // SAFETY: inside the plane.
    unsafe { y.add(flat(a, p, r, c)).write(T::from_f64(v)) }
}

// ---------------------------------------------------------------------------------------------
// Block geometry
// ---------------------------------------------------------------------------------------------

/// The block's place in a grid of `ceil(w / bw) × ceil(h / bh) × planes` tiles (a 1D grid; the
/// decomposition is block-uniform): `(plane, first row, first column)`.
#[inline(always)]
fn tile_origin<T>(a: &Args<T>, bw: u32, bh: u32) -> (u64, i32, i32) {
    let gx = a.w.div_ceil(bw);
    let gy = a.h.div_ceil(bh);
    let b = block_idx();
    let (bx, rest) = (b % gx, b / gx);
    let (by, plane) = (rest % gy, rest / gy);
    (plane as u64, (by * bh) as i32, (bx * bw) as i32)
}

/// The `(plane, first row, first column)` of this *warp*'s `bw × bh` tile, tiles numbered warp by
/// warp over the grid (columns fastest, then rows, then planes: `a.tiles`, which the host built
/// for `bw × bh` tiles, with fewer than 2^32 warps per launch); `None` past the last tile. The
/// dividers take the place of two integer divisions (about 60 instructions of a word-tile
/// warp's prologue). With `edges_first`, the rows of tiles go in [`edge_strips_first`] order.
#[inline(always)]
fn warp_tile_origin<T>(a: &Args<T>, bw: u32, bh: u32, edges_first: bool) -> Option<(u64, i32, i32)> {
    let t = block_idx() * (ROW_VECTOR_THREADS / 32) + warp_idx();
    let (rest, bx) = a.tiles.across.divrem(t);
    let (plane, by) = a.tiles.down.divrem(rest);
    let by = if edges_first {
        edge_strips_first(by, a.tiles.down.d)
    } else {
        by
    };
    ((plane as u64) < a.planes).then_some((plane as u64, (by * bh) as i32, (bx * bw) as i32))
}

/// The row of tiles that launch-order row `by` (of `rows`) takes: the plane's last row of tiles
/// first, then the others from the top. The first and last strips of a word tile take its
/// border-mapped path, whose warps run longest; in the plain order the last strip's warps are the
/// grid's last and ran on after the rest had finished. Launched first, they overlap the interior:
/// on the H100 (u8 8192², same calls) the 5 × 5 dilation went from 60.4–60.6 to 53.7 µs (the SMs
/// active 94% of the kernel instead of 82%), the 3 × 3 dilation from 50.7–50.9 to 49.5–49.7, the
/// Gaussian from 50.9–51.0 to 49.4–49.5 and Sobel from 75.8–76.3 to 74.7–74.9.
#[inline(always)]
fn edge_strips_first(by: u32, rows: u32) -> u32 {
    if by == 0 { rows - 1 } else { by - 1 }
}

/// [`warp_tile_origin`] by two integer divisions by the tile counts instead of `a.tiles` (for
/// the kernels where that measured faster: [`WordFilter::DIVIDED_ORIGIN`]).
#[inline(always)]
fn warp_tile_origin_divided<T>(a: &Args<T>, bw: u32, bh: u32, edges_first: bool) -> Option<(u64, i32, i32)> {
    let gx = a.w.div_ceil(bw) as u64;
    let gy = a.h.div_ceil(bh) as u64;
    let t = block_idx() as u64 * (ROW_VECTOR_THREADS / 32) as u64 + warp_idx() as u64;
    let (bx, rest) = (t % gx, t / gx);
    let (by, plane) = (rest % gy, rest / gy);
    let by = if edges_first {
        edge_strips_first(by as u32, gy as u32) as u64
    } else {
        by
    };
    (plane < a.planes).then_some((plane, (by * bh as u64) as i32, (bx * bw as u64) as i32))
}

/// The one output `(plane, row, col)` of this thread in a grid of 32 × 8-output blocks (warps on
/// rows, lanes on columns); `None` past the plane's edge.
#[inline(always)]
fn thread_pixel<T>(a: &Args<T>) -> Option<(u64, i32, i32)> {
    let (p, r0, c0) = tile_origin(a, 32, 8);
    let (r, c) = (r0 + (thread_idx() >> 5) as i32, c0 + (thread_idx() & 31) as i32);
    (r < a.h as i32 && c < a.w as i32).then_some((p, r, c))
}

/// Flat index of `(row, col)` of plane `p`.
#[inline(always)]
fn flat<T>(a: &Args<T>, p: u64, r: i32, c: i32) -> usize {
    ((p * a.h as u64 + r as u64) * a.w as u64 + c as u64) as usize
}

// ---------------------------------------------------------------------------------------------
// OnePixel, MultiPixel
// ---------------------------------------------------------------------------------------------

/// One output per thread; blocks of 32 × 8 outputs.
pub unsafe fn one_pixel<F: Fold>(x: *const F::In, y: *mut F::Out, a: &Args<F::In>) {
    let Some((p, r, c)) = thread_pixel(a) else {
        return;
    };
    let plane = Plane::of(x, p, a);
    let mut acc = F::start();
    let mut tap = 0;
    for i in 0..a.kh as i32 {
        let row = plane.row(r + i - a.ay as i32);
        for j in 0..a.kw as i32 {
            // SAFETY: row from plane.row.
            acc = F::take(acc, unsafe { plane.at(row, c + j - a.ax as i32) }, tap, a);
            tap += 1;
        }
    }
    // SAFETY: (r, c) is inside the plane; y holds the launch's planes.
    unsafe { y.add(flat(a, p, r, c)).write(F::finish(acc, a)) }
}

/// A 4 × 4 block of outputs per thread: outputs `(r0 + ty + 8m, c0 + tx + 32n)`, so each load
/// instruction of a warp reads 32 neighbouring columns. Blocks of 128 × 32 outputs.
pub unsafe fn multi_pixel<F: Fold>(x: *const F::In, y: *mut F::Out, a: &Args<F::In>) {
    const M: usize = MULTI_PIXEL as usize;
    let (p, r0, c0) = tile_origin(a, 32 * MULTI_PIXEL, 8 * MULTI_PIXEL);
    let (r0, c0) = (r0 + (thread_idx() >> 5) as i32, c0 + (thread_idx() & 31) as i32);
    let plane = Plane::of(x, p, a);
    let mut acc = [[F::start(); M]; M];
    let mut tap = 0;
    for i in 0..a.kh as i32 {
        let mut rows = [None; M];
        crate::unroll!(M, |m| {
            rows[m] = plane.row(r0 + 8 * m as i32 + i - a.ay as i32);
        });
        for j in 0..a.kw as i32 {
            crate::unroll!(M, |n| {
                let c = c0 + 32 * n as i32 + j - a.ax as i32;
                crate::unroll!(M, |m| {
                    // SAFETY: rows from plane.row.
                    acc[m][n] = F::take(acc[m][n], unsafe { plane.at(rows[m], c) }, tap, a);
                });
            });
            tap += 1;
        }
    }
    crate::unroll!(M, |m| {
        crate::unroll!(M, |n| {
            let (r, c) = (r0 + 8 * m as i32, c0 + 32 * n as i32);
            if r < a.h as i32 && c < a.w as i32 {
                // SAFETY: inside the plane.
                unsafe { y.add(flat(a, p, r, c)).write(F::finish(acc[m][n], a)) }
            }
        });
    });
}

// ---------------------------------------------------------------------------------------------
// SharedTile, ComposedShared
// ---------------------------------------------------------------------------------------------

/// Stages the extended plane's samples `[r0 − ay, r0 − ay + th) × [c0 − ax, c0 − ax + tw)` into
/// `tile` (row-major, `tw` per row): warps on rows, lanes on columns (coalesced).
#[inline(always)]
unsafe fn stage_tile<T: Pixel>(plane: &Plane<T>, tile: *mut T, top: i32, left: i32, th: u32, tw: u32) {
    let (tx, ty) = (thread_idx() & 31, thread_idx() >> 5);
    let mut tr = ty;
    while tr < th {
        let row = plane.row(top + tr as i32);
        let mut tc = tx;
        while tc < tw {
            // SAFETY: tile holds th · tw elements; row from plane.row.
            unsafe { tile.add((tr * tw + tc) as usize).write(plane.at(row, left + tc as i32)) };
            tc += 32;
        }
        tr += BLOCK_THREADS / 32;
    }
}

/// Thread `(tx, ty)`'s outputs of a 64 × 32 tile: `(ty + 8m, tx + 32n)`, `m < 4`, `n < 2`.
const TILE_M: usize = (TILE_H / 8) as usize;
const TILE_N: usize = (TILE_W / 32) as usize;

/// Writes the tile's outputs that lie inside the plane: `$value` with `$m`, `$n` (the thread's
/// output indices, constants after unrolling) and `$tr`, `$tc` (tile row and column) bound.
macro_rules! write_tile {
    ($a:expr, $y:expr, $p:expr, $r0:expr, $c0:expr, |$m:ident, $n:ident, $tr:ident, $tc:ident| $value:expr) => {{
        let (tx, ty) = (thread_idx() & 31, thread_idx() >> 5);
        crate::unroll!(TILE_M, |$m| {
            crate::unroll!(TILE_N, |$n| {
                let ($tr, $tc) = (ty + 8 * $m as u32, tx + 32 * $n as u32);
                let (r, c) = ($r0 + $tr as i32, $c0 + $tc as i32);
                if r < $a.h as i32 && c < $a.w as i32 {
                    // SAFETY: inside the plane; y holds the launch's planes.
                    unsafe { $y.add(flat($a, $p, r, c)).write($value) }
                }
            });
        });
    }};
}

/// The block's 64 × 32 outputs from a staged tile (dynamic shared memory: `tile_smem_bytes`).
pub unsafe fn shared_tile<F: Fold>(x: *const F::In, y: *mut F::Out, a: &Args<F::In>) {
    let (p, r0, c0) = tile_origin(a, TILE_W, TILE_H);
    let plane = Plane::of(x, p, a);
    // SAFETY: the launch provides tile_smem_bytes(kh, kw, size, false).
    let tile = unsafe { dynamic_shared::<F::In>() };
    let tw = TILE_W + a.kw - 1;
    // SAFETY: staged before the barrier every thread reaches.
    unsafe {
        stage_tile(&plane, tile, r0 - a.ay as i32, c0 - a.ax as i32, TILE_H + a.kh - 1, tw);
        sync_threads();
    }
    let (tx, ty) = (thread_idx() & 31, thread_idx() >> 5);
    let mut acc = [[F::start(); TILE_N]; TILE_M];
    let mut tap = 0;
    for i in 0..a.kh {
        for j in 0..a.kw {
            crate::unroll!(TILE_M, |m| {
                crate::unroll!(TILE_N, |n| {
                    let e = (ty + 8 * m as u32 + i) * tw + tx + 32 * n as u32 + j;
                    // SAFETY: inside the staged tile.
                    acc[m][n] = F::take(acc[m][n], unsafe { *tile.add(e as usize) }, tap, a);
                });
            });
            tap += 1;
        }
    }
    write_tile!(a, y, p, r0, c0, |m, n, _tr, _tc| F::finish(acc[m][n], a));
}

/// A max/min of an odd square `k = 2h + 1` as `h` passes of 3 × 3 over the staged tile, through
/// two shared buffers (`tile_smem_bytes(k, k, size, true)`). Pass `s` computes the tile rows and
/// columns `[s, extent − s)` from pass `s − 1`'s, so after `h` passes the output tile is exact.
pub unsafe fn composed_shared<E: Extremum>(x: *const E::T, y: *mut E::T, a: &Args<E::T>) {
    let (p, r0, c0) = tile_origin(a, TILE_W, TILE_H);
    let plane = Plane::of(x, p, a);
    let half = a.kh / 2;
    let (th, tw) = (TILE_H + a.kh - 1, TILE_W + a.kw - 1);
    // SAFETY: the launch provides two tiles (tile_smem_bytes(.., true)).
    let first = unsafe { dynamic_shared::<E::T>() };
    let second = unsafe { first.byte_add(tile_smem_bytes(a.kh, a.kw, E::T::SIZE as u32, true) as usize / 2) };
    // SAFETY: staged before the barrier.
    unsafe {
        stage_tile(&plane, first, r0 - a.ay as i32, c0 - a.ax as i32, th, tw);
        sync_threads();
    }
    let (tx, ty) = (thread_idx() & 31, thread_idx() >> 5);
    let (mut src, mut dst) = (first, second);
    for s in 1..=half {
        let mut tr = s + ty;
        while tr < th - s {
            let mut tc = s + tx;
            while tc < tw - s {
                let mut acc = E::START;
                crate::unroll!(3, |i| {
                    crate::unroll!(3, |j| {
                        let e = (tr + i as u32 - 1) * tw + tc + j as u32 - 1;
                        // SAFETY: rows and columns [s − 1, extent − s + 1) hold pass s − 1.
                        acc = E::op(acc, unsafe { *src.add(e as usize) });
                    });
                });
                // SAFETY: inside the tile.
                unsafe { dst.add((tr * tw + tc) as usize).write(acc) };
                tc += 32;
            }
            tr += BLOCK_THREADS / 32;
        }
        // SAFETY: every thread runs the same passes.
        unsafe { sync_threads() };
        (src, dst) = (dst, src);
    }
    // SAFETY (of the read): src holds the last pass.
    write_tile!(a, y, p, r0, c0, |_m, _n, tr, tc| *src
        .add(((tr + half) * tw + tc + half) as usize));
}

// ---------------------------------------------------------------------------------------------
// Separable passes
// ---------------------------------------------------------------------------------------------

/// Column pass: output `(r, c)` folds `kh` samples of column `c` from row `r − ay`. One output per
/// thread, lanes on neighbouring columns.
pub unsafe fn pass_cols<F: Fold>(x: *const F::In, y: *mut F::Out, a: &Args<F::In>) {
    let Some((p, r, c)) = thread_pixel(a) else {
        return;
    };
    let plane = Plane::of(x, p, a);
    let mut acc = F::start();
    for i in 0..a.kh {
        let row = plane.row(r + i as i32 - a.ay as i32);
        let v = match row {
            // SAFETY: c < w.
            Some(q) => unsafe { F::In::load(q.add(c as usize)) },
            None => plane.cval,
        };
        acc = F::take(acc, v, i, a);
    }
    // SAFETY: inside the plane.
    unsafe { y.add(flat(a, p, r, c)).write(F::finish(acc, a)) }
}

/// Row pass: output `(r, c)` folds `kw` samples of row `r` from column `c − ax`.
pub unsafe fn pass_rows<F: Fold>(x: *const F::In, y: *mut F::Out, a: &Args<F::In>) {
    let Some((p, r, c)) = thread_pixel(a) else {
        return;
    };
    let plane = Plane::of(x, p, a);
    let row = plane.row(r);
    let mut acc = F::start();
    for j in 0..a.kw {
        // SAFETY: row from plane.row.
        acc = F::take(acc, unsafe { plane.at(row, c + j as i32 - a.ax as i32) }, j, a);
    }
    // SAFETY: inside the plane.
    unsafe { y.add(flat(a, p, r, c)).write(F::finish(acc, a)) }
}

/// Prefix and suffix scans of van Herk blocks of `k` samples: `line[e]` (element `e` at
/// `line[e · stride]`, `len` elements) becomes the fold of its block's samples up to `e`, and
/// `suffix[e · stride]` the fold from `e` to its block's end. Block `b` is scanned by thread
/// `first + b · step`'s loop.
#[inline(always)]
unsafe fn van_herk_scan<E: Extremum>(
    line: *mut E::T,
    suffix: *mut E::T,
    len: u32,
    stride: u32,
    k: u32,
    first: u32,
    step: u32,
) {
    let mut b = first;
    while b * k < len {
        let (start, end) = (b * k, ((b + 1) * k).min(len));
        let mut m = E::START;
        let mut e = end;
        while e > start {
            e -= 1;
            // SAFETY: e < len.
            unsafe {
                m = E::op(m, *line.add((e * stride) as usize));
                suffix.add((e * stride) as usize).write(m);
            }
        }
        m = E::START;
        while e < end {
            // SAFETY: as above; the prefix overwrites the sample it has just read.
            unsafe {
                let q = line.add((e * stride) as usize);
                m = E::op(m, *q);
                q.write(m);
            }
            e += 1;
        }
        b += step;
    }
}

/// Row pass in O(1) per output: a block stages `a.strip` outputs' samples of one row (plus the
/// `kw − 1` halo), scans van Herk blocks of `kw`, then output `o` is
/// `suffix[o] ⊕ prefix[o + kw − 1]`. Shared memory: `VAN_HERK_SMEM`.
pub unsafe fn van_herk_rows<E: Extremum>(x: *const E::T, y: *mut E::T, a: &Args<E::T>) {
    let tile = a.strip;
    let tiles = a.w.div_ceil(tile);
    let (b, tid) = (block_idx(), thread_idx());
    let (t, row_all) = (b % tiles, b / tiles);
    let (p, r) = ((row_all / a.h) as u64, (row_all % a.h) as i32);
    let c0 = (t * tile) as i32;
    let plane = Plane::of(x, p, a);
    let len = tile + a.kw - 1;
    // SAFETY: the launch provides VAN_HERK_SMEM ≥ 2 · len elements (van_herk_row_tile).
    let line = unsafe { dynamic_shared::<E::T>() };
    let suffix = unsafe { line.add(len as usize) };
    let row = plane.row(r);
    let mut e = tid;
    while e < len {
        // SAFETY: e < len; row from plane.row.
        unsafe { line.add(e as usize).write(plane.at(row, c0 - a.ax as i32 + e as i32)) };
        e += BLOCK_THREADS;
    }
    // SAFETY: barriers reached by every thread; scans stay inside the line.
    unsafe {
        sync_threads();
        van_herk_scan::<E>(line, suffix, len, 1, a.kw, tid, BLOCK_THREADS);
        sync_threads();
    }
    let mut o = tid;
    while o < tile && c0 + (o as i32) < a.w as i32 {
        // SAFETY: o + kw − 1 < len; inside the plane.
        unsafe {
            let v = E::op(*suffix.add(o as usize), *line.add((o + a.kw - 1) as usize));
            y.add(flat(a, p, r, c0 + o as i32)).write(v);
        }
        o += BLOCK_THREADS;
    }
}

/// Column pass in O(1) per output: a block owns `VAN_HERK_COLS` columns and `a.strip` output
/// rows; lanes on columns, the block's 8 warps on van Herk blocks of `kh` rows.
pub unsafe fn van_herk_cols<E: Extremum>(x: *const E::T, y: *mut E::T, a: &Args<E::T>) {
    const COLS: u32 = VAN_HERK_COLS;
    const GROUPS: u32 = BLOCK_THREADS / COLS;
    let (p, r0, c0) = tile_origin(a, COLS, a.strip);
    let plane = Plane::of(x, p, a);
    let len = a.strip + a.kh - 1;
    let (lane, g) = (thread_idx() % COLS, thread_idx() / COLS);
    let c = c0 + lane as i32;
    // SAFETY: the launch provides VAN_HERK_SMEM ≥ 2 · len · COLS elements (van_herk_col_tile).
    let line = unsafe { dynamic_shared::<E::T>() };
    let suffix = unsafe { line.add((len * COLS) as usize) };
    let col = plane.col(c.min(a.w as i32 - 1));
    let mut e = g;
    while e < len {
        let v = match (plane.row(r0 - a.ay as i32 + e as i32), col) {
            // SAFETY: the column is below w.
            (Some(q), Some(j)) => unsafe { E::T::load(q.add(j as usize)) },
            _ => plane.cval,
        };
        // SAFETY: inside the staged columns.
        unsafe { line.add((e * COLS + lane) as usize).write(v) };
        e += GROUPS;
    }
    // SAFETY: as van_herk_rows.
    unsafe {
        sync_threads();
        van_herk_scan::<E>(
            line.add(lane as usize),
            suffix.add(lane as usize),
            len,
            COLS,
            a.kh,
            g,
            GROUPS,
        );
        sync_threads();
    }
    if c >= a.w as i32 {
        return;
    }
    let mut o = g;
    while o < a.strip && r0 + (o as i32) < a.h as i32 {
        // SAFETY: o + kh − 1 < len; inside the plane.
        unsafe {
            let v = E::op(
                *suffix.add((o * COLS + lane) as usize),
                *line.add(((o + a.kh - 1) * COLS + lane) as usize),
            );
            y.add(flat(a, p, r0 + o as i32, c)).write(v);
        }
        o += GROUPS;
    }
}

// ---------------------------------------------------------------------------------------------
// RowVector
// ---------------------------------------------------------------------------------------------

/// A separable `K × K` filter the row-vector kernel applies in registers: a horizontal 1D filter
/// on each row, then a vertical one on `K` rows of its results.
pub trait Separable<const K: usize> {
    type In: Pixel;
    type Mid: Copy;
    type Out: Pixel;
    fn horizontal(w: [Self::In; K]) -> Self::Mid;
    fn vertical(w: [Self::Mid; K]) -> Self::Out;
}

macro_rules! extremum_separable {
    ($($e:ident),*) => {$(
        /// The window's extremum, a row's then a column's (max and min are separable).
        impl<T: Pixel + MorphValue, const K: usize> Separable<K> for $e<T> {
            type In = T;
            type Mid = T;
            type Out = T;
            #[inline(always)]
            fn horizontal(w: [T; K]) -> T {
                let mut m = w[0];
                crate::unroll!(K, |i| {
                    m = <Self as Extremum>::op(m, w[i]);
                });
                m
            }
            #[inline(always)]
            fn vertical(w: [T; K]) -> T {
                <Self as Separable<K>>::horizontal(w)
            }
        }
    )*};
}
extremum_separable!(Max, Min);

/// The classic integer Gaussian `[1 2 1]ᵀ[1 2 1] / 16`: exact integer sums, `(Σ + 8) >> 4`
/// (round half up); `f32`: the same weights, `Σ / 16`.
pub struct Gauss121<I, O>(PhantomData<(I, O)>);
/// Sobel along axis 0 (rows: `[-1 0 1]` down the column, `[1 2 1]` along the row), scipy's sign.
pub struct Sobel0<I, O>(PhantomData<(I, O)>);
/// Sobel along axis 1 (columns: `[-1 0 1]` along the row, `[1 2 1]` down the column).
pub struct Sobel1<I, O>(PhantomData<(I, O)>);

/// Arithmetic of the fixed 3 × 3 filters: integers widen to `i32`, `f32` stays.
pub trait Widen: Pixel {
    type W: Copy + core::ops::Add<Output = Self::W> + core::ops::Sub<Output = Self::W>;
    fn widen(self) -> Self::W;
}
impl Widen for u8 {
    type W = i32;
    #[inline(always)]
    fn widen(self) -> i32 {
        self as i32
    }
}
impl Widen for u16 {
    type W = i32;
    #[inline(always)]
    fn widen(self) -> i32 {
        self as i32
    }
}
impl Widen for f32 {
    type W = f32;
    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }
}

/// The output of a fixed filter from its widened sum (`GAUSS`: the Gaussian's division by 16).
pub trait Narrow<W>: Pixel {
    fn narrow(v: W, gauss: bool) -> Self;
}
impl<O: FromI32> Narrow<i32> for O {
    #[inline(always)]
    fn narrow(v: i32, gauss: bool) -> O {
        O::saturate(if gauss { round_shift(v, 4) } else { v })
    }
}
impl Narrow<f32> for f32 {
    #[inline(always)]
    fn narrow(v: f32, gauss: bool) -> f32 {
        if gauss { v * (1.0 / 16.0) } else { v }
    }
}

#[inline(always)]
fn smooth<W: Copy + core::ops::Add<Output = W>>(w: [W; 3]) -> W {
    w[0] + w[1] + w[1] + w[2]
}

macro_rules! fixed3 {
    ($($op:ident: $h:ident, $v:ident, $gauss:literal;)*) => {$(
        impl<I: Widen, O: Narrow<I::W>> Separable<3> for $op<I, O> {
            type In = I;
            type Mid = I::W;
            type Out = O;
            #[inline(always)]
            fn horizontal(w: [I; 3]) -> I::W {
                $h([w[0].widen(), w[1].widen(), w[2].widen()])
            }
            #[inline(always)]
            fn vertical(w: [I::W; 3]) -> O {
                O::narrow($v(w), $gauss)
            }
        }
    )*};
}

#[inline(always)]
fn derive<W: Copy + core::ops::Sub<Output = W>>(w: [W; 3]) -> W {
    w[2] - w[0]
}

fixed3! {
    Gauss121: smooth, smooth, true;
    Sobel0: smooth, derive, false;
    Sobel1: derive, smooth, false;
}

/// The loads of one row position for one row-vector thread.
#[derive(Clone, Copy)]
struct RowFetch {
    /// The thread's 16 bytes of samples (zero unless `fast`).
    words: [u32; 4],
    /// Lane 0: the 8 bytes before its vector; lane 31: the 8 bytes after it (the halo no lane of
    /// the warp holds); zero when outside the row.
    edge: [u32; 2],
    /// The row is in memory (not a constant border row), the launch has vector rows and the
    /// thread's columns lie in the row.
    fast: bool,
}

impl RowFetch {
    const NONE: RowFetch = RowFetch {
        words: [0; 4],
        edge: [0; 2],
        fast: false,
    };
}

/// Issues row position `r`'s loads for the thread at columns `[c0, c0 + P)` (16 bytes): one
/// 16-byte load, and on the warp's edge lanes one 8-byte load of the halo outside the warp.
#[inline(always)]
unsafe fn fetch_row<T: Pixel, const P: usize>(plane: &Plane<T>, r: i32, c0: i32, vector_rows: bool) -> RowFetch {
    const { assert!(P * T::SIZE == 16) };
    let fast = vector_rows && c0 < plane.w;
    let mut f = RowFetch::NONE;
    if let Some(q) = plane.row(r)
        && fast
    {
        f.fast = true;
        // SAFETY: c0 + P ≤ w (rows of whole vectors), so the vector lies in the row, 16-byte
        // aligned; the edge loads are the last 8 bytes of the previous vector (c0 > 0) or the
        // first 8 of the next one (c0 + P < w), 8-byte aligned.
        unsafe {
            f.words = load_nc_v4(q.add(c0 as usize) as *const [u32; 4]);
            let lane = lane_idx();
            if lane == 0 && c0 > 0 {
                f.edge = load_nc_v2(q.add(c0 as usize - 8 / T::SIZE) as *const [u32; 2]);
            } else if lane == 31 && c0 + (P as i32) < plane.w {
                f.edge = load_nc_v2(q.add(c0 as usize + P) as *const [u32; 2]);
            }
        }
    }
    f
}

/// Row position `r`'s `P` samples at columns `[c0, c0 + P)` and the `H ≤ 2` halo samples each
/// side, from its fetch: the halo from the neighbouring lanes' vectors by `shfl.sync` (every lane
/// of the warp must call this) or the edge lanes' own loads, border-mapped element loads (the
/// row mapped again: cold paths only) at the row's ends and when the launch has no vector rows.
// unroll! bodies past a generic bound are dead code the lint cannot see through.
#[allow(unconditional_panic)]
#[inline(always)]
unsafe fn expand_row<T: Pixel, const P: usize, const H: usize>(
    plane: &Plane<T>,
    r: i32,
    c0: i32,
    f: &RowFetch,
) -> ([T; 2], [T; P], [T; 2]) {
    const { assert!(H <= 2) };
    let lane = lane_idx();
    let up = [shfl_up_u32(f.words[2], 1), shfl_up_u32(f.words[3], 1)];
    let down = [shfl_down_u32(f.words[0], 1), shfl_down_u32(f.words[1], 1)];
    let prev = if lane == 0 { f.edge } else { up };
    let next = if lane == 31 { f.edge } else { down };
    let mut mid = [plane.cval; P];
    // One branch per part (not one per sample): the fast parts are register moves.
    if f.fast {
        crate::unroll!(P, |i| {
            mid[i] = T::lane(&f.words, i);
        });
    } else {
        let row = plane.row(r);
        crate::unroll!(P, |i| {
            // SAFETY: row from plane.row.
            mid[i] = unsafe { plane.at(row, c0 + i as i32) };
        });
    }
    let (mut left, mut right) = ([plane.cval; 2], [plane.cval; 2]);
    // Halo sample t: columns c0 − H + t (left) and c0 + P + t (right).
    if f.fast && c0 > 0 {
        crate::unroll!(H, |t| {
            left[t] = T::lane(&[0, 0, prev[0], prev[1]], P - H + t);
        });
    } else {
        let row = plane.row(r);
        crate::unroll!(H, |t| {
            // SAFETY: row from plane.row.
            left[t] = unsafe { plane.at(row, c0 - H as i32 + t as i32) };
        });
    }
    if f.fast && c0 + (P as i32) < plane.w {
        crate::unroll!(H, |t| {
            right[t] = T::lane(&[next[0], next[1], 0, 0], t);
        });
    } else {
        let row = plane.row(r);
        crate::unroll!(H, |t| {
            // SAFETY: as above.
            right[t] = unsafe { plane.at(row, c0 + P as i32 + t as i32) };
        });
    }
    (left, mid, right)
}

/// Stores `P` outputs at `dst` (columns `c0 ..` of a row of `w`): 16-byte vectors when the
/// launch has vector rows and the thread's `P` columns are inside the row, else element stores.
// unroll! bodies past a generic bound are dead code the lint cannot see through.
#[allow(unconditional_panic)]
#[inline(always)]
unsafe fn store_row_vector<O: Pixel, const P: usize>(dst: *mut O, vals: &[O; P], c0: i32, w: i32, vector_rows: bool) {
    const { assert!((P * O::SIZE).is_multiple_of(16)) };
    let per = 4 / O::SIZE;
    if vector_rows && c0 + P as i32 <= w {
        crate::unroll!(P * O::SIZE / 16, |q| {
            let mut words = [0u32; 4];
            crate::unroll!(16 / O::SIZE, |e| {
                words[e / per] |= vals[16 / O::SIZE * q + e].bits() << (8 * O::SIZE * (e % per));
            });
            // SAFETY: aligned (vector rows), inside the row.
            unsafe { store_v4((dst as *mut [u32; 4]).add(q), words) };
        });
    } else {
        crate::unroll!(P, |i| {
            if c0 + (i as i32) < w {
                // SAFETY: inside the row.
                unsafe { dst.add(i).write(vals[i]) };
            }
        });
    }
}

/// The row-vector kernel: each warp owns `32 · P` columns (one 16-byte vector per lane) of one
/// strip of `a.strip` rows — warps, not blocks, are the tiles, so rows narrower than a block
/// (512 u8 pixels fill one warp) keep every lane busy; a block's 4 warps take consecutive tiles
/// (neighbouring column groups of a wide row). Each lane walks down its `P` columns, applying
/// `S`'s horizontal filter to each row and its vertical one to the last `K` rows' results (a
/// register ring). Each row's loads are issued `K` rows before the row is filtered: a thread's
/// rows are otherwise a chain of dependent load latencies with one load in flight, too few bytes
/// in flight to cover the memory latency at the occupancy its registers allow. The loop is
/// unrolled `K` times so that ring and fetch slots are compile-time registers (no moves).
/// Registers, no shared memory.
// unroll! bodies past a generic bound are dead code the lint cannot see through.
#[allow(unconditional_panic)]
// Inlined into each entry, so `a` stays in parameter space (a call would copy it to local memory).
#[inline(always)]
pub unsafe fn row_vector<S: Separable<K>, const P: usize, const K: usize>(
    x: *const S::In,
    y: *mut S::Out,
    a: &Args<S::In>,
) {
    const { assert!(K % 2 == 1 && K <= 5) };
    let h = K / 2;
    let Some((p, r_first, c_warp)) = warp_tile_origin(a, 32 * P as u32, a.strip, false) else {
        return; // a warp past the last tile (warp-uniform: no lane of it has work)
    };
    let c0 = c_warp + (lane_idx() * P as u32) as i32;
    let plane = Plane::of(x, p, a);
    let vector_rows = a.vector_rows != 0;
    let r_end = (r_first + a.strip as i32).min(a.h as i32);
    let r_stop = r_end + h as i32;
    let mut r = r_first - h as i32;
    // Slot `s` of `fetched` holds row position r's loads, issued K rows earlier; slot `s` of
    // `ring` receives its horizontal results. Positions past r_stop are not fetched.
    let mut fetched = [RowFetch::NONE; K];
    crate::unroll!(K, |d| {
        if r + (d as i32) < r_stop {
            // SAFETY: every row position is border-mapped.
            fetched[d] = unsafe { fetch_row::<S::In, P>(&plane, r + d as i32, c0, vector_rows) };
        }
    });
    // The ring's slots are written before any output reads them (outputs start at r_first + h).
    let mut ring = [[S::horizontal([plane.cval; K]); P]; K];
    'rows: loop {
        crate::unroll!(K, |s| {
            if r >= r_stop {
                break 'rows;
            }
            let current = fetched[s];
            if r + (K as i32) < r_stop {
                // SAFETY: border-mapped row position.
                fetched[s] = unsafe { fetch_row::<S::In, P>(&plane, r + K as i32, c0, vector_rows) };
            }
            // SAFETY: every lane of the warp runs the same rows (block-uniform bounds).
            let (left, mid, right) = unsafe { expand_row::<S::In, P, 2>(&plane, r, c0, &current) };
            crate::unroll!(P, |i| {
                let mut w = [mid[0]; K];
                crate::unroll!(K, |j| {
                    let col = i as isize + j as isize - h as isize;
                    w[j] = if col < 0 {
                        left[(col + 2) as usize]
                    } else if col >= P as isize {
                        right[(col - P as isize) as usize]
                    } else {
                        mid[col as usize]
                    };
                });
                ring[s][i] = S::horizontal(w);
            });
            if r >= r_first + h as i32 && c0 < a.w as i32 {
                let mut out = [S::vertical([ring[0][0]; K]); P];
                crate::unroll!(P, |i| {
                    // Oldest to newest: slots s + 1, …, s + K (mod K).
                    let mut v = [ring[0][i]; K];
                    crate::unroll!(K, |k| {
                        v[k] = ring[(s + 1 + k) % K][i];
                    });
                    out[i] = S::vertical(v);
                });
                // SAFETY: output row r − h is inside the plane.
                unsafe {
                    store_row_vector(y.add(flat(a, p, r - h as i32, c0)), &out, c0, a.w as i32, vector_rows);
                }
            }
            r += 1;
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Elementwise finishers
// ---------------------------------------------------------------------------------------------

/// `y[i] = a[i] − b[i]` (wrapping for integers: the morphological gradient's dilation is never
/// below its erosion, both windows holding the centre sample), grid-stride.
pub unsafe fn difference<T: Pixel + Diff>(a: *const T, b: *const T, y: *mut T, n: u64) {
    let mut i = global_thread_idx();
    while i < n {
        // SAFETY: i < n, the buffers' length.
        unsafe {
            y.add(i as usize)
                .write(T::diff(T::load(a.add(i as usize)), T::load(b.add(i as usize))))
        };
        i += grid_threads();
    }
}

/// Subtraction of the morphology elements.
pub trait Diff {
    fn diff(a: Self, b: Self) -> Self;
}
impl Diff for u8 {
    #[inline(always)]
    fn diff(a: u8, b: u8) -> u8 {
        a.wrapping_sub(b)
    }
}
impl Diff for u16 {
    #[inline(always)]
    fn diff(a: u16, b: u16) -> u16 {
        a.wrapping_sub(b)
    }
}
impl Diff for f32 {
    #[inline(always)]
    fn diff(a: f32, b: f32) -> f32 {
        a - b
    }
}

/// `y[i] = √(a[i]² + b[i]²)` in f32 (the gradient magnitude of two Sobel images), grid-stride.
pub unsafe fn magnitude<T: Pixel + Into<f32>>(a: *const T, b: *const T, y: *mut f32, n: u64) {
    let mut i = global_thread_idx();
    while i < n {
        // SAFETY: i < n.
        unsafe {
            let (u, v): (f32, f32) = (T::load(a.add(i as usize)).into(), T::load(b.add(i as usize)).into());
            y.add(i as usize).write(core::intrinsics::sqrtf32(u * u + v * v));
        }
        i += grid_threads();
    }
}

// ---------------------------------------------------------------------------------------------
// Entries
// ---------------------------------------------------------------------------------------------

/// One `(x, y, args)` kernel entry named `$symbol` that calls the generic body `$body`.
macro_rules! entry {
    ($symbol:expr, $name:ident, $x:ty, $y:ty, $body:path) => {
        #[unsafe(export_name = $symbol)]
        pub unsafe extern "ptx-kernel" fn $name(x: *const $x, y: *mut $y, a: Filter2dArgs<$x>) {
            unsafe { $body(x, y, &a) }
        }
    };
}

/// Blocks per SM the word van Herk column pass of instance `$inst` is bounded to: 7 (73
/// registers). f32's NaN-propagating max/min (two compares and a select) needs one register more
/// than that: ptxas spilled 4 bytes at 7, so the f32 passes take 6.
macro_rules! col_words_min_blocks {
    (max_f32) => {
        6
    };
    (min_f32) => {
        6
    };
    ($inst:ident) => {
        7
    };
}

macro_rules! morph_entries {
    ($($inst:ident => $t:ty, $fold:ident, $lanes:literal;)*) => {$(
        pub mod $inst {
            use super::*;
            type F = $fold<$t>;

            entry!($crate::morph_kernel_name!($inst, "one_pixel"), one_pixel, $t, $t, super::one_pixel::<F>);
            entry!($crate::morph_kernel_name!($inst, "multi_pixel"), multi_pixel, $t, $t, super::multi_pixel::<F>);
            entry!($crate::morph_kernel_name!($inst, "shared_tile"), shared_tile, $t, $t, super::shared_tile::<F>);
            entry!($crate::morph_kernel_name!($inst, "composed_shared"), composed_shared, $t, $t, super::composed_shared::<F>);
            entry!($crate::morph_kernel_name!($inst, "pass_cols"), pass_cols, $t, $t, super::pass_cols::<F>);
            entry!($crate::morph_kernel_name!($inst, "pass_rows"), pass_rows, $t, $t, super::pass_rows::<F>);
            entry!($crate::morph_kernel_name!($inst, "van_herk_cols"), van_herk_cols, $t, $t, super::van_herk_cols::<F>);
            entry!($crate::morph_kernel_name!($inst, "van_herk_rows"), van_herk_rows, $t, $t, super::van_herk_rows::<F>);
            entry!($crate::morph_kernel_name!($inst, "row_vector3"), row_vector3, $t, $t, super::row_vector::<F, $lanes, 3>);
            #[unsafe(export_name = $crate::morph_kernel_name!($inst, "difference"))]
            pub unsafe extern "ptx-kernel" fn difference(a: *const $t, b: *const $t, y: *mut $t, n: u64) {
                unsafe { super::difference::<$t>(a, b, y, n) }
            }
            entry!($crate::morph_kernel_name!($inst, "row_vector5"), row_vector5, $t, $t, super::row_vector::<F, $lanes, 5>);
            entry!($crate::morph_kernel_name!($inst, "van_herk_col_words"), van_herk_col_words, $t, $t, super::van_herk_col_words::<F>);
            entry!($crate::morph_kernel_name!($inst, "doubling_rows"), doubling_rows, $t, $t, super::doubling_rows::<F, $lanes, 4, { DOUBLING_AHEAD as usize }, 0>);
            // Occupancy for latency hiding: at least 7 (column pass; f32 6, see
            // `col_words_min_blocks!`) and 4 (row pass, 16 bytes per lane) blocks of 4 warps per
            // SM, so ptxas keeps them within 73 (80) and 128 registers. u8 rows take the 8-byte
            // passes of `doubling_u8` (docs/PERFORMANCE.md).
            $crate::launch_bounds!($crate::morph_kernel_name!($inst, "van_herk_col_words"), 128, col_words_min_blocks!($inst));
            $crate::launch_bounds!($crate::morph_kernel_name!($inst, "doubling_rows"), 128, 4);
        }
    )*};
}
crate::for_each_morph_instance!(morph_entries);

macro_rules! linear_entries {
    ($($inst:ident => $i:ty, $o:ty, $fold:ident;)*) => {$(
        pub mod $inst {
            use super::*;
            type F = $fold<$i, $o>;

            entry!($crate::linear_kernel_name!($inst, "one_pixel"), one_pixel, $i, $o, super::one_pixel::<F>);
            entry!($crate::linear_kernel_name!($inst, "multi_pixel"), multi_pixel, $i, $o, super::multi_pixel::<F>);
            entry!($crate::linear_kernel_name!($inst, "shared_tile"), shared_tile, $i, $o, super::shared_tile::<F>);
        }
    )*};
}
crate::for_each_linear_instance!(linear_entries);

macro_rules! pass_entries {
    ($($inst:ident => $t:ty, $acc:ty;)*) => {$(
        pub mod $inst {
            use super::*;
            entry!($crate::linear_kernel_name!($inst, "cols"), cols, $t, $t, super::correlate_cols::<$t>);
            entry!($crate::linear_kernel_name!($inst, "rows"), rows, $t, $t, super::correlate_rows::<$t>);
        }
    )*};
}
crate::for_each_pass_instance!(pass_entries);

macro_rules! fixed3_entries {
    ($($inst:ident => $i:ty, $o:ty, $op:ident, $lanes:literal;)*) => {$(
        entry!($crate::fixed3_kernel_name!($inst), $inst, $i, $o, row_vector::<$op<$i, $o>, $lanes, 3>);
    )*};
}

/// The fixed 3 × 3 row-vector kernels (Gaussian, Sobel) and the Sobel magnitudes.
pub mod fixed3 {
    use super::*;
    crate::for_each_fixed3_instance!(fixed3_entries);

    #[unsafe(export_name = crate::fixed3_kernel_name!(magnitude_i16))]
    pub unsafe extern "ptx-kernel" fn magnitude_i16(a: *const i16, b: *const i16, y: *mut f32, n: u64) {
        unsafe { super::magnitude::<i16>(a, b, y, n) }
    }
    #[unsafe(export_name = crate::fixed3_kernel_name!(magnitude_f32))]
    pub unsafe extern "ptx-kernel" fn magnitude_f32(a: *const f32, b: *const f32, y: *mut f32, n: u64) {
        unsafe { super::magnitude::<f32>(a, b, y, n) }
    }
}

macro_rules! word_tile_entries {
    ($($inst:ident => $f:ty, $k:literal, $o:ty, $p:literal, $r:literal;)*) => {$(
        entry!($crate::word_tile_kernel_name!($inst), $inst, u8, $o, word_tile::<$f, $k, $p, $r>);
    )*};
}

macro_rules! word_tile_any_entries {
    ($($inst:ident => $f:ty, $k:literal, $o:ty, $p:literal, $r:literal;)*) => {$(
        entry!($crate::word_tile_any_kernel_name!($inst), $inst, u8, $o, word_tile_any::<$f, $k, $p, $r>);
    )*};
}

/// The word-tile kernels of u8 images whose rows are whole 16-byte vectors.
pub mod word_tile {
    use super::*;
    crate::for_each_word_tile_instance!(word_tile_entries);
}

/// The word-tile kernels of u8 images of any width and alignment.
pub mod word_tile_any {
    use super::*;
    crate::for_each_word_tile_instance!(word_tile_any_entries);
}

macro_rules! doubling_u8_entries {
    ($($inst:ident => $fold:ident, $steps:literal;)*) => {$(
        entry!($crate::doubling_u8_kernel_name!($inst), $inst, u8, u8, super::doubling_rows::<$fold<u8>, 8, 2, { DOUBLING_U8_AHEAD as usize }, $steps>);
        // 7 blocks of 4 warps per SM: 72 registers without spills (at 6 blocks ptxas took 75–80
        // in the whole-module build, which leaves room for 6 only).
        $crate::launch_bounds!($crate::doubling_u8_kernel_name!($inst), 128, 7);
    )*};
}

/// The u8 doubling row passes of 8 bytes per lane with a fixed number of doubling steps.
pub mod doubling_u8 {
    use super::*;
    crate::for_each_doubling_u8_instance!(doubling_u8_entries);
}

/// The u8 tile van Herk, max and min (windows up to 33 × 33): 256 threads, 3 blocks per SM.
pub mod tile_vh {
    use super::*;
    entry!(
        crate::tile_vh_kernel_name!(Max),
        max,
        u8,
        u8,
        tile::tile_van_herk::<Max<u8>>
    );
    entry!(
        crate::tile_vh_kernel_name!(Min),
        min,
        u8,
        u8,
        tile::tile_van_herk::<Min<u8>>
    );
    crate::launch_bounds!(crate::tile_vh_kernel_name!(Max), 256, 3);
    crate::launch_bounds!(crate::tile_vh_kernel_name!(Min), 256, 3);
}
