"""GPU checks on device arrays (skipped without a device, CuPy or PyTorch): every function on CuPy
arrays against ``cupyx.scipy.ndimage`` on the same device inputs, pooling on CUDA tensors against
``torch.nn.functional``, gpuprims's own ops on device arrays against the same call on NumPy, and the
life of exported buffers (freed in their stream's order, a dead stream is never touched)."""
import numpy as np
import pytest

import gpuprims

pytestmark = pytest.mark.skipif(not gpuprims.device()[0], reason="no CUDA device")
MODES = ["reflect", "constant", "nearest", "mirror", "wrap"]
rng = np.random.default_rng(7475)


def arr(shape, dtype):
    if np.dtype(dtype).kind == "u":
        return rng.integers(0, np.iinfo(dtype).max + 1, shape).astype(dtype)
    return rng.uniform(-50, 50, shape).astype(dtype)


@pytest.fixture(scope="module")
def cp():
    return pytest.importorskip("cupy")


@pytest.fixture(scope="module")
def cndi():
    return pytest.importorskip("cupyx.scipy.ndimage")


def agree(got, want, reference, exact=True):
    """``got`` (gpuprims on a CuPy array) equals cupyx's ``want``, or, where cupyx departs from
    scipy, equals scipy's ``reference()`` on the host (the semantics gpuprims names); floats within
    the documented bound. Returns whether cupyx agreed."""
    cp = pytest.importorskip("cupy")
    check = np.testing.assert_array_equal if exact else (lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-3))
    g = cp.asnumpy(got)
    try:
        check(g, cp.asnumpy(want))
        return True
    except AssertionError:
        check(g, reference())
        return False


CUPYX_DEPARTS = []


@pytest.mark.parametrize("mode", MODES)
def test_against_cupyx(cp, cndi, mode):
    ndimage = pytest.importorskip("scipy.ndimage")
    for shape in [(1, 37), (5, 7, 9)]:
        for dtype in (np.uint8, np.float32):
            h = arr(shape, dtype)
            x = cp.asarray(h)
            for size in (3, tuple(min(s + 1, 5) for s in shape)):
                for f in ("grey_dilation", "grey_opening", "white_tophat"):
                    got = getattr(gpuprims, f)(x, size=size, mode=mode, cval=7)
                    assert isinstance(got, cp.ndarray) and got.dtype == x.dtype
                    want = getattr(cndi, f)(x, size=size, mode=mode, cval=7)
                    if not agree(got, want, lambda: getattr(ndimage, f)(h, size=size, mode=mode, cval=7)):
                        CUPYX_DEPARTS.append(f"{f} {dtype.__name__} {shape} size {size} {mode}")
        hf = arr(shape, np.float32)
        xf = cp.asarray(hf)
        for axis in range(len(shape)):
            for name, ours, theirs, ref in [
                ("uniform_filter1d", lambda a: gpuprims.uniform_filter1d(a, 8, axis, mode=mode),
                 lambda a: cndi.uniform_filter1d(a, 8, axis, mode=mode), lambda: ndimage.uniform_filter1d(hf, 8, axis, mode=mode)),
                ("correlate1d", lambda a: gpuprims.correlate1d(a, [1.5, -2.0, 0.5, 1.0], axis, mode=mode),
                 lambda a: cndi.correlate1d(a, cp.asarray([1.5, -2.0, 0.5, 1.0]), axis, mode=mode),
                 lambda: ndimage.correlate1d(hf, [1.5, -2.0, 0.5, 1.0], axis, mode=mode)),
                ("sobel", lambda a: gpuprims.sobel(a, axis, mode=mode), lambda a: cndi.sobel(a, axis, mode=mode),
                 lambda: ndimage.sobel(hf, axis, mode=mode)),
            ]:
                if not agree(ours(xf), theirs(xf), ref, exact=False):
                    CUPYX_DEPARTS.append(f"{name} float32 {shape} axis {axis} {mode}")
        got = gpuprims.gaussian_filter(xf, 1.5, mode=mode)
        if not agree(got, cndi.gaussian_filter(xf, 1.5, mode=mode), lambda: ndimage.gaussian_filter(hf, 1.5, mode=mode), exact=False):
            CUPYX_DEPARTS.append(f"gaussian_filter float32 {shape} {mode}")
    if CUPYX_DEPARTS:
        print("cupyx departs from scipy (gpuprims matches scipy) in: " + "; ".join(CUPYX_DEPARTS))


@pytest.mark.parametrize("mode", MODES)
def test_sobel_u8_to_int16_against_cupyx(cp, cndi, mode):
    ndimage = pytest.importorskip("scipy.ndimage")
    h = arr((67, 129), np.uint8)
    x = cp.asarray(h)
    for axis in (0, 1):
        got = gpuprims.sobel(x, axis, output=np.int16, mode=mode)
        assert got.dtype == cp.int16
        agree(got, cndi.sobel(x, axis, output=cp.int16, mode=mode), lambda: ndimage.sobel(h.astype(np.int16), axis, mode=mode))


