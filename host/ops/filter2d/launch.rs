//! Launch geometry of the 2D filters: shape and window checks, kernel arguments, grids of
//! tiles and warp tiles, strips, and the stages a plan chains (input → scratch → output).

use super::*;

// ---------------------------------------------------------------------------------------------
// Geometry and launches
// ---------------------------------------------------------------------------------------------

/// Planes and plane size of a filter's input, and the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Filter2dShape {
    pub planes: usize,
    pub h: usize,
    pub w: usize,
}

impl Filter2dShape {
    pub(crate) fn len(&self) -> usize {
        self.planes * self.h * self.w
    }
}

/// Largest image side and window side (32-bit row arithmetic with border positions).
pub(super) const MAX_SIDE: usize = 1 << 30;

pub(super) fn check_shape(s: Filter2dShape) -> Result<()> {
    for (name, v) in [("height", s.h), ("width", s.w)] {
        if v >= MAX_SIDE {
            return Err(Error::InvalidArgument {
                name,
                reason: format!("{v} exceeds the 2D filters' maximum side of {}", MAX_SIDE - 1),
            });
        }
    }
    Ok(())
}

pub(super) fn check_window((kh, kw): (usize, usize)) -> Result<()> {
    if kh == 0 || kw == 0 {
        return Err(Error::InvalidArgument {
            name: "window",
            reason: format!("a window needs at least one sample along each axis, got {kh} × {kw}"),
        });
    }
    for v in [kh, kw] {
        if v >= MAX_SIDE {
            return Err(Error::WindowTooLarge {
                window: v,
                max: MAX_SIDE - 1,
                what: "one side of a 2D window",
            });
        }
    }
    Ok(())
}

/// The base launch arguments.
pub(super) fn args<T: Filter2dElement>(
    s: Filter2dShape,
    (kh, kw): (usize, usize),
    (ay, ax): (usize, usize),
    border: Border,
) -> Filter2dArgs<T> {
    let (mode, v): (BorderMode, f64) = border.device();
    Filter2dArgs {
        planes: s.planes as u64,
        h: s.h as u32,
        w: s.w as u32,
        kh: kh as u32,
        kw: kw as u32,
        ay: ay as u32,
        ax: ax as u32,
        border: mode as u32,
        strip: 0,
        tap_offset: 0,
        shift: 0,
        vector_rows: 0,
        prefetch_rows: 0,
        tiles: WarpTiles::new(1, 1),
        cval: T::from_f64(v),
    }
}

pub(super) fn blocks(n: u64, what: &'static str) -> Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|&b| b < i32::MAX as u32)
        .ok_or_else(|| Error::Unsupported {
            variant: what,
            reason: format!("{n} blocks exceed the grid limit; split the batch of planes"),
        })
}

pub(super) fn cfg(grid: u32, block: u32, smem: u64) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: smem as u32,
    }
}

/// Grid of the grid-stride elementwise kernels (gradient, magnitude) over `n` elements: one
/// thread per element up to 4096 blocks.
pub(super) fn elementwise_grid(n: usize) -> u32 {
    (n as u64).div_ceil(BLOCK_THREADS as u64).min(4 * 1024) as u32
}

/// Grid of `bw × bh`-output tiles.
pub(super) fn tiles(s: Filter2dShape, bw: usize, bh: usize, what: &'static str) -> Result<u32> {
    blocks((s.w.div_ceil(bw) * s.h.div_ceil(bh) * s.planes) as u64, what)
}

/// Where a stage reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Buf {
    Input,
    Scratch,
    Output,
}

/// One kernel launch of a plan.
#[derive(Clone)]
pub(super) struct Stage<T> {
    pub(super) func: Arc<Kernel>,
    pub(super) cfg: LaunchConfig,
    pub(super) args: Filter2dArgs<T>,
    pub(super) from: Buf,
    pub(super) to: Buf,
    /// The kernel launched instead of `func` when the buffers are not 16-byte aligned (`func`
    /// then takes `vector_rows = 0`), for kernels that require aligned rows. Loaded at the first
    /// launch that needs it (device arrays are always aligned; views at an offset may not be).
    pub(super) unaligned: Option<KernelId>,
}

