//! Fused chains of u8 2D ops: a [`Chain`] of steps run by [`Gpu::chain`] (or a [`ChainPlan`]) in
//! one kernel per output tile, through `kernels-gpu/src/chain/`.
//!
//! # Semantics
//! A chain's result is, bit for bit, its ops run one by one with the same border: each step
//! extends *its* input past the image by the border, as the op alone does. Steps:
//!
//! | step | op run alone |
//! |---|---|
//! | [`Chain::gaussian3x3`] | [`Gpu::gaussian3x3`] (`(Σ + 8) >> 4`) |
//! | [`Chain::dilate`]`((kh, kw))`, odd sides up to 5 | [`Gpu::dilate`] |
//! | [`Chain::erode`]`((kh, kw))`, odd sides up to 5 | [`Gpu::erode`] |
//! | [`Chain::threshold`]`(t)` | `255` where the pixel is above `t`, else `0` |
//! | [`Chain::scale_offset`]`(a, b)` | `a·v + b` as one f32 fused multiply-add, rounded half to even, clamped to u8 |
//! | [`Chain::lookup`]`(table)` | `table[v]` (any u8 → u8 point op) |
//! | [`Chain::sobel`]`(axis)`, last | [`Gpu::sobel`] (u8 → i16) |
//! | [`Chain::sobel_magnitude`]`()`, last | [`Gpu::sobel_magnitude`] (u8 → f32) |
//!
//! The image is read once and the result written once; the intermediates live in shared
//! memory. The halo a launch stages grows with each step's reach; past 8 pixels on a side the
//! plan runs the chain as several fused segments through an intermediate image (never an error).
//! Point steps cost a table lookup per pixel and no halo: the plan composes each run of them
//! into one table applied to the output of the step before it (or to the input it stages).
//!
//! # Speed
//! Two kernels compute every step on packed 4-pixel words ([`ChainVariant`]): `Tiles`, any
//! chain, through shared memory, each thread down a strip of one word column per step; and
//! `Stream`, the chains Gaussian → dilation or erosion 3 × 3 → Sobel, each warp down a strip of
//! rows with the three steps in registers. Both are bound by instruction issue, the tuned
//! single-op kernels by memory. On the H100 (W12, Gaussian → dilation → Sobel): 25.5 µs streamed
//! and 32.6 by tiles against 54.8 µs for the three ops one by one on 64 × 512², 85.8 and 93.7
//! against 167.6 µs on one 8192² image (the Sobel alone: 71.3); two point steps between the
//! stencils add 6–20 µs by tiles, where each would be a pass over memory one by one
//! (docs/PERFORMANCE.md, *Fused chains*). A chain buys one launch, no intermediate images,
//! nearly free point steps and, for the W12 chain, 1.95–2.15 × the ops one by one.
//!
//! ```no_run
//! use gpuprims::{Border, Chain, Gpu};
//! let gpu = Gpu::new()?;
//! let frames = ndarray::Array3::<u8>::from_shape_fn((64, 512, 512), |(n, y, x)| ((n + x * y) % 251) as u8);
//! let edges = Chain::new().gaussian3x3().dilate((3, 3)).sobel(1);
//! let g = gpu.chain(&frames, &edges, Border::Replicate)?; // (64, 512, 512) i16, one launch
//! # let _ = g;
//! # Ok::<(), gpuprims::Error>(())
//! ```
//!
//! # Errors
//! An empty chain, a dilation or erosion side that is even, zero or above 5, a Sobel axis other
//! than 0 or 1: [`Error::InvalidArgument`] naming the step. Fewer than 2 dimensions or a side
//! of 2^30 or more: as the single ops. An empty batch or plane gives an empty result.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use ndarray::Dimension;

use crate::abi::chain::{
    CHAIN_BLOCK, CHAIN_LUT_BYTES, CHAIN_MAX_HALO, CHAIN_MAX_STEPS, CHAIN_NAMES, CHAIN_OUT_F32, CHAIN_OUT_I16,
    CHAIN_OUT_U8, CHAIN_STREAM_BLOCK, CHAIN_STREAM_MIN_ROWS, CHAIN_STREAM_ROWS, CHAIN_STREAM_WORDS, CHAIN_TILE_H,
    CHAIN_TILE_W, ChainArgs, ChainKind, ChainStep, ChainStreamArgs, chain_layout,
};
use crate::array::{DeviceArray, Operand};
use crate::border::Border;
use crate::error::{Error, Result};
use crate::family::Family;
use crate::gpu::Gpu;
use crate::kernels::{KernelId, Resolver};
use crate::loader::Kernel;
use crate::ops::filter2d::{Filter2dElement, Filter2dShape};
use crate::ops::{check_buffers, planes_and_size};

