//! Linear plans: the 3 × 3 Gaussian, Sobel, 2D correlation and separable passes, with their
//! taps (scipy's Gaussian taps and symmetry codes).

use super::*;

impl<T: Filter2dElement> Filter2dPlan<T, T> {
    /// Plans [`Gpu::gaussian3x3`].
    pub fn gaussian3x3(gpu: &Gpu, shape: Filter2dShape, border: Border, variant: Filter2dVariant) -> Result<Self> {
        Self::gaussian3x3_rounding(gpu, shape, border, Rounding::HalfUp, variant)
    }

    /// Plans [`Gpu::gaussian3x3_rounding`]. Truncation runs the 2D-taps rungs (`Auto`: the
    /// shared tile); the row-vector and word-tile rungs round half up and refuse it.
    pub fn gaussian3x3_rounding(
        gpu: &Gpu,
        shape: Filter2dShape,
        border: Border,
        rounding: Rounding,
        variant: Filter2dVariant,
    ) -> Result<Self> {
        let taps = [1, 2, 1, 2, 4, 2, 1, 2, 1];
        let k = gpu.family::<Filter2dKernels>()?;
        let (linear, fixed) = (&k.linear[T::GAUSS_LINEAR as usize], k.fixed3[T::GAUSS_FIXED as usize]);
        let (variant, shift) = match (rounding, T::INTEGER, variant) {
            (Rounding::HalfUp, _, v) | (Rounding::Truncate, false, v) => (v, 4),
            (Rounding::Truncate, true, Filter2dVariant::RowVector | Filter2dVariant::WordTile) => {
                return Err(Error::Unsupported {
                    variant: variant.name(),
                    reason: "rounds half up; the truncating Gaussian runs one-pixel, multi-pixel or shared-tile".into(),
                });
            }
            (Rounding::Truncate, true, Filter2dVariant::Auto) => (Filter2dVariant::SharedTile, 4 | SHIFT_TRUNCATE),
            (Rounding::Truncate, true, v) => (v, 4 | SHIFT_TRUNCATE),
        };
        fixed3_plan::<T, T>(
            gpu,
            shape,
            border,
            variant,
            &taps,
            shift,
            linear,
            (fixed, WordTile::gauss),
        )
    }

    /// Plans [`Gpu::separable2d`]: `ky` down the columns, then `kx` along the rows — in one
    /// kernel through shared memory where both are [`pass_runs`] taps (symmetric or
    /// antisymmetric, radius ≤ 8: the Gaussians, Sobel and Prewitt; the intermediate image is
    /// neither written nor read back), else as [`Filter2dPlan::separable_passes`]. Both give the
    /// same bits.
    pub fn separable(gpu: &Gpu, s: Filter2dShape, ky: &[f64], kx: &[f64], border: Border) -> Result<Self> {
        let fused = pass_runs(ky) && pass_runs(kx);
        Self::build(gpu, s, &[(ky, Axis2d::Columns), (kx, Axis2d::Rows)], border, fused)
    }

    /// [`Filter2dPlan::separable`] as two passes through a scratch image, whatever the taps (the
    /// fused kernel's baseline).
    pub fn separable_passes(gpu: &Gpu, s: Filter2dShape, ky: &[f64], kx: &[f64], border: Border) -> Result<Self> {
        Self::passes(gpu, s, &[(ky, Axis2d::Columns), (kx, Axis2d::Rows)], border)
    }

    /// Plans one separable pass: `taps` (centred at `len / 2`) down the columns or along the rows,
    /// scipy's `NI_Correlate1D` to the bit, the result written in `T` (integers truncated). The
    /// n-D ops run it along any axis of an array seen as `(outer, n, inner)` planes.
    pub(crate) fn pass(gpu: &Gpu, s: Filter2dShape, taps: &[f64], along: Axis2d, border: Border) -> Result<Self> {
        Self::passes(gpu, s, &[(taps, along)], border)
    }

    /// One or two separable passes, each from the last one's result (through the scratch image),
    /// their taps one after the other in the plan's constant-bank content.
    fn passes(gpu: &Gpu, s: Filter2dShape, passes: &[(&[f64], Axis2d)], border: Border) -> Result<Self> {
        Self::build(gpu, s, passes, border, false)
    }

