//! Reduction contract: the eight ladder steps, their output layout, the reducers (map + combine)
//! and the list of kernel instances (reducer × input type) with their symbol names.
//!
//! A *reducer* says how one input element becomes an accumulator (`map`) and how two
//! accumulators merge (`combine`). Kernels use it on the device; the host uses the very same
//! `combine` to finish the per-thread or per-block partials that steps 1–7 leave behind, exactly as
//! the tutorial sums its partials on the CPU.

/// Threads per block for every reduction step (the tutorial's 256). Steps 2 and 3 launch one
/// block of this size; the shared-memory steps size their dynamic shared memory from it.
pub const REDUCE_BLOCK: u32 = 256;
/// Warps per reduction block.
pub const REDUCE_WARPS: u32 = REDUCE_BLOCK / 32;
/// 16-byte vector loads issued per thread before their first use in the modern step (8):
/// 64 bytes in flight per thread (the kernel's unrolled loop is written for exactly 4). With it,
/// step 8 reads 2^28 i32 at 105% of the copy rate on an H100 (docs/PERFORMANCE.md); other depths
/// were not measured.
pub const VEC_LOADS_IN_FLIGHT: u64 = 4;

/// Launch arguments shared by every reduction kernel, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReduceArgs {
    /// Number of input elements (64-bit: inputs may exceed 2^32 elements).
    pub n: u64,
    /// Step 8 with an [`AtomicLimbs`] accumulator: which of the two limb slots of the finish
    /// buffer this launch adds into (0 or 1; the launch zeroes the other). Ignored otherwise.
    pub parity: u32,
    /// Explicit padding (the struct crosses the boundary by value).
    pub _pad: u32,
}

/// One rung of the reduction ladder. The numbering is the tutorial's.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceStep {
    /// 1: one thread reads everything.
    SingleThread = 1,
    /// 2: one block; thread `t` sums the contiguous chunk `t·⌈n/256⌉ ..`.
    OneBlockChunked = 2,
    /// 3: one block; thread `t` reads `t, t+256, t+512, ..` (coalesced).
    OneBlockStrided = 3,
    /// 4: many blocks, grid-stride loop, one partial per thread.
    GridStride = 4,
    /// 5: per-block partial in shared memory, thread 0 adds the block's 256 values.
    SharedPartial = 5,
    /// 6: tree in shared memory, interleaved addressing (`tid & mask`).
    SharedTreeInterleaved = 6,
    /// 7: tree in shared memory, sequential addressing, last warp unrolled with shuffles.
    SharedTreeSequential = 7,
    /// 8: 16-byte loads, warp shuffles, one launch (exact integer sums: every block adds its
    /// partial into atomic limbs; otherwise the last block to finish combines).
    WarpShuffleVec = 8,
}

impl ReduceStep {
    /// Every step, in ladder order.
    pub const ALL: [ReduceStep; 8] = [
        ReduceStep::SingleThread,
        ReduceStep::OneBlockChunked,
        ReduceStep::OneBlockStrided,
        ReduceStep::GridStride,
        ReduceStep::SharedPartial,
        ReduceStep::SharedTreeInterleaved,
        ReduceStep::SharedTreeSequential,
        ReduceStep::WarpShuffleVec,
    ];

    /// Index into [`ReduceStep::ALL`] and into the kernel name tables.
    pub const fn index(self) -> usize {
        self as usize - 1
    }

    /// Whether the step launches a fixed grid of one block (1, 2, 3) or a sized grid (4..8).
    pub const fn fixed_grid(self) -> Option<u32> {
        match self {
            ReduceStep::SingleThread | ReduceStep::OneBlockChunked | ReduceStep::OneBlockStrided => Some(1),
            _ => None,
        }
    }

    /// Threads per block of this step.
    pub const fn block(self) -> u32 {
        match self {
            ReduceStep::SingleThread => 1,
            _ => REDUCE_BLOCK,
        }
    }

