"""gpuprims under Dask: a stack of images, or one large image, filtered chunk by chunk with
``map_overlap`` (each chunk extended by its neighbours' rows, the halo), on a ``dask.distributed``
cluster with one worker process per GPU (dask-cuda's ``LocalCUDACluster`` when installed, else a
cluster of nannies each started with its own ``CUDA_VISIBLE_DEVICES``); every result is checked
against gpuprims's one-call result, bit for bit.

    python python/examples/dask_volume.py               # (16, 8192, 8192) u8 and 32768² u8
    python python/examples/dask_volume.py --small       # (4, 1024, 1024) and 4096²
    python python/examples/dask_volume.py --cupy        # CuPy chunks (device arrays) instead of NumPy
    python python/examples/dask_volume.py --threads     # the local threaded scheduler, no cluster
    python python/examples/dask_volume.py --image       # only the image (--stack: only the stack)

Which border modes Dask can express: the array's own edges are left unpadded
(``boundary="none"``), so each edge chunk applies the op's own mode there — every mode but
``wrap``, which takes ``boundary="periodic"`` (its halo comes from the far side, exactly what wrap
reads). After the checks, the stack's 31 × 31 dilation is timed on one worker and on all of them.
"""
import sys
import time
import warnings

import dask.array as da
import numpy as np

import gpuprims

OPS = {
    # name: (call, halo per axis as a function of ndim)
    "grey_dilation 31×31": (lambda x, mode: gpuprims.grey_dilation(x, size=(1, 31, 31)[-x.ndim:], mode=mode), 15),
    "gaussian σ=2": (lambda x, mode: gpuprims.gaussian_filter(x, (0, 2, 2)[-x.ndim:], mode=mode), 8),
    "uniform 15×15": (lambda x, mode: gpuprims.uniform_filter(x, (1, 15, 15)[-x.ndim:], mode=mode), 7),
}


def chunked(x, call, halo, mode, chunks, cupy=False):
    """The op over ``x`` in chunks of ``chunks``, as a NumPy array."""
    depth = {a: (halo if a >= x.ndim - 2 else 0) for a in range(x.ndim)}
    boundary = "periodic" if mode == "wrap" else "none"
    d = da.from_array(x, chunks=chunks)
    if cupy:
        import cupy as cp

        d = d.map_blocks(cp.asarray, dtype=x.dtype)
    y = d.map_overlap(lambda c: call(c, mode), depth=depth, boundary=boundary, dtype=x.dtype)
    if cupy:
        y = y.map_blocks(lambda c: c.get(), dtype=x.dtype)
    return y.compute()


def gpu_count():
    try:
        import cupy as cp

        return cp.cuda.runtime.getDeviceCount()
    except Exception:
        return 1


def cluster(workers):
    """A distributed cluster of ``workers`` processes, worker ``i`` on GPU ``i``."""
    from dask.distributed import Client

    try:
        from dask_cuda import LocalCUDACluster

        return Client(LocalCUDACluster(CUDA_VISIBLE_DEVICES=list(range(workers))))
    except ImportError:
        from distributed import Nanny, Scheduler, SpecCluster

        spec = {
            i: {"cls": Nanny, "options": {"nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": str(i)}}}
            for i in range(workers)
        }
        sched = {"cls": Scheduler, "options": {"dashboard_address": None}}
        return Client(SpecCluster(workers=spec, scheduler=sched))


def main():
    warnings.filterwarnings("ignore", "Sending large graph")  # the checks ship their NumPy inputs
    small = "--small" in sys.argv
    cupy = "--cupy" in sys.argv
    gpus = gpu_count()
    client = None if "--threads" in sys.argv else cluster(gpus)
    where = f"{gpus} worker(s), one per GPU" if client else "the local threaded scheduler"
    print(f"{where}; {'CuPy' if cupy else 'NumPy'} chunks")
    rng = np.random.default_rng(74)
    cases = [
        ("stack", (4, 1024, 1024) if small else (16, 8192, 8192), (1, 512, 512) if small else (1, 4096, 4096)),
        ("image", (4096, 4096) if small else (32768, 32768), (1024, 1024) if small else (8192, 8192)),
    ]
    only = [c for c in ("stack", "image") if f"--{c}" in sys.argv]
    cases = [c for c in cases if not only or c[0] in only]
    failed = False
    for what, shape, chunks in cases:
        x = rng.integers(0, 256, shape, dtype=np.uint8)
        for name, (call, halo) in OPS.items():
            for mode in ("reflect", "nearest", "mirror", "constant", "wrap"):
                t = time.perf_counter()
                got = chunked(x, call, halo, mode, chunks, cupy)
                t_dask = time.perf_counter() - t
                want = call(x, mode)
                ok = np.array_equal(got, want)
                failed |= not ok
                print(f"{what} {shape} {name:<22} {mode:<8} {t_dask * 1e3:9.1f} ms  {'PASS' if ok else 'FAIL'}", flush=True)
    if client is not None and (not only or "stack" in only):
        # Scaling: the full (16, 8192, 8192) stack's dilation, made and kept on the workers (no
        # transfer from here), timed on one worker, then on all.
        call, halo = OPS["grey_dilation 31×31"]
        from dask.distributed import wait

        workers = list(client.scheduler_info()["workers"])
        for n in sorted({1, len(workers)}):
            src = da.random.default_rng(74).integers(0, 256, (16, 8192, 8192), dtype=np.uint8, chunks=(1, 4096, 4096))
            if cupy:
                import cupy as cp

                src = src.map_blocks(cp.asarray, dtype=np.uint8)
            src = src.persist(workers=workers[:n])
            wait(src)
            job = src.map_overlap(lambda c: call(c, "reflect"), depth={0: 0, 1: halo, 2: halo}, boundary="none",
                                  dtype=np.uint8).max()
            job.compute(workers=workers[:n])  # warm-up: modules loaded on each worker
            t = time.perf_counter()
            job.compute(workers=workers[:n])
            print(f"stack (16, 8192, 8192) dilation 31×31 on {n} worker(s): {(time.perf_counter() - t) * 1e3:.1f} ms",
                  flush=True)
            del src
    if client is not None:
        client.close()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
