//! The detection engine on the FP8 KV-cache scenario and on the edge cases of the spec.

use benchtrail_core::cell::{LoadShape, RequestRate, WorkloadCell};
use benchtrail_core::config::Configuration;
use benchtrail_core::metric::Stat;
use benchtrail_core::regression::confounds::confounds;
use benchtrail_core::regression::synthetic::{fp8_kv_cache, Fp8Candidate};
use benchtrail_core::regression::{
    analyze, compare_pair, CommitRuns, FindingKind, GroupInput, RunValue, SeriesInput, SeriesState,
    Settings, Severity, Test,
};

/// Seed of the FP8 scenario ("fp8kv").
const FP8_SEED: u64 = 0x0066_7038_6b76;

fn p50() -> Stat {
    Stat::Percentile("50".into())
}

fn one(series: SeriesInput) -> GroupInput {
    GroupInput {
        series_key: "k".into(),
        cell_key: "c".into(),
        pinned_baseline: None,
        series: vec![series],
    }
}

fn ttft(history: Vec<CommitRuns>, candidate: Option<CommitRuns>) -> SeriesInput {
    SeriesInput {
        series_id: "ttft-p50".into(),
        metric: "ttft".into(),
        stat: p50(),
        slo_profile: None,
        history,
        candidate,
        following: Vec::new(),
    }
}

#[test]
fn fp8_kv_cache_is_a_tradeoff_in_every_cell() {
    let settings = Settings::default();
    let expected = [
        // TTFT is one family: at c = 1 its p95 (+8.1 %, CV 2 %, p = 0.003 on its own) moved
        // with the median and is named with it.
        "output throughput +2.3 % but median TTFT +6.5 % (p95 +8.1 %); median E2E latency -3.2 %",
        "output throughput +3.6 % but median TTFT +8.8 % (p95 +11.3 %); median E2E latency -4.5 %",
        "output throughput +5.3 % but median TTFT +10.9 % (p95 +12.2 %); median E2E latency -7.0 %",
    ];
    for (group, want) in fp8_kv_cache(FP8_SEED, Fp8Candidate::Fp8)
        .iter()
        .zip(expected)
    {
        let report = analyze(group, &settings);
        for f in &report.findings {
            println!("{}: {:?} {}", group.cell_key, f.kind, f.summary);
        }
        let tradeoffs: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.kind == FindingKind::Tradeoff)
            .collect();
        assert_eq!(tradeoffs.len(), 1, "{}", group.cell_key);
        let t = tradeoffs[0];
        // Where the finish times cross, from the compared medians:
        // N* = 1 + (TTFT_c − TTFT_b) / (TPOT_b − TPOT_c), longer than ⌈N*⌉ tokens.
        let means = |metric: &str| {
            let o = &report
                .series
                .iter()
                .find(|s| s.metric == metric && s.stat == p50())
                .and_then(|s| s.comparison.as_ref())
                .unwrap()
                .outcome;
            (o.baseline_mean, o.candidate_mean)
        };
        let (ttft, tpot) = (means("ttft"), means("tpot"));
        let (later, faster) = (ttft.1 - ttft.0, tpot.0 - tpot.1);
        assert!(later > 10.0 && faster > 0.0, "{later} {faster}");
        let want = format!(
            "{want}: starts {later:.0} ms later, finishes sooner for answers longer than {} tokens.",
            (1.0 + later / faster).ceil()
        );
        assert_eq!(t.summary, want);
        // As severe as its worst side: median TTFT +6.5 % or more is past the 5 % of `fail`.
        assert_eq!(t.severity, Some(Severity::Fail));
        assert_eq!(t.settings, settings);
        assert_eq!(t.baseline_commits.len(), 8);
        assert_eq!(t.candidate_commit.as_deref(), Some("fp8-kv-cache"));
        // Both throughputs, both TTFT statistics and E2E are its parts; none is reported again.
        let c = &group.cell_key[..group.cell_key.find(';').unwrap()];
        let n = c.trim_start_matches("max_concurrency=");
        for id in [
            "output_throughput/value",
            "request_throughput/value",
            "ttft/p50",
            "ttft/p95",
            "e2el/p50",
        ] {
            assert!(t.series_ids.contains(&format!("c{n}/{id}")), "{id}");
        }
        // The only other finding is TPOT's improvement (each token comes sooner); no regression.
        let others: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.kind != FindingKind::Tradeoff)
            .map(|f| (f.kind, f.metric.as_str()))
            .collect();
        assert_eq!(others, [(FindingKind::Improvement, "tpot")]);
        let json = serde_json::to_value(t).unwrap();
        assert_eq!(json["kind"], "tradeoff");
        assert_eq!(json["settings"]["min_effect_pct"], 2.0);
    }
    // A further baseline-like commit against the same history: no finding of any kind.
    for group in fp8_kv_cache(FP8_SEED, Fp8Candidate::BaselineLike) {
        let report = analyze(&group, &settings);
        assert!(report.findings.is_empty(), "{:?}", report.findings);
        assert!(report
            .series
            .iter()
            .all(|s| s.state == SeriesState::NoChange));
    }
}

