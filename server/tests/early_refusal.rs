//! An upload without a valid token is refused from its request head, before its body is read:
//! a client that announces 60 MiB and sends a few bytes gets its 401 (or 403) at once, over a
//! raw loopback connection that never sends the rest.

use crate::common;

use common::db::for_each_store;
use common::server::TestServer;
use serde_json::json;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends the head of a 60 MiB upload and 10 bytes of it, then reads whatever the server
/// answers within `wait` (the connection stays open: the body never completes).
async fn partial_upload(server: &TestServer, token: Option<&str>, wait: Duration) -> String {
    let addr = server.base.trim_start_matches("http://");
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let head = format!(
        "POST /api/v1/projects/demo/runs HTTP/1.1\r\nHost: {addr}\r\n{auth}\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{{\"run\": {{",
        60 << 20
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    // Until the head and a body of the answer arrived, or `wait` passed.
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
async fn an_upload_without_a_valid_token_is_refused_before_its_body_is_read() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        server.project_with_token("demo", json!({})).await;
        let read = server.token("demo", "read").await;
        // Generous: the answer comes at once, and without the early check never at all.
        let wait = Duration::from_secs(20);
        let none = partial_upload(&server, None, wait).await;
        assert!(none.starts_with("HTTP/1.1 401"), "{db}: {none}");
        assert!(none.contains("application/problem+json"), "{db}: {none}");
        let wrong = partial_upload(&server, Some(&read), wait).await;
        assert!(wrong.starts_with("HTTP/1.1 403"), "{db}: {wrong}");
        // With an upload token the server does wait for the body: nothing within a second.
        let upload = server.token("demo", "upload").await;
        let waiting = partial_upload(&server, Some(&upload), Duration::from_secs(1)).await;
        assert_eq!(waiting, "", "{db}");
    })
    .await;
}
