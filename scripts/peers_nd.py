"""Times cupyx.scipy.ndimage (and cuCIM's 3-D dilation and Gaussian, where installed) on the n-D workloads of examples/volumes.rs (same shapes, reflect
border), on the GPU the example ran on, in the same call: median of CUDA-event times after
warm-up, a fresh output per call. Prints one row per op and writes each to the CSV argv[1] if given.

    python3 scripts/peers_nd.py [rows.csv] [--only WORD,WORD]

``--only`` times just the rows whose op names contain one of the words (e.g. ``gaussian,dilat``).
"""
import sys

import cupy as cp
import cupyx.scipy.ndimage as nd

try:
    from cucim.skimage.filters import gaussian as cucim_gaussian
    from cucim.skimage.morphology import dilation as cucim_dilation
    from cucim.skimage.morphology import footprint_rectangle
except ImportError as e:
    print(f"# cuCIM not importable: {e}", flush=True)
    cucim_dilation = None


def median_us(f, runs=20):
    for _ in range(3):
        f()
    times = []
    for _ in range(runs):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        f()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b) * 1e3)
    times.sort()
    return times[len(times) // 2]


rng = cp.random.default_rng(512)
xf = rng.random((512, 512, 512), dtype=cp.float32)
xu = (rng.random((256, 1024, 1024), dtype=cp.float32) * 255).astype(cp.uint8)
xu512 = (rng.random((512, 512, 512), dtype=cp.float32) * 255).astype(cp.uint8)
args = sys.argv[1:]
only = args[args.index("--only") + 1].split(",") if "--only" in args else None
if only:
    del args[args.index("--only") : args.index("--only") + 2]
csv = open(args[0], "w") if args else None
if csv:
    csv.write("op,shape,cupyx_us\n")


def row(op, shape, f, runs=10):
    if only and not any(w in op for w in only):
        return
    us = median_us(f, runs)
    print(f"{op:<44} {shape:>22} {us:>10.1f} µs", flush=True)
    if csv:
        csv.write(f"{op},\"{shape}\",{us:.2f}\n")
        csv.flush()


def local_mean_variance(x, k):
    xf64 = x.astype(cp.float64)
    m = nd.uniform_filter(xf64, k, mode="reflect")
    return m.astype(cp.float32), (nd.uniform_filter(xf64 * xf64, k, mode="reflect") - m * m).astype(cp.float32)


fs, us, u5 = "[512, 512, 512] f32", "[256, 1024, 1024] u8", "[512, 512, 512] u8"
for axis in range(3):
    for size in (5, 31):
        row(f"uniform_filter1d w{size} axis {axis}", fs, lambda: nd.uniform_filter1d(xf, size, axis, mode="reflect"))
        row(f"uniform_filter1d w{size} axis {axis}", us, lambda: nd.uniform_filter1d(xu, size, axis, mode="reflect"))
    row(f"running max w31 axis {axis}", fs, lambda: nd.maximum_filter1d(xf, 31, axis, mode="reflect"))
    row(f"running max w31 axis {axis}", us, lambda: nd.maximum_filter1d(xu, 31, axis, mode="reflect"))
row("gaussian_nd σ=2", fs, lambda: nd.gaussian_filter(xf, 2.0, mode="reflect"))
row("dilate_nd 5³", u5, lambda: nd.grey_dilation(xu512, size=(5, 5, 5), mode="reflect"))
row("local_mean_variance_nd 15³ → f32", u5, lambda: local_mean_variance(xu512, 15), runs=5)
row("local_mean_variance_nd 15³ → f32", fs, lambda: local_mean_variance(xf, 15), runs=5)
row("dilate_nd 31³", u5, lambda: nd.grey_dilation(xu512, size=(31, 31, 31), mode="reflect"), runs=3)
if cucim_dilation is not None:
    # cuCIM's fastest box: the footprint decomposed into 1-D passes; checked equal to cupyx's.
    for k in (5, 31):
        fp = footprint_rectangle((k, k, k), decomposition="separable")
        assert bool((cucim_dilation(xu512, fp) == nd.grey_dilation(xu512, size=(k, k, k), mode="reflect")).all())
        row(f"cucim dilation {k}³ (separable footprint)", u5, lambda: cucim_dilation(xu512, fp), runs=5)
    g = cucim_gaussian(xf, sigma=2.0, mode="reflect", truncate=4.0, preserve_range=True)
    assert g.dtype == cp.float32 and bool(cp.allclose(g, nd.gaussian_filter(xf, 2.0, mode="reflect"), atol=1e-6))
    row("cucim gaussian σ=2", fs, lambda: cucim_gaussian(xf, sigma=2.0, mode="reflect", truncate=4.0, preserve_range=True))
