//! Window sums along any axis (`abi::axis`) and the moments of a box from its sums.
//!
//! **Thread mapping.** The array is `(outer, n, inner)`; thread `t` takes column `c = t mod inner`
//! of outer index `o` and one run of outputs along the axis, so the 32 lanes of a warp hold 32
//! neighbouring columns and every load and store of a step is one contiguous warp access, however
//! slow the axis. Nothing is transposed and no shared memory is used.
//!
//! **Running sums.** A run's first window is summed in order; each next output adds
//! `entering − leaving` (scipy's `NI_UniformFilter1D`). The entering sample comes from DRAM; the
//! leaving one was loaded `size` steps earlier by the same thread and comes from L1 or L2. Outputs
//! whose window lies inside the line run unrolled by [`UNROLL`] with no border test: the loads of
//! eight steps are issued before any sum, so each thread has eight loads in flight.

use crate::abi::CastF64;
use crate::abi::axis::{
    AxisAcc, AxisArgs, AxisOp, AxisSum, BorderMode, MomentsArgs, ROWS_CHUNK, ROWS_LINES, ROWS_RING, border_index_i32,
    rows_pitch_bytes,
};
use crate::abi::window::{Acc, moments};
use crate::device::{Quad, block_idx, dynamic_shared, global_thread_idx, opaque_u64, sync_threads, thread_idx};

/// Steps of the border-free part issued together.
const UNROLL: usize = 8;

/// Thread `t`'s line and run: its line's first sample (the offset of column `lanes · c`, columns
/// counted in groups of `lanes`), and its outputs `[start, end)`; `None` past the launch.
#[inline(always)]
fn run_of(a: &AxisArgs, lanes: u64) -> Option<(u64, u32, u32)> {
    let t = global_thread_idx();
    if t >= a.threads as u64 {
        return None;
    }
    let (rest, c) = a.inner.divrem(t as u32);
    let (strip, o) = a.outer.divrem(rest);
    let start = strip * a.strip;
    let end = (start as u64 + a.strip as u64).min(a.n as u64) as u32;
    Some((
        o as u64 * a.n as u64 * a.inner.d as u64 * lanes + c as u64 * lanes,
        start,
        end,
    ))
}

/// Four neighbouring columns' accumulators, summed lane by lane.
#[derive(Clone, Copy)]
struct Four<A>([A; 4]);

impl<A: AxisSum> AxisSum for Four<A> {
    const ZERO: Self = Four([A::ZERO; 4]);
    #[inline(always)]
    fn slide(self, enter: Self, leave: Self) -> Self {
        Four([0, 1, 2, 3].map(|k| self.0[k].slide(enter.0[k], leave.0[k])))
    }
    #[inline(always)]
    fn plus(self, o: Self) -> Self {
        Four([0, 1, 2, 3].map(|k| self.0[k].plus(o.0[k])))
    }
    #[inline(always)]
    fn from_cval(v: f64) -> Self {
        Four([A::from_cval(v); 4])
    }
}

/// The line walk of one run — a column's sums, or four columns' ([`Four`]): its first window
/// summed in order, then `acc + (entering − leaving)` per output. `at(i)` is the (lifted) sample
/// at position `i` of the line (`0 ≤ i < n`), `ext(i)` the same at any position (the border's
/// sample or constant), `put(i, acc)` writes output `i`.
/// Outputs whose window lies inside the line run unrolled by [`UNROLL`] with no border test: the
/// loads of eight steps are issued before any sum, so each thread has eight loads in flight.
#[inline(always)]
fn walk_run<V: AxisSum>(
    a: &AxisArgs,
    (start, end): (u32, u32),
    at: impl Fn(i32) -> V,
    ext: impl Fn(i32) -> V,
    put: impl Fn(i32, V),
) {
    let (n, size, before) = (a.n as i32, a.size as i32, a.before as i32);
    let mut acc = V::ZERO;
    for k in 0..size {
        acc = acc.plus(ext(start as i32 - before + k));
    }
    put(start as i32, acc);
    let (mut i, end) = (start as i32 + 1, end as i32);
    // Output i reads x̃[i − before + size − 1] in and x̃[i − before − 1] out: both inside the line
    // for i in [before + 1, n − size + before + 1).
    let (lo, hi) = ((before + 1).min(end), (n - size + before + 1).min(end));
    while i < lo {
        acc = acc.slide(ext(i - before + size - 1), ext(i - before - 1));
        put(i, acc);
        i += 1;
    }
    while i + UNROLL as i32 <= hi {
        let mut enter = [V::ZERO; UNROLL];
        let mut leave = [V::ZERO; UNROLL];
        crate::unroll!(UNROLL, |u| {
            enter[u] = at(i + u as i32 - before + size - 1);
        });
        crate::unroll!(UNROLL, |u| {
            leave[u] = at(i + u as i32 - before - 1);
        });
        crate::unroll!(UNROLL, |u| {
            acc = acc.slide(enter[u], leave[u]);
            put(i + u as i32, acc);
        });
        i += UNROLL as i32;
    }
    while i < hi {
        acc = acc.slide(at(i - before + size - 1), at(i - before - 1));
        put(i, acc);
        i += 1;
    }
    while i < end {
        acc = acc.slide(ext(i - before + size - 1), ext(i - before - 1));
        put(i, acc);
        i += 1;
    }
}

