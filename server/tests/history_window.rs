//! An analysis reads a window of its history (`benchtrail_core::report::window`), over real
//! HTTP on every database: what a decision names outside the window is still read. With the
//! engine's spread at 3 commits, an upload reads its 6 newest ancestors; the alert it resolves
//! and the baseline a person pinned lie 15 and 25 commits back.

use crate::common;

use benchtrail_core::metric::MetricValue;
use benchtrail_core::Stat;
use common::db::for_each_store;
use common::server::{TestServer, ADMIN_TOKEN};
use serde_json::{json, Value};

fn sha(i: usize) -> String {
    format!("{:040x}", 0xabc0_0000_u64 + i as u64)
}

/// Commit `i`'s upload: one result whose median TTFT is `ttft` ms and output throughput 2000
/// tok/s, with ±0.3 % of deterministic noise (so baselines have a spread).
fn upload(i: usize, ttft: f64) -> Value {
    let wiggle = 1.0 + 0.003 * [0.0, 1.0, -1.0, 0.5, -0.5][i % 5];
    let metrics = [
        MetricValue::new("ttft", Stat::Percentile("50".into()), ttft * wiggle, None),
        MetricValue::new("output_throughput", Stat::Value, 2000.0 / wiggle, None),
    ];
    let parents: Vec<String> = if i == 0 { vec![] } else { vec![sha(i - 1)] };
    json!({
        "run": {"commit": {"sha": sha(i), "parents": parents,
                           "time": format!("2026-06-{:02}T{:02}:00:00Z", 1 + i / 24, i % 24)},
                "branch": "main"},
        "results": [{
            "cell": {"load": {"max_concurrency": 4, "request_rate": "inf"}, "input_len": 1024, "output_len": 128},
            "configuration": {"hardware": {"accelerator": "NVIDIA H100 80GB HBM3", "accelerator_count": 1},
                              "engine": {"name": "vllm"}},
            "metrics": metrics,
        }],
    })
}

async fn upload_commit(server: &TestServer, token: &str, i: usize, ttft: f64) -> Value {
    let (status, receipt) = server.upload("demo", token, &upload(i, ttft)).await;
    assert_eq!(status, 201, "commit {i}: {receipt}");
    assert_ne!(
        receipt["verdict"], "pending",
        "commit {i} analyzed inline: {receipt}"
    );
    receipt
}

/// A project whose engine reads a spread of 3 commits (window: 6 ancestors), without
/// change-point scans (their alerts are not what this test is about).
async fn project(server: &TestServer) -> String {
    let token = server.project_with_token("demo", json!({})).await;
    let path = "/api/v1/projects/demo/settings";
    let (_, mut settings) = server.send("GET", path, ADMIN_TOKEN, &Value::Null).await;
    let engine = &mut settings["detection"]["engine"];
    engine["baseline_window"] = json!(3);
    engine["spread_window"] = json!(3);
    engine["min_baseline_commits"] = json!(3);
    engine["change_points"]["enabled"] = json!(false);
    let (status, body) = server.send("PUT", path, ADMIN_TOKEN, &settings).await;
    assert_eq!(status, 200, "{body}");
    token
}

#[tokio::test]
async fn an_alert_and_a_pin_outside_the_window_are_still_read() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = project(&server).await;
        // Commits 0–9 at 100 ms, a +20 % step at commit 10 that stays until 24.
        for i in 0..25 {
            upload_commit(&server, &token, i, if i < 10 { 100.0 } else { 120.0 }).await;
        }
        let regressions = server.alerts("demo", "?kind=regression").await;
        let opened: Vec<(&Value, &Value)> = regressions
            .iter()
            .map(|a| (&a["commit"], &a["status"]))
            .collect();
        assert_eq!(opened, [(&json!(sha(10)), &json!("open"))], "{db}");
        let alert = &regressions[0];
        assert_eq!(
            alert["baseline_commits"],
            json!([sha(7), sha(8), sha(9)]),
            "{db}"
        );

        // Commit 25 returns to 100 ms. Its window (commits 19–24) holds only the stepped level;
        // the alert's commit and baseline (7–9) are read because the alert names them, so the
        // alert resolves: the commit is back at the alert's baseline.
        upload_commit(&server, &token, 25, 100.0).await;
        let (status, now) = server
            .get(&format!("/api/v1/alerts/{}", alert["id"].as_str().unwrap()))
            .await;
        assert_eq!(status, 200, "{db}: {now}");
        assert_eq!(
            (&now["status"], &now["resolved_by"]),
            (&json!("resolved"), &json!(sha(25))),
            "{db}: {now}"
        );

        // Pin commit 2's run as the group's baseline; commit 26 (at the stepped level again)
        // is compared with commit 2 alone, 24 commits back.
        let (_, run) = server
            .get(&format!("/api/v1/projects/demo/runs?commit={}", sha(2)))
            .await;
        let pinned_run = run["items"][0]["id"].as_str().unwrap().to_string();
        let series = alert["series_id"].as_str().unwrap();
        let write = server.token("demo", "write").await;
        let (status, body) = server
            .send(
                "PUT",
                &format!("/api/v1/projects/demo/baselines/{series}"),
                &write,
                &json!({"run_id": pinned_run}),
            )
            .await;
        assert_eq!(status, 200, "{db}: {body}");
        let receipt = upload_commit(&server, &token, 26, 120.0).await;
        let run_id = receipt["run_id"].as_str().unwrap();
        let (status, analysis) = server.get(&format!("/api/v1/runs/{run_id}/analysis")).await;
        assert_eq!(status, 200, "{db}: {analysis}");
        let group = &analysis["analysis"]["groups"][0];
        assert_eq!(group["pinned_baseline"], json!(sha(2)), "{db}");
        let ttft = group["report"]["series"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["series_id"] == series)
            .unwrap();
        assert_eq!(
            ttft["comparison"]["baseline_commits"],
            json!([sha(2)]),
            "{db}: {ttft}"
        );
    })
    .await;
}
