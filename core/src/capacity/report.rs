//! The capacity part of the validation report (issue 14): baseline against candidate, sweep by
//! sweep and SLO profile by profile. Pure: the results of both sides in, a typed
//! [`CapacityReport`] out; [`super::render`] writes it as words and Markdown.
//!
//! For each sweep key ([`SweepKey`]) present on both sides, and each profile:
//! - both [`SloCurve`]s (attainment and goodput per load, and the capacity);
//! - the capacity change in requests per hour ([`capacity_change`]), or its refusal;
//! - the slowest users' wait (p95/p99 TTFT and E2E, [`compare_wait`]) at the typical load;
//!
//! - the cost at SLO per side when a price per accelerator-hour is given ([`super::cost`]);
//!
//! and per sweep the finish-time crossover at every load measured on both sides where the
//! candidate starts later but streams faster, and the failed requests of each side. Sweeps on
//! one side only are listed as unmatched; results refused by [`build_sweeps`] (mixed load shapes,
//! a load on neither shape) are listed with the side they come from.
//!
//! Around the capacity: the quality results of both sides ([`super::quality`]), the warnings
//! ([`super::warning`]: quantization without quality, small samples, failed requests, missing
//! cells of the standard matrix) and the overall answer ([`super::answer`]).
//!
//! # The typical load
//! Given by the caller, it is used as is (in the sweep shape's unit). Otherwise
//! ([`TypicalBasis::BaselineCapacity`]) it is the highest load measured on **both** sides that
//! does not exceed the baseline's capacity under the profile: the heaviest traffic the baseline
//! is known, by measurement, to serve within its SLO, which is what a deployment runs today and
//! what the candidate must serve at least as well. Being measured on both sides, it needs no
//! interpolation. When the baseline has no capacity, or its capacity is below every load measured
//! on both sides, it is the lowest load measured on both ([`TypicalBasis::LowestMeasured`]).

use super::answer::{answer, ReportAnswer};
use super::change::{capacity_change, CapacityChange, ChangeRefusal, Side};
use super::cost::{side_cost, CostComparison};
use super::crossover::{crossover, medians_of, Crossover, Medians};
use super::curve::{slo_curve, SloCurve};
use super::estimate::Capacity;
use super::quality::{quality_section, QualitySection};
use super::shape::SweepShape;
use super::sweep::{build_sweeps, Refused, Sweep, SweepKey, SweepPoint};
use super::wait::{compare_wait, WaitComparison, WaitRefusal};
use super::warning::{matrix_warnings, sweep_warnings, ReportWarning};
use crate::metric::{Stat, Unit};
use crate::quality::QualityResult;
use crate::result::BenchResult;
use crate::slo::SloProfile;
use serde::{Deserialize, Serialize};

/// Baseline against candidate, capacity at SLO.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CapacityReport {
    /// Attainment target, a share in (0, 1].
    pub target: f64,
    /// The SLO profiles compared, in the order given.
    pub profiles: Vec<SloProfile>,
    /// One entry per sweep key present on both sides, ordered as [`build_sweeps`] orders the
    /// baseline's sweeps.
    pub sweeps: Vec<SweepComparison>,
    /// Sweeps present on one side only.
    pub unmatched: Vec<UnmatchedSweep>,
    /// Results or groups [`build_sweeps`] refused, baseline's first.
    pub refused: Vec<RefusedSweep>,
    /// Both sides' quality results and the quantization change ([`super::quality`]).
    pub quality: QualitySection,
    /// The warnings, in this order: quantization without quality, each compared sweep's small
    /// samples and failed requests, missing matrix cells ([`super::warning`]).
    pub warnings: Vec<ReportWarning>,
    /// The overall answer ([`super::answer`]).
    pub answer: ReportAnswer,
}

/// What one side brings to the report: its results and its quality results.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReportSide<'a> {
    /// The benchmark results.
    pub results: &'a [BenchResult],
    /// The quality results of the run (empty: none).
    pub quality: &'a [QualityResult],
    /// The results as stored when `results` were re-keyed to pair with the other side's
    /// (the compare page pairs a changed configuration cell by cell): the configuration diff
    /// of the quality section reads these. `None`: `results` are as stored.
    pub as_stored: Option<&'a [BenchResult]>,
}

