//! The vLLM adapter against real files written by `vllm bench serve` and
//! `benchmarks/benchmark_serving.py` (sources: testdata/README.md and examples/README.md).

use crate::common;

use common::{read, value};

use crate::mutate;
use mutate::{Subject, Syntax, EVERY_LENGTH};

use benchtrail_core::adapters::{parse_file, AdapterError, Content};
use benchtrail_core::{stats, BenchResult, RequestRate, Stat, Unit};

const FORMAT: &str = "vllm-bench-serve";

fn has(r: &BenchResult, name: &str, stat: &str) -> bool {
    let stat: Stat = stat.parse().unwrap();
    r.metrics.iter().any(|m| m.name == name && m.stat == stat)
}

#[test]
fn detailed_vllm_0_33_file_keeps_every_value_exactly() {
    let (format, results) = parse_file(
        None,
        &read("examples/history/baseline_completions_c1_isl512_osl128.json"),
        0,
    )
    .unwrap();
    assert_eq!(format, "vllm-bench-serve");
    assert_eq!(results.len(), 1);
    let r = &results[0];
    assert_eq!(value(r, "ttft", "p99"), (38.17072886003415, Some(20)));
    assert_eq!(value(r, "ttft", "mean"), (34.59466175000898, Some(20)));
    assert_eq!(value(r, "ttft", "p50"), (34.71045399999184, Some(20)));
    assert_eq!(value(r, "ttft", "std"), (2.040383986616737, Some(20)));
    // tpot: 20 requests of 128 output tokens; itl: 127 gaps each.
    assert_eq!(value(r, "tpot", "mean"), (9.958435695669532, Some(20)));
    assert_eq!(value(r, "itl", "p99"), (13.682241069966496, Some(2540)));
    assert_eq!(value(r, "itl", "p50"), (10.361107499988975, Some(2540)));
    assert_eq!(value(r, "e2el", "p95"), (1353.22352520011, Some(20)));
    assert_eq!(
        value(r, "request_throughput", "value"),
        (0.7693989756787135, None)
    );
    assert_eq!(
        value(r, "output_throughput", "value"),
        (98.48306888687533, None)
    );
    assert_eq!(
        value(r, "total_token_throughput", "value"),
        (492.4922843319445, None)
    );
    assert_eq!(value(r, "duration", "value"), (25.99431586500009, None));
    assert_eq!(value(r, "completed", "value"), (20.0, None));
    assert_eq!(value(r, "failed", "value"), (0.0, None));
    assert_eq!(value(r, "max_concurrent_requests", "value"), (2.0, None));
    assert_eq!(value(r, "max_output_tokens_per_s", "value"), (102.0, None));
    // `request_goodput` is null without --goodput: not computable, so not stored (never 0).
    assert!(!has(r, "request_goodput", "value"));
    // median_* and p50_* are one statistic.
    assert_eq!(
        r.metrics
            .iter()
            .filter(|m| m.name == "ttft" && m.stat.to_string() == "p50")
            .count(),
        1
    );
    assert!(r
        .metrics
        .iter()
        .all(|m| m.unit == benchtrail_core::metric::lookup(&m.name).unwrap().unit));
    assert_eq!(
        r.metrics
            .iter()
            .find(|m| m.name == "duration")
            .unwrap()
            .unit,
        Unit::S
    );

    assert_eq!(r.cell.load.max_concurrency, Some(1));
    assert_eq!(r.cell.load.request_rate, Some(RequestRate::Infinite));
    assert_eq!(r.cell.load.burstiness, None);
    assert_eq!(r.cell.num_prompts, Some(20));
    assert_eq!(
        r.cell.key(),
        "max_concurrency=1;request_rate=inf;num_prompts=20"
    );
    let c = &r.configuration;
    assert_eq!(c.model.name.as_deref(), Some("mock-llm"));
    assert_eq!(c.model.tokenizer.as_deref(), Some("/models/mock-tokenizer"));
    assert_eq!(c.benchmark.name.as_deref(), Some("vllm-bench-serve"));
    assert_eq!(c.benchmark.backend.as_deref(), Some("openai"));
    assert_eq!(
        c.metadata.get("server_version").map(String::as_str),
        Some("baseline")
    );
    assert_eq!(c.metadata.len(), 1);
    assert_eq!(r.facts["date"], "20261130-035417");
    assert_eq!(r.facts["label"], "mock-baseline");
    assert_eq!(r.facts["rtfx"], 0.0);
    // p99 from 20 requests is a tail guess; p95 from 20 is not.
    let small: Vec<_> = r
        .warnings
        .iter()
        .filter(|w| w.code == "small_sample_tail")
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(
        small,
        vec![
            "ttft p99 comes from only 20 samples: fewer than one sample lies beyond it.",
            "tpot p99 comes from only 20 samples: fewer than one sample lies beyond it.",
            "e2el p99 comes from only 20 samples: fewer than one sample lies beyond it.",
        ]
    );
}

