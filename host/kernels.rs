//! The embedded kernels: one module per kernel entry, with PTX for each architecture build that
//! differs and cubins (SASS) for the architectures the build embedded (build.rs writes the table
//! this file includes; `prebuilt/` holds them compressed).
//!
//! A device of compute capability `cc` loads, for each kernel, the newest PTX whose architecture
//! is at most `cc` ([`ModuleSource::ptx_for`]) — so one binary runs the sm_90 specializations on
//! an H100 and the portable sm_70 code on Volta to Ada — and the cubin assembled from that very
//! PTX when one runs on the device ([`ModuleSource::sass_for`]). Modules are stored as zstd
//! frames (prebuilt builds; a source build stores them as they are) and decoded by a pure-Rust
//! decoder when first loaded ([`EmbeddedModule::decode`]): the binary carries a few MB instead of
//! tens, and a module's decode takes well under a millisecond. A stored module that does not
//! decode to its recorded length and checksum is an [`Error::KernelLoad`] naming the kernel.
//! Nothing is loaded here: see `host/loader.rs`.

use std::sync::{Mutex, OnceLock};

use ruzstd::decoding::{Dictionary, FrameDecoder};

use crate::error::{Error, Result};

pub use crate::family::launched_kernel_names;

/// One kernel's embedded modules: its PTX per architecture (oldest first, each a different
/// program from the one before) and its cubins.
pub struct ModuleSource {
    name: &'static str,
    bank: bool,
    ptx: &'static [PtxModule],
    sass: &'static [SassModule],
}

/// Where a module's bytes lie in the blob, how long it is decoded, and whether it is a zstd
/// frame (else stored as is).
#[derive(Clone, Copy)]
struct Stored {
    at: usize,
    len: usize,
    raw_len: usize,
    zstd: bool,
}

/// One architecture's PTX.
struct PtxModule {
    arch: u32,
    stored: Stored,
}

/// One cubin: its architecture and the index (in the kernel's `ptx`) of the PTX it was
/// assembled from.
struct SassModule {
    arch: u32,
    ptx: usize,
    stored: Stored,
}

/// How the build got its kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// From `prebuilt/`, as committed (the sources matched its manifest).
    Prebuilt,
    /// Compiled from `kernels-gpu/` by this build.
    Source,
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

/// How this build got its kernels.
pub fn origin() -> Origin {
    ORIGIN
}

/// The architectures of the embedded PTX builds, oldest first (`GPUPRIMS_CUDA_ARCH` at build time,
/// default sm_70 and sm_90), as `XY` of `sm_XY`.
pub fn ptx_archs() -> &'static [u32] {
    PTX_ARCHS
}

/// The architectures the build embedded cubins for (prebuilt: the `sass-smXY` features, default
/// sm_80 and sm_90; from source: `GPUPRIMS_SASS_ARCH`).
pub fn sass_archs() -> &'static [u32] {
    SASS_ARCHS
}

/// The bytes the binary carries for every embedded module and dictionary.
pub fn embedded_bytes() -> usize {
    BLOB.len()
}

/// Which kind of code a module holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleKind {
    /// PTX text, JIT-compiled by the driver.
    Ptx,
    /// A cubin: SASS for one architecture, loaded as it is.
    Sass,
}

/// One embedded module of one kernel, as stored (decoded by [`EmbeddedModule::decode`]).
#[derive(Clone, Copy)]
pub struct EmbeddedModule {
    kernel: &'static str,
    kind: ModuleKind,
    arch: u32,
    stored: Stored,
}

