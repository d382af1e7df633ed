//! `benchtrail upload --dry-run` end to end through the built binary: commit detection from a
//! real git repository, `--hardware auto` with a stand-in `nvidia-smi`, flags, and exit codes.

use crate::common;

use common::*;
use serde_json::{json, Value};
use std::path::Path;

fn dry_run(cwd: &Path, extra: &[&str], vars: &[(&str, &str)]) -> Value {
    let file = fixture(FIXTURE);
    let mut args = vec!["upload", "--dry-run"];
    args.extend_from_slice(extra);
    args.push(file.to_str().unwrap());
    let out = benchtrail(cwd, &args, vars);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

/// The value of metric `name`/`stat` of the first result.
fn metric(doc: &Value, name: &str, stat: &str) -> Value {
    doc["results"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name && m["stat"] == stat)
        .unwrap_or_else(|| panic!("no metric {name} {stat}"))
        .clone()
}

#[test]
fn vllm_file_in_a_git_checkout() {
    let (repo, first, second) = git_repo();
    assert_eq!(
        git(repo.path(), &["rev-parse", "HEAD"], "2026-01-01T00:00:00Z"),
        second
    );
    let doc = dry_run(
        repo.path(),
        &[
            "--cell",
            "scenario=short-chat,max_concurrency=4,prefix_mode=fresh",
        ],
        &[],
    );

    assert_eq!(
        doc["run"],
        json!({
            "commit": {
                "sha": second,
                "parents": [first],
                // The committer's offset is kept (git: 2026-01-02T04:04:05+01:00).
                "time": "2026-01-02T04:04:05+01:00",
                "subject": "Measure baseline",
            },
            "branch": "feature-x",
            "repeat_index": 0,
        })
    );
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(
        metric(&doc, "ttft", "p99"),
        json!({"name": "ttft", "stat": "p99", "unit": "ms", "value": 38.17072886003415, "n": 20,
            "ci": {"low": 36.69734899995092, "high": 38.310722000005626, "level": 0.95,
                   "method": "bootstrap-percentile, 1000 resamples of requests, seed 0x62656e6368"}})
    );
    assert_eq!(
        metric(&doc, "request_throughput", "value"),
        json!({"name": "request_throughput", "stat": "value", "unit": "req/s", "value": 0.7693989756787135})
    );
    // The file states its load shape (max_concurrency 1 wins over --cell's 4); --cell fills the rest.
    assert_eq!(
        results[0]["cell"],
        json!({
            "scenario": "short-chat",
            "prefix_mode": "fresh",
            "load": {"max_concurrency": 1, "request_rate": "inf"},
            "num_prompts": 20,
        })
    );
    assert_eq!(results[0]["configuration"]["model"]["name"], "mock-llm");
    assert_eq!(
        results[0]["source"],
        json!({"format": "vllm-bench-serve", "file": 0, "record": 0})
    );
    // No --hardware: nothing detected.
    assert_eq!(results[0]["configuration"]["hardware"], json!({}));
}

#[test]
fn flags_ci_environment_config_and_hardware_file() {
    let (repo, first, _) = git_repo();
    let hardware = repo.path().join("hw.json");
    std::fs::write(
        &hardware,
        r#"{"accelerator": "NVIDIA L4", "accelerator_count": 1, "driver_version": "535.183.01"}"#,
    )
    .unwrap();
    let config = repo.path().join("config.json");
    std::fs::write(
        &config,
        r#"{"hardware": {"accelerator_count": 2}, "engine": {"name": "vllm", "commit": "0123abc"},
            "parallelism": {"tensor_parallel_size": 2}}"#,
    )
    .unwrap();
    let doc = dry_run(
        repo.path(),
        &[
            "--commit",
            &first[..12],
            "--pr",
            "42",
            "--merge-base",
            "feedc0de",
            "--hardware",
            "hw.json",
            "--config",
            "config.json",
            "--format",
            "vllm-bench-serve",
            "--run-id",
            "6f1f2a52-3c1e-4d59-9a55-0d3c2b3b8e11",
            "--repeat-index",
            "3",
            "--tag",
            "runner=gpu-7",
            "--tag",
            "note=a=b",
        ],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_HEAD_REF", "pr-branch"),
            ("GITHUB_REF_NAME", "42/merge"),
            ("GITHUB_REF_TYPE", "branch"),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "acme/llm"),
            ("GITHUB_RUN_ID", "987654"),
        ],
    );
    assert_eq!(
        doc["run"],
        json!({
            "id": "6f1f2a52-3c1e-4d59-9a55-0d3c2b3b8e11",
            // A short SHA that exists locally is expanded and detailed.
            "commit": {"sha": first, "time": "2026-01-01T10:00:00Z", "subject": "Add harness"},
            "branch": "pr-branch",
            "pull_request": {"number": 42, "merge_base": "feedc0de"},
            "ci_job_url": "https://github.com/acme/llm/actions/runs/987654",
            "repeat_index": 3,
            "tags": {"note": "a=b", "runner": "gpu-7"},
        })
    );
    let configuration = &doc["results"][0]["configuration"];
    // --config wins over --hardware; the rest of --hardware stays.
    assert_eq!(
        configuration["hardware"],
        json!({"accelerator": "NVIDIA L4", "accelerator_count": 2, "driver_version": "535.183.01"})
    );
    assert_eq!(
        configuration["engine"],
        json!({"name": "vllm", "commit": "0123abc"})
    );
    assert_eq!(
        configuration["parallelism"],
        json!({"tensor_parallel_size": 2})
    );
}

