//! [`DeviceArray`]: an n-dimensional array resident on the device, and [`Operand`], what every op
//! accepts (host arrays and views, or device arrays).

use cudarc::driver::{CudaSlice, DeviceRepr};
use ndarray::{Array, ArrayBase, Data, Dimension};

use crate::error::{Error, Result};
use crate::gpu::{Gpu, StreamOrder};

/// A shape-aware, contiguous (C order) device buffer. Chain ops on it without host round trips.
///
/// An empty array still owns a one-element allocation (the driver allocates no zero-byte
/// buffers); [`DeviceArray::as_slice`] may therefore be longer than [`DeviceArray::len`].
pub struct DeviceArray<T, D: Dimension> {
    data: CudaSlice<T>,
    dim: D,
}

impl<T: DeviceRepr + Clone, D: Dimension> DeviceArray<T, D> {
    /// Copies `host` to the device. Views with any strides are accepted: a non-contiguous view is
    /// first copied into a contiguous (C-order) host buffer (`as_standard_layout`), a contiguous one
    /// is uploaded directly.
    pub fn upload<S: Data<Elem = T>>(gpu: &Gpu, host: &ArrayBase<S, D>) -> Result<Self> {
        if host.is_empty() {
            return Self::uninit(gpu, host.raw_dim());
        }
        let std = host.as_standard_layout();
        let slice = std.as_slice().expect("standard layout is contiguous");
        let data = gpu.stream().clone_htod(slice)?;
        Ok(DeviceArray {
            data,
            dim: host.raw_dim(),
        })
    }

    /// An array of shape `dim` whose elements are not initialized: for outputs that a kernel
    /// writes in full before anyone reads them. With `GPUPRIMS_POISON_OUTPUTS=1` in the
    /// environment (the tests set it) the elements are poisoned instead (all-one bytes: NaN for
    /// floats, the maximum for unsigned integers), so an element an op fails to write shows.
    pub fn uninit(gpu: &Gpu, dim: D) -> Result<Self> {
        // SAFETY: `T: DeviceRepr` is plain data; callers write every element before reading it
        // (the ops that create outputs launch kernels covering every element).
        let mut data = unsafe { gpu.stream().alloc::<T>(dim.size().max(1)) }?;
        if poison_outputs() {
            gpu.poison(&mut data)?;
        }
        Ok(DeviceArray { data, dim })
    }

    /// An array of shape `dim` over the device buffer `data` (C order; `data` holds at least
    /// `dim.size()` elements, else [`Error::InvalidArgument`]): memory that another library
    /// allocated (a buffer imported through DLPack, say) taken as an operand. The array owns
    /// `data`: take it back with [`DeviceArray::into_slice`] to keep it from being freed.
    pub fn from_slice(data: CudaSlice<T>, dim: D) -> Result<Self> {
        if data.len() < dim.size() {
            return Err(Error::InvalidArgument {
                name: "data",
                reason: format!(
                    "holds {} elements, shape {:?} needs {}",
                    data.len(),
                    dim.slice(),
                    dim.size()
                ),
            });
        }
        Ok(DeviceArray { data, dim })
    }

    /// The device buffer, and with it the ownership of the memory.
    pub fn into_slice(self) -> CudaSlice<T> {
        self.data
    }

    /// Copies the array back into an owned host `Array`, on `gpu`'s stream (after the work
    /// enqueued there, and on the array's own stream, so far); synchronizes that stream.
    pub fn download(&self, gpu: &Gpu) -> Result<Array<T, D>> {
        let v = if self.is_empty() {
            Vec::new()
        } else {
            let _order = gpu.order_after([self.data.stream()])?;
            gpu.stream().clone_dtoh(&self.data)?
        };
        Ok(Array::from_shape_vec(self.dim.clone(), v).expect("length matches shape"))
    }
}

impl<T, D: Dimension> DeviceArray<T, D> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.dim.size()
    }

    /// Whether the array has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Shape, as ndarray's `shape()`.
    pub fn shape(&self) -> &[usize] {
        self.dim.slice()
    }

    /// The shape as an ndarray dimension.
    pub fn raw_dim(&self) -> D {
        self.dim.clone()
    }

    /// The underlying device buffer (C order).
    pub fn as_slice(&self) -> &CudaSlice<T> {
        &self.data
    }

    /// The underlying device buffer (C order), for writing.
    pub fn as_mut_slice(&mut self) -> &mut CudaSlice<T> {
        &mut self.data
    }
}

