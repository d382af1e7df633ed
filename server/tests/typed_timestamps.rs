//! Migration 0022: Postgres's timestamps become `TIMESTAMPTZ`, SQLite's stay fixed-width text.
//! A database of 0021 holding timestamps in every form a server of then wrote (fixed-width
//! `Z` text, and `pr_comment_posts.claimed_at` as `chrono`'s `to_rfc3339` with nanoseconds)
//! is migrated and read back through the store: every instant exactly as stored, the commit
//! time with its offset. On Postgres every timestamp column is then `timestamp with time zone`
//! and none is left as text; on SQLite they are all still TEXT.

use crate::common;

use benchtrail_server::storage::{JobState, Store};
use chrono::{DateTime, FixedOffset, Utc};
use common::migrations::{apply_migrations_before, execute_all, on_empty_databases};
use sqlx::Row;
use uuid::Uuid;

const RUN: &str = "00000000-0000-0000-0000-000000000001";

/// Every timestamp column of the schema (`migrations/schema.md`), as (table, column).
const TIMESTAMP_COLUMNS: &[(&str, &str)] = &[
    ("projects", "created_at"),
    ("api_tokens", "created_at"),
    ("api_tokens", "expires_at"),
    ("api_tokens", "last_used_at"),
    ("sessions", "created_at"),
    ("sessions", "expires_at"),
    ("project_settings", "created_at"),
    ("runs", "commit_time"),
    ("runs", "run_at"),
    ("runs", "uploaded_at"),
    ("commits", "commit_time"),
    ("commits", "first_run_at"),
    ("configurations", "created_at"),
    ("run_analyses", "analyzed_at"),
    ("alerts", "created_at"),
    ("alerts", "updated_at"),
    ("alerts", "triaged_at"),
    ("run_exclusions", "created_at"),
    ("baseline_pins", "created_at"),
    ("analysis_jobs", "queued_at"),
    ("analysis_jobs", "not_before"),
    ("analysis_jobs", "lease_until"),
    ("pr_comment_posts", "claimed_at"),
];

/// Migrations before 0022 of `flavour` on `url`, with rows as a server of 0021 wrote them.
async fn a_database_at_0021(flavour: &str, url: &str) {
    apply_migrations_before(flavour, url, "0022").await;
    execute_all(
        url,
        [
        "INSERT INTO projects (id, slug, name, default_branch, is_public, key_fields, created_at) \
         VALUES (1, 'demo', 'Demo', 'main', 1, '[]', '2024-01-01T00:00:00.000001Z')",
        "INSERT INTO api_tokens (project_id, token_hash, scope, created_at, prefix, label, expires_at, last_used_at) \
         VALUES (1, 'h', 'write', '2024-01-02T00:00:00.000000Z', 'bt_1', NULL, \
         '2999-12-31T23:59:59.999999Z', '2024-01-03T12:30:00.250000Z')",
        "INSERT INTO runs (seq, id, project_id, commit_sha, parent_shas, commit_time, commit_time_offset, \
         branch, run_at, uploaded_at, repeat_index, tags) \
         VALUES (1, '00000000-0000-0000-0000-000000000001', 1, 'c1', '[]', \
         '2024-01-02T03:04:05.123456Z', -25200, 'main', \
         '2024-01-05T00:00:00.654321Z', '2024-01-05T00:00:01.000000Z', 0, '{}')",
        "INSERT INTO commits (project_id, sha, parent_shas, commit_time, first_run_at, first_seq) \
         VALUES (1, 'c1', '[]', '2024-01-02T03:04:05.123456Z', '2024-01-05T00:00:00.654321Z', 1)",
        "INSERT INTO run_exclusions (run_id, reason, created_at) \
         VALUES ('00000000-0000-0000-0000-000000000001', 'noisy host', '2024-01-06T00:00:00.000000Z')",
        "INSERT INTO analysis_jobs (project_id, kind, branch, commit_sha, generation, attempts, \
         queued_at, not_before, lease_until) VALUES (1, 'commit', 'main', 'c1', 1, 2, \
         '2024-01-05T00:00:02.000000Z', '2024-01-05T00:00:09.500000Z', '2024-01-05T00:00:10.000000Z')",
        "INSERT INTO pr_comment_posts (run_id, project_id, provider, pr_number, claimed_at, report_sha256) \
         VALUES ('00000000-0000-0000-0000-000000000001', 1, 'github', 7, \
         '2024-01-05T00:00:03.123456789+00:00', 'abc')",
        ],
    )
    .await;
}

