//! Rung 5 for float rows (f32, f64): direct sums for narrow windows, van Herk/Gil-Werman over
//! 16-sample chunks for the others, inside each thread's run over a transposed tile of the input
//! type in shared memory, every sum in f64. No subtraction (a NaN or an infinity stays in the
//! windows that hold it, and no running sum's magnitude leaks into later windows) and no block
//! scan: the block-scan running sums it replaces spent two segmented scans of f64 pairs per
//! position.

use super::*;
use crate::abi::window::{FLOAT_TILE_RUNS, float_sliding_layout};

/// Rung 5 for float rows. Tile `k` (block `k`) holds outputs `[S·k', S·k' + S)` of a row
/// (`S = WINDOW_BLOCK · P`, `P = 16` outputs per thread).
///
/// 1. The block stages the tile's `S + w − 1` samples, in the input type, in a transposed tile
///    ([`Tile`]): the aligned 16-byte vectors inside the row with read-only vector loads (`V`
///    per thread), row ends and border positions one by one, and zeros past the tile's last
///    sample up to the last position a thread reads. Every read below is then an unconditional
///    load at the thread's index plus a constant, conflict-free, widened to f64 as it is read:
///    an f32 tile takes half the shared memory and half the shared-memory wavefronts per warp
///    read of an f64 one, for a conversion per read on another pipe.
/// 2. Thread `t` owns outputs `[16t, 16t + 16)`: the run's 16 positions are its own chunk.
///    `NARROW` (`3 ≤ w < 16`): direct sums, in groups of 4 outputs ([`narrow_run`]). Otherwise
///    ([`van_herk_run`], `w ≥ 16`; `w ≤ 2` sums directly) window `[i, i + w)` is the suffix sum
///    of the own chunk from `i`, the whole chunks after it that end before the first window's
///    end `w − 1`, and the running sum from the next chunk's first sample up to the window's
///    end `e = i + w − 1`. The 16 ends lie in at most two chunks, so that running sum never
///    restarts: one forward pass over `e` adds one sample per output, without per-output block
///    bookkeeping; per half run of 8 outputs, a backward pass keeps the suffix sums in
///    registers.
/// 3. The chunks between (`w > 32`): their sums, one per run of the tile, go to shared memory
///    (over the squares' stage) behind a barrier, each thread adds those of its middle, and a
///    second barrier frees the stage (each thread's own chunk is its first suffix sum).
/// 4. Outputs go through the swizzled shared stage and leave as whole 512-byte warp rows.
///
/// Every sum is in f64 (f32 samples and their squares are exact in it); a window's terms are
/// added in a fixed order, so the error bound of a direct sum of `w` terms holds.
///
/// # Safety
/// As [`sliding_sum`] (a null `sumsq` skips the squares' stores), with `P = 16` and dynamic shared
/// memory of `float_sliding_layout(size_of::<T>(), ..).bytes`; widths up to `SLIDING_MAX_WIDTH`,
/// `NARROW` exactly when the width is in `FLOAT_NARROW_WIDTHS` (the van Herk path assumes `w ≤ 2`
/// or `w ≥ 16`).
pub unsafe fn float_sliding_sum<T, S, Q, const V: usize, const NARROW: bool>(
    x: *const T,
    sum: *mut S,
    sumsq: *mut Q,
    a: RowArgs<T>,
) where
    T: FloatSample,
    S: FromAcc<f64>,
    Q: FromAcc<f64>,
{
    let span = WINDOW_BLOCK as u64 * P as u64;
    let total_tiles = a.rows * a.n.div_ceil(span);
    let w = a.width as usize;
    let t = thread_idx() as usize;
    let layout = float_sliding_layout(
        core::mem::size_of::<T>(),
        core::mem::size_of::<S>(),
        core::mem::size_of::<Q>(),
    );
    // SAFETY: the host sized shared memory with float_sliding_layout.
    let (tile, chunks, stage_s, stage_q) = unsafe {
        let base: *mut u8 = dynamic_shared();
        (
            Tile(base as *mut T),
            base.add(layout.chunks) as *mut F2,
            base.add(layout.stage_sum),
            base.add(layout.stage_sumsq),
        )
    };
    let vector_loads = (x as usize).is_multiple_of(16);
    let squares = !sumsq.is_null();
    // Positions staged: the last thread's reads reach 16·255 + max(30, w + 14).
    let reach = (WINDOW_BLOCK as usize - 1) * P + (w + 14).max(2 * P - 2) + 1;
    // One tile per block: the host's grid covers every tile (a loop over tiles held the
    // registers of every tile's work live across it).
    let k = block_idx() as u64;
    if k >= total_tiles {
        return;
    }
    let cur = SlidingTile::new::<T, V>(k, span, &a, vector_loads);
    // SAFETY: the layout's tile region; reach ≤ 16 · FLOAT_TILE_RUNS (the layout's bound).
    unsafe { tile.stage::<V>(&cur, x, &a, t, reach) };
    // SAFETY: every thread reaches it.
    unsafe { sync_threads() };
    let run = Run(tile.0.wrapping_add(t));
    let s0 = t * P;
    if NARROW {
        if s0 < cur.outputs {
            let mut ws = StageWriter::<S, P>::new(stage_s, t);
            let mut wq = StageWriter::<Q, P>::new(stage_q, t);
            // SAFETY: the stages hold WINDOW_BLOCK · P values each.
            unsafe { narrow_run(run, w, &mut ws, squares.then_some(&mut wq)) };
        }
    } else {
        // SAFETY: the tile is staged; the stages and chunks are the layout's.
        unsafe { van_herk_run::<T, S, Q>(run, &cur, w, chunks, stage_s, stage_q, squares) };
    }
    // SAFETY: every thread reaches it.
    unsafe { sync_threads() };
    let o = (cur.row_start + cur.o0) as usize;
    // SAFETY: outputs o .. o + outputs lie in the tile's row; the stages were filled above.
    unsafe {
        stage_flush::<S, P>(stage_s, sum.add(o), cur.outputs, t, WINDOW_BLOCK as usize);
        if squares {
            stage_flush::<Q, P>(stage_q, sumsq.add(o), cur.outputs, t, WINDOW_BLOCK as usize);
        }
    }
}

