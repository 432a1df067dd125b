//! 1D filter workloads: random signals, CPU baselines, the documented error bound, and the
//! ladder of every variant.

use super::*;

/// A seeded random signal in [-1, 1).
pub fn random_signal<T: Real>(n: usize, seed: u64) -> Vec<T> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| T::from_f64(r.random_range(-1.0..1.0))).collect()
}

/// A 1D filter workload: `rows` signals of `n` samples, a filter and a border.
pub struct Filter1dWork<'a, T> {
    pub x: &'a [T],
    pub rows: usize,
    pub n: usize,
    pub filter: &'a Filter1d<T>,
    pub border: Border,
}

/// CPU baselines of a 1D filter: (serial µs, rayon µs, serial output).
pub fn conv1d_cpu<T: Conv1dElement>(w: &Filter1dWork<T>) -> (f64, f64, Vec<T>) {
    let runs = if w.x.len() > 1 << 24 { 1 } else { 7 };
    let mut out = vec![T::ZERO; w.x.len()];
    let (taps, anchor) = (w.filter.taps(), w.filter.anchor());
    let (serial, _) = cpu_time_us(runs, || cpu1d::correlate(w.x, w.n, taps, anchor, w.border, &mut out));
    let mut par = vec![T::ZERO; w.x.len()];
    let (rayon, _) = cpu_time_us(runs, || {
        cpu1d::par_correlate(w.x, w.n, taps, anchor, w.border, &mut par)
    });
    assert!(par == out, "rayon and serial CPU filters disagree");
    (serial, rayon, out)
}

/// Whether a GPU output matches the serial CPU one within the documented bound (both sides'
/// rounding: `2 (L + 2) u Σ|t| max(|x|, |cval|)`), NaN equal to NaN.
pub fn conv1d_matches<T: Conv1dElement>(w: &Filter1dWork<T>, got: &[T], want: &[T]) -> bool {
    let u = if size_of::<T>() == 4 {
        2f64.powi(-24)
    } else {
        2f64.powi(-53)
    };
    let taps = w.filter.taps();
    let sum_abs: f64 = taps.iter().map(|t| t.to_f64().abs()).sum();
    let cval = match w.border {
        Border::Constant(v) => v.abs(),
        _ => 0.0,
    };
    let max_x = w.x.iter().fold(cval, |m, v| m.max(v.to_f64().abs()));
    let tol = 2.0 * (taps.len() + 2) as f64 * u * sum_abs * max_x;
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, c)| {
            let (g, c) = (g.to_f64(), c.to_f64());
            g == c || (g.is_nan() && c.is_nan()) || (g - c).abs() <= tol
        })
}

/// Times every 1D filter variant (plus `Auto`'s choice) on `w`: rotating inputs (≥ 2× L2), output
/// poisoned before each run, bytes = input read once + output written once. Each result is
/// checked against `want` (the serial CPU output).
pub fn conv1d_ladder<T: Conv1dElement>(
    gpu: &Gpu,
    w: &Filter1dWork<T>,
    want: &[T],
    family: &'static str,
    copy_gbps: f64,
) -> Result<Vec<Row>> {
    let inputs = rotating_copies(gpu, w.x)?;
    // SAFETY: poisoned before every run; the kernels write every element.
    let mut y = unsafe { gpu.stream().alloc::<T>(w.x.len()) }?;
    let mut rows = Vec::new();
    for variant in Conv1dVariant::ALL.into_iter().chain([Conv1dVariant::Auto]) {
        let plan = Conv1dPlan::new(gpu, w.rows, w.n, w.filter, w.border, variant)?;
        let probe = gpu.time_launches(1, 1, |_| Ok(()), |_| plan.enqueue(gpu, &inputs[0], &mut y))?;
        let runs = runs_for(probe.median_us, 200);
        let ys = std::cell::RefCell::new(&mut y);
        let t = gpu.time_launches(
            3,
            runs,
            |_| gpu.poison(&mut ys.borrow_mut()),
            |i| plan.enqueue(gpu, &inputs[i % inputs.len()], &mut ys.borrow_mut()),
        )?;
        gpu.poison(&mut y)?;
        plan.enqueue(gpu, &inputs[0], &mut y)?;
        let got = gpu.stream().clone_dtoh(&y)?;
        let name = match variant {
            Conv1dVariant::Auto => format!("auto ({})", plan.variant().name()),
            v => v.name().into(),
        };
        rows.push(Row {
            family,
            variant: name,
            n: w.x.len(),
            median_us: t.median_us,
            bytes: 2.0 * std::mem::size_of_val(w.x) as f64,
            copy_gbps,
            ok: conv1d_matches(w, &got, want),
            note: format!("{runs} runs, {} inputs, grid {}", inputs.len(), plan.grid()),
        });
    }
    Ok(rows)
}
