//! The SGLang `bench_serving` adapter against real JSON Lines files (sources:
//! testdata/README.md).

use crate::common;

use common::{read, value};

use crate::mutate;
use mutate::{Subject, Syntax, EVERY_LENGTH};

use benchtrail_core::adapters::parse_file;
use benchtrail_core::{stats, BenchResult, RequestRate, Stat};

const FORMAT: &str = "sglang-bench-serving";
const DATACRUNCH: &str =
    "testdata/sglang/datacrunch-h200-llama33-70b-offline-rate-infinity-2024-12.jsonl";
const BENCHMAXXING: &str = "testdata/sglang/llm-benchmaxxing-sglang-bench_serving-2026-03-output-details-server_info-gpt-oss-120b-h100.jsonl";
const MOCK_C4: &str =
    "testdata/sglang/sglang-0.5.23-mock-baseline_completions_c4_isl512_osl128.jsonl";

fn stored(r: &BenchResult) -> Vec<String> {
    r.metrics
        .iter()
        .map(|m| format!("{} {}", m.name, m.stat))
        .collect()
}

#[test]
fn late_2024_file_has_seven_runs_with_infinity_rate() {
    let (format, results) = parse_file(None, &read(DATACRUNCH), 0).unwrap();
    assert_eq!(format, FORMAT);
    assert_eq!(results.len(), 7);
    let r = &results[0];
    assert_eq!(
        stored(r),
        [
            "ttft p50",
            "itl p50",
            "e2el mean",
            "e2el p50",
            "output_throughput value",
            "completed value",
            "duration value",
            "total_input_tokens value",
            "total_output_tokens value",
        ]
    );
    assert_eq!(value(r, "e2el", "mean"), (224918.79882259612, Some(3000)));
    assert_eq!(value(r, "e2el", "p50"), (243517.67949794885, Some(3000)));
    assert_eq!(value(r, "ttft", "p50"), (91282.20983641222, Some(3000)));
    // No per-request arrays: the number of chunk gaps is unknown, not guessed.
    assert_eq!(value(r, "itl", "p50"), (159.01175909675658, None));
    assert_eq!(
        value(r, "output_throughput", "value"),
        (4520.698730654741, None)
    );
    assert_eq!(value(r, "duration", "value"), (341.72106836596504, None));
    assert_eq!(value(r, "completed", "value"), (3000.0, None));
    assert_eq!(value(r, "total_input_tokens", "value"), (1525074.0, None));
    assert_eq!(value(r, "total_output_tokens", "value"), (1544818.0, None));
    assert_eq!(r.cell.load.request_rate, Some(RequestRate::Infinite));
    assert_eq!(r.cell.load.max_concurrency, None);
    // The cell (crate::cell): the load shape, the dataset and its requested lengths.
    assert_eq!(
        r.cell.key(),
        "request_rate=inf;input_len=1024;output_len=1024;dataset=random"
    );
    let keys: Vec<String> = results.iter().map(|r| r.cell.key()).collect();
    assert_eq!(
        keys,
        [
            "request_rate=inf;input_len=1024;output_len=1024;dataset=random",
            "request_rate=inf;input_len=1024;output_len=512;dataset=random",
            "request_rate=inf;input_len=4096;output_len=2048;dataset=random",
            "request_rate=inf;input_len=4096;output_len=1024;dataset=random",
            // The same workload run twice: one cell (one upload of both is refused as
            // ambiguous, see tests/workload_identity.rs).
            "request_rate=inf;input_len=4096;output_len=1024;dataset=random",
            "request_rate=inf;input_len=256;output_len=512;dataset=random",
            // `random_*` are SGLang's defaults, written for every dataset: not this run's.
            "request_rate=inf;dataset=sharegpt",
        ]
    );
    let c = &r.configuration;
    assert_eq!(c.benchmark.name.as_deref(), Some(FORMAT));
    assert_eq!(c.benchmark.backend.as_deref(), Some("sglang"));
    assert_eq!(
        c.engine.name, None,
        "no server_info: the engine is not guessed"
    );
    assert_eq!(r.facts["dataset_name"], "random");
    assert_eq!(r.facts["random_input_len"], 1024);
    assert_eq!(r.facts["total_output_tokens_retokenized"], 1541296);
    assert!(
        !r.facts.contains_key("sharegpt_output_len"),
        "null is no fact"
    );
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert!(r.samples.is_none());
    let completed: Vec<f64> = results
        .iter()
        .map(|r| value(r, "completed", "value").0)
        .collect();
    assert_eq!(
        completed,
        [3000.0, 4000.0, 800.0, 1500.0, 1500.0, 6000.0, 2000.0]
    );
    let source = results[6].source.as_ref().unwrap();
    assert_eq!((source.format.as_str(), source.record), (FORMAT, 6));
}

