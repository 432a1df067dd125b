//! Reference window statistics (see [`crate::ops::window`]).
//!
//! - [`row_oracle`] / [`box_oracle`]: one output by a direct sum over its window — integers in
//!   i128, floats with compensated (Neumaier) f64 sums, plain IEEE sums when a non-finite value
//!   is in the window — with the error scale `Σ|x|`, `Σx²`; written independently of the kernels
//!   (border by `cpu::conv1d::extended_index`, one edge at a time).
//! - [`moments_oracle`]: mean and population variance of a box by two passes over its values.
//! - [`window_sums`] / [`par_window_sums`] and [`box_sums`]: sliding-sum baselines (the CPU
//!   columns of the examples), exact for integers.

use rayon::prelude::*;

use crate::abi::window::{Sums, WindowIn};
use crate::border::Border;
use crate::cpu::conv1d::extended_index;

/// An input type the oracle reads.
pub trait OracleElement: WindowIn + Send + Sync + std::fmt::Debug + 'static {
    /// The value, exactly, for integer types.
    fn to_i128(self) -> Option<i128>;
    fn to_f64(self) -> f64;
    /// `v` in this type (the constant border, rounded as the library rounds it).
    fn from_f64(v: f64) -> Self;
}

macro_rules! oracle_int {
    ($($t:ty),*) => {$(
        impl OracleElement for $t {
            fn to_i128(self) -> Option<i128> { Some(self as i128) }
            fn to_f64(self) -> f64 { self as f64 }
            fn from_f64(v: f64) -> $t { v as $t }
        }
    )*};
}
oracle_int!(u8, u16, i32);

macro_rules! oracle_float {
    ($($t:ty),*) => {$(
        impl OracleElement for $t {
            fn to_i128(self) -> Option<i128> { None }
            fn to_f64(self) -> f64 { self as f64 }
            fn from_f64(v: f64) -> $t { v as $t }
        }
    )*};
}
oracle_float!(f32, f64);

/// One output of the oracle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowRef {
    /// Exact sums (integer inputs).
    pub exact: Option<(i128, i128)>,
    /// Sums in f64 (integers: the exact values rounded once).
    pub sum: f64,
    pub sumsq: f64,
    /// Error scales: `Σ|x|` and `Σx²` over the window.
    pub abs: f64,
    pub abs_sq: f64,
    /// Samples in the window.
    pub n: usize,
}

/// Compensated sum (Neumaier), or the plain IEEE sum when a term is not finite.
fn careful_sum(terms: impl Iterator<Item = f64> + Clone) -> f64 {
    if terms.clone().any(|t| !t.is_finite()) {
        return terms.sum();
    }
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for t in terms {
        let u = s + t;
        c += if s.abs() >= t.abs() { (s - u) + t } else { (t - u) + s };
        s = u;
    }
    s + c
}

fn summarize<T: OracleElement>(values: &[T]) -> WindowRef {
    let exact = values
        .iter()
        .map(|v| v.to_i128())
        .collect::<Option<Vec<i128>>>()
        .map(|ints| (ints.iter().sum::<i128>(), ints.iter().map(|v| v * v).sum::<i128>()));
    let f = || values.iter().map(|v| v.to_f64());
    let (sum, sumsq) = match exact {
        Some((s, q)) => (s as f64, q as f64),
        None => (careful_sum(f()), careful_sum(f().map(|v| v * v))),
    };
    WindowRef {
        exact,
        sum,
        sumsq,
        abs: f().map(f64::abs).sum(),
        abs_sq: f().map(|v| v * v).sum(),
        n: values.len(),
    }
}

/// The sample at extended position `i` of `row` (the border's constant outside for the constant
/// modes).
fn extended<T: OracleElement>(row: &[T], i: i64, border: Border) -> T {
    match extended_index(i, row.len(), border) {
        Some(j) => row[j],
        None => T::from_f64(border.device().1),
    }
}

/// Output `i` of a row window of `width` samples (anchored at `width / 2`).
pub fn row_oracle<T: OracleElement>(row: &[T], width: usize, border: Border, i: usize) -> WindowRef {
    let start = i as i64 - (width / 2) as i64;
    let values: Vec<T> = (0..width as i64).map(|k| extended(row, start + k, border)).collect();
    summarize(&values)
}

/// The values of the `(h, w)` box of output `(r, c)` of a row-major plane of `width` columns
/// (a position outside the plane in either axis reads the constant for the constant modes).
fn box_values<T: OracleElement>(
    plane: &[T],
    width: usize,
    window: (usize, usize),
    border: Border,
    (r, c): (usize, usize),
) -> Vec<T> {
    let height = plane.len() / width;
    let (r0, c0) = (r as i64 - (window.0 / 2) as i64, c as i64 - (window.1 / 2) as i64);
    let cval = T::from_f64(border.device().1);
    let mut values = Vec::with_capacity(window.0 * window.1);
    for dy in 0..window.0 as i64 {
        let y = extended_index(r0 + dy, height, border);
        for dx in 0..window.1 as i64 {
            let x = extended_index(c0 + dx, width, border);
            values.push(match (y, x) {
                (Some(y), Some(x)) => plane[y * width + x],
                _ => cval,
            });
        }
    }
    values
}

