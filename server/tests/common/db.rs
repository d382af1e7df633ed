//! Test databases: every storage-backed test runs its body once per database benchtrail
//! supports, each on a fresh, empty database that is removed afterwards.
//!
//! SQLite always runs (a file in a temporary folder). Postgres runs when
//! `BENCHTRAIL_TEST_DATABASE_URL` names an admin connection (e.g.
//! `postgres://postgres@127.0.0.1:5432/postgres`): each test then gets its own
//! `bt_test_<uuid>` database, dropped when the test ends. If the variable is set but the server
//! is unreachable the test fails, so CI cannot silently skip Postgres.

use benchtrail_server::storage::Store;
use sqlx::{Connection, PgConnection};
use std::future::Future;
use std::sync::Once;

/// The environment variable naming the Postgres admin URL.
pub const POSTGRES_ENV: &str = "BENCHTRAIL_TEST_DATABASE_URL";

/// A fresh database for one test.
pub struct TestDb {
    /// `sqlite` or `postgres`.
    pub name: &'static str,
    /// The store, migrations applied.
    pub store: Store,
    /// Its URL, for a server process of its own (`sqlite://…` or `postgres://…`).
    pub url: String,
    cleanup: Cleanup,
}

/// What to remove when the test is done.
enum Cleanup {
    /// The temporary folder holding the SQLite file (removed on drop).
    Sqlite(tempfile::TempDir),
    /// The Postgres database to drop, through the admin URL.
    Postgres { admin_url: String, database: String },
}

impl TestDb {
    /// Closes the store and removes its database.
    pub async fn cleanup(self) {
        self.store.close().await;
        match self.cleanup {
            Cleanup::Sqlite(dir) => drop(dir),
            Cleanup::Postgres {
                admin_url,
                database,
            } => {
                let mut admin = admin_connection(&admin_url).await;
                sqlx::query(&format!(
                    "DROP DATABASE IF EXISTS \"{database}\" WITH (FORCE)"
                ))
                .execute(&mut admin)
                .await
                .unwrap_or_else(|e| panic!("dropping test database {database}: {e}"));
                let _ = admin.close().await;
            }
        }
    }
}

/// One fresh database per backend under test: SQLite always, Postgres when
/// `BENCHTRAIL_TEST_DATABASE_URL` is set (else one line says it was skipped).
pub async fn stores() -> Vec<TestDb> {
    let mut dbs = vec![sqlite().await];
    match std::env::var(POSTGRES_ENV) {
        Ok(admin_url) if !admin_url.is_empty() => dbs.push(postgres(&admin_url).await),
        _ => {
            static SKIPPED: Once = Once::new();
            SKIPPED.call_once(|| {
                eprintln!("{POSTGRES_ENV} is not set: Postgres storage tests skipped, SQLite only")
            });
        }
    }
    dbs
}

/// Runs `body` once per database from [`stores`], removing each database afterwards even when
/// the body panics (the panic is then re-raised, naming the database).
pub async fn for_each_store<F, Fut>(body: F)
where
    F: Fn(&'static str, Store) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    for db in stores().await {
        // A spawned task turns a panic into a JoinError, so cleanup still runs.
        let outcome = tokio::spawn(body(db.name, db.store.clone())).await;
        let name = db.name;
        db.cleanup().await;
        if let Err(e) = outcome {
            match e.try_into_panic() {
                Ok(panic) => {
                    eprintln!("storage test failed on {name}");
                    std::panic::resume_unwind(panic)
                }
                Err(e) => panic!("storage test on {name} did not finish: {e}"),
            }
        }
    }
}

/// A SQLite file in a fresh temporary folder; the file's own folder does not exist yet, so
/// `Store::connect` must create it. For a test that needs SQLite alone (taking the first of
/// [`stores`] would create a Postgres database it never drops).
pub async fn sqlite() -> TestDb {
    let dir = tempfile::tempdir().expect("creating a temporary folder");
    let url = format!("sqlite://{}/data/benchtrail.db", dir.path().display());
    let store = Store::connect(&url)
        .await
        .unwrap_or_else(|e| panic!("connecting to {url}: {e}"));
    TestDb {
        name: "sqlite",
        store,
        url,
        cleanup: Cleanup::Sqlite(dir),
    }
}

/// A new, empty Postgres database (no migrations) named `bt_test_<uuid>`, created through
/// the admin URL; returns its name and URL.
async fn create_postgres(admin_url: &str) -> (String, String) {
    let database = format!("bt_test_{}", uuid::Uuid::new_v4().simple());
    let mut admin = admin_connection(admin_url).await;
    sqlx::query(&format!("CREATE DATABASE \"{database}\""))
        .execute(&mut admin)
        .await
        .unwrap_or_else(|e| panic!("creating test database {database}: {e}"));
    let _ = admin.close().await;
    let url = with_database(admin_url, &database);
    (database, url)
}

/// An empty Postgres database for a test that migrates it itself (no store opened), when
/// `BENCHTRAIL_TEST_DATABASE_URL` is set; [`EmptyPostgres::remove`] drops it.
pub struct EmptyPostgres {
    /// Its URL.
    pub url: String,
    admin_url: String,
    database: String,
}

impl EmptyPostgres {
    /// A new empty database, or `None` when `BENCHTRAIL_TEST_DATABASE_URL` is not set.
    pub async fn create() -> Option<EmptyPostgres> {
        let admin_url = std::env::var(POSTGRES_ENV).ok().filter(|u| !u.is_empty())?;
        let (database, url) = create_postgres(&admin_url).await;
        Some(EmptyPostgres {
            url,
            admin_url,
            database,
        })
    }

    /// Drops the database (connections still open to it are ended).
    pub async fn remove(self) {
        let mut admin = admin_connection(&self.admin_url).await;
        sqlx::query(&format!(
            "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
            self.database
        ))
        .execute(&mut admin)
        .await
        .unwrap_or_else(|e| panic!("dropping test database {}: {e}", self.database));
        let _ = admin.close().await;
    }
}

/// A fresh Postgres database created through the admin URL.
async fn postgres(admin_url: &str) -> TestDb {
    let (database, url) = create_postgres(admin_url).await;
    let store = Store::connect(&url)
        .await
        .unwrap_or_else(|e| panic!("connecting to {url}: {e}"));
    TestDb {
        name: "postgres",
        store,
        url,
        cleanup: Cleanup::Postgres {
            admin_url: admin_url.to_string(),
            database,
        },
    }
}

async fn admin_connection(admin_url: &str) -> PgConnection {
    PgConnection::connect(admin_url).await.unwrap_or_else(|e| {
        panic!("{POSTGRES_ENV}={admin_url} is set but Postgres is unreachable: {e} (unset it to run SQLite only)")
    })
}

/// `admin_url` with its database name replaced by `database` (query parameters kept).
fn with_database(admin_url: &str, database: &str) -> String {
    let (base, query) = match admin_url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (admin_url, String::new()),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let host_part = match base[authority_start..].find('/') {
        Some(slash) => &base[..authority_start + slash],
        None => base,
    };
    format!("{host_part}/{database}{query}")
}
