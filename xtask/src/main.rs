//! Contributor tasks of gpuprims.
//!
//! ```text
//! cargo xtask kernels                 rebuild prebuilt/ from the kernel sources
//! cargo xtask kernels --check         fail unless prebuilt/ is exactly what the sources build to
//! cargo xtask kernels --train-dicts   also retrain the zstd dictionaries (rarely: every module changes)
//! ```
//!
//! Both build the kernels from source with the pinned nightly (`build/kernels.rs`, as build.rs
//! does) and assemble the cubins of the manifest's SASS architectures with `ptxas`
//! (`GPUPRIMS_PTXAS`, or `ptxas` on the PATH; `scripts/ptxas.sh` fetches the pinned one). A
//! regeneration writes a module's file only when its content changed, so an edit to one kernel
//! changes that kernel's files and a few manifest lines. The check decodes every committed file
//! and compares it with the fresh build, byte for byte, and the manifest line for line; it also
//! writes ptxas's resource reports to `target/xtask/ptxas-sm_XY.txt` for CI's spill check.

#[path = "../../build/kernels.rs"]
mod kernels;
#[path = "../../build/manifest.rs"]
mod manifest;
#[path = "../../build/sass.rs"]
mod sass;
#[allow(dead_code)] // the comparison is build.rs's
#[path = "../../build/sources.rs"]
mod sources;
#[path = "../../build/split.rs"]
mod split;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use manifest::{Entry, Manifest, Module};
use sha2::{Digest, Sha256};

/// zstd level of the committed modules (decoding speed does not depend on it).
const LEVEL: i32 = 19;
/// Size of each trained dictionary.
const DICT_BYTES: usize = 128 * 1024;
/// Architectures of a manifest-less first generation.
const DEFAULT_SASS: &[u32] = &[80, 90];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("kernels") => {
            let check = args.iter().any(|a| a == "--check");
            let train = args.iter().any(|a| a == "--train-dicts");
            match args[1..].iter().find(|a| *a != "--check" && *a != "--train-dicts") {
                Some(other) => Err(format!("unknown argument {other:?}")),
                None => kernels_task(check, train),
            }
        }
        _ => Err("usage: cargo xtask kernels [--check] [--train-dicts]".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One module built from source: where it goes, its manifest line and its bytes.
struct Built {
    file: String,
    kind: Kind,
    bytes: Vec<u8>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ptx,
    Sass,
}

impl Kind {
    fn dict(self) -> &'static str {
        match self {
            Kind::Ptx => manifest::PTX_DICT,
            Kind::Sass => manifest::SASS_DICT,
        }
    }
}

