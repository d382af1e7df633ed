//! The REST API over real HTTP on loopback, on every database (SQLite always, Postgres when
//! `BENCHTRAIL_TEST_DATABASE_URL` is set), with real vLLM result files.

use crate::common;

use common::db::for_each_store;
use common::server::{repo_file, upload_doc, TestServer, ADMIN_TOKEN};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Every real vLLM file of the repository: (path, number of results in it).
const VLLM_FILES: &[(&str, usize)] = &[
    ("examples/history/baseline_completions_c1_isl512_osl128.json", 1),
    ("examples/history/baseline_completions_c4_isl512_osl128.json", 1),
    ("examples/history/candidate_completions_c1_isl512_osl128.json", 1),
    ("examples/history/candidate_completions_c4_isl512_osl128.json", 1),
    ("examples/history/goodput_baseline_s11_c4.json", 1),
    ("examples/history/goodput_baseline_s12_c4.json", 1),
    ("examples/history/goodput_baseline_s13_c4.json", 1),
    ("examples/history/goodput_candidate_s21_c4.json", 1),
    ("examples/history/goodput_tight_baseline_s15_c4.json", 1),
    ("testdata/vllm/nerdalert-benchmark_serving-v0.8-append-result-llama31-8b-2025-04.jsonl", 12),
    ("testdata/vllm/rgshaw-benchmark_serving-2025-08-append-p90-p95-p99-e2el-llama33-70b-fp8-tp4.jsonl", 4),
    ("testdata/vllm/llm-benchmaxxing-vllm-bench-serve-2026-01-glm47-fp8-h100-tp8.json", 1),
];

/// What a vLLM result record says, read independently of the adapter: (metric, stat) → value.
fn expected_from_file(record: &Value) -> BTreeMap<(String, String), f64> {
    const AGGREGATES: &[&str] = &[
        "duration",
        "completed",
        "failed",
        "total_input_tokens",
        "total_output_tokens",
        "request_throughput",
        "request_goodput",
        "output_throughput",
        "total_token_throughput",
        "max_output_tokens_per_s",
        "max_concurrent_requests",
    ];
    let mut out = BTreeMap::new();
    for (key, v) in record.as_object().unwrap() {
        let Some(v) = v.as_f64() else { continue };
        if AGGREGATES.contains(&key.as_str()) {
            out.insert((key.clone(), "value".to_string()), v);
        } else if let Some(body) = key.strip_suffix("_ms") {
            let (stat, metric) = body.split_once('_').unwrap();
            let stat = if stat == "median" { "p50" } else { stat };
            out.insert((metric.to_string(), stat.to_string()), v);
        }
    }
    out
}

