//! Regression analysis of stored runs: history → [`GroupInput`](benchtrail_core::regression::GroupInput) → findings → alerts, verdicts.
//!
//! # What runs when
//! * **On upload, before the response** ([`analyze_commit`]): the uploaded run's commit is
//!   analyzed (every run of that commit on that branch, so repeats uploaded one by one
//!   accumulate and results of one commit split over several uploads are compared together),
//!   one configuration apart from another ([`benchtrail_core::report::config_parts`]): its
//!   cells are decided together and its repeats counted among its own runs. When no other
//!   analysis of the commit was pending, only the uploaded run's configurations are analyzed
//!   ([`Scope::Run`]): another configuration's analysis cannot have changed. Alerts are
//!   stored, alerts of earlier commits that this commit returns to the baseline of are
//!   resolved, and every run analyzed gets its analysis and verdict. So
//!   `GET /api/v1/runs/{id}/verdict` right after the upload answers for it.
//! * **In the background** (default branch only): the E-Divisive change-point scan of the
//!   default-branch history of each metric family's index of every group measured on it
//!   (`family_scan::family_change_points`: one scan per family, not per statistic; 999
//!   permutations per test, too slow to sit in front of an upload's response for long
//!   histories), over the newest `scan::SCAN_COMMITS` (200) commits. Its findings become
//!   `change_point` alerts. Each analysis of a default-branch commit asks for it; it is one
//!   durable job per project and branch (`scan`), so requests arriving while it is queued or
//!   running are merged into one more scan.
//! * **On exclusion, pinning or a change of project settings** ([`recompute_project`]): every
//!   commit of the project is analyzed again, in upload order, synchronously, before the
//!   response. When the project posts PR comments, the recomputation is followed by a refresh
//!   of them ([`crate::storage::JobTarget::Refresh`]), which updates the comment of each PR
//!   whose newest run's report changed.
//! * **Confirmation** (`detection.engine.confirm_commits` = n > 0): a significant change waits
//!   (series state `pending_confirmation`, verdict `warn`) until the next n commits of its
//!   branch show it too; each upload analyzes the n commits before it again, so the alert
//!   opens at the changed commit as soon as the last confirming commit arrives.
//!
//! The baseline rules, the input builder, the verdict rules and the stored model are pure and
//! live in [`benchtrail_core::report`]; this module reads history, calls them, and stores.
//!
//! # What one analysis reads
//! Not the whole history: each group's newest ancestors of the candidate, as many as the
//! engine can use, and the commits its decisions name (merge base, pin, standing alerts and
//! their baselines), widened only while that holds too few valid baseline commits
//! ([`benchtrail_core::report::window`], `read_window`). So an upload does not cost more as
//! the history grows (`cargo bench --bench history_growth`, BENCHMARKS.md).
//!
//! # Durable
//! Every analysis above, the change-point scan included, is a job of [`jobs`]: stored with the
//! change that asks for it, claimed through the database (so it runs once across several
//! servers on one database), retried until it is stored, so no acknowledged upload stays
//! unanalyzed.
//!
//! # Stored analyses of an older shape
//! At start-up ([`enqueue_stale`]) every project holding a run analysis whose schema is not
//! [`benchtrail_core::report::ANALYSIS_SCHEMA`] gets a recomputation job, so the API and pages
//! only read the current typed model.

mod alerts;
pub mod capacity;
mod concurrency;
mod coverage;
pub mod jobs;
pub mod report;
mod scan;

pub use benchtrail_core::report::coverage::{CellGap, Coverage, HeldFinding, NotMeasured, Repeats};
pub use benchtrail_core::report::verdict::verdict_from_basis;
pub use benchtrail_core::report::{verdict_of, Reason, Verdict};

use crate::storage::{
    Alert, AlertKind, CommitRun, JobTarget, Project, RunSummary, StorageError, Store,
};
use alerts::{new_alert, resolve_returned};
use benchtrail_core::history::CommitGraph;
use benchtrail_core::regression::{Finding, GroupInput};
use benchtrail_core::report::config_parts::{config_parts, ConfigPart};
use benchtrail_core::report::group::{self as group, CommitContext, GroupAnalysis};
use benchtrail_core::report::verdict_basis::VerdictBasis;
use benchtrail_core::report::window;
use benchtrail_core::report::{CellAnalysis, Continuing, RunAnalysis, ANALYSIS_SCHEMA};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use uuid::Uuid;

