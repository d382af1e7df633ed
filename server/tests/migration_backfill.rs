//! Migration 0004 on a database holding runs stored before it: the commit graph is filled
//! from those runs, their upload count is 1 and their commit times read as UTC. On SQLite, and
//! on Postgres when `BENCHTRAIL_TEST_DATABASE_URL` is set.

use crate::common;

use benchtrail_server::storage::Store;
use common::migrations::{apply_migrations_before, execute_all, on_empty_databases};

/// Applies migrations 0001–0003 of `flavour` (`sqlite` or `postgres`) to `url`, as a server
/// from before the commit graph did: a copy of those files, so their checksums are the ones
/// the current server finds recorded.
async fn migrate_to_0003(flavour: &str, url: &str) {
    apply_migrations_before(flavour, url, "0004").await;
    // A project and four runs: c1 first from a shallow clone (no parents), then a repeat
    // with them; c2 a child of c1 committed earlier; d1 without a commit time.
    execute_all(
        url,
        [
        "INSERT INTO projects (id, slug, name, default_branch, is_public, key_fields, created_at) \
         VALUES (1, 'demo', 'Demo', 'main', 1, '[]', '2024-01-01T00:00:00.000000Z')",
        "INSERT INTO runs (id, project_id, commit_sha, parent_shas, commit_time, branch, run_at, uploaded_at, repeat_index, tags) \
         VALUES ('00000000-0000-0000-0000-000000000001', 1, 'c1', '[]', '2024-01-02T00:00:00.000000Z', 'main', \
         '2024-01-05T00:00:00.000000Z', '2024-01-05T00:00:00.000000Z', 0, '{}')",
        "INSERT INTO runs (id, project_id, commit_sha, parent_shas, commit_time, branch, run_at, uploaded_at, repeat_index, tags) \
         VALUES ('00000000-0000-0000-0000-000000000002', 1, 'c2', '[\"c1\"]', '2024-01-01T00:00:00.000000Z', 'main', \
         '2024-01-06T00:00:00.000000Z', '2024-01-06T00:00:00.000000Z', 0, '{}')",
        "INSERT INTO runs (id, project_id, commit_sha, parent_shas, commit_time, branch, run_at, uploaded_at, repeat_index, tags) \
         VALUES ('00000000-0000-0000-0000-000000000003', 1, 'c1', '[\"c0\"]', '2024-01-02T00:00:00.000000Z', 'main', \
         '2024-01-07T00:00:00.000000Z', '2024-01-07T00:00:00.000000Z', 1, '{}')",
        "INSERT INTO runs (id, project_id, commit_sha, parent_shas, branch, run_at, uploaded_at, repeat_index, tags) \
         VALUES ('00000000-0000-0000-0000-000000000004', 1, 'd1', '[]', 'main', \
         '2023-12-01T00:00:00.000000Z', '2024-01-08T00:00:00.000000Z', 0, '{}')",
        ],
    )
    .await;
}

/// Connects the current server (migration 0004 applied now) and checks what it made of the
/// old rows.
async fn check(db: &str, url: &str) {
    let store = Store::connect(url).await.unwrap();
    let graph = store.commit_graph(1).await.unwrap();
    let order: Vec<&str> = graph.order().collect();
    // d1 by its run time (no commit time), c1 before its child c2 though c2 is dated earlier.
    assert_eq!(order, ["d1", "c1", "c2"], "{db}");
    let c1 = graph.node("c1").unwrap();
    assert_eq!(
        c1.parents,
        ["c0"],
        "{db}: the first upload that sent parents"
    );
    assert_eq!(c1.first_seq, 1, "{db}");
    assert_eq!(c1.time.to_rfc3339(), "2024-01-02T00:00:00+00:00", "{db}");
    let d1 = graph.node("d1").unwrap();
    assert_eq!(d1.time.to_rfc3339(), "2023-12-01T00:00:00+00:00", "{db}");
    assert_eq!(d1.first_seq, 4, "{db}");
    let run = store
        .run("00000000-0000-0000-0000-000000000002".parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(run.summary.upload_count, 1, "{db}");
    assert_eq!(
        serde_json::to_value(&run.summary).unwrap()["commit_time"],
        "2024-01-01T00:00:00Z",
        "{db}: stored before offsets were kept, read as UTC"
    );
    // Migration 0008: the runs were never analyzed, so each of their commits has its job (one
    // for c1's two runs), queued since its first upload, not attempted yet.
    assert_eq!(store.queued_jobs().await.unwrap(), 3, "{db}");
    let c1_job = store.job_of_commit(1, "main", "c1").await.unwrap().unwrap();
    assert_eq!(
        (
            c1_job.queued_at.to_rfc3339().as_str(),
            c1_job.attempts,
            c1_job.running
        ),
        ("2024-01-05T00:00:00+00:00", 0, false),
        "{db}"
    );
    store.close().await;
}

#[tokio::test]
async fn migration_0004_fills_the_commit_graph_from_stored_runs() {
    on_empty_databases(|flavour, url| async move {
        migrate_to_0003(flavour, &url).await;
        check(flavour, &url).await;
    })
    .await;
}
