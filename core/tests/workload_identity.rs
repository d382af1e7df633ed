//! The workload identity rule (`benchtrail_core::cell`), adapter by adapter, on real files:
//! which fields make each format's cell, that the recorded benchmark command fills what a file
//! leaves out, that a console summary and the JSON of the same run get the same cell and tool,
//! that two results of one cell in one upload are refused, and the two older layouts (SGLang
//! 2024, AIPerf's `records`) read with exact values (fixtures: their READMEs in testdata/).

mod common;

use benchtrail_core::adapters::parse_file;
use benchtrail_core::cell::{from_command, MEASURED_INPUT_LEN, MEASURED_OUTPUT_LEN};
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
        "/files/0 | `/files/0` (\"testdata/sglang/datacrunch-h200-llama33-70b-offline-rate-infinity-2024-12.jsonl\", record 4) and `/files/0` (\"testdata/sglang/datacrunch-h200-llama33-70b-offline-rate-infinity-2024-12.jsonl\", record 3) are two results of one series key ({\"benchmark.name\":\"sglang-bench-serving\"}) in one cell (`request_rate=inf;input_len=4096;output_len=1024;dataset=random`): one upload is one run, so they are ambiguous and are not pooled. Upload each repeat as its own run with its own `run.repeat_index`, or tell the workloads apart (the file's settings, the recorded `benchmark.command`, or `cell`)."
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
