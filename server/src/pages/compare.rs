//! `GET /compare?head={run}[&base={run}]` (and `/compare/report?base=&head=`, both named): a
//! candidate run against a baseline, per cell and
//! series: baseline → candidate, the change with the interval the decision used, the test and
//! the state (`tradeoff`, `regression`, `improvement`, `no_change`, `insufficient_data`,
//! `no_baseline`, `workload_mismatch`, ...), the cells only one side has, and every
//! configuration field that differs with the confounds highlighted.
//!
//! * **`head` only** ("compare with baseline" on a run page and in reports): the candidate's
//!   stored analysis, i.e. exactly the baseline and tests its verdict used. The baseline run
//!   named on the page is the newest run of those baseline commits (its configuration is the
//!   one the differences are listed against).
//! * **`base` and `head`**: the two runs through core's
//!   [`compare_in`](benchtrail_core::report::compare::compare_in) with the project's
//!   settings, series ids and key fields. One run per side cannot tell a change from noise, so
//!   the changes are described, never tested (the page says so).
//!
//! Either way the table is [`compare_table`] of one analysis: nothing is computed twice. When
//! either run measured a load sweep, the page also gives capacity at SLO (core's
//! [`capacity_report`] of the same two runs, as `GET /api/v1/compare/report` answers it, at
//! the default 95 % target), with each profile's attainment against load.

use super::compare_view::{
    CapacityView, CellView, CompareMode, ComparePage, DistributionView, RunLink, SeriesMeta,
};
use super::session::Visitor;
use super::validation_view::ValidationView;
use super::views::ProjectView;
use super::{PageError, PageResult};
use crate::analysis::capacity::newest_baseline_run;
use crate::api::run_results::bench_results;
use crate::app::AppState;
use crate::storage::{Project, SampleColumns, StoredRun};
use askama::Template;
use axum::extract::{Query, State};
use axum::response::Html;
use benchtrail_core::capacity::{capacity_report, ReportOptions, ReportSide};
use benchtrail_core::regression::confounds::{confounds, ConfoundReport};
use benchtrail_core::report::compare::{compare_in, CompareCommit};
use benchtrail_core::report::compare_table::{compare_table, SideValues};
use benchtrail_core::report::distribution::PerRequest;
use benchtrail_core::report::pairing::pair_by_cell;
use benchtrail_core::report::verdict_of;
use benchtrail_core::BenchResult;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use uuid::Uuid;

/// Query of the compare page.
#[derive(Debug, Deserialize)]
pub(super) struct CompareQuery {
    /// The baseline run's id; absent: the baseline of the candidate's analysis.
    base: Option<String>,
    /// The candidate run's id.
    head: Option<String>,
}

