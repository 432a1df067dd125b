//! What a program's first gpuprims call costs: for every public op (its `Auto` path, at the
//! README's example sizes), a fresh process times `Gpu::new`, the op's first call (its kernels'
//! modules load then: JIT-compiled by the driver, or from its cache) and a second call. Each op
//! runs twice, in two processes sharing a new, empty `CUDA_CACHE_PATH`: **cold** (nothing cached,
//! as on a new machine) and **warm** (the first process filled the cache).
//!
//!     cargo run --release --example first_use [-- --only OP...]
//!
//! Each first call's kernels say where they came from: `sass` (a prebuilt cubin, no JIT) or
//! `ptx` (JIT-compiled by the driver), and how long their modules took to decompress. Before the
//! table (and without a GPU), every embedded module is decoded once and the decode times shown.
//! `GPUPRIMS_LOAD_ARCH=sm_70` measures the portable path; a build without the `sass-sm*`
//! features, the JIT of every kernel.
//!
//! Times include the host↔device copies of the op's host arrays, as a caller sees them. This
//! process holds a context on the device while its children run, so their `cuInit` finds the
//! device awake: a lone process on an idle device pays more for its context
//! (`scripts/device-probes/context_floor.cu`).

use std::process::Command;
use std::time::Instant;

use gpuprims::kernels::{self, ModuleKind};
use gpuprims::{AvgPool2d, Border, Chain, Gpu, LoadedFrom, Pool2d};
use ndarray::{Array2, Array4};

/// Every op timed, by name.
const OPS: &[&str] = &[
    "sum",
    "sum_of_squares",
    "min",
    "max",
    "mean_variance",
    "conv1d",
    "convolve1d",
    "mean_filter1d",
    "window_sum_sumsq f32",
    "window_sum_sumsq exact",
    "box_sum",
    "box_sum_sumsq",
    "local_mean_variance",
    "local_std",
    "max_pool2d",
    "max_pool2d_indices",
    "avg_pool2d",
    "dilate 3x3",
    "dilate 5x5",
    "dilate 31x31",
    "erode 3x3",
    "morphological_gradient",
    "opening",
    "closing",
    "gaussian3x3",
    "gaussian",
    "sobel",
    "sobel_magnitude",
    "correlate2d",
    "separable2d",
    "chain",
];

/// The README's inputs.
struct Inputs {
    img: Array2<u8>,
    img_f32: Array2<f32>,
    signals: Array2<f64>,
    nchw: Array4<f32>,
}

impl Inputs {
    fn new() -> Inputs {
        let img = Array2::from_shape_fn((1080, 1920), |(y, x)| ((x * 7 + y * 13) % 256) as u8);
        Inputs {
            img_f32: img.mapv(f32::from),
            img,
            signals: Array2::from_shape_fn((4, 10_000), |(r, i)| ((r + i) as f64).sin()),
            nchw: Array4::from_shape_fn((5, 5, 25, 25), |(n, c, h, w)| ((n + c * 3 + h * 7 + w) % 11) as f32),
        }
    }
}

