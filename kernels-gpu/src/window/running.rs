//! Rung 5: running sums over block scans (floats and wide integer windows), and the integer
//! sliding kernel (16 bytes per thread from a shared tile, outputs through a swizzled stage).

use super::*;

// ---------------------------------------------------------------------------------------------
// Rung 5: running sums over block scans
// ---------------------------------------------------------------------------------------------

/// A placeholder sample (never stored: positions outside the pass are skipped).
#[inline(always)]
pub(super) fn xs_zero<T: WindowIn>() -> T {
    // SAFETY: every WindowIn type is a plain integer or float, valid for any bit pattern.
    unsafe { core::mem::zeroed() }
}

/// One direction of a segmented running-sum pass over the tile's positions `[0, count)`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Pass {
    /// Ascending positions, exclusive running sums (`E[p]` = sum of the positions before `p`
    /// since the last restart); restarts at positions `≡ 0 mod period`.
    ForwardExclusive,
    /// Descending positions, inclusive running sums (sum of `p` and the positions after it up to
    /// the end of its restart block); restarts at positions `≡ period − 1 mod period`.
    BackwardInclusive,
}

/// Runs one pass of the block's running sums over positions `[0, count)` in rounds of
/// `WINDOW_BLOCK · C` positions; `period = 0` means no restarts. Each round first stages its
/// positions' samples in shared memory (`xs`, one coalesced border-mapped loop, `sample_at(p)`
/// giving the sample at position `p`), then thread `t` scans the `C` consecutive staged positions
/// `t·C ..` (descending positions for the backward pass). Calls `store(p, running sum at p)` for
/// every position.
///
/// # Safety
/// All threads of the block call it with the same arguments; `slots` as [`block_exclusive_scan`];
/// `xs` holds `WINDOW_BLOCK · C` samples of shared memory.
#[inline(always)]
#[allow(unused_assignments)] // the last unrolled step's phase update
pub(super) unsafe fn running_pass<T: WindowIn, const C: usize>(
    pass: Pass,
    count: u32,
    period: u32,
    slots: *mut Seg<SumsOf<T>>,
    xs: *mut T,
    sample_at: impl Fn(u32) -> T,
    mut store: impl FnMut(u32, SumsOf<T>),
) where
    T::S: WarpShuffle,
    T::Q: WarpShuffle,
{
    let round = WINDOW_BLOCK * C as u32;
    let t = thread_idx();
    let mut carry = Seg::IDENTITY;
    let mut r0 = 0;
    while r0 < count {
        // Position of the j-th staged sample of this round: ascending from r0, or descending
        // from count − 1 − r0.
        let position = |j: u32| match pass {
            Pass::ForwardExclusive => r0 as i64 + j as i64,
            Pass::BackwardInclusive => count as i64 - 1 - r0 as i64 - j as i64,
        };
        let valid = |p: i64| p >= 0 && p < count as i64;
        // C samples per thread, strided by the block (coalesced), all loads issued first.
        let mut staged = [xs_zero::<T>(); C];
        crate::unroll!(C, |k| {
            let p = position(t + k as u32 * WINDOW_BLOCK);
            if valid(p) {
                staged[k] = sample_at(p as u32);
            }
        });
        crate::unroll!(C, |k| {
            // SAFETY: t + k · WINDOW_BLOCK < round staged slots.
            unsafe { xs.add((t + k as u32 * WINDOW_BLOCK) as usize).write(staged[k]) };
        });
        // SAFETY: every thread reaches it (uniform loop bounds).
        unsafe { sync_threads() };
        let base = t * C as u32;
        let mut v = [SumsOf::<T>::ZERO; C];
        crate::unroll!(C, |c| {
            if valid(position(base + c as u32)) {
                // SAFETY: staged above, before the barrier.
                v[c] = unsafe { xs.add(base as usize + c).read() }.lift();
            }
        });
        // Local scan with restarts; `phase` tracks position mod period without a division per
        // element.
        let mut phase = if period == 0 {
            0
        } else {
            (position(base).max(0) as u32) % period
        };
        let restart_phase = match pass {
            Pass::ForwardExclusive => 0,
            Pass::BackwardInclusive => period.wrapping_sub(1),
        };
        // The scan runs in place: v[c] becomes the running sum at c (local to the chunk).
        let mut acc = SumsOf::<T>::ZERO;
        let mut first_restart = C;
        crate::unroll!(C, |c| {
            if period != 0 && phase == restart_phase {
                acc = SumsOf::<T>::ZERO;
                if first_restart == C {
                    first_restart = c;
                }
            }
            match pass {
                Pass::ForwardExclusive => {
                    let x = v[c];
                    v[c] = acc;
                    acc = acc.plus(x);
                }
                Pass::BackwardInclusive => {
                    acc = acc.plus(v[c]);
                    v[c] = acc;
                }
            }
            if period != 0 {
                phase = match pass {
                    Pass::ForwardExclusive => {
                        if phase + 1 == period {
                            0
                        } else {
                            phase + 1
                        }
                    }
                    Pass::BackwardInclusive => {
                        if phase == 0 {
                            period - 1
                        } else {
                            phase - 1
                        }
                    }
                };
            }
        });
        let aggregate = Seg {
            value: acc,
            reset: (first_restart < C) as u32,
        };
        // SAFETY: every thread runs the same number of rounds (the loop bound is uniform). Its
        // barriers also order this round's reads of `xs` before the next round's staging.
        let (exclusive, total) = unsafe { block_exclusive_scan(aggregate, slots) };
        let carry_in = carry.then(exclusive).value;
        crate::unroll!(C, |c| {
            let p = position(base + c as u32);
            if valid(p) {
                let value = if c < first_restart { carry_in.plus(v[c]) } else { v[c] };
                store(p as u32, value);
            }
        });
        carry = carry.then(total);
        r0 += round;
    }
}

