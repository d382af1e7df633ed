//! The workload identity rule (`benchtrail_core::cell`), adapter by adapter, on real files:
//! which fields make each format's cell, that the recorded benchmark command fills what a file
//! leaves out, that a console summary and the JSON of the same run get the same cell and tool,
//! that two results of one cell in one upload are refused, and the two older layouts (SGLang
//! 2024, AIPerf's `records`) read with exact values (fixtures: their READMEs in testdata/);
//! and a run checked against its own request (`requested_len_mismatch`): never on a real file
//! that did its requested work, always on one whose cell requests other work.

use crate::common;

use benchtrail_core::adapters::parse_file;
use benchtrail_core::cell::{
    from_command, LengthRanges, MEASURED_INPUT_LEN, MEASURED_OUTPUT_LEN, REQUESTED_LEN_RANGE,
};
use benchtrail_core::regression::confounds::{
    workload_confounds, ConfoundCode, LengthKind, RunLengths, Workload, WorkloadConfound,
};
use benchtrail_core::regression::family::Gates;
use benchtrail_core::regression::{
    analyze_checked, CommitRuns, GroupInput, SeriesInput, SeriesState, Settings,
};
use benchtrail_core::{BenchResult, UploadDocument};
use common::{read, value};
use serde_json::{json, Value};

/// The cell keys of every result of a file read on its own.
fn keys(path: &str) -> Vec<String> {
    let (_, results) = parse_file(None, &read(path), 0).unwrap();
    results.iter().map(|r| r.cell.key()).collect()
}

/// The results of an upload of `files` (repository paths) with `configuration`.
fn upload(files: &[&str], configuration: Value) -> Result<Vec<BenchResult>, String> {
    let doc: UploadDocument = serde_json::from_value(json!({
        "run": {"commit": {"sha": "abcdef1"}},
        "configuration": configuration,
        "files": files.iter().map(|p| json!({"name": p, "content": read(p)})).collect::<Vec<_>>(),
    }))
    .unwrap();
    let results = doc.normalize().map_err(|e| e.to_string())?;
    doc.check_distinct(&results, &[])
        .map_err(|e| format!("{} | {}", e.pointer, e.message))?;
    Ok(results)
}

/// The vLLM command of the generated samples (shared/samples/generated/MANIFEST.md), at
/// concurrency `c` with `n` prompts and input length `isl`.
fn vllm_command(c: u64, n: u64, isl: u64) -> String {
    format!(
        "vllm bench serve --backend openai --base-url http://127.0.0.1:8001 --endpoint /v1/completions --dataset-name random --random-input-len {isl} --random-output-len 128 --random-range-ratio 0 --num-prompts {n} --max-concurrency {c} --request-rate inf --ignore-eos --model mock-llm --tokenizer /models/mock-tokenizer --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,95,99 --seed 42 --save-result --save-detailed"
    )
}

#[test]
fn each_adapter_states_its_cell_fields() {
    // vLLM JSON: the load shape and the prompt count; no lengths, no dataset.
    assert_eq!(
        keys("testdata/vllm/llm-benchmaxxing-vllm-bench-serve-2026-01-glm47-fp8-h100-tp8.json"),
        ["max_concurrency=100;request_rate=inf;num_prompts=100"]
    );
    assert_eq!(
        keys("examples/history/baseline_completions_c4_isl512_osl128.json"),
        ["max_concurrency=4;request_rate=inf;num_prompts=60"]
    );
    // Its console block: the same fields (rate `inf` when not printed, prompts = 60 + 0).
    assert_eq!(
        keys("testdata/console/vllm-0.33.0-mock-baseline-c4.txt"),
        ["max_concurrency=4;request_rate=inf;num_prompts=60"]
    );
    // SGLang JSON: load shape, dataset and its requested lengths; no prompt count.
    assert_eq!(
        keys("testdata/sglang/sglang-0.5.23-mock-baseline_completions_c4_isl512_osl128.jsonl"),
        ["max_concurrency=4;request_rate=inf;input_len=512;output_len=128;dataset=random-ids"]
    );
    // Its console block: the load shape only.
    assert_eq!(
        keys("testdata/console/sglang-0.5.23-mock-baseline-c4.txt"),
        ["max_concurrency=4;request_rate=inf"]
    );
    // AIPerf and GenAI-Perf: load shape, requested lengths, request count.
    assert_eq!(
        keys("testdata/aiperf/baseline_completions_c4_isl512_osl128/profile_export_aiperf.json"),
        ["max_concurrency=4;request_rate=inf;input_len=512;output_len=128;num_prompts=60"]
    );
    assert_eq!(
        keys("testdata/genai-perf/baseline_completions_c1_isl512_osl64/mock-llm-openai-completions-concurrency1/profile_export_genai_perf.json"),
        ["max_concurrency=1;request_rate=inf;input_len=512;output_len=64;num_prompts=20"]
    );
    // guidellm: the strategy and the synthetic data's lengths.
    assert_eq!(
        keys("testdata/guidellm/baseline_concurrent_1-4-16_isl512_osl128.json"),
        [
            "max_concurrency=1;request_rate=inf;input_len=512;output_len=128",
            "max_concurrency=4;request_rate=inf;input_len=512;output_len=128",
            "max_concurrency=16;request_rate=inf;input_len=512;output_len=128",
        ]
    );
    // LLMPerf: concurrency, requested mean lengths, requests started.
    assert_eq!(
        keys("testdata/llmperf/llmperf-leaderboard-groq-llama2-70b-summary.json"),
        ["max_concurrency=5;request_rate=inf;input_len=550;output_len=150;num_prompts=150"]
    );
}

