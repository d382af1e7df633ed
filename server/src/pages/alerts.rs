//! Alerts on pages: the project's alerts page (`/projects/{project}/alerts`, by status), the
//! alerts and verdict of a run on its page, and the markers of a series' chart.
//!
//! Everything is read from storage (the alerts the analysis stored, the run's stored
//! analysis); nothing is recomputed here. The verdict is the one `GET
//! /api/v1/runs/{id}/verdict` answers, from the same stored analysis and current alerts (so a
//! dismissal changes it).

use super::format::{self, commit_url, display_time, short_sha};
use super::session::{SiteHeader, Visitor};
use super::triage::{ReturnTo, TriageForms};
use super::views::ProjectView;
use super::{visible_project, PageError, PageResult};
use crate::app::AppState;
use crate::storage::{
    Alert, AlertFilter, AlertKind, AlertStatus, Project, SeriesInfo, Store, StoredRun,
};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::Html;
use benchtrail_core::report::RunAnalysis;
use serde::Deserialize;
use std::collections::HashMap;

/// Alerts listed per status on the alerts page (newest first); older ones stay reachable from
/// the API (`GET /api/v1/projects/{p}/alerts?status=...`).
pub const ALERTS_PER_STATUS: i64 = 200;

/// A series an alert involves, for links.
#[derive(Debug, Clone)]
pub struct AlertSeriesLink {
    /// Series id.
    pub series_id: String,
    /// `Output token throughput value`, `Time to first token p50 (SLO profile tool)`, or the
    /// id when the series is unknown.
    pub label: String,
}

/// An alert as shown in lists.
#[derive(Debug, Clone)]
pub struct AlertView {
    /// Id.
    pub id: String,
    /// `regression`, `improvement`, `tradeoff`, `change_point`, `missing`.
    pub kind: String,
    /// `regression`, `improvement`, `trade-off`, `change point`, `missing`.
    pub kind_label: String,
    /// `open`, ...
    pub status: String,
    /// `warn`, `fail` or empty.
    pub severity: String,
    /// The one-sentence summary.
    pub summary: String,
    /// Headline series.
    pub series: AlertSeriesLink,
    /// The other series involved (a trade-off's parts).
    pub parts: Vec<AlertSeriesLink>,
    /// Cell key.
    pub cell: String,
    /// Branch.
    pub branch: String,
    /// Commit SHA.
    pub commit_sha: String,
    /// Short SHA.
    pub short_sha: String,
    /// Commit link.
    pub commit_url: Option<String>,
    /// The run that produced it.
    pub run_id: Option<String>,
    /// `+12.3 %` or empty.
    pub delta: String,
    /// The triage reason, or benchtrail's when resolved.
    pub reason: String,
    /// Short SHA of the commit that resolved it, or empty.
    pub resolved_by: String,
    /// Who triaged it last (`admin`, a token's label or prefix), or empty.
    pub triaged_by: String,
    /// When, for reading, or empty.
    pub triaged_at: String,
    /// When, as RFC 3339 (for `<time datetime>`), or empty.
    pub triaged_at_machine: String,
    /// Creation time for reading.
    pub created_at: String,
    /// The per-request shifts behind the finding, one sentence each (its own, or each side's
    /// of a trade-off): descriptions, never what opened the alert.
    pub per_request: Vec<String>,
}

/// The per-request shift sentences of a stored finding: its own and its trade-off parts', each
/// metric once.
fn per_request_sentences(finding: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let parts = finding["parts"].as_array().into_iter().flatten();
    for shift in std::iter::once(finding)
        .chain(parts)
        .map(|f| &f["per_request"])
    {
        if let Some(s) = shift["summary"].as_str().filter(|s| !s.is_empty()) {
            if !out.iter().any(|o| o == s) {
                out.push(s.to_string());
            }
        }
    }
    out
}

