//! 2D pooling (max with its flat argmax, average) over the last two axes, PyTorch semantics
//! (`abi::pool`). The ladder differs in *where the input is read from*, which is the tutorial's
//! lesson:
//!
//! | kernel | thread mapping | input path | bottleneck |
//! |---|---|---|---|
//! | `global` | one output per thread | plain `ld.global` | none to speak of on sm_70+: L1 caches the window overlap |
//! | `constant_input` | one output per thread | the whole input in the module's constant bank | a warp's lanes read 32 different addresses: the constant cache serves one address per cycle, so each load replays up to 32 times |
//! | `texture` | one output per thread | `tex.1d` over a texture object on the input | the texture unit's fetch rate and latency (the same L1 data, through the texture pipeline) |
//! | `read_only` | one output per thread | `ld.global.nc` | per-thread scalar loads: many load instructions per byte |
//! | `vectorized` | `16 / size / kw` outputs per thread | one 16-byte `ld.global.nc.v4` per window row, outputs packed into one vector store | DRAM bandwidth |
//! | `vectorized` (3-wide overlapping windows: `vectorized3`) | `16 / size / stride` outputs per thread | one 16-byte load per window row and the element each side the windows reach | DRAM bandwidth |
//! | `shared_tile` | a block per output tile, outputs `t, t + 256, …` of it per thread | the tile's input rows staged in shared memory by 16-byte loads, each element read from DRAM once | DRAM bandwidth; shared-memory reads of the overlapping windows |
//!
//! Every kernel takes `(x, tex, y, idx, args)`: `tex` is read only by the texture kernel, `idx`
//! (flat in-plane indices as `i64`, PyTorch's `return_indices`) is written only when non-null and
//! only by max pooling. Window walks, the max/NaN/tie rule and the average divisor come from
//! `abi::pool`, shared with the host.
//!
//! Rooms: `vectors.rs` (`vectorized`, `vectorized3`), `tile.rs` (`shared_tile`), this file (the
//! element trait, the reductions, the one-output-per-thread rungs and the entries).

mod tile;
mod vectors;

use tile::shared_tile;
use vectors::{vectorized, vectorized3};

use crate::abi::pool::{AvgValue, MaxAcc, POOL_BLOCK, PoolArgs, PoolValue, avg_divisor, avg_range, max_range};
use crate::device::{
    Vec16, block_idx, dynamic_shared, load_nc_v4, store_shared_v4, store_v2, store_v4, sync_threads, tex1d_f32,
    tex1d_u32x2, thread_idx,
};

/// An element type of the pooling kernels: how each memory path loads it.
pub trait PoolIn: PoolValue + Vec16 {
    /// The value's bits, zero-extended (to pack outputs into vector stores).
    fn bits(self) -> u64;
    /// Loads `*p` through the read-only data path.
    unsafe fn read_only(p: *const Self) -> Self;
    /// The element at byte `offset` of the constant bank.
    fn constant(offset: u64) -> Self;
    /// Element `i` of a texture object over elements of this type.
    unsafe fn texture(tex: u64, i: i32) -> Self;
}

macro_rules! pool_in {
    ($($t:ty: $bits:expr, $nc:expr, $cst:expr, $tex:expr;)*) => {$(
        impl PoolIn for $t {
            #[inline(always)]
            fn bits(self) -> u64 { $bits(self) }
            #[inline(always)]
            unsafe fn read_only(p: *const $t) -> $t { $nc(p) }
            #[inline(always)]
            fn constant(offset: u64) -> $t { $cst(offset) }
            #[inline(always)]
            unsafe fn texture(tex: u64, i: i32) -> $t { unsafe { $tex(tex, i) } }
        }
    )*};
}

pool_in! {
    u8: |v: u8| v as u64, |p| crate::load_nc!(p, u8),
        |o| crate::load_constant!(crate::constant_bank_symbol!(), o, u8),
        |t, i| tex1d_u32x2(t, i)[0] as u8;
    u16: |v: u16| v as u64, |p| crate::load_nc!(p, u16),
        |o| crate::load_constant!(crate::constant_bank_symbol!(), o, u16),
        |t, i| tex1d_u32x2(t, i)[0] as u16;
    i32: |v: i32| v as u32 as u64, |p: *const i32| crate::load_nc!(p as *const u32, u32) as i32,
        |o| crate::load_constant!(crate::constant_bank_symbol!(), o, u32) as i32,
        |t, i| tex1d_u32x2(t, i)[0] as i32;
    f32: |v: f32| v.to_bits() as u64, |p: *const f32| f32::from_bits(crate::load_nc!(p as *const u32, u32)),
        |o| f32::from_bits(crate::load_constant!(crate::constant_bank_symbol!(), o, u32)),
        tex1d_f32;
    f64: f64::to_bits, |p: *const f64| f64::from_bits(crate::load_nc!(p as *const u64, u64)),
        |o| f64::from_bits(crate::load_constant!(crate::constant_bank_symbol!(), o, u64)),
        |t, i| { let [lo, hi] = tex1d_u32x2(t, i); f64::from_bits(lo as u64 | (hi as u64) << 32) };
}

