//! The window family's kernel table: every instance's kernels resolved once per `Gpu` to
//! [`KernelId`]s ([`WindowKernels`]), and the name list the PTX test checks, derived from the same
//! tables.

use super::*;

macro_rules! window_table {
    ($($inst:ident => $t:ty, $s:ty, $q:ty, $kind:ident $(($slide:literal $(, $boxed:literal $(, $warp:literal)?)?))?, $blocks:literal;)*) => {
        /// One window kernel instance (input type × output types), in contract order.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum WindowInstance {
            $($inst),*
        }

        impl WindowInstance {
            /// Every instance, in contract order (`inst as usize` indexes this).
            pub const ALL: &'static [WindowInstance] = &[$(WindowInstance::$inst),*];

            /// The instance's kernel symbols, in `WindowKernel::ALL` order.
            pub const fn names(self) -> [&'static str; WindowKernel::ALL.len()] {
                match self {
                    $(WindowInstance::$inst => crate::window_kernel_names!($inst)),*
                }
            }

            /// Bytes of one sum and of one sum of squares the instance writes.
            pub const fn output_sizes(self) -> (usize, usize) {
                match self {
                    $(WindowInstance::$inst => (size_of::<$s>(), size_of::<$q>())),*
                }
            }

            /// The sliding row kernel's symbol (integer and f32 instances).
            pub const fn sliding_name(self) -> Option<&'static str> {
                match self {
                    $(WindowInstance::$inst => window_table!(@sliding $kind $inst)),*
                }
            }

            /// The float instances' narrow-window sliding kernel's symbol.
            pub const fn narrow_name(self) -> Option<&'static str> {
                match self {
                    $(WindowInstance::$inst => window_table!(@narrow $kind $inst)),*
                }
            }

            /// The integer-only fused 2D box's symbol.
            pub const fn fused_name(self) -> Option<&'static str> {
                match self {
                    $(WindowInstance::$inst => window_table!(@fused $kind $inst)),*
                }
            }

            /// The warp-prefix 2D box's symbol (u8 instances).
            pub const fn warp_name(self) -> Option<&'static str> {
                match self {
                    $(WindowInstance::$inst => window_table!(@warp $inst $($($(, $warp)?)?)?)),*
                }
            }
        }
    };
    (@sliding separable $inst:ident) => { None };
    (@sliding $kind:ident $inst:ident) => { Some(crate::window_sliding_name!($inst)) };
    (@narrow float_rows $inst:ident) => { Some(crate::window_narrow_name!($inst)) };
    (@narrow $kind:ident $inst:ident) => { None };
    (@fused fused $inst:ident) => { Some(crate::window_fused_name!($inst)) };
    (@fused $kind:ident $inst:ident) => { None };
    (@warp $inst:ident, $warp:literal) => { Some(crate::window_kernel_name!($inst, "warp_box")) };
    (@warp $inst:ident) => { None };
}

crate::for_each_window_instance!(window_table);

// SAFETY: `repr(C)` plain data (integers and the element type); the layout is the contract both
// sides compile.
unsafe impl<T: WindowElement> DeviceRepr for RowArgs<T> {}
// SAFETY: as above.
unsafe impl<T: WindowElement> DeviceRepr for BoxArgs<T> {}

/// The window family's state on one `Gpu`: each instance's kernels, the sliding row kernels
/// (integer and f32 instances) and the integer instances' fused boxes.
pub(crate) struct WindowKernels {
    pub(super) ids: Vec<[KernelId; WindowKernel::ALL.len()]>,
    pub(super) sliding: Vec<Option<KernelId>>,
    /// The float instances' sliding kernels for widths in `FLOAT_NARROW_WIDTHS`.
    pub(super) narrow: Vec<Option<KernelId>>,
    pub(super) int: Vec<Option<IntKernels>>,
    /// The stream-rows box (u8 → f32), indexed by window width − 1: the word kernels, then the
    /// gathering ones (any plane).
    pub(super) stream: [Vec<KernelId>; 2],
}

pub(super) struct IntKernels {
    pub(super) fused: KernelId,
    /// The warp-prefix box (u8 instances).
    pub(super) warp: Option<KernelId>,
}

impl WindowKernels {
    /// The one-pass box kernel of `variant` (`Fused`, or for u8 `WarpPrefix` and `StreamRows`)
    /// for `instance` and a window `win_w` wide; `words`: the stream-rows kernel that reads whole
    /// words (`stream_box_reads_words`), else the one that gathers.
    pub(super) fn one_pass(
        &self,
        instance: WindowInstance,
        variant: BoxVariant,
        win_w: u32,
        words: bool,
    ) -> Result<KernelId> {
        if variant == BoxVariant::StreamRows {
            return match (instance, self.stream[!words as usize].get(win_w as usize - 1)) {
                (WindowInstance::u8_f32, Some(&f)) => Ok(f),
                _ => Err(no_int_kernels(instance)),
            };
        }
        match (&self.int[instance as usize], variant) {
            (Some(IntKernels { warp: Some(warp), .. }), BoxVariant::WarpPrefix) => Ok(*warp),
            (Some(int), BoxVariant::Fused) => Ok(int.fused),
            _ => Err(no_int_kernels(instance)),
        }
    }
}

impl Family for WindowKernels {
    fn load(k: &mut Resolver) -> Result<Self> {
        let ids = k.table(WindowInstance::ALL, WindowInstance::names)?;
        let sliding = WindowInstance::ALL
            .iter()
            .map(|i| i.sliding_name().map(|s| k.one(s)).transpose())
            .collect::<Result<Vec<_>>>()?;
        let narrow = WindowInstance::ALL
            .iter()
            .map(|i| i.narrow_name().map(|s| k.one(s)).transpose())
            .collect::<Result<Vec<_>>>()?;
        let int = WindowInstance::ALL
            .iter()
            .map(|i| {
                i.fused_name()
                    .map(|f| -> Result<IntKernels> {
                        Ok(IntKernels {
                            fused: k.one(f)?,
                            warp: i.warp_name().map(|w| k.one(w)).transpose()?,
                        })
                    })
                    .transpose()
            })
            .collect::<Result<Vec<_>>>()?;
        let stream = [k.list(&STREAM_BOX_NAMES)?, k.list(&STREAM_BOX_ANY_NAMES)?];
        Ok(WindowKernels {
            ids,
            sliding,
            narrow,
            int,
            stream,
        })
    }
}
