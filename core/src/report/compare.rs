//! Two uploads compared with no server: `benchtrail compare OLD NEW`, a laptop, a bisect.
//!
//! [`compare`] turns the results of a baseline and a candidate into the same history the
//! server would hold (series ids, per-run health, measured lengths, per-request samples,
//! goodput under the project's SLO profiles), then runs the same baseline rules, engine and
//! verdict rules ([`super::group`], [`super::verdict`]). So a candidate compared here with the
//! commits before it gives the findings the server gives it in that history.
//!
//! # Which baseline
//! * **Several baseline commits** (oldest first): the default-branch rule, as on the server
//!   (the last `baseline_window` commits, the prediction interval on commit means).
//! * **One baseline commit**: that commit is the pinned baseline (as `PUT .../baselines` on the
//!   server): with two or more runs of it, the candidate run against the prediction interval
//!   of a new run from those runs (several candidate runs: Welch's t); with one run, the change
//!   is described (effect only), never tested: one value per side cannot tell a change from
//!   noise.
//!
//! Findings become open alerts of the comparison (improvements resolved), and the verdict
//! follows from them as the server's does.

use super::compare_table::SideValues;
use super::coverage::{is_new, missing_cell, new_cell, not_measured, Coverage};
use super::extras::{sparklines_of, Sparkline};
use super::group::{self as group, CommitContext, PreparedGroup};
use super::history::{GroupSeries, HistoryPoint};
use super::model::{CellAnalysis, RunAnalysis, ANALYSIS_SCHEMA};
use super::verdict::{verdict_of, Verdict};
use crate::history::{CommitGraph, CommitNode};
use crate::metric::Stat;
use crate::regression::confounds::RunLengths;
use crate::regression::Finding;
use crate::result::BenchResult;
use crate::samples::RequestSamples;
use crate::series::{profile_identity, series_id};
use crate::settings::ProjectSettings;
use crate::slo;
use crate::wire::{Alert, AlertKind, AlertLinks, AlertStatus};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use uuid::Uuid;

/// The project slug series ids of an offline comparison are derived under (ids are internal
/// to it; [`compare_in`] takes a project's).
const SLUG: &str = "compare";
/// The branch of a comparison's history.
const BRANCH: &str = "main";

/// One commit of a comparison: its runs, each the results of one upload (one result file, or
/// one run's files).
#[derive(Debug, Clone)]
pub struct CompareCommit {
    /// A name for the commit (a SHA, a folder name).
    pub commit: String,
    /// Its runs (repeats), each a list of results.
    pub runs: Vec<Vec<BenchResult>>,
}

/// The outcome of [`compare`]: the candidate's analysis and its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The analysis of the candidate's (first) run, with the whole candidate commit's
    /// findings.
    pub analysis: RunAnalysis,
    /// Its verdict.
    pub verdict: Verdict,
    /// The history of each flagged series (its baseline commits' means, then the
    /// candidate's), for the report.
    pub sparklines: Vec<Sparkline>,
    /// Every series' value on each side, by series id: the mean of the candidate commit's
    /// runs, and of the last baseline commit's (the values a reader compares when a series
    /// was not tested).
    pub values: SideValues,
}

/// The candidate against the baseline commits (oldest first; see the module documentation for
/// one commit against several), under `settings` (detection rules and SLO profiles);
/// `key_fields` are the `--metadata` keys that are part of the series key, as a project's.
///
/// # Panics
/// Never on data; `baseline` may be empty (then every cell is new).
pub fn compare(
    baseline: &[CompareCommit],
    candidate: &CompareCommit,
    settings: &ProjectSettings,
    key_fields: &[String],
) -> Comparison {
    compare_in(SLUG, baseline, candidate, settings, key_fields)
}

