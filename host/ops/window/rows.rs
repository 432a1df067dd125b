//! Row windows: [`RowPlan`], the launch of one row kernel (every rung of the row ladder, and the
//! row pass of the separable box), with the checks the window plans share.

use super::*;

/// `(mode, cval)` of `border` for elements `T`.
pub(super) fn border_of<T: WindowElement>(border: Border) -> (BorderMode, T) {
    let (mode, v) = border.device();
    (mode, T::from_f64(v))
}

pub(super) fn check_side(name: &'static str, v: usize) -> Result<u32> {
    if v == 0 {
        return Err(Error::InvalidArgument {
            name,
            reason: "a window needs at least one sample along each axis".into(),
        });
    }
    u32::try_from(v).map_err(|_| Error::WindowTooLarge {
        window: v,
        max: u32::MAX as usize,
        what: "one side of a window",
    })
}

/// Checks that window sums of `samples` samples are exact in `T`'s accumulators.
pub(super) fn check_exact<T: WindowIn>(samples: u64) -> Result<()> {
    if samples > T::MAX_WINDOW {
        return Err(Error::WindowTooLarge {
            window: samples as usize,
            max: T::MAX_WINDOW as usize,
            what: "sums exact in this element type's accumulators",
        });
    }
    Ok(())
}

pub(super) fn launch_grid(blocks: u64, what: &'static str, len: usize) -> Result<u32> {
    u32::try_from(blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or(Error::TooManyElements {
            op: what,
            len,
            max: i32::MAX as usize,
        })
}

/// Planning never picks an integer-only kernel for a float instance; this is the error if it did.
pub(super) fn no_int_kernels(instance: WindowInstance) -> Error {
    Error::Unsupported {
        variant: "running sums that subtract",
        reason: format!("{instance:?} has no integer-only kernels"),
    }
}

/// The kernel a row plan launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RowKernel {
    /// One of every instance's kernels.
    Table(WindowKernel),
    /// The sliding kernels (integers: running sums that subtract; floats: van Herk per thread,
    /// or direct sums for widths in `FLOAT_NARROW_WIDTHS`).
    Sliding,
}

/// A prepared row-window launch for `rows` rows of `n` samples: kernel, grid and arguments.
/// Reusable across inputs of that shape; [`WindowPlan`] is its typed public face.
pub(crate) struct RowPlan<T: WindowElement> {
    pub(super) kernel: RowKernel,
    pub(super) function: Arc<Kernel>,
    pub(super) cfg: LaunchConfig,
    pub(super) args: RowArgs<T>,
}

