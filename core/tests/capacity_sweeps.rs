//! Capacity at SLO on real files (`benchtrail_core::capacity`), each figure checked against a
//! value computed here independently: a direct loop over the per-request records as the tool
//! wrote them (AIPerf's `profile_export.jsonl`, vLLM's `--save-detailed` arrays), or the
//! stored statistics read from the JSON, never through the adapters.
//!
//! Files: AIPerf 0.13.0 against the baseline and candidate mock servers at concurrency 1, 4
//! and 16 (`testdata/aiperf/{baseline,candidate}_completions_c{1,4,16}_isl512_osl128/`; the
//! candidate trades a slower first token for faster decoding), vLLM 0.33.0 runs of the same
//! servers at concurrency 1 and 4 (`examples/history/`), guidellm 0.8.1 `concurrent` 1/4/16
//! (`testdata/guidellm/`: stored percentiles only), and the public vLLM sample with six request
//! rates in one file (`testdata/vllm/nerdalert-...jsonl`: no per-request data and no goodput,
//! so it has sweeps and stored p99s but no attainment).

use crate::common;

use benchtrail_core::adapters::{parse_file, read_files, FileSpec};
use benchtrail_core::bootstrap;
use benchtrail_core::capacity::{
    build_sweeps, capacity_change, compare_wait, crossover, medians_of, sentence, slo_curve,
    slowest_wait, AttainmentSource, Capacity, ChangeBound, ChangeRefusal, LoadRefusal, SloCurve,
    Sweep, SweepRefusal, SweepSet, SweepShape, WaitBasis, DEFAULT_TARGET,
};
use benchtrail_core::metric::Unit;
use benchtrail_core::slo::{self, SloProfile};
use benchtrail_core::BenchResult;
use common::read;
use serde_json::Value;

const LOADS: [u64; 3] = [1, 4, 16];

fn run_dir(side: &str, c: u64) -> String {
    format!("testdata/aiperf/{side}_completions_c{c}_isl512_osl128")
}

/// The AIPerf results of one side at concurrency 1, 4, 16, read as one upload of three folders.
fn aiperf_side(side: &str) -> Vec<BenchResult> {
    let files: Vec<(String, String)> = LOADS
        .iter()
        .flat_map(|c| {
            let dir = run_dir(side, *c);
            ["profile_export_aiperf.json", "profile_export.jsonl"]
                .map(|f| (format!("c{c}/{f}"), read(&format!("{dir}/{f}"))))
        })
        .collect();
    let specs: Vec<FileSpec> = files
        .iter()
        .map(|(name, text)| FileSpec {
            name,
            format: None,
            text,
        })
        .collect();
    read_files(&specs)
        .unwrap()
        .into_iter()
        .flat_map(|f| f.results)
        .collect()
}

/// One request as AIPerf recorded it (profiling phase only), ms.
struct Record {
    ok: bool,
    ttft: f64,
    /// AIPerf's own per-request `inter_token_latency`: (E2E − TTFT) / (OSL − 1).
    tpot: f64,
    e2el: f64,
}

fn records(side: &str, c: u64) -> Vec<Record> {
    read(&format!("{}/profile_export.jsonl", run_dir(side, c)))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["metadata"]["benchmark_phase"] != "warmup")
        .map(|r| {
            let ms = |tag: &str| {
                let m = &r["metrics"][tag];
                assert_eq!(m["unit"], "ms", "{tag}");
                m["value"].as_f64().unwrap()
            };
            Record {
                ok: r.get("error").is_none_or(Value::is_null),
                ttft: ms("time_to_first_token"),
                tpot: ms("inter_token_latency"),
                e2el: ms("request_latency"),
            }
        })
        .collect()
}

/// The run's `benchmark_duration` (s) as the summary states it.
fn duration_s(side: &str, c: u64) -> f64 {
    let s: Value = serde_json::from_str(&read(&format!(
        "{}/profile_export_aiperf.json",
        run_dir(side, c)
    )))
    .unwrap();
    assert_eq!(s["benchmark_duration"]["unit"], "sec");
    s["benchmark_duration"]["avg"].as_f64().unwrap()
}

