//! A run's verdict (pass / warn / incomplete / fail, with reasons) from its stored analysis
//! ([`RunAnalysis`]) and the current alerts of its commit: the rules CI, the PR comment and
//! the pages all act on.
//!
//! # Levels, lowest first
//! * `pass`: every cell of the baseline commit is there and nothing was found or left untested.
//! * `warn`: look at it (a small regression under `fail_severity: fail`, insufficient data, a
//!   new cell, a series not measured, a provisional finding while repeats are pending, ...).
//! * `incomplete`: a cell of the baseline commit is missing from this commit
//!   (`detection.incomplete_fails`, default true; false makes it a `warn`). Fails CI like
//!   `fail`: the values that are there were judged, but not everything was.
//! * `fail`: a regression or trade-off that fails by the detection settings, or an invalid run.
//! * `pending`: not analyzed yet (the analysis is queued or being retried after a failure;
//!   every acknowledged upload is analyzed, see the server's `analysis::jobs`). Nothing is
//!   decided, so it ranks above `fail` where the verdicts of several runs are combined: a
//!   commit is not settled while one of its runs is pending. It does not fail CI by itself;
//!   a gate waits for it to settle (`benchtrail check --wait`).
//!
//! While the commit has fewer runs than expected (`detection.repeats`, or the
//! `run.repeats_expected` its uploads announced; counted for its least measured cell,
//! [`Repeats::of`]), the verdict is provisional: a
//! `pending_repeats` reason, every `fail` or `incomplete` reason lowered to `warn` (and no
//! alert opened), so the verdict is at most `warn` until the last repeat is in.

use super::coverage::{CellGap, Coverage, HeldFinding, NotMeasured, Repeats, RepeatsSource};
use super::model::RunAnalysis;
use super::verdict_basis::VerdictBasis;
use crate::regression::confounds::ConfoundCode;
use crate::regression::{FindingKind, SeriesState, Severity};
use crate::settings::DetectionSettings;
use crate::wire::Alert;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uuid::Uuid;

/// The level of a verdict or of one reason, lowest first (`Ord` follows it).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum VerdictLevel {
    /// Nothing found, nothing left untested.
    Pass,
    /// Look at it; does not fail CI.
    Warn,
    /// A cell of the baseline commit is missing: fails CI (exit 3 in the CLI).
    Incomplete,
    /// A regression or trade-off that fails by the settings, or an invalid run: fails CI.
    Fail,
    /// Not analyzed yet: nothing decided (a gate waits; see the module documentation).
    Pending,
}

impl VerdictLevel {
    /// `pass`, `warn`, `incomplete` or `fail`.
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictLevel::Pass => "pass",
            VerdictLevel::Warn => "warn",
            VerdictLevel::Incomplete => "incomplete",
            VerdictLevel::Fail => "fail",
            VerdictLevel::Pending => "pending",
        }
    }

    /// Whether CI fails on it (`incomplete` or `fail`; `pending` is not decided yet).
    pub fn fails_ci(self) -> bool {
        matches!(self, VerdictLevel::Incomplete | VerdictLevel::Fail)
    }
}

/// What a reason is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    /// An alert: the candidate is significantly worse.
    Regression,
    /// An alert: throughput better while latency or goodput worse.
    Tradeoff,
    /// An alert: a series of the baseline is absent.
    Missing,
    /// An alert of the change-point scan.
    ChangePoint,
    /// An improvement (held while repeats are pending; improvements never count otherwise).
    Improvement,
    /// Too few baseline commits: not tested.
    InsufficientData,
    /// The effect described without a test (insufficient data).
    EffectOnly,
    /// A candidate run that is not valid (its health, or excluded by a person).
    InvalidRun,
    /// Significant, waiting for the confirming commits.
    PendingConfirmation,
    /// A change an earlier commit's standing alert already holds.
    Continuing,
    /// The run is not analyzed yet (its analysis is queued or being retried): level `pending`.
    NotAnalyzed,
    /// A cell of the baseline commit this commit lacks.
    MissingCell,
    /// A cell with no baseline yet.
    NewCell,
    /// Series of a present cell absent this time.
    NotMeasured,
    /// Fewer runs of the commit than expected: provisional.
    PendingRepeats,
    /// No earlier commit has the series; names the nearest one.
    NoBaseline,
    /// Baseline and candidate measured different mean lengths.
    WorkloadMismatch,
    /// The measured output ≈ input + requested output.
    PromptCountedAsOutput,
    /// SGLang's re-tokenized output well below its reported output.
    OutputLenMismatch,
    /// The run measured a mean length far from the one its cell requested.
    RequestedLenMismatch,
    /// A change for the worse of at least `fail_effect_pct` the test could not decide (too
    /// little history or too few repeats): the verdict is at least `warn`.
    Undecided,
    /// Quantization (weights or KV-cache dtype) differs from the baseline's and the candidate
    /// has no quality result for the baseline's tasks (`quantization_without_quality`): speed
    /// does not prove correctness. At least `warn`.
    QuantizationWithoutQuality,
}

