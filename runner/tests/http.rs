//! The HTTP side of the CLI against a fake server that answers canned responses: request
//! method, path, headers and body, and how answers (201/200, problem+json) are printed.
//! An end-to-end test against the real `benchtrail-server` belongs next to these.

use crate::common;

use benchtrail_core::UploadDocument;
use common::*;
use serde_json::{json, Value};

const JSON: &str = "application/json";
const PROBLEM: &str = "application/problem+json";

#[test]
fn upload_posts_the_document_and_prints_the_run_url() {
    let (repo, _, head) = git_repo();
    let server = FakeServer::start(vec![(
        201,
        JSON,
        // The server's receipt (benchtrail_core::wire::UploadReceipt).
        json!({"run_id": "0b7e4f7c-1d2e-4a3b-9c8d-7e6f5a4b3c2d", "created": true, "results": 1, "path": "/runs/0b7e4f7c-1d2e-4a3b-9c8d-7e6f5a4b3c2d",
               "verdict": null, "verdict_detail": null}).to_string(),
    )]);
    let file = fixture(FIXTURE);
    let out = benchtrail(
        repo.path(),
        &[
            "upload",
            "--project",
            "demo",
            "--cell",
            "scenario=short-chat",
            file.to_str().unwrap(),
        ],
        &[
            ("BENCHTRAIL_URL", &format!("{}/", server.url)),
            ("BENCHTRAIL_TOKEN", "tok-123"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("{}/runs/0b7e4f7c-1d2e-4a3b-9c8d-7e6f5a4b3c2d\n", server.url)
    );
    assert!(
        stderr(&out).contains(&format!(
            "stored run 0b7e4f7c-1d2e-4a3b-9c8d-7e6f5a4b3c2d with 1 result(s) for commit {head}"
        )),
        "{}",
        stderr(&out)
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/api/v1/projects/demo/runs")
    );
    assert_eq!(request.header("authorization"), Some("Bearer tok-123"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    // A whole result file is sent gzip-compressed; `body` is what it inflates to.
    assert_eq!(request.header("content-encoding"), Some("gzip"));
    assert_eq!(
        request.header("content-length"),
        Some(request.raw_body.len().to_string().as_str())
    );
    assert!(request.raw_body.len() * 2 < request.body.len());
    let document: UploadDocument = serde_json::from_str(&request.body).unwrap();
    assert_eq!(document.run.commit.sha, head);
    assert_eq!(
        document.run.commit.subject.as_deref(),
        Some("Measure baseline")
    );
    assert_eq!(document.run.branch.as_deref(), Some("feature-x"));
    assert_eq!(document.cell.scenario.as_deref(), Some("short-chat"));
    assert_eq!(document.files.len(), 1);
    assert_eq!(document.files[0].format, None);
    assert_eq!(
        document.files[0].content,
        std::fs::read_to_string(&file).unwrap()
    );
    assert!(document.results.is_empty());
    // The server normalizes what it receives exactly as the dry run does.
    assert_eq!(document.normalize().unwrap().len(), 1);
}

#[test]
fn upload_json_output_for_an_already_stored_run() {
    let (repo, _, _) = git_repo();
    let server = FakeServer::start(vec![(
        200,
        JSON,
        json!({"run_id": "6f1f2a52-3c1e-4d59-9a55-0d3c2b3b8e11", "created": false, "results": 3, "path": "/runs/6f1f2a52-3c1e-4d59-9a55-0d3c2b3b8e11",
               "verdict": null, "verdict_detail": null}).to_string(),
    )]);
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
            "--run-id",
            "6f1f2a52-3c1e-4d59-9a55-0d3c2b3b8e11",
            "--json",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let printed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        printed,
        json!({"run_id": "6f1f2a52-3c1e-4d59-9a55-0d3c2b3b8e11", "url": format!("{}/runs/6f1f2a52-3c1e-4d59-9a55-0d3c2b3b8e11", server.url), "created": false, "results": 3, "status": 200, "verdict": null,
               "provisional": false, "repeats": null, "reasons": [], "missing_cells": [], "new_cells": [], "not_measured": []})
    );
    let body = server.requests()[0].json();
    assert_eq!(body["run"]["id"], "6f1f2a52-3c1e-4d59-9a55-0d3c2b3b8e11");
}

#[test]
fn upload_problem_is_printed_and_exits_2() {
    let (repo, _, _) = git_repo();
    let problem = json!({
        "type": "about:blank",
        "title": "Invalid upload",
        "status": 422,
        "detail": "record 0 (line 1): field `/completed`: must be a non-negative integer",
        "pointer": "/files/0/content",
        "errors": [{"pointer": "/files/0/content", "detail": "must be a non-negative integer", "field": "/completed"}],
    });
    let server = FakeServer::start(vec![(422, PROBLEM, problem.to_string())]);
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
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        format!(
            "error: the server answered HTTP 422 to POST {}/api/v1/projects/demo/runs: Invalid upload: record 0 (line 1): \
             field `/completed`: must be a non-negative integer\n  at /files/0/content\n  \
             - /files/0/content: must be a non-negative integer (field=/completed)\n",
            server.url
        )
    );
}

#[test]
fn non_problem_error_body_is_shown() {
    let (repo, _, _) = git_repo();
    let server = FakeServer::start(vec![(
        502,
        "text/plain",
        "Bad Gateway from proxy".to_string(),
    )]);
    let file = fixture(FIXTURE);
    let out = benchtrail(
        repo.path(),
        &[
            "upload",
            // One attempt: a 502 is retried otherwise (tests/retries.rs).
            "--retries",
            "0",
            "--server",
            &server.url,
            "--token",
            "t",
            "--project",
            "demo",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!("error: the server answered HTTP 502 to POST {}/api/v1/projects/demo/runs: Bad Gateway from proxy\n", server.url)
    );
}

#[test]
fn project_create_posts_its_fields_and_prints_the_url() {
    let dir = TempDir::new("cwd");
    let server = FakeServer::start(vec![
        (
            201,
            JSON,
            json!({"slug": "llama", "name": "Llama 8B"}).to_string(),
        ),
        (
            409,
            PROBLEM,
            json!({"title": "Conflict", "status": 409, "detail": "project `llama` already exists"})
                .to_string(),
        ),
    ]);
    let args = [
        "project",
        "create",
        "llama",
        "--name",
        "Llama 8B",
        "--private",
        "--repository-url",
        "https://github.com/acme/llm",
        "--default-branch",
        "trunk",
        "--key-field",
        "framework",
        "--key-field",
        "gpu_pool",
        "--server",
        &server.url,
        "--token",
        "admin-secret",
    ];
    let out = benchtrail(dir.path(), &args, &[]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), format!("{}/projects/llama\n", server.url));
    let again = benchtrail(dir.path(), &args, &[]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again)
            .contains("cannot create project `llama`: the server answered HTTP 409 to POST")
            && stderr(&again).contains("Conflict: project `llama` already exists"),
        "{}",
        stderr(&again)
    );
    let requests = server.requests();
    assert_eq!(requests[0].path, "/api/v1/projects");
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer admin-secret")
    );
    // A small body is sent as it is.
    assert_eq!(requests[0].header("content-encoding"), None);
    assert_eq!(requests[0].header("content-type"), Some("application/json"));
    assert_eq!(
        requests[0].json(),
        json!({
            "slug": "llama",
            "name": "Llama 8B",
            "repository_url": "https://github.com/acme/llm",
            "default_branch": "trunk",
            "public": false,
            "key_fields": ["framework", "gpu_pool"],
        })
    );
}

