//! `report::compare` offline, rendered: the FP8 KV-cache case of the realistic generator
//! (10 baseline commits), and the real goodput files of examples/history as one baseline
//! commit with three repeats (pinned: Student's t with their own spread) or one run (effect
//! only, never tested).

use benchtrail_core::regression::realistic::{commit_runs, HistorySpec};
use benchtrail_core::regression::{FindingKind, Test};
use benchtrail_core::report::compare::{compare, CompareCommit};
use benchtrail_core::report::grouped::grouped_findings;
use benchtrail_core::report::render::{render, Format};
use benchtrail_core::report::{ReasonCode, VerdictLevel};
use benchtrail_core::settings::ProjectSettings;
use benchtrail_core::UploadDocument;
use serde_json::json;

fn repo_file(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The results of one upload of `files` (name, content).
fn run_of(
    files: &[(String, String)],
    cell: serde_json::Value,
) -> Vec<benchtrail_core::BenchResult> {
    let doc: UploadDocument = serde_json::from_value(json!({
        "run": {"commit": {"sha": "0000000"}},
        "cell": cell,
        "files": files.iter().map(|(n, c)| json!({"name": n, "content": c})).collect::<Vec<_>>(),
    }))
    .unwrap();
    doc.read().unwrap().results
}

fn fp8_commit(spec: &HistorySpec, i: usize) -> CompareCommit {
    let files: Vec<(String, String)> = commit_runs(spec, i)
        .iter()
        .map(|r| (format!("c{}.json", r.cell), r.file.to_string()))
        .collect();
    let cell =
        json!({"input_len": spec.workload.input_len, "output_len": spec.workload.output_len});
    CompareCommit {
        commit: format!("{i:040x}"),
        runs: vec![run_of(&files, cell)],
    }
}

#[test]
fn the_fp8_change_is_one_tradeoff_across_its_three_cells() {
    let spec = HistorySpec::fp8_case(3);
    let commits: Vec<CompareCommit> = (0..spec.commits).map(|i| fp8_commit(&spec, i)).collect();
    let (baseline, candidate) = commits.split_at(commits.len() - 1);
    let c = compare(baseline, &candidate[0], &ProjectSettings::default(), &[]);
    assert_eq!(c.verdict.verdict, VerdictLevel::Fail);
    let grouped = grouped_findings(&c.analysis);
    let tradeoffs: Vec<_> = grouped
        .iter()
        .filter(|g| g.kind == FindingKind::Tradeoff)
        .collect();
    assert_eq!(tradeoffs.len(), 1, "{grouped:#?}");
    assert_eq!(tradeoffs[0].cell_count, 3);
    assert_eq!(
        tradeoffs[0].summary,
        "trade-off in 3 of 3 cells (max_concurrency=1, max_concurrency=4, max_concurrency=16): \
         output throughput +3.4 … +9.3 % but median TTFT +5.6 … +9.1 %"
    );
    let text = render(&c.verdict, Some(&c.analysis), Format::Terminal);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "benchtrail verdict: FAIL at commit 000000000000");
    assert_eq!(lines[1], "regressions and trade-offs:");
    assert_eq!(lines[2], format!("  fail {}", tradeoffs[0].summary));
    assert_eq!(lines[3], "improvements:");
    assert_eq!(
        lines[4],
        "  improvement in 3 of 3 cells (max_concurrency=1, max_concurrency=4, max_concurrency=16): \
         median ITL -11.4 … -5.1 %"
    );
    assert_eq!(lines[6], format!("{}:", tradeoffs[0].summary));
    assert_eq!(
        lines[7],
        "  [max_concurrency=1] output throughput: 63.51 tok/s → 66.21 tok/s (+4.2 %; tradeoff, p = 0.0023)"
    );
    assert_eq!(lines[11], "    worse:  median TTFT +5.6 %");
    let markdown = render(&c.verdict, Some(&c.analysis), Format::Markdown);
    assert!(markdown.starts_with(&format!(
        "### benchtrail: ❌ **FAIL** at `000000000000`\n\n#### Regressions and trade-offs\n\n- ❌ {}\n\n#### Improvements\n\n",
        tradeoffs[0].summary
    )));
    assert!(markdown.contains(&format!(
        "<details><summary>{}</summary>\n\n| cell | metric | baseline | candidate | change | interval | test |",
        tradeoffs[0].summary
    )));
    assert!(markdown.contains(
        "| `max_concurrency=16` | median ITL (mean ITL -11.4 %, median ITL -11.4 %, p90 ITL -11.4 %, \
         p95 ITL -11.4 %, p99 ITL -11.3 %) | 26.45 ms | 23.43 ms | -11.4 % | 24.68 … 28.34 ms | \
         family_index, p < 0.001 |"
    ));
}

