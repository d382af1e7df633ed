//! `GET /runs/{id}/matrix?metric=&stat=[&profile=]`: the validation matrix of a run, its cells
//! as a grid, each colored by the chosen series' change against the baseline the run's
//! stored analysis used ([`super::run_deltas`], the compare page's table: nothing is
//! computed a second way).
//!
//! # Layout ([`layout`])
//! * **The standard matrix** of the validation method (`shared` notes: three task types ×
//!   fresh and reusable prefixes × low, typical and near-capacity load = 18 cells) when every
//!   cell of the configuration carries the three labels (`benchtrail upload --cell
//!   scenario=…,prefix_mode=…,load_level=…`): rows are scenario × prefix mode, columns the
//!   load levels; every one of the 18 slots is drawn, measured or not, and labels outside the
//!   standard ones get rows or columns of their own after them.
//! * **Otherwise** the load axis × workload: columns are the offered loads
//!   (`max_concurrency` or `request_rate`, with `load_level` when given), rows the workload
//!   (the cell without its load fields and `num_prompts`, as a capacity sweep groups cells).
//!
//! One grid per configuration (series key). A slot without a cell is "not measured"; a cell
//! of the baseline commit the run lacks is "missing"; a cell without the chosen series says
//! "not measured" too. Colors are the Okabe–Ito orange (worse) and blue (better): strong
//! for a finding; light for a tested change of at least the project's minimum effect that is
//! not one, or for an untested change (dashed); grey for the rest. Each slot also says its
//! state in words, the signed change and ▲/▼, so color is never the only sign.

use super::compare::visible_run;
use super::compare_view::{RowView, RunLink};
use super::format::{self, key_title};
use super::run_deltas::run_deltas;
use super::session::{SiteHeader, Visitor};
use super::views::ProjectView;
use super::PageResult;
use crate::app::AppState;
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::Html;
use benchtrail_core::metric::{display_order, lookup, Direction};
use benchtrail_core::report::compare_table::CompareCell;
use benchtrail_core::report::grouped::{cell_label, natural_key};
use benchtrail_core::Stat;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The task types of the standard matrix, in its order.
pub const SCENARIOS: [&str; 3] = ["short-chat", "long-doc-qa", "long-output"];
/// Its prefix modes.
pub const PREFIX_MODES: [&str; 2] = ["fresh", "reusable"];
/// Its load levels.
pub const LOAD_LEVELS: [&str; 3] = ["low", "typical", "near-capacity"];
/// Cell fields that are the load (columns of the load layout); `num_prompts` is left out of
/// the workload too, as sweeps scale it with the load.
const LOAD_FIELDS: [&str; 3] = ["load_level", "max_concurrency", "request_rate"];

/// Query of the matrix page.
#[derive(Debug, Deserialize)]
pub(super) struct MatrixQuery {
    /// Metric (`ttft`, `output_throughput`, ...); default `ttft`.
    metric: Option<String>,
    /// Statistic (`p50`, `mean`, `value`, ...); default `p50`, else the metric's first.
    stat: Option<String>,
    /// SLO profile, for goodput and attainment; default the first.
    profile: Option<String>,
}

/// The fields of a cell key (`k=v;k=v`), values unescaped.
fn fields(key: &str) -> Vec<(&str, String)> {
    key.split(';')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k, unescape(v)))
        .collect()
}

/// `%3B` → `;`: the escaping of [`benchtrail_core::WorkloadCell::key`] undone for reading.
fn unescape(v: &str) -> String {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(b) = u8::from_str_radix(hex, 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| v.to_string())
}

fn field<'a>(f: &'a [(&str, String)], name: &str) -> Option<&'a str> {
    f.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
}

/// Where each cell of one configuration goes.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// The standard 18-cell matrix (else load axis × workload).
    pub standard: bool,
    /// What the rows are (`scenario · prefix mode`, `workload`).
    pub row_axis: String,
    /// What the columns are (`load level`, `max_concurrency`, `request_rate`, `load`).
    pub column_axis: String,
    /// Row labels, in order.
    pub rows: Vec<String>,
    /// Column labels, in order (the load's value alone when the axis is one field).
    pub columns: Vec<String>,
    /// (row, column) of each cell, in the input order.
    pub places: Vec<(usize, usize)>,
}

