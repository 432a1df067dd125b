"""Writes tests/data/scipy_conv1d.txt: scipy.ndimage's own outputs for correlate1d, convolve1d and
uniform_filter1d on short integer signals, every border mode, filters shorter and longer than the
signal. The tests check gpuprims' CPU reference and kernels against it, so "scipy semantics" is
checked against scipy itself. Regenerate with: python3 scripts/scipy_conv1d_fixture.py

Line format: op mode cval | x … | taps (or the width) … | y …   (floats written with repr)
"""
import pathlib

import numpy as np
import scipy
from scipy import ndimage

MODES = [("zero", "constant", 0.0), ("constant", "constant", -2.5), ("replicate", "nearest", 0.0),
         ("reflect", "reflect", 0.0), ("mirror", "mirror", 0.0), ("wrap", "wrap", 0.0)]
rng = np.random.default_rng(2026)
lines = [f"# scipy {scipy.__version__}, numpy {np.__version__}"]


def row(v):
    return " ".join(repr(float(a)) for a in v)


for name, mode, cval in MODES:
    for n in (1, 2, 3, 5, 8):
        x = rng.integers(-9, 10, n).astype(np.float64)
        for taps_len in (1, 2, 3, 4, 5, 9, 12):
            t = rng.integers(-4, 5, taps_len).astype(np.float64)
            for op, f in (("correlate1d", ndimage.correlate1d), ("convolve1d", ndimage.convolve1d)):
                y = f(x, t, mode=mode, cval=cval)
                lines.append(f"{op} {name} {cval!r} | {row(x)} | {row(t)} | {row(y)}")
            y = ndimage.uniform_filter1d(x, taps_len, mode=mode, cval=cval)
            lines.append(f"uniform_filter1d {name} {cval!r} | {row(x)} | {taps_len} | {row(y)}")

out = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "scipy_conv1d.txt"
out.write_text("\n".join(lines) + "\n")
print(f"wrote {len(lines) - 1} cases to {out}")
