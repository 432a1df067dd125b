//! 2D boxes: the separable column pass, the fused one-pass kernel and the moments (mean,
//! variance, deviation) they write.

use super::*;

// ---------------------------------------------------------------------------------------------
// 2D boxes
// ---------------------------------------------------------------------------------------------

/// Mean and population variance of a window from its exact sums ([`moments`], with the box's
/// `1/n` and `1/n²` rounded by the host).
#[inline(always)]
pub(super) fn mean_variance<T: WindowIn>(w: SumsOf<T>, a: &BoxArgs<T>) -> (f64, f64) {
    moments(w.s, w.q, T::FLOAT, a.samples(), a.inv_n, a.inv_n2)
}

/// [`mean_variance`] of the sliding accumulators (squares in [`SlideIn::SQ`]): the spread
/// `n·Σx² − (Σx)²` in 64-bit arithmetic where it fits (u8 always), else the 128-bit path.
#[inline(always)]
pub(super) fn slide_mean_variance<T: SlideIn>(w: SlideSums<T>, a: &BoxArgs<T>) -> (f64, f64) {
    match T::narrow_spread(w.s, w.q, a.samples()) {
        Some(spread) => (w.s.to_f64() * a.inv_n, spread * a.inv_n2),
        None => mean_variance::<T>(
            Sums {
                s: w.s,
                q: T::widen_sq(w.q),
            },
            a,
        ),
    }
}

/// The two outputs of a box kind from a window's sums `w` (the second is unused for one-output
/// kinds), given how to form the moments.
#[inline(always)]
pub(super) fn box_outputs<A: Acc, B: Acc, S: FromAcc<A>, Q: FromAcc<B>>(
    w: Sums<A, B>,
    kind: BoxKind,
    moments: impl Fn(Sums<A, B>) -> (f64, f64),
) -> (S, Q) {
    match kind {
        BoxKind::Sum | BoxKind::SumSumSq => (S::from_acc(w.s), Q::from_acc(w.q)),
        BoxKind::MeanVar => {
            let (m, v) = moments(w);
            (S::from_f64(m), Q::from_f64(v))
        }
        BoxKind::Std => {
            let (_, v) = moments(w);
            (S::from_f64(core::intrinsics::sqrtf64(v)), Q::ZERO)
        }
    }
}

/// Writes the box kernel's outputs at flat index `o` for the window sums `w`.
///
/// # Safety
/// `o0` (and `o1` for two-output kinds) hold index `o`.
#[inline(always)]
pub(super) unsafe fn write_box<T, S, Q>(o0: *mut S, o1: *mut Q, o: usize, w: SumsOf<T>, a: &BoxArgs<T>)
where
    T: WindowIn,
    S: FromAcc<T::S>,
    Q: FromAcc<T::Q>,
{
    let kind = BoxKind::from_code(a.kind);
    let (v0, v1) = box_outputs::<_, _, S, Q>(w, kind, |w| mean_variance::<T>(w, a));
    // SAFETY: forwarded.
    unsafe {
        o0.add(o).write(v0);
        if kind.two_outputs() {
            o1.add(o).write(v1);
        }
    }
}

