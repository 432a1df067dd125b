//! A dependent of gpuprims: one op on the GPU, checked against the CPU reference; without a
//! GPU it says why and checks the CPU reference alone.

use gpuprims::{Border, Gpu};
use ndarray::Array2;

fn main() -> Result<(), gpuprims::Error> {
    let img = Array2::from_shape_fn((480, 640), |(y, x)| ((x * 7 + y * 13) % 256) as u8);
    let (h, w) = img.dim();
    let want = gpuprims::cpu::filter2d::dilate(img.as_slice().expect("standard layout"), h, w, (3, 3), Border::Reflect);
    println!(
        "gpuprims: {} kernels embedded ({:?}, {:.1} MB), cubins for sm {:?}",
        gpuprims::kernels::count(),
        gpuprims::kernels::origin(),
        gpuprims::kernels::embedded_bytes() as f64 / 1e6,
        gpuprims::kernels::sass_archs()
    );
    match Gpu::new() {
        Ok(gpu) => {
            let got = gpu.dilate(&img, (3, 3), Border::Reflect)?;
            let load = &gpu.kernel_loads()[0];
            assert_eq!(got.as_slice().expect("standard layout"), &want[..], "GPU dilation differs from the CPU");
            println!("3 × 3 dilation of 480 × 640 on the GPU matches the CPU ({:?} in {:?})", load.from, load.elapsed);
        }
        Err(e) => println!("no GPU ({e}); the CPU reference ran ({} pixels)", want.len()),
    }
    Ok(())
}
