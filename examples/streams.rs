//! Streams, batching and graphs on the classic small-image case: 64 u8 images of 512² through a
//! three-op chain (Gaussian 3 × 3 → 3 × 3 grey dilation → Sobel along axis 1, u8 → i16), all
//! device-resident. One image fills a fraction of the GPU, so a launch per image per op is
//! launch-bound; the table walks the ways out:
//!
//! 1. op calls per image (each call plans and allocates its output), one stream;
//! 2. prepared plans, a launch per image per op, one stream — the baseline;
//! 3. the same launches spread over 4 forked streams (the tutorial's remedy);
//! 4. a CUDA graph of (2), captured once, replayed;
//! 5. one batched launch per op over the (64, 512, 512) stack;
//! 6. a graph of (5);
//! 7. the chain fused ([`gpuprims::Chain`]) by tiles: one launch over the stack, each image read
//!    once and the result written once, the intermediates in shared memory;
//! 8. the chain fused and streamed (`Auto`'s choice): each warp down a strip of rows, every step
//!    in registers.
//!
//! Times are CUDA events on the main stream around the whole chain (forked streams join it), so
//! host enqueue time counts when the GPU waits for it. Then host ↔ device transfers: pageable
//! copies, pinned copies, and pinned copies in 4 chunks on 4 streams so transfers overlap kernels.
//!
//!     cargo run --release --example streams [-- --quick]

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;

use gpuprims::cpu::filter2d as cpu;
use gpuprims::{
    Border, ChainPlan, ChainVariant, DeviceArray, Filter2dPlan, Filter2dShape, Filter2dVariant, Gpu, MorphVariant,
    PinnedArray, Result,
};
use ndarray::{Array3, Axis, Ix2, Ix3, s};

const BORDER: Border = Border::Reflect;
const STREAMS: usize = 4;

/// The chain's three plans for one shape.
struct OpPlans {
    gauss: Filter2dPlan<u8>,
    dilate: Filter2dPlan<u8>,
    sobel: Filter2dPlan<u8, i16>,
}

impl OpPlans {
    fn new(gpu: &Gpu, shape: Filter2dShape) -> Result<OpPlans> {
        Ok(OpPlans {
            gauss: Filter2dPlan::gaussian3x3(gpu, shape, BORDER, Filter2dVariant::Auto)?,
            dilate: Filter2dPlan::dilate(gpu, shape, (3, 3), BORDER, MorphVariant::Auto)?,
            sobel: Filter2dPlan::sobel(gpu, shape, 1, BORDER, Filter2dVariant::Auto)?,
        })
    }
}

/// One image's (or the stack's) buffers: input, two intermediates, output.
struct Buffers<D: ndarray::Dimension> {
    x: DeviceArray<u8, D>,
    g: DeviceArray<u8, D>,
    d: DeviceArray<u8, D>,
    y: DeviceArray<i16, D>,
}

impl<D: ndarray::Dimension> Buffers<D> {
    fn new(gpu: &Gpu, host: &ndarray::ArrayView<u8, D>) -> Result<Self> {
        Ok(Buffers {
            x: DeviceArray::upload(gpu, host)?,
            g: DeviceArray::uninit(gpu, host.raw_dim())?,
            d: DeviceArray::uninit(gpu, host.raw_dim())?,
            y: DeviceArray::uninit(gpu, host.raw_dim())?,
        })
    }

