//! Operations, one module per kernel family: validate → choose variant → launch config → launch.

pub mod chain;
pub mod conv1d;
pub mod filter2d;
pub mod pool;
pub mod reduce;
pub mod window;

pub(crate) use crate::shape::{planes_and_size, rows_and_len};
