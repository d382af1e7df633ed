//! Stored analyses of an older schema are recomputed (the typed model of
//! `benchtrail_core::report`, versioned by `ANALYSIS_SCHEMA`): until then a run reads as not
//! analyzed, never as a half-understood document; afterwards its verdict is what it was. On
//! every database, with the real goodput history over HTTP.

use crate::common;

use benchtrail_core::report::{RunAnalysis, ANALYSIS_SCHEMA};
use common::db::for_each_store;
use common::goodput::{vllm_doc, GOODPUT_HISTORY};
use common::server::TestServer;
use serde_json::json;

#[tokio::test]
async fn an_analysis_of_an_older_schema_is_recomputed_at_start_up() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store.clone()).await;
        let token = server.project_with_token("old", json!({})).await;
        let mut run = String::new();
        for (i, path) in GOODPUT_HISTORY.iter().enumerate() {
            let (status, receipt) = server.upload("old", &token, &vllm_doc(i, path)).await;
            assert_eq!(status, 201, "{db}: {receipt}");
            run = receipt["run_id"].as_str().unwrap().to_string();
        }
        let (_, before) = server.get(&format!("/api/v1/runs/{run}/verdict")).await;
        assert_eq!(before["verdict"], "fail", "{db}: {before}");
        let (_, stored) = server.get(&format!("/api/v1/runs/{run}/analysis")).await;
        let current: RunAnalysis = serde_json::from_value(stored["analysis"].clone()).unwrap();
        assert_eq!(current.schema, ANALYSIS_SCHEMA, "{db}");
        assert_eq!(
            store.projects_with_stale_analyses().await.unwrap(),
            Vec::<String>::new()
        );

        // As an older server would have left it: the same run, an older schema.
        let old = RunAnalysis {
            schema: ANALYSIS_SCHEMA - 1,
            ..current.clone()
        };
        let level = serde_json::from_value(before["verdict"].clone()).unwrap();
        store.put_run_analysis(level, &old).await.unwrap();
        let (status, _) = server.get(&format!("/api/v1/runs/{run}/analysis")).await;
        assert_eq!(status, 404, "{db}: an older analysis is not served");
        let (_, waiting) = server.get(&format!("/api/v1/runs/{run}/verdict")).await;
        assert_eq!(waiting["verdict"], "pending", "{db}: {waiting}");
        assert_eq!(waiting["reasons"][0]["code"], "not_analyzed", "{db}");

        assert_eq!(store.projects_with_stale_analyses().await.unwrap(), ["old"]);
        let recomputed = benchtrail_server::analysis::recompute_stale(&store)
            .await
            .unwrap();
        assert_eq!(recomputed, 1, "{db}");
        assert_eq!(
            store.projects_with_stale_analyses().await.unwrap(),
            Vec::<String>::new()
        );
        let (_, after) = server.get(&format!("/api/v1/runs/{run}/verdict")).await;
        assert_eq!(after, before, "{db}");
    })
    .await;
}
