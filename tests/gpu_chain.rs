//! GPU trials of fused chains: every chain against its ops run one by one on the GPU (bit for
//! bit) under every border mode, over odd sizes, planes smaller than the halo, several tiles and
//! batches; chains long enough to run as several fused segments; device arrays, transposed views
//! and forked streams; the errors.

use gpuprims::{Border, Chain, ChainOutput, ChainPlan, ChainVariant, DeviceArray, Error, Filter2dShape, Gpu};
use libtest_mimic::{Failed, Trial};
use ndarray::{ArrayD, Axis, IxDyn};
use rand::Rng;

use crate::common::{gpu_trial, rng};

/// A chain step, for running it alone.
#[derive(Clone, Copy, Debug)]
enum Step {
    Gaussian,
    Dilate(usize, usize),
    Erode(usize, usize),
    Threshold(u8),
    ScaleOffset(f32, f32),
    /// A lookup table: `v ↦ (v · 37 + 11) mod 256`.
    Lookup,
}

fn table() -> [u8; 256] {
    std::array::from_fn(|v| ((v * 37 + 11) % 256) as u8)
}

fn build(steps: &[Step]) -> Chain<u8> {
    steps.iter().fold(Chain::new(), |c, s| match *s {
        Step::Gaussian => c.gaussian3x3(),
        Step::Dilate(h, w) => c.dilate((h, w)),
        Step::Erode(h, w) => c.erode((h, w)),
        Step::Threshold(t) => c.threshold(t),
        Step::ScaleOffset(a, b) => c.scale_offset(a, b),
        Step::Lookup => c.lookup(table()),
    })
}

/// The steps run one by one: each a GPU op (the threshold on the host).
fn one_by_one(gpu: &Gpu, x: &ArrayD<u8>, steps: &[Step], border: Border) -> gpuprims::Result<ArrayD<u8>> {
    let mut y = x.clone();
    for s in steps {
        y = match *s {
            Step::Gaussian => gpu.gaussian3x3(&y, border)?,
            Step::Dilate(h, w) => gpu.dilate(&y, (h, w), border)?,
            Step::Erode(h, w) => gpu.erode(&y, (h, w), border)?,
            Step::Threshold(t) => y.mapv(|v| if v > t { 255 } else { 0 }),
            Step::ScaleOffset(a, b) => y.mapv(|v| scale_offset(v, a, b)),
            Step::Lookup => y.mapv(|v| table()[v as usize]),
        };
    }
    Ok(y)
}

/// The documented semantics of `Chain::scale_offset`, written out: one f32 fused multiply-add,
/// round half to even, clamp, NaN to 0.
fn scale_offset(v: u8, a: f32, b: f32) -> u8 {
    let y = a.mul_add(v as f32, b).round_ties_even();
    if y.is_nan() { 0 } else { y.clamp(0.0, 255.0) as u8 }
}

fn image(shape: &[usize], seed: u64) -> ArrayD<u8> {
    let mut r = rng(seed);
    // Runs of equal values too, so thresholds and extrema see ties.
    ArrayD::from_shape_fn(
        IxDyn(shape),
        |_| if r.random_range(0..4) == 0 { 128 } else { r.random() },
    )
}

fn same<T: PartialEq + std::fmt::Debug>(what: &str, got: &ArrayD<T>, want: &ArrayD<T>) -> Result<(), Failed> {
    if got.shape() != want.shape() {
        return Err(format!("{what}: shape {:?}, expected {:?}", got.shape(), want.shape()).into());
    }
    if let Some((k, (a, b))) = got.iter().zip(want.iter()).enumerate().find(|(_, (a, b))| a != b) {
        return Err(format!("{what}: element {k} is {a:?}, expected {b:?}").into());
    }
    Ok(())
}

/// Widths that are multiples of 4 take whole-word loads and stores, the others bytes at the
/// plane's edges; 260 × 70 spans three tiles each way; 257 × 131 ends in a tile of one row
/// and three columns, whose border positions map into the tile before; 300 × 544 (rows of
/// whole 16-byte vectors) has tiles whose region lies inside the plane, staged without tests.
const SHAPES: [&[usize]; 13] = [
    &[1, 1],
    &[40, 8],
    &[2, 70, 260],
    &[1, 130, 514],
    &[3, 16, 128],
    &[2, 1, 7],
    &[5, 3],
    &[3, 37, 70],
    &[2, 64, 129],
    &[100, 65],
    &[1, 2, 33, 200],
    &[257, 131],
    &[2, 300, 544],
];