/// `GET /compare?head={run}[&base={run}]` (see the module documentation).
pub(super) async fn compare_page(
    State(state): State<AppState>,
    visitor: Visitor,
    Query(query): Query<CompareQuery>,
) -> PageResult {
    let Some(head_id) = query.head.filter(|h| !h.is_empty()) else {
        return Err(PageError::BadRequest(
            "Name the candidate run: /compare?head=<run id>, and optionally &base=<run id> \
             (without it, the baseline its analysis used). Every run page links here."
                .into(),
        ));
    };
    let (head, project) = visible_run(&state, &visitor, &head_id).await?;
    let head_run = head.summary.clone();
    // Two runs are compared afresh, with the per-request shift of `itl` from the chunk gaps;
    // an analysis is stored, and what the page computes (distributions, the capacity report)
    // reads no chunk gaps, so their decoding is skipped.
    let columns = match query.base.as_deref() {
        Some(b) if !b.is_empty() => SampleColumns::All,
        _ => SampleColumns::WithoutItl,
    };
    // The candidate's results (with their per-request samples, whose decoding is the page's
    // largest part) are read on a task of their own while the baseline's are: on two cores
    // the two decodings overlap (BENCHMARKS.md "Session 33").
    let head_task = {
        let state = state.clone();
        tokio::spawn(async move {
            let results = results_of(&state, &head, columns).await;
            (head, results)
        })
    };
    let settings = state.store.settings(&project).await?.settings;
    let mut side_values = None;
    // The baseline results the capacity report reads: the paired ones for two runs.
    let mut capacity_base: Option<Vec<BenchResult>> = None;
    let (head, head_results, analysis, base, mode, method) = match query
        .base
        .filter(|b| !b.is_empty())
    {
        Some(base_id) => {
            let (base, base_project) = visible_run(&state, &visitor, &base_id).await?;
            if base_project.id != project.id {
                return Err(PageError::BadRequest(format!(
                    "The runs belong to different projects ({} and {}): compare runs of one \
                     project.",
                    base_project.slug, project.slug
                )));
            }
            let base_results = results_of(&state, &base, columns).await?;
            let (head, head_results) = joined(head_task).await?;
            let (paired, repaired) =
                pair_by_cell(&base_results, &head_results, &project.key_fields);
            // The differences are listed against each cell's original configuration, under
            // the key it was paired by.
            let keyed: Vec<_> = paired.iter().map(|p| p.configuration.clone()).collect();
            let c = compare_in(
                &project.slug,
                &[CompareCommit {
                    commit: base.summary.commit_sha.clone(),
                    runs: vec![paired.clone()],
                }],
                &CompareCommit {
                    commit: head.summary.commit_sha.clone(),
                    runs: vec![head_results.clone()],
                },
                &settings,
                &project.key_fields,
            );
            let mut method = "Two runs, one value per side: every change is described, none \
                              is tested (one run cannot tell a change from run-to-run noise)."
                .to_string();
            if repaired > 0 {
                method.push_str(&format!(
                    " Their configurations differ, so {repaired} cell{} of the baseline {} \
                     paired with the candidate's by workload cell; the differing fields are \
                     listed under each cell.",
                    if repaired == 1 { "" } else { "s" },
                    if repaired == 1 { "is" } else { "are" },
                ));
            }
            side_values = Some(c.values);
            capacity_base = Some(paired);
            (
                head,
                head_results,
                c.analysis,
                Some((base, base_results, keyed)),
                CompareMode::Runs,
                method,
            )
        }
        None => {
            let Some(stored) = state.store.run_analysis(head_run.id).await? else {
                return Err(PageError::NotFound(format!(
                    "Run “{head_id}” has not been analyzed yet: its comparison appears here \
                     once the analysis ran (see its run page)."
                )));
            };
            let base = match newest_baseline_run(&state.store, &project, &stored.analysis).await? {
                Some(run) => {
                    let results = results_of(&state, &run, columns).await?;
                    let keyed: Vec<_> = results.iter().map(|r| r.configuration.clone()).collect();
                    Some((run, results, keyed))
                }
                None => None,
            };
            let method = "The candidate's analysis: each tested series against the baseline \
                          commits its verdict used (baseline = their mean), with the interval \
                          and test of that decision."
                .to_string();
            let (head, head_results) = joined(head_task).await?;
            (
                head,
                head_results,
                stored.analysis,
                base,
                CompareMode::Analysis,
                method,
            )
        }
    };

    // Values of untested series: the comparison's own (series ids of the paired cells) for
    // two runs; for an analysis, the candidate's and the newest baseline run's stored values.
    let mut values = SideValues::default();
    let mut meta = HashMap::new();
    collect_values(&head, &mut values.candidate, &mut meta);
    if let Some((base, _, _)) = &base {
        collect_values(base, &mut values.baseline, &mut meta);
    }
    if let Some(v) = side_values {
        values = v;
    }
    let table = compare_table(&analysis, &values);
    let alerts = if mode == CompareMode::Analysis {
        state.store.run_alerts(head.summary.id).await?
    } else {
        Vec::new()
    };
    let mut verdict = verdict_of(
        head.summary.id,
        &head.summary.commit_sha,
        Some(&analysis),
        &alerts,
        &settings.detection,
    );
    // Each result by the group it is analysed in: its (paired) configuration's series key and
    // its cell.
    // By reference: a result holds its per-request samples (200 requests × 131 floats per cell
    // in a `--save-detailed` run), and copying both runs' was 5 % of the page.
    fn by_group<'a>(
        results: &'a [BenchResult],
        keyed: &[benchtrail_core::Configuration],
        key_fields: &[String],
    ) -> HashMap<(Value, String), &'a BenchResult> {
        results
            .iter()
            .zip(keyed)
            .map(|(r, config)| {
                let key = Value::Object(config.series_key(key_fields));
                ((key, r.cell.key()), r)
            })
            .collect()
    }
    let head_configs: Vec<_> = head_results
        .iter()
        .map(|r| r.configuration.clone())
        .collect();
    let head_groups = by_group(&head_results, &head_configs, &project.key_fields);
    // A quantization change is vouched for by the candidate's quality results when they cover
    // every task of the baseline's (any, when the baseline has none): `quality::covers`.
    let quality_attached = base.as_ref().map_or(!head.quality.is_empty(), |(b, _, _)| {
        benchtrail_core::quality::covers(&b.quality, &head.quality)
    });
    let base_groups = base
        .as_ref()
        .map(|(_, r, keyed)| by_group(r, keyed, &project.key_fields))
        .unwrap_or_default();
    // Cells in numeric order of their loads and lengths (c1, c4, c16), as a reader scans them.
    let mut ordered: Vec<&benchtrail_core::report::compare_table::CompareCell> =
        table.cells.iter().collect();
    ordered.sort_by_cached_key(|c| {
        (
            super::format::key_title(&c.series_key),
            benchtrail_core::report::grouped::natural_key(&c.cell),
        )
    });
    // The validation report of the same two runs, as `GET /api/v1/compare/report` answers
    // it: capacity on the paired results, quality and quantization on the stored ones.
    let capacity_of = || {
        base.as_ref().map(|(b, stored, _)| {
            capacity_report(
                ReportSide {
                    results: capacity_base.as_deref().unwrap_or(stored),
                    quality: &b.quality,
                    as_stored: Some(stored),
                },
                ReportSide::new(&head_results, &head.quality),
                &project.key_fields,
                &settings.slo_profiles,
                ReportOptions::of_project(&settings),
            )
        })
    };
    // The report (its bootstrap intervals of the slowest users' wait: a quarter of the page's
    // CPU at 36 cells with per-request samples) on a thread of its own beside the cells' views
    // (their distributions: a sixth): the page is CPU work on one request's task, and the
    // server has more than one core (BENCHMARKS.md "Session 44").
    let (cells, report) = std::thread::scope(|scope| {
        let capacity_task = scope.spawn(capacity_of);
        let cells = ordered
            .into_iter()
            .enumerate()
            .map(|(i, cell)| {
                let key = (cell.series_key.clone(), cell.cell.clone());
                let report: Option<ConfoundReport> = head_groups.get(&key).and_then(|h| {
                    // The baseline's result of the same cell, else of the configuration's first
                    // cell: the configuration differs by design when the cell is new.
                    let b = base_groups.get(&key).or_else(|| {
                        base_groups
                            .iter()
                            .find(|((k, _), _)| *k == cell.series_key)
                            .map(|(_, r)| r)
                    })?;
                    Some(confounds(
                        (&b.configuration, &b.cell),
                        (&h.configuration, &h.cell),
                        quality_attached,
                    ))
                });
                let unvouched = report.as_ref().and_then(|r| {
                    r.warnings
                        .iter()
                        .find(|w| w.code == "quantization_without_quality")
                        .map(|w| (cell.cell.clone(), w.message.clone()))
                });
                // Per-request distributions of the same cell on both sides.
                let (bs, hs) = (
                    base_groups.get(&key).and_then(|r| r.samples.as_ref()),
                    head_groups.get(&key).and_then(|r| r.samples.as_ref()),
                );
                let distributions = [PerRequest::Ttft, PerRequest::Tpot]
                    .into_iter()
                    .filter_map(|m| {
                        DistributionView::new(format!("cdf-{i}-{}", m.metric()), m, bs, hs)
                    })
                    .collect();
                (
                    CellView::new(i, cell, &meta, report.as_ref(), distributions),
                    unvouched,
                )
            })
            .collect::<Vec<_>>();
        let report = capacity_task
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (cells, report)
    });
    // The comparison says so in the cell, and the verdict is at least `warn`.
    let (cells, unvouched): (Vec<_>, Vec<_>) = cells.into_iter().unzip();
    for (cell, message) in unvouched.into_iter().flatten() {
        verdict.add_warning(
            benchtrail_core::report::verdict::ReasonCode::QuantizationWithoutQuality,
            message,
            Some(&cell),
        );
    }
    let capacity = report.as_ref().and_then(CapacityView::new);
    let validation = report.as_ref().and_then(ValidationView::new);
    let gap = |g: &benchtrail_core::report::coverage::CellGap| {
        (g.cell.clone(), super::format::key_title(&g.series_key))
    };
    let page = ComparePage {
        header: visitor.header(),
        project: ProjectView::new(&project),
        capacity_url: base.as_ref().map(|(b, _, _)| {
            format!(
                "/api/v1/compare/report?base={}&head={}&format=markdown",
                b.summary.id, head.summary.id
            )
        }),
        head: RunLink::new(&head),
        base: base.as_ref().map(|(b, _, _)| RunLink::new(b)),
        mode,
        method,
        verdict: verdict.verdict.as_str().to_string(),
        cells,
        capacity,
        validation,
        uplot_version: super::assets::UPLOT_VERSION,
        missing_cells: table.missing_cells.iter().map(gap).collect(),
        new_cells: table.new_cells.iter().map(gap).collect(),
    };
    Ok(Html(page.render()?))
}

