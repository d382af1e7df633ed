//! The project dashboard, `/projects/{project}`: the page a team reads to answer "how are we
//! doing". In order: the open findings (the project's open alerts grouped across cells as the
//! alerts page groups them, trade-offs first), the newest run of each branch with its verdict,
//! small multiples of the key metrics per configuration and cell (a server-drawn SVG
//! sparkline of the default branch's recent history, the newest value with its unit and the
//! change from the previous commit), every series in a list a script can filter (a plain
//! table without it), and the recent runs with their verdicts. A project without runs says
//! how to upload its first one.
//!
//! Cost: the series list (one query, and one per 500 series rows not yet kept in memory), one
//! query for the open alerts, one for the newest run per branch, one for the recent runs,
//! three for every sparkline at once (commit graph, the default branch's newest commits, their
//! values), and two per run list for its runs' verdicts (their stored verdict bases and their
//! alerts): nothing per series.

use super::alerts::{self, alert_groups, AlertGroupView};
use super::format::{self, display_number, exact};
use super::series::tool_thresholds;
use super::session::{SiteHeader, Visitor};
use super::views::{
    ambiguous_series, group_series, split_ambiguous_rows, ConfigGroup, ProjectView, RunRow,
};
use super::{visible_project, PageError, PageResult};
use crate::app::AppState;
use crate::storage::{Alert, AlertFilter, AlertStatus, Project, RecentValue, RunSummary, Store};
use askama::Template;
use axum::extract::{Path, State};
use axum::response::Html;
use benchtrail_core::report::verdict_basis::VerdictBasis;
use benchtrail_core::settings::DetectionSettings;
use benchtrail_core::Direction;
use std::collections::HashMap;
use std::sync::Arc;

/// Most series listed on a project page; a project with more shows a note and its series
/// pages stay reachable from run pages.
const PROJECT_SERIES_CAP: usize = 5000;
/// Runs listed on a project page.
const RECENT_RUNS: i64 = 20;
/// Branches whose newest run is listed (newest first).
const BRANCHES_CAP: i64 = 20;
/// Open alerts read for the findings (more show as `100+`).
const OPEN_ALERTS_CAP: i64 = 100;
/// Default-branch commits a sparkline reads, newest last.
pub const SPARK_COMMITS: usize = 30;
/// Points a sparkline draws at most (the newest; several runs of a commit are several points,
/// as on the series page).
pub const SPARK_POINTS: usize = 30;
/// Configuration × cell pairs given small multiples (the series list still lists every cell).
const MULTIPLES_CAP: usize = 60;
/// Width and height of a sparkline's SVG viewBox, and its inner margin (user units ≈ px).
const SPARK_W: f64 = 120.0;
const SPARK_H: f64 = 28.0;
const SPARK_PAD: f64 = 2.0;

/// The key metrics of a small multiple, in display order: (metric, statistic, short label).
/// Goodput is `request_goodput` under the first SLO profile of the cell (`interactive` first,
/// the tool's own last), shown only where stored.
pub const KEY_METRICS: &[(&str, &str, &str)] = &[
    ("output_throughput", "value", "output throughput"),
    ("ttft", "p50", "ttft p50"),
    ("ttft", "p99", "ttft p99"),
    ("tpot", "p50", "tpot p50"),
    ("e2el", "p50", "e2el p50"),
    ("request_goodput", "value", "goodput"),
];

/// A run's verdict as its page and `GET /api/v1/runs/{id}/verdict` give it.
#[derive(Debug, Clone)]
pub struct RunVerdict {
    /// `pass`, `warn`, `incomplete`, `fail` or `pending` (never analyzed yet).
    pub verdict: String,
    /// Who acknowledged the failing alerts and when (`acknowledged by ci-bot 2026-01-02 03:04
    /// UTC`), only for `fail` with every failing alert acknowledged; else empty.
    pub acknowledged: String,
    /// `provisional (1 of 3 repeats)` while repeats are missing, else empty.
    pub provisional: String,
}

