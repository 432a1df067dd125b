"""torch.nn.functional's pooling names and gpuprims's own ops: the exact reductions, window
statistics, local moments, the tutorial's Gaussian and ``Chain``."""
import numbers

import numpy as np

from . import _native
from ._core import _MORPH_DTYPES, _UNIFORM_DTYPES, _array, _call, _cval, _dtype_of, _mode, _module, _per_axis

__all__ = [
    "avg_pool2d",
    "Chain",
    "gaussian3x3",
    "local_mean_variance",
    "local_std",
    "max",
    "max_pool2d",
    "mean_variance",
    "min",
    "sum",
    "sum_of_squares",
    "window_sum_sumsq",
]


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
    return _module(var).sqrt(var, out=var)


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