#[test]
fn project_create_defaults() {
    let dir = TempDir::new("cwd");
    let server = FakeServer::start(vec![(
        201,
        JSON,
        json!({"slug": "demo", "path": "/p/demo"}).to_string(),
    )]);
    let out = benchtrail(
        dir.path(),
        &[
            "project",
            "create",
            "demo",
            "--server",
            &server.url,
            "--token",
            "a",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), format!("{}/p/demo\n", server.url));
    assert_eq!(
        server.requests()[0].json(),
        json!({"slug": "demo", "name": "demo", "default_branch": "main", "public": true, "key_fields": []})
    );
}

#[test]
fn token_create_prints_the_token_alone_on_the_last_line() {
    let dir = TempDir::new("cwd");
    let server = FakeServer::start(vec![
        (
            201,
            JSON,
            json!({"token": "bt_upload_abc123", "scope": "upload", "project": "demo"}).to_string(),
        ),
        (
            201,
            JSON,
            json!({"token": "bt_read_xyz", "scope": "read", "project": "demo"}).to_string(),
        ),
    ]);
    let vars = [
        ("BENCHTRAIL_URL", server.url.as_str()),
        ("BENCHTRAIL_TOKEN", "admin-secret"),
    ];
    let out = benchtrail(dir.path(), &["token", "create", "--project", "demo"], &vars);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out).lines().last(), Some("bt_upload_abc123"));
    let out = benchtrail(
        dir.path(),
        &["token", "create", "--project", "demo", "--scope", "read"],
        &vars,
    );
    assert_eq!(stdout(&out).lines().last(), Some("bt_read_xyz"));
    let requests = server.requests();
    assert_eq!(requests[0].path, "/api/v1/projects/demo/tokens");
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer admin-secret")
    );
    assert_eq!(requests[0].json(), json!({"scope": "upload"}));
    assert_eq!(requests[1].json(), json!({"scope": "read"}));
}

#[test]
fn token_create_needs_a_token_and_a_valid_scope() {
    let dir = TempDir::new("cwd");
    let out = benchtrail(
        dir.path(),
        &[
            "token",
            "create",
            "--project",
            "demo",
            "--server",
            "http://127.0.0.1:9",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no token: pass --token (the admin token, or BENCHTRAIL_ADMIN_TOKEN) or set BENCHTRAIL_TOKEN")
    );
    let out = benchtrail(
        dir.path(),
        &["token", "create", "--project", "demo", "--scope", "admin"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(
            "invalid value 'admin' for '--scope <read|upload|write>': `admin` is not a scope: use read, upload or write"
        ),
        "{}",
        stderr(&out)
    );
}
