//! The 2D filter family's kernel table: every kernel name, resolved once per `Gpu` to
//! [`KernelId`]s ([`Filter2dKernels`]), and the name list the PTX test checks, derived from the
//! same tables.

use super::*;

// ---------------------------------------------------------------------------------------------
// Kernel table
// ---------------------------------------------------------------------------------------------

/// Index of each morphology kernel in `morph_kernel_names!` order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MorphKernel {
    OnePixel = 0,
    MultiPixel,
    SharedTile,
    ComposedShared,
    PassCols,
    PassRows,
    VanHerkCols,
    VanHerkRows,
    RowVector3,
    RowVector5,
    Difference,
    VanHerkColWords,
    DoublingRows,
}

macro_rules! instance_enum {
    ($enum:ident, $names:ident, $n:expr, $doc:literal; $($inst:ident)*) => {
        #[doc = $doc]
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[doc(hidden)]
        pub enum $enum {
            $($inst),*
        }
        impl $enum {
            pub(super) const ALL: &'static [$enum] = &[$($enum::$inst),*];
            pub(super) const fn names(self) -> [&'static str; $n] {
                match self {
                    $($enum::$inst => crate::$names!($inst)),*
                }
            }
        }
    };
}

macro_rules! morph_table {
    ($($inst:ident => $t:ty, $fold:ident, $lanes:literal;)*) => {
        instance_enum!(MorphInstance, morph_kernel_names, 13, "A morphology kernel instance."; $($inst)*);
    };
}
crate::for_each_morph_instance!(morph_table);

macro_rules! linear_table {
    ($($inst:ident => $i:ty, $o:ty, $fold:ident;)*) => {
        instance_enum!(LinearInstance, linear_kernel_names, 3, "A 2D-taps linear kernel instance."; $($inst)*);
    };
}
crate::for_each_linear_instance!(linear_table);

macro_rules! pass_table {
    ($($inst:ident => $t:ty, $acc:ty;)*) => {
        instance_enum!(PassInstance, pass_kernel_names, 4, "A separable-pass kernel instance."; $($inst)*);
    };
}
crate::for_each_pass_instance!(pass_table);

macro_rules! fixed3_table {
    ($($inst:ident => $i:ty, $o:ty, $op:ident, $lanes:literal;)*) => {
        /// A fixed 3 × 3 row-vector kernel.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[doc(hidden)]
        pub enum Fixed3 {
            $($inst),*
        }
        impl Fixed3 {
            pub(super) const NAMES: &'static [&'static str] = &[$(crate::fixed3_kernel_name!($inst)),*];
        }
    };
}
crate::for_each_fixed3_instance!(fixed3_table);

macro_rules! word_tile_table {
    ($($inst:ident => $f:ty, $k:literal, $o:ty, $p:literal, $r:literal;)*) => {
        /// A word-tile kernel (u8 images).
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub(super) enum WordTile {
            $($inst),*
        }
        impl WordTile {
            pub(super) const NAMES: &'static [&'static str] = &[$(crate::word_tile_kernel_name!($inst)),*];
            pub(super) const ANY_NAMES: &'static [&'static str] = &[$(crate::word_tile_any_kernel_name!($inst)),*];
            /// Words per lane of each kernel.
            pub(super) const WORDS: &'static [u32] = &[$($p),*];
            /// Output rows per lane of each kernel.
            pub(super) const ROWS: &'static [u32] = &[$($r),*];
        }
    };
}
crate::for_each_word_tile_instance!(word_tile_table);

macro_rules! doubling_u8_table {
    ($($inst:ident => $fold:ident, $steps:literal;)*) => {
        /// The fixed-steps u8 doubling row passes: symbol, fold and step count of each.
        pub(super) const DOUBLING_U8: &[(&str, MorphFold, u32)] = &[$((crate::doubling_u8_kernel_name!($inst), MorphFold::$fold, $steps)),*];
    };
}
crate::for_each_doubling_u8_instance!(doubling_u8_table);

/// The u8 tile van Herk entries, `Max` then `Min`.
pub(super) const TILE_VH_NAMES: [&str; 2] = [crate::tile_vh_kernel_name!(Max), crate::tile_vh_kernel_name!(Min)];

pub(super) const MAGNITUDE_NAMES: [&str; 2] = [
    crate::fixed3_kernel_name!(magnitude_i16),
    crate::fixed3_kernel_name!(magnitude_f32),
];

// SAFETY: `repr(C)` plain data; the layout is the contract both sides compile.
unsafe impl<T: DeviceRepr> DeviceRepr for Filter2dArgs<T> {}

/// The 2D filter family's state on one `Gpu`: its kernel table.
pub(crate) struct Filter2dKernels {
    pub(super) morph: Vec<[KernelId; 13]>,
    pub(super) linear: Vec<[KernelId; 3]>,
    pub(super) passes: Vec<[KernelId; 4]>,
    pub(super) fixed3: Vec<KernelId>,
    pub(super) word_tile: Vec<KernelId>,
    pub(super) word_tile_any: Vec<KernelId>,
    /// In `DOUBLING_U8` order.
    pub(super) doubling_u8: Vec<KernelId>,
    pub(super) magnitude: [KernelId; 2],
    /// In `TILE_VH_NAMES` order.
    pub(super) tile_vh: [KernelId; 2],
}

impl Family for Filter2dKernels {
    fn load(k: &mut Resolver) -> Result<Self> {
        Ok(Filter2dKernels {
            morph: k.table(MorphInstance::ALL, MorphInstance::names)?,
            linear: k.table(LinearInstance::ALL, LinearInstance::names)?,
            passes: k.table(PassInstance::ALL, PassInstance::names)?,
            fixed3: k.list(Fixed3::NAMES)?,
            word_tile: k.list(WordTile::NAMES)?,
            word_tile_any: k.list(WordTile::ANY_NAMES)?,
            doubling_u8: k.list(&DOUBLING_U8.iter().map(|&(n, _, _)| n).collect::<Vec<_>>())?,
            magnitude: k.all(MAGNITUDE_NAMES)?,
            tile_vh: k.all(TILE_VH_NAMES)?,
        })
    }
}
