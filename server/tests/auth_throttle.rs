//! Failed authentication is throttled per client address, through HTTP on loopback, on both
//! stores, with the production default of 30 failures per minute: the 31st guess from an
//! address is a 429 with `Retry-After`, answered without the token being looked at (a valid
//! token from that address gets the very same answer, so the 429 tells no guess from another),
//! while requests without a token, and every other address, are served as usual.
//!
//! Two client addresses on one machine: the server listens on 127.0.0.1, and the second
//! client binds its socket to 127.0.0.2 (all of 127/8 is loopback on Linux).

use crate::common;

use benchtrail_server::auth::throttle::{ThrottleLimits, DEFAULT_FAILURES_PER_MINUTE};
use common::db::for_each_store;
use common::server::TestServer;
use serde_json::{json, Value};
use std::net::IpAddr;

/// A client whose connections come from `ip`.
fn client_from(ip: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::from(ip))
        .build()
        .unwrap()
}

/// Status, `Retry-After`, `Content-Type` and body of `GET path` with an optional token.
async fn get(
    client: &reqwest::Client,
    server: &TestServer,
    path: &str,
    token: Option<&str>,
) -> (u16, Option<String>, Option<String>, String) {
    let mut request = client.get(server.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let r = request.send().await.unwrap();
    let header = |name: &str| {
        r.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    let (retry_after, content_type) = (header("retry-after"), header("content-type"));
    (
        r.status().as_u16(),
        retry_after,
        content_type,
        r.text().await.unwrap(),
    )
}

/// The `n`-th wrong guess: a well-formed token that was never issued.
fn guess(n: usize) -> String {
    format!("bt_{n:064x}")
}

#[tokio::test]
async fn the_31st_failed_guess_from_an_address_is_a_429_and_other_addresses_keep_working() {
    assert_eq!(DEFAULT_FAILURES_PER_MINUTE, 30);
    for_each_store(|db, store| async move {
        let server = TestServer::start_with_throttle(store, ThrottleLimits::default()).await;
        let token = server
            .project_with_token("priv", json!({"public": false}))
            .await;
        server.project_with_token("pub", json!({})).await;
        let (here, elsewhere) = (client_from([127, 0, 0, 1]), client_from([127, 0, 0, 2]));
        let path = "/api/v1/projects/priv";

        for n in 0..30 {
            let (status, retry_after, _, body) = get(&here, &server, path, Some(&guess(n))).await;
            assert_eq!((status, retry_after), (401, None), "{db}: guess {n}: {body}");
        }
        for n in 30..50 {
            let (status, retry_after, content_type, body) =
                get(&here, &server, path, Some(&guess(n))).await;
            assert_eq!(status, 429, "{db}: guess {n}: {body}");
            assert_eq!(retry_after.as_deref(), Some("2"), "{db}");
            assert_eq!(content_type.as_deref(), Some("application/problem+json"), "{db}");
            let problem: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(
                problem,
                json!({"type": "about:blank", "title": "Too Many Requests", "status": 429,
                       "detail": "too many failed authentications from this address: requests with a token are refused, unchecked, for 2 s (Retry-After)"}),
                "{db}"
            );
        }
        // Unchecked: a valid token from the throttled address gets the guesses' very answer.
        let wrong = get(&here, &server, path, Some(&guess(99))).await;
        let valid = get(&here, &server, path, Some(&token)).await;
        assert_eq!(valid, wrong, "{db}: a 429 must not tell a valid token from a guess");
        // Requests without a token are not throttled.
        let (status, _, _, body) = get(&here, &server, "/api/v1/projects/pub", None).await;
        assert_eq!(status, 200, "{db}: {body}");
        // Another address: its valid token works, and its own guesses are 401s.
        let (status, _, _, body) = get(&elsewhere, &server, path, Some(&token)).await;
        assert_eq!(status, 200, "{db}: {body}");
        let (status, _, _, _) = get(&elsewhere, &server, path, Some(&guess(0))).await;
        assert_eq!(status, 401, "{db}");

        // After Retry-After, one failure's worth has refilled: the valid token works again,
        // and the next guess empties the bucket at once.
        tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
        let (status, _, _, body) = get(&here, &server, path, Some(&token)).await;
        assert_eq!(status, 200, "{db}: {body}");
        assert_eq!(get(&here, &server, path, Some(&guess(100))).await.0, 401, "{db}");
        assert_eq!(get(&here, &server, path, Some(&guess(101))).await.0, 429, "{db}");
    })
    .await;
}

#[tokio::test]
async fn a_malformed_authorization_header_counts_as_a_failure_and_uploads_are_throttled_too() {
    for_each_store(|db, store| async move {
        let limits = ThrottleLimits {
            failures_per_minute: 2,
            ..ThrottleLimits::default()
        };
        let server = TestServer::start_with_throttle(store, limits).await;
        server.project_with_token("p", json!({})).await;
        let client = client_from([127, 0, 0, 1]);
        for _ in 0..2 {
            let r = client
                .get(server.url("/api/v1/projects/p"))
                .header("authorization", "Basic Zm9vOmJhcg==")
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 401, "{db}");
        }
        // Throttled: an upload too is refused, unchecked and unstored.
        let r = client
            .post(server.url("/api/v1/projects/p/runs"))
            .bearer_auth(guess(1))
            .json(&json!({"run": {"commit": {"sha": "f".repeat(40)}}, "files": []}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 429, "{db}");
        assert_eq!(
            r.headers()["retry-after"],
            "30",
            "{db}: one failure refills in 30 s at 2/min"
        );
        assert_eq!(
            server.get("/api/v1/projects/p/runs").await.1["items"],
            json!([]),
            "{db}"
        );
    })
    .await;
}
