//! The quality section of the validation report (issue 14): what each side scored on its
//! evaluation tasks ([`crate::quality::QualityResult`]), next to the speed, and whether a
//! quantization change is vouched for. Speed does not prove correctness
//! (`shared/notes/validation-method.md`, step 4: "quantization changes also need a separate
//! quality check on the tasks").
//!
//! * [`QualitySection::rows`]: every (task, metric) pair both sides have, baseline value →
//!   candidate value, the delta (candidate − baseline, in the tool's own scale), each side's
//!   standard error and sample count when known, and the delta's standard error
//!   `√(se_b² + se_c²)` when both are known (independent evaluations).
//! * [`QualitySection::missing`]: pairs one side has and the other lacks.
//! * [`QualitySection::quantization`]: the quantization fields (`quantization.weights`,
//!   `quantization.kv_cache_dtype`) whose values differ between the sides' results
//!   ([`quantization_differences`]), and [`QualitySection::covered`]: whether the candidate's
//!   results vouch for such a change ([`crate::quality::covers`]). A change not covered is the
//!   report's `quantization_without_quality` warning ([`super::warning::ReportWarning`]).

use super::change::Side;
use crate::quality::{covers, QualityResult};
use crate::regression::confounds::FieldDiff;
use crate::result::BenchResult;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeSet;

/// Both sides' quality results, compared.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct QualitySection {
    /// Every (task, metric) pair both sides have, in the baseline's order.
    pub rows: Vec<QualityRow>,
    /// Pairs on one side only: the baseline's (missing on the candidate) first, each side in
    /// its own order.
    pub missing: Vec<MissingQuality>,
    /// Quantization fields whose values differ between the sides (empty: no quantization
    /// change).
    pub quantization: Vec<FieldDiff>,
    /// [`crate::quality::covers`]: the candidate has a result for every task the baseline
    /// has one for (any result, when the baseline has none).
    pub covered: bool,
}

/// One (task, metric) pair on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct QualityRow {
    /// The task (`gsm8k`).
    pub task: String,
    /// The metric (`exact_match,strict-match`).
    pub metric: String,
    /// The baseline's value, in the tool's scale.
    pub baseline: f64,
    /// The candidate's value.
    pub candidate: f64,
    /// `candidate − baseline`, in the tool's scale (for accuracy, a share: −0.01 is one
    /// percentage point lower).
    pub delta: f64,
    /// The baseline's standard error, when its tool computed one.
    pub baseline_stderr: Option<f64>,
    /// The candidate's standard error.
    pub candidate_stderr: Option<f64>,
    /// Standard error of `delta`, `√(se_b² + se_c²)` (two independent evaluations), when
    /// both are known.
    pub delta_stderr: Option<f64>,
    /// Samples (documents) behind the baseline's value, when known.
    pub baseline_samples: Option<u64>,
    /// Samples behind the candidate's value.
    pub candidate_samples: Option<u64>,
}

/// A (task, metric) pair one side has and the other lacks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MissingQuality {
    /// The side that lacks it.
    pub missing_on: Side,
    /// The task.
    pub task: String,
    /// The metric.
    pub metric: String,
}

impl QualitySection {
    /// Whether a quantization change lacks the candidate's quality results
    /// (`quantization_without_quality`).
    pub fn quantization_unvouched(&self) -> bool {
        !self.quantization.is_empty() && !self.covered
    }

    /// Whether there is nothing to show: no quality result on either side and no quantization
    /// change.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.missing.is_empty() && self.quantization.is_empty()
    }
}

/// The quality section of `baseline` against `candidate` (module documentation).
pub fn quality_section(
    baseline: (&[BenchResult], &[QualityResult]),
    candidate: (&[BenchResult], &[QualityResult]),
) -> QualitySection {
    let (bq, cq) = (baseline.1, candidate.1);
    let find = |list: &'_ [QualityResult], q: &QualityResult| {
        list.iter()
            .find(|o| o.task == q.task && o.metric == q.metric)
            .cloned()
    };
    let rows = bq
        .iter()
        .filter_map(|b| {
            let c = find(cq, b)?;
            Some(QualityRow {
                task: b.task.clone(),
                metric: b.metric.clone(),
                baseline: b.value,
                candidate: c.value,
                delta: c.value - b.value,
                baseline_stderr: b.stderr,
                candidate_stderr: c.stderr,
                delta_stderr: b.stderr.zip(c.stderr).map(|(x, y)| x.hypot(y)),
                baseline_samples: b.samples,
                candidate_samples: c.samples,
            })
        })
        .collect();
    let one_sided = |from: &[QualityResult], other: &[QualityResult], missing_on: Side| {
        from.iter()
            .filter(|q| find(other, q).is_none())
            .map(|q| MissingQuality {
                missing_on,
                task: q.task.clone(),
                metric: q.metric.clone(),
            })
            .collect::<Vec<_>>()
    };
    let mut missing = one_sided(bq, cq, Side::Candidate);
    missing.extend(one_sided(cq, bq, Side::Baseline));
    QualitySection {
        rows,
        missing,
        quantization: quantization_differences(baseline.0, candidate.0),
        covered: covers(bq, cq),
    }
}

