//! `vllm bench serve --save-result` (and the older `benchmarks/benchmark_serving.py`).
//!
//! Keys as written by vllm/benchmarks/serve.py (see `shared/notes/benchmark-tool-formats.md` §1):
//! setup keys (`date`, `backend`, `model_id`, `tokenizer_id`, `num_prompts`, `request_rate`,
//! `burstiness`, `max_concurrency`, ...), `--metadata` pairs as top-level strings, aggregate
//! results (`duration` in s, counts, throughputs in req/s and tok/s), and for each metric `m`
//! `mean_m_ms`, `median_m_ms`, `std_m_ms`, `p{P}_m_ms`. With `--save-detailed` the per-request
//! arrays (`input_lens`, `output_lens`, `ttfts` in s, `itls` in s, `errors`, ...) are present.
//!
//! `--metadata` pairs are kept both in `configuration.metadata` (a series-key field when the
//! project declares it a key field, and always for a hardware or runner key such as
//! `hardware=ci-runner-L40S`: [`crate::config::HARDWARE_METADATA_KEYS`]) and as per-run facts; a pair naming the engine
//! (`framework=sgl`) sets `engine.name` ([`ENGINE_METADATA_KEYS`]).
//!
//! Version traps handled here: v0.8 wrote `"request_goodput:"` (with a colon); `failed` appears
//! only from 2026; `request_rate` is the string `"inf"` when unlimited; with nothing completed
//! every statistic is a placeholder 0.0.

use super::FieldError;
use crate::cell::{LoadShape, RequestRate, WorkloadCell};
use crate::config::Configuration;
use crate::deferred_arrays::{read_typed, DeferredArrays, Seconds, DEFERRED};
use crate::lenient_json::as_f64;
use crate::metric::{self, Stat};
use crate::result::{BenchResult, Warning};
use crate::samples::RequestSamples;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Format name.
pub const FORMAT: &str = "vllm-bench-serve";

/// Setup keys that describe the run rather than measure it.
const SETUP_KEYS: &[&str] = &[
    "date",
    "endpoint_type",
    "backend",
    "label",
    "model_id",
    "tokenizer_id",
    "num_prompts",
    "request_rate",
    "burstiness",
    "max_concurrency",
];

/// Aggregate result keys and their vocabulary names.
const AGGREGATES: &[(&str, &str)] = &[
    ("duration", "duration"),
    ("completed", "completed"),
    ("failed", "failed"),
    ("total_input_tokens", "total_input_tokens"),
    ("total_output_tokens", "total_output_tokens"),
    ("request_throughput", "request_throughput"),
    ("request_goodput", "request_goodput"),
    // vLLM v0.8's benchmark_serving.py misspelled the key with a trailing colon.
    ("request_goodput:", "request_goodput"),
    ("output_throughput", "output_throughput"),
    ("total_token_throughput", "total_token_throughput"),
    ("max_output_tokens_per_s", "max_output_tokens_per_s"),
    ("max_concurrent_requests", "max_concurrent_requests"),
    ("spec_decode_acceptance_rate", "spec_decode_acceptance_rate"),
    (
        "spec_decode_acceptance_length",
        "spec_decode_acceptance_length",
    ),
];

/// Distribution metrics written as `<stat>_<metric>_ms`.
const DISTRIBUTIONS: &[&str] = &[
    "ttft",
    "tpot",
    "itl",
    "e2el",
    "client_queue_time",
    "e2el_including_client_queue",
];

pub(super) fn detect(record: &Value) -> Result<(), String> {
    let obj = record.as_object().ok_or("not a JSON object")?;
    let missing: Vec<&str> = ["duration", "completed", "request_throughput", "model_id"]
        .into_iter()
        .filter(|k| !obj.contains_key(*k))
        .collect();
    super::fields::missing_keys(&missing)
}

