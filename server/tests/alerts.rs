//! Regression detection over real HTTP on every database: alerts, their lifecycle, verdicts,
//! exclusions and pinned baselines, with the real vLLM goodput history, the engine's FP8
//! KV-cache scenario uploaded in benchtrail's own format, and another tool's
//! one-baseline-then-candidate files.

use crate::common;

use benchtrail_core::regression::synthetic::{
    fp8_kv_cache, fp8_result_json, sha, Fp8Candidate, FP8_CONCURRENCY, FP8_REPEATS,
};
use benchtrail_core::regression::GroupInput;
use common::db::for_each_store;
use common::goodput::{vllm_doc, GOODPUT_HISTORY};
use common::server::{repo_file, TestServer, ADMIN_TOKEN};
use serde_json::{json, Value};

/// The seed of the engine's own FP8 test (`core/tests/regression_engine.rs`), so the expected
/// sentences are the ones the engine's test pins.
const FP8_SEED: u64 = 0x0066_7038_6b76;

fn commit_time(i: usize) -> String {
    format!("2026-11-{:02}T09:00:00Z", i + 1)
}

/// A project `demo` whose `file` SLO profile matches the files' `--goodput` flags; returns an
/// upload token and a write token.
async fn goodput_project(server: &TestServer) -> (String, String) {
    let upload = server.project_with_token("demo", json!({})).await;
    let write = server.token("demo", "write").await;
    let (status, body) = server.send("PUT",
        "/api/v1/projects/demo/settings",
        ADMIN_TOKEN,
        &json!({"slo_profiles": [{"name": "file", "ttft_ms": 60, "tpot_ms": 12, "e2el_ms": 1800}]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    (upload, write)
}

#[tokio::test]
async fn the_real_goodput_history_is_a_tradeoff_that_fails_the_verdict() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let (token, write) = goodput_project(&server).await;
        let mut receipts = Vec::new();
        for (i, path) in GOODPUT_HISTORY.iter().enumerate() {
            let (status, receipt) = server.upload("demo", &token, &vllm_doc(i, path)).await;
            assert_eq!(status, 201, "{db} {path}: {receipt}");
            receipts.push(receipt);
        }
        // The first baseline uploads have too little history: warn, never pass.
        assert_eq!(receipts[0]["verdict"], "warn", "{db}");
        assert_eq!(receipts[3]["verdict"], "fail", "{db}");
        let tradeoffs = server.alerts("demo", "?kind=tradeoff").await;
        assert_eq!(tradeoffs.len(), 1, "{db}: {tradeoffs:#?}");
        let t = &tradeoffs[0];
        println!("{db}: {}", t["summary"]);
        assert_eq!(
            t["summary"],
            // The TTFT family (+111 % geometric mean of its 5 statistics) is not a finding with 3
            // baseline commits (t = 9.04, df = 2, p ≈ 0.012 > α = 0.001): the harms are the
            // goodputs, tested series by series since they fell to 0.
            "output throughput +33.9 % but request goodput (file SLOs) -100.0 % \
             and request goodput (tool SLOs) -100.0 % and SLO attainment (file SLOs) -100.0 %; \
             median E2E latency -25.3 %.",
            "{db}"
        );
        assert_eq!(t["status"], "open");
        assert_eq!(t["metric"], "output_throughput");
        assert_eq!(t["commit"], format!("{:040x}", 3));
        assert_eq!(t["baseline_commits"].as_array().unwrap().len(), 3);
        assert_eq!(t["settings_version"], 2);
        assert_eq!(t["finding"]["test"], "tradeoff");
        assert!(t["finding"]["parts"].as_array().unwrap().len() >= 3);
        assert!(t["delta_pct"].as_f64().unwrap() > 0.0);
        let run = receipts[3]["run_id"].as_str().unwrap();
        let (status, verdict) = server.get(&format!("/api/v1/runs/{run}/verdict")).await;
        assert_eq!(status, 200);
        assert_eq!(verdict["verdict"], "fail", "{db}: {verdict}");
        assert!(verdict["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["code"] == "tradeoff"
                && r["level"] == "fail"
                && r["message"] == t["summary"]));

        // Triage: read scope cannot, write scope can; dismissal needs a reason.
        let id = t["id"].as_str().unwrap();
        let path = format!("/api/v1/alerts/{id}");
        let read = server.token("demo", "read").await;
        let ack = json!({"status": "acknowledged"});
        assert_eq!(server.send("PATCH", &path, &read, &ack).await.0, 403);
        assert_eq!(server.send("PATCH", &path, &token, &ack).await.0, 403);
        let r = server
            .http
            .patch(server.url(&path))
            .json(&ack)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401);
        let (status, body) = server.send("PATCH", &path, &write, &ack).await;
        assert_eq!(
            (status, body["status"].clone()),
            (200, json!("acknowledged")),
            "{body}"
        );
        let (status, body) = server
            .send("PATCH", &path, &write, &json!({"status": "dismissed"}))
            .await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["pointer"], "/reason");
        let (status, body) = server
            .send("PATCH", &path, &write, &json!({"status": "resolved"}))
            .await;
        assert_eq!(status, 422, "{body}");
        // A reason is a sentence or two, not a log: at most 2000 characters.
        let (status, body) = server
            .send(
                "PATCH",
                &path,
                &write,
                &json!({"status": "acknowledged", "reason": "é".repeat(2001)}),
            )
            .await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["pointer"], "/reason");
        assert_eq!(
            body["detail"],
            "the reason has 2001 characters; at most 2000 are accepted"
        );
        let (status, body) = server
            .send(
                "PATCH",
                &path,
                &write,
                &json!({"status": "acknowledged", "reason": "é".repeat(2000)}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["reason"].as_str().unwrap().chars().count(), 2000);
        let dismiss = json!({"status": "dismissed", "reason": "the prefill change is intended"});
        let (status, body) = server.send("PATCH", &path, &write, &dismiss).await;
        assert_eq!(status, 200);
        assert_eq!(body["reason"], "the prefill change is intended");
        // A dismissed trade-off no longer counts; it folded every harm of the run (the goodputs
        // and SLO attainment). The TTFT family is no finding on 3 baseline commits, but its
        // +118 % stays undecided: the run warns, never "no regressions".
        let (_, verdict) = server.get(&format!("/api/v1/runs/{run}/verdict")).await;
        let codes: Vec<&str> = verdict["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["code"].as_str().unwrap())
            .collect();
        assert_eq!(codes, ["undecided"], "{db}: {verdict}");
        assert!(
            verdict["reasons"][0]["message"]
                .as_str()
                .unwrap()
                .starts_with("TTFT +118.2 %: not decided: 3 baseline commits are too few"),
            "{db}: {verdict}"
        );
        assert_eq!(verdict["verdict"], "warn", "{db}: {verdict}");
        // Filters.
        assert_eq!(server.alerts("demo", "?status=dismissed").await.len(), 1);
        assert!(server
            .alerts("demo", "?status=open&kind=tradeoff")
            .await
            .is_empty());
        assert_eq!(
            server
                .alerts("demo", "?metric=output_throughput&kind=tradeoff")
                .await
                .len(),
            1
        );
        assert!(server.alerts("demo", "?branch=other").await.is_empty());
        assert_eq!(
            server.get("/api/v1/projects/demo/alerts?kind=nope").await.0,
            400
        );
        // A query parameter of the wrong type is named, as every other parameter fault is.
        let (status, problem) = server.get("/api/v1/projects/demo/alerts?limit=abc").await;
        assert_eq!(status, 400, "{problem}");
        assert_eq!(problem["parameter"], "limit", "{problem}");
        assert_eq!(problem["detail"], "`limit`: invalid digit found in string");
        let (_, page) = server.get("/api/v1/projects/demo/alerts?limit=1").await;
        assert_eq!(page["items"].as_array().unwrap().len(), 1);
        // The alert is reachable from its run and its series.
        let (_, of_run) = server.get(&format!("/api/v1/runs/{run}/alerts")).await;
        assert!(of_run["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["id"] == t["id"]));
        let sid = t["series_id"].as_str().unwrap();
        let (_, of_series) = server
            .get(&format!("/api/v1/projects/demo/series/{sid}/alerts"))
            .await;
        assert!(of_series["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["id"] == t["id"]));
        let (status, one) = server.get(&path).await;
        assert_eq!((status, one["links"]["self"].clone()), (200, json!(path)));
    })
    .await;
}

fn fp8_upload(sha: &str, i: usize, results: Vec<Value>) -> Value {
    json!({
        "run": {"commit": {"sha": sha, "time": format!("2026-10-{:02}T09:00:00Z", i + 1)}, "branch": "main"},
        "results": results,
    })
}

/// Uploads commit `sha` (number `i`) with FP8_REPEATS repeats; `runs(group, series, r)` gives
/// each value. Returns the last receipt.
async fn upload_fp8_commit(
    server: &TestServer,
    token: &str,
    groups: &[GroupInput],
    sha: &str,
    i: usize,
    value: impl Fn(&GroupInput, usize, usize) -> f64,
) -> Value {
    let mut last = Value::Null;
    for r in 0..FP8_REPEATS {
        let results = groups
            .iter()
            .zip(FP8_CONCURRENCY)
            .map(|(g, c)| fp8_result_json(g, c, |k| value(g, k, r)))
            .collect();
        let (status, receipt) = server
            .upload("demo", token, &fp8_upload(sha, i, results))
            .await;
        assert_eq!(status, 201, "{receipt}");
        last = receipt;
    }
    last
}

#[tokio::test]
async fn fp8_kv_cache_uploads_give_a_tradeoff_per_cell_and_a_baseline_like_commit_resolves_them() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let fp8 = fp8_kv_cache(FP8_SEED, Fp8Candidate::Fp8);
        let like = fp8_kv_cache(FP8_SEED, Fp8Candidate::BaselineLike);
        let commits = fp8[0].series[0].history.len();
        for i in 0..commits {
            upload_fp8_commit(&server, &token, &fp8, &sha(7, i), i, |g, k, r| {
                g.series[k].history[i].runs[r].value
            })
            .await;
        }
        assert!(server.alerts("demo", "?status=open").await.is_empty(), "{db}");
        let receipt = upload_fp8_commit(&server, &token, &fp8, &sha(7, 100), commits, |g, k, r| {
            g.series[k].candidate.as_ref().unwrap().runs[r].value
        })
        .await;
        assert_eq!(receipt["verdict"], "fail", "{db}");
        let open = server.alerts("demo", "?status=open").await;
        let summaries: Vec<(String, String)> = open
            .iter()
            .map(|a| (a["cell"].as_str().unwrap().to_string(), a["summary"].as_str().unwrap().to_string()))
            .collect();
        assert!(open.iter().all(|a| a["kind"] == "tradeoff"), "{db}: {summaries:#?}");
        // The engine's own sentences for this scenario (core/tests/regression_engine.rs), and
        // where the finish times cross: from the compared medians of the run's analysis,
        // N* = 1 + (TTFT_c − TTFT_b) / (TPOT_b − TPOT_c), longer than ⌈N*⌉ tokens.
        let run = receipt["run_id"].as_str().unwrap();
        let (_, stored) = server.get(&format!("/api/v1/runs/{run}/analysis")).await;
        let crossing = |cell: &str| -> String {
            let group = stored["analysis"]["groups"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["cell"].as_str().unwrap().starts_with(cell))
                .unwrap();
            let means = |metric: &str| -> (f64, f64) {
                let s = group["report"]["series"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|s| s["metric"] == metric && s["stat"] == "p50")
                    .unwrap();
                let o = &s["comparison"]["outcome"];
                (o["baseline_mean"].as_f64().unwrap(), o["candidate_mean"].as_f64().unwrap())
            };
            let (ttft, tpot) = (means("ttft"), means("tpot"));
            let (later, faster) = (ttft.1 - ttft.0, tpot.0 - tpot.1);
            assert!(later > 10.0 && faster > 0.0, "{db}: {later} {faster}");
            format!(
                "starts {later:.0} ms later, finishes sooner for answers longer than {} tokens",
                (1.0 + later / faster).ceil()
            )
        };
        let want = [
            ("max_concurrency=1;", "output throughput +2.3 % but median TTFT +6.5 % (p95 +8.1 %); median E2E latency -3.2 %"),
            ("max_concurrency=4;", "output throughput +3.6 % but median TTFT +8.8 % (p95 +11.3 %); median E2E latency -4.5 %"),
            ("max_concurrency=16;", "output throughput +5.3 % but median TTFT +10.9 % (p95 +12.2 %); median E2E latency -7.0 %"),
        ]
        .map(|(c, s)| (c, format!("{s}: {}.", crossing(c))));
        assert_eq!(summaries.len(), 3, "{db}: {summaries:#?}");
        for (c, s) in &want {
            let found: Vec<&String> = summaries
                .iter()
                .filter(|(cell, _)| cell.starts_with(c))
                .map(|(_, summary)| summary)
                .collect();
            assert_eq!(found, [s], "{db} {c}");
        }
        // TPOT's improvement is stored but needs no triage.
        let improvements = server.alerts("demo", "?kind=improvement").await;
        assert!(!improvements.is_empty());
        assert!(improvements.iter().all(|a| a["status"] == "resolved"));

        // A further baseline-like commit: no new alert; it returns to the trade-offs'
        // baselines, so they resolve, naming the commit.
        let before = server.alerts("demo", "?limit=500").await.len();
        let receipt = upload_fp8_commit(&server, &token, &like, &sha(7, 101), commits + 1, |g, k, r| {
            g.series[k].candidate.as_ref().unwrap().runs[r].value
        })
        .await;
        let all = server.alerts("demo", "?limit=500").await;
        let new: Vec<&Value> = all
            .iter()
            .filter(|a| a["commit"] == sha(7, 101) && a["kind"] != "change_point")
            .collect();
        assert!(new.is_empty(), "{db}: {new:#?}");
        assert!(all.len() >= before);
        assert_eq!(receipt["verdict"], "pass", "{db}");
        let tradeoffs = server.alerts("demo", "?kind=tradeoff").await;
        assert_eq!(tradeoffs.len(), 3);
        for t in &tradeoffs {
            assert_eq!(t["status"], "resolved", "{db}: {t}");
            assert_eq!(t["resolved_by"], sha(7, 101));
        }
    })
    .await;
}

