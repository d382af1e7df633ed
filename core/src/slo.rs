//! SLO profiles, goodput and SLO attainment.
//!
//! A profile names thresholds on per-request latencies (ms). A request is *good* under a
//! profile when EVERY threshold it sets holds with `value ≤ threshold` — vLLM's definition of
//! `--goodput` (`vllm/benchmarks/serve.py`, `calculate_metrics`; see
//! `shared/notes/benchmark-tool-formats.md` §1), which is DistServe's (Zhong et al., OSDI 2024).
//! As in vLLM: only completed requests can be good; the comparison is made in seconds,
//! `threshold_ms / 1000 >= value_s`; for goodput a completed request with at most one output
//! token has TPOT 0.
//!
//! - `request_goodput` (req/s) = good requests ÷ benchmark duration (s), as vLLM.
//! - `slo_attainment` (%) = 100 × good requests ÷ all requests SENT, failed ones included:
//!   a failed request did not meet its SLO from the user's point of view, so counting only
//!   completed requests would reward a server that fails its slow requests.

use crate::metric::{MetricValue, Stat};
use crate::result::{BenchResult, Warning};
use crate::samples::RequestSamples;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The format name of benchtrail's own result files (`adapters::native`).
const NATIVE_FORMAT: &str = "benchtrail";

/// The profile name of goodput computed by the benchmark tool itself under its own thresholds.
pub const TOOL_PROFILE: &str = "tool";

/// Thresholds of one SLO profile, in ms. At least one is set; each is a number of ms in
/// (0, 1e7]: 1e7 ms is 10 000 s, about 2.8 hours, longer than any request of a serving
/// benchmark, so a larger value is a unit slip (µs, ns), not an SLO. A threshold left out or
/// `null` is not set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SloProfile {
    /// Name, unique within a project: `[a-z0-9][a-z0-9_-]*`, at most 64; `tool` is reserved
    /// (the benchmark tool's own goodput).
    #[schema(pattern = "^[a-z0-9][a-z0-9_-]{0,63}$")]
    pub name: String,
    /// Time to first token threshold, ms, in (0, 1e7].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(exclusive_minimum = 0, maximum = 10000000)]
    pub ttft_ms: Option<f64>,
    /// Time per output token threshold, ms, in (0, 1e7].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(exclusive_minimum = 0, maximum = 10000000)]
    pub tpot_ms: Option<f64>,
    /// End-to-end latency threshold, ms, in (0, 1e7].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(exclusive_minimum = 0, maximum = 10000000)]
    pub e2el_ms: Option<f64>,
}

impl SloProfile {
    /// The default profile of every project: TTFT ≤ 2000 ms and TPOT ≤ 50 ms.
    pub fn interactive() -> SloProfile {
        SloProfile {
            name: "interactive".into(),
            ttft_ms: Some(2000.0),
            tpot_ms: Some(50.0),
            e2el_ms: None,
        }
    }

    /// The thresholds that are set, as (metric, ms).
    pub fn thresholds(&self) -> Vec<(&'static str, f64)> {
        [
            ("ttft", self.ttft_ms),
            ("tpot", self.tpot_ms),
            ("e2el", self.e2el_ms),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
    }
}

/// How good requests were counted for one result under one profile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SloOutcome {
    /// Completed requests meeting every threshold.
    pub good: u64,
    /// All requests sent (completed and failed).
    pub sent: u64,
    /// good ÷ duration, req/s.
    pub goodput: f64,
    /// 100 × good ÷ sent, %.
    pub attainment: f64,
}

/// Goodput and attainment of `samples` under `profile`; `None` when not computable: no
/// requests, no positive duration, or a column the profile needs is missing.
pub fn evaluate(samples: &RequestSamples, profile: &SloProfile) -> Option<SloOutcome> {
    let duration = samples.duration_s.filter(|d| *d > 0.0 && d.is_finite())?;
    if samples.is_empty() {
        return None;
    }
    let column = |metric: &str| match metric {
        "ttft" => samples.ttft_ms.as_ref(),
        "tpot" => samples.tpot_ms.as_ref(),
        _ => samples.e2el_ms.as_ref(),
    };
    let checks: Vec<(&str, f64, &Vec<Option<f64>>)> = profile
        .thresholds()
        .into_iter()
        .map(|(m, t)| column(m).map(|c| (m, t, c)))
        .collect::<Option<_>>()?;
    if checks.is_empty() {
        return None;
    }
    let good = (0..samples.len())
        .filter(|&i| samples.success[i])
        .filter(|&i| {
            checks.iter().all(|(metric, threshold_ms, values)| {
                // vLLM's all_tpots holds 0 for a request with at most one output token.
                let value_s = if *metric == "tpot" {
                    crate::summary::tpot_seconds(samples, i).unwrap_or(0.0)
                } else {
                    match values.get(i).copied().flatten() {
                        Some(ms) => ms / 1000.0,
                        None => return false,
                    }
                };
                threshold_ms / 1000.0 >= value_s
            })
        })
        .count() as u64;
    let sent = samples.len() as u64;
    Some(SloOutcome {
        good,
        sent,
        goodput: good as f64 / duration,
        attainment: 100.0 * good as f64 / sent as f64,
    })
}

