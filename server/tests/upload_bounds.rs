//! An upload over one of its bounds (tags, metadata strings, files, results, a file's size,
//! any object or string elsewhere) is refused whole with a problem naming the field (`pointer`)
//! and the bound (`limit`): 422, or 413 for a file's size; nothing is stored. An upload at
//! every bound is accepted. Over real HTTP on loopback, on every database.

use crate::common;

use benchtrail_core::upload_limits::*;
use common::db::for_each_store;
use common::server::{TestServer, ADMIN_TOKEN};
use serde_json::{json, Map, Value};

/// A small valid vLLM result file.
const FILE: &str =
    r#"{"model_id": "m", "duration": 1.0, "completed": 1, "request_throughput": 1.0}"#;

/// A valid upload to change one field of.
fn base() -> Value {
    json!({
        "run": {"commit": {"sha": "abcdef1"}, "branch": "main"},
        "files": [{"name": "result.json", "content": FILE}],
    })
}

/// `base()` with `value` at `pointer` (its parent exists).
fn with(pointer: &str, value: Value) -> Value {
    let mut doc = base();
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let parent = if parent.is_empty() {
        &mut doc
    } else {
        doc.pointer_mut(parent).unwrap()
    };
    parent[key] = value;
    doc
}

/// `n` tags `k0`, `k1`, ... with the value `v`.
fn tags(n: usize) -> Value {
    Value::Object(
        (0..n)
            .map(|i| (format!("k{i}"), json!("v")))
            .collect::<Map<_, _>>(),
    )
}

