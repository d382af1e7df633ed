//! A real HTTP server (axum on 127.0.0.1:0) answering a script: the n-th request gets the
//! n-th canned answer (status, headers, body), whatever its path; requests after the script
//! get a 599. Every request is recorded (method, path, headers, body inflated when gzip).

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One canned answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// Extra headers, e.g. `("retry-after", "1")`.
    pub headers: Vec<(&'static str, String)>,
    /// Content type of `body`.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
}

impl Answer {
    /// `status` with a JSON body.
    pub fn json(status: u16, body: serde_json::Value) -> Answer {
        Answer {
            status,
            headers: vec![],
            content_type: "application/json",
            body: body.to_string(),
        }
    }

    /// `status` with an RFC 9457 problem body, as the benchtrail server sends them.
    pub fn problem(status: u16, title: &str, detail: &str) -> Answer {
        Answer {
            status,
            headers: vec![],
            content_type: "application/problem+json",
            body: serde_json::json!({"type": "about:blank", "title": title, "status": status, "detail": detail})
                .to_string(),
        }
    }

    /// This answer with one more header.
    pub fn with_header(mut self, name: &'static str, value: &str) -> Answer {
        self.headers.push((name, value.to_string()));
        self
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Received {
    /// `GET`, `POST`.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// The body, inflated when sent with `Content-Encoding: gzip`.
    pub body: String,
    /// When it arrived.
    pub at: Instant,
}

impl Received {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap()
    }
}

#[derive(Default)]
struct State {
    script: Vec<Answer>,
    received: Vec<Received>,
}

/// The running server; it lives until the test process ends.
pub struct Scripted {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl Scripted {
    /// Starts answering `script`.
    pub fn start(script: Vec<Answer>) -> Scripted {
        let state = Arc::new(Mutex::new(State {
            script,
            received: vec![],
        }));
        let shared = state.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(format!("http://{}", listener.local_addr().unwrap()))
                    .unwrap();
                let app = axum::Router::new().fallback(
                    move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                        let shared = shared.clone();
                        async move { answer(&shared, method, uri, headers, body) }
                    },
                );
                axum::serve(listener, app).await.unwrap();
            });
        });
        Scripted {
            url: rx.recv().unwrap(),
            state,
        }
    }

    /// The requests received so far.
    pub fn received(&self) -> Vec<Received> {
        self.state.lock().unwrap().received.clone()
    }
}

fn answer(
    state: &Mutex<State>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let gzip = headers
        .get("content-encoding")
        .is_some_and(|v| v.as_bytes() == b"gzip");
    let body = if gzip {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&body[..])
            .read_to_string(&mut text)
            .unwrap();
        text
    } else {
        String::from_utf8(body.to_vec()).unwrap()
    };
    let mut state = state.lock().unwrap();
    let n = state.received.len();
    state.received.push(Received {
        method: method.to_string(),
        path: uri
            .path_and_query()
            .map_or(uri.path().to_string(), |p| p.to_string()),
        body,
        at: Instant::now(),
    });
    let Some(a) = state.script.get(n).cloned() else {
        return (StatusCode::from_u16(599).unwrap(), "beyond the script").into_response();
    };
    let mut response = (
        StatusCode::from_u16(a.status).unwrap(),
        [("content-type", a.content_type)],
        a.body,
    )
        .into_response();
    for (name, value) in a.headers {
        response.headers_mut().insert(name, value.parse().unwrap());
    }
    response
}
