//! Operations, one module per kernel family: validate → choose variant → launch config → launch.

pub mod axis;
pub mod chain;
pub mod conv1d;
pub mod filter2d;
pub mod nd;
pub mod pool;
pub mod reduce;
pub mod window;

pub(crate) use crate::shape::{planes_and_size, rows_and_len};

use crate::error::{Error, Result};

/// Checks the buffers a plan is enqueued on: each `(name, len, need)` holds at least `need`
/// elements, else [`Error::InvalidArgument`] naming the first short one.
pub(crate) fn check_buffers<const N: usize>(buffers: [(&'static str, usize, usize); N]) -> Result<()> {
    match buffers.into_iter().find(|&(_, len, need)| len < need) {
        Some((name, len, need)) => Err(Error::InvalidArgument {
            name,
            reason: format!("holds {len} elements, the plan needs {need}"),
        }),
        None => Ok(()),
    }
}
