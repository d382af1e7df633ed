//! The wait of the users served slowest at a typical load: p95 and p99 of TTFT and of E2E
//! latency (ms), baseline and candidate.
//!
//! At a measured load (equal to the typical one up to rounding, 1e-9 relative) the values are
//! that load's; between two measured loads each value is interpolated linearly in load, and so
//! are the ends of its interval; outside the measured range nothing is given (no
//! extrapolation). The interpolated interval is the line between the bracketing intervals, not
//! a confidence statement measured at the typical load: the report says it is interpolated.
//!
//! Per load: with per-request samples, numpy's `linear` percentile of the successful requests'
//! values (repeats pooled), with a 95 % bootstrap interval ([`crate::bootstrap`]); without, the
//! tool's stored `p95`/`p99` (the mean over repeats), without interval.

use super::interpolate::{between, fraction};
use super::shape::SweepShape;
use super::sweep::{Sweep, SweepPoint};
use crate::bootstrap;
use crate::metric::{Interval, Stat};
use crate::samples::RequestSamples;
use crate::stats;
use serde::{Deserialize, Serialize};

/// One percentile of one latency at the typical load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WaitEstimate {
    /// The percentile, ms.
    pub value_ms: f64,
    /// Its 95 % interval, ms, when per-request samples exist at the load(s) it comes from.
    pub interval: Option<Interval>,
}

/// Where the values of a [`SlowestWait`] come from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WaitBasis {
    /// The typical load was measured.
    Measured {
        /// The measured load.
        load: f64,
    },
    /// Interpolated between the two measured loads around it.
    Interpolated {
        /// The bracketing measured loads.
        between: [f64; 2],
    },
}

/// p95/p99 TTFT and E2E latency at one load of one sweep; a field is `None` when neither the
/// samples nor the stored statistics give it at the load(s) needed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SlowestWait {
    /// The typical load, in the sweep shape's unit.
    pub load: f64,
    /// Measured or interpolated.
    pub basis: WaitBasis,
    /// p95 time to first token.
    pub ttft_p95: Option<WaitEstimate>,
    /// p99 time to first token.
    pub ttft_p99: Option<WaitEstimate>,
    /// p95 end-to-end latency.
    pub e2el_p95: Option<WaitEstimate>,
    /// p99 end-to-end latency.
    pub e2el_p99: Option<WaitEstimate>,
}

/// The slowest users' wait of baseline and candidate at one typical load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WaitComparison {
    /// The shared load shape.
    pub shape: SweepShape,
    /// Baseline.
    pub baseline: SlowestWait,
    /// Candidate.
    pub candidate: SlowestWait,
}

/// Why no wait is given.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum WaitRefusal {
    /// The typical load lies outside the measured loads.
    OutsideMeasured {
        /// Lowest measured load.
        lowest: f64,
        /// Highest measured load.
        highest: f64,
    },
    /// The sweep has no load.
    Empty,
    /// Baseline and candidate vary different loads.
    DifferentShapes {
        /// The baseline's shape.
        baseline: SweepShape,
        /// The candidate's shape.
        candidate: SweepShape,
    },
}

/// The percentiles reported.
const PERCENTILES: [f64; 2] = [95.0, 99.0];

/// The slowest users' wait of `sweep` at `load` (its shape's unit).
///
/// # Errors
/// [`WaitRefusal::OutsideMeasured`] or [`WaitRefusal::Empty`].
pub fn slowest_wait(sweep: &Sweep, load: f64) -> Result<SlowestWait, WaitRefusal> {
    let (first, last) = match (sweep.points.first(), sweep.points.last()) {
        (Some(f), Some(l)) => (f, l),
        _ => return Err(WaitRefusal::Empty),
    };
    let same = |l: f64| (l - load).abs() <= 1e-9 * load.abs().max(1.0);
    if let Some(p) = sweep.points.iter().find(|p| same(p.load)) {
        let [ttft, e2el] = ["ttft", "e2el"].map(|m| at_point(p, m));
        let [ttft_p95, ttft_p99] = ttft;
        let [e2el_p95, e2el_p99] = e2el;
        return Ok(SlowestWait {
            load,
            basis: WaitBasis::Measured { load: p.load },
            ttft_p95,
            ttft_p99,
            e2el_p95,
            e2el_p99,
        });
    }
    let Some(i) = sweep
        .points
        .iter()
        .position(|p| p.load > load)
        .filter(|i| *i > 0)
    else {
        return Err(WaitRefusal::OutsideMeasured {
            lowest: first.load,
            highest: last.load,
        });
    };
    let (lo, hi) = (&sweep.points[i - 1], &sweep.points[i]);
    let f = fraction(lo.load, hi.load, load);
    let [ttft, e2el] = ["ttft", "e2el"].map(|m| {
        let (a, b) = (at_point(lo, m), at_point(hi, m));
        [0, 1].map(|k| interpolate(a[k].as_ref(), b[k].as_ref(), f, [lo.load, hi.load], load))
    });
    let [ttft_p95, ttft_p99] = ttft;
    let [e2el_p95, e2el_p99] = e2el;
    Ok(SlowestWait {
        load,
        basis: WaitBasis::Interpolated {
            between: [lo.load, hi.load],
        },
        ttft_p95,
        ttft_p99,
        e2el_p95,
        e2el_p99,
    })
}