fn kernels_task(check: bool, train: bool) -> Result<(), String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .map_err(|e| e.to_string())?;
    let prebuilt = root.join("prebuilt");
    let work = root.join("target").join("xtask");
    let committed = fs::read_to_string(prebuilt.join(manifest::FILE))
        .ok()
        .map(|t| Manifest::parse(&t))
        .transpose()?;
    let ptx_archs: Vec<String> = match &committed {
        Some(m) => m.ptx_archs.iter().map(|a| format!("sm_{a}")).collect(),
        None => kernels::arch_list("DEFAULT_ARCHS", kernels::DEFAULT_ARCHS)?,
    };
    let sass_archs: Vec<u32> = committed
        .as_ref()
        .map_or(DEFAULT_SASS.to_vec(), |m| m.sass_archs.clone());

    let started = Instant::now();
    eprintln!("xtask: building the kernels for {} from source", ptx_archs.join(", "));
    let built = kernels::build(&root.join("kernels-gpu"), &work.join("kernels-target"), &ptx_archs)?;
    eprintln!(
        "xtask: {} kernels built in {:.1} s",
        built.len(),
        started.elapsed().as_secs_f64()
    );

    let ptxas = std::env::var("GPUPRIMS_PTXAS").unwrap_or_else(|_| "ptxas".into());
    let ptxas_version = if sass_archs.is_empty() {
        "none".to_string()
    } else {
        sass::version(&ptxas).map_err(|e| format!("{e}\n  (scripts/ptxas.sh fetches the pinned ptxas)"))?
    };
    let mut manifest = Manifest {
        toolchain: kernels::Toolchain::pinned(&root.join("kernels-gpu"))?.channel,
        ptxas: ptxas_version,
        ptx_archs: ptx_archs.iter().map(|a| kernels::arch_number(a)).collect(),
        sass_archs: sass_archs.clone(),
        sources: sources::hashes(&root)?,
        kernels: built
            .iter()
            .map(|k| Entry {
                name: k.name.clone(),
                bank: k.bank,
                ptx: Vec::new(),
                sass: Vec::new(),
            })
            .collect(),
    };
    let mut modules: Vec<Built> = Vec::new();
    for (k, entry) in built.iter().zip(&mut manifest.kernels) {
        for (arch, text) in &k.ptx {
            entry.ptx.push(module(*arch, *arch, text.as_bytes()));
            modules.push(Built {
                file: manifest::ptx_file(&k.name, *arch),
                kind: Kind::Ptx,
                bytes: text.as_bytes().to_vec(),
            });
        }
    }
    for &arch in &sass_archs {
        let started = Instant::now();
        let report = work.join(format!("ptxas-sm_{arch}.txt"));
        let cubins = sass::assemble_for(&ptxas, &built, arch, &work.join("sass-cache"), &report)?;
        eprintln!(
            "xtask: {} cubins for sm_{arch} in {:.1} s (report: {})",
            cubins.len(),
            started.elapsed().as_secs_f64(),
            report.display()
        );
        for c in cubins {
            manifest.kernels[c.kernel].sass.push(module(arch, c.from, &c.bytes));
            modules.push(Built {
                file: manifest::sass_file(&built[c.kernel].name, arch),
                kind: Kind::Sass,
                bytes: c.bytes,
            });
        }
    }

    if check {
        return check_against(&prebuilt, committed.as_ref(), &manifest, &modules);
    }
    if train {
        for kind in [Kind::Ptx, Kind::Sass] {
            let samples: Vec<&[u8]> = modules
                .iter()
                .filter(|m| m.kind == kind)
                .map(|m| &m.bytes[..])
                .collect();
            if samples.is_empty() {
                continue;
            }
            let dict = zstd::dict::from_samples(&samples, DICT_BYTES).map_err(|e| format!("training: {e}"))?;
            write(&prebuilt.join(kind.dict()), &dict)?;
        }
    }
    regenerate(&prebuilt, &manifest, &modules)
}

fn module(arch: u32, from: u32, bytes: &[u8]) -> Module {
    Module {
        arch,
        from,
        len: bytes.len(),
        sha256: sources::hex(&Sha256::digest(bytes)),
    }
}

/// The dictionary of `kind` in `dir`, if there is one.
fn dictionary(dir: &Path, kind: Kind) -> Option<Vec<u8>> {
    fs::read(dir.join(kind.dict())).ok()
}