impl RunVerdict {
    /// The verdict as one line: `fail · acknowledged by ci-bot 2026-01-02 03:04 UTC`.
    pub fn text(&self) -> String {
        let mut t = self.verdict.clone();
        for extra in [&self.acknowledged, &self.provisional] {
            if !extra.is_empty() {
                t.push_str(" · ");
                t.push_str(extra);
            }
        }
        t
    }
}

/// The current verdicts of `runs` (their stored analyses and the current alerts of their
/// commits, by `det`), as [`crate::analysis::current_verdict`] computes them, without reading
/// the runs' results or whole analyses (only the bases of their verdicts): one query for the
/// bases and one for the alerts, however many runs (a dashboard lists 20 or more). By run id,
/// every run of `runs` present.
pub async fn run_verdicts(
    store: &Store,
    det: &DetectionSettings,
    runs: &[&RunSummary],
) -> Result<HashMap<uuid::Uuid, RunVerdict>, PageError> {
    let ids: Vec<uuid::Uuid> = runs.iter().map(|r| r.id).collect();
    let bases = store.run_verdict_bases(&ids).await?;
    let alerts = store.runs_alerts(&ids).await?;
    Ok(runs
        .iter()
        .map(|run| {
            let run_alerts = alerts.get(&run.id).map(Vec::as_slice).unwrap_or(&[]);
            (
                run.id,
                verdict_row(run, bases.get(&run.id).map(|b| &**b), run_alerts, det),
            )
        })
        .collect())
}

/// How a run list shows the verdict of `run` from its `basis` and its commit's alerts.
fn verdict_row(
    run: &RunSummary,
    basis: Option<&VerdictBasis>,
    run_alerts: &[Alert],
    det: &DetectionSettings,
) -> RunVerdict {
    let v = crate::analysis::verdict_from_basis(run.id, &run.commit_sha, basis, run_alerts, det);
    let verdict = v.verdict.as_str().to_string();
    let acknowledged = alerts::acknowledged_fail(&verdict, run_alerts)
        .map(|(who, when)| format!("acknowledged by {who} {when}").trim().to_string())
        .unwrap_or_default();
    let provisional = match (&v.repeats, v.provisional) {
        (Some(r), true) => format!("provisional ({} of {} repeats)", r.received, r.expected),
        (None, true) => "provisional".to_string(),
        _ => String::new(),
    };
    RunVerdict {
        verdict,
        acknowledged,
        provisional,
    }
}

/// A run listed with its verdict.
#[derive(Debug, Clone)]
pub struct RunWithVerdict {
    /// The run.
    pub run: RunRow,
    /// Its verdict.
    pub verdict: RunVerdict,
}

/// A sparkline: an SVG polyline in a [`SPARK_W`] × [`SPARK_H`] viewBox, oldest point left,
/// higher values up.
#[derive(Debug, Clone, Default)]
pub struct Sparkline {
    /// The polyline's `points` attribute (`x,y x,y …`, one per value), empty without values.
    pub points: String,
    /// Number of points drawn.
    pub count: usize,
    /// The newest point's `x`, marked with a dot (empty without values).
    pub last_x: String,
    /// The newest point's `y` (empty without values).
    pub last_y: String,
}

impl Sparkline {
    /// The line of `values` (oldest first), scaled to the viewBox between their minimum and
    /// maximum (a flat line across the middle when all are equal).
    pub fn new(values: &[f64]) -> Sparkline {
        let n = values.len();
        if n == 0 {
            return Sparkline::default();
        }
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let inner_w = SPARK_W - 2.0 * SPARK_PAD;
        let inner_h = SPARK_H - 2.0 * SPARK_PAD;
        // One string for the points (the dashboard draws 36 cells × 6 tiles × 30 points).
        let mut points = String::with_capacity(n * 11);
        let (mut last_x, mut last_y) = (0.0, 0.0);
        for (i, v) in values.iter().enumerate() {
            let x = if n == 1 {
                SPARK_W / 2.0
            } else {
                SPARK_PAD + inner_w * i as f64 / (n - 1) as f64
            };
            let y = if hi > lo {
                SPARK_PAD + inner_h * (hi - v) / (hi - lo)
            } else {
                SPARK_H / 2.0
            };
            if i > 0 {
                points.push(' ');
            }
            format::push_one_decimal(&mut points, x);
            points.push(',');
            format::push_one_decimal(&mut points, y);
            (last_x, last_y) = (x, y);
        }
        Sparkline {
            last_x: format!("{last_x:.1}"),
            last_y: format!("{last_y:.1}"),
            points,
            count: n,
        }
    }
}

