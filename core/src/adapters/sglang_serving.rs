//! `python -m sglang.bench_serving --output-file F` (JSON Lines, one object appended per run).
//!
//! Keys as written by `python/sglang/bench_serving.py` and `python/sglang/benchmark/serving.py`
//! (see `shared/notes/benchmark-tool-formats.md` §2): setup keys (`backend`, `dataset_name`,
//! `request_rate`, `max_concurrency`, `random_*`, `tag`, `server_info`), aggregates (`duration`
//! in s, counts, throughputs), and `<stat>_<metric>_ms` for `e2e_latency`, `ttft`, `tpot`, `itl`.
//! With `--output-details` the per-request arrays `input_lens`, `output_lens`, `ttfts` (s),
//! `itls` (lists, s), `generated_texts` and `errors` are top-level keys (or nested under
//! `"details"` in one refactor).
//!
//! SGLang defines the metrics differently from vLLM (notes §0): TTFT ends at the first chunk
//! with **non-empty** text, ITL pools the gaps between non-empty chunks only, and E2E latency
//! includes reading `[DONE]`. The values are stored under the vocabulary names `ttft`, `itl`,
//! `e2el`, `tpot` with `benchmark.name` = [`FORMAT`], which is part of the series key, so a
//! series never mixes SGLang's and vLLM's definitions.
//!
//! The 2024 layout (`total_input`, `total_output`, `median_ttft`, `median_itl`,
//! `mean_e2e_latency`, `output_token_throughput`, `benchmark_duration`; see [`LAYOUT_2024`]) is
//! read under today's names, with the fact `"sglang_layout": "2024"`.
//!
//! The cell follows [`crate::cell`]: `max_concurrency`, `request_rate`, `dataset_name` and the
//! requested lengths of that dataset ([`crate::cell::requested_lengths`]).
//!
//! Traps handled: `"request_rate": Infinity` (a bare literal); no `failed` key (it is counted
//! from `errors` when the arrays are there); no `model_id`/`num_prompts` (the model comes from
//! `server_info` when present); with nothing completed the e2e statistics are NaN and the others
//! placeholder 0.0, so none is stored.

use super::fields::{
    count, finish_metrics, has, number, pointer_in, push_value, short, stat_label,
};
use super::FieldError;
use crate::cell::{LoadShape, RequestRate, WorkloadCell};
use crate::config::Configuration;
use crate::lenient_json::as_f64;
use crate::metric::Stat;
use crate::result::{BenchResult, Warning};
use crate::samples::RequestSamples;
use serde_json::{Map, Value};

/// Format name.
pub const FORMAT: &str = "sglang-bench-serving";

/// Aggregate keys and their vocabulary names.
const AGGREGATES: &[(&str, &str)] = &[
    ("duration", "duration"),
    ("completed", "completed"),
    ("total_input_tokens", "total_input_tokens"),
    ("total_output_tokens", "total_output_tokens"),
    ("request_throughput", "request_throughput"),
    ("output_throughput", "output_throughput"),
    // (input + output tokens) / duration, as vLLM's total_token_throughput.
    ("total_throughput", "total_token_throughput"),
    ("max_output_tokens_per_s", "max_output_tokens_per_s"),
    ("max_concurrent_requests", "max_concurrent_requests"),
];

/// Distribution metrics written as `<stat>_<metric>_ms`, and their vocabulary names.
const DISTRIBUTIONS: &[(&str, &str)] = &[
    ("e2e_latency", "e2el"),
    ("ttft", "ttft"),
    ("tpot", "tpot"),
    ("itl", "itl"),
];

/// Keys read into the cell or the configuration (not kept as facts).
const SETUP_KEYS: &[&str] = &["backend", "request_rate", "max_concurrency"];

/// Keys of SGLang's 2024 layout (`bench_serving.py` before the `*_ms` and `*_tokens` names:
/// `total_input`, `median_ttft`, `output_token_throughput`, `benchmark_duration`, ...) and the
/// names they have now. Latencies were already in ms, the duration in s.
const LAYOUT_2024: &[(&str, &str)] = &[
    ("total_input", "total_input_tokens"),
    ("total_output", "total_output_tokens"),
    (
        "total_output_retokenized",
        "total_output_tokens_retokenized",
    ),
    ("output_token_throughput", "output_throughput"),
    ("benchmark_duration", "duration"),
];