/// One axis pass of `x` into `y`: window sums of the samples (or their squares, `op == SumSq`)
/// in `A`, each written as `out(sum)`; a thread per column.
///
/// # Safety
/// `x` and `y` hold `outer · n · inner` elements; the launch covers `a.threads` threads.
#[inline(always)]
unsafe fn axis_pass<I: Copy, A: AxisAcc<I>, O>(x: *const I, y: *mut O, a: &AxisArgs, op: AxisOp, out: impl Fn(A) -> O) {
    let Some((base, start, end)) = run_of(a, 1) else {
        return;
    };
    let inner = a.inner.d as u64;
    let square = op as u32 == AxisOp::SumSq as u32;
    let (n, mode, cval) = (a.n as i32, BorderMode::from_code(a.mode), A::from_cval(a.cval));
    // SAFETY (both closures and the stores): 0 ≤ i < n on the thread's own line.
    let at = |i: i32| -> A { A::lift(unsafe { *x.add((base + i as u64 * inner) as usize) }, square) };
    let ext = |i: i32| -> A { border_index_i32(i, n, mode).map_or(cval, at) };
    let put = |i: i32, v: A| unsafe { y.add((base + i as u64 * inner) as usize).write(out(v)) };
    walk_run(a, (start, end), at, ext, put);
}

/// [`axis_pass`] over four neighbouring columns per thread (`a.inner` counts groups of four;
/// `inner` is a multiple of 4 and both buffers are aligned for [`Quad`] accesses): one vector
/// load per step of 4, 8, 16 or 32 bytes instead of four scalar ones, so the u8 walk moves a
/// word per instruction and every type has four times the bytes in flight per thread.
///
/// # Safety
/// As [`axis_pass`], with the alignment above.
#[inline(always)]
unsafe fn axis_pass_four<I: Quad, A: AxisAcc<I>, O: Quad>(
    x: *const I,
    y: *mut O,
    a: &AxisArgs,
    op: AxisOp,
    out: impl Fn(A) -> O,
) {
    let Some((base, start, end)) = run_of(a, 4) else {
        return;
    };
    let inner = 4 * a.inner.d as u64;
    let square = op as u32 == AxisOp::SumSq as u32;
    let (n, mode, cval) = (a.n as i32, BorderMode::from_code(a.mode), Four::<A>::from_cval(a.cval));
    let at = |i: i32| -> Four<A> {
        // SAFETY: 0 ≤ i < n on the thread's own line; the four columns are in the line's row.
        let v = unsafe { I::load4(x.add((base + i as u64 * inner) as usize)) };
        Four(v.map(|s| A::lift(s, square)))
    };
    let ext = |i: i32| -> Four<A> { border_index_i32(i, n, mode).map_or(cval, at) };
    // SAFETY: as `at`.
    let put = |i: i32, v: Four<A>| unsafe { O::store4(y.add((base + i as u64 * inner) as usize), v.0.map(&out)) };
    walk_run(a, (start, end), at, ext, put);
}

