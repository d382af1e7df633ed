//! Migration 0009 on a database holding tokens made before it: they keep their id, project
//! and scope and still authenticate, list without a prefix, label, expiry or last use, and a
//! new token gets a higher id. On SQLite (where 0009 rebuilds the table), and on Postgres
//! when `BENCHTRAIL_TEST_DATABASE_URL` is set.

use crate::common;

use benchtrail_server::auth::hash_token;
use benchtrail_server::storage::{Scope, Store, TokenGrant};
use common::migrations::{apply_migrations_before, execute_all, on_empty_databases};

/// A token from before 0009.
const OLD_SECRET: &str = "bt_made_before_0009";

/// Applies the migrations before 0009 of `flavour` to `url` and stores two tokens as a server
/// of then did (ids 1 and 2 from the database, the second the newest).
async fn migrate_to_0008(flavour: &str, url: &str) {
    apply_migrations_before(flavour, url, "0009").await;
    execute_all(
        url,
        [
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
        ],
    )
    .await;
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
    on_empty_databases(|flavour, url| async move {
        migrate_to_0008(flavour, &url).await;
        check(flavour, &url).await;
    })
    .await;
}
