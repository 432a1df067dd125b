//! An image pipeline run entirely on the device: read a PNG (any 8/16-bit grey or RGB image; RGB
//! is converted to grey), smooth it (Gaussian 3 × 3), take the gradient magnitude (Sobel, f32),
//! thicken the edges (3 × 3 grey dilation), then the morphological gradient of the smoothed image
//! (5 × 5), and write every stage as a PNG next to the input. Only the input upload and the stage
//! downloads for the PNGs cross the bus; the stages chain on `DeviceArray`s. Prints each stage's
//! median device time (CUDA events).
//!
//!     cargo run --release --example pipeline -- photo.png     # writes photo.<stage>.png
//!     cargo run --release --example pipeline                  # a generated test pattern
//!     cargo run --release --example pipeline -- --quick       # small pattern (sanitizer runs)

#[path = "support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};

use gpuprims::image_io::{self, ImageArray};
use gpuprims::{Border, DeviceArray, Gpu, Result};
use ndarray::{Array2, Ix2};

const BORDER: Border = Border::Reflect;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// A zone plate (rings whose frequency grows outwards) over a diagonal ramp, with a bright square:
/// edges at every orientation and scale.
fn test_pattern(h: usize, w: usize) -> Array2<u8> {
    let (cy, cx) = (h as f64 / 2.0, w as f64 / 2.0);
    let k = std::f64::consts::PI / (2.0 * h.max(w) as f64);
    Array2::from_shape_fn((h, w), |(y, x)| {
        let (dy, dx) = (y as f64 - cy, x as f64 - cx);
        let ring = 0.5 + 0.5 * (k * (dx * dx + dy * dy)).cos();
        let ramp = (x + y) as f64 / (h + w) as f64;
        let square = (y > h / 8 && y < h / 4 && x > w / 8 && x < w / 4) as u8 as f64;
        (255.0 * (0.6 * ring + 0.3 * ramp + 0.1 * square)).round().min(255.0) as u8
    })
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--quick").collect();
    let quick = support::quick();
    let (img, out_base): (Array2<u8>, PathBuf) = match args.first() {
        Some(path) => {
            let img = image_io::read_image(path)?;
            let kind = match &img {
                ImageArray::Gray8(_) => "grey u8",
                ImageArray::Gray16(_) => "grey u16 (scaled to u8)",
                ImageArray::Rgb8(_) => "RGB u8 (converted to grey)",
                _ => "RGB u16 (converted to grey u8)",
            };
            let g = img.into_gray8();
            println!("input: {path}, {} × {}, {kind}", g.ncols(), g.nrows());
            (g, Path::new(path).with_extension(""))
        }
        None => {
            let (h, w) = if quick { (192, 256) } else { (1536, 2048) };
            let dir = std::env::temp_dir().join("gpuprims-pipeline");
            std::fs::create_dir_all(&dir).map_err(|e| gpuprims::Error::Image {
                path: dir.display().to_string(),
                reason: e.to_string(),
            })?;
            println!("input: generated test pattern, {w} × {h} (pass a PNG path to use your own)");
            (test_pattern(h, w), dir.join("pattern"))
        }
    };
    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("the pipeline runs on a CUDA GPU and none is usable here: {e}");
            std::process::exit(1);
        }
    };
    let stage_path = |name: &str| PathBuf::from(format!("{}.{name}.png", out_base.display()));
    image_io::write_gray(stage_path("0-input"), img.view())?;

    // The chain, on device-resident arrays.
    let x = DeviceArray::upload(&gpu, &img)?;
    let smooth = gpu.gaussian3x3(&x, BORDER)?;
    let edges = gpu.sobel_magnitude(&smooth, BORDER)?;
    let thick = gpu.dilate(&edges, (3, 3), BORDER)?;
    let grad = gpu.morphological_gradient(&smooth, (5, 5), BORDER)?;

    // Per-stage device times (each stage re-run on its device input, median of CUDA events).
    let runs = if quick { 3 } else { 50 };
    let time = |f: &dyn Fn() -> Result<()>| gpu.time_launches(2, runs, |_| Ok(()), |_| f()).map(|t| t.median_us);
    let stages: [(&str, f64); 4] = [
        (
            "Gaussian 3×3 (u8 → u8)",
            time(&|| gpu.gaussian3x3(&x, BORDER).map(drop))?,
        ),
        (
            "Sobel magnitude (u8 → f32)",
            time(&|| gpu.sobel_magnitude(&smooth, BORDER).map(drop))?,
        ),
        (
            "dilation 3×3 (f32)",
            time(&|| gpu.dilate(&edges, (3, 3), BORDER).map(drop))?,
        ),
        (
            "morphological gradient 5×5 (u8)",
            time(&|| gpu.morphological_gradient(&smooth, (5, 5), BORDER).map(drop))?,
        ),
    ];

    let write_u8 = |name: &str, a: &DeviceArray<u8, Ix2>| -> Result<PathBuf> {
        let p = stage_path(name);
        image_io::write_gray(&p, a.download(&gpu)?.view())?;
        Ok(p)
    };
    let write_f32 = |name: &str, a: &DeviceArray<f32, Ix2>| -> Result<PathBuf> {
        let p = stage_path(name);
        image_io::write_gray(&p, image_io::to_gray8_scaled(a.download(&gpu)?.view()).view())?;
        Ok(p)
    };
    let written = [
        write_u8("1-gaussian", &smooth)?,
        write_f32("2-sobel-magnitude", &edges)?,
        write_f32("3-dilated-edges", &thick)?,
        write_u8("4-morph-gradient", &grad)?,
    ];
    let p = gpu.props();
    println!(
        "device: {} ({} SMs), {} × {} image",
        p.name,
        p.sm_count,
        img.ncols(),
        img.nrows()
    );
    println!("| stage | median µs (op call: plan, output allocation, launches) | written |");
    println!("|---|---:|---|");
    for ((name, us), path) in stages.iter().zip(&written) {
        println!("| {name} | {us:.1} | {} |", path.display());
    }
    println!("input copy written to {}", stage_path("0-input").display());
    Ok(())
}
