//! Device arrays in and out without copies, through DLPack capsules (the protocol CuPy and
//! PyTorch speak): an input capsule's memory becomes the operand of a gpuprims op in place, and the
//! op's output leaves as a capsule that owns the `DeviceArray`.
//!
//! **Streams.** gpuprims runs on its own stream of the array's device (the primary context, the
//! one CuPy and PyTorch use). A call is ordered after the work already queued on the caller's
//! stream and before the work queued there later, with no host synchronisation: an event recorded
//! on the caller's stream is waited on by gpuprims's stream before the op, and an event recorded
//! after the op is waited on by the caller's stream.
//!
//! **Frees.** When the consumer drops an output, its buffer may still be read by work the consumer
//! queued on the caller's stream, and that stream may be gone by then (CuPy's stream objects die
//! with their scope), so nothing is recorded on it. The buffer goes to a [`Graveyard`] keyed by the
//! stream it was handed to; the next call from that stream, once gpuprims's stream waits for it,
//! frees the buffer stream-ordered on gpuprims's stream (`cuMemFreeAsync`): after everything the
//! caller queued, with no host synchronisation. Buffers of streams that call no more are freed
//! after a device synchronisation once the graveyard holds more than [`Graveyard::MAX_BYTES`].
//! This is CuPy's and PyTorch's own rule (memory is reused in its stream's order); work the
//! consumer queued on *another* stream must be ordered by the consumer, as with their arrays.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::{Mutex, OnceLock};

use cudarc::driver::sys::{self, CUevent, CUstream};
use cudarc::driver::{DevicePtr, DeviceRepr};
use gpuprims::{DeviceArray, Gpu};
use ndarray::IxDyn;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
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

/// The element types a DLPack array may have: DLPack's `(code, bits)` (0: int, 1: uint, 2: float).
pub trait DlElement: DeviceRepr + Clone + Send + Sync + 'static {
    const DTYPE: (u8, u8);
}
macro_rules! dl_element {
    ($($t:ty => $code:literal),*) => {$(
        impl DlElement for $t {
            const DTYPE: (u8, u8) = ($code, 8 * std::mem::size_of::<$t>() as u8);
        }
    )*};
}
dl_element!(u8 => 1, u16 => 1, u32 => 1, i16 => 0, i32 => 0, i64 => 0, f32 => 2, f64 => 2);

/// One `Gpu` (stream) per device ordinal, opened on first use.
fn gpu_of(device: usize) -> PyResult<Gpu> {
    static GPUS: OnceLock<Mutex<HashMap<usize, Gpu>>> = OnceLock::new();
    let mut map = GPUS.get_or_init(Default::default).lock().expect("no panic holds it");
    if let Some(g) = map.get(&device) {
        return Ok(g.clone());
    }
    let g = Gpu::with_device(device).map_err(|e| PyRuntimeError::new_err(format!("gpuprims: device {device}: {e}")))?;
    map.insert(device, g.clone());
    Ok(g)
}

fn driver(r: sys::CUresult, what: &str) -> PyResult<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(PyRuntimeError::new_err(format!("gpuprims: {what} failed: {r:?}")))
    }
}

/// Makes `waiter` wait for the work queued on `on` so far (an event, no host synchronisation).
fn order(gpu: &Gpu, on: CUstream, waiter: CUstream) -> PyResult<()> {
    if on == waiter {
        return Ok(());
    }
    gpu.stream()
        .context()
        .bind_to_thread()
        .map_err(|e| PyRuntimeError::new_err(format!("gpuprims: {e}")))?;
    let mut ev: CUevent = std::ptr::null_mut();
    // SAFETY: plain driver calls on the current (primary) context; the event is destroyed once
    // the wait is enqueued (the driver keeps it until the wait completes).
    unsafe {
        driver(
            sys::cuEventCreate(&mut ev, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32),
            "cuEventCreate",
        )?;
        driver(sys::cuEventRecord(ev, on), "cuEventRecord")?;
        driver(sys::cuStreamWaitEvent(waiter, ev, 0), "cuStreamWaitEvent")?;
        driver(sys::cuEventDestroy_v2(ev), "cuEventDestroy")?;
    }
    Ok(())
}

/// Exported buffers their consumer let go of, each with the stream it was handed to (see the
/// module's "Frees").
struct Graveyard {
    buffers: Vec<(usize, usize, Box<dyn Send>)>,
    bytes: usize,
}

