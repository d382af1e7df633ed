//! Regression analysis of stored runs: history → [`GroupInput`] → findings → alerts, verdicts.
//!
//! # What runs when
//! * **On upload, before the response** ([`analyze_commit`]): the uploaded run's commit is
//!   analyzed as a whole (every run of that commit on that branch, so repeats uploaded one by
//!   one accumulate and results of one commit split over several uploads are compared
//!   together). Alerts are stored, alerts of earlier commits that this commit returns to the
//!   baseline of are resolved, and every run of the commit gets its analysis and verdict. So
//!   `GET /api/v1/runs/{id}/verdict` right after the upload answers for it.
//! * **In the background** (a tokio task started by [`analyze_commit`], default branch only):
//!   the E-Divisive change-point scan of each analyzed series' default-branch history
//!   ([`change_point_findings`], 999 permutations per test: too slow to sit in front of an
//!   upload's response for long histories). Its findings become `change_point` alerts.
//! * **On exclusion or pinning** ([`recompute_project`]): every commit of the project is
//!   analyzed again, in upload order, synchronously, before the response.
//!
//! # Baseline
//! * A commit on the project's default branch: the last `detection.engine.baseline_window`
//!   (default 10) commits *before it* on the default branch that have a valid run of the series
//!   (commit order: commit time, else run time, then upload order).
//! * A pull request (another branch with a `merge_base`): the default branch's commits up to
//!   and including the merge base, the same window.
//! * Another branch without a merge base: the default branch's commits, the same window.
//! * A pinned run (`PUT .../baselines/{series_id}`): the baseline of that series' whole group
//!   (every metric of the same series key and cell) is the pinned run's commit only.
//! * Never in a baseline (nor a valid candidate): runs excluded by a person, and results with
//!   more than `detection.max_error_rate_pct` (5 %) failed requests or fewer than
//!   `detection.min_completed_pct` (90 %) of the cell's `num_prompts` completed.
//! * Per-request samples are not read here (the engine uses them for a description only).
//!
//! # Insufficient data
//! A group with fewer than `min_baseline_commits` (3) baseline commits is not tested: its
//! series are in state `insufficient_data`, no alert is opened, and the verdict is at best
//! `warn`. The effect is still described: the baseline mean against the candidate mean as an
//! effect-only comparison (no significance test), with the engine's wording, in the run's
//! analysis and verdict reasons.

use crate::storage::{
    Alert, AlertKind, AlertStatus, GroupSeries, HistoryPoint, NewAlert, Project, StorageError,
    Store, StoredRun,
};
use benchtrail_core::regression::{
    analyze, change_point_findings, CommitRuns, Finding, FindingKind, GroupInput, GroupReport,
    RunValue, SeriesInput, SeriesState, Severity,
};
use benchtrail_core::settings::DetectionSettings;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use uuid::Uuid;

/// Kinds of alerts an analysis of one commit owns (recomputing it resolves those it no longer
/// finds). Change points belong to the background scan.
const COMMIT_KINDS: [AlertKind; 4] = [
    AlertKind::Regression,
    AlertKind::Improvement,
    AlertKind::Tradeoff,
    AlertKind::Missing,
];

/// Why an alert disappeared when its commit was analyzed again.
const SUPERSEDED: &str = "no longer found when the commit's analysis was recomputed";

/// Improvements are kept as alerts (explainable, linkable) but need no triage.
const IMPROVEMENT_REASON: &str = "improvement: no triage needed";

/// One reason of a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Reason {
    /// `fail` or `warn`.
    pub level: String,
    /// `regression`, `tradeoff`, `missing`, `change_point`, `insufficient_data`,
    /// `effect_only`, `invalid_run`, `not_analyzed`.
    pub code: String,
    /// One sentence.
    pub message: String,
    /// The alert behind it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alert_id: Option<Uuid>,
    /// The result's cell, where it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell: Option<String>,
}

