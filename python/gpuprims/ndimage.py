"""scipy.ndimage's names, n-dimensional (a size, sigma or axis as scipy takes it), bit for bit
where the docstrings say so; ``gpuprims.ndimage`` as ``cupyx.scipy.ndimage`` (each name is also
``gpuprims.<name>``)."""
import math

import numpy as np

from . import _native
from ._core import (
    _MORPH_DTYPES,
    _UNIFORM_DTYPES,
    _array,
    _axis,
    _call,
    _cval,
    _dtype_arg,
    _dtype_of,
    _in_output_dtype,
    _kind,
    _mode,
    _module,
    _nd,
    _no,
    _output,
    _output_dtype,
    _per_axis,
)

__all__ = [
    "black_tophat",
    "convolve",
    "convolve1d",
    "correlate",
    "correlate1d",
    "gaussian_filter",
    "gaussian_filter1d",
    "grey_closing",
    "grey_dilation",
    "grey_erosion",
    "grey_opening",
    "laplace",
    "maximum_filter",
    "maximum_filter1d",
    "minimum_filter",
    "minimum_filter1d",
    "morphological_gradient",
    "prewitt",
    "sobel",
    "uniform_filter",
    "uniform_filter1d",
    "white_tophat",
]


def _morph(op, name, input, size, footprint, structure, output, mode, cval, origin):
    _no("footprint", footprint)
    _no("structure", structure)
    _no("origin", origin, 0)
    if op in ("dilation", "erosion"):
        x = _array(input, _MORPH_DTYPES, name, output)
    else:
        # scipy runs the first step in the input's dtype and only the last in the output's: a
        # fractional constant then enters the two steps differently.
        x = _array(input, _MORPH_DTYPES, name)
        dt = _output_dtype(x, output, _MORPH_DTYPES, name)
        if dt is not None and _mode(mode) == "constant" and _cval(cval) != math.trunc(_cval(cval)):
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


def _tophat(op, name, input, size, footprint, structure, output, mode, cval, origin, white):
    y = _morph(op, name, input, size, footprint, structure, output, mode, cval, origin)
    a, b = (input, y) if white else (y, input)
    return _module(y).subtract(a, b, out=y)


def white_tophat(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.white_tophat (input − grey_opening) with a box ``size``, in the output's dtype."""
    return _tophat("opening", "white_tophat", input, size, footprint, structure, output, mode, cval, origin, True)


def black_tophat(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.black_tophat (grey_closing − input) with a box ``size``, in the output's dtype."""
    return _tophat("closing", "black_tophat", input, size, footprint, structure, output, mode, cval, origin, False)


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
    x = _array(input, _UNIFORM_DTYPES, "uniform_filter", output)
    sizes = _per_axis(size, x.ndim, "size")
    return _output(_nd("uniform", x, ints=sizes, mode=mode, cval=cval), output, "uniform_filter")


def uniform_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.uniform_filter1d along any axis, bit for bit (see uniform_filter)."""
    _no("origin", origin, 0)
    x = _array(input, _UNIFORM_DTYPES, "uniform_filter1d", output)
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
    x = _array(input, _MORPH_DTYPES, "correlate1d", output)
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
    x = _array(input, (np.float32,), "correlate", output)
    w = _weights2d(weights, x.ndim, "correlate")
    planes = x[None] if x.ndim == 1 else x  # a 1-D input as one row
    y = _call(_native.correlate2d, planes, w.ravel().tolist(), w.shape, _mode(mode), _cval(cval))
    return _output(y.reshape(x.shape) if x.ndim == 1 else y, output, "correlate")


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
    x = _array(input, _MORPH_DTYPES, "gaussian_filter", output)
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
    x = _array(input, _MORPH_DTYPES, "prewitt", output)
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
    x = _array(input, _MORPH_DTYPES, "laplace", output)
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
    dtype = None if output is None else _dtype_arg(output)
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
