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

macro_rules! conv1d_table {
    ($($t:ident),* $(,)?) => {
        /// Element type of a 1D filter kernel, in contract order.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Conv1dType {
            $($t),*
        }

        impl Conv1dType {
            /// Every type, in contract order (`ty as usize` indexes this).
            pub const ALL: &'static [Conv1dType] = &[$(Conv1dType::$t),*];

            /// Size in bytes of one element.
            pub const fn elem_size(self) -> usize {
                match self {
                    $(Conv1dType::$t => core::mem::size_of::<$t>()),*
                }
            }

            /// The type's kernel symbols, in `Conv1dStep::ALL` order.
            pub const fn names(self) -> [&'static str; crate::abi::conv1d::Conv1dStep::ALL.len()] {
                match self {
                    $(Conv1dType::$t => crate::conv1d_kernel_names!($t)),*
                }
            }
        }
    };
}

crate::for_each_conv1d_type!(conv1d_table);

/// Every kernel symbol the host may launch.
pub fn launched_kernel_names() -> impl Iterator<Item = &'static str> {
    let reduce = ReduceInstance::ALL.iter().flat_map(|i| i.names());
    reduce.chain(Conv1dType::ALL.iter().flat_map(|t| t.names()))
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
// SAFETY: as above; `repr(C)` with explicit padding, for the filter element types (f32, f64).
unsafe impl<T: crate::ops::conv1d::Conv1dElement> cudarc::driver::DeviceRepr for crate::abi::conv1d::Conv1dArgs<T> {}
