//! The REST API under `/api/v1`, plus `/healthz`.
//!
//! One small module per resource. List endpoints answer `{"items": [...], "next_cursor": ...}`;
//! errors are `application/problem+json` (see [`crate::error`]).

mod access;
mod alerts;
mod baselines;
mod configs;
pub mod json;
pub mod openapi;
mod projects;
mod query;
mod report;
mod runs;
mod series;
mod settings;

use crate::app::AppState;
use crate::error::{ApiError, ApiResult};
use crate::storage::Project;
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde_json::{json, Value};

/// Default and largest page size of list endpoints.
pub const DEFAULT_LIMIT: i64 = 50;
/// Largest page size a client may ask for.
pub const MAX_LIMIT: i64 = 500;

/// All API routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route(
            "/api/v1/projects",
            get(projects::list).post(projects::create),
        )
        .route("/api/v1/projects/{project}", get(projects::get_one))
        .route(
            "/api/v1/projects/{project}/tokens",
            post(projects::create_token),
        )
        .route(
            "/api/v1/projects/{project}/runs",
            get(runs::list)
                .post(runs::upload)
                .layer(crate::body_limit::layer(
                    crate::body_limit::UPLOAD_BODY_LIMIT_BYTES,
                )),
        )
        .route(
            "/api/v1/projects/{project}/settings",
            get(settings::get).put(settings::put),
        )
        .route("/api/v1/projects/{project}/series", get(series::list))
        .route(
            "/api/v1/projects/{project}/series/{series_id}",
            get(series::points),
        )
        .route("/api/v1/projects/{project}/alerts", get(alerts::list))
        .route(
            "/api/v1/projects/{project}/series/{series_id}/alerts",
            get(alerts::series_alerts),
        )
        .route("/api/v1/projects/{project}/baselines", get(baselines::list))
        .route(
            "/api/v1/projects/{project}/baselines/{series_id}",
            put(baselines::pin).delete(baselines::unpin),
        )
        .route(
            "/api/v1/alerts/{id}",
            get(alerts::get_one).patch(alerts::patch),
        )
        .route("/api/v1/runs/{id}", get(runs::get_one))
        .route("/api/v1/runs/{id}/verdict", get(alerts::verdict))
        .route("/api/v1/runs/{id}/analysis", get(alerts::analysis))
        .route("/api/v1/runs/{id}/report", get(report::report))
        .route("/api/v1/runs/{id}/alerts", get(alerts::run_alerts))
        .route(
            "/api/v1/runs/{id}/exclusion",
            post(baselines::exclude).delete(baselines::unexclude),
        )
        .route("/api/v1/runs/{id}/files/{n}", get(runs::file))
        .route("/api/v1/configs/{fingerprint}", get(configs::get_one))
        .route("/api/v1/metrics", get(vocabulary))
        .route("/api/v1/openapi.json", get(openapi::openapi_json))
        .route("/api/v1/schemas/upload.json", get(openapi::upload_schema))
        .route("/api/v1/schemas/result.json", get(openapi::result_schema))
        .route(
            "/api/v1/schemas/analysis.json",
            get(openapi::analysis_schema),
        )
}

/// 200 once the server is up; migrations are applied before the listener opens.
async fn healthz(axum::extract::State(state): axum::extract::State<AppState>) -> Json<Value> {
    Json(json!({"status": "ok", "database": state.store.backend()}))
}

/// The metric vocabulary: name, label, unit, direction, kind, definition.
async fn vocabulary() -> Json<Value> {
    Json(json!({"items": benchtrail_core::metric::VOCABULARY, "next_cursor": null}))
}

/// 404 for an unknown address under `/api/`, as a problem document.
pub(crate) fn not_found(path: &str) -> ApiError {
    ApiError::NotFound(format!("nothing at {path}"))
}

/// Looks a project up or answers 404.
pub(crate) async fn project_or_404(state: &AppState, slug: &str) -> ApiResult<Project> {
    state
        .store
        .project(slug)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no project `{slug}`")))
}

/// How a list endpoint's `next_cursor` looks, so a cursor that is not one is a 400 naming
/// the parameter instead of a silently empty page.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CursorKind {
    /// An upload sequence number (runs, alerts).
    Sequence,
    /// A series id (16 hex digits).
    SeriesId,
}

/// Checks a `cursor` query parameter.
pub(crate) fn check_cursor(cursor: Option<&str>, kind: CursorKind) -> ApiResult<()> {
    let Some(cursor) = cursor else { return Ok(()) };
    let valid = match kind {
        CursorKind::Sequence => cursor.parse::<u64>().is_ok(),
        CursorKind::SeriesId => cursor.len() == 16 && cursor.bytes().all(|b| b.is_ascii_hexdigit()),
    };
    if valid {
        Ok(())
    } else {
        Err(ApiError::BadParameter {
            parameter: "cursor".into(),
            detail: "not a cursor: pass the `next_cursor` of the previous page".into(),
        })
    }
}

/// Checks a `limit` query parameter.
pub(crate) fn page_limit(limit: Option<i64>) -> ApiResult<i64> {
    match limit {
        None => Ok(DEFAULT_LIMIT),
        Some(l) if (1..=MAX_LIMIT).contains(&l) => Ok(l),
        Some(_) => Err(ApiError::BadParameter {
            parameter: "limit".into(),
            detail: format!("limit must be between 1 and {MAX_LIMIT}"),
        }),
    }
}
