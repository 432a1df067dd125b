//! Pooling workloads: inputs, the CPU oracle, and the ladder of every variant (texture objects
//! made before timing, the constant-input rung's copy timed).

use super::*;

/// A pooling workload: `planes` planes of `h × w` samples in `x`, and the pooling it runs.
pub struct PoolWork<'a, T> {
    pub x: &'a [T],
    pub shape: PoolShape,
}

/// Random pooling input in [−1, 1) (floats) or over the type's range (integers).
pub fn pool_input<T: PoolInputGen>(len: usize, seed: u64) -> Vec<T> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..len).map(|_| T::draw(&mut r)).collect()
}

/// An element type the pooling examples generate.
pub trait PoolInputGen: Sized {
    fn draw(r: &mut ChaCha8Rng) -> Self;
}

impl PoolInputGen for f32 {
    fn draw(r: &mut ChaCha8Rng) -> f32 {
        r.random_range(-1.0..1.0)
    }
}

impl PoolInputGen for u8 {
    fn draw(r: &mut ChaCha8Rng) -> u8 {
        r.random()
    }
}

/// CPU baselines of max pooling (serial oracle, rayon planes) and the expected values.
pub fn max_pool_cpu<T: PoolValue + Send + Sync>(w: &PoolWork<T>) -> (f64, f64, Vec<T>) {
    let s = &w.shape;
    let x = ndarray::ArrayView3::from_shape((s.planes, s.h, s.w), w.x).expect("shape");
    let runs = if w.x.len() > 1 << 24 { 1 } else { 5 };
    let (serial, _) = cpu_time_us(runs, || cpupool::max_pool2d(&x, &s.window).expect("valid"));
    let (rayon, want) = cpu_time_us(runs, || {
        cpupool::par_max_pool2d(w.x, s.planes, s.h, s.w, &s.window).expect("valid")
    });
    (serial, rayon, want)
}

/// Times each of `variants` on `w` (one plan per rotating input copy, so texture objects are made
/// before timing; the constant-input rung copies its input into the bank inside every timed call,
/// as it must), checks each result bit for bit against `want`, and returns one row per variant
/// that can run the workload (the others are printed with their error). `indices`: max pooling
/// also writes its i64 argmax (counted in the bytes).
#[allow(clippy::too_many_arguments)]
pub fn pool_ladder<T: PoolElement + PartialEq>(
    gpu: &Gpu,
    w: &PoolWork<T>,
    want: &[T],
    family: &'static str,
    copy_gbps: f64,
    variants: &[PoolVariant],
    indices: bool,
    plan: impl Fn(PoolVariant) -> Result<PoolPlan<T>>,
) -> Result<Vec<Row>> {
    let inputs = rotating_copies(gpu, w.x)?;
    let outputs = want.len();
    // SAFETY: plain data, poisoned before every run and written in full by every kernel.
    let y = std::cell::RefCell::new(unsafe { gpu.stream().alloc::<T>(outputs.max(1)) }?);
    let idx = std::cell::RefCell::new(if indices {
        Some(unsafe { gpu.stream().alloc::<i64>(outputs.max(1)) }?)
    } else {
        None
    });
    // SAFETY: plain bytes, only ever memset.
    let filler =
        std::cell::RefCell::new(unsafe { gpu.stream().alloc::<u8>(if inputs.len() > 1 { 16 << 20 } else { 1 }) }?);
    let mut rows = Vec::new();
    for &v in variants {
        let plans: Vec<PoolPlan<T>> = match (0..inputs.len()).map(|_| plan(v)).collect::<Result<_>>() {
            Ok(p) => p,
            Err(e) => {
                println!("{family} {}: not run — {e}", v.name());
                continue;
            }
        };
        let mut extra = String::new();
        if plans[0].variant() == PoolVariant::Texture {
            let (create_us, _) = cpu_time_us(20, || {
                plans[0].release_texture();
                plans[0].prepare_texture(gpu, &inputs[0])
            });
            extra = format!("texture object create + destroy {create_us:.1} µs (host)");
        }
        for (p, x) in plans.iter().zip(&inputs) {
            p.prepare_texture(gpu, x)?;
        }
        if plans[0].variant() == PoolVariant::ConstantInput {
            extra = format!("includes the {} B copy into the constant bank", size_of_val(w.x));
        }
        let enqueue = |i: usize| {
            let k = i % inputs.len();
            plans[k].enqueue(gpu, &inputs[k], &mut y.borrow_mut(), idx.borrow_mut().as_mut())
        };
        let poison = |_| gpu.poison(&mut y.borrow_mut());
        let probe = gpu.time_launches(0, 1, poison, enqueue)?;
        let runs = runs_for(probe.median_us, 200);
        let t = gpu.time_launches(3, runs, poison, enqueue)?;
        let mut note = String::new();
        // The vendor peers time one buffer over and over; where ours rotate (input < 2 × L2),
        // also time that L2-warm case for a like-for-like comparison.
        if inputs.len() > 1 {
            let warm = gpu.time_launches(3, runs, poison, |_| enqueue(0))?;
            // A kernel of a few µs finishes before the host has enqueued the next event, so the
            // events above also time the host's launch path. Keeping the GPU busy (a 16 MiB
            // memset, small enough to leave the input in the 50 MiB L2) while the host enqueues
            // leaves the kernel alone between the events.
            let busy = |i| -> Result<()> {
                poison(i)?;
                gpu.poison(&mut filler.borrow_mut())
            };
            let alone = gpu.time_launches(3, runs, busy, |_| enqueue(0))?;
            note = format!(
                "one buffer (L2-warm): {:.2} µs; kernel alone (L2-warm, GPU kept busy while the host enqueues): {:.2} µs",
                warm.median_us, alone.median_us
            );
        }
        poison(0)?;
        enqueue(0)?;
        let got = gpu.stream().clone_dtoh(&*y.borrow())?;
        let ok = got.len() >= outputs && got[..outputs].iter().zip(want).all(|(a, b)| a == b);
        let variant = match (v, plans[0].variant()) {
            (PoolVariant::Auto, r) => format!("auto ({})", r.name()),
            (v, _) => v.name().to_string(),
        };
        note = [format!("{runs} runs"), note, extra]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        rows.push(Row {
            family,
            variant: if indices {
                format!("{variant} + indices")
            } else {
                variant
            },
            n: w.x.len(),
            median_us: t.median_us,
            bytes: (size_of_val(w.x) + outputs * (size_of::<T>() + if indices { 8 } else { 0 })) as f64,
            copy_gbps,
            ok,
            note,
        });
    }
    Ok(rows)
}
