//! The findings of a run grouped across cells: one entry per (configuration, finding kind,
//! headline metric), with the cells where it holds and each cell's numbers. A trade-off the
//! FP8 KV cache makes in three cells of one configuration is one entry with three cells, not
//! three unrelated findings. The per-cell findings (and the alerts they open) stay as the
//! engine made them; this is how reports present them.

use super::model::RunAnalysis;
use crate::metric::Stat;
use crate::regression::{
    describe, describe_series, pct, Finding, FindingKind, PartChange, Severity,
};
use serde_json::Value;

/// One finding across the cells of a configuration where it holds (a cell may contribute
/// several statistics of the same metric, e.g. mean and p90 ITL).
#[derive(Debug, Clone, PartialEq)]
pub struct GroupedFinding {
    /// The configuration (series key object).
    pub series_key: Value,
    /// What was found.
    pub kind: FindingKind,
    /// The headline metric (vocabulary name), e.g. `output_throughput` for a trade-off.
    pub metric: String,
    /// Its SLO profile (goodput and attainment under different SLOs are different findings).
    pub slo_profile: Option<String>,
    /// The highest severity among the cells (`None` for improvements).
    pub severity: Option<Severity>,
    /// The cells' findings, in the analysis' cell order.
    pub cells: Vec<CellFinding>,
    /// The distinct cells among them.
    pub cell_count: usize,
    /// Cells of the configuration in the analysis.
    pub cells_analyzed: usize,
    /// One sentence: what moved, the range over the cells, in how many cells.
    pub summary: String,
}

/// One cell's part of a [`GroupedFinding`].
#[derive(Debug, Clone, PartialEq)]
pub struct CellFinding {
    /// The cell key.
    pub cell: String,
    /// The cell as short as it can be among its configuration's cells (`max_concurrency=4`):
    /// [`cell_label`].
    pub label: String,
    /// The cell's finding.
    pub finding: Finding,
}

/// The findings of `analysis` grouped by configuration, kind and headline metric; trade-offs
/// first, then regressions, missing series, change points and improvements.
pub fn grouped_findings(analysis: &RunAnalysis) -> Vec<GroupedFinding> {
    let mut out: Vec<GroupedFinding> = Vec::new();
    for g in &analysis.groups {
        for f in &g.report.findings {
            let cell = CellFinding {
                cell: g.cell.clone(),
                label: String::new(),
                finding: f.clone(),
            };
            match out
                .iter_mut()
                .find(|o| o.series_key == g.series_key && o.kind == f.kind && o.metric == f.metric)
            {
                Some(o) => {
                    o.severity = o.severity.max_by(f.severity);
                    o.cells.push(cell);
                }
                None => out.push(GroupedFinding {
                    series_key: g.series_key.clone(),
                    kind: f.kind,
                    metric: f.metric.clone(),
                    slo_profile: f.slo_profile.clone(),
                    severity: f.severity,
                    cells: vec![cell],
                    cell_count: 0,
                    cells_analyzed: analysis
                        .groups
                        .iter()
                        .filter(|o| o.series_key == g.series_key)
                        .count(),
                    summary: String::new(),
                }),
            }
        }
    }
    for o in &mut out {
        // Cells in natural order (c=1, 4, 16; never the text order 1, 16, 4); stable, so a
        // cell's statistics keep the engine's order.
        o.cells.sort_by_cached_key(|c| natural_key(&c.cell));
        let mut cells: Vec<&str> = o.cells.iter().map(|c| c.cell.as_str()).collect();
        cells.dedup();
        o.cell_count = cells.len();
        let all: Vec<&str> = analysis
            .groups
            .iter()
            .filter(|g| g.series_key == o.series_key)
            .map(|g| g.cell.as_str())
            .collect();
        let labels: Vec<String> = cells.iter().map(|c| cell_label(c, &all)).collect();
        for c in &mut o.cells {
            c.label = cell_label(&c.cell, &all);
        }
        o.summary = summary_of(o, &labels.join(", "));
    }
    out.sort_by_key(|o| rank(o.kind));
    out
}

/// Order of kinds: what needs a person first.
pub(super) fn rank(kind: FindingKind) -> u8 {
    match kind {
        FindingKind::Tradeoff => 0,
        FindingKind::Regression => 1,
        FindingKind::Missing => 2,
        FindingKind::ChangePoint => 3,
        FindingKind::Improvement => 4,
    }
}

