//! Pairing two runs named on purpose cell by cell when the configuration is the change (the
//! compare page and the validation report of two runs, `GET /api/v1/compare/report`).

use crate::result::BenchResult;
use serde_json::Value;

/// The baseline's results, each whose configuration (series key) the candidate does not
/// have at all re-keyed to the candidate's configuration of the same workload cell, when
/// exactly one candidate result has that cell: two runs named on purpose are compared cell by
/// cell even when the configuration is the change (an FP8 KV cache is another series key).
/// `key_fields`: the project's metadata key fields. Returns the results and how many were
/// re-keyed.
pub fn pair_by_cell(
    base: &[BenchResult],
    head: &[BenchResult],
    key_fields: &[String],
) -> (Vec<BenchResult>, usize) {
    let key = |r: &BenchResult| Value::Object(r.configuration.series_key(key_fields));
    let head_keys: Vec<Value> = head.iter().map(key).collect();
    let mut repaired = 0;
    let out = base
        .iter()
        .map(|b| {
            let mut b = b.clone();
            if head_keys.contains(&key(&b)) {
                return b;
            }
            let cell = b.cell.key();
            let same_cell: Vec<&BenchResult> =
                head.iter().filter(|h| h.cell.key() == cell).collect();
            if let [h] = same_cell.as_slice() {
                b.configuration = h.configuration.clone();
                repaired += 1;
            }
            b
        })
        .collect();
    (out, repaired)
}
