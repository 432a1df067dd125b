//! Fused chains of 2D ops contract: the steps a chain launch runs, their window extents, launch
//! arguments and kernel symbols.
//!
//! A chain runs a sequence of u8 image ops — the 3 × 3 Gaussian, grey dilation and erosion up to
//! 5 × 5, point ops by lookup table (threshold, scale and offset), and a Sobel derivative
//! (u8 → i16) or the Sobel magnitude (u8 → f32) as the last step — in one kernel per output
//! tile: the block stages its tile plus the halo every step needs, each step computes the region
//! the next one reads, and only the last step writes memory. Each step extends its
//! input past the image by the chain's border exactly as the op run alone does, so a fused chain
//! is bit-exact with the ops run one by one. A few chains of three 3 × 3 steps also have a
//! streamed kernel (`for_each_chain_stream!`), every step in registers.

/// Output tile of one block: `CHAIN_TILE_H × CHAIN_TILE_W` pixels (32 words of 4 pixels across,
/// one per lane of a warp in the final store). Tall tiles spread each block's fixed work (its
/// index arithmetic, the steps' parameters, the halo rows) over more pixels: on the H200 (W12
/// 8192²) 32 rows took 272.7 µs, 64 rows 205.3, 96 rows 193.5, 128 rows 182.7 (64 × 512²: 112.7,
/// 92.9, 106.2, 93.1); with the later kernels, 160 rows took 107.5 µs against 128's 91.2 (37.6
/// against 31.5).
pub const CHAIN_TILE_W: u32 = 128;
pub const CHAIN_TILE_H: u32 = 128;
/// Threads per block (8 warps).
pub const CHAIN_BLOCK: u32 = 256;
/// Steps of one launch at most.
pub const CHAIN_MAX_STEPS: usize = 8;
/// Halo of one launch at most, per side: the sum of its steps' extents on that side. A longer
/// chain runs as several launches (segments) through an intermediate image.
pub const CHAIN_MAX_HALO: u32 = 8;
/// Bytes of one point step's lookup table.
pub const CHAIN_LUT_BYTES: u32 = 256;

/// What a step computes.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChainKind {
    /// `[1 2 1]ᵀ[1 2 1] / 16`, `(Σ + 8) >> 4` (the op `gaussian3x3`).
    Gaussian3x3 = 0,
    /// The maximum over `kh × kw` anchored at `((kh − 1) / 2, (kw − 1) / 2)` (scipy `grey_dilation`).
    Dilate = 1,
    /// The minimum over `kh × kw` anchored at `(kh / 2, kw / 2)` (scipy `grey_erosion`).
    Erode = 2,
    /// A point op by a 256-entry table (threshold, scale and offset, any u8 → u8 map). The host
    /// folds point steps into the step before them (its `table`) or into the staged input; a
    /// launch keeps one only when it has no other step.
    Point = 3,
    /// scipy `sobel(x, axis=0)` as i16 (last step only).
    Sobel0 = 4,
    /// scipy `sobel(x, axis=1)` as i16 (last step only).
    Sobel1 = 5,
    /// `√(sobel(x, 0)² + sobel(x, 1)²)` in f32, as `Gpu::sobel_magnitude` (last step only).
    SobelMagnitude = 6,
}

/// One step of a chain launch.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ChainStep {
    /// [`ChainKind`] code.
    pub kind: u32,
    pub kh: u32,
    pub kw: u32,
    /// Unused by the kernel; the host marks an invalid Sobel axis with `u32::MAX`.
    pub param: u32,
    /// `1 + t`: the step's output goes through the launch's lookup table `t` (the point steps
    /// that followed it, composed); 0: none. A point step is the identity with its table here.
    pub table: u32,
}

