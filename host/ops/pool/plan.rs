//! [`PoolPlan`]: a planned pooling launch (kernel, grid, the constant-input and texture rungs'
//! resources) over [`PoolShape`]s, and how it enqueues.

use super::*;

// ---------------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------------

/// The geometry of one pooling launch: the op, the planes and the window parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoolShape {
    pub op: PoolOp,
    pub planes: usize,
    pub h: usize,
    pub w: usize,
    pub window: Pool2d,
    pub count_include_pad: bool,
    pub divisor_override: Option<i32>,
}

impl PoolShape {
    /// Max pooling of `planes` planes of `h × w` with `p`.
    pub fn max(planes: usize, h: usize, w: usize, p: Pool2d) -> PoolShape {
        PoolShape {
            op: PoolOp::Max,
            planes,
            h,
            w,
            window: p,
            count_include_pad: false,
            divisor_override: None,
        }
    }

    /// Average pooling of `planes` planes of `h × w` with `p`.
    pub fn avg(planes: usize, h: usize, w: usize, p: AvgPool2d) -> PoolShape {
        PoolShape {
            op: PoolOp::Avg,
            planes,
            h,
            w,
            window: p.window,
            count_include_pad: p.count_include_pad,
            divisor_override: p.divisor_override,
        }
    }

    /// `(oh, ow)`, validated.
    pub fn output_size(&self) -> Result<(usize, usize)> {
        match self.op {
            PoolOp::Max => self.window.output_size(self.h, self.w),
            PoolOp::Avg => AvgPool2d {
                window: self.window,
                count_include_pad: self.count_include_pad,
                divisor_override: self.divisor_override,
            }
            .output_size(self.h, self.w),
        }
    }
}

/// Whether the vectorized rung runs `shape` through its 3-wide overlapping kernel
/// ([`vector3_fits`]).
pub(super) fn vectorized3(s: &PoolShape, elem_size: usize) -> bool {
    let p = &s.window;
    let ow = s.output_size().map_or(0, |o| o.1);
    vector3_fits(
        p.kernel.1 as u32,
        p.stride.1 as u32,
        p.padding.1 as u32,
        p.dilation.1 as u32,
        s.w,
        ow,
        elem_size,
    )
}

/// Why the vectorized kernel cannot run `shape` with `elem_size`-byte elements, if it cannot.
pub(super) fn vectorized_unsupported(s: &PoolShape, elem_size: usize) -> Option<String> {
    if vectorized3(s, elem_size) {
        return None;
    }
    let p = &s.window;
    let (kw, sw, pw, dw) = (p.kernel.1, p.stride.1, p.padding.1, p.dilation.1);
    let lanes = 16 / elem_size;
    if vector_outputs(kw as u32, elem_size).is_none() || kw > lanes {
        return Some(format!(
            "kernel width {kw} does not divide the {lanes} elements of a 16-byte vector"
        ));
    }
    if sw != kw || pw != 0 || dw != 1 {
        return Some(format!(
            "needs stride = kernel and no padding or dilation along the width, got stride {sw}, padding {pw}, dilation {dw} for kernel width {kw}"
        ));
    }
    if !s.w.is_multiple_of(lanes) {
        return Some(format!("rows of {} elements are not whole 16-byte vectors", s.w));
    }
    None
}

/// The shared tile's geometry for one shape: output tile, stage pitch and bytes.
#[derive(Clone, Copy, Debug)]
pub(super) struct TileGeometry {
    rows: usize,
    cols: usize,
    pitch: usize,
    bytes: usize,
}

/// Shared memory a shared-tile block may stage: the default per-block limit, so no opt-in.
const TILE_MAX_BYTES: usize = 48 << 10;
/// Outputs one tile aims at (8 per thread) and the stage it aims to stay under (so 6 or more
/// blocks share an SM).
const TILE_OUTPUTS: usize = 2048;
const TILE_TARGET_BYTES: usize = 32 << 10;

