//! Pinned staging of the device set's host transfers (`scatter`, `gather`).
//!
//! A copy between pageable memory (an `ndarray`) and a device goes through the driver's own
//! staging, one synchronous piece at a time on the calling thread. Here each device keeps two
//! page-locked buffers and pipelines a transfer through them in chunks: while the copy engine
//! moves chunk `i` between one buffer and the device, every core copies chunk `i + 1` between the
//! other buffer and the array (rayon). The host copy and the DMA overlap, and the host copy runs
//! on all cores instead of one thread per device.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaEvent, sys};
use rayon::prelude::*;

use crate::error::Result;
use crate::gpu::Gpu;

/// Bytes of each of a device's two staging buffers (64 MiB of pinned memory per device, allocated
/// on its first staged transfer and freed with the set).
pub(super) const STAGE_BYTES: usize = 32 << 20;
/// Transfers below this many bytes go straight through the driver (the pipeline's events and
/// the cores' wake-up would cost more than they save).
pub(super) const STAGED_MIN: usize = 1 << 20;
/// Pieces each core copies at a time.
const PIECE: usize = 1 << 18;

/// Page-locked host memory (`cuMemAllocHost`) of one context.
struct HostBuf {
    ptr: *mut u8,
}

// SAFETY: page-locked host memory is plain memory, usable from any thread; the staging's mutex
// gives one transfer at a time access to it.
unsafe impl Send for HostBuf {}

impl Drop for HostBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by `cuMemAllocHost_v2`; no copy uses it any more (every transfer
        // synchronizes before it returns the buffers).
        unsafe {
            let _ = sys::cuMemFreeHost(self.ptr as *mut c_void);
        }
    }
}

/// A device's two staging buffers.
pub(super) struct Staging {
    /// The context they were allocated in, current while they are freed.
    ctx: Arc<CudaContext>,
    bufs: [HostBuf; 2],
}

impl Drop for Staging {
    fn drop(&mut self) {
        // The buffers (dropped after this) free in their own context.
        let _ = self.ctx.bind_to_thread();
    }
}

impl Staging {
    /// Allocates the buffers in `gpu`'s context.
    pub(super) fn new(gpu: &Gpu) -> Result<Staging> {
        gpu.context().bind_to_thread()?;
        let alloc = || -> Result<HostBuf> {
            let mut p: *mut c_void = std::ptr::null_mut();
            // SAFETY: an out-pointer for a fresh allocation of STAGE_BYTES.
            unsafe { sys::cuMemAllocHost_v2(&mut p, STAGE_BYTES).result()? };
            Ok(HostBuf { ptr: p as *mut u8 })
        };
        Ok(Staging {
            ctx: gpu.context().clone(),
            bufs: [alloc()?, alloc()?],
        })
    }

    /// The chunk size for a transfer of `len` bytes: at least 8 chunks (so the pipeline fills),
    /// at most a buffer, whole pieces.
    fn chunk(len: usize) -> usize {
        (len / 8).next_multiple_of(PIECE).clamp(PIECE, STAGE_BYTES)
    }

    /// Copies `src` to the device address `dst` on `gpu`'s stream; returns when it is there.
    ///
    /// # Safety
    /// `dst` addresses `src.len()` writable bytes of `gpu`'s context.
    pub(super) unsafe fn upload(&mut self, gpu: &Gpu, src: &[u8], dst: sys::CUdeviceptr) -> Result<()> {
        gpu.context().bind_to_thread()?;
        let chunk = Self::chunk(src.len());
        let mut done: [Option<CudaEvent>; 2] = [None, None];
        for (i, piece) in src.chunks(chunk).enumerate() {
            let buf = &self.bufs[i % 2];
            if let Some(e) = done[i % 2].take() {
                e.synchronize()?;
            }
            // SAFETY: the buffer holds STAGE_BYTES ≥ chunk bytes, and its last DMA is complete.
            unsafe { par_copy(piece.as_ptr(), buf.ptr, piece.len()) };
            // SAFETY: `dst + i · chunk` and the piece's length lie in the caller's range; the
            // buffer stays untouched until the event below completes.
            unsafe {
                sys::cuMemcpyHtoDAsync_v2(
                    dst + (i * chunk) as u64,
                    buf.ptr as *const c_void,
                    piece.len(),
                    gpu.stream().cu_stream(),
                )
                .result()?
            };
            done[i % 2] = Some(gpu.stream().record_event(None)?);
        }
        gpu.synchronize()
    }

