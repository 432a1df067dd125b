//! n-dimensional filters and morphology, scipy.ndimage's n-D ops: grey dilation, erosion,
//! opening, closing and gradient of boxes, the Gaussian with a sigma per axis, correlation and
//! the Sobel derivative along any axis.
//!
//! **Which axes, which sizes.** Every n-D op takes one size (or sigma) per *trailing* axis, as
//! scipy takes one per axis: `&[5, 5, 5]` filters the last three axes, `&[1, 5, 5, 5]` says the
//! same of a 4-D batch of volumes, and a list shorter than the array leaves the leading axes
//! alone (a batch), as the 2D ops' `(h, w)` does. A size of 1 (a sigma of 0) leaves its axis
//! alone. Along-axis ops take the axis (`axis < ndim`).
//!
//! **How.** A pass along axis `a` of a C-order array is a 2D pass over the same buffer seen as
//! `(outer, n, inner)` planes — `outer` the product of the axes before `a`, `n` its length,
//! `inner` the product of those after — down the columns (a `k × 1` window) when `inner > 1`, or
//! along the rows of `(outer, n)` when `a` is the last axis. No transpose: the column passes read
//! and write whole warp rows of the fastest axis. Morphology joins the last two axes into one 2D
//! window (the fused u8 van Herk tile, word tiles) and runs a column pass per leading axis; a
//! box's extremum is separable under every border mode, since each mode maps each coordinate on
//! its own, so the result is the n-D box's, bit for bit. The linear ops run scipy's 1D
//! correlations in axis order, each written in the element type as scipy writes it
//! (`host/cpu/nd.rs` is the oracle, pinned to scipy's own outputs).
//!
//! # Errors
//! A size list longer than the array's dimensions, a zero size, an axis out of range, a
//! negative, NaN or infinite sigma or truncate: [`Error::InvalidArgument`]. Sides and windows
//! past the 2D filters' limits: their errors. Empty arrays give empty results.

use cudarc::driver::CudaSlice;
use ndarray::Dimension;

use crate::array::{DeviceArray, Operand};
use crate::border::Border;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::ops::axis::{checked_sizes, filtered};
use crate::ops::filter2d::{Axis2d, Filter2dElement, Filter2dPlan, Filter2dShape, MorphVariant, gaussian_kernel};
use crate::shape::{axis_split, per_axis};

/// The plane a pass along `axis` of `shape` runs on, and which of its axes is `axis`.
fn plane_of(shape: &[usize], axis: usize) -> Result<(Filter2dShape, Axis2d)> {
    let (outer, n, inner) = axis_split(shape, axis)?;
    Ok(if inner > 1 {
        (
            Filter2dShape {
                planes: outer,
                h: n,
                w: inner,
            },
            Axis2d::Columns,
        )
    } else {
        (
            Filter2dShape {
                planes: 1,
                h: outer,
                w: n,
            },
            Axis2d::Rows,
        )
    })
}

/// Which extremum an n-D morphology pass takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Extremum {
    Max,
    Min,
}

impl Gpu {
    /// Runs `plans` in order from `x` into a fresh array of `dim`, each from the last one's result
    /// (two buffers in turn); no plan copies `x`.
    fn run_plans<T: Filter2dElement, D: Dimension>(
        &self,
        x: &CudaSlice<T>,
        dim: &D,
        plans: Vec<Filter2dPlan<T, T>>,
    ) -> Result<DeviceArray<T, D>> {
        let mut cur = DeviceArray::<T, D>::uninit(self, dim.clone())?;
        let Some((first, rest)) = plans.split_first() else {
            self.stream().memcpy_dtod(x, cur.as_mut_slice())?;
            return Ok(cur);
        };
        first.enqueue(self, x, cur.as_mut_slice())?;
        if rest.is_empty() {
            return Ok(cur);
        }
        let mut next = DeviceArray::<T, D>::uninit(self, dim.clone())?;
        for p in rest {
            p.enqueue(self, cur.as_slice(), next.as_mut_slice())?;
            std::mem::swap(&mut cur, &mut next);
        }
        Ok(cur)
    }

