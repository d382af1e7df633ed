//! The console-summary adapters (`vllm-bench-serve-console`, `sglang-bench-serving-console`)
//! against the blocks the tools printed for runs whose JSON is also in the repository
//! (sources: testdata/README.md, examples/README.md).

use crate::common;

use common::{read, value};

use crate::mutate;
use mutate::{Subject, Syntax, EVERY_LENGTH};

use benchtrail_core::adapters::parse_file;
use benchtrail_core::{BenchResult, RequestRate, Stat};

const VLLM: &str = "vllm-bench-serve-console";
const SGLANG: &str = "sglang-bench-serving-console";

/// Every metric of the console result equals the JSON result's value printed with `{:.2f}`
/// (Python and Rust both round the exact binary value), and the console has no metric the
/// JSON lacks. Returns how many were compared.
fn same_as_json_rounded(console: &BenchResult, json: &BenchResult) -> usize {
    for m in &console.metrics {
        if m.name == "itl" && m.stat == Stat::Max {
            continue; // SGLang prints `Max ITL (ms)` but does not write it to the JSON
        }
        let j = json
            .metrics
            .iter()
            .find(|j| j.name == m.name && j.stat == m.stat)
            .unwrap_or_else(|| panic!("JSON has no {} {}", m.name, m.stat));
        let rounded: f64 = format!("{:.2}", j.value).parse().unwrap();
        assert_eq!(m.value, rounded, "{} {}: JSON {}", m.name, m.stat, j.value);
        assert_eq!(m.unit, j.unit);
    }
    console.metrics.len()
}

#[test]
fn vllm_block_maps_every_line() {
    let (format, results) = parse_file(
        None,
        &read("testdata/console/vllm-0.33.0-mock-baseline-c4.txt"),
        0,
    )
    .unwrap();
    assert_eq!(format, VLLM);
    assert_eq!(results.len(), 1);
    let r = &results[0];
    assert_eq!(value(r, "completed", "value"), (60.0, None));
    assert_eq!(value(r, "failed", "value"), (0.0, None));
    assert_eq!(value(r, "duration", "value"), (20.43, None));
    assert_eq!(value(r, "total_input_tokens", "value"), (30722.0, None));
    assert_eq!(value(r, "total_output_tokens", "value"), (7680.0, None));
    assert_eq!(value(r, "request_throughput", "value"), (2.94, None));
    assert_eq!(value(r, "output_throughput", "value"), (375.89, None));
    assert_eq!(value(r, "max_output_tokens_per_s", "value"), (386.0, None));
    assert_eq!(value(r, "max_concurrent_requests", "value"), (8.0, None));
    assert_eq!(value(r, "total_token_throughput", "value"), (1879.55, None));
    // Every statistic of ttft; Median and P50 are stored once.
    assert_eq!(value(r, "ttft", "mean"), (35.56, Some(60)));
    assert_eq!(value(r, "ttft", "p50"), (35.63, Some(60)));
    assert_eq!(value(r, "ttft", "p90"), (38.58, Some(60)));
    assert_eq!(value(r, "ttft", "p95"), (38.87, Some(60)));
    assert_eq!(value(r, "ttft", "p99"), (40.09, Some(60)));
    assert_eq!(
        r.metrics
            .iter()
            .filter(|m| m.name == "ttft" && m.stat.to_string() == "p50")
            .count(),
        1
    );
    // The block does not say how many tokens or chunks: tpot and itl have no n.
    assert_eq!(value(r, "tpot", "p99"), (10.68, None));
    assert_eq!(value(r, "itl", "p99"), (11.82, None));
    assert_eq!(value(r, "e2el", "p99"), (1394.02, Some(60)));
    assert_eq!(r.metrics.len(), 10 + 4 * 5);
    // The rate line is printed only for a finite rate (this version prints `Failed
    // requests:`), and vLLM sends each prompt once: 60 + 0 prompts.
    assert_eq!(
        r.cell.key(),
        "max_concurrency=4;request_rate=inf;num_prompts=60"
    );
    // The tool, not the format: the same series as the tool's JSON.
    assert_eq!(
        r.configuration.benchmark.name.as_deref(),
        Some("vllm-bench-serve")
    );
    assert_eq!(r.configuration.benchmark.backend, None);
    assert_eq!(r.facts["precision"], 0.01);
    assert_eq!(r.facts.len(), 1, "every line is known: {:?}", r.facts);
    let codes: Vec<_> = r.warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(
        codes,
        [
            "small_sample_tail",
            "small_sample_tail",
            "rounded_console_values"
        ]
    );
}

