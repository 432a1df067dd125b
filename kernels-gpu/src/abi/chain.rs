//! Fused chains of 2D ops contract: the steps a chain launch runs, their window extents, launch
//! arguments and kernel symbols.
//!
//! A chain runs a sequence of u8 image ops — the 3 × 3 Gaussian, grey dilation and erosion up to
//! 5 × 5, a binary threshold, and a Sobel derivative as the last step (u8 → i16) — in one kernel
//! per output tile: the block stages its tile plus the halo every step needs, each step computes
//! the region the next one reads, and only the last step writes memory. Each step extends its
//! input past the image by the chain's border exactly as the op run alone does, so a fused chain
//! is bit-exact with the ops run one by one.

/// Output tile of one block: `CHAIN_TILE_H × CHAIN_TILE_W` pixels.
pub const CHAIN_TILE_W: u32 = 64;
pub const CHAIN_TILE_H: u32 = 32;
/// Threads per block (8 warps: warps over rows, lanes over columns).
pub const CHAIN_BLOCK: u32 = 256;
/// Steps of one launch at most.
pub const CHAIN_MAX_STEPS: usize = 8;
/// Halo of one launch at most, per side: the sum of its steps' extents on that side. A longer
/// chain runs as several launches (segments) through an intermediate image.
pub const CHAIN_MAX_HALO: u32 = 8;

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
    /// `255` where the pixel is above `param`, else `0`.
    Threshold = 3,
    /// scipy `sobel(x, axis=0)` as i16 (last step only).
    Sobel0 = 4,
    /// scipy `sobel(x, axis=1)` as i16 (last step only).
    Sobel1 = 5,
}

/// One step of a chain launch.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ChainStep {
    /// [`ChainKind`] code.
    pub kind: u32,
    pub kh: u32,
    pub kw: u32,
    /// The threshold's level.
    pub param: u32,
}

impl ChainStep {
    /// Rows above, rows below, columns left and columns right of a pixel that the step reads.
    pub const fn extents(&self) -> [u32; 4] {
        match self.kind {
            0 | 4 | 5 => [1, 1, 1, 1],
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
    /// Bytes per row of each shared buffer.
    pub pitch: u32,
    pub halo: [u32; 4],
    pub steps: [ChainStep; CHAIN_MAX_STEPS],
}

/// Shared-memory bytes of a chain launch with `halo`: two buffers of the tile plus halo.
pub const fn chain_shared_bytes(halo: [u32; 4]) -> (u32, u32) {
    let pitch = (CHAIN_TILE_W + halo[2] + halo[3]).next_multiple_of(4);
    (pitch, 2 * pitch * (CHAIN_TILE_H + halo[0] + halo[1]))
}

/// Symbol of a chain kernel: `gpuprims_chain_u8_<out>`.
#[macro_export]
macro_rules! chain_kernel_name {
    ($out:literal) => {
        concat!($crate::kernel_prefix!(), "chain_u8_", $out)
    };
}

/// The chain kernels' symbols: u8 output, i16 output (a Sobel last).
pub const CHAIN_NAMES: [&str; 2] = [chain_kernel_name!("u8"), chain_kernel_name!("i16")];
