//! Operations, one module per kernel family: validate → choose variant → launch config → launch.

pub mod reduce;
