//! Row copies between the devices of a set and the stream order around them.
//!
//! A copy runs on the destination device's stream. That stream first waits for the source's
//! `ready` event (recorded on the source buffer's stream when the sources were taken: its rows are
//! written), and the copy's completion is recorded among the source's `readers`, which the source
//! buffer's stream waits for before the buffer is freed ([`Readers::wait_all`]). Nothing else waits:
//! the two sides of a seam copy at once, and no device idles behind another's copy.
//! `cuStreamWaitEvent` accepts an event of another device, so the order never costs host time.

use std::ops::Range;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{CUdeviceptr, CUevent_flags};
use cudarc::driver::{CudaContext, CudaEvent, CudaStream, result};

use crate::error::Result;
use crate::gpu::Gpu;

/// The copies that read a buffer from other streams: per reading stream, the event recorded after
/// its latest copy.
#[derive(Default)]
pub(crate) struct Readers(Mutex<Vec<(usize, CudaEvent)>>);

impl Readers {
    /// Records that `stream` read the buffer (after the work enqueued there so far).
    fn add(&self, stream: &CudaStream) -> Result<()> {
        let event = stream.record_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))?;
        let key = stream.cu_stream() as usize;
        let mut v = self.0.lock().unwrap_or_else(|e| e.into_inner());
        v.retain(|(k, _)| *k != key);
        v.push((key, event));
        Ok(())
    }

    /// Makes `owner` (the buffer's stream) wait for every copy that read the buffer.
    pub fn wait_all(&mut self, owner: &CudaStream) {
        let v = self.0.get_mut().unwrap_or_else(|e| e.into_inner());
        for (_, e) in v.drain(..) {
            // A failure means the context is broken; cudarc records it for its next checked call.
            owner.context().record_err(owner.wait(&e));
        }
    }
}

/// A device buffer holding rows of a sharded array: buffer row 0 is global row `first`; the rows
/// `rows` (its core) are the ones it is the source of; `ready` is recorded on its stream after the
/// work that wrote them.
pub(crate) struct RowSource<'a> {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub ptr: CUdeviceptr,
    pub first: usize,
    pub rows: Range<usize>,
    pub ready: CudaEvent,
    pub readers: &'a Readers,
}

impl<'a> RowSource<'a> {
    /// A source for a buffer of `stream`, ready after the work enqueued there so far.
    pub fn new(
        stream: &Arc<CudaStream>,
        ptr: CUdeviceptr,
        first: usize,
        rows: Range<usize>,
        readers: &'a Readers,
    ) -> Result<Self> {
        Ok(RowSource {
            ctx: stream.context().clone(),
            stream: stream.clone(),
            ptr,
            first,
            rows,
            ready: stream.record_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))?,
            readers,
        })
    }
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
            stream.wait(&s.ready)?;
        }
        let src = s.ptr + ((a - s.first) * row_bytes) as u64;
        let to = dst + ((at + a - rows.start) * row_bytes) as u64;
        let bytes = (b - a) * row_bytes;
        gpu.context().bind_to_thread()?;
        // SAFETY: `src` addresses `bytes` bytes inside the source's live buffer (rows a..b of its
        // core, which starts at global row `first`), `to` as many inside the destination buffer
        // (the caller sized it for rows `at..at + rows.len()`); the copy is ordered after the
        // source's writes (`ready`) and before the source's free (`readers`).
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
            s.readers.add(stream)?;
        }
        copied += b - a;
    }
    debug_assert_eq!(copied, rows.len(), "the sources' cores tile the rows");
    Ok(())
}
