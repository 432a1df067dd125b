"""gpuprims: GPU image and signal primitives written in Rust, under the names Python users know.

scipy.ndimage names (n-dimensional, a size or sigma per axis)::

    grey_dilation, grey_erosion, grey_opening, grey_closing, morphological_gradient,
    maximum_filter, minimum_filter, uniform_filter, uniform_filter1d, correlate1d,
    convolve1d, correlate, convolve (weights over the last two axes), gaussian_filter,
    gaussian_filter1d, maximum_filter1d, minimum_filter1d, sobel, prewitt, laplace

torch.nn.functional names (over the last two axes)::

    max_pool2d, avg_pool2d

and gpuprims's own: the exact reductions (``sum``, ``sum_of_squares``, ``min``, ``max``,
``mean_variance``), ``window_sum_sumsq``, ``local_mean_variance``, ``local_std``, the tutorial's ``gaussian3x3``
and ``Chain`` (fused u8 steps in one pass). NumPy arrays come back as new NumPy arrays (work on
CUDA device 0); CuPy arrays and CUDA PyTorch tensors given to the n-D filters come back as the same
kind on their own device, without copies (DLPack), ordered on the caller's current stream with no
host synchronisation. The input is never modified; the GIL is released while the GPU works.
``import gpuprims`` works without a GPU; a call then raises ``RuntimeError``.

Where the semantics differ from scipy, the docstring says so. scipy writes each pass in the
``output`` dtype: an output dtype the input converts to exactly (uint8 → float32, …) runs the op
in it. What is not supported — a ``footprint`` or ``structure``, a nonzero ``origin``, an even
size for the maximum and minimum filters, an unsupported or narrowing dtype, a ``cval`` outside
an integer input's range (or fractional, for its sums) — raises ``NotImplementedError`` or
``TypeError`` naming it, never a silent difference.
"""

import math
import numbers
import sys

import numpy as np

from . import _native

__all__ = [
    "Chain",
    "avg_pool2d",
    "convolve",
    "convolve1d",
    "correlate",
    "correlate1d",
    "device",
    "gaussian_filter",
    "gaussian_filter1d",
    "grey_closing",
    "grey_dilation",
    "grey_erosion",
    "grey_opening",
    "gaussian3x3",
    "laplace",
    "local_mean_variance",
    "local_std",
    "max",
    "max_pool2d",
    "maximum_filter",
    "maximum_filter1d",
    "mean_variance",
    "min",
    "minimum_filter",
    "minimum_filter1d",
    "morphological_gradient",
    "prewitt",
    "sobel",
    "sum",
    "sum_of_squares",
    "uniform_filter",
    "uniform_filter1d",
    "window_sum_sumsq",
]

# scipy's mode names, and its aliases, as the modes gpuprims implements.
_MODES = {
    "reflect": "reflect",
    "grid-mirror": "reflect",
    "constant": "constant",
    "grid-constant": "constant",
    "nearest": "nearest",
    "mirror": "mirror",
    "wrap": "wrap",
    "grid-wrap": "wrap",
}
_MORPH_DTYPES = (np.uint8, np.uint16, np.float32)
_UNIFORM_DTYPES = (np.uint8, np.uint16, np.float32, np.float64)


def device():
    """``(True, name)`` when a CUDA device can be used, else ``(False, reason)``."""
    return _native.device()


def _mode(mode):
    if not isinstance(mode, str):
        raise TypeError(f"gpuprims: mode must be a string, got {type(mode).__name__}")
    try:
        return _MODES[mode]
    except KeyError:
        raise ValueError(f"gpuprims: unknown mode {mode!r}; scipy's modes are {sorted(_MODES)}") from None


def _cval(cval):
    cval = float(cval)
    if not math.isfinite(cval):
        raise ValueError(f"gpuprims: cval must be finite, got {cval}")
    return cval


# type -> None, "torch" or "cupy": `_kind` runs two or three times a call.
_KINDS = {np.ndarray: None}


def _kind(x):
    """None for NumPy (and array-likes), "torch" or "cupy" for their arrays."""
    t = type(x)
    try:
        return _KINDS[t]
    except KeyError:
        mod = t.__module__.split(".")[0]
        kind = _KINDS[t] = mod if mod in ("torch", "cupy") else None
        return kind


def _dtype_of(x):
    if _kind(x) == "torch":
        return _np_dtype(str(x.dtype).replace("torch.", ""))
    return np.dtype(x.dtype)


