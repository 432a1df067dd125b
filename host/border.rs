//! [`Border`]: how every filter family extends a signal or image past its edges.

use crate::abi::border::BorderMode;

/// How a filter reads samples outside the signal (or image), named after and matching
/// `scipy.ndimage`'s `mode`. Shown for a row `a b c d`, three samples each side:
///
/// | `Border`      | extended row                 | scipy.ndimage `mode`          |
/// |---------------|------------------------------|-------------------------------|
/// | `Zero`        | `0 0 0 │ a b c d │ 0 0 0`    | `"constant"`, `cval=0`        |
/// | `Constant(v)` | `v v v │ a b c d │ v v v`    | `"constant"`, `cval=v`        |
/// | `Replicate`   | `a a a │ a b c d │ d d d`    | `"nearest"`                   |
/// | `Reflect`     | `c b a │ a b c d │ d c b`    | `"reflect"` (edge repeated)   |
/// | `Mirror`      | `d c b │ a b c d │ c b a`    | `"mirror"` (edge not repeated)|
/// | `Wrap`        | `b c d │ a b c d │ a b c`    | `"wrap"` (periodic)           |
///
/// The extension continues as far as the filter reaches, so filters longer than the signal are
/// well defined (a one-sample `Mirror` row is constant). `Constant(v)` is rounded to the element
/// type first.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Border {
    /// Zeros outside (the classic tutorial's padding).
    #[default]
    Zero,
    /// The value `v` outside.
    Constant(f64),
    /// The edge sample repeated.
    Replicate,
    /// Reflection about the edge, edge sample included.
    Reflect,
    /// Reflection about the edge sample, which is not repeated.
    Mirror,
    /// The signal repeated periodically.
    Wrap,
}

impl Border {
    /// Every mode, with `Constant(-2.5)` standing for the constant family (tests and examples).
    pub const ALL: [Border; 6] = [
        Border::Zero,
        Border::Constant(-2.5),
        Border::Replicate,
        Border::Reflect,
        Border::Mirror,
        Border::Wrap,
    ];

    /// Short name (tables, test names).
    pub const fn name(self) -> &'static str {
        match self {
            Border::Zero => "zero",
            Border::Constant(_) => "constant",
            Border::Replicate => "replicate",
            Border::Reflect => "reflect",
            Border::Mirror => "mirror",
            Border::Wrap => "wrap",
        }
    }

    /// The kernels' form: mode and constant value (`Zero` is `Constant(0)`).
    #[doc(hidden)]
    pub const fn device(self) -> (BorderMode, f64) {
        match self {
            Border::Zero => (BorderMode::Constant, 0.0),
            Border::Constant(v) => (BorderMode::Constant, v),
            Border::Replicate => (BorderMode::Replicate, 0.0),
            Border::Reflect => (BorderMode::Reflect, 0.0),
            Border::Mirror => (BorderMode::Mirror, 0.0),
            Border::Wrap => (BorderMode::Wrap, 0.0),
        }
    }
}
