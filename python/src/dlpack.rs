//! Device arrays in and out without copies: an input DLPack capsule's memory (the protocol CuPy
//! and PyTorch speak) becomes the operand of a gpuprims op in place, and the op's output leaves as
//! a [`DeviceBuffer`] that owns it. The buffer is a DLPack producer (`torch.from_dlpack`) and
//! shows its pointer, size, shape and dtype, so CuPy wraps it as `UnownedMemory` with the buffer
//! as owner: a third of `cupy.from_dlpack`'s host time, which the per-call overhead is made of.
//!
//! **Streams.** The op runs on the caller's stream itself (a [`Gpu::on_borrowed_stream`] handle of
//! the array's device, on the primary context CuPy and PyTorch use): it is ordered after the work
//! already queued there and before the work queued later, with no event and no host wait. When
//! the call ends, the handle's borrow ends ([`Gpu::end_borrow`]): constant banks the call used
//! keep an event of it, not the stream, which the caller may destroy.
//!
//! **Frees.** When the consumer drops an output, its buffer may still be read by work the consumer
//! queued on the caller's stream, and that stream may be gone by then (CuPy's stream objects die
//! with their scope), so nothing is queued on it from the deleter. The buffer goes to a
//! [`Graveyard`] keyed by the stream it was handed to; the next call from that stream frees it
//! there (`cuMemFreeAsync`) before its own work: after everything the caller queued, with no host
//! wait. Buffers of streams that call no more are freed after a device synchronisation once the
//! graveyard holds more than [`Graveyard::MAX_BYTES`]. This is CuPy's and PyTorch's own rule
//! (memory is reused in its stream's order); work the consumer queued on *another* stream must be
//! ordered by the consumer, as with their arrays.

use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{self, CUstream};
use cudarc::driver::{CudaContext, DeviceRepr};
use gpuprims::{DeviceArray, Gpu};
use ndarray::IxDyn;
use pyo3::exceptions::{PyBufferError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;

#[repr(C)]
#[derive(Clone, Copy)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DlManagedTensor {
    dl_tensor: DlTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}

const KDL_CUDA: i32 = 2;
const CAPSULE: &std::ffi::CStr = c"dltensor";
const USED: &std::ffi::CStr = c"used_dltensor";

/// The element types a DLPack array may have: DLPack's `(code, bits)` (0: int, 1: uint, 2: float)
/// and NumPy's name of the dtype.
pub trait DlElement: DeviceRepr + Clone + Send + Sync + 'static {
    const DTYPE: (u8, u8);
    const NAME: &'static str;
}
macro_rules! dl_element {
    ($($t:ty => $code:literal, $name:literal),*) => {$(
        impl DlElement for $t {
            const DTYPE: (u8, u8) = ($code, 8 * std::mem::size_of::<$t>() as u8);
            const NAME: &'static str = $name;
        }
    )*};
}
dl_element!(
    u8 => 1, "uint8", u16 => 1, "uint16", u32 => 1, "uint32", i16 => 0, "int16",
    i32 => 0, "int32", i64 => 0, "int64", f32 => 2, "float32", f64 => 2, "float64"
);

/// Exported buffers their consumer let go of, each with its context and the stream it was
/// handed to (see the module's "Frees").
struct Graveyard {
    buffers: Vec<Buried>,
    bytes: usize,
}

struct Buried {
    ctx: Arc<CudaContext>,
    stream: usize,
    ptr: sys::CUdeviceptr,
    bytes: usize,
}

// SAFETY: the raw stream and device pointer are plain numbers here; only driver calls use them.
unsafe impl Send for Buried {}

impl Graveyard {
    /// Past this many bytes awaiting free, the devices are synchronised and all are freed.
    const MAX_BYTES: usize = 1 << 30;

