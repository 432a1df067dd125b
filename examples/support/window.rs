//! Window-statistics workloads: the tutorial's image, exact CPU sums, and the row and 2D box
//! ladders.

use super::*;

/// A row-window workload: `rows` rows of `n` samples, window `width`, border.
pub struct WindowWork<'a, T> {
    pub x: &'a [T],
    pub rows: usize,
    pub n: usize,
    pub width: usize,
    pub border: Border,
}

/// The tutorial's image: `rows × n` random pixel values 0..=255 in `T`.
pub fn image<T: TryFrom<u8>>(len: usize, seed: u64) -> Vec<T> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..len)
        .map(|_| T::try_from(r.random::<u8>()).ok().expect("every type holds 0..=255"))
        .collect()
}

/// The exact window sums of `w` rounded once to f32 pairs (rayon CPU, untimed).
pub fn window_want<T: OracleElement>(w: &WindowWork<T>) -> Vec<(f32, f32)>
where
    Sums<T::S, T::Q>: Send,
{
    cpuw::par_window_sums(w.x, w.n, w.width, w.border)
        .iter()
        .map(|v| (v.s.to_f64() as f32, v.q.to_f64() as f32))
        .collect()
}

/// CPU baselines of window sums: (serial µs, rayon µs, the exact sums as f32 pairs).
pub fn window_cpu<T: OracleElement>(w: &WindowWork<T>) -> (f64, f64, Vec<(f32, f32)>)
where
    Sums<T::S, T::Q>: Send,
{
    let runs = if w.x.len() > 1 << 24 { 1 } else { 7 };
    let (serial, exact) = cpu_time_us(runs, || cpuw::window_sums(w.x, w.n, w.width, w.border));
    let (rayon, par) = cpu_time_us(runs, || cpuw::par_window_sums(w.x, w.n, w.width, w.border));
    assert!(par == exact, "rayon and serial CPU window sums disagree");
    let as_f32 = exact
        .iter()
        .map(|v| (v.s.to_f64() as f32, v.q.to_f64() as f32))
        .collect();
    (serial, rayon, as_f32)
}

/// Times every row-window variant (f32 outputs) on `w`: rotating inputs, both outputs poisoned
/// before each run, bytes = input read once + both outputs written once. Each result is checked
/// bit for bit against `want` (the exact sums rounded once to f32; exact for pixel values, whose
/// sums stay below 2^24 up to width 258).
pub fn window_ladder<T: WindowElement>(
    gpu: &Gpu,
    w: &WindowWork<T>,
    want: &[(f32, f32)],
    family: &'static str,
    copy_gbps: f64,
    variants: &[WindowVariant],
) -> Result<Vec<Row>>
where
    f32: WindowFloat<T>,
{
    let inputs = rotating_copies(gpu, w.x)?;
    let len = w.x.len();
    // SAFETY: poisoned before every run; the kernels write every element.
    let (mut s, mut q) = unsafe { (gpu.stream().alloc::<f32>(len)?, gpu.stream().alloc::<f32>(len)?) };
    let mut rows = Vec::new();
    for &variant in variants {
        let plan = match WindowPlan::<T, f32, f32>::new(gpu, (w.rows, w.n), w.width, w.border, variant) {
            Ok(p) => p,
            Err(e @ gpuprims::Error::WindowTooLarge { .. }) => {
                println!("({}: {e})", variant.name());
                continue;
            }
            Err(e) => return Err(e),
        };
        let outs = std::cell::RefCell::new((&mut s, &mut q));
        let probe = gpu.time_launches(
            1,
            1,
            |_| Ok(()),
            |_| {
                let (s, q) = &mut *outs.borrow_mut();
                plan.enqueue(gpu, &inputs[0], s, q)
            },
        )?;
        let runs = runs_for(probe.median_us, 200);
        let t = gpu.time_launches(
            2,
            runs,
            |_| {
                let (s, q) = &mut *outs.borrow_mut();
                gpu.poison(s)?;
                gpu.poison(q)
            },
            |i| {
                let (s, q) = &mut *outs.borrow_mut();
                plan.enqueue(gpu, &inputs[i % inputs.len()], s, q)
            },
        )?;
        gpu.poison(&mut s)?;
        gpu.poison(&mut q)?;
        plan.enqueue(gpu, &inputs[0], &mut s, &mut q)?;
        let (gs, gq) = (gpu.stream().clone_dtoh(&s)?, gpu.stream().clone_dtoh(&q)?);
        let ok = gs.len() == want.len()
            && want
                .iter()
                .zip(gs.iter().zip(&gq))
                .all(|(&(ws, wq), (&a, &b))| a.to_bits() == ws.to_bits() && b.to_bits() == wq.to_bits());
        rows.push(Row {
            family,
            variant: variant.name().into(),
            n: len,
            median_us: t.median_us,
            bytes: (std::mem::size_of_val(w.x) + 8 * len) as f64,
            copy_gbps,
            ok,
            note: format!("{runs} runs, {} inputs, grid {}", inputs.len(), plan.grid()),
        });
    }
    Ok(rows)
}