/// [`compare`] with the series ids of project `project_slug`: the ids storage gives the same
/// results' series there, so a server comparing two stored runs can link each series of the
/// analysis to its page and its stored values.
pub fn compare_in(
    project_slug: &str,
    baseline: &[CompareCommit],
    candidate: &CompareCommit,
    settings: &ProjectSettings,
    key_fields: &[String],
) -> Comparison {
    let det = &settings.detection;
    let mut history = History {
        slug: project_slug.to_string(),
        ..History::default()
    };
    let commits: Vec<&CompareCommit> = baseline.iter().chain([candidate]).collect();
    for (i, c) in commits.iter().enumerate() {
        for run in &c.runs {
            history.add_run(&c.commit, i as i64, run, settings, key_fields);
        }
    }
    let graph = CommitGraph::new(
        commits
            .iter()
            .enumerate()
            .map(|(i, c)| CommitNode {
                sha: c.commit.clone(),
                parents: i
                    .checked_sub(1)
                    .map(|p| vec![commits[p].commit.clone()])
                    .unwrap_or_default(),
                time: chrono::DateTime::from_timestamp(i as i64 * 60, 0).unwrap_or_default(),
                first_seq: i as i64,
            })
            .collect(),
    );
    let ctx = CommitContext {
        default_branch: BRANCH,
        branch: BRANCH,
        commit: &candidate.commit,
        merge_base: None,
        det,
        graph: &graph,
    };
    let pinned = match baseline {
        [one] => Some(one.commit.as_str()),
        _ => None,
    };
    let with_history: Vec<(String, String)> = history
        .groups
        .keys()
        .filter(|k| history.commit_cells(k, baseline.iter().map(|c| c.commit.as_str())))
        .cloned()
        .collect();
    let mut prepared = Vec::new();
    for key in history.candidate_groups(&candidate.commit) {
        // The server's order of a group's series: metric, statistic (as text), then the SLO
        // profile where the server's tie-break is the (project-specific) series id.
        let mut series: Vec<GroupSeries> = history.groups[&key].values().cloned().collect();
        series
            .sort_by_cached_key(|s| (s.metric.clone(), s.stat.to_string(), s.slo_profile.clone()));
        let points = history.points_of(&series);
        let plan = ctx.plan(&points, pinned);
        let input = ctx.inputs(&series, &points, &plan, &history.samples);
        let mut workload = ctx.workload(&series, &points, &plan);
        if group::lacks_history(&input) {
            let others: Vec<(String, String)> = with_history
                .iter()
                .filter(|k| **k != key)
                .cloned()
                .collect();
            workload.nearest = group::nearest_of(&key, &others);
        }
        prepared.push(PreparedGroup {
            key,
            points,
            plan,
            input,
            workload,
        });
    }
    let analyzed = group::analyze_groups(&ctx, prepared, |k| k.0.as_str());

    let mut coverage = Coverage::default();
    for (_, ga) in &analyzed {
        if is_new(&ga.input) {
            coverage.new_cells.push(new_cell(&ga.input));
        }
        coverage.not_measured.extend(not_measured(&ga.input));
    }
    if let Some(last) = baseline.last() {
        let present: BTreeSet<&(String, String)> = analyzed.iter().map(|(k, _)| k).collect();
        let configs: BTreeSet<&str> = present.iter().map(|k| k.0.as_str()).collect();
        for key in history.cells_of(&last.commit) {
            if configs.contains(key.0.as_str()) && !present.contains(&key) {
                coverage
                    .missing_cells
                    .push(missing_cell(&key.0, &key.1, &last.commit));
            }
        }
    }

    let alerts: Vec<Alert> = analyzed
        .iter()
        .flat_map(|(k, ga)| ga.report.findings.iter().map(move |f| alert_of(f, k)))
        .collect();
    let run_id = Uuid::nil();
    let analysis = RunAnalysis {
        schema: ANALYSIS_SCHEMA,
        run_id,
        commit: candidate.commit.clone(),
        branch: BRANCH.into(),
        default_branch: BRANCH.into(),
        merge_base: None,
        settings_version: 0,
        groups: analyzed
            .iter()
            .map(|(k, ga)| CellAnalysis::of(&k.0, &k.1, ga))
            .collect(),
        coverage,
    };
    let verdict = verdict_of(run_id, &candidate.commit, Some(&analysis), &alerts, det);
    let sparklines = analyzed
        .iter()
        .flat_map(|(_, ga)| sparklines_of(&ga.input, &ga.report))
        .collect();
    let values = SideValues {
        baseline: baseline
            .last()
            .map(|c| history.commit_means(&c.commit))
            .unwrap_or_default(),
        candidate: history.commit_means(&candidate.commit),
    };
    Comparison {
        analysis,
        verdict,
        sparklines,
        values,
    }
}

/// The in-memory history of a comparison, shaped as storage returns it.
#[derive(Default)]
struct History {
    /// The project slug series ids are derived under.
    slug: String,
    /// (series key JSON, cell key) → series id → its series.
    groups: BTreeMap<(String, String), BTreeMap<String, GroupSeries>>,
    points: Vec<HistoryPoint>,
    samples: HashMap<i64, RequestSamples>,
    /// Result id → (commit, group).
    results: Vec<(String, (String, String))>,
}

