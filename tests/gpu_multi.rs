//! GPU trials of device sets (`Gpus`): every sharded op against the one-device result — bit for bit
//! for integer and morphology ops, within the documented bound for float means — at the seams under
//! every border mode, odd band heights, images with fewer rows than parts, batches, signals,
//! device-resident chains whose halo grows, and the errors.
//!
//! The `one_device::` trials run on any GPU: a set of three streams of one device, with unequal
//! shares, splits and exchanges seams exactly as three devices do. The `two_devices::` trials need
//! two GPUs and show as ignored otherwise.

use gpuprims::{Border, Error, Gpu, Gpus, Sharded};
use libtest_mimic::{Failed, Trial};
use ndarray::{Array1, Array2, Array3, Dimension, arr0};
use rand::Rng;

use crate::common::{gpu_trial, rng};

pub fn trials() -> Vec<Trial> {
    let mut t = vec![
        gpu_trial("gpu_multi::one_device::bands_every_border".into(), |g| {
            bands(&streams(g)?, g)
        }),
        gpu_trial("gpu_multi::one_device::device_chain".into(), |g| {
            device_chain(&streams(g)?, g)
        }),
        gpu_trial("gpu_multi::one_device::batches".into(), |g| batches(&streams(g)?, g)),
        gpu_trial("gpu_multi::one_device::signals".into(), |g| signals(&streams(g)?, g)),
        gpu_trial("gpu_multi::one_device::reductions".into(), |g| {
            reductions(&streams(g)?, g)
        }),
        gpu_trial("gpu_multi::one_device::errors".into(), errors),
        gpu_trial("gpu_multi::one_device::large_transfers".into(), |g| {
            large_transfers(&streams(g)?, g)
        }),
    ];
    let two = Gpus::new(&[0, 1]).is_ok();
    let pair = |name: &str, f: fn(&Gpus, &Gpu) -> Result<(), Failed>| {
        Trial::test(format!("gpu_multi::two_devices::{name}"), move || {
            let set = Gpus::new(&[0, 1])?;
            f(&set, &set.devices()[0])
        })
        .with_ignored_flag(!two)
    };
    t.push(pair("bands_every_border", bands));
    t.push(pair("device_chain", device_chain));
    t.push(pair("batches", batches));
    t.push(pair("signals", signals));
    t.push(pair("reductions", reductions));
    t.push(pair("large_transfers", large_transfers));
    t
}

/// Parts of several MiB, which scatter and gather stage through pinned buffers in chunks (a
/// partial last chunk included): the round trip is exact, and an op's gathered result equals
/// one device's, for u8 and f32.
fn large_transfers(set: &Gpus, gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(58);
    let x = Array3::from_shape_fn((3, 1999, 2101), |_| r.random::<u8>());
    same("u8 round trip", &set.gather(&set.scatter(&x, 0)?)?, &x)?;
    same(
        "dilate 5×5 of a large stack",
        &set.dilate(&x, (5, 5), Border::Mirror)?,
        &gpu.dilate(&x, (5, 5), Border::Mirror)?,
    )?;
    let image = x.index_axis(ndarray::Axis(0), 1).mapv(|v| v as f32 * 0.5 - 3.0);
    same("f32 round trip", &set.gather(&set.scatter(&image, 2)?)?, &image)?;
    same(
        "Gaussian of one large f32 image in bands",
        &set.gaussian3x3(&image, Border::Wrap)?,
        &gpu.gaussian3x3(&image, Border::Wrap)?,
    )?;
    Ok(())
}

/// Three streams of `gpu`'s device as one set, with unequal shares (uneven bands).
fn streams(gpu: &Gpu) -> gpuprims::Result<Gpus> {
    let handles = (0..3)
        .map(|_| gpu.fork_stream())
        .collect::<gpuprims::Result<Vec<_>>>()?;
    Gpus::from_gpus(handles)?.with_shares(&[1.0, 2.0, 1.5])
}

fn same<T: PartialEq + std::fmt::Debug, D: Dimension>(
    what: &str,
    got: &ndarray::Array<T, D>,
    want: &ndarray::Array<T, D>,
) -> Result<(), Failed> {
    if got.shape() != want.shape() {
        return Err(format!("{what}: shape {:?}, one device {:?}", got.shape(), want.shape()).into());
    }
    match got.indexed_iter().zip(want.iter()).find(|((_, a), b)| a != b) {
        Some(((i, a), b)) => Err(format!("{what}: at {i:?} {a:?}, one device {b:?}").into()),
        None => Ok(()),
    }
}

/// Image heights around the split: one row, fewer rows than parts or than the halo, odd bands.
const SIZES: [(usize, usize); 6] = [(1, 5), (2, 3), (5, 7), (37, 64), (130, 33), (301, 17)];