/// The van Herk path of [`float_sliding_sum`] for one tile: steps 2 and 3 (`w ≥ 16`, and direct
/// sums for `w ≤ 2`).
///
/// # Safety
/// All threads of the block call it after staging `cur` (it holds two barriers when `w > 32`);
/// `chunks` and the stages are the layout's (the chunk sums alias the squares' stage).
#[inline(always)]
unsafe fn van_herk_run<T: FloatSample, S: FromAcc<f64>, Q: FromAcc<f64>>(
    run: Run<T>,
    cur: &SlidingTile,
    w: usize,
    chunks: *mut F2,
    stage_s: *mut u8,
    stage_q: *mut u8,
    squares: bool,
) {
    let t = thread_idx() as usize;
    let s0 = t * P;
    let mut ws = StageWriter::<S, P>::new(stage_s, t);
    let mut wq = StageWriter::<Q, P>::new(stage_q, t);
    let mut put = |i: usize, window: F2| {
        // SAFETY: the stages hold WINDOW_BLOCK · P values each; i < P.
        unsafe {
            ws.put(i, S::from_acc(window.s));
            if squares {
                wq.put(i, Q::from_acc(window.q));
            }
        }
    };
    if w <= 2 {
        if s0 < cur.outputs {
            crate::unroll!(P, |i| {
                let v = pair(run.sample(i));
                put(i, if w == 2 { add(v, run.sample(i + 1)) } else { v });
            });
        }
        return;
    }
    // The chunk (relative to the thread's own) that holds the first window's end.
    let c = (w - 1) / P;
    let first = half_suffixes(run, 0);
    let mut middle = NEUTRAL;
    if c >= 2 {
        let tile = run.0.wrapping_sub(t);
        // Chunk sums of the fully staged chunks the middles read: the block's own (its first
        // suffix sum) and the c − 1 beyond the last thread's.
        // SAFETY: run indices < FLOAT_TILE_RUNS (the layout's chunk region).
        unsafe {
            if s0 + P <= cur.len {
                chunks.add(t).write(first[0]);
            }
            let mut j = WINDOW_BLOCK as usize + t;
            while j < WINDOW_BLOCK as usize + c - 1 && (j + 1) * P <= cur.len {
                let halo = Run(tile.wrapping_add(j));
                let mut chunk = halo.at(P - 1);
                crate::unroll!(P - 1, |q| {
                    chunk = add(chunk, halo.sample(P - 2 - q));
                });
                chunks.add(j).write(chunk);
                j += WINDOW_BLOCK as usize;
            }
            // SAFETY: every thread reaches it (c is uniform).
            sync_threads();
            if s0 < cur.outputs {
                for m in 1..c {
                    // Chunk t + m < t + c is fully staged (its last sample precedes the first
                    // window's end) and was written before the barrier.
                    middle = middle.plus(chunks.add(t + m).read());
                }
            }
            // The chunk sums share the squares' stage: every thread has read them.
            sync_threads();
        }
    }
    if s0 < cur.outputs {
        // The running sum from the first sample after the own chunk and the middles, up to
        // before the first window's end (w = 16: nothing, its first window is the own chunk).
        let mut ends = NEUTRAL;
        let start = c.max(1) * P;
        let (lead, at_end) = (run.from(start), run.from(w - 1));
        crate::unroll!(P - 1, |q| {
            if start + q < w - 1 {
                ends = add(ends, lead.sample(q));
            }
        });
        let mut half = |h: usize, suffix: [F2; H]| {
            crate::unroll!(H, |ii| {
                let i = h + ii;
                if i > 0 || c > 0 {
                    ends = add(ends, at_end.sample(i));
                }
                put(i, suffix[ii].plus(middle).plus(ends));
            });
        };
        half(0, first);
        half(H, half_suffixes(run, H));
    }
}

