//! Storage: one API over two databases.
//!
//! SQLite (embedded, the default: a file under `./benchtrail-data/`) and Postgres (production)
//! run one SQL text per query, on sqlx's native driver of each ([`db`]). BIGINT, DOUBLE
//! PRECISION, TEXT and BLOB/BYTEA cross the boundary as they are; timestamps are
//! `chrono::DateTime<Utc>` in Rust, `TIMESTAMPTZ` on Postgres (migration 0022) and RFC 3339 UTC
//! text with a fixed width on SQLite (so text order is time order), both at microseconds. Ids
//! and JSON are text. Schemas live in `migrations/sqlite` and `migrations/postgres`, embedded
//! in the binary and applied at start (`migrations/schema.md`). Postgres text columns are
//! `COLLATE "C"`, so text order (lists, keyset cursors) is the same bytewise order as
//! SQLite's. Parameters are always numbered in order of appearance (`$1`, `$2`, ...) because
//! SQLite numbers `$N` by first appearance, not by digit.
//!
//! The shared test suite in `server/tests/storage.rs` runs every test on both databases.

mod alerts;
mod backup;
mod batch_insert;
mod codec;
mod commit_graphs;
mod dashboard;
mod db;
mod detection;
pub mod file_codec;
mod file_references;
mod jobs;
mod model;
mod pr_comments;
mod readiness;
mod run_meta;
mod run_values;
pub mod samples_codec;
mod scan_history;
mod series_neighbours;
mod series_points;
mod series_rows;
mod series_seqs;
mod sessions;
mod sqlite_files;
mod store;
mod tokens;
mod verdict_bases;

pub use alerts::*;
pub use dashboard::RecentValue;
pub use detection::*;
pub use jobs::{ClaimedJob, JobState, JobTarget, JobTicket, QueueCounts};
pub use model::*;
pub use pr_comments::PrCommentPost;
pub use readiness::{NotReady, Readiness};
pub use samples_codec::SampleColumns;
pub use scan_history::CommitWindow;
pub use series_neighbours::SeriesNeighbours;
pub use sessions::{NewSession, SessionGrant, SessionInfo};
pub use store::Store;
pub use tokens::{NewToken, TokenGrant, TokenInfo, LAST_USED_RESOLUTION};

/// The conflict of a run id that another project's run holds. It names nothing of that
/// project (not even that it is another one's), so run ids cannot be used to probe private
/// projects; the remedy is the same whoever holds the id.
pub fn run_id_taken(id: uuid::Uuid) -> String {
    format!("run id {id} is taken; upload with a new run id, or with none (the server picks one)")
}

/// Storage failures. Constraint violations the caller can cause are mapped to
/// [`StorageError::Conflict`]; everything else is [`StorageError::Database`] (logged, never
/// shown to clients).
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// A unique constraint was violated (e.g. a project slug already taken, or a run id that
    /// belongs to another project).
    #[error("conflict: {0}")]
    Conflict(String),
    /// The database failed.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// Migrations failed.
    #[error("migration error: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// Stored data could not be decoded (a bug or a hand-edited database).
    #[error("corrupt stored data: {0}")]
    Corrupt(String),
}

/// Seconds a client is asked to wait (`Retry-After`) while the store is unavailable.
pub const STORE_RETRY_AFTER_SECS: u64 = 5;

impl StorageError {
    /// Whether this is the store being unavailable, a fault that passes without a change to
    /// benchtrail: the database unreachable or restarting, the pool exhausted, the disk full,
    /// an I/O error, a lock not granted in time. Such failures are answered with 503 and
    /// `Retry-After` ([`STORE_RETRY_AFTER_SECS`]) and retried by the analysis workers; any
    /// other failure is a bug (500).
    ///
    /// Classified from sqlx's typed errors and the database's own codes: SQLite primary result
    /// codes BUSY (5), LOCKED (6), NOMEM (7), READONLY (8), IOERR (10), FULL (13), CANTOPEN
    /// (14) (<https://sqlite.org/rescode.html>); Postgres SQLSTATE classes 08 (connection), 53
    /// (insufficient resources, e.g. 53100 disk full), 57P0x (shutdown, cannot connect now), 58
    /// (system error), 40001/40P01 (serialization failure, deadlock) and 55000 (a database not
    /// accepting connections)
    /// (<https://www.postgresql.org/docs/current/errcodes-appendix.html>).
    pub fn is_unavailable(&self) -> bool {
        let StorageError::Database(e) = self else {
            return false;
        };
        match e {
            sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::Protocol(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed => true,
            sqlx::Error::Database(db) => {
                use sqlx::error::DatabaseError;
                if let Some(sqlite) = db.try_downcast_ref::<sqlx::sqlite::SqliteError>() {
                    let primary = sqlite
                        .code()
                        .and_then(|c| c.parse::<i64>().ok())
                        .map(|c| c & 0xff);
                    matches!(primary, Some(5 | 6 | 7 | 8 | 10 | 13 | 14))
                } else if let Some(pg) = db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>() {
                    let code = pg.code();
                    ["08", "53", "57P0", "58"]
                        .iter()
                        .any(|c| code.starts_with(c))
                        || code == "40001"
                        || code == "40P01"
                        // "database … is not currently accepting connections" (ALTER
                        // DATABASE … ALLOW_CONNECTIONS false, a maintenance window).
                        || code == "55000"
                } else {
                    false
                }
            }
            _ => false,
        }
    }
}
