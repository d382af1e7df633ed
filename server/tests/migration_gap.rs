//! Migration 0012 assumes nothing of 0011 (another change's): a database migrated while 0011
//! was absent (0012 applied across the gap) gets 0011 applied at its next start, and then
//! holds every migration and reports ready. On SQLite, and on Postgres when
//! `BENCHTRAIL_TEST_DATABASE_URL` is set.

use crate::common;

use benchtrail_server::storage::Store;
use common::migrations::{apply_migrations_where, latest_migration, on_empty_databases};

/// The versions applied, in order.
async fn applied(url: &str) -> Vec<i64> {
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    let v =
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success ORDER BY version")
            .fetch_all(&pool)
            .await
            .unwrap();
    pool.close().await;
    v
}

/// Migrates the empty database at `url` without 0011, then starts a store on it.
async fn across_the_gap(flavour: &str, url: &str) {
    apply_migrations_where(flavour, url, |name| !name.starts_with("0011")).await;
    let latest = latest_migration(flavour);
    let mut expected: Vec<i64> = (1..=latest).filter(|v| *v != 11).collect();
    assert_eq!(applied(url).await, expected, "{flavour}");
    let store = Store::connect(url)
        .await
        .unwrap_or_else(|e| panic!("{flavour}: {e}"));
    expected = (1..=latest).collect();
    assert_eq!(applied(url).await, expected, "{flavour}");
    let ready = store
        .readiness()
        .await
        .unwrap_or_else(|e| panic!("{flavour}: {e}"));
    assert_eq!(ready.migration, latest, "{flavour}");
    store.close().await;
}

#[tokio::test]
async fn a_database_migrated_across_the_gap_gets_0011_at_its_next_start() {
    on_empty_databases(|flavour, url| async move { across_the_gap(flavour, &url).await }).await;
}