/// One key metric of a cell: sparkline, newest value and change.
#[derive(Debug, Clone)]
pub struct KeyTile {
    /// The series.
    pub series_id: String,
    /// Short label: `ttft p50`, `goodput (interactive)`.
    pub label: String,
    /// Metric name (`ttft`).
    pub metric: String,
    /// Statistic (`p50`, `value`).
    pub stat: String,
    /// The newest commit's value (the mean of its runs) with its unit: `35.91 ms`, or empty
    /// when the default branch has none.
    pub latest: String,
    /// That value exactly (shortest text that reads back to the same number), or empty.
    pub latest_exact: String,
    /// Change from the previous commit's value (the mean of its runs) in %: `+3.2 %`; empty
    /// with fewer than two commits or a previous value of 0.
    pub delta: String,
    /// The change exactly, in % (for `data-delta`), or empty.
    pub delta_exact: String,
    /// `worse`, `better`, `same` or empty (by the metric's direction).
    pub delta_dir: String,
    /// What follows the change: `▲`/`▼` for the value going up/down, then `better`/`worse`
    /// when the metric has a direction (`▲ better` for a throughput that rose); as on the
    /// compare page, whose legend says so. Empty without a change.
    pub delta_mark: String,
    /// Short SHA of the previous commit, or empty.
    pub previous_sha: String,
    /// The recent history.
    pub spark: Sparkline,
}

/// The small multiples of one configuration and cell.
#[derive(Debug, Clone)]
pub struct CellMultiples {
    /// The configuration's title (as in the series list).
    pub config: String,
    /// The cell key.
    pub cell_key: String,
    /// Its key metrics, in [`KEY_METRICS`] order, those it stores.
    pub tiles: Vec<KeyTile>,
}

/// `/projects/{project}`.
#[derive(Template)]
#[template(path = "project.html")]
pub struct ProjectPage {
    /// The project.
    pub project: ProjectView,
    /// Open findings of the default branch across cells, trade-offs first, then newest first.
    pub findings: Vec<AlertGroupView>,
    /// Number of open alerts of the default branch (`100+` beyond the count's cap).
    pub open_alerts: String,
    /// Number of open alerts of every other branch (pull requests), `0` when none: listed
    /// apart on the alerts page, only counted here.
    pub other_open_alerts: String,
    /// The newest run of each branch (the default branch first) with its verdict.
    pub branches: Vec<RunWithVerdict>,
    /// Small multiples per configuration and cell.
    pub multiples: Vec<CellMultiples>,
    /// More configuration × cell pairs exist than have small multiples.
    pub multiples_truncated: bool,
    /// Series grouped by configuration and cell.
    pub groups: Vec<ConfigGroup>,
    /// Number of series listed.
    pub series_count: usize,
    /// More series exist than are listed.
    pub truncated: bool,
    /// Most recent runs with their verdicts.
    pub runs: Vec<RunWithVerdict>,
    /// More runs exist than are listed.
    pub more_runs: bool,
    /// The command that uploads a first run (shown when the project has none).
    pub upload_command: String,
    /// The site header (who is signed in).
    pub header: SiteHeader,
}

/// The `benchtrail upload` command of README "Uploading from CI" for project `slug`.
pub fn upload_command(slug: &str) -> String {
    format!(
        "export BENCHTRAIL_URL=https://benchtrail.example.com BENCHTRAIL_TOKEN=bt_...\n\
         benchtrail upload --project {slug} --hardware auto --config engine-config.json results/*.json"
    )
}

