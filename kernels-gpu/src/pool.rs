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
    let cols = Extent { len: kw, padded: kw };
    let first_row = rows.start as u32 * a.w + col0;
    let mut acc = [R::begin(0); P];
    if INDEXED {
        crate::unroll!(P, |j| {
            acc[j] = R::begin(first_row + j as u32 * kw);
        });
    }
    // The plane's first element once; the rows in 32 bits (in-plane positions: h · w < 2^32).
    let xp = x.wrapping_add((plane * a.h as u64 * a.w as u64) as usize);
    let row_vector = |row: u32| {
        let at = row * a.w + col0;
        // SAFETY: the vector lies inside row `row` (w is a multiple of lanes) and is 16-byte
        // aligned (the buffer is, and so is every row start).
        (at, unsafe { load_nc_v4(xp.add(at as usize).cast()) })
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
    let (end, step) = (rows.end.max(rows.start) as u32, rows.step as u32);
    let mut row = rows.start as u32;
    while row + step < end {
        let (first, second) = (row_vector(row), row_vector(row + step));
        fold(first);
        fold(second);
        row += 2 * step;
    }
    if row < end {
        fold(row_vector(row));
    }
    let mut out = [T::LOWEST; P];
    let mut index = [0u32; P];
    crate::unroll!(P, |j| {
        (out[j], index[j]) = R::finish(acc[j], a, rows.extent(), cols);
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

/// `P = lanes / SW` outputs per thread for 3-wide windows without dilation at stride `SW` whose
/// horizontal padding `PW ≤ 1` keeps every tap within one element of the thread's 16-byte vector
/// (the host runs stride 2: 3 × 3 stride 2 padding 1 is ResNet's pooling). Thread `t` takes
/// vector column `c` of output row `oy` as the vectorized kernel does; per window row it loads
/// that vector with `ld.global.nc.v4` and the one element on each side its windows reach with
/// scalar loads (L1 hits: the neighbouring threads' vectors hold them), then folds the taps of
/// each output in row-major order, so ties, NaN and the average's summation order are the
/// one-output rungs'. Which taps lie in the row follows from two flags ([`Sides`]), the
/// average's counts are 32-bit ([`Extent`]), and the `P` outputs (and indices) leave as one store
/// where they are whole and aligned.
///
/// # Safety
/// As [`pool_one`]; additionally `w` is a multiple of the vector's lanes, `kw = 3`, `dw = 1`,
/// `sw = SW`, `pw = PW`, `(w / lanes) · P ≥ ow`, and `x` is 16-byte aligned.
#[inline(always)]
unsafe fn pool_vectorized3<
    T: PoolIn,
    R: PoolOp<T>,
    const SW: usize,
    const PW: usize,
    const P: usize,
    const INDEXED: bool,
>(
    x: *const T,
    y: *mut T,
    idx: *mut i64,
    a: &PoolArgs,
) {
    const { assert!(P * SW <= 16 && PW <= 1 && 2 <= SW + PW) };
    let lanes = T::LANES as usize;
    let Some((plane, oy, c)) = thread_coordinates(a) else {
        return;
    };
    let rows = R::span(oy, a.sh, a.ph, a.kh, a.dh, a.h);
    let col0 = c * lanes as u32;
    // The elements just before and after the vector, the only taps that can fall outside the row
    // (`w` is a multiple of the lanes), lie in it unless the vector starts or ends the row.
    let sides = Sides {
        lanes: lanes as i32,
        left: col0 > 0,
        right: col0 + (lanes as u32) < a.w,
    };
    let tap = |j: usize, k: usize| (j * SW + k) as i32 - PW as i32;
    // Each output's columns: its in-row taps, and with the padding column before the row (the
    // only padded tap a window reaches: the last one ends inside the row for PW = 1) its padded
    // length. 32-bit counts, no spans: the average's divisor costs a few integer operations.
    let mut cols = [Extent { len: 0, padded: 0 }; P];
    crate::unroll!(P, |j| {
        crate::unroll!(3, |k| {
            let inside = sides.holds(tap(j, k));
            cols[j].len += inside as u32;
            cols[j].padded += (inside || tap(j, k) < 0) as u32;
        });
    });
    let mut acc = [R::begin(0); P];
    if INDEXED {
        crate::unroll!(P, |j| {
            // Only the first tap can lie before the row.
            let first = tap(j, 0) + !sides.holds(tap(j, 0)) as i32;
            acc[j] = R::begin(rows.start as u32 * a.w + col0.wrapping_add_signed(first));
        });
    }
    let base = plane * a.h as u64 * a.w as u64;
    let mut row = rows.start;
    while row < rows.end {
        let at = base + row as u64 * a.w as u64 + col0 as u64;
        // Taps -1 ..= lanes of the row (vector-relative): the vector, and one element each side.
        let mut e = [T::LOWEST; 18];
        // SAFETY: the vector lies inside the row (w is a multiple of lanes), 16-byte aligned;
        // the side elements are read only when inside the row.
        unsafe {
            let words = load_nc_v4(x.add(at as usize).cast());
            if PW == 1 && sides.left {
                e[0] = T::read_only(x.add(at as usize - 1));
            }
            if SW + PW <= 2 && sides.right {
                e[lanes + 1] = T::read_only(x.add(at as usize + lanes));
            }
            let mut k = 1;
            T::for_each_lane(words, |v| {
                e[k] = v;
                k += 1;
            });
        }
        let index0 = row as u32 * a.w + col0;
        crate::unroll!(P, |j| {
            crate::unroll!(3, |k| {
                let t = tap(j, k);
                if sides.holds(t) {
                    let index = if INDEXED { index0.wrapping_add_signed(t) } else { 0 };
                    R::take(&mut acc[j], e[(t + 1) as usize], index);
                }
            });
        });
        row += rows.step;
    }
    let o = (plane * a.oh as u64 + oy as u64) * a.ow as u64;
    let first = (o + c as u64 * P as u64) as usize;
    let mut out = [T::LOWEST; P];
    let mut index = [0u32; P];
    crate::unroll!(P, |j| {
        (out[j], index[j]) = R::finish(acc[j], a, rows.extent(), cols[j]);
    });
    // The P outputs as one store (the indices as 16-byte stores) where all lie in the row and
    // the address is aligned to their width: a warp then writes its outputs with one contiguous
    // store instead of P strided ones.
    let whole = c * P as u32 + P as u32 <= a.ow;
    let (packed, indices16) = (
        whole && (y.wrapping_add(first) as usize).is_multiple_of(P * size_of::<T>()),
        whole && P.is_multiple_of(2) && (idx.wrapping_add(first) as usize).is_multiple_of(16),
    );
    // SAFETY: the outputs first .. first + P of the row that are < ow, inside the caller's
    // buffers; the packed stores only when all P are and aligned to their width.
    unsafe {
        if packed {
            store_packed(y.add(first), &out);
        }
        if INDEXED && indices16 {
            crate::unroll!(P / 2, |k| {
                let pair = [index[2 * k], 0, index[2 * k + 1], 0];
                store_v4(idx.add(first + 2 * k) as *mut [u32; 4], pair);
            });
        }
        crate::unroll!(P, |j| {
            if c * P as u32 + (j as u32) < a.ow {
                if !packed {
                    *y.add(first + j) = out[j];
                }
                if INDEXED && !indices16 {
                    *idx.add(first + j) = index[j] as i64;
                }
            }
        });
    }
}

/// Which vector-relative taps of a row lie in it: those of the vector, the one before it unless
/// the vector starts the row, the one after it unless the vector ends it.
#[derive(Clone, Copy)]
struct Sides {
    lanes: i32,
    left: bool,
    right: bool,
}

impl Sides {
    #[inline(always)]
    fn holds(&self, tap: i32) -> bool {
        (tap >= 0 || self.left) && (tap < self.lanes || self.right)
    }
}

/// The 3-wide overlapping vectorized kernel for the launch's stride and padding (`pool_vectorized3`).
///
/// # Safety
/// As [`pool_vectorized3`]; the host launches it only for `(sw, pw)` of `(2, 1)` or `(2, 0)`.
#[inline(always)]
pub unsafe fn vectorized3<T: PoolIn, R: PoolOp<T>, const INDEXED: bool>(
    x: *const T,
    y: *mut T,
    idx: *mut i64,
    a: &PoolArgs,
) {
    // SAFETY: forwarded.
    unsafe {
        match (a.sw, a.pw, T::LANES) {
            (2, 1, 16) => pool_vectorized3::<T, R, 2, 1, 8, INDEXED>(x, y, idx, a),
            (2, 1, 8) => pool_vectorized3::<T, R, 2, 1, 4, INDEXED>(x, y, idx, a),
            (2, 1, 4) => pool_vectorized3::<T, R, 2, 1, 2, INDEXED>(x, y, idx, a),
            (2, 1, _) => pool_vectorized3::<T, R, 2, 1, 1, INDEXED>(x, y, idx, a),
            (2, 0, 16) => pool_vectorized3::<T, R, 2, 0, 8, INDEXED>(x, y, idx, a),
            (2, 0, 8) => pool_vectorized3::<T, R, 2, 0, 4, INDEXED>(x, y, idx, a),
            (2, 0, 4) => pool_vectorized3::<T, R, 2, 0, 2, INDEXED>(x, y, idx, a),
            (2, 0, _) => pool_vectorized3::<T, R, 2, 0, 1, INDEXED>(x, y, idx, a),
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A shared tile per block: overlapping windows
// ---------------------------------------------------------------------------------------------

/// Up to this many 16-byte loads per thread are in flight before the first is stored to shared.
const TILE_LOADS: usize = 4;

/// The output tile of one block and the input rows and columns it reads, all in plane
/// coordinates: outputs `[oy0, oy0 + rows) × [ox0, ox0 + cols)` read input rows `[iy, iy_end)`
/// and columns `[ix, ix_end)`; the stage holds columns from `ix_base` (`ix` rounded down to a
/// 16-byte vector when the rows load as vectors).
struct TileRegion {
    plane: u64,
    oy0: u32,
    ox0: u32,
    rows: u32,
    cols: u32,
    iy: i64,
    iy_end: i64,
    ix_base: i64,
    ix_end: i64,
}

impl TileRegion {
    /// Block `b`'s tile: `b = (plane · tiles_down + ty) · tiles_across + tx` (`a.cols` divides by
    /// the tiles across, `a.rows` by the tiles down), or `None` past the launch's last plane.
    #[inline(always)]
    fn of_block<T: PoolIn, R: PoolOp<T>>(a: &PoolArgs, vectors: bool) -> Option<Self> {
        let (rest, tx) = a.cols.divrem(block_idx());
        let (plane, ty) = a.rows.divrem(rest);
        let plane = a.plane_begin + plane as u64;
        if plane >= a.plane_end {
            return None;
        }
        let (oy0, ox0) = (ty * a.tile_rows, tx * a.tile_cols);
        let rows = a.tile_rows.min(a.oh - oy0);
        let cols = a.tile_cols.min(a.ow - ox0);
        // The first window's unclipped start bounds every window's first sample (max pooling
        // steps a start inside the padding forward by whole dilations, so a later window can
        // start before the first one's clipped start); ends grow with the window.
        let iy = (oy0 as i64 * a.sh as i64 - a.ph as i64).max(0);
        let ix = (ox0 as i64 * a.sw as i64 - a.pw as i64).max(0);
        let iy_end = R::span(oy0 + rows - 1, a.sh, a.ph, a.kh, a.dh, a.h).end;
        let ix_end = R::span(ox0 + cols - 1, a.sw, a.pw, a.kw, a.dw, a.w).end;
        let lanes = T::LANES as i64;
        let (ix_base, ix_end) = if vectors {
            (ix / lanes * lanes, (ix_end + lanes - 1) / lanes * lanes)
        } else {
            (ix, ix_end)
        };
        Some(TileRegion {
            plane,
            oy0,
            ox0,
            rows,
            cols,
            iy,
            iy_end: iy_end.max(iy),
            ix_base,
            ix_end: ix_end.max(ix_base),
        })
    }
}

/// Stages the tile's input rows in shared memory (row `r` of the stage is input row `iy + r`, at
/// `pitch` elements per row): 16-byte read-only loads, `TILE_LOADS` in flight per thread, when
/// `vectors`; else one element per load.
///
/// # Safety
/// `x` holds the plane; `stage` holds `(iy_end − iy) · pitch` elements; with `vectors`, `x` is
/// 16-byte aligned, `w` and `pitch` are multiples of the lanes and `[ix_base, ix_end)` are whole
/// vectors inside the row.
#[inline(always)]
unsafe fn stage_tile<T: PoolIn>(x: *const T, stage: *mut T, g: &TileRegion, a: &PoolArgs, pitch: u32, vectors: bool) {
    let t = thread_idx();
    // SAFETY: the plane lies in the input (the caller's contract).
    let plane = unsafe { x.add((g.plane * a.h as u64 * a.w as u64) as usize) };
    let rows = (g.iy_end - g.iy) as u32;
    let width = (g.ix_end - g.ix_base) as u32;
    // Input element (plane-relative) and stage element of tile element (r, c).
    let at = |r: u32, c: u32| {
        (
            (g.iy as u32 + r) as usize * a.w as usize + g.ix_base as usize + c as usize,
            (r * pitch + c) as usize,
        )
    };
    if vectors {
        let lanes = T::LANES as u32;
        let per_row = width / lanes;
        let total = rows * per_row;
        let mut i = t;
        while i < total {
            let mut v = [[0u32; 4]; TILE_LOADS];
            let mut dst = [0usize; TILE_LOADS];
            crate::unroll!(TILE_LOADS, |u| {
                let j = i + u as u32 * POOL_BLOCK;
                if j < total {
                    let r = j / per_row;
                    let (src, d) = at(r, (j - r * per_row) * lanes);
                    dst[u] = d;
                    // SAFETY: a whole aligned vector of row iy + r (the contract).
                    v[u] = unsafe { load_nc_v4(plane.add(src).cast()) };
                }
            });
            crate::unroll!(TILE_LOADS, |u| {
                if i + (u as u32) * POOL_BLOCK < total {
                    // SAFETY: inside the stage, 16-byte aligned (pitch is whole vectors).
                    unsafe { store_shared_v4(stage.add(dst[u]).cast(), v[u]) };
                }
            });
            i += TILE_LOADS as u32 * POOL_BLOCK;
        }
    } else {
        let total = rows * width;
        let mut i = t;
        while i < total {
            let r = i / width;
            let (src, d) = at(r, i - r * width);
            // SAFETY: inside the plane and the stage.
            unsafe { *stage.add(d) = T::read_only(plane.add(src)) };
            i += POOL_BLOCK;
        }
    }
}

/// Taps of a window span (its samples along one axis).
#[inline(always)]
fn taps(s: &Span) -> u32 {
    if s.end > s.start {
        ((s.end - s.start + s.step - 1) / s.step) as u32
    } else {
        0
    }
}

/// A block per output tile for windows that overlap (stride below the kernel) or straddle
/// vectors: the block stages the input rows and columns its tile's windows read in shared
/// memory — each input element loaded from DRAM once, as 16-byte vectors where the rows allow —
/// then thread `t` takes output column `t mod cols` of the tile (tiles are at most 256 wide)
/// and walks its rows `t / cols, + ⌊256 / cols⌋, …`: the column window is found once per
/// thread, consecutive threads write consecutive outputs. Each window is walked row-major out
/// of the stage (so max ties, NaN and the average's summation order are the other rungs'
/// exactly); whole 3 × 3 windows without dilation (ResNet's pooling) are unrolled. `INDEXED`:
/// also the argmax.
///
/// # Safety
/// As [`pool_one`]; the grid is `tiles_across · tiles_down` blocks per plane of the launch,
/// `tile_cols ≤ POOL_BLOCK`; dynamic shared memory holds `stage_rows · stage_pitch` elements
/// (the host's tile geometry); with vector loads (`a.vectors`), `x` is 16-byte aligned and `w` a
/// multiple of the lanes.
#[inline(always)]
pub unsafe fn shared_tile<T: PoolIn, R: PoolOp<T>, const INDEXED: bool>(
    x: *const T,
    y: *mut T,
    idx: *mut i64,
    a: &PoolArgs,
) {
    let vectors = a.vectors != 0;
    let Some(g) = TileRegion::of_block::<T, R>(a, vectors) else {
        return;
    };
    // SAFETY: the host sized the stage for every tile of this geometry.
    let stage: *mut T = unsafe { dynamic_shared() };
    let pitch = a.stage_pitch;
    // SAFETY: forwarded (the stage and the input's layout are the contract's).
    unsafe { stage_tile(x, stage, &g, a, pitch, vectors) };
    // SAFETY: every thread of the block reaches it.
    unsafe { sync_threads() };
    let t = thread_idx();
    let step = POOL_BLOCK / g.cols;
    let (r0, c) = (t / g.cols, t % g.cols);
    if r0 >= step {
        return;
    }
    let ox = g.ox0 + c;
    let cols = R::span(ox, a.sw, a.pw, a.kw, a.dw, a.w);
    let ncols = taps(&cols);
    // Stage column of the first tap, and the step between taps.
    let col0 = (cols.start - g.ix_base) as u32;
    let dc = cols.step as u32;
    let whole3 = a.kh == 3 && a.dh == 1 && a.kw == 3 && a.dw == 1 && ncols == 3;
    // SAFETY (every read below): the element lies in the staged region, which
    // TileRegion::of_block sized to cover every window of the tile.
    let at = |p: *const T| unsafe { *p };
    let mut r = r0;
    while r < g.rows {
        let oy = g.oy0 + r;
        let rows = R::span(oy, a.sh, a.ph, a.kh, a.dh, a.h);
        let nrows = taps(&rows);
        let first = if INDEXED {
            (rows.start * a.w as i64 + cols.start) as u32
        } else {
            0
        };
        let mut acc = R::begin(first);
        // SAFETY: the window's first tap, inside the stage.
        let base = unsafe { stage.add(((rows.start - g.iy) as u32 * pitch + col0) as usize) };
        if whole3 && nrows == 3 {
            crate::unroll!(3, |i| {
                // SAFETY: row i of the window, inside the stage.
                let line = unsafe { base.add(i * pitch as usize) };
                crate::unroll!(3, |j| {
                    // SAFETY: tap j of the row.
                    let v = at(unsafe { line.add(j) });
                    R::take(&mut acc, v, first + i as u32 * a.w + j as u32);
                });
            });
        } else {
            let (dr, drow) = ((rows.step as u32 * pitch) as usize, rows.step as u32 * a.w);
            let (mut line, mut index) = (base, first);
            for _ in 0..nrows {
                let (mut p, mut i) = (line, index);
                for _ in 0..ncols {
                    R::take(&mut acc, at(p), i);
                    // SAFETY: the next tap (read only while taps remain).
                    p = unsafe { p.add(dc as usize) };
                    i += dc;
                }
                // SAFETY: the next row (read only while rows remain).
                line = unsafe { line.add(dr) };
                index += drow;
            }
        }
        let (v, index) = R::finish(acc, a, rows.extent(), cols.extent());
        let out = (g.plane * a.oh as u64 + oy as u64) * a.ow as u64 + ox as u64;
        // SAFETY: out < plane_end · oh · ow, which the caller's buffers hold.
        unsafe {
            *y.add(out as usize) = v;
            if INDEXED {
                *idx.add(out as usize) = index as i64;
            }
        }
        r += step;
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
    ($($inst:ident => $t:ty, $op:ident, $blocks:literal, $argmax_blocks:literal, $blocks3:tt;)*) => {$(
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
                unsafe { super::vectorized3::<$t, $op, false>(x, y, idx, &a) }
            }
            vectorized3_bounds!($blocks3, $crate::pool_kernel_name!($inst, "vectorized3_argmax"));
            #[unsafe(export_name = $crate::pool_kernel_name!($inst, "vectorized3_argmax"))]
            pub unsafe extern "ptx-kernel" fn vectorized3_argmax(x: *const $t, _tex: u64, y: *mut $t, idx: *mut i64, a: PoolArgs) {
                unsafe { super::vectorized3::<$t, $op, true>(x, y, idx, &a) }
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