/// Labels in the standard order, then the others in natural order.
fn ordered(standard: &[&str], found: impl Iterator<Item = String>) -> Vec<String> {
    let mut extra: Vec<String> = found.filter(|f| !standard.contains(&f.as_str())).collect();
    extra.sort_by_cached_key(|s| natural_key(s));
    extra.dedup();
    standard
        .iter()
        .map(|s| s.to_string())
        .chain(extra)
        .collect()
}

/// The grid of `cells` (cell keys of one configuration); see the module documentation.
pub fn layout(cells: &[&str]) -> Layout {
    let parsed: Vec<Vec<(&str, String)>> = cells.iter().map(|c| fields(c)).collect();
    let labelled = !parsed.is_empty()
        && parsed.iter().all(|f| {
            ["scenario", "prefix_mode", "load_level"]
                .iter()
                .all(|n| field(f, n).is_some())
        });
    if labelled {
        let get = |f: &Vec<(&str, String)>, n: &str| field(f, n).unwrap_or_default().to_string();
        let scenarios = ordered(&SCENARIOS, parsed.iter().map(|f| get(f, "scenario")));
        let prefixes = ordered(&PREFIX_MODES, parsed.iter().map(|f| get(f, "prefix_mode")));
        let columns = ordered(&LOAD_LEVELS, parsed.iter().map(|f| get(f, "load_level")));
        let rows: Vec<(String, String)> = scenarios
            .iter()
            .flat_map(|s| prefixes.iter().map(move |p| (s.clone(), p.clone())))
            .collect();
        let places = parsed
            .iter()
            .map(|f| {
                let row = (get(f, "scenario"), get(f, "prefix_mode"));
                let col = get(f, "load_level");
                (
                    rows.iter()
                        .position(|r| *r == row)
                        .expect("every row listed"),
                    columns
                        .iter()
                        .position(|c| *c == col)
                        .expect("every column"),
                )
            })
            .collect();
        return Layout {
            standard: true,
            row_axis: "scenario · prefix mode".into(),
            column_axis: "load level".into(),
            rows: rows
                .into_iter()
                .map(|(s, p)| format!("{s} · {p}"))
                .collect(),
            columns,
            places,
        };
    }
    let join = |f: &[(&str, String)], keep: &dyn Fn(&str) -> bool| {
        f.iter()
            .filter(|(k, _)| keep(k))
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";")
    };
    let load = |f: &Vec<(&str, String)>| {
        // A rate of `inf` next to a concurrency is the default, not a second load.
        let fixed =
            field(f, "max_concurrency").is_some() && field(f, "request_rate") == Some("inf");
        let label = join(f, &|k| {
            LOAD_FIELDS.contains(&k) && !(fixed && k == "request_rate")
        });
        if label.is_empty() {
            "no load recorded".to_string()
        } else {
            label
        }
    };
    let workload =
        |f: &Vec<(&str, String)>| join(f, &|k| !LOAD_FIELDS.contains(&k) && k != "num_prompts");
    let loads: Vec<String> = parsed.iter().map(load).collect();
    let works: Vec<String> = parsed.iter().map(workload).collect();
    let mut columns = loads.clone();
    columns.sort_by_cached_key(|s| natural_key(s));
    columns.dedup();
    let mut rows = works.clone();
    rows.sort_by_cached_key(|s| natural_key(s));
    rows.dedup();
    let places = loads
        .iter()
        .zip(&works)
        .map(|(l, w)| {
            (
                rows.iter().position(|r| r == w).expect("every row"),
                columns.iter().position(|c| c == l).expect("every column"),
            )
        })
        .collect();
    let only = |name: &str| {
        columns
            .iter()
            .all(|c| c.split(';').all(|kv| kv.starts_with(&format!("{name}="))))
    };
    let column_axis = if only("max_concurrency") {
        "max_concurrency"
    } else if only("request_rate") {
        "request_rate"
    } else {
        "load"
    };
    // One load field: the axis names it, each column gives its value.
    let column_labels = columns
        .iter()
        .map(|c| match column_axis {
            "load" => c.replace(';', "; "),
            axis => c.strip_prefix(&format!("{axis}=")).unwrap_or(c).to_string(),
        })
        .collect();
    let all: Vec<&str> = rows.iter().map(String::as_str).collect();
    // `; ` between fields, so a long label wraps between them.
    let row_labels = rows
        .iter()
        .map(|r| match (rows.len(), r.is_empty()) {
            (_, true) => "every cell".to_string(),
            (1, false) => r.replace(';', "; "),
            _ => cell_label(r, &all).replace(';', "; "),
        })
        .collect();
    Layout {
        standard: false,
        row_axis: "workload".into(),
        column_axis: column_axis.into(),
        rows: row_labels,
        columns: column_labels,
        places,
    }
}