/// Second pass of the separable box: windows of `h` rows down each column of the row sums
/// (`rs`, `rq`: accumulator-typed, one per pixel, from the running-sum row kernel). An extended
/// row outside the plane is all border: its row sum is that of the border's row (mapped index),
/// or `w` copies of the constant.
///
/// Integers: thread `(plane, column, strip)` slides a running sum down its strip of `a.strip`
/// output rows, adding the entering row sum and subtracting the leaving one (exact, wrapping);
/// neighbouring threads take neighbouring columns, so every load and store is coalesced.
///
/// Floats: van Herk/Gil-Werman down the columns. Thread `(plane, column, block)` owns the outputs
/// of one `h`-row block: it writes the suffix sums of its block (descending) to the `ts`/`tq`
/// scratch, then walks the next block down, adding its prefix sums to them.
///
/// # Safety
/// `rs`, `rq` (and `ts`, `tq` for floats) hold `planes · height · width` accumulators; the
/// outputs as many elements; grid covers `planes · width · ⌈height / strip⌉` threads (integers) or
/// `planes · width · ⌈height / h⌉` (floats) in blocks of `WINDOW_BLOCK`.
pub unsafe fn box_columns<T, S, Q>(
    rs: *const T::S,
    rq: *const T::Q,
    ts: *mut T::S,
    tq: *mut T::Q,
    o0: *mut S,
    o1: *mut Q,
    a: BoxArgs<T>,
) where
    T: WindowIn,
    S: FromAcc<T::S>,
    Q: FromAcc<T::Q>,
{
    let kind = BoxKind::from_code(a.kind);
    let h = a.win_h as u64;
    let rows_per_thread = if T::FLOAT { h } else { a.strip as u64 };
    let strips = a.height.div_ceil(rows_per_thread);
    let g = global_thread_idx();
    let per_plane = a.width * strips;
    if g >= a.planes * per_plane {
        return;
    }
    let (plane, rest) = (g / per_plane, g % per_plane);
    let (strip, col) = (rest / a.width, rest % a.width);
    let mode = BorderMode::from_code(a.border);
    let border_row = a.cval.lift().times(a.win_w as u64);
    let plane_base = plane * a.height * a.width;
    let at = |row: u64| (plane_base + row * a.width + col) as usize;
    // Row sum of extended row `y` (any integer) of this column.
    // Sum-only boxes: the row pass wrote no squares, so none are read.
    let squares = kind.needs_sumsq();
    let row_sum = |y: i64| match border_index(y, a.height as i64, mode) {
        // SAFETY: j < height; the scratch holds the plane.
        Some(j) => unsafe {
            let i = at(j as u64);
            Sums {
                s: rs.add(i).read(),
                q: if squares { rq.add(i).read() } else { T::Q::ZERO },
            }
        },
        None => border_row,
    };
    let ay = a.anchor_y as i64;
    let s0 = strip * rows_per_thread;
    let s1 = (s0 + rows_per_thread).min(a.height);
    if T::FLOAT {
        // Outputs s0 .. s1 form one h-block of window starts: suffix sums of this block, then
        // prefix sums of the next one.
        let mut suffix = SumsOf::<T>::ZERO;
        let mut y = s0 + h;
        while y > s0 {
            y -= 1;
            suffix = row_sum(y as i64 - ay).plus(suffix);
            if y < s1 {
                // SAFETY: y < height.
                unsafe {
                    ts.add(at(y)).write(suffix.s);
                    tq.add(at(y)).write(suffix.q);
                }
            }
        }
        let mut prefix = SumsOf::<T>::ZERO;
        for s in s0..s1 {
            // SAFETY: s < height; the scratch at s was written above by this thread.
            unsafe {
                let start = Sums {
                    s: ts.add(at(s)).read(),
                    q: tq.add(at(s)).read(),
                };
                write_box::<T, S, Q>(o0, o1, at(s), start.plus(prefix), &a);
            }
            prefix = prefix.plus(row_sum((s + h) as i64 - ay));
        }
    } else {
        let mut acc = SumsOf::<T>::ZERO;
        for k in 0..h as i64 {
            acc = acc.plus(row_sum(s0 as i64 - ay + k));
        }
        for s in s0..s1 {
            // SAFETY: s < height.
            unsafe { write_box::<T, S, Q>(o0, o1, at(s), acc, &a) };
            let y = s as i64 - ay;
            acc = acc.plus(row_sum(y + h as i64)).minus(row_sum(y));
        }
    }
}