def test_pooling_on_cuda_tensors_against_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    t = torch.from_numpy(arr((2, 3, 17, 20), np.float32)).cuda()
    for k, s, p, d, c in [(2, None, 0, 1, False), (3, 2, 1, 1, True), ((3, 2), (2, 1), (1, 0), (2, 1), False)]:
        got, idx = gpuprims.max_pool2d(t, k, s, p, d, c, return_indices=True)
        want, widx = F.max_pool2d(t, k, s, p, d, c, return_indices=True)
        assert got.is_cuda and idx.dtype == torch.int64
        assert torch.equal(got, want) and torch.equal(idx, widx)
        assert torch.equal(gpuprims.max_pool2d(t, k, s, p, d, c), want)
    for k, s, p, c, inc, div in [(2, None, 0, False, True, None), (3, 2, 1, True, False, None), (3, 1, 1, False, True, 4)]:
        got = gpuprims.avg_pool2d(t, k, s, p, c, inc, div)
        torch.testing.assert_close(got, F.avg_pool2d(t, k, s, p, c, inc, div), rtol=1e-6, atol=1e-6)


def test_own_ops_on_device_arrays_equal_numpy(cp):
    x = arr((33, 70), np.uint8)
    xd = cp.asarray(x)
    assert gpuprims.sum(xd) == gpuprims.sum(x) == int(x.astype(np.int64).sum())
    assert gpuprims.sum_of_squares(xd) == gpuprims.sum_of_squares(x)
    assert gpuprims.min(xd) == x.min() and gpuprims.max(xd) == x.max()
    assert gpuprims.mean_variance(xd) == gpuprims.mean_variance(x)
    for dtype in (np.float32, np.float64):
        s, q = gpuprims.window_sum_sumsq(xd, 15, mode="constant", dtype=dtype)
        hs, hq = gpuprims.window_sum_sumsq(x, 15, mode="constant", dtype=dtype)
        cp.testing.assert_array_equal(s, hs)
        cp.testing.assert_array_equal(q, hq)
    m, v = gpuprims.local_mean_variance(cp.asarray(arr((9, 20, 31), np.uint16)), (3, 5, 7))
    assert m.dtype == cp.float32 and v.shape == (9, 20, 31)
    cp.testing.assert_array_equal(gpuprims.gaussian3x3(xd, mode="nearest"), gpuprims.gaussian3x3(x, mode="nearest"))
    vol = arr((4, 20, 31), np.uint16)
    cp.testing.assert_array_equal(gpuprims.local_std(cp.asarray(vol), 5), gpuprims.local_std(vol, 5))
    xf, w = arr((3, 33, 70), np.float32), rng.uniform(-1, 1, (1, 5, 3))
    cp.testing.assert_array_equal(gpuprims.correlate(cp.asarray(xf), w), gpuprims.correlate(xf, w))
    cp.testing.assert_array_equal(gpuprims.correlate(cp.asarray(xf[0, 0]), w[0, 0]), gpuprims.correlate(xf[0, 0], w[0, 0]))
    c = gpuprims.Chain().gaussian3x3().dilate(3).sobel(1)
    got = c(xd, mode="nearest")
    assert got.dtype == cp.int16
    cp.testing.assert_array_equal(got, c(x, mode="nearest"))


def test_exported_buffers_are_freed_in_stream_order(cp):
    """Outputs dropped in a loop are reused without growing memory or waiting on the host; an output
    that outlives its (destroyed) stream is freed safely."""
    x = cp.ones((16, 512, 512), cp.float32)  # 16 MiB
    cp.cuda.Device().synchronize()
    free_before = cp.cuda.runtime.memGetInfo()[0]
    for _ in range(200):  # 3.2 GiB of outputs if none were freed
        y = gpuprims.uniform_filter1d(x, 3, axis=0)
    assert float(y.max()) == 1.0
    del y
    cp.cuda.Device().synchronize()
    assert free_before - cp.cuda.runtime.memGetInfo()[0] < (256 << 20)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        z = gpuprims.grey_dilation(x, size=3)
    s.synchronize()
    del s  # the stream is destroyed; z was handed to it
    assert float(z.min()) == 1.0
    del z
    w = gpuprims.grey_dilation(x, size=3)  # the graveyard of the dead stream is never touched
    assert float(w.max()) == 1.0


def test_results_own_their_memory(cp):
    """A view keeps its result's buffer alive; a buffer hands itself on by DLPack once."""
    x = cp.asarray(arr((64, 65), np.uint8))
    want = gpuprims.grey_dilation(x.get(), size=3)
    v = gpuprims.grey_dilation(x, size=3)[1:, ::2]
    w = gpuprims.grey_erosion(x, size=3)  # made where v's buffer would be, had it been freed
    cp.testing.assert_array_equal(v, want[1:, ::2])
    cp.testing.assert_array_equal(w, gpuprims.grey_erosion(x.get(), size=3))
    s = cp.cuda.get_current_stream().ptr or 1
    b = gpuprims._native.nd((x.__dlpack__(stream=s), s), "dilation", [3, 3], [], 0, 0.0, "reflect", 0.0)
    assert (b.shape, b.dtype, b.nbytes, b.device) == ([64, 65], "uint8", 64 * 65, x.device.id)
    y = cp.from_dlpack(b)
    with pytest.raises(BufferError):
        b.__dlpack__()
    with pytest.raises(BufferError):
        b.shape
    del b
    cp.testing.assert_array_equal(y, want)