// ---------------------------------------------------------------------------------------------
// Reductions
// ---------------------------------------------------------------------------------------------

/// The in-plane positions `start, start + step, … < end` a window covers along one axis, and its
/// length clipped to the padded axis (average pooling's `count_include_pad` factor).
#[derive(Clone, Copy)]
pub struct Span {
    start: i64,
    end: i64,
    step: i64,
    padded: i64,
}

impl Span {
    /// The window's extent along this axis (step 1 spans only: average pooling has no dilation).
    #[inline(always)]
    fn extent(&self) -> Extent {
        let len = if self.end > self.start {
            self.end - self.start
        } else {
            0
        };
        Extent {
            len: len as u32,
            padded: self.padded as u32,
        }
    }
}

/// A window's extent along one axis, what average pooling divides by: its in-plane samples and
/// its length clipped to the padded axis (each at most the kernel's size).
#[derive(Clone, Copy)]
pub struct Extent {
    len: u32,
    padded: u32,
}

/// A pooling reduction: its window along one axis, and how it folds samples into an accumulator.
pub trait PoolOp<T> {
    type Acc: Copy;
    /// Window `o` along an axis of `n` samples (stride `s`, padding `p`, kernel `k`, dilation `d`).
    fn span(o: u32, s: u32, p: u32, k: u32, d: u32, n: u32) -> Span;
    /// The accumulator of a window whose first in-plane sample has flat index `first`.
    fn begin(first: u32) -> Self::Acc;
    /// Folds in sample `v` at flat in-plane index `index`.
    fn take(acc: &mut Self::Acc, v: T, index: u32);
    /// The output and its index from the accumulator of a `rows × cols` window.
    fn finish(acc: Self::Acc, a: &PoolArgs, rows: Extent, cols: Extent) -> (T, u32);
}

/// Max pooling: PyTorch's `v > max || isnan(v)` rule (`abi::pool::MaxAcc`).
pub struct Max;
/// Average pooling: sum in the element type, row-major, divided once.
pub struct Avg;

impl<T: PoolValue> PoolOp<T> for Max {
    type Acc = MaxAcc<T>;
    #[inline(always)]
    fn span(o: u32, s: u32, p: u32, k: u32, d: u32, n: u32) -> Span {
        let (start, end) = max_range(o, s, p, k, d, n);
        Span {
            start,
            end,
            step: d as i64,
            padded: 0,
        }
    }
    #[inline(always)]
    fn begin(first: u32) -> MaxAcc<T> {
        MaxAcc::start(first)
    }
    #[inline(always)]
    fn take(acc: &mut MaxAcc<T>, v: T, index: u32) {
        acc.take(v, index)
    }
    #[inline(always)]
    fn finish(acc: MaxAcc<T>, _: &PoolArgs, _: Extent, _: Extent) -> (T, u32) {
        (acc.value, acc.index)
    }
}

impl<T: AvgValue> PoolOp<T> for Avg {
    type Acc = T;
    #[inline(always)]
    fn span(o: u32, s: u32, p: u32, k: u32, _: u32, n: u32) -> Span {
        let (start, end, padded) = avg_range(o, s, p, k, n);
        Span {
            start,
            end,
            step: 1,
            padded,
        }
    }
    #[inline(always)]
    fn begin(_: u32) -> T {
        T::ZERO
    }
    #[inline(always)]
    fn take(acc: &mut T, v: T, _: u32) {
        *acc = acc.add(v)
    }
    #[inline(always)]
    fn finish(sum: T, a: &PoolArgs, rows: Extent, cols: Extent) -> (T, u32) {
        if rows.len == 0 || cols.len == 0 {
            return (T::ZERO, 0); // PyTorch writes 0 for a window with no sample
        }
        let (r, c) = (rows.len as i64, cols.len as i64);
        (
            sum.div_count(avg_divisor(a, r, c, rows.padded as i64 * cols.padded as i64)),
            0,
        )
    }
}