/// A chain's output element: u8, i16 after a Sobel step, f32 after a Sobel magnitude.
pub trait ChainOutput: DeviceRepr + Clone + Copy + Send + Sync + 'static {
    /// The kernel writing it (`CHAIN_OUT_*`).
    #[doc(hidden)]
    const OUT: u32;
}

impl ChainOutput for u8 {
    const OUT: u32 = CHAIN_OUT_U8;
}

impl ChainOutput for i16 {
    const OUT: u32 = CHAIN_OUT_I16;
}

impl ChainOutput for f32 {
    const OUT: u32 = CHAIN_OUT_F32;
}

/// Which fused kernel runs a chain ([`ChainPlan::with_variant`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ChainVariant {
    /// One block per 128 × 128 output tile: the tile and its halo staged in shared memory, each
    /// step a pass over the shared buffers (a barrier between steps). Any chain.
    Tiles,
    /// Each warp down a strip of rows 120 pixels wide, every step in registers (neighbours by
    /// warp shuffles, no shared memory, no barrier), the steps fixed at compile time: the chains
    /// Gaussian 3 × 3 → dilation or erosion 3 × 3 → Sobel (either axis), without point steps,
    /// on planes whose width is a multiple of 4 and height at least 4 (otherwise
    /// [`Error::Unsupported`]). A buffer not aligned to four elements runs `Tiles`.
    Stream,
    /// `Stream` where it applies, else `Tiles`.
    #[default]
    Auto,
}

impl ChainVariant {
    /// The ladder, in order (without `Auto`).
    pub const ALL: [ChainVariant; 2] = [ChainVariant::Tiles, ChainVariant::Stream];

    /// Short name (tables, errors).
    pub const fn name(self) -> &'static str {
        match self {
            ChainVariant::Tiles => "tiles",
            ChainVariant::Stream => "stream",
            ChainVariant::Auto => "auto",
        }
    }
}

/// A sequence of u8 2D ops run as one fused pass ([module docs](self)). Build it with the step
/// methods; a Sobel step ends it (its output is i16).
#[derive(Clone, Debug, PartialEq)]
pub struct Chain<O = u8> {
    steps: Vec<ChainStep>,
    /// Each step's lookup table (point steps; zeros for the others).
    tables: Vec<[u8; 256]>,
    _out: PhantomData<O>,
}

impl Default for Chain<u8> {
    fn default() -> Self {
        Chain::new()
    }
}

impl Chain<u8> {
    /// An empty chain (running it is an error: add steps).
    pub fn new() -> Self {
        Chain {
            steps: Vec::new(),
            tables: Vec::new(),
            _out: PhantomData,
        }
    }

    fn push(mut self, kind: ChainKind, (kh, kw): (usize, usize), param: u32) -> Self {
        self.steps.push(ChainStep {
            kind: kind as u32,
            kh: kh.min(u32::MAX as usize) as u32,
            kw: kw.min(u32::MAX as usize) as u32,
            param,
            table: 0,
        });
        self.tables.push([0; 256]);
        self
    }

    /// The 3 × 3 Gaussian `[1 2 1]ᵀ[1 2 1] / 16`, rounded (`(Σ + 8) >> 4`), as [`Gpu::gaussian3x3`].
    pub fn gaussian3x3(self) -> Self {
        self.push(ChainKind::Gaussian3x3, (3, 3), 0)
    }

    /// Grey dilation over a `(kh, kw)` rectangle, odd sides up to 5, as [`Gpu::dilate`].
    pub fn dilate(self, window: (usize, usize)) -> Self {
        self.push(ChainKind::Dilate, window, 0)
    }

    /// Grey erosion over a `(kh, kw)` rectangle, odd sides up to 5, as [`Gpu::erode`].
    pub fn erode(self, window: (usize, usize)) -> Self {
        self.push(ChainKind::Erode, window, 0)
    }

