//! The detection engine: regressions, improvements, trade-offs, change points, missing series
//! and confounds, as pure functions over plain data.
//!
//! # Shapes
//! * A **series** is one (series key, cell, metric, statistic[, SLO profile]) with an id
//!   ([`crate::series::series_id`]). Its input is a [`SeriesInput`]: the base branch's
//!   `history` (commits oldest first, each with one or more [`RunValue`]s = repeats, optionally
//!   with per-request samples), the `candidate` commit's runs (`None` when the candidate run
//!   lacks the series) and, for confirmation, the commits that `follow` the candidate.
//! * A **group** ([`GroupInput`]) is every series of one result: same series key and cell. The
//!   trade-off rule works within a group.
//! * Values are in the metric's vocabulary unit (ms, tok/s, req/s, %); `delta_pct` is percent of
//!   the baseline mean, positive = the candidate's number is larger (whether that is better
//!   comes from the metric's [`Direction`], never from its name).
//!
//! # Method
//! * **Baseline**: the last [`Settings::baseline_window`] commits of `history` that have at least
//!   one valid run (excluded/failed runs never enter it); a pinned baseline commit overrides the
//!   window. Fewer than [`Settings::min_baseline_commits`] such commits → state
//!   `insufficient_data` (a state, never an alert and never a pass).
//! * **Tested statistics**: only [`Settings::tested_stats`] (value, mean, p50, p90, p95, p99
//!   by default); the others are descriptive. A change from a baseline of exactly 0 (no failed
//!   request) is a finding for counts and percentages, with no percent.
//! * **Missing series**: a series absent from a candidate result that is there is
//!   `not_measured` (a gap, no finding); when the whole result (cell) is absent, its series
//!   are `missing`, one `missing` finding listing them.
//! * **Tests**: a change is a finding when its relative effect is at least
//!   [`Settings::min_effect_pct`] **and** it is significant at [`Settings::alpha`] against
//!   run-to-run variation: Welch's t-test (Welch 1947) of the candidate's repeats against the
//!   baseline runs when the candidate has ≥ 2 runs (the candidate's variance floored at the
//!   baseline's pooled within-commit variance, see [`significance::welch`]), otherwise the t
//!   statistic of a prediction
//!   interval for one new value from the baseline runs (the z-score thresholds of Conbench's
//!   lookback z-score and Bencher's `z_score`/`t_test`). See [`significance`].
//! * **Trade-off** (within a group): throughput (`request_throughput` or `output_throughput`)
//!   improved while TTFT (median or a tail percentile ≥ p90) worsened, or goodput/SLO
//!   attainment fell → one `tradeoff` finding naming both sides; the improvement of median E2E
//!   latency is added ("starts later, finishes sooner"). Its component series are not reported
//!   again as separate findings.
//! * **Change points** over a history: E-Divisive means (Matteson & James 2014), see
//!   [`edivisive`] and `testdata/regression/OTAVA.md`.
//! * **Per-request** samples give a Mann–Whitney U / Hodges–Lehmann shift with an interval,
//!   attached to a series and its finding; never a finding by itself.
//! * **Confounds**: [`confounds::confounds`].

pub mod confounds;
pub mod edivisive;
pub mod family;
mod family_findings;
pub use family_findings::{p_phrase, Undecided};
pub mod family_scan;
mod pairwise;
pub mod rates;
pub mod realistic;
pub mod significance;
pub mod synthetic;

use crate::metric::{lookup, Direction, Stat, Unit};
use edivisive::ChangePointSettings;
use serde::{Deserialize, Serialize};
pub use significance::Test;
use significance::{RequestShift, TestOutcome};
use std::collections::HashMap;

/// Version of [`Settings`]' meaning; bumped whenever a default or a rule changes, so that a
/// stored finding can be explained by the settings it records.
pub const SETTINGS_VERSION: u32 = 1;

/// Every tunable of detection, stored in project settings as `"detection": {"engine": {...}}`.
/// Each finding records the settings that produced it. Missing fields take the defaults below.
/// Project settings bound every field (`crate::settings`), the bound and its reason on the
/// field: a document that could never test anything, or that would make one analysis
/// arbitrarily expensive, is refused when it is written rather than obeyed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// [`SETTINGS_VERSION`] the settings were written for. Only the current version is
    /// accepted: a stored finding is explained by the meaning of the version it records.
    #[serde(deserialize_with = "crate::serde_int::deserialize")]
    pub version: u32,
    /// Baseline = the last this many base-branch commits with a valid run. Default 10. In
    /// [1, 100]: a longer baseline mixes older regimes into the normal and makes every upload
    /// read that much more history.
    #[serde(deserialize_with = "crate::serde_int::deserialize")]
    pub baseline_window: usize,
    /// Fewer baseline commits than this → `insufficient_data`. Default 3 (PyTorch's HUD reports
    /// insufficient data as its own state; three commits is the least that shows a spread).
    /// In [1, `baseline_window`]: 0 would test against an empty baseline, and more than the
    /// window holds would leave every series `insufficient_data` forever.
    #[serde(deserialize_with = "crate::serde_int::deserialize")]
    pub min_baseline_commits: usize,
    /// Smallest relative change, in percent of the baseline mean, that can be a finding.
    /// Default 2 %: below it a change is not worth a person's time, however significant.
    /// In [0, 1000]: a floor above a tenfold change finds nothing.
    pub min_effect_pct: f64,
    /// A regression of at least this many percent is severity `fail`, a smaller one `warn`.
    /// Default 5 %. In [`min_effect_pct`, 1000]: below `min_effect_pct` every finding would
    /// be `fail` and `warn` would mean nothing.
    pub fail_effect_pct: f64,
    /// Two-sided significance level of the family tests (per configuration; a cell's own test
    /// gets α / cells). Default 0.0005: every commit is a look (about 50 for a 50-commit
    /// history) and every upload tests a prefill family (TTFT) and decode families (TPOT, ITL,
    /// E2E, throughput) that one run-level event moves together; at 0.001 4–5 of 40 realistic
    /// noise-only histories got a false alert, at 0.0005 1–2 (`cargo bench --bench
    /// detection_rates`, BENCHMARKS.md). For comparison, Conbench's default lookback z-score
    /// threshold of 5 is a two-sided level of 6e-7.
    /// In (0, 0.1]: above it most noise-only series would get a finding.
    pub alpha: f64,
    /// Commit means the run-to-run spread is estimated from, in blocks of `baseline_window`
    /// counted back from the candidate (the level is always the last `baseline_window`).
    /// Default 30: with single runs per commit, a spread from 10 commits has 9 degrees of
    /// freedom and a t with 9 needs 4.3 standard errors for p = 0.001 where one from 30 has 27
    /// and needs 3.7; blocks keep an older step from inflating it. In [1, 200]; a value below
    /// `baseline_window` means `baseline_window` ([`Settings::spread`]).
    #[serde(deserialize_with = "crate::serde_int::deserialize")]
    pub spread_window: usize,
    /// One-sided level at which a cell's own test *supports* a change that its configuration's
    /// combined index shows at `alpha`, and at which the benefit side of a trade-off whose harm
    /// side is a finding is accepted (gatekeeping: the benefit is only asked once the harm is
    /// established). Default 0.05. In (0, 0.2].
    pub support_alpha: f64,
    /// Level of the reported confidence and prediction intervals. Default 0.95. In [0.5, 1):
    /// an interval of less than even odds describes nothing, and at 1 it is unbounded.
    pub confidence_level: f64,
    /// Require the next this many commits to show the same significant change before reporting
    /// it (PyTorch's "≥ 2 trailing violations"). Default 0 = off. At most 10 (the default
    /// baseline window): each one holds a real regression back one more commit, and a change
    /// confirmed that late is no longer news.
    #[serde(deserialize_with = "crate::serde_int::deserialize")]
    pub confirm_commits: usize,
    /// Per-request shift: at most this many requests per side (thinned evenly), since the
    /// Hodges–Lehmann estimate needs every pairwise difference. Default 1000. In [20, 5000]:
    /// the pairwise differences grow quadratically (5000 per side is 25 million per series and
    /// upload), and fewer than 20 requests give no useful interval.
    #[serde(deserialize_with = "crate::serde_int::deserialize")]
    pub per_request_max_per_side: usize,
    /// Statistics that are tested for a change (as [`Stat`] writes them: `value`, `mean`,
    /// `p50`, ...); every other statistic (min, max, std, p25, p99.9, ...) is kept, plotted and
    /// described, never a finding: one change shows in every statistic of a metric, and a tool
    /// that reports twenty percentiles would otherwise open twenty alerts for it. Default
    /// value, mean, p50, p90, p95 and p99, the statistics vLLM's and SGLang's summaries report.
    pub tested_stats: Vec<String>,
    /// Change points over history; each field bounded as [`ChangePointSettings`] says.
    pub change_points: ChangePointSettings,
    /// Largest difference, in percent of the baseline's, between the measured mean input (or
    /// output) length of the baseline and of the candidate for the pair to count as the same
    /// work; beyond it the pair is `workload_mismatch` and the metrics that length confounds
    /// get no verdict ([`confounds::workload_confounds`]). Also the tolerance of the
    /// `prompt_counted_as_output` flag, and of `requested_len_mismatch` (a run's measured mean
    /// against the length its cell requested). Default 5 %: `--random-range-ratio` and early stops
    /// move a run's mean length by a few percent, a different dataset or a broken token count
    /// by far more. In (0, 100].
    pub workload_tolerance_pct: f64,
}

