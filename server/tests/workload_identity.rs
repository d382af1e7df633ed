//! The workload identity rule (`benchtrail_core::cell`) through the API over real HTTP on every
//! database: a pasted `vllm bench serve` console summary and the JSON of the same benchmark
//! (shared/samples/generated: the same runs, copied into testdata/ and examples/history/) land
//! in the same series; runs of different requested lengths never share one; two results of one
//! workload in one upload are refused with a problem naming both files.

use crate::common;

use common::db::for_each_store;
use common::server::{repo_file, TestServer};
use serde_json::{json, Value};

/// The command that produced the generated vLLM samples (generated/MANIFEST.md), recorded with
/// the upload as `benchtrail upload --config` does, with input length `isl`.
fn command(c: u64, n: u64, isl: u64) -> String {
    format!(
        "vllm bench serve --backend openai --base-url http://127.0.0.1:8001 --endpoint /v1/completions --dataset-name random --random-input-len {isl} --random-output-len 128 --random-range-ratio 0 --num-prompts {n} --max-concurrency {c} --request-rate inf --ignore-eos --model mock-llm --tokenizer /models/mock-tokenizer --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,95,99 --seed 42 --save-result --save-detailed"
    )
}

fn doc(sha: char, time: &str, isl: u64, files: &[&str]) -> Value {
    json!({
        "run": {"commit": {"sha": sha.to_string().repeat(40), "time": time}, "branch": "main"},
        "configuration": {"benchmark": {"command": command(4, 60, isl)}},
        "files": files.iter().map(|p| json!({"name": p.rsplit('/').next().unwrap(), "content": repo_file(p)})).collect::<Vec<_>>(),
    })
}

const JSON_BASELINE: &str = "examples/history/baseline_completions_c4_isl512_osl128.json";
const CONSOLE_BASELINE: &str = "testdata/console/vllm-0.33.0-mock-baseline-c4.txt";
const CONSOLE_CANDIDATE: &str = "testdata/console/generated/vllm-candidate-c4.txt";
const CELL: &str =
    "max_concurrency=4;request_rate=inf;input_len=512;output_len=128;dataset=random;num_prompts=60";

#[tokio::test]
async fn a_console_summary_joins_the_series_of_its_json() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        for d in [
            doc('1', "2026-11-01T00:00:00Z", 512, &[JSON_BASELINE]),
            doc('2', "2026-11-02T00:00:00Z", 512, &[CONSOLE_BASELINE]),
            doc('3', "2026-11-03T00:00:00Z", 512, &[CONSOLE_CANDIDATE]),
            // Another requested input length: another cell, another series.
            doc('4', "2026-11-04T00:00:00Z", 5120, &[JSON_BASELINE]),
        ] {
            let (status, body) = server.upload("demo", &token, &d).await;
            assert_eq!(status, 201, "{db}: {body}");
        }
        let (status, list) = server
            .get("/api/v1/projects/demo/series?metric=ttft&stat=p50")
            .await;
        assert_eq!(status, 200, "{db}");
        let mut cells: Vec<(String, String)> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["cell_key"].as_str().unwrap_or_default().to_string(),
                    s["series_id"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        cells.sort();
        let keys: Vec<&str> = cells.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "max_concurrency=4;request_rate=inf;input_len=5120;output_len=128;dataset=random;num_prompts=60",
                CELL,
            ],
            "{db}: {list}"
        );
        let id = &cells[1].1;
        let (status, series) = server
            .get(&format!("/api/v1/projects/demo/series/{id}?branch=main"))
            .await;
        assert_eq!(status, 200, "{db}");
        let points: Vec<(String, f64)> = series["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["commit_sha"].as_str().unwrap()[..1].to_string(),
                    p["value"].as_f64().unwrap(),
                )
            })
            .collect();
        // The JSON's exact p50, then the two printed (rounded) ones, in commit order.
        assert_eq!(
            points,
            [
                ("1".to_string(), 35.63438200001201),
                ("2".to_string(), 35.63),
                ("3".to_string(), 79.64),
            ],
            "{db}: {series}"
        );
    })
    .await;
}

#[tokio::test]
async fn two_results_of_one_workload_in_one_upload_are_refused() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let d = doc(
            '1',
            "2026-11-01T00:00:00Z",
            512,
            &[JSON_BASELINE, CONSOLE_BASELINE],
        );
        let r = reqwest::Client::new()
            .post(server.url("/api/v1/projects/demo/runs"))
            .bearer_auth(&token)
            .json(&d)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 422, "{db}");
        assert_eq!(r.headers()["content-type"], "application/problem+json");
        let problem: Value = r.json().await.unwrap();
        assert_eq!(problem["pointer"], "/files/1", "{db}: {problem}");
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.starts_with(&format!("`/files/1` (\"vllm-0.33.0-mock-baseline-c4.txt\", record 0) and `/files/0` (\"baseline_completions_c4_isl512_osl128.json\", record 0) are two results of one series key ({{\"benchmark.name\":\"vllm-bench-serve\",\"model.name\":\"mock-llm\"}}) in one cell (`{CELL}`)")),
            "{db}: {detail}"
        );
        // Nothing was stored.
        let (_, runs) = server.get("/api/v1/projects/demo/runs").await;
        assert_eq!(runs["items"].as_array().unwrap().len(), 0, "{db}: {runs}");
        // The same file twice is one measurement (duplicate_file), not an ambiguity.
        let d = doc(
            '1',
            "2026-11-01T00:00:00Z",
            512,
            &[JSON_BASELINE, JSON_BASELINE],
        );
        let (status, body) = server.upload("demo", &token, &d).await;
        assert_eq!(status, 201, "{db}: {body}");
    })
    .await;
}