/// Kinds of alerts an analysis of one commit owns (recomputing it resolves those it no longer
/// finds). Change points belong to the background scan.
const COMMIT_KINDS: [AlertKind; 4] = [
    AlertKind::Regression,
    AlertKind::Improvement,
    AlertKind::Tradeoff,
    AlertKind::Missing,
];

/// Kinds whose finding at a later commit can be the same change as an earlier alert.
const CONTINUABLE: [AlertKind; 3] = [
    AlertKind::Regression,
    AlertKind::Tradeoff,
    AlertKind::Missing,
];

/// The standing alert of an earlier commit that finding `f` of `commit` continues: same kind,
/// same headline series, and (but for a missing series, absent from the earlier commit too)
/// raised at a commit inside `f`'s baseline.
fn continued<'a>(standing: &'a [Alert], f: &Finding, commit: &str) -> Option<&'a Alert> {
    standing.iter().find(|a| {
        a.commit != commit
            && a.kind == AlertKind::from(f.kind)
            && f.series_ids.first() == Some(&a.series_id)
            && (a.kind == AlertKind::Missing || f.baseline_commits.contains(&a.commit))
    })
}

/// Why an alert disappeared when its commit was analyzed again.
const SUPERSEDED: &str = "no longer found when the commit's analysis was recomputed";

/// Improvements are kept as alerts (explainable, linkable) but need no triage.
const IMPROVEMENT_REASON: &str = "improvement: no triage needed";

/// Which runs of a commit an analysis covers: the parts of
/// [`benchtrail_core::report::config_parts`] (each configuration is analyzed apart, so an
/// upload of one configuration need not analyze another's groups again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every run of the commit: a worker's job, a re-analysis, a recomputation.
    Commit,
    /// The part holding this run: an upload analyzed inline when no other analysis of its
    /// commit was pending, so every other part's stored analysis is current.
    Run(Uuid),
    /// The parts holding any of these configurations (series key JSON): the earlier commits
    /// a scoped analysis analyzes again for confirmation.
    Configs(BTreeSet<String>),
}

impl Scope {
    fn selects(&self, part: &ConfigPart<Uuid>) -> bool {
        match self {
            Scope::Commit => true,
            Scope::Run(id) => part.runs.contains(id),
            Scope::Configs(configs) => !part.configs.is_disjoint(configs),
        }
    }
}

/// Analyzes the runs of `commit_sha` on `branch` that `scope` selects (see the module
/// documentation) and stores alerts and per-run analyses. Asks for the change-point scan on
/// the default branch.
/// With confirmation on (`detection.engine.confirm_commits` = n > 0), the n commits before
/// this one on its branch are analyzed again too (the same configurations when `scope` is
/// not the whole commit): this commit may confirm (or refute) their pending findings.
pub async fn analyze_commit(
    store: &Store,
    project: &Project,
    branch: &str,
    commit_sha: &str,
    scope: &Scope,
) -> Result<Arc<CommitGraph>, StorageError> {
    let (previous, graph, configs) =
        analyze_one(store, project, branch, commit_sha, scope, true).await?;
    let again = match scope {
        Scope::Commit => Scope::Commit,
        Scope::Run(_) | Scope::Configs(_) => Scope::Configs(configs),
    };
    for commit in previous {
        analyze_one(store, project, branch, &commit, &again, false).await?;
    }
    Ok(graph)
}

