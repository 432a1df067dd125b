"""GPU checks against scipy.ndimage and torch (skipped without a device): every function on
random 2-D, 3-D and 4-D arrays, every mode, odd shapes and non-contiguous views — bit for bit for
integers, morphology and the uniform filter, the documented bound for float sums."""
import numpy as np
import pytest

import gpuprims

ndimage = pytest.importorskip("scipy.ndimage")
pytestmark = pytest.mark.skipif(not gpuprims.device()[0], reason="no CUDA device")

MODES = ["reflect", "constant", "nearest", "mirror", "wrap"]
SHAPES = [(1, 1), (1, 37), (9, 1), (17, 33), (5, 7, 9), (2, 3, 4, 5), (33, 2, 40)]
rng = np.random.default_rng(74)


def arr(shape, dtype):
    if np.dtype(dtype).kind == "u":
        return rng.integers(0, np.iinfo(dtype).max + 1, shape).astype(dtype)
    return rng.uniform(-50, 50, shape).astype(dtype)


def views(x):
    yield x
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    wide[..., ::2] = x
    yield wide[..., ::2]  # strided view
    yield np.asfortranarray(x)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", MODES)
def test_morphology(dtype, shape, mode):
    x = arr(shape, dtype)
    for size in [3, tuple(min(s + 1, 5) for s in shape), 2]:
        for f in ["grey_dilation", "grey_erosion", "grey_opening", "grey_closing", "morphological_gradient",
                  "white_tophat", "black_tophat"]:
            want = getattr(ndimage, f)(x, size=size, mode=mode, cval=7)
            for v in views(x):
                got = getattr(gpuprims, f)(v, size=size, mode=mode, cval=7)
                np.testing.assert_array_equal(got, want, err_msg=f"{f} {size}")


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", MODES)
def test_uniform(dtype, shape, mode):
    x = arr(shape, dtype)
    for size in [3, 2, 31]:
        np.testing.assert_array_equal(
            gpuprims.uniform_filter(x, size, mode=mode, cval=3), ndimage.uniform_filter(x, size, mode=mode, cval=3)
        )
        for axis in range(-x.ndim, x.ndim):
            np.testing.assert_array_equal(
                gpuprims.uniform_filter1d(x, size, axis, mode=mode, cval=3),
                ndimage.uniform_filter1d(x, size, axis, mode=mode, cval=3),
            )


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", MODES)
def test_linear(shape, mode):
    xf = arr(shape, np.float32)
    xu = arr(shape, np.uint8)
    for axis in range(x_ndim := len(shape)):
        w = [0.25, 0.5, 0.125]
        np.testing.assert_array_equal(gpuprims.correlate1d(xu, w, axis, mode=mode), ndimage.correlate1d(xu, w, axis, mode=mode))
        np.testing.assert_allclose(
            gpuprims.correlate1d(xf, [1.5, -2, 0.5, 1], axis, mode=mode),
            ndimage.correlate1d(xf, [1.5, -2, 0.5, 1], axis, mode=mode),
            rtol=1e-6, atol=1e-4,
        )
        np.testing.assert_allclose(gpuprims.sobel(xf, axis, mode=mode), ndimage.sobel(xf, axis, mode=mode), rtol=1e-6, atol=1e-3)
        np.testing.assert_array_equal(
            gpuprims.sobel(xu, axis, output=np.int16, mode=mode), ndimage.sobel(xu.astype(np.int16), axis, mode=mode)
        )
    for sigma in [1.0, [0.5 + 0.5 * a for a in range(x_ndim)]]:
        np.testing.assert_allclose(
            gpuprims.gaussian_filter(xf, sigma, mode=mode), ndimage.gaussian_filter(xf, sigma, mode=mode), rtol=1e-5, atol=1e-4
        )
        d = gpuprims.gaussian_filter(xu, sigma, mode=mode).astype(int) - ndimage.gaussian_filter(xu, sigma, mode=mode)
        assert np.abs(d).max() <= 1


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", MODES)
def test_one_axis_names_and_derivatives(shape, mode):
    """gaussian_filter1d, maximum_filter1d, minimum_filter1d along every axis; prewitt and laplace
    (float32: scipy wraps unsigned negatives, gpuprims saturates)."""
    xu, xf = arr(shape, np.uint8), arr(shape, np.float32)
    for axis in range(-len(shape), len(shape)):
        for f, size in [("maximum_filter1d", 5), ("minimum_filter1d", 4)]:
            for v in views(xu):
                np.testing.assert_array_equal(
                    getattr(gpuprims, f)(v, size, axis, mode=mode, cval=7), getattr(ndimage, f)(xu, size, axis, mode=mode, cval=7)
                )
        np.testing.assert_allclose(
            gpuprims.gaussian_filter1d(xf, 1.5, axis, mode=mode), ndimage.gaussian_filter1d(xf, 1.5, axis, mode=mode),
            rtol=1e-5, atol=1e-4,
        )
        np.testing.assert_array_equal(
            gpuprims.prewitt(xf, axis, mode=mode, cval=2.5), ndimage.prewitt(xf, axis, mode=mode, cval=2.5)
        )
    np.testing.assert_array_equal(gpuprims.laplace(xf, mode=mode, cval=2.5), ndimage.laplace(xf, mode=mode, cval=2.5))
    np.testing.assert_array_equal(
        gpuprims.laplace(xu, output=np.float32, mode=mode), ndimage.laplace(xu, output=np.float32, mode=mode)
    )


