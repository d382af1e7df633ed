//! The engine's false-alarm and detection rates on realistic generated `vllm bench serve`
//! histories (`regression::realistic`, its noise model documented there), analyzed without a
//! server (`regression::rates`). A bounded instance runs in CI and asserts the rates; the full
//! sizes run with `cargo test --release -p benchtrail-core --test detection_rates -- --ignored
//! --nocapture` and through the HTTP API with `cargo bench -p benchtrail-server --bench
//! detection_rates` (BENCHMARKS.md).

use benchtrail_core::regression::family_scan::{family_change_points, family_count};
use benchtrail_core::regression::rates::{analyze_commit, has_finding, ReadHistory};
use benchtrail_core::regression::realistic::{Change, HistorySpec, FP8_BASELINE_COMMITS};
use benchtrail_core::regression::{FindingKind, GroupInput, Settings};

/// The shipped defaults; `BENCHTRAIL_RATES_ALPHA` overrides α to compare levels by hand.
fn settings() -> Settings {
    let mut s = Settings::default();
    if let Ok(a) = std::env::var("BENCHTRAIL_RATES_ALPHA") {
        s.alpha = a.parse().expect("a number");
    }
    s
}

const ALARMS: [FindingKind; 2] = [FindingKind::Regression, FindingKind::Tradeoff];

fn spec(seed: u64, commits: usize, repeats: usize, cv: f64) -> HistorySpec {
    HistorySpec::chat(seed, commits, repeats, cv)
}

/// Noise only: histories (of `histories`) with any regression or trade-off finding at any
/// commit, and the total number of such findings.
fn noise(histories: u64, commits: usize, repeats: usize, cv: f64) -> (usize, usize) {
    let settings = settings();
    let (mut with, mut total) = (0, 0);
    for h in 0..histories {
        let read = ReadHistory::new(&spec(1000 + h, commits, repeats, cv));
        let mut n = 0;
        for c in 1..commits {
            let reports = analyze_commit(&read, c, None, &settings);
            n += reports
                .iter()
                .flat_map(|r| &r.findings)
                .filter(|f| ALARMS.contains(&f.kind))
                .count();
        }
        with += usize::from(n > 0);
        total += n;
    }
    (with, total)
}

/// The change points the background scan reports on the whole of a history (every cell's
/// families scanned together), as (cell, family metric, commit index).
fn change_points(read: &ReadHistory, settings: &Settings) -> Vec<(usize, String, usize)> {
    let last = read.commits() - 1;
    let mut groups: Vec<GroupInput> = read.groups(last, None);
    for g in groups.iter_mut() {
        for s in g.series.iter_mut() {
            if let Some(c) = s.candidate.take() {
                s.history.push(c);
            }
        }
    }
    let scans: usize = groups.iter().map(|g| family_count(g, settings)).sum();
    let mut out = Vec::new();
    for (cell, g) in groups.iter().enumerate() {
        for f in family_change_points(g, settings, scans) {
            let at = f
                .candidate_commit
                .as_deref()
                .and_then(|c| usize::from_str_radix(c, 16).ok())
                .unwrap_or(usize::MAX);
            out.push((cell, f.metric.clone(), at));
        }
    }
    out
}

/// Noise only: histories with a change point from the scan of the whole history.
fn noise_change_points(histories: u64, commits: usize, cv: f64) -> (usize, usize) {
    let settings = settings();
    let (mut with, mut total) = (0, 0);
    for h in 0..histories {
        let cps = change_points(
            &ReadHistory::new(&spec(1000 + h, commits, 1, cv)),
            &settings,
        );
        with += usize::from(!cps.is_empty());
        total += cps.len();
    }
    (with, total)
}

/// A TTFT step of `pct` at commit `at` of `commits`: histories whose scan places a TTFT change
/// point within 3 commits of it.
fn step_change_points(histories: u64, commits: usize, at: usize, pct: f64) -> usize {
    let settings = settings();
    (0..histories)
        .filter(|h| {
            let mut s = spec(7000 + h, commits, 1, 0.02);
            s.step = Some((at, Change::ttft_step(pct, 3)));
            change_points(&ReadHistory::new(&s), &settings)
                .iter()
                .any(|(_, m, i)| m == "ttft" && i.abs_diff(at) <= 3)
        })
        .count()
}

