//! Series you can trust (issue 8): a series without a baseline says which stored series is
//! nearest and what differs (`no_baseline`), and a pair that did different work is
//! `workload_mismatch` with both lengths and no verdict on the metrics that length confounds.
//! Over real HTTP on every database, with the real `vllm bench serve` files of
//! examples/history (shared/samples/generated): the hardware label is added as the top-level
//! string `vllm bench serve --metadata hardware=...` writes; the mismatched pair's output
//! token totals are set to 300 and 1023 tokens per request (per-request arrays removed, so the
//! measured mean is `total_output_tokens / completed`), and said so below.

use crate::common;

use benchtrail_core::regression::confounds::{ConfoundCode, LengthKind, Nearest, WorkloadConfound};
use common::db::for_each_store;
use common::server::{repo_file, TestServer};
use serde_json::{json, Value};

const BASELINE: &str = "examples/history/baseline_completions_c4_isl512_osl128.json";
const CANDIDATE: &str = "examples/history/candidate_completions_c4_isl512_osl128.json";

fn sha(i: usize) -> String {
    format!("{:040x}", i + 1)
}

/// A real vLLM file with `edit` applied, as one upload of commit `i` (parent: commit i − 1).
fn doc(
    i: usize,
    path: &str,
    config: Value,
    edit: impl Fn(&mut serde_json::Map<String, Value>),
) -> Value {
    let mut file: Value = serde_json::from_str(&repo_file(path)).unwrap();
    edit(file.as_object_mut().unwrap());
    let parents: Vec<String> = (i > 0).then(|| sha(i - 1)).into_iter().collect();
    json!({
        "run": {"commit": {"sha": sha(i), "parents": parents, "time": format!("2026-11-0{}T00:00:00Z", i + 1)},
                "branch": "main"},
        "configuration": config,
        "files": [{"name": "result.json", "content": file.to_string()}],
    })
}

async fn analysis(server: &TestServer, run: &str) -> Value {
    let (status, a) = server.get(&format!("/api/v1/runs/{run}/analysis")).await;
    assert_eq!(status, 200, "{a}");
    a["analysis"].clone()
}

#[tokio::test]
async fn a_cross_hardware_pair_is_no_baseline_naming_the_hardware_and_opens_no_alert() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("hw", json!({})).await;
        let hardware = |h: &'static str| {
            move |f: &mut serde_json::Map<String, Value>| {
                f.insert("hardware".into(), json!(h));
            }
        };
        let (status, _) = server
            .upload("hw", &token, &doc(0, BASELINE, json!({}), hardware("local-docker-H100")))
            .await;
        assert_eq!(status, 201, "{db}");
        let (status, receipt) = server
            .upload("hw", &token, &doc(1, CANDIDATE, json!({}), hardware("ci-runner-L40S")))
            .await;
        assert_eq!(status, 201, "{db}: {receipt}");
        let run = receipt["run_id"].as_str().unwrap();

        // Never tested: no alert of any kind.
        let (_, alerts) = server.get("/api/v1/projects/hw/alerts").await;
        assert_eq!(alerts["items"], json!([]), "{db}");

        let a = analysis(&server, run).await;
        let groups = a["groups"].as_array().unwrap();
        assert_eq!(groups.len(), 1, "{db}");
        let g = &groups[0];
        assert_eq!(g["series_key"]["metadata.hardware"], "ci-runner-L40S", "{db}");
        let nearest = &g["report"]["nearest"];
        assert_eq!(nearest["summary"], "hardware differs: ci-runner-L40S vs local-docker-H100", "{db}");
        assert_eq!(nearest["series_key"]["metadata.hardware"], "local-docker-H100", "{db}");
        assert_eq!(nearest["cell_key"], g["cell"], "{db}: same cell");
        assert_eq!(
            nearest["differences"],
            json!([{"field": "metadata.hardware", "baseline": "local-docker-H100", "candidate": "ci-runner-L40S"}]),
            "{db}"
        );
        // The stored JSON reads back into the typed struct, and writes out the same.
        let typed: Nearest = serde_json::from_value(nearest.clone()).unwrap();
        assert_eq!(typed.summary, "hardware differs: ci-runner-L40S vs local-docker-H100");
        assert_eq!(typed.differences.len(), 1);
        assert_eq!(serde_json::to_value(&typed).unwrap(), *nearest, "{db}");
        let series = g["report"]["series"].as_array().unwrap();
        let states = |s: &str| series.iter().filter(|x| x["state"] == s).count();
        // Every tested series of the candidate: 4 latencies × 6 tested statistics, 3 throughputs,
        // and the counts; nothing compared, nothing `insufficient_data`.
        assert!(states("no_baseline") > 0, "{db}");
        assert_eq!(states("insufficient_data") + states("no_change") + states("regression"), 0, "{db}");
        let reason = "no baseline: no earlier commit has this series; the nearest series with \
                      history differs in 1 field(s): hardware differs: ci-runner-L40S vs local-docker-H100";
        for s in series.iter().filter(|x| x["state"] == "no_baseline") {
            assert_eq!(s["reason"], reason, "{db}");
        }
        let (_, verdict) = server.get(&format!("/api/v1/runs/{run}/verdict")).await;
        assert_ne!(verdict["verdict"], "pass", "{db}");
        assert_ne!(verdict["verdict"], "fail", "{db}: {verdict}");
        let r: Vec<&Value> = verdict["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["code"] == "no_baseline")
            .collect();
        assert_eq!(r.len(), 1, "{db}: {verdict}");
        assert_eq!(r[0]["level"], "warn");
        assert_eq!(
            r[0]["message"],
            format!("{} series not tested ({reason})", states("no_baseline")),
            "{db}"
        );
        assert_eq!(verdict["series_states"]["no_baseline"], states("no_baseline"), "{db}");
    })
    .await;
}

