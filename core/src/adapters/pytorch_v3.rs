//! The PyTorch OSS benchmark format (`oss_ci_benchmark_v3`) that vLLM's benchmarks write to
//! `<name>.pytorch.json` when `SAVE_TO_PYTORCH_BENCHMARK_FORMAT` is set (notes §1.5,
//! vllm/benchmarks/lib/utils.py `convert_to_pytorch_benchmark_format`).
//!
//! A JSON list with **one record per metric**:
//! `{"benchmark": {"name": "vLLM benchmark", "extra_info": {"args": {...every CLI arg...}}},
//!   "model": {"name": M}, "metric": {"name": N, "benchmark_values": [...], "extra_info": {...}}}`
//! (JSON-each-row, one record per line, is accepted too). Records are grouped into one result
//! per (benchmark name, args, model): a run of `vllm bench serve` gives 12 records (mean,
//! median, std, p99 of ttft, tpot and itl, in ms) whose `extra_info` holds every other result
//! key; `vllm bench latency` one record `latency` with every iteration's latency (s) and
//! `extra_info` `{avg_latency, percentiles}`; `vllm bench throughput` `requests_per_second` and
//! `tokens_per_second` with `extra_info` `{elapsed_time, num_requests, total_num_tokens}`.
//!
//! The args fill the cell (max_concurrency, request_rate, num_prompts, input/output length;
//! a latency run's `batch_size` requests are all in flight at once, so it is the cell's
//! max_concurrency) and the configuration (model, tokenizer, parallel sizes, quantization,
//! scheduler limits, client backend), following [`crate::cell`] (the dataset and the lengths of
//! that dataset). `benchmark.name` is still the format name: vLLM writes this file next to its
//! own result JSON, and the two are uploaded together (`results/*.json`); as one tool they
//! would be two results of one cell in one upload, refused as ambiguous, until the pair is
//! recognised as one measurement.

use super::fields::{as_count, count, finish_metrics, has, number, push_value, short, stat_label};
use super::{AdapterError, Content, FieldError, InputFile};
use crate::cell::RequestRate;
use crate::lenient_json::as_f64;
use crate::metric::Stat;
use crate::result::{BenchResult, Source, Warning};
use serde_json::{Map, Value};

/// Format name.
pub const FORMAT: &str = "pytorch-benchmark-v3";

/// Aggregate result keys of a serve run's `extra_info`, and their vocabulary names.
const AGGREGATES: &[(&str, &str)] = &[
    ("duration", "duration"),
    ("completed", "completed"),
    ("failed", "failed"),
    ("total_input_tokens", "total_input_tokens"),
    ("total_output_tokens", "total_output_tokens"),
    ("request_throughput", "request_throughput"),
    ("request_goodput", "request_goodput"),
    ("output_throughput", "output_throughput"),
    ("total_token_throughput", "total_token_throughput"),
    ("max_output_tokens_per_s", "max_output_tokens_per_s"),
    ("max_concurrent_requests", "max_concurrent_requests"),
];

/// Serve distribution metrics (`<stat>_<m>_ms`).
const DISTRIBUTIONS: &[&str] = &["ttft", "tpot", "itl", "e2el"];

/// One record with where it is: index of the top-level JSON value and, for a list, the index
/// within it.
struct Located<'a> {
    value: usize,
    item: Option<usize>,
    record: &'a Value,
}

impl Located<'_> {
    fn pointer(&self, inner: &str) -> String {
        match self.item {
            Some(i) => format!("/{i}{inner}"),
            None => inner.to_string(),
        }
    }
}

fn records<'a>(values: &'a [Value]) -> Vec<Located<'a>> {
    let mut out = Vec::new();
    for (value, v) in values.iter().enumerate() {
        match v {
            Value::Array(items) => {
                out.extend(items.iter().enumerate().map(|(i, record)| Located {
                    value,
                    item: Some(i),
                    record,
                }))
            }
            record => out.push(Located {
                value,
                item: None,
                record,
            }),
        }
    }
    out
}

