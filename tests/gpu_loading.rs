//! Kernel loading: a new `Gpu` loads nothing, an op loads its own kernels only, a plan loads its
//! kernels when it is made (so a graph capture loads none), the portable build runs on any
//! device and agrees with the device's own build, and bad names and architectures are errors.

use gpuprims::kernels::{self, ModuleKind};
use gpuprims::{
    Border, DeviceArray, Error, Filter2dPlan, Filter2dShape, Filter2dVariant, Gpu, LoadedFrom, MorphVariant,
};
use libtest_mimic::{Failed, Trial};
use ndarray::Array2;
use rand::Rng;

use crate::common::{gpu_trial, rng};
use crate::ptx::corrupted;

pub fn trials() -> Vec<Trial> {
    // Runs in a build that damaged modules on purpose (GPUPRIMS_CORRUPT_KERNEL); ignored in any
    // other, as without a GPU.
    let damaged = gpu_trial(
        "gpu_loading::a_damaged_cubin_falls_back_and_a_damaged_ptx_is_named".into(),
        damaged_modules,
    );
    let skip = damaged.has_ignored_flag() || corrupted().is_empty();
    vec![
        gpu_trial(
            "gpu_loading::a_new_gpu_loads_nothing_and_an_op_its_kernels".into(),
            new_gpu_loads_nothing,
        ),
        gpu_trial(
            "gpu_loading::graph_capture_loads_no_module".into(),
            capture_loads_nothing,
        ),
        gpu_trial(
            "gpu_loading::portable_build_matches_the_device_build".into(),
            portable_matches,
        ),
        gpu_trial(
            "gpu_loading::bad_kernel_names_and_architectures".into(),
            bad_names_and_archs,
        ),
        damaged.with_ignored_flag(skip),
    ]
}

fn image(h: usize, w: usize, seed: u64) -> Array2<u8> {
    let mut r = rng(seed);
    Array2::from_shape_fn((h, w), |_| r.random::<u8>())
}

fn cpu_dilate(x: &Array2<u8>, window: (usize, usize), border: Border) -> Array2<u8> {
    let (h, w) = x.dim();
    let v = gpuprims::cpu::filter2d::dilate(x.as_slice().expect("standard layout"), h, w, window, border);
    Array2::from_shape_vec((h, w), v).expect("shape")
}

fn new_gpu_loads_nothing(_: &Gpu) -> Result<(), Failed> {
    let g = Gpu::with_device(0)?;
    if g.loaded_kernels() != 0 {
        return Err(format!("a new Gpu loaded {} kernels", g.loaded_kernels()).into());
    }
    let x = image(61, 200, 1);
    let got = g.dilate_with(&x, (3, 3), Border::Reflect, MorphVariant::RowVector)?;
    if got != cpu_dilate(&x, (3, 3), Border::Reflect) {
        return Err("dilation differs from the CPU".into());
    }
    // The row-vector rung is one kernel; nothing else was loaded.
    if g.loaded_kernels() != 1 {
        return Err(format!("one dilation loaded {} kernels", g.loaded_kernels()).into());
    }
    let fork = g.fork_stream()?;
    fork.dilate_with(&x, (3, 3), Border::Reflect, MorphVariant::RowVector)?;
    if fork.loaded_kernels() != 1 || !fork.shares_kernels_with(&g) {
        return Err("a forked stream loaded its own copy".into());
    }
    Ok(())
}

fn capture_loads_nothing(_: &Gpu) -> Result<(), Failed> {
    let g = Gpu::with_device(0)?;
    let shape = Filter2dShape {
        planes: 1,
        h: 300,
        w: 516,
    };
    let host = image(300, 516, 2);
    let x = DeviceArray::upload(&g, &host)?;
    let mut y = DeviceArray::<u8, _>::uninit(&g, x.raw_dim())?;
    let plan = Filter2dPlan::<u8>::gaussian3x3(&g, shape, Border::Reflect, Filter2dVariant::Auto)?;
    let made = g.loaded_kernels();
    if made == 0 {
        return Err("making the plan loaded no kernel".into());
    }
    let graph = g.capture(|g| plan.enqueue(g, x.as_slice(), y.as_mut_slice()))?;
    if g.loaded_kernels() != made {
        return Err(format!("the capture loaded {} more kernels", g.loaded_kernels() - made).into());
    }
    graph.launch()?;
    let got = y.download(&g)?;
    let want = g.gaussian3x3(&host, Border::Reflect)?;
    if got != want {
        return Err("the graph's Gaussian differs from the op's".into());
    }
    Ok(())
}

