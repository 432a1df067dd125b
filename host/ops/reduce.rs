//! Reductions: sum, sum of squares, min, max, mean and variance, over inputs of any dimension,
//! through the eight-step ladder of `kernels-gpu/src/reduce.rs`.
//!
//! Accumulators are chosen so results are exact for integers and deterministic for floats:
//!
//! | input | `sum`           | `sum_of_squares` | `min`/`max` | `mean_variance`          |
//! |-------|-----------------|------------------|-------------|--------------------------|
//! | i32   | i64 (≤ 2^32 el.) | u128            | i32         | exact 128-bit moments    |
//! | u8    | u64             | u64              | u8          | exact 128-bit moments    |
//! | u32   | u64 (≤ 2^32 el.) | u128            | u32         | exact 128-bit moments    |
//! | f32   | f64             | f64              | f32         | f64 shifted moments      |
//! | f64   | f64             | f64              | f64         | f64 shifted moments      |
//!
//! Empty input: `sum` and `sum_of_squares` are 0; `min`, `max`, `mean_variance` return
//! [`Error::EmptyInput`]. NaN: sums propagate it as IEEE arithmetic does; `min`/`max` return NaN
//! if any element is NaN (numpy's `min`/`max`, not `fmin`/`fmax`). The same input gives the same
//! bits on every run and every variant ordering is fixed (no float atomics; step 8 combines exact
//! integer sums with integer atomics, whose order cannot change the result).

use std::sync::atomic::{AtomicU32, Ordering};

use std::sync::Arc;

use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

use crate::abi::reduce::{
    AtomicLimbs, FINISH_WORDS, LIMB_SLOT_WORDS, Moments, REDUCE_BLOCK, ReduceArgs, ReduceStep, Reducer,
    VEC_LOADS_IN_FLIGHT, W128,
};
use crate::abi::reduce::{Max, MeanVar, Min, Sum, SumSq};
use crate::array::Operand;
use crate::error::{Error, Result};
use crate::family::Family;
use crate::gpu::Gpu;
use crate::kernels::{KernelId, Resolver};
use crate::loader::Kernel;
use crate::ops::check_buffers;

macro_rules! reduce_table {
    ($($inst:ident => $r:ty),* $(,)?) => {
        /// One reduction kernel instance (reducer × input type), in contract order.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ReduceInstance {
            $($inst),*
        }

        impl ReduceInstance {
            /// Every instance, in contract order (`inst as usize` indexes this).
            pub const ALL: &'static [ReduceInstance] = &[$(ReduceInstance::$inst),*];

            /// The instance's eight kernel symbols, in ladder order.
            pub const fn names(self) -> [&'static str; 8] {
                match self {
                    $(ReduceInstance::$inst => crate::reduce_kernel_names!($inst)),*
                }
            }
        }

        $(impl HostReducer for $r {
            const INSTANCE: ReduceInstance = ReduceInstance::$inst;
        })*
    };
}

crate::for_each_reduce_instance!(reduce_table);

/// A reducer the host can launch: its contract instance and a device-copyable accumulator.
pub trait HostReducer: Reducer<In: cudarc::driver::DeviceRepr, Acc: cudarc::driver::DeviceRepr> {
    /// The kernel instance (index into the family's kernel table).
    const INSTANCE: ReduceInstance;
}

// SAFETY: plain-old-data `repr(C)` types of integer/float fields with no padding-sensitive
// invariants; their layout is the contract both sides compile.
unsafe impl cudarc::driver::DeviceRepr for ReduceArgs {}
// SAFETY: as above.
unsafe impl cudarc::driver::DeviceRepr for W128 {}
// SAFETY: as above; `Moments` of device-representable fields.
unsafe impl<S: cudarc::driver::DeviceRepr, Q: cudarc::driver::DeviceRepr> cudarc::driver::DeviceRepr for Moments<S, Q> {}

/// The reduction family's state on one `Gpu`: every instance's eight kernels.
pub(crate) struct ReduceKernels {
    ids: Vec<[KernelId; 8]>,
}

