//! Compiles `kernels-gpu/` (Rust, no_std) to PTX with the pinned nightly, once per target
//! architecture, splits each PTX into one module per kernel and embeds them all.
//!
//! A nested cargo runs in `kernels-gpu/` per architecture, with its own target dir under OUT_DIR
//! (sharing ours deadlocks on the lock) and an environment cleaned of the outer build's toolchain
//! and build-script variables, so `kernels-gpu/rust-toolchain.toml` decides the toolchain;
//! `RUSTUP_AUTO_INSTALL=1` lets rustup fetch it on a fresh machine. There is no nvptx linker, so
//! the crate is built as an rlib and the PTX is rustc's `--emit=asm` of the single codegen unit.
//! The architectures' builds run at once (each is one single-threaded rustc).
//!
//! `GPUPRIMS_CUDA_ARCH` (default `sm_70,sm_90`) lists the `-C target-cpu`s. Kernels specialize on
//! them through `cfg(target_feature = "sm_90")` (Hopper's packed 16-bit max/min, PTX ISA 8.0,
//! which this script then asks for). `build/split.rs` cuts each PTX into one module per `.entry`;
//! a later architecture's module is embedded only where it differs from the earlier one's as a
//! program (`split::normal_form`), so the sm_90 build adds the few kernels that specialize. At
//! run time each device loads, per kernel, the newest module its architecture runs
//! (host/kernels.rs).
//!
//! `GPUPRIMS_SASS_ARCH` (e.g. `sm_90`, unset by default) also assembles every module into SASS
//! for those architectures with `ptxas` (`GPUPRIMS_PTXAS`, default `ptxas` on the PATH), through
//! a cache keyed by the module's text (`build/sass.rs`), and embeds the cubins, each with the
//! SHA-256 of the PTX it came from: the host loads a cubin only for that very PTX, else JITs.
//!
//! Outputs in OUT_DIR: `kernels.ptx` (every module's text, concatenated), `kernels.sass` (every
//! cubin), `kernel_table.rs` (the index the host `include!`s), and `ptxas-<arch>.txt` (ptxas's
//! resource report per SASS architecture, for CI).

#[path = "build/sass.rs"]
mod sass;
#[path = "build/split.rs"]
mod split;

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

const DEFAULT_ARCHS: &str = "sm_70,sm_90";
/// The constant-memory bank's symbol (`constant_bank_symbol!` in kernels-gpu/src/abi).
const BANK_SYMBOL: &str = "gpuprims_constant_bank";

/// One embedded cubin (`SassImage` in host/kernels.rs).
#[derive(Clone)]
struct Cubin {
    arch: u32,
    ptx_sha256: [u8; 32],
    at: usize,
    len: usize,
}

