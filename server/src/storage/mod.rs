//! Storage: one API over two databases.
//!
//! SQLite (embedded, the default: a file under `./benchtrail-data/`) and Postgres (production)
//! are reached through sqlx's `Any` driver with one SQL text per query. Only types both
//! databases share cross the boundary: BIGINT, DOUBLE PRECISION, TEXT and BLOB/BYTEA.
//! Timestamps are RFC 3339 UTC text with a fixed width (so text order is time order), ids and
//! JSON are text. Schemas live in `migrations/sqlite` and `migrations/postgres`, embedded in
//! the binary and applied at start. Postgres text columns are `COLLATE "C"`, so text order
//! (lists, keyset cursors, timestamps) is the same bytewise order as SQLite's. Parameters are always numbered in order of appearance
//! (`$1`, `$2`, ...) because SQLite numbers `$N` by first appearance, not by digit.
//!
//! The shared test suite in `server/tests/storage.rs` runs every test on both databases.

mod alerts;
mod codec;
mod detection;
mod model;
mod pr_comments;
pub mod samples_codec;
mod store;

pub use alerts::*;
pub use detection::*;
pub use model::*;
pub use pr_comments::PrCommentPost;
pub use store::Store;

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
