//! How much history one group's analysis at a candidate commit reads: the newest ancestors
//! (a window), not the whole history, so an upload does not cost more the longer the project
//! runs (measured to commit 600: `cargo bench --bench history_growth`, BENCHMARKS.md).
//!
//! The engine only ever looks at the last [`Settings::spread`] baseline commits with a valid
//! run (the level at the last `baseline_window` of them, the run-to-run spread over the
//! rest; [`crate::regression`]). So the analysis reads the newest `2 × spread +
//! confirm_commits` possible ancestors of the candidate ([`CommitContext::history_window`];
//! twice the spread because commits without a valid run of the group do not count), plus the
//! commits a decision names outside that window (the merge base, a pinned baseline, the
//! commits and baselines of the alerts still open on the group), plus the commits after the
//! candidate that may confirm it. When the window holds fewer than `spread` commits with a
//! valid run of the group ([`CommitContext::window_suffices`]: a cell measured only now and
//! then, a run of excluded or failed runs), the caller widens it (four times, and again) until
//! it does or it holds every ancestor: the result is the one the whole history gives.
//!
//! [`Settings::spread`]: crate::regression::Settings::spread

use super::group::{CommitContext, Plan};
use super::history::HistoryPoint;
// FxHash: see `super::group`.
use rustc_hash::FxHashSet as HashSet;

/// The commits one group's analysis reads ([`CommitContext::history_window`]).
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryWindow {
    /// Every commit to read, without duplicates: the newest ancestors, the candidate, the
    /// named commits and the following ones. `None`: the window holds every ancestor, so the
    /// whole history is read (no commit filter).
    pub commits: Option<Vec<String>>,
    /// The newest ancestors alone (what [`CommitContext::window_suffices`] counts), newest
    /// first.
    ancestors: Vec<String>,
}

impl HistoryWindow {
    /// Whether the window holds every possible ancestor of the candidate.
    pub fn is_complete(&self) -> bool {
        self.commits.is_none()
    }
}

/// The first window's size in ancestors for settings `det`: twice the engine's spread (see the
/// module documentation) and the commits confirmation looks back over.
pub fn initial_window(det: &crate::settings::DetectionSettings) -> usize {
    2 * det.engine.spread() + det.engine.confirm_commits
}

impl CommitContext<'_> {
    /// The newest `newest` possible ancestors of the candidate (for a pull request also those
    /// of its merge base, and the merge base itself), the candidate, `named` (commits a
    /// decision cites: a pinned baseline, standing alerts and their baselines) and the next
    /// `4 × confirm_commits` commits after the candidate in history order (the ones that may
    /// confirm it; other branches' commits interleave, hence four times).
    pub fn history_window<'n>(
        &self,
        newest: usize,
        named: impl IntoIterator<Item = &'n str>,
    ) -> HistoryWindow {
        let mut ancestry = self.graph.possible_ancestry(self.commit);
        if let Some(mb) = self
            .merge_base
            .filter(|mb| self.graph.position(mb).is_some())
        {
            ancestry.extend(&self.graph.possible_ancestry(mb));
            ancestry.insert(mb);
        }
        ancestry.remove(self.commit);
        let complete = ancestry.len() <= newest;
        let ancestors: Vec<String> = ancestry
            .newest_first()
            .take(newest)
            .map(str::to_owned)
            .collect();
        if complete {
            return HistoryWindow {
                commits: None,
                ancestors,
            };
        }
        let mut seen: HashSet<String> = HashSet::default();
        let mut commits = Vec::new();
        let mut add = |sha: &str| {
            if seen.insert(sha.to_string()) {
                commits.push(sha.to_string());
            }
        };
        add(self.commit);
        if let Some(mb) = self.merge_base {
            add(mb);
        }
        ancestors.iter().for_each(|c| add(c));
        named.into_iter().for_each(&mut add);
        let following = 4 * self.det.engine.confirm_commits;
        if following > 0 {
            if let Some(at) = self.graph.position(self.commit) {
                self.graph
                    .order()
                    .skip(at + 1)
                    .take(following)
                    .for_each(&mut add);
            }
        }
        HistoryWindow {
            commits: Some(commits),
            ancestors,
        }
    }

    /// Whether the analysis of `points` (read for `window`, planned as `plan`) is the one the
    /// whole history gives: the window holds every ancestor, or at least [`Settings::spread`]
    /// of its ancestors are baseline commits with a valid run of the group.
    ///
    /// [`Settings::spread`]: crate::regression::Settings::spread
    pub fn window_suffices(
        &self,
        window: &HistoryWindow,
        plan: &Plan,
        points: &[HistoryPoint],
    ) -> bool {
        if window.is_complete() {
            return true;
        }
        let in_window: HashSet<&str> = window.ancestors.iter().map(String::as_str).collect();
        let base: HashSet<&str> = plan
            .base_commits()
            .iter()
            .map(String::as_str)
            .filter(|c| in_window.contains(c))
            .collect();
        let valid: HashSet<&str> = points
            .iter()
            .filter(|p| *p.branch == *self.default_branch && base.contains(&*p.commit_sha))
            .filter(|p| self.is_valid(p))
            .map(|p| &*p.commit_sha)
            .collect();
        valid.len() >= self.det.engine.spread()
    }
}

