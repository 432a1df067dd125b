//! Launch-floor probes (`abi::probe`): the cheapest kernel there is, and the cheapest that reads
//! memory (one block, one 16-byte read-only load per thread, one store per thread so the load is
//! not optimized away), and the stream hold that keeps the host's launch latency out of kernel
//! timings.

use crate::device::{global_timer_ns, load_nc_v4, thread_idx};

/// Does nothing: its launch-to-completion time is the launch floor.
#[unsafe(export_name = crate::probe_empty_name!())]
pub extern "ptx-kernel" fn probe_empty() {}

/// One block of `PROBE_THREADS`: thread `t` reads 16 bytes at `x + 16 t` and writes their
/// wrapping sum to `out[t]`.
///
/// # Safety
/// `x` holds `PROBE_BYTES` 16-byte-aligned bytes; `out` holds `PROBE_THREADS` `u32`s.
#[unsafe(export_name = crate::probe_read_name!())]
pub unsafe extern "ptx-kernel" fn probe_read_4k(x: *const [u32; 4], out: *mut u32) {
    let t = thread_idx() as usize;
    // SAFETY: t < PROBE_THREADS; the caller sizes both buffers.
    unsafe {
        let [a, b, c, d] = load_nc_v4(x.add(t));
        out.add(t).write(a.wrapping_add(b).wrapping_add(c).wrapping_add(d));
    }
}

/// Spins one thread for `ns` nanoseconds of the GPU's global timer. Enqueued before a timed
/// region, it keeps the stream busy while the host enqueues the region's start event, launch and
/// end event, so the events measure the GPU's time only (the method of nvbench's blocking kernel,
/// with a timer instead of a host flag).
#[unsafe(export_name = crate::probe_hold_name!())]
pub extern "ptx-kernel" fn probe_hold(ns: u64) {
    let start = global_timer_ns();
    while global_timer_ns().wrapping_sub(start) < ns {}
}
