//! Warp shuffles and the warp-level reduction built on them.

use core::arch::asm;

use crate::abi::reduce::{Moments, Reducer, W128};

/// `shfl.sync.down.b32` with a full mask: lane `i` gets lane `i + delta`'s value (lanes past 31
/// keep their own). All 32 lanes must execute it.
#[inline(always)]
pub fn shfl_down_u32(v: u32, delta: u32) -> u32 {
    let r: u32;
    // SAFETY: register-only instruction; every caller runs it with all 32 lanes converged, as the
    // full member mask requires. Not marked `pure`: the compiler must not move it into divergent
    // code.
    unsafe {
        asm!("shfl.sync.down.b32 {r}, {v}, {d}, 0x1f, 0xffffffff;", r = out(reg32) r, v = in(reg32) v,
             d = in(reg32) delta, options(nostack));
    }
    r
}

/// `shfl.sync.up.b32` with a full mask: lane `i` gets lane `i − delta`'s value (lanes below
/// `delta` keep their own). All 32 lanes must execute it.
#[inline(always)]
pub fn shfl_up_u32(v: u32, delta: u32) -> u32 {
    let r: u32;
    // SAFETY: as `shfl_down_u32`.
    unsafe {
        asm!("shfl.sync.up.b32 {r}, {v}, {d}, 0x0, 0xffffffff;", r = out(reg32) r, v = in(reg32) v,
             d = in(reg32) delta, options(nostack));
    }
    r
}

/// `shfl.sync.idx.b32` with a full mask: every lane gets lane `src`'s value. All 32 lanes must
/// execute it.
#[inline(always)]
pub fn shfl_idx_u32(v: u32, src: u32) -> u32 {
    let r: u32;
    // SAFETY: as `shfl_down_u32`.
    unsafe {
        asm!("shfl.sync.idx.b32 {r}, {v}, {s}, 0x1f, 0xffffffff;", r = out(reg32) r, v = in(reg32) v,
             s = in(reg32) src, options(nostack));
    }
    r
}

/// A value that can move between lanes with `shfl.sync`, one 32-bit word at a time.
pub trait WarpShuffle: Copy {
    /// The value with each of its 32-bit words replaced by `f(word)`, in a fixed order.
    fn map_words(self, f: impl FnMut(u32) -> u32) -> Self;

    /// Lane `i` gets lane `i + delta`'s value (see [`shfl_down_u32`]).
    #[inline(always)]
    fn shfl_down(self, delta: u32) -> Self {
        self.map_words(|w| shfl_down_u32(w, delta))
    }

    /// Lane `i` gets lane `i − delta`'s value (see [`shfl_up_u32`]).
    #[inline(always)]
    fn shfl_up(self, delta: u32) -> Self {
        self.map_words(|w| shfl_up_u32(w, delta))
    }

    /// Every lane gets lane `src`'s value (see [`shfl_idx_u32`]).
    #[inline(always)]
    fn shfl_idx(self, src: u32) -> Self {
        self.map_words(|w| shfl_idx_u32(w, src))
    }
}

macro_rules! shuffle_one_word {
    ($($t:ty: $to:expr, $from:expr);* $(;)?) => {$(
        impl WarpShuffle for $t {
            #[inline(always)]
            fn map_words(self, mut f: impl FnMut(u32) -> u32) -> Self {
                $from(f($to(self)))
            }
        }
    )*};
}
shuffle_one_word! {
    u32: |v: u32| v, |w: u32| w;
    u8: |v: u8| v as u32, |w: u32| w as u8;
    i32: |v: i32| v as u32, |w: u32| w as i32;
    f32: f32::to_bits, f32::from_bits;
    bool: |v: bool| v as u32, |w: u32| w != 0;
}

impl WarpShuffle for u64 {
    #[inline(always)]
    fn map_words(self, mut f: impl FnMut(u32) -> u32) -> Self {
        let lo = f(self as u32) as u64;
        let hi = f((self >> 32) as u32) as u64;
        lo | hi << 32
    }
}

impl WarpShuffle for i64 {
    #[inline(always)]
    fn map_words(self, f: impl FnMut(u32) -> u32) -> Self {
        (self as u64).map_words(f) as i64
    }
}

impl WarpShuffle for f64 {
    #[inline(always)]
    fn map_words(self, f: impl FnMut(u32) -> u32) -> Self {
        f64::from_bits(self.to_bits().map_words(f))
    }
}

impl WarpShuffle for W128 {
    #[inline(always)]
    fn map_words(self, mut f: impl FnMut(u32) -> u32) -> Self {
        let lo = self.lo.map_words(&mut f);
        W128 {
            lo,
            hi: self.hi.map_words(f),
        }
    }
}

impl<S: WarpShuffle, Q: WarpShuffle> WarpShuffle for Moments<S, Q> {
    #[inline(always)]
    fn map_words(self, mut f: impl FnMut(u32) -> u32) -> Self {
        let s1 = self.s1.map_words(&mut f);
        Moments {
            s1,
            s2: self.s2.map_words(f),
        }
    }
}

/// Tree reduction across the 32 lanes by `shfl.down` (offsets 16, 8, 4, 2, 1). Lane 0 holds the
/// result; the combine order is fixed, so the bits are deterministic.
#[inline(always)]
pub fn warp_reduce<R: Reducer>(mut v: R::Acc) -> R::Acc
where
    R::Acc: WarpShuffle,
{
    let mut delta = 16;
    while delta > 0 {
        v = R::combine(v, v.shfl_down(delta));
        delta >>= 1;
    }
    v
}