impl Family for ReduceKernels {
    fn load(k: &mut Resolver) -> Result<Self> {
        Ok(ReduceKernels {
            ids: k.table(ReduceInstance::ALL, ReduceInstance::names)?,
        })
    }
}

impl ReduceKernels {
    fn id(&self, inst: ReduceInstance, step: ReduceStep) -> KernelId {
        self.ids[inst as usize][step.index()]
    }
}

/// Which rung of the reduction ladder runs. Steps 1–7 are the classic tutorial's (corrected:
/// initialized shared memory, explicit warp synchronization, 128-bit integer accumulators); their
/// per-thread or per-block partials are combined on the host as the tutorial does. Step 8 is one
/// launch that reaches the memory-bandwidth limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ReduceVariant {
    /// 1 — one thread reads everything. Bottleneck: no parallelism.
    SingleThread,
    /// 2 — one block of 256 threads, each sums a contiguous chunk. Removes: the single thread.
    /// Bottleneck: a warp's loads hit 32 distant addresses (uncoalesced).
    OneBlockChunked,
    /// 3 — one block, thread `t` strides by 256. Removes: uncoalesced loads. Bottleneck: one SM.
    OneBlockStrided,
    /// 4 — many blocks, grid-stride loop. Removes: the one-SM limit. Bottleneck: `grid × 256`
    /// partials copied to and summed on the host.
    GridStride,
    /// 5 — per-block partial through shared memory, thread 0 adds 256 values. Removes: 255 of
    /// every 256 partials. Bottleneck: a serial loop of 256 shared reads per block.
    SharedPartial,
    /// 6 — tree in shared memory, interleaved addressing. Removes: the serial loop (8 rounds).
    /// Bottleneck: divergent warps and bank conflicts.
    SharedTreeInterleaved,
    /// 7 — tree with sequential addressing, last warp by shuffles. Removes: divergence, bank
    /// conflicts, 5 barriers. Bottleneck: scalar 4-byte loads, few bytes in flight per thread.
    SharedTreeSequential,
    /// 8 — 16-byte read-only loads (4 in flight per thread, each warp load 512 contiguous bytes
    /// of a block's 16 KiB tile), warp shuffles, and the cross-block finish in the same launch:
    /// exact integer sums add each block's partial into atomic 64-bit limbs (no block waits),
    /// the others take a last-block-done ticket. Removes: load-issue limits and the host round
    /// trip.
    WarpShuffleVec,
    /// Step 8 at every size: the only one-launch variant with no host combine. Its grid follows
    /// the input (one 16 KiB tile per block up to one full wave; inputs of fewer tiles than SMs
    /// one vector per thread), so up to 4 KiB of input is one block that writes the result
    /// directly. On the H100 (sum of squares of i32, GPU time): 3.9 µs at 2^16 elements (1.27×
    /// an empty kernel), 5.8 µs at 2^20, and faster than CUB at 2^28 (docs/PERFORMANCE.md).
    #[default]
    Auto,
}

impl ReduceVariant {
    /// The ladder, in order (without `Auto`).
    pub const ALL: [ReduceVariant; 8] = [
        ReduceVariant::SingleThread,
        ReduceVariant::OneBlockChunked,
        ReduceVariant::OneBlockStrided,
        ReduceVariant::GridStride,
        ReduceVariant::SharedPartial,
        ReduceVariant::SharedTreeInterleaved,
        ReduceVariant::SharedTreeSequential,
        ReduceVariant::WarpShuffleVec,
    ];

