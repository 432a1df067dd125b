//! Every GPU of the host ([`gpuprims::Gpus`]): four workloads on one device and on all of them.
//!
//! - W3 window statistics (width 15, u8 → 2 × f32) and W6 3 × 3 dilation over a (16, 8192, 8192)
//!   u8 stack: the batch split by planes, no communication;
//! - W9 31 × 31 dilation of one 32768² u8 image: row bands with a 15-row halo (exact at the seams;
//!   the result's halos are refreshed, peer to peer, by the next op that reads them);
//! - the sum of squares of 2^31 i32: one exact 128-bit partial per device, combined on the host.
//!
//! Device-resident: the input already sharded on the devices; the time is the host's wall clock
//! around enqueueing every device's part and waiting for all of them (median of the runs, after
//! warm-ups), so the host's enqueue time counts — it is printed beside. Each call allocates its
//! outputs from the stream-ordered pool. Host-to-host: a host array in, a host array out (upload,
//! op, download; one host thread per device for the transfers). The one-device column runs the
//! same code on a set of one device. Results are checked equal between the two.
//!
//!     cargo run --release --example multi_gpu [-- --quick] [W3|W6|W9|SS ...]

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;

use gpuprims::{Border, Gpus, Result, Sharded};
use ndarray::{Array1, Array2, Array3, Dimension, s};
use rayon::prelude::*;

/// One workload: its name and bytes moved per run (input read once, outputs written once).
struct Workload {
    key: &'static str,
    name: &'static str,
    bytes: f64,
}

/// One set's times for a workload (µs): device-resident, its enqueue alone, host to host.
type Cell = (f64, f64, f64);

/// A workload's row: both sets' cells and the slowest device's part run alone (µs).
type Row<'a> = (&'a Workload, [Cell; 2], f64);

/// Median of `runs` wall-clock times of `f` (µs) after `warm` calls, with the median time spent
/// before `f` returned control (enqueue) when `f` reports it.
fn wall_us(warm: usize, runs: usize, mut f: impl FnMut() -> Result<f64>) -> Result<(f64, f64)> {
    for _ in 0..warm {
        f()?;
    }
    let mut total = Vec::with_capacity(runs);
    let mut enqueue = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let e = f()?;
        total.push(t.elapsed().as_secs_f64() * 1e6);
        enqueue.push(e);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Ok((median(&mut total), median(&mut enqueue)))
}

/// Times `op` on the sharded input `x` of `set`: enqueue, then wait for every device.
fn resident<T, D: Dimension, Y>(
    set: &Gpus,
    x: &Sharded<T, D>,
    runs: usize,
    op: impl Fn(&Gpus, &Sharded<T, D>) -> Result<Y>,
) -> Result<(f64, f64, Y)> {
    let mut last = None;
    let (t, e) = wall_us(3, runs, || {
        let t = Instant::now();
        let y = op(set, x)?;
        let enq = t.elapsed().as_secs_f64() * 1e6;
        set.synchronize()?;
        last = Some(y);
        Ok(enq)
    })?;
    Ok((t, e, last.expect("at least one run")))
}

/// An order-aware digest of every element (splitmix of index and bits, summed): equal results
/// give equal digests, and any differing element changes it but with negligible chance.
fn digest<T: Copy + Sync>(v: &[T], bits: impl Fn(T) -> u64 + Sync) -> u64 {
    v.par_iter()
        .enumerate()
        .map(|(i, &x)| mix(bits(x) ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)))
        .reduce(|| 0, u64::wrapping_add)
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Random bytes from a seed, filled in parallel (splitmix64 per 8 bytes).
fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut v = vec![0u8; n];
    v.par_chunks_mut(1 << 20).enumerate().for_each(|(c, chunk)| {
        let mut s = seed ^ (c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        for w in chunk.chunks_mut(8) {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            w.copy_from_slice(&mix(s).to_le_bytes()[..w.len()]);
        }
    });
    v
}

