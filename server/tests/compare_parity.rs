//! `benchtrail_core::report::compare` offline gives the finding the server gives for the same
//! pair in a history: the FP8 KV-cache case of the realistic generator (10 single-run baseline
//! commits at run-to-run CV 1.2 %, then the change; `HistorySpec::fp8_case`), uploaded commit
//! by commit over HTTP on every database, against the same upload documents read and compared
//! in memory.

use crate::common;

use benchtrail_core::regression::realistic::HistorySpec;
use benchtrail_core::report::compare::{compare, CompareCommit};
use benchtrail_core::report::extras::ReportDocument;
use benchtrail_core::report::grouped::grouped_findings;
use benchtrail_core::report::render::{render_report, Format};
use benchtrail_core::report::RunAnalysis;
use benchtrail_core::settings::ProjectSettings;
use benchtrail_core::UploadDocument;
use common::db::for_each_store;
use common::fp8::{sha, upload};
use common::server::TestServer;
use serde_json::{json, Value};

/// The commit of upload `doc`, read as the server reads it.
fn commit_of(doc: &Value) -> CompareCommit {
    let doc: UploadDocument = serde_json::from_value(doc.clone()).unwrap();
    CompareCommit {
        commit: doc.run.commit.sha.clone(),
        runs: vec![doc.read().unwrap().results],
    }
}

