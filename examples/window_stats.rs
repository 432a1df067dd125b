//! Walks the sliding-window statistics ladder on the classic tutorial's workload — for every pixel
//! of an 8192 × 8192 image, the sum and the sum of squares of the 15 pixels around it along its
//! row, as two f32 images — with u8, i32 and f32 pixels (f32 takes the float kernels: sums in
//! f64, no subtraction); then widths 63 and 255 (the running sums' O(1) shows), then the 15 × 15
//! local mean and variance (two f32 images) of the u8 image through the separable, fused and
//! warp-prefix 2D variants. Prints median kernel time, GB/s (input read once + both outputs
//! written once), % of the device-to-device copy bandwidth measured in the same run, speedups and
//! PASS/FAIL against the CPU (exact sums rounded once to f32).
//!
//!     cargo run --release --example window_stats [-- --quick] [--boxes]
//!
//! `--boxes` runs the 2D section alone (profiling), at 15 × 15 and at the window sides that place
//! `Auto`'s crossovers between the 2D variants (5, 31, 63, 127); `--side N` keeps only the N × N
//! box.

#[path = "support/mod.rs"]
mod support;

use gpuprims::{Border, Gpu, WindowVariant};
use support::WindowWork;

/// The tutorial's own figures (9800 GT, int image, width 15), printed beside ours.
const TUTORIAL: &str = "tutorial (8192² int image, width 15, its 9800 GT): global accumulate 12 ms; \
                        split loops 7 ms; shared-memory staging 1.65 ms";

fn main() {
    let quick = support::quick();
    let (h, w) = if quick { (96, 1000) } else { (8192, 8192) };
    let opened = support::gpu_with_copy(quick).unwrap_or_else(|e| fail(e));
    let gpu = opened.as_ref().map(|(g, copy)| (g, *copy));
    let mut failed = false;
    let all: Vec<WindowVariant> = WindowVariant::ALL
        .iter()
        .copied()
        .chain([WindowVariant::Auto])
        .collect();
    let px8 = support::image::<u8>(h * w, 2026);
    let px32 = support::image::<i32>(h * w, 2026);
    let pxf = support::image::<f32>(h * w, 2026);
    let rows_too = !std::env::args().any(|a| a == "--boxes");
    for width in [15, 63, 255].into_iter().filter(|_| rows_too) {
        // The full ladder at width 15; the fast rungs (and the tutorial's slowest for scale) after.
        let variants: &[WindowVariant] = if width == 15 {
            &all
        } else {
            &[
                WindowVariant::StagedWindow,
                WindowVariant::SharedTile,
                WindowVariant::RunningSum,
                WindowVariant::Auto,
            ]
        };
        failed |= row_table("u8", &px8, h, w, width, gpu, variants);
        failed |= row_table("i32", &px32, h, w, width, gpu, variants);
        failed |= row_table("f32", &pxf, h, w, width, gpu, variants);
    }
    // The 15 × 15; with --boxes also the windows that place Auto's fused/separable
    // crossover.
    // `--side N` runs the N × N box alone (profiling).
    let only: Option<usize> = std::env::args()
        .skip_while(|a| a != "--side")
        .nth(1)
        .and_then(|v| v.parse().ok());
    let windows: &[usize] = if rows_too { &[15] } else { &[15, 5, 31, 63, 127] };
    for &side in windows.iter().filter(|&&s| only.is_none_or(|o| o == s)) {
        let window = (side, side);
        let (serial, rayon, want) = support::box_cpu(&px8, w, window, Border::Reflect);
        match gpu {
            Some((g, copy)) => {
                let rows = support::box_ladder(g, &px8, (h, w), window, Border::Reflect, &want, copy)
                    .unwrap_or_else(|e| fail(e));
                failed |= rows.iter().any(|r| !r.ok);
                let title = format!(
                    "local mean + variance, {side} × {side} boxes, u8 {h} × {w} → 2 × f32, reflect border (bytes = 9 per \
                     pixel)"
                );
                support::print_table(&title, &rows, serial, rayon);
                println!(
                    "moving these bytes at the copy bandwidth: {:.2} µs",
                    9.0 * (h * w) as f64 / (copy * 1e3)
                );
            }
            _ => println!("{side} × {side} local mean + variance: CPU serial {serial:.1} µs, rayon {rayon:.1} µs"),
        }
    }
    support::finish(TUTORIAL, failed);
}

/// Runs (or, without a GPU, only times the CPU of) one row-window table; true if a check failed.
fn row_table<T>(
    name: &str,
    x: &[T],
    h: usize,
    w: usize,
    width: usize,
    gpu: Option<(&Gpu, f64)>,
    variants: &[WindowVariant],
) -> bool
where
    T: gpuprims::WindowElement + gpuprims::cpu::window::OracleElement,
    f32: gpuprims::WindowFloat<T>,
    gpuprims::abi::window::Sums<T::S, T::Q>: Send,
{
    let work = WindowWork {
        x,
        rows: h,
        n: w,
        width,
        border: Border::Zero,
    };
    let (serial, rayon, want) = support::window_cpu(&work);
    let Some((gpu, copy)) = gpu else {
        println!("{name} width {width}: CPU serial {serial:.1} µs, CPU rayon {rayon:.1} µs");
        return false;
    };
    let rows =
        support::window_ladder(gpu, &work, &want, "window_sum_sumsq", copy, variants).unwrap_or_else(|e| fail(e));
    let title = format!(
        "row window sum + sum of squares, width {width}, {name} {h} × {w} → 2 × f32, zero border (bytes = {} per pixel)",
        size_of::<T>() + 8
    );
    support::print_table(&title, &rows, serial, rayon);
    let moving_us = ((size_of::<T>() + 8) * h * w) as f64 / (copy * 1e3);
    println!("moving these bytes at the copy bandwidth: {moving_us:.2} µs");
    rows.iter().any(|r| !r.ok)
}

fn fail(e: gpuprims::Error) -> ! {
    eprintln!("error: {e}");
    std::process::exit(1);
}
