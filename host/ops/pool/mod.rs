//! 2D pooling over the last two axes: max pooling (u8, u16, i32, f32, f64; optional argmax) and
//! average pooling (f32, f64), with PyTorch's semantics, through the ladder of
//! `kernels-gpu/src/pool/`.
//!
//! # Semantics
//! Leading axes are a batch of planes (NCHW works as is). Parameters are a [`Pool2d`] (max) or an
//! [`AvgPool2d`] (average) value; both follow `torch.nn.functional`:
//!
//! | gpuprims | PyTorch |
//! |---|---|
//! | [`Gpu::max_pool2d`]`(x, Pool2d::new((kh, kw)).stride(..).padding(..).dilation(..).ceil_mode(..))` | `F.max_pool2d(x, (kh, kw), stride, padding, dilation, ceil_mode)` |
//! | [`Gpu::max_pool2d_indices`] | `F.max_pool2d(.., return_indices=True)` (flat in-plane `i64` indices) |
//! | [`Gpu::avg_pool2d`]`(x, AvgPool2d::new((kh, kw)).count_include_pad(..).divisor_override(..))` | `F.avg_pool2d(x, (kh, kw), stride, padding, ceil_mode, count_include_pad, divisor_override)` |
//!
//! - Output size per axis: `⌊(n + 2p − d(k − 1) − 1 + (ceil ? s − 1 : 0)) / s⌋ + 1`, less one in
//!   ceil mode when the last window would start inside the right padding (the tutorial's 25 × 25
//!   plane with 2 × 2 windows gives 13 × 13 with `ceil_mode(true)`, 12 × 12 without).
//! - Max: padding is never read (−∞). The first of equal maxima wins; a NaN in the window gives
//!   NaN with the index of the window's last NaN (PyTorch's `v > max || isnan(v)`). A window with
//!   no sample in the plane (PyTorch accepts a few with dilation, e.g. a 1 × 1 plane, kernel 2,
//!   padding 1, dilation 2) gives the type's lowest value (−∞, `MIN`, 0) at the index of its first
//!   tap position stepped past the padding, as PyTorch does.
//! - Average: sums in the element type in row-major order and divides once, as PyTorch's CUDA
//!   kernel (f32 results match it bit for bit); the divisor is the override, else the window size
//!   clipped to the padded plane (`count_include_pad`, PyTorch's default) or the in-plane count.
//!   Integer average pooling is not offered: PyTorch's CUDA backend has none and a rounding rule
//!   would be ours to invent.
//!
//! ```no_run
//! use gpuprims::{AvgPool2d, Gpu, Pool2d};
//! use ndarray::Array4;
//!
//! let gpu = Gpu::new()?;
//! let x = Array4::from_shape_fn((5, 5, 25, 25), |(n, c, h, w)| ((n * 7 + c * 5 + h * 3 + w) % 17) as f32);
//! let y = gpu.max_pool2d(&x, Pool2d::new((2, 2)).ceil_mode(true))?;     // (5, 5, 13, 13)
//! let (m, idx) = gpu.max_pool2d_indices(&x, Pool2d::new((3, 3)).stride((2, 2)).padding((1, 1)))?;
//! let a = gpu.avg_pool2d(&x, AvgPool2d::new((2, 2)).count_include_pad(false))?;
//! let img = ndarray::Array2::<u8>::zeros((480, 640));
//! let small = gpu.max_pool2d(&img, Pool2d::new((2, 2)))?;               // integer max pooling
//! # let _ = (y, m, idx, a, small);
//! # Ok::<(), gpuprims::Error>(())
//! ```
//!
//! # Errors
//! Fewer than 2 dimensions, a kernel, stride or dilation of 0, padding above half the kernel
//! (PyTorch's rule `p ≤ k / 2`), a divisor override of 0 or an output side below 1:
//! [`Error::InvalidArgument`] naming the parameter and the values. `ConstantInput` on an input
//! larger than the 64 KiB constant bank: [`Error::ConstantBankFull`] (never a silent fallback).
//! `Vectorized` on a geometry it cannot run, `SharedTile` on a window too large for its stage:
//! [`Error::Unsupported`]. Planes of 2^32 samples or more: [`Error::TooManyElements`]. An empty
//! batch gives an empty result.

