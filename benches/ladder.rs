//! Benchmark: the launch floor (`Gpu::launch_floor`), every reduction variant over sizes 2^16 …
//! 2^28 (sum of squares of i32), every 1D filter variant over 2^16 … 2^27 samples with 5 and 31
//! taps (mean filter, zero border; f64, and f32 at two sizes), the window statistics (u8 images
//! 1024² … 8192²: row sums at widths 15 and 255, 15 × 15 local mean and variance; i32, u16 and f32
//! rows at 8192²), pooling (2 × 2 max over f32 NCHW batches of 224² planes, 2^20 … 2^28 elements;
//! ResNet's 3 × 3 stride-2 max, max with indices and average over 4096 planes) and 2D filters (u8
//! images 1024² … 8192², replicate border: grey dilation 3 × 3, 5 × 5 and 31 × 31, the 3 × 3
//! Gaussian), with the device-to-device copy bandwidth measured in the same run as the ceiling.
//! Writes CSV, a markdown table and one PNG chart per family and workload (GB/s against size, the
//! copy bandwidth as the ceiling) under `target/gpuprims-bench/` and prints the table.
//!
//!     cargo bench --bench ladder [headline] [SECTION ...]
//!
//!     cargo bench --bench ladder -- --from SAVED_OUTPUT   # redraw the headline charts and table only
//!
//! SECTION (any of `reduce`, `reduce-auto`, `conv1d`, `conv1d-taps`, `window`, `pool`, `filter2d`,
//! `chain`) runs only those sections; none runs all. `headline` keeps each section's W1–W12
//! workloads only (without a SECTION: the six main sections — the README tables and the charts).
//! The chain section (W12) times Gaussian → dilation → Sobel over 64 × 512² and one 8192² image,
//! each op alone, the three one by one and fused, and fused with two point steps between. The launch floor and the copy bandwidth are
//! always measured.

mod chart;
mod headline;
#[path = "../examples/support/mod.rs"]
mod support;

use std::fmt::Write as _;

use gpuprims::cpu::conv1d as cpu1d;
use gpuprims::cpu::reduce as cpu;
use gpuprims::{
    AvgPool2d, Border, Conv1dElement, Filter1d, Filter2dPlan, Filter2dShape, Filter2dVariant, Gpu, MorphVariant,
    Pool2d, PoolPlan, PoolShape, PoolVariant, WindowVariant,
};
use support::{Filter1dWork, PoolWork, Row, WindowWork};

