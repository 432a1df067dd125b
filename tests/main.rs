//! gpuprims integration tests: one binary (libtest-mimic), CPU trials always run, GPU trials show
//! as ignored without a device and fail when `GPUPRIMS_REQUIRE_GPU=1`.

mod common;
mod cpu_conv1d;
mod cpu_filter2d;
#[cfg(feature = "image")]
mod cpu_image;
mod cpu_nd;
mod cpu_pool;
mod cpu_reference;
mod cpu_window;
mod gpu_chain;
mod gpu_conv1d;
mod gpu_filter2d;
mod gpu_loading;
mod gpu_multi;
mod gpu_nd;
mod gpu_pool;
mod gpu_reduce;
mod gpu_streams;
mod gpu_window;
mod ptx;

use libtest_mimic::{Arguments, Trial};

fn main() {
    // Every output an op allocates is poisoned first, so an element a kernel misses shows.
    // SAFETY: set before any thread exists.
    unsafe { std::env::set_var("GPUPRIMS_POISON_OUTPUTS", "1") };
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = Vec::new();
    trials.extend(cpu_reference::trials());
    trials.extend(ptx::trials());
    trials.extend(cpu_conv1d::trials());
    trials.extend(gpu_reduce::trials());
    trials.extend(gpu_conv1d::trials());
    trials.extend(cpu_window::trials());
    trials.extend(gpu_window::trials());
    trials.extend(cpu_pool::trials());
    trials.extend(gpu_pool::trials());
    trials.extend(cpu_filter2d::trials());
    trials.extend(gpu_filter2d::trials());
    trials.extend(cpu_nd::trials());
    trials.extend(gpu_nd::trials());
    trials.extend(gpu_chain::trials());
    trials.extend(gpu_streams::trials());
    trials.extend(gpu_loading::trials());
    trials.extend(gpu_multi::trials());
    #[cfg(feature = "image")]
    trials.extend(cpu_image::trials());
    libtest_mimic::run(&args, trials).exit();
}
