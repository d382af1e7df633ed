//! From family decisions ([`super::family`]) to series states and findings: one finding per
//! (candidate, cell, family, direction), with the statistics that moved as its parts, and the
//! trade-off rule over families (gatekeeping: the harm at the strict level, the benefit then
//! one-sided at `support_alpha`).

use super::family::{decide, family_indexes, log_pct, DecisionRule, FamilyDecision, Gates};
use super::significance::{commit_mean_prediction, one_sided_p, Test};
use super::{
    comparison_finding, describe, direction_of, fmt_num, pct, Comparison, Finding, FindingKind,
    GroupInput, PartChange, SeriesReport, SeriesState, Settings, Severity, TradeoffPart,
};
use crate::metric::{lookup, Stat};

/// `p < 0.001` below a thousandth (never a rounded `p = 0.0010`), else two significant digits.
pub fn p_phrase(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_string()
    } else {
        let digits = (-p.log10().floor()) as usize + 1;
        format!("p = {p:.digits$}")
    }
}

/// Below these degrees of freedom of the baseline spread, an undecided change is reported as
/// "too little history" rather than with the huge detectable change the critical t gives.
const FEW_DF: f64 = 5.0;

/// Beyond this |t| the statistic is printed as a bound.
pub const T_SHOWN_UP_TO: f64 = 100.0;

/// `t = 4.21`; beyond ±[`T_SHOWN_UP_TO`] `|t| > 100`: a baseline spread tiny against the
/// change makes |t| huge, and its exact value says nothing more (it only reads as a bug).
pub fn t_phrase(t: f64) -> String {
    if !t.is_finite() || t.abs() > T_SHOWN_UP_TO {
        format!("|t| > {T_SHOWN_UP_TO:.0}")
    } else {
        format!("t = {t:.2}")
    }
}

/// The order in which a family's member gives its headline: stable from commit to commit, so
/// the alert a later commit continues is found by its first series.
pub(super) fn anchor_rank(metric: &str, stat: &Stat) -> (usize, usize) {
    let m = match metric {
        "output_throughput" => 0,
        "request_throughput" => 1,
        "total_token_throughput" => 2,
        _ => 0,
    };
    let s = match stat {
        Stat::Percentile(p) if p == "50" => 0,
        Stat::Mean => 1,
        Stat::Value => 2,
        _ => 3 + stat.percentile().unwrap_or(0.0) as usize,
    };
    (m, s)
}

/// Everything the family stage found in one group.
pub(super) struct FamilyStage {
    pub decisions: Vec<FamilyDecision>,
    /// Series ids whose per-series findings the family stage replaces.
    pub members: Vec<String>,
    pub findings: Vec<Finding>,
    /// Changes of at least the minimum effect that no test established, with what would.
    pub undecided: Vec<Undecided>,
}

/// Decides every family of `group` whose members were all compared, sets their members'
/// states in `reports` and builds one finding per family that is one.
pub(super) fn family_stage(
    group: &GroupInput,
    reports: &mut [SeriesReport],
    gates: &Gates,
    settings: &Settings,
) -> FamilyStage {
    let mut stage = FamilyStage {
        decisions: Vec::new(),
        members: Vec::new(),
        findings: Vec::new(),
        undecided: Vec::new(),
    };
    for fi in family_indexes(group, settings) {
        if fi.history.len() < settings.min_baseline_commits
            || fi.members.iter().any(|&i| reports[i].comparison.is_none())
        {
            continue;
        }
        let d = decide(fi, gates, settings);
        for &i in &d.index.members {
            stage.members.push(group.series[i].series_id.clone());
            if matches!(
                reports[i].state,
                SeriesState::Regression
                    | SeriesState::Improvement
                    | SeriesState::PendingConfirmation
                    | SeriesState::NotConfirmed
            ) {
                reports[i].state = SeriesState::NoChange;
            }
            if let Some(c) = reports[i].comparison.as_mut() {
                c.significant = false;
            }
        }
        if d.rule.is_some() {
            let (state, confirmed_by) = confirmation(group, &d, gates, settings);
            let moved = moved_members(&d, reports, settings);
            for &i in &moved {
                reports[i].state = state;
                if let Some(c) = reports[i].comparison.as_mut() {
                    c.significant = true;
                }
            }
            if matches!(state, SeriesState::Regression | SeriesState::Improvement) {
                let mut f = family_finding(group, reports, &d, &moved, gates, settings);
                f.confirmed_by = confirmed_by;
                stage.findings.push(f);
            }
        }
        let label = describe(&d.index.key.family, &Stat::Value);
        stage.undecided.extend(undecided(
            &d,
            d.index.runs_candidate,
            d.index.runs_per_baseline_commit,
            gates,
            settings,
            &label,
        ));
        stage.decisions.push(d);
    }
    stage
}

