//! A real benchtrail server (SQLite, loopback HTTP) with one public project and its upload
//! token, created through the built `benchtrail` binary.

use super::{benchtrail, stderr, stdout, TempDir};
use benchtrail_server::analysis::jobs::AnalyzerOptions;
use benchtrail_server::app::{serve, AppState};
use benchtrail_server::auth::hash_token;
use benchtrail_server::storage::Store;
use std::sync::Arc;

/// The admin token of every [`RealProject`] server.
pub const ADMIN: &str = "bt_real_admin";

/// Starts a real server (SQLite in `data`, admin token `admin`) on 127.0.0.1:0 in a
/// background thread living until the test process ends; returns its base URL.
pub fn start_server(data: &TempDir, admin: &str) -> String {
    start_server_with(data, admin, AnalyzerOptions::default())
}

/// [`start_server`] with another analysis queue (e.g. no workers and no inline analysis:
/// every upload stays `pending`).
pub fn start_server_with(data: &TempDir, admin: &str, analyzer: AnalyzerOptions) -> String {
    let url = format!("sqlite://{}/bt.db", data.path().display());
    let admin_token_hash = Arc::new(hash_token(admin));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async move {
            let store = Store::connect(&url).await.unwrap();
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(format!("http://{}", listener.local_addr().unwrap()))
                .unwrap();
            let state = AppState {
                store,
                admin_token_hash,
                public_url: None,
                analyzer: benchtrail_server::analysis::jobs::Analyzer::new(analyzer),
                auth_throttle: Default::default(),
                sessions: Default::default(),
            };
            // `serve` runs the analysis workers too.
            serve(listener, state, std::future::pending())
                .await
                .unwrap();
        });
    });
    rx.recv().unwrap()
}

/// A server on 127.0.0.1:0 (in a background thread, living until the test process ends) and
/// a project `p` on it.
pub struct RealProject {
    /// Base URL, e.g. `http://127.0.0.1:41234`.
    pub base: String,
    /// An upload token of `p`.
    pub token: String,
    _data: TempDir,
}

impl RealProject {
    /// Starts the server and creates project `p` and its upload token.
    pub fn start(tag: &str) -> RealProject {
        Self::start_with(tag, AnalyzerOptions::default())
    }

    /// [`RealProject::start`] with another analysis queue.
    pub fn start_with(tag: &str, analyzer: AnalyzerOptions) -> RealProject {
        let data = TempDir::new(&format!("{tag}-data"));
        let base = start_server_with(&data, ADMIN, analyzer);
        let env = [("BENCHTRAIL_URL", base.as_str())];
        let out = benchtrail(
            data.path(),
            &["project", "create", "p", "--token", ADMIN],
            &env,
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let out = benchtrail(
            data.path(),
            &["token", "create", "--project", "p", "--token", ADMIN],
            &env,
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let token = stdout(&out).lines().last().unwrap().to_string();
        RealProject {
            base,
            token,
            _data: data,
        }
    }

    /// `GET path` on the server: the JSON answer.
    pub fn get(&self, path: &str) -> serde_json::Value {
        reqwest::blocking::get(format!("{}{path}", self.base))
            .unwrap()
            .json()
            .unwrap()
    }
}
