//! guidellm `benchmarks.json` or `benchmarks.yaml` (notes: `shared/notes/benchmark-tool-formats.md`
//! §4): several benchmarks per file, one result each. The YAML output is the same document
//! (PyYAML's serialization): it is read into the same JSON value ([`lenient_yaml`]) and from
//! there on read alike, so both give the same results. Text is tried as YAML only when a line
//! starts with `benchmarks:` (a YAML parser reads almost any text), and claimed only when it
//! has guidellm's structure, as JSON is.
//!
//! Each metric is a StatusDistributionSummary `{successful, errored, incomplete, total}`; the
//! `successful` group is stored. Names, by what they are:
//! - `request_latency` is in **seconds** → `e2el` in ms.
//! - `time_to_first_token_ms` → `ttft`; `time_to_first_output_token_ms` (v0.7+, first
//!   non-reasoning token) → `time_to_first_output_token`.
//! - `inter_token_latency_ms` is per request `(last − first token)/(output tokens − 1)` (vLLM's
//!   tpot) but its statistics are weighted by output tokens − 1 → `tpot_token_weighted`.
//! - `time_per_output_token_ms`: from v0.4 on `(last token − request start)/output tokens`,
//!   weighted by output tokens, so TTFT is included → `tpot_incl_ttft_token_weighted`; in
//!   v0.2–v0.3 `(last − first token)/output tokens` → `decode_time_per_output_token_token_weighted`.
//!   The version is told by the benchmark's shape: v0.2–v0.3 benchmarks have `args`, v0.4+
//!   have `config`.
//! - rates (`requests_per_second`, `output_tokens_per_second`, `tokens_per_second`) are
//!   distributions over time whose successful mean is the run's rate.
//!
//! A report must be whole: a YAML file cut at a line boundary is still valid YAML (and a JSON
//! file could be re-serialized from a cut one), so every benchmark is checked for the sections
//! every complete guidellm benchmark has ([`missing_sections`]); a benchmark lacking one is an
//! error naming it and saying the file looks truncated, never a result built from what is left.
//!
//! The load shape comes from the benchmark's strategy: synchronous → max_concurrency 1;
//! concurrent → max_concurrency = streams (both with request_rate `inf`, as vLLM writes a closed
//! loop); throughput → request_rate `inf`; constant → request_rate (no burstiness: evenly
//! spaced); poisson → request_rate with burstiness 1 (gamma shape 1 is Poisson). The strategy
//! is also kept as the fact `arrival`.

use super::tool_common::{at, count, file_error, finish, first_value, num, push, text, warn};
use super::{AdapterError, Content, InputFile};
use crate::cell::{RequestRate, WorkloadCell};
use crate::config::Configuration;
use crate::lenient_json::as_f64;
use crate::lenient_yaml;
use crate::metric::Stat;
use crate::result::BenchResult;
use serde_json::{Map, Value};

/// Format name.
pub const FORMAT: &str = "guidellm";

pub(super) fn detect(input: &InputFile) -> Result<(), String> {
    match &input.content {
        Content::Json(_) => check(first_value(input).ok_or("not JSON")?),
        Content::Text { text, .. } => {
            check(&read_yaml(text)?).map_err(|why| format!("YAML, but {why}"))
        }
    }
}

/// Whether a report (its JSON value) has guidellm's structure, else why not.
fn check(v: &Value) -> Result<(), String> {
    let first = v
        .get("benchmarks")
        .and_then(Value::as_array)
        .ok_or("no `benchmarks` list")?
        .first()
        .ok_or("an empty `benchmarks` list")?;
    // A benchmark's scheduling strategy (`config.strategy` from v0.4, `args.strategy` before)
    // is a mark too: a key-sorted YAML cut inside the first benchmark's metrics has neither
    // `type_` (sorted last) nor a whole `metrics`, and is refused as truncated, not ignored.
    let strategy = ["config", "args"]
        .iter()
        .any(|k| at(first, &[k, "strategy", "type_"]).is_some_and(Value::is_string));
    if first.get("type_").and_then(Value::as_str) == Some("generative_benchmark")
        || first.get("metrics").is_some_and(Value::is_object)
        || strategy
    {
        Ok(())
    } else {
        Err("no guidellm `generative_benchmark`".into())
    }
}

