//! [`Sharded`]: an array split along its first axis across the devices of a [`Gpus`], each part
//! with the halo rows its stencils read; scatter, gather, halo exchange and [`Gpus::map`].
//!
//! Geometry. Device `d`'s part owns the rows `rows` (its core) and holds the buffer rows
//! `lo..hi` = `rows` widened by `halo` each side and clipped to the array. An op whose reach
//! along axis 0 is at most `halo` (its [`Stencil`]) runs on the whole buffer: every core row
//! reads only buffer rows, and where the buffer meets the array's real edge the op applies its
//! own border there, as it does on the whole array — so the core rows are the one-device result,
//! bit for bit, for every border mode but one. `Border::Wrap` reaches across the real edge to
//! the far end: a part that touches an edge runs on a temporary buffer extended cyclically. The
//! rows an op writes into a part's halo are not the array's: an op's result is marked stale, and
//! its halos are refreshed from the neighbours' cores (peer copies of `halo` rows per seam) when
//! an op that reads them (a stencil) comes next — not before a gather, a reduction or a batch op,
//! which read cores only.

use std::ops::Range;

use cudarc::driver::{DevicePtr, DevicePtrMut, DeviceRepr, sys};
use ndarray::{Array, ArrayBase, Data, Dimension};
use rayon::prelude::*;

use super::copy::{Readers, RowSource, copy_rows};
use super::staging::STAGED_MIN;
use super::{Gpus, on_device};
use crate::array::DeviceArray;
use crate::border::Border;
use crate::error::{Error, Result};
use crate::gpu::Gpu;

/// How far an op reads along axis 0 (rows of an image, samples of a signal), and the border it
/// applies there. Planes of a batch are independent: [`Stencil::POINTWISE`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stencil {
    /// Rows read above and below the output row.
    pub radius: usize,
    /// The op's border along axis 0.
    pub border: Border,
}

impl Stencil {
    /// An op whose output row `i` reads input row `i` only (batches, point ops, rows).
    pub const POINTWISE: Stencil = Stencil {
        radius: 0,
        border: Border::Zero,
    };

    /// An op reading `radius` rows each side under `border`.
    pub fn rows(radius: usize, border: Border) -> Stencil {
        Stencil { radius, border }
    }
}

/// An array split along its first axis across the devices of a [`Gpus`]: one C-order part per
/// device (devices with no rows hold none), each with up to `halo` rows of its neighbours above and
/// below. Made by [`Gpus::scatter`] or by an op on a `Gpus`; read back by [`Gpus::gather`] or
/// [`Gpus::gather_to`]. Its parts belong to the set that made it: giving it to another set is
/// [`Error::ShardMismatch`].
pub struct Sharded<T, D: Dimension> {
    set: u64,
    dim: D,
    halo: usize,
    parts: Vec<Part<T, D>>,
    /// Whether the parts' halo rows hold their neighbours' cores (false after an op: they are
    /// refreshed before the next op that reads them).
    fresh: std::sync::Mutex<bool>,
}

/// One device's part: its core rows and the buffer holding rows `lo..lo + data.shape()[0]`; the
/// copies of other streams that read it, which its stream waits for before the buffer is freed.
struct Part<T, D: Dimension> {
    device: usize,
    rows: Range<usize>,
    lo: usize,
    data: DeviceArray<T, D>,
    readers: Readers,
}

impl<T, D: Dimension> Part<T, D> {
    fn new(device: usize, rows: Range<usize>, lo: usize, data: DeviceArray<T, D>) -> Self {
        Part {
            device,
            rows,
            lo,
            data,
            readers: Readers::default(),
        }
    }
}

impl<T, D: Dimension> Drop for Part<T, D> {
    fn drop(&mut self) {
        // The buffer is freed in its stream's order (after this): first the copies reading it.
        self.readers.wait_all(self.data.as_slice().stream());
    }
}

impl<T, D: Dimension> Sharded<T, D> {
    /// The whole array's shape.
    pub fn shape(&self) -> &[usize] {
        self.dim.slice()
    }

    /// The whole array's shape as an ndarray dimension.
    pub fn raw_dim(&self) -> D {
        self.dim.clone()
    }

