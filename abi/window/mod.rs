//! Sliding-window statistics contract: the exact accumulators of each input type, launch
//! arguments, the running-sum tile geometry and the kernel symbol names.
//!
//! A window statistic is, for every sample `i` of a row of `n` samples,
//!
//! ```text
//! sum[i]   = Σ_{k < w} x̃[i − anchor + k]        sumsq[i] = Σ_{k < w} x̃[i − anchor + k]²
//! ```
//!
//! with `anchor = w / 2` (scipy's `uniform_filter1d` centring) and `x̃` the row extended by the
//! border mode; 2D boxes apply the same along both of the last two axes (a position outside the
//! plane in either axis reads the border's value).

mod acc;

pub use acc::*;

/// Threads per block of the row kernels and the column pass.
pub const WINDOW_BLOCK: u32 = 256;
/// Warps per block of the row kernels.
pub const WINDOW_WARPS: u32 = WINDOW_BLOCK / 32;
/// Threads per block of the fused 2D kernel.
pub const FUSED_BLOCK: u32 = 128;
/// Halo columns each thread of the fused 2D kernel keeps running sums for: a block's `w − 1`
/// halo columns are spread over its threads, at most this many each.
pub const FUSED_HALO: usize = 1;
/// Widest window the fused 2D kernel takes (its halo: `w − 1 ≤ FUSED_BLOCK · FUSED_HALO`).
pub const FUSED_MAX_WIDTH: u64 = FUSED_BLOCK as u64 * FUSED_HALO as u64 + 1;

/// Warps per block of the warp-prefix 2D box (u8). Its warps share nothing: each owns a column
/// segment of a strip of rows and synchronizes only with itself.
pub const WARP_BOX_WARPS: u32 = 4;
/// Columns a warp of the warp-prefix box loads per row: four groups of 128, lane `l` holding the
/// 4-byte word at `128·j + 4·l` of group `j` (every warp load is 128 contiguous bytes, every
/// shared store of a lane's four column sums a conflict-free 16-byte store).
pub const WARP_BOX_SPAN: u32 = 512;
/// Widest window the warp-prefix box takes: its `w − 1` halo columns leave at least 380 of a
/// warp's 512 loaded columns as outputs.
pub const WARP_BOX_MAX_WIDTH: u32 = 129;

/// The warp-prefix box's column geometry for a window `win_w` wide anchored at `anchor_x`:
/// `(left, outputs)` — the loaded span starts `left` columns before a warp's first output (a
/// multiple of 4, so word loads stay aligned, and more than `anchor_x`, so the prefix entry before
/// every output's window lies in the span), and each warp writes `outputs` columns (a multiple of
/// 4, so the next warp's span is aligned too). Output `x` of a warp (`x < outputs`) is the
/// difference of the inclusive prefix sums at span slots `left + x − anchor_x + w − 1` and
/// `left + x − anchor_x − 1`, both inside `[0, WARP_BOX_SPAN)`.
pub const fn warp_box_geometry(win_w: u32, anchor_x: u32) -> (u32, u32) {
    let left = (anchor_x + 1).next_multiple_of(4);
    let right = win_w - 1 - anchor_x;
    (left, (WARP_BOX_SPAN - left - right) / 4 * 4)
}

/// Dynamic shared memory of one warp-prefix block: per warp two buffers (alternate output rows, so
/// one warp barrier per row suffices), each the prefix row of column sums and of column sums of
/// squares, `WARP_BOX_SPAN` u32 each.
pub const WARP_BOX_SHARED: usize = WARP_BOX_WARPS as usize * 2 * 2 * WARP_BOX_SPAN as usize * 4;

const _: () = {
    let (left, outputs) = warp_box_geometry(WARP_BOX_MAX_WIDTH, WARP_BOX_MAX_WIDTH / 2);
    assert!(left + outputs + (WARP_BOX_MAX_WIDTH - 1 - WARP_BOX_MAX_WIDTH / 2) <= WARP_BOX_SPAN && outputs >= 380);
};

