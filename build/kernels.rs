//! Compiles `kernels-gpu/` (Rust, no_std) to PTX with its pinned nightly, once per target
//! architecture, and splits each PTX into one module per kernel (`build/split.rs`). Used by
//! build.rs when it builds the kernels from source and by `xtask kernels`, which regenerates
//! `prebuilt/`; plain `std`, no dependencies.
//!
//! The pinned toolchain is installed (or checked) **once**, before the per-architecture builds
//! start, under a file lock shared by every build script of the machine's user
//! ([`Toolchain::ensure`]): two builds that each asked rustup to install it raced on its files
//! and left it broken. The nested cargos then run with `RUSTUP_TOOLCHAIN` set to the pinned
//! channel, so rustup installs nothing on their behalf.
//!
//! Each nested cargo runs in `kernels-gpu/` with its own target dir (sharing the outer one
//! deadlocks on its lock) and an environment cleaned of the outer build's toolchain and
//! build-script variables. There is no nvptx linker, so the crate is built as an rlib and the PTX
//! is rustc's `--emit=asm` of the single codegen unit. The architectures' builds run at once
//! (each is one single-threaded rustc). Kernels specialize on the architecture through
//! `cfg(target_feature = "sm_90")` (Hopper's packed 16-bit max/min, PTX ISA 8.0, which the
//! sm_90 build asks for). A later architecture's module is kept only where it differs from the
//! earlier one's as a program (`split::normal_form`), so the sm_90 build adds the few kernels
//! that specialize.

use std::env;
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::split;

/// The architectures built when `GPUPRIMS_CUDA_ARCH` is unset.
pub const DEFAULT_ARCHS: &str = "sm_70,sm_90";
/// The constant-memory bank's symbol (`constant_bank_symbol!` in abi/).
pub const BANK_SYMBOL: &str = "gpuprims_constant_bank";

/// One kernel and its modules, oldest architecture first.
pub struct Kernel {
    pub name: String,
    /// Whether a module declares the constant-memory bank.
    pub bank: bool,
    /// (architecture number, module text), each a different program from the one before.
    pub ptx: Vec<(u32, String)>,
}

/// The toolchain pinned in `kernels-gpu/rust-toolchain.toml`.
pub struct Toolchain {
    pub channel: String,
    components: Vec<String>,
}

