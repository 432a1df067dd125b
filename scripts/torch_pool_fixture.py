"""Writes tests/data/torch_pool.txt: PyTorch's own F.max_pool2d (with return_indices) and
F.avg_pool2d on CUDA tensors, over small planes and a grid of kernel / stride / padding /
dilation / ceil_mode / count_include_pad / divisor_override, plus the parameter sets PyTorch
rejects. The tests check gpuprims' output sizes, its CPU oracle and every GPU variant against
these, so the semantics (ceil-mode rule, NaN and tie indices, divisors) are PyTorch's own.
Needs PyTorch and a CUDA GPU (the device machine has both). Regenerate with:
python3 scripts/torch_pool_fixture.py [out-path]

Line formats (floats written with repr; dtype f64 or f32); each case line uses the plane of the
last `x` line:
  x dtype | H W | x … (row-major)
  max | kh kw sh sw ph pw dh dw ceil | oh ow | y … | idx …
  avg | kh kw sh sw ph pw ceil count_include_pad divisor(0 = none) | oh ow | y …
  err max|avg | the same parameters | first line of PyTorch's message
"""
import pathlib
import sys

import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(2028)
lines = [f"# torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name()}"]


def row(v):
    return " ".join(repr(float(a)) for a in np.ravel(v))


def plane(H, W, kind):
    if kind == "ties":  # few distinct values: ties everywhere
        return rng.integers(0, 3, (H, W)).astype(np.float64)
    if kind == "nan":  # NaNs and infinities among small integers
        x = rng.integers(-4, 5, (H, W)).astype(np.float64)
        flat = x.reshape(-1)
        for i in rng.choice(flat.size, size=max(1, flat.size // 4), replace=False):
            flat[i] = rng.choice([np.nan, -np.inf, np.inf, np.nan])
        return x
    if kind == "f32":  # arbitrary float32 values (average pooling's rounding)
        return (rng.random((H, W)) * 2 - 1).astype(np.float32)
    return rng.integers(-50, 50, (H, W)).astype(np.float64)


SIZES = ((1, 1), (2, 3), (5, 5), (6, 7), (7, 4))
KERNELS = ((1, 1), (2, 2), (3, 3), (3, 2), (1, 4))
for H, W in SIZES:
    for kind in ("ints", "ties", "nan", "f32"):
        x = plane(H, W, kind)
        dtype = "f32" if kind == "f32" else "f64"
        t = torch.from_numpy(x).cuda()[None, None]
        lines.append(f"x {dtype} | {H} {W} | {row(x)}")
        for kh, kw in KERNELS:
            for sh, sw in ((kh, kw), (1, 1), (2, 3)):
                for ph, pw in ((0, 0), (kh // 2, kw // 2)):
                    for ceil in (False, True):
                        for dh, dw in ((1, 1), (2, 1)):
                            params = f"{kh} {kw} {sh} {sw} {ph} {pw} {dh} {dw} {int(ceil)}"
                            try:
                                y, i = F.max_pool2d(t, (kh, kw), (sh, sw), (ph, pw), (dh, dw), ceil, True)
                                y, i = y.cpu().numpy()[0, 0], i.cpu().numpy()[0, 0]
                                lines.append(f"max | {params} | "
                                             f"{y.shape[0]} {y.shape[1]} | {row(y)} | "
                                             + " ".join(str(int(v)) for v in i.ravel()))
                            except RuntimeError as e:
                                lines.append(f"err max | {params} | {str(e).splitlines()[0]}")
                        if kind == "nan":
                            continue  # average of NaN/inf: nothing more to learn
                        for cip in (True, False):
                            for div in (None, -3):
                                params = f"{kh} {kw} {sh} {sw} {ph} {pw} {int(ceil)} {int(cip)} {div or 0}"
                                try:
                                    y = F.avg_pool2d(t, (kh, kw), (sh, sw), (ph, pw), ceil, cip, div)
                                    y = y.cpu().numpy()[0, 0]
                                    lines.append(f"avg | {params} | "
                                                 f"{y.shape[0]} {y.shape[1]} | {row(y)}")
                                except RuntimeError as e:
                                    lines.append(f"err avg | {params} | {str(e).splitlines()[0]}")

# Rejected parameters beyond the grid: padding above half the kernel (with and without
# dilation), zero stride via an explicit tuple is rejected by the Python layer too.
x = torch.zeros((1, 1, 9, 9), dtype=torch.float64, device="cuda")
lines.append(f"x f64 | 9 9 | {row(np.zeros((9, 9)))}")
for kh, kw, sh, sw, ph, pw, dh, dw in ((2, 2, 2, 2, 2, 0, 1, 1), (2, 2, 1, 1, 2, 2, 3, 3), (3, 3, 1, 1, 2, 1, 1, 1),
                                       (2, 2, 1, 1, 1, 1, 3, 3), (5, 5, 1, 1, 0, 0, 3, 3)):
    params = f"{kh} {kw} {sh} {sw} {ph} {pw} {dh} {dw} 0"
    try:
        y = F.max_pool2d(x, (kh, kw), (sh, sw), (ph, pw), (dh, dw))
        lines.append(f"# accepted: max | {params} | -> {tuple(y.shape[2:])}")
    except RuntimeError as e:
        lines.append(f"err max | {params} | {str(e).splitlines()[0]}")

out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else \
    pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "torch_pool.txt"
out.write_text("\n".join(lines) + "\n")
print(f"wrote {len(lines) - 1} cases to {out}")
