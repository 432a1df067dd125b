//! Morphology plans: grey dilation and erosion through every rung of the ladder.

use super::*;

impl<T: Filter2dElement> Filter2dPlan<T, T> {
    /// Plans a grey dilation (max over the window, scipy's `grey_dilation` anchoring) of images of
    /// `shape` with `variant`.
    pub fn dilate(
        gpu: &Gpu,
        shape: Filter2dShape,
        window: (usize, usize),
        border: Border,
        variant: MorphVariant,
    ) -> Result<Self> {
        Self::morph(gpu, shape, window, border, variant, MorphFold::Max)
    }

    /// Plans a grey erosion (min over the window, `grey_erosion` anchoring).
    pub fn erode(
        gpu: &Gpu,
        shape: Filter2dShape,
        window: (usize, usize),
        border: Border,
        variant: MorphVariant,
    ) -> Result<Self> {
        Self::morph(gpu, shape, window, border, variant, MorphFold::Min)
    }

    pub(super) fn morph(
        gpu: &Gpu,
        s: Filter2dShape,
        (kh, kw): (usize, usize),
        border: Border,
        variant: MorphVariant,
        ext: MorphFold,
    ) -> Result<Self> {
        check_window((kh, kw))?;
        check_shape(s)?;
        let anchor = match ext {
            MorphFold::Max => ((kh - 1) / 2, (kw - 1) / 2),
            MorphFold::Min => (kh / 2, kw / 2),
        };
        let inst = match ext {
            MorphFold::Max => T::MAX,
            MorphFold::Min => T::MIN,
        };
        let kernels = gpu.family::<Filter2dKernels>()?;
        let fs = &kernels.morph[inst as usize];
        let f = |k: MorphKernel| gpu.kernel(fs[k as usize]).cloned();
        let base = args::<T>(s, (kh, kw), anchor, border);
        let size = size_of::<T>() as u32;
        let small = matches!((kh, kw), (3, 3) | (5, 5));
        let vh_fits = (kh == 1 || van_herk_col_tile(kh as u32, size, VAN_HERK_SMEM).is_some())
            && (kw == 1 || van_herk_row_tile(kw as u32, size, VAN_HERK_SMEM).is_some());
        let tile_fits = T::WORD_TILE && kh as u32 <= TILE_VH_MAX_WINDOW && kw as u32 <= TILE_VH_MAX_WINDOW;
        let v = match variant {
            MorphVariant::Auto if small && T::WORD_TILE => MorphVariant::WordTile,
            MorphVariant::Auto if small => MorphVariant::RowVector,
            MorphVariant::Auto if tile_fits && kh > 1 && kw > 1 => MorphVariant::VanHerkTile,
            MorphVariant::Auto if vh_fits => MorphVariant::VanHerk,
            MorphVariant::Auto => MorphVariant::Separable,
            v => v,
        };
        let one = |k: MorphKernel, cfg: LaunchConfig| -> Result<Vec<Stage<T>>> {
            Ok(vec![Stage {
                func: f(k)?,
                cfg,
                args: base,
                from: Buf::Input,
                to: Buf::Output,
                unaligned: None,
            }])
        };
        let stages = match v {
            MorphVariant::OnePixel => one(MorphKernel::OnePixel, cfg(tiles(s, 32, 8, v.name())?, BLOCK_THREADS, 0))?,
            MorphVariant::MultiPixel => {
                let m = MULTI_PIXEL as usize;
                one(
                    MorphKernel::MultiPixel,
                    cfg(tiles(s, 32 * m, 8 * m, v.name())?, BLOCK_THREADS, 0),
                )?
            }
            MorphVariant::SharedTile => one(
                MorphKernel::SharedTile,
                tile_launch::<T>(gpu, s, (kh, kw), false, "the shared tile")?,
            )?,
            MorphVariant::ComposedShared => {
                if kh != kw || kh.is_multiple_of(2) {
                    return Err(Error::Unsupported {
                        variant: v.name(),
                        reason: format!("composes 3 × 3 passes into odd squares only, got {kh} × {kw}"),
                    });
                }
                one(
                    MorphKernel::ComposedShared,
                    tile_launch::<T>(gpu, s, (kh, kw), true, "the composed shared tiles")?,
                )?
            }
            MorphVariant::RowVector => {
                let k = match (kh, kw) {
                    (3, 3) => MorphKernel::RowVector3,
                    (5, 5) => MorphKernel::RowVector5,
                    _ => {
                        return Err(Error::Unsupported {
                            variant: v.name(),
                            reason: format!("is compiled for 3 × 3 and 5 × 5 windows, got {kh} × {kw}"),
                        });
                    }
                };
                let (c, tiles, strip, vector_rows) = row_vector_launch::<T>(gpu, s)?;
                let mut a = base;
                a.strip = strip;
                a.vector_rows = vector_rows;
                a.tiles = tiles;
                vec![Stage {
                    func: f(k)?,
                    cfg: c,
                    args: a,
                    from: Buf::Input,
                    to: Buf::Output,
                    unaligned: None,
                }]
            }
            MorphVariant::WordTile => {
                let inst = match (ext, kh, kw) {
                    (MorphFold::Max, 3, 3) => WordTile::max3,
                    (MorphFold::Max, 5, 5) => WordTile::max5,
                    (MorphFold::Min, 3, 3) => WordTile::min3,
                    (MorphFold::Min, 5, 5) => WordTile::min5,
                    _ => {
                        return Err(Error::Unsupported {
                            variant: v.name(),
                            reason: format!("is compiled for 3 × 3 and 5 × 5 windows, got {kh} × {kw}"),
                        });
                    }
                };
                vec![word_tile_stage::<T>(gpu, inst, s, kh, border)?]
            }
            MorphVariant::VanHerkTile => {
                if !tile_fits {
                    return Err(Error::Unsupported {
                        variant: v.name(),
                        reason: format!(
                            "takes u8 windows up to {TILE_VH_MAX_WINDOW} × {TILE_VH_MAX_WINDOW}, got {kh} × {kw} of {}",
                            std::any::type_name::<T>()
                        ),
                    });
                }
                vec![tile_vh_stage(gpu, ext, s, kh, base, v.name())?]
            }
            MorphVariant::Separable | MorphVariant::VanHerk => {
                let vh = v == MorphVariant::VanHerk;
                let no_tiles = WarpTiles::new(1, 1);
                let mut passes: Vec<(Arc<Kernel>, LaunchConfig, WarpTiles, u32, u32)> = Vec::new();
                if kh > 1 || kw == 1 {
                    passes.push(if vh && kh as u32 <= VAN_HERK_WORDS_MAX {
                        let (kernel, c, tiles, strip, vector) = van_herk_col_words_pass(gpu, s, kh, size as usize)?;
                        (f(kernel)?, c, tiles, strip, vector)
                    } else if vh && kh > 1 {
                        let rows =
                            van_herk_col_tile(kh as u32, size, VAN_HERK_SMEM).ok_or_else(|| Error::WindowTooLarge {
                                window: kh,
                                max: (VAN_HERK_SMEM / (2 * size * VAN_HERK_COLS)) as usize - 8,
                                what: "a van Herk column pass",
                            })?;
                        let rows = rows.min((s.h as u32).div_ceil(8) * 8);
                        let smem = 2 * (rows + kh as u32 - 1) as u64 * VAN_HERK_COLS as u64 * size as u64;
                        let grid = tiles(s, VAN_HERK_COLS as usize, rows as usize, v.name())?;
                        (
                            f(MorphKernel::VanHerkCols)?,
                            cfg(grid, BLOCK_THREADS, smem),
                            no_tiles,
                            rows,
                            0,
                        )
                    } else {
                        (
                            f(MorphKernel::PassCols)?,
                            cfg(tiles(s, 32, 8, v.name())?, BLOCK_THREADS, 0),
                            no_tiles,
                            0,
                            0,
                        )
                    });
                }
                if kw > 1 {
                    let doubling = doubling_row_kernel(kernels, fs, ext, size, kw as u32, anchor.1 as u32);
                    passes.push(if let (true, Some((kernel, lanes, outs))) = (vh, doubling) {
                        let (c, warps) = warp_tile_grid(
                            s,
                            s.w.div_ceil(outs as usize),
                            doubling_rows_per_warp(lanes * size) as usize,
                            v.name(),
                        )?;
                        let vector = s.w.is_multiple_of(lanes as usize) as u32;
                        (gpu.kernel(kernel)?.clone(), c, warps, outs, vector)
                    } else if vh {
                        let tile =
                            van_herk_row_tile(kw as u32, size, VAN_HERK_SMEM).ok_or_else(|| Error::WindowTooLarge {
                                window: kw,
                                max: (VAN_HERK_SMEM / (2 * size)) as usize - BLOCK_THREADS as usize,
                                what: "a van Herk row pass",
                            })?;
                        let tile = tile.min((s.w as u32).div_ceil(BLOCK_THREADS) * BLOCK_THREADS);
                        let smem = 2 * (tile + kw as u32 - 1) as u64 * size as u64;
                        let grid = blocks((s.w.div_ceil(tile as usize) * s.h * s.planes) as u64, v.name())?;
                        (
                            f(MorphKernel::VanHerkRows)?,
                            cfg(grid, BLOCK_THREADS, smem),
                            no_tiles,
                            tile,
                            0,
                        )
                    } else {
                        (
                            f(MorphKernel::PassRows)?,
                            cfg(tiles(s, 32, 8, v.name())?, BLOCK_THREADS, 0),
                            no_tiles,
                            0,
                            0,
                        )
                    });
                }
                let last = passes.len() - 1;
                passes
                    .into_iter()
                    .enumerate()
                    .map(|(i, (func, c, warps, strip, vector_rows))| {
                        let mut a = base;
                        a.strip = strip;
                        a.vector_rows = vector_rows;
                        a.tiles = warps;
                        Stage {
                            func,
                            cfg: c,
                            args: a,
                            from: if i == 0 { Buf::Input } else { Buf::Scratch },
                            to: if i == last { Buf::Output } else { Buf::Scratch },
                            unaligned: None,
                        }
                    })
                    .collect()
            }
            MorphVariant::Auto => unreachable!("resolved above"),
        };
        Self::new(gpu, s, stages, None, Filter2dPlanVariant::Morph(v))
    }
}
