//! 2D pooling over the last two axes: max pooling (u8, u16, i32, f32, f64; optional argmax) and
//! average pooling (f32, f64), with PyTorch's semantics, through the ladder of
//! `kernels-gpu/src/pool.rs`.
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
//! `Vectorized` on a geometry it cannot run: [`Error::Unsupported`]. Planes of 2^32 samples or
//! more: [`Error::TooManyElements`]. An empty batch gives an empty result.

use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{self, CUdevice_attribute as Attr};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use ndarray::Dimension;

use crate::abi::CONSTANT_BANK_BYTES;
use crate::abi::pool::{
    AvgValue, FastDiv, POOL_BLOCK, POOL_SYMBOLS, PoolArgs, PoolKernel, PoolOp, PoolValue, VECTORIZED_ARGMAX,
    output_size, vector_outputs,
};
use crate::array::{DeviceArray, Operand};
use crate::bank::BankContent;
use crate::error::{Error, Result};
use crate::family::Family;
use crate::gpu::Gpu;
use crate::kernels::KernelId;
use crate::loader::Kernel;
use crate::ops::planes_and_size;

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

/// Max-pooling parameters, PyTorch's `F.max_pool2d` arguments as a value: kernel `(kh, kw)`,
/// stride (default: the kernel), padding (default 0), dilation (default 1), `ceil_mode` (default
/// false). Pairs are `(height, width)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pool2d {
    pub kernel: (usize, usize),
    pub stride: (usize, usize),
    pub padding: (usize, usize),
    pub dilation: (usize, usize),
    pub ceil_mode: bool,
}

impl Pool2d {
    /// `kernel` windows with stride = kernel, no padding, no dilation, floor mode.
    pub const fn new(kernel: (usize, usize)) -> Pool2d {
        Pool2d {
            kernel,
            stride: kernel,
            padding: (0, 0),
            dilation: (1, 1),
            ceil_mode: false,
        }
    }

    /// With stride `s`.
    pub const fn stride(self, s: (usize, usize)) -> Pool2d {
        Pool2d { stride: s, ..self }
    }

    /// With implicit padding `p` on both sides of each axis (at most half the kernel).
    pub const fn padding(self, p: (usize, usize)) -> Pool2d {
        Pool2d { padding: p, ..self }
    }

    /// With dilation `d` (the spacing of the window's taps).
    pub const fn dilation(self, d: (usize, usize)) -> Pool2d {
        Pool2d { dilation: d, ..self }
    }

    /// With ceil mode on or off (round the output size up; partial last windows).
    pub const fn ceil_mode(self, on: bool) -> Pool2d {
        Pool2d { ceil_mode: on, ..self }
    }

    /// The `(oh, ow)` output of an `h × w` plane, or the PyTorch error for these parameters.
    pub fn output_size(&self, h: usize, w: usize) -> Result<(usize, usize)> {
        for (name, (a, b)) in [
            ("kernel", self.kernel),
            ("stride", self.stride),
            ("dilation", self.dilation),
        ] {
            if a == 0 || b == 0 {
                return Err(Error::InvalidArgument {
                    name,
                    reason: format!("must be positive along both axes, got ({a}, {b})"),
                });
            }
        }
        let (k, p) = (self.kernel, self.padding);
        if p.0 > k.0 / 2 || p.1 > k.1 / 2 {
            return Err(Error::InvalidArgument {
                name: "padding",
                reason: format!(
                    "must be at most half the kernel (PyTorch's rule), got padding ({}, {}) for kernel ({}, {})",
                    p.0, p.1, k.0, k.1
                ),
            });
        }
        let axis = |n: usize, k: usize, s: usize, p: usize, d: usize| -> Result<i64> {
            let big = |v: usize| i64::try_from(v).ok().filter(|&v| v < (1 << 31));
            match (big(n), big(k), big(s), big(p), big(d)) {
                (Some(n), Some(k), Some(s), Some(p), Some(d)) => Ok(output_size(n, k, s, p, d, self.ceil_mode)),
                _ => Err(Error::InvalidArgument {
                    name: "pool parameters",
                    reason: format!(
                        "sizes must be below 2^31, got n {n}, kernel {k}, stride {s}, padding {p}, dilation {d}"
                    ),
                }),
            }
        };
        let oh = axis(h, k.0, self.stride.0, p.0, self.dilation.0)?;
        let ow = axis(w, k.1, self.stride.1, p.1, self.dilation.1)?;
        if oh < 1 || ow < 1 {
            return Err(Error::InvalidArgument {
                name: "output size",
                reason: format!("input plane {h} × {w} with {self:?} gives {oh} × {ow}: too small"),
            });
        }
        Ok((oh as usize, ow as usize))
    }
}

