//! The 2D filter ops on [`Gpu`]: each plans, allocates its outputs and enqueues.

use super::*;

impl Gpu {
    /// Runs a plan built for `x`'s shape into a fresh output.
    pub(super) fn run_filter2d<I, O, D, X>(
        &self,
        x: &X,
        plan: impl FnOnce(Filter2dShape) -> Result<Filter2dPlan<I, O>>,
    ) -> Result<DeviceArray<O, D>>
    where
        I: Filter2dElement,
        O: DeviceRepr + Clone,
        D: Dimension,
        X: Operand<Elem = I, Dim = D>,
    {
        let dim = x.dims();
        let (planes, h, w) = planes_and_size(dim.slice())?;
        let plan = plan(Filter2dShape { planes, h, w })?;
        let mut y = DeviceArray::<O, D>::uninit(self, dim)?;
        if let Some(input) = x.device(self)? {
            plan.enqueue(self, input.slice(), y.as_mut_slice())?;
        }
        Ok(y)
    }

    /// Grey dilation: the maximum over a `(h, w)` rectangle (scipy `grey_dilation(x, size=(h, w))`,
    /// OpenCV `dilate` with a rectangle), over the last two axes, `Auto` variant.
    ///
    /// ```no_run
    /// # use gpuprims::{Gpu, Border};
    /// let gpu = Gpu::new()?;
    /// let img = ndarray::Array2::<u8>::from_shape_fn((480, 640), |(y, x)| ((x * y) % 251) as u8);
    /// let d = gpu.dilate(&img, (5, 5), Border::Reflect)?;
    /// assert!(d.iter().zip(img.iter()).all(|(d, x)| d >= x));
    /// # Ok::<(), gpuprims::Error>(())
    /// ```
    pub fn dilate<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<X::Output<T>> {
        self.dilate_with(x, window, border, MorphVariant::Auto)
    }