fn detect_record(record: &Value) -> Result<(), String> {
    let obj = record
        .as_object()
        .ok_or("not a JSON object or list of objects")?;
    if !obj.get("benchmark").is_some_and(Value::is_object) {
        return Err("no `benchmark` object".into());
    }
    let metric = obj
        .get("metric")
        .and_then(Value::as_object)
        .ok_or("no `metric` object")?;
    if !metric.get("benchmark_values").is_some_and(Value::is_array) {
        return Err("no `metric.benchmark_values` list".into());
    }
    Ok(())
}

pub(super) fn detect(input: &InputFile) -> Result<(), String> {
    let Content::Json(values) = &input.content else {
        return Err("not JSON".into());
    };
    let all = records(values);
    let first = all.first().ok_or("an empty list")?;
    detect_record(first.record)
}

fn field_error(input: &InputFile, at: &Located, error: FieldError) -> AdapterError {
    let lines = super::record_start_lines(input.text);
    AdapterError::Field {
        record: at.value,
        line: lines.get(at.value).copied().unwrap_or(1),
        error: FieldError::new(at.pointer(&error.field), error.message),
    }
}

/// A group of records of one run.
struct Group<'a> {
    key: String,
    members: Vec<Located<'a>>,
}

pub(super) fn parse(
    input: &InputFile,
    _companions: &[&InputFile],
) -> Result<Vec<BenchResult>, AdapterError> {
    let Content::Json(values) = &input.content else {
        return Err(AdapterError::Field {
            record: 0,
            line: 1,
            error: FieldError::new("", "expected a JSON list of records"),
        });
    };
    let mut groups: Vec<Group> = Vec::new();
    for at in records(values) {
        detect_record(at.record).map_err(|why| {
            field_error(
                input,
                &at,
                FieldError::new("", format!("not a PyTorch benchmark record: {why}")),
            )
        })?;
        let key = serde_json::to_string(&(
            at.record.pointer("/benchmark/name"),
            at.record.pointer("/benchmark/extra_info/args"),
            at.record.pointer("/model/name"),
        ))
        .unwrap_or_default();
        match groups.iter_mut().find(|g| g.key == key) {
            Some(g) => g.members.push(at),
            None => groups.push(Group {
                key,
                members: vec![at],
            }),
        }
    }
    let mut results = Vec::with_capacity(groups.len());
    for (index, group) in groups.iter().enumerate() {
        let mut r = read_group(input, group)?;
        let first = &group.members[0];
        r.source = Some(Source {
            format: String::new(),
            file: input.index,
            record: if values.len() > 1 { first.value } else { index },
        });
        results.push(r);
    }
    Ok(results)
}

fn read_group(input: &InputFile, group: &Group) -> Result<BenchResult, AdapterError> {
    let first = &group.members[0];
    let mut r = BenchResult::default();
    r.configuration.benchmark.name = Some(FORMAT.to_string());
    read_args(first.record, &mut r).map_err(|e| field_error(input, first, e))?;
    if let Some(name) = first
        .record
        .pointer("/benchmark/name")
        .filter(|v| !v.is_null())
    {
        r.facts.insert("benchmark".into(), name.clone());
    }
    // Serve runs: the number of completed requests is the sample count of ttft and e2el.
    let mut completed = None;
    for at in &group.members {
        if let Some(extra) = at
            .record
            .pointer("/metric/extra_info")
            .and_then(Value::as_object)
        {
            if let Some(c) = count(extra, "/metric/extra_info", "completed")
                .map_err(|e| field_error(input, at, e))?
            {
                completed = Some(c);
            }
        }
    }
    for at in &group.members {
        read_record(at, completed, &mut r).map_err(|e| field_error(input, at, e))?;
    }
    if completed == Some(0) {
        r.metrics
            .retain(|m| m.stat == Stat::Value || !DISTRIBUTIONS.contains(&m.name.as_str()));
        r.warnings.push(Warning {
            code: "nothing_completed".into(),
            message: "No request completed: the tool's latency statistics are placeholders (0.0) and were not stored.".into(),
        });
    }
    finish_metrics(&mut r);
    Ok(r)
}

