//! Thread, block and grid indices, barriers and fences.

use core::arch::asm;
use core::arch::nvptx;

/// `threadIdx.x`.
#[inline(always)]
pub fn thread_idx() -> u32 {
    // SAFETY: reads a special register; always valid inside a kernel.
    unsafe { nvptx::_thread_idx_x() }
}

/// `blockIdx.x`.
#[inline(always)]
pub fn block_idx() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_idx_x() }
}

/// `blockDim.x`.
#[inline(always)]
pub fn block_dim() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_dim_x() }
}

/// `gridDim.x`.
#[inline(always)]
pub fn grid_dim() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_grid_dim_x() }
}

/// Global linear thread index in 64-bit arithmetic (grids may cover more than 2^32 elements).
#[inline(always)]
pub fn global_thread_idx() -> u64 {
    block_idx() as u64 * block_dim() as u64 + thread_idx() as u64
}

/// Number of threads in the grid, the stride of a grid-stride loop.
#[inline(always)]
pub fn grid_threads() -> u64 {
    grid_dim() as u64 * block_dim() as u64
}

/// Lane index within the warp.
#[inline(always)]
pub fn lane_idx() -> u32 {
    thread_idx() & 31
}

/// Warp index within the block.
#[inline(always)]
pub fn warp_idx() -> u32 {
    thread_idx() >> 5
}

/// Block-wide barrier (`__syncthreads`): orders shared-memory accesses of the block.
///
/// # Safety
/// Every thread of the block must reach the same call (no divergent barrier).
#[inline(always)]
pub unsafe fn sync_threads() {
    // SAFETY: forwarded to the caller.
    unsafe { nvptx::_syncthreads() }
}

/// Block-wide barrier that also ORs a predicate over the block (`__syncthreads_or`,
/// `bar.red.or.pred`): true for every thread when any thread passed true.
///
/// # Safety
/// Every thread of the block must reach the same call (no divergent barrier).
#[inline(always)]
pub unsafe fn sync_threads_or(p: bool) -> bool {
    let r: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "{{ .reg .pred a, o; setp.ne.u32 a, {v}, 0; bar.red.or.pred o, 0, a; selp.u32 {r}, 1, 0, o; }}",
            v = in(reg32) p as u32,
            r = out(reg32) r,
            options(nostack)
        )
    };
    r != 0
}

/// Warp-wide barrier (`__syncwarp()` with a full mask). Since Volta, threads of a warp are
/// scheduled independently: code that exchanges data through shared memory inside a warp needs
/// this between the write and the read, or it races.
///
/// # Safety
/// All 32 lanes of the warp must reach it.
#[inline(always)]
pub unsafe fn sync_warp() {
    // SAFETY: forwarded to the caller.
    unsafe { asm!("bar.warp.sync 0xffffffff;", options(nostack)) }
}

/// The GPU's global nanosecond timer (`%globaltimer`; its resolution is about a microsecond on
/// recent GPUs). Used to hold a stream for a known time, never for results.
#[inline(always)]
pub fn global_timer_ns() -> u64 {
    let t: u64;
    // SAFETY: reading a special register has no memory effects.
    unsafe { asm!("mov.u64 {t}, %globaltimer;", t = out(reg64) t, options(nostack, nomem)) }
    t
}

/// Device-scope acquire-release fence (`__threadfence()`): makes this thread's earlier global
/// writes visible to other blocks before its later writes (used by the last-block-done pattern).
#[inline(always)]
pub fn fence_device() {
    // SAFETY: a fence has no operands and no memory-safety preconditions.
    unsafe { asm!("fence.acq_rel.gpu;", options(nostack)) }
}

/// Aborts the kernel (`trap`): the launch fails with an error the host sees. For states the host
/// promises never to launch into, so a broken promise is an error rather than garbage.
#[inline(always)]
pub fn trap() -> ! {
    // SAFETY: ends the kernel; no memory is touched.
    unsafe { core::arch::nvptx::trap() }
}

/// `⌊n / d⌋` for `n < 1024` and `1 ≤ d ≤ 256` (a block's thread and row counts): a reciprocal
/// (`rcp.approx`), a multiply-add and a truncation, where the integer division by a run-time
/// divisor takes about twenty instructions. `n · rcp(d)` errs by less than `2^-12` (the
/// reciprocal is within 1 ulp), and a quotient's fraction lies at least `1/d ≥ 2^-8` below the
/// next integer, so adding `2^-9` before truncating gives the exact quotient (checked for every
/// `n` and `d` with the reciprocal 3 ulps either way).
#[inline(always)]
pub fn div_small(n: u32, d: u32) -> u32 {
    let r: f32;
    // SAFETY: register-only instruction.
    unsafe {
        core::arch::asm!("rcp.approx.ftz.f32 {r}, {d};", r = out(reg32) r, d = in(reg32) d as f32,
                         options(pure, nomem, nostack));
    }
    // SAFETY: finite, non-negative and below 2^11, so the bare truncation (`cvt.rzi`) is exact
    // (`as` would add the saturation's compares and selects).
    unsafe { (n as f32 * r + 1.0 / 512.0).to_int_unchecked::<u32>() }
}
