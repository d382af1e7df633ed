//! One group's analysis at a candidate commit: which commits form its baseline (the baseline
//! rules, [`CommitContext::plan`]), the engine's input built from stored history (values,
//! health, per-request samples: [`CommitContext::inputs`]), and its report
//! ([`CommitContext::finish`]). Pure: the caller reads the history and stores the result.

use super::history::{GroupSeries, HistoryPoint};
use super::model::{Continuing, InvalidRun};
use crate::history::CommitGraph;
use crate::regression::confounds::{self, CommitLengths, RunLengths, Workload};
use crate::regression::family::{configuration_gates, Gates};
use crate::regression::{
    analyze, analyze_checked, request_values, CommitRuns, Finding, FindingKind, GroupInput,
    GroupReport, RunValue, SeriesInput, SeriesState, Test, Untested,
};
use crate::samples::RequestSamples;
use crate::settings::DetectionSettings;
use std::collections::HashMap;
// FxHash: these sets hash every point's commit SHA and series id, up to 2,000 points per
// group and 18 groups per upload; SipHash (7 % of an analysis, with the commit graph's index)
// was most of it (BENCHMARKS.md "Session 36").
use rustc_hash::FxHashSet as HashSet;

/// What every group of one commit's analysis shares: where the candidate is (commit, branch,
/// merge base), the project's default branch, detection settings and commit graph.
pub struct CommitContext<'a> {
    pub default_branch: &'a str,
    pub branch: &'a str,
    pub commit: &'a str,
    pub merge_base: Option<&'a str>,
    pub det: &'a DetectionSettings,
    /// The project's commit graph: baselines hold only (possible) ancestors of the candidate.
    pub graph: &'a CommitGraph,
}

/// The analysis of one group at the candidate commit.
pub struct GroupAnalysis {
    pub input: GroupInput,
    pub report: GroupReport,
    /// Effect-only findings when the group has insufficient data.
    pub effect_only: Vec<Finding>,
    /// Candidate runs that are not valid.
    pub invalid_runs: Vec<InvalidRun>,
    /// Findings that continue a standing alert of an earlier commit, filled by the caller.
    pub continuing: Vec<Continuing>,
    /// The baseline rule used, in words.
    pub baseline_rule: String,
}

/// Which commits a group's analysis reads, from the stored history of its series.
pub struct Plan {
    /// Default-branch commits in history order.
    order: Vec<String>,
    /// Candidate-branch commits in history order (the same as `order` on the default branch).
    branch_order: Vec<String>,
    /// Commits the baseline may come from, oldest first.
    base_commits: Vec<String>,
    /// The baseline rule, in words.
    rule: String,
    pinned: Option<String>,
}

impl Plan {
    /// The commits the baseline may come from, oldest first (the pinned commit last).
    pub fn base_commits(&self) -> &[String] {
        &self.base_commits
    }

    /// Commits of the candidate's branch after it, oldest first (they confirm its findings).
    fn following(&self, commit: &str) -> &[String] {
        match self.branch_order.iter().position(|c| c == commit) {
            Some(i) => &self.branch_order[i + 1..],
            None => &[],
        }
    }

    /// Up to `n` commits of the candidate's branch just before it: their findings may wait for
    /// this commit's confirmation.
    pub fn previous(&self, commit: &str, n: usize) -> Vec<String> {
        let end = self
            .branch_order
            .iter()
            .position(|c| c == commit)
            .unwrap_or(0);
        self.branch_order[end.saturating_sub(n)..end].to_vec()
    }