impl Toolchain {
    /// Reads the pin from `kernels_dir/rust-toolchain.toml`.
    pub fn pinned(kernels_dir: &Path) -> Result<Toolchain, String> {
        let path = kernels_dir.join("rust-toolchain.toml");
        let text = fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        let value = |key: &str| {
            text.lines()
                .map(str::trim)
                .find_map(|l| l.strip_prefix(key)?.trim_start().strip_prefix('='))
                .map(str::trim)
        };
        let channel = value("channel")
            .map(|v| v.trim_matches('"').to_string())
            .ok_or_else(|| format!("{} names no channel", path.display()))?;
        let components = value("components")
            .map(|v| {
                v.trim_matches(['[', ']'])
                    .split(',')
                    .map(|c| c.trim().trim_matches('"').to_string())
                    .filter(|c| !c.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        Ok(Toolchain { channel, components })
    }

    /// The command that installs the pinned toolchain as the kernels need it.
    pub fn install_command(&self) -> String {
        let mut cmd = format!("rustup toolchain install {} --profile minimal", self.channel);
        for c in &self.components {
            cmd.push_str(" -c ");
            cmd.push_str(c);
        }
        cmd
    }

    /// Makes sure the pinned toolchain is installed and whole: installs it if rustup does not
    /// list it, and fails with the repair command if it is listed but broken (a component's
    /// files missing, as an interrupted or raced install leaves it). Serialized across processes
    /// by a lock file in the temporary directory, so concurrent builds install it once.
    pub fn ensure(&self) -> Result<(), String> {
        if run_quiet(Command::new("rustup").arg("--version")).is_err() {
            return Err("rustup is not on PATH (https://rustup.rs)".into());
        }
        let lock_path = env::temp_dir().join(format!("gpuprims-toolchain-{}.lock", self.channel));
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| format!("opening the lock {}: {e}", lock_path.display()))?;
        lock.lock()
            .map_err(|e| format!("locking {}: {e}", lock_path.display()))?;
        let result = self.ensure_locked();
        let _ = lock.unlock();
        result
    }

    fn ensure_locked(&self) -> Result<(), String> {
        let listed = run_quiet(Command::new("rustup").args(["toolchain", "list"]))?
            .lines()
            .any(|l| l.starts_with(&self.channel));
        if !listed {
            let mut cmd = Command::new("rustup");
            cmd.args(["toolchain", "install", &self.channel, "--profile", "minimal"]);
            for c in &self.components {
                cmd.args(["-c", c]);
            }
            clean_env(&mut cmd);
            let status = cmd
                .stdout(Stdio::inherit())
                .stderr(Stdio::inherit())
                .status()
                .map_err(|e| format!("running rustup: {e}"))?;
            if !status.success() {
                return Err(format!(
                    "`{}` failed ({status}); it needs the network once",
                    self.install_command()
                ));
            }
        }
        self.check().map_err(|reason| {
            format!(
                "the toolchain {ch} is installed but broken ({reason}). Repair it with\n    \
                 rustup toolchain uninstall {ch} && {install}",
                ch = self.channel,
                install = self.install_command()
            )
        })
    }

    /// Whether the installed toolchain has what a kernel build runs: rustc, cargo and the
    /// `core` sources of `rust-src`.
    fn check(&self) -> Result<(), String> {
        let run = |tool: &str, arg: &str| {
            let mut cmd = Command::new("rustup");
            cmd.args(["run", &self.channel, tool, arg]);
            run_quiet(&mut cmd)
        };
        run("rustc", "--version")?;
        run("cargo", "--version")?;
        let sysroot = run("rustc", "--print=sysroot")?;
        let core = Path::new(sysroot.trim()).join("lib/rustlib/src/rust/library/core/Cargo.toml");
        if !core.exists() {
            return Err(format!("rust-src is missing: no {}", core.display()));
        }
        Ok(())
    }
}

/// Runs `cmd` with a clean environment and returns its standard output, or why it failed (the
/// command line and the first line of its error output).
fn run_quiet(cmd: &mut Command) -> Result<String, String> {
    clean_env(cmd);
    let line: Vec<String> = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let line = line.join(" ");
    let out = cmd.output().map_err(|e| format!("`{line}`: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
        return Err(format!("`{line}` failed: {first}"));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Builds the kernels for every architecture of `archs` (`sm_XY`, oldest first) under
/// `target_root/<arch>`, and returns them sorted by name.
pub fn build(kernels_dir: &Path, target_root: &Path, archs: &[String]) -> Result<Vec<Kernel>, String> {
    let toolchain = Toolchain::pinned(kernels_dir)?;
    toolchain.ensure()?;
    let builds: Vec<(&String, Child)> = archs
        .iter()
        .map(|arch| {
            Ok((
                arch,
                spawn(kernels_dir, &target_root.join(arch), arch, &toolchain.channel)?,
            ))
        })
        .collect::<Result<_, String>>()?;
    let mut table: Vec<Kernel> = Vec::new();
    for (arch, mut child) in builds {
        let status = child
            .wait()
            .map_err(|e| format!("waiting for cargo (kernels-gpu, {arch}): {e}"))?;
        if !status.success() {
            return Err(format!("building kernels-gpu for nvptx64 ({arch}) failed ({status})"));
        }
        let deps = target_root.join(arch).join("nvptx64-nvidia-cuda/release/deps");
        let ptx =
            newest_ptx(&deps).ok_or_else(|| format!("kernels-gpu built for {arch} but no PTX (.s) was emitted"))?;
        let text = fs::read_to_string(&ptx).map_err(|e| format!("reading {}: {e}", ptx.display()))?;
        let modules = split::split(&text, BANK_SYMBOL).map_err(|e| format!("{arch} PTX: {e}"))?;
        if modules.is_empty() {
            return Err(format!("{} holds no kernel entry", ptx.display()));
        }
        merge(&mut table, modules, arch_number(arch));
    }
    table.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(table)
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

/// The newest of `ptx` (oldest first) whose architecture is at most `arch`, with its own.
pub fn newest_at_most(ptx: &[(u32, String)], arch: u32) -> Option<(u32, &str)> {
    ptx.iter()
        .rev()
        .find(|(a, _)| *a <= arch)
        .map(|(a, t)| (*a, t.as_str()))
}

/// The `sm_XY` architectures of `value` (comma-separated), sorted oldest first, without repeats;
/// `var` names the setting in the error for a name that is not `sm_XY`.
pub fn arch_list(var: &str, value: &str) -> Result<Vec<String>, String> {
    let mut archs = Vec::new();
    for a in value.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        if !a.starts_with("sm_") || a.len() < 4 || !a[3..].chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(format!(
                "{var}={value:?}: {a:?} is not an sm_XY architecture (e.g. sm_70, sm_90)"
            ));
        }
        archs.push(a.to_string());
    }
    archs.sort_by_key(|a| arch_number(a));
    archs.dedup();
    Ok(archs)
}

/// The `XY` of `sm_XY` (0 when absent).
pub fn arch_number(arch: &str) -> u32 {
    let digits: String = arch
        .get(3..)
        .unwrap_or("")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap_or(0)
}

/// Starts the nested cargo that compiles kernels-gpu to PTX for `arch` with `channel`.
fn spawn(kernels: &Path, target_dir: &Path, arch: &str, channel: &str) -> Result<Child, String> {
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
        .arg(target_dir)
        .args(["--", "--emit=asm", "-C"])
        .arg(format!("target-cpu={arch}"));
    if (90..100).contains(&arch_number(arch)) {
        // PTX ISA 8.0 for sm_90's packed 16-bit max/min (`max.u16x2`); sm_90's own minimum is 7.8
        // (later architectures' minimums are above 8.0).
        cmd.args(["-C", "target-feature=+ptx80"]);
    }
    clean_env(&mut cmd);
    cmd.env("RUSTUP_TOOLCHAIN", channel);
    cmd.spawn()
        .map_err(|e| format!("could not run cargo for kernels-gpu: {e}"))
}

/// Removes what the outer cargo/rustup set for *this* build, so a nested command picks its own
/// toolchain and flags. `CARGO_HOME` and `RUSTUP_HOME` stay (shared caches).
pub fn clean_env(cmd: &mut Command) {
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
    cmd.env("RUSTUP_AUTO_INSTALL", "0").env_remove("RUST_BACKTRACE");
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