pub(super) fn parse(
    record: &Value,
    arrays: &DeferredArrays,
) -> Result<Vec<BenchResult>, FieldError> {
    let obj = record
        .as_object()
        .ok_or_else(|| FieldError::new("", "expected a JSON object"))?;
    detect(record)
        .map_err(|why| FieldError::new("", format!("not a vllm bench serve result: {why}")))?;

    let mut result = BenchResult::default();
    let completed = required_count(obj, "completed")?;
    let failed = optional_count(obj, "failed")?;
    let per_request = PerRequest::read(obj, arrays)?;
    let detail = Detail::read(obj, &per_request, completed)?;

    result.cell = read_cell(obj)?;
    result.configuration = read_configuration(obj);
    read_aggregates(obj, &mut result)?;
    read_distributions(obj, completed, detail.as_ref(), &mut result)?;
    read_facts(obj, &mut result);
    result.samples = read_samples(obj, per_request)?;

    if completed == 0 {
        result.warnings.push(Warning {
            code: "nothing_completed".into(),
            message: "No request completed: the tool's latency statistics are placeholders (0.0) and were not stored.".into(),
        });
    }
    if let Some(failed) = failed.filter(|f| *f > 0) {
        result.warnings.push(Warning {
            code: "failed_requests".into(),
            // Summed wide: two counts that each fit a u64 need not fit one together.
            message: format!(
                "{failed} of {} requests failed.",
                u128::from(failed) + u128::from(completed)
            ),
        });
    }
    if obj.get("tokenizer_id").is_some_and(Value::is_null) {
        result.warnings.push(Warning {
            code: "no_tokenizer".into(),
            message: "The run had no tokenizer: token counts and ttft/tpot/itl may be missing or approximate.".into(),
        });
    }
    Ok(vec![result])
}

/// What the `--save-detailed` arrays tell about sample counts.
struct Detail {
    /// Successful requests with more than one output token: the samples behind `tpot`.
    tpot_samples: u64,
    /// Inter-chunk gaps of successful requests: the samples behind `itl`.
    itl_samples: u64,
}

impl Detail {
    fn read(
        obj: &Map<String, Value>,
        arrays: &PerRequest,
        completed: u64,
    ) -> Result<Option<Detail>, FieldError> {
        let (Some(output_lens), Some(itls)) = (&arrays.output_lens, &arrays.itls) else {
            return Ok(None);
        };
        if itls.len() != output_lens.len() {
            return Err(FieldError::new(
                "/itls",
                format!(
                    "has {} entries but output_lens has {}",
                    itls.len(),
                    output_lens.len()
                ),
            ));
        }
        let errors = obj.get("errors").and_then(Value::as_array);
        let mut detail = Detail {
            tpot_samples: 0,
            itl_samples: 0,
        };
        let mut successes = 0;
        for (i, (len, gaps)) in output_lens.iter().zip(itls).enumerate() {
            let failed = errors
                .and_then(|e| e.get(i))
                .and_then(Value::as_str)
                .is_some_and(|e| !e.is_empty());
            if failed {
                continue;
            }
            successes += 1;
            if *len > 1 {
                detail.tpot_samples += 1;
            }
            detail.itl_samples += gaps.len() as u64;
        }
        if successes != completed {
            return Err(FieldError::new(
                "/output_lens",
                format!(
                    "{successes} successful requests in the arrays but `completed` is {completed}"
                ),
            ));
        }
        Ok(Some(detail))
    }
}

/// The per-request arrays of `--save-detailed` that are read as numbers, each read once: in
/// seconds (`ttfts`, `itls`, `latencies`) and token counts. Each is `None` when absent or
/// `null`.
struct PerRequest {
    ttfts: Option<Vec<f64>>,
    itls: Option<Vec<Vec<f64>>>,
    latencies: Option<Vec<f64>>,
    input_lens: Option<Vec<u64>>,
    output_lens: Option<Vec<u64>>,
}

impl PerRequest {
    fn read(obj: &Map<String, Value>, arrays: &DeferredArrays) -> Result<PerRequest, FieldError> {
        let seconds = |key| array(obj, arrays, key, seconds_list).map(|v| v.map(seconds_to_f64));
        Ok(PerRequest {
            output_lens: array(obj, arrays, "output_lens", count_list)?,
            itls: array(obj, arrays, "itls", lists_of_seconds)?
                .map(|lists| lists.into_iter().map(seconds_to_f64).collect()),
            ttfts: seconds("ttfts")?,
            latencies: seconds("latencies")?,
            input_lens: array(obj, arrays, "input_lens", count_list)?,
        })
    }
}

/// `key`'s per-request array: read straight into `T` from its text when the reader deferred
/// it ([`crate::deferred_arrays`]), from the tree otherwise; and from a tree built of its
/// text when that text does not fit `T`, so the error names the element at fault.
fn array<T: DeserializeOwned>(
    obj: &Map<String, Value>,
    arrays: &DeferredArrays,
    key: &str,
    from_tree: fn(Option<&Value>, &str) -> Result<Option<T>, FieldError>,
) -> Result<Option<T>, FieldError> {
    let Some(raw) = arrays.get(key) else {
        return from_tree(obj.get(key), key);
    };
    if let Some(typed) = read_typed::<Option<T>>(raw) {
        return Ok(typed);
    }
    let tree: Value = serde_json::from_str(raw.get())
        .map_err(|e| FieldError::new(pointer(key), e.to_string()))?;
    from_tree(Some(&tree), key)
}