/// Rung 5: block `b` produces outputs `[tile·k, tile·k + tile)` of row `r` (`b = r · tiles + k`)
/// from running sums (see the module docs): `E[s + w] − E[s]` for integers, `suffix[s] +
/// prefix[s + w]` for floats, read back from shared memory by thread `t` for its `C` outputs
/// `t·C ..` and written with 16-byte stores where aligned. A null `sumsq` skips the squares'
/// stores (the 2D sum-only pass).
///
/// # Safety
/// `x` and the outputs hold `rows · n`; grid = `rows · ⌈n / tile⌉` blocks of `WINDOW_BLOCK`;
/// `a.tile` ≤ `running_tile(..).max_outputs` and a multiple of `C`; dynamic shared memory holds
/// `running_shared_bytes(WINDOW_BLOCK · C, ..)` bytes.
pub unsafe fn running_sum<T, S, Q, const C: usize>(x: *const T, sum: *mut S, sumsq: *mut Q, a: RowArgs<T>)
where
    T: WindowIn,
    T::S: WarpShuffle,
    T::Q: WarpShuffle,
    S: FromAcc<T::S>,
    Q: FromAcc<T::Q>,
{
    const { assert!(C.is_power_of_two() && C <= 16) };
    let tile = a.tile as u64;
    let tiles = a.n.div_ceil(tile);
    let b = block_idx() as u64;
    let (r, k) = (b / tiles, b % tiles);
    let o0 = k * tile;
    let outputs = tile.min(a.n - o0) as u32;
    let width = a.width;
    let single = running_single_round(width as u64, a.tile, C as u32, T::FLOAT);
    let end_base = if single { width } else { a.tile };
    let slots_n = WINDOW_BLOCK * C as u32;
    // SAFETY: r < rows by the grid shape; shared memory holds slots_n sums, slots_n squares and
    // one scan slot per warp (the host sizes it with running_shared_bytes).
    let (row, s_mem, q_mem, scan, xs) = unsafe {
        let base: *mut u8 = dynamic_shared();
        let s_mem = base as *mut T::S;
        let q_mem = s_mem.add(slots_n as usize) as *mut T::Q;
        let scan = q_mem.add(slots_n as usize) as *mut Seg<SumsOf<T>>;
        let staged = scan.add(WINDOW_WARPS as usize) as usize - base as usize;
        let xs = base.add(staged.next_multiple_of(16)) as *mut T;
        (x.add((r * a.n) as usize), s_mem, q_mem, scan, xs)
    };
    let first = o0 as i64 - a.anchor as i64;
    let interior = first >= 0 && first as u64 + outputs as u64 + width as u64 <= a.n;
    let extended = BorderedRow::new(row, a.n, a.border, a.cval);
    let load = |p: u32| {
        let pos = first + p as i64;
        // SAFETY: interior tiles read inside the row; others map through the border.
        unsafe {
            if interior {
                row.add(pos as usize).read()
            } else {
                extended.sample(pos)
            }
        }
    };
    let put = |slot: u32, v: SumsOf<T>| {
        // SAFETY: slot < slots_n (the tile geometry keeps every stored slot in range).
        unsafe {
            s_mem.add(slot as usize).write(v.s);
            q_mem.add(slot as usize).write(v.q);
        }
    };
    let ends = width..width + outputs;
    if T::FLOAT {
        // Prefix sums restarting at multiples of w: the window ends, slots [tile, tile + outputs).
        // SAFETY: uniform arguments; every thread calls.
        unsafe {
            running_pass::<T, C>(
                Pass::ForwardExclusive,
                width + outputs,
                width,
                scan,
                xs,
                load,
                |p, v| {
                    if ends.contains(&p) {
                        put(end_base + p - width, v);
                    }
                },
            );
        }
        // Suffix sums to the end of each w-block: the window starts, slots [0, outputs).
        let span = outputs.div_ceil(width) * width;
        // SAFETY: as above.
        unsafe {
            running_pass::<T, C>(Pass::BackwardInclusive, span, width, scan, xs, load, |p, v| {
                if p < outputs {
                    put(p, v);
                }
            });
        }
    } else {
        // SAFETY: as above.
        unsafe {
            running_pass::<T, C>(Pass::ForwardExclusive, width + outputs, 0, scan, xs, load, |p, v| {
                if single || p < outputs {
                    if p < outputs || ends.contains(&p) {
                        put(p, v);
                    }
                } else if ends.contains(&p) {
                    put(end_base + p - width, v);
                }
            });
        }
    }
    // SAFETY: every thread reaches it; the slots read below were stored before it.
    unsafe { sync_threads() };
    let s0 = thread_idx() * C as u32;
    if s0 >= outputs {
        return;
    }
    let count = (outputs - s0).min(C as u32) as usize;
    let mut vs = [S::ZERO; C];
    let mut vq = [Q::ZERO; C];
    crate::unroll!(C, |c| {
        if c < count {
            let s = s0 + c as u32;
            // SAFETY: s < outputs and end_base + s < slots_n by the geometry.
            let (start, end) = unsafe {
                let e = (end_base + s) as usize;
                (
                    Sums {
                        s: s_mem.add(s as usize).read(),
                        q: q_mem.add(s as usize).read(),
                    },
                    Sums {
                        s: s_mem.add(e).read(),
                        q: q_mem.add(e).read(),
                    },
                )
            };
            let w = if T::FLOAT { start.plus(end) } else { end.minus(start) };
            vs[c] = S::from_acc(w.s);
            vq[c] = Q::from_acc(w.q);
        }
    });
    let o = (r * a.n + o0 + s0 as u64) as usize;
    // SAFETY: outputs o .. o + count lie in row r.
    unsafe {
        store_run(sum.add(o), &vs, count);
        if !sumsq.is_null() {
            store_run(sumsq.add(o), &vq, count);
        }
    }
}

