//! The engine's error rates on [`super::realistic`] histories, without a server: every commit of
//! a generated history is analyzed against the commits before it, as the server does on
//! upload (all cells of a commit together, [`super::family::configuration_gates`]). The
//! `detection_rates` benchmark measures the same through the HTTP API; this is the fast, pure
//! twin that CI runs at a bounded size (`core/tests/detection_rates.rs`).

use super::family::configuration_gates;
use super::realistic::{commit_runs, HistorySpec};
use super::{
    analyze_with, CommitRuns, FindingKind, GroupInput, GroupReport, SeriesInput, Settings,
};
use crate::metric::Stat;
use std::collections::BTreeMap;

/// Per (cell, series name) → per commit → run values.
type Values = BTreeMap<(usize, String), (String, Stat, Option<String>, Vec<Vec<f64>>)>;

/// A generated history read through the `vllm-bench-serve` adapter, commit by commit.
pub struct ReadHistory {
    /// Cells of the workload.
    pub cells: usize,
    values: Values,
    commits: usize,
}

impl ReadHistory {
    /// Generates and reads every commit of `spec`.
    ///
    /// # Panics
    /// When a generated file does not read (a defect of the generator).
    pub fn new(spec: &HistorySpec) -> ReadHistory {
        let mut values: Values = BTreeMap::new();
        for commit in 0..spec.commits {
            for run in commit_runs(spec, commit) {
                let text = run.file.to_string();
                let (_, results) = crate::adapters::parse_file(Some("vllm-bench-serve"), &text, 0)
                    .expect("a generated file reads");
                for m in &results[0].metrics {
                    let name = format!(
                        "c{}/{}/{}/{}",
                        run.cell,
                        m.name,
                        m.stat,
                        m.slo_profile.as_deref().unwrap_or("")
                    );
                    let e = values.entry((run.cell, name)).or_insert_with(|| {
                        (
                            m.name.clone(),
                            m.stat.clone(),
                            m.slo_profile.clone(),
                            vec![Vec::new(); spec.commits],
                        )
                    });
                    e.3[commit].push(m.value);
                }
            }
        }
        ReadHistory {
            cells: spec.workload.cells.len(),
            values,
            commits: spec.commits,
        }
    }

    /// The groups (one per cell) of commit `candidate` against the commits before it, with the
    /// candidate's first `repeats_in` runs only (`None`: all).
    pub fn groups(&self, candidate: usize, repeats_in: Option<usize>) -> Vec<GroupInput> {
        let sha = |i: usize| format!("{i:040x}");
        (0..self.cells)
            .map(|cell| {
                let series = self
                    .values
                    .iter()
                    .filter(|((c, _), _)| *c == cell)
                    .map(|((_, id), (metric, stat, profile, per_commit))| {
                        let mut cand = per_commit[candidate].clone();
                        if let Some(n) = repeats_in {
                            cand.truncate(n);
                        }
                        SeriesInput {
                            series_id: id.clone(),
                            metric: metric.clone(),
                            stat: stat.clone(),
                            slo_profile: profile.clone(),
                            history: (0..candidate)
                                .map(|i| CommitRuns::new(sha(i), &per_commit[i]))
                                .collect(),
                            candidate: Some(CommitRuns::new(sha(candidate), &cand)),
                            following: Vec::new(),
                        }
                    })
                    .collect();
                GroupInput {
                    series_key: "generated".into(),
                    cell_key: format!("cell={cell}"),
                    pinned_baseline: None,
                    series,
                }
            })
            .collect()
    }

    /// Commits in the history.
    pub fn commits(&self) -> usize {
        self.commits
    }
}

/// The reports of every cell of commit `candidate`, analyzed together.
pub fn analyze_commit(
    h: &ReadHistory,
    candidate: usize,
    repeats_in: Option<usize>,
    settings: &Settings,
) -> Vec<GroupReport> {
    let groups = h.groups(candidate, repeats_in);
    let refs: Vec<&GroupInput> = groups.iter().collect();
    let gates = configuration_gates(&refs, settings);
    groups
        .iter()
        .map(|g| analyze_with(g, settings, &gates))
        .collect()
}

/// Whether any report holds an alert-worthy finding of these kinds for `metric` (`None`: any
/// metric); a trade-off counts for its every side.
pub fn has_finding(reports: &[GroupReport], kinds: &[FindingKind], metric: Option<&str>) -> bool {
    reports.iter().flat_map(|r| &r.findings).any(|f| {
        kinds.contains(&f.kind)
            && metric.is_none_or(|m| f.metric == m || f.parts.iter().any(|p| p.metric == m))
    })
}