    /// Short name (used in tables and errors).
    pub const fn name(self) -> &'static str {
        match self {
            ReduceVariant::SingleThread => "1-single-thread",
            ReduceVariant::OneBlockChunked => "2-one-block-chunked",
            ReduceVariant::OneBlockStrided => "3-one-block-strided",
            ReduceVariant::GridStride => "4-grid-stride",
            ReduceVariant::SharedPartial => "5-shared-partial",
            ReduceVariant::SharedTreeInterleaved => "6-tree-interleaved",
            ReduceVariant::SharedTreeSequential => "7-tree-sequential",
            ReduceVariant::WarpShuffleVec => "8-shuffle-vec16",
            ReduceVariant::Auto => "auto",
        }
    }

    /// The ladder step this variant runs (`Auto` resolves to the fastest measured).
    pub const fn step(self) -> ReduceStep {
        match self {
            ReduceVariant::SingleThread => ReduceStep::SingleThread,
            ReduceVariant::OneBlockChunked => ReduceStep::OneBlockChunked,
            ReduceVariant::OneBlockStrided => ReduceStep::OneBlockStrided,
            ReduceVariant::GridStride => ReduceStep::GridStride,
            ReduceVariant::SharedPartial => ReduceStep::SharedPartial,
            ReduceVariant::SharedTreeInterleaved => ReduceStep::SharedTreeInterleaved,
            ReduceVariant::SharedTreeSequential => ReduceStep::SharedTreeSequential,
            ReduceVariant::WarpShuffleVec | ReduceVariant::Auto => ReduceStep::WarpShuffleVec,
        }
    }
}

/// Launch-size policy of the grid-wide steps (4–8).
///
/// By default the grid is exactly one wave: `SMs × resident blocks per SM`, the latter from the
/// driver's occupancy calculator for the kernel's registers and shared memory (never more blocks
/// than the input needs). Measured on the H100 (2^28 i32, step 8): a fixed 8 blocks per SM, where
/// registers allowed 6, left a second wave of 132 lone blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ReducePolicy {
    /// Resident blocks per SM to aim for; `None`: ask the occupancy calculator.
    pub blocks_per_sm: Option<u32>,
    /// Upper bound on the grid (tests force tiny grids to exercise the grid-stride loops).
    pub max_blocks: Option<u32>,
}

/// One prepared reduction launch: kernel, grid, the partials buffer and step 8's finish buffer
/// (ticket or atomic limbs), reusable across inputs of the same length (the examples and the
/// benchmark time [`ReducePlan::enqueue`] alone). [`ReducePlan::result`] returns the last
/// enqueued launch's result. The buffers are the plan's, so reductions on several streams never
/// share a ticket; launches of one plan from two streams are ordered (see [`Gpu`]).
pub struct ReducePlan<R: HostReducer> {
    step: ReduceStep,
    kernel: Arc<Kernel>,
    cfg: LaunchConfig,
    n: usize,
    partials: CudaSlice<R::Acc>,
    /// Step 8's finish buffer (`FINISH_WORDS` u64, zeroed at allocation): the last-block ticket,
    /// zero between launches (each launch's last block resets it), or for [`AtomicLimbs`]
    /// accumulators two limb slots — the next launch's slot is zero, the last launch's holds its
    /// result.
    finish: CudaSlice<u64>,
    /// The limb slot the next step-8 launch adds into (it zeroes the other one).
    parity: AtomicU32,
}

impl<R: HostReducer> ReducePlan<R> {
    /// Plans a reduction of `n ≥ 1` elements with `variant` (the default [`ReducePolicy`]).
    pub fn new(gpu: &Gpu, n: usize, variant: ReduceVariant) -> Result<Self> {
        Self::with_policy(gpu, n, variant, ReducePolicy::default())
    }