/// 16 bytes written to the padded tile as four word stores (the padded layout keeps words only
/// 4-byte aligned).
#[derive(Clone, Copy)]
#[repr(C)]
pub(super) struct Words([u32; 4]);

/// One tile of the sliding kernel: outputs `[o0, o0 + outputs)` of the row starting at flat index
/// `row_start`, which read the row's samples at positions `[first, first + len)`. The samples
/// inside the row that fill whole aligned 16-byte vectors (`vectors` of them from vector
/// `v_begin`) are staged with vector loads, the rest (row ends, border positions) one by one.
/// `P` is the outputs per thread, `V` the vectors each thread loads ([`sliding_vectors`]).
#[derive(Clone, Copy)]
pub(super) struct SlidingTile {
    pub(super) row_start: u64,
    pub(super) o0: u64,
    pub(super) outputs: usize,
    pub(super) len: usize,
    pub(super) first: i64,
    /// Tile element 0 sits at shared element `lead` (`g0` modulo a vector's lanes), so vectors
    /// land aligned.
    pub(super) lead: usize,
    pub(super) v_begin: u64,
    pub(super) vectors: usize,
}

impl SlidingTile {
    #[inline(always)]
    pub(super) fn new<T, const V: usize>(k: u64, span: u64, a: &RowArgs<T>, vector_loads: bool) -> Self {
        let lanes = 16 / core::mem::size_of::<T>() as u64;
        let tiles = a.n.div_ceil(span);
        let (r, kk) = (k / tiles, k % tiles);
        let row_start = r * a.n;
        let o0 = kk * span;
        let outputs = span.min(a.n - o0) as usize;
        let len = outputs + a.width as usize - 1;
        let first = o0 as i64 - a.anchor as i64;
        let g0 = row_start as i64 + first;
        // The in-row samples [lo, hi), as flat indices.
        let lo = row_start as i64 + first.max(0);
        let hi = row_start as i64 + (first + len as i64).min(a.n as i64);
        let (v_begin, v_end) = ((lo as u64).div_ceil(lanes), (hi.max(lo) as u64) / lanes);
        let vectors = if vector_loads && v_end > v_begin {
            ((v_end - v_begin) as usize).min(V * WINDOW_BLOCK as usize)
        } else {
            0
        };
        SlidingTile {
            row_start,
            o0,
            outputs,
            len,
            first,
            lead: g0.rem_euclid(lanes as i64) as usize,
            v_begin,
            vectors,
        }
    }

    /// Tile position of vector `j`'s first sample (`lanes` samples per vector).
    #[inline(always)]
    pub(super) fn vector_pos(&self, j: usize, lanes: usize) -> usize {
        ((self.v_begin as i64 + j as i64) * lanes as i64 - (self.row_start as i64 + self.first)) as usize
    }