fn main() {
    if let Some(saved) = std::env::args().skip_while(|a| a != "--from").nth(1) {
        redraw(&saved);
        return;
    }
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

/// Whether the command line selects `section`: the sections named, else every section (under
/// `headline`: the reduce, conv1d, window, pool, filter2d and chain sections, at their W1–W12
/// workloads only).
fn selected(section: &str) -> bool {
    let named: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-') && a != "headline")
        .collect();
    if named.is_empty() {
        !headline() || ["reduce", "conv1d", "window", "pool", "filter2d", "chain"].contains(&section)
    } else {
        named.iter().any(|a| a == section)
    }
}

/// `headline` on the command line: each selected section at its W1–W9 workload only.
fn headline() -> bool {
    std::env::args().any(|a| a == "headline")
}

/// Whether a sweep point runs: every point, or under `headline` the one equal to `w`.
fn at<T: PartialEq>(v: &T, w: &[T]) -> bool {
    !headline() || w.contains(v)
}

fn run(gpu: &Gpu) -> gpuprims::Result<()> {
    let copy = gpu.copy_bandwidth_gbps(1 << 30, 20)?;
    let mut csv =
        String::from("family,variant,n,median_us,gbps,pct_copy,copy_gbps,cpu_serial_us,cpu_rayon_us,check,device\n");
    let mut md = format!(
        "Device: {}; copy bandwidth (read + write, 1 GiB d2d): {copy:.0} GB/s\n\n",
        gpu.props().name
    );
    md.push_str("| family | n | variant | median µs | GB/s | % copy | check |\n|---|---:|---|---:|---:|---:|---|\n");
    let mut failed = false;
    let mut points: Vec<chart::Point> = Vec::new();
    // Every row with its size label, for the headline charts.
    let mut measured: Vec<(String, Row)> = Vec::new();
    let mut record = |rows: &[Row], size: &str, serial: Option<f64>, rayon: Option<f64>| {
        measured.extend(rows.iter().map(|r| (size.to_string(), r.clone())));
        let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.1}"));
        // The chart a row belongs to: its family and the workload words of `size` (sizes dropped).
        let is_size = |t: &str| t.starts_with("2^") || t.ends_with('²') || t.parse::<usize>().is_ok();
        let workload: Vec<&str> = size.split(' ').filter(|t| !is_size(t)).collect();
        let workload = workload.join(" ");
        let workload = workload.trim_start_matches('×').trim();
        for r in rows {
            failed |= !r.ok;
            if r.family != "launch floor" {
                points.push(chart::Point {
                    family: format!("{} {workload}", r.family).trim().to_string(),
                    variant: r.variant.clone(),
                    n: r.n,
                    gbps: r.gbps(),
                });
            }
            let (us, gbps, pct) = (
                format!("{:.3}", r.median_us),
                format!("{:.1}", r.gbps()),
                format!("{:.1}", r.pct_copy()),
            );
            let check = if r.ok { "PASS" } else { "FAIL" };
            let _ = writeln!(
                csv,
                "{},{},{},{us},{gbps},{pct},{copy:.1},{},{},{check},{}",
                r.family,
                r.variant,
                r.n,
                opt(serial),
                opt(rayon),
                gpu.props().name
            );
            let _ = writeln!(
                md,
                "| {} | {size} | {} | {us} | {gbps} | {pct} | {check} |",
                r.family, r.variant
            );
        }
    };
    // The launch floor: what "launch-bound" costs, beside the small sizes below.
    let floor = gpu.launch_floor(200)?;
    let probe = |variant: &str, us: f64, bytes: f64| Row {
        family: "launch floor",
        variant: variant.into(),
        n: bytes as usize,
        median_us: us,
        bytes,
        copy_gbps: copy,
        ok: true,
        note: String::new(),
    };
    record(
        &[
            probe("empty kernel", floor.empty_us, 0.0),
            probe("1 block reads 4 KB", floor.read_4k_us, 4096.0),
            probe("empty kernel + host launch latency", floor.empty_with_host_us, 0.0),
        ],
        "–",
        None,
        None,
    );
    for log2 in (16..=28).step_by(2).filter(|l| selected("reduce") && at(l, &[20, 28])) {
        let n = 1usize << log2;
        let x = support::tutorial_ints(n, log2);
        let want = cpu::sum_sq_int(&x);
        let (serial, rayon) = support::cpu_baselines(&x, want);
        let rows = support::sumsq_ladder(gpu, &x, want, copy)?;
        record(&rows, &format!("2^{log2}"), Some(serial), Some(rayon));
    }
    // Auto across sizes: one op from 1 to 2^28 elements, as the GPU's time and with the host's
    // launch latency (what one isolated call costs), beside the launch floor above.
    for n in [1, 1000, 1 << 12, 1 << 16, 1 << 20, 1 << 24, 1 << 28]
        .into_iter()
        .filter(|_| selected("reduce-auto"))
    {
        let x = support::tutorial_ints(n, n as u64);
        let want = cpu::sum_sq_int(&x);
        let rows = support::sumsq_auto(gpu, &x, want, copy)?;
        record(&rows, &format!("{n}"), None, None);
    }
    for width in [5, 31].into_iter().filter(|w| selected("conv1d") && at(w, &[5])) {
        for log2 in [16, 18, 20, 22, 24, 26, 27].into_iter().filter(|l| at(l, &[27])) {
            let rows = filter_rows::<f64>(gpu, log2, width, "mean_filter1d f64", copy)?;
            record(&rows, &format!("2^{log2} × {width}"), None, None);
        }
        for log2 in [24, 27].into_iter().filter(|_| !headline()) {
            let rows = filter_rows::<f32>(gpu, log2, width, "mean_filter1d f32", copy)?;
            record(&rows, &format!("2^{log2} × {width}"), None, None);
        }
    }
    // Auto's crossovers: every variant over tap counts 3 … 127, f32 and f64, at 2^20 and 2^24.
    for taps in [3, 5, 9, 16, 31, 63, 127]
        .into_iter()
        .filter(|_| selected("conv1d-taps"))
    {
        for log2 in [20, 24] {
            let rows = filter_rows::<f64>(gpu, log2, taps, "mean_filter1d f64", copy)?;
            record(&rows, &format!("2^{log2} × {taps}"), None, None);
            let rows = filter_rows::<f32>(gpu, log2, taps, "mean_filter1d f32", copy)?;
            record(&rows, &format!("2^{log2} × {taps}"), None, None);
        }
    }
    // Window statistics: u8 images → two f32 images, the row ladder's fast rungs at widths 15 and
    // 255, and the 15 × 15 local mean + variance through both 2D variants.
    let row_variants = [
        WindowVariant::SharedTile,
        WindowVariant::RunningSum,
        WindowVariant::Auto,
    ];
    for side in [1024, 2048, 4096, 8192]
        .into_iter()
        .filter(|s| selected("window") && at(s, &[8192]))
    {
        let pixels = support::image::<u8>(side * side, side as u64);
        let family = "window_sum_sumsq u8→f32";
        window_rows(gpu, &pixels, side, copy, family, &row_variants, &mut record)?;
        if side == 8192 {
            // The other input types at the u8 rows' widths (W11: the tutorial's int image).
            window_types(gpu, side, copy, &mut record)?;
        }
        if side >= 2048 {
            let (_, _, want) = support::box_cpu(&pixels, side, (15, 15), Border::Reflect);
            let rows = support::box_ladder(gpu, &pixels, (side, side), (15, 15), Border::Reflect, &want, copy)?;
            record(&rows, &format!("{side}² × 15×15"), None, None);
        }
    }
    // Pooling: 2 × 2 max pooling of f32 planes of 224², batches of 16 … 4096 planes.
    let pool_variants = [
        PoolVariant::Global,
        PoolVariant::ReadOnly,
        PoolVariant::Vectorized,
        PoolVariant::Auto,
    ];
    for planes in [16, 64, 256, 1024, 4096]
        .into_iter()
        .filter(|p| selected("pool") && at(p, &[4096]))
    {
        let x = support::pool_input::<f32>(planes * 224 * 224, planes as u64);
        let shape = PoolShape::max(planes, 224, 224, Pool2d::new((2, 2)));
        let work = PoolWork { x: &x, shape };
        let (_, _, want) = support::max_pool_cpu(&work);
        let rows = support::pool_ladder(
            gpu,
            &work,
            &want,
            "max_pool2d 2×2 f32",
            copy,
            &pool_variants,
            false,
            |v| PoolPlan::<f32>::max(gpu, shape, v),
        )?;
        record(&rows, &format!("{planes} × 224²"), None, None);
    }
    // Overlapping pooling (W10): ResNet's 3 × 3 stride-2 padding-1 window over 4096 f32 planes
    // of 224² — max, max with its i64 argmax, and average.
    if selected("pool") {
        let planes = 4096;
        let x = support::pool_input::<f32>(planes * 224 * 224, 10);
        let p = Pool2d::new((3, 3)).stride((2, 2)).padding((1, 1));
        let variants = [
            PoolVariant::ReadOnly,
            PoolVariant::Texture,
            PoolVariant::Vectorized,
            PoolVariant::SharedTile,
            PoolVariant::Auto,
        ];
        let shape = PoolShape::max(planes, 224, 224, p);
        let work = PoolWork { x: &x, shape };
        let (_, _, want) = support::max_pool_cpu(&work);
        for indices in [false, true] {
            let rows = support::pool_ladder(
                gpu,
                &work,
                &want,
                "max_pool2d 3×3/2 f32",
                copy,
                &variants,
                indices,
                |v| PoolPlan::<f32>::max(gpu, shape, v),
            )?;
            record(&rows, &format!("{planes} × 224²"), None, None);
        }
        let avg = AvgPool2d::new((3, 3)).stride((2, 2)).padding((1, 1));
        let shape = PoolShape::avg(planes, 224, 224, avg);
        let view = ndarray::ArrayView3::from_shape((planes, 224, 224), &x[..]).expect("shape");
        let want: Vec<f32> = gpuprims::cpu::pool::avg_pool2d(&view, &avg)
            .expect("valid")
            .iter()
            .copied()
            .collect();
        let work = PoolWork { x: &x, shape };
        let rows = support::pool_ladder(
            gpu,
            &work,
            &want,
            "avg_pool2d 3×3/2 f32",
            copy,
            &variants,
            false,
            |v| PoolPlan::<f32>::avg(gpu, shape, v),
        )?;
        record(&rows, &format!("{planes} × 224²"), None, None);
    }
    // 2D filters: u8 images 1024² … 8192², replicate border: grey dilation 3 × 3, 5 × 5 and
    // 31 × 31 and the 3 × 3 Gaussian through their fast rungs and Auto.
    for side in [1024, 2048, 4096, 8192]
        .into_iter()
        .filter(|s| selected("filter2d") && at(s, &[8192]))
    {
        let pixels = support::image::<u8>(side * side, side as u64);
        let xd = gpu.stream().clone_htod(&pixels)?;
        let shape = Filter2dShape {
            planes: 1,
            h: side,
            w: side,
        };
        for k in [3, 5, 31] {
            let want = support::dilate_cpu(&pixels, side, side, (k, k));
            let variants: &[MorphVariant] = if k <= 5 {
                &[
                    MorphVariant::ComposedShared,
                    MorphVariant::RowVector,
                    MorphVariant::WordTile,
                    MorphVariant::Auto,
                ]
            } else {
                &[
                    MorphVariant::Separable,
                    MorphVariant::VanHerk,
                    MorphVariant::VanHerkTile,
                    MorphVariant::Auto,
                ]
            };
            let plans = variants
                .iter()
                .map(|&v| {
                    let p = Filter2dPlan::<u8>::dilate(gpu, shape, (k, k), Border::Replicate, v)?;
                    Ok((support::plan_label(v.name(), p.variant().name()), p))
                })
                .collect::<gpuprims::Result<Vec<_>>>()?;
            let rows = support::filter2d_ladder(gpu, &xd, plans, &want, 2.0, copy)?;
            record(&rows, &format!("dilate {side}² × {k}×{k}"), None, None);
        }
        let want: Vec<u8> = gpuprims::cpu::filter2d::gaussian3x3(&pixels, side, side, Border::Replicate)
            .into_iter()
            .map(|v| v as u8)
            .collect();
        let plans = [
            Filter2dVariant::SharedTile,
            Filter2dVariant::RowVector,
            Filter2dVariant::WordTile,
            Filter2dVariant::Auto,
        ]
        .iter()
        .map(|&v| {
            let p = Filter2dPlan::<u8>::gaussian3x3(gpu, shape, Border::Replicate, v)?;
            Ok((support::plan_label(v.name(), p.variant().name()), p))
        })
        .collect::<gpuprims::Result<Vec<_>>>()?;
        let rows = support::filter2d_ladder(gpu, &xd, plans, &want, 2.0, copy)?;
        record(&rows, &format!("gauss3x3 {side}²"), None, None);
    }
    // Fused chains (W12): Gaussian 3 × 3 → dilation 3 × 3 → Sobel axis 1, reflect border, over
    // 64 × 512² and one 8192² image: the ops one by one (batched) against one fused launch.
    if selected("chain") {
        for (planes, side) in [(64, 512), (1, 8192)] {
            let rows = chain_rows(gpu, planes, side, copy)?;
            record(&rows, &format!("{planes} × {side}²"), None, None);
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::var_os("GPUPRIMS_BENCH_DIR").map_or_else(|| root.join("target/gpuprims-bench"), Into::into);
    std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(dir.join("ladder.csv"), &csv))
        .and_then(|_| std::fs::write(dir.join("ladder.md"), &md))
        .unwrap_or_else(|e| eprintln!("could not write {}: {e}", dir.display()));
    match chart::write_charts(&dir, &points, copy, &gpu.props().name) {
        Ok(files) => println!("charts: {}", files.join(", ")),
        Err(e) => eprintln!("could not draw the charts: {e}"),
    }
    let charts = std::env::var_os("GPUPRIMS_CHART_DIR").map_or_else(|| root.join("docs/img"), Into::into);
    let ladders = headline_ladders(&measured, copy);
    match chart::write_ladders(&charts, &ladders, &gpu.props().name) {
        Ok(files) => println!("headline charts: {}", files.join(", ")),
        Err(e) => eprintln!("could not draw the headline charts: {e}"),
    }
    write_headline_table(&dir, &measured, copy);
    println!("{md}");
    print!("{csv}");
    if failed {
        eprintln!("FAIL: a variant disagreed with the CPU reference");
        std::process::exit(1);
    }
    Ok(())
}

/// Each family's headline workload (the README's table): its rows of `measured`, and the vendor
/// peers of the same workload from the CSV named by `GPUPRIMS_PEERS_CSV` (the peers run in the
/// same device call; none when unset), all as % of `copy`.
fn headline_ladders(measured: &[(String, Row)], copy: f64) -> Vec<chart::Ladder> {
    let peers = std::env::var("GPUPRIMS_PEERS_CSV")
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    let spec: [(&str, &str, &str, &str, &str, &str); 5] = [
        (
            "reduce",
            "sum_of_squares i32→u128",
            "2^28",
            "W1_sumsq",
            "268435456",
            "sum of squares, 2^28 i32 → exact",
        ),
        (
            "conv1d",
            "mean_filter1d f64",
            "2^27 × 5",
            "W2_mean5",
            "134217728",
            "5-tap mean filter, 2^27 f64",
        ),
        (
            "window",
            "window_sum_sumsq u8→f32",
            "8192² × 15",
            "W3_winsum15",
            "8192x8192",
            "window-15 row sum + sum of squares, u8 8192² → 2 × f32",
        ),
        (
            "pool",
            "max_pool2d 2×2 f32",
            "4096 × 224²",
            "W4_maxpool2x2",
            "64x64x224x224",
            "2 × 2 max pool, f32 (64, 64, 224, 224)",
        ),
        (
            "filter2d",
            "filter2d",
            "dilate 8192² × 3×3",
            "W6_dilate3x3",
            "8192x8192",
            "3 × 3 grey dilation, u8 8192², replicate",
        ),
    ];
    spec.iter()
        .map(|&(file, family, size, op, shape, title)| chart::Ladder {
            file,
            title: title.to_string(),
            bars: measured
                .iter()
                .filter(|(s, r)| s == size && r.family == family)
                .map(|(_, r)| (r.variant.clone(), r.pct_copy()))
                .collect(),
            peers: chart::peer_rows(&peers, op, shape)
                .into_iter()
                .map(|(name, gbps)| (name, 100.0 * gbps / copy))
                .collect(),
        })
        .collect()
}

/// Redraws the headline charts from a saved run's output (`saved`: the bench's printed markdown
/// table, its device and copy lines) and the peers CSV of the same call (`GPUPRIMS_PEERS_CSV`),
/// into `GPUPRIMS_CHART_DIR` (default docs/img): for when only the drawing changed.
fn redraw(saved: &str) {
    let text = std::fs::read_to_string(saved).unwrap_or_else(|e| panic!("{saved}: {e}"));
    let line = text
        .lines()
        .find(|l| l.starts_with("Device: "))
        .expect("a `Device:` line");
    let device = line["Device: ".len()..].split(';').next().unwrap_or("").to_string();
    let copy: f64 = line
        .split("1 GiB d2d): ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .expect("the copy bandwidth on the `Device:` line");
    let measured: Vec<(String, Row)> = text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| family"))
        .filter_map(|l| {
            let f: Vec<&str> = l.trim().trim_matches('|').split('|').map(str::trim).collect();
            let (us, gbps): (f64, f64) = (f.get(3)?.parse().ok()?, f.get(4)?.parse().ok()?);
            let row = Row {
                family: Box::leak(f[0].to_string().into_boxed_str()),
                variant: f[2].to_string(),
                n: 0,
                median_us: us,
                bytes: gbps * us * 1e3,
                copy_gbps: copy,
                ok: f.get(6) == Some(&"PASS"),
                note: String::new(),
            };
            Some((f[1].to_string(), row))
        })
        .collect();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let charts = std::env::var_os("GPUPRIMS_CHART_DIR").map_or_else(|| root.join("docs/img"), Into::into);
    match chart::write_ladders(&charts, &headline_ladders(&measured, copy), &device) {
        Ok(files) => println!("headline charts: {}", files.join(", ")),
        Err(e) => eprintln!("could not draw the headline charts: {e}"),
    }
    let dir = std::env::var_os("GPUPRIMS_BENCH_DIR").map_or_else(|| root.join("target/gpuprims-bench"), Into::into);
    write_headline_table(&dir, &measured, copy);
}

/// With the peers of the same run (`GPUPRIMS_PEERS_CSV`): the README's headline table, printed and
/// written to `dir/headline.md`.
fn write_headline_table(dir: &std::path::Path, measured: &[(String, Row)], copy: f64) {
    let Some(peers) = std::env::var("GPUPRIMS_PEERS_CSV")
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
    else {
        return;
    };
    let table = headline::table(measured, copy, &peers);
    let path = dir.join("headline.md");
    match std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, &table)) {
        Ok(()) => println!("headline table ({}):\n{table}", path.display()),
        Err(e) => eprintln!("could not write {}: {e}", path.display()),
    }
}