#[test]
fn the_recorded_command_gives_vllm_its_lengths_and_different_lengths_never_share_a_cell() {
    let json = "examples/history/baseline_completions_c4_isl512_osl128.json";
    let with = |isl| {
        upload(
            &[json],
            json!({"benchmark": {"command": vllm_command(4, 60, isl)}}),
        )
        .unwrap()
        .remove(0)
    };
    let short = with(512);
    let long = with(5120);
    assert_eq!(
        short.cell.key(),
        "max_concurrency=4;request_rate=inf;input_len=512;output_len=128;dataset=random;num_prompts=60"
    );
    assert_eq!(
        long.cell.key(),
        "max_concurrency=4;request_rate=inf;input_len=5120;output_len=128;dataset=random;num_prompts=60"
    );
    // What the file states wins over the command: its concurrency and prompt count.
    let other = upload(
        &[json],
        json!({"benchmark": {"command": vllm_command(8, 200, 512)}}),
    )
    .unwrap()
    .remove(0);
    assert_eq!(other.cell.key(), short.cell.key());
    // Measured lengths are facts, not identity: 30722 / 60 input tokens, 7680 / 60 output.
    assert_eq!(short.facts[MEASURED_INPUT_LEN], json!(30722.0 / 60.0));
    assert_eq!(short.facts[MEASURED_OUTPUT_LEN], json!(128.0));
    assert_eq!(short.facts, long.facts);
}

#[test]
fn commands_are_read_flag_by_flag() {
    let c = from_command(
        "python3 -m sglang.bench_serving --backend sglang --dataset-name random \\\n --random-input 1024 --random-output=128 --request-rate 128 --burstiness 0.7 --max-concurrency 512 --num-prompts 1024",
    );
    assert_eq!(
        c.key(),
        "max_concurrency=512;request_rate=128;burstiness=0.7;input_len=1024;output_len=128;dataset=random;num_prompts=1024"
    );
    // Another dataset's flags are not this run's lengths; the generic ones are.
    let c = from_command(
        "vllm bench serve --dataset-name sharegpt --random-input-len 9 --sharegpt-output-len 256 --request-rate inf --burstiness 0.5",
    );
    assert_eq!(c.key(), "request_rate=inf;output_len=256;dataset=sharegpt");
    let c = from_command(
        "vllm bench latency --model M --input-len 512 --output-len 128 --batch-size 8",
    );
    assert_eq!(c.key(), "input_len=512;output_len=128");
    let c = from_command(
        "vllm bench serve --dataset-name 'sonnet' --sonnet-input-len 550 --sonnet-output-len 150",
    );
    assert_eq!(c.key(), "input_len=550;output_len=150;dataset=sonnet");
}

