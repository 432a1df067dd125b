//! The embedded PTX and the host's table of kernel entries, built from the contract's instance
//! list (`abi`), so a kernel the host can launch is by construction one the PTX defines.

use crate::abi::reduce::Reducer;

/// PTX of `kernels-gpu/`, compiled by build.rs.
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/gpuprims_kernels.ptx"));
/// The `-C target-cpu` the PTX was compiled for (`GPUPRIMS_CUDA_ARCH`, default sm_70).
pub const PTX_ARCH: &str = env!("GPUPRIMS_PTX_ARCH");

macro_rules! reduce_table {
    ($($inst:ident => $r:ty),* $(,)?) => {
        /// One reduction kernel instance (reducer × input type), in contract order.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ReduceInstance {
            $($inst),*
        }

        impl ReduceInstance {
            /// Every instance, in contract order (`inst as usize` indexes this).
            pub const ALL: &'static [ReduceInstance] = &[$(ReduceInstance::$inst),*];

            /// The instance's eight kernel symbols, in ladder order.
            pub const fn names(self) -> [&'static str; 8] {
                match self {
                    $(ReduceInstance::$inst => crate::reduce_kernel_names!($inst)),*
                }
            }

            /// Size in bytes of the instance's accumulator (sizes shared memory).
            pub const fn acc_size(self) -> usize {
                match self {
                    $(ReduceInstance::$inst => core::mem::size_of::<<$r as Reducer>::Acc>()),*
                }
            }
        }
    };
}

crate::for_each_reduce_instance!(reduce_table);

/// Every kernel symbol the host may launch.
pub fn launched_kernel_names() -> impl Iterator<Item = &'static str> {
    ReduceInstance::ALL.iter().flat_map(|i| i.names())
}

/// Names of the `.entry` functions in a PTX text.
pub fn ptx_entries(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| l.trim_start().strip_prefix(".visible .entry "))
        .map(|rest| rest.split(['(', ' ']).next().unwrap_or(""))
        .collect()
}

/// A reducer the host can launch: its contract instance and a device-copyable accumulator.
pub trait HostReducer: Reducer<In: cudarc::driver::DeviceRepr, Acc: cudarc::driver::DeviceRepr> {
    /// The kernel instance (index into the host's kernel table).
    const INSTANCE: ReduceInstance;
}

macro_rules! host_reducers {
    ($($inst:ident => $r:ty),* $(,)?) => {
        $(impl HostReducer for $r {
            const INSTANCE: ReduceInstance = ReduceInstance::$inst;
        })*
    };
}

crate::for_each_reduce_instance!(host_reducers);

// SAFETY: plain-old-data `repr(C)` types of integer/float fields with no padding-sensitive
// invariants; their layout is the contract both sides compile.
unsafe impl cudarc::driver::DeviceRepr for crate::abi::reduce::ReduceArgs {}
// SAFETY: as above.
unsafe impl cudarc::driver::DeviceRepr for crate::abi::reduce::W128 {}
// SAFETY: as above; `Moments` of device-representable fields.
unsafe impl<S: cudarc::driver::DeviceRepr, Q: cudarc::driver::DeviceRepr> cudarc::driver::DeviceRepr
    for crate::abi::reduce::Moments<S, Q>
{
}
