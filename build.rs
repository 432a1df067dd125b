//! Embeds the GPU kernels: one module per kernel entry, PTX for each architecture build that
//! differs and cubins (SASS) for the architectures most users run, in the table host/kernels.rs
//! reads.
//!
//! **Prebuilt** (the default wherever it applies): `prebuilt/` holds every module compressed
//! (one zstd frame per file) with `prebuilt/MANIFEST`, which records the SHA-256 of every kernel
//! source it was built from (`build/sources.rs`). While the sources present hash as recorded,
//! this script only copies those files into the table: no nightly, no rustup, no CUDA toolkit and
//! no network, so a dependent builds on stable Rust. The host decompresses a module when it is
//! first loaded. The features `sass-sm80` and `sass-sm90` (default on) embed the prebuilt cubins
//! of those architectures; without them those devices JIT-compile the PTX.
//!
//! **From source** when the kernel sources differ from the manifest (a contributor edited a
//! kernel), when `GPUPRIMS_CUDA_ARCH` asks for other architectures than prebuilt/ has, or when
//! `GPUPRIMS_KERNELS=source`: `build/kernels.rs` compiles kernels-gpu/ with its pinned nightly
//! (installed once if missing), and the modules are embedded uncompressed; `GPUPRIMS_SASS_ARCH`
//! (e.g. `sm_90`) also assembles cubins with `ptxas` (`GPUPRIMS_PTXAS`, default `ptxas` on the
//! PATH). Without the nightly, the build fails naming the files that differ and the command that
//! regenerates prebuilt/ (`cargo xtask kernels`, which CI checks is a no-op).
//!
//! `GPUPRIMS_KERNELS=prebuilt` refuses a source build. `GPUPRIMS_CORRUPT_KERNEL=ptx:NAME,sass:NAME`
//! truncates those embedded modules, for the tests of the loader's fallbacks.
//!
//! Outputs in OUT_DIR: `kernels.bin` (every module and dictionary), `kernel_table.rs` (the index
//! the host `include!`s), and `ptxas-<arch>.txt` (ptxas's resource report, source builds with
//! SASS only).

#[path = "build/kernels.rs"]
mod kernels;
#[allow(dead_code)] // what writes it (xtask) is not needed here
#[path = "build/manifest.rs"]
mod manifest;
#[path = "build/sass.rs"]
mod sass;
#[path = "build/sources.rs"]
mod sources;
#[path = "build/split.rs"]
mod split;

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use manifest::Manifest;

/// The command that regenerates prebuilt/ (see xtask/).
const REGENERATE: &str = "cargo xtask kernels";

/// Where one module's bytes lie in the blob (`Stored` in host/kernels.rs).
#[derive(Clone, Copy)]
struct Stored {
    at: usize,
    len: usize,
    raw_len: usize,
    zstd: bool,
}

/// One kernel as embedded: its PTX modules (oldest first) and its cubins, each cubin with the
/// index of the PTX module it was assembled from.
struct Embedded {
    name: String,
    bank: bool,
    ptx: Vec<(u32, Stored)>,
    sass: Vec<(u32, usize, Stored)>,
}

/// What the build embeds.
struct Table {
    /// The `Origin` variant (host/kernels.rs): `Prebuilt` or `Source`.
    origin: &'static str,
    ptx_archs: Vec<u32>,
    sass_archs: Vec<u32>,
    blob: Vec<u8>,
    /// The PTX and SASS dictionaries (prebuilt only).
    dicts: [Option<Stored>; 2],
    kernels: Vec<Embedded>,
}

impl Table {
    fn new(origin: &'static str) -> Table {
        Table {
            origin,
            ptx_archs: Vec::new(),
            sass_archs: Vec::new(),
            blob: Vec::new(),
            dicts: [None, None],
            kernels: Vec::new(),
        }
    }