/// Average-pooling parameters, PyTorch's `F.avg_pool2d` arguments as a value (no dilation, as
/// there): the window's [`Pool2d`] fields, `count_include_pad` (default true) and a divisor
/// override (default none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AvgPool2d {
    window: Pool2d,
    pub count_include_pad: bool,
    pub divisor_override: Option<i32>,
}

impl AvgPool2d {
    /// `kernel` windows with stride = kernel, no padding, floor mode, padding counted.
    pub const fn new(kernel: (usize, usize)) -> AvgPool2d {
        AvgPool2d {
            window: Pool2d::new(kernel),
            count_include_pad: true,
            divisor_override: None,
        }
    }

    /// With stride `s`.
    pub const fn stride(self, s: (usize, usize)) -> AvgPool2d {
        AvgPool2d {
            window: self.window.stride(s),
            ..self
        }
    }

    /// With padding `p` (at most half the kernel).
    pub const fn padding(self, p: (usize, usize)) -> AvgPool2d {
        AvgPool2d {
            window: self.window.padding(p),
            ..self
        }
    }

    /// With ceil mode on or off.
    pub const fn ceil_mode(self, on: bool) -> AvgPool2d {
        AvgPool2d {
            window: self.window.ceil_mode(on),
            ..self
        }
    }

    /// Whether padding positions count in the divisor.
    pub const fn count_include_pad(self, on: bool) -> AvgPool2d {
        AvgPool2d {
            count_include_pad: on,
            ..self
        }
    }

    /// Divide every window's sum by `d` (nonzero) instead.
    pub const fn divisor_override(self, d: Option<i32>) -> AvgPool2d {
        AvgPool2d {
            divisor_override: d,
            ..self
        }
    }

    /// The window geometry (dilation 1).
    pub const fn window(&self) -> Pool2d {
        self.window
    }

    /// The `(oh, ow)` output of an `h × w` plane, or the PyTorch error for these parameters.
    pub fn output_size(&self, h: usize, w: usize) -> Result<(usize, usize)> {
        if self.divisor_override == Some(0) {
            return Err(Error::InvalidArgument {
                name: "divisor_override",
                reason: "must not be zero".into(),
            });
        }
        self.window.output_size(h, w)
    }
}

// ---------------------------------------------------------------------------------------------
// Variants, element types, kernel table
// ---------------------------------------------------------------------------------------------

/// Which rung of the pooling ladder runs (module docs of `kernels-gpu/src/pool.rs`).
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
    /// of whole 16-byte vectors; otherwise [`Error::Unsupported`].
    Vectorized,
    /// `Vectorized` where it applies, else `ReadOnly` (on the H100 it ties plain global loads and
    /// the texture path on non-overlapping windows; docs/PERFORMANCE.md).
    #[default]
    Auto,
}

impl PoolVariant {
    /// The ladder, in order (without `Auto`): `ALL[k.index()]` runs kernel `k` of
    /// [`PoolKernel::ALL`].
    pub const ALL: [PoolVariant; 5] = [
        PoolVariant::Global,
        PoolVariant::ConstantInput,
        PoolVariant::Texture,
        PoolVariant::ReadOnly,
        PoolVariant::Vectorized,
    ];

    /// Short name (tables, errors).
    pub const fn name(self) -> &'static str {
        match self {
            PoolVariant::Global => "global",
            PoolVariant::ConstantInput => "constant-input",
            PoolVariant::Texture => "texture",
            PoolVariant::ReadOnly => "read-only",
            PoolVariant::Vectorized => "vectorized",
            PoolVariant::Auto => "auto",
        }
    }
}