#[test]
fn zero_spread_history_gives_a_finite_explained_result() {
    let settings = Settings::default();
    let history: Vec<CommitRuns> = (0..5)
        .map(|i| CommitRuns::new(format!("b{i}"), &[100.0, 100.0]))
        .collect();
    let same = analyze(
        &one(ttft(
            history.clone(),
            Some(CommitRuns::new("c", &[100.0, 100.0])),
        )),
        &settings,
    );
    assert!(same.findings.is_empty());
    assert_eq!(same.series[0].state, SeriesState::NoChange);
    let worse = analyze(
        &one(ttft(history, Some(CommitRuns::new("c", &[103.0, 103.0])))),
        &settings,
    );
    let f = &worse.findings[0];
    assert_eq!(f.kind, FindingKind::Regression);
    assert_eq!(f.test, Test::ZeroSpread);
    assert_eq!(f.p_value, None);
    assert_eq!(f.delta_pct, Some(3.0));
    assert_eq!(
        f.summary,
        "median TTFT +3.0 % (100.0 → 103.0 ms): zero run-to-run spread in 5 baseline commits, so decided on the effect alone."
    );
    // Serializes without NaN or infinity.
    let json = serde_json::to_string(f).unwrap();
    assert!(!json.contains("NaN") && !json.contains("inf"));
}

#[test]
fn two_files_offline_give_an_effect_only_finding() {
    let settings = Settings::default();
    let f = compare_pair(
        "id",
        "output_throughput",
        Stat::Value,
        ("base.json", 1000.0),
        ("cand.json", 950.0),
        &settings,
    )
    .unwrap();
    assert_eq!(f.kind, FindingKind::Regression);
    assert_eq!(f.test, Test::EffectOnly);
    assert_eq!(
        f.severity,
        Some(Severity::Warn),
        "never fail without a test"
    );
    assert_eq!(
        f.summary,
        "output throughput -5.0 % (1000.0 → 950.0 tok/s): effect only: one value per side and no history, not tested for significance."
    );
    assert!(f.notes[0].starts_with("effect only"));
    // Below the minimum effect: nothing.
    assert!(compare_pair(
        "id",
        "output_throughput",
        Stat::Value,
        ("a", 1000.0),
        ("b", 990.0),
        &settings
    )
    .is_none());
}

#[test]
fn fewer_than_three_baseline_commits_is_insufficient_data() {
    let settings = Settings::default();
    let mut history = vec![
        CommitRuns::new("b0", &[100.0, 101.0]),
        CommitRuns::new("b1", &[100.0, 99.0]),
    ];
    // An excluded run does not count as a baseline commit.
    history.push(CommitRuns {
        commit: "b2".into(),
        runs: vec![RunValue {
            value: 100.0,
            excluded: true,
            samples: None,
        }],
    });
    let r = analyze(
        &one(ttft(history, Some(CommitRuns::new("c", &[150.0, 151.0])))),
        &settings,
    );
    assert!(r.findings.is_empty());
    assert_eq!(r.series[0].state, SeriesState::InsufficientData);
    assert_eq!(
        r.series[0].reason.as_deref(),
        Some("2 baseline commit(s) with a valid run; at least 3 are needed")
    );
}