    /// This thread's vector loads (vectors `t`, `t + B`, ...), all issued before any is used.
    ///
    /// # Safety
    /// `x` is the kernel's input, 16-byte aligned when `vectors > 0`.
    #[inline(always)]
    pub(super) unsafe fn load_vectors<T, const V: usize>(&self, x: *const T, t: usize) -> [[u32; 4]; V] {
        let lanes = 16 / core::mem::size_of::<T>();
        // Vector t's address once; the others lie a constant B · 16 bytes apart (immediate
        // offsets, no 64-bit address arithmetic per vector).
        let first = x.wrapping_add((self.v_begin as usize + t) * lanes) as *const [u32; 4];
        let mut v = [[0u32; 4]; V];
        crate::unroll!(V, |i| {
            if t + i * (WINDOW_BLOCK as usize) < self.vectors {
                // SAFETY: vector v_begin + t + i·B lies inside the row (SlidingTile::new), aligned.
                v[i] = unsafe { load_nc_v4(first.add(i * WINDOW_BLOCK as usize)) };
            }
        });
        v
    }

    /// Stages the tile: the aligned in-row vectors, then the remaining positions one by one
    /// (border-mapped). Returns the largest [`SlideIn::magnitude`] among the samples this thread
    /// staged, taken from registers (the tile's accumulator class needs no pass over shared
    /// memory).
    ///
    /// # Safety
    /// `tile` is the padded shared tile sized for this span and width; `x` the kernel's input.
    #[inline(always)]
    pub(super) unsafe fn stage<T: SlideIn, const P: usize, const V: usize>(
        &self,
        tile: *mut u8,
        x: *const T,
        a: &RowArgs<T>,
        t: usize,
    ) -> u32 {
        let size = core::mem::size_of::<T>();
        let (lanes, run) = (16 / size, P * size);
        // SAFETY: forwarded.
        let pre = unsafe { self.load_vectors::<T, V>(x, t) };
        let mut m = 0u32;
        crate::unroll!(V, |i| {
            let j = t + i * WINDOW_BLOCK as usize;
            if j < self.vectors {
                crate::unroll!(4, |l| {
                    m = m.max(T::word_magnitude(pre[i][l]));
                });
                // SAFETY: the vector's 16 bytes land at a 4-byte aligned padded offset inside
                // the tile.
                unsafe {
                    let dst = tile.add(sliding_byte(self.lead + self.vector_pos(j, lanes), size, run)) as *mut Words;
                    dst.write(Words(pre[i]));
                }
            }
        });
        // Scalar positions: [0, head) and [tail, len).
        let (head, tail) = if self.vectors > 0 {
            (self.vector_pos(0, lanes), self.vector_pos(self.vectors, lanes))
        } else {
            (self.len, self.len)
        };
        // SAFETY: the tile's row is inside the input.
        let row = BorderedRow::new(unsafe { x.add(self.row_start as usize) }, a.n, a.border, a.cval);
        let scalars = head + (self.len - tail);
        let mut j = t;
        while j < scalars {
            let p = if j < head { j } else { tail + (j - head) };
            // SAFETY: p < len positions of the tile; the row holds n samples.
            unsafe {
                let v = row.sample(self.first + p as i64);
                m = m.max(v.magnitude());
                (tile.add(sliding_byte(self.lead + p, size, run)) as *mut T).write(v);
            }
            j += WINDOW_BLOCK as usize;
        }
        m
    }
}

/// Collects one thread's run of `C` outputs into 16-byte vectors and writes each, once full, to
/// the thread's swizzled slot of a shared stage (so only one vector lives in registers).
pub(super) struct StageWriter<O: OutElem, const C: usize> {
    pub(super) stage: *mut u8,
    pub(super) t: usize,
    pub(super) lanes: [O; 4],
}

impl<O: OutElem, const C: usize> StageWriter<O, C> {
    #[inline(always)]
    pub(super) fn new(stage: *mut u8, t: usize) -> Self {
        const { assert!(O::LANES <= 4 && C.is_multiple_of(O::LANES)) };
        StageWriter {
            stage,
            t,
            lanes: [O::ZERO; 4],
        }
    }

    /// Output `c < C` of the run (called for `c = 0, 1, ..` in order, with constant `c`).
    ///
    /// # Safety
    /// `stage` is a 16-byte aligned shared region of `WINDOW_BLOCK · C` values, and `t` this
    /// thread's index.
    #[inline(always)]
    pub(super) unsafe fn put(&mut self, c: usize, v: O) {
        self.lanes[c % O::LANES] = v;
        if (c + 1).is_multiple_of(O::LANES) {
            let slot = sliding_stage_slot(self.t, c / O::LANES, C / O::LANES);
            // SAFETY: slot < WINDOW_BLOCK · C / LANES, 16-byte aligned (forwarded).
            unsafe { store_shared_v4(self.stage.add(16 * slot) as *mut [u32; 4], O::pack(|l| self.lanes[l])) };
        }
    }
}

