//! What the project dashboard (`/projects/{project}`) reads besides the series list and the
//! alerts: the newest run of every branch, and the recent values of its key series on the
//! default branch. Each is one query however many branches or series there are (no query per
//! series), bounded by the caller's limits.

use super::db::Param;
use super::store::{run_summary, SqlBuilder, RUN_COLUMNS};
use super::{Backend, RunSummary, StorageError, Store};
use benchtrail_core::history::CommitGraph;

/// One stored value of a series at a commit ([`Store::recent_values`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RecentValue {
    /// The series.
    pub series_id: String,
    /// The commit of the run that measured it.
    pub commit_sha: String,
    /// The value, in the series' unit.
    pub value: f64,
}

impl Store {
    /// The newest run (highest upload sequence) of each branch of the project, newest first,
    /// at most `limit` branches (`limit` below 1 counts as 1).
    ///
    /// # Errors
    /// A storage error.
    pub async fn latest_run_per_branch(
        &self,
        project_id: i64,
        limit: i64,
    ) -> Result<Vec<RunSummary>, StorageError> {
        // Index `runs_project_branch_seq` answers the per-branch maximum.
        let mut q = SqlBuilder::new(&format!(
            "SELECT {RUN_COLUMNS} FROM runs r JOIN projects p ON p.id = r.project_id \
             WHERE r.project_id = "
        ));
        q.bind(Param::int(project_id));
        q.push(
            " AND r.seq = (SELECT MAX(b.seq) FROM runs b \
             WHERE b.project_id = r.project_id AND b.branch = r.branch) ORDER BY r.seq DESC LIMIT ",
        )
        .bind(Param::int(limit.max(1)));
        let rows = q.query(self.backend()).fetch_all(&self.pool).await?;
        rows.iter()
            .map(|row| run_summary(row).map(|(_, run)| run))
            .collect()
    }

    /// Every value of `series_ids` measured on `branch` at `commits` (e.g. the window of
    /// [`Store::newest_commits`]), in the order the series page plots them
    /// ([`Store::series_points`]: the project's `graph` order; within a commit, run time,
    /// upload order, result). One query for all the series; empty when either list is empty.
    ///
    /// # Errors
    /// A storage error.
    pub async fn recent_values(
        &self,
        project_id: i64,
        branch: &str,
        series_ids: &[String],
        commits: &[String],
        graph: &CommitGraph,
    ) -> Result<Vec<RecentValue>, StorageError> {
        if series_ids.is_empty() || commits.is_empty() {
            return Ok(Vec::new());
        }
        // From the runs of the window's commits to their values, each run's values found by
        // the (series_seq, run_seq) index: the cost is the window's, whatever the history.
        // SQLite: `CROSS JOIN` keeps it from starting at every value of the series (as
        // `series_history_at` reads a window). Postgres 15 instead reads every value of the
        // series and filters the runs (36,000 rows for 2,700 at 400 commits, growing with the
        // history) unless each run's values are a subquery of their own: `LATERAL`, kept
        // apart by `OFFSET 0`. Parameters in order of appearance (SQLite numbers `$N` so).
        let ids = || series_ids.iter().map(|s| Param::text(s.clone()));
        let mut q = match self.backend() {
            Backend::Sqlite => {
                let mut q = SqlBuilder::new(
                    "SELECT s.series_id, r.commit_sha, mv.value FROM runs r CROSS JOIN series s \
                     CROSS JOIN metric_values mv \
                     WHERE mv.run_seq = r.seq AND mv.series_seq = s.seq AND s.series_id IN (",
                );
                q.bind_list(ids());
                q.push(") AND r.project_id = ");
                q
            }
            Backend::Postgres => {
                let mut q = SqlBuilder::new(
                    "SELECT mv.series_id, r.commit_sha, mv.value FROM runs r CROSS JOIN LATERAL \
                     (SELECT s.series_id, v.value, v.result_id FROM series s \
                     JOIN metric_values v ON v.series_seq = s.seq \
                     WHERE v.run_seq = r.seq AND s.series_id IN (",
                );
                q.bind_list(ids());
                q.push(") OFFSET 0) mv WHERE r.project_id = ");
                q
            }
        };
        q.bind(Param::int(project_id));
        q.push(" AND r.branch = ")
            .bind(Param::text(branch.to_string()));
        q.push(" AND r.commit_sha IN (");
        q.bind_list(commits.iter().map(|c| Param::text(c.clone())));
        q.push(") ORDER BY r.run_at, r.seq, mv.result_id");
        let mut values = q
            .query(self.backend())
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| {
                Ok(RecentValue {
                    series_id: row.try_get("series_id")?,
                    commit_sha: row.try_get("commit_sha")?,
                    value: row.try_get("value")?,
                })
            })
            .collect::<Result<Vec<_>, StorageError>>()?;
        // Stable: within a commit, the query's order stays.
        values.sort_by_cached_key(|v| graph.position(&v.commit_sha).unwrap_or(usize::MAX));
        Ok(values)
    }
}
