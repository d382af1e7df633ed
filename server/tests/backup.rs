//! Backups (issue 13): a backup of each store, taken while the server serves, restored into a
//! fresh database, serves every run, file, alert and verdict exactly as the original did.
//! SQLite through `Store::backup_to` (`benchtrail-server --backup-to`, `VACUUM INTO`);
//! Postgres through `pg_dump -Fc` and `pg_restore`, as the README says.

use crate::common;

use benchtrail_server::storage::Store;
use common::db::{stores, POSTGRES_ENV};
use common::seed::seed;
use common::server::TestServer;
use serde_json::Value;
use sqlx::{Connection, PgConnection};

/// Everything a reader sees of project `slug`: each run (newest first) with its verdict and
/// files, and every alert.
async fn everything(server: &TestServer, slug: &str, token: &str) -> Value {
    let get = |path: String| async move {
        let r = server
            .http
            .get(server.url(&path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
        r.bytes().await.unwrap()
    };
    let json = |bytes: axum::body::Bytes| serde_json::from_slice::<Value>(&bytes).unwrap();
    let runs = json(get(format!("/api/v1/projects/{slug}/runs?limit=500")).await);
    let mut out = Vec::new();
    for run in runs["items"].as_array().unwrap() {
        let id = run["id"].as_str().unwrap();
        let full = json(get(format!("/api/v1/runs/{id}")).await);
        let verdict = json(get(format!("/api/v1/runs/{id}/verdict")).await);
        let mut files = Vec::new();
        for n in 0..full["files"].as_array().unwrap().len() {
            let bytes = get(format!("/api/v1/runs/{id}/files/{n}")).await;
            files.push(benchtrail_core::sha256_hex(&bytes));
        }
        out.push(serde_json::json!({"run": full, "verdict": verdict, "files": files}));
    }
    let alerts = json(get(format!("/api/v1/projects/{slug}/alerts?limit=500")).await);
    serde_json::json!({"runs": out, "alerts": alerts})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_backup_serves_every_run_file_alert_and_verdict() {
    for db in stores().await {
        let name = db.name;
        let server = TestServer::start(db.store.clone()).await;
        let seeded = seed(&server, "kept", false).await;
        let before = everything(&server, "kept", &seeded.write).await;
        assert_eq!(before["runs"].as_array().unwrap().len(), 4, "{name}");
        assert!(
            !before["alerts"]["items"].as_array().unwrap().is_empty(),
            "{name}"
        );

        let dir = tempfile::tempdir().unwrap();
        let (restored, cleanup) = match name {
            "sqlite" => {
                let file = dir.path().join("backup.db");
                db.store.backup_to(&file).await.unwrap();
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "the backup is private, like the database");
                // A second backup to the same file is refused, never overwritten.
                assert!(db.store.backup_to(&file).await.is_err(), "{name}");
                let url = format!("sqlite://{}", file.display());
                (Store::connect(&url).await.unwrap(), None)
            }
            _ => {
                let dump = dir.path().join("benchtrail.dump");
                let out = std::process::Command::new("pg_dump")
                    .args(["-Fc", "-f"])
                    .arg(&dump)
                    .arg(&db.url)
                    .output()
                    .expect("pg_dump runs");
                assert!(
                    out.status.success(),
                    "pg_dump: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let admin_url = std::env::var(POSTGRES_ENV).unwrap();
                let database = format!("bt_restore_{}", uuid::Uuid::new_v4().simple());
                let mut admin = PgConnection::connect(&admin_url).await.unwrap();
                sqlx::query(&format!("CREATE DATABASE \"{database}\""))
                    .execute(&mut admin)
                    .await
                    .unwrap();
                let url = format!("{}/{database}", db.url.rsplit_once('/').unwrap().0);
                let out = std::process::Command::new("pg_restore")
                    .args(["--no-owner", "-d", &url])
                    .arg(&dump)
                    .output()
                    .expect("pg_restore runs");
                assert!(
                    out.status.success(),
                    "pg_restore: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                (Store::connect(&url).await.unwrap(), Some((admin, database)))
            }
        };
        let copy = TestServer::start(restored.clone()).await;
        let after = everything(&copy, "kept", &seeded.write).await;
        assert_eq!(
            after, before,
            "{name}: the restored database serves the same"
        );
        drop(copy);
        restored.close().await;
        if let Some((mut admin, database)) = cleanup {
            sqlx::query(&format!(
                "DROP DATABASE IF EXISTS \"{database}\" WITH (FORCE)"
            ))
            .execute(&mut admin)
            .await
            .unwrap();
        }
        drop(server);
        db.cleanup().await;
    }
}

/// `--backup-to` from a SQLite database that is not there (a typo in a nightly job) is refused,
/// and creates nothing: connecting would have created an empty database and backed it up.
#[test]
fn a_backup_of_a_missing_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("typo/benchtrail.db");
    let target = dir.path().join("backup.db");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_benchtrail-server"))
        .arg("--database-url")
        .arg(format!("sqlite://{}?mode=rwc", source.display()))
        .arg("--backup-to")
        .arg(&target)
        .env(
            "BENCHTRAIL_ADMIN_TOKEN",
            "bt_backup_test_admin_token_0123456789abcdef",
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("there is no database at {}", source.display())),
        "{stderr}"
    );
    assert!(!source.parent().unwrap().exists() && !target.exists());
}
