//! SLO attainment and goodput at each load of a sweep.
//!
//! Definitions are [`crate::slo`]'s (vLLM's `--goodput`, DistServe's attainment): a request
//! *meets* a profile when it completed and every threshold holds (`value ≤ threshold`), and
//! attainment = requests meeting the profile ÷ requests **attempted**, failed and timed-out ones
//! included: a service that drops its slow requests is not fast because the rest were.
//!
//! Where a result has no per-request samples (or they lack a column the profile needs) but
//! holds a value for the profile (an uploaded `slo_attainment` or `request_goodput` labelled
//! with the profile's name, or the tool's own `request_goodput` computed under exactly the
//! profile's thresholds, read from `facts.goodput_slo`), that value is used and the point is
//! marked [`AttainmentSource::Tool`]. Goodput from the tool is good requests ÷ duration (vLLM), so
//! the count met is `goodput × duration`, rounded to the nearest request.

use super::sweep::{Sweep, SweepPoint};
use crate::metric::Stat;
use crate::result::BenchResult;
use crate::samples::RequestSamples;
use crate::slo::{self, SloProfile, TOOL_PROFILE};
use serde::{Deserialize, Serialize};

/// Where the counts of a load came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttainmentSource {
    /// Counted by benchtrail from the per-request samples.
    Samples,
    /// Derived from a goodput or attainment value the tool (or the uploader) reported for the
    /// profile; at least one result of the load had no samples.
    Tool,
}

/// Attainment and goodput of one offered load under one profile (repeats pooled: counts and
/// durations summed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LoadAttainment {
    /// Offered load, in the sweep shape's unit.
    pub load: f64,
    /// Requests attempted (completed and failed).
    pub attempted: u64,
    /// Requests that completed and met every threshold of the profile.
    pub met: u64,
    /// Requests that failed or timed out.
    pub failed: u64,
    /// `met ÷ attempted`, a share in [0, 1] (`slo_attainment` is this in percent).
    pub attainment: f64,
    /// `request_goodput`: met ÷ duration, req/s.
    pub goodput_rps: f64,
    /// Achieved request throughput: completed ÷ duration, req/s (the tool's
    /// `request_throughput` when the counts come from it).
    pub throughput_rps: f64,
    /// Where the counts came from.
    pub source: AttainmentSource,
}

/// The counts of one result.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Counts {
    attempted: u64,
    met: u64,
    failed: u64,
    duration_s: f64,
    /// Completed requests per second.
    throughput_rps: f64,
    source: AttainmentSource,
}

/// Attainment at every load of `sweep` under `profile`, ascending by load; a load none of
/// whose results is computable under the profile is left out.
pub fn sweep_attainment(sweep: &Sweep, profile: &SloProfile) -> Vec<LoadAttainment> {
    sweep
        .points
        .iter()
        .filter_map(|p| point_attainment(p, profile))
        .collect()
}

/// Attainment of one load (its computable results pooled); `None` when none is computable.
pub fn point_attainment(point: &SweepPoint, profile: &SloProfile) -> Option<LoadAttainment> {
    let counts: Vec<Counts> = point
        .results
        .iter()
        .filter_map(|r| result_counts(r, profile))
        .collect();
    if counts.is_empty() {
        return None;
    }
    let attempted: u64 = counts.iter().map(|c| c.attempted).sum();
    let met: u64 = counts.iter().map(|c| c.met).sum();
    let failed: u64 = counts.iter().map(|c| c.failed).sum();
    let duration: f64 = counts.iter().map(|c| c.duration_s).sum();
    let completed: f64 = counts.iter().map(|c| c.throughput_rps * c.duration_s).sum();
    let source = if counts.iter().all(|c| c.source == AttainmentSource::Samples) {
        AttainmentSource::Samples
    } else {
        AttainmentSource::Tool
    };
    Some(LoadAttainment {
        load: point.load,
        attempted,
        met,
        failed,
        attainment: met as f64 / attempted as f64,
        goodput_rps: met as f64 / duration,
        // One result: its own throughput, unchanged by the × duration ÷ duration round trip.
        throughput_rps: match counts.as_slice() {
            [one] => one.throughput_rps,
            _ => completed / duration,
        },
        source,
    })
}

/// The counts of `result` under `profile`: from its samples, else (no samples, or samples
/// lacking a column the profile needs) from a reported value.
fn result_counts(result: &BenchResult, profile: &SloProfile) -> Option<Counts> {
    result
        .samples
        .as_ref()
        .and_then(|s| sample_counts(s, profile))
        .or_else(|| reported_counts(result, profile))
}

/// The counts of per-request samples ([`slo::evaluate`]).
fn sample_counts(samples: &RequestSamples, profile: &SloProfile) -> Option<Counts> {
    let o = slo::evaluate(samples, profile)?;
    let failed = samples.success.iter().filter(|ok| !**ok).count() as u64;
    // `evaluate` returned a value, so the duration is positive and finite.
    let duration_s = samples.duration_s?;
    Some(Counts {
        attempted: o.sent,
        met: o.good,
        failed,
        duration_s,
        throughput_rps: (o.sent - failed) as f64 / duration_s,
        source: AttainmentSource::Samples,
    })
}

