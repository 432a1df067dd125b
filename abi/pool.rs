//! 2D pooling contract: PyTorch's output-size formula, the window of each output, the max and
//! average rules, launch arguments and the kernel symbol names.
//!
//! For an `H × W` plane, kernel `(kh, kw)`, stride `(sh, sw)`, padding `(ph, pw)` and dilation
//! `(dh, dw)`, output `(oy, ox)` of max pooling reads the input rows `oy·sh − ph + i·dh` and
//! columns `ox·sw − pw + j·dw` (`i < kh`, `j < kw`) that fall inside the plane; the padding is
//! never read (it acts as −∞). Average pooling (no dilation) sums the window's in-plane samples and
//! divides by the divisor override, by the window's size clipped to the padded plane
//! (`count_include_pad`), or by the in-plane count. Everything here is PyTorch's
//! (`aten/src/ATen/native/Pool.h` and the CUDA kernels), so results match `torch.nn.functional`
//! index for index, NaN and ties included.

/// Threads per block of every pooling kernel.
pub const POOL_BLOCK: u32 = 256;

/// Bytes each thread of the vectorized kernel loads per window row: one 16-byte vector.
pub const POOL_VECTOR_BYTES: usize = 16;

/// PyTorch's `pooling_output_shape`: `⌊(n + 2p − d(k − 1) − 1 + (ceil ? s − 1 : 0)) / s⌋ + 1`,
/// less one in ceil mode when the last window would start inside the right padding. Returns the
/// signed value (callers reject `< 1`).
pub const fn output_size(n: i64, k: i64, s: i64, p: i64, d: i64, ceil_mode: bool) -> i64 {
    let span = n + 2 * p - d * (k - 1) - 1 + if ceil_mode { s - 1 } else { 0 };
    let mut out = span.div_euclid(s) + 1;
    if ceil_mode && (out - 1) * s >= n + p {
        out -= 1;
    }
    out
}

pub use super::FastDiv;

/// Launch arguments of every pooling kernel, passed by value. Planes `[plane_begin, plane_end)`
/// of `h × w` samples each (C order) become planes of `oh × ow` outputs. Thread `t` of a launch
/// (fewer than 2^32 per launch: the host splits larger ones by planes) splits as
/// `t = (plane · oh + oy) · cols + col` through `cols` (`ow`, or vectors per row for the
/// vectorized kernel) and `rows` (`oh`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolArgs {
    /// First plane this launch computes (textures over huge inputs launch in chunks of planes).
    pub plane_begin: u64,
    /// One past the last plane this launch computes.
    pub plane_end: u64,
    /// Element index (of the whole input) that the texture's first element holds.
    pub texture_base: u64,
    pub h: u32,
    pub w: u32,
    pub oh: u32,
    pub ow: u32,
    pub kh: u32,
    pub kw: u32,
    pub sh: u32,
    pub sw: u32,
    pub ph: u32,
    pub pw: u32,
    pub dh: u32,
    pub dw: u32,
    /// Average pooling: whether padding positions count in the divisor (1) or not (0).
    pub count_include_pad: u32,
    /// Average pooling: the divisor override, 0 for none.
    pub divisor: i32,
    /// Threads per output row, as a divider.
    pub cols: FastDiv,
    /// Output rows per plane (`oh`), as a divider; for the shared tile, its tiles down a plane.
    pub rows: FastDiv,
    /// Shared tile: output rows per tile.
    pub tile_rows: u32,
    /// Shared tile: output columns per tile.
    pub tile_cols: u32,
    /// Shared tile: elements per staged input row (a whole number of 16-byte vectors).
    pub stage_pitch: u32,
    /// Shared tile: 1 when the input rows load as 16-byte vectors (aligned input, rows of whole
    /// vectors), else 0.
    pub vectors: u32,
    /// Explicit padding so both sides agree on the layout.
    pub _pad: u32,
}

/// The rows (or columns) `[start, end)` step `d` that window `o` of max pooling reads along one
/// axis of length `n`: PyTorch's CUDA kernel clips the end to the plane and steps the start past
/// the padding by whole dilations. Empty (`start ≥ end`) never happens for valid parameters.
#[inline(always)]
pub const fn max_range(o: u32, s: u32, p: u32, k: u32, d: u32, n: u32) -> (i64, i64) {
    let mut start = o as i64 * s as i64 - p as i64;
    let end = start + (k as i64 - 1) * d as i64 + 1;
    let end = if end < n as i64 { end } else { n as i64 };
    if start < 0 {
        // The first non-negative start + m·d.
        let d = d as i64;
        start += (-start + d - 1) / d * d;
    }
    (start, end)
}

/// The in-plane range `[start, end)` of window `o` of average pooling along one axis of length
/// `n`, and the window's length clipped to the padded axis (`count_include_pad`'s factor).
#[inline(always)]
pub const fn avg_range(o: u32, s: u32, p: u32, k: u32, n: u32) -> (i64, i64, i64) {
    let start = o as i64 * s as i64 - p as i64;
    let padded_end = start + k as i64;
    let limit = n as i64 + p as i64;
    let padded_end = if padded_end < limit { padded_end } else { limit };
    let padded_len = padded_end - start;
    let start = if start > 0 { start } else { 0 };
    let end = if padded_end < n as i64 { padded_end } else { n as i64 };
    (start, end, padded_len)
}

