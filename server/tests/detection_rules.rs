//! Detection rules over real HTTP on every database, beyond the scenarios of `alerts.rs`:
//! confirmation by later commits, failed requests appearing from a baseline of none, runs that
//! fail by their own health, per-request shifts from stored samples, and project settings
//! changes that recompute what was found.

use crate::common;

use benchtrail_core::metric::{MetricValue, Stat};
use common::db::for_each_store;
use common::goodput::{vllm_doc, GOODPUT_HISTORY};
use common::server::{repo_file, TestServer, ADMIN_TOKEN};
use common::web::escaped;
use serde_json::{json, Value};

async fn verdict(server: &TestServer, run: &Value) -> Value {
    let run = run["run_id"].as_str().unwrap();
    let (status, v) = server.get(&format!("/api/v1/runs/{run}/verdict")).await;
    assert_eq!(status, 200, "{v}");
    v
}

fn commit(i: usize) -> String {
    format!("{i:040x}")
}

/// One commit of a small chat cell in benchtrail's own format: median TTFT (ms), output
/// throughput (tok/s), completed and failed requests.
fn chat_upload(i: usize, ttft_p50: f64, throughput: f64, completed: f64, failed: f64) -> Value {
    let m = |name: &str, stat: Stat, v: f64| {
        serde_json::to_value(MetricValue::new(name, stat, v, None)).unwrap()
    };
    json!({
        "run": {"commit": {"sha": commit(i), "time": format!("2026-11-01T{:02}:{:02}:00Z", 9 + i / 60, i % 60)}, "branch": "main"},
        "results": [{
            "cell": {"load": {"max_concurrency": 4}, "input_len": 512, "output_len": 128, "num_prompts": 100},
            "configuration": {"engine": {"name": "vllm"}, "model": {"name": "mock-llm"}},
            "metrics": [
                m("ttft", Stat::Percentile("50".into()), ttft_p50),
                m("output_throughput", Stat::Value, throughput),
                m("completed", Stat::Value, completed),
                m("failed", Stat::Value, failed),
            ],
        }],
    })
}

/// Settings of a project with the `interactive` profile and these detection settings.
fn settings(detection: Value) -> Value {
    json!({"slo_profiles": [{"name": "interactive", "ttft_ms": 2000, "tpot_ms": 50}], "detection": detection})
}

/// Five quiet baseline commits (median TTFT about 100 ms, 1000 tok/s, nothing failed).
async fn quiet_history(server: &TestServer, slug: &str, token: &str) {
    for (i, ttft) in [100.0, 101.0, 99.0, 100.5, 99.5].into_iter().enumerate() {
        let (status, r) = server
            .upload(
                slug,
                token,
                &chat_upload(i, ttft, 1000.0 + i as f64, 100.0, 0.0),
            )
            .await;
        assert_eq!(status, 201, "{r}");
    }
}

