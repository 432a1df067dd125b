//! `image` ↔ `ndarray` conversions and image files (feature `image`; CPU only).

use gpuprims::image_io::{
    ImageArray, luma_from_array, luma_view, read_image, rgb_from_planar, rgb_to_planar, rgb_view, write_gray,
};
use image::{ImageBuffer, Luma, Rgb, RgbaImage};
use libtest_mimic::{Failed, Trial};
use ndarray::{Array2, Array3, s};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("cpu_image::luma_round_trips", luma_round_trips),
        Trial::test("cpu_image::rgb_round_trips", rgb_round_trips),
        Trial::test("cpu_image::files_round_trip", files_round_trip),
        Trial::test("cpu_image::bad_files_are_typed_errors", bad_files),
    ]
}

const SIZES: [(usize, usize); 5] = [(1, 1), (1, 7), (7, 1), (13, 17), (64, 31)];

fn luma_round_trips() -> Result<(), Failed> {
    for (h, w) in SIZES {
        let a8 = Array2::from_shape_fn((h, w), |(y, x)| (y * 31 + x * 7) as u8);
        let img = luma_from_array(a8.view())?;
        if img.dimensions() != (w as u32, h as u32) || img.get_pixel(w as u32 - 1, 0).0[0] != a8[[0, w - 1]] {
            return Err(format!("{h}×{w}: u8 image layout").into());
        }
        let view = luma_view(&img);
        if view != a8 || view.as_ptr() != img.as_raw().as_ptr() {
            return Err(format!("{h}×{w}: u8 view must be zero-copy and equal").into());
        }
        let a16 = Array2::from_shape_fn((h, w), |(y, x)| (y * 4099 + x * 257) as u16);
        let img16: ImageBuffer<Luma<u16>, Vec<u16>> = luma_from_array(a16.view())?;
        if luma_view(&img16) != a16 {
            return Err(format!("{h}×{w}: u16 round trip").into());
        }
        // Transposed (non-contiguous) views convert too.
        let t = a8.t();
        if luma_view(&luma_from_array(t)?) != t {
            return Err(format!("{h}×{w}: transposed view").into());
        }
    }
    Ok(())
}

fn rgb_round_trips() -> Result<(), Failed> {
    for (h, w) in SIZES {
        let planar = Array3::from_shape_fn((3, h, w), |(c, y, x)| (c * 80 + y * 3 + x) as u8);
        let img = rgb_from_planar(planar.view())?;
        if img.get_pixel(0, 0).0 != [planar[[0, 0, 0]], planar[[1, 0, 0]], planar[[2, 0, 0]]] {
            return Err(format!("{h}×{w}: RGB interleaving").into());
        }
        if rgb_to_planar(&img) != planar {
            return Err(format!("{h}×{w}: RGB planar round trip").into());
        }
        let inter = rgb_view(&img);
        if inter.shape() != [h, w, 3] || inter.slice(s![.., .., 1]) != planar.slice(s![1, .., ..]) {
            return Err(format!("{h}×{w}: interleaved view").into());
        }
        let p16 = planar.mapv(|v| v as u16 * 257);
        let img16: ImageBuffer<Rgb<u16>, Vec<u16>> = rgb_from_planar(p16.view())?;
        if rgb_to_planar(&img16) != p16 {
            return Err(format!("{h}×{w}: u16 RGB round trip").into());
        }
    }
    match rgb_from_planar(Array3::<u8>::zeros((4, 2, 2)).view()) {
        Err(gpuprims::Error::InvalidArgument { name: "planes", .. }) => Ok(()),
        other => Err(format!("4 planes as RGB gave {:?}", other.map(|_| ())).into()),
    }
}

fn temp_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("gpuprims-image-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn files_round_trip() -> Result<(), Failed> {
    let dir = temp_dir();
    let a8 = Array2::from_shape_fn((13, 29), |(y, x)| (y * 19 + x) as u8);
    let p8 = dir.join("g8.png");
    write_gray(&p8, a8.view())?;
    match read_image(&p8)? {
        ImageArray::Gray8(b) if b == a8 => {}
        other => return Err(format!("u8 PNG read back as {other:?}").into()),
    }
    let a16 = a8.mapv(|v| v as u16 * 251);
    let p16 = dir.join("g16.png");
    write_gray(&p16, a16.view())?;
    match read_image(&p16)? {
        ImageArray::Gray16(b) if b == a16 => {}
        other => return Err(format!("u16 PNG read back as {other:?}").into()),
    }
    let planar = Array3::from_shape_fn((3, 5, 11), |(c, y, x)| (c * 70 + y * 11 + x) as u8);
    let prgb = dir.join("rgb.png");
    rgb_from_planar(planar.view())?.save(&prgb)?;
    match read_image(&prgb)? {
        ImageArray::Rgb8(b) if b == planar => {}
        other => return Err(format!("RGB PNG read back as {other:?}").into()),
    }
    let grey = read_image(&prgb)?.into_gray8();
    if grey.dim() != (5, 11) {
        return Err(format!("RGB → grey has shape {:?}", grey.dim()).into());
    }
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}

fn bad_files() -> Result<(), Failed> {
    let dir = temp_dir().join("bad");
    std::fs::create_dir_all(&dir)?;
    let rgba = dir.join("rgba.png");
    RgbaImage::new(3, 2).save(&rgba)?;
    match read_image(&rgba) {
        Err(gpuprims::Error::Image { path, reason }) if path.ends_with("rgba.png") && reason.contains("Rgba8") => {}
        other => return Err(format!("an RGBA file gave {other:?}").into()),
    }
    let missing = dir.join("missing.png");
    match read_image(&missing) {
        Err(gpuprims::Error::Image { path, .. }) if path.ends_with("missing.png") => {}
        other => return Err(format!("a missing file gave {other:?}").into()),
    }
    let garbage = dir.join("garbage.png");
    std::fs::write(&garbage, b"not a png")?;
    match read_image(&garbage) {
        Err(gpuprims::Error::Image { path, .. }) if path.ends_with("garbage.png") => {}
        other => return Err(format!("a garbage file gave {other:?}").into()),
    }
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}
