//! The page templates and their view models: storage rows turned into display-ready text,
//! so templates only lay out strings (askama escapes every one of them).

use super::alerts::{AlertView, VerdictView};
use super::assets::UPLOT_VERSION;
use super::format::{
    self, commit_url, display_number, display_time, exact, machine_time, safe_link, short_sha,
};
use super::session::SiteHeader;
use crate::storage::{
    Project, RunSummary, SeriesInfo, SeriesPoint, StoredConfig, StoredMetric, StoredResult,
    StoredRun,
};
use askama::Template;
use benchtrail_core::metric::Interval;
use benchtrail_core::slo::SloProfile;
use benchtrail_core::slo::TOOL_PROFILE;
use serde_json::Value;
use std::borrow::Borrow;
use std::collections::HashMap;

/// A project as shown in lists and page headers.
#[derive(Debug, Clone)]
pub struct ProjectView {
    /// URL slug.
    pub slug: String,
    /// Display name.
    pub name: String,
    /// Repository URL, when it is a safe link.
    pub repository_url: Option<String>,
    /// Default branch.
    pub default_branch: String,
}

impl ProjectView {
    /// The view of a stored project.
    pub fn new(p: &Project) -> ProjectView {
        ProjectView {
            slug: p.slug.clone(),
            name: p.name.clone(),
            repository_url: p.repository_url.as_deref().and_then(safe_link),
            default_branch: p.default_branch.clone(),
        }
    }
}

/// `/`: the list of public projects.
#[derive(Template)]
#[template(path = "index.html")]
pub struct IndexPage {
    /// Public projects by slug.
    pub projects: Vec<ProjectView>,
    /// The site header (who is signed in).
    pub header: SiteHeader,
}

/// A link to one statistic of a metric.
#[derive(Debug, Clone)]
pub struct StatLink {
    /// `p50`, `mean`, ...
    pub stat: String,
    /// The series it opens.
    pub series_id: String,
    /// True on the series page of this very series.
    pub current: bool,
}

/// One metric of a cell on the project page, with a link per statistic.
#[derive(Debug, Clone)]
pub struct MetricRow {
    /// Metric name.
    pub name: String,
    /// Human label.
    pub label: String,
    /// Unit.
    pub unit: String,
    /// SLO profile of goodput and attainment series (each profile is its own series), or
    /// empty.
    pub profile: String,
    /// The thresholds, where one profile name covers several series (the tool's own goodput
    /// under different `--goodput` thresholds), else empty.
    pub profile_detail: String,
    /// Statistics in display order.
    pub stats: Vec<StatLink>,
}

/// One workload cell of a configuration on the project page.
#[derive(Debug, Clone)]
pub struct CellGroup {
    /// The cell key, e.g. `max_concurrency=4;request_rate=inf`.
    pub cell_key: String,
    /// Metrics in vocabulary order.
    pub metrics: Vec<MetricRow>,
}

/// One configuration (series key) on the project page.
#[derive(Debug, Clone)]
pub struct ConfigGroup {
    /// One-line summary (model, accelerators, engine, ...).
    pub title: String,
    /// The full series key as `(field, value)` pairs.
    pub pairs: Vec<(String, String)>,
    /// Its cells by cell key.
    pub cells: Vec<CellGroup>,
}

