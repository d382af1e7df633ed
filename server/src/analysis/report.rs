//! A stored run's whole report ([`ReportDocument`]): its verdict and analysis, links to its
//! pages, and the recent history of each series a finding flagged (the baseline commits'
//! means the decision used, then the candidate commit's), and capacity at SLO against the
//! baseline run when the run's load sweeps pair with its ([`super::capacity`]). Served by
//! `GET /api/v1/runs/{id}/report` and rendered by the CLI into PR comments and job summaries.

use super::verdict_and_analysis;
use crate::storage::{Project, StorageError, Store, StoredRun};
use benchtrail_core::report::extras::{
    flagged_series, Link, ReportDocument, ReportExtras, Sparkline,
};
use benchtrail_core::report::RunAnalysis;
use std::collections::BTreeMap;

/// At most this many sparklines per report (the most important findings' series first).
pub const MAX_SPARKLINES: usize = 12;

/// At most this many configuration links per report.
pub const MAX_CONFIG_LINKS: usize = 3;

/// The report of `run` in `project`, its links under `base_url` (`https://bench.example.com`,
/// no trailing slash).
///
/// # Errors
/// A storage error.
pub async fn report_document(
    store: &Store,
    project: &Project,
    run: &StoredRun,
    base_url: &str,
) -> Result<ReportDocument, StorageError> {
    let (verdict, analysis) = verdict_and_analysis(store, project, &run.summary).await?;
    let run_url = format!("{base_url}/runs/{}", run.summary.id);
    let mut links = vec![Link {
        label: "run".into(),
        url: run_url.clone(),
    }];
    // The compare page against the baseline the analysis used: every cell's changes with
    // their intervals, also those that opened no alert.
    links.push(Link {
        label: "compare with baseline".into(),
        url: format!("{base_url}/compare?head={}", run.summary.id),
    });
    links.push(Link {
        label: "alerts".into(),
        url: format!(
            "{base_url}/projects/{}/alerts?commit={}",
            project.slug, run.summary.commit_sha
        ),
    });
    // Each configuration the run measured (its reproducible setup), in result order.
    let mut fingerprints: Vec<&str> = Vec::new();
    for r in &run.results {
        if !fingerprints.contains(&r.config_fingerprint.as_str()) {
            fingerprints.push(&r.config_fingerprint);
        }
    }
    for f in fingerprints.iter().take(MAX_CONFIG_LINKS) {
        links.push(Link {
            label: format!("configuration {}", &f[..f.len().min(12)]),
            url: format!("{base_url}/configs/{f}"),
        });
    }
    if let Some(job) = &run.summary.ci_job_url {
        links.push(Link {
            label: "CI job".into(),
            url: job.clone(),
        });
    }
    let sparklines = match &analysis {
        Some(a) => sparklines(store, a).await?,
        None => Vec::new(),
    };
    // Capacity at SLO against the baseline run, when the run's sweeps pair with its.
    let capacity = match &analysis {
        Some(a) => super::capacity::capacity_section(store, project, run, a, base_url).await?,
        None => None,
    };
    Ok(ReportDocument {
        project: project.slug.clone(),
        pr: run.summary.pr_number.and_then(|n| u64::try_from(n).ok()),
        verdict,
        analysis,
        extras: ReportExtras {
            suite: None,
            links,
            full_report: Some(run_url),
            sparklines,
            capacity,
        },
    })
}

async fn sparklines(store: &Store, a: &RunAnalysis) -> Result<Vec<Sparkline>, StorageError> {
    let mut out = Vec::new();
    for cell in &a.groups {
        for id in flagged_series(&cell.report) {
            if out.len() >= MAX_SPARKLINES {
                return Ok(out);
            }
            let Some(series) = cell.report.series.iter().find(|s| s.series_id == id) else {
                continue;
            };
            let mut values = commit_means(store, &id, &a.default_branch, |c| {
                cell.history_commits
                    .binary_search_by(|h| h.as_str().cmp(c))
                    .is_ok()
            })
            .await?;
            values.extend(commit_means(store, &id, &a.branch, |c| c == a.commit).await?);
            let slo_profile = cell
                .report
                .findings
                .iter()
                .find(|f| f.series_ids.contains(&id))
                .and_then(|f| f.slo_profile.clone());
            out.push(Sparkline {
                series_id: id.clone(),
                cell: cell.cell.clone(),
                metric: series.metric.clone(),
                stat: series.stat.clone(),
                slo_profile,
                values,
            });
        }
    }
    Ok(out)
}

/// The mean per commit of `series_id`'s valid points on `branch` whose commit `keep`s, in
/// the branch's commit order.
async fn commit_means(
    store: &Store,
    series_id: &str,
    branch: &str,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<f64>, StorageError> {
    let points = store.series_points(series_id, branch).await?;
    let mut order: Vec<String> = Vec::new();
    let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for p in points.iter().filter(|p| !p.excluded && keep(&p.commit_sha)) {
        let e = sums.entry(p.commit_sha.clone()).or_insert_with(|| {
            order.push(p.commit_sha.clone());
            (0.0, 0)
        });
        e.0 += p.value;
        e.1 += 1;
    }
    Ok(order
        .iter()
        .map(|c| {
            let (s, n) = sums[c];
            s / n as f64
        })
        .collect())
}
