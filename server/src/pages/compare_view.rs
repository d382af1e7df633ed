//! The view model of the compare page (`/compare`): core's compare table
//! ([`benchtrail_core::report::compare_table`]) and each cell's configuration differences
//! turned into display text. Nothing here decides anything: states, intervals and tests are
//! the analysis'.

use super::format::{self, display_number, exact, key_title, short_sha};
use super::views::ProjectView;
use crate::storage::StoredRun;
use askama::Template;
use benchtrail_core::capacity::render::{self, SweepTable};
use benchtrail_core::capacity::CapacityReport;
use benchtrail_core::regression::confounds::{field_label, ConfoundReport};
use benchtrail_core::regression::{SeriesState, Test, Untested};
use benchtrail_core::report::compare_table::{CompareCell, CompareRow, RowState};
use benchtrail_core::Unit;
use serde_json::Value;
use std::collections::HashMap;

/// `/compare?head={run}[&base={run}]`.
#[derive(Template)]
#[template(path = "compare.html")]
pub struct ComparePage {
    /// The project of both runs.
    pub project: ProjectView,
    /// The candidate run.
    pub head: RunLink,
    /// The baseline run: the one named, or the newest run of the baseline commits the
    /// analysis used; `None` when the candidate had no baseline at all.
    pub base: Option<RunLink>,
    /// What the baseline is.
    pub mode: CompareMode,
    /// One sentence on what the numbers are.
    pub method: String,
    /// The verdict the compared analysis gives (`pass`, `warn`, `fail`, `incomplete`).
    pub verdict: String,
    /// The candidate's groups.
    pub cells: Vec<CellView>,
    /// Cells the baseline has and the candidate lacks: (cell key, configuration title).
    pub missing_cells: Vec<(String, String)>,
    /// Cells of the candidate with no baseline: (cell key, configuration title).
    pub new_cells: Vec<(String, String)>,
    /// The capacity report of the two runs (JSON and Markdown), when a baseline run is known.
    pub capacity_url: Option<String>,
    /// Capacity at SLO of the two runs, when a load sweep was measured on either side.
    pub capacity: Option<CapacityView>,
    /// The validation report's answer, cost, quality and warnings, when there is a sweep or
    /// a quality result to show.
    pub validation: Option<super::validation_view::ValidationView>,
    /// The vendored uPlot's version (asset URLs).
    pub uplot_version: &'static str,
    /// The site header (who is signed in).
    pub header: super::session::SiteHeader,
}

/// Capacity at SLO on the compare page: core's report in words and tables, and each
/// profile's attainment against load (drawn by `/static/capacity.js` from its table).
#[derive(Debug, Clone)]
pub struct CapacityView {
    /// The answer in one paragraph ([`render::summary`]).
    pub summary: String,
    /// One table per sweep measured on both sides ([`render::sweep_tables`]).
    pub tables: Vec<SweepTable>,
    /// What was not compared, one item each.
    pub not_compared: Vec<String>,
    /// One curve per sweep and profile.
    pub curves: Vec<CurveView>,
}

/// A profile's attainment against load on one sweep, both sides.
#[derive(Debug, Clone)]
pub struct CurveView {
    /// Element id (`capacity-curve-0`).
    pub id: String,
    /// `chat on the concurrency sweep of …`.
    pub title: String,
    /// The load unit (`concurrent requests`, `req/s`).
    pub load_unit: String,
    /// The attainment target, percent (`95`).
    pub target_pct: String,
    /// One row per load measured on either side, ascending.
    pub rows: Vec<CurveRow>,
}

/// One load of a curve.
#[derive(Debug, Clone)]
pub struct CurveRow {
    /// The load, exact.
    pub load: String,
    /// Baseline attainment, percent, exact (empty when not measured there).
    pub baseline: String,
    /// Candidate attainment, percent, exact.
    pub candidate: String,
    /// Baseline attainment for reading (`97.5 %`, `—`).
    pub baseline_text: String,
    /// Candidate attainment for reading.
    pub candidate_text: String,
    /// Baseline goodput, req/s, exact (empty when not measured there).
    pub baseline_goodput_exact: String,
    /// Candidate goodput, req/s, exact.
    pub candidate_goodput_exact: String,
    /// Baseline goodput for reading (`3.21 req/s`, `—`).
    pub baseline_goodput: String,
    /// Candidate goodput for reading.
    pub candidate_goodput: String,
}