/// Runs op `name` once (results dropped after they reach the host).
fn run(gpu: &Gpu, name: &str, x: &Inputs) -> gpuprims::Result<()> {
    let b = Border::Reflect;
    let img = &x.img;
    match name {
        "sum" => drop(gpu.sum(img)?),
        "sum_of_squares" => drop(gpu.sum_of_squares(img)?),
        "min" => drop(gpu.min(img)?),
        "max" => drop(gpu.max(img)?),
        "mean_variance" => drop(gpu.mean_variance(img)?),
        "conv1d" => drop(gpu.conv1d(&x.signals, &[-0.5, 0.0, 0.5], b)?),
        "convolve1d" => drop(gpu.convolve1d(&x.signals, &[1.0, 2.0], Border::Wrap)?),
        "mean_filter1d" => drop(gpu.mean_filter1d(&x.signals, 5, Border::Zero)?),
        "window_sum_sumsq f32" => {
            let _: (Array2<f32>, Array2<f32>) = gpu.window_sum_sumsq(img, 15, Border::Zero)?;
        }
        "window_sum_sumsq exact" => {
            let _ = gpu.window_sum_sumsq_exact(img, 15, Border::Zero)?;
        }
        "box_sum" => {
            let _ = gpu.box_sum_exact(img, (5, 5), Border::Replicate)?;
        }
        "box_sum_sumsq" => {
            let _: (Array2<f32>, Array2<f32>) = gpu.box_sum_sumsq(img, (15, 15), b)?;
        }
        "local_mean_variance" => {
            let _: (Array2<f32>, Array2<f32>) = gpu.local_mean_variance(img, (15, 15), b)?;
        }
        "local_std" => {
            let _: Array2<f32> = gpu.local_std(img, (15, 15), b)?;
        }
        "max_pool2d" => drop(gpu.max_pool2d(&x.nchw, Pool2d::new((2, 2)).ceil_mode(true))?),
        "max_pool2d_indices" => {
            drop(gpu.max_pool2d_indices(&x.nchw, Pool2d::new((3, 3)).stride((2, 2)).padding((1, 1)))?)
        }
        "avg_pool2d" => drop(gpu.avg_pool2d(&x.nchw, AvgPool2d::new((2, 2)))?),
        "dilate 3x3" => drop(gpu.dilate(img, (3, 3), b)?),
        "dilate 5x5" => drop(gpu.dilate(img, (5, 5), b)?),
        "dilate 31x31" => drop(gpu.dilate(img, (31, 31), b)?),
        "erode 3x3" => drop(gpu.erode(img, (3, 3), b)?),
        "morphological_gradient" => drop(gpu.morphological_gradient(img, (3, 3), b)?),
        "opening" => drop(gpu.opening(img, (3, 3), b)?),
        "closing" => drop(gpu.closing(img, (3, 3), b)?),
        "gaussian3x3" => drop(gpu.gaussian3x3(img, b)?),
        "gaussian" => drop(gpu.gaussian(img, 2.0, b)?),
        "sobel" => drop(gpu.sobel(img, 0, b)?),
        "sobel_magnitude" => drop(gpu.sobel_magnitude(img, b)?),
        "correlate2d" => {
            let k = Array2::from_shape_fn((3, 3), |(i, j)| (i * 3 + j) as f32 / 36.0);
            drop(gpu.correlate2d(&x.img_f32, k.view(), b)?)
        }
        "separable2d" => drop(gpu.separable2d(img, &[0.25, 0.5, 0.25], &[0.25, 0.5, 0.25], b)?),
        "chain" => drop(gpu.chain(img, &Chain::new().gaussian3x3().dilate((3, 3)).sobel(1), b)?),
        other => {
            return Err(gpuprims::Error::InvalidArgument {
                name: "op",
                reason: format!("unknown op {other:?}"),
            });
        }
    }
    Ok(())
}

/// The child: `--op NAME` prints `init_ms gpu_new_ms first_ms kernels from decode_ms second_ms`
/// (`init`: the driver's `cuInit`, which `Gpu::new` would otherwise pay, timed on its own first;
/// `from`: how many kernels loaded from SASS and how many JIT-compiled from PTX, as `2sass+1ptx`).
fn child(name: &str) -> i32 {
    let inputs = Inputs::new();
    let init = Instant::now();
    let _ = cudarc::driver::CudaContext::device_count();
    let init_ms = init.elapsed().as_secs_f64() * 1e3;
    let t0 = Instant::now();
    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(e) => {
            println!("error {e}");
            return 1;
        }
    };
    let t1 = Instant::now();
    let first = run(&gpu, name, &inputs);
    let t2 = Instant::now();
    let second = run(&gpu, name, &inputs);
    let t3 = Instant::now();
    if let Err(e) = first.and(second) {
        println!("error {e}");
        return 1;
    }
    let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
    let loads = gpu.kernel_loads();
    let sass = loads
        .iter()
        .filter(|l| matches!(l.from, LoadedFrom::Sass { .. }))
        .count();
    let decode: f64 = loads.iter().map(|l| l.decode.as_secs_f64() * 1e3).sum();
    println!(
        "{init_ms:.2} {:.2} {:.2} {} {sass}sass+{}ptx {decode:.3} {:.2}",
        ms(t0, t1),
        ms(t1, t2),
        loads.len(),
        loads.len() - sass,
        ms(t2, t3)
    );
    0
}

