//! The tour: every kernel family on its classic workload, one table each (the README's main
//! command). Without a GPU it says why and prints the CPU reference timings, exit status 0.
//!
//!     cargo run --release --example tour [-- --quick]

#[path = "support/mod.rs"]
mod support;

use gpuprims::cpu::reduce as cpu;
use gpuprims::{
    Border, Filter1d, Filter2dPlan, Filter2dShape, Filter2dVariant, Gpu, Pool2d, PoolPlan, PoolShape, PoolVariant,
    WindowVariant,
};
use support::{Filter1dWork, PoolWork, Row, WindowWork};

fn main() {
    let quick = support::quick();
    let mut lap = Lap::start();
    let n = if quick { 1 << 16 } else { 1 << 20 };
    let x = support::tutorial_ints(n, 2026);
    let want = cpu::sum_sq_int(&x);
    let (serial, rayon) = support::cpu_baselines(&x, want);
    println!("gpuprims tour — reductions: sum of squares of {n} random i32 (the classic tutorial workload)");
    let signal_len = if quick { 100_003 } else { 10_000_000 };
    let signal = support::random_signal::<f64>(signal_len, 2026);
    let mean5 = Filter1d::mean(5).expect("width 5");
    let work = Filter1dWork {
        x: &signal,
        rows: 1,
        n: signal_len,
        filter: &mean5,
        border: Border::Zero,
    };
    let (f_serial, f_rayon, f_want) = support::conv1d_cpu(&work);
    let (ih, iw) = if quick { (64, 1000) } else { (8192, 8192) };
    let pixels = support::image::<u8>(ih * iw, 2026);
    let window = WindowWork {
        x: &pixels,
        rows: ih,
        n: iw,
        width: 15,
        border: Border::Zero,
    };
    let (w_serial, w_rayon, w_want) = support::window_cpu(&window);
    let (pn, pc, ph, pw) = if quick { (4, 8, 56, 56) } else { (64, 64, 224, 224) };
    let tensor = support::pool_input::<f32>(pn * pc * ph * pw, 2026);
    let pool_shape = PoolShape::max(pn * pc, ph, pw, Pool2d::new((2, 2)));
    let pool = PoolWork {
        x: &tensor,
        shape: pool_shape,
    };
    let (p_serial, p_rayon, p_want) = support::max_pool_cpu(&pool);
    let g_side = if quick { 256 } else { 2048 };
    let image = support::image::<u8>(g_side * g_side, 2026);
    let g_shape = Filter2dShape {
        planes: 1,
        h: g_side,
        w: g_side,
    };
    let (g_serial, g_want) = support::cpu_time_us(1, || {
        gpuprims::cpu::filter2d::gaussian3x3(&image, g_side, g_side, Border::Replicate)
            .into_iter()
            .map(|v| v as u8)
            .collect::<Vec<u8>>()
    });
    println!("(inputs and CPU references: {})", lap.next());
    let started = std::time::Instant::now();
    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(e) => {
            println!("No GPU: {e}.");
            println!("CPU reference: serial {serial:.1} µs, rayon {rayon:.1} µs (sum of squares = {want}).");
            println!("1D mean filter (5 taps, {signal_len} f64): CPU serial {f_serial:.1} µs, rayon {f_rayon:.1} µs.");
            println!("Row window sums (width 15, u8 {ih} × {iw}): CPU serial {w_serial:.1} µs, rayon {w_rayon:.1} µs.");
            println!(
                "2 × 2 max pooling ({pn}, {pc}, {ph}, {pw}) f32: CPU serial {p_serial:.1} µs, rayon {p_rayon:.1} µs."
            );
            println!("Gaussian 3 × 3 (u8 {g_side}², replicate): CPU serial {g_serial:.1} µs.");
            println!("Run on a machine with an NVIDIA GPU and driver to see the GPU ladders.");
            return;
        }
    };
    println!(
        "Gpu::new (context and stream; each kernel's module loads at its first use) took {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    let result = (|| -> gpuprims::Result<()> {
        let floor = gpu.launch_floor(if quick { 20 } else { 200 })?;
        println!(
            "launch floor (GPU time): empty kernel {:.2} µs, one block reading 4 KB {:.2} µs; an empty kernel with the host's launch latency: {:.2} µs",
            floor.empty_us, floor.read_4k_us, floor.empty_with_host_us
        );
        let copy = gpu.copy_bandwidth_gbps(if quick { 16 << 20 } else { 256 << 20 }, 10)?;
        let rows = support::sumsq_ladder(&gpu, &x, want, copy)?;
        support::print_table(
            &format!("sum of squares, {n} i32 on {}", gpu.props().name),
            &rows,
            serial,
            rayon,
        );
        summary(&rows, serial);
        println!("(ladder: {})", lap.next());
        let filter_rows = support::conv1d_ladder(&gpu, &work, &f_want, "mean_filter1d f64", copy)?;
        support::print_table(
            &format!("1D mean filter, 5 taps, {signal_len} f64, zero border (the tutorial's workload)"),
            &filter_rows,
            f_serial,
            f_rayon,
        );
        summary(&filter_rows, f_serial);
        println!("(ladder: {})", lap.next());
        let variants: Vec<WindowVariant> = WindowVariant::ALL
            .iter()
            .copied()
            .chain([WindowVariant::Auto])
            .collect();
        let window_rows = support::window_ladder(&gpu, &window, &w_want, "window_sum_sumsq u8", copy, &variants)?;
        support::print_table(
            &format!("row window sum + sum of squares, width 15, u8 {ih} × {iw} → 2 × f32 (the tutorial's workload)"),
            &window_rows,
            w_serial,
            w_rayon,
        );
        summary(&window_rows, w_serial);
        println!("(ladder: {})", lap.next());
        let pool_variants: Vec<PoolVariant> = PoolVariant::ALL.iter().copied().chain([PoolVariant::Auto]).collect();
        let pool_rows = support::pool_ladder(
            &gpu,
            &pool,
            &p_want,
            "max_pool2d f32",
            copy,
            &pool_variants,
            false,
            |v| PoolPlan::<f32>::max(&gpu, pool_shape, v),
        )?;
        support::print_table(
            &format!("2 × 2 max pooling, f32 ({pn}, {pc}, {ph}, {pw}) (NCHW, PyTorch semantics)"),
            &pool_rows,
            p_serial,
            p_rayon,
        );
        summary(&pool_rows, p_serial);
        println!("(ladder: {})", lap.next());
        let xd = gpu.stream().clone_htod(&image)?;
        let plans = Filter2dVariant::ALL
            .into_iter()
            .chain([Filter2dVariant::Auto])
            .map(|v| {
                let p = Filter2dPlan::<u8>::gaussian3x3(&gpu, g_shape, Border::Replicate, v)?;
                Ok((support::plan_label(v.name(), p.variant().name()), p))
            })
            .collect::<gpuprims::Result<Vec<_>>>()?;
        let gauss_rows = support::filter2d_ladder(&gpu, &xd, plans, &g_want, 2.0, copy)?;
        support::print_table(
            &format!("Gaussian 3 × 3 [1 2 1]ᵀ[1 2 1]/16, u8 {g_side}² replicate (scipy/NPP semantics, bit-exact)"),
            &gauss_rows,
            g_serial,
            f64::NAN,
        );
        summary(&gauss_rows, g_serial);
        println!("(ladder: {})", lap.next());
        let rows: Vec<Row> = rows
            .into_iter()
            .chain(filter_rows)
            .chain(window_rows)
            .chain(pool_rows)
            .chain(gauss_rows)
            .collect();
        if rows.iter().any(|r| !r.ok) {
            eprintln!("FAIL: a variant disagreed with the CPU reference");
            std::process::exit(1);
        }
        Ok(())
    })();
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Wall time of the tour's sections, printed as it goes.
struct Lap(std::time::Instant);

impl Lap {
    fn start() -> Lap {
        Lap(std::time::Instant::now())
    }

    /// The time since the last lap, as text, and a new lap.
    fn next(&mut self) -> String {
        let s = self.0.elapsed().as_secs_f64();
        self.0 = std::time::Instant::now();
        format!("{s:.1} s")
    }
}

/// One line: the fastest correct variant of a ladder.
fn summary(rows: &[Row], serial_us: f64) {
    let best = rows
        .iter()
        .filter(|r| r.ok)
        .min_by(|a, b| a.median_us.total_cmp(&b.median_us));
    if let Some(b) = best {
        println!(
            "\nSummary: fastest correct variant {} at {:.2} µs ({:.0} GB/s, {:.0}% of copy bandwidth), {:.0}× the serial CPU.",
            b.variant,
            b.median_us,
            b.gbps(),
            b.pct_copy(),
            serial_us / b.median_us
        );
    }
}