impl<'a> ReportSide<'a> {
    /// A side of `results` as stored and its quality results.
    pub fn new(results: &'a [BenchResult], quality: &'a [QualityResult]) -> ReportSide<'a> {
        ReportSide {
            results,
            quality,
            as_stored: None,
        }
    }

    fn configured(&self) -> &'a [BenchResult] {
        self.as_stored.unwrap_or(self.results)
    }
}

/// One sweep key measured on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SweepComparison {
    /// The shared series key and load-free cell.
    pub key: SweepKey,
    /// The baseline's load shape.
    pub baseline_shape: SweepShape,
    /// The candidate's load shape (when it differs, capacity and wait are refused).
    pub candidate_shape: SweepShape,
    /// Loads measured on the baseline, ascending, in its shape's unit.
    pub baseline_loads: Vec<f64>,
    /// Loads measured on the candidate, ascending, in its shape's unit.
    pub candidate_loads: Vec<f64>,
    /// Failed requests of the baseline's results.
    pub baseline_failed: FailedRequests,
    /// Failed requests of the candidate's results.
    pub candidate_failed: FailedRequests,
    /// One entry per profile, in the report's profile order.
    pub profiles: Vec<ProfileComparison>,
    /// The trade-offs: loads measured on both sides (same shape) where the candidate starts
    /// later (median TTFT higher) and streams faster (median TPOT lower), ascending by load.
    pub crossovers: Vec<LoadCrossover>,
}

/// Requests that failed or timed out, over the results whose counts are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FailedRequests {
    /// Requests attempted (completed and failed).
    pub attempted: u64,
    /// Requests that failed or timed out; they count against attainment.
    pub failed: u64,
}

/// One profile on one sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ProfileComparison {
    /// The profile's name.
    pub profile: String,
    /// The baseline's curve.
    pub baseline: SloCurve,
    /// The candidate's curve.
    pub candidate: SloCurve,
    /// The capacity change, or why there is none.
    pub change: ChangeOutcome,
    /// The load the slowest users' wait is given at; `None` when neither given nor choosable
    /// (no load measured on both sides).
    pub typical_load: Option<TypicalLoad>,
    /// The slowest users' wait at `typical_load`, or why there is none.
    pub wait: WaitOutcome,
    /// Cost at SLO capacity, when a price per accelerator-hour was given
    /// ([`ReportOptions::accelerator_hour_usd`]).
    pub cost: Option<CostComparison>,
}

/// The capacity change or its refusal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ChangeOutcome {
    /// Both capacities are known and comparable.
    Compared {
        /// The change.
        change: CapacityChange,
    },
    /// Not compared.
    Refused {
        /// Why (typed).
        refusal: ChangeRefusal,
        /// [`ChangeRefusal::explanation`], for people.
        explanation: String,
    },
}

/// The slowest users' wait or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum WaitOutcome {
    /// Given at the typical load.
    Compared {
        /// Both sides' p95/p99 TTFT and E2E.
        // Boxed: the other variants are small.
        wait: Box<WaitComparison>,
    },
    /// Not given.
    Refused {
        /// Why.
        refusal: WaitRefusal,
    },
    /// No typical load: none given and no load measured on both sides.
    NoTypicalLoad,
}

/// The typical load and how it was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TypicalLoad {
    /// Offered load, in the sweep shape's unit.
    pub load: f64,
    /// How it was chosen.
    pub basis: TypicalBasis,
}

/// How the typical load was chosen (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TypicalBasis {
    /// Given by the caller (`typical_load`).
    Given,
    /// The highest load measured on both sides at or below the baseline's capacity.
    BaselineCapacity,
    /// The lowest load measured on both sides (the baseline has no capacity at or above it).
    LowestMeasured,
}

/// The finish-time crossover at one load measured on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LoadCrossover {
    /// The load, in the sweep shape's unit.
    pub load: f64,
    /// Medians, start delay, streaming gain and `N*`.
    pub crossover: Crossover,
}

/// A sweep on one side only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct UnmatchedSweep {
    /// The side it is on.
    pub side: Side,
    /// Its key.
    pub key: SweepKey,
    /// Its shape.
    pub shape: SweepShape,
    /// Its loads, ascending, in the shape's unit.
    pub loads: Vec<f64>,
}