/// Groups series by series key, then cell key, then metric and SLO profile (vocabulary order,
/// then [`format::profile_order`]), keeping the storage order (by series key) of
/// configurations; cells in numeric order of their keys (`max_concurrency=4` before `=16`).
pub fn group_series<S: Borrow<SeriesInfo>>(series: &[S]) -> Vec<ConfigGroup> {
    let mut groups: Vec<ConfigGroup> = Vec::new();
    let mut group_index: HashMap<String, usize> = HashMap::new();
    // The series key of each group.
    let mut keys: Vec<&Value> = Vec::new();
    // The group of the previous series: storage lists a configuration's series together, so
    // comparing with it spares writing each series' key as text to look it up (a twentieth of
    // the dashboard's CPU at 1,224 series).
    let mut previous: Option<usize> = None;
    for s in series {
        let s = s.borrow();
        let gi = match previous.filter(|gi| *keys[*gi] == s.series_key) {
            Some(gi) => gi,
            None => *group_index
                .entry(s.series_key.to_string())
                .or_insert_with(|| {
                    groups.push(ConfigGroup {
                        title: format::key_title(&s.series_key),
                        pairs: format::key_pairs(&s.series_key),
                        cells: Vec::new(),
                    });
                    keys.push(&s.series_key);
                    groups.len() - 1
                }),
        };
        previous = Some(gi);
        let group = &mut groups[gi];
        let cell = match group.cells.iter().position(|c| c.cell_key == s.cell_key) {
            Some(ci) => &mut group.cells[ci],
            None => {
                group.cells.push(CellGroup {
                    cell_key: s.cell_key.clone(),
                    metrics: Vec::new(),
                });
                group.cells.last_mut().expect("just pushed")
            }
        };
        let profile = s.slo_profile.clone().unwrap_or_default();
        let metric = match cell
            .metrics
            .iter()
            .position(|m| m.name == s.metric && m.profile == profile)
        {
            Some(mi) => &mut cell.metrics[mi],
            None => {
                cell.metrics.push(MetricRow {
                    name: s.metric.clone(),
                    label: format::metric_label(&s.metric),
                    unit: s.unit.as_str().to_string(),
                    profile,
                    profile_detail: String::new(),
                    stats: Vec::new(),
                });
                cell.metrics.last_mut().expect("just pushed")
            }
        };
        metric.stats.push(StatLink {
            stat: s.stat.to_string(),
            series_id: s.series_id.clone(),
            current: false,
        });
    }
    // Configurations with the same title (the same model measured by one tool on two engine
    // builds, ...) get the series-key fields that tell them apart.
    let mut by_title: HashMap<String, Vec<usize>> = HashMap::new();
    for (gi, g) in groups.iter().enumerate() {
        by_title.entry(g.title.clone()).or_default().push(gi);
    }
    for same in by_title.values().filter(|same| same.len() > 1) {
        let same_keys: Vec<&Value> = same.iter().map(|gi| keys[*gi]).collect();
        for (gi, extra) in same.iter().zip(format::distinguishing_parts(&same_keys)) {
            if !extra.is_empty() {
                let title = &mut groups[*gi].title;
                title.push_str(" · ");
                title.push_str(&extra.join(" · "));
            }
        }
    }
    for group in &mut groups {
        // Cells in numeric order of their loads and lengths (c1, c4, c16), not as text.
        group
            .cells
            .sort_by_cached_key(|c| benchtrail_core::report::grouped::natural_key(&c.cell_key));
        for cell in &mut group.cells {
            cell.metrics.sort_by_cached_key(|m| {
                (
                    benchtrail_core::metric::vocabulary_rank(&m.name),
                    format::profile_order(
                        Some(&m.profile)
                            .filter(|p| !p.is_empty())
                            .map(|p| p.as_str()),
                    ),
                )
            });
            for m in &mut cell.metrics {
                m.stats.sort_by_key(|s| format::stat_order(&s.stat));
            }
        }
    }
    groups
}

/// The series of rows that hold one statistic more than once (the tool's own goodput under
/// different thresholds: one profile name, several series).
pub fn ambiguous_series(groups: &[ConfigGroup]) -> Vec<String> {
    let mut out = Vec::new();
    for m in groups
        .iter()
        .flat_map(|g| &g.cells)
        .flat_map(|c| &c.metrics)
    {
        let dup = m
            .stats
            .iter()
            .enumerate()
            .any(|(i, s)| m.stats[..i].iter().any(|t| t.stat == s.stat));
        if dup {
            out.extend(m.stats.iter().map(|s| s.series_id.clone()));
        }
    }
    out
}

/// Splits rows that hold one statistic more than once into one row per series, each named by
/// its thresholds (`detail` by series id, from [`ambiguous_series`]).
pub fn split_ambiguous_rows(groups: &mut [ConfigGroup], detail: &HashMap<String, String>) {
    for cell in groups.iter_mut().flat_map(|g| g.cells.iter_mut()) {
        let mut rows = Vec::with_capacity(cell.metrics.len());
        for m in cell.metrics.drain(..) {
            if !m.stats.iter().any(|s| detail.contains_key(&s.series_id)) {
                rows.push(m);
                continue;
            }
            let mut split: Vec<MetricRow> = Vec::new();
            for s in &m.stats {
                let d = detail.get(&s.series_id).cloned().unwrap_or_default();
                match split.iter_mut().find(|r| r.profile_detail == d) {
                    Some(r) => r.stats.push(s.clone()),
                    None => split.push(MetricRow {
                        profile_detail: d,
                        stats: vec![s.clone()],
                        ..m.clone()
                    }),
                }
            }
            split.sort_by(|a, b| a.profile_detail.cmp(&b.profile_detail));
            rows.extend(split);
        }
        cell.metrics = rows;
    }
}

/// A run in a list.
#[derive(Debug, Clone)]
pub struct RunRow {
    /// Run id.
    pub id: String,
    /// Full commit SHA.
    pub commit_sha: String,
    /// Short SHA.
    pub short_sha: String,
    /// Commit page, if the project has a repository URL.
    pub commit_url: Option<String>,
    /// Commit subject, or empty.
    pub subject: String,
    /// Branch.
    pub branch: String,
    /// Pull request number.
    pub pr_number: Option<i64>,
    /// Run time for reading.
    pub run_at: String,
    /// Run time, RFC 3339.
    pub run_at_machine: String,
    /// Repeat index.
    pub repeat_index: i64,
    /// Number of results.
    pub result_count: i64,
}

