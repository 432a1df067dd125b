//! The embedded PTX and the helpers every family uses to resolve its kernels in it.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule};

use crate::error::Result;

pub use crate::family::launched_kernel_names;

/// PTX of `kernels-gpu/`, compiled by build.rs.
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/gpuprims_kernels.ptx"));
/// The `-C target-cpu` the PTX was compiled for (`GPUPRIMS_CUDA_ARCH`, default sm_70).
pub const PTX_ARCH: &str = env!("GPUPRIMS_PTX_ARCH");
/// The PTX assembled into SASS for [`SASS_ARCH`] by build.rs (a cubin), or empty when the build
/// did not ask for it (`GPUPRIMS_SASS_ARCH` unset).
pub const SASS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/gpuprims_kernels.cubin"));
/// The architecture of [`SASS`] (`GPUPRIMS_SASS_ARCH`, e.g. `sm_90`), empty when there is none.
pub const SASS_ARCH: &str = env!("GPUPRIMS_SASS_ARCH");

/// Whether the embedded SASS runs on a device of compute capability `cc` ([`arch_runs_on`]).
pub fn sass_runs_on(cc: (i32, i32)) -> bool {
    !SASS.is_empty() && arch_runs_on(SASS_ARCH, cc)
}

/// The `XY` of an `sm_XY` architecture name (an `a`/`f` suffix allowed), `None` for anything else.
fn arch_number(arch: &str) -> Option<i32> {
    let digits: String = arch
        .strip_prefix("sm_")?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Whether PTX compiled for `arch` (`sm_XY`) can be JIT-compiled for a device of compute
/// capability `cc`: PTX runs on its own architecture and every later one. An sm_90 build
/// (`GPUPRIMS_CUDA_ARCH=sm_90`, whose kernels use Hopper's packed 16-bit max/min) does not load
/// on an older device.
pub fn ptx_runs_on(arch: &str, cc: (i32, i32)) -> bool {
    arch_number(arch).is_some_and(|v| cc.0 * 10 + cc.1 >= v)
}

/// Whether SASS built for `arch` (`sm_XY`, an `a`/`f` suffix allowed) runs on a device of compute
/// capability `cc`: SASS runs on its own major version at an equal or higher minor one.
pub fn arch_runs_on(arch: &str, cc: (i32, i32)) -> bool {
    arch_number(arch).is_some_and(|v| cc.0 == v / 10 && cc.1 >= v % 10)
}

/// Names of the `.entry` functions in a PTX text.
pub fn ptx_entries(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| l.trim_start().strip_prefix(".visible .entry "))
        .map(|rest| rest.split(['(', ' ']).next().unwrap_or(""))
        .collect()
}

/// Resolves one row of a family's kernel table: one function per name, in order.
pub(crate) fn load_functions<const N: usize>(module: &Arc<CudaModule>, names: [&str; N]) -> Result<[CudaFunction; N]> {
    let fs = names.map(|name| module.load_function(name));
    let fs: Vec<CudaFunction> = fs.into_iter().collect::<Result<_, _>>()?;
    Ok(fs
        .try_into()
        .unwrap_or_else(|_| unreachable!("N names give N functions")))
}

/// Resolves a family's whole table: one row per instance.
pub(crate) fn load_table<I: Copy, const N: usize>(
    module: &Arc<CudaModule>,
    instances: &[I],
    names: impl Fn(I) -> [&'static str; N],
) -> Result<Vec<[CudaFunction; N]>> {
    instances.iter().map(|&i| load_functions(module, names(i))).collect()
}