    /// The launches of [`Filter2dPlan::passes`]; `fused`: a column pass and a row pass of
    /// [`pass_runs`] taps as one launch of the tile kernel.
    fn build(gpu: &Gpu, s: Filter2dShape, passes: &[(&[f64], Axis2d)], border: Border, fused: bool) -> Result<Self> {
        check_shape(s)?;
        for &(k, along) in passes {
            let name = match along {
                Axis2d::Columns => "ky",
                Axis2d::Rows => "kx",
            };
            if k.is_empty() {
                return Err(Error::InvalidArgument {
                    name,
                    reason: "a 1D kernel needs at least one tap".into(),
                });
            }
            if let Some(t) = k.iter().find(|t| !t.is_finite()) {
                return Err(Error::InvalidArgument {
                    name,
                    reason: format!("taps must be finite, got {t}"),
                });
            }
        }
        let taps: usize = passes.iter().map(|(k, _)| k.len()).sum();
        if taps * 8 > crate::abi::CONSTANT_BANK_BYTES {
            return Err(Error::TooManyTaps {
                taps,
                max: crate::abi::CONSTANT_BANK_BYTES / 8,
            });
        }
        let extent = |along: Axis2d| passes.iter().find(|p| p.1 == along).map_or(1, |(k, _)| k.len());
        let window = (extent(Axis2d::Columns), extent(Axis2d::Rows));
        check_window(window)?;
        let bytes: Vec<u8> = passes
            .iter()
            .flat_map(|(k, _)| k.iter())
            .flat_map(|t| t.to_le_bytes())
            .collect();
        let fs = &gpu.family::<Filter2dKernels>()?.passes[T::PASS as usize];
        let base = args::<T>(s, window, (window.0 / 2, window.1 / 2), border);
        // A column-pass thread computes PASS_RUN consecutive rows (kernels-gpu's correlate_run);
        // a row-run thread PASS_RUN consecutive columns; a plain row-pass thread one output.
        let launch = |k: &[f64], along: Axis2d| -> Result<(usize, LaunchConfig)> {
            Ok(match along {
                Axis2d::Columns => (
                    0,
                    cfg(tiles(s, 32, 8 * PASS_RUN as usize, "separable")?, BLOCK_THREADS, 0),
                ),
                Axis2d::Rows if pass_runs(k) => {
                    let grid = tiles(s, 32 * PASS_RUN as usize, PASS_ROW_WARPS as usize, "separable")?;
                    (2, cfg(grid, 32 * PASS_ROW_WARPS, PASS_ROW_SHARED_BYTES as u64))
                }
                Axis2d::Rows => (1, cfg(tiles(s, 32, 8, "separable")?, BLOCK_THREADS, 0)),
            })
        };
        if fused {
            let mut a = base;
            a.shift = tile_symmetries(symmetry(passes[0].0), symmetry(passes[1].0));
            let grid = tiles(s, PASS_TILE_W as usize, PASS_TILE_H as usize, "separable")?;
            let stage = Stage {
                func: gpu.kernel(fs[3])?.clone(),
                cfg: cfg(grid, BLOCK_THREADS, PASS_TILE_SHARED_BYTES as u64),
                args: a,
                from: Buf::Input,
                to: Buf::Output,
                unaligned: None,
            };
            return Self::new(gpu, s, vec![stage], Some(&bytes), Filter2dPlanVariant::SeparableTile);
        }
        let last = passes.len() - 1;
        let mut offset = 0;
        let mut stages = Vec::with_capacity(passes.len());
        for (i, &(k, along)) in passes.iter().enumerate() {
            let mut a = base;
            a.tap_offset = offset as u32;
            a.shift = symmetry(k);
            offset += k.len() * 8;
            let (kernel, cfg) = launch(k, along)?;
            stages.push(Stage {
                func: gpu.kernel(fs[kernel])?.clone(),
                cfg,
                args: a,
                from: if i == 0 { Buf::Input } else { Buf::Scratch },
                to: if i == last { Buf::Output } else { Buf::Scratch },
                unaligned: None,
            });
        }
        Self::new(gpu, s, stages, Some(&bytes), Filter2dPlanVariant::Separable)
    }
}

/// Which of a plane's two axes a separable pass runs along.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Axis2d {
    /// Down the columns (axis −2).
    Columns = 0,
    /// Along the rows (axis −1).
    Rows = 1,
}

