//! Cut files over real HTTP, on every database: a guidellm YAML cut at a line boundary (still
//! valid YAML) is refused, naming what is missing; a console block cut short is stored with a
//! `truncated` warning. The trial's exact inputs (`head -c 20000` of the generated guidellm
//! YAML, `head -n 20` of the vLLM console block; testdata/README.md).

use crate::common;

use common::db::for_each_store;
use common::server::{repo_file, TestServer};
use serde_json::json;

#[tokio::test]
async fn a_cut_guidellm_yaml_is_refused_and_a_cut_console_block_warns() {
    for_each_store(|_, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let yaml = repo_file("testdata/guidellm/baseline_concurrent_1-4-16_isl512_osl128.yaml");
        let doc = json!({"run": {"commit": {"sha": "e".repeat(40)}},
            "files": [{"name": "benchmarks.yaml", "content": &yaml[..20000]}]});
        let (status, problem) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 422, "{problem}");
        let error = &problem["errors"][0];
        assert_eq!(error["pointer"], "/files/0/content", "{problem}");
        assert_eq!(
            error["field"], "/benchmarks/0/metrics/request_totals",
            "{problem}"
        );
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.contains("the file looks truncated: `/benchmarks/0/metrics/request_totals`"),
            "{detail}"
        );
        let (_, runs) = server.get("/api/v1/projects/demo/runs").await;
        assert_eq!(runs["items"].as_array().unwrap().len(), 0);

        let console = repo_file("testdata/console/vllm-0.33.0-mock-baseline-c4.txt");
        let head: String = console.split_inclusive('\n').take(20).collect();
        let doc = json!({"run": {"commit": {"sha": "e".repeat(40)}},
            "files": [{"name": "pr-comment.txt", "content": head}]});
        let (status, receipt) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 201, "{receipt}");
        let (_, run) = server
            .get(&format!(
                "/api/v1/runs/{}",
                receipt["run_id"].as_str().unwrap()
            ))
            .await;
        let warnings = run["results"][0]["warnings"].as_array().unwrap();
        let truncated = warnings.iter().find(|w| w["code"] == "truncated").unwrap();
        assert!(
            truncated["message"]
                .as_str()
                .unwrap()
                .contains("it lacks the closing `=====` line"),
            "{truncated}"
        );
    })
    .await;
}