/// Outputs per thread of the float sliding kernel, and the width of its chunks.
const P: usize = SLIDING_CHUNK as usize;
/// Outputs per half run: each half's suffix sums live in registers in turn.
const H: usize = P / 2;

/// A sample and its square in f64.
type F2 = Sums<f64, f64>;

/// The sums of no sample: −0.0 leaves every sum as it is (+0.0 would turn a window of −0.0 into
/// +0.0).
const NEUTRAL: F2 = F2 { s: -0.0, q: -0.0 };

/// Sample `v` as `(v, v²)`.
#[inline(always)]
fn pair(v: f64) -> F2 {
    F2 { s: v, q: v * v }
}

/// `acc` plus sample `v` (its square by one fused multiply-add).
#[inline(always)]
fn add(acc: F2, v: f64) -> F2 {
    F2 {
        s: acc.s + v,
        q: core::intrinsics::fmaf64(v, v, acc.q),
    }
}

/// A float input of the sliding kernels (f32, f64): the type its tile holds, widened to f64 as
/// it is read (`WindowIn::lift`); positions past the tile's samples (never in a window) stage
/// its default, zero.
pub trait FloatSample: WindowIn<S = f64, Q = f64> + Default {}

impl<T: WindowIn<S = f64, Q = f64> + Default> FloatSample for T {}

/// The transposed tile: position `16r + q` at element `q · FLOAT_TILE_RUNS + r`.
#[derive(Clone, Copy)]
struct Tile<T>(*mut T);

impl<T: FloatSample> Tile<T> {
    /// Element of tile position `p`, in 32-bit arithmetic (positions stay below
    /// `16 · FLOAT_TILE_RUNS`; 64-bit index math cost twice the instructions per staged sample).
    #[inline(always)]
    fn slot(self, p: usize) -> *mut T {
        let p = p as u32;
        self.0
            .wrapping_add(((p % P as u32) * FLOAT_TILE_RUNS as u32 + p / P as u32) as usize)
    }