/// A text that is not JSON, read as guidellm's YAML output: only when a line starts with the
/// top-level key `benchmarks:` (as PyYAML writes it), else any text would be YAML.
fn read_yaml(text: &str) -> Result<Value, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let has_benchmarks_key = text.lines().any(|line| {
        line.strip_prefix("benchmarks:")
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
    });
    if !has_benchmarks_key {
        return Err("neither JSON nor YAML with a top-level `benchmarks:` line".into());
    }
    lenient_yaml::parse_value(text).map_err(|e| format!("not valid YAML: {e}"))
}

pub(super) fn parse(
    input: &InputFile,
    _companions: &[&InputFile],
) -> Result<Vec<BenchResult>, AdapterError> {
    let yaml;
    let root = match &input.content {
        Content::Json(values) => values.first().ok_or(AdapterError::Empty)?,
        Content::Text { text, .. } => {
            yaml = read_yaml(text)
                .map_err(|why| file_error("", format!("not a guidellm report: {why}")))?;
            &yaml
        }
    };
    check(root).map_err(|why| file_error("", format!("not a guidellm report: {why}")))?;
    let benchmarks = root
        .get("benchmarks")
        .and_then(Value::as_array)
        .ok_or_else(|| file_error("/benchmarks", "expected a list"))?;
    if let Some((pointer, missing)) = missing_sections(root) {
        return Err(file_error(
            pointer,
            format!(
                "the file looks truncated: {} missing (every complete guidellm report has them)",
                missing.join(", ")
            ),
        ));
    }
    benchmarks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            parse_benchmark(root, b)
                .map_err(|(field, message)| file_error(format!("/benchmarks/{i}{field}"), message))
        })
        .collect()
}

/// Keys every guidellm benchmark has, v0.2 to 0.8.1 (notes §4, and every real report in
/// testdata/guidellm): `type_` comes first in guidellm's JSON and last but two in its
/// key-sorted YAML, `duration` is last in the JSON, so a file cut anywhere inside a benchmark
/// lacks one of them. `requests` (the per-request samples) is not among them: it can be left
/// out.
const BENCHMARK_KEYS: &[&str] = &["type_", "start_time", "end_time", "duration", "metrics"];

/// The metrics every version writes (v0.4+ add more).
const METRIC_KEYS: &[&str] = &[
    "requests_per_second",
    "request_concurrency",
    "request_latency",
    "prompt_token_count",
    "output_token_count",
    "time_to_first_token_ms",
    "time_per_output_token_ms",
    "inter_token_latency_ms",
    "output_tokens_per_second",
    "tokens_per_second",
];

/// The counts of `request_totals` (inside `metrics` from v0.4, beside it before).
const TOTALS_KEYS: &[&str] = &["successful", "errored", "incomplete", "total"];