    fn enqueue(&mut self, gpu: &Gpu, chain: &OpPlans) -> Result<()> {
        chain.gauss.enqueue(gpu, self.x.as_slice(), self.g.as_mut_slice())?;
        chain.dilate.enqueue(gpu, self.g.as_slice(), self.d.as_mut_slice())?;
        chain.sobel.enqueue(gpu, self.d.as_slice(), self.y.as_mut_slice())
    }

    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        gpu.poison(self.y.as_mut_slice())
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let quick = support::quick();
    let (n, side) = if quick { (8, 96) } else { (64, 512) };
    let Some((gpu, copy)) = support::gpu_with_copy(quick)? else {
        return Ok(());
    };
    let host = Array3::from_shape_vec((n, side, side), support::image(n * side * side, 512)).expect("n · side²");
    // The CPU reference of the chain, plane by plane.
    let want: Vec<i16> = host
        .axis_iter(Axis(0))
        .flat_map(|p| {
            let p = p.as_standard_layout();
            let x = p.as_slice().expect("standard layout");
            let g: Vec<u8> = cpu::gaussian3x3(x, side, side, BORDER)
                .into_iter()
                .map(|v| v as u8)
                .collect();
            let d = cpu::dilate(&g, side, side, (3, 3), BORDER);
            cpu::sobel(&d, side, side, 1, BORDER).into_iter().map(|v| v as i16)
        })
        .collect();
    let image = Filter2dShape {
        planes: 1,
        h: side,
        w: side,
    };
    let stack = Filter2dShape {
        planes: n,
        h: side,
        w: side,
    };
    let per_image = OpPlans::new(&gpu, image)?;
    let batched = OpPlans::new(&gpu, stack)?;
    let streams: Vec<Gpu> = (0..STREAMS).map(|_| gpu.fork_stream()).collect::<Result<_>>()?;
    // Per-image buffers on the main stream, and a second set owned by the forked streams (image
    // i on stream i mod 4), so no launch crosses streams.
    let mut singles: Vec<Buffers<Ix2>> = host
        .axis_iter(Axis(0))
        .map(|p| Buffers::new(&gpu, &p))
        .collect::<Result<_>>()?;
    let mut spread: Vec<Buffers<Ix2>> = host
        .axis_iter(Axis(0))
        .enumerate()
        .map(|(i, p)| Buffers::new(&streams[i % STREAMS], &p))
        .collect::<Result<_>>()?;
    let mut whole: Buffers<Ix3> = Buffers::new(&gpu, &host.view())?;
    gpu.synchronize()?;
    for s in &streams {
        s.synchronize()?;
    }

    // Each launch's input read once and output written once: one by one 1 + 1, 1 + 1, 1 + 2
    // bytes per pixel; fused 1 + 2.
    let pixels = (n * side * side) as f64;
    let mut rows: Vec<support::Row> = Vec::new();
    let mut failed = false;
    let runs = if quick { 5 } else { 50 };
    let mut push_with = |name: &str, t: gpuprims::Timing, got: Vec<i16>, note: &str, bytes_per_px: f64| {
        let bytes = pixels * bytes_per_px;
        let ok = got == want;
        failed |= !ok;
        rows.push(support::Row {
            family: "streams",
            variant: name.into(),
            n,
            median_us: t.median_us,
            bytes,
            copy_gbps: copy,
            ok,
            note: note.into(),
        });
    };
    let mut push = |name: &str, t: gpuprims::Timing, got: Vec<i16>, note: &str| push_with(name, t, got, note, 7.0);
    let gather = |bufs: &[Buffers<Ix2>], via: &Gpu| -> Result<Vec<i16>> {
        let mut v = Vec::with_capacity(n * side * side);
        for b in bufs {
            v.extend(b.y.download(via)?.iter().copied());
        }
        Ok(v)
    };

    // 1. Op calls per image.
    let outs = std::cell::RefCell::new(Vec::new());
    let t = gpu.time_launches(
        2,
        runs,
        |_| Ok(()),
        |_| {
            let mut o = outs.borrow_mut();
            o.clear();
            for b in &singles {
                let g = gpu.gaussian3x3(&b.x, BORDER)?;
                let d = gpu.dilate(&g, (3, 3), BORDER)?;
                o.push(gpu.sobel(&d, 1, BORDER)?);
            }
            Ok(())
        },
    )?;
    let got: Vec<i16> = outs
        .borrow()
        .iter()
        .flat_map(|y| y.download(&gpu).unwrap().into_iter())
        .collect();
    push(
        "op calls per image, 1 stream",
        t,
        got,
        "3 op calls × 64: plan + output allocation each",
    );

