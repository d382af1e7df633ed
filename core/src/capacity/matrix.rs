//! The validation method's standard cell matrix (`shared/notes/validation-method.md`, step 2):
//! three task types × fresh and reusable prefixes × low, typical and near-capacity load = 18
//! cells. Cells carry these labels in [`crate::cell::WorkloadCell`]'s `scenario`,
//! `prefix_mode` and `load_level` (set with `benchtrail upload --cell`), spelled as the cell
//! documents them: `short-chat`, `long-doc-qa`, `long-output`; `fresh`, `reusable`; `low`,
//! `typical`, `near-capacity`.

use crate::cell::PrefixMode;
use crate::result::BenchResult;
use serde::{Deserialize, Serialize};

/// The task types of the matrix (`scenario`).
pub const SCENARIOS: [&str; 3] = ["short-chat", "long-doc-qa", "long-output"];
/// The prefix modes of the matrix (`prefix_mode`).
pub const PREFIX_MODES: [PrefixMode; 2] = [PrefixMode::Fresh, PrefixMode::Reusable];
/// The load levels of the matrix (`load_level`).
pub const LOAD_LEVELS: [&str; 3] = ["low", "typical", "near-capacity"];

/// One cell of the standard matrix.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MatrixCell {
    /// One of [`SCENARIOS`].
    pub scenario: String,
    /// One of [`PREFIX_MODES`].
    pub prefix_mode: PrefixMode,
    /// One of [`LOAD_LEVELS`].
    pub load_level: String,
}

/// The 18 cells, scenario-major (then prefix mode, then load level), in the constants' order.
pub fn standard_cells() -> Vec<MatrixCell> {
    let mut out = Vec::with_capacity(18);
    for s in SCENARIOS {
        for p in PREFIX_MODES {
            for l in LOAD_LEVELS {
                out.push(MatrixCell {
                    scenario: s.into(),
                    prefix_mode: p,
                    load_level: l.into(),
                });
            }
        }
    }
    out
}

/// The standard cells none of `results` measured, in [`standard_cells`]' order; `None` when
/// no result carries all three matrix labels (`scenario`, `prefix_mode` and `load_level`, as
/// the run's matrix page lays the standard grid out): those results do not follow the
/// matrix, and nothing is missing from it. One label alone is not the matrix: adapters fill
/// `prefix_mode` from the tool's dataset (`random` is fresh) for runs that never meant to.
pub fn missing_cells(results: &[BenchResult]) -> Option<Vec<MatrixCell>> {
    let labelled = results.iter().any(|r| {
        r.cell.scenario.is_some() && r.cell.prefix_mode.is_some() && r.cell.load_level.is_some()
    });
    if !labelled {
        return None;
    }
    let measured = |m: &MatrixCell| {
        results.iter().any(|r| {
            r.cell.scenario.as_deref() == Some(m.scenario.as_str())
                && r.cell.prefix_mode == Some(m.prefix_mode)
                && r.cell.load_level.as_deref() == Some(m.load_level.as_str())
        })
    };
    Some(
        standard_cells()
            .into_iter()
            .filter(|m| !measured(m))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labelled(s: &str, p: PrefixMode, l: &str) -> BenchResult {
        let mut r = BenchResult::default();
        r.cell.scenario = Some(s.into());
        r.cell.prefix_mode = Some(p);
        r.cell.load_level = Some(l.into());
        r
    }

    #[test]
    fn eighteen_cells_and_what_is_missing_from_them() {
        let all = standard_cells();
        assert_eq!(all.len(), 18);
        assert_eq!(missing_cells(&[BenchResult::default()]), None);
        // A prefix mode alone (an adapter's reading of `--dataset-name random`) is no matrix.
        let mut fresh_only = BenchResult::default();
        fresh_only.cell.prefix_mode = Some(PrefixMode::Fresh);
        assert_eq!(missing_cells(&[fresh_only]), None);
        let full: Vec<BenchResult> = all
            .iter()
            .map(|m| labelled(&m.scenario, m.prefix_mode, &m.load_level))
            .collect();
        assert_eq!(missing_cells(&full), Some(vec![]));
        // Short chat only, fresh prefixes: 15 missing; a user label counts for nothing.
        let some: Vec<BenchResult> = LOAD_LEVELS
            .iter()
            .map(|l| labelled("short-chat", PrefixMode::Fresh, l))
            .chain([labelled("my-task", PrefixMode::Fresh, "low")])
            .collect();
        let missing = missing_cells(&some).unwrap();
        assert_eq!(missing.len(), 15);
        assert_eq!(
            missing[0],
            MatrixCell {
                scenario: "short-chat".into(),
                prefix_mode: PrefixMode::Reusable,
                load_level: "low".into()
            }
        );
    }
}
