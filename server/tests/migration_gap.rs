//! Migration 0012 assumes nothing of 0011 (another change's): a database migrated while 0011
//! was absent (0012 applied across the gap) gets 0011 applied at its next start, and then
//! holds every migration and reports ready. On SQLite, and on Postgres when
//! `BENCHTRAIL_TEST_DATABASE_URL` is set.

mod common;

use benchtrail_server::storage::Store;
use sqlx::migrate::Migrator;

/// The repository's migrations of `flavour` but 0011, in a temporary folder.
fn without_0011(flavour: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let source = format!("{}/../migrations/{flavour}", env!("CARGO_MANIFEST_DIR"));
    for entry in std::fs::read_dir(&source).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if !name.starts_with("0011") {
            std::fs::copy(&path, dir.path().join(name)).unwrap();
        }
    }
    dir
}

/// The highest version among the repository's migrations of `flavour` (`0013_….sql` is 13).
fn latest_migration(flavour: &str) -> i64 {
    let source = format!("{}/../migrations/{flavour}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_dir(&source)
        .unwrap()
        .map(|e| {
            e.unwrap().file_name().to_str().unwrap()[..4]
                .parse::<i64>()
                .unwrap()
        })
        .max()
        .unwrap()
}

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
    let dir = without_0011(flavour);
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    Migrator::new(dir.path())
        .await
        .unwrap()
        .run(&pool)
        .await
        .unwrap();
    pool.close().await;
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
    sqlx::any::install_default_drivers();
    let dir = tempfile::tempdir().unwrap();
    across_the_gap(
        "sqlite",
        &format!("sqlite://{}/gap.db?mode=rwc", dir.path().display()),
    )
    .await;
    let Some(pg) = common::db::EmptyPostgres::create().await else {
        return;
    };
    across_the_gap("postgres", &pg.url).await;
    pg.remove().await;
}
