//! `benchtrail compare OLD NEW` through the built binary, no server: the real goodput files of
//! examples/history (vLLM `--save-detailed` against the mock server whose candidate trades a
//! slower first token for throughput), as one pinned commit with three repeats, as a history
//! of folders, and a single pair (effect only); exit codes 0, 1 and 2.

use crate::common;

use common::*;

const BASELINES: [&str; 3] = [
    "goodput_baseline_s11_c4.json",
    "goodput_baseline_s12_c4.json",
    "goodput_baseline_s13_c4.json",
];
const CANDIDATE: &str = "goodput_candidate_s21_c4.json";

/// How the trade-off's sentence says the candidate finishes sooner, from the files' own
/// medians (the baseline: the mean of its three runs'): it starts ΔTTFT later and ties at
/// N* = 1 + (TTFT_c − TTFT_b) / (TPOT_b − TPOT_c) output tokens, so it finishes sooner for
/// answers longer than ⌈N*⌉.
fn crossover_words() -> String {
    let median = |file: &str, key: &str| -> f64 {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(example(file)).unwrap()).unwrap();
        doc[key].as_f64().unwrap()
    };
    let mean = |key: &str| BASELINES.iter().map(|b| median(b, key)).sum::<f64>() / 3.0;
    let later = median(CANDIDATE, "median_ttft_ms") - mean("median_ttft_ms");
    let faster = mean("median_tpot_ms") - median(CANDIDATE, "median_tpot_ms");
    assert!(later > 10.0 && faster > 0.0, "{later} {faster}");
    format!(
        "starts {later:.0} ms later, finishes sooner for answers longer than {} tokens",
        (1.0 + later / faster).ceil()
    )
}

#[test]
fn three_repeats_of_one_baseline_commit_fail_the_tradeoff_with_exit_1() {
    let dir = TempDir::new("compare-repeats");
    std::fs::create_dir(dir.path().join("old")).unwrap();
    for b in BASELINES {
        std::fs::copy(example(b), dir.path().join("old").join(b)).unwrap();
    }
    std::fs::copy(example(CANDIDATE), dir.path().join(CANDIDATE)).unwrap();
    let out = benchtrail(dir.path(), &["compare", "old", CANDIDATE], &[]);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "benchtrail verdict: FAIL at commit goodput_candidate_s21_c4.json"
    );
    assert_eq!(
        lines[2],
        format!(
            "  fail trade-off in 1 of 1 cells (max_concurrency=4;request_rate=inf;num_prompts=60): \
             output throughput +33.9 % but median TTFT +122.7 % and request goodput (tool SLOs) \
             -100.0 %; median E2E latency -25.3 %: {}",
            crossover_words()
        )
    );
    assert_eq!(
        stderr(&out),
        "old: 3 run(s), 3 result(s)\ngoodput_candidate_s21_c4.json: 1 run(s), 1 result(s)\n"
    );
    // --no-fail reports the same and exits 0; JSON is the typed model.
    let out = benchtrail(
        dir.path(),
        &["compare", "old", CANDIDATE, "--no-fail", "--format", "json"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["verdict"]["verdict"], "fail");
    assert_eq!(
        doc["analysis"]["schema"],
        benchtrail_core::report::ANALYSIS_SCHEMA
    );
    assert_eq!(
        doc["analysis"]["groups"][0]["report"]["findings"][0]["kind"],
        "tradeoff"
    );
}

