//! [`Gpu`]: a stream on one CUDA context, sharing with every handle forked from it the device's
//! facts, the kernels (each its own module, loaded on first use: `host/loader.rs`) and the
//! families' kernel tables ([`crate::family`]'s registry).

use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};

use crate::error::{Error, Result};
use crate::family::Families;
use crate::kernels::{arch_number, cc_number, ptx_archs};
use crate::loader::Loader;

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

/// A handle on one CUDA device and one of its streams: every op called on a `Gpu` is enqueued on
/// its stream, in call order. The context, the device's properties and the kernels (each its own
/// module, loaded the first time an op needs it, then shared) belong to all handles
/// [forked](Gpu::fork_stream) from it; forking is cheap (one stream).
///
/// # Kernels and first use
///
/// Creating a `Gpu` loads no kernel. The first op that needs a kernel loads that kernel's module
/// on this context: an embedded cubin where the build made one for this device
/// (`GPUPRIMS_SASS_ARCH`), else the newest embedded PTX the device runs, which the driver
/// JIT-compiles once per machine (its cache, `~/.nv/ComputeCache`, keeps each module; see
/// docs/ARCHITECTURE.md). A plan loads its kernels when it is made, so enqueueing it (and
/// capturing it into a graph) loads nothing. `examples/prewarm.rs` fills the cache ahead.
///
/// # Streams
///
/// - Ops that return host arrays (or scalars) synchronize their stream before returning. Ops that
///   return [`DeviceArray`](crate::DeviceArray)s and plans' `enqueue` are asynchronous: their
///   results are valid once the handle's stream is synchronized ([`Gpu::synchronize`]), or for
///   work on another stream, once that stream [joined](Gpu::join) this one.
/// - A device buffer belongs to the stream that allocated it (its memory is freed in that stream's
///   order). An op given a buffer of another stream of the same context orders itself after the
///   work enqueued on that stream so far, and that stream's later work (its free included) after
///   the op, with two events; buffers of the handle's own stream cost nothing. A buffer of another
///   context (another device) is [`Error::ForeignContext`].
/// - Dropping a handle with work in flight is safe: buffers keep their stream alive and are freed
///   in its order.
/// - State kept between launches is per plan (scratch images, a reduction's partials and finish
///   buffer) or shared under a protocol (the constant bank: its contents are ordered across
///   streams with events), so ops of every family may run on several streams of one `Gpu` at once.
pub struct Gpu {
    shared: Arc<Shared>,
    stream: Arc<CudaStream>,
}

/// What the handles forked from one [`Gpu::with_device`] share.
struct Shared {
    ctx: Arc<CudaContext>,
    props: DeviceProps,
    loader: Loader,
    families: Families,
}

/// Another handle on the *same* stream (use [`Gpu::fork_stream`] for a new one): cheap, two
/// reference counts.
impl Clone for Gpu {
    fn clone(&self) -> Gpu {
        Gpu {
            shared: self.shared.clone(),
            stream: self.stream.clone(),
        }
    }
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("props", &self.shared.props)
            .field("stream", &self.stream.cu_stream())
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

    /// Opens device `ordinal`: creates its context and stream; kernels load on first use (see
    /// [Kernels and first use](Gpu#kernels-and-first-use)). Each kernel runs the newest embedded
    /// PTX build the device supports (on an H100, the sm_90 kernels); the environment variable
    /// `GPUPRIMS_LOAD_ARCH=sm_XY` caps that (as [`Gpu::with_device_arch`] does). Returns
    /// [`Error::NoDevice`] — never panics — when libcuda is missing, no device answers, `ordinal`
    /// is out of range or the device is older than every embedded build.
    pub fn with_device(ordinal: usize) -> Result<Gpu> {
        let cap = match std::env::var("GPUPRIMS_LOAD_ARCH") {
            Ok(v) if !v.is_empty() => Some(arch_number(&v).ok_or_else(|| Error::InvalidArgument {
                name: "GPUPRIMS_LOAD_ARCH",
                reason: format!("{v:?} is not an sm_XY architecture (e.g. sm_70)"),
            })?),
            _ => None,
        };
        Gpu::open(ordinal, cap)
    }

