//! Series: listing with filters, and the points of one series on a branch.

use super::access::readable_project;
use super::page_limit;
use super::query::ApiQuery;
use crate::app::AppState;
use crate::auth::Bearer;
use crate::error::{ApiError, ApiResult, Problem};
use crate::storage::{Page, SeriesFilter, SeriesInfo, SeriesPoint};
use axum::extract::{Path, State};
use axum::response::IntoResponse;
use axum::Json;
use serde::{Deserialize, Serialize};

/// Query of `GET /api/v1/projects/{project}/series`.
#[derive(Debug, Deserialize)]
pub(super) struct ListSeries {
    accelerator: Option<String>,
    model: Option<String>,
    quantization: Option<String>,
    cell: Option<String>,
    metric: Option<String>,
    stat: Option<String>,
    cursor: Option<String>,
    limit: Option<i64>,
}

#[utoipa::path(get, path = "/api/v1/projects/{project}/series", tag = "series",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "project"}))),
    params(("project" = String, Path), ("accelerator" = Option<String>, Query), ("model" = Option<String>, Query), ("quantization" = Option<String>, Query),
        ("cell" = Option<String>, Query, description = "Substring of the cell key"), ("metric" = Option<String>, Query), ("stat" = Option<String>, Query),
        ("cursor" = Option<String>, Query), ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "1–500, default 50")),
    responses((status = 200, body = Page<SeriesInfo>)))]
pub(super) async fn list(
    State(state): State<AppState>,
    bearer: Bearer,
    Path(slug): Path<String>,
    ApiQuery(q): ApiQuery<ListSeries>,
) -> ApiResult<Json<Page<SeriesInfo>>> {
    let project = readable_project(&state, &bearer.caller(&state).await?, &slug).await?;
    if let Some(m) = q
        .metric
        .as_deref()
        .filter(|m| benchtrail_core::metric::lookup(m).is_none())
    {
        return Err(ApiError::BadParameter {
            parameter: "metric".into(),
            detail: format!("unknown metric `{m}`"),
        });
    }
    let stat = match q.stat.as_deref() {
        Some(s) => Some(
            s.parse::<benchtrail_core::Stat>()
                .map_err(|e| ApiError::BadParameter {
                    parameter: "stat".into(),
                    detail: e.to_string(),
                })?
                .to_string(),
        ),
        None => None,
    };
    let filter = SeriesFilter {
        accelerator: q.accelerator,
        model: q.model,
        quantization: q.quantization,
        cell: q.cell,
        metric: q.metric,
        stat,
    };
    let limit = page_limit(q.limit)?;
    super::check_cursor(q.cursor.as_deref(), super::CursorKind::SeriesId)?;
    Ok(Json(
        state
            .store
            .list_series(project.id, &filter, q.cursor.as_deref(), limit)
            .await?,
    ))
}

/// Query of `GET /api/v1/projects/{project}/series/{series_id}`.
#[derive(Debug, Deserialize)]
pub(super) struct PointsQuery {
    branch: Option<String>,
}

/// A series with its points on one branch, in commit order.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SeriesPoints {
    /// The series.
    pub series: SeriesInfo,
    /// The branch the points are from.
    pub branch: String,
    /// The points.
    pub points: Vec<SeriesPoint>,
}

#[utoipa::path(get, path = "/api/v1/projects/{project}/series/{series_id}", tag = "series",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "project"}))),
    params(("project" = String, Path), ("series_id" = String, Path), ("branch" = Option<String>, Query, description = "Default: the project's default branch")),
    responses((status = 200, body = SeriesPoints), (status = 404, body = Problem, content_type = "application/problem+json")))]
pub(super) async fn points(
    State(state): State<AppState>,
    bearer: Bearer,
    Path((slug, series_id)): Path<(String, String)>,
    ApiQuery(q): ApiQuery<PointsQuery>,
) -> ApiResult<axum::response::Response> {
    let caller = bearer.caller(&state).await?;
    // The series is looked up beside the project (two round trips at once on Postgres); it is
    // shown only once the caller may read the project, and only if it is that project's.
    let (project, series) = tokio::try_join!(readable_project(&state, &caller, &slug), async {
        Ok(state.store.series(&series_id).await?)
    })?;
    let series = series
        .filter(|s| s.project == project.slug)
        .ok_or_else(|| {
            ApiError::NotFound(format!("no series `{series_id}` in project `{slug}`"))
        })?;
    let branch = q.branch.unwrap_or(project.default_branch);
    let points = state.store.series_points(&series_id, &branch).await?;
    // Written into a buffer of about its final size (a point is 250–350 bytes): `Json` starts
    // from 128 bytes and copies a long history's half megabyte a dozen times as it grows.
    let mut body = Vec::with_capacity(1024 + points.len() * 320);
    let response = SeriesPoints {
        series,
        branch,
        points,
    };
    serde_json::to_writer(&mut body, &response)
        .map_err(|e| ApiError::Internal(format!("series points as JSON: {e}")))?;
    Ok((
        [(
            axum::http::header::CONTENT_TYPE,
            axum::http::HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response())
}
