//! E-Divisive against Apache Otava 0.8.0 on the same series (testdata/regression/otava/; the
//! comparison, and how every file there was made: testdata/regression/OTAVA.md).
//!
//! * `llm_serving_series_aiperf_c4.csv`: copied from the shared samples, with Otava's output.
//! * `history_*.csv`: seeded synthetic histories written by [`render`] from [`histories`] (a test
//!   checks that the committed files are its output), analyzed by hand with `otava analyze`
//!   (`run_otava_histories.sh`), whose JSON and text outputs are committed beside them.
//!
//! CI runs no Python: every test reads Otava's committed JSON.

use std::collections::BTreeMap;
use std::path::PathBuf;

use benchtrail_core::metric::Stat;
use benchtrail_core::regression::edivisive::{e_divisive, ChangePoint, ChangePointSettings};
use benchtrail_core::regression::synthetic::Noise;
use benchtrail_core::regression::{change_point_findings, CommitRuns, SeriesInput, Settings};
use sha2::{Digest, Sha256};

fn otava_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/regression/otava")
}

fn read(file: &str) -> String {
    let path = otava_dir().join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn csv(file: &str) -> Vec<Vec<String>> {
    read(file)
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn column(rows: &[Vec<String>], metric: &str) -> Vec<f64> {
    let col = rows[0].iter().position(|h| h == metric).unwrap();
    rows[1..].iter().map(|r| r[col].parse().unwrap()).collect()
}

/// Otava's change-point indices per metric, from its committed `--output json` of `test`.
fn otava_change_points(test: &str) -> BTreeMap<String, Vec<usize>> {
    let json: serde_json::Value =
        serde_json::from_str(&read(&format!("otava_analyze_{test}.json"))).unwrap();
    let mut out: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for group in json[test]
        .as_array()
        .expect("one list of change-point groups")
    {
        for change in group["changes"].as_array().unwrap() {
            out.entry(change["metric"].as_str().unwrap().to_string())
                .or_default()
                .push(change["index"].as_u64().unwrap() as usize);
        }
    }
    for v in out.values_mut() {
        v.sort_unstable();
    }
    out
}

fn otava(cps: &BTreeMap<String, Vec<usize>>, metric: &str) -> Vec<usize> {
    cps.get(metric).cloned().unwrap_or_default()
}

fn benchtrail(values: &[f64]) -> Vec<usize> {
    indices(&e_divisive(values, &ChangePointSettings::default()))
}

fn indices(cps: &[ChangePoint]) -> Vec<usize> {
    cps.iter().map(|c| c.index).collect()
}

/// Same number of change points, pairwise at most one commit apart.
fn within_one(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.abs_diff(*y) <= 1)
}

/// The split that [`e_divisive`] tests first on `values` (the largest divergence), with the
/// permutation p-value it gets, whatever alpha.
fn strongest_split(values: &[f64], s: &ChangePointSettings) -> ChangePoint {
    let all = ChangePointSettings {
        alpha: 1.0,
        ..s.clone()
    };
    e_divisive(values, &all)
        .into_iter()
        .max_by(|a, b| a.q.total_cmp(&b.q))
        .expect("a segment long enough to split")
}

// --- the AIPerf-derived series of the shared samples -------------------------------------------

#[test]
fn e_divisive_agrees_with_otava_on_every_metric() {
    let rows = csv("llm_serving_series_aiperf_c4.csv");
    let otava_cps = otava_change_points("llm-serving-c4");
    // Otava: one change point, index 20 (commit ffb3b0e6199a), for all four.
    for metric in ["ttft_ms", "itl_ms", "e2e_latency_ms", "output_tps_per_user"] {
        let cps = e_divisive(&column(&rows, metric), &ChangePointSettings::default());
        assert_eq!(indices(&cps), otava(&otava_cps, metric), "{metric}");
        assert_eq!(indices(&cps), [20], "{metric}");
        assert!(cps[0].p_value <= 0.001);
    }
}

#[test]
fn the_ttft_change_point_as_a_finding_matches_otavas_numbers() {
    let rows = csv("llm_serving_series_aiperf_c4.csv");
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

// --- seeded synthetic histories ------------------------------------------------------------------

/// The true value of a metric at commit `i`, as a factor of its base value.
enum Shape {
    /// Constant.
    Flat,
    /// From commit `at` on, `base · (1 + pct/100)` (the last step reached wins; `pct` 0 returns to
    /// the base).
    Steps(&'static [(usize, f64)]),
    /// Commits `first`, …, `first + commits − 1` each add `pct_per_commit` % of the base; the
    /// level then stays at `commits · pct_per_commit` %.
    Ramp {
        first: usize,
        commits: usize,
        pct_per_commit: f64,
    },
    /// Single commits `pct` % off the base (a noisy neighbour on the benchmark machine).
    Spikes(&'static [usize], f64),
}

impl Shape {
    fn factor(&self, i: usize) -> f64 {
        let pct = match self {
            Shape::Flat => 0.0,
            Shape::Steps(steps) => steps
                .iter()
                .rev()
                .find(|(at, _)| i >= *at)
                .map_or(0.0, |s| s.1),
            Shape::Ramp {
                first,
                commits,
                pct_per_commit,
            } => pct_per_commit * ((i + 1).saturating_sub(*first).min(*commits)) as f64,
            Shape::Spikes(at, pct) => {
                if at.contains(&i) {
                    *pct
                } else {
                    0.0
                }
            }
        };
        1.0 + pct / 100.0
    }
}

struct Column {
    name: &'static str,
    base: f64,
    /// Run-to-run coefficient of variation.
    cv: f64,
    shape: Shape,
}

struct History {
    /// Otava's test name in `otava_histories.yaml`.
    test: &'static str,
    file: &'static str,
    seed: u64,
    commits: usize,
    columns: Vec<Column>,
}

/// One LLM-serving cell (concurrency 16, 512 input / 128 output tokens): TTFT 80 ms, ITL 24 ms,
/// E2E = TTFT + 127 · ITL = 3128 ms, output throughput 16 · 128 / 3.128 s = 654.7 tok/s. Every
/// value is one benchmark run with run-to-run CV 2 %.
fn histories() -> Vec<History> {
    let flat = |name, base| Column {
        name,
        base,
        cv: 0.02,
        shape: Shape::Flat,
    };
    let shaped = |name, base, shape| Column {
        name,
        base,
        cv: 0.02,
        shape,
    };
    vec![
        // A regression at commit 20 and its fix (back to the old level) at 35: ITL +8 %, E2E
        // +7.8 %, throughput −7.2 %; TTFT untouched.
        History {
            test: "two-steps",
            file: "history_two_steps.csv",
            seed: 20261101,
            commits: 60,
            columns: vec![
                flat("ttft_ms", 80.0),
                shaped("itl_ms", 24.0, Shape::Steps(&[(20, 8.0), (35, 0.0)])),
                shaped(
                    "e2e_latency_ms",
                    3128.0,
                    Shape::Steps(&[(20, 7.8), (35, 0.0)]),
                ),
                shaped("output_tps", 654.7, Shape::Steps(&[(20, -7.2), (35, 0.0)])),
            ],
        },
        // A slow drift over commits 15…34: TTFT +0.4 %/commit and throughput −0.4 %/commit (to
        // ±8 %, then flat); each commit's move is a fifth of the run-to-run noise. ITL untouched.
        History {
            test: "drift",
            file: "history_drift.csv",
            seed: 20261102,
            commits: 50,
            columns: vec![
                shaped(
                    "ttft_ms",
                    120.0,
                    Shape::Ramp {
                        first: 15,
                        commits: 20,
                        pct_per_commit: 0.4,
                    },
                ),
                flat("itl_ms", 24.0),
                shaped(
                    "output_tps",
                    654.7,
                    Shape::Ramp {
                        first: 15,
                        commits: 20,
                        pct_per_commit: -0.4,
                    },
                ),
            ],
        },
        // Nothing changes; p99 TTFT has two single-commit spikes of +25 %.
        History {
            test: "noise-only",
            file: "history_noise_only.csv",
            seed: 20261103,
            commits: 60,
            columns: vec![
                flat("ttft_ms", 80.0),
                flat("itl_ms", 24.0),
                flat("e2e_latency_ms", 3128.0),
                flat("output_tps", 654.7),
                shaped("ttft_p99_ms", 140.0, Shape::Spikes(&[17, 41], 25.0)),
            ],
        },
        // Short regimes: TTFT +15 % for commits 20…22 only (a regression reverted after three
        // commits), ITL +10 % in the last three commits (37…39), throughput −10 % in the last
        // seven (33…39).
        History {
            test: "short-regimes",
            file: "history_short_regimes.csv",
            seed: 20261104,
            commits: 40,
            columns: vec![
                shaped("ttft_ms", 80.0, Shape::Steps(&[(20, 15.0), (23, 0.0)])),
                shaped("itl_ms", 24.0, Shape::Steps(&[(37, 10.0)])),
                shaped("output_tps", 654.7, Shape::Steps(&[(33, -10.0)])),
            ],
        },
    ]
}

/// The CSV of `h`: `time,commit,<metrics>`; commit `i` is dated 2026-06-01 + `i` days, 02:00 UTC
/// (inside Otava's default one-year look-back; see OTAVA.md), its id is the first 12 hex digits of
/// SHA-256(`"{test}/{i}"`), and its values are drawn commit by commit, column by column, from one
/// [`Noise`] stream seeded with `h.seed` (`Noise::runs(true value, cv, 1)`), printed with 3
/// decimals.
fn render(h: &History) -> String {
    let mut noise = Noise::new(h.seed);
    let start = chrono::NaiveDate::from_ymd_opt(2026, 6, 1).unwrap();
    let mut out = String::from("time,commit");
    for c in &h.columns {
        out.push(',');
        out.push_str(c.name);
    }
    out.push('\n');
    for i in 0..h.commits {
        let day = start + chrono::Days::new(i as u64);
        let commit = hex::encode(Sha256::digest(format!("{}/{i}", h.test).as_bytes()));
        out.push_str(&format!(
            "{} 02:00:00 +0000,{}",
            day.format("%Y-%m-%d"),
            &commit[..12]
        ));
        for c in &h.columns {
            let v = noise.runs(c.base * c.shape.factor(i), c.cv, 1)[0];
            out.push_str(&format!(",{v:.3}"));
        }
        out.push('\n');
    }
    out
}

fn history(test: &str) -> History {
    histories().into_iter().find(|h| h.test == test).unwrap()
}

/// Regenerate with `BENCHTRAIL_WRITE_OTAVA_HISTORIES=1 cargo test -p benchtrail-core --test
/// integration regression_otava::` (then rerun Otava: `run_otava_histories.sh`).
#[test]
fn committed_histories_are_the_generators_output() {
    for h in histories() {
        let text = render(&h);
        if std::env::var_os("BENCHTRAIL_WRITE_OTAVA_HISTORIES").is_some() {
            std::fs::write(otava_dir().join(h.file), &text).unwrap();
        }
        assert_eq!(read(h.file), text, "{} is not render()'s output", h.file);
    }
}

/// Otava's CSV reader keeps only rows dated in [now − 365 days, now) unless told otherwise, and
/// says nothing about the others: its text output must list every commit of the CSV.
#[test]
fn otava_analyzed_every_commit() {
    let tests = histories()
        .into_iter()
        .map(|h| (h.test, h.file))
        .chain([("llm-serving-c4", "llm_serving_series_aiperf_c4.csv")]);
    for (test, file) in tests {
        let text = read(&format!("otava_analyze_{test}.txt"));
        let rows = csv(file);
        let listed = text
            .lines()
            .filter(|l| l.starts_with("20") && l.contains(" +0000  "))
            .count();
        assert_eq!(listed, rows.len() - 1, "{test}");
        for r in &rows[1..] {
            assert!(
                text.contains(&format!("{}  {}", r[0], r[1])),
                "{test}: {r:?}"
            );
        }
    }
}

#[test]
fn two_opposite_steps_agree_with_otava_at_the_true_steps() {
    let h = history("two-steps");
    let rows = csv(h.file);
    let otava_cps = otava_change_points(h.test);
    for c in &h.columns {
        let ours = benchtrail(&column(&rows, c.name));
        let theirs = otava(&otava_cps, c.name);
        assert!(
            within_one(&ours, &theirs),
            "{}: {ours:?} vs {theirs:?}",
            c.name
        );
        let truth: Vec<usize> = match c.shape {
            Shape::Steps(s) => s.iter().map(|s| s.0).collect(),
            _ => Vec::new(),
        };
        assert!(within_one(&ours, &truth), "{}: {ours:?}", c.name);
    }
}

#[test]
fn noise_only_neither_tool_reports_a_change_point() {
    let h = history("noise-only");
    let rows = csv(h.file);
    let otava_cps = otava_change_points(h.test);
    assert!(otava_cps.is_empty(), "{otava_cps:?}");
    for c in &h.columns {
        assert_eq!(benchtrail(&column(&rows, c.name)), [0; 0], "{}", c.name);
    }
}

/// A drift has no true change point: both tools approximate the ramp by steps inside it. Where
/// they differ, Otava has one more, and it is benchtrail's own next candidate, rejected by the
/// permutation test at alpha 0.001 although it would pass Otava's first-pass level 0.01.
#[test]
fn drift_both_tools_cut_the_ramp_and_otava_may_cut_once_more() {
    let h = history("drift");
    let rows = csv(h.file);
    let otava_cps = otava_change_points(h.test);
    let (first, last) = (15, 34); // the ramp's commits
    for c in &h.columns {
        let values = column(&rows, c.name);
        let ours = benchtrail(&values);
        let theirs = otava(&otava_cps, c.name);
        for i in ours.iter().chain(&theirs) {
            assert!((first - 1..=last + 1).contains(i), "{}: {i}", c.name);
        }
        if let Shape::Flat = c.shape {
            assert!(ours.is_empty() && theirs.is_empty(), "{}", c.name);
        }
        if within_one(&ours, &theirs) {
            continue;
        }
        // Otava's extra change point: the one not within one commit of any of ours.
        assert_eq!(theirs.len(), ours.len() + 1, "{}", c.name);
        let extra: Vec<usize> = theirs
            .iter()
            .copied()
            .filter(|t| !ours.iter().any(|o| o.abs_diff(*t) <= 1))
            .collect();
        assert_eq!(extra.len(), 1, "{}: {ours:?} vs {theirs:?}", c.name);
        let rest: Vec<usize> = theirs.iter().copied().filter(|t| *t != extra[0]).collect();
        assert!(within_one(&ours, &rest), "{}", c.name);
        // benchtrail's segment that holds it, and that segment's first candidate.
        let a = ours
            .iter()
            .copied()
            .filter(|o| *o < extra[0])
            .max()
            .unwrap_or(0);
        let b = ours
            .iter()
            .copied()
            .filter(|o| *o > extra[0])
            .min()
            .unwrap_or(values.len());
        let split = strongest_split(&values[a..b], &ChangePointSettings::default());
        assert!(
            (a + split.index).abs_diff(extra[0]) <= 1,
            "{}: {} vs {}",
            c.name,
            a + split.index,
            extra[0]
        );
        assert!(
            split.p_value > 0.001 && split.p_value <= 0.01,
            "{}: p = {}",
            c.name,
            split.p_value
        );
    }
    // On this seed: TTFT is where they differ, throughput where they agree.
    assert!(!within_one(
        &benchtrail(&column(&rows, "ttft_ms")),
        &otava(&otava_cps, "ttft_ms")
    ));
    assert!(within_one(
        &benchtrail(&column(&rows, "output_tps")),
        &otava(&otava_cps, "output_tps")
    ));
}

#[test]
fn short_regimes_a_seven_commit_step_agrees_a_late_three_commit_step_only_otava_reports() {
    let h = history("short-regimes");
    let rows = csv(h.file);
    let otava_cps = otava_change_points(h.test);

    // Throughput −10 % over the last 7 commits: both, at the step.
    let ours = benchtrail(&column(&rows, "output_tps"));
    let theirs = otava(&otava_cps, "output_tps");
    assert!(within_one(&ours, &theirs), "{ours:?} vs {theirs:?}");
    assert!(within_one(&ours, &[33]), "{ours:?}");

    // TTFT +15 % for 3 commits, then back: neither. Otava's t-test compares everything before the
    // candidate with everything after it, where 3 high commits are diluted by 17 normal ones;
    // benchtrail's regimes need 5 commits each.
    assert_eq!(benchtrail(&column(&rows, "ttft_ms")), [0; 0]);
    assert_eq!(otava(&otava_cps, "ttft_ms"), [0; 0]);

    // ITL +10 % in the last 3 commits: Otava reports it at the step; benchtrail cannot place a
    // change point in the last 4 commits (min_segment 5), and even with min_segment 3 its first
    // candidate is Otava's commit with a permutation p above alpha.
    let itl = column(&rows, "itl_ms");
    let theirs = otava(&otava_cps, "itl_ms");
    assert!(within_one(&theirs, &[37]), "{theirs:?}");
    assert_eq!(benchtrail(&itl), [0; 0]);
    let three = ChangePointSettings {
        min_segment: 3,
        ..ChangePointSettings::default()
    };
    assert_eq!(indices(&e_divisive(&itl, &three)), [0; 0]);
    let split = strongest_split(&itl, &three);
    assert!(within_one(&[split.index], &theirs), "{}", split.index);
    assert!(
        split.p_value > 0.001 && split.p_value <= 0.01,
        "{}",
        split.p_value
    );
}

/// One-off robustness check behind OTAVA.md's "50 seeds" table (not part of CI): writes each
/// history with seeds 1…50 and benchtrail's change points to `$BENCHTRAIL_OTAVA_SWEEP_DIR`, for
/// `testdata/regression/otava/sweep.py` to compare with Otava's. Run with
/// `BENCHTRAIL_OTAVA_SWEEP_DIR=/tmp/sweep cargo test --release -p benchtrail-core --test
/// integration regression_otava:: -- --ignored`.
#[test]
#[ignore]
fn sweep_seeds_for_otava() {
    let dir = PathBuf::from(std::env::var("BENCHTRAIL_OTAVA_SWEEP_DIR").unwrap());
    std::fs::create_dir_all(&dir).unwrap();
    let mut lines = String::new();
    for mut h in histories() {
        for seed in 1..=50 {
            h.seed = seed;
            let text = render(&h);
            std::fs::write(dir.join(format!("{}_{seed}.csv", h.test)), &text).unwrap();
            let rows: Vec<Vec<String>> = text
                .lines()
                .map(|l| l.split(',').map(str::to_string).collect())
                .collect();
            for c in &h.columns {
                let cps = benchtrail(&column(&rows, c.name));
                let line = serde_json::json!({
                    "test": h.test, "seed": seed, "metric": c.name, "change_points": cps,
                });
                lines.push_str(&format!("{line}\n"));
            }
        }
    }
    std::fs::write(dir.join("benchtrail.jsonl"), lines).unwrap();
}
