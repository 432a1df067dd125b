//! Memory spaces: dynamic shared memory, the read-only (non-coherent) global path, 16-byte vector
//! loads, constant memory and atomics.

use core::arch::asm;

/// The block's dynamic shared memory (`extern __shared__`), sized by the host's
/// `shared_mem_bytes` at launch.
///
/// # Safety
/// Only the bytes the host allocated may be touched; accesses from different threads need a
/// barrier between them.
#[inline(always)]
pub unsafe fn dynamic_shared<T>() -> *mut T {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>()
}

/// Loads 16 bytes through the read-only data cache (`ld.global.nc.v4.u32`): one instruction per
/// thread moves four words, so a warp moves 512 contiguous bytes per load.
///
/// # Safety
/// `p` must point to 16 readable, 16-byte-aligned bytes of global memory that no thread writes
/// during the kernel.
#[inline(always)]
pub unsafe fn load_nc_v4(p: *const [u32; 4]) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "{{ .reg .u64 g; cvta.to.global.u64 g, {p}; ld.global.nc.v4.u32 {{{a}, {b}, {c}, {d}}}, [g]; }}",
            p = in(reg64) p,
            a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
            options(pure, readonly, nostack),
        );
    }
    [a, b, c, d]
}

/// Loads 8 bytes through the read-only data cache (`ld.global.nc.v2.u32`).
///
/// # Safety
/// `p` must point to 8 readable, 8-byte-aligned bytes of global memory that no thread writes
/// during the kernel.
#[inline(always)]
pub unsafe fn load_nc_v2(p: *const [u32; 2]) -> [u32; 2] {
    let (a, b): (u32, u32);
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "{{ .reg .u64 g; cvta.to.global.u64 g, {p}; ld.global.nc.v2.u32 {{{a}, {b}}}, [g]; }}",
            p = in(reg64) p,
            a = out(reg32) a, b = out(reg32) b,
            options(pure, readonly, nostack),
        );
    }
    [a, b]
}

/// Adds `v` to the `u64` at `p` in global memory, relaxed, without returning the old value
/// (`red.global.add.u64`: the thread does not wait for the L2 round trip; the kernel's end makes
/// the sum visible to later work on the stream).
///
/// # Safety
/// `p` must point to a writable, 8-byte-aligned `u64` of global memory.
#[inline(always)]
pub unsafe fn red_add_u64(p: *mut u64, v: u64) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .u64 g; cvta.to.global.u64 g, {p}; red.relaxed.gpu.global.add.u64 [g], {v}; }}", p = in(reg64) p, v = in(reg64) v,
             options(nostack));
    }
}

/// Atomically adds `v` to the `u32` at `p` and returns the old value, with acquire-release
/// semantics at device scope: this thread's earlier writes are visible to any thread that later
/// observes the new value, and writes made visible by earlier releasers are visible to this thread
/// afterwards (the last-block-done handshake needs no separate fences).
///
/// # Safety
/// `p` must point to a valid, 4-byte-aligned `u32` in global memory.
#[inline(always)]
pub unsafe fn atomic_add_u32(p: *mut u32, v: u32) -> u32 {
    let old: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .u64 g; cvta.to.global.u64 g, {p}; atom.acq_rel.gpu.global.add.u32 {old}, [g], {v}; }}", old = out(reg32) old, p = in(reg64) p, v = in(reg32) v,
             options(nostack));
    }
    old
}