/// How a kind reads.
fn kind_label(kind: AlertKind) -> &'static str {
    match kind {
        AlertKind::Regression => "regression",
        AlertKind::Improvement => "improvement",
        AlertKind::Tradeoff => "trade-off",
        AlertKind::ChangePoint => "change point",
        AlertKind::Missing => "missing",
    }
}

/// `TTFT p99`, with ` (SLO profile chat)` for a goodput series of a profile.
fn series_label(s: &SeriesInfo) -> String {
    let mut l = format!("{} {}", format::metric_label(&s.metric), s.stat);
    if let Some(p) = &s.slo_profile {
        l.push_str(&format!(" (SLO profile {p})"));
    }
    l
}

/// Labels of series looked up once per page.
#[derive(Default)]
pub struct SeriesLabels(HashMap<String, String>);

impl SeriesLabels {
    /// Looks up, in one query, the labels of every series `alerts` name that are not known
    /// yet; a series that no longer exists is labelled by its id.
    pub async fn load(&mut self, store: &Store, alerts: &[Alert]) -> Result<(), PageError> {
        let mut wanted: Vec<&str> = alerts
            .iter()
            .flat_map(|a| a.series_ids.iter().chain([&a.series_id]))
            .map(String::as_str)
            .filter(|id| !self.0.contains_key(*id))
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        if wanted.is_empty() {
            return Ok(());
        }
        let found = store.series_by_ids(&wanted).await?;
        for id in wanted {
            let label = found.get(id).map_or_else(|| id.to_string(), series_label);
            self.0.insert(id.to_string(), label);
        }
        Ok(())
    }

    /// The link of `series_id`, labelled as [`Self::load`] found it (by its id otherwise).
    fn link(&self, series_id: &str) -> AlertSeriesLink {
        AlertSeriesLink {
            series_id: series_id.to_string(),
            label: self
                .0
                .get(series_id)
                .cloned()
                .unwrap_or_else(|| series_id.to_string()),
        }
    }
}

impl AlertView {
    /// The view of a stored alert (series labels from `labels`, [`SeriesLabels::load`]ed for
    /// it).
    pub fn new(a: &Alert, project: &Project, labels: &SeriesLabels) -> AlertView {
        let parts = a
            .series_ids
            .iter()
            .filter(|id| **id != a.series_id)
            .map(|id| labels.link(id))
            .collect();
        AlertView {
            id: a.id.to_string(),
            kind: a.kind.as_str().to_string(),
            kind_label: kind_label(a.kind).to_string(),
            status: a.status.as_str().to_string(),
            severity: a.severity.clone().unwrap_or_default(),
            summary: a.summary.clone(),
            series: labels.link(&a.series_id),
            parts,
            cell: a.cell.clone(),
            branch: a.branch.clone(),
            short_sha: short_sha(&a.commit),
            commit_url: commit_url(project.repository_url.as_deref(), &a.commit),
            commit_sha: a.commit.clone(),
            run_id: a.run_id.map(|r| r.to_string()),
            delta: a
                .delta_pct
                .filter(|d| d.is_finite())
                .map(|d| format!("{d:+.1} %"))
                .unwrap_or_default(),
            reason: a.reason.clone().unwrap_or_default(),
            resolved_by: a.resolved_by.as_deref().map(short_sha).unwrap_or_default(),
            triaged_by: a.triaged_by.clone().unwrap_or_default(),
            triaged_at: a.triaged_at.as_ref().map(display_time).unwrap_or_default(),
            triaged_at_machine: a
                .triaged_at
                .as_ref()
                .map(format::machine_time)
                .unwrap_or_default(),
            created_at: display_time(&a.created_at),
            per_request: per_request_sentences(&a.finding),
        }
    }
}

/// Views of `alerts`, in order.
pub async fn alert_views(
    alerts: &[Alert],
    project: &Project,
    store: &Store,
) -> Result<Vec<AlertView>, PageError> {
    let mut labels = SeriesLabels::default();
    labels.load(store, alerts).await?;
    Ok(alerts
        .iter()
        .map(|a| AlertView::new(a, project, &labels))
        .collect())
}

