//! Operations, one module per kernel family: validate → choose variant → launch config → launch.

pub mod conv1d;
pub mod reduce;