/// Text with its Markdown code spans (`` `chat` ``) apart: (text, is code), so a template can
/// set the code in `<code>` while escaping everything.
pub fn code_spans(s: &str) -> Vec<(String, bool)> {
    s.split('`')
        .enumerate()
        .filter(|(_, t)| !t.is_empty())
        .map(|(i, t)| (t.to_string(), i % 2 == 1))
        .collect()
}

/// Text with its Markdown code spans set in `<code>`, everything else HTML-escaped: for
/// templates that include a partial (`{{ text|safe }}` of this is safe by construction).
pub fn code_html(s: &str) -> String {
    let escape = |t: &str| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;")
    };
    code_spans(s)
        .into_iter()
        .map(|(t, code)| {
            if code {
                format!("<code>{}</code>", escape(&t))
            } else {
                escape(&t)
            }
        })
        .collect()
}

impl CapacityView {
    /// The view of `report`; `None` when no sweep was measured on either side
    /// ([`CapacityReport::has_sweep`]).
    pub fn new(report: &CapacityReport) -> Option<CapacityView> {
        if !report.has_sweep() {
            return None;
        }
        let tables = render::sweep_tables(report);
        let mut curves = Vec::new();
        for (s, t) in report.sweeps.iter().zip(&tables) {
            for pc in &s.profiles {
                let mut loads: Vec<f64> = pc
                    .baseline
                    .points
                    .iter()
                    .chain(&pc.candidate.points)
                    .map(|p| p.load)
                    .collect();
                loads.sort_by(f64::total_cmp);
                loads.dedup();
                let at = |curve: &benchtrail_core::capacity::SloCurve, load: f64| {
                    curve.points.iter().find(|p| p.load == load).cloned()
                };
                let pct = |p: &Option<benchtrail_core::capacity::LoadAttainment>| {
                    p.as_ref()
                        .map(|p| exact(p.attainment * 100.0))
                        .unwrap_or_default()
                };
                let pct_text = |p: &Option<benchtrail_core::capacity::LoadAttainment>| {
                    p.as_ref().map_or("—".to_string(), |p| {
                        format!("{} %", display_number(p.attainment * 100.0))
                    })
                };
                let goodput = |p: &Option<benchtrail_core::capacity::LoadAttainment>| {
                    p.as_ref().map_or("—".to_string(), |p| {
                        format!("{} req/s", display_number(p.goodput_rps))
                    })
                };
                let rows = loads
                    .into_iter()
                    .map(|load| {
                        let (b, c) = (at(&pc.baseline, load), at(&pc.candidate, load));
                        CurveRow {
                            load: exact(load),
                            baseline: pct(&b),
                            candidate: pct(&c),
                            baseline_text: pct_text(&b),
                            candidate_text: pct_text(&c),
                            baseline_goodput_exact: b
                                .as_ref()
                                .map(|p| exact(p.goodput_rps))
                                .unwrap_or_default(),
                            candidate_goodput_exact: c
                                .as_ref()
                                .map(|p| exact(p.goodput_rps))
                                .unwrap_or_default(),
                            baseline_goodput: goodput(&b),
                            candidate_goodput: goodput(&c),
                        }
                    })
                    .collect();
                curves.push(CurveView {
                    id: format!("capacity-curve-{}", curves.len()),
                    title: format!("{} on the {}", pc.profile, t.label),
                    load_unit: format::unit_text(pc.baseline.load_unit).to_string(),
                    target_pct: exact(report.target * 100.0),
                    rows,
                });
            }
        }
        Some(CapacityView {
            summary: render::summary(report),
            tables,
            not_compared: render::not_compared(report),
            curves,
        })
    }
}