/// Uploads `doc` to project `p`; asserts it is refused with `status` at `pointer` naming
/// `limit`, and returns the problem's detail.
async fn refused(
    server: &TestServer,
    token: &str,
    doc: &Value,
    status: u16,
    pointer: &str,
    limit: usize,
) -> String {
    let r = server
        .http
        .post(server.url("/api/v1/projects/p/runs"))
        .bearer_auth(token)
        .json(doc)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), status, "{pointer}");
    assert_eq!(
        r.headers()["content-type"],
        "application/problem+json",
        "{pointer}"
    );
    let problem: Value = r.json().await.unwrap();
    assert_eq!(problem["status"], status, "{problem}");
    assert_eq!(problem["pointer"], pointer, "{problem}");
    assert_eq!(problem["limit"], limit, "{problem}");
    assert_eq!(problem["errors"][0]["pointer"], pointer, "{problem}");
    problem["detail"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn uploads_over_a_bound_are_refused_naming_field_and_bound_and_store_nothing() {
    for_each_store(|_db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("p", json!({})).await;
        let long = |n: usize| json!("a".repeat(n));

        let detail = refused(&server, &token, &with("/run/tags", tags(MAX_TAGS + 1)), 422, "/run/tags", MAX_TAGS).await;
        assert_eq!(detail, "has 129 tags; at most 128 are accepted");
        let mut doc = base();
        doc["run"]["tags"] = json!({"ok": "v", "a/b": "é".repeat(MAX_TAG_VALUE_CHARS + 1)});
        let detail = refused(&server, &token, &doc, 422, "/run/tags/a~1b", MAX_TAG_VALUE_CHARS).await;
        assert_eq!(detail, "is 1025 characters long; at most 1024 are accepted");
        doc["run"]["tags"] = json!({"k".repeat(MAX_TAG_KEY_CHARS + 1): "v"});
        let pointer = format!("/run/tags/{}", "k".repeat(MAX_TAG_KEY_CHARS + 1));
        refused(&server, &token, &doc, 422, &pointer, MAX_TAG_KEY_CHARS).await;

        refused(&server, &token, &with("/run/branch", long(MAX_BRANCH_CHARS + 1)), 422, "/run/branch", MAX_BRANCH_CHARS).await;
        refused(&server, &token, &with("/run/commit/subject", long(MAX_SUBJECT_CHARS + 1)), 422, "/run/commit/subject", MAX_SUBJECT_CHARS).await;
        refused(&server, &token, &with("/run/ci_job_url", long(MAX_URL_CHARS + 1)), 422, "/run/ci_job_url", MAX_URL_CHARS).await;
        let parents = json!(vec!["abcdef2"; MAX_PARENTS + 1]);
        refused(&server, &token, &with("/run/commit/parents", parents), 422, "/run/commit/parents", MAX_PARENTS).await;

        let files: Vec<Value> = (0..=MAX_FILES)
            .map(|i| json!({"name": format!("r{i}.json"), "content": FILE}))
            .collect();
        let detail = refused(&server, &token, &with("/files", json!(files)), 422, "/files", MAX_FILES).await;
        assert_eq!(detail, "has 257 files; at most 256 are accepted");
        let mut doc = base();
        doc["files"][0]["name"] = long(MAX_FILE_NAME_CHARS + 1);
        refused(&server, &token, &doc, 422, "/files/0/name", MAX_FILE_NAME_CHARS).await;
        // A file over the size bound is refused before it is parsed: 413.
        let mut doc = base();
        doc["files"] = json!([
            {"name": "ok.json", "content": FILE},
            {"name": "huge.json", "content": " ".repeat(MAX_FILE_BYTES + 1)},
        ]);
        let detail = refused(&server, &token, &doc, 413, "/files/1/content", MAX_FILE_BYTES).await;
        assert_eq!(
            detail,
            "is a file of 50331649 bytes; files of at most 50331648 bytes are accepted"
        );
        // 24 MiB of tiny JSON objects: within the size bound, but over 50 times its size once
        // parsed; refused before it is parsed.
        doc["files"] = json!([
            {"name": "ok.json", "content": FILE},
            {"name": "tiny.json", "content": format!("[{}]", r#"{"a":1},"#.repeat(3 << 20))},
        ]);
        let detail = refused(&server, &token, &doc, 413, "/files/1/content", MAX_PARSED_JSON_BYTES as usize).await;
        assert_eq!(
            detail,
            "is JSON that would take about 768 MiB of memory once parsed; files of at most 512 MiB \
             parsed are accepted (many tiny objects cost much more than their text)"
        );

        // Results: inline ones counted before anything is read, those of files once read.
        let result = json!({"metrics": [{"name": "ttft", "stat": "p50", "unit": "ms", "value": 1.0}]});
        let mut doc = base();
        doc["results"] = json!(vec![result; MAX_RESULTS + 1]);
        refused(&server, &token, &doc, 422, "/results", MAX_RESULTS).await;
        let lines: Vec<String> = (0..=MAX_RESULTS)
            .map(|i| FILE.replace("\"m\"", &format!("\"m{i}\"")))
            .collect();
        let mut doc = base();
        doc["files"][0]["content"] = json!(lines.join("\n"));
        let detail = refused(&server, &token, &doc, 422, "/files/0", MAX_RESULTS).await;
        assert_eq!(
            detail,
            "brings the upload's results to 1025 (with the files before it); at most 1024 results are accepted in one upload, inline results included"
        );

        // Anywhere else: objects and strings.
        let mut doc = base();
        doc["configuration"] = json!({"metadata": tags(MAX_OBJECT_ENTRIES + 1)});
        refused(&server, &token, &doc, 422, "/configuration/metadata", MAX_OBJECT_ENTRIES).await;
        let mut doc = base();
        doc["cell"] = json!({"scenario": "a".repeat(MAX_TEXT_CHARS + 1)});
        refused(&server, &token, &doc, 422, "/cell/scenario", MAX_TEXT_CHARS).await;

        let runs: Value = server
            .http
            .get(server.url("/api/v1/projects/p/runs"))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(runs["items"], json!([]), "nothing stored: {runs}");
    })
    .await;
}

#[tokio::test]
async fn an_upload_at_every_bound_is_accepted() {
    for_each_store(|_db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("p", json!({})).await;
        let mut doc = base();
        let mut all = tags(MAX_TAGS - 1);
        all["k".repeat(MAX_TAG_KEY_CHARS)] = json!("é".repeat(MAX_TAG_VALUE_CHARS));
        doc["run"] = json!({
            "commit": {"sha": "abcdef1", "subject": "s".repeat(MAX_SUBJECT_CHARS),
                       "parents": vec!["abcdef2"; MAX_PARENTS]},
            "branch": "b".repeat(MAX_BRANCH_CHARS),
            "ci_job_url": format!("https://ci/{}", "j".repeat(MAX_URL_CHARS - "https://ci/".len())),
            "tags": all,
        });
        doc["configuration"] = json!({"metadata": tags(MAX_OBJECT_ENTRIES)});
        doc["files"][0]["name"] = json!("n".repeat(MAX_FILE_NAME_CHARS));
        let (status, receipt) = server.upload("p", &token, &doc).await;
        assert_eq!(status, 201, "{receipt}");
        let run: Value = server
            .http
            .get(server.url(&format!(
                "/api/v1/runs/{}",
                receipt["run_id"].as_str().unwrap()
            )))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(run["tags"].as_object().unwrap().len(), MAX_TAGS, "{run}");
    })
    .await;
}