impl RunRow {
    /// The row of a run summary.
    pub fn new(r: &RunSummary, project: &Project) -> RunRow {
        RunRow {
            id: r.id.to_string(),
            commit_sha: r.commit_sha.clone(),
            short_sha: short_sha(&r.commit_sha),
            commit_url: commit_url(project.repository_url.as_deref(), &r.commit_sha),
            subject: r.commit_subject.clone().unwrap_or_default(),
            branch: r.branch.clone(),
            pr_number: r.pr_number,
            run_at: display_time(&r.run_at),
            run_at_machine: machine_time(&r.run_at),
            repeat_index: r.repeat_index,
            result_count: r.result_count,
        }
    }
}

/// A confidence interval as shown next to its value.
#[derive(Debug, Clone)]
pub struct CiView {
    /// `[34.912, 36.401] 95 %`.
    pub text: String,
    /// Exact lower bound.
    pub low: String,
    /// Exact upper bound.
    pub high: String,
    /// Exact level (`0.95`).
    pub level: String,
    /// How it was computed (shown as the tooltip).
    pub method: String,
}

impl CiView {
    /// The view of a stored interval.
    pub fn new(ci: &Interval) -> CiView {
        CiView {
            text: format::interval_text(ci),
            low: exact(ci.low),
            high: exact(ci.high),
            level: exact(ci.level),
            method: ci.method.clone(),
        }
    }
}

/// The thresholds of an SLO profile as text, for a result (`facts`, `warnings`) when it is
/// the tool's own profile, else from the project's current settings.
pub fn profile_thresholds(
    profile: &str,
    profiles: &[SloProfile],
    facts: Option<&Value>,
    warnings: Option<&Value>,
) -> String {
    if profile == TOOL_PROFILE {
        let from_facts = facts
            .and_then(|f| f.get("goodput_slo"))
            .and_then(Value::as_object)
            .map(|slo| {
                let mut pairs: Vec<(String, f64)> = slo
                    .iter()
                    .filter_map(|(k, v)| {
                        Some((k.strip_suffix("_ms").unwrap_or(k).to_string(), v.as_f64()?))
                    })
                    .collect();
                // The order profiles use: ttft, tpot, e2el (others after, by name).
                pairs.sort_by_cached_key(|(m, _)| {
                    (
                        ["ttft", "tpot", "e2el"]
                            .iter()
                            .position(|k| k == m)
                            .unwrap_or(3),
                        m.clone(),
                    )
                });
                format::thresholds_text(&pairs)
            });
        return match from_facts {
            Some(t) => format!("the tool's own: {t}"),
            None => {
                let unknown = warnings
                    .and_then(Value::as_array)
                    .is_some_and(|ws| ws.iter().any(|w| w["code"] == "goodput_slo_unknown"));
                if unknown || facts.is_some() {
                    "the tool's own; thresholds unknown".to_string()
                } else {
                    "the tool's own (see each result)".to_string()
                }
            }
        };
    }
    match profiles.iter().find(|p| p.name == profile) {
        Some(p) => {
            let pairs: Vec<(String, f64)> = p
                .thresholds()
                .into_iter()
                .map(|(m, ms)| (m.to_string(), ms))
                .collect();
            format::thresholds_text(&pairs)
        }
        None => "no longer in the project's settings".to_string(),
    }
}

/// One point of a series, one row of the points table.
#[derive(Debug, Clone)]
pub struct PointRow {
    /// Commit order index (the chart's x): repeats of one commit share it.
    pub x: usize,
    /// Full commit SHA.
    pub commit_sha: String,
    /// Short SHA.
    pub short_sha: String,
    /// Commit page link.
    pub commit_url: Option<String>,
    /// Commit subject or empty.
    pub subject: String,
    /// Run id.
    pub run_id: String,
    /// Run time for reading.
    pub run_at: String,
    /// Run time, RFC 3339.
    pub run_at_machine: String,
    /// Repeat index.
    pub repeat_index: i64,
    /// Value for reading.
    pub value_display: String,
    /// Exact value.
    pub value_exact: String,
    /// Samples behind it, or empty.
    pub n: String,
    /// Its confidence interval, where computed.
    pub ci: Option<CiView>,
    /// Its run is excluded from baselines.
    pub excluded: bool,
    /// Its run is the pinned baseline of the series' group.
    pub pinned: bool,
}

/// The commit order index of each point: points come in commit order, and every point of a
/// commit gets the index of that commit's first appearance (so repeats share an x even if
/// storage interleaved them).
pub fn commit_indices(points: &[SeriesPoint]) -> Vec<usize> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    points
        .iter()
        .map(|p| {
            let next = seen.len();
            *seen.entry(p.commit_sha.as_str()).or_insert(next)
        })
        .collect()
}