    /// Number of elements of the whole array.
    pub fn len(&self) -> usize {
        self.dim.size()
    }

    /// Whether the array has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Halo rows each part holds above and below its core (fewer at the array's edges).
    pub fn halo(&self) -> usize {
        self.halo
    }

    /// Each part's device (its position in the set) and core rows, in row order.
    pub fn parts(&self) -> Vec<(usize, Range<usize>)> {
        self.parts.iter().map(|p| (p.device, p.rows.clone())).collect()
    }

    fn rows(&self) -> usize {
        self.dim.slice().first().copied().unwrap_or(1)
    }

    /// Bytes of one row (one index of axis 0).
    fn row_bytes(&self) -> usize {
        row_bytes::<T>(self.dim.slice())
    }

    /// Whether every part's buffer holds the `radius` rows its core's stencil reads on each side
    /// (or all the rows there are): true when `radius ≤ halo`, and for a part holding the whole array.
    fn reaches(&self, radius: usize) -> bool {
        let n = self.rows();
        self.parts.iter().all(|p| {
            let hi = p.lo + p.data.shape()[0];
            p.rows.start - p.lo >= radius.min(p.rows.start) && hi - p.rows.end >= radius.min(n - p.rows.end)
        })
    }

    /// The parts as copy sources, ready after the work enqueued on their streams so far.
    fn sources(&self) -> Result<Vec<RowSource<'_>>> {
        self.parts
            .iter()
            .map(|p| {
                let buf = p.data.as_slice();
                let ptr = buf.device_ptr(buf.stream()).0;
                RowSource::new(buf.stream(), ptr, p.lo, p.rows.clone(), &p.readers)
            })
            .collect()
    }

    /// Refills every part's halo rows from the cores of the parts that own them, unless they are
    /// fresh. Every part's `ready` event is recorded before any copy is enqueued, so each device
    /// waits only for the neighbours whose rows it copies, never for their copies.
    fn refresh_halos(&self, gpus: &Gpus) -> Result<()> {
        let mut fresh = self.fresh.lock().unwrap_or_else(|e| e.into_inner());
        if *fresh || self.halo == 0 || self.parts.len() < 2 || self.row_bytes() == 0 {
            return Ok(());
        }
        let (n, row_bytes, sources) = (self.rows(), self.row_bytes(), self.sources()?);
        for p in &self.parts {
            let gpu = &gpus.gpus[p.device];
            let hi = p.lo + p.data.shape()[0];
            // The halo rows are written through the part's own buffer pointer: rows no core
            // covers, which no op and no other copy reads until this refresh's copies are done
            // (later ops run after them on this stream; other devices read cores only).
            let ptr = p.data.as_slice().device_ptr(gpu.stream()).0;
            let top = p.lo as isize..p.rows.start as isize;
            let bottom = p.rows.end as isize..hi as isize;
            copy_rows(gpu, ptr, 0, top, n, row_bytes, &sources).map_err(|e| on_device(gpu, e))?;
            copy_rows(gpu, ptr, p.rows.end - p.lo, bottom, n, row_bytes, &sources).map_err(|e| on_device(gpu, e))?;
        }
        *fresh = true;
        Ok(())
    }
}