fn main() -> Result<()> {
    let quick = support::quick();
    let all = match Gpus::all() {
        Ok(s) => s,
        Err(e) => {
            println!("no GPU ({e}); nothing to measure");
            return Ok(());
        }
    };
    let one = Gpus::from_gpus(vec![all.devices()[0].clone()])?;
    let date = std::process::Command::new("date")
        .arg("+%F")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    println!("{} device(s), measured {}", all.len(), date.unwrap_or_default());
    let mut copy = Vec::new();
    for g in all.devices() {
        copy.push(support::copy_bandwidth(g, quick)?);
    }
    for i in 0..all.len() {
        let row: Vec<&str> = (0..all.len())
            .map(|j| if all.peer_access(i, j) { "peer" } else { "staged" })
            .collect();
        println!("copies into device {i}: {row:?}");
    }
    println!("shares: {:?}", all.shares());
    let (planes, side, big, ss_len, runs) = if quick {
        (4, 1024, 4096, 1 << 24, 5)
    } else {
        (16, 8192, 32768, 1 << 31, 15)
    };
    let n_stack = planes * side * side;
    let stack = Array3::from_shape_vec((planes, side, side), random_bytes(n_stack, 3)).expect("shape");
    let image = Array2::from_shape_vec((big, big), random_bytes(big * big, 9)).expect("shape");
    let ints: Array1<i32> = {
        let b = random_bytes(4 * ss_len, 27);
        Array1::from_vec(
            b.par_chunks(4)
                .map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect(),
        )
    };

    let workloads = [
        Workload {
            key: "W3",
            name: "W3 window-15 sum + sumsq, u8 stack → 2 × f32",
            bytes: 9.0 * n_stack as f64,
        },
        Workload {
            key: "W6",
            name: "W6 3 × 3 dilation, u8 stack, replicate",
            bytes: 2.0 * n_stack as f64,
        },
        Workload {
            key: "W9",
            name: "W9 31 × 31 dilation, one u8 image, replicate",
            bytes: 2.0 * (big * big) as f64,
        },
        Workload {
            key: "SS",
            name: "sum of squares, i32",
            bytes: 4.0 * ss_len as f64,
        },
    ];
    let sets = [("1 GPU", &one), ("all GPUs", &all)];
    let picked: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let mut rows: Vec<Row> = Vec::new();
    let mut failed = false;
    for (w, load) in workloads.iter().enumerate() {
        if !picked.is_empty() && !picked.iter().any(|p| p == load.key) {
            continue;
        }
        let mut cells = [(0.0, 0.0, 0.0); 2];
        let mut results: Vec<u64> = Vec::new();
        for (k, (_, set)) in sets.iter().enumerate() {
            let (t, e, host_us, bits) = match w {
                0 => {
                    let x = set.scatter(&stack, 0)?;
                    let (t, e, (s, q)) =
                        resident(set, &x, runs, |s, x| s.window_sum_sumsq::<f32, _>(x, 15, Border::Zero))?;
                    let (h, _) = wall_us(1, 3, || {
                        set.window_sum_sumsq::<f32, _>(&stack, 15, Border::Zero).map(|_| 0.0)
                    })?;
                    let (s, q) = (set.gather(&s)?, set.gather(&q)?);
                    let bits = |v: f32| v.to_bits() as u64;
                    let d = digest(s.as_slice().expect("C order"), bits)
                        ^ digest(q.as_slice().expect("C order"), bits).rotate_left(1);
                    (t, e, h, d)
                }
                1 => {
                    let x = set.scatter(&stack, 0)?;
                    let (t, e, y) = resident(set, &x, runs, |s, x| s.dilate(x, (3, 3), Border::Replicate))?;
                    let (h, _) = wall_us(1, 3, || set.dilate(&stack, (3, 3), Border::Replicate).map(|_| 0.0))?;
                    (t, e, h, digest(set.gather(&y)?.as_slice().expect("C order"), u64::from))
                }
                2 => {
                    let x = set.scatter(&image, 15)?;
                    let (t, e, y) = resident(set, &x, runs, |s, x| s.dilate(x, (31, 31), Border::Replicate))?;
                    let (h, _) = wall_us(1, 3, || set.dilate(&image, (31, 31), Border::Replicate).map(|_| 0.0))?;
                    (t, e, h, digest(set.gather(&y)?.as_slice().expect("C order"), u64::from))
                }
                _ => {
                    let x = set.scatter(&ints, 0)?;
                    let (t, e, ss) = resident(set, &x, runs, |s, x| s.sum_of_squares(x))?;
                    let (h, _) = wall_us(1, 3, || set.sum_of_squares(&ints).map(|_| 0.0))?;
                    (t, e, h, (ss as u64) ^ ((ss >> 64) as u64))
                }
            };
            cells[k] = (t, e, host_us);
            results.push(bits);
        }
        // Each device's part alone, on a set of that device only: the slowest is the bound the
        // whole set can reach; the difference is the set's own overhead.
        let mut slowest: f64 = 0.0;
        let n0 = [planes, planes, big, ss_len][w];
        let halo = if w == 2 { 15 } else { 0 };
        for (d, rows) in all.split(n0).into_iter().filter(|_| all.len() > 1) {
            let solo = Gpus::from_gpus(vec![all.devices()[d].clone()])?;
            let (lo, hi) = (rows.start.saturating_sub(halo), (rows.end + halo).min(n0));
            let t = match w {
                0 => {
                    let x = solo.scatter(&stack.slice(s![lo..hi, .., ..]), 0)?;
                    resident(&solo, &x, runs, |s, x| {
                        s.window_sum_sumsq::<f32, _>(x, 15, Border::Zero)
                    })?
                    .0
                }
                1 => {
                    let x = solo.scatter(&stack.slice(s![lo..hi, .., ..]), 0)?;
                    resident(&solo, &x, runs, |s, x| s.dilate(x, (3, 3), Border::Replicate))?.0
                }
                2 => {
                    let x = solo.scatter(&image.slice(s![lo..hi, ..]), 0)?;
                    resident(&solo, &x, runs, |s, x| s.dilate(x, (31, 31), Border::Replicate))?.0
                }
                _ => {
                    let x = solo.scatter(&ints.slice(s![lo..hi]), 0)?;
                    resident(&solo, &x, runs, |s, x| s.sum_of_squares(x))?.0
                }
            };
            slowest = slowest.max(t);
        }
        if results[0] != results[1] {
            failed = true;
            println!("FAIL: {}: all GPUs differ from one GPU", load.name);
        }
        rows.push((load, cells, slowest));
    }

    println!(
        "\n{:<48} {:>11} {:>7} {:>7} {:>11} {:>9} {:>11} {:>8} {:>12} {:>12}",
        "workload",
        "1 GPU µs",
        "GB/s",
        "% copy",
        "all GPUs µs",
        "speed-up",
        "part alone",
        "enq. µs",
        "host 1 ms",
        "host all ms"
    );
    for (load, [a, b], alone) in &rows {
        println!(
            "{:<48} {:>11.2} {:>7.0} {:>7.1} {:>11.2} {:>8.2}× {:>11.2} {:>8.1} {:>12.1} {:>12.1}",
            load.name,
            a.0,
            load.bytes / a.0 / 1e3,
            load.bytes / a.0 / 1e3 / copy[0] * 100.0,
            b.0,
            a.0 / b.0,
            alone,
            b.1,
            a.2 / 1e3,
            b.2 / 1e3,
        );
    }
    println!(
        "\n(µs: wall-clock median of {runs} runs, device-resident, enqueue to all devices done; enq.: the \
         all-GPU enqueue alone; part alone: the slowest device's part run on that device alone; host: host array in → host array out, median of 3)"
    );
    if failed {
        std::process::exit(1);
    }
    Ok(())
}
