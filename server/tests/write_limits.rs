//! Every write route decides who may call it from the request head, before reading (or
//! inflating) a byte of the body, and reads at most its own limit: kilobytes for settings,
//! triage, exclusions, pins, projects and tokens, 64 MiB (decompressed) for uploads only. Over
//! real HTTP on loopback, on every database.

use crate::common;

use common::db::for_each_store;
use common::seed::{seed, Seeded};
use common::server::{TestServer, ADMIN_TOKEN};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The small routes' limit, as the 413 names it.
const SMALL_LIMIT: usize = 64 * 1024;

/// A write route: method, path, and whether only the admin token may call it.
struct Route {
    method: &'static str,
    path: String,
    admin_only: bool,
}

/// Every route that takes a body, on the seeded project `s`.
fn write_routes(s: &Seeded) -> Vec<Route> {
    let p = &s.slug;
    let route = |method, path: String, admin_only| Route {
        method,
        path,
        admin_only,
    };
    vec![
        route("PUT", format!("/api/v1/projects/{p}/settings"), false),
        route(
            "PUT",
            format!("/api/v1/projects/{p}/baselines/{}", s.series_id),
            false,
        ),
        route("POST", format!("/api/v1/projects/{p}/runs"), false),
        route(
            "POST",
            format!("/api/v1/runs/{}/exclusion", s.run_id),
            false,
        ),
        route("PATCH", format!("/api/v1/alerts/{}", s.alert_id), false),
        route("POST", "/api/v1/projects".to_string(), true),
        route("POST", format!("/api/v1/projects/{p}/tokens"), true),
    ]
}

/// Sends the head of `method path` announcing a `length`-byte body and 10 bytes of it, then
/// reads whatever the server answers within `wait` (the body never completes).
async fn partial(
    server: &TestServer,
    method: &str,
    path: &str,
    token: Option<&str>,
    length: usize,
    wait: Duration,
) -> String {
    let addr = server.base.trim_start_matches("http://");
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}\
         Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n{{\"run\": {{"
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let _ = tokio::time::timeout(wait, async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    answer.extend_from_slice(&buf[..n]);
                    if String::from_utf8_lossy(&answer).contains("\"status\":") {
                        break;
                    }
                }
            }
        }
    })
    .await;
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn every_write_route_refuses_a_caller_from_the_request_head() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let s = seed(&server, "demo", true).await;
        // Generous: the answer comes at once, and were the body read first never at all.
        let wait = Duration::from_secs(20);
        for r in write_routes(&s) {
            let what = format!("{db}: {} {}", r.method, r.path);
            let none = partial(&server, r.method, &r.path, None, 60 << 20, wait).await;
            assert!(none.starts_with("HTTP/1.1 401"), "{what}: {none}");
            assert!(none.contains("application/problem+json"), "{what}: {none}");
            let read = partial(&server, r.method, &r.path, Some(&s.read), 60 << 20, wait).await;
            assert!(read.starts_with("HTTP/1.1 403"), "{what}: {read}");
            let unknown =
                partial(&server, r.method, &r.path, Some("bt_nope"), 60 << 20, wait).await;
            assert!(unknown.starts_with("HTTP/1.1 401"), "{what}: {unknown}");
            // A caller who may call it: the body is waited for (nothing within a second) when
            // it fits the route's limit...
            let allowed = if r.admin_only { ADMIN_TOKEN } else { &s.write };
            let fits = if r.path.ends_with("/runs") {
                60 << 20
            } else {
                1000
            };
            let waiting = partial(
                &server,
                r.method,
                &r.path,
                Some(allowed),
                fits,
                Duration::from_secs(1),
            )
            .await;
            assert_eq!(waiting, "", "{what}");
            // ... and a declared length over a small route's limit is a 413 at once.
            if !r.path.ends_with("/runs") {
                let over = partial(
                    &server,
                    r.method,
                    &r.path,
                    Some(allowed),
                    SMALL_LIMIT + 1,
                    wait,
                )
                .await;
                assert!(over.starts_with("HTTP/1.1 413"), "{what}: {over}");
                assert!(
                    over.contains("the request body is larger than 65536 bytes"),
                    "{what}: {over}"
                );
            }
        }
    })
    .await;
}

/// `bytes` of JSON whitespace after `{"slo_profiles": `, gzip-compressed: a body of a few
/// hundred KiB that inflates to `bytes`.
fn gzip_bomb(bytes: usize) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(b"{\"slo_profiles\": ").unwrap();
    let spaces = vec![b' '; 1 << 20];
    for _ in 0..bytes >> 20 {
        encoder.write_all(&spaces).unwrap();
    }
    encoder.finish().unwrap()
}