/// The committed file `file` decoded, if it exists and decodes.
fn decoded(dir: &Path, file: &str, dict: Option<&[u8]>, len: usize) -> Option<Vec<u8>> {
    let bytes = fs::read(dir.join(file)).ok()?;
    let mut d = zstd::bulk::Decompressor::with_dictionary(dict.unwrap_or(&[])).ok()?;
    d.decompress(&bytes, len + 1).ok()
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    fs::write(path, bytes).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Writes every module whose committed file does not decode to it, removes files no module
/// names, and writes the manifest.
fn regenerate(dir: &Path, manifest: &Manifest, modules: &[Built]) -> Result<(), String> {
    let dicts = [dictionary(dir, Kind::Ptx), dictionary(dir, Kind::Sass)];
    let dict_of = |k: Kind| dicts[(k == Kind::Sass) as usize].as_deref();
    let stale: Vec<&Built> = modules
        .iter()
        .filter(|m| decoded(dir, &m.file, dict_of(m.kind), m.bytes.len()).as_deref() != Some(&m.bytes[..]))
        .collect();
    eprintln!(
        "xtask: compressing {} changed modules of {}",
        stale.len(),
        modules.len()
    );
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunks: Vec<&[&Built]> = stale.chunks(stale.len().div_ceil(threads).max(1)).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                s.spawn(|| -> Result<(), String> {
                    let mut c: [Option<zstd::bulk::Compressor>; 2] = [None, None];
                    for m in chunk.iter() {
                        let slot = &mut c[(m.kind == Kind::Sass) as usize];
                        if slot.is_none() {
                            let mut new =
                                zstd::bulk::Compressor::with_dictionary(LEVEL, dict_of(m.kind).unwrap_or(&[]))
                                    .map_err(|e| e.to_string())?;
                            new.include_checksum(true).map_err(|e| e.to_string())?;
                            *slot = Some(new);
                        }
                        let bytes = slot
                            .as_mut()
                            .expect("set above")
                            .compress(&m.bytes)
                            .map_err(|e| e.to_string())?;
                        write(&dir.join(&m.file), &bytes)?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().map_err(|_| "a compression thread panicked".to_string())?)
    })?;
    let wanted: BTreeSet<&str> = modules.iter().map(|m| m.file.as_str()).collect();
    for sub in ["ptx", "sass"] {
        for entry in fs::read_dir(dir.join(sub)).into_iter().flatten().flatten() {
            let path = entry.path();
            let rel = format!("{sub}/{}", path.file_name().unwrap_or_default().to_string_lossy());
            if !wanted.contains(rel.as_str()) {
                fs::remove_file(&path).map_err(|e| format!("removing {}: {e}", path.display()))?;
                eprintln!("xtask: removed {rel}");
            }
        }
    }
    write(&dir.join(manifest::FILE), manifest.render().as_bytes())?;
    eprintln!("xtask: prebuilt/ is up to date ({} modules)", modules.len());
    Ok(())
}

/// Fails unless `dir` holds exactly `modules` and `manifest`.
fn check_against(
    dir: &Path,
    committed: Option<&Manifest>,
    manifest: &Manifest,
    modules: &[Built],
) -> Result<(), String> {
    let mut problems = Vec::new();
    match committed {
        None => problems.push(format!("prebuilt/{} is missing", manifest::FILE)),
        Some(c) if c.render() != manifest.render() => {
            let (old, new) = (c.render(), manifest.render());
            let old: BTreeSet<&str> = old.lines().collect();
            let new: BTreeSet<&str> = new.lines().collect();
            for l in old.difference(&new).take(20) {
                problems.push(format!("manifest has:    {l}"));
            }
            for l in new.difference(&old).take(20) {
                problems.push(format!("sources give:    {l}"));
            }
        }
        Some(_) => {}
    }
    let dicts = [dictionary(dir, Kind::Ptx), dictionary(dir, Kind::Sass)];
    for m in modules {
        let dict = dicts[(m.kind == Kind::Sass) as usize].as_deref();
        if decoded(dir, &m.file, dict, m.bytes.len()).as_deref() != Some(&m.bytes[..]) {
            problems.push(format!(
                "prebuilt/{} differs from the sources' build (or is missing)",
                m.file
            ));
        }
    }
    let wanted: BTreeSet<&str> = modules.iter().map(|m| m.file.as_str()).collect();
    for sub in ["ptx", "sass"] {
        for entry in fs::read_dir(dir.join(sub)).into_iter().flatten().flatten() {
            let rel = format!("{sub}/{}", entry.file_name().to_string_lossy());
            if !wanted.contains(rel.as_str()) {
                problems.push(format!("prebuilt/{rel} belongs to no kernel"));
            }
        }
    }
    if problems.is_empty() {
        eprintln!(
            "xtask: prebuilt/ is exactly what the sources build to ({} modules)",
            modules.len()
        );
        return Ok(());
    }
    Err(format!(
        "prebuilt/ is not what the kernel sources build to:\n  {}\nRegenerate it with `cargo xtask kernels` and commit prebuilt/.",
        problems.join("\n  ")
    ))
}
