//! Along-axis window sums contract: launch arguments, what each instance reads, accumulates and
//! writes, and the kernel symbol names.
//!
//! An axis pass sees a C-order array as `(outer, n, inner)`: `n` samples along the filtered axis,
//! `inner` the product of the axes after it (the distance between neighbours along the axis),
//! `outer` the product of those before. For every position,
//!
//! ```text
//! acc[o, i, c] = Σ_{k < size} x̃[o, i − before + k, c]          (x̃: the line extended by the border)
//! ```
//!
//! summed the way scipy's `uniform_filter1d` sums (`NI_UniformFilter1D`): the first window of a
//! run added in order, then each next one as `acc + (entering − leaving)`. A *run* is the stretch
//! of a line one thread walks: the whole line for the scipy mean (so the f64 running sum rounds
//! exactly as scipy's does), strips of it for exact integer sums (wrapping arithmetic makes every
//! split give the same integers). Along the last axis (`inner = 1`) a thread's line is
//! contiguous, so a warp's 32 lines would cost 32 memory transactions per step: that kernel
//! (`rows`) stages `ROWS_CHUNK` positions of `ROWS_LINES` lines per step in a shared ring by
//! coalesced warp loads, walks each line there and stores its outputs from the same ring.
//! A [`Mean`](AxisOp::Mean) writes `acc / size` (an f64 division) converted to the
//! element type as a C cast does (truncated toward zero); a [`Sum`](AxisOp::Sum) or
//! [`SumSq`](AxisOp::SumSq) writes `acc` itself.

use super::FastDiv;
pub use super::border::{BorderMode, border_index_i32};

/// Threads per block of the axis kernels.
pub const AXIS_BLOCK: u32 = 256;

/// Largest axis length and window the axis kernels take (the border mapping is 32-bit:
/// `border_index_i32` needs `|i|` and `2n` below 2^31).
pub const AXIS_MAX_SIDE: u64 = 1 << 30;

/// Lines one block of the last-axis kernel walks (a thread each).
pub const ROWS_LINES: u32 = 64;
/// Positions of every line the last-axis kernel stages per step (a warp load of 32 elements of
/// one line per lane group), and the outputs each thread writes per step.
pub const ROWS_CHUNK: u32 = 32;
/// Positions of a line the last-axis kernel keeps in its shared ring (a power of two).
pub const ROWS_RING: u32 = 64;
/// Largest window the last-axis kernel takes: the ring holds a step's positions and the window
/// behind them (`ROWS_CHUNK + size ≤ ROWS_RING`); wider ones walk the line from global memory.
pub const ROWS_MAX_WINDOW: u32 = ROWS_RING - ROWS_CHUNK;

/// Bytes between two lines of the last-axis kernel's ring, whose slots are the pass's output
/// element (`axis_out_type!`: the input for a mean, the accumulator for a sum): `ROWS_RING`
/// slots and a pad that makes the pitch an odd number of 4-byte words (one slot for 8-byte
/// elements), so 32 threads on 32 lines reading one slot each hit distinct banks.
pub const fn rows_pitch_bytes(slot_bytes: usize) -> usize {
    if slot_bytes >= 8 {
        (ROWS_RING as usize + 1) * slot_bytes
    } else {
        ROWS_RING as usize * slot_bytes + 4
    }
}

/// Dynamic shared memory of one last-axis block: `ROWS_LINES` ring lines of
/// [`rows_pitch_bytes`]. The ring holds samples in the output's type (the input itself for a
/// mean, lifted to the accumulator at use) and outputs go into slots whose samples have left
/// every window, so there is no output tile.
pub const fn rows_shared_bytes(slot_bytes: usize) -> usize {
    ROWS_LINES as usize * rows_pitch_bytes(slot_bytes)
}

/// What an axis pass computes from its window sums.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AxisOp {
    /// scipy's `uniform_filter1d`: the f64 running sum divided by `size`, in the element type.
    Mean = 0,
    /// The window's sum in the accumulator type (exact for integers while it fits).
    Sum = 1,
    /// The window's sum of squares in the accumulator type.
    SumSq = 2,
}

/// Launch arguments of every axis kernel, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AxisArgs {
    /// `inner`: splits a thread index into (rest, column).
    pub inner: FastDiv,
    /// `outer`: splits the rest into (strip, outer index).
    pub outer: FastDiv,
    /// Samples along the axis (1 ≤ n ≤ [`AXIS_MAX_SIDE`]).
    pub n: u32,
    /// Window length (1 ≤ size ≤ [`AXIS_MAX_SIDE`]).
    pub size: u32,
    /// Samples of a window before its output (`size / 2`, scipy's centring).
    pub before: u32,
    /// Outputs per run (the whole axis for the scipy mean).
    pub strip: u32,
    /// Threads of the launch: `strips · outer · inner` (< 2^32).
    pub threads: u32,
    /// `BorderMode` as `u32`.
    pub mode: u32,
    /// The constant outside the line, in the accumulator's terms (`Constant` mode).
    pub cval: f64,
}

/// A window-sum accumulator: exact integers (wrapping) or f64.
pub trait AxisSum: Copy {
    const ZERO: Self;
    /// `self + (enter − leave)` (wrapping for integers; scipy's order for f64).
    fn slide(self, enter: Self, leave: Self) -> Self;
    fn plus(self, o: Self) -> Self;
    /// The constant border's value (already in the accumulator's terms, squared by the host).
    fn from_cval(v: f64) -> Self;
}

