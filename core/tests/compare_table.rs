//! The compare table read off an analysis: on the FP8 KV-cache case of the realistic generator
//! (10 single-run baseline commits at run-to-run CV 1.2 %, then the change), every row of a
//! tested series carries exactly its test outcome, the trade-off's sides are `tradeoff` rows,
//! and two single runs are described, never tested.

use benchtrail_core::regression::realistic::{commit_runs, HistorySpec};
use benchtrail_core::regression::{SeriesState, Test, Untested};
use benchtrail_core::report::compare::{compare, CompareCommit};
use benchtrail_core::report::compare_table::{compare_table, RowState, SideValues};
use benchtrail_core::settings::ProjectSettings;
use benchtrail_core::UploadDocument;
use serde_json::json;

/// Commit `i` of `spec` as one run of every cell's result, read by the vLLM adapter.
fn commit(spec: &HistorySpec, i: usize, keep_cell: impl Fn(usize) -> bool) -> CompareCommit {
    let files: Vec<_> = commit_runs(spec, i)
        .iter()
        .filter(|r| keep_cell(r.cell))
        .map(|r| json!({"name": format!("c{}.json", r.cell), "content": r.file.to_string()}))
        .collect();
    let doc: UploadDocument = serde_json::from_value(json!({
        "run": {"commit": {"sha": format!("{i:040x}")}, "branch": "main"},
        "cell": {"input_len": spec.workload.input_len, "output_len": spec.workload.output_len},
        "files": files,
    }))
    .unwrap();
    CompareCommit {
        commit: doc.run.commit.sha.clone(),
        runs: vec![doc.read().unwrap().results],
    }
}

#[test]
fn tested_rows_carry_their_test_outcome_and_the_tradeoff_sides_are_tradeoff_rows() {
    let spec = HistorySpec::fp8_case(3);
    let commits: Vec<_> = (0..spec.commits)
        .map(|i| commit(&spec, i, |_| true))
        .collect();
    let (baseline, candidate) = commits.split_at(commits.len() - 1);
    let c = compare(baseline, &candidate[0], &ProjectSettings::default(), &[]);
    let table = compare_table(&c.analysis, &SideValues::default());
    assert_eq!(table.cells.len(), 3);
    assert!(table.missing_cells.is_empty() && table.new_cells.is_empty());
    for (cell, group) in table.cells.iter().zip(&c.analysis.groups) {
        assert_eq!(cell.rows.len(), group.report.series.len());
        // Every tested row is exactly its comparison.
        for (row, s) in cell.rows.iter().zip(&group.report.series) {
            assert_eq!(row.series_id, s.series_id);
            match &s.comparison {
                Some(cmp) => {
                    let o = &cmp.outcome;
                    assert_eq!(row.baseline, Some(o.baseline_mean));
                    assert_eq!(row.candidate, Some(o.candidate_mean));
                    assert_eq!(row.delta_pct, cmp.delta_pct);
                    assert_eq!(row.test, Some(o.test));
                    assert_eq!(row.p_value, o.p_value);
                    assert_eq!(
                        row.significant,
                        cmp.significant && o.test != Test::EffectOnly
                    );
                    assert_eq!(row.n, Some((o.n_baseline, o.n_candidate)));
                    match o.delta_ci.filter(|_| o.baseline_mean != 0.0) {
                        Some((lo, hi)) => {
                            let b = o.baseline_mean;
                            assert_eq!(row.ci_pct, Some((lo / b * 100.0, hi / b * 100.0)));
                            assert_eq!(row.level, Some(o.level));
                        }
                        None => assert_eq!(row.ci_pct, None),
                    }
                }
                None => {
                    assert_eq!((row.baseline, row.candidate, row.test), (None, None, None));
                }
            }
        }
        // The trade-off: its sides, and nothing else, are `tradeoff` rows.
        let tradeoff = group
            .report
            .findings
            .iter()
            .find(|f| f.test == Test::Tradeoff)
            .expect("the FP8 change is a trade-off in every cell of this draw");
        let tradeoff_rows: Vec<&str> = cell
            .rows
            .iter()
            .filter(|r| r.state == RowState::Tradeoff)
            .map(|r| r.series_id.as_str())
            .collect();
        let mut sides: Vec<&str> = tradeoff.series_ids.iter().map(String::as_str).collect();
        sides.sort_unstable();
        let mut got = tradeoff_rows.clone();
        got.sort_unstable();
        assert_eq!(got, sides);
        let throughput = cell
            .rows
            .iter()
            .find(|r| r.metric == "output_throughput")
            .unwrap();
        assert_eq!(throughput.state, RowState::Tradeoff);
        assert_eq!(throughput.better, Some(true));
        assert!(cell.rows.iter().any(|r| r.metric == "ttft"
            && r.state == RowState::Tradeoff
            && r.better == Some(false)));
        assert_eq!(
            cell.findings.first().map(|f| f.0),
            Some(benchtrail_core::regression::FindingKind::Tradeoff)
        );
    }
}