    /// Results whose per-request samples the engine reads, for the metrics that have a
    /// per-request column: the candidate's, and those of the baseline window's commits (twice
    /// the window, since commits without a valid run do not count towards it). The engine
    /// compares per-request values only when both sides have them
    /// ([`crate::regression::significance::request_shift`]), so a caller need read the
    /// baseline's only when the candidate's results have samples: after a history's newest
    /// commits uploaded `--save-detailed` files, an upload of summaries read and decoded the
    /// window's samples for nothing (140 ms, and 110 ms of inputs, of a 350 ms upload at 1,800
    /// commits of issue 12's data set).
    pub fn sample_results(
        &self,
        ctx: &CommitContext<'_>,
        series: &[GroupSeries],
        points: &[HistoryPoint],
    ) -> SampleResults {
        let sampled: HashSet<&str> = series
            .iter()
            .filter(|s| SAMPLED_METRICS.contains(&s.metric.as_str()))
            .map(|s| s.series_id.as_str())
            .collect();
        let window = 2 * ctx.det.engine.baseline_window;
        // A set: scanning the window's commits for each of a group's ~2,000 points was most of
        // an upload's `samples` phase at 1,800 commits (BENCHMARKS.md "Session 34").
        let base: HashSet<&str> = self.base_commits
            [self.base_commits.len().saturating_sub(window)..]
            .iter()
            .map(String::as_str)
            .collect();
        let (mut candidate, mut baseline) = (Vec::new(), Vec::new());
        for p in points.iter().filter(|p| sampled.contains(&*p.series_id)) {
            if *p.commit_sha == *ctx.commit && *p.branch == *ctx.branch {
                candidate.push(p.result_id);
            } else if base.contains(&*p.commit_sha) {
                baseline.push(p.result_id);
            }
        }
        for ids in [&mut candidate, &mut baseline] {
            ids.sort_unstable();
            ids.dedup();
        }
        SampleResults {
            candidate,
            baseline,
        }
    }
}

/// The results whose per-request samples an analysis of one group reads
/// ([`Plan::sample_results`]), sorted, without repeats.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SampleResults {
    /// The candidate commit's results.
    pub candidate: Vec<i64>,
    /// The baseline window's results: read only when the candidate's have samples.
    pub baseline: Vec<i64>,
}

/// Metrics with a per-request column ([`crate::regression::request_values`]).
const SAMPLED_METRICS: [&str; 4] = ["ttft", "tpot", "itl", "e2el"];