impl Settings {
    /// Commit means the spread is read from: at least the baseline window.
    pub fn spread(&self) -> usize {
        self.spread_window.max(self.baseline_window)
    }

    /// Whether `stat` is among [`Settings::tested_stats`].
    pub fn tests(&self, stat: &Stat) -> bool {
        let name = stat.to_string();
        self.tested_stats.contains(&name)
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            version: SETTINGS_VERSION,
            baseline_window: 10,
            min_baseline_commits: 3,
            min_effect_pct: 2.0,
            fail_effect_pct: 5.0,
            alpha: 0.0005,
            spread_window: 30,
            support_alpha: 0.05,
            confidence_level: 0.95,
            confirm_commits: 0,
            per_request_max_per_side: 1000,
            tested_stats: ["value", "mean", "p50", "p90", "p95", "p99"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            change_points: ChangePointSettings::default(),
            workload_tolerance_pct: 5.0,
        }
    }
}

/// Metrics that are the largest value of one-second buckets of a run (vLLM's
/// `max_output_tokens_per_s`, `max_concurrent_requests`): an extreme of a few counts moves by
/// whole tokens or requests from run to run, so they are plotted and described, never tested.
pub const PEAK_METRICS: [&str; 2] = ["max_output_tokens_per_s", "max_concurrent_requests"];

/// One run's value of a series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunValue {
    /// The value, metric's unit.
    pub value: f64,
    /// The run failed or was excluded by a person: it never enters a baseline or a test.
    #[serde(default)]
    pub excluded: bool,
    /// Per-request values of the metric in this run (e.g. every request's TTFT, ms), if kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<Vec<f64>>,
}

impl RunValue {
    /// A valid run with no samples.
    pub fn new(value: f64) -> RunValue {
        RunValue {
            value,
            excluded: false,
            samples: None,
        }
    }
}

/// The per-request values of `metric` in one run's `samples`, as [`RunValue::samples`] wants
/// them: successful requests only, ms (for `itl` the pooled gaps between streamed chunks, as
/// vLLM and SGLang define it), thinned evenly to at most `max` values (the per-request shift
/// reads at most [`Settings::per_request_max_per_side`] per side anyway, and a run can hold
/// 100 000 chunk gaps). `None` for a metric without a per-request column (throughputs,
/// goodput) or a file without that column.
pub fn request_values(
    samples: &crate::samples::RequestSamples,
    metric: &str,
    max: usize,
) -> Option<Vec<f64>> {
    let ms: Vec<f64> = crate::summary::seconds(samples, metric)?
        .into_iter()
        .map(|s| s * 1000.0)
        .collect();
    (!ms.is_empty()).then(|| significance::thin(&ms, max.max(1)))
}

/// The runs of one commit (repeats are independent runs of the same commit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommitRuns {
    /// Commit SHA.
    pub commit: String,
    /// Its runs.
    pub runs: Vec<RunValue>,
}

impl CommitRuns {
    /// A commit with valid runs of these values.
    pub fn new(commit: impl Into<String>, values: &[f64]) -> CommitRuns {
        CommitRuns {
            commit: commit.into(),
            runs: values.iter().map(|&v| RunValue::new(v)).collect(),
        }
    }

    fn valid(&self) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| !r.excluded && r.value.is_finite())
            .map(|r| r.value)
            .collect()
    }

    fn valid_samples(&self) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| !r.excluded)
            .filter_map(|r| r.samples.as_ref())
            .flatten()
            .copied()
            .collect()
    }
}

/// One series to analyze.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesInput {
    /// Series id.
    pub series_id: String,
    /// Vocabulary metric name; its [`Direction`] decides better and worse.
    pub metric: String,
    /// Statistic.
    pub stat: Stat,
    /// SLO profile, for goodput and attainment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_profile: Option<String>,
    /// Base-branch history, oldest first, not including the candidate.
    pub history: Vec<CommitRuns>,
    /// The candidate commit's runs; `None` when the candidate run lacks this series.
    pub candidate: Option<CommitRuns>,
    /// Commits after the candidate, oldest first, for confirmation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub following: Vec<CommitRuns>,
}

/// Every series of one result (one series key and cell).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupInput {
    /// The series key (canonical JSON or its fingerprint), for reports.
    pub series_key: String,
    /// The cell key.
    pub cell_key: String,
    /// A pinned baseline commit: when set, the baseline is that commit's runs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_baseline: Option<String>,
    /// The series.
    pub series: Vec<SeriesInput>,
}

/// What happened to a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeriesState {
    /// Compared; no finding.
    NoChange,
    /// A regression finding (possibly folded into a trade-off).
    Regression,
    /// An improvement finding (possibly folded into a trade-off).
    Improvement,
    /// Too few baseline commits (or no valid candidate run): not tested, not passed.
    InsufficientData,
    /// In the baseline, absent from the candidate, whose whole result (cell) is absent too.
    Missing,
    /// In the baseline, absent from a candidate result that is there (the tool did not write
    /// this metric this time, e.g. a narrower `--percentile-metrics`): a gap in the series,
    /// never a finding.
    NotMeasured,
    /// A neutral (descriptive) metric or one outside the vocabulary: never a finding.
    Descriptive,
    /// Significant, waiting for the confirming commits.
    PendingConfirmation,
    /// Significant, but a following commit did not confirm it.
    NotConfirmed,
    /// No baseline at all: no earlier commit has this series (this configuration and cell).
    /// The report names the nearest series that does exist and what differs
    /// ([`GroupReport::nearest`]). Not tested, not passed.
    NoBaseline,
    /// Baseline and candidate did different work (measured mean input or output length beyond
    /// [`Settings::workload_tolerance_pct`]), or the candidate's own token counts are wrong
    /// (`prompt_counted_as_output`, `output_len_mismatch`) or are not what its cell requested
    /// (`requested_len_mismatch`), and this metric depends on that
    /// length: no regression or improvement verdict. The confound, with both numbers, is in
    /// [`GroupReport::workload`].
    WorkloadMismatch,
}

