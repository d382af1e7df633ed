//! ray-project LLMPerf `token_benchmark_ray.py`: the flattened `*_summary.json`, with the
//! `*_individual_responses.json` list of per-request dicts as a companion file from the same
//! folder (notes: `shared/notes/benchmark-tool-formats.md` §5).
//!
//! Summary keys: `results_<m>_quantiles_pNN`, `results_<m>_mean|min|max|stddev` for each metric
//! `m`, in **seconds** for latencies; numpy integers may be written as strings (`"550"`).
//! Statistics are pandas': `quantile` (linear, as numpy) and `std` (the **sample** std,
//! ddof = 1, unlike numpy-based tools; the fact `std` says so). LLMPerf's `inter_token_latency_s`
//! is the sum of all gaps including TTFT divided by the output tokens, ≈ E2E / tokens: it is
//! stored as `tpot_incl_ttft`, never as `itl`.

use super::tool_common::{count, file_error, finish, first_value, num, push, warn};
use super::{AdapterError, Content, InputFile};
use crate::cell::{RequestRate, WorkloadCell};
use crate::config::Configuration;
use crate::lenient_json::as_f64;
use crate::metric::Stat;
use crate::result::BenchResult;
use crate::samples::RequestSamples;
use serde_json::{Map, Value};

/// Format name of the summary.
pub const FORMAT: &str = "llmperf";
/// Format name of `*_individual_responses.json`.
pub const RESPONSES: &str = "llmperf-responses";

/// (LLMPerf metric, vocabulary name, factor to the stored unit).
const DISTRIBUTIONS: &[(&str, &str, f64)] = &[
    ("ttft_s", "ttft", 1000.0),
    ("inter_token_latency_s", "tpot_incl_ttft", 1000.0),
    ("end_to_end_latency_s", "e2el", 1000.0),
    (
        "request_output_throughput_token_per_s",
        "e2e_output_token_throughput",
        1.0,
    ),
];

/// Run fields LLMPerf itself writes (everything else top-level that is a string is user
/// metadata, e.g. `framework`).
const RUN_KEYS: &[&str] = &[
    "version",
    "name",
    "model",
    "mean_input_tokens",
    "stddev_input_tokens",
    "mean_output_tokens",
    "stddev_output_tokens",
    "num_concurrent_requests",
    "additional_sampling_params",
    "timestamp",
];

pub(super) fn detect(input: &InputFile) -> Result<(), String> {
    let v = first_value(input).ok_or("not JSON")?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    if obj.keys().any(|k| k.starts_with("results_"))
        && (obj.contains_key("num_concurrent_requests") || obj.contains_key("results_ttft_s_mean"))
    {
        Ok(())
    } else {
        Err("no LLMPerf `results_*` keys".into())
    }
}

pub(super) fn detect_responses(input: &InputFile) -> Result<(), String> {
    let v = first_value(input).ok_or("not JSON")?;
    let first = v
        .as_array()
        .ok_or("not a JSON list")?
        .first()
        .ok_or("an empty list")?;
    if first.get("end_to_end_latency_s").is_some() || first.get("ttft_s").is_some() {
        Ok(())
    } else {
        Err("no LLMPerf per-request `end_to_end_latency_s`".into())
    }
}