/// The alerts of one status on the alerts page.
#[derive(Debug, Clone)]
pub struct StatusSection {
    /// `open`, ...
    pub status: String,
    /// Heading.
    pub title: String,
    /// What the status means, one sentence.
    pub meaning: String,
    /// Its alerts, newest first.
    pub alerts: Vec<AlertView>,
    /// The same alerts as findings across cells (by [`Alert::group`]), in the order of their
    /// newest alert.
    pub groups: Vec<AlertGroupView>,
    /// More exist than are listed.
    pub more: bool,
}

/// One finding across cells on the alerts page: the alerts of one [`Alert::group`].
#[derive(Debug, Clone)]
pub struct AlertGroupView {
    /// The group key.
    pub group: String,
    /// `regression`, `tradeoff`, ...
    pub kind: String,
    /// `trade-off of output throughput at abc123def456 (main) in 3 cells`.
    pub title: String,
    /// Its cells in natural order: (short label, alert id).
    pub cells: Vec<(String, String)>,
}

/// The groups of `alerts` (newest first), each with its cells labelled by what differs.
pub(super) fn alert_groups(alerts: &[Alert]) -> Vec<AlertGroupView> {
    use benchtrail_core::report::grouped::{cell_label, natural_key};
    let mut order: Vec<&str> = Vec::new();
    for a in alerts {
        if !order.contains(&a.group.as_str()) {
            order.push(&a.group);
        }
    }
    order
        .into_iter()
        .map(|g| {
            let mut members: Vec<&Alert> = alerts.iter().filter(|a| a.group == g).collect();
            members.sort_by_cached_key(|a| natural_key(&a.cell));
            let first = members[0];
            let all: Vec<&str> = members.iter().map(|a| a.cell.as_str()).collect();
            AlertGroupView {
                group: g.to_string(),
                kind: first.kind.as_str().to_string(),
                title: format!(
                    "{} of {} at {} ({}) in {} cell{}",
                    kind_label(first.kind),
                    benchtrail_core::regression::describe_series(
                        &first.metric,
                        &first.stat,
                        first.slo_profile.as_deref()
                    ),
                    short_sha(&first.commit),
                    first.branch,
                    members.len(),
                    if members.len() == 1 { "" } else { "s" }
                ),
                cells: members
                    .iter()
                    .map(|a| (cell_label(&a.cell, &all), a.id.to_string()))
                    .collect(),
            }
        })
        .collect()
}

/// `/projects/{project}/alerts`.
#[derive(Template)]
#[template(path = "alerts.html")]
pub struct AlertsPage {
    /// The project.
    pub project: ProjectView,
    /// The project's default branch (the base branch of its pull requests).
    pub base_branch: String,
    /// The base branch's alerts, one section per status: open, acknowledged, dismissed,
    /// resolved (only the status filtered on, when one is); empty when the branch filter names
    /// another branch.
    pub sections: Vec<StatusSection>,
    /// The alerts of every other branch (pull requests), one section per branch, the branch
    /// with the newest alert first.
    pub other_branches: Vec<BranchSection>,
    /// More alerts of other branches exist than are listed.
    pub other_more: bool,
    /// The filters as given (kept in the form).
    pub filters: AlertFilters,
    /// Status options of the form: (value, label, selected).
    pub status_options: Vec<(String, String, bool)>,
    /// Kind options of the form: (value, label, selected).
    pub kind_options: Vec<(String, String, bool)>,
    /// Alerts listed, over every section.
    pub shown: usize,
    /// The triage forms, for a visitor with `write` on the project.
    pub triage: Option<TriageForms>,
    /// The site header (who is signed in).
    pub header: SiteHeader,
}

/// The alerts of one branch other than the base branch.
#[derive(Debug, Clone)]
pub struct BranchSection {
    /// The branch.
    pub branch: String,
    /// Anchor id (`branch-0`).
    pub anchor: String,
    /// Its alerts as findings across cells.
    pub groups: Vec<AlertGroupView>,
    /// Its alerts by status (open first), newest first within one (each card says its
    /// status).
    pub alerts: Vec<AlertView>,
}

