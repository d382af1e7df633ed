//! Cost at SLO (issue 14, optional): with an hourly price per accelerator in the project
//! settings ([`CostSettings`]), what 1,000 requests and a million output tokens cost at the
//! SLO capacity, baseline and candidate. Pure.
//!
//! For one side at its capacity ([`super::Capacity`]) under a profile:
//! - accelerators per instance `A` = `parallelism.tensor_parallel_size` ×
//!   `parallelism.pipeline_parallel_size` of the sweep's configuration, each 1 when unset
//!   ([`AcceleratorCount`] says which);
//! - instance price per hour `P = price × A` (USD);
//! - requests per hour `R` = the capacity's achieved request throughput × 3600
//!   ([`super::Capacity::requests_per_hour`]); **USD per 1,000 requests = 1000 · P / R**;
//! - output tokens per second `T` at capacity: each load's `output_throughput` (tok/s, the
//!   tool's value, averaged over repeats), interpolated between the two loads the capacity
//!   lies between with the same fraction as the load, or the value at the highest load for an
//!   "at least" capacity; **USD per million output tokens = 10⁶ · P / (3600 · T)**.
//!
//! A capacity that is "at least" the highest load gives a cost that is **at most** the
//! figure ([`CostBound::AtMost`]). No cost below the lowest load measured (the capacity is
//! not known there), nor without a throughput.

use super::estimate::Capacity;
use super::interpolate::between;
use super::sweep::{Sweep, SweepPoint};
use crate::config::Configuration;
use crate::metric::Stat;
use serde::{Deserialize, Serialize};

/// The `cost` key of the project settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CostSettings {
    /// What one accelerator (GPU) costs per hour, USD; in (0, [`MAX_ACCELERATOR_HOUR_USD`]].
    pub accelerator_hour_usd: f64,
}

/// The highest hourly price per accelerator accepted, USD: far above any rental price, so a
/// larger value is a typo (cents for dollars, a monthly price).
pub const MAX_ACCELERATOR_HOUR_USD: f64 = 1000.0;

/// Accelerators per instance and where the count came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AcceleratorCount {
    /// `tensor_parallel_size × pipeline_parallel_size`.
    pub accelerators: u64,
    /// Whether both sizes were set in the configuration (false: an unset size counted as 1).
    pub configured: bool,
}

/// How a cost relates to the true one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CostBound {
    /// At a capacity measured or interpolated within the loads.
    Estimate,
    /// At an "at least" capacity: the true cost is at most this.
    AtMost,
}

/// One side's cost at its SLO capacity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SideCost {
    /// Accelerators per instance.
    pub accelerators: AcceleratorCount,
    /// Price of one instance per hour, USD (`price × accelerators`).
    pub instance_hour_usd: f64,
    /// Completed requests per hour at capacity.
    pub requests_per_hour: f64,
    /// USD per 1,000 requests at capacity.
    pub usd_per_1k_requests: f64,
    /// Output tokens per second at capacity; `None` when a load it needs has no
    /// `output_throughput`.
    pub output_tokens_per_s: Option<f64>,
    /// USD per million output tokens at capacity; `None` with `output_tokens_per_s`.
    pub usd_per_million_output_tokens: Option<f64>,
    /// How the costs relate to the true ones.
    pub bound: CostBound,
}

/// One side's cost, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SideCostOutcome {
    /// Priced.
    Priced {
        /// The cost.
        cost: SideCost,
    },
    /// The lowest load measured already misses the target: the capacity is unknown.
    BelowLowest,
    /// No capacity (no attainment computable), or no request completed at it.
    NoCapacity,
}

/// Both sides' costs under one profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CostComparison {
    /// The price per accelerator-hour used, USD.
    pub accelerator_hour_usd: f64,
    /// The baseline's.
    pub baseline: SideCostOutcome,
    /// The candidate's.
    pub candidate: SideCostOutcome,
}

/// Accelerators per instance of `config` (module documentation).
pub fn accelerators(config: &Configuration) -> AcceleratorCount {
    let (tp, pp) = (
        config.parallelism.tensor_parallel_size,
        config.parallelism.pipeline_parallel_size,
    );
    AcceleratorCount {
        accelerators: tp.unwrap_or(1).max(1) * pp.unwrap_or(1).max(1),
        configured: tp.is_some() && pp.is_some(),
    }
}

