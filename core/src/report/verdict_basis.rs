//! What a run's verdict reads of its analysis ([`VerdictBasis`]): the analysis without the
//! per-series comparisons, intervals and history that make up nearly all of it (at 18 cells ×
//! 34 metrics, 50–70 KB of JSON or 10–12 KB gzip, against 550 KB or 66 KB). The server stores
//! it beside the analysis, so a page listing the verdicts of many runs (the dashboard, the
//! verdict endpoint CI polls) reads that instead of decoding each whole analysis.
//!
//! Its JSON is a subset of [`RunAnalysis`]'s: the same field names at the same places, so the
//! JSON of a whole analysis also decodes as its basis (serde skips what the basis lacks); an
//! analysis stored before the basis existed is read that way.

use super::coverage::Coverage;
use super::model::{CellAnalysis, Continuing, InvalidRun, RunAnalysis};
use crate::regression::confounds::WorkloadConfound;
use crate::regression::{Finding, SeriesReport, SeriesState, Undecided};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Everything [`super::verdict::verdict_of`] reads of a [`RunAnalysis`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictBasis {
    /// Version of the project settings the analysis used.
    pub settings_version: i64,
    /// One entry per group (series key and cell) of the run's results, as in the analysis.
    pub groups: Vec<GroupBasis>,
    /// What the commit's analysis covers, as far as this run's groups are concerned.
    #[serde(default)]
    pub coverage: Coverage,
}

/// What the verdict reads of one group's analysis ([`CellAnalysis`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupBasis {
    /// The configuration (series key object).
    pub series_key: Value,
    /// The cell key.
    pub cell: String,
    /// Candidate runs that are neither tested nor part of a baseline.
    #[serde(default)]
    pub invalid_runs: Vec<InvalidRun>,
    /// The engine's report, reduced.
    pub report: ReportBasis,
    /// Effect-only findings (too little history).
    #[serde(default)]
    pub effect_only: Vec<Finding>,
    /// Findings that continue a standing alert of an earlier commit.
    #[serde(default)]
    pub continuing: Vec<Continuing>,
}

/// What the verdict reads of a group's engine report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportBasis {
    /// Every series of the group with its state, in the report's order.
    pub series: Vec<SeriesBasis>,
    /// Workload confounds of the candidate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workload: Vec<WorkloadConfound>,
    /// Families that moved for the worse without a finding (a stored basis leaves out the
    /// moves for the better: no verdict names them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undecided: Vec<Undecided>,
}

/// A series' state, and why when the verdict names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesBasis {
    /// The series.
    pub series_id: String,
    /// Its state in the analysis.
    pub state: SeriesState,
    /// Why it was not tested; kept only for `no_baseline` and `insufficient_data`, the states
    /// whose first reason a verdict quotes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl VerdictBasis {
    /// The basis of `analysis` (copies of the parts the verdict reads).
    pub fn of(analysis: &RunAnalysis) -> VerdictBasis {
        VerdictBasis {
            settings_version: analysis.settings_version,
            groups: analysis.groups.iter().map(GroupBasis::of).collect(),
            coverage: analysis.coverage.clone(),
        }
    }
}

impl GroupBasis {
    fn of(g: &CellAnalysis) -> GroupBasis {
        GroupBasis {
            series_key: g.series_key.clone(),
            cell: g.cell.clone(),
            invalid_runs: g.invalid_runs.clone(),
            report: ReportBasis {
                series: g.report.series.iter().map(SeriesBasis::of).collect(),
                workload: g.report.workload.clone(),
                // A move for the better never becomes a reason, whatever the settings.
                undecided: g
                    .report
                    .undecided
                    .iter()
                    .filter(|u| !u.better)
                    .cloned()
                    .collect(),
            },
            effect_only: g.effect_only.clone(),
            continuing: g.continuing.clone(),
        }
    }
}

impl SeriesBasis {
    fn of(s: &SeriesReport) -> SeriesBasis {
        let quoted = matches!(
            s.state,
            SeriesState::NoBaseline | SeriesState::InsufficientData
        );
        SeriesBasis {
            series_id: s.series_id.clone(),
            state: s.state,
            reason: s.reason.clone().filter(|_| quoted),
        }
    }
}