/// A refusal of [`build_sweeps`] and the side it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RefusedSweep {
    /// The side.
    pub side: Side,
    /// The group and why.
    pub refused: Refused,
    /// [`super::SweepRefusal::explanation`], for people.
    pub explanation: String,
}

/// The report's knobs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReportOptions {
    /// Attainment target, a share in (0, 1] (e.g. [`super::DEFAULT_TARGET`]).
    pub target: f64,
    /// The typical load, in the sweep shape's unit; `None`: chosen per profile (module
    /// documentation).
    pub typical_load: Option<f64>,
    /// USD per accelerator-hour (the project's `cost` setting); `None`: no cost at SLO.
    pub accelerator_hour_usd: Option<f64>,
}

impl ReportOptions {
    /// The options of a project's own report: [`super::DEFAULT_TARGET`], the typical load
    /// chosen per profile, and the project's accelerator price. The compare page and the PR
    /// comment's capacity section use them as they are, so they agree with
    /// `GET /api/v1/compare/report` without its `target` and `typical_load` parameters.
    pub fn of_project(settings: &crate::settings::ProjectSettings) -> ReportOptions {
        ReportOptions {
            target: super::DEFAULT_TARGET,
            typical_load: None,
            accelerator_hour_usd: settings.cost.map(|c| c.accelerator_hour_usd),
        }
    }
}

/// The report of `candidate` against `baseline` under `profiles`; `key_fields` are the
/// project's metadata key fields ([`build_sweeps`]).
pub fn capacity_report(
    baseline: ReportSide,
    candidate: ReportSide,
    key_fields: &[String],
    profiles: &[SloProfile],
    options: ReportOptions,
) -> CapacityReport {
    let (b, c) = (
        build_sweeps(baseline.results, key_fields),
        build_sweeps(candidate.results, key_fields),
    );
    let quality = quality_section(
        (baseline.configured(), baseline.quality),
        (candidate.configured(), candidate.quality),
    );
    let mut warnings = Vec::new();
    if quality.quantization_unvouched() {
        warnings.push(ReportWarning::QuantizationWithoutQuality {
            differences: quality.quantization.clone(),
            missing_tasks: missing_tasks(baseline.quality, candidate.quality),
        });
    }
    let mut sweeps = Vec::new();
    let mut unmatched = Vec::new();
    for bs in &b.sweeps {
        match c.sweeps.iter().find(|cs| cs.key == bs.key) {
            Some(cs) => {
                let compared = compare_sweeps(bs, cs, profiles, options);
                warnings.extend(sweep_warnings(
                    bs,
                    cs,
                    (compared.baseline_failed, compared.candidate_failed),
                ));
                sweeps.push(compared);
            }
            None => unmatched.push(unmatched_of(Side::Baseline, bs)),
        }
    }
    warnings.extend(matrix_warnings(baseline.results, candidate.results));
    for cs in &c.sweeps {
        if !b.sweeps.iter().any(|bs| bs.key == cs.key) {
            unmatched.push(unmatched_of(Side::Candidate, cs));
        }
    }
    let refused = [(Side::Baseline, &b.refused), (Side::Candidate, &c.refused)]
        .into_iter()
        .flat_map(|(side, rs)| {
            rs.iter().map(move |r| RefusedSweep {
                side,
                explanation: r.reason.explanation().to_string(),
                refused: r.clone(),
            })
        })
        .collect();
    CapacityReport {
        target: options.target,
        profiles: profiles.to_vec(),
        answer: answer(&sweeps, &warnings),
        sweeps,
        unmatched,
        refused,
        quality,
        warnings,
    }
}

/// The baseline's tasks the candidate has no quality result for, in the baseline's order.
fn missing_tasks(baseline: &[QualityResult], candidate: &[QualityResult]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for b in baseline {
        if !candidate.iter().any(|c| c.task == b.task) && !out.contains(&b.task) {
            out.push(b.task.clone());
        }
    }
    out
}

fn unmatched_of(side: Side, s: &Sweep) -> UnmatchedSweep {
    UnmatchedSweep {
        side,
        key: s.key.clone(),
        shape: s.shape,
        loads: loads(s),
    }
}

fn loads(s: &Sweep) -> Vec<f64> {
    s.points.iter().map(|p| p.load).collect()
}

