//! Metric families: the statistics of one metric are one question, and the cells of one
//! configuration answer it together.
//!
//! One slow run moves a metric's mean, median and tail together, and moves every cell of its CI
//! job a little; testing each of the ~150 series of an upload on its own at α turns one
//! run-level event into a dozen alerts and makes false alarms per upload many times α. So:
//!
//! * A **family** is one metric of one cell ([`FamilyKey`]; the three throughputs are one
//!   family, `throughput`). Its **index** at a commit is the mean over its tested statistics of
//!   `ln(commit mean)`: the log of their geometric mean, so a uniform 10 % shift moves it by
//!   ln 1.1 whatever the units, and the per-request sampling noise of the tail statistics is
//!   averaged down.
//! * Each family index is tested once per upload with
//!   [`significance::commit_mean_prediction`] on commit means (repeats are one sample of their
//!   commit), and the configuration's **combined index** (the mean of its cells' indexes) once
//!   more: a change that every cell shows is seen with less noise than any one cell has.
//! * **Decision** (a closed-testing style hierarchy, see [`decide`]): a family of a cell is a
//!   finding when its change is at least `min_effect_pct` and either its own test has
//!   `p < α / cells` (Bonferroni over the configuration's cells), or the combined index has
//!   `p < α` in the same direction and the cell's own one-sided `p < support_alpha` (the cell
//!   shows the change the configuration as a whole has). Per configuration and family this
//!   keeps the false-alarm rate of an upload near α in each direction.
//!
//! Families need positive values (a log); a count that can be 0 (failed requests) and a
//! percentage are tested series by series as before.

use super::significance::{self, commit_mean_prediction, one_sided_p, TestOutcome};
use super::{direction_of, GroupInput, SeriesInput, Settings};
use crate::metric::{lookup, Direction, Unit};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// A metric family within one result: the family name (the metric's name, or `throughput` for
/// request, output and total token throughput) and its SLO profile.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema,
)]
pub struct FamilyKey {
    /// `ttft`, `tpot`, `itl`, `e2el`, `throughput`, `request_goodput`, ...
    pub family: String,
    /// SLO profile of goodput families.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_profile: Option<String>,
}

/// The family a metric belongs to.
pub fn family_of(metric: &str) -> &str {
    match metric {
        "request_throughput" | "output_throughput" | "total_token_throughput" => "throughput",
        other => other,
    }
}

/// One family's index in one group, ready to test.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyIndex {
    /// The family.
    pub key: FamilyKey,
    /// Its direction (that of its metrics).
    pub direction: Direction,
    /// Indexes into the group's series of the family's members.
    pub members: Vec<usize>,
    /// (commit, index) of the baseline history, oldest first: the last
    /// `Settings::spread_window` commits where every member has a valid positive value.
    pub history: Vec<(String, f64)>,
    /// The candidate's index.
    pub candidate: f64,
    /// What the candidate's fewer repeats add to the variance of its index (log scale², ≥ 0).
    pub extra_var: f64,
    /// Valid runs of the candidate (the fewest among the members).
    pub runs_candidate: usize,
    /// Mean valid runs per commit of the level's window.
    pub runs_per_baseline_commit: f64,
}

impl FamilyIndex {
    /// The test of the candidate's index against its history at level `1 − α`.
    pub fn test(&self, settings: &Settings) -> TestOutcome {
        let values: Vec<f64> = self.history.iter().map(|h| h.1).collect();
        commit_mean_prediction(
            &values,
            settings.baseline_window,
            self.candidate,
            self.extra_var,
            1.0 - settings.alpha,
        )
    }

    /// The baseline commits (the level's window).
    pub fn baseline_commits(&self, settings: &Settings) -> Vec<String> {
        let k = settings.baseline_window.min(self.history.len());
        self.history[self.history.len() - k..]
            .iter()
            .map(|h| h.0.clone())
            .collect()
    }
}

/// Whether a series can be a member of a family: a tested statistic of a metric with a
/// direction whose values are not counts or percentages.
pub(super) fn family_member(s: &SeriesInput, settings: &Settings) -> bool {
    settings.tests(&s.stat)
        && direction_of(&s.metric) != Direction::Neutral
        && !super::PEAK_METRICS.contains(&s.metric.as_str())
        && !lookup(&s.metric).is_some_and(|m| matches!(m.unit, Unit::Requests | Unit::Percent))
}

fn valid(runs: &super::CommitRuns) -> Vec<f64> {
    runs.runs
        .iter()
        .filter(|r| !r.excluded && r.value.is_finite())
        .map(|r| r.value)
        .collect()
}