/// Warps of a last-axis block (`ROWS_LINES` threads); warp `w` stages and stores lines
/// `w, w + WARPS, …` of the block, in batches of [`BATCH`] lines whose loads are all issued first.
const WARPS: usize = ROWS_LINES as usize / 32;
/// Lines of a last-axis block per batch of one warp's loads.
const BATCH: usize = 8;
/// Blocks of the last-axis kernel an SM should hold at once, its launch bounds: for a mean, whose
/// ring of 1- to 8-byte input slots allows 6 to 50 blocks, at most 96 registers a thread; for a
/// sum, whose ring holds 8-byte accumulators but for u32 (6 blocks), what 6 blocks allow.
macro_rules! rows_min_blocks {
    (Mean) => {
        10
    };
    (Sum) => {
        6
    };
    (SumSq) => {
        6
    };
}
/// Outputs of a full last-axis step whose ring reads are issued before their chain of slides.
const STEP_UNROLL: usize = 8;
/// Batches per warp.
const BATCHES: usize = ROWS_LINES as usize / WARPS / BATCH;

/// How the last-axis kernel keeps samples in its ring of output elements `O`: `stage` turns a
/// sample into a slot (the sample itself for a mean, whose output is the input type; lifted to
/// the accumulator for a sum), `cval` is the constant border as a slot (representable: the host
/// rounds it to the element), `term` reads a slot as an accumulator term.
struct Ring<S, T, O> {
    stage: S,
    cval: O,
    term: T,
}

