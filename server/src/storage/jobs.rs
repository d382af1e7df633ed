//! Durable analysis jobs (`analysis_jobs`, migration 0008): what is stored but not analyzed yet.
//!
//! A run's upload enqueues its commit's job in the same transaction as the run
//! ([`Store::insert_run`]), so an acknowledged upload always has either its analysis stored or
//! a job here. Workers (`crate::analysis::jobs`) claim due jobs through the database with a
//! lease, so several servers on one database never analyze one job at once and a crashed
//! worker's job is taken up again when its lease runs out. Asking again for a job that exists
//! (another repeat of the commit) bumps its `generation`: a worker that analyzed an older
//! generation leaves the job queued, because its analysis did not see the newest data.
//!
//! Kinds (`analysis_jobs.kind`, plain text without a constraint, so a kind is added here
//! without a migration): `commit`, `project`, `comments`, `refresh` (see [`JobTarget`]) and
//! `scan` (the change-point scan of a branch, with `commit_sha` empty: one row per project and
//! branch).

use super::codec::now;
use super::db::{self, Conn, DbRow, Param};
use super::store::{project_row, SqlBuilder, PROJECT_COLUMNS};
use super::{Project, StorageError, Store};
use chrono::{DateTime, Duration, SubsecRound, Utc};

/// What a job analyzes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum JobTarget {
    /// Every run of one commit on one branch (`crate::analysis::analyze_upload`).
    Commit {
        /// The branch.
        branch: String,
        /// The full, lowercase commit SHA.
        commit_sha: String,
    },
    /// One commit on one branch analyzed again because an upload out of order changed its
    /// history (`crate::analysis::analyze_upload` asks for it, with the end of the upload's
    /// own analysis): [`crate::analysis::analyze_commit`] alone, which asks for no further
    /// re-analysis (the commit's own runs did not change). Its own row beside the commit's
    /// `commit` job, so requests from many uploads coalesce into one analysis.
    Reanalysis {
        /// The branch.
        branch: String,
        /// The full, lowercase commit SHA.
        commit_sha: String,
    },
    /// Every commit of the project again, in order (`crate::analysis::recompute_project`):
    /// after an exclusion, a pin, a change of settings, or an analysis schema upgrade.
    Project,
    /// The PR/MR comments of the runs of one analyzed commit (`crate::bot`): enqueued with the
    /// end of the commit's analysis, in one transaction, so a server that dies before posting
    /// leaves the job behind.
    Comments {
        /// The branch.
        branch: String,
        /// The full, lowercase commit SHA.
        commit_sha: String,
    },
    /// The PR/MR comments of the newest run of every pull request the project's bot reported
    /// on (`crate::bot::refresh`), each posted only if its report changed: enqueued with the
    /// end of a recomputation of the project (or with a triage), so a verdict that changes
    /// without an upload reaches the PR. One job per project (branch and commit empty).
    Refresh,
    /// The change-point scan of one branch's history (`crate::analysis::scan`): one job per
    /// project and branch, asked for again by every analysis of a commit of the default
    /// branch (a scan running meanwhile leaves the job queued, so the next scan sees the
    /// newest runs; any number of requests meanwhile make one more scan).
    Scan {
        /// The branch (the project's default branch).
        branch: String,
    },
}

impl JobTarget {
    /// The kind as stored: `commit`, `reanalysis`, `project`, `comments`, `refresh` or `scan`.
    pub fn kind(&self) -> &'static str {
        self.columns().0
    }

    /// Whether the job posts to the forge (`comments`, `refresh`): such jobs of one project
    /// are claimed one at a time ([`Store::claim_due_job`]).
    pub fn posts(&self) -> bool {
        matches!(self, JobTarget::Comments { .. } | JobTarget::Refresh)
    }

    /// `(kind, branch, commit_sha)` as stored.
    fn columns(&self) -> (&'static str, &str, &str) {
        match self {
            JobTarget::Commit { branch, commit_sha } => ("commit", branch, commit_sha),
            JobTarget::Reanalysis { branch, commit_sha } => ("reanalysis", branch, commit_sha),
            JobTarget::Project => ("project", "", ""),
            JobTarget::Comments { branch, commit_sha } => ("comments", branch, commit_sha),
            JobTarget::Refresh => ("refresh", "", ""),
            JobTarget::Scan { branch } => ("scan", branch, ""),
        }
    }

    fn from_columns(kind: &str, branch: String, commit_sha: String) -> Result<Self, StorageError> {
        match kind {
            "commit" => Ok(JobTarget::Commit { branch, commit_sha }),
            "reanalysis" => Ok(JobTarget::Reanalysis { branch, commit_sha }),
            "project" => Ok(JobTarget::Project),
            "comments" => Ok(JobTarget::Comments { branch, commit_sha }),
            "refresh" => Ok(JobTarget::Refresh),
            "scan" => Ok(JobTarget::Scan { branch }),
            other => Err(StorageError::Corrupt(format!(
                "analysis_jobs.kind `{other}` is not `commit`, `reanalysis`, `project`, \
                 `comments`, `refresh` or `scan`"
            ))),
        }
    }
}

