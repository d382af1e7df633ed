//! Change points per metric family: the E-Divisive scan ([`super::edivisive`]) runs on each
//! family's index history (the weighted geometric mean of its tested statistics, as
//! [`super::family`] builds it) instead of on every statistic. One run-level excursion or one
//! real step moves a metric's mean, median and tails together; scanning each of them tested
//! the same change five times over and multiplied the false change points of a noise-only
//! history by the number of series.

use super::family::{family_member, family_of, inverse_variance_weights, prior_weight, FamilyKey};
use super::family_findings::anchor_rank;
use super::{
    change_point_findings, describe, CommitRuns, Finding, GroupInput, SeriesInput, Settings,
};
use crate::metric::Stat;
use std::collections::{BTreeMap, HashMap};

/// The change-point findings of every family of `group`'s history (its `candidate` is not
/// read). Each finding's first series is the family's anchor (median, else mean, else value),
/// then the family's other members; its values are the index's (a geometric mean of the
/// statistics, in the metric's unit).
///
/// Multiplicity: `scans` is how many family indexes this scan covers (across every group of
/// the upload); a change point E-Divisive places is kept only when Welch's t between its two
/// regimes' commit values has p < `change_points.alpha / (scans · splits)`, `splits` being the
/// admissible split points (`n − 2·min_segment + 1`): Bonferroni over the families scanned
/// and over the split E-Divisive chose as the best. Every upload scans again, and without the
/// second factor a noise-only history at CV 5 % showed a transient −7.8 % "shift" in 4 of its
/// 40 scans (Welch p ≈ 3e-5 for the chosen split). A real 5 % step at CV 2 % has p < 1e-7.
pub fn family_change_points(group: &GroupInput, settings: &Settings, scans: usize) -> Vec<Finding> {
    let mut by_key: BTreeMap<FamilyKey, Vec<&SeriesInput>> = BTreeMap::new();
    for s in &group.series {
        if family_member(s, settings) {
            by_key
                .entry(FamilyKey {
                    family: family_of(&s.metric).to_string(),
                    slo_profile: s.slo_profile.clone(),
                })
                .or_default()
                .push(s);
        }
    }
    let mut out = Vec::new();
    for (key, mut members) in by_key {
        members.sort_by_key(|s| anchor_rank(&s.metric, &s.stat));
        let logs: Vec<HashMap<&str, f64>> = members
            .iter()
            .map(|s| {
                s.history
                    .iter()
                    .filter_map(|c| {
                        let v = c.valid();
                        (!v.is_empty() && v.iter().all(|x| *x > 0.0)).then(|| {
                            (
                                c.commit.as_str(),
                                (v.iter().sum::<f64>() / v.len() as f64).ln(),
                            )
                        })
                    })
                    .collect()
            })
            .collect();
        let rows: Vec<(&str, Vec<f64>)> = members[0]
            .history
            .iter()
            .filter_map(|c| {
                let v: Option<Vec<f64>> = logs
                    .iter()
                    .map(|m| m.get(c.commit.as_str()).copied())
                    .collect();
                v.map(|v| (c.commit.as_str(), v))
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let columns: Vec<Vec<f64>> = (0..members.len())
            .map(|j| rows.iter().map(|r| r.1[j]).collect())
            .collect();
        let prior: Vec<f64> = members.iter().map(|s| prior_weight(&s.stat)).collect();
        let w = inverse_variance_weights(&columns, &prior);
        let anchor = members[0];
        let index = SeriesInput {
            series_id: anchor.series_id.clone(),
            metric: anchor.metric.clone(),
            stat: anchor.stat.clone(),
            slo_profile: anchor.slo_profile.clone(),
            history: rows
                .iter()
                .map(|(c, v)| {
                    let idx: f64 = v.iter().zip(&w).map(|(x, w)| x * w).sum();
                    CommitRuns::new(*c, &[idx.exp()])
                })
                .collect(),
            candidate: None,
            following: Vec::new(),
        };
        let name = if members.len() == 1 {
            describe(&anchor.metric, &anchor.stat)
        } else {
            format!(
                "{} (geometric mean of its {} tested statistics)",
                describe(&key.family, &Stat::Value),
                members.len()
            )
        };
        // The split is the best of every admissible one, so Welch's p of the chosen split is
        // small by selection: Bonferroni over the candidate splits too.
        let n = index.history.len();
        let splits = n
            .saturating_sub(2 * settings.change_points.min_segment)
            .saturating_add(1)
            .max(1);
        let level = settings.change_points.alpha / (scans.max(1) * splits) as f64;
        for mut f in change_point_findings(&index, settings)
            .into_iter()
            .filter(|f| f.regime_p_value.is_some_and(|p| p < level))
        {
            f.series_ids = members.iter().map(|s| s.series_id.clone()).collect();
            f.summary = f
                .summary
                .replacen(&describe(&anchor.metric, &anchor.stat), &name, 1);
            out.push(f);
        }
    }
    out
}

/// How many family indexes [`family_change_points`] scans in `group`: the share of α each
/// gets when several groups are scanned together.
pub fn family_count(group: &GroupInput, settings: &Settings) -> usize {
    let mut keys: Vec<FamilyKey> = group
        .series
        .iter()
        .filter(|s| family_member(s, settings))
        .map(|s| FamilyKey {
            family: family_of(&s.metric).to_string(),
            slo_profile: s.slo_profile.clone(),
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys.len()
}