/// Output `(r, c)` of `(h, w)` box sums over a row-major plane of `width` columns.
pub fn box_oracle<T: OracleElement>(
    plane: &[T],
    width: usize,
    window: (usize, usize),
    border: Border,
    at: (usize, usize),
) -> WindowRef {
    summarize(&box_values(plane, width, window, border, at))
}

/// Mean and population variance of the box of output `(r, c)`, by two passes over its values in
/// exact (integers) or compensated f64 arithmetic.
pub fn moments_oracle<T: OracleElement>(
    plane: &[T],
    width: usize,
    window: (usize, usize),
    border: Border,
    at: (usize, usize),
) -> (f64, f64) {
    let values = box_values(plane, width, window, border, at);
    let n = values.len() as f64;
    let w = summarize(&values);
    if let Some((s, q)) = w.exact {
        let nn = values.len() as i128;
        return (s as f64 / n, (nn * q - s * s) as f64 / (n * n));
    }
    let mean = w.sum / n;
    let var = careful_sum(values.iter().map(|v| (v.to_f64() - mean) * (v.to_f64() - mean))) / n;
    (mean, var)
}

type AccSums<T> = Sums<<T as WindowIn>::S, <T as WindowIn>::Q>;

/// Sliding window sums of one row into `out` (a running sum: add the entering sample, subtract
/// the leaving one; exact for integers).
fn row_sliding<T: OracleElement>(row: &[T], width: usize, border: Border, out: &mut [AccSums<T>]) {
    let start = -((width / 2) as i64);
    let mut acc = AccSums::<T>::ZERO;
    for k in 0..width as i64 {
        acc = acc.plus(extended(row, start + k, border).lift());
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = acc;
        let s = start + i as i64;
        acc = acc
            .plus(extended(row, s + width as i64, border).lift())
            .minus(extended(row, s, border).lift());
    }
}

/// Window sums of every row of `n` samples (serial CPU baseline).
pub fn window_sums<T: OracleElement>(x: &[T], n: usize, width: usize, border: Border) -> Vec<AccSums<T>> {
    let mut out = vec![AccSums::<T>::ZERO; x.len()];
    for (row, o) in x.chunks(n).zip(out.chunks_mut(n)) {
        row_sliding(row, width, border, o);
    }
    out
}

/// [`window_sums`] with rows spread over the rayon pool.
pub fn par_window_sums<T: OracleElement>(x: &[T], n: usize, width: usize, border: Border) -> Vec<AccSums<T>>
where
    AccSums<T>: Send,
{
    let mut out = vec![AccSums::<T>::ZERO; x.len()];
    x.par_chunks(n)
        .zip(out.par_chunks_mut(n))
        .for_each(|(row, o)| row_sliding(row, width, border, o));
    out
}

/// Box sums of one plane of `width` columns by separable sliding sums (row pass, then column
/// pass), rows spread over the rayon pool when `parallel`.
pub fn box_sums<T: OracleElement>(
    plane: &[T],
    width: usize,
    window: (usize, usize),
    border: Border,
    parallel: bool,
) -> Vec<AccSums<T>>
where
    AccSums<T>: Send + Sync,
{
    let height = plane.len() / width;
    let rows = if parallel {
        par_window_sums(plane, width, window.1, border)
    } else {
        window_sums(plane, width, window.1, border)
    };
    let cval = T::from_f64(border.device().1);
    let border_row = cval.lift().times(window.1 as u64);
    let row_sum = |y: i64, c: usize| match extended_index(y, height, border) {
        Some(j) => rows[j * width + c],
        None => border_row,
    };
    let start = -((window.0 / 2) as i64);
    let column = |c: usize| {
        let mut acc = AccSums::<T>::ZERO;
        for k in 0..window.0 as i64 {
            acc = acc.plus(row_sum(start + k, c));
        }
        let mut col = Vec::with_capacity(height);
        for r in 0..height as i64 {
            col.push(acc);
            acc = acc
                .plus(row_sum(start + r + window.0 as i64, c))
                .minus(row_sum(start + r, c));
        }
        col
    };
    let cols: Vec<Vec<AccSums<T>>> = if parallel {
        (0..width).into_par_iter().map(column).collect()
    } else {
        (0..width).map(column).collect()
    };
    let mut out = vec![AccSums::<T>::ZERO; plane.len()];
    for (c, col) in cols.into_iter().enumerate() {
        for (r, v) in col.into_iter().enumerate() {
            out[r * width + c] = v;
        }
    }
    out
}
