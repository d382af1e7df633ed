//! The [`Store`]: every query benchtrail runs, one SQL text per query for SQLite and Postgres.
//!
//! Signatures are the contract the HTTP layer and pages rely on. Column values are encoded
//! and decoded by [`super::codec`]; queries with optional filters are assembled by
//! [`SqlBuilder`], which numbers placeholders in order of appearance.

use super::batch_insert::SeriesSeqs;
use super::codec::*;
use super::db::{self, Conn, DbRow, Param};
use super::series_seqs::SeriesSeqCache;
use super::*;
use benchtrail_core::metric::Interval;
use benchtrail_core::quality::QualityResult;
use benchtrail_core::settings::ProjectSettings;
use sqlx::migrate::Migrator;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use uuid::Uuid;

/// The schema of each database, embedded at compile time.
static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("../migrations/postgres");

/// The `settings` key of the admin token hash.
const ADMIN_TOKEN_KEY: &str = "admin_token_hash";

pub(super) const PROJECT_COLUMNS: &str =
    "id, slug, name, repository_url, default_branch, is_public, key_fields, created_at";

/// Columns decoded by [`run_summary`]; `r` is `runs`, `p` its project.
pub(super) const RUN_COLUMNS: &str = "r.seq, r.id, p.slug, r.commit_sha, r.parent_shas, r.commit_time, r.commit_time_offset, \
     r.commit_subject, r.upload_count, r.branch, r.pr_number, r.merge_base_sha, r.run_at, r.uploaded_at, r.ci_job_url, r.repeat_index, r.repeats_expected, r.tags, \
     (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id) AS result_count";

/// Columns decoded by [`series_info`]; `s` is `series`, `p` its project.
pub(super) const SERIES_COLUMNS: &str =
    "s.series_id, p.slug, s.series_key_json, s.cell_key, s.cell_json, s.metric, s.stat, s.slo_profile, s.unit, s.direction";

/// The condition on series `s` whose values no settings change deletes: every series but
/// those of an SLO profile other than the tool's own goodput ([`benchtrail_core::slo::TOOL_PROFILE`],
/// pinned by a test). A macro so that both constants below are one text at compile time.
macro_rules! values_kept_sql {
    () => {
        "(s.slo_profile IS NULL OR s.slo_profile = 'tool')"
    };
}

/// Series whose values a settings change may not delete, as a condition of a query of
/// `series s`; [`Store::put_settings`] deletes the values of the others and writes those of
/// the new settings' profiles.
pub(super) const SERIES_VALUES_KEPT: &str = values_kept_sql!();

/// Whether series `s` holds a value, as a condition of a query of `series s`. Only
/// [`Store::put_settings`] deletes values, and only of series outside [`SERIES_VALUES_KEPT`];
/// every series is stored with its first value in one transaction. So only a series outside
/// it is looked up in `metric_values`: probing the index for every series of a project was
/// 9–11 ms of the dashboard's series list on Postgres at 1,296 series (BENCHMARKS.md
/// "Session 44"; each probe is several pages of the index).
pub(super) const SERIES_HAS_VALUES: &str = concat!(
    "(",
    values_kept_sql!(),
    " OR EXISTS (SELECT 1 FROM metric_values mv WHERE mv.series_seq = s.seq))"
);

/// A connection pool to SQLite or Postgres with the schema applied.
#[derive(Clone)]
pub struct Store {
    pub(super) pool: db::Pool,
    instance: u64,
    /// Stored runs' values kept for the next analyses (shared by the store's clones).
    pub(super) run_values: std::sync::Arc<super::run_values::RunValuesCache>,
    /// The projects' commit graphs kept between reads (shared by the store's clones).
    pub(super) commit_graphs: std::sync::Arc<super::commit_graphs::CommitGraphs>,
    /// Stored runs' immutable columns kept for the series reads (shared by the store's clones).
    pub(super) run_meta: std::sync::Arc<super::run_meta::RunMetaCache>,
    /// Runs' decoded verdict bases kept for the pages that list verdicts (shared by the
    /// store's clones).
    pub(super) verdict_bases: std::sync::Arc<super::verdict_bases::VerdictBasisCache>,
    /// Series rows kept decoded for the series lists (shared by the store's clones).
    pub(super) series_rows: std::sync::Arc<super::series_rows::SeriesCache>,
    /// Stored series' seqs by id, for the inserts of later uploads (shared by the store's
    /// clones).
    pub(super) series_seqs: std::sync::Arc<super::series_seqs::SeriesSeqCache>,
    /// A SQLite file's background WAL checkpoint, kept (never read) so that it stops with the
    /// last clone.
    _checkpointer: Option<std::sync::Arc<db::Checkpointer>>,
}