#[test]
fn a_series_absent_from_the_candidate_is_missing() {
    let settings = Settings::default();
    let history: Vec<CommitRuns> = (0..4)
        .map(|i| CommitRuns::new(format!("b{i}"), &[100.0]))
        .collect();
    let r = analyze(&one(ttft(history, None)), &settings);
    assert_eq!(r.series[0].state, SeriesState::Missing);
    let f = &r.findings[0];
    assert_eq!(f.kind, FindingKind::Missing);
    assert_eq!(
        f.summary,
        "median TTFT is missing from the candidate run but present in 4 baseline commit(s)."
    );
}

#[test]
fn a_pinned_baseline_overrides_the_window() {
    let settings = Settings::default();
    let mut history: Vec<CommitRuns> = (0..5)
        .map(|i| CommitRuns::new(format!("b{i}"), &[120.0, 121.0, 119.0]))
        .collect();
    history[1] = CommitRuns::new("pinned", &[100.0, 101.0, 99.0]);
    let mut g = one(ttft(
        history,
        Some(CommitRuns::new("c", &[120.0, 121.0, 119.5])),
    ));
    assert!(analyze(&g, &settings).findings.is_empty());
    g.pinned_baseline = Some("pinned".into());
    let r = analyze(&g, &settings);
    assert_eq!(r.findings[0].kind, FindingKind::Regression);
    assert_eq!(r.findings[0].baseline_commits, ["pinned"]);
    assert_eq!(r.findings[0].severity, Some(Severity::Fail));
}

#[test]
fn single_candidate_run_uses_the_prediction_interval() {
    let settings = Settings::default();
    let history: Vec<CommitRuns> = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0]
        .iter()
        .enumerate()
        .map(|(i, v)| CommitRuns::new(format!("b{i}"), &[*v]))
        .collect();
    let r = analyze(
        &one(ttft(history, Some(CommitRuns::new("c", &[110.0])))),
        &settings,
    );
    // One statistic is a family of one: its index is tested with the prediction interval of
    // one new commit mean, at the level the decision used (1 − α).
    let f = &r.findings[0];
    assert_eq!(f.test, Test::FamilyIndex);
    assert_eq!(f.kind, FindingKind::Regression);
    assert_eq!(f.df, Some(5.0));
    let (lo, hi) = f.prediction_interval.unwrap();
    assert!(lo < 100.0 && hi > 100.0 && hi < 110.0, "{lo} {hi}");
    // A latency's own test runs on its logarithms: the interval is multiplicative around the
    // level (the same factor below and above it) and says so.
    let own = &r.series[0].comparison.as_ref().unwrap().outcome;
    assert_eq!(
        own.scale,
        benchtrail_core::regression::significance::Scale::Log
    );
    let level = own.baseline_mean;
    assert!(
        ((level / lo) - (hi / level)).abs() < 1e-3 * (hi / level),
        "{lo} {level} {hi}"
    );
    assert!(
        f.summary
            .contains("outside the 99.95 % prediction interval of 6 baseline commits' means"),
        "{}",
        f.summary
    );
}