    fn push(&mut self, bytes: &[u8], raw_len: usize, zstd: bool) -> Stored {
        let at = self.blob.len();
        self.blob.extend_from_slice(bytes);
        Stored {
            at,
            len: bytes.len(),
            raw_len,
            zstd,
        }
    }
}

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    for path in ["prebuilt", "build", "abi", "kernels-gpu/src", "kernels-gpu/Cargo.toml"] {
        println!("cargo:rerun-if-changed={path}");
    }
    println!("cargo:rerun-if-changed=kernels-gpu/Cargo.lock");
    println!("cargo:rerun-if-changed=kernels-gpu/rust-toolchain.toml");
    for var in [
        "GPUPRIMS_KERNELS",
        "GPUPRIMS_CUDA_ARCH",
        "GPUPRIMS_SASS_ARCH",
        "GPUPRIMS_PTXAS",
        "GPUPRIMS_CORRUPT_KERNEL",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let mode = env::var("GPUPRIMS_KERNELS").unwrap_or_default();
    if !["", "auto", "prebuilt", "source"].contains(&mode.as_str()) {
        fail(&format!(
            "GPUPRIMS_KERNELS={mode:?}: use auto (default), prebuilt or source"
        ));
    }
    // The prebuilt kernels, or why they cannot serve this build.
    let prebuilt: Result<Manifest, Vec<String>> = read_manifest(&root)
        .map_err(|e| vec![e])
        .and_then(|m| stale_reasons(&root, &m).map_or(Ok(m), Err));
    let mut table = match (mode.as_str(), prebuilt) {
        ("source", prebuilt) => from_source(&root, &out_dir, prebuilt.err().as_deref()),
        ("prebuilt", Err(reasons)) => fail(&format!(
            "GPUPRIMS_KERNELS=prebuilt, but prebuilt/ does not apply:\n  {}\n  Regenerate it: {REGENERATE}",
            reasons.join("\n  ")
        )),
        (_, Ok(m)) => from_prebuilt(&root, &m),
        (_, Err(reasons)) => {
            println!(
                "cargo:warning=gpuprims: building the kernels from source ({}); `{REGENERATE}` refreshes prebuilt/",
                reasons.join("; ")
            );
            from_source(&root, &out_dir, Some(&reasons))
        }
    };
    corrupt(&mut table);
    write_table(&out_dir, &table);
}

fn read_manifest(root: &Path) -> Result<Manifest, String> {
    let path = root.join("prebuilt").join(manifest::FILE);
    let text = fs::read_to_string(&path).map_err(|e| format!("no prebuilt kernels ({}: {e})", path.display()))?;
    Manifest::parse(&text)
}

/// Why the prebuilt kernels cannot serve this build, if they cannot: source files that differ
/// from the manifest's, or architectures asked for that it lacks.
fn stale_reasons(root: &Path, m: &Manifest) -> Option<Vec<String>> {
    let present = sources::hashes(root).unwrap_or_else(|e| fail(&e));
    let mut reasons = sources::differences(root, &m.sources, &present);
    if let Ok(v) = env::var("GPUPRIMS_CUDA_ARCH") {
        let asked: Vec<u32> = archs("GPUPRIMS_CUDA_ARCH", &v)
            .iter()
            .map(|a| kernels::arch_number(a))
            .collect();
        if asked != m.ptx_archs {
            reasons.push(format!("GPUPRIMS_CUDA_ARCH={v} (prebuilt/ has {:?})", m.ptx_archs));
        }
    }
    if let Ok(v) = env::var("GPUPRIMS_SASS_ARCH") {
        reasons.push(format!("GPUPRIMS_SASS_ARCH={v} asks for cubins assembled here"));
    }
    (!reasons.is_empty()).then_some(reasons)
}

fn archs(var: &str, value: &str) -> Vec<String> {
    kernels::arch_list(var, value).unwrap_or_else(|e| fail(&e))
}

