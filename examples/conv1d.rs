//! Walks the 1D filter ladder (global taps → constant taps → shared tile → register blocked) on
//! the classic tutorial's workload — a 5-tap mean filter over 10,000,000 f64 samples, zero border —
//! and on 2^27 samples with 5 and 31 taps. Prints median kernel time, GB/s (input read once +
//! output written once), % of the device-to-device copy bandwidth measured in the same run,
//! speedups, and PASS/FAIL against the serial CPU filter.
//!
//!     cargo run --release --example conv1d [-- --quick]

#[path = "support/mod.rs"]
mod support;

use gpuprims::{Border, Filter1d, Gpu};
use support::Filter1dWork;

/// The tutorial's own figures (its GPU), printed beside ours.
const TUTORIAL: &str = "tutorial (10M f64, 5 taps, its GPU): CPU serial 215 ms; global taps 4.3 ms; \
                        constant taps 1.96 ms; constant taps + shared tile 1.54 ms";

fn main() {
    let quick = support::quick();
    let workloads: &[(usize, usize)] = if quick {
        &[(100_003, 5), (1 << 16, 31)]
    } else {
        &[(10_000_000, 5), (1 << 27, 5), (1 << 27, 31)]
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
    for &(n, width) in workloads {
        let x = support::random_signal::<f64>(n, n as u64);
        let filter = Filter1d::mean(width).expect("width ≥ 1");
        let work = Filter1dWork {
            x: &x,
            rows: 1,
            n,
            filter: &filter,
            border: Border::Zero,
        };
        let (serial, rayon, want) = support::conv1d_cpu(&work);
        let (Ok(gpu), Some(copy)) = (&gpu, copy) else {
            println!("n = {n}, {width} taps: CPU serial {serial:.1} µs, CPU rayon {rayon:.1} µs");
            continue;
        };
        let title = format!("mean filter, {width} taps, {n} f64, zero border (bytes = 16 per sample)");
        let rows = support::conv1d_ladder(gpu, &work, &want, "mean_filter1d f64", copy).unwrap_or_else(|e| fail(e));
        failed |= rows.iter().any(|r| !r.ok);
        support::print_table(&title, &rows, serial, rayon);
        let moving_us = 16.0 * n as f64 / (copy * 1e3);
        println!("moving these bytes at the copy bandwidth: {moving_us:.2} µs");
    }
    println!("\n{TUTORIAL}");
    if failed {
        eprintln!("FAIL: a variant disagreed with the CPU reference");
        std::process::exit(1);
    }
}

fn fail(e: gpuprims::Error) -> ! {
    eprintln!("error: {e}");
    std::process::exit(1);
}