/// What a compare page compares the candidate with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareMode {
    /// The candidate's stored analysis: the baseline its verdict used.
    Analysis,
    /// Two runs named: described, never tested.
    Runs,
}

impl CompareMode {
    /// `analysis` or `runs` (the page's `data-mode`).
    pub fn as_str(self) -> &'static str {
        match self {
            CompareMode::Analysis => "analysis",
            CompareMode::Runs => "runs",
        }
    }
}

/// A run as the page names it.
#[derive(Debug, Clone)]
pub struct RunLink {
    /// Run id.
    pub id: String,
    /// Short commit SHA.
    pub short_sha: String,
    /// Full SHA.
    pub commit_sha: String,
    /// Commit subject, or empty.
    pub subject: String,
    /// Branch.
    pub branch: String,
}

impl RunLink {
    /// The link of a stored run.
    pub fn new(run: &StoredRun) -> RunLink {
        RunLink {
            id: run.summary.id.to_string(),
            short_sha: short_sha(&run.summary.commit_sha),
            commit_sha: run.summary.commit_sha.clone(),
            subject: run.summary.commit_subject.clone().unwrap_or_default(),
            branch: run.summary.branch.clone(),
        }
    }
}

/// One group (configuration and cell).
#[derive(Debug, Clone)]
pub struct CellView {
    /// Anchor id (`cell-0`, ...).
    pub anchor: String,
    /// Configuration title (model · hardware · engine ...).
    pub title: String,
    /// Cell key.
    pub cell: String,
    /// Where the baseline came from, in words.
    pub baseline_rule: String,
    /// The baseline commits the tests used, short SHAs joined, or empty.
    pub baseline_commits: String,
    /// Findings: (kind, summary), trade-offs first.
    pub findings: Vec<(String, String)>,
    /// Changes the test could not decide, with what would decide them.
    pub undecided: Vec<String>,
    /// Rows: trade-off, regression, improvement, then the others; each in display order.
    pub rows: Vec<RowView>,
    /// Rows whose state is a finding.
    pub finding_rows: usize,
    /// Configuration fields that differ between the baseline run's and the candidate's
    /// result of this cell.
    pub differences: Vec<DiffView>,
    /// Confound warnings of those differences (one sentence each).
    pub confound_warnings: Vec<(String, String)>,
    /// Per-request TTFT and TPOT distributions of both sides, where samples exist.
    pub distributions: Vec<DistributionView>,
}

/// A per-request metric's distribution on both sides of one cell, drawn as two CDFs by
/// `/static/compare.js` from `baseline`/`candidate`, with a quantile table as its text.
#[derive(Debug, Clone)]
pub struct DistributionView {
    /// Element id.
    pub id: String,
    /// Metric name (`ttft`, `tpot`).
    pub metric: String,
    /// `TTFT`, `TPOT`.
    pub label: String,
    /// Requests behind each side: (baseline, candidate).
    pub counts: (usize, usize),
    /// Baseline CDF as `value:share` pairs joined by `,` (exact numbers), or empty.
    pub baseline: String,
    /// Candidate CDF, the same.
    pub candidate: String,
    /// (quantile label, baseline value text, candidate value text), p50 to p99.
    pub quantiles: Vec<(String, String, String)>,
}

/// Most points of one side's CDF on the page.
const CDF_POINTS: usize = 200;

