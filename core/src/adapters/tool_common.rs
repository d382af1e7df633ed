//! Helpers shared by the AIPerf, GenAI-Perf, guidellm and LLMPerf adapters: reading numbers
//! leniently, pushing vocabulary values, and the small-sample warnings.

use super::{AdapterError, FieldError};
use crate::lenient_json::as_f64;
use crate::metric::{self, MetricValue, Stat};
use crate::result::{BenchResult, Warning};
use serde_json::{Map, Value};

/// A JSON object's member as a number (numbers written as strings accepted); `None` when
/// absent or `null`.
pub(super) fn num(obj: &Map<String, Value>, key: &str) -> Option<f64> {
    obj.get(key).and_then(as_f64)
}

pub(super) use super::fields::as_count as count;

/// A string member.
pub(super) fn text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_string)
}

/// Walks nested object keys.
pub(super) fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(*k))
}

/// Builds a vocabulary value. Built through serde so that fields added to [`MetricValue`]
/// later (all optional) take their defaults.
pub(super) fn metric_value(
    name: &str,
    stat: Stat,
    value: f64,
    n: Option<u64>,
    slo_profile: Option<&str>,
) -> Option<MetricValue> {
    let def = metric::lookup(name)?;
    let mut obj = serde_json::json!({
        "name": name,
        "stat": stat.to_string(),
        "unit": def.unit,
        "value": value,
    });
    if let Some(n) = n {
        obj["n"] = n.into();
    }
    if let Some(p) = slo_profile {
        obj["slo_profile"] = p.into();
    }
    serde_json::from_value(obj).ok()
}

/// Pushes a value of vocabulary metric `name`; a non-finite value becomes a warning instead.
pub(super) fn push(
    result: &mut BenchResult,
    name: &str,
    stat: Stat,
    value: f64,
    n: Option<u64>,
    field: &str,
) {
    push_with(result, name, stat, value, n, field, None);
}

/// [`push`] with an SLO profile (goodput computed with the tool's own thresholds).
pub(super) fn push_with(
    result: &mut BenchResult,
    name: &str,
    stat: Stat,
    value: f64,
    n: Option<u64>,
    field: &str,
    slo_profile: Option<&str>,
) {
    if !value.is_finite() {
        result.warnings.push(Warning {
            code: "non_finite_value".into(),
            message: format!("`{field}` is {value}; not stored."),
        });
        return;
    }
    debug_assert!(metric::lookup(name).is_some(), "{name} not in vocabulary");
    if let Some(m) = metric_value(name, stat, value, n, slo_profile) {
        result.metrics.push(m);
    }
}

pub(super) use super::fields::finish_metrics as finish;

/// A field error of a whole-file format (record 0, line 1).
pub(super) fn file_error(field: impl Into<String>, message: impl Into<String>) -> AdapterError {
    AdapterError::Field {
        record: 0,
        line: 1,
        error: FieldError::new(field, message),
    }
}

/// A warning.
pub(super) fn warn(result: &mut BenchResult, code: &str, message: impl Into<String>) {
    result.warnings.push(Warning {
        code: code.into(),
        message: message.into(),
    });
}

/// The first JSON value of a file, if it is JSON.
pub(super) fn first_value<'a>(input: &'a super::InputFile) -> Option<&'a Value> {
    input.content.records().and_then(|r| r.first())
}

/// Statistic label of an AIPerf/GenAI-Perf metric object key (`avg`, `p99`, `min`, ...).
pub(super) fn stat_of_key(key: &str) -> Option<Stat> {
    match key {
        "avg" => Some(Stat::Mean),
        "std" => Some(Stat::Std),
        "min" => Some(Stat::Min),
        "max" => Some(Stat::Max),
        _ => {
            let p = key.strip_prefix('p')?;
            // `p50` etc.; `adj_p99` (failed requests counted as unbounded) is not the same.
            let v: f64 = p.parse().ok()?;
            (p.chars().all(|c| c.is_ascii_digit() || c == '.') && (0.0..=100.0).contains(&v))
                .then(|| Stat::from_percentile(v))
        }
    }
}