/// `vllm bench serve` of 1024 requested output tokens (recorded as `benchtrail upload --config`
/// does).
fn config() -> Value {
    json!({"benchmark": {"command": "vllm bench serve --backend openai --dataset-name random --random-input-len 512 --random-output-len 1024 --num-prompts 60 --max-concurrency 4 --request-rate inf --model mock-llm"}})
}

/// The file without its per-request arrays, with `per_request` output tokens per request.
fn output_tokens(per_request: u64) -> impl Fn(&mut serde_json::Map<String, Value>) {
    move |f| {
        f.retain(|_, v| !v.is_array());
        let completed = f["completed"].as_u64().unwrap();
        f.insert("total_output_tokens".into(), json!(per_request * completed));
    }
}

#[tokio::test]
async fn a_pair_of_different_output_lengths_is_workload_mismatch_with_both_lengths_and_no_verdict()
{
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("len", json!({})).await;
        for i in 0..3 {
            let (status, body) = server
                .upload("len", &token, &doc(i, BASELINE, config(), output_tokens(1023)))
                .await;
            assert_eq!(status, 201, "{db}: {body}");
        }
        let (status, receipt) = server
            .upload("len", &token, &doc(3, CANDIDATE, config(), output_tokens(300)))
            .await;
        assert_eq!(status, 201, "{db}: {receipt}");
        let run = receipt["run_id"].as_str().unwrap();
        let a = analysis(&server, run).await;
        let g = &a["groups"][0];
        assert_eq!(
            g["cell"],
            "max_concurrency=4;request_rate=inf;input_len=512;output_len=1024;dataset=random;num_prompts=60",
            "{db}"
        );
        let message = "workload mismatch: measured mean output length 300 tokens vs 1023 in the \
                       baseline (-70.7 %, 3 baseline commit(s); tolerance 5 %): no regression or \
                       improvement verdict on TPOT, ITL, E2E latency, request throughput, output \
                       throughput, total token throughput, request goodput, SLO attainment";
        let w = g["report"]["workload"].as_array().unwrap();
        assert_eq!(w.len(), 1, "{db}: {w:#?}");
        assert_eq!(w[0]["code"], "workload_mismatch");
        assert_eq!(w[0]["length"], "output");
        assert_eq!(w[0]["baseline"], 1023.0);
        assert_eq!(w[0]["candidate"], 300.0);
        assert_eq!(w[0]["baseline_commits"], json!([sha(0), sha(1), sha(2)]));
        assert_eq!(w[0]["message"], message, "{db}");
        // The stored JSON reads back into the typed confound, and writes out the same.
        let typed: Vec<WorkloadConfound> = serde_json::from_value(json!(w)).unwrap();
        assert_eq!(typed[0].code, ConfoundCode::WorkloadMismatch);
        assert_eq!(typed[0].length, LengthKind::Output);
        assert_eq!(
            typed[0].metrics,
            ["tpot", "itl", "e2el", "request_throughput", "output_throughput", "total_token_throughput", "request_goodput", "slo_attainment"]
        );
        assert_eq!(typed[0].delta_pct, Some((300.0 - 1023.0) / 1023.0 * 100.0));
        assert_eq!(serde_json::to_value(&typed).unwrap(), json!(w), "{db}");
        let affected = ["tpot", "itl", "e2el", "request_throughput", "output_throughput", "total_token_throughput"];
        let series = g["report"]["series"].as_array().unwrap();
        for s in series {
            let m = s["metric"].as_str().unwrap();
            if affected.contains(&m) && s["state"] != "descriptive" {
                assert_eq!(s["state"], "workload_mismatch", "{db}: {s}");
                assert_eq!(s["reason"], message, "{db}");
                assert!(s.get("comparison").is_none(), "{db}: no comparison");
            }
        }
        // The same input length: TTFT is still tested (the candidate's prefill is slower).
        assert!(
            series.iter().any(|s| s["metric"] == "ttft" && s.get("comparison").is_some()),
            "{db}"
        );
        // No finding, effect-only description or alert on a confounded metric.
        let findings = g["report"]["findings"].as_array().unwrap();
        for f in findings.iter().chain(g["effect_only"].as_array().unwrap()) {
            assert!(!affected.contains(&f["metric"].as_str().unwrap()), "{db}: {f}");
            for p in f["parts"].as_array().into_iter().flatten() {
                assert!(!affected.contains(&p["metric"].as_str().unwrap()), "{db}: {f}");
            }
        }
        let (_, alerts) = server.get("/api/v1/projects/len/alerts").await;
        for al in alerts["items"].as_array().unwrap() {
            assert_eq!(al["metric"], "ttft", "{db}: {al}");
        }
        let (_, verdict) = server.get(&format!("/api/v1/runs/{run}/verdict")).await;
        let r: Vec<&Value> = verdict["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["code"] == "workload_mismatch")
            .collect();
        assert_eq!(r.len(), 1, "{db}: {verdict}");
        assert_eq!(r[0]["level"], "warn");
        assert_eq!(r[0]["message"], message);
    })
    .await;
}

