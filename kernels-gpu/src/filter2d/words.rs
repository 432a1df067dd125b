//! Max/min of long windows on 4-byte words (the `VanHerk` rung's fast passes): a column pass in
//! O(1) per output that streams each lane down a strip of rows, and a row pass in O(log k) per
//! output in registers and warp shuffles. Pixels move between memory and registers as whole
//! words; the column pass compares them packed (u8 on sm_90: [`HighBytes`], a byte in the high
//! half of each 16-bit lane), the row pass unpacked ([`LaneExtremum`]).

use super::*;

/// Max or min on pixels held in 32-bit registers: one pixel per register (u8 and u16
/// zero-extended: one `max.u32`; f32 as its bits, NaN-propagating as
/// [`MorphValue::max_nan`]), or packed, a 4-byte word of them per register.
pub trait LaneExtremum: Extremum {
    fn op_bits(a: u32, b: u32) -> u32;
    /// `op` on each element of two packed words.
    fn op_word(a: u32, b: u32) -> u32;
    /// Elements per register in the row pass's doubling steps: 2 (zero-extended into 16-bit
    /// lanes, [`op_pairs`](Self::op_pairs)) where the target has a packed 16-bit max/min (u8 and
    /// u16 on sm_90: `VIMNMX.U16x2`, one instruction per two elements), else 1.
    const PER_REG: usize = 1;
    /// `op` on registers of `PER_REG` elements.
    #[inline(always)]
    fn op_pairs(a: u32, b: u32) -> u32 {
        Self::op_bits(a, b)
    }
    /// The identity's bits.
    #[inline(always)]
    fn start_bits() -> u32 {
        Self::START.bits()
    }
    /// How the column pass holds a packed word while it compares it ([`Held`]).
    type Held: Held;
    /// A word of identities.
    #[inline(always)]
    fn start_word() -> u32 {
        let mut w = 0;
        crate::unroll!(4, |i| {
            if i < 4 / Self::T::SIZE {
                w |= Self::start_bits() << (8 * Self::T::SIZE * i);
            }
        });
        w
    }
}

/// SIMD within a register: `0…0` or `1…1` in each `BITS`-bit field of the result as the field
/// of `a` is below or at least that of `b` (unsigned fields, no carry between them). The low
/// `BITS − 1` bits compare by one subtraction with the top bit of each field forced in `a` and
/// cleared in `b` (so no field borrows); the top bits decide by majority(a, ¬b, difference), and
/// one `prmt` in sign-replicate mode copies each field's top bit across the field. Six
/// instructions for four bytes, where unpacking costs about that per byte.
#[inline(always)]
fn at_least<const BITS: u32>(a: u32, b: u32) -> u32 {
    let (top, replicate_sign) = match BITS {
        8 => (0x8080_8080u32, 0xba98),
        _ => (0x8000_8000u32, 0xbb99),
    };
    let low_diff = (a | top).wrapping_sub(b & !top);
    byte_perm((a & !b) | ((a | !b) & low_diff), 0, replicate_sign)
}

/// A packed word as the column pass compares it: the word itself ([`LaneExtremum::op_word`]),
/// or — u8 on sm_90 — [`HighBytes`]. The pass's stack keeps packed words; it holds a word as it
/// reads it and releases a result as it stores it.
pub trait Held: Copy {
    fn hold<E: LaneExtremum>(w: u32) -> Self;
    fn release(self) -> u32;
    fn op<E: LaneExtremum>(self, other: Self) -> Self;
    /// Holds the word of four u8 `v[0], …, v[3]` (each zero-extended in a register, the word's
    /// bytes 0 … 3): [`pack`] then [`hold`](Self::hold), or fewer `prmt`s where the held form
    /// allows.
    #[inline(always)]
    fn hold_bytes<E: LaneExtremum>(v: [u32; 4]) -> Self {
        Self::hold::<E>(pack::<u8>(&v))
    }
}

impl Held for u32 {
    #[inline(always)]
    fn hold<E: LaneExtremum>(w: u32) -> u32 {
        w
    }
    #[inline(always)]
    fn release(self) -> u32 {
        self
    }
    #[inline(always)]
    fn op<E: LaneExtremum>(self, other: u32) -> u32 {
        E::op_word(self, other)
    }
}

