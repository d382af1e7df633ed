//! The GenAI-Perf adapter against real files written by genai-perf 0.0.16 / perf_analyzer
//! 2.48.0 against the mock server (shared/samples/generated/MANIFEST.md).

use crate::common;

use common::{read, value};

use crate::mutate;
use mutate::{Subject, Syntax};

use benchtrail_core::adapters::{read_files, AdapterError, FileResults, FileSpec};
use benchtrail_core::{stats, RequestRate};

const DIR: &str = "testdata/genai-perf/baseline_completions_c1_isl512_osl64/mock-llm-openai-completions-concurrency1";

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
        (
            "c1/profile_export_genai_perf.json",
            read(&format!("{DIR}/profile_export_genai_perf.json")),
        ),
        (
            "c1/profile_export.json",
            read(&format!("{DIR}/profile_export.json")),
        ),
    ]
}

#[test]
fn summary_values_names_cell_and_config() {
    let out = upload(&files()).unwrap();
    assert_eq!(out[0].format, "genai-perf");
    assert_eq!(out[1].format, "genai-perf-records");
    let r = &out[0].results[0];
    for (stat, v) in [
        ("mean", 32.6975099),
        ("p1", 30.2588988),
        ("p5", 30.791826),
        ("p10", 31.053561),
        ("p25", 32.049817499999996),
        ("p50", 32.964268),
        ("p75", 33.227992),
        ("p90", 34.1204895),
        ("p95", 34.35486365),
        ("p99", 34.80713433),
        ("min", 30.125667),
        ("max", 34.920201999999996),
        ("std", 1.1490041358192276),
    ] {
        assert_eq!(value(r, "ttft", stat), (v, Some(20)), "ttft {stat}");
    }
    // GenAI-Perf's inter_token_latency is vLLM's tpot; n unknown (OSL ≤ 1 requests skipped).
    assert_eq!(value(r, "tpot", "mean"), (9.852732849999999, None));
    assert!(!r.metrics.iter().any(|m| m.name == "itl"));
    assert_eq!(value(r, "e2el", "mean"), (653.41967535, Some(20)));
    assert_eq!(
        value(r, "request_throughput", "value"),
        (1.5300921094066824, None)
    );
    assert_eq!(
        value(r, "output_throughput", "value"),
        (97.92589500202767, None)
    );
    assert_eq!(value(r, "completed", "value"), (20.0, None));
    assert_eq!(r.cell.load.max_concurrency, Some(1));
    assert_eq!(r.cell.load.request_rate, Some(RequestRate::Infinite));
    assert_eq!(
        r.cell.key(),
        "max_concurrency=1;request_rate=inf;input_len=512;output_len=64;num_prompts=20"
    );
    let c = &r.configuration;
    assert_eq!(c.model.name.as_deref(), Some("mock-llm"));
    assert_eq!(c.model.tokenizer.as_deref(), Some("/models/mock-tokenizer"));
    assert_eq!(c.benchmark.name.as_deref(), Some("genai-perf"));
    assert_eq!(c.benchmark.backend.as_deref(), Some("completions"));
    assert_eq!(r.facts["perf_analyzer_version"], "2.48.0");
    assert!(r.warnings.iter().all(|w| w.code == "small_sample_tail"));
}

#[test]
fn timestamps_rebuild_ttft_and_e2el_within_1e_9_ms() {
    let out = upload(&files()).unwrap();
    let r = &out[0].results[0];
    let s = r.samples.as_ref().unwrap();
    assert_eq!(s.len(), 20);
    assert!(s.tpot_ms.is_none() && s.output_tokens.is_none());
    for (name, col) in [("ttft", &s.ttft_ms), ("e2el", &s.e2el_ms)] {
        let xs: Vec<f64> = col.as_ref().unwrap().iter().map(|v| v.unwrap()).collect();
        for p in [1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0] {
            let ours = stats::percentile(&xs, p).unwrap();
            let theirs = value(r, name, &format!("p{p}")).0;
            assert!(
                (ours - theirs).abs() < 1e-9,
                "{name} p{p}: {ours} vs {theirs}"
            );
        }
        assert!((stats::mean(&xs).unwrap() - value(r, name, "mean").0).abs() < 1e-9);
        assert!((stats::population_std(&xs).unwrap() - value(r, name, "std").0).abs() < 1e-9);
    }
}

#[test]
fn invalid_goodput_is_a_warning_not_a_value() {
    let text = read(&format!("{DIR}/profile_export_genai_perf.json")).replacen(
        "\"request_throughput\"",
        "\"request_goodput\": {\"unit\": \"requests/sec\", \"avg\": -1.0}, \"request_throughput\"",
        1,
    );
    let out = upload(&[("result.json", text)]).unwrap();
    let r = &out[0].results[0];
    assert!(!r.metrics.iter().any(|m| m.name == "request_goodput"));
    assert!(r.warnings.iter().any(|w| w.code == "invalid_goodput"));
}

#[test]
fn detection_and_orphans() {
    let f = files();
    let out = upload(&[("result.json", f[0].1.clone())]).unwrap();
    assert_eq!(out[0].format, "genai-perf");
    let (i, e) = upload(&[("result.json", f[1].1.clone())]).unwrap_err();
    assert_eq!(
        (i, e),
        (
            0,
            AdapterError::Orphan {
                summary: "genai-perf"
            }
        )
    );
}

#[test]
fn never_panics_on_broken_or_mutated_files() {
    let f: Vec<_> = files()
        .into_iter()
        .zip(["genai-perf", "genai-perf-records"])
        .map(|((name, text), format)| (name, format, text))
        .collect();
    Subject::in_upload(&f, 0, Syntax::Json).all_kinds(11);
    Subject::in_upload(&f, 1, Syntax::Json).all_kinds(12);
}
