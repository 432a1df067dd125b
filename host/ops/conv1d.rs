//! 1D filters along the last axis: correlation, convolution and the mean filter, for f32 and f64,
//! on arrays of any dimension (leading axes are a batch of independent signals), through the
//! ladder of `kernels-gpu/src/conv1d.rs`.
//!
//! # Semantics
//! For taps `t[0..L]` anchored at `a`, each row `x` of `n` samples becomes
//!
//! ```text
//! y[i] = Σ_{k<L} t[k] · x̃[i + k − a]          (x̃: x extended by the Border)
//! ```
//!
//! | gpuprims | formula | scipy.ndimage | PyTorch |
//! |---|---|---|---|
//! | [`Gpu::conv1d`] | taps as given, `a = L/2` | `correlate1d(x, t, mode=…)` | `F.conv1d(x, t, padding=L/2)` for odd `L`, zero border |
//! | [`Gpu::convolve1d`] | taps reversed, `a = L − 1 − L/2` | `convolve1d(x, t, mode=…)` | — |
//! | [`Gpu::mean_filter1d`] | `w` taps of `1/w`, `a = w/2` | `uniform_filter1d(x, w, mode=…)` | — |
//!
//! `conv1d` is the deep-learning (and the tutorial's) "convolution", which is a correlation;
//! `convolve1d` is the flipped one of signal processing. Both match scipy index for index,
//! including even tap counts and filters longer than the signal.
//!
//! # Accuracy
//! Each output is accumulated in the element type with fused multiply-adds, in an order that
//! depends on the variant. Against the exact result, `|y − y_exact| ≤ (L + 1) · u · Σ_k |t_k ·
//! x̃_k|` with `u = 2⁻²⁴` (f32) or `2⁻⁵³` (f64); the mean filter adds one more `u` for rounding
//! `1/w`. The tests hold f32 to that bound and f64 to `max(1e-12, (L + 2)·u)` relative to
//! `Σ|t·x|`. Non-finite taps or samples propagate (a constant border still multiplies its value
//! by every tap, so `NaN` taps give `NaN` everywhere, as in scipy).
//!
//! # Errors
//! Empty taps or a zero mean width: [`Error::InvalidArgument`]. More taps than the constant bank
//! holds (8192 f64 or 16384 f32) for any variant but `GlobalTaps` and `Auto`:
//! [`Error::TooManyTaps`]; `GlobalTaps` takes any count and `Auto` falls back to register
//! blocking with taps read from global memory (`RegisterBlockedGlobalTaps`). A 0-dimensional input: [`Error::InvalidArgument`].
//! An empty signal (or batch) gives an empty result.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use ndarray::Dimension;

use crate::abi::conv1d::{CONV1D_BLOCK, Conv1dArgs, Conv1dStep, max_constant_taps};
use crate::array::{DeviceArray, Operand};
use crate::bank::BankContent;
use crate::border::Border;
use crate::cpu::conv1d::Real;
use crate::error::{Error, Result};
use crate::family::Family;
use crate::gpu::Gpu;
use crate::kernels::{KernelId, Resolver};
use crate::loader::Kernel;
use crate::ops::{check_buffers, rows_and_len};

macro_rules! conv1d_table {
    ($($t:ident),* $(,)?) => {
        /// Element type of a 1D filter kernel, in contract order.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Conv1dType {
            $($t),*
        }

        impl Conv1dType {
            /// Every type, in contract order (`ty as usize` indexes this).
            pub const ALL: &'static [Conv1dType] = &[$(Conv1dType::$t),*];

            /// Size in bytes of one element.
            pub const fn elem_size(self) -> usize {
                match self {
                    $(Conv1dType::$t => core::mem::size_of::<$t>()),*
                }
            }

            /// The type's kernel symbols, in `Conv1dStep::ALL` order.
            pub const fn names(self) -> [&'static str; Conv1dStep::ALL.len()] {
                match self {
                    $(Conv1dType::$t => crate::conv1d_kernel_names!($t)),*
                }
            }
        }
    };
}

crate::for_each_conv1d_type!(conv1d_table);