/// (attainment, achieved throughput req/s) of one run under thresholds (ms), by a direct loop.
fn direct(side: &str, c: u64, ttft_ms: f64, tpot_ms: f64) -> (f64, f64) {
    let recs = records(side, c);
    let met = recs
        .iter()
        .filter(|r| r.ok && r.ttft <= ttft_ms && r.tpot <= tpot_ms)
        .count();
    let completed = recs.iter().filter(|r| r.ok).count();
    (
        met as f64 / recs.len() as f64,
        completed as f64 / duration_s(side, c),
    )
}

fn profile(name: &str, ttft_ms: f64, tpot_ms: f64) -> SloProfile {
    SloProfile {
        name: name.into(),
        ttft_ms: Some(ttft_ms),
        tpot_ms: Some(tpot_ms),
        e2el_ms: None,
    }
}

fn only_sweep<'a>(set: &'a SweepSet<'a>) -> &'a Sweep<'a> {
    assert_eq!(set.refused, vec![]);
    assert_eq!(set.sweeps.len(), 1);
    &set.sweeps[0]
}

fn curve(side: &[BenchResult], p: &SloProfile) -> SloCurve {
    let set = build_sweeps(side, &[]);
    slo_curve(only_sweep(&set), p, DEFAULT_TARGET)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn aiperf_runs_at_three_concurrencies_make_one_concurrency_sweep_per_side() {
    for side in ["baseline", "candidate"] {
        let results = aiperf_side(side);
        assert_eq!(results.len(), 3);
        let set = build_sweeps(&results, &[]);
        let s = only_sweep(&set);
        assert_eq!(s.shape, SweepShape::Concurrency);
        assert_eq!(s.shape.load_unit(), Unit::Requests);
        let loads: Vec<f64> = s.points.iter().map(|p| p.load).collect();
        assert_eq!(loads, vec![1.0, 4.0, 16.0]);
        // 20, 60 and 160 requests: num_prompts is not part of a sweep's cell.
        assert!(!s.key.cell.contains("num_prompts"), "{}", s.key.cell);
    }
    // Both sides share the sweep key: they are one comparison.
    let (b, c) = (aiperf_side("baseline"), aiperf_side("candidate"));
    assert_eq!(
        only_sweep(&build_sweeps(&b, &[])).key,
        only_sweep(&build_sweeps(&c, &[])).key
    );
}

#[test]
fn attainment_per_load_matches_a_direct_count_of_the_records() {
    let p = profile("chat", 120.0, 12.0);
    for side in ["baseline", "candidate"] {
        let cv = curve(&aiperf_side(side), &p);
        assert_eq!(cv.points.len(), 3);
        for (pt, c) in cv.points.iter().zip(LOADS) {
            let recs = records(side, c);
            let (attainment, throughput) = direct(side, c, 120.0, 12.0);
            assert_eq!(pt.load, c as f64);
            assert_eq!(pt.attempted, recs.len() as u64);
            assert_eq!(pt.failed, recs.iter().filter(|r| !r.ok).count() as u64);
            assert_eq!(pt.attainment, attainment, "{side} c{c}");
            assert!(close(pt.throughput_rps, throughput), "{side} c{c}");
            assert_eq!(pt.source, AttainmentSource::Samples);
        }
    }
}

#[test]
fn capacities_and_the_change_in_requests_per_hour() {
    // TTFT ≤ 120 ms and TPOT ≤ 12 ms. Measured attainments (direct count):
    // baseline 1.0, 1.0, 0.0 (its TPOT passes 12 ms at 16); candidate 0.95, 1.0, 0.9 (its TTFT).
    let p = profile("chat", 120.0, 12.0);
    let a = |side, c| direct(side, c, 120.0, 12.0);
    assert_eq!(
        [a("baseline", 1).0, a("baseline", 4).0, a("baseline", 16).0],
        [1.0, 1.0, 0.0]
    );
    assert_eq!(
        [
            a("candidate", 1).0,
            a("candidate", 4).0,
            a("candidate", 16).0
        ],
        [0.95, 1.0, 0.9]
    );
    // The crossing between 4 and 16, at the fraction (a₄ − 0.95)/(a₄ − a₁₆) of the way.
    let expected = |side| {
        let ((a4, x4), (a16, x16)) = (a(side, 4), a(side, 16));
        let f = (a4 - 0.95) / (a4 - a16);
        (4.0 + f * 12.0, x4 + f * (x16 - x4))
    };
    let (b_load, b_x) = expected("baseline");
    let (c_load, c_x) = expected("candidate");
    assert!(
        close(b_load, 4.6) && close(c_load, 10.0),
        "{b_load} {c_load}"
    );

    let base = curve(&aiperf_side("baseline"), &p);
    let cand = curve(&aiperf_side("candidate"), &p);
    for (cv, load, x) in [(&base, b_load, b_x), (&cand, c_load, c_x)] {
        match cv.capacity.unwrap() {
            Capacity::Within {
                load: l,
                throughput_rps,
                interpolated,
                between,
            } => {
                assert!(close(l, load), "{l} vs {load}");
                assert!(close(throughput_rps, x), "{throughput_rps} vs {x}");
                assert!(interpolated);
                assert_eq!(between, [4.0, 16.0]);
            }
            other => panic!("{other:?}"),
        }
    }
    let change = capacity_change(&base, &cand).unwrap();
    assert_eq!(change.bound, ChangeBound::Estimate);
    assert_eq!(change.shape, SweepShape::Concurrency);
    assert!(close(change.baseline_requests_per_hour, b_x * 3600.0));
    assert!(close(change.candidate_requests_per_hour, c_x * 3600.0));
    assert!(close(change.change_requests_per_hour, (c_x - b_x) * 3600.0));
    // The figures: baseline 4.6 concurrent requests, 10 747 requests/hour; candidate 10
    // concurrent, 26 478 requests/hour; +15 731 requests/hour.
    assert_eq!(
        [
            change.baseline_requests_per_hour.round(),
            change.candidate_requests_per_hour.round(),
            change.change_requests_per_hour.round()
        ],
        [10747.0, 26478.0, 15731.0]
    );
    println!(
        "capacity chat: baseline {b_load} ({:.0} req/h), candidate {c_load} ({:.0} req/h), change {:+.0} req/h",
        b_x * 3600.0,
        c_x * 3600.0,
        (c_x - b_x) * 3600.0
    );
}

#[test]
fn highest_load_meeting_the_slo_is_at_least_and_lowest_failing_is_below_lowest() {
    // TTFT ≤ 200 ms, TPOT ≤ 12 ms: the candidate meets it at every concurrency measured.
    let loose = profile("loose", 200.0, 12.0);
    let cand = curve(&aiperf_side("candidate"), &loose);
    let (a16, x16) = direct("candidate", 16, 200.0, 12.0);
    assert_eq!(a16, 1.0);
    let Some(Capacity::AtLeast {
        load,
        throughput_rps,
    }) = cand.capacity
    else {
        panic!("{:?}", cand.capacity)
    };
    assert_eq!(load, 16.0);
    assert!(close(throughput_rps, x16));
    let base = curve(&aiperf_side("baseline"), &loose);
    let change = capacity_change(&base, &cand).unwrap();
    assert_eq!(change.bound, ChangeBound::AtLeast);

    // TTFT ≤ 60 ms, TPOT ≤ 15.6 ms: the candidate's slower first token fails it already at 1.
    let fast_start = profile("fast-start", 60.0, 15.6);
    let cand = curve(&aiperf_side("candidate"), &fast_start);
    let (a1, x1) = direct("candidate", 1, 60.0, 15.6);
    assert_eq!(a1, 0.0);
    let Some(Capacity::BelowLowest {
        load,
        throughput_rps,
    }) = cand.capacity
    else {
        panic!("{:?}", cand.capacity)
    };
    assert_eq!(load, 1.0);
    assert!(close(throughput_rps, x1));
    // The baseline meets it exactly at 4 (57 of 60 requests): capacity 4, not interpolated.
    assert_eq!(direct("baseline", 4, 60.0, 15.6).0, 0.95);
    let base = curve(&aiperf_side("baseline"), &fast_start);
    assert_eq!(
        base.capacity.map(|c| (
            c.load(),
            matches!(
                c,
                Capacity::Within {
                    interpolated: false,
                    ..
                }
            )
        )),
        Some((4.0, true))
    );
    assert_eq!(
        capacity_change(&base, &cand).unwrap().bound,
        ChangeBound::AtMost
    );
}

/// numpy's `linear` percentile, written out here.
fn percentile(values: &[f64], p: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 * p / 100.0;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (h - h.floor())
}

#[test]
fn slowest_users_wait_at_a_measured_and_an_interpolated_typical_load() {
    let (b, c) = (aiperf_side("baseline"), aiperf_side("candidate"));
    let (bs, cs) = (build_sweeps(&b, &[]), build_sweeps(&c, &[]));
    let (bsw, csw) = (only_sweep(&bs), only_sweep(&cs));
    let ok_values = |side, c, pick: fn(&Record) -> f64| -> Vec<f64> {
        records(side, c).iter().filter(|r| r.ok).map(pick).collect()
    };
    // Typical load 4: measured.
    let w = compare_wait(bsw, csw, 4.0).unwrap();
    for (side, wait) in [("baseline", &w.baseline), ("candidate", &w.candidate)] {
        assert_eq!(wait.basis, WaitBasis::Measured { load: 4.0 });
        let ttft = ok_values(side, 4, |r| r.ttft);
        let e2el = ok_values(side, 4, |r| r.e2el);
        for (est, values, p) in [
            (&wait.ttft_p95, &ttft, 95.0),
            (&wait.ttft_p99, &ttft, 99.0),
            (&wait.e2el_p95, &e2el, 95.0),
            (&wait.e2el_p99, &e2el, 99.0),
        ] {
            let est = est.as_ref().unwrap();
            assert!(close(est.value_ms, percentile(values, p)), "{side} p{p}");
            let k = usize::from(p == 99.0);
            let ci = est.interval.as_ref().unwrap();
            assert_eq!(
                ci,
                &bootstrap::percentile_intervals(values, &[95.0, 99.0]).unwrap()[k]
            );
            assert!(
                ci.low <= est.value_ms && est.value_ms <= ci.high,
                "{side} p{p} {ci:?}"
            );
        }
    }
    // The candidate's slowest first tokens are slower: its p99 TTFT at 4 is higher.
    assert!(
        w.candidate.ttft_p99.as_ref().unwrap().value_ms
            > w.baseline.ttft_p99.as_ref().unwrap().value_ms
    );

    // Typical load 8: a third of the way from 4 to 16.
    let w = slowest_wait(bsw, 8.0).unwrap();
    assert_eq!(
        w.basis,
        WaitBasis::Interpolated {
            between: [4.0, 16.0]
        }
    );
    let (p4, p16) = (
        percentile(&ok_values("baseline", 4, |r| r.ttft), 99.0),
        percentile(&ok_values("baseline", 16, |r| r.ttft), 99.0),
    );
    let est = w.ttft_p99.unwrap();
    assert!(
        close(est.value_ms, p4 + (p16 - p4) / 3.0),
        "{} {p4} {p16}",
        est.value_ms
    );
    let ci = est.interval.unwrap();
    assert!(ci.low <= est.value_ms && est.value_ms <= ci.high);
    // Never extrapolated.
    assert!(slowest_wait(bsw, 32.0).is_err());
}

/// A result with its median TTFT and TPOT (ms) as its file states them.
type Medianed = (BenchResult, f64, f64);

#[test]
fn crossover_is_exact_to_the_token_on_the_stored_medians() {
    // The generated trade-off fixture: vLLM 0.33.0 at concurrency 1 and 4, and AIPerf at 1, 4,
    // 16. Medians read from the JSON directly.
    let vllm = |side: &str, c: u64| -> Medianed {
        let path = format!("examples/history/{side}_completions_c{c}_isl512_osl128.json");
        let text = read(&path);
        let v: Value = serde_json::from_str(&text).unwrap();
        let (_, mut results) = parse_file(None, &text, 0).unwrap();
        (
            results.remove(0),
            v["median_ttft_ms"].as_f64().unwrap(),
            v["median_tpot_ms"].as_f64().unwrap(),
        )
    };
    let mut cases: Vec<(String, Medianed, Medianed)> = [1, 4]
        .iter()
        .map(|c| {
            (
                format!("vllm c{c}"),
                vllm("baseline", *c),
                vllm("candidate", *c),
            )
        })
        .collect();
    let (b, c) = (aiperf_side("baseline"), aiperf_side("candidate"));
    for (i, conc) in LOADS.iter().enumerate() {
        let summary = |side: &str| -> (f64, f64) {
            let s: Value = serde_json::from_str(&read(&format!(
                "{}/profile_export_aiperf.json",
                run_dir(side, *conc)
            )))
            .unwrap();
            (
                s["time_to_first_token"]["p50"].as_f64().unwrap(),
                s["inter_token_latency"]["p50"].as_f64().unwrap(),
            )
        };
        let (bt, bp) = summary("baseline");
        let (ct, cp) = summary("candidate");
        cases.push((
            format!("aiperf c{conc}"),
            (b[i].clone(), bt, bp),
            (c[i].clone(), ct, cp),
        ));
    }
    for (name, (base, bt, bp), (cand, ct, cp)) in cases {
        let x = crossover(medians_of(&base).unwrap(), medians_of(&cand).unwrap())
            .unwrap_or_else(|| panic!("{name}: the candidate starts later and streams faster"));
        let n_star = 1.0 + (ct - bt) / (bp - cp);
        assert_eq!(x.n_star, n_star, "{name}");
        assert_eq!(x.longer_than_tokens, n_star.ceil() as u64, "{name}");
        // To the token: at K − 1 tokens the baseline still finishes first, at K + 1 the
        // candidate does.
        let finish = |ttft: f64, tpot: f64, n: u64| ttft + (n as f64 - 1.0) * tpot;
        let k = x.longer_than_tokens;
        assert!(finish(ct, cp, k - 1) > finish(bt, bp, k - 1), "{name}");
        assert!(finish(ct, cp, k + 1) < finish(bt, bp, k + 1), "{name}");
        println!("{name}: N* = {n_star}: {}", sentence(&x));
    }
}

#[test]
fn tool_goodput_is_used_without_samples_and_agrees_with_the_records() {
    // vLLM 0.33.0 `--goodput ttft:37 tpot:10.6 e2el:1800`: 60 requests at concurrency 4.
    let path = "examples/history/goodput_tight_baseline_s15_c4.json";
    let text = read(path);
    let v: Value = serde_json::from_str(&text).unwrap();
    let (_, mut results) = parse_file(None, &text, 0).unwrap();
    let mut r = results.remove(0);
    r.configuration.benchmark.command =
        Some("vllm bench serve --max-concurrency 4 --goodput ttft:37 tpot:10.6 e2el:1800".into());
    slo::annotate_tool_goodput(&mut r);
    let p = SloProfile {
        name: "tight".into(),
        ttft_ms: Some(37.0),
        tpot_ms: Some(10.6),
        e2el_ms: Some(1800.0),
    };
    // Direct count over vLLM's arrays (s), with vLLM's TPOT (latency − ttft)/(output − 1).
    let arr = |k: &str| -> Vec<Value> { v[k].as_array().unwrap().clone() };
    let (ttfts, lats, lens, errs) = (
        arr("ttfts"),
        arr("latencies"),
        arr("output_lens"),
        arr("errors"),
    );
    let good = (0..ttfts.len())
        .filter(|&i| {
            let (t, l) = (ttfts[i].as_f64().unwrap(), lats[i].as_f64().unwrap());
            let n = lens[i].as_f64().unwrap();
            errs[i] == "" && t <= 0.037 && (l - t) / (n - 1.0) <= 0.0106 && l <= 1.8
        })
        .count() as u64;
    let with_samples = [r.clone()];
    let mut without = r;
    without.samples = None;
    let without = [without];
    let point = |rs: &[BenchResult]| {
        let set = build_sweeps(rs, &[]);
        slo_curve(only_sweep(&set), &p, DEFAULT_TARGET).points[0].clone()
    };
    let (s, t) = (point(&with_samples), point(&without));
    assert_eq!(
        (s.source, t.source),
        (AttainmentSource::Samples, AttainmentSource::Tool)
    );
    assert_eq!((s.met, t.met), (good, good));
    assert_eq!(good, 18);
    assert_eq!((s.attempted, t.attempted), (60, 60));
    assert_eq!(t.throughput_rps, v["request_throughput"].as_f64().unwrap());
    assert!(close(t.goodput_rps, v["request_goodput"].as_f64().unwrap()));
}

#[test]
fn public_vllm_rate_sweeps_have_stored_tails_but_no_attainment() {
    let text = read(
        "testdata/vllm/nerdalert-benchmark_serving-v0.8-append-result-llama31-8b-2025-04.jsonl",
    );
    let lines: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (_, results) = parse_file(None, &text, 0).unwrap();
    assert_eq!(results.len(), 12);
    let set = build_sweeps(&results, &[]);
    // One request_rate sweep per framework (vLLM, SGLang), the `inf` runs refused.
    assert_eq!(set.sweeps.len(), 2);
    for s in &set.sweeps {
        assert_eq!(s.shape, SweepShape::RequestRate);
        let loads: Vec<f64> = s.points.iter().map(|p| p.load).collect();
        assert_eq!(loads, vec![1.0, 10.0, 20.0, 30.0, 35.0]);
    }
    let mut refused: Vec<(usize, LoadRefusal)> = set
        .refused
        .iter()
        .map(|r| match r.reason {
            SweepRefusal::Load { result, refusal } => (result, refusal),
            ref other => panic!("{other:?}"),
        })
        .collect();
    refused.sort_by_key(|r| r.0);
    assert_eq!(
        refused,
        vec![(5, LoadRefusal::Unbounded), (11, LoadRefusal::Unbounded)]
    );
    assert_eq!(lines[5]["request_rate"], "inf");
    // Neither per-request data nor goodput: no attainment, and no comparison.
    let p = SloProfile::interactive();
    let curves: Vec<SloCurve> = set
        .sweeps
        .iter()
        .map(|s| slo_curve(s, &p, DEFAULT_TARGET))
        .collect();
    assert!(curves
        .iter()
        .all(|c| c.points.is_empty() && c.capacity.is_none()));
    assert!(matches!(
        capacity_change(&curves[0], &curves[1]),
        Err(ChangeRefusal::NotComputable { .. })
    ));
    // The slowest users' wait at 25 req/s: halfway between the stored p99 TTFT at 20 and 30.
    for s in &set.sweeps {
        let framework = s.points[0].results[0].configuration.metadata["framework"].clone();
        let p99 = |rate: f64| {
            lines
                .iter()
                .find(|l| l["framework"] == framework.as_str() && l["request_rate"] == rate)
                .unwrap()["p99_ttft_ms"]
                .as_f64()
                .unwrap()
        };
        let w = slowest_wait(s, 25.0).unwrap();
        let est = w.ttft_p99.unwrap();
        assert!(
            close(est.value_ms, (p99(20.0) + p99(30.0)) / 2.0),
            "{framework}"
        );
        assert_eq!(est.interval, None);
        // The file has no p95.
        assert_eq!(w.ttft_p95, None);
    }
}

/// (attainment, achieved throughput req/s) of a vLLM `--save-detailed` run under thresholds
/// (ms), by a direct loop over its arrays (s), with vLLM's TPOT (latency − ttft)/(output − 1).
fn vllm_direct(v: &Value, ttft_ms: f64, tpot_ms: f64) -> (f64, f64) {
    let arr = |k: &str| v[k].as_array().unwrap();
    let (ttfts, lats, lens, errs) = (
        arr("ttfts"),
        arr("latencies"),
        arr("output_lens"),
        arr("errors"),
    );
    let ok = |i: usize| errs[i] == "";
    let met = (0..ttfts.len())
        .filter(|&i| {
            let (t, l, n) = (
                ttfts[i].as_f64().unwrap(),
                lats[i].as_f64().unwrap(),
                lens[i].as_f64().unwrap(),
            );
            ok(i) && t <= ttft_ms / 1000.0 && (l - t) / (n - 1.0) <= tpot_ms / 1000.0
        })
        .count();
    let completed = (0..ttfts.len()).filter(|&i| ok(i)).count();
    (
        met as f64 / ttfts.len() as f64,
        completed as f64 / v["duration"].as_f64().unwrap(),
    )
}

#[test]
fn vllm_sweeps_at_concurrency_1_and_4_against_the_detailed_arrays() {
    let side = |name: &str| -> (Vec<BenchResult>, Vec<Value>) {
        [1, 4]
            .map(|c| {
                let text = read(&format!(
                    "examples/history/{name}_completions_c{c}_isl512_osl128.json"
                ));
                let (_, mut r) = parse_file(None, &text, 0).unwrap();
                (r.remove(0), serde_json::from_str::<Value>(&text).unwrap())
            })
            .into_iter()
            .unzip()
    };
    let (b, bv) = side("baseline");
    let (c, cv) = side("candidate");
    let (bs, cs) = (build_sweeps(&b, &[]), build_sweeps(&c, &[]));
    // TTFT ≤ 100 ms, TPOT ≤ 10.5 ms at a 90 % target: the baseline's TPOT at 4 fails it.
    let p = profile("decode", 100.0, 10.5);
    let (b1, b4) = (
        vllm_direct(&bv[0], 100.0, 10.5),
        vllm_direct(&bv[1], 100.0, 10.5),
    );
    assert_eq!((b1.0, b4.0), (0.95, 0.75));
    let f = (b1.0 - 0.9) / (b1.0 - b4.0);
    let base = slo_curve(only_sweep(&bs), &p, 0.9);
    let Some(Capacity::Within {
        load,
        throughput_rps,
        interpolated: true,
        ..
    }) = base.capacity
    else {
        panic!("{:?}", base.capacity)
    };
    assert!(close(load, 1.0 + f * 3.0) && close(load, 1.75), "{load}");
    assert!(close(throughput_rps, b1.1 + f * (b4.1 - b1.1)));
    for (pt, v) in base.points.iter().zip(&bv) {
        assert_eq!(pt.attainment, vllm_direct(v, 100.0, 10.5).0);
    }
    // The candidate meets it at both loads: at least 4 concurrent.
    let cand = slo_curve(only_sweep(&cs), &p, 0.9);
    let c4 = vllm_direct(&cv[1], 100.0, 10.5);
    assert_eq!(c4.0, 1.0);
    assert_eq!(
        cand.capacity,
        Some(Capacity::AtLeast {
            load: 4.0,
            throughput_rps: cand.points[1].throughput_rps
        })
    );
    assert!(close(cand.points[1].throughput_rps, c4.1));
    let change = capacity_change(&base, &cand).unwrap();
    assert_eq!(change.bound, ChangeBound::AtLeast);
    assert!(close(
        change.change_requests_per_hour,
        (c4.1 - (b1.1 + f * (b4.1 - b1.1))) * 3600.0
    ));
    // TPOT ≤ 10.3 ms: the baseline misses 95 % already at 1 (90 %).
    let tight = profile("tight-decode", 100.0, 10.3);
    assert_eq!(vllm_direct(&bv[0], 100.0, 10.3).0, 0.9);
    let base = slo_curve(only_sweep(&bs), &tight, DEFAULT_TARGET);
    assert!(matches!(base.capacity, Some(Capacity::BelowLowest { load, .. }) if load == 1.0));
}

#[test]
fn guidellm_concurrent_sweeps_give_stored_tails_but_no_attainment() {
    // guidellm 0.8.1 `concurrent` 1/4/16 in one file per side: no per-request samples (its
    // `requests` sample is 8 per benchmark and not read) and no goodput.
    for side in ["baseline", "candidate"] {
        let text = read(&format!(
            "testdata/guidellm/{side}_concurrent_1-4-16_isl512_osl128.json"
        ));
        let doc: Value = serde_json::from_str(&text).unwrap();
        let (_, results) = parse_file(None, &text, 0).unwrap();
        let set = build_sweeps(&results, &[]);
        let s = only_sweep(&set);
        assert_eq!(s.shape, SweepShape::Concurrency);
        let loads: Vec<f64> = s.points.iter().map(|p| p.load).collect();
        assert_eq!(loads, vec![1.0, 4.0, 16.0]);
        assert_eq!(
            slo_curve(s, &SloProfile::interactive(), DEFAULT_TARGET).capacity,
            None
        );
        let stored = |i: usize, metric: &str, p: &str| {
            doc["benchmarks"][i]["metrics"][metric]["successful"]["percentiles"][p]
                .as_f64()
                .unwrap()
        };
        let w = slowest_wait(s, 4.0).unwrap();
        assert_eq!(
            w.ttft_p95.unwrap().value_ms,
            stored(1, "time_to_first_token_ms", "p95")
        );
        assert_eq!(
            w.ttft_p99.unwrap().value_ms,
            stored(1, "time_to_first_token_ms", "p99")
        );
        // request_latency is in s; e2el is stored in ms.
        let e2el = w.e2el_p99.unwrap();
        assert!(close(
            e2el.value_ms,
            stored(1, "request_latency", "p99") * 1000.0
        ));
        assert_eq!(e2el.interval, None);
    }
}