/// One baseline run, then the candidate, for each tool's generated files: (tool, files of the
/// baseline, files of the candidate), each file as (name in the upload, path in the repository).
type Upload = &'static [(&'static str, &'static str)];
const ONE_BASELINE_THEN_CANDIDATE: &[(&str, Upload, Upload)] = &[
    (
        "sglang",
        &[("result.jsonl", "testdata/sglang/sglang-0.5.23-mock-baseline_completions_c4_isl512_osl128.jsonl")],
        &[("result.jsonl", "testdata/sglang/sglang-0.5.23-mock-candidate_completions_c4_isl512_osl128.jsonl")],
    ),
    (
        "aiperf",
        &[
            ("a/profile_export_aiperf.json", "testdata/aiperf/baseline_completions_c4_isl512_osl128/profile_export_aiperf.json"),
            ("a/profile_export.jsonl", "testdata/aiperf/baseline_completions_c4_isl512_osl128/profile_export.jsonl"),
        ],
        &[
            ("a/profile_export_aiperf.json", "testdata/aiperf/candidate_completions_c4_isl512_osl128/profile_export_aiperf.json"),
            ("a/profile_export.jsonl", "testdata/aiperf/candidate_completions_c4_isl512_osl128/profile_export.jsonl"),
        ],
    ),
    (
        "guidellm",
        &[("benchmarks.json", "testdata/guidellm/baseline_concurrent_1-4-16_isl512_osl128.json")],
        &[("benchmarks.json", "testdata/guidellm/candidate_concurrent_1-4-16_isl512_osl128.json")],
    ),
    (
        "genai-perf",
        &[("profile_export_genai_perf.json", "testdata/genai-perf/baseline_completions_c1_isl512_osl64/mock-llm-openai-completions-concurrency1/profile_export_genai_perf.json")],
        &[("profile_export_genai_perf.json", "testdata/genai-perf/candidate_completions_c1_isl512_osl64/mock-llm-openai-completions-concurrency1/profile_export_genai_perf.json")],
    ),
];

