//! The compare page (`/compare?head={run}[&base={run}]`) on the FP8 KV-cache history of the
//! realistic generator, uploaded over HTTP on every database: against the candidate's
//! analysis every series of every cell is a row with exactly the stored analysis' numbers and
//! state (the trade-off's sides as `tradeoff`); two runs named are described from their
//! stored values and never tested; an FP8 KV-cache candidate (another series key) is paired
//! with its baseline cell by cell, the changed field a factor; bad addresses are clear.

use crate::common;

use benchtrail_core::regression::realistic::HistorySpec;
use benchtrail_core::regression::Test;
use benchtrail_core::report::RunAnalysis;
use common::db::for_each_store;
use common::fp8::upload;
use common::server::TestServer;
use scraper::{ElementRef, Html, Selector};
use serde_json::json;
use std::collections::HashMap;

/// One `tr.compare-row`, as its data attributes say.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    series: String,
    metric: String,
    stat: String,
    state: String,
    delta: String,
    baseline: String,
    candidate: String,
    significant: bool,
    test: String,
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

fn attr(e: &ElementRef, name: &str) -> String {
    e.value().attr(name).unwrap_or_default().to_string()
}

/// The rows of each cell's table, by cell key.
fn rows(html: &Html) -> HashMap<String, Vec<Row>> {
    let mut out = HashMap::new();
    for table in html.select(&sel("table.compare")) {
        let rows = table
            .select(&sel("tr.compare-row"))
            .map(|tr| Row {
                series: attr(&tr, "data-series"),
                metric: attr(&tr, "data-metric"),
                stat: attr(&tr, "data-stat"),
                state: attr(&tr, "data-state"),
                delta: attr(&tr, "data-delta"),
                baseline: attr(&tr, "data-baseline"),
                candidate: attr(&tr, "data-candidate"),
                significant: tr.value().classes().any(|c| c == "significant"),
                test: tr
                    .select(&sel("td.test"))
                    .next()
                    .map(|t| t.text().collect::<String>())
                    .unwrap_or_default(),
            })
            .collect();
        out.insert(attr(&table, "data-cell"), rows);
    }
    out
}

/// A page's body; parsed on each question (scraper's documents are not `Send`, so none is
/// held across an await).
struct Doc(String);

impl Doc {
    fn html(&self) -> Html {
        Html::parse_document(&self.0)
    }

    /// The text of the first element matching `selector`, or empty.
    fn text(&self, selector: &str) -> String {
        self.html()
            .select(&sel(selector))
            .next()
            .map(|e| e.text().collect::<String>())
            .unwrap_or_default()
    }

    /// Attribute `name` of the first element matching `selector`.
    fn attr(&self, selector: &str, name: &str) -> Option<String> {
        self.html()
            .select(&sel(selector))
            .next()
            .map(|e| attr(&e, name))
    }

    /// How many elements match `selector`.
    fn count(&self, selector: &str) -> usize {
        self.html().select(&sel(selector)).count()
    }

    /// The rows of each cell's table, by cell key.
    fn rows(&self) -> HashMap<String, Vec<Row>> {
        rows(&self.html())
    }

    /// The configuration differences: (field, is a factor, "baseline → candidate").
    fn diffs(&self) -> Vec<(String, bool, String)> {
        self.html()
            .select(&sel("tr.diff"))
            .map(|tr| {
                let tds: Vec<String> = tr
                    .select(&sel("td"))
                    .map(|td| td.text().collect())
                    .collect();
                (
                    attr(&tr, "data-field"),
                    tr.value().classes().any(|c| c == "factor"),
                    tds.join(" → "),
                )
            })
            .collect()
    }
}

async fn page(server: &TestServer, path: &str) -> (u16, Doc) {
    let r = server.http.get(server.url(path)).send().await.unwrap();
    let status = r.status().as_u16();
    (status, Doc(r.text().await.unwrap()))
}

