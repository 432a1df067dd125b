//! CPU-only trials: the reference on hand-made cases, the contract's step layout, and errors that
//! need no GPU.

use gpuprims::abi::reduce::{REDUCE_BLOCK, ReduceStep, W128};
use gpuprims::cpu::reduce as cpu;
use gpuprims::{Error, Gpu, ReduceVariant};
use libtest_mimic::{Failed, Trial};

fn check(cond: bool, what: &str) -> Result<(), Failed> {
    if cond { Ok(()) } else { Err(what.to_string().into()) }
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("cpu::reference::integer_sums_exact", || {
            check(cpu::sum_sq_int(&[3i32, -4]) == 25, "3² + (−4)² = 25")?;
            check(
                cpu::sum_sq_int(&[i32::MIN, i32::MIN, i32::MAX]) == 2 * (1u128 << 62) + (i32::MAX as u128).pow(2),
                "extreme squares",
            )?;
            check(cpu::sum_int(&[u32::MAX; 3]) == 3 * u32::MAX as i128, "u32 sum")?;
            check(
                cpu::serial_sum_sq_i32(&[i32::MIN; 4]) == 1u128 << 64,
                "serial baseline past u64",
            )?;
            let big: Vec<i32> = (0..200_000).map(|i| i * 10_007 - 1_000_000_000).collect();
            check(
                cpu::par_sum_sq_i32(&big) == cpu::sum_sq_int(&big),
                "rayon baseline equals reference",
            )
        }),
        Trial::test("cpu::reference::compensated_float_sum", || {
            check(cpu::sum_float(&[1e16f64, 1.0, -1e16]) == 1.0, "Neumaier keeps the 1")?;
            check(cpu::sum_sq_float(&[0.5f32, -1.5]) == 2.5, "0.25 + 2.25")
        }),
        Trial::test("cpu::reference::min_max_nan_propagates", || {
            check(cpu::min(&[3.0f32, -1.0, 2.0]) == Some(-1.0), "min")?;
            check(cpu::max(&[3u8, 250, 2]) == Some(250), "max")?;
            check(cpu::min(&[1.0f64, f64::NAN, -5.0]).is_some_and(f64::is_nan), "NaN min")?;
            check(cpu::max(&[f32::NAN, 1.0]).is_some_and(f32::is_nan), "NaN max")?;
            check(cpu::min::<i32>(&[]).is_none(), "empty min")
        }),
        Trial::test("cpu::reference::mean_variance", || {
            check(cpu::mean_variance(&[1i32, 2, 3, 4]) == Some((2.5, 1.25)), "1..4")?;
            check(cpu::mean_variance(&[7.0f64]) == Some((7.0, 0.0)), "single")?;
            check(cpu::mean_variance::<u8>(&[]).is_none(), "empty")
        }),
        Trial::test("cpu::contract::w128_arithmetic", || {
            let a = W128::from_u64(u64::MAX).add_u64(1);
            check(a.to_u128() == 1u128 << 64, "carry into the high word")?;
            check(
                W128::from_i64(-5).wrapping_add(W128::from_i64(3)).to_i128() == -2,
                "signed add",
            )?;
            check(W128::from_i64(i64::MIN).to_i128() == i64::MIN as i128, "sign extension")
        }),
        Trial::test("cpu::contract::ladder_layout", || {
            check(
                ReduceVariant::ALL.len() == 8 && ReduceStep::ALL.len() == 8,
                "eight steps",
            )?;
            for (i, v) in ReduceVariant::ALL.iter().enumerate() {
                check(v.step().index() == i, "variant order follows the ladder")?;
                check(
                    v.name().starts_with(&(i + 1).to_string()),
                    "names carry the step number",
                )?;
            }
            check(
                ReduceVariant::Auto.step() == ReduceStep::WarpShuffleVec,
                "Auto is step 8",
            )?;
            check(
                ReduceStep::GridStride.partial_count(10) == 10 * REDUCE_BLOCK as usize,
                "step 4 partials",
            )?;
            check(
                ReduceStep::WarpShuffleVec.partial_count(10) == 11,
                "step 8 partials + result",
            )?;
            check(
                ReduceStep::WarpShuffleVec.shared_bytes(1) >= 8 + 8,
                "step 8 flag fits for u8",
            )
        }),
        Trial::test("cpu::errors::missing_device_is_an_error", || {
            match Gpu::with_device(usize::MAX) {
                Err(Error::NoDevice { reason }) if !reason.is_empty() => Ok(()),
                other => Err(format!("expected NoDevice, got {other:?}").into()),
            }
        }),
    ]
}