/// The 1D filter ladder on 2^log2 random samples, checked against the rayon CPU filter.
fn filter_rows<T: Conv1dElement>(
    gpu: &Gpu,
    log2: u32,
    width: usize,
    family: &'static str,
    copy: f64,
) -> gpuprims::Result<Vec<Row>> {
    let n = 1usize << log2;
    let x = support::random_signal::<T>(n, log2 as u64);
    let filter = Filter1d::mean(width)?;
    let work = Filter1dWork {
        x: &x,
        rows: 1,
        n,
        filter: &filter,
        border: Border::Zero,
    };
    let mut want = vec![T::ZERO; n];
    cpu1d::par_correlate(&x, n, filter.taps(), filter.anchor(), Border::Zero, &mut want);
    support::conv1d_ladder(gpu, &work, &want, family, copy)
}

/// Row windows of a `side²` image of `pixels` into two f32 images at widths 15 and 255, zero
/// border, through `variants`: one row per variant and width.
fn window_rows<T: gpuprims::cpu::window::OracleElement + gpuprims::WindowElement>(
    gpu: &Gpu,
    pixels: &[T],
    side: usize,
    copy: f64,
    family: &'static str,
    variants: &[WindowVariant],
    record: &mut impl FnMut(&[Row], &str, Option<f64>, Option<f64>),
) -> gpuprims::Result<()>
where
    gpuprims::abi::window::Sums<T::S, T::Q>: Send,
    f32: gpuprims::WindowFloat<T>,
{
    for width in [15, 255] {
        let work = WindowWork {
            x: pixels,
            rows: side,
            n: side,
            width,
            border: Border::Zero,
        };
        let want = support::window_want(&work);
        let rows = support::window_ladder(gpu, &work, &want, family, copy, variants)?;
        record(&rows, &format!("{side}² × {width}"), None, None);
    }
    Ok(())
}