impl Graveyard {
    /// Past this many bytes awaiting free, the device is synchronised and all are freed.
    const MAX_BYTES: usize = 1 << 30;

    fn get() -> &'static Mutex<Graveyard> {
        static G: OnceLock<Mutex<Graveyard>> = OnceLock::new();
        G.get_or_init(|| {
            Mutex::new(Graveyard {
                buffers: Vec::new(),
                bytes: 0,
            })
        })
    }

    /// Takes a buffer handed to `stream` whose consumer is done with it.
    fn bury(gpu: &Gpu, stream: CUstream, bytes: usize, buffer: Box<dyn Send>) {
        let mut g = Self::get().lock().unwrap_or_else(|p| p.into_inner());
        g.buffers.push((stream as usize, bytes, buffer));
        g.bytes += bytes;
        if g.bytes > Self::MAX_BYTES && gpu.stream().context().bind_to_thread().is_ok() {
            // SAFETY: a plain driver call on the bound (primary) context.
            let _ = unsafe { sys::cuCtxSynchronize() };
            g.buffers.clear();
            g.bytes = 0;
        }
    }

    /// Frees the buffers handed to `stream` (gpuprims's stream already waits for it): their drop
    /// frees stream-ordered on gpuprims's stream.
    fn free_after(stream: CUstream) {
        let mut g = Self::get().lock().unwrap_or_else(|p| p.into_inner());
        let mut freed = 0;
        g.buffers.retain(|(s, bytes, _)| {
            let keep = *s != stream as usize;
            freed += if keep { 0 } else { *bytes };
            keep
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
/// deleter is called when the call is enqueued) and the device.
pub struct Imported<T: DlElement> {
    array: Option<DeviceArray<T, IxDyn>>,
    managed: *mut DlManagedTensor,
    pub gpu: Gpu,
    pub stream: CUstream,
}

impl<T: DlElement> Imported<T> {
    pub fn array(&self) -> &DeviceArray<T, IxDyn> {
        self.array.as_ref().expect("present until drop")
    }
}

impl<T: DlElement> Drop for Imported<T> {
    fn drop(&mut self) {
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
    let gpu = gpu_of(t.device.device_id.max(0) as usize)?;
    let caller = caller_stream(stream);
    order(&gpu, caller, gpu.stream().cu_stream())?;
    Graveyard::free_after(caller);
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
        stream: caller,
    })
}

/// What an exported capsule owns: the shape its tensor points to, and the output's buffer (in
/// the closure that frees it after the caller's stream's work).
struct Export {
    free: Box<dyn FnOnce() + Send>,
    shape: Vec<i64>,
}

unsafe extern "C" fn delete_export(m: *mut DlManagedTensor) {
    // SAFETY: `manager_ctx` is the Box<Export> `export` leaked; the tensor is ours too.
    unsafe {
        let ctx = Box::from_raw((*m).manager_ctx as *mut Export);
        (ctx.free)();
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

/// Hands `out` (on `gpu`'s stream) to the caller as a DLPack capsule: the caller's stream waits
/// for the op; the capsule's deleter orders the free after the caller's later work.
pub fn export<T: DlElement>(
    py: Python<'_>,
    gpu: &Gpu,
    caller: CUstream,
    out: DeviceArray<T, IxDyn>,
) -> PyResult<Py<PyAny>> {
    let mine = gpu.stream().cu_stream();
    order(gpu, mine, caller)?;
    let shape: Vec<i64> = out.shape().iter().map(|&s| s as i64).collect();
    let ndim = shape.len() as i32;
    let ptr = {
        let (ptr, _sync) = out.as_slice().device_ptr(gpu.stream());
        ptr
    };
    let device_id = gpu.props().ordinal as i32;
    let g = gpu.clone();
    let data = out.into_slice();
    let bytes = data.num_bytes();
    let caller_id = caller as usize;
    let free: Box<dyn FnOnce() + Send> =
        Box::new(move || Graveyard::bury(&g, caller_id as CUstream, bytes, Box::new(data)));
    let mut ctx = Box::new(Export { free, shape });
    let managed = Box::new(DlManagedTensor {
        dl_tensor: DlTensor {
            data: ptr as *mut c_void,
            device: DlDevice {
                device_type: KDL_CUDA,
                device_id,
            },
            ndim,
            dtype: DlDataType {
                code: T::DTYPE.0,
                bits: T::DTYPE.1,
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
        (*m).manager_ctx = Box::into_raw(ctx) as *mut c_void;
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