/// An integer input of the fused 2D kernel: `16 / size` samples packed in the four words of one
/// 16-byte vector (kept packed in registers between the load and their use: 4 registers instead
/// of one per sample).
pub trait FusedIn: SlideIn {
    const ZERO: Self;
    /// Sample `i` of the vector.
    fn lane(words: &[u32; 4], i: usize) -> Self;
    /// Sets sample `i` of a vector whose sample `i` is zero.
    fn set_lane(words: &mut [u32; 4], i: usize, v: Self);
    /// The sample's bits, zero-extended.
    fn bits(self) -> u32;
    /// Shifts `v` in at the vector's last sample, dropping the first: `16 / size` pushes fill the
    /// vector in order (lets a rolled loop fill it without indexing registers).
    #[inline(always)]
    fn push_lane(words: [u32; 4], v: Self) -> [u32; 4] {
        let shift = 8 * size_of::<Self>() as u32;
        let x = words[0] as u128 | (words[1] as u128) << 32 | (words[2] as u128) << 64 | (words[3] as u128) << 96;
        let x = (x >> shift) | (v.bits() as u128) << (128 - shift);
        [x as u32, (x >> 32) as u32, (x >> 64) as u32, (x >> 96) as u32]
    }
}

impl FusedIn for u8 {
    const ZERO: u8 = 0;
    #[inline(always)]
    fn lane(words: &[u32; 4], i: usize) -> u8 {
        (words[i / 4] >> (8 * (i % 4))) as u8
    }
    #[inline(always)]
    fn set_lane(words: &mut [u32; 4], i: usize, v: u8) {
        words[i / 4] |= (v as u32) << (8 * (i % 4));
    }
    #[inline(always)]
    fn bits(self) -> u32 {
        self as u32
    }
}

impl FusedIn for u16 {
    const ZERO: u16 = 0;
    #[inline(always)]
    fn lane(words: &[u32; 4], i: usize) -> u16 {
        (words[i / 2] >> (16 * (i % 2))) as u16
    }
    #[inline(always)]
    fn set_lane(words: &mut [u32; 4], i: usize, v: u16) {
        words[i / 2] |= (v as u32) << (16 * (i % 2));
    }
    #[inline(always)]
    fn bits(self) -> u32 {
        self as u32
    }
}

impl FusedIn for i32 {
    const ZERO: i32 = 0;
    #[inline(always)]
    fn lane(words: &[u32; 4], i: usize) -> i32 {
        words[i] as i32
    }
    #[inline(always)]
    fn set_lane(words: &mut [u32; 4], i: usize, v: i32) {
        words[i] = v as u32;
    }
    #[inline(always)]
    fn bits(self) -> u32 {
        self as u32
    }
}

/// One extended input row as a thread of the fused kernel sees it: its `P` columns (one vector)
/// and its halo columns.
#[derive(Clone, Copy)]
pub(super) struct FusedRow<T> {
    pub(super) main: [u32; 4],
    pub(super) halo: [T; FUSED_HALO],
}

/// Where a thread of the fused kernel reads its samples: its plane, its first main column, and
/// the border-mapped source column of each of its halo columns (`None`: the constant).
pub(super) struct FusedSource<T> {
    pub(super) plane_x: *const T,
    pub(super) height: i32,
    pub(super) width: i32,
    pub(super) mode: BorderMode,
    pub(super) cval: T,
    pub(super) col: i32,
    /// The `P` main columns are one aligned vector inside every row.
    pub(super) vector: bool,
    pub(super) halo_src: [Option<i32>; FUSED_HALO],
}

