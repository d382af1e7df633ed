//! HTML pages (askama templates from `web/templates`) and embedded static assets.

use crate::app::AppState;
use axum::Router;

/// Page and static-asset routes: `/`, `/projects/{project}`, `/projects/{project}/series/{series_id}`,
/// `/runs/{id}`, `/configs/{fingerprint}`, `/static/...`.
pub fn routes() -> Router<AppState> {
    Router::new()
}
