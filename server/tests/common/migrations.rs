//! Databases migrated as an older server left them, for the tests of a migration on data stored
//! before it: the repository's migration files (a copy, so their checksums are the ones the
//! current server finds recorded) applied up to a point, on a fresh SQLite file and, when
//! `BENCHTRAIL_TEST_DATABASE_URL` is set, on a fresh empty Postgres database.

use super::db::EmptyPostgres;
use sqlx::migrate::Migrator;
use std::future::Future;

/// The repository's migrations of `flavour` (`sqlite` or `postgres`) whose file name passes
/// `keep`, copied into a temporary folder.
pub fn migrations_where(flavour: &str, keep: impl Fn(&str) -> bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let source = format!("{}/../migrations/{flavour}", env!("CARGO_MANIFEST_DIR"));
    for entry in std::fs::read_dir(&source).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if keep(&name) {
            std::fs::copy(&path, dir.path().join(name)).unwrap();
        }
    }
    dir
}

/// Applies the migrations of `flavour` that pass `keep` ([`migrations_where`]) to the database
/// at `url`.
pub async fn apply_migrations_where(flavour: &str, url: &str, keep: impl Fn(&str) -> bool) {
    let dir = migrations_where(flavour, keep);
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    Migrator::new(dir.path())
        .await
        .unwrap()
        .run(&pool)
        .await
        .unwrap();
    pool.close().await;
}

/// Applies the migrations of `flavour` numbered below `number` (`"0013"`: 0001–0012) to the
/// database at `url`, as a server from before migration `number` did.
pub async fn apply_migrations_before(flavour: &str, url: &str, number: &str) {
    apply_migrations_where(flavour, url, |name| name < number).await;
}

/// Runs `statements` in order on the database at `url` (rows as an older server stored them,
/// for a migration test); panics naming the statement that fails.
pub async fn execute_all<S: AsRef<str>>(url: &str, statements: impl IntoIterator<Item = S>) {
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    for sql in statements {
        let sql = sql.as_ref();
        sqlx::query(sql)
            .execute(&pool)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    pool.close().await;
}

/// The highest number among the repository's migrations of `flavour` (`0013_….sql` is 13).
pub fn latest_migration(flavour: &str) -> i64 {
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

/// Runs `body(flavour, url)` on an empty SQLite file, then, when `BENCHTRAIL_TEST_DATABASE_URL`
/// is set, on an empty Postgres database, which is dropped afterwards even when the body
/// panics (the panic is then raised again).
pub async fn on_empty_databases<F, Fut>(body: F)
where
    F: Fn(&'static str, String) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let dir = tempfile::tempdir().unwrap();
    body(
        "sqlite",
        format!("sqlite://{}/bt.db?mode=rwc", dir.path().display()),
    )
    .await;
    let Some(pg) = EmptyPostgres::create().await else {
        eprintln!("BENCHTRAIL_TEST_DATABASE_URL is not set: Postgres skipped");
        return;
    };
    // A spawned task turns a panic into a JoinError, so the database is still dropped.
    let outcome = tokio::spawn(body("postgres", pg.url.clone())).await;
    pg.remove().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}
