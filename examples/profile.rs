//! Launches one configuration a few times and nothing else: a target for a profiler, so `ncu`
//! sees exactly the kernel under study (no warm-up ladder, no other sizes).
//!
//!     cargo run --release --example profile -- conv1d f64 27 31 register-blocked-vector
//!     cargo run --release --example profile -- reduce 20 auto
//!     ncu --set full -k regex:register_blocked_vector -c 1 target/release/examples/profile conv1d f32 27 31 register-blocked-vector
//!
//!     ncu --set full -k regex:sliding -c 1 target/release/examples/profile window i32 8192 15 auto
//!
//! Arguments: `conv1d <f32|f64> <log2 n> <taps> <variant>` (a mean filter, zero border),
//! `reduce <log2 n> <variant>` (sum of squares of i32) or `window <u8|u16|i32|f32> <side>
//! <width> <variant>` (row sums and sums of squares of a side² image into two f32 images, zero
//! border) or `pool <planes> <variant> [avg]` (ResNet's 3 × 3 stride-2 padding-1 max pooling of
//! f32 planes of 224², or with `avg` its average pooling) or `chain <planes> <side>` (W12's
//! fused Gaussian → dilation → Sobel, reflect border, over u8 planes of side²); variant names as
//! in the tables (`auto` for `Auto`). Prints the median of the launches (GPU time) for
//! orientation only.

#[path = "support/mod.rs"]
mod support;

use gpuprims::abi::reduce::SumSq;
use gpuprims::{
    Border, Conv1dElement, Conv1dPlan, Conv1dVariant, Filter1d, Gpu, Pool2d, PoolPlan, PoolShape, PoolVariant,
    ReducePlan, ReduceVariant, WindowElement, WindowFloat, WindowPlan, WindowVariant,
};

const LAUNCHES: usize = 5;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = Gpu::new().and_then(|gpu| match words.as_slice() {
        ["conv1d", "f32", log2, taps, variant] => conv1d::<f32>(&gpu, parse(log2), parse(taps), variant),
        ["conv1d", "f64", log2, taps, variant] => conv1d::<f64>(&gpu, parse(log2), parse(taps), variant),
        ["reduce", log2, variant] => reduce(&gpu, parse(log2), variant),
        ["pool", planes, variant] => pool(&gpu, parse(planes), variant, false),
        ["pool", planes, variant, "avg"] => pool(&gpu, parse(planes), variant, true),
        ["chain", planes, side] => chain(&gpu, parse(planes), parse(side)),
        ["window", "u8", side, width, variant] => window::<u8>(&gpu, parse(side), parse(width), variant),
        ["window", "u16", side, width, variant] => window::<u16>(&gpu, parse(side), parse(width), variant),
        ["window", "i32", side, width, variant] => window::<i32>(&gpu, parse(side), parse(width), variant),
        ["window", "f32", side, width, variant] => window::<f32>(&gpu, parse(side), parse(width), variant),
        _ => {
            eprintln!(
                "usage: profile conv1d <f32|f64> <log2 n> <taps> <variant> | profile reduce <log2 n> <variant> \
                 | profile window <u8|u16|i32|f32> <side> <width> <variant> | profile pool <planes> <variant> [avg]"
            );
            std::process::exit(2);
        }
    });
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn parse(s: &str) -> usize {
    s.parse().unwrap_or_else(|_| {
        eprintln!("not a number: {s}");
        std::process::exit(2)
    })
}

/// The variant among `all` (then `auto`) whose table name is `wanted`; exits on an unknown name.
fn pick<V: Copy>(all: impl IntoIterator<Item = V>, auto: V, name: fn(V) -> &'static str, wanted: &str) -> V {
    all.into_iter()
        .chain([auto])
        .find(|&v| name(v) == wanted)
        .unwrap_or_else(|| {
            eprintln!("unknown variant: {wanted}");
            std::process::exit(2)
        })
}

fn conv1d<T: Conv1dElement>(gpu: &Gpu, log2: usize, taps: usize, variant: &str) -> gpuprims::Result<()> {
    let variant = pick(Conv1dVariant::ALL, Conv1dVariant::Auto, Conv1dVariant::name, variant);
    let n = 1usize << log2;
    let x = gpu.stream().clone_htod(&support::random_signal::<T>(n, log2 as u64))?;
    // SAFETY: every output is written by each launch.
    let mut y = unsafe { gpu.stream().alloc::<T>(n) }?;
    let plan = Conv1dPlan::new(gpu, 1, n, &Filter1d::mean(taps)?, Border::Zero, variant)?;
    let t = gpu.time_launches(0, LAUNCHES, |_| Ok(()), |_| plan.enqueue(gpu, &x, &mut y))?;
    println!(
        "conv1d {} 2^{log2} × {taps}: median {:.2} µs",
        plan.variant().name(),
        t.median_us
    );
    Ok(())
}

