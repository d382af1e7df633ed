//! `benchtrail compare OLD NEW` through the built binary, no server: the real goodput files of
//! examples/history (vLLM `--save-detailed` against the mock server whose candidate trades a
//! slower first token for throughput), as one pinned commit with three repeats, as a history
//! of folders, and a single pair (effect only); exit codes 0, 1 and 2.

mod common;

use common::*;

const BASELINES: [&str; 3] = [
    "goodput_baseline_s11_c4.json",
    "goodput_baseline_s12_c4.json",
    "goodput_baseline_s13_c4.json",
];
const CANDIDATE: &str = "goodput_candidate_s21_c4.json";

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
        "  fail trade-off in 1 of 1 cells (max_concurrency=4;request_rate=inf;num_prompts=60): \
         output throughput +33.9 % but median TTFT +122.7 % and request goodput (tool SLOs) \
         -100.0 %; median E2E latency -25.3 %: starts later, finishes sooner"
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
    assert_eq!(doc["analysis"]["schema"], 2);
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