impl<T: DeviceRepr + Clone, D: Dimension> Sharded<T, D> {
    /// The same array with `halo` rows of halo: each device's part rebuilt from the parts'
    /// cores (peer copies), the split unchanged.
    pub fn with_halo(&self, gpus: &Gpus, halo: usize) -> Result<Sharded<T, D>> {
        gpus.check(self)?;
        let (n, row_bytes, sources) = (self.rows(), self.row_bytes(), self.sources()?);
        let parts = self
            .parts
            .iter()
            .map(|p| {
                let gpu = &gpus.gpus[p.device];
                let (lo, hi) = buffer_rows(&p.rows, halo, n);
                let mut data = DeviceArray::uninit(gpu, with_rows(&self.dim, hi - lo))?;
                if row_bytes > 0 {
                    let ptr = data.as_mut_slice().device_ptr_mut(gpu.stream()).0;
                    copy_rows(gpu, ptr, 0, lo as isize..hi as isize, n, row_bytes, &sources)?;
                }
                Ok(Part::new(p.device, p.rows.clone(), lo, data))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Sharded {
            set: self.set,
            dim: self.dim.clone(),
            halo,
            parts,
            fresh: true.into(),
        })
    }
}

/// The buffer rows of a part owning `rows` with `halo` rows each side, clipped to `0..n`.
fn buffer_rows(rows: &Range<usize>, halo: usize, n: usize) -> (usize, usize) {
    (rows.start.saturating_sub(halo), (rows.end + halo).min(n))
}

/// Bytes of one index of axis 0 of a C-order array of `T` of shape `shape`.
fn row_bytes<T>(shape: &[usize]) -> usize {
    shape.iter().skip(1).product::<usize>() * std::mem::size_of::<T>()
}

/// `dim` with `rows` along axis 0.
fn with_rows<D: Dimension>(dim: &D, rows: usize) -> D {
    let mut d = dim.clone();
    d[0] = rows;
    d
}

impl Gpus {
    /// Splits `x` along its first axis across the devices (by their shares), each part with
    /// `halo` rows of its neighbours above and below: `0` for batches (planes are independent) and
    /// signals split for reductions, a stencil's radius for one image split into row bands (ops
    /// widen it when they need more). The parts upload concurrently, one host thread per device;
    /// parts of 1 MiB or more go through the device's two pinned staging buffers in chunks, the
    /// host copy of one chunk (on every core) overlapping the DMA of the previous one.
    /// A 0-dimensional `x` is [`Error::InvalidArgument`].
    pub fn scatter<T, S, D>(&self, x: &ArrayBase<S, D>, halo: usize) -> Result<Sharded<T, D>>
    where
        T: DeviceRepr + Clone + Send + Sync,
        S: Data<Elem = T>,
        D: Dimension,
    {
        let dim = x.raw_dim();
        let Some(&n) = dim.slice().first() else {
            return Err(Error::InvalidArgument {
                name: "x",
                reason: "a 0-dimensional array has no axis to split".into(),
            });
        };
        let std = x.as_standard_layout();
        let host = std.as_slice().expect("standard layout is contiguous");
        let row = dim.slice()[1..].iter().product::<usize>();
        let split = self.split(n);
        let parts = std::thread::scope(|s| {
            let jobs: Vec<_> = split
                .into_iter()
                .map(|(device, rows)| {
                    let (gpu, dim) = (&self.gpus[device], &dim);
                    s.spawn(move || {
                        let (lo, hi) = buffer_rows(&rows, halo, n);
                        let part_dim = with_rows(dim, hi - lo);
                        let rows_host = &host[lo * row..hi * row];
                        let bytes = std::mem::size_of_val(rows_host);
                        let data = if part_dim.size() == 0 {
                            DeviceArray::uninit(gpu, part_dim)
                        } else if bytes >= STAGED_MIN {
                            // Large parts through the device's pinned staging buffers.
                            (|| {
                                let mut data = DeviceArray::uninit(gpu, part_dim)?;
                                let dst = data.as_mut_slice().device_ptr_mut(gpu.stream()).0;
                                // SAFETY: the rows' elements are plain device-representable data,
                                // viewed as their bytes.
                                let src = unsafe { std::slice::from_raw_parts(rows_host.as_ptr() as *const u8, bytes) };
                                // SAFETY: `dst` is the fresh part's `bytes` bytes on this device.
                                self.with_staging(device, |st| unsafe { st.upload(gpu, src, dst) })?;
                                Ok(data)
                            })()
                        } else {
                            DeviceArray::upload(
                                gpu,
                                &ndarray::ArrayView::from_shape(part_dim, rows_host).expect("rows of a C-order array"),
                            )
                        }
                        .map_err(|e| on_device(gpu, e))?;
                        Ok(Part::new(device, rows, lo, data))
                    })
                })
                .collect();
            jobs.into_iter()
                .map(|j| j.join().expect("an upload thread panicked"))
                .collect::<Result<Vec<_>>>()
        })?;
        Ok(Sharded {
            set: self.id(),
            dim,
            halo,
            parts,
            fresh: true.into(),
        })
    }