/// Most warps per block of the stream-rows 2D box (u8 → f32); the host launches 1, 2 or 4, as
/// many as keep the most warps resident with their rings. Its warps share nothing.
pub const STREAM_BOX_WARPS: u32 = 4;
/// Output columns of a stream-rows warp: two groups of 128, lane `l` holding the 4-byte word at
/// `4·l` of each (every warp load is 128 contiguous bytes, every warp store of a group's four
/// outputs per lane 512 contiguous bytes).
pub const STREAM_BOX_SPAN: u32 = 256;
/// Widest window the stream-rows box takes: a lane reads the two words either side of its own,
/// so a window reaches at most 8 columns left or right of an output.
pub const STREAM_BOX_MAX_WIDTH: u32 = 17;
/// Widest window whose row sums the stream-rows ring packs into one word, `Σx | Σx² << 12`:
/// 16 u8 samples sum below 2^12 and their squares below 2^20.
pub const STREAM_BOX_PACKED_MAX_WIDTH: u32 = 16;

/// Shared memory of one stream-rows warp: its ring of the window sums of its last `win_h` rows
/// (256 outputs per row, one packed word each, or two words — `Σx` then `Σx²` — for windows wider
/// than [`STREAM_BOX_PACKED_MAX_WIDTH`]). A block of `k` warps takes `k` rings.
pub const fn stream_box_ring_bytes(win_w: u32, win_h: u32) -> u64 {
    let words = if win_w <= STREAM_BOX_PACKED_MAX_WIDTH { 1 } else { 2 };
    win_h as u64 * STREAM_BOX_SPAN as u64 * 4 * words
}

/// Symbol of the stream-rows box for windows `w` columns wide (one kernel per width, so the
/// byte positions of every window are constants), for planes it reads by words
/// ([`stream_box_reads_words`]).
#[macro_export]
macro_rules! stream_box_name {
    ($w:literal) => {
        concat!($crate::kernel_prefix!(), "window_u8_f32_stream_box_w", stringify!($w))
    };
}

/// Symbol of the stream-rows box for any plane (every byte gathered through the border mapping):
/// the planes [`stream_box_reads_words`] refuses.
#[macro_export]
macro_rules! stream_box_any_name {
    ($w:literal) => {
        concat!(
            $crate::kernel_prefix!(),
            "window_u8_f32_stream_box_any_w",
            stringify!($w)
        )
    };
}

/// Whether the word kernel of the stream-rows box ([`stream_box_name`]) takes planes of `width`
/// columns at `x`: 4-byte aligned, a multiple of 4 columns, at least 16. Others take the gathering
/// kernel ([`stream_box_any_name`]).
pub const fn stream_box_reads_words(x: u64, width: u64) -> bool {
    x.is_multiple_of(4) && width.is_multiple_of(4) && width >= 16
}

/// Calls `$m!` with every width the stream-rows box compiles: `(name, w, left, right)`, `left = w / 2`
/// columns before the output and `right = w − 1 − left` after it.
#[macro_export]
macro_rules! for_each_stream_box_width {
    ($m:ident) => {
        $m! {
            w1, 1, 0, 0; w2, 2, 1, 0; w3, 3, 1, 1; w4, 4, 2, 1; w5, 5, 2, 2; w6, 6, 3, 2;
            w7, 7, 3, 3; w8, 8, 4, 3; w9, 9, 4, 4; w10, 10, 5, 4; w11, 11, 5, 5; w12, 12, 6, 5;
            w13, 13, 6, 6; w14, 14, 7, 6; w15, 15, 7, 7; w16, 16, 8, 7; w17, 17, 8, 8;
        }
    };
}

macro_rules! stream_box_names {
    ($($name:ident, $w:literal, $l:literal, $r:literal;)*) => {
        /// The stream-rows kernels' symbols, indexed by window width − 1.
        pub const STREAM_BOX_NAMES: [&str; STREAM_BOX_MAX_WIDTH as usize] = [$($crate::stream_box_name!($w)),*];
        /// The gathering stream-rows kernels' symbols, indexed by window width − 1.
        pub const STREAM_BOX_ANY_NAMES: [&str; STREAM_BOX_MAX_WIDTH as usize] =
            [$($crate::stream_box_any_name!($w)),*];
    };
}
for_each_stream_box_width!(stream_box_names);

