//! What the project dashboard (`/projects/{project}`) reads besides the series list and the
//! alerts: the newest run of every branch, and the recent values of its key series on the
//! default branch. Each is one query however many branches or series there are (no query per
//! series), bounded by the caller's limits; the recent values' numbers come from the runs kept
//! in memory for the analyses when they hold them.

use super::codec::parse_uuid;
use super::db::Param;
use super::store::{run_summary, SqlBuilder, RUN_COLUMNS};
use super::{RunSummary, StorageError, Store};
use benchtrail_core::history::CommitGraph;
use std::sync::Arc;
use uuid::Uuid;

/// One stored value of a series at a commit ([`Store::recent_values`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RecentValue {
    /// The commit of the run that measured it (shared by the values of one run: the dashboard
    /// reads thousands).
    pub commit_sha: Arc<str>,
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
        // The per-branch maxima in one pass over the project's range of the index
        // `runs_project_branch_seq`. Asked per run instead (`r.seq = (SELECT MAX(b.seq) …
        // b.branch = r.branch)`), Postgres ran the subquery for each of the project's runs,
        // walking the primary key backwards each time: 15–20 ms at 3,600 runs (BENCHMARKS.md
        // "Session 44").
        let mut q = SqlBuilder::new(&format!(
            "SELECT {RUN_COLUMNS} FROM runs r JOIN projects p ON p.id = r.project_id \
             WHERE r.seq IN (SELECT MAX(b.seq) FROM runs b WHERE b.project_id = "
        ));
        q.bind(Param::int(project_id));
        q.push(" GROUP BY b.branch) ORDER BY r.seq DESC LIMIT ")
            .bind(Param::int(limit.max(1)));
        let rows = q.query(self.backend()).fetch_all(&self.pool).await?;
        rows.iter()
            .map(|row| run_summary(row).map(|(_, run)| run))
            .collect()
    }

    /// Every value of `series_ids` measured on `branch` at `commits` (e.g. the window of
    /// [`Store::newest_commits`]): one list per series id, in their order, each in the order
    /// the series page plots them ([`Store::series_points`]: the project's `graph` order;
    /// within a commit, run time, upload order, result). Empty lists when `commits` is empty.
    ///
    /// The window's runs are one query; their values come from the runs kept in memory for
    /// the analyses ([`RunValuesCache`](super::run_values::RunValuesCache): a stored run's
    /// values never change), which hold the newest runs of a project its uploads analysed; a
    /// run they do not hold (a server just started) is read whole once and kept there.
    /// Reading the values by SQL was 2,700 rows for 90 sparklines × 30 commits, 9–10 ms of a
    /// 50 ms dashboard at 1,800 commits (the rows, not SQLite, cost: one hand-over per few
    /// rows between sqlx's SQLite thread and the page's task).
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
    ) -> Result<Vec<Vec<RecentValue>>, StorageError> {
        let mut out = vec![Vec::new(); series_ids.len()];
        if series_ids.is_empty() || commits.is_empty() {
            return Ok(out);
        }
        let mut q = SqlBuilder::new("SELECT r.id, r.commit_sha FROM runs r WHERE r.project_id = ");
        q.bind(Param::int(project_id));
        q.push(" AND r.branch = ")
            .bind(Param::text(branch.to_string()));
        q.push(" AND r.commit_sha IN (");
        q.bind_list(commits.iter().map(|c| Param::text(c.clone())));
        q.push(") ORDER BY r.run_at, r.seq");
        let mut runs = q
            .query(self.backend())
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| {
                let id: String = row.try_get("id")?;
                Ok((
                    parse_uuid("id", &id)?,
                    Arc::<str>::from(row.try_get::<String, _>("commit_sha")?),
                ))
            })
            .collect::<Result<Vec<_>, StorageError>>()?;
        // Stable: within a commit, run time and upload order stay.
        runs.sort_by_cached_key(|(_, sha)| graph.position(sha).unwrap_or(usize::MAX));
        let ids: Vec<Uuid> = runs.iter().map(|(id, _)| *id).collect();
        let values = self.run_values_of(&ids).await?;
        for ((_, sha), run) in runs.iter().zip(&values) {
            for (series_id, out) in series_ids.iter().zip(&mut out) {
                // By result id within the run, as the series page reads them.
                out.extend(run.series(series_id).iter().map(|v| RecentValue {
                    commit_sha: Arc::clone(sha),
                    value: v.value,
                }));
            }
        }
        Ok(out)
    }
}