impl ReasonCode {
    /// The snake_case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::Regression => "regression",
            ReasonCode::Tradeoff => "tradeoff",
            ReasonCode::Missing => "missing",
            ReasonCode::ChangePoint => "change_point",
            ReasonCode::Improvement => "improvement",
            ReasonCode::InsufficientData => "insufficient_data",
            ReasonCode::EffectOnly => "effect_only",
            ReasonCode::InvalidRun => "invalid_run",
            ReasonCode::PendingConfirmation => "pending_confirmation",
            ReasonCode::Continuing => "continuing",
            ReasonCode::NotAnalyzed => "not_analyzed",
            ReasonCode::MissingCell => "missing_cell",
            ReasonCode::NewCell => "new_cell",
            ReasonCode::NotMeasured => "not_measured",
            ReasonCode::PendingRepeats => "pending_repeats",
            ReasonCode::NoBaseline => "no_baseline",
            ReasonCode::WorkloadMismatch => "workload_mismatch",
            ReasonCode::PromptCountedAsOutput => "prompt_counted_as_output",
            ReasonCode::OutputLenMismatch => "output_len_mismatch",
            ReasonCode::RequestedLenMismatch => "requested_len_mismatch",
            ReasonCode::Undecided => "undecided",
            ReasonCode::QuantizationWithoutQuality => "quantization_without_quality",
        }
    }

    /// The reason code of a finding of `kind`.
    pub fn of_finding(kind: FindingKind) -> ReasonCode {
        match kind {
            FindingKind::Regression => ReasonCode::Regression,
            FindingKind::Improvement => ReasonCode::Improvement,
            FindingKind::Tradeoff => ReasonCode::Tradeoff,
            FindingKind::ChangePoint => ReasonCode::ChangePoint,
            FindingKind::Missing => ReasonCode::Missing,
        }
    }

    fn of_confound(code: ConfoundCode) -> ReasonCode {
        match code {
            ConfoundCode::WorkloadMismatch => ReasonCode::WorkloadMismatch,
            ConfoundCode::PromptCountedAsOutput => ReasonCode::PromptCountedAsOutput,
            ConfoundCode::OutputLenMismatch => ReasonCode::OutputLenMismatch,
            ConfoundCode::RequestedLenMismatch => ReasonCode::RequestedLenMismatch,
        }
    }
}

/// One reason of a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Reason {
    /// `fail`, `incomplete` or `warn` (never `pass`).
    pub level: VerdictLevel,
    /// What it is about.
    pub code: ReasonCode,
    /// One sentence.
    pub message: String,
    /// The alert behind it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alert_id: Option<Uuid>,
    /// The result's cell, where it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<String>,
}

