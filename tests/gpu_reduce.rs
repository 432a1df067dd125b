//! GPU reduction trials: every variant × dtype × op over sizes and value patterns, against the CPU
//! reference (exact for integers), with poisoned partials; plus the public API on layouts,
//! device arrays, empty input and determinism.

use gpuprims::cpu::reduce as cpu;
use gpuprims::ops::reduce::HostReducer;

use gpuprims::{DeviceArray, Error, Gpu, ReduceElement, ReducePlan, ReducePolicy, ReduceVariant};
use libtest_mimic::{Failed, Trial};
use ndarray::{Array1, Array2, s};
use rand::Rng;

use crate::common::{Gen, PATTERNS, Pattern, gpu_trial, rng};

/// Sizes: 1, warp ± 1, block ± 1, 1023, 2^20, 2^20 + 7 and two seeded random ones.
fn sizes() -> Vec<usize> {
    let mut r = rng(0x5153);
    vec![
        1,
        31,
        32,
        33,
        255,
        256,
        257,
        1023,
        1 << 20,
        (1 << 20) + 7,
        r.random_range(2..5000),
        r.random_range(5000..300_000),
    ]
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Sum,
    SumSq,
    Min,
    Max,
    MeanVar,
}
const OPS: [Op; 5] = [Op::Sum, Op::SumSq, Op::Min, Op::Max, Op::MeanVar];

/// Runs one reduction through a poisoned [`ReducePlan`].
fn run<R: HostReducer>(gpu: &Gpu, x: &[R::In], variant: ReduceVariant, policy: ReducePolicy) -> Result<R::Acc, Failed> {
    let input = gpu.stream().clone_htod(x).map_err(|e| e.to_string())?;
    let launch = ReducePlan::<R>::with_policy(gpu, x.len(), variant, policy)?;
    launch.poison(gpu)?;
    launch.enqueue(gpu, &input)?;
    Ok(launch.result(gpu)?)
}

/// Relative closeness for float results: |a − b| ≤ tol · scale.
fn close(a: f64, b: f64, scale: f64, tol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * scale
}

/// Comparison of GPU results with the CPU oracle, per element type.
trait Oracle: ReduceElement + Gen + cpu::RefNum {
    fn check_sum(got: Self::Sum, x: &[Self]) -> Result<(), String>;
    fn check_sumsq(got: Self::SumSq, x: &[Self]) -> Result<(), String>;
    fn same(a: Self, b: Self) -> bool;
}

macro_rules! int_oracle {
    ($t:ty) => {
        impl Oracle for $t {
            fn check_sum(got: Self::Sum, x: &[Self]) -> Result<(), String> {
                let want = cpu::sum_int(x);
                if got as i128 == want {
                    Ok(())
                } else {
                    Err(format!("sum {got} != {want}"))
                }
            }
            fn check_sumsq(got: Self::SumSq, x: &[Self]) -> Result<(), String> {
                let want = cpu::sum_sq_int(x);
                if got as u128 == want {
                    Ok(())
                } else {
                    Err(format!("sum of squares {got} != {want}"))
                }
            }
            fn same(a: Self, b: Self) -> bool {
                a == b
            }
        }
    };
}
int_oracle!(i32);
int_oracle!(u32);
int_oracle!(u8);

macro_rules! float_oracle {
    ($t:ty) => {
        impl Oracle for $t {
            fn check_sum(got: f64, x: &[Self]) -> Result<(), String> {
                let want = cpu::sum_float(x);
                let scale = cpu::sum_f64_by(x, f64::abs);
                if close(got, want, scale, 1e-11) {
                    Ok(())
                } else {
                    Err(format!("sum {got:e} != {want:e}"))
                }
            }
            fn check_sumsq(got: f64, x: &[Self]) -> Result<(), String> {
                let want = cpu::sum_sq_float(x);
                if close(got, want, want.abs(), 1e-11) {
                    Ok(())
                } else {
                    Err(format!("sum of squares {got:e} != {want:e}"))
                }
            }
            fn same(a: Self, b: Self) -> bool {
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
            }
        }
    };
}
float_oracle!(f32);
float_oracle!(f64);

