//! Walks the 1D filter ladder (global taps → constant taps → shared tile → register blocked) on
//! the classic tutorial's workload — a 5-tap mean filter over 10,000,000 f64 samples, zero border —
//! on 2^27 f64 samples with 5 and 31 taps, and on 2^27 f32 samples with 31 taps (the f32 vector
//! rung reads its window through L1, the f64 one through a shared tile). Prints median kernel
//! time, GB/s (input read once + output written once), % of the device-to-device copy bandwidth
//! measured in the same run, speedups, and PASS/FAIL against the serial CPU filter.
//!
//!     cargo run --release --example conv1d [-- --quick]

#[path = "support/mod.rs"]
mod support;

use gpuprims::{Border, Conv1dElement, Filter1d, Gpu};
use support::Filter1dWork;

/// The tutorial's own figures (its GPU), printed beside ours.
const TUTORIAL: &str = "tutorial (10M f64, 5 taps, its GPU): CPU serial 215 ms; global taps 4.3 ms; \
                        constant taps 1.96 ms; constant taps + shared tile 1.54 ms";

fn main() {
    let quick = support::quick();
    // (samples, taps) per type; f64 first (the tutorial's type), then f32.
    type Work = &'static [(usize, usize)];
    let (f64_work, f32_work): (Work, Work) = if quick {
        (&[(100_003, 5), (1 << 16, 31)], &[(1 << 16, 31)])
    } else {
        (&[(10_000_000, 5), (1 << 27, 5), (1 << 27, 31)], &[(1 << 27, 31)])
    };
    let gpu = Gpu::new();
    if let Err(e) = &gpu {
        println!("no GPU ({e}); CPU reference timings only:");
    }
    let copy = match &gpu {
        Ok(g) => match support::copy_bandwidth(g, quick) {
            Ok(c) => Some(c),
            Err(e) => fail(e),
        },
        Err(_) => None,
    };
    let mut failed = false;
    let gpu = gpu.as_ref().ok().zip(copy);
    for &(n, width) in f64_work {
        failed |= mean_filter::<f64>(gpu, n, width, "mean_filter1d f64");
    }
    for &(n, width) in f32_work {
        failed |= mean_filter::<f32>(gpu, n, width, "mean_filter1d f32");
    }
    println!("\n{TUTORIAL}");
    if failed {
        eprintln!("FAIL: a variant disagreed with the CPU reference");
        std::process::exit(1);
    }
}

/// Times the ladder on an `n`-sample mean filter of `width` taps (CPU only without a GPU; `gpu`
/// comes with the copy bandwidth) and prints its table under `family`; returns whether a variant
/// disagreed with the CPU.
fn mean_filter<T: Conv1dElement>(gpu: Option<(&Gpu, f64)>, n: usize, width: usize, family: &'static str) -> bool {
    let ty = std::any::type_name::<T>();
    let x = support::random_signal::<T>(n, n as u64);
    let filter = Filter1d::mean(width).expect("width ≥ 1");
    let work = Filter1dWork {
        x: &x,
        rows: 1,
        n,
        filter: &filter,
        border: Border::Zero,
    };
    let (serial, rayon, want) = support::conv1d_cpu(&work);
    let Some((gpu, copy)) = gpu else {
        println!("n = {n} {ty}, {width} taps: CPU serial {serial:.1} µs, CPU rayon {rayon:.1} µs");
        return false;
    };
    let bytes = 2 * size_of::<T>();
    let title = format!("mean filter, {width} taps, {n} {ty}, zero border (bytes = {bytes} per sample)");
    let rows = support::conv1d_ladder(gpu, &work, &want, family, copy).unwrap_or_else(|e| fail(e));
    support::print_table(&title, &rows, serial, rayon);
    let moving_us = (bytes * n) as f64 / (copy * 1e3);
    println!("moving these bytes at the copy bandwidth: {moving_us:.2} µs");
    // The copy of exactly these bytes (a d2d memcpy of the input's size), in the same run: the
    // ceiling at this size, fixed costs included.
    match gpu.copy_bandwidth_gbps(size_of::<T>() * n, 50) {
        Ok(gbps) => println!(
            "device-to-device copy of the same bytes: {:.2} µs ({gbps:.0} GB/s)",
            (bytes * n) as f64 / (gbps * 1e3)
        ),
        Err(e) => fail(e),
    }
    rows.iter().any(|r| !r.ok)
}

fn fail(e: gpuprims::Error) -> ! {
    eprintln!("error: {e}");
    std::process::exit(1);
}
