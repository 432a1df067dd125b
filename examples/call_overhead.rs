//! The host time of one op call on a device-resident array: a 512 × 512 u8 3 × 3 grey dilation
//! (`dilate_nd`, the path scipy's `grey_dilation` takes from Python), called 1,000 times in a row
//! with no synchronisation, so calls queue asynchronously; each call plans, allocates its output
//! (stream-ordered) and launches. Prints the median and the 10th/90th percentiles of the host time
//! per call, and the device time per call over the whole run. `python/bench/peers.py` times the
//! same call from Python; the difference is the binding's overhead.
//!
//! With `--legacy-stream` the calls run on the legacy default stream, through
//! `Gpu::on_borrowed_stream`, as the Python binding runs a call made on CuPy's default stream.
//!
//!     cargo run --release --example call_overhead [-- --quick] [--legacy-stream]

use std::time::Instant;

use gpuprims::{Border, DeviceArray, Gpu, Result};
use ndarray::{Array, IxDyn};

fn main() -> Result<()> {
    let calls = if std::env::args().any(|a| a == "--quick") {
        50
    } else {
        1000
    };
    let own = Gpu::new()?;
    let legacy = std::env::args().any(|a| a == "--legacy-stream");
    // SAFETY: the legacy default stream belongs to the primary context and never goes away.
    let gpu = if legacy {
        unsafe { own.on_borrowed_stream(std::ptr::null_mut()) }
    } else {
        own.clone()
    };
    let host = Array::from_shape_fn(IxDyn(&[512, 512]), |i| (i[0] * 31 + i[1] * 17) as u8);
    let x = DeviceArray::upload(&gpu, &host)?;
    let sizes = [3, 3];
    let want = gpu.dilate_nd(&host, &sizes, Border::Reflect)?;
    for _ in 0..20 {
        drop(gpu.dilate_nd(&x, &sizes, Border::Reflect)?); // warm-up: modules loaded, pool grown
    }
    gpu.synchronize()?;
    let mut host_us = Vec::with_capacity(calls);
    let run = Instant::now();
    let mut last = None;
    for _ in 0..calls {
        let t = Instant::now();
        let y = gpu.dilate_nd(&x, &sizes, Border::Reflect)?;
        host_us.push(t.elapsed().as_secs_f64() * 1e6);
        last = Some(y); // the previous output is dropped here, as a Python loop drops it
    }
    gpu.synchronize()?;
    let total_us = run.elapsed().as_secs_f64() * 1e6;
    let got = last.expect("at least one call").download(&gpu)?;
    assert_eq!(got, want, "the device result differs from the host-array call");
    host_us.sort_by(f64::total_cmp);
    let pct = |p: f64| host_us[((calls - 1) as f64 * p).round() as usize];
    println!("device: {}", gpu.props().name);
    println!(
        "rust dilate_nd 512x512 u8 3x3, {calls} calls on {}: host per call median {:.2} us (p10 {:.2}, p90 {:.2}); \
         wall per call incl. the final wait {:.2} us",
        if legacy {
            "the legacy default stream"
        } else {
            "the Gpu's own stream"
        },
        pct(0.5),
        pct(0.1),
        pct(0.9),
        total_us / calls as f64
    );
    Ok(())
}
