//! Helpers shared by the tests: reading a repository file, looking a metric up, and a stored
//! analysis built around engine reports.
#![allow(dead_code)]

use benchtrail_core::{BenchResult, Stat};

/// The text of a file of the repository (`testdata/...`, `examples/...`).
pub fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Value and sample count of statistic `stat` of metric `name` in `r`; panics when absent.
pub fn value(r: &BenchResult, name: &str, stat: &str) -> (f64, Option<u64>) {
    let stat: Stat = stat.parse().unwrap();
    let m = r
        .metrics
        .iter()
        .find(|m| m.name == name && m.stat == stat)
        .unwrap_or_else(|| panic!("no {name} {stat}"));
    (m.value, m.n)
}

/// Group `cell` of a stored analysis holding the engine's `report` (no invalid runs, effect-only
/// or continuing findings).
pub fn cell_analysis(
    cell: &str,
    report: benchtrail_core::regression::GroupReport,
) -> benchtrail_core::report::CellAnalysis {
    benchtrail_core::report::CellAnalysis {
        series_key: serde_json::json!({}),
        cell: cell.to_string(),
        baseline_rule: String::new(),
        pinned_baseline: None,
        history_commits: vec![],
        invalid_runs: vec![],
        report,
        effect_only: vec![],
        continuing: vec![],
    }
}

/// The stored analysis of a run (nil id) at commit `c…c` on `main`, settings version 1, of
/// `groups`, covering nothing more.
pub fn main_analysis(
    groups: Vec<benchtrail_core::report::CellAnalysis>,
) -> benchtrail_core::report::RunAnalysis {
    benchtrail_core::report::RunAnalysis {
        schema: benchtrail_core::report::ANALYSIS_SCHEMA,
        run_id: uuid::Uuid::nil(),
        commit: "c".repeat(40),
        branch: "main".into(),
        default_branch: "main".into(),
        merge_base: None,
        settings_version: 1,
        groups,
        coverage: Default::default(),
    }
}
