//! [`PinnedArray`]: an n-dimensional host array in page-locked memory, so uploads and downloads
//! are asynchronous DMA transfers that overlap kernels on other streams.

use std::sync::Mutex;

use cudarc::driver::{CudaEvent, DeviceRepr, PinnedHostSlice, ValidAsZeroBits};
use ndarray::{ArrayBase, ArrayView, ArrayViewMut, Data, Dimension};

use crate::array::DeviceArray;
use crate::error::{Error, Result};
use crate::gpu::Gpu;

/// A C-order host array in page-locked (pinned) memory. Copies between it and a [`DeviceArray`]
/// ([`DeviceArray::upload_pinned`], [`DeviceArray::download_into`]) are enqueued on a stream and
/// return at once; the copy engines run them while kernels of other streams execute. Pageable
/// memory (`ndarray`'s own) cannot overlap: the driver stages it through a pinned buffer
/// synchronously.
///
/// Host access ([`PinnedArray::view`], [`PinnedArray::view_mut`]) first waits for the last copy
/// that used the buffer, so it never observes a transfer in flight; a copy waits for the previous
/// copy of the same buffer (on any stream); dropping the array waits for its last copy. (gpuprims
/// records these events itself: cudarc's own pinned-buffer events are off with its event
/// tracking, which gpuprims disables.)
///
/// ```no_run
/// # use gpuprims::{Border, DeviceArray, Gpu, PinnedArray};
/// let gpu = Gpu::new()?;
/// let mut host = PinnedArray::<u8, _>::zeros(&gpu, ndarray::Ix2(512, 512))?;
/// host.view_mut()?.fill(7);
/// let x = DeviceArray::upload_pinned(&gpu, &host)?;   // returns at once
/// let y = gpu.gaussian3x3(&x, Border::Reflect)?;       // enqueued after the copy
/// y.download_into(&gpu, &mut host)?;                   // returns at once
/// assert!(host.view()?.iter().all(|&v| v == 7));       // waits for the download
/// # Ok::<(), gpuprims::Error>(())
/// ```
pub struct PinnedArray<T, D: Dimension> {
    buf: PinnedHostSlice<T>,
    dim: D,
    /// Recorded after the last copy that used the buffer.
    last_copy: Mutex<Option<CudaEvent>>,
}

impl<T, D: Dimension> Drop for PinnedArray<T, D> {
    fn drop(&mut self) {
        // The memory is freed after this: a copy in flight must finish first. A failed wait
        // means the context is broken; cudarc records the error.
        if let Some(e) = self.last_copy.get_mut().unwrap_or_else(|e| e.into_inner()).take() {
            e.context().record_err(e.synchronize());
        }
    }
}

impl<T, D: Dimension> PinnedArray<T, D> {
    /// Shape, as ndarray's `shape()`.
    pub fn shape(&self) -> &[usize] {
        self.dim.slice()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.dim.size()
    }

    /// Whether the array has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Blocks the host until the last copy that used the buffer has finished.
    fn wait_host(&self) -> Result<()> {
        let taken = self.last_copy.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(e) = taken {
            e.synchronize()?;
        }
        Ok(())
    }
}

/// A pinned array and a device array of different shapes cannot be copied into each other.
fn same_shape(host: &[usize], device: &[usize]) -> Result<()> {
    if host != device {
        return Err(Error::InvalidArgument {
            name: "host",
            reason: format!("shape {host:?}, the array's is {device:?}"),
        });
    }
    Ok(())
}

/// Enqueues `copy` on `gpu`'s stream after the buffer's previous copy (`last`), and records its
/// end there.
fn copy_after(last: &Mutex<Option<CudaEvent>>, gpu: &Gpu, copy: impl FnOnce() -> Result<()>) -> Result<()> {
    let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = last.as_ref() {
        gpu.stream().wait(e)?;
    }
    copy()?;
    *last = Some(gpu.stream().record_event(None)?);
    Ok(())
}

