//! A stored run's results as [`BenchResult`]s again (configuration, cell, metrics, facts and
//! per-request samples), for the pure computations of core that take what an adapter reads
//! (the capacity report, [`benchtrail_core::capacity`]). Warnings and sources are not restored.

use crate::app::AppState;
use crate::error::{ApiError, ApiResult};
use crate::storage::{SampleColumns, Store, StoredRun};
use benchtrail_core::metric::MetricValue;
use benchtrail_core::{BenchResult, Configuration};
use std::collections::HashMap;

/// The results of `run`, in upload order, with their samples (the `columns` asked for: the
/// capacity report reads no chunk gaps, a comparison's per-request shift of `itl` does).
///
/// # Errors
/// [`ApiError::Internal`] when a stored configuration, cell or facts object does not read back
/// (a corrupt store); a store failure as [`ApiError`].
pub(crate) async fn bench_results(
    state: &AppState,
    run: &StoredRun,
    columns: SampleColumns,
) -> ApiResult<Vec<BenchResult>> {
    stored_bench_results(&state.store, run, columns).await
}

/// [`bench_results`] from a store.
///
/// # Errors
/// As [`bench_results`].
pub(crate) async fn stored_bench_results(
    store: &Store,
    run: &StoredRun,
    columns: SampleColumns,
) -> ApiResult<Vec<BenchResult>> {
    let corrupt = |what: &str, e: serde_json::Error| {
        ApiError::Internal(format!(
            "run {}: stored {what} does not read: {e}",
            run.summary.id
        ))
    };
    let mut out = Vec::with_capacity(run.results.len());
    // One query for every result's samples, and each configuration read once: the cells of a
    // run mostly share one (18 cells, one configuration).
    let mut samples = store.run_samples(run.summary.id, columns).await?;
    let mut configurations: HashMap<&str, Configuration> = HashMap::new();
    for r in &run.results {
        let fingerprint = r.config_fingerprint.as_str();
        if !configurations.contains_key(fingerprint) {
            let config = store.config(fingerprint).await?.ok_or_else(|| {
                ApiError::Internal(format!(
                    "run {}: configuration {fingerprint} is not stored",
                    run.summary.id
                ))
            })?;
            let configuration = serde_json::from_value(config.configuration)
                .map_err(|e| corrupt("configuration", e))?;
            configurations.insert(fingerprint, configuration);
        }
        let configuration = configurations[fingerprint].clone();
        // The stored cell object carries its `key` beside the cell's own fields.
        let mut cell = r.cell.clone();
        if let Some(o) = cell.as_object_mut() {
            o.remove("key");
        }
        let cell = serde_json::from_value(cell).map_err(|e| corrupt("cell", e))?;
        let facts = r.facts.as_object().cloned().unwrap_or_default();
        let metrics = r
            .metrics
            .iter()
            .map(|m| MetricValue {
                name: m.name.clone(),
                stat: m.stat.clone(),
                unit: m.unit,
                value: m.value,
                n: m.n,
                slo_profile: m.slo_profile.clone(),
                ci: m.ci.clone(),
            })
            .collect();
        out.push(BenchResult {
            cell,
            configuration,
            metrics,
            facts,
            warnings: Vec::new(),
            samples: samples.remove(&r.index),
            source: None,
        });
    }
    Ok(out)
}