/// `GET /api/v1/runs/{id}/verdict`.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Verdict {
    /// `pass`, `warn` or `fail`.
    pub verdict: String,
    /// Why; empty for `pass`.
    pub reasons: Vec<Reason>,
    /// The run.
    pub run_id: Uuid,
    /// Its commit.
    pub commit: String,
    /// Project settings version of the analysis.
    pub settings_version: Option<i64>,
    /// Number of series per state (`no_change`, `regression`, `insufficient_data`, ...).
    pub series_states: BTreeMap<String, usize>,
}

/// Analyzes every run of `commit_sha` on `branch` (see the module documentation) and stores
/// alerts and per-run analyses. Starts the background change-point scan on the default branch.
pub async fn analyze_commit(
    store: &Store,
    project: &Project,
    branch: &str,
    commit_sha: &str,
) -> Result<(), StorageError> {
    let stored = store.settings(project).await?;
    let det = stored.settings.detection.clone();
    let version = stored.version;
    let run_ids = store.commit_runs(project.id, branch, commit_sha).await?;
    let mut runs = Vec::new();
    for id in &run_ids {
        runs.extend(store.run(*id).await?);
    }
    let merge_base = runs.iter().find_map(|r| r.summary.merge_base_sha.clone());
    let pins = store.baseline_pins(project.id).await?;

    // The groups of the commit's results: (series key, cell) → its series.
    let mut groups: BTreeMap<(String, String), Vec<GroupSeries>> = BTreeMap::new();
    let mut run_groups: HashMap<Uuid, Vec<(String, String)>> = HashMap::new();
    for run in &runs {
        for result in &run.results {
            let Some(m) = result.metrics.first() else {
                continue;
            };
            let key = match groups
                .iter()
                .find(|(_, s)| s.iter().any(|g| g.series_id == m.series_id))
            {
                Some((k, _)) => k.clone(),
                None => {
                    let series = store.series_group(&m.series_id).await?;
                    let Some(first) = series.first() else {
                        continue;
                    };
                    let key = (first.series_key_json.clone(), first.cell_key.clone());
                    groups.insert(key.clone(), series);
                    key
                }
            };
            run_groups.entry(run.summary.id).or_default().push(key);
        }
    }

    let ctx = Context {
        default_branch: &project.default_branch,
        branch,
        commit: commit_sha,
        merge_base: merge_base.as_deref(),
        det: &det,
    };
    let mut alerts = Vec::new();
    let mut analyzed: HashMap<(String, String), GroupAnalysis> = HashMap::new();
    let mut scans = Vec::new();
    for (key, series) in &groups {
        let ids: Vec<String> = series.iter().map(|s| s.series_id.clone()).collect();
        let points = store.series_history(project.id, &ids).await?;
        let pinned = series.iter().find_map(|s| pins.get(&s.series_id));
        let ga = ctx.group(series, &points, pinned.map(|p| p.commit_sha.as_str()));
        for f in &ga.report.findings {
            alerts.push(new_alert(f, key, branch, commit_sha, &ga, version, &runs));
        }
        if branch == project.default_branch && det.engine.change_points.enabled {
            scans.push(ga.scan_input.clone());
        }
        analyzed.insert(key.clone(), ga);
    }
    store
        .save_commit_alerts(
            project.id,
            branch,
            commit_sha,
            &COMMIT_KINDS,
            &alerts,
            SUPERSEDED,
        )
        .await?;
    if branch == project.default_branch {
        resolve_returned(store, project, &ctx, &groups, &analyzed).await?;
    }
    for run in &runs {
        let keys = run_groups.remove(&run.summary.id).unwrap_or_default();
        let doc = run_document(run, &keys, &analyzed, version, &ctx);
        let alerts = store.run_alerts(run.summary.id).await?;
        let v = verdict_of(run, &doc, &alerts, &det, Some(version));
        store
            .put_run_analysis(run.summary.id, &v.verdict, version, &doc)
            .await?;
    }
    if !scans.is_empty() {
        let store = store.clone();
        let project_id = project.id;
        let branch = branch.to_string();
        tokio::spawn(async move {
            if let Err(e) =
                change_point_scan(&store, project_id, &branch, scans, det, version).await
            {
                tracing::warn!(error = %e, "change-point scan failed");
            }
        });
    }
    Ok(())
}

