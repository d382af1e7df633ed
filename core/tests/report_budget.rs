//! A report that does not fit a PR comment: 80 cells, 16 of them with the FP8 KV-cache
//! trade-off (the realistic generator's case, compared offline), every cell with its
//! improvements. Rendered into the sticky comment at GitHub's 65,536-character limit, the
//! least important sections go, the marker stays, and all 16 trade-off cells stay listed.

use benchtrail_core::regression::realistic::{commit_runs, HistorySpec};
use benchtrail_core::regression::FindingKind;
use benchtrail_core::report::comment::{plan, CommentAction, CommentRequest, GITHUB_BODY_LIMIT};
use benchtrail_core::report::compare::{compare, CompareCommit};
use benchtrail_core::report::extras::ReportExtras;
use benchtrail_core::report::render::{render_report, Format};
use benchtrail_core::report::{Reason, RunAnalysis, VerdictLevel};
use benchtrail_core::settings::ProjectSettings;
use benchtrail_core::UploadDocument;
use serde_json::json;

fn fp8_commit(spec: &HistorySpec, i: usize) -> CompareCommit {
    let files: Vec<serde_json::Value> = commit_runs(spec, i)
        .iter()
        .map(|r| json!({"name": format!("c{}.json", r.cell), "content": r.file.to_string()}))
        .collect();
    let doc: UploadDocument = serde_json::from_value(json!({
        "run": {"commit": {"sha": "0000000"}},
        "cell": {"input_len": spec.workload.input_len, "output_len": spec.workload.output_len},
        "files": files,
    }))
    .unwrap();
    CompareCommit {
        commit: format!("{i:040x}"),
        runs: vec![doc.read().unwrap().results],
    }
}

/// The FP8 analysis' three cells made into 80 (`max_concurrency` 1..=80); cells 17..=80
/// keep only their improvements.
fn eighty_cells(a: &RunAnalysis) -> RunAnalysis {
    let mut out = a.clone();
    out.groups = (0..80)
        .map(|n| {
            let mut g = a.groups[n % a.groups.len()].clone();
            let c = g.cell.split(';').next().unwrap().to_string();
            let renamed = format!("max_concurrency={}", n + 1);
            g.cell = g.cell.replacen(&c, &renamed, 1);
            g.report.cell_key = g.cell.clone();
            if n >= 16 {
                g.report
                    .findings
                    .retain(|f| f.kind == FindingKind::Improvement);
            }
            g
        })
        .collect();
    out
}

#[test]
fn an_eighty_cell_report_fits_a_github_comment_with_every_tradeoff_cell_listed() {
    let spec = HistorySpec::fp8_case(3);
    let commits: Vec<CompareCommit> = (0..spec.commits).map(|i| fp8_commit(&spec, i)).collect();
    let (baseline, candidate) = commits.split_at(commits.len() - 1);
    let c = compare(baseline, &candidate[0], &ProjectSettings::default(), &[]);
    let analysis = eighty_cells(&c.analysis);
    // The verdict's reasons of the three cells, for the 16 cells that keep the trade-off.
    let mut verdict = c.verdict.clone();
    assert_eq!(verdict.verdict, VerdictLevel::Fail);
    verdict.reasons = analysis.groups[..16]
        .iter()
        .enumerate()
        .flat_map(|(n, g)| {
            let template = &c.analysis.groups[n % 3].cell;
            c.verdict
                .reasons
                .iter()
                .filter(move |r| r.cell.as_ref() == Some(template))
                .map(|r| Reason {
                    cell: Some(g.cell.clone()),
                    ..r.clone()
                })
        })
        .collect();
    assert_eq!(verdict.reasons.len(), 16);
    let extras = ReportExtras {
        full_report: Some("https://bench.example.com/runs/1".into()),
        ..ReportExtras::default()
    };
    let whole = render_report(&verdict, Some(&analysis), &extras, Format::Markdown, None);
    let labels: Vec<String> = (1..=16).map(|n| format!("max_concurrency={n}")).collect();
    let listed = format!("- ❌ trade-off in 16 of 80 cells ({}): ", labels.join(", "));

    // At GitHub's limit: it fits whole, marker first.
    let req = CommentRequest {
        project: "llm-serving",
        suite: "fp8",
        level: verdict.verdict,
        always: false,
        limit: GITHUB_BODY_LIMIT,
    };
    let render = |budget: usize| {
        render_report(
            &verdict,
            Some(&analysis),
            &extras,
            Format::Markdown,
            Some(budget),
        )
    };
    let CommentAction::Create { body } = plan(None, req, render) else {
        panic!("a failing report with no comment creates one")
    };
    assert_eq!(
        body,
        format!(
            "<!-- benchtrail:comment project=llm-serving -->\n<!-- benchtrail:suite fp8 -->\n{whole}\
             <!-- benchtrail:end fp8 -->\n"
        )
    );
    assert!(body.chars().count() <= GITHUB_BODY_LIMIT);

    // When other suites' sections leave only 20,000 characters, whole sections go, least
    // important first, and every trade-off cell stays listed.
    let tight = CommentRequest {
        limit: 20_000,
        ..req
    };
    let CommentAction::Create { body } = plan(None, tight, render) else {
        panic!()
    };
    assert!(whole.chars().count() > 20_000);
    assert!(body.chars().count() <= 20_000, "{}", body.chars().count());
    assert!(body.starts_with(&format!(
        "<!-- benchtrail:comment project=llm-serving -->\n<!-- benchtrail:suite fp8 -->\n\
         ### benchtrail: ❌ **FAIL** at `000000000000`\n\n#### Regressions and trade-offs\n\n{listed}"
    )), "{}", &body[..600]);
    assert!(
        body.contains(
            "Shortened to fit: left out improvement tables — \
         [the full report](https://bench.example.com/runs/1)."
        ),
        "{}",
        &body[body.len().saturating_sub(600)..]
    );
    // The trade-off's own table is kept: its 16 cells' rows.
    assert_eq!(body.matches("| output throughput (").count(), 16);
    assert!(body.ends_with("<!-- benchtrail:end fp8 -->\n"));
}