/// `GET /projects/{project}`: the dashboard.
pub(super) async fn project_page(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(slug): Path<String>,
) -> PageResult {
    let project = visible_project(&state, &visitor, &slug).await?;
    let store = &state.store;
    // The series list with its small multiples on a task of its own, beside the runs' verdicts
    // and the alerts: on SQLite each query runs on its connection's own thread and the series
    // rows' decoding and the sparklines are a third of the page's CPU, so on two cores the
    // parts overlap instead of queueing (BENCHMARKS.md "Session 33").
    let series_part = tokio::spawn(series_part(state.clone(), project.clone()));
    let (runs_part, (findings, open_alerts), other_open_alerts) = tokio::try_join!(
        runs_part(store, &project),
        open_findings(store, &project),
        other_branches_open(store, &project),
    )?;
    let SeriesPart {
        series_count,
        groups,
        truncated,
        multiples,
        multiples_truncated,
    } = series_part
        .await
        .map_err(|e| PageError::Internal(format!("series of the dashboard: {e}")))??;
    let RunsPart {
        branches,
        runs: run_rows,
        more_runs,
    } = runs_part;
    let page = ProjectPage {
        upload_command: upload_command(&project.slug),
        project: ProjectView::new(&project),
        findings,
        open_alerts,
        other_open_alerts,
        branches,
        multiples,
        multiples_truncated,
        series_count,
        groups,
        truncated,
        runs: run_rows,
        more_runs,
        header: visitor.header(),
    };
    Ok(Html(page.render()?))
}

/// The dashboard's series list, grouped by configuration and cell, and its small multiples.
struct SeriesPart {
    series_count: usize,
    groups: Vec<ConfigGroup>,
    truncated: bool,
    multiples: Vec<CellMultiples>,
    multiples_truncated: bool,
}

/// Every series of `project` grouped for the list, and the small multiples of its cells.
async fn series_part(state: AppState, project: Project) -> Result<SeriesPart, PageError> {
    let store = &state.store;
    let (series, truncated) = all_series(store, &project).await?;
    let mut groups = group_series(&series);
    // The tool's goodput under different thresholds: one profile name, several series; each
    // gets its own row, named by its thresholds.
    let ambiguous = ambiguous_series(&groups);
    if !ambiguous.is_empty() {
        let mut detail = HashMap::new();
        for id in ambiguous {
            let text = tool_thresholds(&state, &project, &id).await?;
            detail.insert(id, text.unwrap_or_else(|| "thresholds unknown".into()));
        }
        split_ambiguous_rows(&mut groups, &detail);
    }
    let (multiples, multiples_truncated) = small_multiples(store, &project, &groups).await?;
    Ok(SeriesPart {
        series_count: series.len(),
        groups,
        truncated,
        multiples,
        multiples_truncated,
    })
}

/// The dashboard's run lists: each branch's newest run and the recent runs, with verdicts.
struct RunsPart {
    branches: Vec<RunWithVerdict>,
    runs: Vec<RunWithVerdict>,
    /// Whether older runs than those listed exist.
    more_runs: bool,
}

/// The newest run of each branch (the default branch first) and the project's recent runs,
/// each with its verdict.
async fn runs_part(store: &Store, project: &Project) -> Result<RunsPart, PageError> {
    let det = store.settings(project).await?.settings.detection;
    let mut verdicts: HashMap<uuid::Uuid, RunVerdict> = HashMap::new();
    let runs = store.list_runs(project.id, None, None, RECENT_RUNS).await?;
    let mut latest = store
        .latest_run_per_branch(project.id, BRANCHES_CAP)
        .await?;
    // The default branch first, the others newest first.
    latest.sort_by_key(|r| r.branch != project.default_branch);
    let branches = with_verdicts(store, &det, project, &mut verdicts, &latest).await?;
    let run_rows = with_verdicts(store, &det, project, &mut verdicts, &runs.items).await?;
    Ok(RunsPart {
        branches,
        runs: run_rows,
        more_runs: runs.next_cursor.is_some(),
    })
}

