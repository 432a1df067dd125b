//! Measurement plumbing shared by the examples and the benchmark: seeded inputs, rotating input
//! copies (so inputs that fit in L2 are not timed from the cache), the reduction ladder runner and
//! the table printer. Times are CUDA-event medians (see `Gpu::time_launches`).
#![allow(dead_code)]

use std::time::Instant;

use gpuprims::abi::reduce::SumSq;
use gpuprims::cpu::conv1d::{self as cpu1d, Real};
use gpuprims::cpu::reduce as cpu;
use gpuprims::ops::reduce::ReduceLaunch;
use gpuprims::{Border, Conv1dElement, Conv1dPlan, Conv1dVariant, Filter1d, Gpu, ReducePolicy, ReduceVariant, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

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
        "device: {} (sm_{}{}, {} SMs); copy bandwidth {copy:.0} GB/s (read + write, {} MiB d2d)",
        p.name,
        p.compute_capability.0,
        p.compute_capability.1,
        p.sm_count,
        bytes >> 20
    );
    Ok(copy)
}

/// Median wall time of `f` over `runs` calls, in microseconds.
pub fn cpu_time_us<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut out = f();
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

/// Times every variant of the sum-of-squares ladder on `host` (i32 → exact u128), checks each
/// result against `want`, and returns one row per variant.
pub fn sumsq_ladder(gpu: &Gpu, host: &[i32], want: u128, copy_gbps: f64) -> Result<Vec<Row>> {
    let inputs = rotating_copies(gpu, host)?;
    let n = host.len();
    let mut rows = Vec::new();
    for variant in ReduceVariant::ALL {
        let launch = ReduceLaunch::<SumSq<i32>>::new(gpu, n, variant, ReducePolicy::default())?;
        // A first timed run sizes the rest (≈ 300 ms of GPU time, 3..=200 runs); a variant that
        // takes over a second (step 1 on 2^28 ints) is reported from that single run.
        let probe = gpu.time_launches(0, 1, |_| launch.poison(gpu), |_| launch.enqueue(gpu, &inputs[0]))?;
        let (t, runs) = if probe.median_us > 1e6 {
            (probe, 1)
        } else {
            let runs = ((300e3 / probe.median_us) as usize).clamp(3, 200);
            let t = gpu.time_launches(
                3,
                runs,
                |_| launch.poison(gpu),
                |i| launch.enqueue(gpu, &inputs[i % inputs.len()]),
            )?;
            (t, runs)
        };
        // The vendor peers time one buffer over and over; where ours rotate (input < 2 × L2),
        // also time that L2-warm case for a like-for-like comparison.
        let mut note = format!("{runs} runs, grid {}", launch.grid());
        if inputs.len() > 1 && variant == ReduceVariant::WarpShuffleVec {
            let warm = gpu.time_launches(3, runs, |_| Ok(()), |_| launch.enqueue(gpu, &inputs[0]))?;
            note += &format!("; one buffer (L2-warm): {:.2} µs", warm.median_us);
        }
        // Correctness on input 0, after poisoning.
        launch.poison(gpu)?;
        launch.enqueue(gpu, &inputs[0])?;
        let got = launch.result(gpu)?.to_u128();
        rows.push(Row {
            family: "sum_of_squares i32→u128",
            variant: variant.name().into(),
            n,
            median_us: t.median_us,
            bytes: 4.0 * n as f64,
            copy_gbps,
            ok: got == want,
            note,
        });
    }
    Ok(rows)
}

/// CPU baselines: (serial µs, rayon µs), each checked against `want`.
pub fn cpu_baselines(host: &[i32], want: u128) -> (f64, f64) {
    let runs = if host.len() > 1 << 24 { 3 } else { 11 };
    let (serial, s) = cpu_time_us(runs, || cpu::serial_sum_sq_i32(host));
    let (par, p) = cpu_time_us(runs, || cpu::par_sum_sq_i32(host));
    assert_eq!((s, p), (want, want), "CPU baselines disagree with the reference");
    (serial, par)
}

/// Number of timed runs for a kernel whose first run took `probe_us`: about 300 ms of GPU time,
/// 3 ..= 200 runs.
fn runs_for(probe_us: f64) -> usize {
    ((300e3 / probe_us) as usize).clamp(3, 200)
}

/// A seeded random signal in [-1, 1).
pub fn random_signal<T: Real>(n: usize, seed: u64) -> Vec<T> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| T::from_f64(r.random_range(-1.0..1.0))).collect()
}

/// A 1D filter workload: `rows` signals of `n` samples, a filter and a border.
pub struct Filter1dWork<'a, T> {
    pub x: &'a [T],
    pub rows: usize,
    pub n: usize,
    pub filter: &'a Filter1d<T>,
    pub border: Border,
}