/// Every trade-off of an analysis as (cell, headline, sides with their change, p-value).
fn tradeoffs(a: &RunAnalysis) -> Vec<(String, String, Vec<String>, Option<f64>)> {
    let mut out: Vec<_> = a
        .groups
        .iter()
        .flat_map(|g| {
            g.report
                .findings
                .iter()
                .filter(|f| f.test == benchtrail_core::regression::Test::Tradeoff)
                .map(|f| {
                    (
                        g.cell.clone(),
                        format!("{}/{}", f.metric, f.stat),
                        f.parts
                            .iter()
                            .map(|p| {
                                format!(
                                    "{} {}/{} {:.6}",
                                    p.change.as_str(),
                                    p.metric,
                                    p.stat,
                                    p.delta_pct
                                )
                            })
                            .collect(),
                        f.p_value,
                    )
                })
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[tokio::test]
async fn compare_offline_finds_the_fp8_tradeoff_the_server_finds_in_its_history() {
    let spec = HistorySpec::fp8_case(3);
    let docs: Vec<Value> = (0..spec.commits).map(|i| upload(&spec, i)).collect();
    let commits: Vec<CompareCommit> = docs.iter().map(commit_of).collect();
    let (baseline, candidate) = commits.split_at(commits.len() - 1);
    let offline = compare(baseline, &candidate[0], &ProjectSettings::default(), &[]);
    let expected = tradeoffs(&offline.analysis);
    // The FP8 change in every one of the three cells: throughput up, TTFT up.
    assert_eq!(expected.len(), 3, "{expected:#?}");
    for (_, _, sides, _) in &expected {
        assert!(
            sides
                .iter()
                .any(|s| s.starts_with("improved output_throughput/value")),
            "{sides:?}"
        );
        assert!(
            sides.iter().any(|s| s.starts_with("worsened ttft/")),
            "{sides:?}"
        );
    }
    assert_eq!(offline.verdict.verdict.as_str(), "fail");
    for_each_store(|db, store| {
        let docs = docs.clone();
        let expected = expected.clone();
        let offline_verdict = offline.verdict.clone();
        let offline_grouped = grouped_findings(&offline.analysis)[0].summary.clone();
        async move {
            let server = TestServer::start(store).await;
            let token = server.project_with_token("fp8", json!({})).await;
            let mut receipt = Value::Null;
            for d in &docs {
                let (status, r) = server.upload("fp8", &token, d).await;
                assert_eq!(status, 201, "{db}: {r}");
                receipt = r;
            }
            let run = receipt["run_id"].as_str().unwrap();
            let (status, stored) = server.get(&format!("/api/v1/runs/{run}/analysis")).await;
            assert_eq!(status, 200, "{db}: {stored}");
            let served: RunAnalysis = serde_json::from_value(stored["analysis"].clone()).unwrap();
            assert_eq!(tradeoffs(&served), expected, "{db}");
            // The run page shows the same trade-off as one finding across the three cells.
            let page = server.text(&format!("/runs/{run}")).await;
            assert!(
                page.contains(&format!(
                    "<li class=\"grouped-finding\" data-kind=\"tradeoff\">{}</li>",
                    offline_grouped
                )),
                "{db}: {page}"
            );
            // Its three alerts are one group; the API lists the group by commit, kind, metric.
            let group = server
                .alerts(
                    "fp8",
                    &format!("?commit={}&kind=tradeoff&metric=output_throughput", sha(10)),
                )
                .await;
            assert_eq!(group.len(), 3, "{db}: {group:?}");
            assert!(
                group.iter().all(|a| a["group"] == group[0]["group"]),
                "{db}"
            );
            let page = server.text("/projects/fp8/alerts").await;
            let line = format!(
                "trade-off of output throughput at {} (main) in 3 cells: ",
                &sha(10)[..10]
            );
            assert!(page.contains(&line), "{db}: {page}");
            let cells: Vec<&str> = page
                .split("class=\"group-cell\">")
                .skip(1)
                .map(|rest| rest.split('<').next().unwrap())
                .collect();
            assert_eq!(
                &cells[..3],
                [
                    "max_concurrency=1",
                    "max_concurrency=4",
                    "max_concurrency=16"
                ],
                "{db}"
            );
            let (_, verdict) = server.get(&format!("/api/v1/runs/{run}/verdict")).await;
            assert_eq!(verdict["verdict"], offline_verdict.verdict.as_str(), "{db}");
            let codes = |reasons: &[Value]| {
                let mut c: Vec<String> = reasons
                    .iter()
                    .map(|r| format!("{} {} {}", r["level"], r["code"], r["cell"]))
                    .collect();
                c.sort();
                c
            };
            let offline_reasons: Vec<Value> = offline_verdict
                .reasons
                .iter()
                .map(|r| serde_json::to_value(r).unwrap())
                .collect();
            assert_eq!(
                codes(verdict["reasons"].as_array().unwrap()),
                codes(&offline_reasons),
                "{db}"
            );
            report_matches(&server, run, &served, db).await;
        }
    })
    .await;
}

/// `GET /api/v1/runs/{id}/report`: the typed document, its Markdown rendered from it, the
/// sparklines of the flagged series (the 10 baseline commits' values the decision used, then
/// the candidate's), and a clear 400 for an unknown format or a limit too small.
async fn report_matches(server: &TestServer, run: &str, served: &RunAnalysis, db: &str) {
    let (status, doc) = server
        .get(&format!("/api/v1/runs/{run}/report?format=json"))
        .await;
    assert_eq!(status, 200, "{db}: {doc}");
    let doc: ReportDocument = serde_json::from_value(doc).unwrap();
    assert_eq!(doc.project, "fp8");
    assert_eq!(doc.analysis.as_ref(), Some(served));
    let links: Vec<(String, String)> = doc
        .extras
        .links
        .iter()
        .map(|l| (l.label.clone(), l.url.clone()))
        .collect();
    let (_, stored_run) = server.get(&format!("/api/v1/runs/{run}")).await;
    let fingerprint = stored_run["results"][0]["config_fingerprint"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        links,
        [
            ("run".to_string(), server.url(&format!("/runs/{run}"))),
            (
                "compare with baseline".to_string(),
                server.url(&format!("/compare?head={run}"))
            ),
            (
                "alerts".to_string(),
                server.url(&format!("/projects/fp8/alerts?commit={}", sha(10)))
            ),
            (
                format!("configuration {}", &fingerprint[..12]),
                server.url(&format!("/configs/{fingerprint}"))
            ),
        ],
        "{db}"
    );
    // Per cell: throughput (the trade-off's headline) and the TTFT statistics that got worse.
    let first = &doc.extras.sparklines[0];
    assert_eq!(first.metric, "output_throughput", "{db}");
    assert_eq!(first.values.len(), 11, "{db}: {first:?}");
    let finding = served.groups[0]
        .report
        .findings
        .iter()
        .find(|f| f.metric == "output_throughput")
        .unwrap();
    assert_eq!(
        first.values.last().copied(),
        finding.candidate_value,
        "{db}"
    );
    assert_eq!(
        doc.extras.sparklines.len(),
        12,
        "{db}: capped at MAX_SPARKLINES"
    );
    let markdown = server
        .http
        .get(server.url(&format!("/api/v1/runs/{run}/report")))
        .send()
        .await
        .unwrap();
    assert_eq!(
        markdown.headers()["content-type"],
        "text/markdown; charset=utf-8"
    );
    let markdown = markdown.text().await.unwrap();
    assert_eq!(
        markdown,
        render_report(
            &doc.verdict,
            doc.analysis.as_ref(),
            &doc.extras,
            Format::Markdown,
            None
        ),
        "{db}"
    );
    assert!(markdown.contains("#### Recent history of the flagged series\n\n- [`max_concurrency=1`] output throughput "), "{db}: {markdown}");
    for (query, parameter) in [("format=html", "format"), ("limit=10", "limit")] {
        let (status, problem) = server
            .get(&format!("/api/v1/runs/{run}/report?{query}"))
            .await;
        assert_eq!(status, 400, "{db}: {problem}");
        assert_eq!(problem["parameter"], parameter, "{db}: {problem}");
    }
}
