//! What goes into a baseline: pinning a run as a series' baseline, and excluding a run from
//! every baseline. Both need a `write` token and recompute the project's analyses before
//! answering ([`crate::analysis::recompute_project`]).

use super::json::ApiJson;
use super::project_or_404;
use super::runs::readable_run;
use crate::analysis;
use crate::app::AppState;
use crate::auth::Bearer;
use crate::error::{ApiError, ApiResult, Problem};
use crate::storage::{BaselinePin, RunExclusion, Scope};
use axum::extract::{Path, State};
use axum::Json;
use serde::Deserialize;
use uuid::Uuid;

/// Body of `PUT /api/v1/projects/{project}/baselines/{series_id}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PinBody {
    /// A run of the project that has a value of the series.
    pub run_id: Uuid,
}

/// `PUT`: pins a run as the baseline of a series. The pin applies to the series' whole result
/// group (every metric of the same series key and cell): they are compared against the pinned
/// run's commit only, instead of the default-branch window.
#[utoipa::path(put, path = "/api/v1/projects/{project}/baselines/{series_id}", tag = "alerts",
    params(("project" = String, Path), ("series_id" = String, Path)), request_body = PinBody,
    security(("bearer" = [])),
    responses((status = 200, body = BaselinePin),
        (status = 401, description = "No token, or an unknown one: this needs a token of the project with `write`", body = Problem, content_type = "application/problem+json", headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token lacks `write`, or belongs to another project", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "The run is not of this project or lacks the series", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn pin(
    State(state): State<AppState>,
    bearer: Bearer,
    Path((slug, series_id)): Path<(String, String)>,
    ApiJson(body): ApiJson<PinBody>,
) -> ApiResult<Json<BaselinePin>> {
    let project = project_or_404(&state, &slug).await?;
    bearer
        .caller(&state)
        .await?
        .require(&project, Scope::Write)?;
    let series = state
        .store
        .series(&series_id)
        .await?
        .filter(|s| s.project == project.slug)
        .ok_or_else(|| ApiError::NotFound(format!("no series `{series_id}` in `{slug}`")))?;
    let invalid = |detail: String| ApiError::Invalid {
        pointer: "/run_id".into(),
        field: None,
        record: None,
        detail,
    };
    let run = state
        .store
        .run(body.run_id)
        .await?
        .filter(|r| r.summary.project == project.slug)
        .ok_or_else(|| invalid(format!("no run {} in project `{slug}`", body.run_id)))?;
    let has = run
        .results
        .iter()
        .any(|r| r.metrics.iter().any(|m| m.series_id == series.series_id));
    if !has {
        return Err(invalid(format!(
            "run {} has no value of series {series_id}",
            body.run_id
        )));
    }
    let pin = state
        .store
        .pin_baseline(project.id, &series_id, body.run_id)
        .await?;
    analysis::recompute_project(&state.store, &project).await?;
    tracing::info!(project = %slug, series = %series_id, run = %body.run_id, "baseline pinned");
    Ok(Json(pin))
}

/// Body of `POST /api/v1/runs/{id}/exclusion`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExclusionBody {
    /// Why the run must not be a baseline (e.g. "noisy neighbour on the node").
    pub reason: String,
}

/// `POST`: excludes a run from every baseline (and from being tested as a candidate).
#[utoipa::path(post, path = "/api/v1/runs/{id}/exclusion", tag = "alerts", params(("id" = Uuid, Path)),
    request_body = ExclusionBody, security(("bearer" = [])),
    responses((status = 200, body = RunExclusion),
        (status = 401, description = "No token, or an unknown one: this needs a token of the project with `write`", body = Problem, content_type = "application/problem+json", headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token lacks `write`, or belongs to another project", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Empty reason", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn exclude(
    State(state): State<AppState>,
    bearer: Bearer,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ExclusionBody>,
) -> ApiResult<Json<RunExclusion>> {
    let run = readable_run(&state, &bearer, &id).await?;
    let project = project_or_404(&state, &run.summary.project).await?;
    bearer
        .caller(&state)
        .await?
        .require(&project, Scope::Write)?;
    let reason = body.reason.trim();
    if reason.is_empty() {
        return Err(ApiError::Invalid {
            pointer: "/reason".into(),
            field: None,
            record: None,
            detail: "an exclusion needs a reason".into(),
        });
    }
    let exclusion = state.store.exclude_run(run.summary.id, reason).await?;
    analysis::recompute_project(&state.store, &project).await?;
    tracing::info!(run = %run.summary.id, "run excluded from baselines");
    Ok(Json(exclusion))
}