fn check_case<T: Oracle>(
    gpu: &Gpu,
    op: Op,
    x: &[T],
    variant: ReduceVariant,
    policy: ReducePolicy,
) -> Result<(), String> {
    let f = |e: Failed| format!("{e:?}");
    match op {
        Op::Sum => T::check_sum(T::sum_out(run::<T::SumR>(gpu, x, variant, policy).map_err(f)?), x),
        Op::SumSq => T::check_sumsq(T::sumsq_out(run::<T::SumSqR>(gpu, x, variant, policy).map_err(f)?), x),
        Op::Min | Op::Max => {
            let (got, want) = match op {
                Op::Min => (
                    run::<T::MinR>(gpu, x, variant, policy).map_err(f)?,
                    cpu::min(x).unwrap(),
                ),
                _ => (
                    run::<T::MaxR>(gpu, x, variant, policy).map_err(f)?,
                    cpu::max(x).unwrap(),
                ),
            };
            if T::same(got, want) {
                Ok(())
            } else {
                Err(format!("{op:?} {got:?} != {want:?}"))
            }
        }
        Op::MeanVar => {
            let acc = run::<T::MeanVarR>(gpu, x, variant, policy).map_err(f)?;
            let got = T::moments_out(acc, x[0], x.len());
            let (mean, var) = cpu::mean_variance(x).unwrap();
            let ok_mean = close(got.mean, mean, mean.abs().max(var.sqrt()), 1e-9);
            let ok_var = close(got.variance, var, var.abs().max(mean * mean * 1e-6), 1e-8);
            if ok_mean && ok_var {
                Ok(())
            } else {
                Err(format!(
                    "mean/var ({:e}, {:e}) != ({mean:e}, {var:e})",
                    got.mean, got.variance
                ))
            }
        }
    }
}

fn check_all<T: Oracle>(gpu: &Gpu, op: Op, variant: ReduceVariant, policy: ReducePolicy) -> Result<(), Failed> {
    for n in sizes() {
        for (pi, &p) in PATTERNS.iter().enumerate() {
            if !T::IS_FLOAT && p == Pattern::OneNan {
                continue;
            }
            let x = T::make(p, n, (n as u64) << 8 | pi as u64);
            check_case(gpu, op, &x, variant, policy).map_err(|e| format!("n={n} {p:?}: {e}"))?;
        }
    }
    Ok(())
}

fn matrix_for<T: Oracle>(dtype: &'static str, out: &mut Vec<Trial>) {
    for op in OPS {
        for variant in ReduceVariant::ALL {
            out.push(gpu_trial(
                format!("gpu::reduce::{op:?}::{dtype}::{}", variant.name()),
                move |g| check_all::<T>(g, op, variant, ReducePolicy::default()),
            ));
            if variant.step().fixed_grid().is_none() {
                // A 3-block grid: every thread runs many grid-stride trips.
                let small = ReducePolicy {
                    max_blocks: Some(3),
                    ..ReducePolicy::default()
                };
                out.push(gpu_trial(
                    format!("gpu::reduce::{op:?}::{dtype}::{}::grid3", variant.name()),
                    move |g| check_all::<T>(g, op, variant, small),
                ));
            }
        }
    }
}