#[test]
fn settings_round_trip_as_json_with_defaults_for_missing_fields() {
    let s = Settings::default();
    let json = serde_json::to_string(&s).unwrap();
    let back: Settings = serde_json::from_str(&json).unwrap();
    assert_eq!(back, s);
    let partial: Settings = serde_json::from_str(r#"{"min_effect_pct": 3.0}"#).unwrap();
    assert_eq!(partial.min_effect_pct, 3.0);
    assert_eq!(partial.baseline_window, 10);
    assert!(serde_json::from_str::<Settings>(r#"{"nope": 1}"#).is_err());
}

#[test]
fn confounds_list_every_difference_and_warn() {
    let mut a = Configuration::default();
    a.engine.name = Some("vllm".into());
    a.engine.commit = Some("aaa".into());
    a.model.tokenizer = Some("tok-a".into());
    a.quantization.kv_cache_dtype = Some("auto".into());
    a.hardware.driver_version = Some("550".into());
    let mut b = a.clone();
    b.engine.commit = Some("bbb".into());
    b.quantization.kv_cache_dtype = Some("fp8".into());
    b.hardware.driver_version = Some("560".into());
    b.model.tokenizer = Some("tok-b".into());
    let cell_a = WorkloadCell {
        load: LoadShape {
            max_concurrency: Some(16),
            request_rate: Some(RequestRate::Infinite),
            burstiness: None,
        },
        ..Default::default()
    };
    let cell_b = WorkloadCell {
        load: LoadShape {
            max_concurrency: None,
            request_rate: Some(RequestRate::PerSecond(4.0)),
            burstiness: Some(1.0),
        },
        ..Default::default()
    };
    let r = confounds((&a, &cell_a), (&b, &cell_b), false);
    let fields: Vec<&str> = r.differences.iter().map(|d| d.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "cell.load.burstiness",
            "cell.load.max_concurrency",
            "cell.load.request_rate",
            "engine.commit",
            "hardware.driver_version",
            "model.tokenizer",
            "quantization.kv_cache_dtype",
        ]
    );
    let codes: Vec<&str> = r.warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(
        codes,
        [
            "several_factors_changed",
            "load_shape_differs",
            "tokenizer_differs",
            "quantization_without_quality",
        ]
    );
    assert_eq!(
        r.warnings[1].message,
        "load shapes differ (baseline fixed concurrency, candidate request rate): a fixed-concurrency test slows its own arrivals when the server slows, a request-rate test does not"
    );
    // Only the engine commit and one factor: no several-factors warning; a quality result
    // silences the quantization warning.
    let mut c = a.clone();
    c.engine.commit = Some("ccc".into());
    c.quantization.kv_cache_dtype = Some("fp8".into());
    let r = confounds((&a, &cell_a), (&c, &cell_a), true);
    assert_eq!(r.factors, ["quantization.kv_cache_dtype"]);
    assert!(r.warnings.is_empty());
}

#[test]
fn per_request_samples_describe_a_shift_but_never_open_a_finding() {
    let settings = Settings::default();
    let runs = |v: f64, shift: f64| RunValue {
        value: v,
        excluded: false,
        samples: Some((0..200).map(|i| 90.0 + (i % 20) as f64 + shift).collect()),
    };
    let history: Vec<CommitRuns> = (0..4)
        .map(|i| CommitRuns {
            commit: format!("b{i}"),
            runs: vec![runs(100.0 + i as f64 * 0.5, 0.0), runs(100.5, 0.0)],
        })
        .collect();
    // Run values unchanged, requests shifted by +5 ms: described, no finding.
    let cand = CommitRuns {
        commit: "c".into(),
        runs: vec![runs(100.4, 5.0), runs(100.6, 5.0)],
    };
    let r = analyze(&one(ttft(history, Some(cand))), &settings);
    assert!(r.findings.is_empty());
    let shift = r.series[0].per_request.as_ref().unwrap();
    assert_eq!(shift.shift, 5.0);
    assert!(shift.p_value < 1e-6);
    assert!(shift.note.contains("never opens an alert"));
}

fn history(values: &[f64]) -> Vec<CommitRuns> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| CommitRuns::new(format!("b{i}"), &[*v]))
        .collect()
}

