//! PTX checks that need no GPU: every kernel the host launches is an entry of the embedded PTX, and
//! the variants that promise shared memory, shuffles or vector loads show them.

use gpuprims::abi::conv1d::Conv1dStep;
use gpuprims::abi::pool::{PoolKernel, VECTORIZED_ARGMAX};
use gpuprims::kernels::{
    PTX, PTX_ARCH, SASS, SASS_ARCH, arch_runs_on, launched_kernel_names, ptx_entries, ptx_runs_on,
};
use gpuprims::ops::conv1d::Conv1dType;
use gpuprims::ops::pool::PoolInstance;
use gpuprims::ops::reduce::ReduceInstance;
use libtest_mimic::{Failed, Trial};

/// The PTX body of entry `name` (up to the next entry).
fn body(name: &str) -> Option<&'static str> {
    let start = PTX.find(&format!(".entry {name}("))?;
    let rest = &PTX[start + 1..];
    Some(&PTX[start..start + 1 + rest.find(".entry ").unwrap_or(rest.len())])
}

fn expect_in(names: &[&str], needle: &str) -> Result<(), Failed> {
    for n in names {
        let b = body(n).ok_or(format!("{n} missing"))?;
        if !b.contains(needle) {
            return Err(format!("{n} has no `{needle}`").into());
        }
    }
    Ok(())
}

