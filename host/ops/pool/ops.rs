//! The pooling ops on [`Gpu`]: each plans, allocates its outputs and enqueues.

use super::*;
use crate::shape::pooled_dim;

// ---------------------------------------------------------------------------------------------
// Ops
// ---------------------------------------------------------------------------------------------

/// A pooling result on the device: values and, when asked, the argmax.
pub(super) type PoolOutputs<T, D> = (DeviceArray<T, D>, Option<DeviceArray<i64, D>>);

impl Gpu {
    /// Runs `shape`'s pooling of `x` into fresh outputs (and indices when asked).
    pub(super) fn run_pool<T, D, X>(
        &self,
        x: &X,
        instance: PoolInstance,
        shape: impl FnOnce(usize, usize, usize) -> PoolShape,
        want_indices: bool,
        variant: PoolVariant,
    ) -> Result<PoolOutputs<T, D>>
    where
        T: PoolElement,
        D: Dimension,
        X: Operand<Elem = T, Dim = D>,
    {
        let dim = x.dims();
        let (planes, h, w) = planes_and_size(dim.slice())?;
        let shape = shape(planes, h, w);
        let out_dim = pooled_dim(&dim, shape.output_size()?);
        let mut y = DeviceArray::<T, D>::uninit(self, out_dim.clone())?;
        let mut idx = if want_indices {
            Some(DeviceArray::<i64, D>::uninit(self, out_dim)?)
        } else {
            None
        };
        if let Some(input) = x.device(self)? {
            let plan = PoolPlan::<T>::new(self, instance, shape, variant)?;
            plan.enqueue(
                self,
                input.slice(),
                y.as_mut_slice(),
                idx.as_mut().map(|i| i.as_mut_slice()),
            )?;
        }
        Ok((y, idx))
    }

    /// Max pooling over the last two axes of `x` (PyTorch `F.max_pool2d`), `Auto` variant. The
    /// result has `x`'s leading axes and the output size of `p`.
    pub fn max_pool2d<T: PoolElement, X: Operand<Elem = T>>(&self, x: X, p: Pool2d) -> Result<X::Output<T>> {
        self.max_pool2d_with(x, p, PoolVariant::Auto)
    }

    /// [`Gpu::max_pool2d`] with a chosen rung of the ladder.
    pub fn max_pool2d_with<T: PoolElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        p: Pool2d,
        variant: PoolVariant,
    ) -> Result<X::Output<T>> {
        let (y, _) = self.run_pool(
            &x,
            T::MAX_INSTANCE,
            |n, h, w| PoolShape::max(n, h, w, p),
            false,
            variant,
        )?;
        X::finish(self, y)
    }

    /// Max pooling and the flat in-plane index (`row · w + col`, `i64`) of each maximum (PyTorch
    /// `return_indices=True`), `Auto` variant.
    pub fn max_pool2d_indices<T: PoolElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        p: Pool2d,
    ) -> Result<(X::Output<T>, X::Output<i64>)> {
        self.max_pool2d_indices_with(x, p, PoolVariant::Auto)
    }

    /// [`Gpu::max_pool2d_indices`] with a chosen rung of the ladder.
    pub fn max_pool2d_indices_with<T: PoolElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        p: Pool2d,
        variant: PoolVariant,
    ) -> Result<(X::Output<T>, X::Output<i64>)> {
        let (y, idx) = self.run_pool(&x, T::MAX_INSTANCE, |n, h, w| PoolShape::max(n, h, w, p), true, variant)?;
        let idx = idx.expect("indices were asked for");
        Ok((X::finish(self, y)?, X::finish(self, idx)?))
    }

    /// Average pooling over the last two axes of `x` (PyTorch `F.avg_pool2d`), `Auto` variant.
    pub fn avg_pool2d<T: AvgPoolElement, X: Operand<Elem = T>>(&self, x: X, p: AvgPool2d) -> Result<X::Output<T>> {
        self.avg_pool2d_with(x, p, PoolVariant::Auto)
    }

    /// [`Gpu::avg_pool2d`] with a chosen rung of the ladder.
    pub fn avg_pool2d_with<T: AvgPoolElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        p: AvgPool2d,
        variant: PoolVariant,
    ) -> Result<X::Output<T>> {
        let (y, _) = self.run_pool(
            &x,
            T::AVG_INSTANCE,
            |n, h, w| PoolShape::avg(n, h, w, p),
            false,
            variant,
        )?;
        X::finish(self, y)
    }
}
