//! CUDA-event timing: warm-up, then many launches each between two events with no host sync in the
//! loop, median reported. Used by the examples and the benchmark (never by unit tests).
//!
//! **What is timed: the GPU's time.** Before each run's start event the stream is *held*: one
//! thread spins for a known time (`probe_hold`) while the host enqueues the start event, the
//! launch and the end event. When the GPU reaches the start event, the launch is already queued
//! behind it, so the events measure the GPU's work (its launch processing included) and not the
//! host's API latency — nvbench's "cold GPU time", with a timer in place of its host flag. The
//! hold is sized from the warm-up enqueue times and doubled until every run's enqueue finished
//! well inside it. The host waits for each run's end event before enqueueing the next run, so
//! no later work sits in the queue while a run is timed (queued work behind the end event added
//! ~0.7 µs to short kernels). [`TimedAs::WithHostLatency`] times the other way (events around the
//! host's enqueue, the GPU idle meanwhile), which is what one isolated op call costs;
//! [`Gpu::launch_floor`] reports both for an empty kernel.

use std::time::{Duration, Instant};

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::abi::probe::{PROBE_BYTES, PROBE_THREADS};
use crate::error::Result;
use crate::family::Family;
use crate::gpu::Gpu;
use crate::kernels::{KernelId, Resolver};

/// Kernel times of one measured configuration.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Median over the timed runs, in microseconds.
    pub median_us: f64,
    /// Fastest timed run, in microseconds.
    pub min_us: f64,
    /// Number of timed runs.
    pub runs: usize,
}

impl Timing {
    /// Throughput in GB/s (10^9 bytes per second) for `bytes` moved per run, at the median.
    pub fn gbps(&self, bytes: f64) -> f64 {
        bytes / (self.median_us * 1e3)
    }
}

/// What a timing measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimedAs {
    /// The GPU's time: the stream is held while the host enqueues the timed region.
    GpuTime,
    /// With the host's launch latency: the start event is recorded while the GPU idles (the cost
    /// of one isolated call).
    WithHostLatency,
}

/// The shortest and longest stream hold (a hold longer than the cap means the host was blocked
/// by a full launch queue, which only happens while the GPU is busy anyway).
const HOLD_MIN: Duration = Duration::from_micros(20);
const HOLD_MAX: Duration = Duration::from_millis(2);

impl Gpu {
    /// Times `launch(run)` after `warmup` untimed calls, as the GPU's time (see the module docs):
    /// [`Gpu::time_launches_as`] with [`TimedAs::GpuTime`].
    pub fn time_launches(
        &self,
        warmup: usize,
        runs: usize,
        prepare: impl FnMut(usize) -> Result<()>,
        launch: impl FnMut(usize) -> Result<()>,
    ) -> Result<Timing> {
        self.time_launches_as(TimedAs::GpuTime, warmup, runs, prepare, launch)
    }

    /// Times `launch(run)` after `warmup` untimed calls. Before each run, `prepare(run)` enqueues
    /// untimed work (poison the output, …); then (for [`TimedAs::GpuTime`]) the stream is held,
    /// and the launch is enqueued between two events. The host waits for each run's end event
    /// before the next run.
    pub fn time_launches_as(
        &self,
        timed_as: TimedAs,
        warmup: usize,
        runs: usize,
        mut prepare: impl FnMut(usize) -> Result<()>,
        mut launch: impl FnMut(usize) -> Result<()>,
    ) -> Result<Timing> {
        let runs = runs.max(1);
        let mut slowest_enqueue = Duration::ZERO;
        for i in 0..warmup {
            prepare(i)?;
            let t = Instant::now();
            launch(i)?;
            slowest_enqueue = slowest_enqueue.max(t.elapsed());
        }
        let held = timed_as == TimedAs::GpuTime;
        let mut hold = (4 * slowest_enqueue).clamp(HOLD_MIN, HOLD_MAX);
        let ctx = self.context();
        loop {
            let mut events = Vec::with_capacity(runs);
            let mut late = false;
            for i in 0..runs {
                prepare(warmup + i)?;
                let start = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
                let end = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
                let t = Instant::now();
                if held {
                    self.hold_stream(hold)?;
                }
                start.record(self.stream())?;
                launch(warmup + i)?;
                end.record(self.stream())?;
                // The hold began no earlier than its enqueue: if the enqueue of the whole region
                // took well under the hold, the GPU could not reach the start event first.
                late |= held && t.elapsed() * 4 > hold * 3;
                // Each run ends before the next is enqueued: with the next run's hold and events
                // already queued behind it, an empty kernel read 3.87 µs instead of 3.14 µs on
                // the H100 (CUDA C, same events).
                end.synchronize()?;
                events.push((start, end));
            }
            self.synchronize()?;
            if late && hold < HOLD_MAX {
                hold = (hold * 2).min(HOLD_MAX);
                continue;
            }
            let mut us = events
                .iter()
                .map(|(s, e)| s.elapsed_ms(e).map(|ms| ms as f64 * 1e3))
                .collect::<Result<Vec<f64>, _>>()?;
            us.sort_by(f64::total_cmp);
            return Ok(Timing {
                median_us: median_sorted(&us),
                min_us: us[0],
                runs,
            });
        }
    }