/// [`analyze_commit`] without the re-analysis of earlier commits; returns those commits (the
/// up to `confirm_commits` commits before this one, in any of its groups), the commit graph
/// the analysis followed and the configurations it analyzed. `scan`: ask for the
/// change-point scan (`scan::request`).
async fn analyze_one(
    store: &Store,
    project: &Project,
    branch: &str,
    commit_sha: &str,
    scope: &Scope,
    scan: bool,
) -> Result<(Vec<String>, Arc<CommitGraph>, BTreeSet<String>), StorageError> {
    let mut timing = PhaseTimes::start();
    let running = concurrency::ANALYSES.start();
    // Values read for the groups' windows, for the debug line.
    let mut history_values = 0usize;
    let stored = store.settings(project).await?;
    let det = stored.settings.detection.clone();
    let version = stored.version;
    timing.lap("settings");
    let runs = store
        .commit_runs_with_series(project.id, branch, commit_sha)
        .await?;
    let merge_base = runs.iter().find_map(|r| r.summary.merge_base_sha.clone());
    timing.lap("runs");
    let pins = store.baseline_pins(project.id).await?;

    // The groups of the commit's results: (series key, cell) → its series (one query for all:
    // a result's group is the group of its first series).
    let firsts: Vec<String> = runs
        .iter()
        .flat_map(|run| &run.result_series)
        .filter_map(|series| series.first().cloned())
        .collect();
    let mut groups = store.series_groups(&firsts).await?;
    let group_of: HashMap<&str, &(String, String)> = groups
        .iter()
        .flat_map(|(key, series)| series.iter().map(move |s| (s.series_id.as_str(), key)))
        .collect();
    let mut run_groups: HashMap<Uuid, Vec<(String, String)>> = HashMap::new();
    for run in &runs {
        for series in &run.result_series {
            let Some(key) = series.first().and_then(|id| group_of.get(id.as_str())) else {
                continue;
            };
            run_groups
                .entry(run.summary.id)
                .or_default()
                .push((*key).clone());
        }
    }

    // The parts of the commit this analysis covers, and only their groups.
    let run_configs: Vec<(Uuid, Vec<&str>)> = runs
        .iter()
        .map(|run| {
            let keys = run_groups.get(&run.summary.id);
            let configs = keys.into_iter().flatten().map(|k| k.0.as_str()).collect();
            (run.summary.id, configs)
        })
        .collect();
    let parts: Vec<ConfigPart<Uuid>> = config_parts(&run_configs)
        .into_iter()
        .filter(|part| scope.selects(part))
        .collect();
    let configs: BTreeSet<String> = parts
        .iter()
        .flat_map(|part| part.configs.iter().cloned())
        .collect();
    groups.retain(|key, _| configs.contains(&key.0));

    timing.lap("groups");
    let graph = store.commit_graph(project.id).await?;
    timing.lap("graph");
    let ctx = CommitContext {
        default_branch: &project.default_branch,
        branch,
        commit: commit_sha,
        merge_base: merge_base.as_deref(),
        det: &det,
        graph: &graph,
    };
    // Alerts of earlier commits that are not resolved: a finding that is the same change seen
    // again (its alert's commit is in this finding's baseline window) continues that alert
    // instead of opening another at every commit until the window has moved past the step.
    let standing = store
        .standing_alerts(project.id, branch, &CONTINUABLE)
        .await?;
    timing.lap("read");
    let mut alerts = Vec::new();
    let mut analyzed: HashMap<(String, String), GroupAnalysis> = HashMap::new();
    let mut previous: Vec<String> = Vec::new();
    // Every group's input first: the cells of one configuration are decided together.
    let mut prepared = Vec::new();
    // The default-branch history of each group with a standing alert to resolve.
    let mut default_histories: HashMap<(String, String), GroupInput> = HashMap::new();
    // The groups of one configuration mostly read the same window: its runs and their values once.
    let mut window_runs = crate::storage::WindowRuns::default();
    // The groups' histories, plans and samples are read one group after another; their
    // engine inputs and workloads are built on every core once all are read (`build_inputs`).
    // A group with per-request samples gets its input at once instead, so that only one
    // group's samples are held at a time (4 MB each in issue 12's detailed uploads).
    let mut staged = Vec::with_capacity(groups.len());
    for (key, series) in &groups {
        let ids: Vec<String> = series.iter().map(|s| s.series_id.clone()).collect();
        let pinned = series.iter().find_map(|s| pins.get(&s.series_id));
        let pinned_commit = pinned.map(|p| p.commit_sha.as_str());
        // The commits a decision names outside the newest ancestors: the pin, and the
        // commits and baselines of the group's standing alerts (to continue or resolve them).
        let named: Vec<&str> = pinned_commit
            .into_iter()
            .chain(
                standing
                    .iter()
                    .filter(|a| ids.contains(&a.series_id))
                    .flat_map(|a| {
                        std::iter::once(a.commit.as_str())
                            .chain(a.baseline_commits.iter().map(String::as_str))
                    }),
            )
            .collect();
        let (points, plan) = read_window(
            store,
            project.id,
            &ctx,
            &ids,
            &named,
            pinned_commit,
            &mut window_runs,
            &mut timing,
        )
        .await?;
        history_values += points.len();
        // The baseline's samples only when the candidate has some to compare them with.
        let wanted = plan.sample_results(&ctx, series, &points);
        let mut samples = store.samples_of_results(&wanted.candidate).await?;
        if !samples.is_empty() {
            samples.extend(store.samples_of_results(&wanted.baseline).await?);
        }
        timing.lap("samples");
        // What resolving a standing alert of an earlier commit compares with: only groups that
        // have one need it (built for every group, it was most of the inputs phase, which
        // session 27's profile put at a quarter of an analysis).
        let resolves = branch == project.default_branch
            && standing.iter().any(|a| {
                a.status.is_active() && a.commit != commit_sha && ids.contains(&a.series_id)
            });
        let read = GroupRead {
            key,
            series,
            points,
            plan,
            samples,
            resolves,
        };
        staged.push(if read.samples.is_empty() {
            Staged::Read(read)
        } else {
            let built = build_input(&ctx, read);
            timing.lap("inputs");
            Staged::Built(built)
        });
    }
    let built = build_inputs(&ctx, staged, running.alone());
    timing.lap("inputs");
    // For a group without history, the nearest stored group (`no_baseline` names it): the
    // stored groups read once for all of them.
    let mut with_history: Option<Vec<(String, String)>> = None;
    for (mut p, full) in built {
        if let Some(full) = full {
            default_histories.insert(p.key.clone(), full);
        }
        if group::lacks_history(&p.input) {
            let others = match &mut with_history {
                Some(others) => others,
                None => {
                    with_history.insert(store.groups_with_history(project.id, commit_sha).await?)
                }
            };
            p.workload.nearest = group::nearest_of(&p.key, others);
        }
        prepared.push(p);
    }
    timing.lap("workload");
    let previous_of: Vec<Vec<String>> = prepared
        .iter()
        .map(|p| p.plan.previous(commit_sha, det.engine.confirm_commits))
        .collect();
    let decided = group::analyze_groups_in(&ctx, prepared, |k| k.0.as_str(), running.alone());
    for ((key, mut ga), before) in decided.into_iter().zip(previous_of) {
        let key = &key;
        for c in before {
            if !previous.contains(&c) {
                previous.push(c);
            }
        }
        for f in &ga.report.findings {
            match continued(&standing, f, commit_sha) {
                Some(earlier) => ga.continuing.push(Continuing {
                    alert_id: earlier.id,
                    commit: earlier.commit.clone(),
                    status: earlier.status,
                    summary: f.summary.clone(),
                }),
                None => alerts.push(new_alert(f, key, branch, commit_sha, &ga, version, &runs)),
            }
        }
        analyzed.insert(key.clone(), ga);
    }
    timing.lap("decide");
    // The commit's cells against its baseline commit's, and its repeats (`coverage`): while
    // repeats are pending, no alert opens; the verdict lists the findings as provisional.
    let coverage = coverage::commit_coverage(store, project.id, &ctx, &analyzed).await?;
    // Each part's repeats, among its own runs (a commit whose cells come as runs of their own
    // has each cell's repeats, not the sum of every cell's runs). While a part's repeats are
    // pending, its alerts are held.
    // Each analyzed run with its part's coverage.
    let mut run_parts: Vec<(&CommitRun, Coverage)> = Vec::with_capacity(runs.len());
    for part in &parts {
        let part_runs: Vec<&CommitRun> = runs
            .iter()
            .filter(|r| part.runs.contains(&r.summary.id))
            .collect();
        let runs_per_group = groups
            .keys()
            .filter(|key| part.configs.contains(&key.0))
            .map(|key| {
                let n = part_runs
                    .iter()
                    .filter(|r| {
                        run_groups
                            .get(&r.summary.id)
                            .is_some_and(|keys| keys.contains(key))
                    })
                    .count();
                (key.1.as_str(), n)
            });
        let repeats = Repeats::of(
            part_runs.iter().filter_map(|r| r.summary.repeats_expected),
            part_runs.len(),
            runs_per_group,
            det.repeats,
        );
        let mut held = Vec::new();
        if repeats.pending() {
            let (of_part, others): (Vec<_>, Vec<_>) = alerts
                .drain(..)
                .partition(|a| part.configs.contains(&a.series_key_json));
            alerts = others;
            held = of_part
                .iter()
                .filter(|a| a.kind != AlertKind::Improvement)
                .map(coverage::held)
                .collect();
        }
        let part_coverage = Coverage {
            repeats: Some(repeats),
            held,
            ..coverage.clone()
        };
        run_parts.extend(part_runs.into_iter().map(|r| (r, part_coverage.clone())));
    }
    timing.lap("coverage");
    store
        .save_commit_alerts(
            project.id,
            branch,
            commit_sha,
            &COMMIT_KINDS,
            (*scope != Scope::Commit).then_some(&configs),
            &alerts,
            SUPERSEDED,
        )
        .await?;
    if branch == project.default_branch {
        let still = resolve_returned(
            store,
            &standing,
            &ctx,
            &groups,
            &analyzed,
            &default_histories,
        )
        .await?;
        for (key, alert) in still {
            let Some(ga) = analyzed.get_mut(&key) else {
                continue;
            };
            if ga.continuing.iter().any(|c| c.alert_id == alert.id) {
                continue;
            }
            ga.continuing.push(Continuing {
                alert_id: alert.id,
                commit: alert.commit.clone(),
                status: alert.status,
                summary: alert.summary.clone(),
            });
        }
    }
    timing.lap("alerts");
    // Every run's alerts in one read and every analysis in one write: round trips to the
    // database are most of an upload's cost after the decisions (BENCHMARKS.md "Session 38").
    let run_ids: Vec<Uuid> = run_parts.iter().map(|(run, _)| run.summary.id).collect();
    let mut alerts_of = store.runs_alerts(&run_ids).await?;
    let mut docs = Vec::with_capacity(run_parts.len());
    for (run, coverage) in run_parts {
        let keys = run_groups.remove(&run.summary.id).unwrap_or_default();
        let mut doc = run_analysis(run, &keys, &analyzed, version, &ctx);
        doc.coverage = coverage.for_run(&keys);
        let alerts = alerts_of.remove(&run.summary.id).unwrap_or_default();
        let v = verdict_of(
            run.summary.id,
            &run.summary.commit_sha,
            Some(&doc),
            &alerts,
            &det,
        );
        docs.push((v.verdict, doc));
    }
    let docs: Vec<_> = docs.iter().map(|(verdict, doc)| (*verdict, doc)).collect();
    store.put_run_analyses(&docs).await?;
    // The scan reads its own input from the store when a worker takes it (`scan`); stored
    // before this analysis's job is finished, so a crash in between asks again on the retry.
    if scan
        && branch == project.default_branch
        && det.engine.change_points.enabled
        && !analyzed.is_empty()
    {
        scan::request(store, project.id, branch).await?;
    }
    timing.lap("store");
    let (cached_runs, cached_values) = store.cached_run_values();
    tracing::debug!(
        project = %project.slug,
        commit = commit_sha,
        groups = groups.len(),
        parts = parts.len(),
        history_values,
        cached_runs,
        cached_values,
        phases = %timing,
        "commit analyzed"
    );
    crate::memory::note_work();
    Ok((previous, graph, configs))
}

