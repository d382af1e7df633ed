//! Per-request samples, SLO profiles (project settings), goodput, SLO attainment and bootstrap
//! intervals, over real HTTP on every database, with the real vLLM example files.

use crate::common;

use benchtrail_core::samples::RequestSamples;
use benchtrail_server::storage::SampleColumns;
use common::db::for_each_store;
use common::server::{repo_file, upload_doc, TestServer, ADMIN_TOKEN};
use serde_json::{json, Value};

const GOODPUT: &str = "--goodput ttft:60 tpot:12 e2el:1800";
const TIGHT: &str = "--goodput ttft:37 tpot:10.6 e2el:1500";

/// The goodput files and the `--goodput` flags they were made with.
const GOODPUT_FILES: &[(&str, &str)] = &[
    ("examples/history/goodput_baseline_s11_c4.json", GOODPUT),
    ("examples/history/goodput_baseline_s12_c4.json", GOODPUT),
    ("examples/history/goodput_baseline_s13_c4.json", GOODPUT),
    ("examples/history/goodput_candidate_s21_c4.json", GOODPUT),
    ("examples/history/goodput_tight_baseline_s15_c4.json", TIGHT),
];

/// An upload of `path` at commit number `i`, recording the benchmark command with `flags`.
fn doc(i: usize, path: &str, flags: &str) -> Value {
    let mut doc = upload_doc(&format!("{i:040x}"), "2026-11-01T00:00:00Z", &[path]);
    doc["configuration"] = json!({"benchmark": {"command": format!("vllm bench serve --model mock-llm {flags} --save-detailed")}});
    doc
}

/// The value of `name` under `profile` in a stored result, if stored.
fn slo_value(result: &Value, name: &str, profile: &str) -> Option<f64> {
    result["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name && m["slo_profile"] == profile)
        .map(|m| m["value"].as_f64().unwrap())
}

fn profiles(file_slo: &str) -> Value {
    let t = |ttft: f64, tpot: f64, e2el: f64| json!({"ttft_ms": ttft, "tpot_ms": tpot, "e2el_ms": e2el});
    let mut file = if file_slo == TIGHT {
        t(37.0, 10.6, 1500.0)
    } else {
        t(60.0, 12.0, 1800.0)
    };
    file["name"] = json!("file");
    json!({"slo_profiles": [{"name": "interactive", "ttft_ms": 2000, "tpot_ms": 50}, file]})
}

async fn run_result(server: &TestServer, receipt: &Value) -> Value {
    let id = receipt["run_id"].as_str().unwrap();
    let (status, run) = server.get(&format!("/api/v1/runs/{id}")).await;
    assert_eq!(status, 200);
    run["results"][0].clone()
}

#[tokio::test]
async fn goodput_from_samples_equals_the_tools_goodput_exactly() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        for (i, (path, flags)) in GOODPUT_FILES.iter().enumerate() {
            let (status, _) = server
                .send(
                    "PUT",
                    "/api/v1/projects/demo/settings",
                    ADMIN_TOKEN,
                    &profiles(flags),
                )
                .await;
            assert_eq!(status, 200, "{db}");
            let (status, receipt) = server
                .upload("demo", &token, &doc(i + 1, path, flags))
                .await;
            assert_eq!(status, 201, "{db} {path}: {receipt}");
            let result = run_result(&server, &receipt).await;
            let raw: Value = serde_json::from_str(&repo_file(path)).unwrap();
            let tools = raw["request_goodput"].as_f64().unwrap();
            assert_eq!(
                slo_value(&result, "request_goodput", "file"),
                Some(tools),
                "{db} {path}"
            );
            assert_eq!(
                slo_value(&result, "request_goodput", "tool"),
                Some(tools),
                "{db} {path}"
            );
            let good = (tools * raw["duration"].as_f64().unwrap()).round();
            assert_eq!(
                slo_value(&result, "slo_attainment", "file"),
                Some(100.0 * good / 60.0),
                "{db} {path}"
            );
            // The tool's thresholds, read from the recorded command.
            let expected_slo = if *flags == TIGHT {
                json!({"ttft_ms": 37.0, "tpot_ms": 10.6, "e2el_ms": 1500.0})
            } else {
                json!({"ttft_ms": 60.0, "tpot_ms": 12.0, "e2el_ms": 1800.0})
            };
            assert_eq!(result["facts"]["goodput_slo"], expected_slo, "{db} {path}");
        }
    })
    .await;
}