    /// The whole array back in host memory: every part's core downloads concurrently (one host
    /// thread per device) into its rows of the result, through the pinned staging buffers as
    /// [`Gpus::scatter`] uploads.
    pub fn gather<T, D>(&self, x: &Sharded<T, D>) -> Result<Array<T, D>>
    where
        T: DeviceRepr + Clone + Send + Sync,
        D: Dimension,
    {
        self.check(x)?;
        let len = x.len();
        let row_bytes = x.row_bytes();
        let mut out: Vec<T> = Vec::with_capacity(len);
        // The rows the driver downloads from pageable memory (parts below STAGED_MIN): their
        // pages faulted in on every core first, else the driver's copy faults each page, one
        // thread per device. Staged parts fault theirs in their own parallel host copies.
        let elems_per_row: usize = x.dim.slice()[1..].iter().product();
        for p in x.parts.iter().filter(|p| p.rows.len() * row_bytes < STAGED_MIN) {
            let rows = &mut out.spare_capacity_mut()[p.rows.start * elems_per_row..p.rows.end * elems_per_row];
            rows.par_chunks_mut(1 << 18).for_each(|c| {
                // SAFETY: writes zero bytes over `c.len()` elements of uninitialized capacity.
                unsafe { std::ptr::write_bytes(c.as_mut_ptr(), 0, c.len()) }
            });
        }
        // The host address travels to the threads as an integer; each writes its own rows.
        let base = out.spare_capacity_mut().as_mut_ptr() as usize;
        std::thread::scope(|s| {
            let jobs: Vec<_> = x
                .parts
                .iter()
                .filter(|p| !p.rows.is_empty() && row_bytes > 0)
                .map(|p| {
                    let gpu = &self.gpus[p.device];
                    s.spawn(move || {
                        let go = || -> Result<()> {
                            let buf = p.data.as_slice();
                            let _order = gpu.order_after([buf.stream()])?;
                            let src = buf.device_ptr(gpu.stream()).0 + ((p.rows.start - p.lo) * row_bytes) as u64;
                            let dst = base + p.rows.start * row_bytes;
                            let bytes = p.rows.len() * row_bytes;
                            if bytes >= STAGED_MIN {
                                // SAFETY: `dst` addresses the rows `p.rows` of `out`'s allocation
                                // (the parts' cores are disjoint); `src` as many bytes of the
                                // part's core, ordered before the stream's position.
                                return unsafe {
                                    self.with_staging(p.device, |st| st.download(gpu, src, dst as *mut u8, bytes))
                                };
                            }
                            gpu.context().bind_to_thread()?;
                            // SAFETY: `dst` addresses the rows `p.rows` of `out`'s allocation
                            // (capacity `len` elements; the parts' cores are disjoint), `src` as
                            // many bytes of the part's core; the stream is synchronized before
                            // the memory is used.
                            unsafe {
                                sys::cuMemcpyDtoHAsync_v2(
                                    dst as *mut std::ffi::c_void,
                                    src,
                                    bytes,
                                    gpu.stream().cu_stream(),
                                )
                                .result()?
                            };
                            gpu.synchronize()
                        };
                        go().map_err(|e| on_device(gpu, e))
                    })
                })
                .collect();
            jobs.into_iter()
                .try_for_each(|j| j.join().expect("a download thread panicked"))
        })?;
        // SAFETY: every part's core was written above (the cores tile 0..len), and all copies
        // are complete (each thread synchronized its stream).
        unsafe { out.set_len(len) };
        Ok(Array::from_shape_vec(x.raw_dim(), out).expect("length matches shape"))
    }