// SAFETY: `repr(C)` with explicit padding, for the filter element types (f32, f64); the layout is
// the contract both sides compile.
unsafe impl<T: Conv1dElement> DeviceRepr for Conv1dArgs<T> {}

/// The 1D filter family's state on one `Gpu`: each element type's kernels, in `Conv1dStep` order.
pub(crate) struct Conv1dKernels {
    ids: Vec<[KernelId; Conv1dStep::ALL.len()]>,
}

impl Family for Conv1dKernels {
    fn load(k: &mut Resolver) -> Result<Self> {
        Ok(Conv1dKernels {
            ids: k.table(Conv1dType::ALL, Conv1dType::names)?,
        })
    }
}

/// Which rung of the 1D filter ladder runs (see the table in `kernels-gpu/src/conv1d.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Conv1dVariant {
    /// One output per thread; taps and samples read from global memory (the tutorial's first
    /// kernel). Bottleneck: every thread loads every tap.
    GlobalTaps,
    /// Taps in constant memory: a warp reads each tap as one broadcast. Bottleneck: `L` global
    /// loads per output, served by the caches.
    ConstantTaps,
    /// Constant taps, and each block stages its 256 samples plus the `L − 1` halo in shared
    /// memory once. Bottleneck: a barrier and a shared-memory round trip per block.
    SharedTile,
    /// Constant taps, 32 bytes of outputs per thread from two 16-byte loads, a sliding window of
    /// registers and two 16-byte stores; the window's extra samples are L1-cached global loads.
    /// Bottleneck for long filters: those loads are strided across the warp (many L1 wavefronts).
    RegisterBlocked,
    /// `RegisterBlocked` whose window slides over a padded, bank-conflict-free shared-memory copy
    /// of the block's span and halo. Costs a barrier per block; pays off for long filters.
    RegisterBlockedShared,
    /// Register blocking (8 outputs per thread) over a window read in 16-byte vectors, the tap
    /// loop in whole chunks of 8 taps with the window moving by register renaming (only the
    /// first and last chunks are masked). f64 stages the block's span and halo with 16-byte loads
    /// into a shared tile padded so that the threads' vector reads are free of bank conflicts;
    /// f32 reads each thread's window straight through L1 (no tile, no barrier), which measured
    /// faster for 4-byte samples and slower for 8-byte ones. Removes the scalar loads, per-load
    /// index arithmetic and tail loops of `RegisterBlockedShared`: the long-filter kernel. Blocks
    /// at row ends compute output by output, so rows much shorter than a block's 2048 outputs
    /// are better served by the other variants.
    RegisterBlockedVector,
    /// `RegisterBlocked` with its taps read from global memory: any number of taps (past the
    /// constant bank's capacity). What `Auto` runs for such filters; not a rung of the ladder
    /// ([`Conv1dVariant::ALL`]).
    RegisterBlockedGlobalTaps,
    /// By the H100 crossover table of docs/PERFORMANCE.md ("Auto's crossovers"; 3 … 127 taps, f32
    /// and f64, 2^20 and 2^24 outputs):
    /// - short filters (fewer than [`AUTO_LONG_MIN_TAPS`] taps): `RegisterBlocked` from
    ///   [`AUTO_SHORT_BLOCKED_MIN_OUTPUTS`] outputs, `SharedTile` below;
    /// - long filters: `SharedTile` below [`AUTO_BLOCKED_MIN_OUTPUTS`] outputs (one output per
    ///   thread keeps a small input's SMs busy); above, `RegisterBlockedVector` from
    ///   [`auto_vector_min_taps`] taps on rows of at least [`AUTO_VECTOR_MIN_ROW`] samples, else
    ///   `RegisterBlockedShared`;
    /// - past the constant bank's capacity, register blocking with taps read from global memory.
    #[default]
    Auto,
}

/// From this many taps a filter is *long* for `Auto` (below it `RegisterBlocked`'s direct loads
/// win at every measured size from 2^20 outputs: 3, 5 and 9 taps).
pub const AUTO_LONG_MIN_TAPS: usize = 16;