    /// `255` where the pixel is above `level`, else `0`.
    pub fn threshold(self, level: u8) -> Self {
        self.lookup(std::array::from_fn(|v| if v > level as usize { 255 } else { 0 }))
    }

    /// `scale · v + offset` saturated to u8: the product and sum as one f32 fused multiply-add,
    /// rounded half to even, clamped to `0 ..= 255` (NaN gives 0) — numpy's
    /// `np.clip(np.rint(np.float32(scale) * v + np.float32(offset)), 0, 255)` but for the single
    /// rounding of the fused multiply-add.
    pub fn scale_offset(self, scale: f32, offset: f32) -> Self {
        self.lookup(std::array::from_fn(|v| scale_offset_u8(v as u8, scale, offset)))
    }

    /// Each pixel `v` replaced by `table[v]` (any u8 → u8 point op: gamma, inversion, a
    /// colour map's index, …).
    pub fn lookup(self, table: [u8; 256]) -> Self {
        let mut c = self.push(ChainKind::Point, (1, 1), 0);
        *c.tables.last_mut().expect("just pushed") = table;
        c
    }

    /// The Sobel derivative along `axis` (0: down the columns, 1: along the rows) as i16, as
    /// [`Gpu::sobel`]; the chain's last step.
    pub fn sobel(self, axis: usize) -> Chain<i16> {
        let kind = if axis == 0 {
            ChainKind::Sobel0
        } else {
            ChainKind::Sobel1
        };
        let param = if axis > 1 { u32::MAX } else { 0 };
        self.push(kind, (3, 3), param).ending()
    }

    /// The gradient magnitude `√(sobel(x, 0)² + sobel(x, 1)²)` in f32, as
    /// [`Gpu::sobel_magnitude`] bit for bit; the chain's last step.
    pub fn sobel_magnitude(self) -> Chain<f32> {
        self.push(ChainKind::SobelMagnitude, (3, 3), 0).ending()
    }

    /// The chain with its last step's output type.
    fn ending<O>(self) -> Chain<O> {
        Chain {
            steps: self.steps,
            tables: self.tables,
            _out: PhantomData,
        }
    }
}

impl<O> Chain<O> {
    /// Steps in the chain.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether the chain has no step.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The steps, each checked, and their tables.
    fn checked(&self) -> Result<(&[ChainStep], &[[u8; 256]])> {
        if self.steps.is_empty() {
            return Err(Error::InvalidArgument {
                name: "chain",
                reason: "a chain needs at least one step".into(),
            });
        }
        for (i, s) in self.steps.iter().enumerate() {
            let morph = s.kind == ChainKind::Dilate as u32 || s.kind == ChainKind::Erode as u32;
            if morph && [s.kh, s.kw].iter().any(|&k| k == 0 || k > 5 || k % 2 == 0) {
                return Err(Error::InvalidArgument {
                    name: "chain",
                    reason: format!(
                        "step {i}: a chained dilation or erosion needs odd sides up to 5, got {} × {}",
                        s.kh, s.kw
                    ),
                });
            }
            if s.param == u32::MAX {
                return Err(Error::InvalidArgument {
                    name: "chain",
                    reason: format!("step {i}: a Sobel axis is 0 or 1"),
                });
            }
        }
        Ok((&self.steps, &self.tables))
    }
}

/// [`Chain::scale_offset`] of one pixel.
fn scale_offset_u8(v: u8, scale: f32, offset: f32) -> u8 {
    let y = scale.mul_add(v as f32, offset).round_ties_even();
    if y.is_nan() { 0 } else { y.clamp(0.0, 255.0) as u8 }
}

macro_rules! stream_table {
    ($($name:ident => $a:ident, $b:ident, $c:ident;)*) => {
        /// The streamed chains' step kinds (morphology 3 × 3) and kernel symbols.
        const STREAMS: &[([ChainKind; 3], &str)] =
            &[$(([ChainKind::$a, ChainKind::$b, ChainKind::$c], crate::chain_stream_name!($name))),*];
    };
}
crate::for_each_chain_stream!(stream_table);

/// The chain family's kernels: the tile kernels (u8, i16 and f32 output) and the streamed
/// chains'.
pub(crate) struct ChainKernels {
    /// Indexed by `CHAIN_OUT_*`.
    ids: [KernelId; 3],
    /// In [`STREAMS`] order.
    streams: Vec<KernelId>,
}

