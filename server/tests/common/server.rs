//! A real benchtrail server on a loopback port for one test, with an admin token and a client.

use benchtrail_server::analysis::jobs::AnalyzerOptions;
use benchtrail_server::app::AppState;
use benchtrail_server::auth::hash_token;
use benchtrail_server::auth::throttle::{AuthThrottle, ThrottleLimits};
use benchtrail_server::pages::session::SessionSettings;
use benchtrail_server::serve::{serve_with, ServeOptions};
use benchtrail_server::storage::Store;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::sync::oneshot;

/// The admin token every test server accepts. Shorter than the binary's minimum
/// (`MIN_ADMIN_TOKEN_LEN`), which applies where a token is read from the environment or a
/// file; here the hash is put into the state directly.
pub const ADMIN_TOKEN: &str = "bt_test_admin_token";

/// Failed authentications per minute a [`TestServer::start`] allows each address: tests send
/// dozens of unknown tokens from 127.0.0.1 (`no_oracle`), which the production default would
/// throttle. The throttle's own tests use [`TestServer::start_with_throttle`].
pub const TEST_FAILURES_PER_MINUTE: u32 = 100_000;

/// A running server; stops when dropped.
pub struct TestServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// A plain HTTP client.
    pub http: reqwest::Client,
    /// The store behind the server.
    pub store: Store,
    stop: Option<oneshot::Sender<()>>,
}

/// The throttle of [`TestServer::start`]: failures counted only past
/// [`TEST_FAILURES_PER_MINUTE`].
fn test_limits() -> ThrottleLimits {
    ThrottleLimits {
        failures_per_minute: TEST_FAILURES_PER_MINUTE,
        ..ThrottleLimits::default()
    }
}

impl TestServer {
    /// Starts the app over `store` on 127.0.0.1:0, failed authentication throttled only past
    /// [`TEST_FAILURES_PER_MINUTE`].
    pub async fn start(store: Store) -> TestServer {
        Self::start_with(store, ServeOptions::default()).await
    }

    /// [`Self::start`] with other timeouts and connection limit.
    pub async fn start_with(store: Store, options: ServeOptions) -> TestServer {
        Self::start_full(store, options, AnalyzerOptions::default(), test_limits()).await
    }

    /// [`Self::start`] with other browser-session settings (lifetime, `Secure` cookies).
    pub async fn start_with_sessions(store: Store, sessions: SessionSettings) -> TestServer {
        Self::start_inner(
            store,
            ServeOptions::default(),
            AnalyzerOptions::default(),
            test_limits(),
            sessions,
        )
        .await
    }

    /// [`Self::start`] with another analysis queue (workers, inline permits, queue bound).
    pub async fn start_with_analyzer(store: Store, analyzer: AnalyzerOptions) -> TestServer {
        Self::start_full(store, ServeOptions::default(), analyzer, test_limits()).await
    }

    /// [`TestServer::start`] with the failed-authentication throttle's `limits`.
    pub async fn start_with_throttle(store: Store, limits: ThrottleLimits) -> TestServer {
        Self::start_full(
            store,
            ServeOptions::default(),
            AnalyzerOptions::default(),
            limits,
        )
        .await
    }

    async fn start_full(
        store: Store,
        options: ServeOptions,
        analyzer: AnalyzerOptions,
        limits: ThrottleLimits,
    ) -> TestServer {
        Self::start_inner(store, options, analyzer, limits, SessionSettings::default()).await
    }

    async fn start_inner(
        store: Store,
        options: ServeOptions,
        analyzer: AnalyzerOptions,
        limits: ThrottleLimits,
        sessions: SessionSettings,
    ) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let state = AppState {
            store: store.clone(),
            admin_token_hash: Arc::new(hash_token(ADMIN_TOKEN)),
            public_url: None,
            analyzer: benchtrail_server::analysis::jobs::Analyzer::new(analyzer),
            auth_throttle: Arc::new(AuthThrottle::new(limits)),
            sessions,
        };
        tokio::spawn(serve_with(
            listener,
            state,
            async {
                let _ = stopped.await;
            },
            options,
        ));
        TestServer {
            base,
            http: reqwest::Client::new(),
            store,
            stop: Some(stop),
        }
    }

    /// Waits (at most a minute) until nothing is queued: the re-analyses an upload out of
    /// order asks for, change-point scans. Panics when something still is.
    pub async fn drained(&self) {
        let (status, ready) =
            super::polling::drained(&self.http, &self.base, std::time::Duration::from_secs(60))
                .await;
        assert!(
            status == 200 && ready["queued_analyses"] == 0,
            "still queued after a minute: {status} {ready}"
        );
    }

    /// `base` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Creates a project with the admin token and returns an upload token for it.
    pub async fn project_with_token(&self, slug: &str, extra: Value) -> String {
        let mut body = json!({"slug": slug});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().cloned().unwrap_or_default());
        let r = self
            .http
            .post(self.url("/api/v1/projects"))
            .bearer_auth(ADMIN_TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());
        self.token(slug, "upload").await
    }

    /// A new token of `slug` with `scope`.
    pub async fn token(&self, slug: &str, scope: &str) -> String {
        let r = self
            .http
            .post(self.url(&format!("/api/v1/projects/{slug}/tokens")))
            .bearer_auth(ADMIN_TOKEN)
            .json(&json!({"scope": scope}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        r.json::<Value>().await.unwrap()["token"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// POSTs an upload document; returns status and JSON body.
    pub async fn upload(&self, slug: &str, token: &str, doc: &Value) -> (u16, Value) {
        let r = self
            .http
            .post(self.url(&format!("/api/v1/projects/{slug}/runs")))
            .bearer_auth(token)
            .json(doc)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// Sends `body` as JSON with `method` and a bearer `token`; returns status and JSON body.
    pub async fn send(&self, method: &str, path: &str, token: &str, body: &Value) -> (u16, Value) {
        let r = self
            .http
            .request(method.parse().unwrap(), self.url(path))
            .bearer_auth(token)
            .json(body)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// The alerts of project `slug` (`query`: `?status=open&kind=...`, or empty), first page.
    pub async fn alerts(&self, slug: &str, query: &str) -> Vec<Value> {
        let (status, page) = self
            .get(&format!("/api/v1/projects/{slug}/alerts{query}"))
            .await;
        assert_eq!(status, 200, "{page}");
        page["items"].as_array().unwrap().clone()
    }

    /// GETs JSON; returns status and body.
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let r = self.http.get(self.url(path)).send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// GETs a page (or any body) as text, whatever its status.
    pub async fn text(&self, path: &str) -> String {
        let r = self.http.get(self.url(path)).send().await.unwrap();
        r.text().await.unwrap()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Reads a file of the repository (`examples/...`, `testdata/...`).
pub fn repo_file(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// An upload document for one commit with the given files (format detected by the server).
pub fn upload_doc(sha: &str, commit_time: &str, files: &[&str]) -> Value {
    json!({
        "run": {"commit": {"sha": sha, "time": commit_time, "subject": format!("commit {sha}")}, "branch": "main"},
        "files": files.iter().map(|f| json!({"name": f.rsplit('/').next().unwrap(), "content": repo_file(f)})).collect::<Vec<_>>(),
    })
}