/// The first missing section of an incomplete report, as (JSON pointer, every missing
/// section's pointer), or `None` when the report is whole. Besides each benchmark's
/// [`BENCHMARK_KEYS`], [`METRIC_KEYS`] and [`TOTALS_KEYS`]: a v0.7+ report (top-level `config`,
/// written after `benchmarks` by the key-sorted YAML) must have its `config.spec` and its
/// `metadata.version` (the key-sorted YAML's last line), and a v0.4+ report (benchmarks with
/// `config`) its top-level `args` or `config`, so a file cut after its last benchmark is caught
/// too.
fn missing_sections(root: &Value) -> Option<(String, Vec<String>)> {
    let mut missing: Vec<String> = Vec::new();
    let benchmarks = root.get("benchmarks").and_then(Value::as_array)?;
    for (i, b) in benchmarks.iter().enumerate() {
        let at_b = format!("/benchmarks/{i}");
        let Some(b) = b.as_object() else {
            continue; // not an object: the benchmark's own error
        };
        let metrics = b.get("metrics").and_then(Value::as_object);
        if let Some(metrics) = metrics {
            match metrics
                .get("request_totals")
                .or_else(|| b.get("request_totals"))
            {
                None => missing.push(format!("{at_b}/metrics/request_totals")),
                Some(totals) => {
                    let inside = if metrics.contains_key("request_totals") {
                        "/metrics"
                    } else {
                        ""
                    };
                    for key in TOTALS_KEYS {
                        if totals.get(key).is_none() {
                            missing.push(format!("{at_b}{inside}/request_totals/{key}"));
                        }
                    }
                }
            }
            for key in METRIC_KEYS {
                if !metrics.contains_key(*key) {
                    missing.push(format!("{at_b}/metrics/{key}"));
                }
            }
        }
        if b.contains_key("metrics") && metrics.is_none() {
            // `metrics:` as the YAML's last line: null.
            missing.push(format!("{at_b}/metrics"));
        }
        for key in BENCHMARK_KEYS {
            if !b.contains_key(*key) {
                missing.push(format!("{at_b}/{key}"));
            }
        }
        if !b.contains_key("config") && !b.contains_key("args") {
            missing.push(format!("{at_b}/config"));
        }
    }
    let v0_4_or_later = benchmarks.iter().any(|b| b.get("config").is_some());
    if v0_4_or_later && root.get("config").is_none() && root.get("args").is_none() {
        missing.push("/config".into());
    }
    let present = |path: &[&str]| at(root, path).is_some_and(|v| !v.is_null());
    if root.get("config").is_some() && !present(&["config", "spec"]) {
        missing.push("/config/spec".into());
    }
    if (root.get("config").is_some() || root.get("metadata").is_some())
        && !present(&["metadata", "version"])
    {
        missing.push("/metadata/version".into());
    }
    let first = missing.first()?.clone();
    let shown = missing.len().min(5);
    let more = missing.len() - shown;
    let mut listed: Vec<String> = missing[..shown].iter().map(|p| format!("`{p}`")).collect();
    if more > 0 {
        listed.push(format!("{more} more"));
    }
    Some((first, listed))
}

/// (guidellm key, vocabulary name, factor to the stored unit).
const DISTRIBUTIONS: &[(&str, &str, f64)] = &[
    ("time_to_first_token_ms", "ttft", 1.0),
    ("inter_token_latency_ms", "tpot_token_weighted", 1.0),
    ("request_latency", "e2el", 1000.0),
    (
        "time_to_first_output_token_ms",
        "time_to_first_output_token",
        1.0,
    ),
];

type Fault = (String, String);