/// `request_goodput` and `slo_attainment` values (stat `value`) of `samples` for every
/// profile under which they are computable, labelled with the profile.
pub fn slo_values(samples: &RequestSamples, profiles: &[SloProfile]) -> Vec<MetricValue> {
    let mut out = Vec::new();
    for profile in profiles {
        let Some(o) = evaluate(samples, profile) else {
            continue;
        };
        for (name, value, n) in [
            ("request_goodput", o.goodput, o.sent),
            ("slo_attainment", o.attainment, o.sent),
        ] {
            let mut m = MetricValue::new(name, Stat::Value, value, Some(n));
            m.slo_profile = Some(profile.name.clone());
            out.push(m);
        }
    }
    out
}

/// The values of `result` as benchtrail stores them: its metrics, with goodput and SLO
/// attainment under `profiles` computed from its per-request samples (they replace any
/// uploaded value of the same metric and profile: values under the project's profiles are
/// benchtrail's to compute).
pub fn stored_values(result: &BenchResult, profiles: &[SloProfile]) -> Vec<MetricValue> {
    let mut values = result.metrics.clone();
    if let Some(samples) = &result.samples {
        let computed = slo_values(samples, profiles);
        values.retain(|m| {
            !computed
                .iter()
                .any(|c| c.name == m.name && c.slo_profile == m.slo_profile)
        });
        values.extend(computed);
    }
    values
}

/// vLLM's `--goodput KEY:VALUE ...` thresholds from a recorded command line, as a profile
/// named [`TOOL_PROFILE`]. `Ok(None)` when the command has no `--goodput`; `Err` with the
/// reason when it has one that cannot be read.
pub fn parse_vllm_goodput(command: &str) -> Result<Option<SloProfile>, String> {
    let tokens: Vec<&str> = command.split_whitespace().collect();
    let mut pairs: Vec<&str> = Vec::new();
    let mut found = false;
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == "--goodput" {
            found = true;
            pairs.clear();
            i += 1;
            while i < tokens.len() && !tokens[i].starts_with("--") {
                pairs.push(tokens[i]);
                i += 1;
            }
            continue;
        }
        if let Some(pair) = tokens[i].strip_prefix("--goodput=") {
            found = true;
            pairs = vec![pair];
        }
        i += 1;
    }
    if !found {
        return Ok(None);
    }
    let mut profile = SloProfile {
        name: TOOL_PROFILE.into(),
        ttft_ms: None,
        tpot_ms: None,
        e2el_ms: None,
    };
    for pair in &pairs {
        let (key, value) = pair
            .split_once(':')
            .ok_or_else(|| format!("`{pair}` is not KEY:VALUE"))?;
        let value: f64 = value
            .parse()
            .ok()
            .filter(|v: &f64| *v > 0.0 && v.is_finite())
            .ok_or_else(|| format!("`{pair}`: the value is not a positive number of ms"))?;
        match key {
            "ttft" => profile.ttft_ms = Some(value),
            "tpot" => profile.tpot_ms = Some(value),
            "e2el" => profile.e2el_ms = Some(value),
            _ => return Err(format!("`{key}` is not ttft, tpot or e2el")),
        }
    }
    if profile.thresholds().is_empty() {
        return Err("`--goodput` has no KEY:VALUE pair".into());
    }
    Ok(Some(profile))
}

