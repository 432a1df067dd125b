"""Type stubs of the native module (python/src/lib.rs). Call the functions of ``gpuprims``: they
check and normalize the arguments these take."""
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

def device() -> tuple[bool, str]: ...
def nd(
    op: str, x: npt.NDArray[Any], ints: list[int], floats: list[float], axis: int, truncate: float, mode: str, cval: float
) -> npt.NDArray[Any]: ...
def nd_device(
    op: str,
    capsule: Any,
    stream: int,
    ints: list[int],
    floats: list[float],
    axis: int,
    truncate: float,
    mode: str,
    cval: float,
) -> Any: ...
def local_mean_variance(
    x: npt.NDArray[Any], sizes: list[int], mode: str, cval: float, double: bool
) -> tuple[npt.NDArray[np.floating[Any]], npt.NDArray[np.floating[Any]]]: ...
def max_pool2d(
    x: npt.NDArray[Any],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
    ceil_mode: bool,
    indices: bool,
) -> tuple[npt.NDArray[Any], Optional[npt.NDArray[np.int64]]]: ...
def avg_pool2d(
    x: npt.NDArray[Any],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Optional[int],
) -> npt.NDArray[Any]: ...
def reduce(op: str, x: npt.NDArray[Any]) -> Any: ...
def gaussian3x3(x: npt.NDArray[Any], truncate: bool, mode: str, cval: float) -> npt.NDArray[Any]: ...
def window_sum_sumsq(
    x: npt.NDArray[Any], width: int, mode: str, cval: float, double: bool
) -> tuple[npt.NDArray[np.floating[Any]], npt.NDArray[np.floating[Any]]]: ...
def chain(x: npt.NDArray[np.uint8], steps: list[tuple[str, list[float]]], mode: str, cval: float) -> npt.NDArray[Any]: ...
