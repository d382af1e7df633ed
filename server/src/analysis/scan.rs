//! The change-point scan as a durable job ([`JobTarget::Scan`], one per project and branch):
//! every analysis of a default-branch commit asks for it ([`request`]), a worker of
//! [`super::jobs`] claims it through the database and runs [`scan_branch`], renewing its
//! lease meanwhile. So it runs once across all servers on one database, and a server that dies
//! mid-scan leaves it queued for another once the lease runs out.
//!
//! * **Coalescing.** Asking while the job is queued bumps its generation; a scan that ran
//!   meanwhile leaves the job queued (it did not see the newest runs), so any number of
//!   requests during a scan make exactly one more scan.
//! * **Its own input.** The scan reads the history it scans from the store, not from the
//!   analysis that asked for it: the default branch's newest [`SCAN_COMMITS`] commits, every
//!   group measured there, built into the engine's input as the upload path builds it
//!   ([`CommitContext::inputs`], its second half).
//! * **Idempotent.** Alerts are stored by identity (branch, commit, kind, headline series:
//!   `crate::storage::NewAlert::dedup_key`), so a scan that runs twice, or again after a
//!   crash, updates its alerts in place and opens none twice.

use super::alerts::change_point_scan;
use crate::storage::{
    CommitWindow, GroupSeries, HistoryPoint, JobTarget, Project, StorageError, Store,
};
use benchtrail_core::report::group::CommitContext;
use std::collections::HashSet;

/// Most commits of the branch a scan reads: the newest ones. E-Divisive's permutation test is
/// a full best-split search per permutation, quadratic in the commits scanned, so an unbounded
/// history would make every scan slower than the last. 200 commits is over half a year of one
/// CI benchmark a day, and far more than a change point needs (`min_segment`, at most 50, on
/// each side): a change is found within `min_segment` commits of it, long before it leaves the
/// window. At 500 the scan's CPU, competing with uploads, doubled the upload latency of an
/// 18-cell project between commit 300 and 500 (`cargo bench --bench history_growth`,
/// BENCHMARKS.md). Change points older than the window are left as they are: the scan neither
/// finds nor supersedes them ([`supersedable`]).
pub const SCAN_COMMITS: usize = 200;

/// How long after a scan that took `took` the next one of its branch may start, when it was
/// asked for again meanwhile: four times as long (a worker scans at most a fifth of its time
/// during a burst of uploads), at most a minute. A scan costs more than an analysis (its
/// permutation test over [`SCAN_COMMITS`] commits of every group) and only moves the history's
/// change points, never an upload's verdict; back to back, as uploads arrived, E-Divisive took
/// a fifth of the server's CPU while one client uploaded the peer data set (`perf record` of
/// `cargo bench --bench peer_ingest`, BENCHMARKS.md, "Ingest side by side with the peer").
pub(super) fn spacing(took: std::time::Duration) -> chrono::Duration {
    let wait = (took * 4).min(std::time::Duration::from_secs(60));
    chrono::Duration::from_std(wait).unwrap_or_default()
}

/// Asks for the scan of `branch` of project `project_id`: a new job, or the running one asked
/// for again; nothing when one waits that has not started.
///
/// # Errors
/// A storage error (the caller's own job then fails and is retried, so the request is not lost).
pub(super) async fn request(
    store: &Store,
    project_id: i64,
    branch: &str,
) -> Result<(), StorageError> {
    let target = JobTarget::Scan {
        branch: branch.to_string(),
    };
    // A scan that waits and has not started will read the runs of the analysis asking now
    // (they were stored before it began): asking again would only write, and on SQLite every
    // write waits for the one writer. One that runs may have read the history before them,
    // so it is asked for again (a new generation: one more scan). An analysis of the branch
    // that waits asks when it ends, so during a burst of uploads the scan is asked for once,
    // by the burst's last analysis, instead of scanning a history about to change while
    // uploads wait for the cores (9 % of the server's CPU under 8 clients uploading the
    // peer's data set, BENCHMARKS.md "Session 39"). Only waiting jobs count: two running
    // analyses that each saw the other would both leave the scan unasked.
    if store.scan_will_be_asked(project_id, branch).await? {
        return Ok(());
    }
    store.enqueue_job(project_id, &target, None).await?;
    Ok(())
}

