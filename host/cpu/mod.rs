//! CPU reference implementations: plain loops, exact (i128) for integers and compensated f64 for
//! floats. They are the oracle of the tests and the serial CPU baseline of the examples; the
//! `par_*` functions are the rayon-parallel CPU baseline.

pub mod conv1d;
pub mod filter2d;
pub mod nd;
pub mod pool;
pub mod reduce;
pub mod window;
