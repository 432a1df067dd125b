//! The ops of a [`Gpus`]. Each names its reach along axis 0 (a [`Stencil`]: a 2D op on one image
//! reads rows above and below; on a batch of planes it reads none) and runs the one-device op on
//! every part through [`Gpus::map`]; the reductions combine one exact partial per device, in
//! device order, on the host.

use cudarc::driver::DeviceRepr;
use ndarray::{Array, ArrayBase, Data, Dimension};

use super::sharded::{Sharded, Stencil};
use super::{Gpus, on_device};
use crate::abi::reduce::Reducer;
use crate::array::DeviceArray;
use crate::border::Border;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::ops::filter2d::{Filter2dElement, SobelElement, gaussian_taps};
use crate::ops::reduce::{HostReducer, MeanVariance, ReduceElement, ReducePlan, ReduceVariant};
use crate::ops::window::{WindowElement, WindowFloat};

/// What the ops of a [`Gpus`] accept: a host `ndarray` (scattered across the devices with the
/// halo the op needs, the result gathered into an owned [`Array`]) or a [`Sharded`] array (used in
/// place, the result left sharded on the devices).
pub trait ShardOperand {
    /// The element type.
    type Elem: DeviceRepr + Clone + Send + Sync;
    /// The dimension.
    type Dim: Dimension;
    /// The result type for elements `U`: `Array<U, Self::Dim>` or `Sharded<U, Self::Dim>`.
    type Output<U: DeviceRepr + Clone + Send + Sync>;
    /// The operand's shape.
    fn dims(&self) -> Self::Dim;
    /// The operand sharded on `gpus` with at least `halo` rows of halo.
    #[doc(hidden)]
    fn sharded(&self, gpus: &Gpus, halo: usize) -> Result<Held<'_, Self::Elem, Self::Dim>>;
    /// Turns a sharded result into this operand's output form.
    #[doc(hidden)]
    fn finish<U: DeviceRepr + Clone + Send + Sync>(gpus: &Gpus, y: Sharded<U, Self::Dim>) -> Result<Self::Output<U>>;
}

/// A sharded operand: borrowed, or scattered for this op.
#[doc(hidden)]
pub enum Held<'a, T, D: Dimension> {
    Borrowed(&'a Sharded<T, D>),
    Owned(Sharded<T, D>),
}

impl<T, D: Dimension> std::ops::Deref for Held<'_, T, D> {
    type Target = Sharded<T, D>;
    fn deref(&self) -> &Sharded<T, D> {
        match self {
            Held::Borrowed(x) => x,
            Held::Owned(x) => x,
        }
    }
}

impl<T, S, D> ShardOperand for &ArrayBase<S, D>
where
    T: DeviceRepr + Clone + Send + Sync,
    S: Data<Elem = T>,
    D: Dimension,
{
    type Elem = T;
    type Dim = D;
    type Output<U: DeviceRepr + Clone + Send + Sync> = Array<U, D>;
    fn dims(&self) -> D {
        self.raw_dim()
    }
    fn sharded(&self, gpus: &Gpus, halo: usize) -> Result<Held<'_, T, D>> {
        gpus.scatter(*self, halo).map(Held::Owned)
    }
    fn finish<U: DeviceRepr + Clone + Send + Sync>(gpus: &Gpus, y: Sharded<U, D>) -> Result<Array<U, D>> {
        gpus.gather(&y)
    }
}

impl<T: DeviceRepr + Clone + Send + Sync, D: Dimension> ShardOperand for &Sharded<T, D> {
    type Elem = T;
    type Dim = D;
    type Output<U: DeviceRepr + Clone + Send + Sync> = Sharded<U, D>;
    fn dims(&self) -> D {
        self.raw_dim()
    }
    fn sharded(&self, _gpus: &Gpus, _halo: usize) -> Result<Held<'_, T, D>> {
        Ok(Held::Borrowed(self))
    }
    fn finish<U: DeviceRepr + Clone + Send + Sync>(_gpus: &Gpus, y: Sharded<U, D>) -> Result<Sharded<U, D>> {
        Ok(y)
    }
}

/// One device's partial of reducer `R`: its accumulator, its part's first element (when asked
/// for: the shift of the moments) and its length.
type Partial<R> = (<R as Reducer>::Acc, Option<<R as Reducer>::In>, usize);

/// The reach along axis 0 of an op over the last two axes whose window spans `rows` rows: on a
/// single image the rows themselves are split; on a batch (3+ axes) whole planes are.
fn plane_stencil(dims: &[usize], rows: usize, border: Border) -> Stencil {
    if dims.len() == 2 {
        Stencil::rows(rows / 2, border)
    } else {
        Stencil::POINTWISE
    }
}