/// Members whose own change has the family's direction and at least the minimum effect (all
/// members of that sign when none reaches it: the index moved as a whole).
fn moved_members(d: &FamilyDecision, reports: &[SeriesReport], settings: &Settings) -> Vec<usize> {
    let sign = d.own.delta_abs.signum();
    let same: Vec<usize> = d
        .index
        .members
        .iter()
        .copied()
        .filter(|&i| {
            reports[i]
                .comparison
                .as_ref()
                .is_some_and(|c| c.outcome.delta_abs.signum() == sign)
        })
        .collect();
    let big: Vec<usize> = same
        .iter()
        .copied()
        .filter(|&i| {
            reports[i]
                .comparison
                .as_ref()
                .and_then(|c| c.delta_pct)
                .is_some_and(|p| p.abs() >= settings.min_effect_pct)
        })
        .collect();
    if big.is_empty() {
        same
    } else {
        big
    }
}

/// The state a family finding's members get: `confirm_commits` following commits must show the
/// same change by the cell's own test at α / cells (their indexes against the same history).
fn confirmation(
    group: &GroupInput,
    d: &FamilyDecision,
    gates: &Gates,
    settings: &Settings,
) -> (SeriesState, Vec<String>) {
    let found = if d.better {
        SeriesState::Improvement
    } else {
        SeriesState::Regression
    };
    let n = settings.confirm_commits;
    if n == 0 {
        return (found, Vec::new());
    }
    let members: Vec<&super::SeriesInput> =
        d.index.members.iter().map(|&i| &group.series[i]).collect();
    let following = members[0].following.len();
    if following < n {
        return (SeriesState::PendingConfirmation, Vec::new());
    }
    let mut confirmed_by = Vec::new();
    let history: Vec<f64> = d.index.history.iter().map(|h| h.1).collect();
    for k in 0..n {
        let logs: Option<Vec<f64>> = members
            .iter()
            .map(|s| {
                let f = s.following.get(k)?;
                let v = f.valid();
                (!v.is_empty() && v.iter().all(|x| *x > 0.0))
                    .then(|| (v.iter().sum::<f64>() / v.len() as f64).ln())
            })
            .collect();
        let Some(logs) = logs else {
            return (SeriesState::NotConfirmed, Vec::new());
        };
        let idx = logs.iter().sum::<f64>() / logs.len() as f64;
        let o = commit_mean_prediction(
            &history,
            settings.baseline_window,
            idx,
            0.0,
            1.0 - settings.alpha,
        );
        let same = o.delta_abs.signum() == d.own.delta_abs.signum()
            && log_pct(o.delta_abs).abs() >= settings.min_effect_pct
            && o.p_value
                .is_none_or(|p| p < settings.alpha / gates.cells.max(1) as f64);
        if !same {
            return (SeriesState::NotConfirmed, Vec::new());
        }
        confirmed_by.push(members[0].following[k].commit.clone());
    }
    (found, confirmed_by)
}

