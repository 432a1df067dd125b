//! Thin, documented wrappers over `core::arch::nvptx` and inline PTX. Kernels use these; raw
//! `asm!` lives only in this module. Also the row-access helpers every filter family shares (`rows`).

pub mod bank;
pub mod block;
pub mod memory;
pub mod plane;
pub mod rows;
pub mod simd;
pub mod texture;
pub mod thread;
pub mod warp;

pub use bank::*;
pub use block::*;
pub use memory::*;
pub use plane::*;
pub use rows::*;
pub use simd::*;
pub use texture::*;
pub use thread::*;
pub use warp::*;

/// `v`, hidden from the optimizer behind an empty `asm!` with effects: what is derived from it is
/// computed where it is used, never hoisted out of a loop. Staging loops use it so that LLVM
/// does not precompute one 64-bit address per unrolled load ahead of the loop and keep them all
/// in registers.
#[inline(always)]
pub fn opaque_u64(v: u64) -> u64 {
    let r: u64;
    // SAFETY: a register move.
    unsafe { core::arch::asm!("mov.b64 {r}, {v};", r = out(reg64) r, v = in(reg64) v, options(nomem, nostack)) };
    r
}

/// Runs `$body` with `$i` bound to each constant `0 .. $n` (`$n ≤ 16`, a constant), fully
/// unrolled, so register arrays indexed by `$i` stay in registers. LLVM declines to fully unroll
/// some loops on its own (nested loops, large bodies) and would then put the arrays in local
/// memory; `tests/ptx.rs` checks that no kernel has a stack frame.
#[macro_export]
macro_rules! unroll {
    ($n:expr, |$i:ident| $body:block) => {
        $crate::unroll!(@ $n, $i, $body, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    };
    (@ $n:expr, $i:ident, $body:block, $($k:literal)*) => {
        const { assert!($n <= 16) };
        $(if $k < $n {
            let $i: usize = $k;
            $body
        })*
    };
}

/// Declares launch bounds for the kernel entry `$symbol`: at most `$threads` threads per block and
/// at least `$min_blocks` resident blocks per SM, so ptxas caps the registers per thread at what
/// that occupancy allows (CUDA C's `__launch_bounds__`). Rust has no attribute for it: this emits
/// a PTX comment that build.rs turns into the entry's `.maxntid` / `.minnctapersm` directives
/// (the build fails if the symbol names no entry). `tests/ptx.rs` checks the directives are there.
#[macro_export]
macro_rules! launch_bounds {
    ($symbol:expr, $threads:literal, $min_blocks:expr) => {
        core::arch::global_asm!(concat!(
            "// gpuprims:launch_bounds ",
            $symbol,
            " ",
            $threads,
            " ",
            $min_blocks
        ));
    };
}

macro_rules! rounded_f64 {
    ($($name:ident, $op:literal, $doc:literal;)*) => {$(
        #[doc = $doc]
        /// Explicitly rounded (`.rn`), so neither LLVM nor ptxas fuses it into an FMA: code that
        /// must reproduce a host's unfused arithmetic bit for bit uses these.
        #[inline(always)]
        pub fn $name(a: f64, b: f64) -> f64 {
            let r: f64;
            // SAFETY: register-only arithmetic.
            unsafe {
                core::arch::asm!(concat!($op, ".rn.f64 {r}, {a}, {b};"), r = out(reg64) r, a = in(reg64) a, b = in(reg64) b,
                    options(pure, nomem, nostack));
            }
            r
        }
    )*};
}

rounded_f64! {
    mul_rn, "mul", "`a · b` rounded to nearest.";
    add_rn, "add", "`a + b` rounded to nearest.";
    sub_rn, "sub", "`a − b` rounded to nearest.";
}