/// Reads the `u8`, `u16` (zero-extended into a `reg32`), `u32` or `u64` at byte offset `offset` of a constant-memory
/// symbol declared with [`declare_constant!`]. The address goes through a register
/// (`[SYMBOL+%reg]` is not valid PTX). Every thread of a warp reading the same address is served
/// by one broadcast from the constant cache.
#[macro_export]
macro_rules! load_constant {
    ($symbol:expr, $offset:expr, u8) => {
        $crate::load_constant!(@ $symbol, $offset, u32, reg32, "u8") as u8
    };
    ($symbol:expr, $offset:expr, u16) => {
        $crate::load_constant!(@ $symbol, $offset, u32, reg32, "u16") as u16
    };
    ($symbol:expr, $offset:expr, u32) => {
        $crate::load_constant!(@ $symbol, $offset, u32, reg32, "u32")
    };
    ($symbol:expr, $offset:expr, u64) => {
        $crate::load_constant!(@ $symbol, $offset, u64, reg64, "u64")
    };
    (@ $symbol:expr, $offset:expr, $t:ty, $reg:ident, $ptx:literal) => {{
        let v: $t;
        let off: u64 = $offset;
        // SAFETY: the symbol is a module-scope `.const` array; callers keep `off` inside it.
        unsafe {
            core::arch::asm!(
                concat!("{{ .reg .u64 a; mov.u64 a, ", $symbol, "; add.u64 a, a, {off}; ld.const.", $ptx, " {v}, [a]; }}"),
                off = in(reg64) off, v = out($reg) v, options(pure, readonly, nostack),
            );
        }
        v
    }};
}

/// Declares a module-scope constant-memory array of `bytes` bytes, filled by the host through
/// the module's global symbol (`cuModuleGetGlobal`).
#[macro_export]
macro_rules! declare_constant {
    ($symbol:expr, $bytes:expr) => {
        core::arch::global_asm!(concat!(
            ".visible .const .align 16 .b8 ",
            $symbol,
            "[",
            $bytes,
            "];"
        ));
    };
}

/// Loads a `u8` or `u16` (zero-extended into a `reg32`), `u32` or `u64` through the read-only data cache
/// (`ld.global.nc`): neighbouring threads re-reading a halo sample hit L1 instead of L2.
#[macro_export]
macro_rules! load_nc {
    ($p:expr, u8) => {
        $crate::load_nc!(@ ($p) as *const u32, u32, reg32, "u8") as u8
    };
    ($p:expr, u16) => {
        $crate::load_nc!(@ ($p) as *const u32, u32, reg32, "u16") as u16
    };
    ($p:expr, u32) => {
        $crate::load_nc!(@ $p, u32, reg32, "u32")
    };
    ($p:expr, u64) => {
        $crate::load_nc!(@ $p, u64, reg64, "u64")
    };
    (@ $p:expr, $t:ty, $reg:ident, $ptx:literal) => {{
        let v: $t;
        let p: *const $t = $p;
        // SAFETY: callers pass a valid, aligned pointer to global memory not written by the kernel.
        unsafe {
            core::arch::asm!(
                concat!("{{ .reg .u64 g; cvta.to.global.u64 g, {p}; ld.global.nc.", $ptx, " {v}, [g]; }}"),
                p = in(reg64) p, v = out($reg) v, options(pure, readonly, nostack),
            );
        }
        v
    }};
}

/// Stores 16 bytes (`st.global.v4.u32`): with consecutive threads on consecutive 16-byte slots, a
/// warp writes 512 contiguous bytes per instruction.
///
/// # Safety
/// `p` must point to 16 writable, 16-byte-aligned bytes of global memory.
#[inline(always)]
pub unsafe fn store_v4(p: *mut [u32; 4], w: [u32; 4]) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "{{ .reg .u64 g; cvta.to.global.u64 g, {p}; st.global.v4.u32 [g], {{{a}, {b}, {c}, {d}}}; }}",
            p = in(reg64) p,
            a = in(reg32) w[0], b = in(reg32) w[1], c = in(reg32) w[2], d = in(reg32) w[3],
            options(nostack),
        );
    }
}

/// [`store_v4`] with the streaming cache hint (`st.global.cs`: evict first). For kernels whose
/// outputs outweigh their inputs many times over: the outputs then do not push out of L2 the
/// input rows the kernel reads again soon (the stream-rows box re-reads each row `h` rows later).
///
/// # Safety
/// As [`store_v4`].
#[inline(always)]
pub unsafe fn store_v4_streaming(p: *mut [u32; 4], w: [u32; 4]) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "{{ .reg .u64 g; cvta.to.global.u64 g, {p}; st.global.cs.v4.u32 [g], {{{a}, {b}, {c}, {d}}}; }}",
            p = in(reg64) p,
            a = in(reg32) w[0], b = in(reg32) w[1], c = in(reg32) w[2], d = in(reg32) w[3],
            options(nostack),
        );
    }
}