/// How a trade-off's sentence says the candidate finishes sooner, from the `vllm bench serve`
/// files' own medians (the baseline: the mean of its runs'): it starts ΔTTFT later and ties at
/// N* = 1 + (TTFT_c − TTFT_b) / (TPOT_b − TPOT_c) output tokens, so it finishes sooner for
/// answers longer than ⌈N*⌉ (validation-method.md, "A configuration that starts sooner can
/// finish later").
fn crossover_words(baseline: &[&str], candidate: &str) -> String {
    let median = |path: &str, key: &str| -> f64 {
        let doc: serde_json::Value = serde_json::from_str(&repo_file(path)).unwrap();
        doc[key].as_f64().unwrap()
    };
    let mean =
        |key: &str| baseline.iter().map(|p| median(p, key)).sum::<f64>() / baseline.len() as f64;
    let later = median(candidate, "median_ttft_ms") - mean("median_ttft_ms");
    let faster = mean("median_tpot_ms") - median(candidate, "median_tpot_ms");
    assert!(later > 10.0 && faster > 0.0, "{later} {faster}");
    let n_star = 1.0 + later / faster;
    format!(
        "starts {later:.0} ms later, finishes sooner for answers longer than {} tokens",
        n_star.ceil()
    )
}

fn goodput_commit(name: &str, paths: &[&str]) -> CompareCommit {
    CompareCommit {
        commit: name.into(),
        runs: paths
            .iter()
            .map(|p| run_of(&[(p.to_string(), repo_file(p))], json!({})))
            .collect(),
    }
}

#[test]
fn one_baseline_commit_is_a_pin_tested_with_its_repeats_or_described_with_one_run() {
    let candidate = goodput_commit(
        "candidate",
        &["examples/history/goodput_candidate_s21_c4.json"],
    );
    let three = goodput_commit(
        "baseline",
        &[
            "examples/history/goodput_baseline_s11_c4.json",
            "examples/history/goodput_baseline_s12_c4.json",
            "examples/history/goodput_baseline_s13_c4.json",
        ],
    );
    let c = compare(&[three], &candidate, &ProjectSettings::default(), &[]);
    // Three runs of the pinned commit: the candidate run against the prediction interval of a
    // new run from them; the trade-off (throughput up, TTFT and goodput worse) fails.
    assert_eq!(c.verdict.verdict, VerdictLevel::Fail);
    let tradeoff = &c.analysis.groups[0].report.findings[0];
    assert_eq!(
        (tradeoff.kind, tradeoff.test),
        (FindingKind::Tradeoff, Test::Tradeoff)
    );
    assert_eq!(
        tradeoff.summary,
        format!(
            "output throughput +33.9 % but median TTFT +122.7 % and request goodput (tool SLOs) \
             -100.0 %; median E2E latency -25.3 %: {}.",
            crossover_words(
                &[
                    "examples/history/goodput_baseline_s11_c4.json",
                    "examples/history/goodput_baseline_s12_c4.json",
                    "examples/history/goodput_baseline_s13_c4.json",
                ],
                "examples/history/goodput_candidate_s21_c4.json"
            )
        )
    );
    assert!(c.analysis.groups[0].report.findings[1..]
        .iter()
        .all(|f| f.test == Test::PredictionInterval));
    // One run of it: described, never tested, never failed.
    let one = goodput_commit(
        "baseline",
        &["examples/history/goodput_baseline_s11_c4.json"],
    );
    let c = compare(&[one], &candidate, &ProjectSettings::default(), &[]);
    assert_eq!(c.verdict.verdict, VerdictLevel::Warn);
    assert!(c.analysis.groups[0].report.findings.is_empty());
    let codes: Vec<ReasonCode> = c.verdict.reasons.iter().map(|r| r.code).collect();
    assert_eq!(
        codes,
        [
            ReasonCode::InsufficientData,
            ReasonCode::EffectOnly,
            ReasonCode::EffectOnly
        ]
    );
}

#[test]
fn generated_histories_did_the_work_their_cells_request() {
    // The detection harness' workloads: no workload check may fire on them, or the measured
    // rates would count confounds, not detection.
    for spec in [HistorySpec::chat(7, 12, 1, 0.02), HistorySpec::fp8_case(7)] {
        let commits: Vec<CompareCommit> = (0..spec.commits).map(|i| fp8_commit(&spec, i)).collect();
        let (baseline, candidate) = commits.split_at(commits.len() - 1);
        let c = compare(baseline, &candidate[0], &ProjectSettings::default(), &[]);
        let confounds: Vec<_> = c
            .analysis
            .groups
            .iter()
            .flat_map(|g| g.report.workload.iter().map(|w| w.message.clone()))
            .collect();
        assert!(confounds.is_empty(), "{confounds:#?}");
        assert_eq!(c.analysis.groups.len(), spec.workload.cells.len());
    }
}
