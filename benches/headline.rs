//! The README's headline table: each workload W1–W12 (with W10's three forms, the fused W12
//! chain at both sizes and the 15 × 15 local moments) as gpuprims's `Auto` row of one bench run
//! and the vendor peers of the same run (`GPUPRIMS_PEERS_CSV`, from `../shared/peers` and
//! `benches/peers`). `scripts/headline.sh` runs both and writes the table; `--from` rebuilds it
//! from a saved run.

use crate::support::Row;

/// One workload of the table.
struct Workload {
    label: &'static str,
    /// The bench rows: family, size label and variant (`auto` matches any `auto (…)` row).
    family: &'static str,
    size: &'static str,
    variant: &'static str,
    /// The peers: operation and shape in the peers CSV, and the implementations that compute
    /// something else (an interior only, one of the two outputs, a pre-cast input) left out.
    peer_op: &'static [&'static str],
    peer_shape: &'static str,
}

const WORKLOADS: &[Workload] = &[
    Workload {
        label: "W1 sum of squares, 2^28 i32 → exact",
        family: "sum_of_squares i32→u128",
        size: "2^28",
        variant: "8-shuffle-vec16",
        peer_op: &["W1_sumsq"],
        peer_shape: "268435456",
    },
    Workload {
        label: "W2 5-tap mean filter, 2^27 f64, zero border",
        family: "mean_filter1d f64",
        size: "2^27 × 5",
        variant: "auto",
        peer_op: &["W2_mean5"],
        peer_shape: "134217728",
    },
    Workload {
        label: "W3 window-15 row sum + sum of squares, u8 8192² → 2 × f32",
        family: "window_sum_sumsq u8→f32",
        size: "8192² × 15",
        variant: "auto",
        peer_op: &["W3_winsum15"],
        peer_shape: "8192x8192",
    },
    Workload {
        label: "W4 2 × 2 max pool, f32 (64, 64, 224, 224)",
        family: "max_pool2d 2×2 f32",
        size: "4096 × 224²",
        variant: "auto",
        peer_op: &["W4_maxpool2x2"],
        peer_shape: "64x64x224x224",
    },
    Workload {
        label: "W5 3 × 3 Gaussian, u8 8192², replicate",
        family: "filter2d",
        size: "gauss3x3 8192²",
        variant: "auto",
        peer_op: &["W5_gauss3x3"],
        peer_shape: "8192x8192",
    },
    Workload {
        label: "W6 3 × 3 grey dilation, u8 8192², replicate",
        family: "filter2d",
        size: "dilate 8192² × 3×3",
        variant: "auto",
        peer_op: &["W6_dilate3x3"],
        peer_shape: "8192x8192",
    },
    Workload {
        label: "W7 5 × 5 grey dilation, u8 8192², replicate",
        family: "filter2d",
        size: "dilate 8192² × 5×5",
        variant: "auto",
        peer_op: &["W7_dilate5x5"],
        peer_shape: "8192x8192",
    },
    Workload {
        label: "W8 3 × 3 Sobel, u8 8192² → i16",
        family: "chain gauss→dilate→sobel",
        size: "1 × 8192²",
        variant: "sobel 1 alone",
        peer_op: &["W8_sobel3x3"],
        peer_shape: "8192x8192",
    },
    Workload {
        label: "W9 31 × 31 grey dilation, u8 8192², replicate",
        family: "filter2d",
        size: "dilate 8192² × 31×31",
        variant: "auto",
        peer_op: &["W9_dilate31x31"],
        peer_shape: "8192x8192",
    },
    Workload {
        label: "W10 3 × 3 stride-2 max pool, f32 (64, 64, 224, 224)",
        family: "max_pool2d 3×3/2 f32",
        size: "4096 × 224²",
        variant: "auto",
        peer_op: &["W10_maxpool3x3s2p1"],
        peer_shape: "64x64x224x224",
    },
    Workload {
        label: "W10 the same with i64 indices",
        family: "max_pool2d 3×3/2 f32",
        size: "4096 × 224²",
        variant: "auto + indices",
        peer_op: &["W10_maxpool3x3s2p1_indices", "W10_maxpool3x3s2p1:with_indices"],
        peer_shape: "64x64x224x224",
    },
    Workload {
        label: "W10 3 × 3 stride-2 average pool, f32",
        family: "avg_pool2d 3×3/2 f32",
        size: "4096 × 224²",
        variant: "auto",
        peer_op: &["W10_avgpool3x3s2p1"],
        peer_shape: "64x64x224x224",
    },
    Workload {
        label: "W11 window-15 row sums of an i32 8192² image → 2 × f32",
        family: "window_sum_sumsq i32→f32",
        size: "8192² × 15",
        variant: "auto",
        peer_op: &["W11_winsum15_i32"],
        peer_shape: "8192x8192",
    },
    Workload {
        label: "W12 Gaussian → dilation → Sobel, 64 × u8 512², fused",
        family: "chain gauss→dilate→sobel",
        size: "64 × 512²",
        variant: "fused, stream",
        peer_op: &["W12_chain64x512"],
        peer_shape: "64x512x512",
    },
    Workload {
        label: "W12 the same chain on one u8 8192² image, fused",
        family: "chain gauss→dilate→sobel",
        size: "1 × 8192²",
        variant: "fused, stream",
        peer_op: &[],
        peer_shape: "",
    },
    Workload {
        label: "15 × 15 local mean + variance, u8 8192² → 2 × f32, reflect",
        family: "local_mean_variance",
        size: "8192² × 15×15",
        variant: "auto",
        peer_op: &[],
        peer_shape: "",
    },
];

