//! The validation report's warnings (issue 14): typed values, written in words only by
//! [`super::render_warnings`]. Any warning makes the report's answer at least `warn`
//! ([`super::answer`]).
//!
//! * [`ReportWarning::QuantizationWithoutQuality`], quantization (weights or KV-cache dtype)
//!   differs and the candidate's quality results do not cover the baseline's tasks
//!   ([`super::quality::QualitySection::quantization_unvouched`]).
//! * [`ReportWarning::SmallSample`], a load of a compared sweep whose completed requests are
//!   too few for a trustworthy tail percentile. The rule: the p-th percentile of n requests
//!   has `n·(1 − p/100)` requests beyond it, and it rests on at least one only when
//!   `n ≥ 1/(1 − p/100)`: **100 requests for p99, 20 for p95** ([`TailPercentile::needs`]).
//!   With fewer, the percentile is the slowest request or interpolated between the two
//!   slowest, not an estimate of the tail. Source: `shared/notes/validation-method.md`, step 4
//!   ("report … sample sizes; treat extreme percentiles from small samples with caution").
//! * [`ReportWarning::FailedRequests`], a compared sweep with failed or timed-out requests on
//!   either side, with both sides' counts (they count against attainment).
//! * [`ReportWarning::MissingMatrixCells`], a side whose results carry the matrix labels but
//!   miss cells of the 18-cell standard matrix ([`super::matrix`]); none for results without
//!   labels.

use super::change::Side;
use super::matrix::{missing_cells, MatrixCell};
use super::report::{result_failed, FailedRequests};
use super::shape::SweepShape;
use super::sweep::{Sweep, SweepKey};
use crate::regression::confounds::FieldDiff;
use crate::result::BenchResult;
use serde::{Deserialize, Serialize};

/// One warning of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum ReportWarning {
    /// Quantization changed and the candidate has no quality result for the baseline's tasks.
    QuantizationWithoutQuality {
        /// The quantization fields that differ.
        differences: Vec<FieldDiff>,
        /// The baseline's tasks the candidate has no result for (empty when the baseline has
        /// no quality result and the candidate none either).
        missing_tasks: Vec<String>,
    },
    /// Too few completed requests at one load for its tail percentiles (module
    /// documentation).
    SmallSample {
        /// The side measured.
        side: Side,
        /// The sweep.
        sweep: SweepKey,
        /// Its shape (the load's unit).
        shape: SweepShape,
        /// The load, in the shape's unit.
        load: f64,
        /// Completed requests at the load (repeats summed).
        completed: u64,
        /// The percentiles the count does not support, p95 before p99.
        unsupported: Vec<TailPercentile>,
    },
    /// Requests failed or timed out on a compared sweep.
    FailedRequests {
        /// The sweep.
        sweep: SweepKey,
        /// The baseline's counts.
        baseline: FailedRequests,
        /// The candidate's counts.
        candidate: FailedRequests,
    },
    /// Cells of the 18-cell standard matrix a side did not measure.
    MissingMatrixCells {
        /// The side.
        side: Side,
        /// The cells it lacks, in [`super::matrix::standard_cells`]' order.
        missing: Vec<MatrixCell>,
    },
}

/// The kind of a [`ReportWarning`], for counting and lookups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum WarningCode {
    /// [`ReportWarning::QuantizationWithoutQuality`].
    QuantizationWithoutQuality,
    /// [`ReportWarning::SmallSample`].
    SmallSample,
    /// [`ReportWarning::FailedRequests`].
    FailedRequests,
    /// [`ReportWarning::MissingMatrixCells`].
    MissingMatrixCells,
}

impl ReportWarning {
    /// Its kind.
    pub fn code(&self) -> WarningCode {
        match self {
            ReportWarning::QuantizationWithoutQuality { .. } => {
                WarningCode::QuantizationWithoutQuality
            }
            ReportWarning::SmallSample { .. } => WarningCode::SmallSample,
            ReportWarning::FailedRequests { .. } => WarningCode::FailedRequests,
            ReportWarning::MissingMatrixCells { .. } => WarningCode::MissingMatrixCells,
        }
    }
}

/// A tail percentile the report gives (p95, p99 of TTFT and E2E latency).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TailPercentile {
    /// The 95th percentile.
    P95,
    /// The 99th percentile.
    P99,
}

impl TailPercentile {
    /// Both, in ascending order.
    pub const ALL: [TailPercentile; 2] = [TailPercentile::P95, TailPercentile::P99];

