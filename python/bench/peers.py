#!/usr/bin/env python3
"""gpuprims from Python against cupyx.scipy.ndimage, cuCIM (where installed) and
torch.nn.functional, on the same device arrays in the same process: the classic workloads (W3–W10,
W12 of shared/peers) and the per-call overhead.

    python3 python/bench/peers.py [--quick] [--csv FILE]

cuCIM's rows run where ``cucim`` imports (``scripts/peer-wheels.sh`` brings its wheels to a GPU
machine without pip or network).

Every gpuprims call takes a CuPy array (or a CUDA tensor for the torch workloads) and returns the
same kind without copies (in by DLPack; out as a CuPy array over the result's buffer or a tensor
from its DLPack capsule), as a user calls it. Method: each implementation runs once and
is checked (against its peer's output, or gpuprims's unfused ops for the fused chain), then 3
warm-ups and the median of 30 runs bracketed by CUDA events on the current stream; each call
allocates its output, as a user's call does. GB/s counts each input byte read once and each
output byte written once. The device-to-device copy of the largest image is timed the same way,
as the ceiling.

Overhead: a 512 × 512 u8 3 × 3 ``grey_dilation`` on a CuPy array, 1,000 calls in a row with no
synchronisation (each output dropped by the next assignment); the median host time per call.
`cargo run --release --example call_overhead` times the same call from Rust.
"""
import argparse
import statistics
import sys
import time

import numpy as np

import gpuprims

WARMUP, RUNS = 3, 30


def timed(fn, sync, event):
    """``(median, fastest, slowest)`` of RUNS event-timed calls after WARMUP, µs."""
    for _ in range(WARMUP):
        fn()
    sync()
    evs = [(event(), event()) for _ in range(RUNS)]
    for s, e in evs:
        s.record()
        fn()
        e.record()
    sync()
    times = sorted(s.elapsed_time(e) * 1000.0 for s, e in evs)
    return statistics.median(times), times[0], times[-1]


class Bench:
    def __init__(self, csv):
        import cupy as cp
        import torch

        self.cp, self.torch, self.rows = cp, torch, []
        self.csv = open(csv, "w") if csv else None
        self.line("workload,impl,shape,dtype,median_us,gbps,pct_copy,vs_gpuprims")
        self.copy_gbps = None

    def line(self, s):
        print(s, flush=True)
        if self.csv:
            self.csv.write(s + "\n")
            self.csv.flush()

    def cupy_time(self, fn):
        cp = self.cp

        class Ev:
            def __init__(self):
                self.e = cp.cuda.Event()

            def record(self):
                self.e.record(cp.cuda.get_current_stream())

            def elapsed_time(self, other):
                return cp.cuda.get_elapsed_time(self.e, other.e)

        return timed(fn, cp.cuda.Device().synchronize, Ev)

    def torch_time(self, fn):
        t = self.torch
        return timed(fn, t.cuda.synchronize, lambda: t.cuda.Event(enable_timing=True))

    def run(self, workload, shape, dtype, nbytes, ours, peers, check, lib="cupy"):
        """``ours``: the gpuprims call; ``peers``: {name: call}; ``check(ours_out, peer_outs)``
        raises when the outputs disagree."""
        time_of = self.cupy_time if lib == "cupy" else self.torch_time
        outs = {name: f() for name, f in peers.items()}
        check(ours(), outs)
        del outs
        t_ours, lo, hi = time_of(ours)
        self.line(f"# {workload} gpuprims: min {lo:.1f} us, max {hi:.1f} us of {RUNS}")
        self.emit(workload, "gpuprims", shape, dtype, t_ours, nbytes, t_ours)
        for name, f in peers.items():
            self.emit(workload, name, shape, dtype, time_of(f)[0], nbytes, t_ours)

    def emit(self, workload, impl, shape, dtype, us, nbytes, t_ours):
        gbps = nbytes / (us * 1e-6) / 1e9
        pct = 100.0 * gbps / self.copy_gbps if self.copy_gbps else float("nan")
        self.line(f"{workload},{impl},\"{shape}\",{dtype},{us:.1f},{gbps:.1f},{pct:.1f},{us / t_ours:.2f}")