/// The record in today's key names: a 2024-layout record (it has `benchmark_duration`, or
/// `<stat>_<metric>` latency keys without `_ms`) has its keys renamed ([`LAYOUT_2024`], and
/// `median_ttft` → `median_ttft_ms` for every latency statistic); any other record is returned
/// as it is. A key the record also holds under its new name keeps the new name's value.
fn current_layout(obj: &Map<String, Value>) -> std::borrow::Cow<'_, Map<String, Value>> {
    let old_latency = |key: &str| {
        key.split_once('_').is_some_and(|(stat, metric)| {
            stat_label(stat).is_some() && DISTRIBUTIONS.iter().any(|(m, _)| *m == metric)
        })
    };
    let is_2024 = !obj.contains_key("duration")
        && (obj.contains_key("benchmark_duration") || obj.keys().any(|k| old_latency(k)));
    if !is_2024 {
        return std::borrow::Cow::Borrowed(obj);
    }
    let mut out = Map::new();
    for (key, value) in obj {
        let renamed = LAYOUT_2024
            .iter()
            .find(|(old, _)| old == key)
            .map(|(_, new)| (*new).to_string())
            .or_else(|| old_latency(key).then(|| format!("{key}_ms")))
            .unwrap_or_else(|| key.clone());
        if renamed != *key && obj.contains_key(&renamed) {
            continue;
        }
        out.insert(renamed, value.clone());
    }
    std::borrow::Cow::Owned(out)
}

pub(super) fn detect(record: &Value) -> Result<(), String> {
    let obj = record.as_object().ok_or("not a JSON object")?;
    let obj = &*current_layout(obj);
    let mut missing: Vec<&str> = ["duration", "completed", "backend"]
        .into_iter()
        .filter(|k| !obj.contains_key(*k))
        .collect();
    if !obj.contains_key("median_e2e_latency_ms") && !obj.contains_key("mean_e2e_latency_ms") {
        missing.push("median_e2e_latency_ms");
    }
    super::fields::missing_keys(&missing)
}

pub(super) fn parse(record: &Value) -> Result<Vec<BenchResult>, FieldError> {
    let obj = record
        .as_object()
        .ok_or_else(|| FieldError::new("", "expected a JSON object"))?;
    detect(record)
        .map_err(|why| FieldError::new("", format!("not an SGLang bench_serving result: {why}")))?;
    let layout_2024 = !obj.contains_key("duration");
    let obj = &*current_layout(obj);

    let mut result = BenchResult::default();
    let completed =
        count(obj, "", "completed")?.ok_or_else(|| FieldError::new("/completed", "missing"))?;
    result.cell = read_cell(obj)?;
    result.configuration = read_configuration(obj)?;
    for (key, name) in AGGREGATES {
        if let Some(v) = number(obj, "", key)? {
            push_value(&mut result, name, Stat::Value, v, None, key);
        }
    }
    let samples = read_samples(obj, completed)?;
    let failed = samples
        .as_ref()
        .map(|s| s.success.iter().filter(|ok| !**ok).count() as u64);
    if let Some(failed) = failed {
        push_value(
            &mut result,
            "failed",
            Stat::Value,
            failed as f64,
            None,
            "errors",
        );
    }
    let counts = samples.as_ref().map(SampleCounts::of);
    if completed > 0 {
        read_distributions(obj, completed, counts.as_ref(), &mut result)?;
    }
    finish_metrics(&mut result);
    read_facts(obj, &mut result);
    if let Some(mut s) = samples {
        s.duration_s = number(obj, "", "duration")?.filter(|d| d.is_finite());
        result.samples = Some(s);
    }

    if completed == 0 {
        result.warnings.push(Warning {
            code: "nothing_completed".into(),
            message: "No request completed: the tool's latency statistics are placeholders (0.0 or NaN) and were not stored.".into(),
        });
    }
    if let Some(failed) = failed.filter(|f| *f > 0) {
        result.warnings.push(Warning {
            code: "failed_requests".into(),
            message: format!("{failed} of {} requests failed.", failed + completed),
        });
    }
    if layout_2024 {
        // Told apart from today's layout so a reader knows where the names came from.
        result
            .facts
            .insert("sglang_layout".into(), Value::from("2024"));
    }
    Ok(vec![result])
}

/// Sample counts behind the per-chunk and per-token statistics, from the arrays.
struct SampleCounts {
    /// Successful requests with more than one output token (SGLang's tpot list).
    tpot: u64,
    /// Gaps of successful requests, pooled (SGLang's itl list).
    itl: u64,
}

impl SampleCounts {
    fn of(s: &RequestSamples) -> SampleCounts {
        let mut counts = SampleCounts { tpot: 0, itl: 0 };
        for (i, ok) in s.success.iter().enumerate() {
            if !ok {
                continue;
            }
            let out = s
                .output_tokens
                .as_ref()
                .and_then(|o| o.get(i).copied().flatten());
            if out.is_some_and(|o| o > 1) {
                counts.tpot += 1;
            }
            let gaps = s.itl_ms.as_ref().and_then(|g| g.get(i)).map_or(0, Vec::len);
            counts.itl += gaps as u64;
        }
        counts
    }
}