def _array(x, dtypes, op):
    """The input checked: a NumPy array (array-likes converted), or a CuPy array or a CUDA
    PyTorch tensor left where it is."""
    kind = _kind(x)
    if kind == "torch" and not x.is_cuda:
        raise TypeError(f"gpuprims.{op}: a CPU torch tensor; pass tensor.numpy() or a CUDA tensor")
    if kind is None:
        x = np.asarray(x)
    if _dtype_of(x).type not in dtypes:
        names = ", ".join(np.dtype(d).name for d in dtypes)
        raise TypeError(f"gpuprims.{op} takes {names} arrays, got {_dtype_of(x)}")
    if x.ndim == 0:
        raise ValueError(f"gpuprims.{op}: a 0-dimensional array has no axis to filter")
    return x


def _torch_stream(torch):
    """``device -> raw current stream`` of PyTorch: its private getter, without the Stream object
    ``torch.cuda.current_stream`` builds (7 µs a call), or the public call where it is missing."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda device: torch.cuda.current_stream(device).cuda_stream


_NP_DTYPES = {}


def _np_dtype(name):
    """The NumPy dtype of a ``DeviceBuffer``'s dtype name, built once per name."""
    try:
        return _NP_DTYPES[name]
    except KeyError:
        dt = _NP_DTYPES[name] = np.dtype(name)
        return dt


def _call(native, x, *args):
    """Runs ``native(x, *args)`` on a NumPy array (NumPy arrays back) or, without a copy, on a CuPy
    array or CUDA tensor: it goes as ``(DLPack capsule, caller's current stream)`` and each result
    (a ``_native.DeviceBuffer``) comes back as the same kind, on the array's device, ordered on
    that stream: a CuPy array over the buffer (``UnownedMemory`` owned by it), or a tensor
    from its DLPack capsule."""
    kind = _kind(x)
    if kind is None:
        return native(x, *args)
    if kind == "torch":
        torch = sys.modules["torch"]  # imported: x is one of its tensors
        x = x.contiguous()
        stream = _torch_stream(torch)(x.device.index) or 1
        # stream=-1: no synchronisation (the call runs on this very stream), where a stream number
        # makes torch build two Stream objects to compare them.
        out = native((x.__dlpack__(stream=-1), stream), *args)

        def wrap(b):
            # The capsule itself: the work is on the current stream already, so torch's stream
            # handshake (which builds a Stream object, 7 µs) has nothing to order.
            return torch.from_dlpack(b.__dlpack__())

    else:
        cupy = sys.modules["cupy"]  # imported: x is one of its arrays
        x = cupy.ascontiguousarray(x)
        stream = cupy.cuda.get_current_stream().ptr or 1
        out = native((x.__dlpack__(stream=stream), stream), *args)

        def wrap(b):
            mem = cupy.cuda.UnownedMemory(b.ptr, b.nbytes, b, b.device)
            return cupy.ndarray(b.shape, _np_dtype(b.dtype), cupy.cuda.MemoryPointer(mem, 0))

    if isinstance(out, tuple):
        return tuple(wrap(o) if isinstance(o, _native.DeviceBuffer) else o for o in out)
    return wrap(out) if isinstance(out, _native.DeviceBuffer) else out


def _nd(op, x, ints=(), floats=(), axis=0, truncate=0.0, mode="reflect", cval=0.0):
    """Runs n-D ``op`` (see ``_call`` for the kinds of ``x``)."""
    mode, cval = _mode(mode), _cval(cval)
    if mode == "constant" and cval != 0.0:
        dtype = _dtype_of(x)
        if dtype.kind in "ui":
            cval = _constant_for(op, dtype, cval)
    args = (list(ints), [float(f) for f in floats], int(axis), float(truncate), mode, cval)
    return _call(_native.nd, x, op, *args)


def _per_axis(value, ndim, name, kind=int):
    """scipy's scalar-or-sequence argument as one value per axis."""
    if kind is int and type(value) is int and value >= 1:
        # The common case, without the ABC checks below (1.25 → 0.19 µs on a 2-core host).
        return [value] * ndim
    if isinstance(value, (numbers.Number, np.number)):
        values = [value] * ndim
    else:
        values = list(value)
        if len(values) != ndim:
            raise ValueError(f"gpuprims: {name} has {len(values)} entries for a {ndim}-dimensional array")
    out = []
    for v in values:
        if kind is int:
            if isinstance(v, bool) or not float(v).is_integer():
                raise TypeError(f"gpuprims: {name} entries must be integers, got {v!r}")
            v = int(v)
            if v < 1:
                raise ValueError(f"gpuprims: {name} entries must be at least 1, got {v}")
        else:
            v = float(v)
            if not np.isfinite(v) or v < 0:
                raise ValueError(f"gpuprims: {name} entries must be finite and non-negative, got {v}")
        out.append(v)
    return out


