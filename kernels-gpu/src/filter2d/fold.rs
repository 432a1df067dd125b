//! What a window computes: the [`Fold`] of its samples (max and min, integer and float taps),
//! and scipy's 1D correlation passes in its own summation order.

use super::*;
use crate::abi::CastF64;

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

/// `v / 2^s` for `s = shift & !SHIFT_TRUNCATE`: rounded half up, or down (an arithmetic shift
/// floors) with [`SHIFT_TRUNCATE`].
#[inline(always)]
pub(super) fn round_shift(v: i32, shift: u32) -> i32 {
    let s = shift & !SHIFT_TRUNCATE;
    if s == 0 {
        v
    } else if shift & SHIFT_TRUNCATE != 0 {
        v >> s
    } else {
        v.wrapping_add(1 << (s - 1)) >> s
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
/// `correlate1d` does ([`CastF64`]).
pub trait PassPixel: Pixel + CastF64 {}
impl<T: Pixel + CastF64> PassPixel for T {}

/// One output of a 1D correlation pass with f64 taps from the bank, summed in scipy's order and
/// with its unfused multiply-adds (`NI_Correlate1D`): for symmetric taps
/// `x₀·w₀ + Σ_{j = −r..−1} (x_j + x_{−j})·w_j`, antisymmetric with `x_j − x_{−j}`, otherwise the
/// last tap first, then the others in order. `sample(d)` is the input at offset `d` along the axis.
#[inline(always)]
pub(super) fn scipy_correlate1d(k: u32, symmetry: u32, tap_offset: u32, sample: impl Fn(i32) -> f64) -> f64 {
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

const RUN: usize = PASS_RUN as usize;
const MAXB: usize = PASS_MAX_RADIUS as usize;
/// Samples a run's windows span at the largest radius: `RUN + 2 · MAXB`, loaded as 3 × 8.
const SPAN: usize = RUN + 2 * MAXB;
const _: () = assert!(SPAN == 3 * 8);

/// [`scipy_correlate1d`] for `RUN` consecutive outputs of symmetric or antisymmetric taps of
/// radius `before ≤ MAXB`, from `s[t]` = the sample at offset `t − MAXB` from the run's first
/// output. Every index is a constant (pair `m` of output `u` is `s[u + m]` with
/// `s[u + 2·MAXB − m]`, tap `m − MAXB`; pairs beyond the radius are skipped by a uniform test),
/// so the window stays in registers: each sample is converted to f64 once for the run, where
/// output-by-output summing converted it once per tap (f32 → f64 conversions run at a quarter of
/// the f64 add rate: they, not the arithmetic, bounded the pass).
#[inline(always)]
fn pair_run(s: &[f64; SPAN], before: usize, symmetry: u32, tap_offset: u32) -> [f64; RUN] {
    let w = |m: usize| f64::from_bits(bank_u64(tap_offset as u64 + 8 * (m + before - MAXB) as u64));
    let w0 = w(MAXB);
    let mut acc = [0.0; RUN];
    crate::unroll!(RUN, |u| {
        acc[u] = mul_rn(s[u + MAXB], w0);
    });
    crate::unroll!(MAXB, |m| {
        if m + before >= MAXB {
            let wj = w(m);
            crate::unroll!(RUN, |u| {
                let (l, r) = (s[u + m], s[u + 2 * MAXB - m]);
                let pair = if symmetry == TAPS_SYMMETRIC {
                    add_rn(l, r)
                } else {
                    sub_rn(l, r)
                };
                acc[u] = add_rn(acc[u], mul_rn(pair, wj));
            });
        }
    });
    acc
}

/// The samples the windows of a run of taps of radius `before` (`after`) read, `s[t]` =
/// `load(t)`, the sample at offset `t − MAXB` from the run's first output; the others (beyond
/// the radius: [`pair_run`] skips them) stay 0.
#[inline(always)]
fn run_window(before: usize, after: usize, load: impl Fn(usize) -> f64) -> [f64; SPAN] {
    let mut s = [0.0f64; SPAN];
    crate::unroll!(3, |h| {
        crate::unroll!(8, |q| {
            let t = 8 * h + q;
            if t + before >= MAXB && t < RUN + MAXB + after {
                s[t] = load(t);
            }
        });
    });
    s
}

/// One thread's run of a separable pass: outputs at positions `pos0 .. pos0 + RUN` (below `len`)
/// of a line read at `first` (position `pos0`) with `stride` between positions. A run of
/// [`pair_run`] taps whose windows lie inside the line loads its samples once at a fixed stride;
/// any other sums each output with [`scipy_correlate1d`], reading `mapped(position)` (the
/// border's sample). `put(u, v)` writes output `pos0 + u`.
///
/// # Safety
/// `first` is position `pos0` of the line, whose `len` positions lie `stride` apart.
#[inline(always)]
unsafe fn correlate_run<T: PassPixel>(
    a: &Args<T>,
    k: u32,
    (len, pos0): (i32, i32),
    (first, stride): (*const T, isize),
    mapped: impl Fn(i32) -> f64,
    put: impl Fn(usize, T),
) {
    let before = (k / 2) as i32;
    let after = k as i32 - 1 - before;
    if a.shift != TAPS_GENERAL && before as usize <= MAXB && pos0 >= before && pos0 + RUN as i32 + after <= len {
        let s = run_window(before as usize, after as usize, |t| {
            // SAFETY: positions pos0 − before ..= pos0 + RUN − 1 + after lie in the line.
            unsafe { T::load(first.offset((t as isize - MAXB as isize) * stride)) }.to_f64()
        });
        let acc = pair_run(&s, before as usize, a.shift, a.tap_offset);
        crate::unroll!(RUN, |u| {
            put(u, T::from_f64(acc[u]));
        });
    } else {
        for u in 0..(len - pos0).min(RUN as i32) {
            let v = scipy_correlate1d(k, a.shift, a.tap_offset, |d| mapped(pos0 + u + d));
            put(u as usize, T::from_f64(v));
        }
    }
}

/// Column pass of a separable correlation (taps `kh` at `tap_offset`, symmetry in `shift`): a
/// thread per column and `RUN` consecutive rows ([`correlate_run`]), lanes on neighbouring
/// columns, blocks of 32 columns × `8 · RUN` rows: every lane of a warp is at the same rows, so
/// a warp takes the register path or the per-output one as a whole.
pub unsafe fn correlate_cols<T: PassPixel>(x: *const T, y: *mut T, a: &Args<T>) {
    let (p, r, c) = tile_origin(a, 32, 8 * PASS_RUN);
    let (r0, c) = (
        r + ((thread_idx() >> 5) * PASS_RUN) as i32,
        c + (thread_idx() & 31) as i32,
    );
    if r0 >= a.h as i32 || c >= a.w as i32 {
        return;
    }
    let plane = Plane::of(x, p, a);
    let w = plane.w as isize;
    // SAFETY: (r0, c) is inside the plane; rows from plane.row; outputs inside the plane.
    unsafe {
        correlate_run(
            a,
            a.kh,
            (plane.h, r0),
            (plane.base.offset(r0 as isize * w + c as isize), w),
            |r| plane.at(plane.row(r), c).to_f64(),
            |u, v| y.add(flat(a, p, r0 + u as i32, c)).write(v),
        )
    }
}

const _: () = assert!(
    32 * PASS_ROW_WARPS == 128,
    "the launch bounds of rows_run (filter2d/mod.rs)"
);

/// Row pass of a separable correlation in runs, for [`pass_runs`] taps `kw`: a warp a row, a lane
/// `RUN` consecutive outputs, blocks of `32 · RUN` columns × [`PASS_ROW_WARPS`] rows.
///
/// The warp first stages its row's segment (its 32 runs and the halo of `MAXB` on each side) in
/// shared memory as f64: lanes on consecutive columns (coalesced), each sample mapped through the
/// border and converted once. Every lane then sums its run with [`pair_run`] from registers, a
/// row's ends included: runs read straight from global memory put a row end in every warp of a
/// short row, whose per-output border path the whole warp then ran (docs/PERFORMANCE.md). The
/// results go back through the same slots and leave coalesced.
///
/// Shared memory: [`PASS_ROW_SLOTS`] f64 per warp, sample `q` at `q + q / RUN`, so lane `l`'s
/// `t`-th sample sits at `9l + t + t / RUN`: distinct banks for 64-bit loads. Only warp barriers:
/// a warp's slots are its own.
pub unsafe fn correlate_rows_run<T: PassPixel>(x: *const T, y: *mut T, a: &Args<T>) {
    const SLOTS: usize = PASS_ROW_SLOTS as usize;
    const SEGMENT: usize = PASS_ROW_SEGMENT as usize;
    let slot = |q: usize| q + q / RUN;
    let (p, r, c) = tile_origin(a, 32 * PASS_RUN, PASS_ROW_WARPS);
    let (row, lane) = (r + warp_idx() as i32, lane_idx() as usize);
    if row >= a.h as i32 {
        return; // the whole warp
    }
    let plane = Plane::of(x, p, a);
    let line = plane.row(row);
    // SAFETY: the host launches with PASS_ROW_SHARED_BYTES, PASS_ROW_WARPS warps of SLOTS f64.
    let seg = unsafe { dynamic_shared::<f64>().add(warp_idx() as usize * SLOTS) };
    let first = c - MAXB as i32;
    let mut q = lane;
    while q < SEGMENT {
        // SAFETY: `line` from plane.row; slot(q) < SLOTS for q < SEGMENT.
        unsafe { seg.add(slot(q)).write(plane.at(line, first + q as i32).to_f64()) };
        q += 32;
    }
    // SAFETY: all 32 lanes reach it (no lane left before).
    unsafe { sync_warp() };
    let before = (a.kw / 2) as usize;
    let after = a.kw as usize - 1 - before;
    // SAFETY: slot(RUN · lane + t) < SLOTS.
    let s = run_window(before, after, |t| unsafe { *seg.add(slot(RUN * lane + t)) });
    let acc = pair_run(&s, before, a.shift, a.tap_offset);
    // SAFETY: every lane has read its samples before any overwrites them.
    unsafe { sync_warp() };
    crate::unroll!(RUN, |u| {
        // SAFETY: slot(RUN · lane + u) < SLOTS.
        unsafe { seg.add(slot(RUN * lane + u)).write(acc[u]) };
    });
    // SAFETY: as above.
    unsafe { sync_warp() };
    let mut q = lane;
    while q < 32 * RUN && c + (q as i32) < plane.w {
        // SAFETY: (row, c + q) is inside the plane; slot(q) < SLOTS.
        unsafe {
            y.add(flat(a, p, row, c + q as i32))
                .write(T::from_f64(*seg.add(slot(q))))
        };
        q += 32;
    }
}

/// A column pass then a row pass in one kernel (taps `kh` at `tap_offset`, then `kw` right after
/// them; both [`pass_runs`] taps, symmetries in `shift` as [`tile_symmetries`]): the separable
/// pair without the intermediate image's write and read back, bit for bit the two passes.
///
/// A block owns [`PASS_TILE_W`] × [`PASS_TILE_H`] outputs and stages them with [`MAXB`] samples on
/// every side in shared memory as f64 (lanes on consecutive columns, each sample mapped through
/// the border and converted once). Column pass: thread `t` takes staged column `t mod 64` and the
/// run of [`RUN`] rows `t / 64` ([`pair_run`] from its 24 samples, lanes on consecutive columns);
/// the results, rounded to `T` as the scipy pass writes them, replace the staged rows after a
/// barrier. A staged column outside the plane is what the row pass would read there: the mapped
/// column's result (the column pass commutes with the column mapping), or the constant itself
/// under the constant mode. Row pass: warp `j` takes the run of columns `8j .. 8j + 8` and lane
/// `l` row `l` (the odd [`PASS_TILE_PITCH`] puts the 32 rows in distinct banks); its outputs go
/// back into the first staged rows and leave by coalesced row stores.
///
/// Shared memory: [`PASS_TILE_SHARED_BYTES`].
pub unsafe fn correlate_tile<T: PassPixel>(x: *const T, y: *mut T, a: &Args<T>) {
    const TW: usize = PASS_TILE_W as usize;
    const TH: usize = PASS_TILE_H as usize;
    const SW: usize = TW + 2 * MAXB;
    const SH: usize = TH + 2 * MAXB;
    const P: usize = PASS_TILE_PITCH as usize;
    const WARPS: usize = BLOCK_THREADS as usize / 32;
    let (p, r0, c0) = tile_origin(a, TW as u32, TH as u32);
    let plane = Plane::of(x, p, a);
    let (tid, lane, warp) = (thread_idx() as usize, lane_idx() as usize, warp_idx() as usize);
    // SAFETY: the host launches with PASS_TILE_SHARED_BYTES = SH · P f64.
    let tile = unsafe { dynamic_shared::<f64>() };
    let at = |row: usize, col: usize| row * P + col;
    // Stage: lane `l` maps staged columns l and l + 32 once for every row.
    let cols = [lane, lane + 32].map(|j| plane.col(c0 - MAXB as i32 + j as i32));
    let mut i = warp;
    while i < SH {
        let row = plane.row(r0 - MAXB as i32 + i as i32);
        crate::unroll!(2, |h| {
            // SAFETY: row from plane.row, column from plane.col; at(i, ·) < SH · P.
            unsafe {
                tile.add(at(i, lane + 32 * h))
                    .write(plane.at_col(row, cols[h]).to_f64())
            };
        });
        i += WARPS;
    }
    // Column pass: staged column `j`, output rows `8q .. 8q + 8` (staged rows 8q .. 8q + 24).
    let (j, q) = (tid % SW, tid / SW);
    let (kh, kw) = (a.kh as usize, a.kw as usize);
    // SAFETY: every thread reaches the barriers (no early return above or below).
    unsafe { sync_threads() };
    let s = run_window(kh / 2, kh - 1 - kh / 2, |t| unsafe { *tile.add(at(RUN * q + t, j)) });
    let acc = pair_run(&s, kh / 2, a.shift & 0xff, a.tap_offset);
    let konst = plane
        .col(c0 - MAXB as i32 + j as i32)
        .is_none()
        .then(|| plane.cval.to_f64());
    // SAFETY: every sample of the staged rows has been read.
    unsafe { sync_threads() };
    crate::unroll!(RUN, |u| {
        let v = konst.unwrap_or_else(|| T::from_f64(acc[u]).to_f64());
        // SAFETY: MAXB + RUN · q + u < SH.
        unsafe { tile.add(at(MAXB + RUN * q + u, j)).write(v) };
    });
    // SAFETY: as above.
    unsafe { sync_threads() };
    // Row pass: warp `q` < TW / RUN on columns 8q .. 8q + 8 of row `lane`.
    let run = warp < TW / RUN;
    let mut out = [0.0; RUN];
    if run {
        let s = run_window(kw / 2, kw - 1 - kw / 2, |t| unsafe {
            *tile.add(at(MAXB + lane, RUN * warp + t))
        });
        out = pair_run(&s, kw / 2, a.shift >> 8, a.tap_offset + 8 * a.kh);
    }
    // SAFETY: as above.
    unsafe { sync_threads() };
    if run {
        crate::unroll!(RUN, |u| {
            // SAFETY: lane < TH ≤ SH, RUN · warp + u < TW.
            unsafe { tile.add(at(lane, RUN * warp + u)).write(out[u]) };
        });
    }
    // SAFETY: as above.
    unsafe { sync_threads() };
    let mut i = warp;
    while i < TH && r0 + (i as i32) < plane.h {
        let mut c = lane;
        while c < TW && c0 + (c as i32) < plane.w {
            // SAFETY: (r0 + i, c0 + c) is inside the plane.
            unsafe {
                y.add(flat(a, p, r0 + i as i32, c0 + c as i32))
                    .write(T::from_f64(*tile.add(at(i, c))))
            };
            c += 32;
        }
        i += WARPS;
    }
}

/// Row pass of a separable correlation (taps `kw`) for taps [`correlate_rows_run`] does not take:
/// one output per thread, lanes on neighbouring columns; outputs whose window lies inside the row
/// read it directly.
pub unsafe fn correlate_rows<T: PassPixel>(x: *const T, y: *mut T, a: &Args<T>) {
    let Some((p, r, c)) = thread_pixel(a) else {
        return;
    };
    let plane = Plane::of(x, p, a);
    let before = (a.kw / 2) as i32;
    let v = if c >= before && c + (a.kw as i32 - before) <= plane.w {
        // SAFETY: columns c − before ..= c + after are inside the plane; r < h.
        let at = unsafe { plane.base.add(r as usize * plane.w as usize + c as usize) };
        scipy_correlate1d(a.kw, a.shift, a.tap_offset, |d| {
            unsafe { T::load(at.offset(d as isize)) }.to_f64()
        })
    } else {
        let row = plane.row(r);
        // SAFETY: row from plane.row.
        scipy_correlate1d(a.kw, a.shift, a.tap_offset, |d| {
            unsafe { plane.at(row, c + d) }.to_f64()
        })
    };
    // SAFETY: inside the plane.
    unsafe { y.add(flat(a, p, r, c)).write(T::from_f64(v)) }
}