    /// Plans a reduction of `n ≥ 1` elements with `variant` under `policy`.
    pub fn with_policy(gpu: &Gpu, n: usize, variant: ReduceVariant, policy: ReducePolicy) -> Result<Self> {
        if n == 0 {
            return Err(Error::InvalidArgument {
                name: "n",
                reason: "a reduction launch needs n ≥ 1".into(),
            });
        }
        if policy.blocks_per_sm == Some(0) || policy.max_blocks == Some(0) {
            return Err(Error::InvalidArgument {
                name: "policy",
                reason: format!("{policy:?} allows no block"),
            });
        }
        let step = variant.step();
        let kernel = gpu
            .kernel(gpu.family::<ReduceKernels>()?.id(R::INSTANCE, step))?
            .clone();
        let shared = step.shared_bytes(size_of::<R::Acc>());
        let grid = match step.fixed_grid() {
            Some(g) => g,
            None => {
                // At least one element per thread; step 8: one tile (VEC_LOADS_IN_FLIGHT 16-byte
                // vectors per thread) per block, so a small input is one trip of few blocks, and
                // up to 4 KiB of input is one block with no ticket. An input of fewer tiles than
                // SMs is spread instead, one vector per thread (the kernel sees a grid larger than
                // its tiles): 2^16 i32 as 64 blocks rather than 16 took 3.74 µs instead of 3.87 in
                // a CUDA C probe on the H100.
                let lanes = 16 / size_of::<R::In>() as u64;
                let per_thread = if step == ReduceStep::WarpShuffleVec {
                    lanes * VEC_LOADS_IN_FLIGHT
                } else {
                    1
                };
                let mut wanted = (n as u64).div_ceil(per_thread * REDUCE_BLOCK as u64);
                if step == ReduceStep::WarpShuffleVec && wanted > 1 && wanted < gpu.props().sm_count as u64 {
                    wanted = (n as u64).div_ceil(lanes * REDUCE_BLOCK as u64);
                }
                let per_sm = match policy.blocks_per_sm {
                    Some(b) => b,
                    None => kernel.blocks_per_sm(gpu, step.block(), shared as usize)?,
                };
                let resident = gpu.props().sm_count as u64 * per_sm.max(1) as u64;
                let cap = policy.max_blocks.map_or(u64::MAX, u64::from);
                wanted.min(resident).min(cap).clamp(1, u32::MAX as u64) as u32
            }
        };
        let cfg = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (step.block(), 1, 1),
            shared_mem_bytes: shared,
        };
        // SAFETY: every accumulator the host reads back is written by the kernel first
        // (partial_count covers exactly what the step writes).
        let partials = unsafe { gpu.stream().alloc::<R::Acc>(step.partial_count(grid)) }?;
        let finish = gpu.stream().alloc_zeros::<u64>(FINISH_WORDS)?;
        Ok(ReducePlan {
            step,
            kernel,
            cfg,
            n,
            partials,
            finish,
            parity: AtomicU32::new(0),
        })
    }

    /// Blocks in the grid.
    pub fn grid(&self) -> u32 {
        self.cfg.grid_dim.0
    }

    /// The rung this plan runs (`Auto` resolved).
    pub fn variant(&self) -> ReduceVariant {
        ReduceVariant::ALL[self.step.index()]
    }

    /// Whether this launch's blocks meet through atomic limbs (step 8, more than one block, an
    /// exact integer accumulator) rather than through `partials`.
    fn uses_limbs(&self) -> bool {
        self.step == ReduceStep::WarpShuffleVec && self.grid() > 1 && <R::Acc as AtomicLimbs>::COUNT > 0
    }

    /// Limb slot `parity` (0 or 1) of the finish buffer.
    fn limb_slot(&self, parity: u32) -> cudarc::driver::CudaView<'_, u64> {
        let start = parity as usize * LIMB_SLOT_WORDS;
        self.finish.slice(start..start + LIMB_SLOT_WORDS)
    }

    /// Fills the partials with a 0xA5 byte pattern, so a partial the kernel failed to write shows;
    /// with atomic limbs, also the slot the next launch must zero (the slot it adds into must
    /// stay zero, and a launch that does not run leaves the result at zero, which shows too).
    pub fn poison(&self, gpu: &Gpu) -> Result<()> {
        let _order = gpu.order_after([self.partials.stream()])?;
        crate::gpu::poison_bytes(gpu, &self.partials, 0xA5)?;
        if self.uses_limbs() {
            let stale = 1 - self.parity.load(Ordering::Relaxed);
            crate::gpu::poison_bytes(gpu, &self.limb_slot(stale), 0xA5)?;
        }
        Ok(())
    }

    /// Enqueues the kernel on `input` (its first `n` elements). Asynchronous.
    pub fn enqueue(&self, gpu: &Gpu, input: &CudaSlice<R::In>) -> Result<()> {
        check_buffers([("input", input.len(), self.n)])?;
        if self.step == ReduceStep::WarpShuffleVec {
            let (ptr, _sync) = input.device_ptr(gpu.stream());
            if ptr % 16 != 0 {
                return Err(Error::Unsupported {
                    variant: ReduceVariant::WarpShuffleVec.name(),
                    reason: format!("input address {ptr:#x} is not 16-byte aligned"),
                });
            }
        }
        // Flip the limb slot for the next launch (unused by the other steps and reducers).
        let parity = self.parity.fetch_xor(1, Ordering::Relaxed);
        let args = ReduceArgs {
            n: self.n as u64,
            parity,
            _pad: 0,
        };
        let _order = gpu.order_after([input.stream(), self.partials.stream()])?;
        let mut launch = self.kernel.launch_on(gpu)?;
        launch.arg(input).arg(&args).arg(&self.partials).arg(&self.finish);
        // SAFETY: the argument list matches `(input: *const In, args: ReduceArgs, partials: *mut
        // Acc, finish: *mut u64)` of every `gpuprims_reduce_*` entry; `input` holds ≥ n ≥ 1
        // elements (checked above) and is 16-byte aligned for step 8; `partials` holds
        // `partial_count(grid)` accumulators; `finish` holds FINISH_WORDS u64 whose ticket is zero
        // between launches and whose slot `parity` is zero (the previous launch zeroed it, or the
        // allocation did); the grid shape and dynamic shared memory come from the same
        // `ReduceStep` the kernel assumes.
        unsafe { launch.launch(self.cfg) }?;
        Ok(())
    }

    /// Waits for the kernel and returns the reduction: step 8's device result, or the host's
    /// in-order combine of the partials of steps 1–7 (as the tutorial finishes on the CPU).
    pub fn result(&self, gpu: &Gpu) -> Result<R::Acc> {
        let _order = gpu.order_after([self.partials.stream()])?;
        if self.uses_limbs() {
            let last = 1 - self.parity.load(Ordering::Relaxed);
            let slot = gpu.stream().clone_dtoh(&self.limb_slot(last))?;
            let mut limbs = [0u64; LIMB_SLOT_WORDS];
            limbs.copy_from_slice(&slot);
            return Ok(R::Acc::from_limbs(limbs));
        }
        if self.step == ReduceStep::WarpShuffleVec {
            // Step 8 leaves its result in the last slot; a one-block grid writes only that slot,
            // so only it is read (the others may never have been written).
            let last = self.partials.len() - 1;
            let slot = gpu.stream().clone_dtoh(&self.partials.slice(last..))?;
            return Ok(slot[0]);
        }
        let partials = gpu.stream().clone_dtoh(&self.partials)?;
        Ok(partials.into_iter().fold(R::identity(), R::combine))
    }
}

