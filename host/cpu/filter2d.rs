//! CPU oracle of the 2D filters: direct windows over the border-extended plane (explicit
//! per-axis reflection, `conv1d::extended_index`), exact integer arithmetic (i64) and f64 for
//! floats. Independent of the kernels' closed-form border mapping and of their anchoring code.
//! `par_*` functions are the rayon CPU baseline of the example.

use rayon::prelude::*;

use crate::border::Border;
use crate::cpu::conv1d::extended_index;

/// A plane element of the oracle.
pub trait Pixel2d: Copy + Default + Send + Sync + PartialOrd {
    const INTEGER: bool;
    fn to_f64(self) -> f64;
    /// The constant border value in this type (rounded and saturated for integers).
    fn border_value(v: f64) -> Self;
    /// Truncation toward zero, saturating (scipy's `correlate1d` into an integer array).
    fn from_f64_trunc(v: f64) -> Self;
    fn is_nan(self) -> bool {
        self.to_f64().is_nan()
    }
}

macro_rules! pixel2d {
    ($($t:ty: $int:literal),*) => {$(
        impl Pixel2d for $t {
            const INTEGER: bool = $int;
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn border_value(v: f64) -> $t {
                if $int { v.round() as $t } else { v as $t }
            }
            fn from_f64_trunc(v: f64) -> $t {
                v as $t
            }
        }
    )*};
}
pixel2d!(u8: true, u16: true, i16: true, f32: false, f64: false);

/// Sample `(r, c)` of a plane extended by `border`.
pub fn sample<T: Pixel2d>(plane: &[T], h: usize, w: usize, r: i64, c: i64, border: Border) -> T {
    match (extended_index(r, h, border), extended_index(c, w, border)) {
        (Some(rr), Some(cc)) => plane[rr * w + cc],
        _ => match border {
            Border::Constant(v) => T::border_value(v),
            _ => T::border_value(0.0),
        },
    }
}

/// Applies `f(plane, r, c)` to every output position of every plane, in parallel over rows.
fn map_planes<T: Pixel2d, O: Send>(x: &[T], h: usize, w: usize, f: impl Fn(&[T], i64, i64) -> O + Sync) -> Vec<O> {
    if h == 0 || w == 0 {
        return Vec::new();
    }
    x.par_chunks(h * w)
        .flat_map_iter(|plane| {
            let f = &f;
            (0..h).flat_map(move |r| (0..w).map(move |c| f(plane, r as i64, c as i64)))
        })
        .collect()
}

/// Max (`dilate`) or min over the window starting at `(r − ay, c − ax)`; NaN if the window holds one.
fn extremum<T: Pixel2d>(
    plane: &[T],
    (h, w): (usize, usize),
    (r, c): (i64, i64),
    (kh, kw): (usize, usize),
    (ay, ax): (usize, usize),
    border: Border,
    max: bool,
) -> T {
    let mut best: Option<T> = None;
    for i in 0..kh as i64 {
        for j in 0..kw as i64 {
            let v = sample(plane, h, w, r + i - ay as i64, c + j - ax as i64, border);
            if v.is_nan() {
                return v;
            }
            best = Some(match best {
                Some(b) if (max && b >= v) || (!max && b <= v) => b,
                _ => v,
            });
        }
    }
    best.expect("windows hold at least one sample")
}

/// scipy `grey_dilation(x, size=(kh, kw), mode=border)` of `planes` planes of `h × w`.
pub fn dilate<T: Pixel2d>(x: &[T], h: usize, w: usize, (kh, kw): (usize, usize), border: Border) -> Vec<T> {
    let anchor = ((kh - 1) / 2, (kw - 1) / 2);
    map_planes(x, h, w, |p, r, c| {
        extremum(p, (h, w), (r, c), (kh, kw), anchor, border, true)
    })
}

/// scipy `grey_erosion(x, size=(kh, kw), mode=border)`.
pub fn erode<T: Pixel2d>(x: &[T], h: usize, w: usize, (kh, kw): (usize, usize), border: Border) -> Vec<T> {
    let anchor = (kh / 2, kw / 2);
    map_planes(x, h, w, |p, r, c| {
        extremum(p, (h, w), (r, c), (kh, kw), anchor, border, false)
    })
}