#[tokio::test]
async fn with_confirmation_on_an_alert_opens_only_when_the_next_commit_shows_the_change_too() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        for slug in ["confirmed", "refuted"] {
            let token = server.project_with_token(slug, json!({})).await;
            let body = settings(json!({"engine": {"confirm_commits": 1}}));
            let path = format!("/api/v1/projects/{slug}/settings");
            let (status, stored) = server.send("PUT", &path, ADMIN_TOKEN, &body).await;
            assert_eq!(status, 200, "{stored}");
            quiet_history(&server, slug, &token).await;
            // Median TTFT +20 %: significant, but it waits for the next commit.
            let (_, step) = server.upload(slug, &token, &chat_upload(5, 120.0, 1004.0, 100.0, 0.0)).await;
            assert_eq!(step["verdict"], "warn", "{db} {slug}: {step}");
            let v = verdict(&server, &step).await;
            let reasons = v["reasons"].as_array().unwrap();
            assert_eq!(reasons.len(), 1, "{db} {slug}: {v}");
            assert_eq!(reasons[0]["code"], "pending_confirmation");
            assert_eq!(
                reasons[0]["message"],
                "1 series changed significantly and wait for the next 1 commit(s) to confirm it before an alert opens"
            );
            assert_eq!(v["series_states"]["pending_confirmation"], 1, "{db} {slug}: {v}");
            assert!(server.alerts(slug, "").await.is_empty(), "{db} {slug}");

            // The next commit: the change stays (confirmed) or goes (refuted).
            let next_ttft = if slug == "confirmed" { 121.0 } else { 100.2 };
            let (_, next) = server
                .upload(slug, &token, &chat_upload(6, next_ttft, 1005.0, 100.0, 0.0))
                .await;
            // Refuted: back to the baseline, pass. Confirmed: the step is now in commit 6's
            // own baseline, so its +17 % against that baseline is undecided there: warn (the
            // alert is at commit 5, where the change happened).
            let expected = if slug == "confirmed" { "warn" } else { "pass" };
            assert_eq!(next["verdict"], expected, "{db} {slug}: {next}");
            if slug == "confirmed" {
                assert_eq!(
                    next["verdict_detail"]["reasons"][0]["code"], "undecided",
                    "{db}: {next}"
                );
            }
            let list = server.alerts(slug, "").await;
            let v = verdict(&server, &step).await;
            if slug == "confirmed" {
                assert_eq!(list.len(), 1, "{db}: {list:#?}");
                let a = &list[0];
                assert_eq!((a["kind"].as_str(), a["status"].as_str()), (Some("regression"), Some("open")));
                assert_eq!(a["commit"], commit(5), "the alert is at the commit that changed");
                assert_eq!(a["metric"], "ttft");
                assert_eq!(a["finding"]["confirmed_by"], json!([commit(6)]));
                assert_eq!(a["baseline_commits"].as_array().unwrap().len(), 5);
                assert_eq!(v["verdict"], "fail", "{db}: {v}");
                assert_eq!(v["series_states"]["regression"], 1, "{db}: {v}");
            } else {
                assert!(list.is_empty(), "{db}: {list:#?}");
                assert_eq!(v["verdict"], "pass", "{db}: {v}");
                assert_eq!(v["series_states"]["not_confirmed"], 1, "{db}: {v}");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn failed_requests_from_none_are_a_regression_and_a_mostly_failed_run_fails_the_verdict() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        quiet_history(&server, "demo", &token).await;
        // 3 of 100 requests fail: below the 5 % that makes a run invalid, but where no
        // baseline run had any, it is a finding (the relative change is unbounded).
        let (_, some) = server.upload("demo", &token, &chat_upload(5, 100.0, 1002.0, 97.0, 3.0)).await;
        let list = server.alerts("demo", "").await;
        assert_eq!(list.len(), 1, "{db}: {list:#?}");
        let a = &list[0];
        assert_eq!((a["kind"].as_str(), a["metric"].as_str()), (Some("regression"), Some("failed")));
        assert_eq!(
            a["summary"],
            "failed requests from 0 (0 → 3.00 requests): zero run-to-run spread in 5 baseline commits, so decided on the effect alone."
        );
        assert_eq!(a["severity"], "warn");
        assert_eq!(a["delta_pct"], Value::Null);
        // `failed` is not among the metrics whose regression fails CI by default.
        assert_eq!(some["verdict"], "warn", "{db}: {some}");

        // 30 of 100 failed: the run is invalid (neither tested nor a baseline) and fails CI.
        let (_, bad) = server.upload("demo", &token, &chat_upload(6, 100.0, 1002.0, 70.0, 30.0)).await;
        assert_eq!(bad["verdict"], "fail", "{db}: {bad}");
        let v = verdict(&server, &bad).await;
        let run = bad["run_id"].as_str().unwrap();
        let invalid: Vec<&Value> = v["reasons"].as_array().unwrap().iter().filter(|r| r["code"] == "invalid_run").collect();
        assert_eq!(invalid.len(), 1, "{db}: {v}");
        assert_eq!(invalid[0]["level"], "fail");
        assert_eq!(
            invalid[0]["message"],
            format!("run {run} is not valid (30.0 % of requests failed (more than 5 %)): it is neither tested nor part of a baseline")
        );
        // A project may choose to only warn about such runs.
        let body = settings(json!({"invalid_run_fails": false}));
        let (status, _) = server.send("PUT", "/api/v1/projects/demo/settings", ADMIN_TOKEN, &body).await;
        assert_eq!(status, 200);
        assert_eq!(verdict(&server, &bad).await["verdict"], "warn", "{db}");
    })
    .await;
}

/// Every request's TTFT (ms) of a vLLM `--save-detailed` file.
/// A per-request column of a vLLM `--save-detailed` file (`ttfts`, `latencies`), in ms.
fn per_request_ms(path: &str, column: &str) -> Vec<f64> {
    let doc: Value = serde_json::from_str(&repo_file(path)).unwrap();
    doc[column]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap() * 1000.0)
        .collect()
}