/// `GET /api/v1/runs/{id}/verdict`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Verdict {
    /// `pass`, `warn`, `incomplete` or `fail` (lowest first; `incomplete` and `fail` fail CI).
    pub verdict: VerdictLevel,
    /// True while the commit has fewer runs than expected (`repeats`): the verdict is at most
    /// `warn` and becomes final with the last repeat's upload.
    pub provisional: bool,
    /// Why; empty for `pass`.
    pub reasons: Vec<Reason>,
    /// Cells of the baseline commit this commit lacks (they make it `incomplete`).
    pub missing_cells: Vec<CellGap>,
    /// Cells of this run with no baseline yet.
    pub new_cells: Vec<CellGap>,
    /// Series of this run's cells that have a history but were not measured this time.
    pub not_measured: Vec<NotMeasured>,
    /// The commit's runs against those expected; absent for a run analyzed before repeats
    /// were counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
    /// The run.
    pub run_id: Uuid,
    /// Its commit.
    pub commit: String,
    /// Project settings version of the analysis.
    pub settings_version: Option<i64>,
    /// Number of series per state (`no_change`, `regression`, `insufficient_data`, ...).
    pub series_states: BTreeMap<String, usize>,
    /// The queued analysis of the run's commit, while there is one: the reason of a `pending`
    /// verdict, or (for a verdict of an earlier analysis) the analysis that will replace it,
    /// e.g. after another repeat's upload. Absent when nothing is queued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued_analysis: Option<QueuedAnalysis>,
}

/// An analysis waiting in the server's durable queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct QueuedAnalysis {
    /// When it was first asked for (RFC 3339 UTC).
    pub queued_at: chrono::DateTime<chrono::Utc>,
    /// Attempts started so far; more than one means earlier attempts failed (the server
    /// retries with back-off; the causes are in its log).
    pub attempts: i64,
    /// The earliest next attempt (RFC 3339 UTC).
    pub next_attempt_at: chrono::DateTime<chrono::Utc>,
    /// A worker is analyzing it now.
    pub running: bool,
}

impl Verdict {
    /// Adds a `warn` reason of `code` (about `cell`, when given), raising a `pass` verdict to
    /// `warn`; a higher verdict stays. For what a comparison finds beyond the stored analysis,
    /// e.g. [`ReasonCode::QuantizationWithoutQuality`] on the compare page.
    pub fn add_warning(&mut self, code: ReasonCode, message: String, cell: Option<&str>) {
        self.reasons
            .push(Reason::new(VerdictLevel::Warn, code, message, cell));
        self.verdict = self.verdict.max(VerdictLevel::Warn);
    }
}

impl Reason {
    fn new(level: VerdictLevel, code: ReasonCode, message: String, cell: Option<&str>) -> Reason {
        Reason {
            level,
            code,
            message,
            alert_id: None,
            cell: cell.map(str::to_string),
        }
    }
}

/// Whether a finding of `kind`, `metric` and `severity` fails CI by the detection settings:
/// a trade-off when `tradeoff_fails`, a regression of a `fail_metrics` metric; either only at
/// `fail` severity unless `fail_severity` is `warn`.
pub fn fails_by_settings(
    kind: FindingKind,
    metric: &str,
    severity: Option<Severity>,
    det: &DetectionSettings,
) -> bool {
    let severe_enough = det.fail_severity == "warn" || severity == Some(Severity::Fail);
    severe_enough
        && match kind {
            FindingKind::Tradeoff => det.tradeoff_fails,
            FindingKind::Regression => det.fail_metrics.iter().any(|m| m == metric),
            _ => false,
        }
}

/// The verdict of run `run_id` at `commit` from its stored `analysis` (`None`: never analyzed)
/// and the current `alerts` of its commit (so a dismissal changes it).
pub fn verdict_of(
    run_id: Uuid,
    commit: &str,
    analysis: Option<&RunAnalysis>,
    alerts: &[Alert],
    det: &DetectionSettings,
) -> Verdict {
    let basis = analysis.map(VerdictBasis::of);
    verdict_from_basis(run_id, commit, basis.as_ref(), alerts, det)
}