fn read_cell(obj: &Map<String, Value>) -> Result<WorkloadCell, FieldError> {
    let request_rate = match obj.get("request_rate") {
        None | Some(Value::Null) => None,
        Some(v) => match as_f64(v) {
            Some(r) if r == f64::INFINITY => Some(RequestRate::Infinite),
            Some(r) if r > 0.0 && r.is_finite() => Some(RequestRate::PerSecond(r)),
            // 2026 versions write "trace" when replaying a trace's timestamps: no fixed rate.
            _ if v.as_str() == Some("trace") => None,
            _ => {
                return Err(FieldError::new(
                    "/request_rate",
                    format!("expected a positive number or Infinity, found {}", short(v)),
                ))
            }
        },
    };
    // The lengths of the dataset run (crate::cell: SGLang writes every family's settings).
    let dataset = obj
        .get("dataset_name")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .map(str::to_string);
    let lengths = crate::cell::Lengths {
        random_input: count(obj, "", "random_input_len")?,
        random_output: count(obj, "", "random_output_len")?,
        sharegpt_output: count(obj, "", "sharegpt_output_len")?,
        ..Default::default()
    };
    let (input_len, output_len) = crate::cell::requested_lengths(dataset.as_deref(), &lengths);
    Ok(WorkloadCell {
        load: LoadShape {
            max_concurrency: count(obj, "", "max_concurrency")?,
            request_rate,
            burstiness: None,
        },
        input_len,
        output_len,
        dataset,
        ..Default::default()
    })
}

/// The configuration: the client backend, and from `server_info` (SGLang's server arguments,
/// 2026 versions) the model, engine version, parallel sizes and quantization.
fn read_configuration(obj: &Map<String, Value>) -> Result<Configuration, FieldError> {
    let mut config = Configuration::default();
    config.benchmark.name = Some(FORMAT.to_string());
    config.benchmark.backend = obj.get("backend").and_then(Value::as_str).map(String::from);
    let Some(info) = obj.get("server_info").and_then(Value::as_object) else {
        return Ok(config);
    };
    let text = |key: &str| {
        info.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(String::from)
    };
    // server_info is SGLang's ServerArgs (plus runtime state): the server is SGLang.
    config.engine.name = Some("sglang".into());
    config.engine.version = text("version");
    config.model.name = text("model_path");
    config.model.revision = text("revision");
    config.model.tokenizer = text("tokenizer_path");
    config.quantization.weights = text("quantization");
    config.quantization.kv_cache_dtype = text("kv_cache_dtype");
    let p = &mut config.parallelism;
    p.tensor_parallel_size = count(info, "/server_info", "tp_size")?;
    p.pipeline_parallel_size = count(info, "/server_info", "pp_size")?;
    p.data_parallel_size = count(info, "/server_info", "dp_size")?;
    p.expert_parallel_size = count(info, "/server_info", "ep_size")?;
    Ok(config)
}

/// The object holding the per-request arrays: the record itself, or its `"details"`.
fn details(obj: &Map<String, Value>) -> (&Map<String, Value>, &'static str) {
    match obj.get("details").and_then(Value::as_object) {
        Some(d) => (d, "/details"),
        None => (obj, ""),
    }
}

fn array<'a>(
    obj: &'a Map<String, Value>,
    prefix: &str,
    key: &str,
    len: Option<usize>,
) -> Result<Option<&'a Vec<Value>>, FieldError> {
    let Some(v) = obj.get(key).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let items = v
        .as_array()
        .ok_or_else(|| FieldError::new(pointer_in(prefix, key), "expected a list"))?;
    if let Some(len) = len.filter(|l| *l != items.len()) {
        return Err(FieldError::new(
            pointer_in(prefix, key),
            format!("has {} entries but ttfts has {len}", items.len()),
        ));
    }
    Ok(Some(items))
}