#[test]
fn unknown_commit_outside_or_inside_git_is_kept_as_given() {
    let plain = TempDir::new("plain");
    let doc = dry_run(plain.path(), &["--commit", "deadbeef"], &[]);
    assert_eq!(
        doc["run"],
        json!({"commit": {"sha": "deadbeef"}, "repeat_index": 0})
    );
    let (repo, _, _) = git_repo();
    let doc = dry_run(
        repo.path(),
        &["--commit", "deadbeef", "--branch", "main"],
        &[],
    );
    assert_eq!(
        doc["run"],
        json!({"commit": {"sha": "deadbeef"}, "branch": "main", "repeat_index": 0})
    );
}

/// A merge commit sends both parents from git, first parent first, and its committer time with
/// the committer's own offset (here west of UTC); the server orders history by them.
#[test]
fn a_merge_commit_sends_both_parents_and_the_committer_offset() {
    let (repo, first, second) = git_repo();
    let dir = repo.path();
    git(
        dir,
        &["checkout", "-q", "-b", "side", &first],
        "2026-01-03T00:00:00Z",
    );
    std::fs::write(dir.join("side.txt"), "s\n").unwrap();
    git(dir, &["add", "side.txt"], "2026-01-03T00:00:00Z");
    git(
        dir,
        &["commit", "-q", "-m", "Side work"],
        "2026-01-03T00:00:00Z",
    );
    let side = git(dir, &["rev-parse", "HEAD"], "2026-01-03T00:00:00Z");
    git(
        dir,
        &["checkout", "-q", "feature-x"],
        "2026-01-03T00:00:00Z",
    );
    git(
        dir,
        &["merge", "-q", "--no-ff", "-m", "Merge side", "side"],
        "2026-01-03T20:30:00-07:00",
    );
    let merge = git(dir, &["rev-parse", "HEAD"], "2026-01-03T20:30:00-07:00");
    let doc = dry_run(dir, &[], &[]);
    assert_eq!(
        doc["run"]["commit"],
        json!({
            "sha": merge,
            "parents": [second, side],
            "time": "2026-01-03T20:30:00-07:00",
            "subject": "Merge side",
        })
    );
}

#[test]
fn detached_head_has_no_branch() {
    let (repo, first, _) = git_repo();
    git(
        repo.path(),
        &["checkout", "-q", "--detach", &first],
        "2026-01-01T00:00:00Z",
    );
    let doc = dry_run(repo.path(), &[], &[]);
    assert_eq!(doc["run"]["commit"]["sha"], first.as_str());
    assert_eq!(
        doc["run"]["commit"]["parents"],
        Value::Null,
        "a root commit has no parents"
    );
    assert_eq!(doc["run"].get("branch"), None);
}

const H100_CSV: &str = "NVIDIA H100 80GB HBM3, 81559, 550.54.15\n";

/// A directory holding a stand-in `nvidia-smi` that checks its arguments (exit 1 otherwise)
/// and prints `stdout` then exits `code`. Uses shell builtins only.
fn fake_nvidia_smi(stdout: &str, code: i32) -> TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("bin");
    let script = format!(
        "#!/bin/sh\n\
         if [ \"$#\" -ne 2 ] || [ \"$1\" != '--query-gpu=name,memory.total,driver_version' ] \
         || [ \"$2\" != '--format=csv,noheader,nounits' ]; then\n  echo \"unexpected arguments: $*\" >&2\n  exit 1\nfi\n\
         printf '%s' '{stdout}'\nexit {code}\n"
    );
    let path = dir.path().join("nvidia-smi");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn path_with(dir: &Path) -> String {
    format!("{}:{}", dir.display(), git_dir().display())
}

