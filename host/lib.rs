//! # gpuprims
//!
//! GPU kernels written in Rust (compiled to PTX from the `no_std` crate `kernels-gpu/`) and launched
//! through [cudarc] behind an [ndarray] API. Every kernel family ships its whole optimization ladder
//! (global memory → shared memory → warp shuffles → vector loads …) so you can use the fastest
//! (`Auto`) or study each step; every step is checked against a CPU reference ([`cpu`]).
//!
//! | CPU (ndarray / std)             | gpuprims                                      |
//! |---------------------------------|-----------------------------------------------|
//! | `a.iter().map(|x| x*x).sum()`   | [`Gpu::sum_of_squares`] (exact for integers)  |
//! | `a.sum()`                       | [`Gpu::sum`]                                  |
//! | `a.iter().min()` / `max()`      | [`Gpu::min`] / [`Gpu::max`] (NaN propagates)  |
//! | `a.mean()`, `a.var(0.0)`        | [`Gpu::mean_variance`] (one pass)             |
//! | `scipy.ndimage.correlate1d(x, t)` / `torch.conv1d` | [`Gpu::conv1d`] (f32/f64, any [`Border`]) |
//! | `scipy.ndimage.convolve1d(x, t)` | [`Gpu::convolve1d`]                   |
//! | `scipy.ndimage.uniform_filter1d(x, w)` | [`Gpu::mean_filter1d`]          |
//! | `torch.nn.functional.max_pool2d` / `avg_pool2d` | [`Gpu::max_pool2d`] (u8…f64, argmax) / [`Gpu::avg_pool2d`] |
//! | `scipy.ndimage.grey_dilation` / `grey_erosion` (`size=`) | [`Gpu::dilate`] / [`Gpu::erode`] (u8/u16/f32, any rectangle) |
//! | `scipy.ndimage.gaussian_filter`, `sobel`, `correlate` | [`Gpu::gaussian`], [`Gpu::sobel`], [`Gpu::correlate2d`] |
//! | `scipy.ndimage.grey_dilation(v, size=(5, 5, 5))`, `gaussian_filter(v, (1, 2, 2))` | [`Gpu::dilate_nd`], [`Gpu::gaussian_nd`] (any dimension, a size per trailing axis) |
//! | `scipy.ndimage.uniform_filter1d(v, 5, axis=0)`, `correlate1d(v, w, axis=0)` | [`Gpu::uniform_filter1d`], [`Gpu::correlate1d`] (any axis, no transpose) |
//! | `Array::from(..)` on the device | [`DeviceArray::upload`] / [`DeviceArray::download`] |
//!
//! ```no_run
//! use gpuprims::{Gpu, ReduceVariant};
//! use ndarray::Array1;
//!
//! let gpu = Gpu::new()?;                       // Error::NoDevice without a GPU, never a panic
//! let x = Array1::from_iter((0..1_000_000).map(|i| (i % 2001) as i32 - 1000));
//! let ss: u128 = gpu.sum_of_squares(&x)?;      // i32 squares summed exactly in 128 bits
//! let step5 = gpu.sum_of_squares_with(&x, ReduceVariant::SharedPartial)?;
//! assert_eq!(ss, step5);
//! # Ok::<(), gpuprims::Error>(())
//! ```
//!
//! Inputs are `ndarray` views of any dimension and layout (non-contiguous views are copied to a
//! contiguous buffer before upload) or [`DeviceArray`]s already on the device.

#[doc(hidden)]
#[path = "../abi/mod.rs"]
pub mod abi;

mod array;
mod bank;
mod border;
pub mod cpu;
mod error;
mod family;
mod gpu;
mod graph;
#[cfg(feature = "image")]
pub mod image_io;
pub mod kernels;
mod loader;
mod multi;
pub mod ops;
mod pinned;
mod shape;
mod timing;

pub use array::{DeviceArray, InputSlice, Operand};
pub use border::Border;
pub use error::{Error, Result};
pub use gpu::{DeviceProps, Gpu};
pub use graph::Graph;
pub use loader::{KernelLoad, LoadedFrom};
pub use multi::{Gpus, ShardOperand, Sharded, Stencil};
pub use ops::axis::{AxisElement, MomentsFloat};
pub use ops::chain::{Chain, ChainOutput, ChainPlan, ChainVariant};
pub use ops::conv1d::{Conv1dElement, Conv1dPlan, Conv1dVariant, Filter1d};
pub use ops::filter2d::{
    Filter2dElement, Filter2dPlan, Filter2dPlanVariant, Filter2dShape, Filter2dVariant, MorphVariant, Rounding,
    SobelElement,
};
pub use ops::pool::{AvgPool2d, AvgPoolElement, Pool2d, PoolElement, PoolPlan, PoolShape, PoolVariant};
pub use ops::reduce::{MeanVariance, ReduceElement, ReducePlan, ReducePolicy, ReduceVariant};
pub use ops::window::{BoxPlan, BoxVariant, ExactElement, WindowElement, WindowFloat, WindowPlan, WindowVariant};
pub use pinned::PinnedArray;
pub use timing::{LaunchFloor, TimedAs, Timing};

/// Compiles the README's usage snippet as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// Compiles docs/SCALING.md's snippet as a doctest.
#[doc = include_str!("../docs/SCALING.md")]
#[cfg(doctest)]
pub struct ScalingDoctests;