impl<T: SobelElement> Filter2dPlan<T, T::Out> {
    /// Plans [`Gpu::sobel`] along `axis` (0: down the columns, 1: along the rows).
    pub fn sobel(
        gpu: &Gpu,
        shape: Filter2dShape,
        axis: usize,
        border: Border,
        variant: Filter2dVariant,
    ) -> Result<Self> {
        let taps: [i32; 9] = match axis {
            0 => [-1, -2, -1, 0, 0, 0, 1, 2, 1],
            1 => [-1, 0, 1, -2, 0, 2, -1, 0, 1],
            _ => {
                return Err(Error::InvalidArgument {
                    name: "axis",
                    reason: format!("a 2D Sobel filter differentiates along axis 0 or 1, got {axis}"),
                });
            }
        };
        let k = gpu.family::<Filter2dKernels>()?;
        fixed3_plan::<T, T::Out>(
            gpu,
            shape,
            border,
            variant,
            &taps,
            0,
            &k.linear[T::LINEAR as usize],
            (
                k.fixed3[T::FIXED[axis] as usize],
                [WordTile::sobel0, WordTile::sobel1][axis],
            ),
        )
    }
}

impl Filter2dPlan<f32, f32> {
    /// Plans [`Gpu::correlate2d`] with `kernel` (row-major `kh × kw`, f32 taps in the constant
    /// bank: at most 16384).
    pub fn correlate(
        gpu: &Gpu,
        s: Filter2dShape,
        kernel: ArrayView2<f32>,
        border: Border,
        variant: Filter2dVariant,
    ) -> Result<Self> {
        let (kh, kw) = kernel.dim();
        check_window((kh, kw))?;
        check_shape(s)?;
        let max = crate::abi::CONSTANT_BANK_BYTES / 4;
        if kh * kw > max {
            return Err(Error::TooManyTaps { taps: kh * kw, max });
        }
        if let Some(t) = kernel.iter().find(|t| !t.is_finite()) {
            return Err(Error::InvalidArgument {
                name: "kernel",
                reason: format!("taps must be finite, got {t}"),
            });
        }
        let bytes: Vec<u8> = kernel.iter().flat_map(|t| t.to_le_bytes()).collect();
        let fs = &gpu.family::<Filter2dKernels>()?.linear[LinearInstance::f32_f32 as usize];
        let v = match variant {
            Filter2dVariant::Auto => {
                if tile_launch::<f32>(gpu, s, (kh, kw), false, "").is_ok() {
                    Filter2dVariant::SharedTile
                } else {
                    Filter2dVariant::MultiPixel
                }
            }
            Filter2dVariant::RowVector | Filter2dVariant::WordTile => {
                return Err(Error::Unsupported {
                    variant: variant.name(),
                    reason: "runs the fixed 3 × 3 filters (gaussian3x3, sobel) only".into(),
                });
            }
            v => v,
        };
        let stage = taps2d_stage::<f32>(gpu, s, (kh, kw), border, v, fs, 0)?;
        Self::new(gpu, s, vec![stage], Some(&bytes), Filter2dPlanVariant::Linear(v))
    }
}

/// The one launch of a 2D-taps rung (`OnePixel`, `MultiPixel`, `SharedTile`).
pub(super) fn taps2d_stage<T: Filter2dElement>(
    gpu: &Gpu,
    s: Filter2dShape,
    (kh, kw): (usize, usize),
    border: Border,
    v: Filter2dVariant,
    fs: &[KernelId; 3],
    shift: u32,
) -> Result<Stage<T>> {
    let mut a = args::<T>(s, (kh, kw), (kh / 2, kw / 2), border);
    a.shift = shift;
    let m = MULTI_PIXEL as usize;
    let (i, c) = match v {
        Filter2dVariant::OnePixel => (0, cfg(tiles(s, 32, 8, v.name())?, BLOCK_THREADS, 0)),
        Filter2dVariant::MultiPixel => (1, cfg(tiles(s, 32 * m, 8 * m, v.name())?, BLOCK_THREADS, 0)),
        Filter2dVariant::SharedTile => (2, tile_launch::<T>(gpu, s, (kh, kw), false, "the shared tile")?),
        _ => unreachable!("callers resolve the fixed rungs"),
    };
    Ok(Stage {
        func: gpu.kernel(fs[i])?.clone(),
        cfg: c,
        args: a,
        from: Buf::Input,
        to: Buf::Output,
        unaligned: None,
    })
}

