//! The PyTorch OSS benchmark v3 records vLLM writes to `*.pytorch.json`.
//!
//! No real file exists in the samples (shared/samples/MANIFEST.md, gaps), so this input is
//! built from what vllm/benchmarks/lib/utils.py `convert_to_pytorch_benchmark_format` and the
//! serve/latency callers write (shared/notes/benchmark-tool-formats.md §1.5): one record per
//! metric, `args` = every CLI arg, inf written as "inf"; trimmed to a few records per run.

use crate::common;

use common::value;

use crate::mutate;
use mutate::{Subject, Syntax};

use benchtrail_core::adapters::parse_file;

const FORMAT: &str = "pytorch-benchmark-v3";

fn serve_record(metric: &str, value: f64) -> String {
    format!(
        r#"{{"benchmark": {{"name": "vLLM benchmark", "extra_info": {{"args": {{"model": "meta-llama/Llama-3.1-8B-Instruct",
        "tokenizer": null, "backend": "vllm", "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 8,
        "num_prompts": 200, "tensor_parallel_size": 2, "input_len": null, "output_len": null}}}}}},
        "model": {{"name": "meta-llama/Llama-3.1-8B-Instruct"}},
        "metric": {{"name": "{metric}", "benchmark_values": [{value}], "extra_info": {{"date": "20250101-000000",
        "duration": 20.0, "completed": 200, "total_input_tokens": 102400, "total_output_tokens": 25600,
        "request_throughput": 10.0, "output_throughput": 1280.0, "total_token_throughput": 6400.0,
        "p90_ttft_ms": 40.0, "tensor_parallel_size": 2}}}}}}"#
    )
}

fn file() -> String {
    let latency = r#"{"benchmark": {"name": "vLLM benchmark", "extra_info": {"args": {"model": "m",
        "batch_size": 8, "input_len": 32, "output_len": 128, "tensor_parallel_size": 1,
        "quantization": "fp8", "kv_cache_dtype": "auto", "num_iters": 3}}},
        "model": {"name": "m"},
        "metric": {"name": "latency", "benchmark_values": [1.0, 1.1, 1.2],
        "extra_info": {"avg_latency": 1.1, "percentiles": {"50": 1.1, "99": 1.198}}}}"#;
    format!(
        "[{}, {}, {}, {}, {latency}]",
        serve_record("median_ttft_ms", 30.5),
        serve_record("mean_ttft_ms", 31.25),
        serve_record("p99_ttft_ms", 45.0),
        serve_record("p99_itl_ms", 12.0),
    )
}

#[test]
fn records_are_grouped_into_one_result_per_run() {
    let (format, results) = parse_file(None, &file(), 0).unwrap();
    assert_eq!(format, FORMAT);
    assert_eq!(results.len(), 2);
    let serve = &results[0];
    assert_eq!(value(serve, "ttft", "p50"), (30.5, Some(200)));
    assert_eq!(value(serve, "ttft", "mean"), (31.25, Some(200)));
    assert_eq!(value(serve, "ttft", "p99"), (45.0, Some(200)));
    assert_eq!(value(serve, "ttft", "p90"), (40.0, Some(200)));
    assert_eq!(value(serve, "itl", "p99"), (12.0, None));
    assert_eq!(value(serve, "completed", "value"), (200.0, None));
    assert_eq!(value(serve, "output_throughput", "value"), (1280.0, None));
    assert_eq!(value(serve, "duration", "value"), (20.0, None));
    assert_eq!(serve.metrics.len(), 5 + 7);
    assert_eq!(
        serve.cell.key(),
        "max_concurrency=8;request_rate=inf;num_prompts=200"
    );
    let c = &serve.configuration;
    assert_eq!(
        c.model.name.as_deref(),
        Some("meta-llama/Llama-3.1-8B-Instruct")
    );
    assert_eq!(c.parallelism.tensor_parallel_size, Some(2));
    assert_eq!(c.benchmark.name.as_deref(), Some(FORMAT));
    assert_eq!(c.benchmark.backend.as_deref(), Some("vllm"));
    assert_eq!(serve.facts["date"], "20250101-000000");

    let latency = &results[1];
    assert_eq!(value(latency, "batch_latency", "mean").0, 1.1 * 1000.0);
    assert_eq!(
        value(latency, "batch_latency", "p99"),
        (1.198 * 1000.0, Some(3))
    );
    assert_eq!(
        latency.cell.key(),
        "max_concurrency=8;input_len=32;output_len=128"
    );
    assert_eq!(
        latency.configuration.quantization.weights.as_deref(),
        Some("fp8")
    );
    assert_eq!(latency.configuration.engine.name.as_deref(), Some("vllm"));
    let sources: Vec<usize> = results
        .iter()
        .map(|r| r.source.as_ref().unwrap().record)
        .collect();
    assert_eq!(sources, [0, 1]);
}

#[test]
fn json_each_row_is_accepted() {
    let rows = format!(
        "{}\n{}\n",
        serve_record("median_ttft_ms", 30.5).replace('\n', " "),
        serve_record("mean_ttft_ms", 31.25).replace('\n', " ")
    );
    let (format, results) = parse_file(None, &rows, 0).unwrap();
    assert_eq!(format, FORMAT);
    assert_eq!(results.len(), 1);
    assert_eq!(value(&results[0], "ttft", "mean"), (31.25, Some(200)));
}

#[test]
fn a_bad_value_names_record_and_field() {
    let bad = file().replacen("[30.5]", "[\"x\"]", 1);
    assert_eq!(
        parse_file(None, &bad, 0).unwrap_err().to_string(),
        "record 0 (line 1): field `/0/metric/benchmark_values/0`: expected a number, found \"x\""
    );
}

#[test]
fn never_panics_on_random_truncated_or_mutated_input() {
    // Small and quick: every input is read detected and named.
    let s = Subject::alone(&file(), Syntax::Json, &[None, Some(FORMAT)]);
    s.random_bytes(31, 200);
    s.truncations(31, 400);
    s.byte_mutations(32, 300);
    s.mutations(33, 400);
}
