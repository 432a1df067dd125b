//! Kernels loaded per context on first use: one CUDA module per kernel ([`crate::kernels`]).
//!
//! A [`Gpu`] holds one slot per embedded kernel, shared by every stream forked from it. The
//! first use of a kernel decodes and loads its module — the cubin assembled from the PTX this
//! device runs, if the build embedded one, else that PTX, which the driver JIT-compiles (and
//! caches on disk, per module) — resolves the function, lets it use the device's opt-in shared memory, and
//! takes the module's constant bank if it has one. Later uses are one atomic load. Two threads
//! that first use a kernel at once load it once (the second waits for the first).
//!
//! Failures are per kernel: a cubin that is damaged or that the driver refuses falls back to the
//! PTX; a damaged PTX, or one the driver refuses, is [`Error::KernelLoad`] naming the kernel, the slot stays empty (the next use tries again)
//! and every other kernel keeps working.
//!
//! Loads run with the thread's stream-capture mode relaxed, so an op first used inside a graph
//! capture ([`Gpu::capture`]) may load its module there: a module load enqueues nothing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cudarc::driver::sys::{CUfunction_attribute, CUstreamCaptureMode};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, LaunchArgs};
use cudarc::nvrtc::Ptx;
use once_cell::sync::OnceCell;

use crate::bank::ConstantBank;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::kernels::{self, EmbeddedModule, KernelId};

/// A kernel loaded on one context: its function and, if its module declares one, its
/// constant-memory bank.
pub(crate) struct Kernel {
    id: KernelId,
    function: CudaFunction,
    bank: Option<Arc<ConstantBank>>,
    /// The context's handle and device, to refuse a launch on another context's stream.
    ctx: (usize, usize),
}

impl Kernel {
    /// The kernel's function.
    pub(crate) fn function(&self) -> &CudaFunction {
        &self.function
    }

    /// Blocks of `threads` threads with `shared` bytes of dynamic shared memory that the
    /// driver's occupancy calculator fits on one SM. The calculator reads the calling thread's
    /// current context, so `gpu`'s is made current first: on a thread that had made no other
    /// CUDA call (an op planned first thing on a new thread) it failed with
    /// `CUDA_ERROR_INVALID_CONTEXT`.
    pub(crate) fn blocks_per_sm(&self, gpu: &Gpu, threads: u32, shared: usize) -> Result<u32> {
        gpu.context().bind_to_thread()?;
        Ok(self
            .function
            .occupancy_max_active_blocks_per_multiprocessor(threads, shared, None)?)
    }

    /// The module's constant bank, for kernels that read constant memory.
    pub(crate) fn bank(&self) -> Option<&ConstantBank> {
        self.bank.as_deref()
    }

    /// The kernel's symbol.
    pub(crate) fn name(&self) -> &'static str {
        self.id.source().name()
    }

    /// A launch of this kernel on `gpu`'s stream; [`Error::ForeignContext`] if the kernel was
    /// loaded on another device's context (a plan made on another `Gpu`).
    pub(crate) fn launch_on<'a>(&'a self, gpu: &'a Gpu) -> Result<LaunchArgs<'a>> {
        if gpu.context().cu_ctx() as usize != self.ctx.0 {
            return Err(Error::ForeignContext {
                buffer_device: self.ctx.1,
                gpu_device: gpu.props().ordinal,
            });
        }
        Ok(gpu.stream().launch_builder(&self.function))
    }
}

/// Where a loaded kernel's code came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadedFrom {
    /// An embedded cubin (no JIT).
    Sass { arch: u32 },
    /// The PTX of architecture `arch`, JIT-compiled by the driver (or taken from its cache).
    Ptx { arch: u32 },
}

/// One kernel load: what was loaded and how long the load took (the module's decode and load,
/// JIT included, and the function's resolution).
#[derive(Clone, Copy, Debug)]
pub struct KernelLoad {
    pub kernel: &'static str,
    pub from: LoadedFrom,
    pub elapsed: Duration,
    /// Of `elapsed`, the time spent decompressing the embedded module(s).
    pub decode: Duration,
}

/// A kernel's slot: the kernel once loaded, and how its load went.
type Slot = OnceCell<(Arc<Kernel>, KernelLoad)>;

