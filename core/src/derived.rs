//! What benchtrail derives from a result after it is read and the upload's configuration is
//! applied, the same in `benchtrail upload --dry-run` and on the server: confidence intervals
//! from per-request samples ([`crate::bootstrap`]) and the thresholds of the tool's own goodput
//! ([`crate::slo::annotate_tool_goodput`]). Goodput under the project's SLO profiles depends on
//! project settings and is computed by the server at ingest.

use crate::result::BenchResult;

/// Adds intervals to the p50/p99 values of `ttft`, `tpot`, `itl`, `e2el` that the result
/// holds and that have no interval yet, and annotates the tool's goodput.
pub fn derive(result: &mut BenchResult) {
    if let Some(samples) = &result.samples {
        for (metric, stat, ci) in crate::bootstrap::intervals(samples) {
            if let Some(m) = result.metrics.iter_mut().find(|m| {
                m.name == metric && m.stat == stat && m.slo_profile.is_none() && m.ci.is_none()
            }) {
                m.ci = Some(ci);
            }
        }
    }
    crate::slo::annotate_tool_goodput(result);
}
