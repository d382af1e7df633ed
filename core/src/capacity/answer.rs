//! The validation report's overall answer (issue 14): may the upgrade be approved, and with
//! which caveats. Levels are the verdict's ([`VerdictLevel`]), the highest that applies:
//!
//! * `fail`: under some profile on some sweep the candidate certainly completes fewer
//!   requests per hour at SLO capacity than the baseline (a change that is an estimate and
//!   rounds below 0, or an "at most" bound below 0): not approved.
//! * `incomplete`: no capacity was compared (no sweep on both sides, or every profile's
//!   change refused): the report cannot answer.
//! * `warn`: approved only with caveats: the report has warnings
//!   ([`super::warning::ReportWarning`]), e.g. `quantization_without_quality` (speed does not
//!   prove correctness).
//! * `pass`: approved without caveat.

use super::change::ChangeBound;
use super::report::{ChangeOutcome, SweepComparison};
use super::warning::{ReportWarning, WarningCode};
use crate::report::verdict::VerdictLevel;
use serde::{Deserialize, Serialize};

/// The answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReportAnswer {
    /// `pass`, `warn`, `incomplete` or `fail` (module documentation).
    pub level: VerdictLevel,
    /// Profile comparisons whose capacity change was computed.
    pub compared: usize,
    /// Where the candidate certainly completes fewer requests per hour: (sweep cell key,
    /// profile).
    pub fewer_requests: Vec<FewerRequests>,
    /// The kinds of the report's warnings, one per warning, in the report's order.
    pub caveats: Vec<WarningCode>,
}

/// A profile on a sweep where the candidate's capacity is lower for certain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FewerRequests {
    /// The sweep's cell key ([`super::SweepKey::cell`]).
    pub cell: String,
    /// The profile.
    pub profile: String,
}

/// The answer of a report with `sweeps` and `warnings`.
pub fn answer(sweeps: &[SweepComparison], warnings: &[ReportWarning]) -> ReportAnswer {
    let mut compared = 0;
    let mut fewer_requests = Vec::new();
    for s in sweeps {
        for pc in &s.profiles {
            let ChangeOutcome::Compared { change } = &pc.change else {
                continue;
            };
            compared += 1;
            let v = change.change_requests_per_hour;
            let fewer = match change.bound {
                ChangeBound::Estimate => v.round() < 0.0,
                ChangeBound::AtMost => v < 0.0,
                ChangeBound::AtLeast | ChangeBound::Unknown => false,
            };
            if fewer {
                fewer_requests.push(FewerRequests {
                    cell: s.key.cell.clone(),
                    profile: pc.profile.clone(),
                });
            }
        }
    }
    let caveats: Vec<WarningCode> = warnings.iter().map(ReportWarning::code).collect();
    let level = if !fewer_requests.is_empty() {
        VerdictLevel::Fail
    } else if compared == 0 {
        VerdictLevel::Incomplete
    } else if !caveats.is_empty() {
        VerdictLevel::Warn
    } else {
        VerdictLevel::Pass
    };
    ReportAnswer {
        level,
        compared,
        fewer_requests,
        caveats,
    }
}