/// Row windows of i32, u16 and f32 images of `side²` into two f32 images, through the running
/// sums and `Auto`. The sliding kernel's accumulator classes by sample range: 8-bit samples (the
/// tutorial's int image, W11) and 12-bit ones slide in 32 bits at both widths, ±2^20 in u64
/// squares (`I32_NARROW_MAX`), ±2^30 in 128 bits; u16 over its whole range in u64.
fn window_types(
    gpu: &Gpu,
    side: usize,
    copy: f64,
    record: &mut impl FnMut(&[Row], &str, Option<f64>, Option<f64>),
) -> gpuprims::Result<()> {
    let variants = [WindowVariant::RunningSum, WindowVariant::Auto];
    let seed = side as u64 + 1;
    let (n, v) = (side * side, &variants[..]);
    let bytes = support::image::<i32>(n, seed);
    window_rows(gpu, &bytes, side, copy, "window_sum_sumsq i32→f32", v, record)?;
    // The same bytes spread to other ranges: 12 bits, ±2^20, ±2^30.
    let spread = |f: fn(i32) -> i32| bytes.iter().map(|&v| f(v)).collect::<Vec<i32>>();
    let auto = &variants[1..];
    for (data, family) in [
        (spread(|v| v << 4 | v >> 4), "window_sum_sumsq i32→f32 (12-bit)"),
        (spread(|v| (v - 128) << 13), "window_sum_sumsq i32→f32 (±2^20)"),
        (spread(|v| (v - 128) << 23), "window_sum_sumsq i32→f32 (±2^30)"),
    ] {
        window_rows(gpu, &data, side, copy, family, auto, record)?;
    }
    window_rows(
        gpu,
        &support::image::<u16>(n, seed),
        side,
        copy,
        "window_sum_sumsq u16→f32",
        v,
        record,
    )?;
    let full: Vec<u16> = support::image::<u16>(n, seed).into_iter().map(|v| v << 8 | v).collect();
    window_rows(
        gpu,
        &full,
        side,
        copy,
        "window_sum_sumsq u16→f32 (16-bit)",
        auto,
        record,
    )?;
    window_rows(
        gpu,
        &support::image::<f32>(n, seed),
        side,
        copy,
        "window_sum_sumsq f32→f32",
        v,
        record,
    )
}