/// From this many outputs (`rows · n`) `Auto` runs `RegisterBlocked` for short filters (at 2^20
/// outputs it beat the shared tile by 8–25% at 3, 5 and 9 taps; smaller sizes were not re-measured
/// with GPU timing, so the shared tile stays there).
pub const AUTO_SHORT_BLOCKED_MIN_OUTPUTS: usize = 1 << 20;

/// From this many outputs `Auto` runs a register-blocked variant for long filters (at 2^20
/// outputs the one-output-per-thread shared tile was ahead at every long filter; at 2^24 behind).
pub const AUTO_BLOCKED_MIN_OUTPUTS: usize = 1 << 21;

/// Shortest row `Auto` gives `RegisterBlockedVector`: its blocks span 2048 outputs, and a block
/// that meets a row end computes output by output, so short rows go to `RegisterBlockedShared`
/// (a rule of thumb: at most a quarter of the blocks meet a row end; not measured).
pub const AUTO_VECTOR_MIN_ROW: usize = 8192;

/// Fewest taps for which `Auto` prefers `RegisterBlockedVector` to `RegisterBlockedShared` on
/// long rows: 16 for f32 (measured ahead at 16, 31, 63 and 127 taps), 31 for f64 (behind at 16
/// taps, ahead at 31, 63 and 127; 17–30 not measured).
pub const fn auto_vector_min_taps(elem_size: usize) -> usize {
    if elem_size <= 4 { 16 } else { 31 }
}

impl Conv1dVariant {
    /// The ladder, in order (without `Auto`).
    pub const ALL: [Conv1dVariant; 6] = [
        Conv1dVariant::GlobalTaps,
        Conv1dVariant::ConstantTaps,
        Conv1dVariant::SharedTile,
        Conv1dVariant::RegisterBlocked,
        Conv1dVariant::RegisterBlockedShared,
        Conv1dVariant::RegisterBlockedVector,
    ];

    /// Short name (tables, errors).
    pub const fn name(self) -> &'static str {
        match self {
            Conv1dVariant::GlobalTaps => "global-taps",
            Conv1dVariant::ConstantTaps => "constant-taps",
            Conv1dVariant::SharedTile => "shared-tile",
            Conv1dVariant::RegisterBlocked => "register-blocked",
            Conv1dVariant::RegisterBlockedShared => "register-blocked-shared",
            Conv1dVariant::RegisterBlockedVector => "register-blocked-vector",
            Conv1dVariant::RegisterBlockedGlobalTaps => "register-blocked-global-taps",
            Conv1dVariant::Auto => "auto",
        }
    }

    /// The kernel that runs `taps` taps of an `elem_size`-byte type over `rows` rows of `n`
    /// samples, or why none can.
    fn step(self, taps: usize, elem_size: usize, rows: usize, n: usize) -> Result<Conv1dStep> {
        let outputs = rows.saturating_mul(n);
        let max = max_constant_taps(elem_size);
        let step = match self {
            Conv1dVariant::GlobalTaps => Conv1dStep::GlobalTaps,
            Conv1dVariant::ConstantTaps => Conv1dStep::ConstantTaps,
            Conv1dVariant::SharedTile => Conv1dStep::SharedTile,
            Conv1dVariant::RegisterBlocked => Conv1dStep::RegisterBlocked,
            Conv1dVariant::RegisterBlockedShared => Conv1dStep::RegisterBlockedShared,
            Conv1dVariant::RegisterBlockedVector => Conv1dStep::RegisterBlockedVector,
            Conv1dVariant::RegisterBlockedGlobalTaps => Conv1dStep::RegisterBlockedGlobalTaps,
            Conv1dVariant::Auto if taps > max => Conv1dStep::RegisterBlockedGlobalTaps,
            Conv1dVariant::Auto if taps < AUTO_LONG_MIN_TAPS => {
                if outputs < AUTO_SHORT_BLOCKED_MIN_OUTPUTS {
                    Conv1dStep::SharedTile
                } else {
                    Conv1dStep::RegisterBlocked
                }
            }
            Conv1dVariant::Auto if outputs < AUTO_BLOCKED_MIN_OUTPUTS => Conv1dStep::SharedTile,
            Conv1dVariant::Auto if n >= AUTO_VECTOR_MIN_ROW && taps >= auto_vector_min_taps(elem_size) => {
                Conv1dStep::RegisterBlockedVector
            }
            Conv1dVariant::Auto => Conv1dStep::RegisterBlockedShared,
        };
        let limit = if step.uses_constant_taps() {
            max
        } else {
            u32::MAX as usize
        };
        if taps > limit {
            return Err(Error::TooManyTaps { taps, max: limit });
        }
        Ok(step)
    }
}