macro_rules! pool_table {
    ($($inst:ident => $t:ty, $op:ident, $blocks:literal, $argmax_blocks:literal;)*) => {
        /// One pooling kernel instance (reduction × element type), in contract order.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum PoolInstance {
            $($inst),*
        }

        impl PoolInstance {
            /// Every instance, in contract order (`inst as usize` indexes this).
            pub const ALL: &'static [PoolInstance] = &[$(PoolInstance::$inst),*];

            /// The instance's kernel symbols, in `PoolKernel::ALL` order, then the vectorized
            /// argmax kernel.
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
/// the device's linear-texture limits.
pub(crate) struct PoolKernels {
    ids: Vec<[KernelId; POOL_SYMBOLS]>,
    texture_width: usize,
    texture_alignment: usize,
}

impl Family for PoolKernels {
    fn load(gpu: &Gpu) -> Result<Self> {
        let ids = crate::kernels::required_table(PoolInstance::ALL, PoolInstance::names)?;
        let attr = |a: Attr| gpu.context().attribute(a).map(|v| v.max(1) as usize);
        Ok(PoolKernels {
            ids,
            texture_width: attr(Attr::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH)?,
            texture_alignment: attr(Attr::CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT)?,
        })
    }

    fn kernel_names() -> Vec<&'static str> {
        PoolInstance::ALL.iter().flat_map(|i| i.names()).collect()
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

// ---------------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------------

/// The geometry of one pooling launch: the op, the planes and the window parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoolShape {
    pub op: PoolOp,
    pub planes: usize,
    pub h: usize,
    pub w: usize,
    pub window: Pool2d,
    pub count_include_pad: bool,
    pub divisor_override: Option<i32>,
}

impl PoolShape {
    /// Max pooling of `planes` planes of `h × w` with `p`.
    pub fn max(planes: usize, h: usize, w: usize, p: Pool2d) -> PoolShape {
        PoolShape {
            op: PoolOp::Max,
            planes,
            h,
            w,
            window: p,
            count_include_pad: false,
            divisor_override: None,
        }
    }

    /// Average pooling of `planes` planes of `h × w` with `p`.
    pub fn avg(planes: usize, h: usize, w: usize, p: AvgPool2d) -> PoolShape {
        PoolShape {
            op: PoolOp::Avg,
            planes,
            h,
            w,
            window: p.window,
            count_include_pad: p.count_include_pad,
            divisor_override: p.divisor_override,
        }
    }

    /// `(oh, ow)`, validated.
    pub fn output_size(&self) -> Result<(usize, usize)> {
        match self.op {
            PoolOp::Max => self.window.output_size(self.h, self.w),
            PoolOp::Avg => AvgPool2d {
                window: self.window,
                count_include_pad: self.count_include_pad,
                divisor_override: self.divisor_override,
            }
            .output_size(self.h, self.w),
        }
    }
}

/// Why the vectorized kernel cannot run `shape` with `elem_size`-byte elements, if it cannot.
fn vectorized_unsupported(s: &PoolShape, elem_size: usize) -> Option<String> {
    let p = &s.window;
    let (kw, sw, pw, dw) = (p.kernel.1, p.stride.1, p.padding.1, p.dilation.1);
    let lanes = 16 / elem_size;
    if vector_outputs(kw as u32, elem_size).is_none() || kw > lanes {
        return Some(format!(
            "kernel width {kw} does not divide the {lanes} elements of a 16-byte vector"
        ));
    }
    if sw != kw || pw != 0 || dw != 1 {
        return Some(format!(
            "needs stride = kernel and no padding or dilation along the width, got stride {sw}, padding {pw}, dilation {dw} for kernel width {kw}"
        ));
    }
    if !s.w.is_multiple_of(lanes) {
        return Some(format!("rows of {} elements are not whole 16-byte vectors", s.w));
    }
    None
}

/// One launch of a plan: the arguments (a plane range) and, for textures, the object's offset.
#[derive(Clone, Copy, Debug)]
struct Launch {
    args: PoolArgs,
    cfg: LaunchConfig,
}

/// Texture objects over one input buffer (one per launch), destroyed after the stream drains.
struct Textures {
    key: (u64, usize),
    /// One object per launch, and the input element its texture element 0 holds
    /// (`PoolArgs::texture_base`).
    objects: Vec<(sys::CUtexObject, u64)>,
    stream: Arc<CudaStream>,
}

impl Drop for Textures {
    fn drop(&mut self) {
        // A kernel may still fetch through the objects, on this stream or (a plan enqueued from
        // a forked handle) another: let the context drain first. Errors here have nowhere to go
        // (a failed sync means the context is already broken).
        let _ = self.stream.context().synchronize();
        for &(t, _) in &self.objects {
            // SAFETY: `t` was created by `cuTexObjectCreate` and is destroyed once, here.
            unsafe { sys::cuTexObjectDestroy(t) };
        }
    }
}

/// A prepared pooling launch for one shape: resolved kernel, launches (several only for textures
/// over inputs past the device's linear-texture width), output size. Reusable across inputs of
/// that shape; the examples and the bench time [`PoolPlan::enqueue`] alone.
pub struct PoolPlan<T: PoolElement> {
    instance: PoolInstance,
    kernel: PoolKernel,
    /// The rung's kernel, and for the vectorized max rung its argmax form (launched when the
    /// caller asks for indices).
    kernels: (Arc<Kernel>, Option<Arc<Kernel>>),
    variant: PoolVariant,
    output: (usize, usize),
    launches: Vec<Launch>,
    input_len: usize,
    textures: Mutex<Option<Textures>>,
    _t: std::marker::PhantomData<T>,
}

impl<T: PoolElement> PoolPlan<T> {
    /// Plans max pooling of `shape` (of element type `T`) with `variant`.
    pub fn max(gpu: &Gpu, shape: PoolShape, variant: PoolVariant) -> Result<Self> {
        Self::new(gpu, T::MAX_INSTANCE, shape, variant)
    }

    fn new(gpu: &Gpu, instance: PoolInstance, shape: PoolShape, variant: PoolVariant) -> Result<Self> {
        let (oh, ow) = shape.output_size()?;
        let size = size_of::<T>();
        let plane = shape.h * shape.w;
        if plane > u32::MAX as usize {
            return Err(Error::TooManyElements {
                op: "pool2d (one plane)",
                len: plane,
                max: u32::MAX as usize,
            });
        }
        let input_len = shape.planes * plane;
        let kernel = match variant {
            PoolVariant::Auto if vectorized_unsupported(&shape, size).is_none() => PoolKernel::Vectorized,
            PoolVariant::Auto => PoolKernel::ReadOnly,
            v => PoolKernel::ALL[PoolVariant::ALL.iter().position(|&r| r == v).expect("a rung")],
        };
        if kernel == PoolKernel::Vectorized
            && let Some(reason) = vectorized_unsupported(&shape, size)
        {
            return Err(Error::Unsupported {
                variant: PoolVariant::Vectorized.name(),
                reason,
            });
        }
        let bytes = input_len * size;
        if kernel == PoolKernel::ConstantInput && bytes > CONSTANT_BANK_BYTES {
            return Err(Error::ConstantBankFull {
                what: "the pooling input",
                bytes,
                max: CONSTANT_BANK_BYTES,
            });
        }
        // Threads per output row: one per output, or one per 16-byte vector of an input row.
        let cols = match kernel {
            PoolKernel::Vectorized => shape.w / (16 / size),
            _ => ow,
        };
        let threads_per_plane = oh as u64 * cols as u64;
        // Each launch indexes its threads in 32 bits: at most this many threads.
        let max_threads = (1u64 << 32) - POOL_BLOCK as u64;
        if threads_per_plane > max_threads {
            return Err(Error::TooManyElements {
                op: "pool2d (outputs of one plane)",
                len: oh * ow,
                max: max_threads as usize,
            });
        }
        let p = &shape.window;
        let base = PoolArgs {
            plane_begin: 0,
            plane_end: shape.planes as u64,
            texture_base: 0,
            h: shape.h as u32,
            w: shape.w as u32,
            oh: oh as u32,
            ow: ow as u32,
            kh: p.kernel.0 as u32,
            kw: p.kernel.1 as u32,
            sh: p.stride.0 as u32,
            sw: p.stride.1 as u32,
            ph: p.padding.0 as u32,
            pw: p.padding.1 as u32,
            dh: p.dilation.0 as u32,
            dw: p.dilation.1 as u32,
            count_include_pad: shape.count_include_pad as u32,
            divisor: shape.divisor_override.unwrap_or(0),
            cols: FastDiv::new(cols as u32),
            rows: FastDiv::new(oh as u32),
            _pad: 0,
        };
        // Planes per launch: all of them, except past 2^32 threads or, for textures, past the
        // linear-texture width (less the slack of aligning the object's base down).
        let mut per_launch = (max_threads / threads_per_plane.max(1)) as usize;
        if kernel == PoolKernel::Texture {
            let family = gpu.family::<PoolKernels>()?;
            let width = family
                .texture_width
                .min(i32::MAX as usize)
                .saturating_sub(family.texture_alignment / size);
            if plane > width {
                return Err(Error::Unsupported {
                    variant: PoolVariant::Texture.name(),
                    reason: format!("a plane of {plane} elements exceeds the {width}-element linear texture"),
                });
            }
            per_launch = per_launch.min(width / plane.max(1));
        }
        let per_launch = per_launch.max(1);
        let mut launches = Vec::new();
        let mut begin = 0;
        while begin < shape.planes {
            let end = (begin + per_launch).min(shape.planes);
            let blocks = ((end - begin) as u64 * threads_per_plane).div_ceil(POOL_BLOCK as u64);
            launches.push(Launch {
                args: PoolArgs {
                    plane_begin: begin as u64,
                    plane_end: end as u64,
                    ..base
                },
                cfg: LaunchConfig {
                    grid_dim: (blocks as u32, 1, 1),
                    block_dim: (POOL_BLOCK, 1, 1),
                    shared_mem_bytes: 0,
                },
            });
            begin = end;
        }
        let variant = PoolVariant::ALL[kernel.index()];
        let ids = &gpu.family::<PoolKernels>()?.ids[instance as usize];
        let argmax = kernel == PoolKernel::Vectorized && shape.op == PoolOp::Max;
        let kernels = (
            gpu.kernel(ids[kernel.index()])?.clone(),
            argmax
                .then(|| gpu.kernel(ids[VECTORIZED_ARGMAX]).cloned())
                .transpose()?,
        );
        Ok(PoolPlan {
            instance,
            kernel,
            kernels,
            variant,
            output: (oh, ow),
            launches,
            input_len,
            textures: Mutex::new(None),
            _t: std::marker::PhantomData,
        })
    }

    /// The variant that runs (`Auto` resolved).
    pub fn variant(&self) -> PoolVariant {
        self.variant
    }

    /// `(oh, ow)` of each output plane.
    pub fn output_size(&self) -> (usize, usize) {
        self.output
    }

    /// Creates the texture objects over `x` unless this plan already holds them (Texture plans;
    /// a no-op otherwise). [`PoolPlan::enqueue`] calls it; call it yourself to time it.
    pub fn prepare_texture(&self, gpu: &Gpu, x: &CudaSlice<T>) -> Result<()> {
        if self.kernel != PoolKernel::Texture {
            return Ok(());
        }
        let (ptr, _sync) = x.device_ptr(gpu.stream());
        let key = (ptr, x.len());
        let mut held = self.textures.lock().unwrap_or_else(|e| e.into_inner());
        if held.as_ref().is_some_and(|t| t.key == key) {
            return Ok(());
        }
        *held = None; // drains the stream and destroys the objects over the previous buffer
        let align = gpu.family::<PoolKernels>()?.texture_alignment as u64;
        let size = size_of::<T>() as u64;
        let mut textures = Textures {
            key,
            objects: Vec::new(),
            stream: gpu.stream().clone(),
        };
        let plane = self.launches[0].args.h as u64 * self.launches[0].args.w as u64;
        for l in &self.launches {
            let first = ptr + l.args.plane_begin * plane * size;
            let slack = first % align; // element `first` sits `slack` bytes into the object
            let start = first - slack;
            let end = ptr + l.args.plane_end * plane * size;
            let (format, channels) = T::TEXTURE_FORMAT;
            let mut res: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
            res.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_LINEAR;
            res.res.linear = sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3 {
                devPtr: start,
                format,
                numChannels: channels,
                sizeInBytes: (end - start) as usize,
            };
            // SAFETY: all-zero is a valid CUDA_TEXTURE_DESC (clamp addressing, point filtering).
            let mut tex: sys::CUDA_TEXTURE_DESC = unsafe { std::mem::zeroed() };
            tex.flags = sys::CU_TRSF_READ_AS_INTEGER;
            let mut object: sys::CUtexObject = 0;
            // SAFETY: the descriptors are initialized; the range lies in `x`'s allocation except
            // for up to `align − 1` bytes before it (alignment slack the kernel never indexes).
            unsafe { sys::cuTexObjectCreate(&mut object, &res, &tex, std::ptr::null()) }.result()?;
            // Texture element 0 is input element `plane_begin · plane − slack / size` (wrapping).
            let base = (l.args.plane_begin * plane).wrapping_sub(slack / size);
            textures.objects.push((object, base));
        }
        *held = Some(textures);
        Ok(())
    }

    /// Destroys the texture objects this plan holds (after draining the stream).
    pub fn release_texture(&self) {
        *self.textures.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Enqueues the pooling of `x` (its first `planes · h · w` elements, C order) into `y` (and
    /// the argmax into `indices` for max pooling, when given). Asynchronous. `ConstantInput`
    /// first copies `x` into its kernel's constant bank (`host/bank.rs`'s protocol).
    pub fn enqueue(
        &self,
        gpu: &Gpu,
        x: &CudaSlice<T>,
        y: &mut CudaSlice<T>,
        indices: Option<&mut CudaSlice<i64>>,
    ) -> Result<()> {
        let out_len = self
            .launches
            .last()
            .map_or(0, |l| l.args.plane_end as usize * self.output.0 * self.output.1);
        for (name, len, need) in [("x", x.len(), self.input_len), ("y", y.len(), out_len)] {
            if len < need {
                return Err(Error::InvalidArgument {
                    name,
                    reason: format!("holds {len} elements, the plan needs {need}"),
                });
            }
        }
        if self.instance != T::MAX_INSTANCE && indices.is_some() {
            return Err(Error::InvalidArgument {
                name: "indices",
                reason: "only max pooling has indices".into(),
            });
        }
        let _order = gpu.order_after(
            [x.stream(), y.stream()]
                .into_iter()
                .chain(indices.as_ref().map(|i| i.stream())),
        )?;
        let stream = gpu.stream();
        let idx_ptr: u64 = match indices {
            Some(i) if i.len() < out_len => {
                return Err(Error::InvalidArgument {
                    name: "indices",
                    reason: format!("holds {} elements, the plan needs {out_len}", i.len()),
                });
            }
            Some(i) => i.device_ptr(stream).0,
            None => 0,
        };
        if self.kernel == PoolKernel::Vectorized {
            let (xp, yp) = (x.device_ptr(stream).0, y.device_ptr(stream).0);
            if xp % 16 != 0 || yp % 16 != 0 {
                return Err(Error::Unsupported {
                    variant: PoolVariant::Vectorized.name(),
                    reason: format!("buffers at {xp:#x} and {yp:#x} are not both 16-byte aligned"),
                });
            }
        }
        self.prepare_texture(gpu, x)?;
        let kernel = match (&self.kernels, idx_ptr) {
            ((_, Some(argmax)), 1..) => argmax,
            ((k, _), _) => k,
        };
        let held = self.textures.lock().unwrap_or_else(|e| e.into_inner());
        let mut launch_all = || -> Result<()> {
            for (i, l) in self.launches.iter().enumerate() {
                let mut args = l.args;
                let mut tex = 0u64;
                if let Some(t) = held.as_ref() {
                    (tex, args.texture_base) = t.objects[i];
                }
                let mut b = kernel.launch_on(gpu)?;
                b.arg(x).arg(&tex).arg(&mut *y).arg(&idx_ptr).arg(&args);
                // SAFETY: the arguments match `(x: *const T, tex: u64, y: *mut T, idx: *mut i64,
                // args: PoolArgs)` of every `gpuprims_pool_*` entry; x and y hold the plan's
                // input and outputs (checked above), idx is null or holds the outputs; the
                // vectorized kernel's geometry and alignment were checked; the texture objects
                // cover this launch's planes; the constant bank holds x for ConstantInput.
                unsafe { b.launch(l.cfg) }?;
            }
            Ok(())
        };
        let Some(bank) = kernel.bank() else {
            return launch_all();
        };
        let (src, _sync) = x.device_ptr(stream);
        // SAFETY: `src` addresses the input's bytes (≤ the bank: checked in `new`), alive and
        // unchanged until the stream-ordered copy ran. A fresh content id: the input's contents
        // may differ from any earlier call's.
        unsafe {
            bank.with_content(
                gpu,
                BankContent::fresh(),
                src,
                self.input_len * size_of::<T>(),
                launch_all,
            )
        }
    }
}

impl<T: AvgPoolElement> PoolPlan<T> {
    /// Plans average pooling of `shape` (of element type `T`) with `variant`.
    pub fn avg(gpu: &Gpu, shape: PoolShape, variant: PoolVariant) -> Result<Self> {
        Self::new(gpu, T::AVG_INSTANCE, shape, variant)
    }
}

// ---------------------------------------------------------------------------------------------
// Ops
// ---------------------------------------------------------------------------------------------

/// A pooling result on the device: values and, when asked, the argmax.
type PoolOutputs<T, D> = (DeviceArray<T, D>, Option<DeviceArray<i64, D>>);

/// `dim` with its last two axes replaced by `(oh, ow)`.
pub(crate) fn pooled_dim<D: Dimension>(dim: &D, (oh, ow): (usize, usize)) -> D {
    let mut out = dim.clone();
    let s = out.slice_mut();
    let n = s.len();
    s[n - 2] = oh;
    s[n - 1] = ow;
    out
}

impl Gpu {
    /// Runs `shape`'s pooling of `x` into fresh outputs (and indices when asked).
    fn run_pool<T, D, X>(
        &self,
        x: &X,
        instance: PoolInstance,
        shape: impl FnOnce(usize, usize, usize) -> PoolShape,
        want_indices: bool,
        variant: PoolVariant,
    ) -> Result<PoolOutputs<T, D>>
    where
        T: PoolElement,
        D: Dimension,
        X: Operand<Elem = T, Dim = D>,
    {
        let dim = x.dims();
        let (planes, h, w) = planes_and_size(dim.slice())?;
        let shape = shape(planes, h, w);
        let out_dim = pooled_dim(&dim, shape.output_size()?);
        let mut y = DeviceArray::<T, D>::uninit(self, out_dim.clone())?;
        let mut idx = if want_indices {
            Some(DeviceArray::<i64, D>::uninit(self, out_dim)?)
        } else {
            None
        };
        if let Some(input) = x.device(self)? {
            let plan = PoolPlan::<T>::new(self, instance, shape, variant)?;
            plan.enqueue(
                self,
                input.slice(),
                y.as_mut_slice(),
                idx.as_mut().map(|i| i.as_mut_slice()),
            )?;
        }
        Ok((y, idx))
    }

    /// Max pooling over the last two axes of `x` (PyTorch `F.max_pool2d`), `Auto` variant. The
    /// result has `x`'s leading axes and the output size of `p`.
    pub fn max_pool2d<T: PoolElement, X: Operand<Elem = T>>(&self, x: X, p: Pool2d) -> Result<X::Output<T>> {
        self.max_pool2d_with(x, p, PoolVariant::Auto)
    }

    /// [`Gpu::max_pool2d`] with a chosen rung of the ladder.
    pub fn max_pool2d_with<T: PoolElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        p: Pool2d,
        variant: PoolVariant,
    ) -> Result<X::Output<T>> {
        let (y, _) = self.run_pool(
            &x,
            T::MAX_INSTANCE,
            |n, h, w| PoolShape::max(n, h, w, p),
            false,
            variant,
        )?;
        X::finish(self, y)
    }

    /// Max pooling and the flat in-plane index (`row · w + col`, `i64`) of each maximum (PyTorch
    /// `return_indices=True`), `Auto` variant.
    pub fn max_pool2d_indices<T: PoolElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        p: Pool2d,
    ) -> Result<(X::Output<T>, X::Output<i64>)> {
        self.max_pool2d_indices_with(x, p, PoolVariant::Auto)
    }

    /// [`Gpu::max_pool2d_indices`] with a chosen rung of the ladder.
    pub fn max_pool2d_indices_with<T: PoolElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        p: Pool2d,
        variant: PoolVariant,
    ) -> Result<(X::Output<T>, X::Output<i64>)> {
        let (y, idx) = self.run_pool(&x, T::MAX_INSTANCE, |n, h, w| PoolShape::max(n, h, w, p), true, variant)?;
        let idx = idx.expect("indices were asked for");
        Ok((X::finish(self, y)?, X::finish(self, idx)?))
    }

    /// Average pooling over the last two axes of `x` (PyTorch `F.avg_pool2d`), `Auto` variant.
    pub fn avg_pool2d<T: AvgPoolElement, X: Operand<Elem = T>>(&self, x: X, p: AvgPool2d) -> Result<X::Output<T>> {
        self.avg_pool2d_with(x, p, PoolVariant::Auto)
    }

    /// [`Gpu::avg_pool2d`] with a chosen rung of the ladder.
    pub fn avg_pool2d_with<T: AvgPoolElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        p: AvgPool2d,
        variant: PoolVariant,
    ) -> Result<X::Output<T>> {
        let (y, _) = self.run_pool(
            &x,
            T::AVG_INSTANCE,
            |n, h, w| PoolShape::avg(n, h, w, p),
            false,
            variant,
        )?;
        X::finish(self, y)
    }
}