def _axis(axis, ndim):
    if isinstance(axis, bool) or not isinstance(axis, (numbers.Integral, np.integer)):
        raise TypeError(f"gpuprims: axis must be an integer, got {axis!r}")
    a = int(axis) + ndim if axis < 0 else int(axis)
    if not 0 <= a < ndim:
        raise ValueError(f"gpuprims: axis {axis} is out of range for a {ndim}-dimensional array")
    return a


def _no(name, value, default=None):
    if value is not default and not (default == 0 and np.all(np.asarray(value) == 0)):
        raise NotImplementedError(f"gpuprims: {name} is not supported (boxes given by size only)")


def _output(result, output, op):
    """scipy's ``output``: None, a dtype, or an array written in place (and returned)."""
    if output is None:
        return result
    if _kind(result) is not None:
        if not isinstance(output, np.ndarray) and _dtype_of(result) == np.dtype(output):
            return result
        raise NotImplementedError(f"gpuprims.{op}: output= with device arrays (other than the result's dtype)")
    if isinstance(output, np.ndarray):
        if output.shape != result.shape:
            raise ValueError(f"gpuprims.{op}: output has shape {output.shape}, the result {result.shape}")
        output[...] = result
        return output
    return result.astype(np.dtype(output))


def _output_dtype(x, output, dtypes, op):
    """The dtype of scipy's ``output`` (a dtype or an array) where it differs from ``x``'s, else
    None: one of ``dtypes`` that ``x`` converts to exactly (uint8 → uint16, float32 …); a
    narrowing or unsupported one is NotImplementedError."""
    if output is None:
        return None
    dt = output.dtype if isinstance(output, np.ndarray) else np.dtype(output)
    src = _dtype_of(x)
    if dt == src:
        return None
    if dt.type not in dtypes or not np.can_cast(src, dt, casting="safe"):
        raise NotImplementedError(
            f"gpuprims.{op}: {src} input written as {dt}: only outputs the input converts to exactly, among "
            + ", ".join(np.dtype(d).name for d in dtypes)
        )
    return dt


def _in_output_dtype(x, output, dtypes, op):
    """``x`` in the dtype of scipy's ``output`` (see ``_output_dtype``). scipy writes every pass of
    an op in the output's dtype, reading the input's values as floats: running the op on the input
    converted to that dtype gives the same result."""
    dt = _output_dtype(x, output, dtypes, op)
    if dt is None:
        return x
    if _kind(x) == "torch":
        return x.to(dtype=getattr(sys.modules["torch"], dt.name))
    return x.astype(dt)


# The n-D ops whose result is one of the samples (or a difference of two).
_EXTREMUM_OPS = ("dilation", "erosion", "opening", "closing", "gradient")


def _constant_for(op, dtype, cval):
    """The constant border of an integer array as the passes take it (in the dtype). scipy puts the
    unrounded float ``cval`` in its float line buffers: an extremum then truncates it with the
    result (the same as truncating it first, for a ``cval`` in the dtype's range), while a sum
    keeps its fraction, which integer passes cannot: NotImplementedError there, as outside the
    range (scipy's cast of such a result is platform-defined)."""
    info = np.iinfo(dtype)
    if not info.min <= cval <= info.max:
        raise NotImplementedError(f"gpuprims: cval {cval} is outside the range of {dtype} input")
    if op in _EXTREMUM_OPS:
        return float(math.trunc(cval))
    if cval != math.trunc(cval):
        raise NotImplementedError(
            f"gpuprims: a fractional cval ({cval}) with {dtype} input: scipy adds it unrounded to its float sums; "
            "pass an integer cval, or output=np.float32"
        )
    return cval