/// One group of a commit as [`analyze_one`] read it: its history, baseline plan and the
/// per-request samples it compares, before its input is built.
struct GroupRead<'g> {
    key: &'g (String, String),
    series: &'g [benchtrail_core::report::GroupSeries],
    points: Vec<benchtrail_core::report::HistoryPoint>,
    plan: group::Plan,
    samples: HashMap<i64, benchtrail_core::samples::RequestSamples>,
    /// The group has a standing alert of an earlier commit this analysis may resolve: its
    /// default-branch history is built too.
    resolves: bool,
}

/// A group of [`analyze_one`] read, or with its input built already (one with per-request
/// samples, see there).
enum Staged<'g> {
    Read(GroupRead<'g>),
    Built(BuiltGroup),
}

/// A group ready to be decided, and its default-branch history when it may resolve a standing
/// alert of an earlier commit.
type BuiltGroup = (group::PreparedGroup<(String, String)>, Option<GroupInput>);

/// The groups of `staged` built ([`build_input`]), in their order; on every core when
/// `parallel` (the analysis runs alone: [`concurrency`]): pure CPU, a fifth of an 18-cell
/// upload's analysis (BENCHMARKS.md "Session 36"). All at once rather than a batch per core
/// between reads: batches were slower (the pool's threads spun between them, taking the core
/// the reads ran on).
fn build_inputs(
    ctx: &CommitContext<'_>,
    staged: Vec<Staged<'_>>,
    parallel: bool,
) -> Vec<BuiltGroup> {
    use rayon::prelude::*;
    let build = |s| match s {
        Staged::Read(read) => build_input(ctx, read),
        Staged::Built(built) => built,
    };
    if parallel {
        staged.into_par_iter().map(build).collect()
    } else {
        staged.into_iter().map(build).collect()
    }
}