/// The stored values that come from the file: all but goodput and attainment that benchtrail
/// computed under the project's SLO profiles (the tool's own goodput has profile `tool`).
fn stored_metrics(result: &Value) -> BTreeMap<(String, String), f64> {
    result["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["slo_profile"].is_null() || m["slo_profile"] == "tool")
        .map(|m| {
            (
                (
                    m["name"].as_str().unwrap().to_string(),
                    m["stat"].as_str().unwrap().to_string(),
                ),
                m["value"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn every_vllm_file_uploads_and_reads_back_exactly() {
    for_each_store(|_, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        for (i, (path, count)) in VLLM_FILES.iter().enumerate() {
            let doc = upload_doc(&format!("{:040x}", i + 1), "2026-11-01T00:00:00Z", &[path]);
            let (status, receipt) = server.upload("demo", &token, &doc).await;
            assert_eq!(status, 201, "{path}: {receipt}");
            assert_eq!(receipt["results"], *count as u64, "{path}");
            assert_eq!(receipt["created"], true);
            let id = receipt["run_id"].as_str().unwrap();
            assert_eq!(receipt["path"], format!("/runs/{id}"));

            let (status, run) = server.get(&format!("/api/v1/runs/{id}")).await;
            assert_eq!(status, 200);
            let records: Vec<Value> = repo_file(path)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let results = run["results"].as_array().unwrap();
            assert_eq!(results.len(), records.len(), "{path}");
            for (record, result) in records.iter().zip(results) {
                assert_eq!(stored_metrics(result), expected_from_file(record), "{path}");
                assert_eq!(result["config_fingerprint"].as_str().unwrap().len(), 64);
                assert_eq!(result["cell"]["key"], result["cell_key"]);
            }
            // The file is kept byte for byte.
            let r = server
                .http
                .get(server.url(&format!("/api/v1/runs/{id}/files/0")))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            assert_eq!(r.text().await.unwrap(), repo_file(path), "{path}");
        }
        let (_, runs) = server.get("/api/v1/projects/demo/runs?limit=500").await;
        assert_eq!(runs["items"].as_array().unwrap().len(), VLLM_FILES.len());
    })
    .await;
}

#[tokio::test]
async fn metric_values_carry_unit_and_sample_count() {
    for_each_store(|_, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let doc = upload_doc(
            &"a".repeat(40),
            "2026-11-01T00:00:00Z",
            &["examples/history/baseline_completions_c1_isl512_osl128.json"],
        );
        let (_, receipt) = server.upload("demo", &token, &doc).await;
        let (_, run) = server
            .get(&format!(
                "/api/v1/runs/{}",
                receipt["run_id"].as_str().unwrap()
            ))
            .await;
        let metrics = run["results"][0]["metrics"].as_array().unwrap();
        let find = |name: &str, stat: &str| {
            metrics
                .iter()
                .find(|m| m["name"] == name && m["stat"] == stat)
                .unwrap()
                .clone()
        };
        let ttft = find("ttft", "p99");
        assert_eq!(ttft["unit"], "ms");
        assert_eq!(ttft["value"].as_f64().unwrap(), 38.17072886003415);
        assert_eq!(ttft["n"], 20);
        let itl = find("itl", "p50");
        assert_eq!(itl["n"], 2540);
        let rt = find("request_throughput", "value");
        assert_eq!(rt["unit"], "req/s");
        assert_eq!(rt["value"].as_f64().unwrap(), 0.7693989756787135);
        assert_eq!(find("output_throughput", "value")["unit"], "tok/s");
        assert_eq!(find("duration", "value")["unit"], "s");
        assert_eq!(run["results"][0]["cell"]["load"]["request_rate"], "inf");
        assert_eq!(
            run["results"][0]["cell_key"],
            "max_concurrency=1;request_rate=inf;num_prompts=20"
        );
        let warnings = run["results"][0]["warnings"].as_array().unwrap();
        assert_eq!(
            warnings
                .iter()
                .filter(|w| w["code"] == "small_sample_tail")
                .count(),
            3
        );

        let fp = run["results"][0]["config_fingerprint"].as_str().unwrap();
        let (status, config) = server.get(&format!("/api/v1/configs/{fp}")).await;
        assert_eq!(status, 200);
        assert_eq!(config["configuration"]["model"]["name"], "mock-llm");
        assert_eq!(
            config["configuration"]["metadata"]["server_version"],
            "baseline"
        );
        assert_eq!(config["fingerprint"], fp);
    })
    .await;
}

#[tokio::test]
async fn reupload_of_the_same_run_id_stores_nothing_twice() {
    for_each_store(|_, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let mut doc = upload_doc(
            &"b".repeat(40),
            "2026-11-01T00:00:00Z",
            &["examples/history/goodput_baseline_s11_c4.json"],
        );
        doc["run"]["id"] = json!("0b7d6b3e-8f0c-4a51-9d2e-1f4b8c2a7e10");
        let (status, first) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 201);
        assert_eq!(first["created"], true);
        let (status, second) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 200);
        assert_eq!(second["created"], false);
        assert_eq!(second["run_id"], "0b7d6b3e-8f0c-4a51-9d2e-1f4b8c2a7e10");
        assert_eq!(second["results"], 1);
        let (_, runs) = server.get("/api/v1/projects/demo/runs").await;
        assert_eq!(runs["items"].as_array().unwrap().len(), 1);
        let (_, series) = server
            .get("/api/v1/projects/demo/series?metric=ttft&stat=p99")
            .await;
        let id = series["items"][0]["series_id"].as_str().unwrap();
        let (_, points) = server
            .get(&format!("/api/v1/projects/demo/series/{id}"))
            .await;
        assert_eq!(points["points"].as_array().unwrap().len(), 1);

        // The same id with other content is refused, and so is a bad retry.
        let mut changed = doc.clone();
        changed["files"][0]["content"] =
            json!(repo_file("examples/history/goodput_baseline_s12_c4.json"));
        let (status, problem) = server.upload("demo", &token, &changed).await;
        assert_eq!(status, 409, "{problem}");
        let mut bad = doc.clone();
        bad["run"]["commit"]["sha"] = json!("zz");
        let (status, _) = server.upload("demo", &token, &bad).await;
        assert_eq!(status, 422);

        // The same id in another project is a conflict, not a silent success.
        let other = server.project_with_token("other", json!({})).await;
        let (status, problem) = server.upload("other", &other, &doc).await;
        assert_eq!(status, 409, "{problem}");
    })
    .await;
}

#[tokio::test]
async fn bad_uploads_get_problem_details_and_store_nothing() {
    for_each_store(|_, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let good = repo_file("testdata/vllm/rgshaw-benchmark_serving-2025-08-append-p90-p95-p99-e2el-llama33-70b-fp8-tp4.jsonl");

        // A truncated file after a good one: 422 naming the file, nothing stored.
        let truncated = &good[..good.len() - 40];
        let doc = json!({"run": {"commit": {"sha": "c".repeat(40)}},
            "files": [{"name": "ok.json", "content": good}, {"name": "cut.json", "content": truncated}]});
        let r = server.http.post(server.url("/api/v1/projects/demo/runs")).bearer_auth(&token).json(&doc).send().await.unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(r.headers()["content-type"], "application/problem+json");
        let problem: Value = r.json().await.unwrap();
        assert_eq!(problem["status"], 422);
        assert_eq!(problem["pointer"], "/files/1/content");
        assert!(problem["detail"].as_str().unwrap().starts_with("not valid JSON: line 4, column "), "{problem}");

        // A wrong field inside a record: the record, its line and the field are named.
        let bad = good.replacen("\"completed\": 600", "\"completed\": \"six hundred\"", 1);
        let doc = json!({"run": {"commit": {"sha": "c".repeat(40)}}, "files": [{"name": "bad.json", "content": bad}]});
        let (status, problem) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 422);
        assert_eq!(problem["errors"][0]["pointer"], "/files/0/content");
        assert_eq!(problem["errors"][0]["field"], "/completed");
        assert_eq!(problem["errors"][0]["record"], 1);
        assert_eq!(problem["errors"][0]["line"], 2);

        // A malformed body: 400 with a pointer into the document.
        let doc = json!({"run": {"commit": {"sha": 12}}, "files": []});
        let (status, problem) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 400);
        assert_eq!(problem["pointer"], "/run/commit/sha");

        // Not a commit SHA.
        let doc = json!({"run": {"commit": {"sha": "not-a-sha"}}, "files": [{"name": "ok.json", "content": good}]});
        let (status, problem) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 422);
        assert_eq!(problem["pointer"], "/run/commit/sha");

        // A file no adapter reads: every format tried is listed.
        let doc = json!({"run": {"commit": {"sha": "c".repeat(40)}}, "files": [{"name": "x.json", "content": "{\"hello\": 1}"}]});
        let (status, problem) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 422);
        // Every format tried, in order: vLLM's first, benchtrail's own last.
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.starts_with("could not detect the format; tried vllm-bench-serve (no `duration`, `completed`, `request_throughput`, `model_id`); "), "{detail}");
        assert!(detail.ends_with("; benchtrail (no `metrics` list)"), "{detail}");

        // Too large: 413 as a problem.
        let huge = json!({"run": {"commit": {"sha": "c".repeat(40)}}, "files": [{"name": "big", "content": "x".repeat(65 * 1024 * 1024)}]});
        let (status, problem) = server.upload("demo", &token, &huge).await;
        assert_eq!(status, 413);
        assert_eq!(problem["title"], "Payload too large");

        let (_, runs) = server.get("/api/v1/projects/demo/runs").await;
        assert_eq!(runs["items"], json!([]));
        let (_, series) = server.get("/api/v1/projects/demo/series").await;
        assert_eq!(series["items"], json!([]));
    })
    .await;
}

