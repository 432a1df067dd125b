//! SIMD within a register: byte permutes for kernels that keep 8-bit pixels packed.

use core::arch::asm;

/// `prmt.b32`: byte `n` of the result is byte `(sel >> 4n) & 7` of the 8-byte value `b:a`
/// (bytes 0–3 from `a`, 4–7 from `b`). One instruction moves, shifts, interleaves or
/// zero-extends bytes across two words (a zero byte of either operand supplies zeros).
#[inline(always)]
pub fn byte_perm(a: u32, b: u32, sel: u32) -> u32 {
    let r: u32;
    // SAFETY: register-only instruction.
    unsafe {
        asm!("prmt.b32 {r}, {a}, {b}, {s};", r = out(reg32) r, a = in(reg32) a, b = in(reg32) b,
             s = in(reg32) sel, options(pure, nomem, nostack));
    }
    r
}

/// `[a.hi, b.lo]`: the 16-bit lanes of `(b:a) >> 16`, one `prmt`.
#[inline(always)]
pub fn funnel16(a: u32, b: u32) -> u32 {
    byte_perm(a, b, 0x5432)
}

/// `[w << 8, w]`: the even bytes (0, 2) and the odd bytes (1, 3) of `w` in the *high* halves of
/// the 16-bit lanes of two words (the low halves hold the neighbouring bytes). A 16-bit max/min
/// (`max.u16x2`) decides a lane by its high byte whatever the low byte holds, so u8 pixels compare
/// two per instruction this way with no unpacking and no bias: one shift per word.
#[inline(always)]
pub fn high_byte_lanes(w: u32) -> [u32; 2] {
    [w << 8, w]
}

/// The inverse of [`high_byte_lanes`]: the word whose even bytes are the high bytes of `even`'s
/// lanes and whose odd bytes are those of `odd`'s, one `prmt`.
#[inline(always)]
pub fn join_high_byte_lanes(even: u32, odd: u32) -> u32 {
    byte_perm(even, odd, 0x7351)
}

/// `dp4a.u32.u32`: `c + Σ a.byte[i] · b.byte[i]` over the four unsigned bytes of `a` and `b`
/// (wrapping). One instruction sums four u8 samples (`b = 0x01010101`, or a byte mask) or their
/// squares (`b = a`).
#[inline(always)]
pub fn dp4a_uu(a: u32, b: u32, c: u32) -> u32 {
    let r: u32;
    // SAFETY: register-only instruction (sm_61 and later).
    unsafe {
        asm!("dp4a.u32.u32 {r}, {a}, {b}, {c};", r = out(reg32) r, a = in(reg32) a, b = in(reg32) b,
             c = in(reg32) c, options(pure, nomem, nostack));
    }
    r
}

/// `dp4a.u32.s32`: `c + Σ a.byte[i] · b.sbyte[i]`, the bytes of `a` unsigned and those of `b`
/// signed (wrapping, as u32 bits). With `b = 0x0000_ff01` it is `a.byte[0] − a.byte[1]`.
#[inline(always)]
pub fn dp4a_us(a: u32, b: u32, c: u32) -> u32 {
    let r: u32;
    // SAFETY: register-only instruction (sm_61 and later).
    unsafe {
        asm!("dp4a.u32.s32 {r}, {a}, {b}, {c};", r = out(reg32) r, a = in(reg32) a, b = in(reg32) b,
             c = in(reg32) c, options(pure, nomem, nostack));
    }
    r
}

macro_rules! packed_u16x2 {
    ($($name:ident, $op:literal, $doc:literal;)*) => {$(
        #[doc = $doc]
        /// One `VIMNMX.U16x2` (PTX ISA 8.0, native from sm_90: the sm_90 build, which the
        /// default `GPUPRIMS_CUDA_ARCH` embeds beside the portable one).
        #[cfg(target_feature = "sm_90")]
        #[inline(always)]
        pub fn $name(a: u32, b: u32) -> u32 {
            let r: u32;
            // SAFETY: register-only instruction (sm_90 and later).
            unsafe {
                asm!(concat!($op, ".u16x2 {r}, {a}, {b};"), r = out(reg32) r, a = in(reg32) a, b = in(reg32) b,
                     options(pure, nomem, nostack));
            }
            r
        }
    )*};
}

packed_u16x2! {
    max_u16x2, "max", "`max.u16x2`: the unsigned max of each 16-bit lane of two words.";
    min_u16x2, "min", "`min.u16x2`: the unsigned min of each 16-bit lane of two words.";
}
