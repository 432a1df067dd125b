//! 1D filter contract: launch arguments, the ladder's geometry and the kernel symbol names. The
//! border modes are `abi::border`'s (re-exported here); constant-taps kernels read their taps from
//! offset 0 of the module's constant bank (`abi::CONSTANT_BANK_BYTES`).
//!
//! A 1D filter here is a *correlation* along the last axis of a C-order array of `rows` signals of
//! `n` samples each:
//!
//! ```text
//! y[r, i] = Σ_{k < taps} t[k] · x̃[r, i + k − anchor]
//! ```
//!
//! where `x̃` is row `r` extended past both ends by the border mode. The host turns convolution
//! (flipped taps) and the mean filter (equal taps) into this one form.

use super::CONSTANT_BANK_BYTES;
pub use super::border::{BorderMode, border_index};

/// Threads per block of every 1D filter kernel.
pub const CONV1D_BLOCK: u32 = 256;

/// Bytes of output each thread of the register-blocked variant produces: two 16-byte vectors
/// (4 f64 or 8 f32 outputs per thread).
pub const REGISTER_BLOCK_BYTES: usize = 32;

/// Outputs per thread of the register-blocked variant for an element of `elem_size` bytes.
pub const fn register_block_outputs(elem_size: usize) -> u64 {
    (REGISTER_BLOCK_BYTES / elem_size) as u64
}

/// Outputs per thread of the vector-window step: 8 for f32 and f64 (32 or 64 bytes). Each thread
/// reads `8 + 8·⌈taps/8⌉` samples from the shared tile for its 8 outputs, so the shared traffic
/// per output falls as this grows.
pub const VECTOR_WINDOW_OUTPUTS: u32 = 8;

/// Tap chunks of the vector-window step: the tap loop runs `⌈taps / 8⌉` chunks of
/// [`VECTOR_WINDOW_OUTPUTS`] taps (the last one masked to the real taps).
pub const fn vector_window_chunks(taps: u32) -> u32 {
    taps.div_ceil(VECTOR_WINDOW_OUTPUTS)
}

/// Elements of the vector-window step's shared tile: the block's outputs plus
/// `8 · chunks` halo samples.
pub const fn vector_window_tile(taps: u32) -> usize {
    (CONV1D_BLOCK * VECTOR_WINDOW_OUTPUTS + VECTOR_WINDOW_OUTPUTS * vector_window_chunks(taps)) as usize
}

/// Whether the vector-window step reads its window through a shared tile (8-byte samples) or
/// straight from global memory through L1 (4-byte samples). A warp's 16-byte window loads lie
/// `8 · size` bytes apart: 4-byte samples use half of each L1 wavefront and L1 keeps up (f32
/// 2^27 × 31 taps on the H100: 85.7% of copy from L1, 80.8% through the tile, 87.7% from L1 with
/// launch bounds); 8-byte samples use a quarter, and the L1 wavefronts
/// become the limit (f64: 74.5% from L1, 91.3% through the tile).
pub const fn vector_window_from_shared(elem_size: usize) -> bool {
    elem_size >= 8
}

/// Physical index of tile element `k`: one 16-byte pad after every 8 elements, so the 16-byte
/// loads of 8 consecutive threads (64 or 32 bytes apart) fall in 8 different bank groups.
pub const fn vector_window_phys(k: usize, elem_size: usize) -> usize {
    k + k / VECTOR_WINDOW_OUTPUTS as usize * (16 / elem_size)
}

/// Most taps the constant bank holds for an element of `elem_size` bytes (the whole 64 KiB bank:
/// 8192 f64 or 16384 f32 taps, from offset 0).
pub const fn max_constant_taps(elem_size: usize) -> usize {
    CONSTANT_BANK_BYTES / elem_size
}

/// Launch arguments of every 1D filter kernel, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Conv1dArgs<T> {
    /// Samples per row (≥ 1).
    pub n: u64,
    /// Number of rows (≥ 1); the input and output hold `rows · n` elements, C order.
    pub rows: u64,
    /// Number of taps (≥ 1).
    pub taps: u32,
    /// Tap that multiplies `x[i]` for output `i` (< taps).
    pub anchor: u32,
    /// [`BorderMode`] code.
    pub border: u32,
    /// Explicit padding so both sides agree on the layout.
    pub _pad: u32,
    /// Value outside the row for [`BorderMode::Constant`].
    pub cval: T,
}

impl<T> Conv1dArgs<T> {
    /// Taps right of the anchor.
    #[inline(always)]
    pub const fn right(&self) -> u32 {
        self.taps - 1 - self.anchor
    }
}