/// Numbers the stores of this process ([`Store::instance`]).
static NEXT_INSTANCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Store {
    /// Connects to `url` (`sqlite://path?mode=rwc`, `sqlite::memory:`, `postgres://...`),
    /// creating the SQLite file (and its folder) if missing, and applies the embedded migrations.
    pub async fn connect(url: &str) -> Result<Store, StorageError> {
        let (pool, checkpointer) = match backend_of(url)? {
            Backend::Sqlite => db::connect_sqlite(url).await?,
            Backend::Postgres => (db::connect_postgres(url).await?, None),
        };
        pool.migrate(migrations(pool.backend())).await?;
        let instance = NEXT_INSTANCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Store {
            pool,
            instance,
            run_values: Default::default(),
            commit_graphs: Default::default(),
            run_meta: Default::default(),
            verdict_bases: Default::default(),
            series_rows: Default::default(),
            series_seqs: Default::default(),
            _checkpointer: checkpointer.map(std::sync::Arc::new),
        })
    }

    /// A number unique to this store (and its clones) within the process: what keeps state
    /// kept per project apart when one process holds several databases (tests do).
    pub fn instance(&self) -> u64 {
        self.instance
    }

    /// Begins a transaction that will write ([`db::Pool::begin_write`]: on SQLite it takes
    /// the write lock at once).
    pub(super) async fn begin_write(&self) -> Result<db::Tx, StorageError> {
        Ok(self.pool.begin_write().await?)
    }

    /// The version of the newest migration this server embeds for its database.
    pub fn newest_migration(&self) -> i64 {
        migrations(self.backend())
            .iter()
            .map(|m| m.version)
            .max()
            .unwrap_or(0)
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.pool.backend()
    }

    /// Whether [`Store::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.pool.is_closed()
    }

    /// Closes the pool.
    pub async fn close(&self) {
        self.pool.close().await
    }

    /// Creates a project. `Conflict` if the slug is taken.
    pub async fn create_project(&self, project: &NewProject) -> Result<Project, StorageError> {
        let created_at = now();
        let id: i64 = db::query_scalar(
            "INSERT INTO projects (slug, name, repository_url, default_branch, is_public, key_fields, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        )
        .bind(&project.slug)
        .bind(&project.name)
        .bind(&project.repository_url)
        .bind(&project.default_branch)
        .bind(i64::from(project.public))
        .bind(json_text(&project.key_fields))
        .bind(created_at)
        .fetch_one(&self.pool)
        .await
        .map_err(|e| unique_as_conflict(e, || format!("project slug `{}` is already taken", project.slug)))?;
        Ok(Project {
            id,
            slug: project.slug.clone(),
            name: project.name.clone(),
            repository_url: project.repository_url.clone(),
            default_branch: project.default_branch.clone(),
            public: project.public,
            key_fields: project.key_fields.clone(),
            created_at,
        })
    }

    /// The project with this slug.
    pub async fn project(&self, slug: &str) -> Result<Option<Project>, StorageError> {
        let sql = format!("SELECT {PROJECT_COLUMNS} FROM projects WHERE slug = $1");
        let row = db::query(&sql)
            .bind(slug)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(project_row).transpose()
    }

    /// All projects by slug.
    pub async fn list_projects(&self) -> Result<Vec<Project>, StorageError> {
        let sql = format!("SELECT {PROJECT_COLUMNS} FROM projects ORDER BY slug");
        let rows = db::query(&sql).fetch_all(&self.pool).await?;
        rows.iter().map(project_row).collect()
    }

    /// The stored admin token hash, if one was generated on an earlier start.
    pub async fn admin_token_hash(&self) -> Result<Option<String>, StorageError> {
        let value = db::query_scalar("SELECT value FROM settings WHERE key = $1")
            .bind(ADMIN_TOKEN_KEY)
            .fetch_optional(&self.pool)
            .await?;
        Ok(value)
    }

    /// Stores the admin token hash (replacing any earlier one).
    pub async fn set_admin_token_hash(&self, hash: &str) -> Result<(), StorageError> {
        db::query(
            "INSERT INTO settings (key, value) VALUES ($1, $2) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(ADMIN_TOKEN_KEY)
        .bind(hash)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Inserts a whole run (files, configurations, series, results, values) and its commit
    /// (parents, time) in one transaction. If a run with `run.id` exists in the same project,
    /// stores nothing but one more upload (its `upload_count`) and returns `AlreadyStored`; if
    /// it exists in another project, `Conflict`.
    ///
    /// The run row is written first with `ON CONFLICT DO NOTHING`: that takes the write lock
    /// up front (SQLite) and waits for a concurrent insert of the same id to finish (Postgres),
    /// so racing uploads of one run resolve to one `Created` and `AlreadyStored`/`Conflict`.
    ///
    /// A created run's commit gets its analysis job in the same transaction
    /// ([`Store::insert_run_leased`]), so no stored run is left without an analysis.
    pub async fn insert_run(&self, run: &NewRun) -> Result<Inserted, StorageError> {
        Ok(self.insert_run_leased(run, None).await?.0)
    }

    /// [`Store::insert_run`], taking the lease of the commit's analysis job for `lease` (when
    /// no other worker holds it): the uploader analyzes the commit before answering. The
    /// ticket is `None` when nothing was created.
    pub async fn insert_run_leased(
        &self,
        run: &NewRun,
        lease: Option<chrono::Duration>,
    ) -> Result<(Inserted, Option<super::JobTicket>), StorageError> {
        let started = std::time::Instant::now();
        let mut tx = self.begin_write().await?;
        let began = started.elapsed();
        // Roll back explicitly on failure rather than on drop: the in-memory SQLite pool has a
        // single connection and the next query must find it clean.
        let mut without_samples = Vec::new();
        let mut series_read = SeriesSeqs::new();
        let written = match write_run(
            &mut tx,
            run,
            &self.series_seqs,
            &mut without_samples,
            &mut series_read,
        )
        .await
        {
            Ok(Inserted::Created) => {
                let target = super::JobTarget::Commit {
                    branch: run.branch.clone(),
                    commit_sha: run.commit_sha.clone(),
                };
                super::jobs::enqueue_job(&mut tx, run.project_id, &target, lease)
                    .await
                    .map(|ticket| (Inserted::Created, Some(ticket)))
            }
            Ok(other) => Ok((other, None)),
            Err(e) => Err(e),
        };
        match written {
            // An identical re-upload stores nothing but its count (`upload_count`).
            Ok(inserted) => {
                let written = started.elapsed();
                tx.commit().await?;
                // Committed: the next analyses need not ask whether these have samples.
                self.run_values.note_without_samples(without_samples);
                self.series_seqs.note(series_read);
                // Where an insert's time goes (cumulative milliseconds), for `history_growth`.
                tracing::debug!(
                    run = %run.id,
                    began_ms = began.as_secs_f64() * 1e3,
                    written_ms = written.as_secs_f64() * 1e3,
                    committed_ms = started.elapsed().as_secs_f64() * 1e3,
                    "run inserted"
                );
                Ok(inserted)
            }
            outcome => {
                if let Err(e) = tx.rollback().await {
                    tracing::warn!(run = %run.id, error = %e, "rolling back a run insert failed");
                }
                outcome
            }
        }
    }

    /// The current settings of a project: the newest stored version, or version 1 (the
    /// defaults, dated at the project's creation) when none was stored.
    pub async fn settings(&self, project: &Project) -> Result<StoredSettings, StorageError> {
        let mut conn = self.pool.acquire().await?;
        current_settings(&mut conn, project).await
    }

    /// Stores `settings` as the project's next version and, in the same transaction,
    /// recomputes the values that depend on them for every result of the project that has
    /// samples: its goodput/attainment values under SLO profiles (all but `tool`) are
    /// deleted and replaced by `rows(samples)`. `expected_version`, when given, must be the
    /// current version (else `Conflict`: someone else changed the settings meanwhile).
    pub async fn put_settings(
        &self,
        project: &Project,
        settings: &ProjectSettings,
        expected_version: Option<i64>,
        rows: impl Fn(&ResultSamples) -> Result<Vec<NewMetric>, String>,
    ) -> Result<StoredSettings, StorageError> {
        let mut tx = self.begin_write().await?;
        match write_settings(&mut tx, project, settings, expected_version, rows).await {
            Ok(stored) => {
                tx.commit().await?;
                Ok(stored)
            }
            Err(e) => {
                if let Err(e) = tx.rollback().await {
                    tracing::warn!(project = %project.slug, error = %e, "rolling back settings failed");
                }
                Err(e)
            }
        }
    }

    /// The decoded samples of every result of a run that has any, by result index, with the
    /// `columns` asked for: one query (the compare page and the report read both runs' results
    /// whole).
    pub async fn run_samples(
        &self,
        run_id: Uuid,
        columns: SampleColumns,
    ) -> Result<HashMap<i64, benchtrail_core::samples::RequestSamples>, StorageError> {
        let sql = format!(
            "SELECT r.idx, {} FROM result_samples rs JOIN results r ON r.id = rs.result_id \
             WHERE r.run_id = $1",
            samples_sql(columns)
        );
        let rows = db::query(&sql)
            .bind(run_id.to_string())
            .fetch_all(&self.pool)
            .await?;
        let mut out = HashMap::with_capacity(rows.len());
        for row in rows {
            out.insert(row.try_get("idx")?, samples_of_row(&row, columns)?);
        }
        Ok(out)
    }

    /// The decoded samples of result `index` of a run, if it has any.
    pub async fn result_samples(
        &self,
        run_id: Uuid,
        index: i64,
    ) -> Result<Option<benchtrail_core::samples::RequestSamples>, StorageError> {
        let row = db::query(&format!(
            "SELECT {} FROM result_samples rs JOIN results r ON r.id = rs.result_id \
             WHERE r.run_id = $1 AND r.idx = $2",
            samples_sql(SampleColumns::All)
        ))
        .bind(run_id.to_string())
        .bind(index)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|row| samples_of_row(&row, SampleColumns::All))
            .transpose()
    }

    /// A run's summary (one row), without its files and results: what a verdict needs.
    pub async fn run_summary(&self, id: Uuid) -> Result<Option<RunSummary>, StorageError> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs r JOIN projects p ON p.id = r.project_id WHERE r.id = $1");
        let row = db::query(&sql)
            .bind(id.to_string())
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(run_summary).transpose()?.map(|(_, s)| s))
    }

    /// A run with its files and results.
    pub async fn run(&self, id: Uuid) -> Result<Option<StoredRun>, StorageError> {
        let run_id = id.to_string();
        let Some(summary) = self.run_summary(id).await? else {
            return Ok(None);
        };
        Ok(Some(StoredRun {
            summary,
            files: self.run_files(&run_id).await?,
            results: self.run_results(&run_id).await?,
            quality: self.run_quality(&run_id).await?,
            exclusion: self.run_exclusion(id).await?,
        }))
    }

    /// Runs of a project, newest upload first, optionally on one branch. `cursor` is the
    /// `next_cursor` of the previous page (the upload sequence number of its last run); a
    /// cursor that is not one gives an empty page. `limit` below 1 counts as 1.
    pub async fn list_runs(
        &self,
        project_id: i64,
        branch: Option<&str>,
        cursor: Option<&str>,
        limit: i64,
    ) -> Result<Page<RunSummary>, StorageError> {
        let limit = limit.max(1);
        let mut q = SqlBuilder::new(&format!(
            "SELECT {RUN_COLUMNS} FROM runs r JOIN projects p ON p.id = r.project_id WHERE r.project_id = "
        ));
        q.bind(Param::int(project_id));
        if let Some(branch) = branch {
            q.push(" AND r.branch = ")
                .bind(Param::text(branch.to_string()));
        }
        if let Some(cursor) = cursor {
            let Ok(seq) = cursor.parse::<i64>() else {
                return Ok(Page {
                    items: Vec::new(),
                    next_cursor: None,
                });
            };
            q.push(" AND r.seq < ").bind(Param::int(seq));
        }
        q.push(" ORDER BY r.seq DESC LIMIT ")
            .bind(Param::int(limit.saturating_add(1)));
        let rows = q.query(self.backend()).fetch_all(&self.pool).await?;
        let runs = rows
            .iter()
            .map(run_summary)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(page(
            runs,
            limit,
            |(seq, _)| seq.to_string(),
            |(_, run)| run,
        ))
    }

    /// Counts one more upload of a stored run (an identical re-upload that stored nothing);
    /// returns the new count, `None` when there is no such run.
    pub async fn count_reupload(&self, run_id: Uuid) -> Result<Option<i64>, StorageError> {
        let mut tx = self.begin_write().await?;
        let count = count_upload(&mut tx, &run_id.to_string()).await?;
        tx.commit().await?;
        Ok(count)
    }

    /// Number of runs in a project.
    pub async fn count_runs(&self, project_id: i64) -> Result<i64, StorageError> {
        let count = db::query_scalar("SELECT COUNT(*) FROM runs WHERE project_id = $1")
            .bind(project_id)
            .fetch_one(&self.pool)
            .await?;
        Ok(count)
    }

    /// The decompressed content of file `index` of a run, with its metadata.
    pub async fn run_file(
        &self,
        run_id: Uuid,
        index: i64,
    ) -> Result<Option<(StoredFileInfo, Vec<u8>)>, StorageError> {
        let row = db::query(
            "SELECT idx, name, format, size, sha256, content_gz FROM run_files WHERE run_id = $1 AND idx = $2",
        )
        .bind(run_id.to_string())
        .bind(index)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let content_gz: Vec<u8> = row.try_get("content_gz")?;
        let info = file_info(&row)?;
        if !file_codec::needs_references(&content_gz) {
            return Ok(Some((info, stored_file(&content_gz)?)));
        }
        let references = self.file_references(&run_id.to_string(), index).await?;
        let content = file_codec::decode_referring(&content_gz, &references)
            .map_err(|e| StorageError::Corrupt(format!("content_gz: {e}")))?;
        // The references are other rows: a file that does not read back as it was sent is
        // an error, never a download with other numbers in it.
        if benchtrail_core::sha256_hex(&content) != info.sha256 {
            return Err(StorageError::Corrupt(format!(
                "file {index} of run {run_id} does not read back with its SHA-256"
            )));
        }
        Ok(Some((info, content)))
    }

    /// What file `index` of a run was stored referring to ([`file_codec::References`]): the
    /// samples of the run's results read from that file, in result order.
    async fn file_references(
        &self,
        run_id: &str,
        index: i64,
    ) -> Result<file_codec::References, StorageError> {
        let rows = db::query(&format!(
            "SELECT r.source_json, {} FROM results r JOIN result_samples rs ON rs.result_id = r.id \
             WHERE r.run_id = $1 ORDER BY r.idx",
            samples_sql(SampleColumns::All)
        ))
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        let mut samples = Vec::with_capacity(rows.len());
        for row in rows {
            let source: String = row.try_get("source_json")?;
            let source: Option<benchtrail_core::result::Source> =
                parse_json("source_json", &source)?;
            if source.is_some_and(|s| i64::try_from(s.file) == Ok(index)) {
                samples.push(samples_of_row(&row, SampleColumns::All)?);
            }
        }
        Ok(file_codec::References::of_samples(&samples))
    }

    /// A configuration by fingerprint.
    pub async fn config(&self, fingerprint: &str) -> Result<Option<StoredConfig>, StorageError> {
        let row = db::query("SELECT fingerprint, canonical_json, created_at FROM configurations WHERE fingerprint = $1")
            .bind(fingerprint)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else { return Ok(None) };
        let canonical: String = row.try_get("canonical_json")?;
        Ok(Some(StoredConfig {
            fingerprint: row.try_get("fingerprint")?,
            configuration: parse_json("canonical_json", &canonical)?,
            created_at: row.try_get("created_at")?,
        }))
    }

    /// The projects whose runs use the configuration `fingerprint`, by slug. A configuration
    /// is visible to whoever may read one of them.
    pub async fn config_projects(&self, fingerprint: &str) -> Result<Vec<Project>, StorageError> {
        let slugs: Vec<String> = db::query_scalar(
            "SELECT DISTINCT p.slug FROM results res JOIN runs r ON r.id = res.run_id \
             JOIN projects p ON p.id = r.project_id WHERE res.config_fingerprint = $1 ORDER BY p.slug",
        )
        .bind(fingerprint)
        .fetch_all(&self.pool)
        .await?;
        let mut projects = Vec::with_capacity(slugs.len());
        for slug in slugs {
            projects.extend(self.project(&slug).await?);
        }
        Ok(projects)
    }

    /// The newest runs (highest upload sequence first, at most `limit`; below 1 counts as 1)
    /// of the projects `project_ids` with a result measured under configuration
    /// `fingerprint`: the configuration page's list of its runs.
    ///
    /// # Errors
    /// A storage error.
    pub async fn config_runs(
        &self,
        fingerprint: &str,
        project_ids: &[i64],
        limit: i64,
    ) -> Result<Vec<RunSummary>, StorageError> {
        if project_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = SqlBuilder::new(&format!(
            "SELECT {RUN_COLUMNS} FROM runs r JOIN projects p ON p.id = r.project_id \
             WHERE r.id IN (SELECT res.run_id FROM results res WHERE res.config_fingerprint = "
        ));
        q.bind(Param::text(fingerprint.to_string()));
        q.push(") AND r.project_id IN (");
        q.bind_list(project_ids.iter().map(|id| Param::int(*id)));
        q.push(") ORDER BY r.seq DESC LIMIT ")
            .bind(Param::int(limit.max(1)));
        q.query(self.backend())
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| run_summary(row).map(|(_, run)| run))
            .collect()
    }

    /// Series of a project matching `filter` that hold at least one value, ordered by series
    /// key, cell key, metric, stat (bytewise text order on both databases; series id breaks
    /// ties). The cursor is the series id of the previous page's last item. `limit` below 1
    /// counts as 1.
    ///
    /// A series without values is not listed: the goodput and attainment series of an SLO
    /// profile that was removed from the settings lose their values then ([`Self::put_settings`]),
    /// but their rows stay (alerts and pins may name them, and re-adding the profile fills them
    /// again); [`Self::series`] still finds them by id.
    pub async fn list_series(
        &self,
        project_id: i64,
        filter: &SeriesFilter,
        cursor: Option<&str>,
        limit: i64,
    ) -> Result<Page<SeriesInfo>, StorageError> {
        let page = self
            .list_series_shared(project_id, filter, cursor, limit)
            .await?;
        Ok(Page {
            items: page.items.iter().map(|s| SeriesInfo::clone(s)).collect(),
            next_cursor: page.next_cursor,
        })
    }

    /// [`Store::list_series`] as the rows kept decoded in memory, shared rather than copied:
    /// for a caller that only reads them (the dashboard reads every series of a project, and
    /// copying each one's key and cell objects was a tenth of its CPU, BENCHMARKS.md
    /// "Session 44").
    ///
    /// # Errors
    /// As [`Store::list_series`].
    pub async fn list_series_shared(
        &self,
        project_id: i64,
        filter: &SeriesFilter,
        cursor: Option<&str>,
        limit: i64,
    ) -> Result<Page<Arc<SeriesInfo>>, StorageError> {
        let limit = limit.max(1);
        // Which series, in which order, from the database; their rows' contents from the
        // series kept decoded ([`Self::series_by_seqs`]).
        let mut q = SqlBuilder::new("SELECT s.seq FROM series s WHERE s.project_id = ");
        q.bind(Param::int(project_id));
        q.push(" AND ").push(SERIES_HAS_VALUES);
        push_series_filter(&mut q, filter);
        if let Some(cursor) = cursor {
            // Keyset pagination: rows after the cursor's row in the list order. An unknown
            // cursor makes the subquery NULL, so the page is empty.
            q.push(
                " AND (s.series_key_json, s.cell_key, s.metric, s.stat, s.series_id) > \
                 (SELECT c.series_key_json, c.cell_key, c.metric, c.stat, c.series_id FROM series c WHERE c.series_id = ",
            )
            .bind(Param::text(cursor.to_string()))
            .push(")");
        }
        q.push(" ORDER BY s.series_key_json, s.cell_key, s.metric, s.stat, s.series_id LIMIT ")
            .bind(Param::int(limit.saturating_add(1)));
        let seqs = q
            .query(self.backend())
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| Ok(row.try_get("seq")?))
            .collect::<Result<Vec<i64>, StorageError>>()?;
        let series = self.series_by_seqs(&seqs).await?;
        Ok(page(series, limit, |s| s.series_id.clone(), |s| s))
    }

    /// The series rows `seqs`, in their order: those kept decoded
    /// ([`super::series_rows::SeriesCache`]) from memory, the others read in one query per
    /// 500 and kept.
    ///
    /// # Errors
    /// A storage error, or [`StorageError::Corrupt`] for a seq with no row.
    async fn series_by_seqs(&self, seqs: &[i64]) -> Result<Vec<Arc<SeriesInfo>>, StorageError> {
        let mut found = self.series_rows.get_many(seqs);
        let missing = not_held(seqs, &found);
        let mut read: HashMap<i64, Arc<SeriesInfo>> = HashMap::with_capacity(missing.len());
        for chunk in missing.chunks(500) {
            let mut q = SqlBuilder::new(&format!(
                "SELECT s.seq, {SERIES_COLUMNS} FROM series s JOIN projects p ON p.id = s.project_id \
                 WHERE s.seq IN ("
            ));
            q.bind_list(chunk.iter().map(|seq| Param::int(*seq)));
            q.push(")");
            let mut decode = SeriesRows::default();
            for row in q.query(self.backend()).fetch_all(&self.pool).await? {
                let seq: i64 = row.try_get("seq")?;
                let info = Arc::new(decode.info(&row)?);
                self.series_rows.insert(seq, Arc::clone(&info));
                read.insert(seq, info);
            }
        }
        seqs.iter()
            .zip(found.iter_mut())
            .map(|(seq, kept)| {
                kept.take()
                    .or_else(|| read.get(seq).cloned())
                    .ok_or_else(|| StorageError::Corrupt(format!("series seq {seq}: no row")))
            })
            .collect()
    }

    /// The series of `series_ids` that exist, by id: one query per 500 ids (a page naming
    /// hundreds of series reads them at once instead of one query each).
    pub async fn series_by_ids(
        &self,
        series_ids: &[&str],
    ) -> Result<HashMap<String, SeriesInfo>, StorageError> {
        let mut out = HashMap::with_capacity(series_ids.len());
        for chunk in series_ids.chunks(500) {
            let mut q = SqlBuilder::new(&format!(
                "SELECT {SERIES_COLUMNS} FROM series s JOIN projects p ON p.id = s.project_id \
                 WHERE s.series_id IN ("
            ));
            q.bind_list(chunk.iter().map(|id| Param::text(id.to_string())));
            q.push(")");
            let mut decode = SeriesRows::default();
            for row in q.query(self.backend()).fetch_all(&self.pool).await? {
                let info = decode.info(&row)?;
                out.insert(info.series_id.clone(), info);
            }
        }
        Ok(out)
    }

    /// One series.
    pub async fn series(&self, series_id: &str) -> Result<Option<SeriesInfo>, StorageError> {
        let sql =
            format!("SELECT {SERIES_COLUMNS} FROM series s JOIN projects p ON p.id = s.project_id WHERE s.series_id = $1");
        let row = db::query(&sql)
            .bind(series_id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(series_info).transpose()
    }

    /// Metadata of a run's files, in upload order.
    async fn run_files(&self, run_id: &str) -> Result<Vec<StoredFileInfo>, StorageError> {
        let rows = db::query(
            "SELECT idx, name, format, size, sha256 FROM run_files WHERE run_id = $1 ORDER BY idx",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(file_info).collect()
    }

    /// A run's quality results in upload order.
    async fn run_quality(&self, run_id: &str) -> Result<Vec<QualityResult>, StorageError> {
        let rows = db::query(
            "SELECT task, metric, value, stderr, samples FROM quality_results \
             WHERE run_id = $1 ORDER BY idx",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let samples: Option<i64> = row.try_get("samples")?;
                Ok(QualityResult {
                    task: row.try_get("task")?,
                    metric: row.try_get("metric")?,
                    value: row.try_get("value")?,
                    stderr: row.try_get("stderr")?,
                    samples: samples
                        .map(|n| {
                            u64::try_from(n).map_err(|_| {
                                StorageError::Corrupt(format!("quality_results.samples: {n}"))
                            })
                        })
                        .transpose()?,
                })
            })
            .collect()
    }

    /// A run's results in upload order, each with its metrics.
    async fn run_results(&self, run_id: &str) -> Result<Vec<StoredResult>, StorageError> {
        let mut metrics = self.run_metrics(run_id).await?;
        let rows = db::query(
            "SELECT id, idx, config_fingerprint, cell_key, cell_json, facts_json, warnings_json, source_json \
             FROM results WHERE run_id = $1 ORDER BY idx",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let id: i64 = row.try_get("id")?;
                stored_result(row, metrics.remove(&id).unwrap_or_default())
            })
            .collect()
    }

    /// All metric values of a run by result id, each list in [`metric_order`].
    async fn run_metrics(
        &self,
        run_id: &str,
    ) -> Result<HashMap<i64, Vec<StoredMetric>>, StorageError> {
        let rows = db::query(
            "SELECT mv.result_id, s.metric, s.stat, s.slo_profile, s.unit, mv.value, mv.n, \
             mv.ci_low, mv.ci_high, mv.ci_level, mv.ci_method, s.series_id \
             FROM results res JOIN metric_values mv ON mv.result_id = res.id \
             JOIN series s ON s.seq = mv.series_seq WHERE res.run_id = $1",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        let mut by_result: HashMap<i64, Vec<StoredMetric>> = HashMap::new();
        for row in &rows {
            by_result
                .entry(row.try_get("result_id")?)
                .or_default()
                .push(stored_metric(row)?);
        }
        for metrics in by_result.values_mut() {
            metrics.sort_by(metric_order);
        }
        Ok(by_result)
    }
}