/// The u8 chains: the Gaussian → dilation → (Sobel below), morphology of every odd size
/// with a threshold between, and eleven Gaussians (a halo past one launch: two segments, 8 + 3 steps).
fn chains() -> Vec<Vec<Step>> {
    vec![
        vec![Step::Gaussian, Step::Dilate(3, 3)],
        vec![
            Step::Erode(5, 5),
            Step::Gaussian,
            Step::Threshold(100),
            Step::Dilate(3, 5),
        ],
        vec![
            Step::Dilate(1, 5),
            Step::Erode(5, 1),
            Step::Threshold(0),
            Step::Erode(3, 3),
        ],
        vec![Step::Gaussian; 11],
        vec![Step::Threshold(200)],
        // Point ops between stencils; a 5 × 3 window (reach 5 down, 3 across) after them.
        vec![
            Step::ScaleOffset(1.5, -20.5),
            Step::Dilate(5, 3),
            Step::Lookup,
            Step::Gaussian,
            Step::ScaleOffset(-0.75, 300.0),
            Step::Erode(1, 3),
        ],
        vec![Step::Gaussian, Step::Erode(5, 5), Step::Dilate(5, 5), Step::Gaussian],
        // Two steps again (so a Sobel and the magnitude follow), with a point op first.
        vec![Step::Threshold(90), Step::Erode(3, 5)],
        // Point steps composed: two after a stencil, one last; and two alone, whose Sobel and
        // magnitude then read the staged input through their composed table.
        vec![
            Step::Gaussian,
            Step::Threshold(50),
            Step::ScaleOffset(0.5, 3.0),
            Step::Dilate(3, 3),
            Step::Lookup,
        ],
        vec![Step::ScaleOffset(2.0, -40.0), Step::Lookup],
        // Eight Gaussians with a point step after each: one launch once the points fold (a
        // halo of 8), then a ninth in a second.
        [Step::Gaussian, Step::Threshold(60)].repeat(9),
    ]
}

fn matches_one_by_one(gpu: &Gpu, border: Border) -> Result<(), Failed> {
    let mut seed = 0;
    for steps in chains() {
        let chain = build(&steps);
        for shape in SHAPES {
            seed += 1;
            let x = image(shape, seed);
            let what = format!("{steps:?} {border:?} {shape:?}");
            same(
                &what,
                &gpu.chain(&x, &chain, border)?,
                &one_by_one(gpu, &x, &steps, border)?,
            )?;
            // The chain, ending in a Sobel along each axis and in the gradient magnitude
            // (f32, compared bit for bit).
            if steps.len() == 2 {
                let before = one_by_one(gpu, &x, &steps, border)?;
                for axis in [0, 1] {
                    let sobel = build(&steps).sobel(axis);
                    let want = gpu.sobel(&before, axis, border)?;
                    same(&format!("{what} sobel {axis}"), &gpu.chain(&x, &sobel, border)?, &want)?;
                }
                let magnitude = gpu.chain(&x, &build(&steps).sobel_magnitude(), border)?;
                let want = gpu.sobel_magnitude(&before, border)?;
                same(
                    &format!("{what} sobel magnitude"),
                    &magnitude.mapv(f32::to_bits),
                    &want.mapv(f32::to_bits),
                )?;
            }
        }
    }
    Ok(())
}

/// A device array, a transposed view and a plan reused on forked streams from several threads.
fn layouts_and_streams(gpu: &Gpu) -> Result<(), Failed> {
    let steps = [Step::Gaussian, Step::Dilate(3, 3)];
    let chain = build(&steps).sobel(1);
    let x = image(&[4, 70, 90], 77);
    let want = gpu.sobel(&one_by_one(gpu, &x, &steps, Border::Reflect)?, 1, Border::Reflect)?;
    let d = DeviceArray::upload(gpu, &x)?;
    same(
        "device array",
        &gpu.chain(&d, &chain, Border::Reflect)?.download(gpu)?,
        &want,
    )?;
    let t = x.view().reversed_axes();
    let tw = gpu.sobel(
        &one_by_one(gpu, &t.to_owned(), &steps, Border::Reflect)?,
        1,
        Border::Reflect,
    )?;
    same("transposed view", &gpu.chain(&t, &chain, Border::Reflect)?, &tw)?;
    // The magnitude alone, and after nine Gaussians (two segments: only the last writes f32).
    let bits = |a: ArrayD<f32>| a.mapv(f32::to_bits);
    let alone = gpu.chain(&x, &Chain::new().sobel_magnitude(), Border::Constant(7.0))?;
    same(
        "magnitude alone",
        &bits(alone),
        &bits(gpu.sobel_magnitude(&x, Border::Constant(7.0))?),
    )?;
    let long = [Step::Gaussian; 9];
    let chained = gpu.chain(&x, &build(&long).sobel_magnitude(), Border::Mirror)?;
    let want_long = gpu.sobel_magnitude(&one_by_one(gpu, &x, &long, Border::Mirror)?, Border::Mirror)?;
    same("nine Gaussians, then the magnitude", &bits(chained), &bits(want_long))?;
    let plan = ChainPlan::new(
        gpu,
        Filter2dShape {
            planes: 4,
            h: 70,
            w: 90,
        },
        &chain,
        Border::Reflect,
    )?;
    std::thread::scope(|s| -> Result<(), Failed> {
        let jobs: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| -> Result<(), Failed> {
                    let g = gpu.fork_stream()?;
                    let mut y = DeviceArray::<i16, _>::uninit(&g, IxDyn(&[4, 70, 90]))?;
                    for _ in 0..3 {
                        g.poison(y.as_mut_slice())?;
                        plan.enqueue(&g, d.as_slice(), y.as_mut_slice())?;
                    }
                    same("forked stream", &y.download(&g)?, &want)
                })
            })
            .collect();
        for j in jobs {
            j.join().map_err(|_| "a thread panicked")??;
        }
        Ok(())
    })
}

