//! E-Divisive on the series Apache Otava 0.8.0 analyzed (testdata/regression/otava/, copied from
//! the shared samples; see testdata/regression/OTAVA.md for the comparison).

use benchtrail_core::metric::Stat;
use benchtrail_core::regression::edivisive::{e_divisive, ChangePointSettings};
use benchtrail_core::regression::{change_point_findings, CommitRuns, SeriesInput, Settings};

fn csv() -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(format!(
        "{}/../testdata/regression/otava/llm_serving_series_aiperf_c4.csv",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    text.lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn e_divisive_agrees_with_otava_on_every_metric() {
    let rows = csv();
    let header = &rows[0];
    // Otava's JSON output: one change point, index 20 (commit ffb3b0e6199a), for all four.
    for metric in ["ttft_ms", "itl_ms", "e2e_latency_ms", "output_tps_per_user"] {
        let col = header.iter().position(|h| h == metric).unwrap();
        let values: Vec<f64> = rows[1..].iter().map(|r| r[col].parse().unwrap()).collect();
        let cps = e_divisive(&values, &ChangePointSettings::default());
        let idx: Vec<usize> = cps.iter().map(|c| c.index).collect();
        assert_eq!(idx, [20], "{metric}");
        assert!(cps[0].p_value <= 0.001);
    }
}

#[test]
fn the_ttft_change_point_as_a_finding_matches_otavas_numbers() {
    let rows = csv();
    let history: Vec<CommitRuns> = rows[1..]
        .iter()
        .map(|r| CommitRuns::new(r[1].clone(), &[r[3].parse().unwrap()]))
        .collect();
    let s = SeriesInput {
        series_id: "ttft".into(),
        metric: "ttft".into(),
        stat: Stat::Mean,
        slo_profile: None,
        history,
        candidate: None,
        following: Vec::new(),
    };
    let f = change_point_findings(&s, &Settings::default());
    assert_eq!(f.len(), 1);
    // Otava: mean_before 37.734900, mean_after 82.373200, forward change +118 %.
    assert!((f[0].baseline_value.unwrap() - 37.7349).abs() < 1e-9);
    assert!((f[0].candidate_value.unwrap() - 82.3732).abs() < 1e-9);
    assert_eq!(
        f[0].summary,
        "mean TTFT shifted +118.3 % at commit ffb3b0e6199a (37.73 → 82.37 ms, 20 commits before, 10 after): E-Divisive, permutation p = 0.0010 (999 permutations)."
    );
}
