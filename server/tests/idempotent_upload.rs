//! A repeated upload is idempotent without `run.id` (the id is derived from the upload), and
//! one measurement counts once within an upload: over real HTTP, on every database, with
//! real result files.

use crate::common;

use common::db::for_each_store;
use common::server::{repo_file, upload_doc, TestServer};
use serde_json::{json, Value};

const FILE: &str = "examples/history/goodput_baseline_s11_c4.json";

async fn points(server: &TestServer) -> usize {
    let (_, series) = server
        .get("/api/v1/projects/demo/series?metric=ttft&stat=p99")
        .await;
    let id = series["items"][0]["series_id"].as_str().unwrap();
    let (_, points) = server
        .get(&format!("/api/v1/projects/demo/series/{id}"))
        .await;
    points["points"].as_array().unwrap().len()
}

async fn runs(server: &TestServer) -> usize {
    let (_, runs) = server.get("/api/v1/projects/demo/runs?limit=500").await;
    runs["items"].as_array().unwrap().len()
}

#[tokio::test]
async fn the_same_upload_without_run_id_is_stored_once() {
    for_each_store(|_, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let doc = upload_doc(&"c".repeat(40), "2026-11-01T00:00:00Z", &[FILE]);
        assert!(doc["run"].get("id").is_none());
        let (status, first) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 201, "{first}");
        assert_eq!(first["created"], true);
        let id = first["run_id"].as_str().unwrap().to_string();
        assert_eq!(uuid::Uuid::parse_str(&id).unwrap().get_version_num(), 5);

        // The identical retry, and a retry whose tags and run time differ (they describe the
        // run, they do not tell measurements apart): 200, the same id, nothing stored.
        let mut retagged = doc.clone();
        retagged["run"]["tags"] = json!({"attempt": "2"});
        retagged["run"]["run_at"] = json!("2026-11-02T00:00:00Z");
        for retry in [&doc, &retagged] {
            let (status, again) = server.upload("demo", &token, retry).await;
            assert_eq!(status, 200, "{again}");
            assert_eq!(again["created"], false);
            assert_eq!(again["run_id"], id.as_str());
            assert_eq!(again["results"], first["results"]);
            assert_eq!(again["verdict"], first["verdict"]);
        }
        assert_eq!(runs(&server).await, 1);
        assert_eq!(points(&server).await, 1);

        // Genuine repeats are new runs: another repeat index, another measurement, another
        // branch.
        let mut repeat = doc.clone();
        repeat["run"]["repeat_index"] = json!(1);
        let mut other = doc.clone();
        other["files"][0]["content"] =
            json!(repo_file("examples/history/goodput_baseline_s12_c4.json"));
        let mut branch = doc.clone();
        branch["run"]["branch"] = json!("feature");
        let mut ids = vec![id.clone()];
        for new in [&repeat, &other, &branch] {
            let (status, receipt) = server.upload("demo", &token, new).await;
            assert_eq!(status, 201, "{receipt}");
            let new_id = receipt["run_id"].as_str().unwrap().to_string();
            assert!(!ids.contains(&new_id), "{new_id}");
            ids.push(new_id);
            // Each of them is idempotent too.
            let (status, again) = server.upload("demo", &token, new).await;
            assert_eq!(status, 200, "{again}");
            assert_eq!(again["run_id"], receipt["run_id"]);
        }
        assert_eq!(runs(&server).await, 4);

        // The same upload in another project is that project's run, not a conflict.
        let other_token = server.project_with_token("other", json!({})).await;
        let (status, receipt) = server.upload("other", &other_token, &doc).await;
        assert_eq!(status, 201, "{receipt}");
        assert_ne!(receipt["run_id"], id.as_str());
    })
    .await;
}

#[tokio::test]
async fn identical_files_in_one_upload_count_once() {
    for_each_store(|_, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let run = "testdata/aiperf/baseline_completions_c1_isl512_osl128";
        let summary = repo_file(&format!("{run}/profile_export_aiperf.json"));
        let doc = json!({
            "run": {"commit": {"sha": "d".repeat(40)}, "branch": "main"},
            "files": [
                {"name": "run/profile_export_aiperf.json", "content": summary},
                {"name": "run/profile_export.jsonl", "content": repo_file(&format!("{run}/profile_export.jsonl"))},
                {"name": "run/phases/profiling/profile_export_aiperf.json", "content": repo_file(&format!("{run}/phases/profiling/profile_export_aiperf.json"))},
                {"name": "again/profile_export_aiperf.json", "content": summary},
            ],
        });
        let (status, receipt) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 201, "{receipt}");
        assert_eq!(receipt["results"], 1);
        let (_, stored) = server
            .get(&format!("/api/v1/runs/{}", receipt["run_id"].as_str().unwrap()))
            .await;
        let results = stored["results"].as_array().unwrap();
        assert_eq!(results.len(), 1);
        let warnings: Vec<&str> = results[0]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["code"] == "duplicate_file")
            .map(|w| w["message"].as_str().unwrap())
            .collect();
        assert_eq!(
            warnings,
            [
                "`/files/2` (\"run/phases/profiling/profile_export_aiperf.json\") has the same results as `/files/0` (\"run/profile_export_aiperf.json\"): one measurement, counted once, as \"run/profile_export_aiperf.json\".",
                "`/files/3` (\"again/profile_export_aiperf.json\") has the same content as `/files/0` (\"run/profile_export_aiperf.json\"): one measurement, counted once, as \"run/profile_export_aiperf.json\".",
            ]
        );
        // Every file is kept as sent.
        assert_eq!(stored["files"].as_array().map(Vec::len), Some(4), "{}", stored["files"]);
        let _: Value = stored;
    })
    .await;
}

/// Values are stored in multi-row statements; two values of one series in one result are
/// refused, naming the series, and nothing of the upload is stored (the first result's values
/// neither).
#[tokio::test]
async fn two_values_of_one_series_in_a_result_store_nothing() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let metric = |v: f64| json!({"name": "ttft", "stat": "p50", "unit": "ms", "value": v});
        let result = |c: u64, metrics: Vec<Value>| {
            json!({
                "cell": {"load": {"max_concurrency": c, "request_rate": "inf"}},
                "configuration": {"engine": {"name": "vllm"}},
                "metrics": metrics,
            })
        };
        let doc = json!({
            "run": {"commit": {"sha": "d".repeat(40)}, "branch": "main"},
            "results": [result(4, vec![metric(10.0)]), result(8, vec![metric(11.0), metric(12.0)])],
        });
        let (status, body) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 409, "{db}: {body}");
        let detail = body["detail"].as_str().unwrap();
        assert!(
            detail.starts_with("result 1 has two values of ttft p50 (series "),
            "{db}: {detail}"
        );
        assert_eq!(runs(&server).await, 0, "{db}");
        let (_, series) = server.get("/api/v1/projects/demo/series").await;
        assert_eq!(series["items"], json!([]), "{db}: {series}");
    })
    .await;
}
