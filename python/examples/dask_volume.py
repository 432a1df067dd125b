"""gpuprims under Dask: a stack of images, or one large image, filtered chunk by chunk with
``map_overlap`` (each chunk extended by its neighbours' rows, the halo), on a ``dask.distributed``
cluster with one worker per GPU where dask-cuda is installed, else on the local threaded scheduler;
every result is checked against gpuprims's one-call result, bit for bit.

    python python/examples/dask_volume.py            # (16, 8192, 8192) u8 and 32768² u8
    python python/examples/dask_volume.py --small    # (4, 1024, 1024) and 4096²

Which border modes Dask can express: the array's own edges are left unpadded
(``boundary="none"``), so each edge chunk applies the op's own mode there — every mode but
``wrap``, which takes ``boundary="periodic"`` (its halo comes from the far side, exactly what wrap
reads).
"""
import sys
import time

import dask.array as da
import numpy as np

import gpuprims

OPS = {
    # name: (call, halo per axis as a function of ndim)
    "grey_dilation 31×31": (lambda x, mode: gpuprims.grey_dilation(x, size=(1, 31, 31)[-x.ndim:], mode=mode), 15),
    "gaussian σ=2": (lambda x, mode: gpuprims.gaussian_filter(x, (0, 2, 2)[-x.ndim:], mode=mode), 8),
    "uniform 15×15": (lambda x, mode: gpuprims.uniform_filter(x, (1, 15, 15)[-x.ndim:], mode=mode), 7),
}


def chunked(x, call, halo, mode, chunks):
    depth = {a: (halo if a >= x.ndim - 2 else 0) for a in range(x.ndim)}
    boundary = "periodic" if mode == "wrap" else "none"
    d = da.from_array(x, chunks=chunks)
    return d.map_overlap(lambda c: call(c, mode), depth=depth, boundary=boundary, dtype=x.dtype).compute()


def main():
    small = "--small" in sys.argv
    try:
        from dask.distributed import Client
        from dask_cuda import LocalCUDACluster

        client = Client(LocalCUDACluster())
        print(f"dask-cuda: {len(client.scheduler_info()['workers'])} workers, one per GPU")
    except ImportError:
        client = None
        print("dask-cuda not installed: the local threaded scheduler (one GPU)")
    rng = np.random.default_rng(74)
    cases = [
        ("stack", (4, 1024, 1024) if small else (16, 8192, 8192), (1, 512, 512) if small else (1, 4096, 4096)),
        ("image", (4096, 4096) if small else (32768, 32768), (1024, 1024) if small else (8192, 8192)),
    ]
    failed = False
    for what, shape, chunks in cases:
        x = rng.integers(0, 256, shape, dtype=np.uint8)
        for name, (call, halo) in OPS.items():
            for mode in ("reflect", "nearest", "mirror", "constant", "wrap"):
                t = time.perf_counter()
                got = chunked(x, call, halo, mode, chunks)
                t_dask = time.perf_counter() - t
                want = call(x, mode)
                ok = np.array_equal(got, want)
                failed |= not ok
                print(f"{what} {shape} {name:<22} {mode:<8} {t_dask * 1e3:9.1f} ms  {'PASS' if ok else 'FAIL'}")
    if client is not None:
        client.close()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