/// Analyzes every commit of a project again, in upload order (after an exclusion or a pin).
pub async fn recompute_project(store: &Store, project: &Project) -> Result<(), StorageError> {
    for (branch, commit) in store.project_commits(project.id).await? {
        analyze_commit(store, project, &branch, &commit).await?;
    }
    Ok(())
}

/// The verdict of a run from its stored analysis document and the current alerts of its
/// commit (so a dismissal changes it). `None` analysis: the run was never analyzed.
pub fn verdict_of(
    run: &StoredRun,
    doc: &Value,
    alerts: &[Alert],
    det: &DetectionSettings,
    settings_version: Option<i64>,
) -> Verdict {
    let mut reasons = Vec::new();
    let groups = doc["groups"].as_array().cloned().unwrap_or_default();
    let mut mine: HashSet<String> = HashSet::new();
    let mut states: BTreeMap<String, usize> = BTreeMap::new();
    for g in &groups {
        for s in g["report"]["series"].as_array().into_iter().flatten() {
            mine.insert(s["series_id"].as_str().unwrap_or_default().to_string());
            *states
                .entry(s["state"].as_str().unwrap_or("unknown").to_string())
                .or_default() += 1;
        }
    }
    for a in alerts {
        if !a.status.is_active() || !a.series_ids.iter().any(|s| mine.contains(s)) {
            continue;
        }
        let fails = match a.kind {
            AlertKind::Tradeoff => det.tradeoff_fails,
            AlertKind::Regression => {
                det.fail_metrics.contains(&a.metric)
                    && (det.fail_severity == "warn" || a.severity.as_deref() == Some("fail"))
            }
            _ => false,
        };
        reasons.push(Reason {
            level: if fails { "fail" } else { "warn" }.into(),
            code: a.kind.as_str().into(),
            message: a.summary.clone(),
            alert_id: Some(a.id),
            cell: Some(a.cell.clone()),
        });
    }
    for g in &groups {
        let cell = g["cell"].as_str().map(str::to_string);
        if let Some(why) = g["invalid_runs"].as_array().filter(|v| !v.is_empty()) {
            for w in why {
                reasons.push(Reason {
                    level: "warn".into(),
                    code: "invalid_run".into(),
                    message: w.as_str().unwrap_or_default().to_string(),
                    alert_id: None,
                    cell: cell.clone(),
                });
            }
        }
        let insufficient: Vec<&Value> = g["report"]["series"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["state"] == "insufficient_data")
            .collect();
        if let Some(first) = insufficient.first() {
            reasons.push(Reason {
                level: "warn".into(),
                code: "insufficient_data".into(),
                message: format!(
                    "insufficient data: {} series not tested ({})",
                    insufficient.len(),
                    first["reason"].as_str().unwrap_or("too little history")
                ),
                alert_id: None,
                cell: cell.clone(),
            });
        }
        for f in g["effect_only"].as_array().into_iter().flatten() {
            if f["kind"] == "improvement" {
                continue;
            }
            reasons.push(Reason {
                level: "warn".into(),
                code: "effect_only".into(),
                message: format!(
                    "effect only, not tested (insufficient data): {}",
                    f["summary"].as_str().unwrap_or_default()
                ),
                alert_id: None,
                cell: cell.clone(),
            });
        }
    }
    if doc.is_null() {
        reasons.push(Reason {
            level: "warn".into(),
            code: "not_analyzed".into(),
            message: "this run has not been analyzed".into(),
            alert_id: None,
            cell: None,
        });
    }
    let verdict = if reasons.iter().any(|r| r.level == "fail") {
        "fail"
    } else if reasons.is_empty() {
        "pass"
    } else {
        "warn"
    };
    Verdict {
        verdict: verdict.into(),
        reasons,
        run_id: run.summary.id,
        commit: run.summary.commit_sha.clone(),
        settings_version,
        series_states: states,
    }
}