#[test]
fn percentiles_from_per_request_arrays_equal_the_tools_summary() {
    // vLLM computes np.percentile over seconds and multiplies by 1000; so does this check.
    let text = read("examples/history/baseline_completions_c4_isl512_osl128.json");
    let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ttfts: Vec<f64> = raw["ttfts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    for p in [50.0, 90.0, 95.0, 99.0] {
        let ours = stats::percentile(&ttfts, p).unwrap() * 1000.0;
        let key = format!("p{}_ttft_ms", p as i64);
        assert_eq!(ours, raw[&key].as_f64().unwrap(), "{key}");
    }
    let mean = stats::mean(&ttfts).unwrap() * 1000.0;
    assert!((mean - raw["mean_ttft_ms"].as_f64().unwrap()).abs() < 1e-9);
    let std = stats::population_std(&ttfts).unwrap() * 1000.0;
    assert!((std - raw["std_ttft_ms"].as_f64().unwrap()).abs() < 1e-9);
}

#[test]
fn goodput_file_keeps_goodput_including_zero() {
    let (_, results) = parse_file(
        None,
        &read("examples/history/goodput_baseline_s11_c4.json"),
        0,
    )
    .unwrap();
    assert_eq!(
        value(&results[0], "request_goodput", "value"),
        (2.9180366644138527, None)
    );
    // The candidate met no SLO: a measured 0.0, stored as such.
    let (_, results) = parse_file(
        None,
        &read("examples/history/goodput_candidate_s21_c4.json"),
        0,
    )
    .unwrap();
    assert_eq!(value(&results[0], "request_goodput", "value"), (0.0, None));
    assert_eq!(
        value(&results[0], "output_throughput", "value"),
        (501.4190244573485, None)
    );
    assert_eq!(value(&results[0], "itl", "mean").1, Some(7620));
}