#[cfg(test)]
mod tests {
    //! The window's promise: the analysis of a window is the whole history's.
    use super::*;
    use crate::history::{CommitGraph, CommitNode};
    use crate::report::group::{analyze_groups, GroupAnalysis, PreparedGroup};
    use crate::report::history::GroupSeries;
    use crate::settings::DetectionSettings;
    use crate::Stat;
    use chrono::{Duration, TimeZone, Utc};
    use uuid::Uuid;

    const MAIN: &str = "main";

    fn sha(i: usize) -> String {
        format!("{i:040x}")
    }

    /// A linear history of `n` commits, each with its parent.
    fn graph(n: usize) -> CommitGraph {
        let t0 = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        CommitGraph::new(
            (0..n)
                .map(|i| CommitNode {
                    sha: sha(i),
                    parents: if i == 0 { vec![] } else { vec![sha(i - 1)] },
                    time: t0 + Duration::hours(i as i64),
                    first_seq: i as i64,
                })
                .collect(),
        )
    }

    /// TTFT p50 (lower is better) and output throughput (higher is better) of one cell.
    fn series() -> Vec<GroupSeries> {
        [
            ("ttft", Stat::Percentile("50".into())),
            ("output_throughput", Stat::Value),
        ]
        .into_iter()
        .map(|(metric, stat)| GroupSeries {
            series_id: format!("{metric}/{stat}"),
            metric: metric.into(),
            stat,
            slo_profile: None,
            series_key_json: "{}".into(),
            cell_key: "c4".into(),
        })
        .collect()
    }

    /// Deterministic noise in [-1, 1) (a 64-bit LCG), so the test needs no RNG crate.
    struct Noise(u64);
    impl Noise {
        fn next(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        }
    }

    /// Two runs per measured commit at 2 % noise, TTFT 10 % higher from `step` on; commits
    /// where `measured(i)` is false have no run; runs of the commits in `excluded` are excluded.
    fn points(
        n: usize,
        step: usize,
        measured: impl Fn(usize) -> bool,
        excluded: &[usize],
    ) -> Vec<HistoryPoint> {
        let mut noise = Noise(42);
        let mut out = Vec::new();
        let mut result_id = 0;
        for i in (0..n).filter(|&i| measured(i)) {
            for _ in 0..2 {
                result_id += 1;
                let run_id = Uuid::from_u128(result_id as u128);
                let level = 1.0 + 0.02 * noise.next();
                for s in series() {
                    let value = match s.metric.as_str() {
                        "ttft" => 100.0 * level * if i >= step { 1.1 } else { 1.0 },
                        _ => 2000.0 / level,
                    };
                    out.push(HistoryPoint {
                        series_id: s.series_id.into(),
                        result_id,
                        run_id,
                        commit_sha: sha(i).into(),
                        branch: MAIN.into(),
                        seq: result_id,
                        value,
                        completed: Some(200.0),
                        failed: Some(0.0),
                        num_prompts: Some(200.0),
                        excluded: excluded.contains(&i),
                        lengths: Default::default(),
                    });
                }
            }
        }
        out
    }

    fn analyzed(ctx: &CommitContext<'_>, points: Vec<HistoryPoint>) -> GroupAnalysis {
        let s = series();
        let plan = ctx.plan(&points, None);
        let input = ctx.inputs(&s, &points, &plan, &Default::default());
        let workload = ctx.workload(&s, &points, &plan);
        let prepared = vec![PreparedGroup {
            key: ("{}".to_string(), "c4".to_string()),
            points,
            plan,
            input,
            workload,
        }];
        analyze_groups(ctx, prepared, |k| k.0.as_str()).remove(0).1
    }

