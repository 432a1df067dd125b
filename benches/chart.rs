//! PNG charts of the bench rows: one per family, GB/s against size (log scale), one line per
//! variant, the same run's copy bandwidth as a dashed ceiling. Text uses the bundled DejaVu Sans
//! Mono (benches/fonts, its license beside it), so charts render on machines without fonts.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;

/// One measured point: family, variant, size (elements or pixels), GB/s.
pub struct Point {
    pub family: String,
    pub variant: String,
    pub n: usize,
    pub gbps: f64,
}

/// Each variant's (size, GB/s) points, by variant name.
type Series<'a> = BTreeMap<&'a str, Vec<(f64, f64)>>;

/// Writes `<dir>/<family>.png` for every family in `points`; returns the paths written.
pub fn write_charts(dir: &Path, points: &[Point], copy_gbps: f64, device: &str) -> Result<Vec<String>, String> {
    static FONT: &[u8] = include_bytes!("fonts/DejaVuSansMono.ttf");
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).map_err(|_| "bundled font".to_string())?;
    let mut families: BTreeMap<&str, Series> = BTreeMap::new();
    for p in points.iter().filter(|p| p.n > 0 && p.gbps.is_finite()) {
        families
            .entry(&p.family)
            .or_default()
            .entry(&p.variant)
            .or_default()
            .push((p.n as f64, p.gbps));
    }
    let mut written = Vec::new();
    for (family, variants) in &families {
        let name: String = family
            .replace('×', "x")
            .replace('→', "-to-")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
            .collect();
        let file = dir.join(format!("{name}.png"));
        draw(&file, family, variants, copy_gbps, device).map_err(|e| format!("{}: {e}", file.display()))?;
        written.push(file.display().to_string());
    }
    Ok(written)
}

fn draw(
    file: &Path,
    family: &str,
    variants: &Series,
    copy_gbps: f64,
    device: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let all = variants.values().flatten();
    let (lo, hi) = all
        .clone()
        .fold((f64::MAX, 0f64), |(lo, hi), &(n, _)| (lo.min(n), hi.max(n)));
    // Headroom above the highest line for the legend (upper left).
    let top = all.fold(copy_gbps, |m, &(_, g)| m.max(g)) * 1.45;
    let root = BitMapBackend::new(file, (1100, 700)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{family}: GB/s against size ({device})"), ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d((lo / 1.5..hi * 1.5).log_scale(), 0f64..top)?;
    chart
        .configure_mesh()
        .x_desc("size (elements or pixels)")
        .y_desc("GB/s (inputs read once + outputs written once)")
        .x_label_formatter(&|v| format!("2^{:.0}", v.log2()))
        .draw()?;
    chart
        .draw_series(DashedLineSeries::new(
            [(lo / 1.5, copy_gbps), (hi * 1.5, copy_gbps)],
            8,
            6,
            BLACK.stroke_width(2),
        ))?
        .label(format!("copy {copy_gbps:.0} GB/s"))
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK));
    for (i, (variant, pts)) in variants.iter().enumerate() {
        let mut pts = pts.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?
            .label(*variant)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()?;
    root.present()?;
    Ok(())
}

/// One family's headline chart: % of the copy bandwidth of each variant on one workload, and
/// the same call's vendor peers on that workload as reference lines.
pub struct Ladder {
    /// File stem under the chart directory (`docs/img/<file>.png`).
    pub file: &'static str,
    pub title: String,
    /// (variant, % of copy), in ladder order.
    pub bars: Vec<(String, f64)>,
    /// (peer, % of copy).
    pub peers: Vec<(String, f64)>,
}

/// Peer rows of a `peers` CSV (`op,impl,shape,dtype,median_us,gbps,max_abs_err`) for workload
/// `op` at `shape`: (impl, GB/s).
pub fn peer_rows(csv: &str, op: &str, shape: &str) -> Vec<(String, f64)> {
    csv.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.len() >= 6 && f[0] == op && f[2] == shape)
                .then(|| Some((f[1].to_string(), f[5].parse::<f64>().ok()?)))
                .flatten()
        })
        .collect()
}

/// Writes `<dir>/<file>.png` for each ladder: one bar per variant (% of copy), a dashed line per
/// peer; returns the paths written.
pub fn write_ladders(dir: &Path, ladders: &[Ladder], device: &str) -> Result<Vec<String>, String> {
    static FONT: &[u8] = include_bytes!("fonts/DejaVuSansMono.ttf");
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).map_err(|_| "bundled font".to_string())?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut written = Vec::new();
    for l in ladders.iter().filter(|l| !l.bars.is_empty()) {
        let file = dir.join(format!("{}.png", l.file));
        draw_ladder(&file, l, device).map_err(|e| format!("{}: {e}", file.display()))?;
        written.push(file.display().to_string());
    }
    Ok(written)
}

fn draw_ladder(file: &Path, l: &Ladder, device: &str) -> Result<(), Box<dyn std::error::Error>> {
    let n = l.bars.len();
    let top = l.bars.iter().chain(&l.peers).fold(100f64, |m, &(_, p)| m.max(p)) * 1.15;
    let root = BitMapBackend::new(file, (1100, 700)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{} ({device})", l.title), ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d((0..n.saturating_sub(1)).into_segmented(), 0f64..top)?;
    let name = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(i) => l.bars.get(*i).map_or(String::new(), |(v, _)| v.clone()),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&name)
        .x_label_style(("sans-serif", 11))
        .y_desc("% of the device-to-device copy bandwidth (same run)")
        .draw()?;
    chart.draw_series(l.bars.iter().enumerate().map(|(i, &(_, p))| {
        let mut bar = Rectangle::new(
            [(SegmentValue::Exact(i), 0.0), (SegmentValue::Exact(i + 1), p)],
            Palette99::pick(0).mix(0.8).filled(),
        );
        bar.set_margin(0, 0, 12, 12);
        bar
    }))?;
    chart.draw_series(l.bars.iter().enumerate().map(|(i, &(_, p))| {
        Text::new(
            format!("{p:.1}%"),
            (SegmentValue::CenterOf(i), p + top * 0.015),
            ("sans-serif", 14),
        )
    }))?;
    let across = |y: f64| [(SegmentValue::Exact(0), y), (SegmentValue::Exact(n), y)];
    chart
        .draw_series(DashedLineSeries::new(across(100.0), 8, 6, BLACK.stroke_width(2)))?
        .label("copy (100%)")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK));
    for (i, (peer, p)) in l.peers.iter().enumerate() {
        let color = Palette99::pick(i + 1).to_rgba();
        chart
            .draw_series(DashedLineSeries::new(across(*p), 4, 4, color.stroke_width(2)))?
            .label(format!("{peer} {p:.0}%"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()?;
    root.present()?;
    Ok(())
}
