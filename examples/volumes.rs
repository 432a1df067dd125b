//! Volumes and any axis: a synthetic 3-D stack (bright blobs on a dark background plus noise)
//! through Gaussian denoising (σ = 1 per axis), a 3-D grey opening (5 × 5 × 5) and the 7 × 7 × 7
//! local variance, each checked against the CPU oracle (`gpuprims::cpu::nd`, pinned to
//! scipy.ndimage) and timed beside the CPU; then the along-axis passes and the 3-D ops on 512³
//! volumes (f32, and u8 for morphology and local moments, 1024 × 1024 × 256 u8 along each axis),
//! as median kernel time, GB/s (input read once + outputs written once) and % of the
//! device-to-device copy bandwidth measured in the same run. `--csv PATH` also writes the rows.
//!
//!     cargo run --release --example volumes [-- --quick] [--csv rows.csv]

#[path = "support/mod.rs"]
mod support;

use gpuprims::cpu::nd::{self, Anchor};
use gpuprims::ops::filter2d::gaussian_kernel;
use gpuprims::{Border, DeviceArray, Filter2dPlan, Filter2dShape, Gpu, Result};
use ndarray::{Array3, IxDyn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A stack of `(z, y, x)` with Gaussian blobs of value ~200 on a background of ~20, plus uniform
/// noise of ±15.
fn stack(shape: (usize, usize, usize), seed: u64) -> Array3<f32> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let blobs: Vec<[f32; 4]> = (0..12)
        .map(|_| {
            [
                r.random_range(0.0..shape.0 as f32),
                r.random_range(0.0..shape.1 as f32),
                r.random_range(0.0..shape.2 as f32),
                r.random_range(2.0f32..6.0),
            ]
        })
        .collect();
    Array3::from_shape_fn(shape, |(z, y, x)| {
        let b: f32 = blobs
            .iter()
            .map(|&[bz, by, bx, s]| {
                let d2 = (z as f32 - bz).powi(2) + (y as f32 - by).powi(2) + (x as f32 - bx).powi(2);
                180.0 * (-d2 / (2.0 * s * s)).exp()
            })
            .sum();
        20.0 + b.min(230.0)
    }) + Array3::from_shape_simple_fn(shape, || r.random_range(-15.0f32..15.0))
}

fn main() {
    let quick = support::quick();
    let csv = std::env::args().skip_while(|a| a != "--csv").nth(1);
    let opened = support::gpu_with_copy(quick).unwrap_or_else(|e| fail(e));
    let mut failed = pipeline(opened.as_ref().map(|(g, _)| g), quick).unwrap_or_else(|e| fail(e));
    if let Some((gpu, copy)) = &opened {
        let rows = timings(gpu, *copy, quick).unwrap_or_else(|e| fail(e));
        failed |= rows.iter().any(|r| !r.ok);
        if let Some(path) = csv {
            let mut out = String::from("op,shape,median_us,gbps,pct_copy\n");
            for r in &rows {
                out += &format!(
                    "{},\"{}\",{:.2},{:.1},{:.1}\n",
                    r.variant,
                    r.note,
                    r.median_us,
                    r.gbps(),
                    r.pct_copy()
                );
            }
            std::fs::write(&path, out).unwrap_or_else(|e| fail(e));
        }
    }
    support::finish("", failed);
}

fn fail(e: impl std::fmt::Display) -> ! {
    eprintln!("error: {e}");
    std::process::exit(2)
}