/// The launches for the shared-tile / composed rung; `Err` past the opt-in shared memory.
pub(super) fn tile_launch<T: Filter2dElement>(
    gpu: &Gpu,
    s: Filter2dShape,
    (kh, kw): (usize, usize),
    composed: bool,
    what: &'static str,
) -> Result<LaunchConfig> {
    let smem = tile_smem_bytes(kh as u32, kw as u32, size_of::<T>() as u32, composed);
    let max = gpu.props().shared_mem_per_block_optin as u64;
    if smem > max {
        return Err(Error::WindowTooLarge {
            window: kh * kw,
            max: (max / size_of::<T>() as u64) as usize,
            what,
        });
    }
    Ok(cfg(
        tiles(s, TILE_W as usize, TILE_H as usize, what)?,
        BLOCK_THREADS,
        smem,
    ))
}

/// The row-vector launch: strips of 64 rows (each strip re-reads `K − 1` halo rows, and a thread
/// needs a long strip to keep its `K` row loads in flight), halved (down to 8) only while the grid
/// has fewer than 3 blocks per SM (about one wave at the kernel's occupancy); 16-byte rows when
/// the width is a whole number of vectors (`enqueue` also checks the buffers' alignment).
pub(super) fn row_vector_launch<T: Filter2dElement>(
    gpu: &Gpu,
    s: Filter2dShape,
) -> Result<(LaunchConfig, WarpTiles, u32, u32)> {
    let lanes = 16 / size_of::<T>();
    // A tile is one warp's 32 vectors of a strip (the kernel's `warp_tile_origin`).
    let across = s.w.div_ceil(32 * lanes);
    let strip = warp_strip(gpu, s, across, 64);
    let vector_rows = s.w.is_multiple_of(lanes) as u32;
    let (c, tiles) = warp_tile_grid(s, across, strip, "row-vector")?;
    Ok((c, tiles, strip as u32, vector_rows))
}

/// Rows per warp tile for `columns` warp tiles across a plane: `longest`, halved (down to 8)
/// while the grid would hold fewer than three blocks of warps per SM.
pub(super) fn warp_strip(gpu: &Gpu, s: Filter2dShape, columns: usize, longest: usize) -> usize {
    let warps_per_block = (ROW_VECTOR_THREADS / 32) as usize;
    let target = 3 * gpu.props().sm_count as usize * warps_per_block;
    let mut strip = longest;
    while strip > 8 && columns * s.h.div_ceil(strip) * s.planes < target {
        strip /= 2;
    }
    strip
}

/// Output rows per warp of the word-stream van Herk column pass for a window of `k` rows: 24
/// below 25 rows, 28 up to 47, 32 beyond — whether or not that is a whole number of van Herk
/// blocks (a strip shorter than `k` ends inside its first block's prefix stream; one longer ends
/// part way through a block, whose suffix sweep it still pays). Measured on the H100 (u8 8192²,
/// the column pass alone): against strips of the first multiple of `k` from 30 rows, these took `k` = 7 from 70.1 to 56.0 µs, 15 from 58.6 to 52.9, 25 from 63.7 to
/// 56.8, 31 from 58.3 to 57.4 and 63 from 80.3 to 68.4. Shorter strips (16, 12) lost again:
/// fewer outputs per halo row loaded.
pub(super) fn van_herk_col_strip(k: usize) -> usize {
    match k {
        0..25 => 24,
        25..48 => 28,
        _ => 32,
    }
}

/// The word-stream van Herk column pass for a window of `k` rows: one warp per 128 bytes of
/// columns and a strip of [`van_herk_col_strip`]`(k)` rows (each strip loads `k − 1` rows of
/// halo), shortened while the grid would leave SMs idle. Returns the pass's `(kernel, launch,
/// tiles, strip, vector_rows)`.
pub(super) fn van_herk_col_words_pass(
    gpu: &Gpu,
    s: Filter2dShape,
    k: usize,
    size: usize,
) -> Result<(MorphKernel, LaunchConfig, WarpTiles, u32, u32)> {
    let per = 4 / size;
    let across = s.w.div_ceil(32 * per);
    let strip = warp_strip(gpu, s, across, van_herk_col_strip(k));
    let (mut c, tiles) = warp_tile_grid(s, across, strip, "van-herk")?;
    c.shared_mem_bytes = van_herk_words_smem(k as u32) as u32;
    let vector = s.w.is_multiple_of(per) as u32;
    Ok((MorphKernel::VanHerkColWords, c, tiles, strip as u32, vector))
}