/// [`verdict_of`] from the analysis' [`VerdictBasis`] (`None`: never analyzed): the same
/// verdict, for a reader that stored or decoded only the basis.
pub fn verdict_from_basis(
    run_id: Uuid,
    commit: &str,
    analysis: Option<&VerdictBasis>,
    alerts: &[Alert],
    det: &DetectionSettings,
) -> Verdict {
    use VerdictLevel::{Fail, Warn};
    let mut reasons = Vec::new();
    let empty = Vec::new();
    let groups = analysis.map_or(&empty, |a| &a.groups);
    let cov = analysis.map(|a| a.coverage.clone()).unwrap_or_default();
    let mut states: BTreeMap<String, usize> = BTreeMap::new();
    let mine: std::collections::HashSet<&str> = groups
        .iter()
        .flat_map(|g| g.report.series.iter().map(|s| s.series_id.as_str()))
        .collect();
    for g in groups {
        for s in &g.report.series {
            *states.entry(s.state.as_str().to_string()).or_default() += 1;
        }
    }
    for a in alerts {
        if !a.status.is_active() || !a.series_ids.iter().any(|s| mine.contains(s.as_str())) {
            continue;
        }
        let kind = FindingKind::from(a.kind);
        let severity = a.severity.as_deref().and_then(Severity::parse);
        let fails = fails_by_settings(kind, &a.metric, severity, det);
        reasons.push(Reason {
            alert_id: Some(a.id),
            ..Reason::new(
                if fails { Fail } else { Warn },
                ReasonCode::of_finding(a.kind.into()),
                a.summary.clone(),
                Some(&a.cell),
            )
        });
    }
    for g in groups {
        let cell = Some(g.cell.as_str());
        for w in &g.invalid_runs {
            // A run that failed by its own health (too many failed or too few completed
            // requests) fails CI when the project says so; one a person excluded only warns.
            let fails = det.invalid_run_fails && !w.excluded_by_person;
            let level = if fails { Fail } else { Warn };
            reasons.push(Reason::new(
                level,
                ReasonCode::InvalidRun,
                w.message.clone(),
                cell,
            ));
        }
        for c in &g.continuing {
            reasons.push(Reason {
                alert_id: Some(c.alert_id),
                ..Reason::new(
                    Warn,
                    ReasonCode::Continuing,
                    format!(
                        "still there, from commit {} ({} alert): {}",
                        super::short(&c.commit),
                        c.status.as_str(),
                        c.summary
                    ),
                    cell,
                )
            });
        }
        // A change for the worse of at least `fail_effect_pct` in a metric that fails CI, which
        // the test could not decide: never "no regressions" while it stands.
        for u in g.report.undecided.iter().filter(|u| {
            !u.better
                && u.delta_pct.abs() >= det.engine.fail_effect_pct
                && det
                    .fail_metrics
                    .iter()
                    .any(|m| crate::regression::family::family_of(m) == u.family.family)
        }) {
            reasons.push(Reason::new(
                Warn,
                ReasonCode::Undecided,
                u.summary.clone(),
                cell,
            ));
        }
        let in_state =
            |state: SeriesState| g.report.series.iter().filter(move |s| s.state == state);
        let pending = in_state(SeriesState::PendingConfirmation).count();
        if pending > 0 {
            reasons.push(Reason::new(
                Warn,
                ReasonCode::PendingConfirmation,
                format!(
                    "{pending} series changed significantly and wait for the next {} commit(s) to confirm it before an alert opens",
                    det.engine.confirm_commits
                ),
                cell,
            ));
        }
        let no_baseline: Vec<_> = in_state(SeriesState::NoBaseline).collect();
        if let Some(first) = no_baseline.first() {
            reasons.push(Reason::new(
                Warn,
                ReasonCode::NoBaseline,
                format!(
                    "{} series not tested ({})",
                    no_baseline.len(),
                    first.reason.as_deref().unwrap_or("no baseline")
                ),
                cell,
            ));
        }
        for c in &g.report.workload {
            reasons.push(Reason::new(
                Warn,
                ReasonCode::of_confound(c.code),
                c.message.clone(),
                cell,
            ));
        }
        let insufficient: Vec<_> = in_state(SeriesState::InsufficientData).collect();
        let is_new = cov
            .new_cells
            .iter()
            .any(|n| n.cell == g.cell && n.series_key == g.series_key);
        if let Some(first) = insufficient.first().filter(|_| !is_new) {
            reasons.push(Reason::new(
                Warn,
                ReasonCode::InsufficientData,
                format!(
                    "insufficient data: {} series not tested ({})",
                    insufficient.len(),
                    first.reason.as_deref().unwrap_or("too little history")
                ),
                cell,
            ));
        }
        for f in g
            .effect_only
            .iter()
            .filter(|f| f.kind != FindingKind::Improvement)
        {
            reasons.push(Reason::new(
                Warn,
                ReasonCode::EffectOnly,
                format!("effect only, not tested (insufficient data): {}", f.summary),
                cell,
            ));
        }
    }
    if analysis.is_none() {
        reasons.push(Reason::new(
            VerdictLevel::Pending,
            ReasonCode::NotAnalyzed,
            "not analyzed yet: the analysis is queued (or retried after a failure)".into(),
            None,
        ));
    }
    coverage_reasons(&cov, det, &mut reasons);
    let provisional = cov.repeats.as_ref().is_some_and(Repeats::pending);
    // The highest level among the reasons (`pass` when there is none).
    let verdict = reasons
        .iter()
        .map(|r| r.level)
        .max()
        .unwrap_or(VerdictLevel::Pass);
    Verdict {
        verdict,
        provisional,
        reasons,
        missing_cells: cov.missing_cells,
        new_cells: cov.new_cells,
        not_measured: cov.not_measured,
        repeats: cov.repeats,
        run_id,
        commit: commit.to_string(),
        settings_version: analysis.map(|a| a.settings_version),
        series_states: states,
        queued_analysis: None,
    }
}

