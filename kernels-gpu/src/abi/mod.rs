//! The host↔kernel contract: kernel symbol names, `#[repr(C)]` launch arguments, block sizes and
//! the accumulator types that cross the boundary.
//!
//! This folder is compiled twice: into the PTX (as part of `gpuprims-kernels`) and into the host
//! crate (`#[path]`-included as `gpuprims::abi`). Everything here is plain `core` Rust with no
//! device intrinsics, so one definition serves both sides and they cannot drift apart.

pub mod conv1d;
pub mod reduce;

/// Prefix of every exported kernel symbol.
#[macro_export]
macro_rules! kernel_prefix {
    () => {
        "gpuprims_"
    };
}
