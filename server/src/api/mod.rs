//! The REST API under `/api/v1`, plus `/healthz` and `/readyz`.
//!
//! One small module per resource. List endpoints answer `{"items": [...], "next_cursor": ...}`;
//! errors are `application/problem+json` (see [`crate::error`]).

mod access;
mod alerts;
mod baselines;
mod compare;
mod configs;
pub mod contract;
pub mod json;
pub mod openapi;
mod projects;
mod query;
mod report;
pub(crate) mod run_results;
mod runs;
mod series;
mod settings;
mod tokens;

use crate::app::AppState;
use crate::error::{ApiError, ApiResult};
use crate::storage::Project;
use axum::{Json, Router};
use serde_json::Value;
use utoipa::OpenApi;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

/// Default and largest page size of list endpoints.
pub const DEFAULT_LIMIT: i64 = 50;
/// Largest page size a client may ask for.
pub const MAX_LIMIT: i64 = 500;

/// Every API route, and with it the OpenAPI document: the one list of handlers.
///
/// A route is added here, and only here, with `routes!(handler, ...)` (handlers of one path
/// together); its `#[utoipa::path]` carries the path, the method, the statuses specific to it
/// and its access rule, `extensions(("x-benchtrail-access" = json!({"needs": ..., "of": ...})))`
/// ([`contract::Access`]). [`contract::complete`] derives from that rule the security
/// requirement and the statuses every such route answers (401, 403, 404, 400, 413, 415, 503);
/// a route without it, or with one it does not know, panics when the router is built.
fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(projects::list, projects::create))
        .routes(routes!(projects::get_one))
        .routes(routes!(tokens::list, tokens::create))
        .routes(routes!(tokens::revoke))
        .routes(
            routes!(runs::list, runs::upload).layer(crate::body_limit::layer(
                crate::body_limit::UPLOAD_BODY_LIMIT_BYTES,
            )),
        )
        .routes(routes!(settings::get, settings::put))
        .routes(routes!(series::list))
        .routes(routes!(series::points))
        .routes(routes!(alerts::list))
        .routes(routes!(alerts::series_alerts))
        .routes(routes!(baselines::list))
        .routes(routes!(baselines::pin, baselines::unpin))
        .routes(routes!(alerts::get_one, alerts::patch))
        .routes(routes!(runs::get_one))
        .routes(routes!(alerts::verdict))
        .routes(routes!(alerts::analysis))
        .routes(routes!(report::report))
        .routes(routes!(compare::report))
        .routes(routes!(alerts::run_alerts))
        .routes(routes!(baselines::exclude, baselines::unexclude))
        .routes(routes!(runs::file))
        .routes(routes!(configs::get_one))
        .routes(routes!(vocabulary))
        .routes(routes!(openapi::openapi_json))
        .routes(routes!(openapi::upload_schema))
        .routes(routes!(openapi::result_schema))
        .routes(routes!(openapi::analysis_schema))
}

/// All API routes (the router of `api`; its document is [`openapi::document`]).
pub fn routes() -> Router<AppState> {
    let (router, doc) = api().split_for_parts();
    // Checks every operation's access rule now, at start-up, rather than at the first request
    // for the document.
    contract::complete(doc);
    router
}

/// The OpenAPI document of [`api`], completed by [`contract::complete`] (served, cached, by
/// [`openapi::document`]).
fn build_document() -> Value {
    contract::complete(api().into_openapi())
}

/// `GET /healthz` answer.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Health {
    /// Always `ok`.
    pub status: &'static str,
    /// The store: `sqlite` or `postgres`.
    pub database: crate::storage::Backend,
}

/// `GET /readyz` answer when ready.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Ready {
    /// Always `ready`.
    pub status: &'static str,
    /// The store: `sqlite` or `postgres`.
    pub database: crate::storage::Backend,
    /// The newest migration applied, equal to the newest one this server embeds.
    pub migration: i64,
    /// Analysis jobs queued (0 once everything stored is analyzed).
    pub queued_analyses: i64,
}

/// `GET /readyz` answer when not ready.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct NotReadyAnswer {
    /// Always `not_ready`.
    pub status: &'static str,
    /// The store: `sqlite` or `postgres`.
    pub database: crate::storage::Backend,
    /// The check that failed.
    pub detail: String,
}

/// `GET /readyz`: 200 when the database reads, takes a write and holds exactly this server's
/// migrations, with the number of analyses queued; else 503 with `Retry-After` and the check
/// that failed (what a load balancer or orchestrator routes on; `/healthz` is liveness only).
#[utoipa::path(get, path = "/readyz", tag = "service",
    extensions(("x-benchtrail-access" = json!({"needs": "nothing", "of": "none"}))),
    responses((status = 200, description = "Ready", body = Ready),
        (status = 503, description = "Not ready: the database is unavailable, fails a check or lacks this server's migrations", body = NotReadyAnswer,
            headers(("Retry-After" = u32, description = "Seconds to wait before asking again")))))]
async fn readyz(
    axum::extract::State(state): axum::extract::State<AppState>,
) -> axum::response::Response {
    use crate::storage::NotReady;
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    let database = state.store.backend();
    match state.store.readiness().await {
        Ok(r) => Json(Ready {
            status: "ready",
            database,
            migration: r.migration,
            queued_analyses: r.queued_analyses,
        })
        .into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "not ready");
            let detail = match &e {
                NotReady::Migrations { .. } => e.to_string(),
                NotReady::Store(s) if s.is_unavailable() => {
                    "the database is unavailable".to_string()
                }
                NotReady::Store(_) => {
                    "the database failed a check (see the server log)".to_string()
                }
            };
            (
                StatusCode::SERVICE_UNAVAILABLE,
                [(
                    header::RETRY_AFTER,
                    crate::storage::STORE_RETRY_AFTER_SECS.to_string(),
                )],
                Json(NotReadyAnswer {
                    status: "not_ready",
                    database,
                    detail,
                }),
            )
                .into_response()
        }
    }
}

/// Liveness: 200 while the process serves, whatever the database does (`/readyz` checks it).
#[utoipa::path(get, path = "/healthz", tag = "service",
    extensions(("x-benchtrail-access" = json!({"needs": "nothing", "of": "none"}))),
    responses((status = 200, description = "The process serves", body = Health)))]
async fn healthz(axum::extract::State(state): axum::extract::State<AppState>) -> Json<Health> {
    Json(Health {
        status: "ok",
        database: state.store.backend(),
    })
}

/// The metric vocabulary: name, label, unit, direction, kind, definition.
#[utoipa::path(get, path = "/api/v1/metrics", tag = "service",
    extensions(("x-benchtrail-access" = json!({"needs": "nothing", "of": "none"}))),
    responses((status = 200, description = "Every metric benchtrail knows, in display order (one page)", body = crate::storage::Page<benchtrail_core::metric::MetricDef>)))]
async fn vocabulary() -> Json<crate::storage::Page<benchtrail_core::metric::MetricDef>> {
    Json(crate::storage::Page {
        items: benchtrail_core::metric::VOCABULARY.to_vec(),
        next_cursor: None,
    })
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
