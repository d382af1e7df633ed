//! The comparison table of one analysis: per cell and series, baseline → candidate, the
//! change with the interval the decision used, the test and the row's state. The compare page
//! (`/compare?base=&head=`) renders it; it is read off a [`RunAnalysis`] (the server's stored
//! one, or [`super::compare::compare`]'s for two runs) and never computes a second verdict.
//!
//! # Where the numbers come from
//! * A compared series: its [`Comparison`](crate::regression::Comparison)'s test outcome
//!   (baseline mean of the baseline commits, candidate mean, the interval of the difference at
//!   the test's level, p-value).
//! * A series that was not tested (too little history, one value per side, descriptive, not a
//!   tested statistic): the values the caller read from the two sides ([`SideValues`]), the
//!   change described, never an interval or a p-value.
//!
//! # State of a row
//! The series' [`SeriesState`], except that a series named by a trade-off finding of its
//! group (tested, or effect-only) is [`RowState::Tradeoff`]: the one change of the cell a
//! reader must see first.

use super::coverage::CellGap;
use super::model::RunAnalysis;
use crate::metric::Stat;
use crate::regression::{FindingKind, SeriesReport, SeriesState, Test, Untested};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// The state of one row: a [`SeriesState`], or a trade-off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowState {
    /// Named by a trade-off finding (throughput better while latency or goodput worse).
    Tradeoff,
    /// Any other state, as the engine reported it.
    #[serde(untagged)]
    Series(SeriesState),
}

impl RowState {
    /// `tradeoff`, or the series state's snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RowState::Tradeoff => "tradeoff",
            RowState::Series(s) => s.as_str(),
        }
    }

    /// A finding's state: shown before the quiet rows.
    pub fn is_finding(self) -> bool {
        matches!(
            self,
            RowState::Tradeoff
                | RowState::Series(SeriesState::Regression | SeriesState::Improvement)
        )
    }
}

/// The values of each side that the analysis did not test, by series id: a run's stored
/// values (mean of the side's runs when it has several).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SideValues {
    /// Baseline side.
    pub baseline: HashMap<String, f64>,
    /// Candidate side.
    pub candidate: HashMap<String, f64>,
}

/// One series of a cell, baseline → candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareRow {
    /// Series id.
    pub series_id: String,
    /// Metric (`ttft`, `output_throughput`, ...).
    pub metric: String,
    /// Statistic.
    pub stat: Stat,
    /// The row's state.
    pub state: RowState,
    /// Baseline value (mean of the baseline commits for a tested series), metric's unit.
    pub baseline: Option<f64>,
    /// Candidate value, metric's unit.
    pub candidate: Option<f64>,
    /// Candidate against baseline, percent of the baseline (absent when the baseline is 0).
    pub delta_pct: Option<f64>,
    /// The interval of `delta_pct` at `level` (the baseline mean taken as known), for a
    /// tested series whose test has a spread.
    pub ci_pct: Option<(f64, f64)>,
    /// The confidence level of `ci_pct` (0.999 for α = 0.001).
    pub level: Option<f64>,
    /// The test, for a compared series.
    pub test: Option<Test>,
    /// Its two-sided p-value, when the test has one.
    pub p_value: Option<f64>,
    /// The comparison was significant (effect ≥ the minimum and beyond the interval); never
    /// for an effect-only comparison.
    pub significant: bool,
    /// `Some(true)` better, `Some(false)` worse, `None` neutral or unchanged.
    pub better: Option<bool>,
    /// Baseline and candidate values the test used.
    pub n: Option<(usize, usize)>,
    /// Why the series was not tested, typed.
    pub untested: Option<Untested>,
    /// When the row's state was decided by another test than its own comparison's (a
    /// regression or improvement found on the metric family's combined index, which names
    /// this series among the statistics that moved): that test and its p-value. `test` and
    /// `p_value` above stay this series' own, so a reader sees which p belongs to which test.
    pub decided_by: Option<Decision>,
}

/// The test that decided a finding, and its p-value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Decision {
    /// The finding's test (`family_index` for a change of the combined family index).
    pub test: Test,
    /// Its two-sided p-value, when it has one.
    pub p_value: Option<f64>,
}

/// One group (configuration and cell) of the analysis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareCell {
    /// The configuration (series key object).
    pub series_key: Value,
    /// The cell key.
    pub cell: String,
    /// Where the baseline came from, in words.
    pub baseline_rule: String,
    /// The baseline commits the group's tests used (sorted), empty when nothing was tested.
    pub baseline_commits: Vec<String>,
    /// The summaries of the group's findings (tested and effect-only), trade-offs first.
    pub findings: Vec<(FindingKind, String)>,
    /// Families that moved at least the minimum effect without a finding, one sentence each
    /// with the smallest change detectable here and the repeats that would decide it.
    pub undecided: Vec<String>,
    /// The rows, in the analysis' series order.
    pub rows: Vec<CompareRow>,
}