/// The engine input and workload of group `r` (and its default-branch history when it may
/// resolve a standing alert).
fn build_input(ctx: &CommitContext<'_>, r: GroupRead<'_>) -> BuiltGroup {
    let input = ctx.inputs(r.series, &r.points, &r.plan, &r.samples);
    let full = r
        .resolves
        .then(|| ctx.default_branch_history(r.series, &r.points, &r.plan));
    // What the runs measured of their work.
    let workload = ctx.workload(r.series, &r.points, &r.plan);
    let prepared = group::PreparedGroup {
        key: r.key.clone(),
        points: r.points,
        plan: r.plan,
        input,
        workload,
    };
    (prepared, full)
}

/// Wall time of an analysis's phases, for the `debug` log line that says where an upload's
/// time goes (issue 12's profile): `read=3.1ms history=40.2ms …`. A phase met again (one per
/// group) adds up.
struct PhaseTimes {
    last: std::time::Instant,
    laps: Vec<(&'static str, std::time::Duration)>,
}

impl PhaseTimes {
    fn start() -> PhaseTimes {
        PhaseTimes {
            last: std::time::Instant::now(),
            laps: Vec::new(),
        }
    }

    /// Ends the phase `name` (begun at the previous lap or the start).
    fn lap(&mut self, name: &'static str) {
        let now = std::time::Instant::now();
        let took = now - self.last;
        match self.laps.iter_mut().find(|(n, _)| *n == name) {
            Some((_, total)) => *total += took,
            None => self.laps.push((name, took)),
        }
        self.last = now;
    }
}

impl std::fmt::Display for PhaseTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (name, d)) in self.laps.iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            write!(f, "{sep}{name}={:.1}ms", d.as_secs_f64() * 1e3)?;
        }
        Ok(())
    }
}