/// Shared-memory slot of extended column `e` in the fused kernel's row of column sums: one pad
/// slot after every `p` (the columns of one thread), so threads reading their `p`-strided runs
/// hit distinct banks for 4-, 8- and 16-byte values.
#[inline(always)]
pub const fn fused_slot(e: usize, p: usize) -> usize {
    e + e / p
}

/// The fused 2D kernel's dynamic shared memory: two buffers (alternate output rows, so one
/// barrier per row suffices), each a row of column sums, a row of column sums of squares, and
/// the stages of that row's two output runs (written back, coalesced, after the next barrier).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FusedLayout {
    /// Byte offset of the squares' row inside a buffer.
    pub squares: usize,
    /// Byte offsets of the first and second outputs' stages inside a buffer.
    pub stage0: usize,
    pub stage1: usize,
    /// Bytes per buffer (16-byte multiple).
    pub buffer: usize,
    /// Total bytes.
    pub bytes: usize,
}

/// Layout for `p` columns per thread, a window `width` wide, accumulators of `(s_size, q_size)`
/// bytes ([`WindowIn::FUSED_ACC_BYTES`]) and outputs of `(o0_size, o1_size)` bytes: each row holds
/// the `FUSED_BLOCK · p + width − 1` extended columns of a block, each stage its `FUSED_BLOCK · p`
/// outputs.
pub const fn fused_layout(
    p: usize,
    width: usize,
    (s_size, q_size): (usize, usize),
    (o0_size, o1_size): (usize, usize),
) -> FusedLayout {
    let slots = fused_slot(FUSED_BLOCK as usize * p + width - 1, p);
    let outputs = FUSED_BLOCK as usize * p;
    let squares = (slots * s_size).next_multiple_of(16);
    let stage0 = (squares + slots * q_size).next_multiple_of(16);
    let stage1 = stage0 + outputs * o0_size;
    let buffer = (stage1 + outputs * o1_size).next_multiple_of(16);
    FusedLayout {
        squares,
        stage0,
        stage1,
        buffer,
        bytes: 2 * buffer,
    }
}

/// Launch arguments of the row kernels (windows along the last axis of `rows` rows of `n`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowArgs<T> {
    pub n: u64,
    pub rows: u64,
    /// Window width `w ≥ 1`.
    pub width: u32,
    /// `w / 2`: output `i`'s window starts at `i − anchor`.
    pub anchor: u32,
    /// `BorderMode` code.
    pub border: u32,
    /// Running sum: outputs per block (see [`running_tile`]); other kernels: unused.
    pub tile: u32,
    /// Value outside the row for the constant border.
    pub cval: T,
}

/// What a 2D box kernel writes.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoxKind {
    /// `o0 = Σ`.
    Sum = 0,
    /// `o0 = Σ`, `o1 = Σ²`.
    SumSumSq = 1,
    /// `o0 = mean`, `o1 = population variance` (clamped at 0).
    MeanVar = 2,
    /// `o0 = √variance`.
    Std = 3,
}

impl BoxKind {
    pub const fn from_code(code: u32) -> BoxKind {
        match code {
            0 => BoxKind::Sum,
            1 => BoxKind::SumSumSq,
            2 => BoxKind::MeanVar,
            _ => BoxKind::Std,
        }
    }

    /// Whether the kernel writes a second output.
    pub const fn two_outputs(self) -> bool {
        matches!(self, BoxKind::SumSumSq | BoxKind::MeanVar)
    }

    /// Whether the kernel needs the sums of squares.
    pub const fn needs_sumsq(self) -> bool {
        !matches!(self, BoxKind::Sum)
    }
}

