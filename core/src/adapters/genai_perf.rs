//! NVIDIA GenAI-Perf: `profile_export_genai_perf.json` (the summary) with perf_analyzer's
//! per-request `profile_export.json` as a companion file from the same folder (notes:
//! `shared/notes/benchmark-tool-formats.md` §3.1 and §3.3).
//!
//! The summary has AIPerf's shape (`{unit, avg, p1..p99, min, max, std}` per metric) and is
//! read with the AIPerf mapping: `inter_token_latency` is per request `(E2E − TTFT)/(OSL − 1)`,
//! vLLM's **tpot**. `request_goodput.avg == -1.0` means an SLO of `--goodput` was invalid: not
//! stored, with a warning. perf_analyzer's per-request file has ns timestamps
//! (`timestamp`, `response_timestamps`) and the raw SSE responses; TTFT and E2E per request are
//! rebuilt from the timestamps as GenAI-Perf does (the trailing `data: [DONE]` response does not
//! count); token counts need the tokenizer, so the tpot and length columns are left empty.

use super::tool_common::{at, count, file_error, finish, first_value, text, warn};
use super::{AdapterError, Content, InputFile};
use crate::cell::{RequestRate, WorkloadCell};
use crate::config::Configuration;
use crate::lenient_json::as_f64;
use crate::result::BenchResult;
use crate::samples::RequestSamples;
use serde_json::Value;

/// Format name of the summary.
pub const FORMAT: &str = "genai-perf";
/// Format name of perf_analyzer's per-request `profile_export.json`.
pub const RECORDS: &str = "genai-perf-records";

pub(super) fn detect(input: &InputFile) -> Result<(), String> {
    let v = first_value(input).ok_or("not JSON")?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    let config = obj.get("input_config").ok_or("no `input_config`")?;
    if config.get("perf_analyzer").is_none() && config.get("model_names").is_none() {
        return Err("no GenAI-Perf `input_config` (perf_analyzer, model_names)".into());
    }
    if obj
        .values()
        .any(|v| v.get("unit").is_some_and(Value::is_string))
    {
        Ok(())
    } else {
        Err("no metric objects with a `unit`".into())
    }
}

