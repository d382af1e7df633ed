//! Summaries recomputed from the per-request samples of every example file equal the file's
//! own summary, bit for bit.

use benchtrail_core::adapters::{read_files, FileSpec};
use benchtrail_core::summary::vllm_summaries;

const FILES: &[&str] = &[
    "baseline_completions_c1_isl512_osl128.json",
    "baseline_completions_c4_isl512_osl128.json",
    "candidate_completions_c1_isl512_osl128.json",
    "candidate_completions_c4_isl512_osl128.json",
    "goodput_baseline_s11_c4.json",
    "goodput_baseline_s12_c4.json",
    "goodput_baseline_s13_c4.json",
    "goodput_candidate_s21_c4.json",
    "goodput_tight_baseline_s15_c4.json",
];

fn read(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../examples/history/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn recomputed_summaries_equal_every_example_files_summary_exactly() {
    let mut mismatches = Vec::new();
    for name in FILES {
        let text = read(name);
        let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
        let read = read_files(&[FileSpec {
            name,
            format: None,
            text: &text,
        }])
        .unwrap();
        let samples = read[0].results[0].samples.as_ref().expect("samples");
        let summaries = vllm_summaries(samples, &[50.0, 90.0, 95.0, 99.0]);
        assert_eq!(summaries.len(), 4, "{name}");
        let mut pairs = Vec::new();
        for s in &summaries {
            let m = s.metric;
            pairs.push((format!("mean_{m}_ms"), s.mean));
            pairs.push((format!("median_{m}_ms"), s.median));
            pairs.push((format!("std_{m}_ms"), s.std));
            for (p, v) in &s.percentiles {
                pairs.push((format!("p{p}_{m}_ms"), *v));
            }
        }
        assert_eq!(pairs.len(), 28, "{name}");
        for (key, ours) in pairs {
            let theirs = raw[&key]
                .as_f64()
                .unwrap_or_else(|| panic!("{name}: {key}"));
            if ours != theirs {
                mismatches.push(format!(
                    "{name} {key}: {ours} vs {theirs} (rel {:e})",
                    ((ours - theirs) / theirs).abs()
                ));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

fn samples_of(name: &str) -> benchtrail_core::samples::RequestSamples {
    let text = read(name);
    let mut read = read_files(&[FileSpec {
        name,
        format: None,
        text: &text,
    }])
    .unwrap();
    read.remove(0).results.remove(0).samples.unwrap()
}

#[test]
fn goodput_from_samples_equals_the_tools_goodput_exactly() {
    use benchtrail_core::slo::{evaluate, SloProfile};
    let profile = |ttft, tpot, e2el| SloProfile {
        name: "p".into(),
        ttft_ms: Some(ttft),
        tpot_ms: Some(tpot),
        e2el_ms: Some(e2el),
    };
    let cases = [
        ("goodput_baseline_s11_c4.json", profile(60.0, 12.0, 1800.0)),
        ("goodput_baseline_s12_c4.json", profile(60.0, 12.0, 1800.0)),
        ("goodput_baseline_s13_c4.json", profile(60.0, 12.0, 1800.0)),
        ("goodput_candidate_s21_c4.json", profile(60.0, 12.0, 1800.0)),
        (
            "goodput_tight_baseline_s15_c4.json",
            profile(37.0, 10.6, 1500.0),
        ),
    ];
    for (name, profile) in cases {
        let raw: serde_json::Value = serde_json::from_str(&read(name)).unwrap();
        let outcome = evaluate(&samples_of(name), &profile).unwrap();
        assert_eq!(
            outcome.goodput,
            raw["request_goodput"].as_f64().unwrap(),
            "{name}"
        );
        assert_eq!(outcome.sent, 60);
    }
}

#[test]
fn bootstrap_cost_of_one_result() {
    // Measured, not asserted: the figure quoted in `benchtrail_core::bootstrap::RESAMPLES`.
    let samples = samples_of("goodput_baseline_s11_c4.json");
    let start = std::time::Instant::now();
    let intervals = benchtrail_core::bootstrap::intervals(&samples);
    eprintln!(
        "bootstrap of one 60-request result ({} intervals): {:?}",
        intervals.len(),
        start.elapsed()
    );
    assert_eq!(intervals.len(), 8);
}

/// The intervals of a real 60-request file, as the bootstrap computed them before its search
/// walked from pivots (`7c7426b`): the search is an exact order statistic, so they must not
/// move by a bit (a stored result's intervals never change between versions).
#[test]
fn bootstrap_intervals_of_a_real_file_are_unchanged() {
    let samples = samples_of("goodput_baseline_s11_c4.json");
    let got: Vec<String> = benchtrail_core::bootstrap::intervals(&samples)
        .iter()
        .map(|(metric, stat, ci)| format!("{metric} {stat} [{:?}, {:?}]", ci.low, ci.high))
        .collect();
    assert_eq!(got, PINNED_INTERVALS);
}

const PINNED_INTERVALS: [&str; 8] = [
    "ttft p50 [35.34851700032959, 37.113405000127386]",
    "ttft p99 [45.95793288987349, 57.15965099989262]",
    "tpot p50 [10.424924944882651, 10.505592913385788]",
    "tpot p99 [10.766236915591985, 10.89379408661508]",
    "itl p50 [10.546376725000073, 10.609898500035797]",
    "itl p99 [11.872391936277255, 12.157301000115694]",
    "e2el p50 [1359.7361560000536, 1370.8167319996392]",
    "e2el p99 [1413.5004206298527, 1422.571980000157]",
];