def load_cucim():
    """cuCIM's scikit-image functions the workloads use, or None where it is not installed."""
    try:
        import cucim
        from cucim.skimage.filters import gaussian, sobel
        from cucim.skimage.morphology import dilation, footprint_rectangle
    except ImportError as e:
        print(f"# cuCIM not importable: {e}", flush=True)
        return None
    import types

    return types.SimpleNamespace(version=cucim.__version__, dilation=dilation, footprint_rectangle=footprint_rectangle,
                                 gaussian=gaussian, sobel=sobel)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="1024² images instead of 8192²")
    ap.add_argument("--csv")
    args = ap.parse_args()
    import cupy as cp
    import cupyx.scipy.ndimage as cndi
    import torch
    import torch.nn.functional as F

    cucim = load_cucim()
    side = 1024 if args.quick else 8192
    b = Bench(args.csv)
    print(f"# device: {torch.cuda.get_device_name(0)}; cupy {cp.__version__}; torch {torch.__version__}; "
          f"cucim {cucim.version if cucim else 'not installed'}", flush=True)
    rng = np.random.default_rng(2026)
    img = cp.asarray(rng.integers(0, 256, (side, side), dtype=np.uint8))
    n = img.size
    shape = f"{side}x{side}"

    big = cp.empty(side * side * 4, cp.uint8)
    dst = cp.empty_like(big)
    t = b.cupy_time(lambda: dst.__setitem__(Ellipsis, big))[0]
    b.copy_gbps = 2.0 * big.nbytes / (t * 1e-6) / 1e9
    b.line(f"copy,cupy_d2d,\"{big.nbytes}B\",uint8,{t:.1f},{b.copy_gbps:.1f},100.0,nan")
    del big, dst

    def equal(a, peer):
        def check(ours, outs):
            cp.testing.assert_array_equal(ours, outs[peer])

        return check

    # W3: window-15 row sums and sums of squares, u8 -> f32, zero padding.
    def w3_peer():
        f = img.astype(cp.float32)
        return (cndi.uniform_filter1d(f, 15, axis=1, mode="constant"), cndi.uniform_filter1d(f * f, 15, axis=1, mode="constant"))

    def w3_check(ours, outs):
        (s, q), (m, mq) = ours, outs["cupyx_uniform_filter1d_x2"]
        cp.testing.assert_allclose(s, m * 15, rtol=1e-5, atol=1e-2)
        cp.testing.assert_allclose(q, mq * 15, rtol=1e-5, atol=1.0)

    b.run("W3_winsum15", shape, "uint8->2xfloat32", 9.0 * n,
          lambda: gpuprims.window_sum_sumsq(img, 15, mode="constant"), {"cupyx_uniform_filter1d_x2": w3_peer}, w3_check)

    # W5: 3 x 3 Gaussian, u8, replicate (cupyx truncates its float sum; gpuprims rounds half up).
    g3 = cp.asarray(np.outer([1, 2, 1], [1, 2, 1]).astype(np.float32) / 16)

    def w5_check(ours, outs):
        d = cp.abs(ours.astype(cp.int16) - outs["cupyx_correlate"].astype(cp.int16))
        assert int(d.max()) <= 1

    b.run("W5_gauss3x3", shape, "uint8", 2.0 * n, lambda: gpuprims.gaussian3x3(img, mode="nearest"),
          {"cupyx_correlate": lambda: cndi.correlate(img, g3, mode="nearest")}, w5_check)

    # W6, W7, W9: grey dilation, u8, reflect; cuCIM with its fastest footprint (the rectangle
    # decomposed into 1-D passes), checked equal.
    def dilation_peers(k):
        peers = {"cupyx_grey_dilation": lambda: cndi.grey_dilation(img, size=(k, k))}
        if cucim is not None:
            fp = cucim.footprint_rectangle((k, k), decomposition="separable")
            peers["cucim_dilation_separable"] = lambda: cucim.dilation(img, fp)
        return peers

    def dilation_check(ours, outs):
        for peer in outs.values():
            cp.testing.assert_array_equal(ours, peer)

    for w, k in (("W6_dilate3x3", 3), ("W7_dilate5x5", 5), ("W9_dilate31x31", 31)):
        b.run(w, shape, "uint8", 2.0 * n, lambda k=k: gpuprims.grey_dilation(img, size=(k, k)), dilation_peers(k),
              dilation_check)

    # W8: Sobel along axis 0, u8 -> int16, replicate. cuCIM's sobel is scikit-image's: the image
    # scaled to [0, 1], smoothing [1, 2, 1] / 4, float32 out, same sign: checked as ours / 1020.
    w8_peers = {"cupyx_sobel": lambda: cndi.sobel(img, 0, output=cp.int16, mode="nearest")}
    if cucim is not None:
        w8_peers["cucim_sobel_float32"] = lambda: cucim.sobel(img, axis=0, mode="nearest")

    def w8_check(ours, outs):
        cp.testing.assert_array_equal(ours, outs["cupyx_sobel"])
        if "cucim_sobel_float32" in outs:
            cp.testing.assert_allclose(outs["cucim_sobel_float32"], ours / 1020.0, rtol=1e-5, atol=1e-6)

    b.run("W8_sobel3x3", shape, "uint8->int16", 3.0 * n, lambda: gpuprims.sobel(img, 0, output=np.int16, mode="nearest"),
          w8_peers, w8_check)

    # W12: 64 images of 512², Gaussian 3 x 3 -> 3 x 3 dilation -> Sobel along x. gpuprims: one
    # fused Chain on u8 (int16 out); the peers run their float32 ops one call each over the batch.
    stack = cp.asarray(rng.integers(0, 256, (64, 512, 512), dtype=np.uint8))
    sf = stack.astype(cp.float32)
    chain = gpuprims.Chain().gaussian3x3().dilate(3).sobel(1)
    wg = cp.asarray(np.outer([1, 2, 1], [1, 2, 1]).reshape(1, 3, 3).astype(np.float32) / 16)
    ws = cp.asarray(np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], np.float32).reshape(1, 3, 3))

    def w12_cupyx():
        a = cndi.correlate(sf, wg, mode="nearest")
        a = cndi.grey_dilation(a, size=(1, 3, 3), mode="nearest")
        return cndi.correlate(a, ws, mode="nearest")

    def w12_check(ours, outs):
        g = gpuprims.gaussian3x3(stack, mode="nearest")
        d = gpuprims.grey_dilation(g, size=(1, 3, 3), mode="nearest")
        want = cp.stack([gpuprims.sobel(p, 1, output=np.int16, mode="nearest") for p in d])
        cp.testing.assert_array_equal(ours, want)

    b.run("W12_chain64x512", "64x512x512", "uint8->int16 (peers float32)", 3.0 * stack.size,
          lambda: chain(stack, mode="nearest"), {"cupyx_correlate_dilation_correlate": w12_cupyx}, w12_check)
    del stack, sf

    # W4, W10: max pooling of float32 NCHW tensors, against torch.
    for w, shp, kw in (("W4_maxpool2x2", (64, 64, 224, 224), dict(kernel_size=2)),
                       ("W10_maxpool3x3s2p1", (64, 64, 224, 224), dict(kernel_size=3, stride=2, padding=1))):
        if args.quick:
            shp = (8, 16, 224, 224)
        x = torch.rand(shp, device="cuda") * 2 - 1
        y = F.max_pool2d(x, **kw)

        def check(ours, outs):
            assert torch.equal(ours, outs["torch_F_max_pool2d"])

        b.run(w, "x".join(map(str, shp)), "float32", 4.0 * (x.numel() + y.numel()),
              lambda x=x, kw=kw: gpuprims.max_pool2d(x, **kw), {"torch_F_max_pool2d": lambda x=x, kw=kw: F.max_pool2d(x, **kw)},
              check, lib="torch")
        del x, y

    # Per-call overhead: 1,000 calls queued with no synchronisation.
    small = cp.asarray(rng.integers(0, 256, (512, 512), dtype=np.uint8))
    small_t = torch.as_tensor(small, device="cuda")
    for name, call in (("gpuprims_grey_dilation", lambda: gpuprims.grey_dilation(small, size=3)),
                       ("gpuprims_grey_dilation_on_a_tensor", lambda: gpuprims.grey_dilation(small_t, size=3)),
                       ("cupyx_grey_dilation", lambda: cndi.grey_dilation(small, size=3))):
        for _ in range(20):
            y = call()
        cp.cuda.Device().synchronize()
        host = []
        t0 = time.perf_counter()
        for _ in range(100 if args.quick else 1000):
            t = time.perf_counter()
            y = call()
            host.append((time.perf_counter() - t) * 1e6)
        cp.cuda.Device().synchronize()
        wall = (time.perf_counter() - t0) * 1e6 / len(host)
        host.sort()
        b.line(f"# overhead {name} 512x512 u8 3x3, {len(host)} calls: host per call median {host[len(host) // 2]:.2f} us "
               f"(p10 {host[len(host) // 10]:.2f}, p90 {host[9 * len(host) // 10]:.2f}); wall per call {wall:.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
