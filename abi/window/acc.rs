//! The window family's exact accumulators: the sums a window statistic carries ([`Sums`],
//! [`Seg`]), their wrapping or IEEE arithmetic ([`Acc`]), what each input type accumulates in
//! ([`WindowIn`]) and what the integer sliding kernel slides its squares in ([`SlideIn`]).

use super::{SLIDING_CHUNK, SLIDING_MAX_WIDTH, WINDOW_BLOCK};
use crate::abi::reduce::W128;

/// A sum and a sum of squares carried together (scans move both at once).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sums<S, Q> {
    pub s: S,
    pub q: Q,
}

/// One element of a segmented scan: a value, and whether a segment starts inside what it covers
/// (the running sums of floats restart at every window-aligned position).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Seg<V> {
    pub value: V,
    pub reset: u32,
}

/// Accumulator arithmetic. Integers wrap: a difference of two running sums is then exact
/// (modulo 2^k, hence exactly) whenever the window's own value fits the type, however large the
/// running sums grow. `f64` is IEEE arithmetic (the float path never subtracts).
pub trait Acc: Copy + PartialEq {
    const ZERO: Self;
    fn plus(self, o: Self) -> Self;
    fn minus(self, o: Self) -> Self;
    /// `k` copies of `self` added up (a border row or column of constants).
    fn times(self, k: u64) -> Self;
    /// The value as f64 (exact for integers below 2^53, one or two roundings above).
    fn to_f64(self) -> f64;
    /// The value as f32 (one rounding for the integers; through f64 for the others).
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self.to_f64() as f32
    }
    /// The value as a 128-bit two's-complement integer (integers only; floats truncate).
    fn to_w128(self) -> W128;
}

macro_rules! int_acc {
    ($($t:ty: $w:expr),*) => {$(
        impl Acc for $t {
            const ZERO: $t = 0;
            #[inline(always)]
            fn plus(self, o: $t) -> $t { self.wrapping_add(o) }
            #[inline(always)]
            fn minus(self, o: $t) -> $t { self.wrapping_sub(o) }
            #[inline(always)]
            fn times(self, k: u64) -> $t { self.wrapping_mul(k as $t) }
            #[inline(always)]
            fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)]
            fn to_f32(self) -> f32 { self as f32 }
            #[inline(always)]
            fn to_w128(self) -> W128 { $w(self) }
        }
    )*};
}
int_acc!(
    u32: |v: u32| W128::from_u64(v as u64),
    i32: |v: i32| W128::from_i64(v as i64),
    u64: W128::from_u64,
    i64: W128::from_i64
);

impl Acc for f64 {
    const ZERO: f64 = 0.0;
    #[inline(always)]
    fn plus(self, o: f64) -> f64 {
        self + o
    }
    #[inline(always)]
    fn minus(self, o: f64) -> f64 {
        self - o
    }
    #[inline(always)]
    fn times(self, k: u64) -> f64 {
        self * k as f64
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn to_w128(self) -> W128 {
        W128::from_i64(self as i64)
    }
}

impl Acc for W128 {
    const ZERO: W128 = W128::ZERO;
    #[inline(always)]
    fn plus(self, o: W128) -> W128 {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn minus(self, o: W128) -> W128 {
        self.wrapping_sub(o)
    }
    #[inline(always)]
    fn times(self, k: u64) -> W128 {
        self.wrapping_mul_u64(k)
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self.to_f64_signed()
    }
    #[inline(always)]
    fn to_w128(self) -> W128 {
        self
    }
}

impl<S: Acc, Q: Acc> Sums<S, Q> {
    pub const ZERO: Self = Sums { s: S::ZERO, q: Q::ZERO };

    #[inline(always)]
    pub fn plus(self, o: Self) -> Self {
        Sums {
            s: self.s.plus(o.s),
            q: self.q.plus(o.q),
        }
    }

    #[inline(always)]
    pub fn minus(self, o: Self) -> Self {
        Sums {
            s: self.s.minus(o.s),
            q: self.q.minus(o.q),
        }
    }

