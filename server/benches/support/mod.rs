//! What the benchmarks share: a benchtrail server on a loopback port (in the benchmark's
//! process, or the release `benchtrail-server` binary in its own), requests with the admin
//! token, project set-up, and waiting until background work (change-point scans) is done.

#![allow(dead_code)] // each benchmark uses its own part

use benchtrail_server::app::{serve, AppState};
use benchtrail_server::auth::hash_token;
use benchtrail_server::storage::Store;
use serde_json::{json, Value};
use sqlx::{Connection, PgConnection};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// The admin token of benchmark servers (the binary takes tokens of at least 32 characters).
pub const ADMIN_TOKEN: &str = "bt_bench_admin_token_0123456789abcdef";

/// A running server on 127.0.0.1; stops when dropped.
pub struct Bench {
    pub base: String,
    pub http: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    /// The server's own process, when it is one (see [`Bench::spawn_binary`]).
    child: Option<std::process::Child>,
}

impl Drop for Bench {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Bench {
    pub async fn start(store: Store) -> Bench {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let state = AppState {
            store,
            admin_token_hash: Arc::new(hash_token(ADMIN_TOKEN)),
            public_url: None,
            analyzer: benchtrail_server::analysis::jobs::Analyzer::new(Default::default()),
            auth_throttle: Default::default(),
            sessions: Default::default(),
        };
        tokio::spawn(serve(listener, state, async {
            let _ = stopped.await;
        }));
        Bench {
            base,
            http: reqwest::Client::new(),
            stop: Some(stop),
            child: None,
        }
    }