/// One upload of commit 0 of the real files `paths` with `configuration` and `cell` (the
/// runner's `--cell`).
fn first_upload(paths: &[&str], configuration: Value, cell: Value) -> Value {
    let files: Vec<Value> = paths
        .iter()
        .map(|p| json!({"name": p, "content": repo_file(p)}))
        .collect();
    json!({
        "run": {"commit": {"sha": sha(0), "time": "2026-11-01T00:00:00Z"}, "branch": "main"},
        "configuration": configuration,
        "cell": cell,
        "files": files,
    })
}

/// The real c4 run measured 30722 input tokens over 60 requests (512 each); its `--cell` says
/// 8192: its own TTFT is not tested, and the verdict says why.
#[tokio::test]
async fn a_run_that_measured_512_input_tokens_of_8192_requested_is_requested_len_mismatch() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("req", json!({})).await;
        let (status, receipt) = server
            .upload("req", &token, &first_upload(&[BASELINE], json!({}), json!({"input_len": 8192})))
            .await;
        assert_eq!(status, 201, "{db}: {receipt}");
        let run = receipt["run_id"].as_str().unwrap();
        let a = analysis(&server, run).await;
        let g = &a["groups"][0];
        assert_eq!(g["cell"], "max_concurrency=4;request_rate=inf;input_len=8192;num_prompts=60", "{db}");
        let message = "requested length mismatch: measured mean input length 512 tokens, the cell \
                       requested 8192 (-93.7 %; tolerance 5 %): no regression or improvement \
                       verdict on TTFT";
        assert_eq!(
            g["report"]["workload"],
            json!([{
                "code": "requested_len_mismatch",
                "length": "input",
                "baseline": 8192.0,
                "candidate": 30722.0 / 60.0,
                "delta_pct": (30722.0 / 60.0 - 8192.0) / 8192.0 * 100.0,
                "metrics": ["ttft"],
                "message": message,
            }]),
            "{db}"
        );
        let typed: Vec<WorkloadConfound> =
            serde_json::from_value(g["report"]["workload"].clone()).unwrap();
        assert_eq!(typed[0].code, ConfoundCode::RequestedLenMismatch);
        let series = g["report"]["series"].as_array().unwrap();
        let mismatched: Vec<&str> = series
            .iter()
            .filter(|s| s["state"] == "workload_mismatch")
            .map(|s| s["stat"].as_str().unwrap())
            .collect();
        assert_eq!(mismatched, ["mean", "p50", "p90", "p95", "p99"], "{db}");
        for s in series {
            if s["state"] == "workload_mismatch" {
                assert_eq!(s["metric"], "ttft", "{db}");
                assert_eq!(s["reason"], message, "{db}");
                assert!(s.get("comparison").is_none(), "{db}");
            } else {
                // The output (128 tokens, none requested) is not in question: no baseline yet.
                assert!(s["state"] == "no_baseline" || s["state"] == "descriptive", "{db}: {s}");
            }
        }
        let (_, verdict) = server.get(&format!("/api/v1/runs/{run}/verdict")).await;
        let r: Vec<&Value> = verdict["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["code"] == "requested_len_mismatch")
            .collect();
        assert_eq!(
            r,
            [&json!({"level": "warn", "code": "requested_len_mismatch", "message": message, "cell": g["cell"]})],
            "{db}: {verdict}"
        );
        assert_eq!(verdict["series_states"]["workload_mismatch"], 5, "{db}");
        assert_ne!(verdict["verdict"], "pass", "{db}");
        let (_, alerts) = server.get("/api/v1/projects/req/alerts").await;
        assert_eq!(alerts["items"], json!([]), "{db}");
    })
    .await;
}