/// Stores 8 bytes (`st.global.v2.u32`).
///
/// # Safety
/// `p` must point to 8 writable, 8-byte-aligned bytes of global memory.
#[inline(always)]
pub unsafe fn store_v2(p: *mut [u32; 2], w: [u32; 2]) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "{{ .reg .u64 g; cvta.to.global.u64 g, {p}; st.global.v2.u32 [g], {{{a}, {b}}}; }}",
            p = in(reg64) p,
            a = in(reg32) w[0], b = in(reg32) w[1],
            options(nostack),
        );
    }
}

/// Stores 4, 8 or 16 bytes (`words`, `N` = 1, 2 or 4) at `p` if `keep`, by a predicated
/// streaming store (`@q st.global.cs`): straight-line code where an `if` around a store is a
/// branch, before which the compiler computes every later value it can (a kernel storing `R` rows
/// under per-row `if`s took 94 registers instead of 72). The `.cs` hint (evict first) marks lines
/// no one reads again, so L2 keeps the input rows that neighbouring tiles and their prefetches
/// still want: on the H100 (u8 8192², the word tile's 16-byte stores, two binaries in turn, two
/// rounds) the 3 × 3 dilation went from 48.54 / 48.66 to 48.05 / 48.08 µs, the Gaussian from
/// 48.62 / 48.67 to 48.05 / 48.06, the 5 × 5 dilation from 50.43 / 50.62 to 50.10 / 50.11 and
/// Sobel axis 0 from 71.84 / 72.00 to 71.68 / 71.82.
///
/// # Safety
/// If `keep`, `p` must point to `4 · N` writable bytes of global memory aligned to `4 · N`.
#[inline(always)]
pub unsafe fn store_words_if<const N: usize>(p: *mut u32, w: [u32; N], keep: bool) {
    let k = keep as u32;
    // SAFETY: forwarded to the caller (the store runs only if keep).
    unsafe {
        match N {
            1 => asm!(
                "{{ .reg .u64 g; .reg .pred q; setp.ne.u32 q, {k}, 0; cvta.to.global.u64 g, {p}; @q st.global.cs.u32 [g], {a}; }}",
                p = in(reg64) p, k = in(reg32) k, a = in(reg32) w[0],
                options(nostack),
            ),
            2 => asm!(
                "{{ .reg .u64 g; .reg .pred q; setp.ne.u32 q, {k}, 0; cvta.to.global.u64 g, {p}; @q st.global.cs.v2.u32 [g], {{{a}, {b}}}; }}",
                p = in(reg64) p, k = in(reg32) k, a = in(reg32) w[0], b = in(reg32) w[1 % N],
                options(nostack),
            ),
            _ => asm!(
                "{{ .reg .u64 g; .reg .pred q; setp.ne.u32 q, {k}, 0; cvta.to.global.u64 g, {p}; @q st.global.cs.v4.u32 [g], {{{a}, {b}, {c}, {d}}}; }}",
                p = in(reg64) p, k = in(reg32) k,
                a = in(reg32) w[0], b = in(reg32) w[1 % N], c = in(reg32) w[2 % N], d = in(reg32) w[3 % N],
                options(nostack),
            ),
        }
    }
}

/// Stores 16 bytes to shared memory with one `st.shared.v4.u32`.
///
/// # Safety
/// `p` must point to 16 writable, 16-byte-aligned bytes of this block's shared memory.
#[inline(always)]
pub unsafe fn store_shared_v4(p: *mut [u32; 4], w: [u32; 4]) {
    // SAFETY: forwarded to the caller; the shared-window address of p names the same bytes.
    unsafe { store_shared_v4_at(shared_address(p), w) }
}