/// One cell in a slot of the grid.
#[derive(Debug, Clone)]
pub struct MatrixCell {
    /// Cell key.
    pub cell: String,
    /// The chosen series of this cell, when it has one (its series page).
    pub series_id: String,
    /// `tradeoff`, `regression`, `no_change`, ..., `not_measured`, `missing`.
    pub state: String,
    /// The state in words.
    pub state_text: String,
    /// `worse`, `better`, `worse-light`, `better-light`, `quiet` or `absent`: the color.
    pub tone: &'static str,
    /// Not tested (insufficient data, no baseline, ...): drawn with a dashed border.
    pub untested: bool,
    /// `▲ worse`, `▼ better` or empty.
    pub mark: String,
    /// `+7.40 %`, or `—`.
    pub delta: String,
    /// Exact percent change, or empty.
    pub delta_exact: String,
    /// Baseline value for reading, or `—`.
    pub baseline: String,
    /// Candidate value for reading, or `—`.
    pub candidate: String,
    /// Exact candidate value, or empty.
    pub candidate_exact: String,
    /// Unit text.
    pub unit: String,
}

impl MatrixCell {
    /// A cell of the run holding the chosen series' `row`, or none (`not measured`);
    /// `min_effect_pct` is the project's minimum effect (a tested change at least this large
    /// that is not a finding is drawn light).
    fn measured(cell: &str, row: Option<&RowView>, min_effect_pct: f64) -> MatrixCell {
        let Some(r) = row else {
            return MatrixCell::absent(cell, "not_measured", "not measured");
        };
        let direction_of_delta = lookup(&r.metric).map(|d| d.direction);
        let delta: Option<f64> = r.delta_exact.parse().ok();
        let lean = match (direction_of_delta, delta) {
            (Some(Direction::LowerIsBetter), Some(d)) if d > 0.0 => "worse",
            (Some(Direction::LowerIsBetter), Some(d)) if d < 0.0 => "better",
            (Some(Direction::HigherIsBetter), Some(d)) if d < 0.0 => "worse",
            (Some(Direction::HigherIsBetter), Some(d)) if d > 0.0 => "better",
            _ => "",
        };
        let (tone, untested) = match r.state {
            "tradeoff" | "regression" | "improvement" => (
                match r.direction {
                    "better" => "better",
                    "worse" => "worse",
                    _ => "quiet",
                },
                false,
            ),
            "no_change" => (
                match lean {
                    _ if delta.is_none_or(|d| d.abs() < min_effect_pct) => "quiet",
                    "worse" => "worse-light",
                    "better" => "better-light",
                    _ => "quiet",
                },
                false,
            ),
            "not_measured" | "missing" => ("absent", false),
            _ => (
                match lean {
                    "worse" => "worse-light",
                    "better" => "better-light",
                    _ => "quiet",
                },
                true,
            ),
        };
        // A change too small to matter gets no arrow: only the number says which way.
        let mark = if tone == "quiet" {
            ""
        } else if r.mark.is_empty() && tone.ends_with("-light") {
            // Not a finding: the arrow follows the value, the word the metric's direction.
            match (lean, delta.unwrap_or(0.0) > 0.0) {
                ("worse", true) => "▲ worse",
                ("worse", false) => "▼ worse",
                ("better", true) => "▲ better",
                _ => "▼ better",
            }
        } else {
            r.mark
        };
        MatrixCell {
            cell: cell.to_string(),
            series_id: r.series_id.clone(),
            state: r.state.to_string(),
            state_text: r.state_text.clone(),
            tone,
            untested,
            mark: mark.to_string(),
            delta: r.delta.clone(),
            delta_exact: r.delta_exact.clone(),
            baseline: r.baseline.clone(),
            candidate: r.candidate.clone(),
            candidate_exact: r.candidate_exact.clone(),
            unit: r.unit.clone(),
        }
    }