/// One image split into row bands: each op against one device, every border, every size.
fn bands(set: &Gpus, gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(54);
    for &(h, w) in &SIZES {
        let img = Array2::from_shape_fn((h, w), |_| r.random::<u8>());
        let imgf = img.mapv(|v| v as f32 - 100.0);
        for border in Border::ALL {
            let case = |op: &str| format!("{op} {h}×{w} {border:?}");
            same(
                &case("dilate 5×5"),
                &set.dilate(&img, (5, 5), border)?,
                &gpu.dilate(&img, (5, 5), border)?,
            )?;
            same(
                &case("dilate 31×3"),
                &set.dilate(&img, (31, 3), border)?,
                &gpu.dilate(&img, (31, 3), border)?,
            )?;
            same(
                &case("erode 4×4"),
                &set.erode(&img, (4, 4), border)?,
                &gpu.erode(&img, (4, 4), border)?,
            )?;
            same(
                &case("erode f32 3×5"),
                &set.erode(&imgf, (3, 5), border)?,
                &gpu.erode(&imgf, (3, 5), border)?,
            )?;
            same(
                &case("gaussian3x3"),
                &set.gaussian3x3(&img, border)?,
                &gpu.gaussian3x3(&img, border)?,
            )?;
            same(
                &case("gaussian σ 1.5"),
                &set.gaussian(&img, 1.5, border)?,
                &gpu.gaussian(&img, 1.5, border)?,
            )?;
            same(
                &case("sobel 0"),
                &set.sobel(&img, 0, border)?,
                &gpu.sobel(&img, 0, border)?,
            )?;
            same(
                &case("sobel 1"),
                &set.sobel(&img, 1, border)?,
                &gpu.sobel(&img, 1, border)?,
            )?;
        }
    }
    Ok(())
}

/// Ops chained on the sharded bands (halo 1 growing to 3, halos refreshed between ops), gathered
/// to the host and to one device, against the same chain on one device.
fn device_chain(set: &Gpus, gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(55);
    for &(h, w) in &SIZES {
        let img = Array2::from_shape_fn((h, w), |_| r.random::<u8>());
        for border in Border::ALL {
            let x = set.scatter(&img, 1)?;
            let g = set.gaussian3x3(&x, border)?;
            let d = set.dilate(&g, (7, 7), border)?;
            let s = set.sobel(&d, 0, border)?;
            let want = gpu.sobel(&gpu.dilate(&gpu.gaussian3x3(&img, border)?, (7, 7), border)?, 0, border)?;
            let what = format!("gaussian → dilate 7×7 → sobel {h}×{w} {border:?}");
            // Bands of 8 rows or more (37 rows and up) are short of 3 halo rows: the op widens them.
            if h >= 37 && d.halo() != 3 {
                return Err(format!("{what}: halo {} after a 7-row window, want 3", d.halo()).into());
            }
            same(&what, &set.gather(&s)?, &want)?;
            let last = set.len() - 1;
            same(
                &format!("{what} (gathered to device {last})"),
                &set.gather_to(&s, last)?.download(&set.devices()[last])?,
                &want,
            )?;
        }
    }
    Ok(())
}

/// A batch split by planes (fewer planes than parts included).
fn batches(set: &Gpus, gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(56);
    for n in [1, 2, 7] {
        let stack = Array3::from_shape_fn((n, 33, 40), |_| r.random::<u8>());
        let case = |op: &str| format!("{op} ({n}, 33, 40)");
        same(
            &case("dilate 3×3"),
            &set.dilate(&stack, (3, 3), Border::Reflect)?,
            &gpu.dilate(&stack, (3, 3), Border::Reflect)?,
        )?;
        let (s, q) = set.window_sum_sumsq::<f32, _>(&stack, 15, Border::Mirror)?;
        let (s1, q1) = gpu.window_sum_sumsq::<f32, _>(&stack, 15, Border::Mirror)?;
        same(&case("window sums"), &s, &s1)?;
        same(&case("window sums of squares"), &q, &q1)?;
        let (m, v) = set.local_mean_variance::<f32, _>(&stack, (5, 5), Border::Replicate)?;
        let (m1, v1) = gpu.local_mean_variance::<f32, _>(&stack, (5, 5), Border::Replicate)?;
        same(&case("local mean"), &m, &m1)?;
        same(&case("local variance"), &v, &v1)?;
    }
    Ok(())
}

/// A u8 signal split into runs with a `width / 2` halo: window sums (exact in f32) under every
/// border, wrap's cyclic edges included.
fn signals(set: &Gpus, gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(57);
    for len in [1, 4, 1001] {
        let x = Array1::from_shape_fn(len, |_| r.random::<u8>());
        for border in Border::ALL {
            let (s, q) = set.window_sum_sumsq::<f32, _>(&x, 15, border)?;
            let (s1, q1) = gpu.window_sum_sumsq::<f32, _>(&x, 15, border)?;
            same(&format!("window sums, {len} samples, {border:?}"), &s, &s1)?;
            same(&format!("window sums of squares, {len} samples, {border:?}"), &q, &q1)?;
        }
    }
    Ok(())
}