/// The cost of `sweep` at `capacity` with `price` USD per accelerator-hour.
pub fn side_cost(sweep: &Sweep, capacity: Option<Capacity>, price: f64) -> SideCostOutcome {
    let Some(capacity) = capacity else {
        return SideCostOutcome::NoCapacity;
    };
    let (output_tps, bound) = match capacity {
        Capacity::BelowLowest { .. } => return SideCostOutcome::BelowLowest,
        Capacity::AtLeast { load, .. } => (output_tps_at(sweep, load), CostBound::AtMost),
        Capacity::Within {
            load,
            between: [lo, hi],
            ..
        } => {
            let (a, b) = (output_tps_at(sweep, lo), output_tps_at(sweep, hi));
            let t = match (a, b) {
                (Some(a), Some(b)) if hi > lo => Some(between(a, b, (load - lo) / (hi - lo))),
                (Some(a), _) if load == lo => Some(a),
                _ => None,
            };
            (t, CostBound::Estimate)
        }
    };
    let requests_per_hour = capacity.requests_per_hour();
    if requests_per_hour.is_nan() || requests_per_hour <= 0.0 {
        return SideCostOutcome::NoCapacity;
    }
    let Some(first) = sweep.points.first().and_then(|p| p.results.first()) else {
        return SideCostOutcome::NoCapacity;
    };
    let count = accelerators(&first.configuration);
    let instance_hour_usd = price * count.accelerators as f64;
    let output_tokens_per_s = output_tps.filter(|t| *t > 0.0);
    SideCostOutcome::Priced {
        cost: SideCost {
            accelerators: count,
            instance_hour_usd,
            requests_per_hour,
            usd_per_1k_requests: 1000.0 * instance_hour_usd / requests_per_hour,
            output_tokens_per_s,
            usd_per_million_output_tokens: output_tokens_per_s
                .map(|t| 1e6 * instance_hour_usd / (3600.0 * t)),
            bound,
        },
    }
}

/// The mean `output_throughput` (tok/s, no SLO profile) of the results at `load`; `None`
/// unless every result there has one.
fn output_tps_at(sweep: &Sweep, load: f64) -> Option<f64> {
    let point: &SweepPoint = sweep.points.iter().find(|p| p.load == load)?;
    let values: Vec<f64> = point
        .results
        .iter()
        .map(|r| {
            r.metrics
                .iter()
                .find(|m| {
                    m.name == "output_throughput"
                        && m.stat == Stat::Value
                        && m.slo_profile.is_none()
                })
                .map(|m| m.value)
        })
        .collect::<Option<_>>()?;
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::sweep::build_sweeps;
    use crate::metric::MetricValue;
    use crate::result::BenchResult;

    fn at(c: u64, output_tps: f64, tp: Option<u64>) -> BenchResult {
        let mut b = BenchResult::default();
        b.cell.load.max_concurrency = Some(c);
        b.configuration.parallelism.tensor_parallel_size = tp;
        b.metrics.push(MetricValue::new(
            "output_throughput",
            Stat::Value,
            output_tps,
            None,
        ));
        b
    }

    fn priced(o: SideCostOutcome) -> SideCost {
        match o {
            SideCostOutcome::Priced { cost } => cost,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn costs_at_an_interpolated_capacity_are_exact() {
        let rs = [at(4, 400.0, Some(2)), at(16, 1000.0, Some(2))];
        let set = build_sweeps(&rs, &[]);
        // Capacity 7 concurrent requests (a quarter of the way), 3 req/s: 10,800 req/h.
        let cap = Capacity::Within {
            load: 7.0,
            throughput_rps: 3.0,
            interpolated: true,
            between: [4.0, 16.0],
        };
        let c = priced(side_cost(&set.sweeps[0], Some(cap), 2.5));
        assert_eq!(
            c.accelerators,
            AcceleratorCount {
                accelerators: 2,
                configured: false
            }
        );
        assert_eq!(c.instance_hour_usd, 5.0);
        assert_eq!(c.requests_per_hour, 10_800.0);
        // 1000 · 5 / 10,800 = 0.46296… USD per 1,000 requests.
        assert_eq!(c.usd_per_1k_requests, 5000.0 / 10_800.0);
        // 400 + 0.25 · 600 = 550 tok/s: 10⁶ · 5 / (3600 · 550) = 2.5252… USD per million.
        assert_eq!(c.output_tokens_per_s, Some(550.0));
        assert_eq!(c.usd_per_million_output_tokens, Some(5e6 / 1_980_000.0));
        assert_eq!(c.bound, CostBound::Estimate);
    }

    #[test]
    fn at_least_is_at_most_and_below_the_lowest_is_not_priced() {
        let rs = [at(4, 400.0, None), at(16, 1000.0, None)];
        let set = build_sweeps(&rs, &[]);
        let s = &set.sweeps[0];
        let c = priced(side_cost(
            s,
            Some(Capacity::AtLeast {
                load: 16.0,
                throughput_rps: 8.0,
            }),
            2.0,
        ));
        assert_eq!(c.accelerators.accelerators, 1);
        assert_eq!(c.bound, CostBound::AtMost);
        assert_eq!(c.usd_per_1k_requests, 2000.0 / 28_800.0);
        assert_eq!(c.usd_per_million_output_tokens, Some(2e6 / 3_600_000.0));
        assert_eq!(
            side_cost(
                s,
                Some(Capacity::BelowLowest {
                    load: 4.0,
                    throughput_rps: 1.0
                }),
                2.0
            ),
            SideCostOutcome::BelowLowest
        );
        assert_eq!(side_cost(s, None, 2.0), SideCostOutcome::NoCapacity);
        let mut config = Configuration::default();
        config.parallelism.tensor_parallel_size = Some(4);
        config.parallelism.pipeline_parallel_size = Some(2);
        assert_eq!(
            accelerators(&config),
            AcceleratorCount {
                accelerators: 8,
                configured: true
            }
        );
    }
}
