//! The embedded kernels: one module per kernel entry, with PTX for each architecture build that
//! differs and, when the build asked for it, SASS (build.rs writes the table this file includes).
//!
//! A device of compute capability `cc` loads, for each kernel, the newest PTX whose architecture
//! is at most `cc` ([`ModuleSource::ptx_for`]) — so one binary runs the sm_90 specializations on
//! an H100 and the portable sm_70 code on Volta to Ada — and the cubin assembled from that very
//! PTX when one runs on the device ([`ModuleSource::sass_for`]: its SHA-256 is checked, so a
//! cubin of other PTX is never loaded). Nothing is loaded here: see `host/loader.rs`.

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

pub use crate::family::launched_kernel_names;

/// One kernel's embedded module: its PTX per architecture (oldest first, each a different
/// program from the one before) and its cubins.
pub struct ModuleSource {
    name: &'static str,
    bank: bool,
    ptx: &'static [PtxText],
    sass: &'static [SassImage],
}

/// Where one architecture's module text lies in the PTX blob.
struct PtxText {
    arch: u32,
    at: usize,
    len: usize,
}

/// One cubin: its architecture, the SHA-256 of the PTX it was assembled from, its bytes.
struct SassImage {
    arch: u32,
    ptx_sha256: [u8; 32],
    at: usize,
    len: usize,
}

include!(concat!(env!("OUT_DIR"), "/kernel_table.rs"));

/// A kernel of the embedded set: an index into it, resolved from the kernel's name once (by the
/// families when a `Gpu` first uses them) so launches never look names up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelId(u16);

impl KernelId {
    /// The kernel's source.
    pub fn source(self) -> &'static ModuleSource {
        &MODULES[self.0 as usize]
    }

    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// The kernel named `name`, if the build embedded it.
pub fn id(name: &str) -> Option<KernelId> {
    MODULES
        .binary_search_by(|m| m.name.cmp(name))
        .ok()
        .map(|i| KernelId(i as u16))
}

/// [`id`] for a name the host launches: a missing one is a build fault, reported as
/// [`Error::KernelLoad`].
fn required(name: &'static str) -> Result<KernelId> {
    id(name).ok_or(Error::KernelLoad {
        kernel: name,
        reason: "not in the embedded kernel set (the build and the host disagree)".into(),
    })
}

/// Resolves a family's kernel names to [`KernelId`]s, or lists them. A family's
/// [`Family::load`](crate::family::Family::load) runs through one: resolving when a `Gpu` first
/// uses the family, listing for the PTX test ([`crate::family::launched_kernel_names`]), so the
/// list of what a family may launch is the table it loads and cannot drift from it.
pub(crate) struct Resolver {
    /// `Some` while listing: every name asked for, in order.
    listed: Option<Vec<&'static str>>,
}

impl Resolver {
    /// Resolves names (a missing one is [`Error::KernelLoad`]).
    pub(crate) fn resolving() -> Resolver {
        Resolver { listed: None }
    }

    /// Lists names (a missing one resolves to a placeholder; the PTX test reports it).
    pub(crate) fn listing() -> Resolver {
        Resolver {
            listed: Some(Vec::new()),
        }
    }

    /// The names listed so far.
    pub(crate) fn into_names(self) -> Vec<&'static str> {
        self.listed.unwrap_or_default()
    }

    /// The kernel `name`.
    pub(crate) fn one(&mut self, name: &'static str) -> Result<KernelId> {
        match &mut self.listed {
            Some(names) => {
                names.push(name);
                Ok(id(name).unwrap_or(KernelId(0)))
            }
            None => required(name),
        }
    }

    /// [`Resolver::one`] for each of `N` names.
    pub(crate) fn all<const N: usize>(&mut self, names: [&'static str; N]) -> Result<[KernelId; N]> {
        let mut ids = [KernelId(0); N];
        for (slot, name) in ids.iter_mut().zip(names) {
            *slot = self.one(name)?;
        }
        Ok(ids)
    }

    /// [`Resolver::one`] for each of a list of names.
    pub(crate) fn list(&mut self, names: &[&'static str]) -> Result<Vec<KernelId>> {
        names.iter().map(|&n| self.one(n)).collect()
    }

    /// [`Resolver::all`] for each instance of a family's table: one row of `N` kernels per
    /// instance.
    pub(crate) fn table<I: Copy, const N: usize>(
        &mut self,
        instances: &[I],
        names: impl Fn(I) -> [&'static str; N],
    ) -> Result<Vec<[KernelId; N]>> {
        instances.iter().map(|&i| self.all(names(i))).collect()
    }
}

/// Every embedded kernel, by name.
pub fn all() -> impl ExactSizeIterator<Item = &'static ModuleSource> {
    MODULES.iter()
}

/// How many kernels are embedded.
pub fn count() -> usize {
    MODULES.len()
}

/// The architectures of the embedded PTX builds, oldest first (`GPUPRIMS_CUDA_ARCH` at build time,
/// default sm_70 and sm_90), as `XY` of `sm_XY`.
pub fn ptx_archs() -> &'static [u32] {
    PTX_ARCHS
}

