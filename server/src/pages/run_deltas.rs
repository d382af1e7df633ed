//! A run's change against the baseline its stored analysis used, per series: what the run
//! page's metric tables and the validation matrix (`/runs/{id}/matrix`) show.
//!
//! It is the compare page's table in analysis mode (`/compare?head={run}`), read the same
//! way: core's [`compare_table`] of the run's stored [`RunAnalysis`], with the candidate's
//! stored values and the newest baseline run's for the series the analysis did not test.
//! Nothing is decided here: baseline, delta and state are the analysis'.

use super::compare::collect_values;
use super::compare_view::{RowView, SeriesMeta};
use super::PageError;
use crate::analysis::capacity::newest_baseline_run;
use crate::app::AppState;
use crate::storage::{Project, StoredRun};
use benchtrail_core::report::compare_table::{compare_table, CompareTable, SideValues};
use benchtrail_core::report::RunAnalysis;
use std::collections::HashMap;

/// The run's analysis as a comparison table, with what the page needs to show its rows.
#[derive(Debug, Clone)]
pub struct RunDeltas {
    /// The stored analysis the table was read from.
    pub analysis: RunAnalysis,
    /// Per group of the analysis, baseline → candidate per series.
    pub table: CompareTable,
    /// Unit and SLO profile of each series, from the stored metrics of both runs.
    pub meta: HashMap<String, SeriesMeta>,
    /// The newest run of the baseline commits the analysis tested against, if anything was
    /// tested.
    pub baseline_run: Option<StoredRun>,
}

impl RunDeltas {
    /// Each series' row as the compare page shows it, by series id.
    pub fn rows(&self) -> HashMap<String, RowView> {
        self.table
            .cells
            .iter()
            .flat_map(|c| &c.rows)
            .map(|r| {
                (
                    r.series_id.clone(),
                    RowView::new(r, self.meta.get(&r.series_id)),
                )
            })
            .collect()
    }
}

/// The deltas of `run` against its analysis' baseline; `None` when the run was never
/// analyzed.
pub async fn run_deltas(
    state: &AppState,
    project: &Project,
    run: &StoredRun,
) -> Result<Option<RunDeltas>, PageError> {
    let Some(stored) = state.store.run_analysis(run.summary.id).await? else {
        return Ok(None);
    };
    let baseline_run = newest_baseline_run(&state.store, project, &stored.analysis).await?;
    let mut values = SideValues::default();
    let mut meta = HashMap::new();
    collect_values(run, &mut values.candidate, &mut meta);
    if let Some(base) = &baseline_run {
        collect_values(base, &mut values.baseline, &mut meta);
    }
    let table = compare_table(&stored.analysis, &values);
    Ok(Some(RunDeltas {
        analysis: stored.analysis,
        table,
        meta,
        baseline_run,
    }))
}