/// The first `model name` of this machine's /proc/cpuinfo, as `--hardware auto` records it.
fn host_cpu() -> Option<String> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "model name").then(|| v.trim().to_string())
    })
}

#[test]
fn hardware_auto_with_eight_h100() {
    let bin = fake_nvidia_smi(&H100_CSV.repeat(8), 0);
    let (repo, _, _) = git_repo();
    let path = path_with(bin.path());
    let doc = dry_run(repo.path(), &["--hardware", "auto"], &[("PATH", &path)]);
    let mut expected = json!({
        "accelerator": "NVIDIA H100 80GB HBM3",
        "accelerator_count": 8,
        "accelerator_memory_mib": 81559,
        "driver_version": "550.54.15",
    });
    if let Some(cpu) = host_cpu() {
        expected["host_cpu"] = json!(cpu);
    }
    assert_eq!(doc["results"][0]["configuration"]["hardware"], expected);
}

#[test]
fn hardware_auto_with_one_l4_and_config_winning() {
    let bin = fake_nvidia_smi("NVIDIA L4, 23034, 535.183.01\n", 0);
    let (repo, _, _) = git_repo();
    std::fs::write(
        repo.path().join("c.json"),
        r#"{"hardware": {"driver_version": "stated"}}"#,
    )
    .unwrap();
    let path = path_with(bin.path());
    let doc = dry_run(
        repo.path(),
        &["--hardware", "auto", "--config", "c.json"],
        &[("PATH", &path)],
    );
    let hardware = &doc["results"][0]["configuration"]["hardware"];
    assert_eq!(hardware["accelerator"], "NVIDIA L4");
    assert_eq!(hardware["accelerator_count"], 1);
    assert_eq!(hardware["accelerator_memory_mib"], 23034);
    assert_eq!(hardware["driver_version"], "stated");
}