/// JSON Schema counts a number with a zero fraction (`2.0`, `5.12e2`) as an `integer`, so the
/// upload's integer fields take one and store the integer (issue 13); a fraction is still the
/// 400 at the field that any wrong type gets.
#[tokio::test]
async fn whole_floats_in_integer_fields_are_stored_as_integers() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let file = "examples/history/baseline_completions_c1_isl512_osl128.json";
        let mut doc = upload_doc(&"e".repeat(40), "2026-11-01T00:00:00Z", &[file]);
        doc["run"]["repeat_index"] = json!(2.0);
        doc["run"]["repeats_expected"] = json!(3.0);
        doc["run"]["pull_request"] = json!({"number": 7.0});
        doc["configuration"] = json!({"parallelism": {"tensor_parallel_size": 2.0}});
        doc["cell"] = json!({"input_len": 5.12e2, "output_len": 128.0});
        let (status, receipt) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 201, "{db}: {receipt}");
        let id = receipt["run_id"].as_str().unwrap();

        let (status, run) = server.get(&format!("/api/v1/runs/{id}")).await;
        assert_eq!(status, 200, "{db}: {run}");
        assert_eq!(
            (
                &run["repeat_index"],
                &run["repeats_expected"],
                &run["pr_number"]
            ),
            (&json!(2), &json!(3), &json!(7)),
            "{db}: {run}"
        );
        let result = &run["results"][0];
        assert_eq!(
            result["cell_key"],
            "max_concurrency=1;request_rate=inf;input_len=512;output_len=128;num_prompts=20",
            "{db}"
        );
        assert_eq!(
            (&result["cell"]["input_len"], &result["cell"]["output_len"]),
            (&json!(512), &json!(128)),
            "{db}"
        );
        let fingerprint = result["config_fingerprint"].as_str().unwrap();
        let (status, config) = server.get(&format!("/api/v1/configs/{fingerprint}")).await;
        assert_eq!(status, 200, "{db}: {config}");
        assert_eq!(
            config["configuration"]["parallelism"],
            json!({"tensor_parallel_size": 2}),
            "{db}"
        );

        // The same upload with integers is the same run: the derived id hashes the repeat index
        // and the pull-request number, read as the same integers.
        let mut ints = doc.clone();
        ints["run"]["repeat_index"] = json!(2);
        ints["run"]["repeats_expected"] = json!(3);
        ints["run"]["pull_request"] = json!({"number": 7});
        ints["configuration"] = json!({"parallelism": {"tensor_parallel_size": 2}});
        ints["cell"] = json!({"input_len": 512, "output_len": 128});
        let (status, again) = server.upload("demo", &token, &ints).await;
        assert_eq!(
            (status, &again["run_id"]),
            (200, &json!(id)),
            "{db}: {again}"
        );

        // A fraction is no integer: 400 problem+json at the field, nothing stored; the detail
        // is serde_json's, with the position of the value, as for any wrong type.
        let mut half = doc.clone();
        half["run"]["repeat_index"] = json!(2.5);
        let body = serde_json::to_string(&half).unwrap();
        let field = r#""repeat_index":2.5"#;
        let column = body.find(field).unwrap() + field.len();
        let r = server
            .http
            .post(server.url("/api/v1/projects/demo/runs"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{db}");
        assert_eq!(
            r.headers()["content-type"],
            "application/problem+json",
            "{db}"
        );
        let problem: Value = r.json().await.unwrap();
        assert_eq!(problem["pointer"], "/run/repeat_index", "{db}: {problem}");
        assert_eq!(
            problem["detail"],
            format!("invalid type: floating point `2.5`, expected u32 at line 1 column {column}"),
            "{db}: {problem}"
        );
        let (_, runs) = server.get("/api/v1/projects/demo/runs").await;
        assert_eq!(runs["items"].as_array().unwrap().len(), 1, "{db}: {runs}");
    })
    .await;
}

