//! The [`Store`]: every query benchtrail runs. (Skeleton: bodies are implemented by the
//! storage work; signatures are the contract the HTTP layer and pages rely on.)

use super::*;
use uuid::Uuid;

/// A connection pool to SQLite or Postgres with the schema applied.
#[derive(Clone)]
pub struct Store {
    pool: sqlx::AnyPool,
    backend: Backend,
}

impl Store {
    /// Connects to `url` (`sqlite://path?mode=rwc`, `sqlite::memory:`, `postgres://...`),
    /// creating the SQLite file (and its folder) if missing, and applies the embedded migrations.
    pub async fn connect(url: &str) -> Result<Store, StorageError> {
        todo!("{url}")
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Closes the pool.
    pub async fn close(&self) {
        self.pool.close().await
    }

    /// Creates a project. `Conflict` if the slug is taken.
    pub async fn create_project(&self, project: &NewProject) -> Result<Project, StorageError> {
        todo!("{project:?}")
    }

    /// The project with this slug.
    pub async fn project(&self, slug: &str) -> Result<Option<Project>, StorageError> {
        todo!("{slug}")
    }

    /// All projects by slug.
    pub async fn list_projects(&self) -> Result<Vec<Project>, StorageError> {
        todo!()
    }

    /// Stores a project token's SHA-256 hash (hex) with its scope.
    pub async fn create_token(&self, project_id: i64, scope: Scope, token_hash: &str) -> Result<(), StorageError> {
        todo!("{project_id} {scope:?} {token_hash}")
    }

    /// The grant of the token with this hash, if any.
    pub async fn token(&self, token_hash: &str) -> Result<Option<TokenGrant>, StorageError> {
        todo!("{token_hash}")
    }

    /// The stored admin token hash, if one was generated on an earlier start.
    pub async fn admin_token_hash(&self) -> Result<Option<String>, StorageError> {
        todo!()
    }

    /// Stores the admin token hash (replacing any earlier one).
    pub async fn set_admin_token_hash(&self, hash: &str) -> Result<(), StorageError> {
        todo!("{hash}")
    }

    /// Inserts a whole run (files, configurations, series, results, values) in one transaction.
    /// If a run with `run.id` exists in the same project, stores nothing and returns
    /// `AlreadyStored`; if it exists in another project, `Conflict`.
    pub async fn insert_run(&self, run: &NewRun) -> Result<Inserted, StorageError> {
        todo!("{run:?}")
    }

    /// A run with its files and results.
    pub async fn run(&self, id: Uuid) -> Result<Option<StoredRun>, StorageError> {
        todo!("{id}")
    }

    /// Runs of a project, newest upload first, optionally on one branch. `cursor` is the
    /// `next_cursor` of the previous page.
    pub async fn list_runs(
        &self,
        project_id: i64,
        branch: Option<&str>,
        cursor: Option<&str>,
        limit: i64,
    ) -> Result<Page<RunSummary>, StorageError> {
        todo!("{project_id} {branch:?} {cursor:?} {limit}")
    }

    /// Number of runs in a project.
    pub async fn count_runs(&self, project_id: i64) -> Result<i64, StorageError> {
        todo!("{project_id}")
    }

    /// The decompressed content of file `index` of a run, with its metadata.
    pub async fn run_file(&self, run_id: Uuid, index: i64) -> Result<Option<(StoredFileInfo, Vec<u8>)>, StorageError> {
        todo!("{run_id} {index}")
    }

    /// A configuration by fingerprint.
    pub async fn config(&self, fingerprint: &str) -> Result<Option<StoredConfig>, StorageError> {
        todo!("{fingerprint}")
    }

    /// Series of a project matching `filter`, ordered by series key, cell key, metric, stat.
    pub async fn list_series(
        &self,
        project_id: i64,
        filter: &SeriesFilter,
        cursor: Option<&str>,
        limit: i64,
    ) -> Result<Page<SeriesInfo>, StorageError> {
        todo!("{project_id} {filter:?} {cursor:?} {limit}")
    }

    /// One series.
    pub async fn series(&self, series_id: &str) -> Result<Option<SeriesInfo>, StorageError> {
        todo!("{series_id}")
    }

    /// The points of a series on a branch, in commit order (commit time, then run time, then
    /// upload order); several runs of one commit give several points.
    pub async fn series_points(&self, series_id: &str, branch: &str) -> Result<Vec<SeriesPoint>, StorageError> {
        todo!("{series_id} {branch}")
    }
}