/// An element type of the 1D filters (f32, f64).
pub trait Conv1dElement: Real + DeviceRepr {
    #[doc(hidden)]
    const TYPE: Conv1dType;
}

impl Conv1dElement for f32 {
    const TYPE: Conv1dType = Conv1dType::f32;
}

impl Conv1dElement for f64 {
    const TYPE: Conv1dType = Conv1dType::f64;
}

/// A 1D filter in the correlation form every kernel runs: taps and the index of the tap that
/// multiplies the sample under the output (the anchor).
#[derive(Clone, Debug, PartialEq)]
pub struct Filter1d<T> {
    taps: Vec<T>,
    anchor: usize,
}

impl<T: Real> Filter1d<T> {
    /// Taps applied as given, anchored at `taps.len() / 2` (scipy `correlate1d`, PyTorch
    /// `conv1d`).
    pub fn correlation(taps: &[T]) -> Result<Self> {
        Self::with_anchor(taps, taps.len() / 2)
    }

    /// The flipped filter of signal processing, `y[i] = Σ_m t[m] · x̃[i − m + L/2]` (scipy
    /// `convolve1d`).
    pub fn convolution(taps: &[T]) -> Result<Self> {
        let reversed: Vec<T> = taps.iter().rev().copied().collect();
        let anchor = taps.len().saturating_sub(1) - taps.len() / 2;
        Self::with_anchor(&reversed, anchor)
    }

    /// Moving average of `width` samples: `width` taps of `1/width` (rounded to `T`), anchored at
    /// `width / 2` (scipy `uniform_filter1d`).
    pub fn mean(width: usize) -> Result<Self> {
        if width == 0 {
            return Err(Error::InvalidArgument {
                name: "width",
                reason: "a mean filter needs a width of at least 1".into(),
            });
        }
        Self::with_anchor(&vec![T::from_f64(1.0 / width as f64); width], width / 2)
    }

    /// Taps with an explicit anchor (`anchor < taps.len()`).
    pub fn with_anchor(taps: &[T], anchor: usize) -> Result<Self> {
        if taps.is_empty() {
            return Err(Error::InvalidArgument {
                name: "taps",
                reason: "a filter needs at least one tap".into(),
            });
        }
        if anchor >= taps.len() {
            return Err(Error::InvalidArgument {
                name: "anchor",
                reason: format!("anchor {anchor} is not below the {} taps", taps.len()),
            });
        }
        Ok(Filter1d {
            taps: taps.to_vec(),
            anchor,
        })
    }

    /// The taps, in correlation order.
    pub fn taps(&self) -> &[T] {
        &self.taps
    }

    /// Index of the tap that multiplies `x[i]` for output `i`.
    pub fn anchor(&self) -> usize {
        self.anchor
    }
}

/// A prepared 1D filter launch for `rows` signals of `n` samples: kernel, grid, launch arguments
/// and the taps on the device. Reusable across inputs of that shape (the examples and the bench
/// time [`Conv1dPlan::enqueue`] alone).
pub struct Conv1dPlan<T: Conv1dElement> {
    step: Conv1dStep,
    kernel: Arc<Kernel>,
    args: Conv1dArgs<T>,
    cfg: LaunchConfig,
    taps: CudaSlice<T>,
    /// The taps' identity in the constant bank.
    content: BankContent,
}