impl Gpu {
    /// Reduces `x` with reducer `R`; `None` for empty input.
    fn reduce<R: HostReducer, X: Operand<Elem = R::In>>(&self, x: X, variant: ReduceVariant) -> Result<Option<R::Acc>> {
        let Some(input) = x.device(self)? else {
            return Ok(None);
        };
        let plan = ReducePlan::<R>::new(self, x.len(), variant)?;
        plan.enqueue(self, input.slice())?;
        plan.result(self).map(Some)
    }

    /// Σx with the `Auto` variant. See [`ReduceElement`] for the accumulator per type.
    pub fn sum<T: ReduceElement, X: Operand<Elem = T>>(&self, x: X) -> Result<T::Sum> {
        self.sum_with(x, ReduceVariant::Auto)
    }

    /// Σx with a chosen rung of the ladder.
    pub fn sum_with<T: ReduceElement, X: Operand<Elem = T>>(&self, x: X, variant: ReduceVariant) -> Result<T::Sum> {
        if let Some(max) = T::SUM_EXACT_MAX_LEN
            && x.len() > max
        {
            return Err(Error::TooManyElements {
                op: "sum",
                len: x.len(),
                max,
            });
        }
        let acc = self.reduce::<T::SumR, X>(x, variant)?;
        Ok(T::sum_out(acc.unwrap_or_else(T::SumR::identity)))
    }