    /// The release `benchtrail-server` binary in its own process (another build when
    /// `BENCHTRAIL_BENCH_SERVER` names one, to compare two), with its defaults, on
    /// `database_url` and an ephemeral loopback port; its log goes to `log` (`RUST_LOG`
    /// `info` unless set). Returns once it listens.
    ///
    /// # Panics
    /// When the binary exits before it listens (its log has why).
    pub fn spawn_binary(database_url: &str, log: &std::path::Path) -> Bench {
        use std::io::{BufRead, BufReader};
        let binary = std::env::var_os("BENCHTRAIL_BENCH_SERVER")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_benchtrail-server").into());
        let mut child = std::process::Command::new(binary)
            .env("DATABASE_URL", database_url)
            .env("BENCHTRAIL_BIND", "127.0.0.1:0")
            .env("BENCHTRAIL_ADMIN_TOKEN", ADMIN_TOKEN)
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or("info".into()),
            )
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("starting benchtrail-server");
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let mut file = std::fs::File::create(log).expect("creating the server log");
        let (tx, rx) = std::sync::mpsc::channel();
        // Reads the log to its end (a full pipe would stop the server), passing on the address.
        std::thread::spawn(move || {
            use std::io::Write;
            for line in stderr.lines().map_while(Result::ok) {
                if let Some(at) = line.find("listening on http://") {
                    let _ = tx.send(line[at + "listening on ".len()..].trim().to_string());
                }
                let _ = writeln!(file, "{line}");
            }
        });
        let base = rx
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("benchtrail-server did not listen; see {}", log.display()));
        Bench {
            base,
            http: reqwest::Client::new(),
            stop: None,
            child: Some(child),
        }
    }

    /// The server process's id (this process's when the server runs inside it).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(std::process::id(), |c| c.id())
    }

    /// CPU seconds (user + system) of the server's process so far.
    pub fn cpu_seconds(&self) -> f64 {
        process_cpu_seconds(self.pid())
    }

    /// Waits until the server's process is idle (under 5 % of one core over half a second),
    /// at most `limit`; returns the wait in seconds.
    pub async fn wait_idle(&self, limit: Duration) -> f64 {
        let start = Instant::now();
        while start.elapsed() < limit {
            let c = self.cpu_seconds();
            tokio::time::sleep(Duration::from_millis(500)).await;
            if self.cpu_seconds() - c < 0.025 {
                break;
            }
        }
        start.elapsed().as_secs_f64()
    }

    /// The server process's resident memory now and at its peak (`VmRSS`, `VmHWM`), MiB.
    pub fn rss_mib(&self) -> (f64, f64) {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
                .map_or(0.0, |kb| kb / 1024.0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }

    /// Sends a request with the admin token (or `token`) and a prepared JSON body; returns
    /// status, body and the round trip's wall time in ms.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<Vec<u8>>,
    ) -> (u16, Value, f64) {
        let mut r = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(token);
        if let Some(body) = body {
            r = r.header("content-type", "application/json").body(body);
        }
        let t = Instant::now();
        let response = r.send().await.unwrap();
        let status = response.status().as_u16();
        let bytes = response.bytes().await.unwrap();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            ms,
        )
    }

    pub async fn admin(&self, method: reqwest::Method, path: &str, body: Option<&Value>) -> Value {
        let (status, value, _) = self
            .send(
                method.clone(),
                path,
                ADMIN_TOKEN,
                body.map(|b| serde_json::to_vec(b).unwrap()),
            )
            .await;
        assert!(
            (200..300).contains(&status),
            "{method} {path}: {status} {value}"
        );
        value
    }

    /// Creates project `slug`; returns an upload token.
    pub async fn project(&self, slug: &str) -> String {
        let post = reqwest::Method::POST;
        self.admin(
            post.clone(),
            "/api/v1/projects",
            Some(&json!({"slug": slug})),
        )
        .await;
        let token = self
            .admin(
                post,
                &format!("/api/v1/projects/{slug}/tokens"),
                Some(&json!({"scope": "upload"})),
            )
            .await;
        token["token"].as_str().unwrap().to_string()
    }

    /// Polls `GET /api/v1/runs/{id}/verdict` of every run in `ids` until none is `pending`:
    /// the seconds that took, or `None` when some still were after `limit_secs`.
    pub async fn verdicts_settled(&self, ids: &[uuid::Uuid], limit_secs: u64) -> Option<f64> {
        let start = Instant::now();
        let mut pending: Vec<uuid::Uuid> = ids.to_vec();
        while start.elapsed() < Duration::from_secs(limit_secs) {
            let mut still = Vec::new();
            for id in pending {
                let path = format!("/api/v1/runs/{id}/verdict");
                let (status, body, _) = self
                    .send(reqwest::Method::GET, &path, ADMIN_TOKEN, None)
                    .await;
                if status != 200 || body["verdict"] == "pending" {
                    still.push(id);
                }
            }
            pending = still;
            if pending.is_empty() {
                return Some(start.elapsed().as_secs_f64());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        None
    }

    /// Changes project `slug`'s settings with `edit` (as an admin), before any upload.
    pub async fn configure(&self, slug: &str, edit: impl FnOnce(&mut Value)) {
        let path = format!("/api/v1/projects/{slug}/settings");
        let mut settings = self.admin(reqwest::Method::GET, &path, None).await;
        edit(&mut settings);
        self.admin(reqwest::Method::PUT, &path, Some(&settings))
            .await;
    }
}

/// How an upload ended once its 503s were retried ([`post_retrying`]).
pub enum Outcome {
    /// 200 or 201: the receipt.
    Acknowledged(Value),
    /// A 503 without `Retry-After`: nothing says when to retry.
    RefusedForGood,
    /// No answer, or another status: what happened (status and the body's first 200 bytes).
    Failed(String),
}

/// Posts the JSON `body` to `url` as `benchtrail upload` does: a 503 is retried after its
/// `Retry-After` seconds; returns the outcome and the problem body of every 503 met.
pub async fn post_retrying(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    body: &[u8],
) -> (Outcome, Vec<Value>) {
    let mut refusals = Vec::new();
    loop {
        let sent = http
            .post(url)
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body.to_vec())
            .send()
            .await;
        let r = match sent {
            Ok(r) => r,
            Err(e) => return (Outcome::Failed(format!("no answer: {e:?}")), refusals),
        };
        let status = r.status().as_u16();
        let retry_after = r
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        let text = r.text().await.unwrap_or_default();
        let json = || serde_json::from_str(&text).unwrap_or(Value::Null);
        match (status, retry_after) {
            (200 | 201, _) => return (Outcome::Acknowledged(json()), refusals),
            (503, wait) => {
                refusals.push(json());
                let Some(wait) = wait else {
                    return (Outcome::RefusedForGood, refusals);
                };
                tokio::time::sleep(Duration::from_secs(wait)).await;
            }
            (other, _) => {
                let head: String = text.chars().take(200).collect();
                return (Outcome::Failed(format!("{other}: {head}")), refusals);
            }
        }
    }
}

