//! gpuprims integration tests: one binary (libtest-mimic), CPU trials always run, GPU trials show
//! as ignored without a device and fail when `GPUPRIMS_REQUIRE_GPU=1`.

mod common;
mod cpu_conv1d;
mod cpu_reference;
mod gpu_conv1d;
mod gpu_reduce;
mod ptx;

use libtest_mimic::{Arguments, Trial};

fn main() {
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = Vec::new();
    trials.extend(cpu_reference::trials());
    trials.extend(ptx::trials());
    trials.extend(cpu_conv1d::trials());
    trials.extend(gpu_reduce::trials());
    trials.extend(gpu_conv1d::trials());
    libtest_mimic::run(&args, trials).exit();
}
