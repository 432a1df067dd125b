//! Walks the 2D filter ladders on the tutorial's workload, a u8 8192² image with the replicate
//! border (NPP's `...Border` functions use it): 3 × 3 and 5 × 5 grey dilation through every
//! morphology rung, 15 × 15 and 31 × 31 dilation (the rungs that stay O(1) or O(k) per output),
//! the 3 × 3 Gaussian `[1 2 1]ᵀ[1 2 1] / 16` and Sobel (u8 → i16) through the linear rungs.
//! Prints median kernel time (CUDA events), GB/s (input read once + output written once), % of
//! the device-to-device copy bandwidth measured in the same run, speedups and PASS/FAIL (bit for
//! bit against the CPU reference; the CPU columns time a rayon-parallel separable max filter or
//! the direct 3 × 3 reference). Run `../shared/peers/build_and_run.sh W5 W6 W7 W8 W9` in the same
//! call for NPP and CuPy.
//!
//!     cargo run --release --example filters2d [-- --quick] [--auto]
//!
//! `--auto` times the `Auto` rung alone (with the copy bandwidth and the checks): a quick look at
//! the fastest variant of each filter, for comparing two builds.

#[path = "support/mod.rs"]
mod support;

use gpuprims::cpu::filter2d as cpu;
use gpuprims::{Border, Filter2dPlan, Filter2dShape, Filter2dVariant, MorphVariant};

const TUTORIAL: &str = "tutorial (u8 8192², RTX 4080): 5 × 5 grey dilation 570 µs one pixel per thread → 530 µs \
                        four pixels per thread → 490 µs as two 3 × 3 passes through shared memory; 3 × 3 kernels \
                        gain 20–100% from 2 × 2 / 4 × 4 pixels per thread, shared memory does not help at 3 × 3";

const BORDER: Border = Border::Replicate;

fn main() {
    let quick = support::quick();
    let auto_only = std::env::args().any(|a| a == "--auto");
    let side = if quick { 320 } else { 8192 };
    let x: Vec<u8> = support::image(side * side, 2029);
    let shape = Filter2dShape {
        planes: 1,
        h: side,
        w: side,
    };
    let Some((gpu, copy)) = support::gpu_with_copy(quick).unwrap_or_else(|e| fail(e)) else {
        let (us, _) = support::cpu_time_us(1, || support::dilate_cpu(&x, side, side, (3, 3)));
        println!("3 × 3 dilation u8 {side}²: CPU rayon {us:.1} µs");
        return;
    };
    let xd = gpu.stream().clone_htod(&x).unwrap_or_else(|e| fail(e.into()));
    let mut failed = false;
    for k in [3usize, 5, 15, 31] {
        let variants: Vec<MorphVariant> = if auto_only {
            vec![MorphVariant::Auto]
        } else if k <= 5 {
            MorphVariant::ALL.into_iter().chain([MorphVariant::Auto]).collect()
        } else {
            vec![
                MorphVariant::SharedTile,
                MorphVariant::Separable,
                MorphVariant::VanHerk,
                MorphVariant::VanHerkTile,
                MorphVariant::Auto,
            ]
        };
        let (rayon_us, want) = support::cpu_time_us(1, || support::dilate_cpu(&x, side, side, (k, k)));
        if k <= 5 && quick {
            let direct = cpu::dilate(&x, side, side, (k, k), BORDER);
            failed |= direct != want;
        }
        let plans = variants
            .iter()
            .filter_map(|&v| match Filter2dPlan::<u8>::dilate(&gpu, shape, (k, k), BORDER, v) {
                Ok(p) => Some((support::plan_label(v.name(), p.variant().name()), p)),
                Err(e) => {
                    println!("dilate {k}×{k} {}: not run — {e}", v.name());
                    None
                }
            })
            .collect();
        let rows = support::filter2d_ladder(&gpu, &xd, plans, &want, 2.0, copy).unwrap_or_else(|e| fail(e));
        failed |= rows.iter().any(|r| !r.ok);
        support::print_table(
            &format!("grey dilation {k}×{k}, u8 {side}² replicate"),
            &rows,
            f64::NAN,
            rayon_us,
        );
    }
    let variants: Vec<Filter2dVariant> = if auto_only {
        vec![Filter2dVariant::Auto]
    } else {
        Filter2dVariant::ALL
            .into_iter()
            .chain([Filter2dVariant::Auto])
            .collect()
    };
    let (rayon_us, want) = support::cpu_time_us(1, || {
        cpu::gaussian3x3(&x, side, side, BORDER)
            .into_iter()
            .map(|v| v as u8)
            .collect::<Vec<u8>>()
    });
    let plans = variants
        .iter()
        .map(|&v| {
            let p = Filter2dPlan::<u8>::gaussian3x3(&gpu, shape, BORDER, v).unwrap_or_else(|e| fail(e));
            (support::plan_label(v.name(), p.variant().name()), p)
        })
        .collect();
    let rows = support::filter2d_ladder(&gpu, &xd, plans, &want, 2.0, copy).unwrap_or_else(|e| fail(e));
    failed |= rows.iter().any(|r| !r.ok);
    support::print_table(
        &format!("Gaussian 3×3 [1 2 1]ᵀ[1 2 1]/16, u8 {side}² replicate"),
        &rows,
        f64::NAN,
        rayon_us,
    );
    for axis in [0, 1] {
        let (rayon_us, want) = support::cpu_time_us(1, || {
            cpu::sobel(&x, side, side, axis, BORDER)
                .into_iter()
                .map(|v| v as i16)
                .collect::<Vec<i16>>()
        });
        let plans = variants
            .iter()
            .map(|&v| {
                let p = Filter2dPlan::<u8, i16>::sobel(&gpu, shape, axis, BORDER, v).unwrap_or_else(|e| fail(e));
                (support::plan_label(v.name(), p.variant().name()), p)
            })
            .collect();
        let rows = support::filter2d_ladder(&gpu, &xd, plans, &want, 3.0, copy).unwrap_or_else(|e| fail(e));
        failed |= rows.iter().any(|r| !r.ok);
        support::print_table(
            &format!("Sobel axis {axis}, u8 → i16 {side}² replicate"),
            &rows,
            f64::NAN,
            rayon_us,
        );
    }
    support::finish(TUTORIAL, failed);
}

fn fail(e: gpuprims::Error) -> ! {
    eprintln!("error: {e}");
    std::process::exit(2)
}