/// The test phrase of a family decision.
fn decision_phrase(d: &FamilyDecision, gates: &Gates, settings: &Settings) -> String {
    let o = &d.own;
    let k = settings.baseline_window.min(d.index.history.len());
    let stats = d.index.members.len();
    // 99.95 for α = 0.0005, not 99.94999999999999.
    let level = ((1.0 - settings.alpha) * 1e6).round() / 1e4;
    let own = match (o.statistic, o.df, o.p_value) {
        (Some(t), Some(df), Some(p)) if stats == 1 => format!(
            "outside the {level} % prediction interval of {k} baseline commits' means \
             ({}, df = {df:.0}, {})",
            t_phrase(t),
            p_phrase(p)
        ),
        (Some(t), Some(df), Some(p)) => format!(
            "the geometric mean of its {stats} tested statistics {} is outside the {level} % \
             prediction interval of {k} baseline commits' means ({}, df = {df:.0}, {})",
            pct(d.delta_pct),
            t_phrase(t),
            p_phrase(p)
        ),
        _ if o.test == Test::EffectOnly => {
            "effect only: one value per side and no history, not tested for significance"
                .to_string()
        }
        _ if stats == 1 => format!(
            "zero run-to-run spread in {k} baseline commits, so decided on the effect alone"
        ),
        _ => format!(
            "the geometric mean of its {stats} tested statistics {}: zero run-to-run spread in \
             {k} baseline commits, so decided on the effect alone",
            pct(d.delta_pct)
        ),
    };
    match (d.rule, &d.combined) {
        (Some(DecisionRule::SupportedByConfiguration), Some(c)) => {
            let one = match (o.statistic, o.df) {
                (Some(t), Some(df)) => one_sided_p(t, df, o.delta_abs.signum()),
                _ => 0.0,
            };
            format!(
                "the geometric mean of its {stats} tested statistics {} (one-sided {}, \
                 supporting) while the configuration's {} cells together moved {} ({})",
                pct(d.delta_pct),
                p_phrase(one),
                gates.cells,
                pct(log_pct(c.delta_abs)),
                p_phrase(c.p_value.unwrap_or(0.0))
            )
        }
        _ => own,
    }
}

/// One finding for a family: headline = its anchor member, parts = the members that moved.
fn family_finding(
    group: &GroupInput,
    reports: &[SeriesReport],
    d: &FamilyDecision,
    moved: &[usize],
    gates: &Gates,
    settings: &Settings,
) -> Finding {
    let anchor = *d
        .index
        .members
        .iter()
        .min_by_key(|&&i| anchor_rank(&group.series[i].metric, &group.series[i].stat))
        .expect("a family has members");
    let s = &group.series[anchor];
    let cmp: &Comparison = reports[anchor].comparison.as_ref().expect("compared");
    let candidate = s.candidate.as_ref().map_or("", |c| c.commit.as_str());
    let mut f = comparison_finding(
        s,
        cmp,
        candidate,
        settings,
        reports[anchor].per_request.clone(),
        Vec::new(),
    );
    let change = if d.better {
        PartChange::Improved
    } else {
        PartChange::Worsened
    };
    let mut ids = vec![s.series_id.clone()];
    let mut parts = Vec::new();
    let mut listed = Vec::new();
    for &i in moved {
        let r = &reports[i];
        let c = r.comparison.as_ref().expect("compared");
        if i != anchor {
            ids.push(r.series_id.clone());
        }
        listed.push(format!(
            "{} {}",
            describe(&r.metric, &r.stat),
            pct(c.delta_pct.unwrap_or(0.0))
        ));
        parts.push(TradeoffPart::of(r, change));
    }
    let unit = lookup(&s.metric).map_or("", |m| m.unit.as_str());
    f.series_ids = ids;
    f.parts = parts;
    f.test = match d.own.test {
        t if t.is_untested() => t,
        _ => Test::FamilyIndex,
    };
    f.statistic = d.own.statistic;
    f.df = d.own.df;
    f.p_value = d.own.p_value;
    f.prediction_interval = cmp.outcome.prediction_interval;
    f.severity = (!d.better).then(|| {
        if d.delta_pct.abs() >= settings.fail_effect_pct {
            Severity::Fail
        } else {
            Severity::Warn
        }
    });
    let moved_list = if listed.len() > 1 {
        format!("; moved: {}", listed.join(", "))
    } else {
        String::new()
    };
    f.summary = format!(
        "{} {} ({} → {} {unit}{moved_list}): {}.",
        describe(&s.metric, &s.stat),
        pct(cmp.delta_pct.unwrap_or(0.0)),
        fmt_num(cmp.outcome.baseline_mean),
        fmt_num(cmp.outcome.candidate_mean),
        decision_phrase(d, gates, settings)
    );
    f
}

