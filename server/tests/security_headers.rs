//! Browser security headers on every kind of answer (API, page, static asset, 404 and other
//! errors, uploaded file), with their exact values; uploaded files are attachments.

use crate::common;

use common::db::for_each_store;
use common::server::{repo_file, TestServer};
use serde_json::json;

/// The policy the pages are written to satisfy (no inline script or style; see
/// `security_headers_satisfy_the_pages` in `browser.rs`).
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; \
     base-uri 'none'; frame-ancestors 'none'";

/// Asserts the four headers on `r`, naming `what` on failure.
fn assert_security_headers(r: &reqwest::Response, what: &str) {
    let h = r.headers();
    let get = |name: &str| {
        let values: Vec<_> = h.get_all(name).iter().collect();
        assert_eq!(values.len(), 1, "{what}: one `{name}` header: {values:?}");
        values[0].to_str().unwrap().to_string()
    };
    assert_eq!(get("content-security-policy"), CSP, "{what}");
    assert_eq!(get("x-content-type-options"), "nosniff", "{what}");
    assert_eq!(get("x-frame-options"), "DENY", "{what}");
    assert_eq!(
        get("referrer-policy"),
        "strict-origin-when-cross-origin",
        "{what}"
    );
}

#[tokio::test]
async fn every_kind_of_answer_carries_the_security_headers() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let good = repo_file(
            "testdata/vllm/llm-benchmaxxing-vllm-bench-serve-2026-01-glm47-fp8-h100-tp8.json",
        );
        let doc = json!({"run": {"commit": {"sha": "c".repeat(40)}},
            "files": [{"name": "result.json", "content": good}]});
        let (status, receipt) = server.upload("demo", &token, &doc).await;
        assert_eq!(status, 201, "{db}: {receipt}");
        let run = receipt["run_id"].as_str().unwrap().to_string();

        let get = |path: String| {
            let server = &server;
            async move { server.http.get(server.url(&path)).send().await.unwrap() }
        };
        for (path, status, content_type) in [
            ("/api/v1/projects".to_string(), 200, "application/json"),
            ("/healthz".to_string(), 200, "application/json"),
            ("/".to_string(), 200, "text/html; charset=utf-8"),
            (format!("/runs/{run}"), 200, "text/html; charset=utf-8"),
            (
                "/static/site.css".to_string(),
                200,
                "text/css; charset=utf-8",
            ),
            (
                "/static/series.js".to_string(),
                200,
                "text/javascript; charset=utf-8",
            ),
            ("/no/such/page".to_string(), 404, "text/html; charset=utf-8"),
            (
                "/static/nope.js".to_string(),
                404,
                "text/plain; charset=utf-8",
            ),
            ("/api/v1/nope".to_string(), 404, "application/problem+json"),
            (
                "/api/v1/projects/nope".to_string(),
                404,
                "application/problem+json",
            ),
            (
                format!("/api/v1/runs/{run}/files/0"),
                200,
                "text/plain; charset=utf-8",
            ),
        ] {
            let r = get(path.clone()).await;
            let what = format!("{db}: GET {path}");
            assert_eq!(r.status(), status, "{what}");
            assert_eq!(r.headers()["content-type"], content_type, "{what}");
            assert_security_headers(&r, &what);
        }

        // A refused write (401) and a wrong method (405) too.
        let r = server
            .http
            .put(server.url("/api/v1/projects/demo/settings"))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "{db}");
        assert_security_headers(&r, "401");
        let r = server
            .http
            .delete(server.url("/api/v1/projects"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 405, "{db}");
        assert_security_headers(&r, "405");

        // The uploaded file is a download, byte for byte.
        let r = get(format!("/api/v1/runs/{run}/files/0")).await;
        assert_eq!(
            r.headers()["content-disposition"],
            "attachment; filename=\"result.json\"; filename*=UTF-8''result.json",
            "{db}"
        );
        assert_eq!(r.text().await.unwrap(), good, "{db}");
    })
    .await;
}
