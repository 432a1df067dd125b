//! Compiles `kernels-gpu/` (Rust, no_std) to PTX with the pinned nightly and embeds it.
//!
//! A nested cargo runs in `kernels-gpu/` with its own target dir under OUT_DIR (sharing ours
//! deadlocks on the lock) and an environment cleaned of the outer build's toolchain and build-script
//! variables, so `kernels-gpu/rust-toolchain.toml` decides the toolchain; `RUSTUP_AUTO_INSTALL=1`
//! lets rustup fetch it on a fresh machine. There is no nvptx linker, so the crate is built as an
//! rlib and the PTX is rustc's `--emit=asm` of the single codegen unit.
//!
//! `GPUPRIMS_CUDA_ARCH` (default `sm_70`) selects `-C target-cpu`; the driver JIT-compiles the PTX
//! for the actual device when the module is loaded. Kernels specialize on it through
//! `cfg(target_feature = "sm_90")` (Hopper's packed 16-bit max/min, PTX ISA 8.0, which this script
//! then asks for): an sm_90 build is faster on an H100 and does not load on older devices.
//!
//! `GPUPRIMS_SASS_ARCH` (e.g. `sm_90`, unset by default) also assembles the PTX into SASS for that
//! architecture with `ptxas` (`GPUPRIMS_PTXAS`, default `ptxas` on the PATH) and embeds the cubin:
//! a device of that architecture then loads it without the driver's JIT, which takes over a minute
//! for this module on a machine whose JIT cache is cold (docs/ARCHITECTURE.md).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const DEFAULT_ARCH: &str = "sm_70";

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let kernels = root.join("kernels-gpu");
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));

    println!("cargo:rerun-if-changed=kernels-gpu/src");
    println!("cargo:rerun-if-changed=kernels-gpu/Cargo.toml");
    println!("cargo:rerun-if-changed=kernels-gpu/rust-toolchain.toml");
    println!("cargo:rerun-if-env-changed=GPUPRIMS_CUDA_ARCH");
    println!("cargo:rerun-if-env-changed=GPUPRIMS_SASS_ARCH");
    println!("cargo:rerun-if-env-changed=GPUPRIMS_PTXAS");

    let arch = env::var("GPUPRIMS_CUDA_ARCH").unwrap_or_else(|_| DEFAULT_ARCH.to_string());
    check_arch("GPUPRIMS_CUDA_ARCH", &arch);
    let sass_arch = env::var("GPUPRIMS_SASS_ARCH").unwrap_or_default();
    if !sass_arch.is_empty() {
        check_arch("GPUPRIMS_SASS_ARCH", &sass_arch);
    }
    let target_dir = out_dir.join("kernels-target");

    let mut cmd = Command::new("cargo");
    cmd.current_dir(&kernels)
        .args([
            "rustc",
            "--release",
            "--lib",
            "--target",
            "nvptx64-nvidia-cuda",
            "-Zbuild-std=core",
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        .args(["--", "--emit=asm", "-C"])
        .arg(format!("target-cpu={arch}"));
    if (90..100).contains(&arch_number(&arch)) {
        // PTX ISA 8.0 for sm_90's packed 16-bit max/min (`max.u16x2`); sm_90's own minimum is 7.8
        // (later architectures' minimums are above 8.0).
        cmd.args(["-C", "target-feature=+ptx80"]);
    }
    clean_env(&mut cmd);
    cmd.env("RUSTUP_AUTO_INSTALL", "1");

    let status = cmd
        .status()
        .unwrap_or_else(|e| fail(&format!("could not run cargo for kernels-gpu: {e}")));
    if !status.success() {
        fail(&format!("building kernels-gpu for nvptx64 failed ({status})"));
    }

    let ptx = newest_ptx(&target_dir.join("nvptx64-nvidia-cuda/release/deps"))
        .unwrap_or_else(|| fail("kernels-gpu built but no PTX (.s) was emitted"));
    let text = fs::read_to_string(&ptx).unwrap_or_else(|e| fail(&format!("reading {}: {e}", ptx.display())));
    if !text.contains(".entry") {
        fail(&format!("{} holds no kernel entry", ptx.display()));
    }
    let text = apply_launch_bounds(&text).unwrap_or_else(|e| fail(&e));
    let ptx_out = out_dir.join("gpuprims_kernels.ptx");
    fs::write(&ptx_out, text).unwrap_or_else(|e| fail(&format!("writing PTX: {e}")));
    println!("cargo:rustc-env=GPUPRIMS_PTX_ARCH={arch}");

    let cubin = out_dir.join("gpuprims_kernels.cubin");
    if sass_arch.is_empty() {
        fs::write(&cubin, []).unwrap_or_else(|e| fail(&format!("writing the empty cubin: {e}")));
    } else {
        let ptxas = env::var("GPUPRIMS_PTXAS").unwrap_or_else(|_| "ptxas".to_string());
        let status = Command::new(&ptxas)
            .arg(format!("-arch={sass_arch}"))
            .arg(&ptx_out)
            .arg("-o")
            .arg(&cubin)
            .status()
            .unwrap_or_else(|e| fail(&format!("GPUPRIMS_SASS_ARCH is set but {ptxas:?} could not run: {e}")));
        if !status.success() {
            fail(&format!("{ptxas} -arch={sass_arch} failed on the PTX ({status})"));
        }
    }
    println!("cargo:rustc-env=GPUPRIMS_SASS_ARCH={sass_arch}");
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

/// Turns each `// gpuprims:launch_bounds SYMBOL THREADS MIN_BLOCKS` line the kernels emit
/// (`launch_bounds!` in kernels-gpu/src/device) into `.maxntid THREADS, 1, 1` and
/// `.minnctapersm MIN_BLOCKS` on entry SYMBOL, placed between its parameter list and its body as
/// PTX requires. A marker that names no entry is an error.
fn apply_launch_bounds(ptx: &str) -> Result<String, String> {
    let mut bounds = std::collections::HashMap::new();
    for line in ptx.lines() {
        if let Some(rest) = line.trim().strip_prefix("// gpuprims:launch_bounds ") {
            let f: Vec<&str> = rest.split_whitespace().collect();
            let [symbol, threads, blocks] = f[..] else {
                return Err(format!("malformed launch-bounds marker: {line:?}"));
            };
            bounds.insert(symbol.to_string(), (threads.to_string(), blocks.to_string()));
        }
    }
    let mut out = String::with_capacity(ptx.len() + 64 * bounds.len());
    let mut pending: Option<&(String, String)> = None;
    let mut applied = 0;
    for line in ptx.lines() {
        if let Some(rest) = line.trim_start().strip_prefix(".visible .entry ") {
            let name = rest.split(['(', ' ']).next().unwrap_or("");
            pending = bounds.get(name);
        }
        if line.trim() == "{"
            && let Some((threads, blocks)) = pending.take()
        {
            out.push_str(&format!(".maxntid {threads}, 1, 1\n.minnctapersm {blocks}\n"));
            applied += 1;
        }
        out.push_str(line);
        out.push('\n');
    }
    if applied != bounds.len() {
        return Err(format!(
            "{} launch-bounds markers but {applied} entries matched: {:?}",
            bounds.len(),
            bounds.keys().collect::<Vec<_>>()
        ));
    }
    Ok(out)
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
