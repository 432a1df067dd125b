//! 2D boxes: [`BoxPasses`], one fused kernel or the separable passes over planes, the strip and
//! warp geometry of each rung, and `Auto`'s choice between them.

use super::*;

/// A prepared 2D box launch over `planes` planes of `height × width`: one kernel (fused) or two
/// (separable, with its device scratch). Reusable across inputs of that shape.
pub(crate) struct BoxPasses<T: WindowElement> {
    pub(super) kind: BoxKind,
    pub(super) variant: BoxVariant,
    pub(super) args: BoxArgs<T>,
    pub(super) cfg: LaunchConfig,
    /// The one-pass kernel, or the separable variant's column pass.
    pub(super) function: Arc<Kernel>,
    /// The kernel an unaligned input takes instead of `function` (the stream-rows word kernel's
    /// gathering twin), loaded at its first use.
    pub(super) unaligned: Option<KernelId>,
    /// Separable: the row pass and the scratch (row sums; floats also the suffix sums).
    pub(super) rows: Option<(RowPlan<T>, Scratch<T>)>,
}

/// Device buffers of one accumulator pair per pixel.
pub(super) struct AccBuffers<T: WindowIn> {
    pub(super) s: CudaSlice<T::S>,
    pub(super) q: CudaSlice<T::Q>,
}

/// The separable pass's scratch: the row sums, and for floats the column pass's suffix sums.
pub(super) struct Scratch<T: WindowIn> {
    pub(super) rows: AccBuffers<T>,
    pub(super) suffix: Option<AccBuffers<T>>,
}

/// Output rows per thread of the integer column pass: enough that the `h` reads starting each
/// strip are amortized (`h + 2·strip` reads for `strip` outputs), at least 64.
pub(super) fn column_strip(h: u32) -> u32 {
    (2 * h).max(64)
}

/// Why a one-pass variant (`Fused`, `WarpPrefix`) refuses a box it does not fit: the first of its
/// limits the box exceeds — the widest window (`(win_w, max)`), the window samples its exact sums
/// of squares allow (`(n, max)`), then 32-bit row arithmetic (`side`: the longest of the image
/// sides and the window height; also the answer when only shared memory is short).
pub(super) fn one_pass_refusal(
    variant: BoxVariant,
    (win_w, max_w): (usize, usize),
    (n, max_n): (u64, u64),
    side: usize,
) -> Error {
    let (width, squares, sides) = match variant {
        BoxVariant::StreamRows => (
            "the stream-rows variant's reach of 8 columns either side of an output (window width)",
            "the stream-rows variant's u32 sums of squares (window samples)",
            "the stream-rows variant's 32-bit row arithmetic (image side or window height)",
        ),
        BoxVariant::WarpPrefix => (
            "the warp-prefix variant's halo inside a warp's 512 columns (window width)",
            "the warp-prefix variant's u32 sums of squares (window samples)",
            "the warp-prefix variant's 32-bit row arithmetic (image side or window height)",
        ),
        _ => (
            "the fused variant's halo of column sums (window width)",
            "the fused variant's running sums of squares (window samples)",
            "the fused variant's 32-bit row arithmetic (image side or window height)",
        ),
    };
    let (window, max, what) = if win_w > max_w {
        (win_w, max_w, width)
    } else if n > max_n {
        (n as usize, max_n as usize, squares)
    } else {
        (side, FUSED_MAX_SIDE - 1, sides)
    };
    Error::WindowTooLarge { window, max, what }
}

/// Output rows per block (fused) or warp (warp-prefix) for `columns` column blocks or segments
/// (all planes) of `height` rows: the strips that make the grid one wave of `wave` resident
/// blocks or warps, but no shorter than `min_h · h` rows (each strip first reads `h − 1` rows
/// before its first output) or 16.
pub(super) fn one_pass_strip(columns: u64, height: u64, h: u32, min_h: u64, wave: u64) -> u32 {
    let strips = (wave / columns).max(1);
    let strip = height.div_ceil(strips).max(min_h * h as u64).max(16);
    strip.min(height).clamp(1, u32::MAX as u64) as u32
}