impl<T: Conv1dElement> Conv1dPlan<T> {
    /// Plans `filter` over `rows ≥ 1` signals of `n ≥ 1` samples with `variant`.
    pub fn new(
        gpu: &Gpu,
        rows: usize,
        n: usize,
        filter: &Filter1d<T>,
        border: Border,
        variant: Conv1dVariant,
    ) -> Result<Self> {
        if rows == 0 || n == 0 {
            return Err(Error::InvalidArgument {
                name: "shape",
                reason: format!("a plan needs at least one sample, got {rows} rows of {n}"),
            });
        }
        let size = size_of::<T>();
        let taps = filter.taps.len();
        let step = variant.step(taps, size, rows, n)?;
        let shared = step.shared_bytes(taps as u32, size);
        let max_shared = gpu.props().shared_mem_per_block_optin as usize;
        if shared > max_shared {
            return Err(Error::TooManyTaps {
                taps,
                max: max_shared / size + 1 - CONV1D_BLOCK as usize,
            });
        }
        let total = rows as u64 * n as u64;
        let blocks = match step {
            Conv1dStep::SharedTile => rows as u64 * (n as u64).div_ceil(CONV1D_BLOCK as u64),
            _ => total
                .div_ceil(step.outputs_per_thread(size))
                .div_ceil(CONV1D_BLOCK as u64),
        };
        if blocks > i32::MAX as u64 {
            return Err(Error::TooManyElements {
                op: "conv1d",
                len: total as usize,
                max: (i32::MAX as usize) * CONV1D_BLOCK as usize,
            });
        }
        let (mode, cval) = border.device();
        let args = Conv1dArgs {
            n: n as u64,
            rows: rows as u64,
            taps: taps as u32,
            anchor: filter.anchor as u32,
            border: mode as u32,
            _pad: 0,
            cval: T::from_f64(cval),
        };
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (CONV1D_BLOCK, 1, 1),
            shared_mem_bytes: shared as u32,
        };
        let kernel = gpu
            .kernel(gpu.family::<Conv1dKernels>()?.ids[T::TYPE as usize][step.index()])?
            .clone();
        Ok(Conv1dPlan {
            step,
            kernel,
            args,
            cfg,
            taps: gpu.stream().clone_htod(&filter.taps)?,
            content: BankContent::fresh(),
        })
    }

    /// Blocks in the grid.
    pub fn grid(&self) -> u32 {
        self.cfg.grid_dim.0
    }

    /// The rung this plan runs (`Auto` resolved).
    pub fn variant(&self) -> Conv1dVariant {
        match self.step {
            Conv1dStep::GlobalTaps => Conv1dVariant::GlobalTaps,
            Conv1dStep::ConstantTaps => Conv1dVariant::ConstantTaps,
            Conv1dStep::SharedTile => Conv1dVariant::SharedTile,
            Conv1dStep::RegisterBlocked => Conv1dVariant::RegisterBlocked,
            Conv1dStep::RegisterBlockedShared => Conv1dVariant::RegisterBlockedShared,
            Conv1dStep::RegisterBlockedGlobalTaps => Conv1dVariant::RegisterBlockedGlobalTaps,
            Conv1dStep::RegisterBlockedVector => Conv1dVariant::RegisterBlockedVector,
        }
    }

    /// Enqueues the filter from `x` into `y` (their first `rows · n` elements, C order).
    /// Asynchronous. Constant-taps kernels first get this plan's taps into their module's constant
    /// bank if another plan's taps were written there since (see `host/bank.rs`).
    pub fn enqueue(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        let total = (self.args.rows * self.args.n) as usize;
        check_buffers([("x", x.len(), total), ("y", y.len(), total)])?;
        let _order = gpu.order_after([x.stream(), y.stream(), self.taps.stream()])?;
        let stream = gpu.stream();
        if self.step.vectorized() {
            let xp = x.device_ptr(stream).0;
            let yp = y.device_ptr(stream).0;
            if xp % 16 != 0 || yp % 16 != 0 {
                return Err(Error::Unsupported {
                    variant: Conv1dVariant::RegisterBlocked.name(),
                    reason: format!("buffers at {xp:#x} and {yp:#x} are not both 16-byte aligned"),
                });
            }
        }
        let launch = || -> Result<()> {
            let mut launch = self.kernel.launch_on(gpu)?;
            launch.arg(x).arg(y).arg(&self.taps).arg(&self.args);
            // SAFETY: the arguments match `(x: *const T, y: *mut T, taps: *const T, args:
            // Conv1dArgs<T>)` of every `gpuprims_conv1d_*` entry; x and y hold rows · n elements
            // (checked above) and are 16-byte aligned for the register-blocked kernels; `taps`
            // holds `args.taps` elements and, for the constant steps, the bank holds them (below);
            // the grid covers every output and the shared tile's dynamic memory comes from the
            // same `Conv1dStep::shared_bytes` the kernel assumes.
            unsafe { launch.launch(self.cfg) }?;
            Ok(())
        };
        let Some(bank) = self.kernel.bank() else {
            return launch();
        };
        let (src, _sync) = self.taps.device_ptr(stream);
        // SAFETY: `src` is this plan's taps buffer (`num_bytes` bytes, within the bank: checked in
        // `new`), alive and unchanged as long as the plan.
        unsafe { bank.with_content(gpu, self.content, src, self.taps.num_bytes(), launch) }
    }
}