impl CommitContext<'_> {
    fn invalid(&self, p: &HistoryPoint) -> Option<String> {
        if p.excluded {
            return Some("excluded from baselines by a person".into());
        }
        self.det.invalid_run(p.completed, p.failed, p.num_prompts)
    }

    /// Whether `p` is a valid run: not excluded by a person, not failed (the rules of
    /// [`crate::settings::DetectionSettings::invalid_run`]).
    pub fn is_valid(&self, p: &HistoryPoint) -> bool {
        self.invalid(p).is_none()
    }

    /// Where the baseline of a group comes from (see the module documentation of
    /// [`super`]).
    pub fn plan(&self, points: &[HistoryPoint], pinned: Option<&str>) -> Plan {
        // Commits of a branch in order of first appearance (a set keeps it linear in points).
        let commits_of = |branch: &str| {
            let mut seen: HashSet<&str> = HashSet::default();
            points
                .iter()
                .filter(|p| *p.branch == *branch && seen.insert(&*p.commit_sha))
                .map(|p| p.commit_sha.to_string())
                .collect::<Vec<String>>()
        };
        let order = commits_of(self.default_branch);
        let branch_order = commits_of(self.branch);
        // A pin is the baseline of what comes after it: default-branch commits after the pinned
        // one (earlier ones, and the pinned commit itself, keep their own baseline) and every
        // other branch.
        let pinned = pinned.filter(|pin| {
            let at = |c: &str| order.iter().position(|o| o == c);
            self.branch != self.default_branch
                || matches!((at(pin), at(self.commit)), (Some(p), Some(c)) if p < c)
        });
        // Only ancestors of the candidate (for a pull request: of its merge base, itself
        // included) may be its baseline; behind a gap in the graph, the commits ordered before
        // it may be (see `crate::history`).
        let ancestors_of = |sha: &str, inclusive: bool| {
            let mut set = self.graph.possible_ancestry(sha);
            if inclusive {
                set.insert(sha);
            }
            set
        };
        let (allowed, rule): (crate::history::Ancestry, String) =
            if self.branch == self.default_branch {
                (
                    ancestors_of(self.commit, false),
                    format!(
                        "the default branch `{}` before this commit",
                        self.default_branch
                    ),
                )
            } else if let Some(mb) = self.merge_base.filter(|mb| order.iter().any(|c| c == mb)) {
                (
                    ancestors_of(mb, true),
                    format!(
                        "the default branch `{}` up to the merge base {mb}",
                        self.default_branch
                    ),
                )
            } else {
                let from = match self.merge_base {
                    Some(mb) if self.graph.position(mb).is_some() => ancestors_of(mb, true),
                    _ => ancestors_of(self.commit, false),
                };
                (
                    from,
                    format!("the default branch `{}`", self.default_branch),
                )
            };
        let mut rule = rule;
        let mut base_commits: Vec<String> = order
            .iter()
            .filter(|c| *c != self.commit && allowed.contains(c))
            .cloned()
            .collect();
        if let Some(pin) = pinned {
            // The pinned commit gives the level; the commits the baseline would otherwise come
            // from give the run-to-run spread when the pin has too few runs to show one.
            base_commits.retain(|c| c != pin);
            base_commits.push(pin.to_string());
            rule = format!("pinned: commit {pin} (run-to-run spread from {rule})");
        }
        Plan {
            order,
            branch_order,
            base_commits,
            rule,
            pinned: pinned.map(str::to_string),
        }
    }

    /// The group's engine input from `points` (with the per-request `samples` of the results
    /// that have them, by result id). [`CommitContext::finish`] analyzes it once every group of
    /// the commit has its input, since the cells of one configuration are decided together
    /// ([`configuration_gates`]).
    pub fn inputs(
        &self,
        series: &[GroupSeries],
        points: &[HistoryPoint],
        plan: &Plan,
        samples: &HashMap<i64, RequestSamples>,
    ) -> GroupInput {
        let max = self.det.engine.per_request_max_per_side;
        let metric_of: rustc_hash::FxHashMap<&str, &str> = series
            .iter()
            .map(|s| (s.series_id.as_str(), s.metric.as_str()))
            .collect();
        // Per-request samples for the comparison's baseline and candidate; the confirmation
        // (following commits) reads values only.
        let run_value = |p: &HistoryPoint, with_samples: bool| RunValue {
            value: p.value,
            excluded: self.invalid(p).is_some(),
            samples: samples
                .get(&p.result_id)
                .filter(|_| with_samples)
                .and_then(|s| request_values(s, metric_of.get(&*p.series_id)?, max)),
        };
        let by_commit = points_by_commit(points);
        let runs_of = |s: &GroupSeries, commit: &str, branch: Option<&str>, with_samples| {
            commit_runs(&by_commit, s, commit, branch, |p| {
                run_value(p, with_samples)
            })
        };
        let base_branch = if plan.pinned.is_some() {
            None
        } else {
            Some(self.default_branch)
        };
        let inputs = series
            .iter()
            .map(|s| {
                let history: Vec<CommitRuns> = plan
                    .base_commits
                    .iter()
                    .filter(|c| *c != self.commit || self.branch != self.default_branch)
                    .filter_map(|c| runs_of(s, c, base_branch, true))
                    .collect();
                let candidate = runs_of(s, self.commit, Some(self.branch), true);
                let following: Vec<CommitRuns> = plan
                    .following(self.commit)
                    .iter()
                    .filter_map(|c| runs_of(s, c, Some(self.branch), false))
                    .take(self.det.engine.confirm_commits)
                    .collect();
                SeriesInput {
                    series_id: s.series_id.clone(),
                    metric: s.metric.clone(),
                    stat: s.stat.clone(),
                    slo_profile: s.slo_profile.clone(),
                    history,
                    candidate,
                    following,
                }
            })
            .collect();
        let (series_key, cell_key) = group_key(series);
        GroupInput {
            series_key,
            cell_key,
            pinned_baseline: plan.pinned.clone(),
            series: inputs,
        }
    }

    /// The group's default-branch history through the candidate (every commit of the plan's
    /// order, oldest first, the candidate last when it is on the default branch), values only:
    /// the change-point scan's input, and what a standing alert of an earlier commit is
    /// compared with when this commit may resolve it (an upload builds it only for groups with
    /// such an alert: it is most of an input's size).
    pub fn default_branch_history(
        &self,
        series: &[GroupSeries],
        points: &[HistoryPoint],
        plan: &Plan,
    ) -> GroupInput {
        let by_commit = points_by_commit(points);
        let run_value = |p: &HistoryPoint| RunValue {
            value: p.value,
            excluded: self.invalid(p).is_some(),
            samples: None,
        };
        let inputs = series
            .iter()
            .map(|s| {
                let mut history: Vec<CommitRuns> = plan
                    .order
                    .iter()
                    .filter_map(|c| {
                        commit_runs(&by_commit, s, c, Some(self.default_branch), run_value)
                    })
                    .collect();
                if let Some(end) = history.iter().position(|c| c.commit == self.commit) {
                    history.truncate(end + 1);
                }
                SeriesInput {
                    series_id: s.series_id.clone(),
                    metric: s.metric.clone(),
                    stat: s.stat.clone(),
                    slo_profile: s.slo_profile.clone(),
                    history,
                    candidate: None,
                    following: Vec::new(),
                }
            })
            .collect();
        let (series_key, cell_key) = group_key(series);
        GroupInput {
            series_key,
            cell_key,
            pinned_baseline: None,
            series: inputs,
        }
    }

    /// What the group's runs measured of their own work ([`Workload`]): the mean measured
    /// lengths of the valid runs of each commit the baseline may come from and of the
    /// candidate, and the cell's requested lengths. `nearest` is filled by the caller for a
    /// group without history ([`nearest_of`]).
    pub fn workload(
        &self,
        series: &[GroupSeries],
        points: &[HistoryPoint],
        plan: &Plan,
    ) -> Workload {
        let ids: HashSet<&str> = series.iter().map(|s| s.series_id.as_str()).collect();
        // One entry per result: its commit, branch, validity and lengths.
        let mut seen = HashSet::default();
        let results: Vec<&HistoryPoint> = points
            .iter()
            .filter(|p| ids.contains(&*p.series_id) && seen.insert(p.result_id))
            .collect();
        let mean_of = |rs: Vec<&HistoryPoint>| {
            let rs: Vec<&HistoryPoint> = rs
                .into_iter()
                .filter(|p| self.invalid(p).is_none())
                .collect();
            if rs.is_empty() {
                return None;
            }
            let mean = |f: &dyn Fn(&RunLengths) -> Option<f64>| {
                let v: Vec<f64> = rs.iter().filter_map(|p| f(&p.lengths)).collect();
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            };
            Some(RunLengths {
                input: mean(&|l| l.input),
                output: mean(&|l| l.output),
                retokenized_share: rs
                    .iter()
                    .filter_map(|p| p.lengths.retokenized_share)
                    .min_by(|a, b| a.total_cmp(b)),
                requested_range: rs
                    .iter()
                    .filter_map(|p| p.lengths.requested_range)
                    .reduce(|a, b| a.union(b)),
            })
        };
        let base_branch = plan.pinned.is_none().then_some(self.default_branch);
        let history = plan
            .base_commits
            .iter()
            .filter(|c| *c != self.commit || self.branch != self.default_branch)
            .filter_map(|c| {
                let rs = results
                    .iter()
                    .copied()
                    .filter(|p| *p.commit_sha == **c && base_branch.is_none_or(|b| *p.branch == *b))
                    .collect();
                mean_of(rs).map(|lengths| CommitLengths {
                    commit: c.clone(),
                    lengths,
                })
            })
            .collect();
        let candidate = mean_of(
            results
                .iter()
                .copied()
                .filter(|p| *p.commit_sha == *self.commit && *p.branch == *self.branch)
                .collect(),
        );
        let cell = series
            .first()
            .map(|s| confounds::cell_fields(&s.cell_key))
            .unwrap_or_default();
        let len = |k: &str| cell.get(k).and_then(|v| v.as_str()?.parse::<f64>().ok());
        Workload {
            requested_input: len("cell.input_len"),
            requested_output: len("cell.output_len"),
            history,
            candidate,
            nearest: None,
        }
    }

    /// The group's analysis: the engine's report on `input` (with what its runs measured of
    /// their work, `workload`), with `gates` from every cell of its configuration at this
    /// commit.
    pub fn finish(
        &self,
        input: GroupInput,
        points: &[HistoryPoint],
        plan: &Plan,
        gates: &Gates,
        workload: &Workload,
    ) -> GroupAnalysis {
        let mut report = analyze_checked(&input, workload, &self.det.engine, gates);
        // A pinned baseline commit with one run (or a candidate compared with one value) gives
        // effect-only findings: one value per side, no significance test. They describe and
        // never become alerts, as with too little history.
        let (untested, tested): (Vec<Finding>, Vec<Finding>) =
            report.findings.drain(..).partition(is_effect_only);
        report.findings = tested;
        for s in report.series.iter_mut() {
            if untested.iter().any(|f| f.series_ids.contains(&s.series_id))
                && matches!(s.state, SeriesState::Regression | SeriesState::Improvement)
            {
                s.state = SeriesState::InsufficientData;
                s.untested = Some(Untested::OneValuePerSide);
                s.reason = Some(
                    "one value per side (a pinned baseline commit with one run): effect only, not tested"
                        .into(),
                );
            }
        }
        let mut effect_only = if plan.pinned.is_none()
            && report.series.iter().any(|s| {
                s.state == SeriesState::InsufficientData
                    && matches!(s.untested, Some(Untested::TooFewBaselineCommits { .. }))
            }) {
            effect_only_findings(&input, &self.det.engine)
        } else {
            Vec::new()
        };
        effect_only.extend(untested);
        // A metric its workload confounds gets no verdict, not even an effect-only one.
        let confounded: HashSet<&str> = report
            .series
            .iter()
            .filter(|s| s.state == SeriesState::WorkloadMismatch)
            .map(|s| s.series_id.as_str())
            .collect();
        effect_only.retain(|f| {
            !f.series_ids
                .iter()
                .any(|id| confounded.contains(id.as_str()))
        });
        let mut invalid_runs = Vec::new();
        let mut seen = HashSet::default();
        for p in points
            .iter()
            .filter(|p| *p.commit_sha == *self.commit && *p.branch == *self.branch)
        {
            if let Some(why) = self.invalid(p) {
                if seen.insert(p.run_id) {
                    invalid_runs.push(InvalidRun {
                        run_id: p.run_id,
                        message: format!(
                            "run {} is not valid ({why}): it is neither tested nor part of a baseline",
                            p.run_id
                        ),
                        excluded_by_person: p.excluded,
                    });
                }
            }
        }
        GroupAnalysis {
            report,
            effect_only,
            invalid_runs,
            continuing: Vec::new(),
            baseline_rule: plan.rule.clone(),
            input,
        }
    }
}