/// The detailed (`--save-detailed`) vLLM sample: per-request arrays, the kind of file CI
/// uploads gzip-compressed.
const DETAILED_VLLM: &str = "examples/history/baseline_completions_c4_isl512_osl128.json";

/// `bytes` gzip-compressed (flate2, default level, as the CLI does).
fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// POSTs `body` as an upload of `slug` with `Content-Encoding: encoding`; returns the status,
/// the `Content-Type` and the JSON body.
async fn post_encoded(
    server: &TestServer,
    slug: &str,
    token: &str,
    encoding: &str,
    body: Vec<u8>,
) -> (u16, String, Value) {
    let r = server
        .http
        .post(server.url(&format!("/api/v1/projects/{slug}/runs")))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("content-encoding", encoding)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let content_type = r.headers()["content-type"].to_str().unwrap().to_string();
    (status, content_type, r.json().await.unwrap())
}

#[tokio::test]
async fn gzip_upload_stores_the_same_values_as_the_plain_one() {
    for_each_store(|_, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        // The same file as two commits' runs: plain, then gzip-compressed.
        let doc = upload_doc(&"d".repeat(40), "2026-11-01T00:00:00Z", &[DETAILED_VLLM]);
        let gz_doc = upload_doc(&"e".repeat(40), "2026-11-02T00:00:00Z", &[DETAILED_VLLM]);
        let plain = serde_json::to_vec(&gz_doc).unwrap();
        let compressed = gzip(&plain);
        eprintln!(
            "upload of {DETAILED_VLLM}: {} bytes plain, {} bytes gzipped",
            plain.len(),
            compressed.len()
        );
        assert!(compressed.len() * 2 < plain.len());

        let (status, receipt) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 201, "{receipt}");
        let (status, content_type, gz_receipt) =
            post_encoded(&server, "demo", &token, "gzip", compressed).await;
        assert_eq!(
            (status, content_type.as_str()),
            (201, "application/json"),
            "{gz_receipt}"
        );
        assert_eq!(gz_receipt["results"], 1);
        assert_eq!(gz_receipt["created"], true);

        let (_, plain_run) = server
            .get(&format!(
                "/api/v1/runs/{}",
                receipt["run_id"].as_str().unwrap()
            ))
            .await;
        let (_, gz_run) = server
            .get(&format!(
                "/api/v1/runs/{}",
                gz_receipt["run_id"].as_str().unwrap()
            ))
            .await;
        // Every stored value, unit, sample count, interval, warning and series is the same.
        assert_eq!(gz_run["commit_sha"], "e".repeat(40));
        assert_eq!(gz_run["results"], plain_run["results"]);
        assert_eq!(gz_run["files"], plain_run["files"]);
        let p99 = gz_run["results"][0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "ttft" && m["stat"] == "p99")
            .unwrap()
            .clone();
        assert_eq!(p99["n"], 60);
        // The stored file is the uploaded file byte for byte, not its compressed form.
        let file = server
            .http
            .get(server.url(&format!(
                "/api/v1/runs/{}/files/0",
                gz_receipt["run_id"].as_str().unwrap()
            )))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(file, repo_file(DETAILED_VLLM));
    })
    .await;
}