    // 2. Prepared plans, one launch per image per op.
    let singles_cell = std::cell::RefCell::new(&mut singles);
    let t = gpu.time_launches(
        2,
        runs,
        |_| singles_cell.borrow_mut().iter_mut().try_for_each(|b| b.poison(&gpu)),
        |_| {
            singles_cell
                .borrow_mut()
                .iter_mut()
                .try_for_each(|b| b.enqueue(&gpu, &per_image))
        },
    )?;
    push(
        "plans per image, 1 stream",
        t,
        gather(&singles, &gpu)?,
        "baseline: 192 launches",
    );

    // 3. The same launches over 4 streams, each joined to the main stream's start and end events.
    let spread_cell = std::cell::RefCell::new(&mut spread);
    let t = gpu.time_launches(
        2,
        runs,
        |_| {
            for (i, b) in spread_cell.borrow_mut().iter_mut().enumerate() {
                b.poison(&streams[i % STREAMS])?;
            }
            Ok(())
        },
        |_| {
            for s in &streams {
                s.join(&gpu)?;
            }
            for (i, b) in spread_cell.borrow_mut().iter_mut().enumerate() {
                b.enqueue(&streams[i % STREAMS], &per_image)?;
            }
            streams.iter().try_for_each(|s| gpu.join(s))
        },
    )?;
    push(
        "plans per image, 4 streams",
        t,
        gather(&spread, &gpu)?,
        "image i on stream i mod 4",
    );

    // 4. A graph of the per-image launches.
    let graph = gpu.capture(|g| singles.iter_mut().try_for_each(|b| b.enqueue(g, &per_image)))?;
    graph.launch()?; // first launch uploads the graph
    let singles_cell = std::cell::RefCell::new(&mut singles);
    let t = gpu.time_launches(
        2,
        runs,
        |_| singles_cell.borrow_mut().iter_mut().try_for_each(|b| b.poison(&gpu)),
        |_| graph.launch(),
    )?;
    push(
        "graph of per-image plans",
        t,
        gather(&singles, &gpu)?,
        "captured once, one launch",
    );

    // 5. One batched launch per op.
    let whole_cell = std::cell::RefCell::new(&mut whole);
    let t = gpu.time_launches(
        2,
        runs,
        |_| whole_cell.borrow_mut().poison(&gpu),
        |_| whole_cell.borrow_mut().enqueue(&gpu, &batched),
    )?;
    let got = whole.y.download(&gpu)?.iter().copied().collect();
    push("batched plans (64 planes)", t, got, "3 launches");

    // 6. A graph of the batched launches.
    let graph = gpu.capture(|g| whole.enqueue(g, &batched))?;
    graph.launch()?;
    let t = gpu.time_launches(2, runs, |_| whole.poison(&gpu), |_| graph.launch())?;
    let got = whole.y.download(&gpu)?.iter().copied().collect();
    push("graph of batched plans", t, got, "");

    // 7–8. The chain fused: one launch, by tiles, then streamed.
    for (variant, name, note) in [
        (
            ChainVariant::Tiles,
            "fused chain, tiles (64 planes)",
            "1 launch: reads 1, writes 2 bytes per pixel; steps through shared memory",
        ),
        (
            ChainVariant::Stream,
            "fused chain, stream (64 planes)",
            "1 launch; steps in registers (Auto)",
        ),
    ] {
        let fused = ChainPlan::with_variant(&gpu, stack, &support::w12_chain(), BORDER, variant)?;
        let cell = std::cell::RefCell::new(&mut whole);
        let t = gpu.time_launches(
            2,
            runs,
            |_| cell.borrow_mut().poison(&gpu),
            |_| {
                let mut b = cell.borrow_mut();
                let Buffers { x, y, .. } = &mut **b;
                fused.enqueue(&gpu, x.as_slice(), y.as_mut_slice())
            },
        )?;
        let got = whole.y.download(&gpu)?.iter().copied().collect();
        push_with(name, t, got, note, 3.0);
    }