    fn get() -> std::sync::MutexGuard<'static, Graveyard> {
        static G: Mutex<Graveyard> = Mutex::new(Graveyard {
            buffers: Vec::new(),
            bytes: 0,
        });
        G.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a buffer handed to `stream` whose consumer is done with it.
    fn bury(b: Buried) {
        let mut g = Self::get();
        g.bytes += b.bytes;
        g.buffers.push(b);
        if g.bytes > Self::MAX_BYTES {
            let mut synced: Vec<sys::CUcontext> = Vec::new();
            for b in g.buffers.drain(..) {
                if b.ctx.bind_to_thread().is_err() {
                    continue; // a context that fails now fails every later call too: leak
                }
                // SAFETY: plain driver calls on the bound context; once it is synchronised no
                // queued work reads the buffer, which is freed on the legacy default stream (always
                // alive), never on the stream it was handed to.
                unsafe {
                    if !synced.contains(&b.ctx.cu_ctx()) {
                        synced.push(b.ctx.cu_ctx());
                        let _ = sys::cuCtxSynchronize();
                    }
                    let _ = sys::cuMemFreeAsync(b.ptr, std::ptr::null_mut());
                }
            }
            g.bytes = 0;
        }
    }

    /// Frees, on `gpu`'s stream (a live caller's stream, its context bound), the buffers handed
    /// to that stream: after the work the caller queued on it, before the call about to run.
    fn free_on(gpu: &Gpu) {
        let stream = gpu.stream().cu_stream();
        let mut g = Self::get();
        let mut freed = 0;
        g.buffers.retain(|b| {
            if b.stream != stream as usize || b.ctx.cu_ctx() != gpu.context().cu_ctx() {
                return true;
            }
            // SAFETY: a buffer of this context that no one uses any more, freed in the order of
            // the stream it was handed to; the pool (`cuMemAllocAsync`'s) takes it back.
            let _ = unsafe { sys::cuMemFreeAsync(b.ptr, stream) };
            freed += b.bytes;
            false
        });
        g.bytes -= freed;
    }
}

/// The caller's stream as DLPack numbers it (1: the legacy default stream, 2: per-thread).
fn caller_stream(stream: usize) -> CUstream {
    match stream {
        0 | 1 => std::ptr::null_mut(),
        2 => 0x2 as CUstream,
        s => s as CUstream,
    }
}

/// An imported operand: its array over the producer's memory, the capsule's tensor (whose
/// deleter is called when the call is enqueued) and a handle on the caller's stream.
pub struct Imported<T: DlElement> {
    array: Option<DeviceArray<T, IxDyn>>,
    managed: *mut DlManagedTensor,
    pub gpu: Gpu,
}
impl<T: DlElement> Imported<T> {
    pub fn array(&self) -> &DeviceArray<T, IxDyn> {
        self.array.as_ref().expect("present until drop")
    }
}

impl<T: DlElement> Drop for Imported<T> {
    fn drop(&mut self) {
        // The caller may destroy its stream once the call returns: no bank may keep it. A failure
        // here (a driver error) leaves the stream listed, as the op's own error would have.
        let _ = self.gpu.end_borrow();
        if let Some(a) = self.array.take() {
            // The memory is the producer's: never freed here.
            a.into_slice().leak();
        }
        // SAFETY: the capsule was consumed (renamed) by `import`, so calling its deleter is ours.
        unsafe {
            if let Some(d) = (*self.managed).deleter {
                d(self.managed);
            }
        }
    }
}

/// The dtype of a DLPack capsule's tensor: `(code, bits)`.
pub fn dtype_of(capsule: &Bound<'_, PyAny>) -> PyResult<(u8, u8)> {
    let t = tensor_of(capsule)?;
    // SAFETY: a live capsule's tensor.
    let dt = unsafe { (*t).dl_tensor.dtype };
    Ok((dt.code, dt.bits))
}

fn tensor_of(capsule: &Bound<'_, PyAny>) -> PyResult<*mut DlManagedTensor> {
    // SAFETY: PyCapsule API on a Python object; NULL with an error set when it is not a capsule
    // named "dltensor".
    let p = unsafe { ffi::PyCapsule_GetPointer(capsule.as_ptr(), CAPSULE.as_ptr()) };
    if p.is_null() {
        return Err(PyErr::take(capsule.py())
            .unwrap_or_else(|| PyTypeError::new_err("gpuprims: expected an unused DLPack capsule")));
    }
    Ok(p as *mut DlManagedTensor)
}

