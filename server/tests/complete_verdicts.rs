//! Complete verdicts and counted repeats over real HTTP on every database: a cell of the
//! baseline commit missing from the candidate makes the verdict `incomplete` naming it (in the
//! verdict, the upload's answer and the run page), a new cell is "new, no baseline yet", a
//! metric not written this time is "not measured" and opens no alert, and a commit whose
//! repeats are announced gets a provisional verdict (never `fail`) until the last is in.

use crate::common;

use benchtrail_core::metric::{MetricValue, Stat};
use common::db::for_each_store;
use common::server::{TestServer, ADMIN_TOKEN};
use serde_json::{json, Value};

fn commit(i: usize) -> String {
    format!("{i:040x}")
}

/// The key of the cell of concurrency `c` that [`result`] uploads.
fn cell_key(c: u32) -> String {
    format!("max_concurrency={c};input_len=512;output_len=128;num_prompts=100")
}

/// One result of cell `max_concurrency = c` with median TTFT (ms) and, when given, output
/// throughput (tok/s).
fn result(c: u32, ttft_p50: f64, throughput: Option<f64>) -> Value {
    let m = |name: &str, stat: Stat, v: f64| {
        serde_json::to_value(MetricValue::new(name, stat, v, None)).unwrap()
    };
    let mut metrics = vec![m("ttft", Stat::Percentile("50".into()), ttft_p50)];
    metrics.extend(throughput.map(|t| m("output_throughput", Stat::Value, t)));
    json!({
        "cell": {"load": {"max_concurrency": c}, "input_len": 512, "output_len": 128, "num_prompts": 100},
        "configuration": {"engine": {"name": "vllm"}, "model": {"name": "mock-llm"}},
        "metrics": metrics,
    })
}

fn upload(i: usize, results: Vec<Value>) -> Value {
    json!({
        "run": {"commit": {"sha": commit(i), "time": format!("2026-11-01T10:{i:02}:00Z")}, "branch": "main"},
        "results": results,
    })
}

const TTFT: [f64; 5] = [100.0, 101.0, 99.0, 100.5, 99.5];

/// Five baseline commits with cells c=4 and c=16 (TTFT and throughput in both).
async fn two_cell_history(server: &TestServer, slug: &str, token: &str) {
    for (i, ttft) in TTFT.into_iter().enumerate() {
        let t = Some(1000.0 + i as f64);
        let doc = upload(i, vec![result(4, ttft, t), result(16, ttft * 2.0, t)]);
        let (status, r) = server.upload(slug, token, &doc).await;
        assert_eq!(status, 201, "{r}");
    }
}

async fn verdict(server: &TestServer, run_id: &str) -> Value {
    let (status, v) = server.get(&format!("/api/v1/runs/{run_id}/verdict")).await;
    assert_eq!(status, 200, "{v}");
    v
}