    /// The n-D box extremum of the device array `x` (see the module doc for the passes).
    fn extremum_nd<T: Filter2dElement, D: Dimension>(
        &self,
        x: Option<&CudaSlice<T>>,
        dim: &D,
        sizes: &[usize],
        border: Border,
        which: Extremum,
    ) -> Result<DeviceArray<T, D>> {
        let shape = dim.slice();
        let sizes = checked_sizes(shape, sizes)?;
        let Some(x) = x else {
            return DeviceArray::uninit(self, dim.clone());
        };
        let d = shape.len();
        let plan = |s: Filter2dShape, window: (usize, usize)| match which {
            Extremum::Max => Filter2dPlan::dilate(self, s, window, border, MorphVariant::Auto),
            Extremum::Min => Filter2dPlan::erode(self, s, window, border, MorphVariant::Auto),
        };
        let joint = d >= 2 && sizes[d - 2] > 1 && sizes[d - 1] > 1;
        let mut plans = Vec::new();
        for (axis, k) in filtered(&sizes) {
            if joint && axis == d - 1 {
                continue;
            }
            plans.push(if joint && axis == d - 2 {
                let (planes, h, w) = crate::shape::planes_and_size(shape)?;
                plan(Filter2dShape { planes, h, w }, (sizes[d - 2], sizes[d - 1]))?
            } else {
                let (s, along) = plane_of(shape, axis)?;
                plan(s, if along == Axis2d::Columns { (k, 1) } else { (1, k) })?
            });
        }
        self.run_plans(x, dim, plans)
    }

