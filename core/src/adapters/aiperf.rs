//! NVIDIA AIPerf: `profile_export_aiperf.json` (the summary), with its per-request
//! `profile_export.jsonl` and its `server_metrics_export.json` as companion files from the same
//! folder (notes: `shared/notes/benchmark-tool-formats.md` §3.1–3.2).
//!
//! The summary holds one object per metric tag, `{unit, avg, p1..p99, min, max, std, count,
//! sum}` (scalar metrics only `unit` and `avg`; AIPerf 0.8 "extra" metrics write explicit
//! `null` stats, which are skipped). Names: AIPerf's `inter_token_latency` is per request
//! `(E2E − TTFT)/(OSL − 1)`, vLLM's **tpot**, stored as `tpot`; its per-chunk gaps
//! `inter_chunk_latency` keep their own name (vLLM's `itl` is the same gaps, but AIPerf's chunks
//! are counted differently and the two are kept apart). `time_to_first_output_token` (first
//! non-reasoning token) keeps its name.
//!
//! The layout before AIPerf matched GenAI-Perf's (up to 0.1.1: metrics under `records`, `ttft`
//! for `time_to_first_token`) is read too (see `current_layout`).
//!
//! What an AIPerf run folder holds besides results, and what happens to it:
//! - `phases/warmup/profile_export_aiperf.json`: the warm-up phase. Never a result: rejected
//!   with an error. Detected by folder (a path segment named `warmup`) and, where the file
//!   says enough, by content (its request count equals the warm-up phase's request count of
//!   `input_config.phases` and differs from the profiling phase's).
//! - warm-up records inside `profile_export.jsonl` (`metadata.benchmark_phase == "warmup"`):
//!   skipped when building the per-request samples.
//! - `inputs.json` (the prompts sent) and `phase_manifest.json`: rejected with an error that
//!   says what they are.
//! - `server_metrics_export.json`: the server's Prometheus metrics over the profiling phase;
//!   read when uploaded next to the summary (`server_*` metrics, see [`SERVER_METRICS`]).

use super::tool_common::{at, count, file_error, finish, num, push, push_with, text, warn};
use super::{AdapterError, Content, InputFile};
use crate::cell::{LoadShape, RequestRate, WorkloadCell};
use crate::config::Configuration;
use crate::lenient_json::as_f64;
use crate::metric::Stat;
use crate::result::BenchResult;
use crate::samples::RequestSamples;
use serde_json::{Map, Value};

/// Format name of the summary.
pub const FORMAT: &str = "aiperf";
/// Format name of the per-request `profile_export.jsonl`.
pub const RECORDS: &str = "aiperf-records";
/// Format name of `server_metrics_export.json`.
pub const SERVER_METRICS: &str = "aiperf-server-metrics";

/// How a metric tag is stored: vocabulary name, whether it is a per-request distribution
/// (else an aggregate stored from `avg`), and the unit family the JSON unit must belong to.
struct Mapping {
    tag: &'static str,
    name: &'static str,
    distribution: bool,
    unit: UnitFamily,
}

#[derive(Clone, Copy, PartialEq)]
enum UnitFamily {
    /// A latency, stored in ms.
    Ms,
    /// A duration, stored in s.
    Seconds,
    /// Stored as written; the JSON unit must be one of the listed strings.
    Exact(&'static [&'static str]),
}

const REQ_PER_S: UnitFamily = UnitFamily::Exact(&["requests/sec"]);
const TOK_PER_S: UnitFamily = UnitFamily::Exact(&["tokens/sec"]);
const TOK_PER_S_USER: UnitFamily = UnitFamily::Exact(&["tokens/sec/user"]);
const REQUESTS: UnitFamily = UnitFamily::Exact(&["requests", "count"]);
const TOKENS: UnitFamily = UnitFamily::Exact(&["tokens"]);

const fn m(tag: &'static str, name: &'static str, distribution: bool, unit: UnitFamily) -> Mapping {
    Mapping {
        tag,
        name,
        distribution,
        unit,
    }
}