impl SeriesState {
    /// The snake_case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            SeriesState::NoChange => "no_change",
            SeriesState::Regression => "regression",
            SeriesState::Improvement => "improvement",
            SeriesState::InsufficientData => "insufficient_data",
            SeriesState::Missing => "missing",
            SeriesState::NotMeasured => "not_measured",
            SeriesState::Descriptive => "descriptive",
            SeriesState::PendingConfirmation => "pending_confirmation",
            SeriesState::NotConfirmed => "not_confirmed",
            SeriesState::NoBaseline => "no_baseline",
            SeriesState::WorkloadMismatch => "workload_mismatch",
        }
    }
}

/// Why a series was not tested (its [`SeriesReport::untested`]); serialized as
/// `{"code": "too_few_baseline_commits", "have": 2, "need": 3}` and the like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum Untested {
    /// The statistic is not among [`Settings::tested_stats`]: descriptive.
    StatisticNotTested,
    /// Neutral metric, or a peak over one-second buckets: descriptive.
    Descriptive,
    /// In the baseline, absent from the candidate (the whole cell is absent).
    AbsentFromCandidate,
    /// The candidate's result of this cell lacks the series.
    NotMeasured,
    /// A workload confound makes this metric incomparable.
    WorkloadConfound,
    /// No earlier commit has this series.
    NoBaseline,
    /// The candidate has no valid run.
    NoValidCandidate,
    /// The pinned baseline commit has no valid run of this series.
    PinnedWithoutRun,
    /// Fewer baseline commits with a valid run than [`Settings::min_baseline_commits`].
    TooFewBaselineCommits {
        /// Baseline commits with a valid run.
        have: usize,
        /// Needed.
        need: usize,
    },
    /// One value per side (a pinned baseline commit with one run): effect only.
    OneValuePerSide,
}

/// Kind of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// The candidate is significantly worse.
    Regression,
    /// The candidate is significantly better.
    Improvement,
    /// Throughput better while latency or goodput worse, within one result.
    Tradeoff,
    /// The history shifted at a commit.
    ChangePoint,
    /// A series of the baseline is absent from the candidate.
    Missing,
}

/// Severity of an alert-worthy finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Look at it.
    Warn,
    /// Blocks (a regression of at least [`Settings::fail_effect_pct`]).
    Fail,
}

impl FindingKind {
    /// The snake_case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::Regression => "regression",
            FindingKind::Improvement => "improvement",
            FindingKind::Tradeoff => "tradeoff",
            FindingKind::ChangePoint => "change_point",
            FindingKind::Missing => "missing",
        }
    }
}

impl Severity {
    /// `warn` or `fail`, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warn => "warn",
            Severity::Fail => "fail",
        }
    }

    /// The severity serialized as `s`, if any.
    pub fn parse(s: &str) -> Option<Severity> {
        [Severity::Warn, Severity::Fail]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

/// The effect with its confidence interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Effect {
    /// Candidate − baseline, metric's unit.
    pub delta_abs: f64,
    /// The same in percent of the baseline mean (absent when that mean is 0).
    pub delta_pct: Option<f64>,
    /// Interval of `delta_abs` at `level` (the baseline mean is treated as known when it is
    /// turned into percent).
    pub ci_abs: Option<(f64, f64)>,
    /// Interval of `delta_pct`.
    pub ci_pct: Option<(f64, f64)>,
    /// Confidence level.
    pub level: f64,
}

/// The thresholds a finding was judged against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Threshold {
    /// Minimum relative effect, percent.
    pub min_effect_pct: f64,
    /// Significance level.
    pub alpha: f64,
}

/// Which way one side of a trade-off moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PartChange {
    /// Better (throughput up, or latency down).
    Improved,
    /// Worse.
    Worsened,
}

impl PartChange {
    /// `improved` or `worsened`, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            PartChange::Improved => "improved",
            PartChange::Worsened => "worsened",
        }
    }
}

/// One side of a trade-off.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TradeoffPart {
    /// Series id.
    pub series_id: String,
    /// Metric.
    pub metric: String,
    /// Statistic.
    #[schema(value_type = String)]
    pub stat: Stat,
    /// `improved` or `worsened`.
    pub change: PartChange,
    /// Percent change.
    pub delta_pct: f64,
    /// The test and its p-value.
    pub test: Test,
    /// p-value, when the test has one.
    pub p_value: Option<f64>,
    /// Per-request shift of this side, when samples exist (description only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_request: Option<RequestShift>,
}

impl TradeoffPart {
    /// The part of a compared series' report: its comparison's change, test and p-value.
    ///
    /// # Panics
    /// When `r` has no comparison (callers pass compared series only).
    fn of(r: &SeriesReport, change: PartChange) -> TradeoffPart {
        let c = r.comparison.as_ref().expect("a part is a compared series");
        TradeoffPart {
            series_id: r.series_id.clone(),
            metric: r.metric.clone(),
            stat: r.stat.clone(),
            change,
            delta_pct: c.delta_pct.unwrap_or(0.0),
            test: c.outcome.test,
            p_value: c.outcome.p_value,
            per_request: r.per_request.clone(),
        }
    }
}

/// A finding: everything needed to explain it from data alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Finding {
    /// What was found.
    pub kind: FindingKind,
    /// `warn` or `fail` for regressions, trade-offs, missing series and worsening change points;
    /// `None` for improvements.
    pub severity: Option<Severity>,
    /// The series involved (several for a trade-off).
    pub series_ids: Vec<String>,
    /// The (headline) metric.
    pub metric: String,
    /// Its statistic.
    #[schema(value_type = String)]
    pub stat: Stat,
    /// Its SLO profile, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_profile: Option<String>,
    /// Its direction.
    pub direction: Direction,
    /// The commits the baseline was drawn from (for a change point: the previous regime).
    pub baseline_commits: Vec<String>,
    /// The candidate commit (for a change point: the first commit of the new regime).
    pub candidate_commit: Option<String>,
    /// Baseline mean, metric's unit.
    pub baseline_value: Option<f64>,
    /// Candidate mean, metric's unit.
    pub candidate_value: Option<f64>,
    /// Percent change of the headline metric.
    pub delta_pct: Option<f64>,
    /// The effect with its interval.
    pub effect: Option<Effect>,
    /// `welch_t`, `prediction_interval`, `pinned_t`, `family_index`, `zero_spread`,
    /// `effect_only`, `e_divisive`, `tradeoff`, `missing`.
    pub test: Test,
    /// Test statistic (t, or Q for E-Divisive).
    pub statistic: Option<f64>,
    /// Degrees of freedom of t.
    pub df: Option<f64>,
    /// p-value.
    pub p_value: Option<f64>,
    /// For a change point: the two-sided p-value of Welch's t between the commit values of its
    /// two regimes (the multiplicity-controlled criterion of the family scan,
    /// [`family_scan::family_change_points`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regime_p_value: Option<f64>,
    /// Prediction interval of a baseline-like value, for `prediction_interval`.
    pub prediction_interval: Option<(f64, f64)>,
    /// Thresholds applied.
    pub threshold: Threshold,
    /// One sentence for people.
    pub summary: String,
    /// The sides of a trade-off.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<TradeoffPart>,
    /// Per-request shift, when samples exist (description only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_request: Option<RequestShift>,
    /// Commits that confirmed the finding.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub confirmed_by: Vec<String>,
    /// Caveats (zero spread, effect only, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The settings that produced the finding.
    #[schema(value_type = Object)]
    pub settings: Settings,
}

/// The comparison of a series' candidate with its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Comparison {
    /// The test's outcome.
    pub outcome: TestOutcome,
    /// Percent change.
    pub delta_pct: Option<f64>,
    /// Effect ≥ minimum and significant (or effect-decided for zero spread / effect only).
    pub significant: bool,
    /// `Some(true)` better, `Some(false)` worse, `None` for neutral metrics or no change.
    pub better: Option<bool>,
    /// Baseline commits used.
    pub baseline_commits: Vec<String>,
}

