//! Quality results next to speed (issue 14) over real HTTP, on every database: an upload's
//! `quality` field (here lm-evaluation-harness's results JSON read by core's adapter, as
//! `benchtrail upload --quality` sends it) is stored with the run and served back exactly in
//! `GET /api/v1/runs/{id}` and on the run page; a re-upload stays idempotent; a bad quality
//! result is a problem naming its field.

use crate::common;

use benchtrail_core::adapters::lm_eval::read_quality_file;
use common::db::for_each_store;
use common::server::{repo_file, upload_doc, TestServer};
use serde_json::json;

const FILE: &str = "examples/history/goodput_baseline_s11_c4.json";

#[tokio::test]
async fn quality_results_are_stored_with_the_run_and_served_back() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let quality =
            read_quality_file(&repo_file("testdata/lm-eval/results_2026-11-30T10-12-44.json"))
                .unwrap();
        assert_eq!(quality.len(), 7);
        let mut doc = upload_doc(&"a".repeat(40), "2026-11-01T00:00:00Z", &[FILE]);
        doc["quality"] = serde_json::to_value(&quality).unwrap();
        let (status, receipt) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 201, "{db}: {receipt}");
        let id = receipt["run_id"].as_str().unwrap().to_string();

        let (status, run) = server.get(&format!("/api/v1/runs/{id}")).await;
        assert_eq!(status, 200, "{db}: {run}");
        assert_eq!(run["quality"], doc["quality"], "{db}");
        assert_eq!(
            run["quality"][2],
            json!({"task": "gsm8k", "metric": "exact_match,flexible-extract",
                   "value": 0.7626990144048522, "stderr": 0.011718208478399936,
                   "samples": 1319}),
            "{db}"
        );
        // No stderr ("N/A") and no sample count (a group) are left out.
        assert_eq!(
            run["quality"][4],
            json!({"task": "mmlu", "metric": "acc", "value": 0.6812847172767412,
                   "stderr": 0.003721564431637312}),
            "{db}"
        );

        // The identical retry stores nothing; with its run id and other quality results it
        // is refused.
        let (status, again) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 200, "{db}: {again}");
        assert_eq!(again["run_id"], id.as_str());
        let mut explicit = doc.clone();
        explicit["run"]["id"] = json!(id);
        let (status, again) = server.upload("demo", &token, &explicit).await;
        assert_eq!(status, 200, "{db}: {again}");
        explicit["quality"][0]["value"] = json!(0.1);
        let (status, conflict) = server.upload("demo", &token, &explicit).await;
        assert_eq!(status, 409, "{db}: {conflict}");
        let (_, run) = server.get(&format!("/api/v1/runs/{id}")).await;
        assert_eq!(run["quality"], doc["quality"], "{db}");
        assert_eq!(run["upload_count"], 3, "{db}");

        // A run without quality results serves an empty list.
        let plain = upload_doc(&"b".repeat(40), "2026-11-02T00:00:00Z", &[FILE]);
        let (status, r) = server.upload("demo", &token, &plain).await;
        assert_eq!(status, 201, "{db}: {r}");
        let (_, run) = server
            .get(&format!("/api/v1/runs/{}", r["run_id"].as_str().unwrap()))
            .await;
        assert_eq!(run["quality"], json!([]), "{db}");

        // The run page has the table.
        let page = server.text(&format!("/runs/{id}")).await;
        assert!(page.contains(r#"<table id="quality">"#), "{db}");
        assert!(
            page.contains(r#"<tr data-task="gsm8k" data-metric="exact_match,strict-match"><td>gsm8k</td><td><code>exact_match,strict-match</code></td><td class="num">0.7544</td><td class="num">± 0.0119</td><td class="num">1319</td></tr>"#),
            "{db}: {page}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_bad_quality_result_is_a_problem_naming_its_field() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let base = upload_doc(&"c".repeat(40), "2026-11-01T00:00:00Z", &[FILE]);
        for (quality, status, pointer) in [
            (json!([{"task": "gsm8k", "metric": "acc", "value": 0.5, "stderr": -1.0}]), 422, "/quality/0/stderr"),
            (json!([{"task": "", "metric": "acc", "value": 0.5}]), 422, "/quality/0/task"),
            (json!([{"task": "a", "metric": "acc", "value": 0.5}, {"task": "a", "metric": "acc", "value": 0.6}]), 422, "/quality/1/metric"),
            (json!([{"task": "a", "metric": "acc"}]), 400, ""),
        ] {
            let mut doc = base.clone();
            doc["quality"] = quality;
            let r = server
                .http
                .post(server.url("/api/v1/projects/demo/runs"))
                .bearer_auth(&token)
                .json(&doc)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status().as_u16(), status, "{db}: {pointer}");
            assert_eq!(
                r.headers()["content-type"],
                "application/problem+json",
                "{db}"
            );
            let problem: serde_json::Value = r.json().await.unwrap();
            if !pointer.is_empty() {
                assert_eq!(problem["pointer"], pointer, "{db}: {problem}");
            } else {
                assert!(problem.to_string().contains("quality"), "{db}: {problem}");
            }
        }
    })
    .await;
}
