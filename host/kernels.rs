//! The embedded PTX and the helpers every family uses to resolve its kernels in it.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule};

use crate::error::Result;

pub use crate::family::launched_kernel_names;

/// PTX of `kernels-gpu/`, compiled by build.rs.
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/gpuprims_kernels.ptx"));
/// The `-C target-cpu` the PTX was compiled for (`GPUPRIMS_CUDA_ARCH`, default sm_70).
pub const PTX_ARCH: &str = env!("GPUPRIMS_PTX_ARCH");

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
