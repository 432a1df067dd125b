//! gpuprims device kernels, written in Rust and compiled to PTX (`nvptx64-nvidia-cuda`) by the
//! root crate's build.rs, which embeds the PTX into the host library.
//!
//! - [`abi`]: the host↔kernel contract (symbol names, launch arguments, accumulator layouts),
//!   also compiled into the host crate.
//! - [`device`]: thin wrappers over thread indices, barriers, shuffles, memory spaces, atomics.
//! - [`reduce`]: the reduction ladder (steps 1–8).
//! - [`conv1d`]: the 1D filter ladder (global taps → constant taps → shared tile → register blocked).
//! - [`probe`]: launch-floor probes (an empty kernel, one block reading 4 KB).
//! - [`pool`]: 2D max and average pooling (PyTorch semantics) through five input paths.
//! - [`filter2d`]: 2D morphology (dilate/erode of any rectangle, up to van Herk) and linear
//!   filters (Gaussian, Sobel, correlation), one ladder.
//! - [`axis`]: window sums and scipy's uniform filter along any axis of an n-D array, box moments.
//! - [`window`]: sliding-window sums and sums of squares (rows, 2D boxes) up to O(1) running sums.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, stdarch_nvptx, asm_experimental_arch))]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(core_intrinsics, gpu_intrinsics, gpu_launch_sized_workgroup_mem)
)]
#![allow(clippy::missing_safety_doc)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

#[path = "../../abi/mod.rs"]
pub mod abi;
#[cfg(target_arch = "nvptx64")]
pub mod axis;
#[cfg(target_arch = "nvptx64")]
pub mod chain;
#[cfg(target_arch = "nvptx64")]
pub mod conv1d;
#[cfg(target_arch = "nvptx64")]
pub mod device;
#[cfg(target_arch = "nvptx64")]
pub mod filter2d;
#[cfg(target_arch = "nvptx64")]
pub mod pool;
#[cfg(target_arch = "nvptx64")]
pub mod probe;
#[cfg(target_arch = "nvptx64")]
pub mod reduce;
#[cfg(target_arch = "nvptx64")]
pub mod window;