/// Loads measured on both sweeps (same shape), ascending.
fn common_loads(b: &Sweep, c: &Sweep) -> Vec<f64> {
    if b.shape != c.shape {
        return Vec::new();
    }
    loads(b)
        .into_iter()
        .filter(|l| c.points.iter().any(|p| p.load == *l))
        .collect()
}

fn compare_sweeps(
    b: &Sweep,
    c: &Sweep,
    profiles: &[SloProfile],
    options: ReportOptions,
) -> SweepComparison {
    let common = common_loads(b, c);
    let profiles = profiles
        .iter()
        .map(|p| {
            let (bc, cc) = (
                slo_curve(b, p, options.target),
                slo_curve(c, p, options.target),
            );
            let change = match capacity_change(&bc, &cc) {
                Ok(change) => ChangeOutcome::Compared { change },
                Err(refusal) => ChangeOutcome::Refused {
                    explanation: refusal.explanation().to_string(),
                    refusal,
                },
            };
            let typical_load = match options.typical_load {
                Some(load) => Some(TypicalLoad {
                    load,
                    basis: TypicalBasis::Given,
                }),
                None => default_typical(&common, bc.capacity),
            };
            let wait = match typical_load {
                None => WaitOutcome::NoTypicalLoad,
                Some(t) => match compare_wait(b, c, t.load) {
                    Ok(wait) => WaitOutcome::Compared {
                        wait: Box::new(wait),
                    },
                    Err(refusal) => WaitOutcome::Refused { refusal },
                },
            };
            let cost = options.accelerator_hour_usd.map(|price| CostComparison {
                accelerator_hour_usd: price,
                baseline: side_cost(b, bc.capacity, price),
                candidate: side_cost(c, cc.capacity, price),
            });
            ProfileComparison {
                profile: p.name.clone(),
                baseline: bc,
                candidate: cc,
                change,
                typical_load,
                wait,
                cost,
            }
        })
        .collect();
    let crossovers = common
        .iter()
        .filter_map(|load| {
            let at = |s: &Sweep| s.points.iter().find(|p| p.load == *load).and_then(medians);
            let x = crossover(at(b)?, at(c)?)?;
            Some(LoadCrossover {
                load: *load,
                crossover: x,
            })
        })
        .collect();
    SweepComparison {
        key: b.key.clone(),
        baseline_shape: b.shape,
        candidate_shape: c.shape,
        baseline_loads: loads(b),
        candidate_loads: loads(c),
        baseline_failed: failed_requests(b),
        candidate_failed: failed_requests(c),
        profiles,
        crossovers,
    }
}

/// The default typical load (module documentation) from the loads measured on both sides.
fn default_typical(common: &[f64], baseline: Option<Capacity>) -> Option<TypicalLoad> {
    let lowest = *common.first()?;
    let within = baseline.and_then(|cap| match cap {
        Capacity::BelowLowest { .. } => None,
        Capacity::Within { load, .. } | Capacity::AtLeast { load, .. } => {
            common.iter().rev().find(|l| **l <= load).copied()
        }
    });
    Some(match within {
        Some(load) => TypicalLoad {
            load,
            basis: TypicalBasis::BaselineCapacity,
        },
        None => TypicalLoad {
            load: lowest,
            basis: TypicalBasis::LowestMeasured,
        },
    })
}

/// The medians of one load: each result's stored p50 TTFT and TPOT ([`medians_of`]), averaged
/// over repeats; `None` unless every repeat has both.
fn medians(point: &SweepPoint) -> Option<Medians> {
    let all: Vec<Medians> = point
        .results
        .iter()
        .map(|r| medians_of(r))
        .collect::<Option<_>>()?;
    let n = all.len() as f64;
    (n > 0.0).then(|| Medians {
        ttft_ms: all.iter().map(|m| m.ttft_ms).sum::<f64>() / n,
        tpot_ms: all.iter().map(|m| m.tpot_ms).sum::<f64>() / n,
    })
}

/// Failed requests of a sweep: from per-request samples where a result has them, else from its
/// stored `completed` and `failed` counts; a result with neither is left out.
fn failed_requests(s: &Sweep) -> FailedRequests {
    let mut total = FailedRequests::default();
    for r in s.points.iter().flat_map(|p| &p.results) {
        if let Some((attempted, failed)) = result_failed(r) {
            total.attempted += attempted;
            total.failed += failed;
        }
    }
    total
}