#[test]
fn output_details_and_server_info_fill_samples_and_configuration() {
    let (format, results) = parse_file(None, &read(BENCHMAXXING), 0).unwrap();
    assert_eq!(format, FORMAT);
    let r = &results[0];
    assert_eq!(
        stored(r),
        [
            "ttft mean",
            "ttft p50",
            "ttft p99",
            "ttft std",
            "tpot mean",
            "tpot p50",
            "tpot p99",
            "tpot std",
            "itl mean",
            "itl p50",
            "itl p95",
            "itl p99",
            "itl std",
            "e2el mean",
            "e2el p50",
            "e2el p90",
            "e2el p99",
            "e2el std",
            "request_throughput value",
            "output_throughput value",
            "total_token_throughput value",
            "max_output_tokens_per_s value",
            "max_concurrent_requests value",
            "completed value",
            "failed value",
            "duration value",
            "total_input_tokens value",
            "total_output_tokens value",
        ]
    );
    // Every statistic of ttft, with n = completed requests.
    assert_eq!(value(r, "ttft", "mean"), (3699.99932392966, Some(100)));
    assert_eq!(value(r, "ttft", "p50"), (3842.531911097467, Some(100)));
    assert_eq!(value(r, "ttft", "p99"), (5445.256623122841, Some(100)));
    assert_eq!(value(r, "ttft", "std"), (1006.9274825222066, Some(100)));
    // tpot: the 99 successful requests with more than one output token.
    assert_eq!(value(r, "tpot", "mean"), (57.185522783310205, Some(99)));
    assert_eq!(value(r, "tpot", "p99"), (410.0494019252538, Some(99)));
    // itl: 6008 gaps pooled over the successful requests.
    assert_eq!(value(r, "itl", "p95"), (16.93733346182853, Some(6008)));
    assert_eq!(value(r, "itl", "p99"), (95.20616800524297, Some(6008)));
    assert_eq!(value(r, "itl", "std"), (199.02323211307205, Some(6008)));
    assert_eq!(value(r, "e2el", "p90"), (6761.764041800052, Some(100)));
    assert_eq!(value(r, "e2el", "std"), (928.7977278803935, Some(100)));
    assert_eq!(
        value(r, "total_token_throughput", "value"),
        (8039.313172796494, None)
    );
    assert_eq!(value(r, "max_output_tokens_per_s", "value"), (2429.0, None));
    assert_eq!(value(r, "max_concurrent_requests", "value"), (100.0, None));
    // Counted from `errors` (SGLang writes no `failed`).
    assert_eq!(value(r, "failed", "value"), (0.0, None));
    assert_eq!(
        r.cell.key(),
        "max_concurrency=100;request_rate=inf;input_len=1024;output_len=128;dataset=random"
    );

    let c = &r.configuration;
    assert_eq!(c.engine.name.as_deref(), Some("sglang"));
    assert_eq!(c.engine.version.as_deref(), Some("0.5.8.post1"));
    assert_eq!(c.model.name.as_deref(), Some("/workspace/gpt-oss-120b"));
    assert_eq!(
        c.model.tokenizer.as_deref(),
        Some("/workspace/gpt-oss-120b")
    );
    assert_eq!(c.model.revision, None);
    assert_eq!(c.parallelism.tensor_parallel_size, Some(4));
    assert_eq!(c.parallelism.data_parallel_size, Some(2));
    assert_eq!(c.parallelism.pipeline_parallel_size, Some(1));
    assert_eq!(c.parallelism.expert_parallel_size, Some(1));
    assert_eq!(c.quantization.weights, None, "`quantization: null`");
    assert_eq!(c.quantization.kv_cache_dtype.as_deref(), Some("auto"));
    assert_eq!(c.benchmark.backend.as_deref(), Some("sglang"));
    assert_eq!(r.facts["server_info"]["tp_size"], 4);
    assert_eq!(r.facts["concurrency"], 78.71725020915076);
    assert!(!r.facts.contains_key("ttfts") && !r.facts.contains_key("generated_texts"));
    // p99 from 100 requests has one sample beyond it; from tpot's 99 it has not.
    let warnings: Vec<_> = r
        .warnings
        .iter()
        .map(|w| (w.code.as_str(), w.message.as_str()))
        .collect();
    assert_eq!(
        warnings,
        [(
            "small_sample_tail",
            "tpot p99 comes from only 99 samples: fewer than one sample lies beyond it."
        )]
    );

    let s = r.samples.as_ref().unwrap();
    assert_eq!(s.len(), 100);
    assert!(s.success.iter().all(|ok| *ok));
    assert_eq!(s.duration_s, Some(7.048985253088176));
    assert_eq!(
        s.ttft_ms.as_ref().unwrap()[0],
        Some(2.638916974887252 * 1000.0)
    );
    assert_eq!(s.input_tokens.as_ref().unwrap()[..2], [Some(38), Some(236)]);
    assert_eq!(s.output_tokens.as_ref().unwrap()[..2], [Some(38), Some(58)]);
    assert_eq!(
        s.itl_ms.as_ref().unwrap()[0][0],
        2.8882675957866013 * 1000.0
    );
    assert_eq!(s.e2el_ms, None, "SGLang writes no per-request latency");
    assert_eq!(s.tpot_ms, None);
}

