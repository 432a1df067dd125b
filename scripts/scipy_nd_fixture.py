"""Writes tests/data/scipy_nd.txt: scipy.ndimage's own n-dimensional outputs on small 3-D and 4-D
arrays, every border mode: correlate1d along every axis (f64, and u8 and f32 written in their
type), uniform_filter (f64, u8, f32), grey_dilation,
grey_erosion, maximum_filter and minimum_filter with a size per axis (1 leaves an axis alone; sizes
past the axis, even sizes), gaussian_filter with a sigma per axis (0 leaves an axis alone) and two
truncations, and sobel along every axis. The tests check the n-D CPU oracle (host/cpu/nd.rs) and the
GPU ops against these. Regenerate with: python3 scripts/scipy_nd_fixture.py

Line format: op dtype mode cval | shape … | params … | x … (C order) | y … (floats with repr)
"""
import pathlib

import numpy as np
import scipy
from scipy import ndimage

MODES = [("zero", "constant", 0.0), ("constant", "constant", 3.0), ("replicate", "nearest", 0.0),
         ("reflect", "reflect", 0.0), ("mirror", "mirror", 0.0), ("wrap", "wrap", 0.0)]
SHAPES = ((1, 1, 1), (2, 3, 4), (3, 1, 5), (5, 4, 3), (2, 3, 2, 3))
rng = np.random.default_rng(2075)
lines = [f"# scipy {scipy.__version__}, numpy {np.__version__}"]


def row(v):
    return " ".join(repr(float(a)) for a in np.ravel(v))


def sizes_for(shape):
    """A few size tuples: one axis alone, all axes, sides of 1 and 2, a side past its axis."""
    n = len(shape)
    out = [tuple(3 if a == n - 1 else 1 for a in range(n)), tuple(2 if a == 0 else 1 for a in range(n)),
           tuple((a % 3) + 1 for a in range(n)), tuple(s + 2 for s in shape), (5,) * n]
    return list(dict.fromkeys(out))


for name, mode, cval in MODES:
    for shape in SHAPES:
        n = len(shape)
        dims = " ".join(map(str, shape))
        xu8 = rng.integers(0, 256, shape).astype(np.uint8)
        xf = rng.uniform(-4, 4, shape).astype(np.float32)
        xi = rng.integers(-8, 9, shape).astype(np.float64)
        for axis in range(n):
            for length in (1, 2, 3, 4):
                w = rng.integers(-3, 4, length).astype(np.float64)
                y = ndimage.correlate1d(xi, w, axis=axis, mode=mode, cval=cval)
                lines.append(f"correlate1d f64 {name} {cval!r} | {dims} | {axis} {row(w)} | {row(xi)} | {row(y)}")
                # u8 taps are non-negative and sum to at most 1, so every result lies in range
                # (scipy's C cast of an out-of-range double is platform-defined: x86 wraps).
                for dt, x, t in (("u8", xu8, np.abs(w) / max(np.abs(w).sum(), 1.0)), ("f32", xf, w * 0.375)):
                    y = ndimage.correlate1d(x, t, axis=axis, mode=mode, cval=cval)
                    lines.append(f"correlate1d {dt} {name} {cval!r} | {dims} | {axis} {row(t)} | {row(x)} | {row(y)}")
        for sizes in sizes_for(shape):
            ks = " ".join(map(str, sizes))
            y = ndimage.uniform_filter(xi, size=sizes, mode=mode, cval=cval)
            lines.append(f"uniform f64 {name} {cval!r} | {dims} | {ks} | {row(xi)} | {row(y)}")
            for dt, x in (("u8", xu8), ("f32", xf)):
                y = ndimage.uniform_filter(x, size=sizes, mode=mode, cval=cval)
                lines.append(f"uniform {dt} {name} {cval!r} | {dims} | {ks} | {row(x)} | {row(y)}")
            for op, f in (("dilate", ndimage.grey_dilation), ("erode", ndimage.grey_erosion),
                          ("maximum", ndimage.maximum_filter), ("minimum", ndimage.minimum_filter)):
                for dt, x in (("u8", xu8), ("f32", xf)):
                    y = f(x, size=sizes, mode=mode, cval=cval)
                    lines.append(f"{op} {dt} {name} {cval!r} | {dims} | {ks} | {row(x)} | {row(y)}")
        for sigmas in ((1.0,) * n, tuple(0.0 if a == 0 else 0.5 + 0.6 * a for a in range(n))):
            for truncate in (4.0, 2.0):
                for dt, x in (("u8", xu8), ("f32", xf)):
                    y = ndimage.gaussian_filter(x, sigma=sigmas, mode=mode, cval=cval, truncate=truncate)
                    lines.append(f"gaussian {dt} {name} {cval!r} | {dims} | {truncate!r} {row(sigmas)} | "
                                 f"{row(x)} | {row(y)}")
        for axis in range(n):
            for dt, x in (("i16", xu8.astype(np.int16)), ("f32", xf)):
                y = ndimage.sobel(x, axis=axis, mode=mode, cval=cval)
                lines.append(f"sobel {dt} {name} {cval!r} | {dims} | {axis} | {row(x)} | {row(y)}")

out = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "scipy_nd.txt"
out.write_text("\n".join(lines) + "\n")
print(f"wrote {len(lines) - 1} cases to {out}")