// ---------------------------------------------------------------------------------------------
// One output per thread, four input paths
// ---------------------------------------------------------------------------------------------

/// Where the one-output kernels read element `i` (flat over the whole input) from.
pub trait Source<T> {
    unsafe fn at(&self, i: u64) -> T;
}

/// Plain global loads.
pub struct Plain<T>(*const T);
/// The read-only data path (`ld.global.nc`).
pub struct ReadOnly<T>(*const T);
/// The constant bank (the host copied the whole input there).
pub struct Constant;
/// A texture object whose element 0 is input element `base`.
pub struct Texture {
    tex: u64,
    base: u64,
}

impl<T> Source<T> for Plain<T> {
    #[inline(always)]
    unsafe fn at(&self, i: u64) -> T {
        unsafe { self.0.add(i as usize).read() }
    }
}

impl<T: PoolIn> Source<T> for ReadOnly<T> {
    #[inline(always)]
    unsafe fn at(&self, i: u64) -> T {
        unsafe { T::read_only(self.0.add(i as usize)) }
    }
}

impl<T: PoolIn> Source<T> for Constant {
    #[inline(always)]
    unsafe fn at(&self, i: u64) -> T {
        T::constant(i * size_of::<T>() as u64)
    }
}

impl<T: PoolIn> Source<T> for Texture {
    #[inline(always)]
    unsafe fn at(&self, i: u64) -> T {
        unsafe { T::texture(self.tex, i.wrapping_sub(self.base) as i32) }
    }
}

/// `(plane, output row, column)` of this thread, or `None` past the launch's last plane: a 32-bit
/// thread index split by the launch's two dividers.
#[inline(always)]
fn thread_coordinates(a: &PoolArgs) -> Option<(u64, u32, u32)> {
    let t = block_idx() * POOL_BLOCK + thread_idx();
    let (row, col) = a.cols.divrem(t);
    let (plane, oy) = a.rows.divrem(row);
    let plane = a.plane_begin + plane as u64;
    (plane < a.plane_end).then_some((plane, oy, col))
}

