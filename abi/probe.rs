//! The launch-floor probes: an empty kernel, and one block reading 4 KB; and the stream hold of
//! the timing harness (one thread spinning for a given number of nanoseconds). Timed like every other
//! kernel, they say what "launch-bound" costs on a device, next to the small sizes of each family.

/// Threads of the read probe's one block; each reads one 16-byte vector.
pub const PROBE_THREADS: u32 = 256;

/// Bytes the read probe reads: one 16-byte vector per thread.
pub const PROBE_BYTES: usize = PROBE_THREADS as usize * 16;

/// Symbol of the empty probe.
#[macro_export]
macro_rules! probe_empty_name {
    () => {
        concat!($crate::kernel_prefix!(), "probe_empty")
    };
}

/// Symbol of the one-block 4 KB read probe.
#[macro_export]
macro_rules! probe_read_name {
    () => {
        concat!($crate::kernel_prefix!(), "probe_read_4k")
    };
}

/// Symbol of the stream hold (`probe_hold(ns: u64)`, one thread).
#[macro_export]
macro_rules! probe_hold_name {
    () => {
        concat!($crate::kernel_prefix!(), "probe_hold")
    };
}