#[test]
fn two_single_runs_are_described_from_the_side_values_never_tested() {
    let spec = HistorySpec::fp8_case(3);
    let base = commit(&spec, spec.commits - 2, |cell| cell == 0);
    let head = commit(&spec, spec.commits - 1, |cell| cell == 0);
    let c = compare(&[base], &head, &ProjectSettings::default(), &[]);
    let group = &c.analysis.groups[0];
    let mut values = SideValues::default();
    for (i, s) in group.report.series.iter().enumerate() {
        values
            .baseline
            .insert(s.series_id.clone(), 100.0 + i as f64);
        values
            .candidate
            .insert(s.series_id.clone(), 110.0 + i as f64);
    }
    let table = compare_table(&c.analysis, &values);
    let cell = &table.cells[0];
    assert_eq!(cell.rows.len(), group.report.series.len());
    for (i, (row, s)) in cell.rows.iter().zip(&group.report.series).enumerate() {
        // Never a p-value, an interval or a significant change: one value per side.
        assert_eq!(
            (row.p_value, row.ci_pct, row.level),
            (None, None, None),
            "{row:?}"
        );
        assert!(!row.significant, "{row:?}");
        match &s.comparison {
            // Compared for the effect only: the two values, described.
            Some(cmp) => {
                assert_eq!(row.test, Some(Test::EffectOnly), "{row:?}");
                assert_eq!(row.baseline, Some(cmp.outcome.baseline_mean));
                assert_eq!(row.candidate, Some(cmp.outcome.candidate_mean));
            }
            // Not compared at all (descriptive): the side values the caller gave.
            None => {
                assert_eq!(row.test, None, "{row:?}");
                assert_eq!(row.baseline, Some(100.0 + i as f64));
                assert_eq!(row.candidate, Some(110.0 + i as f64));
                assert_eq!(row.delta_pct, Some(10.0 / (100.0 + i as f64) * 100.0));
            }
        }
    }
    assert!(group.report.series.iter().any(|s| s.comparison.is_none()));
    // Tested metrics say why they were not tested: one value per side.
    let ttft = cell
        .rows
        .iter()
        .find(|r| r.metric == "ttft" && r.stat.to_string() == "p50")
        .unwrap();
    assert_eq!(ttft.untested, Some(Untested::OneValuePerSide));
    assert!(matches!(
        ttft.state,
        RowState::Series(SeriesState::InsufficientData) | RowState::Tradeoff
    ));
}

#[test]
fn a_cell_the_candidate_lacks_is_a_missing_cell_and_one_without_baseline_a_new_cell() {
    let spec = HistorySpec::fp8_case(3);
    let commits: Vec<_> = (0..spec.commits)
        .map(|i| {
            if i + 1 == spec.commits {
                commit(&spec, i, |cell| cell != 2)
            } else {
                commit(&spec, i, |cell| cell != 0)
            }
        })
        .collect();
    let (baseline, candidate) = commits.split_at(commits.len() - 1);
    let c = compare(baseline, &candidate[0], &ProjectSettings::default(), &[]);
    let table = compare_table(&c.analysis, &SideValues::default());
    let missing: Vec<&str> = table
        .missing_cells
        .iter()
        .map(|g| g.cell.as_str())
        .collect();
    let new: Vec<&str> = table.new_cells.iter().map(|g| g.cell.as_str()).collect();
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert!(missing[0].contains("max_concurrency=16;"), "{missing:?}");
    assert_eq!(new.len(), 1, "{new:?}");
    assert!(new[0].contains("max_concurrency=1;"), "{new:?}");
    let new_cell = table.cells.iter().find(|c| c.cell == new[0]).unwrap();
    let states: Vec<(String, RowState)> = new_cell
        .rows
        .iter()
        .filter(|r| r.metric == "ttft")
        .map(|r| (r.stat.to_string(), r.state))
        .collect();
    let no_baseline = RowState::Series(SeriesState::NoBaseline);
    assert_eq!(
        states,
        [
            ("mean".to_string(), no_baseline),
            ("p50".to_string(), no_baseline),
            ("p90".to_string(), no_baseline),
            ("p95".to_string(), no_baseline),
            ("p99".to_string(), no_baseline),
            (
                "std".to_string(),
                RowState::Series(SeriesState::Descriptive)
            ),
        ]
    );
}
