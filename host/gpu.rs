//! [`Gpu`]: one CUDA context, one stream, the kernel module loaded once and its function handles.

use std::sync::{Arc, Mutex};

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream};
use cudarc::nvrtc::Ptx;

use crate::abi::conv1d::{CONV1D_CONST_BYTES, Conv1dStep, max_constant_taps};
use crate::error::{Error, Result};
use crate::kernels::{Conv1dType, PTX, ReduceInstance};

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
    conv1d: Vec<[CudaFunction; Conv1dStep::ALL.len()]>,
    /// The module's constant-memory tap bank.
    pub(crate) conv1d_bank: ConstantBank,
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
            .map(|inst| load_functions(&module, inst.names()))
            .collect::<Result<Vec<_>>>()?;
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
        let conv1d = Conv1dType::ALL
            .iter()
            .map(|ty| load_functions(&module, ty.names()))
            .collect::<Result<Vec<_>>>()?;
        // The shared-memory steps hold the block's span plus taps − 1 samples: let them use more
        // than the default 48 KiB so every tap count the constant bank holds fits (92 KiB at most).
        let optin = attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
        for (ty, fs) in Conv1dType::ALL.iter().zip(&conv1d) {
            let size = ty.elem_size();
            for step in [Conv1dStep::SharedTile, Conv1dStep::RegisterBlockedShared] {
                let need = step.shared_bytes(max_constant_taps(size) as u32, size);
                fs[step.index()].set_attribute(
                    cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    need.min(optin as usize) as i32,
                )?;
            }
        }
        let (ptr, bank_bytes) = {
            let bank = module.get_global(crate::conv1d_taps_symbol!(), &stream)?;
            let (ptr, _sync) = cudarc::driver::DevicePtr::device_ptr(&bank, &stream);
            (ptr, bank.len())
        };
        if bank_bytes != CONV1D_CONST_BYTES {
            return Err(Error::Unsupported {
                variant: "conv1d constant bank",
                reason: format!("{bank_bytes} bytes in the module, {CONV1D_CONST_BYTES} expected"),
            });
        }
        let conv1d_bank = ConstantBank {
            ptr,
            max_shared_bytes: optin,
            owner: Mutex::new(0),
        };
        Ok(Gpu {
            ctx,
            stream,
            _module: module,
            reduce,
            reduce_ticket,
            conv1d,
            conv1d_bank,
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

    pub(crate) fn conv1d_kernel(&self, ty: Conv1dType, step: Conv1dStep) -> &CudaFunction {
        &self.conv1d[ty as usize][step.index()]
    }

    pub(crate) fn reduce_kernel(&self, inst: ReduceInstance, step: crate::abi::reduce::ReduceStep) -> &CudaFunction {
        &self.reduce[inst as usize][step.index()]
    }
}

/// The module's constant-memory tap bank, shared by every constant-taps launch of this handle.
///
/// The bank is one per module, so a launch must find *its* taps there. Plans upload their taps
/// (a stream-ordered device-to-device copy) only when another plan wrote the bank since; the
/// check, the copy and the launch happen under `owner`'s lock, and every launch of this handle
/// goes to its one stream in that order, so each kernel reads the taps enqueued just before it.
pub(crate) struct ConstantBank {
    /// Device address of the bank (`CONV1D_CONST_BYTES` bytes).
    pub(crate) ptr: cudarc::driver::sys::CUdeviceptr,
    /// The device's opt-in limit of dynamic shared memory per block.
    pub(crate) max_shared_bytes: u32,
    /// Id of the plan whose taps the bank holds (0: none).
    pub(crate) owner: Mutex<u64>,
}

/// Resolves a row of the kernel table: one function per name, in order.
fn load_functions<const N: usize>(module: &Arc<CudaModule>, names: [&str; N]) -> Result<[CudaFunction; N]> {
    let fs = names.map(|name| module.load_function(name));
    let fs: Vec<CudaFunction> = fs.into_iter().collect::<Result<_, _>>()?;
    Ok(fs
        .try_into()
        .unwrap_or_else(|_| unreachable!("N names give N functions")))
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
