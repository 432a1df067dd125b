//! `prebuilt/MANIFEST`: what the prebuilt kernels are and what they were built from. Written by
//! `xtask kernels`, read by build.rs; plain `std`.
//!
//! ```text
//! format 1
//! toolchain nightly-2026-05-20
//! ptxas cuda_13.0.r13.0/compiler.36424714_0
//! ptx-archs 70 90
//! sass-archs 80 90
//! source <sha256> abi/mod.rs                        one line per input file (build/sources.rs)
//! kernel gpuprims_word_tile_max3 0                  name, whether it reads the constant bank
//!   ptx 70 41213 <sha256>                           arch, length, SHA-256 of the module text
//!   ptx 90 40988 <sha256>
//!   sass 90 90 52344 <sha256>                       arch, the PTX arch it was assembled from, ...
//! ```
//!
//! Each module is one zstd frame in its own file, `ptx/<kernel>.sm_<arch>.zst` or
//! `sass/<kernel>.sm_<arch>.zst`, compressed with the dictionary `ptx.dict` or `sass.dict` beside
//! it: an edit to one kernel changes its own files and a few lines here.

/// The format this code reads and writes.
pub const FORMAT: u32 = 1;
/// The manifest's file name in `prebuilt/`.
pub const FILE: &str = "MANIFEST";
/// The dictionaries, per kind of module.
pub const PTX_DICT: &str = "ptx.dict";
pub const SASS_DICT: &str = "sass.dict";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    pub toolchain: String,
    /// `ptxas --version`'s last line, or `none` without SASS.
    pub ptxas: String,
    pub ptx_archs: Vec<u32>,
    pub sass_archs: Vec<u32>,
    /// (path, hex SHA-256) of every input file.
    pub sources: Vec<(String, String)>,
    pub kernels: Vec<Entry>,
}

/// One kernel's modules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub bank: bool,
    pub ptx: Vec<Module>,
    pub sass: Vec<Module>,
}

/// One module: its architecture, (for a cubin) the architecture of the PTX it was assembled
/// from, and its length and hex SHA-256 uncompressed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module {
    pub arch: u32,
    pub from: u32,
    pub len: usize,
    pub sha256: String,
}

/// The file of kernel `name`'s PTX for `arch`, relative to `prebuilt/`.
pub fn ptx_file(name: &str, arch: u32) -> String {
    format!("ptx/{name}.sm_{arch}.zst")
}

/// The file of kernel `name`'s cubin for `arch`, relative to `prebuilt/`.
pub fn sass_file(name: &str, arch: u32) -> String {
    format!("sass/{name}.sm_{arch}.zst")
}

impl Manifest {
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let mut m = Manifest {
            toolchain: String::new(),
            ptxas: String::new(),
            ptx_archs: Vec::new(),
            sass_archs: Vec::new(),
            sources: Vec::new(),
            kernels: Vec::new(),
        };
        let mut format = None;
        for (n, line) in text.lines().enumerate() {
            let bad = || format!("prebuilt/{FILE} line {}: {line:?}", n + 1);
            let f: Vec<&str> = line.split_whitespace().collect();
            let num = |s: &str| s.parse::<usize>().map_err(|_| bad());
            let module = |f: &[&str], from: Option<&str>| -> Result<Module, String> {
                let arch = num(f[0])? as u32;
                Ok(Module {
                    arch,
                    from: from.map_or(Ok(arch), |s| num(s).map(|v| v as u32))?,
                    len: num(f[f.len() - 2])?,
                    sha256: f[f.len() - 1].to_string(),
                })
            };
            match f[..] {
                [] => {}
                [c, ..] if c.starts_with('#') => {}
                ["format", v] => format = Some(num(v)?),
                ["toolchain", v] => m.toolchain = v.to_string(),
                ["ptxas", ..] => m.ptxas = f[1..].join(" "),
                ["ptx-archs", ..] => {
                    m.ptx_archs = f[1..]
                        .iter()
                        .map(|a| num(a).map(|v| v as u32))
                        .collect::<Result<_, _>>()?
                }
                ["sass-archs", ..] => {
                    m.sass_archs = f[1..]
                        .iter()
                        .map(|a| num(a).map(|v| v as u32))
                        .collect::<Result<_, _>>()?
                }
                ["source", hash, path] => m.sources.push((path.to_string(), hash.to_string())),
                ["kernel", name, bank] => m.kernels.push(Entry {
                    name: name.to_string(),
                    bank: bank == "1",
                    ptx: Vec::new(),
                    sass: Vec::new(),
                }),
                ["ptx", _, _, _] => {
                    let module = module(&f[1..], None)?;
                    m.kernels.last_mut().ok_or_else(bad)?.ptx.push(module);
                }
                ["sass", _, from, _, _] => {
                    let module = module(&[f[1], f[3], f[4]], Some(from))?;
                    m.kernels.last_mut().ok_or_else(bad)?.sass.push(module);
                }
                _ => return Err(bad()),
            }
        }
        match format {
            Some(v) if v == FORMAT as usize => Ok(m),
            other => Err(format!(
                "prebuilt/{FILE} is of format {other:?}; this build reads format {FORMAT}"
            )),
        }
    }

    pub fn render(&self) -> String {
        let nums = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(" ");
        let mut s = String::from(
            "# The prebuilt kernels of prebuilt/: generated by `cargo xtask kernels` from the sources\n\
             # listed here (build/manifest.rs has the format). Do not edit.\n",
        );
        s += &format!("format {FORMAT}\ntoolchain {}\nptxas {}\n", self.toolchain, self.ptxas);
        s += &format!(
            "ptx-archs {}\nsass-archs {}\n",
            nums(&self.ptx_archs),
            nums(&self.sass_archs)
        );
        for (path, hash) in &self.sources {
            s += &format!("source {hash} {path}\n");
        }
        for k in &self.kernels {
            s += &format!("kernel {} {}\n", k.name, u8::from(k.bank));
            for p in &k.ptx {
                s += &format!("  ptx {} {} {}\n", p.arch, p.len, p.sha256);
            }
            for c in &k.sass {
                s += &format!("  sass {} {} {} {}\n", c.arch, c.from, c.len, c.sha256);
            }
        }
        s
    }
}