use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys::{self, CUdevice_attribute as Attr};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use ndarray::Dimension;

use crate::abi::CONSTANT_BANK_BYTES;
use crate::abi::pool::{
    AvgValue, FastDiv, POOL_BLOCK, POOL_SYMBOLS, PoolArgs, PoolKernel, PoolOp, PoolValue, VECTORIZED3,
    VECTORIZED3_ARGMAX, output_size, vector_outputs, vector3_fits,
};
use crate::array::{DeviceArray, Operand};
use crate::bank::BankContent;
use crate::error::{Error, Result};
use crate::family::Family;
use crate::gpu::Gpu;
use crate::kernels::{KernelId, Resolver};
use crate::loader::Kernel;
use crate::ops::{check_buffers, planes_and_size};

mod ops;
mod params;
mod plan;

pub use params::*;
pub use plan::*;

// ---------------------------------------------------------------------------------------------
// Variants, element types, kernel table
// ---------------------------------------------------------------------------------------------

/// Which rung of the pooling ladder runs (module docs of `kernels-gpu/src/pool/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PoolVariant {
    /// One output per thread, plain global loads (the baseline). L1 serves the overlap of
    /// neighbouring windows; bottleneck: one scalar load instruction per sample.
    Global,
    /// The tutorial's: the whole input copied into the 64 KiB constant bank (the copy is part of
    /// every call), one output per thread. Constant memory broadcasts one address per warp per
    /// cycle; here the 32 lanes read 32 different addresses, so every load replays up to 32
    /// times — slower than global memory, which is the lesson. Inputs over 64 KiB:
    /// [`Error::ConstantBankFull`].
    ConstantInput,
    /// The tutorial's `tex1Dfetch`: a texture object over the input's linear memory, `tex.1d`
    /// fetches. The object is created when the plan first sees a buffer and destroyed (after a
    /// stream synchronization) when the plan drops or sees another buffer; docs/PERFORMANCE.md
    /// gives the measured creation cost. Inputs past the device's linear-texture width run as
    /// several launches of whole planes.
    Texture,
    /// One output per thread through the read-only data path (`ld.global.nc`).
    ReadOnly,
    /// `16 / size / kw` outputs per thread from one 16-byte load per window row and one vector
    /// store (2 × 2 f32 pooling: reads 4 floats per row, writes 2). Needs stride = kernel, no
    /// padding and no dilation along the width, a kernel width dividing `16 / size`, and rows
    /// of whole 16-byte vectors — or 3-wide windows without dilation at stride 2 (padding 0 or
    /// 1), whose taps reach one element past the thread's vector on each side (ResNet's 3 × 3
    /// stride-2 pooling: 2 f32 outputs per thread, one vector and two scalar loads per window
    /// row); otherwise [`Error::Unsupported`].
    Vectorized,
    /// A block per output tile: the input rows and columns the tile's windows read are staged in
    /// shared memory by 16-byte loads (each input element read from DRAM once, however much the
    /// windows overlap), then each thread walks whole windows out of the stage. For any geometry
    /// the vectorized rung cannot run (dilation, other strides and widths). A window whose tile
    /// of one output row needs more than 48 KiB of shared memory: [`Error::Unsupported`].
    SharedTile,
    /// `Vectorized` where it applies, else `SharedTile` where its stage fits, else `ReadOnly`
    /// (docs/PERFORMANCE.md has the measurements behind the order).
    #[default]
    Auto,
}

impl PoolVariant {
    /// The ladder, in order (without `Auto`): `ALL[k.index()]` runs kernel `k` of
    /// [`PoolKernel::ALL`].
    pub const ALL: [PoolVariant; 6] = [
        PoolVariant::Global,
        PoolVariant::ConstantInput,
        PoolVariant::Texture,
        PoolVariant::ReadOnly,
        PoolVariant::Vectorized,
        PoolVariant::SharedTile,
    ];

    /// Short name (tables, errors).
    pub const fn name(self) -> &'static str {
        match self {
            PoolVariant::Global => "global",
            PoolVariant::ConstantInput => "constant-input",
            PoolVariant::Texture => "texture",
            PoolVariant::ReadOnly => "read-only",
            PoolVariant::Vectorized => "vectorized",
            PoolVariant::SharedTile => "shared-tile",
            PoolVariant::Auto => "auto",
        }
    }
}

