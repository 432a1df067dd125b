"""The plumbing every function shares: which kind of array came in (NumPy, CuPy, torch), the
native call on it (``_call``: DLPack in on the caller's stream, ``DeviceBuffer``s out as the same
kind), and scipy's argument conventions (modes, sizes per axis, ``output``, the constant border)."""
import math
import numbers
import sys

import numpy as np

from . import _native

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


def _module(x):
    """The array library of ``x``'s kind (numpy, cupy or torch), already imported where ``x``
    is one of its arrays."""
    return sys.modules[_kind(x) or "numpy"]


def _dtype_of(x):
    if _kind(x) == "torch":
        return _np_dtype(str(x.dtype).replace("torch.", ""))
    return np.dtype(x.dtype)


def _array(x, dtypes, op, output=None):
    """The input checked: a NumPy array (array-likes converted), or a CuPy array or a CUDA
    PyTorch tensor left where it is; in the dtype of scipy's ``output`` where one is given (see
    ``_in_output_dtype``)."""
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
    return x if output is None else _in_output_dtype(x, output, dtypes, op)


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
    if cval != 0.0 and mode == "constant":
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


def _dtype_arg(output):
    """The dtype scipy's ``output`` names: a dtype, or an array's."""
    return output.dtype if isinstance(output, np.ndarray) else np.dtype(output)


def _output_dtype(x, output, dtypes, op):
    """The dtype of scipy's ``output`` (a dtype or an array) where it differs from ``x``'s, else
    None: one of ``dtypes`` that ``x`` converts to exactly (uint8 → uint16, float32 …); a
    narrowing or unsupported one is NotImplementedError."""
    if output is None:
        return None
    dt = _dtype_arg(output)
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