#[test]
fn a_console_summary_and_its_json_get_one_cell_and_one_tool() {
    // vLLM: from the files alone (shared/samples/generated: the same runs).
    for (console, json, c, n) in [
        (
            "testdata/console/vllm-0.33.0-mock-baseline-c4.txt",
            "examples/history/baseline_completions_c4_isl512_osl128.json",
            4,
            60,
        ),
        (
            "testdata/console/generated/vllm-baseline-c1.txt",
            "examples/history/baseline_completions_c1_isl512_osl128.json",
            1,
            20,
        ),
        (
            "testdata/console/generated/vllm-candidate-c4.txt",
            "examples/history/candidate_completions_c4_isl512_osl128.json",
            4,
            60,
        ),
    ] {
        let command = json!({"benchmark": {"command": vllm_command(c, n, 512)}});
        let a = upload(&[console], command.clone()).unwrap().remove(0);
        let b = upload(&[json], command).unwrap().remove(0);
        assert_eq!(a.cell, b.cell, "{console}");
        assert_eq!(
            a.cell.key(),
            format!("max_concurrency={c};request_rate=inf;input_len=512;output_len=128;dataset=random;num_prompts={n}")
        );
        assert_eq!(
            a.configuration.series_key(&[]),
            b.configuration.series_key(&[])
        );
        assert_eq!(
            a.configuration.benchmark.name.as_deref(),
            Some("vllm-bench-serve")
        );
    }
    // SGLang: its block prints no dataset or lengths; the recorded command gives them.
    let command = json!({"benchmark": {"command": "python -m sglang.bench_serving --backend vllm --base-url http://127.0.0.1:8001 --model mock-llm --tokenizer /models/mock-tokenizer --dataset-name random-ids --random-input-len 512 --random-output-len 128 --random-range-ratio 1.0 --num-prompts 60 --max-concurrency 4 --request-rate inf --seed 42 --output-details --disable-tqdm"}});
    let a = upload(
        &["testdata/console/sglang-0.5.23-mock-baseline-c4.txt"],
        command.clone(),
    )
    .unwrap()
    .remove(0);
    let b = upload(
        &["testdata/sglang/sglang-0.5.23-mock-baseline_completions_c4_isl512_osl128.jsonl"],
        command,
    )
    .unwrap()
    .remove(0);
    assert_eq!(a.cell, b.cell);
    assert_eq!(
        a.cell.key(),
        "max_concurrency=4;request_rate=inf;input_len=512;output_len=128;dataset=random-ids;num_prompts=60"
    );
    assert_eq!(
        a.configuration.series_key(&[]),
        b.configuration.series_key(&[])
    );
}

#[test]
fn two_results_of_one_cell_in_one_upload_are_refused() {
    // The 2024 SGLang file ran 4096/1024 twice (records 3 and 4).
    let err = upload(
        &["testdata/sglang/datacrunch-h200-llama33-70b-offline-rate-infinity-2024-12.jsonl"],
        json!({}),
    )
    .unwrap_err();
    assert_eq!(
        err,
        "/files/0 | `/files/0` (\"testdata/sglang/datacrunch-h200-llama33-70b-offline-rate-infinity-2024-12.jsonl\", record 4) and `/files/0` (\"testdata/sglang/datacrunch-h200-llama33-70b-offline-rate-infinity-2024-12.jsonl\", record 3) are two records of one file with one series key ({\"benchmark.name\":\"sglang-bench-serving\"}) and one cell (`request_rate=inf;input_len=4096;output_len=1024;dataset=random`): one upload is one run, so they are ambiguous and are not pooled. Split the file and upload each record as its own run (its own repeat index), or remove the record that is not wanted."
    );
    // A vLLM run and its printed block in one upload: one workload twice.
    let err = upload(
        &[
            "examples/history/baseline_completions_c4_isl512_osl128.json",
            "testdata/console/vllm-0.33.0-mock-baseline-c4.txt",
        ],
        json!({"benchmark": {"command": vllm_command(4, 60, 512)}}),
    )
    .unwrap_err();
    assert!(
        err.starts_with("/files/1 | `/files/1` (\"testdata/console/vllm-0.33.0-mock-baseline-c4.txt\", record 0) and `/files/0` (\"examples/history/baseline_completions_c4_isl512_osl128.json\", record 0) are two results"),
        "{err}"
    );
    // Two runs of different concurrency are two cells; the same file twice counts once.
    let ok = upload(
        &[
            "examples/history/baseline_completions_c4_isl512_osl128.json",
            "examples/history/baseline_completions_c1_isl512_osl128.json",
            "examples/history/baseline_completions_c4_isl512_osl128.json",
        ],
        json!({}),
    )
    .unwrap();
    assert_eq!(ok.len(), 2);
}