@pytest.mark.parametrize("mode", MODES)
def test_output_dtypes_and_constants(mode):
    """scipy writes each pass in the output's dtype and reads a constant border as the unrounded
    float: a wider output runs the op in it; an extremum truncates a fractional constant."""
    x = arr((6, 9, 11), np.uint8)
    for cval in (7, 2.7):
        for f in ["grey_dilation", "grey_erosion", "grey_opening", "grey_closing"]:
            np.testing.assert_array_equal(
                getattr(gpuprims, f)(x, size=(3, 2, 5), mode=mode, cval=cval),
                getattr(ndimage, f)(x, size=(3, 2, 5), mode=mode, cval=cval), err_msg=f"{f} {cval}",
            )
        for f in ["grey_dilation", "white_tophat", "black_tophat"]:
            np.testing.assert_array_equal(
                getattr(gpuprims, f)(x, size=3, mode=mode, cval=cval, output=np.float32),
                getattr(ndimage, f)(x, size=3, mode=mode, cval=cval, output=np.float32), err_msg=f,
            )
        for name, kw in [("uniform_filter", dict(size=(3, 4, 5))), ("gaussian_filter", dict(sigma=1.5)),
                         ("correlate1d", dict(weights=[0.3, -1.2, 0.5], axis=1)), ("sobel", dict(axis=2))]:
            for out in (np.float32, np.zeros(x.shape, np.float32)):
                want = getattr(ndimage, name)(x, **kw, mode=mode, cval=cval, output=np.float32)
                got = getattr(gpuprims, name)(x, **kw, mode=mode, cval=cval, output=out)
                assert got.dtype == np.float32
                if cval == 7 or mode != "constant":
                    np.testing.assert_array_equal(got, want, err_msg=f"{name} {cval}")
                else:  # the constant in float32 where scipy sums its float64 value
                    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5, err_msg=f"{name} {cval}")
    np.testing.assert_array_equal(
        gpuprims.uniform_filter(x, 3, output=np.float64), ndimage.uniform_filter(x, 3, output=np.float64)
    )


@pytest.mark.parametrize("shape", SHAPES + [(40,)])
@pytest.mark.parametrize("mode", MODES)
def test_correlate_2d_weights(shape, mode):
    """correlate / convolve (weights over the last two axes) within the float32 bound: kh · kw
    float32 multiply-adds, the weights rounded to float32."""
    x = arr(shape, np.float32)
    for k in [(3, 3), (2, 5), (1, 7), (5, 1), (4, 4)]:
        k = k if len(shape) >= 2 else k[1:]
        w = rng.uniform(-1, 1, (1,) * (len(shape) - len(k)) + k)
        bound = 2 * (w.size + 1) * 2.0**-23 * 50 * np.abs(w).sum() + 2.5 * np.abs(w).sum() * 2.0**-23
        want = ndimage.correlate(x, w, mode=mode, cval=2.5)
        for v in views(x):
            got = gpuprims.correlate(v, w, mode=mode, cval=2.5)
            assert got.dtype == np.float32 and got.shape == x.shape
            np.testing.assert_allclose(got, want, rtol=0, atol=bound, err_msg=f"correlate {w.shape}")
        if all(n % 2 for n in w.shape):
            np.testing.assert_allclose(
                gpuprims.convolve(x, w, mode=mode, cval=2.5), ndimage.convolve(x, w, mode=mode, cval=2.5),
                rtol=0, atol=bound, err_msg=f"convolve {w.shape}",
            )


@pytest.mark.parametrize("mode", MODES)
def test_local_std(mode):
    x = arr((13, 17, 19), np.uint8)
    _, var = gpuprims.local_mean_variance(x, (3, 5, 1), mode=mode, cval=9)
    got = gpuprims.local_std(x, (3, 5, 1), mode=mode, cval=9)
    np.testing.assert_array_equal(got, np.sqrt(var))
    want = ndimage.generic_filter(x.astype(np.float64), np.std, size=(3, 5, 1), mode=mode, cval=9)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_pooling_against_torch():
    torch = pytest.importorskip("torch")
    x = arr((2, 3, 17, 20), np.float32)
    t = torch.from_numpy(x)
    for k, s, p, d, c in [(2, None, 0, 1, False), (3, 2, 1, 1, True), ((3, 2), (2, 1), (1, 0), (2, 1), False)]:
        got, idx = gpuprims.max_pool2d(x, k, s, p, d, c, return_indices=True)
        want, widx = torch.nn.functional.max_pool2d(t, k, s, p, d, c, return_indices=True)
        np.testing.assert_array_equal(got, want.numpy())
        np.testing.assert_array_equal(idx, widx.numpy())
    for k, s, p, c, inc, div in [(2, None, 0, False, True, None), (3, 2, 1, True, False, None), (3, 1, 1, False, True, 4)]:
        got = gpuprims.avg_pool2d(x, k, s, p, c, inc, div)
        want = torch.nn.functional.avg_pool2d(t, k, s, p, c, inc, div)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-6)