/// The shared tile for `s` (`oh × ow` outputs of `size`-byte elements): tiles as wide as the
/// output rows up to 256 (else 128 columns), `TILE_OUTPUTS / cols` rows, halved until the stage
/// is at most `TILE_TARGET_BYTES`; the stage's rows are whole 16-byte vectors wide (its columns
/// start on a vector boundary when the rows load as vectors). `Err` with the reason when even
/// one output row needs more than `TILE_MAX_BYTES`.
pub(super) fn tile_geometry(
    s: &PoolShape,
    oh: usize,
    ow: usize,
    size: usize,
) -> std::result::Result<TileGeometry, String> {
    let p = &s.window;
    let lanes = 16 / size;
    let cols = if ow <= 256 { ow } else { 128 };
    let span = |n: usize, stride: usize, k: usize, d: usize| (n - 1) * stride + (k - 1) * d + 1;
    let cols_in = span(cols, p.stride.1, p.kernel.1, p.dilation.1);
    let pitch = (cols_in + 2 * (lanes - 1))
        .min(s.w.next_multiple_of(lanes))
        .next_multiple_of(lanes);
    let bytes = |rows: usize| span(rows, p.stride.0, p.kernel.0, p.dilation.0).min(s.h) * pitch * size;
    let mut rows = (TILE_OUTPUTS / cols).clamp(1, oh.max(1));
    while rows > 1 && bytes(rows) > TILE_TARGET_BYTES {
        rows /= 2;
    }
    if bytes(rows) > TILE_MAX_BYTES {
        return Err(format!(
            "one output row of {cols} windows stages {} bytes, past the {TILE_MAX_BYTES}-byte tile",
            bytes(rows)
        ));
    }
    Ok(TileGeometry {
        rows,
        cols,
        pitch,
        bytes: bytes(rows),
    })
}

/// One launch of a plan: the arguments (a plane range) and, for textures, the object's offset.
#[derive(Clone, Copy, Debug)]
pub(super) struct Launch {
    pub(super) args: PoolArgs,
    pub(super) cfg: LaunchConfig,
}

/// Texture objects over one input buffer (one per launch), destroyed after the stream drains.
pub(super) struct Textures {
    pub(super) key: (u64, usize),
    /// One object per launch, and the input element its texture element 0 holds
    /// (`PoolArgs::texture_base`).
    pub(super) objects: Vec<(sys::CUtexObject, u64)>,
    pub(super) stream: Arc<CudaStream>,
}

impl Drop for Textures {
    fn drop(&mut self) {
        // A kernel may still fetch through the objects, on this stream or (a plan enqueued from
        // a forked handle) another: let the context drain first. Errors here have nowhere to go
        // (a failed sync means the context is already broken).
        let _ = self.stream.context().synchronize();
        for &(t, _) in &self.objects {
            // SAFETY: `t` was created by `cuTexObjectCreate` and is destroyed once, here.
            unsafe { sys::cuTexObjectDestroy(t) };
        }
    }
}

/// A prepared pooling launch for one shape: resolved kernel, launches (several only for textures
/// over inputs past the device's linear-texture width), output size. Reusable across inputs of
/// that shape; the examples and the bench time [`PoolPlan::enqueue`] alone.
pub struct PoolPlan<T: PoolElement> {
    pub(super) instance: PoolInstance,
    pub(super) kernel: PoolKernel,
    /// The rung's kernel, and for the vectorized max rung its argmax form (launched when the
    /// caller asks for indices).
    pub(super) kernels: (Arc<Kernel>, Option<Arc<Kernel>>),
    pub(super) variant: PoolVariant,
    /// The vectorized rung runs its 3-wide overlapping kernel.
    pub(super) three: bool,
    pub(super) output: (usize, usize),
    pub(super) launches: Vec<Launch>,
    pub(super) input_len: usize,
    pub(super) textures: Mutex<Option<Textures>>,
    pub(super) _t: std::marker::PhantomData<T>,
}

impl<T: PoolElement> PoolPlan<T> {
    /// Plans max pooling of `shape` (of element type `T`) with `variant`.
    pub fn max(gpu: &Gpu, shape: PoolShape, variant: PoolVariant) -> Result<Self> {
        Self::new(gpu, T::MAX_INSTANCE, shape, variant)
    }

