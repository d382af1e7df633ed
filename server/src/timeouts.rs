//! Per-request time limits: the pause allowed between chunks of a request body (408) and the
//! time allowed for a whole request (503 with `Retry-After`). Their values come from
//! [`crate::serve::ServeOptions`]; the connection-level limits are in [`crate::serve`].

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use std::time::Duration;
use tower_http::timeout::{RequestBodyTimeoutLayer, TimeoutError};

/// The `Retry-After` (seconds) of a request that ran out of time: a retry of an upload is
/// idempotent and finds its run if it was stored before the time ran out.
pub const RETRY_AFTER_SECS: u64 = 10;

/// The body timeout of a request, as a request extension, so that the 408 problem can name it.
#[derive(Debug, Clone, Copy)]
pub struct BodyTimeout(pub Duration);

/// A layer failing a request body that pauses longer than `timeout` between two chunks (the
/// reader gets a [`TimeoutError`]; [`is_body_timeout`] recognizes it) and recording the value.
pub fn body_layer(timeout: Duration) -> (Extension<BodyTimeout>, RequestBodyTimeoutLayer) {
    (
        Extension(BodyTimeout(timeout)),
        RequestBodyTimeoutLayer::new(timeout),
    )
}

/// Whether reading a body failed because it paused longer than its [`BodyTimeout`]: a
/// [`TimeoutError`] anywhere in the chain of causes, including inside an `io::Error` (the
/// gzip decoder wraps the errors of the body it inflates in one).
pub fn is_body_timeout(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if e.is::<TimeoutError>() {
            return true;
        }
        if let Some(inner) = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            if is_body_timeout(inner) {
                return true;
            }
        }
        cause = e.source();
    }
    false
}

/// The 408 problem of a body that paused longer than `timeout`.
pub fn body_timeout_problem(timeout: Duration) -> crate::error::ApiError {
    crate::error::ApiError::Rejected {
        status: StatusCode::REQUEST_TIMEOUT,
        detail: format!(
            "the request body paused for more than {} between two chunks (the body timeout); \
             send it again without pausing",
            seconds(timeout)
        ),
    }
}

/// Middleware answering 503 with `Retry-After` when the rest of the stack takes longer than
/// `timeout` (the state) for a request: a problem document under `/api/`, text elsewhere. The
/// handler's future is dropped. Also closes the connection after every 408: the rest of that
/// request's body is still on the wire, so the connection cannot be reused.
pub async fn request_deadline(
    State(timeout): State<Duration>,
    request: Request,
    next: Next,
) -> Response {
    let is_api = request.uri().path().starts_with("/api/");
    let mut response = match tokio::time::timeout(timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            tracing::warn!(
                timeout_s = timeout.as_secs_f64(),
                "request timed out; answered 503"
            );
            timed_out(is_api, timeout)
        }
    };
    if response.status() == StatusCode::REQUEST_TIMEOUT {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// The answer to a request that ran out of time.
fn timed_out(is_api: bool, timeout: Duration) -> Response {
    let detail = format!(
        "the request took longer than {} (the request timeout) and was abandoned; \
         retry after {RETRY_AFTER_SECS} s (a retried upload is idempotent)",
        seconds(timeout)
    );
    let mut response = if is_api {
        crate::error::ApiError::Rejected {
            status: StatusCode::SERVICE_UNAVAILABLE,
            detail,
        }
        .into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, detail).into_response()
    };
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    response
}

/// `1.5 s`, `30 s`.
fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}
