//! Migration 0019 on a database holding values stored before it: every `metric_values` row
//! keeps its value, count and interval and names its series by the series' new integer `seq`
//! instead of its text id, so each series still reads the same points, and a series stored
//! after the migration gets a `seq` of its own. On SQLite, and on Postgres when
//! `BENCHTRAIL_TEST_DATABASE_URL` is set.

use crate::common;

use benchtrail_server::storage::Store;
use common::migrations::{apply_migrations_before, execute_all, on_empty_databases};

const RUN: &str = "00000000-0000-0000-0000-000000000001";

/// Applies migrations 0001–0018 of `flavour` to `url` and stores, as a server before 0019
/// did, one run (seq 7) with one result holding a value of series `s1` and one, with an
/// interval, of series `s2`.
async fn migrate_to_0018(flavour: &str, url: &str) {
    apply_migrations_before(flavour, url, "0019").await;
    let series = |id: &str, metric: &str| {
        format!(
            "INSERT INTO series (series_id, project_id, series_key_json, cell_key, cell_json, metric, stat, unit, direction) \
             VALUES ('{id}', 1, '{{}}', 'c', '{{}}', '{metric}', 'p50', 'ms', 'lower_is_better')"
        )
    };
    execute_all(
        url,
        [
        "INSERT INTO projects (id, slug, name, default_branch, is_public, key_fields, created_at) \
         VALUES (1, 'demo', 'Demo', 'main', 1, '[]', '2024-01-01T00:00:00.000000Z')"
            .to_string(),
        format!(
            "INSERT INTO runs (seq, id, project_id, commit_sha, parent_shas, branch, run_at, uploaded_at, repeat_index, tags) \
             VALUES (7, '{RUN}', 1, 'c1', '[]', 'main', '2024-01-05T00:00:00.000000Z', '2024-01-05T00:00:00.000000Z', 0, '{{}}')"
        ),
        "INSERT INTO configurations (fingerprint, canonical_json, created_at) \
         VALUES ('f', '{}', '2024-01-01T00:00:00.000000Z')"
            .to_string(),
        format!(
            "INSERT INTO results (id, run_id, idx, config_fingerprint, cell_key, cell_json, facts_json, warnings_json, source_json) \
             VALUES (3, '{RUN}', 0, 'f', 'c', '{{}}', '{{}}', '[]', 'null')"
        ),
        // Stored in the order s2, s1: a seq follows the stored order, not the id's.
        series("s2", "tpot"),
        series("s1", "ttft"),
        "INSERT INTO metric_values (result_id, series_id, run_seq, value, n) VALUES (3, 's1', 7, 35.5, 200)"
            .to_string(),
        "INSERT INTO metric_values (result_id, series_id, run_seq, value, n, ci_low, ci_high, ci_level, ci_method) \
         VALUES (3, 's2', 7, 8.25, 180, 8.0, 8.5, 0.95, 'bootstrap')"
            .to_string(),
        ],
    )
    .await;
}

/// Connects the current server (0019 applied now), reads both series back, and stores a new
/// series the way an upload does.
async fn check(db: &str, url: &str) {
    let store = Store::connect(url).await.unwrap();
    let s1 = store.series_points("s1", "main").await.unwrap();
    let got: Vec<(String, String, f64, Option<u64>)> = s1
        .iter()
        .map(|p| (p.run_id.to_string(), p.commit_sha.clone(), p.value, p.n))
        .collect();
    assert_eq!(
        got,
        [(RUN.to_string(), "c1".to_string(), 35.5, Some(200))],
        "{db}"
    );
    assert!(s1[0].ci.is_none(), "{db}");
    let s2 = store.series_points("s2", "main").await.unwrap();
    assert_eq!(
        s2.iter().map(|p| (p.value, p.n)).collect::<Vec<_>>(),
        [(8.25, Some(180))],
        "{db}"
    );
    let ci = s2[0].ci.as_ref().expect("the interval survives");
    assert_eq!((ci.low, ci.high, ci.level), (8.0, 8.5, 0.95), "{db}");
    store.close().await;

    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    let seqs: Vec<(String, i64)> = sqlx::query_as("SELECT series_id, seq FROM series ORDER BY seq")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(
        seqs.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
        ["s2", "s1"],
        "{db}: seq in stored order"
    );
    let rows: Vec<(i64, i64, i64)> = sqlx::query_as(
        "SELECT mv.result_id, mv.series_seq, mv.run_seq FROM metric_values mv ORDER BY mv.series_seq",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(rows, [(3, seqs[0].1, 7), (3, seqs[1].1, 7)], "{db}");
    // A series stored after the migration is numbered after the migrated ones.
    sqlx::query(
        "INSERT INTO series (series_id, project_id, series_key_json, cell_key, cell_json, metric, stat, unit, direction) \
         VALUES ('s3', 1, '{}', 'c', '{}', 'itl', 'p50', 'ms', 'lower_is_better')",
    )
    .execute(&pool)
    .await
    .unwrap();
    let (s3,): (i64,) = sqlx::query_as("SELECT seq FROM series WHERE series_id = 's3'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!(s3 > seqs[1].1, "{db}: s3 got {s3} after {seqs:?}");
    pool.close().await;
}

#[tokio::test]
async fn migration_0019_names_each_value_s_series_by_its_seq() {
    on_empty_databases(|flavour, url| async move {
        migrate_to_0018(flavour, &url).await;
        check(flavour, &url).await;
    })
    .await;
}
