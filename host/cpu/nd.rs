//! CPU oracle of the n-dimensional filters: 1D passes along any axis of a C-order array, and
//! the separable n-D filters built from them, with scipy.ndimage's semantics — a size (or sigma)
//! per axis, where 1 (or 0) leaves the axis alone. Written from scipy's definitions with the
//! border extension of [`extended_index`] (explicit reflection, one edge at a time), and pinned
//! to scipy's own outputs by `tests/data/scipy_nd.txt` (`scripts/scipy_nd_fixture.py`).
//!
//! - [`correlate_axis`]: one 1D correlation along an axis, in f64, in the summation order of
//!   scipy's `NI_Correlate1D` (symmetric and antisymmetric taps pair their samples first), so a
//!   pass equals scipy's to the last bit; [`separable`] chains passes, each converted to the
//!   element type as scipy writes it into its output array; [`gaussian`] and [`sobel`] are
//!   scipy's `gaussian_filter` and `sobel` through it.
//! - [`extremum`]: grey dilation and erosion, maximum and minimum filters of a box, one 1D pass
//!   per axis (a box's maximum is separable under every border mode, since each mode maps each
//!   coordinate on its own).
//! - [`box_sums`]: sums and sums of squares over a box, exact for integers (f64 holds them up to
//!   2^53), the yardstick of the n-D local statistics.

use crate::border::Border;
use crate::cpu::conv1d::extended_index;
use crate::cpu::filter2d::Pixel2d;

/// Where a window of `k` samples starts relative to its output, as scipy anchors it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    /// `k / 2` samples before the output: `maximum_filter`, `minimum_filter`, `uniform_filter`,
    /// `grey_erosion`, and `correlate1d`'s taps.
    Centre,
    /// `(k − 1) / 2` before: `grey_dilation` (scipy mirrors the structuring element), which differs
    /// from [`Anchor::Centre`] for even `k` only.
    Mirrored,
}

impl Anchor {
    fn before(self, k: usize) -> i64 {
        match self {
            Anchor::Centre => (k / 2) as i64,
            Anchor::Mirrored => (k.saturating_sub(1) / 2) as i64,
        }
    }
}

/// Elements between neighbours along `axis` of a C-order array of `shape`.
pub fn stride(shape: &[usize], axis: usize) -> usize {
    shape[axis + 1..].iter().product()
}

/// Calls `f(line, out)` for every 1D line along `axis` of the C-order array `x` of `shape`:
/// `line` holds the line's samples in order and `f` writes the line's outputs into `out`, which
/// land at the same positions of the result.
pub fn along_axis<T: Copy, O: Copy + Default>(
    x: &[T],
    shape: &[usize],
    axis: usize,
    mut f: impl FnMut(&[T], &mut [O]),
) -> Vec<O> {
    let total: usize = shape.iter().product();
    assert_eq!(x.len(), total, "the array holds shape's elements");
    assert!(axis < shape.len(), "axis {axis} of a {}-D array", shape.len());
    let mut out = vec![O::default(); total];
    let (n, step) = (shape[axis], stride(shape, axis));
    if total == 0 {
        return out;
    }
    let (mut line, mut result) = (Vec::with_capacity(n), vec![O::default(); n]);
    for outer in 0..total / (n * step) {
        for inner in 0..step {
            let first = outer * n * step + inner;
            line.clear();
            line.extend((0..n).map(|i| x[first + i * step]));
            f(&line, &mut result);
            for (i, &v) in result.iter().enumerate() {
                out[first + i * step] = v;
            }
        }
    }
    out
}

/// The border's value for an element type.
fn constant<T: Pixel2d>(border: Border) -> T {
    match border {
        Border::Constant(v) => T::border_value(v),
        _ => T::border_value(0.0),
    }
}

/// Sample `i` (any integer) of `line` extended by `border`.
fn extended<T: Pixel2d>(line: &[T], i: i64, border: Border) -> T {
    extended_index(i, line.len(), border).map_or(constant(border), |j| line[j])
}

/// One 1D correlation of every line along `axis` with `taps` (centred at `len / 2`), in f64, in
/// scipy's `NI_Correlate1D` order: the last tap first for general taps; the centre first and
/// then each pair of samples `±d` (added, or subtracted for antisymmetric taps) for symmetric
/// ones.
pub fn correlate_axis<T: Pixel2d>(x: &[T], shape: &[usize], axis: usize, taps: &[f64], border: Border) -> Vec<f64> {
    let before = (taps.len() / 2) as i64;
    let after = taps.len() as i64 - before - 1;
    let sym = crate::abi::filter2d::symmetry(taps);
    let tap = |d: i64| taps[(d + before) as usize];
    along_axis(x, shape, axis, |line, out: &mut [f64]| {
        for (i, o) in out.iter_mut().enumerate() {
            let s = |d: i64| extended(line, i as i64 + d, border).to_f64();
            *o = match sym {
                crate::abi::filter2d::TAPS_GENERAL => {
                    (-before..after).fold(s(after) * tap(after), |acc, d| acc + s(d) * tap(d))
                }
                crate::abi::filter2d::TAPS_SYMMETRIC => {
                    (-before..0).fold(s(0) * tap(0), |acc, d| acc + (s(d) + s(-d)) * tap(d))
                }
                _ => (-before..0).fold(s(0) * tap(0), |acc, d| acc + (s(d) - s(-d)) * tap(d)),
            };
        }
    })
}

