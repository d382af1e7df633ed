//! Capacity at SLO: the highest offered load whose attainment is at least the target.
//!
//! Along the measured loads `l₀ < l₁ < …` with attainments `a₀, a₁, …` and target `t`:
//! - `a₀ < t`: [`Capacity::BelowLowest`] (the lowest load measured already fails; the true
//!   capacity is somewhere below it, unknown).
//! - every `aᵢ ≥ t`: [`Capacity::AtLeast`] the highest load measured. Never extrapolated: the
//!   attainment beyond the last measurement is not known.
//! - else the first `i` with `aᵢ < t`: the crossing between `lᵢ₋₁` (meets) and `lᵢ` (fails),
//!   linearly interpolated, `l = lᵢ₋₁ + (aᵢ₋₁ − t)/(aᵢ₋₁ − aᵢ)·(lᵢ − lᵢ₋₁)`, and the achieved
//!   request throughput at that load interpolated with the same fraction
//!   ([`Capacity::Within`], `interpolated` false only when `aᵢ₋₁ = t` exactly).
//!
//! **Non-monotone attainment.** When attainment falls below the target and rises again at a
//! higher load, the *first* crossing from below is the capacity. A load above one that failed
//! is only reached by running through a load that fails, and a rise is more often noise or the
//! closed loop of fixed concurrency lowering its own load than a real recovery; the first
//! crossing is the load up to which every measurement met the target.
//!
//! Units: the load is in the sweep shape's unit (concurrent requests or req/s); the
//! throughput at capacity is req/s in both shapes, so capacities of either shape become
//! requests per hour ([`Capacity::requests_per_hour`]).

use super::attainment::LoadAttainment;
use super::interpolate::between;
use serde::{Deserialize, Serialize};

/// The attainment target when a profile sets none: 95 % of requests meet every threshold.
pub const DEFAULT_TARGET: f64 = 0.95;

/// The capacity of one sweep under one profile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Capacity {
    /// The crossing lies within the measured loads.
    Within {
        /// Offered load at capacity, in the sweep shape's unit.
        load: f64,
        /// Achieved request throughput at capacity, req/s.
        throughput_rps: f64,
        /// Whether `load` lies between two measured loads (false: measured exactly at target).
        interpolated: bool,
        /// The measured loads the crossing lies between (`[lᵢ₋₁, lᵢ]`).
        between: [f64; 2],
    },
    /// Even the highest load measured meets the target: the capacity is at least it.
    AtLeast {
        /// The highest load measured.
        load: f64,
        /// Achieved request throughput there, req/s.
        throughput_rps: f64,
    },
    /// The lowest load measured already misses the target: the capacity is below it.
    BelowLowest {
        /// The lowest load measured.
        load: f64,
        /// Achieved request throughput there, req/s.
        throughput_rps: f64,
    },
}

/// How a reported capacity relates to the true one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Measured or interpolated between measurements.
    Estimate,
    /// The true value is at least the reported one.
    LowerBound,
    /// The true value is at most the reported one.
    UpperBound,
}

impl Capacity {
    /// Offered load, in the sweep shape's unit.
    pub fn load(&self) -> f64 {
        match *self {
            Capacity::Within { load, .. }
            | Capacity::AtLeast { load, .. }
            | Capacity::BelowLowest { load, .. } => load,
        }
    }

    /// Achieved request throughput at capacity, req/s.
    pub fn throughput_rps(&self) -> f64 {
        match *self {
            Capacity::Within { throughput_rps, .. }
            | Capacity::AtLeast { throughput_rps, .. }
            | Capacity::BelowLowest { throughput_rps, .. } => throughput_rps,
        }
    }

    /// Completed requests per hour at capacity: throughput × 3600.
    pub fn requests_per_hour(&self) -> f64 {
        self.throughput_rps() * 3600.0
    }

    /// How the reported numbers relate to the true capacity.
    pub fn bound(&self) -> Bound {
        match self {
            Capacity::Within { .. } => Bound::Estimate,
            Capacity::AtLeast { .. } => Bound::LowerBound,
            Capacity::BelowLowest { .. } => Bound::UpperBound,
        }
    }
}

