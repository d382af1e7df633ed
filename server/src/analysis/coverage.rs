//! The coverage of a commit's analysis as storage knows it: its cells against the cells its
//! baseline commit stored (the rules and types are in [`benchtrail_core::report::coverage`]).

use benchtrail_core::report::coverage::{
    is_new, missing_cell, new_cell, not_measured, Coverage, HeldFinding,
};
use benchtrail_core::report::group::{CommitContext, GroupAnalysis};

/// A held finding from the alert it would have opened.
pub(super) fn held(a: &crate::storage::NewAlert) -> HeldFinding {
    use benchtrail_core::regression::Severity;
    HeldFinding {
        kind: a.kind.into(),
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
    let mut cells_of: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (config, (cells, last)) in &configs {
        // A configuration whose every cell is new has no baseline commit among its groups'
        // histories: its nearest ancestor on the default branch that measured it is (else a
        // candidate that swapped all its cells would pass as "all new").
        let base = match last {
            Some((_, b)) => b.to_string(),
            None => match nearest_measuring(store, project_id, ctx, config).await? {
                Some(b) => b,
                None => continue,
            },
        };
        if !cells_of.contains_key(&base) {
            let found = store
                .commit_cells(project_id, ctx.default_branch, &base)
                .await?;
            cells_of.insert(base.clone(), found);
        }
        for (k, cell) in &cells_of[&base] {
            if k == config && !cells.contains(cell.as_str()) {
                cov.missing_cells.push(missing_cell(k, cell, &base));
            }
        }
    }
    Ok(cov)
}

/// How many ancestors [`nearest_measuring`] looks at, newest first: enough for any real gap,
/// bounded so one upload never reads a whole history.
const NEAREST_SCAN: usize = 50;

/// The nearest default-branch ancestor of the candidate (for a pull request: of its merge
/// base, itself included) with a result of configuration `config` (series key JSON).
async fn nearest_measuring(
    store: &crate::storage::Store,
    project_id: i64,
    ctx: &CommitContext<'_>,
    config: &str,
) -> Result<Option<String>, crate::storage::StorageError> {
    let anchor = match ctx.merge_base {
        Some(mb) if ctx.branch != ctx.default_branch && ctx.graph.position(mb).is_some() => mb,
        _ => ctx.commit,
    };
    let mut ancestors = ctx.graph.possible_ancestry(anchor);
    if anchor != ctx.commit {
        ancestors.insert(anchor);
    }
    let newest: Vec<&str> = ancestors.newest_first().take(NEAREST_SCAN).collect();
    for sha in newest {
        let cells = store
            .commit_cells(project_id, ctx.default_branch, sha)
            .await?;
        if cells.iter().any(|(k, _)| k == config) {
            return Ok(Some(sha.to_string()));
        }
    }
    Ok(None)
}