    /// Opens device `ordinal` like [`Gpu::with_device`], loading kernels built for architecture
    /// `sm_{max_arch}` at most: `70` runs the portable build on any device (the sm_90
    /// specializations off), which is how the tests keep that path checked on an H100.
    pub fn with_device_arch(ordinal: usize, max_arch: u32) -> Result<Gpu> {
        Gpu::open(ordinal, Some(max_arch))
    }

    fn open(ordinal: usize, cap: Option<u32>) -> Result<Gpu> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(no_device(format!("device {ordinal} requested, {count} present")));
        }
        let ctx =
            CudaContext::new(ordinal).map_err(|e| no_device(format!("creating a context on device {ordinal}: {e}")))?;
        keep_freed_memory(&ctx);
        // Cross-stream order is kept by gpuprims itself (`Gpu::order_after`: two events when an op
        // meets a buffer of another stream, nothing otherwise); cudarc's tracking would add an
        // event record per argument per launch.
        // SAFETY: no CudaSlice of this context exists yet.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream()?;
        let cc = ctx.compute_capability()?;
        let limit = cap.map_or(cc_number(cc), |c| c.min(cc_number(cc)));
        let Some(&arch) = ptx_archs().iter().rev().find(|&&a| a <= limit) else {
            let archs: Vec<String> = ptx_archs().iter().map(|a| format!("sm_{a}")).collect();
            return Err(no_device(format!(
                "device {ordinal} has compute capability {}.{}{}, below every embedded kernel build ({}); \
                 rebuild with GPUPRIMS_CUDA_ARCH=sm_{}{}",
                cc.0,
                cc.1,
                cap.map_or(String::new(), |c| format!(" (capped at sm_{c})")),
                archs.join(", "),
                cc.0,
                cc.1
            )));
        };
        let attr = |a: Attr| ctx.attribute(a).map(|v| v.max(0) as u32);
        let props = DeviceProps {
            ordinal,
            name: ctx.name()?,
            compute_capability: cc,
            sm_count: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            max_threads_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
            shared_mem_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
            shared_mem_per_block_optin: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            l2_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
            total_mem: ctx.total_mem()?,
        };
        let loader = Loader::new(arch, cc, props.shared_mem_per_block_optin);
        Ok(Gpu {
            shared: Arc::new(Shared {
                ctx,
                props,
                loader,
                families: Families::default(),
            }),
            stream,
        })
    }

    /// A handle on a new stream that shares this one's context and kernels (nothing is loaded
    /// again). The new stream first waits for the work enqueued on this one so far, so
    /// arrays this handle produced are ready there. Ops on the two handles then run concurrently
    /// until one [joins](Gpu::join) the other.
    ///
    /// ```no_run
    /// # use gpuprims::{Border, DeviceArray, Gpu};
    /// let gpu = Gpu::new()?;
    /// let streams: Vec<Gpu> = (0..4).map(|_| gpu.fork_stream()).collect::<Result<_, _>>()?;
    /// let img = ndarray::Array3::<u8>::zeros((4, 512, 512));
    /// let mut outs = Vec::new();
    /// for (i, s) in streams.iter().enumerate() {
    ///     let x = DeviceArray::upload(s, &img.slice(ndarray::s![i, .., ..]))?;
    ///     outs.push(s.gaussian3x3(&x, Border::Reflect)?); // enqueued on stream i
    /// }
    /// for s in &streams {
    ///     gpu.join(s)?; // gpu's later work waits for every stream's
    /// }
    /// let first = outs[0].download(&gpu)?;
    /// # Ok::<(), gpuprims::Error>(())
    /// ```
    pub fn fork_stream(&self) -> Result<Gpu> {
        Ok(Gpu {
            shared: self.shared.clone(),
            stream: self.stream.fork()?,
        })
    }

    /// A handle that enqueues on `stream`, a stream of this handle's context owned by another
    /// library (a CuPy or PyTorch stream; null for the legacy default stream, `0x2` for the
    /// per-thread one), sharing this handle's kernels. Its ops are ordered by that stream alone:
    /// after the work its owner queued there, before what the owner queues next, with no event
    /// and no host wait — the zero-cost way to run inside another library's stream order (the
    /// Python package calls every op on a CuPy array or CUDA tensor so).
    ///
    /// # Safety
    ///
    /// `stream` must belong to this handle's context and stay alive while the handle, or any
    /// buffer it allocates, is used: a [`DeviceArray`](crate::DeviceArray) it returns frees its
    /// memory on `stream` when dropped, so one that may outlive the stream must be taken apart
    /// ([`DeviceArray::into_slice`](crate::DeviceArray::into_slice), `CudaSlice::leak`) and its
    /// memory freed on a live stream. Constant banks remember the streams that used them (other
    /// streams' writes wait for them): call [`Gpu::end_borrow`] before the owner may destroy
    /// `stream`.
    pub unsafe fn on_borrowed_stream(&self, stream: cudarc::driver::sys::CUstream) -> Gpu {
        Gpu {
            shared: self.shared.clone(),
            // SAFETY: the caller's contract above.
            stream: unsafe { self.shared.ctx.wrap_borrowed_stream(stream) },
        }
    }

    /// Ends this handle's use of its stream as far as state kept between calls goes: every
    /// constant bank it used keeps an event of that use instead of the stream, so no later op on
    /// another stream records on or waits for this stream. Call it on a handle of a borrowed
    /// stream ([`Gpu::on_borrowed_stream`]) before giving the stream back; ops may still run on
    /// the handle afterwards (they register again). One event per bank the stream used.
    pub fn end_borrow(&self) -> Result<()> {
        self.loader().retire_stream(&self.stream)
    }

    /// Makes this handle's later work wait for the work enqueued on `other`'s stream so far (an
    /// event recorded there, waited on here; the host does not block).
    pub fn join(&self, other: &Gpu) -> Result<()> {
        if other.stream.cu_stream() != self.stream.cu_stream() {
            self.stream.join(&other.stream)?;
        }
        Ok(())
    }

    /// Whether `other` shares this handle's context and kernels (forked from the same
    /// [`Gpu::with_device`]).
    pub fn shares_kernels_with(&self, other: &Gpu) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Device properties.
    pub fn props(&self) -> &DeviceProps {
        &self.shared.props
    }

    /// The stream every gpuprims call on this handle uses.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.shared.ctx
    }

    /// Fills `buf` with all-one bytes on the stream (NaN for floats, the maximum for unsigned
    /// integers), so an element a kernel fails to write shows in the result. Tests and timing
    /// loops poison outputs before every run.
    pub fn poison<T>(&self, buf: &mut CudaSlice<T>) -> Result<()> {
        let _order = self.order_after([buf.stream()])?;
        poison_bytes(self, buf, 0xFF)
    }

    /// Waits for this handle's stream, then returns the memory the device's pool keeps for reuse
    /// (freed outputs and scratch of every handle of this device) to the system. Ops keep freed
    /// memory between calls so later calls reuse it; call this when other processes need it.
    pub fn release_memory(&self) -> Result<()> {
        self.synchronize()?;
        if let Some(pool) = default_pool(self.context()) {
            self.context().bind_to_thread()?;
            // SAFETY: `pool` is the device's live default pool; trimming frees only unused memory.
            unsafe { cudarc::driver::sys::cuMemPoolTrimTo(pool, 0) }.result()?;
        }
        Ok(())
    }

    /// Waits for all work issued on this handle's stream.
    pub fn synchronize(&self) -> Result<()> {
        Ok(self.stream.synchronize()?)
    }

    /// The per-context kernel slots.
    pub(crate) fn loader(&self) -> &Loader {
        &self.shared.loader
    }

    pub(crate) fn families(&self) -> &Families {
        &self.shared.families
    }

    /// Orders this handle's stream against the streams `owners` of the buffers an op is about to
    /// use: for each other stream, this stream waits for the work enqueued there so far, and when
    /// the returned guard drops (after the op's launches), that stream waits for this one — so the
    /// op sees its inputs complete and the buffers' later frees and writes come after it. Buffers
    /// of this stream cost a pointer comparison. A buffer of another context is
    /// [`Error::ForeignContext`]; foreign streams while this stream captures a graph are
    /// [`Error::Unsupported`] (a capture may not wait on uncaptured work).
    pub(crate) fn order_after<'a>(&self, owners: impl IntoIterator<Item = &'a Arc<CudaStream>>) -> Result<StreamOrder> {
        let mine = self.stream.cu_stream();
        let mut foreign: Vec<Arc<CudaStream>> = Vec::new();
        for owner in owners {
            if owner.cu_stream() == mine || foreign.iter().any(|f| f.cu_stream() == owner.cu_stream()) {
                continue;
            }
            if owner.context().cu_ctx() != self.context().cu_ctx() {
                return Err(Error::ForeignContext {
                    buffer_device: owner.context().ordinal(),
                    gpu_device: self.props().ordinal,
                });
            }
            foreign.push(owner.clone());
        }
        if !foreign.is_empty() && self.is_capturing()? {
            return Err(Error::Unsupported {
                variant: "graph capture",
                reason: "captured work may only use buffers of the capturing stream (join the other streams \
                         before the capture)"
                    .into(),
            });
        }
        for f in &foreign {
            self.stream.join(f)?;
        }
        Ok(StreamOrder {
            user: self.stream.clone(),
            owners: foreign,
        })
    }

    /// Whether this handle's stream is capturing a graph.
    pub(crate) fn is_capturing(&self) -> Result<bool> {
        use cudarc::driver::sys::CUstreamCaptureStatus as S;
        Ok(self.stream.capture_status()? != S::CU_STREAM_CAPTURE_STATUS_NONE)
    }
}