/// The sliding step of one thread's run of `P` window sums: hands output `c` (a constant after
/// unrolling) and its window sums to `put`, then moves the window by `step(c)` (entering minus
/// leaving sample) while outputs remain. A whole run (every thread's but at a row's end) is
/// unrolled apart, without a bound test per output: the kernel is issue-bound, and the test and
/// its branch were a fifth of each output's instructions.
#[inline(always)]
pub(super) fn slide_run<S: Acc, Q: Acc, const P: usize>(
    acc: Sums<S, Q>,
    count: usize,
    step: impl Fn(usize) -> Sums<S, Q>,
    put: impl FnMut(usize, Sums<S, Q>),
) {
    if count == P {
        slide_until::<S, Q, P>(acc, P, step, put)
    } else {
        slide_until::<S, Q, P>(acc, count, step, put)
    }
}

/// [`slide_run`]'s unrolled slide, moving the window while `c + 1 < bound` (a constant bound
/// folds every test away).
#[inline(always)]
#[allow(unused_assignments)] // the last unrolled slide
fn slide_until<S: Acc, Q: Acc, const P: usize>(
    mut acc: Sums<S, Q>,
    bound: usize,
    step: impl Fn(usize) -> Sums<S, Q>,
    mut put: impl FnMut(usize, Sums<S, Q>),
) {
    crate::unroll!(P, |c| {
        put(c, acc);
        if c + 1 < bound {
            acc = acc.plus(step(c));
        }
    });
}

/// Copies the block's `outputs` staged values to `dst` with coalesced stores: consecutive threads
/// write consecutive 16-byte vectors (a warp writes 512 contiguous bytes), or consecutive values
/// when `dst` is not 16-byte aligned.
///
/// # Safety
/// `stage` holds the values a [`StageWriter`] with the same `C` wrote (after a barrier); `dst`
/// addresses `outputs` writable values.
#[inline(always)]
pub(super) unsafe fn stage_flush<O: OutElem, const C: usize>(
    stage: *const u8,
    dst: *mut O,
    outputs: usize,
    t: usize,
    block: usize,
) {
    let vecs = C / O::LANES;
    let slot_of = |j: usize| 16 * sliding_stage_slot(j / vecs, j % vecs, vecs);
    // SAFETY: element e < outputs was staged.
    let value = |e: usize| unsafe {
        (stage.add(slot_of(e / O::LANES) + (e % O::LANES) * core::mem::size_of::<O>()) as *const O).read()
    };
    let mut e = t;
    if (dst as usize).is_multiple_of(16) {
        let full = outputs / O::LANES;
        let mut j = t;
        while j < full {
            // SAFETY: vector j < full lies in the stage and in dst, both 16-byte aligned.
            unsafe {
                store_v4(
                    dst.add(j * O::LANES) as *mut [u32; 4],
                    load_shared_v4(stage.add(slot_of(j)) as *const [u32; 4]),
                )
            };
            j += block;
        }
        e = full * O::LANES + t;
    }
    while e < outputs {
        // SAFETY: e < outputs.
        unsafe { dst.add(e).write(value(e)) };
        e += block;
    }
}

