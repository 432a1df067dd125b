//! Measurement plumbing shared by the examples and the benchmark: seeded inputs, rotating input
//! copies (so inputs that fit in L2 are not timed from the cache), the copy-bandwidth ceiling,
//! the table printer; each family's workloads and ladder runner in its own file. Times are
//! CUDA-event medians (see `Gpu::time_launches`).
// Every example and the bench include this module and use the families they measure.
#![allow(dead_code, unused_imports)]

use std::time::Instant;

use cudarc::driver::{CudaSlice, DeviceRepr};
use gpuprims::abi::pool::PoolValue;
use gpuprims::abi::reduce::SumSq;
use gpuprims::abi::window::{Acc, Sums};
use gpuprims::cpu::conv1d::{self as cpu1d, Real};
use gpuprims::cpu::pool as cpupool;
use gpuprims::cpu::reduce as cpu;
use gpuprims::cpu::window::{self as cpuw, OracleElement};
use gpuprims::{
    Border, BoxPlan, BoxVariant, Conv1dElement, Conv1dPlan, Conv1dVariant, Filter1d, Filter2dPlan, Gpu, PoolElement,
    PoolPlan, PoolShape, PoolVariant, ReducePlan, ReduceVariant, Result, WindowElement, WindowFloat, WindowPlan,
    WindowVariant,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

mod conv1d;
mod filter2d;
mod pool;
mod reduce;
mod window;

pub use conv1d::*;
pub use filter2d::*;
pub use pool::*;
pub use reduce::*;
pub use window::*;

/// `--quick` on the command line: small sizes, for compute-sanitizer runs.
pub fn quick() -> bool {
    std::env::args().any(|a| a == "--quick")
}

/// The tutorial's input: `n` random ints with |x| ≤ 46340 (so x² < 2^31, as in the vendor peers).
pub fn tutorial_ints(n: usize, seed: u64) -> Vec<i32> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| r.random_range(-46_340..=46_340)).collect()
}

/// Measures the device-to-device copy bandwidth (1 GiB, 20 runs; 16 MiB, 3 runs with `quick`),
/// prints it with the device line, and returns it in GB/s (read + write).
pub fn copy_bandwidth(gpu: &Gpu, quick: bool) -> Result<f64> {
    let p = gpu.props();
    let bytes = if quick { 16 << 20 } else { 1 << 30 };
    let copy = gpu.copy_bandwidth_gbps(bytes, if quick { 3 } else { 20 })?;
    println!(
        "device: {} (sm_{}{}, {} SMs); kernels: the sm_{} build{}; copy bandwidth {copy:.0} GB/s \
         (read + write, {} MiB d2d)",
        p.name,
        p.compute_capability.0,
        p.compute_capability.1,
        p.sm_count,
        gpu.kernel_arch(),
        match gpuprims::kernels::sass_archs() {
            [] => String::new(),
            archs => format!(" (SASS for {archs:?} embedded)"),
        },
        bytes >> 20
    );
    Ok(copy)
}

/// Opens the GPU and measures the copy bandwidth (printed with the device line), or says why
/// there is no GPU and returns `None` (the examples then print CPU timings only).
pub fn gpu_with_copy(quick: bool) -> Result<Option<(Gpu, f64)>> {
    match Gpu::new() {
        Ok(gpu) => {
            let copy = copy_bandwidth(&gpu, quick)?;
            Ok(Some((gpu, copy)))
        }
        Err(e) => {
            println!("no GPU ({e}); CPU reference timings only:");
            Ok(None)
        }
    }
}

/// Ends an example: prints the tutorial's own figures, and exits with status 1 if a check failed.
pub fn finish(tutorial: &str, failed: bool) {
    println!("\n{tutorial}");
    if failed {
        eprintln!("FAIL: a variant disagreed with the CPU reference");
        std::process::exit(1);
    }
}

