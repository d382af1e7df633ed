//! Series identity: (project, series key, cell, metric, statistic). Branch is not part of it:
//! a series is viewed on a branch.

use serde_json::{json, Map, Value};

/// The stable id of a series: the first 16 hex digits of SHA-256 over the canonical JSON array
/// `[project_slug, series_key, cell_key, metric, stat]`.
pub fn series_id(
    project_slug: &str,
    series_key: &Map<String, Value>,
    cell_key: &str,
    metric: &str,
    stat: &str,
) -> String {
    let canonical = json!([project_slug, series_key, cell_key, metric, stat]).to_string();
    crate::sha256_hex(canonical.as_bytes())[..16].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_is_stable_and_depends_on_every_part() {
        let key: Map<String, Value> = serde_json::from_str(r#"{"model.name":"m"}"#).unwrap();
        let id = series_id("demo", &key, "max_concurrency=4", "ttft", "p50");
        assert_eq!(id.len(), 16);
        assert_eq!(
            id,
            series_id("demo", &key, "max_concurrency=4", "ttft", "p50")
        );
        assert_ne!(
            id,
            series_id("demo", &key, "max_concurrency=4", "ttft", "p99")
        );
        assert_ne!(
            id,
            series_id("other", &key, "max_concurrency=4", "ttft", "p50")
        );
    }
}