/// The capacity of `points` (ascending by load, as [`super::sweep_attainment`] returns them)
/// at attainment `target` (a share, e.g. [`DEFAULT_TARGET`]); `None` without points.
pub fn capacity(points: &[LoadAttainment], target: f64) -> Option<Capacity> {
    let first = points.first()?;
    if first.attainment < target {
        return Some(Capacity::BelowLowest {
            load: first.load,
            throughput_rps: first.throughput_rps,
        });
    }
    let Some(i) = points.iter().position(|p| p.attainment < target) else {
        let last = points.last()?;
        return Some(Capacity::AtLeast {
            load: last.load,
            throughput_rps: last.throughput_rps,
        });
    };
    let (lo, hi) = (&points[i - 1], &points[i]);
    // lo.attainment ≥ target > hi.attainment, so f is in [0, 1).
    let f = (lo.attainment - target) / (lo.attainment - hi.attainment);
    Some(Capacity::Within {
        load: between(lo.load, hi.load, f),
        throughput_rps: between(lo.throughput_rps, hi.throughput_rps, f),
        interpolated: f > 0.0,
        between: [lo.load, hi.load],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::AttainmentSource;

    fn point(load: f64, attainment: f64, throughput_rps: f64) -> LoadAttainment {
        LoadAttainment {
            load,
            attempted: 100,
            met: (attainment * 100.0) as u64,
            failed: 0,
            attainment,
            goodput_rps: 0.0,
            throughput_rps,
            source: AttainmentSource::Samples,
        }
    }

    #[test]
    fn crossing_is_interpolated_between_the_bracketing_loads() {
        let pts = [
            point(1.0, 1.0, 0.75),
            point(4.0, 1.0, 2.75),
            point(16.0, 0.0, 7.75),
        ];
        let c = capacity(&pts, 0.95).unwrap();
        // f = (1 − 0.95)/(1 − 0) = 0.05: load 4 + 0.05·12, throughput 2.75 + 0.05·5.
        assert_eq!(
            c,
            Capacity::Within {
                load: between(4.0, 16.0, 1.0 - 0.95),
                throughput_rps: between(2.75, 7.75, 1.0 - 0.95),
                interpolated: true,
                between: [4.0, 16.0],
            }
        );
        assert!((c.load() - 4.6).abs() < 1e-12);
        assert!((c.requests_per_hour() - 3.0 * 3600.0).abs() < 1e-9);
    }

    #[test]
    fn serialized_with_its_kind_in_snake_case() {
        let c = Capacity::AtLeast {
            load: 16.0,
            throughput_rps: 11.5,
        };
        assert_eq!(
            serde_json::to_value(c).unwrap(),
            serde_json::json!({"kind": "at_least", "load": 16.0, "throughput_rps": 11.5})
        );
        let schema = serde_json::to_value(<Capacity as utoipa::PartialSchema>::schema()).unwrap();
        assert!(schema.to_string().contains("below_lowest"), "{schema}");
    }

    #[test]
    fn exactly_at_target_is_not_interpolated() {
        let pts = [point(1.0, 0.95, 1.0), point(2.0, 0.5, 2.0)];
        assert_eq!(
            capacity(&pts, 0.95),
            Some(Capacity::Within {
                load: 1.0,
                throughput_rps: 1.0,
                interpolated: false,
                between: [1.0, 2.0]
            })
        );
    }

    #[test]
    fn ends_and_the_first_crossing() {
        let meets = [point(1.0, 1.0, 1.0), point(4.0, 0.96, 3.0)];
        assert_eq!(
            capacity(&meets, 0.95),
            Some(Capacity::AtLeast {
                load: 4.0,
                throughput_rps: 3.0
            })
        );
        let fails = [point(1.0, 0.9, 1.0), point(4.0, 0.5, 3.0)];
        assert_eq!(
            capacity(&fails, 0.95),
            Some(Capacity::BelowLowest {
                load: 1.0,
                throughput_rps: 1.0
            })
        );
        // Fails at 4, meets again at 16: the capacity is below 4.
        let dip = [
            point(1.0, 1.0, 1.0),
            point(4.0, 0.9, 3.0),
            point(16.0, 1.0, 9.0),
        ];
        let c = capacity(&dip, 0.95).unwrap();
        assert_eq!(c.bound(), Bound::Estimate);
        assert!(c.load() > 1.0 && c.load() < 4.0, "{c:?}");
        assert_eq!(capacity(&[], 0.95), None);
    }
}
