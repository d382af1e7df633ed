//! Project settings: one versioned JSON document per project.
//!
//! ```json
//! {"slo_profiles": [{"name": "interactive", "ttft_ms": 2000, "tpot_ms": 50},
//!                   {"name": "batch", "e2el_ms": 60000}]}
//! ```
//! Each top-level key is one concern: `slo_profiles`, and `detection` (the regression engine's
//! tunables and the verdict rules, [`DetectionSettings`]; optional, defaults when absent).
//! Later work adds its own key beside them, so nothing is ever renamed and a document written
//! today stays valid. A key not known yet is rejected rather than silently dropped.

use crate::regression;
use crate::slo::{SloProfile, TOOL_PROFILE};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The settings of a project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectSettings {
    /// SLO profiles under which goodput and SLO attainment are computed from per-request
    /// samples. Names are unique.
    pub slo_profiles: Vec<SloProfile>,
    /// Regression detection and verdict rules; the defaults when absent.
    #[serde(default)]
    pub detection: DetectionSettings,
}

impl Default for ProjectSettings {
    /// What every project starts with: the `interactive` profile (TTFT ≤ 2000 ms, TPOT ≤ 50 ms)
    /// and the default detection settings.
    fn default() -> Self {
        ProjectSettings {
            slo_profiles: vec![SloProfile::interactive()],
            detection: DetectionSettings::default(),
        }
    }
}

/// Metrics whose significant regression fails a verdict by default: TTFT, TPOT, ITL, E2E
/// latency, request and output throughput, and goodput (request goodput and SLO attainment).
pub const DEFAULT_FAIL_METRICS: &[&str] = &[
    "ttft",
    "tpot",
    "itl",
    "e2el",
    "request_throughput",
    "output_throughput",
    "request_goodput",
    "slo_attainment",
];

/// The `detection` section: the engine's tunables and what fails a run's verdict.
///
/// ```json
/// {"detection": {"engine": {"alpha": 0.001, "min_effect_pct": 2},
///                "fail_metrics": ["ttft", "output_throughput"], "fail_severity": "warn",
///                "tradeoff_fails": true, "max_error_rate_pct": 5, "min_completed_pct": 90}}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DetectionSettings {
    /// The engine's settings ([`regression::Settings`], versioned by its `version`); missing
    /// fields take the engine's defaults.
    #[schema(value_type = Object)]
    pub engine: regression::Settings,
    /// Vocabulary metrics whose significant regression fails the verdict (others warn).
    /// Default [`DEFAULT_FAIL_METRICS`].
    pub fail_metrics: Vec<String>,
    /// Lowest severity of such a regression that fails: `warn` (every significant regression,
    /// the default) or `fail` (only those of at least `engine.fail_effect_pct`).
    pub fail_severity: String,
    /// A trade-off (throughput up, TTFT or goodput down) fails the verdict (subject to
    /// `fail_severity`, like a regression). Default true.
    pub tradeoff_fails: bool,
    /// A run whose result has more than this percent of failed requests
    /// (`failed / (completed + failed)`) never enters a baseline. Default 5 %.
    pub max_error_rate_pct: f64,
    /// A run whose result completed fewer than this percent of the cell's `num_prompts`
    /// never enters a baseline. Default 90 %.
    pub min_completed_pct: f64,
    /// A candidate run that is invalid by those two rules (not one a person excluded) fails
    /// the verdict: a commit whose benchmark mostly errored must not pass CI as "not tested".
    /// Default true.
    pub invalid_run_fails: bool,
}

impl Default for DetectionSettings {
    fn default() -> Self {
        DetectionSettings {
            engine: regression::Settings::default(),
            fail_metrics: DEFAULT_FAIL_METRICS.iter().map(|m| m.to_string()).collect(),
            fail_severity: "warn".into(),
            tradeoff_fails: true,
            max_error_rate_pct: 5.0,
            min_completed_pct: 90.0,
            invalid_run_fails: true,
        }
    }
}

