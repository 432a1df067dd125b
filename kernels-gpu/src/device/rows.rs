//! Row access shared by the filter families: border-extended samples and the staging of a
//! block's tile (its outputs' samples plus the window's halo) in shared memory.

use crate::abi::border::{BorderMode, border_index};

/// A row of `n ≥ 1` samples in global memory and how it extends past its ends.
#[derive(Clone, Copy)]
pub struct BorderedRow<T> {
    pub row: *const T,
    pub n: u64,
    pub mode: BorderMode,
    /// The value outside the row in the constant mode.
    pub cval: T,
}

impl<T: Copy> BorderedRow<T> {
    /// The row of `n` samples at `row`, extended by border mode `border` (its
    /// [`BorderMode`] code, as launch arguments carry it) with constant `cval`.
    #[inline(always)]
    pub fn new(row: *const T, n: u64, border: u32, cval: T) -> Self {
        BorderedRow {
            row,
            n,
            mode: BorderMode::from_code(border),
            cval,
        }
    }

    /// The sample at position `pos` (any integer), read with `load` when inside the row.
    ///
    /// # Safety
    /// `row` holds `n` samples that `load` may read.
    #[inline(always)]
    pub unsafe fn sample_with(&self, pos: i64, load: impl Fn(*const T) -> T) -> T {
        match border_index(pos, self.n as i64, self.mode) {
            // SAFETY: border_index returns an index below n.
            Some(j) => load(unsafe { self.row.add(j as usize) }),
            None => self.cval,
        }
    }

    /// The sample at position `pos` (any integer), plain load.
    ///
    /// # Safety
    /// `row` holds `n` samples.
    #[inline(always)]
    pub unsafe fn sample(&self, pos: i64) -> T {
        // SAFETY: forwarded.
        unsafe { self.sample_with(pos, |p| p.read()) }
    }

    /// Calls `f(k, sample)` for positions `start + k`, `k < len`, in order: direct loads when the
    /// span lies inside the row, border-mapped otherwise.
    ///
    /// # Safety
    /// `row` holds `n` samples that `load` may read.
    #[inline(always)]
    pub unsafe fn for_each_with(&self, start: i64, len: u32, load: impl Fn(*const T) -> T, mut f: impl FnMut(u32, T)) {
        if start >= 0 && start as u64 + len as u64 <= self.n {
            for k in 0..len {
                // SAFETY: the span lies inside the row.
                f(k, load(unsafe { self.row.add(start as usize + k as usize) }));
            }
        } else {
            for k in 0..len {
                // SAFETY: forwarded.
                f(k, unsafe { self.sample_with(start + k as i64, &load) });
            }
        }
    }

    /// Stages positions `[first, first + len)` into `tile[0 .. len)`, thread `t` of a block of
    /// `block` taking `t, t + block, ..`: coalesced loads, direct when the span lies inside the
    /// row, border-mapped otherwise. The caller puts a barrier before anyone reads the tile.
    ///
    /// # Safety
    /// `row` holds `n` samples that `load` may read; `tile` has `len` writable elements.
    #[inline(always)]
    pub unsafe fn stage(&self, first: i64, len: u32, tile: *mut T, t: u32, block: u32, load: impl Fn(*const T) -> T) {
        let inside = first >= 0 && first as u64 + len as u64 <= self.n;
        let mut j = t;
        while j < len {
            let pos = first + j as i64;
            // SAFETY: inside spans read within the row; others go through the border mapping;
            // j < len elements of the tile.
            unsafe {
                let v = if inside {
                    load(self.row.add(pos as usize))
                } else {
                    self.sample_with(pos, &load)
                };
                tile.add(j as usize).write(v);
            }
            j += block;
        }
    }
}
