//! What an analysis reads of stored history: the series of a group and the values of its
//! runs, with what is needed to place each value (commit, branch, upload order) and judge it
//! (health counts, exclusion, measured lengths). Storage fills these; [`super::group`] builds
//! the engine's input from them; [`super::compare`] builds them from two uploads.

use std::sync::Arc;
use uuid::Uuid;

/// One stored value of a series, with what the analysis needs to place and judge it.
///
/// The strings are shared (`Arc<str>`): a window holds tens of thousands of points of a few
/// dozen series, commits and branches, and a copy of each string per point was most of what
/// building and freeing a window cost (BENCHMARKS.md, session 25).
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryPoint {
    /// Series id.
    pub series_id: Arc<str>,
    /// Internal result id.
    pub result_id: i64,
    /// Run id.
    pub run_id: Uuid,
    /// Commit SHA.
    pub commit_sha: Arc<str>,
    /// Branch.
    pub branch: Arc<str>,
    /// Upload sequence number (last tie-breaker of the order).
    pub seq: i64,
    /// The value, in the series' unit.
    pub value: f64,
    /// The `completed` count of the same result, if stored.
    pub completed: Option<f64>,
    /// The `failed` count of the same result, if stored.
    pub failed: Option<f64>,
    /// `num_prompts` of the result's cell, if stated.
    pub num_prompts: Option<f64>,
    /// The run was excluded from baselines by a person.
    pub excluded: bool,
    /// The result's measured mean input and output lengths (facts `measured_input_len_mean`,
    /// `measured_output_len_mean`), and SGLang's `total_output_tokens_retokenized` over its
    /// `total_output_tokens`.
    pub lengths: crate::regression::confounds::RunLengths,
}

/// One series of a result's group (same project, series key and cell).
#[derive(Debug, Clone, PartialEq)]
pub struct GroupSeries {
    /// Series id.
    pub series_id: String,
    /// Metric.
    pub metric: String,
    /// Statistic.
    pub stat: crate::Stat,
    /// SLO profile.
    pub slo_profile: Option<String>,
    /// The group's series key (JSON text).
    pub series_key_json: String,
    /// The group's cell key.
    pub cell_key: String,
}