/// The AIPerf tags stored, shared with GenAI-Perf where the tag means the same.
const MAPPINGS: &[Mapping] = &[
    m("time_to_first_token", "ttft", true, UnitFamily::Ms),
    m("inter_token_latency", "tpot", true, UnitFamily::Ms),
    m(
        "inter_chunk_latency",
        "inter_chunk_latency",
        true,
        UnitFamily::Ms,
    ),
    m("request_latency", "e2el", true, UnitFamily::Ms),
    m(
        "time_to_second_token",
        "time_to_second_token",
        true,
        UnitFamily::Ms,
    ),
    m(
        "time_to_first_output_token",
        "time_to_first_output_token",
        true,
        UnitFamily::Ms,
    ),
    m(
        "output_token_throughput_per_user",
        "output_token_throughput_per_user",
        true,
        TOK_PER_S_USER,
    ),
    m(
        "e2e_output_token_throughput",
        "e2e_output_token_throughput",
        true,
        TOK_PER_S_USER,
    ),
    m("request_throughput", "request_throughput", false, REQ_PER_S),
    m("goodput", "request_goodput", false, REQ_PER_S),
    // GenAI-Perf's name for it.
    m("request_goodput", "request_goodput", false, REQ_PER_S),
    m(
        "output_token_throughput",
        "output_throughput",
        false,
        TOK_PER_S,
    ),
    m(
        "total_token_throughput",
        "total_token_throughput",
        false,
        TOK_PER_S,
    ),
    m("request_count", "completed", false, REQUESTS),
    m("error_request_count", "failed", false, REQUESTS),
    m("benchmark_duration", "duration", false, UnitFamily::Seconds),
    m("total_isl", "total_input_tokens", false, TOKENS),
    // OSL counts output plus reasoning tokens: every generated token, as vLLM counts them.
    m("total_osl", "total_output_tokens", false, TOKENS),
];

/// Factor from an AIPerf time unit to ms.
fn to_ms(unit: &str) -> Option<f64> {
    match unit {
        "ns" => Some(1e-6),
        "us" => Some(1e-3),
        "ms" => Some(1.0),
        "sec" | "s" => Some(1e3),
        _ => None,
    }
}

/// Factor from the JSON unit to the stored unit, or why not.
fn factor(family: UnitFamily, unit: &str) -> Result<f64, String> {
    let ok = match family {
        UnitFamily::Ms => to_ms(unit),
        UnitFamily::Seconds => to_ms(unit).map(|f| f / 1e3),
        UnitFamily::Exact(units) => units.contains(&unit).then_some(1.0),
    };
    ok.ok_or_else(|| format!("unexpected unit `{unit}`"))
}

fn is_metric_object(v: &Value) -> bool {
    v.get("unit").is_some_and(Value::is_string)
}

/// True when the object is an AIPerf summary (rather than GenAI-Perf's look-alike).
fn looks_like_summary(obj: &Map<String, Value>) -> Result<(), String> {
    if !obj.values().any(is_metric_object) {
        return Err("no metric objects with a `unit`".into());
    }
    let config = obj.get("input_config");
    let aiperf = obj.contains_key("aiperf_version")
        || config.is_some_and(|c| c.get("loadgen").is_some() || c.get("phases").is_some());
    if aiperf {
        Ok(())
    } else {
        Err("no `aiperf_version` nor AIPerf `input_config`".into())
    }
}

/// The kinds of AIPerf file that are not results but that the summary's detector claims, so
/// that the error can say what they are.
fn non_result_kind(v: &Value) -> Option<&'static str> {
    let obj = v.as_object()?;
    let first_data = obj.get("data").and_then(Value::as_array)?.first();
    if first_data.is_some_and(|d| d.get("session_id").is_some() && d.get("payloads").is_some()) {
        return Some(
            "these are AIPerf's inputs (inputs.json: the prompts sent), not results; upload profile_export_aiperf.json (and profile_export.jsonl)",
        );
    }
    None
}

fn is_phase_manifest(v: &Value) -> bool {
    v.get("phases").and_then(Value::as_array).is_some_and(|p| {
        p.first()
            .is_some_and(|p| p.get("phase_kind").is_some() && p.get("metrics_json").is_some())
    })
}

/// Tags of the layout before AIPerf 0.2 matched GenAI-Perf's (ai-dynamo/aiperf #343, Oct 2025)
/// and their names since.
const OLD_TAGS: &[(&str, &str)] = &[
    ("ttft", "time_to_first_token"),
    ("ttst", "time_to_second_token"),
];