/// One output per thread: thread `t` of the launch computes output `t` of planes
/// `[plane_begin, plane_end)` (C order), walking its window through `src`.
///
/// # Safety
/// `src` reads the `plane_end · h · w`-element input; `y` (and `idx` unless null) hold
/// `plane_end · oh · ow` elements; `h · w < 2^32`; the grid covers the planes' outputs.
#[inline(always)]
pub unsafe fn pool_one<T: PoolIn, R: PoolOp<T>>(src: impl Source<T>, y: *mut T, idx: *mut i64, a: &PoolArgs) {
    let Some((plane, oy, ox)) = thread_coordinates(a) else {
        return;
    };
    let rows = R::span(oy, a.sh, a.ph, a.kh, a.dh, a.h);
    let cols = R::span(ox, a.sw, a.pw, a.kw, a.dw, a.w);
    let base = plane * a.h as u64 * a.w as u64;
    let mut acc = R::begin((rows.start * a.w as i64 + cols.start) as u32);
    let mut row = rows.start;
    while row < rows.end {
        let mut col = cols.start;
        while col < cols.end {
            let i = row as u32 * a.w + col as u32;
            // SAFETY: (row, col) is inside the plane; the caller sizes the input.
            R::take(&mut acc, unsafe { src.at(base + i as u64) }, i);
            col += cols.step;
        }
        row += rows.step;
    }
    let (v, index) = R::finish(acc, a, rows.extent(), cols.extent());
    let o = (plane * a.oh as u64 + oy as u64) * a.ow as u64 + ox as u64;
    // SAFETY: o < plane_end · oh · ow, which the caller's buffers hold.
    unsafe {
        *y.add(o as usize) = v;
        if !idx.is_null() {
            *idx.add(o as usize) = index as i64;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Entries
// ---------------------------------------------------------------------------------------------

/// Launch bounds of the 3-wide vectorized kernels: the instance's `blocks3` resident blocks
/// (`for_each_pool_instance!`), none for 0.
macro_rules! vectorized3_bounds {
    (0, $symbol:expr) => {};
    ($blocks:literal, $symbol:expr) => {
        $crate::launch_bounds!($symbol, 256, $blocks);
    };
}

macro_rules! pool_entries {
    ($($inst:ident => $t:ty, $op:ident, $blocks:literal, $argmax_blocks:literal, $blocks3:tt, $rows3:literal;)*) => {$(
        pub mod $inst {
            use super::*;

            #[unsafe(export_name = $crate::pool_kernel_name!($inst, "global"))]
            pub unsafe extern "ptx-kernel" fn global(x: *const $t, _tex: u64, y: *mut $t, idx: *mut i64, a: PoolArgs) {
                unsafe { pool_one::<$t, $op>(Plain(x), y, idx, &a) }
            }
            #[unsafe(export_name = $crate::pool_kernel_name!($inst, "constant_input"))]
            pub unsafe extern "ptx-kernel" fn constant_input(_x: *const $t, _tex: u64, y: *mut $t, idx: *mut i64, a: PoolArgs) {
                unsafe { pool_one::<$t, $op>(Constant, y, idx, &a) }
            }
            #[unsafe(export_name = $crate::pool_kernel_name!($inst, "texture"))]
            pub unsafe extern "ptx-kernel" fn texture(_x: *const $t, tex: u64, y: *mut $t, idx: *mut i64, a: PoolArgs) {
                unsafe { pool_one::<$t, $op>(Texture { tex, base: a.texture_base }, y, idx, &a) }
            }
            #[unsafe(export_name = $crate::pool_kernel_name!($inst, "read_only"))]
            pub unsafe extern "ptx-kernel" fn read_only(x: *const $t, _tex: u64, y: *mut $t, idx: *mut i64, a: PoolArgs) {
                unsafe { pool_one::<$t, $op>(ReadOnly(x), y, idx, &a) }
            }
            $crate::launch_bounds!($crate::pool_kernel_name!($inst, "vectorized"), 256, $blocks);
            #[unsafe(export_name = $crate::pool_kernel_name!($inst, "vectorized"))]
            pub unsafe extern "ptx-kernel" fn vectorized(x: *const $t, _tex: u64, y: *mut $t, idx: *mut i64, a: PoolArgs) {
                unsafe { super::vectorized::<$t, $op, false>(x, y, idx, &a) }
            }
            $crate::launch_bounds!($crate::pool_kernel_name!($inst, "shared_tile"), 256, 4);
            #[unsafe(export_name = $crate::pool_kernel_name!($inst, "shared_tile"))]
            pub unsafe extern "ptx-kernel" fn shared_tile(x: *const $t, _tex: u64, y: *mut $t, idx: *mut i64, a: PoolArgs) {
                unsafe { super::shared_tile::<$t, $op, false>(x, y, idx, &a) }
            }
            $crate::launch_bounds!($crate::pool_kernel_name!($inst, "vectorized_argmax"), 256, $argmax_blocks);
            #[unsafe(export_name = $crate::pool_kernel_name!($inst, "vectorized_argmax"))]
            pub unsafe extern "ptx-kernel" fn vectorized_argmax(x: *const $t, _tex: u64, y: *mut $t, idx: *mut i64, a: PoolArgs) {
                unsafe { super::vectorized::<$t, $op, true>(x, y, idx, &a) }
            }
            vectorized3_bounds!($blocks3, $crate::pool_kernel_name!($inst, "vectorized3"));
            #[unsafe(export_name = $crate::pool_kernel_name!($inst, "vectorized3"))]
            pub unsafe extern "ptx-kernel" fn vectorized3(x: *const $t, _tex: u64, y: *mut $t, idx: *mut i64, a: PoolArgs) {
                unsafe { super::vectorized3::<$t, $op, $rows3, false>(x, y, idx, &a) }
            }
            vectorized3_bounds!($blocks3, $crate::pool_kernel_name!($inst, "vectorized3_argmax"));
            #[unsafe(export_name = $crate::pool_kernel_name!($inst, "vectorized3_argmax"))]
            pub unsafe extern "ptx-kernel" fn vectorized3_argmax(x: *const $t, _tex: u64, y: *mut $t, idx: *mut i64, a: PoolArgs) {
                unsafe { super::vectorized3::<$t, $op, $rows3, true>(x, y, idx, &a) }
            }
            $crate::launch_bounds!($crate::pool_kernel_name!($inst, "shared_tile_argmax"), 256, 4);
            #[unsafe(export_name = $crate::pool_kernel_name!($inst, "shared_tile_argmax"))]
            pub unsafe extern "ptx-kernel" fn shared_tile_argmax(x: *const $t, _tex: u64, y: *mut $t, idx: *mut i64, a: PoolArgs) {
                unsafe { super::shared_tile::<$t, $op, true>(x, y, idx, &a) }
            }
        }
    )*};
}

crate::for_each_pool_instance!(pool_entries);
