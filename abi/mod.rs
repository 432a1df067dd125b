//! The host↔kernel contract: kernel symbol names, `#[repr(C)]` launch arguments, block sizes and
//! the accumulator types that cross the boundary.
//!
//! This folder is compiled twice: into the PTX (as part of `gpuprims-kernels`) and into the host
//! crate (`#[path]`-included as `gpuprims::abi`). Everything here is plain `core` Rust with no
//! device intrinsics, so one definition serves both sides and they cannot drift apart.

pub mod axis;
pub mod border;
pub mod chain;
pub mod conv1d;
pub mod filter2d;
pub mod pool;
pub mod probe;
pub mod reduce;
pub mod window;

/// Division of `u32`s by an invariant divisor `d ≥ 1` with one multiply-high, an add and a shift
/// (Granlund–Montgomery): `q = (mulhi(m, n) + n) >> s` with `s = ⌈log₂ d⌉` and
/// `m = ⌊2^32 (2^s − d) / d⌋ + 1`, exact for every `n < 2^32` when the add is done in 33 bits.
/// The host builds it; kernels split a thread or warp index into coordinates with it instead of the
/// ~60-instruction emulated integer division.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FastDiv {
    pub d: u32,
    pub m: u32,
    pub s: u32,
}

impl FastDiv {
    /// The divider for `d` (`d = 0` is treated as 1).
    pub const fn new(d: u32) -> FastDiv {
        let d = if d == 0 { 1 } else { d };
        let mut s = 0;
        while s < 32 && (1u64 << s) < d as u64 {
            s += 1;
        }
        let m = ((1u64 << 32) * ((1u64 << s) - d as u64)) / d as u64 + 1;
        FastDiv { d, m: m as u32, s }
    }

    /// `(n / d, n % d)`.
    #[inline(always)]
    pub const fn divrem(&self, n: u32) -> (u32, u32) {
        let t = ((self.m as u64 * n as u64) >> 32) + n as u64;
        let q = (t >> self.s) as u32;
        (q, n - q * self.d)
    }
}

/// An element taken into f64 and written back from it as scipy's C code does (`(double)x`, then a
/// C cast: toward zero for integers, saturated; rounding for floats): the separable correlation
/// passes and the axis means.
pub trait CastF64: Copy {
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
}

macro_rules! cast_f64 {
    ($($t:ty),*) => {$(
        impl CastF64 for $t {
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
cast_f64!(u8, u16, u32, u64, f32, f64);

/// Prefix of every exported kernel symbol.
#[macro_export]
macro_rules! kernel_prefix {
    () => {
        "gpuprims_"
    };
}

/// Size in bytes of the module's one constant-memory bank, as a literal (the device declares the
/// `.const` array with it): the 64 KiB a module may declare.
#[macro_export]
macro_rules! constant_bank_bytes {
    () => {
        65536
    };
}

/// Size in bytes of the constant-memory bank (`constant_bank_symbol!`). Every family that reads
/// constant memory reads this one bank; the host's `ConstantBank` owns it (one content at a time).
pub const CONSTANT_BANK_BYTES: usize = constant_bank_bytes!();

/// Name of the module's constant-memory bank symbol.
#[macro_export]
macro_rules! constant_bank_symbol {
    () => {
        "gpuprims_constant_bank"
    };
}