/// The Hodges–Lehmann shift: the median of every difference candidate − baseline.
fn hodges_lehmann(base: &[f64], cand: &[f64]) -> f64 {
    let mut d: Vec<f64> = cand
        .iter()
        .flat_map(|c| base.iter().map(move |b| c - b))
        .collect();
    d.sort_by(f64::total_cmp);
    let n = d.len();
    if n % 2 == 1 {
        d[n / 2]
    } else {
        (d[n / 2 - 1] + d[n / 2]) / 2.0
    }
}

#[tokio::test]
async fn findings_carry_the_per_request_shift_and_settings_changes_recompute_them() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let mut receipts = Vec::new();
        for (i, path) in GOODPUT_HISTORY.iter().enumerate() {
            let (status, r) = server.upload("demo", &token, &vllm_doc(i, path)).await;
            assert_eq!(status, 201, "{r}");
            receipts.push(r);
        }
        let tradeoffs = server.alerts("demo", "?kind=tradeoff").await;
        assert_eq!(tradeoffs.len(), 1, "{db}");
        // Median TTFT +122 %: the trade-off is as severe as its worst side.
        assert_eq!(tradeoffs[0]["severity"], "fail");
        assert_eq!(tradeoffs[0]["settings_version"], 1);

        // With three single-run baseline commits TTFT's doubling is not established at
        // α = 0.001 (its family index has t = 16 on 2 degrees of freedom, p ≈ 0.004: the first
        // baseline run's tail is far from the others'), so the trade-off is goodput's. Its
        // E2E side carries the shift of every request's latency: all 180 baseline requests
        // (three runs) against the candidate's 60.
        let parts = tradeoffs[0]["finding"]["parts"].as_array().unwrap();
        let e2e: Vec<&Value> = parts.iter().filter(|p| p["metric"] == "e2el").collect();
        assert_eq!(e2e.len(), 1, "{db}: {parts:#?}");
        assert_eq!(e2e[0]["change"], "improved");
        let shift = &e2e[0]["per_request"];
        assert_eq!(shift["test"], "mann_whitney_u", "{db}: {shift}");
        assert_eq!(
            (shift["n_baseline"].as_u64(), shift["n_candidate"].as_u64()),
            (Some(180), Some(60))
        );
        let base: Vec<f64> = GOODPUT_HISTORY[..3]
            .iter()
            .flat_map(|p| per_request_ms(p, "latencies"))
            .collect();
        let cand = per_request_ms(GOODPUT_HISTORY[3], "latencies");
        let want = hodges_lehmann(&base, &cand);
        let got = shift["shift"].as_f64().unwrap();
        assert!(
            (got - want).abs() < 1e-9,
            "{db}: shift {got} ms, Hodges–Lehmann by hand {want} ms"
        );
        let (lo, hi) = (
            shift["shift_ci"][0].as_f64().unwrap(),
            shift["shift_ci"][1].as_f64().unwrap(),
        );
        assert!(lo <= got && got <= hi && hi < 0.0, "{db}: [{lo}, {hi}]");
        let median_b = {
            let mut b = base.clone();
            b.sort_by(f64::total_cmp);
            (b[89] + b[90]) / 2.0
        };
        let sentence = format!(
            "per request, E2E latency shift {got:+.1} ms (95 % interval {lo:+.1} to {hi:+.1} ms, {:+.0} % of the baseline median; \
             Hodges–Lehmann over 180 baseline and 60 candidate requests, which are not independent)",
            got / median_b * 100.0
        );
        assert_eq!(shift["summary"], sentence.as_str(), "{db}");
        // The run page shows it under the trade-off's E2E side.
        let run = receipts[3]["run_id"].as_str().unwrap();
        let r = server.http.get(server.url(&format!("/runs/{run}"))).send().await.unwrap();
        let html = r.text().await.unwrap();
        let lines: Vec<&str> = html.lines().filter(|l| l.starts_with("<p class=\"per-request muted\">")).collect();
        assert!(lines.contains(&format!("<p class=\"per-request muted\">{}</p>", escaped(&sentence)).as_str()), "{db}: {lines:#?}");

        // A minimum effect of 200 % (and a fail level at least as high, as settings require):
        // nothing is a finding any more, the trade-off is superseded and the candidate's
        // verdict, recomputed with the new version, passes.
        let body = settings(json!({"engine": {"min_effect_pct": 200, "fail_effect_pct": 200}}));
        let (status, stored) = server
            .send("PUT", "/api/v1/projects/demo/settings", ADMIN_TOKEN, &body)
            .await;
        assert_eq!(
            (status, stored["version"].as_i64()),
            (200, Some(2)),
            "{stored}"
        );
        let t = &server.alerts("demo", "?kind=tradeoff").await[0];
        assert_eq!(t["status"], "resolved", "{db}: {t}");
        assert_eq!(
            t["reason"],
            "no longer found when the commit's analysis was recomputed"
        );
        let v = verdict(&server, &receipts[3]).await;
        assert_eq!(
            (v["verdict"].as_str(), v["settings_version"].as_i64()),
            (Some("pass"), Some(2)),
            "{db}: {v}"
        );

        // Back to the defaults: found again, under version 3.
        let (status, _) = server
            .send(
                "PUT",
                "/api/v1/projects/demo/settings",
                ADMIN_TOKEN,
                &settings(json!({})),
            )
            .await;
        assert_eq!(status, 200);
        let open = server.alerts("demo", "?kind=tradeoff&status=open").await;
        assert_eq!(open.len(), 1, "{db}: {open:#?}");
        assert_eq!(open[0]["settings_version"], 3);
        let v = verdict(&server, &receipts[3]).await;
        assert_eq!(
            (v["verdict"].as_str(), v["settings_version"].as_i64()),
            (Some("fail"), Some(3)),
            "{db}: {v}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_pull_request_is_compared_with_its_merge_base_not_with_what_ran_last() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        // `main`: median TTFT about 100 ms for three commits, then about 120 ms for ten.
        let main = [
            100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 120.0, 121.0, 119.0, 120.5, 119.5, 120.2,
            119.8, 120.7, 119.3, 120.1,
        ];
        for (i, ttft) in main.into_iter().enumerate() {
            let (status, r) = server
                .upload("demo", &token, &chat_upload(i, ttft, 1000.0, 100.0, 0.0))
                .await;
            assert_eq!(status, 201, "{r}");
        }
        // Two pull requests measure the same 120 ms: one branched before the step, one after.
        for (n, (branch, merge_base)) in [("before-step", 5), ("after-step", 15)]
            .into_iter()
            .enumerate()
        {
            let mut doc = chat_upload(100 + n, 120.0, 1000.0, 100.0, 0.0);
            doc["run"]["branch"] = json!(branch);
            doc["run"]["pull_request"] =
                json!({"number": 10 + n, "merge_base": commit(merge_base)});
            let (status, receipt) = server.upload("demo", &token, &doc).await;
            assert_eq!(status, 201, "{receipt}");
            let list = server.alerts("demo", &format!("?branch={branch}")).await;
            let (_, analysis) = server
                .get(&format!(
                    "/api/v1/runs/{}/analysis",
                    receipt["run_id"].as_str().unwrap()
                ))
                .await;
            let group = &analysis["analysis"]["groups"][0];
            assert_eq!(
                group["baseline_rule"],
                format!(
                    "the default branch `main` up to the merge base {}",
                    commit(merge_base)
                )
            );
            if branch == "before-step" {
                // Against main up to its merge base (100 ms): +20 %, though main's last
                // commits measure the same.
                assert_eq!(list.len(), 1, "{db}: {list:#?}");
                assert_eq!(
                    (list[0]["kind"].as_str(), list[0]["metric"].as_str()),
                    (Some("regression"), Some("ttft"))
                );
                let base: Vec<String> = (0..6).map(commit).collect();
                assert_eq!(list[0]["baseline_commits"], json!(base));
                assert_eq!(receipt["verdict"], "fail", "{db}");
            } else {
                assert!(list.is_empty(), "{db}: {list:#?}");
                assert_eq!(receipt["verdict"], "pass", "{db}: {receipt}");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn an_alert_links_the_run_that_holds_its_series_and_a_retry_answers_the_stored_verdict() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        quiet_history(&server, "demo", &token).await;
        // Commit 5: the chat cell's median TTFT +20 % (a run with an id, as CI retries need),
        // then another run of the same commit measuring another cell.
        let mut step = chat_upload(5, 120.0, 1004.0, 100.0, 0.0);
        step["run"]["id"] = json!("6d1f0c3e-5b0a-4c1e-9a57-0b0e8d1f2a3c");
        let (status, first) = server.upload("demo", &token, &step).await;
        assert_eq!(
            (status, first["verdict"].as_str()),
            (201, Some("fail")),
            "{db}: {first}"
        );
        let mut other = chat_upload(5, 50.0, 2000.0, 100.0, 0.0);
        other["results"][0]["cell"]["load"]["max_concurrency"] = json!(16);
        let (status, second) = server.upload("demo", &token, &other).await;
        assert_eq!(status, 201, "{db}: {second}");
        let list = server.alerts("demo", "?kind=regression").await;
        assert_eq!(list.len(), 1, "{db}: {list:#?}");
        assert_eq!(
            list[0]["run_id"], first["run_id"],
            "{db}: the alert's run holds its series"
        );
        // The retry of the first upload: already stored, with its stored verdict.
        let (status, retry) = server.upload("demo", &token, &step).await;
        assert_eq!(status, 200, "{db}: {retry}");
        assert_eq!(
            (retry["created"].as_bool(), retry["verdict"].as_str()),
            (Some(false), Some("fail")),
            "{db}: {retry}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_pinned_run_sets_the_level_and_the_history_the_spread() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let write = server.token("demo", "write").await;
        // Seven commits about 100 ms, then a good day: 90 ms (commit 7, one run).
        let history = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 90.0];
        let mut receipts = Vec::new();
        for (i, ttft) in history.into_iter().enumerate() {
            let (status, r) = server
                .upload("demo", &token, &chat_upload(i, ttft, 1000.0, 100.0, 0.0))
                .await;
            assert_eq!(status, 201, "{r}");
            receipts.push(r);
        }
        // The candidate: 100 ms, ordinary against the window.
        let (_, candidate) = server
            .upload("demo", &token, &chat_upload(8, 100.0, 1000.0, 100.0, 0.0))
            .await;
        assert!(
            server.alerts("demo", "?kind=regression").await.is_empty(),
            "{db}"
        );
        // Pinning the good day as the baseline: +11.1 % against its level, tested with the
        // spread of the seven other baseline runs.
        let (_, c) = server
            .get(&format!(
                "/api/v1/runs/{}",
                candidate["run_id"].as_str().unwrap()
            ))
            .await;
        let ttft = c["results"][0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "ttft")
            .unwrap()["series_id"]
            .as_str()
            .unwrap()
            .to_string();
        let path = format!("/api/v1/projects/demo/baselines/{ttft}");
        let body = json!({"run_id": receipts[7]["run_id"]});
        let (status, pin) = server.send("PUT", &path, &write, &body).await;
        assert_eq!(status, 200, "{db}: {pin}");
        let list = server.alerts("demo", "?kind=regression").await;
        assert_eq!(list.len(), 1, "{db}: {list:#?}");
        let f = &list[0]["finding"];
        assert_eq!(f["test"], "pinned_t", "{db}: {f}");
        assert_eq!(list[0]["commit"], commit(8));
        assert_eq!(list[0]["baseline_commits"], json!([commit(7)]));
        assert_eq!(
            f["df"], 6.0,
            "{db}: seven other baseline runs give the spread"
        );
        let summary = list[0]["summary"].as_str().unwrap();
        assert!(
            summary.starts_with("median TTFT +11.1 % (90.00 → 100.0 ms): t = "),
            "{db}: {summary}"
        );
        assert!(
            summary.ends_with(
                "against the pinned baseline, with the run-to-run spread of 7 recent runs."
            ),
            "{db}: {summary}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_step_is_one_alert_that_later_commits_continue_and_only_its_undoing_resolves() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        // Eight commits of three repeats about 100 ms, then a step to about 110 ms for two
        // commits, a commit still 4 % above (not significant with this spread, but there),
        // and one back at 100 ms.
        let around = |v: f64| [v - 0.5, v, v + 0.5];
        let mut levels = vec![100.0; 8];
        levels.extend([110.0, 110.0, 104.0, 100.0]);
        let mut last = Vec::new();
        for (i, level) in levels.into_iter().enumerate() {
            last.clear();
            for v in around(level) {
                let (status, r) = server
                    .upload("demo", &token, &chat_upload(i, v, 1000.0, 100.0, 0.0))
                    .await;
                assert_eq!(status, 201, "{r}");
                last.push(r);
            }
            let regressions = server.alerts("demo", "?kind=regression").await;
            match i {
                0..=7 => assert!(regressions.is_empty(), "{db} {i}: {regressions:#?}"),
                8 => {
                    assert_eq!(regressions.len(), 1, "{db}: {regressions:#?}");
                    assert_eq!(regressions[0]["commit"], commit(8));
                    assert_eq!(last[2]["verdict"], "fail");
                }
                9 => {
                    // The same step seen again: no second alert; the run warns, naming it.
                    assert_eq!(regressions.len(), 1, "{db}: {regressions:#?}");
                    let v = verdict(&server, &last[2]).await;
                    assert_eq!(v["verdict"], "warn", "{db}: {v}");
                    let reasons = v["reasons"].as_array().unwrap();
                    assert!(
                        reasons.iter().any(|r| r["code"] == "continuing"
                            && r["alert_id"] == regressions[0]["id"]
                            && r["message"].as_str().unwrap().starts_with(&format!(
                                "still there, from commit {} (open alert): median TTFT +",
                                &commit(8)[..12]
                            ))),
                        "{db}: {v}"
                    );
                }
                10 => {
                    // +4 % is not significant here, but the change has not gone away.
                    assert_eq!(regressions[0]["status"], "open", "{db}: {regressions:#?}");
                }
                _ => {
                    assert_eq!(
                        regressions[0]["status"], "resolved",
                        "{db}: {regressions:#?}"
                    );
                    assert_eq!(regressions[0]["resolved_by"], commit(11));
                }
            }
        }
    })
    .await;
}

#[tokio::test]
async fn the_background_scan_finds_the_commit_where_a_series_shifted() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        // Median TTFT about 100 ms for eight commits, then about 120 ms for eight, uploaded
        // back to back: the scans they ask for are merged (a scan may already see the shift
        // before the last commits arrive).
        let noise = [0.4, -0.3, 0.1, -0.5, 0.2, 0.0, -0.1, 0.3];
        for i in 0..16 {
            let level = if i < 8 { 100.0 } else { 120.0 };
            let (status, r) = server
                .upload(
                    "demo",
                    &token,
                    &chat_upload(i, level + noise[i % 8], 1000.0, 100.0, 0.0),
                )
                .await;
            assert_eq!(status, 201, "{r}");
        }
        // The scan runs in the background: wait until the open change points of TTFT are
        // what the whole history gives (scans of the history so far may have placed the
        // shift early while the new regime was short; the last scan supersedes them). This
        // waits for the task, it does not time it.
        let open_ttft = |alerts: &[Value]| -> Vec<String> {
            alerts
                .iter()
                .filter(|a| a["metric"] == "ttft")
                .map(|a| a["commit"].as_str().unwrap().to_string())
                .collect()
        };
        let mut found = Vec::new();
        for _ in 0..300 {
            found = server
                .alerts("demo", "?kind=change_point&status=open")
                .await;
            if open_ttft(&found) == [commit(8)] {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(open_ttft(&found), [commit(8)], "{db}: {found:#?}");
        let ttft: Vec<&Value> = found.iter().filter(|a| a["metric"] == "ttft").collect();
        assert_eq!(ttft[0]["finding"]["test"], "e_divisive");
        let summary = ttft[0]["summary"].as_str().unwrap();
        assert!(
            summary.starts_with("median TTFT shifted +20.0 % at commit ")
                && summary.contains("(100.0 → 120.0 ms, 8 commits before, "),
            "{db}: {summary}"
        );
    })
    .await;
}