    pub(super) fn new(gpu: &Gpu, instance: PoolInstance, shape: PoolShape, variant: PoolVariant) -> Result<Self> {
        let (oh, ow) = shape.output_size()?;
        let size = size_of::<T>();
        let plane = shape.h * shape.w;
        if plane > u32::MAX as usize {
            return Err(Error::TooManyElements {
                op: "pool2d (one plane)",
                len: plane,
                max: u32::MAX as usize,
            });
        }
        let input_len = shape.planes * plane;
        let tile = tile_geometry(&shape, oh, ow, size);
        let kernel = match variant {
            PoolVariant::Auto if vectorized_unsupported(&shape, size).is_none() => PoolKernel::Vectorized,
            PoolVariant::Auto if tile.is_ok() => PoolKernel::SharedTile,
            PoolVariant::Auto => PoolKernel::ReadOnly,
            v => PoolKernel::ALL[PoolVariant::ALL.iter().position(|&r| r == v).expect("a rung")],
        };
        let refusal = match kernel {
            PoolKernel::Vectorized => vectorized_unsupported(&shape, size),
            PoolKernel::SharedTile => tile.as_ref().err().cloned(),
            _ => None,
        };
        if let Some(reason) = refusal {
            return Err(Error::Unsupported {
                variant: PoolVariant::ALL[kernel.index()].name(),
                reason,
            });
        }
        let bytes = input_len * size;
        if kernel == PoolKernel::ConstantInput && bytes > CONSTANT_BANK_BYTES {
            return Err(Error::ConstantBankFull {
                what: "the pooling input",
                bytes,
                max: CONSTANT_BANK_BYTES,
            });
        }
        // Threads per output row: one per output, or one per 16-byte vector of an input row; the
        // shared tile splits its block index the same way, by tiles across and down.
        let tile = tile.ok().filter(|_| kernel == PoolKernel::SharedTile);
        let (cols, rows) = match (kernel, tile) {
            (PoolKernel::Vectorized, _) => (shape.w / (16 / size), oh),
            (_, Some(t)) => (ow.div_ceil(t.cols), oh.div_ceil(t.rows)),
            _ => (ow, oh),
        };
        // Threads (the shared tile: blocks) of one plane.
        let threads_per_plane = match tile {
            Some(_) => rows as u64 * cols as u64,
            None => oh as u64 * cols as u64,
        };
        // Each launch indexes its threads in 32 bits: at most this many threads.
        let max_threads = (1u64 << 32) - POOL_BLOCK as u64;
        if threads_per_plane > max_threads {
            return Err(Error::TooManyElements {
                op: "pool2d (outputs of one plane)",
                len: oh * ow,
                max: max_threads as usize,
            });
        }
        let p = &shape.window;
        let base = PoolArgs {
            plane_begin: 0,
            plane_end: shape.planes as u64,
            texture_base: 0,
            h: shape.h as u32,
            w: shape.w as u32,
            oh: oh as u32,
            ow: ow as u32,
            kh: p.kernel.0 as u32,
            kw: p.kernel.1 as u32,
            sh: p.stride.0 as u32,
            sw: p.stride.1 as u32,
            ph: p.padding.0 as u32,
            pw: p.padding.1 as u32,
            dh: p.dilation.0 as u32,
            dw: p.dilation.1 as u32,
            count_include_pad: shape.count_include_pad as u32,
            divisor: shape.divisor_override.unwrap_or(0),
            cols: FastDiv::new(cols as u32),
            rows: FastDiv::new(rows as u32),
            tile_rows: tile.map_or(0, |t| t.rows as u32),
            tile_cols: tile.map_or(0, |t| t.cols as u32),
            stage_pitch: tile.map_or(0, |t| t.pitch as u32),
            vectors: tile.is_some_and(|_| shape.w.is_multiple_of(16 / size)) as u32,
            _pad: 0,
        };
        // Planes per launch: all of them, except past 2^32 threads or, for textures, past the
        // linear-texture width (less the slack of aligning the object's base down).
        // (The shared tile's blocks: at most the grid's 2^31 − 1.)
        let limit = if tile.is_some() { i32::MAX as u64 } else { max_threads };
        let mut per_launch = (limit / threads_per_plane.max(1)) as usize;
        if kernel == PoolKernel::Texture {
            let limits = gpu.family::<PoolKernels>()?.texture_limits(gpu)?;
            let width = limits
                .width
                .min(i32::MAX as usize)
                .saturating_sub(limits.alignment / size);
            if plane > width {
                return Err(Error::Unsupported {
                    variant: PoolVariant::Texture.name(),
                    reason: format!("a plane of {plane} elements exceeds the {width}-element linear texture"),
                });
            }
            per_launch = per_launch.min(width / plane.max(1));
        }
        let per_launch = per_launch.max(1);
        let mut launches = Vec::new();
        let mut begin = 0;
        while begin < shape.planes {
            let end = (begin + per_launch).min(shape.planes);
            let blocks = match tile {
                Some(_) => (end - begin) as u64 * threads_per_plane,
                None => ((end - begin) as u64 * threads_per_plane).div_ceil(POOL_BLOCK as u64),
            };
            launches.push(Launch {
                args: PoolArgs {
                    plane_begin: begin as u64,
                    plane_end: end as u64,
                    ..base
                },
                cfg: LaunchConfig {
                    grid_dim: (blocks as u32, 1, 1),
                    block_dim: (POOL_BLOCK, 1, 1),
                    shared_mem_bytes: tile.map_or(0, |t| t.bytes as u32),
                },
            });
            begin = end;
        }
        let variant = PoolVariant::ALL[kernel.index()];
        let ids = &gpu.family::<PoolKernels>()?.ids[instance as usize];
        let three = kernel == PoolKernel::Vectorized && vectorized3(&shape, size);
        let (symbol, argmax) = match three {
            true => (VECTORIZED3, Some(VECTORIZED3_ARGMAX)),
            false => (kernel.index(), kernel.argmax_symbol()),
        };
        let argmax = argmax.filter(|_| shape.op == PoolOp::Max);
        let kernels = (
            gpu.kernel(ids[symbol])?.clone(),
            argmax.map(|i| gpu.kernel(ids[i]).cloned()).transpose()?,
        );
        Ok(PoolPlan {
            instance,
            kernel,
            kernels,
            variant,
            three,
            output: (oh, ow),
            launches,
            input_len,
            textures: Mutex::new(None),
            _t: std::marker::PhantomData,
        })
    }