/// Copies 16 bytes from global `src` to shared `dst`: `cp.async.cg` on sm_90 (no register holds
/// the bytes in flight; completed by [`cp_async_wait_all`]), else a load and a shared store.
///
/// # Safety
/// `src` 16 readable, 16-byte-aligned bytes of global memory not written during the kernel;
/// `dst` 16 bytes of this block's shared memory, 16-byte aligned, not read before
/// [`cp_async_wait_all`] and a barrier.
#[inline(always)]
pub unsafe fn cp_async_16(dst: *mut u8, src: *const u8) {
    #[cfg(target_feature = "sm_90")]
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "{{ .reg .u64 g, s; cvta.to.global.u64 g, {src}; cvta.to.shared.u64 s, {dst}; cp.async.cg.shared.global [s], [g], 16; }}",
            src = in(reg64) src, dst = in(reg64) dst, options(nostack),
        );
    }
    #[cfg(not(target_feature = "sm_90"))]
    // SAFETY: forwarded to the caller.
    unsafe {
        store_shared_v4(dst as *mut [u32; 4], load_nc_v4(src as *const [u32; 4]))
    };
}

/// Waits for this thread's [`cp_async_16`] copies (`cp.async.wait_all`; nothing before sm_90).
///
/// # Safety
/// None beyond the copies' own; it only waits.
#[inline(always)]
pub unsafe fn cp_async_wait_all() {
    #[cfg(target_feature = "sm_90")]
    // SAFETY: waits only.
    unsafe {
        asm!("cp.async.wait_all;", options(nostack))
    };
}

/// Loads 16 bytes from shared memory with one `ld.shared.v4.u32`.
///
/// # Safety
/// `p` must point to 16 readable, 16-byte-aligned bytes of this block's shared memory, written
/// before a barrier this thread passed.
#[inline(always)]
pub unsafe fn load_shared_v4(p: *const [u32; 4]) -> [u32; 4] {
    // SAFETY: forwarded to the caller; the shared-window address of p names the same bytes.
    unsafe { load_shared_v4_at(shared_address(p)) }
}

/// The 32-bit shared-window address of a pointer into this block's shared memory. Kernels that
/// index shared memory in a hot loop keep this instead of the 64-bit generic pointer: each access
/// is then one `ld.shared`/`st.shared` on a 32-bit register, not a conversion plus a generic access.
#[inline(always)]
#[allow(clippy::pointers_in_nomem_asm_block)] // converts the address; touches no memory
pub fn shared_address<T>(p: *const T) -> u32 {
    let a: u32;
    // SAFETY: register-only conversion (`cvta.to.shared`, then the low 32 bits, which hold the
    // whole shared-window offset).
    unsafe {
        asm!(
            "{{ .reg .u64 s; cvta.to.shared.u64 s, {p}; cvt.u32.u64 {a}, s; }}",
            p = in(reg64) p,
            a = out(reg32) a,
            options(pure, nomem, nostack),
        );
    }
    a
}

/// Loads the `u32` at shared-window address `a` (`ld.shared.u32`).
///
/// # Safety
/// `a` is a 4-byte-aligned address of this block's shared memory ([`shared_address`]), written
/// before a barrier this thread passed.
#[inline(always)]
pub unsafe fn load_shared_u32_at(a: u32) -> u32 {
    let r: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("ld.shared.u32 {r}, [{a}];", a = in(reg32) a, r = out(reg32) r, options(readonly, nostack));
    }
    r
}

/// Stores 16 bytes at shared-window address `a` (`st.shared.v4.u32`).
///
/// # Safety
/// `a` is a 16-byte-aligned address of 16 writable bytes of this block's shared memory
/// ([`shared_address`]).
#[inline(always)]
pub unsafe fn store_shared_v4_at(a: u32, w: [u32; 4]) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "st.shared.v4.u32 [{a}], {{{x}, {y}, {z}, {t}}};",
            a = in(reg32) a,
            x = in(reg32) w[0], y = in(reg32) w[1], z = in(reg32) w[2], t = in(reg32) w[3],
            options(nostack),
        );
    }
}