#[tokio::test]
async fn gzip_bomb_is_a_413_problem_counted_after_decompression() {
    for_each_store(|_, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        // 256 MiB of JSON whitespace (four times the limit) in a few hundred KiB.
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        {
            use std::io::Write;
            encoder.write_all(b"{\"run\": ").unwrap();
            let spaces = vec![b' '; 1024 * 1024];
            for _ in 0..256 {
                encoder.write_all(&spaces).unwrap();
            }
        }
        let bomb = encoder.finish().unwrap();
        assert!(bomb.len() < 1024 * 1024, "{}", bomb.len());
        let (status, content_type, problem) =
            post_encoded(&server, "demo", &token, "gzip", bomb).await;
        assert_eq!(status, 413, "{problem}");
        assert_eq!(content_type, "application/problem+json");
        assert_eq!(problem["title"], "Payload too large");
        assert_eq!(
            problem["detail"],
            "the request body is larger than 67108864 bytes once decompressed"
        );
        let (_, runs) = server.get("/api/v1/projects/demo/runs").await;
        assert_eq!(runs["items"], json!([]));
    })
    .await;
}

#[tokio::test]
async fn invalid_or_unsupported_encodings_get_problems_naming_them() {
    for_each_store(|_, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let doc = serde_json::to_vec(&upload_doc(&"e".repeat(40), "2026-11-01T00:00:00Z", &[DETAILED_VLLM])).unwrap();

        // Plain JSON sent as if it were gzip.
        let (status, content_type, problem) =
            post_encoded(&server, "demo", &token, "gzip", doc.clone()).await;
        assert_eq!((status, content_type.as_str()), (400, "application/problem+json"), "{problem}");
        assert_eq!(problem["title"], "Malformed request body");
        assert_eq!(
            problem["detail"],
            "the body is sent with `Content-Encoding: gzip` but is not valid gzip: Invalid gzip header"
        );

        // A gzip stream cut short.
        let compressed = gzip(&doc);
        let cut = compressed[..compressed.len() / 2].to_vec();
        let (status, content_type, problem) =
            post_encoded(&server, "demo", &token, "gzip", cut).await;
        assert_eq!((status, content_type.as_str()), (400, "application/problem+json"), "{problem}");
        assert_eq!(
            problem["detail"],
            "the body is sent with `Content-Encoding: gzip` but is not valid gzip: unexpected end of file"
        );

        // An encoding the server does not inflate: 415 saying which ones it does.
        let (status, content_type, problem) =
            post_encoded(&server, "demo", &token, "br", doc.clone()).await;
        assert_eq!((status, content_type.as_str()), (415, "application/problem+json"), "{problem}");
        assert_eq!(problem["title"], "Unsupported Media Type");
        assert_eq!(
            problem["detail"],
            "the request body's Content-Encoding `br` is not supported; send it uncompressed or with `Content-Encoding: gzip`"
        );

        let (_, runs) = server.get("/api/v1/projects/demo/runs").await;
        assert_eq!(runs["items"], json!([]));
    })
    .await;
}