/// The average-pooling divisor of a window with in-plane extent `rows × cols` and padded extent
/// `padded`: the override if any, else the padded or in-plane count.
#[inline(always)]
pub const fn avg_divisor(a: &PoolArgs, rows: i64, cols: i64, padded: i64) -> i64 {
    if a.divisor != 0 {
        a.divisor as i64
    } else if a.count_include_pad != 0 {
        padded
    } else {
        rows * cols
    }
}

/// A value max pooling can compare: `LOWEST` starts the running maximum (−∞ for floats, `MIN` for
/// integers, as PyTorch's `lower_bound`).
pub trait PoolValue: Copy + PartialOrd {
    const LOWEST: Self;
}

macro_rules! pool_value {
    ($($t:ty: $lowest:expr),*) => {$(
        impl PoolValue for $t {
            const LOWEST: $t = $lowest;
        }
    )*};
}
pool_value!(u8: 0, u16: 0, i32: i32::MIN, f32: f32::NEG_INFINITY, f64: f64::NEG_INFINITY);

/// The running maximum of a window and the flat in-plane index (`row · w + col`) where it was
/// found: PyTorch's rule `v > max || isnan(v)` — the first of equal maxima wins, a NaN wins over
/// everything and a later NaN over an earlier one, so the result is NaN with the last NaN's index.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaxAcc<T> {
    pub value: T,
    pub index: u32,
}

impl<T: PoolValue> MaxAcc<T> {
    /// The accumulator before the window's first sample at flat index `first`.
    #[inline(always)]
    pub fn start(first: u32) -> Self {
        MaxAcc {
            value: T::LOWEST,
            index: first,
        }
    }

    /// Takes sample `v` at flat index `index`.
    #[inline(always)]
    #[allow(clippy::eq_op)]
    pub fn take(&mut self, v: T, index: u32) {
        // `v != v` is the NaN test for every PartialOrd type (false for integers).
        if v > self.value || v != v {
            self.value = v;
            self.index = index;
        }
    }
}

/// A value average pooling can sum and divide (f32, f64): sums in the element type, in row-major
/// order, divided once — PyTorch's CUDA arithmetic, so f32 results match it bit for bit.
pub trait AvgValue: PoolValue {
    const ZERO: Self;
    fn add(self, o: Self) -> Self;
    /// `self / d`, `d` converted to the element type first.
    fn div_count(self, d: i64) -> Self;
}

macro_rules! avg_value {
    ($($t:ty),*) => {$(
        impl AvgValue for $t {
            const ZERO: $t = 0.0;
            #[inline(always)]
            fn add(self, o: $t) -> $t { self + o }
            #[inline(always)]
            fn div_count(self, d: i64) -> $t {
                self / d as $t
            }
        }
    )*};
}
avg_value!(f32, f64);

/// The pooling reduction a kernel runs.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PoolOp {
    /// Maximum (and its flat index when the launch asks for indices).
    Max = 0,
    /// Average.
    Avg = 1,
}

/// One rung of the pooling ladder (the kernels; the host's `PoolVariant` adds `Auto`).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PoolKernel {
    /// One output per thread, plain global loads.
    Global = 0,
    /// One output per thread, the whole input read from the module's constant bank.
    ConstantInput = 1,
    /// One output per thread, the input fetched through a texture object (`tex.1d`).
    Texture = 2,
    /// One output per thread, loads through the read-only data path (`ld.global.nc`).
    ReadOnly = 3,
    /// Several outputs per thread from one 16-byte read-only load per window row.
    Vectorized = 4,
    /// A block per output tile, its input staged in shared memory by 16-byte loads.
    SharedTile = 5,
}

impl PoolKernel {
    /// Every kernel, in table order.
    pub const ALL: [PoolKernel; 6] = [
        PoolKernel::Global,
        PoolKernel::ConstantInput,
        PoolKernel::Texture,
        PoolKernel::ReadOnly,
        PoolKernel::Vectorized,
        PoolKernel::SharedTile,
    ];

    /// Index into [`PoolKernel::ALL`] and the kernel name tables.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Index in the name tables of this rung's kernel that also writes the argmax, when it has
    /// its own (the vectorized and shared-tile rungs: the value-only kernel is then not sized
    /// for the argmax's registers); the one-output rungs write it when given the buffer.
    pub const fn argmax_symbol(self) -> Option<usize> {
        match self {
            PoolKernel::Vectorized => Some(POOL_RUNGS),
            PoolKernel::SharedTile => Some(POOL_RUNGS + 1),
            _ => None,
        }
    }
}

/// Index in the name tables of the vectorized rung's kernel for 3-wide overlapping windows
/// ([`vector3_fits`]), then of its argmax form.
pub const VECTORIZED3: usize = POOL_RUNGS + 2;
pub const VECTORIZED3_ARGMAX: usize = POOL_RUNGS + 3;

