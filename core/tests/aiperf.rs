//! The AIPerf adapter against real files written by aiperf 0.13.0 (generated against the mock
//! server; shared/samples/generated/MANIFEST.md) and aiperf 0.8.0 (ai-dynamo/aiperf test
//! artifact); provenance in testdata/README.md.

use crate::common;

use common::{read, value};

use crate::mutate;
use mutate::{Subject, Syntax};

use benchtrail_core::adapters::{read_files, AdapterError, FileResults, FileSpec};
use benchtrail_core::{stats, BenchResult, RequestRate};

const RUN: &str = "testdata/aiperf/baseline_completions_c1_isl512_osl128";

fn upload(files: &[(&str, &str)]) -> Result<Vec<FileResults>, (usize, AdapterError)> {
    let texts: Vec<String> = files.iter().map(|(_, p)| read(p)).collect();
    let specs: Vec<FileSpec> = files
        .iter()
        .zip(&texts)
        .map(|((name, _), text)| FileSpec {
            name,
            format: None,
            text,
        })
        .collect();
    read_files(&specs)
}

fn has(r: &BenchResult, name: &str) -> bool {
    r.metrics.iter().any(|m| m.name == name)
}

fn run_folder() -> Vec<FileResults> {
    upload(&[
        (
            "run/profile_export_aiperf.json",
            &format!("{RUN}/profile_export_aiperf.json"),
        ),
        (
            "run/profile_export.jsonl",
            &format!("{RUN}/profile_export.jsonl"),
        ),
        (
            "run/server_metrics_export.json",
            &format!("{RUN}/server_metrics_export.json"),
        ),
    ])
    .unwrap()
}

#[test]
fn summary_keeps_every_value_under_its_real_name() {
    let out = run_folder();
    assert_eq!(
        out.iter().map(|f| f.format).collect::<Vec<_>>(),
        ["aiperf", "aiperf-records", "aiperf-server-metrics"]
    );
    assert!(out[1].results.is_empty() && out[2].results.is_empty());
    let r = &out[0].results[0];
    // Every statistic of time_to_first_token, in ms as written.
    let ttft = [
        ("mean", 34.4002866),
        ("p1", 30.18944843),
        ("p5", 30.892446149999998),
        ("p10", 31.105552399999997),
        ("p25", 32.2211235),
        ("p50", 34.2376055),
        ("p75", 35.691779),
        ("p90", 37.5991717),
        ("p95", 39.131508950000004),
        ("p99", 39.307159389999995),
        ("min", 30.013699),
        ("max", 39.351071999999995),
        ("std", 2.538209870702763),
    ];
    for (stat, v) in ttft {
        assert_eq!(value(r, "ttft", stat), (v, Some(20)), "ttft {stat}");
    }
    assert_eq!(r.metrics.iter().filter(|m| m.name == "ttft").count(), 13);
    // AIPerf's inter_token_latency is per request (E2E − TTFT)/(OSL − 1): vLLM's tpot.
    assert_eq!(value(r, "tpot", "mean"), (10.12078502440945, Some(20)));
    assert_eq!(value(r, "tpot", "p99"), (10.77262475472441, Some(20)));
    // Per-chunk gaps keep their own name, with their own count.
    assert_eq!(
        value(r, "inter_chunk_latency", "p50"),
        (10.399315, Some(2540))
    );
    assert!(!has(r, "itl"));
    assert_eq!(value(r, "e2el", "p90"), (1384.5294502, Some(20)));
    assert_eq!(
        value(r, "time_to_first_output_token", "mean"),
        (34.4002866, Some(20))
    );
    assert_eq!(
        value(r, "time_to_second_token", "max"),
        (16.07048, Some(20))
    );
    assert_eq!(
        value(r, "request_throughput", "value"),
        (0.754050398275167, None)
    );
    assert_eq!(
        value(r, "output_throughput", "value"),
        (96.51845097922137, None)
    );
    assert_eq!(
        value(r, "total_token_throughput", "value"),
        (482.59225489610685, None)
    );
    // benchmark_duration is in `sec`: stored in s.
    assert_eq!(value(r, "duration", "value"), (26.518832896000003, None));
    assert_eq!(value(r, "completed", "value"), (20.0, None));
    assert_eq!(value(r, "failed", "value"), (0.0, None));
    assert_eq!(value(r, "total_input_tokens", "value"), (10240.0, None));
    assert_eq!(value(r, "total_output_tokens", "value"), (2560.0, None));
    // Server metrics next to the summary: the gauges that map cleanly.
    assert_eq!(
        value(r, "server_num_requests_running", "mean"),
        (0.9101123595505618, None)
    );
    assert_eq!(value(r, "server_num_requests_waiting", "max"), (0.0, None));
    assert!(r
        .metrics
        .iter()
        .all(|m| m.unit == benchtrail_core::metric::lookup(&m.name).unwrap().unit));

    assert_eq!(r.cell.load.max_concurrency, Some(1));
    assert_eq!(r.cell.load.request_rate, Some(RequestRate::Infinite));
    assert_eq!(r.cell.num_prompts, Some(20));
    assert_eq!(
        r.cell.key(),
        "max_concurrency=1;request_rate=inf;input_len=512;output_len=128;num_prompts=20"
    );
    let c = &r.configuration;
    assert_eq!(c.model.name.as_deref(), Some("mock-llm"));
    assert_eq!(c.model.tokenizer.as_deref(), Some("/models/mock-tokenizer"));
    assert_eq!(c.benchmark.name.as_deref(), Some("aiperf"));
    assert_eq!(c.benchmark.version.as_deref(), Some("0.13.0"));
    assert_eq!(c.benchmark.backend.as_deref(), Some("completions"));
    assert_eq!(c.sampling.ignore_eos, Some(true));
    assert!(c
        .benchmark
        .command
        .as_deref()
        .unwrap()
        .starts_with("aiperf profile --model 'mock-llm'"));
    assert_eq!(r.facts["benchmark_id"], "5ab024494a41");
    assert_eq!(r.facts["streaming"], true);
    let codes: Vec<&str> = r.warnings.iter().map(|w| w.code.as_str()).collect();
    assert!(codes.iter().all(|c| *c == "small_sample_tail"), "{codes:?}");
    assert!(r.warnings.iter().any(|w| w.message
        == "ttft p99 comes from only 20 samples: fewer than one sample lies beyond it."));
}