/// PUTs `body` gzip-encoded to the settings of `slug`; returns status, content type, problem.
async fn put_gzip(
    server: &TestServer,
    slug: &str,
    token: Option<&str>,
    body: Vec<u8>,
) -> (u16, String, Value) {
    let mut request = server
        .http
        .put(server.url(&format!("/api/v1/projects/{slug}/settings")))
        .header("content-type", "application/json")
        .header("content-encoding", "gzip")
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let r = request.send().await.unwrap();
    let status = r.status().as_u16();
    let content_type = r.headers()["content-type"].to_str().unwrap().to_string();
    (status, content_type, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_gzip_bomb_without_a_token_is_refused_at_once_and_the_server_stays_responsive() {
    // 512 MiB once inflated (eight times the upload limit), built once for both stores.
    let bomb = Arc::new(gzip_bomb(512 << 20));
    assert!(bomb.len() < 1 << 20, "{}", bomb.len());
    for_each_store(move |db, store| {
        let bomb = bomb.clone();
        async move {
            let server = Arc::new(TestServer::start(store).await);
            server.project_with_token("demo", json!({})).await;
            server
                .project_with_token("secret", json!({"public": false}))
                .await;
            let read = server.token("demo", "read").await;
            let started = Instant::now();
            // Four at once, no token, each answered without inflating; meanwhile the server
            // answers its health check.
            let bombs: Vec<_> = (0..4)
                .map(|i| {
                    let (server, bomb) = (server.clone(), bomb.clone());
                    let slug = if i % 2 == 0 { "demo" } else { "secret" };
                    tokio::spawn(async move {
                        (slug, put_gzip(&server, slug, None, bomb.to_vec()).await)
                    })
                })
                .collect();
            let health = server
                .http
                .get(server.url("/healthz"))
                .send()
                .await
                .unwrap();
            assert_eq!(health.status(), 200, "{db}");
            for b in bombs {
                let (slug, (status, content_type, problem)) = b.await.unwrap();
                // The public project: 401. The private one: the 404 of a missing project.
                let want = if slug == "demo" { 401 } else { 404 };
                assert_eq!(status, want, "{db} {slug}: {problem}");
                assert_eq!(content_type, "application/problem+json", "{db}");
            }
            let (status, _, problem) = put_gzip(&server, "demo", Some(&read), bomb.to_vec()).await;
            assert_eq!(status, 403, "{db}: {problem}");
            // Generous for a loaded 2-core machine; inflating 4 × 512 MiB takes far longer.
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "{db}: {:?}",
                started.elapsed()
            );
            let health = server
                .http
                .get(server.url("/healthz"))
                .send()
                .await
                .unwrap();
            assert_eq!(health.status(), 200, "{db}");

            // With a valid token the bomb is inflated only up to the route's 64 KiB.
            let (status, content_type, problem) = put_gzip(
                &server,
                "demo",
                Some(common::server::ADMIN_TOKEN),
                bomb.to_vec(),
            )
            .await;
            assert_eq!(status, 413, "{db}: {problem}");
            assert_eq!(content_type, "application/problem+json");
            assert_eq!(problem["title"], "Payload too large");
            assert_eq!(
                problem["detail"],
                "the request body is larger than 65536 bytes once decompressed"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn an_oversized_body_with_a_valid_token_is_a_413_naming_the_limit() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let s = seed(&server, "demo", true).await;
        // A valid-looking document, padded past 64 KiB: refused for its size, nothing stored.
        let padding = " ".repeat(SMALL_LIMIT);
        let body =
            format!("{{\"slo_profiles\": [{{\"name\": \"big\", \"ttft_ms\": 1}}]{padding}}}");
        let r = server
            .http
            .put(server.url("/api/v1/projects/demo/settings"))
            .bearer_auth(&s.write)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 413, "{db}");
        assert_eq!(r.headers()["content-type"], "application/problem+json");
        let problem: Value = r.json().await.unwrap();
        assert_eq!(problem["status"], 413);
        assert_eq!(
            problem["detail"], "the request body is larger than 65536 bytes",
            "{db}"
        );
        let (_, settings) = server.get("/api/v1/projects/demo/settings").await;
        assert_eq!(settings["slo_profiles"][0]["name"], "file", "{db}");

        // Every other small route too, whatever its body would have said.
        for r in write_routes(&s) {
            if r.path.ends_with("/runs") {
                continue;
            }
            let token = if r.admin_only { ADMIN_TOKEN } else { &s.write };
            let response = server
                .http
                .request(r.method.parse().unwrap(), server.url(&r.path))
                .bearer_auth(token)
                .header("content-type", "application/json")
                .body(format!("{{\"reason\": \"{}\"}}", "x".repeat(SMALL_LIMIT)))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 413, "{db}: {} {}", r.method, r.path);
        }
        // Uploads keep their 64 MiB: the seed's files were 225 KiB each, and a 1 MiB upload
        // is read (and refused for its content, not its size).
        let doc = json!({"run": {"commit": {"sha": "a".repeat(40)}},
            "files": [{"name": "x.json", "content": "y".repeat(1 << 20)}]});
        let (status, problem) = server.upload("demo", &s.upload, &doc).await;
        assert_eq!(status, 422, "{db}: {problem}");
    })
    .await;
}
