//! `vllm bench latency --output-json F` and `vllm bench throughput --output-json F`: the
//! offline benchmarks (an `LLM` engine in-process, no server).
//!
//! Keys as written by vllm/benchmarks/latency.py and throughput.py (notes §1.4):
//! - latency: `avg_latency` (s), `std_latency` (s), `latencies` (s, one per iteration),
//!   `percentiles` (`{"10","25","50","75","90","99"}` → s). Stored as `batch_latency` in ms,
//!   with n = the number of iterations.
//! - throughput: `elapsed_time` (s), `num_requests`, `total_num_tokens` (prompt + output),
//!   `requests_per_second`, `tokens_per_second` (prompt + output tokens per second). The output
//!   token throughput is printed but not written, so it is not stored.
//!
//! Neither file names the model, the engine arguments or the input lengths: the runner states
//! them. `benchmark.name` is the format name.

use super::fields::{count, finish_metrics, number, pointer_in, push_value, short, stat_label};
use super::FieldError;
use crate::lenient_json::as_f64;
use crate::metric::Stat;
use crate::result::BenchResult;
use serde_json::{Map, Value};

/// `vllm bench latency --output-json` format name.
pub const LATENCY_FORMAT: &str = "vllm-bench-latency";
/// `vllm bench throughput --output-json` format name.
pub const THROUGHPUT_FORMAT: &str = "vllm-bench-throughput";

const LATENCY_KEYS: &[&str] = &["avg_latency", "std_latency", "latencies", "percentiles"];
const THROUGHPUT_KEYS: &[&str] = &[
    "elapsed_time",
    "num_requests",
    "total_num_tokens",
    "requests_per_second",
    "tokens_per_second",
];

fn require(record: &Value, keys: &[&str]) -> Result<(), String> {
    let obj = record.as_object().ok_or("not a JSON object")?;
    let missing: Vec<String> = keys
        .iter()
        .filter(|k| !obj.contains_key(**k))
        .map(|k| format!("`{k}`"))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("no {}", missing.join(", ")))
    }
}

pub(super) fn detect_latency(record: &Value) -> Result<(), String> {
    require(record, &["avg_latency", "latencies"])
}

pub(super) fn detect_throughput(record: &Value) -> Result<(), String> {
    require(
        record,
        &["elapsed_time", "requests_per_second", "tokens_per_second"],
    )
}

/// Reads the latency fields of `obj` (at JSON pointer `prefix`) into `result`: shared with
/// the PyTorch-format adapter, whose latency record carries the same keys.
pub(super) fn read_latency(
    obj: &Map<String, Value>,
    prefix: &str,
    iterations: Option<u64>,
    result: &mut BenchResult,
) -> Result<(), FieldError> {
    let n = iterations;
    if let Some(v) = number(obj, prefix, "avg_latency")? {
        push_value(
            result,
            "batch_latency",
            Stat::Mean,
            v * 1000.0,
            n,
            "avg_latency",
        );
    }
    if let Some(v) = number(obj, prefix, "std_latency")? {
        push_value(
            result,
            "batch_latency",
            Stat::Std,
            v * 1000.0,
            n,
            "std_latency",
        );
    }
    match obj.get("percentiles") {
        None | Some(Value::Null) => {}
        Some(Value::Object(ps)) => {
            for (p, v) in ps {
                let at = format!("{}/{}", pointer_in(prefix, "percentiles"), p);
                let stat = stat_label(&format!("p{p}"))
                    .ok_or_else(|| FieldError::new(at.clone(), "expected a percentile 0–100"))?;
                let v = as_f64(v).ok_or_else(|| {
                    FieldError::new(at, format!("expected seconds, found {}", short(v)))
                })?;
                push_value(
                    result,
                    "batch_latency",
                    stat,
                    v * 1000.0,
                    n,
                    &format!("percentiles.{p}"),
                );
            }
        }
        Some(other) => {
            return Err(FieldError::new(
                pointer_in(prefix, "percentiles"),
                format!("expected an object of percentiles, found {}", short(other)),
            ))
        }
    }
    Ok(())
}

