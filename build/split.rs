//! Splits rustc's one PTX module into one self-contained module per kernel entry.
//!
//! Used by build.rs, and `#[path]`-included by `tests/ptx.rs`, which checks its refusals. Plain
//! `std`, no dependencies.
//!
//! A kernel's module is the PTX header (`.version`, `.target`, `.address_size`), the top-level
//! declarations its body names (the constant bank, the dynamic shared-memory array) and the entry
//! itself, with its launch bounds applied. That is a faithful copy of the kernel only while
//! kernels share no code and no mutable data, so the split **fails** — with the entry's name —
//! when an entry calls a function (`call`) or names a `.global` variable (one copy per module
//! would no longer be one variable), and when a top-level line is of a kind it does not know.
//!
//! Each module's text is also made independent of where the entry stood in rustc's module: LLVM
//! numbers basic-block labels by function (`$L__BB<function>_<block>`), so adding a kernel early
//! in the crate would rename every later kernel's labels and miss the driver's JIT cache, which
//! is keyed by a module's text. Labels are renumbered as function 0.

use std::collections::HashMap;

/// One kernel's module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module {
    /// The entry's symbol.
    pub name: String,
    /// The complete PTX module.
    pub text: String,
    /// Whether the module declares the constant bank (`bank_symbol`).
    pub bank: bool,
}

/// A top-level data declaration of the source module.
struct Declaration {
    name: String,
    line: String,
    global: bool,
}

/// The launch-bounds marker the kernels emit (`launch_bounds!` in kernels-gpu/src/device).
const BOUNDS_MARKER: &str = "// gpuprims:launch_bounds ";

/// Splits `ptx` into one module per `.entry`, in source order. `bank_symbol` names the
/// constant-memory bank (reported per module). Errors name the entry or line at fault.
pub fn split(ptx: &str, bank_symbol: &str) -> Result<Vec<Module>, String> {
    let lines: Vec<&str> = ptx.lines().collect();
    let mut header = Vec::new();
    let mut declarations: Vec<Declaration> = Vec::new();
    let mut bounds: HashMap<&str, (&str, &str)> = HashMap::new();
    let mut entries: Vec<(&str, &[&str])> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix(BOUNDS_MARKER) {
            let f: Vec<&str> = rest.split_whitespace().collect();
            let [symbol, threads, blocks] = f[..] else {
                return Err(format!("malformed launch-bounds marker: {line:?}"));
            };
            bounds.insert(symbol, (threads, blocks));
        } else if trimmed.is_empty() || trimmed.starts_with("//") {
        } else if [".version", ".target", ".address_size"]
            .iter()
            .any(|d| trimmed.starts_with(d))
        {
            header.push(trimmed);
        } else if let Some(rest) = function_header(trimmed) {
            // A function runs from its header to the `}` closing its body (or a `;` for a
            // prototype such as `.extern .func`).
            let end = (i..lines.len())
                .find(|&j| lines[j] == "}" || (j == i && trimmed.ends_with(';')))
                .ok_or_else(|| format!("unterminated function at line {}", i + 1))?;
            if let Some(name) = rest.strip_prefix(".entry ") {
                let name = name.split(['(', ' ']).next().unwrap_or("");
                entries.push((name, &lines[i..=end]));
            }
            i = end;
        } else if let Some(d) = declaration(trimmed) {
            declarations.push(d);
        } else {
            return Err(format!("unknown top-level PTX line {}: {line:?}", i + 1));
        }
        i += 1;
    }
    if header.len() != 3 {
        return Err(format!(
            "expected .version, .target and .address_size, found {header:?}"
        ));
    }
    let mut modules = Vec::with_capacity(entries.len());
    for (name, body) in entries {
        modules.push(module(
            name,
            body,
            &header,
            &declarations,
            bounds.remove(name),
            bank_symbol,
        )?);
    }
    if !bounds.is_empty() {
        let mut names: Vec<_> = bounds.keys().collect();
        names.sort();
        return Err(format!("launch-bounds markers name no entry: {names:?}"));
    }
    Ok(modules)
}

/// The rest of a function header line after its visibility (`.entry NAME(` or `.func …`).
fn function_header(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix(".visible ")
        .or_else(|| line.strip_prefix(".weak "))
        .or_else(|| line.strip_prefix(".extern "))
        .unwrap_or(line);
    (rest.starts_with(".entry ") || rest.starts_with(".func ")).then_some(rest)
}