/// `f(arch, cc) == want` for every `(arch, cc, want)` case; `name` is `f`'s, for the message.
fn expect_arch_cases(
    name: &str,
    f: fn(&str, (i32, i32)) -> bool,
    cases: &[(&str, (i32, i32), bool)],
) -> Result<(), Failed> {
    for &(arch, cc, want) in cases {
        if f(arch, cc) != want {
            return Err(format!("{name}({arch:?}, {cc:?}) should be {want}").into());
        }
    }
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("ptx::ptx_runs_on_its_architecture_and_later", || {
            expect_arch_cases(
                "ptx_runs_on",
                ptx_runs_on,
                &[
                    ("sm_70", (7, 0), true),
                    ("sm_70", (9, 0), true),
                    ("sm_90", (9, 0), true),
                    ("sm_90", (10, 0), true),
                    ("sm_90", (8, 9), false),
                    ("sm_86", (8, 0), false),
                    ("", (9, 0), false),
                    ("compute_90", (9, 0), false),
                ],
            )
        }),
        Trial::test("ptx::packed_16_bit_extrema_follow_the_architecture", || {
            // sm_90 builds compute the u8/u16 extrema of the word tile and the van Herk row pass
            // with `max.u16x2`/`min.u16x2`; older targets have no such instruction.
            let packed = [
                "gpuprims_word_tile_max3",
                "gpuprims_word_tile_min5",
                "gpuprims_doubling_rows_max_u8_s4",
            ];
            if ptx_runs_on(PTX_ARCH, (8, 9)) {
                return match PTX.contains("max.u16x2") || PTX.contains("min.u16x2") {
                    true => Err(format!("{PTX_ARCH} PTX uses sm_90's packed 16-bit max/min").into()),
                    false => Ok(()),
                };
            }
            for n in packed {
                let b = body(n).ok_or(format!("{n} missing"))?;
                if !b.contains("max.u16x2") && !b.contains("min.u16x2") {
                    return Err(format!("{n} has no packed 16-bit max/min in a {PTX_ARCH} build").into());
                }
            }
            Ok(())
        }),
        Trial::test("ptx::sass_runs_on_its_major_at_equal_or_higher_minor", || {
            expect_arch_cases(
                "arch_runs_on",
                arch_runs_on,
                &[
                    ("sm_90", (9, 0), true),
                    ("sm_86", (8, 9), true),
                    ("sm_86", (8, 0), false),
                    ("sm_90", (10, 0), false),
                    ("sm_80", (9, 0), false),
                    ("sm_90a", (9, 0), true),
                    ("", (9, 0), false),
                    ("compute_90", (9, 0), false),
                ],
            )?;
            // The embedded cubin, when the build asked for one, is an ELF image.
            if SASS_ARCH.is_empty() != SASS.is_empty() || (!SASS.is_empty() && !SASS.starts_with(b"\x7fELF")) {
                return Err(format!("SASS_ARCH {SASS_ARCH:?} with {} bytes of SASS", SASS.len()).into());
            }
            Ok(())
        }),
        Trial::test("ptx::every_launched_kernel_is_an_entry", || {
            let entries = ptx_entries(PTX);
            let missing: Vec<_> = launched_kernel_names()
                .into_iter()
                .filter(|n| !entries.contains(n))
                .collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!("missing entries: {missing:?}").into())
            }
        }),
        Trial::test("ptx::variants_use_their_memory_spaces", || {
            for inst in ReduceInstance::ALL {
                let n = inst.names();
                expect_in(&n[4..7], "st.shared")?; // steps 5–7 park partials in shared memory
                expect_in(&n[6..8], "shfl.sync.down")?; // steps 7–8 finish warps by shuffles
                expect_in(&n[7..8], "ld.global.nc.v4.u32")?; // step 8: 16-byte read-only loads
                // step 8: exact integer sums add atomic limbs, the others take the last-block ticket
                let s8 = body(n[7]).ok_or(format!("{} missing", n[7]))?;
                let (limbs, ticket) = (
                    s8.contains("red.relaxed.gpu.global.add.u64"),
                    s8.contains("atom.acq_rel.gpu.global.add.u32"),
                );
                if limbs == ticket {
                    return Err(format!("{}: atomic limbs {limbs}, ticket {ticket} (want exactly one)", n[7]).into());
                }
            }
            for ty in Conv1dType::ALL {
                let n = ty.names();
                let of = |steps: &[Conv1dStep]| steps.iter().map(|s| n[s.index()]).collect::<Vec<_>>();
                use Conv1dStep::*;
                expect_in(
                    &of(&[
                        ConstantTaps,
                        SharedTile,
                        RegisterBlocked,
                        RegisterBlockedShared,
                        RegisterBlockedVector,
                    ]),
                    "ld.const",
                )?;
                expect_in(&of(&[SharedTile, RegisterBlockedShared]), "bar.sync")?;
                expect_in(&of(&[SharedTile, RegisterBlockedShared]), "ld.shared")?;
                let vectorized = of(&[
                    RegisterBlocked,
                    RegisterBlockedShared,
                    RegisterBlockedGlobalTaps,
                    RegisterBlockedVector,
                ]);
                expect_in(&vectorized, "ld.global.nc.v4.u32")?;
                expect_in(&vectorized, "st.global.v4.u32")?;
            }
            for inst in PoolInstance::ALL {
                let n = inst.names();
                expect_in(&n[PoolKernel::ConstantInput.index()..][..1], "ld.const")?;
                expect_in(&n[PoolKernel::Texture.index()..][..1], "tex.1d.v4")?;
                expect_in(&n[PoolKernel::ReadOnly.index()..][..1], "ld.global.nc")?;
                expect_in(&n[PoolKernel::Vectorized.index()..][..1], "ld.global.nc.v4.u32")?;
                expect_in(&n[VECTORIZED_ARGMAX..][..1], "ld.global.nc.v4.u32")?;
            }
            Ok(())
        }),
        Trial::test("ptx::launch_bounds_reach_their_entries", || {
            // Each `launch_bounds!` marker must have become its entry's directives (build.rs).
            let mut marked = Vec::new();
            for line in PTX.lines() {
                let Some(rest) = line.trim().strip_prefix("// gpuprims:launch_bounds ") else {
                    continue;
                };
                let [symbol, threads, blocks] = rest.split_whitespace().collect::<Vec<_>>()[..] else {
                    return Err(format!("malformed marker {line:?}").into());
                };
                expect_in(&[symbol], &format!(".maxntid {threads}, 1, 1"))?;
                expect_in(&[symbol], &format!(".minnctapersm {blocks}"))?;
                marked.push(symbol);
            }
            let vector_f32 = Conv1dType::f32.names()[Conv1dStep::RegisterBlockedVector.index()];
            if marked.contains(&vector_f32) {
                Ok(())
            } else {
                Err(format!("{vector_f32} lost its launch bounds (markers: {marked:?})").into())
            }
        }),
        Trial::test("ptx::no_local_memory", || {
            if PTX.contains("ld.local") || PTX.contains("st.local") {
                Err("some kernel uses local memory (a register array spilled?)".into())
            } else {
                Ok(())
            }
        }),
    ]
}
