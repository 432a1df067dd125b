//! `gpuprims._native`: the Rust core behind the Python package (PyO3, stable ABI).
//!
//! Each function takes one array argument ([`Arg`]) and the parameters already checked and
//! normalized by `gpuprims/__init__.py` (scipy's or torch's names and conventions), runs the one
//! Rust implementation with the GIL released, and returns its results in the argument's kind:
//! - a NumPy array runs on device 0 and gets new NumPy arrays back;
//! - a CUDA array, given as `(DLPack capsule, caller's stream)`, runs in place on its own device,
//!   ordered on the caller's stream, and gets [`dlpack::DeviceBuffer`]s back.
//!
//! Both kinds go through one generic body per op ([`with_operand!`]), so the host and device
//! paths cannot drift apart. The input is never modified.

use std::sync::Mutex;

use gpuprims::{
    AvgPool2d, AxisElement, Border, Chain, ChainOutput, DeviceArray, Error, Filter2dElement, Gpu, MomentsFloat,
    Operand, Pool2d, Rounding,
};

mod dlpack;
use dlpack::DlElement;
use ndarray::{Array, Dimension, IxDyn};
use numpy::{IntoPyArray, PyReadonlyArrayDyn};
use pyo3::BoundObject;
use pyo3::exceptions::{PyNotImplementedError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// The process's handle on CUDA device `ordinal`, opened on first use and shared by every call
/// there (NumPy arrays run on device 0's own stream; device arrays on their caller's stream, with
/// the same kernels); `Err` says why there is none.
fn gpu_on(ordinal: usize) -> PyResult<Gpu> {
    static GPUS: Mutex<Vec<(usize, Result<Gpu, String>)>> = Mutex::new(Vec::new());
    let mut gpus = GPUS.lock().unwrap_or_else(|p| p.into_inner());
    let opened = match gpus.iter().position(|(o, _)| *o == ordinal) {
        Some(i) => &gpus[i].1,
        None => {
            gpus.push((ordinal, Gpu::with_device(ordinal).map_err(|e| e.to_string())));
            &gpus[gpus.len() - 1].1
        }
    };
    opened
        .clone()
        .map_err(|why| PyRuntimeError::new_err(format!("gpuprims: no usable CUDA device: {why}")))
}

/// Device 0's handle, for NumPy arrays.
fn gpu() -> PyResult<Gpu> {
    gpu_on(0)
}

/// gpuprims's typed errors as Python exceptions: bad arguments are `ValueError`, what a variant
/// or type cannot run is `NotImplementedError`, the rest (driver, device) `RuntimeError`.
fn py_err(e: Error) -> PyErr {
    let msg = format!("gpuprims: {e}");
    match e {
        Error::InvalidArgument { .. } | Error::EmptyInput { .. } | Error::WindowTooLarge { .. } => {
            PyValueError::new_err(msg)
        }
        Error::TooManyElements { .. } | Error::TooManyTaps { .. } | Error::Unsupported { .. } => {
            PyNotImplementedError::new_err(msg)
        }
        _ => PyRuntimeError::new_err(msg),
    }
}

/// scipy's `mode` and `cval` as a [`Border`] (the Python layer has already mapped scipy's aliases).
fn border(mode: &str, cval: f64) -> PyResult<Border> {
    Ok(match mode {
        "constant" if cval == 0.0 => Border::Zero,
        "constant" => Border::Constant(cval),
        "nearest" => Border::Replicate,
        "reflect" => Border::Reflect,
        "mirror" => Border::Mirror,
        "wrap" => Border::Wrap,
        other => return Err(PyValueError::new_err(format!("gpuprims: unknown mode {other:?}"))),
    })
}

/// A NumPy array of one of the dtypes some op takes.
#[derive(FromPyObject)]
enum In<'py> {
    U8(PyReadonlyArrayDyn<'py, u8>),
    U16(PyReadonlyArrayDyn<'py, u16>),
    I32(PyReadonlyArrayDyn<'py, i32>),
    U32(PyReadonlyArrayDyn<'py, u32>),
    F32(PyReadonlyArrayDyn<'py, f32>),
    F64(PyReadonlyArrayDyn<'py, f64>),
}

impl In<'_> {
    fn dtype(&self) -> &'static str {
        match self {
            In::U8(_) => "uint8",
            In::U16(_) => "uint16",
            In::I32(_) => "int32",
            In::U32(_) => "uint32",
            In::F32(_) => "float32",
            In::F64(_) => "float64",
        }
    }
}

/// An op's array argument: a NumPy array, or a CUDA array as `(DLPack capsule, caller's stream)`.
/// The tuple is tried first: a failed extraction of `In` (every NumPy dtype) formats an error
/// naming each, which a device call would pay on every call.
#[derive(FromPyObject)]
enum Arg<'py> {
    Device((Bound<'py, PyAny>, usize)),
    Host(In<'py>),
}

fn unsupported(op: &str, dtype: impl std::fmt::Display, takes: &str) -> PyErr {
    PyTypeError::new_err(format!("gpuprims.{op} takes {takes} arrays, got {dtype}"))
}

/// Where results go: NumPy arrays, or device buffers made on the caller's stream.
enum Sink<'a> {
    Host,
    /// A handle on the caller's stream.
    Device(&'a Gpu),
}

/// A result Python gets back: arrays in the argument's kind, tuples, scalars.
trait Emit {
    fn emit(self, py: Python<'_>, sink: &Sink<'_>) -> PyResult<Py<PyAny>>;
}

impl<T: numpy::Element, D: Dimension> Emit for Array<T, D> {
    fn emit(self, py: Python<'_>, _: &Sink<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.into_dyn().into_pyarray(py).into_any().unbind())
    }
}

impl<T: DlElement> Emit for DeviceArray<T, IxDyn> {
    fn emit(self, py: Python<'_>, sink: &Sink<'_>) -> PyResult<Py<PyAny>> {
        match sink {
            Sink::Device(g) => Ok(Py::new(py, dlpack::DeviceBuffer::new(g, self))?.into_any()),
            Sink::Host => Err(PyRuntimeError::new_err("gpuprims: a device result for a NumPy call")),
        }
    }
}

impl<A: Emit, B: Emit> Emit for (A, B) {
    fn emit(self, py: Python<'_>, sink: &Sink<'_>) -> PyResult<Py<PyAny>> {
        let (a, b) = (self.0.emit(py, sink)?, self.1.emit(py, sink)?);
        Ok(PyTuple::new(py, [a, b])?.into_any().unbind())
    }
}

/// A plain Python value (reductions' scalars).
struct Value<V>(V);

impl<V: for<'py> IntoPyObject<'py>> Emit for Value<V> {
    fn emit(self, py: Python<'_>, _: &Sink<'_>) -> PyResult<Py<PyAny>> {
        self.0
            .into_pyobject(py)
            .map(|v| v.into_any().unbind())
            .map_err(|e| e.into())
    }
}

/// Runs `$body` (a `Result` of something [`Emit`]) with `$g: &Gpu` and `$x` an [`Operand`] of
/// element type `$t`, for the dtypes listed, over either kind of [`Arg`]:
/// - a NumPy array: a view, on device 0;
/// - a DLPack array: imported in place on its own device, ordered after the caller's stream;
///
/// with the GIL released while it runs. Other dtypes raise `TypeError` naming `$takes`.
macro_rules! with_operand {
    ($py:expr, $arg:expr, $op:literal, $takes:literal, [$($v:ident: $t:ty),*], |$g:ident, $x:ident| $body:expr) => {{
        let py: Python<'_> = $py;
        match $arg {
            Arg::Host(host) => match host {
                $(In::$v(arr) => {
                    let view = arr.as_array();
                    let gpu = gpu()?;
                    let $g: &Gpu = &gpu;
                    let r = py.detach(|| { let $x = &view; $body }).map_err(py_err)?;
                    r.emit(py, &Sink::Host)
                })*
                #[allow(unreachable_patterns)]
                other => Err(unsupported($op, other.dtype(), $takes)),
            },
            Arg::Device((capsule, stream)) => match dlpack::dtype_of(&capsule)? {
                $(dt if dt == <$t as DlElement>::DTYPE => {
                    let input = dlpack::import::<$t>(&capsule, stream)?;
                    let $g: &Gpu = &input.gpu;
                    let array = input.array();
                    let r = py.detach(|| { let $x = array; $body }).map_err(py_err)?;
                    r.emit(py, &Sink::Device($g))
                })*
                (code, bits) => Err(unsupported($op, format_args!("DLPack (code {code}, {bits} bits)"), $takes)),
            },
        }
    }};
}

/// An n-D op the Python layer asks for, its parameters already checked.
enum NdOp {
    /// dilation, erosion, opening, closing, gradient: sizes per axis.
    Morph(String, Vec<usize>),
    /// correlate1d: taps, axis.
    Correlate1d(Vec<f64>, usize),
    /// gaussian_filter: sigmas per axis, truncate.
    Gaussian(Vec<f64>, f64),
    /// sobel: axis.
    Sobel(usize),
}

/// Runs a filter `op` on any operand of an element every filter takes.
fn filter<T: Filter2dElement + AxisElement, X: Operand<Elem = T>>(
    g: &Gpu,
    x: X,
    op: &NdOp,
    b: Border,
) -> Result<X::Output<T>, Error> {
    match op {
        NdOp::Morph(kind, sizes) => match kind.as_str() {
            "dilation" => g.dilate_nd(x, sizes, b),
            "erosion" => g.erode_nd(x, sizes, b),
            "opening" => g.opening_nd(x, sizes, b),
            "closing" => g.closing_nd(x, sizes, b),
            _ => g.morphological_gradient_nd(x, sizes, b),
        },
        NdOp::Correlate1d(taps, axis) => g.correlate1d(x, taps, *axis, b),
        NdOp::Gaussian(sigmas, truncate) => g.gaussian_nd(x, sigmas, *truncate, b),
        NdOp::Sobel(axis) => g.sobel_nd(x, *axis, b),
    }
}

/// An n-D scipy.ndimage op: an array of the input's dtype and shape.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (x, op, ints, floats, axis, truncate, mode, cval))]
fn nd(
    py: Python<'_>,
    x: Arg<'_>,
    op: &str,
    ints: Vec<usize>,
    floats: Vec<f64>,
    axis: usize,
    truncate: f64,
    mode: &str,
    cval: f64,
) -> PyResult<Py<PyAny>> {
    let b = border(mode, cval)?;
    let op = match op {
        "uniform" => {
            return with_operand!(py, x, "uniform_filter", "uint8, uint16, float32 or float64",
                [U8: u8, U16: u16, F32: f32, F64: f64], |g, a| g.uniform_filter_nd(a, &ints, b));
        }
        "dilation" | "erosion" | "opening" | "closing" | "gradient" => NdOp::Morph(op.into(), ints),
        "correlate1d" => NdOp::Correlate1d(floats, axis),
        "gaussian" => NdOp::Gaussian(floats, truncate),
        "sobel" => NdOp::Sobel(axis),
        other => return Err(PyValueError::new_err(format!("gpuprims: unknown op {other:?}"))),
    };
    with_operand!(py, x, "filter", "uint8, uint16 or float32", [U8: u8, U16: u16, F32: f32], |g, a| filter(
        g, a, &op, b
    ))
}

/// scipy's `sobel(x, axis, output=int16)` of a 2-D uint8 array in one 3 × 3 pass (exact int16).
#[pyfunction]
fn sobel2d_u8(py: Python<'_>, x: Arg<'_>, axis: usize, mode: &str, cval: f64) -> PyResult<Py<PyAny>> {
    let b = border(mode, cval)?;
    with_operand!(py, x, "sobel", "uint8", [U8: u8], |g, a| g.sobel(a, axis, b))
}

/// gpuprims's local mean and population variance over boxes of `sizes`, as float32 or float64.
#[pyfunction]
fn local_mean_variance(
    py: Python<'_>,
    x: Arg<'_>,
    sizes: Vec<usize>,
    mode: &str,
    cval: f64,
    double: bool,
) -> PyResult<Py<PyAny>> {
    fn run<F: MomentsFloat + DlElement + numpy::Element>(
        py: Python<'_>,
        x: Arg<'_>,
        sizes: &[usize],
        b: Border,
    ) -> PyResult<Py<PyAny>> {
        with_operand!(py, x, "local_mean_variance", "uint8, uint16, float32 or float64",
            [U8: u8, U16: u16, F32: f32, F64: f64], |g, a| g.local_mean_variance_nd::<F, _, _>(a, sizes, b))
    }
    let b = border(mode, cval)?;
    if double {
        run::<f64>(py, x, &sizes, b)
    } else {
        run::<f32>(py, x, &sizes, b)
    }
}

/// torch's `max_pool2d` over the last two axes; with `indices`, also the flat argmax per plane
/// (int64), as a pair.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
fn max_pool2d(
    py: Python<'_>,
    x: Arg<'_>,
    kernel: (usize, usize),
    stride: (usize, usize),
    padding: (usize, usize),
    dilation: (usize, usize),
    ceil_mode: bool,
    indices: bool,
) -> PyResult<Py<PyAny>> {
    let p = Pool2d::new(kernel)
        .stride(stride)
        .padding(padding)
        .dilation(dilation)
        .ceil_mode(ceil_mode);
    if indices {
        with_operand!(py, x, "max_pool2d", "uint8, uint16, float32 or float64",
            [U8: u8, U16: u16, F32: f32, F64: f64], |g, a| g.max_pool2d_indices(a, p))
    } else {
        with_operand!(py, x, "max_pool2d", "uint8, uint16, float32 or float64",
            [U8: u8, U16: u16, F32: f32, F64: f64], |g, a| g.max_pool2d(a, p))
    }
}

/// torch's `avg_pool2d` over the last two axes (float32, float64).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
fn avg_pool2d(
    py: Python<'_>,
    x: Arg<'_>,
    kernel: (usize, usize),
    stride: (usize, usize),
    padding: (usize, usize),
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Option<i32>,
) -> PyResult<Py<PyAny>> {
    let p = AvgPool2d::new(kernel)
        .stride(stride)
        .padding(padding)
        .ceil_mode(ceil_mode)
        .count_include_pad(count_include_pad)
        .divisor_override(divisor_override);
    with_operand!(py, x, "avg_pool2d", "float32 or float64", [F32: f32, F64: f64], |g, a| g.avg_pool2d(a, p))
}

/// gpuprims's reductions: `sum` and `sum_of_squares` (exact integers of any size for integer
/// inputs, f64 for floats), `min`, `max` (NaN propagates), `mean_variance` (a pair of floats).
#[pyfunction]
fn reduce(py: Python<'_>, x: Arg<'_>, op: &str) -> PyResult<Py<PyAny>> {
    macro_rules! reduction {
        ($name:literal, |$g:ident, $a:ident| $body:expr) => {
            with_operand!(py, x, $name, "uint8, int32, uint32, float32 or float64",
                [U8: u8, I32: i32, U32: u32, F32: f32, F64: f64], |$g, $a| $body)
        };
    }
    match op {
        "sum" => reduction!("sum", |g, a| g.sum(a).map(Value)),
        "sum_of_squares" => reduction!("sum_of_squares", |g, a| g.sum_of_squares(a).map(Value)),
        "min" => reduction!("min", |g, a| g.min(a).map(Value)),
        "max" => reduction!("max", |g, a| g.max(a).map(Value)),
        "mean_variance" => reduction!("mean_variance", |g, a| g
            .mean_variance(a)
            .map(|m| Value((m.mean, m.variance)))),
        other => Err(PyValueError::new_err(format!("gpuprims: unknown reduction {other:?}"))),
    }
}

/// 2D correlation of float32 planes (the last two axes) with `weights`, a `(kh, kw)` float32
/// kernel in C order, centred at `(kh / 2, kw / 2)`: the f32 sums of [`Gpu::correlate2d`].
#[pyfunction]
fn correlate2d(
    py: Python<'_>,
    x: Arg<'_>,
    weights: Vec<f32>,
    kernel: (usize, usize),
    mode: &str,
    cval: f64,
) -> PyResult<Py<PyAny>> {
    let b = border(mode, cval)?;
    let k = ndarray::ArrayView2::from_shape(kernel, &weights).map_err(|_| {
        PyValueError::new_err(format!(
            "gpuprims: {} weights for a {} × {} kernel",
            weights.len(),
            kernel.0,
            kernel.1
        ))
    })?;
    with_operand!(py, x, "correlate", "float32", [F32: f32], |g, a| g.correlate2d(a, k, b))
}

/// The 3 × 3 Gaussian `[1 2 1]ᵀ[1 2 1] / 16` over the last two axes: integers rounded half up,
/// or truncated as the classic tutorial's kernel (`truncate`).
#[pyfunction]
fn gaussian3x3(py: Python<'_>, x: Arg<'_>, truncate: bool, mode: &str, cval: f64) -> PyResult<Py<PyAny>> {
    let b = border(mode, cval)?;
    let r = if truncate { Rounding::Truncate } else { Rounding::HalfUp };
    with_operand!(py, x, "gaussian3x3", "uint8, uint16 or float32", [U8: u8, U16: u16, F32: f32], |g, a| g
        .gaussian3x3_rounding(a, b, r))
}

/// Window sums and sums of squares along the last axis, as float32 or float64 (float64 samples
/// always give float64).
#[pyfunction]
fn window_sum_sumsq(
    py: Python<'_>,
    x: Arg<'_>,
    width: usize,
    mode: &str,
    cval: f64,
    double: bool,
) -> PyResult<Py<PyAny>> {
    let b = border(mode, cval)?;
    if double {
        with_operand!(py, x, "window_sum_sumsq", "uint8, uint16, float32 or float64",
            [U8: u8, U16: u16, F32: f32, F64: f64], |g, a| g.window_sum_sumsq::<f64, _>(a, width, b))
    } else {
        with_operand!(py, x, "window_sum_sumsq", "uint8, uint16, float32 or float64",
            [U8: u8, U16: u16, F32: f32], |g, a| g.window_sum_sumsq::<f32, _>(a, width, b))
    }
}

/// A fused chain of u8 steps (`(name, params)`, see `gpuprims.Chain`) over the last two axes, in
/// one pass: u8 out, or int16 after `sobel`, float32 after `sobel_magnitude`.
#[pyfunction]
fn chain(py: Python<'_>, x: Arg<'_>, steps: Vec<(String, Vec<f64>)>, mode: &str, cval: f64) -> PyResult<Py<PyAny>> {
    let b = border(mode, cval)?;
    let mut c = Chain::new();
    let (mut last, n) = (None, steps.len());
    for (i, (name, p)) in steps.into_iter().enumerate() {
        let arg = |k: usize| p.get(k).copied().unwrap_or(0.0);
        c = match name.as_str() {
            "gaussian3x3" => c.gaussian3x3(),
            "dilate" => c.dilate((arg(0) as usize, arg(1) as usize)),
            "erode" => c.erode((arg(0) as usize, arg(1) as usize)),
            "threshold" => c.threshold(arg(0) as u8),
            "scale_offset" => c.scale_offset(arg(0) as f32, arg(1) as f32),
            "lookup" => {
                let mut t = [0u8; 256];
                for (d, v) in t.iter_mut().zip(&p) {
                    *d = *v as u8;
                }
                c.lookup(t)
            }
            "sobel" | "sobel_magnitude" if i + 1 == n => {
                last = Some((name.clone(), arg(0) as usize));
                c
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "gpuprims.Chain: {other:?} is not a step (or a Sobel that is not last)"
                )));
            }
        };
    }
    fn run<O: ChainOutput + DlElement + numpy::Element>(
        py: Python<'_>,
        x: Arg<'_>,
        c: &Chain<O>,
        b: Border,
    ) -> PyResult<Py<PyAny>> {
        with_operand!(py, x, "Chain", "uint8", [U8: u8], |g, a| g.chain(a, c, b))
    }
    match last {
        Some((name, axis)) if name == "sobel" => run(py, x, &c.sobel(axis), b),
        Some(_) => run(py, x, &c.sobel_magnitude(), b),
        None => run(py, x, &c, b),
    }
}

/// Whether a CUDA device can be opened (and why not).
#[pyfunction]
fn device() -> (bool, String) {
    match gpu() {
        Ok(g) => (true, g.props().name.clone()),
        Err(e) => (false, e.to_string()),
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<dlpack::DeviceBuffer>()?;
    m.add_function(wrap_pyfunction!(nd, m)?)?;
    m.add_function(wrap_pyfunction!(sobel2d_u8, m)?)?;
    m.add_function(wrap_pyfunction!(local_mean_variance, m)?)?;
    m.add_function(wrap_pyfunction!(max_pool2d, m)?)?;
    m.add_function(wrap_pyfunction!(avg_pool2d, m)?)?;
    m.add_function(wrap_pyfunction!(reduce, m)?)?;
    m.add_function(wrap_pyfunction!(gaussian3x3, m)?)?;
    m.add_function(wrap_pyfunction!(correlate2d, m)?)?;
    m.add_function(wrap_pyfunction!(window_sum_sumsq, m)?)?;
    m.add_function(wrap_pyfunction!(chain, m)?)?;
    m.add_function(wrap_pyfunction!(device, m)?)?;
    Ok(())
}