/// The scan of `branch` of `project`: the newest [`SCAN_COMMITS`] commits of every group
/// measured there, change points stored as `change_point` alerts. Nothing when `branch` is
/// not (or no longer) the default branch or the project's settings turned the scan off.
///
/// # Errors
/// A storage error.
pub(super) async fn scan_branch(
    store: &Store,
    project: &Project,
    branch: &str,
) -> Result<(), StorageError> {
    let stored = store.settings(project).await?;
    let det = stored.settings.detection.clone();
    if branch != project.default_branch || !det.engine.change_points.enabled {
        return Ok(());
    }
    // Counted, so that an upload's analysis running beside it leaves it a core.
    let _running = super::concurrency::ANALYSES.start();
    // One read of the graph: the window, the history's order and the input all follow it.
    let graph = store.commit_graph(project.id).await?;
    let window = store
        .newest_commits(project.id, branch, SCAN_COMMITS, &graph)
        .await?;
    let groups = store.project_groups(project.id).await?;
    // One group's points at a time: the points of every group of a 500-commit window at once
    // (612 series × 500 commits for an 18-cell project) held the server's memory at hundreds
    // of MB. What is kept across groups: the engine inputs, far smaller, and the window's runs
    // with their values, read once for every group (`WindowRuns`; at 1,800 commits of issue
    // 12's data set, 245,000 values of 400 runs): read again for each group, they made the
    // scan take 10 s instead of 0.6 (BENCHMARKS.md "Session 37").
    let mut inputs = Vec::new();
    let mut runs = crate::storage::WindowRuns::default();
    for series in groups.values() {
        let ids: Vec<String> = series.iter().map(|s| s.series_id.clone()).collect();
        let points = store
            .branch_history(project.id, branch, &ids, &window.commits, &graph, &mut runs)
            .await?;
        if points.is_empty() {
            continue;
        }
        inputs.push(scan_input(project, &det, &graph, series, &points));
    }
    if inputs.is_empty() {
        return Ok(());
    }
    let scope = supersedable(&window, det.engine.change_points.min_segment);
    let scanned = change_point_scan(
        store,
        project.id,
        branch,
        inputs,
        det,
        stored.version,
        &scope,
    )
    .await;
    crate::memory::note_work();
    scanned
}

/// The scan input of one group from its default-branch `points` (in commit order): the
/// default-branch history through its newest commit, exactly as an upload of that commit
/// would build it.
fn scan_input(
    project: &Project,
    det: &benchtrail_core::settings::DetectionSettings,
    graph: &benchtrail_core::history::CommitGraph,
    series: &[GroupSeries],
    points: &[HistoryPoint],
) -> benchtrail_core::regression::GroupInput {
    let newest = points.last().map(|p| &*p.commit_sha).unwrap_or("");
    let ctx = CommitContext {
        default_branch: &project.default_branch,
        branch: &project.default_branch,
        commit: newest,
        merge_base: None,
        det,
        graph,
    };
    let plan = ctx.plan(points, None);
    ctx.default_branch_history(series, points, &plan)
}

/// The commits at which a scan of `window` may supersede an earlier change point it no
/// longer finds: the whole window when it is the branch's whole history; otherwise all but
/// its oldest `min_segment` commits (read as at least 2, as E-Divisive does), where a change
/// point cannot be placed for want of commits before it, so a change point found there by an
/// earlier scan that saw those commits is kept.
pub(super) fn supersedable(window: &CommitWindow, min_segment: usize) -> HashSet<String> {
    let skip = if window.truncated {
        min_segment.max(2).min(window.commits.len())
    } else {
        0
    };
    window.commits[skip..].iter().cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(n: usize, truncated: bool) -> CommitWindow {
        CommitWindow {
            commits: (0..n).map(|i| format!("c{i}")).collect(),
            truncated,
        }
    }

    #[test]
    fn a_whole_history_may_supersede_anywhere_a_truncated_one_not_at_its_old_edge() {
        let mut whole: Vec<String> = supersedable(&window(6, false), 5).into_iter().collect();
        whole.sort();
        assert_eq!(whole, ["c0", "c1", "c2", "c3", "c4", "c5"]);
        let mut cut: Vec<String> = supersedable(&window(8, true), 5).into_iter().collect();
        cut.sort();
        assert_eq!(cut, ["c5", "c6", "c7"]);
        let mut small: Vec<String> = supersedable(&window(4, true), 1).into_iter().collect();
        small.sort();
        assert_eq!(small, ["c2", "c3"]);
        assert!(supersedable(&window(3, true), 5).is_empty());
    }

    #[test]
    fn the_next_scan_waits_four_times_the_last_ones_length_at_most_a_minute() {
        use std::time::Duration;
        assert_eq!(
            spacing(Duration::from_millis(250)).num_milliseconds(),
            1_000
        );
        assert_eq!(spacing(Duration::from_secs(20)).num_seconds(), 60);
        assert_eq!(spacing(Duration::ZERO).num_milliseconds(), 0);
    }
}