/// The rows of `list` with their verdicts, each run's verdict computed once per page
/// (`cache`: a branch's newest run is often among the recent runs too), those not yet known
/// read together ([`run_verdicts`]).
async fn with_verdicts(
    store: &Store,
    det: &DetectionSettings,
    project: &Project,
    cache: &mut HashMap<uuid::Uuid, RunVerdict>,
    list: &[RunSummary],
) -> Result<Vec<RunWithVerdict>, PageError> {
    let unknown: Vec<&RunSummary> = list.iter().filter(|r| !cache.contains_key(&r.id)).collect();
    cache.extend(run_verdicts(store, det, &unknown).await?);
    Ok(list
        .iter()
        .map(|r| RunWithVerdict {
            run: RunRow::new(r, project),
            // Present: `run_verdicts` answers for every run it is given.
            verdict: cache[&r.id].clone(),
        })
        .collect())
}

/// Every listed series of the project (up to [`PROJECT_SERIES_CAP`]) and whether more exist.
/// One query: the list's keyset pages restart their index range at the first series of a
/// configuration (the cursor compares a row of five columns, the index ranges on the first),
/// so three pages of 500 at 1,296 series took 2.2, 4.3 and 5.8 ms against about 4 for all.
async fn all_series(
    store: &Store,
    project: &Project,
) -> Result<(Vec<Arc<crate::storage::SeriesInfo>>, bool), PageError> {
    let filter = crate::storage::SeriesFilter::default();
    let page = store
        .list_series_shared(project.id, &filter, None, PROJECT_SERIES_CAP as i64)
        .await?;
    Ok((page.items, page.next_cursor.is_some()))
}

/// The default branch's open alerts as findings across cells (trade-offs first, then newest
/// first) and their count as the alerts link shows it (`100+` beyond [`OPEN_ALERTS_CAP`]). A
/// pull request's findings are its own, not the project's: [`other_branches_open`] counts them.
async fn open_findings(
    store: &Store,
    project: &Project,
) -> Result<(Vec<AlertGroupView>, String), PageError> {
    let filter = AlertFilter {
        status: Some(AlertStatus::Open),
        branch: Some(project.default_branch.clone()),
        ..Default::default()
    };
    let page = store
        .list_alerts(project.id, &filter, None, OPEN_ALERTS_CAP)
        .await?;
    let mut groups = alert_groups(&page.items);
    // Stable: within trade-offs and within the rest, the newest first stays.
    groups.sort_by_key(|g| g.kind != "tradeoff");
    let more = if page.next_cursor.is_some() { "+" } else { "" };
    Ok((groups, format!("{}{more}", page.items.len())))
}

/// How many alerts of branches other than the default one are open (`100+` beyond
/// [`OPEN_ALERTS_CAP`]).
async fn other_branches_open(store: &Store, project: &Project) -> Result<String, PageError> {
    let filter = AlertFilter {
        status: Some(AlertStatus::Open),
        not_branch: Some(project.default_branch.clone()),
        ..Default::default()
    };
    let page = store
        .list_alerts(project.id, &filter, None, OPEN_ALERTS_CAP)
        .await?;
    let more = if page.next_cursor.is_some() { "+" } else { "" };
    Ok(format!("{}{more}", page.items.len()))
}

