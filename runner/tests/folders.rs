//! `benchtrail upload FOLDER` and `benchtrail upload -`: a tool's artifact folder uploads as
//! the same run as its result files named by hand (warm-up, inputs and other non-result files
//! skipped and listed on stderr), a folder without a result file is an error that lists what
//! it found, and standard input is stored under `--stdin-name`.

use crate::common;

use common::real::start_server;
use common::*;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const ADMIN: &str = "bt_folders_admin";

/// `testdata/` of the repository.
fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata")
}

/// Runs `benchtrail` in `cwd` with `input` on standard input.
fn benchtrail_with_stdin(cwd: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_benchtrail"))
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", git_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("benchtrail runs");
    // A command that refuses its arguments exits without reading standard input: the write
    // then meets a closed pipe, which is that command's answer, not a test failure.
    match child.stdin.take().unwrap().write_all(input) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.unwrap(),
    }
    child.wait_with_output().unwrap()
}

/// `upload --dry-run --commit abcdef1 ARGS...` in `cwd`; exit 0 and the printed document.
fn dry_run(cwd: &Path, args: &[&str]) -> (Value, String) {
    let mut all = vec!["upload", "--dry-run", "--commit", "abcdef1"];
    all.extend_from_slice(args);
    let out = benchtrail(cwd, &all, &[]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    (serde_json::from_str(&stdout(&out)).unwrap(), stderr(&out))
}

#[test]
fn aiperf_folder_is_its_three_result_files() {
    let cwd = testdata().join("aiperf");
    let run = "baseline_completions_c1_isl512_osl128";
    let (folder, notes) = dry_run(&cwd, &[&format!("{run}/")]);
    assert_eq!(
        folder["files"],
        json!([
            {"name": format!("{run}/profile_export.jsonl"), "format": "aiperf-records"},
            {"name": format!("{run}/profile_export_aiperf.json"), "format": "aiperf"},
            {"name": format!("{run}/server_metrics_export.json"), "format": "aiperf-server-metrics"},
        ])
    );
    assert_eq!(
        notes,
        format!(
            "using {run}/profile_export.jsonl (aiperf-records)\n\
             using {run}/profile_export_aiperf.json (aiperf)\n\
             using {run}/server_metrics_export.json (aiperf-server-metrics)\n\
             skipped {run}/inputs.json: the benchmark's inputs (the prompts sent), not results\n\
             skipped {run}/phase_manifest.json: AIPerf's list of phase files, not results\n\
             skipped {run}/phases/profiling/profile_export_aiperf.json: AIPerf's per-phase copy; the run folder's `profile_export_aiperf.json` holds the profiling phase\n\
             skipped {run}/phases/warmup/profile_export_aiperf.json: warm-up phase (never a result)\n"
        )
    );
    // The same document as the three files named by hand: same results, samples and server
    // metrics included.
    let (by_hand, _) = dry_run(
        &cwd,
        &[
            &format!("{run}/profile_export.jsonl"),
            &format!("{run}/profile_export_aiperf.json"),
            &format!("{run}/server_metrics_export.json"),
        ],
    );
    assert_eq!(folder, by_hand);
    let results = folder["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert!(results[0]["samples"].is_object(), "{}", results[0]);
    let names: Vec<&str> = results[0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("server_")), "{names:?}");
    // The warm-up phase is never read: its request count is not the result's.
    let completed = results[0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "completed")
        .unwrap()["value"]
        .clone();
    assert_eq!(completed, json!(20.0));
}

#[test]
fn genai_perf_folder_pairs_its_per_request_file() {
    let cwd = testdata().join("genai-perf");
    let run = "baseline_completions_c1_isl512_osl64";
    let inner = format!("{run}/mock-llm-openai-completions-concurrency1");
    let (folder, notes) = dry_run(&cwd, &[run]);
    assert_eq!(
        folder["files"],
        json!([
            {"name": format!("{inner}/profile_export.json"), "format": "genai-perf-records"},
            {"name": format!("{inner}/profile_export_genai_perf.json"), "format": "genai-perf"},
        ])
    );
    assert_eq!(
        notes,
        format!(
            "using {inner}/profile_export.json (genai-perf-records)\n\
             using {inner}/profile_export_genai_perf.json (genai-perf)\n"
        )
    );
    let (by_hand, _) = dry_run(
        &cwd,
        &[
            &format!("{inner}/profile_export.json"),
            &format!("{inner}/profile_export_genai_perf.json"),
        ],
    );
    assert_eq!(folder, by_hand);
    assert_eq!(folder["results"].as_array().unwrap().len(), 1);
    assert!(folder["results"][0]["samples"].is_object());
}

#[test]
fn folder_without_a_result_file_is_an_error_listing_what_it_holds() {
    let dir = TempDir::new("no-results");
    let run = dir.path().join("run1");
    std::fs::create_dir_all(run.join("phases/warmup")).unwrap();
    std::fs::create_dir_all(run.join("logs")).unwrap();
    std::fs::write(run.join("notes.json"), r#"{"hello": 1}"#).unwrap();
    std::fs::write(run.join("empty.json"), "").unwrap();
    std::fs::write(run.join("broken.json"), "{\"a\": ").unwrap();
    std::fs::write(run.join("logs/aiperf.log"), "started\n").unwrap();
    std::fs::copy(
        testdata().join("aiperf/baseline_completions_c1_isl512_osl128/inputs.json"),
        run.join("inputs.json"),
    )
    .unwrap();
    std::fs::copy(
        testdata().join(
            "aiperf/baseline_completions_c1_isl512_osl128/phases/warmup/profile_export_aiperf.json",
        ),
        run.join("phases/warmup/profile_export_aiperf.json"),
    )
    .unwrap();
    // A per-request file without its summary is not a result either.
    std::fs::copy(
        testdata().join("aiperf/baseline_completions_c1_isl512_osl128/profile_export.jsonl"),
        run.join("profile_export.jsonl"),
    )
    .unwrap();
    let out = benchtrail(
        dir.path(),
        &["upload", "--dry-run", "--commit", "abcdef1", "run1"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    let first = err.lines().next().unwrap();
    assert!(
        first.starts_with("error: folder `run1` holds no result file in a known format; found 7 file(s): broken.json (not valid JSON: "),
        "{err}"
    );
    assert!(
        first.ends_with(
            "empty.json (empty); \
             inputs.json (the benchmark's inputs (the prompts sent), not results); \
             logs/aiperf.log (a log); \
             notes.json (not a known result format); \
             phases/warmup/profile_export_aiperf.json (warm-up phase (never a result)); \
             profile_export.jsonl (per-request data of `aiperf` without its summary file in the same folder)"
        ),
        "{err}"
    );
    // An empty folder says so.
    std::fs::create_dir_all(dir.path().join("run2")).unwrap();
    let out = benchtrail(
        dir.path(),
        &["upload", "--dry-run", "--commit", "abcdef1", "run2"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: folder `run2` holds no result file in a known format; it is empty\n"
    );
}

#[test]
fn explicit_files_stay_strict() {
    let cwd = testdata().join("aiperf/baseline_completions_c1_isl512_osl128");
    let out = benchtrail(
        &cwd,
        &["upload", "--dry-run", "--commit", "abcdef1", "inputs.json"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("these are AIPerf's inputs (inputs.json: the prompts sent), not results")
            && stderr(&out).ends_with("(file `inputs.json`)\n"),
        "{}",
        stderr(&out)
    );
    let out = benchtrail(
        &cwd,
        &[
            "upload",
            "--dry-run",
            "--commit",
            "abcdef1",
            "phases/warmup/profile_export_aiperf.json",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("this is AIPerf's warm-up phase export"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn stdin_is_read_under_its_stdin_name() {
    let dir = TempDir::new("stdin");
    let file = testdata().join("console/vllm-0.33.0-mock-baseline-c4.txt");
    let text = std::fs::read(&file).unwrap();
    let args = ["upload", "--dry-run", "--commit", "abcdef1"];

    let out = benchtrail_with_stdin(dir.path(), &[&args[..], &["-"]].concat(), &text);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let piped: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        piped["files"],
        json!([{"name": "stdin", "format": "vllm-bench-serve-console"}])
    );

    let named = [&args[..], &["--stdin-name", "vllm-console.txt", "-"]].concat();
    let out = benchtrail_with_stdin(dir.path(), &named, &text);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let piped: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        piped["files"],
        json!([{"name": "vllm-console.txt", "format": "vllm-bench-serve-console"}])
    );
    // The same results as the file itself.
    let (from_file, _) = dry_run(dir.path(), &[file.to_str().unwrap()]);
    assert_eq!(piped["results"], from_file["results"]);
    let results = piped["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["source"]["file"], 0);

    // `-` is read once; --stdin-name needs it.
    let out = benchtrail_with_stdin(dir.path(), &[&args[..], &["-", "-"]].concat(), &text);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: `-` (standard input) given 2 times; it can be read once\n"
    );
    let out = benchtrail(
        dir.path(),
        &[
            &args[..],
            &["--stdin-name", "x.txt", file.to_str().unwrap()],
        ]
        .concat(),
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: --stdin-name names standard input, but `-` is not among the files\n"
    );
}

#[test]
fn folder_and_stdin_upload_to_a_real_server() {
    let data = TempDir::new("folders-e2e");
    let base = start_server(&data, ADMIN);
    let env = [("BENCHTRAIL_URL", base.as_str())];
    let cwd = testdata().join("aiperf");
    let out = benchtrail(&cwd, &["project", "create", "p", "--token", ADMIN], &env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = benchtrail(
        &cwd,
        &["token", "create", "--project", "p", "--token", ADMIN],
        &env,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let token = stdout(&out).lines().last().unwrap().to_string();
    let upload = |files: &[&str]| {
        let mut args = vec![
            "upload",
            "--project",
            "p",
            "--token",
            &token,
            "--commit",
            "abcdef1",
            "--branch",
            "main",
            "--json",
        ];
        args.extend_from_slice(files);
        let out = benchtrail(&cwd, &args, &env);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let receipt: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
        (receipt, stderr(&out))
    };

    let run = "baseline_completions_c1_isl512_osl128";
    let (receipt, notes) = upload(&[run]);
    assert_eq!(receipt["created"], true);
    assert_eq!(receipt["results"], 1);
    assert!(
        notes.contains(&format!(
            "skipped {run}/phases/warmup/profile_export_aiperf.json: warm-up phase (never a result)\n"
        )) && notes.contains(&format!(
            "skipped {run}/inputs.json: the benchmark's inputs (the prompts sent), not results\n"
        )),
        "{notes}"
    );
    // The three files named by hand are the same upload: the same run, stored once.
    let (again, _) = upload(&[
        &format!("{run}/profile_export.jsonl"),
        &format!("{run}/profile_export_aiperf.json"),
        &format!("{run}/server_metrics_export.json"),
    ]);
    assert_eq!(again["run_id"], receipt["run_id"]);
    assert_eq!(again["created"], false);

    // What the server stored is what the files say.
    let stored: Value = reqwest::blocking::get(format!(
        "{base}/api/v1/runs/{}",
        receipt["run_id"].as_str().unwrap()
    ))
    .unwrap()
    .json()
    .unwrap();
    let results = stored["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    let (expected, _) = dry_run(&cwd, &[run]);
    let metric = |doc: &Value, name: &str, stat: &str| {
        doc["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name && m["stat"] == stat)
            .unwrap_or_else(|| panic!("no {name} {stat} in {doc}"))["value"]
            .as_f64()
            .unwrap()
    };
    for (name, stat) in [("ttft", "p99"), ("tpot", "mean"), ("completed", "value")] {
        assert_eq!(
            metric(&results[0], name, stat),
            metric(&expected["results"][0], name, stat),
            "{name} {stat}"
        );
    }

    // A console summary piped in.
    let console =
        std::fs::read(testdata().join("console/vllm-0.33.0-mock-baseline-c4.txt")).unwrap();
    let out = benchtrail_with_stdin(
        &cwd,
        &[
            "upload",
            "--server",
            &base,
            "--project",
            "p",
            "--token",
            &token,
            "--commit",
            "abcdef2",
            "--stdin-name",
            "vllm-console.txt",
            "--json",
            "-",
        ],
        &console,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let receipt: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(receipt["created"], true);
    assert_eq!(receipt["results"], 1);
}