/// Launch arguments of the 2D box kernels (windows over the last two axes of `planes` planes of
/// `height × width`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxArgs<T> {
    pub height: u64,
    pub width: u64,
    pub planes: u64,
    /// Window height `h ≥ 1` and width `w ≥ 1`.
    pub win_h: u32,
    pub win_w: u32,
    /// `h / 2` and `w / 2`.
    pub anchor_y: u32,
    pub anchor_x: u32,
    pub border: u32,
    /// [`BoxKind`] code.
    pub kind: u32,
    /// Output rows per thread (column pass, integers) or per block (fused).
    pub strip: u32,
    pub _pad: u32,
    /// `1 / n` and `1 / n²` for the window of `n = h · w` samples, rounded to f64 by the host
    /// (the moments multiply instead of dividing).
    pub inv_n: f64,
    pub inv_n2: f64,
    pub cval: T,
}

impl<T> BoxArgs<T> {
    /// Samples per window, `n = h · w`.
    #[inline(always)]
    pub const fn samples(&self) -> u64 {
        self.win_h as u64 * self.win_w as u64
    }
}

/// Where a running-sum block keeps its running sums (shared-memory slots of `(S, Q)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunningTile {
    /// Slots (= positions per scan round) of the block: `WINDOW_BLOCK · CHUNK`.
    pub slots: u32,
    /// Most outputs a block may produce for this window (the host balances rows over blocks
    /// with at most this many each).
    pub max_outputs: u32,
}

/// The running-sum tile for windows of `width` samples of a type with `chunk` samples per thread.
///
/// A block producing outputs `[0, T)` of its tile scans positions `[0, T + width)`. Integers keep
/// the running sum `E[p]` at every position they need in one slot array: when
/// `width + T ≤ slots` (one scan round) at slot `p`, otherwise (several rounds, `T ≤ slots/2`) the
/// starts `p < T` at slot `p` and the ends `p ∈ [width, width + T)` at slot `T + p − width`.
/// Floats keep suffix sums at slots `[0, T)` and prefix sums at `[T, 2T)`, so `T ≤ slots/2`.
pub const fn running_tile(width: u64, chunk: u32, float: bool) -> RunningTile {
    let slots = WINDOW_BLOCK * chunk;
    let half = slots / 2;
    let rounded = width.div_ceil(chunk as u64) * chunk as u64;
    let max_outputs = if float || rounded > half as u64 {
        half
    } else {
        slots - rounded as u32
    };
    RunningTile { slots, max_outputs }
}

/// Whether a running-sum block with `tile` outputs keeps starts and ends in one slot array
/// (integers, one round) — the slot of the end of output `s` is then `s + width`, else `tile + s`.
pub const fn running_single_round(width: u64, tile: u32, chunk: u32, float: bool) -> bool {
    !float && width + tile as u64 <= (WINDOW_BLOCK * chunk) as u64
}

/// Dynamic shared memory of the running-sum kernel: `slots` sums and sums of squares, one scan
/// slot per warp, then one round's staged samples (`slots` of them).
pub const fn running_shared_bytes(slots: u32, s_size: usize, q_size: usize, seg_size: usize, t_size: usize) -> usize {
    let staged = slots as usize * (s_size + q_size) + WINDOW_WARPS as usize * seg_size;
    staged.next_multiple_of(16) + slots as usize * t_size
}

/// Outputs per thread of the sliding kernel for an element of `elem_size` bytes and outputs of
/// `out_size` bytes (the larger of the two sums): 16 when the outputs are at most 4 bytes (every
/// u8 instance too), so each thread's first window (`w` reads, or chunk sums) is shared by 16
/// outputs and a tile spans 4096 of them; else 16 bytes of input (8 u16, 4 i32), so the wide
/// outputs' stages fit beside the tile. Float inputs always 16: their runs are the van Herk
/// blocks of 16-sample chunks (`window::float_sliding_sum`).
pub const fn sliding_outputs(elem_size: usize, out_size: usize, float: bool) -> u32 {
    if float || out_size <= 4 || elem_size == 1 {
        16
    } else {
        (16 / elem_size) as u32
    }
}