#[test]
fn a_history_of_folders_and_a_single_pair() {
    let dir = TempDir::new("compare-history");
    for (i, b) in BASELINES.iter().enumerate() {
        let c = dir.path().join("history").join(format!("c{}", i + 1));
        std::fs::create_dir_all(&c).unwrap();
        std::fs::copy(example(b), c.join(b)).unwrap();
    }
    std::fs::copy(example(CANDIDATE), dir.path().join(CANDIDATE)).unwrap();
    let out = benchtrail(
        dir.path(),
        &["compare", "history", CANDIDATE, "--format", "markdown"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "history/c1: 1 run(s), 1 result(s)\nhistory/c2: 1 run(s), 1 result(s)\n\
         history/c3: 1 run(s), 1 result(s)\ngoodput_candidate_s21_c4.json: 1 run(s), 1 result(s)\n"
    );
    assert!(stdout(&out).starts_with(
        "### benchtrail: ❌ **FAIL** at `goodput_candidate_s21_c4.json`\n\n\
         #### Regressions and trade-offs\n\n- ❌ trade-off in 1 of 1 cells"
    ));
    // One run against one run: described, never tested, exit 0.
    std::fs::copy(example(BASELINES[0]), dir.path().join(BASELINES[0])).unwrap();
    let out = benchtrail(dir.path(), &["compare", BASELINES[0], CANDIDATE], &[]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("benchtrail verdict: WARN at commit"),
        "{text}"
    );
    assert!(text.contains("\n  warn effect_only [max_concurrency=4;request_rate=inf;num_prompts=60]: effect only, not tested"), "{text}");
    // A path that is not there: exit 2 with the reason.
    let out = benchtrail(dir.path(), &["compare", "nowhere.json", CANDIDATE], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("error: cannot read result file `nowhere.json`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn equal_files_pass_a_broken_file_is_an_error_and_a_missing_cell_is_incomplete() {
    let dir = TempDir::new("compare-exits");
    let c1 = "baseline_completions_c1_isl512_osl128.json";
    let c4 = "baseline_completions_c4_isl512_osl128.json";
    std::fs::create_dir(dir.path().join("old")).unwrap();
    for f in [c1, c4] {
        std::fs::copy(example(f), dir.path().join("old").join(f)).unwrap();
    }
    std::fs::copy(example(c1), dir.path().join(c1)).unwrap();
    // The same file on both sides: nothing moved, exit 0.
    let out = benchtrail(dir.path(), &["compare", c1, c1], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !stdout(&out).contains("regressions and trade-offs:"),
        "{}",
        stdout(&out)
    );
    // A file that is not a result: exit 2, naming it.
    std::fs::write(dir.path().join("broken.json"), "{\"date\": \"2026-11-0").unwrap();
    let out = benchtrail(dir.path(), &["compare", c1, "broken.json"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("broken.json"), "{}", stderr(&out));
    // The candidate lacks the c4 cell the baseline has: incomplete, exit 3, and the report
    // never says "no regressions".
    let out = benchtrail(dir.path(), &["compare", "old", c1], &[]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("benchtrail verdict: INCOMPLETE — 1 cell missing at commit"),
        "{text}"
    );
    assert!(text.contains("missing cells:\n  "), "{text}");
    assert!(!text.contains("no regressions"), "{text}");
}

/// The generated AIPerf baseline and candidate at concurrency 1, 4 and 16 (`testdata/aiperf`),
/// each side one folder of three load folders.
fn aiperf_side(dir: &std::path::Path, side: &str) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/aiperf");
    for c in [1, 4, 16] {
        let from = root.join(format!("{side}_completions_c{c}_isl512_osl128"));
        let to = dir.join(side).join(format!("c{c}"));
        std::fs::create_dir_all(&to).unwrap();
        for f in ["profile_export_aiperf.json", "profile_export.jsonl"] {
            std::fs::copy(from.join(f), to.join(f)).unwrap();
        }
    }
}

#[test]
fn a_load_sweep_ends_the_report_with_capacity_at_slo() {
    let dir = TempDir::new("compare-capacity");
    aiperf_side(dir.path(), "baseline");
    aiperf_side(dir.path(), "candidate");
    std::fs::write(
        dir.path().join("settings.json"),
        r#"{"slo_profiles": [{"name": "chat", "ttft_ms": 120, "tpot_ms": 12}]}"#,
    )
    .unwrap();
    let args = [
        "compare",
        "baseline",
        "candidate",
        "--settings",
        "settings.json",
        "--no-fail",
    ];
    let out = benchtrail(dir.path(), &args, &[]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    let capacity = text
        .split_once("## Capacity at SLO\n\n")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no capacity section in\n{text}"));
    // The answer first: capacity rose, and the loads of 20 and 60 requests on each side are
    // small samples for a p99 (fewer than 100).
    let capacity = capacity
        .strip_prefix(
            "**Answer: warn: approved only with caveats (4 small samples); read the warnings \
             before approving.**\n\n",
        )
        .unwrap_or_else(|| panic!("no answer first in\n{capacity}"));
    assert!(
        capacity.starts_with(
            "Under `chat` (TTFT ≤ 120 ms, TPOT ≤ 12 ms, met by 95 % of requests), the candidate \
             completes 15,731 more requests per hour than the baseline at SLO capacity (26,478 \
             instead of 10,747 per hour, at 10 instead of 4.6 concurrent requests)."
        ),
        "{capacity}"
    );
    assert!(
        capacity.contains(
            "\n| chat | TTFT ≤ 120 ms, TPOT ≤ 12 ms | 4.6 → 10 | 10,747 → 26,478 | +15,731 (+146.4 %) | 4 |"
        ),
        "{capacity}"
    );
    // JSON carries the typed report; without a sweep it is null.
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let out = benchtrail(dir.path(), &json_args, &[]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let profile = &doc["capacity"]["sweeps"][0]["profiles"][0];
    assert_eq!(profile["profile"], "chat");
    assert_eq!(
        profile["change"]["change"]["candidate_requests_per_hour"]
            .as_f64()
            .map(f64::round),
        Some(26_478.0)
    );
    let out = benchtrail(
        dir.path(),
        &[
            "compare",
            "baseline/c4",
            "candidate/c4",
            "--format",
            "json",
            "--no-fail",
        ],
        &[],
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["capacity"], serde_json::Value::Null, "{doc}");
}

/// A KV-cache dtype change offline (the SGLang sample with `kv_cache_dtype` `auto` → `fp8_e4m3`
/// in its server info): without the candidate's quality results for every task of the
/// baseline's (lm-evaluation-harness's results file), `quantization_without_quality` and a
/// `warn` verdict, as the server rules; with them, no warning and the quality table.
#[test]
fn a_quantization_change_is_vouched_for_by_the_quality_files_of_both_sides() {
    let dir = TempDir::new("compare-quality");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let sample = std::fs::read_to_string(root.join(
        "sglang/llm-benchmaxxing-sglang-bench_serving-2026-03-output-details-server_info-gpt-oss-120b-h100.jsonl",
    ))
    .unwrap();
    assert!(sample.contains("\"kv_cache_dtype\": \"auto\""));
    std::fs::write(dir.path().join("base.jsonl"), &sample).unwrap();
    std::fs::write(
        dir.path().join("head.jsonl"),
        sample.replace(
            "\"kv_cache_dtype\": \"auto\"",
            "\"kv_cache_dtype\": \"fp8_e4m3\"",
        ),
    )
    .unwrap();
    let lm_eval = root.join("lm-eval/results_2026-11-30T10-12-44.json");
    std::fs::copy(&lm_eval, dir.path().join("lm_eval.json")).unwrap();
    std::fs::write(
        dir.path().join("gsm8k.json"),
        r#"{"quality": [{"task": "gsm8k", "metric": "exact_match,strict-match", "value": 0.7491, "samples": 1319}]}"#,
    )
    .unwrap();
    let run = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["compare", "base.jsonl", "head.jsonl", "--format", "json"];
        args.extend(extra);
        let out = benchtrail(dir.path(), &args, &[]);
        assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
        serde_json::from_str(&stdout(&out)).unwrap()
    };
    let reason_codes = |doc: &serde_json::Value| -> Vec<String> {
        doc["verdict"]["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["code"].as_str().unwrap().to_string())
            .collect()
    };
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&lm_eval).unwrap()).unwrap();
    let mut tasks: Vec<String> = fixture["results"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    tasks.sort();

    // No quality file: the rule fires, the verdict is at least warn.
    let doc = run(&[]);
    assert!(
        reason_codes(&doc).contains(&"quantization_without_quality".to_string()),
        "{doc}"
    );
    assert_ne!(doc["verdict"]["verdict"], "pass");
    let diff = serde_json::json!([{"field": "quantization.kv_cache_dtype", "baseline": "auto", "candidate": "fp8_e4m3"}]);
    assert_eq!(doc["capacity"]["quality"]["quantization"], diff, "{doc}");
    assert_eq!(
        doc["capacity"]["warnings"][0]["code"],
        "quantization_without_quality"
    );

    // The candidate evaluated on gsm8k only: every other task of the baseline's is missing.
    let doc = run(&[
        "--base-quality",
        "lm_eval.json",
        "--head-quality",
        "gsm8k.json",
    ]);
    assert!(
        reason_codes(&doc).contains(&"quantization_without_quality".to_string()),
        "{doc}"
    );
    let w = &doc["capacity"]["warnings"][0];
    let mut missing: Vec<String> = w["missing_tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    missing.sort();
    let expected: Vec<String> = tasks.iter().filter(|t| *t != "gsm8k").cloned().collect();
    assert_eq!(missing, expected, "{w}");
    let rows = doc["capacity"]["quality"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let base_gsm8k = fixture["results"]["gsm8k"]["exact_match,strict-match"]
        .as_f64()
        .unwrap();
    assert_eq!(rows[0]["baseline"].as_f64(), Some(base_gsm8k));
    assert_eq!(rows[0]["delta"].as_f64(), Some(0.7491 - base_gsm8k));
    assert_eq!(rows[0]["baseline_samples"], 1319);

    // The same evaluation on both sides: vouched for, no warning from it, every pair a row.
    let doc = run(&[
        "--base-quality",
        "lm_eval.json",
        "--head-quality",
        "lm_eval.json",
    ]);
    assert!(
        !reason_codes(&doc).contains(&"quantization_without_quality".to_string()),
        "{doc}"
    );
    assert_eq!(doc["capacity"]["quality"]["covered"], true);
    assert_eq!(doc["capacity"]["quality"]["missing"], serde_json::json!([]));
    let rows = doc["capacity"]["quality"]["rows"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["delta"] == 0.0), "{rows:?}");
    assert!(rows.len() >= tasks.len(), "{rows:?}");

    // Markdown: the quality table follows the report.
    let out = benchtrail(
        dir.path(),
        &[
            "compare",
            "base.jsonl",
            "head.jsonl",
            "--base-quality",
            "lm_eval.json",
            "--head-quality",
            "gsm8k.json",
            "--format",
            "markdown",
        ],
        &[],
    );
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "| gsm8k | exact_match,strict-match | {:.4} ± {:.4} → 0.7491 | ",
            base_gsm8k,
            fixture["results"]["gsm8k"]["exact_match_stderr,strict-match"]
                .as_f64()
                .unwrap()
        )),
        "{text}"
    );
    // An unreadable quality file: exit 2, naming the flag.
    let out = benchtrail(
        dir.path(),
        &[
            "compare",
            "base.jsonl",
            "head.jsonl",
            "--head-quality",
            "none.json",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--head-quality"), "{}", stderr(&out));
}