impl Family for ChainKernels {
    fn load(k: &mut Resolver) -> Result<Self> {
        Ok(ChainKernels {
            ids: [k.one(CHAIN_NAMES[0])?, k.one(CHAIN_NAMES[1])?, k.one(CHAIN_NAMES[2])?],
            streams: STREAMS.iter().map(|(_, name)| k.one(name)).collect::<Result<_>>()?,
        })
    }
}

// SAFETY: `repr(C)` plain integers; the layout is the contract both sides compile.
unsafe impl DeviceRepr for ChainArgs {}
// SAFETY: as above.
unsafe impl DeviceRepr for ChainStreamArgs {}

/// The streamed kernel's launch of a plan ([`ChainVariant::Stream`]).
struct StreamLaunch {
    args: ChainStreamArgs,
    kernel: Arc<Kernel>,
    cfg: LaunchConfig,
}

/// The streamed kernel's strips of `rows` rows (at least `CHAIN_STREAM_MIN_ROWS`, at most the
/// plane's; the last strip of a plane takes the rest) over `shape` in `groups` warp columns: the
/// arguments' `[strips, strip_h, warps]` and the grid's blocks. [`Error::Unsupported`] past the
/// grid's limits.
fn stream_grid(shape: Filter2dShape, groups: usize, rows: usize) -> Result<([u32; 3], u32)> {
    let rows = rows.clamp(CHAIN_STREAM_MIN_ROWS as usize, shape.h);
    let strips = shape.h / rows;
    let warps = shape.planes as u64 * groups as u64 * strips as u64;
    let blocks = warps.div_ceil((CHAIN_STREAM_BLOCK / 32) as u64);
    if warps > u32::MAX as u64 || blocks >= i32::MAX as u64 {
        return Err(Error::Unsupported {
            variant: "stream",
            reason: format!("{warps} warps exceed the grid limit; split the batch of planes"),
        });
    }
    Ok(([strips as u32, rows as u32, warps as u32], blocks as u32))
}

/// The [`STREAMS`] entry running `steps` over `shape`, or why none does.
fn stream_index(steps: &[ChainStep], shape: Filter2dShape) -> std::result::Result<usize, String> {
    let kinds: Vec<u32> = steps.iter().map(|s| s.kind).collect();
    let found = STREAMS
        .iter()
        .position(|(k, _)| kinds.len() == 3 && k.iter().zip(&kinds).all(|(a, b)| *a as u32 == *b));
    let Some(i) = found else {
        return Err(
            "streamed chains are Gaussian 3 × 3 → dilation or erosion 3 × 3 → Sobel, without point steps".into(),
        );
    };
    if steps.iter().any(|s| (s.kh, s.kw) != (3, 3)) {
        return Err(format!(
            "a streamed chain's morphology is 3 × 3, got {} × {}",
            steps[1].kh, steps[1].kw
        ));
    }
    if !shape.w.is_multiple_of(4) || shape.h < CHAIN_STREAM_MIN_ROWS as usize {
        return Err(format!(
            "a streamed chain needs planes at least {CHAIN_STREAM_MIN_ROWS} rows high and a width that is a \
             multiple of 4, got {} × {}",
            shape.h, shape.w
        ));
    }
    Ok(i)
}

/// One fused launch of a plan: its steps' arguments and lookup tables, kernel (u8 or i16
/// output) and grid.
struct Segment {
    args: ChainArgs,
    tables: CudaSlice<u8>,
    kernel: Arc<Kernel>,
    cfg: LaunchConfig,
}

/// Splits `steps` into segments whose halos fit [`CHAIN_MAX_HALO`] on every side and whose
/// steps, point steps folded ([`fold_points`]), fit the [`CHAIN_MAX_STEPS`] of a launch.
fn segments(steps: &[ChainStep]) -> Vec<&[ChainStep]> {
    let point = |s: &ChainStep| s.kind == ChainKind::Point as u32;
    let mut out = Vec::new();
    let mut start = 0;
    let mut halo = [0u32; 4];
    // The segment's steps after folding: its window steps (point steps fold into them).
    let mut windows = 0;
    for (i, s) in steps.iter().enumerate() {
        let e = s.extents();
        let grown: Vec<u32> = halo.iter().zip(e).map(|(h, e)| h + e).collect();
        let full = windows == CHAIN_MAX_STEPS && !point(s);
        if i > start && (grown.iter().any(|&h| h > CHAIN_MAX_HALO) || full) {
            out.push(&steps[start..i]);
            start = i;
            halo = e;
            windows = 0;
        } else {
            halo.copy_from_slice(&grown);
        }
        windows += !point(s) as usize;
    }
    out.push(&steps[start..]);
    out
}

