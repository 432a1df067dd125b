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
