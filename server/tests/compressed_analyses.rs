//! Run analyses are stored compressed (migration 0013, issue 12's disk target; zstd since
//! session 41, gzip before), and rows written before, as gzip or plain JSON, still read the
//! same. On SQLite, and on Postgres when
//! `BENCHTRAIL_TEST_DATABASE_URL` is set.

use crate::common;

use common::db::stores;
use common::migrations::{apply_migrations_before, execute_all, on_empty_databases};
use common::server::{upload_doc, TestServer};
use serde_json::json;
use sqlx::Row;
use std::io::Write;

const RUN_FILES: [&str; 2] = [
    "examples/history/baseline_completions_c1_isl512_osl128.json",
    "examples/history/baseline_completions_c4_isl512_osl128.json",
];

/// The stored row of a run's analysis: (`analysis_json`, `analysis_gz`).
async fn stored_row(url: &str, run: &str) -> (Option<String>, Option<Vec<u8>>) {
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    let row = sqlx::query("SELECT analysis_json, analysis_gz FROM run_analyses WHERE run_id = $1")
        .bind(run)
        .fetch_one(&pool)
        .await
        .unwrap();
    let stored = (row.get(0), row.get(1));
    pool.close().await;
    stored
}

/// The text of a stored analysis, which must be zstd (RFC 8878 magic).
fn unzstd(stored: &[u8]) -> String {
    assert!(stored.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]), "not zstd");
    String::from_utf8(zstd::stream::decode_all(stored).unwrap()).unwrap()
}

fn gzip(text: &str) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(3));
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap()
}

#[tokio::test]
async fn an_analysis_is_stored_compressed_and_one_stored_as_json_before_reads_the_same() {
    sqlx::any::install_default_drivers();
    for db in stores().await {
        let server = TestServer::start(db.store.clone()).await;
        let token = server.project_with_token("gz", json!({})).await;
        let (status, first) = server
            .upload(
                "gz",
                &token,
                &upload_doc("c0ffee1", "2025-01-01T00:00:00Z", &RUN_FILES),
            )
            .await;
        assert_eq!(status, 201, "{}: {first}", db.name);
        let (status, body) = server
            .upload(
                "gz",
                &token,
                &upload_doc("c0ffee2", "2025-01-02T00:00:00Z", &RUN_FILES),
            )
            .await;
        assert_eq!(status, 201, "{}: {body}", db.name);
        let run = body["run_id"].as_str().unwrap().to_string();
        let path = format!("/api/v1/runs/{run}/analysis");
        let (status, analysis) = server.get(&path).await;
        assert_eq!(status, 200, "{}: {analysis}", db.name);
        assert_eq!(analysis["run_id"], run.as_str(), "{}", db.name);

        let (json_text, gz) = stored_row(&db.url, &run).await;
        assert_eq!(json_text, None, "{}: new rows hold no plain JSON", db.name);
        let gz = gz.unwrap_or_else(|| panic!("{}: no analysis_gz", db.name));
        let text = unzstd(&gz);
        let stored: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(stored["run_id"], run.as_str(), "{}", db.name);
        assert!(
            gz.len() * 5 < text.len(),
            "{}: {} B of zstd for {} B of JSON",
            db.name,
            gz.len(),
            text.len()
        );

        // The row as a server before session 41 wrote it: gzip.
        let pool = sqlx::AnyPool::connect(&db.url).await.unwrap();
        sqlx::query("UPDATE run_analyses SET analysis_gz = $1 WHERE run_id = $2")
            .bind(gzip(&text))
            .bind(&run)
            .execute(&pool)
            .await
            .unwrap();
        let (status, again) = server.get(&path).await;
        assert_eq!(status, 200, "{}: {again}", db.name);
        assert_eq!(again, analysis, "{}: a gzip row", db.name);

        // The row as a server before migration 0013 wrote it: plain JSON, no gzip.
        sqlx::query(
            "UPDATE run_analyses SET analysis_json = $1, analysis_gz = NULL WHERE run_id = $2",
        )
        .bind(&text)
        .bind(&run)
        .execute(&pool)
        .await
        .unwrap();
        // A row holding neither is refused: every analysis row holds one of them.
        let neither = sqlx::query("UPDATE run_analyses SET analysis_json = NULL WHERE run_id = $1")
            .bind(&run)
            .execute(&pool)
            .await;
        assert!(neither.is_err(), "{}: a row without an analysis", db.name);
        pool.close().await;
        let (status, again) = server.get(&path).await;
        assert_eq!(status, 200, "{}: {again}", db.name);
        assert_eq!(again, analysis, "{}", db.name);

        // Analyzed again, the old row is replaced in place (one upsert for every run of the
        // commit): compressed, its plain JSON gone.
        let project = db.store.project("gz").await.unwrap().unwrap();
        benchtrail_server::analysis::recompute_project(&db.store, &project)
            .await
            .unwrap();
        let (json_text, gz) = stored_row(&db.url, &run).await;
        assert_eq!(json_text, None, "{}: the plain JSON is replaced", db.name);
        assert_eq!(unzstd(&gz.unwrap()), text, "{}", db.name);

        drop(server);
        db.cleanup().await;
    }
}