    /// The whole array on device `device` (a position in the set): the cores copied there, peer
    /// to peer, on that device's stream.
    pub fn gather_to<T, D>(&self, x: &Sharded<T, D>, device: usize) -> Result<DeviceArray<T, D>>
    where
        T: DeviceRepr + Clone,
        D: Dimension,
    {
        self.check(x)?;
        let gpu = self.gpus.get(device).ok_or_else(|| Error::InvalidArgument {
            name: "device",
            reason: format!("position {device} in a set of {} devices", self.len()),
        })?;
        let mut out = DeviceArray::uninit(gpu, x.raw_dim())?;
        if x.row_bytes() > 0 && x.rows() > 0 {
            let ptr = out.as_mut_slice().device_ptr_mut(gpu.stream()).0;
            let sources = x.sources().map_err(|e| on_device(gpu, e))?;
            copy_rows(gpu, ptr, 0, 0..x.rows() as isize, x.rows(), x.row_bytes(), &sources)
                .map_err(|e| on_device(gpu, e))?;
        }
        Ok(out)
    }

    /// Runs `f` on every device's part of `x` — an op of one `Gpu` on one `DeviceArray`, the part's
    /// whole buffer — and returns the results as one sharded array. `stencil` is how far `f` reads
    /// along axis 0 (parts are re-cut with a wider halo first when it exceeds `x`'s); `f` must keep
    /// the length of axis 0. All devices' work is enqueued from the calling thread and runs
    /// concurrently; an error names the device it came from.
    ///
    /// ```no_run
    /// use gpuprims::{Border, Gpus, Stencil};
    /// let gpus = Gpus::all()?;
    /// let image = ndarray::Array2::<u8>::zeros((32768, 4096));
    /// let bands = gpus.scatter(&image, 2)?;               // row bands with a 2-row halo
    /// let st = Stencil::rows(2, Border::Reflect);
    /// let g = gpus.map(&bands, st, |gpu, part| gpu.gaussian(part, 0.5, Border::Reflect))?;
    /// let back = gpus.gather(&g)?;                        // equal to one GPU's result
    /// # Ok::<(), gpuprims::Error>(())
    /// ```
    pub fn map<T, U, D, F>(&self, x: &Sharded<T, D>, stencil: Stencil, f: F) -> Result<Sharded<U, D>>
    where
        T: DeviceRepr + Clone,
        U: DeviceRepr + Clone,
        D: Dimension,
        F: Fn(&Gpu, &DeviceArray<T, D>) -> Result<DeviceArray<U, D>>,
    {
        let mut out = self.map_many(x, stencil, |g, a| Ok(vec![f(g, a)?]))?;
        Ok(out.pop().expect("one output"))
    }

