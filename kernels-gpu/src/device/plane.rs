//! The image element and plane the 2D kernels (and the window family's boxes) read: [`Pixel`],
//! how an element loads, stores and packs into words, and [`Plane`], one `h × w` plane of a
//! launch's input and how it extends past its edges (every border mode).

use crate::abi::border::{BorderMode, border_index_i32};
use crate::abi::filter2d::Filter2dArgs;

type Args<T> = Filter2dArgs<T>;

/// An image element the kernels load (read-only path) and store, and its place in a vector of
/// words.
pub trait Pixel: Copy {
    const SIZE: usize;
    /// Loads through the read-only data path.
    ///
    /// # Safety
    /// `p` points to a readable element not written during the kernel.
    unsafe fn load(p: *const Self) -> Self;
    /// The element's bits, zero-extended.
    fn bits(self) -> u32;
    /// Element `i` of a 16-byte vector.
    #[inline(always)]
    fn lane(words: &[u32; 4], i: usize) -> Self {
        let per = 4 / Self::SIZE;
        Self::from_bits(words[i / per] >> (8 * Self::SIZE * (i % per)))
    }
    /// The element from the low bits of `b`.
    fn from_bits(b: u32) -> Self;
}

macro_rules! pixel {
    ($($t:ty, $size:literal, $load:expr, $from:expr, $bits:expr;)*) => {$(
        impl Pixel for $t {
            const SIZE: usize = $size;
            #[inline(always)]
            unsafe fn load(p: *const $t) -> $t {
                $load(p)
            }
            #[inline(always)]
            fn bits(self) -> u32 {
                $bits(self)
            }
            #[inline(always)]
            fn from_bits(b: u32) -> $t {
                $from(b)
            }
        }
    )*};
}

pixel! {
    u8, 1, |p: *const u8| crate::load_nc!(p, u8), |b: u32| b as u8, |v: u8| v as u32;
    u16, 2, |p: *const u16| crate::load_nc!(p, u16), |b: u32| b as u16, |v: u16| v as u32;
    i16, 2, |p: *const i16| crate::load_nc!(p as *const u16, u16) as i16, |b: u32| b as i16, |v: i16| v as u16 as u32;
    f32, 4, |p: *const f32| f32::from_bits(crate::load_nc!(p as *const u32, u32)), f32::from_bits, f32::to_bits;
}

/// One plane of `h × w` samples and how it extends past its edges.
#[derive(Clone, Copy)]
pub struct Plane<T> {
    pub base: *const T,
    pub h: i32,
    pub w: i32,
    pub mode: BorderMode,
    pub cval: T,
}

impl<T: Pixel> Plane<T> {
    /// Plane `p` of the launch's input.
    #[inline(always)]
    pub(crate) fn of(x: *const T, p: u64, a: &Args<T>) -> Plane<T> {
        Plane {
            // SAFETY (of the add): the host launches only planes < a.planes of x.
            base: unsafe { x.add((p * a.h as u64 * a.w as u64) as usize) },
            h: a.h as i32,
            w: a.w as i32,
            mode: BorderMode::from_code(a.border),
            cval: a.cval,
        }
    }

    /// Start of the row at position `r` (any integer), `None` for a constant row.
    #[inline(always)]
    pub(crate) fn row(&self, r: i32) -> Option<*const T> {
        // SAFETY: border_index_i32 returns a row below h.
        border_index_i32(r, self.h, self.mode).map(|rr| unsafe { self.base.add(rr as usize * self.w as usize) })
    }

    /// Column index standing at position `c`, `None` for the constant.
    #[inline(always)]
    pub(crate) fn col(&self, c: i32) -> Option<i32> {
        border_index_i32(c, self.w, self.mode)
    }

    /// The sample at column position `c` of `row` (a `row(..)` result).
    ///
    /// # Safety
    /// `row` came from `self.row`.
    #[inline(always)]
    pub(crate) unsafe fn at(&self, row: Option<*const T>, c: i32) -> T {
        // SAFETY: forwarded.
        unsafe { self.at_col(row, self.col(c)) }
    }

    /// The sample of `row` (a `row(..)` result) at column `col` (a `col(..)` result), so a column
    /// read in many rows is mapped once.
    ///
    /// # Safety
    /// `row` came from `self.row`, `col` from `self.col`.
    #[inline(always)]
    pub(crate) unsafe fn at_col(&self, row: Option<*const T>, col: Option<i32>) -> T {
        match (row, col) {
            // SAFETY: the row holds w samples and the column is below w.
            (Some(p), Some(j)) => unsafe { T::load(p.add(j as usize)) },
            _ => self.cval,
        }
    }
}

/// The 4-byte word of `row` (a `plane.row` result) whose first element is at column `c`
/// (`4 / T::SIZE` elements): one load when `aligned` (the word lies in the row, 4-byte
/// aligned), else its elements border-mapped one by one.
#[inline(always)]
pub(crate) unsafe fn word_at<T: Pixel>(plane: &Plane<T>, row: Option<*const T>, c: i32, aligned: bool) -> u32 {
    match row {
        // SAFETY: the caller's `aligned` promises the word lies in the row.
        Some(q) if aligned => crate::load_nc!(unsafe { q.add(c as usize) } as *const u32, u32),
        _ => {
            let mut w = 0u32;
            crate::unroll!(4, |i| {
                if i < 4 / T::SIZE {
                    // SAFETY: row from plane.row.
                    w |= unsafe { plane.at(row, c + i as i32) }.bits() << (8 * T::SIZE * i);
                }
            });
            w
        }
    }
}