/// Throughput better while TTFT (or goodput) worse, within one result, from the family
/// decisions: the harm side must be a finding (the strict level); the benefit side is then
/// accepted at one-sided `support_alpha` with at least the minimum effect (gatekeeping), and
/// the E2E latency's improvement at the same level is added ("starts later, finishes sooner").
/// Returns the trade-off finding and the series ids it folds in.
pub(super) fn family_tradeoff(
    group: &GroupInput,
    reports: &[SeriesReport],
    stage: &FamilyStage,
    settings: &Settings,
) -> Option<Finding> {
    let by_family = |name: &str| {
        stage
            .decisions
            .iter()
            .find(|d| d.index.key.family == name && d.index.key.slo_profile.is_none())
    };
    let supports = |d: &FamilyDecision| {
        d.better
            && d.delta_pct.abs() >= settings.min_effect_pct
            && match (d.own.statistic, d.own.df) {
                (Some(t), Some(df)) => {
                    one_sided_p(t, df, d.own.delta_abs.signum()) < settings.support_alpha
                }
                _ => d.own.test.is_untested(),
            }
    };
    let benefit = by_family("throughput").filter(|d| supports(d))?;
    let harms: Vec<&FamilyDecision> = stage
        .decisions
        .iter()
        .filter(|d| {
            matches!(d.index.key.family.as_str(), "ttft" | "request_goodput")
                && d.rule.is_some()
                && !d.better
        })
        .filter(|d| {
            d.index
                .members
                .iter()
                .any(|&i| reports[i].state == SeriesState::Regression)
        })
        .collect();
    // A goodput (or SLO attainment) that fell to 0 has no family index (a log) and was
    // tested series by series: its regression is a harm as well.
    let mut series_harms: Vec<usize> = reports
        .iter()
        .enumerate()
        .filter(|(i, r)| {
            matches!(
                group.series[*i].metric.as_str(),
                "request_goodput" | "slo_attainment"
            ) && r.state == SeriesState::Regression
                && !stage.members.contains(&r.series_id)
        })
        .map(|(i, _)| i)
        .collect();
    series_harms.sort_by_key(|&i| {
        let s = &group.series[i];
        (s.metric == "slo_attainment", s.slo_profile.clone())
    });
    if harms.is_empty() && series_harms.is_empty() {
        return None;
    }
    let e2e = by_family("e2el").filter(|d| supports(d));
    let headline = |d: &FamilyDecision| {
        *d.index
            .members
            .iter()
            .min_by_key(|&&i| anchor_rank(&group.series[i].metric, &group.series[i].stat))
            .expect("members")
    };
    let delta = |i: usize| {
        reports[i]
            .comparison
            .as_ref()
            .and_then(|c| c.delta_pct)
            .unwrap_or(0.0)
    };
    let hb = headline(benefit);
    let worse: Vec<String> = harms
        .iter()
        .map(|d| {
            let h = headline(d);
            let profile = group.series[h]
                .slo_profile
                .as_ref()
                .map_or(String::new(), |p| format!(" ({p} SLOs)"));
            // Tail percentiles that moved too: `median TTFT +8.8 % (p95 +11.3 %)`.
            let mut tails: Vec<(f64, String)> = d
                .index
                .members
                .iter()
                .filter(|&&i| i != h && reports[i].state == SeriesState::Regression)
                .filter_map(|&i| {
                    let p = group.series[i].stat.percentile().filter(|p| *p >= 90.0)?;
                    Some((p, format!("{} {}", group.series[i].stat, pct(delta(i)))))
                })
                .collect();
            tails.sort_by(|a, b| a.0.total_cmp(&b.0));
            let tails = if tails.is_empty() {
                String::new()
            } else {
                let t: Vec<String> = tails.into_iter().map(|t| t.1).collect();
                format!(" ({})", t.join(", "))
            };
            format!(
                "{}{profile} {}{tails}",
                describe(&group.series[h].metric, &group.series[h].stat),
                pct(delta(h))
            )
        })
        .chain(series_harms.iter().map(|&i| {
            let profile = group.series[i]
                .slo_profile
                .as_ref()
                .map_or(String::new(), |p| format!(" ({p} SLOs)"));
            format!(
                "{}{profile} {}",
                describe(&group.series[i].metric, &group.series[i].stat),
                pct(delta(i))
            )
        }))
        .collect();
    let mut summary = format!(
        "{} {} but {}",
        describe(&group.series[hb].metric, &group.series[hb].stat),
        pct(delta(hb)),
        worse.join(" and ")
    );
    if let Some(e) = e2e {
        let h = headline(e);
        summary.push_str(&format!(
            "; {} {}",
            describe(&group.series[h].metric, &group.series[h].stat),
            pct(delta(h))
        ));
        if harms.iter().any(|d| d.index.key.family == "ttft") {
            summary.push_str(&format!(": {}", super::finishes_sooner(reports)));
        }
    }
    summary.push('.');
    let benefit_p = match (benefit.own.statistic, benefit.own.df) {
        (Some(t), Some(df)) => one_sided_p(t, df, 1.0),
        _ => 0.0,
    };
    let part = |i: usize, change: PartChange| TradeoffPart::of(&reports[i], change);
    let mut parts: Vec<TradeoffPart> = benefit
        .index
        .members
        .iter()
        .map(|&i| part(i, PartChange::Improved))
        .collect();
    for d in &harms {
        let h = headline(d);
        parts.push(part(h, PartChange::Worsened));
        parts.extend(
            d.index
                .members
                .iter()
                .filter(|&&i| i != h && reports[i].state == SeriesState::Regression)
                .map(|&i| part(i, PartChange::Worsened)),
        );
    }
    parts.extend(series_harms.iter().map(|&i| part(i, PartChange::Worsened)));
    if let Some(e) = e2e {
        parts.push(part(headline(e), PartChange::Improved));
    }
    let severity = harms
        .iter()
        .map(|d| d.delta_pct)
        .chain(series_harms.iter().map(|&i| delta(i)))
        .map(|delta_pct| {
            if delta_pct.abs() >= settings.fail_effect_pct {
                Severity::Fail
            } else {
                Severity::Warn
            }
        })
        .max_by_key(|s| *s == Severity::Fail)
        .unwrap_or(Severity::Warn);
    let hc = reports[hb].comparison.as_ref().expect("compared");
    let candidate = group.series[hb]
        .candidate
        .as_ref()
        .map(|c| c.commit.clone());
    Some(Finding {
        kind: FindingKind::Tradeoff,
        severity: Some(severity),
        series_ids: parts.iter().map(|p| p.series_id.clone()).collect(),
        metric: group.series[hb].metric.clone(),
        stat: group.series[hb].stat.clone(),
        slo_profile: None,
        direction: direction_of(&group.series[hb].metric),
        baseline_commits: hc.baseline_commits.clone(),
        candidate_commit: candidate,
        baseline_value: Some(hc.outcome.baseline_mean),
        candidate_value: Some(hc.outcome.candidate_mean),
        delta_pct: hc.delta_pct,
        effect: Some(super::effect_of(&hc.outcome)),
        test: Test::Tradeoff,
        statistic: benefit.own.statistic,
        df: benefit.own.df,
        p_value: Some(benefit_p),
        regime_p_value: None,
        prediction_interval: None,
        threshold: super::Threshold {
            min_effect_pct: settings.min_effect_pct,
            alpha: settings.alpha,
        },
        summary,
        parts,
        per_request: None,
        confirmed_by: Vec::new(),
        notes: vec![
            "the harm side is significant on its own; the trade-off is a decision for a person, \
             not a failure"
                .into(),
        ],
        settings: settings.clone(),
    })
}

