//! Whether the store can serve: what `GET /readyz` reports.

use super::codec::{now, timestamp_text};
use super::db;
use super::{StorageError, Store};

/// The key of the row `/readyz` writes to prove the store takes writes.
const PROBE_KEY: &str = "readyz_probe";

/// A store that answered every readiness check.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Readiness {
    /// The newest migration applied (`_sqlx_migrations`), equal to the newest one this
    /// server embeds.
    pub migration: i64,
    /// Analysis jobs queued (0 once everything stored is analyzed).
    pub queued_analyses: i64,
}

/// Why the store is not ready.
#[derive(Debug, thiserror::Error)]
pub enum NotReady {
    /// A read or the write probe failed.
    #[error("{0}")]
    Store(#[from] StorageError),
    /// The database's schema is not the one this server embeds (another server version
    /// migrated it, or a migration failed).
    #[error("the database's newest migration is {found:?}, this server's is {expected}")]
    Migrations {
        /// The newest applied migration, if any.
        found: Option<i64>,
        /// The newest migration this server embeds.
        expected: i64,
    },
}

impl Store {
    /// Checks that the store reads, takes a write (one row of `settings`, in a transaction
    /// like every write: a full disk or a read-only database fails it) and has exactly this
    /// server's migrations applied.
    ///
    /// # Errors
    /// [`NotReady`] saying which check failed.
    pub async fn readiness(&self) -> Result<Readiness, NotReady> {
        let found: Option<i64> =
            db::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
                .fetch_one(&self.pool)
                .await
                .map_err(StorageError::from)?;
        let expected = self.newest_migration();
        if found != Some(expected) {
            return Err(NotReady::Migrations { found, expected });
        }
        let mut tx = self.begin_write().await?;
        db::query(
            "INSERT INTO settings (key, value) VALUES ($1, $2) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(PROBE_KEY)
        .bind(timestamp_text(&now()))
        .execute(&mut *tx)
        .await
        .map_err(StorageError::from)?;
        tx.commit().await.map_err(StorageError::from)?;
        Ok(Readiness {
            migration: expected,
            queued_analyses: self.queued_jobs().await?,
        })
    }
}