/// The denoise → opening → local variance pipeline on one stack, GPU against CPU.
fn pipeline(gpu: Option<&Gpu>, quick: bool) -> Result<bool> {
    let shape = if quick { (24, 40, 36) } else { (128, 256, 256) };
    let dims = [shape.0, shape.1, shape.2];
    let x = stack(shape, 75);
    let flat: Vec<f32> = x.iter().copied().collect();
    let b = Border::Reflect;
    let (cpu_us, (smooth, opened, (_, var))) = support::cpu_time_us(1, || {
        let smooth = nd::gaussian(&flat, &dims, &[1.0; 3], 4.0, b);
        let eroded = nd::extremum(&smooth, &dims, &[5; 3], b, false, Anchor::Centre);
        let opened = nd::extremum(&eroded, &dims, &[5; 3], b, true, Anchor::Mirrored);
        let sums = nd::box_sums(&opened, &dims, &[7; 3], b);
        (smooth, opened, sums)
    });
    println!("\n### Denoise → 3-D opening → local variance, {shape:?} f32, reflect");
    println!("CPU (one thread): {:.1} ms", cpu_us / 1e3);
    let Some(gpu) = gpu else {
        return Ok(false);
    };
    let dev = DeviceArray::upload(gpu, &x.clone().into_dyn())?;
    let run = || -> Result<_> {
        let s = gpu.gaussian_nd(&dev, &[1.0; 3], 4.0, b)?;
        let o = gpu.opening_nd(&s, &[5; 3], b)?;
        let (_, v) = gpu.local_mean_variance_nd::<f64, _, _>(&o, &[7; 3], b)?;
        Ok((s, o, v))
    };
    let t = gpu.time_launches(2, if quick { 1 } else { 20 }, |_| Ok(()), |_| run().map(|_| ()))?;
    let (s, o, v) = run()?;
    let (s, o, v) = (s.download(gpu)?, o.download(gpu)?, v.download(gpu)?);
    let n = 343.0;
    let ok = s.iter().eq(smooth.iter())
        && o.iter().eq(opened.iter())
        && v.iter()
            .zip(&var)
            .zip(&nd::box_sums(&opened, &dims, &[7; 3], b).0)
            .all(|((&g, &q), &s)| {
                let want = (q / n - (s / n).powi(2)).max(0.0);
                (g - want).abs() <= 1e-6 * want.abs().max(1.0)
            });
    println!(
        "GPU: {:.1} ms ({:.0}× the CPU), {}",
        t.median_us / 1e3,
        cpu_us / t.median_us,
        if ok {
            "PASS (bit for bit, variance within 1e-6)"
        } else {
            "FAIL"
        }
    );
    Ok(!ok)
}

/// One timed row: `op` on a device input, median over runs, bytes in + out.
fn timed<T>(
    gpu: &Gpu,
    copy: f64,
    label: String,
    shape: String,
    bytes: f64,
    quick: bool,
    mut op: impl FnMut() -> Result<T>,
) -> Result<support::Row> {
    let probe = gpu.time_launches(1, 1, |_| Ok(()), |_| op().map(|_| ()))?;
    let runs = if quick {
        1
    } else {
        support::runs_for(probe.median_us, 50)
    };
    let t = gpu.time_launches(2, runs, |_| Ok(()), |_| op().map(|_| ()))?;
    let row = support::Row {
        family: "volumes",
        variant: label,
        n: 0,
        median_us: t.median_us,
        bytes,
        copy_gbps: copy,
        ok: true,
        note: shape,
    };
    println!(
        "{:<44} {:>16} {:>10.1} µs {:>7.0} GB/s {:>6.1}% copy",
        row.variant,
        row.note,
        row.median_us,
        row.gbps(),
        row.pct_copy()
    );
    Ok(row)
}