/// The W12 chain over `planes × side²` u8: each op alone (its own launch, input read and output
/// written), the three one by one, and the fused chain; the fused result checked bit for bit
/// against the ops one by one.
fn chain_rows(gpu: &Gpu, planes: usize, side: usize, copy: f64) -> gpuprims::Result<Vec<Row>> {
    use gpuprims::{Chain, ChainPlan, ChainVariant};
    let border = Border::Reflect;
    let shape = Filter2dShape {
        planes,
        h: side,
        w: side,
    };
    let n = planes * side * side;
    let x = gpu.stream().clone_htod(&support::image::<u8>(n, side as u64))?;
    // SAFETY: plain data, written in full by each launch before it is read.
    let (mut g, mut d, mut y, mut fy) = unsafe {
        (
            gpu.stream().alloc::<u8>(n)?,
            gpu.stream().alloc::<u8>(n)?,
            gpu.stream().alloc::<i16>(n)?,
            gpu.stream().alloc::<i16>(n)?,
        )
    };
    let gauss = Filter2dPlan::<u8>::gaussian3x3(gpu, shape, border, Filter2dVariant::Auto)?;
    let dilate = Filter2dPlan::<u8>::dilate(gpu, shape, (3, 3), border, MorphVariant::Auto)?;
    let sobel = Filter2dPlan::<u8, i16>::sobel(gpu, shape, 1, border, Filter2dVariant::Auto)?;
    let fused = ChainPlan::with_variant(gpu, shape, &support::w12_chain(), border, ChainVariant::Tiles)?;
    let streamed = ChainPlan::with_variant(gpu, shape, &support::w12_chain(), border, ChainVariant::Stream)?;
    let time = |f: &mut dyn FnMut() -> gpuprims::Result<()>| -> gpuprims::Result<f64> {
        let cell = std::cell::RefCell::new(f);
        let probe = gpu.time_launches(1, 1, |_| Ok(()), |_| (cell.borrow_mut())())?;
        let runs = support::runs_for(probe.median_us, 200);
        Ok(gpu
            .time_launches(3, runs, |_| Ok(()), |_| (cell.borrow_mut())())?
            .median_us)
    };
    let t_gauss = time(&mut || gauss.enqueue(gpu, &x, &mut g))?;
    let t_dilate = time(&mut || dilate.enqueue(gpu, &g, &mut d))?;
    let t_sobel = time(&mut || sobel.enqueue(gpu, &d, &mut y))?;
    let t_chain = time(&mut || {
        gauss.enqueue(gpu, &x, &mut g)?;
        dilate.enqueue(gpu, &g, &mut d)?;
        sobel.enqueue(gpu, &d, &mut y)
    })?;
    gpu.poison(&mut fy)?;
    let t_fused = time(&mut || fused.enqueue(gpu, &x, &mut fy))?;
    let ok = gpu.stream().clone_dtoh(&y)? == gpu.stream().clone_dtoh(&fy)?;
    gpu.poison(&mut fy)?;
    let t_streamed = time(&mut || streamed.enqueue(gpu, &x, &mut fy))?;
    let stream_ok = gpu.stream().clone_dtoh(&y)? == gpu.stream().clone_dtoh(&fy)?;
    // Strip heights to compare with the plan's (`CHAIN_STRIP_ROWS=16,32,…`; tuning only).
    let mut strip_rows = Vec::new();
    for rows in std::env::var("CHAIN_STRIP_ROWS")
        .unwrap_or_default()
        .split(',')
        .filter_map(|r| r.parse().ok())
    {
        let mut plan = ChainPlan::with_variant(gpu, shape, &support::w12_chain(), border, ChainVariant::Stream)?;
        plan.set_strip_rows(rows)?;
        gpu.poison(&mut fy)?;
        let t = time(&mut || plan.enqueue(gpu, &x, &mut fy))?;
        let ok = gpu.stream().clone_dtoh(&y)? == gpu.stream().clone_dtoh(&fy)?;
        strip_rows.push((rows, t, ok));
    }
    // The same chain with two point steps between the stencils: what they add fused (one by one
    // each would be a pass over the batch of its own).
    let pointed = Chain::new()
        .scale_offset(1.25, -10.0)
        .gaussian3x3()
        .threshold(96)
        .dilate((3, 3))
        .sobel(1);
    let fused_points = ChainPlan::new(gpu, shape, &pointed, border)?;
    let t_points = time(&mut || fused_points.enqueue(gpu, &x, &mut fy))?;
    // Checked against the same steps as two fused launches through a u8 image (the tests hold
    // every chain to the ops one by one).
    let head = ChainPlan::new(
        gpu,
        shape,
        &Chain::new().scale_offset(1.25, -10.0).gaussian3x3().threshold(96),
        border,
    )?;
    let tail = ChainPlan::new(gpu, shape, &Chain::new().dilate((3, 3)).sobel(1), border)?;
    head.enqueue(gpu, &x, &mut g)?;
    tail.enqueue(gpu, &g, &mut y)?;
    let points_ok = gpu.stream().clone_dtoh(&y)? == gpu.stream().clone_dtoh(&fy)?;
    // The chain ending in the gradient magnitude (f32 out: 5 bytes per pixel fused), checked bit
    // for bit against `Gpu::sobel_magnitude` of the dilation run one by one (still in `d`).
    let dilated = ndarray::Array3::from_shape_vec((planes, side, side), gpu.stream().clone_dtoh(&d)?)
        .expect("planes × side² pixels");
    let want = gpu.sobel_magnitude(&dilated, border)?;
    let magnitude = |variant| -> gpuprims::Result<(f64, bool)> {
        let plan = ChainPlan::with_variant(
            gpu,
            shape,
            &Chain::new().gaussian3x3().dilate((3, 3)).sobel_magnitude(),
            border,
            variant,
        )?;
        // SAFETY: plain data, poisoned, then written in full by each launch.
        let mut my = unsafe { gpu.stream().alloc::<f32>(n)? };
        gpu.poison(&mut my)?;
        let t = time(&mut || plan.enqueue(gpu, &x, &mut my))?;
        let got = gpu.stream().clone_dtoh(&my)?;
        Ok((t, want.iter().map(|v| v.to_bits()).eq(got.iter().map(|v| v.to_bits()))))
    };
    let (t_magnitude, magnitude_ok) = magnitude(ChainVariant::Tiles)?;
    let row = |variant: &str, us: f64, bytes_per_px: usize, note: String| Row {
        family: "chain gauss→dilate→sobel",
        variant: variant.into(),
        n,
        median_us: us,
        bytes: (bytes_per_px * n) as f64,
        copy_gbps: copy,
        ok,
        note,
    };
    let slowest = t_gauss.max(t_dilate).max(t_sobel);
    let mut rows = vec![
        row("gaussian 3×3 alone", t_gauss, 2, String::new()),
        row("dilation 3×3 alone", t_dilate, 2, String::new()),
        row("sobel 1 alone", t_sobel, 3, String::new()),
        row("one by one (3 launches)", t_chain, 7, String::new()),
        row(
            "fused, tiles (1 launch)",
            t_fused,
            3,
            format!(
                "{:.2}× one by one; {:.2}× the slowest op alone",
                t_chain / t_fused,
                t_fused / slowest
            ),
        ),
        Row {
            ok: stream_ok,
            ..row(
                "fused, stream (1 launch; Auto)",
                t_streamed,
                3,
                format!(
                    "{:.2}× one by one; {:.2}× the slowest op alone; strips of {} rows",
                    t_chain / t_streamed,
                    t_streamed / slowest,
                    streamed.strip_rows().unwrap_or(0)
                ),
            )
        },
        Row {
            ok: points_ok,
            ..row(
                "fused + scale/offset, threshold",
                t_points,
                3,
                format!("{:+.2} µs for the two point steps", t_points - t_fused),
            )
        },
        Row {
            ok: magnitude_ok,
            ..row(
                "fused, tiles, ending in sobel_magnitude (f32)",
                t_magnitude,
                5,
                format!("{:.2}× the Sobel-ending chain by tiles", t_magnitude / t_fused),
            )
        },
    ];
    for (r, t, ok) in strip_rows {
        rows.push(Row {
            ok,
            ..row(&format!("fused, stream, strips of {r} rows"), t, 3, String::new())
        });
    }
    Ok(rows)
}
