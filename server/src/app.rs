//! Application state, router and serving loop.

use crate::storage::Store;
use axum::Router;
use std::future::Future;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Largest accepted request body: uploads carry whole result files, and `--save-detailed`
/// files of long runs reach tens of MiB. Larger bodies are answered with 413.
pub const BODY_LIMIT_BYTES: usize = 64 * 1024 * 1024;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    /// The database.
    pub store: Store,
    /// SHA-256 (hex) of the admin token.
    pub admin_token_hash: Arc<String>,
}

/// The whole application: API under `/api/v1`, pages, static assets, `/healthz`.
pub fn router(state: AppState) -> Router {
    use tower_http::{catch_panic::CatchPanicLayer, trace::TraceLayer};
    Router::new()
        .merge(crate::api::routes())
        .merge(crate::pages::routes())
        .fallback(fallback)
        // Enforced where bodies are read (`ApiJson`), so a 413 is a problem document too.
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT_BYTES))
        .layer(TraceLayer::new_for_http())
        .layer(CatchPanicLayer::new())
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

/// Serves the application on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown)
        .await
}
