//! [`Gpu`]: one CUDA context, one stream, the kernel module loaded once and its function handles.

use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream};
use cudarc::nvrtc::Ptx;

use crate::error::{Error, Result};
use crate::kernels::{PTX, ReduceInstance};

/// Properties of the device a [`Gpu`] runs on, read once at creation.
#[derive(Clone, Debug)]
pub struct DeviceProps {
    pub ordinal: usize,
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    pub sm_count: u32,
    pub max_threads_per_sm: u32,
    pub shared_mem_per_block: u32,
    pub l2_bytes: u32,
    pub total_mem: usize,
}

/// A handle on one CUDA device: context, stream, the gpuprims module (loaded once) and its kernels
/// (looked up once, indexed without string lookups afterwards).
///
/// All work is issued on one stream, in order; results returned to the host are synchronized.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    _module: Arc<CudaModule>,
    reduce: Vec<[CudaFunction; 8]>,
    /// Step 8's last-block ticket: zero between launches (each launch's last block resets it).
    pub(crate) reduce_ticket: CudaSlice<u32>,
    props: DeviceProps,
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

    /// Opens device `ordinal`: creates its context and stream, loads the embedded PTX (the driver
    /// JIT-compiles it for the device) and resolves every kernel. Returns [`Error::NoDevice`] —
    /// never panics — when libcuda is missing, no device answers or `ordinal` is out of range.
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
        let reduce = ReduceInstance::ALL
            .iter()
            .map(|inst| {
                let fs = inst.names().map(|name| module.load_function(name));
                let fs: Vec<CudaFunction> = fs.into_iter().collect::<Result<_, _>>()?;
                Ok(fs.try_into().expect("eight names give eight functions"))
            })
            .collect::<Result<Vec<[CudaFunction; 8]>>>()?;
        let attr = |a: Attr| ctx.attribute(a).map(|v| v.max(0) as u32);
        let props = DeviceProps {
            ordinal,
            name: ctx.name()?,
            compute_capability: ctx.compute_capability()?,
            sm_count: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            max_threads_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
            shared_mem_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
            l2_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
            total_mem: ctx.total_mem()?,
        };
        let reduce_ticket = stream.alloc_zeros::<u32>(1)?;
        Ok(Gpu {
            ctx,
            stream,
            _module: module,
            reduce,
            reduce_ticket,
            props,
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

    /// Waits for all work issued on this handle's stream.
    pub fn synchronize(&self) -> Result<()> {
        Ok(self.stream.synchronize()?)
    }

    pub(crate) fn reduce_kernel(&self, inst: ReduceInstance, step: crate::abi::reduce::ReduceStep) -> &CudaFunction {
        &self.reduce[inst as usize][step.index()]
    }
}
