//! [`ConstantBank`]: the 64 KiB constant-memory bank of one kernel's module, shared by every
//! stream forked from a [`Gpu`], and the one protocol by which a launch gets *its* content into
//! it.
//!
//! Constant memory is global to a module and a module may declare 64 KiB of it. The kernels
//! declare one bank symbol (`device::bank`); since every kernel is its own module
//! (`host/loader.rs`), each kernel that reads constant memory (1D filter taps, pooling's constant
//! input, 2D filter taps) has a bank of its own, and plans of different kernels never contend.
//! Contents are identified by a [`BankContent`] id; the bank remembers which content it holds, so
//! a launch whose content is already there copies nothing (timing loops measure the kernel
//! alone); plans of the same kernel take turns.
//!
//! Concurrency rule: [`ConstantBank::with_content`] holds the bank's lock from "does the bank hold
//! my content?" through the caller's launches (enqueues, not executions). Across streams the
//! order is kept with events, only where streams meet:
//!
//! - a **write** (another content) on stream `S` first makes `S` wait for every other stream that
//!   launched bank readers since the last write (an event recorded there now covers them all),
//!   then copies (stream-ordered) and records a *written* event;
//! - a **read** of the held content on a stream that has not used the bank since that write waits
//!   for the *written* event once;
//! - a stream capturing a graph copies its content into the bank *inside* the capture, always,
//!   and neither waits for nor registers with other streams (a capture may not depend on
//!   uncaptured work); its earlier bank use is turned into an event snapshot when the capture
//!   starts, so others can still wait for it. A replay may write the bank at any time, so
//!   [`ConstantBank::clobber`] treats a graph launch as a write of unknown content.
//!
//! - a stream borrowed from another library ([`Gpu::on_borrowed_stream`]) is retired when its
//!   borrow ends ([`Gpu::end_borrow`]): its use becomes an event with no stream identity, so
//!   nothing later records on or waits for a stream its owner may have destroyed.
//!
//! One stream (the common case) never records an event. Two `Gpu::with_device` handles have two
//! contexts' modules, hence two banks per kernel.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaEvent, CudaModule, CudaStream};

use crate::abi::CONSTANT_BANK_BYTES;
use crate::error::{Error, Result};
use crate::gpu::Gpu;

/// Identity of one bank content (a plan's taps, …). Take a fresh one per distinct content; the
/// bank copies a content in only when it holds another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BankContent(u64);