impl Gpus {
    /// Runs the one-device op `f` on `x`'s parts with reach `stencil` and returns `x`'s output form.
    fn run<X, U, F>(&self, x: X, stencil: Stencil, f: F) -> Result<X::Output<U>>
    where
        X: ShardOperand,
        U: DeviceRepr + Clone + Send + Sync,
        F: Fn(&Gpu, &DeviceArray<X::Elem, X::Dim>) -> Result<DeviceArray<U, X::Dim>>,
    {
        let held = x.sharded(self, stencil.radius)?;
        let y = self.map(&held, stencil, f)?;
        X::finish(self, y)
    }

    /// [`Gpus::run`] for ops with two outputs.
    fn run2<X, U, F>(&self, x: X, stencil: Stencil, f: F) -> Result<(X::Output<U>, X::Output<U>)>
    where
        X: ShardOperand,
        U: DeviceRepr + Clone + Send + Sync,
        F: Fn(&Gpu, &DeviceArray<X::Elem, X::Dim>) -> Result<(DeviceArray<U, X::Dim>, DeviceArray<U, X::Dim>)>,
    {
        let held = x.sharded(self, stencil.radius)?;
        let mut ys = self.map_many(&held, stencil, |g, a| f(g, a).map(|(p, q)| vec![p, q]))?;
        let q = ys.pop().expect("two outputs");
        let p = ys.pop().expect("two outputs");
        Ok((X::finish(self, p)?, X::finish(self, q)?))
    }

    /// [`Gpu::dilate`] on every device: one image split into row bands (each with `window.0 / 2`
    /// rows of halo), or a batch split by planes. Bit-exact with one device.
    pub fn dilate<T: Filter2dElement, X: ShardOperand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<X::Output<T>> {
        let st = plane_stencil(x.dims().slice(), window.0, border);
        self.run(x, st, |g, a| g.dilate(a, window, border))
    }

    /// [`Gpu::erode`] on every device, split as [`Gpus::dilate`]. Bit-exact with one device.
    pub fn erode<T: Filter2dElement, X: ShardOperand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<X::Output<T>> {
        let st = plane_stencil(x.dims().slice(), window.0, border);
        self.run(x, st, |g, a| g.erode(a, window, border))
    }

    /// [`Gpu::gaussian3x3`] on every device, split as [`Gpus::dilate`]. Bit-exact with one device.
    pub fn gaussian3x3<T: Filter2dElement, X: ShardOperand<Elem = T>>(
        &self,
        x: X,
        border: Border,
    ) -> Result<X::Output<T>> {
        let st = plane_stencil(x.dims().slice(), 3, border);
        self.run(x, st, |g, a| g.gaussian3x3(a, border))
    }

    /// [`Gpu::gaussian`] on every device, split as [`Gpus::dilate`] (halo: the kernel's radius,
    /// `⌊4σ + 0.5⌋`). Bit-exact with one device.
    pub fn gaussian<T: Filter2dElement, X: ShardOperand<Elem = T>>(
        &self,
        x: X,
        sigma: f64,
        border: Border,
    ) -> Result<X::Output<T>> {
        let st = plane_stencil(x.dims().slice(), gaussian_taps(sigma)?.len(), border);
        self.run(x, st, |g, a| g.gaussian(a, sigma, border))
    }

    /// [`Gpu::sobel`] on every device, split as [`Gpus::dilate`]. Bit-exact with one device.
    pub fn sobel<T: SobelElement, X: ShardOperand<Elem = T>>(
        &self,
        x: X,
        axis: usize,
        border: Border,
    ) -> Result<X::Output<T::Out>>
    where
        T::Out: Send + Sync,
    {
        let st = plane_stencil(x.dims().slice(), 3, border);
        self.run(x, st, |g, a| g.sobel(a, axis, border))
    }

    /// [`Gpu::window_sum_sumsq`] on every device. Windows run along the last axis, so the split
    /// of a 2D or batched input cuts between rows and needs no halo; a 1D signal is split into runs
    /// with `width / 2` samples of halo. Integer inputs give the one-device bits; float sums
    /// along a split signal start their running sums at another sample (the bound of
    /// [`Gpu::window_sum_sumsq`]).
    #[allow(clippy::type_complexity)]
    pub fn window_sum_sumsq<F, X>(&self, x: X, width: usize, border: Border) -> Result<(X::Output<F>, X::Output<F>)>
    where
        X: ShardOperand<Elem: WindowElement>,
        F: WindowFloat<X::Elem> + Send + Sync,
    {
        let st = if x.dims().ndim() == 1 {
            Stencil::rows(width / 2, border)
        } else {
            Stencil::POINTWISE
        };
        self.run2(x, st, |g, a| g.window_sum_sumsq::<F, _>(a, width, border))
    }

    /// [`Gpu::local_mean_variance`] on every device, split as [`Gpus::dilate`].
    #[allow(clippy::type_complexity)]
    pub fn local_mean_variance<F, X>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<(X::Output<F>, X::Output<F>)>
    where
        X: ShardOperand<Elem: WindowElement>,
        F: WindowFloat<X::Elem> + Send + Sync,
    {
        let st = plane_stencil(x.dims().slice(), window.0, border);
        self.run2(x, st, |g, a| g.local_mean_variance::<F, _>(a, window, border))
    }