/// The per-context slots, shared by the forks of one [`Gpu::with_device`].
pub(crate) struct Loader {
    slots: Box<[Slot]>,
    /// The newest architecture whose PTX this context loads (the device's, or a lower cap).
    arch: u32,
    cc: (i32, i32),
    optin: u32,
    /// Every bank loaded so far (graph captures snapshot them, replays clobber them).
    banks: Mutex<Vec<Arc<ConstantBank>>>,
    /// Streams capturing a graph now (by handle address).
    captures: Mutex<Vec<usize>>,
    loaded: AtomicUsize,
}

impl Loader {
    pub(crate) fn new(arch: u32, cc: (i32, i32), optin: u32) -> Loader {
        Loader {
            slots: (0..kernels::count()).map(|_| OnceCell::new()).collect(),
            arch,
            cc,
            optin,
            banks: Mutex::new(Vec::new()),
            captures: Mutex::new(Vec::new()),
            loaded: AtomicUsize::new(0),
        }
    }

    /// The newest architecture whose PTX this context loads.
    pub(crate) fn arch(&self) -> u32 {
        self.arch
    }

    /// Every constant bank loaded so far.
    pub(crate) fn banks(&self) -> Vec<Arc<ConstantBank>> {
        self.banks.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// `stream` starts capturing a graph: every bank turns its use so far into an event snapshot
    /// (`ConstantBank::begin_capture`), and bank uses on it copy inside the capture until
    /// [`Loader::end_capture`].
    pub(crate) fn begin_capture(&self, stream: &Arc<CudaStream>) -> Result<()> {
        self.captures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(stream.cu_stream() as usize);
        for bank in self.banks() {
            bank.begin_capture(stream)?;
        }
        Ok(())
    }

    /// `stream`, a borrowed one, is about to go back to its owner: every bank forgets it
    /// (`ConstantBank::retire`).
    pub(crate) fn retire_stream(&self, stream: &Arc<CudaStream>) -> Result<()> {
        for bank in self.banks() {
            bank.retire(stream)?;
        }
        Ok(())
    }

    /// `stream`'s capture ended.
    pub(crate) fn end_capture(&self, stream: &Arc<CudaStream>) {
        let me = stream.cu_stream() as usize;
        self.captures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|&s| s != me);
    }

    /// Whether `stream` is capturing a graph (between `begin_capture` and `end_capture`).
    pub(crate) fn is_capturing(&self, stream: &Arc<CudaStream>) -> bool {
        let me = stream.cu_stream() as usize;
        self.captures.lock().unwrap_or_else(|e| e.into_inner()).contains(&me)
    }

    fn load(
        &self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        id: KernelId,
    ) -> Result<(Arc<Kernel>, KernelLoad)> {
        let source = id.source();
        let name = source.name();
        let failed = |reason: String| Error::KernelLoad { kernel: name, reason };
        let ptx = source.ptx_for(self.arch).ok_or_else(|| {
            failed(format!(
                "no PTX at or below sm_{} (the kernel has {:?})",
                self.arch,
                source.ptx_archs().collect::<Vec<_>>()
            ))
        })?;
        let started = Instant::now();
        let mut decode = Duration::ZERO;
        let mut timed_decode = |m: &EmbeddedModule| {
            let t = Instant::now();
            let bytes = m.decode();
            decode += t.elapsed();
            bytes
        };
        let (module, from) = relaxed_capture(|| -> Result<(Arc<CudaModule>, LoadedFrom)> {
            // A cubin damaged in the binary, or one the driver refuses (assembled by a newer
            // ptxas than it knows), falls back to the PTX it was assembled from.
            if let Some(cubin) = source.sass_for(ptx.arch(), self.cc)
                && let Ok(bytes) = timed_decode(&cubin)
                && let Ok(m) = ctx.load_module(Ptx::from_binary(bytes))
            {
                return Ok((m, LoadedFrom::Sass { arch: cubin.arch() }));
            }
            let text = String::from_utf8(timed_decode(&ptx)?)
                .map_err(|e| failed(format!("its sm_{} PTX is not UTF-8: {e}", ptx.arch())))?;
            let m = ctx
                .load_module(Ptx::from_src(text))
                .map_err(|e| failed(format!("the driver did not load its sm_{} PTX: {e}", ptx.arch())))?;
            Ok((m, LoadedFrom::Ptx { arch: ptx.arch() }))
        })?;
        let function = module
            .load_function(name)
            .map_err(|e| failed(format!("no function in its module: {e}")))?;
        // Every kernel may take the device's opt-in shared memory; each plan checks its launches
        // against that limit, and a launch's own size decides its occupancy.
        let fixed = function
            .get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
            .unwrap_or(0)
            .max(0) as u32;
        function.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            self.optin.saturating_sub(fixed) as i32,
        )?;
        let bank = match source.has_bank() {
            true => {
                let bank = Arc::new(ConstantBank::of(&module, stream)?);
                self.banks.lock().unwrap_or_else(|e| e.into_inner()).push(bank.clone());
                Some(bank)
            }
            false => None,
        };
        let load = KernelLoad {
            kernel: name,
            from,
            elapsed: started.elapsed(),
            decode,
        };
        self.loaded.fetch_add(1, Ordering::Relaxed);
        Ok((
            Arc::new(Kernel {
                id,
                function,
                bank,
                ctx: (ctx.cu_ctx() as usize, ctx.ordinal()),
            }),
            load,
        ))
    }
}

