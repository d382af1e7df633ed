//! What a commit's analysis covers before any value is compared: its cells against its
//! baseline commit's (a missing cell makes the verdict `incomplete`, a new one is "new, no
//! baseline yet"), the series a present cell did not measure this time ("not measured", a gap,
//! never an alert), and its repeats against those expected (fewer: the verdict is provisional).
//!
//! # Rules
//! * **Baseline commit of a configuration** (series key): among the commits the candidate's
//!   groups of that configuration draw their baselines from, the last one in commit order;
//!   when every cell of it is new (none has a history), the nearest default-branch ancestor
//!   that measured the configuration (up to 50 back), so swapping all cells is not a pass. Its
//!   cells of that configuration (runs a person excluded do not count) are what the candidate
//!   commit must have: each one absent from every run of the candidate commit (on its branch)
//!   is a **missing cell**. A cell dropped on purpose makes the commit that drops it
//!   `incomplete` once; later commits compare with that commit, which lacks it too.
//! * **New cell**: a group of the candidate with no baseline commit at all.
//! * **Not measured**: a series of a present group that has baseline history but no value at
//!   the candidate (the tool did not write that metric this time).
//! * **Repeats**: expected = the largest `run.repeats_expected` among the commit's runs on its
//!   branch, else `detection.repeats`; received = the runs of that commit that measured its
//!   least measured group (configuration × cell), so a commit whose cells are uploaded as runs
//!   of their own (one CI job per cell) counts each cell's repeats, not the runs of all cells
//!   together. Fewer received than expected: provisional.

use super::short;
use crate::regression::{describe, FindingKind, GroupInput, Severity};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A cell of the candidate commit that its baseline commit has and it lacks, or one it has
/// with no baseline yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CellGap {
    /// The cell key (`max_concurrency=4;request_rate=inf;...`).
    pub cell: String,
    /// The configuration (series key) it belongs to.
    #[schema(value_type = Object)]
    pub series_key: Value,
    /// For a missing cell: the baseline commit that has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_commit: Option<String>,
    /// One sentence.
    pub message: String,
}

/// The series of a present cell that have history but no value at this commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct NotMeasured {
    /// The cell key.
    pub cell: String,
    /// The configuration (series key).
    #[schema(value_type = Object)]
    pub series_key: Value,
    /// The series, e.g. `mean TPOT`, `median TPOT`, in the group's order.
    pub series: Vec<String>,
    /// Their series ids.
    pub series_ids: Vec<String>,
    /// One sentence.
    pub message: String,
}

/// The commit's repeats against those expected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Repeats {
    /// Runs of the commit expected: the largest `run.repeats_expected` its runs announced,
    /// else the project's `detection.repeats`.
    pub expected: u32,
    /// Runs of the commit stored on its branch that measured its least measured group
    /// (configuration × cell); every run when each run measured every group.
    pub received: u32,
    /// `run` (announced by an upload) or `settings` (`detection.repeats`).
    pub source: RepeatsSource,
    /// The cell `received` counts, when some of the commit's runs did not measure it (its
    /// cells were uploaded as separate runs, or a cell failed in a repeat); absent when every
    /// run measured every cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fewest_cell: Option<String>,
}

/// Where the expected number of repeats comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RepeatsSource {
    /// Announced by the commit's uploads (`run.repeats_expected`, the CLI's `--repeats`).
    Run,
    /// The project's `detection.repeats`.
    Settings,
}

impl Repeats {
    /// The commit's repeats against the largest number its runs `announced`
    /// (`run.repeats_expected`), else the project's `setting` (`detection.repeats`).
    ///
    /// `runs`: the commit's runs on its branch; `per_group`: for each of its groups, its cell
    /// key and how many of those runs measured it. Received is the smallest of those counts
    /// (`runs` when there is no group); the first group with that count names
    /// [`Repeats::fewest_cell`] when it is below `runs`.
    pub fn of<'a>(
        announced: impl IntoIterator<Item = i64>,
        runs: usize,
        per_group: impl IntoIterator<Item = (&'a str, usize)>,
        setting: u32,
    ) -> Repeats {
        let announced = announced
            .into_iter()
            .max()
            .map(|n| n.clamp(1, i64::from(u32::MAX)) as u32);
        let fewest = per_group
            .into_iter()
            .fold(None, |best: Option<(&str, usize)>, (cell, n)| match best {
                Some((_, m)) if m <= n => best,
                _ => Some((cell, n)),
            });
        let received = fewest.map_or(runs, |(_, n)| n);
        Repeats {
            expected: announced.unwrap_or(setting.max(1)),
            received: u32::try_from(received).unwrap_or(u32::MAX),
            source: if announced.is_some() {
                RepeatsSource::Run
            } else {
                RepeatsSource::Settings
            },
            fewest_cell: fewest
                .filter(|&(_, n)| n < runs)
                .map(|(cell, _)| cell.to_string()),
        }
    }
}

impl Repeats {
    /// Fewer runs than expected: the verdict is provisional.
    pub fn pending(&self) -> bool {
        self.received < self.expected
    }
}