pub(super) fn parse(
    input: &InputFile,
    companions: &[&InputFile],
) -> Result<Vec<BenchResult>, AdapterError> {
    let v = match &input.content {
        Content::Json(values) => values.first().ok_or(AdapterError::Empty)?,
        Content::Text { not_json, .. } => return Err(AdapterError::Syntax(not_json.clone())),
    };
    detect(input).map_err(|why| file_error("", format!("not an LLMPerf summary: {why}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| file_error("", "expected a JSON object"))?;
    let mut result = BenchResult::default();
    let completed = num(obj, "results_num_completed_requests").and_then(count);
    let errors = num(obj, "results_number_errors").unwrap_or(0.0);
    if let Some(c) = completed {
        push(
            &mut result,
            "completed",
            Stat::Value,
            c as f64,
            None,
            "results_num_completed_requests",
        );
    }
    push(
        &mut result,
        "failed",
        Stat::Value,
        errors,
        None,
        "results_number_errors",
    );
    if let Some(t) = num(obj, "results_mean_output_throughput_token_per_s") {
        push(
            &mut result,
            "output_throughput",
            Stat::Value,
            t,
            None,
            "results_mean_output_throughput_token_per_s",
        );
    }
    if let Some(per_min) = num(obj, "results_num_completed_requests_per_min") {
        push(
            &mut result,
            "request_throughput",
            Stat::Value,
            per_min / 60.0,
            None,
            "results_num_completed_requests_per_min",
        );
    }
    if completed.is_some_and(|c| c > 0) {
        for (m, name, factor) in DISTRIBUTIONS {
            read_distribution(obj, m, name, *factor, completed, &mut result)?;
        }
    } else {
        warn(
            &mut result,
            "nothing_completed",
            "No request completed: the file has no latency statistics.",
        );
    }
    if errors > 0.0 {
        warn(
            &mut result,
            "failed_requests",
            format!(
                "{errors} of {} requests failed.",
                errors + completed.unwrap_or(0) as f64
            ),
        );
    }
    result.cell = read_cell(obj);
    result.configuration = read_configuration(obj);
    for key in ["name", "timestamp", "results_error_code_frequency"] {
        if let Some(v) = obj.get(key).filter(|v| !v.is_null()) {
            result.facts.insert(key.into(), v.clone());
        }
    }
    result
        .facts
        .insert("std".into(), "sample std (ddof=1, pandas)".into());
    if let Some(responses) = companions.iter().find(|c| detect_responses(c).is_ok()) {
        let samples = read_responses(responses)?;
        let ok = samples.success.iter().filter(|s| **s).count();
        if completed.is_some_and(|c| c as usize != ok) {
            warn(
                &mut result,
                "samples_mismatch",
                format!(
                    "`{}` has {ok} successful requests but the summary counts {}; are they from the same run?",
                    responses.name,
                    completed.unwrap_or(0)
                ),
            );
        }
        result.samples = Some(samples);
    }
    finish(&mut result);
    Ok(vec![result])
}

fn read_distribution(
    obj: &Map<String, Value>,
    metric: &str,
    name: &str,
    factor: f64,
    n: Option<u64>,
    result: &mut BenchResult,
) -> Result<(), AdapterError> {
    let prefix = format!("results_{metric}_");
    for (key, value) in obj {
        let Some(rest) = key.strip_prefix(&prefix) else {
            continue;
        };
        let stat = match rest {
            "mean" => Stat::Mean,
            "min" => Stat::Min,
            "max" => Stat::Max,
            "stddev" => Stat::Std,
            q => match q
                .strip_prefix("quantiles_p")
                .and_then(|p| p.parse::<f64>().ok())
            {
                Some(p) if (0.0..=100.0).contains(&p) => Stat::from_percentile(p),
                _ => continue,
            },
        };
        if value.is_null() {
            continue;
        }
        let v = as_f64(value).ok_or_else(|| {
            file_error(
                format!("/{key}"),
                format!("expected a number, found {value}"),
            )
        })?;
        push(result, name, stat, v * factor, n, key);
    }
    Ok(())
}

fn read_cell(obj: &Map<String, Value>) -> WorkloadCell {
    let mut cell = WorkloadCell::default();
    cell.load.max_concurrency = num(obj, "num_concurrent_requests")
        .and_then(count)
        .filter(|c| *c > 0);
    if cell.load.max_concurrency.is_some() {
        // A closed loop of N clients: vLLM's `inf` rate with max_concurrency N.
        cell.load.request_rate = Some(RequestRate::Infinite);
    }
    cell.input_len = num(obj, "mean_input_tokens").and_then(count);
    cell.output_len = num(obj, "mean_output_tokens").and_then(count);
    cell.num_prompts = num(obj, "results_num_requests_started").and_then(count);
    cell
}

fn read_configuration(obj: &Map<String, Value>) -> Configuration {
    let mut c = Configuration::default();
    c.model.name = obj.get("model").and_then(Value::as_str).map(str::to_string);
    c.benchmark.name = Some(FORMAT.to_string());
    c.benchmark.version = obj
        .get("version")
        .and_then(Value::as_str)
        .map(str::to_string);
    for (key, value) in obj {
        if RUN_KEYS.contains(&key.as_str()) || key.starts_with("results_") {
            continue;
        }
        if let Value::String(s) = value {
            c.metadata.insert(key.clone(), s.clone());
        }
    }
    c
}

fn read_responses(input: &InputFile) -> Result<RequestSamples, AdapterError> {
    let list = first_value(input)
        .and_then(Value::as_array)
        .ok_or_else(|| file_error("", "expected a list of responses"))?;
    let mut s = RequestSamples {
        ttft_ms: Some(Vec::new()),
        e2el_ms: Some(Vec::new()),
        input_tokens: Some(Vec::new()),
        output_tokens: Some(Vec::new()),
        ..Default::default()
    };
    for r in list {
        let get = |k: &str| r.get(k).and_then(as_f64);
        let ok = r.get("error_code").is_none_or(Value::is_null);
        s.success.push(ok);
        let ms = |k: &str| get(k).filter(|v| v.is_finite()).map(|v| v * 1000.0);
        if let Some(c) = s.ttft_ms.as_mut() {
            c.push(ms("ttft_s"));
        }
        if let Some(c) = s.e2el_ms.as_mut() {
            c.push(ms("end_to_end_latency_s"));
        }
        if let Some(c) = s.input_tokens.as_mut() {
            c.push(get("number_input_tokens").and_then(count));
        }
        if let Some(c) = s.output_tokens.as_mut() {
            c.push(get("number_output_tokens").and_then(count));
        }
    }
    Ok(s)
}