    /// The variant that runs (`Auto` resolved).
    pub fn variant(&self) -> PoolVariant {
        self.variant
    }

    /// `(oh, ow)` of each output plane.
    pub fn output_size(&self) -> (usize, usize) {
        self.output
    }

    /// Creates the texture objects over `x` unless this plan already holds them (Texture plans;
    /// a no-op otherwise). [`PoolPlan::enqueue`] calls it; call it yourself to time it.
    pub fn prepare_texture(&self, gpu: &Gpu, x: &CudaSlice<T>) -> Result<()> {
        if self.kernel != PoolKernel::Texture {
            return Ok(());
        }
        let (ptr, _sync) = x.device_ptr(gpu.stream());
        let key = (ptr, x.len());
        let mut held = self.textures.lock().unwrap_or_else(|e| e.into_inner());
        if held.as_ref().is_some_and(|t| t.key == key) {
            return Ok(());
        }
        *held = None; // drains the stream and destroys the objects over the previous buffer
        let align = gpu.family::<PoolKernels>()?.texture_limits(gpu)?.alignment as u64;
        let size = size_of::<T>() as u64;
        let mut textures = Textures {
            key,
            objects: Vec::new(),
            stream: gpu.stream().clone(),
        };
        let plane = self.launches[0].args.h as u64 * self.launches[0].args.w as u64;
        for l in &self.launches {
            let first = ptr + l.args.plane_begin * plane * size;
            let slack = first % align; // element `first` sits `slack` bytes into the object
            let start = first - slack;
            let end = ptr + l.args.plane_end * plane * size;
            let (format, channels) = T::TEXTURE_FORMAT;
            let mut res: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
            res.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_LINEAR;
            res.res.linear = sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3 {
                devPtr: start,
                format,
                numChannels: channels,
                sizeInBytes: (end - start) as usize,
            };
            // SAFETY: all-zero is a valid CUDA_TEXTURE_DESC (clamp addressing, point filtering).
            let mut tex: sys::CUDA_TEXTURE_DESC = unsafe { std::mem::zeroed() };
            tex.flags = sys::CU_TRSF_READ_AS_INTEGER;
            let mut object: sys::CUtexObject = 0;
            gpu.context().bind_to_thread()?;
            // SAFETY: the descriptors are initialized; the range lies in `x`'s allocation except
            // for up to `align − 1` bytes before it (alignment slack the kernel never indexes).
            unsafe { sys::cuTexObjectCreate(&mut object, &res, &tex, std::ptr::null()) }.result()?;
            // Texture element 0 is input element `plane_begin · plane − slack / size` (wrapping).
            let base = (l.args.plane_begin * plane).wrapping_sub(slack / size);
            textures.objects.push((object, base));
        }
        *held = Some(textures);
        Ok(())
    }

