//! API
pub fn routes() -> axum::Router<crate::app::AppState> { axum::Router::new() }