/// Seconds as plain numbers: the same memory, no copy.
fn seconds_to_f64(list: Vec<Seconds>) -> Vec<f64> {
    list.into_iter().map(|s| s.0).collect()
}

fn number(obj: &Map<String, Value>, key: &str) -> Result<Option<f64>, FieldError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => as_f64(v)
            .map(Some)
            .ok_or_else(|| FieldError::new(pointer(key), format!("expected a number, found {v}"))),
    }
}

/// A whole, non-negative count that fits a `u64` (not saturated: `1e300` is no count).
fn optional_count(obj: &Map<String, Value>, key: &str) -> Result<Option<u64>, FieldError> {
    let Some(v) = number(obj, key)? else {
        return Ok(None);
    };
    super::fields::as_count(v).map(Some).ok_or_else(|| {
        // As written (`1e300`, not its 301 digits).
        let written = obj.get(key).map(super::fields::short).unwrap_or_default();
        FieldError::new(
            pointer(key),
            format!("expected a whole count, found {written}"),
        )
    })
}

fn required_count(obj: &Map<String, Value>, key: &str) -> Result<u64, FieldError> {
    optional_count(obj, key)?.ok_or_else(|| FieldError::new(pointer(key), "missing"))
}

/// A JSON pointer to a top-level key (escaping `~` and `/` per RFC 6901).
fn pointer(key: &str) -> String {
    format!("/{}", key.replace('~', "~0").replace('/', "~1"))
}

fn read_cell(obj: &Map<String, Value>) -> Result<WorkloadCell, FieldError> {
    let request_rate = match obj.get("request_rate") {
        None | Some(Value::Null) => None,
        Some(v) => match as_f64(v) {
            Some(r) if r == f64::INFINITY => Some(RequestRate::Infinite),
            Some(r) if r > 0.0 && r.is_finite() => Some(RequestRate::PerSecond(r)),
            _ => {
                return Err(FieldError::new(
                    "/request_rate",
                    format!("expected a positive number or \"inf\", found {v}"),
                ))
            }
        },
    };
    // The gamma shape only matters for a finite arrival rate; vLLM writes 1.0 regardless.
    let burstiness = match request_rate {
        Some(RequestRate::PerSecond(_)) => number(obj, "burstiness")?,
        _ => None,
    };
    Ok(WorkloadCell {
        load: LoadShape {
            max_concurrency: optional_count(obj, "max_concurrency")?,
            request_rate,
            burstiness,
        },
        num_prompts: optional_count(obj, "num_prompts")?,
        ..Default::default()
    })
}

fn read_configuration(obj: &Map<String, Value>) -> Configuration {
    let mut config = Configuration::default();
    let text = |key: &str| obj.get(key).and_then(Value::as_str).map(str::to_string);
    config.model.name = text("model_id");
    config.model.tokenizer = text("tokenizer_id");
    config.benchmark.name = Some(FORMAT.to_string());
    config.benchmark.backend = text("backend");
    for (key, value) in obj {
        if is_known_key(key) {
            continue;
        }
        // `--metadata KEY=VALUE` pairs are the only top-level strings vLLM does not define.
        if let Value::String(s) = value {
            config.metadata.insert(key.clone(), s.clone());
        }
    }
    config.engine.name = engine_from_metadata(&config.metadata);
    config
}

/// `--metadata` keys that name the inference engine measured (`framework=sgl` in
/// nerdalert/vllm-benchmark-graphs, comparing vLLM and SGLang servers with one client). Not
/// `backend`: that is the client's request backend, a setup key.
const ENGINE_METADATA_KEYS: &[&str] = &[
    "framework",
    "engine",
    "engine_name",
    "inference_engine",
    "serving_engine",
];

/// The engine name a result's metadata gives (the first of [`ENGINE_METADATA_KEYS`] set), in
/// the configuration's spelling (`sgl` → `sglang`): `engine.name` is a series-key field, so
/// results of different engines never merge into one series. An upload's own
/// `configuration.engine.name` still wins over it.
fn engine_from_metadata(metadata: &std::collections::BTreeMap<String, String>) -> Option<String> {
    let given = ENGINE_METADATA_KEYS
        .iter()
        .find_map(|k| metadata.get(*k))
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())?;
    let lower = given.to_ascii_lowercase();
    Some(
        match lower.as_str() {
            "sgl" | "sglang" => "sglang",
            "vllm" => "vllm",
            "trtllm" | "trt-llm" | "trt_llm" | "tensorrt-llm" | "tensorrt_llm" => "trt-llm",
            other => other,
        }
        .to_string(),
    )
}