/// The launch of a kernel whose tiles are warps (`warp_tile_origin`), `across` tiles of `rows`
/// rows across each plane: one warp per tile in blocks of `ROW_VECTOR_THREADS`, and the dividers
/// the kernel splits its warp index with (`Filter2dArgs::tiles`). At most 2^32 − 1 warps.
pub(super) fn warp_tile_grid(
    s: Filter2dShape,
    across: usize,
    rows: usize,
    what: &'static str,
) -> Result<(LaunchConfig, WarpTiles)> {
    let down = s.h.div_ceil(rows);
    let warps = across as u64 * down as u64 * s.planes as u64;
    let fits = |n: usize| u32::try_from(n).ok();
    let (Some(a), Some(d), true) = (fits(across), fits(down), warps <= u32::MAX as u64) else {
        return Err(Error::Unsupported {
            variant: what,
            reason: format!("{warps} warp tiles exceed 2^32 − 1; split the batch of planes"),
        });
    };
    let warps_per_block = (ROW_VECTOR_THREADS / 32) as u64;
    let c = cfg(blocks(warps.div_ceil(warps_per_block), what)?, ROW_VECTOR_THREADS, 0);
    Ok((c, WarpTiles::new(a, d)))
}

/// The one stage of a word-tile plan of kernel `inst`: one warp per `word_tile_cols(words) ×
/// rows` tile. Widths that are whole 16-byte vectors take the vector kernel (`word_tile`, with
/// `word_tile_any` for unaligned buffers, which `enqueue` checks), the others `word_tile_any`
/// (word loads when the width is a whole number of words). `Unsupported` for element types other
/// than u8.
pub(super) fn word_tile_stage<T: Filter2dElement>(
    gpu: &Gpu,
    inst: WordTile,
    s: Filter2dShape,
    k: usize,
    border: Border,
) -> Result<Stage<T>> {
    if !T::WORD_TILE {
        return Err(Error::Unsupported {
            variant: "word-tile",
            reason: format!(
                "packs u8 pixels four to a word; {} images take row-vector",
                std::any::type_name::<T>()
            ),
        });
    }
    let kernels = gpu.family::<Filter2dKernels>()?;
    let any = kernels.word_tile_any[inst as usize];
    let words = WordTile::WORDS[inst as usize];
    let vectors = s.w.is_multiple_of(4 * words as usize);
    let func = gpu.kernel(if vectors { kernels.word_tile[inst as usize] } else { any })?;
    let cols = word_tile_cols(words) as usize;
    let rows = WordTile::ROWS[inst as usize] as usize;
    let (c, tiles) = warp_tile_grid(s, s.w.div_ceil(cols), rows, "word-tile")?;
    let mut a = args::<T>(s, (k, k), (k / 2, k / 2), border);
    a.vector_rows = s.w.is_multiple_of(4) as u32;
    a.prefetch_rows = word_tile_prefetch_rows(gpu, func, s, cols, rows, inst.prefetch_fraction())?;
    a.tiles = tiles;
    Ok(Stage {
        func: func.clone(),
        cfg: c,
        args: a,
        from: Buf::Input,
        to: Buf::Output,
        unaligned: vectors.then_some(any),
    })
}

/// The one stage of a `VanHerkTile` plan: a block of `TILE_VH_THREADS` per tile of
/// `TILE_VH_ROWS × TILE_VH_COLS` outputs (tiles across, then down, then planes), the staged
/// input and the column phase's results in shared memory (`tile_vh_smem`, 73 KiB at 31 rows:
/// 3 blocks per SM). Rows of whole 16-byte chunks take vector copies and stores (`enqueue`
/// clears `vector_rows` for unaligned buffers).
pub(super) fn tile_vh_stage<T: Filter2dElement>(
    gpu: &Gpu,
    ext: MorphFold,
    s: Filter2dShape,
    kh: usize,
    base: Filter2dArgs<T>,
    what: &'static str,
) -> Result<Stage<T>> {
    let grid = tiles(s, TILE_VH_COLS as usize, TILE_VH_ROWS as usize, what)?;
    let mut a = base;
    a.vector_rows = s.w.is_multiple_of(16) as u32;
    Ok(Stage {
        func: gpu
            .kernel(gpu.family::<Filter2dKernels>()?.tile_vh[ext as usize])?
            .clone(),
        cfg: cfg(grid, TILE_VH_THREADS, tile_vh_smem(kh as u32) as u64),
        args: a,
        from: Buf::Input,
        to: Buf::Output,
        unaligned: None,
    })
}

