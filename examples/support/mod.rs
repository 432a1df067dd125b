//! Measurement plumbing shared by the examples and the benchmark: seeded inputs, rotating input
//! copies (so inputs that fit in L2 are not timed from the cache), the reduction ladder runner and
//! the table printer. Times are CUDA-event medians (see `Gpu::time_launches`).
#![allow(dead_code)]

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
        let launch = ReducePlan::<SumSq<i32>>::new(gpu, n, variant)?;
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

/// `Auto` on `host` (i32 → exact u128): two rows, the GPU's time and the time with the host's
/// launch latency inside the events (one isolated call), each checked against `want`.
pub fn sumsq_auto(gpu: &Gpu, host: &[i32], want: u128, copy_gbps: f64) -> Result<Vec<Row>> {
    let inputs = rotating_copies(gpu, host)?;
    let n = host.len();
    let launch = ReducePlan::<SumSq<i32>>::new(gpu, n, ReduceVariant::Auto)?;
    let probe = gpu.time_launches(1, 1, |_| launch.poison(gpu), |_| launch.enqueue(gpu, &inputs[0]))?;
    let runs = runs_for(probe.median_us);
    let prepare = |_| launch.poison(gpu);
    let run = |i: usize| launch.enqueue(gpu, &inputs[i % inputs.len()]);
    let held = gpu.time_launches(3, runs, prepare, run)?;
    let with_host = gpu.time_launches_as(gpuprims::TimedAs::WithHostLatency, 3, runs, prepare, run)?;
    launch.poison(gpu)?;
    launch.enqueue(gpu, &inputs[0])?;
    let ok = launch.result(gpu)?.to_u128() == want;
    let row = |variant: &str, t: gpuprims::Timing| Row {
        family: "sum_of_squares i32→u128",
        variant: variant.into(),
        n,
        median_us: t.median_us,
        bytes: 4.0 * n as f64,
        copy_gbps,
        ok,
        note: format!("{runs} runs, grid {}", launch.grid()),
    };
    Ok(vec![
        row("auto (GPU time)", held),
        row("auto + host launch latency", with_host),
    ])
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
    for variant in Conv1dVariant::ALL.into_iter().chain([Conv1dVariant::Auto]) {
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
        let name = match variant {
            Conv1dVariant::Auto => format!("auto ({})", plan.variant().name()),
            v => v.name().into(),
        };
        rows.push(Row {
            family,
            variant: name,
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

/// A row-window workload: `rows` rows of `n` samples, window `width`, border.
pub struct WindowWork<'a, T> {
    pub x: &'a [T],
    pub rows: usize,
    pub n: usize,
    pub width: usize,
    pub border: Border,
}

/// The tutorial's image: `rows × n` random pixel values 0..=255 in `T`.
pub fn image<T: TryFrom<u8>>(len: usize, seed: u64) -> Vec<T> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..len)
        .map(|_| T::try_from(r.random::<u8>()).ok().expect("every type holds 0..=255"))
        .collect()
}

/// The exact window sums of `w` rounded once to f32 pairs (rayon CPU, untimed).
pub fn window_want<T: OracleElement>(w: &WindowWork<T>) -> Vec<(f32, f32)>
where
    Sums<T::S, T::Q>: Send,
{
    cpuw::par_window_sums(w.x, w.n, w.width, w.border)
        .iter()
        .map(|v| (v.s.to_f64() as f32, v.q.to_f64() as f32))
        .collect()
}

/// CPU baselines of window sums: (serial µs, rayon µs, the exact sums as f32 pairs).
pub fn window_cpu<T: OracleElement>(w: &WindowWork<T>) -> (f64, f64, Vec<(f32, f32)>)
where
    Sums<T::S, T::Q>: Send,
{
    let runs = if w.x.len() > 1 << 24 { 3 } else { 7 };
    let (serial, exact) = cpu_time_us(runs, || cpuw::window_sums(w.x, w.n, w.width, w.border));
    let (rayon, par) = cpu_time_us(runs, || cpuw::par_window_sums(w.x, w.n, w.width, w.border));
    assert!(par == exact, "rayon and serial CPU window sums disagree");
    let as_f32 = exact
        .iter()
        .map(|v| (v.s.to_f64() as f32, v.q.to_f64() as f32))
        .collect();
    (serial, rayon, as_f32)
}

/// Times every row-window variant (f32 outputs) on `w`: rotating inputs, both outputs poisoned
/// before each run, bytes = input read once + both outputs written once. Each result is checked
/// bit for bit against `want` (the exact sums rounded once to f32; exact for pixel values, whose
/// sums stay below 2^24 up to width 258).
pub fn window_ladder<T: WindowElement>(
    gpu: &Gpu,
    w: &WindowWork<T>,
    want: &[(f32, f32)],
    family: &'static str,
    copy_gbps: f64,
    variants: &[WindowVariant],
) -> Result<Vec<Row>>
where
    f32: WindowFloat<T>,
{
    let inputs = rotating_copies(gpu, w.x)?;
    let len = w.x.len();
    // SAFETY: poisoned before every run; the kernels write every element.
    let (mut s, mut q) = unsafe { (gpu.stream().alloc::<f32>(len)?, gpu.stream().alloc::<f32>(len)?) };
    let mut rows = Vec::new();
    for &variant in variants {
        let plan = match WindowPlan::<T, f32, f32>::new(gpu, (w.rows, w.n), w.width, w.border, variant) {
            Ok(p) => p,
            Err(e @ gpuprims::Error::WindowTooLarge { .. }) => {
                println!("({}: {e})", variant.name());
                continue;
            }
            Err(e) => return Err(e),
        };
        let outs = std::cell::RefCell::new((&mut s, &mut q));
        let probe = gpu.time_launches(
            1,
            1,
            |_| Ok(()),
            |_| {
                let (s, q) = &mut *outs.borrow_mut();
                plan.enqueue(gpu, &inputs[0], s, q)
            },
        )?;
        let runs = runs_for(probe.median_us);
        let t = gpu.time_launches(
            2,
            runs,
            |_| {
                let (s, q) = &mut *outs.borrow_mut();
                gpu.poison(s)?;
                gpu.poison(q)
            },
            |i| {
                let (s, q) = &mut *outs.borrow_mut();
                plan.enqueue(gpu, &inputs[i % inputs.len()], s, q)
            },
        )?;
        gpu.poison(&mut s)?;
        gpu.poison(&mut q)?;
        plan.enqueue(gpu, &inputs[0], &mut s, &mut q)?;
        let (gs, gq) = (gpu.stream().clone_dtoh(&s)?, gpu.stream().clone_dtoh(&q)?);
        let ok = gs.len() == want.len()
            && want
                .iter()
                .zip(gs.iter().zip(&gq))
                .all(|(&(ws, wq), (&a, &b))| a.to_bits() == ws.to_bits() && b.to_bits() == wq.to_bits());
        rows.push(Row {
            family,
            variant: variant.name().into(),
            n: len,
            median_us: t.median_us,
            bytes: (std::mem::size_of_val(w.x) + 8 * len) as f64,
            copy_gbps,
            ok,
            note: format!("{runs} runs, {} inputs, grid {}", inputs.len(), plan.grid()),
        });
    }
    Ok(rows)
}

/// CPU baselines of the local mean and variance of `(h, w)` boxes over one plane: (serial µs,
/// rayon µs, (mean, variance) as f32 from the exact sums).
pub fn box_cpu<T: OracleElement>(
    x: &[T],
    width: usize,
    window: (usize, usize),
    border: Border,
) -> (f64, f64, Vec<(f32, f32)>)
where
    Sums<T::S, T::Q>: Send + Sync,
{
    let runs = if x.len() > 1 << 24 { 3 } else { 5 };
    let (serial, exact) = cpu_time_us(runs, || cpuw::box_sums(x, width, window, border, false));
    let (rayon, _) = cpu_time_us(runs, || cpuw::box_sums(x, width, window, border, true));
    let n = (window.0 * window.1) as f64;
    let moments = exact
        .iter()
        .map(|v| {
            let (s, q) = (v.s.to_f64(), v.q.to_f64());
            let mean = s / n;
            ((mean) as f32, ((q * n - s * s) / (n * n)).max(0.0) as f32)
        })
        .collect();
    (serial, rayon, moments)
}

/// Times every 2D box variant computing the local mean and variance (two f32 outputs) of one
/// plane; bytes = input once + both outputs once. Checked against `want` within 2 ulps of f32
/// (the kernels round the exact variance through f64).
pub fn box_ladder<T: WindowElement>(
    gpu: &Gpu,
    x: &[T],
    shape: (usize, usize),
    window: (usize, usize),
    border: Border,
    want: &[(f32, f32)],
    copy_gbps: f64,
) -> Result<Vec<Row>>
where
    f32: WindowFloat<T>,
{
    let inputs = rotating_copies(gpu, x)?;
    let len = x.len();
    // SAFETY: poisoned before every run.
    let (mut m, mut v) = unsafe { (gpu.stream().alloc::<f32>(len)?, gpu.stream().alloc::<f32>(len)?) };
    let mut rows = Vec::new();
    for variant in BoxVariant::ALL.into_iter().chain([BoxVariant::Auto]) {
        // Variants that do not take this box or type (documented refusals) have no row.
        let mut launch = match BoxPlan::<T, f32>::new(gpu, (1, shape.0, shape.1), window, border, variant) {
            Ok(l) => l,
            Err(gpuprims::Error::WindowTooLarge { .. } | gpuprims::Error::Unsupported { .. }) => continue,
            Err(e) => return Err(e),
        };
        let state = std::cell::RefCell::new((&mut launch, &mut m, &mut v));
        let probe = gpu.time_launches(
            1,
            1,
            |_| Ok(()),
            |_| {
                let (l, m, v) = &mut *state.borrow_mut();
                l.enqueue(gpu, &inputs[0], m, v)
            },
        )?;
        let runs = runs_for(probe.median_us);
        let t = gpu.time_launches(
            2,
            runs,
            |_| {
                let (_, m, v) = &mut *state.borrow_mut();
                gpu.poison(m)?;
                gpu.poison(v)
            },
            |i| {
                let (l, m, v) = &mut *state.borrow_mut();
                l.enqueue(gpu, &inputs[i % inputs.len()], m, v)
            },
        )?;
        gpu.poison(&mut m)?;
        gpu.poison(&mut v)?;
        launch.enqueue(gpu, &inputs[0], &mut m, &mut v)?;
        let (gm, gv) = (gpu.stream().clone_dtoh(&m)?, gpu.stream().clone_dtoh(&v)?);
        let close = |a: f32, b: f32| (a - b).abs() <= 2.0 * f32::EPSILON * b.abs().max(f32::MIN_POSITIVE);
        let ok = want
            .iter()
            .zip(gm.iter().zip(&gv))
            .all(|(&(wm, wv), (&a, &b))| close(a, wm) && close(b, wv));
        rows.push(Row {
            family: "local_mean_variance",
            variant: format!("{} ({})", variant.name(), launch.variant().name()),
            n: len,
            median_us: t.median_us,
            bytes: (std::mem::size_of_val(x) + 8 * len) as f64,
            copy_gbps,
            ok,
            note: format!("{runs} runs, {} inputs", inputs.len()),
        });
    }
    Ok(rows)
}

/// A pooling workload: `planes` planes of `h × w` samples in `x`, and the pooling it runs.
pub struct PoolWork<'a, T> {
    pub x: &'a [T],
    pub shape: PoolShape,
}