#[test]
fn v0_8_append_result_with_colon_goodput_and_metadata() {
    let (_, results) = parse_file(
        None,
        &read(
            "testdata/vllm/nerdalert-benchmark_serving-v0.8-append-result-llama31-8b-2025-04.jsonl",
        ),
        3,
    )
    .unwrap();
    assert_eq!(results.len(), 12);
    let rates: Vec<_> = results
        .iter()
        .map(|r| r.cell.load.request_rate.unwrap())
        .collect();
    assert_eq!(rates[0], RequestRate::PerSecond(1.0));
    assert_eq!(rates[5], RequestRate::Infinite);
    assert_eq!(results[0].cell.load.burstiness, Some(1.0));
    assert_eq!(results[5].cell.load.burstiness, None);
    assert_eq!(
        value(&results[0], "ttft", "p99"),
        (54.841249948367484, Some(120))
    );
    assert_eq!(
        value(&results[11], "ttft", "p99"),
        (34329.968956713565, Some(1015))
    );
    // "request_goodput:" is null: nothing stored, and no `failed` key in this version.
    assert!(!has(&results[0], "request_goodput", "value"));
    assert!(!has(&results[0], "failed", "value"));
    assert_eq!(results[0].configuration.metadata["framework"], "vllm");
    assert_eq!(results[6].configuration.metadata["framework"], "sgl");
    // Every `--metadata` key is a per-run fact too, not only `date`.
    assert_eq!(results[0].facts["framework"], "vllm");
    assert_eq!(results[6].facts["framework"], "sgl");
    assert_eq!(results[0].facts["date"], "20250414-165148");
    // `framework` names the engine: vLLM's and SGLang's results are different series, at
    // every rate, without the project declaring a key field.
    for (i, r) in results.iter().enumerate() {
        let engine = if i < 6 { "vllm" } else { "sglang" };
        assert_eq!(r.configuration.engine.name.as_deref(), Some(engine), "{i}");
        assert_eq!(r.configuration.benchmark.backend.as_deref(), Some("vllm"));
    }
    for i in 0..6 {
        let (v, s) = (&results[i], &results[i + 6]);
        assert_eq!(v.cell.key(), s.cell.key(), "the same rates");
        assert_ne!(
            v.configuration.series_key(&[]),
            s.configuration.series_key(&[]),
            "{i}"
        );
        assert_eq!(s.configuration.series_key(&[])["engine.name"], "sglang");
    }
    assert_eq!(
        results[0].configuration.model.name.as_deref(),
        Some("meta-llama/Llama-3.1-8B-Instruct")
    );
    let source = results[7].source.as_ref().unwrap();
    assert_eq!(
        (source.format.as_str(), source.file, source.record),
        ("vllm-bench-serve", 3, 7)
    );
    // No per-request arrays: tpot and itl sample counts are unknown, not guessed.
    assert_eq!(value(&results[0], "tpot", "p99").1, None);
    assert_eq!(value(&results[0], "itl", "p99").1, None);
}

#[test]
fn appended_file_without_trailing_newline_and_chosen_percentiles() {
    let (_, results) = parse_file(
        Some("vllm-bench-serve"),
        &read("testdata/vllm/rgshaw-benchmark_serving-2025-08-append-p90-p95-p99-e2el-llama33-70b-fp8-tp4.jsonl"),
        0,
    )
    .unwrap();
    assert_eq!(results.len(), 4);
    let cs: Vec<_> = results
        .iter()
        .map(|r| r.cell.load.max_concurrency.unwrap())
        .collect();
    assert_eq!(cs, vec![10, 30, 50, 70]);
    assert_eq!(
        value(&results[3], "e2el", "p95"),
        (5278.038499224931, Some(1400))
    );
    assert_eq!(
        value(&results[3], "e2el", "p90"),
        (5265.822805464268, Some(1400))
    );
    assert_eq!(
        value(&results[3], "e2el", "p99"),
        (7446.2587250210345, Some(1400))
    );
}

#[test]
fn vllm_bench_serve_2026_single_object() {
    let (_, results) = parse_file(
        None,
        &read("testdata/vllm/llm-benchmaxxing-vllm-bench-serve-2026-01-glm47-fp8-h100-tp8.json"),
        0,
    )
    .unwrap();
    let r = &results[0];
    assert_eq!(value(r, "ttft", "p99"), (5492.192458147692, Some(100)));
    assert_eq!(
        value(r, "output_throughput", "value"),
        (1203.9244930914872, None)
    );
    assert_eq!(value(r, "max_concurrent_requests", "value"), (100.0, None));
    assert_eq!(
        r.cell.key(),
        "max_concurrency=100;request_rate=inf;num_prompts=100"
    );
    assert_eq!(
        r.configuration.model.name.as_deref(),
        Some("/workspace/glm47-fp8")
    );
    assert!(!r.facts.contains_key("label"), "a null label is not a fact");
}

#[test]
fn python_literals_are_accepted() {
    let text = r#"{"date": "x", "backend": "vllm", "model_id": "m", "tokenizer_id": "m", "num_prompts": 2,
        "request_rate": Infinity, "burstiness": 1.0, "max_concurrency": null, "duration": 1.0,
        "completed": 2, "request_throughput": 2.0, "output_throughput": NaN,
        "mean_ttft_ms": 5.0, "median_ttft_ms": 5.0, "std_ttft_ms": 0.0, "p99_ttft_ms": 6.0}"#;
    let (_, results) = parse_file(None, text, 0).unwrap();
    let r = &results[0];
    assert_eq!(r.cell.load.request_rate, Some(RequestRate::Infinite));
    assert!(!has(r, "output_throughput", "value"));
    assert_eq!(
        r.warnings
            .iter()
            .find(|w| w.code == "non_finite_value")
            .unwrap()
            .message,
        "`output_throughput` is NaN; not stored."
    );
}