/// Baseline and candidate at one typical load.
///
/// # Errors
/// [`WaitRefusal::DifferentShapes`], or either side's refusal.
pub fn compare_wait(
    baseline: &Sweep,
    candidate: &Sweep,
    load: f64,
) -> Result<WaitComparison, WaitRefusal> {
    if baseline.shape != candidate.shape {
        return Err(WaitRefusal::DifferentShapes {
            baseline: baseline.shape,
            candidate: candidate.shape,
        });
    }
    Ok(WaitComparison {
        shape: baseline.shape,
        baseline: slowest_wait(baseline, load)?,
        candidate: slowest_wait(candidate, load)?,
    })
}

/// p95 and p99 of `metric` (`ttft` or `e2el`) at one measured load.
fn at_point(point: &SweepPoint, metric: &str) -> [Option<WaitEstimate>; 2] {
    let columns: Option<Vec<&RequestSamples>> =
        point.results.iter().map(|r| r.samples.as_ref()).collect();
    let pooled: Option<Vec<f64>> = columns.and_then(|all| {
        let mut values = Vec::new();
        for s in all {
            let col = match metric {
                "ttft" => s.ttft_ms.as_ref()?,
                _ => s.e2el_ms.as_ref()?,
            };
            values.extend(
                col.iter()
                    .zip(&s.success)
                    .filter(|(_, ok)| **ok)
                    .filter_map(|(v, _)| *v),
            );
        }
        (!values.is_empty()).then_some(values)
    });
    if let Some(values) = pooled {
        let intervals = bootstrap::percentile_intervals(&values, &PERCENTILES);
        return [0, 1].map(|k| {
            Some(WaitEstimate {
                value_ms: stats::percentile(&values, PERCENTILES[k])?,
                interval: intervals.as_ref().map(|iv| iv[k].clone()),
            })
        });
    }
    PERCENTILES.map(|p| {
        let stat = Stat::from_percentile(p);
        let stored: Vec<f64> = point
            .results
            .iter()
            .filter_map(|r| {
                r.metrics
                    .iter()
                    .find(|m| m.name == metric && m.stat == stat)
                    .map(|m| m.value)
            })
            .collect();
        // Only when every repeat has it: a mean over some repeats is not the load's value.
        (stored.len() == point.results.len()).then(|| WaitEstimate {
            value_ms: stats::mean(&stored).unwrap_or(f64::NAN),
            interval: None,
        })
    })
}

/// The estimate a fraction `f` of the way from `a` to `b`; an interval only when both have one.
fn interpolate(
    a: Option<&WaitEstimate>,
    b: Option<&WaitEstimate>,
    f: f64,
    loads: [f64; 2],
    load: f64,
) -> Option<WaitEstimate> {
    let (a, b) = (a?, b?);
    let interval = match (&a.interval, &b.interval) {
        (Some(x), Some(y)) => Some(Interval {
            low: between(x.low, y.low, f),
            high: between(x.high, y.high, f),
            level: x.level,
            method: format!(
                "linear interpolation at load {load} of the intervals at {} and {} ({})",
                loads[0], loads[1], x.method
            ),
        }),
        _ => None,
    };
    Some(WaitEstimate {
        value_ms: between(a.value_ms, b.value_ms, f),
        interval,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::sweep::SweepKey;
    use crate::metric::MetricValue;
    use crate::result::BenchResult;

    fn stored(p99_ttft: f64) -> BenchResult {
        BenchResult {
            metrics: vec![MetricValue::new(
                "ttft",
                Stat::from_percentile(99.0),
                p99_ttft,
                None,
            )],
            ..Default::default()
        }
    }

    #[test]
    fn stored_percentiles_are_interpolated_and_never_extrapolated() {
        let (a, b) = (stored(100.0), stored(300.0));
        let sweep = Sweep {
            key: SweepKey {
                series_key: Default::default(),
                cell: String::new(),
            },
            shape: SweepShape::RequestRate,
            points: vec![
                SweepPoint {
                    load: 10.0,
                    results: vec![&a],
                },
                SweepPoint {
                    load: 20.0,
                    results: vec![&b],
                },
            ],
        };
        let w = slowest_wait(&sweep, 15.0).unwrap();
        assert_eq!(
            w.basis,
            WaitBasis::Interpolated {
                between: [10.0, 20.0]
            }
        );
        assert_eq!(
            w.ttft_p99,
            Some(WaitEstimate {
                value_ms: 200.0,
                interval: None
            })
        );
        assert_eq!(w.ttft_p95, None);
        assert_eq!(
            slowest_wait(&sweep, 20.0)
                .unwrap()
                .ttft_p99
                .unwrap()
                .value_ms,
            300.0
        );
        assert_eq!(
            slowest_wait(&sweep, 25.0),
            Err(WaitRefusal::OutsideMeasured {
                lowest: 10.0,
                highest: 20.0
            })
        );
        assert_eq!(
            slowest_wait(&sweep, 5.0),
            Err(WaitRefusal::OutsideMeasured {
                lowest: 10.0,
                highest: 20.0
            })
        );
    }
}