/// The whole table: every group of the candidate, and the cells only one side has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareTable {
    /// The candidate's groups.
    pub cells: Vec<CompareCell>,
    /// Cells of the baseline commit the candidate lacks.
    pub missing_cells: Vec<CellGap>,
    /// Cells of the candidate with no baseline.
    pub new_cells: Vec<CellGap>,
}

/// The table of `analysis`, with `values` for the series it did not test.
pub fn compare_table(analysis: &RunAnalysis, values: &SideValues) -> CompareTable {
    let cells = analysis
        .groups
        .iter()
        .map(|g| {
            let findings: Vec<_> = g.report.findings.iter().chain(&g.effect_only).collect();
            let in_tradeoff: BTreeSet<&str> = findings
                .iter()
                .filter(|f| f.kind == FindingKind::Tradeoff)
                .flat_map(|f| f.series_ids.iter().map(String::as_str))
                .collect();
            let mut listed: Vec<(FindingKind, String)> = findings
                .iter()
                .map(|f| (f.kind, f.summary.clone()))
                .collect();
            listed.sort_by_key(|(k, _)| *k != FindingKind::Tradeoff);
            // The test of each tested (non-trade-off) finding, for the series it names: the
            // first finding naming a series decided it.
            let mut decided: HashMap<&str, Decision> = HashMap::new();
            for f in g
                .report
                .findings
                .iter()
                .filter(|f| f.kind != FindingKind::Tradeoff && !f.test.is_untested())
            {
                for id in &f.series_ids {
                    decided.entry(id.as_str()).or_insert(Decision {
                        test: f.test,
                        p_value: f.p_value,
                    });
                }
            }
            let baseline_commits: BTreeSet<String> = g
                .report
                .series
                .iter()
                .filter_map(|s| s.comparison.as_ref())
                .flat_map(|c| c.baseline_commits.iter().cloned())
                .collect();
            CompareCell {
                series_key: g.series_key.clone(),
                cell: g.cell.clone(),
                baseline_rule: g.baseline_rule.clone(),
                baseline_commits: baseline_commits.into_iter().collect(),
                findings: listed,
                undecided: g
                    .report
                    .undecided
                    .iter()
                    .map(|u| u.summary.clone())
                    .collect(),
                rows: g
                    .report
                    .series
                    .iter()
                    .map(|s| {
                        let mut r = row(s, in_tradeoff.contains(s.series_id.as_str()), values);
                        r.decided_by = decided
                            .get(s.series_id.as_str())
                            .copied()
                            .filter(|d| r.test.is_some() && r.test != Some(d.test));
                        r
                    })
                    .collect(),
            }
        })
        .collect();
    CompareTable {
        cells,
        missing_cells: analysis.coverage.missing_cells.clone(),
        new_cells: analysis.coverage.new_cells.clone(),
    }
}

fn row(s: &SeriesReport, in_tradeoff: bool, values: &SideValues) -> CompareRow {
    let state = if in_tradeoff {
        RowState::Tradeoff
    } else {
        RowState::Series(s.state)
    };
    let mut r = CompareRow {
        series_id: s.series_id.clone(),
        metric: s.metric.clone(),
        stat: s.stat.clone(),
        state,
        baseline: values.baseline.get(&s.series_id).copied(),
        candidate: values.candidate.get(&s.series_id).copied(),
        delta_pct: None,
        ci_pct: None,
        level: None,
        test: None,
        p_value: None,
        significant: false,
        better: None,
        n: None,
        untested: s.untested,
        decided_by: None,
    };
    match &s.comparison {
        Some(c) => {
            let o = &c.outcome;
            r.baseline = Some(o.baseline_mean);
            r.candidate = Some(o.candidate_mean);
            r.delta_pct = c
                .delta_pct
                .or_else(|| pct(o.baseline_mean, o.candidate_mean));
            r.ci_pct = o
                .delta_ci
                .filter(|_| o.baseline_mean != 0.0)
                .map(|(lo, hi)| {
                    let b = o.baseline_mean.abs();
                    (lo / b * 100.0, hi / b * 100.0)
                });
            r.level = r.ci_pct.map(|_| o.level);
            r.test = Some(o.test);
            r.p_value = o.p_value;
            // An effect-only comparison (one value per side) is "significant" when the effect
            // reaches the minimum; it was never tested, so it is never shown as significant.
            r.significant = c.significant && o.test != Test::EffectOnly;
            r.better = c.better;
            r.n = Some((o.n_baseline, o.n_candidate));
        }
        None => {
            r.delta_pct = r.baseline.zip(r.candidate).and_then(|(b, c)| pct(b, c));
        }
    }
    r
}

/// `c` against `b` in percent of `b`; `None` when `b` is 0.
fn pct(b: f64, c: f64) -> Option<f64> {
    (b != 0.0).then(|| (c - b) / b.abs() * 100.0)
}
