//! Border modes, shared by every filter family: how a row (or a column) is extended past its
//! ends, and the closed-form index mapping the kernels use. The host's `Border` maps onto these.

/// How a row is extended past its ends (device form; `Zero` is `Constant` with value 0).
/// Names and semantics are scipy.ndimage's, for a row `a b c d`:
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BorderMode {
    /// `k k k | a b c d | k k k` (the launch's `cval`).
    Constant = 0,
    /// `a a a | a b c d | d d d` (scipy "nearest").
    Replicate = 1,
    /// `c b a | a b c d | d c b` (scipy "reflect": the edge sample repeats).
    Reflect = 2,
    /// `d c b | a b c d | c b a` (scipy "mirror": the edge sample does not repeat).
    Mirror = 3,
    /// `b c d | a b c d | a b c` (scipy "wrap": periodic).
    Wrap = 4,
}

impl BorderMode {
    /// The mode from its `u32` launch code; unknown codes read as `Constant`.
    pub const fn from_code(code: u32) -> BorderMode {
        match code {
            1 => BorderMode::Replicate,
            2 => BorderMode::Reflect,
            3 => BorderMode::Mirror,
            4 => BorderMode::Wrap,
            _ => BorderMode::Constant,
        }
    }
}

/// Sample index that stands at position `i` (any integer) of a row of `n ≥ 1` samples extended
/// by `mode`; `None` where the extension is the constant. Closed form (one Euclidean remainder
/// per mode), so positions many periods away — filters longer than the signal — cost the same as
/// near ones. A remainder here is a call to the 64-bit division routine; sharing one between
/// reflect and mirror (as [`border_index_i32`] does) raised the registers of the i32 row kernels
/// until ptxas spilled (8 bytes, `window_i32_*_running_sum`, sm_90). A CPU test holds both
/// functions to an independent reference.
#[inline(always)]
pub const fn border_index(i: i64, n: i64, mode: BorderMode) -> Option<i64> {
    if 0 <= i && i < n {
        return Some(i);
    }
    match mode {
        BorderMode::Constant => None,
        BorderMode::Replicate => Some(if i < 0 { 0 } else { n - 1 }),
        BorderMode::Reflect => {
            // period 2n: a b c d d c b a
            let m = i.rem_euclid(2 * n);
            Some(if m < n { m } else { 2 * n - 1 - m })
        }
        BorderMode::Mirror => {
            if n == 1 {
                return Some(0);
            }
            // period 2n − 2: a b c d c b
            let m = i.rem_euclid(2 * n - 2);
            Some(if m < n { m } else { 2 * n - 2 - m })
        }
        BorderMode::Wrap => Some(i.rem_euclid(n)),
    }
}

/// [`border_index`] in 32-bit arithmetic, for `|i|` and `2n` below 2^31: the remainder is a short
/// inline sequence instead of a call to the 64-bit division routine (which, inside a hot loop,
/// costs registers as well as time). Reflect and mirror share one remainder: kernels inline this
/// wherever they map an index, and each 32-bit remainder is a dozen instructions for the
/// driver's JIT to compile.
#[inline(always)]
pub const fn border_index_i32(i: i32, n: i32, mode: BorderMode) -> Option<i32> {
    if 0 <= i && i < n {
        return Some(i);
    }
    let (reflect, mirror) = (
        mode as u32 == BorderMode::Reflect as u32,
        mode as u32 == BorderMode::Mirror as u32,
    );
    if !reflect && !mirror {
        return match mode {
            BorderMode::Constant => None,
            BorderMode::Replicate => Some(if i < 0 { 0 } else { n - 1 }),
            _ => Some(i.rem_euclid(n)), // wrap: a b c d | a b c d
        };
    }
    if mirror && n == 1 {
        return Some(0);
    }
    // Reflect (a b c d d c b a) and mirror (a b c d c b) are periodic: one remainder by the
    // period, then the second half folds back, repeating the edge sample (reflect) or not
    // (mirror).
    let period = 2 * n - 2 * mirror as i32;
    let m = i.rem_euclid(period);
    Some(if m < n { m } else { period - m - reflect as i32 })
}