/// A word of four u8 as [`high_byte_lanes`]: one `VIMNMX.U16x2` compares two pixels without
/// unpacking — a shift to hold a word, two instructions per comparison of four pixels (against
/// about nine for the packed `at_least` form), one `prmt` to release.
#[derive(Clone, Copy)]
pub struct HighBytes([u32; 2]);

impl Held for HighBytes {
    #[inline(always)]
    fn hold<E: LaneExtremum>(w: u32) -> HighBytes {
        HighBytes(high_byte_lanes(w))
    }
    #[inline(always)]
    fn release(self) -> u32 {
        join_high_byte_lanes(self.0[0], self.0[1])
    }
    #[inline(always)]
    fn op<E: LaneExtremum>(self, other: HighBytes) -> HighBytes {
        HighBytes([E::op_pairs(self.0[0], other.0[0]), E::op_pairs(self.0[1], other.0[1])])
    }
    /// Two `prmt`s: bytes 0 and 2 into the high bytes of the even word's lanes, 1 and 3 the odd's.
    #[inline(always)]
    fn hold_bytes<E: LaneExtremum>(v: [u32; 4]) -> HighBytes {
        HighBytes([byte_perm(v[0], v[2], 0x4000), byte_perm(v[1], v[3], 0x4000)])
    }
}

macro_rules! lane_extremum {
    ($($e:ident<$t:ty>: $op:expr, $word:expr $(, pairs $pairs:expr)? $(, held $held:ty)?;)*) => {$(
        impl LaneExtremum for $e<$t> {
            type Held = lane_extremum!(@held $($held)?);
            #[inline(always)]
            fn op_bits(a: u32, b: u32) -> u32 {
                $op(a, b)
            }
            #[inline(always)]
            fn op_word(a: u32, b: u32) -> u32 {
                $word(a, b)
            }
            $(
                const PER_REG: usize = 2;
                #[inline(always)]
                fn op_pairs(a: u32, b: u32) -> u32 {
                    $pairs(a, b)
                }
            )?
        }
    )*};
    (@held) => { u32 };
    (@held $held:ty) => { $held };
}
#[cfg(not(target_feature = "sm_90"))]
lane_extremum! {
    Max<u8>: u32::max, |a: u32, b: u32| b ^ ((a ^ b) & at_least::<8>(a, b));
    Min<u8>: u32::min, |a: u32, b: u32| a ^ ((a ^ b) & at_least::<8>(a, b));
    Max<u16>: u32::max, |a: u32, b: u32| b ^ ((a ^ b) & at_least::<16>(a, b));
    Min<u16>: u32::min, |a: u32, b: u32| a ^ ((a ^ b) & at_least::<16>(a, b));
}
#[cfg(target_feature = "sm_90")]
lane_extremum! {
    Max<u8>: u32::max, |a: u32, b: u32| b ^ ((a ^ b) & at_least::<8>(a, b)), pairs max_u16x2, held HighBytes;
    Min<u8>: u32::min, |a: u32, b: u32| a ^ ((a ^ b) & at_least::<8>(a, b)), pairs min_u16x2, held HighBytes;
    Max<u16>: u32::max, max_u16x2, pairs max_u16x2;
    Min<u16>: u32::min, min_u16x2, pairs min_u16x2;
}
lane_extremum! {
    Max<f32>: f32_max, f32_max;
    Min<f32>: f32_min, f32_min;
}

#[inline(always)]
fn f32_max(a: u32, b: u32) -> u32 {
    f32::max_nan(f32::from_bits(a), f32::from_bits(b)).to_bits()
}

#[inline(always)]
fn f32_min(a: u32, b: u32) -> u32 {
    f32::min_nan(f32::from_bits(a), f32::from_bits(b)).to_bits()
}

/// The 4-byte word of `T`s `l[0], l[1], …` (each below `2^(8·SIZE)`): byte permutes.
#[inline(always)]
fn pack<T: Pixel>(l: &[u32]) -> u32 {
    match T::SIZE {
        1 => byte_perm(byte_perm(l[0], l[1], 0x0040), byte_perm(l[2], l[3], 0x0040), 0x5410),
        2 => byte_perm(l[0], l[1], 0x5410),
        _ => l[0],
    }
}

// ---------------------------------------------------------------------------------------------
// Columns: van Herk streamed down a strip
// ---------------------------------------------------------------------------------------------