/// `chain` over `x` by `variant`, the streamed kernel's strips `rows` high where given.
fn run_variant<O: ChainOutput + Default>(
    gpu: &Gpu,
    x: &ArrayD<u8>,
    chain: &Chain<O>,
    border: Border,
    variant: ChainVariant,
    rows: Option<usize>,
) -> Result<ArrayD<O>, Failed> {
    let s = x.shape();
    let n = s.len();
    let shape = Filter2dShape {
        planes: s[..n - 2].iter().product(),
        h: s[n - 2],
        w: s[n - 1],
    };
    let mut plan = ChainPlan::with_variant(gpu, shape, chain, border, variant)?;
    if plan.variant() != variant {
        return Err(format!("planned {:?}, asked for {variant:?}", plan.variant()).into());
    }
    if let Some(r) = rows {
        plan.set_strip_rows(r)?;
    }
    let d = DeviceArray::upload(gpu, x)?;
    let mut y = DeviceArray::<O, _>::uninit(gpu, x.raw_dim())?;
    gpu.poison(y.as_mut_slice())?;
    plan.enqueue(gpu, d.as_slice(), y.as_mut_slice())?;
    Ok(y.download(gpu)?)
}

/// The streamed chains (Gaussian → dilation or erosion 3 × 3 → each Sobel) by both kernels
/// against the ops one by one: planes from 4 × 4 up, widths around a warp's 30 words (120, 124,
/// 128 pixels: the last warp column with 0, 1 and 2 words), strips of 4 to 7
/// rows (the last strip of a plane taking the rest; the steady loop's three-row passes and
/// remainders) and the plan's own, a nonzero constant border.
fn streamed(gpu: &Gpu, border: Border) -> Result<(), Failed> {
    const SHAPES: [&[usize]; 8] = [
        &[4, 4],
        &[5, 8],
        &[2, 7, 120],
        &[1, 9, 124],
        &[3, 33, 128],
        &[1, 64, 244],
        &[2, 50, 364],
        &[1, 203, 1000],
    ];
    let mut seed = 1000;
    for morph in [Step::Dilate(3, 3), Step::Erode(3, 3)] {
        let steps = [Step::Gaussian, morph];
        for shape in SHAPES {
            seed += 1;
            let x = image(shape, seed);
            let before = one_by_one(gpu, &x, &steps, border)?;
            let what = |end: &str, v: ChainVariant, r: Option<usize>| {
                format!("{steps:?} {end} {border:?} {shape:?} {v:?} rows {r:?}")
            };
            for v in ChainVariant::ALL {
                let rows: &[Option<usize>] = match v {
                    ChainVariant::Stream => &[None, Some(4), Some(5), Some(7)],
                    _ => &[None],
                };
                for &r in rows {
                    for axis in [0, 1] {
                        let got = run_variant(gpu, &x, &build(&steps).sobel(axis), border, v, r)?;
                        same(
                            &what(&format!("sobel {axis}"), v, r),
                            &got,
                            &gpu.sobel(&before, axis, border)?,
                        )?;
                    }
                }
            }
        }
    }
    Ok(())
}

