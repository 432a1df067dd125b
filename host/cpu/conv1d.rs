//! Reference 1D filters (correlation along the last axis, see [`crate::ops::conv1d`]).
//!
//! - [`extended_index`]: the border modes by explicit reflection, one edge at a time — written
//!   independently of the kernels' closed form (`abi::border::border_index`) so each checks the
//!   other.
//! - [`oracle`]: one output in f64 with its error scale `Σ|t·x|`, the tests' yardstick.
//! - [`correlate`] / [`par_correlate`]: serial and rayon baselines in the element type, with an
//!   interior fast path (what a careful CPU implementation does).

use rayon::prelude::*;

use crate::border::Border;

/// f32 or f64, as the CPU references need them.
pub trait Real: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    const ZERO: Self;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    /// `self + a · b` (two roundings; the CPU baselines do not assume an FMA unit).
    fn add_mul(self, a: Self, b: Self) -> Self;
}

macro_rules! real {
    ($($t:ty),*) => {$(
        impl Real for $t {
            const ZERO: $t = 0.0;
            fn from_f64(v: f64) -> $t { v as $t }
            fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)]
            fn add_mul(self, a: $t, b: $t) -> $t { self + a * b }
        }
    )*};
}
real!(f32, f64);

/// Index of the sample at position `i` of a row of `n ≥ 1` samples extended by `border`, or `None`
/// where the extension is the constant. Reflects (or wraps) one edge at a time until the position
/// lands inside, exactly as the scipy.ndimage pictures read.
pub fn extended_index(mut i: i64, n: usize, border: Border) -> Option<usize> {
    let n = n as i64;
    assert!(n >= 1, "a row has at least one sample");
    loop {
        if (0..n).contains(&i) {
            return Some(i as usize);
        }
        i = match border {
            Border::Zero | Border::Constant(_) => return None,
            Border::Replicate => i.clamp(0, n - 1),
            // reflect about the edge between samples: −1 ↦ 0, n ↦ n − 1
            Border::Reflect if i < 0 => -i - 1,
            Border::Reflect => 2 * n - 1 - i,
            // reflect about the edge sample: −1 ↦ 1, n ↦ n − 2
            Border::Mirror if n == 1 => 0,
            Border::Mirror if i < 0 => -i,
            Border::Mirror => 2 * (n - 1) - i,
            Border::Wrap if i < 0 => i + n,
            Border::Wrap => i - n,
        };
    }
}

/// The border's constant, rounded to the element type.
fn cval<T: Real>(border: Border) -> T {
    match border {
        Border::Constant(v) => T::from_f64(v),
        _ => T::ZERO,
    }
}

/// Sample at position `pos` of `row` extended by `border`.
fn extended<T: Real>(row: &[T], pos: i64, border: Border) -> T {
    extended_index(pos, row.len(), border).map_or(cval(border), |j| row[j])
}

/// Output `i` of `row` correlated with `taps` (f64, so exact taps like `1/w` can be given) in f64,
/// and its error scale `Σ_k |t_k · x̃_{i+k−anchor}|`.
pub fn oracle<T: Real>(row: &[T], taps: &[f64], anchor: usize, border: Border, i: usize) -> (f64, f64) {
    let start = i as i64 - anchor as i64;
    let mut value = 0.0;
    let mut scale = 0.0;
    for (k, &t) in taps.iter().enumerate() {
        let p = t * extended(row, start + k as i64, border).to_f64();
        value += p;
        scale += p.abs();
    }
    (value, scale)
}

/// Correlates flat outputs `first .. first + out.len()` of rows of `n` samples (`x` in C order).
fn correlate_flat<T: Real>(x: &[T], n: usize, taps: &[T], anchor: usize, border: Border, first: usize, out: &mut [T]) {
    let right = taps.len() - 1 - anchor;
    for (o, y) in (first..).zip(out.iter_mut()) {
        let (r, i) = (o / n, o % n);
        let row = &x[r * n..(r + 1) * n];
        let mut acc = T::ZERO;
        if i >= anchor && i + right < n {
            for (&t, &v) in taps.iter().zip(&row[i - anchor..=i + right]) {
                acc = acc.add_mul(t, v);
            }
        } else {
            for (k, &t) in taps.iter().enumerate() {
                acc = acc.add_mul(t, extended(row, (i + k) as i64 - anchor as i64, border));
            }
        }
        *y = acc;
    }
}

/// Serial CPU correlation of every row of `x` (rows of `n` samples, C order) into `out`.
pub fn correlate<T: Real>(x: &[T], n: usize, taps: &[T], anchor: usize, border: Border, out: &mut [T]) {
    assert_eq!(x.len(), out.len());
    if !x.is_empty() {
        correlate_flat(x, n, taps, anchor, border, 0, out);
    }
}

/// [`correlate`] on every core (rayon, chunks of 16384 outputs).
pub fn par_correlate<T: Real>(x: &[T], n: usize, taps: &[T], anchor: usize, border: Border, out: &mut [T]) {
    assert_eq!(x.len(), out.len());
    const CHUNK: usize = 16384;
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| correlate_flat(x, n, taps, anchor, border, c * CHUNK, chunk));
}