/// The prebuilt modules, compressed as committed; cubins for the architectures whose
/// `sass-smXY` feature is on.
fn from_prebuilt(root: &Path, m: &Manifest) -> Table {
    let dir = root.join("prebuilt");
    let read = |rel: &str| fs::read(dir.join(rel)).unwrap_or_else(|e| fail(&format!("reading prebuilt/{rel}: {e}")));
    let mut t = Table::new("Prebuilt");
    t.ptx_archs = m.ptx_archs.clone();
    let sass_archs: Vec<u32> = m
        .sass_archs
        .iter()
        .copied()
        .filter(|a| env::var_os(format!("CARGO_FEATURE_SASS_SM{a}")).is_some())
        .collect();
    t.sass_archs = sass_archs.clone();
    for (slot, name) in [manifest::PTX_DICT, manifest::SASS_DICT].into_iter().enumerate() {
        if dir.join(name).exists() {
            let bytes = read(name);
            t.dicts[slot] = Some(t.push(&bytes, bytes.len(), false));
        }
    }
    for k in &m.kernels {
        let ptx: Vec<(u32, Stored)> = k
            .ptx
            .iter()
            .map(|p| (p.arch, t.push(&read(&manifest::ptx_file(&k.name, p.arch)), p.len, true)))
            .collect();
        let mut sass = Vec::new();
        for c in k.sass.iter().filter(|c| sass_archs.contains(&c.arch)) {
            let from = ptx.iter().position(|&(a, _)| a == c.from).unwrap_or_else(|| {
                fail(&format!(
                    "prebuilt/{}: {}'s sm_{} cubin names no PTX of sm_{}",
                    manifest::FILE,
                    k.name,
                    c.arch,
                    c.from
                ))
            });
            sass.push((
                c.arch,
                from,
                t.push(&read(&manifest::sass_file(&k.name, c.arch)), c.len, true),
            ));
        }
        t.kernels.push(Embedded {
            name: k.name.clone(),
            bank: k.bank,
            ptx,
            sass,
        });
    }
    t
}

/// The kernels compiled here with the pinned nightly, uncompressed; cubins for
/// `GPUPRIMS_SASS_ARCH` by the local `ptxas`. `stale` says why prebuilt/ did not serve, for the
/// failure message.
fn from_source(root: &Path, out_dir: &Path, stale: Option<&[String]>) -> Table {
    let ptx_archs = archs(
        "GPUPRIMS_CUDA_ARCH",
        &env::var("GPUPRIMS_CUDA_ARCH").unwrap_or_else(|_| kernels::DEFAULT_ARCHS.to_string()),
    );
    if ptx_archs.is_empty() {
        fail("GPUPRIMS_CUDA_ARCH names no architecture");
    }
    let sass_archs = archs(
        "GPUPRIMS_SASS_ARCH",
        &env::var("GPUPRIMS_SASS_ARCH").unwrap_or_default(),
    );
    let built = kernels::build(&root.join("kernels-gpu"), &out_dir.join("kernels-target"), &ptx_archs)
        .unwrap_or_else(|e| {
            let why = stale.map_or(String::new(), |r| {
                format!("prebuilt/ does not apply:\n    {}\n  so ", r.join("\n    "))
            });
            fail(&format!(
                "{why}the kernels must be built from source, which failed: {e}\n  \
                 A source build needs rustup, the nightly pinned in kernels-gpu/rust-toolchain.toml and the \
                 network to install it once.\n  After a kernel edit, regenerate the prebuilt kernels with `{REGENERATE}` \
                 (or undo the edit: git checkout -- abi kernels-gpu build)."
            ))
        });
    let mut t = Table::new("Source");
    t.ptx_archs = ptx_archs.iter().map(|a| kernels::arch_number(a)).collect();
    t.sass_archs = sass_archs.iter().map(|a| kernels::arch_number(a)).collect();
    let mut cubins: Vec<Vec<(u32, usize, Vec<u8>)>> = (0..built.len()).map(|_| Vec::new()).collect();
    let ptxas = env::var("GPUPRIMS_PTXAS").unwrap_or_else(|_| "ptxas".to_string());
    for &arch in &t.sass_archs {
        let report = out_dir.join(format!("ptxas-sm_{arch}.txt"));
        let assembled =
            sass::assemble_for(&ptxas, &built, arch, &out_dir.join("sass-cache"), &report).unwrap_or_else(|e| fail(&e));
        for c in assembled {
            let from = built[c.kernel]
                .ptx
                .iter()
                .position(|&(a, _)| a == c.from)
                .expect("a PTX of this kernel");
            cubins[c.kernel].push((arch, from, c.bytes));
        }
    }
    for (k, cubins) in built.iter().zip(cubins) {
        let ptx = k
            .ptx
            .iter()
            .map(|(a, text)| (*a, t.push(text.as_bytes(), text.len(), false)))
            .collect();
        let sass = cubins
            .into_iter()
            .map(|(arch, from, bytes)| (arch, from, t.push(&bytes, bytes.len(), false)))
            .collect();
        t.kernels.push(Embedded {
            name: k.name.clone(),
            bank: k.bank,
            ptx,
            sass,
        });
    }
    t
}