    /// Σx over every device: one partial per device (exact for integers, as [`Gpu::sum`]),
    /// combined in device order.
    pub fn sum<T: ReduceElement, X: ShardOperand<Elem = T>>(&self, x: X) -> Result<T::Sum> {
        let len = x.dims().size();
        if let Some(max) = T::SUM_EXACT_MAX_LEN
            && len > max
        {
            return Err(Error::TooManyElements { op: "sum", len, max });
        }
        let acc = self.partials::<T::SumR, X>(x, false)?.into_iter().map(|(a, _, _)| a);
        Ok(T::sum_out(acc.fold(T::SumR::identity(), T::SumR::combine)))
    }

    /// Σx² over every device (integers exact in 128 bits, as [`Gpu::sum_of_squares`]).
    pub fn sum_of_squares<T: ReduceElement, X: ShardOperand<Elem = T>>(&self, x: X) -> Result<T::SumSq> {
        let acc = self.partials::<T::SumSqR, X>(x, false)?.into_iter().map(|(a, _, _)| a);
        Ok(T::sumsq_out(acc.fold(T::SumSqR::identity(), T::SumSqR::combine)))
    }

    /// Smallest element over every device (NaN if any is NaN); [`Error::EmptyInput`] when empty.
    pub fn min<T: ReduceElement, X: ShardOperand<Elem = T>>(&self, x: X) -> Result<T> {
        let parts = self.partials::<T::MinR, X>(x, false)?;
        let acc = parts.into_iter().map(|(a, _, _)| a).reduce(T::MinR::combine);
        acc.ok_or(Error::EmptyInput { op: "min" })
    }

    /// Largest element over every device (NaN if any is NaN); [`Error::EmptyInput`] when empty.
    pub fn max<T: ReduceElement, X: ShardOperand<Elem = T>>(&self, x: X) -> Result<T> {
        let parts = self.partials::<T::MaxR, X>(x, false)?;
        let acc = parts.into_iter().map(|(a, _, _)| a).reduce(T::MaxR::combine);
        acc.ok_or(Error::EmptyInput { op: "max" })
    }

    /// Mean and population variance over every device: each device's (exact for integers) mean and
    /// variance, combined by Chan's pairwise formula in f64 (`M₂ = Σ nᵢ(vᵢ + (mᵢ − m)²)`), which
    /// agrees with [`Gpu::mean_variance`] to f64 rounding. [`Error::EmptyInput`] when empty.
    pub fn mean_variance<T: ReduceElement, X: ShardOperand<Elem = T>>(&self, x: X) -> Result<MeanVariance> {
        let parts = self.partials::<T::MeanVarR, X>(x, true)?;
        let n: usize = parts.iter().map(|&(_, _, n)| n).sum();
        if n == 0 {
            return Err(Error::EmptyInput { op: "mean_variance" });
        }
        let each: Vec<(MeanVariance, f64)> = parts
            .into_iter()
            .map(|(acc, first, len)| {
                let first = first.expect("partials read with their first elements");
                (T::moments_out(acc, first, len), len as f64)
            })
            .collect();
        let mean = each.iter().map(|(m, w)| m.mean * w).sum::<f64>() / n as f64;
        let m2: f64 = each
            .iter()
            .map(|(m, w)| w * (m.variance + (m.mean - mean).powi(2)))
            .sum();
        Ok(MeanVariance {
            mean,
            variance: m2 / n as f64,
        })
    }

    /// One partial of reducer `R` per non-empty part, with its length and, if `first`, the part's
    /// first element: every device's kernels enqueued first, then the results read back in
    /// device order.
    fn partials<R, X>(&self, x: X, first: bool) -> Result<Vec<Partial<R>>>
    where
        R: HostReducer<In: Send + Sync + Clone + Copy>,
        X: ShardOperand<Elem = R::In>,
    {
        let held = x.sharded(self, 0)?;
        let compact;
        let x: &Sharded<R::In, X::Dim> = if held.halo() > 0 {
            compact = held.with_halo(self, 0)?;
            &compact
        } else {
            &held
        };
        self.check(x)?;
        let mut plans = Vec::new();
        for (gpu, buf) in self.part_buffers(x) {
            if buf.is_empty() {
                continue;
            }
            let plan = (|| {
                let plan = ReducePlan::<R>::new(gpu, buf.len(), ReduceVariant::Auto)?;
                plan.enqueue(gpu, buf.as_slice())?;
                Ok(plan)
            })()
            .map_err(|e| on_device(gpu, e))?;
            plans.push((gpu, buf, plan));
        }
        plans
            .into_iter()
            .map(|(gpu, buf, plan)| {
                (|| {
                    let acc = plan.result(gpu)?;
                    let first = match first {
                        true => Some(gpu.stream().clone_dtoh(&buf.as_slice().slice(0..1))?[0]),
                        false => None,
                    };
                    Ok((acc, first, buf.len()))
                })()
                .map_err(|e| on_device(gpu, e))
            })
            .collect()
    }
}