/// The series as shown on its page.
#[derive(Debug, Clone)]
pub struct SeriesView {
    /// Series id.
    pub series_id: String,
    /// Metric name.
    pub metric: String,
    /// Metric label.
    pub label: String,
    /// Vocabulary definition, when known.
    pub definition: Option<String>,
    /// Statistic.
    pub stat: String,
    /// Unit as shown after values (empty when dimensionless).
    pub unit: String,
    /// Unit as stored (`1` when dimensionless).
    pub unit_raw: String,
    /// `lower is better`, ...
    pub direction_text: String,
    /// `lower_is_better`, ...
    pub direction: String,
    /// Configuration summary.
    pub key_title: String,
    /// Series key pairs.
    pub key_pairs: Vec<(String, String)>,
    /// Cell key.
    pub cell_key: String,
    /// Cell fields as pairs.
    pub cell_pairs: Vec<(String, String)>,
    /// SLO profile of a goodput or attainment series, or empty.
    pub profile: String,
    /// The profile's thresholds as text, or empty.
    pub profile_thresholds: String,
}

/// The links of a series page to related series.
#[derive(Debug, Clone, Default)]
pub struct SeriesLinks {
    /// Statistics of the same metric, configuration, cell and SLO profile.
    pub siblings: Vec<StatLink>,
    /// The same metric and statistic under the other SLO profiles (`stat` holds the profile).
    pub other_profiles: Vec<StatLink>,
    /// One per metric of the same configuration and cell (the series' own included).
    pub metrics: Vec<NeighbourLink>,
    /// One per cell of the configuration with the same metric and statistic (the series'
    /// own included); empty when the configuration has one cell.
    pub cells: Vec<NeighbourLink>,
}

/// A link from a series page to a related series: another metric, or another cell.
#[derive(Debug, Clone, PartialEq)]
pub struct NeighbourLink {
    /// What the link reads: `TPOT`, `max_concurrency=16`.
    pub label: String,
    /// The series it opens.
    pub series_id: String,
    /// True for the series shown.
    pub current: bool,
    /// Shown inline; the others are folded under "more metrics".
    pub primary: bool,
}

/// What a series page on a branch other than the project's default branch shows besides the
/// branch's points: the default branch's points of the same series, drawn as context, and
/// where the branch forked.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchContext {
    /// The project's default branch.
    pub default_branch: String,
    /// The merge base the branch's newest run stated (full SHA), if it stated one.
    pub merge_base: Option<String>,
    /// Its short form.
    pub merge_base_short: Option<String>,
    /// Its link on the repository's site, when the project names a repository.
    pub merge_base_url: Option<String>,
}

/// `/projects/{project}/series/{series_id}`.
#[derive(Template)]
#[template(path = "series.html")]
pub struct SeriesPage {
    /// The project.
    pub project: ProjectView,
    /// The series.
    pub series: SeriesView,
    /// Branch shown.
    pub branch: String,
    /// Points in commit order.
    pub points: Vec<PointRow>,
    /// Number of distinct commits.
    pub commit_count: usize,
    /// Statistics of the same metric, configuration, cell and SLO profile.
    pub siblings: Vec<StatLink>,
    /// The same metric and statistic under the other SLO profiles (`stat` holds the profile).
    pub other_profiles: Vec<StatLink>,
    /// The other metrics of the configuration and cell.
    pub metric_links: Vec<NeighbourLink>,
    /// Some metric links are folded under "more metrics".
    pub more_metrics: bool,
    /// The configuration's other cells.
    pub cell_links: Vec<NeighbourLink>,
    /// On a branch other than the default one: the default branch's context.
    pub context: Option<BranchContext>,
    /// True when some points have a confidence interval (the table gets its column).
    pub has_ci: bool,
    /// Alerts of the series on this branch, oldest first, each with the x of its commit in
    /// the chart (empty when the commit has no point on this branch).
    pub alerts: Vec<(String, AlertView)>,
    /// Vendored uPlot version (cache-busting query).
    pub uplot_version: &'static str,
    /// The project's baseline window (commits): the chart's baseline band is computed over
    /// the same number of earlier commits as the analysis uses.
    pub baseline_window: usize,
    /// The site header (who is signed in).
    pub header: SiteHeader,
}