/// scipy's chain of 1D correlations: `passes` in order, each `(axis, taps)`, each pass's result
/// converted to `T` as scipy writes it into an output array of the input's type (integers
/// truncated toward zero and saturated, floats rounded).
pub fn separable<T: Pixel2d>(x: &[T], shape: &[usize], passes: &[(usize, Vec<f64>)], border: Border) -> Vec<T> {
    let mut cur = x.to_vec();
    for (axis, taps) in passes {
        cur = correlate_axis(&cur, shape, *axis, taps, border)
            .into_iter()
            .map(T::from_f64_trunc)
            .collect();
    }
    cur
}

/// scipy's `uniform_filter(x, size, mode, cval)` with a size per axis (1 leaves an axis alone):
/// one `uniform_filter1d` per axis in axis order, each written in `T` (integers truncated). A
/// pass is scipy's `NI_UniformFilter1D`: along each line, the f64 sum of the first window in
/// order, then each next one as `sum + (entering − leaving)`, each output `sum / size`.
pub fn uniform<T: Pixel2d>(x: &[T], shape: &[usize], sizes: &[usize], border: Border) -> Vec<T> {
    let mut cur = x.to_vec();
    for (axis, &k) in sizes.iter().enumerate().filter(|&(_, &k)| k > 1) {
        let before = Anchor::Centre.before(k);
        cur = along_axis(&cur, shape, axis, |line, out: &mut [T]| {
            let s = |j: i64| extended(line, j, border).to_f64();
            let mut sum = (-before..k as i64 - before).fold(0.0, |acc, j| acc + s(j));
            for (i, o) in out.iter_mut().enumerate() {
                let i = i as i64;
                if i > 0 {
                    sum += s(i - before + k as i64 - 1) - s(i - before - 1);
                }
                *o = T::from_f64_trunc(sum / k as f64);
            }
        });
    }
    cur
}

/// scipy's `gaussian_filter(x, sigma, mode, cval, truncate)` with a sigma per axis (0 leaves an
/// axis alone), into the input's type: one pass per axis with `sigma > 0`, in axis order.
pub fn gaussian<T: Pixel2d>(x: &[T], shape: &[usize], sigmas: &[f64], truncate: f64, border: Border) -> Vec<T> {
    let passes: Vec<(usize, Vec<f64>)> = sigmas
        .iter()
        .enumerate()
        .filter(|&(_, &s)| s > 0.0)
        .map(|(axis, &s)| (axis, crate::ops::filter2d::gaussian_kernel(s, truncate)))
        .collect();
    separable(x, shape, &passes, border)
}

/// scipy's `sobel(x, axis, mode, cval)` into the input's type: the derivative `[−1, 0, 1]` along
/// `axis`, then the smoothing `[1, 2, 1]` along every other axis, in axis order.
pub fn sobel<T: Pixel2d>(x: &[T], shape: &[usize], axis: usize, border: Border) -> Vec<T> {
    let mut passes = vec![(axis, vec![-1.0, 0.0, 1.0])];
    passes.extend(
        (0..shape.len())
            .filter(|&a| a != axis)
            .map(|a| (a, vec![1.0, 2.0, 1.0])),
    );
    separable(x, shape, &passes, border)
}

/// The maximum (`max`) or minimum of every box of `sizes` (one per axis; 1 leaves an axis alone),
/// anchored as `anchor` says: `grey_dilation` is `(max, Mirrored)`, `grey_erosion` and the
/// minimum filter `(min, Centre)`, the maximum filter `(max, Centre)`. A NaN in a window wins,
/// as in every gpuprims extremum.
pub fn extremum<T: Pixel2d>(
    x: &[T],
    shape: &[usize],
    sizes: &[usize],
    border: Border,
    max: bool,
    anchor: Anchor,
) -> Vec<T> {
    let mut cur = x.to_vec();
    for (axis, &k) in sizes.iter().enumerate().filter(|&(_, &k)| k > 1) {
        let before = anchor.before(k);
        cur = along_axis(&cur, shape, axis, |line, out: &mut [T]| {
            for (i, o) in out.iter_mut().enumerate() {
                let start = i as i64 - before;
                *o = (start..start + k as i64)
                    .map(|j| extended(line, j, border))
                    .reduce(|a, b| {
                        if a.is_nan() || b.is_nan() {
                            if a.is_nan() { a } else { b }
                        } else if (b > a) == max && b != a {
                            b
                        } else {
                            a
                        }
                    })
                    .expect("a window holds k ≥ 2 samples");
            }
        });
    }
    cur
}

/// The sum and the sum of squares of every box of `sizes` (one per axis; 1 leaves an axis
/// alone), centred as `uniform_filter` centres it, in f64: exact for integer samples. One pass
/// per axis over the border-extended samples; under a constant border a position outside the
/// array along an axis stands for the constant summed over the window's extent along the axes
/// already passed.
pub fn box_sums<T: Pixel2d>(x: &[T], shape: &[usize], sizes: &[usize], border: Border) -> (Vec<f64>, Vec<f64>) {
    let c = constant::<T>(border).to_f64();
    let mut sums: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
    let mut squares: Vec<f64> = sums.iter().map(|v| v * v).collect();
    let mut volume = 1.0;
    for (axis, &k) in sizes.iter().enumerate() {
        if k > 1 {
            let before = Anchor::Centre.before(k);
            let pass = |v: &[f64], outside: f64| {
                along_axis(v, shape, axis, |line, out: &mut [f64]| {
                    for (i, o) in out.iter_mut().enumerate() {
                        let start = i as i64 - before;
                        *o = (start..start + k as i64)
                            .map(|j| extended_index(j, line.len(), border).map_or(outside, |t| line[t]))
                            .sum();
                    }
                })
            };
            sums = pass(&sums, c * volume);
            squares = pass(&squares, c * c * volume);
        }
        volume *= k.max(1) as f64;
    }
    (sums, squares)
}