/// Median wall time of `f` over `runs` calls, in microseconds, after one untimed warm-up call
/// when `runs > 1`. A single run (the baselines of inputs past 16 Mi elements, each pass a
/// second or more of memory-bound work, allocating its output each time) is timed without one:
/// a warm-up would double the reference's cost for no steadier number.
pub fn cpu_time_us<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let runs = runs.max(1);
    let (first_us, mut out) = {
        let t = Instant::now();
        let out = std::hint::black_box(f());
        (t.elapsed().as_secs_f64() * 1e6, out)
    };
    if runs == 1 {
        return (first_us, out);
    }
    let mut us: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            out = std::hint::black_box(f());
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    us.sort_by(f64::total_cmp);
    (us[us.len() / 2], out)
}

/// One measured row of a ladder table.
#[derive(Clone, Debug)]
pub struct Row {
    pub family: &'static str,
    pub variant: String,
    pub n: usize,
    /// Median kernel time (µs).
    pub median_us: f64,
    pub bytes: f64,
    pub copy_gbps: f64,
    /// Result equal to the CPU reference.
    pub ok: bool,
    pub note: String,
}

impl Row {
    pub fn gbps(&self) -> f64 {
        self.bytes / (self.median_us * 1e3)
    }
    pub fn pct_copy(&self) -> f64 {
        100.0 * self.gbps() / self.copy_gbps
    }
}

/// Device copies of one input, enough to exceed twice the L2 (at most 16): timed runs rotate
/// through them so a small input is read from DRAM, not from the cache.
pub fn rotating_copies<T: cudarc::driver::DeviceRepr + Clone>(
    gpu: &Gpu,
    host: &[T],
) -> Result<Vec<cudarc::driver::CudaSlice<T>>> {
    let bytes = std::mem::size_of_val(host).max(1);
    let k = (2 * gpu.props().l2_bytes as usize).div_ceil(bytes).clamp(1, 16);
    (0..k).map(|_| Ok(gpu.stream().clone_htod(host)?)).collect()
}

/// Number of timed runs for a kernel whose first run took `probe_us`: about 300 ms of GPU time,
/// 3 ..= `max` runs.
pub fn runs_for(probe_us: f64, max: usize) -> usize {
    ((300e3 / probe_us) as usize).clamp(3, max)
}

/// Prints a ladder table: time, GB/s, % of copy bandwidth, speedups, check.
pub fn print_table(title: &str, rows: &[Row], cpu_serial_us: f64, cpu_rayon_us: f64) {
    println!("\n### {title}");
    println!("| step | median µs | GB/s | % copy BW | × prev | × CPU serial | × CPU rayon | check | note |");
    println!("|---|---:|---:|---:|---:|---:|---:|---|---|");
    let mut prev: Option<f64> = None;
    for r in rows {
        let us = r.median_us;
        let x_prev = prev.map_or("–".into(), |p| format!("{:.2}", p / us));
        let times = |cpu: f64| {
            if cpu.is_nan() {
                "–".to_string()
            } else {
                format!("{:.1}", cpu / us)
            }
        };
        println!(
            "| {} | {:.2} | {:.1} | {:.1}% | {} | {} | {} | {} | {} |",
            r.variant,
            us,
            r.gbps(),
            r.pct_copy(),
            x_prev,
            times(cpu_serial_us),
            times(cpu_rayon_us),
            if r.ok { "PASS" } else { "FAIL" },
            r.note
        );
        prev = Some(us);
    }
    if cpu_rayon_us.is_nan() {
        println!("CPU serial {cpu_serial_us:.1} µs");
    } else {
        println!(
            "CPU serial {cpu_serial_us:.1} µs, CPU rayon ({} threads) {cpu_rayon_us:.1} µs",
            rayon::current_num_threads()
        );
    }
}

/// A ladder row's name: the variant asked for, and the one `Auto` chose.
pub fn plan_label(asked: &str, ran: &str) -> String {
    if asked == ran {
        asked.into()
    } else {
        format!("{asked} ({ran})")
    }
}