#[test]
fn per_request_records_skip_warmup_and_match_the_summary() {
    let out = run_folder();
    let r = &out[0].results[0];
    let s = r
        .samples
        .as_ref()
        .expect("samples from profile_export.jsonl");
    // 22 records in the file: 2 warm-up, 20 profiling.
    assert_eq!(s.len(), 20);
    assert!(s.success.iter().all(|ok| *ok));
    assert_eq!(s.duration_s, Some(26.518832896000003));
    let col = |c: &Option<Vec<Option<f64>>>| -> Vec<f64> {
        c.as_ref().unwrap().iter().map(|v| v.unwrap()).collect()
    };
    let ttft = col(&s.ttft_ms);
    let tpot = col(&s.tpot_ms);
    let e2el = col(&s.e2el_ms);
    assert_eq!(ttft[0], 34.953654);
    assert_eq!(s.output_tokens.as_ref().unwrap()[0], Some(128));
    assert_eq!(s.input_tokens.as_ref().unwrap()[0], Some(512));
    let gaps: usize = s.itl_ms.as_ref().unwrap().iter().map(Vec::len).sum();
    assert_eq!(gaps, 2540);
    // AIPerf computes np.percentile over ns and writes ms; recomputed from the per-request ms
    // values the statistics agree to 1e-9 ms.
    for (name, xs) in [("ttft", &ttft), ("tpot", &tpot), ("e2el", &e2el)] {
        for p in [1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0] {
            let ours = stats::percentile(xs, p).unwrap();
            let theirs = value(r, name, &format!("p{p}")).0;
            assert!(
                (ours - theirs).abs() < 1e-9,
                "{name} p{p}: {ours} vs {theirs}"
            );
        }
        let mean = stats::mean(xs).unwrap();
        assert!(
            (mean - value(r, name, "mean").0).abs() < 1e-9,
            "{name} mean"
        );
        let std = stats::population_std(xs).unwrap();
        assert!((std - value(r, name, "std").0).abs() < 1e-9, "{name} std");
    }
}