/// One rung of the 1D filter ladder.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Conv1dStep {
    /// One output per thread, taps read from a global-memory buffer.
    GlobalTaps = 0,
    /// One output per thread, taps read from the constant bank (one broadcast per warp).
    ConstantTaps = 1,
    /// One output per thread; the block stages its input tile and halo in shared memory once.
    SharedTile = 2,
    /// Several outputs per thread from 16-byte vector loads and a sliding register window.
    RegisterBlocked = 3,
    /// As `RegisterBlocked`, the halo slid in from a shared-memory tile of the block's span.
    RegisterBlockedShared = 4,
    /// As `RegisterBlocked`, taps read from global memory (any tap count).
    RegisterBlockedGlobalTaps = 5,
    /// Eight outputs per thread, the window read from a padded shared tile in 16-byte vectors,
    /// taps in whole chunks of eight.
    RegisterBlockedVector = 6,
}

impl Conv1dStep {
    /// Every step, in kernel-table order.
    pub const ALL: [Conv1dStep; 7] = [
        Conv1dStep::GlobalTaps,
        Conv1dStep::ConstantTaps,
        Conv1dStep::SharedTile,
        Conv1dStep::RegisterBlocked,
        Conv1dStep::RegisterBlockedShared,
        Conv1dStep::RegisterBlockedGlobalTaps,
        Conv1dStep::RegisterBlockedVector,
    ];

    /// Index into [`Conv1dStep::ALL`] and the kernel name tables.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Whether the kernel reads its taps from the constant bank.
    pub const fn uses_constant_taps(self) -> bool {
        matches!(
            self,
            Conv1dStep::ConstantTaps
                | Conv1dStep::SharedTile
                | Conv1dStep::RegisterBlocked
                | Conv1dStep::RegisterBlockedShared
                | Conv1dStep::RegisterBlockedVector
        )
    }

    /// Outputs each thread produces.
    pub const fn outputs_per_thread(self, elem_size: usize) -> u64 {
        match self {
            Conv1dStep::RegisterBlocked | Conv1dStep::RegisterBlockedShared | Conv1dStep::RegisterBlockedGlobalTaps => {
                register_block_outputs(elem_size)
            }
            Conv1dStep::RegisterBlockedVector => VECTOR_WINDOW_OUTPUTS as u64,
            _ => 1,
        }
    }

    /// Whether the kernel uses 16-byte vector loads and stores (buffers must be 16-byte aligned).
    pub const fn vectorized(self) -> bool {
        self.outputs_per_thread(8) > 1
    }

    /// Dynamic shared memory in bytes: the block's outputs plus the `taps − 1` halo samples
    /// (the register-blocked tile padded by one element every `P`).
    pub const fn shared_bytes(self, taps: u32, elem_size: usize) -> usize {
        match self {
            Conv1dStep::SharedTile => (CONV1D_BLOCK as usize + taps as usize - 1) * elem_size,
            Conv1dStep::RegisterBlockedShared => {
                let p = register_block_outputs(elem_size) as usize;
                let len = CONV1D_BLOCK as usize * p + taps as usize - 1;
                (len + (len - 1) / p) * elem_size
            }
            Conv1dStep::RegisterBlockedVector if vector_window_from_shared(elem_size) => {
                vector_window_phys(vector_window_tile(taps), elem_size) * elem_size
            }
            _ => 0,
        }
    }
}

/// Symbol of one 1D filter kernel: `gpuprims_conv1d_<type>_<step>`.
#[macro_export]
macro_rules! conv1d_kernel_name {
    ($t:ident, $step:literal) => {
        concat!($crate::kernel_prefix!(), "conv1d_", stringify!($t), "_", $step)
    };
}

/// The kernel symbols of one element type, in [`Conv1dStep::ALL`] order.
#[macro_export]
macro_rules! conv1d_kernel_names {
    ($t:ident) => {
        [
            $crate::conv1d_kernel_name!($t, "global_taps"),
            $crate::conv1d_kernel_name!($t, "constant_taps"),
            $crate::conv1d_kernel_name!($t, "shared_tile"),
            $crate::conv1d_kernel_name!($t, "register_blocked"),
            $crate::conv1d_kernel_name!($t, "register_blocked_shared"),
            $crate::conv1d_kernel_name!($t, "register_blocked_global_taps"),
            $crate::conv1d_kernel_name!($t, "register_blocked_vector"),
        ]
    };
}

/// Calls `$m! { f32, f64 }`: the element types of the 1D filter family, in table order.
#[macro_export]
macro_rules! for_each_conv1d_type {
    ($m:ident) => {
        $m! { f32, f64 }
    };
}