#[test]
fn confirmation_waits_for_the_following_commits_and_refutes_a_change_that_goes_away() {
    let settings = Settings {
        confirm_commits: 2,
        ..Settings::default()
    };
    let base = history(&[100.0, 101.0, 99.0, 100.5, 99.5]);
    let candidate = Some(CommitRuns::new("step", &[120.0]));
    let with = |following: &[(&str, f64)]| {
        let mut s = ttft(base.clone(), candidate.clone());
        s.following = following
            .iter()
            .map(|(c, v)| CommitRuns::new(*c, &[*v]))
            .collect();
        analyze(&one(s), &settings)
    };
    // One of the two confirming commits so far: pending, no finding.
    let r = with(&[("n1", 121.0)]);
    assert_eq!(r.series[0].state, SeriesState::PendingConfirmation);
    assert!(r.findings.is_empty());
    // Both show the change: a regression at the step, confirmed by both.
    let r = with(&[("n1", 121.0), ("n2", 119.0)]);
    assert_eq!(r.series[0].state, SeriesState::Regression);
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].candidate_commit.as_deref(), Some("step"));
    assert_eq!(r.findings[0].confirmed_by, ["n1", "n2"]);
    // The second went back to the baseline: not confirmed, no finding.
    let r = with(&[("n1", 121.0), ("n2", 100.2)]);
    assert_eq!(r.series[0].state, SeriesState::NotConfirmed);
    assert!(r.findings.is_empty());
    // A following commit that changed the other way does not confirm either.
    let r = with(&[("n1", 80.0), ("n2", 121.0)]);
    assert_eq!(r.series[0].state, SeriesState::NotConfirmed);
}

#[test]
fn failures_from_a_baseline_of_none_are_a_finding_with_no_percent() {
    let failed = SeriesInput {
        series_id: "failed".into(),
        metric: "failed".into(),
        stat: Stat::Value,
        slo_profile: None,
        history: history(&[0.0, 0.0, 0.0, 0.0]),
        candidate: Some(CommitRuns::new("c", &[2.0])),
        following: Vec::new(),
    };
    let r = analyze(&one(failed.clone()), &Settings::default());
    assert_eq!(r.findings.len(), 1);
    let f = &r.findings[0];
    assert_eq!(f.kind, FindingKind::Regression);
    assert_eq!(f.delta_pct, None);
    assert_eq!(f.severity, Some(Severity::Warn));
    assert_eq!(
        f.summary,
        "failed requests from 0 (0 → 2.00 requests): zero run-to-run spread in 4 baseline commits, so decided on the effect alone."
    );
    // Still none: no finding.
    let none = SeriesInput {
        candidate: Some(CommitRuns::new("c", &[0.0])),
        ..failed
    };
    assert!(analyze(&one(none), &Settings::default())
        .findings
        .is_empty());
}

#[test]
fn a_tradeoff_whose_worse_side_is_small_is_a_warning() {
    // Throughput +10 %, median TTFT +3 %: both significant (zero spread), TTFT below the 5 %
    // of `fail`.
    let series = |id: &str, metric: &str, stat: Stat, base: f64, cand: f64| SeriesInput {
        series_id: id.into(),
        metric: metric.into(),
        stat,
        slo_profile: None,
        history: history(&[base, base, base]),
        candidate: Some(CommitRuns::new("c", &[cand])),
        following: Vec::new(),
    };
    let group = GroupInput {
        series_key: "k".into(),
        cell_key: "c".into(),
        pinned_baseline: None,
        series: vec![
            series("tp", "output_throughput", Stat::Value, 1000.0, 1100.0),
            series("ttft", "ttft", p50(), 100.0, 103.0),
        ],
    };
    let r = analyze(&group, &Settings::default());
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].kind, FindingKind::Tradeoff);
    assert_eq!(r.findings[0].severity, Some(Severity::Warn));
    assert_eq!(
        r.findings[0].summary,
        "output throughput +10.0 % but median TTFT +3.0 %."
    );
}