    /// Accumulators the kernel writes to `partials` for a launch of `grid` blocks.
    /// Steps 1–7 leave these for the host to combine; step 8 writes `grid` block partials followed
    /// by the final result at index `grid`.
    pub const fn partial_count(self, grid: u32) -> usize {
        match self {
            ReduceStep::SingleThread => 1,
            ReduceStep::OneBlockChunked | ReduceStep::OneBlockStrided => REDUCE_BLOCK as usize,
            ReduceStep::GridStride => grid as usize * REDUCE_BLOCK as usize,
            ReduceStep::SharedPartial | ReduceStep::SharedTreeInterleaved | ReduceStep::SharedTreeSequential => {
                grid as usize
            }
            ReduceStep::WarpShuffleVec => grid as usize + 1,
        }
    }

    /// Dynamic shared memory (bytes) the step needs for an accumulator of `acc_size` bytes.
    pub const fn shared_bytes(self, acc_size: usize) -> u32 {
        match self {
            ReduceStep::SharedPartial | ReduceStep::SharedTreeInterleaved | ReduceStep::SharedTreeSequential => {
                REDUCE_BLOCK * acc_size as u32
            }
            // one slot per warp, then the 8-byte "last block" flag
            ReduceStep::WarpShuffleVec => last_block_flag_offset(acc_size) as u32 + 8,
            _ => 0,
        }
    }
}

/// 64-bit words per limb slot of step 8's finish buffer (the most any [`AtomicLimbs`] uses).
pub const LIMB_SLOT_WORDS: usize = 6;
/// 64-bit words of step 8's finish buffer, zeroed when allocated: word 0 holds the last-block
/// ticket (its low 32 bits) of the ticket reducers; an [`AtomicLimbs`] reducer uses two slots of
/// [`LIMB_SLOT_WORDS`] limbs instead, alternating between launches (see [`ReduceArgs::parity`]).
pub const FINISH_WORDS: usize = 2 * LIMB_SLOT_WORDS;

/// Byte offset of step 8's "last block" flag in its dynamic shared memory, after the
/// `REDUCE_WARPS` per-warp accumulator slots.
pub const fn last_block_flag_offset(acc_size: usize) -> usize {
    (REDUCE_WARPS as usize * acc_size).next_multiple_of(8)
}

// ---------------------------------------------------------------------------------------------
// Accumulator types. All are `repr(C)` with 8-byte alignment so host and device agree on layout
// (native `u128` is 16-aligned on x86-64 but not necessarily on nvptx64, so it never crosses).
// ---------------------------------------------------------------------------------------------

/// A 128-bit two's-complement integer as two 64-bit words: exact sums of i32/u32 squares
/// (each square is < 2^64, so a 64-bit accumulator overflows after a handful of extreme values).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct W128 {
    pub lo: u64,
    pub hi: u64,
}

impl W128 {
    pub const ZERO: W128 = W128 { lo: 0, hi: 0 };

    #[inline(always)]
    pub const fn from_u64(v: u64) -> W128 {
        W128 { lo: v, hi: 0 }
    }

    #[inline(always)]
    pub const fn from_i64(v: i64) -> W128 {
        W128 {
            lo: v as u64,
            hi: if v < 0 { u64::MAX } else { 0 },
        }
    }

    /// Wrapping 128-bit add (add with carry on the device).
    #[inline(always)]
    pub const fn wrapping_add(self, o: W128) -> W128 {
        let (lo, carry) = self.lo.overflowing_add(o.lo);
        W128 {
            lo,
            hi: self.hi.wrapping_add(o.hi).wrapping_add(carry as u64),
        }
    }

    /// Adds a 64-bit unsigned value.
    #[inline(always)]
    pub const fn add_u64(self, v: u64) -> W128 {
        let (lo, carry) = self.lo.overflowing_add(v);
        W128 {
            lo,
            hi: self.hi.wrapping_add(carry as u64),
        }
    }

    /// Wrapping 128-bit subtraction.
    #[inline(always)]
    pub const fn wrapping_sub(self, o: W128) -> W128 {
        let (lo, borrow) = self.lo.overflowing_sub(o.lo);
        W128 {
            lo,
            hi: self.hi.wrapping_sub(o.hi).wrapping_sub(borrow as u64),
        }
    }

    /// The full 128-bit product of two 64-bit values (`mul.lo` and `mul.hi` on the device).
    #[inline(always)]
    pub const fn mul_wide(a: u64, b: u64) -> W128 {
        let p = a as u128 * b as u128;
        W128 {
            lo: p as u64,
            hi: (p >> 64) as u64,
        }
    }

