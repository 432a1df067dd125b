//! Streams: every family on several forked streams of one `Gpu` at once (bank contents, scratch
//! buffers, the reduction's ticket), buffers crossing streams, handles dropped with work in
//! flight, graphs, pinned transfers, and a device-resident pipeline against op-by-op host calls.
//!
//! Concurrent results are compared with the same ops run one after another on the main stream,
//! bit for bit (the same kernels, so even float results must agree); the single-stream results are
//! themselves checked against the CPU oracles by the family tests.

use gpuprims::{
    Border, BoxVariant, Conv1dVariant, DeviceArray, Filter1d, Filter2dPlan, Filter2dShape, Filter2dVariant, Gpu,
    MorphVariant, PinnedArray, Pool2d, PoolVariant,
};
use libtest_mimic::{Failed, Trial};
use ndarray::{Array2, Array3, ArrayD, IxDyn, s};
use rand::Rng;

use crate::common::{gpu_trial, rng};

pub fn trials() -> Vec<Trial> {
    vec![
        gpu_trial(
            "gpu_streams::four_streams_every_family".into(),
            four_streams_every_family,
        ),
        gpu_trial(
            "gpu_streams::four_threads_four_streams".into(),
            four_threads_four_streams,
        ),
        gpu_trial("gpu_streams::buffers_cross_streams".into(), buffers_cross_streams),
        gpu_trial("gpu_streams::borrowed_streams".into(), borrowed_streams),
        gpu_trial("gpu_streams::handle_dropped_in_flight".into(), handle_dropped_in_flight),
        gpu_trial("gpu_streams::graph_replays_match_eager".into(), graph_replays),
        gpu_trial("gpu_streams::pinned_round_trip".into(), pinned_round_trip),
        gpu_trial(
            "gpu_streams::pipeline_matches_op_by_op".into(),
            pipeline_matches_op_by_op,
        ),
        gpu_trial(
            "gpu_streams::first_call_on_a_new_thread".into(),
            first_call_on_a_new_thread,
        ),
        foreign_context_trial(),
    ]
}

/// Ops whose plans ask the driver's occupancy calculator (the u8 word-tile Gaussian, the f32
/// row-vector Sobel, the one-pass box sum, the f32 sum), each called first thing on a thread
/// of its own, equal the same calls on this thread: the calculator reads the thread's current
/// context, which a new thread does not have until a call makes it current.
fn first_call_on_a_new_thread(gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(61);
    let u8s = Array2::<u8>::from_shape_fn((300, 260), |_| r.random());
    let f32s = u8s.mapv(|v| v as f32 - 100.0);
    // Op k's result, as f64 values.
    let op = |k: usize| -> gpuprims::Result<Vec<f64>> {
        Ok(match k {
            0 => gpu
                .gaussian3x3(&u8s, Border::Reflect)?
                .iter()
                .map(|&v| v as f64)
                .collect(),
            1 => gpu
                .sobel(&f32s, 1, Border::Reflect)?
                .iter()
                .map(|&v| v as f64)
                .collect(),
            2 => gpu
                .box_sum::<f32, _>(&f32s, (5, 5), Border::Reflect)?
                .iter()
                .map(|&v| v as f64)
                .collect(),
            _ => vec![gpu.sum(&f32s)?],
        })
    };
    let want = (0..4).map(op).collect::<gpuprims::Result<Vec<_>>>()?;
    for (k, want) in want.iter().enumerate() {
        let got = std::thread::scope(|s| s.spawn(|| op(k)).join()).map_err(|_| "the thread panicked")??;
        let ok = got == *want;
        if !ok {
            return Err(format!("op {k}, first on a new thread, differs").into());
        }
    }
    Ok(())
}