    /// Stages tile positions `[0, reach)`: the samples `[0, len)` of `cur` (the aligned in-row
    /// vectors by 16-byte loads, the rest border-mapped one by one), zeros after.
    ///
    /// # Safety
    /// `reach ≤ 16 · FLOAT_TILE_RUNS`; the tile region is the layout's; `x` the kernel's input,
    /// 16-byte aligned when `cur.vectors > 0`.
    #[inline(always)]
    unsafe fn stage<const V: usize>(self, cur: &SlidingTile, x: *const T, a: &RowArgs<T>, t: usize, reach: usize) {
        let lanes = 16 / core::mem::size_of::<T>();
        // SAFETY: forwarded.
        let pre = unsafe { cur.load_vectors::<T, V>(x, t) };
        // The lanes' slots of the thread's first vector; vector `t + i · B` lies `B · lanes`
        // positions (a multiple of 16: `B · lanes / 16` runs, the same places in them) further,
        // so its slots are those plus a constant — no slot arithmetic per vector.
        let p0 = cur.vector_pos(t, lanes);
        let mut slots = [self.0; 4];
        crate::unroll!(4, |l| {
            if l < lanes {
                slots[l] = self.slot(p0.wrapping_add(l));
            }
        });
        const { assert!((WINDOW_BLOCK as usize * 16 / core::mem::size_of::<T>()).is_multiple_of(P)) };
        let runs_per_vector = WINDOW_BLOCK as usize * lanes / P;
        crate::unroll!(V, |i| {
            if t + i * (WINDOW_BLOCK as usize) < cur.vectors {
                crate::unroll!(4, |l| {
                    if l < lanes {
                        // SAFETY: lane l of the vector's 16 bytes; its position < len ≤ reach.
                        unsafe {
                            let v = (pre[i].as_ptr() as *const T).add(l).read();
                            slots[l].add(i * runs_per_vector).write(v);
                        }
                    }
                });
            }
        });
        // Scalar positions: [0, head) and [tail, reach).
        let (head, tail) = if cur.vectors > 0 {
            (cur.vector_pos(0, lanes), cur.vector_pos(cur.vectors, lanes))
        } else {
            (cur.len, cur.len)
        };
        // SAFETY: the tile's row is inside the input.
        let row = BorderedRow::new(unsafe { x.add(cur.row_start as usize) }, a.n, a.border, a.cval);
        let scalars = head + (reach - tail.min(reach));
        let mut j = t;
        while j < scalars {
            let p = if j < head { j } else { tail + (j - head) };
            let v = if p < cur.len {
                // SAFETY: p < len positions of the tile; the row holds n samples.
                unsafe { row.sample(cur.first + p as i64) }
            } else {
                T::default()
            };
            // SAFETY: p < reach.
            unsafe { self.slot(p).write(v) };
            j += WINDOW_BLOCK as usize;
        }
    }
}

/// A thread's view of the tile from its run's first position (the tile plus the run index):
/// position `p` at a constant offset from it.
#[derive(Clone, Copy)]
struct Run<T>(*mut T);

impl<T: FloatSample> Run<T> {
    /// Position `p`, in f64.
    #[inline(always)]
    fn sample(self, p: usize) -> f64 {
        // SAFETY: every position a thread reads was staged (`reach`).
        unsafe { Tile(self.0).slot(p).read() }.lift().s
    }

    /// Positions `p0 + j` for constant `j ≤ 16` and a run-time `p0`: each read an add and a
    /// select from `p0`'s slot, not a slot computation of its own.
    #[inline(always)]
    fn from(self, p0: usize) -> Span<T> {
        Span {
            base: Tile(self.0).slot(p0),
            phase: (p0 % P) as u32,
        }
    }

    /// Position `p` as `(x, x²)`.
    #[inline(always)]
    fn at(self, p: usize) -> F2 {
        pair(self.sample(p))
    }
}

/// Positions from a run-time one ([`Run::from`]).
#[derive(Clone, Copy)]
struct Span<T> {
    /// The first position's slot.
    base: *mut T,
    /// The first position's place in its run.
    phase: u32,
}

impl<T: FloatSample> Span<T> {
    /// Position `p0 + j`, in f64: `j` slots of `FLOAT_TILE_RUNS` on from `p0`'s, back to the next
    /// run's first slot where `p0 + j` crosses into it.
    #[inline(always)]
    fn sample(self, j: usize) -> f64 {
        let next_run = if self.phase + j as u32 >= P as u32 {
            P * FLOAT_TILE_RUNS - 1
        } else {
            0
        };
        // SAFETY: every position a thread reads was staged (`reach`); j ≤ 16 crosses at most
        // one run.
        unsafe {
            self.base
                .wrapping_add(j * FLOAT_TILE_RUNS)
                .wrapping_sub(next_run)
                .read()
        }
        .lift()
        .s
    }
}

/// Backward over the thread's run from its last position: the suffix sums of the run's half
/// `[h, h + H)`, each from its position to the run's end (a whole chunk for `h = 0`).
#[inline(always)]
fn half_suffixes<T: FloatSample>(run: Run<T>, h: usize) -> [F2; H] {
    let mut acc = run.at(P - 1);
    for j in (h + H..P - 1).rev() {
        acc = add(acc, run.sample(j));
    }
    let mut suffix = [NEUTRAL; H];
    crate::unroll!(H, |kk| {
        let j = h + H - 1 - kk;
        if j < P - 1 {
            acc = add(acc, run.sample(j));
        }
        suffix[H - 1 - kk] = acc;
    });
    suffix
}

