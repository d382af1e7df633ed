//! The coverage of a commit's analysis as storage knows it: its cells against the cells its
//! baseline commit stored (the rules and types are in [`benchtrail_core::report::coverage`]).

use benchtrail_core::report::coverage::{
    is_new, missing_cell, new_cell, not_measured, Coverage, HeldFinding,
};
use benchtrail_core::report::group::{CommitContext, GroupAnalysis};

/// A held finding from the alert it would have opened.
pub(super) fn held(a: &crate::storage::NewAlert) -> HeldFinding {
    use crate::storage::AlertKind;
    use benchtrail_core::regression::{FindingKind, Severity};
    HeldFinding {
        kind: match a.kind {
            AlertKind::Regression => FindingKind::Regression,
            AlertKind::Improvement => FindingKind::Improvement,
            AlertKind::Tradeoff => FindingKind::Tradeoff,
            AlertKind::ChangePoint => FindingKind::ChangePoint,
            AlertKind::Missing => FindingKind::Missing,
        },
        metric: a.metric.clone(),
        severity: a.severity.as_deref().and_then(Severity::parse),
        cell: a.cell_key.clone(),
        summary: a.summary.clone(),
    }
}

/// The commit's cells against its baseline commit's, per configuration, and its not-measured
/// series (see the module documentation). `analyzed`: the commit's groups by (series key,
/// cell key).
pub(super) async fn commit_coverage(
    store: &crate::storage::Store,
    project_id: i64,
    ctx: &CommitContext<'_>,
    analyzed: &std::collections::HashMap<(String, String), GroupAnalysis>,
) -> Result<Coverage, crate::storage::StorageError> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut cov = Coverage::default();
    // Configuration → its cells at the candidate, and the last commit any of them draws a
    // baseline from.
    let mut configs: BTreeMap<&str, (BTreeSet<&str>, Option<(usize, &str)>)> = BTreeMap::new();
    let mut keys: Vec<&(String, String)> = analyzed.keys().collect();
    keys.sort();
    for key in keys {
        let ga = &analyzed[key];
        let entry = configs.entry(key.0.as_str()).or_default();
        entry.0.insert(key.1.as_str());
        for s in &ga.input.series {
            for c in &s.history {
                let pos = ctx.graph.position(&c.commit).unwrap_or(0);
                if entry.1.is_none_or(|(p, _)| pos > p) {
                    entry.1 = Some((pos, c.commit.as_str()));
                }
            }
        }
        if is_new(&ga.input) {
            cov.new_cells.push(new_cell(&ga.input));
        }
        cov.not_measured.extend(not_measured(&ga.input));
    }
    let mut cells_of: BTreeMap<&str, Vec<(String, String)>> = BTreeMap::new();
    for (config, (cells, last)) in &configs {
        let Some((_, base)) = last else { continue };
        if !cells_of.contains_key(base) {
            let found = store
                .commit_cells(project_id, ctx.default_branch, base)
                .await?;
            cells_of.insert(base, found);
        }
        for (k, cell) in &cells_of[base] {
            if k == config && !cells.contains(cell.as_str()) {
                cov.missing_cells.push(missing_cell(k, cell, base));
            }
        }
    }
    Ok(cov)
}
