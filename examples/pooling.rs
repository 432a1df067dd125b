//! Walks the pooling ladder on the classic tutorial's workloads — 2 × 2 max pooling of a
//! (5, 5, 24, 24) f32 tensor, and of (5, 5, 25, 25) in ceil mode (its odd case: 13 × 13 outputs,
//! the last windows partial) — then on (64, 64, 224, 224), the size where bandwidth decides; then
//! ResNet's overlapping 3 × 3 stride-2 padding-1 windows (the vectorized kernel cannot run them;
//! the shared tile can) with and without indices, u8 max pooling of an 8192² image, and 2 × 2 and
//! 3 × 3 stride-2 average pooling. Every variant that can run the workload, `Auto` last.
//! Prints median kernel time, GB/s (input read once + output written once), % of the
//! device-to-device copy bandwidth measured in the same run, speedups and PASS/FAIL (bit for bit
//! against the CPU). The constant-input rung's time includes copying its input into the constant
//! bank, as it must; the texture rung's note gives the host cost of creating its texture object.
//!
//!     cargo run --release --example pooling [-- --quick]

#[path = "support/mod.rs"]
mod support;

use gpuprims::cpu::pool as cpupool;
use gpuprims::{AvgPool2d, Gpu, Pool2d, PoolPlan, PoolShape, PoolVariant};
use support::{PoolWork, Row};

/// The tutorial's own figures, printed beside ours.
const TUTORIAL: &str = "tutorial ((5, 5, 24, 24) f32, 2 × 2 max pool, its GPU): constant memory 0.072 ms \
                        (including the copy back), texture memory 0.128 ms";

fn all_variants() -> Vec<PoolVariant> {
    PoolVariant::ALL.iter().copied().chain([PoolVariant::Auto]).collect()
}

fn main() {
    let quick = support::quick();
    let opened = support::gpu_with_copy(quick).unwrap_or_else(|e| fail(e));
    let gpu = opened.as_ref().map(|(g, copy)| (g, *copy));
    let big = if quick { (4, 8, 56, 56) } else { (64, 64, 224, 224) };
    let two = Pool2d::new((2, 2));
    // ResNet's stem pooling: overlapping windows.
    let resnet = Pool2d::new((3, 3)).stride((2, 2)).padding((1, 1));
    let mut failed = false;
    for (dims, p, indices) in [
        ((5, 5, 24, 24), two, false),
        ((5, 5, 25, 25), two.ceil_mode(true), false),
        (big, two, false),
        (big, two, true),
        (big, resnet, false),
        (big, resnet, true),
    ] {
        failed |= max_table::<f32>("f32", dims, p, indices, gpu);
    }
    let side = if quick { 512 } else { 8192 };
    failed |= max_table::<u8>("u8", (1, 1, side, side), two, false, gpu);
    failed |= avg_table(big, AvgPool2d::new((2, 2)), gpu);
    failed |= avg_table(big, AvgPool2d::new((3, 3)).stride((2, 2)).padding((1, 1)), gpu);
    support::finish(TUTORIAL, failed);
}

/// One max-pooling table of `(n, c, h, w)` elements of `T`; true if a check failed.
fn max_table<T>(
    name: &str,
    (n, c, h, w): (usize, usize, usize, usize),
    p: Pool2d,
    indices: bool,
    gpu: Option<(&Gpu, f64)>,
) -> bool
where
    T: gpuprims::PoolElement + gpuprims::abi::pool::PoolValue + PartialEq + Send + Sync + support::PoolInputGen,
{
    let x = support::pool_input::<T>(n * c * h * w, (n * c * h + w) as u64);
    let shape = PoolShape::max(n * c, h, w, p);
    let work = PoolWork { x: &x, shape };
    let (serial, rayon, want) = support::max_pool_cpu(&work);
    let Ok((oh, ow)) = shape.output_size() else {
        return true;
    };
    let title = format!(
        "max pool {}×{} stride {}×{} pad {}×{}{}, {name} ({n}, {c}, {h}, {w}) → ({n}, {c}, {oh}, {ow}){}",
        p.kernel.0,
        p.kernel.1,
        p.stride.0,
        p.stride.1,
        p.padding.0,
        p.padding.1,
        if p.ceil_mode { " ceil mode" } else { "" },
        if indices { " + i64 indices" } else { "" }
    );
    let Some((gpu, copy)) = gpu else {
        println!("{title}: CPU serial {serial:.1} µs, CPU rayon {rayon:.1} µs");
        return false;
    };
    let variants = if indices {
        vec![
            PoolVariant::ReadOnly,
            PoolVariant::Vectorized,
            PoolVariant::SharedTile,
            PoolVariant::Auto,
        ]
    } else {
        all_variants()
    };
    let rows = support::pool_ladder(gpu, &work, &want, "max_pool2d", copy, &variants, indices, |v| {
        PoolPlan::<T>::max(gpu, shape, v)
    })
    .unwrap_or_else(|e| fail(e));
    report(&title, &rows, serial, rayon, copy)
}

/// Average pooling of `(n, c, h, w)` f32 with `p`; true if a check failed.
fn avg_table((n, c, h, w): (usize, usize, usize, usize), p: AvgPool2d, gpu: Option<(&Gpu, f64)>) -> bool {
    let x = support::pool_input::<f32>(n * c * h * w, 77);
    let shape = PoolShape::avg(n * c, h, w, p);
    let Ok((oh, ow)) = shape.output_size() else {
        return true;
    };
    let work = PoolWork { x: &x, shape };
    let view = ndarray::ArrayView3::from_shape((n * c, h, w), &x[..]).expect("shape");
    let (serial, want) = support::cpu_time_us(1, || cpupool::avg_pool2d(&view, &p).expect("valid"));
    let want: Vec<f32> = want.iter().copied().collect();
    let win = p.window();
    let (k, st, pad) = (win.kernel, win.stride, win.padding);
    let title = format!(
        "avg pool {}×{} stride {}×{} pad {}×{}, f32 ({n}, {c}, {h}, {w}) → ({n}, {c}, {oh}, {ow})",
        k.0, k.1, st.0, st.1, pad.0, pad.1
    );
    let Some((gpu, copy)) = gpu else {
        println!("{title}: CPU serial {serial:.1} µs");
        return false;
    };
    let rows = support::pool_ladder(gpu, &work, &want, "avg_pool2d", copy, &all_variants(), false, |v| {
        PoolPlan::<f32>::avg(gpu, shape, v)
    })
    .unwrap_or_else(|e| fail(e));
    report(&title, &rows, serial, f64::NAN, copy)
}

fn report(title: &str, rows: &[Row], serial: f64, rayon: f64, copy: f64) -> bool {
    support::print_table(title, rows, serial, rayon);
    if let Some(r) = rows.first() {
        println!(
            "moving these bytes at the copy bandwidth: {:.2} µs",
            r.bytes / (copy * 1e3)
        );
    }
    rows.iter().any(|r| !r.ok)
}

fn fail(e: gpuprims::Error) -> ! {
    eprintln!("error: {e}");
    std::process::exit(1);
}