impl ChainStep {
    /// Rows above, rows below, columns left and columns right of a pixel that the step reads.
    pub const fn extents(&self) -> [u32; 4] {
        match self.kind {
            0 | 4..=6 => [1, 1, 1, 1],
            1 => [(self.kh - 1) / 2, self.kh / 2, (self.kw - 1) / 2, self.kw / 2],
            2 => [self.kh / 2, (self.kh - 1) / 2, self.kw / 2, (self.kw - 1) / 2],
            _ => [0, 0, 0, 0],
        }
    }
}

/// Launch arguments of a chain kernel, passed by value: planes of `h × w` u8, tiles of
/// [`CHAIN_TILE_H`] × [`CHAIN_TILE_W`], `steps` steps whose extents sum to `halo` (above, below,
/// left, right), the border's mode and constant.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainArgs {
    pub h: u32,
    pub w: u32,
    /// Tiles across a plane, and down it.
    pub tiles_x: u32,
    pub tiles_y: u32,
    /// `BorderMode` code.
    pub border: u32,
    /// The constant border's value (u8).
    pub cval: u32,
    pub n_steps: u32,
    /// Lookup tables of the launch (256 bytes each).
    pub n_tables: u32,
    /// `1 + t`: the staged input goes through table `t` (the point steps the chain starts
    /// with, composed); 0: none.
    pub stage_table: u32,
    /// How whole the rows are, both buffers being 16-byte aligned: 16 when `w` is a multiple
    /// of 16 (rows staged in 16-byte vectors), 4 when a multiple of 4 (words), else 1 (bytes at
    /// the plane's right edge).
    pub row_align: u32,
    pub halo: [u32; 4],
    pub steps: [ChainStep; CHAIN_MAX_STEPS],
}

/// Bytes of a buffer row on each side of the tile: the halo (at most [`CHAIN_MAX_HALO`]) and a
/// margin, so a row is whole 16-byte vectors aligned like the image's columns and every computed
/// word has both neighbours in the row.
pub const CHAIN_SIDE: u32 = 16;
/// Words per buffer row.
pub const CHAIN_PITCH_WORDS: u32 = (2 * CHAIN_SIDE + CHAIN_TILE_W) / 4;

/// Rows of a buffer above its region and below it that a step may read but never use: a
/// morphology step of a window narrower than its instantiation's reach (5) reads `2` rows
/// above and below each output row, so its loads need no clamp. Zeroed once per block.
pub const CHAIN_SLACK_ABOVE: u32 = 2;
pub const CHAIN_SLACK_BELOW: u32 = 2;

/// The shared-memory layout of a launch with `halo` and `n_tables` lookup tables (one source
/// for host and kernel): the tables, [`CHAIN_LUT_BYTES`] each, then two buffers of
/// `CHAIN_SLACK_ABOVE + rows + CHAIN_SLACK_BELOW` rows of `CHAIN_PITCH_WORDS` words, the region
/// a step reads and the one it writes. Word `j` of a buffer row holds image columns
/// `tile_x − CHAIN_SIDE + 4j ..`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainLayout {
    /// Rows of the region: the tile's and its halo's.
    pub rows: u32,
    /// Words per buffer, slack rows included.
    pub buffer_words: u32,
    /// Bytes of dynamic shared memory.
    pub shared_bytes: u32,
}

pub const fn chain_layout(halo: [u32; 4], n_tables: u32) -> ChainLayout {
    let rows = CHAIN_TILE_H + halo[0] + halo[1];
    let buffer_words = CHAIN_PITCH_WORDS * (CHAIN_SLACK_ABOVE + rows + CHAIN_SLACK_BELOW);
    ChainLayout {
        rows,
        buffer_words,
        shared_bytes: n_tables * CHAIN_LUT_BYTES + 2 * 4 * buffer_words,
    }
}

/// Symbol of a chain kernel: `gpuprims_chain_u8_<out>`.
#[macro_export]
macro_rules! chain_kernel_name {
    ($out:literal) => {
        concat!($crate::kernel_prefix!(), "chain_u8_", $out)
    };
}

