//! Series identity: (project, series key, cell, metric, statistic). Branch is not part of it:
//! a series is viewed on a branch.

use serde_json::{json, Map, Value};

/// The SLO part of a value's series identity: its profile, and for the tool's own goodput
/// ([`crate::slo::TOOL_PROFILE`]) also the tool's thresholds when they are known
/// (`tool:{"e2el_ms":1800.0,...}`, `tool_slo` being the result's `facts.goodput_slo` as
/// canonical JSON), because goodput under other thresholds is another quantity.
pub fn profile_identity(slo_profile: Option<&str>, tool_slo: Option<&str>) -> Option<String> {
    match (slo_profile, tool_slo) {
        (Some(crate::slo::TOOL_PROFILE), Some(thresholds)) => {
            Some(format!("{}:{thresholds}", crate::slo::TOOL_PROFILE))
        }
        (profile, _) => profile.map(str::to_string),
    }
}

/// The stable id of a series: the first 16 hex digits of SHA-256 over the canonical JSON array
/// `[project_slug, series_key, cell_key, metric, stat]`, with the SLO profile appended as a
/// sixth element only when there is one (goodput under other thresholds is another series),
/// so the ids of every series without a profile are unchanged.
pub fn series_id(
    project_slug: &str,
    series_key: &Map<String, Value>,
    cell_key: &str,
    metric: &str,
    stat: &str,
    slo_profile: Option<&str>,
) -> String {
    let mut parts = vec![
        json!(project_slug),
        json!(series_key),
        json!(cell_key),
        json!(metric),
        json!(stat),
    ];
    if let Some(profile) = slo_profile {
        parts.push(json!(profile));
    }
    let canonical = Value::Array(parts).to_string();
    crate::sha256_hex(canonical.as_bytes())[..16].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_is_stable_and_depends_on_every_part() {
        let key: Map<String, Value> = serde_json::from_str(r#"{"model.name":"m"}"#).unwrap();
        let id = series_id("demo", &key, "max_concurrency=4", "ttft", "p50", None);
        assert_eq!(id.len(), 16);
        // Pinned: ids stored before SLO profiles existed must not change.
        let canonical = r#"["demo",{"model.name":"m"},"max_concurrency=4","ttft","p50"]"#;
        assert_eq!(id, crate::sha256_hex(canonical.as_bytes())[..16]);
        assert_ne!(
            id,
            series_id("demo", &key, "max_concurrency=4", "ttft", "p99", None)
        );
        assert_ne!(
            id,
            series_id("other", &key, "max_concurrency=4", "ttft", "p50", None)
        );
        let goodput = |p| series_id("demo", &key, "c", "request_goodput", "value", p);
        assert_ne!(goodput(None), goodput(Some("interactive")));
        assert_ne!(goodput(Some("tool")), goodput(Some("interactive")));
    }
}