/// Loads a word-stream lane has in flight: the rows of a van Herk block are loaded this many at
/// a time, all issued before any is used.
const CHUNK: usize = 8;

/// Column pass in O(1) per output (van Herk/Gil-Werman): each lane owns one 4-byte word of a
/// column and walks down `a.strip` output rows; a warp covers 128 contiguous bytes per row.
///
/// Positions `t` of the lane's column (input row `r0 − ay + t`) fall in van Herk blocks of
/// `k = a.kh`. Output `o = b·k + i` is `suffix_b[i] ⊕ prefix_{b+1}[i − 1]`: the lane keeps block
/// `b`'s suffix maxima in a stack of `k` words in shared memory (its own column of the warp's
/// `k × 32` words: conflict-free), and while it streams block `b + 1` forward — the prefix in
/// registers, each output written as soon as it is known — it overwrites each consumed suffix
/// with the new raw word; one backward sweep then turns the stack into block `b + 1`'s suffixes.
/// Each input row is loaded once per strip (plus the first block's `k − 1` rows of halo), each
/// output is three comparisons per pixel (the stack keeps packed words, compared as
/// [`LaneExtremum::Held`]), and no barrier is needed: every lane touches only its
/// own stack. Interior warps first ask L2 for their strip's first 32 rows (one
/// `prefetch.global.L2`, a lane per row). Shared memory: [`van_herk_words_smem`].
#[inline(always)]
pub unsafe fn van_herk_col_words<E: LaneExtremum>(x: *const E::T, y: *mut E::T, a: &Args<E::T>) {
    let per = 4 / E::T::SIZE;
    let Some((p, r0, c0)) = warp_tile_origin(a, 32 * per as u32, a.strip, false) else {
        return;
    };
    let lane = lane_idx();
    let c = c0 + (lane as usize * per) as i32;
    if c >= a.w as i32 {
        return;
    }
    let plane = Plane::of(x, p, a);
    let whole = a.vector_rows != 0 && c + per as i32 <= a.w as i32;
    let k = a.kh;
    let strip = a.strip.min(a.h - r0 as u32);
    let top = r0 - a.ay as i32;
    // SAFETY: the launch provides van_herk_words_smem(k): k words per lane of every warp.
    let stack = unsafe { dynamic_shared::<u32>().add((warp_idx() * k * 32 + lane) as usize) };
    let out = y.wrapping_add(flat(a, p, r0, c));
    let lane = LaneColumn {
        stack,
        out,
        c,
        w: a.w as i32,
        whole,
    };
    // Warps whose rows all lie in the plane stream without any border logic; the strips at the
    // plane's top and bottom (and lanes of partial words) map each row.
    if top >= 0 && top + (strip + k - 1) as i32 <= a.h as i32 && whole {
        let first = plane.base.wrapping_add(top as usize * a.w as usize + c as usize) as *const u32;
        let words_per_row = a.w as usize * E::T::SIZE / 4;
        let mut row = first;
        let next = || {
            let v = crate::load_nc!(row, u32);
            row = row.wrapping_add(words_per_row);
            v
        };
        // The strip's first 32 rows into L2, one instruction (a lane per row): the chunked loads
        // then find them there.
        let span = RowSpan::<1> {
            base: (plane.base as *const u8).wrapping_add((top as usize * a.w as usize + c0 as usize) * E::T::SIZE),
            stride: a.w as usize * E::T::SIZE,
            rows: (strip + k - 1) as i32,
        };
        // SAFETY: rows top .. top + strip + k − 1 lie in the plane, column c0 in each.
        unsafe { span.prefetch_l2(0) };
        // SAFETY: rows top .. top + strip + k − 1 lie in the plane; the word is whole.
        unsafe { stream_column::<E>(&lane, k, strip, next) }
    } else {
        // SAFETY: plane.row gives a row of the plane or None.
        unsafe {
            let mut t = top;
            stream_column::<E>(&lane, k, strip, || {
                t += 1;
                column_word(&plane, plane.row(t - 1), c, whole)
            })
        }
    }
}

/// A lane of the column pass: its stack column (slot `i` at `stack + 32 i`), its output word
/// in the strip's first row, and that word's column.
struct LaneColumn<T> {
    stack: *mut u32,
    out: *mut T,
    c: i32,
    w: i32,
    whole: bool,
}