#[tokio::test]
async fn tokens_are_scoped_to_their_project() {
    for_each_store(|_, store| async move {
        let server = TestServer::start(store).await;
        let a = server.project_with_token("team-a", json!({})).await;
        let _b = server
            .project_with_token("team-b", json!({"public": false}))
            .await;
        let doc = upload_doc(
            &"d".repeat(40),
            "2026-11-01T00:00:00Z",
            &["testdata/vllm/llm-benchmaxxing-vllm-bench-serve-2026-01-glm47-fp8-h100-tp8.json"],
        );

        // Another project's token on a private project: the 404 of a missing project, so the
        // answer says nothing of whether `team-b` exists.
        let (status, problem) = server.upload("team-b", &a, &doc).await;
        assert_eq!(status, 404, "{problem}");
        assert_eq!(problem["detail"], "no project `team-b`");
        // On a public project the token's project is what is wrong.
        server.project_with_token("team-c", json!({})).await;
        let (status, problem) = server.upload("team-c", &a, &doc).await;
        assert_eq!(status, 403, "{problem}");
        assert_eq!(
            problem["detail"],
            "this token belongs to another project than `team-c`"
        );
        let (status, _) = server.upload("team-b", "bt_not_a_token", &doc).await;
        assert_eq!(status, 401);
        let r = server
            .http
            .post(server.url("/api/v1/projects/team-a/runs"))
            .json(&doc)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401);
        assert_eq!(r.headers()["www-authenticate"], "Bearer");
        let read_only = server.token("team-a", "read").await;
        let (status, _) = server.upload("team-a", &read_only, &doc).await;
        assert_eq!(status, 403);
        // Only the admin creates projects.
        let r = server
            .http
            .post(server.url("/api/v1/projects"))
            .bearer_auth(&a)
            .json(&json!({"slug": "x"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403);

        // A private project is invisible without its token.
        let (status, _) = server.get("/api/v1/projects/team-b").await;
        assert_eq!(status, 404);
        let (_, list) = server.get("/api/v1/projects").await;
        let slugs: Vec<_> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["slug"].clone())
            .collect();
        assert_eq!(slugs, vec![json!("team-a"), json!("team-c")]);
        let reader = server.token("team-b", "read").await;
        let r = server
            .http
            .get(server.url("/api/v1/projects/team-b"))
            .bearer_auth(&reader)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let r = server
            .http
            .get(server.url("/api/v1/projects"))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(
            r.json::<Value>().await.unwrap()["items"]
                .as_array()
                .unwrap()
                .len(),
            3
        );

        let (status, _) = server.upload("team-a", &a, &doc).await;
        assert_eq!(status, 201);

        // A configuration used only by a private project is private too.
        let b = server.token("team-b", "upload").await;
        let mut private_doc = doc.clone();
        private_doc["configuration"] =
            json!({"engine": {"launch_command": "vllm serve /secret/path"}});
        let (status, receipt) = server.upload("team-b", &b, &private_doc).await;
        assert_eq!(status, 201);
        let r = server.http.get(server.url(&format!(
            "/api/v1/runs/{}",
            receipt["run_id"].as_str().unwrap()
        )));
        let run: Value = r
            .bearer_auth(&reader)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let fp = run["results"][0]["config_fingerprint"]
            .as_str()
            .unwrap()
            .to_string();
        let (status, _) = server.get(&format!("/api/v1/configs/{fp}")).await;
        assert_eq!(status, 404);
        let r = server
            .http
            .get(server.url(&format!("/configs/{fp}")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
        let r = server
            .http
            .get(server.url(&format!("/api/v1/configs/{fp}")))
            .bearer_auth(&reader)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    })
    .await;
}

#[tokio::test]
async fn series_points_follow_commit_order_with_repeats() {
    for_each_store(|_, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        // Uploaded out of order; commit time decides the order. Commit 3 has two repeats.
        let uploads = [
            (
                "3",
                "2026-11-03T00:00:00Z",
                "examples/history/goodput_baseline_s13_c4.json",
                0,
            ),
            (
                "1",
                "2026-11-01T00:00:00Z",
                "examples/history/goodput_baseline_s11_c4.json",
                0,
            ),
            (
                "2",
                "2026-11-02T00:00:00Z",
                "examples/history/goodput_baseline_s12_c4.json",
                0,
            ),
            (
                "3",
                "2026-11-03T00:00:00Z",
                "examples/history/baseline_completions_c4_isl512_osl128.json",
                1,
            ),
            (
                "4",
                "2026-11-04T00:00:00Z",
                "examples/history/goodput_candidate_s21_c4.json",
                0,
            ),
        ];
        for (sha, time, path, repeat) in uploads {
            let mut doc = upload_doc(&sha.repeat(40), time, &[path]);
            doc["run"]["repeat_index"] = json!(repeat);
            let (status, _) = server.upload("demo", &token, &doc).await;
            assert_eq!(status, 201);
        }
        let (status, list) = server
            .get("/api/v1/projects/demo/series?metric=ttft&stat=median&cell=max_concurrency%3D4")
            .await;
        assert_eq!(status, 200);
        let items = list["items"].as_array().unwrap();
        assert_eq!(
            items.len(),
            1,
            "one series for ttft p50 at concurrency 4: {list}"
        );
        assert_eq!(items[0]["stat"], "p50");
        assert_eq!(items[0]["unit"], "ms");
        assert_eq!(items[0]["direction"], "lower_is_better");
        let id = items[0]["series_id"].as_str().unwrap();
        let (status, series) = server
            .get(&format!("/api/v1/projects/demo/series/{id}?branch=main"))
            .await;
        assert_eq!(status, 200);
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
        let median = |path: &str| {
            serde_json::from_str::<Value>(&repo_file(path)).unwrap()["median_ttft_ms"]
                .as_f64()
                .unwrap()
        };
        assert_eq!(
            points,
            vec![
                (
                    "1".to_string(),
                    median("examples/history/goodput_baseline_s11_c4.json")
                ),
                (
                    "2".to_string(),
                    median("examples/history/goodput_baseline_s12_c4.json")
                ),
                (
                    "3".to_string(),
                    median("examples/history/goodput_baseline_s13_c4.json")
                ),
                (
                    "3".to_string(),
                    median("examples/history/baseline_completions_c4_isl512_osl128.json")
                ),
                (
                    "4".to_string(),
                    median("examples/history/goodput_candidate_s21_c4.json")
                ),
            ]
        );
        assert_eq!(series["points"][0]["n"], 60);
        let (_, other_branch) = server
            .get(&format!("/api/v1/projects/demo/series/{id}?branch=feature"))
            .await;
        assert_eq!(other_branch["points"], json!([]));
        let (status, _) = server
            .get("/api/v1/projects/demo/series/0000000000000000")
            .await;
        assert_eq!(status, 404);
        for bogus in [
            "runs?cursor=bogus",
            "runs?cursor=-5",
            "series?cursor=zz",
            "alerts?cursor=x",
        ] {
            let (status, problem) = server.get(&format!("/api/v1/projects/demo/{bogus}")).await;
            assert_eq!(status, 400, "{bogus}");
            assert_eq!(problem["parameter"], "cursor");
        }
        let (status, problem) = server
            .get("/api/v1/projects/demo/series?metric=latency")
            .await;
        assert_eq!(status, 400);
        assert_eq!(problem["parameter"], "metric");
    })
    .await;
}

#[tokio::test]
async fn declared_metadata_key_fields_split_series() {
    for_each_store(|_, store| async move {
        let server = TestServer::start(store).await;
        let path =
            "testdata/vllm/nerdalert-benchmark_serving-v0.8-append-result-llama31-8b-2025-04.jsonl";
        // `framework` names the engine (`engine.name`, a key field): framework=vllm and
        // framework=sgl are different series per rate even without the key field declared.
        let t1 = server.project_with_token("plain", json!({})).await;
        let t2 = server
            .project_with_token("split", json!({"key_fields": ["framework"]}))
            .await;
        for (slug, token) in [("plain", &t1), ("split", &t2)] {
            let (status, _) = server
                .upload(
                    slug,
                    token,
                    &upload_doc(&"e".repeat(40), "2026-11-01T00:00:00Z", &[path]),
                )
                .await;
            assert_eq!(status, 201);
        }
        let count = |slug: &'static str| {
            let server = &server;
            async move {
                let (_, list) = server
                    .get(&format!(
                        "/api/v1/projects/{slug}/series?metric=ttft&stat=p99&limit=500"
                    ))
                    .await;
                list["items"].as_array().unwrap().len()
            }
        };
        assert_eq!(count("plain").await, 12);
        assert_eq!(count("split").await, 12);
    })
    .await;
}

