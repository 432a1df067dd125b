//! Fills the CUDA driver's JIT cache with every gpuprims kernel for the devices present, so the
//! first use of each op on this machine loads in milliseconds (for container images and CI
//! warm-up). The driver JIT-compiles one module at a time inside a process, so the kernels are
//! spread over worker processes (`--jobs`, default: the CPU count), each pulling the next
//! kernel when it finishes one. Devices of one compute capability share the cache: one of each
//! is warmed.
//!
//!     cargo run --release --example prewarm [-- --jobs N] [--quiet]
//!
//! At the end it prints the per-kernel load times (median, 90th percentile, maximum, the ten
//! slowest). With `--jobs 1` and `CUDA_CACHE_DISABLE=1` those are the driver's JIT times; run
//! again with the cache enabled to see every kernel load from the cache. The cache lives in
//! `CUDA_CACHE_PATH` (default `~/.nv/ComputeCache`, at most `CUDA_CACHE_MAXSIZE` bytes; gpuprims
//! needs about 60 MB per architecture): set it to a path inside the image to ship it.
//! `GPUPRIMS_LOAD_ARCH` applies as in every program.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use gpuprims::{Gpu, LoadedFrom};
use indicatif::{ProgressBar, ProgressStyle};

/// One kernel's load, as a worker reports it.
struct Loaded {
    kernel: String,
    from: String,
    ms: f64,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--worker") {
        let device = args.get(i + 1).and_then(|d| d.parse().ok()).unwrap_or(0);
        std::process::exit(worker(device));
    }
    let jobs = args
        .iter()
        .position(|a| a == "--jobs")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let quiet = args.iter().any(|a| a == "--quiet");
    let devices = match devices() {
        Ok(d) => d,
        Err(e) => {
            println!("No GPU: {e}. Nothing to prewarm.");
            return;
        }
    };
    let mut failed = 0;
    for (ordinal, name, arch) in devices {
        println!(
            "device {ordinal}: {name} — {} kernels of the sm_{arch} build, {jobs} worker processes",
            gpuprims::kernels::count()
        );
        let started = Instant::now();
        let (loads, errors) = prewarm(ordinal, jobs, quiet);
        failed += errors.len();
        for e in &errors {
            println!("  FAILED {e}");
        }
        summarize(&loads, started.elapsed());
    }
    if failed > 0 {
        std::process::exit(1);
    }
}

/// One device of each compute capability: (ordinal, name, kernel architecture).
fn devices() -> gpuprims::Result<Vec<(usize, String, u32)>> {
    let first = Gpu::new()?;
    let mut seen = vec![first.props().compute_capability];
    let mut out = vec![(0, first.props().name.clone(), first.kernel_arch())];
    for ordinal in 1.. {
        let Ok(gpu) = Gpu::with_device(ordinal) else { break };
        let cc = gpu.props().compute_capability;
        if !seen.contains(&cc) {
            seen.push(cc);
            out.push((ordinal, gpu.props().name.clone(), gpu.kernel_arch()));
        }
    }
    Ok(out)
}

/// Loads every kernel on device `ordinal` through `jobs` worker processes.
fn prewarm(ordinal: usize, jobs: usize, quiet: bool) -> (Vec<Loaded>, Vec<String>) {
    let names: Vec<&str> = gpuprims::kernels::all().map(|m| m.name()).collect();
    let bar = ProgressBar::new(names.len() as u64);
    if quiet {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template("  [{elapsed_precise}] {bar:40} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let queue = Mutex::new(names.into_iter());
    let loads = Mutex::new(Vec::new());
    let errors = Mutex::new(Vec::new());
    let exe = std::env::current_exe().expect("the example's own path");
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                let child = Command::new(&exe)
                    .args(["--worker", &ordinal.to_string()])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn();
                let mut child = match child {
                    Ok(c) => c,
                    Err(e) => return errors.lock().unwrap().push(format!("starting a worker: {e}")),
                };
                let mut to = child.stdin.take().expect("piped");
                let mut from = BufReader::new(child.stdout.take().expect("piped")).lines();
                loop {
                    let Some(name) = queue.lock().unwrap().next() else {
                        break;
                    };
                    if writeln!(to, "{name}").is_err() {
                        errors.lock().unwrap().push(format!("{name}: the worker exited"));
                        break;
                    }
                    let Some(Ok(line)) = from.next() else {
                        errors.lock().unwrap().push(format!("{name}: the worker exited"));
                        break;
                    };
                    match line.split_whitespace().collect::<Vec<_>>()[..] {
                        ["ok", kernel, from, ms] => loads.lock().unwrap().push(Loaded {
                            kernel: kernel.to_string(),
                            from: from.to_string(),
                            ms: ms.parse().unwrap_or(f64::NAN),
                        }),
                        _ => errors.lock().unwrap().push(line.clone()),
                    }
                    bar.inc(1);
                    bar.set_message(name);
                }
                drop(to);
                let _ = child.wait();
            });
        }
    });
    bar.finish_and_clear();
    (loads.into_inner().unwrap(), errors.into_inner().unwrap())
}

/// A worker: loads the kernels named on stdin, one line each, answering `ok NAME FROM MS` or
/// `error NAME: WHY`.
fn worker(device: usize) -> i32 {
    let gpu = match Gpu::with_device(device) {
        Ok(g) => g,
        Err(e) => {
            println!("error device {device}: {e}");
            return 1;
        }
    };
    for name in std::io::stdin().lock().lines().map_while(Result::ok) {
        match gpu.load_kernel(&name) {
            Ok(load) => {
                let from = match load.from {
                    LoadedFrom::Sass { arch } => format!("sass_sm_{arch}"),
                    LoadedFrom::Ptx { arch } => format!("ptx_sm_{arch}"),
                    _ => "other".into(),
                };
                println!("ok {name} {from} {:.3}", load.elapsed.as_secs_f64() * 1e3);
            }
            Err(e) => println!("error {name}: {e}"),
        }
    }
    0
}

/// Prints the load-time distribution and the ten slowest kernels.
fn summarize(loads: &[Loaded], wall: Duration) {
    let mut ms: Vec<f64> = loads.iter().map(|l| l.ms).collect();
    ms.sort_by(f64::total_cmp);
    if ms.is_empty() {
        return;
    }
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    let mut sources: Vec<(String, usize)> = Vec::new();
    for l in loads {
        match sources.iter_mut().find(|(f, _)| *f == l.from) {
            Some((_, n)) => *n += 1,
            None => sources.push((l.from.clone(), 1)),
        }
    }
    println!(
        "  {} kernels in {:.1} s wall ({}); per kernel: median {:.1} ms, 90th percentile {:.1} ms, max {:.1} ms, \
         sum {:.1} s; over 1 s: {}",
        loads.len(),
        wall.as_secs_f64(),
        sources
            .iter()
            .map(|(f, n)| format!("{n} {f}"))
            .collect::<Vec<_>>()
            .join(", "),
        at(0.5),
        at(0.9),
        ms[ms.len() - 1],
        ms.iter().sum::<f64>() / 1e3,
        ms.iter().filter(|&&t| t > 1000.0).count()
    );
    let mut slow: Vec<&Loaded> = loads.iter().collect();
    slow.sort_by(|a, b| b.ms.total_cmp(&a.ms));
    println!("  slowest:");
    for l in slow.iter().take(10) {
        println!("    {:>9.1} ms  {} ({})", l.ms, l.kernel, l.from);
    }
}