/// One kernel and its embedded modules, oldest architecture first.
struct Kernel {
    name: String,
    bank: bool,
    /// (architecture number, module text), each a different program from the one before.
    ptx: Vec<(u32, String)>,
}

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let kernels_dir = root.join("kernels-gpu");
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));

    println!("cargo:rerun-if-changed=kernels-gpu/src");
    println!("cargo:rerun-if-changed=kernels-gpu/Cargo.toml");
    println!("cargo:rerun-if-changed=kernels-gpu/rust-toolchain.toml");
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-env-changed=GPUPRIMS_CUDA_ARCH");
    println!("cargo:rerun-if-env-changed=GPUPRIMS_SASS_ARCH");
    println!("cargo:rerun-if-env-changed=GPUPRIMS_PTXAS");

    let archs = arch_list("GPUPRIMS_CUDA_ARCH", DEFAULT_ARCHS);
    if archs.is_empty() {
        fail("GPUPRIMS_CUDA_ARCH names no architecture");
    }
    let sass_archs = arch_list("GPUPRIMS_SASS_ARCH", "");

    let builds: Vec<(String, Child)> = archs
        .iter()
        .map(|arch| (arch.clone(), spawn_kernel_build(&kernels_dir, &out_dir, arch)))
        .collect();
    let mut table: Vec<Kernel> = Vec::new();
    for (arch, mut child) in builds {
        let status = child
            .wait()
            .unwrap_or_else(|e| fail(&format!("waiting for cargo (kernels-gpu, {arch}): {e}")));
        if !status.success() {
            fail(&format!("building kernels-gpu for nvptx64 ({arch}) failed ({status})"));
        }
        let deps = out_dir
            .join("kernels-target")
            .join(&arch)
            .join("nvptx64-nvidia-cuda/release/deps");
        let ptx = newest_ptx(&deps)
            .unwrap_or_else(|| fail(&format!("kernels-gpu built for {arch} but no PTX (.s) was emitted")));
        let text = fs::read_to_string(&ptx).unwrap_or_else(|e| fail(&format!("reading {}: {e}", ptx.display())));
        let modules = split::split(&text, BANK_SYMBOL).unwrap_or_else(|e| fail(&format!("{arch} PTX: {e}")));
        if modules.is_empty() {
            fail(&format!("{} holds no kernel entry", ptx.display()));
        }
        merge(&mut table, modules, arch_number(&arch));
    }
    table.sort_by(|a, b| a.name.cmp(&b.name));

    let mut ptx_blob = String::new();
    let mut sass_blob: Vec<u8> = Vec::new();
    // Each kernel's cubins: architecture, SHA-256 of its PTX, where its bytes lie in the blob.
    let mut cubins: Vec<Vec<Cubin>> = vec![Vec::new(); table.len()];
    if !sass_archs.is_empty() {
        let ptxas = env::var("GPUPRIMS_PTXAS").unwrap_or_else(|_| "ptxas".to_string());
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        for sass_arch in &sass_archs {
            let number = arch_number(sass_arch);
            let chosen: Vec<(usize, &str)> = table
                .iter()
                .enumerate()
                .filter_map(|(i, k)| newest_at_most(&k.ptx, number).map(|t| (i, t)))
                .collect();
            let jobs: Vec<sass::Job> = chosen
                .iter()
                .map(|&(i, ptx)| sass::Job {
                    name: &table[i].name,
                    ptx,
                    arch: sass_arch,
                })
                .collect();
            let assembled =
                sass::assemble(&ptxas, &jobs, &out_dir.join("sass-cache"), threads).unwrap_or_else(|e| fail(&e));
            let mut report = String::new();
            for (&(i, ptx), cubin) in chosen.iter().zip(assembled) {
                cubins[i].push(Cubin {
                    arch: number,
                    ptx_sha256: sass::ptx_digest(ptx),
                    at: sass_blob.len(),
                    len: cubin.bytes.len(),
                });
                sass_blob.extend_from_slice(&cubin.bytes);
                report.push_str(&cubin.report);
            }
            let path = out_dir.join(format!("ptxas-{sass_arch}.txt"));
            fs::write(&path, report).unwrap_or_else(|e| fail(&format!("writing {}: {e}", path.display())));
        }
    }

    let mut code =
        String::from("// Generated by build.rs: the embedded kernel modules (host/kernels.rs reads them).\n");
    let list = |v: &[String]| {
        v.iter()
            .map(|a| arch_number(a).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(code, "const PTX_ARCHS: &[u32] = &[{}];", list(&archs)).unwrap();
    writeln!(code, "const SASS_ARCHS: &[u32] = &[{}];", list(&sass_archs)).unwrap();
    writeln!(
        code,
        "static PTX_TEXT: &str = include_str!(concat!(env!(\"OUT_DIR\"), \"/kernels.ptx\"));"
    )
    .unwrap();
    writeln!(
        code,
        "static SASS_BYTES: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/kernels.sass\"));"
    )
    .unwrap();
    writeln!(code, "static MODULES: [ModuleSource; {}] = [", table.len()).unwrap();
    for (k, sass) in table.iter().zip(&cubins) {
        let mut ptx = String::new();
        for (arch, text) in &k.ptx {
            write!(
                ptx,
                "PtxText {{ arch: {arch}, at: {}, len: {} }}, ",
                ptx_blob.len(),
                text.len()
            )
            .unwrap();
            ptx_blob.push_str(text);
        }
        let sass: String = sass
            .iter()
            .map(|c| {
                format!(
                    "SassImage {{ arch: {}, ptx_sha256: {:?}, at: {}, len: {} }}, ",
                    c.arch, c.ptx_sha256, c.at, c.len
                )
            })
            .collect();
        writeln!(
            code,
            "    ModuleSource {{ name: {:?}, bank: {}, ptx: &[{ptx}], sass: &[{sass}] }},",
            k.name, k.bank
        )
        .unwrap();
    }
    code.push_str("];\n");
    for (file, bytes) in [
        ("kernels.ptx", ptx_blob.as_bytes()),
        ("kernels.sass", &sass_blob[..]),
        ("kernel_table.rs", code.as_bytes()),
    ] {
        let path = out_dir.join(file);
        fs::write(&path, bytes).unwrap_or_else(|e| fail(&format!("writing {}: {e}", path.display())));
    }
}

/// Adds one architecture's modules to `table`: a kernel's module is kept only where it is a
/// different program from the newest one kept so far (`split::normal_form`).
fn merge(table: &mut Vec<Kernel>, modules: Vec<split::Module>, arch: u32) {
    for m in modules {
        match table.iter_mut().find(|k| k.name == m.name) {
            None => table.push(Kernel {
                name: m.name,
                bank: m.bank,
                ptx: vec![(arch, m.text)],
            }),
            Some(k) => {
                k.bank |= m.bank;
                let last = &k.ptx.last().expect("a kernel has a module").1;
                if split::normal_form(last) != split::normal_form(&m.text) {
                    k.ptx.push((arch, m.text));
                }
            }
        }
    }
}

/// The newest of `ptx` (oldest first) whose architecture is at most `arch`.
fn newest_at_most(ptx: &[(u32, String)], arch: u32) -> Option<&str> {
    ptx.iter().rev().find(|(a, _)| *a <= arch).map(|(_, t)| t.as_str())
}

/// The `sm_XY` architectures of variable `var` (comma-separated; `default` when unset), sorted
/// oldest first, without repeats. The build fails on a name that is not `sm_XY`.
fn arch_list(var: &str, default: &str) -> Vec<String> {
    let value = env::var(var).unwrap_or_else(|_| default.to_string());
    let mut archs: Vec<String> = value
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(|a| {
            check_arch(var, a);
            a.to_string()
        })
        .collect();
    archs.sort_by_key(|a| arch_number(a));
    archs.dedup();
    archs
}

/// Starts the nested cargo that compiles kernels-gpu to PTX for `arch`.
fn spawn_kernel_build(kernels: &Path, out_dir: &Path, arch: &str) -> Child {
    let mut cmd = Command::new("cargo");
    cmd.current_dir(kernels)
        .args([
            "rustc",
            "--release",
            "--lib",
            "--target",
            "nvptx64-nvidia-cuda",
            "-Zbuild-std=core",
        ])
        .arg("--target-dir")
        .arg(out_dir.join("kernels-target").join(arch))
        .args(["--", "--emit=asm", "-C"])
        .arg(format!("target-cpu={arch}"));
    if (90..100).contains(&arch_number(arch)) {
        // PTX ISA 8.0 for sm_90's packed 16-bit max/min (`max.u16x2`); sm_90's own minimum is 7.8
        // (later architectures' minimums are above 8.0).
        cmd.args(["-C", "target-feature=+ptx80"]);
    }
    clean_env(&mut cmd);
    cmd.env("RUSTUP_AUTO_INSTALL", "1");
    cmd.spawn()
        .unwrap_or_else(|e| fail(&format!("could not run cargo for kernels-gpu: {e}")))
}

/// The `XY` of `sm_XY` (0 when absent).
fn arch_number(arch: &str) -> u32 {
    let digits: String = arch[3..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap_or(0)
}

/// Fails the build unless `value` (of variable `var`) names an `sm_XY` architecture.
fn check_arch(var: &str, value: &str) {
    if !value.starts_with("sm_") || !value[3..].chars().all(|c| c.is_ascii_alphanumeric()) {
        fail(&format!(
            "{var}={value:?} is not an sm_XY architecture (e.g. sm_70, sm_90)"
        ));
    }
}

/// Removes what the outer cargo/rustup set for *this* build, so the nested build picks the
/// kernels' pinned toolchain and its own flags. `CARGO_HOME` stays (shared registry cache).
fn clean_env(cmd: &mut Command) {
    for (key, _) in env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        let drop = matches!(
            key,
            "RUSTUP_TOOLCHAIN"
                | "RUSTC"
                | "RUSTC_WRAPPER"
                | "RUSTC_WORKSPACE_WRAPPER"
                | "RUSTDOC"
                | "RUSTFLAGS"
                | "CARGO_ENCODED_RUSTFLAGS"
                | "CARGO"
                | "CARGO_TARGET_DIR"
                | "CARGO_BUILD_TARGET"
                | "TARGET"
                | "HOST"
                | "OUT_DIR"
                | "OPT_LEVEL"
                | "PROFILE"
                | "DEBUG"
                | "NUM_JOBS"
                | "RUSTC_LINKER"
        ) || (key.starts_with("CARGO_") && key != "CARGO_HOME")
            || key.starts_with("DEP_");
        if drop {
            cmd.env_remove(key);
        }
    }
}

/// The most recently written `gpuprims_kernels-*.s` in `deps`.
fn newest_ptx(deps: &Path) -> Option<PathBuf> {
    fs::read_dir(deps)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "s")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("gpuprims_kernels"))
        })
        .max_by_key(|p| fs::metadata(p).and_then(|m| m.modified()).ok())
}

fn fail(msg: &str) -> ! {
    eprintln!();
    eprintln!("error: gpuprims could not build its GPU kernels: {msg}");
    eprintln!("  The kernels are Rust compiled to PTX with the toolchain pinned in");
    eprintln!("  kernels-gpu/rust-toolchain.toml (nightly-2026-05-20 with rust-src).");
    eprintln!("  Needed: rustup on PATH (https://rustup.rs) and network access to fetch that toolchain");
    eprintln!("  once, or install it by hand:");
    eprintln!("    rustup toolchain install nightly-2026-05-20 --profile minimal -c rust-src");
    eprintln!();
    std::process::exit(1);
}
