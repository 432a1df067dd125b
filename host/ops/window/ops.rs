//! The window-statistics ops on [`Gpu`]: each plans, allocates its outputs and enqueues.

use super::*;

impl Gpu {
    /// Window sums and sums of squares of `width` samples along the last axis of `x` (leading
    /// axes are a batch) as two images of floats `F` (f32 or f64: `window_sum_sumsq::<f32, _>`,
    /// or from the binding), `Auto` variant. Exact integer sums: [`Gpu::window_sum_sumsq_exact`].
    pub fn window_sum_sumsq<F, X>(&self, x: X, width: usize, border: Border) -> Result<(X::Output<F>, X::Output<F>)>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        self.window_sum_sumsq_with(x, width, border, WindowVariant::Auto)
    }

    /// [`Gpu::window_sum_sumsq`] with a chosen rung of the ladder.
    pub fn window_sum_sumsq_with<F, X>(
        &self,
        x: X,
        width: usize,
        border: Border,
        variant: WindowVariant,
    ) -> Result<(X::Output<F>, X::Output<F>)>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        self.row_sums::<F, F, X>(x, F::INSTANCE, width, border, variant)
    }

    /// Window sums and sums of squares of an integer `x`, exact (module docs: the types and the
    /// longest windows), `Auto` variant.
    #[allow(clippy::type_complexity)]
    pub fn window_sum_sumsq_exact<T: ExactElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        width: usize,
        border: Border,
    ) -> Result<(X::Output<T::Sum>, X::Output<T::SumSq>)> {
        self.window_sum_sumsq_exact_with(x, width, border, WindowVariant::Auto)
    }

    /// [`Gpu::window_sum_sumsq_exact`] with a chosen rung of the ladder.
    #[allow(clippy::type_complexity)]
    pub fn window_sum_sumsq_exact_with<T: ExactElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        width: usize,
        border: Border,
        variant: WindowVariant,
    ) -> Result<(X::Output<T::Sum>, X::Output<T::SumSq>)> {
        self.row_sums::<T::Sum, T::SumSq, X>(x, T::ACC_INSTANCE, width, border, variant)
    }

    /// Runs the row sums of `instance` (outputs `S`, `Q`) over `x` into fresh outputs.
    pub(super) fn row_sums<S, Q, X>(
        &self,
        x: X,
        instance: WindowInstance,
        width: usize,
        border: Border,
        variant: WindowVariant,
    ) -> Result<(X::Output<S>, X::Output<Q>)>
    where
        X: Operand<Elem: WindowElement>,
        S: DeviceRepr + Clone,
        Q: DeviceRepr + Clone,
    {
        let dim = x.dims();
        let (rows, n) = rows_and_len(dim.slice())?;
        check_side("width", width)?;
        let mut sum = DeviceArray::<S, X::Dim>::uninit(self, dim.clone())?;
        let mut sumsq = DeviceArray::<Q, X::Dim>::uninit(self, dim)?;
        if let Some(input) = x.device(self)? {
            let plan = RowPlan::<X::Elem>::for_instance(self, instance, rows, n, width, border, variant)?;
            plan.launch(self, input.slice(), sum.as_mut_slice(), Some(sumsq.as_mut_slice()))?;
        }
        Ok((X::finish(self, sum)?, X::finish(self, sumsq)?))
    }

    /// Runs a box plan of `kind` over `x` into fresh outputs (the second for two-output kinds).
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    pub(super) fn run_box<U0, U1, X>(
        &self,
        x: X,
        instance: WindowInstance,
        kind: BoxKind,
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<(X::Output<U0>, Option<X::Output<U1>>)>
    where
        X: Operand<Elem: WindowElement>,
        U0: DeviceRepr + Clone,
        U1: DeviceRepr + Clone,
    {
        let dim = x.dims();
        let shape = planes_and_size(dim.slice())?;
        check_side("window height", window.0)?;
        check_side("window width", window.1)?;
        let mut o0 = DeviceArray::<U0, X::Dim>::uninit(self, dim.clone())?;
        let mut o1 = if kind.two_outputs() {
            Some(DeviceArray::<U1, X::Dim>::uninit(self, dim)?)
        } else {
            None
        };
        if let Some(input) = x.device(self)? {
            let mut plan = BoxPasses::<X::Elem>::new(self, instance, kind, shape, window, border, variant)?;
            plan.enqueue(
                self,
                input.slice(),
                o0.as_mut_slice(),
                o1.as_mut().map(|o| o.as_mut_slice()),
            )?;
        }
        Ok((X::finish(self, o0)?, o1.map(|o| X::finish(self, o)).transpose()?))
    }

    /// Sums over `(h, w)` boxes of the last two axes of `x` (leading axes are a batch of planes)
    /// as floats `F`, `Auto` variant. Exact integer sums: [`Gpu::box_sum_exact`].
    pub fn box_sum<F, X>(&self, x: X, window: (usize, usize), border: Border) -> Result<X::Output<F>>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        self.box_sum_with(x, window, border, BoxVariant::Auto)
    }

    /// [`Gpu::box_sum`] with a chosen rung of the ladder.
    pub fn box_sum_with<F, X>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<X::Output<F>>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        Ok(self
            .run_box::<F, F, X>(x, F::INSTANCE, BoxKind::Sum, window, border, variant)?
            .0)
    }

    /// Exact sums over `(h, w)` boxes of an integer `x`, `Auto` variant.
    pub fn box_sum_exact<T: ExactElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<X::Output<T::Sum>> {
        self.box_sum_exact_with(x, window, border, BoxVariant::Auto)
    }

    /// [`Gpu::box_sum_exact`] with a chosen rung of the ladder.
    pub fn box_sum_exact_with<T: ExactElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<X::Output<T::Sum>> {
        let kind = BoxKind::Sum;
        Ok(self
            .run_box::<T::Sum, T::Sum, X>(x, T::ACC_INSTANCE, kind, window, border, variant)?
            .0)
    }

    /// Sums and sums of squares over `(h, w)` boxes of the last two axes as floats `F`, `Auto`.
    pub fn box_sum_sumsq<F, X>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<(X::Output<F>, X::Output<F>)>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        self.box_sum_sumsq_with(x, window, border, BoxVariant::Auto)
    }

    /// [`Gpu::box_sum_sumsq`] with a chosen rung of the ladder.
    pub fn box_sum_sumsq_with<F, X>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<(X::Output<F>, X::Output<F>)>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        let (o0, o1) = self.run_box::<F, F, X>(x, F::INSTANCE, BoxKind::SumSumSq, window, border, variant)?;
        Ok((o0, o1.expect("two-output kind")))
    }

    /// Exact sums and sums of squares over `(h, w)` boxes of an integer `x`, `Auto` variant.
    #[allow(clippy::type_complexity)]
    pub fn box_sum_sumsq_exact<T: ExactElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<(X::Output<T::Sum>, X::Output<T::SumSq>)> {
        self.box_sum_sumsq_exact_with(x, window, border, BoxVariant::Auto)
    }

    /// [`Gpu::box_sum_sumsq_exact`] with a chosen rung of the ladder.
    #[allow(clippy::type_complexity)]
    pub fn box_sum_sumsq_exact_with<T: ExactElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<(X::Output<T::Sum>, X::Output<T::SumSq>)> {
        let kind = BoxKind::SumSumSq;
        let (o0, o1) = self.run_box::<T::Sum, T::SumSq, X>(x, T::ACC_INSTANCE, kind, window, border, variant)?;
        Ok((o0, o1.expect("two-output kind")))
    }

    /// Local mean and population variance over `(h, w)` boxes of the last two axes (variance
    /// clamped at 0) as floats `F`, `Auto` variant.
    pub fn local_mean_variance<F, X>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<(X::Output<F>, X::Output<F>)>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        self.local_mean_variance_with(x, window, border, BoxVariant::Auto)
    }

    /// [`Gpu::local_mean_variance`] with a chosen rung of the ladder.
    pub fn local_mean_variance_with<F, X>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<(X::Output<F>, X::Output<F>)>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        let (o0, o1) = self.run_box::<F, F, X>(x, F::INSTANCE, BoxKind::MeanVar, window, border, variant)?;
        Ok((o0, o1.expect("two-output kind")))
    }

    /// Local standard deviation (population) over `(h, w)` boxes of the last two axes as floats
    /// `F`, `Auto` variant.
    pub fn local_std<F, X>(&self, x: X, window: (usize, usize), border: Border) -> Result<X::Output<F>>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        self.local_std_with(x, window, border, BoxVariant::Auto)
    }

    /// [`Gpu::local_std`] with a chosen rung of the ladder.
    pub fn local_std_with<F, X>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<X::Output<F>>
    where
        X: Operand<Elem: WindowElement>,
        F: WindowFloat<X::Elem>,
    {
        Ok(self
            .run_box::<F, F, X>(x, F::INSTANCE, BoxKind::Std, window, border, variant)?
            .0)
    }
}