/// (attempted, failed) of one result: from its per-request samples, else its stored
/// `completed` and `failed` counts; `None` with neither.
pub(super) fn result_failed(r: &BenchResult) -> Option<(u64, u64)> {
    if let Some(s) = &r.samples {
        let failed = s.success.iter().filter(|ok| !**ok).count() as u64;
        return Some((s.len() as u64, failed));
    }
    let value = |name: &str| {
        r.metrics
            .iter()
            .find(|m| m.name == name && m.stat == Stat::Value && m.slo_profile.is_none())
            .map(|m| m.value)
    };
    let (completed, failed) = (value("completed")?, value("failed")?);
    Some(((completed + failed).round() as u64, failed.round() as u64))
}

impl CapacityReport {
    /// Whether either side measured a load sweep: some sweep with two or more loads on one
    /// side. A report of single loads (one cell per side) says little a comparison of the
    /// cell's metrics does not, and readers show it only when this holds.
    pub fn has_sweep(&self) -> bool {
        self.sweeps
            .iter()
            .any(|s| s.baseline_loads.len() > 1 || s.candidate_loads.len() > 1)
            || self.unmatched.iter().any(|u| u.loads.len() > 1)
    }
}

impl SweepComparison {
    /// The unit of this sweep's loads (the baseline's shape's).
    pub fn load_unit(&self) -> Unit {
        self.baseline_shape.load_unit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::render;
    use crate::cell::RequestRate;
    use crate::samples::RequestSamples;

    /// A result of cell `input_len` at a load, with `n` requests whose TTFT is `ttft_ms`, the
    /// last `failed` of them failed, over 10 s.
    fn result(
        input_len: u64,
        c: Option<u64>,
        rate: Option<f64>,
        n: usize,
        failed: usize,
    ) -> BenchResult {
        let mut b = BenchResult::default();
        b.cell.input_len = Some(input_len);
        b.cell.load.max_concurrency = c;
        b.cell.load.request_rate = rate.map(RequestRate::PerSecond);
        b.samples = Some(RequestSamples {
            success: (0..n).map(|i| i < n - failed).collect(),
            ttft_ms: Some((0..n).map(|i| (i < n - failed).then_some(50.0)).collect()),
            e2el_ms: Some((0..n).map(|i| (i < n - failed).then_some(500.0)).collect()),
            duration_s: Some(10.0),
            ..Default::default()
        });
        b
    }

    fn ttft_profile() -> SloProfile {
        SloProfile {
            name: "fast".into(),
            ttft_ms: Some(100.0),
            tpot_ms: None,
            e2el_ms: None,
        }
    }

    #[test]
    fn shapes_that_differ_are_refused_and_one_sided_sweeps_listed() {
        let base = vec![
            result(512, Some(1), None, 20, 0),
            result(512, Some(4), None, 20, 2),
            result(1024, Some(2), None, 20, 0),
        ];
        let head = vec![
            result(512, None, Some(1.0), 20, 0),
            result(512, None, Some(2.0), 20, 0),
            result(2048, None, Some(1.0), 20, 0),
        ];
        let opts = ReportOptions {
            target: 0.95,
            typical_load: None,
            accelerator_hour_usd: None,
        };
        let side = |results| ReportSide::new(results, &[]);
        let r = capacity_report(side(&base), side(&head), &[], &[ttft_profile()], opts);
        assert_eq!(r.sweeps.len(), 1);
        let s = &r.sweeps[0];
        assert_eq!(s.key.cell, "input_len=512");
        assert_eq!(
            (s.baseline_shape, s.candidate_shape),
            (SweepShape::Concurrency, SweepShape::RequestRate)
        );
        assert_eq!(
            s.baseline_failed,
            FailedRequests {
                attempted: 40,
                failed: 2
            }
        );
        let p = &s.profiles[0];
        // 18 of 20 at concurrency 4 (2 failed): 95 % is crossed at 1 + (1 − 0.95)/(1 − 0.9)·3.
        let load = p.baseline.capacity.unwrap().load();
        assert!((load - 2.5).abs() < 1e-12, "{load}");
        assert_eq!(
            p.change,
            ChangeOutcome::Refused {
                refusal: ChangeRefusal::DifferentShapes {
                    baseline: SweepShape::Concurrency,
                    candidate: SweepShape::RequestRate
                },
                explanation: ChangeRefusal::DifferentShapes {
                    baseline: SweepShape::Concurrency,
                    candidate: SweepShape::RequestRate
                }
                .explanation()
                .to_string(),
            }
        );
        // No load measured on both sides (different shapes): no typical load.
        assert_eq!(
            (p.typical_load, &p.wait),
            (None, &WaitOutcome::NoTypicalLoad)
        );
        assert_eq!(s.crossovers, vec![]);
        let one_sided: Vec<(Side, &str, Vec<f64>)> = r
            .unmatched
            .iter()
            .map(|u| (u.side, u.key.cell.as_str(), u.loads.clone()))
            .collect();
        assert_eq!(
            one_sided,
            vec![
                (Side::Baseline, "input_len=1024", vec![2.0]),
                (Side::Candidate, "input_len=2048", vec![1.0])
            ]
        );
        let md = render::markdown(&r);
        assert!(
            md.contains(
                "| fast | TTFT ≤ 100 ms | 2.5 concurrent requests → ≥ 2 req/s | — | not compared | — | — | — | — | — |\n"
            ),
            "{md}"
        );
        assert!(md.contains("- baseline only: `input_len=1024` (concurrency sweep, loads 2 concurrent requests)\n"), "{md}");
        assert!(
            md.contains("- candidate only: `input_len=2048` (request-rate sweep, loads 1 req/s)\n"),
            "{md}"
        );
        assert!(
            md.contains("Failed requests: baseline 2 of 40, candidate 0 of 40."),
            "{md}"
        );
        let summary = render::summary(&r);
        assert!(summary.contains("capacity is not compared: baseline and candidate were swept along different load shapes"), "{summary}");
        assert!(summary.contains("2 of 40 baseline and 0 of 40 candidate requests failed or timed out; they count against attainment."), "{summary}");
        assert!(
            summary.ends_with(
                "Not compared: 2 sweeps measured on one side only and 0 refused result groups."
            ),
            "{summary}"
        );
    }

    #[test]
    fn quality_and_warnings_set_the_answer() {
        use crate::capacity::{render_warnings, ReportWarning, WarningCode};
        use crate::quality::QualityResult;
        use crate::report::pairing::pair_by_cell;
        use crate::report::verdict::VerdictLevel;
        let opts = ReportOptions {
            target: 0.95,
            typical_load: None,
            accelerator_hour_usd: None,
        };
        let sweep = |failed: usize, kv: Option<&str>| -> Vec<BenchResult> {
            [1, 4]
                .map(|c| {
                    let mut r = result(512, Some(c), None, 100, if c == 4 { failed } else { 0 });
                    r.configuration.quantization.kv_cache_dtype = kv.map(str::to_string);
                    r
                })
                .to_vec()
        };
        let gsm8k = |value: f64| QualityResult {
            task: "gsm8k".into(),
            metric: "exact_match".into(),
            value,
            stderr: Some(0.0118),
            samples: Some(1319),
        };
        let report = |base: &[BenchResult],
                      head: &[BenchResult],
                      bq: &[QualityResult],
                      hq: &[QualityResult]| {
            let (paired, _) = pair_by_cell(base, head, &[]);
            capacity_report(
                ReportSide {
                    results: &paired,
                    quality: bq,
                    as_stored: Some(base),
                },
                ReportSide::new(head, hq),
                &[],
                &[ttft_profile()],
                opts,
            )
        };
        let base = sweep(0, None);
        // Same configuration, 100 requests at each load, none failed: approved.
        let same = report(&base, &sweep(0, None), &[], &[]);
        assert_eq!(same.answer.level, VerdictLevel::Pass);
        assert_eq!((same.answer.compared, same.warnings.len()), (1, 0));
        assert!(same.quality.is_empty());
        // An FP8 KV cache without quality results: paired cell by cell, at least `warn`.
        let fp8 = sweep(0, Some("fp8"));
        let r = report(&base, &fp8, &[gsm8k(0.7566)], &[]);
        assert_eq!(r.sweeps.len(), 1);
        assert_eq!(r.answer.level, VerdictLevel::Warn);
        assert_eq!(
            r.answer.caveats,
            vec![WarningCode::QuantizationWithoutQuality]
        );
        let ReportWarning::QuantizationWithoutQuality { missing_tasks, .. } = &r.warnings[0] else {
            panic!("{:?}", r.warnings)
        };
        assert_eq!(missing_tasks, &vec!["gsm8k".to_string()]);
        let md = render::markdown(&r);
        assert!(md.contains("**Answer: warn: approved only with caveats (1 quantization without quality); read the warnings before approving.**\n"), "{md}");
        assert!(md.contains("### Warnings\n\n- Quantization changed (`quantization.kv_cache_dtype`: unset → fp8) and the candidate has no quality result for the baseline's tasks (`gsm8k`): speed does not prove correctness"), "{md}");
        assert!(md.contains("### Quality\n\nQuantization changed (`quantization.kv_cache_dtype`: unset → fp8) and the candidate has no quality result"), "{md}");
        assert!(
            md.contains("- `gsm8k` / `exact_match`: no candidate result (the baseline has one)\n"),
            "{md}"
        );
        // With the candidate's result for the task: approved, the change in the table.
        let r = report(&base, &fp8, &[gsm8k(0.7566)], &[gsm8k(0.7491)]);
        assert_eq!(r.answer.level, VerdictLevel::Pass, "{:?}", r.warnings);
        let md = render::markdown(&r);
        assert!(
            md.contains("| gsm8k | exact_match | 0.7566 ± 0.0118 → 0.7491 ± 0.0118 | -0.0075 ± 0.0167 | 1,319 → 1,319 |\n"),
            "{md}"
        );
        // 10 of 100 failed at concurrency 4 on the candidate: 95 % is crossed at 1 + 0.5·3 =
        // 2.5 instead of at least 4: fewer requests per hour for certain; the failures are
        // warned, and the 90 completed requests left are too few for a p99 (fewer than 100).
        let r = report(&base, &sweep(10, None), &[], &[]);
        assert_eq!(r.answer.level, VerdictLevel::Fail);
        assert_eq!(
            r.answer.caveats,
            vec![WarningCode::SmallSample, WarningCode::FailedRequests]
        );
        assert_eq!(
            render_warnings::answer_sentence(&r.answer),
            "Answer: fail: not approved, the candidate completes fewer requests per hour at SLO capacity under `fast` on `input_len=512`; caveats: 1 small sample, 1 sweep with failed requests."
        );
        assert_eq!(
            render_warnings::warning_sentences(&r),
            vec![
                "Small sample: the candidate completed 90 requests at 4 concurrent requests on `input_len=512`, too few for a trustworthy p99: 1 % of them is 0.9 requests beyond it, it needs 100.",
                "Failed requests on `input_len=512`: baseline 0 of 200, candidate 10 of 200; they count against attainment."
            ]
        );
    }

    #[test]
    fn the_default_typical_load_is_measured_on_both_sides_within_the_baseline_capacity() {
        let within = Capacity::Within {
            load: 4.6,
            throughput_rps: 3.0,
            interpolated: true,
            between: [4.0, 16.0],
        };
        let t = |common: &[f64], cap| default_typical(common, cap).map(|t| (t.load, t.basis));
        assert_eq!(
            t(&[1.0, 4.0, 16.0], Some(within)),
            Some((4.0, TypicalBasis::BaselineCapacity))
        );
        let at_least = Capacity::AtLeast {
            load: 16.0,
            throughput_rps: 9.0,
        };
        assert_eq!(
            t(&[1.0, 4.0, 16.0], Some(at_least)),
            Some((16.0, TypicalBasis::BaselineCapacity))
        );
        let below = Capacity::BelowLowest {
            load: 1.0,
            throughput_rps: 1.0,
        };
        assert_eq!(
            t(&[1.0, 4.0], Some(below)),
            Some((1.0, TypicalBasis::LowestMeasured))
        );
        assert_eq!(
            t(&[2.0, 4.0], None),
            Some((2.0, TypicalBasis::LowestMeasured))
        );
        // Baseline capacity below every common load (its sweep started lower).
        let low = Capacity::Within {
            load: 1.5,
            throughput_rps: 1.0,
            interpolated: true,
            between: [1.0, 2.0],
        };
        assert_eq!(
            t(&[2.0, 4.0], Some(low)),
            Some((2.0, TypicalBasis::LowestMeasured))
        );
        assert_eq!(t(&[], Some(within)), None);
    }
}
