//! The series page, `/projects/{project}/series/{series_id}?branch=B`: one series on one
//! branch, its chart (drawn by `web/static/series.js` from the series API) and its points
//! table. Besides the chart the page links every way a reader switches what is shown: the
//! metric's other statistics and SLO profiles, the other metrics of the same configuration
//! and cell, the same statistic in the configuration's other cells; and on a branch other
//! than the default one, the default branch's points as context with the branch's merge base
//! (the chart draws both; the page says where the branch forked).

use super::format::{self, short_sha};
use super::session::Visitor;
use super::{alerts, baselines, profile_thresholds, visible_project, PageError, PageResult};
use super::{BranchContext, NeighbourLink, SeriesLinks, SeriesPage, StatLink};
use crate::app::AppState;
use crate::storage::{Project, SeriesInfo, SeriesPoint};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::Html;
use benchtrail_core::report::grouped::{cell_label, natural_key};
use serde::Deserialize;

/// Query of the series page.
#[derive(Debug, Deserialize)]
pub(super) struct SeriesQuery {
    /// Branch to plot; the project's default branch when absent or empty.
    branch: Option<String>,
}

/// `GET /projects/{project}/series/{series_id}?branch=B`: chart and table of one series.
pub(super) async fn series_page(
    State(state): State<AppState>,
    visitor: Visitor,
    Path((slug, series_id)): Path<(String, String)>,
    Query(query): Query<SeriesQuery>,
) -> PageResult {
    // The series is looked up beside the project (at once: round trips on Postgres), and
    // shown only once the visitor may see the project, and only if it is that project's.
    let (project, series) = tokio::try_join!(visible_project(&state, &visitor, &slug), async {
        Ok(state.store.series(&series_id).await?)
    })?;
    let not_found = || {
        PageError::NotFound(format!(
            "There is no series “{series_id}” in project “{slug}”."
        ))
    };
    let series = series
        .filter(|s| s.project == project.slug)
        .ok_or_else(not_found)?;
    let branch = query
        .branch
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| project.default_branch.clone());
    let (points, neighbours) = tokio::try_join!(
        state.store.series_points(&series.series_id, &branch),
        state.store.series_neighbours(&series.series_id)
    )?;
    let same_place: Vec<_> = neighbours
        .same_cell
        .iter()
        .filter(|s| s.metric == series.metric)
        .collect();
    // Statistics under the same SLO profile; the same statistic under the other profiles
    // (goodput under different profiles are different series).
    // (Another series of the same profile and statistic — the tool's goodput under other
    // thresholds — is reached through the profile links instead.)
    let mut stat_links: Vec<_> = same_place
        .iter()
        .filter(|s| s.slo_profile == series.slo_profile)
        .filter(|s| s.series_id == series.series_id || s.stat != series.stat)
        .map(|s| StatLink {
            current: s.series_id == series.series_id,
            stat: s.stat.to_string(),
            series_id: s.series_id.clone(),
        })
        .collect();
    stat_links.sort_by_key(|s| format::stat_order(&s.stat));
    let mut profile_links: Vec<_> = same_place
        .iter()
        .filter(|s| s.stat == series.stat && s.slo_profile.is_some())
        .map(|s| StatLink {
            current: s.series_id == series.series_id,
            stat: s.slo_profile.clone().unwrap_or_default(),
            series_id: s.series_id.clone(),
        })
        .collect();
    profile_links.sort_by_cached_key(|s| format::profile_order(Some(&s.stat)));
    // The tool's own goodput has one series per set of thresholds: name each by them.
    let tool = benchtrail_core::slo::TOOL_PROFILE;
    let mut tool_text = None;
    if series.slo_profile.as_deref() == Some(tool) {
        tool_text = tool_thresholds(&state, &project, &series.series_id).await?;
    }
    if profile_links.iter().filter(|l| l.stat == tool).count() > 1 {
        for l in profile_links.iter_mut().filter(|l| l.stat == tool) {
            let text = tool_thresholds(&state, &project, &l.series_id).await?;
            let text = text.unwrap_or_else(|| "thresholds unknown".into());
            let short = text
                .strip_prefix("the tool's own: ")
                .unwrap_or("thresholds unknown");
            l.stat = format!("tool ({short})");
        }
    }
    let metric_links = metric_links(&series, &neighbours.same_cell);
    let cell_links = cell_links(&series, &neighbours.other_cells);
    let context = branch_context(&state, &project, &branch, &points).await?;
    let settings = state.store.settings(&project).await?.settings;
    let profiles = settings.slo_profiles;
    let mut page = SeriesPage::new(
        &project,
        &series,
        branch,
        &points,
        SeriesLinks {
            siblings: stat_links,
            other_profiles: profile_links,
            metrics: metric_links,
            cells: cell_links,
        },
        &profiles,
    );
    page.baseline_window = settings.detection.engine.baseline_window;
    baselines::mark_pinned(&state.store, &project, &series.series_id, &mut page.points).await?;
    if let Some(text) = tool_text {
        page.series.profile_thresholds = text;
    }
    page.context = context;
    page.header = visitor.header();
    // Alerts of this series on the branch shown, each at the x of its commit when plotted.
    let series_alerts: Vec<_> = state
        .store
        .series_alerts(&series.series_id)
        .await?
        .into_iter()
        .filter(|a| a.branch == page.branch)
        .collect();
    page.alerts = alerts::alert_views(&series_alerts, &project, &state.store)
        .await?
        .into_iter()
        .map(|a| {
            let x = page
                .points
                .iter()
                .find(|p| p.commit_sha == a.commit_sha)
                .map(|p| p.x.to_string())
                .unwrap_or_default();
            (x, a)
        })
        .collect();
    Ok(Html(page.render()?))
}