def _morph(op, name, input, size, footprint, structure, output, mode, cval, origin):
    _no("footprint", footprint)
    _no("structure", structure)
    _no("origin", origin, 0)
    x = _array(input, _MORPH_DTYPES, name)
    if op in ("dilation", "erosion"):
        x = _in_output_dtype(x, output, _MORPH_DTYPES, name)
    elif (dt := _output_dtype(x, output, _MORPH_DTYPES, name)) is not None and _mode(mode) == "constant":
        # scipy runs the first step in the input's dtype and only the last in the output's: a
        # constant then enters the two steps differently.
        if _cval(cval) != math.trunc(_cval(cval)):
            raise NotImplementedError(f"gpuprims.{name}: a fractional cval with output {dt}")
    if size is None:
        raise TypeError(f"gpuprims.{name}: size is required (footprint and structure are not supported)")
    sizes = _per_axis(size, x.ndim, "size")
    return _output(_nd(op, x, ints=sizes, mode=mode, cval=cval), output, name)


def grey_dilation(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.grey_dilation with a box ``size``, bit for bit (even sizes anchored as scipy
    mirrors the box). uint8, uint16, float32; NaN in a window gives NaN."""
    return _morph("dilation", "grey_dilation", input, size, footprint, structure, output, mode, cval, origin)


def grey_erosion(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.grey_erosion with a box ``size``, bit for bit."""
    return _morph("erosion", "grey_erosion", input, size, footprint, structure, output, mode, cval, origin)


def grey_opening(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.grey_opening (erosion, then dilation) with a box ``size``."""
    return _morph("opening", "grey_opening", input, size, footprint, structure, output, mode, cval, origin)


def grey_closing(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.grey_closing (dilation, then erosion) with a box ``size``."""
    return _morph("closing", "grey_closing", input, size, footprint, structure, output, mode, cval, origin)


def morphological_gradient(
    input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0
):
    """scipy.ndimage.morphological_gradient (dilation − erosion) with a box ``size``."""
    return _morph("gradient", "morphological_gradient", input, size, footprint, structure, output, mode, cval, origin)


def _extremum_filter(op, name, input, size, footprint, output, mode, cval, origin, axes):
    if axes is not None:
        raise NotImplementedError(f"gpuprims.{name}: axes is not supported")
    x = _array(input, _MORPH_DTYPES, name)
    if size is None:
        raise TypeError(f"gpuprims.{name}: size is required (footprint is not supported)")
    if any(s % 2 == 0 for s in _per_axis(size, x.ndim, "size")):
        raise NotImplementedError(
            f"gpuprims.{name}: even sizes are anchored differently from grey_dilation; odd sizes only"
        )
    return _morph(op, name, x, size, footprint, None, output, mode, cval, origin)


def maximum_filter(input, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.maximum_filter with an odd box ``size`` (equal to grey_dilation there)."""
    return _extremum_filter("dilation", "maximum_filter", input, size, footprint, output, mode, cval, origin, axes)


def minimum_filter(input, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.minimum_filter with a box ``size`` (equal to grey_erosion)."""
    if axes is not None:
        raise NotImplementedError("gpuprims.minimum_filter: axes is not supported")
    return _morph("erosion", "minimum_filter", input, size, footprint, None, output, mode, cval, origin)


def uniform_filter(input, size=3, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.uniform_filter, bit for bit: one uniform_filter1d per axis in axis order, each
    an f64 running sum divided by the size and written in the output's dtype (integers
    truncated), as scipy computes it. Integer input under ``mode="constant"`` takes an integer
    ``cval`` in the dtype's range (scipy adds a fractional one unrounded: use a float output)."""
    if axes is not None:
        raise NotImplementedError("gpuprims.uniform_filter: axes is not supported")
    _no("origin", origin, 0)
    x = _in_output_dtype(_array(input, _UNIFORM_DTYPES, "uniform_filter"), output, _UNIFORM_DTYPES, "uniform_filter")
    sizes = _per_axis(size, x.ndim, "size")
    return _output(_nd("uniform", x, ints=sizes, mode=mode, cval=cval), output, "uniform_filter")


def uniform_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.uniform_filter1d along any axis, bit for bit (see uniform_filter)."""
    _no("origin", origin, 0)
    x = _array(input, _UNIFORM_DTYPES, "uniform_filter1d")
    x = _in_output_dtype(x, output, _UNIFORM_DTYPES, "uniform_filter1d")
    sizes = _along(size, axis, x.ndim, 1, "size", int)
    return _output(_nd("uniform", x, ints=sizes, mode=mode, cval=cval), output, "uniform_filter1d")


def _along(value, axis, ndim, rest, name, kind):
    """One value per axis: ``value`` along ``axis``, ``rest`` (what leaves an axis alone) elsewhere."""
    values = [rest] * ndim
    values[_axis(axis, ndim)] = _per_axis(value, 1, name, kind)[0]
    return values


def maximum_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.maximum_filter1d along any axis with an odd ``size`` (see maximum_filter)."""
    x = _array(input, _MORPH_DTYPES, "maximum_filter1d")
    sizes = _along(size, axis, x.ndim, 1, "size", int)
    return _extremum_filter("dilation", "maximum_filter1d", x, sizes, None, output, mode, cval, origin, None)


def minimum_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.minimum_filter1d along any axis (see minimum_filter)."""
    x = _array(input, _MORPH_DTYPES, "minimum_filter1d")
    sizes = _along(size, axis, x.ndim, 1, "size", int)
    return _morph("erosion", "minimum_filter1d", x, sizes, None, None, output, mode, cval, origin)


def _taps(weights):
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.size == 0:
        raise ValueError("gpuprims: weights must be a non-empty 1-D sequence")
    if not np.all(np.isfinite(w)):
        raise ValueError("gpuprims: weights must be finite")
    return [float(v) for v in w]


def correlate1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.correlate1d along any axis (taps centred at len // 2, in f64 in scipy's
    summation order, written in the output's dtype). uint8, uint16, float32. Integer results that
    fall outside the dtype saturate (scipy's C cast is platform-defined there)."""
    _no("origin", origin, 0)
    x = _in_output_dtype(_array(input, _MORPH_DTYPES, "correlate1d"), output, _MORPH_DTYPES, "correlate1d")
    y = _nd("correlate1d", x, floats=_taps(weights), axis=_axis(axis, x.ndim), mode=mode, cval=cval)
    return _output(y, output, "correlate1d")


def convolve1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.convolve1d: correlate1d with the weights reversed (and, for an even count,
    the centre moved as scipy moves it)."""
    _no("origin", origin, 0)
    w = _taps(weights)[::-1]
    if len(w) % 2 == 0:
        raise NotImplementedError("gpuprims.convolve1d: an even number of weights needs scipy's origin shift")
    return correlate1d(input, w, axis, output, mode, cval)


def _weights2d(weights, ndim, op):
    """n-D ``weights`` (scipy: as many axes as the input) as a float32 ``(kh, kw)`` kernel over the
    last two axes: leading axes of size 1 only."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != ndim:
        raise ValueError(f"gpuprims.{op}: weights have {w.ndim} axes for a {ndim}-dimensional input (scipy's rule)")
    if w.size == 0:
        raise ValueError(f"gpuprims.{op}: weights are empty")
    if any(k != 1 for k in w.shape[:-2]):
        raise NotImplementedError(
            f"gpuprims.{op}: weights of shape {w.shape} span more than the last two axes; only those are filtered"
        )
    if not np.all(np.abs(w) <= np.finfo(np.float32).max):
        raise ValueError(f"gpuprims.{op}: weights must be finite in float32")
    return w.astype(np.float32).reshape(w.shape[-2:] if w.ndim >= 2 else (1, w.shape[0]))


def correlate(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.correlate of float32 input, the weights over the last two axes (scipy's
    rule: as many axes as the input; the leading ones of size 1, each plane filtered alone),
    centred at ``shape // 2``. The weights are taken as float32 and the sums made in float32
    (scipy: float64), so results agree with scipy's within the rounding of ``kh · kw`` float32
    multiply-adds; zero weights are summed too (scipy skips them: it differs only where the
    input holds inf or NaN)."""
    _no("origin", origin, 0)
    if axes is not None:
        raise NotImplementedError("gpuprims.correlate: axes is not supported")
    x = _in_output_dtype(_array(input, (np.float32,), "correlate"), output, (np.float32,), "correlate")
    w = _weights2d(weights, x.ndim, "correlate")
    if x.ndim == 1:
        y = _call(_native.correlate2d, x[None], [float(v) for v in w.ravel()], w.shape, _mode(mode), _cval(cval))
        y = y.reshape(x.shape)
    else:
        y = _call(_native.correlate2d, x, [float(v) for v in w.ravel()], w.shape, _mode(mode), _cval(cval))
    return _output(y, output, "correlate")


def convolve(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.convolve: correlate with the weights reversed along every axis (odd sizes
    only: an even size needs scipy's origin shift)."""
    w = np.asarray(weights, dtype=np.float64)
    if any(k % 2 == 0 for k in w.shape):
        raise NotImplementedError(f"gpuprims.convolve: weights of shape {w.shape}; odd sizes only")
    return correlate(input, w[(slice(None, None, -1),) * w.ndim], output, mode, cval, origin, axes=axes)


def gaussian_filter(
    input, sigma, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0, *, radius=None, axes=None
):
    """scipy.ndimage.gaussian_filter with a sigma per axis (0 leaves an axis alone) and
    ``truncate``: one correlate1d per axis in axis order, each written in the output's dtype. The
    taps use the C library's exp, which can differ from numpy's in the last bit, so an integer
    output can differ from scipy's by 1 where a sum lands on an integer."""
    if np.any(np.asarray(order) != 0):
        raise NotImplementedError("gpuprims.gaussian_filter: derivative orders are not supported")
    if radius is not None or axes is not None:
        raise NotImplementedError("gpuprims.gaussian_filter: radius and axes are not supported")
    x = _in_output_dtype(_array(input, _MORPH_DTYPES, "gaussian_filter"), output, _MORPH_DTYPES, "gaussian_filter")
    sigmas = _per_axis(sigma, x.ndim, "sigma", float)
    truncate = float(truncate)
    if not np.isfinite(truncate) or truncate < 0:
        raise ValueError(f"gpuprims: truncate must be finite and non-negative, got {truncate}")
    y = _nd("gaussian", x, floats=sigmas, truncate=truncate, mode=mode, cval=cval)
    return _output(y, output, "gaussian_filter")


def gaussian_filter1d(input, sigma, axis=-1, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0, *, radius=None):
    """scipy.ndimage.gaussian_filter1d: gaussian_filter with ``sigma`` along ``axis`` alone (the
    same taps and pass)."""
    if order != 0 or radius is not None:
        raise NotImplementedError("gpuprims.gaussian_filter1d: derivative orders and radius are not supported")
    x = _array(input, _MORPH_DTYPES, "gaussian_filter1d")
    sigmas = _along(sigma, axis, x.ndim, 0.0, "sigma", float)
    return gaussian_filter(x, sigmas, 0, output, mode, cval, truncate)


def prewitt(input, axis=-1, output=None, mode="reflect", cval=0.0):
    """scipy.ndimage.prewitt along ``axis``: correlate1d with [-1, 0, 1] along it, then [1, 1, 1]
    along every other axis, each pass written in the output's dtype, bit for bit; in an unsigned
    dtype negative values saturate at 0 (scipy's C cast wraps them): take float32 for signed
    derivatives."""
    x = _in_output_dtype(_array(input, _MORPH_DTYPES, "prewitt"), output, _MORPH_DTYPES, "prewitt")
    a = _axis(axis, x.ndim)
    y = correlate1d(x, [-1.0, 0.0, 1.0], a, mode=mode, cval=cval)
    for other in range(x.ndim):
        if other != a:
            y = correlate1d(y, [1.0, 1.0, 1.0], other, mode=mode, cval=cval)
    return _output(y, output, "prewitt")


def laplace(input, output=None, mode="reflect", cval=0.0, *, axes=None):
    """scipy.ndimage.laplace: the sum over the axes of correlate1d with [1, -2, 1], each term and
    the sum in the output's dtype, bit for bit; in an unsigned dtype a negative term saturates at
    0 (scipy's C cast wraps it): take float32."""
    if axes is not None:
        raise NotImplementedError("gpuprims.laplace: axes is not supported")
    x = _in_output_dtype(_array(input, _MORPH_DTYPES, "laplace"), output, _MORPH_DTYPES, "laplace")
    y = correlate1d(x, [1.0, -2.0, 1.0], 0, mode=mode, cval=cval)
    for a in range(1, x.ndim):
        y += correlate1d(x, [1.0, -2.0, 1.0], a, mode=mode, cval=cval)
    return _output(y, output, "laplace")


def sobel(input, axis=-1, output=None, mode="reflect", cval=0.0):
    """scipy.ndimage.sobel along ``axis``: [-1, 0, 1] along it, [1, 2, 1] along every other axis,
    each pass written in the output's dtype. ``output=np.int16`` with uint8 input (or float32
    input) gives signed derivatives; in an unsigned dtype negative values saturate at 0. Under a
    nonzero constant mode scipy applies the constant to each pass's intermediate; so does this."""
    x = _array(input, _MORPH_DTYPES, "sobel")
    a = _axis(axis, x.ndim)
    dtype = None if output is None else output.dtype if isinstance(output, np.ndarray) else np.dtype(output)
    if dtype == np.int16 and _dtype_of(x) == np.uint8:
        constant = _mode(mode) == "constant"
        if x.ndim == 2 and (not constant or _cval(cval) == 0.0):
            # One 3 × 3 pass, u8 in, exact int16 out (scipy's result: no other axis to smooth).
            return _output(_call(_native.sobel2d_u8, x, a, _mode(mode), _cval(cval)), output, "sobel")
        if _kind(x) is None and (not constant or _cval(cval) == math.trunc(_cval(cval))):
            # Every pass's values are small integers, exact in float32: the int16 result is scipy's.
            y = _nd("sobel", x.astype(np.float32), axis=a, mode=mode, cval=cval)
            return _output(y.astype(np.int16), output, "sobel")
    x = _in_output_dtype(x, output, _MORPH_DTYPES, "sobel")
    return _output(_nd("sobel", x, axis=a, mode=mode, cval=cval), output, "sobel")


def local_mean_variance(input, size, mode="reflect", cval=0.0, dtype=np.float32):
    """gpuprims's local mean and population variance over boxes of ``size`` (one per axis or a
    scalar): exact sums for integers (the variance rounded once), f64 sums for floats."""
    x = _array(input, _UNIFORM_DTYPES, "local_mean_variance")
    sizes = _per_axis(size, x.ndim, "size")
    if np.dtype(dtype) not in (np.float32, np.float64):
        raise TypeError(f"gpuprims.local_mean_variance: dtype float32 or float64, got {dtype}")
    return _call(_native.local_mean_variance, x, sizes, _mode(mode), _cval(cval), np.dtype(dtype) == np.float64)


def local_std(input, size, mode="reflect", cval=0.0, dtype=np.float32):
    """gpuprims's local population standard deviation over boxes of ``size``: the square root of
    ``local_mean_variance``'s variance, in its dtype (one more rounding)."""
    _, var = local_mean_variance(input, size, mode, cval, dtype)
    kind = _kind(var)
    if kind == "torch":
        return var.sqrt_()
    lib = np if kind is None else sys.modules["cupy"]
    return lib.sqrt(var, out=var)


def _pair(v, name):
    if isinstance(v, (numbers.Integral, np.integer)):
        v = (int(v), int(v))
    v = tuple(int(a) for a in v)
    if len(v) != 2:
        raise ValueError(f"gpuprims: {name} takes one or two values, got {v}")
    return v


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """torch.nn.functional.max_pool2d over the last two axes (any leading batch), PyTorch's output
    size, padding and tie rules (the first of equal maxima, NaN wins). ``return_indices`` gives
    int64 flat indices within each plane, as PyTorch."""
    x = _array(input, _UNIFORM_DTYPES, "max_pool2d")
    if x.ndim < 2:
        raise ValueError("gpuprims.max_pool2d needs at least 2 dimensions")
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None or stride == [] else _pair(stride, "stride")
    p, d = _pair(padding, "padding"), _pair(dilation, "dilation")
    return _call(_native.max_pool2d, x, k, s, p, d, bool(ceil_mode), bool(return_indices))


def avg_pool2d(
    input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None
):
    """torch.nn.functional.avg_pool2d over the last two axes (float32, float64)."""
    x = _array(input, (np.float32, np.float64), "avg_pool2d")
    if x.ndim < 2:
        raise ValueError("gpuprims.avg_pool2d needs at least 2 dimensions")
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None or stride == [] else _pair(stride, "stride")
    d = None if divisor_override is None else int(divisor_override)
    if d is not None and d == 0:
        raise ValueError("gpuprims.avg_pool2d: divisor_override must be nonzero")
    return _call(_native.avg_pool2d, x, k, s, _pair(padding, "padding"), bool(ceil_mode), bool(count_include_pad), d)


_REDUCE_DTYPES = (np.uint8, np.int32, np.uint32, np.float32, np.float64)


def _reduce(op, x):
    x = _array(x, _REDUCE_DTYPES, op)
    if x.size == 0 and op in ("min", "max", "mean_variance"):
        raise ValueError(f"gpuprims.{op} of an empty array is undefined")
    return _call(_native.reduce, x, op)


def sum(x):  # noqa: A001 - numpy's name
    """The sum of all elements: a Python int, exact for integer arrays (no overflow), or a float
    (f64 accumulation) for float arrays."""
    return _reduce("sum", x)


def sum_of_squares(x):
    """The sum of squares: an exact Python int for integers (int32 squares in 128 bits), a float
    for floats."""
    return _reduce("sum_of_squares", x)


def min(x):  # noqa: A001
    """The smallest element (NaN if any element is NaN, as numpy)."""
    return _reduce("min", x)


def max(x):  # noqa: A001
    """The largest element (NaN if any element is NaN, as numpy)."""
    return _reduce("max", x)


def mean_variance(x):
    """``(mean, population variance)`` in one pass (exact moments for integers)."""
    return _reduce("mean_variance", x)


def gaussian3x3(input, mode="reflect", cval=0.0, truncate=False):
    """The 3 × 3 Gaussian ``[1 2 1]ᵀ[1 2 1] / 16`` over the last two axes: integers rounded half up
    (OpenCV's), or with ``truncate=True`` rounded down as the classic tutorial's ``gx >> 4``."""
    x = _array(input, _MORPH_DTYPES, "gaussian3x3")
    if x.ndim < 2:
        raise ValueError("gpuprims.gaussian3x3 needs at least 2 dimensions")
    return _call(_native.gaussian3x3, x, bool(truncate), _mode(mode), _cval(cval))


def window_sum_sumsq(input, width, mode="reflect", cval=0.0, dtype=np.float32):
    """Sums and sums of squares of ``width`` samples centred (``width // 2`` before) on each
    position of the last axis, as ``dtype`` (float32 or float64; float64 input gives float64):
    exact integer sums rounded once, fixed-order f64 sums for floats."""
    x = _array(input, _UNIFORM_DTYPES, "window_sum_sumsq")
    w = _per_axis(width, 1, "width")[0]
    if np.dtype(dtype) not in (np.float32, np.float64):
        raise TypeError(f"gpuprims.window_sum_sumsq: dtype float32 or float64, got {dtype}")
    double = np.dtype(dtype) == np.float64 or _dtype_of(x) == np.float64
    return _call(_native.window_sum_sumsq, x, w, _mode(mode), _cval(cval), double)


class Chain:
    """Fused u8 steps over the last two axes, run in one pass, bit for bit the ops one by one:
    ``gpuprims.Chain().gaussian3x3().dilate((3, 3)).sobel(1)(x, mode="reflect")``. Steps:
    ``gaussian3x3``, ``dilate`` / ``erode`` (odd sizes up to 5 × 5 fuse), ``threshold``,
    ``scale_offset``, ``lookup`` (256 entries); last, optionally, ``sobel(axis)`` (int16 out) or
    ``sobel_magnitude()`` (float32 out). At most 8 steps."""

    def __init__(self, steps=()):
        self._steps = list(steps)

    def _then(self, name, *params):
        if self._steps and self._steps[-1][0] in ("sobel", "sobel_magnitude"):
            raise ValueError("gpuprims.Chain: a Sobel step must be the last")
        return Chain(self._steps + [(name, [float(p) for p in params])])

    def gaussian3x3(self):
        return self._then("gaussian3x3")

    def dilate(self, size):
        return self._then("dilate", *_pair(size, "size"))

    def erode(self, size):
        return self._then("erode", *_pair(size, "size"))

    def threshold(self, level):
        if not 0 <= int(level) <= 255:
            raise ValueError(f"gpuprims.Chain.threshold: level in 0..=255, got {level}")
        return self._then("threshold", int(level))

    def scale_offset(self, scale, offset):
        return self._then("scale_offset", float(scale), float(offset))

    def lookup(self, table):
        t = np.asarray(table)
        if t.shape != (256,) or t.min() < 0 or t.max() > 255:
            raise ValueError("gpuprims.Chain.lookup: a table of 256 values in 0..=255")
        return self._then("lookup", *t.tolist())

    def sobel(self, axis):
        if axis not in (0, 1):
            raise ValueError(f"gpuprims.Chain.sobel: axis 0 or 1, got {axis}")
        return self._then("sobel", axis)

    def sobel_magnitude(self):
        return self._then("sobel_magnitude")

    def __call__(self, input, mode="reflect", cval=0.0):
        x = _array(input, (np.uint8,), "Chain")
        if x.ndim < 2:
            raise ValueError("gpuprims.Chain needs at least 2 dimensions")
        return _call(_native.chain, x, self._steps, _mode(mode), _cval(cval))

    def __repr__(self):
        return "gpuprims.Chain()" + "".join(f".{n}({', '.join(map(str, p))})" for n, p in self._steps)