fn parse_benchmark(root: &Value, b: &Value) -> Result<BenchResult, Fault> {
    let obj = b
        .as_object()
        .ok_or_else(|| (String::new(), "expected a JSON object".to_string()))?;
    let metrics = obj
        .get("metrics")
        .and_then(Value::as_object)
        .ok_or_else(|| ("/metrics".to_string(), "missing".to_string()))?;
    let legacy = obj.contains_key("args") && !obj.contains_key("config");
    let mut result = BenchResult::default();

    // request_totals: inside `metrics` from v0.4, beside it before.
    let totals = metrics
        .get("request_totals")
        .or_else(|| obj.get("request_totals"));
    let total = |k: &str| totals.and_then(|t| t.get(k)).and_then(as_f64);
    let successful = total("successful").and_then(count);
    let errored = total("errored").unwrap_or(0.0);
    let incomplete = total("incomplete").unwrap_or(0.0);
    if let Some(s) = successful {
        push(
            &mut result,
            "completed",
            Stat::Value,
            s as f64,
            None,
            "request_totals.successful",
        );
    }
    push(
        &mut result,
        "failed",
        Stat::Value,
        errored,
        None,
        "request_totals.errored",
    );
    if let Some(d) = num(obj, "duration") {
        push(&mut result, "duration", Stat::Value, d, None, "duration");
    }

    let nothing = successful.is_none_or(|s| s == 0);
    if !nothing {
        let tpot_name = if legacy {
            "decode_time_per_output_token_token_weighted"
        } else {
            "tpot_incl_ttft_token_weighted"
        };
        for (key, name, factor) in
            DISTRIBUTIONS
                .iter()
                .copied()
                .chain([("time_per_output_token_ms", tpot_name, 1.0)])
        {
            if let Some(d) = metrics.get(key).and_then(|m| m.get("successful")) {
                read_distribution(d, key, name, factor, &mut result)?;
            }
        }
        for (key, name) in [
            ("requests_per_second", "request_throughput"),
            ("output_tokens_per_second", "output_throughput"),
            ("tokens_per_second", "total_token_throughput"),
        ] {
            if let Some(mean) = metrics
                .get(key)
                .and_then(|m| at(m, &["successful", "mean"]))
                .and_then(as_f64)
            {
                push(
                    &mut result,
                    name,
                    Stat::Value,
                    mean,
                    None,
                    &format!("{key}.successful.mean"),
                );
            }
        }
        for (key, name) in [
            ("prompt_token_count", "total_input_tokens"),
            ("output_token_count", "total_output_tokens"),
        ] {
            if let Some(sum) = metrics
                .get(key)
                .and_then(|m| at(m, &["successful", "total_sum"]))
                .and_then(as_f64)
            {
                push(
                    &mut result,
                    name,
                    Stat::Value,
                    sum,
                    None,
                    &format!("{key}.successful.total_sum"),
                );
            }
        }
    } else {
        warn(
            &mut result,
            "nothing_completed",
            "No request completed: the benchmark's latency statistics are empty and were not stored.",
        );
    }
    if errored > 0.0 {
        warn(
            &mut result,
            "failed_requests",
            format!(
                "{errored} of {} requests failed.",
                errored + incomplete + successful.unwrap_or(0) as f64
            ),
        );
    }
    if incomplete > 0.0 {
        result
            .facts
            .insert("incomplete_requests".into(), incomplete.into());
    }

    let strategy = obj
        .get("config")
        .and_then(|c| c.get("strategy"))
        .or_else(|| obj.get("args").and_then(|a| a.get("strategy")));
    result.cell = read_cell(root, obj, strategy, &mut result.warnings)?;
    if let Some(kind) = strategy
        .and_then(|s| s.get("type_"))
        .and_then(Value::as_str)
    {
        result.facts.insert("arrival".into(), kind.into());
    }
    result.configuration = read_configuration(root, obj);
    for key in ["start_time", "end_time"] {
        if let Some(v) = obj.get(key).filter(|v| !v.is_null()) {
            result.facts.insert(key.into(), v.clone());
        }
    }
    if let Some(id) = obj
        .get("config")
        .and_then(|c| c.get("id_"))
        .or_else(|| obj.get("id_"))
    {
        result.facts.insert("benchmark_id".into(), id.clone());
    }
    finish(&mut result);
    Ok(result)
}

fn read_distribution(
    d: &Value,
    key: &str,
    name: &str,
    factor: f64,
    result: &mut BenchResult,
) -> Result<(), Fault> {
    let Some(d) = d.as_object() else {
        return Ok(());
    };
    let n = num(d, "count").and_then(count);
    let mut stats: Vec<(Stat, f64, String)> = Vec::new();
    for (k, stat) in [
        ("mean", Stat::Mean),
        ("std_dev", Stat::Std),
        ("min", Stat::Min),
        ("max", Stat::Max),
        ("median", Stat::Percentile("50".into())),
    ] {
        if let Some(v) = num(d, k) {
            stats.push((stat, v, format!("{key}.successful.{k}")));
        }
    }
    if let Some(p) = d.get("percentiles").and_then(Value::as_object) {
        for (k, v) in p {
            let Some(stat) = percentile_label(k) else {
                continue;
            };
            let Some(v) = as_f64(v) else {
                continue;
            };
            // `median` and `p50` are one statistic: the percentile wins.
            stats.retain(|(s, _, _)| *s != stat);
            stats.push((stat, v, format!("{key}.successful.percentiles.{k}")));
        }
    }
    for (stat, v, field) in stats {
        push(result, name, stat, v * factor, n, &field);
    }
    Ok(())
}

