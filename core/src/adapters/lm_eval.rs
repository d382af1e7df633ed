//! lm-evaluation-harness (`lm_eval --output_path DIR`, v0.4) results JSON, and benchtrail's own
//! quality document, read into [`QualityResult`]s (`benchtrail upload --quality FILE`).
//!
//! lm-eval writes `results_<date>.json` with a top-level `results` object: per task (and per
//! group, e.g. `mmlu` beside its subtasks) its `alias` and one entry per metric and filter,
//! keyed `"<metric>,<filter>"` (`"acc,none": 0.7112`), with the standard error under
//! `"<metric>_stderr,<filter>"` (a number, or `"N/A"` when none was computed). `n-samples`
//! gives per task `{"original": N, "effective": M}`; `effective` (after `--limit`) is the
//! count behind the value. Groups have no `n-samples` entry. Here:
//! * the metric is `<metric>` for the filter `none`, else `<metric>,<filter>` as lm-eval writes
//!   it (`exact_match,strict-match`, `exact_match,flexible-extract`);
//! * a key without a comma (lm-eval before 0.4) is a metric with no filter;
//! * non-numeric entries other than the stderr (`alias`, `sample_len`, ...) are skipped;
//! * results are sorted by task, then metric.
//!
//! Source: lm-evaluation-harness `lm_eval/evaluator.py` (`simple_evaluate`'s result
//! dictionary) and `lm_eval/loggers/evaluation_tracker.py` (`save_results_aggregated`).

use crate::quality::{QualityDocument, QualityResult};
use serde_json::Value;