/// Per-series outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SeriesReport {
    /// Series id.
    pub series_id: String,
    /// Metric.
    pub metric: String,
    /// Statistic.
    #[schema(value_type = String)]
    pub stat: Stat,
    /// State.
    pub state: SeriesState,
    /// Why, for states without a comparison (one sentence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The same, typed, for states that were not tested: what logic reads instead of
    /// `reason`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untested: Option<Untested>,
    /// The comparison, when one was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// Per-request shift, when samples exist on both sides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_request: Option<RequestShift>,
}

/// Result of [`analyze`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GroupReport {
    /// Series key.
    pub series_key: String,
    /// Cell key.
    pub cell_key: String,
    /// One report per input series, in input order.
    pub series: Vec<SeriesReport>,
    /// Findings: trade-offs first, then regressions, missing series and improvements.
    pub findings: Vec<Finding>,
    /// Workload confounds of the candidate ([`confounds::workload_confounds`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workload: Vec<confounds::WorkloadConfound>,
    /// For a group with series in state `no_baseline`: the nearest stored series and what
    /// differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nearest: Option<confounds::Nearest>,
    /// Families that moved at least the minimum effect without a finding: the smallest change
    /// detectable here and the repeats that would decide it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undecided: Vec<Undecided>,
}

/// How a trade-off that starts later finishes sooner, from the compared medians of TTFT and
/// TPOT among `reports` (their baseline and candidate means): `starts 48 ms later, finishes
/// sooner for answers longer than 31 tokens` ([`crate::capacity::crossover`]); the words alone,
/// `starts later, finishes sooner`, when the medians are not both compared or do not cross
/// (TPOT not faster).
pub(crate) fn finishes_sooner(reports: &[SeriesReport]) -> String {
    let median = |metric: &str| {
        reports
            .iter()
            .filter(|r| r.metric == metric && r.stat.percentile() == Some(50.0))
            .find_map(|r| r.comparison.as_ref())
            .map(|c| (c.outcome.baseline_mean, c.outcome.candidate_mean))
    };
    use crate::capacity::crossover::{crossover, sentence, Medians};
    let crossed = median("ttft").zip(median("tpot")).and_then(|(ttft, tpot)| {
        crossover(
            Medians {
                ttft_ms: ttft.0,
                tpot_ms: tpot.0,
            },
            Medians {
                ttft_ms: ttft.1,
                tpot_ms: tpot.1,
            },
        )
    });
    crossed.map_or_else(
        || "starts later, finishes sooner".to_string(),
        |c| sentence(&c),
    )
}

/// The short name of a (metric, statistic) in a sentence: `median TTFT`, `p95 TTFT`,
/// `output throughput`, `mean TPOT`, `median E2E latency`.
pub fn describe(metric: &str, stat: &Stat) -> String {
    let name = match metric {
        "ttft" => "TTFT".to_string(),
        "tpot" => "TPOT".to_string(),
        "itl" => "ITL".to_string(),
        "e2el" => "E2E latency".to_string(),
        "request_throughput" => "request throughput".to_string(),
        "output_throughput" => "output throughput".to_string(),
        "total_token_throughput" => "total token throughput".to_string(),
        "request_goodput" => "request goodput".to_string(),
        "slo_attainment" => "SLO attainment".to_string(),
        other => lookup(other).map_or(other.to_string(), |d| d.label.to_lowercase()),
    };
    match stat {
        Stat::Value => name,
        Stat::Percentile(p) if p == "50" => format!("median {name}"),
        other => format!("{other} {name}"),
    }
}

/// [`describe`] with the SLO profile of a goodput or attainment series, as the engine's
/// sentences name it: `request goodput (interactive SLOs)`.
pub fn describe_series(metric: &str, stat: &Stat, slo_profile: Option<&str>) -> String {
    match slo_profile {
        Some(p) => format!("{} ({p} SLOs)", describe(metric, stat)),
        None => describe(metric, stat),
    }
}

/// `+4.1 %`, `-3.0 %`.
pub fn pct(x: f64) -> String {
    format!("{x:+.1} %")
}

/// A value in its metric's unit with the digits a reader needs: `1234.5`, `12.35`, `0.1234`.
pub fn fmt_num(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    }
}