/// What a launch's last step writes: u8, i16 (a Sobel last) or f32 (a Sobel magnitude last).
pub const CHAIN_OUT_U8: u32 = 0;
pub const CHAIN_OUT_I16: u32 = 1;
pub const CHAIN_OUT_F32: u32 = 2;

/// The chain kernels' symbols, indexed by `CHAIN_OUT_*`.
pub const CHAIN_NAMES: [&str; 3] = [
    chain_kernel_name!("u8"),
    chain_kernel_name!("i16"),
    chain_kernel_name!("f32"),
];

/// Output words per warp of a streamed chain (`for_each_chain_stream!`): a warp's 32 lanes hold
/// 32 consecutive words of a row, the first and last only as the halo of the 30 between (three
/// steps of reach 1 need 3 of the 4 pixels a halo word holds).
pub const CHAIN_STREAM_WORDS: u32 = 30;
/// Threads per block of a streamed chain (4 warps, each on its own strip: no shared memory, no
/// barrier).
pub const CHAIN_STREAM_BLOCK: u32 = 128;
/// Fewest rows of a plane and of a strip: a strip's first output row reads 3 rows below it, and
/// the plane's last three rows take the bottom border.
pub const CHAIN_STREAM_MIN_ROWS: u32 = 4;
/// Rows of a streamed chain's strips (the last strip of a plane takes the rest). Each strip
/// starts with 7 input rows for its first output row (about 4 rows' work more than a row in
/// the stream); shorter strips give more warps in flight and a shorter last wave. H200, W12
/// (µs, 8192² / 64 × 512²): 12 rows 79.3 / 29.1, 16: 71.8 / 26.6, 24: 70.7 / 26.0, 32: 71.2 /
/// 26.6, 64: 72.1 / 25.9, 128: 74.8 / 33.7.
pub const CHAIN_STREAM_ROWS: u32 = 24;

/// The streamed chains: three steps of reach 1 (a 3 × 3 window at most), each `name =>` the
/// [`ChainKind`] of its steps, morphology 3 × 3. A launch of one of these, without point steps,
/// on planes whose width is a multiple of 4 may run as `gpuprims_chain_stream_<name>`: each warp
/// runs down a strip of rows of 30 words, every step in registers. (The chains ending in the
/// Sobel magnitude were streamed too: 143.2 against 150.9 µs by tiles on 8192², 50.6 against
/// 48.8 on 64 × 512², H200; not kept.)
#[macro_export]
macro_rules! for_each_chain_stream {
    ($m:ident) => {
        $m! {
            gauss_dilate_sobel0 => Gaussian3x3, Dilate, Sobel0;
            gauss_dilate_sobel1 => Gaussian3x3, Dilate, Sobel1;
            gauss_erode_sobel0 => Gaussian3x3, Erode, Sobel0;
            gauss_erode_sobel1 => Gaussian3x3, Erode, Sobel1;
        }
    };
}

/// Symbol of a streamed chain kernel: `gpuprims_chain_stream_<name>`.
#[macro_export]
macro_rules! chain_stream_name {
    ($name:ident) => {
        concat!($crate::kernel_prefix!(), "chain_stream_", stringify!($name))
    };
}

/// Launch arguments of a streamed chain: planes of `h × w` u8 (`w` a multiple of 4), each cut
/// into `groups` warp columns of [`CHAIN_STREAM_WORDS`] words and `strips` strips of
/// `strip_h` rows (the last strip takes the rest: `strip_h ..= 2 · strip_h − 1` rows); `warps`
/// in all, warp `g` of the grid on plane `g / (groups · strips)`, strip by strip, column by
/// column.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainStreamArgs {
    pub h: u32,
    pub w: u32,
    pub groups: u32,
    pub strips: u32,
    pub strip_h: u32,
    pub warps: u32,
    /// `BorderMode` code.
    pub border: u32,
    /// The constant border's value (u8).
    pub cval: u32,
}