#[test]
fn vllm_block_equals_its_json_rounded_to_two_decimals() {
    for (console, json) in [
        (
            "testdata/console/vllm-0.33.0-mock-baseline-c4.txt",
            "examples/history/baseline_completions_c4_isl512_osl128.json",
        ),
        (
            "testdata/console/vllm-0.33.0-mock-goodput_baseline_s11_c4.txt",
            "examples/history/goodput_baseline_s11_c4.json",
        ),
    ] {
        let (_, c) = parse_file(None, &read(console), 0).unwrap();
        let (_, j) = parse_file(None, &read(json), 0).unwrap();
        let compared = same_as_json_rounded(&c[0], &j[0]);
        assert!(compared >= 30, "{console}: {compared}");
        // The whole cell and the tool are the JSON's: one series.
        assert_eq!(c[0].cell, j[0].cell, "{console}");
        assert_eq!(
            c[0].cell.key(),
            "max_concurrency=4;request_rate=inf;num_prompts=60"
        );
        assert_eq!(
            c[0].configuration.benchmark.name,
            j[0].configuration.benchmark.name
        );
    }
    let (_, c) = parse_file(
        None,
        &read("testdata/console/vllm-0.33.0-mock-goodput_baseline_s11_c4.txt"),
        0,
    )
    .unwrap();
    assert_eq!(value(&c[0], "request_goodput", "value"), (2.92, None));
}

#[test]
fn sglang_block_equals_its_json_rounded_to_two_decimals() {
    let (format, c) = parse_file(
        None,
        &read("testdata/console/sglang-0.5.23-mock-baseline-c4.txt"),
        0,
    )
    .unwrap();
    assert_eq!(format, SGLANG);
    let (_, j) = parse_file(
        None,
        &read("testdata/sglang/sglang-0.5.23-mock-baseline_completions_c4_isl512_osl128.jsonl"),
        0,
    )
    .unwrap();
    let r = &c[0];
    assert_eq!(same_as_json_rounded(r, &j[0]), 9 + 5 * 4 + 1);
    assert_eq!(value(r, "e2el", "mean"), (1359.77, Some(60)));
    assert_eq!(value(r, "e2el", "p50"), (1353.59, Some(60)));
    assert_eq!(value(r, "e2el", "p90"), (1386.19, Some(60)));
    assert_eq!(value(r, "e2el", "p95"), (1413.32, Some(60)));
    assert_eq!(value(r, "e2el", "p99"), (1427.5, Some(60)));
    assert_eq!(value(r, "itl", "max"), (19.92, None));
    assert_eq!(value(r, "total_token_throughput", "value"), (1879.67, None));
    assert_eq!(value(r, "max_concurrent_requests", "value"), (8.0, None));
    // The block prints the load shape only; the JSON also states the dataset and the
    // requested lengths (the recorded command or `--cell` gives them to the block: see
    // tests/workload_identity.rs).
    assert_eq!(r.cell, {
        let mut cell = j[0].cell.clone();
        cell.load.request_rate = Some(RequestRate::Infinite);
        cell.input_len = None;
        cell.output_len = None;
        cell.dataset = None;
        cell
    });
    assert_eq!(r.cell.key(), "max_concurrency=4;request_rate=inf");
    assert_eq!(
        j[0].cell.key(),
        "max_concurrency=4;request_rate=inf;input_len=512;output_len=128;dataset=random-ids"
    );
    assert_eq!(
        r.configuration.benchmark.name.as_deref(),
        Some("sglang-bench-serving")
    );
    assert_eq!(r.configuration.benchmark.backend.as_deref(), Some("vllm"));
    // Lines without a vocabulary metric are facts, as printed.
    assert_eq!(r.facts["Input token throughput (tok/s)"], 1503.74);
    assert_eq!(r.facts["Total generated tokens (retokenized)"], 7680.0);
    assert_eq!(r.facts["Concurrency"], 3.99);
    assert_eq!(r.facts["Total input text tokens"], 30720.0);
    assert_eq!(r.facts["precision"], 0.01);
    assert!(r
        .warnings
        .iter()
        .any(|w| w.code == "rounded_console_values"));
}

#[test]
fn pasted_text_with_two_blocks_and_unknown_lines() {
    let one = read("testdata/console/vllm-0.33.0-mock-baseline-c4.txt");
    let two = read("testdata/console/vllm-0.33.0-mock-goodput_baseline_s11_c4.txt");
    let pasted = format!(
        "Before:\n```\n{one}```\nAfter:\n```\n{}```\n",
        two.replace(
            "Failed requests:",
            "Some new line (x):                       n/a\nFailed requests:"
        )
    );
    let (format, results) = parse_file(None, &pasted, 4).unwrap();
    assert_eq!(format, VLLM);
    assert_eq!(results.len(), 2);
    assert_eq!(value(&results[0], "ttft", "mean"), (35.56, Some(60)));
    assert_eq!(value(&results[1], "ttft", "mean"), (37.55, Some(60)));
    assert_eq!(results[1].facts["Some new line (x)"], "n/a");
    let records: Vec<_> = results
        .iter()
        .map(|r| r.source.as_ref().unwrap())
        .map(|s| (s.format.as_str(), s.file, s.record))
        .collect();
    assert_eq!(records, [(VLLM, 4, 0), (VLLM, 4, 1)]);
}