    /// The fewest requests with at least one beyond the percentile: `⌈1/(1 − p/100)⌉`, 20 for
    /// p95 and 100 for p99.
    pub fn needs(self) -> u64 {
        match self {
            TailPercentile::P95 => 20,
            TailPercentile::P99 => 100,
        }
    }

    /// The share of requests beyond it, in percent: 5 or 1.
    pub fn beyond_pct(self) -> u64 {
        match self {
            TailPercentile::P95 => 5,
            TailPercentile::P99 => 1,
        }
    }
}

/// The small-sample and failed-request warnings of one compared sweep: small samples of the
/// baseline's loads then the candidate's, ascending by load; then the failed requests.
pub fn sweep_warnings(
    baseline: &Sweep,
    candidate: &Sweep,
    failed: (FailedRequests, FailedRequests),
) -> Vec<ReportWarning> {
    let mut out = Vec::new();
    for (side, s) in [(Side::Baseline, baseline), (Side::Candidate, candidate)] {
        for p in &s.points {
            let known: Vec<(u64, u64)> =
                p.results.iter().filter_map(|r| result_failed(r)).collect();
            if known.is_empty() {
                continue;
            }
            let completed: u64 = known.iter().map(|(a, f)| a - f.min(a)).sum();
            let unsupported: Vec<TailPercentile> = TailPercentile::ALL
                .into_iter()
                .filter(|t| completed < t.needs())
                .collect();
            if !unsupported.is_empty() {
                out.push(ReportWarning::SmallSample {
                    side,
                    sweep: s.key.clone(),
                    shape: s.shape,
                    load: p.load,
                    completed,
                    unsupported,
                });
            }
        }
    }
    if failed.0.failed > 0 || failed.1.failed > 0 {
        out.push(ReportWarning::FailedRequests {
            sweep: baseline.key.clone(),
            baseline: failed.0,
            candidate: failed.1,
        });
    }
    out
}

/// The missing-matrix-cell warnings of both sides (module documentation).
pub fn matrix_warnings(baseline: &[BenchResult], candidate: &[BenchResult]) -> Vec<ReportWarning> {
    [(Side::Baseline, baseline), (Side::Candidate, candidate)]
        .into_iter()
        .filter_map(|(side, rs)| {
            let missing = missing_cells(rs)?;
            (!missing.is_empty()).then_some(ReportWarning::MissingMatrixCells { side, missing })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::sweep::build_sweeps;
    use crate::samples::RequestSamples;

    fn at(c: u64, n: usize, failed: usize) -> BenchResult {
        let mut b = BenchResult::default();
        b.cell.load.max_concurrency = Some(c);
        b.samples = Some(RequestSamples {
            success: (0..n).map(|i| i >= failed).collect(),
            ..Default::default()
        });
        b
    }

    #[test]
    fn small_samples_follow_the_rule_and_failures_are_counted() {
        // 19 completed (p95 and p99 unsupported), 99 (p99), 100 (neither).
        let base = [at(1, 20, 1), at(4, 99, 0), at(16, 100, 0)];
        let head = [at(1, 20, 0), at(4, 100, 0)];
        let (b, c) = (build_sweeps(&base, &[]), build_sweeps(&head, &[]));
        let failed = (
            FailedRequests {
                attempted: 219,
                failed: 1,
            },
            FailedRequests::default(),
        );
        let w = sweep_warnings(&b.sweeps[0], &c.sweeps[0], failed);
        let small: Vec<(Side, f64, u64, Vec<TailPercentile>)> = w
            .iter()
            .filter_map(|w| match w {
                ReportWarning::SmallSample {
                    side,
                    load,
                    completed,
                    unsupported,
                    ..
                } => Some((*side, *load, *completed, unsupported.clone())),
                _ => None,
            })
            .collect();
        use TailPercentile::{P95, P99};
        assert_eq!(
            small,
            vec![
                (Side::Baseline, 1.0, 19, vec![P95, P99]),
                (Side::Baseline, 4.0, 99, vec![P99]),
                (Side::Candidate, 1.0, 20, vec![P99]),
            ]
        );
        assert_eq!(w.last().unwrap().code(), WarningCode::FailedRequests);
        let none = sweep_warnings(
            &c.sweeps[0],
            &c.sweeps[0],
            (FailedRequests::default(), FailedRequests::default()),
        );
        assert!(none.iter().all(|w| w.code() == WarningCode::SmallSample));
    }
}