/// The `M`-block part of [`narrow_run`]'s group sums: group `g`'s is blocks `g .. g + M`, block
/// `k` the samples `4k + 3 ..= 4k + 6` (added in order), so each sample is read and widened once
/// for up to three groups (sample by sample, each group read its own: at `w = 15`, 48 reads and
/// 96 f64 operations against 24 and 58).
#[inline(always)]
fn block_commons<T: FloatSample, const M: usize>(run: Run<T>) -> [F2; P / 4] {
    let mut common = [NEUTRAL; P / 4];
    crate::unroll!(P / 4 + 2, |k| {
        if k < P / 4 + M - 1 {
            let mut block = run.at(4 * k + 3);
            crate::unroll!(3, |j| {
                block = add(block, run.sample(4 * k + 4 + j));
            });
            crate::unroll!(P / 4, |g| {
                if g <= k && k < g + M {
                    common[g] = if k == g { block } else { common[g].plus(block) };
                }
            });
        }
    });
    common
}

/// Windows narrower than a run (`3 ≤ w < 16`): direct sums in groups of 4 outputs. A group's
/// outputs `i .. i + 4` share the `w − 3` samples every one of them holds (their sum built from
/// blocks of four samples that neighbouring groups share, [`block_commons`]); each adds its own
/// samples before them (a suffix chain over `x_i, x_{i+1}, x_{i+2}`) and after them (a prefix
/// chain over `x_{i+w}, ..`). At `w = 15` a thread reads 48 shared positions and does 142 f64
/// operations for its 16 outputs (72 and 180 with each group summing its shared samples alone;
/// 256 and 512 for output pairs sharing `w − 1` samples). The terms of each window are added in
/// a fixed order (a sum starts from −0.0, which leaves any sum as it is: +0.0 would turn −0.0
/// into +0.0). Positions past the run's outputs stage values that are never flushed.
///
/// Loading a half run's samples once into registers spilled at the three-block bound (80
/// registers). Windows of 1 and 2 samples take the van Herk path: a second unrolled copy of
/// this one for them, behind a run-time test of `w`, took LLVM's compile time from minutes to
/// hours.
///
/// # Safety
/// As [`StageWriter::put`].
#[inline(always)]
unsafe fn narrow_run<T: FloatSample, S: FromAcc<f64>, Q: FromAcc<f64>>(
    run: Run<T>,
    w: usize,
    ws: &mut StageWriter<S, P>,
    mut wq: Option<&mut StageWriter<Q, P>>,
) {
    // The groups' shared sums `x_{i+3} + .. + x_{i+w−1}`: `m` whole blocks of four samples
    // ([`block_commons`], one instance per `m`: tests of a run-time `m` per block and group
    // cost as much as the reads they save), then the `r` left over one by one (uniform tests).
    let (m, r) = ((w - 3) / 4, (w - 3) % 4);
    let mut common = match m {
        1 => block_commons::<T, 1>(run),
        2 => block_commons::<T, 2>(run),
        3 => block_commons::<T, 3>(run),
        _ => [NEUTRAL; P / 4],
    };
    if r > 0 {
        let rest = run.from(w - r);
        crate::unroll!(3, |j| {
            if j < r {
                crate::unroll!(P / 4, |g| {
                    common[g] = add(common[g], rest.sample(4 * g + j));
                });
            }
        });
    }
    let after = run.from(w);
    crate::unroll!(P / 4, |g| {
        let i = 4 * g;
        let x = |k: usize| run.sample(i + k);
        let common = common[g];
        let x2 = pair(x(2));
        let left1 = add(x2, x(1));
        let right1 = pair(after.sample(i));
        let right2 = add(right1, after.sample(i + 1));
        let out = [
            add(left1, x(0)).plus(common),
            left1.plus(common).plus(right1),
            x2.plus(common).plus(right2),
            common.plus(add(right2, after.sample(i + 2))),
        ];
        crate::unroll!(4, |r| {
            // SAFETY: forwarded.
            unsafe {
                ws.put(i + r, S::from_acc(out[r].s));
                if let Some(wq) = &mut wq {
                    wq.put(i + r, Q::from_acc(out[r].q));
                }
            }
        });
    });
}