/// Whether `GPUPRIMS_POISON_OUTPUTS=1` asks for poisoned output allocations (read once).
fn poison_outputs() -> bool {
    static POISON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *POISON.get_or_init(|| std::env::var("GPUPRIMS_POISON_OUTPUTS").is_ok_and(|v| v == "1"))
}

/// A contiguous device buffer an op reads: borrowed from a [`DeviceArray`] or freshly uploaded.
/// A borrowed buffer of another stream carries the order that [`Gpu`]'s stream docs describe:
/// the op waits for that stream's work so far, and that stream waits for the op when this drops.
pub struct InputSlice<'a, T> {
    buf: Buf<'a, T>,
    _order: Option<StreamOrder>,
}

enum Buf<'a, T> {
    Borrowed(&'a CudaSlice<T>),
    Owned(CudaSlice<T>),
}

impl<'a, T> InputSlice<'a, T> {
    /// A buffer of another array, used in place on `gpu`'s stream.
    fn borrowed(gpu: &Gpu, data: &'a CudaSlice<T>) -> Result<Self> {
        Ok(InputSlice {
            _order: Some(gpu.order_after([data.stream()])?),
            buf: Buf::Borrowed(data),
        })
    }

    /// A buffer uploaded for this op on its stream.
    fn owned(data: CudaSlice<T>) -> Self {
        InputSlice {
            buf: Buf::Owned(data),
            _order: None,
        }
    }

    /// The device buffer.
    pub fn slice(&self) -> &CudaSlice<T> {
        match &self.buf {
            Buf::Borrowed(s) => s,
            Buf::Owned(s) => s,
        }
    }
}

/// What every op accepts and what it gives back: a host `ndarray` (owned or a view, any layout;
/// uploaded per call — a non-contiguous view through a contiguous copy — and the result
/// downloaded into an owned [`Array`]) or a [`DeviceArray`] (used in place, the result left on the
/// device as a `DeviceArray`, so ops chain without host round trips). Empty inputs are never
/// uploaded.
///
/// The element type and dimension are associated types, so an op's only type parameters are the
/// operand and, where an op has a choice of output type, that type (`window_sum_sumsq::<f32, _>`).
pub trait Operand {
    /// The element type.
    type Elem: DeviceRepr;
    /// The dimension (`Ix2`, `IxDyn`, …).
    type Dim: Dimension;
    /// The result type for elements `U`: `Array<U, Self::Dim>` or `DeviceArray<U, Self::Dim>`.
    type Output<U: DeviceRepr + Clone>;
    /// The operand's shape.
    fn dims(&self) -> Self::Dim;
    /// Number of elements.
    fn len(&self) -> usize {
        self.dims().size()
    }
    /// Whether the operand has no element.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The contiguous device buffer holding the elements in C order (`None` when empty).
    fn device(&self, gpu: &Gpu) -> Result<Option<InputSlice<'_, Self::Elem>>>;
    /// Turns a device result into this operand's output form.
    fn finish<U: DeviceRepr + Clone>(gpu: &Gpu, out: DeviceArray<U, Self::Dim>) -> Result<Self::Output<U>>;
}

impl<T: DeviceRepr + Clone, S: Data<Elem = T>, D: Dimension> Operand for &ArrayBase<S, D> {
    type Elem = T;
    type Dim = D;
    type Output<U: DeviceRepr + Clone> = Array<U, D>;
    fn dims(&self) -> D {
        self.raw_dim()
    }
    fn device(&self, gpu: &Gpu) -> Result<Option<InputSlice<'_, T>>> {
        if ArrayBase::is_empty(self) {
            return Ok(None);
        }
        let std = self.as_standard_layout();
        let slice = std.as_slice().expect("standard layout is contiguous");
        Ok(Some(InputSlice::owned(gpu.stream().clone_htod(slice)?)))
    }
    fn finish<U: DeviceRepr + Clone>(gpu: &Gpu, out: DeviceArray<U, D>) -> Result<Array<U, D>> {
        out.download(gpu)
    }
}

impl<T: DeviceRepr, D: Dimension> Operand for &DeviceArray<T, D> {
    type Elem = T;
    type Dim = D;
    type Output<U: DeviceRepr + Clone> = DeviceArray<U, D>;
    fn dims(&self) -> D {
        self.raw_dim()
    }
    fn device(&self, gpu: &Gpu) -> Result<Option<InputSlice<'_, T>>> {
        if DeviceArray::is_empty(self) {
            return Ok(None);
        }
        InputSlice::borrowed(gpu, &self.data).map(Some)
    }
    fn finish<U: DeviceRepr + Clone>(_gpu: &Gpu, out: DeviceArray<U, D>) -> Result<DeviceArray<U, D>> {
        Ok(out)
    }
}