/// A launch's steps with its point steps folded: each run of point steps composed into one
/// table applied to the output of the step before it, or to the staged input when the run
/// leads; a launch of point steps only keeps one point step (its composed table). Returns the
/// steps, the staging's table (`1 + t`, 0: none) and the tables.
fn fold_points(part: &[ChainStep], tables: &[[u8; 256]]) -> (Vec<ChainStep>, u32, Vec<[u8; 256]>) {
    let (mut steps, mut stage, mut luts) = (Vec::<ChainStep>::new(), 0u32, Vec::<[u8; 256]>::new());
    for (s, t) in part.iter().zip(tables) {
        if s.kind != ChainKind::Point as u32 {
            steps.push(ChainStep { table: 0, ..*s });
            continue;
        }
        let target = match steps.last_mut() {
            Some(before) => &mut before.table,
            None => &mut stage,
        };
        match *target {
            0 => {
                luts.push(*t);
                *target = luts.len() as u32;
            }
            k => {
                let composed = &mut luts[k as usize - 1];
                *composed = std::array::from_fn(|v| t[composed[v] as usize]);
            }
        }
    }
    if steps.is_empty() {
        steps.push(ChainStep {
            kind: ChainKind::Point as u32,
            kh: 1,
            kw: 1,
            param: 0,
            table: std::mem::take(&mut stage),
        });
    }
    (steps, stage, luts)
}

/// A prepared chain over `(planes, h, w)` u8 images: its fused segments (one launch each; more
/// than one only when the halo outgrows a launch) and their intermediate image. Reusable across
/// inputs of its shape.
pub struct ChainPlan<O: ChainOutput> {
    shape: Filter2dShape,
    /// The streamed kernel, where the variant chose it (the tile segments below still run a
    /// misaligned buffer).
    stream: Option<StreamLaunch>,
    segments: Vec<Segment>,
    /// Intermediate images between segments (ping-pong), when there are several.
    scratch: Vec<CudaSlice<u8>>,
    _out: PhantomData<O>,
}

impl<O: ChainOutput> ChainPlan<O> {
    /// Plans `chain` over `shape` with `border` ([`ChainVariant::Auto`]).
    pub fn new(gpu: &Gpu, shape: Filter2dShape, chain: &Chain<O>, border: Border) -> Result<Self> {
        Self::with_variant(gpu, shape, chain, border, ChainVariant::Auto)
    }