/// Migrations 0001–0012 of `flavour` applied to `url`, and one analysis row in the form they
/// knew (a run of a project, JSON text).
async fn a_database_at_0012(flavour: &str, url: &str) {
    apply_migrations_before(flavour, url, "0013").await;
    execute_all(
        url,
        [
        "INSERT INTO projects (id, slug, name, default_branch, is_public, key_fields, created_at) \
         VALUES (1, 'demo', 'Demo', 'main', 1, '[]', '2024-01-01T00:00:00.000000Z')",
        "INSERT INTO runs (id, project_id, commit_sha, parent_shas, commit_time, branch, run_at, uploaded_at, repeat_index, tags) \
         VALUES ('00000000-0000-0000-0000-000000000001', 1, 'c1', '[]', '2024-01-02T00:00:00.000000Z', 'main', \
         '2024-01-05T00:00:00.000000Z', '2024-01-05T00:00:00.000000Z', 0, '{}')",
        "INSERT INTO run_analyses (run_id, verdict, settings_version, analysis_json, analyzed_at, analysis_schema) \
         VALUES ('00000000-0000-0000-0000-000000000001', 'warn', 3, '{\"old\":true}', '2024-01-05T00:00:01.000000Z', 7)",
        ],
    )
    .await;
}

/// Starts the current store on the database (migration 0013 applied now) and reads the old
/// row back as stored.
async fn the_old_row_survives_0013(flavour: &str, url: &str) {
    let store = benchtrail_server::storage::Store::connect(url)
        .await
        .unwrap_or_else(|e| panic!("{flavour}: {e}"));
    store.close().await;
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    // Postgres's `analyzed_at` is a TIMESTAMPTZ since 0022 (the `Any` driver reads no
    // timestamps): its instant as SQLite's text.
    let analyzed_at = if flavour == "postgres" {
        "to_char(analyzed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
    } else {
        "analyzed_at"
    };
    let row = sqlx::query(&format!(
        "SELECT verdict, settings_version, analysis_json, analysis_gz, {analyzed_at}, \
         analysis_schema FROM run_analyses"
    ))
    .fetch_one(&pool)
    .await
    .unwrap();
    let got: (String, i64, Option<String>, Option<Vec<u8>>, String, i64) = (
        row.get(0),
        row.get(1),
        row.get(2),
        row.get(3),
        row.get(4),
        row.get(5),
    );
    assert_eq!(
        got,
        (
            "warn".to_string(),
            3,
            Some("{\"old\":true}".to_string()),
            None,
            "2024-01-05T00:00:01.000000Z".to_string(),
            7
        ),
        "{flavour}"
    );
    pool.close().await;
}

#[tokio::test]
async fn migration_0013_keeps_the_analyses_stored_before_it() {
    on_empty_databases(|flavour, url| async move {
        a_database_at_0012(flavour, &url).await;
        the_old_row_survives_0013(flavour, &url).await;
    })
    .await;
}