/// Uploads commits `range` of the FP8 history; the run ids in order.
async fn upload_history(
    server: &TestServer,
    token: &str,
    spec: &HistorySpec,
    range: std::ops::Range<usize>,
) -> Vec<String> {
    let mut runs = Vec::new();
    for i in range {
        let (status, r) = server.upload("fp8", token, &upload(spec, i)).await;
        assert_eq!(status, 201, "{r}");
        runs.push(r["run_id"].as_str().unwrap().to_string());
    }
    runs
}

/// Each series' stored value in run `id`, by series id (one result per series here).
async fn stored_values(server: &TestServer, id: &str) -> HashMap<String, f64> {
    let (status, run) = server.get(&format!("/api/v1/runs/{id}")).await;
    assert_eq!(status, 200, "{run}");
    run["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["metrics"].as_array().unwrap().clone())
        .map(|m| {
            (
                m["series_id"].as_str().unwrap().to_string(),
                m["value"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn against_its_analysis_every_series_is_a_row_with_the_stored_numbers_and_state() {
    let spec = HistorySpec::fp8_case(3);
    for_each_store(|db, store| {
        let spec = spec.clone();
        async move {
            let server = TestServer::start(store).await;
            let token = server.project_with_token("fp8", json!({})).await;
            let runs = upload_history(&server, &token, &spec, 0..spec.commits).await;
            let head = runs.last().unwrap();
            let (_, stored) = server.get(&format!("/api/v1/runs/{head}/analysis")).await;
            let served: RunAnalysis = serde_json::from_value(stored["analysis"].clone()).unwrap();

            let (status, html) = page(&server, &format!("/compare?head={head}")).await;
            assert_eq!(status, 200, "{db}: {}", html.0);
            assert_eq!(
                html.attr("#compare-verdict", "data-verdict").as_deref(),
                Some("fail"),
                "{db}"
            );
            // The baseline run named is the newest baseline commit's (commit 9).
            let base_run = html.attr("#compare-base a", "data-run");
            assert_eq!(base_run.as_deref(), Some(runs[9].as_str()), "{db}");
            let tables = html.rows();
            assert_eq!(tables.len(), 3, "{db}");
            for g in &served.groups {
                let rows = &tables[&g.cell];
                assert_eq!(rows.len(), g.report.series.len(), "{db}: {}", g.cell);
                let tradeoff = g
                    .report
                    .findings
                    .iter()
                    .find(|f| f.test == Test::Tradeoff)
                    .expect("a trade-off in every cell of this draw");
                for s in &g.report.series {
                    let row = rows.iter().find(|r| r.series == s.series_id).unwrap();
                    let expected_state = if tradeoff.series_ids.contains(&s.series_id) {
                        "tradeoff"
                    } else {
                        s.state.as_str()
                    };
                    assert_eq!(row.state, expected_state, "{db}: {row:?}");
                    if let Some(c) = &s.comparison {
                        assert_eq!(row.baseline, c.outcome.baseline_mean.to_string(), "{db}");
                        assert_eq!(row.candidate, c.outcome.candidate_mean.to_string(), "{db}");
                        let delta = c.delta_pct.map(|d| d.to_string()).unwrap_or_default();
                        assert_eq!(row.delta, delta, "{db}");
                        assert_eq!(row.significant, c.significant, "{db}: {row:?}");
                    }
                }
                // The trade-off's sides, with the finding's own changes, come first.
                let first = &rows[..tradeoff.series_ids.len()];
                assert!(
                    first.iter().all(|r| r.state == "tradeoff"),
                    "{db}: {first:?}"
                );
                for part in &tradeoff.parts {
                    let row = rows.iter().find(|r| r.series == part.series_id).unwrap();
                    assert_eq!(row.delta, part.delta_pct.to_string(), "{db}");
                }
                let throughput = rows
                    .iter()
                    .find(|r| r.metric == "output_throughput")
                    .unwrap();
                assert_eq!(throughput.state, "tradeoff", "{db}");
                assert!(
                    throughput
                        .test
                        .starts_with("prediction interval on commit means, p"),
                    "{db}: {throughput:?}"
                );
            }
            // Changes no test decides are rows too, with their state: the TTFT spread
            // (descriptive), against the newest baseline run's stored value.
            let before = stored_values(&server, &runs[9]).await;
            let after = stored_values(&server, head).await;
            let spreads: Vec<&Row> = tables
                .values()
                .flatten()
                .filter(|r| r.metric == "ttft" && r.stat == "std")
                .collect();
            assert_eq!(spreads.len(), 3, "{db}");
            for r in spreads {
                let (b, c) = (before[&r.series], after[&r.series]);
                assert_eq!(r.state, "descriptive", "{db}");
                assert_eq!(r.delta, ((c - b) / b.abs() * 100.0).to_string(), "{db}");
                assert_eq!(r.test, "not tested: statistic not tested", "{db}");
            }
            // Cells in numeric order, here and on the project page (not c16 before c1).
            let order = |cells: Vec<String>| -> Vec<String> {
                cells
                    .iter()
                    .map(|c| c.split(';').next().unwrap().to_string())
                    .collect()
            };
            let numeric = [
                "max_concurrency=1",
                "max_concurrency=4",
                "max_concurrency=16",
            ];
            let compare_cells: Vec<String> = Html::parse_document(&html.0)
                .select(&sel("section.compare-cell"))
                .map(|s| attr(&s, "data-cell"))
                .collect();
            assert_eq!(order(compare_cells), numeric, "{db}");
            let (_, project) = page(&server, "/projects/fp8").await;
            let project_cells: Vec<String> = Html::parse_document(&project.0)
                .select(&sel("div.cell"))
                .map(|d| attr(&d, "data-cell"))
                .collect();
            assert_eq!(order(project_cells), numeric, "{db}");
            // The run page links here.
            let (_, run_page) = page(&server, &format!("/runs/{head}")).await;
            let link = run_page.attr("a#compare-link", "href");
            assert_eq!(link, Some(format!("/compare?head={head}")), "{db}");
        }
    })
    .await;
}

#[tokio::test]
async fn two_runs_are_described_from_their_stored_values_never_tested() {
    let spec = HistorySpec::fp8_case(3);
    for_each_store(|db, store| {
        let spec = spec.clone();
        async move {
            let server = TestServer::start(store).await;
            let token = server.project_with_token("fp8", json!({})).await;
            let runs = upload_history(&server, &token, &spec, 9..11).await;
            let (base, head) = (&runs[0], &runs[1]);
            let (status, html) = page(&server, &format!("/compare?base={base}&head={head}")).await;
            assert_eq!(status, 200, "{db}: {}", html.0);
            let before = stored_values(&server, base).await;
            let after = stored_values(&server, head).await;
            let tables = html.rows();
            assert_eq!(tables.len(), 3, "{db}");
            let all: Vec<&Row> = tables.values().flatten().collect();
            assert_eq!(all.len(), after.len(), "{db}");
            for row in all {
                let (b, c) = (before[&row.series], after[&row.series]);
                assert_eq!(row.baseline, b.to_string(), "{db}: {row:?}");
                assert_eq!(row.candidate, c.to_string(), "{db}: {row:?}");
                let delta = if b == 0.0 {
                    String::new()
                } else {
                    ((c - b) / b.abs() * 100.0).to_string()
                };
                assert_eq!(row.delta, delta, "{db}: {row:?}");
                assert!(!row.significant, "{db}: {row:?}");
                assert!(
                    !row.test.contains("p <") && !row.test.contains("p ="),
                    "{db}: {row:?}"
                );
            }
            let ttft = tables
                .values()
                .flatten()
                .find(|r| r.metric == "ttft" && r.stat == "p50")
                .unwrap();
            assert_eq!(ttft.test, "not tested: one value per side", "{db}");
            assert!(
                html.text("#compare-method")
                    .starts_with("Two runs, one value per side"),
                "{db}"
            );
            // The same page as the validation report of the pair.
            let (status, report) =
                page(&server, &format!("/compare/report?base={base}&head={head}")).await;
            assert_eq!(status, 200, "{db}");
            assert_eq!(report.rows(), tables, "{db}");
            let (status, report) = page(&server, &format!("/compare/report?head={head}")).await;
            assert_eq!(status, 400, "{db}");
            assert!(
                report.text("#error-message").starts_with("Name both runs"),
                "{db}"
            );
            let capacity = html.attr("a#capacity-link", "href");
            assert_eq!(
                capacity,
                Some(format!(
                    "/api/v1/compare/report?base={base}&head={head}&format=markdown"
                )),
                "{db}"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn an_fp8_kv_cache_candidate_is_paired_cell_by_cell_with_the_changed_field_a_factor() {
    let spec = HistorySpec::fp8_case(3);
    for_each_store(|db, store| {
        let spec = spec.clone();
        async move {
            let server = TestServer::start(store).await;
            let token = server.project_with_token("fp8", json!({})).await;
            let base = upload_history(&server, &token, &spec, 9..10)
                .await
                .remove(0);
            let mut doc = upload(&spec, 10);
            doc["configuration"]["quantization"] = json!({"kv_cache_dtype": "fp8"});
            let (status, r) = server.upload("fp8", &token, &doc).await;
            assert_eq!(status, 201, "{db}: {r}");
            let head = r["run_id"].as_str().unwrap().to_string();

            // Against its own analysis: another series key, three new cells, nothing tested.
            let (status, html) = page(&server, &format!("/compare?head={head}")).await;
            assert_eq!(status, 200, "{db}");
            assert_eq!(html.count("#compare-new li.new-cell"), 3, "{db}");
            assert!(
                html.rows()
                    .values()
                    .flatten()
                    .filter(|r| r.metric == "ttft" && r.stat != "std")
                    .all(|r| r.state == "no_baseline"),
                "{db}"
            );

            // Named together: paired by cell, the difference listed as a factor.
            let (status, html) = page(&server, &format!("/compare?base={base}&head={head}")).await;
            assert_eq!(status, 200, "{db}: {}", html.0);
            assert!(
                html.text("#compare-method")
                    .contains("3 cells of the baseline are paired"),
                "{db}: {}",
                html.text("#compare-method")
            );
            let diffs = html.diffs();
            let kv: Vec<_> = diffs
                .iter()
                .filter(|d| d.0 == "quantization.kv_cache_dtype")
                .collect();
            assert_eq!(kv.len(), 3, "{db}: {diffs:?}");
            assert!(
                kv.iter().all(|d| d.1 && d.2 == "unset → fp8"),
                "{db}: {kv:?}"
            );
            let before_throughput = throughputs(&server, &base).await;
            let after_throughput = throughputs(&server, &head).await;
            let tables = html.rows();
            let mut got: Vec<String> = tables
                .values()
                .flatten()
                .filter(|r| r.metric == "output_throughput")
                .map(|r| r.delta.clone())
                .collect();
            let mut want: Vec<String> = before_throughput
                .iter()
                .zip(&after_throughput)
                .map(|(b, c)| ((c - b) / b.abs() * 100.0).to_string())
                .collect();
            got.sort();
            want.sort();
            assert_eq!(got, want, "{db}");
        }
    })
    .await;
}

/// The output throughput of each result of run `id`, in result order.
async fn throughputs(server: &TestServer, id: &str) -> Vec<f64> {
    let (_, run) = server.get(&format!("/api/v1/runs/{id}")).await;
    run["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["name"] == "output_throughput")
                .and_then(|m| m["value"].as_f64())
                .unwrap()
        })
        .collect()
}

#[tokio::test]
async fn bad_addresses_are_clear_and_private_runs_are_not_found() {
    let spec = HistorySpec::fp8_case(3);
    for_each_store(|db, store| {
        let spec = spec.clone();
        async move {
            let server = TestServer::start(store).await;
            let token = server.project_with_token("fp8", json!({})).await;
            let run = upload_history(&server, &token, &spec, 0..1).await.remove(0);
            let other = server.project_with_token("other", json!({})).await;
            let (_, r) = server.upload("other", &other, &upload(&spec, 1)).await;
            let other_run = r["run_id"].as_str().unwrap().to_string();
            let hidden = server
                .project_with_token("hidden", json!({"public": false}))
                .await;
            let (_, r) = server.upload("hidden", &hidden, &upload(&spec, 2)).await;
            let hidden_run = r["run_id"].as_str().unwrap().to_string();

            let (status, html) = page(&server, "/compare").await;
            assert_eq!(status, 400, "{db}");
            assert!(
                html.text("#error-message").starts_with("Name the candidate run: /compare?head="),
                "{db}"
            );
            for path in [
                "/compare?head=not-a-run".to_string(),
                format!("/compare?head={}", uuid::Uuid::nil()),
                format!("/compare?head={hidden_run}"),
                format!("/compare?base={hidden_run}&head={run}"),
            ] {
                let (status, html) = page(&server, &path).await;
                assert_eq!(status, 404, "{db}: {path}");
                assert!(
                    html.text("#error-message").starts_with("There is no run"),
                    "{db}: {path}"
                );
            }
            let (status, html) = page(&server, &format!("/compare?base={other_run}&head={run}")).await;
            assert_eq!(status, 400, "{db}");
            assert_eq!(
                html.text("#error-message"),
                "The runs belong to different projects (other and fp8): compare runs of one project.",
                "{db}"
            );
            // The first commit has no baseline: every cell is new.
            let (status, html) = page(&server, &format!("/compare?head={run}")).await;
            assert_eq!(status, 200, "{db}");
            assert_eq!(html.count("#compare-new li.new-cell"), 3, "{db}");
        }
    })
    .await;
}

#[tokio::test]
async fn capacity_at_slo_on_the_compare_page_is_the_reports() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let (_, base, head) = common::aiperf::seed(&server, "capacity", true).await;
        let api = format!("/api/v1/compare/report?base={base}&head={head}");
        let (status, doc) = server.get(&api).await;
        assert_eq!(status, 200, "{db}: {doc}");
        let (_, md) = page(&server, &format!("{api}&format=markdown")).await;
        let md = md.0;

        let (status, html) = page(&server, &format!("/compare?base={base}&head={head}")).await;
        assert_eq!(status, 200, "{db}: {}", html.0);
        // The paragraph and the table are the report's, word for word (its code spans set as
        // code).
        assert_eq!(
            html.text("#capacity-summary"),
            doc["summary"].as_str().unwrap().replace('`', ""),
            "{db}"
        );
        assert!(
            html.0
                .contains("<p id=\"capacity-summary\">Under <code>chat</code> (TTFT ≤ 120 ms"),
            "{db}"
        );
        let cells: Vec<String> = Html::parse_document(&html.0)
            .select(&sel("tr.capacity-row td"))
            .map(|td| td.text().collect())
            .collect();
        let row = format!("| {} |", cells.join(" | "));
        assert!(
            row.starts_with(
                "| chat | TTFT ≤ 120 ms, TPOT ≤ 12 ms | 4.6 → 10 | 10,747 → 26,478 | +15,731"
            ),
            "{db}: {row}"
        );
        assert!(
            md.contains(&format!("\n{row}\n")),
            "{db}: {row} not in\n{md}"
        );
        // The validation section: the report's answer and warnings, word for word.
        assert_eq!(
            html.attr("#validation", "data-answer").as_deref(),
            doc["report"]["answer"]["level"].as_str(),
            "{db}"
        );
        assert_eq!(
            html.text("#validation-answer"),
            doc["answer"].as_str().unwrap().replace('`', ""),
            "{db}"
        );
        let warnings: Vec<(String, String)> = Html::parse_document(&html.0)
            .select(&sel("li.report-warning"))
            .map(|li| (attr(&li, "data-code"), li.text().collect()))
            .collect();
        let expected: Vec<(String, String)> = doc["report"]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .zip(doc["warnings"].as_array().unwrap())
            .map(|(w, s)| {
                (
                    w["code"].as_str().unwrap().to_string(),
                    format!("⚠ {}", s.as_str().unwrap().replace('`', "")),
                )
            })
            .collect();
        assert_eq!(warnings, expected, "{db}");
        assert_eq!(warnings.len(), 4, "{db}: {warnings:?}");
        // The curve: each load's attainment on both sides, exactly the report's points.
        let profile = &doc["report"]["sweeps"][0]["profiles"][0];
        let points: Vec<(String, String, String)> = Html::parse_document(&html.0)
            .select(&sel("#capacity-curve-0 tr.curve-point"))
            .map(|tr| {
                (
                    attr(&tr, "data-load"),
                    attr(&tr, "data-baseline"),
                    attr(&tr, "data-candidate"),
                )
            })
            .collect();
        let side = |name: &str, i: usize| {
            (profile[name]["points"][i]["attainment"].as_f64().unwrap() * 100.0).to_string()
        };
        let expected: Vec<(String, String, String)> = (0..3)
            .map(|i| {
                (
                    profile["baseline"]["points"][i]["load"]
                        .as_f64()
                        .unwrap()
                        .to_string(),
                    side("baseline", i),
                    side("candidate", i),
                )
            })
            .collect();
        assert_eq!(points, expected, "{db}");
        assert_eq!(
            points.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
            ["1", "4", "16"],
            "{db}"
        );
        // Per-request distributions: at c=4 every successful request's TTFT of each side, in
        // order, with its share, straight from AIPerf's records.
        let doc = Html::parse_document(&html.0);
        let cell = doc
            .select(&sel("section.compare-cell"))
            .find(|s| attr(s, "data-cell").starts_with("max_concurrency=4;"))
            .unwrap();
        let figure = cell
            .select(&sel("figure.cdf[data-metric=ttft]"))
            .next()
            .unwrap();
        for side in ["baseline", "candidate"] {
            let path = format!("{}/profile_export.jsonl", common::aiperf::run_dir(side, 4));
            let mut ttfts: Vec<f64> = common::server::repo_file(&path)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .filter(|r| r["metadata"]["benchmark_phase"] != "warmup")
                .filter(|r| r.get("error").is_none_or(serde_json::Value::is_null))
                .map(|r| {
                    r["metrics"]["time_to_first_token"]["value"]
                        .as_f64()
                        .unwrap()
                })
                .collect();
            ttfts.sort_by(f64::total_cmp);
            let n = ttfts.len();
            let expected: Vec<String> = ttfts
                .iter()
                .enumerate()
                .map(|(i, v)| format!("{v}:{}", (i + 1) as f64 / n as f64))
                .collect();
            assert_eq!(
                attr(&figure, &format!("data-{side}")),
                expected.join(","),
                "{db}: {side}"
            );
        }
        assert_eq!(cell.select(&sel("figure.cdf")).count(), 2, "{db}");
    })
    .await;
}

#[tokio::test]
async fn a_change_the_history_cannot_decide_says_so_and_is_not_called_no_change() {
    // The example history: three single-run baseline commits of the mock vLLM server, then the
    // candidate whose TTFT doubles (not decidable against three commits' spread).
    let files = [
        "examples/history/goodput_baseline_s11_c4.json",
        "examples/history/goodput_baseline_s12_c4.json",
        "examples/history/goodput_baseline_s13_c4.json",
        "examples/history/goodput_candidate_s21_c4.json",
    ];
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let mut head = String::new();
        for (i, path) in files.iter().enumerate() {
            let time = format!("2026-11-01T{i:02}:00:00Z");
            let doc = common::server::upload_doc(&format!("{:040x}", i + 1), &time, &[path]);
            let (status, r) = server.upload("demo", &token, &doc).await;
            assert_eq!(status, 201, "{db}: {r}");
            head = r["run_id"].as_str().unwrap().to_string();
        }
        let (_, stored) = server.get(&format!("/api/v1/runs/{head}/analysis")).await;
        let served: RunAnalysis = serde_json::from_value(stored["analysis"].clone()).unwrap();
        let undecided: Vec<String> = served.groups[0]
            .report
            .undecided
            .iter()
            .map(|u| u.summary.clone())
            .collect();
        assert!(
            undecided.iter().any(|u| u.starts_with("TTFT +")),
            "{db}: {undecided:?}"
        );
        let (status, html) = page(&server, &format!("/compare?head={head}")).await;
        assert_eq!(status, 200, "{db}");
        let shown: Vec<String> = Html::parse_document(&html.0)
            .select(&sel("li.undecided"))
            .map(|li| li.text().collect())
            .collect();
        assert_eq!(shown, undecided, "{db}");
        let words: Vec<(String, String, String)> = Html::parse_document(&html.0)
            .select(&sel("tr.compare-row[data-metric=ttft]"))
            .map(|tr| {
                (
                    attr(&tr, "data-stat"),
                    attr(&tr, "data-state"),
                    tr.select(&sel(".state-word"))
                        .next()
                        .map(|w| w.text().collect())
                        .unwrap_or_default(),
                )
            })
            .filter(|(stat, _, _)| stat == "p50")
            .collect();
        assert_eq!(
            words,
            [(
                "p50".to_string(),
                "no_change".to_string(),
                "not significant".to_string()
            )],
            "{db}"
        );
    })
    .await;
}

/// A KV-cache dtype change between two runs named together: without a quality result the
/// comparison warns in every paired cell (`quantization_without_quality`) and the verdict is at
/// least `warn`; with the candidate's quality results covering the baseline's tasks (or any,
/// when the baseline has none) it does not; with a task of the baseline's missing it does.
#[tokio::test]
async fn a_kv_cache_dtype_change_without_quality_results_warns_and_with_them_does_not() {
    let spec = HistorySpec::fp8_case(3);
    for_each_store(|db, store| {
        let spec = spec.clone();
        async move {
            let server = TestServer::start(store).await;
            let token = server.project_with_token("fp8", json!({})).await;
            let base = upload_history(&server, &token, &spec, 9..10)
                .await
                .remove(0);
            let mut fp8 = upload(&spec, 10);
            fp8["configuration"]["quantization"] = json!({"kv_cache_dtype": "fp8"});
            let gsm8k = json!({"task": "gsm8k", "metric": "exact_match", "value": 0.75});
            let mmlu = json!({"task": "mmlu", "metric": "acc", "value": 0.68});
            let mut stored = Vec::new();
            for quality in [json!([]), json!([gsm8k])] {
                let mut doc = fp8.clone();
                doc["quality"] = quality;
                let (status, r) = server.upload("fp8", &token, &doc).await;
                assert_eq!(status, 201, "{db}: {r}");
                stored.push(r["run_id"].as_str().unwrap().to_string());
            }
            let warnings =
                |html: &Doc| html.count("p.confound[data-code=\"quantization_without_quality\"]");

            let (status, html) =
                page(&server, &format!("/compare?base={base}&head={}", stored[0])).await;
            assert_eq!(status, 200, "{db}");
            assert_eq!(warnings(&html), 3, "{db}: {}", html.0);
            assert!(
                html.text("p.confound[data-code=\"quantization_without_quality\"]")
                    .contains("quantization.kv_cache_dtype: unset → fp8"),
                "{db}"
            );
            let verdict = html.attr("#compare-verdict", "data-verdict");
            assert!(verdict.is_some(), "{db}");
            assert_ne!(verdict.as_deref(), Some("pass"), "{db}");

            // The baseline has no quality result: any candidate result counts.
            let (status, html) =
                page(&server, &format!("/compare?base={base}&head={}", stored[1])).await;
            assert_eq!(status, 200, "{db}");
            assert_eq!(warnings(&html), 0, "{db}: {}", html.0);

            // The fp8 run with gsm8k as baseline of an fp8 → auto change: the candidate must
            // have gsm8k too.
            let mut auto = upload(&spec, 10);
            auto["configuration"]["quantization"] = json!({"kv_cache_dtype": "auto"});
            let mut heads = Vec::new();
            for quality in [json!([mmlu]), json!([mmlu, gsm8k])] {
                let mut doc = auto.clone();
                doc["quality"] = quality;
                let (status, r) = server.upload("fp8", &token, &doc).await;
                assert_eq!(status, 201, "{db}: {r}");
                heads.push(r["run_id"].as_str().unwrap().to_string());
            }
            let (_, html) = page(
                &server,
                &format!("/compare?base={}&head={}", stored[1], heads[0]),
            )
            .await;
            assert_eq!(warnings(&html), 3, "{db}: {}", html.0);
            let (_, html) = page(
                &server,
                &format!("/compare?base={}&head={}", stored[1], heads[1]),
            )
            .await;
            assert_eq!(warnings(&html), 0, "{db}: {}", html.0);
        }
    })
    .await;
}

/// A +15 % TTFT step after 12 single-run commits at run-to-run CV 2 %: the regression is
/// decided on the TTFT family's index, and every TTFT row the finding names says so before
/// its own test and p-value, so the p beside the series' own interval is not read as the
/// deciding one. On both stores.
#[tokio::test]
async fn a_row_decided_by_the_family_index_names_that_test_before_its_own() {
    use benchtrail_core::regression::realistic::Change;
    let mut spec = HistorySpec::chat(41, 13, 1, 0.02);
    spec.step = Some((12, Change::ttft_step(15.0, spec.workload.cells.len())));
    for_each_store(|db, store| {
        let spec = spec.clone();
        async move {
            let server = TestServer::start(store).await;
            let token = server.project_with_token("fp8", json!({})).await;
            let runs = upload_history(&server, &token, &spec, 0..spec.commits).await;
            let head = runs.last().unwrap();
            let (_, stored) = server.get(&format!("/api/v1/runs/{head}/analysis")).await;
            let served: RunAnalysis = serde_json::from_value(stored["analysis"].clone()).unwrap();
            let (status, html) = page(&server, &format!("/compare?head={head}")).await;
            assert_eq!(status, 200, "{db}");
            let tables = html.rows();
            let mut checked = 0;
            for g in &served.groups {
                let rows = &tables[&g.cell];
                let family = g
                    .report
                    .findings
                    .iter()
                    .filter(|f| f.test == Test::FamilyIndex && f.metric == "ttft");
                for f in family {
                    let p = benchtrail_core::regression::p_phrase(f.p_value.unwrap());
                    for id in &f.series_ids {
                        let own = g
                            .report
                            .series
                            .iter()
                            .find(|s| &s.series_id == id)
                            .and_then(|s| s.comparison.as_ref())
                            .unwrap();
                        let row = rows.iter().find(|r| &r.series == id).unwrap();
                        let want = format!(
                            "decided by the family index (this metric's statistics in this cell, combined), {p}; this series: prediction interval on commit means, {}",
                            benchtrail_core::regression::p_phrase(own.outcome.p_value.unwrap())
                        );
                        assert_eq!(own.outcome.test, Test::PredictionInterval, "{db}");
                        assert!(row.test.starts_with(&want), "{db}: {} vs {want}", row.test);
                        assert_eq!(row.state, "regression", "{db}: {row:?}");
                        checked += 1;
                    }
                }
            }
            // Every cell's TTFT moved: at least one statistic per cell named.
            assert!(checked >= served.groups.len(), "{db}: {checked} rows checked");
        }
    })
    .await;
}
