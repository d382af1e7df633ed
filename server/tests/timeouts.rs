//! No client can hold the server: a request head sent byte by byte, an idle keep-alive
//! connection, a stalled body and silent connections beyond the connection limit are all cut
//! off after their timeout, others are served meanwhile, and a server out of file descriptors
//! serves again once they are released. Raw TCP on loopback, every wait bounded.

use crate::common;

use benchtrail_server::serve::ServeOptions;
use common::db::for_each_store;
use common::server::TestServer;
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The header (and idle) timeout of these tests.
const HEADER_TIMEOUT: Duration = Duration::from_secs(2);
/// Slack on top of a timeout before a test gives up waiting: loaded CI machines are slow.
const SLACK: Duration = Duration::from_secs(3);

/// Short timeouts; the rest default.
fn options() -> ServeOptions {
    ServeOptions {
        header_timeout: HEADER_TIMEOUT,
        ..ServeOptions::default()
    }
}

fn addr(server: &TestServer) -> String {
    server.base.trim_start_matches("http://").to_string()
}

/// Reads until the peer closes the connection (end of stream or reset) or `within` passes.
/// Returns what was read and, when it closed, after how long.
async fn read_until_closed(
    tcp: &mut (impl AsyncRead + Unpin),
    within: Duration,
) -> (Vec<u8>, Option<Duration>) {
    let start = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let closed = tokio::time::timeout(within, async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return start.elapsed(),
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .ok();
    (got, closed)
}

/// Reads one response (head and `Content-Length` body) without waiting for the connection
/// to close; `None` if it does not arrive within `within`.
async fn read_response(tcp: &mut TcpStream, within: Duration) -> Option<(u16, String, Vec<u8>)> {
    tokio::time::timeout(within, async {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&got[..end]).to_string();
                let length = header(&head, "content-length")
                    .and_then(|v| v.parse::<usize>().ok())
                    .unwrap_or(0);
                if got.len() >= end + 4 + length {
                    let status = head[9..12].parse().unwrap();
                    return Some((status, head, got[end + 4..end + 4 + length].to_vec()));
                }
            }
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .ok()
    .flatten()
}

/// The value of header `name` (lower case) in a response head.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// `GET /healthz` on a new connection: its status, or `None` without an answer in `within`.
async fn healthz(addr: &str, within: Duration) -> Option<u16> {
    let mut tcp = TcpStream::connect(addr).await.ok()?;
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.ok()?;
    read_response(&mut tcp, within).await.map(|(s, _, _)| s)
}

#[tokio::test]
async fn a_head_sent_one_byte_a_second_is_cut_off_while_others_are_served() {
    for_each_store(|_db, store| async move {
        let server = TestServer::start_with(store, options()).await;
        let addr = addr(&server);
        let start = Instant::now();
        let tcp = TcpStream::connect(&addr).await.unwrap();
        let (mut read, mut write) = tcp.into_split();
        let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").into_bytes();
        let trickle = tokio::spawn(async move {
            for byte in request {
                if write.write_all(&[byte]).await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
        // Served meanwhile, on other connections.
        for _ in 0..3 {
            assert_eq!(healthz(&addr, SLACK).await, Some(200));
        }
        assert!(
            start.elapsed() < HEADER_TIMEOUT,
            "the other clients took too long to test"
        );
        let (answer, closed) = read_until_closed(&mut read, HEADER_TIMEOUT + SLACK).await;
        trickle.abort();
        let closed = closed.expect("the trickling connection is still open");
        assert!(
            closed >= HEADER_TIMEOUT - Duration::from_millis(100),
            "closed after {closed:?}, before the header timeout"
        );
        // Cut off, not answered: no request was ever complete.
        assert_eq!(String::from_utf8_lossy(&answer), "");
    })
    .await;
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_after_the_idle_timeout() {
    for_each_store(|_db, store| async move {
        let server = TestServer::start_with(store, options()).await;
        let addr = addr(&server);
        let mut tcp = TcpStream::connect(&addr).await.unwrap();
        let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n");
        // Two requests on the connection: it is kept alive.
        for _ in 0..2 {
            tcp.write_all(request.as_bytes()).await.unwrap();
            let (status, head, _) = read_response(&mut tcp, SLACK).await.expect("an answer");
            assert_eq!(status, 200);
            assert_eq!(header(&head, "connection"), None, "{head}");
        }
        let idle = Instant::now();
        let (answer, closed) = read_until_closed(&mut tcp, HEADER_TIMEOUT + SLACK).await;
        let closed = closed.expect("the idle connection is still open");
        assert!(
            closed >= HEADER_TIMEOUT - Duration::from_millis(100),
            "closed after {closed:?} idle, before the idle timeout"
        );
        assert!(idle.elapsed() >= closed, "measured from the last answer");
        assert_eq!(String::from_utf8_lossy(&answer), "");
    })
    .await;
}

#[tokio::test]
async fn a_body_trickled_slower_than_the_body_timeout_is_a_408_and_stores_nothing() {
    const BODY_TIMEOUT: Duration = Duration::from_secs(1);
    for_each_store(|_db, store| async move {
        let server = TestServer::start_with(
            store,
            ServeOptions {
                body_timeout: BODY_TIMEOUT,
                ..ServeOptions::default()
            },
        )
        .await;
        let token = server
            .project_with_token("slow", serde_json::json!({}))
            .await;
        let addr = addr(&server);
        let tcp = TcpStream::connect(&addr).await.unwrap();
        let (mut read, mut write) = tcp.into_split();
        let head = format!(
            "POST /api/v1/projects/slow/runs HTTP/1.1\r\nHost: {addr}\r\n\
             Authorization: Bearer {token}\r\nContent-Type: application/json\r\n\
             Content-Length: 1000\r\n\r\n"
        );
        write.write_all(head.as_bytes()).await.unwrap();
        // One byte every two body timeouts: each pause is too long.
        let trickle = tokio::spawn(async move {
            for byte in b"{\"run\": {\"commit\": {\"sha\": \"abcdef1\"}}".iter() {
                if write.write_all(&[*byte]).await.is_err() {
                    break;
                }
                tokio::time::sleep(BODY_TIMEOUT * 2).await;
            }
        });
        let (answer, closed) = read_until_closed(&mut read, BODY_TIMEOUT * 4 + SLACK).await;
        trickle.abort();
        assert!(closed.is_some(), "the connection stays open after the 408");
        let answer = String::from_utf8_lossy(&answer).to_string();
        let (head, body) = answer.split_once("\r\n\r\n").expect("an answer");
        assert!(head.starts_with("HTTP/1.1 408 "), "{head}");
        assert_eq!(
            header(head, "content-type"),
            Some("application/problem+json")
        );
        assert_eq!(header(head, "connection"), Some("close"));
        let problem: Value = serde_json::from_str(body).unwrap();
        assert_eq!(problem["status"], 408);
        assert_eq!(problem["title"], "Request Timeout");
        assert_eq!(
            problem["detail"],
            "the request body paused for more than 1 s between two chunks (the body timeout); \
             send it again without pausing"
        );
        let (status, runs) = server.get("/api/v1/projects/slow/runs").await;
        assert_eq!(status, 200);
        assert_eq!(runs["items"], serde_json::json!([]));
    })
    .await;
}

#[tokio::test]
async fn silent_connections_beyond_the_limit_time_out_and_a_new_client_is_served() {
    const LIMIT: usize = 4;
    const SILENT: usize = 10;
    for_each_store(|_db, store| async move {
        let server = TestServer::start_with(
            store,
            ServeOptions {
                max_connections: LIMIT,
                ..options()
            },
        )
        .await;
        let addr = addr(&server);
        let start = Instant::now();
        let mut silent = Vec::new();
        for _ in 0..SILENT {
            silent.push(TcpStream::connect(&addr).await.unwrap());
        }
        // The silent ones are accepted 4 at a time, each batch cut off after the header
        // timeout; the new client's connection waits behind them in the backlog.
        let rounds = SILENT.div_ceil(LIMIT) as u32 + 1;
        let status = healthz(&addr, HEADER_TIMEOUT * rounds + SLACK).await;
        let served_after = start.elapsed();
        assert_eq!(status, Some(200), "not served after {served_after:?}");
        // Only once the first silent ones had timed out: the limit held it back.
        assert!(
            served_after >= HEADER_TIMEOUT - Duration::from_millis(100),
            "served after {served_after:?}: the connection limit did not hold"
        );
        for (i, tcp) in silent.iter_mut().enumerate() {
            let (answer, closed) = read_until_closed(tcp, SLACK).await;
            assert!(closed.is_some(), "silent connection {i} is still open");
            assert_eq!(String::from_utf8_lossy(&answer), "", "{i}");
        }
    })
    .await;
}

/// The server under a limit of 64 open files, with more silent connections than that: it
/// runs out of descriptors (`accept` fails with EMFILE), keeps running, and serves again once
/// the header timeout has closed the silent connections. A separate process, for the limit.
#[tokio::test]
async fn out_of_file_descriptors_the_server_keeps_running_and_serves_again() {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    use std::sync::{Arc, Mutex};
    const NOFILE: libc::rlim_t = 64;
    let dir = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_benchtrail-server"));
    command
        .args(["--bind", "127.0.0.1:0", "--header-timeout", "2s"])
        .arg("--database-url")
        .arg(format!(
            "sqlite://{}/benchtrail.db?mode=rwc",
            dir.path().display()
        ))
        .env(
            "BENCHTRAIL_ADMIN_TOKEN",
            "bt_descriptor_test_admin_token_0123456789",
        )
        .env("RUST_LOG", "info")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    // SAFETY: only setrlimit (async-signal-safe) runs between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: NOFILE,
                rlim_max: NOFILE,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let mut child = Child(command.spawn().unwrap());
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let stderr = child.0.stderr.take().unwrap();
    let lines = log.clone();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if let Some(addr) = line.split("listening on http://").nth(1) {
                let _ = addr_tx.send(addr.trim().to_string());
            }
            lines.lock().unwrap().push(line);
        }
    });
    let outcome = async {
        let addr =
            tokio::task::spawn_blocking(move || addr_rx.recv_timeout(Duration::from_secs(60)))
                .await
                .unwrap()
                .expect("the server did not start");
        assert_eq!(healthz(&addr, SLACK).await, Some(200));
        // More connections than descriptors, all silent.
        let mut silent = Vec::new();
        for _ in 0..(2 * NOFILE) {
            silent.push(TcpStream::connect(&addr).await.unwrap());
        }
        let status = healthz(&addr, Duration::from_secs(40)).await;
        let exhausted = log
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("Too many open files"));
        (status, exhausted, silent.len())
    }
    .await;
    let running = child.0.try_wait().unwrap().is_none();
    drop(child);
    let (status, exhausted, _) = outcome;
    assert!(running, "the server exited: {:?}", log.lock().unwrap());
    assert!(
        exhausted,
        "never ran out of descriptors: {:?}",
        log.lock().unwrap()
    );
    assert_eq!(status, Some(200), "{:?}", log.lock().unwrap());
}

/// A child process, killed (and reaped) when dropped, also when the test fails.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