fn portable_matches(gpu: &Gpu) -> Result<(), Failed> {
    let portable = Gpu::with_device_arch(0, 70)?;
    if portable.kernel_arch() != 70 {
        return Err(format!("capped at 70, loads sm_{}", portable.kernel_arch()).into());
    }
    // The shared Gpu loads the newest build the device runs, or at most GPUPRIMS_LOAD_ARCH's
    // (the suite's portable run sets it).
    let cc = gpu.props().compute_capability;
    let cap = std::env::var("GPUPRIMS_LOAD_ARCH")
        .ok()
        .and_then(|v| gpuprims::kernels::arch_number(&v));
    let limit = cap.unwrap_or(u32::MAX).min((cc.0 * 10 + cc.1) as u32);
    let newest = gpuprims::kernels::ptx_archs()
        .iter()
        .copied()
        .filter(|&a| a <= limit)
        .max();
    if Some(gpu.kernel_arch()) != newest {
        return Err(format!(
            "device sm_{}{} (cap {cap:?}) loads sm_{}, not {newest:?}",
            cc.0,
            cc.1,
            gpu.kernel_arch()
        )
        .into());
    }
    // The word tile specializes for sm_90: the portable Gpu must JIT its sm_70 PTX.
    let name = "gpuprims_word_tile_max5";
    match portable.load_kernel(name)?.from {
        LoadedFrom::Ptx { arch: 70 } => {}
        other => return Err(format!("portable {name} loaded from {other:?}").into()),
    }
    let own = gpu.load_kernel(name)?.from;
    if gpu.kernel_arch() >= 90 && !matches!(own, LoadedFrom::Ptx { arch: 90 } | LoadedFrom::Sass { arch: 90 }) {
        return Err(format!("sm_90 device loaded {name} from {own:?}").into());
    }
    for (i, (h, w)) in [(257, 1000), (64, 333), (1, 7)].into_iter().enumerate() {
        let x = image(h, w, 10 + i as u64);
        for window in [(3, 3), (5, 5), (15, 15)] {
            let want = cpu_dilate(&x, window, Border::Reflect);
            let a = portable.dilate(&x, window, Border::Reflect)?;
            let b = gpu.dilate(&x, window, Border::Reflect)?;
            if a != want || b != want {
                return Err(format!(
                    "{h} × {w}, {window:?}: portable ok {}, device ok {}",
                    a == want,
                    b == want
                )
                .into());
            }
        }
    }
    Ok(())
}

fn bad_names_and_archs(gpu: &Gpu) -> Result<(), Failed> {
    match gpu.load_kernel("gpuprims_no_such_kernel") {
        Err(Error::InvalidArgument { name: "kernel", .. }) => {}
        other => return Err(format!("unknown kernel: {other:?}").into()),
    }
    match Gpu::with_device_arch(0, 60) {
        Err(Error::NoDevice { reason }) if reason.contains("sm_70") && reason.contains("sm_60") => {}
        other => return Err(format!("a cap below every build: {:?}", other.map(|_| ())).into()),
    }
    Ok(())
}

/// In a build with damaged modules: a kernel whose cubin is damaged loads from its PTX; one whose
/// PTX is damaged, on a context that must JIT it (the portable one, where no cubin was assembled
/// from that PTX), is `Error::KernelLoad` naming it, every time it is asked for; every other
/// kernel keeps working.
fn damaged_modules(gpu: &Gpu) -> Result<(), Failed> {
    let damaged = corrupted();
    let cc = gpu.props().compute_capability;
    for &(kind, name) in &damaged {
        let source = kernels::id(name).ok_or(format!("{name} is not embedded"))?.source();
        let fresh = Gpu::with_device(0)?;
        let portable = Gpu::with_device_arch(0, 70)?;
        match kind {
            ModuleKind::Sass => {
                let ptx = source.ptx_for(fresh.kernel_arch()).ok_or("no PTX")?;
                if source.sass_for(ptx.arch(), cc).is_none() {
                    return Err(format!("{name}: no cubin for this device, nothing to fall back from").into());
                }
                match fresh.load_kernel(name)?.from {
                    LoadedFrom::Ptx { arch } if arch == ptx.arch() => {}
                    other => return Err(format!("{name}: a damaged cubin loaded from {other:?}").into()),
                }
            }
            ModuleKind::Ptx => {
                let ptx = source.ptx_for(70).ok_or("no sm_70 PTX")?;
                if source.sass_for(ptx.arch(), cc).is_some() {
                    return Err(format!("{name}: the portable context loads a cubin, not the damaged PTX").into());
                }
                for attempt in 0..2 {
                    match portable.load_kernel(name) {
                        Err(Error::KernelLoad { kernel, reason }) if kernel == name && reason.contains("damaged") => {}
                        other => return Err(format!("{name}, attempt {attempt}: {:?}", other.map(|l| l.from)).into()),
                    }
                }
            }
        }
        let x = image(64, 100, 3);
        if portable.dilate(&x, (3, 3), Border::Reflect)? != cpu_dilate(&x, (3, 3), Border::Reflect) {
            return Err("after a damaged kernel, dilation differs from the CPU".into());
        }
    }
    Ok(())
}