    /// Σx² with the `Auto` variant (integers exact: i32/u32 squares are summed in 128 bits).
    pub fn sum_of_squares<T: ReduceElement, X: Operand<Elem = T>>(&self, x: X) -> Result<T::SumSq> {
        self.sum_of_squares_with(x, ReduceVariant::Auto)
    }

    /// Σx² with a chosen rung of the ladder.
    pub fn sum_of_squares_with<T: ReduceElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        variant: ReduceVariant,
    ) -> Result<T::SumSq> {
        let acc = self.reduce::<T::SumSqR, X>(x, variant)?;
        Ok(T::sumsq_out(acc.unwrap_or_else(T::SumSqR::identity)))
    }

    /// Smallest element (NaN if any element is NaN). [`Error::EmptyInput`] on empty input.
    pub fn min<T: ReduceElement, X: Operand<Elem = T>>(&self, x: X) -> Result<T> {
        self.min_with(x, ReduceVariant::Auto)
    }

    /// Smallest element with a chosen rung of the ladder.
    pub fn min_with<T: ReduceElement, X: Operand<Elem = T>>(&self, x: X, variant: ReduceVariant) -> Result<T> {
        self.reduce::<T::MinR, X>(x, variant)?
            .ok_or(Error::EmptyInput { op: "min" })
    }

    /// Largest element (NaN if any element is NaN). [`Error::EmptyInput`] on empty input.
    pub fn max<T: ReduceElement, X: Operand<Elem = T>>(&self, x: X) -> Result<T> {
        self.max_with(x, ReduceVariant::Auto)
    }

    /// Largest element with a chosen rung of the ladder.
    pub fn max_with<T: ReduceElement, X: Operand<Elem = T>>(&self, x: X, variant: ReduceVariant) -> Result<T> {
        self.reduce::<T::MaxR, X>(x, variant)?
            .ok_or(Error::EmptyInput { op: "max" })
    }

    /// Mean and population variance (divide by n) in one pass over the data.
    /// [`Error::EmptyInput`] on empty input.
    pub fn mean_variance<T: ReduceElement, X: Operand<Elem = T>>(&self, x: X) -> Result<MeanVariance> {
        self.mean_variance_with(x, ReduceVariant::Auto)
    }

    /// Mean and population variance with a chosen rung of the ladder.
    ///
    /// Technique: moments shifted by the first element `k` (`Σ(x−k)`, `Σ(x−k)²`), which keeps the
    /// one-pass formula accurate when the mean is large against the spread; integer moments are
    /// exact (128-bit), and for n ≤ 2^31 the variance numerator `n·Σd² − (Σd)²` is formed exactly.
    pub fn mean_variance_with<T: ReduceElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        variant: ReduceVariant,
    ) -> Result<MeanVariance> {
        let n = x.len();
        let Some(input) = x.device(self)? else {
            return Err(Error::EmptyInput { op: "mean_variance" });
        };
        let first = self.stream().clone_dtoh(&input.slice().slice(0..1))?[0];
        let plan = ReducePlan::<T::MeanVarR>::new(self, n, variant)?;
        plan.enqueue(self, input.slice())?;
        let m = plan.result(self)?;
        Ok(T::moments_out(m, first, n))
    }
}

/// Mean and population variance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeanVariance {
    pub mean: f64,
    /// Population variance `Σ(x − mean)² / n`.
    pub variance: f64,
}