/// Everything one stream computes in [`family_work`], downloaded.
#[derive(Debug, PartialEq)]
struct Results {
    sumsq: u128,
    sum_f64: f64,
    conv: Array2<f32>,
    boxed: Array2<u32>,
    pooled: Array2<u8>,
    pooled_const: Array2<u8>,
    gauss: Array2<u8>,
    dilated: Array2<u8>,
    sobel: Array2<i16>,
    corr: Array2<f32>,
}

/// One stream's inputs: different data and different bank contents (taps) per seed.
struct Inputs {
    ints: Vec<i32>,
    floats: Array2<f32>,
    img: Array2<u8>,
    small: Array2<u8>,
    taps: Vec<f32>,
    kernel: Array2<f32>,
}

fn inputs(seed: u64) -> Inputs {
    let mut r = rng(seed);
    let (h, w) = (67 + seed as usize % 5, 1031);
    Inputs {
        ints: (0..300_001).map(|_| r.random::<i32>()).collect(),
        floats: Array2::from_shape_fn((37, 2049), |_| r.random_range(-4.0f32..4.0)),
        img: Array2::from_shape_fn((h, w), |_| r.random::<u8>()),
        small: Array2::from_shape_fn((64, 96), |_| r.random::<u8>()),
        taps: (0..5 + seed as usize % 3)
            .map(|i| (i as f32 + 1.0) * (seed as f32 + 0.5))
            .collect(),
        kernel: Array2::from_shape_fn((3, 5), |(i, j)| (i * 5 + j) as f32 - seed as f32),
    }
}

/// Enqueues every family's ops on `g` (constant-bank users: conv1d with constant taps, pooling's
/// constant-input rung, 2D correlation; scratch users: the separable box, the Sobel magnitude;
/// the step-8 reduction's ticket), then downloads on the same stream.
fn family_work(g: &Gpu, x: &Inputs) -> Result<Results, gpuprims::Error> {
    let ints = DeviceArray::upload(g, &ndarray::aview1(&x.ints))?;
    let floats = DeviceArray::upload(g, &x.floats)?;
    let img = DeviceArray::upload(g, &x.img)?;
    let small = DeviceArray::upload(g, &x.small)?;
    let filter = Filter1d::correlation(&x.taps)?;
    let conv = g.filter1d(&floats, &filter, Border::Reflect, Conv1dVariant::ConstantTaps)?;
    let boxed: DeviceArray<u32, _> = g.box_sum_exact_with(&img, (5, 9), Border::Replicate, BoxVariant::Separable)?;
    let pooled = g.max_pool2d_with(&img, Pool2d::new((3, 3)), PoolVariant::Auto)?;
    let pooled_const = g.max_pool2d_with(&small, Pool2d::new((2, 2)), PoolVariant::ConstantInput)?;
    let gauss = g.gaussian3x3(&img, Border::Reflect)?;
    let dilated = g.dilate_with(&gauss, (5, 5), Border::Mirror, MorphVariant::VanHerk)?;
    let sobel = g.sobel(&img, 0, Border::Replicate)?;
    let corr = g.correlate2d(&floats, x.kernel.view(), Border::Wrap)?;
    Ok(Results {
        sumsq: g.sum_of_squares(&ints)?,
        sum_f64: g.sum(&floats)?,
        conv: conv.download(g)?,
        boxed: boxed.download(g)?,
        pooled: pooled.download(g)?,
        pooled_const: pooled_const.download(g)?,
        gauss: gauss.download(g)?,
        dilated: dilated.download(g)?,
        sobel: sobel.download(g)?,
        corr: corr.download(g)?,
    })
}

