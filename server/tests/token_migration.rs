//! Migration 0009 on a database holding tokens made before it: they keep their id, project
//! and scope and still authenticate, list without a prefix, label, expiry or last use, and a
//! new token gets a higher id. On SQLite (where 0009 rebuilds the table), and on Postgres
//! when `BENCHTRAIL_TEST_DATABASE_URL` is set.

use benchtrail_server::auth::hash_token;
use benchtrail_server::storage::{Scope, Store, TokenGrant};
use sqlx::migrate::Migrator;
use sqlx::{Connection, PgConnection};

/// A token from before 0009.
const OLD_SECRET: &str = "bt_made_before_0009";

/// Applies the migrations before 0009 of `flavour` to `url` and stores two tokens as a server
/// of then did (ids 1 and 2 from the database, the second the newest).
async fn migrate_to_0008(flavour: &str, url: &str) {
    let dir = tempfile::tempdir().unwrap();
    let source = format!("{}/../migrations/{flavour}", env!("CARGO_MANIFEST_DIR"));
    for entry in std::fs::read_dir(&source).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if name.as_str() < "0009" {
            std::fs::copy(&path, dir.path().join(name)).unwrap();
        }
    }
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    Migrator::new(dir.path())
        .await
        .unwrap()
        .run(&pool)
        .await
        .unwrap();
    for sql in [
        "INSERT INTO projects (id, slug, name, default_branch, is_public, key_fields, created_at) \
         VALUES (1, 'demo', 'Demo', 'main', 1, '[]', '2024-01-01T00:00:00.000000Z')"
            .to_string(),
        format!(
            "INSERT INTO api_tokens (project_id, token_hash, scope, created_at) \
             VALUES (1, '{}', 'write', '2024-01-02T00:00:00.000000Z')",
            hash_token(OLD_SECRET)
        ),
        "INSERT INTO api_tokens (project_id, token_hash, scope, created_at) \
         VALUES (1, 'another', 'read', '2024-01-03T00:00:00.000000Z')"
            .to_string(),
    ] {
        sqlx::query(&sql).execute(&pool).await.unwrap();
    }
    pool.close().await;
}

async fn check(db: &str, url: &str) {
    let store = Store::connect(url).await.unwrap();
    assert_eq!(
        store.token(&hash_token(OLD_SECRET)).await.unwrap(),
        Some(TokenGrant {
            id: 1,
            project_id: 1,
            scope: Scope::Write,
            last_used_at: None,
            label: None,
            prefix: None,
            expires_at: None,
        }),
        "{db}"
    );
    let listed = serde_json::to_value(store.list_tokens(1).await.unwrap()).unwrap();
    assert_eq!(
        listed,
        serde_json::json!([
            {"id": 1, "scope": "write", "prefix": null, "label": null,
             "created_at": "2024-01-02T00:00:00Z", "expires_at": null, "last_used_at": null},
            {"id": 2, "scope": "read", "prefix": null, "label": null,
             "created_at": "2024-01-03T00:00:00Z", "expires_at": null, "last_used_at": null},
        ]),
        "{db}"
    );
    // Revoke the newest, then create: the new token does not take its id.
    assert!(store.delete_token(1, 2).await.unwrap(), "{db}");
    let new = store
        .create_token(&benchtrail_server::storage::NewToken {
            project_id: 1,
            scope: Scope::Read,
            token_hash: "new",
            prefix: "bt_12345678",
            label: None,
            created_at: chrono::Utc::now(),
            expires_at: None,
        })
        .await
        .unwrap();
    assert_eq!(new.id, 3, "{db}");
    store.close().await;
}

#[tokio::test]
async fn migration_0009_keeps_the_tokens_made_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/bt.db?mode=rwc", dir.path().display());
    migrate_to_0008("sqlite", &url).await;
    check("sqlite", &url).await;

    let Some(admin_url) = std::env::var("BENCHTRAIL_TEST_DATABASE_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        eprintln!("BENCHTRAIL_TEST_DATABASE_URL is not set: Postgres skipped");
        return;
    };
    let database = format!("bt_test_{}", uuid::Uuid::new_v4().simple());
    let mut admin = PgConnection::connect(&admin_url).await.unwrap();
    sqlx::query(&format!("CREATE DATABASE \"{database}\""))
        .execute(&mut admin)
        .await
        .unwrap();
    let (base, _) = admin_url.rsplit_once('/').unwrap();
    let url = format!("{base}/{database}");
    let outcome = tokio::spawn({
        let url = url.clone();
        async move {
            migrate_to_0008("postgres", &url).await;
            check("postgres", &url).await;
        }
    })
    .await;
    sqlx::query(&format!(
        "DROP DATABASE IF EXISTS \"{database}\" WITH (FORCE)"
    ))
    .execute(&mut admin)
    .await
    .unwrap();
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}