/// The larger of two sizes (the sliding kernel's outputs).
pub const fn max_size(a: usize, b: usize) -> usize {
    if a > b { a } else { b }
}

/// 16-byte vectors each thread of the sliding kernel loads per tile, for runs of `run_bytes`
/// (outputs per thread × element size): a tile of `256 · P + w − 1` samples (`w ≤
/// SLIDING_MAX_WIDTH`) takes at most `run_bytes / 16 · 256 + 1024 / lanes + 1` vectors, so
/// `run_bytes / 16 + 2` per thread cover it for every element size; any beyond are staged with
/// scalar loads.
pub const fn sliding_vectors(run_bytes: usize) -> usize {
    run_bytes / 16 + 2
}

/// Elements per chunk sum of the sliding kernel (wide windows start from whole chunks).
pub const SLIDING_CHUNK: u32 = 16;

/// Windows up to this width start each thread's sum directly (`w` reads); wider ones from the
/// chunk sums (`w/16 + 30` reads at most, one more barrier).
pub const SLIDING_DIRECT_MAX: u32 = 32;

/// Shared-memory byte offset of tile element `e` of the sliding kernel whose threads read runs
/// of `run` bytes (outputs per thread × element size, a multiple of 16): 4 padding bytes after
/// every run, so threads reading their runs at run strides (an odd number of words apart) hit
/// distinct banks, and no 16-byte vector straddles a pad.
#[inline(always)]
pub const fn sliding_byte(e: usize, elem_size: usize, run: usize) -> usize {
    let b = e * elem_size;
    b + 4 * (b / run)
}

/// Widest window the integer sliding kernel takes (each thread starts from `w/16` chunk sums, so
/// wider windows go to the block-scan kernel, whose cost does not grow with the width).
pub const SLIDING_MAX_WIDTH: u64 = 1024;

/// The sliding kernel's dynamic shared memory: byte offsets of its regions and the total.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlidingLayout {
    /// The sums of the tile's 16-element chunks (wide windows only). Integer kernel: `⌈len / 16⌉ +
    /// 1` prefix sums in the squares' stage, which they are done with before any output is staged
    /// (a barrier apart), so they cost no shared memory of their own. Float kernel: one pair per
    /// run after the tile (none for the narrow-window kernel).
    pub chunks: usize,
    /// The staged sums (`span` values of the sum type, 16-byte aligned, swizzled), after the
    /// padded input tile of `span + w − 1` samples (plus the 16-byte alignment lead-in).
    pub stage_sum: usize,
    /// The staged sums of squares.
    pub stage_sumsq: usize,
    /// Total bytes.
    pub bytes: usize,
}

/// Dynamic shared memory of the sliding kernel for a tile of `span` outputs of a window of
/// `width`: the padded tile of `span + width − 1` elements (plus up to 16 bytes of alignment
/// lead-in, and `SLIDING_CHUNK − 1` elements that a thread's first window reads past the tile's
/// end and discards, so its runs load unconditionally), then the two output stages, the second
/// large enough for the chunk prefix sums (`sums_size` bytes each) too.
pub const fn sliding_layout(
    span: u32,
    width: u64,
    elem_size: usize,
    sums_size: usize,
    sum_size: usize,
    sumsq_size: usize,
) -> SlidingLayout {
    let elems = span as usize + width as usize - 1 + 16 / elem_size + SLIDING_CHUNK as usize - 1;
    let run = (span / WINDOW_BLOCK) as usize * elem_size;
    let stage_sum = sliding_byte(elems, elem_size, run).next_multiple_of(16) + 16;
    let stage_sumsq = stage_sum + span as usize * sum_size;
    let chunk_bytes = (elems.div_ceil(SLIDING_CHUNK as usize) + 1) * sums_size;
    let sumsq_bytes = span as usize * sumsq_size;
    SlidingLayout {
        chunks: stage_sumsq,
        stage_sum,
        stage_sumsq,
        bytes: stage_sumsq
            + if chunk_bytes > sumsq_bytes {
                chunk_bytes
            } else {
                sumsq_bytes
            },
    }
}