def test_input_untouched_and_threads():
    from concurrent.futures import ThreadPoolExecutor

    x = arr((64, 256, 256), np.uint8)
    before = x.copy()
    want = ndimage.grey_dilation(x, size=(3, 5, 5))
    with ThreadPoolExecutor(4) as ex:
        for got in ex.map(lambda _: gpuprims.grey_dilation(x, size=(3, 5, 5)), range(8)):
            np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(x, before)


def test_cupy_arrays_zero_copy_on_the_callers_stream():
    cp = pytest.importorskip("cupy")
    x = arr((20, 64, 70), np.uint8)
    xd = cp.asarray(x)
    y = gpuprims.grey_dilation(xd, size=(3, 5, 5), mode="nearest")
    assert isinstance(y, cp.ndarray) and y.device.id == xd.device.id
    assert y.data.ptr != xd.data.ptr
    np.testing.assert_array_equal(cp.asnumpy(y), ndimage.grey_dilation(x, size=(3, 5, 5), mode="nearest"))
    np.testing.assert_array_equal(cp.asnumpy(xd), x)  # input untouched
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        big = cp.zeros((64, 512, 512), cp.float32)
        for _ in range(20):
            big += 1  # queued on s before the gpuprims call, which must see all of it
        z = gpuprims.uniform_filter(big, 3)
        assert float(z.min()) == 20.0 and float(z.max()) == 20.0
    f = cp.asarray(arr((9, 33, 40), np.float32))
    np.testing.assert_array_equal(
        cp.asnumpy(gpuprims.gaussian_filter(f, 1.5)), gpuprims.gaussian_filter(cp.asnumpy(f), 1.5)
    )


def test_torch_tensors_zero_copy_on_the_callers_stream():
    torch = pytest.importorskip("torch")
    x = arr((6, 40, 50), np.float32)
    t = torch.from_numpy(x).cuda()
    y = gpuprims.uniform_filter1d(t, 5, axis=0)
    assert isinstance(y, torch.Tensor) and y.is_cuda and y.data_ptr() != t.data_ptr()
    np.testing.assert_array_equal(y.cpu().numpy(), ndimage.uniform_filter1d(x, 5, axis=0))
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        z = torch.zeros((32, 256, 256), device="cuda")
        torch.cuda._sleep(100_000_000)  # a long kernel first, then the write, then gpuprims
        z.add_(5)
        w = gpuprims.grey_erosion(z, size=3)
        assert float(w.min()) == 5.0
    with pytest.raises(TypeError):
        gpuprims.grey_dilation(torch.zeros(3, 3), size=3)  # a CPU tensor


def test_dask_map_overlap_is_bit_exact():
    da = pytest.importorskip("dask.array")
    x = arr((3, 300, 260), np.uint8)
    for mode in ["reflect", "nearest", "mirror", "constant", "wrap"]:
        boundary = "periodic" if mode == "wrap" else "none"
        d = da.from_array(x, chunks=(1, 100, 130))
        got = d.map_overlap(
            lambda c: gpuprims.grey_dilation(c, size=(1, 9, 9), mode=mode),
            depth={0: 0, 1: 4, 2: 4},
            boundary=boundary,
            dtype=x.dtype,
        ).compute(scheduler="threads")
        np.testing.assert_array_equal(got, gpuprims.grey_dilation(x, size=(1, 9, 9), mode=mode), err_msg=mode)


def test_gpuprims_own_ops():
    x = arr((33, 70), np.uint8)
    assert gpuprims.sum(x) == int(x.astype(np.int64).sum())
    assert gpuprims.sum_of_squares(x.astype(np.int32)) == int((x.astype(np.int64) ** 2).sum())
    assert gpuprims.min(x) == x.min() and gpuprims.max(x) == x.max()
    m, v = gpuprims.mean_variance(x)
    assert abs(m - x.mean()) < 1e-9 and abs(v - x.var()) < 1e-6
    s, q = gpuprims.window_sum_sumsq(x, 15, mode="constant", dtype=np.float64)
    # Exact integer window sums: scipy's correlate1d over int64 (every partial sum < 2^53).
    ones = np.ones(15, np.int64)
    np.testing.assert_array_equal(s, ndimage.correlate1d(x.astype(np.int64), ones, mode="constant"))
    np.testing.assert_array_equal(q, ndimage.correlate1d(x.astype(np.int64) ** 2, ones, mode="constant"))
    g = gpuprims.gaussian3x3(x, mode="nearest")
    y = gpuprims.Chain().gaussian3x3().dilate(3)(x, mode="nearest")
    np.testing.assert_array_equal(y, gpuprims.grey_dilation(g, size=3, mode="nearest"))
    sx = gpuprims.Chain().gaussian3x3().sobel(1)(x, mode="nearest")
    assert sx.dtype == np.int16