impl History {
    fn add_run(
        &mut self,
        commit: &str,
        seq: i64,
        results: &[BenchResult],
        settings: &ProjectSettings,
        key_fields: &[String],
    ) {
        let run_id = Uuid::new_v4();
        for result in results {
            let result_id = self.results.len() as i64;
            let series_key = result.configuration.series_key(key_fields);
            let series_key_json = Value::Object(series_key.clone()).to_string();
            let cell_key = result.cell.key();
            let key = (series_key_json.clone(), cell_key.clone());
            self.results.push((commit.to_string(), key.clone()));
            let values = slo::stored_values(result, &settings.slo_profiles);
            let count = |name: &str| {
                values
                    .iter()
                    .find(|m| m.name == name && m.stat == Stat::Value)
                    .map(|m| m.value)
            };
            let lengths = RunLengths::from_facts(&result.facts, count("total_output_tokens"));
            let cell_json = serde_json::to_value(&result.cell).unwrap_or(Value::Null);
            let tool_slo = result.facts.get("goodput_slo").map(Value::to_string);
            for m in &values {
                let profile = profile_identity(m.slo_profile.as_deref(), tool_slo.as_deref());
                let id = series_id(
                    &self.slug,
                    &series_key,
                    &cell_key,
                    &m.name,
                    &m.stat.to_string(),
                    profile.as_deref(),
                );
                self.groups
                    .entry(key.clone())
                    .or_default()
                    .entry(id.clone())
                    .or_insert_with(|| GroupSeries {
                        series_id: id.clone(),
                        metric: m.name.clone(),
                        stat: m.stat.clone(),
                        slo_profile: m.slo_profile.clone(),
                        series_key_json: series_key_json.clone(),
                        cell_key: cell_key.clone(),
                    });
                self.points.push(HistoryPoint {
                    series_id: id.as_str().into(),
                    result_id,
                    run_id,
                    commit_sha: commit.into(),
                    branch: BRANCH.into(),
                    seq,
                    value: m.value,
                    completed: count("completed"),
                    failed: count("failed"),
                    num_prompts: cell_json["num_prompts"].as_f64(),
                    excluded: false,
                    lengths: lengths.clone(),
                });
            }
            if let Some(s) = &result.samples {
                self.samples.insert(result_id, s.clone());
            }
        }
    }

    /// The mean value of each series over `commit`'s points, by series id.
    fn commit_means(&self, commit: &str) -> HashMap<String, f64> {
        let mut sums: HashMap<&str, (f64, usize)> = HashMap::new();
        for p in self.points.iter().filter(|p| *p.commit_sha == *commit) {
            let e = sums.entry(&*p.series_id).or_default();
            e.0 += p.value;
            e.1 += 1;
        }
        sums.into_iter()
            .map(|(id, (sum, n))| (id.to_string(), sum / n as f64))
            .collect()
    }

    /// The groups of the candidate's results, in key order.
    fn candidate_groups(&self, commit: &str) -> Vec<(String, String)> {
        self.cells_of(commit).into_iter().collect()
    }

    /// The groups `commit` has results of.
    fn cells_of(&self, commit: &str) -> BTreeSet<(String, String)> {
        self.results
            .iter()
            .filter(|(c, _)| c == commit)
            .map(|(_, k)| k.clone())
            .collect()
    }

    /// Whether any of `commits` has results of group `key`.
    fn commit_cells<'a>(
        &self,
        key: &(String, String),
        mut commits: impl Iterator<Item = &'a str>,
    ) -> bool {
        commits.any(|c| self.results.iter().any(|(rc, k)| rc == c && k == key))
    }

    /// The points of `series`, in commit order (then upload order).
    fn points_of(&self, series: &[GroupSeries]) -> Vec<HistoryPoint> {
        let ids: BTreeSet<&str> = series.iter().map(|s| s.series_id.as_str()).collect();
        let mut points: Vec<HistoryPoint> = self
            .points
            .iter()
            .filter(|p| ids.contains(&*p.series_id))
            .cloned()
            .collect();
        points.sort_by_key(|p| (p.seq, p.result_id));
        points
    }
}

/// The alert a finding of group `key` opens (improvements are born resolved, as on the
/// server), for the verdict rules.
fn alert_of(f: &Finding, key: &(String, String)) -> Alert {
    let kind = AlertKind::from(f.kind);
    let now = chrono::DateTime::from_timestamp(0, 0).unwrap_or_default();
    let series_key = serde_json::from_str(&key.0).unwrap_or(Value::Null);
    let commit = f.candidate_commit.clone().unwrap_or_default();
    Alert {
        group: crate::wire::alert_group(
            BRANCH,
            &commit,
            &series_key,
            kind,
            &f.metric,
            f.slo_profile.as_deref(),
        ),
        id: Uuid::new_v4(),
        project: SLUG.into(),
        kind,
        status: if kind == AlertKind::Improvement {
            AlertStatus::Resolved
        } else {
            AlertStatus::Open
        },
        severity: f.severity.map(|s| s.as_str().to_string()),
        series_id: f.series_ids.first().cloned().unwrap_or_default(),
        series_ids: f.series_ids.clone(),
        metric: f.metric.clone(),
        stat: f.stat.clone(),
        slo_profile: f.slo_profile.clone(),
        series_key,
        cell: key.1.clone(),
        branch: BRANCH.into(),
        commit,
        run_id: None,
        baseline_commits: f.baseline_commits.clone(),
        delta_pct: f.delta_pct,
        summary: f.summary.clone(),
        finding: serde_json::to_value(f).unwrap_or(Value::Null),
        settings_version: 0,
        reason: None,
        triaged_by: None,
        triaged_at: None,
        resolved_by: None,
        created_at: now,
        updated_at: now,
        links: AlertLinks {
            self_: String::new(),
            run: None,
            verdict: None,
            series: String::new(),
            commit: None,
        },
    }
}