/// The thresholds a series of the tool's own goodput was computed under, as text (from the
/// facts of a result holding it): one profile name (`tool`) covers one series per set of
/// thresholds. `None` when the series has no stored value.
pub(super) async fn tool_thresholds(
    state: &AppState,
    project: &Project,
    series_id: &str,
) -> Result<Option<String>, PageError> {
    let history = state
        .store
        .series_history(project.id, &[series_id.to_string()])
        .await?;
    let Some(point) = history.first() else {
        return Ok(None);
    };
    let Some(run) = state.store.run(point.run_id).await? else {
        return Ok(None);
    };
    Ok(run
        .results
        .iter()
        .find(|r| r.metrics.iter().any(|m| m.series_id == series_id))
        .map(|r| {
            profile_thresholds(
                benchtrail_core::slo::TOOL_PROFILE,
                &[],
                Some(&r.facts),
                Some(&r.warnings),
            )
        }))
}

/// The metrics a reader switches between most, in the order the metric links show them:
/// latencies in the order a request meets them, then throughputs and goodput. The rest
/// (counts, durations, peaks) follow by name, folded away on the page.
const PRIMARY_METRICS: [&str; 9] = [
    "ttft",
    "tpot",
    "itl",
    "e2el",
    "request_throughput",
    "output_throughput",
    "total_token_throughput",
    "request_goodput",
    "slo_attainment",
];

/// Where a metric sits in the metric links ([`PRIMARY_METRICS`], then by name).
fn metric_rank(metric: &str) -> (usize, &str) {
    let rank = PRIMARY_METRICS
        .iter()
        .position(|m| *m == metric)
        .unwrap_or(PRIMARY_METRICS.len());
    (rank, metric)
}

/// One link per metric of the same configuration and cell (`same_cell`, the series itself
/// included): to that metric's series of the same statistic and SLO profile if it has one,
/// else of the same statistic, else its first statistic (`value` for a throughput).
fn metric_links(series: &SeriesInfo, same_cell: &[SeriesInfo]) -> Vec<NeighbourLink> {
    let mut metrics: Vec<&str> = same_cell.iter().map(|s| s.metric.as_str()).collect();
    metrics.sort_by_key(|m| metric_rank(m));
    metrics.dedup();
    metrics
        .into_iter()
        .filter_map(|metric| {
            let of_metric = || same_cell.iter().filter(move |s| s.metric == metric);
            let target = if metric == series.metric {
                Some(series)
            } else {
                of_metric()
                    .find(|s| s.stat == series.stat && s.slo_profile == series.slo_profile)
                    .or_else(|| of_metric().find(|s| s.stat == series.stat))
                    .or_else(|| of_metric().min_by_key(|s| format::stat_order(&s.stat.to_string())))
            }?;
            Some(NeighbourLink {
                label: format::metric_label(metric),
                series_id: target.series_id.clone(),
                current: target.series_id == series.series_id,
                primary: metric_rank(metric).0 < PRIMARY_METRICS.len(),
            })
        })
        .collect()
}

/// One link per cell of the configuration measuring the same metric, statistic and SLO
/// profile (`other_cells`, the series' own cell added), in the cells' numeric order, each
/// labelled by the fields that differ between the cells (`max_concurrency=16`).
fn cell_links(series: &SeriesInfo, other_cells: &[SeriesInfo]) -> Vec<NeighbourLink> {
    if other_cells.is_empty() {
        return Vec::new();
    }
    let mut cells: Vec<&SeriesInfo> = other_cells.iter().chain([series]).collect();
    cells.sort_by_cached_key(|s| natural_key(&s.cell_key));
    let keys: Vec<&str> = cells.iter().map(|s| s.cell_key.as_str()).collect();
    cells
        .iter()
        .map(|s| NeighbourLink {
            label: cell_label(&s.cell_key, &keys),
            series_id: s.series_id.clone(),
            current: s.series_id == series.series_id,
            primary: true,
        })
        .collect()
}

/// On a branch other than the default one with points of this series: the default branch to
/// draw as context and the merge base the branch's newest run stated (its upload's
/// `merge_base_sha`), if any. `None` on the default branch, and on a branch without points
/// (the page then says how to upload one; there is no chart to draw context in).
async fn branch_context(
    state: &AppState,
    project: &Project,
    branch: &str,
    points: &[SeriesPoint],
) -> Result<Option<BranchContext>, PageError> {
    // Points are in commit order, so the last one is the branch's newest commit here.
    let newest = match points.last() {
        Some(p) if branch != project.default_branch => p,
        _ => return Ok(None),
    };
    let merge_base = state
        .store
        .run(newest.run_id)
        .await?
        .and_then(|r| r.summary.merge_base_sha);
    Ok(Some(BranchContext {
        default_branch: project.default_branch.clone(),
        merge_base_short: merge_base.as_deref().map(short_sha),
        merge_base_url: merge_base
            .as_deref()
            .and_then(|sha| format::commit_url(project.repository_url.as_deref(), sha)),
        merge_base,
    }))
}