/// The points of each (series, commit), in history order: one pass, so building an input is
/// linear in the history rather than series × commits × points.
type PointsByCommit<'p> = rustc_hash::FxHashMap<(&'p str, &'p str), Vec<&'p HistoryPoint>>;

fn points_by_commit(points: &[HistoryPoint]) -> PointsByCommit<'_> {
    let mut by_commit = PointsByCommit::default();
    for p in points {
        by_commit
            .entry((&*p.series_id, &*p.commit_sha))
            .or_default()
            .push(p);
    }
    by_commit
}

/// The runs of series `s` at `commit` (on `branch`, or any branch), or `None` when it has none.
fn commit_runs(
    by_commit: &PointsByCommit<'_>,
    s: &GroupSeries,
    commit: &str,
    branch: Option<&str>,
    run_value: impl Fn(&HistoryPoint) -> RunValue,
) -> Option<CommitRuns> {
    let runs: Vec<RunValue> = by_commit
        .get(&(s.series_id.as_str(), commit))
        .into_iter()
        .flatten()
        .filter(|p| branch.is_none_or(|b| *p.branch == *b))
        .map(|p| run_value(p))
        .collect();
    (!runs.is_empty()).then(|| CommitRuns {
        commit: commit.to_string(),
        runs,
    })
}

