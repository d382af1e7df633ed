//! Project settings: one versioned JSON document per project.
//!
//! ```json
//! {"slo_profiles": [{"name": "interactive", "ttft_ms": 2000, "tpot_ms": 50},
//!                   {"name": "batch", "e2el_ms": 60000}]}
//! ```
//! Each top-level key is one concern: `slo_profiles` now; later work adds its own key beside it
//! (e.g. `detection` for the regression engine), so nothing is ever renamed and a document
//! written today stays valid. A key not known yet is rejected rather than silently dropped.

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
}

impl Default for ProjectSettings {
    /// What every project starts with: the `interactive` profile (TTFT ≤ 2000 ms, TPOT ≤ 50 ms).
    fn default() -> Self {
        ProjectSettings {
            slo_profiles: vec![SloProfile::interactive()],
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
            if key != "slo_profiles" && !READ_ONLY_KEYS.contains(&key.as_str()) {
                return Err(fault(
                    format!("/{}", escape(key)),
                    format!("unknown setting `{key}`: expected slo_profiles"),
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
        Ok(ProjectSettings {
            slo_profiles: profiles,
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
        assert_eq!(
            serde_json::to_value(ProjectSettings::default()).unwrap(),
            json!({"slo_profiles": [{"name": "interactive", "ttft_ms": 2000.0, "tpot_ms": 50.0}]})
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
        assert_eq!(
            err(json!({"slo_profiles": [], "detection": {}})).0,
            "/detection"
        );
        assert_eq!(err(json!({})).0, "/slo_profiles");
    }
}