async fn page(server: &TestServer, run_id: &str) -> String {
    let r = server
        .http
        .get(server.url(&format!("/runs/{run_id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    r.text().await.unwrap()
}

/// The (level, code) of a verdict's reasons, but `no_baseline` (whose wording belongs to the
/// no-baseline rule; a new cell with one has no `new_cell` reason, it says the same).
fn codes(v: &Value) -> Vec<(String, String)> {
    let new_cell_said = v["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["code"] == "no_baseline");
    v["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["code"] != "no_baseline")
        .chain(
            new_cell_said
                .then_some(&json!({"level": "warn", "code": "new_cell"}))
                .into_iter(),
        )
        .map(|r| {
            (
                r["level"].as_str().unwrap().to_string(),
                r["code"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_dropped_cell_makes_the_verdict_incomplete_naming_it_and_an_added_one_is_new() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("cells", json!({})).await;
        two_cell_history(&server, "cells", &token).await;
        // The candidate drops c=16 and adds c=64; c=4 is unchanged.
        let doc = upload(
            5,
            vec![
                result(4, 100.0, Some(1003.0)),
                result(64, 300.0, Some(900.0)),
            ],
        );
        let (status, receipt) = server.upload("cells", &token, &doc).await;
        assert_eq!(status, 201, "{receipt}");
        assert_eq!(receipt["verdict"], "incomplete", "{db}: {receipt}");
        let run = receipt["run_id"].as_str().unwrap();
        let v = verdict(&server, run).await;
        assert_eq!(v, receipt["verdict_detail"], "{db}");
        assert_eq!(v["verdict"], "incomplete");
        assert_eq!(v["provisional"], false);
        let missing = v["missing_cells"].as_array().unwrap();
        assert_eq!(missing.len(), 1, "{db}: {v}");
        assert_eq!(missing[0]["cell"], cell_key(16));
        assert_eq!(missing[0]["baseline_commit"], commit(4));
        let msg = format!(
            "cell `{}` is missing: baseline commit {} has it, this commit has no result for it",
            cell_key(16),
            &commit(4)[..12]
        );
        assert_eq!(missing[0]["message"], msg);
        let new = v["new_cells"].as_array().unwrap();
        assert_eq!(new.len(), 1, "{db}: {v}");
        assert_eq!(new[0]["cell"], cell_key(64));
        assert_eq!(
            new[0]["message"],
            format!("cell `{}` is new, no baseline yet", cell_key(64))
        );
        assert_eq!(
            codes(&v),
            [
                ("incomplete".to_string(), "missing_cell".to_string()),
                ("warn".to_string(), "new_cell".to_string()),
            ],
            "{db}: {v}"
        );
        assert_eq!(v["reasons"][0]["message"], msg);
        assert_eq!(v["reasons"][0]["cell"], cell_key(16));
        // The run page names both.
        let html = page(&server, run).await;
        assert!(html.contains(r#"data-verdict="incomplete""#), "{db}");
        assert!(html.contains(r#"id="missing-cells""#), "{db}");
        assert!(html.contains(&format!(
            r#"<li class="missing-cell" data-cell="{}"><code class="cell-key">{}</code> <span class="muted">(baseline commit <code>{}</code>)</span></li>"#,
            cell_key(16),
            cell_key(16),
            &commit(4)[..12]
        )), "{db}");
        assert!(html.contains(&format!(
            r#"<li class="new-cell" data-cell="{}"><code class="cell-key">{}</code>: new, no baseline yet</li>"#,
            cell_key(64),
            cell_key(64)
        )), "{db}");
        // No alert: a missing cell is a verdict, not a regression.
        assert!(server.alerts("cells", "?status=open").await.is_empty());

        // The same candidate with `incomplete_fails: false`: a warning, never a pass.
        let body = json!({"slo_profiles": [], "detection": {"incomplete_fails": false}});
        let (status, s) = server
            .send("PUT", "/api/v1/projects/cells/settings", ADMIN_TOKEN, &body)
            .await;
        assert_eq!(status, 200, "{s}");
        let v = verdict(&server, run).await;
        assert_eq!(v["verdict"], "warn", "{db}: {v}");
        assert_eq!(
            codes(&v),
            [
                ("warn".to_string(), "missing_cell".to_string()),
                ("warn".to_string(), "new_cell".to_string()),
            ]
        );

        // The commit after it has all three cells: nothing missing, nothing new; c=64 has one
        // baseline commit (insufficient data), so a warning.
        let doc = upload(
            6,
            vec![
                result(4, 100.0, Some(1004.0)),
                result(16, 200.0, Some(1004.0)),
                result(64, 300.0, Some(900.0)),
            ],
        );
        let (_, next) = server.upload("cells", &token, &doc).await;
        let v = &next["verdict_detail"];
        assert_eq!(v["missing_cells"], json!([]), "{db}: {v}");
        assert_eq!(v["new_cells"], json!([]), "{db}: {v}");
        assert_eq!(
            codes(v),
            [("warn".to_string(), "insufficient_data".to_string())],
            "{db}: {v}"
        );
        assert_eq!(v["reasons"][0]["cell"], cell_key(64));
        // And one that drops c=64 again is incomplete against it (the last baseline commit).
        let doc = upload(
            7,
            vec![result(4, 100.0, Some(1004.0)), result(16, 200.0, Some(1004.0))],
        );
        let (_, again) = server.upload("cells", &token, &doc).await;
        let v = &again["verdict_detail"];
        assert_eq!(v["missing_cells"][0]["cell"], cell_key(64), "{db}: {v}");
        assert_eq!(v["missing_cells"][0]["baseline_commit"], commit(6));
    })
    .await;
}

#[tokio::test]
async fn a_metric_not_written_this_time_is_not_measured_and_opens_no_alert() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("gap", json!({})).await;
        two_cell_history(&server, "gap", &token).await;
        // Both cells are there; c=4 lacks output throughput this time.
        let doc = upload(
            5,
            vec![result(4, 100.0, None), result(16, 200.0, Some(1003.0))],
        );
        let (status, receipt) = server.upload("gap", &token, &doc).await;
        assert_eq!(status, 201, "{receipt}");
        assert_eq!(receipt["verdict"], "warn", "{db}: {receipt}");
        let v = &receipt["verdict_detail"];
        assert_eq!(v["missing_cells"], json!([]));
        let gaps = v["not_measured"].as_array().unwrap();
        assert_eq!(gaps.len(), 1, "{db}: {v}");
        assert_eq!(gaps[0]["cell"], cell_key(4));
        assert_eq!(gaps[0]["series"], json!(["output throughput"]));
        assert_eq!(
            gaps[0]["message"],
            format!("not measured in cell `{}`: output throughput (in the baseline, absent from this commit's result: a gap, no alert)", cell_key(4))
        );
        assert_eq!(
            codes(v),
            [("warn".to_string(), "not_measured".to_string())],
            "{db}: {v}"
        );
        assert_eq!(v["series_states"]["not_measured"], 1, "{db}: {v}");
        assert!(v["series_states"].get("missing").is_none(), "{db}: {v}");
        assert!(server.alerts("gap", "").await.is_empty(), "{db}");
        let html = page(&server, receipt["run_id"].as_str().unwrap()).await;
        assert!(html.contains(&format!(
            r#"<li class="not-measured" data-cell="{}"><code class="cell-key">{}</code>: output throughput not measured</li>"#,
            cell_key(4),
            cell_key(4)
        )), "{db}");
    })
    .await;
}

/// Commit 5's repeat `k` of median TTFT `ttft` in cell c=4, announcing `expected` repeats.
fn repeat(k: u32, ttft: f64, expected: Option<u32>) -> Value {
    cell_repeat(k, 4, ttft, expected)
}

/// Commit 5's repeat `k` of cell `c` alone (median TTFT `ttft`), announcing `expected`
/// repeats: with several cells, one CI job per cell.
fn cell_repeat(k: u32, c: u32, ttft: f64, expected: Option<u32>) -> Value {
    let mut doc = upload(5, vec![result(c, ttft, Some(1003.0))]);
    doc["run"]["repeat_index"] = json!(k);
    if let Some(n) = expected {
        doc["run"]["repeats_expected"] = json!(n);
    }
    doc
}

#[tokio::test]
async fn announced_repeats_keep_the_verdict_provisional_until_the_last_is_in() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("reps", json!({})).await;
        for (i, ttft) in TTFT.into_iter().enumerate() {
            let doc = upload(i, vec![result(4, ttft, Some(1000.0 + i as f64))]);
            assert_eq!(server.upload("reps", &token, &doc).await.0, 201);
        }
        // A real step: median TTFT +20 % in every repeat.
        for (k, ttft) in [120.0, 121.0].into_iter().enumerate() {
            let (status, r) = server
                .upload("reps", &token, &repeat(k as u32, ttft, Some(3)))
                .await;
            assert_eq!(status, 201, "{r}");
            assert_eq!(r["verdict"], "warn", "{db}: repeat {k}: {r}");
            let v = &r["verdict_detail"];
            assert_eq!(v["provisional"], true);
            assert_eq!(
                v["repeats"],
                json!({"expected": 3, "received": k + 1, "source": "run"})
            );
            assert_eq!(
                codes(v),
                [
                    ("warn".to_string(), "regression".to_string()),
                    ("warn".to_string(), "pending_repeats".to_string()),
                ],
                "{db}: repeat {k}: {v}"
            );
            let held = v["reasons"][0]["message"].as_str().unwrap();
            let prefix = format!("provisional ({} of 3 repeats in, would be fail, no alert yet): median TTFT +", k + 1);
            assert!(held.starts_with(&prefix), "{db}: {held}");
            assert_eq!(
                v["reasons"][1]["message"],
                format!("{} of 3 repeats of this commit are in (as its uploads announced): the verdict is provisional and becomes final with the last repeat's upload", k + 1)
            );
            assert!(server.alerts("reps", "?status=open").await.is_empty(), "{db}");
        }
        // The last repeat: final, and the step fails.
        let (status, r) = server.upload("reps", &token, &repeat(2, 119.0, Some(3))).await;
        assert_eq!(status, 201, "{r}");
        assert_eq!(r["verdict"], "fail", "{db}: {r}");
        let v = &r["verdict_detail"];
        assert_eq!(v["provisional"], false);
        assert_eq!(v["repeats"], json!({"expected": 3, "received": 3, "source": "run"}));
        assert!(codes(v).iter().all(|(_, c)| c != "pending_repeats"), "{db}: {v}");
        let open = server.alerts("reps", "?status=open").await;
        assert_eq!(open.len(), 1, "{db}: {open:?}");
        assert_eq!(open[0]["kind"], "regression");
        assert_eq!(open[0]["commit"], commit(5));
        // Every repeat's run now reads the final verdict.
        let (_, runs) = server.get("/api/v1/projects/reps/runs").await;
        let runs: Vec<&Value> = runs["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["commit_sha"] == commit(5))
            .collect();
        assert_eq!(runs.len(), 3, "{db}");
        for run in runs {
            assert_eq!(run["repeats_expected"], 3);
            let v = verdict(&server, run["id"].as_str().unwrap()).await;
            assert_eq!(v["verdict"], "fail", "{db}: {v}");
        }
    })
    .await;
}

#[tokio::test]
async fn cells_uploaded_as_runs_of_their_own_count_each_cells_repeats() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("split", json!({})).await;
        two_cell_history(&server, "split", &token).await;
        // (cell, repeat) in upload order, the repeats received after each upload and the cell
        // they count: the least measured cell's runs, not the commit's runs (which were 2
        // after the second upload: final too early, with one repeat of each cell). No cell is
        // named while the one run measured every cell of the commit; of equals, the first
        // (`max_concurrency=16` sorts before `=4`).
        let steps = [
            (4, 0, 1, None),
            (16, 0, 1, Some(16)),
            (4, 1, 1, Some(16)),
            (16, 1, 2, Some(16)),
        ];
        for (i, (c, k, received, fewest)) in steps.into_iter().enumerate() {
            let ttft = if c == 4 { 100.0 } else { 200.0 };
            let (status, r) = server
                .upload("split", &token, &cell_repeat(k, c, ttft, Some(2)))
                .await;
            assert_eq!(status, 201, "{db}: upload {i}: {r}");
            let v = &r["verdict_detail"];
            let mut want = json!({"expected": 2, "received": received, "source": "run"});
            if let Some(f) = fewest {
                want["fewest_cell"] = json!(cell_key(f));
            }
            assert_eq!(v["repeats"], want, "{db}: upload {i}: {v}");
            let pending = received < 2;
            assert_eq!(v["provisional"], pending, "{db}: upload {i}");
            let said = codes(v).iter().any(|(_, c)| c == "pending_repeats");
            assert_eq!(said, pending, "{db}: upload {i}: {v}");
            if i == 2 {
                // The reason names the cell that is short.
                let reason = v["reasons"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["code"] == "pending_repeats")
                    .unwrap();
                assert_eq!(
                    reason["message"],
                    format!("1 of 2 repeats of cell `{}` of this commit (its least measured) are in (as its uploads announced): the verdict is provisional and becomes final with the last repeat's upload", cell_key(16)),
                    "{db}"
                );
            }
        }
    })
    .await;
}

#[tokio::test]
async fn the_project_repeats_setting_holds_the_verdict_without_a_hint_and_bounds_are_checked() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("setting", json!({})).await;
        let body = json!({"slo_profiles": [], "detection": {"repeats": 2}});
        let path = "/api/v1/projects/setting/settings";
        let (status, s) = server.send("PUT", path, ADMIN_TOKEN, &body).await;
        assert_eq!(status, 200, "{s}");
        assert_eq!(s["detection"]["repeats"], 2);
        assert_eq!(s["detection"]["incomplete_fails"], true);
        let bad = json!({"slo_profiles": [], "detection": {"repeats": 0}});
        let (status, p) = server.send("PUT", path, ADMIN_TOKEN, &bad).await;
        assert_eq!(status, 422, "{p}");
        assert_eq!(p["pointer"], "/detection/repeats");
        let (status, r) = server
            .upload("setting", &token, &repeat(0, 100.0, None))
            .await;
        assert_eq!(status, 201, "{r}");
        assert_eq!(r["verdict_detail"]["provisional"], true, "{db}: {r}");
        assert_eq!(
            r["verdict_detail"]["repeats"],
            json!({"expected": 2, "received": 1, "source": "settings"})
        );
        let (status, r) = server
            .upload("setting", &token, &repeat(1, 100.0, None))
            .await;
        assert_eq!(status, 201, "{r}");
        assert_eq!(r["verdict_detail"]["provisional"], false, "{db}: {r}");
        // An announced number out of bounds is refused at its pointer.
        let (status, p) = server
            .upload("setting", &token, &repeat(2, 100.0, Some(0)))
            .await;
        assert_eq!(status, 422, "{p}");
        assert_eq!(p["pointer"], "/run/repeats_expected");
    })
    .await;
}