/// The group's series key (JSON) and cell key, from its first series.
fn group_key(series: &[GroupSeries]) -> (String, String) {
    series
        .first()
        .map(|s| (s.series_key_json.clone(), s.cell_key.clone()))
        .unwrap_or_default()
}

/// One group of a commit with everything its analysis needs, read before any group is
/// decided ([`analyze_groups`]).
pub struct PreparedGroup<K> {
    /// The caller's key of the group (the server: series key JSON and cell key).
    pub key: K,
    /// The group's stored history.
    pub points: Vec<HistoryPoint>,
    /// Its baseline plan.
    pub plan: Plan,
    /// The engine input ([`CommitContext::inputs`]).
    pub input: GroupInput,
    /// What its runs measured of their work ([`CommitContext::workload`]).
    pub workload: Workload,
}

/// The analyses of every group of one commit: the cells of one configuration (series key)
/// are decided together ([`configuration_gates`]), with the series a workload confound makes
/// incomparable left out of the gates ([`crate::regression::gating_view`]).
/// `series_key(k)` names a key's configuration. The groups are decided on every core
/// ([`analyze_groups_in`]).
pub fn analyze_groups<K: Ord + Clone + Send>(
    ctx: &CommitContext<'_>,
    prepared: Vec<PreparedGroup<K>>,
    series_key: impl Fn(&K) -> &str,
) -> Vec<(K, GroupAnalysis)> {
    analyze_groups_in(ctx, prepared, series_key, true)
}

