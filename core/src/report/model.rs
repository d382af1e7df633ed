//! The analysis of one run, as stored (`run_analyses.analysis`, the typed model serialized as
//! JSON) and served by `GET /api/v1/runs/{id}/analysis`: per group of the run (series key and
//! cell) the baseline it was compared with, the engine's report, the effect-only findings of a
//! group with too little history, invalid candidate runs and the standing alerts it continues;
//! and the commit's coverage (missing and new cells, series not measured, repeats).
//!
//! [`ANALYSIS_SCHEMA`] is the version of this shape. A stored analysis of an older schema (or
//! one that no longer parses) is recomputed by the server at start-up, so readers only ever
//! see the current shape.

use super::coverage::Coverage;
use crate::regression::{Finding, GroupReport};
use crate::wire::AlertStatus;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// Version of the stored analysis shape. 1: the untyped documents before the typed model
/// (no `schema` field); 2: [`RunAnalysis`]; 3: the same shape with repeats counted per cell
/// ([`Coverage::repeats`](super::coverage::Coverage): the runs that measured the commit's least
/// measured cell, named in `fewest_cell`), where 2 counted the commit's runs, so a commit
/// uploaded one cell per run read as fully repeated after one repeat of each cell.
pub const ANALYSIS_SCHEMA: u32 = 3;

/// The analysis of one run at its commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RunAnalysis {
    /// [`ANALYSIS_SCHEMA`] when written.
    #[serde(default = "schema_one")]
    pub schema: u32,
    /// The run.
    pub run_id: Uuid,
    /// Its commit.
    pub commit: String,
    /// Its branch.
    pub branch: String,
    /// The project's default branch at the time.
    pub default_branch: String,
    /// The merge base the run's upload stated, if any.
    pub merge_base: Option<String>,
    /// Version of the project settings the analysis used.
    pub settings_version: i64,
    /// One entry per group (series key and cell) of the run's results.
    pub groups: Vec<CellAnalysis>,
    /// What the commit's analysis covers, as far as this run's groups are concerned.
    #[serde(default)]
    pub coverage: Coverage,
}

fn schema_one() -> u32 {
    1
}

/// The analysis of one group (series key and cell) of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CellAnalysis {
    /// The configuration (series key object).
    #[schema(value_type = Object)]
    pub series_key: Value,
    /// The cell key (`max_concurrency=4;request_rate=inf;...`).
    pub cell: String,
    /// Where the baseline came from, in words.
    pub baseline_rule: String,
    /// The pinned baseline commit, if the group's baseline is pinned.
    pub pinned_baseline: Option<String>,
    /// The commits the baseline was drawn from (sorted by SHA): those of the history window
    /// the analysis read (the newest ancestors the engine can use, and the commits a decision
    /// names) that hold a value of the group.
    pub history_commits: Vec<String>,
    /// Candidate runs that are neither tested nor part of a baseline.
    pub invalid_runs: Vec<InvalidRun>,
    /// The engine's report.
    pub report: GroupReport,
    /// With too little history (or a one-run pin): the effect described, never tested.
    pub effect_only: Vec<Finding>,
    /// Findings that are the change a standing alert of an earlier commit already holds.
    pub continuing: Vec<Continuing>,
}

impl CellAnalysis {
    /// The stored form of group `cell` of configuration `series_key_json` (JSON text)'s
    /// analysis.
    pub fn of(series_key_json: &str, cell: &str, ga: &super::group::GroupAnalysis) -> CellAnalysis {
        CellAnalysis {
            series_key: serde_json::from_str(series_key_json).unwrap_or(Value::Null),
            cell: cell.to_string(),
            baseline_rule: ga.baseline_rule.clone(),
            pinned_baseline: ga.input.pinned_baseline.clone(),
            // Borrowed while deduplicated: every series of the group has the same ~30
            // commits, and cloning each of them before the set dropped the copies was 4 % of an
            // upload's analysis (BENCHMARKS.md "Session 36").
            history_commits: ga
                .input
                .series
                .iter()
                .flat_map(|s| s.history.iter().map(|c| c.commit.as_str()))
                .collect::<std::collections::BTreeSet<&str>>()
                .into_iter()
                .map(str::to_string)
                .collect(),
            invalid_runs: ga.invalid_runs.clone(),
            report: ga.report.clone(),
            effect_only: ga.effect_only.clone(),
            continuing: ga.continuing.clone(),
        }
    }
}

/// A candidate run that is neither tested nor part of a baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct InvalidRun {
    /// The run.
    pub run_id: Uuid,
    /// One sentence.
    pub message: String,
    /// Excluded by a person (not by its own health: too many failed or too few completed
    /// requests).
    pub excluded_by_person: bool,
}

/// A finding of this commit that continues the standing alert of an earlier commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Continuing {
    /// The earlier alert.
    pub alert_id: Uuid,
    /// Its commit.
    pub commit: String,
    /// Its status.
    pub status: AlertStatus,
    /// The sentence of this commit's finding (or of the alert, when this commit's analysis
    /// did not find it again but has not returned to the baseline either).
    pub summary: String,
}
