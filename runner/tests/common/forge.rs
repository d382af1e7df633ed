//! A fake GitHub and GitLab comments API on loopback (a real HTTP server in a background
//! thread): the endpoints `benchtrail --github-comment` / `--gitlab-comment` use, paginated as
//! the real ones are (GitHub: `Link: rel="next"`; GitLab: `x-next-page`), recording every
//! request, and answering queued faults (a status with headers) before serving normally.

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

/// One request the fake received.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// `GET`, `POST`, `PATCH`, `PUT`.
    pub method: String,
    /// Path and query.
    pub uri: String,
    /// `Authorization` (GitHub) or `PRIVATE-TOKEN` (GitLab).
    pub auth: Option<String>,
    /// The JSON body's `body`, for writes.
    pub body: Option<String>,
}

/// A fault answered instead of the next request.
#[derive(Debug, Clone)]
pub struct Fault {
    /// The status.
    pub status: u16,
    /// Extra headers (`retry-after`, `x-ratelimit-remaining`, ...).
    pub headers: Vec<(&'static str, String)>,
}

#[derive(Default)]
struct Inner {
    /// Per pull/merge request: (id, body, system note).
    threads: BTreeMap<u64, Vec<(u64, String, bool)>>,
    seen: Vec<Seen>,
    faults: VecDeque<Fault>,
    next_id: u64,
    base: String,
    /// How long each request waits before it is served ([`FakeForge::slow`]).
    delay: std::time::Duration,
}

/// The fake forge.
#[derive(Clone)]
pub struct FakeForge {
    inner: Arc<Mutex<Inner>>,
    /// Base URL, e.g. `http://127.0.0.1:41234`: GitHub's API root; GitLab's is `{base}/api/v4`.
    pub base: String,
}

impl FakeForge {
    /// Starts it on 127.0.0.1:0.
    pub fn start() -> FakeForge {
        let inner = Arc::new(Mutex::new(Inner {
            next_id: 1000,
            ..Inner::default()
        }));
        let (tx, rx) = std::sync::mpsc::channel();
        let state = inner.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let base = format!("http://{}", listener.local_addr().unwrap());
                state.lock().unwrap().base = base.clone();
                tx.send(base).unwrap();
                let app = Router::new().fallback(handle).with_state(state);
                axum::serve(listener, app).await.unwrap();
            });
        });
        let base = rx.recv().unwrap();
        FakeForge { inner, base }
    }

    /// Adds `n` comments by others (and, for GitLab, `system` system notes) to thread `pr`.
    pub fn seed(&self, pr: u64, n: usize, system: usize) {
        let mut g = self.inner.lock().unwrap();
        for i in 0..n + system {
            g.next_id += 1;
            let id = g.next_id;
            let body = format!("comment {i} by someone else");
            g.threads.entry(pr).or_default().push((id, body, i >= n));
        }
    }

    /// Answers `fault` to the next request instead of serving it.
    pub fn fail_next(&self, status: u16, headers: &[(&'static str, &str)]) {
        self.inner.lock().unwrap().faults.push_back(Fault {
            status,
            headers: headers.iter().map(|(k, v)| (*k, v.to_string())).collect(),
        });
    }

    /// Makes every request wait `each` before it is served (a slow forge: what widens the
    /// window in which two posters could both find no comment).
    pub fn slow(&self, each: std::time::Duration) {
        self.inner.lock().unwrap().delay = each;
    }

    /// The requests received so far, and forgets them.
    pub fn take_seen(&self) -> Vec<Seen> {
        std::mem::take(&mut self.inner.lock().unwrap().seen)
    }

    /// The comments of thread `pr` that are not seeded: (id, body).
    pub fn ours(&self, pr: u64) -> Vec<(u64, String)> {
        let g = self.inner.lock().unwrap();
        g.threads
            .get(&pr)
            .map(|t| {
                t.iter()
                    .filter(|c| !c.1.ends_with("by someone else"))
                    .map(|c| (c.0, c.1.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

type Shared = Arc<Mutex<Inner>>;

async fn handle(State(state): State<Shared>, req: Request) -> Response {
    let method = req.method().clone();
    let uri = req.uri().clone();
    let auth = req
        .headers()
        .get("authorization")
        .or_else(|| req.headers().get("private-token"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let bytes: Bytes = axum::body::to_bytes(req.into_body(), 1 << 24)
        .await
        .unwrap();
    let body = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|v| v["body"].as_str().map(str::to_string));
    let delay = state.lock().unwrap().delay;
    tokio::time::sleep(delay).await;
    let mut g = state.lock().unwrap();
    g.seen.push(Seen {
        method: method.to_string(),
        uri: uri.to_string(),
        auth,
        body: body.clone(),
    });
    if let Some(f) = g.faults.pop_front() {
        let mut headers = HeaderMap::new();
        for (k, v) in &f.headers {
            headers.insert(
                HeaderName::from_static(k),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        let status = StatusCode::from_u16(f.status).unwrap();
        return (
            status,
            headers,
            axum::Json(json!({"message": format!("fake fault {}", f.status)})),
        )
            .into_response();
    }
    let path: Vec<&str> = uri.path().trim_matches('/').split('/').collect();
    let page: usize = uri
        .query()
        .unwrap_or_default()
        .split('&')
        .find_map(|kv| kv.strip_prefix("page="))
        .and_then(|p| p.parse().ok())
        .unwrap_or(1);
    let base = g.base.clone();
    match (method, path.as_slice()) {
        // GitHub: /repos/{o}/{r}/issues/{n}/comments
        (Method::GET, ["repos", o, r, "issues", n, "comments"]) => {
            let n: u64 = n.parse().unwrap();
            let all = g.threads.get(&n).cloned().unwrap_or_default();
            let items: Vec<Value> = all
                .iter()
                .skip((page - 1) * 100)
                .take(100)
                .map(|c| json!({"id": c.0, "body": c.1}))
                .collect();
            let mut headers = HeaderMap::new();
            if all.len() > page * 100 {
                let next = format!(
                    "<{base}/repos/{o}/{r}/issues/{n}/comments?per_page=100&page={}>; rel=\"next\"",
                    page + 1
                );
                headers.insert("link", HeaderValue::from_str(&next).unwrap());
            }
            (headers, axum::Json(Value::Array(items))).into_response()
        }
        (Method::POST, ["repos", _, _, "issues", n, "comments"]) => {
            create(&mut g, n.parse().unwrap(), body.unwrap_or_default())
        }
        (Method::PATCH, ["repos", _, _, "issues", "comments", id]) => {
            update(&mut g, id.parse().unwrap(), body.unwrap_or_default())
        }
        // GitLab: /api/v4/projects/{id}/merge_requests/{iid}/notes
        (Method::GET, ["api", "v4", "projects", _, "merge_requests", iid, "notes"]) => {
            let n: u64 = iid.parse().unwrap();
            let all = g.threads.get(&n).cloned().unwrap_or_default();
            let items: Vec<Value> = all
                .iter()
                .skip((page - 1) * 100)
                .take(100)
                .map(|c| json!({"id": c.0, "body": c.1, "system": c.2}))
                .collect();
            let next = if all.len() > page * 100 {
                (page + 1).to_string()
            } else {
                String::new()
            };
            let mut headers = HeaderMap::new();
            headers.insert("x-next-page", HeaderValue::from_str(&next).unwrap());
            (headers, axum::Json(Value::Array(items))).into_response()
        }
        (Method::POST, ["api", "v4", "projects", _, "merge_requests", iid, "notes"]) => {
            create(&mut g, iid.parse().unwrap(), body.unwrap_or_default())
        }
        (Method::PUT, ["api", "v4", "projects", _, "merge_requests", _, "notes", id]) => {
            update(&mut g, id.parse().unwrap(), body.unwrap_or_default())
        }
        _ => (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"message": "Not Found"})),
        )
            .into_response(),
    }
}

/// Appends a comment (or note) by us to thread `thread`: 201 with its id.
fn create(g: &mut Inner, thread: u64, body: String) -> Response {
    g.next_id += 1;
    let id = g.next_id;
    g.threads
        .entry(thread)
        .or_default()
        .push((id, body.clone(), false));
    (
        StatusCode::CREATED,
        axum::Json(json!({"id": id, "body": body})),
    )
        .into_response()
}

fn update(g: &mut Inner, id: u64, body: String) -> Response {
    for t in g.threads.values_mut() {
        if let Some(c) = t.iter_mut().find(|c| c.0 == id) {
            c.1 = body.clone();
            return axum::Json(json!({"id": id, "body": body})).into_response();
        }
    }
    (
        StatusCode::NOT_FOUND,
        axum::Json(json!({"message": "Not Found"})),
    )
        .into_response()
}