/// [`analyze_groups`], the groups decided on every core when `parallel`, else one after
/// another on the caller's thread (a caller whose other work keeps the cores busy: spread,
/// the decisions only add the pool's hand-offs and spinning). The result is the same either
/// way.
pub fn analyze_groups_in<K: Ord + Clone + Send>(
    ctx: &CommitContext<'_>,
    prepared: Vec<PreparedGroup<K>>,
    series_key: impl Fn(&K) -> &str,
    parallel: bool,
) -> Vec<(K, GroupAnalysis)> {
    let views: Vec<std::borrow::Cow<'_, GroupInput>> = prepared
        .iter()
        .map(|p| crate::regression::gating_view(&p.input, &p.workload, &ctx.det.engine))
        .collect();
    let keyed: Vec<(K, &GroupInput)> = prepared
        .iter()
        .zip(&views)
        .map(|(p, v)| (p.key.clone(), v.as_ref()))
        .collect();
    let mut gates = gates_of(&keyed, &ctx.det.engine, series_key);
    let gated: Vec<(PreparedGroup<K>, Gates)> = prepared
        .into_iter()
        .map(|p| {
            let gate = gates.remove(&p.key).unwrap_or_else(Gates::single);
            (p, gate)
        })
        .collect();
    // Each group's decision is its own (the configuration's gates are fixed above): on every
    // core, in the groups' order. At an idle server this cut the `decide` phase of a nightly
    // 18-cell upload from 24–26 to 18–20 ms on two cores (BENCHMARKS.md "Session 36").
    use rayon::prelude::*;
    let decide = |(p, gate): (PreparedGroup<K>, Gates)| {
        let ga = ctx.finish(p.input, &p.points, &p.plan, &gate, &p.workload);
        (p.key, ga)
    };
    if parallel {
        gated.into_par_iter().map(decide).collect()
    } else {
        gated.into_iter().map(decide).collect()
    }
}