    /// Plans `chain` over `shape` with `border`, run by `variant`.
    pub fn with_variant(
        gpu: &Gpu,
        shape: Filter2dShape,
        chain: &Chain<O>,
        border: Border,
        variant: ChainVariant,
    ) -> Result<Self> {
        let (steps, tables) = chain.checked()?;
        for (name, v) in [("height", shape.h), ("width", shape.w)] {
            if v >= 1 << 30 {
                return Err(Error::InvalidArgument {
                    name,
                    reason: format!("{v} exceeds the 2D filters' maximum side of {}", (1 << 30) - 1),
                });
            }
        }
        let (mode, v) = border.device();
        let cval = <u8 as Filter2dElement>::from_f64(v) as u32;
        let kernels = gpu.family::<ChainKernels>()?;
        let (tiles_x, tiles_y) = (
            (shape.w as u32).div_ceil(CHAIN_TILE_W),
            (shape.h as u32).div_ceil(CHAIN_TILE_H),
        );
        let blocks = shape.planes as u64 * tiles_x as u64 * tiles_y as u64;
        if blocks >= i32::MAX as u64 {
            return Err(Error::Unsupported {
                variant: "chain",
                reason: format!("{blocks} blocks exceed the grid limit; split the batch of planes"),
            });
        }
        let parts = segments(steps);
        let count = parts.len();
        let mut out = Vec::with_capacity(count);
        let mut first = 0;
        for (i, part) in parts.into_iter().enumerate() {
            let mut halo = [0u32; 4];
            for s in part {
                for (h, e) in halo.iter_mut().zip(s.extents()) {
                    *h += e;
                }
            }
            let (folded, stage_table, luts) = fold_points(part, &tables[first..first + part.len()]);
            first += part.len();
            let layout = chain_layout(halo, luts.len() as u32);
            let mut args = ChainArgs {
                h: shape.h as u32,
                w: shape.w as u32,
                tiles_x,
                tiles_y,
                border: mode as u32,
                cval,
                n_steps: folded.len() as u32,
                n_tables: luts.len() as u32,
                stage_table,
                row_align: 1,
                halo,
                steps: [ChainStep::default(); CHAIN_MAX_STEPS],
            };
            args.steps[..folded.len()].copy_from_slice(&folded);
            // At least one table's bytes, so the buffer is never empty.
            let mut luts: Vec<u8> = luts.concat();
            luts.resize(luts.len().max(CHAIN_LUT_BYTES as usize), 0);
            // The last segment's kernel writes the chain's output type; the others u8.
            let out_kind = if i + 1 == count { O::OUT } else { CHAIN_OUT_U8 };
            out.push(Segment {
                args,
                tables: gpu.stream().clone_htod(&luts)?,
                kernel: gpu.kernel(kernels.ids[out_kind as usize])?.clone(),
                cfg: LaunchConfig {
                    grid_dim: (blocks as u32, 1, 1),
                    block_dim: (CHAIN_BLOCK, 1, 1),
                    shared_mem_bytes: layout.shared_bytes,
                },
            });
        }
        let stream = match (variant, stream_index(steps, shape)) {
            (ChainVariant::Tiles, _) | (ChainVariant::Auto, Err(_)) => None,
            (ChainVariant::Stream, Err(reason)) => {
                return Err(Error::Unsupported {
                    variant: "stream",
                    reason,
                });
            }
            (_, Ok(i)) => {
                let groups = (shape.w / 4).div_ceil(CHAIN_STREAM_WORDS as usize);
                let ([strips, strip_h, warps], blocks) = stream_grid(shape, groups, CHAIN_STREAM_ROWS as usize)?;
                Some(StreamLaunch {
                    args: ChainStreamArgs {
                        h: shape.h as u32,
                        w: shape.w as u32,
                        groups: groups as u32,
                        strips,
                        strip_h,
                        warps,
                        border: mode as u32,
                        cval,
                    },
                    kernel: gpu.kernel(kernels.streams[i])?.clone(),
                    cfg: LaunchConfig {
                        grid_dim: (blocks, 1, 1),
                        block_dim: (CHAIN_STREAM_BLOCK, 1, 1),
                        shared_mem_bytes: 0,
                    },
                })
            }
        };
        let n = shape.planes * shape.h * shape.w;
        let scratch = (0..(count - 1).min(2))
            // SAFETY: plain bytes, written in full by a segment before the next reads them.
            .map(|_| Ok(unsafe { gpu.stream().alloc::<u8>(n.max(1)) }?))
            .collect::<Result<Vec<_>>>()?;
        Ok(ChainPlan {
            shape,
            stream,
            segments: out,
            scratch,
            _out: PhantomData,
        })
    }

    /// Fused launches the plan runs (1 unless the halo outgrew a launch).
    pub fn launches(&self) -> usize {
        match self.stream {
            Some(_) => 1,
            None => self.segments.len(),
        }
    }

    /// The variant the plan runs (`Auto` resolved; a buffer not aligned to four elements runs
    /// `Tiles` whatever this says).
    pub fn variant(&self) -> ChainVariant {
        match self.stream {
            Some(_) => ChainVariant::Stream,
            None => ChainVariant::Tiles,
        }
    }

    /// Rows of the streamed kernel's strips (the last strip of a plane takes the rest), `None`
    /// for the tile kernel. For tuning: [`ChainPlan::set_strip_rows`].
    #[doc(hidden)]
    pub fn strip_rows(&self) -> Option<usize> {
        self.stream.as_ref().map(|s| s.args.strip_h as usize)
    }