    /// [`Gpu::dilate`] with a chosen rung of the ladder.
    pub fn dilate_with<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: MorphVariant,
    ) -> Result<X::Output<T>> {
        let y = self.run_filter2d(&x, |s| Filter2dPlan::dilate(self, s, window, border, variant))?;
        X::finish(self, y)
    }

    /// Grey erosion: the minimum over a `(h, w)` rectangle (scipy `grey_erosion(x, size=(h, w))`),
    /// `Auto` variant.
    pub fn erode<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<X::Output<T>> {
        self.erode_with(x, window, border, MorphVariant::Auto)
    }

    /// [`Gpu::erode`] with a chosen rung of the ladder.
    pub fn erode_with<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
        variant: MorphVariant,
    ) -> Result<X::Output<T>> {
        let y = self.run_filter2d(&x, |s| Filter2dPlan::erode(self, s, window, border, variant))?;
        X::finish(self, y)
    }

    /// Morphological gradient, dilation − erosion (scipy `morphological_gradient(x, size=…)`).
    pub fn morphological_gradient<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<X::Output<T>> {
        let mut dil = self.run_filter2d(&x, |s| {
            Filter2dPlan::dilate(self, s, window, border, MorphVariant::Auto)
        })?;
        let ero = self.run_filter2d(&x, |s| Filter2dPlan::erode(self, s, window, border, MorphVariant::Auto))?;
        self.subtract_in_place(&mut dil, &ero)?;
        X::finish(self, dil)
    }

    /// `a ← a − b` elementwise (the morphological gradient's dilation minus erosion; never
    /// negative there, so no type wraps).
    pub(crate) fn subtract_in_place<T: Filter2dElement, D: Dimension>(
        &self,
        a: &mut DeviceArray<T, D>,
        b: &DeviceArray<T, D>,
    ) -> Result<()> {
        let n = a.len();
        check_buffers([("b", b.len(), n)])?;
        if n > 0 {
            let inst = T::MAX as usize;
            let func = self.kernel(self.family::<Filter2dKernels>()?.morph[inst][MorphKernel::Difference as usize])?;
            let grid = elementwise_grid(n);
            let stream = self.stream();
            let a_ptr = a.as_slice().device_ptr(stream).0;
            let n64 = n as u64;
            let _order = self.order_after([a.as_slice().stream(), b.as_slice().stream()])?;
            let mut l = func.launch_on(self)?;
            l.arg(&a_ptr).arg(b.as_slice()).arg(a.as_mut_slice()).arg(&n64);
            // SAFETY: `(a, b: *const T, y: *mut T, n: u64)`, y = a − b in place over `a` (`a` is
            // its address: each thread reads element i before writing it); both hold n elements.
            unsafe { l.launch(cfg(grid, BLOCK_THREADS, 0)) }?;
        }
        Ok(())
    }

    /// Grey opening, erosion then dilation (scipy `grey_opening(x, size=…)`).
    pub fn opening<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<X::Output<T>> {
        let e = self.run_filter2d(&x, |s| Filter2dPlan::erode(self, s, window, border, MorphVariant::Auto))?;
        let y = self.run_filter2d(&&e, |s| {
            Filter2dPlan::dilate(self, s, window, border, MorphVariant::Auto)
        })?;
        X::finish(self, y)
    }

    /// Grey closing, dilation then erosion (scipy `grey_closing(x, size=…)`).
    pub fn closing<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        window: (usize, usize),
        border: Border,
    ) -> Result<X::Output<T>> {
        let d = self.run_filter2d(&x, |s| {
            Filter2dPlan::dilate(self, s, window, border, MorphVariant::Auto)
        })?;
        let y = self.run_filter2d(&&d, |s| {
            Filter2dPlan::erode(self, s, window, border, MorphVariant::Auto)
        })?;
        X::finish(self, y)
    }

    /// The classic 3 × 3 Gaussian `[1 2 1]ᵀ[1 2 1] / 16`: integers `(Σ + 8) >> 4` of the exact sum
    /// (bit-exact), f32 `Σ / 16`. `Auto` variant.
    pub fn gaussian3x3<T: Filter2dElement, X: Operand<Elem = T>>(&self, x: X, border: Border) -> Result<X::Output<T>> {
        self.gaussian3x3_with(x, border, Filter2dVariant::Auto)
    }

    /// [`Gpu::gaussian3x3`] with a chosen rung.
    pub fn gaussian3x3_with<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        border: Border,
        variant: Filter2dVariant,
    ) -> Result<X::Output<T>> {
        let y = self.run_filter2d(&x, |s| Filter2dPlan::gaussian3x3(self, s, border, variant))?;
        X::finish(self, y)
    }

    /// [`Gpu::gaussian3x3`] dividing by 16 as `rounding` says: [`Rounding::Truncate`] reproduces
    /// the classic tutorial's `Σ >> 4` bit for bit. `Auto` variant.
    pub fn gaussian3x3_rounding<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        border: Border,
        rounding: Rounding,
    ) -> Result<X::Output<T>> {
        let variant = Filter2dVariant::Auto;
        let y = self.run_filter2d(&x, |s| {
            Filter2dPlan::gaussian3x3_rounding(self, s, border, rounding, variant)
        })?;
        X::finish(self, y)
    }

    /// Gaussian filter with scipy's `gaussian_filter(x, sigma, mode, cval, truncate=4.0)` taps,
    /// applied down the columns then along the rows (integers: each pass truncated, as scipy).
    pub fn gaussian<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        sigma: f64,
        border: Border,
    ) -> Result<X::Output<T>> {
        let taps = gaussian_taps(sigma)?;
        self.separable2d(x, &taps, &taps, border)
    }

    /// Separable correlation: `ky` along axis −2 (scipy `correlate1d(x, ky, axis=0)`), then `kx`
    /// along axis −1, each pass extending its input by `border` (scipy's `gaussian_filter`/`sobel`
    /// order and semantics). Taps are centred at `len / 2`.
    pub fn separable2d<T: Filter2dElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        ky: &[f64],
        kx: &[f64],
        border: Border,
    ) -> Result<X::Output<T>> {
        let y = self.run_filter2d(&x, |s| Filter2dPlan::separable(self, s, ky, kx, border))?;
        X::finish(self, y)
    }

    /// Sobel derivative along `axis` (0: rows, i.e. down the columns; 1: columns), scipy's
    /// `sobel(x, axis)` kernel and sign (`[-1 0 1]` along the axis, `[1 2 1]` across). `u8` gives
    /// the exact `i16`; `f32` gives `f32`. `Auto` variant.
    ///
    /// One difference from scipy: under `Border::Constant(v)` with `v ≠ 0`, scipy applies the
    /// constant again to its first 1D pass's result, gpuprims extends the image once (the 2D
    /// definition); the outputs next to the border differ. `Zero` and the other modes agree.
    pub fn sobel<T: SobelElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        axis: usize,
        border: Border,
    ) -> Result<X::Output<T::Out>> {
        self.sobel_with(x, axis, border, Filter2dVariant::Auto)
    }

    /// [`Gpu::sobel`] with a chosen rung.
    pub fn sobel_with<T: SobelElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        axis: usize,
        border: Border,
        variant: Filter2dVariant,
    ) -> Result<X::Output<T::Out>> {
        let y = self.run_filter2d(&x, |s| Filter2dPlan::sobel(self, s, axis, border, variant))?;
        X::finish(self, y)
    }

    /// Gradient magnitude `√(sobel(x, 0)² + sobel(x, 1)²)` in f32 (`np.hypot` of scipy's two Sobel
    /// images).
    pub fn sobel_magnitude<T: SobelElement, X: Operand<Elem = T>>(
        &self,
        x: X,
        border: Border,
    ) -> Result<X::Output<f32>> {
        let g0 = self.run_filter2d(&x, |s| Filter2dPlan::sobel(self, s, 0, border, Filter2dVariant::Auto))?;
        let g1 = self.run_filter2d(&x, |s| Filter2dPlan::sobel(self, s, 1, border, Filter2dVariant::Auto))?;
        let mut y = DeviceArray::<f32, X::Dim>::uninit(self, x.dims())?;
        let n = y.len();
        if n > 0 {
            let func = self.kernel(self.family::<Filter2dKernels>()?.magnitude[T::MAGNITUDE])?;
            let grid = elementwise_grid(n);
            let n64 = n as u64;
            let mut b = func.launch_on(self)?;
            b.arg(g0.as_slice()).arg(g1.as_slice()).arg(y.as_mut_slice()).arg(&n64);
            // SAFETY: `(a, b: *const T::Out, y: *mut f32, n: u64)`; all hold n elements.
            unsafe { b.launch(cfg(grid, BLOCK_THREADS, 0)) }?;
        }
        X::finish(self, y)
    }

    /// 2D correlation with a small `f32` kernel (scipy `correlate(x, kernel)`, centred at
    /// `(kh/2, kw/2)`), taps in the constant bank (at most 16384). `Auto` variant.
    pub fn correlate2d<X: Operand<Elem = f32>>(
        &self,
        x: X,
        kernel: ArrayView2<f32>,
        border: Border,
    ) -> Result<X::Output<f32>> {
        self.correlate2d_with(x, kernel, border, Filter2dVariant::Auto)
    }

    /// [`Gpu::correlate2d`] with a chosen rung.
    pub fn correlate2d_with<X: Operand<Elem = f32>>(
        &self,
        x: X,
        kernel: ArrayView2<f32>,
        border: Border,
        variant: Filter2dVariant,
    ) -> Result<X::Output<f32>> {
        let y = self.run_filter2d(&x, |s| Filter2dPlan::correlate(self, s, kernel, border, variant))?;
        X::finish(self, y)
    }
}