/// Takes a DLPack capsule of a C-contiguous CUDA array of `T` as an operand on its device,
/// ordered after the work queued on the caller's `stream`.
pub fn import<T: DlElement>(capsule: &Bound<'_, PyAny>, stream: usize) -> PyResult<Imported<T>> {
    let managed = tensor_of(capsule)?;
    // SAFETY: the capsule holds a valid DLManagedTensor until its deleter runs.
    let t = unsafe { &(*managed).dl_tensor };
    if t.device.device_type != KDL_CUDA {
        return Err(PyTypeError::new_err(format!(
            "gpuprims: a device array must live on a CUDA device, got DLPack device type {}",
            t.device.device_type
        )));
    }
    if (t.dtype.code, t.dtype.bits) != T::DTYPE || t.dtype.lanes != 1 {
        return Err(PyTypeError::new_err(
            "gpuprims: DLPack dtype does not match the op's element type",
        ));
    }
    let ndim = t.ndim.max(0) as usize;
    // SAFETY: `shape` and `strides` (when not NULL) hold `ndim` entries.
    let shape: Vec<usize> = (0..ndim).map(|i| unsafe { *t.shape.add(i) } as usize).collect();
    if !t.strides.is_null() {
        let mut expect = 1i64;
        for i in (0..ndim).rev() {
            // SAFETY: as above.
            let s = unsafe { *t.strides.add(i) };
            if shape[i] > 1 && s != expect {
                return Err(PyValueError::new_err("gpuprims: the DLPack array is not C-contiguous"));
            }
            expect *= shape[i] as i64;
        }
    }
    let base = crate::gpu_on(t.device.device_id.max(0) as usize)?;
    // SAFETY: DLPack's stream is one of the consumer's device (the primary context) that the
    // caller keeps alive through the call; every buffer the handle makes outlives the call only
    // leaked (`export`), and is freed on a stream proven alive (`Graveyard`).
    let gpu = unsafe { base.on_borrowed_stream(caller_stream(stream)) };
    gpu.context()
        .bind_to_thread()
        .map_err(|e| PyRuntimeError::new_err(format!("gpuprims: {e}")))?;
    Graveyard::free_on(&gpu);
    let len: usize = shape.iter().product();
    let ptr = t.data as u64 + t.byte_offset;
    // SAFETY: `len` elements of T from `ptr` are the producer's live allocation; the slice is
    // leaked in `Drop`, never freed by us.
    let slice = unsafe { gpu.stream().upgrade_device_ptr::<T>(ptr, len.max(1)) };
    let array = DeviceArray::from_slice(slice, IxDyn(&shape)).map_err(|e| PyValueError::new_err(e.to_string()))?;
    // SAFETY: renaming marks the capsule consumed: its destructor no longer calls the deleter.
    unsafe { ffi::PyCapsule_SetName(capsule.as_ptr(), USED.as_ptr()) };
    Ok(Imported {
        array: Some(array),
        managed,
        gpu,
    })
}

/// What an exported capsule owns: the shape its tensor points to, and the output's buffer.
struct Export {
    buffer: Buried,
    shape: Vec<i64>,
}

unsafe extern "C" fn delete_export(m: *mut DlManagedTensor) {
    // SAFETY: `manager_ctx` is the Box<Export> `DeviceBuffer::__dlpack__` leaked; the tensor is
    // ours too.
    unsafe {
        let ctx = Box::from_raw((*m).manager_ctx as *mut Export);
        Graveyard::bury(ctx.buffer);
        drop(Box::from_raw(m));
    }
}

unsafe extern "C" fn capsule_destructor(cap: *mut ffi::PyObject) {
    // SAFETY: called by Python with the capsule; an unconsumed capsule still owns its tensor.
    unsafe {
        if ffi::PyCapsule_IsValid(cap, CAPSULE.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(cap, CAPSULE.as_ptr()) as *mut DlManagedTensor;
            if let Some(d) = (*m).deleter {
                d(m);
            }
        }
    }
}