    /// Enqueues the hold probe: one thread spinning for `hold` of GPU time.
    fn hold_stream(&self, hold: Duration) -> Result<()> {
        let hold_probe = self.kernel(self.family::<ProbeKernels>()?.ids[2])?;
        let ns = hold.as_nanos() as u64;
        let mut b = hold_probe.launch_on(self)?;
        b.arg(&ns);
        // SAFETY: `probe_hold(ns: u64)`, one thread, no memory accessed.
        unsafe { b.launch(LaunchConfig::for_num_elems(1)) }?;
        Ok(())
    }

    /// Device-to-device copy bandwidth in GB/s over a `bytes`-byte buffer, counting bytes read plus
    /// bytes written (the ceiling every memory-bound kernel is compared with, measured in the same
    /// run). Median of `runs` copies after 3 warm-ups.
    pub fn copy_bandwidth_gbps(&self, bytes: usize, runs: usize) -> Result<f64> {
        let words = bytes / 4;
        let src = self.stream().alloc_zeros::<u32>(words)?;
        let mut dst = self.stream().alloc_zeros::<u32>(words)?;
        let t = self.time_launches(3, runs, |_| Ok(()), |_| Ok(self.stream().memcpy_dtod(&src, &mut dst)?))?;
        Ok(t.gbps(2.0 * (words * 4) as f64))
    }
}

/// The launch floor of a device: below these times a kernel is launch-bound, whatever it does.
#[derive(Clone, Copy, Debug)]
pub struct LaunchFloor {
    /// An empty kernel, GPU time ([`Gpu::time_launches`]), median µs.
    pub empty_us: f64,
    /// One block of 256 threads reading 4 KB (16 bytes each) and writing 1 KB, GPU time, median µs.
    pub read_4k_us: f64,
    /// An empty kernel with the host's launch latency inside the events
    /// ([`TimedAs::WithHostLatency`]), median µs: one isolated call's floor.
    pub empty_with_host_us: f64,
}

/// The launch-floor probes (`kernels-gpu/src/probe.rs`), a registry entry like a family.
pub(crate) struct ProbeKernels {
    /// Empty, read, hold (`PROBE_NAMES` order).
    ids: [KernelId; 3],
}

const PROBE_NAMES: [&str; 3] = [
    crate::probe_empty_name!(),
    crate::probe_read_name!(),
    crate::probe_hold_name!(),
];

impl Family for ProbeKernels {
    fn load(k: &mut Resolver) -> Result<Self> {
        Ok(ProbeKernels {
            ids: k.all(PROBE_NAMES)?,
        })
    }
}

impl Gpu {
    /// Measures the launch floor: median of `runs` timed launches of each probe after 10
    /// warm-ups (the read probe rotates over 64 buffers so it reads from DRAM, not from L1), as GPU
    /// time and, for the empty kernel, also with the host's launch latency.
    pub fn launch_floor(&self, runs: usize) -> Result<LaunchFloor> {
        let [empty_probe, read_probe, _] = self.kernels(self.family::<ProbeKernels>()?.ids)?;
        let stream = self.stream();
        let one = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the empty probe takes no arguments.
        let launch_empty = |_| Ok(unsafe { stream.launch_builder(empty_probe.function()).launch(one) }.map(|_| ())?);
        let empty = self.time_launches(10, runs, |_| Ok(()), launch_empty)?;
        let empty_with_host = self.time_launches_as(TimedAs::WithHostLatency, 10, runs, |_| Ok(()), launch_empty)?;
        let words = PROBE_BYTES / 4;
        let inputs = (0..64)
            .map(|i| stream.clone_htod(&(0..words as u32).map(|w| w ^ i).collect::<Vec<u32>>()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut out = stream.alloc_zeros::<u32>(PROBE_THREADS as usize)?;
        let block = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (PROBE_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let read = self.time_launches(
            10,
            runs,
            |_| Ok(()),
            |i| {
                let mut b = read_probe.launch_on(self)?;
                b.arg(&inputs[i % inputs.len()]).arg(&mut out);
                // SAFETY: `(x: *const [u32; 4], out: *mut u32)`; x holds PROBE_BYTES (device
                // allocations are 256-byte aligned), out PROBE_THREADS words; one block of
                // PROBE_THREADS.
                unsafe { b.launch(block) }?;
                Ok(())
            },
        )?;
        Ok(LaunchFloor {
            empty_us: empty.median_us,
            read_4k_us: read.median_us,
            empty_with_host_us: empty_with_host.median_us,
        })
    }
}

/// Median of a sorted, non-empty slice.
pub(crate) fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}