impl DistributionView {
    /// The distributions of `metric` in the baseline's and the candidate's samples of one cell
    /// (`None` for a side without samples); `None` when neither side has values.
    pub fn new(
        id: String,
        metric: benchtrail_core::report::distribution::PerRequest,
        baseline: Option<&benchtrail_core::samples::RequestSamples>,
        candidate: Option<&benchtrail_core::samples::RequestSamples>,
    ) -> Option<DistributionView> {
        use benchtrail_core::report::distribution::{empirical_cdf, nearest_rank};
        let b = baseline.and_then(|s| metric.values(s)).unwrap_or_default();
        let c = candidate.and_then(|s| metric.values(s)).unwrap_or_default();
        if b.is_empty() && c.is_empty() {
            return None;
        }
        // Written into one string: 36 cells × 2 metrics × 2 sides × 200 points, one
        // allocation per number was a tenth of the compare page.
        let pairs = |v: &[f64]| {
            let mut out = String::new();
            for (i, p) in empirical_cdf(v, CDF_POINTS).iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                // The shortest text that reads back to the same number, as `exact` writes it.
                super::format::push_exact(&mut out, p.value);
                out.push(':');
                super::format::push_exact(&mut out, p.share);
            }
            out
        };
        let q = |v: &[f64], q: f64| {
            nearest_rank(v, q).map_or("—".to_string(), |x| format!("{} ms", display_number(x)))
        };
        Some(DistributionView {
            id,
            metric: metric.metric().to_string(),
            label: metric.metric().to_uppercase(),
            counts: (b.len(), c.len()),
            baseline: pairs(&b),
            candidate: pairs(&c),
            quantiles: [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)]
                .into_iter()
                .map(|(name, share)| (name.to_string(), q(&b, share), q(&c, share)))
                .collect(),
        })
    }
}

/// A configuration field that differs.
#[derive(Debug, Clone)]
pub struct DiffView {
    /// Dotted path.
    pub field: String,
    /// Label (`kv_cache_dtype`, `hardware`).
    pub label: String,
    /// Baseline value as text (`unset` when absent).
    pub baseline: String,
    /// Candidate value as text.
    pub candidate: String,
    /// Counted as a factor (not the change under test, not a restating command line).
    pub factor: bool,
}

/// One series row.
#[derive(Debug, Clone)]
pub struct RowView {
    /// Series id (its page).
    pub series_id: String,
    /// Metric name.
    pub metric: String,
    /// The series in words (`median TTFT`, `p99 E2E latency`, `output throughput`).
    pub label: String,
    /// Statistic (`p50`, `mean`, `value`).
    pub stat: String,
    /// SLO profile, or empty.
    pub profile: String,
    /// State (`tradeoff`, `regression`, `no_change`, ...).
    pub state: &'static str,
    /// The state in words.
    pub state_text: String,
    /// `worse`, `better` or `same` (direction-aware), for styling with a symbol.
    pub direction: &'static str,
    /// `▲ worse` / `▼ better` marks, never color alone.
    pub mark: &'static str,
    /// Baseline value for reading, or `—`.
    pub baseline: String,
    /// Exact baseline value, or empty.
    pub baseline_exact: String,
    /// Candidate value for reading, or `—`.
    pub candidate: String,
    /// Exact candidate value, or empty.
    pub candidate_exact: String,
    /// Unit text.
    pub unit: String,
    /// `+7.40 %`, or `—`.
    pub delta: String,
    /// Exact percent change, or empty.
    pub delta_exact: String,
    /// `[+3.10, +11.70] % at 99.9 %`, or empty.
    pub interval: String,
    /// The test and its p-value (`prediction interval, p < 0.001`), or why untested.
    pub test: String,
    /// Significant.
    pub significant: bool,
}

/// What the page knows of a series besides its row: unit and SLO profile, from the stored
/// metrics of either run.
#[derive(Debug, Clone)]
pub struct SeriesMeta {
    /// Unit.
    pub unit: Unit,
    /// SLO profile.
    pub slo_profile: Option<String>,
}

