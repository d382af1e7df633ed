//! benchtrail's own result format: a [`BenchResult`] object, or a list of them, as JSON.

use super::FieldError;
use crate::metric;
use crate::result::BenchResult;
use serde_json::Value;

/// Format name.
pub const FORMAT: &str = "benchtrail";

pub(super) fn detect(record: &Value) -> Result<(), String> {
    let first = match record {
        Value::Array(items) => items.first().ok_or("an empty list")?,
        other => other,
    };
    match first.get("metrics") {
        Some(Value::Array(_)) => Ok(()),
        _ => Err("no `metrics` list".into()),
    }
}

pub(super) fn parse(record: &Value) -> Result<Vec<BenchResult>, FieldError> {
    match record {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                parse_one(item).map_err(|e| FieldError::new(format!("/{i}{}", e.field), e.message))
            })
            .collect(),
        other => Ok(vec![parse_one(other)?]),
    }
}

/// Checks a result in benchtrail's own format: known metric names, the vocabulary's unit,
/// finite values.
pub fn validate(result: &BenchResult) -> Result<(), FieldError> {
    for (i, m) in result.metrics.iter().enumerate() {
        let def = metric::lookup(&m.name).ok_or_else(|| {
            FieldError::new(
                format!("/metrics/{i}/name"),
                format!("unknown metric `{}`", m.name),
            )
        })?;
        if m.unit != def.unit {
            return Err(FieldError::new(
                format!("/metrics/{i}/unit"),
                format!("`{}` is stored in {}, not {}", m.name, def.unit, m.unit),
            ));
        }
        if !m.value.is_finite() {
            return Err(FieldError::new(
                format!("/metrics/{i}/value"),
                "must be a finite number",
            ));
        }
    }
    Ok(())
}

fn parse_one(value: &Value) -> Result<BenchResult, FieldError> {
    let result: BenchResult = serde_json::from_value(value.clone())
        .map_err(|e| FieldError::new("", format!("not a benchtrail result: {e}")))?;
    validate(&result)?;
    Ok(result)
}
