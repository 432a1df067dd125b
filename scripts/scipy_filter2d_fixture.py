"""Writes tests/data/scipy_filter2d.txt: scipy.ndimage's own grey_dilation, grey_erosion (size=),
gaussian_filter (uint8 and float32: each 1D pass written to the input dtype), sobel (of int16 and
float32 inputs, so the u8 → i16 result is not wrapped) and correlate on small planes, every border
mode, windows smaller and larger than the plane (even sizes included, where grey_dilation's
anchor differs from maximum_filter's). The tests check the CPU oracle and every GPU variant
against these. Regenerate with: python3 scripts/scipy_filter2d_fixture.py

Line format: op dtype mode cval | H W | params … | x … (row-major) | y … (floats with repr)
"""
import pathlib

import numpy as np
import scipy
from scipy import ndimage

MODES = [("zero", "constant", 0.0), ("constant", "constant", 3.0), ("replicate", "nearest", 0.0),
         ("reflect", "reflect", 0.0), ("mirror", "mirror", 0.0), ("wrap", "wrap", 0.0)]
rng = np.random.default_rng(2028)
lines = [f"# scipy {scipy.__version__}, numpy {np.__version__}"]


def row(v):
    return " ".join(repr(float(a)) for a in np.ravel(v))


SHAPES = ((1, 1), (1, 6), (5, 1), (4, 5), (6, 7))
for name, mode, cval in MODES:
    for H, W in SHAPES:
        xu8 = rng.integers(0, 256, (H, W)).astype(np.uint8)
        xf = rng.uniform(-4, 4, (H, W)).astype(np.float32)
        for h, w in ((1, 1), (1, 2), (2, 1), (3, 3), (2, 4), (5, 5), (8, 9)):
            for op, f in (("dilate", ndimage.grey_dilation), ("erode", ndimage.grey_erosion)):
                for dt, x in (("u8", xu8), ("f32", xf)):
                    y = f(x, size=(h, w), mode=mode, cval=cval)
                    lines.append(f"{op} {dt} {name} {cval!r} | {H} {W} | {h} {w} | {row(x)} | {row(y)}")
        for sigma in (0.5, 1.0, 1.7):
            for dt, x in (("u8", xu8), ("f32", xf)):
                y = ndimage.gaussian_filter(x, sigma, mode=mode, cval=cval)
                lines.append(f"gaussian {dt} {name} {cval!r} | {H} {W} | {sigma!r} | {row(x)} | {row(y)}")
        for axis in (0, 1):
            for dt, x in (("u8", xu8.astype(np.int16)), ("f32", xf)):
                y = ndimage.sobel(x, axis=axis, mode=mode, cval=cval)
                lines.append(f"sobel {dt} {name} {cval!r} | {H} {W} | {axis} | {row(x)} | {row(y)}")
        for kh, kw in ((1, 3), (3, 2), (4, 4)):
            k = rng.integers(-3, 4, (kh, kw)).astype(np.float32)
            xi = rng.integers(-8, 9, (H, W)).astype(np.float32)
            y = ndimage.correlate(xi, k, mode=mode, cval=cval)
            lines.append(f"correlate f32 {name} {cval!r} | {H} {W} | {kh} {kw} {row(k)} | {row(xi)} | {row(y)}")

out = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "scipy_filter2d.txt"
out.write_text("\n".join(lines) + "\n")
print(f"wrote {len(lines) - 1} cases to {out}")