#[tokio::test]
async fn a_candidate_that_swapped_every_cell_is_incomplete_naming_the_dropped_one() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("swap", json!({})).await;
        let (status, r) = server
            .upload(
                "swap",
                &token,
                &upload(0, vec![result(4, 100.0, Some(1000.0))]),
            )
            .await;
        assert_eq!(status, 201, "{db}: {r}");
        // Commit 1 measured c=1 only: none of its cells has a history of its own.
        let (status, r) = server
            .upload(
                "swap",
                &token,
                &upload(1, vec![result(1, 100.0, Some(1000.0))]),
            )
            .await;
        assert_eq!(status, 201, "{db}: {r}");
        let v = verdict(&server, r["run_id"].as_str().unwrap()).await;
        assert_eq!(v["verdict"], "incomplete", "{db}: {v}");
        assert_eq!(v["missing_cells"][0]["cell"], cell_key(4), "{db}");
        assert_eq!(v["missing_cells"][0]["baseline_commit"], commit(0), "{db}");
        assert_eq!(v["new_cells"][0]["cell"], cell_key(1), "{db}");
    })
    .await;
}

#[tokio::test]
async fn verdicts_read_together_are_those_read_one_by_one() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("batch", json!({})).await;
        for (i, ttft) in TTFT.into_iter().enumerate() {
            let doc = upload(i, vec![result(4, ttft, Some(1000.0 + i as f64))]);
            assert_eq!(server.upload("batch", &token, &doc).await.0, 201);
        }
        // Three repeats of a step: one alert, shared by the commit's three runs.
        for (k, ttft) in [120.0, 121.0, 119.0].into_iter().enumerate() {
            let doc = repeat(k as u32, ttft, Some(3));
            assert_eq!(server.upload("batch", &token, &doc).await.0, 201);
        }
        let (_, runs) = server.get("/api/v1/projects/batch/runs").await;
        let mut ids: Vec<uuid::Uuid> = runs["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().parse().unwrap())
            .collect();
        assert_eq!(ids.len(), 8, "{db}");
        let unknown = uuid::Uuid::from_u128(7);
        ids.push(unknown);
        let bases = server.store.run_verdict_bases(&ids).await.unwrap();
        let alerts = server.store.runs_alerts(&ids).await.unwrap();
        assert_eq!((bases.len(), alerts.len()), (8, 3), "{db}");
        assert!(!bases.contains_key(&unknown) && !alerts.contains_key(&unknown));
        for id in &ids[..8] {
            let one = server.store.run_verdict_basis(*id).await.unwrap();
            assert_eq!(bases.get(id), one.as_ref(), "{db}: basis of {id}");
            let one = server.store.run_alerts(*id).await.unwrap();
            let together = alerts.get(id).cloned().unwrap_or_default();
            assert_eq!(together, one, "{db}: alerts of {id}");
        }
        // The shared alert keeps its series in every run's copy (equal to the one-by-one
        // reads above, which a copy without them would not be).
        for list in alerts.values() {
            assert_eq!(list.len(), 1, "{db}");
            assert!(!list[0].series_ids.is_empty(), "{db}: {:?}", list[0]);
        }
        assert!(server
            .store
            .run_verdict_bases(&[])
            .await
            .unwrap()
            .is_empty());
        assert!(server.store.runs_alerts(&[]).await.unwrap().is_empty());
    })
    .await;
}