/// Implementations that compute less than the workload: an interior only (no border), one of
/// two outputs, an input cast before the timing.
const NOT_COMPARABLE: &[&str] = &["interior", "sum_only", "precast"];

/// One peer row: implementation and median µs.
struct Peer {
    name: String,
    us: f64,
}

/// The peers of `w` in `csv` (`op,impl,shape,dtype,median_us,gbps,max_abs_err`). An entry
/// `OP:WORD` of `peer_op` takes only OP's implementations whose name holds WORD.
fn peers(csv: &str, w: &Workload) -> Vec<Peer> {
    csv.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let (op, name, shape, us) = (f.first()?, f.get(1)?, f.get(2)?, f.get(4)?.parse::<f64>().ok()?);
            let wanted = w.peer_op.iter().any(|p| match p.split_once(':') {
                Some((o, word)) => o == *op && name.contains(word),
                None => p == op && !name.contains("with_indices"),
            });
            (wanted && *shape == w.peer_shape && !NOT_COMPARABLE.iter().any(|x| name.contains(x))).then(|| Peer {
                name: name.to_string(),
                us,
            })
        })
        .collect()
}

/// The markdown table (with its header lines) from the bench rows `measured` (size label, row)
/// of a run whose copy bandwidth was `copy`, and the peers CSV of the same run.
pub fn table(measured: &[(String, Row)], copy: f64, peers_csv: &str) -> String {
    let mut out = String::from(
        "| workload | gpuprims `Auto` µs | % copy | best peer, same run | peer µs | speedup | PyTorch µs | CuPy µs |\n\
         |---|---:|---:|---|---:|---:|---:|---:|\n",
    );
    for w in WORKLOADS {
        let row = measured.iter().find(|(size, r)| {
            size == w.size
                && r.family == w.family
                && (r.variant == w.variant
                    || (w.variant.starts_with("auto") && auto_matches(&r.variant, w.variant))
                    || (w.variant.starts_with("fused")
                        && r.variant.starts_with(w.variant)
                        && r.variant.contains("Auto")))
        });
        let Some((_, r)) = row else {
            out += &format!("| {} | not measured | | | | | | |\n", w.label);
            continue;
        };
        let ps = peers(peers_csv, w);
        let best = ps.iter().min_by(|a, b| a.us.total_cmp(&b.us));
        let of = |prefix: &str| {
            ps.iter()
                .filter(|p| p.name.starts_with(prefix))
                .map(|p| p.us)
                .min_by(f64::total_cmp)
                .map_or("–".to_string(), |us| format!("{us:.1}"))
        };
        let (peer, peer_us, speedup) = match best {
            Some(p) => (
                format!("`{}`", p.name),
                format!("{:.2}", p.us),
                format!("{:.2}", p.us / r.median_us),
            ),
            None => ("–".into(), "–".into(), "–".into()),
        };
        out += &format!(
            "| {} | {:.2} | {:.1} | {peer} | {peer_us} | {speedup} | {} | {} |\n",
            w.label,
            r.median_us,
            100.0 * r.gbps() / copy,
            of("torch"),
            of("cupy")
        );
    }
    out
}

/// Whether bench variant `v` is the `auto` row `want` names: `auto` or `auto (…)`, with the
/// same suffix (` + indices`).
fn auto_matches(v: &str, want: &str) -> bool {
    let suffix = want.strip_prefix("auto").unwrap_or("");
    v.starts_with("auto") && v.ends_with(suffix) && (suffix.is_empty() != v.contains(" + "))
}
