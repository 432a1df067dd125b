//! Conversions between the [`image`] crate's buffers and `ndarray` arrays, and PNG (or any format
//! the `image` crate was built with) reading and writing with typed errors. Feature `image`.
//!
//! | `image` type                          | `ndarray`                                 | copy?                  |
//! |---------------------------------------|-------------------------------------------|------------------------|
//! | `GrayImage` / `ImageBuffer<Luma<u16>>` | `ArrayView2<P>` (H, W)                    | zero-copy view          |
//! | `RgbImage` / `ImageBuffer<Rgb<u16>>`   | `ArrayView3<P>` (H, W, 3), interleaved    | zero-copy view          |
//! | `RgbImage` / `ImageBuffer<Rgb<u16>>`   | `Array3<P>` (3, H, W), planar             | one copy (what 2D ops want: each plane is an image) |
//!
//! and back: [`luma_from_array`] and [`rgb_from_planar`] (any layout; one copy).

use std::path::Path;

use image::{DynamicImage, ImageBuffer, Luma, Pixel, Primitive, Rgb};
use ndarray::{Array2, Array3, ArrayView2, ArrayView3, Axis};

use crate::error::{Error, Result};

/// A grey image's pixels as an (H, W) view, without copying.
pub fn luma_view<P: Primitive>(img: &ImageBuffer<Luma<P>, Vec<P>>) -> ArrayView2<'_, P> {
    let (w, h) = img.dimensions();
    ArrayView2::from_shape((h as usize, w as usize), img.as_raw()).expect("buffer holds w · h pixels")
}

/// An RGB image's pixels as an (H, W, 3) interleaved view, without copying.
pub fn rgb_view<P: Primitive>(img: &ImageBuffer<Rgb<P>, Vec<P>>) -> ArrayView3<'_, P>
where
    Rgb<P>: Pixel<Subpixel = P>,
{
    let (w, h) = img.dimensions();
    ArrayView3::from_shape((h as usize, w as usize, 3), img.as_raw()).expect("buffer holds 3 · w · h values")
}

/// An RGB image as three planes (3, H, W): the layout the 2D ops filter plane by plane.
pub fn rgb_to_planar<P: Primitive>(img: &ImageBuffer<Rgb<P>, Vec<P>>) -> Array3<P>
where
    Rgb<P>: Pixel<Subpixel = P>,
{
    let v = rgb_view(img);
    v.permuted_axes([2, 0, 1]).as_standard_layout().into_owned()
}

/// A grey image from an (H, W) array of any layout.
pub fn luma_from_array<P: Primitive>(a: ArrayView2<'_, P>) -> Result<ImageBuffer<Luma<P>, Vec<P>>> {
    let (h, w) = a.dim();
    let (h32, w32) = image_size(h, w)?;
    let raw: Vec<P> = a.iter().copied().collect();
    Ok(ImageBuffer::from_raw(w32, h32, raw).expect("w · h pixels"))
}

/// An RGB image from three planes (3, H, W) of any layout.
pub fn rgb_from_planar<P: Primitive>(a: ArrayView3<'_, P>) -> Result<ImageBuffer<Rgb<P>, Vec<P>>>
where
    Rgb<P>: Pixel<Subpixel = P>,
{
    let (c, h, w) = a.dim();
    if c != 3 {
        return Err(Error::InvalidArgument {
            name: "planes",
            reason: format!("an RGB image needs 3 planes, got shape {:?}", a.shape()),
        });
    }
    let (h32, w32) = image_size(h, w)?;
    let interleaved = a.permuted_axes([1, 2, 0]);
    let raw: Vec<P> = interleaved.iter().copied().collect();
    Ok(ImageBuffer::from_raw(w32, h32, raw).expect("3 · w · h values"))
}

fn image_size(h: usize, w: usize) -> Result<(u32, u32)> {
    match (u32::try_from(h), u32::try_from(w)) {
        (Ok(h), Ok(w)) => Ok((h, w)),
        _ => Err(Error::InvalidArgument {
            name: "shape",
            reason: format!("{h} × {w} exceeds the image crate's u32 sides"),
        }),
    }
}

/// The pixels of an image file, in the array form the ops take.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ImageArray {
    /// 8-bit grey, (H, W).
    Gray8(Array2<u8>),
    /// 16-bit grey, (H, W).
    Gray16(Array2<u16>),
    /// 8-bit RGB as planes, (3, H, W).
    Rgb8(Array3<u8>),
    /// 16-bit RGB as planes, (3, H, W).
    Rgb16(Array3<u16>),
}

