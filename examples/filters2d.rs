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
//!     cargo run --release --example filters2d [-- --quick]

#[path = "support/mod.rs"]
mod support;

use cudarc::driver::{CudaSlice, DeviceRepr};
use gpuprims::cpu::filter2d as cpu;
use gpuprims::{Border, Filter2dPlan, Filter2dShape, Filter2dVariant, Gpu, MorphVariant};
use rayon::prelude::*;
use support::Row;

const TUTORIAL: &str = "tutorial (u8 8192², RTX 4080): 5 × 5 grey dilation 570 µs one pixel per thread → 530 µs \
                        four pixels per thread → 490 µs as two 3 × 3 passes through shared memory; 3 × 3 kernels \
                        gain 20–100% from 2 × 2 / 4 × 4 pixels per thread, shared memory does not help at 3 × 3";

const BORDER: Border = Border::Replicate;

fn main() {
    let quick = support::quick();
    let side = if quick { 320 } else { 8192 };
    let x: Vec<u8> = support::image(side * side, 2029);
    let shape = Filter2dShape {
        planes: 1,
        h: side,
        w: side,
    };
    let Some((gpu, copy)) = support::gpu_with_copy(quick).unwrap_or_else(|e| fail(e)) else {
        let (us, _) = support::cpu_time_us(1, || separable_max(&x, side, side, (3, 3)));
        println!("3 × 3 dilation u8 {side}²: CPU rayon {us:.1} µs");
        return;
    };
    let xd = gpu.stream().clone_htod(&x).unwrap_or_else(|e| fail(e.into()));
    let mut failed = false;
    for k in [3usize, 5, 15, 31] {
        let variants: Vec<MorphVariant> = if k <= 5 {
            MorphVariant::ALL.into_iter().chain([MorphVariant::Auto]).collect()
        } else {
            vec![
                MorphVariant::SharedTile,
                MorphVariant::Separable,
                MorphVariant::VanHerk,
                MorphVariant::Auto,
            ]
        };
        let (rayon_us, want) = support::cpu_time_us(1, || separable_max(&x, side, side, (k, k)));
        if k <= 5 && quick {
            let direct = cpu::dilate(&x, side, side, (k, k), BORDER);
            failed |= direct != want;
        }
        let plans = variants
            .iter()
            .filter_map(|&v| match Filter2dPlan::<u8>::dilate(&gpu, shape, (k, k), BORDER, v) {
                Ok(p) => Some((label(v.name(), p.variant_name()), p)),
                Err(e) => {
                    println!("dilate {k}×{k} {}: not run — {e}", v.name());
                    None
                }
            })
            .collect();
        let rows = ladder(&gpu, &xd, plans, &want, 2.0, copy).unwrap_or_else(|e| fail(e));
        failed |= rows.iter().any(|r| !r.ok);
        support::print_table(
            &format!("grey dilation {k}×{k}, u8 {side}² replicate"),
            &rows,
            f64::NAN,
            rayon_us,
        );
    }
    let variants: Vec<Filter2dVariant> = Filter2dVariant::ALL
        .into_iter()
        .chain([Filter2dVariant::Auto])
        .collect();
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
            (label(v.name(), p.variant_name()), p)
        })
        .collect();
    let rows = ladder(&gpu, &xd, plans, &want, 2.0, copy).unwrap_or_else(|e| fail(e));
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
                (label(v.name(), p.variant_name()), p)
            })
            .collect();
        let rows = ladder(&gpu, &xd, plans, &want, 3.0, copy).unwrap_or_else(|e| fail(e));
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

fn label(asked: &str, ran: &str) -> String {
    if asked == ran {
        asked.into()
    } else {
        format!("{asked} ({ran})")
    }
}

/// Times each plan (output poisoned before every run), checks its result bit for bit.
fn ladder<O: DeviceRepr + Clone + Default + PartialEq>(
    gpu: &Gpu,
    x: &CudaSlice<u8>,
    plans: Vec<(String, Filter2dPlan<u8, O>)>,
    want: &[O],
    bytes_per_pixel: f64,
    copy: f64,
) -> gpuprims::Result<Vec<Row>> {
    // SAFETY: plain data, poisoned before every run and written in full by every plan.
    let y = std::cell::RefCell::new(unsafe { gpu.stream().alloc::<O>(want.len()) }?);
    let mut rows = Vec::new();
    for (name, plan) in plans {
        let poison = |_| gpu.poison(&mut y.borrow_mut());
        let launch = |_| plan.enqueue(gpu, x, &mut y.borrow_mut());
        let probe = gpu.time_launches(1, 1, poison, launch)?;
        let runs = ((300e3 / probe.median_us) as usize).clamp(3, 100);
        let t = gpu.time_launches(3, runs, poison, launch)?;
        poison(0)?;
        launch(0)?;
        let got = gpu.stream().clone_dtoh(&*y.borrow())?;
        rows.push(Row {
            family: "filter2d",
            variant: name,
            n: want.len(),
            median_us: t.median_us,
            bytes: bytes_per_pixel * want.len() as f64,
            copy_gbps: copy,
            ok: got == want,
            note: String::new(),
        });
    }
    Ok(rows)
}

/// CPU baseline and reference of a `(kh, kw)` grey dilation: a column max then a row max
/// (rayon over rows), the window anchored as `grey_dilation`'s, replicate border.
fn separable_max(x: &[u8], h: usize, w: usize, (kh, kw): (usize, usize)) -> Vec<u8> {
    let (ay, ax) = ((kh - 1) / 2, (kw - 1) / 2);
    let clamp = |i: i64, n: usize| i.clamp(0, n as i64 - 1) as usize;
    let mut cols = vec![0u8; h * w];
    cols.par_chunks_mut(w).enumerate().for_each(|(r, out)| {
        for i in 0..kh {
            let src = &x[clamp(r as i64 + i as i64 - ay as i64, h) * w..][..w];
            for (o, s) in out.iter_mut().zip(src) {
                *o = (*o).max(*s);
            }
        }
    });
    let mut y = vec![0u8; h * w];
    y.par_chunks_mut(w).enumerate().for_each(|(r, out)| {
        let row = &cols[r * w..][..w];
        for (c, o) in out.iter_mut().enumerate() {
            *o = (0..kw)
                .map(|j| row[clamp(c as i64 + j as i64 - ax as i64, w)])
                .max()
                .unwrap_or(0);
        }
    });
    y
}

fn fail(e: gpuprims::Error) -> ! {
    eprintln!("error: {e}");
    std::process::exit(2)
}
