//! Results of different tools for the same workload cell, through the API over real HTTP on
//! every database: names are mapped to one vocabulary without mixing definitions, and each tool
//! keeps its own series. Also: every sample in `testdata/` uploads with its format detected from
//! its content alone.

use crate::common;

use common::db::for_each_store;
use common::server::{repo_file, TestServer};
use serde_json::{json, Value};
use std::collections::BTreeMap;

const VLLM: &str = "examples/history/baseline_completions_c4_isl512_osl128.json";
const AIPERF_SUMMARY: &str =
    "testdata/aiperf/baseline_completions_c4_isl512_osl128/profile_export_aiperf.json";
const AIPERF_RECORDS: &str =
    "testdata/aiperf/baseline_completions_c4_isl512_osl128/profile_export.jsonl";

/// An upload of `files`, each `(name as sent, repository path)`. vLLM's result file does not
/// record the random dataset's lengths (AIPerf's does), so the upload declares them for the
/// results that lack them, as the runner does: both tools' results then have the same cell.
fn upload(sha: char, files: &[(&str, &str)]) -> Value {
    json!({
        "run": {"commit": {"sha": sha.to_string().repeat(40), "time": "2026-11-01T00:00:00Z"}, "branch": "main"},
        "cell": {"input_len": 512, "output_len": 128},
        "files": files.iter().map(|(name, path)| json!({"name": name, "content": repo_file(path)})).collect::<Vec<_>>(),
    })
}

/// The stored metrics of a result as (name, stat) → value (the tool's own numbers: no SLO profile).
fn metrics(result: &Value) -> BTreeMap<(String, String), f64> {
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

/// One AIPerf metric object (`{avg, p1.., min, max, std}`) as benchtrail's (stat → value).
fn aiperf_stats(object: &Value) -> BTreeMap<String, f64> {
    object
        .as_object()
        .unwrap()
        .iter()
        .filter_map(|(key, v)| {
            let stat = match key.as_str() {
                "avg" => "mean".to_string(),
                "min" | "max" | "std" => key.clone(),
                p if p.starts_with('p') => p.to_string(),
                _ => return None,
            };
            Some((stat, v.as_f64()?))
        })
        .collect()
}

/// The stats of metric `name` in `metrics`.
fn stats_of(metrics: &BTreeMap<(String, String), f64>, name: &str) -> BTreeMap<String, f64> {
    metrics
        .iter()
        .filter(|((n, _), _)| n == name)
        .map(|((_, stat), v)| (stat.clone(), *v))
        .collect()
}

#[tokio::test]
async fn vllm_and_aiperf_of_one_cell_keep_their_definitions_apart() {
    for_each_store(|_, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        // One upload: vLLM's file and AIPerf's summary with its per-request records in one folder.
        let doc = upload(
            'a',
            &[
                ("vllm/result.json", VLLM),
                ("aiperf/profile_export_aiperf.json", AIPERF_SUMMARY),
                ("aiperf/profile_export.jsonl", AIPERF_RECORDS),
            ],
        );
        let (status, receipt) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 201, "{receipt}");
        assert_eq!(receipt["results"], 2, "{receipt}");
        let (status, run) = server
            .get(&format!(
                "/api/v1/runs/{}",
                receipt["run_id"].as_str().unwrap()
            ))
            .await;
        assert_eq!(status, 200);
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 2, "{run}");

        // Which result is which tool: the configuration's benchmark.name.
        let mut by_tool = BTreeMap::new();
        for result in results {
            let fp = result["config_fingerprint"].as_str().unwrap();
            let (status, config) = server.get(&format!("/api/v1/configs/{fp}")).await;
            assert_eq!(status, 200);
            let tool = config["configuration"]["benchmark"]["name"]
                .as_str()
                .unwrap()
                .to_string();
            by_tool.insert(tool, result.clone());
        }
        let tools: Vec<&str> = by_tool.keys().map(String::as_str).collect();
        assert_eq!(tools, ["aiperf", "vllm-bench-serve"]);
        let vllm = metrics(&by_tool["vllm-bench-serve"]);
        let aiperf = metrics(&by_tool["aiperf"]);
        // The same workload cell.
        assert_eq!(
            by_tool["aiperf"]["cell_key"], by_tool["vllm-bench-serve"]["cell_key"],
            "{run}"
        );

        // AIPerf's inter_token_latency is vLLM's TPOT: stored as `tpot`, every statistic exactly
        // as the file has it.
        let summary: Value = serde_json::from_str(&repo_file(AIPERF_SUMMARY)).unwrap();
        let itl_of_aiperf = aiperf_stats(&summary["inter_token_latency"]);
        assert_eq!(itl_of_aiperf["p99"], 11.551602539370078);
        assert_eq!(stats_of(&aiperf, "tpot"), itl_of_aiperf);
        // Its per-chunk gaps keep their own name and numbers, never `itl`.
        assert_eq!(
            stats_of(&aiperf, "inter_chunk_latency"),
            aiperf_stats(&summary["inter_chunk_latency"])
        );
        assert!(stats_of(&aiperf, "itl").is_empty(), "{aiperf:?}");
        assert!(stats_of(&aiperf, "inter_token_latency").is_empty());

        // vLLM's itl stays `itl`, its tpot `tpot`, as its file has them.
        let file: Value = serde_json::from_str(&repo_file(VLLM)).unwrap();
        let stat_of = |key: &str| file[key].as_f64().unwrap();
        assert_eq!(vllm[&("itl".into(), "p99".into())], stat_of("p99_itl_ms"));
        assert_eq!(vllm[&("itl".into(), "mean".into())], stat_of("mean_itl_ms"));
        assert_eq!(vllm[&("tpot".into(), "p99".into())], stat_of("p99_tpot_ms"));
        assert!(stats_of(&vllm, "inter_chunk_latency").is_empty());

        // Same metric, same cell, same statistic: one series per tool, told apart by
        // benchmark.name in the series key.
        let (status, list) = server
            .get("/api/v1/projects/demo/series?metric=tpot&stat=p99&limit=500")
            .await;
        assert_eq!(status, 200);
        let items = list["items"].as_array().unwrap();
        assert_eq!(items.len(), 2, "{list}");
        let names: Vec<&str> = items
            .iter()
            .map(|s| s["series_key"]["benchmark.name"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"aiperf") && names.contains(&"vllm-bench-serve"),
            "{list}"
        );
        assert_ne!(items[0]["series_id"], items[1]["series_id"]);
        assert_eq!(items[0]["cell_key"], items[1]["cell_key"]);
        for item in items {
            let tool = item["series_key"]["benchmark.name"].as_str().unwrap();
            let (status, series) = server
                .get(&format!(
                    "/api/v1/projects/demo/series/{}",
                    item["series_id"].as_str().unwrap()
                ))
                .await;
            assert_eq!(status, 200);
            let values: Vec<f64> = series["points"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["value"].as_f64().unwrap())
                .collect();
            let expected = match tool {
                "aiperf" => itl_of_aiperf["p99"],
                _ => stat_of("p99_tpot_ms"),
            };
            assert_eq!(values, [expected], "{tool}");
        }
        // Across every statistic, no tpot series mixes the two tools.
        let (_, all) = server
            .get("/api/v1/projects/demo/series?metric=tpot&limit=500")
            .await;
        let mut per_stat: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for item in all["items"].as_array().unwrap() {
            per_stat
                .entry(item["stat"].as_str().unwrap().to_string())
                .or_default()
                .push(item["series_key"]["benchmark.name"].to_string());
        }
        for (stat, tools) in &per_stat {
            let mut unique = tools.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), tools.len(), "tpot {stat}: {tools:?}");
        }
        // `itl` exists for vLLM only.
        let (_, itl) = server
            .get("/api/v1/projects/demo/series?metric=itl&limit=500")
            .await;
        for item in itl["items"].as_array().unwrap() {
            assert_eq!(
                item["series_key"]["benchmark.name"], "vllm-bench-serve",
                "{item}"
            );
        }
    })
    .await;
}

