//! What the benchmarks share: a benchtrail server on a loopback port, requests with the admin
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

/// The admin token of benchmark servers.
pub const ADMIN_TOKEN: &str = "bt_bench_admin_token";

/// A running server on 127.0.0.1; stops when dropped.
pub struct Bench {
    pub base: String,
    pub http: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Bench {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
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
        }
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

    /// Changes project `slug`'s settings with `edit` (as an admin), before any upload.
    pub async fn configure(&self, slug: &str, edit: impl FnOnce(&mut Value)) {
        let path = format!("/api/v1/projects/{slug}/settings");
        let mut settings = self.admin(reqwest::Method::GET, &path, None).await;
        edit(&mut settings);
        self.admin(reqwest::Method::PUT, &path, Some(&settings))
            .await;
    }
}

/// Process CPU time (user + system) in seconds, from `/proc/self/stat` (Linux; USER_HZ = 100);
/// 0 elsewhere.
pub fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
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
