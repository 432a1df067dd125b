//! Thin, documented wrappers over `core::arch::nvptx` and inline PTX. Kernels use these; raw
//! `asm!` lives only in this module.

pub mod bank;
pub mod memory;
pub mod thread;
pub mod warp;

pub use bank::*;
pub use memory::*;
pub use thread::*;
pub use warp::*;