/// The summary in today's layout. Up to AIPerf 0.1.1 the metrics sat under `records`, one
/// object per tag `{tag, unit, header, avg, min, max, p1, p5, p25, p50, p75, p90, p95, p99,
/// std, count}` (a scalar metric: `avg` and `count: 1`), with `ttft`/`ttst` for
/// `time_to_first_token`/`time_to_second_token`; that object's metrics are moved to the top
/// level under today's tags (the fact `aiperf_layout: "records"` says so). Anything else is
/// returned as it is.
fn current_layout(v: &Value) -> std::borrow::Cow<'_, Value> {
    let Some(records) = v.get("records").and_then(Value::as_object) else {
        return std::borrow::Cow::Borrowed(v);
    };
    if records.is_empty() || !records.values().all(is_metric_object) {
        return std::borrow::Cow::Borrowed(v);
    }
    let mut out = v.as_object().cloned().unwrap_or_default();
    out.remove("records");
    for (tag, metric) in records {
        let tag = OLD_TAGS
            .iter()
            .find(|(old, _)| old == tag)
            .map_or(tag.as_str(), |(_, new)| new);
        out.entry(tag.to_string()).or_insert_with(|| metric.clone());
    }
    out.insert("aiperf_layout".into(), Value::from("records"));
    std::borrow::Cow::Owned(Value::Object(out))
}

pub(super) fn detect(input: &InputFile) -> Result<(), String> {
    let Content::Json(values) = &input.content else {
        return Err("not JSON".into());
    };
    let [v] = values.as_slice() else {
        return Err("not a single JSON document".into());
    };
    let v = &*current_layout(v);
    if non_result_kind(v).is_some() || is_phase_manifest(v) {
        return Ok(());
    }
    looks_like_summary(v.as_object().ok_or("not a JSON object")?)
}

pub(super) fn detect_records(input: &InputFile) -> Result<(), String> {
    let first = super::tool_common::first_value(input).ok_or("not JSON")?;
    let meta = first.get("metadata").ok_or("no `metadata`")?;
    if first.get("metrics").is_some_and(Value::is_object)
        && (meta.get("request_start_ns").is_some() || meta.get("benchmark_phase").is_some())
    {
        Ok(())
    } else {
        Err("no AIPerf per-request `metadata`/`metrics` record".into())
    }
}

