//! A history of the validation method's standard matrix (scenario × prefix mode × load level,
//! the cells labelled as `benchtrail upload --cell scenario=…,prefix_mode=…,load_level=…`
//! labels them), in benchtrail's own result format: ten baseline commits of 17 cells
//! (long-output · reusable · near-capacity is never measured), then a candidate without
//! short-chat · fresh · low whose long-doc-qa · fresh · typical median TTFT rose to 130 ms
//! from about 100.

use super::server::TestServer;
use serde_json::{json, Value};

/// The baseline commits' offsets from 100 ms (run-to-run noise), then the candidate's.
const NOISE: [f64; 11] = [0.0, 1.5, -1.2, 0.4, -0.8, 1.1, -0.3, 0.9, -1.4, 0.6, 0.2];

/// One result of the standard matrix cell (scenario, prefix mode, load level), with its TTFT
/// p50 (ms).
pub fn labelled_result(scenario: &str, prefix: &str, level: &str, ttft: f64) -> Value {
    let concurrency = match level {
        "low" => 1,
        "typical" => 8,
        _ => 32,
    };
    json!({
        "cell": {"scenario": scenario, "prefix_mode": prefix, "load_level": level,
                 "load": {"max_concurrency": concurrency, "request_rate": "inf"}},
        "configuration": {"hardware": {"accelerator": "NVIDIA H100 80GB HBM3"},
                          "model": {"name": "meta-llama/Llama-3.1-8B-Instruct"}},
        "metrics": [
            {"name": "ttft", "stat": "p50", "unit": "ms", "value": ttft, "n": 200},
            {"name": "output_throughput", "stat": "value", "unit": "tok/s", "value": 1000.0}
        ]
    })
}

/// Uploads the history to project `slug` with `token` (commit `i`'s parent is commit
/// `i − 1`); returns the candidate run.
pub async fn seed(server: &TestServer, slug: &str, token: &str) -> String {
    let last = NOISE.len() - 1;
    let sha = |i: usize| format!("{:040x}", 0x18_0000 + i);
    let mut head = String::new();
    for (i, n) in NOISE.iter().enumerate() {
        let mut results = Vec::new();
        for s in ["short-chat", "long-doc-qa", "long-output"] {
            for p in ["fresh", "reusable"] {
                for l in ["low", "typical", "near-capacity"] {
                    if (s, p, l) == ("long-output", "reusable", "near-capacity")
                        || (i == last && (s, p, l) == ("short-chat", "fresh", "low"))
                    {
                        continue;
                    }
                    let ttft = if i == last && (s, p, l) == ("long-doc-qa", "fresh", "typical") {
                        130.0
                    } else {
                        100.0 + n
                    };
                    results.push(labelled_result(s, p, l, ttft));
                }
            }
        }
        let parents: Vec<String> = (i > 0).then(|| sha(i - 1)).into_iter().collect();
        let doc = json!({
            "run": {"commit": {"sha": sha(i), "parents": parents,
                               "time": format!("2026-11-02T{i:02}:00:00Z")},
                    "branch": "main"},
            "files": [{"name": "results.json", "content": serde_json::to_string(&results).unwrap()}],
        });
        let (status, r) = server.upload(slug, token, &doc).await;
        assert_eq!(status, 201, "{r}");
        head = r["run_id"].as_str().unwrap().to_string();
    }
    head
}