/// The history one group's analysis reads and its baseline plan: the window of
/// [`benchtrail_core::report::window`], widened fourfold until it holds enough valid baseline
/// commits of the group or every ancestor (then the result is the whole history's).
async fn read_window(
    store: &Store,
    project_id: i64,
    ctx: &CommitContext<'_>,
    ids: &[String],
    named: &[&str],
    pinned: Option<&str>,
    window_runs: &mut crate::storage::WindowRuns,
    timing: &mut PhaseTimes,
) -> Result<(Vec<benchtrail_core::report::HistoryPoint>, group::Plan), StorageError> {
    let mut newest = window::initial_window(ctx.det);
    loop {
        let w = ctx.history_window(newest, named.iter().copied());
        timing.lap("window");
        let points = store
            .series_history_in(
                project_id,
                ids,
                w.commits.as_deref(),
                ctx.graph,
                window_runs,
            )
            .await?;
        timing.lap("history");
        let plan = ctx.plan(&points, pinned);
        timing.lap("plan");
        if ctx.window_suffices(&w, &plan, &points) {
            return Ok((points, plan));
        }
        newest *= 4;
    }
}

/// The current verdict of run `run_id` of `project` (its stored analysis and the current
/// alerts of its commit), as `GET /api/v1/runs/{id}/verdict` answers it; `None` when the run
/// does not exist.
pub async fn current_verdict(
    store: &Store,
    project: &Project,
    run_id: Uuid,
) -> Result<Option<Verdict>, StorageError> {
    let Some(run) = store.run_summary(run_id).await? else {
        return Ok(None);
    };
    Ok(Some(verdict_of_run(store, project, &run).await?))
}

/// The current verdict of `run` (see [`current_verdict`]), from the stored basis of its
/// analysis ([`Store::run_verdict_basis`]) rather than the whole analysis: what the verdict
/// endpoint CI polls reads.
pub async fn verdict_of_run(
    store: &Store,
    project: &Project,
    run: &RunSummary,
) -> Result<Verdict, StorageError> {
    let basis = store.run_verdict_basis(run.id).await?;
    verdict_with(store, project, RunAt::of(run), basis.as_deref(), None).await
}

