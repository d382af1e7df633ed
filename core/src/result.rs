//! A result: the metric values of one configuration in one workload cell within one run.
//! This is also benchtrail's own upload format (see the JSON Schema served by the API).

use crate::cell::WorkloadCell;
use crate::config::Configuration;
use crate::metric::MetricValue;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Something a reader of the result should know: a tail percentile from a small sample, failed
/// requests, a field the file lacked. Stored with the result and shown wherever it is shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Warning {
    /// A stable code: `small_sample_tail`, `failed_requests`, `nothing_completed`, `non_finite_value`, ...
    pub code: String,
    /// One sentence for people.
    pub message: String,
}

/// One result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BenchResult {
    /// The workload cell.
    #[serde(default)]
    pub cell: WorkloadCell,
    /// The full configuration.
    #[serde(default)]
    pub configuration: Configuration,
    /// The metric values, `{name, stat, unit, value, n}`.
    pub metrics: Vec<MetricValue>,
    /// Facts from the file that are neither metrics nor configuration (its `date`, `label`),
    /// kept as written.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub facts: Map<String, Value>,
    /// Warnings about this result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// Per-request measurements, when the file has them (see [`crate::samples`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<crate::samples::RequestSamples>,
    /// Where the result came from: the format and the index of the uploaded file and of the
    /// record within it. Absent for results sent in benchtrail's own format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
}

/// Where a result came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The adapter's format name, e.g. `vllm-bench-serve`.
    pub format: String,
    /// Index of the file in the upload (`files[n]`).
    #[serde(deserialize_with = "crate::serde_int::deserialize")]
    pub file: usize,
    /// Index of the record within the file (the line of a JSON Lines file), 0-based.
    #[serde(deserialize_with = "crate::serde_int::deserialize")]
    pub record: usize,
}
