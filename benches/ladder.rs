//! Benchmark: every reduction variant over sizes 2^16 … 2^28 (sum of squares of i32), with the
//! device-to-device copy bandwidth measured in the same run as the ceiling. Writes CSV and a
//! markdown table under `target/gpuprims-bench/` and prints the table.
//!
//!     cargo bench --bench ladder

#[path = "../examples/support/mod.rs"]
mod support;

use std::fmt::Write as _;

use gpuprims::Gpu;
use gpuprims::cpu::reduce as cpu;

fn main() {
    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(e) => {
            println!("ladder bench: no GPU ({e}); nothing to measure.");
            return;
        }
    };
    if let Err(e) = run(&gpu) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(gpu: &Gpu) -> gpuprims::Result<()> {
    let copy = gpu.copy_bandwidth_gbps(1 << 30, 20)?;
    let mut csv =
        String::from("family,variant,n,median_us,gbps,pct_copy,copy_gbps,cpu_serial_us,cpu_rayon_us,check,device\n");
    let mut md = format!(
        "Device: {}; copy bandwidth (read + write, 1 GiB d2d): {copy:.0} GB/s\n\n",
        gpu.props().name
    );
    md.push_str("| n | variant | median µs | GB/s | % copy | check |\n|---:|---|---:|---:|---:|---|\n");
    let mut failed = false;
    for log2 in (16..=28).step_by(2) {
        let n = 1usize << log2;
        let x = support::tutorial_ints(n, log2);
        let want = cpu::sum_sq_int(&x);
        let (serial, rayon) = support::cpu_baselines(&x, want);
        let rows = support::sumsq_ladder(gpu, &x, want, copy)?;
        for r in &rows {
            failed |= !r.ok;
            let (us, gbps, pct) = (
                format!("{:.3}", r.median_us),
                format!("{:.1}", r.gbps()),
                format!("{:.1}", r.pct_copy()),
            );
            let check = if r.ok { "PASS" } else { "FAIL" };
            let _ = writeln!(
                csv,
                "{},{},{n},{us},{gbps},{pct},{copy:.1},{serial:.1},{rayon:.1},{check},{}",
                r.family,
                r.variant,
                gpu.props().name
            );
            let _ = writeln!(md, "| 2^{log2} | {} | {us} | {gbps} | {pct} | {check} |", r.variant);
        }
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/gpuprims-bench");
    std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(dir.join("ladder.csv"), &csv))
        .and_then(|_| std::fs::write(dir.join("ladder.md"), &md))
        .unwrap_or_else(|e| eprintln!("could not write {}: {e}", dir.display()));
    println!("{md}");
    print!("{csv}");
    if failed {
        eprintln!("FAIL: a variant disagreed with the CPU reference");
        std::process::exit(1);
    }
    Ok(())
}