fn fmt_p(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

struct Baseline {
    commits: Vec<String>,
    runs: Vec<f64>,
    samples: Vec<f64>,
    /// Pooled within-commit variance Σ(nᵢ−1)sᵢ² / Σ(nᵢ−1) over commits with ≥ 2 runs (0 if none).
    within_var: f64,
    /// With a pinned baseline: the valid runs of the window's other commits, whose spread
    /// stands in for the run-to-run variation a pin of one run cannot show.
    spread: Vec<f64>,
    /// Commit means (mean of each commit's valid runs) of the last [`Settings::spread`]
    /// commits with a valid run, oldest first: the spread and, in its last `baseline_window`,
    /// the level of [`significance::commit_mean_prediction`].
    history_means: Vec<f64>,
    /// Mean number of valid runs per baseline commit.
    runs_per_commit: f64,
}

fn baseline_of(
    s: &SeriesInput,
    pinned: Option<&str>,
    window: usize,
    spread_window: usize,
) -> Baseline {
    let chosen: Vec<&CommitRuns> = match pinned {
        Some(p) => s.history.iter().filter(|c| c.commit == p).collect(),
        None => {
            let mut v: Vec<&CommitRuns> = s
                .history
                .iter()
                .rev()
                .filter(|c| !c.valid().is_empty())
                .take(window)
                .collect();
            v.reverse();
            v
        }
    };
    let chosen: Vec<&CommitRuns> = chosen
        .into_iter()
        .filter(|c| !c.valid().is_empty())
        .collect();
    let (mut ss, mut dof) = (0.0, 0.0);
    for c in &chosen {
        let v = c.valid();
        if v.len() >= 2 {
            ss += significance::sample_var(&v) * (v.len() - 1) as f64;
            dof += (v.len() - 1) as f64;
        }
    }
    let spread: Vec<f64> = match pinned {
        Some(p) => s
            .history
            .iter()
            .rev()
            .filter(|c| c.commit != p && !c.valid().is_empty())
            .take(window)
            .flat_map(|c| c.valid())
            .collect(),
        None => Vec::new(),
    };
    let mut history_means: Vec<f64> = s
        .history
        .iter()
        .rev()
        .filter(|c| pinned.is_none() && !c.valid().is_empty())
        .take(spread_window)
        .map(|c| significance::mean(&c.valid()))
        .collect();
    history_means.reverse();
    let runs: usize = chosen.iter().map(|c| c.valid().len()).sum();
    Baseline {
        history_means,
        runs_per_commit: if chosen.is_empty() {
            1.0
        } else {
            runs as f64 / chosen.len() as f64
        },
        within_var: if dof > 0.0 { ss / dof } else { 0.0 },
        commits: chosen.iter().map(|c| c.commit.clone()).collect(),
        runs: chosen.iter().flat_map(|c| c.valid()).collect(),
        samples: chosen.iter().flat_map(|c| c.valid_samples()).collect(),
        spread,
    }
}

fn direction_of(metric: &str) -> Direction {
    lookup(metric).map_or(Direction::Neutral, |d| d.direction)
}

/// Runs the test that fits the data and applies the thresholds.
fn compare_values(
    metric: &str,
    baseline: &Baseline,
    cand: &[f64],
    direction: Direction,
    settings: &Settings,
) -> (TestOutcome, Option<f64>, bool, Option<bool>) {
    let base = baseline.runs.as_slice();
    // Counts and percentages can be 0 and vary additively; every other metric (latencies,
    // throughputs, goodput, lengths) is positive and varies by a factor.
    let countable =
        lookup(metric).is_some_and(|m| matches!(m.unit, Unit::Requests | Unit::Percent));
    let outcome = if baseline.history_means.len() >= 2 {
        // Repeats are one sample of their commit: the candidate's mean against the baseline's
        // commit means, with what its fewer repeats (if fewer) add to its variance.
        let extra =
            baseline.within_var * (1.0 / cand.len() as f64 - 1.0 / baseline.runs_per_commit);
        let (history, window, level) = (
            baseline.history_means.as_slice(),
            settings.baseline_window,
            1.0 - settings.alpha,
        );
        let (mean_c, extra) = (significance::mean(cand), extra.max(0.0));
        let on_logs = if countable {
            None
        } else {
            significance::commit_mean_prediction_log(history, window, mean_c, extra, level)
        };
        on_logs.unwrap_or_else(|| {
            significance::commit_mean_prediction(history, window, mean_c, extra, level)
        })
    } else if cand.len() >= 2 && base.len() >= 2 {
        significance::welch(base, cand, settings.confidence_level, baseline.within_var)
    } else if baseline.spread.len() >= 2 && !base.is_empty() {
        // A pinned commit of one run: its level, the history's spread.
        significance::pinned(base, cand, &baseline.spread, settings.confidence_level)
    } else if base.len() >= 2 {
        significance::prediction(base, cand[0], settings.confidence_level)
    } else {
        significance::effect_only(base, cand, settings.confidence_level)
    };
    let b = outcome.baseline_mean;
    let delta_pct = (b != 0.0).then(|| outcome.delta_abs / b.abs() * 100.0);
    // From a baseline of exactly 0 (no failed request in any baseline run) a count's change is
    // unbounded in percent: 0 → 3 failed requests is a finding, not a silent `None`. Only for
    // counts and percentages, where 0 means "none": a latency statistic at 0 ms (a min ITL of
    // two chunks in one packet) is a measurement artefact, not a state to leave.
    let big = match delta_pct {
        Some(d) => d.abs() >= settings.min_effect_pct,
        None => countable && outcome.delta_abs != 0.0,
    };
    let sig = match outcome.p_value {
        Some(p) => p < settings.alpha,
        None => true, // zero spread or effect only: the effect decides, and the notes say so
    };
    let significant = big && sig && direction != Direction::Neutral;
    let better = match direction {
        _ if outcome.delta_abs == 0.0 => None,
        Direction::LowerIsBetter => Some(outcome.delta_abs < 0.0),
        Direction::HigherIsBetter => Some(outcome.delta_abs > 0.0),
        Direction::Neutral => None,
    };
    (outcome, delta_pct, significant, better)
}

fn effect_of(o: &TestOutcome) -> Effect {
    let b = o.baseline_mean;
    let to_pct = |x: f64| x / b.abs() * 100.0;
    Effect {
        delta_abs: o.delta_abs,
        delta_pct: (b != 0.0).then(|| to_pct(o.delta_abs)),
        ci_abs: o.delta_ci,
        ci_pct: o
            .delta_ci
            .filter(|_| b != 0.0)
            .map(|(l, h)| (to_pct(l), to_pct(h))),
        level: o.level,
    }
}

fn test_phrase(o: &TestOutcome, k: usize) -> String {
    match o.test {
        Test::WelchT => format!(
            "Welch's {}, df = {:.1}, {} against {k} baseline commits",
            family_findings::t_phrase(o.statistic.unwrap_or(0.0)),
            o.df.unwrap_or(0.0),
            family_findings::p_phrase(o.p_value.unwrap_or(1.0))
        ),
        Test::PredictionInterval => {
            let (lo, hi) = o.prediction_interval.unwrap_or((0.0, 0.0));
            // The level the decision used, unrounded (99.95 for α = 0.0005, never "100").
            let scale = match o.scale {
                significance::Scale::Log => " (on the log scale)",
                significance::Scale::Linear => "",
            };
            format!(
                "outside the {} % prediction interval [{}, {}]{scale} of {k} baseline commits' means ({}, {})",
                (o.level * 1e6).round() / 1e4,
                fmt_num(lo),
                fmt_num(hi),
                family_findings::t_phrase(o.statistic.unwrap_or(0.0)),
                family_findings::p_phrase(o.p_value.unwrap_or(1.0))
            )
        }
        Test::PinnedT => format!(
            "{}, df = {:.0}, {} against the pinned baseline, with the run-to-run spread of {} recent runs",
            family_findings::t_phrase(o.statistic.unwrap_or(0.0)),
            o.df.unwrap_or(0.0),
            family_findings::p_phrase(o.p_value.unwrap_or(1.0)),
            o.df.unwrap_or(0.0) + 1.0
        ),
        Test::ZeroSpread => format!(
            "zero run-to-run spread in {k} baseline commits, so decided on the effect alone"
        ),
        _ => "effect only: one value per side and no history, not tested for significance"
            .to_string(),
    }
}

/// `fail` for a worsening of at least [`Settings::fail_effect_pct`] that was tested, `warn`
/// otherwise (a smaller one, an effect-only comparison, or one from a zero baseline, whose
/// percent is undefined).
fn severity_of(delta_pct: Option<f64>, test: Test, settings: &Settings) -> Severity {
    match delta_pct {
        Some(d) if d.abs() >= settings.fail_effect_pct && test != Test::EffectOnly => {
            Severity::Fail
        }
        _ => Severity::Warn,
    }
}

#[allow(clippy::too_many_arguments)]
fn comparison_finding(
    s: &SeriesInput,
    cmp: &Comparison,
    candidate: &str,
    settings: &Settings,
    per_request: Option<RequestShift>,
    confirmed_by: Vec<String>,
) -> Finding {
    let o = &cmp.outcome;
    let better = cmp.better == Some(true);
    let kind = if better {
        FindingKind::Improvement
    } else {
        FindingKind::Regression
    };
    let severity = if better {
        None
    } else {
        Some(severity_of(cmp.delta_pct, o.test, settings))
    };
    let unit = lookup(&s.metric).map_or("", |m| m.unit.as_str());
    let change = match cmp.delta_pct {
        Some(d) => pct(d),
        None => "from 0".to_string(),
    };
    let summary = format!(
        "{} {change} ({} → {} {unit}): {}.",
        describe(&s.metric, &s.stat),
        fmt_num(o.baseline_mean),
        fmt_num(o.candidate_mean),
        test_phrase(o, cmp.baseline_commits.len()),
    );
    Finding {
        kind,
        severity,
        series_ids: vec![s.series_id.clone()],
        metric: s.metric.clone(),
        stat: s.stat.clone(),
        slo_profile: s.slo_profile.clone(),
        direction: direction_of(&s.metric),
        baseline_commits: cmp.baseline_commits.clone(),
        candidate_commit: Some(candidate.to_string()),
        baseline_value: Some(o.baseline_mean),
        candidate_value: Some(o.candidate_mean),
        delta_pct: cmp.delta_pct,
        effect: Some(effect_of(o)),
        test: o.test,
        statistic: o.statistic,
        df: o.df,
        p_value: o.p_value,
        regime_p_value: None,
        prediction_interval: o.prediction_interval,
        threshold: Threshold {
            min_effect_pct: settings.min_effect_pct,
            alpha: settings.alpha,
        },
        summary,
        parts: Vec::new(),
        per_request,
        confirmed_by,
        notes: o.note.iter().cloned().collect(),
        settings: settings.clone(),
    }
}

/// Compares two single values offline (two files, no history): an effect-only finding when the
/// effect reaches [`Settings::min_effect_pct`], saying that no significance test was possible.
pub fn compare_pair(
    series_id: &str,
    metric: &str,
    stat: Stat,
    baseline: (&str, f64),
    candidate: (&str, f64),
    settings: &Settings,
) -> Option<Finding> {
    let s = SeriesInput {
        series_id: series_id.to_string(),
        metric: metric.to_string(),
        stat,
        slo_profile: None,
        history: vec![CommitRuns::new(baseline.0, &[baseline.1])],
        candidate: Some(CommitRuns::new(candidate.0, &[candidate.1])),
        following: Vec::new(),
    };
    let one = Baseline {
        commits: vec![baseline.0.to_string()],
        runs: vec![baseline.1],
        samples: Vec::new(),
        within_var: 0.0,
        spread: Vec::new(),
        history_means: Vec::new(),
        runs_per_commit: 1.0,
    };
    let (outcome, delta_pct, significant, better) =
        compare_values(metric, &one, &[candidate.1], direction_of(metric), settings);
    let cmp = Comparison {
        outcome,
        delta_pct,
        significant,
        better,
        baseline_commits: vec![baseline.0.to_string()],
    };
    significant.then(|| comparison_finding(&s, &cmp, candidate.0, settings, None, Vec::new()))
}

/// Analyzes one result's series against their baselines: regressions, improvements, trade-offs,
/// missing series and series with insufficient data. Pure and deterministic.
pub fn analyze(group: &GroupInput, settings: &Settings) -> GroupReport {
    analyze_with(group, settings, &family::Gates::single())
}

/// [`analyze`] of one cell of a configuration whose other cells were uploaded with it: `gates`
/// ([`family::configuration_gates`] over all of them) say what the configuration as a whole
/// shows, and split α between its cells.
pub fn analyze_with(group: &GroupInput, settings: &Settings, gates: &family::Gates) -> GroupReport {
    analyze_checked(group, &confounds::Workload::default(), settings, gates)
}

/// The series of `group` that `confounds` leave without a verdict (their metric depends on a
/// length that differs): their ids.
pub fn confounded_series(
    group: &GroupInput,
    confounds: &[confounds::WorkloadConfound],
) -> Vec<String> {
    group
        .series
        .iter()
        .filter(|s| confounds.iter().any(|c| c.affects(&s.metric)))
        .map(|s| s.series_id.clone())
        .collect()
}

/// `group` without the series its workload confounds leave without a verdict: what
/// [`family::configuration_gates`] should read, so that a cell that did other work does not
/// move its configuration's combined index. Borrowed when no series is left out (the usual
/// case: a copy of every group's history per upload was 7 % of an analysis).
pub fn gating_view<'g>(
    group: &'g GroupInput,
    workload: &confounds::Workload,
    settings: &Settings,
) -> std::borrow::Cow<'g, GroupInput> {
    let found = confounds::workload_confounds(
        workload,
        group.pinned_baseline.as_deref(),
        settings.baseline_window,
        settings.workload_tolerance_pct,
    );
    let out = confounded_series(group, &found);
    if !group.series.iter().any(|s| out.contains(&s.series_id)) {
        return std::borrow::Cow::Borrowed(group);
    }
    std::borrow::Cow::Owned(GroupInput {
        series_key: group.series_key.clone(),
        cell_key: group.cell_key.clone(),
        pinned_baseline: group.pinned_baseline.clone(),
        series: group
            .series
            .iter()
            .filter(|s| !out.contains(&s.series_id))
            .cloned()
            .collect(),
    })
}

