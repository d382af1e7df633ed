//! Findings → stored alerts: new alerts of a commit, resolution of earlier alerts a commit
//! returns to the baseline of, and the change-point scan's alerts.

use super::{IMPROVEMENT_REASON, SUPERSEDED};
use crate::storage::{
    Alert, AlertKind, AlertStatus, CommitRun, GroupSeries, NewAlert, StorageError, Store,
};
use benchtrail_core::regression::{
    analyze,
    family_scan::{family_change_points, family_count},
    Comparison, Finding, GroupInput, SeriesInput, Severity,
};
use benchtrail_core::report::group::{CommitContext, GroupAnalysis};
use benchtrail_core::settings::DetectionSettings;
use serde_json::json;
use std::collections::{BTreeMap, HashMap, HashSet};

fn severity_text(s: Option<Severity>) -> Option<String> {
    s.map(|s| match s {
        Severity::Warn => "warn".to_string(),
        Severity::Fail => "fail".to_string(),
    })
}

pub(super) fn new_alert(
    f: &Finding,
    key: &(String, String),
    branch: &str,
    commit: &str,
    ga: &GroupAnalysis,
    version: i64,
    runs: &[CommitRun],
) -> NewAlert {
    let kind = AlertKind::from(f.kind);
    let improvement = kind == AlertKind::Improvement;
    // The run that holds the headline series (the latest upload of the commit that does): a
    // commit can have runs of several tools or cells, and the alert links to its own.
    let headline = f.series_ids.first();
    let run_id = runs
        .iter()
        .rev()
        .find(|r| headline.is_some_and(|h| r.has_series(h)))
        .map(|r| r.summary.id);
    let mut finding = serde_json::to_value(f).expect("findings serialize");
    finding["baseline_rule"] = json!(ga.baseline_rule);
    NewAlert {
        kind,
        status: if improvement {
            AlertStatus::Resolved
        } else {
            AlertStatus::Open
        },
        reason: improvement.then(|| IMPROVEMENT_REASON.to_string()),
        severity: severity_text(f.severity),
        series_ids: f.series_ids.clone(),
        metric: f.metric.clone(),
        stat: f.stat.clone(),
        slo_profile: f.slo_profile.clone(),
        series_key_json: key.0.clone(),
        cell_key: key.1.clone(),
        branch: branch.to_string(),
        commit_sha: f
            .candidate_commit
            .clone()
            .unwrap_or_else(|| commit.to_string()),
        run_id,
        baseline_commits: f.baseline_commits.clone(),
        summary: f.summary.clone(),
        finding,
        settings_version: version,
    }
}

/// Resolves active alerts of earlier default-branch commits whose series this commit measured
/// and which this commit no longer shows against the alert's own baseline commits.
/// `standing`: the default branch's unresolved regression, trade-off and missing alerts, as
/// read before this commit's alerts were saved (saving them changes only this commit's).
/// `default_histories`: each such group's default-branch history through this commit
/// ([`CommitContext::default_branch_history`]).
/// Returns the alerts this commit still shows, with their group: the commit continues them
/// even where its own test finds nothing new (a step in the baseline widens its spread, so the
/// commit after a step is rarely significant on its own, yet the change has not gone away).
pub(super) async fn resolve_returned(
    store: &Store,
    standing: &[Alert],
    ctx: &CommitContext<'_>,
    groups: &BTreeMap<(String, String), Vec<GroupSeries>>,
    analyzed: &HashMap<(String, String), GroupAnalysis>,
    default_histories: &HashMap<(String, String), GroupInput>,
) -> Result<Vec<((String, String), Alert)>, StorageError> {
    let mut still_there = Vec::new();
    let active = standing
        .iter()
        .filter(|a| a.status.is_active() && a.commit != ctx.commit);
    for alert in active {
        let Some((key, _)) = groups
            .iter()
            .find(|(_, s)| s.iter().any(|g| g.series_id == alert.series_id))
        else {
            continue;
        };
        let (Some(ga), Some(full_history)) = (analyzed.get(key), default_histories.get(key)) else {
            continue;
        };
        // Only alerts of commits before this one (in its baseline history).
        let earlier = full_history.series.iter().any(|s| {
            let n = s.history.len();
            s.history[..n.saturating_sub(1)]
                .iter()
                .any(|c| c.commit == alert.commit)
        });
        if !earlier {
            continue;
        }
        let series: Vec<SeriesInput> = ga
            .input
            .series
            .iter()
            .map(|s| {
                let full = full_history
                    .series
                    .iter()
                    .find(|x| x.series_id == s.series_id);
                SeriesInput {
                    history: full
                        .map(|f| {
                            f.history
                                .iter()
                                .filter(|c| alert.baseline_commits.contains(&c.commit))
                                .cloned()
                                .collect()
                        })
                        .unwrap_or_default(),
                    ..s.clone()
                }
            })
            .collect();
        let headline = series.iter().find(|s| s.series_id == alert.series_id);
        let measured = headline.is_some_and(|s| s.candidate.is_some());
        let still = match alert.kind {
            AlertKind::Missing => !measured,
            _ if !measured => continue,
            kind => {
                let mut s = ctx.det.engine.clone();
                s.min_baseline_commits = 1;
                let input = GroupInput {
                    pinned_baseline: None,
                    series,
                    ..ga.input.clone()
                };
                let report = analyze(&input, &s);
                // Returned means the change itself went away, not that it lost significance:
                // a persistent 4.5 % regression measured with three repeats is often not
                // significant at α = 0.001 on a given commit, and must stay open. So: still
                // worse than the alert's baseline by at least the minimum effect. A trade-off
                // is still there while any of its worsened sides is.
                let worse_sides: Vec<&str> = match kind {
                    AlertKind::Tradeoff => alert.finding["parts"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|p| p["change"] == "worsened")
                        .filter_map(|p| p["series_id"].as_str())
                        .collect(),
                    _ => vec![alert.series_id.as_str()],
                };
                report
                    .series
                    .iter()
                    .filter(|r| worse_sides.contains(&r.series_id.as_str()))
                    .filter_map(|r| r.comparison.as_ref())
                    .any(|c| still_worse(c, s.min_effect_pct))
            }
        };
        if still {
            still_there.push((key.clone(), alert.clone()));
        } else {
            let short = &ctx.commit[..ctx.commit.len().min(12)];
            store
                .set_alert_status(
                    alert.id,
                    AlertStatus::Resolved,
                    Some(&format!("commit {short} returned to this alert's baseline")),
                    Some(ctx.commit),
                )
                .await?;
        }
    }
    Ok(still_there)
}