impl Gpu {
    /// Applies `filter` along the last axis of `x` (any layout; leading axes are a batch).
    pub fn filter1d<T: Conv1dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        filter: &Filter1d<T>,
        border: Border,
        variant: Conv1dVariant,
    ) -> Result<X::Output<T>> {
        let dim = x.dims();
        let (rows, n) = rows_and_len(dim.slice())?;
        let mut out = DeviceArray::uninit(self, dim)?;
        if let Some(input) = x.device(self)? {
            let plan = Conv1dPlan::new(self, rows, n, filter, border, variant)?;
            plan.enqueue(self, input.slice(), out.as_mut_slice())?;
        }
        X::finish(self, out)
    }

    /// Correlation of every row of `x` with `taps` anchored at `taps.len() / 2` (the tutorial's
    /// and PyTorch's "convolution"; scipy `correlate1d`), `Auto` variant.
    pub fn conv1d<T: Conv1dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        taps: &[T],
        border: Border,
    ) -> Result<X::Output<T>> {
        self.conv1d_with(x, taps, border, Conv1dVariant::Auto)
    }

    /// [`Gpu::conv1d`] with a chosen rung of the ladder.
    pub fn conv1d_with<T: Conv1dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        taps: &[T],
        border: Border,
        variant: Conv1dVariant,
    ) -> Result<X::Output<T>> {
        self.filter1d(x, &Filter1d::correlation(taps)?, border, variant)
    }

    /// True convolution of every row of `x` with `taps` (scipy `convolve1d`), `Auto` variant.
    pub fn convolve1d<T: Conv1dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        taps: &[T],
        border: Border,
    ) -> Result<X::Output<T>> {
        self.convolve1d_with(x, taps, border, Conv1dVariant::Auto)
    }

    /// [`Gpu::convolve1d`] with a chosen rung of the ladder.
    pub fn convolve1d_with<T: Conv1dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        taps: &[T],
        border: Border,
        variant: Conv1dVariant,
    ) -> Result<X::Output<T>> {
        self.filter1d(x, &Filter1d::convolution(taps)?, border, variant)
    }

    /// Moving average of `width` samples along the last axis (scipy `uniform_filter1d`), `Auto`.
    pub fn mean_filter1d<T: Conv1dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        width: usize,
        border: Border,
    ) -> Result<X::Output<T>> {
        self.mean_filter1d_with(x, width, border, Conv1dVariant::Auto)
    }

    /// [`Gpu::mean_filter1d`] with a chosen rung of the ladder.
    pub fn mean_filter1d_with<T: Conv1dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        width: usize,
        border: Border,
        variant: Conv1dVariant,
    ) -> Result<X::Output<T>> {
        self.filter1d(x, &Filter1d::mean(width)?, border, variant)
    }
}
