//! What the change-point scan reads (`crate::analysis::scan`): the newest commits of a branch,
//! the values measured there, and the project's groups. Bounded by the caller's number of
//! commits, so a scan reads (and computes) the same amount however long the history grows.

use super::codec::parse_stat;
use super::db;
use super::{GroupSeries, HistoryPoint, StorageError, Store, WindowRuns};
use benchtrail_core::history::CommitGraph;
use std::collections::BTreeMap;

/// The newest commits of a branch ([`Store::newest_commits`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitWindow {
    /// The commits, oldest first, in commit order.
    pub commits: Vec<String>,
    /// Whether older commits of the branch were left out.
    pub truncated: bool,
}

impl Store {
    /// The newest `limit` commits with runs of the project on `branch`, oldest first, in the
    /// order of the project's `graph` ([`Store::commit_graph`], as the history is read).
    ///
    /// # Errors
    /// A storage error.
    pub async fn newest_commits(
        &self,
        project_id: i64,
        branch: &str,
        limit: usize,
        graph: &CommitGraph,
    ) -> Result<CommitWindow, StorageError> {
        let mut commits: Vec<String> = db::query_scalar(
            "SELECT commit_sha FROM runs WHERE project_id = $1 AND branch = $2 \
             GROUP BY commit_sha ORDER BY MIN(seq)",
        )
        .bind(project_id)
        .bind(branch)
        .fetch_all(&self.pool)
        .await?;
        // Stable: commits the graph does not order keep their upload order, after the others.
        commits.sort_by_key(|sha| graph.position(sha).unwrap_or(usize::MAX));
        let truncated = commits.len() > limit;
        let commits = commits.split_off(commits.len().saturating_sub(limit));
        Ok(CommitWindow { commits, truncated })
    }

    /// Every value of `series_ids` measured on `branch` at `commits`, in the order of the
    /// project's `graph`, as [`Store::series_history_at`] reads them (a value of the same
    /// commit on another branch left out). `runs`: the windows this scan has read already
    /// (one per scan: its groups all read the same window, once).
    ///
    /// # Errors
    /// A storage error.
    pub async fn branch_history(
        &self,
        project_id: i64,
        branch: &str,
        series_ids: &[String],
        commits: &[String],
        graph: &CommitGraph,
        runs: &mut WindowRuns,
    ) -> Result<Vec<HistoryPoint>, StorageError> {
        let mut points = self
            .series_history_in(project_id, series_ids, Some(commits), graph, runs)
            .await?;
        points.retain(|p| *p.branch == *branch);
        Ok(points)
    }

    /// Every series of the project by group (series key JSON, cell key), each group's series
    /// in the order of [`Store::series_group`] (metric, statistic, id).
    ///
    /// # Errors
    /// A storage error.
    pub async fn project_groups(
        &self,
        project_id: i64,
    ) -> Result<BTreeMap<(String, String), Vec<GroupSeries>>, StorageError> {
        let rows: Vec<(String, String, String, Option<String>, String, String)> = db::query_as(
            "SELECT series_id, metric, stat, slo_profile, series_key_json, cell_key \
                 FROM series WHERE project_id = $1 ORDER BY metric, stat, series_id",
        )
        .bind(project_id)
        .fetch_all(&self.pool)
        .await?;
        let mut groups: BTreeMap<(String, String), Vec<GroupSeries>> = BTreeMap::new();
        for (series_id, metric, stat, slo_profile, series_key_json, cell_key) in rows {
            groups
                .entry((series_key_json.clone(), cell_key.clone()))
                .or_default()
                .push(GroupSeries {
                    series_id,
                    metric,
                    stat: parse_stat(&stat)?,
                    slo_profile,
                    series_key_json,
                    cell_key,
                });
        }
        Ok(groups)
    }
}
