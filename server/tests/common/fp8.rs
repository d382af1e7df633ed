//! The FP8 KV-cache history of the realistic generator (`HistorySpec::fp8_case`: 10 single-run
//! baseline commits at run-to-run CV 1.2 %, then the change, in three cells) as upload
//! documents: commit `i` is one run of every cell's `vllm bench serve` file, parent commit
//! `i − 1`.

use benchtrail_core::regression::realistic::{commit_runs, HistorySpec};
use serde_json::{json, Value};

/// The SHA of commit `i` (40 hex digits).
pub fn sha(i: usize) -> String {
    format!("{:040x}", 0xf8_0000 + i)
}

/// The upload of commit `i` of `spec` (one run, every cell's file), parent: commit i − 1.
pub fn upload(spec: &HistorySpec, i: usize) -> Value {
    let files: Vec<Value> = commit_runs(spec, i)
        .iter()
        .map(|r| json!({"name": format!("c{}.json", r.cell), "content": r.file.to_string()}))
        .collect();
    let parents: Vec<String> = (i > 0).then(|| sha(i - 1)).into_iter().collect();
    json!({
        "run": {"commit": {"sha": sha(i), "parents": parents,
                           "time": format!("2026-11-01T00:{i:02}:00Z")},
                "branch": "main"},
        "configuration": {"hardware": {"accelerator": "NVIDIA H100 80GB HBM3", "accelerator_count": 1}},
        "cell": {"input_len": spec.workload.input_len, "output_len": spec.workload.output_len},
        "files": files,
    })
}