/// ln of the mean of `runs`' valid values, when there is one and every valid value is
/// positive. Without the allocation of [`valid`]: it runs for every member and commit of every
/// group of an upload (37,000 times for 18 cells).
fn log_mean_of_valid(runs: &super::CommitRuns) -> Option<f64> {
    let (mut sum, mut n, mut positive) = (0.0, 0usize, true);
    for r in runs
        .runs
        .iter()
        .filter(|r| !r.excluded && r.value.is_finite())
    {
        sum += r.value;
        n += 1;
        positive &= r.value > 0.0;
    }
    (n > 0 && positive).then(|| (sum / n as f64).ln())
}

/// The family indexes of a group (none for a pinned baseline: a pin is compared series by
/// series). A family whose candidate lacks a member, or whose values are not all positive,
/// is left to the per-series tests.
pub fn family_indexes(group: &GroupInput, settings: &Settings) -> Vec<FamilyIndex> {
    if group.pinned_baseline.is_some() {
        return Vec::new();
    }
    let mut by_key: BTreeMap<FamilyKey, Vec<usize>> = BTreeMap::new();
    for (i, s) in group.series.iter().enumerate() {
        if family_member(s, settings) && s.candidate.is_some() {
            by_key
                .entry(FamilyKey {
                    family: family_of(&s.metric).to_string(),
                    slo_profile: s.slo_profile.clone(),
                })
                .or_default()
                .push(i);
        }
    }
    let mut out = Vec::new();
    'family: for (key, members) in by_key {
        // Per member: commit → ln(mean of valid runs), and the candidate.
        // Per member: commit → ln(mean of valid runs), and the candidate's.
        let mut logs: Vec<rustc_hash::FxHashMap<&str, f64>> = Vec::new();
        let mut cand_logs = Vec::new();
        let mut runs_c = usize::MAX;
        for &i in &members {
            let s = &group.series[i];
            let Some(c) = s.candidate.as_ref() else {
                continue 'family;
            };
            let cv = valid(c);
            if cv.is_empty() || cv.iter().any(|v| *v <= 0.0) {
                continue 'family;
            }
            cand_logs.push(significance::mean(&cv).ln());
            runs_c = runs_c.min(cv.len());
            let mut m = rustc_hash::FxHashMap::default();
            for h in &s.history {
                if let Some(ln) = log_mean_of_valid(h) {
                    m.insert(h.commit.as_str(), ln);
                }
            }
            logs.push(m);
        }
        let first = &group.series[members[0]];
        // Commits where every member has a value: rows of (commit, members' logs).
        let mut rows: Vec<(&str, Vec<f64>)> = first
            .history
            .iter()
            .filter_map(|h| {
                let vals: Option<Vec<f64>> = logs
                    .iter()
                    .map(|m| m.get(h.commit.as_str()).copied())
                    .collect();
                vals.map(|v| (h.commit.as_str(), v))
            })
            .collect();
        if rows.len() > settings.spread() {
            rows.drain(..rows.len() - settings.spread());
        }
        let columns: Vec<Vec<f64>> = (0..members.len())
            .map(|j| rows.iter().map(|r| r.1[j]).collect())
            .collect();
        let prior: Vec<f64> = members
            .iter()
            .map(|&i| prior_weight(&group.series[i].stat))
            .collect();
        let w = inverse_variance_weights(&columns, &prior);
        let weighted = |v: &[f64]| v.iter().zip(&w).map(|(x, w)| x * w).sum::<f64>();
        let history: Vec<(String, f64)> = rows
            .iter()
            .map(|(c, v)| (c.to_string(), weighted(v)))
            .collect();
        // Repeats: the pooled within-commit variance of ln(run) over the level window, weighted
        // as the index (an upper bound of the index's own, as the members are correlated), and
        // the mean number of runs per baseline commit.
        let window: Vec<&str> = rows
            .iter()
            .rev()
            .take(settings.baseline_window)
            .map(|r| r.0)
            .collect();
        let (mut runs_b, mut commits_b, mut within) = (0usize, 0usize, 0.0);
        for (j, &i) in members.iter().enumerate() {
            let (mut ss, mut dof) = (0.0, 0.0);
            for h in &group.series[i].history {
                if !window.contains(&h.commit.as_str()) {
                    continue;
                }
                let v: Vec<f64> = valid(h).iter().map(|x| x.ln()).collect();
                if j == 0 {
                    runs_b += v.len();
                    commits_b += 1;
                }
                if v.len() >= 2 {
                    ss += significance::sample_var(&v) * (v.len() - 1) as f64;
                    dof += (v.len() - 1) as f64;
                }
            }
            if dof > 0.0 {
                within += w[j] * ss / dof;
            }
        }
        let r_b = if commits_b > 0 {
            runs_b as f64 / commits_b as f64
        } else {
            1.0
        };
        let extra_var = (within * (1.0 / runs_c as f64 - 1.0 / r_b)).max(0.0);
        let cand = weighted(&cand_logs);
        out.push(FamilyIndex {
            direction: direction_of(&first.metric),
            key,
            members,
            history,
            candidate: cand,
            extra_var,
            runs_candidate: runs_c,
            runs_per_baseline_commit: r_b,
        });
    }
    out
}