/// CPU baselines of the local mean and variance of `(h, w)` boxes over one plane: (serial µs,
/// rayon µs, (mean, variance) as f32 from the exact sums).
pub fn box_cpu<T: OracleElement>(
    x: &[T],
    width: usize,
    window: (usize, usize),
    border: Border,
) -> (f64, f64, Vec<(f32, f32)>)
where
    Sums<T::S, T::Q>: Send + Sync,
{
    let runs = if x.len() > 1 << 24 { 3 } else { 5 };
    let (serial, exact) = cpu_time_us(runs, || cpuw::box_sums(x, width, window, border, false));
    let (rayon, _) = cpu_time_us(runs, || cpuw::box_sums(x, width, window, border, true));
    let n = (window.0 * window.1) as f64;
    let moments = exact
        .iter()
        .map(|v| {
            let (s, q) = (v.s.to_f64(), v.q.to_f64());
            let mean = s / n;
            ((mean) as f32, ((q * n - s * s) / (n * n)).max(0.0) as f32)
        })
        .collect();
    (serial, rayon, moments)
}

/// Times every 2D box variant computing the local mean and variance (two f32 outputs) of one
/// plane; bytes = input once + both outputs once. Checked against `want` within 2 ulps of f32
/// (the kernels round the exact variance through f64).
pub fn box_ladder<T: WindowElement>(
    gpu: &Gpu,
    x: &[T],
    shape: (usize, usize),
    window: (usize, usize),
    border: Border,
    want: &[(f32, f32)],
    copy_gbps: f64,
) -> Result<Vec<Row>>
where
    f32: WindowFloat<T>,
{
    let inputs = rotating_copies(gpu, x)?;
    let len = x.len();
    // SAFETY: poisoned before every run.
    let (mut m, mut v) = unsafe { (gpu.stream().alloc::<f32>(len)?, gpu.stream().alloc::<f32>(len)?) };
    let mut rows = Vec::new();
    for variant in BoxVariant::ALL.into_iter().chain([BoxVariant::Auto]) {
        // Variants that do not take this box or type (documented refusals) have no row.
        let mut launch = match BoxPlan::<T, f32>::new(gpu, (1, shape.0, shape.1), window, border, variant) {
            Ok(l) => l,
            Err(gpuprims::Error::WindowTooLarge { .. } | gpuprims::Error::Unsupported { .. }) => continue,
            Err(e) => return Err(e),
        };
        let state = std::cell::RefCell::new((&mut launch, &mut m, &mut v));
        let probe = gpu.time_launches(
            1,
            1,
            |_| Ok(()),
            |_| {
                let (l, m, v) = &mut *state.borrow_mut();
                l.enqueue(gpu, &inputs[0], m, v)
            },
        )?;
        let runs = runs_for(probe.median_us, 200);
        let t = gpu.time_launches(
            2,
            runs,
            |_| {
                let (_, m, v) = &mut *state.borrow_mut();
                gpu.poison(m)?;
                gpu.poison(v)
            },
            |i| {
                let (l, m, v) = &mut *state.borrow_mut();
                l.enqueue(gpu, &inputs[i % inputs.len()], m, v)
            },
        )?;
        gpu.poison(&mut m)?;
        gpu.poison(&mut v)?;
        launch.enqueue(gpu, &inputs[0], &mut m, &mut v)?;
        let (gm, gv) = (gpu.stream().clone_dtoh(&m)?, gpu.stream().clone_dtoh(&v)?);
        let close = |a: f32, b: f32| (a - b).abs() <= 2.0 * f32::EPSILON * b.abs().max(f32::MIN_POSITIVE);
        let ok = want
            .iter()
            .zip(gm.iter().zip(&gv))
            .all(|(&(wm, wv), (&a, &b))| close(a, wm) && close(b, wv));
        rows.push(Row {
            family: "local_mean_variance",
            variant: format!("{} ({})", variant.name(), launch.variant().name()),
            n: len,
            median_us: t.median_us,
            bytes: (std::mem::size_of_val(x) + 8 * len) as f64,
            copy_gbps,
            ok,
            note: format!("{runs} runs, {} inputs", inputs.len()),
        });
    }
    Ok(rows)
}