/// Sums, sums of squares, extrema exact; mean and variance to f64 rounding; empty inputs.
fn reductions(set: &Gpus, gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(58);
    for len in [1, 2, 3, 100_003] {
        let x = Array1::from_shape_fn(len, |_| r.random::<i32>());
        let sharded = set.scatter(&x, 0)?;
        let what = |op: &str| format!("{op} of {len} i32");
        let check = |op: &str, a: String, b: String| -> Result<(), Failed> {
            if a == b {
                Ok(())
            } else {
                Err(format!("{}: {a}, one device {b}", what(op)).into())
            }
        };
        check("sum", set.sum(&x)?.to_string(), gpu.sum(&x)?.to_string())?;
        check(
            "sum of squares",
            set.sum_of_squares(&sharded)?.to_string(),
            gpu.sum_of_squares(&x)?.to_string(),
        )?;
        check("min", set.min(&sharded)?.to_string(), gpu.min(&x)?.to_string())?;
        check("max", set.max(&x)?.to_string(), gpu.max(&x)?.to_string())?;
        let (a, b) = (set.mean_variance(&x)?, gpu.mean_variance(&x)?);
        let close = |p: f64, q: f64| (p - q).abs() <= 1e-12 * p.abs().max(q.abs()).max(1.0);
        if !(close(a.mean, b.mean) && close(a.variance, b.variance)) {
            return Err(format!("{}: {a:?}, one device {b:?}", what("mean and variance")).into());
        }
        let bytes = x.mapv(|v| v as u8);
        check(
            "u8 sum of squares",
            set.sum_of_squares(&bytes)?.to_string(),
            gpu.sum_of_squares(&bytes)?.to_string(),
        )?;
    }
    // A banded image reduces over its cores only (halo rows are not counted twice).
    let img = Array2::from_shape_fn((37, 11), |(i, j)| (i * 11 + j) as u32);
    let bands = set.scatter(&img, 4)?;
    if set.sum(&bands)? != gpu.sum(&img)? {
        return Err(format!(
            "sum of a banded image: {}, one device {}",
            set.sum(&bands)?,
            gpu.sum(&img)?
        )
        .into());
    }
    let empty = Array1::<i32>::zeros(0);
    if set.sum(&empty)? != 0 || set.sum_of_squares(&empty)? != 0 {
        return Err("the sums of an empty array are not 0".into());
    }
    match set.min(&empty) {
        Err(Error::EmptyInput { op: "min" }) => Ok(()),
        other => Err(format!("min of an empty array: {other:?}").into()),
    }
}

/// Typed errors: missing, repeated and absent devices; another set's array; bad shares; a bad
/// window (the op's own error, not wrapped); a 0-dimensional array.
fn errors(gpu: &Gpu) -> Result<(), Failed> {
    let expect =
        |what: &str, ok: bool| -> Result<(), Failed> { if ok { Ok(()) } else { Err(what.to_string().into()) } };
    let missing = Gpus::new(&[0, 4096]);
    expect(
        &format!("device 4096: {missing:?}"),
        matches!(&missing, Err(Error::NoDevice { reason }) if reason.contains("4096")),
    )?;
    expect("no device", matches!(Gpus::new(&[]), Err(Error::NoDevice { .. })))?;
    expect(
        "device 0 twice",
        matches!(Gpus::new(&[0, 0]), Err(Error::InvalidArgument { name: "ordinals", .. })),
    )?;
    let a = streams(gpu)?;
    let b = streams(gpu)?;
    let x: Sharded<u8, _> = a.scatter(&Array2::<u8>::zeros((8, 8)), 0)?;
    expect(
        "another set's array",
        matches!(b.dilate(&x, (3, 3), Border::Zero), Err(Error::ShardMismatch { .. })),
    )?;
    expect(
        "another set's array, gathered",
        matches!(b.gather(&x), Err(Error::ShardMismatch { .. })),
    )?;
    expect(
        "two shares for three",
        matches!(
            streams(gpu)?.with_shares(&[1.0, 1.0]),
            Err(Error::InvalidArgument { name: "shares", .. })
        ),
    )?;
    expect(
        "a negative share",
        matches!(
            streams(gpu)?.with_shares(&[1.0, -1.0, 1.0]),
            Err(Error::InvalidArgument { name: "shares", .. })
        ),
    )?;
    let bad = a.dilate(&Array2::<u8>::zeros((8, 8)), (0, 3), Border::Zero);
    let one = gpu.dilate(&Array2::<u8>::zeros((8, 8)), (0, 3), Border::Zero);
    expect(
        &format!("a zero window: {bad:?}, one device {one:?}"),
        bad.is_err() && format!("{:?}", bad.as_ref().err()) == format!("{:?}", one.as_ref().err()),
    )?;
    expect(
        "a 0-dimensional array",
        matches!(a.scatter(&arr0(5u8), 0), Err(Error::InvalidArgument { name: "x", .. })),
    )?;
    expect(
        "gather_to position 3 of 3",
        matches!(a.gather_to(&x, 3), Err(Error::InvalidArgument { name: "device", .. })),
    )?;
    Ok(())
}