/// The iteration latencies in s, checked.
fn latencies(obj: &Map<String, Value>) -> Result<Option<usize>, FieldError> {
    match obj.get("latencies") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                if as_f64(v).is_none() {
                    return Err(FieldError::new(
                        format!("/latencies/{i}"),
                        format!("expected seconds, found {}", short(v)),
                    ));
                }
            }
            Ok(Some(items.len()))
        }
        Some(other) => Err(FieldError::new(
            "/latencies",
            format!("expected a list of seconds, found {}", short(other)),
        )),
    }
}

fn facts(obj: &Map<String, Value>, known: &[&str], result: &mut BenchResult) {
    for (k, v) in obj {
        if !known.contains(&k.as_str()) && !v.is_null() {
            result.facts.insert(k.clone(), v.clone());
        }
    }
}

pub(super) fn parse_latency(record: &Value) -> Result<Vec<BenchResult>, FieldError> {
    let obj = record
        .as_object()
        .ok_or_else(|| FieldError::new("", "expected a JSON object"))?;
    detect_latency(record)
        .map_err(|why| FieldError::new("", format!("not a vllm bench latency result: {why}")))?;
    let mut result = BenchResult::default();
    result.configuration.benchmark.name = Some(LATENCY_FORMAT.into());
    result.configuration.engine.name = Some("vllm".into());
    let iterations = latencies(obj)?.map(|n| n as u64);
    read_latency(obj, "", iterations, &mut result)?;
    finish_metrics(&mut result);
    facts(obj, LATENCY_KEYS, &mut result);
    Ok(vec![result])
}

pub(super) fn parse_throughput(record: &Value) -> Result<Vec<BenchResult>, FieldError> {
    let obj = record
        .as_object()
        .ok_or_else(|| FieldError::new("", "expected a JSON object"))?;
    detect_throughput(record)
        .map_err(|why| FieldError::new("", format!("not a vllm bench throughput result: {why}")))?;
    let mut result = BenchResult::default();
    result.configuration.benchmark.name = Some(THROUGHPUT_FORMAT.into());
    result.configuration.engine.name = Some("vllm".into());
    read_throughput(obj, "", &mut result)?;
    finish_metrics(&mut result);
    facts(obj, THROUGHPUT_KEYS, &mut result);
    if let Some(v) = obj.get("total_num_tokens").filter(|v| !v.is_null()) {
        result.facts.insert("total_num_tokens".into(), v.clone());
    }
    Ok(vec![result])
}

/// Reads the throughput fields of `obj` (at JSON pointer `prefix`) into `result`.
pub(super) fn read_throughput(
    obj: &Map<String, Value>,
    prefix: &str,
    result: &mut BenchResult,
) -> Result<(), FieldError> {
    if let Some(v) = number(obj, prefix, "elapsed_time")? {
        push_value(result, "duration", Stat::Value, v, None, "elapsed_time");
    }
    // Offline, every request of the batch finishes (an error ends the whole run).
    if let Some(n) = count(obj, prefix, "num_requests")? {
        push_value(
            result,
            "completed",
            Stat::Value,
            n as f64,
            None,
            "num_requests",
        );
        result.cell.num_prompts = Some(n);
    }
    if let Some(v) = number(obj, prefix, "requests_per_second")? {
        push_value(
            result,
            "request_throughput",
            Stat::Value,
            v,
            None,
            "requests_per_second",
        );
    }
    if let Some(v) = number(obj, prefix, "tokens_per_second")? {
        push_value(
            result,
            "total_token_throughput",
            Stat::Value,
            v,
            None,
            "tokens_per_second",
        );
    }
    // Checked as a count; kept as a fact (no vocabulary metric counts prompt + output tokens).
    count(obj, prefix, "total_num_tokens")?;
    Ok(())
}