/// [`analyze_with`] with what is known of the work each run did (`workload`): the workload
/// checks run before any test. A series whose metric a confound affects gets state
/// `workload_mismatch` and no comparison (so no finding, no family index, no trade-off side);
/// a series with no baseline commit at all gets `no_baseline`, naming `workload.nearest`.
pub fn analyze_checked(
    group: &GroupInput,
    workload: &confounds::Workload,
    settings: &Settings,
    gates: &family::Gates,
) -> GroupReport {
    let confounds_found = confounds::workload_confounds(
        workload,
        group.pinned_baseline.as_deref(),
        settings.baseline_window,
        settings.workload_tolerance_pct,
    );
    let mut reports = Vec::new();
    let mut findings: Vec<Finding> = Vec::new();
    // Every statistic of a metric (mean, p50, p99, ...) reads the same requests: the shift is
    // computed once per (metric, baseline commits, candidate).
    let mut shifts: HashMap<(String, Vec<String>, String), Option<RequestShift>> = HashMap::new();
    let mut missing: Vec<(&SeriesInput, Vec<String>)> = Vec::new();
    // A series absent from a result that is there is not measured (a gap); only a result
    // (cell) absent as a whole makes its series missing.
    let cell_present = group.series.iter().any(|s| s.candidate.is_some());
    for s in &group.series {
        let direction = direction_of(&s.metric);
        let base = baseline_of(
            s,
            group.pinned_baseline.as_deref(),
            settings.baseline_window,
            settings.spread(),
        );
        let mut report = SeriesReport {
            series_id: s.series_id.clone(),
            metric: s.metric.clone(),
            stat: s.stat.clone(),
            state: SeriesState::NoChange,
            reason: None,
            untested: None,
            comparison: None,
            per_request: None,
        };
        if !settings.tests(&s.stat) {
            report.state = SeriesState::Descriptive;
            report.untested = Some(Untested::StatisticNotTested);
            report.reason = Some(format!(
                "statistic `{}` is not among the tested statistics: descriptive, never a finding",
                s.stat
            ));
            reports.push(report);
            continue;
        }
        let Some(candidate) = &s.candidate else {
            if !base.commits.is_empty() && !cell_present {
                report.state = SeriesState::Missing;
                report.untested = Some(Untested::AbsentFromCandidate);
                report.reason = Some("absent from the candidate run".into());
                missing.push((s, base.commits.clone()));
            } else if !base.commits.is_empty() {
                report.state = SeriesState::NotMeasured;
                report.untested = Some(Untested::NotMeasured);
                report.reason =
                    Some("not measured: the candidate's result of this cell lacks it".into());
            }
            reports.push(report);
            continue;
        };
        if direction == Direction::Neutral || PEAK_METRICS.contains(&s.metric.as_str()) {
            report.state = SeriesState::Descriptive;
            report.untested = Some(Untested::Descriptive);
            report.reason = Some(if direction == Direction::Neutral {
                "neutral metric: descriptive, never a finding".into()
            } else {
                "a peak over one-second buckets: an extreme of a few counts, descriptive, never a finding".into()
            });
            reports.push(report);
            continue;
        }
        let cand = candidate.valid();
        let confounded: Vec<&confounds::WorkloadConfound> = confounds_found
            .iter()
            .filter(|c| c.affects(&s.metric))
            .collect();
        if !cand.is_empty() && !confounded.is_empty() {
            report.state = SeriesState::WorkloadMismatch;
            report.untested = Some(Untested::WorkloadConfound);
            report.reason = Some(
                confounded
                    .iter()
                    .map(|c| c.message.as_str())
                    .collect::<Vec<_>>()
                    .join("; "),
            );
            reports.push(report);
            continue;
        }
        if !cand.is_empty() && group.pinned_baseline.is_none() && base.commits.is_empty() {
            report.state = SeriesState::NoBaseline;
            report.untested = Some(Untested::NoBaseline);
            report.reason = Some(no_baseline_reason(workload.nearest.as_ref()));
            reports.push(report);
            continue;
        }
        let enough = if group.pinned_baseline.is_some() {
            !base.runs.is_empty()
        } else {
            base.commits.len() >= settings.min_baseline_commits
        };
        if cand.is_empty() || !enough {
            report.state = SeriesState::InsufficientData;
            report.untested = Some(if cand.is_empty() {
                Untested::NoValidCandidate
            } else if group.pinned_baseline.is_some() {
                Untested::PinnedWithoutRun
            } else {
                Untested::TooFewBaselineCommits {
                    have: base.commits.len(),
                    need: settings.min_baseline_commits,
                }
            });
            report.reason = Some(if cand.is_empty() {
                "the candidate has no valid run".into()
            } else if group.pinned_baseline.is_some() {
                "the pinned baseline commit has no valid run of this series".into()
            } else {
                format!(
                    "{} baseline commit(s) with a valid run; at least {} are needed",
                    base.commits.len(),
                    settings.min_baseline_commits
                )
            });
            reports.push(report);
            continue;
        }
        let (outcome, delta_pct, significant, better) =
            compare_values(&s.metric, &base, &cand, direction, settings);
        let shift_key = (
            s.metric.clone(),
            base.commits.clone(),
            candidate.commit.clone(),
        );
        report.per_request = shifts
            .entry(shift_key)
            .or_insert_with(|| {
                let cand_samples = candidate.valid_samples();
                (!base.samples.is_empty() && !cand_samples.is_empty())
                    .then(|| {
                        significance::request_shift(
                            &base.samples,
                            &cand_samples,
                            settings.confidence_level,
                            settings.per_request_max_per_side,
                        )
                    })
                    .flatten()
                    .map(|mut shift| {
                        let unit = lookup(&s.metric).map_or("", |m| m.unit.as_str());
                        shift.summary = shift.describe(&describe(&s.metric, &Stat::Value), unit);
                        shift
                    })
            })
            .clone();
        let cmp = Comparison {
            outcome,
            delta_pct,
            significant,
            better,
            baseline_commits: base.commits.clone(),
        };
        if significant {
            // Optional confirmation by the following commits, against the same baseline.
            let n = settings.confirm_commits;
            let mut confirmed_by = Vec::new();
            let mut state = if better == Some(true) {
                SeriesState::Improvement
            } else {
                SeriesState::Regression
            };
            if n > 0 {
                if s.following.len() < n {
                    state = SeriesState::PendingConfirmation;
                } else {
                    for f in &s.following[..n] {
                        let v = f.valid();
                        let ok = !v.is_empty() && {
                            let (_, _, sig, b) =
                                compare_values(&s.metric, &base, &v, direction, settings);
                            sig && b == better
                        };
                        if !ok {
                            state = SeriesState::NotConfirmed;
                            break;
                        }
                        confirmed_by.push(f.commit.clone());
                    }
                }
            }
            report.state = state;
            if matches!(state, SeriesState::Regression | SeriesState::Improvement) {
                findings.push(comparison_finding(
                    s,
                    &cmp,
                    &candidate.commit,
                    settings,
                    report.per_request.clone(),
                    confirmed_by,
                ));
            }
        }
        report.comparison = Some(cmp);
        reports.push(report);
    }
    let stage = family_findings::family_stage(group, &mut reports, gates, settings);
    findings.retain(|f| {
        !(matches!(f.kind, FindingKind::Regression | FindingKind::Improvement)
            && stage.members.contains(&f.series_ids[0]))
    });
    findings.extend(stage.findings.iter().cloned());
    findings.extend(missing_finding(&missing, settings));
    let tradeoff = if stage.decisions.is_empty() {
        tradeoff_finding(group, &reports, settings)
    } else {
        family_findings::family_tradeoff(group, &reports, &stage, settings)
    };
    if let Some(t) = &tradeoff {
        findings.retain(|f| !t.series_ids.contains(&f.series_ids[0]));
    }
    let rank = |f: &Finding| match f.kind {
        FindingKind::Tradeoff => 0,
        FindingKind::Regression => 1,
        FindingKind::Missing => 2,
        FindingKind::ChangePoint => 3,
        FindingKind::Improvement => 4,
    };
    findings.sort_by_key(rank);
    let mut all: Vec<Finding> = tradeoff.into_iter().collect();
    all.extend(findings);
    let nearest = reports
        .iter()
        .any(|r| r.state == SeriesState::NoBaseline)
        .then(|| workload.nearest.clone())
        .flatten();
    let used: Vec<confounds::WorkloadConfound> = confounds_found
        .into_iter()
        .filter(|c| {
            reports
                .iter()
                .any(|r| r.state == SeriesState::WorkloadMismatch && c.affects(&r.metric))
        })
        .collect();
    GroupReport {
        series_key: group.series_key.clone(),
        cell_key: group.cell_key.clone(),
        series: reports,
        findings: all,
        workload: used,
        nearest,
        undecided: stage.undecided,
    }
}