impl CellView {
    /// The view of `cell` (position `i`), with the metadata of its series, the confounds
    /// between the baseline's and the candidate's result of it and their distributions.
    pub fn new(
        i: usize,
        cell: &CompareCell,
        meta: &HashMap<String, SeriesMeta>,
        confounds: Option<&ConfoundReport>,
        distributions: Vec<DistributionView>,
    ) -> CellView {
        let mut rows: Vec<(&CompareRow, RowView)> = cell
            .rows
            .iter()
            .map(|r| (r, RowView::new(r, meta.get(&r.series_id))))
            .collect();
        rows.sort_by_cached_key(|(r, v)| {
            (
                state_rank(r.state),
                benchtrail_core::metric::display_order(&r.metric, &r.stat),
                format::profile_order(
                    Some(&v.profile)
                        .filter(|p| !p.is_empty())
                        .map(|p| p.as_str()),
                ),
            )
        });
        let finding_rows = cell.rows.iter().filter(|r| r.state.is_finding()).count();
        CellView {
            anchor: format!("cell-{i}"),
            title: key_title(&cell.series_key),
            cell: cell.cell.clone(),
            baseline_rule: cell.baseline_rule.clone(),
            baseline_commits: cell
                .baseline_commits
                .iter()
                .map(|c| short_sha(c))
                .collect::<Vec<_>>()
                .join(" "),
            findings: cell
                .findings
                .iter()
                .map(|(k, s)| (k.as_str().to_string(), s.clone()))
                .collect(),
            undecided: cell.undecided.clone(),
            rows: rows.into_iter().map(|(_, v)| v).collect(),
            finding_rows,
            differences: confounds.map_or_else(Vec::new, |c| {
                c.differences
                    .iter()
                    .map(|d| DiffView {
                        field: d.field.clone(),
                        label: field_label(&d.field),
                        baseline: value_text(&d.baseline),
                        candidate: value_text(&d.candidate),
                        factor: c.factors.contains(&d.field),
                    })
                    .collect()
            }),
            distributions,
            confound_warnings: confounds.map_or_else(Vec::new, |c| {
                c.warnings
                    .iter()
                    .map(|w| (w.code.clone(), w.message.clone()))
                    .collect()
            }),
        }
    }
}

/// Trade-off rows first, then regressions, improvements, and the rest.
fn state_rank(s: RowState) -> u8 {
    match s {
        RowState::Tradeoff => 0,
        RowState::Series(SeriesState::Regression) => 1,
        RowState::Series(SeriesState::Improvement) => 2,
        RowState::Series(_) => 3,
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Null => "unset".into(),
        other => format::value_text(other),
    }
}

impl RowView {
    /// The view of one row.
    pub fn new(r: &CompareRow, meta: Option<&SeriesMeta>) -> RowView {
        let number = |v: Option<f64>| v.map_or_else(|| "—".to_string(), display_number);
        let exact_of = |v: Option<f64>| v.map(exact).unwrap_or_default();
        let (direction, mark) = match r.better {
            Some(true) => ("better", "▼ better"),
            Some(false) => ("worse", "▲ worse"),
            None => ("same", ""),
        };
        // A throughput that is better went up: the mark follows the value, the word the
        // direction.
        let mark = match (r.better, r.delta_pct) {
            (Some(true), Some(d)) if d > 0.0 => "▲ better",
            (Some(false), Some(d)) if d < 0.0 => "▼ worse",
            _ => mark,
        };
        RowView {
            series_id: r.series_id.clone(),
            metric: r.metric.clone(),
            label: benchtrail_core::regression::describe(&r.metric, &r.stat),
            stat: r.stat.to_string(),
            profile: meta.and_then(|m| m.slo_profile.clone()).unwrap_or_default(),
            state: r.state.as_str(),
            state_text: state_text(r.state).to_string(),
            direction,
            mark,
            baseline: number(r.baseline),
            baseline_exact: exact_of(r.baseline),
            candidate: number(r.candidate),
            candidate_exact: exact_of(r.candidate),
            unit: meta.map_or("", |m| format::unit_text(m.unit)).to_string(),
            delta: r.delta_pct.map_or_else(|| "—".to_string(), signed_pct),
            delta_exact: exact_of(r.delta_pct),
            interval: match (r.ci_pct, r.level) {
                (Some((lo, hi)), Some(level)) => format!(
                    "[{}, {}] at {}",
                    signed_pct(lo),
                    signed_pct(hi),
                    format::level_text(level)
                ),
                _ => String::new(),
            },
            test: test_text(r),
            significant: r.significant,
        }
    }
}