impl BankContent {
    /// A content id no other content has (0 is reserved for "nothing").
    pub fn fresh() -> BankContent {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        BankContent(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// A user of the bank since its last write: a live stream (an event recorded there when needed
/// covers its readers), or an event snapshot of a stream's work when it started capturing.
enum Reader {
    Stream(Arc<CudaStream>),
    /// Kept alive, so its handle (the identity) is not reused while listed.
    Snapshot(Arc<CudaStream>, Arc<CudaEvent>),
    /// A borrowed stream's use, ended ([`ConstantBank::retire`]): an event of its work and no
    /// identity, since its owner may destroy the stream and a new one may get its handle.
    Retired(Arc<CudaEvent>),
}

impl Reader {
    fn stream_id(&self) -> Option<usize> {
        match self {
            Reader::Stream(s) | Reader::Snapshot(s, _) => Some(id(s)),
            Reader::Retired(_) => None,
        }
    }
}

/// A stream's identity (its handle's address), `Send` unlike the raw handle.
fn id(s: &CudaStream) -> usize {
    s.cu_stream() as usize
}

/// What the bank holds and which streams have used it since it was written.
struct Holder {
    /// The content id (0: unknown, the next user copies).
    content: u64,
    /// Recorded on the writing stream after the copy (`None` until a second stream needs it).
    written: Option<Arc<CudaEvent>>,
    /// Users since the write (the writer first).
    readers: Vec<Reader>,
}

/// A bank held by [`ConstantBank::clobber`] until the write is enqueued.
pub(crate) struct Clobbered<'a> {
    _held: MutexGuard<'a, Holder>,
}

/// A kernel module's constant-memory bank (`abi::CONSTANT_BANK_BYTES` bytes) and the id of what it
/// holds. See the module docs for the protocol.
pub(crate) struct ConstantBank {
    ptr: CUdeviceptr,
    holder: Mutex<Holder>,
}

impl ConstantBank {
    /// The bank of `module`; an error if the module's bank is not the size the contract says.
    pub(crate) fn of(module: &Arc<CudaModule>, stream: &Arc<CudaStream>) -> Result<ConstantBank> {
        let bank = module.get_global(crate::constant_bank_symbol!(), stream)?;
        let (ptr, _sync) = cudarc::driver::DevicePtr::device_ptr(&bank, stream);
        if bank.len() != CONSTANT_BANK_BYTES {
            return Err(Error::Unsupported {
                variant: "constant bank",
                reason: format!("{} bytes in the module, {CONSTANT_BANK_BYTES} expected", bank.len()),
            });
        }
        Ok(ConstantBank {
            ptr,
            holder: Mutex::new(Holder {
                content: 0,
                written: None,
                readers: Vec::new(),
            }),
        })
    }

    /// Enqueues `launch` (on `gpu`'s stream) with the bank holding `content`, whose `bytes` bytes
    /// are at device address `src`: copied into the bank first (a stream-ordered device-to-device
    /// copy) unless the bank already holds `content`. The lock is held until `launch` returns.
    ///
    /// # Safety
    /// `src` must address `bytes` readable bytes of a live device allocation of `gpu`'s context,
    /// complete in `gpu`'s stream order and unchanged while the bank may still copy it.
    pub(crate) unsafe fn with_content<R>(
        &self,
        gpu: &Gpu,
        content: BankContent,
        src: CUdeviceptr,
        bytes: usize,
        launch: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        if bytes > CONSTANT_BANK_BYTES {
            return Err(Error::InvalidArgument {
                name: "constant bank content",
                reason: format!("{bytes} bytes exceed the {CONSTANT_BANK_BYTES}-byte bank"),
            });
        }
        let stream = gpu.stream();
        // The raw copy below uses the thread's current context: bind it (a new thread has none).
        gpu.context().bind_to_thread()?;
        let mut holder = self.holder.lock().unwrap_or_else(|e| e.into_inner());
        let copy = || {
            // SAFETY: the bank holds CONSTANT_BANK_BYTES ≥ bytes; the source is valid by this
            // function's contract; the copy is ordered on `stream` (after every earlier reader,
            // or inside a capture whose replays `clobber` orders).
            unsafe { cudarc::driver::result::memcpy_dtod_async(self.ptr, src, bytes, stream.cu_stream()) }
        };
        if gpu.loader().is_capturing(stream) {
            copy()?;
            return launch();
        }
        if holder.content != content.0 {
            Self::wait_for_readers(&mut holder, stream)?;
            copy()?;
            holder.content = content.0;
        } else if !holder.readers.iter().any(|r| r.stream_id() == Some(id(stream))) {
            // The content was written on another stream: wait for the copy once.
            if holder.written.is_none()
                && let Some(Reader::Stream(w)) = holder.readers.first()
            {
                holder.written = Some(Arc::new(w.record_event(None)?));
            }
            if let Some(e) = &holder.written {
                stream.wait(e)?;
            }
            holder.readers.push(Reader::Stream(stream.clone()));
        }
        let out = launch();
        if out.is_err() {
            // A failed launch may have left the copy enqueued but not the kernel; nothing is
            // wrong with the bank's content, but be conservative.
            holder.content = 0;
        }
        out
    }

    /// Prepares a write of unknown content on `stream` (a captured graph's replay, which may
    /// write the bank): `stream` waits for every reader on other streams, and the next user copies
    /// its content again. Enqueue the write while the returned guard lives.
    pub(crate) fn clobber(&self, stream: &Arc<CudaStream>) -> Result<Clobbered<'_>> {
        let mut holder = self.holder.lock().unwrap_or_else(|e| e.into_inner());
        Self::wait_for_readers(&mut holder, stream)?;
        holder.content = 0;
        Ok(Clobbered { _held: holder })
    }

    /// `stream` is about to capture a graph: its bank use so far becomes an event snapshot (others
    /// may wait for that, not for the capture). Its bank uses until the capture ends copy inside
    /// the capture without bookkeeping (`Loader::is_capturing`).
    pub(crate) fn begin_capture(&self, stream: &Arc<CudaStream>) -> Result<()> {
        self.replace_reader(stream, |done| Reader::Snapshot(stream.clone(), done))
    }

    /// `stream`, a borrowed one its owner may destroy after this call, stops being a user: its use
    /// of the bank so far becomes an event of no stream's identity, so later writers and readers
    /// wait for that event and never touch the stream again.
    pub(crate) fn retire(&self, stream: &Arc<CudaStream>) -> Result<()> {
        self.replace_reader(stream, Reader::Retired)
    }

    /// If `stream` used the bank since its last write, its entry becomes `reader(done)`, `done`
    /// an event recorded on it now — also the *written* event when `stream` made the write.
    fn replace_reader(&self, stream: &Arc<CudaStream>, reader: impl FnOnce(Arc<CudaEvent>) -> Reader) -> Result<()> {
        let mut holder = self.holder.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = holder.readers.iter().position(|r| r.stream_id() == Some(id(stream))) {
            let done = Arc::new(stream.record_event(None)?);
            if i == 0 && holder.written.is_none() {
                holder.written = Some(done.clone());
            }
            holder.readers[i] = reader(done);
        }
        Ok(())
    }

    /// Makes `stream` wait for every other user of the bank since its last write, and leaves
    /// `stream` as the only user (the writer).
    fn wait_for_readers(holder: &mut Holder, stream: &Arc<CudaStream>) -> Result<()> {
        for r in &holder.readers {
            match r {
                Reader::Stream(s) if id(s) != id(stream) => stream.join(s)?,
                Reader::Snapshot(_, e) | Reader::Retired(e) => stream.wait(e)?,
                Reader::Stream(_) => {}
            }
        }
        holder.readers.clear();
        holder.readers.push(Reader::Stream(stream.clone()));
        holder.written = None;
        Ok(())
    }
}
