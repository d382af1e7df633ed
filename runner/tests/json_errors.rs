//! Errors as JSON on stdout when the command line asks for JSON (`upload --json`, `check
//! --format json`, `run --report-format json`), through the built binary: the server's problem
//! document, a refused connection, usage and input errors, a failed benchmark. Exit status 2
//! and the `error:` line on stderr stay.

use crate::common;

use common::scripted::{Answer, Scripted};
use common::*;
use serde_json::{json, Value};

fn printed(out: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

#[test]
fn a_422_problem_is_printed_with_the_servers_fields() {
    let (repo, _, _) = git_repo();
    let problem = json!({
        "type": "about:blank", "title": "Unprocessable Entity", "status": 422,
        "detail": "record 0 (line 1): field `/completed`: must be a non-negative integer",
        "pointer": "/files/0/content",
        "errors": [
            {"pointer": "/files/0/content", "detail": "must be a non-negative integer", "field": "/completed", "record": 0, "line": 1},
            {"pointer": "/cell", "detail": "or set the cell"}
        ]
    });
    let server = Scripted::start(vec![Answer {
        status: 422,
        headers: vec![],
        content_type: "application/problem+json",
        body: problem.to_string(),
    }]);
    let file = fixture(FIXTURE);
    let out = benchtrail(
        repo.path(),
        &[
            "upload",
            "--server",
            &server.url,
            "--token",
            "t",
            "--project",
            "demo",
            "--json",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let url = format!("{}/api/v1/projects/demo/runs", server.url);
    let message = format!(
        "the server answered HTTP 422 to POST {url}: Unprocessable Entity: record 0 (line 1): \
         field `/completed`: must be a non-negative integer\n  at /files/0/content\n  \
         - /files/0/content: must be a non-negative integer (field=/completed, line=1, record=0)\n  \
         - /cell: or set the cell"
    );
    assert_eq!(
        printed(&out),
        json!({
            "error": {"kind": "problem", "message": message, "method": "POST", "url": url, "status": 422},
            "problem": problem,
        })
    );
    assert_eq!(stderr(&out), format!("error: {message}\n"));
    // One line of JSON.
    assert_eq!(stdout(&out).lines().count(), 1);
}

#[test]
fn a_refused_connection_is_kind_connection() {
    let (repo, _, _) = git_repo();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let file = fixture(FIXTURE);
    let out = benchtrail(
        repo.path(),
        &[
            "upload",
            "--server",
            &base,
            "--token",
            "t",
            "--project",
            "demo",
            "--retries",
            "0",
            "--json",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let url = format!("{base}/api/v1/projects/demo/runs");
    assert_eq!(
        printed(&out),
        json!({"error": {
            "kind": "connection",
            "message": format!("could not reach {url}: error sending request for url ({url}): \
                                client error (Connect): tcp connect error: Connection refused (os error 111)"),
            "url": url,
        }})
    );
}

#[test]
fn usage_and_input_errors_and_a_failed_benchmark() {
    let (repo, _, _) = git_repo();
    let file = fixture(FIXTURE);
    let file = file.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = benchtrail(repo.path(), args, &[]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        printed(&out)
    };
    assert_eq!(
        run(&["upload", "--project", "p", "--json", file]),
        json!({"error": {"kind": "usage", "message": "no server: pass --server URL or set BENCHTRAIL_URL"}})
    );
    assert_eq!(
        run(&["upload", "--dry-run", "--json", "missing.json"]),
        json!({"error": {"kind": "input", "message": "cannot read result file `missing.json`: No such file or directory (os error 2)"}})
    );
    // clap's own refusal, before any command runs.
    assert_eq!(
        run(&["check", "--format", "json", "--bogus"]),
        json!({"error": {"kind": "usage", "message": "unexpected argument '--bogus' found"}})
    );
    assert_eq!(
        run(&[
            "check",
            "--format",
            "json",
            "--run",
            "x",
            "--server",
            "localhost:1"
        ]),
        json!({"error": {"kind": "usage", "message": "invalid server URL `localhost:1`: expected http://HOST[:PORT] or https://..."}})
    );
    assert_eq!(
        run(&[
            "run",
            "--report-format",
            "json",
            "--project",
            "p",
            // A result path and --dry-run, so the checks made before the benchmark pass.
            "--dry-run",
            "--result",
            "r.json",
            "--",
            "/bin/false"
        ]),
        json!({"error": {"kind": "benchmark", "message": "the benchmark command failed (exit status: 1): nothing uploaded"}})
    );
}

#[test]
fn without_json_nothing_is_printed_on_stdout() {
    let (repo, _, _) = git_repo();
    let out = benchtrail(
        repo.path(),
        &[
            "upload",
            "--project",
            "p",
            fixture(FIXTURE).to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "error: no server: pass --server URL or set BENCHTRAIL_URL\n"
    );
}
