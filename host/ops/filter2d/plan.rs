//! [`Filter2dPlan`]: a planned 2D filter (its stages, scratch image and constant-bank taps),
//! and how it enqueues.

use super::*;

// ---------------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------------

/// Taps a plan keeps on the device and puts in the constant bank for its launches.
pub(super) struct BankTaps {
    pub(super) bytes: CudaSlice<u8>,
    pub(super) content: BankContent,
}

impl BankTaps {
    pub(super) fn new(gpu: &Gpu, bytes: &[u8]) -> Result<Self> {
        if bytes.len() > crate::abi::CONSTANT_BANK_BYTES {
            return Err(Error::TooManyTaps {
                taps: bytes.len() / 4,
                max: crate::abi::CONSTANT_BANK_BYTES / 4,
            });
        }
        Ok(BankTaps {
            bytes: gpu.stream().clone_htod(bytes)?,
            content: BankContent::fresh(),
        })
    }
}

/// A planned 2D filter of images of `I` into images of `O`: its launches, scratch image and
/// taps. Plans are reusable (timing loops enqueue one plan many times); build one with the
/// constructors below or let the `Gpu` ops do it.
pub struct Filter2dPlan<I: Filter2dElement, O: DeviceRepr = I> {
    pub(super) shape: Filter2dShape,
    pub(super) stages: Vec<Stage<I>>,
    pub(super) scratch: Option<CudaSlice<I>>,
    pub(super) taps: Option<BankTaps>,
    pub(super) variant: Filter2dPlanVariant,
    pub(super) needs_aligned: bool,
    pub(super) _out: std::marker::PhantomData<O>,
}

impl<I: Filter2dElement, O: DeviceRepr> Filter2dPlan<I, O> {
    /// The rung this plan runs (`Auto` resolved).
    pub fn variant(&self) -> Filter2dPlanVariant {
        self.variant
    }

    /// Enqueues the filter of `x` (`planes · h · w` elements, C order) into `y`. Asynchronous.
    pub fn enqueue(&self, gpu: &Gpu, x: &CudaSlice<I>, y: &mut CudaSlice<O>) -> Result<()> {
        let n = self.shape.len();
        check_buffers([("x", x.len(), n), ("y", y.len(), n)])?;
        if n == 0 {
            return Ok(());
        }
        let _order = gpu.order_after(
            [x.stream(), y.stream()]
                .into_iter()
                .chain(self.scratch.as_ref().map(|s| s.stream()))
                .chain(self.taps.as_ref().map(|t| t.bytes.stream())),
        )?;
        let stream = gpu.stream();
        let (xp, yp) = (x.device_ptr(stream).0, y.device_ptr(stream).0);
        let aligned = xp % 16 == 0 && yp % 16 == 0;
        let scratch = self.scratch.as_ref();
        let bad = || Error::Unsupported {
            variant: self.variant.name(),
            reason: "plan without its scratch image".into(),
        };
        for st in &self.stages {
            let mut args = st.args;
            let mut func = &st.func;
            if self.needs_aligned && !aligned {
                args.vector_rows = 0;
                if let Some(id) = st.unaligned {
                    func = gpu.kernel(id)?;
                }
            }
            let mut b = func.launch_on(gpu)?;
            match st.from {
                Buf::Input => b.arg(x),
                Buf::Scratch => b.arg(scratch.ok_or_else(bad)?),
                Buf::Output => unreachable!("no stage reads the output"),
            };
            match st.to {
                Buf::Output => b.arg(&mut *y),
                Buf::Scratch => b.arg(scratch.ok_or_else(bad)?),
                Buf::Input => unreachable!("no stage writes the input"),
            };
            b.arg(&args);
            // SAFETY: every filter entry is `(x: *const I, y: *mut O or I, a: Filter2dArgs<I>)`;
            // x, y and the scratch hold the plan's planes (checked above); the grid covers only
            // those planes; the shared-memory size is the kernel's tile for the window; a kernel
            // that reads constant memory gets the plan's taps in its bank first (below).
            let mut launch = || Ok(unsafe { b.launch(st.cfg) }.map(|_| ())?);
            match (func.bank(), &self.taps) {
                (Some(bank), Some(t)) => {
                    let (src, _sync) = t.bytes.device_ptr(stream);
                    // SAFETY: the plan owns the taps' device buffer, unchanged for its lifetime.
                    unsafe { bank.with_content(gpu, t.content, src, t.bytes.len(), launch) }?
                }
                (Some(_), None) => {
                    return Err(Error::Unsupported {
                        variant: self.variant.name(),
                        reason: format!("{} reads constant memory but the plan has no taps", func.name()),
                    });
                }
                (None, _) => launch()?,
            }
        }
        Ok(())
    }

    pub(super) fn new(
        gpu: &Gpu,
        shape: Filter2dShape,
        stages: Vec<Stage<I>>,
        taps: Option<&[u8]>,
        variant: Filter2dPlanVariant,
    ) -> Result<Self> {
        let needs_scratch = stages.iter().any(|s| s.to == Buf::Scratch);
        let scratch = if needs_scratch && shape.len() > 0 {
            // SAFETY: every stage writing the scratch covers all of it before a later stage reads it.
            Some(unsafe { gpu.stream().alloc::<I>(shape.len()) }?)
        } else {
            None
        };
        Ok(Filter2dPlan {
            shape,
            needs_aligned: stages.iter().any(|s| s.args.vector_rows != 0),
            stages,
            scratch,
            taps: taps.map(|t| BankTaps::new(gpu, t)).transpose()?,
            variant,
            _out: std::marker::PhantomData,
        })
    }
}

/// Which extremum a morphology plan computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MorphFold {
    Max,
    Min,
}