/// `GET /compare/report?base={run}&head={run}`: the validation report of two runs named on
/// purpose (the capacity question's page): the compare page of the pair, which must name both.
pub(super) async fn compare_report_page(
    state: State<AppState>,
    visitor: Visitor,
    Query(query): Query<CompareQuery>,
) -> PageResult {
    if query.base.as_deref().is_none_or(str::is_empty) {
        return Err(PageError::BadRequest(
            "Name both runs: /compare/report?base=<run id>&head=<run id>. For one run against \
             the baseline its analysis used, open /compare?head=<run id>."
                .into(),
        ));
    }
    compare_page(state, visitor, Query(query)).await
}

/// The run with this id and its project, if `visitor` may see them (else the same 404 as a
/// run that does not exist).
pub(super) async fn visible_run(
    state: &AppState,
    visitor: &Visitor,
    id: &str,
) -> Result<(StoredRun, Project), PageError> {
    let not_found = || PageError::NotFound(format!("There is no run “{id}”."));
    let uuid = Uuid::parse_str(id).map_err(|_| not_found())?;
    let run = state.store.run(uuid).await?.ok_or_else(not_found)?;
    match state.store.project(&run.summary.project).await? {
        Some(p) if visitor.may_read(&p) => Ok((run, p)),
        _ => Err(not_found()),
    }
}