fn compare(what: &str, got: &Results, want: &Results) -> Result<(), Failed> {
    if got != want {
        let fields = [
            ("sumsq", got.sumsq != want.sumsq),
            ("sum_f64", got.sum_f64.to_bits() != want.sum_f64.to_bits()),
            ("conv", got.conv != want.conv),
            ("boxed", got.boxed != want.boxed),
            ("pooled", got.pooled != want.pooled),
            ("pooled_const", got.pooled_const != want.pooled_const),
            ("gauss", got.gauss != want.gauss),
            ("dilated", got.dilated != want.dilated),
            ("sobel", got.sobel != want.sobel),
            ("corr", got.corr != want.corr),
        ];
        let bad: Vec<_> = fields.iter().filter(|f| f.1).map(|f| f.0).collect();
        return Err(format!("{what}: {bad:?} differ from the sequential results").into());
    }
    Ok(())
}

const STREAMS: u64 = 4;

/// Four forked streams driven from one thread: each round enqueues every family on every
/// stream before any result is read (the downloads synchronize one stream at a time, so the
/// other three still run), repeated.
fn four_streams_every_family(gpu: &Gpu) -> Result<(), Failed> {
    let data: Vec<Inputs> = (0..STREAMS).map(inputs).collect();
    let want: Vec<Results> = data.iter().map(|d| family_work(gpu, d)).collect::<Result<_, _>>()?;
    let streams: Vec<Gpu> = (0..STREAMS).map(|_| gpu.fork_stream()).collect::<Result<_, _>>()?;
    for s in &streams {
        if !s.shares_kernels_with(gpu) || s.stream().cu_stream() == gpu.stream().cu_stream() {
            return Err("a forked handle must share the module and own a new stream".into());
        }
    }
    for round in 0..6 {
        // Interleave: every stream's uploads and launches are enqueued before the first result is
        // downloaded, by running the streams' work in a rotating order.
        let order: Vec<usize> = (0..STREAMS as usize).map(|i| (i + round) % STREAMS as usize).collect();
        for &i in &order {
            let got = family_work(&streams[i], &data[i])?;
            compare(&format!("round {round}, stream {i}"), &got, &want[i])?;
        }
    }
    Ok(())
}

/// Handles on streams gpuprims does not own (`Gpu::on_borrowed_stream`): a stream another
/// library made on the context, and the legacy default stream. Every family gives the main
/// stream's results on each; an op on the borrowed stream reads data its owner queued there just
/// before, with no synchronisation between (a copy of fresh data into a buffer the op reads);
/// and once the borrow ended and the owner destroyed its stream, other contents written into the
/// banks it used (other taps, on the main stream) neither touch it nor fail.
fn borrowed_streams(gpu: &Gpu) -> Result<(), Failed> {
    let data = inputs(20);
    let want = family_work(gpu, &data)?;
    let owner = gpu.context().new_stream()?;
    for (name, raw) in [
        ("an owner's stream", owner.cu_stream()),
        ("the legacy default stream", std::ptr::null_mut()),
    ] {
        // SAFETY: both streams belong to gpu's context and outlive the handle and its buffers.
        let borrowed = unsafe { gpu.on_borrowed_stream(raw) };
        if !borrowed.shares_kernels_with(gpu) || borrowed.stream().cu_stream() != raw {
            return Err(format!("{name}: the handle must share the kernels and enqueue on the borrowed stream").into());
        }
        compare(name, &family_work(&borrowed, &data)?, &want)?;
        borrowed.end_borrow()?;
    }
    // SAFETY: as above.
    let borrowed = unsafe { gpu.on_borrowed_stream(owner.cu_stream()) };
    let host = inputs(21).img;
    let flat: Vec<u8> = host.iter().copied().collect();
    let mut buf = owner.alloc_zeros::<u8>(flat.len())?;
    owner.memcpy_htod(&flat, &mut buf)?; // queued on the owner's stream, not waited for
    let fresh = DeviceArray::from_slice(buf, host.raw_dim())?;
    let got = borrowed.gaussian3x3(&fresh, Border::Reflect)?.download(&borrowed)?;
    if got != gpu.gaussian3x3(&host, Border::Reflect)? {
        return Err("the op on the borrowed stream did not see the data its owner queued before it".into());
    }
    // A last bank use on the owner's stream, then the borrow ends and the owner destroys it.
    let last = family_work(&borrowed, &inputs(22))?;
    borrowed.end_borrow()?;
    owner.synchronize()?;
    drop((borrowed, fresh, owner));
    let other = inputs(23);
    let (a, b) = (family_work(gpu, &other)?, family_work(gpu, &inputs(22))?);
    compare("after the owner destroyed its stream", &b, &last)?;
    compare(
        "after the owner destroyed its stream, other taps",
        &family_work(gpu, &other)?,
        &a,
    )
}