/// A change of at least the minimum effect that the test could not establish: what more data
/// would decide it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Undecided {
    /// The family.
    pub family: super::family::FamilyKey,
    /// Its index change, percent.
    pub delta_pct: f64,
    /// Whether the change is for the better.
    pub better: bool,
    /// Runs per commit of the candidate.
    pub runs: usize,
    /// The smallest change this test detects half the time or more with the candidate's runs
    /// (the threshold of `t` at α / cells, in percent of the index).
    pub detectable_pct: f64,
    /// Runs on every commit (baseline commits too: `detection.repeats`) that would detect this
    /// change with 80 % power at the same level (at most 10); `None` when even 10 would not,
    /// when the history is what is short, or when the runs per commit now would already
    /// (then another run of this commit tells).
    pub repeats_needed: Option<usize>,
    /// The smallest change those repeats would detect with 80 % power, percent.
    pub detectable_with_repeats_pct: Option<f64>,
    /// One sentence.
    pub summary: String,
}

/// Most repeats [`undecided`] proposes.
const MAX_PROPOSED_REPEATS: usize = 10;

/// For a family whose index moved at least `min_effect_pct` but is no finding: the minimum
/// detectable effect at its noise, and what would decide it. The spread `s` of the baseline's
/// commit means is taken as run-to-run variation (each baseline commit holds `runs_b` runs, so
/// one run varies by `s·√runs_b`); with `r` runs on every commit a commit mean varies by
/// `s²·runs_b / r`, and the prediction interval's variance is that times `1 + 1/k`.
/// Detectable with 80 % power: `(t_{1−α'/2} + t_{0.8}) · √(var)`, with α' = α / cells and the
/// test's degrees of freedom. With fewer than 5 degrees of freedom (or a detectable change
/// above 100 %) the history, not the repeats, is what is short: the sentence says how many
/// baseline commits would decide it.
pub(super) fn undecided(
    d: &FamilyDecision,
    runs_c: usize,
    runs_b: f64,
    gates: &Gates,
    settings: &Settings,
    label: &str,
) -> Option<Undecided> {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    if d.rule.is_some() || d.delta_pct.abs() < settings.min_effect_pct {
        return None;
    }
    let (t, df) = (d.own.statistic?, d.own.df?);
    if t == 0.0 || df <= 0.0 {
        return None;
    }
    let se = d.own.delta_abs.abs() / t.abs();
    let k = settings.baseline_window.min(d.index.history.len()).max(1) as f64;
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let crit = dist.inverse_cdf(1.0 - settings.alpha / gates.cells.max(1) as f64 / 2.0);
    let power = dist.inverse_cdf(0.8);
    let detectable_pct = log_pct(crit * se);
    // se² = s²(1 + 1/k) (+ extra): recover s², the variance of a commit mean of `runs_b` runs.
    let s2 = (se * se - d.index.extra_var).max(0.0) / (1.0 + 1.0 / k);
    // With r runs on every commit (the test compares commit means, so the baseline commits
    // need them too: `detection.repeats`), a commit mean varies by s²·runs_b / r (no
    // commit-level variation assumed).
    let mde = |r: usize| (crit + power) * (s2 * runs_b / r as f64 * (1.0 + 1.0 / k)).sqrt();
    let abs = d.delta_pct.abs();
    // Too little history: the spread has so few degrees of freedom that the critical t, not
    // the noise, decides, and repeats barely help. Say how much history would, never a
    // "detectable: ±5502.9 %".
    if df < FEW_DF || detectable_pct > 100.0 {
        let commits_needed =
            (k as usize + 1..=settings.spread_window.max(k as usize + 1)).find(|&kk| {
                let Ok(dk) = StudentsT::new(0.0, 1.0, (kk - 1) as f64) else {
                    return false;
                };
                let crit_k = dk.inverse_cdf(1.0 - settings.alpha / gates.cells.max(1) as f64 / 2.0);
                let m = (crit_k + dk.inverse_cdf(0.8)) * (s2 * (1.0 + 1.0 / kk as f64)).sqrt();
                log_pct(m) <= abs
            });
        let summary = match commits_needed {
            Some(kk) => format!(
                "{label} {}: not decided: {k} baseline commits are too few to tell a change of this size from noise; with {kk} baseline commits at this noise it would be detected",
                pct(d.delta_pct)
            ),
            None => format!(
                "{label} {}: not decided: {k} baseline commits are too few to tell a change of this size from noise; more history and repeats are needed",
                pct(d.delta_pct)
            ),
        };
        return Some(Undecided {
            family: d.index.key.clone(),
            delta_pct: d.delta_pct,
            better: d.better,
            runs: runs_c,
            detectable_pct,
            repeats_needed: None,
            detectable_with_repeats_pct: None,
            summary,
        });
    }
    let current = (runs_b.round() as usize).max(1);
    let needed = (current + 1..=MAX_PROPOSED_REPEATS).find(|&r| log_pct(mde(r)) <= abs);
    let head = format!(
        "{label} {}: not significant with {runs_c} run(s) per commit (detectable here: ±{detectable_pct:.1} %)",
        pct(d.delta_pct)
    );
    let summary = match needed {
        _ if log_pct(mde(current)) <= abs => {
            format!("{head}; another run of this commit would tell")
        }
        Some(r) => format!(
            "{head}; {r} runs on every commit (`detection.repeats`) would detect ≥ {:.1} %",
            log_pct(mde(r))
        ),
        None => format!(
            "{head}; even {MAX_PROPOSED_REPEATS} runs on every commit would not detect it at this noise"
        ),
    };
    Some(Undecided {
        family: d.index.key.clone(),
        delta_pct: d.delta_pct,
        better: d.better,
        runs: runs_c,
        detectable_pct,
        repeats_needed: needed,
        detectable_with_repeats_pct: needed.map(|r| log_pct(mde(r))),
        summary,
    })
}