    /// Destroys the texture objects this plan holds (after draining the stream).
    pub fn release_texture(&self) {
        *self.textures.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Enqueues the pooling of `x` (its first `planes · h · w` elements, C order) into `y` (and
    /// the argmax into `indices` for max pooling, when given). Asynchronous. `ConstantInput`
    /// first copies `x` into its kernel's constant bank (`host/bank.rs`'s protocol).
    pub fn enqueue(
        &self,
        gpu: &Gpu,
        x: &CudaSlice<T>,
        y: &mut CudaSlice<T>,
        indices: Option<&mut CudaSlice<i64>>,
    ) -> Result<()> {
        let out_len = self
            .launches
            .last()
            .map_or(0, |l| l.args.plane_end as usize * self.output.0 * self.output.1);
        check_buffers([
            ("x", x.len(), self.input_len),
            ("y", y.len(), out_len),
            ("indices", indices.as_ref().map_or(out_len, |i| i.len()), out_len),
        ])?;
        if self.instance != T::MAX_INSTANCE && indices.is_some() {
            return Err(Error::InvalidArgument {
                name: "indices",
                reason: "only max pooling has indices".into(),
            });
        }
        let _order = gpu.order_after(
            [x.stream(), y.stream()]
                .into_iter()
                .chain(indices.as_ref().map(|i| i.stream())),
        )?;
        let stream = gpu.stream();
        let idx_ptr: u64 = indices.map_or(0, |i| i.device_ptr(stream).0);
        if self.kernel == PoolKernel::Vectorized {
            let (xp, yp) = (x.device_ptr(stream).0, y.device_ptr(stream).0);
            // (The 3-wide kernel stores element by element: only its input needs the alignment.)
            if xp % 16 != 0 || (yp % 16 != 0 && !self.three) {
                return Err(Error::Unsupported {
                    variant: PoolVariant::Vectorized.name(),
                    reason: format!("buffers at {xp:#x} and {yp:#x} are not both 16-byte aligned"),
                });
            }
        }
        self.prepare_texture(gpu, x)?;
        let kernel = match (&self.kernels, idx_ptr) {
            ((_, Some(argmax)), 1..) => argmax,
            ((k, _), _) => k,
        };
        let held = self.textures.lock().unwrap_or_else(|e| e.into_inner());
        let mut launch_all = || -> Result<()> {
            for (i, l) in self.launches.iter().enumerate() {
                let mut args = l.args;
                // The shared tile loads vectors only from a 16-byte aligned input.
                args.vectors &= (x.device_ptr(stream).0 % 16 == 0) as u32;
                let mut tex = 0u64;
                if let Some(t) = held.as_ref() {
                    (tex, args.texture_base) = t.objects[i];
                }
                let mut b = kernel.launch_on(gpu)?;
                b.arg(x).arg(&tex).arg(&mut *y).arg(&idx_ptr).arg(&args);
                // SAFETY: the arguments match `(x: *const T, tex: u64, y: *mut T, idx: *mut i64,
                // args: PoolArgs)` of every `gpuprims_pool_*` entry; x and y hold the plan's
                // input and outputs (checked above), idx is null or holds the outputs; the
                // vectorized kernel's geometry and alignment were checked, the shared tile's
                // shared memory sized by `tile_geometry`; the texture objects
                // cover this launch's planes; the constant bank holds x for ConstantInput.
                unsafe { b.launch(l.cfg) }?;
            }
            Ok(())
        };
        let Some(bank) = kernel.bank() else {
            return launch_all();
        };
        let (src, _sync) = x.device_ptr(stream);
        // SAFETY: `src` addresses the input's bytes (≤ the bank: checked in `new`), alive and
        // unchanged until the stream-ordered copy ran. A fresh content id: the input's contents
        // may differ from any earlier call's.
        unsafe {
            bank.with_content(
                gpu,
                BankContent::fresh(),
                src,
                self.input_len * size_of::<T>(),
                launch_all,
            )
        }
    }
}

impl<T: AvgPoolElement> PoolPlan<T> {
    /// Plans average pooling of `shape` (of element type `T`) with `variant`.
    pub fn avg(gpu: &Gpu, shape: PoolShape, variant: PoolVariant) -> Result<Self> {
        Self::new(gpu, T::AVG_INSTANCE, shape, variant)
    }
}
