//! The files the kernels are built from, each with the SHA-256 of its text: `prebuilt/MANIFEST`
//! records them, and build.rs uses the prebuilt kernels only while every file that is present
//! hashes as recorded. Line endings are normalized (`\r\n` → `\n`) before hashing, so a checkout
//! with Windows line endings matches. Used by build.rs and `xtask kernels`; plain `std` + `sha2`.

use std::fs;
use std::path::Path;

use sha2::{Digest, Sha256};

/// The inputs, relative to the crate root: a folder stands for every `.rs` file under it. The kernel
/// crate (`kernels-gpu/`) is not in the published package (cargo leaves nested packages out), so
/// a packaged copy holds only `abi/` and `build/` of these.
pub const INPUTS: &[&str] = &[
    "abi",
    "build/kernels.rs",
    "build/sass.rs",
    "build/split.rs",
    "kernels-gpu/Cargo.lock",
    "kernels-gpu/Cargo.toml",
    "kernels-gpu/rust-toolchain.toml",
    "kernels-gpu/src",
];

/// The folder whose absence marks a packaged copy (its files are then not compared).
pub const KERNEL_CRATE: &str = "kernels-gpu";

/// Every input file under `root` that exists, as (path with `/`, hex SHA-256), sorted by path.
pub fn hashes(root: &Path) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for input in INPUTS {
        let path = root.join(input);
        if path.is_dir() {
            walk(root, &path, &mut out)?;
        } else if path.is_file() {
            out.push((input.to_string(), hash_file(&path)?));
        }
    }
    out.sort();
    Ok(out)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) -> Result<(), String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("reading {}: {e}", dir.display()))?.path();
        if path.is_dir() {
            walk(root, &path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).map_err(|e| e.to_string())?;
            let rel: Vec<_> = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect();
            out.push((rel.join("/"), hash_file(&path)?));
        }
    }
    Ok(())
}

fn hash_file(path: &Path) -> Result<String, String> {
    let bytes = fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let mut normal = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if !(bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n')) {
            normal.push(bytes[i]);
        }
        i += 1;
    }
    Ok(hex(&Sha256::digest(&normal)))
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// How the present files differ from `recorded`: one line per changed, added or removed file
/// (empty when they match). Files of the kernel crate are compared only where `root` has it.
pub fn differences(root: &Path, recorded: &[(String, String)], present: &[(String, String)]) -> Vec<String> {
    let packaged = !root.join(KERNEL_CRATE).is_dir();
    let mut out = Vec::new();
    for (path, hash) in recorded {
        match present.iter().find(|(p, _)| p == path) {
            Some((_, h)) if h == hash => {}
            Some(_) => out.push(format!("changed: {path}")),
            None if packaged && path.starts_with(KERNEL_CRATE) => {}
            None => out.push(format!("removed: {path}")),
        }
    }
    for (path, _) in present {
        if !recorded.iter().any(|(p, _)| p == path) {
            out.push(format!("added:   {path}"));
        }
    }
    out
}