/// Runs `f` with this thread's stream-capture mode relaxed (and restores it), so a module load
/// is allowed while a stream of this thread captures a graph.
fn relaxed_capture<R>(f: impl FnOnce() -> R) -> R {
    let mut mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
    // SAFETY: swaps a thread-local setting through a valid pointer; restored below.
    let swapped = unsafe { cudarc::driver::sys::cuThreadExchangeStreamCaptureMode(&mut mode) }
        == cudarc::driver::sys::CUresult::CUDA_SUCCESS;
    let out = f();
    if swapped {
        // SAFETY: as above; puts the caller's mode back.
        unsafe { cudarc::driver::sys::cuThreadExchangeStreamCaptureMode(&mut mode) };
    }
    out
}

impl Gpu {
    /// Kernel `id` on this context, loaded on first use.
    pub(crate) fn kernel(&self, id: KernelId) -> Result<&Arc<Kernel>> {
        let loader = self.loader();
        let slot = &loader.slots[id.index()];
        if let Some((k, _)) = slot.get() {
            return Ok(k);
        }
        let (k, _) = slot.get_or_try_init(|| loader.load(self.context(), self.stream(), id))?;
        Ok(k)
    }

    /// Each of `ids`, loaded on first use (plans resolve their kernels when they are made).
    pub(crate) fn kernels<const N: usize>(&self, ids: [KernelId; N]) -> Result<[Arc<Kernel>; N]> {
        let mut out = Vec::with_capacity(N);
        for id in ids {
            out.push(self.kernel(id)?.clone());
        }
        Ok(out.try_into().unwrap_or_else(|_| unreachable!("N ids give N kernels")))
    }

    /// Loads the module of the embedded kernel `name` now, if this context has not yet (the
    /// first use of an op does this by itself; `examples/prewarm.rs` fills the driver's JIT cache
    /// with it). Returns how it was loaded and how long that took — the first load's, if it was
    /// already loaded. [`Error::InvalidArgument`] for a name the build did not embed,
    /// [`Error::KernelLoad`] if its module does not load.
    pub fn load_kernel(&self, name: &str) -> Result<KernelLoad> {
        let id = kernels::id(name).ok_or_else(|| Error::InvalidArgument {
            name: "kernel",
            reason: format!("{name:?} is not an embedded kernel (kernels::all() lists them)"),
        })?;
        self.kernel(id)?;
        Ok(self.loader().slots[id.index()].get().expect("just loaded").1)
    }

    /// Every kernel this context has loaded so far: how and in how long (by kernel name).
    pub fn kernel_loads(&self) -> Vec<KernelLoad> {
        self.loader()
            .slots
            .iter()
            .filter_map(|s| s.get().map(|(_, load)| *load))
            .collect()
    }

    /// How many kernel modules this context has loaded.
    pub fn loaded_kernels(&self) -> usize {
        self.loader().loaded.load(Ordering::Relaxed)
    }

    /// The newest architecture (`XY` of `sm_XY`) whose kernels this context loads: the newest
    /// embedded PTX build at or below the device's compute capability, or below the cap set by
    /// [`Gpu::with_device_arch`] / `GPUPRIMS_LOAD_ARCH`.
    pub fn kernel_arch(&self) -> u32 {
        self.loader().arch()
    }
}