/// One pass along the last axis (`inner = 1`, the host's `outer` lines of `n` samples) for
/// windows of at most `ROWS_MAX_WINDOW`: thread `t` of a block owns line `ROWS_LINES · block + t`.
/// Per step the block stages the next `ROWS_CHUNK` extended positions of its lines in a shared
/// ring of `ROWS_RING` per line (lane `l` of a warp loads position `p + l` of one line: one
/// coalesced warp load per line), each thread slides its window over the step's positions
/// exactly as [`axis_pass`] does (the same sums in the same order), and warps store the step's
/// outputs a line per store. Positions past the line's ends are mapped by the border at staging.
///
/// **A ring of output elements.** Slots hold samples as the output type ([`Ring`]): the input
/// itself for a mean (4 bytes a slot for f32, where f64 accumulators took 8), lifted at use.
/// Output `o` goes to the slot of position `o − before − 1`, the sample that leaves its window:
/// no later window reads it, and staging never reaches it before the step's store (the ring
/// holds `ROWS_CHUNK + size − 1 < ROWS_RING` live positions), so there is no output tile. Less
/// shared memory a line means more blocks per SM to hide the staging loads.
///
/// **Unrolled steps.** A full step reads its ring samples [`STEP_UNROLL`] outputs at a time
/// before running their chain of slides, so the outputs' conversions (the mean's division)
/// overlap. Launch bounds (`rows_min_blocks!`) cap the registers so that the blocks the ring's
/// shared memory allows are resident.
///
/// # Safety
/// `x` and `y` hold `outer · n` elements; `ROWS_LINES` threads per block, enough blocks for the
/// lines, and `rows_shared_bytes(size_of::<O>())` of dynamic shared memory.
#[inline(always)]
#[allow(unused_assignments)] // `stage!`'s last `src += stride` of a batch is not read
unsafe fn axis_rows<I: Copy, A: AxisSum, O: Copy>(
    x: *const I,
    y: *mut O,
    a: &AxisArgs,
    ring_of: Ring<impl Fn(I) -> O, impl Fn(O) -> A, O>,
    out: impl Fn(A) -> O,
) {
    let lines = a.outer.d;
    let t = thread_idx();
    let (warp, lane) = (t as usize / 32, t as i32 % 32);
    let first = block_idx() * ROWS_LINES;
    let (n, size, before) = (a.n as i32, a.size as i32, a.before as i32);
    let after = size - 1 - before;
    let mode = BorderMode::from_code(a.mode);
    let Ring { stage, cval, term } = ring_of;
    let pitch = rows_pitch_bytes(size_of::<O>()) / size_of::<O>();
    const CHUNK: usize = ROWS_CHUNK as usize;
    // SAFETY: the host sizes the dynamic shared memory for the ring.
    let ring: *mut O = unsafe { dynamic_shared::<O>() };
    let slot = |p: i32| ((p + before) as u32 & (ROWS_RING - 1)) as usize;
    // Lines of the block this warp stages: rows warp, warp + WARPS, … below `lines`.
    let warp_lines = lines.saturating_sub(first + warp as u32).div_ceil(WARPS as u32) as usize;
    // Stages extended positions [p0, p0 + count) of every line of the block (count ≤ 32): all of
    // a warp's loads first, then the ring stores. A macro, so both uses are inlined (each kernel
    // module holds its entry alone: no calls).
    macro_rules! stage {
        ($p0:expr, $count:expr) => {{
            let (p, count) = ($p0 + lane, $count);
            // The lane's position in its line, the same for every line of the block.
            let j = if 0 <= p && p < n {
                Some(p)
            } else {
                border_index_i32(p, n, mode)
            };
            // Addresses advance by one stride per line from the warp's first, computed here:
            // an opaque stride keeps LLVM from holding one precomputed address per load.
            let stride = opaque_u64(WARPS as u64 * a.n as u64) as usize;
            let mut src = (first as usize + warp) * a.n as usize + j.unwrap_or(0) as usize;
            crate::unroll!(BATCHES, |b| {
                let mut v = [cval; BATCH];
                crate::unroll!(BATCH, |k| {
                    if let (true, Some(_)) = (lane < count && b * BATCH + k < warp_lines, j) {
                        // SAFETY: position j < n of a line below `lines`.
                        v[k] = stage(unsafe { *x.add(src) });
                    }
                    src += stride;
                });
                crate::unroll!(BATCH, |k| {
                    if lane < count {
                        // SAFETY: inside the ring.
                        unsafe { ring.add((warp + WARPS * (b * BATCH + k)) * pitch + slot(p)).write(v[k]) };
                    }
                });
            });
        }};
    }
    // SAFETY (the three): the thread's own ring line.
    let own = unsafe { ring.add(t as usize * pitch) };
    let at = |p: i32| -> O { unsafe { *own.add(slot(p)) } };
    // The slot of position `o − before − 1`.
    let put = |o: i32, v: O| unsafe { own.add(slot(o - before - 1)).write(v) };
    stage!(-before, size - 1);
    let mut acc = A::ZERO;
    let mut o0 = 0;
    while o0 < n {
        let count = (n - o0).min(CHUNK as i32);
        stage!(o0 + after, count);
        // SAFETY: every thread of the block reaches the three barriers (the loop bound is uniform).
        unsafe { sync_threads() };
        // Threads past the last line compute nothing (their ring lines hold no samples).
        if first + t < lines {
            if o0 > 0 && count == CHUNK as i32 {
                // Groups of STEP_UNROLL outputs: their ring reads, then their chain.
                for h in 0..CHUNK / STEP_UNROLL {
                    let o1 = o0 + (STEP_UNROLL * h) as i32;
                    let mut enter = [cval; STEP_UNROLL];
                    let mut leave = [cval; STEP_UNROLL];
                    crate::unroll!(STEP_UNROLL, |j| {
                        enter[j] = at(o1 + j as i32 + after);
                        leave[j] = at(o1 + j as i32 - before - 1);
                    });
                    crate::unroll!(STEP_UNROLL, |j| {
                        acc = acc.slide(term(enter[j]), term(leave[j]));
                        put(o1 + j as i32, out(acc));
                    });
                }
            } else {
                for j in 0..count {
                    let o = o0 + j;
                    acc = if o == 0 {
                        (-before..=after).fold(A::ZERO, |s, p| s.plus(term(at(p))))
                    } else {
                        acc.slide(term(at(o + after)), term(at(o - before - 1)))
                    };
                    put(o, out(acc));
                }
            }
        }
        unsafe { sync_threads() };
        for k in 0..ROWS_LINES as usize / WARPS {
            let row = warp + WARPS * k;
            let line = first + row as u32;
            if lane < count && line < lines {
                let o = o0 + lane;
                // SAFETY: o < n on the line; its output was put in the line's slot above.
                unsafe {
                    let v = *ring.add(row * pitch + slot(o - before - 1));
                    y.add((line as u64 * a.n as u64 + o as u64) as usize).write(v);
                }
            }
        }
        // The next step's staging overwrites slots the stores above read.
        unsafe { sync_threads() };
        o0 += CHUNK as i32;
    }
}