/// The quantization fields whose values differ between the two sides' results: for
/// `quantization.weights` and `quantization.kv_cache_dtype`, the set of values each side's
/// results hold (unset is `null`); a field is listed when the sets differ, each side's value
/// being the one value it holds, or the array of them (sorted) when its results hold several.
/// A side without results compares as having none (nothing differs).
pub fn quantization_differences(
    baseline: &[BenchResult],
    candidate: &[BenchResult],
) -> Vec<FieldDiff> {
    if baseline.is_empty() || candidate.is_empty() {
        return Vec::new();
    }
    type Pick = fn(&BenchResult) -> Option<&String>;
    let fields: [(&str, Pick); 2] = [
        ("quantization.weights", |r| {
            r.configuration.quantization.weights.as_ref()
        }),
        ("quantization.kv_cache_dtype", |r| {
            r.configuration.quantization.kv_cache_dtype.as_ref()
        }),
    ];
    fields
        .into_iter()
        .filter_map(|(field, pick)| {
            let values = |rs: &[BenchResult]| -> BTreeSet<Option<String>> {
                rs.iter().map(|r| pick(r).cloned()).collect()
            };
            let (b, c) = (values(baseline), values(candidate));
            (b != c).then(|| FieldDiff {
                field: field.to_string(),
                baseline: side_value(&b),
                candidate: side_value(&c),
            })
        })
        .collect()
}

fn side_value(values: &BTreeSet<Option<String>>) -> Value {
    let one = |v: &Option<String>| v.clone().map_or(Value::Null, Value::String);
    match values.len() {
        1 => one(values.iter().next().expect("one value")),
        _ => Value::Array(values.iter().map(one).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(task: &str, metric: &str, value: f64, stderr: Option<f64>) -> QualityResult {
        QualityResult {
            task: task.into(),
            metric: metric.into(),
            value,
            stderr,
            samples: Some(1319),
        }
    }

    fn with_kv(dtype: Option<&str>) -> BenchResult {
        let mut r = BenchResult::default();
        r.configuration.quantization.kv_cache_dtype = dtype.map(str::to_string);
        r
    }

    #[test]
    fn rows_pair_task_and_metric_and_the_rest_is_missing() {
        let base = [
            q("gsm8k", "exact_match", 0.7566, Some(0.0118)),
            q("mmlu", "acc", 0.68, None),
        ];
        let head = [
            q("gsm8k", "exact_match", 0.7491, Some(0.0119)),
            q("hellaswag", "acc_norm", 0.81, None),
        ];
        let s = quality_section((&[], &base), (&[], &head));
        assert_eq!(s.rows.len(), 1);
        let r = &s.rows[0];
        assert_eq!((r.baseline, r.candidate), (0.7566, 0.7491));
        assert_eq!(r.delta, 0.7491 - 0.7566);
        assert_eq!(
            r.delta_stderr,
            Some((0.0118f64 * 0.0118 + 0.0119 * 0.0119).sqrt())
        );
        assert!((r.delta_stderr.unwrap() - 0.016758).abs() < 1e-6);
        assert_eq!(
            s.missing,
            vec![
                MissingQuality {
                    missing_on: Side::Candidate,
                    task: "mmlu".into(),
                    metric: "acc".into()
                },
                MissingQuality {
                    missing_on: Side::Baseline,
                    task: "hellaswag".into(),
                    metric: "acc_norm".into()
                },
            ]
        );
        // mmlu has no candidate result: not covered, but no quantization change either.
        assert!(!s.covered && !s.quantization_unvouched());
    }

    #[test]
    fn a_kv_cache_dtype_change_is_listed_by_its_values() {
        let d = quantization_differences(&[with_kv(None)], &[with_kv(Some("fp8"))]);
        assert_eq!(
            d,
            vec![FieldDiff {
                field: "quantization.kv_cache_dtype".into(),
                baseline: Value::Null,
                candidate: Value::String("fp8".into()),
            }]
        );
        let mixed = quantization_differences(
            &[with_kv(Some("fp8"))],
            &[with_kv(Some("fp8")), with_kv(None)],
        );
        assert_eq!(mixed[0].candidate, serde_json::json!([null, "fp8"]));
        assert_eq!(
            quantization_differences(&[with_kv(Some("fp8"))], &[with_kv(Some("fp8"))]),
            vec![]
        );
        let s = quality_section((&[with_kv(None)], &[]), (&[with_kv(Some("fp8"))], &[]));
        assert!(s.quantization_unvouched());
        let vouched = quality_section(
            (&[with_kv(None)], &[]),
            (&[with_kv(Some("fp8"))], &[q("gsm8k", "acc", 0.5, None)]),
        );
        assert!(!vouched.quantization_unvouched());
    }
}
