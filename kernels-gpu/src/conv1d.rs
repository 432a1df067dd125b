//! The 1D filter ladder: correlation of each row with `taps` weights (see `abi::conv1d` for the
//! formula and the border modes). Each step removes one bottleneck of the one before:
//!
//! | step | taps from | samples from | outputs/thread | removes |
//! |---|---|---|---|---|
//! | global taps | global memory | global memory | 1 | (the tutorial's first kernel) |
//! | constant taps | constant bank | global memory | 1 | a tap load per thread per tap: the warp reads one broadcast tap |
//! | shared tile | constant bank | shared memory | 1 | `taps` global reads per output: each sample is read from DRAM/L2 once per block |
//! | register blocked | constant bank | 16-byte loads + sliding registers | 4 (f64) / 8 (f32) | the shared round trip and barrier; scalar 8-byte accesses |
//! | register blocked, shared | constant bank | 16-byte loads, halo slides from a padded shared tile | 4 (f64) / 8 (f32) | uncoalesced L1 halo loads (long filters) |
//! | register blocked, vector | constant bank | 16-byte loads (f64: from a padded shared tile; f32: from L1), whole tap chunks | 8 | scalar loads, window shifts and tap tails |
//!
//! All steps share the per-output border handling ([`correlate_point`]): an output whose window
//! lies inside its row reads it directly, one whose window crosses an end maps every position
//! through [`border_index`](crate::abi::border::border_index). Products are always formed (a constant border multiplies its value
//! by the tap), so non-finite taps propagate to every output as in scipy and PyTorch.
//! Accumulation is `fma` in the element type.

use crate::abi::conv1d::{
    CONV1D_BLOCK, Conv1dArgs, VECTOR_WINDOW_OUTPUTS, register_block_outputs, vector_window_chunks,
    vector_window_from_shared, vector_window_phys,
};
use crate::device::*;

/// A filter element type (f32, f64): arithmetic, loads and 16-byte packing.
pub trait Sample: Vec16 {
    const ZERO: Self;
    /// `a · b + c`, rounded once.
    fn fma(a: Self, b: Self, c: Self) -> Self;
    /// Plain global load (`ld.global`).
    ///
    /// # Safety
    /// `p` must be a valid, aligned pointer into global memory.
    unsafe fn load(p: *const Self) -> Self;
    /// Load through the read-only data cache (`ld.global.nc`).
    ///
    /// # Safety
    /// As [`Sample::load`], and no thread of the kernel writes `*p`.
    unsafe fn load_nc(p: *const Self) -> Self;
    /// The tap at byte `offset` of the constant bank (caller keeps it inside the bank, aligned).
    fn constant_tap_at(offset: u64) -> Self;
    /// Tap `k` of the constant bank (caller keeps `k` inside the bank).
    #[inline(always)]
    fn constant_tap(k: u32) -> Self {
        Self::constant_tap_at(k as u64 * core::mem::size_of::<Self>() as u64)
    }
    /// Packs `LANES` values, `lane(0)` first in memory, into the four words of a 16-byte store.
    fn pack(lane: impl FnMut(usize) -> Self) -> [u32; 4];
    /// Value `l < LANES` of the four words of a 16-byte load (inverse of [`Sample::pack`]).
    fn unpack(words: [u32; 4], l: usize) -> Self;
}

