//! [`Gpus`]: every GPU of the host as one device set. Arrays are [`Sharded`] along their first
//! axis — a batch by planes, a signal by runs, one large image by row bands that carry the halo
//! their stencils read — and every op runs on all devices at once, its result staying sharded on
//! the devices until it is gathered.
//!
//! - `mod.rs`: the set (devices, their shares of the work, peer access).
//! - `sharded.rs`: [`Sharded`], its geometry, scatter / gather, halo exchange, [`Gpus::map`].
//! - `copy.rs`: row copies between devices and the cross-device stream order.
//! - `ops.rs`: the named ops and the reductions over a set.

mod copy;
mod ops;
mod sharded;
mod staging;

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use cudarc::driver::sys;

pub use ops::ShardOperand;
pub use sharded::{Sharded, Stencil};

use crate::error::{Error, Result};
use crate::gpu::{Gpu, default_pool, device_count};

/// One [`Gpu`] per device of a set, each with its own stream. Ops on a `Gpus` take a host array
/// (scattered across the devices, the result gathered) or a [`Sharded`] array (used in place, the
/// result left sharded), enqueue every device's part from the calling thread and return once all
/// are enqueued (host results: once all are done).
///
/// The work splits along the first axis in proportion to each device's share (by default its
/// peak memory bandwidth, since the kernels are bandwidth-bound; [`Gpus::with_shares`] sets them).
/// Copies between devices go peer to peer where the driver allows it (NVLink or PCIe peer
/// access, enabled at creation), else the driver stages them through host memory.
///
/// ```no_run
/// use gpuprims::{Border, Gpus};
/// let gpus = Gpus::all()?;                                  // every device of the host
/// let stack = ndarray::Array3::<u8>::zeros((16, 1024, 1024));
/// let dilated = gpus.dilate(&stack, (3, 3), Border::Reflect)?; // planes split across devices
/// # Ok::<(), gpuprims::Error>(())
/// ```
pub struct Gpus {
    gpus: Vec<Gpu>,
    shares: Vec<f64>,
    /// `peer[i][j]`: device `j`'s memory is reachable from device `i`'s context.
    peer: Vec<Vec<bool>>,
    /// Identity of this set: a [`Sharded`] remembers the set that made it.
    id: u64,
    /// Each device's pinned staging buffers for host transfers, allocated on first use.
    staging: Vec<std::sync::Mutex<Option<staging::Staging>>>,
}

impl std::fmt::Debug for Gpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpus")
            .field("devices", &self.ordinals())
            .field("shares", &self.shares)
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

static NEXT_SET: AtomicU64 = AtomicU64::new(1);

impl Gpus {
    /// Every device of the host, in ordinal order. [`Error::NoDevice`] when none answers.
    pub fn all() -> Result<Gpus> {
        let ordinals: Vec<usize> = (0..device_count()?).collect();
        Gpus::new(&ordinals)
    }

    /// The devices `ordinals` (distinct, at least one). A missing device is [`Error::NoDevice`]
    /// naming it.
    pub fn new(ordinals: &[usize]) -> Result<Gpus> {
        if let Some((i, &o)) = ordinals.iter().enumerate().find(|&(i, o)| ordinals[..i].contains(o)) {
            return Err(Error::InvalidArgument {
                name: "ordinals",
                reason: format!("device {o} is listed twice (position {i} of {ordinals:?})"),
            });
        }
        let gpus = ordinals
            .iter()
            .map(|&o| Gpu::with_device(o))
            .collect::<Result<Vec<_>>>()?;
        Gpus::from_gpus(gpus)
    }

