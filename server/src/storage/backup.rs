//! Online backups of the embedded SQLite store (`benchtrail-server --backup-to PATH`).
//!
//! `VACUUM INTO` writes a consistent, compacted copy of the whole database from one read
//! transaction, while the server keeps serving (<https://sqlite.org/lang_vacuum.html#vacuuminto>).
//! Postgres is backed up with its own tools (`pg_dump -Fc`, restored with `pg_restore`; see
//! the README's "Backups"), which benchtrail does not wrap.

use super::db;
use super::{Backend, StorageError, Store};
use std::path::Path;

impl Store {
    /// Writes a complete copy of this SQLite database to `path` (a new file, mode 0600: an
    /// existing one is refused, never overwritten), consistent as of one moment, while other
    /// connections go on reading and writing.
    ///
    /// # Errors
    /// [`StorageError::Conflict`] for Postgres (use `pg_dump`) or when `path` exists; a
    /// database error when the copy cannot be written.
    pub async fn backup_to(&self, path: &Path) -> Result<(), StorageError> {
        if self.backend() != Backend::Sqlite {
            return Err(StorageError::Conflict(
                "a Postgres database is backed up with pg_dump -Fc (and restored with pg_restore)"
                    .into(),
            ));
        }
        if path.exists() {
            return Err(StorageError::Conflict(format!(
                "{} exists; a backup is written to a new file",
                path.display()
            )));
        }
        let target = path.to_str().ok_or_else(|| {
            StorageError::Conflict(format!("{} is not a UTF-8 path", path.display()))
        })?;
        db::query("VACUUM INTO $1")
            .bind(target)
            .execute(&self.pool)
            .await?;
        // The copy holds token hashes and every uploaded file: private to the user, like the
        // database itself (a server started on it keeps the mode for its -wal and -shm).
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| StorageError::Database(sqlx::Error::Io(e)))?;
        }
        Ok(())
    }
}