// ---- one group ------------------------------------------------------------------------------

/// What every group of one commit's analysis shares.
struct Context<'a> {
    default_branch: &'a str,
    branch: &'a str,
    commit: &'a str,
    merge_base: Option<&'a str>,
    det: &'a DetectionSettings,
}

/// The analysis of one group at the candidate commit.
struct GroupAnalysis {
    input: GroupInput,
    report: GroupReport,
    /// Effect-only findings when the group has insufficient data.
    effect_only: Vec<Finding>,
    /// Why candidate runs are not valid, per run.
    invalid_runs: Vec<String>,
    /// The baseline rule used.
    baseline_rule: String,
    /// Default-branch history through the candidate, for the change-point scan.
    scan_input: GroupInput,
}

impl Context<'_> {
    fn invalid(&self, p: &HistoryPoint) -> Option<String> {
        if p.excluded {
            return Some("excluded from baselines by a person".into());
        }
        self.det.invalid_run(p.completed, p.failed, p.num_prompts)
    }

    fn group(
        &self,
        series: &[GroupSeries],
        points: &[HistoryPoint],
        pinned: Option<&str>,
    ) -> GroupAnalysis {
        // Default-branch commits in order of first appearance.
        let mut order: Vec<&str> = Vec::new();
        for p in points.iter().filter(|p| p.branch == self.default_branch) {
            if !order.contains(&p.commit_sha.as_str()) {
                order.push(&p.commit_sha);
            }
        }
        let (base_commits, rule): (Vec<&str>, String) = if let Some(pin) = pinned {
            (vec![pin], format!("pinned: commit {pin}"))
        } else if self.branch == self.default_branch {
            let end = order
                .iter()
                .position(|c| *c == self.commit)
                .unwrap_or(order.len());
            (
                order[..end].to_vec(),
                format!(
                    "the default branch `{}` before this commit",
                    self.default_branch
                ),
            )
        } else if let Some(mb) = self.merge_base.filter(|mb| order.contains(mb)) {
            let end = order.iter().position(|c| *c == mb).unwrap_or(0) + 1;
            (
                order[..end].to_vec(),
                format!(
                    "the default branch `{}` up to the merge base {mb}",
                    self.default_branch
                ),
            )
        } else {
            (
                order
                    .iter()
                    .copied()
                    .filter(|c| *c != self.commit)
                    .collect(),
                format!("the default branch `{}`", self.default_branch),
            )
        };
        let run_value = |p: &HistoryPoint| RunValue {
            value: p.value,
            excluded: self.invalid(p).is_some(),
            samples: None,
        };
        let commit_runs = |s: &GroupSeries, commit: &str, branch: Option<&str>| {
            let runs: Vec<RunValue> = points
                .iter()
                .filter(|p| p.series_id == s.series_id && p.commit_sha == commit)
                .filter(|p| branch.is_none_or(|b| p.branch == b))
                .map(run_value)
                .collect();
            (!runs.is_empty()).then(|| CommitRuns {
                commit: commit.to_string(),
                runs,
            })
        };
        let base_branch = if pinned.is_some() {
            None
        } else {
            Some(self.default_branch)
        };
        let mut inputs = Vec::new();
        let mut scan = Vec::new();
        for s in series {
            let history: Vec<CommitRuns> = base_commits
                .iter()
                .filter(|c| **c != self.commit || self.branch != self.default_branch)
                .filter_map(|c| commit_runs(s, c, base_branch))
                .collect();
            let candidate = commit_runs(s, self.commit, Some(self.branch));
            let mut full: Vec<CommitRuns> = order
                .iter()
                .filter_map(|c| commit_runs(s, c, Some(self.default_branch)))
                .collect();
            if let Some(end) = full.iter().position(|c| c.commit == self.commit) {
                full.truncate(end + 1);
            }
            let input = SeriesInput {
                series_id: s.series_id.clone(),
                metric: s.metric.clone(),
                stat: s.stat.clone(),
                slo_profile: s.slo_profile.clone(),
                history,
                candidate,
                following: Vec::new(),
            };
            scan.push(SeriesInput {
                history: full,
                candidate: None,
                ..input.clone()
            });
            inputs.push(input);
        }
        let (series_key, cell_key) = series
            .first()
            .map(|s| (s.series_key_json.clone(), s.cell_key.clone()))
            .unwrap_or_default();
        let input = GroupInput {
            series_key: series_key.clone(),
            cell_key: cell_key.clone(),
            pinned_baseline: pinned.map(str::to_string),
            series: inputs,
        };
        let report = analyze(&input, &self.det.engine);
        let effect_only = if pinned.is_none()
            && report.series.iter().any(|s| {
                s.state == SeriesState::InsufficientData
                    && s.reason
                        .as_deref()
                        .is_some_and(|r| r.contains("baseline commit"))
            }) {
            effect_only_findings(&input, &self.det.engine)
        } else {
            Vec::new()
        };
        let mut invalid_runs = Vec::new();
        let mut seen = HashSet::new();
        for p in points
            .iter()
            .filter(|p| p.commit_sha == self.commit && p.branch == self.branch)
        {
            if let Some(why) = self.invalid(p) {
                if seen.insert(p.run_id) {
                    invalid_runs.push(format!(
                        "run {} is not valid ({why}): it is neither tested nor part of a baseline",
                        p.run_id
                    ));
                }
            }
        }
        GroupAnalysis {
            report,
            effect_only,
            invalid_runs,
            baseline_rule: rule,
            scan_input: GroupInput {
                series_key,
                cell_key,
                pinned_baseline: None,
                series: scan,
            },
            input,
        }
    }
}