// ---- connecting ----------------------------------------------------------------------------

/// The backend a URL names, by scheme.
fn backend_of(url: &str) -> Result<Backend, StorageError> {
    if url.starts_with("sqlite:") {
        Ok(Backend::Sqlite)
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Backend::Postgres)
    } else {
        let scheme = url.split(':').next().unwrap_or_default();
        Err(StorageError::Database(sqlx::Error::Configuration(
            format!("unsupported database URL scheme `{scheme}`: expected sqlite: or postgres://")
                .into(),
        )))
    }
}

/// The schema of a backend, embedded at compile time.
fn migrations(backend: Backend) -> &'static Migrator {
    match backend {
        Backend::Sqlite => &SQLITE_MIGRATIONS,
        Backend::Postgres => &POSTGRES_MIGRATIONS,
    }
}

// ---- writing a run ---------------------------------------------------------------------------

/// Everything [`Store::insert_run`] writes, inside its transaction. Returns `AlreadyStored`
/// (or a `Conflict`) without writing when the run id is taken; the caller rolls back.
/// Writes `run` (see [`Store::insert_run`]) and adds to `without_samples` the ids of its results
/// that have no per-request samples. Its series whose seq `known` holds are neither stored
/// again nor read; the seqs of the others, stored or read here, are added to `series_read`
/// (for `known` once the transaction commits).
async fn write_run(
    conn: &mut Conn,
    run: &NewRun,
    known: &SeriesSeqCache,
    without_samples: &mut Vec<i64>,
    series_read: &mut SeriesSeqs,
) -> Result<Inserted, StorageError> {
    let run_id = run.id.to_string();
    let Some(run_seq) = insert_run_row(conn, run, &run_id).await? else {
        return existing_run_outcome(conn, run, &run_id).await;
    };
    for (idx, file) in run.files.iter().enumerate() {
        insert_file(conn, &run_id, idx as i64, file).await?;
    }
    // A series is shared by many results of a run (and a configuration by its cells): insert
    // each definition once per run, all series in one batch and all values in another once
    // every result row has its id (statements, not rows, are what an insert pays for).
    let mut series_written = HashSet::new();
    let mut configs_written = HashSet::new();
    let mut new_series: Vec<&NewSeries> = Vec::new();
    let mut values: Vec<(i64, i64, &[NewMetric])> = Vec::with_capacity(run.results.len());
    for result in &run.results {
        if configs_written.insert(result.config_fingerprint.as_str()) {
            insert_config(conn, &result.config_fingerprint, &result.config_json).await?;
        }
    }
    let result_ids = batch_insert::insert_results(conn, &run_id, &run.results).await?;
    for ((idx, result), result_id) in run.results.iter().enumerate().zip(result_ids) {
        let idx = idx as i64;
        insert_samples(conn, result_id, result).await?;
        if result.samples.is_none() {
            without_samples.push(result_id);
        }
        new_series.extend(
            result
                .metrics
                .iter()
                .filter(|m| series_written.insert(m.series.series_id.as_str()))
                .map(|m| &m.series),
        );
        values.push((result_id, idx, result.metrics.as_slice()));
    }
    let (mut seqs, unknown) = known.split(&new_series);
    if !unknown.is_empty() {
        let stored = batch_insert::insert_series(conn, run.project_id, &unknown).await?;
        series_read.extend(stored.iter().map(|(id, seq)| (id.clone(), *seq)));
        seqs.extend(stored);
    }
    batch_insert::insert_values(conn, run_seq, &seqs, &values).await?;
    for (idx, q) in run.quality.iter().enumerate() {
        db::query(
            "INSERT INTO quality_results (run_id, idx, task, metric, value, stderr, samples) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&run_id)
        .bind(idx as i64)
        .bind(&q.task)
        .bind(&q.metric)
        .bind(q.value)
        .bind(q.stderr)
        .bind(q.samples.map(|n| i64::try_from(n).unwrap_or(i64::MAX)))
        .execute(&mut *conn)
        .await
        .map_err(|e| {
            unique_as_conflict(e, || {
                format!("quality result {idx} of run {run_id} repeats a task and metric")
            })
        })?;
    }
    Ok(Inserted::Created)
}

/// Inserts the run row and its commit (see [`upsert_commit`]) and returns the run's `seq`;
/// `None`, writing nothing, if a run with this id already exists.
async fn insert_run_row(
    conn: &mut Conn,
    run: &NewRun,
    run_id: &str,
) -> Result<Option<i64>, StorageError> {
    let commit_time = run.commit_time.as_ref().map(offset_time_parts);
    let seq: Option<i64> = db::query_scalar(
        "INSERT INTO runs (id, project_id, commit_sha, parent_shas, commit_time, commit_time_offset, commit_subject, \
         branch, pr_number, merge_base_sha, run_at, uploaded_at, ci_job_url, repeat_index, tags, repeats_expected) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) \
         ON CONFLICT (id) DO NOTHING RETURNING seq",
    )
    .bind(run_id)
    .bind(run.project_id)
    .bind(&run.commit_sha)
    .bind(json_text(&run.parent_shas))
    .bind(commit_time.map(|(t, _)| t))
    .bind(commit_time.as_ref().map(|(_, o)| *o))
    .bind(&run.commit_subject)
    .bind(&run.branch)
    .bind(run.pr_number)
    .bind(&run.merge_base_sha)
    .bind(run.run_at)
    .bind(now())
    .bind(&run.ci_job_url)
    .bind(run.repeat_index)
    .bind(&run.tags_json)
    .bind(run.repeats_expected)
    .fetch_optional(&mut *conn)
    .await
    .map_err(|e| unique_as_conflict(e, || format!("run {} could not be stored: unique constraint", run.id)))?;
    let Some(seq) = seq else { return Ok(None) };
    upsert_commit(conn, run, seq, commit_time.map(|(t, _)| t)).await?;
    Ok(Some(seq))
}

/// Adds the run's commit to the project's commit graph. A commit uploaded again keeps what it
/// has and gains what it lacked: its parents when it had none (an earlier upload from a
/// shallow clone), its commit time when it had none.
async fn upsert_commit(
    conn: &mut Conn,
    run: &NewRun,
    seq: i64,
    commit_time: Option<chrono::DateTime<chrono::Utc>>,
) -> Result<(), StorageError> {
    db::query(
        "INSERT INTO commits (project_id, sha, parent_shas, commit_time, first_run_at, first_seq) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (project_id, sha) DO UPDATE SET \
         parent_shas = CASE WHEN commits.parent_shas = '[]' THEN excluded.parent_shas ELSE commits.parent_shas END, \
         commit_time = COALESCE(commits.commit_time, excluded.commit_time)",
    )
    .bind(run.project_id)
    .bind(&run.commit_sha)
    .bind(json_text(&run.parent_shas))
    .bind(commit_time)
    .bind(run.run_at)
    .bind(seq)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// `AlreadyStored` if the existing run belongs to the same project, else `Conflict`.
async fn existing_run_outcome(
    conn: &mut Conn,
    run: &NewRun,
    run_id: &str,
) -> Result<Inserted, StorageError> {
    let owner: Option<i64> = db::query_scalar("SELECT project_id FROM runs WHERE id = $1")
        .bind(run_id)
        .fetch_optional(&mut *conn)
        .await?;
    match owner {
        Some(project_id) if project_id == run.project_id => {
            count_upload(conn, run_id).await?;
            Ok(Inserted::AlreadyStored)
        }
        _ => Err(StorageError::Conflict(super::run_id_taken(run.id))),
    }
}

/// Adds one to a run's `upload_count`; the new count, `None` when there is no such run.
async fn count_upload(conn: &mut Conn, run_id: &str) -> Result<Option<i64>, StorageError> {
    let count = db::query_scalar(
        "UPDATE runs SET upload_count = upload_count + 1 WHERE id = $1 RETURNING upload_count",
    )
    .bind(run_id)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(count)
}

async fn insert_file(
    conn: &mut Conn,
    run_id: &str,
    idx: i64,
    file: &NewFile,
) -> Result<(), StorageError> {
    db::query(
        "INSERT INTO run_files (run_id, idx, name, format, content_gz, size, sha256) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(run_id)
    .bind(idx)
    .bind(&file.name)
    .bind(&file.format)
    .bind(file.content_gz.as_slice())
    .bind(file.size)
    .bind(&file.sha256)
    .execute(&mut *conn)
    .await
    .map_err(|e| unique_as_conflict(e, || format!("file {idx} of run {run_id} is stored twice")))?;
    Ok(())
}

/// Stores the per-request samples of `result` (stored as `result_id`), if it has any.
async fn insert_samples(
    conn: &mut Conn,
    result_id: i64,
    result: &NewResult,
) -> Result<(), StorageError> {
    if let Some((encoded, requests)) = &result.samples {
        db::query(
            "INSERT INTO result_samples (result_id, encoding, requests, data, itl_data) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(result_id)
        .bind(super::samples_codec::ENCODING)
        .bind(*requests)
        .bind(encoded.data.as_slice())
        .bind(encoded.itl.as_deref())
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Stores a configuration unless one with this fingerprint is already stored (equal
/// configurations have equal fingerprints, so the first copy is kept).
async fn insert_config(conn: &mut Conn, fingerprint: &str, json: &str) -> Result<(), StorageError> {
    db::query(
        "INSERT INTO configurations (fingerprint, canonical_json, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (fingerprint) DO NOTHING",
    )
    .bind(fingerprint)
    .bind(json)
    .bind(now())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Maps a unique violation to `Conflict` with a caller-facing message; other errors stay
/// database errors.
pub(super) fn unique_as_conflict(e: sqlx::Error, message: impl FnOnce() -> String) -> StorageError {
    match &e {
        sqlx::Error::Database(db) if db.is_unique_violation() => StorageError::Conflict(message()),
        _ => StorageError::Database(e),
    }
}

// ---- settings ---------------------------------------------------------------------------------

async fn current_settings(
    conn: &mut Conn,
    project: &Project,
) -> Result<StoredSettings, StorageError> {
    let row = db::query(
        "SELECT version, settings_json, created_at FROM project_settings \
         WHERE project_id = $1 ORDER BY version DESC LIMIT 1",
    )
    .bind(project.id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = row else {
        return Ok(StoredSettings {
            version: 1,
            updated_at: project.created_at,
            settings: ProjectSettings::default(),
        });
    };
    let json: String = row.try_get("settings_json")?;
    Ok(StoredSettings {
        version: row.try_get("version")?,
        updated_at: row.try_get("created_at")?,
        settings: parse_json("settings_json", &json)?,
    })
}

async fn write_settings(
    conn: &mut Conn,
    project: &Project,
    settings: &ProjectSettings,
    expected_version: Option<i64>,
    rows: impl Fn(&ResultSamples) -> Result<Vec<NewMetric>, String>,
) -> Result<StoredSettings, StorageError> {
    let current = current_settings(conn, project).await?;
    if let Some(expected) = expected_version.filter(|v| *v != current.version) {
        return Err(StorageError::Conflict(format!(
            "the settings are at version {}, not {expected}",
            current.version
        )));
    }
    let stored = StoredSettings {
        version: current.version + 1,
        updated_at: now(),
        settings: settings.clone(),
    };
    // The primary key (project_id, version) makes one of two concurrent changes fail.
    db::query(
        "INSERT INTO project_settings (project_id, version, settings_json, created_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(project.id)
    .bind(stored.version)
    .bind(json_text(settings))
    .bind(stored.updated_at)
    .execute(&mut *conn)
    .await
    .map_err(|e| unique_as_conflict(e, || "the settings were changed concurrently; retry".to_string()))?;

    // The SLO values need TTFT, TPOT and E2E latency: the chunk gaps, nearly all of a
    // project's samples, are not read.
    let columns = SampleColumns::WithoutItl;
    let found = db::query(&format!(
        "SELECT rs.result_id, res.run_id, r.seq, c.canonical_json, res.cell_json, res.cell_key, {} \
         FROM result_samples rs JOIN results res ON res.id = rs.result_id \
         JOIN runs r ON r.id = res.run_id JOIN configurations c ON c.fingerprint = res.config_fingerprint \
         WHERE r.project_id = $1 ORDER BY rs.result_id",
        samples_sql(columns)
    ))
    .bind(project.id)
    .fetch_all(&mut *conn)
    .await?;
    let mut series_written = HashSet::new();
    // The seq of every series written so far (a later result's values name them too).
    let mut seqs = batch_insert::SeriesSeqs::new();
    for row in &found {
        let samples = ResultSamples {
            result_id: row.try_get("result_id")?,
            run_id: row.try_get("run_id")?,
            config_json: row.try_get("canonical_json")?,
            cell_json: row.try_get("cell_json")?,
            cell_key: row.try_get("cell_key")?,
            samples: samples_of_row(row, columns)?,
        };
        let run_seq: i64 = row.try_get("seq")?;
        let new_rows = rows(&samples).map_err(StorageError::Corrupt)?;
        db::query(&format!(
            "DELETE FROM metric_values WHERE result_id = $1 AND series_seq IN \
             (SELECT s.seq FROM series s WHERE NOT {SERIES_VALUES_KEPT})"
        ))
        .bind(samples.result_id)
        .execute(&mut *conn)
        .await?;
        let new_series: Vec<&NewSeries> = new_rows
            .iter()
            .filter(|m| series_written.insert(m.series.series_id.clone()))
            .map(|m| &m.series)
            .collect();
        seqs.extend(batch_insert::insert_series(conn, project.id, &new_series).await?);
        batch_insert::insert_values(
            conn,
            run_seq,
            &seqs,
            &[(samples.result_id, 0, new_rows.as_slice())],
        )
        .await?;
    }
    Ok(stored)
}

// ---- reading rows ---------------------------------------------------------------------------

pub(super) fn project_row(row: &DbRow) -> Result<Project, StorageError> {
    let key_fields: String = row.try_get("key_fields")?;
    Ok(Project {
        id: row.try_get("id")?,
        slug: row.try_get("slug")?,
        name: row.try_get("name")?,
        repository_url: row.try_get("repository_url")?,
        default_branch: row.try_get("default_branch")?,
        public: row.try_get::<i64, _>("is_public")? != 0,
        key_fields: parse_json("key_fields", &key_fields)?,
        created_at: row.try_get("created_at")?,
    })
}

/// A run summary with its upload sequence number (the list cursor).
pub(super) fn run_summary(row: &DbRow) -> Result<(i64, RunSummary), StorageError> {
    let id: String = row.try_get("id")?;
    let parent_shas: String = row.try_get("parent_shas")?;
    let tags: String = row.try_get("tags")?;
    let summary = RunSummary {
        id: parse_uuid("id", &id)?,
        project: row.try_get("slug")?,
        commit_sha: row.try_get("commit_sha")?,
        parent_shas: parse_json("parent_shas", &parent_shas)?,
        commit_time: parse_offset_time(
            "commit_time",
            row.try_get("commit_time")?,
            row.try_get("commit_time_offset")?,
        )?,
        commit_subject: row.try_get("commit_subject")?,
        branch: row.try_get("branch")?,
        pr_number: row.try_get("pr_number")?,
        merge_base_sha: row.try_get("merge_base_sha")?,
        run_at: row.try_get("run_at")?,
        uploaded_at: row.try_get("uploaded_at")?,
        ci_job_url: row.try_get("ci_job_url")?,
        repeat_index: row.try_get("repeat_index")?,
        repeats_expected: row.try_get("repeats_expected")?,
        tags: parse_json("tags", &tags)?,
        result_count: row.try_get("result_count")?,
        upload_count: row.try_get("upload_count")?,
    };
    Ok((row.try_get("seq")?, summary))
}

fn file_info(row: &DbRow) -> Result<StoredFileInfo, StorageError> {
    Ok(StoredFileInfo {
        index: row.try_get("idx")?,
        name: row.try_get("name")?,
        format: row.try_get("format")?,
        size: row.try_get("size")?,
        sha256: row.try_get("sha256")?,
    })
}

fn stored_result(row: &DbRow, metrics: Vec<StoredMetric>) -> Result<StoredResult, StorageError> {
    let json = |column: &str| -> Result<serde_json::Value, StorageError> {
        let text: String = row.try_get(column)?;
        parse_json(column, &text)
    };
    Ok(StoredResult {
        index: row.try_get("idx")?,
        config_fingerprint: row.try_get("config_fingerprint")?,
        cell_key: row.try_get("cell_key")?,
        cell: json("cell_json")?,
        facts: json("facts_json")?,
        warnings: json("warnings_json")?,
        source: json("source_json")?,
        metrics,
    })
}

fn stored_metric(row: &DbRow) -> Result<StoredMetric, StorageError> {
    let stat: String = row.try_get("stat")?;
    let unit: String = row.try_get("unit")?;
    Ok(StoredMetric {
        name: row.try_get("metric")?,
        stat: parse_stat(&stat)?,
        unit: parse_unit(&unit)?,
        value: row.try_get("value")?,
        n: count_from_db(row.try_get("n")?)?,
        slo_profile: row.try_get("slo_profile")?,
        ci: stored_interval(row)?,
        series_id: row.try_get("series_id")?,
    })
}

/// The confidence interval of a metric value row (`ci_low`, `ci_high`, `ci_level`,
/// `ci_method`): `None` unless all four are stored.
pub(super) fn stored_interval(row: &DbRow) -> Result<Option<Interval>, StorageError> {
    Ok(
        match (
            row.try_get::<Option<f64>, _>("ci_low")?,
            row.try_get::<Option<f64>, _>("ci_high")?,
            row.try_get::<Option<f64>, _>("ci_level")?,
            row.try_get::<Option<String>, _>("ci_method")?,
        ) {
            (Some(low), Some(high), Some(level), Some(method)) => Some(Interval {
                low,
                high,
                level,
                method,
            }),
            _ => None,
        },
    )
}

pub(super) fn series_info(row: &DbRow) -> Result<SeriesInfo, StorageError> {
    let key: String = row.try_get("series_key_json")?;
    let cell: String = row.try_get("cell_json")?;
    series_info_with(
        row,
        parse_json("series_key_json", &key)?,
        parse_json("cell_json", &cell)?,
    )
}

/// Decodes rows of [`SERIES_COLUMNS`] parsing each distinct configuration and cell once: a
/// project's series repeat a few of each (1,296 series of 2 configurations × 36 cells on
/// issue 12's data set), and parsing their JSON on every row was a tenth of the dashboard.
#[derive(Default)]
pub(super) struct SeriesRows {
    keys: HashMap<String, serde_json::Value>,
    cells: HashMap<String, serde_json::Value>,
}

impl SeriesRows {
    /// The series of `row`.
    ///
    /// # Errors
    /// [`StorageError::Corrupt`] for a column that does not decode.
    pub(super) fn info(&mut self, row: &DbRow) -> Result<SeriesInfo, StorageError> {
        let series_key = parsed_once(&mut self.keys, "series_key_json", row)?;
        let cell = parsed_once(&mut self.cells, "cell_json", row)?;
        series_info_with(row, series_key, cell)
    }
}

/// The JSON of `row`'s `column`, parsed once per distinct text (`parsed` holds the texts seen).
fn parsed_once(
    parsed: &mut HashMap<String, serde_json::Value>,
    column: &str,
    row: &DbRow,
) -> Result<serde_json::Value, StorageError> {
    let text: String = row.try_get(column)?;
    if let Some(value) = parsed.get(&text) {
        return Ok(value.clone());
    }
    let value: serde_json::Value = parse_json(column, &text)?;
    parsed.insert(text, value.clone());
    Ok(value)
}

/// [`series_info`] with the row's configuration and cell already parsed.
fn series_info_with(
    row: &DbRow,
    series_key: serde_json::Value,
    cell: serde_json::Value,
) -> Result<SeriesInfo, StorageError> {
    let stat: String = row.try_get("stat")?;
    let unit: String = row.try_get("unit")?;
    let direction: String = row.try_get("direction")?;
    Ok(SeriesInfo {
        series_id: row.try_get("series_id")?,
        project: row.try_get("slug")?,
        series_key,
        cell_key: row.try_get("cell_key")?,
        cell,
        metric: row.try_get("metric")?,
        stat: parse_stat(&stat)?,
        slo_profile: row.try_get("slo_profile")?,
        unit: parse_unit(&unit)?,
        direction: parse_direction(&direction)?,
    })
}

// ---- queries with optional parts -------------------------------------------------------------

/// Appends the `list_series` filters that are set.
fn push_series_filter(q: &mut SqlBuilder, filter: &SeriesFilter) {
    if let Some(accelerator) = &filter.accelerator {
        q.push(" AND s.accelerator = ")
            .bind(Param::text(accelerator.clone()));
    }
    if let Some(model) = &filter.model {
        q.push(" AND s.model = ").bind(Param::text(model.clone()));
    }
    if let Some(quantization) = &filter.quantization {
        q.push(" AND (s.weights_quantization = ")
            .bind(Param::text(quantization.clone()));
        q.push(" OR s.kv_cache_dtype = ")
            .bind(Param::text(quantization.clone()))
            .push(")");
    }
    if let Some(cell) = filter.cell.as_deref().filter(|c| !c.is_empty()) {
        // Substring test that behaves the same on both databases: LIKE is case-insensitive
        // on SQLite but not on Postgres, and would need `%`/`_` escaping.
        q.push(" AND replace(s.cell_key, ")
            .bind(Param::text(cell.to_string()))
            .push(", '') <> s.cell_key");
    }
    if let Some(metric) = &filter.metric {
        q.push(" AND s.metric = ").bind(Param::text(metric.clone()));
    }
    if let Some(stat) = &filter.stat {
        // Compare canonical labels, so `median` finds `p50`; an unknown label finds nothing.
        let label = stat
            .parse::<benchtrail_core::Stat>()
            .map(|s| s.to_string())
            .unwrap_or_else(|_| stat.clone());
        q.push(" AND s.stat = ").bind(Param::text(label));
    }
}

/// SQL text assembled from optional parts, with one placeholder per bound value in the order
/// they are appended: `$N` for Postgres, plain `?` for SQLite. SQLite could read `$N` too, but
/// sqlx looks up the name of every `$N` parameter it binds, a walk of SQLite's list of named
/// parameters, so binding n of them costs n²: a 200-row insert of 1,000 values spent more time
/// there than in SQLite itself (BENCHMARKS.md, session 25). A plain `?` has no name and is bound
/// by position.
pub(super) struct SqlBuilder {
    /// With `$N` placeholders.
    sql: String,
    /// The same with `?` placeholders.
    sqlite_sql: String,
    args: Vec<Param<'static>>,
}

/// The keys of `keys` whose entry in `held` (a cache's answer for them, in their order) is
/// `None`: what a read-through of a cache has to read from the database.
pub(super) fn not_held<K: Copy, V>(keys: &[K], held: &[Option<V>]) -> Vec<K> {
    keys.iter()
        .zip(held)
        .filter(|(_, v)| v.is_none())
        .map(|(k, _)| *k)
        .collect()
}

impl SqlBuilder {
    pub(super) fn new(sql: &str) -> SqlBuilder {
        SqlBuilder {
            sql: sql.to_string(),
            sqlite_sql: sql.to_string(),
            args: Vec::new(),
        }
    }

    pub(super) fn push(&mut self, sql: &str) -> &mut SqlBuilder {
        self.sql.push_str(sql);
        self.sqlite_sql.push_str(sql);
        self
    }

    /// Appends the next placeholder and remembers its value.
    pub(super) fn bind(&mut self, arg: Param<'static>) -> &mut SqlBuilder {
        self.args.push(arg);
        self.sql.push_str(&format!("${}", self.args.len()));
        self.sqlite_sql.push('?');
        self
    }

    /// Appends `$i, $j, ...`, one placeholder per value: the inside of an `IN (...)` list.
    pub(super) fn bind_list(
        &mut self,
        args: impl IntoIterator<Item = Param<'static>>,
    ) -> &mut SqlBuilder {
        for (i, arg) in args.into_iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.bind(arg);
        }
        self
    }

    /// The query for `backend`, its values bound.
    pub(super) fn query(&self, backend: Backend) -> db::Query<'_> {
        let sql = match backend {
            Backend::Postgres => &self.sql,
            Backend::Sqlite => &self.sqlite_sql,
        };
        let params = self.args.iter().map(Param::borrowed).collect();
        db::Query::with_params(sql, params)
    }
}

/// Cuts rows fetched with `limit + 1` into a page: the extra row only says a next page exists.
pub(super) fn page<R, T>(
    mut rows: Vec<R>,
    limit: i64,
    cursor_of: impl Fn(&R) -> String,
    item: impl Fn(R) -> T,
) -> Page<T> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let next_cursor = if rows.len() > limit {
        rows.truncate(limit);
        rows.last().map(cursor_of)
    } else {
        None
    };
    Page {
        items: rows.into_iter().map(item).collect(),
        next_cursor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_values_conditions_name_the_tools_own_profile() {
        let tool = format!("s.slo_profile = '{}'", benchtrail_core::slo::TOOL_PROFILE);
        assert!(SERIES_VALUES_KEPT.contains(&tool), "{SERIES_VALUES_KEPT}");
        assert!(
            SERIES_HAS_VALUES.starts_with(&format!("({SERIES_VALUES_KEPT} OR EXISTS")),
            "{SERIES_HAS_VALUES}"
        );
    }

    #[test]
    fn sqlite_urls_split_into_path_and_params() {
        assert_eq!(
            db::split_sqlite_url("sqlite://data/bt.db?mode=rwc"),
            ("data/bt.db", "mode=rwc")
        );
        assert_eq!(db::split_sqlite_url("sqlite:bt.db"), ("bt.db", ""));
        assert_eq!(db::split_sqlite_url("sqlite::memory:"), (":memory:", ""));
    }

    #[test]
    fn builder_numbers_placeholders_in_order() {
        let mut q = SqlBuilder::new("SELECT 1 WHERE a = ");
        q.bind(Param::int(1))
            .push(" AND b = ")
            .bind(Param::text("x".into()));
        assert_eq!(q.sql, "SELECT 1 WHERE a = $1 AND b = $2");
        assert_eq!(q.sqlite_sql, "SELECT 1 WHERE a = ? AND b = ?");
    }

    #[test]
    fn unknown_schemes_are_rejected() {
        assert!(backend_of("mysql://localhost/db").is_err());
        assert_eq!(backend_of("postgresql://h/db").unwrap(), Backend::Postgres);
    }
}