fn timings(gpu: &Gpu, copy: f64, quick: bool) -> Result<Vec<support::Row>> {
    let (f_shape, u_shape) = if quick {
        ([32, 48, 40], [40, 32, 24])
    } else {
        ([512; 3], [256, 1024, 1024])
    };
    let mut r = ChaCha8Rng::seed_from_u64(512);
    let n_f: usize = f_shape.iter().product();
    let n_u: usize = u_shape.iter().product();
    let xf = DeviceArray::upload(
        gpu,
        &ndarray::ArrayD::from_shape_simple_fn(IxDyn(&f_shape), || r.random_range(0.0f32..1.0)),
    )?;
    let xu = DeviceArray::upload(
        gpu,
        &ndarray::ArrayD::from_shape_simple_fn(IxDyn(&u_shape), || r.random::<u8>()),
    )?;
    let xu512 = DeviceArray::upload(
        gpu,
        &ndarray::ArrayD::from_shape_simple_fn(IxDyn(&f_shape), || r.random::<u8>()),
    )?;
    let fs = format!("{f_shape:?} f32");
    let us = format!("{u_shape:?} u8");
    let u5 = format!("{f_shape:?} u8");
    let b = Border::Reflect;
    let mut rows = Vec::new();
    println!("\n### Along one axis and 3-D ops (reflect)");
    for axis in 0..3 {
        for size in [5, 31] {
            let label = format!("uniform_filter1d w{size} axis {axis}");
            rows.push(timed(
                gpu,
                copy,
                label.clone(),
                fs.clone(),
                8.0 * n_f as f64,
                quick,
                || gpu.uniform_filter1d(&xf, size, axis, b),
            )?);
            rows.push(timed(gpu, copy, label, us.clone(), 2.0 * n_u as f64, quick, || {
                gpu.uniform_filter1d(&xu, size, axis, b)
            })?);
        }
        let sizes: Vec<usize> = (0..3).map(|a| if a == axis { 31 } else { 1 }).collect();
        let label = format!("running max w31 axis {axis}");
        rows.push(timed(
            gpu,
            copy,
            label.clone(),
            fs.clone(),
            8.0 * n_f as f64,
            quick,
            || gpu.dilate_nd(&xf, &sizes, b),
        )?);
        rows.push(timed(gpu, copy, label, us.clone(), 2.0 * n_u as f64, quick, || {
            gpu.dilate_nd(&xu, &sizes, b)
        })?);
    }
    rows.push(timed(
        gpu,
        copy,
        "gaussian_nd σ=2".into(),
        fs.clone(),
        8.0 * n_f as f64,
        quick,
        || gpu.gaussian_nd(&xf, &[2.0; 3], 4.0, b),
    )?);
    // The Gaussian's (y, x) pair alone: the fused tile kernel and its baseline, two passes
    // through a scratch volume (the same bits).
    let planes = Filter2dShape {
        planes: f_shape[0],
        h: f_shape[1],
        w: f_shape[2],
    };
    let taps = gaussian_kernel(2.0, 4.0);
    let mut yf = DeviceArray::<f32, IxDyn>::uninit(gpu, IxDyn(&f_shape))?;
    // And the axis-0 pass: the column pass over the volume as one 512 × 512² plane, and the tile
    // kernel there with the one-tap row pass `[1]` (the same bits).
    let column = Filter2dShape {
        planes: 1,
        h: f_shape[0],
        w: f_shape[1] * f_shape[2],
    };
    rows.push(timed(
        gpu,
        copy,
        "gaussian σ=2 axis 0: column pass".into(),
        fs.clone(),
        8.0 * n_f as f64,
        quick,
        || gpu.gaussian_nd(&xf, &[2.0, 0.0, 0.0], 4.0, b),
    )?);
    for (label, plan) in [
        (
            "gaussian σ=2 axis 0: tile, [1] rows",
            Filter2dPlan::separable(gpu, column, &taps, &[1.0], b)?,
        ),
        (
            "gaussian σ=2 axes 1, 2: fused tile",
            Filter2dPlan::separable(gpu, planes, &taps, &taps, b)?,
        ),
        (
            "gaussian σ=2 axes 1, 2: two passes",
            Filter2dPlan::separable_passes(gpu, planes, &taps, &taps, b)?,
        ),
    ] {
        rows.push(timed(
            gpu,
            copy,
            label.into(),
            fs.clone(),
            8.0 * n_f as f64,
            quick,
            || plan.enqueue(gpu, xf.as_slice(), yf.as_mut_slice()),
        )?);
    }
    for k in [5, 31] {
        rows.push(timed(
            gpu,
            copy,
            format!("dilate_nd {k}³"),
            u5.clone(),
            2.0 * n_f as f64,
            quick,
            || gpu.dilate_nd(&xu512, &[k; 3], b),
        )?);
    }
    rows.push(timed(
        gpu,
        copy,
        "local_mean_variance_nd 15³ → f32".into(),
        u5.clone(),
        9.0 * n_f as f64,
        quick,
        || gpu.local_mean_variance_nd::<f32, _, _>(&xu512, &[15; 3], b),
    )?);
    rows.push(timed(
        gpu,
        copy,
        "local_mean_variance_nd 15³ → f32".into(),
        fs.clone(),
        12.0 * n_f as f64,
        quick,
        || gpu.local_mean_variance_nd::<f32, _, _>(&xf, &[15; 3], b),
    )?);
    Ok(rows)
}