/// Whether the vectorized rung's 3-wide kernel runs a window of width `kw`, stride `sw`, padding
/// `pw` and dilation `dw` over rows of `w` elements of `elem_size` bytes with `ow` outputs: 3 taps
/// without dilation whose stride and padding keep every tap within one element of the thread's
/// 16-byte vector (stride 2, padding 0 or 1), rows of whole vectors, and no output past the last
/// vector's (ceil mode can add one).
pub const fn vector3_fits(kw: u32, sw: u32, pw: u32, dw: u32, w: usize, ow: usize, elem_size: usize) -> bool {
    let lanes = POOL_VECTOR_BYTES / elem_size;
    kw == 3 && dw == 1 && sw == 2 && pw <= 1 && w.is_multiple_of(lanes) && w / lanes * (lanes / sw as usize) >= ow
}

/// Rungs of the pooling ladder.
pub const POOL_RUNGS: usize = PoolKernel::ALL.len();

/// Symbols per pooling instance: the rungs, then the vectorized and shared-tile kernels that also
/// write the argmax ([`PoolKernel::argmax_symbol`]), then the vectorized rung's 3-wide kernel and
/// its argmax form.
pub const POOL_SYMBOLS: usize = POOL_RUNGS + 4;

/// Outputs each thread of the vectorized kernel writes for a kernel width `kw` and `elem_size`-byte
/// elements, when the kernel applies: one 16-byte vector holds whole windows (`kw` divides
/// `16 / elem_size`). The other conditions (stride = kernel and no padding or dilation along the
/// width, rows a whole number of vectors) are the host's to check.
pub const fn vector_outputs(kw: u32, elem_size: usize) -> Option<u32> {
    let lanes = (POOL_VECTOR_BYTES / elem_size) as u32;
    if kw == 0 || !lanes.is_multiple_of(kw) {
        None
    } else {
        Some(lanes / kw)
    }
}

/// Symbol of one pooling kernel: `gpuprims_pool_<instance>_<kernel>`.
#[macro_export]
macro_rules! pool_kernel_name {
    ($inst:ident, $k:literal) => {
        concat!($crate::kernel_prefix!(), "pool_", stringify!($inst), "_", $k)
    };
}

/// The kernel symbols of one instance, in [`PoolKernel::ALL`] order, then the argmax kernels
/// ([`PoolKernel::argmax_symbol`]), then the 3-wide vectorized kernels ([`VECTORIZED3`]).
#[macro_export]
macro_rules! pool_kernel_names {
    ($inst:ident) => {
        [
            $crate::pool_kernel_name!($inst, "global"),
            $crate::pool_kernel_name!($inst, "constant_input"),
            $crate::pool_kernel_name!($inst, "texture"),
            $crate::pool_kernel_name!($inst, "read_only"),
            $crate::pool_kernel_name!($inst, "vectorized"),
            $crate::pool_kernel_name!($inst, "shared_tile"),
            $crate::pool_kernel_name!($inst, "vectorized_argmax"),
            $crate::pool_kernel_name!($inst, "shared_tile_argmax"),
            $crate::pool_kernel_name!($inst, "vectorized3"),
            $crate::pool_kernel_name!($inst, "vectorized3_argmax"),
        ]
    };
}

/// Calls `$m! { instance => element, op, blocks, argmax_blocks, blocks3, rows3; .. }` with every
/// pooling instance, in table order: max pooling of every element type, average pooling of the
/// float types (an integer average would need a rounding rule PyTorch's CUDA backend does not
/// define). `blocks` and `argmax_blocks` are the launch bounds (resident blocks of `POOL_BLOCK`
/// per SM) of the vectorized kernel and of its argmax form: the most ptxas sm_90 reaches without
/// spilling. `blocks3` bounds both 3-wide vectorized kernels (0: none — the f64 average takes 40
/// registers unbounded, 6 blocks): f32 max at 8 (32 registers, every warp slot of an SM); the f32 average at 6
/// (40 registers, no spill; at 42 registers it was allocated 48 and held 5 blocks: W10 on the
/// H200 289.8 → 269.5 µs, one call); the others at 3, what the u8 argmax form (8 outputs per
/// thread) reaches without spilling. `rows3`: window rows the 3-wide kernels load per
/// pass, all in flight before the first is folded — 3 for the f32 average (W10 on the H200:
/// 314.1 → 287.3 µs at 5 blocks per SM); 1 where the extra rows' registers cost more than the
/// round trips they save (f32 max at 8 blocks: 280.2 → 283.3 µs; its argmax form spills at 32
/// registers: 361.5 → 522.0 µs) or were not measured.
#[macro_export]
macro_rules! for_each_pool_instance {
    ($m:ident) => {
        $m! {
            max_u8 => u8, Max, 3, 2, 3, 1;
            max_u16 => u16, Max, 6, 4, 3, 1;
            max_i32 => i32, Max, 6, 6, 3, 1;
            max_f32 => f32, Max, 6, 6, 8, 1;
            max_f64 => f64, Max, 6, 6, 3, 1;
            avg_f32 => f32, Avg, 4, 4, 6, 3;
            avg_f64 => f64, Avg, 4, 4, 0, 1;
        }
    };
}