/// [`current_verdict`] of a run this request has just stored, with `settings` the request
/// read: `run` holds what the verdict needs of its summary, and neither is read again (two
/// round trips fewer per upload) unless the run's analysis used another version of the
/// settings (they changed since the request read them: then the current ones are read).
///
/// # Errors
/// A storage error.
pub async fn verdict_of_new_run(
    store: &Store,
    project: &Project,
    run: &crate::storage::NewRun,
    settings: &crate::storage::StoredSettings,
) -> Result<Verdict, StorageError> {
    let basis = store.run_verdict_basis(run.id).await?;
    let at = RunAt {
        id: run.id,
        branch: &run.branch,
        commit_sha: &run.commit_sha,
    };
    let known = basis
        .as_deref()
        .is_none_or(|b| b.settings_version == settings.version)
        .then_some(settings);
    verdict_with(store, project, at, basis.as_deref(), known).await
}

/// What a verdict reads of its run: the run and where it was measured.
#[derive(Clone, Copy)]
struct RunAt<'a> {
    id: Uuid,
    branch: &'a str,
    commit_sha: &'a str,
}

impl<'a> RunAt<'a> {
    fn of(run: &'a RunSummary) -> Self {
        RunAt {
            id: run.id,
            branch: &run.branch,
            commit_sha: &run.commit_sha,
        }
    }
}

/// The current verdict of `run` from `basis` (its analysis' [`VerdictBasis`]; `None`: not
/// analyzed), the current alerts of its commit, the project's detection settings (`settings`,
/// else read), and the analysis queued for it.
async fn verdict_with(
    store: &Store,
    project: &Project,
    run: RunAt<'_>,
    basis: Option<&VerdictBasis>,
    settings: Option<&crate::storage::StoredSettings>,
) -> Result<Verdict, StorageError> {
    let read;
    let settings = match settings {
        Some(known) => known,
        None => {
            read = store.settings(project).await?;
            &read
        }
    };
    let alerts = store.run_alerts(run.id).await?;
    let mut verdict = verdict_from_basis(
        run.id,
        run.commit_sha,
        basis,
        &alerts,
        &settings.settings.detection,
    );
    verdict.queued_analysis = queued_analysis(store, project, run).await?;
    Ok(verdict)
}

/// The analysis job waiting for `run`'s commit, if any, as a verdict reports it.
async fn queued_analysis(
    store: &Store,
    project: &Project,
    run: RunAt<'_>,
) -> Result<Option<benchtrail_core::report::verdict::QueuedAnalysis>, StorageError> {
    Ok(store
        .job_of_commit(project.id, run.branch, run.commit_sha)
        .await?
        .map(|job| benchtrail_core::report::verdict::QueuedAnalysis {
            queued_at: job.queued_at,
            attempts: job.attempts,
            next_attempt_at: job.not_before,
            running: job.running,
        }))
}

/// The current verdict of `run` and the stored analysis it is computed from (none when the
/// run has not been analyzed): the verdict endpoint, the upload receipt and the report all
/// answer with this.
pub async fn verdict_and_analysis(
    store: &Store,
    project: &Project,
    run: &RunSummary,
) -> Result<(Verdict, Option<RunAnalysis>), StorageError> {
    let analysis = store.run_analysis(run.id).await?.map(|a| a.analysis);
    let basis = analysis.as_ref().map(VerdictBasis::of);
    let verdict = verdict_with(store, project, RunAt::of(run), basis.as_ref(), None).await?;
    Ok((verdict, analysis))
}

