//! The sum-of-squares ladder: every variant timed and checked, `Auto` with and without the
//! host's launch latency, and the CPU baselines.

use super::*;

/// Times every variant of the sum-of-squares ladder on `host` (i32 → exact u128), checks each
/// result against `want`, and returns one row per variant.
pub fn sumsq_ladder(gpu: &Gpu, host: &[i32], want: u128, copy_gbps: f64) -> Result<Vec<Row>> {
    let inputs = rotating_copies(gpu, host)?;
    let n = host.len();
    let mut rows = Vec::new();
    for variant in ReduceVariant::ALL {
        let launch = ReducePlan::<SumSq<i32>>::new(gpu, n, variant)?;
        // A first timed run sizes the rest (≈ 300 ms of GPU time, 3..=200 runs); a variant that
        // takes over a second (step 1 on 2^28 ints) is reported from that single run.
        let probe = gpu.time_launches(0, 1, |_| launch.poison(gpu), |_| launch.enqueue(gpu, &inputs[0]))?;
        let (t, runs) = if probe.median_us > 1e6 {
            (probe, 1)
        } else {
            let runs = runs_for(probe.median_us, 200);
            let t = gpu.time_launches(
                3,
                runs,
                |_| launch.poison(gpu),
                |i| launch.enqueue(gpu, &inputs[i % inputs.len()]),
            )?;
            (t, runs)
        };
        // The vendor peers time one buffer over and over; where ours rotate (input < 2 × L2),
        // also time that L2-warm case for a like-for-like comparison.
        let mut note = format!("{runs} runs, grid {}", launch.grid());
        if inputs.len() > 1 && variant == ReduceVariant::WarpShuffleVec {
            let warm = gpu.time_launches(3, runs, |_| Ok(()), |_| launch.enqueue(gpu, &inputs[0]))?;
            note += &format!("; one buffer (L2-warm): {:.2} µs", warm.median_us);
        }
        // Correctness on input 0, after poisoning.
        launch.poison(gpu)?;
        launch.enqueue(gpu, &inputs[0])?;
        let got = launch.result(gpu)?.to_u128();
        rows.push(Row {
            family: "sum_of_squares i32→u128",
            variant: variant.name().into(),
            n,
            median_us: t.median_us,
            bytes: 4.0 * n as f64,
            copy_gbps,
            ok: got == want,
            note,
        });
    }
    Ok(rows)
}

/// `Auto` on `host` (i32 → exact u128): two rows, the GPU's time and the time with the host's
/// launch latency inside the events (one isolated call), each checked against `want`.
pub fn sumsq_auto(gpu: &Gpu, host: &[i32], want: u128, copy_gbps: f64) -> Result<Vec<Row>> {
    let inputs = rotating_copies(gpu, host)?;
    let n = host.len();
    let launch = ReducePlan::<SumSq<i32>>::new(gpu, n, ReduceVariant::Auto)?;
    let probe = gpu.time_launches(1, 1, |_| launch.poison(gpu), |_| launch.enqueue(gpu, &inputs[0]))?;
    let runs = runs_for(probe.median_us, 200);
    let prepare = |_| launch.poison(gpu);
    let run = |i: usize| launch.enqueue(gpu, &inputs[i % inputs.len()]);
    let held = gpu.time_launches(3, runs, prepare, run)?;
    let with_host = gpu.time_launches_as(gpuprims::TimedAs::WithHostLatency, 3, runs, prepare, run)?;
    launch.poison(gpu)?;
    launch.enqueue(gpu, &inputs[0])?;
    let ok = launch.result(gpu)?.to_u128() == want;
    let row = |variant: &str, t: gpuprims::Timing| Row {
        family: "sum_of_squares i32→u128",
        variant: variant.into(),
        n,
        median_us: t.median_us,
        bytes: 4.0 * n as f64,
        copy_gbps,
        ok,
        note: format!("{runs} runs, grid {}", launch.grid()),
    };
    Ok(vec![
        row("auto (GPU time)", held),
        row("auto + host launch latency", with_host),
    ])
}

/// CPU baselines: (serial µs, rayon µs), each checked against `want`.
pub fn cpu_baselines(host: &[i32], want: u128) -> (f64, f64) {
    let runs = if host.len() > 1 << 24 { 3 } else { 11 };
    let (serial, s) = cpu_time_us(runs, || cpu::serial_sum_sq_i32(host));
    let (par, p) = cpu_time_us(runs, || cpu::par_sum_sq_i32(host));
    assert_eq!((s, p), (want, want), "CPU baselines disagree with the reference");
    (serial, par)
}