/// A TTFT step of `pct` at commit `at` of `at + 1` commits: histories (of `histories`) with a
/// TTFT regression or trade-off at the step commit.
fn step(histories: u64, at: usize, repeats: usize, cv: f64, pct: f64) -> usize {
    let settings = settings();
    (0..histories)
        .filter(|h| {
            let mut s = spec(5000 + h, at + 1, repeats, cv);
            s.step = Some((at, Change::ttft_step(pct, 3)));
            let read = ReadHistory::new(&s);
            has_finding(
                &analyze_commit(&read, at, None, &settings),
                &ALARMS,
                Some("ttft"),
            )
        })
        .count()
}

/// The FP8 KV-cache case, 10 baseline commits, single runs, CV 1.2 %: per draw, the cells with
/// a trade-off naming throughput and TTFT.
fn fp8(draws: u64) -> Vec<usize> {
    let settings = settings();
    (0..draws)
        .map(|d| {
            let s = HistorySpec::fp8_case(9000 + d);
            let read = ReadHistory::new(&s);
            analyze_commit(&read, FP8_BASELINE_COMMITS, None, &settings)
                .iter()
                .filter(|r| {
                    r.findings.iter().any(|f| {
                        f.kind == FindingKind::Tradeoff
                            && f.parts.iter().any(|p| p.metric == "ttft")
                            && f.parts.iter().any(|p| p.metric.ends_with("throughput"))
                    })
                })
                .count()
        })
        .collect()
}

#[test]
fn bounded_rates_hold() {
    let (with, total) = noise(4, 30, 1, 0.02);
    println!("noise CV 2 %, 4 × 30 commits: {with} histories with an alarm, {total} alarms");
    assert!(
        with <= 1,
        "{with} of 4 noise histories alarmed ({total} alarms)"
    );
    let found = step(6, 12, 1, 0.02, 10.0);
    println!("+10 % TTFT step after 12 commits: {found} of 6 flagged");
    assert!(found >= 5, "{found} of 6");
    let cells = fp8(3);
    println!("FP8: trade-off cells per draw {cells:?}");
    assert!(cells.iter().filter(|c| **c >= 2).count() >= 2, "{cells:?}");
}

#[test]
#[ignore = "full size: run in release (see the module documentation)"]
fn full_rates() {
    for cv in [0.02, 0.05] {
        let (with, total) = noise(40, 50, 1, cv);
        println!("noise single runs CV {cv}: {with}/40 histories with an alarm ({total} alarms)");
    }
    let (with, total) = noise(40, 50, 3, 0.02);
    println!("noise 3 repeats CV 0.02: {with}/40 histories with an alarm ({total} alarms)");
    for at in [10, 30] {
        println!(
            "+10 % TTFT step, single runs, CV 2 %, {at} commits before: {}/40 flagged at the step",
            step(40, at, 1, 0.02, 10.0)
        );
        println!(
            "+5 % TTFT step, 3 repeats, CV 2 %, {at} commits before: {}/40 flagged at the step",
            step(40, at, 3, 0.02, 5.0)
        );
    }
    for cv in [0.02, 0.05] {
        let (with, total) = noise_change_points(40, 50, cv);
        println!("noise CV {cv}: {with}/40 histories with a change point at the end ({total})");
    }
    println!(
        "+5 % TTFT step at commit 25 of 50, single runs, CV 2 %: {}/40 with a TTFT change point within 3 commits",
        step_change_points(40, 50, 25, 5.0)
    );
    let cells = fp8(10);
    println!(
        "FP8: draws with ≥ 2 of 3 trade-off cells: {}/10 ({cells:?})",
        cells.iter().filter(|c| **c >= 2).count()
    );
}