    #[inline(always)]
    pub fn times(self, k: u64) -> Self {
        Sums {
            s: self.s.times(k),
            q: self.q.times(k),
        }
    }
}

impl<S: Acc, Q: Acc> Seg<Sums<S, Q>> {
    pub const IDENTITY: Self = Seg {
        value: Sums::ZERO,
        reset: 0,
    };

    /// `a` then `b`: `b` alone if a segment starts inside it, else their sum.
    #[inline(always)]
    pub fn then(self, b: Self) -> Self {
        if b.reset != 0 {
            b
        } else {
            Seg {
                value: self.value.plus(b.value),
                reset: self.reset,
            }
        }
    }
}

/// Mean and population variance of a window of `samples` samples from its sums `s` and sums of
/// squares `q` (`inv_n = 1/n`, `inv_n2 = 1/n²`, rounded by the host). Integers form
/// `n·Σx² − (Σx)²` exactly in 128 bits (it is ≥ 0 by Cauchy–Schwarz), round it once into f64 and
/// multiply by `1/n²`; floats use `Σx²/n − mean²`, clamped at 0 (rounding can push a constant
/// window's variance a few ulps below zero; NaN stays NaN). Multiplying by the rounded
/// reciprocals keeps the mean within 2 ulps of f64 and the integer variance within 3 (a division
/// would give 1 and 2, at a dozen dependent FP64 instructions per output). `|Σx| < 2^64` for every
/// integer accumulator, so its square is one wide product.
#[inline(always)]
pub fn moments<S: Acc, Q: Acc>(s: S, q: Q, float: bool, samples: u64, inv_n: f64, inv_n2: f64) -> (f64, f64) {
    let mean = s.to_f64() * inv_n;
    let variance = if float {
        let v = q.to_f64() * inv_n - mean * mean;
        if v < 0.0 { 0.0 } else { v }
    } else {
        let s = s.to_w128();
        let magnitude = if s.is_negative() { W128::ZERO.wrapping_sub(s) } else { s };
        let square = W128::mul_wide(magnitude.lo, magnitude.lo);
        let numerator = q.to_w128().wrapping_mul_u64(samples).wrapping_sub(square);
        numerator.to_f64_unsigned() * inv_n2
    };
    (mean, variance)
}

/// An input element type of the window family and its exact accumulators.
pub trait WindowIn: Copy {
    /// Accumulator of sums (exact for windows up to [`WindowIn::MAX_WINDOW`] samples).
    type S: Acc;
    /// Accumulator of sums of squares.
    type Q: Acc;
    /// Whether the type is floating point: its running sums never subtract (see `window/running.rs`).
    const FLOAT: bool;
    /// Samples per thread in one round of the running-sum scan; a block's tile is
    /// `WINDOW_BLOCK · CHUNK` positions and its shared memory as many `(S, Q)` pairs.
    const CHUNK: u32;
    /// Columns per thread of the fused 2D kernel: one 16-byte vector of input.
    const FUSED_COLS: u32;
    /// Largest window (samples) of the fused 2D kernel: its running sums of squares slide in
    /// [`SlideIn::SQ`] (0 for floats, which it does not take).
    const FUSED_MAX_WINDOW: u64;
    /// Bytes of the fused kernel's accumulators `(S, SlideIn::SQ)`: its shared-memory layout
    /// (the kernel asserts them against its types).
    const FUSED_ACC_BYTES: (usize, usize);
    /// Largest window (samples) whose sums are exact in `S` and `Q`.
    const MAX_WINDOW: u64;
    /// `(x, x²)` in the accumulators (exact for integers; `x` widened to f64 for floats).
    fn lift(self) -> Sums<Self::S, Self::Q>;
}

impl WindowIn for u8 {
    type S = u32;
    type Q = u64;
    const FLOAT: bool = false;
    const CHUNK: u32 = 8;
    const FUSED_COLS: u32 = 16;
    /// 255² · w < 2^32 (squares slide in u32).
    const FUSED_MAX_WINDOW: u64 = (u32::MAX / (255 * 255)) as u64;
    const FUSED_ACC_BYTES: (usize, usize) = (4, 4);
    /// 255 · w < 2^32.
    const MAX_WINDOW: u64 = (u32::MAX / 255) as u64;
    #[inline(always)]
    fn lift(self) -> Sums<u32, u64> {
        let v = self as u32;
        Sums {
            s: v,
            q: (v * v) as u64,
        }
    }
}

impl WindowIn for u16 {
    type S = u64;
    type Q = u64;
    const FLOAT: bool = false;
    const CHUNK: u32 = 8;
    const FUSED_COLS: u32 = 8;
    const FUSED_MAX_WINDOW: u64 = Self::MAX_WINDOW;
    const FUSED_ACC_BYTES: (usize, usize) = (8, 8);
    /// 65535² · w < 2^64.
    const MAX_WINDOW: u64 = u64::MAX / (65535 * 65535);
    #[inline(always)]
    fn lift(self) -> Sums<u64, u64> {
        let v = self as u64;
        Sums { s: v, q: v * v }
    }
}

impl WindowIn for i32 {
    type S = i64;
    type Q = W128;
    const FLOAT: bool = false;
    const CHUNK: u32 = 8;
    const FUSED_COLS: u32 = 4;
    const FUSED_MAX_WINDOW: u64 = Self::MAX_WINDOW;
    const FUSED_ACC_BYTES: (usize, usize) = (8, 16);
    /// |x| · w ≤ 2^31 · 2^32 = 2^63 − … for the i64 sum.
    const MAX_WINDOW: u64 = 1 << 32;
    #[inline(always)]
    fn lift(self) -> Sums<i64, W128> {
        let v = self as i64;
        Sums {
            s: v,
            q: W128::from_u64((v * v) as u64),
        }
    }
}

macro_rules! float_in {
    ($($t:ty),*) => {$(
        impl WindowIn for $t {
            type S = f64;
            type Q = f64;
            const FLOAT: bool = true;
            const CHUNK: u32 = 8;
            const FUSED_COLS: u32 = 4;
            const FUSED_MAX_WINDOW: u64 = 0;
            const FUSED_ACC_BYTES: (usize, usize) = (8, 8);
            const MAX_WINDOW: u64 = u64::MAX;
            #[inline(always)]
            fn lift(self) -> Sums<f64, f64> {
                let v = self as f64;
                Sums { s: v, q: v * v }
            }
        }
    )*};
}
float_in!(f32, f64);

/// An integer input of the sliding kernel, with the accumulators it slides in: the smallest
/// whose wrapping arithmetic still ends exact (a running sum that adds and subtracts is exact
/// modulo `2^bits`, so it only needs the final window sum to fit). Squares slide in `SQ` for
/// any tile; u8's in u32 (`255² · 1024 < 2^32`): half the 64-bit adds and a cheaper conversion
/// per output than the general `u64`.
///
/// Wider types also have narrower classes for tiles whose samples are small, which the sliding
/// kernel picks per tile from the largest [`SlideIn::magnitude`] among its samples (one barrier
/// that ORs the threads' findings per class tried): the 32-bit class ([`fits_small32`]: sums in
/// `SS`, squares in u32 — u8's arithmetic) and the narrow class (sums in `NS`, squares in
/// `NQ`). Every class gives the same outputs: the window sums are the same integers, converted
/// once.
pub trait SlideIn: WindowIn {
    type SQ: Acc;
    fn lift_slide(self) -> Sums<Self::S, Self::SQ>;
    /// `|x|` (0 for types without narrower classes).
    #[inline(always)]
    fn magnitude(self) -> u32 {
        0
    }
    /// The largest [`SlideIn::magnitude`] of the samples one 32-bit word of a 16-byte vector
    /// holds (the tile's staging takes it from the loaded vectors, not from shared memory).
    #[inline(always)]
    fn word_magnitude(_word: u32) -> u32 {
        0
    }
    /// The 32-bit class's sum accumulator.
    type SS: Acc;
    /// Whether the type has the 32-bit class (u8 always slides in 32 bits: no check).
    const HAS_SMALL: bool;
    fn lift_small(self) -> Sums<Self::SS, u32>;
    /// The narrow class's accumulators of sums and squares (`S` and `SQ` themselves for types
    /// without one).
    type NS: Acc;
    type NQ: Acc;
    const HAS_NARROW: bool;
    /// Largest `|x|` of the narrow class; `u32::MAX`: every tile outside the 32-bit class (no
    /// barrier tests it).
    const NARROW_MAX: u32 = 0;
    fn lift_narrow(self) -> Sums<Self::NS, Self::NQ>;
    /// A window's sum of squares (exact in `SQ` for windows up to
    /// [`WindowIn::FUSED_MAX_WINDOW`]) in the general accumulator.
    fn widen_sq(q: Self::SQ) -> Self::Q;
    /// `n·Σx² − (Σx)²` of a window of `n` samples as f64 when it can be formed exactly in 64-bit
    /// arithmetic (its true value is below 2^64; wrapping products then give it exactly), else
    /// `None` (the 128-bit path).
    fn narrow_spread(s: Self::S, q: Self::SQ, n: u64) -> Option<f64>;
    /// The spread in 32-bit arithmetic when it and `Σx` convert to f32 with one rounding at most
    /// (`Σx < 2^24` exactly; the spread below 2^32), for statistics formed in f32.
    #[inline(always)]
    fn narrow_spread32(_s: Self::S, _q: Self::SQ, _n: u64) -> Option<u32> {
        None
    }
}

/// Whether a tile of samples of magnitude at most `m` slides a window of `width` in 32 bits:
/// `m² · width < 2^32`, so every window's sum of squares fits u32, and its sum, at most
/// `width · m ≤ √(width · 2^32) ≤ 2^21` for widths up to [`SLIDING_MAX_WIDTH`], fits i32.
/// Covers the 8- to 12-bit images of the field (`m ≤ 4104` at width 255, `16 921` at 15).
#[inline(always)]
pub fn fits_small32(m: u32, width: u32) -> bool {
    m <= u16::MAX as u32 && m * m <= u32::MAX / width
}
// width · m ≤ √(width · 2^32) ≤ 2^21 < 2^31 (the i32 sums), and u16 sums below 2^32.
const _: () = assert!(SLIDING_MAX_WIDTH << 32 <= 1 << 42 && 65535 * SLIDING_MAX_WIDTH < 1 << 32);

/// Largest u8 window whose spread `n·Σx² − (Σx)² ≤ n² · 127.5²` stays below 2^32 (and `Σx ≤
/// 255·n < 2^24`): u8 statistics into f32 form in 32-bit arithmetic up to it.
pub const NARROW32_MAX_WINDOW: u64 = 513;
const _: () = assert!(NARROW32_MAX_WINDOW * NARROW32_MAX_WINDOW * 16257 < 1 << 32);

const _: () = assert!(255 * 255 * SLIDING_MAX_WIDTH < 1 << 32);
// Two chunks per thread cover a tile's chunks (the sliding kernel's chunk scan, runs of 16).
const _: () =
    assert!((WINDOW_BLOCK as u64 * 16 + SLIDING_MAX_WIDTH).div_ceil(SLIDING_CHUNK as u64) < 2 * WINDOW_BLOCK as u64);

impl SlideIn for u8 {
    type SQ = u32;
    #[inline(always)]
    fn lift_slide(self) -> Sums<u32, u32> {
        let v = self as u32;
        Sums { s: v, q: v * v }
    }
    type SS = u32;
    const HAS_SMALL: bool = false;
    #[inline(always)]
    fn lift_small(self) -> Sums<u32, u32> {
        self.lift_slide()
    }
    type NS = u32;
    type NQ = u32;
    const HAS_NARROW: bool = false;
    #[inline(always)]
    fn lift_narrow(self) -> Sums<u32, u32> {
        self.lift_slide()
    }
    #[inline(always)]
    fn widen_sq(q: u32) -> u64 {
        q as u64
    }
    /// Always exact: the spread is at most `n² · 127.5² < 2^64` for `n ≤ FUSED_MAX_WINDOW`.
    #[inline(always)]
    fn narrow_spread(s: u32, q: u32, n: u64) -> Option<f64> {
        Some((q as u64).wrapping_mul(n).wrapping_sub(s as u64 * s as u64) as f64)
    }
    #[inline(always)]
    fn narrow_spread32(s: u32, q: u32, n: u64) -> Option<u32> {
        (n <= NARROW32_MAX_WINDOW).then(|| q.wrapping_mul(n as u32).wrapping_sub(s.wrapping_mul(s)))
    }
}

impl SlideIn for u16 {
    type SQ = u64;
    #[inline(always)]
    fn lift_slide(self) -> Sums<u64, u64> {
        self.lift()
    }
    #[inline(always)]
    fn magnitude(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn word_magnitude(word: u32) -> u32 {
        (word & 0xffff).max(word >> 16)
    }
    /// Sums of up to `SLIDING_MAX_WIDTH` samples fit u32 whatever they are.
    type SS = u32;
    const HAS_SMALL: bool = true;
    #[inline(always)]
    fn lift_small(self) -> Sums<u32, u32> {
        let v = self as u32;
        Sums {
            s: v,
            q: v.wrapping_mul(v),
        }
    }
    /// Every tile outside the 32-bit class: its sums fit u32 whatever the samples (the
    /// general class's u64 sums cost 64-bit adds and a conversion through f64 per output).
    type NS = u32;
    type NQ = u64;
    const HAS_NARROW: bool = true;
    const NARROW_MAX: u32 = u32::MAX;
    #[inline(always)]
    fn lift_narrow(self) -> Sums<u32, u64> {
        let v = self as u32;
        Sums {
            s: v,
            q: v as u64 * v as u64,
        }
    }
    #[inline(always)]
    fn widen_sq(q: u64) -> u64 {
        q
    }
    /// The spread is at most `n² · 32767.5² < 2^64` for `n < 2^17`.
    #[inline(always)]
    fn narrow_spread(s: u64, q: u64, n: u64) -> Option<f64> {
        (n < 1 << 17).then(|| q.wrapping_mul(n).wrapping_sub(s.wrapping_mul(s)) as f64)
    }
}

/// Largest |x| of an i32 sample whose tile slides its squares in u64 ([`SlideIn::NQ`]): a window
/// of up to [`SLIDING_MAX_WIDTH`] such squares sums below 2^64, so the u64 sum is exact and
/// converts as the 128-bit one does (`to_f64` of a value below 2^64 is its low word's, and f32
/// outputs round through f64 in both) — the same outputs without 128-bit adds and conversions.
/// Covers signals of up to 27 bits (24-bit audio) past the 32-bit class's range.
pub const I32_NARROW_MAX: u32 = (1 << 27) - 1;
const _: () = assert!((I32_NARROW_MAX as u128 * I32_NARROW_MAX as u128) * (SLIDING_MAX_WIDTH as u128) < 1 << 64);

impl SlideIn for i32 {
    type SQ = W128;
    #[inline(always)]
    fn lift_slide(self) -> Sums<i64, W128> {
        self.lift()
    }
    #[inline(always)]
    fn magnitude(self) -> u32 {
        self.unsigned_abs()
    }
    #[inline(always)]
    fn word_magnitude(word: u32) -> u32 {
        (word as i32).unsigned_abs()
    }
    type SS = i32;
    const HAS_SMALL: bool = true;
    /// `x²` in u32 is exact for `|x| ≤ 65535`, which the class implies.
    #[inline(always)]
    fn lift_small(self) -> Sums<i32, u32> {
        let v = self as u32;
        Sums {
            s: self,
            q: v.wrapping_mul(v),
        }
    }
    type NS = i64;
    type NQ = u64;
    const HAS_NARROW: bool = true;
    const NARROW_MAX: u32 = I32_NARROW_MAX;
    #[inline(always)]
    fn lift_narrow(self) -> Sums<i64, u64> {
        let v = self as i64;
        Sums {
            s: v,
            q: (v * v) as u64,
        }
    }
    #[inline(always)]
    fn widen_sq(q: W128) -> W128 {
        q
    }
    #[inline(always)]
    fn narrow_spread(_: i64, _: W128, _: u64) -> Option<f64> {
        None
    }
}