/// Per-request samples from the `--output-details` arrays (`None` without them). Latencies
/// are converted from s to ms; a failed request keeps no ttft and no output length (the tool
/// writes placeholders 0 for them) but keeps the gaps it streamed before failing.
fn read_samples(
    obj: &Map<String, Value>,
    completed: u64,
) -> Result<Option<RequestSamples>, FieldError> {
    let (d, prefix) = details(obj);
    let Some(ttfts) = array(d, prefix, "ttfts", None)? else {
        return Ok(None);
    };
    let len = Some(ttfts.len());
    let errors = array(d, prefix, "errors", len)?;
    let success: Vec<bool> = match errors {
        Some(errors) => errors
            .iter()
            .map(|e| match e {
                Value::Null => true,
                Value::String(s) => s.is_empty(),
                _ => false,
            })
            .collect(),
        // Without `errors`, every request counts as successful only if `completed` says so.
        None if completed as usize == ttfts.len() => vec![true; ttfts.len()],
        None => return Ok(None),
    };
    let successes = success.iter().filter(|ok| **ok).count() as u64;
    if successes != completed {
        return Err(FieldError::new(
            pointer_in(prefix, "errors"),
            format!("{successes} successful requests in the arrays but `completed` is {completed}"),
        ));
    }
    let ms = |v: &Value, at: String| {
        as_f64(v)
            .filter(|x| x.is_finite())
            .map(|x| x * 1000.0)
            .ok_or_else(|| FieldError::new(at, format!("expected seconds, found {}", short(v))))
    };
    let mut samples = RequestSamples {
        success: success.clone(),
        ..Default::default()
    };
    let mut ttft_ms = Vec::with_capacity(ttfts.len());
    for (i, (v, ok)) in ttfts.iter().zip(&success).enumerate() {
        ttft_ms.push(if *ok {
            Some(ms(v, format!("{prefix}/ttfts/{i}"))?)
        } else {
            None
        });
    }
    samples.ttft_ms = Some(ttft_ms);
    if let Some(itls) = array(d, prefix, "itls", len)? {
        let mut all = Vec::with_capacity(itls.len());
        for (i, gaps) in itls.iter().enumerate() {
            let gaps = gaps.as_array().ok_or_else(|| {
                FieldError::new(format!("{prefix}/itls/{i}"), "expected a list of seconds")
            })?;
            let mut row = Vec::with_capacity(gaps.len());
            for (j, g) in gaps.iter().enumerate() {
                row.push(ms(g, format!("{prefix}/itls/{i}/{j}"))?);
            }
            all.push(row);
        }
        samples.itl_ms = Some(all);
    }
    let tokens = |key: &str| -> Result<Option<Vec<Option<u64>>>, FieldError> {
        let Some(items) = array(d, prefix, key, len)? else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, (v, ok)) in items.iter().zip(&success).enumerate() {
            let n = as_f64(v).and_then(super::fields::as_count).ok_or_else(|| {
                FieldError::new(
                    format!("{prefix}/{key}/{i}"),
                    format!("expected a token count, found {}", short(v)),
                )
            })?;
            out.push((*ok || key == "input_lens").then_some(n));
        }
        Ok(Some(out))
    };
    samples.input_tokens = tokens("input_lens")?;
    samples.output_tokens = tokens("output_lens")?;
    Ok(Some(samples))
}

/// `p99_e2e_latency_ms` → (`p99`, `e2el`); `max_itl_ms` → (`max`, `itl`).
fn split_stat_key(key: &str) -> Option<(Stat, &'static str)> {
    let body = key.strip_suffix("_ms")?;
    let (stat, metric) = body.split_once('_')?;
    let name = DISTRIBUTIONS.iter().find(|(k, _)| *k == metric)?.1;
    Some((stat_label(stat)?, name))
}

fn read_distributions(
    obj: &Map<String, Value>,
    completed: u64,
    counts: Option<&SampleCounts>,
    result: &mut BenchResult,
) -> Result<(), FieldError> {
    for (key, value) in obj {
        let Some((stat, name)) = split_stat_key(key) else {
            continue;
        };
        // `median_*` and `p50_*` are one statistic, stored once.
        if has(result, name, &stat) {
            continue;
        }
        if value.is_null() {
            continue;
        }
        let v = as_f64(value).ok_or_else(|| {
            FieldError::new(
                pointer_in("", key),
                format!("expected a number, found {}", short(value)),
            )
        })?;
        let n = match name {
            "tpot" => counts.map(|c| c.tpot),
            "itl" => counts.map(|c| c.itl),
            _ => Some(completed),
        };
        push_value(result, name, stat, v, n, key);
    }
    Ok(())
}

fn is_known_key(key: &str) -> bool {
    SETUP_KEYS.contains(&key)
        || AGGREGATES.iter().any(|(k, _)| *k == key)
        || split_stat_key(key).is_some()
        || key == "details"
}

/// Every other non-null, non-list value, as written (`tag`, `dataset_name`, `random_*`,
/// `concurrency`, `input_throughput`, `server_info`, ...). Lists are per-request data.
fn read_facts(obj: &Map<String, Value>, result: &mut BenchResult) {
    for (key, value) in obj {
        if is_known_key(key) || value.is_null() || value.is_array() {
            continue;
        }
        result.facts.insert(key.clone(), value.clone());
    }
}