trait MaxSeverity {
    fn max_by(self, other: Option<Severity>) -> Option<Severity>;
}

impl MaxSeverity for Option<Severity> {
    /// `fail` over `warn` over none.
    fn max_by(self, other: Option<Severity>) -> Option<Severity> {
        match (self, other) {
            (Some(Severity::Fail), _) | (_, Some(Severity::Fail)) => Some(Severity::Fail),
            (Some(Severity::Warn), _) | (_, Some(Severity::Warn)) => Some(Severity::Warn),
            _ => None,
        }
    }
}

/// `+4.2 %` for one value, `+3.4 … +9.3 %` for several.
fn range(values: &[f64]) -> String {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if values.is_empty() {
        "–".into()
    } else if (hi - lo).abs() < 0.05 {
        pct(lo)
    } else {
        format!("{lo:+.1} … {hi:+.1} %")
    }
}

/// A sort key that compares the digit runs of `s` as numbers: `max_concurrency=4` before
/// `max_concurrency=16`.
pub fn natural_key(s: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut n = c.to_digit(10).map_or(0, u64::from);
            while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                n = n.saturating_mul(10).saturating_add(u64::from(d));
                chars.next();
            }
            out.push((std::mem::take(&mut text), n));
        } else {
            text.push(c);
        }
    }
    out.push((text, 0));
    out
}

/// The fields of `cell` (a cell key, `k=v;k=v`) that differ among the configuration's cells
/// `all`, e.g. `max_concurrency=16`; the whole key when none differ.
pub fn cell_label(cell: &str, all: &[&str]) -> String {
    let fields = |c: &str| -> Vec<(String, String)> {
        c.split(';')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let varying: Vec<String> = fields(cell)
        .into_iter()
        .filter(|(k, v)| {
            all.iter()
                .any(|o| fields(o).iter().any(|(ok, ov)| ok == k && ov != v))
        })
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if varying.is_empty() {
        cell.to_string()
    } else {
        varying.join(";")
    }
}

fn summary_of(o: &GroupedFinding, labels: &str) -> String {
    let where_ = format!(
        "in {} of {} cells ({labels})",
        o.cell_count, o.cells_analyzed
    );
    // One cell: its own sentence, which says more than a range can (every side of a
    // trade-off, "starts later, finishes sooner").
    if o.cell_count == 1 && o.kind != FindingKind::Missing {
        let word = match o.kind {
            FindingKind::Tradeoff => "trade-off",
            FindingKind::Regression => "regression",
            FindingKind::Improvement => "improvement",
            _ => "change point",
        };
        let sentence = o.cells[0].finding.summary.trim_end_matches('.');
        return format!("{word} {where_}: {sentence}");
    }
    // One headline value per cell: its first finding of this metric.
    let mut seen = Vec::new();
    let headline: Vec<f64> = o
        .cells
        .iter()
        .filter(|c| {
            let first = !seen.contains(&c.cell);
            seen.push(c.cell.clone());
            first
        })
        .filter_map(|c| c.finding.delta_pct)
        .collect();
    let name = describe_series(
        &o.metric,
        &o.cells[0].finding.stat,
        o.slo_profile.as_deref(),
    );
    match o.kind {
        FindingKind::Tradeoff => {
            // The worse side's headline metric per cell: its first worsened part.
            let harm: Vec<(&str, &Stat, f64)> = o
                .cells
                .iter()
                .filter_map(|c| {
                    c.finding
                        .parts
                        .iter()
                        .find(|p| p.change == PartChange::Worsened)
                        .map(|p| (p.metric.as_str(), &p.stat, p.delta_pct))
                })
                .collect();
            // The statistic too when every cell's worse side leads with the same one.
            let harm_name = match harm.first() {
                None => "latency".to_string(),
                Some((m, stat, _)) if harm.iter().all(|h| h.0 == *m && h.1 == *stat) => {
                    describe(m, stat)
                }
                Some((m, _, _)) => describe(m, &Stat::Value),
            };
            let harm_values: Vec<f64> = harm.iter().map(|h| h.2).collect();
            format!(
                "trade-off {where_}: {name} {} but {harm_name} {}",
                range(&headline),
                range(&harm_values)
            )
        }
        FindingKind::Missing => format!("{name} missing {where_}"),
        kind => {
            let word = match kind {
                FindingKind::Regression => "regression",
                FindingKind::Improvement => "improvement",
                _ => "change point",
            };
            format!("{word} {where_}: {name} {}", range(&headline))
        }
    }
}
