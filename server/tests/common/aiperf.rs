//! The generated AIPerf baseline and candidate at concurrency 1, 4 and 16 (`testdata/aiperf/`,
//! summary and per-request `profile_export.jsonl` each) as uploads, and a project seeded with
//! both under the SLO profile `chat` (TTFT ≤ 120 ms, TPOT ≤ 12 ms).

use super::server::{repo_file, TestServer, ADMIN_TOKEN};
use serde_json::{json, Value};

/// The concurrencies of the sweep.
pub const LOADS: [u64; 3] = [1, 4, 16];

/// The folder of one side's run at concurrency `c`.
pub fn run_dir(side: &str, c: u64) -> String {
    format!("testdata/aiperf/{side}_completions_c{c}_isl512_osl128")
}

/// One side's upload: three folders `c1/`, `c4/`, `c16/` with AIPerf's summary and records.
pub fn upload_of(side: &str, sha: char) -> Value {
    let files: Vec<Value> = LOADS
        .iter()
        .flat_map(|c| {
            ["profile_export_aiperf.json", "profile_export.jsonl"].map(|f| {
                json!({"name": format!("c{c}/{f}"), "content": repo_file(&format!("{}/{f}", run_dir(side, *c)))})
            })
        })
        .collect();
    json!({
        "run": {"commit": {"sha": sha.to_string().repeat(40), "time": "2026-12-01T10:00:00Z"}, "branch": "main"},
        "files": files,
    })
}

/// Creates project `slug` (public or not) with the profile `chat` and uploads the baseline
/// (commit `a…`) and the candidate (`b…`): (upload token, baseline run id, candidate run id).
pub async fn seed(server: &TestServer, slug: &str, public: bool) -> (String, String, String) {
    let token = server
        .project_with_token(slug, json!({"public": public}))
        .await;
    let settings = json!({"slo_profiles": [{"name": "chat", "ttft_ms": 120, "tpot_ms": 12}]});
    let (status, body) = server
        .send(
            "PUT",
            &format!("/api/v1/projects/{slug}/settings"),
            ADMIN_TOKEN,
            &settings,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let mut ids = Vec::new();
    for (side, sha) in [("baseline", 'a'), ("candidate", 'b')] {
        let (status, receipt) = server.upload(slug, &token, &upload_of(side, sha)).await;
        assert_eq!(status, 201, "{side}: {receipt}");
        assert_eq!(receipt["results"], 3, "{receipt}");
        ids.push(receipt["run_id"].as_str().unwrap().to_string());
    }
    (token, ids[0].clone(), ids[1].clone())
}
