//! Assembles kernel modules into SASS with `ptxas`, one cubin per module, in parallel, through a
//! cache keyed by what determines the cubin.
//!
//! A cubin is named by the SHA-256 of (ptxas version, architecture, module text), so a rebuild
//! after an edit to one kernel assembles that kernel alone, and a cubin of other PTX is never
//! taken. `ptxas -v`'s resource report (registers, stack frame, spills) is kept beside each cubin
//! and gathered per architecture for CI's no-spill check.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use sha2::{Digest, Sha256};

use crate::kernels::{Kernel, newest_at_most};

/// One module to assemble.
pub struct Job<'a> {
    pub name: &'a str,
    pub ptx: &'a str,
    /// `sm_XY`.
    pub arch: &'a str,
}

/// One assembled module.
pub struct Cubin {
    pub bytes: Vec<u8>,
    /// `ptxas -v` output.
    pub report: String,
}

/// One kernel's cubin for one architecture: the kernel's index, the architecture of the PTX it
/// was assembled from, its bytes.
pub struct KernelCubin {
    pub kernel: usize,
    pub from: u32,
    pub bytes: Vec<u8>,
}

/// Assembles, for architecture `arch` (`XY` of `sm_XY`), each kernel's newest PTX at or below it
/// (`ptxas` on every core, cached under `cache`), and writes ptxas's resource report of them all
/// to `report`.
pub fn assemble_for(
    ptxas: &str,
    kernels: &[Kernel],
    arch: u32,
    cache: &Path,
    report: &Path,
) -> Result<Vec<KernelCubin>, String> {
    let sm = format!("sm_{arch}");
    let chosen: Vec<(usize, u32, &str)> = kernels
        .iter()
        .enumerate()
        .filter_map(|(i, k)| newest_at_most(&k.ptx, arch).map(|(a, t)| (i, a, t)))
        .collect();
    let jobs: Vec<Job> = chosen
        .iter()
        .map(|&(i, _, ptx)| Job {
            name: &kernels[i].name,
            ptx,
            arch: &sm,
        })
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let assembled = assemble(ptxas, &jobs, cache, threads)?;
    let mut text = String::new();
    let cubins = chosen
        .iter()
        .zip(assembled)
        .map(|(&(kernel, from, _), cubin)| {
            text.push_str(&cubin.report);
            KernelCubin {
                kernel,
                from,
                bytes: cubin.bytes,
            }
        })
        .collect();
    fs::write(report, text).map_err(|e| format!("writing {}: {e}", report.display()))?;
    Ok(cubins)
}

/// `ptxas --version`'s last line (the release), which keys the cache.
pub fn version(ptxas: &str) -> Result<String, String> {
    let out = Command::new(ptxas)
        .arg("--version")
        .output()
        .map_err(|e| format!("GPUPRIMS_SASS_ARCH is set but {ptxas:?} could not run: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.lines().last().unwrap_or("").trim().to_string())
}

/// Assembles every job with `ptxas` (cached under `cache`), on `threads` threads, in job order.
pub fn assemble(ptxas: &str, jobs: &[Job], cache: &Path, threads: usize) -> Result<Vec<Cubin>, String> {
    let version = version(ptxas)?;
    fs::create_dir_all(cache).map_err(|e| format!("creating {}: {e}", cache.display()))?;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Cubin, String>>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let r = one(ptxas, &version, job, cache);
                    results.lock().unwrap()[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("a ptxas job did not run".into())))
        .collect()
}

fn one(ptxas: &str, version: &str, job: &Job, cache: &Path) -> Result<Cubin, String> {
    let mut h = Sha256::new();
    for part in [version, job.arch, job.ptx] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    let key: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let cubin_path = cache.join(format!("{key}.cubin"));
    let report_path = cache.join(format!("{key}.log"));
    if let (Ok(bytes), Ok(report)) = (fs::read(&cubin_path), fs::read_to_string(&report_path)) {
        return Ok(Cubin { bytes, report });
    }
    let ptx_path = cache.join(format!("{key}.ptx"));
    let tmp: PathBuf = cache.join(format!("{key}.cubin.tmp"));
    fs::write(&ptx_path, job.ptx).map_err(|e| format!("writing {}: {e}", ptx_path.display()))?;
    let out = Command::new(ptxas)
        .arg(format!("-arch={}", job.arch))
        .arg("-v")
        .arg(&ptx_path)
        .arg("-o")
        .arg(&tmp)
        .output()
        .map_err(|e| format!("running {ptxas}: {e}"))?;
    let _ = fs::remove_file(&ptx_path);
    let report = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "{ptxas} -arch={} failed on kernel {} ({}):\n{report}",
            job.arch, job.name, out.status
        ));
    }
    let bytes = fs::read(&tmp).map_err(|e| format!("reading {}: {e}", tmp.display()))?;
    fs::write(&report_path, &report).map_err(|e| format!("writing {}: {e}", report_path.display()))?;
    // Renamed last, so an interrupted build never leaves a cubin without its report.
    fs::rename(&tmp, &cubin_path).map_err(|e| format!("writing {}: {e}", cubin_path.display()))?;
    Ok(Cubin { bytes, report })
}