/// How far below its own tile a word-tile warp prefetches (`Filter2dArgs::prefetch_rows`): one
/// `fraction`-th of the warps resident on the device ([`WordTile::prefetch_fraction`]), as whole
/// bands of tiles across the plane, so the rows a warp asks L2 for are those of a warp that
/// starts a little later. Warps filter a tile and exit, so each waits out its loads once; with its
/// rows on the way to L2 the wait is shorter.
pub(super) fn word_tile_prefetch_rows(
    gpu: &Gpu,
    func: &Kernel,
    s: Filter2dShape,
    cols: usize,
    rows: usize,
    fraction: usize,
) -> Result<u32> {
    let warps_per_block = (ROW_VECTOR_THREADS / 32) as usize;
    let blocks = func.blocks_per_sm(gpu, ROW_VECTOR_THREADS, 0)? as usize;
    let resident = blocks * warps_per_block * gpu.props().sm_count as usize;
    let bands = resident.div_ceil(fraction * s.w.div_ceil(cols).max(1));
    Ok((bands * rows).min(s.h).try_into().unwrap_or(u32::MAX))
}

impl WordTile {
    /// The fraction of the resident warps a tile of this kernel prefetches ahead
    /// ([`word_tile_prefetch_rows`]), as measured on the H100 (u8 8192², the border strips
    /// launched first, each warp prefetching its own output rows only; µs, two rounds in one
    /// call): a quarter for the 3 × 3 u8 outputs (3 × 3 dilation 48.34 / 48.74 against 48.86 /
    /// 48.88 at 1/8 and 49.02 / 49.10 at 1/16; Gaussian 48.64 / 48.64, 48.86 / 48.88, 49.01 /
    /// 49.02), a third for the 5 × 5 tiles (50.32 / 50.35 against 50.56 / 50.69 at 1/2, 50.62 /
    /// 50.72 at 1/4, 51.34 / 51.38 at 1/6) and an eighth for the i16 outputs of Sobel, whose
    /// writes keep L2 busier (axis 0 71.47 / 71.87 against 72.03 / 72.03 at 1/16, 72.02 / 72.10
    /// at 1/32, 72.13 / 72.16 at 1/64). Without a prefetch (plain order, half the resident
    /// warps: 50.8) the 3 × 3 dilation took 51.6 (H100).
    pub(super) const fn prefetch_fraction(self) -> usize {
        match self {
            WordTile::max5 | WordTile::min5 => 3,
            WordTile::sobel0 | WordTile::sobel1 => 8,
            WordTile::max3 | WordTile::min3 | WordTile::gauss => 4,
        }
    }
}

/// The doubling row pass for a window of `kw` columns anchored at `ax` on elements of `size`
/// bytes: its kernel, elements per lane and outputs per warp, or `None` when the window is too
/// long for it. u8 rows take 8 bytes per lane where the window allows, in the entry compiled for
/// the window's doubling steps (`DOUBLING_U8`); 16 bytes otherwise, and for the other types,
/// whose 8-byte passes were not faster. On the H100 (u8 8192²): 8 bytes
/// (77 registers, 6 blocks per SM, against 16 bytes' 123 and 4) made the 15 × 15 and 31 × 31
/// dilations 9% and 6–7% faster; the fixed steps then took the 31 × 31 row pass from 101.5 to
/// 90.0 µs.
pub(super) fn doubling_row_kernel(
    k: &Filter2dKernels,
    fs: &[KernelId; 13],
    ext: MorphFold,
    size: u32,
    kw: u32,
    ax: u32,
) -> Option<(KernelId, u32, u32)> {
    let half = (size == 1).then(|| {
        let steps = doubling_steps(kw, 8);
        let i = DOUBLING_U8.iter().position(|&(_, e, s)| e == ext && s == steps)?;
        doubling_row_outputs(kw, ax, 8).map(|outs| (k.doubling_u8[i], 8, outs))
    });
    half.flatten().or_else(|| {
        doubling_row_outputs(kw, ax, 16 / size).map(|outs| (fs[MorphKernel::DoublingRows as usize], 16 / size, outs))
    })
}