#[test]
fn sglang_2024_layout_reads_exact_values() {
    let path = "testdata/sglang/layout-2024/sglang-2024-layout-mock-baseline-c4.jsonl";
    let (format, old) = parse_file(None, &read(path), 0).unwrap();
    assert_eq!(format, "sglang-bench-serving");
    let (_, new) = parse_file(
        None,
        &read("testdata/sglang/sglang-0.5.23-mock-baseline_completions_c4_isl512_osl128.jsonl"),
        0,
    )
    .unwrap();
    let r = &old[0];
    assert_eq!(value(r, "ttft", "p50"), (37.95512800002143, Some(60)));
    assert_eq!(value(r, "itl", "p50"), (10.507061500106829, None));
    assert_eq!(value(r, "e2el", "mean"), (1359.773917433332, Some(60)));
    assert_eq!(value(r, "e2el", "p50"), (1353.588077999916, Some(60)));
    assert_eq!(
        value(r, "output_throughput", "value"),
        (375.933814381777, None)
    );
    assert_eq!(value(r, "total_input_tokens", "value"), (30720.0, None));
    assert_eq!(value(r, "total_output_tokens", "value"), (7680.0, None));
    assert_eq!(value(r, "duration", "value"), (20.429127964000145, None));
    assert_eq!(value(r, "completed", "value"), (60.0, None));
    assert_eq!(r.metrics.len(), 9);
    // Every value is the new layout's value of the same run.
    for m in &r.metrics {
        let twin = new[0]
            .metrics
            .iter()
            .find(|n| n.name == m.name && n.stat == m.stat)
            .unwrap();
        assert_eq!(m.value, twin.value, "{} {}", m.name, m.stat);
    }
    assert_eq!(
        r.cell.key(),
        "request_rate=inf;input_len=512;output_len=128;dataset=random-ids"
    );
    assert_eq!(r.facts["sglang_layout"], "2024");
    assert_eq!(r.facts["total_output_tokens_retokenized"], 7680);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn aiperf_records_layout_reads_exact_values() {
    let (format, old) = parse_file(
        None,
        &read("testdata/aiperf/layout-0.1-records/profile_export_aiperf.json"),
        0,
    )
    .unwrap();
    assert_eq!(format, "aiperf");
    let (_, new) = parse_file(
        None,
        &read("testdata/aiperf/baseline_completions_c4_isl512_osl128/profile_export_aiperf.json"),
        0,
    )
    .unwrap();
    let r = &old[0];
    // `ttft` is today's time_to_first_token.
    assert_eq!(value(r, "ttft", "mean"), (37.63768373333333, Some(60)));
    assert_eq!(value(r, "ttft", "p99"), (63.40118971, Some(60)));
    assert_eq!(
        value(r, "request_throughput", "value"),
        (2.729428612366231, None)
    );
    assert_eq!(value(r, "completed", "value"), (60.0, None));
    // The old layout has every value the new one has of these tags, but no p10.
    let mut missing = Vec::new();
    for n in &new[0].metrics {
        match r
            .metrics
            .iter()
            .find(|m| m.name == n.name && m.stat == n.stat)
        {
            Some(m) => assert_eq!((m.value, m.n), (n.value, n.n), "{} {}", n.name, n.stat),
            None => missing.push(format!("{} {}", n.name, n.stat)),
        }
    }
    assert!(
        missing.iter().all(|m| m.ends_with(" p10")
            || m.starts_with("time_to_first_output_token")
            || m.starts_with("e2e_output_token_throughput")
            || m.starts_with("total_token_throughput")),
        "{missing:?}"
    );
    assert_eq!(r.metrics.len(), 79);
    assert_eq!(r.cell, new[0].cell);
    assert_eq!(
        r.cell.key(),
        "max_concurrency=4;request_rate=inf;input_len=512;output_len=128;num_prompts=60"
    );
    assert_eq!(r.configuration.model.name.as_deref(), Some("mock-llm"));
    assert_eq!(r.facts["aiperf_layout"], "records");
}

/// The results of an upload of `files` with `configuration` and `cell` (the runner's `--cell`),
/// before the one-result-per-cell check.
fn normalized(files: &[&str], configuration: Value, cell: Value) -> Vec<BenchResult> {
    let doc: UploadDocument = serde_json::from_value(json!({
        "run": {"commit": {"sha": "abcdef1"}},
        "configuration": configuration,
        "cell": cell,
        "files": files.iter().map(|p| json!({"name": p, "content": read(p)})).collect::<Vec<_>>(),
    }))
    .unwrap();
    doc.normalize().unwrap()
}

/// What the server knows of a first run's work (server/src/storage/detection.rs and
/// analysis/group.rs): the cell's requested lengths, the measured ones and the drawn range
/// from the result's facts.
fn own_workload(r: &BenchResult) -> Workload {
    let fact = |k: &str| r.facts.get(k).and_then(Value::as_f64);
    let total_output = r
        .metrics
        .iter()
        .find(|m| m.name == "total_output_tokens" && m.stat.to_string() == "value")
        .map(|m| m.value);
    Workload {
        requested_input: r.cell.input_len.map(|v| v as f64),
        requested_output: r.cell.output_len.map(|v| v as f64),
        candidate: Some(RunLengths {
            input: fact(MEASURED_INPUT_LEN),
            output: fact(MEASURED_OUTPUT_LEN),
            retokenized_share: fact("total_output_tokens_retokenized")
                .zip(total_output)
                .map(|(r, t)| r / t),
            requested_range: r
                .facts
                .get(REQUESTED_LEN_RANGE)
                .map(|v| serde_json::from_value(v.clone()).unwrap()),
        }),
        ..Workload::default()
    }
}

fn own_confounds(r: &BenchResult) -> Vec<WorkloadConfound> {
    workload_confounds(&own_workload(r), None, 10, 5.0)
}

#[test]
fn no_real_file_that_did_its_requested_work_is_requested_len_mismatch() {
    let none = json!({});
    let vllm = json!({"benchmark": {"command": vllm_command(4, 60, 512)}});
    let uploads: Vec<(Vec<&str>, Value, Value)> = vec![
        // The generated vLLM runs (isl512/osl128, --ignore-eos), lengths from the command.
        (vec!["examples/history/baseline_completions_c1_isl512_osl128.json"], vllm.clone(), none.clone()),
        (vec!["examples/history/baseline_completions_c4_isl512_osl128.json"], vllm.clone(), none.clone()),
        (vec!["examples/history/candidate_completions_c1_isl512_osl128.json"], vllm.clone(), none.clone()),
        (vec!["examples/history/candidate_completions_c4_isl512_osl128.json"], vllm.clone(), none.clone()),
        (vec!["examples/history/goodput_baseline_s11_c4.json"], vllm.clone(), none.clone()),
        (vec!["testdata/console/vllm-0.33.0-mock-baseline-c4.txt"], vllm.clone(), none.clone()),
        (vec!["testdata/console/generated/vllm-candidate-c4.txt"], vllm.clone(), none.clone()),
        // Given as `--cell`, as its path says (CTX1024 ... O128).
        (
            vec!["testdata/vllm/llm-benchmaxxing-vllm-bench-serve-2026-01-glm47-fp8-h100-tp8.json"],
            none.clone(),
            json!({"input_len": 1024, "output_len": 128}),
        ),
        // SGLang: its own lengths; the 2024 and 2026 files drew them with random_range_ratio 0.
        (vec!["testdata/sglang/sglang-0.5.23-mock-baseline_completions_c4_isl512_osl128.jsonl"], none.clone(), none.clone()),
        (vec!["testdata/sglang/sglang-0.5.23-mock-candidate_completions_c4_isl512_osl128.jsonl"], none.clone(), none.clone()),
        (vec!["testdata/sglang/datacrunch-h200-llama33-70b-offline-rate-infinity-2024-12.jsonl"], none.clone(), none.clone()),
        (vec!["testdata/sglang/llm-benchmaxxing-sglang-bench_serving-2026-03-output-details-server_info-gpt-oss-120b-h100.jsonl"], none.clone(), none.clone()),
        (vec!["testdata/sglang/layout-2024/sglang-2024-layout-mock-baseline-c4.jsonl"], none.clone(), none.clone()),
        // AIPerf, GenAI-Perf, guidellm (the llm-d fixture's chat template doubles its 32-token
        // prompts), LLMPerf.
        (vec!["testdata/aiperf/baseline_completions_c4_isl512_osl128/profile_export_aiperf.json"], none.clone(), none.clone()),
        (vec!["testdata/aiperf/candidate_completions_c4_isl512_osl128/profile_export_aiperf.json"], none.clone(), none.clone()),
        (vec!["testdata/aiperf/aiperf-0.8.0-tests-audit-baseline-chat-bare-mock-nonstreaming.json"], none.clone(), none.clone()),
        (vec!["testdata/genai-perf/baseline_completions_c1_isl512_osl64/mock-llm-openai-completions-concurrency1/profile_export_genai_perf.json"], none.clone(), none.clone()),
        (vec!["testdata/guidellm/baseline_concurrent_1-4-16_isl512_osl128.json"], none.clone(), none.clone()),
        (vec!["testdata/guidellm/candidate_concurrent_1-4-16_isl512_osl128.yaml"], none.clone(), none.clone()),
        (vec!["testdata/guidellm/guidellm-tests-benchmarks_stripped-v0.2-format-sweep.json"], none.clone(), none.clone()),
        (vec!["testdata/guidellm/llm-d-fixture-guidellm-0.8.0dev18-report-v2-mock-constant.json"], none.clone(), none.clone()),
        (vec!["testdata/llmperf/llmperf-leaderboard-groq-llama2-70b-summary.json"], none.clone(), none.clone()),
    ];
    let mut checked = 0;
    for (files, configuration, cell) in uploads {
        for r in normalized(&files, configuration, cell) {
            let w = own_workload(&r);
            let c = w.candidate.as_ref().unwrap();
            let requested = (w.requested_input, w.requested_output);
            if requested.0.is_some() && c.input.is_some()
                || requested.1.is_some() && c.output.is_some()
            {
                checked += 1;
            }
            assert_eq!(own_confounds(&r), [], "{files:?} {}", r.cell.key());
        }
    }
    // 30 results measured a length their cell requests: all but the GenAI-Perf and LLMPerf
    // summaries (no token totals) and the SGLang sharegpt run (no requested length).
    assert_eq!(checked, 30);
}

#[test]
fn sglang_draws_lengths_below_the_requested_one_and_the_check_expects_their_mean() {
    // random_range_ratio 0: input lengths 1..=1024, output 0..=128; 100 requests.
    let path = "testdata/sglang/llm-benchmaxxing-sglang-bench_serving-2026-03-output-details-server_info-gpt-oss-120b-h100.jsonl";
    let r = normalized(&[path], json!({}), json!({})).remove(0);
    assert_eq!(r.facts["random_range_ratio"], json!(0.0));
    assert_eq!(r.facts[MEASURED_INPUT_LEN], json!(505.61));
    assert_eq!(r.facts[MEASURED_OUTPUT_LEN], json!(61.08));
    let range: LengthRanges = serde_json::from_value(r.facts[REQUESTED_LEN_RANGE].clone()).unwrap();
    // The middle of the range ± 4 standard errors of a mean of 100 uniform draws.
    let se = |width: f64| ((width * width - 1.0) / 12.0 / 100.0).sqrt();
    assert_eq!(
        range.input,
        Some([512.5 - 4.0 * se(1024.0), 512.5 + 4.0 * se(1024.0)])
    );
    assert_eq!(
        range.output,
        Some([64.0 - 4.0 * se(129.0), 64.0 + 4.0 * se(129.0)])
    );
    assert_eq!(
        range
            .input
            .map(|[a, b]| format!("{a:.1}–{b:.1}"))
            .as_deref(),
        Some("394.3–630.7")
    );
    // The 2024 layout's ratio 1: lengths fixed, nothing recorded.
    let r = normalized(
        &["testdata/sglang/layout-2024/sglang-2024-layout-mock-baseline-c4.jsonl"],
        json!({}),
        json!({}),
    )
    .remove(0);
    assert_eq!(r.facts["random_range_ratio"], json!(1.0));
    assert!(!r.facts.contains_key(REQUESTED_LEN_RANGE));
    // vLLM's range ratio, from the recorded command: either of its two meanings, and the
    // random prefix on every input.
    let command = "vllm bench serve --dataset-name random --random-input-len 1000 --random-output-len 100 --random-range-ratio 0.5 --random-prefix-len 24";
    let r = normalized(
        &["examples/history/baseline_completions_c4_isl512_osl128.json"],
        json!({"benchmark": {"command": command}}),
        json!({}),
    )
    .remove(0);
    let range: LengthRanges = serde_json::from_value(r.facts[REQUESTED_LEN_RANGE].clone()).unwrap();
    let [lo, hi] = range.input.unwrap();
    // [500, 1500] (vLLM since April 2025) or [500, 1000] (before), 60 requests, + 24.
    let se = |width: f64| ((width * width - 1.0) / 12.0 / 60.0).sqrt();
    assert_eq!(lo, (750.0 - 4.0 * se(501.0)) + 24.0);
    assert_eq!(hi, (1000.0 + 4.0 * se(1001.0)) + 24.0);
    let [lo, hi] = range.output.unwrap();
    assert_eq!([lo, hi], [75.0 - 4.0 * se(51.0), 100.0 + 4.0 * se(101.0)]);
    // The generated runs' `--random-range-ratio 0`: fixed lengths, nothing recorded.
    let r = normalized(
        &["examples/history/baseline_completions_c4_isl512_osl128.json"],
        json!({"benchmark": {"command": vllm_command(4, 60, 512)}}),
        json!({}),
    )
    .remove(0);
    assert!(!r.facts.contains_key(REQUESTED_LEN_RANGE));
}

/// Every series of one result as a candidate with no history.
fn first_run(r: &BenchResult) -> GroupInput {
    GroupInput {
        series_key: "key".into(),
        cell_key: r.cell.key(),
        pinned_baseline: None,
        series: r
            .metrics
            .iter()
            .map(|m| SeriesInput {
                series_id: format!("{}:{}:{:?}", m.name, m.stat, m.slo_profile),
                metric: m.name.clone(),
                stat: m.stat.clone(),
                slo_profile: m.slo_profile.clone(),
                history: Vec::new(),
                candidate: Some(CommitRuns::new("c", &[m.value])),
                following: Vec::new(),
            })
            .collect(),
    }
}

#[test]
fn a_vllm_file_whose_cell_requests_8192_input_tokens_is_requested_len_mismatch() {
    // The real c4 run measured 30722 input tokens over 60 requests; its cell says 8192, from
    // `--cell input_len=8192` or from a recorded `--random-input-len 8192`.
    let json = "examples/history/baseline_completions_c4_isl512_osl128.json";
    let by_cell = normalized(&[json], json!({}), json!({"input_len": 8192})).remove(0);
    let by_command = normalized(
        &[json],
        json!({"benchmark": {"command": vllm_command(4, 60, 8192)}}),
        json!({}),
    )
    .remove(0);
    assert_eq!(
        by_cell.cell.key(),
        "max_concurrency=4;request_rate=inf;input_len=8192;num_prompts=60"
    );
    let message = "requested length mismatch: measured mean input length 512 tokens, the cell \
                   requested 8192 (-93.7 %; tolerance 5 %): no regression or improvement verdict \
                   on TTFT";
    for r in [&by_cell, &by_command] {
        let found = own_confounds(r);
        assert_eq!(
            found,
            [WorkloadConfound {
                code: ConfoundCode::RequestedLenMismatch,
                length: LengthKind::Input,
                baseline: Some(8192.0),
                candidate: 30722.0 / 60.0,
                delta_pct: Some((30722.0 / 60.0 - 8192.0) / 8192.0 * 100.0),
                baseline_commits: Vec::new(),
                metrics: vec!["ttft".to_string()],
                message: message.to_string(),
            }]
        );
        let report = analyze_checked(
            &first_run(r),
            &own_workload(r),
            &Settings::default(),
            &Gates::single(),
        );
        assert_eq!(report.workload, found);
        let tested = ["value", "mean", "p50", "p90", "p95", "p99"];
        for s in &report.series {
            let expected = if s.metric == "ttft" && tested.contains(&s.stat.to_string().as_str()) {
                SeriesState::WorkloadMismatch
            } else if s.state == SeriesState::Descriptive {
                continue;
            } else {
                SeriesState::NoBaseline
            };
            assert_eq!(s.state, expected, "{} {}", s.metric, s.stat);
            if expected == SeriesState::WorkloadMismatch {
                assert_eq!(s.reason.as_deref(), Some(message));
                assert_eq!(s.comparison, None);
            }
        }
        assert_eq!(
            report
                .series
                .iter()
                .filter(|s| s.state == SeriesState::WorkloadMismatch)
                .count(),
            5,
            "mean, p50, p90, p95 and p99 TTFT"
        );
    }
    // The output (128 of 128 requested) is the requested one: TPOT and the throughputs are
    // not confounded.
    assert_eq!(by_cell.facts[MEASURED_OUTPUT_LEN], json!(128.0));
}