impl<T: FusedIn> FusedSource<T> {
    /// This thread's samples of extended row `y` (any integer).
    ///
    /// # Safety
    /// `plane_x` holds `height` rows of `width` samples, read-only during the kernel.
    #[inline(always)]
    pub(super) unsafe fn fetch<const P: usize>(&self, y: i32) -> FusedRow<T> {
        let mut r = FusedRow {
            main: [0u32; 4],
            halo: [self.cval; FUSED_HALO],
        };
        let Some(yy) = border_index_i32(y, self.height, self.mode) else {
            crate::unroll!(P, |p| { T::set_lane(&mut r.main, p, self.cval) });
            return r;
        };
        // SAFETY: yy < height: the row lies in the plane.
        let row = unsafe { self.plane_x.add(yy as usize * self.width as usize) };
        if self.vector {
            // SAFETY: 16 aligned bytes inside the row (vector); the input is read-only.
            r.main = unsafe { load_nc_v4(row.add(self.col as usize) as *const [u32; 4]) };
        } else if self.col + P as i32 <= self.width {
            crate::unroll!(P, |p| {
                // SAFETY: col + p < width.
                T::set_lane(&mut r.main, p, unsafe { row.add(self.col as usize + p).read() });
            });
        } else {
            // Past the row's end (the last column block only): border-mapped, in a rolled loop
            // (one copy of the mapping's 64-bit remainder, not P).
            for p in 0..P as i32 {
                let v = match border_index_i32(self.col + p, self.width, self.mode) {
                    // SAFETY: j < width.
                    Some(j) => unsafe { row.add(j as usize).read() },
                    None => self.cval,
                };
                r.main = T::push_lane(r.main, v);
            }
        }
        crate::unroll!(FUSED_HALO, |k| {
            if let Some(j) = self.halo_src[k] {
                // SAFETY: j < width.
                r.halo[k] = unsafe { row.add(j as usize).read() };
            }
        });
        r
    }

    /// The samples of the row entering at `y` and of the row leaving (`y − h`; zeros while the
    /// first window of the strip, which starts at `y_first`, fills).
    ///
    /// # Safety
    /// As [`FusedSource::fetch`].
    #[inline(always)]
    pub(super) unsafe fn fetch_pair<const P: usize>(&self, y: i32, h: i32, y_first: i32) -> (FusedRow<T>, FusedRow<T>) {
        let none = FusedRow {
            main: [0u32; 4],
            halo: [T::ZERO; FUSED_HALO],
        };
        // SAFETY: forwarded.
        unsafe {
            (
                self.fetch::<P>(y),
                if y - h >= y_first { self.fetch::<P>(y - h) } else { none },
            )
        }
    }
}