/// The reason of a `no_baseline` series: what exists instead.
fn no_baseline_reason(nearest: Option<&confounds::Nearest>) -> String {
    match nearest {
        Some(n) if !n.differences.is_empty() => format!(
            "no baseline: no earlier commit has this series; the nearest series with history \
             differs in {} field(s): {}",
            n.differences.len(),
            n.summary
        ),
        _ => "no baseline: no earlier commit has this series, nor any other series of the project"
            .to_string(),
    }
}

/// One finding for every series of the group that is in the baseline but absent from the
/// candidate (a file left out of an upload drops dozens of series at once: one alert, not one
/// per series). Headline: the first missing series.
fn missing_finding(
    missing: &[(&SeriesInput, Vec<String>)],
    settings: &Settings,
) -> Option<Finding> {
    let (first, _) = missing.first()?;
    // The longest baseline among them (series of one result share their commits).
    let baseline = missing
        .iter()
        .map(|(_, b)| b)
        .max_by_key(|b| b.len())
        .cloned()
        .unwrap_or_default();
    let commits = baseline.len();
    // Metrics in input order, each with its statistics: `TTFT (mean, p50)`.
    let mut metrics: Vec<(String, Vec<String>)> = Vec::new();
    for (s, _) in missing {
        let name = describe(&s.metric, &Stat::Value);
        match metrics.iter_mut().find(|(m, _)| *m == name) {
            Some((_, stats)) => stats.push(s.stat.to_string()),
            None => metrics.push((name, vec![s.stat.to_string()])),
        }
    }
    let listed: Vec<String> = metrics
        .iter()
        .map(|(m, stats)| format!("{m} ({})", stats.join(", ")))
        .collect();
    let summary = if missing.len() == 1 {
        format!(
            "{} is missing from the candidate run but present in {commits} baseline commit(s).",
            describe(&first.metric, &first.stat)
        )
    } else {
        format!(
            "{} series are missing from the candidate run but present in up to {commits} baseline commit(s): {}.",
            missing.len(),
            listed.join(", ")
        )
    };
    Some(Finding {
        kind: FindingKind::Missing,
        severity: Some(Severity::Warn),
        series_ids: missing.iter().map(|(s, _)| s.series_id.clone()).collect(),
        metric: first.metric.clone(),
        stat: first.stat.clone(),
        slo_profile: first.slo_profile.clone(),
        direction: direction_of(&first.metric),
        baseline_commits: baseline,
        candidate_commit: None,
        baseline_value: None,
        candidate_value: None,
        delta_pct: None,
        effect: None,
        test: Test::Missing,
        statistic: None,
        df: None,
        p_value: None,
        regime_p_value: None,
        prediction_interval: None,
        threshold: Threshold {
            min_effect_pct: settings.min_effect_pct,
            alpha: settings.alpha,
        },
        summary,
        parts: Vec::new(),
        per_request: None,
        confirmed_by: Vec::new(),
        notes: Vec::new(),
        settings: settings.clone(),
    })
}