/// How many CUDA devices answer; [`Error::NoDevice`] when libcuda is missing or cuInit fails.
pub(crate) fn device_count() -> Result<usize> {
    // SAFETY: probes for the shared library without calling into it.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(no_device("the CUDA driver library (libcuda) was not found"));
    }
    let count = CudaContext::device_count().map_err(|e| no_device(format!("cuInit/cuDeviceGetCount: {e}")))?;
    Ok(count.max(0) as usize)
}

/// The default memory pool of `ctx`'s device: every op's outputs and scratch come from it
/// (`cuMemAllocAsync`, ordered on the op's stream).
pub(crate) fn default_pool(ctx: &CudaContext) -> Option<cudarc::driver::sys::CUmemoryPool> {
    let mut pool = std::ptr::null_mut();
    // SAFETY: writes one pool handle; fails (and is ignored) on devices without memory pools.
    let ok = unsafe { cudarc::driver::sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()) }.result();
    ok.ok().map(|()| pool)
}

/// Lets the device's default pool keep the memory ops free, as PyTorch's and CuPy's caching
/// allocators do. The driver's default returns it to the system at every synchronization, so the
/// next call that allocates maps fresh pages: on an H200, ~200 µs per 4 GiB sum of squares, 10%
/// of the call ([`Gpu::release_memory`] hands it back). Without pools nothing changes.
fn keep_freed_memory(ctx: &CudaContext) {
    use cudarc::driver::sys::{CUmemPool_attribute, cuMemPoolSetAttribute};
    if let Some(pool) = default_pool(ctx) {
        let mut keep = u64::MAX;
        // SAFETY: `pool` is the device's live default pool; the attribute takes a u64.
        let set = unsafe {
            cuMemPoolSetAttribute(
                pool,
                CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut keep as *mut u64).cast(),
            )
        };
        // A pool that refuses keeps the driver's default: slower allocations, same results.
        let _ = set.result();
    }
}