pub fn trials() -> Vec<Trial> {
    let mut t = Vec::new();
    matrix_for::<i32>("i32", &mut t);
    matrix_for::<u8>("u8", &mut t);
    matrix_for::<u32>("u32", &mut t);
    matrix_for::<f32>("f32", &mut t);
    matrix_for::<f64>("f64", &mut t);
    t.push(gpu_trial(
        "gpu::reduce::api::strided_and_transposed_views".into(),
        api_views,
    ));
    t.push(gpu_trial(
        "gpu::reduce::api::device_array_roundtrip".into(),
        api_device_array,
    ));
    t.push(gpu_trial("gpu::reduce::api::empty_input".into(), api_empty));
    t.push(gpu_trial(
        "gpu::reduce::api::deterministic_bits".into(),
        api_deterministic,
    ));
    t.push(gpu_trial(
        "gpu::reduce::api::bad_launch_arguments".into(),
        api_bad_arguments,
    ));
    t.push(gpu_trial(
        "gpu::reduce::plan_reused_with_poison".into(),
        plan_reused_with_poison,
    ));
    t
}

/// One plan enqueued again and again on fresh inputs, poisoned before each launch, its result
/// bit-equal to a single-thread plan's on the same input. Exact integer sums alternate between
/// step 8's two limb slots, so this checks that each launch leaves the next one's slot zeroed,
/// that the poison never reaches the slot a launch adds into, and that two launches in a row
/// report the second; a max of f64 checks the same for the ticket.
fn plan_reused_with_poison(gpu: &Gpu) -> Result<(), Failed> {
    use gpuprims::abi::reduce::{Max, MeanVar, Sum, SumSq};
    reuse::<SumSq<i32>>(gpu)?;
    reuse::<Sum<i32>>(gpu)?;
    reuse::<SumSq<u8>>(gpu)?;
    reuse::<MeanVar<u32>>(gpu)?;
    reuse::<Max<f64>>(gpu)
}

fn reuse<R: HostReducer>(gpu: &Gpu) -> Result<(), Failed>
where
    R::In: Gen,
    R::Acc: PartialEq + std::fmt::Debug,
{
    let name = std::any::type_name::<R>();
    for (n, max_blocks) in [(300_001, None), (70_000, Some(3)), (1000, None)] {
        let policy = ReducePolicy {
            max_blocks,
            ..ReducePolicy::default()
        };
        let plan = ReducePlan::<R>::with_policy(gpu, n, ReduceVariant::Auto, policy)?;
        let serial = ReducePlan::<R>::with_policy(gpu, n, ReduceVariant::SingleThread, policy)?;
        for round in 0..5u64 {
            let x = R::In::make(Pattern::Random, n, round << 32 | n as u64);
            let input = gpu.stream().clone_htod(&x).map_err(|e| e.to_string())?;
            plan.poison(gpu)?;
            plan.enqueue(gpu, &input)?;
            if round == 3 {
                // Two launches in a row on different inputs: the result is the second's.
                let y = R::In::make(Pattern::Random, n, 77 + round);
                let other = gpu.stream().clone_htod(&y).map_err(|e| e.to_string())?;
                plan.enqueue(gpu, &other)?;
                plan.enqueue(gpu, &input)?;
            }
            let got = plan.result(gpu)?;
            serial.poison(gpu)?;
            serial.enqueue(gpu, &input)?;
            let want = serial.result(gpu)?;
            if got != want {
                return Err(format!(
                    "{name}, n = {n}, grid {}, round {round}: {got:?} != {want:?}",
                    plan.grid()
                )
                .into());
            }
        }
    }
    Ok(())
}

fn api_views(gpu: &Gpu) -> Result<(), Failed> {
    let a = Array2::from_shape_fn((301, 517), |(i, j)| (i as i32 * 7919 - j as i32 * 104_729) ^ 0x5a5a);
    let views = [a.view(), a.t(), a.slice(s![..;2, 3..;5]), a.slice(s![..;-3, ..])];
    for v in views {
        let flat: Vec<i32> = v.iter().copied().collect();
        let got = gpu.sum_of_squares(&v)?;
        if got != cpu::sum_sq_int(&flat) {
            return Err(format!("view {:?}: {got} != {}", v.shape(), cpu::sum_sq_int(&flat)).into());
        }
        if gpu.min(&v)? != cpu::min(&flat).unwrap() || gpu.max(&v)? != cpu::max(&flat).unwrap() {
            return Err(format!("view {:?}: min/max differ", v.shape()).into());
        }
    }
    Ok(())
}