#[test]
fn hardware_auto_without_nvidia_smi() {
    assert!(
        !git_dir().join("nvidia-smi").exists(),
        "this test needs a PATH without nvidia-smi"
    );
    let (repo, _, _) = git_repo();
    let file = fixture(FIXTURE);
    let out = benchtrail(
        repo.path(),
        &[
            "upload",
            "--dry-run",
            "--hardware",
            "auto",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert!(
        stderr(&out).contains("note: nvidia-smi not found on PATH: no accelerator recorded"),
        "{}",
        stderr(&out)
    );
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let expected = host_cpu().map_or(json!({}), |cpu| json!({ "host_cpu": cpu }));
    assert_eq!(doc["results"][0]["configuration"]["hardware"], expected);
}

#[test]
fn hardware_auto_errors_exit_2() {
    let (repo, _, _) = git_repo();
    let file = fixture(FIXTURE);
    let args = [
        "upload",
        "--dry-run",
        "--hardware",
        "auto",
        file.to_str().unwrap(),
    ];
    for (csv, code, message) in [
        ("", 9, "--hardware auto: nvidia-smi failed (exit status: 9): no output"),
        (
            "NVIDIA H100 80GB HBM3, 81559, 550.54.15\nNVIDIA L4, 23034, 550.54.15\n",
            0,
            "--hardware auto: nvidia-smi lists mixed GPU models (1 × NVIDIA H100 80GB HBM3, 1 × NVIDIA L4)",
        ),
    ] {
        let bin = fake_nvidia_smi(csv, code);
        let path = path_with(bin.path());
        let out = benchtrail(repo.path(), &args, &[("PATH", &path)]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(message), "{}", stderr(&out));
        assert_eq!(stdout(&out), "");
    }
}

/// Runs `benchtrail ARGS` in `cwd`, asserts exit status 2 and that stderr contains `message`.
fn assert_fails(cwd: &Path, args: &[&str], message: &str) {
    let out = benchtrail(cwd, args, &[]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: stderr: {}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains(message),
        "{args:?}: stderr: {}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "", "{args:?}");
}

#[test]
fn errors_exit_2() {
    let (repo, _, _) = git_repo();
    let plain = TempDir::new("plain");
    let file = fixture(FIXTURE);
    let file = file.to_str().unwrap();
    assert_fails(
        repo.path(),
        &["upload", "--dry-run", "missing.json"],
        "cannot read result file `missing.json`",
    );
    assert_fails(
        repo.path(),
        &["upload", "--dry-run", "--cell", "concurrency=4", file],
        "--cell: unknown key `concurrency`; valid keys: scenario, prefix_mode, load_level, max_concurrency, \
         request_rate, burstiness, input_len, output_len, dataset, num_prompts",
    );
    assert_fails(
        plain.path(),
        &["upload", "--dry-run", file],
        "run inside a git checkout or pass --commit SHA",
    );
    assert_fails(
        repo.path(),
        &[
            "upload",
            "--server",
            "http://127.0.0.1:9",
            "--token",
            "t",
            "--retries",
            "0",
            "--project",
            "p",
            file,
        ],
        "could not reach http://127.0.0.1:9/api/v1/projects/p/runs",
    );
    assert_fails(
        repo.path(),
        &["upload", "--project", "p", file],
        "no server: pass --server URL or set BENCHTRAIL_URL",
    );
    assert_fails(
        repo.path(),
        &[
            "upload",
            "--project",
            "p",
            "--server",
            "localhost:8080",
            "--token",
            "t",
            file,
        ],
        "invalid server URL `localhost:8080`",
    );
    assert_fails(
        repo.path(),
        &["upload", "--dry-run", "--config", "nope.json", file],
        "--config: cannot read `",
    );
    std::fs::write(
        repo.path().join("bad.json"),
        r#"{"hardware": {"gpu": "x"}}"#,
    )
    .unwrap();
    assert_fails(
        repo.path(),
        &["upload", "--dry-run", "--config", "bad.json", file],
        "bad.json` is not a configuration: unknown field `gpu`",
    );
    std::fs::write(repo.path().join("notes.txt"), "not a result").unwrap();
    assert_fails(
        repo.path(),
        &["upload", "--dry-run", "notes.txt"],
        // Every format is tried (vLLM's first); the list grows with the adapters.
        "invalid upload at /files/0/content: could not detect the format; tried vllm-bench-serve (not JSON); ",
    );
    assert_fails(
        repo.path(),
        &["upload", "--dry-run", "--format", "nope", file],
        "invalid upload at /files/0/format",
    );
    assert_fails(
        repo.path(),
        &["upload", "--dry-run", "--tag", "novalue", file],
        "--tag `novalue`: expected KEY=VALUE",
    );
    // Usage errors from clap.
    assert_fails(
        repo.path(),
        &["upload", "--dry-run", "--bogus", file],
        "--bogus",
    );
    assert_fails(
        repo.path(),
        &["upload", "--dry-run", "--merge-base", "abc", file],
        "--pr",
    );
    assert_fails(repo.path(), &[], "Usage");
    // Help is not an error.
    let out = benchtrail(repo.path(), &["upload", "--help"], &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("--hardware <auto|FILE>"));
}

#[test]
fn commit_time_and_subject_for_a_commit_not_in_the_checkout() {
    let (repo, _, _) = git_repo();
    let sha = "4a1b2c3d4e5f60718293a4b5c6d7e8f901234567";
    let doc = dry_run(
        repo.path(),
        &[
            "--commit",
            sha,
            "--commit-time",
            "2026-11-02T10:00:00+01:00",
            "--commit-subject",
            "[synthetic] baseline",
        ],
        &[],
    );
    assert_eq!(
        doc["run"]["commit"],
        json!({"sha": sha, "time": "2026-11-02T10:00:00+01:00", "subject": "[synthetic] baseline"})
    );
    let file = fixture(FIXTURE);
    let out = benchtrail(
        repo.path(),
        &[
            "upload",
            "--dry-run",
            "--commit-time",
            "yesterday",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("expected an RFC 3339 time"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn quality_flag_reads_lm_eval_results_and_benchtrail_documents() {
    let (repo, _, _) = git_repo();
    let lm_eval = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/lm-eval/results_2026-11-30T10-12-44.json");
    let doc = dry_run(repo.path(), &["--quality", lm_eval.to_str().unwrap()], &[]);
    let quality = doc["quality"].as_array().unwrap();
    assert_eq!(quality.len(), 7, "{doc}");
    assert_eq!(
        quality[3],
        json!({"task": "gsm8k", "metric": "exact_match,strict-match",
               "value": 0.7543593631539045, "stderr": 0.011857183603902226, "samples": 1319})
    );
    let own = repo.path().join("quality.json");
    std::fs::write(
        &own,
        r#"{"quality": [{"task": "mmlu", "metric": "acc", "value": 0.68}]}"#,
    )
    .unwrap();
    let doc = dry_run(repo.path(), &["--quality", "quality.json"], &[]);
    assert_eq!(
        doc["quality"],
        json!([{"task": "mmlu", "metric": "acc", "value": 0.68}])
    );
    // Neither format: exit 2 naming the flag.
    std::fs::write(&own, r#"{"tasks": []}"#).unwrap();
    let file = fixture(FIXTURE);
    let out = benchtrail(
        repo.path(),
        &[
            "upload",
            "--dry-run",
            "--quality",
            "quality.json",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--quality"), "{}", stderr(&out));
}