/// Files of `testdata/` that are not results on their own: per-request companions (read only
/// with their summary), AIPerf's prompts, phase manifest and warm-up export. Each is rejected
/// with 422 when uploaded alone, as is a file holding one workload twice.
fn is_not_a_result_alone(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap();
    name == "profile_export.jsonl"
        || name == "profile_export.json"
        || name == "server_metrics_export.json"
        || name.ends_with("individual_responses.json")
        || name == "inputs.json"
        || name == "phase_manifest.json"
        || path.contains("/warmup/")
        // lm-evaluation-harness's quality (accuracy) results: read by `upload --quality`, not
        // a benchmark result (tests/quality_results.rs).
        || path.starts_with("testdata/lm-eval/")
        // Runs the same workload twice (records 3 and 4: 4096/1024 at rate inf): two results
        // of one cell in one upload, refused as ambiguous (tests/workload_identity.rs).
        || name == "datacrunch-h200-llama33-70b-offline-rate-infinity-2024-12.jsonl"
}

/// Every file under `testdata/`, as a path from the repository root, except the notes
/// (`*.md`) and the regression-analysis fixtures (`testdata/regression/`), which are not
/// benchmark output.
fn testdata_samples() -> Vec<String> {
    fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                out.push(
                    path.strip_prefix(root)
                        .unwrap()
                        .to_str()
                        .unwrap()
                        .to_string(),
                );
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    walk(&root.join("testdata"), &root, &mut out);
    out.retain(|p| !p.ends_with(".md") && !p.starts_with("testdata/regression/"));
    out.sort();
    out
}

#[tokio::test]
async fn every_testdata_sample_uploads_as_result_json() {
    let samples = testdata_samples();
    assert!(samples.len() >= 20, "{samples:?}");
    for_each_store(move |_, store| {
        let samples = samples.clone();
        async move {
            let server = TestServer::start(store).await;
            let token = server.project_with_token("demo", json!({})).await;
            let mut created = 0;
            for (i, path) in samples.iter().enumerate() {
                let doc = json!({
                    "run": {"commit": {"sha": format!("{:040x}", i + 1), "time": "2026-11-01T00:00:00Z"}, "branch": "main"},
                    "files": [{"name": "result.json", "content": repo_file(path)}],
                });
                let (status, receipt) = server.upload("demo", &token, &doc).await;
                if is_not_a_result_alone(path) {
                    assert_eq!(status, 422, "{path}: {receipt}");
                } else {
                    assert_eq!(status, 201, "{path}: {receipt}");
                    assert!(receipt["results"].as_u64().unwrap() >= 1, "{path}");
                    created += 1;
                }
            }
            let (_, runs) = server.get("/api/v1/projects/demo/runs?limit=500").await;
            assert_eq!(runs["items"].as_array().unwrap().len(), created);
        }
    })
    .await;
}