pub(super) fn detect_server_metrics(input: &InputFile) -> Result<(), String> {
    let first = super::tool_common::first_value(input).ok_or("not JSON")?;
    if first.get("metrics_phase").is_some()
        && first.get("metrics").is_some_and(Value::is_object)
        && first.get("aiperf_version").is_some()
    {
        Ok(())
    } else {
        Err("no AIPerf `metrics_phase` server metrics".into())
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
    let v = &*current_layout(v);
    if let Some(why) = non_result_kind(v) {
        return Err(file_error("", why));
    }
    if is_phase_manifest(v) {
        return Err(file_error(
            "/phases",
            "this is AIPerf's phase_manifest.json (a list of phase files), not results; upload profile_export_aiperf.json",
        ));
    }
    let obj = v
        .as_object()
        .ok_or_else(|| file_error("", "expected a JSON object"))?;
    looks_like_summary(obj)
        .map_err(|why| file_error("", format!("not an AIPerf summary: {why}")))?;
    reject_warmup(input, obj)?;

    let mut result = BenchResult::default();
    let completed = num(obj, "request_count")
        .or_else(|| at(v, &["request_count", "avg"]).and_then(as_f64))
        .and_then(count);
    read_metrics(obj, completed, &mut result)?;
    result.cell = read_cell(obj);
    result.configuration = read_configuration(obj, FORMAT);
    read_facts(obj, &mut result);
    read_errors(obj, &mut result);

    let records: Vec<&&InputFile> = companions
        .iter()
        .filter(|c| detect_records(c).is_ok())
        .collect();
    if let Some(first) = records.first() {
        if records.len() > 1 {
            warn(
                &mut result,
                "several_companions",
                format!(
                    "{} per-request files in one folder; only `{}` was read.",
                    records.len(),
                    first.name
                ),
            );
        }
        let duration = num(obj, "benchmark_duration")
            .or_else(|| at(v, &["benchmark_duration", "avg"]).and_then(as_f64));
        let samples = read_records(first, duration)?;
        let failed = result
            .metrics
            .iter()
            .find(|m| m.name == "failed")
            .map_or(0.0, |m| m.value);
        let expected = completed.map(|c| c as f64 + failed);
        if expected.is_some_and(|e| e != samples.len() as f64) {
            warn(
                &mut result,
                "samples_mismatch",
                format!(
                    "`{}` has {} profiling records but the summary counts {}; are they from the same run?",
                    first.name,
                    samples.len(),
                    expected.unwrap_or(0.0)
                ),
            );
        }
        result.samples = Some(samples);
    }
    for server in companions
        .iter()
        .filter(|c| detect_server_metrics(c).is_ok())
    {
        read_server_metrics(server, &mut result)?;
    }
    finish(&mut result);
    Ok(vec![result])
}

/// Rejects the warm-up phase's export (see the module documentation for how it is told).
fn reject_warmup(input: &InputFile, obj: &Map<String, Value>) -> Result<(), AdapterError> {
    let message = "this is AIPerf's warm-up phase export: warm-up requests are excluded from results; upload the run folder's profile_export_aiperf.json (or phases/profiling/)";
    if input.folder().split('/').any(|s| s == "warmup") {
        return Err(file_error(
            "",
            format!("{message} (the file is in a `warmup` folder)"),
        ));
    }
    let phases = obj
        .get("input_config")
        .and_then(|c| c.get("phases"))
        .and_then(Value::as_array);
    let requests_of = |kind: &str| {
        phases.and_then(|p| {
            p.iter()
                .find(|p| {
                    p.get("kind").and_then(Value::as_str) == Some(kind)
                        || p.get("name").and_then(Value::as_str) == Some(kind)
                })
                .and_then(|p| p.get("requests"))
                .and_then(as_f64)
        })
    };
    let made = at(&Value::Object(obj.clone()), &["request_count", "avg"])
        .and_then(as_f64)
        .map(|c| {
            c + at(&Value::Object(obj.clone()), &["error_request_count", "avg"])
                .and_then(as_f64)
                .unwrap_or(0.0)
        });
    if let (Some(made), Some(warmup), Some(profiling)) =
        (made, requests_of("warmup"), requests_of("profiling"))
    {
        if made == warmup && made != profiling {
            return Err(file_error(
                "/request_count",
                format!("{message} (its {made} requests are the warm-up phase's, not the profiling phase's {profiling})"),
            ));
        }
    }
    Ok(())
}

/// Reads every mapped metric object of an AIPerf or GenAI-Perf summary.
pub(super) fn read_metrics(
    obj: &Map<String, Value>,
    completed: Option<u64>,
    result: &mut BenchResult,
) -> Result<(), AdapterError> {
    for mapping in MAPPINGS {
        let Some(metric) = obj.get(mapping.tag) else {
            continue;
        };
        let Some(metric) = metric.as_object() else {
            continue;
        };
        let unit = metric.get("unit").and_then(Value::as_str).unwrap_or("");
        let factor = factor(mapping.unit, unit)
            .map_err(|e| file_error(format!("/{}/unit", mapping.tag), e))?;
        if mapping.tag == "request_count" && completed == Some(0) {
            continue;
        }
        let field = |k: &str| format!("{}.{k}", mapping.tag);
        if !mapping.distribution {
            if let Some(v) = num(metric, "avg") {
                if mapping.name == "request_goodput" && v < 0.0 {
                    // GenAI-Perf writes -1.0 when an SLO of --goodput names no known metric.
                    warn(
                        result,
                        "invalid_goodput",
                        format!(
                            "`{}.avg` is {v}: the tool's goodput SLO was invalid; not stored.",
                            mapping.tag
                        ),
                    );
                } else if mapping.name == "request_goodput" {
                    push_with(
                        result,
                        mapping.name,
                        Stat::Value,
                        v * factor,
                        None,
                        &field("avg"),
                        Some("tool"),
                    );
                } else {
                    push(
                        result,
                        mapping.name,
                        Stat::Value,
                        v * factor,
                        None,
                        &field("avg"),
                    );
                }
            }
            continue;
        }
        if completed == Some(0) {
            continue;
        }
        // Samples behind the statistics: the tool's own `count`, else (per-request metrics)
        // the request count; unknown for tpot (requests with one output token are left out)
        // and for chunk gaps.
        let n = num(metric, "count").and_then(count).or(match mapping.name {
            "tpot" | "inter_chunk_latency" => None,
            _ => completed,
        });
        for (key, value) in metric {
            let Some(stat) = super::tool_common::stat_of_key(key) else {
                continue;
            };
            // Explicit nulls (AIPerf 0.8 extras) are stats the tool did not compute.
            let Some(v) = as_f64(value) else {
                if value.is_null() {
                    continue;
                }
                return Err(file_error(
                    format!("/{}/{key}", mapping.tag),
                    format!("expected a number, found {value}"),
                ));
            };
            push(result, mapping.name, stat, v * factor, n, &field(key));
        }
    }
    Ok(())
}

/// The profiling phase of a new-style `input_config.phases`, or the old `loadgen`.
fn load_config(obj: &Map<String, Value>) -> Option<&Value> {
    let config = obj.get("input_config")?;
    if let Some(phases) = config.get("phases").and_then(Value::as_array) {
        return phases
            .iter()
            .find(|p| {
                p.get("kind").and_then(Value::as_str) == Some("profiling")
                    || p.get("name").and_then(Value::as_str) == Some("profiling")
            })
            .or_else(|| {
                phases.iter().find(|p| {
                    !p.get("exclude_from_results")
                        .and_then(Value::as_bool)
                        .unwrap_or(false)
                })
            });
    }
    config.get("loadgen")
}

fn read_cell(obj: &Map<String, Value>) -> WorkloadCell {
    let mut cell = WorkloadCell::default();
    if let Some(load) = load_config(obj) {
        let get = |k: &str| load.get(k).and_then(as_f64);
        cell.load.max_concurrency = get("concurrency").and_then(count).filter(|c| *c > 0);
        let rate = get("request_rate").or_else(|| get("rate"));
        cell.load = LoadShape {
            request_rate: match rate {
                Some(r) if r.is_finite() && r > 0.0 => Some(RequestRate::PerSecond(r)),
                // Concurrency mode sends as fast as slots free: vLLM's `inf` rate.
                _ if cell.load.max_concurrency.is_some() => Some(RequestRate::Infinite),
                _ => None,
            },
            ..cell.load
        };
        cell.num_prompts = get("requests")
            .or_else(|| get("request_count"))
            .and_then(count);
    }
    let config = obj.get("input_config");
    let prompts = config
        .and_then(|c| c.get("datasets"))
        .and_then(Value::as_array)
        .and_then(|d| d.first())
        .and_then(|d| d.get("prompts"));
    let mean = |k: &str| {
        prompts
            .and_then(|p| at(p, &[k, "mean"]))
            .and_then(as_f64)
            .and_then(count)
    };
    // Up to 0.1.1: `input_config.input.prompt.{input_tokens,output_tokens}.mean`.
    let old = |k: &str| {
        config
            .and_then(|c| at(c, &["input", "prompt", k, "mean"]))
            .and_then(as_f64)
            .and_then(count)
    };
    cell.input_len = mean("isl").or_else(|| old("input_tokens"));
    cell.output_len = mean("osl").or_else(|| old("output_tokens"));
    cell
}

fn read_configuration(obj: &Map<String, Value>, tool: &str) -> Configuration {
    let mut c = Configuration::default();
    let config = obj.get("input_config");
    let cfg = |path: &[&str]| config.and_then(|c| at(c, path));
    c.model.name = text(
        cfg(&["models", "items"])
            .and_then(Value::as_array)
            .and_then(|i| i.first())
            .and_then(|i| i.get("name")),
    )
    .or_else(|| {
        text(
            cfg(&["endpoint", "model_names"])
                .and_then(Value::as_array)
                .and_then(|m| m.first()),
        )
    });
    c.model.tokenizer = text(cfg(&["tokenizer", "name"]));
    c.benchmark.name = Some(tool.to_string());
    c.benchmark.version = text(obj.get("aiperf_version"));
    c.benchmark.backend = text(cfg(&["endpoint", "type"]));
    c.benchmark.command = text(at(
        obj.get("run_info").unwrap_or(&Value::Null),
        &["cli_command"],
    ))
    .or_else(|| text(cfg(&["artifacts", "cli_command"])))
    .or_else(|| text(cfg(&["cli_command"])));
    c.sampling.ignore_eos = cfg(&["endpoint", "extra", "ignore_eos"]).and_then(Value::as_bool);
    c
}

fn read_facts(obj: &Map<String, Value>, result: &mut BenchResult) {
    for key in [
        "schema_version",
        "benchmark_id",
        "start_time",
        "end_time",
        "was_cancelled",
        "is_complete",
        "aiperf_layout",
    ] {
        if let Some(v) = obj.get(key).filter(|v| !v.is_null()) {
            result.facts.insert(key.to_string(), v.clone());
        }
    }
    let endpoint = obj.get("input_config").and_then(|c| c.get("endpoint"));
    for (key, fact) in [
        ("urls", "endpoint_urls"),
        ("url", "endpoint_url"),
        ("streaming", "streaming"),
    ] {
        if let Some(v) = endpoint.and_then(|e| e.get(key)) {
            result.facts.insert(fact.to_string(), v.clone());
        }
    }
}

fn read_errors(obj: &Map<String, Value>, result: &mut BenchResult) {
    let completed = result
        .metrics
        .iter()
        .find(|m| m.name == "completed")
        .map(|m| m.value);
    let has_failed = result.metrics.iter().any(|m| m.name == "failed");
    // Without an `error_request_count` object, the failures are the counts of `error_summary`.
    let summary_errors: Option<f64> = obj.get("error_summary").and_then(Value::as_array).map(|e| {
        e.iter()
            .filter_map(|e| e.get("count").and_then(as_f64))
            .sum()
    });
    if !has_failed {
        if let Some(f) = summary_errors {
            push(result, "failed", Stat::Value, f, None, "error_summary");
        }
    }
    let failed = result
        .metrics
        .iter()
        .find(|m| m.name == "failed")
        .map_or(0.0, |m| m.value);
    if failed > 0.0 {
        warn(
            result,
            "failed_requests",
            format!(
                "{failed} of {} requests failed.",
                failed + completed.unwrap_or(0.0)
            ),
        );
    }
    if completed.is_none() || completed == Some(0.0) {
        warn(
            result,
            "nothing_completed",
            "No request completed: the file has no latency statistics.",
        );
    }
    if obj.get("was_cancelled").and_then(Value::as_bool) == Some(true) {
        warn(
            result,
            "cancelled",
            "The run was cancelled before it finished.",
        );
    }
    if obj.get("is_complete").and_then(Value::as_bool) == Some(false) {
        warn(result, "incomplete", "AIPerf marks the run as incomplete.");
    }
}

/// One number of a per-request record's `metrics`, converted to ms.
fn record_ms(metrics: &Value, tag: &str) -> Option<f64> {
    let m = metrics.get(tag)?;
    let f = to_ms(m.get("unit")?.as_str()?)?;
    Some(as_f64(m.get("value")?)? * f)
}

fn record_tokens(metrics: &Value, tag: &str) -> Option<u64> {
    metrics
        .get(tag)
        .and_then(|m| m.get("value"))
        .and_then(as_f64)
        .and_then(count)
}

fn read_records(
    input: &InputFile,
    duration_s: Option<f64>,
) -> Result<RequestSamples, AdapterError> {
    let Content::Json(records) = &input.content else {
        return Err(file_error("", "per-request file is not JSON Lines"));
    };
    let mut s = RequestSamples {
        duration_s,
        ttft_ms: Some(Vec::new()),
        e2el_ms: Some(Vec::new()),
        tpot_ms: Some(Vec::new()),
        itl_ms: Some(Vec::new()),
        input_tokens: Some(Vec::new()),
        output_tokens: Some(Vec::new()),
        ..Default::default()
    };
    for (i, rec) in records.iter().enumerate() {
        let meta = rec.get("metadata").ok_or_else(|| AdapterError::Field {
            record: i,
            line: i + 1,
            error: super::FieldError::new("/metadata", "missing"),
        })?;
        let phase = meta
            .get("benchmark_phase")
            .or_else(|| meta.get("phase_kind"))
            .and_then(Value::as_str);
        if phase == Some("warmup") {
            continue;
        }
        let metrics = rec.get("metrics").unwrap_or(&Value::Null);
        s.success.push(rec.get("error").is_none_or(Value::is_null));
        let gaps: Vec<f64> = metrics
            .get("inter_chunk_latency")
            .and_then(|m| {
                let f = to_ms(m.get("unit")?.as_str()?)?;
                Some(
                    m.get("value")?
                        .as_array()?
                        .iter()
                        .filter_map(as_f64)
                        .map(|v| v * f)
                        .collect(),
                )
            })
            .unwrap_or_default();
        let push_col = |col: &mut Option<Vec<Option<f64>>>, v| {
            if let Some(c) = col.as_mut() {
                c.push(v)
            }
        };
        push_col(&mut s.ttft_ms, record_ms(metrics, "time_to_first_token"));
        push_col(&mut s.e2el_ms, record_ms(metrics, "request_latency"));
        push_col(&mut s.tpot_ms, record_ms(metrics, "inter_token_latency"));
        if let Some(c) = s.itl_ms.as_mut() {
            c.push(gaps);
        }
        if let Some(c) = s.input_tokens.as_mut() {
            c.push(record_tokens(metrics, "input_sequence_length"));
        }
        if let Some(c) = s.output_tokens.as_mut() {
            c.push(record_tokens(metrics, "output_sequence_length"));
        }
    }
    // A column no request has is not reported by the tool.
    if s.ttft_ms
        .as_ref()
        .is_some_and(|c| c.iter().all(Option::is_none))
    {
        s.ttft_ms = None;
    }
    if s.tpot_ms
        .as_ref()
        .is_some_and(|c| c.iter().all(Option::is_none))
    {
        s.tpot_ms = None;
    }
    if s.itl_ms
        .as_ref()
        .is_some_and(|c| c.iter().all(Vec::is_empty))
    {
        s.itl_ms = None;
    }
    Ok(s)
}

/// Server metrics (vLLM's Prometheus names as AIPerf exports them) that map cleanly.
fn read_server_metrics(input: &InputFile, result: &mut BenchResult) -> Result<(), AdapterError> {
    let Some(v) = super::tool_common::first_value(input) else {
        return Ok(());
    };
    let phase = v.get("metrics_phase").and_then(Value::as_str);
    if phase.is_some_and(|p| p != "profiling") {
        warn(
            result,
            "server_metrics_skipped",
            format!(
                "`{}` holds server metrics of the `{}` phase, not profiling; not read.",
                input.name,
                phase.unwrap_or("")
            ),
        );
        return Ok(());
    }
    let Some(metrics) = v.get("metrics").and_then(Value::as_object) else {
        return Ok(());
    };
    let series = |name: &str| -> Vec<&Value> {
        metrics
            .get(name)
            .and_then(|m| m.get("series"))
            .and_then(Value::as_array)
            .map(|s| s.iter().filter_map(|s| s.get("stats")).collect())
            .unwrap_or_default()
    };
    // Gauges: statistics over the scrapes of one endpoint's one series.
    for (prom, name) in [
        ("vllm:num_requests_running", "server_num_requests_running"),
        ("vllm:num_requests_waiting", "server_num_requests_waiting"),
    ] {
        let stats = series(prom);
        if stats.len() != 1 {
            continue; // several engines or label sets: no single number
        }
        let Some(stats) = stats.first().and_then(|s| s.as_object()) else {
            continue;
        };
        for (key, value) in stats {
            if let (Some(stat), Some(x)) = (super::tool_common::stat_of_key(key), as_f64(value)) {
                push(
                    result,
                    name,
                    stat,
                    x,
                    None,
                    &format!("server_metrics_export {prom}.{key}"),
                );
            }
        }
    }
    // Counters: increase over the profiling phase, summed over series.
    let total = |name: &str| -> Option<f64> {
        let s = series(name);
        (!s.is_empty()).then(|| {
            s.iter()
                .filter_map(|s| s.get("total").and_then(as_f64))
                .sum()
        })
    };
    if let Some(p) = total("vllm:num_preemptions").or_else(|| total("vllm:num_preemptions_total")) {
        push(
            result,
            "server_preemptions",
            Stat::Value,
            p,
            None,
            "server_metrics_export vllm:num_preemptions",
        );
    }
    if let (Some(hits), Some(queries)) = (
        total("vllm:prefix_cache_hits"),
        total("vllm:prefix_cache_queries"),
    ) {
        if queries > 0.0 {
            push(
                result,
                "server_prefix_cache_hit_rate",
                Stat::Value,
                100.0 * hits / queries,
                None,
                "server_metrics_export vllm:prefix_cache_hits",
            );
        }
    }
    Ok(())
}