    /// Sets the streamed kernel's strip height (at least 4 rows; the plane's rows at most;
    /// `CHAIN_STREAM_ROWS` by default). For tuning; no effect on the tile kernel.
    #[doc(hidden)]
    pub fn set_strip_rows(&mut self, rows: usize) -> Result<()> {
        if let Some(s) = &mut self.stream {
            let ([strips, strip_h, warps], blocks) = stream_grid(self.shape, s.args.groups as usize, rows)?;
            s.args = ChainStreamArgs {
                strips,
                strip_h,
                warps,
                ..s.args
            };
            s.cfg.grid_dim.0 = blocks;
        }
        Ok(())
    }

    /// Enqueues the chain over `x` into `y` (their first `planes · h · w` elements, C order).
    /// Asynchronous.
    pub fn enqueue(&self, gpu: &Gpu, x: &CudaSlice<u8>, y: &mut CudaSlice<O>) -> Result<()> {
        let n = self.shape.len();
        check_buffers([("x", x.len(), n), ("y", y.len(), n)])?;
        if n == 0 {
            return Ok(());
        }
        let _order = gpu.order_after(
            [x.stream(), y.stream()]
                .into_iter()
                .chain(self.scratch.iter().map(|s| s.stream()))
                .chain(self.segments.iter().map(|s| s.tables.stream())),
        )?;
        let stream = gpu.stream();
        let last = self.segments.len() - 1;
        let x_at = x.device_ptr(stream).0;
        let y_at = y.device_ptr(stream).0;
        let out_bytes = std::mem::size_of::<O>() as u64;
        if let Some(s) = &self.stream
            && x_at % 4 == 0
            && y_at % (4 * out_bytes) == 0
        {
            let mut b = s.kernel.launch_on(gpu)?;
            b.arg(&x_at).arg(&y_at).arg(&s.args);
            // SAFETY: `(x: *const u8, y: *mut O, a: ChainStreamArgs)`: x and y hold the plan's
            // planes (checked above), aligned to four elements; the width is a multiple of 4 and
            // the rows at least CHAIN_STREAM_MIN_ROWS (`stream_index`); the grid covers the
            // args' warps; the kernel writes O (its chain's last step).
            unsafe { b.launch(s.cfg) }?;
            return Ok(());
        }
        for (i, s) in self.segments.iter().enumerate() {
            let src = match i {
                0 => x_at,
                _ => self.scratch[(i - 1) % 2].device_ptr(stream).0,
            };
            let dst = match i {
                _ if i == last => y_at,
                _ => self.scratch[i % 2].device_ptr(stream).0,
            };
            // How whole the rows are: 16-byte vectors or words when the width allows and both
            // buffers are 16-byte aligned (the scratch images are fresh allocations).
            let w = self.shape.w;
            let row_align = match (src | dst) % 16 == 0 {
                true if w.is_multiple_of(16) => 16,
                true if w.is_multiple_of(4) => 4,
                _ => 1,
            };
            let args = ChainArgs { row_align, ..s.args };
            let tables = s.tables.device_ptr(stream).0;
            let mut b = s.kernel.launch_on(gpu)?;
            b.arg(&src).arg(&dst).arg(&tables).arg(&args);
            // SAFETY: `(x: *const u8, y: *mut u8|i16, lut: *const u8, a: ChainArgs)`; src and
            // dst hold the plan's planes (checked above, or the plan's scratch), aligned as
            // `row_align` says; `tables` holds the segment's 256-byte tables; the shared
            // memory is the segment's `chain_layout`; the steps were checked and their extents
            // sum to the halo; only the last segment of a Sobel (magnitude) chain has the i16
            // (f32) kernel.
            unsafe { b.launch(s.cfg) }?;
        }
        Ok(())
    }
}

impl Gpu {
    /// Runs `chain` over the last two axes of `x` with `border`, one fused pass ([`Chain`]).
    pub fn chain<O: ChainOutput, X: Operand<Elem = u8>>(
        &self,
        x: X,
        chain: &Chain<O>,
        border: Border,
    ) -> Result<X::Output<O>> {
        let dim = x.dims();
        let (planes, h, w) = planes_and_size(dim.slice())?;
        let plan = ChainPlan::new(self, Filter2dShape { planes, h, w }, chain, border)?;
        let mut y = DeviceArray::<O, X::Dim>::uninit(self, dim)?;
        if let Some(input) = x.device(self)? {
            plan.enqueue(self, input.slice(), y.as_mut_slice())?;
        }
        X::finish(self, y)
    }
}