    /// A cell with nothing to show but its state.
    fn absent(cell: &str, state: &str, text: &str) -> MatrixCell {
        MatrixCell {
            cell: cell.to_string(),
            series_id: String::new(),
            state: state.to_string(),
            state_text: text.to_string(),
            tone: "absent",
            untested: false,
            mark: String::new(),
            delta: "—".into(),
            delta_exact: String::new(),
            baseline: "—".into(),
            candidate: "—".into(),
            candidate_exact: String::new(),
            unit: String::new(),
        }
    }
}

/// One row of a grid.
#[derive(Debug, Clone)]
pub struct GridRow {
    /// Its label.
    pub label: String,
    /// One slot per column: the cells there (empty: not measured).
    pub slots: Vec<Vec<MatrixCell>>,
}

/// The grid of one configuration.
#[derive(Debug, Clone)]
pub struct GridView {
    /// Anchor id (`grid-0`).
    pub id: String,
    /// The configuration (model · hardware · ...).
    pub title: String,
    /// `standard` or `load`.
    pub layout: &'static str,
    /// What the rows are.
    pub row_axis: String,
    /// What the columns are.
    pub column_axis: String,
    /// Column labels.
    pub columns: Vec<String>,
    /// Rows.
    pub rows: Vec<GridRow>,
    /// Slots without a cell.
    pub empty_slots: usize,
}

/// An option of a select.
#[derive(Debug, Clone)]
pub struct OptionView {
    /// Its value.
    pub value: String,
    /// Its text.
    pub label: String,
    /// Chosen.
    pub selected: bool,
}

/// `/runs/{id}/matrix`.
#[derive(Template)]
#[template(path = "matrix.html")]
pub struct MatrixPage {
    /// The run's project.
    pub project: ProjectView,
    /// The run.
    pub run: RunLink,
    /// The newest run of the baseline commits, when something was tested.
    pub baseline: Option<RunLink>,
    /// The run was analyzed (else there is no matrix to show).
    pub analyzed: bool,
    /// The chosen series in words (`median TTFT`), with its SLO profile.
    pub chosen: String,
    /// A sentence when the address asked for something the run does not have.
    pub notice: String,
    /// The project's minimum effect (`2 %`).
    pub min_effect: String,
    /// Metric options.
    pub metrics: Vec<OptionView>,
    /// Statistic options of the chosen metric.
    pub stats: Vec<OptionView>,
    /// SLO profile options of the chosen metric (empty when it has none).
    pub profiles: Vec<OptionView>,
    /// One grid per configuration.
    pub grids: Vec<GridView>,
    /// The site header.
    pub header: SiteHeader,
}

/// A series of the analysis: metric, statistic and SLO profile.
type Choice = (String, Stat, Option<String>);

