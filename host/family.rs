//! Kernel families and their registry.
//!
//! A family (reductions, 1D filters, window statistics, …) keeps its per-[`Gpu`] state — its
//! kernel table, and device facts its plans use — in one type implementing [`Family`]. The
//! registry below lists every family once; [`Gpu`] holds one lazily filled slot per entry and
//! knows nothing else about families. Adding a family is its own files plus one line here.

use std::sync::OnceLock;

use crate::error::Result;
use crate::gpu::Gpu;
use crate::kernels::Resolver;

/// A kernel family's per-`Gpu` state: its kernel table.
pub(crate) trait Family: Sized + Send + Sync + 'static {
    /// Resolves the family's kernel names through `k` to [`KernelId`](crate::kernels::KernelId)s
    /// (their modules load when a plan first needs them). Called once per `Gpu` on the family's
    /// first use, and with a listing resolver for [`launched_kernel_names`].
    fn load(k: &mut Resolver) -> Result<Self>;
}

/// A family with a slot in [`Families`] (implemented by the registry macro).
pub(crate) trait Registered: Family {
    fn slot(families: &Families) -> &OnceLock<Self>;
}

macro_rules! registry {
    ($($field:ident: $family:ty),* $(,)?) => {
        /// One lazily loaded state per registered family.
        #[derive(Default)]
        pub(crate) struct Families {
            $($field: OnceLock<$family>,)*
        }

        $(impl Registered for $family {
            fn slot(families: &Families) -> &OnceLock<Self> {
                &families.$field
            }
        })*

        /// Every kernel symbol the host may launch, over all families: the names each family's
        /// `load` resolves (the PTX test checks each is an embedded `.entry`).
        pub fn launched_kernel_names() -> Vec<&'static str> {
            let mut k = Resolver::listing();
            $(let _ = <$family as Family>::load(&mut k);)*
            k.into_names()
        }
    };
}

// The registry: one line per family.
registry! {
    reduce: crate::ops::reduce::ReduceKernels,
    conv1d: crate::ops::conv1d::Conv1dKernels,
    window: crate::ops::window::WindowKernels,
    pool: crate::ops::pool::PoolKernels,
    filter2d: crate::ops::filter2d::Filter2dKernels,
    chain: crate::ops::chain::ChainKernels,
    axis: crate::ops::axis::AxisKernels,
    probe: crate::timing::ProbeKernels,
}

impl Gpu {
    /// The state of family `F`, loaded on first use (an atomic load afterwards). Two threads
    /// racing on the first use may both load; one result is kept.
    pub(crate) fn family<F: Registered>(&self) -> Result<&F> {
        let slot = F::slot(self.families());
        if let Some(state) = slot.get() {
            return Ok(state);
        }
        let state = F::load(&mut Resolver::resolving())?;
        Ok(slot.get_or_init(|| state))
    }
}
