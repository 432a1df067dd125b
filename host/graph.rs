//! [`Graph`]: work enqueued on a [`Gpu`]'s stream, captured once as a CUDA graph and replayed with
//! one launch (the driver submits all its kernels at once: no per-kernel launch cost on the host).

use cudarc::driver::CudaGraph;
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};

use crate::error::{Error, Result};
use crate::gpu::Gpu;

/// A captured, instantiated CUDA graph of gpuprims work; [`Graph::launch`] replays it on the
/// stream it was captured on. Build one with [`Gpu::capture`].
pub struct Graph {
    graph: CudaGraph,
    gpu: Gpu,
}

impl Gpu {
    /// Captures the work `enqueue` issues on this handle's stream into a [`Graph`] (nothing runs
    /// during the capture). Capture plans' `enqueue` calls into arrays allocated *before* the
    /// capture: every replay then rewrites those arrays. Ops that allocate (the `Gpu` op methods
    /// returning arrays) allocate inside the graph, and their results must not outlive the
    /// closure. The capture may only use buffers of this stream (others: [`Error::Unsupported`];
    /// join their streams first).
    ///
    /// Constant-bank contents: the graph holds a copy of the content before each launch that
    /// reads a kernel's bank, and each replay counts as a write of unknown content to every bank,
    /// ordered after other streams' bank readers. Other streams may use the banks while the
    /// capture runs. Kernels an op first uses inside the capture are loaded there (a module load
    /// enqueues nothing); plans made before it load theirs when they are made.
    ///
    /// ```no_run
    /// # use gpuprims::{Border, DeviceArray, Filter2dPlan, Filter2dShape, Filter2dVariant, Gpu};
    /// let gpu = Gpu::new()?;
    /// let shape = Filter2dShape { planes: 1, h: 512, w: 512 };
    /// let x = DeviceArray::upload(&gpu, &ndarray::Array2::<u8>::ones((512, 512)))?;
    /// let mut y = DeviceArray::<u8, _>::uninit(&gpu, x.raw_dim())?;
    /// let plan = Filter2dPlan::<u8>::gaussian3x3(&gpu, shape, Border::Reflect, Filter2dVariant::Auto)?;
    /// let graph = gpu.capture(|g| plan.enqueue(g, x.as_slice(), y.as_mut_slice()))?;
    /// for _ in 0..10 {
    ///     graph.launch()?;
    /// }
    /// gpu.synchronize()?;
    /// # Ok::<(), gpuprims::Error>(())
    /// ```
    pub fn capture(&self, enqueue: impl FnOnce(&Gpu) -> Result<()>) -> Result<Graph> {
        self.loader().begin_capture(self.stream())?;
        let begun = self
            .stream()
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
        let (enqueued, ended) = match begun {
            Ok(()) => {
                let enqueued = enqueue(self);
                // End the capture whatever happened, so the stream is usable again.
                (enqueued, self.stream().end_capture(CUgraphInstantiate_flags(0)))
            }
            Err(e) => (Err(e.into()), Ok(None)),
        };
        self.loader().end_capture(self.stream());
        enqueued?;
        let graph = ended?.ok_or_else(|| Error::Unsupported {
            variant: "graph capture",
            reason: "the capture enqueued no work".into(),
        })?;
        Ok(Graph {
            graph,
            gpu: self.clone(),
        })
    }
}

impl Graph {
    /// Enqueues one replay of the captured work on the capturing handle's stream. Asynchronous.
    pub fn launch(&self) -> Result<()> {
        let banks = self.gpu.loader().banks();
        // Every bank is held (in load order, as every replay takes them) until the replay is
        // enqueued, so no other thread's bank write falls between the waits and the replay.
        let _held = banks
            .iter()
            .map(|b| b.clobber(self.gpu.stream()))
            .collect::<Result<Vec<_>>>()?;
        Ok(self.graph.launch()?)
    }

    /// The handle (stream) the graph replays on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }
}
