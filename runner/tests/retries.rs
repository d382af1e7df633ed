//! Retries of the built binary against real HTTP servers on loopback (axum, answering a
//! script): an upload retried on 503 and on 429 with `Retry-After`, with the same body (so the
//! same run id) every time; a server that always fails; a refused connection; a 422 that is
//! final; and `check`'s reads retried the same way.

use crate::common;

use benchtrail_core::UploadDocument;
use common::scripted::{Answer, Scripted};
use common::*;
use serde_json::json;
use std::time::Duration;

const RUN_ID: &str = "0b7e4f7c-1d2e-4a3b-9c8d-7e6f5a4b3c2d";

fn receipt() -> Answer {
    Answer::json(
        201,
        json!({"run_id": RUN_ID, "created": true, "results": 1, "path": format!("/runs/{RUN_ID}"),
               "verdict": null, "verdict_detail": null}),
    )
}

/// `benchtrail upload` of the fixture to project `demo` on `url`, with `extra` flags; the
/// first backoff wait is 50 ms so a test does not sleep for seconds.
fn upload(repo: &TempDir, url: &str, extra: &[&str]) -> std::process::Output {
    let file = fixture(FIXTURE);
    let mut args = vec!["upload", "--project", "demo", "--cell", "scenario=chat"];
    args.extend_from_slice(extra);
    args.push(file.to_str().unwrap());
    benchtrail(
        repo.path(),
        &args,
        &[
            ("BENCHTRAIL_URL", url),
            ("BENCHTRAIL_TOKEN", "tok"),
            ("BENCHTRAIL_RETRY_DELAY_MS", "50"),
        ],
    )
}