/// The word at column `c` of `row` (a `plane.row` result): one load when `whole`, else its
/// elements one by one, columns past the plane's edge clamped (their outputs are not stored;
/// a column pass needs no column border, and [`word_at`]'s mapping would cost it registers).
///
/// # Safety
/// `row` came from `plane.row`; `c < w`.
#[inline(always)]
unsafe fn column_word<T: Pixel>(plane: &Plane<T>, row: Option<*const T>, c: i32, whole: bool) -> u32 {
    let per = 4 / T::SIZE;
    match row {
        // SAFETY: forwarded to the caller.
        Some(q) if whole => crate::load_nc!(unsafe { q.add(c as usize) } as *const u32, u32),
        Some(q) => {
            let mut v = 0;
            crate::unroll!(4, |i| {
                if i < per {
                    let j = (c + i as i32).min(plane.w - 1);
                    // SAFETY: column j of the row.
                    v |= unsafe { T::load(q.add(j as usize)) }.bits() << (8 * T::SIZE * i);
                }
            });
            v
        }
        None => {
            let mut v = 0;
            crate::unroll!(4, |i| {
                if i < per {
                    v |= plane.cval.bits() << (8 * T::SIZE * i);
                }
            });
            v
        }
    }
}

/// The streaming of [`van_herk_col_words`] for one lane, its words loaded in order by `next()`
/// (position `t = 0, 1, 2, …`: row `top + t`) and its outputs stored in order (row `r0 + o`).
/// Loads and stores walk running pointers: each costs an add, not a row multiply.
///
/// # Safety
/// `lane` as set up by the kernel; `next` valid for `strip + k − 1` calls.
#[inline(always)]
unsafe fn stream_column<E: LaneExtremum>(lane: &LaneColumn<E::T>, k: u32, strip: u32, mut next: impl FnMut() -> u32) {
    let slot = |i: u32| lane.stack.wrapping_add(32 * i as usize);
    let row_stride = lane.w as usize;
    let mut out = lane.out;
    // SAFETY (of `emit`): called once per output row o < strip, in order.
    let mut emit = |v: u32| unsafe {
        store_word::<E::T>(out, v, lane.c, lane.w, lane.whole);
        out = out.wrapping_add(row_stride);
    };

    // Block 0: raw words, then suffixes.
    let mut i = 0;
    while i < k {
        let mut raw = [0u32; CHUNK];
        crate::unroll!(CHUNK, |u| {
            if i + (u as u32) < k {
                raw[u] = next();
            }
        });
        crate::unroll!(CHUNK, |u| {
            if i + (u as u32) < k {
                // SAFETY: slot below k.
                unsafe { slot(i + u as u32).write(raw[u]) };
            }
        });
        i += CHUNK as u32;
    }
    // SAFETY: the stack holds k words.
    unsafe { suffixes::<E>(slot(0), k) };

    let mut base = 0;
    while base < strip {
        let mut prefix = hold::<E>(E::start_word());
        // Output base + i is suffix_b[i] ⊕ prefix; position base + k + i extends the prefix and
        // replaces suffix_b[i] when a later output needs it (base + i + 1 < strip).
        let outputs = k.min(strip - base);
        let loads = k.min(strip - base - 1);
        let mut i = 0;
        // SAFETY (of the slots): i < k.
        // Full chunks, the next chunk's loads issued before this one is filtered.
        let mut ahead = [0u32; CHUNK];
        if CHUNK as u32 <= loads {
            crate::unroll!(CHUNK, |u| {
                ahead[u] = next();
            });
        }
        while i + CHUNK as u32 <= loads {
            let raw = ahead;
            if i + 2 * CHUNK as u32 <= loads {
                crate::unroll!(CHUNK, |u| {
                    ahead[u] = next();
                });
            }
            crate::unroll!(CHUNK, |u| {
                let iu = i + u as u32;
                unsafe {
                    emit(hold::<E>(slot(iu).read()).op::<E>(prefix).release());
                    prefix = prefix.op::<E>(hold::<E>(raw[u]));
                    slot(iu).write(raw[u]);
                }
            });
            i += CHUNK as u32;
        }
        while i < loads {
            let raw = next();
            unsafe {
                emit(hold::<E>(slot(i).read()).op::<E>(prefix).release());
                prefix = prefix.op::<E>(hold::<E>(raw));
                slot(i).write(raw);
            }
            i += 1;
        }
        while i < outputs {
            unsafe { emit(hold::<E>(slot(i).read()).op::<E>(prefix).release()) };
            i += 1;
        }
        base += k;
        if base < strip {
            // SAFETY: as above.
            unsafe { suffixes::<E>(slot(0), k) };
        }
    }
}