#[test]
fn older_sglang_labels_and_failed_vllm_requests() {
    let sglang = "============ Serving Benchmark Result ============
Backend:                                 sglang
Traffic request rate:                    2.0
Successful requests:                     996
Total throughput (tok/s):                2121.89
Mean TPOT (ms):                          -0.00
==================================================";
    let (format, r) = parse_file(None, sglang, 0).unwrap();
    assert_eq!(format, SGLANG);
    assert_eq!(
        r[0].cell.load.request_rate,
        Some(RequestRate::PerSecond(2.0))
    );
    assert_eq!(
        value(&r[0], "total_token_throughput", "value"),
        (2121.89, None)
    );
    assert_eq!(value(&r[0], "tpot", "mean"), (-0.0, None));
    let vllm = "============ Serving Benchmark Result ============
Successful requests:                     9
Failed requests:                         1
Request rate configured (RPS):           4.00
Mean TTFT (ms):                          12.00
==================================================";
    let (format, r) = parse_file(None, vllm, 0).unwrap();
    assert_eq!(format, VLLM);
    assert_eq!(
        r[0].cell.load.request_rate,
        Some(RequestRate::PerSecond(4.0))
    );
    let codes: Vec<_> = r[0].warnings.iter().map(|w| w.code.as_str()).collect();
    // Closed, but without the lines vLLM always prints (`Benchmark duration (s)`, ...).
    assert_eq!(
        codes,
        [
            "rounded_console_values",
            "failed_requests",
            "incomplete_summary"
        ]
    );
    // A header with no metric line is an error, not an empty result.
    let empty = "============ Serving Benchmark Result ============\nhello\n";
    assert_eq!(
        parse_file(None, empty, 0).unwrap_err().to_string(),
        "record 0 (line 1): the summary block holds no metric line: it is cut short \
         (no closing `=====` line)"
    );
}

#[test]
fn detection_is_by_content_whatever_the_name() {
    for (path, format) in [
        ("testdata/console/vllm-0.33.0-mock-baseline-c4.txt", VLLM),
        (
            "testdata/console/vllm-0.33.0-mock-goodput_baseline_s11_c4.txt",
            VLLM,
        ),
        (
            "testdata/console/sglang-0.5.23-mock-baseline-c4.txt",
            SGLANG,
        ),
    ] {
        assert_eq!(parse_file(None, &read(path), 0).unwrap().0, format);
    }
    let err = parse_file(None, "Mean TTFT (ms): 3.0\n", 0).unwrap_err();
    assert!(
        err.to_string().contains("vllm-bench-serve-console (no \""),
        "{err}"
    );
}

#[test]
fn never_panics_on_random_truncated_or_mutated_input() {
    // Small and quick: every input is read detected and named.
    for (path, format) in [
        (
            "testdata/console/vllm-0.33.0-mock-goodput_baseline_s11_c4.txt",
            VLLM,
        ),
        (
            "testdata/console/sglang-0.5.23-mock-baseline-c4.txt",
            SGLANG,
        ),
    ] {
        let s = Subject::alone(&read(path), Syntax::Text, &[None, Some(format)]);
        s.random_bytes(11, 200);
        s.truncations(11, EVERY_LENGTH);
        s.byte_mutations(12, 400);
        s.mutations(13, 400);
    }
}

/// The warnings of the one result of a text, by code.
fn warning<'a>(r: &'a BenchResult, code: &str) -> Option<&'a str> {
    r.warnings
        .iter()
        .find(|w| w.code == code)
        .map(|w| w.message.as_str())
}