/// CPU baselines of a 1D filter: (serial µs, rayon µs, serial output).
pub fn conv1d_cpu<T: Conv1dElement>(w: &Filter1dWork<T>) -> (f64, f64, Vec<T>) {
    let runs = if w.x.len() > 1 << 24 { 3 } else { 7 };
    let mut out = vec![T::ZERO; w.x.len()];
    let (taps, anchor) = (w.filter.taps(), w.filter.anchor());
    let (serial, _) = cpu_time_us(runs, || cpu1d::correlate(w.x, w.n, taps, anchor, w.border, &mut out));
    let mut par = vec![T::ZERO; w.x.len()];
    let (rayon, _) = cpu_time_us(runs, || {
        cpu1d::par_correlate(w.x, w.n, taps, anchor, w.border, &mut par)
    });
    assert!(par == out, "rayon and serial CPU filters disagree");
    (serial, rayon, out)
}

/// Whether a GPU output matches the serial CPU one within the documented bound (both sides'
/// rounding: `2 (L + 2) u Σ|t| max(|x|, |cval|)`), NaN equal to NaN.
pub fn conv1d_matches<T: Conv1dElement>(w: &Filter1dWork<T>, got: &[T], want: &[T]) -> bool {
    let u = if size_of::<T>() == 4 {
        2f64.powi(-24)
    } else {
        2f64.powi(-53)
    };
    let taps = w.filter.taps();
    let sum_abs: f64 = taps.iter().map(|t| t.to_f64().abs()).sum();
    let cval = match w.border {
        Border::Constant(v) => v.abs(),
        _ => 0.0,
    };
    let max_x = w.x.iter().fold(cval, |m, v| m.max(v.to_f64().abs()));
    let tol = 2.0 * (taps.len() + 2) as f64 * u * sum_abs * max_x;
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, c)| {
            let (g, c) = (g.to_f64(), c.to_f64());
            g == c || (g.is_nan() && c.is_nan()) || (g - c).abs() <= tol
        })
}

/// Times every 1D filter variant (plus `Auto`'s choice) on `w`: rotating inputs (≥ 2× L2), output
/// poisoned before each run, bytes = input read once + output written once. Each result is
/// checked against `want` (the serial CPU output).
pub fn conv1d_ladder<T: Conv1dElement>(
    gpu: &Gpu,
    w: &Filter1dWork<T>,
    want: &[T],
    family: &'static str,
    copy_gbps: f64,
) -> Result<Vec<Row>> {
    let inputs = rotating_copies(gpu, w.x)?;
    // SAFETY: poisoned before every run; the kernels write every element.
    let mut y = unsafe { gpu.stream().alloc::<T>(w.x.len()) }?;
    let mut rows = Vec::new();
    for variant in Conv1dVariant::ALL {
        let plan = Conv1dPlan::new(gpu, w.rows, w.n, w.filter, w.border, variant)?;
        let probe = gpu.time_launches(1, 1, |_| Ok(()), |_| plan.enqueue(gpu, &inputs[0], &mut y))?;
        let runs = runs_for(probe.median_us);
        let ys = std::cell::RefCell::new(&mut y);
        let t = gpu.time_launches(
            3,
            runs,
            |_| gpu.poison(&mut ys.borrow_mut()),
            |i| plan.enqueue(gpu, &inputs[i % inputs.len()], &mut ys.borrow_mut()),
        )?;
        gpu.poison(&mut y)?;
        plan.enqueue(gpu, &inputs[0], &mut y)?;
        let got = gpu.stream().clone_dtoh(&y)?;
        rows.push(Row {
            family,
            variant: variant.name().into(),
            n: w.x.len(),
            median_us: t.median_us,
            bytes: 2.0 * std::mem::size_of_val(w.x) as f64,
            copy_gbps,
            ok: conv1d_matches(w, &got, want),
            note: format!("{runs} runs, {} inputs, grid {}", inputs.len(), plan.grid()),
        });
    }
    Ok(rows)
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
        println!(
            "| {} | {:.2} | {:.1} | {:.1}% | {} | {:.1} | {:.1} | {} | {} |",
            r.variant,
            us,
            r.gbps(),
            r.pct_copy(),
            x_prev,
            cpu_serial_us / us,
            cpu_rayon_us / us,
            if r.ok { "PASS" } else { "FAIL" },
            r.note
        );
        prev = Some(us);
    }
    println!(
        "CPU serial {cpu_serial_us:.1} µs, CPU rayon ({} threads) {cpu_rayon_us:.1} µs",
        rayon::current_num_threads()
    );
}