/// A packed word as `E`'s column pass compares it.
#[inline(always)]
fn hold<E: LaneExtremum>(w: u32) -> E::Held {
    E::Held::hold::<E>(w)
}

/// Turns the `k` raw words of a lane's stack (slot `i` at `stack + 32 i`) into suffix extrema:
/// slot `i` becomes the extremum of slots `i .. k`.
///
/// # Safety
/// `stack` is this lane's column of `k` words of shared memory.
#[inline(always)]
unsafe fn suffixes<E: LaneExtremum>(stack: *mut u32, k: u32) {
    let mut acc = hold::<E>(E::start_word());
    let mut i = k;
    // SAFETY (of every slot): below k.
    while i >= CHUNK as u32 {
        let mut raw = [0u32; CHUNK];
        crate::unroll!(CHUNK, |u| {
            raw[u] = unsafe { stack.add(32 * (i - 1 - u as u32) as usize).read() };
        });
        crate::unroll!(CHUNK, |u| {
            acc = acc.op::<E>(hold::<E>(raw[u]));
            unsafe { stack.add(32 * (i - 1 - u as u32) as usize).write(acc.release()) };
        });
        i -= CHUNK as u32;
    }
    while i > 0 {
        i -= 1;
        unsafe {
            acc = acc.op::<E>(hold::<E>(stack.add(32 * i as usize).read()));
            stack.add(32 * i as usize).write(acc.release());
        }
    }
}