#[test]
fn a_cut_block_is_stored_with_a_truncated_warning_naming_what_is_missing() {
    for (path, format) in [
        ("testdata/console/vllm-0.33.0-mock-baseline-c4.txt", VLLM),
        (
            "testdata/console/sglang-0.5.23-mock-baseline-c4.txt",
            SGLANG,
        ),
    ] {
        let text = read(path);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let (_, whole) = parse_file(None, &text, 0).unwrap();
        assert_eq!(warning(&whole[0], "truncated"), None, "{path}");
        assert_eq!(warning(&whole[0], "incomplete_summary"), None, "{path}");
        // Every cut from the first metric line to just before the closing line: the lines
        // kept are stored as they are, the warning names the closing line, and a metric
        // line's value is stored exactly when its line is kept.
        for n in 2..lines.len() {
            let cut = lines[..n].concat();
            let (f, rs) = match parse_file(None, &cut, 0) {
                Ok(read) => read,
                Err(e) => {
                    // SGLang's first line, `Backend:`, is no metric: nothing to store.
                    assert_eq!(
                        e.to_string(),
                        "record 0 (line 1): the summary block holds no metric line: \
                         it is cut short (no closing `=====` line)",
                        "{path} cut after {n} lines"
                    );
                    assert!(n <= 4, "{path} cut after {n} lines: {e}");
                    continue;
                }
            };
            assert_eq!(f, format, "{path} cut after {n} lines");
            let message = warning(&rs[0], "truncated")
                .unwrap_or_else(|| panic!("{path} cut after {n} lines: no warning"));
            assert!(
                message.contains("it lacks the closing `=====` line"),
                "{message}"
            );
            for m in &rs[0].metrics {
                assert!(
                    whole[0].metrics.contains(m),
                    "{path} cut after {n}: {m:?} is not the whole block's value"
                );
            }
            assert!(rs[0].metrics.len() < whole[0].metrics.len() || n == lines.len() - 1);
        }
    }
    // The trial's paste: `head -n 20` of the vLLM block, cut after the TPOT rule.
    let text = read("testdata/console/vllm-0.33.0-mock-baseline-c4.txt");
    let head: String = text.split_inclusive('\n').take(20).collect();
    let (_, rs) = parse_file(None, &head, 0).unwrap();
    assert_eq!(
        warning(&rs[0], "truncated"),
        Some(
            "The summary block is cut short, after the `Time per Output Token (excl. 1st token)` \
             section: it lacks the closing `=====` line, the lines of the `Time per Output Token \
             (excl. 1st token)` section; the lines before the cut are stored, the metrics after \
             it are missing."
        )
    );
    assert_eq!(value(&rs[0], "ttft", "p99"), (40.09, Some(60)));
    assert!(!rs[0].metrics.iter().any(|m| m.name == "tpot"));
    // SGLang cut after its TTFT section: its ITL section is named as missing.
    let text = read("testdata/console/sglang-0.5.23-mock-baseline-c4.txt");
    let at = text.find("-----Time per Output Token").unwrap();
    let (_, rs) = parse_file(None, &text[..at], 0).unwrap();
    let message = warning(&rs[0], "truncated").unwrap();
    assert!(
        message.contains("it lacks the closing `=====` line, the `Inter-token latency` section;"),
        "{message}"
    );
    // Cut inside the first lines: the always-printed lines are named.
    let at = text.find("Total input tokens").unwrap();
    let (_, rs) = parse_file(None, &text[..at], 0).unwrap();
    let message = warning(&rs[0], "truncated").unwrap();
    for missing in [
        "`Total input tokens` line",
        "`Request throughput (req/s)` line",
        "`End-to-end latency` section",
        "`Time to first token` section",
    ] {
        assert!(message.contains(missing), "{missing}: {message}");
    }
}

#[test]
fn a_last_line_cut_inside_its_value_is_not_read() {
    // `P99 TTFT (ms):  40.09` cut to `40.0`, the text ending there: that value may be wrong,
    // so the line is dropped, and said so.
    let text = read("testdata/console/vllm-0.33.0-mock-baseline-c4.txt");
    let at = text.find("40.09").unwrap() + 4;
    let (_, rs) = parse_file(None, &text[..at], 0).unwrap();
    assert!(!rs[0]
        .metrics
        .iter()
        .any(|m| m.name == "ttft" && m.stat == Stat::Percentile("99".into())));
    assert_eq!(value(&rs[0], "ttft", "p95"), (38.87, Some(60)));
    let message = warning(&rs[0], "truncated").unwrap();
    assert!(
        message.contains("the whole last line (`P99 TTFT (ms):")
            && message.contains(" 40.0`, not read: the text ends inside it)"),
        "{message}"
    );
    // The closed block without a final newline is whole.
    let (_, rs) = parse_file(None, text.trim_end(), 0).unwrap();
    assert_eq!(warning(&rs[0], "truncated"), None);
}

#[test]
fn a_closed_block_lacking_lines_says_so() {
    // Lines removed from a closed vLLM block (as when a PR quotes only some lines).
    let text = read("testdata/console/vllm-0.33.0-mock-baseline-c4.txt");
    let kept: String = text
        .split_inclusive('\n')
        .filter(|l| !l.starts_with("Total ") && !l.contains("ITL"))
        .collect();
    let (_, rs) = parse_file(None, &kept, 0).unwrap();
    assert_eq!(warning(&rs[0], "truncated"), None);
    assert_eq!(
        warning(&rs[0], "incomplete_summary"),
        Some(
            "The summary block lacks the `Total input tokens` line, the `Total generated tokens` \
             line, the lines of the `Inter-token Latency` section: lines were removed from it; \
             what it shows is stored."
        )
    );
}