#[test]
fn old_non_streaming_file_has_no_ttft_and_skips_explicit_nulls() {
    let out = upload(&[(
        "result.json",
        "testdata/aiperf/aiperf-0.8.0-tests-audit-baseline-chat-bare-mock-nonstreaming.json",
    )])
    .unwrap();
    assert_eq!(out[0].format, "aiperf");
    let r = &out[0].results[0];
    assert!(!has(r, "ttft") && !has(r, "tpot") && !has(r, "inter_chunk_latency"));
    assert_eq!(value(r, "e2el", "p99"), (15.14387014, Some(64)));
    assert_eq!(value(r, "e2el", "std"), (3.2372036172079475, Some(64)));
    // `total_token_throughput` has explicit null percentiles: only its avg is stored.
    assert_eq!(
        r.metrics
            .iter()
            .filter(|m| m.name == "total_token_throughput")
            .count(),
        1
    );
    assert_eq!(
        value(r, "total_token_throughput", "value"),
        (2042654.398625265, None)
    );
    assert_eq!(value(r, "duration", "value"), (0.034502655, None));
    assert_eq!(value(r, "completed", "value"), (64.0, None));
    assert_eq!(value(r, "failed", "value"), (0.0, None));
    assert_eq!(r.cell.load.max_concurrency, Some(4));
    assert_eq!(r.cell.num_prompts, Some(64));
    assert_eq!(r.cell.input_len, Some(550));
    assert_eq!(r.configuration.model.name.as_deref(), Some("mock-model"));
    assert_eq!(r.configuration.benchmark.backend.as_deref(), Some("chat"));
    assert_eq!(r.configuration.benchmark.version.as_deref(), Some("0.8.0"));
    assert!(r.samples.is_none());
}

#[test]
fn warmup_inputs_and_manifest_are_refused_with_what_they_are() {
    // By content: the warm-up export's request count (2) is the warm-up phase's.
    let (_, e) = upload(&[(
        "result.json",
        &format!("{RUN}/phases/warmup/profile_export_aiperf.json"),
    )])
    .unwrap_err();
    assert!(
        e.to_string().contains("warm-up requests are excluded"),
        "{e}"
    );
    assert!(e.to_string().contains("the warm-up phase's"), "{e}");
    // By folder.
    let (_, e) = upload(&[(
        "run/phases/warmup/profile_export_aiperf.json",
        &format!("{RUN}/phases/warmup/profile_export_aiperf.json"),
    )])
    .unwrap_err();
    assert!(e.to_string().contains("`warmup` folder"), "{e}");
    let (_, e) = upload(&[("result.json", &format!("{RUN}/inputs.json"))]).unwrap_err();
    assert!(e.to_string().contains("these are AIPerf's inputs"), "{e}");
    assert!(e.to_string().contains("not results"), "{e}");
    let (_, e) = upload(&[("result.json", &format!("{RUN}/phase_manifest.json"))]).unwrap_err();
    assert!(e.to_string().contains("phase_manifest.json"), "{e}");
}

#[test]
fn companions_pair_by_folder_only() {
    let (i, e) = upload(&[(
        "run/profile_export.jsonl",
        &format!("{RUN}/profile_export.jsonl"),
    )])
    .unwrap_err();
    assert_eq!((i, e), (0, AdapterError::Orphan { summary: "aiperf" }));
    let (_, e) = upload(&[(
        "run/server_metrics_export.json",
        &format!("{RUN}/server_metrics_export.json"),
    )])
    .unwrap_err();
    assert_eq!(e, AdapterError::Orphan { summary: "aiperf" });
    // Different folders: the per-request file is an orphan.
    let (i, e) = upload(&[
        (
            "a/profile_export_aiperf.json",
            &format!("{RUN}/profile_export_aiperf.json"),
        ),
        (
            "b/profile_export.jsonl",
            &format!("{RUN}/profile_export.jsonl"),
        ),
    ])
    .unwrap_err();
    assert_eq!((i, e), (1, AdapterError::Orphan { summary: "aiperf" }));
    // The summary alone: no samples.
    let out = upload(&[("result.json", &format!("{RUN}/profile_export_aiperf.json"))]).unwrap();
    assert!(out[0].results[0].samples.is_none());
}

#[test]
fn never_panics_on_broken_or_mutated_files() {
    let files = [
        (
            "run/profile_export_aiperf.json",
            "aiperf",
            read(&format!("{RUN}/profile_export_aiperf.json")),
        ),
        (
            "run/profile_export.jsonl",
            "aiperf-records",
            read(&format!("{RUN}/profile_export.jsonl")),
        ),
        (
            "run/server_metrics_export.json",
            "aiperf-server-metrics",
            read(&format!("{RUN}/server_metrics_export.json")),
        ),
    ];
    for which in 0..files.len() {
        Subject::in_upload(&files, which, Syntax::Json).all_kinds(1 + which as u64);
    }
    let old = [(
        "result.json",
        "aiperf",
        read("testdata/aiperf/aiperf-0.8.0-tests-audit-baseline-chat-bare-mock-nonstreaming.json"),
    )];
    Subject::in_upload(&old, 0, Syntax::Json).all_kinds(4);
}