/// Rung 5 for integers: running sums slid by each thread. Block `k` takes tile `k`, outputs
/// `[S·k', S·k' + S)` of a row (`S = WINDOW_BLOCK · P`, `P` outputs per thread:
/// [`sliding_outputs`]); the host launches one block per tile (which measured faster on the H100
/// than persistent blocks prefetching the next tile).
///
/// 1. The block stages the tile's `S + w − 1` samples in shared memory: the aligned 16-byte
///    vectors inside the row with read-only vector loads (`V` per thread, all in flight), row
///    ends and border positions one by one. The layout inserts 4 bytes after every thread's run
///    of `P` samples ([`sliding_byte`]), so the threads' run-strided reads below fall in
///    distinct banks.
/// 2. The tile's accumulator class ([`SlideIn`]): 32-bit sums and squares when every sample
///    has `x² · w < 2^32` ([`fits_small32`]), else the narrow class (i32: |x| < 2^27, squares
///    in u64 instead of 128 bits; u16: sums in u32 instead of u64), else the general one; from
///    the largest `|x|` each thread staged (taken from its registers), one barrier that ORs per
///    class tried — the first also publishes the tile.
/// 3. Windows wider than `SLIDING_DIRECT_MAX`: the block sums each 16-element chunk once, and
///    on long tiles (`P = 16`) scans those sums into prefix sums (kept in the squares' stage).
/// 4. Thread `t` forms the sum of its first window (directly, or from whole chunks — two prefix
///    sums or `w/16` chunk sums — plus at most two partial ones), then slides it over its `P`
///    outputs, adding the entering sample and subtracting the leaving one — exact in wrapping
///    integer arithmetic. Every read of a run of `P` positions (chunk sums, first windows, the
///    leaving and entering samples) comes from two bases (before and after the one pad such a
///    run can cross): a select per read, not a division.
/// 5. The outputs go through a swizzled shared stage, so global stores are whole 512-byte warp
///    rows instead of one 16-byte piece per thread every `16·P / size` bytes.
///
/// # Safety
/// As [`running_sum`] (a null `sumsq` skips the squares' stores), with blocks of `WINDOW_BLOCK`
/// and dynamic shared memory of `sliding_layout(S, w, ..).bytes`; widths up to
/// `SLIDING_MAX_WIDTH`.
#[inline(always)]
pub unsafe fn sliding_sum<T, S, Q, const P: usize, const V: usize>(
    x: *const T,
    sum: *mut S,
    sumsq: *mut Q,
    a: RowArgs<T>,
) where
    T: SlideIn,
    T::S: WarpShuffle,
    T::SQ: WarpShuffle,
    T::NS: WarpShuffle,
    T::NQ: WarpShuffle,
    T::SS: WarpShuffle,
    S: FromAcc<T::S> + FromAcc<T::NS> + FromAcc<T::SS>,
    Q: FromAcc<T::SQ> + FromAcc<T::NQ> + FromAcc<u32>,
{
    let size = core::mem::size_of::<T>();
    const { assert!((P * core::mem::size_of::<T>()).is_multiple_of(16) && P <= 16) };
    let run = (P * size) as u32;
    let span = WINDOW_BLOCK as u64 * P as u64;
    let total_tiles = a.rows * a.n.div_ceil(span);
    let t = thread_idx() as usize;
    let layout = sliding_layout(
        span as u32,
        a.width as u64,
        size,
        core::mem::size_of::<SumsOf<T>>(),
        core::mem::size_of::<S>(),
        core::mem::size_of::<Q>(),
    );
    // SAFETY: the host sized shared memory with sliding_layout for this span and width.
    let (tile, chunks, stage_s, stage_q) = unsafe {
        let base: *mut u8 = dynamic_shared();
        (
            base,
            base.add(layout.chunks),
            base.add(layout.stage_sum),
            base.add(layout.stage_sumsq),
        )
    };
    let vector_loads = (x as usize).is_multiple_of(16);
    let k = block_idx() as u64;
    if k >= total_tiles {
        return;
    }
    let cur = SlidingTile::new::<T, V>(k, span, &a, vector_loads);
    // SAFETY: the layout's tile region.
    let m = unsafe { cur.stage::<T, P, V>(tile, x, &a, t) };
    // Tile position p's shared offset, in 32-bit arithmetic (sliding_byte's layout).
    let lead = cur.lead as u32;
    let byte = |p: usize| (lead + p as u32) * size as u32;
    let padded = |b: u32| b + 4 * (b / run);
    // A thread's run of reads from position p0: positions p0 + c (c < P) span less than two
    // runs of the layout, so they cross at most one pad, before position `split`; each read is
    // then a constant offset from one of two bases (a select, not a division, per read).
    let run_from = |p0: usize| {
        let b = byte(p0);
        let first = padded(b);
        let split = (run - b % run) / size as u32;
        // SAFETY: both bases lie inside the tile region (offsets of its samples).
        let (before, after) = unsafe { (tile.add(first as usize), tile.add(first as usize + 4)) };
        move |c: usize| {
            let base = if (c as u32) < split { before } else { after };
            // SAFETY: callers read positions p0 + c < len (inside the staged tile).
            unsafe { (base.add(c * size) as *const T).read() }
        }
    };
    // The tile's accumulator class, block-uniform: the 32-bit one, else the narrow one, else
    // the general one (each tried only when the type has it). The first class barrier also
    // publishes the staged tile (`bar.red` orders shared memory as `bar.sync` does).
    let (small, narrow) = if T::HAS_SMALL || T::HAS_NARROW {
        // SAFETY: every thread reaches each barrier it meets (the constants and the first
        // barrier's result are uniform), and meets at least one: the first when the type has
        // the 32-bit class, else the second (asserted).
        const { assert!(T::HAS_SMALL || T::NARROW_MAX != u32::MAX) };
        let small = T::HAS_SMALL && !unsafe { sync_threads_or(!fits_small32(m, a.width)) };
        let narrow =
            !small && T::HAS_NARROW && (T::NARROW_MAX == u32::MAX || !unsafe { sync_threads_or(m > T::NARROW_MAX) });
        (small, narrow)
    } else {
        // SAFETY: every thread reaches it.
        unsafe { sync_threads() };
        (false, false)
    };
    let out = TileOut {
        sum,
        sumsq,
        stage_s,
        stage_q,
    };
    // SAFETY: the staged tile; the layout's chunk and stage regions (sized for the general
    // accumulators, the widest).
    unsafe {
        if small {
            slide_tile::<T, T::SS, u32, S, Q, P, _>(&cur, &a, chunks.cast(), out, run_from, T::lift_small)
        } else if narrow {
            slide_tile::<T, T::NS, T::NQ, S, Q, P, _>(&cur, &a, chunks.cast(), out, run_from, T::lift_narrow)
        } else {
            slide_tile::<T, T::S, T::SQ, S, Q, P, _>(&cur, &a, chunks.cast(), out, run_from, T::lift_slide)
        }
    };
}