/// Real runs that did their requested work: the generated vLLM run with its recorded command
/// (512/128, `--random-range-ratio 0`), and SGLang runs of `random_range_ratio` 0, whose
/// lengths are drawn from 1..=1024 (a mean of about 512 of 1024 requested) and whose drawn
/// range is stored as a fact.
#[tokio::test]
async fn real_runs_of_their_requested_lengths_are_not_requested_len_mismatch() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("ok", json!({})).await;
        let vllm = json!({"benchmark": {"command": "vllm bench serve --backend openai --base-url http://127.0.0.1:8001 --endpoint /v1/completions --dataset-name random --random-input-len 512 --random-output-len 128 --random-range-ratio 0 --num-prompts 60 --max-concurrency 4 --request-rate inf --ignore-eos --model mock-llm"}});
        let sglang = "testdata/sglang/llm-benchmaxxing-sglang-bench_serving-2026-03-output-details-server_info-gpt-oss-120b-h100.jsonl";
        let mut runs = Vec::new();
        for (i, (path, configuration)) in [(BASELINE, vllm), (sglang, json!({}))].into_iter().enumerate() {
            let mut doc = first_upload(&[path], configuration, json!({}));
            doc["run"]["commit"]["sha"] = json!(sha(i));
            let (status, receipt) = server.upload("ok", &token, &doc).await;
            assert_eq!(status, 201, "{db}: {receipt}");
            let run = receipt["run_id"].as_str().unwrap().to_string();
            let a = analysis(&server, &run).await;
            for g in a["groups"].as_array().unwrap() {
                assert!(g["cell"].as_str().unwrap().contains("input_len="), "{db}: {g}");
                assert!(g["report"].get("workload").is_none(), "{db}: {}", g["report"]["workload"]);
            }
            let (_, verdict) = server.get(&format!("/api/v1/runs/{run}/verdict")).await;
            assert!(
                verdict["reasons"].as_array().unwrap().iter().all(|r| r["code"] != "requested_len_mismatch"),
                "{db}: {verdict}"
            );
            runs.push(run);
        }
        let (_, run) = server.get(&format!("/api/v1/runs/{}", runs[1])).await;
        let range = &run["results"][0]["facts"]["requested_len_mean_range"];
        let se = |width: f64| ((width * width - 1.0) / 12.0 / 100.0).sqrt();
        assert_eq!(
            *range,
            json!({"input": [512.5 - 4.0 * se(1024.0), 512.5 + 4.0 * se(1024.0)],
                   "output": [64.0 - 4.0 * se(129.0), 64.0 + 4.0 * se(129.0)]}),
            "{db}"
        );
    })
    .await;
}