/// A gpuprims result on a device, C-contiguous, made on the caller's stream. It owns its buffer
/// until it is dropped (the buffer is then buried: see the module's "Frees") or handed on as a
/// DLPack capsule by `__dlpack__`, whose deleter buries it. CuPy keeps it as the owner of an
/// `UnownedMemory` over `ptr`.
#[pyclass(module = "gpuprims._native", frozen)]
pub struct DeviceBuffer {
    export: Mutex<Option<Export>>,
    /// The first byte.
    #[pyo3(get)]
    ptr: u64,
    /// Bytes of the elements.
    #[pyo3(get)]
    nbytes: usize,
    /// NumPy's dtype name.
    #[pyo3(get)]
    dtype: &'static str,
    #[pyo3(get)]
    device: i32,
    code: (u8, u8),
}

impl DeviceBuffer {
    /// Takes `out`, made on `gpu` (a handle on the caller's stream).
    pub fn new<T: DlElement>(gpu: &Gpu, out: DeviceArray<T, IxDyn>) -> Self {
        let shape: Vec<i64> = out.shape().iter().map(|&s| s as i64).collect();
        let data = out.into_slice();
        let nbytes = shape.iter().product::<i64>() as usize * std::mem::size_of::<T>();
        let buffer = Buried {
            ctx: gpu.context().clone(),
            stream: gpu.stream().cu_stream() as usize,
            bytes: data.num_bytes(),
            ptr: data.leak(),
        };
        DeviceBuffer {
            ptr: buffer.ptr,
            nbytes,
            dtype: T::NAME,
            device: gpu.props().ordinal as i32,
            code: T::DTYPE,
            export: Mutex::new(Some(Export { buffer, shape })),
        }
    }

    fn taken(&self) -> std::sync::MutexGuard<'_, Option<Export>> {
        self.export.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if let Some(e) = self.taken().take() {
            Graveyard::bury(e.buffer);
        }
    }
}

#[pymethods]
impl DeviceBuffer {
    /// The shape, C order.
    #[getter]
    fn shape(&self) -> PyResult<Vec<i64>> {
        match self.taken().as_ref() {
            Some(e) => Ok(e.shape.clone()),
            None => Err(PyBufferError::new_err(
                "gpuprims: the buffer was handed on by __dlpack__",
            )),
        }
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        (KDL_CUDA, self.device)
    }

    /// The buffer as a DLPack capsule (once): its consumer owns it from then on. The work that
    /// made it is on the stream the call ran on, which is the consumer's `stream`.
    #[pyo3(signature = (stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<Py<PyAny>>,
        max_version: Option<Py<PyAny>>,
        dl_device: Option<Py<PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let _ = (stream, max_version, dl_device);
        if copy == Some(true) {
            return Err(PyBufferError::new_err(
                "gpuprims: __dlpack__(copy=True) is not supported",
            ));
        }
        let Some(mut ctx) = self.taken().take() else {
            return Err(PyBufferError::new_err(
                "gpuprims: __dlpack__ was called on this buffer before",
            ));
        };
        let managed = Box::new(DlManagedTensor {
            dl_tensor: DlTensor {
                data: self.ptr as *mut c_void,
                device: DlDevice {
                    device_type: KDL_CUDA,
                    device_id: self.device,
                },
                ndim: ctx.shape.len() as i32,
                dtype: DlDataType {
                    code: self.code.0,
                    bits: self.code.1,
                    lanes: 1,
                },
                shape: ctx.shape.as_mut_ptr(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_export),
        });
        let m = Box::into_raw(managed);
        // SAFETY: `m` is ours; the context lives until the deleter runs.
        unsafe {
            (*m).manager_ctx = Box::into_raw(Box::new(ctx)) as *mut c_void;
            let cap = ffi::PyCapsule_New(
                m as *mut c_void,
                CAPSULE.as_ptr() as *const c_char,
                Some(capsule_destructor),
            );
            if cap.is_null() {
                delete_export(m);
                return Err(PyErr::fetch(py));
            }
            Ok(Bound::from_owned_ptr(py, cap).unbind())
        }
    }
}
