//! What is SQLite's own: opening the file (or memory), its per-connection pragmas, and the
//! check that a pooled connection is not left inside a failed transaction.

use super::checkpoint::{self, Checkpointer};
use super::{outside_transaction, Pool, POOL_ACQUIRE_TIMEOUT};
use crate::storage::StorageError;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqlitePoolOptions};
use std::str::FromStr;

/// How long a SQLite connection waits for another writer before failing.
const BUSY_TIMEOUT_MS: u32 = 5_000;

/// Connections of a file-backed SQLite pool; SQLite has a single writer anyway.
const MAX_CONNECTIONS: u32 = 4;

/// Rows a connection's worker thread may step ahead of the task reading them. sqlx's default
/// (50) made the worker and the reader hand over the thread at nearly every row of a long
/// read: a series of 1,800 points spent more time in context switches than in SQLite. The
/// buffer is a bound, not an allocation: a query of a few rows holds a few.
const ROW_BUFFER: usize = 4_096;

/// `url`'s options with this module's row buffer.
fn options(url: &str) -> Result<SqliteConnectOptions, sqlx::Error> {
    Ok(SqliteConnectOptions::from_str(url)?.row_buffer_size(ROW_BUFFER))
}

/// Opens a SQLite pool. A file database gets its folder created and `mode=rwc`, and its
/// background WAL checkpoint ([`super::checkpoint`]; it runs while the returned
/// [`Checkpointer`] is kept); an in-memory one gets exactly one connection that never expires,
/// because every new connection to `sqlite::memory:` would open a fresh, empty database.
///
/// # Errors
/// The folder or file cannot be created, or SQLite cannot open it.
pub(in crate::storage) async fn connect(
    url: &str,
) -> Result<(Pool, Option<Checkpointer>), StorageError> {
    let (path, params) = split_url(url);
    let in_memory = path == ":memory:" || params.split('&').any(|p| p == "mode=memory");
    let options = SqlitePoolOptions::new()
        .after_connect(move |conn, _meta| Box::pin(pragmas(conn, in_memory)));
    if in_memory {
        let options = options
            .max_connections(1)
            .idle_timeout(None)
            .max_lifetime(None);
        return Ok((
            Pool::Sqlite(options.connect_with(self::options(url)?).await?),
            None,
        ));
    }
    // Only `mode=rwc` (the default) lets SQLite create the file; `ro`/`rw` must find one.
    let creates = !params
        .split('&')
        .any(|p| p.starts_with("mode=") && p != "mode=rwc");
    crate::storage::sqlite_files::prepare(path, creates)?;
    let url = if params.split('&').any(|p| p.starts_with("mode=")) {
        url.to_string()
    } else if params.is_empty() {
        format!("{}?mode=rwc", url.trim_end_matches('?'))
    } else {
        format!("{url}&mode=rwc")
    };
    let pool = options
        .max_connections(MAX_CONNECTIONS)
        .acquire_timeout(POOL_ACQUIRE_TIMEOUT)
        .before_acquire(|conn, _meta| Box::pin(async move { Ok(outside_transaction(conn)) }))
        .connect_with(self::options(&url)?)
        .await?;
    // Started once the pool has opened (and put in WAL mode) the file.
    // A read-only database (`mode=ro`) writes no log to checkpoint.
    let read_only = params.split('&').any(|p| p == "mode=ro");
    let checkpointer = (!read_only)
        .then(|| self::options(&url).map(checkpoint::start))
        .transpose()?;
    Ok((Pool::Sqlite(pool), checkpointer))
}

/// Per-connection SQLite settings: write-ahead log (readers do not block the writer) that a
/// background task checkpoints ([`super::checkpoint`]), foreign keys enforced, and a wait
/// instead of an immediate `SQLITE_BUSY` under write contention.
async fn pragmas(conn: &mut SqliteConnection, in_memory: bool) -> Result<(), sqlx::Error> {
    if !in_memory {
        sqlx::query("PRAGMA journal_mode = WAL")
            .execute(&mut *conn)
            .await?;
        sqlx::query(&format!(
            "PRAGMA wal_autocheckpoint = {}",
            checkpoint::AUTOCHECKPOINT_PAGES
        ))
        .execute(&mut *conn)
        .await?;
    }
    sqlx::query("PRAGMA foreign_keys = ON")
        .execute(&mut *conn)
        .await?;
    sqlx::query(&format!("PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}"))
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Splits `sqlite://path?params` (or `sqlite:path?params`) into path and params.
pub(in crate::storage) fn split_url(url: &str) -> (&str, &str) {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .unwrap_or(url);
    rest.split_once('?').unwrap_or((rest, ""))
}