fn utc(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

/// The store reads back every instant as 0021 stored it.
async fn the_store_reads_every_instant(flavour: &str, store: &Store) {
    let project = store.project("demo").await.unwrap().unwrap();
    assert_eq!(
        project.created_at,
        utc("2024-01-01T00:00:00.000001Z"),
        "{flavour}"
    );

    let run_id = Uuid::parse_str(RUN).unwrap();
    let run = store.run_summary(run_id).await.unwrap().unwrap();
    assert_eq!(run.run_at, utc("2024-01-05T00:00:00.654321Z"), "{flavour}");
    assert_eq!(run.uploaded_at, utc("2024-01-05T00:00:01Z"), "{flavour}");
    // The UTC instant with the committer's offset (UTC−7) as uploaded.
    let west = FixedOffset::west_opt(7 * 3600).unwrap();
    let commit_time = run.commit_time.unwrap();
    assert_eq!(commit_time, utc("2024-01-02T03:04:05.123456Z"), "{flavour}");
    assert_eq!(commit_time.offset(), &west, "{flavour}");
    assert_eq!(
        commit_time.to_rfc3339(),
        "2024-01-01T20:04:05.123456-07:00",
        "{flavour}"
    );

    let tokens = serde_json::to_value(store.list_tokens(1).await.unwrap()).unwrap();
    assert_eq!(tokens[0]["created_at"], "2024-01-02T00:00:00Z", "{flavour}");
    assert_eq!(
        tokens[0]["expires_at"], "2999-12-31T23:59:59.999999Z",
        "{flavour}"
    );
    assert_eq!(
        tokens[0]["last_used_at"], "2024-01-03T12:30:00.250Z",
        "{flavour}"
    );

    let exclusion = store.run_exclusion(run_id).await.unwrap().unwrap();
    assert_eq!(
        exclusion.created_at,
        utc("2024-01-06T00:00:00Z"),
        "{flavour}"
    );

    let job = store.job_of_commit(1, "main", "c1").await.unwrap().unwrap();
    assert_eq!(
        job,
        JobState {
            queued_at: utc("2024-01-05T00:00:02Z"),
            attempts: 2,
            not_before: utc("2024-01-05T00:00:09.5Z"),
            // The lease ran out long ago: compared as times, not as text.
            running: false,
        },
        "{flavour}"
    );

    // The commit graph orders by the stored commit time.
    let graph = store.commit_graph(1).await.unwrap();
    assert_eq!(
        graph.nodes()[0].time,
        utc("2024-01-02T03:04:05.123456Z"),
        "{flavour}"
    );
}

/// The declared type of every timestamp column: `timestamp with time zone` on Postgres, TEXT
/// on SQLite; and on Postgres no column named like a timestamp is left as text.
async fn the_columns_have_their_types(flavour: &str, url: &str) {
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    for (table, column) in TIMESTAMP_COLUMNS {
        let declared: String = if flavour == "postgres" {
            sqlx::query(
                "SELECT data_type FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2",
            )
            .bind(*table)
            .bind(*column)
            .fetch_one(&pool)
            .await
            .unwrap_or_else(|e| panic!("{flavour}: {table}.{column}: {e}"))
            .get(0)
        } else {
            sqlx::query(&format!(
                "SELECT type FROM pragma_table_info('{table}') WHERE name = '{column}'"
            ))
            .fetch_one(&pool)
            .await
            .unwrap_or_else(|e| panic!("{flavour}: {table}.{column}: {e}"))
            .get(0)
        };
        let expected = if flavour == "postgres" {
            "timestamp with time zone"
        } else {
            "TEXT"
        };
        assert_eq!(declared, expected, "{flavour}: {table}.{column}");
    }
    if flavour == "postgres" {
        let text_times: Vec<String> = sqlx::query(
            "SELECT table_name || '.' || column_name FROM information_schema.columns \
             WHERE table_schema = current_schema() AND data_type = 'text' \
             AND (column_name LIKE '%\\_at' OR column_name LIKE '%\\_time' \
             OR column_name IN ('lease_until', 'not_before')) ORDER BY 1",
        )
        .fetch_all(&pool)
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
        assert_eq!(text_times, Vec::<String>::new(), "{flavour}");
        let claimed: String = sqlx::query(
            "SELECT to_char(claimed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US') \
             FROM pr_comment_posts",
        )
        .fetch_one(&pool)
        .await
        .unwrap()
        .get(0);
        // Nanoseconds rounded to Postgres's microseconds.
        assert_eq!(claimed, "2024-01-05T00:00:03.123457", "{flavour}");
    }
    pool.close().await;
}

#[tokio::test]
async fn migration_0022_keeps_every_instant_and_types_postgres_timestamps() {
    on_empty_databases(|flavour, url| async move {
        a_database_at_0021(flavour, &url).await;
        let store = Store::connect(&url)
            .await
            .unwrap_or_else(|e| panic!("{flavour}: {e}"));
        the_store_reads_every_instant(flavour, &store).await;
        store.close().await;
        the_columns_have_their_types(flavour, &url).await;
    })
    .await;
}