/// This process's CPU time (user + system) in seconds (see [`process_cpu_seconds`]).
pub fn cpu_seconds() -> f64 {
    process_cpu_seconds(std::process::id())
}

/// Process `pid`'s CPU time (user + system) in seconds, from `/proc/<pid>/stat` (Linux;
/// USER_HZ = 100); 0 elsewhere.
pub fn process_cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the command name (which may hold spaces) start at field 3 (state).
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15, i.e. indexes 11 and 12 after the state.
    (ticks(11) + ticks(12)) / 100.0
}

/// Waits until the process is idle (under 5 % of one core over half a second), at most
/// `limit`; returns the wait in seconds and the CPU seconds spent meanwhile.
pub async fn drain(limit: Duration) -> (f64, f64) {
    let start = Instant::now();
    let cpu0 = cpu_seconds();
    while start.elapsed() < limit {
        let c = cpu_seconds();
        tokio::time::sleep(Duration::from_millis(500)).await;
        if cpu_seconds() - c < 0.025 {
            break;
        }
    }
    (start.elapsed().as_secs_f64(), cpu_seconds() - cpu0)
}

/// A fresh Postgres database through the admin URL; returns its URL and name.
pub async fn create_postgres(admin_url: &str) -> (String, String) {
    let database = format!("bt_bench_{}", uuid::Uuid::new_v4().simple());
    let mut admin = PgConnection::connect(admin_url)
        .await
        .unwrap_or_else(|e| panic!("BENCHTRAIL_BENCH_DATABASE_URL={admin_url}: {e}"));
    sqlx::query(&format!("CREATE DATABASE \"{database}\""))
        .execute(&mut admin)
        .await
        .unwrap_or_else(|e| panic!("creating {database}: {e}"));
    let _ = admin.close().await;
    (with_database(admin_url, &database), database)
}

pub async fn drop_postgres(admin_url: &str, database: &str) {
    let mut admin = PgConnection::connect(admin_url).await.unwrap();
    sqlx::query(&format!(
        "DROP DATABASE IF EXISTS \"{database}\" WITH (FORCE)"
    ))
    .execute(&mut admin)
    .await
    .unwrap_or_else(|e| panic!("dropping {database}: {e}"));
    let _ = admin.close().await;
}

/// `admin_url` with its database name replaced by `database` (query parameters kept).
fn with_database(admin_url: &str, database: &str) -> String {
    let (base, query) = match admin_url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (admin_url, String::new()),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let host_part = match base[authority_start..].find('/') {
        Some(slash) => &base[..authority_start + slash],
        None => base,
    };
    format!("{host_part}/{database}{query}")
}

/// Prints one of issue 12's targets as every benchmark does, so that
/// `server/benches/issue12_targets.sh` can gather them from their outputs:
/// `{database}:   {target} {figure}: met` (or `NOT MET`), the target padded to 44 columns.
/// `figure` says what was measured and what it counts.
pub fn print_target(database: &str, target: &str, figure: &str, met: bool) {
    let verdict = if met { "met" } else { "NOT MET" };
    println!("{database}:   {target:<44} {figure}: {verdict}");
}