/// The key series of every configuration and cell of `groups` (in their order), read with
/// one query over the default branch's newest [`SPARK_COMMITS`] commits.
async fn small_multiples(
    store: &Store,
    project: &Project,
    groups: &[ConfigGroup],
) -> Result<(Vec<CellMultiples>, bool), PageError> {
    // (config title, cell key, [(series id, label, metric, stat, unit)])
    let mut cells = Vec::new();
    let mut truncated = false;
    'groups: for g in groups {
        for c in &g.cells {
            if cells.len() == MULTIPLES_CAP {
                truncated = true;
                break 'groups;
            }
            let mut keys = Vec::new();
            for (metric, stat, label) in KEY_METRICS {
                // Metric rows are in profile order: the first goodput row is `interactive`
                // when the project has it.
                let found = c
                    .metrics
                    .iter()
                    .filter(|m| m.name == *metric)
                    .find_map(|m| {
                        m.stats
                            .iter()
                            .find(|s| s.stat == *stat)
                            .map(|s| (m, s.series_id.clone()))
                    });
                if let Some((m, id)) = found {
                    let label = if m.profile.is_empty() {
                        label.to_string()
                    } else {
                        format!("{label} ({})", m.profile)
                    };
                    keys.push((id, label, *metric, *stat, m.unit.clone()));
                }
            }
            if !keys.is_empty() {
                cells.push((g.title.clone(), c.cell_key.clone(), keys));
            }
        }
    }
    let ids: Vec<String> = cells
        .iter()
        .flat_map(|(_, _, keys)| keys.iter().map(|k| k.0.clone()))
        .collect();
    // One list per id, in the tiles' order (`recent_values` answers one per series id).
    let mut per_tile: Vec<Vec<RecentValue>> = Vec::new();
    if !ids.is_empty() {
        let graph = store.commit_graph(project.id).await?;
        let window = store
            .newest_commits(project.id, &project.default_branch, SPARK_COMMITS, &graph)
            .await?;
        per_tile = store
            .recent_values(
                project.id,
                &project.default_branch,
                &ids,
                &window.commits,
                &graph,
            )
            .await?;
    }
    let mut per_tile = per_tile.into_iter();
    let multiples = cells
        .into_iter()
        .map(|(config, cell_key, keys)| CellMultiples {
            config,
            cell_key,
            tiles: keys
                .into_iter()
                .map(|(id, label, metric, stat, unit)| {
                    let values = per_tile.next().unwrap_or_default();
                    tile(id, label, metric, stat, &unit, &values)
                })
                .collect(),
        })
        .collect();
    Ok((multiples, truncated))
}

/// The tile of one series from its recent `values` (oldest first).
fn tile(
    series_id: String,
    label: String,
    metric: &str,
    stat: &str,
    unit: &str,
    values: &[RecentValue],
) -> KeyTile {
    let drawn: Vec<f64> = values
        .iter()
        .skip(values.len().saturating_sub(SPARK_POINTS))
        .map(|v| v.value)
        .collect();
    let means = commit_means(values);
    let newest = means.last();
    let previous = means.len().checked_sub(2).map(|i| &means[i]);
    let unit = if unit == "1" { "" } else { unit };
    let with_unit = |v: f64| format!("{} {unit}", display_number(v)).trim().to_string();
    let change = match (newest, previous) {
        (Some((_, new)), Some((_, old))) if *old != 0.0 => Some((new - old) / old.abs() * 100.0),
        _ => None,
    };
    let direction = benchtrail_core::metric::lookup(metric).map(|m| m.direction);
    KeyTile {
        series_id,
        label,
        metric: metric.to_string(),
        stat: stat.to_string(),
        latest: newest.map(|(_, v)| with_unit(*v)).unwrap_or_default(),
        latest_exact: newest.map(|(_, v)| exact(*v)).unwrap_or_default(),
        delta: change.map(|d| format!("{d:+.1} %")).unwrap_or_default(),
        delta_exact: change.map(exact).unwrap_or_default(),
        delta_dir: change.map_or(String::new(), |d| delta_dir(d, direction)),
        delta_mark: change.map_or(String::new(), |d| delta_mark(d, direction)),
        previous_sha: previous
            .map(|(sha, _)| format::short_sha(sha))
            .unwrap_or_default(),
        spark: Sparkline::new(&drawn),
    }
}

