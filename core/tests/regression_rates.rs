//! False-alarm and detection rates of the shipped defaults on seeded synthetic histories.
//!
//! Protocol (a CI replay): every series is a 50-commit base-branch history with 5 repeats per
//! commit and run-to-run CV 2 % (`synthetic::history`, noise model documented there). Each
//! commit from the 4th on is analyzed as a candidate against the commits before it (as it
//! would be on push), and at the end the whole history is scanned for change points.
//! * Noise only (seed 0x6e6f697365 = "noise", series 0..100): a series counts as a false alarm if
//!   it got any finding of any kind at any commit or from the change-point scan. Each of the 46
//!   looks is a test at α = 0.001 (two-sided, on commit means), so about 46 × 0.001 ≈ 4.6 % of
//!   lone series get a finding somewhere by chance: the per-upload control that keeps real
//!   histories quiet works across the series of an upload (families, cells), measured in
//!   `detection_rates.rs`. Required here: at most 8 of 100 (the binomial 97.5 % bound of 4.6 %),
//!   and no change point.
//! * A real +5 % step at commit 25 (seed 0x73746570 = "step", series 0..100): caught when the
//!   replay reports a regression at the step commit or the next one, or the change-point scan
//!   places a change point within one commit of it. Required: at least 95 of 100.
//!
//! Debug-build time on the 2-core machine is printed; see the report at the end of the test.

use benchtrail_core::metric::Stat;
use benchtrail_core::regression::synthetic::{history, Noise};
use benchtrail_core::regression::{
    analyze, change_point_findings, FindingKind, GroupInput, SeriesInput, Settings,
};
use std::time::Instant;

const SERIES: usize = 100;
const COMMITS: usize = 50;
const REPEATS: usize = 5;
const CV: f64 = 0.02;
const STEP_AT: usize = 25;
const STEP_PCT: f64 = 5.0;

fn series(h: &[benchtrail_core::regression::CommitRuns], upto: usize) -> SeriesInput {
    SeriesInput {
        series_id: "s".into(),
        metric: "ttft".into(),
        stat: Stat::Percentile("50".into()),
        slo_profile: None,
        history: h[..upto].to_vec(),
        candidate: h.get(upto).cloned(),
        following: Vec::new(),
    }
}

/// Replays one history; returns (commit index, kind) of every finding, change points last.
fn replay(
    h: &[benchtrail_core::regression::CommitRuns],
    s: &Settings,
) -> Vec<(usize, FindingKind)> {
    let mut out = Vec::new();
    for i in s.min_baseline_commits..h.len() {
        let g = GroupInput {
            series_key: "k".into(),
            cell_key: "c".into(),
            pinned_baseline: None,
            series: vec![series(h, i)],
        };
        for f in analyze(&g, s).findings {
            out.push((i, f.kind));
        }
    }
    let full = series(h, h.len());
    for f in change_point_findings(&full, s) {
        let idx = h
            .iter()
            .position(|c| Some(&c.commit) == f.candidate_commit.as_ref())
            .unwrap();
        let kind = if f.delta_pct.unwrap() > 0.0 {
            FindingKind::ChangePoint
        } else {
            FindingKind::Improvement // a change point in the wrong direction: never a catch
        };
        out.push((idx + 1000, kind));
    }
    out
}

#[test]
fn false_alarm_and_detection_rates_with_shipped_defaults() {
    let settings = Settings::default();
    let started = Instant::now();

    let mut noise = Noise::new(0x6e6f697365);
    let mut false_alarms = 0;
    let mut noise_findings = 0;
    let mut noise_change_points = 0;
    for h in 0..SERIES {
        let hist = history(&mut noise, h, COMMITS, REPEATS, 100.0, CV, None);
        let found = replay(&hist, &settings);
        noise_findings += found.len();
        noise_change_points += found.iter().filter(|f| f.0 >= 1000).count();
        if !found.is_empty() {
            false_alarms += 1;
            eprintln!("noise series {h}: {found:?}");
        }
    }
    let noise_time = started.elapsed();

    let started = Instant::now();
    let mut noise = Noise::new(0x73746570);
    let (mut caught, mut at_commit, mut by_cp) = (0, 0, 0);
    for h in 0..SERIES {
        let hist = history(
            &mut noise,
            h,
            COMMITS,
            REPEATS,
            100.0,
            CV,
            Some((STEP_AT, STEP_PCT)),
        );
        let found = replay(&hist, &settings);
        let replay_hit = found
            .iter()
            .any(|&(i, k)| k == FindingKind::Regression && (STEP_AT..=STEP_AT + 1).contains(&i));
        let cp_hit = found.iter().any(|&(i, k)| {
            k == FindingKind::ChangePoint && (i as i64 - 1000 - STEP_AT as i64).abs() <= 1
        });
        at_commit += usize::from(replay_hit);
        by_cp += usize::from(cp_hit);
        caught += usize::from(replay_hit || cp_hit);
    }
    let step_time = started.elapsed();

    println!(
        "noise only: {false_alarms} of {SERIES} series ({COMMITS} commits, {REPEATS} repeats, CV {:.0} %) got a finding ({noise_findings} findings in all) [{:.1} s]",
        CV * 100.0,
        noise_time.as_secs_f64()
    );
    println!(
        "+{STEP_PCT} % step: {caught} of {SERIES} caught ({at_commit} by the replay at the step commit or the next, {by_cp} by the change-point scan within one commit) [{:.1} s]",
        step_time.as_secs_f64()
    );
    assert!(
        false_alarms <= 8,
        "{false_alarms} noise series got findings"
    );
    assert_eq!(noise_change_points, 0, "noise change points");
    assert!(caught >= 95, "only {caught} of {SERIES} steps caught");
}