impl DetectionSettings {
    /// Reads and checks the `detection` section (`at` is its JSON pointer).
    pub fn from_json(at: &str, v: &Value) -> Result<DetectionSettings, SettingsError> {
        let d: DetectionSettings =
            serde_json::from_value(v.clone()).map_err(|e| fault(at, e.to_string()))?;
        for (i, m) in d.fail_metrics.iter().enumerate() {
            if crate::metric::lookup(m).is_none() {
                return Err(fault(
                    format!("{at}/fail_metrics/{i}"),
                    format!("`{m}` is not a metric of the vocabulary"),
                ));
            }
        }
        if !matches!(d.fail_severity.as_str(), "warn" | "fail") {
            return Err(fault(
                format!("{at}/fail_severity"),
                "expected `warn` or `fail`",
            ));
        }
        let e = &d.engine;
        let checks: [(&str, bool, &str); 6] = [
            (
                "engine/alpha",
                e.alpha > 0.0 && e.alpha < 1.0,
                "a level in (0, 1)",
            ),
            (
                "engine/confidence_level",
                e.confidence_level > 0.0 && e.confidence_level < 1.0,
                "a level in (0, 1)",
            ),
            (
                "engine/min_effect_pct",
                e.min_effect_pct >= 0.0,
                "a percentage ≥ 0",
            ),
            (
                "engine/baseline_window",
                e.baseline_window >= 1,
                "at least 1",
            ),
            (
                "max_error_rate_pct",
                (0.0..=100.0).contains(&d.max_error_rate_pct),
                "a percentage in [0, 100]",
            ),
            (
                "min_completed_pct",
                (0.0..=100.0).contains(&d.min_completed_pct),
                "a percentage in [0, 100]",
            ),
        ];
        for (path, ok, what) in checks {
            if !ok {
                return Err(fault(format!("{at}/{path}"), format!("expected {what}")));
            }
        }
        Ok(d)
    }

    /// Whether a result with these counts is a failed or partial run that must not enter a
    /// baseline, and why.
    pub fn invalid_run(
        &self,
        completed: Option<f64>,
        failed: Option<f64>,
        num_prompts: Option<f64>,
    ) -> Option<String> {
        let (c, f) = (completed.unwrap_or(0.0), failed.unwrap_or(0.0));
        if completed.is_some() && c + f > 0.0 && 100.0 * f / (c + f) > self.max_error_rate_pct {
            return Some(format!(
                "{:.1} % of requests failed (more than {} %)",
                100.0 * f / (c + f),
                self.max_error_rate_pct
            ));
        }
        match (completed, num_prompts) {
            (Some(c), Some(n)) if n > 0.0 && 100.0 * c / n < self.min_completed_pct => {
                Some(format!(
                    "{c} of {n} prompts completed (fewer than {} %)",
                    self.min_completed_pct
                ))
            }
            _ => None,
        }
    }
}