/// Each commit of `values` (in their order) with the mean of its values: a commit's repeats
/// are one sample of the commit.
fn commit_means(values: &[RecentValue]) -> Vec<(Arc<str>, f64)> {
    let mut out: Vec<(Arc<str>, f64, usize)> = Vec::new();
    for v in values {
        match out.last_mut() {
            Some((sha, sum, n)) if *sha == v.commit_sha => {
                *sum += v.value;
                *n += 1;
            }
            _ => out.push((v.commit_sha.clone(), v.value, 1)),
        }
    }
    out.into_iter()
        .map(|(sha, sum, n)| (sha, sum / n as f64))
        .collect()
}

/// `worse`, `better` or `same` for a change of `pct` % of a metric of `direction` (empty
/// when neither direction is better).
fn delta_dir(pct: f64, direction: Option<Direction>) -> String {
    if pct == 0.0 {
        return "same".into();
    }
    let better = match direction {
        Some(Direction::LowerIsBetter) => pct < 0.0,
        Some(Direction::HigherIsBetter) => pct > 0.0,
        _ => return String::new(),
    };
    String::from(if better { "better" } else { "worse" })
}

/// [`KeyTile::delta_mark`] of a change of `pct` %: the arrow says where the value went, the
/// word what that means for a metric of `direction`.
fn delta_mark(pct: f64, direction: Option<Direction>) -> String {
    let arrow = match pct.partial_cmp(&0.0) {
        Some(std::cmp::Ordering::Greater) => "▲",
        Some(std::cmp::Ordering::Less) => "▼",
        _ => return String::new(),
    };
    match delta_dir(pct, direction).as_str() {
        "" => arrow.to_string(),
        word => format!("{arrow} {word}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(sha: &str, value: f64) -> RecentValue {
        RecentValue {
            commit_sha: sha.into(),
            value,
        }
    }

    #[test]
    fn sparkline_scales_between_min_and_max() {
        let s = Sparkline::new(&[1.0, 3.0, 2.0]);
        assert_eq!(s.points, "2.0,26.0 60.0,2.0 118.0,14.0");
        assert_eq!(s.count, 3);
        assert_eq!(Sparkline::new(&[5.0]).points, "60.0,14.0");
        assert_eq!(Sparkline::new(&[]).count, 0);
    }

    #[test]
    fn tile_compares_the_newest_commit_with_the_previous_one() {
        let values = [v("a", 10.0), v("b", 11.0), v("b", 13.0)];
        let t = tile("s".into(), "ttft p50".into(), "ttft", "p50", "ms", &values);
        assert_eq!(t.latest, "12 ms");
        assert_eq!(t.latest_exact, "12");
        assert_eq!(t.delta, "+20.0 %");
        assert_eq!(t.delta_dir, "worse");
        assert_eq!(t.delta_mark, "▲ worse");
        assert_eq!(t.spark.count, 3);
        let t = tile(
            "s".into(),
            "x".into(),
            "output_throughput",
            "value",
            "tok/s",
            &values[..1],
        );
        assert_eq!(t.delta, "");
        assert_eq!(t.delta_mark, "");
        assert_eq!(t.latest, "10 tok/s");
    }

    #[test]
    fn the_arrow_follows_the_value_and_the_word_the_metrics_direction() {
        let rising = [v("a", 100.0), v("b", 133.5)];
        let t = tile(
            "s".into(),
            "output throughput".into(),
            "output_throughput",
            "value",
            "tok/s",
            &rising,
        );
        assert_eq!(
            (t.delta.as_str(), t.delta_mark.as_str()),
            ("+33.5 %", "▲ better")
        );
        let falling = [v("a", 40.0), v("b", 30.0)];
        let t = tile("s".into(), "ttft p50".into(), "ttft", "p50", "ms", &falling);
        assert_eq!(
            (t.delta.as_str(), t.delta_mark.as_str()),
            ("-25.0 %", "▼ better")
        );
        let t = tile(
            "s".into(),
            "x".into(),
            "not_in_vocabulary",
            "value",
            "1",
            &falling,
        );
        assert_eq!(t.delta_mark, "▼");
    }
}