/// guidellm's percentile keys: `p001` = 0.1, `p01` = 1, `p05` = 5, `p50` = 50, `p999` = 99.9.
fn percentile_label(k: &str) -> Option<Stat> {
    let digits = k.strip_prefix('p')?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let p = match digits {
        "001" => 0.1,
        "999" => 99.9,
        d => d.parse::<f64>().ok()?,
    };
    (0.0..=100.0).contains(&p).then(|| Stat::from_percentile(p))
}

fn read_cell(
    root: &Value,
    obj: &Map<String, Value>,
    strategy: Option<&Value>,
    warnings: &mut Vec<crate::result::Warning>,
) -> Result<WorkloadCell, Fault> {
    let mut cell = WorkloadCell::default();
    let kind = strategy
        .and_then(|s| s.get("type_"))
        .and_then(Value::as_str);
    let get = |k: &str| strategy.and_then(|s| s.get(k)).and_then(as_f64);
    let rate = || match get("rate") {
        Some(r) if r.is_finite() && r > 0.0 => Ok(Some(RequestRate::PerSecond(r))),
        other => Err((
            "/config/strategy/rate".to_string(),
            format!("expected a positive rate, found {other:?}"),
        )),
    };
    match kind {
        Some("synchronous") => {
            cell.load.max_concurrency = Some(1);
            cell.load.request_rate = Some(RequestRate::Infinite);
        }
        Some("concurrent") => {
            cell.load.max_concurrency = get("streams").and_then(count);
            cell.load.request_rate = Some(RequestRate::Infinite);
        }
        Some("throughput") => cell.load.request_rate = Some(RequestRate::Infinite),
        Some("constant") => cell.load.request_rate = rate()?,
        Some("poisson") => {
            cell.load.request_rate = rate()?;
            cell.load.burstiness = Some(1.0);
        }
        other => warnings.push(crate::result::Warning {
            code: "unknown_strategy".into(),
            message: format!(
                "guidellm strategy {other:?} is not known; the load shape is not set."
            ),
        }),
    }
    // Configured lengths: v0.7+ `config.spec.data[0]`, v0.2 `request_loader.data` text.
    let data = at(root, &["config", "spec", "data"])
        .and_then(Value::as_array)
        .and_then(|d| d.first());
    let len = |k: &str| data.and_then(|d| d.get(k)).and_then(as_f64).and_then(count);
    cell.input_len = len("prompt_tokens");
    cell.output_len = len("output_tokens");
    if let Some(spec) =
        at(&Value::Object(obj.clone()), &["request_loader", "data"]).and_then(Value::as_str)
    {
        for pair in spec.split(',') {
            match pair.split_once('=') {
                Some(("prompt_tokens", v)) => cell.input_len = v.trim().parse().ok(),
                Some(("output_tokens", v)) => cell.output_len = v.trim().parse().ok(),
                _ => {}
            }
        }
    }
    Ok(cell)
}

fn read_configuration(root: &Value, obj: &Map<String, Value>) -> Configuration {
    let mut c = Configuration::default();
    let b = Value::Object(obj.clone());
    c.model.name = text(at(root, &["config", "spec", "backend", "model"]))
        .or_else(|| text(at(&b, &["config", "backend", "model"])))
        .or_else(|| text(at(&b, &["worker", "backend_model"])));
    c.model.tokenizer = text(at(root, &["config", "spec", "tokenizer", "model"]))
        .or_else(|| text(at(&b, &["request_loader", "processor"])));
    c.benchmark.name = Some(FORMAT.to_string());
    c.benchmark.version = text(at(root, &["metadata", "guidellm_version"]));
    c.benchmark.backend = text(at(root, &["config", "spec", "backend", "kind"]))
        .or_else(|| text(at(&b, &["worker", "backend_type"])));
    c.sampling.ignore_eos = at(
        root,
        &["config", "spec", "backend", "extras", "body", "ignore_eos"],
    )
    .and_then(Value::as_bool);
    c
}