/// Commits of history below which a family's members (and a configuration's cells) take
/// their prior weights ([`prior_weight`]): weights chosen on a handful of commits pick whichever
/// statistic was quiet by chance, and the index's spread, estimated from the same commits,
/// would then be too small.
pub const MIN_WEIGHTING_COMMITS: usize = 10;

/// Commits of history from which the weights come from the history at all: below it the
/// prior weights hold. Weights fitted on the same commits whose spread the test then uses make
/// that spread too small: with exactly 10 commits the combined TTFT index rejected 1.9 % of
/// noise commits at a nominal 1 % (`ten_commit_calibration` in core/tests/detection_rates.rs).
pub const FITTED_WEIGHT_COMMITS: usize = 2 * MIN_WEIGHTING_COMMITS;

/// The prior weight of a statistic in its family's index, before the history says how noisy
/// each one is: its efficiency relative to the mean as an estimate of the level, from the
/// asymptotic variance of a sample quantile `p(1 − p) / (n f(q_p)²)` (Serfling 1980, §2.3) at a
/// normal density: `φ(z_p)² / (p(1 − p))` against the mean's `1 / n` (in units of σ²). So 1 for
/// a value or mean, 0.64 for the median, 0.34 for p90, 0.22 for p95, 0.07 for p99: the p99 of
/// 60 requests is nearly their maximum and moves by several times the run-to-run variation.
pub fn prior_weight(stat: &crate::metric::Stat) -> f64 {
    use statrs::distribution::{Continuous, ContinuousCDF, Normal};
    match stat.percentile() {
        None => 1.0,
        Some(p) => {
            let q = (p / 100.0).clamp(0.001, 0.999);
            let n = Normal::standard();
            let d = n.pdf(n.inverse_cdf(q));
            d * d / (q * (1.0 - q))
        }
    }
}

/// Weights summing to 1 for the columns (each one member's, or cell's, commit values over the
/// history): `prior` (relative weights) while the history is shorter than
/// [`MIN_WEIGHTING_COMMITS`] or any column has zero variance (then the zero-spread rule
/// decides); otherwise proportional to 1 / variance, the variances shrunk towards the prior's
/// as if it had been seen on [`MIN_WEIGHTING_COMMITS`] more commits (a variance estimated from
/// few commits is often small by chance). So a p99 of 100 requests counts for less than the
/// median, and a noisy cell less than a quiet one.
pub fn inverse_variance_weights(columns: &[Vec<f64>], prior: &[f64]) -> Vec<f64> {
    let vars: Vec<f64> = columns
        .iter()
        .map(|c| significance::sample_var(c))
        .collect();
    let prior_total: f64 = prior.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    if columns.iter().any(|c| c.len() < FITTED_WEIGHT_COMMITS) || vars.iter().any(|v| *v <= 0.0) {
        return prior.iter().map(|w| w / prior_total).collect();
    }
    let rows = columns[0].len() as f64;
    // The prior's variances: ∝ 1 / weight, scaled to the observed ones.
    let scale = vars.iter().zip(prior).map(|(v, w)| v * w).sum::<f64>() / vars.len() as f64;
    let m = MIN_WEIGHTING_COMMITS as f64;
    let shrunk: Vec<f64> = vars
        .iter()
        .zip(prior)
        .map(|(v, w)| (rows * v + m * scale / w) / (rows + m))
        .collect();
    let total: f64 = shrunk.iter().map(|v| 1.0 / v).sum();
    shrunk.iter().map(|v| 1.0 / v / total).collect()
}

/// What the configuration as a whole shows, per family: the test of the mean of its cells'
/// indexes, and how many cells the configuration has (for the Bonferroni share of α).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Gates {
    /// Cells of the configuration in this upload (at least 1).
    pub cells: usize,
    /// The combined index's test per family (present when ≥ 2 cells share the family).
    pub combined: HashMap<FamilyKey, TestOutcome>,
}

impl Gates {
    /// Gates of a configuration with one cell: no combined test.
    pub fn single() -> Gates {
        Gates {
            cells: 1,
            combined: HashMap::new(),
        }
    }
}