fn errors(gpu: &Gpu) -> Result<(), Failed> {
    let x = image(&[9, 9], 5);
    let refused = |what: &str, r: gpuprims::Result<ArrayD<u8>>| match r {
        Err(Error::InvalidArgument { name: "chain", .. }) => Ok(()),
        other => Err(Failed::from(format!("{what}: {:?}", other.err()))),
    };
    refused("empty chain", gpu.chain(&x, &Chain::new(), Border::Zero))?;
    refused(
        "even dilation",
        gpu.chain(&x, &Chain::new().dilate((4, 3)), Border::Zero),
    )?;
    refused(
        "7 × 7 erosion",
        gpu.chain(&x, &Chain::new().erode((7, 7)), Border::Zero),
    )?;
    match gpu.chain(&x, &Chain::new().sobel(2), Border::Zero) {
        Err(Error::InvalidArgument { name: "chain", .. }) => {}
        other => return Err(format!("Sobel axis 2: {:?}", other.err()).into()),
    }
    match gpu.chain(
        &ndarray::Array1::<u8>::zeros(8),
        &Chain::new().gaussian3x3(),
        Border::Zero,
    ) {
        Err(Error::InvalidArgument { name: "x", .. }) => {}
        other => return Err(format!("1-D input: {:?}", other.err()).into()),
    }
    for shape in [&[0, 5, 5][..], &[3, 0, 5], &[2, 4, 0]] {
        let e = ArrayD::<u8>::zeros(IxDyn(shape));
        let y = gpu.chain(&e, &Chain::new().gaussian3x3().sobel(0), Border::Wrap)?;
        if y.shape() != shape {
            return Err(format!("empty {shape:?}: shape {:?}", y.shape()).into());
        }
    }
    // The streamed kernel only for its chains and shapes.
    let shape = |h: usize, w: usize| Filter2dShape { planes: 1, h, w };
    let sobel = build(&[Step::Gaussian, Step::Dilate(3, 3)]).sobel(0);
    for (what, r) in [
        (
            "two steps",
            ChainPlan::with_variant(
                gpu,
                shape(8, 8),
                &Chain::new().gaussian3x3().sobel(0),
                Border::Zero,
                ChainVariant::Stream,
            )
            .map(|_| ()),
        ),
        (
            "a 3 × 5 dilation",
            ChainPlan::with_variant(
                gpu,
                shape(8, 8),
                &build(&[Step::Gaussian, Step::Dilate(3, 5)]).sobel(0),
                Border::Zero,
                ChainVariant::Stream,
            )
            .map(|_| ()),
        ),
        (
            "a width of 10",
            ChainPlan::with_variant(gpu, shape(8, 10), &sobel, Border::Zero, ChainVariant::Stream).map(|_| ()),
        ),
        (
            "3 rows",
            ChainPlan::with_variant(gpu, shape(3, 8), &sobel, Border::Zero, ChainVariant::Stream).map(|_| ()),
        ),
    ] {
        match r {
            Err(Error::Unsupported { variant: "stream", .. }) => {}
            other => return Err(format!("stream of {what}: {:?}", other.err()).into()),
        }
    }
    let auto = ChainPlan::new(gpu, shape(8, 10), &sobel, Border::Zero)?.variant();
    if auto != ChainVariant::Tiles {
        return Err(format!("Auto on a width of 10 planned {auto:?}").into());
    }
    // Point steps fold: eight Gaussians with a threshold after each fit one launch (a halo of
    // 8, eight window steps); a ninth pair takes a second.
    let pairs = |n: usize| build(&[Step::Gaussian, Step::Threshold(60)].repeat(n));
    for (n, launches) in [(8, 1), (9, 2)] {
        let shape = Filter2dShape {
            planes: 1,
            h: 20,
            w: 30,
        };
        let got = ChainPlan::new(gpu, shape, &pairs(n), Border::Reflect)?.launches();
        if got != launches {
            return Err(format!("{n} Gaussian + threshold pairs: {got} launches, expected {launches}").into());
        }
    }
    // Each plane alone equals the batch.
    let b = image(&[3, 20, 30], 9);
    let chain = Chain::new().erode((3, 3)).gaussian3x3();
    let whole = gpu.chain(&b, &chain, Border::Mirror)?;
    for p in 0..3 {
        let alone = gpu.chain(&b.index_axis(Axis(0), p), &chain, Border::Mirror)?;
        if whole.index_axis(Axis(0), p) != alone.view().into_dyn() {
            return Err(format!("plane {p} differs from the batch").into());
        }
    }
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    let mut t: Vec<Trial> = Border::ALL
        .into_iter()
        .map(|b| {
            gpu_trial(format!("gpu_chain::matches_one_by_one::{}", b.name()), move |g| {
                matches_one_by_one(g, b)
            })
        })
        .collect();
    for b in Border::ALL.into_iter().chain([Border::Constant(200.0)]) {
        let name = match b {
            Border::Constant(v) if v > 0.0 => "constant_200",
            _ => b.name(),
        };
        t.push(gpu_trial(format!("gpu_chain::streamed::{name}"), move |g| {
            streamed(g, b)
        }));
    }
    t.push(gpu_trial("gpu_chain::layouts_and_streams".into(), layouts_and_streams));
    t.push(gpu_trial("gpu_chain::errors".into(), errors));
    t
}
