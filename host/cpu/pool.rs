//! Reference 2D pooling (see [`crate::ops::pool`]), written from PyTorch's documented formulas
//! independently of the kernels' window arithmetic:
//!
//! ```text
//! out(n, c, y, x) = max / mean over i < kh, j < kw of  input(n, c, y·sh − ph + i·dh, x·sw − pw + j·dw)
//! ```
//!
//! over the taps that land inside the plane. Max keeps the first maximum in row-major tap order and
//! lets any NaN win (the last NaN's index); a window without a tap in the plane gives the type's
//! lowest value at PyTorch's start index; average sums in row-major order in the element type and
//! divides by the override, the taps inside the padded plane (`count_include_pad`) or the taps
//! inside the plane. [`par_max_pool2d`] is the rayon-parallel CPU baseline of the example.

use ndarray::{Array, ArrayBase, Data, Dimension};
use rayon::prelude::*;

use crate::abi::pool::{AvgValue, PoolValue};
use crate::error::Result;
use crate::ops::pool::{AvgPool2d, Pool2d};
use crate::shape::{planes_and_size, pooled_dim};

/// The `(oh, ow)` output of an `h × w` plane, from PyTorch's documented formula (`Shape` of
/// `torch.nn.MaxPool2d`), written here rather than taken from the ops: `floor` (or `ceil` in ceil
/// mode) of `(n + 2p − d(k − 1) − 1) / s`, plus one, and in ceil mode the last window dropped when
/// it would start in the right padding. The parameters are validated by `Pool2d::output_size`
/// (PyTorch's errors), whose sizes the reference does not use.
fn pooled_size(p: &Pool2d, h: usize, w: usize) -> Result<(usize, usize)> {
    p.output_size(h, w)?;
    let axis = |n: usize, k: usize, s: usize, pad: usize, d: usize| -> usize {
        let span = (n + 2 * pad) as i64 - (d * (k - 1)) as i64 - 1;
        let s = s as i64;
        let mut out = if p.ceil_mode {
            span.div_euclid(s) + (span.rem_euclid(s) != 0) as i64
        } else {
            span.div_euclid(s)
        } + 1;
        if p.ceil_mode && (out - 1) * s >= (n + pad) as i64 {
            out -= 1;
        }
        out.max(0) as usize
    };
    Ok((
        axis(h, p.kernel.0, p.stride.0, p.padding.0, p.dilation.0),
        axis(w, p.kernel.1, p.stride.1, p.padding.1, p.dilation.1),
    ))
}

/// `(values, flat in-plane indices)` of max pooling every plane of `x` with `p`.
pub fn max_pool2d<T: PoolValue, S: Data<Elem = T>, D: Dimension>(
    x: &ArrayBase<S, D>,
    p: &Pool2d,
) -> Result<(Array<T, D>, Array<i64, D>)> {
    let (planes, h, w) = planes_and_size(x.shape())?;
    let (oh, ow) = pooled_size(p, h, w)?;
    let xs = x.as_standard_layout();
    let xs = xs.as_slice().expect("standard layout");
    let mut values = Vec::with_capacity(planes * oh * ow);
    let mut indices = Vec::with_capacity(planes * oh * ow);
    for plane in 0..planes {
        let src = &xs[plane * h * w..(plane + 1) * h * w];
        for oy in 0..oh {
            for ox in 0..ow {
                let (v, i) = max_window(src, h, w, p, oy, ox);
                values.push(v);
                indices.push(i);
            }
        }
    }
    Ok((
        reshape(x.raw_dim(), oh, ow, values),
        reshape(x.raw_dim(), oh, ow, indices),
    ))
}

/// The in-plane taps `(row, col)` of output `(oy, ox)` in row-major order.
fn taps(h: usize, w: usize, p: &Pool2d, oy: usize, ox: usize) -> impl Iterator<Item = (usize, usize)> {
    let at = |o: usize, s: usize, pad: usize, t: usize, d: usize| (o * s + t * d) as i64 - pad as i64;
    (0..p.kernel.0).flat_map(move |i| {
        let r = at(oy, p.stride.0, p.padding.0, i, p.dilation.0);
        (0..p.kernel.1).filter_map(move |j| {
            let c = at(ox, p.stride.1, p.padding.1, j, p.dilation.1);
            ((0..h as i64).contains(&r) && (0..w as i64).contains(&c)).then_some((r as usize, c as usize))
        })
    })
}