/// The alerts page's filters (`?status=&kind=&metric=&cell=&branch=&commit=`), as given;
/// empty means any.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct AlertFilters {
    /// `open`, `acknowledged`, `dismissed` or `resolved`.
    #[serde(default)]
    pub status: String,
    /// `regression`, `improvement`, `tradeoff`, `change_point` or `missing`.
    #[serde(default)]
    pub kind: String,
    /// Headline metric (`ttft`, `output_throughput`, ...).
    #[serde(default)]
    pub metric: String,
    /// Cell key, exactly.
    #[serde(default)]
    pub cell: String,
    /// Branch.
    #[serde(default)]
    pub branch: String,
    /// Candidate commit (full SHA).
    #[serde(default)]
    pub commit: String,
}

impl AlertFilters {
    /// Whether any filter is set.
    pub fn any(&self) -> bool {
        [
            &self.status,
            &self.kind,
            &self.metric,
            &self.cell,
            &self.branch,
            &self.commit,
        ]
        .iter()
        .any(|f| !f.trim().is_empty())
    }
}

/// Heading and meaning of a status.
fn status_text(s: AlertStatus) -> (&'static str, &'static str) {
    match s {
        AlertStatus::Open => ("Open", "New findings nobody has looked at yet."),
        AlertStatus::Acknowledged => ("Acknowledged", "Someone is looking into these."),
        AlertStatus::Dismissed => ("Dismissed", "Someone decided these are not a problem."),
        AlertStatus::Resolved => (
            "Resolved",
            "benchtrail saw these go away (a later commit returned to the baseline, or the \
             finding disappeared when the analysis was recomputed); improvements are stored \
             resolved, as they need no triage.",
        ),
    }
}

/// Every kind, in the form's order.
const KINDS: [AlertKind; 5] = [
    AlertKind::Regression,
    AlertKind::Tradeoff,
    AlertKind::Improvement,
    AlertKind::ChangePoint,
    AlertKind::Missing,
];

