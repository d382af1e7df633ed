//! What the pages say about baselines a person chose: a run's exclusion from baselines and
//! the series it is pinned as the baseline of (on the run page), and which points of a series
//! are excluded or the pinned baseline (on the series page).

use super::format::{display_time, machine_time, metric_label};
use super::PointRow;
use crate::storage::{Project, StorageError, Store, StoredRun};
use uuid::Uuid;

/// A run's exclusion from baselines, as shown.
#[derive(Debug, Clone)]
pub struct ExclusionView {
    /// The reason, as given.
    pub reason: String,
    /// When, for reading.
    pub at: String,
    /// When, RFC 3339.
    pub at_machine: String,
}

/// A series a run is pinned as the baseline of.
#[derive(Debug, Clone)]
pub struct PinnedSeries {
    /// Series id.
    pub series_id: String,
    /// Metric label and statistic (and SLO profile), e.g. `TTFT p99`.
    pub label: String,
    /// Cell key of the series.
    pub cell_key: String,
}

/// The run page's lines about baselines; empty when the run is neither excluded nor pinned.
#[derive(Debug, Clone, Default)]
pub struct RunBaselines {
    /// Set when the run is excluded from baselines.
    pub exclusion: Option<ExclusionView>,
    /// The series whose pin names this run, by label (each pin applies to its series' whole
    /// result group).
    pub pinned: Vec<PinnedSeries>,
}

impl RunBaselines {
    /// Whether there is anything to say.
    pub fn is_empty(&self) -> bool {
        self.exclusion.is_none() && self.pinned.is_empty()
    }
}

/// What the run page says about `run`'s exclusion and the pins naming it.
pub async fn run_baselines(
    store: &Store,
    project: &Project,
    run: &StoredRun,
) -> Result<RunBaselines, StorageError> {
    let exclusion = run.exclusion.as_ref().map(|x| ExclusionView {
        reason: x.reason.clone(),
        at: display_time(&x.created_at),
        at_machine: machine_time(&x.created_at),
    });
    let mut pinned: Vec<PinnedSeries> = store
        .baseline_pins(project.id)
        .await?
        .into_values()
        .filter(|p| p.run_id == run.summary.id)
        .map(|p| {
            // A pin needs a value of the series in the run, so the run names its metric.
            let found = run.results.iter().find_map(|r| {
                r.metrics
                    .iter()
                    .find(|m| m.series_id == p.series_id)
                    .map(|m| (r, m))
            });
            let (label, cell_key) = match found {
                Some((r, m)) => {
                    let mut label = format!("{} {}", metric_label(&m.name), m.stat);
                    if let Some(profile) = &m.slo_profile {
                        label.push_str(&format!(" ({profile})"));
                    }
                    (label, r.cell_key.clone())
                }
                None => (p.series_id.clone(), String::new()),
            };
            PinnedSeries {
                series_id: p.series_id,
                label,
                cell_key,
            }
        })
        .collect();
    pinned.sort_by(|a, b| (&a.cell_key, &a.label).cmp(&(&b.cell_key, &b.label)));
    Ok(RunBaselines { exclusion, pinned })
}

/// Marks the points of the pinned baseline run of `series_id`'s group (pins apply to the
/// whole group, whichever of its series they were made on).
pub async fn mark_pinned(
    store: &Store,
    project: &Project,
    series_id: &str,
    points: &mut [PointRow],
) -> Result<(), StorageError> {
    let pins = store.baseline_pins(project.id).await?;
    if pins.is_empty() {
        return Ok(());
    }
    let group = store.series_group(series_id).await?;
    let Some(run_id): Option<Uuid> = group
        .iter()
        .find_map(|s| pins.get(&s.series_id))
        .map(|p| p.run_id)
    else {
        return Ok(());
    };
    let run_id = run_id.to_string();
    for p in points.iter_mut() {
        p.pinned = p.run_id == run_id;
    }
    Ok(())
}
