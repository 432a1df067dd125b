//! The host↔kernel contract: kernel symbol names, `#[repr(C)]` launch arguments, block sizes and
//! the accumulator types that cross the boundary.
//!
//! This folder is compiled twice: into the PTX (as part of `gpuprims-kernels`) and into the host
//! crate (`#[path]`-included as `gpuprims::abi`). Everything here is plain `core` Rust with no
//! device intrinsics, so one definition serves both sides and they cannot drift apart.

pub mod border;
pub mod conv1d;
pub mod filter2d;
pub mod pool;
pub mod probe;
pub mod reduce;
pub mod window;

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