/// `GET /projects/{project}/alerts?status=&kind=&metric=&cell=&branch=&commit=`: the
/// project's alerts, the base branch's by status and every other branch's (pull requests)
/// apart, filtered by what the address gives (a GET form on the page).
pub(super) async fn alerts_page(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    Query(filters): Query<AlertFilters>,
) -> PageResult {
    let project = visible_project(&state, &visitor, &slug).await?;
    let given = |v: &str| Some(v.trim().to_string()).filter(|v| !v.is_empty());
    let status = match given(&filters.status) {
        Some(s) => Some(AlertStatus::parse(&s).ok_or_else(|| {
            PageError::BadRequest(format!(
                "Unknown status “{s}”: open, acknowledged, dismissed or resolved."
            ))
        })?),
        None => None,
    };
    let kind = match given(&filters.kind) {
        Some(k) => Some(AlertKind::parse(&k).ok_or_else(|| {
            PageError::BadRequest(format!(
                "Unknown kind “{k}”: regression, improvement, tradeoff, change_point or missing."
            ))
        })?),
        None => None,
    };
    let branch = given(&filters.branch);
    let base = project.default_branch.clone();
    let filter = AlertFilter {
        status,
        kind,
        metric: given(&filters.metric),
        cell: given(&filters.cell),
        commit: given(&filters.commit),
        ..Default::default()
    };
    let mut labels = SeriesLabels::default();
    let mut sections = Vec::new();
    if branch.as_ref().is_none_or(|b| *b == base) {
        for s in AlertStatus::ALL
            .into_iter()
            .filter(|s| status.is_none_or(|f| f == *s))
        {
            let f = AlertFilter {
                status: Some(s),
                branch: Some(base.clone()),
                ..filter.clone()
            };
            let page = state
                .store
                .list_alerts(project.id, &f, None, ALERTS_PER_STATUS)
                .await?;
            labels.load(&state.store, &page.items).await?;
            let alerts = page
                .items
                .iter()
                .map(|a| AlertView::new(a, &project, &labels))
                .collect();
            let (title, meaning) = status_text(s);
            sections.push(StatusSection {
                status: s.as_str().to_string(),
                title: title.to_string(),
                meaning: meaning.to_string(),
                groups: alert_groups(&page.items),
                alerts,
                more: page.next_cursor.is_some(),
            });
        }
    }
    let mut other_branches: Vec<BranchSection> = Vec::new();
    let mut other_more = false;
    if branch.as_ref() != Some(&base) {
        let f = AlertFilter {
            branch: branch.clone(),
            not_branch: Some(base.clone()),
            ..filter.clone()
        };
        let page = state
            .store
            .list_alerts(project.id, &f, None, ALERTS_PER_STATUS)
            .await?;
        other_more = page.next_cursor.is_some();
        let mut order: Vec<&str> = Vec::new();
        for a in &page.items {
            if !order.contains(&a.branch.as_str()) {
                order.push(&a.branch);
            }
        }
        for (i, b) in order.into_iter().enumerate() {
            let mut items: Vec<Alert> = page
                .items
                .iter()
                .filter(|a| a.branch == b)
                .cloned()
                .collect();
            // What needs a look first: open, acknowledged, dismissed, resolved (newest first
            // within each).
            items.sort_by_key(|a| AlertStatus::ALL.iter().position(|s| *s == a.status));
            labels.load(&state.store, &items).await?;
            let alerts = items
                .iter()
                .map(|a| AlertView::new(a, &project, &labels))
                .collect();
            other_branches.push(BranchSection {
                branch: b.to_string(),
                anchor: format!("branch-{i}"),
                groups: alert_groups(&items),
                alerts,
            });
        }
    }
    let option = |value: &str, label: &str, chosen: &str| {
        (value.to_string(), label.to_string(), value == chosen)
    };
    let page = AlertsPage {
        triage: TriageForms::for_visitor(&visitor, &project, ReturnTo::Alerts),
        project: ProjectView::new(&project),
        base_branch: base,
        shown: sections.iter().map(|s| s.alerts.len()).sum::<usize>()
            + other_branches.iter().map(|b| b.alerts.len()).sum::<usize>(),
        sections,
        other_branches,
        other_more,
        status_options: AlertStatus::ALL
            .iter()
            .map(|s| option(s.as_str(), status_text(*s).0, filters.status.trim()))
            .collect(),
        kind_options: KINDS
            .iter()
            .map(|k| option(k.as_str(), kind_label(*k), filters.kind.trim()))
            .collect(),
        filters,
        header: visitor.header(),
    };
    Ok(Html(page.render()?))
}

/// Who acknowledged a failing run's alerts, and when, as its page shows it (`fail ·
/// acknowledged by ci-bot 2026-01-02 03:04 UTC`): when the verdict is `fail` and every alert
/// of the run with severity `fail` that still counts (open or acknowledged) is acknowledged;
/// the newest acknowledgement is named.
pub fn acknowledgement(
    verdict: Option<&VerdictView>,
    alerts: &[Alert],
) -> Option<(String, String)> {
    acknowledged_fail(&verdict?.verdict, alerts)
}

/// [`acknowledgement`] of a verdict level (`pass`, `warn`, `incomplete`, `fail`, `pending`):
/// who acknowledged the run's failing alerts and when, only for `fail`.
pub fn acknowledged_fail(verdict: &str, alerts: &[Alert]) -> Option<(String, String)> {
    if verdict != "fail" {
        return None;
    }
    let failing: Vec<&Alert> = alerts
        .iter()
        .filter(|a| a.severity.as_deref() == Some("fail"))
        .filter(|a| matches!(a.status, AlertStatus::Open | AlertStatus::Acknowledged))
        .collect();
    if failing.is_empty()
        || failing
            .iter()
            .any(|a| a.status != AlertStatus::Acknowledged)
    {
        return None;
    }
    let newest = failing.iter().max_by_key(|a| a.triaged_at)?;
    Some((
        newest.triaged_by.clone().unwrap_or_default(),
        newest
            .triaged_at
            .as_ref()
            .map(display_time)
            .unwrap_or_default(),
    ))
}