    /// Grey dilation of an n-D array by a box of `sizes` (one per trailing axis; scipy's
    /// `grey_dilation(x, size=sizes)`, anchoring even sizes as scipy mirrors the structuring
    /// element), bit for bit under every border.
    ///
    /// ```no_run
    /// # use gpuprims::{Gpu, Border};
    /// let gpu = Gpu::new()?;
    /// let vol = ndarray::Array3::<u8>::from_shape_fn((64, 128, 128), |(z, y, x)| ((z * y + x) % 251) as u8);
    /// let d = gpu.dilate_nd(&vol, &[5, 5, 5], Border::Reflect)?;
    /// assert!(d.iter().zip(vol.iter()).all(|(d, x)| d >= x));
    /// # Ok::<(), gpuprims::Error>(())
    /// ```
    pub fn dilate_nd<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        sizes: &[usize],
        border: Border,
    ) -> Result<X::Output<T>> {
        self.extremum_chain(x, sizes, border, &[Extremum::Max])
    }

    /// Grey erosion by a box of `sizes` (scipy's `grey_erosion(x, size=sizes)`).
    pub fn erode_nd<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        sizes: &[usize],
        border: Border,
    ) -> Result<X::Output<T>> {
        self.extremum_chain(x, sizes, border, &[Extremum::Min])
    }

    /// Grey opening, erosion then dilation (scipy's `grey_opening(x, size=sizes)`).
    pub fn opening_nd<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        sizes: &[usize],
        border: Border,
    ) -> Result<X::Output<T>> {
        self.extremum_chain(x, sizes, border, &[Extremum::Min, Extremum::Max])
    }

    /// Grey closing, dilation then erosion (scipy's `grey_closing(x, size=sizes)`).
    pub fn closing_nd<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        sizes: &[usize],
        border: Border,
    ) -> Result<X::Output<T>> {
        self.extremum_chain(x, sizes, border, &[Extremum::Max, Extremum::Min])
    }

    /// The n-D box extrema `steps` in turn (one for dilation or erosion, two for opening and
    /// closing), each over the last one's result.
    fn extremum_chain<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        sizes: &[usize],
        border: Border,
        steps: &[Extremum],
    ) -> Result<X::Output<T>> {
        let dim = x.dims();
        let input = x.device(self)?;
        let mut y: Option<DeviceArray<T, X::Dim>> = None;
        for &step in steps {
            let from = match &y {
                Some(prev) => input.as_ref().map(|_| prev.as_slice()),
                None => input.as_ref().map(|i| i.slice()),
            };
            y = Some(self.extremum_nd(from, &dim, sizes, border, step)?);
        }
        X::finish(self, y.expect("at least one step"))
    }

    /// Morphological gradient, dilation − erosion by a box of `sizes` (scipy's
    /// `morphological_gradient(x, size=sizes)`).
    pub fn morphological_gradient_nd<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        sizes: &[usize],
        border: Border,
    ) -> Result<X::Output<T>> {
        let dim = x.dims();
        let input = x.device(self)?;
        let slice = input.as_ref().map(|i| i.slice());
        let mut dil = self.extremum_nd(slice, &dim, sizes, border, Extremum::Max)?;
        let ero = self.extremum_nd(slice, &dim, sizes, border, Extremum::Min)?;
        self.subtract_in_place(&mut dil, &ero)?;
        X::finish(self, dil)
    }

    /// Runs scipy's chain of 1D correlations `(axis, taps)` over `x`, each pass written in `T`.
    /// A pass along the second-to-last axis followed by one along the last is one separable plan
    /// over the trailing planes ([`Filter2dPlan::separable`]: one kernel for the Gaussians).
    fn correlate_chain<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        passes: &[(usize, Vec<f64>)],
        border: Border,
    ) -> Result<X::Output<T>> {
        let dim = x.dims();
        let shape = dim.slice();
        let d = shape.len();
        let mut plans = Vec::with_capacity(passes.len());
        let mut i = 0;
        while i < passes.len() {
            let (axis, taps) = (passes[i].0, &passes[i].1);
            if d >= 2 && axis == d - 2 && passes.get(i + 1).is_some_and(|p| p.0 == d - 1) {
                let (planes, h, w) = crate::shape::planes_and_size(shape)?;
                let s = Filter2dShape { planes, h, w };
                plans.push(Filter2dPlan::separable(self, s, taps, &passes[i + 1].1, border)?);
                i += 2;
            } else {
                let (s, along) = plane_of(shape, axis)?;
                plans.push(Filter2dPlan::pass(self, s, taps, along, border)?);
                i += 1;
            }
        }
        let y = match x.device(self)? {
            Some(input) => self.run_plans(input.slice(), &dim, plans)?,
            None => DeviceArray::uninit(self, dim)?,
        };
        X::finish(self, y)
    }

    /// scipy's `correlate1d(x, taps, axis, mode, cval)`: `taps` centred at `len / 2` along
    /// `axis`, in f64 in scipy's summation order and written in the element type (integers
    /// truncated toward zero, as scipy's cast), bit for bit.
    pub fn correlate1d<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        taps: &[f64],
        axis: usize,
        border: Border,
    ) -> Result<X::Output<T>> {
        axis_split(x.dims().slice(), axis)?;
        self.correlate_chain(x, &[(axis, taps.to_vec())], border)
    }

    /// scipy's `gaussian_filter(x, sigma, mode, cval, truncate)` with a sigma per trailing axis (0
    /// leaves an axis alone; a shorter list leaves the leading axes alone): one pass per axis with
    /// `sigma > 0`, in axis order, each written in the element type as scipy writes it.
    ///
    /// ```no_run
    /// # use gpuprims::{Gpu, Border};
    /// let gpu = Gpu::new()?;
    /// let vol = ndarray::Array3::<f32>::from_elem((32, 64, 64), 1.0);
    /// let g = gpu.gaussian_nd(&vol, &[1.0, 2.0, 2.0], 4.0, Border::Reflect)?;
    /// assert!(g.iter().all(|&v| (v - 1.0).abs() < 1e-6));
    /// # Ok::<(), gpuprims::Error>(())
    /// ```
    pub fn gaussian_nd<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        sigmas: &[f64],
        truncate: f64,
        border: Border,
    ) -> Result<X::Output<T>> {
        if !(truncate.is_finite() && truncate >= 0.0) {
            return Err(Error::InvalidArgument {
                name: "truncate",
                reason: format!("a Gaussian is cut at a finite, non-negative number of sigmas, got {truncate}"),
            });
        }
        if let Some(s) = sigmas.iter().find(|s| !(s.is_finite() && **s >= 0.0)) {
            return Err(Error::InvalidArgument {
                name: "sigmas",
                reason: format!("sigmas {sigmas:?}: {s} is not a finite, non-negative width"),
            });
        }
        let sigmas = per_axis(x.dims().slice(), sigmas, 0.0, "sigmas")?;
        let passes: Vec<(usize, Vec<f64>)> = sigmas
            .iter()
            .enumerate()
            .filter(|&(_, &s)| s > 0.0)
            .map(|(axis, &s)| (axis, gaussian_kernel(s, truncate)))
            .collect();
        self.correlate_chain(x, &passes, border)
    }

    /// scipy's `sobel(x, axis, mode, cval)` on an n-D array, in the element type: `[−1, 0, 1]`
    /// along `axis`, then `[1, 2, 1]` along every other axis in axis order, each pass written in
    /// the element type. Unsigned elements saturate a negative pass result at 0, where scipy's C
    /// cast is undefined (it wraps on x86): take `f32` for signed derivatives, as the 2D
    /// [`Gpu::sobel`] gives `u8 → i16`.
    pub fn sobel_nd<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        axis: usize,
        border: Border,
    ) -> Result<X::Output<T>> {
        let d = x.dims().ndim();
        axis_split(x.dims().slice(), axis)?;
        let mut passes = vec![(axis, vec![-1.0, 0.0, 1.0])];
        passes.extend((0..d).filter(|&a| a != axis).map(|a| (a, vec![1.0, 2.0, 1.0])));
        self.correlate_chain(x, &passes, border)
    }
}
