//! Shared test plumbing: the GPU handle, GPU trial construction, seeded inputs.

use std::sync::OnceLock;

use gpuprims::{Border, Gpu};
use libtest_mimic::{Failed, Trial};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The shared GPU handle, or why there is none.
pub fn gpu() -> Result<&'static Gpu, String> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| Gpu::new().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(Clone::clone)
}

fn gpu_required() -> bool {
    std::env::var("GPUPRIMS_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// A trial that needs the GPU: ignored without one (failed with `GPUPRIMS_REQUIRE_GPU=1`).
pub fn gpu_trial(name: String, f: impl FnOnce(&Gpu) -> Result<(), Failed> + Send + 'static) -> Trial {
    let available = gpu().is_ok();
    let ignored = !available && !gpu_required();
    Trial::test(name, move || match gpu() {
        Ok(g) => f(g),
        Err(why) => Err(format!("GPUPRIMS_REQUIRE_GPU=1 but no GPU: {why}").into()),
    })
    .with_ignored_flag(ignored)
}

/// Deterministic generator for a named test case.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// Value patterns every reduction is checked on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Uniform over the type's full range (ints) or [-1000, 1000] (floats).
    Random,
    /// Alternating extremes (i32::MIN/MAX, 0/255, …; ±1e30 f32, ±1e150 f64).
    Extremes,
    /// Every element equal.
    AllEqual,
    /// Floats on the grid k/4 in [-2, 2]: every partial sum is exact, so results must match bit
    /// for bit whatever the order. Integers: small values.
    OnGrid,
    /// Random floats with one NaN (floats only).
    OneNan,
}

pub const PATTERNS: [Pattern; 5] = [
    Pattern::Random,
    Pattern::Extremes,
    Pattern::AllEqual,
    Pattern::OnGrid,
    Pattern::OneNan,
];

/// An element type the tests generate.
pub trait Gen: Copy + Send + Sync + 'static + std::fmt::Debug {
    const IS_FLOAT: bool;
    fn make(pattern: Pattern, n: usize, seed: u64) -> Vec<Self>;
}

macro_rules! gen_int {
    ($t:ty, $equal:expr) => {
        impl Gen for $t {
            const IS_FLOAT: bool = false;
            fn make(pattern: Pattern, n: usize, seed: u64) -> Vec<Self> {
                let mut r = rng(seed);
                (0..n)
                    .map(|i| match pattern {
                        Pattern::Random | Pattern::OneNan => r.random::<$t>(),
                        Pattern::Extremes => {
                            if i % 2 == 0 {
                                <$t>::MIN
                            } else {
                                <$t>::MAX
                            }
                        }
                        Pattern::AllEqual => $equal,
                        Pattern::OnGrid => r.random_range(0..8) as $t,
                    })
                    .collect()
            }
        }
    };
}
gen_int!(i32, -46341);
gen_int!(u32, 4_000_000_000);
gen_int!(u8, 251);

macro_rules! gen_float {
    ($t:ty, $big:expr) => {
        impl Gen for $t {
            const IS_FLOAT: bool = true;
            fn make(pattern: Pattern, n: usize, seed: u64) -> Vec<Self> {
                let mut r = rng(seed);
                let mut v: Vec<$t> = (0..n)
                    .map(|i| match pattern {
                        Pattern::Random | Pattern::OneNan => r.random_range(-1000.0..1000.0),
                        Pattern::Extremes => {
                            if i % 2 == 0 {
                                -$big
                            } else {
                                $big
                            }
                        }
                        Pattern::AllEqual => 1.5,
                        Pattern::OnGrid => r.random_range(-8..=8) as $t / 4.0,
                    })
                    .collect();
                if pattern == Pattern::OneNan {
                    let at = r.random_range(0..n);
                    v[at] = <$t>::NAN;
                }
                v
            }
        }
    };
}
gen_float!(f32, 1e30);
gen_float!(f64, 1e150);

/// The border a scipy fixture line names (gpuprims' short names, [`Border::name`]); `cval` is
/// the constant of the `constant` mode.
pub fn fixture_border(name: &str, cval: f64) -> Border {
    match Border::ALL.into_iter().find(|b| b.name() == name) {
        Some(Border::Constant(_)) => Border::Constant(cval),
        Some(b) => b,
        None => panic!("unknown mode {name}"),
    }
}

/// The whitespace-separated numbers of a fixture field.
pub fn fixture_numbers(s: &str) -> Vec<f64> {
    s.split_whitespace().map(|v| v.parse().expect("number")).collect()
}

/// A `CudaSlice` of `len` elements starting one element into `buf` (which holds `len + 1`): not
/// 16-byte aligned. The caller must `leak` it before `buf` is dropped.
pub fn one_element_in<T: cudarc::driver::DeviceRepr>(
    gpu: &Gpu,
    buf: &cudarc::driver::CudaSlice<T>,
    len: usize,
) -> cudarc::driver::CudaSlice<T> {
    use cudarc::driver::DevicePtr;
    assert!(buf.len() > len, "the buffer holds len + 1 elements");
    let (ptr, _sync) = buf.device_ptr(gpu.stream());
    // SAFETY: `len` elements from the second one lie in `buf`'s allocation; the caller leaks the
    // alias before `buf` frees it.
    unsafe { gpu.stream().upgrade_device_ptr(ptr + size_of::<T>() as u64, len) }
}
