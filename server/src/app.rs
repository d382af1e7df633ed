//! Application state, router and serving loop.

use crate::storage::Store;
use axum::Router;
use std::future::Future;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Marks a request whose body was sent with `Content-Encoding: gzip` (the decompression layer
/// removes the header), so body errors can say that the fault is in the compressed body.
#[derive(Debug, Clone, Copy)]
pub struct GzipBody;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    /// The database.
    pub store: Store,
    /// SHA-256 (hex) of the admin token.
    pub admin_token_hash: Arc<String>,
    /// The address users reach the server at (`https://bench.example.com`, no trailing
    /// slash), for absolute links in reports and PR comments; `None`: taken from each
    /// request's `Host` (and `X-Forwarded-Proto`) header.
    pub public_url: Option<Arc<str>>,
    /// The durable analysis queue: inline permits and background workers
    /// ([`crate::analysis::jobs`]).
    pub analyzer: crate::analysis::jobs::Analyzer,
    /// Failed authentication per client address ([`crate::auth::throttle`]).
    pub auth_throttle: Arc<crate::auth::throttle::AuthThrottle>,
    /// How browser sessions are made: lifetime, `Secure` cookies ([`crate::pages::session`]).
    pub sessions: crate::pages::session::SessionSettings,
}

/// The whole application: API under `/api/v1`, pages, static assets, `/healthz`; every answer
/// with the security headers of [`crate::security`], every body within its route's limit
/// ([`crate::body_limit`]), the request and body timeouts of the default
/// [`ServeOptions`](crate::serve::ServeOptions).
pub fn router(state: AppState) -> Router {
    router_with(state, &crate::serve::ServeOptions::default())
}

/// [`router`] with the request and body timeouts of `options` ([`crate::timeouts`]).
pub fn router_with(state: AppState, options: &crate::serve::ServeOptions) -> Router {
    use tower_http::{
        catch_panic::CatchPanicLayer, decompression::RequestDecompressionLayer, trace::TraceLayer,
    };
    let app = Router::new()
        .merge(crate::api::routes())
        .merge(crate::pages::routes())
        .fallback(fallback)
        // Pages (the fallback's too) know their visitor; the API never reads the cookie.
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::pages::session::layer,
        ))
        // `Content-Encoding: gzip` bodies are inflated as they are read; any other encoding is
        // a 415 (a problem document under `/api/`, through the next layer).
        .layer(RequestDecompressionLayer::new().gzip(true))
        .layer(axum::middleware::from_fn(problems_for_api_errors))
        .layer(axum::middleware::map_request(mark_gzip_body))
        // Enforced where bodies are read (`ApiJson`), on the decompressed bytes, so a 413 is a
        // problem document too. Small by default; uploads raise it on their route.
        .layer(crate::body_limit::layer(
            crate::body_limit::DEFAULT_BODY_LIMIT_BYTES,
        ))
        // A stalled body fails where it is read (`ApiJson`: 408); a request over its time is
        // answered 503 here, inside the trace so that the log shows it.
        .layer(crate::timeouts::body_layer(options.body_timeout))
        .layer(axum::middleware::from_fn_with_state(
            options.request_timeout,
            crate::timeouts::request_deadline,
        ))
        // Before any handler, so a throttled address's token is never looked at.
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::auth::throttle::middleware,
        ))
        .layer(TraceLayer::new_for_http())
        .layer(CatchPanicLayer::new());
    // Outermost, so every answer carries them: errors, 404s and caught panics too.
    crate::security::layers()
        .fold(app, |app, layer| app.layer(layer))
        .with_state(state)
}

/// Unknown addresses: a problem document under `/api/`, an HTML page elsewhere.
async fn fallback(uri: axum::http::Uri) -> axum::response::Response {
    use axum::response::IntoResponse;
    if uri.path().starts_with("/api/") {
        crate::api::not_found(uri.path()).into_response()
    } else {
        crate::pages::PageError::NotFound(format!("There is no page at {}.", uri.path()))
            .into_response()
    }
}

/// Adds [`GzipBody`] to a request sent with `Content-Encoding: gzip`.
async fn mark_gzip_body(mut request: axum::extract::Request) -> axum::extract::Request {
    let gzip = request
        .headers()
        .get(axum::http::header::CONTENT_ENCODING)
        .is_some_and(|v| v.as_bytes() == b"gzip");
    if gzip {
        request.extensions_mut().insert(GzipBody);
    }
    request
}

/// Under `/api/`, turns every error answer that is not yet a problem document (axum's own
/// rejections of a query string or path segment that does not parse, 405 for a wrong method)
/// into one, keeping its status, its text as `detail`, and an `Allow` or `Accept-Encoding`
/// header. A 415 from the decompression layer names the encoding that is not supported.
async fn problems_for_api_errors(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    let is_api = request.uri().path().starts_with("/api/");
    let encoding = request
        .headers()
        .get(header::CONTENT_ENCODING)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let response = next.run(request).await;
    let status = response.status();
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| {
            v.as_bytes()
                .starts_with(crate::error::PROBLEM_JSON.as_bytes())
        });
    if !is_api || is_problem || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (parts, body) = response.into_parts();
    // Rejection texts are one line; anything longer is cut, not buffered.
    let text = axum::body::to_bytes(body, 16 * 1024)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    let detail = match (&encoding, parts.headers.get(header::ACCEPT_ENCODING)) {
        (Some(encoding), Some(_)) if status == StatusCode::UNSUPPORTED_MEDIA_TYPE => format!(
            "the request body's Content-Encoding `{encoding}` is not supported; \
             send it uncompressed or with `Content-Encoding: gzip`"
        ),
        _ if text.is_empty() => status.canonical_reason().unwrap_or("error").to_string(),
        _ => text,
    };
    let mut problem = crate::error::ApiError::Rejected { status, detail }.into_response();
    for name in [header::ALLOW, header::ACCEPT_ENCODING] {
        if let Some(value) = parts.headers.get(&name) {
            problem.headers_mut().insert(name, value.clone());
        }
    }
    problem
}

/// Serves the application on `listener` until `shutdown` completes, with the analysis
/// workers running meanwhile, under the default timeouts and connection limit ([`crate::serve::serve_with`] sets others).
/// Each request carries its peer's address (`ConnectInfo<SocketAddr>`), which the
/// failed-authentication throttle counts by.
///
/// # Errors
/// As [`crate::serve::serve_with`].
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    crate::serve::serve_with(
        listener,
        state,
        shutdown,
        crate::serve::ServeOptions::default(),
    )
    .await
}