#[test]
fn a_pinned_commit_of_one_run_takes_its_spread_from_the_history() {
    // History about 100 ± 1 ms; the pinned commit measured 90 once; the candidate 100.
    let mut base = history(&[100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8]);
    base.push(CommitRuns::new("pin", &[90.0]));
    let mut g = one(ttft(base, Some(CommitRuns::new("c", &[100.0]))));
    g.pinned_baseline = Some("pin".into());
    let r = analyze(&g, &Settings::default());
    assert_eq!(r.findings.len(), 1, "{:#?}", r.findings);
    let f = &r.findings[0];
    assert_eq!((f.kind, f.test), (FindingKind::Regression, Test::PinnedT));
    assert_eq!(f.baseline_commits, ["pin"]);
    assert_eq!(
        (f.baseline_value, f.candidate_value),
        (Some(90.0), Some(100.0))
    );
    // Spread of the 7 history values (s = 0.6737...), df 6: t = 10 / (s · sqrt(2)).
    assert_eq!(f.df, Some(6.0));
    let vals = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8];
    let m = vals.iter().sum::<f64>() / 7.0;
    let sd = (vals.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / 6.0).sqrt();
    assert!((f.statistic.unwrap() - 10.0 / (sd * 2f64.sqrt())).abs() < 1e-9);
    assert!(
        f.summary
            .ends_with("against the pinned baseline, with the run-to-run spread of 7 recent runs."),
        "{}",
        f.summary
    );
    // Without any history besides the pin, one value per side: effect only.
    let mut g = one(ttft(
        vec![CommitRuns::new("pin", &[90.0])],
        Some(CommitRuns::new("c", &[100.0])),
    ));
    g.pinned_baseline = Some("pin".into());
    assert_eq!(
        analyze(&g, &Settings::default()).findings[0].test,
        Test::EffectOnly
    );
}

#[test]
fn only_tested_statistics_are_findings_and_missing_series_are_one_finding() {
    let series = |id: &str, stat: Stat, cand: Option<f64>| SeriesInput {
        series_id: id.into(),
        metric: "ttft".into(),
        stat,
        slo_profile: None,
        history: history(&[100.0, 100.0, 100.0]),
        candidate: cand.map(|v| CommitRuns::new("c", &[v])),
        following: Vec::new(),
    };
    let group = |s: Vec<SeriesInput>| GroupInput {
        series_key: "k".into(),
        cell_key: "c".into(),
        pinned_baseline: None,
        series: s,
    };
    // min and p50 both +20 %: only p50 is tested.
    let r = analyze(
        &group(vec![
            series("min", Stat::Min, Some(120.0)),
            series("p50", p50(), Some(120.0)),
        ]),
        &Settings::default(),
    );
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].series_ids, ["p50"]);
    assert_eq!(r.series[0].state, SeriesState::Descriptive);
    // Three series absent from the candidate (min is not tested): one finding for both others.
    let r = analyze(
        &group(vec![
            series("min", Stat::Min, None),
            series("p50", p50(), None),
            series("p99", Stat::Percentile("99".into()), None),
        ]),
        &Settings::default(),
    );
    assert_eq!(r.findings.len(), 1);
    let f = &r.findings[0];
    assert_eq!(f.kind, FindingKind::Missing);
    assert_eq!(f.series_ids, ["p50", "p99"]);
    assert_eq!(
        f.summary,
        "2 series are missing from the candidate run but present in up to 3 baseline commit(s): TTFT (p50, p99)."
    );
    // A latency statistic at 0 ms is not a state to leave: no finding from a zero baseline.
    let mut zero = series("p50", p50(), Some(0.6));
    zero.history = history(&[0.0, 0.0, 0.0]);
    assert!(analyze(&group(vec![zero]), &Settings::default())
        .findings
        .is_empty());
}

#[test]
fn a_series_absent_from_a_result_that_is_there_is_not_measured_and_no_finding() {
    let history: Vec<CommitRuns> = (0..4)
        .map(|i| CommitRuns::new(format!("b{i}"), &[100.0]))
        .collect();
    let mut tpot = ttft(history.clone(), None);
    tpot.series_id = "tpot".into();
    tpot.metric = "tpot".into();
    let group = GroupInput {
        series: vec![ttft(history, Some(CommitRuns::new("c", &[100.0]))), tpot],
        ..one(ttft(Vec::new(), None))
    };
    let r = analyze(&group, &Settings::default());
    assert_eq!(r.series[0].state, SeriesState::NoChange);
    assert_eq!(r.series[1].state, SeriesState::NotMeasured);
    assert_eq!(
        r.series[1].reason.as_deref(),
        Some("not measured: the candidate's result of this cell lacks it")
    );
    assert!(r.findings.is_empty());
}