fn reduce(gpu: &Gpu, log2: usize, variant: &str) -> gpuprims::Result<()> {
    let variant = pick(ReduceVariant::ALL, ReduceVariant::Auto, ReduceVariant::name, variant);
    let n = 1usize << log2;
    let x = gpu.stream().clone_htod(&support::tutorial_ints(n, log2 as u64))?;
    let launch = ReducePlan::<SumSq<i32>>::new(gpu, n, variant)?;
    let t = gpu.time_launches(0, LAUNCHES, |_| Ok(()), |_| launch.enqueue(gpu, &x))?;
    println!(
        "reduce {} 2^{log2}: grid {}, median {:.2} µs",
        variant.name(),
        launch.grid(),
        t.median_us
    );
    Ok(())
}

fn window<T: WindowElement + TryFrom<u8>>(gpu: &Gpu, side: usize, width: usize, variant: &str) -> gpuprims::Result<()>
where
    f32: WindowFloat<T>,
{
    let variant = pick(WindowVariant::ALL, WindowVariant::Auto, WindowVariant::name, variant);
    let x = gpu
        .stream()
        .clone_htod(&support::image::<T>(side * side, side as u64))?;
    // SAFETY: every output is written by each launch.
    let (mut s, mut q) = unsafe {
        (
            gpu.stream().alloc::<f32>(side * side)?,
            gpu.stream().alloc::<f32>(side * side)?,
        )
    };
    let plan = WindowPlan::<T, f32, f32>::new(gpu, (side, side), width, Border::Zero, variant)?;
    let t = gpu.time_launches(0, LAUNCHES, |_| Ok(()), |_| plan.enqueue(gpu, &x, &mut s, &mut q))?;
    println!(
        "window {} {side}² × {width}: grid {}, median {:.2} µs",
        plan.variant().name(),
        plan.grid(),
        t.median_us
    );
    Ok(())
}

fn pool(gpu: &Gpu, planes: usize, variant: &str, avg: bool) -> gpuprims::Result<()> {
    use gpuprims::AvgPool2d;
    let variant = pick(PoolVariant::ALL, PoolVariant::Auto, PoolVariant::name, variant);
    let x = gpu
        .stream()
        .clone_htod(&support::pool_input::<f32>(planes * 224 * 224, 3))?;
    let plan = if avg {
        let p = AvgPool2d::new((3, 3)).stride((2, 2)).padding((1, 1));
        PoolPlan::<f32>::avg(gpu, PoolShape::avg(planes, 224, 224, p), variant)?
    } else {
        let p = Pool2d::new((3, 3)).stride((2, 2)).padding((1, 1));
        PoolPlan::<f32>::max(gpu, PoolShape::max(planes, 224, 224, p), variant)?
    };
    let (oh, ow) = plan.output_size();
    // SAFETY: every output is written by each launch.
    let mut y = unsafe { gpu.stream().alloc::<f32>(planes * oh * ow) }?;
    let t = gpu.time_launches(0, LAUNCHES, |_| Ok(()), |_| plan.enqueue(gpu, &x, &mut y, None))?;
    println!(
        "pool 3×3/2 {} {} {planes} × 224²: median {:.2} µs",
        if avg { "average" } else { "max" },
        plan.variant().name(),
        t.median_us
    );
    Ok(())
}

fn chain(gpu: &Gpu, planes: usize, side: usize) -> gpuprims::Result<()> {
    use gpuprims::{ChainPlan, Filter2dShape};
    let shape = Filter2dShape {
        planes,
        h: side,
        w: side,
    };
    let n = planes * side * side;
    let x = gpu.stream().clone_htod(&support::image::<u8>(n, side as u64))?;
    // SAFETY: written in full by each launch.
    let mut y = unsafe { gpu.stream().alloc::<i16>(n) }?;
    let plan = ChainPlan::new(gpu, shape, &support::w12_chain(), Border::Reflect)?;
    let t = gpu.time_launches(1, LAUNCHES, |_| Ok(()), |_| plan.enqueue(gpu, &x, &mut y))?;
    println!("chain {planes} × {side}²: median {:.2} µs", t.median_us);
    Ok(())
}
