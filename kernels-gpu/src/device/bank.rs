//! The module's one constant-memory bank (`abi::CONSTANT_BANK_BYTES`), declared here once for
//! every family. What it holds at a launch is the host's business (`ConstantBank` in
//! `host/bank.rs`: one content at a time, written before the launches that read it).

crate::declare_constant!(crate::constant_bank_symbol!(), crate::constant_bank_bytes!());

/// The `u32` at byte `offset` of the bank. A warp whose threads read the same address gets one
/// broadcast from the constant cache; different addresses serialize.
#[inline(always)]
pub fn bank_u32(offset: u64) -> u32 {
    debug_assert!(offset as usize + 4 <= crate::abi::CONSTANT_BANK_BYTES);
    crate::load_constant!(crate::constant_bank_symbol!(), offset, u32)
}

/// The `u64` at byte `offset` of the bank (8-byte aligned).
#[inline(always)]
pub fn bank_u64(offset: u64) -> u64 {
    debug_assert!(offset as usize + 8 <= crate::abi::CONSTANT_BANK_BYTES);
    crate::load_constant!(crate::constant_bank_symbol!(), offset, u64)
}