/// The second half of [`Gpu::order_after`]: on drop, every foreign stream waits for the work the
/// op enqueued on the user's stream.
#[must_use = "the foreign streams are ordered after the op when this drops"]
pub(crate) struct StreamOrder {
    user: Arc<CudaStream>,
    owners: Vec<Arc<CudaStream>>,
}

impl Drop for StreamOrder {
    fn drop(&mut self) {
        for owner in &self.owners {
            // A failure here means the context is unusable; it is recorded and surfaces on the
            // context's next checked call.
            owner.context().record_err(owner.join(&self.user));
        }
    }
}

/// Fills every byte of `buf` with `byte`, ordered on `gpu`'s stream.
pub(crate) fn poison_bytes<T, B>(gpu: &Gpu, buf: &B, byte: u8) -> Result<()>
where
    B: cudarc::driver::DevicePtr<T> + cudarc::driver::DeviceSlice<T>,
{
    let bytes = buf.num_bytes();
    let (ptr, _sync) = cudarc::driver::DevicePtr::device_ptr(buf, gpu.stream());
    // Raw driver calls use the thread's current context: bind it (a new thread has none).
    gpu.context().bind_to_thread()?;
    // SAFETY: `ptr` addresses `bytes` bytes of this live allocation; the memset is ordered on the
    // stream every gpuprims kernel of this handle uses.
    unsafe { cudarc::driver::result::memset_d8_async(ptr, byte, bytes, gpu.stream().cu_stream()) }?;
    Ok(())
}