#[tokio::test]
async fn one_baseline_then_candidate_states_the_tradeoff_as_effect_only_and_opens_no_alert() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        for (tool, baseline, candidate) in ONE_BASELINE_THEN_CANDIDATE {
            let token = server.project_with_token(tool, json!({})).await;
            let mut last = Value::Null;
            for (i, files) in [baseline, candidate].iter().enumerate() {
                let doc = json!({
                    "run": {"commit": {"sha": format!("{i:040x}"), "time": commit_time(i)}, "branch": "main"},
                    "files": files.iter().map(|(name, path)| json!({"name": name, "content": repo_file(path)})).collect::<Vec<_>>(),
                });
                let (status, receipt) = server.upload(tool, &token, &doc).await;
                assert_eq!(status, 201, "{tool}: {receipt}");
                last = receipt;
            }
            let (_, list) = server.get(&format!("/api/v1/projects/{tool}/alerts")).await;
            assert_eq!(list["items"], json!([]), "{db} {tool}: no alert without enough history");
            let run = last["run_id"].as_str().unwrap();
            let (_, verdict) = server.get(&format!("/api/v1/runs/{run}/verdict")).await;
            assert_eq!(verdict["verdict"], "warn", "{db} {tool}");
            let reasons = verdict["reasons"].as_array().unwrap();
            assert!(
                reasons.iter().any(|r| r["code"] == "insufficient_data"
                    && r["message"].as_str().unwrap().contains("1 baseline commit(s) with a valid run; at least 3 are needed")),
                "{db} {tool}: {reasons:#?}"
            );
            let effect: Vec<&str> = reasons
                .iter()
                .filter(|r| r["code"] == "effect_only")
                .map(|r| r["message"].as_str().unwrap())
                .collect();
            assert!(
                effect.iter().any(|m| m.starts_with("effect only, not tested (insufficient data): ")
                    && m.contains(" throughput +")
                    && m.contains(" TTFT +")),
                "{db} {tool}: {effect:#?}"
            );
            assert!(verdict["series_states"]["insufficient_data"].as_u64().unwrap() > 0);
            let (status, analysis) = server.get(&format!("/api/v1/runs/{run}/analysis")).await;
            assert_eq!(status, 200);
            let groups = analysis["analysis"]["groups"].as_array().unwrap();
            assert!(
                groups.iter().any(|g| g["effect_only"].as_array().unwrap().iter().any(|f| f["kind"] == "tradeoff"
                    && f["parts"].as_array().unwrap().iter().all(|p| p["test"] == "effect_only"))),
                "{db} {tool}"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn excluding_and_pinning_recompute_the_analysis() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let (token, write) = goodput_project(&server).await;
        let mut runs = Vec::new();
        for (i, path) in GOODPUT_HISTORY.iter().enumerate() {
            let (_, receipt) = server.upload("demo", &token, &vllm_doc(i, path)).await;
            runs.push(receipt["run_id"].as_str().unwrap().to_string());
        }
        assert_eq!(
            server
                .alerts("demo", "?kind=tradeoff&status=open")
                .await
                .len(),
            1,
            "{db}"
        );
        // Excluding a baseline run leaves two baseline commits: insufficient data, the
        // trade-off is no longer found and resolves; the verdict warns instead of failing.
        let path = format!("/api/v1/runs/{}/exclusion", runs[0]);
        let body = json!({"reason": "noisy neighbour"});
        assert_eq!(server.send("POST", &path, &token, &body).await.0, 403);
        assert_eq!(
            server
                .send("POST", &path, &write, &json!({"reason": " "}))
                .await
                .0,
            422
        );
        let (status, ex) = server.send("POST", &path, &write, &body).await;
        assert_eq!(status, 200, "{ex}");
        assert_eq!(ex["reason"], "noisy neighbour");
        let t = &server.alerts("demo", "?kind=tradeoff").await[0];
        assert_eq!(t["status"], "resolved", "{db}: {t}");
        let (_, verdict) = server
            .get(&format!("/api/v1/runs/{}/verdict", runs[3]))
            .await;
        assert_eq!(verdict["verdict"], "warn", "{db}: {verdict}");
        // Pinning the second baseline run as the baseline of the throughput series: the
        // group is compared against that commit's level; with one run there, and only one other
        // valid baseline run to measure the spread with, the comparison is effect only: the
        // trade-off is described, not alerted.
        let sid = t["series_id"].as_str().unwrap();
        let pin_path = format!("/api/v1/projects/demo/baselines/{sid}");
        let pin = json!({"run_id": runs[1]});
        assert_eq!(server.send("PUT", &pin_path, &token, &pin).await.0, 403);
        let (status, stored) = server.send("PUT", &pin_path, &write, &pin).await;
        assert_eq!(status, 200, "{stored}");
        assert_eq!(stored["commit_sha"], format!("{:040x}", 1));
        let t = &server.alerts("demo", "?kind=tradeoff").await[0];
        assert_eq!(t["status"], "resolved", "{db}: {t}");
        let (_, verdict) = server
            .get(&format!("/api/v1/runs/{}/verdict", runs[3]))
            .await;
        assert_eq!(verdict["verdict"], "warn", "{db}: {verdict}");
        let (_, analysis) = server
            .get(&format!("/api/v1/runs/{}/analysis", runs[3]))
            .await;
        let group = &analysis["analysis"]["groups"][0];
        assert_eq!(
            group["baseline_rule"],
            format!(
                "pinned: commit {:040x} (run-to-run spread from the default branch `main` before this commit)",
                1
            )
        );
        let described: Vec<&Value> = group["effect_only"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "tradeoff")
            .collect();
        assert_eq!(described.len(), 1, "{db}: {group}");
        assert_eq!(described[0]["baseline_commits"], json!([format!("{:040x}", 1)]));
        let bad = json!({"run_id": "00000000-0000-0000-0000-000000000000"});
        assert_eq!(server.send("PUT", &pin_path, &write, &bad).await.0, 422);
    })
    .await;
}
