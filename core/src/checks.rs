//! Checks that apply to every result whatever tool wrote it, added as warnings after the
//! adapter has read the file: a run too short to trust, requests that never finished, and
//! the core latency metrics a serving benchmark should report but this file lacks.

use crate::metric::Stat;
use crate::result::{BenchResult, Warning};

/// Runs shorter than this (s) are dominated by ramp-up and ramp-down: few requests overlap in
/// steady state, so throughput and tail latencies are not representative.
pub const MIN_STEADY_DURATION_S: f64 = 10.0;

/// Formats that measure an online server request by request, and so should report the core
/// latency metrics.
const SERVING_FORMATS: &[&str] = &[
    "vllm-bench-serve",
    "sglang-bench-serving",
    "aiperf",
    "genai-perf",
    "guidellm",
    "llmperf",
];

/// Adds the general warnings to `result` (never twice).
pub fn annotate(result: &mut BenchResult) {
    let value = |name: &str| {
        result
            .metrics
            .iter()
            .find(|m| m.name == name && m.stat == Stat::Value)
            .map(|m| m.value)
    };
    let mut warnings = Vec::new();
    if let Some(duration) = value("duration").filter(|d| *d > 0.0 && *d < MIN_STEADY_DURATION_S) {
        warnings.push(Warning {
            code: "short_duration".into(),
            message: format!(
                "The benchmark ran {duration:.1} s, under {MIN_STEADY_DURATION_S} s: ramp-up and ramp-down dominate, so throughput and tail latencies are not representative."
            ),
        });
    }
    if let (Some(completed), Some(prompts)) = (value("completed"), result.cell.num_prompts) {
        let failed = value("failed").unwrap_or(0.0);
        if completed + failed < prompts as f64 {
            warnings.push(Warning {
                code: "incomplete_requests".into(),
                message: format!(
                    "{} of {prompts} requests neither completed nor failed (timed out or cancelled).",
                    prompts as f64 - completed - failed
                ),
            });
        }
    }
    let serving = result
        .source
        .as_ref()
        .is_some_and(|s| SERVING_FORMATS.contains(&s.format.as_str()));
    if serving && value("completed").is_none_or(|c| c > 0.0) {
        let missing: Vec<&str> = ["ttft", "e2el"]
            .into_iter()
            .filter(|name| !result.metrics.iter().any(|m| m.name == *name))
            .collect();
        if !missing.is_empty() {
            warnings.push(Warning {
                code: "missing_metrics".into(),
                message: format!(
                    "The file reports no {}: the tool writes it only with streaming, a tokenizer or the matching percentile flags.",
                    missing.join(" or ")
                ),
            });
        }
    }
    for w in warnings {
        if !result.warnings.iter().any(|have| have.code == w.code) {
            result.warnings.push(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::MetricValue;
    use crate::result::Source;

    fn result(duration: f64, completed: f64, failed: f64, prompts: u64) -> BenchResult {
        let mut r = BenchResult {
            metrics: vec![
                MetricValue::new("duration", Stat::Value, duration, None),
                MetricValue::new("completed", Stat::Value, completed, None),
                MetricValue::new("failed", Stat::Value, failed, None),
            ],
            source: Some(Source {
                format: "vllm-bench-serve".into(),
                file: 0,
                record: 0,
            }),
            ..Default::default()
        };
        r.cell.num_prompts = Some(prompts);
        r
    }

    #[test]
    fn short_incomplete_and_missing_are_warned() {
        let mut r = result(4.5, 90.0, 5.0, 100);
        annotate(&mut r);
        annotate(&mut r);
        let codes: Vec<&str> = r.warnings.iter().map(|w| w.code.as_str()).collect();
        assert_eq!(
            codes,
            ["short_duration", "incomplete_requests", "missing_metrics"]
        );
        assert_eq!(
            r.warnings[1].message,
            "5 of 100 requests neither completed nor failed (timed out or cancelled)."
        );
        assert_eq!(
            r.warnings[2].message,
            "The file reports no ttft or e2el: the tool writes it only with streaming, a tokenizer or the matching percentile flags."
        );
    }

    #[test]
    fn a_complete_long_run_with_latencies_is_quiet() {
        let mut r = result(26.0, 95.0, 5.0, 100);
        r.metrics
            .push(MetricValue::new("ttft", Stat::Mean, 30.0, Some(95)));
        r.metrics
            .push(MetricValue::new("e2el", Stat::Mean, 900.0, Some(95)));
        annotate(&mut r);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }
}
