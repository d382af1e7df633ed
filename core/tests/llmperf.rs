//! The LLMPerf adapter against the real summary and individual responses of
//! ray-project/llmperf-leaderboard (groq llama2-70b; testdata/README.md).

use crate::common;

use common::{read, value};

use crate::mutate;
use mutate::{Subject, Syntax};

use benchtrail_core::adapters::{read_files, AdapterError, FileResults, FileSpec};
use benchtrail_core::{stats, RequestRate};

const SUMMARY: &str = "testdata/llmperf/llmperf-leaderboard-groq-llama2-70b-summary.json";
const RESPONSES: &str =
    "testdata/llmperf/llmperf-leaderboard-groq-llama2-70b-individual_responses.json";

fn upload(files: &[(&str, String)]) -> Result<Vec<FileResults>, (usize, AdapterError)> {
    let specs: Vec<FileSpec> = files
        .iter()
        .map(|(name, text)| FileSpec {
            name,
            format: None,
            text,
        })
        .collect();
    read_files(&specs)
}

fn files() -> Vec<(&'static str, String)> {
    vec![
        ("groq/summary.json", read(SUMMARY)),
        ("groq/individual_responses.json", read(RESPONSES)),
    ]
}

#[test]
fn seconds_become_ms_and_itl_is_its_own_metric() {
    let out = upload(&files()).unwrap();
    assert_eq!(out[0].format, "llmperf");
    assert_eq!(out[1].format, "llmperf-responses");
    let r = &out[0].results[0];
    for (stat, s) in [
        ("p25", 0.1860195565968752),
        ("p50", 0.2218883791938424),
        ("p75", 0.24066938273608685),
        ("p90", 0.298818383552134),
        ("p95", 0.30373927168548104),
        ("p99", 0.3500269545800982),
        ("mean", 0.22786034579078357),
        ("min", 0.17202026024460793),
        ("max", 0.3630785904824734),
        ("std", 0.04545771907205833),
    ] {
        assert_eq!(
            value(r, "ttft", stat),
            (s * 1000.0, Some(150)),
            "ttft {stat}"
        );
    }
    // LLMPerf's ITL includes TTFT (≈ E2E / tokens): never `itl` nor `tpot`.
    assert_eq!(
        value(r, "tpot_incl_ttft", "mean"),
        (0.005384122478382455 * 1000.0, Some(150))
    );
    assert!(!r
        .metrics
        .iter()
        .any(|m| m.name == "itl" || m.name == "tpot"));
    assert_eq!(
        value(r, "e2el", "p99"),
        (0.9922714155726133 * 1000.0, Some(150))
    );
    assert_eq!(
        value(r, "e2e_output_token_throughput", "mean"),
        (184.16473873302962, Some(150))
    );
    assert_eq!(
        value(r, "output_throughput", "value"),
        (441.84737788500206, None)
    );
    assert_eq!(
        value(r, "request_throughput", "value"),
        (176.73895115400083 / 60.0, None)
    );
    assert_eq!(value(r, "completed", "value"), (150.0, None));
    assert_eq!(value(r, "failed", "value"), (0.0, None));
    assert_eq!(r.cell.load.max_concurrency, Some(5));
    assert_eq!(r.cell.load.request_rate, Some(RequestRate::Infinite));
    assert_eq!(
        r.cell.key(),
        "max_concurrency=5;request_rate=inf;input_len=550;output_len=150;num_prompts=150"
    );
    let c = &r.configuration;
    assert_eq!(c.model.name.as_deref(), Some("llama2-70b-4096"));
    assert_eq!(c.benchmark.name.as_deref(), Some("llmperf"));
    assert_eq!(c.benchmark.version.as_deref(), Some("2023-08-31"));
    assert_eq!(
        c.metadata.get("framework").map(String::as_str),
        Some("groq")
    );
    assert_eq!(r.facts["std"], "sample std (ddof=1, pandas)");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn pandas_quantiles_and_sample_std_from_the_responses() {
    let out = upload(&files()).unwrap();
    let r = &out[0].results[0];
    let s = r.samples.as_ref().unwrap();
    assert_eq!(s.len(), 150);
    assert!(s.success.iter().all(|ok| *ok));
    let summary: serde_json::Value = serde_json::from_str(&read(SUMMARY)).unwrap();
    let raw: serde_json::Value = serde_json::from_str(&read(RESPONSES)).unwrap();
    let ttft_s: Vec<f64> = raw
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ttft_s"].as_f64().unwrap())
        .collect();
    // pandas quantile (linear) = numpy linear: equal to the last bit, in seconds.
    for p in [25, 50, 75, 90, 95, 99] {
        let ours = stats::percentile(&ttft_s, p as f64).unwrap();
        let key = format!("results_ttft_s_quantiles_p{p}");
        assert!(
            (ours - summary[&key].as_f64().unwrap()).abs() < 1e-15,
            "{key}"
        );
    }
    // pandas std is the sample std (ddof = 1); the population std differs.
    let n = ttft_s.len() as f64;
    let sample_std = stats::population_std(&ttft_s).unwrap() * (n / (n - 1.0)).sqrt();
    assert!((sample_std - summary["results_ttft_s_stddev"].as_f64().unwrap()).abs() < 1e-15);
    // The samples are in ms.
    assert_eq!(s.ttft_ms.as_ref().unwrap()[0], Some(ttft_s[0] * 1000.0));
}

#[test]
fn numbers_written_as_strings_are_read() {
    let text = read(SUMMARY).replace(
        "\"results_ttft_s_mean\": 0.22786034579078357",
        "\"results_ttft_s_mean\": \"0.22786034579078357\"",
    );
    let out = upload(&[("s.json", text)]).unwrap();
    assert_eq!(
        value(&out[0].results[0], "ttft", "mean").0,
        0.22786034579078357 * 1000.0
    );
}

#[test]
fn responses_alone_are_an_orphan() {
    let (i, e) = upload(&[("result.json", read(RESPONSES))]).unwrap_err();
    assert_eq!((i, e), (0, AdapterError::Orphan { summary: "llmperf" }));
}

#[test]
fn never_panics_on_broken_or_mutated_files() {
    let f: Vec<_> = files()
        .into_iter()
        .zip(["llmperf", "llmperf-responses"])
        .map(|((name, text), format)| (name, format, text))
        .collect();
    Subject::in_upload(&f, 0, Syntax::Json).all_kinds(21);
    Subject::in_upload(&f, 1, Syntax::Json).all_kinds(22);
}
