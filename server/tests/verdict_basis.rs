//! The verdict endpoint and the dashboard read the stored basis of a run's verdict
//! (`run_analyses.verdict_basis_gz`, migration 0018) instead of its whole analysis, and a row
//! written before 0018 (no basis) gives the same verdict from its analysis. On SQLite, and on
//! Postgres when `BENCHTRAIL_TEST_DATABASE_URL` is set; the real goodput history over HTTP.

use crate::common;

use benchtrail_core::report::verdict_basis::VerdictBasis;
use benchtrail_core::report::{verdict_of, RunAnalysis};
use benchtrail_core::wire::Alert;
use common::db::stores;
use common::goodput::{vllm_doc, GOODPUT_HISTORY};
use common::server::TestServer;
use serde_json::json;
use sqlx::Row;

/// The stored basis of `run`'s analysis, decoded; `None` when the column is NULL.
async fn stored_basis(url: &str, run: &str) -> Option<VerdictBasis> {
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    let row = sqlx::query("SELECT verdict_basis_gz FROM run_analyses WHERE run_id = $1")
        .bind(run)
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    let gz: Option<Vec<u8>> = row.get(0);
    // zstd since session 41 (RFC 8878 magic).
    gz.map(|stored| {
        assert!(stored.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]), "not zstd");
        serde_json::from_slice(&zstd::stream::decode_all(&stored[..]).unwrap()).unwrap()
    })
}

async fn forget_basis(url: &str, run: &str) {
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    sqlx::query("UPDATE run_analyses SET verdict_basis_gz = NULL WHERE run_id = $1")
        .bind(run)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
}

#[tokio::test]
async fn the_verdict_read_from_its_basis_is_the_verdict_of_the_whole_analysis() {
    sqlx::any::install_default_drivers();
    for db in stores().await {
        let name = db.name;
        let server = TestServer::start(db.store.clone()).await;
        let token = server.project_with_token("basis", json!({})).await;
        let mut run = String::new();
        for (i, path) in GOODPUT_HISTORY.iter().enumerate() {
            let (status, receipt) = server.upload("basis", &token, &vllm_doc(i, path)).await;
            assert_eq!(status, 201, "{name}: {receipt}");
            run = receipt["run_id"].as_str().unwrap().to_string();
        }
        let verdict_path = format!("/api/v1/runs/{run}/verdict");
        let (status, served) = server.get(&verdict_path).await;
        assert_eq!(status, 200, "{name}: {served}");
        assert_eq!(served["verdict"], "fail", "{name}: {served}");

        // The verdict of the whole stored analysis and the commit's alerts, computed here.
        let (_, stored) = server.get(&format!("/api/v1/runs/{run}/analysis")).await;
        let analysis: RunAnalysis = serde_json::from_value(stored["analysis"].clone()).unwrap();
        let (_, alerts) = server.get(&format!("/api/v1/runs/{run}/alerts")).await;
        let alerts: Vec<Alert> = serde_json::from_value(alerts["items"].clone()).unwrap();
        assert!(
            !alerts.is_empty(),
            "{name}: the fail comes from open alerts"
        );
        let project = db.store.project("basis").await.unwrap().unwrap();
        let det = db
            .store
            .settings(&project)
            .await
            .unwrap()
            .settings
            .detection;
        let whole = verdict_of(
            analysis.run_id,
            &analysis.commit,
            Some(&analysis),
            &alerts,
            &det,
        );
        assert_eq!(served, serde_json::to_value(&whole).unwrap(), "{name}");

        let basis = stored_basis(&db.url, &run)
            .await
            .unwrap_or_else(|| panic!("{name}: no verdict_basis_gz"));
        assert_eq!(basis, VerdictBasis::of(&analysis), "{name}");

        // As a server before 0018 left the row: no basis; the same verdict from the analysis.
        let row = format!(r#"<tr data-run-id="{run}" data-verdict="fail">"#);
        let page = server.text("/projects/basis").await;
        assert!(page.contains(&row), "{name}: {page}");
        forget_basis(&db.url, &run).await;
        assert_eq!(stored_basis(&db.url, &run).await, None, "{name}");
        let (_, from_analysis) = server.get(&verdict_path).await;
        assert_eq!(from_analysis, served, "{name}");
        let page = server.text("/projects/basis").await;
        assert!(page.contains(&row), "{name}: {page}");
        drop(server);
        db.cleanup().await;
    }
}