/// Random pooling input in [−1, 1) (floats) or over the type's range (integers).
pub fn pool_input<T: PoolInputGen>(len: usize, seed: u64) -> Vec<T> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..len).map(|_| T::draw(&mut r)).collect()
}

/// An element type the pooling examples generate.
pub trait PoolInputGen: Sized {
    fn draw(r: &mut ChaCha8Rng) -> Self;
}

impl PoolInputGen for f32 {
    fn draw(r: &mut ChaCha8Rng) -> f32 {
        r.random_range(-1.0..1.0)
    }
}

impl PoolInputGen for u8 {
    fn draw(r: &mut ChaCha8Rng) -> u8 {
        r.random()
    }
}

/// CPU baselines of max pooling (serial oracle, rayon planes) and the expected values.
pub fn max_pool_cpu<T: PoolValue + Send + Sync>(w: &PoolWork<T>) -> (f64, f64, Vec<T>) {
    let s = &w.shape;
    let x = ndarray::ArrayView3::from_shape((s.planes, s.h, s.w), w.x).expect("shape");
    let runs = if w.x.len() > 1 << 24 { 1 } else { 5 };
    let (serial, _) = cpu_time_us(runs, || cpupool::max_pool2d(&x, &s.window).expect("valid"));
    let (rayon, want) = cpu_time_us(runs, || {
        cpupool::par_max_pool2d(w.x, s.planes, s.h, s.w, &s.window).expect("valid")
    });
    (serial, rayon, want)
}

