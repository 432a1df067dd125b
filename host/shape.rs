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

/// `(outer, n, inner)` of a pass along `axis`: the product of the axes before it, its length and
/// the product of the axes after it (the distance between neighbours along it); an axis past the
/// last is [`Error::InvalidArgument`] naming it.
pub(crate) fn axis_split(shape: &[usize], axis: usize) -> Result<(usize, usize, usize)> {
    if axis >= shape.len() {
        return Err(Error::InvalidArgument {
            name: "axis",
            reason: format!("axis {axis} of a {}-dimensional array of shape {shape:?}", shape.len()),
        });
    }
    Ok((
        shape[..axis].iter().product(),
        shape[axis],
        shape[axis + 1..].iter().product(),
    ))
}

/// One value per axis of `shape` from a list for its trailing axes (the n-D ops' convention: a
/// list shorter than the array leaves the leading axes alone, as `(h, w)` does for the 2D ops),
/// the leading axes filled with `alone`. A list longer than the array is
/// [`Error::InvalidArgument`] naming `name`.
pub(crate) fn per_axis<V: Copy>(shape: &[usize], list: &[V], alone: V, name: &'static str) -> Result<Vec<V>> {
    if list.len() > shape.len() {
        return Err(Error::InvalidArgument {
            name,
            reason: format!(
                "{} values for a {}-dimensional array of shape {shape:?}",
                list.len(),
                shape.len()
            ),
        });
    }
    let mut all = vec![alone; shape.len() - list.len()];
    all.extend_from_slice(list);
    Ok(all)
}