/// Stores a word of `T`s whose first element is column `c` of an output row starting at `row`
/// (pointing at column `c`): one store when `whole`, else the elements inside the row one by one.
///
/// # Safety
/// `row` points at column `c` of an output row of `w` elements.
#[inline(always)]
unsafe fn store_word<T: Pixel>(row: *mut T, v: u32, c: i32, w: i32, whole: bool) {
    // SAFETY: forwarded to the caller; `whole` promises the word lies in the row, aligned.
    unsafe {
        if whole {
            (row as *mut u32).write(v);
        } else {
            core::hint::cold_path();
            crate::unroll!(4, |i| {
                if i < 4 / T::SIZE && c + (i as i32) < w {
                    row.add(i).write(T::lane(&[v, 0, 0, 0], i));
                }
            });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Rows: doubling in registers
// ---------------------------------------------------------------------------------------------

/// Row pass in O(log k) per output: each lane owns 16 or 8 bytes (`N` elements, `V` words) of a
/// row, the warp `32 · N` contiguous columns loaded from a `4V`-byte boundary `ceil(ax / N)`
/// lanes left of its first output ([`doubling_row_outputs`] outputs per warp,
/// [`doubling_rows_per_warp`] rows, the loads of the next `AHEAD` rows in flight while a row is
/// filtered).
///
/// The lane's words are first shifted by the window anchor's misalignment (byte permutes with
/// the next lane's words), so element `j` of lane `l` starts the window of output `l·N + j`.
/// Then `m_s[j]`, the extremum of `s` elements from `j`, doubles for `s = 1, 2, 4, …` while
/// `2s ≤ k` — one comparison per element per step, the elements past the lane's end from the
/// next lane by `shfl.sync` — and the window is `m_s[j] ⊕ m_s[j + k − s]`: that shift, a
/// run-time length, runs on the packed words ([`join_shifted`]). The doubling steps run on
/// unpacked elements, one per register (one `max.u32` per element); no shared memory. The warp
/// first asks L2 for all its rows (`prefetch.global.L2`), so the loads issued `AHEAD` rows
/// before use find them there.
///
/// `STEPS` is the number of doubling steps when it is not 0 (the host launches that entry only
/// for windows with [`doubling_steps`]`(k, N) == STEPS`): the steps are then straight-line code,
/// without a run-time test of `k` and the register moves that join each tested step. `0` tests
/// `k` at run time ([`doubling_takes_step`], the test [`doubling_steps`] counts).
// unroll! bodies past a generic bound are dead code the lint cannot see through.
#[allow(unconditional_panic)]
#[inline(always)]
pub unsafe fn doubling_rows<E: LaneExtremum, const N: usize, const V: usize, const AHEAD: usize, const STEPS: usize>(
    x: *const E::T,
    y: *mut E::T,
    a: &Args<E::T>,
) {
    const { assert!((V == 4 || V == 2) && N * <E::T as Pixel>::SIZE == 4 * V) };
    const { assert!(STEPS <= doubling_steps(u32::MAX, N as u32) as usize) };
    let n = N as u32;
    let outs = a.strip;
    let band = doubling_rows_per_warp(4 * V as u32);
    let Some((p, r0, c0)) = warp_tile_origin(a, outs, band, false) else {
        return;
    };
    let (k, w) = (a.kw, a.w as i32);
    let lane = lane_idx();
    let halo = a.ax.div_ceil(n) * n;
    let first = c0 - halo as i32 + (lane * n) as i32;
    let plane = Plane::of(x, p, a);
    let whole = a.vector_rows != 0 && first >= 0 && first + n as i32 <= w;
    let rows = band.min(a.h - r0 as u32);
    // The warp's rows into L2 up front (one instruction per 32 / V rows): the loads issued
    // `AHEAD` rows before use then find them there.
    let c_first = (c0 - halo as i32).max(0) as usize * <E::T as Pixel>::SIZE;
    let row_bytes = w as usize * <E::T as Pixel>::SIZE;
    if c_first + 128 * V <= row_bytes {
        let span = RowSpan::<V> {
            base: (plane.base as *const u8).wrapping_add(r0 as usize * row_bytes + c_first),
            stride: row_bytes,
            rows: rows as i32,
        };
        // SAFETY: rows r0 .. r0 + rows lie in the plane, the span's 128 · V bytes in each.
        unsafe { span.prefetch_rows_l2(0, rows as i32) };
    }
    // Rows are loaded and stored in order through running pointers (an add per row).
    let mut src = plane.base.wrapping_add(r0 as usize * w as usize);
    // SAFETY (of every load): called once per row r0 + i < h of the plane, in order.
    let mut load = || unsafe {
        let v = row_vector::<E::T, V>(&plane, src, first, whole);
        src = src.wrapping_add(w as usize);
        v
    };
    // The next `AHEAD` rows' loads stay in flight while a row is filtered.
    let mut raw = [[0u32; 4]; AHEAD];
    crate::unroll!(AHEAD, |i| {
        if (i as u32) < rows {
            raw[i] = load();
        }
    });
    let skew = (halo - a.ax) * <E::T as Pixel>::SIZE as u32;
    let c = c0 + (lane * n) as i32;
    let valid = lane * n < outs && c < w;
    let out_whole = a.vector_rows != 0 && c + n as i32 <= w;
    let mut dst = y.wrapping_add(flat(a, p, r0, c));
    // One copy of the row's code (a runtime loop, the loaded rows shifted down the array each
    // time) keeps the kernel small in the instruction cache.
    for i in 0..rows {
        let words = skip_bytes::<V>(raw[0], skew);
        crate::unroll!(AHEAD - 1, |j| {
            raw[j] = raw[j + 1];
        });
        if i + (AHEAD as u32) < rows {
            raw[AHEAD - 1] = load();
        }
        let mut m = unpack::<E, N>(&words);
        let s = double::<E, N, STEPS>(&mut m, k);
        let v = repack::<E, N, V>(&m);
        let v = join_shifted::<E, V>(v, (k - s) * <E::T as Pixel>::SIZE as u32);
        if valid {
            // SAFETY: dst is column c (inside the row) of row r0 + i < h.
            unsafe { store_vector::<E::T, V>(dst, v, c, w, out_whole) };
        }
        dst = dst.wrapping_add(w as usize);
    }
}

/// `V` words (16 or 8 bytes) of `row` (a row of the plane) from column `c`, in the first `V`
/// entries: one vector load when `whole`, else (the lanes over the plane's left and right
/// borders, every lane of unaligned images) element by element through the border, out of the
/// hot path.
///
/// # Safety
/// `row` is the start of a row of the plane; `whole` promises `4V` aligned bytes inside it.
#[allow(unconditional_panic)]
#[inline(always)]
unsafe fn row_vector<T: Pixel, const V: usize>(plane: &Plane<T>, row: *const T, c: i32, whole: bool) -> [u32; 4] {
    let per = 4 / T::SIZE;
    // SAFETY: forwarded to the caller.
    unsafe {
        if whole && V == 4 {
            load_nc_v4(row.add(c as usize) as *const [u32; 4])
        } else if whole {
            let [a, b] = load_nc_v2(row.add(c as usize) as *const [u32; 2]);
            [a, b, 0, 0]
        } else {
            core::hint::cold_path();
            let mut v = [0u32; 4];
            crate::unroll!(V, |j| {
                v[j] = word_at(plane, Some(row), c + (j * per) as i32, false);
            });
            v
        }
    }
}

/// The lane's `V` words starting `skew` bytes (`< 4V`, warp-uniform) into them, the bytes past
/// their end from the next lane (all 32 lanes must call it).
#[allow(unconditional_panic)]
#[inline(always)]
fn skip_bytes<const V: usize>(own: [u32; 4], skew: u32) -> [u32; 4] {
    let mut w = [0u32; 8];
    crate::unroll!(V, |j| {
        w[j] = own[j];
        w[V + j] = shfl_down_u32(own[j], 1);
    });
    words_from::<V>(&w, skew)
}

/// The `V` words that start `bytes` (`< 4V`, warp-uniform) into the `2V` words `w`: a select
/// per word for the whole words skipped, then one `prmt` per word for the bytes.
#[allow(unconditional_panic)]
#[inline(always)]
fn words_from<const V: usize>(w: &[u32; 8], bytes: u32) -> [u32; 4] {
    let skip = bytes / 4;
    let mut x = [0u32; 5];
    crate::unroll!(5, |j| {
        if j <= V {
            x[j] = w[j];
            crate::unroll!(3, |q| {
                if q + 1 < V && skip == q as u32 + 1 {
                    x[j] = w[j + q + 1];
                }
            });
        }
    });
    let sel = 0x3210 + 0x1111 * (bytes % 4);
    let mut r = [0u32; 4];
    crate::unroll!(V, |j| {
        r[j] = byte_perm(x[j], x[j + 1], sel);
    });
    r
}

/// The lane's `N` elements of the packed words, `E::PER_REG` to a register (`N / PER_REG`
/// registers): one element zero-extended per register, or two in the 16-bit lanes of one
/// (u8: one `prmt` per register; u16: the words as they are).
#[allow(unconditional_panic)]
#[inline(always)]
fn unpack<E: LaneExtremum, const N: usize>(words: &[u32; 4]) -> [u32; N] {
    let mut m = [0u32; N];
    if E::PER_REG == 2 && E::T::SIZE == 1 {
        crate::unroll!(N, |q| {
            if q < N / 2 {
                m[q] = byte_perm(words[q / 2], 0, if q.is_multiple_of(2) { 0x4140 } else { 0x4342 });
            }
        });
    } else if E::PER_REG == 2 {
        crate::unroll!(N, |q| {
            if q < N / 2 {
                m[q] = words[q];
            }
        });
    } else {
        crate::unroll!(N, |j| {
            m[j] = E::T::lane(words, j).bits();
        });
    }
    m
}

/// The inverse of [`unpack`]: `V` packed words of the lane's `N` elements.
#[allow(unconditional_panic)]
#[inline(always)]
fn repack<E: LaneExtremum, const N: usize, const V: usize>(m: &[u32; N]) -> [u32; 4] {
    let mut v = [0u32; 4];
    crate::unroll!(V, |j| {
        v[j] = if E::PER_REG == 2 && E::T::SIZE == 1 {
            byte_perm(m[2 * j], m[2 * j + 1], 0x6420)
        } else if E::PER_REG == 2 {
            m[j]
        } else {
            pack::<E::T>(&m[j * (N / V)..])
        };
    });
    v
}

/// Doubles `m` (the lane's `N` elements, [`unpack`]ed: element `j` of lane `l` at row position
/// `l·N + j`) from single elements to `⊕ of s elements from j` for the largest power of two
/// `s ≤ min(k, 16 N)` (`STEPS` steps when not 0, see [`doubling_rows`]), and returns `s`. A
/// step of `d` elements joins each register with the one `d / PER_REG` further on (past the
/// lane's end: the next lanes' by `shfl.sync`); with two elements per register the one-element
/// step first funnels each register with the next (`prmt`). All 32 lanes must call it with the
/// same `k`.
#[allow(unconditional_panic)]
#[inline(always)]
fn double<E: LaneExtremum, const N: usize, const STEPS: usize>(m: &mut [u32; N], k: u32) -> u32 {
    let regs = N / E::PER_REG;
    let mut s = 1;
    // Steps of 1, 2, …, 8 N elements (the doubling rows take k ≤ 16 N).
    crate::unroll!(12, |step| {
        let d = 1usize << step;
        let take = if STEPS == 0 {
            doubling_takes_step(d as u32, k, N as u32)
        } else {
            step < STEPS
        };
        if take {
            if d < E::PER_REG {
                // One element: each register's high lane and the next register's low lane.
                let next = shfl_down_u32(m[0], 1);
                crate::unroll!(N, |q| {
                    if q < regs {
                        let far = funnel16(m[q], if q + 1 < regs { m[q + 1] } else { next });
                        m[q] = E::op_pairs(m[q], far);
                    }
                });
            } else if d < N {
                let r = d / E::PER_REG;
                let mut next = [0u32; N];
                crate::unroll!(N, |q| {
                    if q < r {
                        next[q] = shfl_down_u32(m[q], 1);
                    }
                });
                crate::unroll!(N, |q| {
                    if q < regs {
                        let far = if q + r < regs { m[q + r] } else { next[q + r - regs] };
                        m[q] = E::op_pairs(m[q], far);
                    }
                });
            } else {
                crate::unroll!(N, |q| {
                    if q < regs {
                        m[q] = E::op_pairs(m[q], shfl_down_u32(m[q], (d / N) as u32));
                    }
                });
            }
            s = 2 * d as u32;
        }
    });
    s
}

/// The packed row elements `v` (`V` words per lane, the lane's words at row byte `l · 4V`)
/// joined with themselves `bytes` further on (`bytes` warp-uniform, below the warp's span): the
/// words `bytes / 4V` and one lane down by `shfl.sync`, the `bytes % 4V` skipped by
/// [`words_from`], then one packed [`LaneExtremum::op_word`] per word. The shift is a run-time
/// length, so it moves packed bytes (byte permutes with a run-time selector) rather than unpacked
/// elements (a register index, which would need an arm per remainder). Lanes whose shifted words
/// fall past the warp get their own (`shfl.down` clamps): their windows end past the loaded span
/// and their outputs are not stored. All 32 lanes must call it.
#[allow(unconditional_panic)]
#[inline(always)]
fn join_shifted<E: LaneExtremum, const V: usize>(v: [u32; 4], bytes: u32) -> [u32; 4] {
    if bytes == 0 {
        return v;
    }
    let lanes = bytes / (4 * V as u32);
    let mut w = [0u32; 8];
    crate::unroll!(V, |j| {
        w[j] = shfl_down_u32(v[j], lanes);
        w[V + j] = shfl_down_u32(v[j], lanes + 1);
    });
    let far = words_from::<V>(&w, bytes % (4 * V as u32));
    let mut r = [0u32; 4];
    crate::unroll!(V, |j| {
        r[j] = E::op_word(v[j], far[j]);
    });
    r
}

/// Stores the first `V` words (16 or 8 bytes) of `T`s in `v`, whose first element is column `c`
/// of a row of `w` (`dst` points at it): one vector store when `whole`, else the elements inside
/// the row one by one.
///
/// # Safety
/// `dst` points at column `c` of an output row; `whole` promises `4V` aligned bytes inside it.
#[allow(unconditional_panic)]
#[inline(always)]
unsafe fn store_vector<T: Pixel, const V: usize>(dst: *mut T, v: [u32; 4], c: i32, w: i32, whole: bool) {
    let per = 4 / T::SIZE;
    // SAFETY: forwarded to the caller.
    unsafe {
        if whole && V == 4 {
            store_v4(dst as *mut [u32; 4], v);
        } else if whole {
            store_v2(dst as *mut [u32; 2], [v[0], v[1]]);
        } else {
            core::hint::cold_path();
            crate::unroll!(V, |j| {
                let cj = c + (j * per) as i32;
                if cj < w {
                    store_word::<T>(dst.add(j * per), v[j], cj, w, false);
                }
            });
        }
    }
}