/// The last-axis kernel's [`Ring`] of an instance: samples kept as the input for a mean, as
/// (squared) accumulators for the sums.
macro_rules! ring_of {
    (Mean, $i:ty, $a:ty, $cval:expr) => {
        Ring {
            stage: |v: $i| v,
            cval: <$i as CastF64>::from_f64($cval),
            term: |r: $i| <$a as AxisAcc<$i>>::lift(r, false),
        }
    };
    (Sum, $i:ty, $a:ty, $cval:expr) => {
        Ring {
            stage: |v: $i| <$a as AxisAcc<$i>>::lift(v, false),
            cval: <$a as AxisSum>::from_cval($cval),
            term: |r: $a| r,
        }
    };
    (SumSq, $i:ty, $a:ty, $cval:expr) => {
        Ring {
            stage: |v: $i| <$a as AxisAcc<$i>>::lift(v, true),
            cval: <$a as AxisSum>::from_cval($cval),
            term: |r: $a| r,
        }
    };
}

macro_rules! axis_entries {
    ($($name:ident: $op:ident, $i:ty, $a:ty;)*) => {$(
        /// Axis pass `
        #[doc = stringify!($op)]
        /// ` of
        #[doc = stringify!($i)]
        /// ` in `
        #[doc = stringify!($a)]
        /// ` along a strided axis, and (`rows`) along the last axis.
        pub mod $name {
            use super::*;
            type Out = crate::axis_out_type!($op, $i, $a);

            fn out(size: u32) -> impl Fn($a) -> Out {
                move |s: $a| match AxisOp::$op {
                    // scipy writes `sum / size` (a division, not a reciprocal's product).
                    AxisOp::Mean => <$i as CastF64>::from_f64(s as f64 / size as f64) as Out,
                    _ => s as Out,
                }
            }

            /// # Safety
            /// As `axis_pass`.
            #[unsafe(export_name = crate::axis_kernel_name!(lines, $op, $i, $a))]
            pub unsafe extern "ptx-kernel" fn lines(x: *const $i, y: *mut Out, a: AxisArgs) {
                unsafe { axis_pass::<$i, $a, _>(x, y, &a, AxisOp::$op, out(a.size)) }
            }

            /// # Safety
            /// As `axis_pass_four`.
            #[unsafe(export_name = crate::axis_kernel_name!(four, $op, $i, $a))]
            pub unsafe extern "ptx-kernel" fn four(x: *const $i, y: *mut Out, a: AxisArgs) {
                unsafe { axis_pass_four::<$i, $a, _>(x, y, &a, AxisOp::$op, out(a.size)) }
            }

            crate::launch_bounds!(crate::axis_kernel_name!(rows, $op, $i, $a), 64, rows_min_blocks!($op));
            /// # Safety
            /// As `axis_rows`.
            #[unsafe(export_name = crate::axis_kernel_name!(rows, $op, $i, $a))]
            pub unsafe extern "ptx-kernel" fn rows(x: *const $i, y: *mut Out, a: AxisArgs) {
                unsafe { axis_rows::<$i, $a, Out>(x, y, &a, ring_of!($op, $i, $a, a.cval), out(a.size)) }
            }
        }
    )*};
}
crate::for_each_axis_instance!(axis_entries);

/// Mean and population variance of every box from its sums and squares ([`moments`]).
///
/// # Safety
/// The four buffers hold `a.len` elements; one thread per element.
#[inline(always)]
unsafe fn box_moments<S: Acc, Q: Acc>(
    s: *const S,
    q: *const Q,
    float: bool,
    a: &MomentsArgs,
    mut write: impl FnMut(usize, f64, f64),
) {
    let i = global_thread_idx();
    if i >= a.len {
        return;
    }
    let i = i as usize;
    // SAFETY: i < len.
    let (sum, squares) = unsafe { (*s.add(i), *q.add(i)) };
    let (mean, variance) = moments(sum, squares, float, a.samples, a.inv_n, a.inv_n2);
    write(i, mean, variance);
}

macro_rules! moments_entries {
    ($($name:ident: $s:ty, $q:ty, $f:ty, $float:literal;)*) => {$(
        /// Box moments into `
        #[doc = stringify!($f)]
        /// `.
        ///
        /// # Safety
        /// As `box_moments`.
        #[unsafe(export_name = crate::axis_moments_name!($s, $q, $f))]
        pub unsafe extern "ptx-kernel" fn $name(s: *const $s, q: *const $q, mean: *mut $f, var: *mut $f, a: MomentsArgs) {
            // SAFETY: i < len for both outputs.
            unsafe {
                box_moments(s, q, $float, &a, |i, m, v| {
                    mean.add(i).write(m as $f);
                    var.add(i).write(v as $f);
                })
            }
        }
    )*};
}

crate::for_each_axis_moments!(moments_entries);