/// Fused 2D box for integers: one pass over the input, O(1) work per output in both axes for
/// windows up to [`FUSED_MAX_WIDTH`](crate::abi::window::FUSED_MAX_WIDTH) wide (any height).
///
/// Block `(plane, strip, column block)` owns output columns `[c0, c0 + FUSED_BLOCK·P)` and output
/// rows `[s0, s1)` (`a.strip` of them); the outputs need the *extended* columns
/// `e ∈ [0, FUSED_BLOCK·P + w − 1)` (column `c0 − ax + e`, border-mapped). Thread `t` owns the `P`
/// main columns `c0 + t·P ..` (one 16-byte vector of input: `P = 16 / size`) and up to
/// [`FUSED_HALO`] of the `w − 1` halo columns, and keeps their *vertical* running sums in
/// registers.
///
/// Walking down the extended rows `y` from `s0 − ay`, each thread
/// 1. loads its samples of the entering row `y` and of the leaving row `y − h` (one read-only
///    vector load each, the next step's loads issued before this step's work, so their latency
///    hides behind it; border-mapped scalar loads at the plane's edges);
/// 2. updates its column sums: `+ entering − leaving` (exact in wrapping integer arithmetic,
///    [`SlideIn`]);
/// 3. once `h` rows are in, writes them to a shared row of column sums ([`fused_slot`] padding:
///    conflict-free), and after one barrier (two alternating buffers) sums the `w` column sums of
///    its first output's window, slides it across its `P` outputs (`+ entering − leaving`
///    column) and writes them (16-byte stores where aligned).
///
/// Each input sample leaves DRAM once (the leaving row is re-read `h` rows later, from L1/L2) and
/// each output is written once. Removes the bottleneck of the separable variant (its scratch
/// round trip); costs `w + 2P` shared loads per thread and row.
///
/// # Safety
/// Input and outputs hold `planes · height · width`; grid = `planes · ⌈height / strip⌉ ·
/// ⌈width / (FUSED_BLOCK · P)⌉` blocks of `FUSED_BLOCK`; `w ≤ FUSED_MAX_WIDTH` and `h·w ≤
/// T::FUSED_MAX_WINDOW`; dynamic shared memory of `fused_layout(P, w, ..).bytes`.
#[inline(always)]
#[allow(unused_assignments)] // the last unrolled slide
pub unsafe fn box_fused<T, S, Q, const P: usize>(x: *const T, o0: *mut S, o1: *mut Q, a: BoxArgs<T>)
where
    T: FusedIn,
    S: FromAcc<T::S>,
    Q: FromAcc<T::SQ>,
{
    const { assert!(P * core::mem::size_of::<T>() == 16 && P.is_multiple_of(4)) };
    let kind = BoxKind::from_code(a.kind);
    let squares = kind.needs_sumsq();
    let (h, w) = (a.win_h as i32, a.win_w as usize);
    let cols = FUSED_BLOCK as usize * P;
    let col_blocks = a.width.div_ceil(cols as u64);
    let strips = a.height.div_ceil(a.strip as u64);
    let b = block_idx() as u64;
    let plane = b / (strips * col_blocks);
    let rest = b % (strips * col_blocks);
    let (strip, cb) = (rest / col_blocks, rest % col_blocks);
    let c0 = cb * cols as u64;
    let s0 = strip * a.strip as u64;
    let s1 = (s0 + a.strip as u64).min(a.height);
    let mode = BorderMode::from_code(a.border);
    let t = thread_idx() as usize;
    let ax = a.anchor_x as usize;
    let my_col = c0 + (t * P) as u64;
    // Sides and window height below 2^29 (the host's condition for this kernel): 32-bit rows.
    let (height, width) = (a.height as i32, a.width as i32);
    // SAFETY: plane < planes by the grid shape.
    let plane_x = unsafe { x.add((plane * a.height * a.width) as usize) };
    const {
        assert!(T::FUSED_ACC_BYTES.0 == size_of::<T::S>() && T::FUSED_ACC_BYTES.1 == size_of::<T::SQ>());
    }
    let layout = fused_layout(P, w, T::FUSED_ACC_BYTES, (size_of::<S>(), size_of::<Q>()));
    // SAFETY: the host sized shared memory with fused_layout.
    let shared: *mut u8 = unsafe { dynamic_shared() };
    // Whole aligned vectors inside every row.
    let vector = (x as usize).is_multiple_of(16)
        && (a.width as usize * size_of::<T>()).is_multiple_of(16)
        && my_col + P as u64 <= a.width;
    // Halo column k of this thread: its extended index (NONE: not one) and source column (None:
    // the constant).
    const NONE: usize = usize::MAX;
    let mut halo_e = [NONE; FUSED_HALO];
    let mut halo_src = [None; FUSED_HALO];
    crate::unroll!(FUSED_HALO, |k| {
        let j = t + k * FUSED_BLOCK as usize;
        if j + 1 < w {
            let e = if j < ax { j } else { j + cols };
            halo_e[k] = e;
            halo_src[k] = border_index_i32(c0 as i32 - ax as i32 + e as i32, width, mode);
        }
    });
    let src = FusedSource {
        plane_x,
        height,
        width,
        mode,
        cval: a.cval,
        col: my_col as i32,
        vector,
        halo_src,
    };
    let ay = a.anchor_y as i32;
    let y_first = s0 as i32 - ay;
    // Output s completes when row s − ay + h − 1 enters: the last is s1 − 1.
    let y_end = s1 as i32 - ay + h - 1; // exclusive
    let inv32 = (a.inv_n as f32, a.inv_n2 as f32);
    // This block's outputs in each row.
    let outputs = ((a.width - c0) as usize).min(cols);
    // The previous output row's stages and its first output's flat index: written back after
    // the barrier that follows their writes (the next row's).
    let mut pending: Option<(*mut u8, *mut u8, usize)> = None;
    let flush = |(st0, st1, o): (*mut u8, *mut u8, usize)| {
        // SAFETY: the stages hold this block's outputs of one row (StageWriter, before a
        // barrier); outputs o .. o + outputs lie in that row.
        unsafe {
            stage_flush::<S, P>(st0, o0.add(o), outputs, t, FUSED_BLOCK as usize);
            if kind.two_outputs() {
                stage_flush::<Q, P>(st1, o1.add(o), outputs, t, FUSED_BLOCK as usize);
            }
        }
    };
    let mut col_sums = [SlideSums::<T>::ZERO; P];
    let mut halo_sums = [SlideSums::<T>::ZERO; FUSED_HALO];
    let mut y = y_first;
    while y < y_end {
        // SAFETY: the plane holds `height` rows of `width` samples, read-only.
        let (enter, leave) = unsafe { src.fetch_pair::<P>(y, h, y_first) };
        crate::unroll!(P, |p| {
            col_sums[p] = col_sums[p]
                .plus(T::lane(&enter.main, p).lift_slide())
                .minus(T::lane(&leave.main, p).lift_slide());
        });
        crate::unroll!(FUSED_HALO, |k| {
            halo_sums[k] = halo_sums[k]
                .plus(enter.halo[k].lift_slide())
                .minus(leave.halo[k].lift_slide());
        });
        if y - y_first >= h - 1 {
            // SAFETY: buffer (y & 1) of the layout.
            let buf = unsafe { shared.add((y & 1) as usize * layout.buffer) };
            let (ss, sq) = (buf as *mut T::S, unsafe { buf.add(layout.squares) } as *mut T::SQ);
            let put = |i: usize, v: SlideSums<T>| {
                // SAFETY: i is the slot of one of the FUSED_BLOCK·P + w − 1 extended columns.
                unsafe {
                    ss.add(i).write(v.s);
                    if squares {
                        sq.add(i).write(v.q);
                    }
                }
            };
            crate::unroll!(P, |p| { put(fused_slot(ax + t * P + p, P), col_sums[p]) });
            crate::unroll!(FUSED_HALO, |k| {
                if halo_e[k] != NONE {
                    put(fused_slot(halo_e[k], P), halo_sums[k]);
                }
            });
            // SAFETY: every thread reaches it (the condition is block-uniform). It publishes this
            // row's column sums and the previous row's stages; the readers of this buffer's
            // previous contents (two rows ago) passed the last barrier.
            unsafe { sync_threads() };
            if let Some(prev) = pending {
                flush(prev);
            }
            let (st0, st1) = unsafe { (buf.add(layout.stage0), buf.add(layout.stage1)) };
            if my_col < a.width {
                let get = |i: usize| {
                    // SAFETY: i is the slot of an extended column, written before the barrier.
                    unsafe {
                        Sums {
                            s: ss.add(i).read(),
                            q: if squares { sq.add(i).read() } else { T::SQ::ZERO },
                        }
                    }
                };
                // Slots: extended column t·P + c (c < P) is chunk t's slot c; chunks are P
                // columns and one pad slot.
                let chunk = |j: usize| j * (P + 1);
                let mut acc = SlideSums::<T>::ZERO;
                for j in 0..w / P {
                    crate::unroll!(P, |k| {
                        acc = acc.plus(get(chunk(t + j) + k));
                    });
                }
                crate::unroll!(P, |k| {
                    if k < w % P {
                        acc = acc.plus(get(chunk(t + w / P) + k));
                    }
                });
                // The entering column t·P + w + c: one slot further once it crosses into the
                // next chunk (c ≥ P − w % P).
                let enter0 = chunk(t + w / P) + w % P;
                let cross = P - w % P;
                let mut s0 = StageWriter::<S, P>::new(st0, t);
                let mut s1 = StageWriter::<Q, P>::new(st1, t);
                crate::unroll!(P, |c| {
                    let (v0, v1) = fused_outputs::<T, S, Q>(acc, kind, &a, inv32);
                    // SAFETY: the stages hold FUSED_BLOCK·P outputs each.
                    unsafe {
                        s0.put(c, v0);
                        s1.put(c, v1);
                    }
                    if c + 1 < P {
                        let entering = get(enter0 + c + (c >= cross) as usize);
                        acc = acc.plus(entering.minus(get(chunk(t) + c)));
                    }
                });
            }
            let s = (y - h + 1 + ay) as u64;
            pending = Some((st0, st1, (plane * a.height * a.width + s * a.width + c0) as usize));
        }
        y += 1;
    }
    // SAFETY: every thread reaches it; it publishes the last row's stages.
    unsafe { sync_threads() };
    if let Some(prev) = pending {
        flush(prev);
    }
}

