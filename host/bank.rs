//! [`ConstantBank`]: the module's one 64 KiB constant-memory bank, shared by every family, and the
//! one protocol by which a launch gets *its* content into it.
//!
//! Constant memory is global to a module and a module may declare 64 KiB of it. The kernels
//! declare one bank (`device::bank`) and each family reads its own content from it (1D filter taps
//! today; pooling inputs and 2D filter taps later). Contents are identified by a [`BankContent`]
//! id; the bank remembers which content it holds, so a launch whose content is already there copies
//! nothing (timing loops measure the kernel alone).
//!
//! Concurrency rule: [`ConstantBank::with_content`] holds the bank's lock from "does the bank hold
//! my content?" through the caller's launches, and every launch of a [`Gpu`] goes to its one
//! stream, in order. So the copy is ordered after every kernel that read the previous content and
//! before the kernels that read this one, whichever threads share the `Gpu`. Two `Gpu` handles
//! have two modules, hence two banks.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::CudaModule;
use cudarc::driver::sys::CUdeviceptr;

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

/// The module's constant-memory bank (`abi::CONSTANT_BANK_BYTES` bytes) and the id of what it
/// holds. See the module docs for the protocol.
pub(crate) struct ConstantBank {
    ptr: CUdeviceptr,
    holder: Mutex<u64>,
}

impl ConstantBank {
    /// The bank of `module`; an error if the module's bank is not the size the contract says.
    pub(crate) fn of(module: &Arc<CudaModule>, stream: &Arc<cudarc::driver::CudaStream>) -> Result<ConstantBank> {
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
            holder: Mutex::new(0),
        })
    }

    /// Enqueues `launch` (on `gpu`'s stream) with the bank holding `content`, whose `bytes` bytes
    /// are at device address `src`: copied into the bank first (a stream-ordered device-to-device
    /// copy) unless the bank already holds `content`. The lock is held until `launch` returns.
    ///
    /// # Safety
    /// `src` must address `bytes` readable bytes of a live device allocation of `gpu`'s context
    /// that stays unchanged while the bank may still copy it (the caller owns it).
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
        let mut holder = self.holder.lock().unwrap_or_else(|e| e.into_inner());
        if *holder != content.0 {
            let stream = gpu.stream();
            // SAFETY: the bank holds CONSTANT_BANK_BYTES ≥ bytes; the source is valid by this
            // function's contract; the copy is ordered on the stream every launch of `gpu` uses.
            unsafe { cudarc::driver::result::memcpy_dtod_async(self.ptr, src, bytes, stream.cu_stream()) }?;
            *holder = content.0;
        }
        let out = launch();
        if out.is_err() {
            // A failed launch may have left the copy enqueued but not the kernel; nothing is
            // wrong with the bank's content, but be conservative.
            *holder = 0;
        }
        out
    }
}
