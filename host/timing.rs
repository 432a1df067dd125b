//! CUDA-event timing: warm-up, then many launches each between two events with no host sync in the
//! loop, median reported. Used by the examples and the benchmark (never by unit tests).

use cudarc::driver::sys::CUevent_flags;

use crate::error::Result;
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

/// Median of a sorted, non-empty slice.
pub(crate) fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}