/// `GET /runs/{id}/matrix` (see the module documentation).
pub(super) async fn matrix_page(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(id): Path<String>,
    Query(query): Query<MatrixQuery>,
) -> PageResult {
    let (run, project) = visible_run(&state, &visitor, &id).await?;
    let mut page = MatrixPage {
        project: ProjectView::new(&project),
        run: RunLink::new(&run),
        baseline: None,
        analyzed: false,
        chosen: String::new(),
        notice: String::new(),
        min_effect: String::new(),
        metrics: Vec::new(),
        stats: Vec::new(),
        profiles: Vec::new(),
        grids: Vec::new(),
        header: visitor.header(),
    };
    let Some(deltas) = run_deltas(&state, &project, &run).await? else {
        return Ok(Html(page.render()?));
    };
    page.analyzed = true;
    let min_effect_pct = state
        .store
        .settings(&project)
        .await?
        .settings
        .detection
        .engine
        .min_effect_pct;
    page.min_effect = format!("{min_effect_pct} %");
    page.baseline = deltas.baseline_run.as_ref().map(RunLink::new);
    let profile_of = |series_id: &str| {
        deltas
            .meta
            .get(series_id)
            .and_then(|m| m.slo_profile.clone())
    };
    // Every series the analysis holds, in display order.
    let mut choices: Vec<Choice> = Vec::new();
    for r in deltas.table.cells.iter().flat_map(|c| &c.rows) {
        let c = (r.metric.clone(), r.stat.clone(), profile_of(&r.series_id));
        if !choices.contains(&c) {
            choices.push(c);
        }
    }
    choices
        .sort_by_cached_key(|(m, s, p)| (display_order(m, s), format::profile_order(p.as_deref())));
    let (chosen, notice) = choose(&choices, &query);
    page.notice = notice;
    if let Some((metric, stat, profile)) = &chosen {
        let mut metrics: Vec<&String> = choices.iter().map(|(m, _, _)| m).collect();
        metrics.dedup();
        page.metrics = metrics
            .into_iter()
            .map(|m| OptionView {
                value: m.clone(),
                label: format::metric_label(m),
                selected: m == metric,
            })
            .collect();
        let mut stats: Vec<&Stat> = choices
            .iter()
            .filter(|(m, _, _)| m == metric)
            .map(|(_, s, _)| s)
            .collect();
        stats.dedup();
        page.stats = stats
            .into_iter()
            .map(|s| OptionView {
                value: s.to_string(),
                label: s.to_string(),
                selected: s == stat,
            })
            .collect();
        page.profiles = choices
            .iter()
            .filter(|(m, s, p)| m == metric && s == stat && p.is_some())
            .filter_map(|(_, _, p)| p.clone())
            .map(|p| OptionView {
                selected: Some(&p) == profile.as_ref(),
                label: p.clone(),
                value: p,
            })
            .collect();
        page.chosen =
            benchtrail_core::regression::describe_series(metric, stat, profile.as_deref());
        let rows = deltas.rows();
        // The groups of each configuration, by title.
        let mut configs: BTreeMap<String, (Value, Vec<&CompareCell>)> = BTreeMap::new();
        for c in &deltas.table.cells {
            configs
                .entry(key_title(&c.series_key))
                .or_insert_with(|| (c.series_key.clone(), Vec::new()))
                .1
                .push(c);
        }
        for gap in &deltas.table.missing_cells {
            configs
                .entry(key_title(&gap.series_key))
                .or_insert_with(|| (gap.series_key.clone(), Vec::new()));
        }
        for (i, (title, (series_key, cells))) in configs.into_iter().enumerate() {
            let mut placed: Vec<MatrixCell> = cells
                .iter()
                .map(|c| {
                    let row = c.rows.iter().find(|r| {
                        r.metric == *metric
                            && r.stat == *stat
                            && profile_of(&r.series_id) == *profile
                    });
                    MatrixCell::measured(
                        &c.cell,
                        row.and_then(|r| rows.get(&r.series_id)),
                        min_effect_pct,
                    )
                })
                .collect();
            placed.extend(
                deltas
                    .table
                    .missing_cells
                    .iter()
                    .filter(|g| g.series_key == series_key)
                    .map(|g| MatrixCell::absent(&g.cell, "missing", "missing from this run")),
            );
            let keys: Vec<&str> = placed.iter().map(|c| c.cell.as_str()).collect();
            let l = layout(&keys);
            let mut grid_rows: Vec<GridRow> = l
                .rows
                .iter()
                .map(|label| GridRow {
                    label: label.clone(),
                    slots: vec![Vec::new(); l.columns.len()],
                })
                .collect();
            for (cell, (r, c)) in placed.into_iter().zip(&l.places) {
                grid_rows[*r].slots[*c].push(cell);
            }
            page.grids.push(GridView {
                id: format!("grid-{i}"),
                title,
                layout: if l.standard { "standard" } else { "load" },
                row_axis: l.row_axis,
                column_axis: l.column_axis,
                empty_slots: grid_rows
                    .iter()
                    .flat_map(|r| &r.slots)
                    .filter(|s| s.is_empty())
                    .count(),
                columns: l.columns,
                rows: grid_rows,
            });
        }
    }
    Ok(Html(page.render()?))
}