/// [`result`] of the FP8 KV cache configuration: another series key, its own experiment.
fn fp8_result(c: u32, ttft_p50: f64, throughput: Option<f64>) -> Value {
    let mut r = result(c, ttft_p50, throughput);
    r["configuration"]["quantization"] = json!({"kv_cache_dtype": "fp8"});
    r
}

/// Every run's stored analysis and verdict of project `slug`, by run id (the analysis without
/// its time).
async fn analyses(server: &TestServer, slug: &str) -> Vec<(String, Value, Value)> {
    let (_, runs) = server
        .get(&format!("/api/v1/projects/{slug}/runs?limit=100"))
        .await;
    let mut out = Vec::new();
    for run in runs["items"].as_array().unwrap() {
        let id = run["id"].as_str().unwrap().to_string();
        let (status, mut analysis) = server.get(&format!("/api/v1/runs/{id}/analysis")).await;
        assert_eq!(status, 200, "{analysis}");
        analysis["analyzed_at"].take();
        out.push((id.clone(), analysis, verdict(server, &id).await));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[tokio::test]
async fn two_configurations_of_a_commit_are_analyzed_apart_each_with_its_own_repeats() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("configs", json!({})).await;
        // Five commits, each measured in both configurations by runs of their own.
        for (i, ttft) in TTFT.into_iter().enumerate() {
            let t = Some(1000.0 + i as f64);
            for r in [result(4, ttft, t), fp8_result(4, ttft * 1.1, t)] {
                let (status, body) = server.upload("configs", &token, &upload(i, vec![r])).await;
                assert_eq!(status, 201, "{body}");
            }
        }
        // Commit 5: the default configuration's two announced repeats carry a step (median
        // TTFT +20 %); then the FP8 configuration's first repeat of two, without one.
        let step = |k: u32, ttft: f64| repeat(k, ttft, Some(2));
        assert_eq!(
            server.upload("configs", &token, &step(0, 120.0)).await.0,
            201
        );
        let (status, second) = server.upload("configs", &token, &step(1, 121.0)).await;
        assert_eq!(status, 201, "{second}");
        assert_eq!(second["verdict"], "fail", "{db}: {second}");
        let step_run = second["run_id"].as_str().unwrap();
        let analyzed_at = |a: Value| a["analyzed_at"].as_str().unwrap().to_string();
        let analysis_path = format!("/api/v1/runs/{step_run}/analysis");
        let before = analyzed_at(server.get(&analysis_path).await.1);
        let mut fp8 = upload(5, vec![fp8_result(4, 110.0, Some(1003.0))]);
        fp8["run"]["repeats_expected"] = json!(2);
        let (status, r) = server.upload("configs", &token, &fp8).await;
        assert_eq!(status, 201, "{r}");
        // The FP8 run waits for its own second repeat ...
        let v = &r["verdict_detail"];
        assert_eq!(
            v["repeats"],
            json!({"expected": 2, "received": 1, "source": "run"}),
            "{db}: {v}"
        );
        assert_eq!(v["provisional"], true, "{db}");
        // ... and the default configuration stays final: both its repeats are in, its alert
        // stays open (counted over the commit's three runs, its repeats read 1 of 2 again and
        // its alert was withdrawn as held).
        let v = verdict(&server, step_run).await;
        assert_eq!(v["verdict"], "fail", "{db}: {v}");
        assert_eq!(
            v["repeats"],
            json!({"expected": 2, "received": 2, "source": "run"}),
            "{db}: {v}"
        );
        let open = server.alerts("configs", "?status=open").await;
        assert_eq!(open.len(), 1, "{db}: {open:?}");
        assert_eq!(open[0]["commit"], commit(5), "{db}");
        assert!(
            !open[0]["series_key"].to_string().contains("fp8"),
            "{db}: {open:?}"
        );
        // The FP8 upload analyzed its own configuration only: the default configuration's
        // runs kept their analysis ...
        let after = analyzed_at(server.get(&analysis_path).await.1);
        assert_eq!(after, before, "{db}");
        // ... which is what analyzing the whole commit stores.
        let scoped = analyses(&server, "configs").await;
        assert_eq!(scoped.len(), 13, "{db}");
        let project = server.store.project("configs").await.unwrap().unwrap();
        let whole = benchtrail_server::analysis::Scope::Commit;
        benchtrail_server::analysis::analyze_commit(
            &server.store,
            &project,
            "main",
            &commit(5),
            &whole,
        )
        .await
        .unwrap();
        assert_ne!(
            analyzed_at(server.get(&analysis_path).await.1),
            before,
            "{db}"
        );
        let whole = analyses(&server, "configs").await;
        for (s, w) in scoped.iter().zip(&whole) {
            assert_eq!(s, w, "{db}: run {}", s.0);
        }
        let after = server.alerts("configs", "?status=open").await;
        assert_eq!(after.len(), 1, "{db}: {after:?}");
        assert_eq!(after[0]["id"], open[0]["id"], "{db}");
    })
    .await;
}
