//! Operations, one module per kernel family: validate → choose variant → launch config → launch.

pub mod conv1d;
pub mod filter2d;
pub mod pool;
pub mod reduce;
pub mod window;

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