macro_rules! pool_table {
    ($($inst:ident => $t:ty, $op:ident, $blocks:literal, $argmax_blocks:literal, $blocks3:literal, $rows3:literal;)*) => {
        /// One pooling kernel instance (reduction × element type), in contract order.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum PoolInstance {
            $($inst),*
        }

        impl PoolInstance {
            /// Every instance, in contract order (`inst as usize` indexes this).
            pub const ALL: &'static [PoolInstance] = &[$(PoolInstance::$inst),*];

            /// The instance's kernel symbols, in `PoolKernel::ALL` order, then the argmax
            /// kernels (`PoolKernel::argmax_symbol`).
            pub const fn names(self) -> [&'static str; POOL_SYMBOLS] {
                match self {
                    $(PoolInstance::$inst => crate::pool_kernel_names!($inst)),*
                }
            }
        }
    };
}

crate::for_each_pool_instance!(pool_table);

// SAFETY: `repr(C)` plain integers; the layout is the contract both sides compile.
unsafe impl DeviceRepr for PoolArgs {}

/// The pooling family's state on one `Gpu`: each instance's kernels, in `PoolKernel` order, and
/// the device's linear-texture limits (read when a texture plan first needs them).
pub(crate) struct PoolKernels {
    ids: Vec<[KernelId; POOL_SYMBOLS]>,
    texture: OnceLock<TextureLimits>,
}

/// The device's limits on a 1D linear texture, in elements and bytes.
#[derive(Clone, Copy)]
pub(super) struct TextureLimits {
    /// Longest linear texture, in elements.
    pub(super) width: usize,
    /// Alignment its base address needs, in bytes.
    pub(super) alignment: usize,
}

impl Family for PoolKernels {
    fn load(k: &mut Resolver) -> Result<Self> {
        Ok(PoolKernels {
            ids: k.table(PoolInstance::ALL, PoolInstance::names)?,
            texture: OnceLock::new(),
        })
    }
}

impl PoolKernels {
    /// The device's linear-texture limits, read once.
    pub(super) fn texture_limits(&self, gpu: &Gpu) -> Result<TextureLimits> {
        if let Some(&t) = self.texture.get() {
            return Ok(t);
        }
        let attr = |a: Attr| gpu.context().attribute(a).map(|v| v.max(1) as usize);
        let t = TextureLimits {
            width: attr(Attr::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH)?,
            alignment: attr(Attr::CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT)?,
        };
        Ok(*self.texture.get_or_init(|| t))
    }
}

/// An element type of max pooling (u8, u16, i32, f32, f64).
pub trait PoolElement: PoolValue + DeviceRepr + Clone + Send + Sync + 'static {
    #[doc(hidden)]
    const MAX_INSTANCE: PoolInstance;
    /// Texture format and channel count of one element (f64: two 32-bit channels).
    #[doc(hidden)]
    const TEXTURE_FORMAT: (sys::CUarray_format, u32);
}

/// An element type of average pooling (f32, f64).
pub trait AvgPoolElement: PoolElement + AvgValue {
    #[doc(hidden)]
    const AVG_INSTANCE: PoolInstance;
}

macro_rules! pool_element {
    ($($t:ty => $max:ident, $format:ident, $channels:literal $(, $avg:ident)?;)*) => {$(
        impl PoolElement for $t {
            const MAX_INSTANCE: PoolInstance = PoolInstance::$max;
            const TEXTURE_FORMAT: (sys::CUarray_format, u32) = (sys::CUarray_format::$format, $channels);
        }
        $(impl AvgPoolElement for $t {
            const AVG_INSTANCE: PoolInstance = PoolInstance::$avg;
        })?
    )*};
}

pool_element! {
    u8 => max_u8, CU_AD_FORMAT_UNSIGNED_INT8, 1;
    u16 => max_u16, CU_AD_FORMAT_UNSIGNED_INT16, 1;
    i32 => max_i32, CU_AD_FORMAT_SIGNED_INT32, 1;
    f32 => max_f32, CU_AD_FORMAT_FLOAT, 1, avg_f32;
    f64 => max_f64, CU_AD_FORMAT_UNSIGNED_INT32, 2, avg_f64;
}
