//! Test helpers: temporary directories, throw-away git repositories, running the built
//! `benchtrail` binary in a controlled environment, and a one-shot fake HTTP server.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The vLLM result file under test (copied from /work/shared/samples/generated/vllm/).
pub const FIXTURE: &str = "baseline_completions_c1_isl512_osl128.json";

/// Absolute path of a file of the repository's example history (examples/history: real
/// `vllm bench serve` files, see examples/README.md).
pub fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/history")
        .join(name)
}

/// Absolute path of a fixture.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A directory removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new empty directory under the system temp dir.
    pub fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!(
            "benchtrail-{tag}-{}-{n}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The directory holding `git` on this process's PATH.
pub fn git_dir() -> PathBuf {
    let path = std::env::var_os("PATH").expect("PATH is set");
    std::env::split_paths(&path)
        .find(|d| d.join("git").is_file())
        .expect("git is on PATH")
}

/// Runs git in `dir` with a fixed identity and committer date, ignoring user configuration.
pub fn git(dir: &Path, args: &[&str], date: &str) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A repository on branch `feature-x` with two commits:
/// `Add harness` (2026-01-01T10:00:00Z) and `Measure baseline` (committed at
/// 2026-01-02T04:04:05+01:00, i.e. 03:04:05Z). Returns the directory and both SHAs.
pub fn git_repo() -> (TempDir, String, String) {
    let dir = TempDir::new("repo");
    git(
        dir.path(),
        &["init", "-q", "-b", "feature-x"],
        "2026-01-01T10:00:00Z",
    );
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    git(dir.path(), &["add", "a.txt"], "2026-01-01T10:00:00Z");
    git(
        dir.path(),
        &["commit", "-q", "-m", "Add harness"],
        "2026-01-01T10:00:00Z",
    );
    let first = git(dir.path(), &["rev-parse", "HEAD"], "2026-01-01T10:00:00Z");
    std::fs::write(dir.path().join("a.txt"), "b\n").unwrap();
    git(
        dir.path(),
        &["commit", "-q", "-am", "Measure baseline\n\nLonger body."],
        "2026-01-02T04:04:05+01:00",
    );
    let second = git(
        dir.path(),
        &["rev-parse", "HEAD"],
        "2026-01-02T04:04:05+01:00",
    );
    (dir, first, second)
}

/// Runs the built `benchtrail` in `cwd` with only `PATH` (default: git's directory) and the
/// given variables set.
pub fn benchtrail(cwd: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_benchtrail"));
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", git_dir());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().expect("benchtrail runs")
}

/// stdout as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// stderr as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// One request received by [`FakeServer`].
#[derive(Debug, Clone)]
pub struct Request {
    /// `POST`.
    pub method: String,
    /// `/api/v1/...`.
    pub path: String,
    /// Headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body as sent (gzip-compressed when `Content-Encoding: gzip`).
    pub raw_body: Vec<u8>,
    /// The body, decompressed when it was sent with `Content-Encoding: gzip`.
    pub body: String,
}

impl Request {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap()
    }
}

/// An HTTP/1.1 server on 127.0.0.1 that answers each connection with the next canned
/// response `(status, content type, body)` and records the requests.
pub struct FakeServer {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    handle: JoinHandle<Vec<Request>>,
}

impl FakeServer {
    /// Starts serving `responses`, one connection each; gives up after 20 s without one.
    pub fn start(responses: Vec<(u16, &'static str, String)>) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let handle = std::thread::spawn(move || {
            let mut requests = Vec::new();
            for (status, content_type, body) in responses {
                let deadline = Instant::now() + Duration::from_secs(20);
                let mut stream = loop {
                    match listener.accept() {
                        Ok((s, _)) => break s,
                        Err(_) if Instant::now() < deadline => {
                            std::thread::sleep(Duration::from_millis(10))
                        }
                        Err(_) => return requests,
                    }
                };
                stream.set_nonblocking(false).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                requests.push(read_request(&mut stream));
                let reply = format!(
                    "HTTP/1.1 {status} Canned\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                stream.write_all(reply.as_bytes()).unwrap();
            }
            requests
        });
        FakeServer { url, handle }
    }

    /// Waits for the server thread and returns the requests it received.
    pub fn requests(self) -> Vec<Request> {
        self.handle.join().unwrap()
    }
}

fn read_request(stream: &mut std::net::TcpStream) -> Request {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    let header_end = loop {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "connection closed before the headers ended");
        data.extend_from_slice(&buf[..n]);
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8(data[..header_end].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap().split(' ');
    let (method, path) = (
        request_line.next().unwrap().to_string(),
        request_line.next().unwrap().to_string(),
    );
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map_or(0, |(_, v)| v.parse().unwrap());
    while data.len() < header_end + length {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "connection closed before the body ended");
        data.extend_from_slice(&buf[..n]);
    }
    let raw_body = data[header_end..header_end + length].to_vec();
    let gzip = headers
        .iter()
        .any(|(n, v)| n == "content-encoding" && v == "gzip");
    let body = if gzip {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&raw_body[..])
            .read_to_string(&mut text)
            .expect("a gzip body that inflates to UTF-8");
        text
    } else {
        String::from_utf8(raw_body.clone()).unwrap()
    };
    Request {
        method,
        path,
        headers,
        raw_body,
        body,
    }
}

pub mod forge;
pub mod real;
pub mod scripted;
