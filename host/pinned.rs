//! [`PinnedArray`]: an n-dimensional host array in page-locked memory, so uploads and downloads
//! are asynchronous DMA transfers that overlap kernels on other streams.

use cudarc::driver::{DeviceRepr, PinnedHostSlice, ValidAsZeroBits};
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
/// that used the buffer, so it never observes a transfer in flight.
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
        Ok(PinnedArray { buf, dim })
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
        let s = &self.buf.as_slice()?[..self.len()];
        Ok(ArrayView::from_shape(self.dim.clone(), s).expect("length matches shape"))
    }

    /// The elements for writing, after the last transfer that used the buffer has finished.
    pub fn view_mut(&mut self) -> Result<ArrayViewMut<'_, T, D>> {
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
        if !host.is_empty() {
            let mut dst = out.as_mut_slice().slice_mut(0..host.len());
            gpu.stream().memcpy_htod(&host.buf, &mut dst)?;
        }
        Ok(out)
    }

    /// Copies the array into `host` (same shape), asynchronously on `gpu`'s stream, after the
    /// work enqueued there (and on the array's own stream) so far. Read `host` through its views,
    /// which wait for the copy.
    pub fn download_into(&self, gpu: &Gpu, host: &mut PinnedArray<T, D>) -> Result<()> {
        if host.shape() != DeviceArray::shape(self) {
            return Err(Error::InvalidArgument {
                name: "host",
                reason: format!(
                    "shape {:?}, the array's is {:?}",
                    host.shape(),
                    DeviceArray::shape(self)
                ),
            });
        }
        if self.is_empty() {
            return Ok(());
        }
        let _order = gpu.order_after([self.as_slice().stream()])?;
        let src = self.as_slice().slice(0..self.len());
        gpu.stream().memcpy_dtoh(&src, &mut host.buf)?;
        Ok(())
    }
}