/// The trade-off rule over one group's comparisons (see the module documentation).
fn tradeoff_finding(
    group: &GroupInput,
    reports: &[SeriesReport],
    settings: &Settings,
) -> Option<Finding> {
    let sig = |r: &SeriesReport, better: bool| {
        let want = if better {
            SeriesState::Improvement
        } else {
            SeriesState::Regression
        };
        r.state == want
    };
    let find = |metric: &str, stat: &Stat, better: bool| {
        reports
            .iter()
            .find(|r| r.metric == metric && &r.stat == stat && sig(r, better))
    };
    let throughputs: Vec<&SeriesReport> = ["output_throughput", "request_throughput"]
        .iter()
        .filter_map(|m| find(m, &Stat::Value, true))
        .collect();
    let head = *throughputs.first()?;
    let mut ttft: Vec<&SeriesReport> = reports
        .iter()
        .filter(|r| r.metric == "ttft" && sig(r, false))
        .filter(|r| r.stat.percentile().is_some_and(|p| p == 50.0 || p >= 90.0))
        .collect();
    ttft.sort_by(|a, b| {
        let p = |r: &SeriesReport| r.stat.percentile().unwrap_or(0.0);
        p(a).total_cmp(&p(b))
    });
    let profile_of = |r: &SeriesReport| {
        group
            .series
            .iter()
            .find(|s| s.series_id == r.series_id)
            .and_then(|s| s.slo_profile.clone())
    };
    let mut goodput: Vec<&SeriesReport> = reports
        .iter()
        .filter(|r| matches!(r.metric.as_str(), "request_goodput" | "slo_attainment"))
        .filter(|r| sig(r, false))
        .collect();
    // A stable, readable order (vocabulary, then profile name), never the order of series ids.
    goodput.sort_by_key(|r| (crate::metric::vocabulary_rank(&r.metric), profile_of(r)));
    if ttft.is_empty() && goodput.is_empty() {
        return None;
    }
    let e2e = find("e2el", &Stat::Percentile("50".into()), true);
    let d = |r: &SeriesReport| {
        r.comparison
            .as_ref()
            .and_then(|c| c.delta_pct)
            .unwrap_or(0.0)
    };
    let mut worse = Vec::new();
    if let Some((first, rest)) = ttft.split_first() {
        let mut w = format!("{} {}", describe("ttft", &first.stat), pct(d(first)));
        if !rest.is_empty() {
            let tails: Vec<String> = rest
                .iter()
                .map(|r| format!("{} {}", r.stat, pct(d(r))))
                .collect();
            w.push_str(&format!(" ({})", tails.join(", ")));
        }
        worse.push(w);
    }
    for g in &goodput {
        let profile = profile_of(g).map_or(String::new(), |p| format!(" ({p} SLOs)"));
        worse.push(format!(
            "{}{profile} {}",
            describe(&g.metric, &g.stat),
            pct(d(g))
        ));
    }
    let mut summary = format!(
        "{} {} but {}",
        describe(&head.metric, &head.stat),
        pct(d(head)),
        worse.join(" and ")
    );
    if let Some(e) = e2e {
        summary.push_str(&format!("; {} {}", describe("e2el", &e.stat), pct(d(e))));
        if !ttft.is_empty() {
            summary.push_str(&format!(": {}", finishes_sooner(reports)));
        }
    }
    summary.push('.');
    let part = TradeoffPart::of;
    let mut parts: Vec<TradeoffPart> = throughputs
        .iter()
        .map(|r| part(r, PartChange::Improved))
        .collect();
    parts.extend(
        ttft.iter()
            .chain(goodput.iter())
            .map(|r| part(r, PartChange::Worsened)),
    );
    parts.extend(e2e.iter().map(|r| part(r, PartChange::Improved)));
    let hc = head.comparison.as_ref().expect("significant");
    let candidate = group
        .series
        .iter()
        .find(|s| s.series_id == head.series_id)
        .and_then(|s| s.candidate.as_ref())
        .map(|c| c.commit.clone());
    // As severe as its worst worsened side: a trade-off that costs 10 % of TTFT is `fail`,
    // one that costs 3 % is `warn` (the verdict applies `fail_severity` to both alike).
    let severity = ttft
        .iter()
        .chain(goodput.iter())
        .map(|r| {
            let c = r.comparison.as_ref().expect("significant series have one");
            severity_of(c.delta_pct, c.outcome.test, settings)
        })
        .max_by_key(|s| *s == Severity::Fail)
        .unwrap_or(Severity::Warn);
    Some(Finding {
        kind: FindingKind::Tradeoff,
        severity: Some(severity),
        series_ids: parts.iter().map(|p| p.series_id.clone()).collect(),
        metric: head.metric.clone(),
        stat: head.stat.clone(),
        slo_profile: None,
        direction: direction_of(&head.metric),
        baseline_commits: hc.baseline_commits.clone(),
        candidate_commit: candidate,
        baseline_value: Some(hc.outcome.baseline_mean),
        candidate_value: Some(hc.outcome.candidate_mean),
        delta_pct: hc.delta_pct,
        effect: Some(effect_of(&hc.outcome)),
        test: Test::Tradeoff,
        statistic: hc.outcome.statistic,
        df: hc.outcome.df,
        p_value: hc.outcome.p_value,
        regime_p_value: None,
        prediction_interval: None,
        threshold: Threshold {
            min_effect_pct: settings.min_effect_pct,
            alpha: settings.alpha,
        },
        summary,
        parts,
        per_request: None,
        confirmed_by: Vec::new(),
        notes: vec![
            "each side is significant on its own; the trade-off is a decision for a person, \
             not a failure"
                .into(),
        ],
        settings: settings.clone(),
    })
}

/// Change points over a series' base-branch history (E-Divisive means, [`edivisive`]): one
/// value per commit (mean of its valid runs); a change point is a finding when the means of the
/// regimes on its two sides differ by at least [`Settings::min_effect_pct`]. The effect's
/// interval is Welch's between the per-commit values of the two regimes.
pub fn change_point_findings(s: &SeriesInput, settings: &Settings) -> Vec<Finding> {
    let direction = direction_of(&s.metric);
    if !settings.change_points.enabled
        || direction == Direction::Neutral
        || !settings.tests(&s.stat)
    {
        return Vec::new();
    }
    let points: Vec<(&str, f64)> = s
        .history
        .iter()
        .filter_map(|c| {
            let v = c.valid();
            (!v.is_empty()).then(|| (c.commit.as_str(), significance::mean(&v)))
        })
        .collect();
    let values: Vec<f64> = points.iter().map(|p| p.1).collect();
    let cps = edivisive::e_divisive(&values, &settings.change_points);
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(cps.iter().map(|c| c.index));
    bounds.push(values.len());
    let mut out = Vec::new();
    for (k, cp) in cps.iter().enumerate() {
        let (a, i, b) = (bounds[k], bounds[k + 1], bounds[k + 2]);
        let o = significance::welch(&values[a..i], &values[i..b], settings.confidence_level, 0.0);
        let b0 = o.baseline_mean;
        let Some(dp) = (b0 != 0.0).then(|| o.delta_abs / b0.abs() * 100.0) else {
            continue;
        };
        if dp.abs() < settings.min_effect_pct {
            continue;
        }
        let better = match direction {
            Direction::LowerIsBetter => dp < 0.0,
            _ => dp > 0.0,
        };
        let unit = lookup(&s.metric).map_or("", |m| m.unit.as_str());
        let commit = points[i].0;
        let short = &commit[..commit.len().min(12)];
        out.push(Finding {
            kind: FindingKind::ChangePoint,
            severity: (!better).then_some(if dp.abs() >= settings.fail_effect_pct {
                Severity::Fail
            } else {
                Severity::Warn
            }),
            series_ids: vec![s.series_id.clone()],
            metric: s.metric.clone(),
            stat: s.stat.clone(),
            slo_profile: s.slo_profile.clone(),
            direction,
            baseline_commits: points[a..i].iter().map(|p| p.0.to_string()).collect(),
            candidate_commit: Some(commit.to_string()),
            baseline_value: Some(o.baseline_mean),
            candidate_value: Some(o.candidate_mean),
            delta_pct: Some(dp),
            effect: Some(effect_of(&o)),
            test: Test::EDivisive,
            statistic: Some(cp.q),
            df: None,
            p_value: Some(cp.p_value),
            regime_p_value: o.p_value,
            prediction_interval: None,
            threshold: Threshold {
                min_effect_pct: settings.min_effect_pct,
                alpha: settings.change_points.alpha,
            },
            summary: format!(
                "{} shifted {} at commit {short} ({} → {} {unit}, {} commits before, {} after): \
                 E-Divisive, permutation p = {} ({} permutations).",
                describe(&s.metric, &s.stat),
                pct(dp),
                fmt_num(o.baseline_mean),
                fmt_num(o.candidate_mean),
                i - a,
                b - i,
                fmt_p(cp.p_value),
                cp.permutations
            ),
            parts: Vec::new(),
            per_request: None,
            confirmed_by: Vec::new(),
            notes: Vec::new(),
            settings: settings.clone(),
        });
    }
    out
}