/// Times each of `variants` on `w` (one plan per rotating input copy, so texture objects are made
/// before timing; the constant-input rung copies its input into the bank inside every timed call,
/// as it must), checks each result bit for bit against `want`, and returns one row per variant
/// that can run the workload (the others are printed with their error). `indices`: max pooling
/// also writes its i64 argmax (counted in the bytes).
#[allow(clippy::too_many_arguments)]
pub fn pool_ladder<T: PoolElement + PartialEq>(
    gpu: &Gpu,
    w: &PoolWork<T>,
    want: &[T],
    family: &'static str,
    copy_gbps: f64,
    variants: &[PoolVariant],
    indices: bool,
    plan: impl Fn(PoolVariant) -> Result<PoolPlan<T>>,
) -> Result<Vec<Row>> {
    let inputs = rotating_copies(gpu, w.x)?;
    let outputs = want.len();
    // SAFETY: plain data, poisoned before every run and written in full by every kernel.
    let y = std::cell::RefCell::new(unsafe { gpu.stream().alloc::<T>(outputs.max(1)) }?);
    let idx = std::cell::RefCell::new(if indices {
        Some(unsafe { gpu.stream().alloc::<i64>(outputs.max(1)) }?)
    } else {
        None
    });
    // SAFETY: plain bytes, only ever memset.
    let filler =
        std::cell::RefCell::new(unsafe { gpu.stream().alloc::<u8>(if inputs.len() > 1 { 16 << 20 } else { 1 }) }?);
    let mut rows = Vec::new();
    for &v in variants {
        let plans: Vec<PoolPlan<T>> = match (0..inputs.len()).map(|_| plan(v)).collect::<Result<_>>() {
            Ok(p) => p,
            Err(e) => {
                println!("{family} {}: not run — {e}", v.name());
                continue;
            }
        };
        let mut extra = String::new();
        if plans[0].variant() == PoolVariant::Texture {
            let (create_us, _) = cpu_time_us(20, || {
                plans[0].release_texture();
                plans[0].prepare_texture(gpu, &inputs[0])
            });
            extra = format!("texture object create + destroy {create_us:.1} µs (host)");
        }
        for (p, x) in plans.iter().zip(&inputs) {
            p.prepare_texture(gpu, x)?;
        }
        if plans[0].variant() == PoolVariant::ConstantInput {
            extra = format!("includes the {} B copy into the constant bank", size_of_val(w.x));
        }
        let enqueue = |i: usize| {
            let k = i % inputs.len();
            plans[k].enqueue(gpu, &inputs[k], &mut y.borrow_mut(), idx.borrow_mut().as_mut())
        };
        let poison = |_| gpu.poison(&mut y.borrow_mut());
        let probe = gpu.time_launches(0, 1, poison, enqueue)?;
        let runs = ((300e3 / probe.median_us) as usize).clamp(3, 200);
        let t = gpu.time_launches(3, runs, poison, enqueue)?;
        let mut note = String::new();
        // The vendor peers time one buffer over and over; where ours rotate (input < 2 × L2),
        // also time that L2-warm case for a like-for-like comparison.
        if inputs.len() > 1 {
            let warm = gpu.time_launches(3, runs, poison, |_| enqueue(0))?;
            // A kernel of a few µs finishes before the host has enqueued the next event, so the
            // events above also time the host's launch path. Keeping the GPU busy (a 16 MiB
            // memset, small enough to leave the input in the 50 MiB L2) while the host enqueues
            // leaves the kernel alone between the events.
            let busy = |i| -> Result<()> {
                poison(i)?;
                gpu.poison(&mut filler.borrow_mut())
            };
            let alone = gpu.time_launches(3, runs, busy, |_| enqueue(0))?;
            note = format!(
                "one buffer (L2-warm): {:.2} µs; kernel alone (L2-warm, GPU kept busy while the host enqueues): {:.2} µs",
                warm.median_us, alone.median_us
            );
        }
        poison(0)?;
        enqueue(0)?;
        let got = gpu.stream().clone_dtoh(&*y.borrow())?;
        let ok = got.len() >= outputs && got[..outputs].iter().zip(want).all(|(a, b)| a == b);
        let variant = match (v, plans[0].variant()) {
            (PoolVariant::Auto, r) => format!("auto ({})", r.name()),
            (v, _) => v.name().to_string(),
        };
        note = [format!("{runs} runs"), note, extra]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        rows.push(Row {
            family,
            variant: if indices {
                format!("{variant} + indices")
            } else {
                variant
            },
            n: w.x.len(),
            median_us: t.median_us,
            bytes: (size_of_val(w.x) + outputs * (size_of::<T>() + if indices { 8 } else { 0 })) as f64,
            copy_gbps,
            ok,
            note,
        });
    }
    Ok(rows)
}