/// Runs of 16 positions per row of the float sliding kernel's tile, which it keeps transposed:
/// tile position `16r + q` is element `q · FLOAT_TILE_RUNS + r`. Thread `t`'s reads of its
/// run's position `p` land at `t` plus a constant, so a warp reads consecutive words (no bank
/// conflict, no address arithmetic). At least the 256 runs of the outputs plus those a thread
/// reads past its own (`⌈(SLIDING_MAX_WIDTH + 31) / 16⌉ + 1`); `≡ 1 mod 4`, so the staging's
/// writes of four consecutive positions per thread spread over the banks.
pub const FLOAT_TILE_RUNS: usize = 325;
const _: () = assert!(
    FLOAT_TILE_RUNS > WINDOW_BLOCK as usize + (SLIDING_MAX_WIDTH as usize + 31).div_ceil(16)
        && FLOAT_TILE_RUNS % 4 == 1
);

/// Dynamic shared memory of the float sliding kernels (f32 and f64 inputs of `sample_size`
/// bytes, whatever the width up to `SLIDING_MAX_WIDTH`): the transposed tile of input samples
/// (16 × [`FLOAT_TILE_RUNS`]), then the two output stages of 16 outputs per thread. The van Herk
/// kernel's chunk sums, one `(Σ, Σ²)` f64 pair per run, share the squares' stage: they are read
/// before any output is staged (f32 → f32: 52.3 KB, four blocks per SM of 228 KB).
pub const fn float_sliding_layout(sample_size: usize, sum_size: usize, sumsq_size: usize) -> SlidingLayout {
    let stage_sum = (16 * FLOAT_TILE_RUNS * sample_size).next_multiple_of(16);
    let span = WINDOW_BLOCK as usize * SLIDING_CHUNK as usize;
    let stage_sumsq = stage_sum + span * sum_size;
    let sumsq_bytes = span * sumsq_size;
    let chunk_bytes = FLOAT_TILE_RUNS * 16;
    SlidingLayout {
        chunks: stage_sumsq,
        stage_sum,
        stage_sumsq,
        bytes: stage_sumsq
            + if chunk_bytes > sumsq_bytes {
                chunk_bytes
            } else {
                sumsq_bytes
            },
    }
}

/// 16-byte slot of the sliding kernel's output stage holding vector `g` of thread `t`'s
/// `v ∈ {1, 2, 4, 8}` vectors: thread-major with an XOR swizzle, so that both the threads'
/// writes (vector `g` of 8 consecutive threads) and the block's coalesced reads (8 consecutive
/// slots' worth of vectors) fall in 8 distinct 16-byte bank groups.
#[inline(always)]
pub const fn sliding_stage_slot(t: usize, g: usize, v: usize) -> usize {
    t * v + (g ^ ((t / (8 / v)) & (v - 1)))
}

/// One kernel of the window family, in table order.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WindowKernel {
    /// Row windows, both sums read-modify-written in global memory inside the window loop.
    GlobalAccumulate = 0,
    /// Row windows, one loop per sum, still accumulating in global memory.
    SplitLoops = 1,
    /// Row windows, each thread stages its own window in shared memory.
    StagedWindow = 2,
    /// Row windows, the block's tile and halo in shared memory, sums in registers.
    SharedTile = 3,
    /// Row windows, O(1) per output from running sums over a block scan.
    RunningSum = 4,
    /// 2D, second pass of the separable box: windows down the columns of row sums.
    BoxColumns = 5,
}

impl WindowKernel {
    pub const ALL: [WindowKernel; 6] = [
        WindowKernel::GlobalAccumulate,
        WindowKernel::SplitLoops,
        WindowKernel::StagedWindow,
        WindowKernel::SharedTile,
        WindowKernel::RunningSum,
        WindowKernel::BoxColumns,
    ];

    pub const fn index(self) -> usize {
        self as usize
    }
}

/// Symbol of one window kernel: `gpuprims_window_<instance>_<kernel>`.
#[macro_export]
macro_rules! window_kernel_name {
    ($inst:ident, $k:literal) => {
        concat!($crate::kernel_prefix!(), "window_", stringify!($inst), "_", $k)
    };
}