    /// `self · k` modulo 2^128.
    #[inline(always)]
    pub const fn wrapping_mul_u64(self, k: u64) -> W128 {
        let low = W128::mul_wide(self.lo, k);
        W128 {
            lo: low.lo,
            hi: low.hi.wrapping_add(self.hi.wrapping_mul(k)),
        }
    }

    /// Whether the two's-complement value is negative.
    #[inline(always)]
    pub const fn is_negative(self) -> bool {
        (self.hi as i64) < 0
    }

    /// The unsigned value as f64: exact below 2^53, otherwise within about one ulp (the high and
    /// low words are converted and added, two roundings).
    #[inline(always)]
    pub fn to_f64_unsigned(self) -> f64 {
        if self.hi == 0 {
            self.lo as f64
        } else {
            self.hi as f64 * 18446744073709551616.0 + self.lo as f64
        }
    }

    /// The two's-complement value as f64 (see [`W128::to_f64_unsigned`]).
    #[inline(always)]
    pub fn to_f64_signed(self) -> f64 {
        if self.is_negative() {
            -W128::ZERO.wrapping_sub(self).to_f64_unsigned()
        } else {
            self.to_f64_unsigned()
        }
    }

    /// The value as `i128` (two's complement).
    pub const fn to_i128(self) -> i128 {
        ((self.hi as u128) << 64 | self.lo as u128) as i128
    }

    /// The value as `u128`.
    pub const fn to_u128(self) -> u128 {
        (self.hi as u128) << 64 | self.lo as u128
    }
}

/// Shifted first and second moments for a one-pass mean and variance:
/// `s1 = Σ(x − k)`, `s2 = Σ(x − k)²` with `k` the first element. Shifting by a sample of the data
/// removes most of the cancellation of the textbook `Σx² − (Σx)²/n` formula; integer inputs
/// accumulate exactly in 128 bits.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moments<S, Q> {
    pub s1: S,
    pub s2: Q,
}

/// Accumulators that step 8 combines across blocks with 64-bit atomic adds instead of a
/// last-block ticket: exact integer sums, where adding is commutative and wraps as `combine`
/// does, so the order in which blocks arrive cannot change the result. The accumulator splits
/// into `COUNT ≤ LIMB_SLOT_WORDS` limbs, each small enough that the sum over any grid
/// (< 2^32 blocks) of one limb fits a `u64`; `from_limbs` folds the limb sums back, modulo the
/// accumulator's width, exactly as `combine` would have. Ticket reducers (floats, min/max)
/// leave `COUNT = 0` and never call the conversions.
pub trait AtomicLimbs: Copy {
    /// Limbs per accumulator; 0: not combined by atomics (step 8 takes the ticket).
    const COUNT: usize;
    /// The limbs of one block partial (the first `COUNT` are used).
    fn to_limbs(self) -> [u64; LIMB_SLOT_WORDS];
    /// The accumulator whose limbs summed to `limbs`.
    fn from_limbs(limbs: [u64; LIMB_SLOT_WORDS]) -> Self;
}

/// A 64-bit wrapping sum is its own limb: `red.add.u64` wraps modulo 2^64 as `wrapping_add`.
macro_rules! limbs_wrapping_64 {
    ($($t:ty),*) => {$(
        impl AtomicLimbs for $t {
            const COUNT: usize = 1;
            #[inline(always)]
            fn to_limbs(self) -> [u64; LIMB_SLOT_WORDS] {
                [self as u64, 0, 0, 0, 0, 0]
            }
            #[inline(always)]
            fn from_limbs(l: [u64; LIMB_SLOT_WORDS]) -> $t {
                l[0] as $t
            }
        }
    )*};
}
limbs_wrapping_64!(u64, i64);

/// Not combined by atomics (floats are not associative; min/max take the ticket).
macro_rules! limbs_none {
    ($($t:ty),*) => {$(
        impl AtomicLimbs for $t {
            const COUNT: usize = 0;
            #[inline(always)]
            fn to_limbs(self) -> [u64; LIMB_SLOT_WORDS] {
                [0; LIMB_SLOT_WORDS]
            }
            #[inline(always)]
            fn from_limbs(_: [u64; LIMB_SLOT_WORDS]) -> $t {
                <$t>::default()
            }
        }
    )*};
}
limbs_none!(u8, i32, u32, f32, f64, Moments<f64, f64>);