pub(super) fn detect_records(input: &InputFile) -> Result<(), String> {
    let v = first_value(input).ok_or("not JSON")?;
    let first = v
        .get("experiments")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
        .ok_or("no `experiments` list")?;
    if first.get("requests").is_some_and(Value::is_array) && first.get("experiment").is_some() {
        Ok(())
    } else {
        Err("no perf_analyzer `experiments[].requests`".into())
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
    detect(input).map_err(|why| file_error("", format!("not a GenAI-Perf summary: {why}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| file_error("", "expected a JSON object"))?;
    let mut result = BenchResult::default();
    let completed = at(v, &["request_count", "avg"])
        .and_then(as_f64)
        .and_then(count);
    super::aiperf::read_metrics(obj, completed, &mut result)?;
    result.cell = read_cell(v);
    result.configuration = read_configuration(v);
    if completed.is_none_or(|c| c == 0) {
        warn(
            &mut result,
            "nothing_completed",
            "No request completed: the file has no latency statistics.",
        );
    }
    if let Some(records) = companions.iter().find(|c| detect_records(c).is_ok()) {
        let duration = None;
        match read_records(records, duration)? {
            Ok((samples, version)) => {
                if let Some(version) = version {
                    result
                        .facts
                        .insert("perf_analyzer_version".into(), version.into());
                }
                if completed.is_some_and(|c| c as usize != samples.len()) {
                    warn(
                        &mut result,
                        "samples_mismatch",
                        format!(
                            "`{}` has {} requests but the summary counts {}; are they from the same run?",
                            records.name,
                            samples.len(),
                            completed.unwrap_or(0)
                        ),
                    );
                }
                result.samples = Some(samples);
            }
            Err(why) => warn(&mut result, "samples_not_read", why),
        }
    }
    finish(&mut result);
    Ok(vec![result])
}

fn read_cell(v: &Value) -> WorkloadCell {
    let mut cell = WorkloadCell::default();
    let cfg = |path: &[&str]| at(v, &[&["input_config"], path].concat()).and_then(as_f64);
    cell.load.max_concurrency = cfg(&["perf_analyzer", "stimulus", "concurrency"])
        .and_then(count)
        .filter(|c| *c > 0);
    cell.load.request_rate = match cfg(&["perf_analyzer", "stimulus", "request_rate"]) {
        Some(r) if r.is_finite() && r > 0.0 => Some(RequestRate::PerSecond(r)),
        // Concurrency mode sends as fast as slots free: vLLM's `inf` rate.
        _ if cell.load.max_concurrency.is_some() => Some(RequestRate::Infinite),
        _ => None,
    };
    let mode =
        at(v, &["input_config", "perf_analyzer", "measurement", "mode"]).and_then(Value::as_str);
    if mode == Some("request_count") {
        cell.num_prompts = cfg(&["perf_analyzer", "measurement", "num"]).and_then(count);
    }
    cell.input_len = cfg(&["input", "synthetic_tokens", "mean"]).and_then(count);
    cell.output_len = cfg(&["input", "output_tokens", "mean"])
        .and_then(count)
        .filter(|n| *n > 0);
    cell
}

fn read_configuration(v: &Value) -> Configuration {
    let mut c = Configuration::default();
    let cfg = |path: &[&str]| at(v, &[&["input_config"], path].concat());
    c.model.name = text(
        cfg(&["model_names"])
            .and_then(Value::as_array)
            .and_then(|m| m.first()),
    );
    c.model.tokenizer = text(cfg(&["tokenizer", "name"]));
    c.benchmark.name = Some(FORMAT.to_string());
    c.benchmark.backend = text(cfg(&["endpoint", "type"]));
    c.sampling.ignore_eos = cfg(&["input", "extra", "ignore_eos"]).and_then(Value::as_bool);
    c
}

type Records = Result<(RequestSamples, Option<String>), String>;

/// TTFT and E2E per request from perf_analyzer's timestamps (ns → ms). `Ok(Err(why))` when
/// the file is readable but cannot be paired (several experiments).
fn read_records(input: &InputFile, duration_s: Option<f64>) -> Result<Records, AdapterError> {
    let Some(v) = first_value(input) else {
        return Ok(Err("per-request file is empty".into()));
    };
    let experiments = v
        .get("experiments")
        .and_then(Value::as_array)
        .ok_or_else(|| file_error("/experiments", "expected a list"))?;
    let [experiment] = experiments.as_slice() else {
        return Ok(Err(format!(
            "`{}` holds {} experiments; per-request samples are kept only for one.",
            input.name,
            experiments.len()
        )));
    };
    let requests = experiment
        .get("requests")
        .and_then(Value::as_array)
        .ok_or_else(|| file_error("/experiments/0/requests", "expected a list"))?;
    let mut s = RequestSamples {
        duration_s,
        ttft_ms: Some(Vec::new()),
        e2el_ms: Some(Vec::new()),
        ..Default::default()
    };
    for r in requests {
        let start = r.get("timestamp").and_then(Value::as_u64);
        let stamps: Vec<u64> = r
            .get("response_timestamps")
            .and_then(Value::as_array)
            .map(|t| t.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        let outputs = r.get("response_outputs").and_then(Value::as_array);
        // The last response is the SSE terminator `data: [DONE]`, which GenAI-Perf drops.
        let done = outputs
            .and_then(|o| o.get(stamps.len().wrapping_sub(1)))
            .and_then(|o| o.get("response"))
            .and_then(Value::as_str)
            .is_some_and(|t| t.trim() == "data: [DONE]");
        let content = if done && !stamps.is_empty() {
            &stamps[..stamps.len() - 1]
        } else {
            &stamps[..]
        };
        let ms = |t: Option<&u64>| -> Option<f64> {
            let (t, start) = (*t?, start?);
            Some(t.checked_sub(start)? as f64 / 1e6)
        };
        let ttft = ms(content.first());
        let e2el = ms(content.last());
        s.success.push(e2el.is_some());
        if let Some(c) = s.ttft_ms.as_mut() {
            c.push(ttft);
        }
        if let Some(c) = s.e2el_ms.as_mut() {
            c.push(e2el);
        }
    }
    let version = text(v.get("version"));
    Ok(Ok((s, version)))
}
