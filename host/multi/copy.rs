//! Row copies between the devices of a set and the stream order around them.
//!
//! A copy runs on the destination device's stream. That stream first waits for the source
//! buffer's stream (an event: the rows are written), and afterwards the source's stream waits for
//! the copy (so the source buffer is neither freed nor rewritten under it). `cuStreamWaitEvent`
//! accepts an event of another device, so the order costs two events and never the host's time.

use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaContext, CudaStream, result};

use crate::error::Result;
use crate::gpu::Gpu;

/// A device buffer holding rows of a sharded array: buffer row 0 is global row `first`; the rows
/// `rows` (its core) are the ones it is the source of.
pub(crate) struct RowSource {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub ptr: CUdeviceptr,
    pub first: usize,
    pub rows: Range<usize>,
}

/// Copies the global rows `rows` (cyclically: row `r` is row `r mod n`) from the `sources` that
/// hold them into `dst`, a buffer of `gpu`'s device and stream, from its row `at` on.
pub(crate) fn copy_rows(
    gpu: &Gpu,
    dst: CUdeviceptr,
    at: usize,
    rows: Range<isize>,
    n: usize,
    row_bytes: usize,
    sources: &[RowSource],
) -> Result<()> {
    let mut r = rows.start;
    while r < rows.end {
        let m = r.rem_euclid(n as isize) as usize;
        let len = ((rows.end - r) as usize).min(n - m);
        copy_run(gpu, dst, at + (r - rows.start) as usize, m..m + len, row_bytes, sources)?;
        r += len as isize;
    }
    Ok(())
}

/// [`copy_rows`] for one run inside `0..n`.
fn copy_run(
    gpu: &Gpu,
    dst: CUdeviceptr,
    at: usize,
    rows: Range<usize>,
    row_bytes: usize,
    sources: &[RowSource],
) -> Result<()> {
    let stream = gpu.stream();
    let mut copied = 0;
    for s in sources {
        let (a, b) = (rows.start.max(s.rows.start), rows.end.min(s.rows.end));
        if a >= b {
            continue;
        }
        let foreign = s.stream.cu_stream() != stream.cu_stream();
        if foreign {
            stream.join(&s.stream)?;
        }
        let src = s.ptr + ((a - s.first) * row_bytes) as u64;
        let to = dst + ((at + a - rows.start) * row_bytes) as u64;
        let bytes = (b - a) * row_bytes;
        gpu.context().bind_to_thread()?;
        // SAFETY: `src` addresses `bytes` bytes inside the source's live buffer (rows a..b of its
        // core, which starts at global row `first`), `to` as many inside the destination buffer
        // (the caller sized it for rows `at..at + rows.len()`); the copy is ordered after the
        // source's writes and before its later work by the two joins around it.
        unsafe {
            if s.ctx.cu_ctx() == gpu.context().cu_ctx() {
                result::memcpy_dtod_async(to, src, bytes, stream.cu_stream())?;
            } else {
                result::memcpy_peer_async(
                    gpu.context().cu_ctx(),
                    to,
                    s.ctx.cu_ctx(),
                    src,
                    bytes,
                    stream.cu_stream(),
                )?;
            }
        }
        if foreign {
            s.stream.join(stream)?;
        }
        copied += b - a;
    }
    debug_assert_eq!(copied, rows.len(), "the sources' cores tile the rows");
    Ok(())
}