impl<T: DeviceRepr + ValidAsZeroBits, D: Dimension> PinnedArray<T, D> {
    /// A zero-filled pinned array of shape `dim` (page-locked allocations are slow, ~ms per
    /// hundreds of MB: allocate once, reuse).
    pub fn zeros(gpu: &Gpu, dim: D) -> Result<Self> {
        let len = dim.size().max(1);
        // SAFETY: plain data; every element is written (zeroed) before the array is returned.
        // Flags 0: cached, readable by the host at full speed (write-combined memory is not).
        let mut buf = unsafe { gpu.context().alloc_pinned_with_flags::<T>(len, 0) }?;
        let ptr = buf.as_mut_ptr()?;
        // SAFETY: `ptr` addresses `len` elements of the fresh allocation; all-zero bytes are a
        // valid `T` (`ValidAsZeroBits`).
        unsafe { std::ptr::write_bytes(ptr, 0, len) };
        Ok(PinnedArray {
            buf,
            dim,
            last_copy: Mutex::new(None),
        })
    }

    /// A pinned copy of `host` (any layout).
    pub fn from_array<S: Data<Elem = T>>(gpu: &Gpu, host: &ArrayBase<S, D>) -> Result<Self>
    where
        T: Clone,
    {
        let mut p = Self::zeros(gpu, host.raw_dim())?;
        p.view_mut()?.assign(host);
        Ok(p)
    }

    /// The elements, after the last transfer that used the buffer has finished.
    pub fn view(&self) -> Result<ArrayView<'_, T, D>> {
        self.wait_host()?;
        let s = &self.buf.as_slice()?[..self.len()];
        Ok(ArrayView::from_shape(self.dim.clone(), s).expect("length matches shape"))
    }

    /// The elements for writing, after the last transfer that used the buffer has finished.
    pub fn view_mut(&mut self) -> Result<ArrayViewMut<'_, T, D>> {
        self.wait_host()?;
        let len = self.len();
        let s = &mut self.buf.as_mut_slice()?[..len];
        Ok(ArrayViewMut::from_shape(self.dim.clone(), s).expect("length matches shape"))
    }
}

impl<T: DeviceRepr + Clone, D: Dimension> DeviceArray<T, D> {
    /// Copies `host` to a new device array, asynchronously on `gpu`'s stream (the call returns
    /// before the copy ends; ops enqueued later on the stream see the data).
    pub fn upload_pinned(gpu: &Gpu, host: &PinnedArray<T, D>) -> Result<Self> {
        let mut out = Self::uninit(gpu, host.dim.clone())?;
        out.copy_from_pinned(gpu, host)?;
        Ok(out)
    }

    /// Copies `host` (same shape) into this array, asynchronously on `gpu`'s stream: reuse one
    /// device buffer per stage of a streaming pipeline, or capture the copy in a graph.
    pub fn copy_from_pinned(&mut self, gpu: &Gpu, host: &PinnedArray<T, D>) -> Result<()> {
        same_shape(host.shape(), DeviceArray::shape(self))?;
        if host.is_empty() {
            return Ok(());
        }
        let _order = gpu.order_after([self.as_slice().stream()])?;
        let mut dst = self.as_mut_slice().slice_mut(0..host.len());
        copy_after(&host.last_copy, gpu, || {
            Ok(gpu.stream().memcpy_htod(&host.buf, &mut dst)?)
        })
    }

    /// Copies the array into `host` (same shape), asynchronously on `gpu`'s stream, after the
    /// work enqueued there (and on the array's own stream) so far. Read `host` through its views,
    /// which wait for the copy.
    pub fn download_into(&self, gpu: &Gpu, host: &mut PinnedArray<T, D>) -> Result<()> {
        same_shape(host.shape(), DeviceArray::shape(self))?;
        if self.is_empty() {
            return Ok(());
        }
        let _order = gpu.order_after([self.as_slice().stream()])?;
        let src = self.as_slice().slice(0..self.len());
        copy_after(&host.last_copy, gpu, || {
            Ok(gpu.stream().memcpy_dtoh(&src, &mut host.buf)?)
        })
    }
}