fn api_device_array(gpu: &Gpu) -> Result<(), Failed> {
    let x = Array1::from(f64::make(Pattern::Random, 100_003, 99));
    let d = DeviceArray::upload(gpu, &x)?;
    if d.download(gpu)? != x {
        return Err("download differs from upload".into());
    }
    let (from_dev, from_host) = (gpu.sum(&d)?, gpu.sum(&x)?);
    if from_dev.to_bits() != from_host.to_bits() {
        return Err(format!("device-array input {from_dev} != host input {from_host}").into());
    }
    let mv = gpu.mean_variance(&d)?;
    let (m, v) = cpu::mean_variance(x.as_slice().unwrap()).unwrap();
    if !close(mv.mean, m, v.sqrt(), 1e-12) || !close(mv.variance, v, v, 1e-10) {
        return Err(format!("mean_variance {mv:?} != ({m}, {v})").into());
    }
    Ok(())
}

fn api_empty(gpu: &Gpu) -> Result<(), Failed> {
    let e = Array1::<i32>::zeros(0);
    let ef = Array2::<f32>::zeros((0, 4));
    if gpu.sum(&e)? != 0 || gpu.sum_of_squares(&e)? != 0 || gpu.sum(&ef)? != 0.0 {
        return Err("sum of empty input is not 0".into());
    }
    for variant in ReduceVariant::ALL {
        if gpu.sum_with(&e, variant)? != 0 {
            return Err(format!("{}: sum of empty input is not 0", variant.name()).into());
        }
    }
    match (gpu.min(&e), gpu.max(&ef), gpu.mean_variance(&e)) {
        (
            Err(Error::EmptyInput { op: "min" }),
            Err(Error::EmptyInput { op: "max" }),
            Err(Error::EmptyInput { op: "mean_variance" }),
        ) => Ok(()),
        other => Err(format!("expected EmptyInput errors, got {other:?}").into()),
    }
}

fn api_deterministic(gpu: &Gpu) -> Result<(), Failed> {
    let x = Array1::from(f32::make(Pattern::Random, (1 << 20) + 7, 5));
    for variant in ReduceVariant::ALL[3..].iter().copied() {
        let a = gpu.sum_with(&x, variant)?;
        for _ in 0..5 {
            let b = gpu.sum_with(&x, variant)?;
            if a.to_bits() != b.to_bits() {
                return Err(format!("{}: {a:e} then {b:e}", variant.name()).into());
            }
        }
    }
    Ok(())
}

fn api_bad_arguments(gpu: &Gpu) -> Result<(), Failed> {
    type R = gpuprims::abi::reduce::Sum<i32>;
    let zero = ReducePlan::<R>::with_policy(gpu, 0, ReduceVariant::Auto, ReducePolicy::default());
    let no_blocks = ReducePlan::<R>::with_policy(
        gpu,
        10,
        ReduceVariant::GridStride,
        ReducePolicy {
            max_blocks: Some(0),
            ..Default::default()
        },
    );
    let launch = ReducePlan::<R>::with_policy(gpu, 100, ReduceVariant::Auto, ReducePolicy::default())?;
    let short = gpu.stream().clone_htod(&[1i32; 10]).map_err(|e| e.to_string())?;
    let too_short = launch.enqueue(gpu, &short);
    match (zero, no_blocks, too_short) {
        (
            Err(Error::InvalidArgument { .. }),
            Err(Error::InvalidArgument { .. }),
            Err(Error::InvalidArgument { .. }),
        ) => {}
        (a, b, c) => {
            return Err(format!("expected InvalidArgument x3, got {:?} {:?} {c:?}", a.err(), b.err()).into());
        }
    }
    Ok(())
}