/// `+7.40 %`, `-3.10 %`, `0.00 %`.
fn signed_pct(v: f64) -> String {
    if v > 0.0 {
        format!("+{v:.2} %")
    } else {
        format!("{v:.2} %")
    }
}

/// The state in words, as the page's legend gives it.
fn state_text(s: RowState) -> &'static str {
    match s {
        RowState::Tradeoff => "trade-off",
        RowState::Series(s) => match s {
            // Tested and not significant, whatever its size: never "no change" for a +100 %
            // the history cannot decide.
            SeriesState::NoChange => "not significant",
            SeriesState::Regression => "regression",
            SeriesState::Improvement => "improvement",
            SeriesState::InsufficientData => "insufficient data",
            SeriesState::Missing => "missing",
            SeriesState::NotMeasured => "not measured",
            SeriesState::Descriptive => "descriptive",
            SeriesState::PendingConfirmation => "pending confirmation",
            SeriesState::NotConfirmed => "not confirmed",
            SeriesState::NoBaseline => "no baseline",
            SeriesState::WorkloadMismatch => "workload mismatch",
        },
    }
}

/// The test and its p-value, or why the series was not tested (an effect-only comparison
/// says why it is one).
fn test_text(r: &CompareRow) -> String {
    if let Some(t) = r.test.filter(|_| r.untested.is_none()) {
        let name = test_name(t);
        let n =
            r.n.map(|(b, c)| format!(", {b} baseline / {c} candidate values"))
                .unwrap_or_default();
        let own = match r.p_value {
            Some(p) => format!("{name}, {}{n}", benchtrail_core::regression::p_phrase(p)),
            None => format!("{name}{n}"),
        };
        // The state came from another test (the family's combined index): name it first, so
        // the p beside this series' own interval is not read as the deciding one.
        return match r.decided_by {
            Some(d) => {
                let p = d
                    .p_value
                    .map(|p| format!(", {}", benchtrail_core::regression::p_phrase(p)))
                    .unwrap_or_default();
                format!(
                    "decided by the {}{p}; this series: {own}",
                    test_name(d.test)
                )
            }
            None => own,
        };
    }
    untested_text(r.untested)
}

/// A test's name as the page says it.
fn test_name(t: Test) -> &'static str {
    {
        match t {
            Test::WelchT => "Welch's t",
            Test::PredictionInterval => "prediction interval on commit means",
            Test::PinnedT => "t against the pinned level",
            Test::ZeroSpread => "zero spread: decided on the effect",
            Test::EffectOnly => "effect only",
            Test::FamilyIndex => "family index (this metric's statistics in this cell, combined)",
            Test::EDivisive => "E-Divisive",
            Test::Tradeoff => "trade-off",
            Test::Missing => "missing",
            Test::MannWhitneyU => "Mann–Whitney U",
        }
    }
}

/// Why a series was not tested, as the page says it (empty for a tested one).
fn untested_text(untested: Option<Untested>) -> String {
    match untested {
        Some(Untested::OneValuePerSide) => "not tested: one value per side".into(),
        Some(Untested::TooFewBaselineCommits { have, need }) => {
            format!("not tested: {have} of {need} baseline commits")
        }
        Some(Untested::StatisticNotTested) => "not tested: statistic not tested".into(),
        Some(Untested::Descriptive) => "descriptive".into(),
        Some(Untested::NoBaseline) => "not tested: no baseline".into(),
        Some(Untested::WorkloadConfound) => "not tested: different workload".into(),
        Some(Untested::AbsentFromCandidate) => "absent from the candidate".into(),
        Some(Untested::NotMeasured) => "not measured".into(),
        Some(Untested::NoValidCandidate) => "not tested: no valid candidate run".into(),
        Some(Untested::PinnedWithoutRun) => "not tested: pinned commit has no valid run".into(),
        None => String::new(),
    }
}