/// A ladder row's name: the variant asked for, and the one `Auto` chose.
pub fn plan_label(asked: &str, ran: &str) -> String {
    if asked == ran {
        asked.into()
    } else {
        format!("{asked} ({ran})")
    }
}

/// Times each 2D filter plan on the u8 image `x` (output poisoned before every run), checks its
/// result bit for bit against `want`.
pub fn filter2d_ladder<O: DeviceRepr + Clone + Default + PartialEq>(
    gpu: &Gpu,
    x: &CudaSlice<u8>,
    plans: Vec<(String, Filter2dPlan<u8, O>)>,
    want: &[O],
    bytes_per_pixel: f64,
    copy: f64,
) -> Result<Vec<Row>> {
    // SAFETY: plain data, poisoned before every run and written in full by every plan.
    let y = std::cell::RefCell::new(unsafe { gpu.stream().alloc::<O>(want.len()) }?);
    let mut rows = Vec::new();
    for (name, plan) in plans {
        let poison = |_| gpu.poison(&mut y.borrow_mut());
        let launch = |_| plan.enqueue(gpu, x, &mut y.borrow_mut());
        let probe = gpu.time_launches(1, 1, poison, launch)?;
        let runs = ((300e3 / probe.median_us) as usize).clamp(3, 100);
        let t = gpu.time_launches(3, runs, poison, launch)?;
        poison(0)?;
        launch(0)?;
        let got = gpu.stream().clone_dtoh(&*y.borrow())?;
        rows.push(Row {
            family: "filter2d",
            variant: name,
            n: want.len(),
            median_us: t.median_us,
            bytes: bytes_per_pixel * want.len() as f64,
            copy_gbps: copy,
            ok: got == want,
            note: String::new(),
        });
    }
    Ok(rows)
}

/// CPU baseline and reference of a `(kh, kw)` grey dilation: a column max then a row max
/// (rayon over rows), the window anchored as `grey_dilation`'s, replicate border.
pub fn dilate_cpu(x: &[u8], h: usize, w: usize, (kh, kw): (usize, usize)) -> Vec<u8> {
    let (ay, ax) = ((kh - 1) / 2, (kw - 1) / 2);
    let clamp = |i: i64, n: usize| i.clamp(0, n as i64 - 1) as usize;
    let mut cols = vec![0u8; h * w];
    cols.par_chunks_mut(w).enumerate().for_each(|(r, out)| {
        for i in 0..kh {
            let src = &x[clamp(r as i64 + i as i64 - ay as i64, h) * w..][..w];
            for (o, s) in out.iter_mut().zip(src) {
                *o = (*o).max(*s);
            }
        }
    });
    let mut y = vec![0u8; h * w];
    y.par_chunks_mut(w).enumerate().for_each(|(r, out)| {
        let row = &cols[r * w..][..w];
        for (c, o) in out.iter_mut().enumerate() {
            *o = (0..kw)
                .map(|j| row[clamp(c as i64 + j as i64 - ax as i64, w)])
                .max()
                .unwrap_or(0);
        }
    });
    y
}