/// Four threads, each with its own forked stream, all families, many rounds at once: the bank's
/// cross-stream protocol and the per-plan buffers under real contention.
fn four_threads_four_streams(gpu: &Gpu) -> Result<(), Failed> {
    let data: Vec<Inputs> = (0..STREAMS).map(|s| inputs(s + 10)).collect();
    let want: Vec<Results> = data.iter().map(|d| family_work(gpu, d)).collect::<Result<_, _>>()?;
    let streams: Vec<Gpu> = (0..STREAMS).map(|_| gpu.fork_stream()).collect::<Result<_, _>>()?;
    std::thread::scope(|scope| {
        let handles: Vec<_> = streams
            .iter()
            .zip(data.iter().zip(&want))
            .enumerate()
            .map(|(i, (g, (d, w)))| {
                scope.spawn(move || -> Result<(), String> {
                    for round in 0..12 {
                        let got = family_work(g, d).map_err(|e| e.to_string())?;
                        compare(&format!("thread {i}, round {round}"), &got, w).map_err(|e| format!("{e:?}"))?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| "a stream thread panicked".to_string())?)
            .collect::<Result<Vec<()>, String>>()
    })?;
    Ok(())
}

/// An array produced on stream A is used on stream B at once (no join): the op must wait for A's
/// producer; A then frees the array (drop) while B's consumer may still run: the free must wait.
fn buffers_cross_streams(gpu: &Gpu) -> Result<(), Failed> {
    let a = gpu.fork_stream()?;
    let b = gpu.fork_stream()?;
    let mut r = rng(77);
    let img = Array3::from_shape_fn((8, 1024, 1024), |_| r.random::<u8>());
    let want = gpu.dilate(&gpu.gaussian3x3(&img, Border::Reflect)?, (9, 9), Border::Reflect)?;
    for round in 0..8 {
        // A: upload and a long chain (31 × 31 dilation keeps A busy).
        let x = DeviceArray::upload(&a, &img)?;
        let slow = a.dilate(&x, (31, 31), Border::Reflect)?;
        let g = a.gaussian3x3(&x, Border::Reflect)?;
        // B: consumes A's result immediately.
        let y = b.dilate(&g, (9, 9), Border::Reflect)?;
        drop(g); // freed in A's order, after B's read
        drop(x);
        // A allocates and writes again (would reuse the freed memory if the free were early).
        let noise = DeviceArray::upload(&a, &img.mapv(|v| v ^ 0x5A))?;
        let _more = a.gaussian3x3(&noise, Border::Reflect)?;
        let got = y.download(&b)?;
        if got != want {
            return Err(format!("round {round}: the cross-stream result differs").into());
        }
        drop(slow);
    }
    // Downloading an array of another stream through a third handle orders after its producer.
    let y = b.gaussian3x3(&DeviceArray::upload(&b, &img)?, Border::Reflect)?;
    if y.download(gpu)? != gpu.gaussian3x3(&img, Border::Reflect)? {
        return Err("download through another handle raced its producer".into());
    }
    Ok(())
}

/// A forked handle dropped right after enqueuing: its buffers keep the stream alive and the
/// results are complete when read through another handle.
fn handle_dropped_in_flight(gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(5);
    let img = Array3::from_shape_fn((4, 2048, 2048), |_| r.random::<u8>());
    let want = gpu.dilate(&img, (31, 31), Border::Replicate)?;
    for _ in 0..4 {
        let fork = gpu.fork_stream()?;
        let x = DeviceArray::upload(&fork, &img)?;
        let y = fork.dilate(&x, (31, 31), Border::Replicate)?;
        drop(x);
        drop(fork); // work in flight
        if y.download(gpu)? != want {
            return Err("result of a dropped handle's work differs".into());
        }
    }
    Ok(())
}

/// A graph of plan enqueues (a bank user with its own taps and a scratch user) replayed with new
/// input contents each time, interleaved with eager launches of another bank content on the same
/// stream and on a forked one: every replay must match the eager result.
fn graph_replays(gpu: &Gpu) -> Result<(), Failed> {
    let g = gpu.fork_stream()?;
    let other = gpu.fork_stream()?;
    let shape = Filter2dShape {
        planes: 2,
        h: 301,
        w: 517,
    };
    let kernel = Array2::from_shape_fn((3, 3), |(i, j)| (i * 3 + j) as f32 * 0.25 - 1.0);
    let other_kernel = Array2::from_shape_fn((5, 5), |(i, j)| (i as f32 - j as f32) * 0.5);
    let corr = Filter2dPlan::<f32>::correlate(&g, shape, kernel.view(), Border::Reflect, Filter2dVariant::Auto)?;
    let dil = Filter2dPlan::<f32>::dilate(&g, shape, (7, 3), Border::Replicate, MorphVariant::Separable)?;
    let dims = (2, 301, 517);
    let mut x = DeviceArray::<f32, _>::uninit(&g, ndarray::Ix3(dims.0, dims.1, dims.2))?;
    let mut mid = DeviceArray::<f32, _>::uninit(&g, x.raw_dim())?;
    let mut y = DeviceArray::<f32, _>::uninit(&g, x.raw_dim())?;
    let graph = g.capture(|g| {
        corr.enqueue(g, x.as_slice(), mid.as_mut_slice())?;
        dil.enqueue(g, mid.as_slice(), y.as_mut_slice())
    })?;
    let mut r = rng(9);
    for round in 0..6 {
        let host = Array3::from_shape_fn(dims, |_| r.random_range(-8.0f32..8.0));
        g.stream()
            .memcpy_htod(host.as_slice().expect("standard layout"), x.as_mut_slice())?;
        // Another bank content in between, eager, on both streams.
        let noise = g.correlate2d(&host, other_kernel.view(), Border::Wrap)?;
        let noise2 = other.correlate2d(&host, other_kernel.view(), Border::Wrap)?;
        graph.launch()?;
        let got = y.download(&g)?;
        let want = gpu.dilate_with(
            &gpu.correlate2d(&host, kernel.view(), Border::Reflect)?,
            (7, 3),
            Border::Replicate,
            MorphVariant::Separable,
        )?;
        if got != want {
            return Err(format!("round {round}: graph replay differs from eager").into());
        }
        if noise != noise2 {
            return Err(format!("round {round}: the other bank content was disturbed").into());
        }
    }
    Ok(())
}

/// Pinned upload, an op, pinned download: equals the pageable path, and shape mismatches are
/// errors.
fn pinned_round_trip(gpu: &Gpu) -> Result<(), Failed> {
    let fork = gpu.fork_stream()?;
    let mut r = rng(3);
    for (h, w) in [(1, 1), (7, 13), (511, 1023)] {
        let img = Array2::from_shape_fn((h, w), |_| r.random::<u8>());
        let pinned = PinnedArray::from_array(&fork, &img)?;
        if pinned.view()? != img {
            return Err("pinned copy differs from its source".into());
        }
        let x = DeviceArray::upload_pinned(&fork, &pinned)?;
        let y = fork.gaussian3x3(&x, Border::Reflect)?;
        let mut out = PinnedArray::<u8, _>::zeros(&fork, ndarray::Ix2(h, w))?;
        y.download_into(&fork, &mut out)?;
        if out.view()? != gpu.gaussian3x3(&img, Border::Reflect)? {
            return Err(format!("{h}×{w}: pinned round trip differs").into());
        }
        let mut wrong = PinnedArray::<u8, _>::zeros(&fork, ndarray::Ix2(h, w + 1))?;
        match y.download_into(&fork, &mut wrong) {
            Err(gpuprims::Error::InvalidArgument { name: "host", .. }) => {}
            other => return Err(format!("shape mismatch gave {other:?}").into()),
        }
    }
    // The view must wait for a download still queued behind milliseconds of kernels (a view
    // that does not wait reads the zeros).
    let big = Array3::from_shape_fn((4, 2048, 2048), |_| r.random::<u8>());
    let want = gpu.dilate(&big, (31, 31), Border::Reflect)?;
    let x = DeviceArray::upload_pinned(&fork, &PinnedArray::from_array(&fork, &big)?)?;
    for _ in 0..3 {
        let mut out = PinnedArray::<u8, _>::zeros(&fork, big.raw_dim())?;
        let slow = fork.dilate(&fork.dilate(&x, (31, 31), Border::Reflect)?, (1, 1), Border::Reflect)?;
        slow.download_into(&fork, &mut out)?;
        if out.view()? != want {
            return Err("a pinned view did not wait for its download".into());
        }
    }
    let empty = PinnedArray::<f32, _>::zeros(gpu, IxDyn(&[0, 5]))?;
    let x = DeviceArray::upload_pinned(gpu, &empty)?;
    if !x.is_empty() || x.download(gpu)? != ArrayD::<f32>::zeros(IxDyn(&[0, 5])) {
        return Err("empty pinned round trip".into());
    }
    Ok(())
}

/// Gaussian → Sobel magnitude → dilation chained on the device (one batch of planes) equals the
/// same ops applied one at a time from host arrays, plane by plane.
fn pipeline_matches_op_by_op(gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(21);
    let batch = Array3::from_shape_fn((5, 129, 200), |_| r.random::<u8>());
    let x = DeviceArray::upload(gpu, &batch)?;
    let g = gpu.gaussian3x3(&x, Border::Reflect)?;
    let m = gpu.sobel_magnitude(&g, Border::Reflect)?;
    let d = gpu.dilate(&m, (3, 3), Border::Reflect)?;
    let chained = d.download(gpu)?;
    for p in 0..batch.shape()[0] {
        let plane = batch.slice(s![p, .., ..]);
        let g = gpu.gaussian3x3(&plane, Border::Reflect)?;
        let m = gpu.sobel_magnitude(&g, Border::Reflect)?;
        let d = gpu.dilate(&m, (3, 3), Border::Reflect)?;
        if chained.slice(s![p, .., ..]) != d {
            return Err(format!("plane {p}: the device chain differs from op-by-op host calls").into());
        }
    }
    Ok(())
}

/// A buffer of device 1 given to a `Gpu` of device 0: a typed error. Needs two devices (ignored
/// otherwise, or failed under `GPUPRIMS_REQUIRE_GPU=1` only when no device answers at all).
fn foreign_context_trial() -> Trial {
    let two = Gpu::with_device(1).is_ok();
    Trial::test("gpu_streams::foreign_context_is_an_error", move || {
        let g0 = Gpu::with_device(0)?;
        let g1 = Gpu::with_device(1)?;
        let x = DeviceArray::upload(&g1, &Array2::<u8>::ones((4, 4)))?;
        match g0.gaussian3x3(&x, Border::Reflect) {
            Err(gpuprims::Error::ForeignContext {
                buffer_device: 1,
                gpu_device: 0,
            }) => Ok(()),
            other => Err(format!("expected ForeignContext, got {:?}", other.map(|_| ())).into()),
        }
    })
    .with_ignored_flag(!two)
}