/// The counts of a result without samples, from its reported attainment or goodput.
fn reported_counts(result: &BenchResult, profile: &SloProfile) -> Option<Counts> {
    let value = |name: &str| {
        result
            .metrics
            .iter()
            .find(|m| m.name == name && m.stat == Stat::Value && m.slo_profile.is_none())
            .map(|m| m.value)
    };
    let profiled = |name: &str, profile_name: &str| {
        result
            .metrics
            .iter()
            .find(|m| {
                m.name == name
                    && m.stat == Stat::Value
                    && m.slo_profile.as_deref() == Some(profile_name)
            })
            .cloned()
    };
    let duration_s = value("duration").filter(|d| *d > 0.0 && d.is_finite())?;
    let completed = value("completed")?;
    let failed = value("failed");
    let attempted = match failed {
        Some(f) => completed + f,
        // vLLM sends every prompt once (crate::cell), so without `failed` the prompts are the
        // requests attempted.
        None => result.cell.num_prompts.map(|n| n as f64)?,
    };
    if attempted < completed || attempted <= 0.0 {
        return None;
    }
    let met = if let Some(a) = profiled("slo_attainment", &profile.name) {
        a.value / 100.0 * attempted
    } else if let Some(g) = profiled("request_goodput", &profile.name) {
        g.value * duration_s
    } else {
        let g = profiled("request_goodput", TOOL_PROFILE)?;
        tool_thresholds_match(result, profile).then_some(g.value * duration_s)?
    };
    let throughput_rps = value("request_throughput").unwrap_or(completed / duration_s);
    Some(Counts {
        attempted: attempted.round() as u64,
        met: (met.round() as u64).min(completed.round() as u64),
        failed: (attempted - completed).round() as u64,
        duration_s,
        throughput_rps,
        source: AttainmentSource::Tool,
    })
}

/// Whether the tool's goodput thresholds (`facts.goodput_slo`, see
/// [`slo::annotate_tool_goodput`]) are exactly `profile`'s.
fn tool_thresholds_match(result: &BenchResult, profile: &SloProfile) -> bool {
    let Some(slo) = result.facts.get("goodput_slo") else {
        return false;
    };
    let recorded = |key: &str| slo.get(key).and_then(serde_json::Value::as_f64);
    recorded("ttft_ms") == profile.ttft_ms
        && recorded("tpot_ms") == profile.tpot_ms
        && recorded("e2el_ms") == profile.e2el_ms
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::MetricValue;

    fn profile() -> SloProfile {
        SloProfile {
            name: "p".into(),
            ttft_ms: Some(100.0),
            tpot_ms: None,
            e2el_ms: None,
        }
    }

    #[test]
    fn failed_requests_count_against_attainment() {
        let r = BenchResult {
            samples: Some(RequestSamples {
                success: vec![true, true, true, false],
                ttft_ms: Some(vec![Some(50.0), Some(150.0), Some(90.0), None]),
                duration_s: Some(2.0),
                ..Default::default()
            }),
            ..Default::default()
        };
        let p = SweepPoint {
            load: 4.0,
            results: vec![&r],
        };
        assert_eq!(
            point_attainment(&p, &profile()),
            Some(LoadAttainment {
                load: 4.0,
                attempted: 4,
                met: 2,
                failed: 1,
                attainment: 0.5,
                goodput_rps: 1.0,
                throughput_rps: 1.5,
                source: AttainmentSource::Samples,
            })
        );
    }

    #[test]
    fn the_tools_goodput_counts_only_under_the_same_thresholds() {
        let mut r = BenchResult::default();
        for (name, v) in [
            ("duration", 10.0),
            ("completed", 58.0),
            ("failed", 2.0),
            ("request_throughput", 5.8),
        ] {
            r.metrics.push(MetricValue::new(name, Stat::Value, v, None));
        }
        let mut g = MetricValue::new("request_goodput", Stat::Value, 2.9, None);
        g.slo_profile = Some(TOOL_PROFILE.into());
        r.metrics.push(g);
        r.facts
            .insert("goodput_slo".into(), serde_json::json!({"ttft_ms": 100.0}));
        let p = SweepPoint {
            load: 4.0,
            results: vec![&r],
        };
        let a = point_attainment(&p, &profile()).unwrap();
        assert_eq!(
            (a.attempted, a.met, a.failed, a.attainment, a.source),
            (60, 29, 2, 29.0 / 60.0, AttainmentSource::Tool)
        );
        assert_eq!((a.goodput_rps, a.throughput_rps), (2.9, 5.8));
        let other = SloProfile {
            ttft_ms: Some(200.0),
            ..profile()
        };
        assert_eq!(point_attainment(&p, &other), None);
        // Samples without the TTFT column the profile needs: the tool's value still counts.
        r.samples = Some(RequestSamples {
            success: vec![true; 60],
            duration_s: Some(10.0),
            ..Default::default()
        });
        let p = SweepPoint {
            load: 4.0,
            results: vec![&r],
        };
        assert_eq!(
            point_attainment(&p, &profile()).map(|a| (a.met, a.source)),
            Some((29, AttainmentSource::Tool))
        );
    }
}
