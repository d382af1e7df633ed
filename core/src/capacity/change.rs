//! Baseline against candidate: the change in requests per hour at SLO capacity.
//!
//! Both capacities are turned into completed requests per hour from the achieved request
//! throughput at capacity ([`super::Capacity::requests_per_hour`]), so the change means the
//! same in both load shapes; the two must still share one shape (fixed concurrency and fixed
//! rate are different experiments), else the comparison is refused.
//!
//! A capacity that is a bound ([`super::Capacity::AtLeast`], [`super::Capacity::BelowLowest`])
//! makes the change a bound, or unknown ([`ChangeBound`]).

use super::curve::SloCurve;
use super::estimate::{Bound, Capacity};
use super::shape::SweepShape;
use serde::{Deserialize, Serialize};

/// How the reported change relates to the true one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeBound {
    /// Both capacities are estimates.
    Estimate,
    /// The true change is at least the reported one (candidate `at_least`, or baseline
    /// `below_lowest`, against an estimate or the opposite bound).
    AtLeast,
    /// The true change is at most the reported one.
    AtMost,
    /// Both capacities are bounds in the same direction: the change can be anything.
    Unknown,
}

/// The capacity change of a candidate against its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CapacityChange {
    /// The shared load shape.
    pub shape: SweepShape,
    /// Baseline capacity.
    pub baseline: Capacity,
    /// Candidate capacity.
    pub candidate: Capacity,
    /// Baseline completed requests per hour at capacity.
    pub baseline_requests_per_hour: f64,
    /// Candidate completed requests per hour at capacity.
    pub candidate_requests_per_hour: f64,
    /// Candidate − baseline, requests per hour.
    pub change_requests_per_hour: f64,
    /// The change in % of the baseline; `None` when the baseline's is 0.
    pub change_pct: Option<f64>,
    /// How the change relates to the true one.
    pub bound: ChangeBound,
}

/// Which side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The baseline.
    Baseline,
    /// The candidate.
    Candidate,
}

/// Why two curves are not compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum ChangeRefusal {
    /// The sweeps vary different loads.
    DifferentShapes {
        /// The baseline's shape.
        baseline: SweepShape,
        /// The candidate's shape.
        candidate: SweepShape,
    },
    /// One side has no capacity (no computable attainment).
    NotComputable {
        /// The side without one.
        side: Side,
    },
}

impl ChangeRefusal {
    /// One sentence for people.
    pub fn explanation(&self) -> &'static str {
        match self {
            ChangeRefusal::DifferentShapes { .. } => "Baseline and candidate were swept along different load shapes (fixed concurrency and fixed request rate press a server differently), so their capacities are not compared.",
            ChangeRefusal::NotComputable { .. } => "One side has no SLO attainment at any load: it has neither per-request samples nor a reported goodput for the profile.",
        }
    }
}

/// The change from `baseline` to `candidate`.
///
/// # Errors
/// [`ChangeRefusal`] across load shapes or without a capacity on a side.
pub fn capacity_change(
    baseline: &SloCurve,
    candidate: &SloCurve,
) -> Result<CapacityChange, ChangeRefusal> {
    if baseline.shape != candidate.shape {
        return Err(ChangeRefusal::DifferentShapes {
            baseline: baseline.shape,
            candidate: candidate.shape,
        });
    }
    let b = baseline.capacity.ok_or(ChangeRefusal::NotComputable {
        side: Side::Baseline,
    })?;
    let c = candidate.capacity.ok_or(ChangeRefusal::NotComputable {
        side: Side::Candidate,
    })?;
    let (b_rph, c_rph) = (b.requests_per_hour(), c.requests_per_hour());
    let change = c_rph - b_rph;
    Ok(CapacityChange {
        shape: baseline.shape,
        baseline: b,
        candidate: c,
        baseline_requests_per_hour: b_rph,
        candidate_requests_per_hour: c_rph,
        change_requests_per_hour: change,
        change_pct: (b_rph != 0.0).then(|| 100.0 * change / b_rph),
        bound: change_bound(b.bound(), c.bound()),
    })
}

/// The bound of `candidate − baseline` from the bounds of each side.
fn change_bound(baseline: Bound, candidate: Bound) -> ChangeBound {
    use Bound::{Estimate, LowerBound, UpperBound};
    match (baseline, candidate) {
        (Estimate, Estimate) => ChangeBound::Estimate,
        // A larger true candidate or a smaller true baseline both raise the change.
        (Estimate | UpperBound, LowerBound) | (UpperBound, Estimate) => ChangeBound::AtLeast,
        (Estimate | LowerBound, UpperBound) | (LowerBound, Estimate) => ChangeBound::AtMost,
        (LowerBound, LowerBound) | (UpperBound, UpperBound) => ChangeBound::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Bound::{Estimate, LowerBound, UpperBound};

    #[test]
    fn bounds_combine_by_direction() {
        assert_eq!(change_bound(Estimate, Estimate), ChangeBound::Estimate);
        assert_eq!(change_bound(Estimate, LowerBound), ChangeBound::AtLeast);
        assert_eq!(change_bound(UpperBound, Estimate), ChangeBound::AtLeast);
        assert_eq!(change_bound(UpperBound, LowerBound), ChangeBound::AtLeast);
        assert_eq!(change_bound(LowerBound, Estimate), ChangeBound::AtMost);
        assert_eq!(change_bound(Estimate, UpperBound), ChangeBound::AtMost);
        assert_eq!(change_bound(LowerBound, UpperBound), ChangeBound::AtMost);
        assert_eq!(change_bound(LowerBound, LowerBound), ChangeBound::Unknown);
        assert_eq!(change_bound(UpperBound, UpperBound), ChangeBound::Unknown);
    }
}