/// The architectures the build assembled SASS for (`GPUPRIMS_SASS_ARCH`; empty by default).
pub fn sass_archs() -> &'static [u32] {
    SASS_ARCHS
}

impl ModuleSource {
    /// The kernel's symbol.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Whether the module declares the constant-memory bank (its kernel reads it).
    pub fn has_bank(&self) -> bool {
        self.bank
    }

    /// The architectures this kernel has its own PTX for (oldest first).
    pub fn ptx_archs(&self) -> impl Iterator<Item = u32> + '_ {
        self.ptx.iter().map(|p| p.arch)
    }

    /// The PTX built for exactly `arch`, if this kernel has one of its own.
    pub fn ptx_of(&self, arch: u32) -> Option<&'static str> {
        self.ptx.iter().find(|p| p.arch == arch).map(PtxText::text)
    }

    /// The newest PTX a device of architecture `arch` (`XY`) runs, with its architecture: PTX of
    /// `sm_XY` runs on `XY` and every later architecture.
    pub fn ptx_for(&self, arch: u32) -> Option<(u32, &'static str)> {
        self.ptx
            .iter()
            .rev()
            .find(|p| p.arch <= arch)
            .map(|p| (p.arch, p.text()))
    }

    /// The cubin assembled from exactly `ptx` (SHA-256 compared) that runs on a device of compute
    /// capability `cc`, with its architecture, if the build made one.
    pub fn sass_for(&self, ptx: &str, cc: (i32, i32)) -> Option<(u32, &'static [u8])> {
        let mut candidates = self.sass.iter().filter(|s| runs_sass(s.arch, cc)).peekable();
        candidates.peek()?;
        let digest: [u8; 32] = Sha256::digest(ptx.as_bytes()).into();
        candidates
            .filter(|s| s.ptx_sha256 == digest)
            .max_by_key(|s| s.arch)
            .map(|s| (s.arch, &SASS_BYTES[s.at..s.at + s.len]))
    }

    /// Every cubin: (architecture, SHA-256 of its PTX, bytes).
    pub fn sass_images(&self) -> impl Iterator<Item = (u32, [u8; 32], &'static [u8])> + '_ {
        self.sass
            .iter()
            .map(|s| (s.arch, s.ptx_sha256, &SASS_BYTES[s.at..s.at + s.len]))
    }
}

impl PtxText {
    fn text(&self) -> &'static str {
        &PTX_TEXT[self.at..self.at + self.len]
    }
}

/// The `XY` of an `sm_XY` architecture name (an `a`/`f` suffix allowed), `None` for anything else.
pub fn arch_number(arch: &str) -> Option<u32> {
    let digits: String = arch
        .strip_prefix("sm_")?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// A compute capability as `XY`.
pub(crate) fn cc_number(cc: (i32, i32)) -> u32 {
    (cc.0.max(0) * 10 + cc.1.max(0)) as u32
}

/// Whether PTX compiled for `arch` (`sm_XY`) can be JIT-compiled for a device of compute
/// capability `cc`: PTX runs on its own architecture and every later one.
pub fn ptx_runs_on(arch: &str, cc: (i32, i32)) -> bool {
    arch_number(arch).is_some_and(|v| cc_number(cc) >= v)
}

/// Whether SASS built for `arch` (`sm_XY`, an `a`/`f` suffix allowed) runs on a device of compute
/// capability `cc`: SASS runs on its own major version at an equal or higher minor one.
pub fn arch_runs_on(arch: &str, cc: (i32, i32)) -> bool {
    arch_number(arch).is_some_and(|v| runs_sass(v, cc))
}

fn runs_sass(arch: u32, cc: (i32, i32)) -> bool {
    cc.0 == (arch / 10) as i32 && cc.1 >= (arch % 10) as i32
}

/// Names of the `.entry` functions in a PTX text.
pub fn ptx_entries(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| l.trim_start().strip_prefix(".visible .entry "))
        .map(|rest| rest.split(['(', ' ']).next().unwrap_or(""))
        .collect()
}
