//! Reference reductions. Integers: exact in i128/u128. Floats: Neumaier-compensated f64 sums,
//! two-pass variance. NaN: `min`/`max` return NaN when any element is NaN.

use rayon::prelude::*;

/// A number the references can read exactly: integers as i128, floats as f64.
pub trait RefNum: Copy + Send + Sync + PartialOrd {
    /// The value as f64 (exact for every supported type but large i128 sums).
    fn to_f64(self) -> f64;
    /// The value as i128 when it is an integer.
    fn to_i128(self) -> Option<i128>;
}

macro_rules! ref_int {
    ($($t:ty),*) => {$(
        impl RefNum for $t {
            fn to_f64(self) -> f64 { self as f64 }
            fn to_i128(self) -> Option<i128> { Some(self as i128) }
        }
    )*};
}
ref_int!(i32, u8, u32);

macro_rules! ref_float {
    ($($t:ty),*) => {$(
        impl RefNum for $t {
            fn to_f64(self) -> f64 { self as f64 }
            fn to_i128(self) -> Option<i128> { None }
        }
    )*};
}
ref_float!(f32, f64);

/// Exact Σx of integers.
pub fn sum_int<T: RefNum>(x: &[T]) -> i128 {
    x.iter().map(|v| v.to_i128().expect("integer input")).sum()
}

/// Exact Σx² of integers.
pub fn sum_sq_int<T: RefNum>(x: &[T]) -> u128 {
    x.iter()
        .map(|v| v.to_i128().expect("integer input").unsigned_abs().pow(2))
        .sum()
}

/// Neumaier-compensated f64 sum of `f(x)` over the input.
pub fn sum_f64_by<T: RefNum>(x: &[T], f: impl Fn(f64) -> f64) -> f64 {
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for v in x {
        let y = f(v.to_f64());
        let t = s + y;
        c += if s.abs() >= y.abs() { (s - t) + y } else { (y - t) + s };
        s = t;
    }
    s + c
}

/// Σx in f64 (compensated).
pub fn sum_float<T: RefNum>(x: &[T]) -> f64 {
    sum_f64_by(x, |v| v)
}

/// Σx² in f64 (compensated).
pub fn sum_sq_float<T: RefNum>(x: &[T]) -> f64 {
    sum_f64_by(x, |v| v * v)
}

/// Whether `v` is NaN (`v != v`), for any `PartialOrd` number.
#[allow(clippy::eq_op)]
fn is_nan<T: PartialOrd>(v: T) -> bool {
    v.partial_cmp(&v).is_none()
}

/// Smallest element; NaN if any element is NaN; `None` when empty.
pub fn min<T: RefNum>(x: &[T]) -> Option<T> {
    extreme(x, |v, m| v < m)
}

/// Largest element; NaN if any element is NaN; `None` when empty.
pub fn max<T: RefNum>(x: &[T]) -> Option<T> {
    extreme(x, |v, m| v > m)
}

/// The first NaN if there is one, else the element that `better` prefers over all others.
fn extreme<T: RefNum>(x: &[T], better: impl Fn(T, T) -> bool) -> Option<T> {
    if let Some(nan) = x.iter().find(|v| is_nan(**v)) {
        return Some(*nan);
    }
    let mut it = x.iter().copied();
    let mut m = it.next()?;
    for v in it {
        if better(v, m) {
            m = v;
        }
    }
    Some(m)
}

/// Mean and population variance, two passes in f64 (integers: exact mean from the i128 sum).
pub fn mean_variance<T: RefNum>(x: &[T]) -> Option<(f64, f64)> {
    if x.is_empty() {
        return None;
    }
    let n = x.len() as f64;
    let mean = match x[0].to_i128() {
        Some(_) => sum_int(x) as f64 / n,
        None => sum_float(x) / n,
    };
    let var = sum_f64_by(x, |v| (v - mean) * (v - mean)) / n;
    Some((mean, var))
}

/// Rayon-parallel Σx² of i32 (exact, u128): the multi-core CPU baseline.
pub fn par_sum_sq_i32(x: &[i32]) -> u128 {
    x.par_chunks(1 << 16)
        .map(|c| c.iter().map(|&v| (v as i64 * v as i64) as u64 as u128).sum::<u128>())
        .sum()
}

/// Serial Σx² of i32 (exact, u128), written as a plain loop: the single-core CPU baseline.
pub fn serial_sum_sq_i32(x: &[i32]) -> u128 {
    let mut s = 0u128;
    for &v in x {
        s += (v as i64 * v as i64) as u64 as u128;
    }
    s
}