/// Why a quality file could not be read, in one sentence naming the field (a JSON pointer
/// into the file).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{pointer}: {message}")]
pub struct QualityFileError {
    /// JSON pointer into the file (`/results/gsm8k/acc,none`); empty for the whole file.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

fn err(pointer: impl Into<String>, message: impl Into<String>) -> QualityFileError {
    QualityFileError {
        pointer: pointer.into(),
        message: message.into(),
    }
}

/// Reads a quality file: benchtrail's `{"quality": [...]}` (see [`QualityDocument`]) or
/// lm-evaluation-harness's results JSON (an object with a `results` object), told apart by
/// their top-level key.
///
/// # Errors
/// Not JSON, neither format, or a field of the wrong type.
pub fn read_quality_file(text: &str) -> Result<Vec<QualityResult>, QualityFileError> {
    let value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .map_err(|e| err("", format!("is not JSON: {e}")))?;
    if value.get("quality").is_some() {
        let doc: QualityDocument = serde_json::from_value(value).map_err(|e| {
            err(
                "/quality",
                format!("is not benchtrail's quality document: {e}"),
            )
        })?;
        return Ok(doc.quality);
    }
    if value.get("results").is_some_and(Value::is_object) {
        return parse_lm_eval(&value);
    }
    Err(err(
        "",
        "is neither benchtrail's quality document (a `quality` array) nor lm-evaluation-harness's \
         results JSON (a `results` object)",
    ))
}

/// The JSON pointer segment of a key (RFC 6901).
fn seg(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Reads lm-evaluation-harness's results JSON (see the module documentation).
///
/// # Errors
/// A task's entry that is not an object, or a stderr that is neither a number nor `"N/A"`.
pub fn parse_lm_eval(value: &Value) -> Result<Vec<QualityResult>, QualityFileError> {
    let results = value
        .get("results")
        .and_then(Value::as_object)
        .ok_or_else(|| err("/results", "must be an object of tasks"))?;
    let n_samples = value.get("n-samples").and_then(Value::as_object);
    let mut out = Vec::new();
    for (task, entry) in results {
        let fields = entry
            .as_object()
            .ok_or_else(|| err(format!("/results/{}", seg(task)), "must be an object"))?;
        let samples = n_samples
            .and_then(|n| n.get(task))
            .and_then(|n| n.get("effective").or_else(|| n.get("original")))
            .and_then(Value::as_u64);
        for (key, v) in fields {
            let (name, filter) = key.split_once(',').unwrap_or((key.as_str(), "none"));
            if name.ends_with("_stderr") {
                continue;
            }
            let Some(value) = v.as_f64() else { continue };
            let stderr_key = if key.contains(',') {
                format!("{name}_stderr,{filter}")
            } else {
                format!("{name}_stderr")
            };
            let stderr = match fields.get(&stderr_key) {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) if s == "N/A" => None,
                Some(s) => Some(s.as_f64().ok_or_else(|| {
                    err(
                        format!("/results/{}/{}", seg(task), seg(&stderr_key)),
                        format!("must be a number or \"N/A\", found {s}"),
                    )
                })?),
            };
            out.push(QualityResult {
                task: task.clone(),
                metric: if filter == "none" {
                    name.to_string()
                } else {
                    format!("{name},{filter}")
                },
                value,
                stderr,
                samples,
            });
        }
    }
    out.sort_by(|a, b| (&a.task, &a.metric).cmp(&(&b.task, &b.metric)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str =
        include_str!("../../../testdata/lm-eval/results_2026-11-30T10-12-44.json");

    fn q(
        task: &str,
        metric: &str,
        value: f64,
        stderr: Option<f64>,
        samples: Option<u64>,
    ) -> QualityResult {
        QualityResult {
            task: task.into(),
            metric: metric.into(),
            value,
            stderr,
            samples,
        }
    }

    #[test]
    fn lm_eval_results_are_read_exactly() {
        let got = read_quality_file(FIXTURE).unwrap();
        assert_eq!(
            got,
            vec![
                q(
                    "arc_challenge",
                    "acc",
                    0.5324232081911263,
                    Some(0.014578995859605814),
                    Some(1172)
                ),
                q(
                    "arc_challenge",
                    "acc_norm",
                    0.5656996587030717,
                    Some(0.014487986197186046),
                    Some(1172)
                ),
                q(
                    "gsm8k",
                    "exact_match,flexible-extract",
                    0.7626990144048522,
                    Some(0.011718208478399936),
                    Some(1319)
                ),
                q(
                    "gsm8k",
                    "exact_match,strict-match",
                    0.7543593631539045,
                    Some(0.011857183603902226),
                    Some(1319)
                ),
                q(
                    "mmlu",
                    "acc",
                    0.6812847172767412,
                    Some(0.003721564431637312),
                    None
                ),
                q(
                    "mmlu_abstract_algebra",
                    "acc",
                    0.35,
                    Some(0.047937248544110196),
                    Some(100)
                ),
                q("truthfulqa_gen", "bleu_max", 27.18034102, None, Some(817)),
            ]
        );
    }

    #[test]
    fn benchtrail_document_and_faults() {
        let got = read_quality_file(
            r#"{"quality": [{"task": "gsm8k", "metric": "exact_match", "value": 0.76, "stderr": 0.01, "samples": 1319}]}"#,
        )
        .unwrap();
        assert_eq!(
            got,
            vec![q("gsm8k", "exact_match", 0.76, Some(0.01), Some(1319))]
        );
        assert_eq!(
            read_quality_file(r#"{"quality": [{"task": "t", "value": 1}]}"#)
                .unwrap_err()
                .pointer,
            "/quality"
        );
        assert_eq!(read_quality_file("{}").unwrap_err().pointer, "");
        assert_eq!(read_quality_file("not json").unwrap_err().pointer, "");
        assert_eq!(
            read_quality_file(r#"{"results": {"a/b": {"acc,none": 0.5, "acc_stderr,none": [1]}}}"#)
                .unwrap_err()
                .pointer,
            "/results/a~1b/acc_stderr,none"
        );
        assert_eq!(
            read_quality_file(r#"{"results": {"t": 3}}"#)
                .unwrap_err()
                .pointer,
            "/results/t"
        );
        // lm-eval before 0.4: no filter in the key.
        assert_eq!(
            read_quality_file(r#"{"results": {"piqa": {"acc": 0.78, "acc_stderr": 0.0097}}}"#)
                .unwrap(),
            vec![q("piqa", "acc", 0.78, Some(0.0097), None)]
        );
    }
}
