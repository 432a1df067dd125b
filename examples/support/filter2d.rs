//! 2D filter workloads: the ladder of prepared plans on a u8 image and the separable
//! rayon dilation the tables compare with.

use super::*;

/// Times each 2D filter plan on the u8 image `x` (output poisoned before every run), checks its
/// result bit for bit against `want`.
pub fn filter2d_ladder<O: DeviceRepr + Clone + Default + PartialEq>(
    gpu: &Gpu,
    x: &CudaSlice<u8>,
    plans: Vec<(String, Filter2dPlan<u8, O>)>,
    want: &[O],
    bytes_per_pixel: f64,
    copy: f64,
) -> Result<Vec<Row>> {
    // SAFETY: plain data, poisoned before every run and written in full by every plan.
    let y = std::cell::RefCell::new(unsafe { gpu.stream().alloc::<O>(want.len()) }?);
    let mut rows = Vec::new();
    for (name, plan) in plans {
        let poison = |_| gpu.poison(&mut y.borrow_mut());
        let launch = |_| plan.enqueue(gpu, x, &mut y.borrow_mut());
        let probe = gpu.time_launches(1, 1, poison, launch)?;
        let runs = runs_for(probe.median_us, 100);
        let t = gpu.time_launches(3, runs, poison, launch)?;
        poison(0)?;
        launch(0)?;
        let got = gpu.stream().clone_dtoh(&*y.borrow())?;
        rows.push(Row {
            family: "filter2d",
            variant: name,
            n: want.len(),
            median_us: t.median_us,
            bytes: bytes_per_pixel * want.len() as f64,
            copy_gbps: copy,
            ok: got == want,
            note: String::new(),
        });
    }
    Ok(rows)
}

/// CPU baseline and reference of a `(kh, kw)` grey dilation: a column max then a row max
/// (rayon over rows), the window anchored as `grey_dilation`'s, replicate border.
pub fn dilate_cpu(x: &[u8], h: usize, w: usize, (kh, kw): (usize, usize)) -> Vec<u8> {
    let (ay, ax) = ((kh - 1) / 2, (kw - 1) / 2);
    let clamp = |i: i64, n: usize| i.clamp(0, n as i64 - 1) as usize;
    let mut cols = vec![0u8; h * w];
    cols.par_chunks_mut(w).enumerate().for_each(|(r, out)| {
        for i in 0..kh {
            let src = &x[clamp(r as i64 + i as i64 - ay as i64, h) * w..][..w];
            for (o, s) in out.iter_mut().zip(src) {
                *o = (*o).max(*s);
            }
        }
    });
    let mut y = vec![0u8; h * w];
    y.par_chunks_mut(w).enumerate().for_each(|(r, out)| {
        let row = &cols[r * w..][..w];
        for (c, o) in out.iter_mut().enumerate() {
            *o = (0..kw)
                .map(|j| row[clamp(c as i64 + j as i64 - ax as i64, w)])
                .max()
                .unwrap_or(0);
        }
    });
    y
}

/// W12's chain: Gaussian 3 × 3 → dilation 3 × 3 → Sobel along the rows (u8 → i16).
pub fn w12_chain() -> gpuprims::Chain<i16> {
    gpuprims::Chain::new().gaussian3x3().dilate((3, 3)).sobel(1)
}