/// The reasons of what the commit covers: missing cells (`incomplete`), new cells and
/// series not measured (`warn`), and, while repeats are pending, the held findings and
/// `pending_repeats`, with every `fail` or `incomplete` reason lowered to `warn`.
fn coverage_reasons(cov: &Coverage, det: &DetectionSettings, reasons: &mut Vec<Reason>) {
    use VerdictLevel::{Incomplete, Warn};
    let missing_level = if det.incomplete_fails {
        Incomplete
    } else {
        Warn
    };
    // Missing cells first: what was not judged comes before what was.
    let missing = cov.missing_cells.iter().map(|g| {
        Reason::new(
            missing_level,
            ReasonCode::MissingCell,
            g.message.clone(),
            Some(&g.cell),
        )
    });
    reasons.splice(0..0, missing);
    for g in &cov.new_cells {
        // A `no_baseline` reason of the cell already says it, naming the nearest series.
        let said = reasons
            .iter()
            .any(|r| r.code == ReasonCode::NoBaseline && r.cell.as_deref() == Some(&g.cell));
        if !said {
            reasons.push(Reason::new(
                Warn,
                ReasonCode::NewCell,
                g.message.clone(),
                Some(&g.cell),
            ));
        }
    }
    for n in &cov.not_measured {
        reasons.push(Reason::new(
            Warn,
            ReasonCode::NotMeasured,
            n.message.clone(),
            Some(&n.cell),
        ));
    }
    let Some(r) = cov.repeats.as_ref().filter(|r| r.pending()) else {
        return;
    };
    let of = format!("{} of {} repeats", r.received, r.expected);
    for h in &cov.held {
        reasons.push(held_reason(h, &of, det));
    }
    for x in reasons.iter_mut() {
        if x.level.fails_ci() {
            x.message = format!(
                "provisional ({of} in, would be {}): {}",
                x.level.as_str(),
                x.message
            );
            x.level = Warn;
        }
    }
    reasons.push(Reason::new(
        Warn,
        ReasonCode::PendingRepeats,
        format!(
            "{of} of {} are in ({}): the verdict is provisional and becomes final with the last repeat's upload",
            match &r.fewest_cell {
                Some(cell) => format!("cell `{cell}` of this commit (its least measured)"),
                None => "this commit".to_string(),
            },
            match r.source {
                RepeatsSource::Run => "as its uploads announced",
                RepeatsSource::Settings => "detection.repeats",
            }
        ),
        None,
    ));
}

/// The provisional `warn` of a finding held while repeats are pending.
fn held_reason(h: &HeldFinding, of: &str, det: &DetectionSettings) -> Reason {
    let would = if fails_by_settings(h.kind, &h.metric, h.severity, det) {
        "would be fail"
    } else {
        "would be warn"
    };
    Reason::new(
        VerdictLevel::Warn,
        ReasonCode::of_finding(h.kind),
        format!(
            "provisional ({of} in, {would}, no alert yet): {}",
            h.summary
        ),
        Some(&h.cell),
    )
}