/// One reason of a verdict.
#[derive(Debug, Clone)]
pub struct ReasonView {
    /// `fail` or `warn`.
    pub level: String,
    /// `regression`, `tradeoff`, `insufficient_data`, ...
    pub code: String,
    /// One sentence.
    pub message: String,
    /// The cell it is about, or empty.
    pub cell: String,
}

/// A run's verdict as shown on its page.
#[derive(Debug, Clone)]
pub struct VerdictView {
    /// `pass`, `warn`, `incomplete` or `fail`.
    pub verdict: String,
    /// Why; empty for `pass`.
    pub reasons: Vec<ReasonView>,
    /// Fewer runs of the commit than expected.
    pub provisional: bool,
    /// `1 of 3 repeats`.
    pub repeats_text: String,
    /// Missing cells: (cell key, short baseline commit).
    pub missing_cells: Vec<(String, String)>,
    /// New cells' keys.
    pub new_cells: Vec<String>,
    /// Not measured: (cell key, its series joined).
    pub not_measured: Vec<(String, String)>,
    /// The findings grouped across cells (`benchtrail_core::report::grouped`): (kind, sentence).
    pub findings: Vec<(String, String)>,
    /// Changes of at least the minimum effect the test could not decide: (cell key, sentence
    /// with the detectable effect and the repeats that would decide it).
    pub undecided: Vec<(String, String)>,
}

/// The run's verdict, as `GET /api/v1/runs/{id}/verdict` computes it from storage: its
/// stored `analysis` (read by the caller) and the current alerts of the run's commit. `None`
/// when the run was never analyzed.
pub async fn run_verdict(
    store: &Store,
    project: &Project,
    run: &StoredRun,
    analysis: Option<&RunAnalysis>,
    alerts: &[Alert],
) -> Result<Option<VerdictView>, PageError> {
    let Some(a) = analysis else {
        return Ok(None);
    };
    let settings = store.settings(project).await?;
    let v = crate::analysis::verdict_of(
        run.summary.id,
        &run.summary.commit_sha,
        Some(a),
        alerts,
        &settings.settings.detection,
    );
    Ok(Some(VerdictView {
        findings: benchtrail_core::report::grouped::grouped_findings(a)
            .into_iter()
            .map(|g| (g.kind.as_str().to_string(), g.summary))
            .collect(),
        undecided: a
            .groups
            .iter()
            .flat_map(|g| {
                g.report
                    .undecided
                    .iter()
                    .map(move |u| (g.cell.clone(), u.summary.clone()))
            })
            .collect(),
        verdict: v.verdict.as_str().to_string(),
        provisional: v.provisional,
        repeats_text: v.repeats.as_ref().map_or(String::new(), |r| {
            format!("{} of {} repeats", r.received, r.expected)
        }),
        missing_cells: v
            .missing_cells
            .iter()
            .map(|g| {
                let c = g.baseline_commit.as_deref().unwrap_or_default();
                (g.cell.clone(), c[..c.len().min(12)].to_string())
            })
            .collect(),
        new_cells: v.new_cells.iter().map(|g| g.cell.clone()).collect(),
        not_measured: v
            .not_measured
            .iter()
            .map(|n| (n.cell.clone(), n.series.join(", ")))
            .collect(),
        reasons: v
            .reasons
            .into_iter()
            .map(|r| ReasonView {
                level: r.level.as_str().to_string(),
                code: r.code.as_str().to_string(),
                message: r.message,
                cell: r.cell.unwrap_or_default(),
            })
            .collect(),
    }))
}