impl EmbeddedModule {
    /// The kernel's symbol.
    pub fn kernel(&self) -> &'static str {
        self.kernel
    }

    pub fn kind(&self) -> ModuleKind {
        self.kind
    }

    /// The architecture (`XY` of `sm_XY`) it was built for.
    pub fn arch(&self) -> u32 {
        self.arch
    }

    /// Bytes in the binary.
    pub fn stored_len(&self) -> usize {
        self.stored.len
    }

    /// Bytes once decoded.
    pub fn decoded_len(&self) -> usize {
        self.stored.raw_len
    }

    /// The module's bytes: the zstd frame decoded (with its kind's dictionary), checked against
    /// the recorded length and the frame's checksum. [`Error::KernelLoad`] naming the kernel if
    /// the stored bytes are damaged.
    pub fn decode(&self) -> Result<Vec<u8>> {
        let failed = |reason: String| Error::KernelLoad {
            kernel: self.kernel,
            reason: format!(
                "its embedded {:?} module for sm_{} is damaged: {reason}",
                self.kind, self.arch
            ),
        };
        let s = self.stored;
        let bytes = &BLOB[s.at..s.at + s.len];
        if !s.zstd {
            return match bytes.len() == s.raw_len {
                true => Ok(bytes.to_vec()),
                false => Err(failed(format!("{} bytes stored, {} recorded", bytes.len(), s.raw_len))),
            };
        }
        let mut out = Vec::with_capacity(s.raw_len);
        let mut decoder = decoder(self.kind)
            .map_err(failed)?
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        decoder
            .decode_all_to_vec(bytes, &mut out)
            .map_err(|e| failed(format!("zstd: {e}")))?;
        if out.len() != s.raw_len {
            return Err(failed(format!("decoded {} bytes, {} recorded", out.len(), s.raw_len)));
        }
        if let (Some(read), Some(computed)) = (decoder.get_checksum_from_data(), decoder.get_calculated_checksum())
            && read != computed
        {
            return Err(failed(format!(
                "checksum {computed:#010x}, the frame says {read:#010x}"
            )));
        }
        Ok(out)
    }

    /// [`EmbeddedModule::decode`] as text (PTX).
    pub fn text(&self) -> Result<String> {
        String::from_utf8(self.decode()?).map_err(|e| Error::KernelLoad {
            kernel: self.kernel,
            reason: format!("its sm_{} PTX is not UTF-8: {e}", self.arch),
        })
    }
}

/// The zstd decoder for modules of `kind`, with that kind's dictionary added (parsed once).
/// Decodes take it in turn; each takes well under a millisecond.
fn decoder(kind: ModuleKind) -> std::result::Result<&'static Mutex<FrameDecoder>, String> {
    static DECODERS: [OnceLock<std::result::Result<Mutex<FrameDecoder>, String>>; 2] =
        [OnceLock::new(), OnceLock::new()];
    let slot = kind as usize;
    DECODERS[slot]
        .get_or_init(|| {
            let mut decoder = FrameDecoder::new();
            if let Some(d) = DICTS[slot] {
                let dict = Dictionary::decode_dict(&BLOB[d.at..d.at + d.len])
                    .map_err(|e| format!("the {kind:?} dictionary: {e}"))?;
                decoder
                    .add_dict(dict)
                    .map_err(|e| format!("the {kind:?} dictionary: {e}"))?;
            }
            Ok(Mutex::new(decoder))
        })
        .as_ref()
        .map_err(Clone::clone)
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

    fn module(&self, kind: ModuleKind, arch: u32, stored: Stored) -> EmbeddedModule {
        EmbeddedModule {
            kernel: self.name,
            kind,
            arch,
            stored,
        }
    }

    /// Every PTX module, oldest architecture first.
    pub fn ptx_modules(&self) -> impl Iterator<Item = EmbeddedModule> + '_ {
        self.ptx.iter().map(|p| self.module(ModuleKind::Ptx, p.arch, p.stored))
    }

    /// The PTX built for exactly `arch`, if this kernel has one of its own.
    pub fn ptx_of(&self, arch: u32) -> Option<EmbeddedModule> {
        self.ptx_modules().find(|p| p.arch == arch)
    }

    /// The newest PTX a device of architecture `arch` (`XY`) runs: PTX of `sm_XY` runs on `XY`
    /// and every later architecture.
    pub fn ptx_for(&self, arch: u32) -> Option<EmbeddedModule> {
        self.ptx_modules().filter(|p| p.arch <= arch).last()
    }

    /// Every cubin, with the architecture of the PTX it was assembled from.
    pub fn sass_modules(&self) -> impl Iterator<Item = (EmbeddedModule, u32)> + '_ {
        self.sass
            .iter()
            .map(|c| (self.module(ModuleKind::Sass, c.arch, c.stored), self.ptx[c.ptx].arch))
    }

    /// The cubin assembled from this kernel's PTX of architecture `ptx_arch` that runs on a
    /// device of compute capability `cc` (the newest such), if the build embedded one.
    pub fn sass_for(&self, ptx_arch: u32, cc: (i32, i32)) -> Option<EmbeddedModule> {
        self.sass_modules()
            .filter(|(c, from)| *from == ptx_arch && runs_sass(c.arch, cc))
            .map(|(c, _)| c)
            .max_by_key(|c| c.arch)
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
