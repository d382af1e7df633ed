//! Small readers shared by the SGLang, console, offline-vLLM and PyTorch-format adapters:
//! typed access to JSON object fields with JSON-pointer errors, and storing a metric value
//! (non-finite values become a warning, never a stored number).

use super::FieldError;
use crate::lenient_json::as_f64;
use crate::metric::{self, MetricValue, Stat};
use crate::result::{BenchResult, Warning};
use serde_json::{Map, Value};

/// A JSON pointer to a key under `prefix` (`""` for the top level), escaping `~` and `/`
/// per RFC 6901.
pub(super) fn pointer_in(prefix: &str, key: &str) -> String {
    format!("{prefix}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// The number at `key` (a JSON number, or a string Python tools write for one), `None` when
/// absent or null.
pub(super) fn number(
    obj: &Map<String, Value>,
    prefix: &str,
    key: &str,
) -> Result<Option<f64>, FieldError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => as_f64(v).map(Some).ok_or_else(|| {
            FieldError::new(
                pointer_in(prefix, key),
                format!("expected a number, found {}", short(v)),
            )
        }),
    }
}

/// A whole, non-negative count at `key`, `None` when absent or null.
pub(super) fn count(
    obj: &Map<String, Value>,
    prefix: &str,
    key: &str,
) -> Result<Option<u64>, FieldError> {
    match number(obj, prefix, key)? {
        None => Ok(None),
        Some(v) => as_count(v).map(Some).ok_or_else(|| {
            FieldError::new(
                pointer_in(prefix, key),
                format!("expected a whole count, found {v}"),
            )
        }),
    }
}

/// `v` as a count when it is a finite, whole, non-negative number that fits a `u64`.
pub(super) fn as_count(v: f64) -> Option<u64> {
    (v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < u64::MAX as f64).then_some(v as u64)
}

/// A value for an error message, cut to a readable length.
pub(super) fn short(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// Stores `value` as statistic `stat` of `name`, unless it is not finite: then a
/// `non_finite_value` warning names the file's `field`.
pub(super) fn push_value(
    result: &mut BenchResult,
    name: &str,
    stat: Stat,
    value: f64,
    n: Option<u64>,
    field: &str,
) {
    if !value.is_finite() {
        result.warnings.push(Warning {
            code: "non_finite_value".into(),
            message: format!("`{field}` is {value}; not stored."),
        });
        return;
    }
    result.metrics.push(MetricValue::new(name, stat, value, n));
}

/// A detector's answer from the keys a record lacks: `Ok` when none, else why not
/// (``no `duration`, `model_id` ``).
pub(super) fn missing_keys(missing: &[&str]) -> Result<(), String> {
    if missing.is_empty() {
        return Ok(());
    }
    let keys: Vec<String> = missing.iter().map(|k| format!("`{k}`")).collect();
    Err(format!("no {}", keys.join(", ")))
}

/// True when `result` already holds statistic `stat` of `name`.
pub(super) fn has(result: &BenchResult, name: &str, stat: &Stat) -> bool {
    result
        .metrics
        .iter()
        .any(|m| m.name == name && &m.stat == stat)
}

/// Sorts the metrics into display order and adds a `small_sample_tail` warning for each
/// percentile estimated from too few samples (as the vLLM adapter does).
pub(super) fn finish_metrics(result: &mut BenchResult) {
    result
        .metrics
        .sort_by_key(|m| metric::display_order(&m.name, &m.stat));
    let small_tails: Vec<Warning> = result
        .metrics
        .iter()
        .filter_map(|m| {
            let (p, n) = (m.stat.percentile()?, m.n?);
            super::vllm_serve::is_small_sample_tail(p, n).then(|| Warning {
                code: "small_sample_tail".into(),
                message: format!(
                    "{} {} comes from only {n} samples: fewer than one sample lies beyond it.",
                    m.name, m.stat
                ),
            })
        })
        .collect();
    result.warnings.extend(small_tails);
}

/// Parses a statistic label as tools write it in keys: `mean`, `median`, `std`, `min`, `max`,
/// `p99`, `p99.9`.
pub(super) fn stat_label(label: &str) -> Option<Stat> {
    match label {
        "mean" | "median" | "std" | "min" | "max" => label.parse().ok(),
        _ => {
            let p = label.strip_prefix('p')?;
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                return None;
            }
            label.parse().ok()
        }
    }
}
