//! Two results of one cell in one upload are refused (422): the server's problem names the
//! JSON field (`/run/repeat_index`); `benchtrail upload` prints the problem once and names its
//! own flags (`--repeat-index`, `--cell`). The built binary against a real server.

use crate::common;

use common::real::RealProject;
use common::*;
use serde_json::{json, Value};
use std::path::Path;

/// The real vLLM runs of one cell (concurrency 4, 60 prompts): a baseline and a candidate.
const RUNS: [&str; 2] = [
    "examples/history/baseline_completions_c4_isl512_osl128.json",
    "examples/history/candidate_completions_c4_isl512_osl128.json",
];

/// `benchtrail upload` of `files` (in `dir`) as commit `abcdef1` on `main`, with `extra` flags.
fn upload(p: &RealProject, dir: &Path, extra: &[&str], files: &[&str]) -> std::process::Output {
    let mut args = vec![
        "upload",
        "--project",
        "p",
        "--commit",
        "abcdef1",
        "--branch",
        "main",
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(files);
    benchtrail(
        dir,
        &args,
        &[("BENCHTRAIL_URL", &p.base), ("BENCHTRAIL_TOKEN", &p.token)],
    )
}

#[test]
fn two_results_of_one_cell_are_refused_once_with_the_flags_that_tell_them_apart() {
    let p = RealProject::start("ambiguous");
    let dir = TempDir::new("ambiguous-files");
    for (name, path) in ["a.json", "b.json"].iter().zip(RUNS) {
        let text =
            std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let out = upload(&p, dir.path(), &[], &["a.json", "b.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "");
    // The problem once (its one fault is also its first `errors` item), the two fields that
    // would resolve it, and the flags that set them.
    assert_eq!(
        stderr(&out),
        format!(
            "error: the server answered HTTP 422 to POST {}/api/v1/projects/p/runs: Unprocessable \
             content: `/files/1` (\"b.json\", record 0) and `/files/0` (\"a.json\", record 0) are \
             two results of one series key ({{\"benchmark.name\":\"vllm-bench-serve\",\"model.name\":\"mock-llm\"}}) \
             in one cell (`max_concurrency=4;request_rate=inf;num_prompts=60`): one upload is one \
             run, so they are ambiguous and are not pooled. Upload each repeat as its own run with \
             its own `run.repeat_index`, or tell the workloads apart (the file's settings, the \
             recorded `benchmark.command`, or `cell`).\n  \
             at /files/1\n  \
             - /run/repeat_index: a repeat of the cell: upload it as its own run with its own \
             repeat index\n  \
             - /cell: another workload: give the cell fields that tell it apart\n  \
             hint: upload each repeat as its own `benchtrail upload` with its own `--repeat-index \
             N` (0, 1, 2, ...), or tell the workloads apart with `--cell` (e.g. `--cell \
             input_len=8192,output_len=1024`)\n",
            p.base
        )
    );

    // The API's problem names the JSON fields, as pointers.
    let files: Vec<Value> = ["a.json", "b.json"]
        .iter()
        .map(
            |n| json!({"name": n, "content": std::fs::read_to_string(dir.path().join(n)).unwrap()}),
        )
        .collect();
    let doc = json!({"run": {"commit": {"sha": "abcdef1"}, "branch": "main"}, "files": files});
    let answer = reqwest::blocking::Client::new()
        .post(format!("{}/api/v1/projects/p/runs", p.base))
        .bearer_auth(&p.token)
        .json(&doc)
        .send()
        .unwrap();
    assert_eq!(answer.status().as_u16(), 422);
    let problem: Value = answer.json().unwrap();
    assert_eq!(problem["pointer"], "/files/1");
    let pointers: Vec<&str> = problem["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["pointer"].as_str().unwrap())
        .collect();
    assert_eq!(pointers, ["/files/1", "/run/repeat_index", "/cell"]);
    assert_eq!(problem["errors"][0]["detail"], problem["detail"]);

    // As the hint says: each file its own repeat.
    for (i, file) in ["a.json", "b.json"].iter().enumerate() {
        let out = upload(&p, dir.path(), &["--repeat-index", &i.to_string()], &[file]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
}

#[test]
fn a_problem_without_repeat_index_gets_no_hint() {
    // A file that is not a result: the problem (and its one `errors` item, with the same
    // pointer and detail, whose location is added to the `at` line) printed once, no hint.
    let p = RealProject::start("no-hint");
    let dir = TempDir::new("no-hint-files");
    std::fs::write(dir.path().join("r.json"), r#"{"completed": -1}"#).unwrap();
    let out = upload(
        &p,
        dir.path(),
        &["--format", "vllm-bench-serve"],
        &["r.json"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "error: the server answered HTTP 422 to POST {}/api/v1/projects/p/runs: Unprocessable \
             content: record 0 (line 1): not a vllm bench serve result: no `duration`, \
             `request_throughput`, `model_id`\n  at /files/0/content (field=, line=1, record=0)\n",
            p.base
        )
    );
}
