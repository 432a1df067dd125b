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

/// Column pass of a separable correlation (taps `kh` at `tap_offset`, symmetry in `shift`).
/// Outputs whose window lies inside the plane (all but `kh − 1` rows) read their samples at a
/// fixed stride from the output's own column with no border mapping: the mapping's tests and
/// `Option`s per tap were most of the pass's instructions.
pub unsafe fn correlate_cols<T: PassPixel>(x: *const T, y: *mut T, a: &Args<T>) {
    let Some((p, r, c)) = thread_pixel(a) else {
        return;
    };
    let plane = Plane::of(x, p, a);
    let before = (a.kh / 2) as i32;
    let v = if r >= before && r + (a.kh as i32 - before) <= plane.h {
        // SAFETY: rows r − before ..= r + after are inside the plane; c < w.
        let at = unsafe { plane.base.add(r as usize * plane.w as usize + c as usize) };
        let w = plane.w as isize;
        scipy_correlate1d(a.kh, a.shift, a.tap_offset, |d| {
            unsafe { T::load(at.offset(d as isize * w)) }.to_f64()
        })
    } else {
        // SAFETY: rows from plane.row; c < w.
        scipy_correlate1d(a.kh, a.shift, a.tap_offset, |d| {
            unsafe { plane.at(plane.row(r + d), c) }.to_f64()
        })
    };
    // SAFETY: inside the plane.
    unsafe { y.add(flat(a, p, r, c)).write(T::from_f64(v)) }
}

/// Row pass of a separable correlation (taps `kw`); outputs whose window lies inside the row read
/// it directly, as the column pass does.
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