/// `GPUPRIMS_CORRUPT_KERNEL=ptx:NAME,sass:NAME`: each named module (every architecture's) keeps
/// only the first half of its stored bytes.
fn corrupt(t: &mut Table) {
    let Ok(spec) = env::var("GPUPRIMS_CORRUPT_KERNEL") else {
        return;
    };
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (kind, name) = item.split_once(':').unwrap_or(("", item));
        let Some(k) = t.kernels.iter_mut().find(|k| k.name == name) else {
            fail(&format!("GPUPRIMS_CORRUPT_KERNEL: no kernel {name:?}"));
        };
        let stored: Vec<&mut Stored> = match kind {
            "ptx" => k.ptx.iter_mut().map(|(_, s)| s).collect(),
            "sass" => k.sass.iter_mut().map(|(_, _, s)| s).collect(),
            _ => fail(&format!(
                "GPUPRIMS_CORRUPT_KERNEL: {item:?} is not ptx:NAME or sass:NAME"
            )),
        };
        if stored.is_empty() {
            fail(&format!(
                "GPUPRIMS_CORRUPT_KERNEL: {name} has no {kind} module in this build"
            ));
        }
        for s in stored {
            s.len /= 2;
        }
    }
}

fn write_table(out_dir: &Path, t: &Table) {
    let stored = |s: &Stored| {
        format!(
            "Stored {{ at: {}, len: {}, raw_len: {}, zstd: {} }}",
            s.at, s.len, s.raw_len, s.zstd
        )
    };
    let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let mut code =
        String::from("// Generated by build.rs: the embedded kernel modules (host/kernels.rs reads them).\n");
    writeln!(code, "const ORIGIN: Origin = Origin::{};", t.origin).unwrap();
    writeln!(code, "const PTX_ARCHS: &[u32] = &[{}];", list(&t.ptx_archs)).unwrap();
    writeln!(code, "const SASS_ARCHS: &[u32] = &[{}];", list(&t.sass_archs)).unwrap();
    writeln!(
        code,
        "static BLOB: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/kernels.bin\"));"
    )
    .unwrap();
    let dict = |d: &Option<Stored>| {
        d.as_ref()
            .map_or("None".to_string(), |s| format!("Some({})", stored(s)))
    };
    writeln!(
        code,
        "const DICTS: [Option<Stored>; 2] = [{}, {}];",
        dict(&t.dicts[0]),
        dict(&t.dicts[1])
    )
    .unwrap();
    writeln!(code, "static MODULES: [ModuleSource; {}] = [", t.kernels.len()).unwrap();
    for k in &t.kernels {
        let ptx: String = k
            .ptx
            .iter()
            .map(|(arch, s)| format!("PtxModule {{ arch: {arch}, stored: {} }}, ", stored(s)))
            .collect();
        let sass: String = k
            .sass
            .iter()
            .map(|(arch, from, s)| format!("SassModule {{ arch: {arch}, ptx: {from}, stored: {} }}, ", stored(s)))
            .collect();
        writeln!(
            code,
            "    ModuleSource {{ name: {:?}, bank: {}, ptx: &[{ptx}], sass: &[{sass}] }},",
            k.name, k.bank
        )
        .unwrap();
    }
    code.push_str("];\n");
    for (file, bytes) in [("kernels.bin", &t.blob[..]), ("kernel_table.rs", code.as_bytes())] {
        let path = out_dir.join(file);
        fs::write(&path, bytes).unwrap_or_else(|e| fail(&format!("writing {}: {e}", path.display())));
    }
}

fn fail(msg: &str) -> ! {
    eprintln!();
    eprintln!("error: gpuprims could not embed its GPU kernels: {msg}");
    eprintln!();
    std::process::exit(1);
}
