//! How ops see an array's axes: the last axis as rows of signals, the last two as planes of
//! images, the leading axes as a batch. Shared by the ops and the CPU reference (host/cpu), which
//! import nothing else from host/ops.

use ndarray::Dimension;

use crate::error::{Error, Result};

/// `(rows, n)` of an array whose last axis is processed (leading axes are a batch of rows).
pub(crate) fn rows_and_len(shape: &[usize]) -> Result<(usize, usize)> {
    match shape.split_last() {
        Some((&n, lead)) => Ok((lead.iter().product(), n)),
        None => Err(Error::InvalidArgument {
            name: "x",
            reason: "a 0-dimensional array has no axis to process".into(),
        }),
    }
}

/// `(planes, height, width)` of an array whose last two axes are processed (leading axes are a
/// batch of planes).
pub(crate) fn planes_and_size(shape: &[usize]) -> Result<(usize, usize, usize)> {
    match shape {
        [lead @ .., h, w] => Ok((lead.iter().product(), *h, *w)),
        _ => Err(Error::InvalidArgument {
            name: "x",
            reason: format!("a 2D operation needs at least 2 dimensions, got shape {shape:?}"),
        }),
    }
}

/// `dim` with its last two axes replaced by `(oh, ow)`.
pub(crate) fn pooled_dim<D: Dimension>(dim: &D, (oh, ow): (usize, usize)) -> D {
    let mut out = dim.clone();
    let s = out.slice_mut();
    let n = s.len();
    s[n - 2] = oh;
    s[n - 1] = ow;
    out
}