/// The engine's findings when each series' baseline is reduced to one value (the mean of its
/// valid baseline runs) and each candidate to its runs: every comparison is `effect_only`
/// (one baseline value, no test), so this describes, never decides.
fn effect_only_findings(
    input: &GroupInput,
    settings: &benchtrail_core::regression::Settings,
) -> Vec<Finding> {
    let mut s = settings.clone();
    s.min_baseline_commits = 1;
    let series = input
        .series
        .iter()
        .filter_map(|si| {
            let valid: Vec<&CommitRuns> = si
                .history
                .iter()
                .filter(|c| c.runs.iter().any(|r| !r.excluded))
                .collect();
            let values: Vec<f64> = valid
                .iter()
                .flat_map(|c| c.runs.iter().filter(|r| !r.excluded).map(|r| r.value))
                .collect();
            if values.is_empty() {
                return None;
            }
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            let name = match valid.as_slice() {
                [one] => one.commit.clone(),
                many => format!("mean of {} commits", many.len()),
            };
            Some(SeriesInput {
                history: vec![CommitRuns::new(name, &[mean])],
                ..si.clone()
            })
        })
        .collect();
    let preview = GroupInput {
        pinned_baseline: None,
        series,
        ..input.clone()
    };
    analyze(&preview, &s)
        .findings
        .into_iter()
        .filter(|f| f.kind != FindingKind::Missing)
        .collect()
}

fn kind_of(k: FindingKind) -> AlertKind {
    match k {
        FindingKind::Regression => AlertKind::Regression,
        FindingKind::Improvement => AlertKind::Improvement,
        FindingKind::Tradeoff => AlertKind::Tradeoff,
        FindingKind::ChangePoint => AlertKind::ChangePoint,
        FindingKind::Missing => AlertKind::Missing,
    }
}

fn severity_text(s: Option<Severity>) -> Option<String> {
    s.map(|s| match s {
        Severity::Warn => "warn".to_string(),
        Severity::Fail => "fail".to_string(),
    })
}