/// A job as enqueued: its row and the generation this request made current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobTicket {
    /// The job's row id.
    pub id: i64,
    /// The generation to finish ([`Store::finish_job`]) once analyzed.
    pub generation: i64,
    /// Whether the lease asked for was granted: the caller may analyze it now. `false` when
    /// another worker holds the job (it will see the bumped generation and analyze again).
    pub leased: bool,
}

/// A job a worker claimed ([`Store::claim_due_job`]).
#[derive(Debug, Clone)]
pub struct ClaimedJob {
    /// The job's row id.
    pub id: i64,
    /// The project's internal id.
    pub project_id: i64,
    /// What to analyze.
    pub target: JobTarget,
    /// The generation claimed.
    pub generation: i64,
    /// Attempts including this one.
    pub attempts: i64,
}

/// What the verdict of a run not analyzed yet tells about its job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobState {
    /// When the analysis was first asked for.
    pub queued_at: DateTime<Utc>,
    /// Attempts started so far (0: none yet).
    pub attempts: i64,
    /// The earliest next attempt (after a failure: the back-off).
    pub not_before: DateTime<Utc>,
    /// A worker is at it now.
    pub running: bool,
}

/// The queue as an upload reads it before storing its run ([`Store::queue_counts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueCounts {
    /// Jobs queued or running, of every kind ([`Store::queued_jobs`]).
    pub jobs: i64,
    /// Of them, uploads' commit analyses queued or running (`commit` jobs): an upload that
    /// finds some leaves its own analysis to the workers
    /// ([`crate::analysis::jobs::Analyzer::after_upload`]).
    pub commit_jobs: i64,
}

impl Store {
    /// Enqueues `target` of `project_id` (or asks again for the job that exists: its generation
    /// is bumped and it is due at once). With `lease`, the caller also takes the job's lease
    /// for that long if no other worker holds it ([`JobTicket::leased`]).
    ///
    /// # Errors
    /// A storage error.
    pub async fn enqueue_job(
        &self,
        project_id: i64,
        target: &JobTarget,
        lease: Option<Duration>,
    ) -> Result<JobTicket, StorageError> {
        let mut conn = self.pool.acquire().await?;
        enqueue_job(&mut conn, project_id, target, lease).await
    }

    /// Claims the due job queued first (not leased, or its lease ran out; `not_before`
    /// reached) for `lease`, counting an attempt. `None` when nothing is due. Safe with any
    /// number of workers and servers: the claim is one conditional `UPDATE`, so of two
    /// workers racing for a job one gets it and the other gets `None` (and looks again).
    ///
    /// Two orderings on top of queue order:
    /// * Scans ([`JobTarget::Scan`]) come after every other due job: an analysis holds a
    ///   verdict a CI job waits for, and a scan taken later sees more of the history anyway.
    /// * A project's posting jobs (PR comments and their refreshes: [`JobTarget::posts`]) are
    ///   claimed one at a time across all servers: while one is leased, the project's others
    ///   are not due. A sticky comment is found by listing the PR's comments and then created
    ///   or updated, so two posters of one project at once could both find none and both
    ///   create one. The claim is the serialization point ([`claim_comments`]).
    ///
    /// # Errors
    /// A storage error.
    pub async fn claim_due_job(&self, lease: Duration) -> Result<Option<ClaimedJob>, StorageError> {
        let at = now();
        // A plain read first: an idle worker polling must not take SQLite's write lock.
        let due: Option<(i64, String, String, String)> = db::query_as(&format!(
            "SELECT id, kind, branch, commit_sha FROM analysis_jobs WHERE not_before <= $1 \
             AND (lease_until IS NULL OR lease_until < $1) AND {NO_OTHER_POSTER} \
             ORDER BY CASE WHEN kind = 'scan' THEN 1 ELSE 0 END, queued_at, id LIMIT 1"
        ))
        .bind(at)
        .fetch_optional(&self.pool)
        .await?;
        let Some((id, kind, branch, commit_sha)) = due else {
            return Ok(None);
        };
        let until = at + lease;
        let row = if JobTarget::from_columns(&kind, branch, commit_sha)?.posts() {
            claim_comments(self, id, until, at).await?
        } else {
            db::query(&format!("{CLAIM} RETURNING {CLAIMED}"))
                .bind(until)
                .bind(id)
                .bind(at)
                .fetch_optional(&self.pool)
                .await?
        };
        let Some(row) = row else {
            return Ok(None);
        };
        Ok(Some(ClaimedJob {
            id,
            project_id: row.try_get("project_id")?,
            target: JobTarget::from_columns(
                row.try_get::<String, _>("kind")?.as_str(),
                row.try_get("branch")?,
                row.try_get("commit_sha")?,
            )?,
            generation: row.try_get("generation")?,
            attempts: row.try_get("attempts")?,
        }))
    }