impl Sample for f32 {
    const ZERO: f32 = 0.0;
    #[inline(always)]
    fn fma(a: f32, b: f32, c: f32) -> f32 {
        core::intrinsics::fmaf32(a, b, c)
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> f32 {
        // SAFETY: forwarded to the caller.
        unsafe { p.read() }
    }
    #[inline(always)]
    unsafe fn load_nc(p: *const f32) -> f32 {
        f32::from_bits(crate::load_nc!(p as *const u32, u32))
    }
    #[inline(always)]
    fn constant_tap_at(offset: u64) -> f32 {
        f32::from_bits(bank_u32(offset))
    }
    #[inline(always)]
    fn pack(lane: impl FnMut(usize) -> f32) -> [u32; 4] {
        f32x4_words(lane)
    }
    #[inline(always)]
    fn unpack(words: [u32; 4], l: usize) -> f32 {
        f32::from_bits(words[l])
    }
}

impl Sample for f64 {
    const ZERO: f64 = 0.0;
    #[inline(always)]
    fn fma(a: f64, b: f64, c: f64) -> f64 {
        core::intrinsics::fmaf64(a, b, c)
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> f64 {
        // SAFETY: forwarded to the caller.
        unsafe { p.read() }
    }
    #[inline(always)]
    unsafe fn load_nc(p: *const f64) -> f64 {
        f64::from_bits(crate::load_nc!(p as *const u64, u64))
    }
    #[inline(always)]
    fn constant_tap_at(offset: u64) -> f64 {
        f64::from_bits(bank_u64(offset))
    }
    #[inline(always)]
    fn pack(mut lane: impl FnMut(usize) -> f64) -> [u32; 4] {
        let (a, b) = (lane(0).to_bits(), lane(1).to_bits());
        [a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32]
    }
    #[inline(always)]
    fn unpack(words: [u32; 4], l: usize) -> f64 {
        f64::from_bits(words[2 * l] as u64 | (words[2 * l + 1] as u64) << 32)
    }
}

/// Where a kernel reads tap `k` from.
pub trait Taps<T> {
    fn get(&self, k: u32) -> T;
}

/// Taps in a global-memory buffer of `args.taps` elements (plain loads, as the tutorial).
#[derive(Clone, Copy)]
pub struct GlobalTaps<T>(pub *const T);

impl<T: Sample> Taps<T> for GlobalTaps<T> {
    #[inline(always)]
    fn get(&self, k: u32) -> T {
        // SAFETY: the host passes a buffer of `args.taps` taps and callers keep k < args.taps.
        unsafe { T::load(self.0.add(k as usize)) }
    }
}

/// Taps at offset 0 of the module's constant bank, filled by the host before the launch. The whole warp reads
/// the same tap at once: one constant-cache broadcast instead of 32 loads.
#[derive(Clone, Copy)]
pub struct ConstantTaps;

impl<T: Sample> Taps<T> for ConstantTaps {
    #[inline(always)]
    fn get(&self, k: u32) -> T {
        T::constant_tap(k)
    }
}

/// `(row, column)` of flat output index `o`; 32-bit division whenever it suffices (64-bit
/// division is a long emulated sequence), none for a single row.
#[inline(always)]
fn split<T>(o: u64, a: &Conv1dArgs<T>) -> (u64, u64) {
    if a.rows == 1 {
        (0, o)
    } else if o <= u32::MAX as u64 && a.n <= u32::MAX as u64 {
        let (o, n) = (o as u32, a.n as u32);
        ((o / n) as u64, (o % n) as u64)
    } else {
        (o / a.n, o % a.n)
    }
}

/// Output `i` of the row at `row`: `Σ_k t[k] · x̃[i + k − anchor]`, in tap order.
///
/// # Safety
/// `row` must hold `a.n` samples and `i < a.n`.
#[inline(always)]
unsafe fn correlate_point<T: Sample>(row: *const T, i: u64, a: &Conv1dArgs<T>, taps: &impl Taps<T>) -> T {
    let start = i as i64 - a.anchor as i64;
    let mut acc = T::ZERO;
    // SAFETY: forwarded.
    unsafe {
        BorderedRow::new(row, a.n, a.border, a.cval).for_each_with(
            start,
            a.taps,
            |p| T::load(p),
            |k, v| acc = T::fma(taps.get(k), v, acc),
        )
    };
    acc
}

/// Global-taps and constant-taps steps: thread `o` computes flat output `o`.
///
/// # Safety
/// `x` and `y` hold `rows · n` elements; the grid covers them with one thread each.
#[inline(always)]
pub unsafe fn one_per_thread<T: Sample>(x: *const T, y: *mut T, a: Conv1dArgs<T>, taps: impl Taps<T>) {
    let o = global_thread_idx();
    if o >= a.n * a.rows {
        return;
    }
    let (row, i) = split(o, &a);
    // SAFETY: o < rows · n, so row < rows and i < n.
    unsafe {
        let v = correlate_point(x.add((row * a.n) as usize), i, &a, &taps);
        y.add(o as usize).write(v);
    }
}

/// Shared-tile step. Block `b` computes outputs `[256·t, 256·t + 256)` of row `r`
/// (`b = r · tiles_per_row + t`). Its threads first stage the tile's `256 + taps − 1` input
/// samples (halo included, border applied) in shared memory with coalesced loads, then each
/// thread reads its window from shared memory: every input sample leaves global memory once per
/// block instead of once per tap.
///
/// # Safety
/// `x` and `y` hold `rows · n` elements; grid = `rows · ⌈n / 256⌉` blocks of 256 threads; dynamic
/// shared memory holds `256 + taps − 1` elements; the constant bank holds the taps.
#[inline(always)]
pub unsafe fn shared_tile<T: Sample>(x: *const T, y: *mut T, a: Conv1dArgs<T>) {
    let block = CONV1D_BLOCK as u64;
    let tiles = a.n.div_ceil(block);
    let b = block_idx() as u64;
    let (row, tile) = (b / tiles, b % tiles);
    // SAFETY: row < rows by the grid shape.
    let row_ptr = unsafe { x.add((row * a.n) as usize) };
    let tile_start = tile * block;
    let first = tile_start as i64 - a.anchor as i64;
    let len = CONV1D_BLOCK + a.taps - 1;
    // SAFETY: the host sized dynamic shared memory to `len` elements; the row holds n samples.
    let tile_mem: *mut T = unsafe { dynamic_shared() };
    unsafe {
        BorderedRow::new(row_ptr, a.n, a.border, a.cval)
            .stage(first, len, tile_mem, thread_idx(), CONV1D_BLOCK, |p| T::load(p))
    };
    // SAFETY: every thread of the block reaches this barrier (no early return above).
    unsafe { sync_threads() };
    let t = thread_idx();
    let i = tile_start + t as u64;
    if i < a.n {
        let mut acc = T::ZERO;
        for k in 0..a.taps {
            // SAFETY: t + k < 256 + taps − 1 = len, written before the barrier.
            let s = unsafe { tile_mem.add((t + k) as usize).read() };
            acc = T::fma(ConstantTaps.get(k), s, acc);
        }
        // SAFETY: i < n, row < rows.
        unsafe { y.add((row * a.n + i) as usize).write(acc) };
    }
}

/// Register-blocked step: thread `t` computes the `P` consecutive flat outputs starting at `t·P`
/// (`P · size_of::<T>()` = 32 bytes, two 16-byte vectors).
///
/// Interior chunks (the whole window inside one row): the `P` samples under the outputs arrive in
/// two 16-byte read-only loads and stay in registers; [`slide`] then moves a window of `P`
/// registers over the taps, one scalar read-only (L1-cached) load per step. The results leave in
/// two 16-byte stores. Chunks that touch a row end or straddle two rows fall back to
/// [`correlate_point`] per output.
///
/// # Safety
/// `x` and `y` hold `rows · n` elements and are 16-byte aligned; the grid has at least
/// `⌈rows · n / P⌉` threads; `taps` holds the taps.
#[inline(always)]
pub unsafe fn register_blocked<T: Sample, const P: usize, const GROUPED: bool>(
    x: *const T,
    y: *mut T,
    a: Conv1dArgs<T>,
    taps: impl Taps<T>,
) {
    const { assert!(P as u64 == register_block_outputs(core::mem::size_of::<T>())) };
    let total = a.n * a.rows;
    let first = global_thread_idx() * P as u64;
    if first >= total {
        return;
    }
    let (_, i) = split(first, &a);
    if i >= a.anchor as u64 && i + P as u64 + a.right() as u64 <= a.n {
        // SAFETY: the window [first − anchor, first + P + right) lies inside one row; `first` is
        // a multiple of P, so `x + first` and `y + first` are 32-byte aligned.
        unsafe {
            let core = load_core::<T, P>(x.add(first as usize));
            let after = |d: u32| T::load_nc(x.add((first + P as u64 + d as u64) as usize));
            let before = |d: u32| T::load_nc(x.add((first - d as u64) as usize));
            store_core::<T, P>(
                y.add(first as usize),
                &slide::<T, P, GROUPED>(core, &a, &taps, after, before),
            );
        }
    } else {
        // SAFETY: forwarded.
        unsafe { per_output::<T, P>(x, y, &a, &taps, first) };
    }
}

/// Register blocking over a shared-memory tile: as [`register_blocked`], but the block first
/// stages its `256·P` samples and the `taps − 1` halo in shared memory (the core from the
/// threads' 16-byte loads, the halo by coalesced scalar loads), so the sliding window's extra
/// samples come from shared memory instead of uncoalesced L1 loads. The tile is padded by one
/// element every `P` (physical index `j + j/P`), which spreads the threads' stride-`P` reads over
/// all banks. Blocks whose span or halo leaves its row take the per-thread path of
/// [`register_blocked`] (a block-uniform choice, so no thread skips the barrier).
///
/// # Safety
/// As [`register_blocked`] with the constant bank holding the taps; dynamic shared memory holds
/// [`Conv1dStep::shared_bytes`](crate::abi::conv1d::Conv1dStep::shared_bytes) bytes.
#[inline(always)]
pub unsafe fn register_blocked_shared<T: Sample, const P: usize>(x: *const T, y: *mut T, a: Conv1dArgs<T>) {
    let span = CONV1D_BLOCK as u64 * P as u64;
    let b0 = block_idx() as u64 * span;
    let (_, i0) = split(b0.min(a.n * a.rows - 1), &a);
    let (anchor, right) = (a.anchor as u64, a.right() as u64);
    if !(i0 >= anchor && i0 + span + right <= a.n) {
        // SAFETY: forwarded (the same grid and outputs as the register-blocked step).
        return unsafe { register_blocked::<T, P, true>(x, y, a, ConstantTaps) };
    }
    let phys = |j: u64| (j + j / P as u64) as usize;
    let t = thread_idx() as u64;
    let first = b0 + t * P as u64;
    // SAFETY: the block's window [b0 − anchor, b0 + span + right) lies inside one row; the
    // host sized shared memory for `phys(span + taps − 2) + 1` elements.
    unsafe {
        let tile: *mut T = dynamic_shared();
        let core = load_core::<T, P>(x.add(first as usize));
        for (c, &v) in core.iter().enumerate() {
            tile.add(phys(anchor + t * P as u64 + c as u64)).write(v);
        }
        let mut j = t;
        while j < anchor {
            tile.add(phys(j)).write(T::load(x.add((b0 - anchor + j) as usize)));
            j += CONV1D_BLOCK as u64;
        }
        let mut j = t;
        while j < right {
            tile.add(phys(anchor + span + j))
                .write(T::load(x.add((b0 + span + j) as usize)));
            j += CONV1D_BLOCK as u64;
        }
        sync_threads();
        let base = anchor + t * P as u64;
        let after = |d: u32| tile.add(phys(base + P as u64 + d as u64)).read();
        let before = |d: u32| tile.add(phys(base - d as u64)).read();
        store_core::<T, P>(
            y.add(first as usize),
            &slide::<T, P, true>(core, &a, &ConstantTaps, after, before),
        );
    }
}

/// Register blocking over a vector-read window: thread `t` computes the `P` consecutive flat
/// outputs from `t·P` ([`VECTOR_WINDOW_OUTPUTS`]) and reads its window as 16-byte vectors, and the
/// tap loop runs whole chunks of `P` taps — the next `P` samples in one go, `P × P` fused
/// multiply-adds on statically indexed registers, the window moving by renaming. Compared with
/// [`register_blocked_shared`], removes the scalar loads, the padded-index arithmetic per load and
/// the tail loops.
///
/// Where the window comes from depends on the sample size ([`vector_window_from_shared`]):
/// - 8-byte samples: the block stages `x[b0 − anchor ..][..span + P·chunks]` with 16-byte global
///   loads into a shared tile padded by 16 bytes every `P` elements ([`vector_window_phys`]); the
///   threads' 16-byte shared loads are then free of bank conflicts and use whole wavefronts
///   (from L1, a warp's loads 64 bytes apart would use a quarter of each).
/// - 4-byte samples: each thread loads its window straight from global memory (read-only, L1),
///   no staging and no barrier. The loads start on the 16-byte boundary `skew` samples before the
///   window, so the taps run shifted by `skew` and the first chunk's first `skew` slots are masked.
///   Its launch bounds ask for 6 blocks per SM (40 registers, 48 warps): the kernel is
///   issue-bound, and the extra warps fill cycles in which no warp was eligible.
///
/// Masked slots (the first chunk's skew, the last chunk's tail) are skipped by a uniform branch,
/// never multiplied by zero, so an infinite sample cannot turn into NaN. Blocks whose loads would
/// leave their row compute each output on its own with border handling.
///
/// # Safety
/// As [`register_blocked`] with the constant bank holding the taps; dynamic shared memory holds
/// [`Conv1dStep::shared_bytes`](crate::abi::conv1d::Conv1dStep::shared_bytes) bytes.
#[inline(always)]
pub unsafe fn register_blocked_vector<T: Sample, const P: usize>(x: *const T, y: *mut T, a: Conv1dArgs<T>) {
    const { assert!(P as u32 == VECTOR_WINDOW_OUTPUTS) };
    let size = core::mem::size_of::<T>();
    let from_shared = vector_window_from_shared(size);
    let lanes = T::LANES as usize;
    let span = CONV1D_BLOCK as u64 * P as u64;
    let b0 = block_idx() as u64 * span;
    let total = a.n * a.rows;
    let (_, i0) = split(b0.min(total - 1), &a);
    let anchor = a.anchor as u64;
    // Loads start `skew` elements before x[b0 − anchor], on a 16-byte boundary (b0 is a multiple
    // of the lanes). Through the tile, element k is x[b0 − anchor + k] and the skew disappears;
    // from L1 the taps run `skew` slots late.
    let skew = (lanes - a.anchor as usize % lanes) % lanes;
    let shift = if from_shared { 0 } else { skew };
    let chunks = vector_window_chunks(a.taps + shift as u32) as usize;
    // The block's window slots: `vector_window_tile(taps + shift)`, the tile the host sizes.
    let len = span as usize + P * chunks;
    let vectors = (len + skew).div_ceil(lanes) as u64;
    let inside = i0 >= anchor + skew as u64 && i0 - anchor - skew as u64 + vectors * lanes as u64 <= a.n;
    if !inside {
        // SAFETY: forwarded (the grid covers every output, P per thread).
        return unsafe { per_output::<T, P>(x, y, &a, &ConstantTaps, global_thread_idx() * P as u64) };
    }
    let t = thread_idx() as usize;
    // SAFETY: the loaded vectors lie inside the block's row (`inside`) and are 16-byte aligned;
    // for the tile, the host sized shared memory for `phys(len)` elements and every thread
    // reaches the barrier.
    unsafe {
        let src = x.add((b0 - anchor - skew as u64) as usize) as *const [u32; 4];
        let tile: *mut T = dynamic_shared();
        let phys = |k: usize| vector_window_phys(k, size);
        if from_shared {
            let mut v = t;
            while v < vectors as usize {
                let words = load_nc_v4(src.add(v));
                for l in 0..lanes {
                    let k = (v * lanes + l).wrapping_sub(skew);
                    if k < len {
                        tile.add(phys(k)).write(T::unpack(words, l));
                    }
                }
                v += CONV1D_BLOCK as usize;
            }
            sync_threads();
        }
        // Slots k, k + 1, .. of this thread's window (k a multiple of P). The tap loop is written
        // out here rather than in a helper taking `read`: as a separate function LLVM shaped the
        // loop before seeing the tile's constants, and the f64 kernel held 74 registers, not 56.
        let base = t * P;
        let own = src.add(base / lanes);
        let read = |k: usize| {
            gather::<T, P>(|v| {
                if from_shared {
                    load_shared_v4(tile.add(phys(base + k + v * lanes)) as *const [u32; 4])
                } else {
                    load_nc_v4(own.add((k + v * lanes) / lanes))
                }
            })
        };
        // Tap c·P + m − shift as the chunk's byte base plus a constant offset, so that each tap
        // is one constant load with an immediate offset (a u32 tap index cost three uniform
        // instructions per tap). Slots before tap 0 wrap, but are masked and never loaded.
        let tap = |c: usize, m: usize| {
            let chunk = ((c * P) as u64).wrapping_sub(shift as u64).wrapping_mul(size as u64);
            T::constant_tap_at(chunk.wrapping_add((m * size) as u64))
        };
        let last = a.taps as usize + shift - (chunks - 1) * P; // slots of the last chunk
        let mut w = read(0);
        let mut acc = [T::ZERO; P];
        let mut first_full = 0;
        if shift > 0 {
            // The first chunk, masked from below (and from above when it is also the last).
            let next = read(P);
            let hi = if chunks == 1 { last } else { P };
            chunk_fma::<T, P, true>(&mut acc, &w, &next, |m| tap(0, m), shift, hi);
            w = next;
            first_full = 1;
        }
        for c in first_full..chunks {
            let next = read((c + 1) * P);
            if c + 1 < chunks || last == P {
                chunk_fma::<T, P, false>(&mut acc, &w, &next, |m| tap(c, m), 0, P);
            } else {
                chunk_fma::<T, P, true>(&mut acc, &w, &next, |m| tap(c, m), 0, last);
            }
            w = next;
        }
        store_core::<T, P>(y.add(b0 as usize + base), &acc);
    }
}

/// One chunk of `P` taps over a sliding register window: tap `tap(m)` for `lo ≤ m < hi` (all `P`
/// unless `MASKED`), output `j` taking sample `j + m` of the pair `w ++ next`. Every index is
/// static, so the window moves by register renaming.
#[inline(always)]
fn chunk_fma<T: Sample, const P: usize, const MASKED: bool>(
    acc: &mut [T; P],
    w: &[T; P],
    next: &[T; P],
    tap: impl Fn(usize) -> T,
    lo: usize,
    hi: usize,
) {
    crate::unroll!(P, |m| {
        if !MASKED || (lo <= m && m < hi) {
            let t = tap(m);
            crate::unroll!(P, |j| {
                let r = j + m;
                acc[j] = T::fma(t, if r < P { w[r] } else { next[r - P] }, acc[j]);
            });
        }
    });
}

/// The sliding register window: `P` outputs from their `core` samples, `after(d)` = the sample
/// `d` past the core and `before(d)` = the sample `d` before it. The window slides right over the
/// taps right of the anchor, then, restarting from the core, left over the taps left of it.
/// `GROUPED` takes whole groups of `P` taps at once (long filters); without it every tap shifts
/// the window, which measured faster for 5 taps (fewer registers, simpler code).
#[inline(always)]
fn slide<T: Sample, const P: usize, const GROUPED: bool>(
    core: [T; P],
    a: &Conv1dArgs<T>,
    taps: &impl Taps<T>,
    after: impl Fn(u32) -> T,
    before: impl Fn(u32) -> T,
) -> [T; P] {
    let mut acc = [T::ZERO; P];
    sweep_right::<T, P, GROUPED>(&mut acc, core, a, taps, after);
    sweep_left::<T, P, GROUPED>(&mut acc, core, a, taps, before);
    acc
}

/// Taps `anchor + e`, `e = 0..=right`, where output `j` takes the sample `j + e` (relative to the
/// core). Whole groups of `P` taps read `P − 1` new samples at once into a second register set
/// and index the pair statically, so the window moves by renaming instead of `P − 1` register
/// copies per tap (the copies made the long-filter kernels issue-bound); the last `< P` taps shift.
#[inline(always)]
fn sweep_right<T: Sample, const P: usize, const GROUPED: bool>(
    acc: &mut [T; P],
    core: [T; P],
    a: &Conv1dArgs<T>,
    taps: &impl Taps<T>,
    after: impl Fn(u32) -> T,
) {
    let (right, p) = (a.right(), P as u32);
    let mut w = core; // samples e .. e + P
    let mut e = 0;
    while GROUPED && e + p <= right + 1 {
        let mut next = [T::ZERO; P]; // samples e + P .. e + 2P
        crate::unroll!(P - 1, |k| {
            next[k] = after(e + k as u32);
        });
        if e + p <= right {
            next[P - 1] = after(e + p - 1);
        }
        chunk_fma::<T, P, false>(acc, &w, &next, |c| taps.get(a.anchor + e + c as u32), 0, P);
        w = next;
        e += p;
    }
    while e <= right {
        fma_window(acc, taps.get(a.anchor + e), &w);
        if e == right {
            break;
        }
        for j in 0..P - 1 {
            w[j] = w[j + 1];
        }
        w[P - 1] = after(e);
        e += 1;
    }
}

/// Taps `anchor − s`, `s = 1..=anchor`, where output `j` takes the sample `j − s`: the mirror of
/// [`sweep_right`] (groups of `P` taps read `P` new samples at once).
#[inline(always)]
fn sweep_left<T: Sample, const P: usize, const GROUPED: bool>(
    acc: &mut [T; P],
    core: [T; P],
    a: &Conv1dArgs<T>,
    taps: &impl Taps<T>,
    before: impl Fn(u32) -> T,
) {
    let p = P as u32;
    let mut w = core; // samples 1 − s .. 1 − s + P
    let mut s = 1;
    while GROUPED && s + p - 1 <= a.anchor {
        let mut prev = [T::ZERO; P]; // prev[k] = sample −s − k
        crate::unroll!(P, |k| {
            prev[k] = before(s + k as u32);
        });
        crate::unroll!(P, |c| {
            let t = taps.get(a.anchor - s - c as u32);
            crate::unroll!(P, |j| {
                let v = if j > c { w[j - c - 1] } else { prev[c - j] };
                acc[j] = T::fma(t, v, acc[j]);
            });
        });
        for i in 0..P {
            w[i] = prev[P - 1 - i];
        }
        s += p;
    }
    while s <= a.anchor {
        for j in (1..P).rev() {
            w[j] = w[j - 1];
        }
        w[0] = before(s);
        fma_window(acc, taps.get(a.anchor - s), &w);
        s += 1;
    }
}

/// The `P` outputs from `first` one at a time, with border handling (chunks at row ends).
///
/// # Safety
/// `x` and `y` hold `rows · n` elements.
#[inline(always)]
unsafe fn per_output<T: Sample, const P: usize>(
    x: *const T,
    y: *mut T,
    a: &Conv1dArgs<T>,
    taps: &impl Taps<T>,
    first: u64,
) {
    let total = a.n * a.rows;
    for j in 0..P as u64 {
        let o = first + j;
        if o < total {
            let (row, i) = split(o, a);
            // SAFETY: o < rows · n.
            unsafe {
                let v = correlate_point(x.add((row * a.n) as usize), i, a, taps);
                y.add(o as usize).write(v);
            }
        }
    }
}

/// `acc[j] += t · w[j]` for the whole register window.
#[inline(always)]
fn fma_window<T: Sample, const P: usize>(acc: &mut [T; P], t: T, w: &[T; P]) {
    for j in 0..P {
        acc[j] = T::fma(t, w[j], acc[j]);
    }
}

/// The `P` samples at `p` through 16-byte read-only loads.
///
/// # Safety
/// `p` is 16-byte aligned, `P` samples readable and not written by the kernel.
#[inline(always)]
unsafe fn load_core<T: Sample, const P: usize>(p: *const T) -> [T; P] {
    // SAFETY: forwarded; (v + 1) · LANES ≤ P.
    gather::<T, P>(|v| unsafe { load_nc_v4(p.add(v * T::LANES as usize) as *const [u32; 4]) })
}

/// `P` samples from the `P / LANES` 16-byte vectors `vector(0), vector(1), ..`, in order.
#[inline(always)]
fn gather<T: Sample, const P: usize>(vector: impl Fn(usize) -> [u32; 4]) -> [T; P] {
    let lanes = T::LANES as usize;
    let mut out = [T::ZERO; P];
    for v in 0..P / lanes {
        let words = vector(v);
        for l in 0..lanes {
            out[v * lanes + l] = T::unpack(words, l);
        }
    }
    out
}

/// Writes `P` samples to `p` with 16-byte stores.
///
/// # Safety
/// `p` is 16-byte aligned with `P` writable samples.
#[inline(always)]
unsafe fn store_core<T: Sample, const P: usize>(p: *mut T, v: &[T; P]) {
    let lanes = T::LANES as usize;
    for j in 0..P / lanes {
        // SAFETY: forwarded; (j + 1) · LANES ≤ P.
        unsafe { store_v4(p.add(j * lanes) as *mut [u32; 4], T::pack(|l| v[j * lanes + l])) };
    }
}

/// Defines the kernel entries of one element type under the contract's names.
macro_rules! conv1d_entries {
    ($($t:ident),*) => {$(
        pub mod $t {
            use super::*;
            type A = Conv1dArgs<$t>;
            const P: usize = register_block_outputs(core::mem::size_of::<$t>()) as usize;

            #[unsafe(export_name = $crate::conv1d_kernel_name!($t, "global_taps"))]
            pub unsafe extern "ptx-kernel" fn global_taps(x: *const $t, y: *mut $t, t: *const $t, a: A) {
                unsafe { one_per_thread(x, y, a, GlobalTaps(t)) }
            }
            #[unsafe(export_name = $crate::conv1d_kernel_name!($t, "constant_taps"))]
            pub unsafe extern "ptx-kernel" fn constant_taps(x: *const $t, y: *mut $t, _t: *const $t, a: A) {
                unsafe { one_per_thread(x, y, a, ConstantTaps) }
            }
            #[unsafe(export_name = $crate::conv1d_kernel_name!($t, "shared_tile"))]
            pub unsafe extern "ptx-kernel" fn shared_tile(x: *const $t, y: *mut $t, _t: *const $t, a: A) {
                unsafe { super::shared_tile(x, y, a) }
            }
            #[unsafe(export_name = $crate::conv1d_kernel_name!($t, "register_blocked"))]
            pub unsafe extern "ptx-kernel" fn register_blocked(x: *const $t, y: *mut $t, _t: *const $t, a: A) {
                unsafe { super::register_blocked::<$t, P, false>(x, y, a, ConstantTaps) }
            }
            #[unsafe(export_name = $crate::conv1d_kernel_name!($t, "register_blocked_shared"))]
            pub unsafe extern "ptx-kernel" fn register_blocked_shared(x: *const $t, y: *mut $t, _t: *const $t, a: A) {
                unsafe { super::register_blocked_shared::<$t, P>(x, y, a) }
            }
            #[unsafe(export_name = $crate::conv1d_kernel_name!($t, "register_blocked_vector"))]
            pub unsafe extern "ptx-kernel" fn register_blocked_vector(x: *const $t, y: *mut $t, _t: *const $t, a: A) {
                unsafe { super::register_blocked_vector::<$t, { VECTOR_WINDOW_OUTPUTS as usize }>(x, y, a) }
            }
            #[unsafe(export_name = $crate::conv1d_kernel_name!($t, "register_blocked_global_taps"))]
            pub unsafe extern "ptx-kernel" fn register_blocked_global_taps(
                x: *const $t, y: *mut $t, t: *const $t, a: A,
            ) {
                unsafe { super::register_blocked::<$t, P, true>(x, y, a, GlobalTaps(t)) }
            }
        }
    )*};
}

crate::for_each_conv1d_type!(conv1d_entries);

// The f32 vector rung is issue-bound (ncu: 0.80 warps issued per scheduler per cycle): at the 42
// registers it takes by itself, 5 blocks (40 warps) fit an SM; 6 blocks cap it at 40 registers,
// without spills, and give the schedulers 48 warps. H100, 2^27 x 31 taps, one device call:
// 420.4 -> 406.3 us. f64 (56 registers, 4 blocks) keeps its own allocation.
crate::launch_bounds!(crate::conv1d_kernel_name!(f32, "register_blocked_vector"), 256, 6);
