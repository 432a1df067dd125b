//! `gpuprims._native`: the Rust core behind the Python package (PyO3, stable ABI). Each function
//! takes a NumPy array of a supported dtype and the arguments already checked and normalized by
//! `gpuprims/__init__.py` (scipy's or torch's names and conventions), runs the one Rust
//! implementation with the GIL released, and returns a new NumPy array. The input is never
//! modified.

use std::sync::OnceLock;

use gpuprims::{AvgPool2d, AxisElement, Border, Chain, Error, Filter2dElement, Gpu, Operand, Pool2d, Rounding};

mod dlpack;
use ndarray::ArrayD;
use numpy::{IntoPyArray, PyReadonlyArrayDyn};
use pyo3::exceptions::{PyNotImplementedError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

/// The process's GPU (device 0), opened on first use; `Err` says why there is none.
fn gpu() -> PyResult<&'static Gpu> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| Gpu::new().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|why| PyRuntimeError::new_err(format!("gpuprims: no usable CUDA device: {why}")))
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

/// An input array of one of the dtypes the ops take.
#[derive(FromPyObject)]
enum In<'py> {
    U8(PyReadonlyArrayDyn<'py, u8>),
    U16(PyReadonlyArrayDyn<'py, u16>),
    F32(PyReadonlyArrayDyn<'py, f32>),
    F64(PyReadonlyArrayDyn<'py, f64>),
}

impl In<'_> {
    fn dtype(&self) -> &'static str {
        match self {
            In::U8(_) => "uint8",
            In::U16(_) => "uint16",
            In::F32(_) => "float32",
            In::F64(_) => "float64",
        }
    }
}

fn unsupported(op: &str, x: &In<'_>, takes: &str) -> PyErr {
    PyTypeError::new_err(format!("gpuprims.{op} takes {takes} arrays, got {}", x.dtype()))
}

/// Runs `$f(gpu, view)` with the GIL released and returns its array to Python, for the dtypes
/// listed.
macro_rules! dispatch {
    ($py:expr, $x:expr, $op:literal, $takes:literal, [$($v:ident),*], |$g:ident, $a:ident| $body:expr) => {
        match $x {
            $(In::$v(arr) => {
                let view = arr.as_array();
                let $g = gpu()?;
                let out = $py.detach(|| { let $a = &view; $body }).map_err(py_err)?;
                Ok(out.into_pyarray($py).into_any().unbind())
            })*
            #[allow(unreachable_patterns)]
            other => Err(unsupported($op, &other, $takes)),
        }
    };
}

/// Two arrays of a two-output op, as NumPy arrays.
fn pair<T: numpy::Element>(py: Python<'_>, (a, b): (ArrayD<T>, ArrayD<T>)) -> (Py<PyAny>, Py<PyAny>) {
    (
        a.into_pyarray(py).into_any().unbind(),
        b.into_pyarray(py).into_any().unbind(),
    )
}

/// An n-D op the Python layer asks for, its parameters already checked.
enum NdOp {
    /// dilation, erosion, opening, closing, gradient: sizes per axis.
    Morph(String, Vec<usize>),
    /// uniform_filter: sizes per axis.
    Uniform(Vec<usize>),
    /// correlate1d: taps, axis.
    Correlate1d(Vec<f64>, usize),
    /// gaussian_filter: sigmas per axis, truncate.
    Gaussian(Vec<f64>, f64),
    /// sobel: axis.
    Sobel(usize),
}

impl NdOp {
    fn parse(op: &str, ints: Vec<usize>, floats: Vec<f64>, axis: usize, truncate: f64) -> PyResult<NdOp> {
        Ok(match op {
            "dilation" | "erosion" | "opening" | "closing" | "gradient" => NdOp::Morph(op.into(), ints),
            "uniform" => NdOp::Uniform(ints),
            "correlate1d" => NdOp::Correlate1d(floats, axis),
            "gaussian" => NdOp::Gaussian(floats, truncate),
            "sobel" => NdOp::Sobel(axis),
            other => return Err(PyValueError::new_err(format!("gpuprims: unknown op {other:?}"))),
        })
    }
}

/// An element the n-D ops take from Python, and which of them it supports.
trait Element: dlpack::DlElement + numpy::Element + Copy {
    fn apply<X: Operand<Elem = Self>>(g: &Gpu, x: X, op: &NdOp, b: Border) -> PyResult<X::Output<Self>>;
}

/// Runs `op` on any operand of an element every op takes.
fn apply_all<T: Filter2dElement + AxisElement, X: Operand<Elem = T>>(
    g: &Gpu,
    x: X,
    op: &NdOp,
    b: Border,
) -> PyResult<X::Output<T>> {
    match op {
        NdOp::Morph(kind, sizes) => match kind.as_str() {
            "dilation" => g.dilate_nd(x, sizes, b),
            "erosion" => g.erode_nd(x, sizes, b),
            "opening" => g.opening_nd(x, sizes, b),
            "closing" => g.closing_nd(x, sizes, b),
            _ => g.morphological_gradient_nd(x, sizes, b),
        },
        NdOp::Uniform(sizes) => g.uniform_filter_nd(x, sizes, b),
        NdOp::Correlate1d(taps, axis) => g.correlate1d(x, taps, *axis, b),
        NdOp::Gaussian(sigmas, truncate) => g.gaussian_nd(x, sigmas, *truncate, b),
        NdOp::Sobel(axis) => g.sobel_nd(x, *axis, b),
    }
    .map_err(py_err)
}

macro_rules! element_all {
    ($($t:ty),*) => {$(
        impl Element for $t {
            fn apply<X: Operand<Elem = $t>>(g: &Gpu, x: X, op: &NdOp, b: Border) -> PyResult<X::Output<$t>> {
                apply_all(g, x, op, b)
            }
        }
    )*};
}
element_all!(u8, u16, f32);

impl Element for f64 {
    fn apply<X: Operand<Elem = f64>>(g: &Gpu, x: X, op: &NdOp, b: Border) -> PyResult<X::Output<f64>> {
        match op {
            NdOp::Uniform(sizes) => g.uniform_filter_nd(x, sizes, b).map_err(py_err),
            _ => Err(PyTypeError::new_err(
                "gpuprims: float64 arrays are taken by uniform_filter, local_mean_variance and the pooling ops only",
            )),
        }
    }
}

/// An n-D op on a NumPy array: a new NumPy array of the same dtype.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (op, x, ints, floats, axis, truncate, mode, cval))]
fn nd(
    py: Python<'_>,
    op: &str,
    x: In<'_>,
    ints: Vec<usize>,
    floats: Vec<f64>,
    axis: usize,
    truncate: f64,
    mode: &str,
    cval: f64,
) -> PyResult<Py<PyAny>> {
    let b = border(mode, cval)?;
    let op = NdOp::parse(op, ints, floats, axis, truncate)?;
    fn run<T: Element>(py: Python<'_>, a: PyReadonlyArrayDyn<'_, T>, op: &NdOp, b: Border) -> PyResult<Py<PyAny>> {
        let view = a.as_array();
        let g = gpu()?;
        let y = py.detach(|| T::apply(g, &view, op, b))?;
        Ok(y.into_pyarray(py).into_any().unbind())
    }
    match x {
        In::U8(a) => run(py, a, &op, b),
        In::U16(a) => run(py, a, &op, b),
        In::F32(a) => run(py, a, &op, b),
        In::F64(a) => run(py, a, &op, b),
    }
}

/// An n-D op on a CUDA array given as a DLPack capsule (C-contiguous), on the caller's `stream`:
/// a DLPack capsule of a new array of the same dtype on the same device.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (op, capsule, stream, ints, floats, axis, truncate, mode, cval))]
fn nd_device(
    py: Python<'_>,
    op: &str,
    capsule: &Bound<'_, PyAny>,
    stream: usize,
    ints: Vec<usize>,
    floats: Vec<f64>,
    axis: usize,
    truncate: f64,
    mode: &str,
    cval: f64,
) -> PyResult<Py<PyAny>> {
    let b = border(mode, cval)?;
    let op = NdOp::parse(op, ints, floats, axis, truncate)?;
    fn run<T: Element>(
        py: Python<'_>,
        capsule: &Bound<'_, PyAny>,
        stream: usize,
        op: &NdOp,
        b: Border,
    ) -> PyResult<Py<PyAny>> {
        let input = dlpack::import::<T>(capsule, stream)?;
        let g = input.gpu.clone();
        let x = input.array();
        let y = py.detach(|| T::apply(&g, x, op, b))?;
        dlpack::export(py, &g, input.stream, y)
    }
    match dlpack::dtype_of(capsule)? {
        (1, 8) => run::<u8>(py, capsule, stream, &op, b),
        (1, 16) => run::<u16>(py, capsule, stream, &op, b),
        (2, 32) => run::<f32>(py, capsule, stream, &op, b),
        (2, 64) => run::<f64>(py, capsule, stream, &op, b),
        (code, bits) => Err(PyTypeError::new_err(format!(
            "gpuprims: DLPack dtype (code {code}, {bits} bits) is not uint8, uint16, float32 or float64"
        ))),
    }
}

/// gpuprims's local mean and population variance over boxes of `sizes`, as float32 or float64.
#[pyfunction]
fn local_mean_variance(
    py: Python<'_>,
    x: In<'_>,
    sizes: Vec<usize>,
    mode: &str,
    cval: f64,
    double: bool,
) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    let b = border(mode, cval)?;
    macro_rules! run {
        ($arr:expr) => {{
            let view = $arr.as_array();
            let g = gpu()?;
            if double {
                let r = py
                    .detach(|| g.local_mean_variance_nd::<f64, _, _>(&view, &sizes, b))
                    .map_err(py_err)?;
                Ok(pair(py, r))
            } else {
                let r = py
                    .detach(|| g.local_mean_variance_nd::<f32, _, _>(&view, &sizes, b))
                    .map_err(py_err)?;
                Ok(pair(py, r))
            }
        }};
    }
    match x {
        In::U8(a) => run!(a),
        In::U16(a) => run!(a),
        In::F32(a) => run!(a),
        In::F64(a) => run!(a),
    }
}

/// torch's `max_pool2d` over the last two axes; with `indices`, also the flat argmax per plane.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
fn max_pool2d(
    py: Python<'_>,
    x: In<'_>,
    kernel: (usize, usize),
    stride: (usize, usize),
    padding: (usize, usize),
    dilation: (usize, usize),
    ceil_mode: bool,
    indices: bool,
) -> PyResult<(Py<PyAny>, Option<Py<PyAny>>)> {
    let p = Pool2d::new(kernel)
        .stride(stride)
        .padding(padding)
        .dilation(dilation)
        .ceil_mode(ceil_mode);
    macro_rules! run {
        ($arr:expr) => {{
            let view = $arr.as_array();
            let g = gpu()?;
            if indices {
                let (y, i) = py.detach(|| g.max_pool2d_indices(&view, p)).map_err(py_err)?;
                Ok((
                    y.into_pyarray(py).into_any().unbind(),
                    Some(i.into_pyarray(py).into_any().unbind()),
                ))
            } else {
                let y = py.detach(|| g.max_pool2d(&view, p)).map_err(py_err)?;
                Ok((y.into_pyarray(py).into_any().unbind(), None))
            }
        }};
    }
    match x {
        In::U8(a) => run!(a),
        In::U16(a) => run!(a),
        In::F32(a) => run!(a),
        In::F64(a) => run!(a),
    }
}

/// torch's `avg_pool2d` over the last two axes (float32, float64).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
fn avg_pool2d(
    py: Python<'_>,
    x: In<'_>,
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
    dispatch!(py, x, "avg_pool2d", "float32 or float64", [F32, F64], |g, a| g
        .avg_pool2d(a, p))
}

/// An input of the reductions.
#[derive(FromPyObject)]
enum RIn<'py> {
    U8(PyReadonlyArrayDyn<'py, u8>),
    I32(PyReadonlyArrayDyn<'py, i32>),
    U32(PyReadonlyArrayDyn<'py, u32>),
    F32(PyReadonlyArrayDyn<'py, f32>),
    F64(PyReadonlyArrayDyn<'py, f64>),
}

/// gpuprims's reductions: `sum` and `sum_of_squares` (exact integers of any size for integer
/// inputs, f64 for floats), `min`, `max` (NaN propagates), `mean_variance` (a pair of floats).
#[pyfunction]
fn reduce(py: Python<'_>, op: &str, x: RIn<'_>) -> PyResult<Py<PyAny>> {
    macro_rules! run {
        ($a:expr) => {{
            let view = $a.as_array();
            let g = gpu()?;
            let v = &view;
            match op {
                "sum" => py
                    .detach(|| g.sum(v))
                    .map_err(py_err)?
                    .into_pyobject(py)?
                    .into_any()
                    .unbind(),
                "sum_of_squares" => py
                    .detach(|| g.sum_of_squares(v))
                    .map_err(py_err)?
                    .into_pyobject(py)?
                    .into_any()
                    .unbind(),
                "min" => py
                    .detach(|| g.min(v))
                    .map_err(py_err)?
                    .into_pyobject(py)?
                    .into_any()
                    .unbind(),
                "max" => py
                    .detach(|| g.max(v))
                    .map_err(py_err)?
                    .into_pyobject(py)?
                    .into_any()
                    .unbind(),
                "mean_variance" => {
                    let m = py.detach(|| g.mean_variance(v)).map_err(py_err)?;
                    (m.mean, m.variance).into_pyobject(py)?.into_any().unbind()
                }
                other => return Err(PyValueError::new_err(format!("gpuprims: unknown reduction {other:?}"))),
            }
        }};
    }
    Ok(match x {
        RIn::U8(a) => run!(a),
        RIn::I32(a) => run!(a),
        RIn::U32(a) => run!(a),
        RIn::F32(a) => run!(a),
        RIn::F64(a) => run!(a),
    })
}

/// The 3 × 3 Gaussian `[1 2 1]ᵀ[1 2 1] / 16` over the last two axes: integers rounded half up,
/// or truncated as the classic tutorial's kernel (`truncate`).
#[pyfunction]
fn gaussian3x3(py: Python<'_>, x: In<'_>, truncate: bool, mode: &str, cval: f64) -> PyResult<Py<PyAny>> {
    let b = border(mode, cval)?;
    let r = if truncate { Rounding::Truncate } else { Rounding::HalfUp };
    dispatch!(
        py,
        x,
        "gaussian3x3",
        "uint8, uint16 or float32",
        [U8, U16, F32],
        |g, a| g.gaussian3x3_rounding(a, b, r)
    )
}

/// Window sums and sums of squares along the last axis, as float32 or float64.
#[pyfunction]
fn window_sum_sumsq(
    py: Python<'_>,
    x: In<'_>,
    width: usize,
    mode: &str,
    cval: f64,
    double: bool,
) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    let b = border(mode, cval)?;
    macro_rules! run {
        ($arr:expr) => {{
            let view = $arr.as_array();
            let g = gpu()?;
            if double {
                Ok(pair(
                    py,
                    py.detach(|| g.window_sum_sumsq::<f64, _>(&view, width, b))
                        .map_err(py_err)?,
                ))
            } else {
                Ok(pair(
                    py,
                    py.detach(|| g.window_sum_sumsq::<f32, _>(&view, width, b))
                        .map_err(py_err)?,
                ))
            }
        }};
    }
    match x {
        In::U8(a) => run!(a),
        In::U16(a) => run!(a),
        In::F32(a) => run!(a),
        // f64 samples give f64 sums (no narrower output).
        In::F64(a) => {
            let view = a.as_array();
            let g = gpu()?;
            Ok(pair(
                py,
                py.detach(|| g.window_sum_sumsq::<f64, _>(&view, width, b))
                    .map_err(py_err)?,
            ))
        }
    }
}

/// A fused chain of u8 steps (`(name, params)`, see `gpuprims.Chain`) over the last two axes, in
/// one pass: u8 out, or int16 after `sobel`, float32 after `sobel_magnitude`.
#[pyfunction]
fn chain(
    py: Python<'_>,
    x: PyReadonlyArrayDyn<'_, u8>,
    steps: Vec<(String, Vec<f64>)>,
    mode: &str,
    cval: f64,
) -> PyResult<Py<PyAny>> {
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
    let view = x.as_array();
    let g = gpu()?;
    Ok(match last {
        Some((name, axis)) if name == "sobel" => {
            let c = c.sobel(axis);
            let y = py.detach(|| g.chain(&view, &c, b)).map_err(py_err)?;
            y.into_pyarray(py).into_any().unbind()
        }
        Some(_) => {
            let c = c.sobel_magnitude();
            let y = py.detach(|| g.chain(&view, &c, b)).map_err(py_err)?;
            y.into_pyarray(py).into_any().unbind()
        }
        None => {
            let y = py.detach(|| g.chain(&view, &c, b)).map_err(py_err)?;
            y.into_pyarray(py).into_any().unbind()
        }
    })
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
    m.add_function(wrap_pyfunction!(nd, m)?)?;
    m.add_function(wrap_pyfunction!(nd_device, m)?)?;
    m.add_function(wrap_pyfunction!(local_mean_variance, m)?)?;
    m.add_function(wrap_pyfunction!(max_pool2d, m)?)?;
    m.add_function(wrap_pyfunction!(avg_pool2d, m)?)?;
    m.add_function(wrap_pyfunction!(reduce, m)?)?;
    m.add_function(wrap_pyfunction!(gaussian3x3, m)?)?;
    m.add_function(wrap_pyfunction!(window_sum_sumsq, m)?)?;
    m.add_function(wrap_pyfunction!(chain, m)?)?;
    m.add_function(wrap_pyfunction!(device, m)?)?;
    Ok(())
}