/// How a one-pass box variant sizes its strips of output rows.
#[derive(Clone, Copy)]
pub(super) enum StripRule {
    /// One wave of resident tiles, strips no shorter than `min_h · h` rows ([`one_pass_strip`]).
    OneWave { min_h: u64 },
    /// Strips of this many rows, in as many waves as they take ([`stream_rows_strip`]).
    Rows(u32),
}

/// Output rows per stream-rows warp for windows `h` rows by `w` columns: `max(16, ⌈1.4 h⌉)`
/// (`max(16, 2h)` for the two-word rings past 16 columns), many waves of short strips rather
/// than one wave of long ones. Each strip first reads `h − 1` rows, but on the H100 the SMs ran
/// through one wave of equal strips at speeds up to 37% apart (ncu: SM active cycles 345 k to
/// 550 k of 559 k), so a fifth of the run had idle SMs; with short strips the block scheduler
/// hands the SMs that finish early more work, and the warps in flight write one narrow band of
/// the output. 15 × 15: 331 µs in one wave, 273 µs at 18 rows; the lengths were measured from 15
/// to 144 rows, and work stealing over long strips measured slower. Once
/// the edge warps stopped stalling on their border maps, 21 rows at 15 × 15 measured 0.3–0.5%
/// faster than 18 in three device calls (and 24 to 36 slower), hence 1.4 rather than 1.2.
pub(super) fn stream_rows_strip(height: u64, h: u32, w: u32) -> u32 {
    let h = h as u64;
    let rows = if w <= STREAM_BOX_PACKED_MAX_WIDTH {
        (7 * h).div_ceil(5)
    } else {
        2 * h
    };
    rows.max(16).min(height).clamp(1, u32::MAX as u64) as u32
}

/// Warps per stream-rows block for rings of `ring` bytes per warp: of 4, 2 and 1 warps whose
/// rings fit the opt-in shared memory, the block that keeps the most warps resident per SM (ties:
/// the larger block). At 15 rows of 16 columns (15 KB per warp) blocks of 4 leave 12 warps per
/// H100 SM and blocks of 2 leave 14.
pub(super) fn stream_box_warps(gpu: &Gpu, func: &Kernel, ring: usize, optin: usize) -> Result<u32> {
    let mut best = (0, 1);
    for warps in (0..3).map(|k| STREAM_BOX_WARPS >> k) {
        let shared = warps as usize * ring;
        if shared > optin {
            continue;
        }
        let resident = func.blocks_per_sm(gpu, 32 * warps, shared)? * warps;
        if resident > best.0 {
            best = (resident, warps);
        }
    }
    Ok(best.1)
}

/// The fused kernel works in 32-bit row and column arithmetic: sides and window height below
/// this.
pub(super) const FUSED_MAX_SIDE: usize = 1 << 29;

/// `Auto` runs the warp-prefix box (u8) for windows wider than this, as wide as it takes
/// (`WARP_BOX_MAX_WIDTH`): measured on the H100 (u8 8192², docs/PERFORMANCE.md), it is slower
/// than the fused box at 5, 15 and 31 columns, faster than both others at 63 (753 µs against
/// fused 1063 and separable 1289) and at 127 (1243 µs against separable 1290).
pub(super) const WARP_AUTO_MIN_WIDTH: u64 = 31;

/// `Auto` runs the fused box up to this window width (its horizontal sums cost `w` shared loads
/// per thread and row; the separable variant's cost does not grow with the window).
pub(super) const FUSED_AUTO_MAX_WIDTH: u64 = 64;

