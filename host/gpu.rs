//! [`Gpu`]: one CUDA context, one stream, the kernel module loaded once, the device's facts and the
//! resources every family shares (the constant bank). Families keep their own state in
//! [`crate::family`]'s registry, loaded on first use.

use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaModule, CudaSlice, CudaStream};
use cudarc::nvrtc::Ptx;

use crate::bank::ConstantBank;
use crate::error::{Error, Result};
use crate::family::Families;
use crate::kernels::PTX;

/// Properties of the device a [`Gpu`] runs on, read once at creation.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DeviceProps {
    pub ordinal: usize,
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    pub sm_count: u32,
    pub max_threads_per_sm: u32,
    pub shared_mem_per_block: u32,
    /// Dynamic shared memory a block may use after opting in (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`).
    pub shared_mem_per_block_optin: u32,
    pub l2_bytes: u32,
    pub total_mem: usize,
}

/// A handle on one CUDA device: context, stream, the gpuprims module (loaded once), the device's
/// properties and the shared constant-memory bank. Kernel families resolve their functions on
/// first use and keep them here (no string lookups per launch).
///
/// All work is issued on one stream, in order; results returned to the host are synchronized.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    props: DeviceProps,
    bank: ConstantBank,
    families: Families,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("props", &self.props)
            .finish_non_exhaustive()
    }
}

fn no_device(reason: impl Into<String>) -> Error {
    Error::NoDevice { reason: reason.into() }
}

impl Gpu {
    /// Opens device 0. See [`Gpu::with_device`].
    pub fn new() -> Result<Gpu> {
        Gpu::with_device(0)
    }

    /// Opens device `ordinal`: creates its context and stream and loads the embedded PTX (the
    /// driver JIT-compiles it for the device). Returns [`Error::NoDevice`] — never panics — when
    /// libcuda is missing, no device answers or `ordinal` is out of range.
    pub fn with_device(ordinal: usize) -> Result<Gpu> {
        // SAFETY: probes for the shared library without calling into it.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(no_device("the CUDA driver library (libcuda) was not found"));
        }
        let count = CudaContext::device_count().map_err(|e| no_device(format!("cuInit/cuDeviceGetCount: {e}")))?;
        if ordinal >= count.max(0) as usize {
            return Err(no_device(format!("device {ordinal} requested, {count} present")));
        }
        let ctx =
            CudaContext::new(ordinal).map_err(|e| no_device(format!("creating a context on device {ordinal}: {e}")))?;
        // One stream per Gpu, so cudarc's cross-stream event tracking would only add a record per
        // argument per launch.
        // SAFETY: no CudaSlice of this context exists yet.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream()?;
        let module = ctx.load_module(Ptx::from_src(PTX))?;
        let attr = |a: Attr| ctx.attribute(a).map(|v| v.max(0) as u32);
        let props = DeviceProps {
            ordinal,
            name: ctx.name()?,
            compute_capability: ctx.compute_capability()?,
            sm_count: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            max_threads_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
            shared_mem_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
            shared_mem_per_block_optin: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            l2_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
            total_mem: ctx.total_mem()?,
        };
        let bank = ConstantBank::of(&module, &stream)?;
        Ok(Gpu {
            ctx,
            stream,
            module,
            props,
            bank,
            families: Families::default(),
        })
    }

    /// Device properties.
    pub fn props(&self) -> &DeviceProps {
        &self.props
    }

    /// The stream every gpuprims call on this handle uses.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Fills `buf` with all-one bytes on the stream (NaN for floats, the maximum for unsigned
    /// integers), so an element a kernel fails to write shows in the result. Tests and timing
    /// loops poison outputs before every run.
    pub fn poison<T>(&self, buf: &mut CudaSlice<T>) -> Result<()> {
        poison_bytes(self, buf, 0xFF)
    }

    /// Waits for all work issued on this handle's stream.
    pub fn synchronize(&self) -> Result<()> {
        Ok(self.stream.synchronize()?)
    }

    /// The loaded gpuprims module (families resolve their kernels in it).
    pub(crate) fn module(&self) -> &Arc<CudaModule> {
        &self.module
    }

    /// The module's constant-memory bank, shared by every family.
    pub(crate) fn bank(&self) -> &ConstantBank {
        &self.bank
    }

    pub(crate) fn families(&self) -> &Families {
        &self.families
    }
}

/// Fills every byte of `buf` with `byte`, ordered on `gpu`'s stream.
pub(crate) fn poison_bytes<T>(gpu: &Gpu, buf: &CudaSlice<T>, byte: u8) -> Result<()> {
    let bytes = buf.num_bytes();
    let (ptr, _sync) = cudarc::driver::DevicePtr::device_ptr(buf, gpu.stream());
    // SAFETY: `ptr` addresses `bytes` bytes of this live allocation; the memset is ordered on the
    // stream every gpuprims kernel of this handle uses.
    unsafe { cudarc::driver::result::memset_d8_async(ptr, byte, bytes, gpu.stream().cu_stream()) }?;
    Ok(())
}