#[test]
fn nothing_completed_stores_no_placeholder_latencies() {
    let text = r#"{"backend": "vllm", "model_id": "m", "num_prompts": 5, "request_rate": "inf",
        "duration": 1.0, "completed": 0, "failed": 5, "request_throughput": 0.0,
        "mean_ttft_ms": 0.0, "median_ttft_ms": 0.0, "std_ttft_ms": 0.0, "p99_ttft_ms": 0.0}"#;
    let (_, results) = parse_file(None, text, 0).unwrap();
    let r = &results[0];
    assert!(!has(r, "ttft", "mean"));
    assert_eq!(value(r, "failed", "value"), (5.0, None));
    let codes: Vec<_> = r.warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(codes, vec!["nothing_completed", "failed_requests"]);
}

#[test]
fn truncated_file_is_a_syntax_error_with_its_line() {
    let text =
        read("testdata/vllm/rgshaw-benchmark_serving-2025-08-append-p90-p95-p99-e2el-llama33-70b-fp8-tp4.jsonl");
    let cut = &text[..text.len() - 40];
    match parse_file(None, cut, 0).unwrap_err() {
        AdapterError::Syntax(e) => assert_eq!(e.line, 4),
        other => panic!("{other:?}"),
    }
}

#[test]
fn wrong_field_type_names_record_line_and_field() {
    let text =
        read("testdata/vllm/rgshaw-benchmark_serving-2025-08-append-p90-p95-p99-e2el-llama33-70b-fp8-tp4.jsonl");
    let bad = text.replacen("\"completed\": 600", "\"completed\": \"six hundred\"", 1);
    assert_ne!(bad, text);
    let err = parse_file(None, &bad, 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "record 1 (line 2): field `/completed`: expected a number, found \"six hundred\""
    );
}

/// Found by the structural mutations below: a count of 1e300 was saturated to `u64::MAX`,
/// and the `failed_requests` warning's `failed + completed` then overflowed (a panic in
/// debug builds, a wrong total in release).
#[test]
fn huge_counts_are_field_errors_and_large_ones_do_not_overflow() {
    let small = read(SMALL);
    for (count, shown) in [
        ("1e300", "1e+300"),
        ("18446744073709551616", "1.8446744073709552e+19"),
    ] {
        for key in ["failed", "completed", "max_concurrency", "num_prompts"] {
            let pattern = match key {
                "failed" => "\"failed\": 0",
                _ => &format!("\"{key}\": 100"),
            };
            let bad = small.replacen(pattern, &format!("\"{key}\": {count}"), 1);
            assert_ne!(bad, small, "{key}");
            for format in BOTH {
                assert_eq!(
                    parse_file(*format, &bad, 0).unwrap_err().to_string(),
                    format!(
                        "record 0 (line 1): field `/{key}`: expected a whole count, found {shown}"
                    )
                );
            }
        }
    }
    // Each count fits a u64, their sum does not.
    let big = small
        .replacen("\"failed\": 0", "\"failed\": 10000000000000000000", 1)
        .replacen(
            "\"completed\": 100",
            "\"completed\": 10000000000000000000",
            1,
        );
    let (_, results) = parse_file(None, &big, 0).unwrap();
    let warning = results[0]
        .warnings
        .iter()
        .find(|w| w.code == "failed_requests")
        .unwrap();
    assert_eq!(
        warning.message,
        "10000000000000000000 of 20000000000000000000 requests failed."
    );
}

/// A `--save-result` file without `--save-detailed` (1 KB): cheap enough to read every way.
const SMALL: &str =
    "testdata/vllm/llm-benchmaxxing-vllm-bench-serve-2026-01-glm47-fp8-h100-tp8.json";