impl SeriesPage {
    /// The page of `series` on `branch` with its points (each with its confidence interval,
    /// when stored), `profiles` the project's SLO profiles.
    pub fn new(
        project: &Project,
        series: &SeriesInfo,
        branch: String,
        points: &[SeriesPoint],
        links: SeriesLinks,
        profiles: &[SloProfile],
    ) -> SeriesPage {
        let xs = commit_indices(points);
        let def = benchtrail_core::metric::lookup(&series.metric);
        let rows: Vec<PointRow> = points
            .iter()
            .zip(&xs)
            .map(|(p, &x)| PointRow {
                ci: p.ci.as_ref().map(CiView::new),
                x,
                commit_sha: p.commit_sha.clone(),
                short_sha: short_sha(&p.commit_sha),
                commit_url: commit_url(project.repository_url.as_deref(), &p.commit_sha),
                subject: p.commit_subject.clone().unwrap_or_default(),
                run_id: p.run_id.to_string(),
                run_at: display_time(&p.run_at),
                run_at_machine: machine_time(&p.run_at),
                repeat_index: p.repeat_index,
                value_display: display_number(p.value),
                value_exact: exact(p.value),
                n: p.n.map(|n| n.to_string()).unwrap_or_default(),
                excluded: p.excluded,
                pinned: false,
            })
            .collect();
        SeriesPage {
            header: SiteHeader::default(),
            project: ProjectView::new(project),
            series: SeriesView {
                series_id: series.series_id.clone(),
                metric: series.metric.clone(),
                label: format::metric_label(&series.metric),
                definition: def.map(|d| d.definition.to_string()),
                stat: series.stat.to_string(),
                unit: format::unit_text(series.unit).to_string(),
                unit_raw: series.unit.as_str().to_string(),
                direction_text: format::direction_text(series.direction).to_string(),
                direction: series.direction.as_str().to_string(),
                key_title: format::key_title(&series.series_key),
                key_pairs: format::key_pairs(&series.series_key),
                cell_key: series.cell_key.clone(),
                cell_pairs: flatten_pairs(&series.cell),
                profile: series.slo_profile.clone().unwrap_or_default(),
                profile_thresholds: series
                    .slo_profile
                    .as_deref()
                    .map(|p| profile_thresholds(p, profiles, None, None))
                    .unwrap_or_default(),
            },
            branch,
            commit_count: xs.iter().max().map_or(0, |m| m + 1),
            has_ci: rows.iter().any(|r| r.ci.is_some()),
            points: rows,
            siblings: links.siblings,
            other_profiles: links.other_profiles,
            more_metrics: links.metrics.iter().any(|l| !l.primary && !l.current),
            metric_links: links.metrics,
            cell_links: links.cells,
            context: None,
            alerts: Vec::new(),
            uplot_version: UPLOT_VERSION,
            baseline_window: benchtrail_core::regression::Settings::default().baseline_window,
        }
    }
}

/// A JSON object flattened to `(dotted.path, value text)` pairs (nested objects expanded,
/// arrays kept as JSON), in key order.
pub fn flatten_pairs(v: &Value) -> Vec<(String, String)> {
    fn walk(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
        match v {
            Value::Object(obj) => {
                for (k, child) in obj {
                    let path = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&path, child, out);
                }
            }
            other => out.push((prefix.to_string(), format::value_text(other))),
        }
    }
    let mut out = Vec::new();
    if v.is_object() {
        walk("", v, &mut out);
    }
    out
}

/// A file of a run.
#[derive(Debug, Clone)]
pub struct FileRow {
    /// Position (`files/{n}`).
    pub index: i64,
    /// Name as sent.
    pub name: String,
    /// Format it was read with.
    pub format: String,
    /// Size in bytes.
    pub size: i64,
    /// SHA-256 of the content.
    pub sha256: String,
    /// Its first 12 hex digits, as shown (the full hash is in the title).
    pub short_sha256: String,
}

/// A metric value of a result.
#[derive(Debug, Clone)]
pub struct MetricCell {
    /// Metric name.
    pub name: String,
    /// Label.
    pub label: String,
    /// Statistic.
    pub stat: String,
    /// Value for reading.
    pub value_display: String,
    /// Exact value.
    pub value_exact: String,
    /// Unit.
    pub unit: String,
    /// Samples, or empty.
    pub n: String,
    /// SLO profile (goodput, attainment), or empty.
    pub profile: String,
    /// Confidence interval, where computed.
    pub ci: Option<CiView>,
    /// The series it belongs to.
    pub series_id: String,
    /// Baseline, change and state from the run's stored analysis (as the compare page shows
    /// the row), when the run was analyzed and the series is in its analysis.
    pub vs_baseline: Option<super::compare_view::RowView>,
}

impl MetricCell {
    /// The view of a stored metric value.
    pub fn new(m: &StoredMetric) -> MetricCell {
        MetricCell {
            name: m.name.clone(),
            label: format::metric_label(&m.name),
            stat: m.stat.to_string(),
            value_display: display_number(m.value),
            value_exact: exact(m.value),
            unit: format::unit_text(m.unit).to_string(),
            n: m.n.map(|n| n.to_string()).unwrap_or_default(),
            profile: m.slo_profile.clone().unwrap_or_default(),
            ci: m.ci.as_ref().map(CiView::new),
            series_id: m.series_id.clone(),
            vs_baseline: None,
        }
    }
}

/// Goodput and SLO attainment of a result under one SLO profile.
#[derive(Debug, Clone)]
pub struct GoodputRow {
    /// Profile name.
    pub profile: String,
    /// Its thresholds as text.
    pub thresholds: String,
    /// Goodput (req/s), if stored.
    pub goodput: Option<MetricCell>,
    /// SLO attainment (%), if stored.
    pub attainment: Option<MetricCell>,
}