#[test]
fn an_upload_is_retried_on_503_and_429_with_retry_after_and_sends_one_run_id() {
    let (repo, _, _) = git_repo();
    let server = Scripted::start(vec![
        Answer::problem(503, "Service Unavailable", "starting up"),
        Answer::problem(429, "Too Many Requests", "slow down").with_header("retry-after", "1"),
        receipt(),
    ]);
    let out = upload(&repo, &server.url, &["--run-id", RUN_ID]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{}/runs/{RUN_ID}\n", server.url));

    let received = server.received();
    assert_eq!(received.len(), 3);
    for r in &received {
        assert_eq!(
            (r.method.as_str(), r.path.as_str()),
            ("POST", "/api/v1/projects/demo/runs")
        );
        assert_eq!(r.json()["run"]["id"], RUN_ID);
        // Byte for byte the same document.
        assert_eq!(r.body, received[0].body);
    }
    // The server's Retry-After (1 s) set the second wait; the first was the 50 ms backoff
    // (with jitter, under 100 ms).
    let second_wait = received[2].at - received[1].at;
    assert!(second_wait >= Duration::from_secs(1), "{second_wait:?}");
    let first_wait = received[1].at - received[0].at;
    assert!(first_wait >= Duration::from_millis(50), "{first_wait:?}");
    let url = format!("{}/api/v1/projects/demo/runs", server.url);
    let err = stderr(&out);
    let retries: Vec<&str> = err.lines().filter(|l| l.starts_with("retrying")).collect();
    assert_eq!(
        retries,
        [
            format!("retrying POST {url} in 0.1 s (attempt 2 of 5): HTTP 503 Service Unavailable"),
            format!("retrying POST {url} in 1.0 s (attempt 3 of 5): HTTP 429 Too Many Requests"),
        ],
        "{err}"
    );
    assert!(
        err.contains(&format!("stored run {RUN_ID} with 1 result(s)")),
        "{err}"
    );
}

#[test]
fn without_run_id_every_attempt_sends_the_document_the_server_derives_one_id_from() {
    let (repo, _, _) = git_repo();
    let server = Scripted::start(vec![
        Answer::problem(502, "Bad Gateway", "proxy"),
        receipt(),
    ]);
    let out = upload(&repo, &server.url, &["--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let printed: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(printed["run_id"], RUN_ID);
    assert_eq!(printed["status"], 201);
    let received = server.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].body, received[1].body);
    let ids: Vec<_> = received
        .iter()
        .map(|r| {
            let doc: UploadDocument = serde_json::from_str(&r.body).unwrap();
            assert_eq!(doc.run.id, None);
            doc.derived_run_id("demo", "feature-x")
        })
        .collect();
    assert_eq!(ids[0], ids[1]);
}

#[test]
fn a_server_that_always_fails_is_given_up_on_after_the_attempts() {
    let (repo, _, _) = git_repo();
    let server = Scripted::start(vec![
        Answer::problem(
            500,
            "Internal Server Error",
            "database down"
        );
        3
    ]);
    let out = upload(&repo, &server.url, &["--retries", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "");
    assert_eq!(server.received().len(), 3);
    let url = format!("{}/api/v1/projects/demo/runs", server.url);
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    let n = lines.len();
    assert!(
        lines[n - 4].starts_with(&format!("retrying POST {url} in 0.")),
        "{err}"
    );
    assert!(
        lines[n - 4].ends_with("(attempt 2 of 3): HTTP 500 Internal Server Error"),
        "{err}"
    );
    assert!(
        lines[n - 3].ends_with("(attempt 3 of 3): HTTP 500 Internal Server Error"),
        "{err}"
    );
    assert_eq!(
        lines[n - 2..],
        [
            format!("giving up on POST {url} after 3 attempts"),
            format!("error: the server answered HTTP 500 to POST {url}: Internal Server Error: database down"),
        ]
    );
}

/// A loopback port nothing listens on (bound, then released).
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    url
}

#[test]
fn a_refused_connection_is_retried_then_exits_2() {
    let (repo, _, _) = git_repo();
    let url = closed_port();
    let out = upload(&repo, &url, &["--retries", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let runs = format!("{url}/api/v1/projects/demo/runs");
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    let n = lines.len();
    assert!(
        lines[n - 3].starts_with(&format!("retrying POST {runs} in 0.1 s (attempt 2 of 2): ")),
        "{err}"
    );
    assert!(lines[n - 3].contains("Connection refused"), "{err}");
    assert_eq!(
        lines[n - 2],
        format!("giving up on POST {runs} after 2 attempts")
    );
    assert!(
        lines[n - 1].starts_with(&format!("error: could not reach {runs}: ")),
        "{err}"
    );
}

#[test]
fn a_422_is_final() {
    let (repo, _, _) = git_repo();
    let server = Scripted::start(vec![
        Answer::problem(422, "Unprocessable Entity", "bad file"),
        receipt(),
    ]);
    let out = upload(&repo, &server.url, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(server.received().len(), 1);
    assert_eq!(
        stderr(&out),
        format!(
            "error: the server answered HTTP 422 to POST {}/api/v1/projects/demo/runs: \
             Unprocessable Entity: bad file\n",
            server.url
        )
    );
}

#[test]
fn check_retries_its_reads() {
    let verdict = json!({"verdict": "pass", "provisional": false, "reasons": [], "missing_cells": [],
        "new_cells": [], "not_measured": [], "run_id": RUN_ID, "commit": "abcdef0123456789",
        "settings_version": null, "series_states": {}});
    // No analysis stored: the report is the verdict's.
    let report =
        json!({"project": "demo", "verdict": verdict.clone(), "analysis": null, "extras": {}});
    let server = Scripted::start(vec![
        Answer::problem(503, "Service Unavailable", "restarting"),
        Answer::json(200, verdict),
        Answer::problem(504, "Gateway Timeout", "slow"),
        Answer::json(200, report),
    ]);
    let dir = TempDir::new("check-retry");
    let out = benchtrail(
        dir.path(),
        &["check", "--run", RUN_ID],
        &[
            ("BENCHTRAIL_URL", &server.url),
            ("BENCHTRAIL_RETRY_DELAY_MS", "50"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let paths: Vec<String> = server.received().into_iter().map(|r| r.path).collect();
    let verdict_path = format!("/api/v1/runs/{RUN_ID}/verdict");
    let analysis_path = format!("/api/v1/runs/{RUN_ID}/report?format=json");
    assert_eq!(
        paths,
        [
            verdict_path.clone(),
            verdict_path.clone(),
            analysis_path.clone(),
            analysis_path.clone()
        ]
    );
    let err = stderr(&out);
    assert_eq!(
        err,
        format!(
            "retrying GET {0}{verdict_path} in 0.1 s (attempt 2 of 5): HTTP 503 Service Unavailable\n\
             retrying GET {0}{analysis_path} in 0.1 s (attempt 2 of 5): HTTP 504 Gateway Timeout\n",
            server.url
        )
    );
    assert!(
        stdout(&out)
            .starts_with("benchtrail verdict: PASS — no regressions at commit abcdef012345"),
        "{}",
        stdout(&out)
    );
}