/// `--append-result`: four records, no trailing newline.
const APPENDED: &str =
    "testdata/vllm/rgshaw-benchmark_serving-2025-08-append-p90-p95-p99-e2el-llama33-70b-fp8-tp4.jsonl";
/// `--save-detailed` (78 KB: 20 requests' arrays), the smallest detailed file.
const DETAILED: &str = "examples/history/baseline_completions_c1_isl512_osl128.json";
/// Every input is read detected and named.
const BOTH: &[Option<&str>] = &[None, Some(FORMAT)];

#[test]
fn never_panics_on_random_input() {
    Subject::alone(&read(SMALL), Syntax::Json, BOTH).random_bytes(31, 300);
}

#[test]
fn never_panics_on_a_truncated_or_mutated_small_file() {
    let small = read(SMALL);
    let s = Subject::alone(&small, Syntax::Json, BOTH);
    s.truncations(32, EVERY_LENGTH);
    s.byte_mutations(33, 400);
    s.mutations(34, 400);
    // The same file in an upload, through read_files (detected, then named).
    Subject::in_upload(&[("run/result.json", FORMAT, small)], 0, Syntax::Json).all_kinds(35);
}

#[test]
fn never_panics_on_a_truncated_or_mutated_appended_file() {
    let s = Subject::alone(&read(APPENDED), Syntax::Json, BOTH);
    s.truncations(36, 400);
    s.byte_mutations(37, 300);
    s.mutations(38, 300);
}

#[test]
fn never_panics_on_a_truncated_or_mutated_detailed_file() {
    // 78 KB a case, read twice: few cases (the cut file below has many).
    let s = Subject::alone(&read(DETAILED), Syntax::Json, BOTH);
    s.truncations(39, 80);
    s.byte_mutations(40, 50);
    s.mutations(41, 60);
}

/// The detailed file with its per-request arrays cut to the first 3 requests, each with its
/// first 4 inter-token gaps (`completed` = 3): its structural mutations hit the top-level keys
/// and whole arrays far more often than the 2,540 gaps of the full file do.
fn detailed_cut_to_3_requests() -> String {
    let mut v: serde_json::Value = serde_json::from_str(&read(DETAILED)).unwrap();
    let obj = v.as_object_mut().unwrap();
    for (_, x) in obj.iter_mut() {
        if let Some(list) = x.as_array_mut() {
            list.truncate(3);
            for gaps in list.iter_mut().filter_map(|g| g.as_array_mut()) {
                gaps.truncate(4);
            }
        }
    }
    obj.insert("completed".into(), 3.into());
    v.to_string()
}

#[test]
fn never_panics_on_a_truncated_or_mutated_cut_detailed_file() {
    let cut = detailed_cut_to_3_requests();
    let (_, results) = parse_file(Some(FORMAT), &cut, 0).unwrap();
    assert_eq!(value(&results[0], "itl", "p99").1, Some(12));
    let s = Subject::alone(&cut, Syntax::Json, BOTH);
    s.truncations(42, 300);
    s.byte_mutations(43, 300);
    s.mutations(44, 400);
}

/// The per-request arrays are read from their text straight into numbers
/// (`benchtrail_core::deferred_arrays`) unless the file has a bare `NaN` or `Infinity`
/// somewhere, when the whole file is read as a tree first: both readings give the same
/// results, samples included.
#[test]
fn per_request_arrays_read_from_their_text_equal_the_tree_reading() {
    let text = read(DETAILED);
    let Content::Json(records) = Content::read(&text) else {
        panic!("the detailed file is JSON")
    };
    assert!(records.arrays(0).get("itls").is_some(), "itls kept as text");
    assert!(records[0].get("itls").is_none());
    let (_, deferred) = parse_file(None, &text, 0).unwrap();

    // Any `NaN` in the text turns the deferral off; a string holding it changes nothing else.
    let whole_text = text.replacen('{', "{\"note\": \"NaN\", ", 1);
    let Content::Json(records) = Content::read(&whole_text) else {
        panic!("still JSON")
    };
    assert!(records.arrays(0).is_empty());
    let (_, mut whole) = parse_file(None, &whole_text, 0).unwrap();
    // A top-level string is a `--metadata` pair: a fact and configuration metadata.
    assert_eq!(whole[0].facts.remove("note"), Some("NaN".into()));
    assert_eq!(
        whole[0].configuration.metadata.remove("note").as_deref(),
        Some("NaN")
    );
    assert_eq!(deferred, whole);
    let samples = deferred[0].samples.as_ref().unwrap();
    assert_eq!(samples.itl_ms.as_ref().unwrap().len(), 20);
    assert_eq!(samples.itl_ms.as_ref().unwrap()[0].len(), 127);
}