    /// A set of already open handles, their streams the set's. Handles on one device (forked
    /// streams) make a set too: the work splits and the seams are exchanged as across devices,
    /// without the speed-up — how the tests check the split on one GPU.
    pub fn from_gpus(gpus: Vec<Gpu>) -> Result<Gpus> {
        if gpus.is_empty() {
            return Err(Error::NoDevice {
                reason: "a device set needs at least one device, none was given".into(),
            });
        }
        let shares = gpus.iter().map(bandwidth_share).collect::<Result<Vec<_>>>()?;
        let peer = enable_peer_access(&gpus)?;
        Ok(Gpus {
            staging: gpus.iter().map(|_| Default::default()).collect(),
            gpus,
            shares,
            peer,
            id: NEXT_SET.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// The same set with each device's share of the work set to `shares` (positive, one per
    /// device; only their ratios matter), e.g. from measured throughputs.
    pub fn with_shares(mut self, shares: &[f64]) -> Result<Gpus> {
        if shares.len() != self.gpus.len() || !shares.iter().all(|s| s.is_finite() && *s > 0.0) {
            return Err(Error::InvalidArgument {
                name: "shares",
                reason: format!("need {} positive finite shares, got {shares:?}", self.gpus.len()),
            });
        }
        self.shares = shares.to_vec();
        Ok(self)
    }

    /// Number of devices.
    pub fn len(&self) -> usize {
        self.gpus.len()
    }

    /// Always false: a set holds at least one device.
    pub fn is_empty(&self) -> bool {
        self.gpus.is_empty()
    }

    /// The devices' handles, in the set's order.
    pub fn devices(&self) -> &[Gpu] {
        &self.gpus
    }

    /// The CUDA ordinals of the devices, in the set's order.
    pub fn ordinals(&self) -> Vec<usize> {
        self.gpus.iter().map(|g| g.props().ordinal).collect()
    }

    /// Each device's share of the work (the ratios the splits follow).
    pub fn shares(&self) -> &[f64] {
        &self.shares
    }

    /// Whether copies from device `j` to device `i` (positions in the set) go peer to peer (or
    /// stay on one device).
    pub fn peer_access(&self, i: usize, j: usize) -> bool {
        i == j || self.peer.get(i).and_then(|r| r.get(j)).copied().unwrap_or(false)
    }

    /// Waits for the work enqueued on every device's stream.
    pub fn synchronize(&self) -> Result<()> {
        self.each(|_, g| g.synchronize())
    }

    /// How [`Gpus::scatter`] splits `n` rows: one contiguous run per device (its position in the
    /// set), in the set's order, sized by the shares (largest remainders get the leftover rows);
    /// devices whose run is empty are left out (an empty axis is one empty run on the first
    /// device, so an array always has a part).
    pub fn split(&self, n: usize) -> Vec<(usize, Range<usize>)> {
        if n == 0 {
            return vec![(0, 0..0)];
        }
        let total: f64 = self.shares.iter().sum();
        let ideal: Vec<f64> = self.shares.iter().map(|s| s / total * n as f64).collect();
        let mut counts: Vec<usize> = ideal.iter().map(|x| x.floor() as usize).collect();
        let mut left = n - counts.iter().sum::<usize>();
        let mut order: Vec<usize> = (0..counts.len()).collect();
        order.sort_by(|&a, &b| (ideal[b] - ideal[b].floor()).total_cmp(&(ideal[a] - ideal[a].floor())));
        for &i in order.iter().cycle() {
            if left == 0 {
                break;
            }
            counts[i] += 1;
            left -= 1;
        }
        let mut start = 0;
        let mut parts = Vec::new();
        for (device, count) in counts.into_iter().enumerate() {
            if count > 0 {
                parts.push((device, start..start + count));
            }
            start += count;
        }
        parts
    }

    /// Runs `f` for every device in order, naming the device in its error.
    pub(crate) fn each(&self, mut f: impl FnMut(usize, &Gpu) -> Result<()>) -> Result<()> {
        for (i, g) in self.gpus.iter().enumerate() {
            f(i, g).map_err(|e| on_device(g, e))?;
        }
        Ok(())
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}

/// `e` as it happened on `gpu`'s device: a failure of the device (a driver error, a kernel that
/// would not load) names it; an error of the input (argument, shape, window) stays as it is, the
/// same on every device.
pub(crate) fn on_device(gpu: &Gpu, e: Error) -> Error {
    match e {
        e @ (Error::Driver(_) | Error::KernelLoad { .. } | Error::NoDevice { .. } | Error::ForeignContext { .. }) => {
            Error::OnDevice {
                device: gpu.props().ordinal,
                source: Box::new(e),
            }
        }
        e => e,
    }
}

/// A device's default share: its peak memory bandwidth (memory clock × bus width), or its SM
/// count where the driver reports no memory clock.
fn bandwidth_share(gpu: &Gpu) -> Result<f64> {
    use sys::CUdevice_attribute as A;
    let ctx = gpu.context();
    let clock = ctx.attribute(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?;
    let bus = ctx.attribute(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?;
    Ok(if clock > 0 && bus > 0 {
        clock as f64 * bus as f64
    } else {
        gpu.props().sm_count.max(1) as f64
    })
}

/// Enables peer access between every pair of devices that supports it; returns the matrix.
fn enable_peer_access(gpus: &[Gpu]) -> Result<Vec<Vec<bool>>> {
    let mut peer = vec![vec![false; gpus.len()]; gpus.len()];
    for (i, gi) in gpus.iter().enumerate() {
        for (j, gj) in gpus.iter().enumerate() {
            if gi.context().cu_ctx() == gj.context().cu_ctx() {
                peer[i][j] = true;
                continue;
            }
            let mut can = 0;
            // SAFETY: both device handles come from live contexts' ordinals.
            unsafe {
                sys::cuDeviceCanAccessPeer(&mut can, gi.context().cu_device(), gj.context().cu_device()).result()?
            };
            if can == 0 {
                continue;
            }
            gi.context().bind_to_thread()?;
            // SAFETY: `gj`'s context is live; enabling twice reports ALREADY_ENABLED, which is fine.
            match unsafe { sys::cuCtxEnablePeerAccess(gj.context().cu_ctx(), 0) }.result() {
                Ok(()) => {}
                Err(e) if e.0 == sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
                Err(e) => return Err(on_device(gi, e.into())),
            }
            pool_access(gi, gj).map_err(|e| on_device(gj, e))?;
            peer[i][j] = true;
        }
    }
    Ok(peer)
}

/// Lets `reader`'s device read and write the allocations of `owner`'s default memory pool, where
/// every op's outputs live: peer access of contexts does not cover pool memory, and without this
/// a peer copy from it is staged through the host (a 15-row seam of a 32768-wide image took
/// ~120 µs instead of a few).
fn pool_access(reader: &Gpu, owner: &Gpu) -> Result<()> {
    let Some(pool) = default_pool(owner.context()) else {
        return Ok(()); // no memory pools: allocations are plain, covered by peer access
    };
    let desc = sys::CUmemAccessDesc {
        location: sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: reader.context().cu_device(),
        },
        flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    // SAFETY: one access descriptor for a live pool and device.
    unsafe { sys::cuMemPoolSetAccess(pool, &desc, 1) }.result()?;
    Ok(())
}