/// Loads 16 bytes at shared-window address `a` (`ld.shared.v4.u32`).
///
/// # Safety
/// `a` is a 16-byte-aligned address of 16 bytes of this block's shared memory
/// ([`shared_address`]), written by this thread or before a barrier it passed.
#[inline(always)]
pub unsafe fn load_shared_v4_at(a: u32) -> [u32; 4] {
    let (x, y, z, t): (u32, u32, u32, u32);
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "ld.shared.v4.u32 {{{x}, {y}, {z}, {t}}}, [{a}];",
            a = in(reg32) a,
            x = out(reg32) x, y = out(reg32) y, z = out(reg32) z, t = out(reg32) t,
            options(readonly, nostack),
        );
    }
    [x, y, z, t]
}

/// An element type that 16-byte vector loads can carry: `LANES` elements per load, unpacked from
/// the four loaded words without a round trip through memory (so nothing spills to local memory).
pub trait Vec16: Copy {
    /// Elements per 16-byte load.
    const LANES: u64;
    /// Calls `f` on each element packed in `words`, in memory order.
    fn for_each_lane(words: [u32; 4], f: impl FnMut(Self));
}

macro_rules! vec16_words {
    ($t:ty, $conv:expr) => {
        impl Vec16 for $t {
            const LANES: u64 = 4;
            #[inline(always)]
            fn for_each_lane(words: [u32; 4], mut f: impl FnMut(Self)) {
                f($conv(words[0]));
                f($conv(words[1]));
                f($conv(words[2]));
                f($conv(words[3]));
            }
        }
    };
}

vec16_words!(u32, |w: u32| w);
vec16_words!(i32, |w: u32| w as i32);
vec16_words!(f32, f32::from_bits);

impl Vec16 for u8 {
    const LANES: u64 = 16;
    #[inline(always)]
    fn for_each_lane(words: [u32; 4], mut f: impl FnMut(Self)) {
        let mut bytes = |w: u32| {
            f(w as u8);
            f((w >> 8) as u8);
            f((w >> 16) as u8);
            f((w >> 24) as u8);
        };
        bytes(words[0]);
        bytes(words[1]);
        bytes(words[2]);
        bytes(words[3]);
    }
}

impl Vec16 for u16 {
    const LANES: u64 = 8;
    #[inline(always)]
    fn for_each_lane(words: [u32; 4], mut f: impl FnMut(Self)) {
        for w in words {
            f(w as u16);
            f((w >> 16) as u16);
        }
    }
}

impl Vec16 for f64 {
    const LANES: u64 = 2;
    #[inline(always)]
    fn for_each_lane(words: [u32; 4], mut f: impl FnMut(Self)) {
        f(f64::from_bits(words[0] as u64 | (words[1] as u64) << 32));
        f(f64::from_bits(words[2] as u64 | (words[3] as u64) << 32));
    }
}

/// Asks L2 for the line holding `p` (`prefetch.global.L2`). No register waits on it, so a warp
/// can request rows it will load many iterations later, and its loads then hit L2 instead of
/// waiting on DRAM: for kernels whose loads are issued only a row or two ahead because their
/// registers are spent (docs/ARCHITECTURE.md, "L2 prefetch").
///
/// # Safety
/// `p` must point into a global allocation.
#[inline(always)]
pub unsafe fn prefetch_l2(p: *const u8) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "{{ .reg .u64 g; cvta.to.global.u64 g, {p}; prefetch.global.L2 [g]; }}",
            p = in(reg64) p,
            options(nostack, readonly),
        );
    }
}

/// A warp's span of a plane's rows, for L2 prefetches: `LINES` 128-byte lines from `base` in
/// each of rows `0 .. rows`, `stride` bytes apart.
#[derive(Clone, Copy)]
pub struct RowSpan<const LINES: usize> {
    pub base: *const u8,
    pub stride: usize,
    pub rows: i32,
}

