//! Output elements of the window kernels: how an exact accumulator is rounded once into an
//! output (f32, f64, u32, u64, i64, u128 as two words), and runs of outputs stored together.

use super::*;

// ---------------------------------------------------------------------------------------------
// Output elements
// ---------------------------------------------------------------------------------------------

/// An element the kernels write: arithmetic for the accumulate-in-global rungs and 16-byte
/// packing.
pub trait OutElem: Copy {
    const ZERO: Self;
    /// Values per 16-byte store.
    const LANES: usize;
    fn plus(self, o: Self) -> Self;
    /// A statistic (mean, variance, deviation) in this type (float outputs; integer outputs
    /// never receive one).
    fn from_f64(v: f64) -> Self;
    /// Whether the type is f32 (statistics may then be formed in f32 where that is exact
    /// enough: [`SlideIn::narrow_spread32`]).
    const SINGLE: bool = false;
    /// A statistic formed in f32 (only called when `SINGLE`).
    fn from_f32(v: f32) -> Self {
        Self::from_f64(v as f64)
    }
    /// Packs `LANES` values, `lane(0)` first in memory, into the four words of a 16-byte store.
    fn pack(lane: impl FnMut(usize) -> Self) -> [u32; 4];
}

/// An output element that an accumulator of type `A` converts to (exact types: identity; f32 and
/// f64: rounded once, W128 → f32 through f64).
pub trait FromAcc<A>: OutElem {
    fn from_acc(a: A) -> Self;
}

impl OutElem for f32 {
    const ZERO: f32 = 0.0;
    const LANES: usize = 4;
    #[inline(always)]
    fn plus(self, o: f32) -> f32 {
        self + o
    }
    #[inline(always)]
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
    const SINGLE: bool = true;
    #[inline(always)]
    fn from_f32(v: f32) -> f32 {
        v
    }
    #[inline(always)]
    fn pack(lane: impl FnMut(usize) -> f32) -> [u32; 4] {
        f32x4_words(lane)
    }
}

impl OutElem for u32 {
    const ZERO: u32 = 0;
    const LANES: usize = 4;
    #[inline(always)]
    fn plus(self, o: u32) -> u32 {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn from_f64(v: f64) -> u32 {
        v as u32
    }
    #[inline(always)]
    fn pack(mut lane: impl FnMut(usize) -> u32) -> [u32; 4] {
        [lane(0), lane(1), lane(2), lane(3)]
    }
}

macro_rules! out_elem_64 {
    ($($t:ty: $bits:expr, $add:expr, $from:expr);*) => {$(
        impl OutElem for $t {
            const ZERO: $t = 0 as $t;
            const LANES: usize = 2;
            #[inline(always)]
            fn plus(self, o: $t) -> $t {
                $add(self, o)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> $t {
                $from(v)
            }
            #[inline(always)]
            fn pack(mut lane: impl FnMut(usize) -> $t) -> [u32; 4] {
                let (a, b): (u64, u64) = ($bits(lane(0)), $bits(lane(1)));
                [a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32]
            }
        }
    )*};
}
out_elem_64! {
    f64: f64::to_bits, |a: f64, b: f64| a + b, |v: f64| v;
    u64: |v: u64| v, u64::wrapping_add, |v: f64| v as u64;
    i64: |v: i64| v as u64, i64::wrapping_add, |v: f64| v as i64
}

impl OutElem for W128 {
    const ZERO: W128 = W128::ZERO;
    const LANES: usize = 1;
    #[inline(always)]
    fn plus(self, o: W128) -> W128 {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn from_f64(v: f64) -> W128 {
        W128::from_i64(v as i64)
    }
    #[inline(always)]
    fn pack(mut lane: impl FnMut(usize) -> W128) -> [u32; 4] {
        let v = lane(0);
        [v.lo as u32, (v.lo >> 32) as u32, v.hi as u32, (v.hi >> 32) as u32]
    }
}

macro_rules! from_acc {
    ($($o:ty: $($a:ty),* => $conv:expr;)*) => {$($(
        impl FromAcc<$a> for $o {
            #[inline(always)]
            fn from_acc(a: $a) -> $o {
                $conv(a)
            }
        }
    )*)*};
}
// u64 into f32 rounds through f64, as the oracle and the 128-bit accumulator do (one rounding
// below 2^53, where every u16 sum lies; the same double rounding above it, where i32 tiles of the
// narrow accumulator can reach).
from_acc! {
    f32: u32, i32, i64, f64 => |a| a as f32;
    f32: u64 => |a: u64| a as f64 as f32;
    f32: W128 => |a: W128| a.to_f64_signed() as f32;
    f64: u32, i32, u64, i64 => |a| a as f64;
    f64: W128 => |a: W128| a.to_f64_signed();
    f64: f64 => |a| a;
    u32: u32 => |a| a;
    u64: u32 => |a| a as u64;
    u64: u64 => |a| a;
    i64: i32 => |a| a as i64;
    i64: i64 => |a| a;
    W128: W128 => |a| a;
    W128: u32 => |a: u32| W128::from_u64(a as u64);
    W128: u64 => W128::from_u64;
}

/// Writes `count ≤ C` values at `p`: 16-byte stores when the whole run is written and `p` is
/// 16-byte aligned, else one store per value.
///
/// # Safety
/// `p` must address `count` writable values.
#[inline(always)]
pub(super) unsafe fn store_run<O: OutElem, const C: usize>(p: *mut O, v: &[O; C], count: usize) {
    if count == C && (p as usize).is_multiple_of(16) {
        crate::unroll!(C / O::LANES, |j| {
            // SAFETY: aligned, and (j + 1) · LANES ≤ C = count values are writable.
            unsafe { store_v4(p.add(j * O::LANES) as *mut [u32; 4], O::pack(|l| v[j * O::LANES + l])) };
        });
    } else {
        crate::unroll!(C, |c| {
            if c < count {
                // SAFETY: c < count.
                unsafe { p.add(c).write(v[c]) };
            }
        });
    }
}