#[allow(clippy::eq_op)]
fn max_window<T: PoolValue>(src: &[T], h: usize, w: usize, p: &Pool2d, oy: usize, ox: usize) -> (T, i64) {
    let mut best: Option<(T, i64)> = None;
    for (r, c) in taps(h, w, p, oy, ox) {
        let v = src[r * w + c];
        let i = (r * w + c) as i64;
        match best {
            None => best = Some((v, i)),
            Some((m, _)) if v > m || v != v => best = Some((v, i)),
            _ => {}
        }
    }
    // A window with no tap in the plane (PyTorch accepts some, e.g. a 1 × 1 plane, padding 1,
    // dilation 2): the lowest value, at the index of the first tap position at or past 0 on each
    // axis (PyTorch steps the start by whole dilations), as its kernels do.
    best.unwrap_or_else(|| {
        let first = |o: usize, s: usize, pad: usize, d: usize| {
            let mut v = (o * s) as i64 - pad as i64;
            while v < 0 {
                v += d as i64;
            }
            v
        };
        let r = first(oy, p.stride.0, p.padding.0, p.dilation.0);
        let c = first(ox, p.stride.1, p.padding.1, p.dilation.1);
        (T::LOWEST, r * w as i64 + c)
    })
}

/// Average pooling of every plane of `x` with `p`.
pub fn avg_pool2d<T: AvgValue, S: Data<Elem = T>, D: Dimension>(
    x: &ArrayBase<S, D>,
    p: &AvgPool2d,
) -> Result<Array<T, D>> {
    let (planes, h, w) = planes_and_size(x.shape())?;
    p.output_size(h, w)?;
    let g = p.window();
    let (oh, ow) = pooled_size(&g, h, w)?;
    let xs = x.as_standard_layout();
    let xs = xs.as_slice().expect("standard layout");
    let mut values = Vec::with_capacity(planes * oh * ow);
    for plane in 0..planes {
        let src = &xs[plane * h * w..(plane + 1) * h * w];
        for oy in 0..oh {
            for ox in 0..ow {
                let mut sum = T::ZERO;
                let mut inside = 0i64;
                for (r, c) in taps(h, w, &g, oy, ox) {
                    sum = sum.add(src[r * w + c]);
                    inside += 1;
                }
                // Taps inside the plane extended by the padding on both sides.
                let padded_axis = |o: usize, s: usize, pad: usize, k: usize, n: usize| {
                    (0..k)
                        .filter(|&t| (o * s + t) < n + 2 * pad) // position o·s − pad + t < n + pad
                        .count() as i64
                };
                let padded = padded_axis(oy, g.stride.0, g.padding.0, g.kernel.0, h)
                    * padded_axis(ox, g.stride.1, g.padding.1, g.kernel.1, w);
                let divisor = match p.divisor_override {
                    Some(d) => d as i64,
                    None if p.count_include_pad => padded,
                    None => inside,
                };
                values.push(if inside == 0 { T::ZERO } else { sum.div_count(divisor) });
            }
        }
    }
    Ok(reshape(x.raw_dim(), oh, ow, values))
}

/// Max pooling of every plane, planes in parallel (rayon): the example's CPU baseline.
pub fn par_max_pool2d<T: PoolValue + Send + Sync>(
    x: &[T],
    planes: usize,
    h: usize,
    w: usize,
    p: &Pool2d,
) -> Result<Vec<T>> {
    let (oh, ow) = pooled_size(p, h, w)?;
    let mut out = vec![T::LOWEST; planes * oh * ow];
    if oh * ow == 0 {
        return Ok(out);
    }
    out.par_chunks_mut(oh * ow).enumerate().for_each(|(plane, dst)| {
        let src = &x[plane * h * w..(plane + 1) * h * w];
        for oy in 0..oh {
            for ox in 0..ow {
                dst[oy * ow + ox] = max_window(src, h, w, p, oy, ox).0;
            }
        }
    });
    Ok(out)
}

fn reshape<U, D: Dimension>(dim: D, oh: usize, ow: usize, v: Vec<U>) -> Array<U, D> {
    Array::from_shape_vec(pooled_dim(&dim, (oh, ow)), v).expect("one value per output")
}