/// How a sample of `I` (or its square) enters an accumulator.
pub trait AxisAcc<I>: AxisSum {
    fn lift(x: I, square: bool) -> Self;
}

macro_rules! int_sum {
    ($($a:ty),*) => {$(
        impl AxisSum for $a {
            const ZERO: $a = 0;
            #[inline(always)]
            fn slide(self, enter: $a, leave: $a) -> $a {
                self.wrapping_add(enter.wrapping_sub(leave))
            }
            #[inline(always)]
            fn plus(self, o: $a) -> $a {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn from_cval(v: f64) -> $a {
                v as $a
            }
        }
    )*};
}
int_sum!(u32, u64);

impl AxisSum for f64 {
    const ZERO: f64 = 0.0;
    #[inline(always)]
    fn slide(self, enter: f64, leave: f64) -> f64 {
        self + (enter - leave)
    }
    #[inline(always)]
    fn plus(self, o: f64) -> f64 {
        self + o
    }
    #[inline(always)]
    fn from_cval(v: f64) -> f64 {
        v
    }
}

macro_rules! int_acc {
    ($($i:ty => $a:ty),*) => {$(
        impl AxisAcc<$i> for $a {
            #[inline(always)]
            fn lift(x: $i, square: bool) -> $a {
                let v = x as $a;
                if square { v.wrapping_mul(v) } else { v }
            }
        }
    )*};
}
int_acc!(u8 => u32, u32 => u32, u8 => u64, u16 => u64, u64 => u64);

macro_rules! float_acc {
    ($($i:ty),*) => {$(
        impl AxisAcc<$i> for f64 {
            #[inline(always)]
            fn lift(x: $i, square: bool) -> f64 {
                let v = x as f64;
                if square { v * v } else { v }
            }
        }
    )*};
}
float_acc!(u8, u16, f32, f64);

/// Symbol of an axis kernel: `op` of input `$i` accumulated in `$a`, walking lines along a
/// strided axis a column per thread (`$kind` = `lines`) or four neighbouring columns per thread
/// (`four`: `inner` a multiple of 4, buffers aligned for vector accesses), or staging rows of the
/// last axis (`rows`).
#[macro_export]
macro_rules! axis_kernel_name {
    ($kind:ident, $op:ident, $i:ty, $a:ty) => {
        concat!(
            $crate::kernel_prefix!(),
            "axis_",
            stringify!($kind),
            "_",
            stringify!($op),
            "_",
            stringify!($i),
            "_",
            stringify!($a)
        )
    };
}

/// The element an axis instance writes: the input type for the mean, the accumulator for the
/// sums.
#[macro_export]
macro_rules! axis_out_type {
    (Mean, $i:ty, $a:ty) => {
        $i
    };
    (Sum, $i:ty, $a:ty) => {
        $a
    };
    (SumSq, $i:ty, $a:ty) => {
        $a
    };
}

/// Calls `$m!` with every axis instance, in table order: `(name, op, input, accumulator/output)`.
/// The means write the input type; their accumulator is f64 for floats and an exact integer for
/// integers (the same sums scipy's f64 running sum holds, in cheaper arithmetic and half the
/// shared memory for u8). The sums write the accumulator.
/// The integer sums are the first pass of an exact box (`u8 → u32`, squares `u8 → u64`, `u16 →
/// u64`) and the later passes over those sums (`u32 → u32`, `u64 → u64`); floats sum in f64.
#[macro_export]
macro_rules! for_each_axis_instance {
    ($m:ident) => {
        $m! {
            mean_u8: Mean, u8, u32;
            mean_u16: Mean, u16, u64;
            mean_f32: Mean, f32, f64;
            mean_f64: Mean, f64, f64;
            sum_u8: Sum, u8, u32;
            sumsq_u8: SumSq, u8, u64;
            sum_u16: Sum, u16, u64;
            sumsq_u16: SumSq, u16, u64;
            sum_u32: Sum, u32, u32;
            sum_u64: Sum, u64, u64;
            sum_f32: Sum, f32, f64;
            sumsq_f32: SumSq, f32, f64;
            sum_f64: Sum, f64, f64;
            sumsq_f64: SumSq, f64, f64;
        }
    };
}

/// Symbol of the moments kernel: mean and population variance from the sums `$s` and squares `$q`
/// of a box, written as `$f`.
#[macro_export]
macro_rules! axis_moments_name {
    ($s:ty, $q:ty, $f:ty) => {
        concat!(
            $crate::kernel_prefix!(),
            "axis_moments_",
            stringify!($s),
            "_",
            stringify!($q),
            "_",
            stringify!($f)
        )
    };
}

/// Calls `$m!` with every moments instance: `(name, sums, squares, output, float sums)`.
#[macro_export]
macro_rules! for_each_axis_moments {
    ($m:ident) => {
        $m! {
            moments_u32_u64_f32: u32, u64, f32, false;
            moments_u32_u64_f64: u32, u64, f64, false;
            moments_u64_u64_f32: u64, u64, f32, false;
            moments_u64_u64_f64: u64, u64, f64, false;
            moments_f64_f64_f32: f64, f64, f32, true;
            moments_f64_f64_f64: f64, f64, f64, true;
        }
    };
}

/// Launch arguments of the moments kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MomentsArgs {
    /// Elements.
    pub len: u64,
    /// Samples per box.
    pub samples: u64,
    /// `1 / samples` and `1 / samples²`, rounded by the host.
    pub inv_n: f64,
    pub inv_n2: f64,
}