/// SGLang computes `np.percentile(ttfts_in_s, p) * 1000` (seconds first, then ms), so the
/// check recomputes over seconds and multiplies; it then also compares the samples stored in
/// ms. Percentiles are compared exactly; mean and std within 1e-9 relative (summation order).
#[test]
fn percentiles_recomputed_from_samples_equal_the_tools_summary() {
    for path in [MOCK_C4, BENCHMAXXING] {
        let text = read(path);
        let raw: serde_json::Value =
            benchtrail_core::lenient_json::parse_values(&text).unwrap()[0].clone();
        let (_, results) = parse_file(None, &text, 0).unwrap();
        let r = &results[0];
        let s = r.samples.as_ref().unwrap();
        let ttft_s: Vec<f64> = raw["ttfts"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&s.success)
            .filter(|(_, ok)| **ok)
            .map(|(v, _)| v.as_f64().unwrap())
            .collect();
        let itl_s: Vec<f64> = raw["itls"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&s.success)
            .filter(|(_, ok)| **ok)
            .flat_map(|(v, _)| v.as_array().unwrap().iter().map(|g| g.as_f64().unwrap()))
            .collect();
        for (name, xs) in [("ttft", &ttft_s), ("itl", &itl_s)] {
            for stat in r.metrics.iter().filter(|m| m.name == name) {
                let ours = match &stat.stat {
                    Stat::Percentile(_) => {
                        let p = stat.stat.percentile().unwrap();
                        let v = stats::percentile(xs, p).unwrap() * 1000.0;
                        assert_eq!(v, stat.value, "{path}: {name} {}", stat.stat);
                        v
                    }
                    Stat::Mean => stats::mean(xs).unwrap() * 1000.0,
                    Stat::Std => stats::population_std(xs).unwrap() * 1000.0,
                    other => panic!("unexpected {other}"),
                };
                assert!(
                    ((ours - stat.value) / stat.value).abs() < 1e-9,
                    "{path}: {name} {}: {ours} vs {}",
                    stat.stat,
                    stat.value
                );
                assert_eq!(stat.n, Some(xs.len() as u64));
            }
        }
        // The samples in ms give the same percentiles within 1e-9 relative (x·1000 before
        // or after interpolation differs in the last bits).
        let ttft_ms: Vec<f64> = s
            .ttft_ms
            .as_ref()
            .unwrap()
            .iter()
            .flatten()
            .copied()
            .collect();
        let p99 = stats::percentile(&ttft_ms, 99.0).unwrap();
        let tool = value(r, "ttft", "p99").0;
        assert!(
            ((p99 - tool) / tool).abs() < 1e-9,
            "{path}: {p99} vs {tool}"
        );
    }
}

#[test]
fn mock_run_keys_and_samples() {
    let (_, results) = parse_file(None, &read(MOCK_C4), 0).unwrap();
    let r = &results[0];
    assert_eq!(value(r, "ttft", "p90"), (48.476516400182845, Some(60)));
    assert_eq!(value(r, "itl", "p99"), (12.477490989997472, Some(7620)));
    assert_eq!(value(r, "tpot", "p50"), (10.359713897637304, Some(60)));
    assert_eq!(value(r, "e2el", "p95"), (1413.3211519501174, Some(60)));
    assert_eq!(value(r, "max_concurrent_requests", "value"), (8.0, None));
    assert_eq!(
        r.cell.key(),
        "max_concurrency=4;request_rate=inf;input_len=512;output_len=128;dataset=random-ids"
    );
    assert_eq!(r.configuration.benchmark.backend.as_deref(), Some("vllm"));
    assert_eq!(r.configuration.model.name, None, "server_info is null");
    let small: Vec<_> = r
        .warnings
        .iter()
        .map(|w| (w.code.as_str(), w.message.as_str()))
        .collect();
    assert_eq!(
        small,
        [
            (
                "small_sample_tail",
                "ttft p99 comes from only 60 samples: fewer than one sample lies beyond it."
            ),
            (
                "small_sample_tail",
                "tpot p99 comes from only 60 samples: fewer than one sample lies beyond it."
            ),
            (
                "small_sample_tail",
                "e2el p99 comes from only 60 samples: fewer than one sample lies beyond it."
            ),
        ]
    );
    let s = r.samples.as_ref().unwrap();
    assert_eq!(s.len(), 60);
    assert_eq!(s.input_tokens.as_ref().unwrap()[0], Some(512));
    assert_eq!(s.output_tokens.as_ref().unwrap()[0], Some(128));
}

