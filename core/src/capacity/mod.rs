//! Capacity at SLO from load sweeps: the answer to "with our traffic and our quality
//! requirements, how many more requests per hour can we complete, and how long will the users
//! served slowest have to wait?" (issue 14; `shared/notes/validation-method.md`). Pure: no I/O.
//!
//! * [`shape`]: which load a result varies ([`SweepShape`]: fixed concurrency or fixed
//!   request rate) and its offered load; loads on neither shape are refused ([`LoadRefusal`]).
//! * [`sweep`]: results grouped into sweeps (series key and cell apart from the load); groups
//!   mixing both shapes are refused ([`SweepRefusal`]).
//! * [`attainment`]: SLO attainment and goodput at each load under a profile
//!   ([`crate::slo`]'s definitions; failed requests count against attainment).
//! * [`estimate`]: the capacity, the highest load whose attainment meets the target,
//!   interpolated between measured loads, `at_least`/`below_lowest` at the ends.
//! * [`curve`]: one sweep's attainment-against-load curve with its capacity ([`SloCurve`]).
//! * [`change`]: baseline against candidate in requests per hour.
//! * [`wait`]: p95/p99 TTFT and E2E latency at a typical load, with intervals.
//! * [`crossover`](mod@crossover): the output length above which a later-starting, faster-streaming
//!   candidate finishes first.
//! * [`interpolate`]: the linear interpolation all of them use, never outside the measured
//!   range.
//! * [`cost`]: cost per 1,000 requests and per million output tokens at SLO capacity.
//! * [`quality`]: both sides' quality results and the quantization change.
//! * [`matrix`]: the 18-cell standard matrix of the validation method.
//! * [`warning`]: the report's typed warnings; [`answer`]: its overall answer.
//! * [`report`]: baseline against candidate, every sweep and profile ([`CapacityReport`]);
//!   [`render`] writes it as the summary paragraph and as Markdown, with
//!   [`render_quality`], [`render_warnings`] and [`render_cost`] for those sections.

pub mod answer;
pub mod attainment;
pub mod change;
pub mod cost;
pub mod crossover;
pub mod curve;
pub mod estimate;
pub mod interpolate;
pub mod matrix;
pub mod quality;
pub mod render;
pub mod render_cost;
pub mod render_quality;
pub mod render_warnings;
pub mod report;
pub mod shape;
pub mod sweep;
pub mod wait;
pub mod warning;

pub use answer::{FewerRequests, ReportAnswer};
pub use attainment::{point_attainment, sweep_attainment, AttainmentSource, LoadAttainment};
pub use change::{capacity_change, CapacityChange, ChangeBound, ChangeRefusal, Side};
pub use cost::{CostComparison, CostSettings, SideCost, SideCostOutcome};
pub use crossover::{crossover, medians_of, sentence, Crossover, Medians};
pub use curve::{slo_curve, SloCurve};
pub use estimate::{capacity, Bound, Capacity, DEFAULT_TARGET};
pub use quality::{QualityRow, QualitySection};
pub use report::{
    capacity_report, CapacityReport, ChangeOutcome, FailedRequests, LoadCrossover,
    ProfileComparison, RefusedSweep, ReportOptions, ReportSide, SweepComparison, TypicalBasis,
    TypicalLoad, UnmatchedSweep, WaitOutcome,
};
pub use shape::{classify, LoadRefusal, OfferedLoad, SweepShape};
pub use sweep::{
    build_sweeps, sweep_cell, Refused, Sweep, SweepKey, SweepPoint, SweepRefusal, SweepSet,
};
pub use wait::{
    compare_wait, slowest_wait, SlowestWait, WaitBasis, WaitComparison, WaitEstimate, WaitRefusal,
};
pub use warning::{ReportWarning, TailPercentile, WarningCode};