/// The goodput rows of a result, one per SLO profile in [`format::profile_order`].
fn goodput_rows(r: &StoredResult, profiles: &[SloProfile]) -> Vec<GoodputRow> {
    let mut rows: Vec<GoodputRow> = Vec::new();
    for m in &r.metrics {
        let slot = match m.name.as_str() {
            "request_goodput" => 0,
            "slo_attainment" => 1,
            _ => continue,
        };
        let profile = m.slo_profile.clone().unwrap_or_default();
        let row = match rows.iter().position(|g| g.profile == profile) {
            Some(i) => &mut rows[i],
            None => {
                rows.push(GoodputRow {
                    thresholds: profile_thresholds(
                        &profile,
                        profiles,
                        Some(&r.facts),
                        Some(&r.warnings),
                    ),
                    profile,
                    goodput: None,
                    attainment: None,
                });
                rows.last_mut().expect("just pushed")
            }
        };
        if slot == 0 {
            row.goodput = Some(MetricCell::new(m));
        } else {
            row.attainment = Some(MetricCell::new(m));
        }
    }
    rows.sort_by_cached_key(|g| format::profile_order(Some(&g.profile)));
    rows
}

/// A result of a run.
#[derive(Debug, Clone)]
pub struct ResultView {
    /// 0-based position in the run.
    pub index: i64,
    /// Cell key.
    pub cell_key: String,
    /// Cell fields.
    pub cell_pairs: Vec<(String, String)>,
    /// Configuration fingerprint.
    pub fingerprint: String,
    /// Its first 12 hex digits.
    pub short_fingerprint: String,
    /// Warnings as `(code, message)`.
    pub warnings: Vec<(String, String)>,
    /// Facts as pairs.
    pub facts: Vec<(String, String)>,
    /// Where the result came from, as text, or empty.
    pub source: String,
    /// The format the result was read as, or empty.
    pub source_format: String,
    /// Goodput per SLO profile; empty when goodput is not computable.
    pub goodput: Vec<GoodputRow>,
    /// Why goodput is not computable (the message of a `goodput_not_computable` warning), or
    /// empty.
    pub goodput_reason: String,
    /// Metric values in stored order (vocabulary, then statistic).
    pub metrics: Vec<MetricCell>,
}

/// A run as shown on its page.
#[derive(Debug, Clone)]
pub struct RunView {
    /// Run id.
    pub id: String,
    /// The row fields (commit, branch, times, ...).
    pub row: RunRow,
    /// Parent commits as `(short, full, link)`.
    pub parents: Vec<(String, String, Option<String>)>,
    /// Merge base as `(short, full, link)`.
    pub merge_base: Option<(String, String, Option<String>)>,
    /// CI job URL as text.
    pub ci_job_text: Option<String>,
    /// CI job URL when it is a safe link.
    pub ci_job_link: Option<String>,
    /// Upload time for reading.
    pub uploaded_at: String,
    /// Commit time in the committer's zone, for reading and RFC 3339, when known.
    pub committed_at: Option<(String, String)>,
    /// How many times the run was uploaded (identical re-uploads count, store nothing).
    pub upload_count: i64,
    /// Tags as pairs.
    pub tags: Vec<(String, String)>,
}

/// `/runs/{id}`.
#[derive(Template)]
#[template(path = "run.html")]
pub struct RunPage {
    /// Owning project.
    pub project: ProjectView,
    /// The run.
    pub run: RunView,
    /// Its files.
    pub files: Vec<FileRow>,
    /// Its quality results, in upload order: task, metric, value, `± stderr` (empty when none)
    /// and sample count (empty when unknown), as shown.
    pub quality: Vec<[String; 5]>,
    /// Its results.
    pub results: Vec<ResultView>,
    /// Total number of warnings over all results (shown at the top).
    pub warning_count: usize,
    /// The distinct warning codes over all results, in first-seen order, with their counts
    /// and the first result holding each.
    pub warning_codes: Vec<(String, usize, i64)>,
    /// The alerts of the run's commit on its branch, oldest first.
    pub alerts: Vec<AlertView>,
    /// Its verdict, when the run was analyzed.
    pub verdict: Option<VerdictView>,
    /// Its exclusion from baselines and the pins naming it.
    pub baselines: super::baselines::RunBaselines,
    /// Who acknowledged the alerts that fail the verdict, and when (`fail · acknowledged by
    /// …`): set when every failing alert still counted is acknowledged.
    pub acknowledged: Option<(String, String)>,
    /// The triage forms of its alerts, for a visitor with `write` on the project.
    pub triage: Option<super::triage::TriageForms>,
    /// The newest run of the baseline commits its analysis tested against (the baseline
    /// column's values of the untested series come from it).
    pub baseline_run: Option<super::compare_view::RunLink>,
    /// The site header (who is signed in).
    pub header: SiteHeader,
}