#[test]
fn failed_requests_are_counted_from_errors() {
    let text = r#"{"backend": "sglang", "request_rate": 2.5, "max_concurrency": null,
        "duration": 2.0, "completed": 1, "mean_e2e_latency_ms": 12.0, "median_e2e_latency_ms": 12.0,
        "mean_ttft_ms": 3.0, "p99_ttft_ms": 3.0, "max_itl_ms": 2.0,
        "input_lens": [5, 6], "output_lens": [3, 0], "ttfts": [0.003, 0.0],
        "itls": [[0.002, 0.001], []], "generated_texts": ["abc", ""], "errors": ["", "boom"]}"#;
    let (_, results) = parse_file(None, text, 0).unwrap();
    let r = &results[0];
    assert_eq!(value(r, "failed", "value"), (1.0, None));
    assert_eq!(value(r, "itl", "max"), (2.0, Some(2)));
    assert_eq!(r.cell.load.request_rate, Some(RequestRate::PerSecond(2.5)));
    let s = r.samples.as_ref().unwrap();
    assert_eq!(s.success, [true, false]);
    assert_eq!(s.ttft_ms.as_ref().unwrap()[1], None);
    assert_eq!(s.output_tokens.as_ref().unwrap()[..], [Some(3), None]);
    assert_eq!(s.input_tokens.as_ref().unwrap()[..], [Some(5), Some(6)]);
    let codes: Vec<_> = r.warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(codes, ["small_sample_tail", "failed_requests"]);
}

#[test]
fn nothing_completed_stores_no_placeholder_nan() {
    let text = r#"{"backend": "sglang", "request_rate": Infinity, "duration": 1.0, "completed": 0,
        "mean_e2e_latency_ms": NaN, "median_e2e_latency_ms": NaN, "mean_ttft_ms": 0.0}"#;
    let (_, results) = parse_file(None, text, 0).unwrap();
    let r = &results[0];
    assert_eq!(stored(r), ["completed value", "duration value"]);
    let codes: Vec<_> = r.warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(codes, ["nothing_completed"]);
}

#[test]
fn wrong_types_are_field_errors_with_pointers() {
    let text = read(MOCK_C4);
    let bad = text.replacen("\"completed\": 60", "\"completed\": \"sixty\"", 1);
    assert_ne!(bad, text);
    assert_eq!(
        parse_file(None, &bad, 0).unwrap_err().to_string(),
        "record 0 (line 1): field `/completed`: expected a number, found \"sixty\""
    );
    let bad = text.replacen("\"ttfts\": [", "\"ttfts\": [\"x\", ", 1);
    assert_eq!(
        parse_file(None, &bad, 0).unwrap_err().to_string(),
        "record 0 (line 1): field `/errors`: has 60 entries but ttfts has 61"
    );
}

#[test]
fn detection_is_by_content_whatever_the_name() {
    for path in [DATACRUNCH, BENCHMAXXING, MOCK_C4] {
        // parse_file sees no name at all, as if the file were called `result.json`.
        assert_eq!(parse_file(None, &read(path), 0).unwrap().0, FORMAT);
    }
}

#[test]
fn never_panics_on_random_truncated_or_mutated_input() {
    let small = read(DATACRUNCH);
    Subject::alone(&small, Syntax::Json, &[Some(FORMAT), None]).random_bytes(1, 300);
    let s = Subject::alone(&small, Syntax::Json, &[None]);
    s.truncations(2, EVERY_LENGTH);
    s.byte_mutations(3, 400);
    s.mutations(4, 400);
    // The detailed file is large: fewer cases, each read one way.
    let detailed = read(MOCK_C4);
    let s = Subject::alone(&detailed, Syntax::Json, &[None]);
    s.truncations(5, 150);
    s.mutations(5, 150);
    Subject::alone(&detailed, Syntax::Json, &[Some(FORMAT)]).byte_mutations(6, 60);
}