/// Whether a comparison with an alert's baseline still shows a worsening of at least
/// `min_effect_pct` (any worsening, from a baseline of 0).
fn still_worse(c: &Comparison, min_effect_pct: f64) -> bool {
    c.better == Some(false) && c.delta_pct.is_none_or(|d| d.abs() >= min_effect_pct)
}

/// The change-point scan of the default-branch histories of `groups` (`super::scan`): its
/// findings stored as `change_point` alerts (by identity, so running it again adds nothing),
/// and active change points of the scanned series at commits of `scope` that it no longer
/// finds resolved as superseded.
pub(super) async fn change_point_scan(
    store: &Store,
    project_id: i64,
    branch: &str,
    groups: Vec<GroupInput>,
    det: DetectionSettings,
    version: i64,
    scope: &HashSet<String>,
) -> Result<(), StorageError> {
    let settings = det.engine.clone();
    let scanned: Vec<String> = groups
        .iter()
        .flat_map(|g| g.series.iter().map(|s| s.series_id.clone()))
        .collect();
    let found = tokio::task::spawn_blocking(move || {
        let mut out = Vec::new();
        // One scan per metric family (its index), not per statistic; α is shared by all.
        let scans: usize = groups.iter().map(|g| family_count(g, &settings)).sum();
        for g in &groups {
            for f in family_change_points(g, &settings, scans) {
                out.push((g.series_key.clone(), g.cell_key.clone(), f));
            }
        }
        out
    })
    .await
    .map_err(|e| StorageError::Corrupt(format!("change-point scan panicked: {e}")))?;
    // A scan of a longer history places a shift better (E-Divisive needs `min_segment` commits
    // on each side, so while a new regime is short its change point lands early): earlier
    // change points of the scanned series that this scan no longer finds are superseded (only
    // where it could have found them: `scope`).
    let now_found: Vec<(&str, &str)> = found
        .iter()
        .filter_map(|(_, _, f)| {
            Some((
                f.series_ids.first()?.as_str(),
                f.candidate_commit.as_deref()?,
            ))
        })
        .collect();
    for a in store
        .active_alerts(project_id, branch, &[AlertKind::ChangePoint])
        .await?
    {
        if scanned.contains(&a.series_id)
            && scope.contains(&a.commit)
            && !now_found.contains(&(a.series_id.as_str(), a.commit.as_str()))
        {
            store
                .set_alert_status(
                    a.id,
                    AlertStatus::Resolved,
                    Some("superseded: the latest scan of a longer history no longer finds this change point"),
                    None,
                )
                .await?;
        }
    }
    for (series_key, cell, f) in found {
        let commit = f.candidate_commit.clone().unwrap_or_default();
        let alert = NewAlert {
            kind: AlertKind::ChangePoint,
            status: if f.severity.is_some() {
                AlertStatus::Open
            } else {
                AlertStatus::Resolved
            },
            reason: f.severity.is_none().then(|| IMPROVEMENT_REASON.to_string()),
            severity: severity_text(f.severity),
            series_ids: f.series_ids.clone(),
            metric: f.metric.clone(),
            stat: f.stat.clone(),
            slo_profile: f.slo_profile.clone(),
            series_key_json: series_key,
            cell_key: cell,
            branch: branch.to_string(),
            commit_sha: commit.clone(),
            run_id: None,
            baseline_commits: f.baseline_commits.clone(),
            summary: f.summary.clone(),
            finding: serde_json::to_value(&f).expect("findings serialize"),
            settings_version: version,
        };
        store
            .save_commit_alerts(project_id, branch, &commit, &[], None, &[alert], SUPERSEDED)
            .await?;
    }
    Ok(())
}