/// A finding held back while the commit waits for its repeats: no alert opens, the verdict
/// lists it as a provisional `warn`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HeldFinding {
    /// `regression`, `tradeoff` or `missing`.
    #[schema(value_type = String)]
    pub kind: FindingKind,
    /// Headline metric.
    pub metric: String,
    /// `warn` or `fail`.
    #[schema(value_type = Option<String>)]
    pub severity: Option<Severity>,
    /// The cell.
    pub cell: String,
    /// The engine's sentence.
    pub summary: String,
}

/// What a run's analysis covers (stored as `coverage` in its analysis document).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Coverage {
    /// Cells of the baseline commit this commit lacks.
    pub missing_cells: Vec<CellGap>,
    /// Cells with no baseline yet.
    pub new_cells: Vec<CellGap>,
    /// Series of present cells not measured this time.
    pub not_measured: Vec<NotMeasured>,
    /// The commit's repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
    /// Findings held while repeats are pending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<HeldFinding>,
}

fn key_value(series_key: &str) -> Value {
    serde_json::from_str(series_key).unwrap_or(Value::Null)
}

/// A missing cell.
pub fn missing_cell(series_key: &str, cell: &str, baseline_commit: &str) -> CellGap {
    CellGap {
        cell: cell.to_string(),
        series_key: key_value(series_key),
        baseline_commit: Some(baseline_commit.to_string()),
        message: format!(
            "cell `{cell}` is missing: baseline commit {} has it, this commit has no result for it",
            short(baseline_commit)
        ),
    }
}

/// Whether a group has no baseline commit at all.
pub fn is_new(input: &GroupInput) -> bool {
    input.series.iter().all(|s| s.history.is_empty())
}

/// A new cell.
pub fn new_cell(input: &GroupInput) -> CellGap {
    CellGap {
        cell: input.cell_key.clone(),
        series_key: key_value(&input.series_key),
        baseline_commit: None,
        message: format!("cell `{}` is new, no baseline yet", input.cell_key),
    }
}

/// The series of a present group that were not measured at the candidate, if any.
pub fn not_measured(input: &GroupInput) -> Option<NotMeasured> {
    if input.series.iter().all(|s| s.candidate.is_none()) {
        return None;
    }
    let absent: Vec<_> = input
        .series
        .iter()
        .filter(|s| s.candidate.is_none() && !s.history.is_empty())
        .collect();
    if absent.is_empty() {
        return None;
    }
    let series: Vec<String> = absent
        .iter()
        .map(|s| describe(&s.metric, &s.stat))
        .collect();
    Some(NotMeasured {
        cell: input.cell_key.clone(),
        series_key: key_value(&input.series_key),
        message: format!(
            "not measured in cell `{}`: {} (in the baseline, absent from this commit's result: a gap, no alert)",
            input.cell_key,
            series.join(", ")
        ),
        series,
        series_ids: absent.iter().map(|s| s.series_id.clone()).collect(),
    })
}

impl Coverage {
    /// The part of the commit's coverage about one run: the configurations (for missing
    /// cells) and groups (for the rest) of its results.
    pub fn for_run(&self, keys: &[(String, String)]) -> Coverage {
        let configs: Vec<Value> = keys.iter().map(|k| key_value(&k.0)).collect();
        let has = |series_key: &Value, cell: &str| {
            keys.iter()
                .any(|k| k.1 == cell && key_value(&k.0) == *series_key)
        };
        Coverage {
            missing_cells: self
                .missing_cells
                .iter()
                .filter(|g| configs.contains(&g.series_key))
                .cloned()
                .collect(),
            new_cells: self
                .new_cells
                .iter()
                .filter(|g| has(&g.series_key, &g.cell))
                .cloned()
                .collect(),
            not_measured: self
                .not_measured
                .iter()
                .filter(|g| has(&g.series_key, &g.cell))
                .cloned()
                .collect(),
            repeats: self.repeats.clone(),
            held: self
                .held
                .iter()
                .filter(|h| keys.iter().any(|k| k.1 == h.cell))
                .cloned()
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_count_the_runs_of_the_least_measured_cell() {
        // Two cells uploaded as runs of their own: 2 runs of a, 1 of b, 3 announced.
        let r = Repeats::of([3, 3, 3], 3, [("a", 2), ("b", 1)], 1);
        assert_eq!(
            r,
            Repeats {
                expected: 3,
                received: 1,
                source: RepeatsSource::Run,
                fewest_cell: Some("b".to_string()),
            }
        );
        assert!(r.pending());
        // Every run measured every cell: the runs, no cell named.
        let r = Repeats::of([], 2, [("a", 2), ("b", 2)], 2);
        assert!(!r.pending());
        assert_eq!(
            (r.expected, r.received, r.source, r.fewest_cell),
            (2, 2, RepeatsSource::Settings, None)
        );
        // Ties name the first; no group at all counts the runs.
        assert_eq!(
            Repeats::of([], 4, [("a", 3), ("b", 3)], 1)
                .fewest_cell
                .as_deref(),
            Some("a")
        );
        assert_eq!(Repeats::of([2], 1, [], 1).received, 1);
        // Announced 0 is clamped to one repeat.
        assert_eq!(Repeats::of([0], 1, [("a", 1)], 3).expected, 1);
    }
}