/// A tile's outputs and the shared stages they pass through.
#[derive(Clone, Copy)]
struct TileOut<S, Q> {
    sum: *mut S,
    sumsq: *mut Q,
    stage_s: *mut u8,
    stage_q: *mut u8,
}

/// Steps 3–5 of [`sliding_sum`] for one staged tile, its sums accumulated in `SS` and its squares
/// in `SQ` (the tile's class). `run_from(p0)(c)` reads the tile's sample at `p0 + c` for `c < P`
/// (a thread's run); `lift` lifts a sample into the class's accumulators.
///
/// # Safety
/// Called by every thread of the block after the tile was staged (and synced); `chunks` and the
/// stages are [`sliding_sum`]'s shared regions, sized for the general accumulators (at least
/// `Sums<SS, SQ>`).
#[inline(always)]
#[allow(unused_assignments)] // the last unrolled slide
unsafe fn slide_tile<T, SS, SQ, S, Q, const P: usize, R>(
    cur: &SlidingTile,
    a: &RowArgs<T>,
    chunks: *mut Sums<SS, SQ>,
    out: TileOut<S, Q>,
    run_from: impl Fn(usize) -> R,
    lift: impl Fn(T) -> Sums<SS, SQ>,
) where
    R: Fn(usize) -> T,
    T: SlideIn,
    SS: Acc + WarpShuffle,
    SQ: Acc + WarpShuffle,
    S: FromAcc<SS>,
    Q: FromAcc<SQ>,
{
    let TileOut {
        sum,
        sumsq,
        stage_s,
        stage_q,
    } = out;
    // Outputs of one vector per thread skip the stage.
    let direct = const { P == S::LANES && P == Q::LANES };
    // Wide windows: chunk prefix sums by a block scan (O(1) per window) on long tiles only.
    let scan = P >= 16;
    let (w, t) = (a.width as usize, thread_idx() as usize);
    let chunk = SLIDING_CHUNK as usize;
    let wide = w > SLIDING_DIRECT_MAX as usize;
    let len = cur.len;
    // The sum of the first `n` samples (at most P) from position p0: all P read from run_from's
    // two bases, those from `n` on discarded by a select (a constant `n` folds it away). Reads
    // reach at most `SLIDING_CHUNK − 1` positions past the tile, which the layout leaves
    // (staged by no thread, written by none while this runs).
    let run_sum = |p0: usize, n: u32| {
        let read = run_from(p0);
        let mut acc = Sums::<SS, SQ>::ZERO;
        crate::unroll!(P, |c| {
            let v = lift(read(c));
            if (c as u32) < n {
                acc = acc.plus(v);
            }
        });
        acc
    };
    // The sum of the `n ≤ SLIDING_DIRECT_MAX` samples from p0 (a narrow first window, or a
    // partial chunk), a run of at most P at a time.
    const { assert!((SLIDING_DIRECT_MAX as usize).is_multiple_of(P) && SLIDING_DIRECT_MAX >= SLIDING_CHUNK) };
    let span_sum = |p0: usize, n: usize| {
        let (mut acc, n) = (Sums::<SS, SQ>::ZERO, n as u32);
        crate::unroll!(SLIDING_DIRECT_MAX as usize / P, |i| {
            let done = (i * P) as u32;
            if n > done {
                acc = acc.plus(run_sum(p0 + i * P, n - done));
            }
        });
        acc
    };
    if wide {
        // Long tiles: prefix[c], the sums of chunks 0..c (16 tile positions each). Thread t
        // sums chunks 2t and 2t + 1; a block scan of those pairs gives every prefix. A partial
        // last chunk counts as 0: windows end at or before `len` (s0 + w ≤ len for every active
        // thread), so only the prefixes of whole chunks are read.
        let n_chunks = len.div_ceil(chunk);
        let chunk_sum = |j: usize| {
            let mut acc = Sums::<SS, SQ>::ZERO;
            if (j + 1) * chunk <= len {
                crate::unroll!(SLIDING_CHUNK as usize / P, |i| {
                    acc = acc.plus(run_sum(j * chunk + i * P, P as u32));
                });
            }
            acc
        };
        if !scan {
            // Short tiles (P < 16): a block scan per tile costs more than it saves; each
            // chunk's own sum instead, summed per window below.
            let mut j = t;
            while j < n_chunks {
                // SAFETY: j < n_chunks slots of the chunk region.
                unsafe { chunks.add(j).write(chunk_sum(j)) };
                j += WINDOW_BLOCK as usize;
            }
        }
        let (a0, a1) = if scan {
            (chunk_sum(2 * t), chunk_sum(2 * t + 1))
        } else {
            (Sums::<SS, SQ>::ZERO, Sums::<SS, SQ>::ZERO)
        };
        let pair = Seg {
            value: a0.plus(a1),
            reset: 0,
        };
        if scan {
            // SAFETY: every thread calls it (scan is uniform); the stage is free until the
            // outputs are staged (the scan's last barrier precedes any stage write).
            let (before, _) = unsafe { block_exclusive_scan(pair, stage_s as *mut SegSums<SS, SQ>) };
            // SAFETY: 2t + 1 ≤ n_chunks + 1 slots of the chunk region (layout).
            unsafe {
                if 2 * t <= n_chunks {
                    chunks.add(2 * t).write(before.value);
                }
                if 2 * t < n_chunks {
                    chunks.add(2 * t + 1).write(before.value.plus(a0));
                }
            }
        }
        // SAFETY: every thread reaches it (wide is uniform).
        unsafe { sync_threads() };
    }
    let s0 = t * P;
    let squares = !sumsq.is_null();
    let o = (cur.row_start + cur.o0) as usize;
    let active = s0 < cur.outputs;
    // The first window [s0, s0 + w).
    let mut acc = Sums::<SS, SQ>::ZERO;
    if active {
        if wide {
            // Whole chunks from two prefix sums (w > 32 spans at least one), then the partial
            // chunks at both ends (none before the first when runs are whole chunks).
            let c_first = s0.div_ceil(chunk);
            let c_end = (s0 + w) / chunk;
            if scan {
                // SAFETY: c_first ≤ c_end ≤ n_chunks, written before the barrier.
                acc = unsafe { chunks.add(c_end).read().minus(chunks.add(c_first).read()) };
            } else {
                for c in c_first..c_end {
                    // SAFETY: chunk sums written before the barrier.
                    acc = acc.plus(unsafe { chunks.add(c).read() });
                }
            }
            acc = acc
                .plus(span_sum(s0, c_first * chunk - s0))
                .plus(span_sum(c_end * chunk, s0 + w - c_end * chunk));
        } else {
            acc = span_sum(s0, w);
        }
    }
    if wide {
        // The chunk sums live in the squares' stage: every thread has read them before any
        // stages an output.
        // SAFETY: every thread reaches it (wide is uniform).
        unsafe { sync_threads() };
    }
    if active {
        let count = (cur.outputs - s0).min(P);
        let (leaving, entering) = (run_from(s0), run_from(s0 + w));
        let step = |c: usize| lift(entering(c)).minus(lift(leaving(c)));
        if direct {
            // One 16-byte vector per thread and output: the stores already coalesce.
            let mut vs = [S::ZERO; P];
            let mut vq = [Q::ZERO; P];
            slide_run::<_, _, P>(acc, count, step, |c, v| {
                vs[c] = S::from_acc(v.s);
                vq[c] = Q::from_acc(v.q);
            });
            // SAFETY: outputs o + s0 .. o + s0 + count lie in the tile's row.
            unsafe {
                store_run(sum.add(o + s0), &vs, count);
                if squares {
                    store_run(sumsq.add(o + s0), &vq, count);
                }
            }
        } else {
            let mut ws = StageWriter::<S, P>::new(stage_s, t);
            let mut wq = StageWriter::<Q, P>::new(stage_q, t);
            // Positions past `count` stage stale values that are never flushed.
            // SAFETY: the stages hold WINDOW_BLOCK · P values each.
            slide_run::<_, _, P>(acc, count, step, |c, v| unsafe {
                ws.put(c, S::from_acc(v.s));
                if squares {
                    wq.put(c, Q::from_acc(v.q));
                }
            });
        }
    }
    if direct {
        return;
    }
    // SAFETY: every thread reaches it.
    unsafe { sync_threads() };
    // SAFETY: outputs o .. o + outputs lie in the tile's row; the stages were filled above.
    unsafe {
        stage_flush::<S, P>(stage_s, sum.add(o), cur.outputs, t, WINDOW_BLOCK as usize);
        if !sumsq.is_null() {
            stage_flush::<Q, P>(stage_q, sumsq.add(o), cur.outputs, t, WINDOW_BLOCK as usize);
        }
    }
}