fn is_known_key(key: &str) -> bool {
    SETUP_KEYS.contains(&key)
        || AGGREGATES.iter().any(|(k, _)| *k == key)
        // The per-request arrays of `--save-detailed` (and those some versions always write):
        // the ones kept as text when the file is read, and `errors`.
        || DEFERRED.contains(&key)
        || key == "errors"
        || split_stat_key(key).is_some()
}

/// `p99.9_ttft_ms` → (`p99.9`, `ttft`); `median_itl_ms` → (`median`, `itl`).
fn split_stat_key(key: &str) -> Option<(&str, &str)> {
    let body = key.strip_suffix("_ms")?;
    let (stat, metric) = body.split_once('_')?;
    let known_stat = matches!(stat, "mean" | "median" | "std")
        || stat
            .strip_prefix('p')
            .is_some_and(|p| p.parse::<f64>().is_ok());
    (known_stat && DISTRIBUTIONS.contains(&metric)).then_some((stat, metric))
}

fn read_aggregates(obj: &Map<String, Value>, result: &mut BenchResult) -> Result<(), FieldError> {
    for (key, name) in AGGREGATES {
        if let Some(v) = number(obj, key)? {
            super::fields::push_value(result, name, Stat::Value, v, None, key);
        }
    }
    // The tool's goodput is computed under the tool's own thresholds (`--goodput`), which the
    // file does not record: profile `tool` (thresholds from the recorded command, see
    // `crate::slo::annotate_tool_goodput`).
    for m in &mut result.metrics {
        if m.name == "request_goodput" {
            m.slo_profile = Some(crate::slo::TOOL_PROFILE.to_string());
        }
    }
    Ok(())
}

/// The per-request arrays of `--save-detailed` as [`RequestSamples`], converted from s to ms
/// (`value_s * 1000.0`, per sample). `None` without `ttfts`.
///
/// As vLLM's `calculate_metrics` (serve.py): a request succeeded when its `errors` entry is
/// empty (all succeeded when there is no `errors` array); e2el is `latencies`, or where a
/// version does not write them, `ttft + sum(itl)` per request (the same interval up to
/// rounding: vLLM's latency is the last chunk time minus the start); tpot is
/// `(latency − ttft) / (output_len − 1)` in s for successful requests with output_len > 1,
/// then × 1000. Latencies of failed requests are `None`: vLLM writes placeholders for them.
fn read_samples(
    obj: &Map<String, Value>,
    arrays: PerRequest,
) -> Result<Option<RequestSamples>, FieldError> {
    let Some(ttfts) = arrays.ttfts else {
        return Ok(None);
    };
    let n = ttfts.len();
    let same_length = |key: &str, len: usize| {
        if len == n {
            Ok(())
        } else {
            Err(FieldError::new(
                pointer(key),
                format!("has {len} entries but ttfts has {n}"),
            ))
        }
    };
    let success: Vec<bool> = match obj.get("errors").and_then(Value::as_array) {
        Some(errors) => {
            same_length("errors", errors.len())?;
            errors
                .iter()
                .map(|e| e.as_str().is_none_or(str::is_empty))
                .collect()
        }
        None => vec![true; n],
    };
    let itls = arrays.itls;
    if let Some(itls) = &itls {
        same_length("itls", itls.len())?;
    }
    let latencies = match arrays.latencies {
        Some(l) => {
            same_length("latencies", l.len())?;
            Some(l)
        }
        None => itls.as_ref().map(|itls| {
            ttfts
                .iter()
                .zip(itls)
                .map(|(t, gaps)| t + gaps.iter().sum::<f64>())
                .collect()
        }),
    };
    let (input_lens, output_lens) = (arrays.input_lens, arrays.output_lens);
    for (key, list) in [("input_lens", &input_lens), ("output_lens", &output_lens)] {
        if let Some(list) = list {
            same_length(key, list.len())?;
        }
    }
    let ms = |ok: bool, s: f64| ok.then_some(s * 1000.0);
    let tpot_ms = match (&latencies, &output_lens) {
        (Some(lat), Some(lens)) => Some(
            (0..n)
                .map(|i| {
                    (success[i] && lens[i] > 1)
                        .then(|| (lat[i] - ttfts[i]) / (lens[i] - 1) as f64 * 1000.0)
                })
                .collect(),
        ),
        _ => None,
    };
    Ok(Some(RequestSamples {
        ttft_ms: Some((0..n).map(|i| ms(success[i], ttfts[i])).collect()),
        e2el_ms: latencies.map(|lat| (0..n).map(|i| ms(success[i], lat[i])).collect()),
        tpot_ms,
        itl_ms: itls.map(|itls| {
            itls.into_iter()
                .map(|gaps| gaps.into_iter().map(|g| g * 1000.0).collect())
                .collect()
        }),
        input_tokens: input_lens.map(|l| l.into_iter().map(Some).collect()),
        output_tokens: output_lens.map(|l| l.into_iter().map(Some).collect()),
        duration_s: number(obj, "duration")?,
        success,
    }))
}