#[tokio::test]
async fn concurrent_uploads_each_get_their_analysis() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        quiet_history(&server, "demo", &token).await;
        // Twelve commits uploaded at once, while the background scans of the history run:
        // every upload's analysis must be stored (a writer that loses a race on SQLite must
        // wait for the lock, not fail).
        let mut uploads = tokio::task::JoinSet::new();
        for i in 5..17 {
            let (http, url, token) = (
                server.http.clone(),
                server.url("/api/v1/projects/demo/runs"),
                token.clone(),
            );
            let doc = chat_upload(i, 100.0 + (i % 3) as f64 * 0.3, 1000.0, 100.0, 0.0);
            uploads.spawn(async move {
                let r = http
                    .post(url)
                    .bearer_auth(token)
                    .json(&doc)
                    .send()
                    .await
                    .unwrap();
                (r.status().as_u16(), r.json::<Value>().await.unwrap())
            });
        }
        let mut verdicts = Vec::new();
        while let Some(done) = uploads.join_next().await {
            let (status, receipt) = done.unwrap();
            assert_eq!(status, 201, "{db}: {receipt}");
            verdicts.push(receipt["verdict"].as_str().map(str::to_string));
        }
        assert!(verdicts.iter().all(Option::is_some), "{db}: {verdicts:?}");
    })
    .await;
}
