//! The built `benchtrail` binary against a real benchtrail server (SQLite, loopback HTTP):
//! project and token creation with the admin token, uploads (sent gzip-compressed), idempotent
//! re-upload, and a token of another project refused.

use crate::common;

use benchtrail_server::app::{router, AppState};
use benchtrail_server::auth::hash_token;
use benchtrail_server::storage::Store;
use common::*;
use serde_json::Value;
use std::sync::{Arc, Mutex};

const ADMIN: &str = "bt_e2e_admin";

/// What the server saw of one request before the app read it: method, path, and the
/// `Content-Encoding` and `Content-Length` headers as sent.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    method: String,
    path: String,
    encoding: Option<String>,
    length: Option<usize>,
}

/// Starts a server on 127.0.0.1:0 in a background thread; returns its base URL and the log
/// of requests it received. The server lives until the test process ends.
fn start_server(data: &TempDir) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let url = format!("sqlite://{}/bt.db", data.path().display());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async move {
            let store = Store::connect(&url).await.unwrap();
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(format!("http://{}", listener.local_addr().unwrap()))
                .unwrap();
            let state = AppState {
                store,
                admin_token_hash: Arc::new(hash_token(ADMIN)),
                public_url: None,
                analyzer: benchtrail_server::analysis::jobs::Analyzer::new(Default::default()),
                auth_throttle: Default::default(),
                sessions: Default::default(),
            };
            let header = |request: &axum::extract::Request, name: &str| {
                request
                    .headers()
                    .get(name)
                    .map(|v| v.to_str().unwrap().to_string())
            };
            // The analysis workers, which `serve` would start (this test serves its own stack).
            state.analyzer.start(&state);
            let app = router(state).layer(axum::middleware::from_fn(
                move |request: axum::extract::Request, next: axum::middleware::Next| {
                    log.lock().unwrap().push(Seen {
                        method: request.method().to_string(),
                        path: request.uri().path().to_string(),
                        encoding: header(&request, "content-encoding"),
                        length: header(&request, "content-length").map(|l| l.parse().unwrap()),
                    });
                    next.run(request)
                },
            ));
            axum::serve(listener, app).await.unwrap();
        });
    });
    (rx.recv().unwrap(), seen)
}

#[test]
fn create_project_token_and_upload_to_a_real_server() {
    let data = TempDir::new("e2e");
    let (base, seen) = start_server(&data);
    let (repo, _, head) = git_repo();
    let env = [("BENCHTRAIL_URL", base.as_str())];

    let out = benchtrail(
        repo.path(),
        &["project", "create", "demo", "--token", ADMIN],
        &env,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = benchtrail(
        repo.path(),
        &["project", "create", "other", "--token", ADMIN],
        &env,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The admin commands also read BENCHTRAIL_ADMIN_TOKEN.
    let out = benchtrail(
        repo.path(),
        &["token", "create", "--project", "demo"],
        &[
            ("BENCHTRAIL_URL", base.as_str()),
            ("BENCHTRAIL_ADMIN_TOKEN", ADMIN),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let token = stdout(&out).lines().last().unwrap().to_string();
    assert!(token.starts_with("bt_") && token.len() == 67, "{token}");

    let file = fixture(FIXTURE);
    let run_id = "7f1c2e0a-5b3d-4e8f-9a6b-0c1d2e3f4a5b";
    let upload = |project: &str, token: &str| {
        benchtrail(
            repo.path(),
            &[
                "upload",
                "--project",
                project,
                "--token",
                token,
                "--run-id",
                run_id,
                "--json",
                file.to_str().unwrap(),
            ],
            &env,
        )
    };
    let out = upload("demo", &token);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let receipt: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(receipt["run_id"], run_id);
    assert_eq!(receipt["url"], format!("{base}/runs/{run_id}"));
    assert_eq!(receipt["created"], true);
    assert_eq!(receipt["results"], 1);
    // One run and no history: never a silent pass.
    assert_eq!(receipt["verdict"], "warn");
    // The upload arrived gzip-compressed; the project and token requests (small) did not.
    let requests = seen.lock().unwrap().clone();
    let upload_request = requests.last().unwrap();
    assert_eq!(upload_request.method, "POST");
    assert_eq!(upload_request.path, "/api/v1/projects/demo/runs");
    assert_eq!(upload_request.encoding.as_deref(), Some("gzip"));
    let file_len = std::fs::metadata(&file).unwrap().len() as usize;
    let sent = upload_request.length.unwrap();
    eprintln!("upload of {FIXTURE} ({file_len} bytes): {sent} bytes sent gzipped");
    assert!(sent * 2 < file_len, "{sent} of {file_len}");
    assert!(requests[..requests.len() - 1]
        .iter()
        .all(|r| r.encoding.is_none()));

    // What the server stored: the commit from git and the file's exact values.
    let run: Value = reqwest::blocking::get(format!("{base}/api/v1/runs/{run_id}"))
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(run["commit_sha"], head);
    assert_eq!(run["branch"], "feature-x");
    let p99 = run["results"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "ttft" && m["stat"] == "p99")
        .unwrap()
        .clone();
    assert_eq!(p99["value"].as_f64().unwrap(), 38.17072886003415);
    assert_eq!(p99["n"], 20);

    // A retry stores nothing twice and still exits 0.
    let out = upload("demo", &token);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let receipt: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(receipt["created"], false);
    let runs: Value = reqwest::blocking::get(format!("{base}/api/v1/projects/demo/runs"))
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(runs["items"].as_array().unwrap().len(), 1);

    // demo's token cannot upload to `other`: exit 2 with the server's reason.
    let out = upload("other", &token);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("this token belongs to another project than `other`"),
        "{}",
        stderr(&out)
    );
}