#[tokio::test]
async fn intervals_profiles_and_not_computable_goodput_are_reported() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let path = "examples/history/baseline_completions_c4_isl512_osl128.json";
        let (_, receipt) = server.upload("demo", &token, &doc(1, path, "")).await;
        let result = run_result(&server, &receipt).await;
        let raw: Value = serde_json::from_str(&repo_file(path)).unwrap();
        // No --goodput: no tool goodput, but goodput under the default profile, from samples.
        assert_eq!(slo_value(&result, "request_goodput", "tool"), None, "{db}");
        assert_eq!(
            slo_value(&result, "request_goodput", "interactive"),
            Some(60.0 / raw["duration"].as_f64().unwrap()),
            "{db}"
        );
        assert_eq!(
            slo_value(&result, "slo_attainment", "interactive"),
            Some(100.0),
            "{db}"
        );
        // Intervals on p50 and p99 of ttft, tpot, itl, e2el, around the tool's own value.
        let metrics = result["metrics"].as_array().unwrap();
        let with_ci: Vec<String> = metrics
            .iter()
            .filter(|m| !m["ci"].is_null())
            .map(|m| {
                format!(
                    "{} {}",
                    m["name"].as_str().unwrap(),
                    m["stat"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(
            with_ci,
            [
                "ttft p50", "ttft p99", "tpot p50", "tpot p99", "itl p50", "itl p99", "e2el p50",
                "e2el p99"
            ],
            "{db}"
        );
        for m in metrics.iter().filter(|m| !m["ci"].is_null()) {
            let ci = &m["ci"];
            assert_eq!(ci["level"], 0.95);
            assert_eq!(
                ci["method"],
                "bootstrap-percentile, 1000 resamples of requests, seed 0x62656e6368"
            );
            let (lo, hi, v) = (
                ci["low"].as_f64().unwrap(),
                ci["high"].as_f64().unwrap(),
                m["value"].as_f64().unwrap(),
            );
            assert!(lo <= hi && lo <= v * 1.5 && v <= hi * 1.5, "{db} {m}");
        }
        // The same samples give the same intervals: stored values equal core's computation.
        let samples = server
            .store
            .result_samples(receipt["run_id"].as_str().unwrap().parse().unwrap(), 0)
            .await
            .unwrap()
            .unwrap();
        let expected = benchtrail_core::bootstrap::intervals(&samples);
        let ttft_p50 = metrics
            .iter()
            .find(|m| m["name"] == "ttft" && m["stat"] == "p50")
            .unwrap();
        assert_eq!(
            ttft_p50["ci"],
            serde_json::to_value(&expected[0].2).unwrap(),
            "{db}"
        );
        assert_eq!(samples.len(), 60);
        assert_eq!(samples.itl_ms.as_ref().map(Vec::len), Some(60), "{db}");
        // All of a run's samples at once: the same, by result index; without the chunk gaps,
        // the same but for them.
        let run_id = receipt["run_id"].as_str().unwrap().parse().unwrap();
        let all = server
            .store
            .run_samples(run_id, SampleColumns::All)
            .await
            .unwrap();
        assert_eq!(all.keys().copied().collect::<Vec<_>>(), [0], "{db}");
        assert_eq!(all[&0], samples, "{db}");
        let latencies = server
            .store
            .run_samples(run_id, SampleColumns::WithoutItl)
            .await
            .unwrap();
        assert_eq!(
            latencies[&0],
            RequestSamples {
                itl_ms: None,
                ..samples.clone()
            },
            "{db}"
        );

        // Without samples and without the tool's goodput: nothing stored, and said so.
        let path =
            "testdata/vllm/llm-benchmaxxing-vllm-bench-serve-2026-01-glm47-fp8-h100-tp8.json";
        let (_, receipt) = server.upload("demo", &token, &doc(2, path, "")).await;
        let result = run_result(&server, &receipt).await;
        assert!(!metrics_named(&result, "request_goodput"), "{db}");
        assert!(!metrics_named(&result, "slo_attainment"), "{db}");
        let codes: Vec<&str> = result["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["code"].as_str().unwrap())
            .collect();
        assert!(codes.contains(&"goodput_not_computable"), "{db} {codes:?}");

        // The tool's goodput without a recorded --goodput: stored, thresholds unknown.
        let path = "examples/history/goodput_baseline_s11_c4.json";
        let (_, receipt) = server.upload("demo", &token, &doc(3, path, "")).await;
        let result = run_result(&server, &receipt).await;
        assert_eq!(
            slo_value(&result, "request_goodput", "tool"),
            Some(2.9180366644138527)
        );
        assert!(result["facts"].get("goodput_slo").is_none());
        let codes: Vec<&str> = result["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["code"].as_str().unwrap())
            .collect();
        assert!(codes.contains(&"goodput_slo_unknown"), "{db} {codes:?}");

        // Goodput series are told apart by profile.
        let (_, series) = server
            .get("/api/v1/projects/demo/series?metric=request_goodput&limit=500")
            .await;
        let mut labels: Vec<String> = series["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["slo_profile"].as_str().unwrap().to_string())
            .collect();
        labels.sort();
        assert_eq!(labels, ["interactive", "tool"], "{db}");
    })
    .await;
}

fn metrics_named(result: &Value, name: &str) -> bool {
    result["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["name"] == name)
}

#[tokio::test]
async fn settings_are_versioned_validated_and_recompute_stored_results() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let upload = server.project_with_token("demo", json!({})).await;
        let write = server.token("demo", "write").await;

        let (status, current) = server.get("/api/v1/projects/demo/settings").await;
        assert_eq!(status, 200);
        assert_eq!(current["version"], 1, "{db}");
        assert_eq!(
            current["slo_profiles"],
            json!([{"name": "interactive", "ttft_ms": 2000.0, "tpot_ms": 50.0}]),
            "{db}"
        );

        let path = "examples/history/goodput_tight_baseline_s15_c4.json";
        let (_, receipt) = server.upload("demo", &upload, &doc(1, path, TIGHT)).await;
        let before = run_result(&server, &receipt).await;
        assert!(slo_value(&before, "request_goodput", "interactive").is_some(), "{db}");

        // Who may change settings.
        let tight = json!({"version": 1, "slo_profiles": [{"name": "tight", "ttft_ms": 37, "tpot_ms": 10.6, "e2el_ms": 1500}]});
        assert_eq!(server.send("PUT", "/api/v1/projects/demo/settings", &upload, &tight).await.0, 403, "{db}");
        let r = server.http.put(server.url("/api/v1/projects/demo/settings")).json(&tight).send().await.unwrap();
        assert_eq!(r.status(), 401, "{db}");

        // A change recomputes the stored result: interactive gone, tight there, tool kept.
        let (status, stored) = server.send("PUT", "/api/v1/projects/demo/settings", &write, &tight).await;
        assert_eq!(status, 200, "{db} {stored}");
        assert_eq!(stored["version"], 2, "{db}");
        let after = run_result(&server, &receipt).await;
        let tools = 0.8696988390973475;
        assert_eq!(slo_value(&after, "request_goodput", "interactive"), None, "{db}");
        assert_eq!(slo_value(&after, "slo_attainment", "interactive"), None, "{db}");
        assert_eq!(slo_value(&after, "request_goodput", "tight"), Some(tools), "{db}");
        assert_eq!(slo_value(&after, "request_goodput", "tool"), Some(tools), "{db}");
        let (_, current) = server.get("/api/v1/projects/demo/settings").await;
        assert_eq!(current["version"], 2);
        assert_eq!(current["slo_profiles"][0]["name"], "tight");

        // A stale version is refused; the admin may change settings without one.
        let (status, problem) = server.send("PUT", "/api/v1/projects/demo/settings", &write, &tight).await;
        assert_eq!((status, problem["status"].clone()), (409, json!(409)), "{db}");
        let (status, stored) = server.send("PUT", "/api/v1/projects/demo/settings", ADMIN_TOKEN, &profiles(GOODPUT)).await;
        assert_eq!((status, stored["version"].clone()), (200, json!(3)), "{db}");
        let after = run_result(&server, &receipt).await;
        assert_eq!(slo_value(&after, "request_goodput", "tight"), None, "{db}");
        assert!(slo_value(&after, "request_goodput", "interactive").is_some(), "{db}");

        // Validation names the fault.
        for (body, pointer) in [
            (json!({"slo_profiles": [{"name": "a", "itl_ms": 5}]}), "/slo_profiles/0/itl_ms"),
            (json!({"slo_profiles": [{"name": "a", "ttft_ms": 0}]}), "/slo_profiles/0/ttft_ms"),
            (json!({"slo_profiles": [{"name": "a", "ttft_ms": -5}]}), "/slo_profiles/0/ttft_ms"),
            (json!({"slo_profiles": [{"name": "a", "ttft_ms": 5}, {"name": "a", "tpot_ms": 5}]}), "/slo_profiles/1/name"),
            (json!({"slo_profiles": [{"name": "a"}]}), "/slo_profiles/0"),
            (json!({"slo_profile": []}), "/slo_profile"),
        ] {
            let r = server
                .http
                .put(server.url("/api/v1/projects/demo/settings"))
                .bearer_auth(&write)
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 422, "{db} {body}");
            assert_eq!(r.headers()["content-type"], "application/problem+json");
            let problem: Value = r.json().await.unwrap();
            assert_eq!(problem["pointer"], pointer, "{db} {body}");
        }
        let (_, current) = server.get("/api/v1/projects/demo/settings").await;
        assert_eq!(current["version"], 3, "{db}: refused changes store nothing");
    })
    .await;
}
