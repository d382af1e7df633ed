//! Migration 0017 on a database holding values stored before it: every `metric_values` row
//! keeps its value, count and interval and names its run by the run's `seq` instead of its
//! uuid, so a series still reads the same points. On SQLite, and on Postgres when
//! `BENCHTRAIL_TEST_DATABASE_URL` is set.

use crate::common;

use benchtrail_server::storage::Store;
use common::migrations::{apply_migrations_before, execute_all, on_empty_databases};

const RUN_1: &str = "00000000-0000-0000-0000-000000000001";
const RUN_2: &str = "00000000-0000-0000-0000-000000000002";

/// Applies migrations 0001–0016 of `flavour` to `url` and stores, as a server before 0017
/// did, two runs (seq 7 and 9, so a seq is not a row number) with one value each of series
/// `s1`, the second with an interval.
async fn migrate_to_0016(flavour: &str, url: &str) {
    apply_migrations_before(flavour, url, "0017").await;
    let run = |seq: i64, id: &str, sha: &str, at: &str| {
        format!(
            "INSERT INTO runs (seq, id, project_id, commit_sha, parent_shas, branch, run_at, uploaded_at, repeat_index, tags) \
             VALUES ({seq}, '{id}', 1, '{sha}', '[]', 'main', '{at}', '{at}', 0, '{{}}')"
        )
    };
    execute_all(
        url,
        [
        "INSERT INTO projects (id, slug, name, default_branch, is_public, key_fields, created_at) \
         VALUES (1, 'demo', 'Demo', 'main', 1, '[]', '2024-01-01T00:00:00.000000Z')"
            .to_string(),
        run(7, RUN_1, "c1", "2024-01-05T00:00:00.000000Z"),
        run(9, RUN_2, "c2", "2024-01-06T00:00:00.000000Z"),
        "INSERT INTO configurations (fingerprint, canonical_json, created_at) \
         VALUES ('f', '{}', '2024-01-01T00:00:00.000000Z')"
            .to_string(),
        format!(
            "INSERT INTO results (id, run_id, idx, config_fingerprint, cell_key, cell_json, facts_json, warnings_json, source_json) \
             VALUES (3, '{RUN_1}', 0, 'f', 'c', '{{}}', '{{}}', '[]', 'null'), \
                    (4, '{RUN_2}', 0, 'f', 'c', '{{}}', '{{}}', '[]', 'null')"
        ),
        "INSERT INTO series (series_id, project_id, series_key_json, cell_key, cell_json, metric, stat, unit, direction) \
         VALUES ('s1', 1, '{}', 'c', '{}', 'ttft', 'p50', 'ms', 'lower_is_better')"
            .to_string(),
        format!(
            "INSERT INTO metric_values (result_id, series_id, run_id, value, n) \
             VALUES (3, 's1', '{RUN_1}', 35.5, 200)"
        ),
        format!(
            "INSERT INTO metric_values (result_id, series_id, run_id, value, n, ci_low, ci_high, ci_level, ci_method) \
             VALUES (4, 's1', '{RUN_2}', 36.25, 180, 35.0, 37.5, 0.95, 'bootstrap')"
        ),
        ],
    )
    .await;
}

/// Connects the current server (0017 applied now) and reads the series and the rows back.
async fn check(db: &str, url: &str) {
    let store = Store::connect(url).await.unwrap();
    let points = store.series_points("s1", "main").await.unwrap();
    let got: Vec<(String, String, f64, Option<u64>)> = points
        .iter()
        .map(|p| (p.run_id.to_string(), p.commit_sha.clone(), p.value, p.n))
        .collect();
    assert_eq!(
        got,
        [
            (RUN_1.to_string(), "c1".to_string(), 35.5, Some(200)),
            (RUN_2.to_string(), "c2".to_string(), 36.25, Some(180)),
        ],
        "{db}"
    );
    assert!(points[0].ci.is_none(), "{db}");
    let ci = points[1].ci.as_ref().expect("the interval survives");
    assert_eq!((ci.low, ci.high, ci.level), (35.0, 37.5, 0.95), "{db}");
    store.close().await;

    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    let rows: Vec<(i64, i64)> =
        sqlx::query_as("SELECT result_id, run_seq FROM metric_values ORDER BY result_id")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(rows, [(3, 7), (4, 9)], "{db}");
    pool.close().await;
}

#[tokio::test]
async fn migration_0017_names_each_value_s_run_by_its_seq() {
    on_empty_databases(|flavour, url| async move {
        migrate_to_0016(flavour, &url).await;
        check(flavour, &url).await;
    })
    .await;
}