fn read_record(
    at: &Located,
    completed: Option<u64>,
    r: &mut BenchResult,
) -> Result<(), FieldError> {
    let metric = at
        .record
        .pointer("/metric")
        .and_then(Value::as_object)
        .ok_or_else(|| FieldError::new("/metric", "expected an object"))?;
    let name = metric
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| FieldError::new("/metric/name", "expected a metric name"))?;
    let values = metric
        .get("benchmark_values")
        .and_then(Value::as_array)
        .ok_or_else(|| FieldError::new("/metric/benchmark_values", "expected a list"))?;
    let mut numbers = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        numbers.push(as_f64(v).ok_or_else(|| {
            FieldError::new(
                format!("/metric/benchmark_values/{i}"),
                format!("expected a number, found {}", short(v)),
            )
        })?);
    }
    let empty = Map::new();
    let extra = match metric.get("extra_info") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(o)) => o,
        Some(other) => {
            return Err(FieldError::new(
                "/metric/extra_info",
                format!("expected an object, found {}", short(other)),
            ))
        }
    };
    let one = || -> Result<f64, FieldError> {
        match numbers.as_slice() {
            [v] => Ok(*v),
            _ => Err(FieldError::new(
                "/metric/benchmark_values",
                format!("expected one value, found {}", numbers.len()),
            )),
        }
    };
    match name {
        "latency" => {
            super::vllm_offline::read_latency(
                extra,
                "/metric/extra_info",
                Some(numbers.len() as u64),
                r,
            )?;
            r.configuration.engine.name = Some("vllm".into());
        }
        "requests_per_second" | "tokens_per_second" => {
            let vocabulary = if name == "requests_per_second" {
                "request_throughput"
            } else {
                "total_token_throughput"
            };
            if !has(r, vocabulary, &Stat::Value) {
                push_value(r, vocabulary, Stat::Value, one()?, None, name);
            }
            let mut offline = BenchResult::default();
            super::vllm_offline::read_throughput(extra, "/metric/extra_info", &mut offline)?;
            merge_new(r, offline);
            r.configuration.engine.name = Some("vllm".into());
        }
        _ => match split_stat_key(name) {
            Some((stat, m)) => {
                if !has(r, m, &stat) {
                    let n = matches!(m, "ttft" | "e2el").then_some(completed).flatten();
                    push_value(r, m, stat, one()?, n, name);
                }
                read_serve_extra(extra, completed, r)?;
            }
            None => {
                r.facts
                    .insert(format!("metric.{name}"), Value::from(numbers.clone()));
            }
        },
    }
    Ok(())
}

/// Adds the metrics and cell fields of `other` that `r` lacks.
fn merge_new(r: &mut BenchResult, other: BenchResult) {
    for m in other.metrics {
        if !has(r, &m.name, &m.stat) {
            r.metrics.push(m);
        }
    }
    if r.cell.num_prompts.is_none() {
        r.cell.num_prompts = other.cell.num_prompts;
    }
}

/// `p99_ttft_ms` → (p99, `ttft`).
fn split_stat_key(key: &str) -> Option<(Stat, &'static str)> {
    let body = key.strip_suffix("_ms")?;
    let (stat, metric) = body.split_once('_')?;
    let name = DISTRIBUTIONS.iter().find(|m| **m == metric)?;
    Some((stat_label(stat)?, name))
}

