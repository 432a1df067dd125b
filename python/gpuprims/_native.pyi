"""Type stubs of the native module (python/src/lib.rs). Call the functions of ``gpuprims``: they
check and normalize the arguments these take.

``Arg`` is a NumPy array (results come back as NumPy arrays) or ``(DLPack capsule, stream)`` of a
CUDA array (results come back as ``DeviceBuffer``s)."""
from typing import Any, Optional, Union

import numpy.typing as npt

Arg = Union[npt.NDArray[Any], tuple[Any, int]]
class DeviceBuffer:
    """A result on a device (C order) that owns its memory until dropped or handed on once by
    ``__dlpack__``."""

    ptr: int
    nbytes: int
    dtype: str
    device: int
    shape: list[int]
    def __dlpack__(
        self, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: Optional[bool] = None
    ) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...

Out = Any  # a NumPy array or a DeviceBuffer, as the argument

def device() -> tuple[bool, str]: ...
def nd(
    x: Arg, op: str, ints: list[int], floats: list[float], axis: int, truncate: float, mode: str, cval: float
) -> Out: ...
def sobel2d_u8(x: Arg, axis: int, mode: str, cval: float) -> Out: ...
def local_mean_variance(x: Arg, sizes: list[int], mode: str, cval: float, double: bool) -> tuple[Out, Out]: ...
def max_pool2d(
    x: Arg,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
    ceil_mode: bool,
    indices: bool,
) -> Union[Out, tuple[Out, Out]]: ...
def avg_pool2d(
    x: Arg,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Optional[int],
) -> Out: ...
def reduce(x: Arg, op: str) -> Any: ...
def gaussian3x3(x: Arg, truncate: bool, mode: str, cval: float) -> Out: ...
def correlate2d(x: Arg, weights: list[float], kernel: tuple[int, int], mode: str, cval: float) -> Out: ...
def window_sum_sumsq(x: Arg, width: int, mode: str, cval: float, double: bool) -> tuple[Out, Out]: ...
def chain(x: Arg, steps: list[tuple[str, list[float]]], mode: str, cval: float) -> Out: ...