    /// Copies the `len` device bytes at `src` to the host address `dst` after the work enqueued
    /// on `gpu`'s stream; returns when they are there. `dst` may be uninitialized memory (raw
    /// copies; each core faults in the pages it writes).
    ///
    /// # Safety
    /// `src` addresses `len` readable bytes of `gpu`'s context, written by work ordered before
    /// `gpu`'s stream's current position; `dst` addresses `len` writable bytes no one else uses.
    pub(super) unsafe fn download(&mut self, gpu: &Gpu, src: sys::CUdeviceptr, dst: *mut u8, len: usize) -> Result<()> {
        gpu.context().bind_to_thread()?;
        let chunk = Self::chunk(len);
        let count = len.div_ceil(chunk);
        let stream = gpu.stream();
        // Enqueues the DMA of chunk `i` into buffer `i % 2` and returns its event.
        let fetch = |i: usize| -> Result<CudaEvent> {
            let n = chunk.min(len - i * chunk);
            // SAFETY: the chunk lies in the caller's range; the buffer holds n bytes and no host
            // copy reads it until the event completes (the caller waits for it).
            unsafe {
                sys::cuMemcpyDtoHAsync_v2(
                    self.bufs[i % 2].ptr as *mut c_void,
                    src + (i * chunk) as u64,
                    n,
                    stream.cu_stream(),
                )
                .result()?
            };
            Ok(stream.record_event(None)?)
        };
        let mut pending: [Option<CudaEvent>; 2] = [Some(fetch(0)?), if count > 1 { Some(fetch(1)?) } else { None }];
        for i in 0..count {
            if let Some(e) = pending[i % 2].take() {
                e.synchronize()?;
            }
            // SAFETY: the buffer's DMA is complete; chunk `i` of the caller's range.
            unsafe { par_copy(self.bufs[i % 2].ptr, dst.add(i * chunk), chunk.min(len - i * chunk)) };
            if i + 2 < count {
                pending[i % 2] = Some(fetch(i + 2)?);
            }
        }
        Ok(())
    }
}

/// Copies `n` bytes from `from` to `to` in pieces on every core (raw copies: `to` may be
/// uninitialized memory, which each core faults in as it writes).
///
/// # Safety
/// Both ranges are valid for `n` bytes and do not overlap; no one else writes them meanwhile.
unsafe fn par_copy(from: *const u8, to: *mut u8, n: usize) {
    // Addresses travel to rayon's threads as integers.
    let (from, to) = (from as usize, to as usize);
    (0..n.div_ceil(PIECE)).into_par_iter().for_each(|k| {
        let at = k * PIECE;
        // SAFETY: piece k of both ranges (clipped to n); pieces are disjoint.
        unsafe { std::ptr::copy_nonoverlapping((from + at) as *const u8, (to + at) as *mut u8, PIECE.min(n - at)) };
    });
}

impl super::Gpus {
    /// Runs `f` with the staging buffers of the device at position `i` (allocated on first use;
    /// one transfer per device at a time).
    pub(super) fn with_staging<R>(&self, i: usize, f: impl FnOnce(&mut Staging) -> Result<R>) -> Result<R> {
        let mut slot = self.staging[i].lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(Staging::new(&self.gpus[i])?);
        }
        f(slot.as_mut().expect("allocated above"))
    }
}