impl<T: WindowElement> RowPlan<T> {
    pub(super) fn for_instance(
        gpu: &Gpu,
        instance: WindowInstance,
        rows: usize,
        n: usize,
        width: usize,
        border: Border,
        variant: WindowVariant,
    ) -> Result<Self> {
        if rows == 0 || n == 0 {
            return Err(Error::InvalidArgument {
                name: "shape",
                reason: format!("a plan needs at least one sample, got {rows} rows of {n}"),
            });
        }
        let w = check_side("width", width)?;
        check_exact::<T>(width as u64)?;
        let size = size_of::<T>();
        let optin = gpu.props().shared_mem_per_block_optin as usize;
        let table = variant.kernel();
        let sums = size_of::<Sums<T::S, T::Q>>();
        let (sum_size, sumsq_size) = instance.output_sizes();
        let span = WINDOW_BLOCK * sliding_outputs(size, sum_size.max(sumsq_size), T::FLOAT);
        let float_narrow = FLOAT_NARROW_WIDTHS.contains(&w);
        let sliding_bytes = if T::FLOAT {
            float_sliding_layout(size, sum_size, sumsq_size).bytes
        } else {
            sliding_layout(span, width as u64, size, sums, sum_size, sumsq_size).bytes
        };
        let kernels = gpu.family::<WindowKernels>()?;
        let kernel = if table == WindowKernel::RunningSum
            && kernels.sliding[instance as usize].is_some()
            && width as u64 <= SLIDING_MAX_WIDTH
            && sliding_bytes <= optin
        {
            RowKernel::Sliding
        } else {
            RowKernel::Table(table)
        };
        let total = rows as u64 * n as u64;
        let block = WINDOW_BLOCK as u64;
        let too_large = |max: usize, what| Error::WindowTooLarge {
            window: width,
            max,
            what,
        };
        let (blocks, shared, tile) = match table {
            _ if kernel == RowKernel::Sliding => (rows as u64 * (n as u64).div_ceil(span as u64), sliding_bytes, 0),
            WindowKernel::StagedWindow => {
                let max = optin / (WINDOW_BLOCK as usize * size);
                if width > max {
                    return Err(too_large(
                        max,
                        "the staged-window variant (a window per thread in shared memory)",
                    ));
                }
                (total.div_ceil(block), WINDOW_BLOCK as usize * width * size, 0)
            }
            WindowKernel::SharedTile => {
                let max = optin / size + 1 - WINDOW_BLOCK as usize;
                if width > max {
                    return Err(too_large(
                        max,
                        "the shared-tile variant (tile and halo in shared memory)",
                    ));
                }
                let blocks = rows as u64 * (n as u64).div_ceil(block);
                (blocks, (WINDOW_BLOCK as usize + width - 1) * size, 0)
            }
            WindowKernel::RunningSum => {
                let geometry = running_tile(width as u64, T::CHUNK, T::FLOAT);
                // Balance each row over equal tiles (multiples of CHUNK) of at most max_outputs.
                let per_row = (n as u64).div_ceil(geometry.max_outputs as u64);
                let tile = (n as u64)
                    .div_ceil(per_row)
                    .next_multiple_of(T::CHUNK as u64)
                    .min(geometry.max_outputs as u64) as u32;
                let blocks = rows as u64 * (n as u64).div_ceil(tile as u64);
                let seg = size_of::<Seg<Sums<T::S, T::Q>>>();
                let shared = running_shared_bytes(geometry.slots, size_of::<T::S>(), size_of::<T::Q>(), seg, size);
                (blocks, shared, tile)
            }
            _ => (total.div_ceil(block), 0, 0),
        };
        let (mode, cval) = border_of::<T>(border);
        let args = RowArgs {
            n: n as u64,
            rows: rows as u64,
            width: w,
            anchor: w / 2,
            border: mode as u32,
            tile,
            cval,
        };
        let cfg = LaunchConfig {
            grid_dim: (launch_grid(blocks, "window_sum_sumsq", total as usize)?, 1, 1),
            block_dim: (WINDOW_BLOCK, 1, 1),
            shared_mem_bytes: shared as u32,
        };
        let id = match kernel {
            RowKernel::Table(k) => kernels.ids[instance as usize][k.index()],
            RowKernel::Sliding => match kernels.narrow[instance as usize] {
                Some(narrow) if float_narrow => narrow,
                _ => kernels.sliding[instance as usize].ok_or_else(|| no_int_kernels(instance))?,
            },
        };
        Ok(RowPlan {
            kernel,
            function: gpu.kernel(id)?.clone(),
            cfg,
            args,
        })
    }

    /// Blocks in the grid.
    pub(super) fn grid(&self) -> u32 {
        self.cfg.grid_dim.0
    }

    /// The rung this plan runs.
    pub(super) fn variant(&self) -> WindowVariant {
        match self.kernel {
            RowKernel::Table(k) => WindowVariant::ALL[k as usize],
            RowKernel::Sliding => WindowVariant::RunningSum,
        }
    }

    /// Launches into untyped outputs of the plan's instance (`sumsq = None`: the sum-only pass).
    pub(super) fn launch<S: DeviceRepr, Q: DeviceRepr>(
        &self,
        gpu: &Gpu,
        x: &CudaSlice<T>,
        sum: &mut CudaSlice<S>,
        sumsq: Option<&mut CudaSlice<Q>>,
    ) -> Result<()> {
        let total = (self.args.rows * self.args.n) as usize;
        check_buffers([
            ("x", x.len(), total),
            ("sum", sum.len(), total),
            ("sumsq", sumsq.as_ref().map_or(total, |q| q.len()), total),
        ])?;
        if let RowKernel::Table(k) = self.kernel
            && sumsq.is_none()
            && k != WindowKernel::RunningSum
        {
            return Err(Error::Unsupported {
                variant: "window row kernel",
                reason: "only the running-sum kernels may skip the sums of squares".into(),
            });
        }
        let _order = gpu.order_after(
            [x.stream(), sum.stream()]
                .into_iter()
                .chain(sumsq.as_ref().map(|q| q.stream())),
        )?;
        let null = 0u64;
        let mut launch = self.function.launch_on(gpu)?;
        launch.arg(x).arg(sum);
        match sumsq {
            Some(q) => launch.arg(q),
            None => launch.arg(&null),
        };
        launch.arg(&self.args);
        // SAFETY: the arguments match `(x: *const T, sum: *mut S, sumsq: *mut Q, a: RowArgs<T>)`
        // of every row kernel of the instance (a null sumsq only for the running sum, which then
        // skips it); the buffers hold rows · n elements (checked above); the grid and dynamic
        // shared memory come from the same geometry functions the kernel uses (`running_tile`,
        // `running_shared_bytes`, the tile and window sizes).
        unsafe { launch.launch(self.cfg) }?;
        Ok(())
    }
}