/// A serve record's `extra_info`: the aggregates and the statistics not written as records
/// (`p90_ttft_ms`, `mean_e2el_ms`, ... when selected).
fn read_serve_extra(
    extra: &Map<String, Value>,
    completed: Option<u64>,
    r: &mut BenchResult,
) -> Result<(), FieldError> {
    const AT: &str = "/metric/extra_info";
    for (key, name) in AGGREGATES {
        if has(r, name, &Stat::Value) {
            continue;
        }
        if let Some(v) = number(extra, AT, key)? {
            push_value(r, name, Stat::Value, v, None, key);
        }
    }
    for (key, value) in extra {
        let Some((stat, m)) = split_stat_key(key) else {
            continue;
        };
        if has(r, m, &stat) || value.is_null() {
            continue;
        }
        let v = number(extra, AT, key)?.unwrap_or(f64::NAN);
        let n = matches!(m, "ttft" | "e2el").then_some(completed).flatten();
        push_value(r, m, stat, v, n, key);
    }
    for key in ["date", "label", "model_id", "backend"] {
        if let Some(v) = extra.get(key).filter(|v| !v.is_null()) {
            r.facts.entry(key.to_string()).or_insert_with(|| v.clone());
        }
    }
    Ok(())
}

/// The CLI args of `benchmark.extra_info.args` into the cell and the configuration.
fn read_args(record: &Value, r: &mut BenchResult) -> Result<(), FieldError> {
    const AT: &str = "/benchmark/extra_info/args";
    if let Some(model) = record.pointer("/model/name").and_then(Value::as_str) {
        r.configuration.model.name = Some(model.to_string());
    }
    let args = match record.pointer(AT) {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Object(args)) => args,
        Some(other) => {
            return Err(FieldError::new(
                AT,
                format!("expected an object, found {}", short(other)),
            ))
        }
    };
    r.facts.insert("args".into(), Value::Object(args.clone()));
    let text = |key: &str| {
        args.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty() && !s.starts_with('<'))
            .map(String::from)
    };
    // A bool flag, or a count, as argparse stored it; other shapes are left as facts.
    let flag = |key: &str| args.get(key).and_then(Value::as_bool);
    let whole = |key: &str| args.get(key).and_then(as_f64).and_then(as_count);
    let c = &mut r.configuration;
    if c.model.name.is_none() {
        c.model.name = text("model");
    }
    c.model.tokenizer = text("tokenizer");
    c.model.revision = text("revision");
    c.benchmark.backend = text("backend");
    c.quantization.weights = text("quantization");
    c.quantization.kv_cache_dtype = text("kv_cache_dtype");
    c.parallelism.tensor_parallel_size = whole("tensor_parallel_size");
    c.parallelism.pipeline_parallel_size = whole("pipeline_parallel_size");
    c.parallelism.data_parallel_size = whole("data_parallel_size");
    c.scheduler.max_num_batched_tokens = whole("max_num_batched_tokens");
    c.scheduler.max_num_seqs = whole("max_num_seqs");
    c.scheduler.chunked_prefill = flag("enable_chunked_prefill");
    c.scheduler.prefix_caching = flag("enable_prefix_caching");

    let cell = &mut r.cell;
    cell.load.max_concurrency = whole("max_concurrency").or_else(|| whole("batch_size"));
    cell.load.request_rate = match args.get("request_rate").and_then(as_f64) {
        Some(v) if v == f64::INFINITY => Some(RequestRate::Infinite),
        Some(v) if v > 0.0 && v.is_finite() => Some(RequestRate::PerSecond(v)),
        _ => None,
    };
    if matches!(cell.load.request_rate, Some(RequestRate::PerSecond(_))) {
        cell.load.burstiness = args
            .get("burstiness")
            .and_then(as_f64)
            .filter(|b| b.is_finite());
    }
    cell.num_prompts = whole("num_prompts");
    // Every CLI arg is recorded, used or not: the lengths of the dataset run (crate::cell).
    cell.dataset = args
        .get("dataset_name")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .map(str::to_string);
    let lengths = crate::cell::Lengths {
        random_input: whole("random_input_len"),
        random_output: whole("random_output_len"),
        sonnet_input: whole("sonnet_input_len"),
        sonnet_output: whole("sonnet_output_len"),
        sharegpt_output: whole("sharegpt_output_len"),
        hf_output: whole("hf_output_len"),
        input: whole("input_len"),
        output: whole("output_len"),
    };
    (cell.input_len, cell.output_len) =
        crate::cell::requested_lengths(cell.dataset.as_deref(), &lengths);
    Ok(())
}