/// The kernel symbols of one instance, in [`WindowKernel::ALL`] order.
#[macro_export]
macro_rules! window_kernel_names {
    ($inst:ident) => {
        [
            $crate::window_kernel_name!($inst, "global_accumulate"),
            $crate::window_kernel_name!($inst, "split_loops"),
            $crate::window_kernel_name!($inst, "staged_window"),
            $crate::window_kernel_name!($inst, "shared_tile"),
            $crate::window_kernel_name!($inst, "running_sum"),
            $crate::window_kernel_name!($inst, "box_columns"),
        ]
    };
}

/// Symbol of an instance's sliding row kernel (integers: running sums that subtract; f32: van
/// Herk inside each thread's run).
#[macro_export]
macro_rules! window_sliding_name {
    ($inst:ident) => {
        $crate::window_kernel_name!($inst, "sliding_sum")
    };
}

/// Symbol of a float instance's sliding row kernel for widths in [`FLOAT_NARROW_WIDTHS`]
/// (direct sums over each thread's run).
#[macro_export]
macro_rules! window_narrow_name {
    ($inst:ident) => {
        $crate::window_kernel_name!($inst, "sliding_narrow")
    };
}

/// Float window widths the narrow sliding kernel takes: from 3 (its groups of 4 outputs share
/// `w − 3` samples) to below a thread's run of outputs. Others take van Herk.
pub const FLOAT_NARROW_WIDTHS: core::ops::Range<u32> = 3..SLIDING_CHUNK;

/// Symbol of the integer-only fused 2D box of an instance (its running sums subtract).
#[macro_export]
macro_rules! window_fused_name {
    ($inst:ident) => {
        $crate::window_kernel_name!($inst, "box_fused")
    };
}

/// Calls `$m! { instance => input, sum output, sum-of-squares output, kind, blocks; .. }` with
/// every instance of the window family, in table order. `kind` is `fused(n, b)` for instances
/// with the integer-only kernels (the sliding row kernel and the fused 2D box: their running sums
/// subtract), `n` the sliding kernel's launch bound and `b` the fused box's, `fused(n, b, p)` for
/// the u8 instances, which also have the warp-prefix box (`p` its launch bound, blocks of
/// `WARP_BOX_WARPS` warps), `float_rows(n, m)` for the float instances (the van Herk sliding
/// row kernel and the narrow-window one, `m` its launch bound; no fused box) and `separable` for
/// the others. `blocks`, `n` and `b` are launch bounds (resident blocks per SM the registers
/// must allow; 256 threads, 128 for the fused box): the most that ptxas sm_90 reaches without
/// spilling (4 at 64 registers, 3 at 80; the fused box 3 at 168, or 2 where its shared memory
/// allows no more; the float kernels 4, 3 or 2: f32 → f32's layout fits four blocks per SM, that
/// of f64 outputs two).
#[macro_export]
macro_rules! for_each_window_instance {
    ($m:ident) => {
        $m! {
            u8_f32 => u8, f32, f32, fused(4, 3, 4), 4;
            u8_f64 => u8, f64, f64, fused(3, 2, 4), 4;
            u8_exact => u8, u32, u64, fused(3, 2, 4), 4;
            u16_f32 => u16, f32, f32, fused(4, 3), 3;
            u16_f64 => u16, f64, f64, fused(4, 3), 3;
            u16_exact => u16, u64, u64, fused(4, 3), 3;
            i32_f32 => i32, f32, f32, fused(4, 3), 3;
            i32_f64 => i32, f64, f64, fused(4, 3), 3;
            i32_exact => i32, i64, $crate::abi::reduce::W128, fused(4, 3), 3;
            f32_f32 => f32, f32, f32, float_rows(4, 4), 3;
            f32_f64 => f32, f64, f64, float_rows(2, 3), 3;
            f64_f64 => f64, f64, f64, float_rows(2, 2), 3;
        }
    };
}