/// A fault in a settings document: a JSON pointer into it and one sentence.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{pointer}: {message}")]
pub struct SettingsError {
    /// JSON pointer, e.g. `/slo_profiles/1/ttft_ms`.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

fn fault(pointer: impl Into<String>, message: impl Into<String>) -> SettingsError {
    SettingsError {
        pointer: pointer.into(),
        message: message.into(),
    }
}

/// Top-level keys of the document that are read-only on output and ignored on input.
pub const READ_ONLY_KEYS: &[&str] = &["version", "updated_at"];

impl ProjectSettings {
    /// Reads and checks a settings document, naming the first fault with a pointer: unknown
    /// keys, a missing or non-list `slo_profiles`, a profile without a name or without any
    /// threshold, an unknown threshold key, a threshold that is not a positive finite number
    /// of ms, a duplicate or reserved (`tool`) or malformed name. `version` and `updated_at`
    /// (as GET returns them) are ignored.
    pub fn from_json(doc: &Value) -> Result<ProjectSettings, SettingsError> {
        let obj = doc
            .as_object()
            .ok_or_else(|| fault("", "settings are a JSON object"))?;
        for key in obj.keys() {
            if !matches!(key.as_str(), "slo_profiles" | "detection")
                && !READ_ONLY_KEYS.contains(&key.as_str())
            {
                return Err(fault(
                    format!("/{}", escape(key)),
                    format!("unknown setting `{key}`: expected slo_profiles or detection"),
                ));
            }
        }
        let list = obj
            .get("slo_profiles")
            .ok_or_else(|| fault("/slo_profiles", "missing"))?
            .as_array()
            .ok_or_else(|| fault("/slo_profiles", "expected a list of profiles"))?;
        let mut profiles: Vec<SloProfile> = Vec::with_capacity(list.len());
        for (i, p) in list.iter().enumerate() {
            let at = format!("/slo_profiles/{i}");
            let profile = read_profile(&at, p)?;
            if profiles.iter().any(|q| q.name == profile.name) {
                return Err(fault(
                    format!("{at}/name"),
                    format!("duplicate profile name `{}`", profile.name),
                ));
            }
            profiles.push(profile);
        }
        let detection = match obj.get("detection") {
            None | Some(Value::Null) => DetectionSettings::default(),
            Some(d) => DetectionSettings::from_json("/detection", d)?,
        };
        Ok(ProjectSettings {
            slo_profiles: profiles,
            detection,
        })
    }
}

fn read_profile(at: &str, p: &Value) -> Result<SloProfile, SettingsError> {
    let obj = p
        .as_object()
        .ok_or_else(|| fault(at, "expected a profile object"))?;
    let mut profile = SloProfile {
        name: String::new(),
        ttft_ms: None,
        tpot_ms: None,
        e2el_ms: None,
    };
    let name = obj
        .get("name")
        .ok_or_else(|| fault(format!("{at}/name"), "missing"))?
        .as_str()
        .ok_or_else(|| fault(format!("{at}/name"), "expected a string"))?;
    if !valid_name(name) {
        return Err(fault(
            format!("{at}/name"),
            "a profile name is 1–64 of a-z, 0-9, `-`, `_`, starting with a letter or digit",
        ));
    }
    if name == TOOL_PROFILE {
        return Err(fault(
            format!("{at}/name"),
            "`tool` is reserved for the benchmark tool's own goodput",
        ));
    }
    profile.name = name.to_string();
    for (key, value) in obj {
        let slot = match key.as_str() {
            "name" => continue,
            "ttft_ms" => &mut profile.ttft_ms,
            "tpot_ms" => &mut profile.tpot_ms,
            "e2el_ms" => &mut profile.e2el_ms,
            _ => {
                return Err(fault(
                    format!("{at}/{}", escape(key)),
                    format!("unknown threshold `{key}`: expected ttft_ms, tpot_ms or e2el_ms"),
                ))
            }
        };
        match value.as_f64() {
            Some(v) if v > 0.0 && v.is_finite() => *slot = Some(v),
            _ => {
                return Err(fault(
                    format!("{at}/{key}"),
                    format!("a threshold is a positive number of ms, found {value}"),
                ))
            }
        }
    }
    if profile.thresholds().is_empty() {
        return Err(fault(
            at,
            "a profile needs at least one of ttft_ms, tpot_ms, e2el_ms",
        ));
    }
    Ok(profile)
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(doc: Value) -> (String, String) {
        let e = ProjectSettings::from_json(&doc).unwrap_err();
        (e.pointer, e.message)
    }

    #[test]
    fn reads_profiles_and_ignores_read_only_keys() {
        let s = ProjectSettings::from_json(&json!({"version": 3, "updated_at": "x",
            "slo_profiles": [{"name": "interactive", "ttft_ms": 2000, "tpot_ms": 50},
                             {"name": "batch", "e2el_ms": 60000}]}))
        .unwrap();
        assert_eq!(s.slo_profiles[0], SloProfile::interactive());
        assert_eq!(s.slo_profiles[1].e2el_ms, Some(60000.0));
        let doc = serde_json::to_value(ProjectSettings::default()).unwrap();
        assert_eq!(
            doc["slo_profiles"],
            json!([{"name": "interactive", "ttft_ms": 2000.0, "tpot_ms": 50.0}])
        );
        assert_eq!(doc["detection"]["tradeoff_fails"], true);
        assert_eq!(
            ProjectSettings::from_json(&doc).unwrap(),
            ProjectSettings::default()
        );
    }

    #[test]
    fn faults_are_located() {
        let p = |v: Value| json!({"slo_profiles": [{"name": "a", "ttft_ms": 1}, v]});
        assert_eq!(
            err(p(json!({"name": "b", "itl_ms": 5}))).0,
            "/slo_profiles/1/itl_ms"
        );
        assert_eq!(
            err(p(json!({"name": "b", "ttft_ms": 0}))).0,
            "/slo_profiles/1/ttft_ms"
        );
        assert_eq!(
            err(p(json!({"name": "b", "ttft_ms": "5"}))).0,
            "/slo_profiles/1/ttft_ms"
        );
        assert_eq!(
            err(p(json!({"name": "a", "ttft_ms": 5}))).0,
            "/slo_profiles/1/name"
        );
        assert_eq!(err(p(json!({"name": "b"}))).0, "/slo_profiles/1");
        assert_eq!(
            err(p(json!({"name": "tool", "ttft_ms": 5}))).0,
            "/slo_profiles/1/name"
        );
        assert_eq!(err(p(json!({"ttft_ms": 5}))).0, "/slo_profiles/1/name");
        assert_eq!(err(json!({"slo_profiles": [], "other": {}})).0, "/other");
        assert_eq!(
            err(json!({"slo_profiles": [], "detection": {"nope": 1}})).0,
            "/detection"
        );
        assert_eq!(
            err(json!({"slo_profiles": [], "detection": {"fail_metrics": ["ttft", "x"]}})).0,
            "/detection/fail_metrics/1"
        );
        assert_eq!(
            err(json!({"slo_profiles": [], "detection": {"engine": {"alpha": 2}}})).0,
            "/detection/engine/alpha"
        );
        let s = ProjectSettings::from_json(
            &json!({"slo_profiles": [], "detection": {"engine": {"alpha": 0.01}}}),
        )
        .unwrap();
        assert_eq!(s.detection.engine.alpha, 0.01);
        assert_eq!(s.detection.engine.min_baseline_commits, 3);
        assert_eq!(err(json!({})).0, "/slo_profiles");
    }
}