    /// [`Gpus::map`] for ops with several outputs of one type (`f` returns them in a `Vec` of the
    /// same length on every device).
    pub fn map_many<T, U, D, F>(&self, x: &Sharded<T, D>, stencil: Stencil, f: F) -> Result<Vec<Sharded<U, D>>>
    where
        T: DeviceRepr + Clone,
        U: DeviceRepr + Clone,
        D: Dimension,
        F: Fn(&Gpu, &DeviceArray<T, D>) -> Result<Vec<DeviceArray<U, D>>>,
    {
        self.check(x)?;
        if !x.reaches(stencil.radius) {
            return self.map_many(&x.with_halo(self, stencil.radius)?, stencil, f);
        }
        if stencil.radius > 0 {
            x.refresh_halos(self)?;
        }
        let n = x.rows();
        let mut results: Vec<Vec<Part<U, D>>> = Vec::new();
        for p in &x.parts {
            let gpu = &self.gpus[p.device];
            let part = || -> Result<Vec<Part<U, D>>> {
                let r = stencil.radius;
                let whole = p.lo == 0 && p.lo + p.data.shape()[0] == n;
                let cyclic =
                    stencil.border == Border::Wrap && r > 0 && !whole && (p.rows.start < r || p.rows.end + r > n);
                if !cyclic {
                    let outs = f(gpu, &p.data)?;
                    return outs
                        .into_iter()
                        .map(|o| {
                            keeps_rows(&o, p.data.shape()[0])?;
                            Ok(Part::new(p.device, p.rows.clone(), p.lo, o))
                        })
                        .collect();
                }
                // The core's rows and `r` more each side, taken cyclically across the real edges.
                let span = p.rows.start as isize - r as isize..(p.rows.end + r) as isize;
                let mut tmp = DeviceArray::uninit(gpu, with_rows(&x.dim, span.len()))?;
                let ptr = tmp.as_mut_slice().device_ptr_mut(gpu.stream()).0;
                copy_rows(gpu, ptr, 0, span.clone(), n, x.row_bytes(), &x.sources()?)?;
                let outs = f(gpu, &tmp)?;
                outs.into_iter()
                    .map(|o| {
                        keeps_rows(&o, span.len())?;
                        let row_bytes = row_bytes::<U>(o.shape());
                        let hi = p.lo + p.data.shape()[0];
                        let mut data = DeviceArray::uninit(gpu, with_rows(&o.raw_dim(), hi - p.lo))?;
                        if row_bytes > 0 {
                            let buf = o.as_slice();
                            // The temporary output's row `r` is the core's first row (same
                            // stream as the copy: no reader to record).
                            let ptr = buf.device_ptr(buf.stream()).0 + (r * row_bytes) as u64;
                            let none = Readers::default();
                            let core = RowSource::new(buf.stream(), ptr, p.rows.start, p.rows.clone(), &none)?;
                            let dst = data.as_mut_slice().device_ptr_mut(gpu.stream()).0;
                            let rows = p.rows.start as isize..p.rows.end as isize;
                            copy_rows(gpu, dst, p.rows.start - p.lo, rows, n, row_bytes, &[core])?;
                        }
                        Ok(Part::new(p.device, p.rows.clone(), p.lo, data))
                    })
                    .collect()
            };
            results.push(part().map_err(|e| on_device(gpu, e))?);
        }
        let count = results.first().map_or(0, Vec::len);
        if results.iter().any(|r| r.len() != count) {
            return Err(Error::InvalidArgument {
                name: "f",
                reason: "returned a different number of outputs on different devices".into(),
            });
        }
        let mut columns: Vec<Vec<Part<U, D>>> = (0..count).map(|_| Vec::new()).collect();
        for r in results {
            for (k, p) in r.into_iter().enumerate() {
                columns[k].push(p);
            }
        }
        let mut outs: Vec<Sharded<U, D>> = Vec::with_capacity(count);
        for parts in columns {
            let first = &parts[0].data;
            let mut dim = first.raw_dim();
            dim[0] = n;
            if let Some(p) = parts.iter().find(|p| p.data.shape()[1..] != first.shape()[1..]) {
                return Err(Error::ShardMismatch {
                    reason: format!(
                        "the op gave parts of shapes {:?} and {:?} (device positions {} and {})",
                        first.shape(),
                        p.data.shape(),
                        parts[0].device,
                        p.device
                    ),
                });
            }
            outs.push(Sharded {
                set: self.id(),
                dim,
                halo: x.halo,
                parts,
                fresh: false.into(),
            });
        }
        Ok(outs)
    }

    /// [`Error::ShardMismatch`] unless `x` was made by this set.
    pub(crate) fn check<T, D: Dimension>(&self, x: &Sharded<T, D>) -> Result<()> {
        if x.set == self.id() {
            return Ok(());
        }
        Err(Error::ShardMismatch {
            reason: format!(
                "an array sharded by another device set was given to the set of devices {:?}",
                self.ordinals()
            ),
        })
    }

    /// Each part's whole buffer on its device, with its device position: for the reductions,
    /// which need halo-free parts (`x.halo() == 0`).
    pub(crate) fn part_buffers<'a, T, D: Dimension>(
        &'a self,
        x: &'a Sharded<T, D>,
    ) -> impl Iterator<Item = (&'a Gpu, &'a DeviceArray<T, D>)> + 'a {
        debug_assert_eq!(x.halo, 0);
        x.parts.iter().map(|p| (&self.gpus[p.device], &p.data))
    }
}

/// An op's output must keep axis 0's length (the rows the part's geometry names).
fn keeps_rows<U, D: Dimension>(o: &DeviceArray<U, D>, rows: usize) -> Result<()> {
    match o.shape().first() {
        Some(&r) if r == rows => Ok(()),
        _ => Err(Error::InvalidArgument {
            name: "f",
            reason: format!(
                "an op on a part of {rows} rows returned shape {:?}; it must keep axis 0",
                o.shape()
            ),
        }),
    }
}
