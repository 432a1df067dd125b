//! Walks the sum-of-squares ladder (the classic tutorial's seven steps plus a modern eighth) on the
//! tutorial's workload (2^20 random ints) and on 2^28 ints, printing median kernel time, GB/s, % of
//! the device-to-device copy bandwidth measured in the same run, speedups, and PASS/FAIL against
//! the exact CPU reference.
//!
//!     cargo run --release --example reduction [-- --quick]

#[path = "support/mod.rs"]
mod support;

use gpuprims::Gpu;
use gpuprims::cpu::reduce as cpu;

fn main() {
    let quick = support::quick();
    let sizes: &[usize] = if quick {
        &[(1 << 12) + 3, 1 << 16]
    } else {
        &[1 << 20, 1 << 28]
    };
    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(e) => {
            println!("no GPU ({e}); CPU reference timings only:");
            for &n in sizes {
                let x = support::tutorial_ints(n, n as u64);
                let (s, p) = support::cpu_baselines(&x, cpu::sum_sq_int(&x));
                println!("n = {n}: CPU serial {s:.1} µs, CPU rayon {p:.1} µs");
            }
            return;
        }
    };
    if let Err(e) = run(&gpu, sizes, quick) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(gpu: &Gpu, sizes: &[usize], quick: bool) -> gpuprims::Result<()> {
    let copy = support::copy_bandwidth(gpu, quick)?;
    let mut failed = false;
    for &n in sizes {
        let x = support::tutorial_ints(n, n as u64);
        let want = cpu::sum_sq_int(&x);
        let (serial, rayon) = support::cpu_baselines(&x, want);
        let rows = support::sumsq_ladder(gpu, &x, want, copy)?;
        failed |= rows.iter().any(|r| !r.ok);
        support::print_table(
            &format!("sum of squares, {n} i32 (bytes = input read once)"),
            &rows,
            serial,
            rayon,
        );
    }
    if failed {
        eprintln!("FAIL: a variant disagreed with the CPU reference");
        std::process::exit(1);
    }
    Ok(())
}