/// A fixed 3 × 3 filter's plan: its integer taps for the 2D-taps rungs (divided by `2^shift`;
/// f32 images get the taps scaled by `2^−shift`), `fixed` = the row-vector and the word-tile
/// kernels for those rungs (`Auto`: word tile for u8, row vector otherwise).
#[allow(clippy::too_many_arguments)]
pub(super) fn fixed3_plan<I: Filter2dElement, O: DeviceRepr>(
    gpu: &Gpu,
    s: Filter2dShape,
    border: Border,
    variant: Filter2dVariant,
    taps: &[i32; 9],
    shift: u32,
    linear: &[KernelId; 3],
    (fixed, words): (KernelId, WordTile),
) -> Result<Filter2dPlan<I, O>> {
    check_shape(s)?;
    let v = match variant {
        Filter2dVariant::Auto if I::WORD_TILE => Filter2dVariant::WordTile,
        Filter2dVariant::Auto => Filter2dVariant::RowVector,
        v => v,
    };
    if v == Filter2dVariant::WordTile {
        let stage = word_tile_stage::<I>(gpu, words, s, 3, border)?;
        return Filter2dPlan::new(gpu, s, vec![stage], None, Filter2dPlanVariant::Linear(v));
    }
    if v == Filter2dVariant::RowVector {
        let (c, tiles, strip, vector_rows) = row_vector_launch::<I>(gpu, s)?;
        let mut a = args::<I>(s, (3, 3), (1, 1), border);
        a.strip = strip;
        a.vector_rows = vector_rows;
        a.tiles = tiles;
        let stage = Stage {
            func: gpu.kernel(fixed)?.clone(),
            cfg: c,
            args: a,
            from: Buf::Input,
            to: Buf::Output,
            unaligned: None,
        };
        return Filter2dPlan::new(gpu, s, vec![stage], None, Filter2dPlanVariant::Linear(v));
    }
    let bytes: Vec<u8> = if I::INTEGER {
        taps.iter().flat_map(|t| t.to_le_bytes()).collect()
    } else {
        let scale = 1.0 / (1u32 << (shift & !SHIFT_TRUNCATE)) as f32;
        taps.iter().flat_map(|&t| (t as f32 * scale).to_le_bytes()).collect()
    };
    let shift = if I::INTEGER { shift } else { 0 };
    let stage = taps2d_stage::<I>(gpu, s, (3, 3), border, v, linear, shift)?;
    Filter2dPlan::new(gpu, s, vec![stage], Some(&bytes), Filter2dPlanVariant::Linear(v))
}

// ---------------------------------------------------------------------------------------------
// Ops
// ---------------------------------------------------------------------------------------------

/// scipy's Gaussian taps for `truncate` (`_gaussian_kernel1d`): radius `⌊truncate · σ + 0.5⌋`,
/// `exp(−x²/2σ²)` normalized to sum 1 in numpy's summation order. The exponentials come from the
/// C library; numpy's SIMD `exp` agrees with it on most arguments but not all (σ = 2.3: two of 19
/// taps differ in the last bit), so a truncated integer output can differ from scipy's by 1 where
/// a pass lands within an ulp of an integer. `sigma` and `truncate` are the caller's to check
/// (finite, > 0).
pub fn gaussian_kernel(sigma: f64, truncate: f64) -> Vec<f64> {
    let radius = (truncate * sigma + 0.5) as i64;
    let phi: Vec<f64> = (-radius..=radius)
        .map(|x| (-0.5 / (sigma * sigma) * (x * x) as f64).exp())
        .collect();
    let sum = numpy_sum(&phi);
    phi.into_iter().map(|p| p / sum).collect()
}

/// scipy's Gaussian taps: radius `⌊4σ + 0.5⌋`, `exp(−x²/2σ²)` normalized to sum 1.
pub fn gaussian_taps(sigma: f64) -> Result<Vec<f64>> {
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(Error::InvalidArgument {
            name: "sigma",
            reason: format!("must be finite and > 0, got {sigma}"),
        });
    }
    let radius = (4.0 * sigma + 0.5) as i64;
    if radius > 63 {
        return Err(Error::InvalidArgument {
            name: "sigma",
            reason: format!(
                "{sigma} gives a {}-tap kernel; at most 127 taps (sigma < 15.75)",
                2 * radius + 1
            ),
        });
    }
    Ok(gaussian_kernel(sigma, 4.0))
}

/// `np.sum` of a short f64 array, in numpy's order (`pairwise_sum`: below 8 elements a plain
/// loop; up to 128, eight interleaved partial sums combined as a tree, then the rest in order),
/// so that the taps equal scipy's to the last bit.
pub(super) fn numpy_sum(a: &[f64]) -> f64 {
    if a.len() < 8 {
        return a.iter().fold(-0.0, |s, v| s + v);
    }
    debug_assert!(a.len() <= 128, "numpy recurses past 128 elements");
    let mut r: [f64; 8] = a[..8].try_into().expect("eight elements");
    let blocks = a.len() - a.len() % 8;
    for chunk in a[8..blocks].chunks_exact(8) {
        for (ri, v) in r.iter_mut().zip(chunk) {
            *ri += v;
        }
    }
    let mut s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for v in &a[blocks..] {
        s += v;
    }
    s
}
