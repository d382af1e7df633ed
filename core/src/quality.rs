//! Quality (accuracy) results carried next to speed (issue 14): what a run scored on
//! evaluation tasks, so that a speed change from quantization can be told from a quality loss.
//!
//! One [`QualityResult`] is one metric of one task, as an evaluation tool reports it: e.g.
//! lm-evaluation-harness's `gsm8k` / `exact_match,strict-match` = 0.7566 ± 0.0118 over 1319
//! samples. Values are in the tool's own scale (a share in [0, 1] for `acc`), never converted.
//! They come with an upload's optional `quality` field, from `benchtrail upload --quality FILE`
//! (either benchtrail's `{"quality": [...]}` or lm-evaluation-harness's results JSON, read by
//! [`crate::adapters::lm_eval`]).

use serde::{Deserialize, Serialize};

/// One metric of one evaluation task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QualityResult {
    /// The task's name as the evaluation tool names it (`gsm8k`, `mmlu`, `hellaswag`).
    pub task: String,
    /// The metric's name (`acc`, `acc_norm`, `exact_match`); for lm-evaluation-harness a
    /// metric under a filter other than `none` keeps the filter, as that tool writes it:
    /// `exact_match,strict-match`.
    pub metric: String,
    /// The score, in the tool's own scale (a share in [0, 1] for accuracy); finite.
    pub value: f64,
    /// Standard error of `value`, in its unit, when the tool computed one; finite, ≥ 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<f64>,
    /// Number of evaluated samples (documents) behind `value`, when known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
    pub samples: Option<u64>,
}

/// The document `benchtrail upload --quality FILE` reads in benchtrail's own format:
/// `{"quality": [{"task": "gsm8k", "metric": "exact_match", "value": 0.76}]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QualityDocument {
    /// The results.
    pub quality: Vec<QualityResult>,
}

/// What is wrong with one quality result: the field (JSON pointer within the result, e.g.
/// `/value`) and one sentence.
pub fn fault(result: &QualityResult) -> Option<(&'static str, String)> {
    if result.task.trim().is_empty() {
        return Some(("/task", "must name the evaluation task".into()));
    }
    if result.metric.trim().is_empty() {
        return Some(("/metric", "must name the metric".into()));
    }
    if !result.value.is_finite() {
        return Some((
            "/value",
            format!("must be a finite number, found {}", result.value),
        ));
    }
    if let Some(s) = result.stderr {
        if !s.is_finite() || s < 0.0 {
            return Some(("/stderr", format!("must be a finite number ≥ 0, found {s}")));
        }
    }
    if result.samples.is_some_and(|n| n > i64::MAX as u64) {
        return Some(("/samples", "must be at most 2^63 − 1".into()));
    }
    None
}

/// Every (task, metric) pair the list has, for lookups.
fn pairs(results: &[QualityResult]) -> impl Iterator<Item = (&str, &str)> {
    results.iter().map(|q| (q.task.as_str(), q.metric.as_str()))
}

/// Whether the candidate's quality results vouch for a quantization change against the
/// baseline's: the candidate has a result for every task the baseline has one for (any metric
/// of the task counts). When the baseline has none, any candidate quality result counts (the
/// candidate was evaluated; there is nothing to match it against). No candidate result never
/// counts. This drives `quantization_without_quality`
/// ([`crate::regression::confounds::confounds`]).
pub fn covers(baseline: &[QualityResult], candidate: &[QualityResult]) -> bool {
    if candidate.is_empty() {
        return false;
    }
    baseline
        .iter()
        .all(|b| candidate.iter().any(|c| c.task == b.task))
}

/// The index of the first result whose (task, metric) pair an earlier one already has.
pub fn first_duplicate(results: &[QualityResult]) -> Option<usize> {
    let all: Vec<(&str, &str)> = pairs(results).collect();
    (1..all.len()).find(|&i| all[..i].contains(&all[i]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(task: &str, metric: &str) -> QualityResult {
        QualityResult {
            task: task.into(),
            metric: metric.into(),
            value: 0.5,
            stderr: None,
            samples: None,
        }
    }

    #[test]
    fn coverage_is_per_task() {
        let base = [q("gsm8k", "exact_match"), q("mmlu", "acc")];
        assert!(!covers(&base, &[]));
        assert!(!covers(&base, &[q("gsm8k", "exact_match")]));
        assert!(covers(&base, &[q("gsm8k", "other"), q("mmlu", "acc")]));
        assert!(covers(&[], &[q("gsm8k", "exact_match")]));
        assert!(!covers(&[], &[]));
    }

    #[test]
    fn faults_name_the_field() {
        let mut r = q("t", "acc");
        assert_eq!(fault(&r), None);
        r.stderr = Some(-1.0);
        assert_eq!(fault(&r).unwrap().0, "/stderr");
        r.value = f64::NAN;
        assert_eq!(fault(&r).unwrap().0, "/value");
        assert_eq!(fault(&q(" ", "acc")).unwrap().0, "/task");
        assert_eq!(
            first_duplicate(&[q("a", "x"), q("b", "x"), q("a", "x")]),
            Some(2)
        );
        assert_eq!(first_duplicate(&[q("a", "x"), q("a", "y")]), None);
    }
}