/// Σ `k[i][j] · x` over the window centred at `(kh/2, kw/2)`, in f64 (exact for integer data and
/// integer taps of the sizes tested).
fn correlate_at<T: Pixel2d>(
    plane: &[T],
    (h, w): (usize, usize),
    (r, c): (i64, i64),
    k: &[f64],
    (kh, kw): (usize, usize),
    border: Border,
) -> f64 {
    let mut s = 0.0;
    for i in 0..kh {
        for j in 0..kw {
            let v = sample(
                plane,
                h,
                w,
                r + i as i64 - (kh / 2) as i64,
                c + j as i64 - (kw / 2) as i64,
                border,
            );
            s += k[i * kw + j] * v.to_f64();
        }
    }
    s
}

/// 2D correlation in f64 (scipy `correlate(x, k)` before the cast to the output type).
pub fn correlate2d<T: Pixel2d>(
    x: &[T],
    h: usize,
    w: usize,
    k: &[f64],
    (kh, kw): (usize, usize),
    border: Border,
) -> Vec<f64> {
    map_planes(x, h, w, |p, r, c| correlate_at(p, (h, w), (r, c), k, (kh, kw), border))
}

/// The 3 × 3 `[1 2 1]ᵀ[1 2 1] / 16`: integers `(Σ + 8) >> 4` of the exact sum; floats `Σ / 16`.
pub fn gaussian3x3<T: Pixel2d>(x: &[T], h: usize, w: usize, border: Border) -> Vec<f64> {
    gaussian3x3_rounding(x, h, w, border, false)
}

/// [`gaussian3x3`], integers truncated (`Σ >> 4`, the classic tutorial's) when `truncate`.
pub fn gaussian3x3_rounding<T: Pixel2d>(x: &[T], h: usize, w: usize, border: Border, truncate: bool) -> Vec<f64> {
    let k = [1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0];
    let bias = if truncate { 0 } else { 8 };
    correlate2d(x, h, w, &k, (3, 3), border)
        .into_iter()
        .map(|s| {
            if T::INTEGER {
                ((s as i64 + bias) >> 4) as f64
            } else {
                s / 16.0
            }
        })
        .collect()
}

/// scipy `sobel(x, axis)` in f64 (exact for integer images).
pub fn sobel<T: Pixel2d>(x: &[T], h: usize, w: usize, axis: usize, border: Border) -> Vec<f64> {
    let k = if axis == 0 {
        [-1.0, -2.0, -1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 1.0]
    } else {
        [-1.0, 0.0, 1.0, -2.0, 0.0, 2.0, -1.0, 0.0, 1.0]
    };
    correlate2d(x, h, w, &k, (3, 3), border)
}

/// One 1D pass of `k` (centred at `len/2`) along axis 0 (`down`) or 1, in f64, in scipy's
/// `NI_Correlate1D` order (symmetric taps pair the samples first; otherwise the last tap first).
fn pass<T: Pixel2d>(x: &[T], h: usize, w: usize, k: &[f64], down: bool, border: Border) -> Vec<f64> {
    let before = (k.len() / 2) as i64;
    let after = k.len() as i64 - before - 1;
    let sym = crate::abi::filter2d::symmetry(k);
    map_planes(x, h, w, |p, r, c| {
        let s = |d: i64| {
            if down {
                sample(p, h, w, r + d, c, border)
            } else {
                sample(p, h, w, r, c + d, border)
            }
            .to_f64()
        };
        let wt = |d: i64| k[(d + before) as usize];
        if sym == 0 {
            (-before..after).fold(s(after) * wt(after), |acc, d| acc + s(d) * wt(d))
        } else {
            (-before..0).fold(s(0) * wt(0), |acc, d| {
                let pair = if sym == 1 { s(d) + s(-d) } else { s(d) - s(-d) };
                acc + pair * wt(d)
            })
        }
    })
}

/// scipy's separable correlation: `ky` along axis 0, then `kx` along axis 1, each pass's result
/// converted to `T` (truncated for integers, rounded to `T` for floats) as scipy does.
pub fn separable2d<T: Pixel2d>(x: &[T], h: usize, w: usize, ky: &[f64], kx: &[f64], border: Border) -> Vec<T> {
    let to_t = |v: Vec<f64>| -> Vec<T> { v.into_iter().map(T::from_f64_trunc).collect() };
    let cols = to_t(pass(x, h, w, ky, true, border));
    to_t(pass(&cols, h, w, kx, false, border))
}
