//! The SLO curve of one sweep under one profile: attainment and goodput against offered load,
//! and the capacity read from it. This is what a report shows (goodput-vs-load curves with
//! the target line) and what [`super::capacity_change`] compares.

use super::attainment::{sweep_attainment, LoadAttainment};
use super::estimate::{capacity, Capacity};
use super::shape::SweepShape;
use super::sweep::{Sweep, SweepKey};
use crate::metric::Unit;
use crate::slo::SloProfile;
use serde::{Deserialize, Serialize};

/// Attainment against load and the capacity of one sweep under one profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SloCurve {
    /// The sweep's series key and load-free cell.
    pub key: SweepKey,
    /// The load varied.
    pub shape: SweepShape,
    /// Unit of every `load` here: `requests` (concurrent) or `req/s`.
    pub load_unit: Unit,
    /// The SLO profile's name.
    pub profile: String,
    /// Attainment target, a share in (0, 1].
    pub target: f64,
    /// One entry per measured load with a computable attainment, ascending.
    pub points: Vec<LoadAttainment>,
    /// `None` when no load has a computable attainment (no samples and no reported goodput
    /// for the profile).
    pub capacity: Option<Capacity>,
}

/// The curve of `sweep` under `profile` at attainment `target` (a share, e.g.
/// [`super::DEFAULT_TARGET`]).
pub fn slo_curve(sweep: &Sweep, profile: &SloProfile, target: f64) -> SloCurve {
    let points = sweep_attainment(sweep, profile);
    SloCurve {
        key: sweep.key.clone(),
        shape: sweep.shape,
        load_unit: sweep.shape.load_unit(),
        profile: profile.name.clone(),
        target,
        capacity: capacity(&points, target),
        points,
    }
}