fn new_alert(
    f: &Finding,
    key: &(String, String),
    branch: &str,
    commit: &str,
    ga: &GroupAnalysis,
    version: i64,
    runs: &[StoredRun],
) -> NewAlert {
    let kind = kind_of(f.kind);
    let improvement = kind == AlertKind::Improvement;
    // The run that holds the headline series (the latest upload of the commit that does).
    let run_id = runs.last().map(|r| r.summary.id);
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

/// The analysis document of one run: its groups with their inputs' shape, reports and
/// effect-only findings.
fn run_document(
    run: &StoredRun,
    keys: &[(String, String)],
    analyzed: &HashMap<(String, String), GroupAnalysis>,
    version: i64,
    ctx: &Context<'_>,
) -> Value {
    let mut seen = HashSet::new();
    let groups: Vec<Value> = keys
        .iter()
        .filter(|k| seen.insert((*k).clone()))
        .filter_map(|k| analyzed.get(k).map(|ga| (k, ga)))
        .map(|(k, ga)| {
            let base: Vec<&str> = ga
                .input
                .series
                .iter()
                .flat_map(|s| s.history.iter().map(|c| c.commit.as_str()))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            json!({
                "series_key": serde_json::from_str::<Value>(&k.0).unwrap_or(Value::Null),
                "cell": k.1,
                "baseline_rule": ga.baseline_rule,
                "pinned_baseline": ga.input.pinned_baseline,
                "history_commits": base,
                "invalid_runs": ga.invalid_runs,
                "report": ga.report,
                "effect_only": ga.effect_only,
            })
        })
        .collect();
    json!({
        "run_id": run.summary.id,
        "commit": ctx.commit,
        "branch": ctx.branch,
        "default_branch": ctx.default_branch,
        "merge_base": ctx.merge_base,
        "settings_version": version,
        "groups": groups,
    })
}

/// Resolves active alerts of earlier default-branch commits whose series this commit measured
/// and which this commit no longer shows against the alert's own baseline commits.
async fn resolve_returned(
    store: &Store,
    project: &Project,
    ctx: &Context<'_>,
    groups: &BTreeMap<(String, String), Vec<GroupSeries>>,
    analyzed: &HashMap<(String, String), GroupAnalysis>,
) -> Result<(), StorageError> {
    let active = store
        .active_alerts(
            project.id,
            ctx.default_branch,
            &[
                AlertKind::Regression,
                AlertKind::Tradeoff,
                AlertKind::Missing,
            ],
        )
        .await?;
    for alert in active.iter().filter(|a| a.commit != ctx.commit) {
        let Some((key, _)) = groups
            .iter()
            .find(|(_, s)| s.iter().any(|g| g.series_id == alert.series_id))
        else {
            continue;
        };
        let Some(ga) = analyzed.get(key) else {
            continue;
        };
        // Only alerts of commits before this one (in its baseline history).
        let earlier = ga.scan_input.series.iter().any(|s| {
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
                let full = ga
                    .scan_input
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
                report.findings.iter().any(|f| {
                    kind_of(f.kind) == kind && f.series_ids.first() == Some(&alert.series_id)
                })
            }
        };
        if !still {
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
    Ok(())
}

/// The background change-point scan of the default-branch histories of `groups`.
async fn change_point_scan(
    store: &Store,
    project_id: i64,
    branch: &str,
    groups: Vec<GroupInput>,
    det: DetectionSettings,
    version: i64,
) -> Result<(), StorageError> {
    let settings = det.engine.clone();
    let found = tokio::task::spawn_blocking(move || {
        let mut out = Vec::new();
        for g in &groups {
            for s in &g.series {
                for f in change_point_findings(s, &settings) {
                    out.push((g.series_key.clone(), g.cell_key.clone(), f));
                }
            }
        }
        out
    })
    .await
    .map_err(|e| StorageError::Corrupt(format!("change-point scan panicked: {e}")))?;
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
            .save_commit_alerts(project_id, branch, &commit, &[], &[alert], SUPERSEDED)
            .await?;
    }
    Ok(())
}
