//! Confounds: what else changed between two results besides the engine.
//!
//! The validation method asks for one factor at a time. [`confounds`] lists every field that
//! differs between two full configurations and their workload cells, and warns where the
//! comparison itself is doubtful.

use crate::cell::{RequestRate, WorkloadCell};
use crate::config::Configuration;
use crate::result::Warning;
use serde::Serialize;
use serde_json::{Map, Value};

/// Fields that are the change under test, not a confound: the engine's commit and version.
pub const CHANGE_UNDER_TEST: &[&str] = &["engine.commit", "engine.version"];

/// Fields that restate others (command lines carry ports, paths and every flag): listed as
/// differences, never counted as a factor of their own.
pub const RESTATING_FIELDS: &[&str] = &["engine.launch_command", "benchmark.command"];

/// One differing field: dotted path (`quantization.kv_cache_dtype`, `cell.load.max_concurrency`)
/// and both values (`null` when unset on that side).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldDiff {
    /// Dotted path.
    pub field: String,
    /// Value on the baseline side.
    pub baseline: Value,
    /// Value on the candidate side.
    pub candidate: Value,
}

/// What [`confounds`] found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfoundReport {
    /// Every differing field, sorted by path.
    pub differences: Vec<FieldDiff>,
    /// The differing fields counted as factors (not the change under test, not restating).
    pub factors: Vec<String>,
    /// Codes: `several_factors_changed`, `load_shape_differs`, `tokenizer_differs`,
    /// `quantization_without_quality`.
    pub warnings: Vec<Warning>,
}

fn flatten(prefix: &str, v: &Value, out: &mut Map<String, Value>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&p, x, out);
            }
        }
        Value::Object(_) => {}
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

fn load_kind(cell: &WorkloadCell) -> &'static str {
    match (cell.load.request_rate, cell.load.max_concurrency) {
        (Some(RequestRate::PerSecond(_)), _) => "request rate",
        (_, Some(_)) => "fixed concurrency",
        (Some(RequestRate::Infinite), None) => "unlimited burst",
        (None, None) => "unknown",
    }
}

/// Compares two full configurations and cells. `quality_result_attached`: whether the
/// candidate comes with a quality (accuracy) result on the tasks; a quantization change
/// without one is warned about, since speed does not prove correctness.
pub fn confounds(
    baseline: (&Configuration, &WorkloadCell),
    candidate: (&Configuration, &WorkloadCell),
    quality_result_attached: bool,
) -> ConfoundReport {
    let mut a = Map::new();
    let mut b = Map::new();
    flatten(
        "",
        &serde_json::to_value(baseline.0).expect("serializes"),
        &mut a,
    );
    flatten(
        "",
        &serde_json::to_value(candidate.0).expect("serializes"),
        &mut b,
    );
    flatten(
        "cell",
        &serde_json::to_value(baseline.1).expect("serializes"),
        &mut a,
    );
    flatten(
        "cell",
        &serde_json::to_value(candidate.1).expect("serializes"),
        &mut b,
    );
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let differences: Vec<FieldDiff> = keys
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| FieldDiff {
            field: k.clone(),
            baseline: a.get(k).cloned().unwrap_or(Value::Null),
            candidate: b.get(k).cloned().unwrap_or(Value::Null),
        })
        .collect();
    let factors: Vec<String> = differences
        .iter()
        .map(|d| d.field.clone())
        .filter(|f| !CHANGE_UNDER_TEST.contains(&f.as_str()))
        .filter(|f| !RESTATING_FIELDS.contains(&f.as_str()))
        .collect();
    let mut warnings = Vec::new();
    if factors.len() > 1 {
        warnings.push(Warning {
            code: "several_factors_changed".into(),
            message: format!(
                "{} factors changed besides the engine commit/version ({}): a difference cannot be \
                 traced to one cause",
                factors.len(),
                factors.join(", ")
            ),
        });
    }
    let (ka, kb) = (load_kind(baseline.1), load_kind(candidate.1));
    if ka != kb {
        warnings.push(Warning {
            code: "load_shape_differs".into(),
            message: format!(
                "load shapes differ (baseline {ka}, candidate {kb}): a fixed-concurrency test slows \
                 its own arrivals when the server slows, a request-rate test does not"
            ),
        });
    }
    if baseline.0.model.tokenizer != candidate.0.model.tokenizer {
        warnings.push(Warning {
            code: "tokenizer_differs".into(),
            message: "tokenizers differ: tokens/s are not comparable across tokenizers".into(),
        });
    }
    if baseline.0.quantization != candidate.0.quantization && !quality_result_attached {
        warnings.push(Warning {
            code: "quantization_without_quality".into(),
            message: "quantization changed and no quality result is attached: speed does not \
                      prove correctness"
                .into(),
        });
    }
    ConfoundReport {
        differences,
        factors,
        warnings,
    }
}
