//! `vllm bench latency --output-json` and `vllm bench throughput --output-json`.
//!
//! No real file of either exists in the samples (shared/samples/MANIFEST.md, gaps), so these
//! inputs are built from the exact key lists that vllm/benchmarks/latency.py @00cae075 and
//! throughput.py @02028314 write (shared/notes/benchmark-tool-formats.md §1.4): small, with
//! made-up numbers, percentile keys as strings (Python int keys in JSON).

use crate::common;

use common::value;

use crate::mutate;
use mutate::{Subject, Syntax, EVERY_LENGTH};

use benchtrail_core::adapters::parse_file;

const LATENCY: &str = r#"{
    "avg_latency": 1.25,
    "std_latency": 0.05,
    "latencies": [1.2, 1.3, 1.25, 1.25],
    "percentiles": {"10": 1.215, "25": 1.2375, "50": 1.25, "75": 1.2625, "90": 1.285, "99": 1.2985}
}"#;

const THROUGHPUT: &str = r#"{"elapsed_time": 40.0, "num_requests": 1000, "total_num_tokens": 640000,
    "requests_per_second": 25.0, "tokens_per_second": 16000.0}"#;

#[test]
fn latency_is_batch_latency_in_ms_with_iterations_as_n() {
    let (format, results) = parse_file(None, LATENCY, 0).unwrap();
    assert_eq!(format, "vllm-bench-latency");
    let r = &results[0];
    let all: Vec<String> = r
        .metrics
        .iter()
        .map(|m| format!("{} {} {} {:?}", m.name, m.stat, m.value, m.n))
        .collect();
    assert_eq!(
        all,
        [
            "batch_latency mean 1250 Some(4)",
            "batch_latency p10 1215 Some(4)",
            "batch_latency p25 1237.5 Some(4)",
            "batch_latency p50 1250 Some(4)",
            "batch_latency p75 1262.5 Some(4)",
            "batch_latency p90 1285 Some(4)",
            "batch_latency p99 1298.5 Some(4)",
            "batch_latency std 50 Some(4)",
        ]
    );
    assert!(r.metrics.iter().all(|m| m.unit.as_str() == "ms"));
    assert_eq!(
        r.configuration.benchmark.name.as_deref(),
        Some("vllm-bench-latency")
    );
    assert_eq!(r.configuration.engine.name.as_deref(), Some("vllm"));
    let codes: Vec<_> = r.warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(codes, ["small_sample_tail", "small_sample_tail"]); // p90 and p99 of 4
}

#[test]
fn throughput_stores_rates_not_output_tokens_per_second() {
    let (format, results) = parse_file(None, THROUGHPUT, 0).unwrap();
    assert_eq!(format, "vllm-bench-throughput");
    let r = &results[0];
    assert_eq!(value(r, "request_throughput", "value"), (25.0, None));
    assert_eq!(value(r, "total_token_throughput", "value"), (16000.0, None));
    assert_eq!(value(r, "duration", "value"), (40.0, None));
    assert_eq!(value(r, "completed", "value"), (1000.0, None));
    assert!(!r.metrics.iter().any(|m| m.name == "output_throughput"));
    assert_eq!(r.metrics.len(), 4);
    assert_eq!(r.cell.num_prompts, Some(1000));
    assert_eq!(r.facts["total_num_tokens"], 640000);
    assert!(r.warnings.is_empty());
}

#[test]
fn wrong_types_name_the_field() {
    let bad = LATENCY.replace("[1.2, 1.3", "[\"x\", 1.3");
    assert_eq!(
        parse_file(None, &bad, 0).unwrap_err().to_string(),
        "record 0 (line 1): field `/latencies/0`: expected seconds, found \"x\""
    );
    let bad = LATENCY.replace("\"99\": 1.2985", "\"999\": 1.2985");
    assert!(parse_file(None, &bad, 0)
        .unwrap_err()
        .to_string()
        .contains("/percentiles/999"));
}

#[test]
fn never_panics_on_random_truncated_or_mutated_input() {
    for (format, text) in [
        ("vllm-bench-latency", LATENCY),
        ("vllm-bench-throughput", THROUGHPUT),
    ] {
        // Small and quick: every input is read detected and named.
        let s = Subject::alone(text, Syntax::Json, &[None, Some(format)]);
        s.random_bytes(21, 200);
        s.truncations(21, EVERY_LENGTH);
        s.byte_mutations(22, 300);
        s.mutations(23, 300);
    }
}