    /// Reads `all` the way the server does: the window, widened fourfold until it suffices.
    /// Returns the points read and how many ancestors the last window held.
    fn read(ctx: &CommitContext<'_>, all: &[HistoryPoint]) -> (Vec<HistoryPoint>, usize) {
        let mut newest = initial_window(ctx.det);
        loop {
            let w = ctx.history_window(newest, std::iter::empty());
            let points: Vec<HistoryPoint> = all
                .iter()
                .filter(|p| {
                    w.commits
                        .as_ref()
                        .is_none_or(|c| c.iter().any(|x| **x == *p.commit_sha))
                })
                .cloned()
                .collect();
            let plan = ctx.plan(&points, None);
            if ctx.window_suffices(&w, &plan, &points) {
                return (points, w.ancestors.len());
            }
            newest *= 4;
        }
    }

    fn check(n: usize, candidate: usize, all: Vec<HistoryPoint>) -> (GroupAnalysis, usize, usize) {
        let det = DetectionSettings::default();
        let g = graph(n);
        let commit = sha(candidate);
        let ctx = CommitContext {
            default_branch: MAIN,
            branch: MAIN,
            commit: &commit,
            merge_base: None,
            det: &det,
            graph: &g,
        };
        let (windowed, ancestors) = read(&ctx, &all);
        let read = windowed.len();
        let whole = analyzed(&ctx, all);
        let part = analyzed(&ctx, windowed);
        assert_eq!(part.report, whole.report);
        assert_eq!(part.effect_only, whole.effect_only);
        (whole, read, ancestors)
    }

    #[test]
    fn a_window_of_a_long_history_gives_the_whole_historys_analysis() {
        // 300 commits, a step at 299: the first window (2 × 30 ancestors) suffices.
        let (whole, read, ancestors) = check(300, 299, points(300, 299, |_| true, &[]));
        assert_eq!(ancestors, 60);
        // 61 commits (60 ancestors and the candidate) × 2 runs × 2 series.
        assert_eq!(read, 61 * 2 * 2);
        assert!(
            whole
                .report
                .findings
                .iter()
                .any(|f| f.series_ids[0] == "ttft/p50"),
            "the step is found: {:?}",
            whole.report.findings
        );
    }

    #[test]
    fn a_sparse_or_excluded_window_is_widened_until_it_holds_a_spread() {
        // Measured every 5th commit, and the newest 40 measured ancestors excluded (795 … 990):
        // 60 ancestors hold 12 measured commits, none valid; 240 hold 48 (8 valid); 960 hold
        // 192 (152 valid).
        let excluded: Vec<usize> = (0..995).rev().filter(|i| i % 5 == 0).take(40).collect();
        let (_, read, ancestors) = check(1000, 995, points(1000, 995, |i| i % 5 == 0, &excluded));
        assert_eq!(ancestors, 960);
        assert_eq!(read, 193 * 2 * 2);
    }

    #[test]
    fn a_short_history_is_read_whole() {
        let g = graph(40);
        let det = DetectionSettings::default();
        let commit = sha(39);
        let ctx = CommitContext {
            default_branch: MAIN,
            branch: MAIN,
            commit: &commit,
            merge_base: None,
            det: &det,
            graph: &g,
        };
        let w = ctx.history_window(initial_window(&det), std::iter::empty());
        assert!(w.is_complete());
        assert_eq!(w.commits, None);
    }

    #[test]
    fn named_commits_and_the_merge_base_are_read_outside_the_window() {
        let g = graph(300);
        let det = DetectionSettings::default();
        let commit = sha(299);
        let mb = sha(250);
        let ctx = CommitContext {
            default_branch: MAIN,
            branch: "pr",
            commit: &commit,
            merge_base: Some(&mb),
            det: &det,
            graph: &g,
        };
        let pin = sha(3);
        let w = ctx.history_window(60, [pin.as_str()]);
        let commits = w.commits.expect("a window");
        assert_eq!(commits[0], commit);
        assert_eq!(commits[1], mb);
        assert_eq!(commits[2], sha(298));
        assert!(commits.contains(&pin));
        assert_eq!(commits.len(), 1 + 60 + 1);
    }
}