/// The series to show: the address's when the analysis has it, else `ttft p50`, else the
/// first; with a sentence when the address asked for something else.
fn choose(choices: &[Choice], q: &MatrixQuery) -> (Option<Choice>, String) {
    let asked_metric = q.metric.as_deref().filter(|m| !m.is_empty());
    let asked_stat = q.stat.as_deref().filter(|s| !s.is_empty());
    let metric = asked_metric.unwrap_or("ttft");
    let of_metric: Vec<&Choice> = choices.iter().filter(|(m, _, _)| m == metric).collect();
    if of_metric.is_empty() {
        let notice = match asked_metric {
            Some(m) => format!("This run has no {m} in its analysis: showing the first metric."),
            None => String::new(),
        };
        return (choices.first().cloned(), notice);
    }
    let stat = asked_stat.unwrap_or("p50");
    let of_stat: Vec<&&Choice> = of_metric
        .iter()
        .filter(|(_, s, _)| s.to_string() == stat)
        .collect();
    let Some(first) = of_stat.first() else {
        let notice = match asked_stat {
            Some(s) => format!(
                "{} has no statistic {s} here: showing {}.",
                format::metric_label(metric),
                of_metric[0].1
            ),
            None => String::new(),
        };
        return (Some(of_metric[0].clone()), notice);
    };
    let asked_profile = q.profile.as_deref().filter(|p| !p.is_empty());
    let profiled = of_stat
        .iter()
        .find(|(_, _, p)| p.as_deref() == asked_profile)
        .unwrap_or(first);
    (Some((**profiled).clone()), String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_matrix_has_eighteen_slots_in_its_order() {
        let cells = [
            "scenario=long-output;prefix_mode=reusable;load_level=near-capacity;max_concurrency=64",
            "scenario=short-chat;prefix_mode=fresh;load_level=low;max_concurrency=1",
        ];
        let l = layout(&cells);
        assert!(l.standard);
        assert_eq!(l.rows.len(), 6);
        assert_eq!(l.columns, ["low", "typical", "near-capacity"]);
        assert_eq!(l.rows[0], "short-chat · fresh");
        assert_eq!(l.rows[5], "long-output · reusable");
        assert_eq!(l.places, [(5, 2), (0, 0)]);
    }

    #[test]
    fn other_cells_are_load_by_workload_in_numeric_order() {
        let cells = [
            "max_concurrency=16;request_rate=inf;input_len=8000;output_len=1000;num_prompts=160",
            "max_concurrency=1;request_rate=inf;input_len=8000;output_len=1000;num_prompts=10",
            "max_concurrency=4;request_rate=inf;input_len=512;output_len=128;num_prompts=40",
        ];
        let l = layout(&cells);
        assert!(!l.standard);
        assert_eq!(l.column_axis, "max_concurrency");
        assert_eq!(l.columns, ["1", "4", "16"]);
        assert_eq!(
            l.rows,
            [
                "input_len=512; output_len=128",
                "input_len=8000; output_len=1000"
            ]
        );
        assert_eq!(l.places, [(1, 2), (1, 0), (0, 1)]);
    }

    #[test]
    fn a_rate_sweep_has_rate_columns_and_both_limits_name_both() {
        let l = layout(&[
            "request_rate=5;burstiness=1;input_len=512",
            "request_rate=2.5;burstiness=1;input_len=512",
        ]);
        assert_eq!(l.column_axis, "request_rate");
        assert_eq!(l.columns, ["2.5", "5"]);
        assert_eq!(l.rows, ["burstiness=1; input_len=512"]);
        let l = layout(&[
            "max_concurrency=8;request_rate=2;input_len=512",
            "input_len=512",
        ]);
        assert_eq!(l.column_axis, "load");
        assert_eq!(
            l.columns,
            ["max_concurrency=8; request_rate=2", "no load recorded"]
        );
    }

    #[test]
    fn key_escapes_are_undone_for_reading() {
        assert_eq!(unescape("chat%3Bload_level%3Dhigh"), "chat;load_level=high");
        assert_eq!(unescape("100%"), "100%");
    }
}
