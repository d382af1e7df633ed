//! The page templates and their view models: storage rows turned into display-ready text,
//! so templates only lay out strings (askama escapes every one of them).

use super::assets::UPLOT_VERSION;
use super::format::{
    self, commit_url, display_number, display_time, exact, machine_time, safe_link, short_sha,
};
use crate::storage::{Project, RunSummary, SeriesInfo, SeriesPoint, StoredConfig, StoredRun};
use askama::Template;
use serde_json::Value;
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

/// Groups series by series key, then cell key, then metric (vocabulary order), keeping the
/// storage order (by series key) of configurations and cells.
pub fn group_series(series: &[SeriesInfo]) -> Vec<ConfigGroup> {
    let mut groups: Vec<ConfigGroup> = Vec::new();
    let mut group_index: HashMap<String, usize> = HashMap::new();
    for s in series {
        let key_text = s.series_key.to_string();
        let gi = *group_index.entry(key_text).or_insert_with(|| {
            groups.push(ConfigGroup {
                title: format::key_title(&s.series_key),
                pairs: format::key_pairs(&s.series_key),
                cells: Vec::new(),
            });
            groups.len() - 1
        });
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
        let metric = match cell.metrics.iter().position(|m| m.name == s.metric) {
            Some(mi) => &mut cell.metrics[mi],
            None => {
                cell.metrics.push(MetricRow {
                    name: s.metric.clone(),
                    label: format::metric_label(&s.metric),
                    unit: s.unit.as_str().to_string(),
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
    for group in &mut groups {
        for cell in &mut group.cells {
            cell.metrics
                .sort_by_key(|m| benchtrail_core::metric::vocabulary_rank(&m.name));
            for m in &mut cell.metrics {
                m.stats.sort_by_key(|s| format::stat_order(&s.stat));
            }
        }
    }
    groups
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

/// `/projects/{project}`.
#[derive(Template)]
#[template(path = "project.html")]
pub struct ProjectPage {
    /// The project.
    pub project: ProjectView,
    /// Series grouped by configuration and cell.
    pub groups: Vec<ConfigGroup>,
    /// Number of series listed.
    pub series_count: usize,
    /// More series exist than are listed.
    pub truncated: bool,
    /// Most recent runs.
    pub runs: Vec<RunRow>,
    /// More runs exist than are listed.
    pub more_runs: bool,
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
    /// Statistics of the same metric, configuration and cell.
    pub siblings: Vec<StatLink>,
    /// Vendored uPlot version (cache-busting query).
    pub uplot_version: &'static str,
}

impl SeriesPage {
    /// The page of `series` on `branch` with its points.
    pub fn new(
        project: &Project,
        series: &SeriesInfo,
        branch: String,
        points: &[SeriesPoint],
        siblings: Vec<StatLink>,
    ) -> SeriesPage {
        let xs = commit_indices(points);
        let def = benchtrail_core::metric::lookup(&series.metric);
        let rows: Vec<PointRow> = points
            .iter()
            .zip(&xs)
            .map(|(p, &x)| PointRow {
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
            })
            .collect();
        SeriesPage {
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
            },
            branch,
            commit_count: xs.iter().max().map_or(0, |m| m + 1),
            points: rows,
            siblings,
            uplot_version: UPLOT_VERSION,
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
    /// The series it belongs to.
    pub series_id: String,
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
    /// Its results.
    pub results: Vec<ResultView>,
    /// Total number of warnings over all results (shown at the top).
    pub warning_count: usize,
}

impl RunPage {
    /// The page of a stored run.
    pub fn new(project: &Project, run: &StoredRun) -> RunPage {
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
                        format!(
                            "{} (file {}, record {})",
                            field("format"),
                            field("file"),
                            field("record")
                        )
                    }
                    _ => String::new(),
                },
                metrics: r
                    .metrics
                    .iter()
                    .map(|m| MetricCell {
                        name: m.name.clone(),
                        label: format::metric_label(&m.name),
                        stat: m.stat.to_string(),
                        value_display: display_number(m.value),
                        value_exact: exact(m.value),
                        unit: format::unit_text(m.unit).to_string(),
                        n: m.n.map(|n| n.to_string()).unwrap_or_default(),
                        series_id: m.series_id.clone(),
                    })
                    .collect(),
            })
            .collect();
        RunPage {
            project: ProjectView::new(project),
            run: RunView {
                id: s.id.to_string(),
                row: RunRow::new(s, project),
                parents: s.parent_shas.iter().map(|p| sha_triple(p)).collect(),
                merge_base: s.merge_base_sha.as_deref().map(sha_triple),
                ci_job_text: s.ci_job_url.clone(),
                ci_job_link: s.ci_job_url.as_deref().and_then(safe_link),
                uploaded_at: display_time(&s.uploaded_at),
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
                })
                .collect(),
            warning_count: results.iter().map(|r| r.warnings.len()).sum(),
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
}