#[test]
fn an_undecided_change_says_what_would_decide_it_and_never_a_huge_detectable_change() {
    // 10 baseline commits at CV ≈ 2 % and a +9 % candidate: not significant at α = 0.0005 on
    // one run, decidable with repeats.
    let noisy = [
        100.0, 102.5, 98.0, 101.0, 99.0, 103.0, 97.5, 100.5, 101.5, 98.5,
    ];
    let history: Vec<CommitRuns> = noisy
        .iter()
        .enumerate()
        .map(|(i, v)| CommitRuns::new(format!("b{i}"), &[*v]))
        .collect();
    let r = analyze(
        &one(ttft(history, Some(CommitRuns::new("c", &[109.0])))),
        &Settings::default(),
    );
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(r.undecided.len(), 1);
    let u = &r.undecided[0];
    assert_eq!(u.repeats_needed, Some(3), "{u:?}");
    assert_eq!(
        u.summary,
        "TTFT +8.9 %: not significant with 1 run(s) per commit (detectable here: ±11.0 %); \
         3 runs on every commit (`detection.repeats`) would detect ≥ 7.3 %"
    );

    // 3 baseline commits: 2 degrees of freedom, so the critical t decides and repeats barely
    // help. Said as too little history, with the history that would decide it.
    let history: Vec<CommitRuns> = noisy[..3]
        .iter()
        .enumerate()
        .map(|(i, v)| CommitRuns::new(format!("b{i}"), &[*v]))
        .collect();
    let r = analyze(
        &one(ttft(history, Some(CommitRuns::new("c", &[120.0])))),
        &Settings::default(),
    );
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let u = &r.undecided[0];
    assert_eq!(u.repeats_needed, None);
    assert_eq!(
        u.summary,
        "TTFT +19.8 %: not decided: 3 baseline commits are too few to tell a change of \
         this size from noise; with 8 baseline commits at this noise it would be detected"
    );
    // Smaller: no history within the spread window decides it on one run.
    let r = analyze(
        &one(ttft(
            noisy[..3]
                .iter()
                .enumerate()
                .map(|(i, v)| CommitRuns::new(format!("b{i}"), &[*v]))
                .collect(),
            Some(CommitRuns::new("c", &[108.0])),
        )),
        &Settings::default(),
    );
    assert_eq!(
        r.undecided[0].summary,
        "TTFT +7.8 %: not decided: 3 baseline commits are too few to tell a change of this \
         size from noise; more history and repeats are needed"
    );
}

#[test]
fn a_large_undecided_worsening_is_a_warning_never_no_regressions() {
    use benchtrail_core::report::render::{render, Format};
    use benchtrail_core::report::{verdict_of, ReasonCode, VerdictLevel};
    use benchtrail_core::settings::DetectionSettings;
    // Three baseline commits and a TTFT +19.8 %: too little history to decide.
    let history: Vec<CommitRuns> = [100.0, 102.5, 98.0]
        .iter()
        .enumerate()
        .map(|(i, v)| CommitRuns::new(format!("b{i}"), &[*v]))
        .collect();
    let report = analyze(
        &one(ttft(history, Some(CommitRuns::new("c", &[120.0])))),
        &Settings::default(),
    );
    assert!(report.findings.is_empty());
    let analysis = crate::common::main_analysis(vec![crate::common::cell_analysis(
        "max_concurrency=4",
        report.clone(),
    )]);
    let v = verdict_of(
        uuid::Uuid::nil(),
        &analysis.commit,
        Some(&analysis),
        &[],
        &DetectionSettings::default(),
    );
    assert_eq!(v.verdict, VerdictLevel::Warn);
    assert_eq!(v.reasons.len(), 1);
    assert_eq!(v.reasons[0].code, ReasonCode::Undecided);
    assert_eq!(v.reasons[0].message, report.undecided[0].summary);
    let text = render(&v, Some(&analysis), Format::Terminal);
    assert!(
        text.starts_with("benchtrail verdict: WARN at commit cccccccccccc\n"),
        "{text}"
    );
    assert!(!text.contains("no regressions"), "{text}");
    assert!(text.contains("not decided (more runs or more history would decide):\n  [max_concurrency=4] TTFT +19.8 %: not decided: 3 baseline commits are too few"), "{text}");
}
