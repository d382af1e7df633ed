//! Capacity at SLO in a run's report (the PR comment's capacity section, issue 14): the
//! validation report of the run against the newest run of the baseline commits its analysis
//! used, as `GET /api/v1/compare/report` of the two runs computes it (paired cell by cell,
//! both runs' quality results, the project's SLO profiles and cost, the default 95 % target).
//! Given only when the run's load sweeps pair with the baseline's: some sweep measured on
//! both sides, with two loads or more on one of them.

use crate::api::run_results::stored_bench_results;
use crate::storage::{Project, SampleColumns, StorageError, Store, StoredRun};
use benchtrail_core::capacity::{capacity_report, ReportOptions, ReportSide};
use benchtrail_core::report::extras::CapacitySection;
use benchtrail_core::report::pairing::pair_by_cell;
use benchtrail_core::report::RunAnalysis;

/// The capacity section of `run`'s report against its baseline run, links under `base_url`;
/// `None` without a baseline run or without paired sweeps (module documentation), or when a
/// stored result does not read back (logged; the rest of the report stands).
///
/// # Errors
/// A storage error.
pub async fn capacity_section(
    store: &Store,
    project: &Project,
    run: &StoredRun,
    analysis: &RunAnalysis,
    base_url: &str,
) -> Result<Option<CapacitySection>, StorageError> {
    let Some(base) = newest_baseline_run(store, project, analysis).await? else {
        return Ok(None);
    };
    let (b, h) = match (
        stored_bench_results(store, &base, SampleColumns::WithoutItl).await,
        stored_bench_results(store, run, SampleColumns::WithoutItl).await,
    ) {
        (Ok(b), Ok(h)) => (b, h),
        (Err(e), _) | (_, Err(e)) => {
            tracing::warn!(run = %run.summary.id, error = ?e, "no capacity section: results do not read back");
            return Ok(None);
        }
    };
    let settings = store.settings(project).await?.settings;
    let (paired, _) = pair_by_cell(&b, &h, &project.key_fields);
    let report = capacity_report(
        ReportSide {
            results: &paired,
            quality: &base.quality,
            as_stored: Some(&b),
        },
        ReportSide::new(&h, &run.quality),
        &project.key_fields,
        &settings.slo_profiles,
        ReportOptions::of_project(&settings),
    );
    let paired_sweep = report
        .sweeps
        .iter()
        .any(|s| s.baseline_loads.len() > 1 || s.candidate_loads.len() > 1);
    Ok(paired_sweep.then(|| CapacitySection {
        base_run: base.summary.id,
        url: format!(
            "{base_url}/compare/report?base={}&head={}",
            base.summary.id, run.summary.id
        ),
        report,
    }))
}

/// The newest run (by upload order) of the baseline commits `analysis`'s tests used, on the
/// project's default branch; `None` when nothing was tested.
///
/// # Errors
/// A storage error.
pub async fn newest_baseline_run(
    store: &Store,
    project: &Project,
    analysis: &RunAnalysis,
) -> Result<Option<StoredRun>, StorageError> {
    let mut commits: Vec<&str> = analysis
        .groups
        .iter()
        .flat_map(|g| &g.report.series)
        .filter_map(|s| s.comparison.as_ref())
        .flat_map(|c| c.baseline_commits.iter().map(String::as_str))
        .collect();
    commits.sort_unstable();
    commits.dedup();
    // One query for the newest run's id, one full read: the page used to read every baseline
    // commit's run whole (612 values each) only to keep one.
    let Some(id) = store
        .newest_commit_run(project.id, &analysis.default_branch, &commits)
        .await?
    else {
        return Ok(None);
    };
    store.run(id).await
}
