//! The typed public plans: [`WindowPlan`] (row sums into `S`, `Q`) and [`BoxPlan`] (local mean
//! and variance into `F`).

use super::*;

/// A prepared row-window launch — sums and sums of squares of `width` samples along rows —
/// writing `S` and `Q` outputs: `(F, F)` for a [`WindowFloat`] `F` ([`WindowPlan::new`]), or the
/// exact pair of an [`ExactElement`] ([`WindowPlan::exact`]). Reusable across inputs of its
/// shape (the examples and the bench time [`WindowPlan::enqueue`] alone).
pub struct WindowPlan<T: WindowElement, S, Q> {
    pub(super) row: RowPlan<T>,
    pub(super) _out: PhantomData<fn() -> (S, Q)>,
}

impl<T: WindowElement, F: WindowFloat<T>> WindowPlan<T, F, F> {
    /// Plans window sums of `width` samples over `rows ≥ 1` rows of `n ≥ 1` samples, as floats.
    pub fn new(
        gpu: &Gpu,
        (rows, n): (usize, usize),
        width: usize,
        border: Border,
        variant: WindowVariant,
    ) -> Result<Self> {
        let row = RowPlan::for_instance(gpu, F::INSTANCE, rows, n, width, border, variant)?;
        Ok(WindowPlan { row, _out: PhantomData })
    }
}

impl<T: ExactElement> WindowPlan<T, T::Sum, T::SumSq> {
    /// Plans exact window sums of `width` samples over `rows ≥ 1` rows of `n ≥ 1` samples.
    pub fn exact(
        gpu: &Gpu,
        (rows, n): (usize, usize),
        width: usize,
        border: Border,
        variant: WindowVariant,
    ) -> Result<Self> {
        let row = RowPlan::for_instance(gpu, T::ACC_INSTANCE, rows, n, width, border, variant)?;
        Ok(WindowPlan { row, _out: PhantomData })
    }
}

impl<T: WindowElement, S: DeviceRepr, Q: DeviceRepr> WindowPlan<T, S, Q> {
    /// The rung this plan runs (`Auto` resolved).
    pub fn variant(&self) -> WindowVariant {
        self.row.variant()
    }

    /// Blocks in the grid.
    pub fn grid(&self) -> u32 {
        self.row.grid()
    }

    /// Enqueues the window sums of `x` into `sum` and `sumsq` (their first `rows · n` elements,
    /// C order). Asynchronous.
    pub fn enqueue(&self, gpu: &Gpu, x: &CudaSlice<T>, sum: &mut CudaSlice<S>, sumsq: &mut CudaSlice<Q>) -> Result<()> {
        self.row.launch(gpu, x, sum, Some(sumsq))
    }
}

/// A prepared local mean and variance launch over `(h, w)` boxes of `planes` planes of
/// `height × width`, writing `F` outputs: one fused kernel or the separable passes with their
/// scratch (the variant decides). Reusable across inputs of its shape.
pub struct BoxPlan<T: WindowElement, F> {
    pub(super) passes: BoxPasses<T>,
    pub(super) _out: PhantomData<fn() -> F>,
}

impl<T: WindowElement, F: WindowFloat<T>> BoxPlan<T, F> {
    /// Plans local mean and variance of `(h, w)` boxes over `(planes, height, width)`.
    pub fn new(
        gpu: &Gpu,
        shape: (usize, usize, usize),
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<Self> {
        let passes = BoxPasses::new(gpu, F::INSTANCE, BoxKind::MeanVar, shape, window, border, variant)?;
        Ok(BoxPlan {
            passes,
            _out: PhantomData,
        })
    }

    /// The rung this plan runs (`Auto` resolved).
    pub fn variant(&self) -> BoxVariant {
        self.passes.variant()
    }

    /// Enqueues mean and variance of `x` into `mean` and `var`. Asynchronous.
    pub fn enqueue(
        &mut self,
        gpu: &Gpu,
        x: &CudaSlice<T>,
        mean: &mut CudaSlice<F>,
        var: &mut CudaSlice<F>,
    ) -> Result<()> {
        self.passes.enqueue(gpu, x, mean, Some(var))
    }
}
