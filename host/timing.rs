//! CUDA-event timing: warm-up, then many launches each between two events with no host sync in the
//! loop, median reported. Used by the examples and the benchmark (never by unit tests).

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};

use crate::abi::probe::{PROBE_BYTES, PROBE_THREADS};
use crate::error::Result;
use crate::family::Family;
use crate::gpu::Gpu;

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

impl Gpu {
    /// Times `launch(run)` after `warmup` untimed calls. Before each run, `prepare(run)` enqueues
    /// untimed work (poison the output, …); then the launch is enqueued between two events. The
    /// host synchronizes once, after the last run.
    pub fn time_launches(
        &self,
        warmup: usize,
        runs: usize,
        mut prepare: impl FnMut(usize) -> Result<()>,
        mut launch: impl FnMut(usize) -> Result<()>,
    ) -> Result<Timing> {
        let runs = runs.max(1);
        for i in 0..warmup {
            prepare(i)?;
            launch(i)?;
        }
        let ctx = self.context();
        let mut events = Vec::with_capacity(runs);
        for i in 0..runs {
            prepare(warmup + i)?;
            let start = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            let end = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            start.record(self.stream())?;
            launch(warmup + i)?;
            end.record(self.stream())?;
            events.push((start, end));
        }
        self.synchronize()?;
        let mut us = events
            .iter()
            .map(|(s, e)| s.elapsed_ms(e).map(|ms| ms as f64 * 1e3))
            .collect::<Result<Vec<f64>, _>>()?;
        us.sort_by(f64::total_cmp);
        Ok(Timing {
            median_us: median_sorted(&us),
            min_us: us[0],
            runs,
        })
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

/// The launch floor of a device, timed like every kernel (events around each launch, the host's
/// launch path included): below these times a kernel is launch-bound, whatever it does.
#[derive(Clone, Copy, Debug)]
pub struct LaunchFloor {
    /// An empty kernel, median µs.
    pub empty_us: f64,
    /// One block of 256 threads reading 4 KB (16 bytes each) and writing 1 KB, median µs.
    pub read_4k_us: f64,
}

/// The launch-floor probes (`kernels-gpu/src/probe.rs`), a registry entry like a family.
pub(crate) struct ProbeKernels {
    empty: CudaFunction,
    read: CudaFunction,
}

impl Family for ProbeKernels {
    fn load(gpu: &Gpu) -> Result<Self> {
        let [empty, read] =
            crate::kernels::load_functions(gpu.module(), [crate::probe_empty_name!(), crate::probe_read_name!()])?;
        Ok(ProbeKernels { empty, read })
    }

    fn kernel_names() -> Vec<&'static str> {
        vec![crate::probe_empty_name!(), crate::probe_read_name!()]
    }
}

impl Gpu {
    /// Measures the launch floor: median of `runs` timed launches of each probe after 10
    /// warm-ups (the read probe rotates over 64 buffers so it reads from DRAM, not from L1).
    pub fn launch_floor(&self, runs: usize) -> Result<LaunchFloor> {
        let probes = self.family::<ProbeKernels>()?;
        let stream = self.stream();
        let one = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the empty probe takes no arguments.
        let empty = self.time_launches(
            10,
            runs,
            |_| Ok(()),
            |_| Ok(unsafe { stream.launch_builder(&probes.empty).launch(one) }.map(|_| ())?),
        )?;
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
                let mut b = stream.launch_builder(&probes.read);
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