/// The gates of one configuration from its groups (one per cell, all at the same candidate).
pub fn configuration_gates(groups: &[&GroupInput], settings: &Settings) -> Gates {
    let indexes: Vec<Vec<FamilyIndex>> =
        groups.iter().map(|g| family_indexes(g, settings)).collect();
    let mut by_key: BTreeMap<&FamilyKey, Vec<&FamilyIndex>> = BTreeMap::new();
    for fi in indexes.iter().flatten() {
        by_key.entry(&fi.key).or_default().push(fi);
    }
    let mut combined = HashMap::new();
    for (key, cells) in by_key {
        if cells.len() < 2 {
            continue;
        }
        let maps: Vec<rustc_hash::FxHashMap<&str, f64>> = cells
            .iter()
            .map(|c| c.history.iter().map(|h| (h.0.as_str(), h.1)).collect())
            .collect();
        let rows: Vec<Vec<f64>> = cells[0]
            .history
            .iter()
            .filter_map(|h| maps.iter().map(|m| m.get(h.0.as_str()).copied()).collect())
            .collect();
        let columns: Vec<Vec<f64>> = (0..cells.len())
            .map(|j| rows.iter().map(|r| r[j]).collect())
            .collect();
        let w = inverse_variance_weights(&columns, &vec![1.0; columns.len()]);
        let weighted =
            |v: &mut dyn Iterator<Item = f64>| v.zip(&w).map(|(x, w)| x * w).sum::<f64>();
        let history: Vec<f64> = rows
            .iter()
            .map(|r| weighted(&mut r.iter().copied()))
            .collect();
        let cand = weighted(&mut cells.iter().map(|c| c.candidate));
        let extra = weighted(&mut cells.iter().map(|c| c.extra_var));
        combined.insert(
            key.clone(),
            commit_mean_prediction(
                &history,
                settings.baseline_window,
                cand,
                extra,
                1.0 - settings.alpha,
            ),
        );
    }
    Gates {
        cells: groups.len().max(1),
        combined,
    }
}

/// Which rule made a family a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionRule {
    /// The cell's own test, at α / cells.
    OwnTest,
    /// The configuration's combined index at α, and the cell's own one-sided test at
    /// `support_alpha`.
    SupportedByConfiguration,
}

/// A family's decision at the candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyDecision {
    /// The index and its test.
    pub index: FamilyIndex,
    /// The own test (log scale: `delta_abs` is the change of the mean log).
    pub own: TestOutcome,
    /// The change of the index's geometric mean, percent.
    pub delta_pct: f64,
    /// Whether the change is for the better.
    pub better: bool,
    /// `Some` when the family is a finding.
    pub rule: Option<DecisionRule>,
    /// The combined test of the configuration, when there is one.
    pub combined: Option<TestOutcome>,
}

/// `exp(d) − 1` in percent.
pub fn log_pct(d: f64) -> f64 {
    d.exp_m1() * 100.0
}

/// Decides one family (see the module documentation).
pub fn decide(index: FamilyIndex, gates: &Gates, settings: &Settings) -> FamilyDecision {
    let own = index.test(settings);
    let delta_pct = log_pct(own.delta_abs);
    let better = match index.direction {
        Direction::LowerIsBetter => own.delta_abs < 0.0,
        _ => own.delta_abs > 0.0,
    };
    let big = delta_pct.abs() >= settings.min_effect_pct && own.delta_abs != 0.0;
    let combined = gates.combined.get(&index.key).cloned();
    let rule = if !big {
        None
    } else {
        match (own.p_value, own.statistic, own.df) {
            (Some(p), _, _) if p < settings.alpha / gates.cells.max(1) as f64 => {
                Some(DecisionRule::OwnTest)
            }
            (Some(_), Some(t), Some(df)) => {
                let sign = own.delta_abs.signum();
                let supported = combined.as_ref().is_some_and(|c| {
                    c.p_value.is_some_and(|p| p < settings.alpha)
                        && c.delta_abs.signum() == sign
                        && log_pct(c.delta_abs).abs() >= settings.min_effect_pct
                });
                (supported && one_sided_p(t, df, sign) < settings.support_alpha)
                    .then_some(DecisionRule::SupportedByConfiguration)
            }
            // Zero spread, or one baseline value (effect only, which the server keeps out of
            // alerts): decided on the effect alone, as everywhere.
            (None, _, _) if own.test.is_untested() => Some(DecisionRule::OwnTest),
            _ => None,
        }
    };
    FamilyDecision {
        index,
        own,
        delta_pct,
        better,
        rule,
        combined,
    }
}