/// The `(plane, strip, segment)` of this *warp* in a one-pass box grid of `planes ·
/// ⌈height / strip⌉ · ⌈width / outputs⌉` warps, `warps` per block, numbered segments fastest
/// (neighbouring warps of a block read neighbouring columns); `None` past the last.
#[inline(always)]
pub(super) fn warp_strip<T>(a: &BoxArgs<T>, outputs: u64, warps: u32) -> Option<(u64, u64, u64)> {
    let segments = a.width.div_ceil(outputs);
    let strips = a.height.div_ceil(a.strip as u64);
    let warp = block_idx() as u64 * warps as u64 + warp_idx() as u64;
    if warp >= a.planes * strips * segments {
        return None;
    }
    let (plane, rest) = (warp / (strips * segments), warp % (strips * segments));
    Some((plane, rest / segments, rest % segments))
}

/// Plane `p` of a u8 box launch's input `x`, with the launch's border.
///
/// # Safety
/// `p < a.planes`, and `x` holds the launch's `planes · height · width` samples.
#[inline(always)]
pub(super) unsafe fn box_plane(x: *const u8, p: u64, a: &BoxArgs<u8>) -> crate::device::Plane<u8> {
    crate::device::Plane {
        // SAFETY: forwarded to the caller.
        base: unsafe { x.add((p * a.height * a.width) as usize) },
        h: a.height as i32,
        w: a.width as i32,
        mode: BorderMode::from_code(a.border),
        cval: a.cval,
    }
}

