//! Texture fetches through texture objects (`tex.1d` with a `.u64` handle, unified texture mode):
//! the tutorial's `tex1Dfetch` over linear memory. The host creates the object
//! (`cuTexObjectCreate`) with integer reads (no normalization, no filtering), so a fetch returns
//! the stored element: integer formats in the `.u32` components, `FLOAT` in the `.f32` ones.

use core::arch::asm;

/// Element `i` of a 1D texture of one 32-bit float channel.
///
/// # Safety
/// `tex` must be a live texture object over linear memory of `FLOAT` format; `0 ≤ i <` its width
/// (an index outside reads as zero, by the texture's border rule, but is a caller bug).
#[inline(always)]
pub unsafe fn tex1d_f32(tex: u64, i: i32) -> f32 {
    let (a, b, c, d): (f32, f32, f32, f32);
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "tex.1d.v4.f32.s32 {{{a}, {b}, {c}, {d}}}, [{t}, {{{i}}}];",
            t = in(reg64) tex, i = in(reg32) i,
            a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
            options(pure, readonly, nostack),
        );
    }
    let _ = (b, c, d);
    a
}

/// The first two integer channels of element `i` of a 1D texture read as integers (one channel
/// for 8-, 16- and 32-bit elements, two 32-bit channels for 64-bit ones).
///
/// # Safety
/// As [`tex1d_f32`], for a texture of an integer format created with `CU_TRSF_READ_AS_INTEGER`.
#[inline(always)]
pub unsafe fn tex1d_u32x2(tex: u64, i: i32) -> [u32; 2] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "tex.1d.v4.u32.s32 {{{a}, {b}, {c}, {d}}}, [{t}, {{{i}}}];",
            t = in(reg64) tex, i = in(reg32) i,
            a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
            options(pure, readonly, nostack),
        );
    }
    let _ = (c, d);
    [a, b]
}