/// The run and its results read by a task of [`compare_page`]'s.
async fn joined(
    task: tokio::task::JoinHandle<(StoredRun, Result<Vec<BenchResult>, PageError>)>,
) -> Result<(StoredRun, Vec<BenchResult>), PageError> {
    let (run, results) = task
        .await
        .map_err(|e| PageError::Internal(format!("results of the candidate run: {e}")))?;
    Ok((run, results?))
}

/// A run's results as core reads them.
async fn results_of(
    state: &AppState,
    run: &StoredRun,
    columns: SampleColumns,
) -> Result<Vec<BenchResult>, PageError> {
    bench_results(state, run, columns)
        .await
        .map_err(|e| PageError::Internal(format!("results of run {}: {e:?}", run.summary.id)))
}

/// Each series' value in `run` (the mean when several results of the run hold it), and its
/// unit and profile.
pub(super) fn collect_values(
    run: &StoredRun,
    values: &mut HashMap<String, f64>,
    meta: &mut HashMap<String, SeriesMeta>,
) {
    let mut sums: HashMap<&str, (f64, usize)> = HashMap::new();
    for m in run.results.iter().flat_map(|r| &r.metrics) {
        let e = sums.entry(m.series_id.as_str()).or_default();
        e.0 += m.value;
        e.1 += 1;
        meta.entry(m.series_id.clone())
            .or_insert_with(|| SeriesMeta {
                unit: m.unit,
                slo_profile: m.slo_profile.clone(),
            });
    }
    for (id, (sum, n)) in sums {
        values.insert(id.to_string(), sum / n as f64);
    }
}
