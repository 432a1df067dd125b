//! Pooling parameters with PyTorch's semantics: [`Pool2d`] (max) and [`AvgPool2d`] (average),
//! their checks and output sizes.

use super::*;

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

/// Max-pooling parameters, PyTorch's `F.max_pool2d` arguments as a value: kernel `(kh, kw)`,
/// stride (default: the kernel), padding (default 0), dilation (default 1), `ceil_mode` (default
/// false). Pairs are `(height, width)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pool2d {
    pub kernel: (usize, usize),
    pub stride: (usize, usize),
    pub padding: (usize, usize),
    pub dilation: (usize, usize),
    pub ceil_mode: bool,
}

impl Pool2d {
    /// `kernel` windows with stride = kernel, no padding, no dilation, floor mode.
    pub const fn new(kernel: (usize, usize)) -> Pool2d {
        Pool2d {
            kernel,
            stride: kernel,
            padding: (0, 0),
            dilation: (1, 1),
            ceil_mode: false,
        }
    }

    /// With stride `s`.
    pub const fn stride(self, s: (usize, usize)) -> Pool2d {
        Pool2d { stride: s, ..self }
    }

    /// With implicit padding `p` on both sides of each axis (at most half the kernel).
    pub const fn padding(self, p: (usize, usize)) -> Pool2d {
        Pool2d { padding: p, ..self }
    }

    /// With dilation `d` (the spacing of the window's taps).
    pub const fn dilation(self, d: (usize, usize)) -> Pool2d {
        Pool2d { dilation: d, ..self }
    }

    /// With ceil mode on or off (round the output size up; partial last windows).
    pub const fn ceil_mode(self, on: bool) -> Pool2d {
        Pool2d { ceil_mode: on, ..self }
    }

    /// The `(oh, ow)` output of an `h × w` plane, or the PyTorch error for these parameters.
    pub fn output_size(&self, h: usize, w: usize) -> Result<(usize, usize)> {
        for (name, (a, b)) in [
            ("kernel", self.kernel),
            ("stride", self.stride),
            ("dilation", self.dilation),
        ] {
            if a == 0 || b == 0 {
                return Err(Error::InvalidArgument {
                    name,
                    reason: format!("must be positive along both axes, got ({a}, {b})"),
                });
            }
        }
        let (k, p) = (self.kernel, self.padding);
        if p.0 > k.0 / 2 || p.1 > k.1 / 2 {
            return Err(Error::InvalidArgument {
                name: "padding",
                reason: format!(
                    "must be at most half the kernel (PyTorch's rule), got padding ({}, {}) for kernel ({}, {})",
                    p.0, p.1, k.0, k.1
                ),
            });
        }
        let axis = |n: usize, k: usize, s: usize, p: usize, d: usize| -> Result<i64> {
            let big = |v: usize| i64::try_from(v).ok().filter(|&v| v < (1 << 31));
            match (big(n), big(k), big(s), big(p), big(d)) {
                (Some(n), Some(k), Some(s), Some(p), Some(d)) => Ok(output_size(n, k, s, p, d, self.ceil_mode)),
                _ => Err(Error::InvalidArgument {
                    name: "pool parameters",
                    reason: format!(
                        "sizes must be below 2^31, got n {n}, kernel {k}, stride {s}, padding {p}, dilation {d}"
                    ),
                }),
            }
        };
        let oh = axis(h, k.0, self.stride.0, p.0, self.dilation.0)?;
        let ow = axis(w, k.1, self.stride.1, p.1, self.dilation.1)?;
        if oh < 1 || ow < 1 {
            return Err(Error::InvalidArgument {
                name: "output size",
                reason: format!("input plane {h} × {w} with {self:?} gives {oh} × {ow}: too small"),
            });
        }
        Ok((oh as usize, ow as usize))
    }
}

/// Average-pooling parameters, PyTorch's `F.avg_pool2d` arguments as a value (no dilation, as
/// there): the window's [`Pool2d`] fields, `count_include_pad` (default true) and a divisor
/// override (default none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AvgPool2d {
    pub(super) window: Pool2d,
    pub count_include_pad: bool,
    pub divisor_override: Option<i32>,
}

impl AvgPool2d {
    /// `kernel` windows with stride = kernel, no padding, floor mode, padding counted.
    pub const fn new(kernel: (usize, usize)) -> AvgPool2d {
        AvgPool2d {
            window: Pool2d::new(kernel),
            count_include_pad: true,
            divisor_override: None,
        }
    }

    /// With stride `s`.
    pub const fn stride(self, s: (usize, usize)) -> AvgPool2d {
        AvgPool2d {
            window: self.window.stride(s),
            ..self
        }
    }

    /// With padding `p` (at most half the kernel).
    pub const fn padding(self, p: (usize, usize)) -> AvgPool2d {
        AvgPool2d {
            window: self.window.padding(p),
            ..self
        }
    }

    /// With ceil mode on or off.
    pub const fn ceil_mode(self, on: bool) -> AvgPool2d {
        AvgPool2d {
            window: self.window.ceil_mode(on),
            ..self
        }
    }

    /// Whether padding positions count in the divisor.
    pub const fn count_include_pad(self, on: bool) -> AvgPool2d {
        AvgPool2d {
            count_include_pad: on,
            ..self
        }
    }

    /// Divide every window's sum by `d` (nonzero) instead.
    pub const fn divisor_override(self, d: Option<i32>) -> AvgPool2d {
        AvgPool2d {
            divisor_override: d,
            ..self
        }
    }

    /// The window geometry (dilation 1).
    pub const fn window(&self) -> Pool2d {
        self.window
    }

    /// The `(oh, ow)` output of an `h × w` plane, or the PyTorch error for these parameters.
    pub fn output_size(&self, h: usize, w: usize) -> Result<(usize, usize)> {
        if self.divisor_override == Some(0) {
            return Err(Error::InvalidArgument {
                name: "divisor_override",
                reason: "must not be zero".into(),
            });
        }
        self.window.output_size(h, w)
    }
}