/// A one-line data declaration (`[.visible|.extern] .const|.shared|.global … NAME[..];`).
fn declaration(line: &str) -> Option<Declaration> {
    let rest = line
        .strip_prefix(".visible ")
        .or_else(|| line.strip_prefix(".extern "))
        .unwrap_or(line);
    let space = [".const ", ".shared ", ".global "]
        .into_iter()
        .find(|s| rest.starts_with(s))?;
    if !line.ends_with(';') {
        return None;
    }
    // The name is the last word before `[`, `=` or `;`.
    let head = line.split(['[', '=', ';']).next()?.trim_end();
    let name = head.rsplit(' ').next()?.to_string();
    Some(Declaration {
        name,
        line: line.to_string(),
        global: space == ".global ",
    })
}

/// Whether `text` contains `word` delimited by non-identifier characters.
fn names(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// One entry's module: header, the declarations it names, its body (labels renumbered, launch
/// bounds applied).
fn module(
    name: &str,
    body: &[&str],
    header: &[&str],
    declarations: &[Declaration],
    bounds: Option<(&str, &str)>,
    bank_symbol: &str,
) -> Result<Module, String> {
    let mut text = String::with_capacity(body.iter().map(|l| l.len() + 1).sum::<usize>() + 256);
    for h in header {
        text.push_str(h);
        text.push('\n');
    }
    text.push('\n');
    let joined = body.join("\n");
    let mut bank = false;
    for d in declarations.iter().filter(|d| names(&joined, &d.name)) {
        if d.global {
            return Err(format!(
                "kernel {name} uses the .global variable {}: a module per kernel would give each kernel \
                 its own copy (build.rs splits the PTX by entry)",
                d.name
            ));
        }
        bank |= d.name == bank_symbol;
        text.push_str(&d.line);
        text.push('\n');
    }
    text.push('\n');
    let mut bounds = bounds;
    for line in body {
        let op = line.trim_start();
        let op = if op.starts_with('@') {
            op.split_once(' ').map_or(op, |(_, rest)| rest.trim_start())
        } else {
            op
        };
        if op.starts_with("call ") || op.starts_with("call.") || op.starts_with("call\t") {
            return Err(format!(
                "kernel {name} calls a function ({}): a module per kernel holds its entry alone \
                 (build.rs splits the PTX by entry; inline the callee)",
                line.trim()
            ));
        }
        if *line == "{"
            && let Some((threads, blocks)) = bounds.take()
        {
            text.push_str(&format!(".maxntid {threads}, 1, 1\n.minnctapersm {blocks}\n"));
        }
        push_renumbered(&mut text, line);
        text.push('\n');
    }
    Ok(Module {
        name: name.to_string(),
        text,
        bank,
    })
}

/// Appends `line` with every basic-block label `$L__BB<n>_` written as `$L__BB0_`.
fn push_renumbered(out: &mut String, line: &str) {
    const LABEL: &str = "$L__BB";
    let mut rest = line;
    while let Some(at) = rest.find(LABEL) {
        let after = &rest[at + LABEL.len()..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        out.push_str(&rest[..at + LABEL.len()]);
        if digits > 0 && after[digits..].starts_with('_') {
            out.push('0');
            rest = &after[digits..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
}

/// A module's text with what differs between PTX ISA versions for the same code removed: the
/// `.version` and `.target` lines, and the scratch register older ISAs need where 7.1+ writes the
/// sink `_` (`{ .reg .b32 tmp; mov.b64 {tmp, %r1}, %rd2; }` is `mov.b64 {_, %r1}, %rd2;`), and
/// whitespace runs. Two architectures' modules with equal normal forms are the same program.
pub fn normal_form(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line.starts_with(".version") || line.starts_with(".target") {
            continue;
        }
        let line = sink_form(line).unwrap_or_else(|| line.to_string());
        for (i, word) in line.split_whitespace().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(word);
        }
        out.push('\n');
    }
    out
}

/// `{ .reg .bN tmp; mov.bM {…tmp…}, src; }` as `mov.bM {…_…}, src;`, else `None`.
fn sink_form(line: &str) -> Option<String> {
    let inner = line.trim().strip_prefix("{ .reg .b")?.strip_suffix("; }")?;
    let (_, mov) = inner.split_once(" tmp; ")?;
    let (op, operands) = mov.split_once(' ')?;
    if !op.starts_with("mov.b") {
        return None;
    }
    Some(format!("{op} {};", operands.replace("tmp", "_")))
}