impl<const LINES: usize> RowSpan<LINES> {
    /// Rows one [`RowSpan::prefetch_l2`] covers.
    pub const ROWS_PER_PREFETCH: i32 = (32 / LINES) as i32;

    /// Asks L2 for rows `first .. first + ROWS_PER_PREFETCH` of the span (rows outside
    /// `0 .. rows` skipped) with one instruction per warp: lane `l` takes line `l % LINES` of row
    /// `first + l / LINES`. All lanes of the warp call it with the same `first`.
    ///
    /// # Safety
    /// Each address `base + row · stride + 128 · i` (`row < rows`, `i < LINES`) lies in a global
    /// allocation.
    #[inline(always)]
    pub unsafe fn prefetch_l2(&self, first: i32) {
        // SAFETY: forwarded to the caller.
        unsafe { self.prefetch_l2_before(first, self.rows) }
    }

    /// [`RowSpan::prefetch_l2`] with the rows from `end` on skipped too (`end ≤ rows`).
    #[inline(always)]
    unsafe fn prefetch_l2_before(&self, first: i32, end: i32) {
        const { assert!(LINES > 0 && LINES <= 32 && LINES.is_power_of_two()) };
        let lane = super::lane_idx();
        let r = first + (lane as usize / LINES) as i32;
        if r >= 0 && r < end {
            let at = r as usize * self.stride + 128 * (lane as usize % LINES);
            // SAFETY: r < end ≤ rows; forwarded to the caller.
            unsafe { prefetch_l2(self.base.wrapping_add(at)) };
        }
    }

    /// [`RowSpan::prefetch_l2`] for exactly rows `first .. first + count` (those outside
    /// `0 .. rows` skipped): one instruction per `ROWS_PER_PREFETCH` rows, the lanes past the
    /// last row idle — so warps that each ask for their own rows ask L2 for every line once.
    ///
    /// # Safety
    /// As [`RowSpan::prefetch_l2`].
    #[inline(always)]
    pub unsafe fn prefetch_rows_l2(&self, first: i32, count: i32) {
        let end = (first + count).min(self.rows);
        let mut t = 0;
        while t < count {
            // SAFETY: forwarded to the caller.
            unsafe { self.prefetch_l2_before(first + t, end) };
            t += Self::ROWS_PER_PREFETCH;
        }
    }
}

/// The four f32 lanes `lane(0..4)` as the words of one 16-byte vector.
#[inline(always)]
pub fn f32x4_words(mut lane: impl FnMut(usize) -> f32) -> [u32; 4] {
    [
        lane(0).to_bits(),
        lane(1).to_bits(),
        lane(2).to_bits(),
        lane(3).to_bits(),
    ]
}

/// Four neighbouring elements moved as one vector access of `4 · size_of::<Self>()` bytes
/// (`ld/st.v4.u8`-sized words up to two `v2.u64`), for kernels whose thread owns four columns.
pub trait Quad: Copy {
    /// # Safety
    /// `p` points at four readable elements, aligned to `min(4 · size, 16)` bytes.
    unsafe fn load4(p: *const Self) -> [Self; 4];
    /// # Safety
    /// `p` points at four writable elements, aligned as for `load4`.
    unsafe fn store4(p: *mut Self, v: [Self; 4]);
}

macro_rules! quad {
    ($($t:ty => $align:literal),*) => {$(
        impl Quad for $t {
            #[inline(always)]
            unsafe fn load4(p: *const $t) -> [$t; 4] {
                #[repr(C, align($align))]
                struct W([$t; 4]);
                // SAFETY: the caller's alignment and extent.
                unsafe { (*(p as *const W)).0 }
            }
            #[inline(always)]
            unsafe fn store4(p: *mut $t, v: [$t; 4]) {
                #[repr(C, align($align))]
                struct W([$t; 4]);
                // SAFETY: as above.
                unsafe { (p as *mut W).write(W(v)) }
            }
        }
    )*};
}
quad!(u8 => 4, u16 => 8, u32 => 16, u64 => 16, f32 => 16, f64 => 16);