    /// Extends the lease of job `id` to `lease` from now (a worker still at it).
    ///
    /// # Errors
    /// A storage error.
    pub async fn renew_job_lease(&self, id: i64, lease: Duration) -> Result<(), StorageError> {
        db::query("UPDATE analysis_jobs SET lease_until = $1 WHERE id = $2")
            .bind(now() + lease)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Marks job `id` done at `generation`: deleted if that generation is still current, else
    /// (asked for again meanwhile) left queued, released and due at once. `true` when deleted.
    ///
    /// # Errors
    /// A storage error.
    pub async fn finish_job(&self, id: i64, generation: i64) -> Result<bool, StorageError> {
        self.finish_job_then(id, generation, None).await
    }

    /// [`Store::finish_job`], enqueueing `then` (project id and targets) in the same
    /// transaction when the job is deleted: the work that must follow it survives a crash.
    ///
    /// # Errors
    /// A storage error (nothing changed).
    pub async fn finish_job_then(
        &self,
        id: i64,
        generation: i64,
        then: Option<(i64, &[JobTarget])>,
    ) -> Result<bool, StorageError> {
        self.finish_job_again_at(id, generation, then, None).await
    }

    /// [`Store::finish_job_then`], where a job asked for again while it ran is due again at
    /// `again_at` (when given) instead of at once: a change-point scan is spaced out so that
    /// back-to-back requests during a burst of uploads do not keep a worker scanning.
    ///
    /// # Errors
    /// A storage error (nothing changed).
    pub async fn finish_job_again_at(
        &self,
        id: i64,
        generation: i64,
        then: Option<(i64, &[JobTarget])>,
        again_at: Option<DateTime<Utc>>,
    ) -> Result<bool, StorageError> {
        let mut tx = self.begin_write().await?;
        let deleted = db::query("DELETE FROM analysis_jobs WHERE id = $1 AND generation = $2")
            .bind(id)
            .bind(generation)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if let (1, Some((project_id, targets))) = (deleted, then) {
            for target in targets {
                enqueue_job(&mut tx, project_id, target, None).await?;
            }
        }
        tx.commit().await?;
        if deleted == 0 {
            let mut q = SqlBuilder::new(
                "UPDATE analysis_jobs SET lease_until = NULL, attempts = 0, last_error = NULL",
            );
            if let Some(at) = again_at {
                q.push(", not_before = ").bind(Param::time(at));
            }
            q.push(" WHERE id = ").bind(Param::int(id));
            q.query(self.backend()).execute(&self.pool).await?;
        }
        Ok(deleted == 1)
    }

    /// Releases job `id` after a failed attempt: due again at `retry_at`, with `error` kept for
    /// the operator (`last_error`; never shown to clients).
    ///
    /// # Errors
    /// A storage error (the job's lease then runs out and it is retried anyway).
    pub async fn fail_job(
        &self,
        id: i64,
        error: &str,
        retry_at: DateTime<Utc>,
    ) -> Result<(), StorageError> {
        db::query(
            "UPDATE analysis_jobs SET lease_until = NULL, not_before = $1, last_error = $2 \
             WHERE id = $3",
        )
        .bind(retry_at)
        .bind(error)
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Releases job `id` untouched, due at once (its holder chose not to analyze it now).
    ///
    /// # Errors
    /// A storage error (the lease then runs out).
    pub async fn release_job(&self, id: i64) -> Result<(), StorageError> {
        db::query("UPDATE analysis_jobs SET lease_until = NULL WHERE id = $1")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Whether a job of `project_id` that will ask for the change-point scan of `branch` is
    /// queued and not started (waiting: no worker holds it, or its holder's lease ran out, so
    /// whoever takes it next starts from the start): the branch's scan
    /// itself, or the analysis of one of its commits (`commit` or `reanalysis`), which asks for
    /// the scan when it ends. An analysis waiting out its back-off after a failure does not
    /// count (it may fail again); a scan does, also one spaced out after the last
    /// (`crate::analysis::scan`: asking again would make it due at once).
    ///
    /// # Errors
    /// A storage error.
    pub async fn scan_will_be_asked(
        &self,
        project_id: i64,
        branch: &str,
    ) -> Result<bool, StorageError> {
        let row = db::query(
            "SELECT id FROM analysis_jobs WHERE project_id = $1 AND branch = $2 \
             AND (kind = 'scan' OR (kind IN ('commit', 'reanalysis') AND not_before <= $3)) \
             AND (lease_until IS NULL OR lease_until < $3) LIMIT 1",
        )
        .bind(project_id)
        .bind(branch)
        .bind(now())
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.is_some())
    }

    /// The `commit` and `reanalysis` jobs of `project_id` that are waiting (as
    /// [`Store::scan_will_be_asked`] says): one read for every commit an upload out of order
    /// affects (`crate::analysis::analyze_upload` asked two reads per commit, 3,489 reads per
    /// 300 uploads under 8 clients). At most the queue's bound of rows.
    ///
    /// # Errors
    /// A storage error.
    pub async fn commit_jobs_waiting(
        &self,
        project_id: i64,
    ) -> Result<std::collections::HashSet<JobTarget>, StorageError> {
        let rows: Vec<(String, String, String)> = db::query_as(
            "SELECT kind, branch, commit_sha FROM analysis_jobs WHERE project_id = $1 \
             AND kind IN ('commit', 'reanalysis') AND (lease_until IS NULL OR lease_until < $2)",
        )
        .bind(project_id)
        .bind(now())
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|(kind, branch, commit_sha)| JobTarget::from_columns(&kind, branch, commit_sha))
            .collect()
    }

    /// The job that will analyze a run of `project_id` at `commit_sha` on `branch`: its
    /// commit's job, else the project's; `None` when neither is queued.
    ///
    /// # Errors
    /// A storage error.
    pub async fn job_of_commit(
        &self,
        project_id: i64,
        branch: &str,
        commit_sha: &str,
    ) -> Result<Option<JobState>, StorageError> {
        let row = db::query(
            "SELECT queued_at, attempts, not_before, lease_until FROM analysis_jobs \
             WHERE project_id = $1 AND ((kind IN ('commit', 'reanalysis') AND branch = $2 \
             AND commit_sha = $3) \
             OR kind = 'project') ORDER BY kind LIMIT 1",
        )
        .bind(project_id)
        .bind(branch)
        .bind(commit_sha)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let lease: Option<DateTime<Utc>> = row.try_get("lease_until")?;
        Ok(Some(JobState {
            queued_at: row.try_get("queued_at")?,
            attempts: row.try_get("attempts")?,
            not_before: row.try_get("not_before")?,
            running: lease.is_some_and(|l| l > now()),
        }))
    }

    /// How many jobs are queued (analyses, change-point scans and PR comments, any state): 0
    /// once everything stored is analyzed, scanned and reported.
    ///
    /// # Errors
    /// A storage error.
    pub async fn queued_jobs(&self) -> Result<i64, StorageError> {
        Ok(db::query_scalar("SELECT COUNT(*) FROM analysis_jobs")
            .fetch_one(&self.pool)
            .await?)
    }

    /// The queue's jobs, and of them the uploads' commit analyses, on every server of this
    /// database, in one read: what an upload reads before storing its run (one round trip
    /// fewer than a count each).
    ///
    /// # Errors
    /// A storage error.
    pub async fn queue_counts(&self) -> Result<QueueCounts, StorageError> {
        let (jobs, commit_jobs): (i64, i64) = db::query_as(
            "SELECT COUNT(*), COALESCE(SUM(CASE WHEN kind = 'commit' THEN 1 ELSE 0 END), 0) \
             FROM analysis_jobs",
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(QueueCounts { jobs, commit_jobs })
    }

    /// The project with internal id `id`.
    ///
    /// # Errors
    /// A storage error.
    pub async fn project_by_id(&self, id: i64) -> Result<Option<Project>, StorageError> {
        let sql = format!("SELECT {PROJECT_COLUMNS} FROM projects WHERE id = $1");
        let row = db::query(&sql).bind(id).fetch_optional(&self.pool).await?;
        row.as_ref().map(project_row).transpose()
    }
}

/// [`Store::enqueue_job`] on `conn` (inside the caller's transaction, for an upload).
pub(super) async fn enqueue_job(
    conn: &mut Conn,
    project_id: i64,
    target: &JobTarget,
    lease: Option<Duration>,
) -> Result<JobTicket, StorageError> {
    let at = now();
    // At the precision stored, so that the lease read back compares equal to ours.
    let lease_until = lease.map(|l| (at + l).trunc_subsecs(6));
    let (kind, branch, commit_sha) = target.columns();
    // A lease held by another worker is kept (it is at work on an older generation and will
    // leave the job queued when it finishes); one that ran out or none is replaced by ours.
    let row = db::query(
        "INSERT INTO analysis_jobs \
         (project_id, kind, branch, commit_sha, generation, attempts, queued_at, not_before, lease_until) \
         VALUES ($1, $2, $3, $4, 1, 0, $5, $5, $6) \
         ON CONFLICT (project_id, kind, branch, commit_sha) DO UPDATE SET \
         generation = analysis_jobs.generation + 1, not_before = excluded.not_before, \
         lease_until = CASE WHEN analysis_jobs.lease_until IS NULL \
         OR analysis_jobs.lease_until < excluded.queued_at THEN excluded.lease_until \
         ELSE analysis_jobs.lease_until END \
         RETURNING id, generation, lease_until",
    )
    .bind(project_id)
    .bind(kind)
    .bind(branch)
    .bind(commit_sha)
    .bind(at)
    .bind(lease_until)
    .fetch_one(&mut *conn)
    .await?;
    let held: Option<DateTime<Utc>> = row.try_get("lease_until")?;
    Ok(JobTicket {
        id: row.try_get("id")?,
        generation: row.try_get("generation")?,
        leased: lease_until.is_some() && held == lease_until,
    })
}

/// The claim of job `$2` for a lease until `$1` at time `$3`: only if it is still due.
const CLAIM: &str = "UPDATE analysis_jobs SET lease_until = $1, attempts = attempts + 1 \
     WHERE id = $2 AND not_before <= $3 AND (lease_until IS NULL OR lease_until < $3) \
     AND NOT (kind IN ('comments', 'refresh') AND EXISTS (SELECT 1 FROM analysis_jobs o \
     WHERE o.project_id = analysis_jobs.project_id AND o.kind IN ('comments', 'refresh') \
     AND o.id <> analysis_jobs.id AND o.lease_until >= $3))";

/// What a claim returns of the claimed row.
const CLAIMED: &str = "project_id, kind, branch, commit_sha, generation, attempts";

/// The condition (on `analysis_jobs` rows at time `$1`) that no other posting job (the kinds
/// of [`JobTarget::posts`]) of the row's project is leased, for a posting job; true for other
/// kinds.
const NO_OTHER_POSTER: &str = "NOT (kind IN ('comments', 'refresh') AND EXISTS (SELECT 1 \
     FROM analysis_jobs o WHERE o.project_id = analysis_jobs.project_id \
     AND o.kind IN ('comments', 'refresh') AND o.id <> analysis_jobs.id AND o.lease_until >= $1))";

/// Claims posting job `id` (see [`Store::claim_due_job`]) in a write transaction that
/// first locks the project's row. Without it, two servers claiming two comments jobs of one
/// project at once would each check, in its own snapshot, that the other's job is not leased,
/// and both succeed (Postgres, read committed). With it the second claim waits for the first
/// to commit, and its `UPDATE`, a new statement with a new snapshot, sees that lease and
/// claims nothing. (SQLite's `BEGIN IMMEDIATE` serializes writers already; the lock is a
/// no-op write there.) `name = name` takes Postgres's `FOR NO KEY UPDATE` lock, which the
/// foreign-key checks of concurrent inserts (`FOR KEY SHARE`) do not wait for.
async fn claim_comments(
    store: &Store,
    id: i64,
    until: DateTime<Utc>,
    at: DateTime<Utc>,
) -> Result<Option<DbRow>, StorageError> {
    let mut tx = store.begin_write().await?;
    db::query(
        "UPDATE projects SET name = name \
         WHERE id = (SELECT project_id FROM analysis_jobs WHERE id = $1)",
    )
    .bind(id)
    .execute(&mut *tx)
    .await?;
    let row = db::query(&format!("{CLAIM} RETURNING {CLAIMED}"))
        .bind(until)
        .bind(id)
        .bind(at)
        .fetch_optional(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(row)
}