/// For a result holding the tool's own goodput (profile [`TOOL_PROFILE`]): records the
/// thresholds from `configuration.benchmark.command` in the facts as `goodput_slo`
/// (`{"ttft_ms": 60.0, ...}`), or adds a `goodput_slo_unknown` warning when they cannot be
/// read. For a result read from a tool's file with neither the tool's goodput nor samples adds
/// a `goodput_not_computable` warning, so that goodput is shown as not computable, never as 0.
pub fn annotate_tool_goodput(result: &mut BenchResult) {
    let has_tool_goodput = result
        .metrics
        .iter()
        .any(|m| m.name == "request_goodput" && m.slo_profile.as_deref() == Some(TOOL_PROFILE));
    if !has_tool_goodput {
        // Only for tool files: a result in benchtrail's own format holds what its sender chose.
        let from_tool = result
            .source
            .as_ref()
            .is_some_and(|s| s.format != NATIVE_FORMAT);
        if from_tool
            && result.samples.is_none()
            && !result.metrics.iter().any(|m| m.name == "request_goodput")
        {
            result.warnings.push(Warning {
                code: "goodput_not_computable".into(),
                message: "Goodput is not computable: the file has neither per-request samples nor the tool's own goodput.".into(),
            });
        }
        return;
    }
    let command = result.configuration.benchmark.command.as_deref();
    match command.map(parse_vllm_goodput) {
        Some(Ok(Some(p))) => {
            let mut slo = serde_json::Map::new();
            for (metric, ms) in p.thresholds() {
                slo.insert(format!("{metric}_ms"), json!(ms));
            }
            result
                .facts
                .insert("goodput_slo".into(), Value::Object(slo));
        }
        outcome => {
            let why = match outcome {
                None => "no benchmark command was recorded".to_string(),
                Some(Ok(None)) => "the recorded command has no `--goodput`".to_string(),
                Some(Err(e)) => format!("its `--goodput` cannot be read: {e}"),
                Some(Ok(Some(_))) => unreachable!(),
            };
            result.warnings.push(Warning {
                code: "goodput_slo_unknown".into(),
                message: format!(
                    "The tool's request_goodput was computed under thresholds that are not known: {why}."
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goodput_flags_are_read_from_the_command() {
        let p = parse_vllm_goodput(
            "vllm bench serve --seed 42 --goodput ttft:60 tpot:12 e2el:1800 --label x",
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (p.ttft_ms, p.tpot_ms, p.e2el_ms),
            (Some(60.0), Some(12.0), Some(1800.0))
        );
        let p = parse_vllm_goodput("vllm bench serve --goodput tpot:10.6")
            .unwrap()
            .unwrap();
        assert_eq!(p.thresholds(), vec![("tpot", 10.6)]);
        assert_eq!(parse_vllm_goodput("vllm bench serve --seed 1"), Ok(None));
        assert!(parse_vllm_goodput("vllm bench serve --goodput itl:5").is_err());
        assert!(parse_vllm_goodput("vllm bench serve --goodput ttft:-1").is_err());
        assert!(parse_vllm_goodput("vllm bench serve --goodput --seed 1").is_err());
    }

    fn samples() -> RequestSamples {
        RequestSamples {
            success: vec![true, true, true, false],
            ttft_ms: Some(vec![Some(10.0), Some(30.0), Some(10.0), None]),
            tpot_ms: Some(vec![Some(5.0), Some(5.0), None, None]),
            e2el_ms: Some(vec![Some(100.0), Some(100.0), Some(10.0), None]),
            duration_s: Some(2.0),
            ..Default::default()
        }
    }

    #[test]
    fn every_threshold_must_hold_and_failed_requests_count_as_sent() {
        let profile = SloProfile {
            name: "p".into(),
            ttft_ms: Some(20.0),
            tpot_ms: Some(5.0),
            e2el_ms: None,
        };
        // Request 0 meets both (5 ≤ 5), 1 misses ttft, 2 has no tpot (one token: 0), 3 failed.
        let o = evaluate(&samples(), &profile).unwrap();
        assert_eq!((o.good, o.sent, o.goodput, o.attainment), (2, 4, 1.0, 50.0));
    }

    #[test]
    fn missing_column_or_duration_is_not_computable() {
        let mut s = samples();
        s.e2el_ms = None;
        let profile = SloProfile {
            name: "batch".into(),
            ttft_ms: None,
            tpot_ms: None,
            e2el_ms: Some(60_000.0),
        };
        assert_eq!(evaluate(&s, &profile), None);
        let mut s = samples();
        s.duration_s = None;
        assert_eq!(evaluate(&s, &SloProfile::interactive()), None);
    }
}