/// A per-request array that does not hold what it should is refused with the element at
/// fault, whether it was read from its text or from the tree.
#[test]
fn a_wrong_per_request_element_is_named_in_both_readings() {
    let cut: serde_json::Value = serde_json::from_str(&detailed_cut_to_3_requests()).unwrap();
    let cases: [(&str, serde_json::Value, &str); 7] = [
        (
            "/itls/1/2",
            "x".into(),
            "field `/itls/1/2`: expected seconds",
        ),
        (
            "/itls/2",
            5.into(),
            "field `/itls/2`: expected a list of seconds",
        ),
        (
            "/itls",
            serde_json::json!({}),
            "field `/itls`: expected a list of lists",
        ),
        (
            "/output_lens/0",
            1.5.into(),
            "field `/output_lens/0`: expected a token count",
        ),
        (
            "/input_lens/1",
            (-3).into(),
            "field `/input_lens/1`: expected a token count",
        ),
        (
            "/ttfts/2",
            serde_json::Value::Null,
            "field `/ttfts/2`: expected seconds",
        ),
        (
            "/latencies",
            "fast".into(),
            "field `/latencies`: expected a list of seconds",
        ),
    ];
    for (at, wrong, expected) in cases {
        let mut bad = cut.clone();
        *bad.pointer_mut(at).unwrap() = wrong;
        let text = bad.to_string();
        let deferred = parse_file(None, &text, 0).unwrap_err().to_string();
        assert_eq!(deferred, format!("record 0 (line 1): {expected}"), "{at}");
        let whole_text = text.replacen('{', "{\"note\": \"NaN\", ", 1);
        let whole = parse_file(None, &whole_text, 0).unwrap_err().to_string();
        assert_eq!(whole, deferred, "{at}");
    }
}

/// A fault inside a per-request array that is kept as text (a number out of range, a lone
/// surrogate, nesting past serde_json's limit) makes the file not JSON, at the line and column
/// reading the whole file as a tree gives, whether its adapter reads that array or not (found
/// by a new-user check: such files were stored, or refused with a position inside the array).
#[test]
fn a_fault_inside_a_per_request_array_is_a_syntax_error_at_its_place() {
    let cut: serde_json::Value = serde_json::from_str(&detailed_cut_to_3_requests()).unwrap();
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let cases = [
        ("/start_times/0", "1e400"),
        ("/generated_texts/0", "\"\\ud800\""),
        ("/ttfts/2", "1e400"),
        ("/itls", deep.as_str()),
    ];
    for (at, token) in cases {
        let mut bad = cut.clone();
        *bad.pointer_mut(at).unwrap() = "__FAULT__".into();
        let pretty = serde_json::to_string_pretty(&bad).unwrap();
        let text = pretty.replacen("\"__FAULT__\"", token, 1);
        let Content::Text { not_json, .. } = Content::read(&text) else {
            panic!("{at}: read as JSON")
        };
        let mut whole = benchtrail_core::lenient_json::parse_values(&text).unwrap_err();
        if at == "/itls" {
            // Checked alone, the array's own nesting does not count the record around it: the
            // limit is met one bracket later.
            whole.column += 1;
        }
        assert_eq!(not_json, whole, "{at}");
        assert!(not_json.line > 1, "{at}: {not_json}");
        let err = parse_file(None, &text, 0).unwrap_err().to_string();
        assert_eq!(err, format!("not valid JSON: {not_json}"), "{at}");
    }
}