/// Decodes every embedded module once and prints what the binary carries and the decode times.
fn decode_summary() {
    let mut times = [Vec::new(), Vec::new()];
    let (mut stored, mut raw) = (0usize, 0usize);
    for m in kernels::all() {
        for module in m.ptx_modules().chain(m.sass_modules().map(|(c, _)| c)) {
            let t = Instant::now();
            if let Err(e) = module.decode() {
                println!("decode failed: {e}");
                std::process::exit(1);
            }
            times[(module.kind() == ModuleKind::Sass) as usize].push(t.elapsed().as_secs_f64() * 1e3);
            stored += module.stored_len();
            raw += module.decoded_len();
        }
    }
    let mut all: Vec<f64> = times.concat();
    all.sort_by(f64::total_cmp);
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let (ptx, sass) = (times[0].len(), times[1].len());
    println!(
        "Embedded kernels ({:?}): {ptx} PTX modules and {sass} cubins (sm {:?}), {:.2} MB in the binary, \
         {:.2} MB decoded. Decode per module: median {:.3} ms (PTX {:.3}, SASS {:.3}), max {:.3} ms.",
        kernels::origin(),
        kernels::sass_archs(),
        stored as f64 / 1e6,
        raw as f64 / 1e6,
        median(&mut all),
        median(&mut times[0]),
        median(&mut times[1]),
        all.last().copied().unwrap_or(f64::NAN)
    );
}

/// One child run of `op` with `CUDA_CACHE_PATH=cache`.
struct Run {
    /// cuInit + Gpu::new, and cuInit alone.
    new: f64,
    init: f64,
    first: f64,
    kernels: usize,
    from: String,
    decode: f64,
    second: f64,
}

fn measure(op: &str, cache: &std::path::Path) -> Result<Run, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .args(["--op", op])
        .env("CUDA_CACHE_PATH", cache)
        .env_remove("CUDA_CACHE_DISABLE")
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    let num = |v: &str| v.parse::<f64>().map_err(|_| text.to_string());
    match text.split_whitespace().collect::<Vec<_>>()[..] {
        [init, new, first, kernels, from, decode, second] => Ok(Run {
            new: num(init)? + num(new)?,
            init: num(init)?,
            first: num(first)?,
            kernels: kernels.parse().map_err(|_| text.to_string())?,
            from: from.to_string(),
            decode: num(decode)?,
            second: num(second)?,
        }),
        _ => Err(format!(
            "{}{}",
            text.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--op") {
        std::process::exit(child(args.get(i + 1).map_or("", String::as_str)));
    }
    decode_summary();
    if let Err(e) = Gpu::new() {
        println!("No GPU: {e}. First-use times need a device.");
        return;
    }
    let ops: Vec<&str> = match args.iter().position(|a| a == "--only") {
        Some(i) => args[i + 1..].iter().map(String::as_str).collect(),
        None => OPS.to_vec(),
    };
    let root = std::env::temp_dir().join(format!("gpuprims-first-use-{}", std::process::id()));
    println!("Each op in fresh processes; cold: an empty CUDA_CACHE_PATH, warm: the cache the cold run filled.");
    println!(
        "| op | Gpu::new cold ms (of which cuInit) | first call cold ms | kernels loaded | from | of which decode ms | \
         Gpu::new + first call warm ms | steady call ms |"
    );
    println!("|---|---:|---:|---:|---|---:|---:|---:|");
    let (mut news, mut firsts, mut warms) = (Vec::new(), Vec::new(), Vec::new());
    let mut failed = false;
    for (i, op) in ops.iter().enumerate() {
        let cache = root.join(i.to_string());
        let runs = std::fs::create_dir_all(&cache)
            .map_err(|e| e.to_string())
            .and_then(|_| Ok((measure(op, &cache)?, measure(op, &cache)?)));
        match runs {
            Ok((cold, warm)) => {
                println!(
                    "| {op} | {:.1} ({:.1}) | {:.1} | {} | {} | {:.3} | {:.1} | {:.2} |",
                    cold.new,
                    cold.init,
                    cold.first,
                    cold.kernels,
                    cold.from,
                    cold.decode,
                    warm.new + warm.first,
                    warm.second
                );
                news.push(cold.new);
                firsts.push(cold.first);
                warms.push(warm.new + warm.first);
            }
            Err(e) => {
                println!("| {op} | FAILED: {e} | | | | | | |");
                failed = true;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    let stats = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (
            v.get(v.len() / 2).copied().unwrap_or(f64::NAN),
            v.last().copied().unwrap_or(f64::NAN),
        )
    };
    let ((nm, nx), (fm, fx), (wm, wx)) = (stats(&mut news), stats(&mut firsts), stats(&mut warms));
    println!(
        "Gpu::new cold: median {nm:.1} ms, max {nx:.1} ms; first call cold: median {fm:.1} ms, max {fx:.1} ms; \
         Gpu::new + first call warm: median {wm:.1} ms, max {wx:.1} ms"
    );
    if failed {
        std::process::exit(1);
    }
}