/// A list of numbers (seconds) at `key`, if present: the tree reading of [`array`].
fn seconds_list(v: Option<&Value>, key: &str) -> Result<Option<Vec<Seconds>>, FieldError> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let list = v
        .as_array()
        .ok_or_else(|| FieldError::new(pointer(key), "expected a list of seconds"))?;
    list.iter()
        .enumerate()
        .map(|(i, x)| {
            as_f64(x)
                .map(Seconds)
                .ok_or_else(|| FieldError::new(format!("{}/{i}", pointer(key)), "expected seconds"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// A list of lists of seconds at `key` (`itls`), if present: the tree reading of [`array`].
fn lists_of_seconds(v: Option<&Value>, key: &str) -> Result<Option<Vec<Vec<Seconds>>>, FieldError> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let lists = v
        .as_array()
        .ok_or_else(|| FieldError::new(pointer(key), "expected a list of lists"))?;
    lists
        .iter()
        .enumerate()
        .map(|(i, list)| {
            let at = format!("{}/{i}", pointer(key));
            let gaps = list
                .as_array()
                .ok_or_else(|| FieldError::new(at.clone(), "expected a list of seconds"))?;
            gaps.iter()
                .enumerate()
                .map(|(j, g)| {
                    as_f64(g)
                        .map(Seconds)
                        .ok_or_else(|| FieldError::new(format!("{at}/{j}"), "expected seconds"))
                })
                .collect()
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// A list of token counts at `key`, if present: the tree reading of [`array`].
fn count_list(v: Option<&Value>, key: &str) -> Result<Option<Vec<u64>>, FieldError> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let list = v
        .as_array()
        .ok_or_else(|| FieldError::new(pointer(key), "expected a list of token counts"))?;
    list.iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_u64().ok_or_else(|| {
                FieldError::new(format!("{}/{i}", pointer(key)), "expected a token count")
            })
        })
        .collect::<Result<Vec<u64>, _>>()
        .map(Some)
}

fn read_distributions(
    obj: &Map<String, Value>,
    completed: u64,
    detail: Option<&Detail>,
    result: &mut BenchResult,
) -> Result<(), FieldError> {
    if completed == 0 {
        return Ok(());
    }
    // vLLM writes both `median_m_ms` and (when 50 is among --metric-percentiles) `p50_m_ms`,
    // with equal values; both are p50 and stored once.
    let mut seen = std::collections::HashSet::new();
    for (key, value) in obj {
        let Some((stat_label, name)) = split_stat_key(key) else {
            continue;
        };
        let stat: Stat = stat_label
            .parse()
            .map_err(|e: metric::StatParseError| FieldError::new(pointer(key), e.to_string()))?;
        if !seen.insert((name, stat.clone())) {
            continue;
        }
        let v = as_f64(value).ok_or_else(|| {
            FieldError::new(pointer(key), format!("expected a number, found {value}"))
        })?;
        let n = match name {
            "tpot" => detail.map(|d| d.tpot_samples),
            "itl" => detail.map(|d| d.itl_samples),
            _ => Some(completed),
        };
        super::fields::push_value(result, name, stat, v, n, key);
    }
    super::fields::finish_metrics(result);
    Ok(())
}

/// A percentile P estimated from n samples is a tail guess when n·(1 − P/100) < 1: fewer than
/// one sample lies beyond it (p99 from fewer than 100 requests, p99.9 from fewer than 1000).
pub fn is_small_sample_tail(p: f64, n: u64) -> bool {
    p > 50.0 && (n as f64) * (1.0 - p / 100.0) < 1.0
}

fn read_facts(obj: &Map<String, Value>, result: &mut BenchResult) {
    for key in ["date", "label", "endpoint_type"] {
        if let Some(v) = obj.get(key).filter(|v| !v.is_null()) {
            result.facts.insert(key.to_string(), v.clone());
        }
    }
    // Every other key, `--metadata` pairs (top-level strings) included: per-run facts.
    for (key, value) in obj {
        if !is_known_key(key) {
            result.facts.insert(key.clone(), value.clone());
        }
    }
}