#[tokio::test]
async fn healthz_and_project_creation_errors() {
    for_each_store(|name, store| async move {
        let server = TestServer::start(store).await;
        let (status, health) = server.get("/healthz").await;
        assert_eq!(status, 200);
        assert_eq!(health["status"], "ok");
        assert_eq!(health["database"], name);
        // Unknown addresses: a problem document under /api/, an HTML page elsewhere.
        let r = server
            .http
            .get(server.url("/api/v1/nope"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
        assert_eq!(r.headers()["content-type"], "application/problem+json");
        // Rejections of a query string or method are problem documents too.
        let r = server
            .http
            .get(server.url("/api/v1/projects/x/runs?limit=abc"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400);
        assert_eq!(r.headers()["content-type"], "application/problem+json");
        let problem: Value = r.json().await.unwrap();
        assert!(
            problem["detail"].as_str().unwrap().contains("limit"),
            "{problem}"
        );
        let r = server
            .http
            .put(server.url("/api/v1/projects"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 405);
        assert_eq!(r.headers()["content-type"], "application/problem+json");
        assert!(r.headers().contains_key("allow"));
        let problem: Value = r.json().await.unwrap();
        assert_eq!(problem["title"], "Method Not Allowed");
        let r = server.http.get(server.url("/nope")).send().await.unwrap();
        assert_eq!(r.status(), 404);
        assert!(r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"));
        let create = |body: Value| {
            let server = &server;
            async move {
                let r = server
                    .http
                    .post(server.url("/api/v1/projects"))
                    .bearer_auth(ADMIN_TOKEN)
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
                (r.status().as_u16(), r.json::<Value>().await.unwrap())
            }
        };
        let (status, project) = create(
            json!({"slug": "demo", "repository_url": "https://github.com/vllm-project/vllm/"}),
        )
        .await;
        assert_eq!(status, 201);
        assert_eq!(
            project["repository_url"],
            "https://github.com/vllm-project/vllm"
        );
        assert_eq!(project["default_branch"], "main");
        assert_eq!(project["public"], true);
        let (status, _) = create(json!({"slug": "demo"})).await;
        assert_eq!(status, 409);
        let (status, problem) = create(json!({"slug": "Bad Slug"})).await;
        assert_eq!(status, 422);
        assert_eq!(problem["pointer"], "/slug");
        let (status, problem) = create(json!({"slug": "x", "colour": "red"})).await;
        assert_eq!(status, 400);
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .starts_with("unknown field `colour`"),
            "{problem}"
        );
    })
    .await;
}

#[tokio::test]
async fn openapi_document_and_json_schemas() {
    for_each_store(|name, store| async move {
        let server = TestServer::start(store).await;
        let (status, doc) = server.get("/api/v1/openapi.json").await;
        assert_eq!(status, 200);
        let paths: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
        assert_eq!(
            paths,
            vec![
                "/api/v1/alerts/{id}",
                "/api/v1/compare/report",
                "/api/v1/configs/{fingerprint}",
                "/api/v1/metrics",
                "/api/v1/openapi.json",
                "/api/v1/projects",
                "/api/v1/projects/{project}",
                "/api/v1/projects/{project}/alerts",
                "/api/v1/projects/{project}/baselines",
                "/api/v1/projects/{project}/baselines/{series_id}",
                "/api/v1/projects/{project}/runs",
                "/api/v1/projects/{project}/series",
                "/api/v1/projects/{project}/series/{series_id}",
                "/api/v1/projects/{project}/series/{series_id}/alerts",
                "/api/v1/projects/{project}/settings",
                "/api/v1/projects/{project}/tokens",
                "/api/v1/projects/{project}/tokens/{id}",
                "/api/v1/runs/{id}",
                "/api/v1/runs/{id}/alerts",
                "/api/v1/runs/{id}/analysis",
                "/api/v1/runs/{id}/exclusion",
                "/api/v1/runs/{id}/files/{n}",
                "/api/v1/runs/{id}/report",
                "/api/v1/runs/{id}/verdict",
                "/api/v1/schemas/analysis.json",
                "/api/v1/schemas/result.json",
                "/api/v1/schemas/upload.json",
                "/healthz",
                "/readyz",
            ]
        );
        if name == "sqlite" {
            // The whole document is pinned: a change to the API shows up in review.
            insta::assert_json_snapshot!("openapi", doc);
        }

        let (status, schema) = server.get("/api/v1/schemas/result.json").await;
        assert_eq!(status, 200);
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(schema["required"], json!(["metrics"]));
        assert_eq!(
            schema["properties"]["metrics"]["items"]["$ref"],
            "#/$defs/MetricValue"
        );
        assert_eq!(
            schema["$defs"]["MetricValue"]["required"],
            json!(["name", "stat", "unit", "value"])
        );
        let (status, schema) = server.get("/api/v1/schemas/upload.json").await;
        assert_eq!(status, 200);
        assert_eq!(schema["properties"]["run"]["$ref"], "#/$defs/RunMeta");
        assert!(schema["$defs"]["Configuration"]["properties"]["parallelism"].is_object());
        // The stored analysis (the typed model of benchtrail_core::report) is documented too.
        let (status, schema) = server.get("/api/v1/schemas/analysis.json").await;
        assert_eq!(status, 200);
        assert_eq!(
            schema["properties"]["groups"]["items"]["$ref"],
            "#/$defs/CellAnalysis"
        );
        assert_eq!(
            schema["$defs"]["CellAnalysis"]["properties"]["report"]["$ref"],
            "#/$defs/GroupReport"
        );
        assert_eq!(
            schema["$defs"]["Test"]["enum"],
            json!([
                "welch_t",
                "prediction_interval",
                "pinned_t",
                "zero_spread",
                "effect_only",
                "family_index",
                "e_divisive",
                "tradeoff",
                "missing",
                "mann_whitney_u"
            ])
        );
    })
    .await;
}

// Who may call what, and that the document lists it, is tests/authorization_matrix.rs: every
// operation of the served document × caller × public/private/missing project.

#[tokio::test]
async fn the_tools_goodput_under_other_thresholds_is_another_series() {
    for_each_store(|_, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        for (sha, path, slo) in [
            (
                "a",
                "examples/history/goodput_baseline_s11_c4.json",
                "ttft:60 tpot:12 e2el:1800",
            ),
            (
                "b",
                "examples/history/goodput_baseline_s12_c4.json",
                "ttft:60 tpot:12 e2el:1800",
            ),
            (
                "c",
                "examples/history/goodput_tight_baseline_s15_c4.json",
                "ttft:37 tpot:10.6 e2el:1500",
            ),
        ] {
            let mut doc = upload_doc(&sha.repeat(40), "2026-11-01T00:00:00Z", &[path]);
            doc["configuration"] =
                json!({"benchmark": {"command": format!("vllm bench serve --goodput {slo}")}});
            let (status, receipt) = server.upload("demo", &token, &doc).await;
            assert_eq!(status, 201, "{receipt}");
        }
        let (_, list) = server
            .get("/api/v1/projects/demo/series?metric=request_goodput&limit=500")
            .await;
        let tool: Vec<&Value> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["slo_profile"] == "tool")
            .collect();
        assert_eq!(tool.len(), 2, "{list}");
        let mut counts = Vec::new();
        for s in tool {
            let (_, points) = server
                .get(&format!(
                    "/api/v1/projects/demo/series/{}",
                    s["series_id"].as_str().unwrap()
                ))
                .await;
            counts.push(points["points"].as_array().unwrap().len());
        }
        counts.sort();
        assert_eq!(counts, vec![1, 2]);
    })
    .await;
}

/// A query parameter with an empty value (what an HTML form sends for a field left blank) is
/// no parameter: its default applies, not a 400 for an unknown `kind` or cursor.
#[tokio::test]
async fn empty_query_values_count_as_absent() {
    common::db::for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        server
            .project_with_token("q", json!({"public": true}))
            .await;
        for path in [
            "/api/v1/projects/q/alerts?kind=&metric=&branch=&commit=&cursor=&limit=",
            "/api/v1/projects/q/runs?branch=&commit=&cursor=",
            "/api/v1/projects/q/series?accelerator=&metric=&cursor=&limit=",
        ] {
            let (status, body) = server.get(path).await;
            assert_eq!(status, 200, "{db} {path}: {body}");
            assert_eq!(body["items"], json!([]), "{db} {path}");
        }
        // A value that is there is still checked.
        let (status, body) = server.get("/api/v1/projects/q/alerts?kind=nope").await;
        assert_eq!(
            (status, body["parameter"].as_str()),
            (400, Some("kind")),
            "{db}: {body}"
        );
    })
    .await;
}