impl<T: WindowElement> BoxPasses<T> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        gpu: &Gpu,
        instance: WindowInstance,
        kind: BoxKind,
        (planes, height, width): (usize, usize, usize),
        (win_h, win_w): (usize, usize),
        border: Border,
        variant: BoxVariant,
    ) -> Result<Self> {
        if planes * height * width == 0 {
            return Err(Error::InvalidArgument {
                name: "shape",
                reason: format!("a plan needs at least one pixel, got {planes} planes of {height} × {width}"),
            });
        }
        let (h, w) = (check_side("window height", win_h)?, check_side("window width", win_w)?);
        let n = win_h as u64 * win_w as u64;
        check_exact::<T>(n)?;
        let optin = gpu.props().shared_mem_per_block_optin as usize;
        let cols = FUSED_BLOCK as usize * T::FUSED_COLS as usize;
        let shared = fused_layout(
            T::FUSED_COLS as usize,
            win_w,
            T::FUSED_ACC_BYTES,
            instance.output_sizes(),
        )
        .bytes;
        // The first limit each one-pass variant's box exceeds, as its error (`None`: it fits).
        let side = height.max(width).max(win_h);
        let one_pass_limit = |variant: BoxVariant, max_w: usize, shared: usize| {
            (win_w > max_w || n > T::FUSED_MAX_WINDOW || side >= FUSED_MAX_SIDE || shared > optin)
                .then(|| one_pass_refusal(variant, (win_w, max_w), (n, T::FUSED_MAX_WINDOW), side))
        };
        let fused_limit = one_pass_limit(BoxVariant::Fused, FUSED_MAX_WIDTH as usize, shared);
        let fused_fits = !T::FLOAT && fused_limit.is_none();
        let has_warp = instance.warp_name().is_some();
        let warp_limit = one_pass_limit(BoxVariant::WarpPrefix, WARP_BOX_MAX_WIDTH as usize, WARP_BOX_SHARED);
        let warp_fits = has_warp && warp_limit.is_none();
        let has_stream = instance == WindowInstance::u8_f32;
        let ring = stream_box_ring_bytes(w, h) as usize;
        // A block of one warp must hold that warp's ring of h rows.
        let ring_rows = (optin as u64 / stream_box_ring_bytes(w, 1)) as usize;
        let stream_limit = one_pass_limit(BoxVariant::StreamRows, STREAM_BOX_MAX_WIDTH as usize, 0).or_else(|| {
            (win_h > ring_rows).then_some(Error::WindowTooLarge {
                window: win_h,
                max: ring_rows,
                what: "the stream-rows variant's shared ring of one warp's last h rows (window height)",
            })
        });
        // Auto takes it where its words load directly (the word kernel: at least 16 columns, a
        // multiple of 4); other shapes it computes correctly but byte by byte (the gathering
        // kernel, also the fallback for an unaligned buffer).
        let stream_fast = stream_box_reads_words(0, width as u64);
        let variant = match variant {
            BoxVariant::Auto if has_stream && stream_limit.is_none() && stream_fast => BoxVariant::StreamRows,
            BoxVariant::Auto if warp_fits && win_w as u64 > WARP_AUTO_MIN_WIDTH => BoxVariant::WarpPrefix,
            BoxVariant::Auto if fused_fits && win_w as u64 <= FUSED_AUTO_MAX_WIDTH => BoxVariant::Fused,
            BoxVariant::Auto => BoxVariant::Separable,
            BoxVariant::Fused if T::FLOAT => {
                return Err(Error::Unsupported {
                    variant: BoxVariant::Fused.name(),
                    reason: "the fused box slides running sums that subtract, exact only for integers; \
                             floats run separable (van Herk/Gil-Werman)"
                        .into(),
                });
            }
            BoxVariant::StreamRows if !has_stream => {
                return Err(Error::Unsupported {
                    variant: BoxVariant::StreamRows.name(),
                    reason: format!(
                        "the stream-rows box reads u8 images into f32 outputs (byte dot products, squares in \
                         u32); {} input into {:?} runs fused or separable",
                        std::any::type_name::<T>(),
                        instance
                    ),
                });
            }
            BoxVariant::WarpPrefix if !has_warp => {
                return Err(Error::Unsupported {
                    variant: BoxVariant::WarpPrefix.name(),
                    reason: format!(
                        "the warp-prefix box reads u8 images (4 pixels per load, squares in u32); {} input \
                         runs fused or separable",
                        std::any::type_name::<T>()
                    ),
                });
            }
            v => v,
        };
        let limit = match variant {
            BoxVariant::Fused => fused_limit,
            BoxVariant::WarpPrefix => warp_limit,
            BoxVariant::StreamRows => stream_limit,
            _ => None,
        };
        if let Some(e) = limit {
            return Err(e);
        }
        let (mode, cval) = border_of::<T>(border);
        let total = planes * height * width;
        let mut args = BoxArgs {
            height: height as u64,
            width: width as u64,
            planes: planes as u64,
            win_h: h,
            win_w: w,
            anchor_y: h / 2,
            anchor_x: w / 2,
            border: mode as u32,
            kind: kind as u32,
            strip: 0,
            _pad: 0,
            inv_n: 1.0 / n as f64,
            inv_n2: 1.0 / (n as f64 * n as f64),
            cval,
        };
        let one_pass = match variant {
            // (threads per block, shared bytes, tiles per block, columns per tile, strip rule)
            BoxVariant::WarpPrefix => Some((
                32 * WARP_BOX_WARPS,
                WARP_BOX_SHARED,
                WARP_BOX_WARPS as u64,
                warp_box_geometry(w, w / 2).1 as u64,
                // A warm-up row costs a warp only its loads and column updates (about a sixth
                // of an output row): strips down to h rows keep the grid one full wave for tall
                // windows.
                StripRule::OneWave { min_h: 1 },
            )),
            BoxVariant::Fused => Some((FUSED_BLOCK, shared, 1, cols as u64, StripRule::OneWave { min_h: 4 })),
            BoxVariant::StreamRows => {
                let id = gpu
                    .family::<WindowKernels>()?
                    .one_pass(instance, variant, w, stream_fast)?;
                let warps = stream_box_warps(gpu, gpu.kernel(id)?, ring, optin)?;
                Some((
                    32 * warps,
                    warps as usize * ring,
                    warps as u64,
                    STREAM_BOX_SPAN as u64,
                    StripRule::Rows(stream_rows_strip(height as u64, h, w)),
                ))
            }
            _ => None,
        };
        let kernels = gpu.family::<WindowKernels>()?;
        let (cfg, rows, function) = if let Some((threads, shared, per_block, tile_cols, strips)) = one_pass {
            let function = gpu
                .kernel(kernels.one_pass(instance, variant, w, stream_fast)?)?
                .clone();
            let per_sm = function.blocks_per_sm(gpu, threads, shared)?;
            let wave = gpu.props().sm_count as u64 * per_sm.max(1) as u64 * per_block;
            let columns = planes as u64 * (width as u64).div_ceil(tile_cols);
            args.strip = match strips {
                StripRule::OneWave { min_h } => one_pass_strip(columns, height as u64, h, min_h, wave),
                StripRule::Rows(rows) => rows,
            };
            let tiles = columns * (height as u64).div_ceil(args.strip as u64);
            let cfg = LaunchConfig {
                grid_dim: (launch_grid(tiles.div_ceil(per_block), "box", total)?, 1, 1),
                block_dim: (threads, 1, 1),
                shared_mem_bytes: shared as u32,
            };
            (cfg, None, function)
        } else {
            args.strip = if T::FLOAT { h } else { column_strip(h) };
            let threads = planes as u64 * width as u64 * (height as u64).div_ceil(args.strip as u64);
            let cfg = LaunchConfig {
                grid_dim: (launch_grid(threads.div_ceil(WINDOW_BLOCK as u64), "box", total)?, 1, 1),
                block_dim: (WINDOW_BLOCK, 1, 1),
                shared_mem_bytes: 0,
            };
            let row_plan = RowPlan::for_instance(
                gpu,
                T::ACC_INSTANCE,
                planes * height,
                width,
                win_w,
                border,
                WindowVariant::RunningSum,
            )?;
            let stream = gpu.stream();
            // SAFETY: the row pass writes every element of rs (and rq) before the column pass
            // reads them; the float column pass writes each ts/tq element before reading it.
            let scratch = unsafe {
                let buffers = || -> Result<AccBuffers<T>> {
                    Ok(AccBuffers {
                        s: stream.alloc::<T::S>(total)?,
                        q: stream.alloc::<T::Q>(total)?,
                    })
                };
                Scratch {
                    rows: buffers()?,
                    suffix: if T::FLOAT { Some(buffers()?) } else { None },
                }
            };
            let columns = kernels.ids[instance as usize][WindowKernel::BoxColumns.index()];
            (cfg, Some((row_plan, scratch)), gpu.kernel(columns)?.clone())
        };
        // The word kernel refuses an unaligned input; that launch takes the gathering kernel,
        // loaded then (device arrays are aligned; views at an offset may not be).
        let unaligned = (variant == BoxVariant::StreamRows && stream_fast)
            .then(|| kernels.one_pass(instance, variant, w, false))
            .transpose()?;
        Ok(BoxPasses {
            kind,
            variant,
            args,
            cfg,
            function,
            unaligned,
            rows,
        })
    }

    /// The variant this plan runs (`Auto` resolved).
    pub fn variant(&self) -> BoxVariant {
        self.variant
    }

    pub(super) fn total(&self) -> usize {
        (self.args.planes * self.args.height * self.args.width) as usize
    }

    /// Enqueues the box over `x` into `o0` (and `o1` for the two-output kinds). Asynchronous.
    pub(super) fn enqueue<U0: DeviceRepr, U1: DeviceRepr>(
        &mut self,
        gpu: &Gpu,
        x: &CudaSlice<T>,
        o0: &mut CudaSlice<U0>,
        o1: Option<&mut CudaSlice<U1>>,
    ) -> Result<()> {
        let total = self.total();
        if x.len() < total || o0.len() < total || o1.as_ref().is_some_and(|o| o.len() < total) {
            return Err(Error::InvalidArgument {
                name: "buffers",
                reason: format!("a buffer holds fewer than the plan's {total} elements"),
            });
        }
        if self.kind.two_outputs() != o1.is_some() {
            return Err(Error::InvalidArgument {
                name: "outputs",
                reason: format!(
                    "{:?} writes {} output(s)",
                    self.kind,
                    1 + self.kind.two_outputs() as usize
                ),
            });
        }
        let scratch_stream = self.rows.as_ref().map(|(_, s)| s.rows.s.stream().clone());
        let _order = gpu.order_after(
            [x.stream(), o0.stream()]
                .into_iter()
                .chain(o1.as_ref().map(|o| o.stream()))
                .chain(scratch_stream.as_ref()),
        )?;
        let null = 0u64;
        match &mut self.rows {
            None => {
                let mut function = &self.function;
                if let Some(id) = self.unaligned
                    && !stream_box_reads_words(x.device_ptr(gpu.stream()).0, self.args.width)
                {
                    function = gpu.kernel(id)?;
                }
                let mut launch = function.launch_on(gpu)?;
                launch.arg(x).arg(o0);
                match o1 {
                    Some(o) => launch.arg(o),
                    None => launch.arg(&null),
                };
                launch.arg(&self.args);
                // SAFETY: matches `(x: *const T, o0: *mut S, o1: *mut Q, a: BoxArgs<T>)` of the
                // instance's fused, warp-prefix and stream-rows entries (the latter two's T is
                // u8: only u8 instances have them; stream-rows only u8_f32, S = Q = f32, the
                // kernel of the plan's window width); the buffers hold planes · height · width
                // elements (checked); o1 is read only for two-output kinds, which pass it; grid
                // and shared memory come from the same geometry (FUSED_BLOCK and FUSED_COLS,
                // warp_box_geometry and WARP_BOX_WARPS, or STREAM_BOX_SPAN and whole warps
                // with stream_box_ring_bytes per warp) and strip the kernel uses.
                unsafe { launch.launch(self.cfg) }?;
            }
            Some((row_plan, scratch)) => {
                let needs_sq = self.kind.needs_sumsq();
                row_plan.launch(gpu, x, &mut scratch.rows.s, needs_sq.then_some(&mut scratch.rows.q))?;
                let mut launch = self.function.launch_on(gpu)?;
                launch.arg(&scratch.rows.s).arg(&scratch.rows.q);
                match &mut scratch.suffix {
                    Some(t) => launch.arg(&mut t.s).arg(&mut t.q),
                    None => launch.arg(&null).arg(&null),
                };
                launch.arg(o0);
                match o1 {
                    Some(o) => launch.arg(o),
                    None => launch.arg(&null),
                };
                launch.arg(&self.args);
                // SAFETY: matches `(rs, rq, ts, tq, o0, o1, a: BoxArgs<T>)` of the instance's
                // box_columns entry; rs (and rq, written when the kind needs squares) hold the row
                // pass's accumulators for every pixel; ts/tq (floats) hold as many; the grid covers
                // planes · width · ⌈height / strip⌉ threads with the kernel's own strip rule.
                unsafe { launch.launch(self.cfg) }?;
            }
        }
        Ok(())
    }
}
