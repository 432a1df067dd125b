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
//!
//! Every kernel takes `(x, tex, y, idx, args)`: `tex` is read only by the texture kernel, `idx`
//! (flat in-plane indices as `i64`, PyTorch's `return_indices`) is written only when non-null and
//! only by max pooling. Window walks, the max/NaN/tie rule and the average divisor come from
//! `abi::pool`, shared with the host.

use crate::abi::pool::{AvgValue, MaxAcc, POOL_BLOCK, PoolArgs, PoolValue, avg_divisor, avg_range, max_range};
use crate::device::{Vec16, block_idx, load_nc_v4, store_v2, store_v4, tex1d_f32, tex1d_u32x2, thread_idx};

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
    /// Positions covered (step 1 spans only: average pooling has no dilation).
    #[inline(always)]
    fn len(&self) -> i64 {
        if self.end > self.start {
            self.end - self.start
        } else {
            0
        }
    }
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
    fn finish(acc: Self::Acc, a: &PoolArgs, rows: &Span, cols: &Span) -> (T, u32);
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
    fn finish(acc: MaxAcc<T>, _: &PoolArgs, _: &Span, _: &Span) -> (T, u32) {
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
    fn finish(sum: T, a: &PoolArgs, rows: &Span, cols: &Span) -> (T, u32) {
        let (r, c) = (rows.len(), cols.len());
        if r == 0 || c == 0 {
            return (T::ZERO, 0); // PyTorch writes 0 for a window with no sample
        }
        (sum.div_count(avg_divisor(a, r, c, rows.padded * cols.padded)), 0)
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
    let (v, index) = R::finish(acc, a, &rows, &cols);
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
// Several outputs per thread from 16-byte loads
// ---------------------------------------------------------------------------------------------

/// Stores `v` (`P` consecutive outputs, `P · size ≤ 16` bytes) with one store of that width.
///
/// # Safety
/// `p` must point to `P` writable elements aligned to `P · size` bytes.
#[inline(always)]
unsafe fn store_packed<T: PoolIn, const P: usize>(p: *mut T, v: &[T; P]) {
    let size = size_of::<T>();
    let mut words = [0u32; 4];
    crate::unroll!(P, |j| {
        let bits = v[j].bits();
        let bit = j * size * 8;
        words[bit / 32] |= (bits << (bit % 32)) as u32;
        if size == 8 {
            words[bit / 32 + 1] = (bits >> 32) as u32;
        }
    });
    // SAFETY: forwarded to the caller (alignment = width).
    unsafe {
        match P * size {
            16 => store_v4(p.cast(), words),
            8 => store_v2(p.cast(), [words[0], words[1]]),
            4 => *p.cast::<u32>() = words[0],
            2 => *p.cast::<u16>() = words[0] as u16,
            _ => *p.cast::<u8>() = words[0] as u8,
        }
    }
}

/// `P` outputs per thread when one 16-byte vector holds `P` whole windows of a row (`kw = lanes /
/// P`, stride `kw`, no horizontal padding or dilation): thread `t` takes vector column `c` of
/// output row `oy`, loads that vector from each of its window's rows with `ld.global.nc.v4`
/// (consecutive threads, consecutive vectors: a warp reads 512 contiguous bytes per row) and
/// writes its `P` outputs with one store.
///
/// # Safety
/// As [`pool_one`]; additionally `w` is a multiple of the vector's lanes, `kw = lanes / P`, `sw =
/// kw`, `pw = 0`, `dw = 1`, and `x`, `y` are 16-byte aligned.
#[inline(always)]
unsafe fn pool_vectorized<T: PoolIn, R: PoolOp<T>, const P: usize, const INDEXED: bool>(
    x: *const T,
    y: *mut T,
    idx: *mut i64,
    a: &PoolArgs,
) {
    let lanes = T::LANES as u32;
    let kw = if lanes / P as u32 > 0 { lanes / P as u32 } else { 1 };
    let Some((plane, oy, c)) = thread_coordinates(a) else {
        return;
    };
    let rows = R::span(oy, a.sh, a.ph, a.kh, a.dh, a.h);
    let col0 = c * lanes;
    let cols = Span {
        start: 0,
        end: kw as i64,
        step: 1,
        padded: kw as i64,
    };
    let first_row = rows.start as u32 * a.w + col0;
    let mut acc = [R::begin(0); P];
    if INDEXED {
        crate::unroll!(P, |j| {
            acc[j] = R::begin(first_row + j as u32 * kw);
        });
    }
    let base = plane * a.h as u64 * a.w as u64;
    let row_vector = |row: i64| {
        let at = row as u32 * a.w + col0;
        // SAFETY: the vector lies inside row `row` (w is a multiple of lanes) and is 16-byte
        // aligned (the buffer is, and so is every row start).
        (at, unsafe { load_nc_v4(x.add((base + at as u64) as usize).cast()) })
    };
    let mut fold = |(at, words): (u32, [u32; 4])| {
        let mut lane = 0u32;
        T::for_each_lane(words, |v| {
            // Without indices every index is 0, so the compiler drops their bookkeeping.
            R::take(&mut acc[(lane / kw) as usize], v, if INDEXED { at + lane } else { 0 });
            lane += 1;
        });
    };
    // Two rows per step: both loads are in flight before either is folded in.
    let mut row = rows.start;
    while row + rows.step < rows.end {
        let (first, second) = (row_vector(row), row_vector(row + rows.step));
        fold(first);
        fold(second);
        row += 2 * rows.step;
    }
    if row < rows.end {
        fold(row_vector(row));
    }
    let mut out = [T::LOWEST; P];
    let mut index = [0u32; P];
    crate::unroll!(P, |j| {
        (out[j], index[j]) = R::finish(acc[j], a, &rows, &cols);
    });
    let o = ((plane * a.oh as u64 + oy as u64) * a.ow as u64 + c as u64 * P as u64) as usize;
    // SAFETY: the P outputs are inside the output row, aligned to P · size (see the contract).
    unsafe {
        store_packed(y.add(o), &out);
        if INDEXED {
            crate::unroll!(P, |j| {
                *idx.add(o + j) = index[j] as i64;
            });
        }
    }
}

/// The vectorized kernel for the launch's `kw` (one instance per outputs-per-vector count);
/// `INDEXED`: also the argmax (a separate entry, so the value-only kernel is not sized for the
/// argmax bookkeeping's registers).
///
/// # Safety
/// As [`pool_vectorized`]; `idx` holds the outputs when `INDEXED`.
#[inline(always)]
pub unsafe fn vectorized<T: PoolIn, R: PoolOp<T>, const INDEXED: bool>(
    x: *const T,
    y: *mut T,
    idx: *mut i64,
    a: &PoolArgs,
) {
    let lanes = T::LANES as u32;
    // SAFETY: forwarded; the host launches this kernel only for kw dividing the lanes.
    unsafe {
        match lanes / a.kw {
            1 => pool_vectorized::<T, R, 1, INDEXED>(x, y, idx, a),
            2 => pool_vectorized::<T, R, 2, INDEXED>(x, y, idx, a),
            4 if lanes >= 4 => pool_vectorized::<T, R, 4, INDEXED>(x, y, idx, a),
            8 if lanes >= 8 => pool_vectorized::<T, R, 8, INDEXED>(x, y, idx, a),
            16 if lanes >= 16 => pool_vectorized::<T, R, 16, INDEXED>(x, y, idx, a),
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Entries
// ---------------------------------------------------------------------------------------------

macro_rules! pool_entries {
    ($($inst:ident => $t:ty, $op:ident, $blocks:literal, $argmax_blocks:literal;)*) => {$(
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
            $crate::launch_bounds!($crate::pool_kernel_name!($inst, "vectorized_argmax"), 256, $argmax_blocks);
            #[unsafe(export_name = $crate::pool_kernel_name!($inst, "vectorized_argmax"))]
            pub unsafe extern "ptx-kernel" fn vectorized_argmax(x: *const $t, _tex: u64, y: *mut $t, idx: *mut i64, a: PoolArgs) {
                unsafe { super::vectorized::<$t, $op, true>(x, y, idx, &a) }
            }
        }
    )*};
}

crate::for_each_pool_instance!(pool_entries);