/// The low word's two 32-bit halves and the high word: each limb sum over < 2^32 blocks stays
/// below 2^64, and `lo0 + lo1·2^32 + hi·2^64` modulo 2^128 is the two's-complement sum.
impl AtomicLimbs for W128 {
    const COUNT: usize = 3;
    #[inline(always)]
    fn to_limbs(self) -> [u64; LIMB_SLOT_WORDS] {
        [self.lo & 0xffff_ffff, self.lo >> 32, self.hi, 0, 0, 0]
    }
    #[inline(always)]
    fn from_limbs(l: [u64; LIMB_SLOT_WORDS]) -> W128 {
        W128::from_u64(l[0])
            .wrapping_add(W128 {
                lo: l[1] << 32,
                hi: l[1] >> 32,
            })
            .wrapping_add(W128 { lo: 0, hi: l[2] })
    }
}

/// Both moments' limbs, side by side.
impl AtomicLimbs for Moments<W128, W128> {
    const COUNT: usize = 6;
    #[inline(always)]
    fn to_limbs(self) -> [u64; LIMB_SLOT_WORDS] {
        let (a, b) = (self.s1.to_limbs(), self.s2.to_limbs());
        [a[0], a[1], a[2], b[0], b[1], b[2]]
    }
    #[inline(always)]
    fn from_limbs(l: [u64; LIMB_SLOT_WORDS]) -> Self {
        Moments {
            s1: W128::from_limbs([l[0], l[1], l[2], 0, 0, 0]),
            s2: W128::from_limbs([l[3], l[4], l[5], 0, 0, 0]),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reducers
// ---------------------------------------------------------------------------------------------

/// How one input element becomes an accumulator and how accumulators merge. `combine` must be
/// associative; results are deterministic because every kernel combines in a fixed order.
pub trait Reducer {
    /// Input element type.
    type In: Copy;
    /// Accumulator type (crosses the host↔device boundary in `partials`).
    type Acc: AtomicLimbs;
    /// Per-launch constant derived from the first element (the shift of [`Moments`]); `()` for
    /// the other reducers.
    type Shift: Copy;
    /// The shift for an input whose first element is `first`.
    fn shift(first: Self::In) -> Self::Shift;
    /// Neutral element of `combine`.
    fn identity() -> Self::Acc;
    /// One element's contribution.
    fn map(x: Self::In, shift: Self::Shift) -> Self::Acc;
    /// Merges two accumulators.
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc;
}

/// Σx.
pub struct Sum<T>(core::marker::PhantomData<T>);
/// Σx².
pub struct SumSq<T>(core::marker::PhantomData<T>);
/// min x (NaN propagates: any NaN input gives NaN, as numpy's `min`).
pub struct Min<T>(core::marker::PhantomData<T>);
/// max x (NaN propagates, as numpy's `max`).
pub struct Max<T>(core::marker::PhantomData<T>);
/// Shifted moments for mean and variance, see [`Moments`].
pub struct MeanVar<T>(core::marker::PhantomData<T>);

macro_rules! impl_sum {
    ($t:ty => $acc:ty, $map:expr, $combine:expr, $zero:expr) => {
        impl Reducer for Sum<$t> {
            type In = $t;
            type Acc = $acc;
            type Shift = ();
            #[inline(always)]
            fn shift(_: $t) {}
            #[inline(always)]
            fn identity() -> $acc {
                $zero
            }
            #[inline(always)]
            fn map(x: $t, _: ()) -> $acc {
                $map(x)
            }
            #[inline(always)]
            fn combine(a: $acc, b: $acc) -> $acc {
                $combine(a, b)
            }
        }
    };
}

impl_sum!(i32 => i64, |x: i32| x as i64, |a: i64, b: i64| a.wrapping_add(b), 0);
impl_sum!(u8 => u64, |x: u8| x as u64, |a: u64, b: u64| a.wrapping_add(b), 0);
impl_sum!(u32 => u64, |x: u32| x as u64, |a: u64, b: u64| a.wrapping_add(b), 0);
impl_sum!(f32 => f64, |x: f32| x as f64, |a: f64, b: f64| a + b, 0.0);
impl_sum!(f64 => f64, |x: f64| x, |a: f64, b: f64| a + b, 0.0);

macro_rules! impl_sumsq {
    ($t:ty => $acc:ty, $map:expr, $combine:expr, $zero:expr) => {
        impl Reducer for SumSq<$t> {
            type In = $t;
            type Acc = $acc;
            type Shift = ();
            #[inline(always)]
            fn shift(_: $t) {}
            #[inline(always)]
            fn identity() -> $acc {
                $zero
            }
            #[inline(always)]
            fn map(x: $t, _: ()) -> $acc {
                $map(x)
            }
            #[inline(always)]
            fn combine(a: $acc, b: $acc) -> $acc {
                $combine(a, b)
            }
        }
    };
}

impl_sumsq!(i32 => W128, |x: i32| W128::from_u64((x as i64 * x as i64) as u64),
    W128::wrapping_add, W128::ZERO);
impl_sumsq!(u32 => W128, |x: u32| W128::from_u64(x as u64 * x as u64),
    W128::wrapping_add, W128::ZERO);
impl_sumsq!(u8 => u64, |x: u8| x as u64 * x as u64, |a: u64, b: u64| a.wrapping_add(b), 0);
impl_sumsq!(f32 => f64, |x: f32| x as f64 * x as f64, |a: f64, b: f64| a + b, 0.0);
impl_sumsq!(f64 => f64, |x: f64| x * x, |a: f64, b: f64| a + b, 0.0);

/// NaN-propagating minimum / maximum with ties keeping the left operand (deterministic bits).
macro_rules! impl_minmax {
    ($t:ty, $lo:expr, $hi:expr) => {
        impl Reducer for Min<$t> {
            type In = $t;
            type Acc = $t;
            type Shift = ();
            #[inline(always)]
            fn shift(_: $t) {}
            #[inline(always)]
            fn identity() -> $t {
                $hi
            }
            #[inline(always)]
            fn map(x: $t, _: ()) -> $t {
                x
            }
            #[inline(always)]
            #[allow(clippy::eq_op)]
            fn combine(a: $t, b: $t) -> $t {
                // `x != x` is true only for NaN; integers never take that branch.
                if a != a || (b == b && a <= b) { a } else { b }
            }
        }
        impl Reducer for Max<$t> {
            type In = $t;
            type Acc = $t;
            type Shift = ();
            #[inline(always)]
            fn shift(_: $t) {}
            #[inline(always)]
            fn identity() -> $t {
                $lo
            }
            #[inline(always)]
            fn map(x: $t, _: ()) -> $t {
                x
            }
            #[inline(always)]
            #[allow(clippy::eq_op)]
            fn combine(a: $t, b: $t) -> $t {
                if a != a || (b == b && a >= b) { a } else { b }
            }
        }
    };
}

impl_minmax!(i32, i32::MIN, i32::MAX);
impl_minmax!(u8, u8::MIN, u8::MAX);
impl_minmax!(u32, u32::MIN, u32::MAX);
impl_minmax!(f32, f32::NEG_INFINITY, f32::INFINITY);
impl_minmax!(f64, f64::NEG_INFINITY, f64::INFINITY);

/// Integer moments: the shifted value `d = x − k` is exact in i64 and `d²` in u64 (|d| < 2^32),
/// both summed in 128 bits.
macro_rules! impl_meanvar_int {
    ($t:ty) => {
        impl Reducer for MeanVar<$t> {
            type In = $t;
            type Acc = Moments<W128, W128>;
            type Shift = i64;
            #[inline(always)]
            fn shift(first: $t) -> i64 {
                first as i64
            }
            #[inline(always)]
            fn identity() -> Self::Acc {
                Moments {
                    s1: W128::ZERO,
                    s2: W128::ZERO,
                }
            }
            #[inline(always)]
            fn map(x: $t, k: i64) -> Self::Acc {
                let d = x as i64 - k;
                Moments {
                    s1: W128::from_i64(d),
                    s2: W128::from_u64(d.unsigned_abs() * d.unsigned_abs()),
                }
            }
            #[inline(always)]
            fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc {
                Moments {
                    s1: a.s1.wrapping_add(b.s1),
                    s2: a.s2.wrapping_add(b.s2),
                }
            }
        }
    };
}

impl_meanvar_int!(i32);
impl_meanvar_int!(u8);
impl_meanvar_int!(u32);

macro_rules! impl_meanvar_float {
    ($t:ty) => {
        impl Reducer for MeanVar<$t> {
            type In = $t;
            type Acc = Moments<f64, f64>;
            type Shift = f64;
            #[inline(always)]
            fn shift(first: $t) -> f64 {
                first as f64
            }
            #[inline(always)]
            fn identity() -> Self::Acc {
                Moments { s1: 0.0, s2: 0.0 }
            }
            #[inline(always)]
            fn map(x: $t, k: f64) -> Self::Acc {
                let d = x as f64 - k;
                Moments { s1: d, s2: d * d }
            }
            #[inline(always)]
            fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc {
                Moments {
                    s1: a.s1 + b.s1,
                    s2: a.s2 + b.s2,
                }
            }
        }
    };
}

impl_meanvar_float!(f32);
impl_meanvar_float!(f64);

// ---------------------------------------------------------------------------------------------
// Kernel instances and symbol names
// ---------------------------------------------------------------------------------------------

/// Symbol of one reduction kernel: `gpuprims_reduce_<instance>_s<step>`.
#[macro_export]
macro_rules! reduce_kernel_name {
    ($inst:ident, $step:literal) => {
        concat!($crate::kernel_prefix!(), "reduce_", stringify!($inst), "_s", $step)
    };
}

/// The eight symbols of one instance, in ladder order (index = `ReduceStep::index()`).
#[macro_export]
macro_rules! reduce_kernel_names {
    ($inst:ident) => {
        [
            $crate::reduce_kernel_name!($inst, "1"),
            $crate::reduce_kernel_name!($inst, "2"),
            $crate::reduce_kernel_name!($inst, "3"),
            $crate::reduce_kernel_name!($inst, "4"),
            $crate::reduce_kernel_name!($inst, "5"),
            $crate::reduce_kernel_name!($inst, "6"),
            $crate::reduce_kernel_name!($inst, "7"),
            $crate::reduce_kernel_name!($inst, "8"),
        ]
    };
}

/// Calls `$m! { instance_name => Reducer type, .. }` once with every reduction instance: the one
/// list both sides expand (the kernels define the entries, the host builds its kernel table,
/// indexed by the instance's position).
#[macro_export]
macro_rules! for_each_reduce_instance {
    ($m:ident) => {
        $m! {
            sum_i32 => $crate::abi::reduce::Sum<i32>,
            sum_u8 => $crate::abi::reduce::Sum<u8>,
            sum_u32 => $crate::abi::reduce::Sum<u32>,
            sum_f32 => $crate::abi::reduce::Sum<f32>,
            sum_f64 => $crate::abi::reduce::Sum<f64>,
            sumsq_i32 => $crate::abi::reduce::SumSq<i32>,
            sumsq_u8 => $crate::abi::reduce::SumSq<u8>,
            sumsq_u32 => $crate::abi::reduce::SumSq<u32>,
            sumsq_f32 => $crate::abi::reduce::SumSq<f32>,
            sumsq_f64 => $crate::abi::reduce::SumSq<f64>,
            min_i32 => $crate::abi::reduce::Min<i32>,
            min_u8 => $crate::abi::reduce::Min<u8>,
            min_u32 => $crate::abi::reduce::Min<u32>,
            min_f32 => $crate::abi::reduce::Min<f32>,
            min_f64 => $crate::abi::reduce::Min<f64>,
            max_i32 => $crate::abi::reduce::Max<i32>,
            max_u8 => $crate::abi::reduce::Max<u8>,
            max_u32 => $crate::abi::reduce::Max<u32>,
            max_f32 => $crate::abi::reduce::Max<f32>,
            max_f64 => $crate::abi::reduce::Max<f64>,
            meanvar_i32 => $crate::abi::reduce::MeanVar<i32>,
            meanvar_u8 => $crate::abi::reduce::MeanVar<u8>,
            meanvar_u32 => $crate::abi::reduce::MeanVar<u32>,
            meanvar_f32 => $crate::abi::reduce::MeanVar<f32>,
            meanvar_f64 => $crate::abi::reduce::MeanVar<f64>,
        }
    };
}
