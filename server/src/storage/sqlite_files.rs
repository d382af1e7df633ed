//! The SQLite database's files on disk: private to the user running the server.
//!
//! SQLite creates a missing database file with mode 0644 less the umask, so by default every
//! user of the machine could read every run, setting and token hash. benchtrail therefore
//! creates the folder (0700) and an empty database file (0600) itself before SQLite opens it
//! (SQLite takes an empty file for a new database). SQLite gives the `-wal` and `-shm` files it
//! creates later the permissions of the main file (`robust_open` copies them), so they are
//! 0600 too. Folders and files that exist already are left as they are: their owner chose.

use super::StorageError;
use std::path::Path;

/// Creates the folder of the SQLite file `path` (mode 0700, and any missing parents) and, when
/// `create_file`, the file itself (empty, mode 0600), each only if missing.
///
/// # Errors
/// The folder or the file cannot be created.
pub(super) fn prepare(path: &str, create_file: bool) -> Result<(), StorageError> {
    let path = Path::new(path);
    let io = |e| StorageError::Database(sqlx::Error::Io(e));
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        private_dir_builder().create(dir).map_err(io)?;
    }
    if !create_file {
        return Ok(());
    }
    match private_file_options().open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io(e)),
    }
}

/// Creates folders recursively, mode 0700 on Unix.
fn private_dir_builder() -> std::fs::DirBuilder {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
}

/// Creates a new file (never opens an existing one), mode 0600 on Unix.
fn private_file_options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}
