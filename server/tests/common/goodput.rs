//! The real "throughput up, goodput down" history (`vllm bench serve --goodput ttft:60 tpot:12
//! e2el:1800 --save-detailed` against the mock server: three baseline runs, then the
//! candidate; examples/README.md) as uploads, shared by the detection tests.

use super::server::repo_file;
use serde_json::{json, Value};

/// The `--goodput` flags the files were made with.
pub const GOODPUT: &str = "--goodput ttft:60 tpot:12 e2el:1800";

/// The history's files, in commit order.
pub const GOODPUT_HISTORY: &[&str] = &[
    "examples/history/goodput_baseline_s11_c4.json",
    "examples/history/goodput_baseline_s12_c4.json",
    "examples/history/goodput_baseline_s13_c4.json",
    "examples/history/goodput_candidate_s21_c4.json",
];

/// An upload of the vLLM file `path` as commit number `i` (`{i:040x}`, one day apart) on
/// `main`, with the benchmark command that made it.
pub fn vllm_doc(i: usize, path: &str) -> Value {
    json!({
        "run": {"commit": {"sha": format!("{i:040x}"), "time": format!("2026-11-{:02}T09:00:00Z", i + 1)}, "branch": "main"},
        "configuration": {"benchmark": {"command": format!("vllm bench serve --model mock-llm {GOODPUT} --save-detailed")}},
        "files": [{"name": path.rsplit('/').next().unwrap(), "content": repo_file(path)}],
    })
}