/// An input type the reductions accept (i32, u8, u32, f32, f64), with its result types.
pub trait ReduceElement: cudarc::driver::DeviceRepr + Copy + Send + Sync + std::fmt::Debug + 'static {
    #[doc(hidden)]
    type SumR: HostReducer<In = Self>;
    #[doc(hidden)]
    type SumSqR: HostReducer<In = Self>;
    #[doc(hidden)]
    type MinR: HostReducer<In = Self, Acc = Self>;
    #[doc(hidden)]
    type MaxR: HostReducer<In = Self, Acc = Self>;
    #[doc(hidden)]
    type MeanVarR: HostReducer<In = Self>;
    /// Result of `sum`.
    type Sum: Copy + std::fmt::Debug + PartialEq;
    /// Result of `sum_of_squares`.
    type SumSq: Copy + std::fmt::Debug + PartialEq;
    /// Longest input whose `sum` is exact in `Sum` (`None`: unbounded or float).
    const SUM_EXACT_MAX_LEN: Option<usize>;
    #[doc(hidden)]
    fn sum_out(acc: <Self::SumR as Reducer>::Acc) -> Self::Sum;
    #[doc(hidden)]
    fn sumsq_out(acc: <Self::SumSqR as Reducer>::Acc) -> Self::SumSq;
    #[doc(hidden)]
    fn moments_out(acc: <Self::MeanVarR as Reducer>::Acc, first: Self, n: usize) -> MeanVariance;
}

/// Mean and variance from exact integer moments of `d = x − k`.
fn int_moments(m: Moments<W128, W128>, k: i64, n: usize) -> MeanVariance {
    let (s1, s2, nn) = (m.s1.to_i128(), m.s2.to_u128(), n as i128);
    let mean = k as f64 + s1 as f64 / n as f64;
    let variance = if n <= 1 << 31 {
        // n·Σd² − (Σd)² ≥ 0 (Cauchy–Schwarz) and < 2^127 for n ≤ 2^31, |d| < 2^32.
        let num = (nn as u128) * s2 - (s1 * s1) as u128;
        num as f64 / (n as f64 * n as f64)
    } else {
        ((s2 as f64 - (s1 as f64) * (s1 as f64 / n as f64)) / n as f64).max(0.0)
    };
    MeanVariance { mean, variance }
}

/// Mean and variance from f64 moments shifted by `k`.
fn float_moments(m: Moments<f64, f64>, k: f64, n: usize) -> MeanVariance {
    let nf = n as f64;
    let mean = k + m.s1 / nf;
    // s1·(s1/n), not s1²/n: s1² overflows f64 long before the variance does.
    let variance = (m.s2 - m.s1 * (m.s1 / nf)) / nf;
    // Rounding can push a zero variance a few ulps below 0; NaN stays NaN.
    MeanVariance {
        mean,
        variance: if variance < 0.0 { 0.0 } else { variance },
    }
}

macro_rules! element {
    ($($t:ty: sum $sum:ty, sumsq $sq:ty, $sq_out:expr, exact up to $max_len:expr, $moments:ident as $k:ty;)*) => {$(
        impl ReduceElement for $t {
            type SumR = Sum<$t>;
            type SumSqR = SumSq<$t>;
            type MinR = Min<$t>;
            type MaxR = Max<$t>;
            type MeanVarR = MeanVar<$t>;
            type Sum = $sum;
            type SumSq = $sq;
            const SUM_EXACT_MAX_LEN: Option<usize> = $max_len;
            fn sum_out(acc: $sum) -> $sum {
                acc
            }
            fn sumsq_out(acc: <SumSq<$t> as Reducer>::Acc) -> $sq {
                $sq_out(acc)
            }
            fn moments_out(acc: <MeanVar<$t> as Reducer>::Acc, first: $t, n: usize) -> MeanVariance {
                $moments(acc, first as $k, n)
            }
        }
    )*};
}

/// i64/u64 sums of 32-bit values are exact up to 2^32 elements.
const FOUR_G: Option<usize> = Some(1 << 32);
element! {
    i32: sum i64, sumsq u128, W128::to_u128, exact up to FOUR_G, int_moments as i64;
    u32: sum u64, sumsq u128, W128::to_u128, exact up to FOUR_G, int_moments as i64;
    u8: sum u64, sumsq u64, |a: u64| a, exact up to None, int_moments as i64;
    f32: sum f64, sumsq f64, |a: f64| a, exact up to None, float_moments as f64;
    f64: sum f64, sumsq f64, |a: f64| a, exact up to None, float_moments as f64;
}