    let base = rows[1].median_us;
    print_streams_table(
        &format!("{n} × u8 {side}²: Gaussian 3×3 → dilation 3×3 → Sobel axis 1 (u8 → i16), {BORDER:?} border"),
        &rows,
        base,
    );

    failed |= transfers(&gpu, &streams, &host, &want, quick)?;
    support::finish(
        "tutorial: four kernels on each of four streams overlap when one kernel cannot fill the GPU",
        failed,
    );
    Ok(())
}

fn print_streams_table(title: &str, rows: &[support::Row], base_us: f64) {
    println!("\n### {title}");
    println!("| variant | median µs | µs per image | GB/s | % copy BW | × per-image launches | check | note |");
    println!("|---|---:|---:|---:|---:|---:|---|---|");
    for r in rows {
        println!(
            "| {} | {:.1} | {:.2} | {:.1} | {:.1}% | {:.2} | {} | {} |",
            r.variant,
            r.median_us,
            r.median_us / r.n as f64,
            r.gbps(),
            r.pct_copy(),
            base_us / r.median_us,
            if r.ok { "PASS" } else { "FAIL" },
            r.note
        );
    }
}

/// Host → device → chain → host for the whole stack, into preallocated buffers: pageable
/// copies; pinned copies on one stream; pinned copies in 4 chunks on 4 streams (chunk k's copies
/// overlap chunk k ± 1's kernels). Wall time on the host from the first enqueue to the results
/// in host memory; the results are checked after the timing.
fn transfers(gpu: &Gpu, streams: &[Gpu], host: &Array3<u8>, want: &[i16], quick: bool) -> Result<bool> {
    let (n, side) = (host.shape()[0], host.shape()[1]);
    let chunk = n / STREAMS;
    let whole = OpPlans::new(
        gpu,
        Filter2dShape {
            planes: n,
            h: side,
            w: side,
        },
    )?;
    let part = OpPlans::new(
        gpu,
        Filter2dShape {
            planes: chunk,
            h: side,
            w: side,
        },
    )?;
    let host_slice = host.as_slice().expect("standard layout");
    let mut pageable_out = vec![0i16; n * side * side];
    let pinned_in = PinnedArray::from_array(gpu, host)?;
    let mut pinned_out = PinnedArray::<i16, _>::zeros(gpu, host.raw_dim())?;
    let chunks_in: Vec<PinnedArray<u8, Ix3>> = (0..STREAMS)
        .map(|k| PinnedArray::from_array(gpu, &host.slice(s![k * chunk..(k + 1) * chunk, .., ..])))
        .collect::<Result<_>>()?;
    let mut chunks_out: Vec<PinnedArray<i16, Ix3>> = (0..STREAMS)
        .map(|_| PinnedArray::zeros(gpu, Ix3(chunk, side, side)))
        .collect::<Result<_>>()?;
    let mut dev = Buffers::new(gpu, &host.view())?;
    let mut dev_chunks: Vec<Buffers<Ix3>> = (0..STREAMS)
        .map(|k| Buffers::new(&streams[k], &host.slice(s![k * chunk..(k + 1) * chunk, .., ..])))
        .collect::<Result<_>>()?;
    gpu.synchronize()?;
    streams.iter().try_for_each(|s| s.synchronize())?;
    let runs = if quick { 3 } else { 20 };
    let wall = |f: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
        f()?;
        let mut us = Vec::new();
        for _ in 0..runs {
            let t0 = Instant::now();
            f()?;
            us.push(t0.elapsed().as_secs_f64() * 1e6);
        }
        us.sort_by(f64::total_cmp);
        Ok(us[us.len() / 2])
    };
    let pageable = wall(&mut || {
        gpu.stream().memcpy_htod(host_slice, dev.x.as_mut_slice())?;
        dev.enqueue(gpu, &whole)?;
        gpu.stream().memcpy_dtoh(dev.y.as_slice(), &mut pageable_out[..])?;
        gpu.synchronize()
    })?;
    let got0 = pageable_out.clone();
    let pinned = wall(&mut || {
        dev.x.copy_from_pinned(gpu, &pinned_in)?;
        dev.enqueue(gpu, &whole)?;
        dev.y.download_into(gpu, &mut pinned_out)?;
        pinned_out.view().map(drop)
    })?;
    let got1: Vec<i16> = pinned_out.view()?.iter().copied().collect();
    let overlapped = wall(&mut || {
        for (k, s) in streams.iter().enumerate() {
            let b = &mut dev_chunks[k];
            b.x.copy_from_pinned(s, &chunks_in[k])?;
            b.enqueue(s, &part)?;
            b.y.download_into(s, &mut chunks_out[k])?;
        }
        chunks_out.iter().try_for_each(|c| c.view().map(drop))
    })?;
    let mut got2 = Vec::with_capacity(n * side * side);
    for c in &chunks_out {
        got2.extend(c.view()?.iter().copied());
    }
    // Raw copy bandwidths (CUDA events), the ceiling of the rows above.
    let r = if quick { 3 } else { 20 };
    let x = &mut dev.x;
    let h2d_pageable = gpu.time_launches(
        1,
        r,
        |_| Ok(()),
        |_| Ok(gpu.stream().memcpy_htod(host_slice, x.as_mut_slice())?),
    )?;
    let h2d_pinned = gpu.time_launches(1, r, |_| Ok(()), |_| x.copy_from_pinned(gpu, &pinned_in))?;
    let y = &dev.y;
    let d2h_pageable = gpu.time_launches(
        1,
        r,
        |_| Ok(()),
        |_| Ok(gpu.stream().memcpy_dtoh(y.as_slice(), &mut pageable_out[..])?),
    )?;
    let d2h_pinned = gpu.time_launches(1, r, |_| Ok(()), |_| y.download_into(gpu, &mut pinned_out))?;
    let (bytes_in, bytes_out) = (n * side * side, 2 * n * side * side);
    println!("\n### Copy bandwidths (CUDA events; {bytes_in} bytes in, {bytes_out} bytes out)");
    println!("| copy | median µs | GB/s |");
    println!("|---|---:|---:|");
    for (name, t, bytes) in [
        ("host → device, pageable", h2d_pageable, bytes_in),
        ("host → device, pinned", h2d_pinned, bytes_in),
        ("device → host, pageable", d2h_pageable, bytes_out),
        ("device → host, pinned", d2h_pinned, bytes_out),
    ] {
        println!("| {name} | {:.1} | {:.1} |", t.median_us, t.gbps(bytes as f64));
    }
    let moved = (bytes_in + bytes_out) as f64;
    println!("\n### {n} × u8 {side}² from host memory, through the chain, back to host memory (wall time)");
    println!("| transfers | median µs | GB/s moved | × pageable | check |");
    println!("|---|---:|---:|---:|---|");
    let mut failed = false;
    for (name, us, got) in [
        ("pageable, 1 stream", pageable, got0),
        ("pinned, 1 stream", pinned, got1),
        (
            "pinned, 4 chunks on 4 streams (copies overlap kernels)",
            overlapped,
            got2,
        ),
    ] {
        let ok = got == want;
        failed |= !ok;
        println!(
            "| {name} | {us:.1} | {:.1} | {:.2} | {} |",
            moved / (us * 1e3),
            pageable / us,
            if ok { "PASS" } else { "FAIL" }
        );
    }
    Ok(failed)
}
