"""Writes tests/data/scipy_window.txt: scipy.ndimage's own uniform_filter on small integer planes,
every border mode, boxes smaller and larger than the plane. gpuprims' box sums equal
h·w · uniform_filter(x, (h, w)); the tests check the CPU oracle and every GPU variant against
these, so the 2D border semantics are checked against scipy itself (the 1D window sums are checked
against the uniform_filter1d cases of scipy_conv1d.txt). Regenerate with:
python3 scripts/scipy_window_fixture.py

Line format: mode cval | H W | h w | x … (row-major) | y … (floats written with repr)
"""
import pathlib

import numpy as np
import scipy
from scipy import ndimage

MODES = [("zero", "constant", 0.0), ("constant", "constant", -2.5), ("replicate", "nearest", 0.0),
         ("reflect", "reflect", 0.0), ("mirror", "mirror", 0.0), ("wrap", "wrap", 0.0)]
rng = np.random.default_rng(2027)
lines = [f"# scipy {scipy.__version__}, numpy {np.__version__}"]


def row(v):
    return " ".join(repr(float(a)) for a in np.ravel(v))


for name, mode, cval in MODES:
    for H, W in ((1, 1), (1, 5), (4, 1), (3, 4), (5, 7)):
        x = rng.integers(0, 10, (H, W)).astype(np.float64)
        for h, w in ((1, 1), (1, 3), (3, 1), (2, 2), (3, 3), (4, 5), (9, 8)):
            y = ndimage.uniform_filter(x, (h, w), mode=mode, cval=cval)
            lines.append(f"{name} {cval!r} | {H} {W} | {h} {w} | {row(x)} | {row(y)}")

out = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "scipy_window.txt"
out.write_text("\n".join(lines) + "\n")
print(f"wrote {len(lines) - 1} cases to {out}")