/// The analysis of an upload: [`analyze_commit`] of `scope`; returns the re-analyses it asks
/// for. When the upload changed the history of commits stored before it (it arrived out of
/// order: a parent after its child, or another run of a commit after a later commit), those
/// commits ([`CommitGraph::affected_by`]) were analyzed against a graph with a gap, where
/// unrelated commits stood in for the missing ancestry, or without this run in their
/// baseline: their baselines, alerts and verdicts must follow what is stored now. Each becomes a
/// [`JobTarget::Reanalysis`], enqueued by the caller with the end of this analysis's job, so
/// that many uploads out of order (8 clients uploading a history at once) ask for one
/// analysis of each commit instead of one per upload.
pub async fn analyze_upload(
    store: &Store,
    project: &Project,
    branch: &str,
    commit_sha: &str,
    scope: &Scope,
) -> Result<Vec<JobTarget>, StorageError> {
    let graph = analyze_commit(store, project, branch, commit_sha, scope).await?;
    let affected: HashSet<&str> = graph.affected_by(commit_sha).into_iter().collect();
    if affected.is_empty() {
        return Ok(Vec::new());
    }
    let commits = store.project_commits(project.id).await?;
    // A job of the commit that has not started reads this upload's run when it does (the run
    // was stored before this analysis began): asking again would only write.
    let waiting = store.commit_jobs_waiting(project.id).await?;
    let mut again = Vec::new();
    for (branch, commit_sha) in commits {
        if !affected.contains(commit_sha.as_str()) {
            continue;
        }
        let upload_job = JobTarget::Commit {
            branch: branch.clone(),
            commit_sha: commit_sha.clone(),
        };
        let target = JobTarget::Reanalysis { branch, commit_sha };
        if waiting.contains(&upload_job) || waiting.contains(&target) {
            continue;
        }
        again.push(target);
    }
    tracing::debug!(project = %project.slug, commit = commit_sha, again = again.len(),
        "commits to analyze again after an upload out of order");
    Ok(again)
}

/// Analyzes every commit of a project again, in commit order (after an exclusion or a pin).
/// Each commit is analyzed once (its following commits are all stored, so confirmation needs
/// no second pass); the change-point scan is asked for once, by the last default-branch commit.
pub async fn recompute_project(store: &Store, project: &Project) -> Result<(), StorageError> {
    let commits = store.project_commits(project.id).await?;
    let last_default = commits
        .iter()
        .rposition(|(branch, _)| *branch == project.default_branch);
    for (i, (branch, commit)) in commits.iter().enumerate() {
        let scan = Some(i) == last_default;
        analyze_one(store, project, branch, commit, &Scope::Commit, scan).await?;
    }
    Ok(())
}

/// Enqueues the recomputation ([`crate::storage::JobTarget::Project`]) of every project that
/// holds a run analysis of an older schema than [`ANALYSIS_SCHEMA`]; returns how many. Run at
/// start-up: the workers recompute them, and until then such a run reads as `pending`.
pub async fn enqueue_stale(store: &Store) -> Result<usize, StorageError> {
    let slugs = store.projects_with_stale_analyses().await?;
    for slug in &slugs {
        if let Some(project) = store.project(slug).await? {
            tracing::info!(project = %project.slug, "analyses of an older schema: recomputation queued");
            store
                .enqueue_job(project.id, &crate::storage::JobTarget::Project, None)
                .await?;
        }
    }
    Ok(slugs.len())
}

/// Recomputes, one project after another, every project that holds a run analysis of an
/// older schema than [`ANALYSIS_SCHEMA`] ([`recompute_project`]); returns how many.
pub async fn recompute_stale(store: &Store) -> Result<usize, StorageError> {
    let slugs = store.projects_with_stale_analyses().await?;
    for slug in &slugs {
        if let Some(project) = store.project(slug).await? {
            tracing::info!(project = %project.slug, "recomputing analyses of an older schema");
            recompute_project(store, &project).await?;
        }
    }
    Ok(slugs.len())
}

/// The analysis of one run: its groups with the baseline they were compared with, reports and
/// effect-only findings (coverage is set by the caller).
fn run_analysis(
    run: &CommitRun,
    keys: &[(String, String)],
    analyzed: &HashMap<(String, String), GroupAnalysis>,
    version: i64,
    ctx: &CommitContext<'_>,
) -> RunAnalysis {
    let mut seen = HashSet::new();
    let groups = keys
        .iter()
        .filter(|k| seen.insert((*k).clone()))
        .filter_map(|k| analyzed.get(k).map(|ga| (k, ga)))
        .map(|(k, ga)| CellAnalysis::of(&k.0, &k.1, ga))
        .collect();
    RunAnalysis {
        schema: ANALYSIS_SCHEMA,
        run_id: run.summary.id,
        commit: ctx.commit.to_string(),
        branch: ctx.branch.to_string(),
        default_branch: ctx.default_branch.to_string(),
        merge_base: ctx.merge_base.map(str::to_string),
        settings_version: version,
        groups,
        coverage: Default::default(),
    }
}