/// Whether a group has no history at all (every series lacks a baseline commit): its series
/// are `no_baseline`, and the nearest stored series is worth looking up.
pub fn lacks_history(input: &GroupInput) -> bool {
    input.pinned_baseline.is_none() && input.series.iter().all(|s| s.history.is_empty())
}

/// The stored group nearest to `key` (series key JSON, cell key) among `groups` (series key
/// JSON and cell key of every group with history), see [`confounds::nearest`].
pub fn nearest_of(
    key: &(String, String),
    groups: &[(String, String)],
) -> Option<confounds::Nearest> {
    let parse = |k: &str| match serde_json::from_str::<serde_json::Value>(k) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => Default::default(),
    };
    let others: Vec<(serde_json::Map<String, serde_json::Value>, String)> =
        groups.iter().map(|(k, c)| (parse(k), c.clone())).collect();
    confounds::nearest(&parse(&key.0), &key.1, &others)
}

/// The gates of every configuration among `inputs` (keyed as the groups are, by series key
/// and cell): the cells of one series key are one configuration.
pub fn gates_of<K: Ord + Clone>(
    inputs: &[(K, &GroupInput)],
    settings: &crate::regression::Settings,
    series_key: impl Fn(&K) -> &str,
) -> std::collections::BTreeMap<K, Gates> {
    let mut by_config: std::collections::BTreeMap<&str, Vec<&GroupInput>> = Default::default();
    for (k, g) in inputs {
        by_config.entry(series_key(k)).or_default().push(g);
    }
    let gates: HashMap<&str, Gates> = by_config
        .iter()
        .map(|(c, groups)| (*c, configuration_gates(groups, settings)))
        .collect();
    inputs
        .iter()
        .map(|(k, _)| (k.clone(), gates[series_key(k)].clone()))
        .collect()
}

/// A finding decided on its effect alone (one value per side), or a trade-off with such a
/// side.
fn is_effect_only(f: &Finding) -> bool {
    f.test == Test::EffectOnly || f.parts.iter().any(|p| p.test == Test::EffectOnly)
}

/// The engine's findings when each series' baseline is reduced to one value (the mean of its
/// valid baseline runs) and each candidate to its runs: every comparison is `effect_only`
/// (one baseline value, no test), so this describes, never decides.
pub fn effect_only_findings(
    input: &GroupInput,
    settings: &crate::regression::Settings,
) -> Vec<Finding> {
    let mut s = settings.clone();
    s.min_baseline_commits = 1;
    let series = input
        .series
        .iter()
        .filter_map(|si| {
            let valid: Vec<&CommitRuns> = si
                .history
                .iter()
                .filter(|c| c.runs.iter().any(|r| !r.excluded))
                .collect();
            let values: Vec<f64> = valid
                .iter()
                .flat_map(|c| c.runs.iter().filter(|r| !r.excluded).map(|r| r.value))
                .collect();
            if values.is_empty() {
                return None;
            }
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            let name = match valid.as_slice() {
                [one] => one.commit.clone(),
                many => format!("mean of {} commits", many.len()),
            };
            Some(SeriesInput {
                history: vec![CommitRuns::new(name, &[mean])],
                ..si.clone()
            })
        })
        .collect();
    let preview = GroupInput {
        pinned_baseline: None,
        series,
        ..input.clone()
    };
    analyze(&preview, &s)
        .findings
        .into_iter()
        .filter(|f| f.kind != FindingKind::Missing)
        .collect()
}