/// The outputs of a fused box window: statistics into f32 formed in f32 where
/// [`SlideIn::narrow_spread32`] allows (u8 windows up to 513 samples: the mean within 1 ulp,
/// the variance within 1.5 ulps of f32, a third of the instructions of the f64 path), else as
/// [`box_outputs`].
#[inline(always)]
pub(super) fn fused_outputs<T: SlideIn, S: FromAcc<T::S>, Q: FromAcc<T::SQ>>(
    w: SlideSums<T>,
    kind: BoxKind,
    a: &BoxArgs<T>,
    (inv_n, inv_n2): (f32, f32),
) -> (S, Q) {
    if narrow_moments::<S, Q>(kind)
        && let Some(spread) = T::narrow_spread32(w.s, w.q, a.samples())
    {
        return narrow_outputs::<T, S, Q>(w.s, spread, kind, (inv_n, inv_n2));
    }
    box_outputs::<_, _, S, Q>(w, kind, |w| slide_mean_variance::<T>(w, a))
}

/// Whether [`fused_outputs`] forms the statistics of `kind` in f32 (moments into f32 outputs),
/// given a window narrow enough for [`SlideIn::narrow_spread32`].
#[inline(always)]
pub(super) fn narrow_moments<S: OutElem, Q: OutElem>(kind: BoxKind) -> bool {
    S::SINGLE && Q::SINGLE && matches!(kind, BoxKind::MeanVar | BoxKind::Std)
}

/// The f32 statistics of a window with sum `s` and spread `n·Σx² − (Σx)²` (exact in u32): the
/// mean `s / n` and the variance `spread / n²`, or the standard deviation (`kind` is `MeanVar` or
/// `Std`, [`narrow_moments`]).
#[inline(always)]
pub(super) fn narrow_outputs<T: SlideIn, S: OutElem, Q: OutElem>(
    s: T::S,
    spread: u32,
    kind: BoxKind,
    (inv_n, inv_n2): (f32, f32),
) -> (S, Q) {
    let variance = spread as f32 * inv_n2;
    match kind {
        BoxKind::MeanVar => (S::from_f32(s.to_f32() * inv_n), Q::from_f32(variance)),
        _ => (S::from_f32(core::intrinsics::sqrtf32(variance)), Q::ZERO),
    }
}
