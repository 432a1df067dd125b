//! The one error type of gpuprims: typed, non-exhaustive, each variant carrying the offending values.

use cudarc::driver::DriverError;

/// Everything that can go wrong in a gpuprims call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No CUDA driver or no usable device (libcuda missing, no GPU, index out of range, …).
    #[error("no CUDA device available: {reason}")]
    NoDevice { reason: String },

    /// A kernel's module could not be loaded on this device (the driver refused its cubin and its
    /// PTX, or the build did not embed it). Other kernels are unaffected; the next use retries.
    #[error("kernel `{kernel}` could not be loaded: {reason}")]
    KernelLoad { kernel: &'static str, reason: String },

    /// A CUDA driver call failed.
    #[error("CUDA driver error: {0}")]
    Driver(#[from] DriverError),

    /// The operation has no value on empty input (min, max, mean, variance).
    #[error("`{op}` of an empty array is undefined")]
    EmptyInput { op: &'static str },

    /// The input has more elements than the operation supports exactly.
    #[error("`{op}` supports at most {max} elements, got {len}")]
    TooManyElements { op: &'static str, len: usize, max: usize },

    /// The filter has more taps than the variant can hold (the constant-memory bank for the
    /// constant, shared-tile and register-blocked 1D variants).
    #[error("{taps} taps exceed the maximum of {max} for this variant")]
    TooManyTaps { taps: usize, max: usize },

    /// The window is larger than the variant or the element type supports (shared-memory
    /// staging of the window, or sums that would no longer be exact).
    #[error("a window of {window} samples exceeds the maximum of {max} for {what}")]
    WindowTooLarge {
        window: usize,
        max: usize,
        what: &'static str,
    },

    /// The data does not fit the module's 64 KiB constant-memory bank (the pooling ladder's
    /// `ConstantInput` rung holds its whole input there).
    #[error("{what} takes {bytes} bytes, more than the {max}-byte constant bank")]
    ConstantBankFull {
        what: &'static str,
        bytes: usize,
        max: usize,
    },

    /// The variant cannot run this input.
    #[error("variant `{variant}` cannot run this input: {reason}")]
    Unsupported { variant: &'static str, reason: String },

    /// A device buffer of another CUDA context (another device) was given to a [`Gpu`](crate::Gpu).
    #[error("a buffer of device {buffer_device}'s context was given to a Gpu of device {gpu_device}")]
    ForeignContext { buffer_device: usize, gpu_device: usize },

    /// An op of a device set ([`Gpus`](crate::Gpus)) failed on one of its devices.
    #[error("on device {device}: {source}")]
    OnDevice { device: usize, source: Box<Error> },

    /// A sharded array given to a device set that did not make it, or an op whose parts
    /// disagree across devices.
    #[error("sharded arrays do not match: {reason}")]
    ShardMismatch { reason: String },

    /// An image file could not be read or written, or its pixel type is not supported.
    #[error("image `{path}`: {reason}")]
    Image { path: String, reason: String },

    /// An argument is out of its documented range.
    #[error("invalid argument `{name}`: {reason}")]
    InvalidArgument { name: &'static str, reason: String },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
