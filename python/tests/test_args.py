"""Checks that run without a GPU: the package imports, and bad arguments raise the documented
exceptions before any device work."""
import numpy as np
import pytest

import gpuprims

X = np.zeros((4, 5, 6), np.uint8)


def test_import_and_device_report():
    ok, what = gpuprims.device()
    assert isinstance(ok, bool) and isinstance(what, str) and what


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda: gpuprims.grey_dilation(X, size=3, mode="bogus"), ValueError),
        (lambda: gpuprims.grey_dilation(X, size=(3, 3)), ValueError),
        (lambda: gpuprims.grey_dilation(X, size=(3, 0, 3)), ValueError),
        (lambda: gpuprims.grey_dilation(X, size=-1), ValueError),
        (lambda: gpuprims.grey_dilation(X, size=2.5), TypeError),
        (lambda: gpuprims.grey_dilation(X, footprint=np.ones((3, 3, 3), bool)), NotImplementedError),
        (lambda: gpuprims.grey_dilation(X, size=3, origin=1), NotImplementedError),
        (lambda: gpuprims.grey_dilation(X), TypeError),
        (lambda: gpuprims.grey_dilation(X.astype(np.int32), size=3), TypeError),
        (lambda: gpuprims.grey_dilation(X, size=3, cval=np.nan), ValueError),
        (lambda: gpuprims.maximum_filter(X, size=2), NotImplementedError),
        (lambda: gpuprims.uniform_filter1d(X, 3, axis=3), ValueError),
        (lambda: gpuprims.uniform_filter1d(X, 0), ValueError),
        (lambda: gpuprims.uniform_filter(X.astype(np.complex64)), TypeError),
        (lambda: gpuprims.gaussian_filter(X, sigma=np.nan), ValueError),
        (lambda: gpuprims.gaussian_filter(X, sigma=-1.0), ValueError),
        (lambda: gpuprims.gaussian_filter(X, sigma=1.0, truncate=np.inf), ValueError),
        (lambda: gpuprims.gaussian_filter(X, sigma=1.0, order=1), NotImplementedError),
        (lambda: gpuprims.correlate1d(X, []), ValueError),
        (lambda: gpuprims.correlate1d(X, [1.0, np.inf]), ValueError),
        (lambda: gpuprims.convolve1d(X, [1.0, 2.0]), NotImplementedError),
        (lambda: gpuprims.uniform_filter(X, 3, mode="constant", cval=2.5), NotImplementedError),
        (lambda: gpuprims.correlate1d(X, [1.0, 2.0, 1.0], mode="constant", cval=300), NotImplementedError),
        (lambda: gpuprims.grey_dilation(X, size=3, mode="constant", cval=-1), NotImplementedError),
        (lambda: gpuprims.grey_opening(X, size=3, mode="constant", cval=2.5, output=np.float32), NotImplementedError),
        (lambda: gpuprims.grey_closing(X, size=3, mode="constant", cval=2.5, output=np.zeros(X.shape, np.float32)), NotImplementedError),
        (lambda: gpuprims.gaussian_filter(X.astype(np.float32), 1.0, output=np.uint8), NotImplementedError),
        (lambda: gpuprims.uniform_filter(X, 3, output=np.int8), NotImplementedError),
        (lambda: gpuprims.maximum_filter1d(X, 4), NotImplementedError),
        (lambda: gpuprims.minimum_filter1d(X, 3, axis=3), ValueError),
        (lambda: gpuprims.gaussian_filter1d(X, 1.0, order=1), NotImplementedError),
        (lambda: gpuprims.gaussian_filter1d(X, [1.0, 2.0]), ValueError),
        (lambda: gpuprims.prewitt(X, axis=-4), ValueError),
        (lambda: gpuprims.laplace(X, output=np.int16), NotImplementedError),
        (lambda: gpuprims.correlate(X, np.ones((1, 3, 3))), TypeError),
        (lambda: gpuprims.correlate(X.astype(np.float32), np.ones((3, 3))), ValueError),
        (lambda: gpuprims.correlate(X.astype(np.float32), np.ones((2, 3, 3))), NotImplementedError),
        (lambda: gpuprims.correlate(X.astype(np.float32), np.ones((1, 0, 3))), ValueError),
        (lambda: gpuprims.correlate(X.astype(np.float32), np.full((1, 3, 3), 1e300)), ValueError),
        (lambda: gpuprims.correlate(X.astype(np.float32), np.ones((1, 3, 3)), origin=1), NotImplementedError),
        (lambda: gpuprims.convolve(X.astype(np.float32), np.ones((1, 3, 4))), NotImplementedError),
        (lambda: gpuprims.sobel(X, axis=5), ValueError),
        (lambda: gpuprims.sobel(X, output=np.float64), NotImplementedError),
        (lambda: gpuprims.sobel(X.astype(np.int16)), TypeError),
        (lambda: gpuprims.max_pool2d(np.zeros(4, np.float32), 2), ValueError),
        (lambda: gpuprims.avg_pool2d(X, 2), TypeError),
        (lambda: gpuprims.avg_pool2d(X.astype(np.float32), 2, divisor_override=0), ValueError),
        (lambda: gpuprims.local_mean_variance(X, 3, dtype=np.int32), TypeError),
        (lambda: gpuprims.local_std(X, 3, dtype=np.int32), TypeError),
        (lambda: gpuprims.local_std(X, (3, 3)), ValueError),
        (lambda: gpuprims.grey_dilation(np.float32(3.0), size=3), ValueError),
    ],
)
def test_bad_arguments_raise(call, exc):
    before = X.copy()
    with pytest.raises(exc):
        call()
    assert np.array_equal(X, before)


def test_without_a_device_calls_raise_runtime_error():
    ok, _ = gpuprims.device()
    if ok:
        pytest.skip("a CUDA device is present")
    with pytest.raises(RuntimeError, match="no usable CUDA device"):
        gpuprims.grey_dilation(X, size=3)


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda: gpuprims.sum(np.zeros(3, np.int64)), TypeError),
        (lambda: gpuprims.min(np.zeros(0, np.float32)), ValueError),
        (lambda: gpuprims.Chain().sobel(2), ValueError),
        (lambda: gpuprims.Chain().sobel(1).dilate(3), ValueError),
        (lambda: gpuprims.Chain().threshold(300), ValueError),
        (lambda: gpuprims.Chain().lookup(np.arange(10)), ValueError),
        (lambda: gpuprims.Chain().gaussian3x3()(np.zeros((4, 4), np.float32)), TypeError),
        (lambda: gpuprims.window_sum_sumsq(X, 3, dtype=np.int32), TypeError),
        (lambda: gpuprims.gaussian3x3(np.zeros(5, np.uint8)), ValueError),
    ],
)
def test_bad_arguments_of_gpuprims_own_ops(call, exc):
    with pytest.raises(exc):
        call()


def test_chain_repr():
    assert repr(gpuprims.Chain().gaussian3x3().dilate(3).sobel(1)) == (
        "gpuprims.Chain().gaussian3x3().dilate(3.0, 3.0).sobel(1.0)"
    )