impl ImageArray {
    /// The image as 8-bit grey: `Gray8` as is, the others through the `image` crate's
    /// conversion (Rec. 709 luma; 16-bit values scaled to 8 bits).
    pub fn into_gray8(self) -> Array2<u8> {
        match self {
            ImageArray::Gray8(a) => a,
            other => {
                let img = other.into_dynamic().to_luma8();
                luma_view(&img).to_owned()
            }
        }
    }

    fn into_dynamic(self) -> DynamicImage {
        let must = |r: Result<DynamicImage>| r.expect("arrays read from an image have u32 sides");
        match self {
            ImageArray::Gray8(a) => must(luma_from_array(a.view()).map(DynamicImage::ImageLuma8)),
            ImageArray::Gray16(a) => must(luma_from_array(a.view()).map(DynamicImage::ImageLuma16)),
            ImageArray::Rgb8(a) => must(rgb_from_planar(a.view()).map(DynamicImage::ImageRgb8)),
            ImageArray::Rgb16(a) => must(rgb_from_planar(a.view()).map(DynamicImage::ImageRgb16)),
        }
    }
}

/// Reads an image file into an [`ImageArray`]. Grey and RGB images of 8 or 16 bits are
/// supported; anything else (alpha channels, float pixels) is [`Error::Image`] naming the file and
/// its pixel type, as is a file that cannot be opened or decoded.
pub fn read_image(path: impl AsRef<Path>) -> Result<ImageArray> {
    let path = path.as_ref();
    let err = |reason: String| Error::Image {
        path: path.display().to_string(),
        reason,
    };
    let img = image::open(path).map_err(|e| err(e.to_string()))?;
    Ok(match img {
        DynamicImage::ImageLuma8(i) => ImageArray::Gray8(luma_view(&i).to_owned()),
        DynamicImage::ImageLuma16(i) => ImageArray::Gray16(luma_view(&i).to_owned()),
        DynamicImage::ImageRgb8(i) => ImageArray::Rgb8(rgb_to_planar(&i)),
        DynamicImage::ImageRgb16(i) => ImageArray::Rgb16(rgb_to_planar(&i)),
        other => {
            return Err(err(format!(
                "unsupported pixel type {:?} (grey or RGB of 8 or 16 bits are)",
                other.color()
            )));
        }
    })
}

/// Writes an (H, W) grey array (u8 or u16) as an image file; the format follows the extension.
pub fn write_gray<P>(path: impl AsRef<Path>, a: ArrayView2<'_, P>) -> Result<()>
where
    P: Primitive,
    Luma<P>: image::PixelWithColorType + Pixel<Subpixel = P>,
    [P]: image::EncodableLayout,
{
    let path = path.as_ref();
    luma_from_array(a)?.save(path).map_err(|e| Error::Image {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// Scales a float image to 8 bits for viewing: `0` ↦ 0 and the largest finite absolute value ↦
/// 255 (NaN ↦ 0); an all-zero image stays 0.
pub fn to_gray8_scaled(a: ArrayView2<'_, f32>) -> Array2<u8> {
    let max = a.iter().filter(|v| v.is_finite()).fold(0f32, |m, v| m.max(v.abs()));
    let scale = if max > 0.0 { 255.0 / max } else { 0.0 };
    a.mapv(|v| {
        if v.is_finite() {
            (v.abs() * scale).round().min(255.0) as u8
        } else {
            0
        }
    })
}

/// The plane `i` of a planar (C, H, W) array as an (H, W) view.
pub fn plane<P>(a: &Array3<P>, i: usize) -> ArrayView2<'_, P> {
    a.index_axis(Axis(0), i)
}