impl RunPage {
    /// Sets each metric's baseline, change and state from `deltas` (the run's analysis).
    pub fn set_deltas(&mut self, deltas: &super::run_deltas::RunDeltas) {
        let rows = deltas.rows();
        for m in self.results.iter_mut().flat_map(|r| &mut r.metrics) {
            m.vs_baseline = rows.get(&m.series_id).cloned();
        }
        self.baseline_run = deltas
            .baseline_run
            .as_ref()
            .map(super::compare_view::RunLink::new);
    }
    /// The page of a stored run; `profiles` are the project's SLO profiles (for the
    /// thresholds of goodput).
    pub fn new(project: &Project, run: &StoredRun, profiles: &[SloProfile]) -> RunPage {
        let s = &run.summary;
        let sha_triple = |sha: &str| {
            (
                short_sha(sha),
                sha.to_string(),
                commit_url(project.repository_url.as_deref(), sha),
            )
        };
        let results: Vec<ResultView> = run
            .results
            .iter()
            .map(|r| ResultView {
                index: r.index,
                cell_key: r.cell_key.clone(),
                cell_pairs: flatten_pairs(&r.cell),
                fingerprint: r.config_fingerprint.clone(),
                short_fingerprint: r.config_fingerprint.chars().take(12).collect(),
                warnings: r
                    .warnings
                    .as_array()
                    .map(|ws| {
                        ws.iter()
                            .map(|w| {
                                let field =
                                    |k: &str| w.get(k).map(format::value_text).unwrap_or_default();
                                (field("code"), field("message"))
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                facts: flatten_pairs(&r.facts),
                source: match &r.source {
                    Value::Object(o) => {
                        let field = |k: &str| o.get(k).map(format::value_text).unwrap_or_default();
                        let file = o.get("file").and_then(Value::as_i64);
                        let name = run
                            .files
                            .iter()
                            .find(|f| Some(f.index) == file)
                            .map(|f| format!(" “{}”", f.name))
                            .unwrap_or_default();
                        format!("file {}{name}, record {}", field("file"), field("record"))
                    }
                    _ => String::new(),
                },
                source_format: r
                    .source
                    .get("format")
                    .map(format::value_text)
                    .unwrap_or_default(),
                goodput: goodput_rows(r, profiles),
                goodput_reason: r
                    .warnings
                    .as_array()
                    .and_then(|ws| ws.iter().find(|w| w["code"] == "goodput_not_computable"))
                    .and_then(|w| w.get("message"))
                    .map(format::value_text)
                    .unwrap_or_default(),
                metrics: r.metrics.iter().map(MetricCell::new).collect(),
            })
            .collect();
        RunPage {
            header: SiteHeader::default(),
            baseline_run: None,
            acknowledged: None,
            triage: None,
            project: ProjectView::new(project),
            run: RunView {
                id: s.id.to_string(),
                row: RunRow::new(s, project),
                parents: s.parent_shas.iter().map(|p| sha_triple(p)).collect(),
                merge_base: s.merge_base_sha.as_deref().map(sha_triple),
                ci_job_text: s.ci_job_url.clone(),
                ci_job_link: s.ci_job_url.as_deref().and_then(safe_link),
                uploaded_at: display_time(&s.uploaded_at),
                committed_at: s
                    .commit_time
                    .as_ref()
                    .map(|t| (format::display_zoned_time(t), format::machine_zoned_time(t))),
                upload_count: s.upload_count,
                tags: flatten_pairs(&s.tags),
            },
            files: run
                .files
                .iter()
                .map(|f| FileRow {
                    index: f.index,
                    name: f.name.clone(),
                    format: f.format.clone(),
                    size: f.size,
                    sha256: f.sha256.clone(),
                    short_sha256: f.sha256.chars().take(12).collect(),
                })
                .collect(),
            quality: run
                .quality
                .iter()
                .map(|q| {
                    [
                        q.task.clone(),
                        q.metric.clone(),
                        format!("{:.4}", q.value),
                        q.stderr.map(|e| format!("± {e:.4}")).unwrap_or_default(),
                        q.samples.map(|n| n.to_string()).unwrap_or_default(),
                    ]
                })
                .collect(),
            warning_count: results.iter().map(|r| r.warnings.len()).sum(),
            alerts: Vec::new(),
            verdict: None,
            baselines: Default::default(),
            warning_codes: {
                let mut codes: Vec<(String, usize, i64)> = Vec::new();
                for r in &results {
                    for (code, _) in &r.warnings {
                        match codes.iter_mut().find(|(c, _, _)| c == code) {
                            Some((_, n, _)) => *n += 1,
                            None => codes.push((code.clone(), 1, r.index)),
                        }
                    }
                }
                codes
            },
            results,
        }
    }
}

/// One section of a configuration.
#[derive(Debug, Clone)]
pub struct ConfigSection {
    /// Field name in the configuration (`hardware`, ...).
    pub name: String,
    /// Heading.
    pub title: String,
    /// Recorded fields as `(field, value)`; empty when nothing was recorded.
    pub rows: Vec<(String, String)>,
}

/// The sections of a configuration in display order, with their headings.
const SECTIONS: &[(&str, &str)] = &[
    ("hardware", "Hardware"),
    ("model", "Model"),
    ("engine", "Engine"),
    ("quantization", "Quantization"),
    ("parallelism", "Parallelism"),
    ("speculative_decoding", "Speculative decoding"),
    ("scheduler", "Scheduler"),
    ("sampling", "Sampling"),
    ("benchmark", "Benchmark client"),
    ("metadata", "Metadata"),
];

/// One run measured under a configuration, on its page.
#[derive(Debug, Clone)]
pub struct ConfigRunRow {
    /// The run.
    pub run_id: String,
    /// Its project's slug and name.
    pub project_slug: String,
    /// Project name.
    pub project_name: String,
    /// Branch.
    pub branch: String,
    /// Commit SHA, its short form and its link on the repository's site.
    pub commit_sha: String,
    /// Short SHA.
    pub short_sha: String,
    /// Link to the commit, when the project names a repository.
    pub commit_url: Option<String>,
    /// Commit subject (empty when not uploaded).
    pub subject: String,
    /// When it ran, for people and as RFC 3339.
    pub run_at: String,
    /// The same, machine-readable.
    pub run_at_machine: String,
    /// Repeat index.
    pub repeat_index: i64,
}

impl ConfigRunRow {
    /// The row of run `r` of `project`.
    pub fn new(project: &Project, r: &crate::storage::RunSummary) -> ConfigRunRow {
        ConfigRunRow {
            run_id: r.id.to_string(),
            project_slug: project.slug.clone(),
            project_name: project.name.clone(),
            branch: r.branch.clone(),
            commit_sha: r.commit_sha.clone(),
            short_sha: short_sha(&r.commit_sha),
            commit_url: commit_url(project.repository_url.as_deref(), &r.commit_sha),
            subject: r.commit_subject.clone().unwrap_or_default(),
            run_at: display_time(&r.run_at),
            run_at_machine: machine_time(&r.run_at),
            repeat_index: r.repeat_index,
        }
    }
}

/// `/configs/{fingerprint}`.
#[derive(Template)]
#[template(path = "config.html")]
pub struct ConfigPage {
    /// Fingerprint.
    pub fingerprint: String,
    /// Its first 12 hex digits.
    pub short_fingerprint: String,
    /// Every section, recorded or not.
    pub sections: Vec<ConfigSection>,
    /// `engine.launch_command`, as recorded.
    pub launch_command: Option<String>,
    /// `benchmark.command`, as recorded.
    pub benchmark_command: Option<String>,
    /// The canonical JSON text (keys sorted, no whitespace).
    pub canonical_json: String,
    /// The same, indented for reading.
    pub pretty_json: String,
    /// First stored.
    pub created_at: String,
    /// The projects using it that the visitor may see, by slug (the breadcrumb names the
    /// project when there is one).
    pub projects: Vec<ProjectView>,
    /// The newest runs of those projects measured under it, newest first.
    pub runs: Vec<ConfigRunRow>,
    /// More runs used it than are listed.
    pub runs_truncated: bool,
    /// The site header (who is signed in).
    pub header: SiteHeader,
}

impl ConfigPage {
    /// The page of a stored configuration.
    pub fn new(config: &StoredConfig) -> ConfigPage {
        let c = &config.configuration;
        let mut sections: Vec<ConfigSection> = SECTIONS
            .iter()
            .map(|(name, title)| ConfigSection {
                name: name.to_string(),
                title: title.to_string(),
                rows: c.get(*name).map(flatten_pairs).unwrap_or_default(),
            })
            .collect();
        // Sections a later version may add are still shown, never dropped.
        if let Some(obj) = c.as_object() {
            for (k, v) in obj
                .iter()
                .filter(|(k, _)| !SECTIONS.iter().any(|(n, _)| n == k))
            {
                let rows = if v.is_object() {
                    flatten_pairs(v)
                } else {
                    vec![(k.clone(), format::value_text(v))]
                };
                sections.push(ConfigSection {
                    name: k.clone(),
                    title: k.clone(),
                    rows,
                });
            }
        }
        let text = |ptr: &str| c.pointer(ptr).and_then(Value::as_str).map(str::to_string);
        ConfigPage {
            header: SiteHeader::default(),
            projects: Vec::new(),
            runs: Vec::new(),
            runs_truncated: false,
            fingerprint: config.fingerprint.clone(),
            short_fingerprint: config.fingerprint.chars().take(12).collect(),
            sections,
            launch_command: text("/engine/launch_command"),
            benchmark_command: text("/benchmark/command"),
            // serde_json's map is ordered by key (no `preserve_order`), so this is canonical.
            canonical_json: c.to_string(),
            pretty_json: serde_json::to_string_pretty(c).unwrap_or_default(),
            created_at: display_time(&config.created_at),
        }
    }
}

/// The HTML error page (404, 500).
#[derive(Template)]
#[template(path = "error.html")]
pub struct ErrorPage {
    /// HTTP status.
    pub status: u16,
    /// Heading.
    pub title: &'static str,
    /// One sentence.
    pub message: String,
    /// The site header (who is signed in).
    pub header: SiteHeader,
}
