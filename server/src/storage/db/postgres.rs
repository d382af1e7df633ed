//! What is Postgres's own: connecting, with the cause of a failure kept.

use super::{outside_transaction, Pool, POOL_ACQUIRE_TIMEOUT};
use crate::storage::StorageError;
use sqlx::postgres::{PgConnection, PgPoolOptions};
use sqlx::Connection;

/// Connections of a Postgres pool.
const MAX_CONNECTIONS: u32 = 10;

/// Opens a Postgres pool.
///
/// # Errors
/// The server cannot be reached, refuses the login, or has no such database: the error of one
/// direct connection attempt, not the pool's "timed out".
pub(in crate::storage) async fn connect(url: &str) -> Result<Pool, StorageError> {
    // One direct connection first: the pool retries until its timeout and then reports only
    // "pool timed out", hiding the cause (connection refused, no such database, bad password).
    PgConnection::connect(url).await?.close().await?;
    Ok(Pool::Postgres(
        PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(POOL_ACQUIRE_TIMEOUT)
            .before_acquire(|conn, _meta| Box::pin(async move { Ok(outside_transaction(conn)) }))
            .connect(url)
            .await?,
    ))
}
