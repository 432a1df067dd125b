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

from . import _native, _ops, ndimage
from ._ops import *  # noqa: F403 (the names in _ops.__all__)
from .ndimage import *  # noqa: F403 (the names in ndimage.__all__)

__all__ = sorted(["device", "ndimage", *_ops.__all__, *ndimage.__all__], key=str.lower)


def device():
    """``(True, name)`` when a CUDA device can be used, else ``(False, reason)``."""
    return _native.device()
