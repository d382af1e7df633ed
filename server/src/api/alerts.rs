//! Alerts and verdicts: list and triage alerts, a run's verdict, analysis and alerts, a
//! series' alerts.
//!
//! Alerts are produced by [`crate::analysis`] (see its documentation for what runs when and
//! what the baseline is) and follow the lifecycle of [`crate::storage::AlertStatus`].
//! Reading needs read access to the project; `PATCH` needs a `write` token (or the admin token).

use super::access::{readable_project, AlertWriteAccess};
use super::json::ApiJson;
use super::query::ApiQuery;
use super::runs::readable_run_summary;
use super::{page_limit, project_or_404};
use crate::analysis::Verdict;
use crate::app::AppState;
use crate::auth::{Bearer, Caller};
use crate::error::{ApiError, ApiResult, Problem};
use crate::storage::{Alert, AlertFilter, AlertKind, AlertStatus, Page, StoredAnalysis};
use crate::triage::TriageError;
use axum::extract::{Path, State};
use axum::Json;
use serde::Deserialize;
use uuid::Uuid;

/// Query of `GET /api/v1/projects/{project}/alerts`.
#[derive(Debug, Deserialize)]
pub(super) struct ListAlerts {
    status: Option<String>,
    kind: Option<String>,
    metric: Option<String>,
    branch: Option<String>,
    commit: Option<String>,
    cursor: Option<String>,
    limit: Option<i64>,
}

fn bad(parameter: &str, detail: String) -> ApiError {
    ApiError::BadParameter {
        parameter: parameter.into(),
        detail,
    }
}

/// `GET /api/v1/projects/{project}/alerts`: newest first, `{"items": [...], "next_cursor"}`.
#[utoipa::path(get, path = "/api/v1/projects/{project}/alerts", tag = "alerts",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "project"}))),
    params(("project" = String, Path, description = "Project slug"),
        ("status" = Option<String>, Query, description = "open, acknowledged, dismissed, resolved"),
        ("kind" = Option<String>, Query, description = "regression, improvement, tradeoff, change_point, missing"),
        ("metric" = Option<String>, Query, description = "Headline metric, e.g. ttft"),
        ("branch" = Option<String>, Query),
        ("commit" = Option<String>, Query, description = "Candidate commit (full SHA): with kind and metric, the alerts of one group"),
        ("cursor" = Option<String>, Query),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "1–500, default 50")),
    responses((status = 200, body = Page<Alert>),
        (status = 400, description = "Unknown status or kind", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn list(
    State(state): State<AppState>,
    bearer: Bearer,
    Path(slug): Path<String>,
    ApiQuery(q): ApiQuery<ListAlerts>,
) -> ApiResult<Json<Page<Alert>>> {
    let project = readable_project(&state, &bearer.caller(&state).await?, &slug).await?;
    let limit = page_limit(q.limit)?;
    let status = q
        .status
        .as_deref()
        .map(|s| {
            AlertStatus::parse(s).ok_or_else(|| {
                bad(
                    "status",
                    format!("unknown status `{s}`: open, acknowledged, dismissed or resolved"),
                )
            })
        })
        .transpose()?;
    let kind = q
        .kind
        .as_deref()
        .map(|k| {
            AlertKind::parse(k).ok_or_else(|| {
                bad(
                    "kind",
                    format!("unknown kind `{k}`: regression, improvement, tradeoff, change_point or missing"),
                )
            })
        })
        .transpose()?;
    let filter = AlertFilter {
        status,
        kind,
        metric: q.metric,
        branch: q.branch,
        commit: q.commit,
        ..Default::default()
    };
    super::check_cursor(q.cursor.as_deref(), super::CursorKind::Sequence)?;
    Ok(Json(
        state
            .store
            .list_alerts(project.id, &filter, q.cursor.as_deref(), limit)
            .await?,
    ))
}

/// An alert the caller may read, or 404.
pub(super) async fn readable_alert(
    state: &AppState,
    caller: &Caller,
    id: &str,
) -> ApiResult<Alert> {
    let not_found = || ApiError::NotFound(format!("no alert `{id}`"));
    let uuid: Uuid = id.parse().map_err(|_| not_found())?;
    let alert = state.store.alert(uuid).await?.ok_or_else(not_found)?;
    let project = project_or_404(state, &alert.project).await?;
    caller.require_read(&project).map_err(|_| not_found())?;
    Ok(alert)
}

#[utoipa::path(get, path = "/api/v1/alerts/{id}", tag = "alerts",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "alert"}))), params(("id" = Uuid, Path)),
    responses((status = 200, body = Alert), (status = 404, body = Problem, content_type = "application/problem+json")))]
pub(super) async fn get_one(
    State(state): State<AppState>,
    bearer: Bearer,
    Path(id): Path<String>,
) -> ApiResult<Json<Alert>> {
    Ok(Json(
        readable_alert(&state, &bearer.caller(&state).await?, &id).await?,
    ))
}

/// A 422 naming `/reason` when a (trimmed) triage or exclusion reason is longer than
/// [`crate::triage::MAX_REASON_CHARS`].
pub(super) fn check_reason_length(reason: &str) -> ApiResult<()> {
    crate::triage::check_reason(reason).map_err(triage_error)
}

/// The API's answer to a refused triage: 422 with the pointer of the field at fault, 404 for an
/// alert that went away.
fn triage_error(e: TriageError) -> ApiError {
    let detail = e.to_string();
    let invalid = |pointer: &str| ApiError::Invalid {
        pointer: pointer.into(),
        field: None,
        record: None,
        detail: detail.clone(),
    };
    match e {
        TriageError::Status => invalid("/status"),
        TriageError::ReasonMissing | TriageError::ReasonTooLong { .. } => invalid("/reason"),
        TriageError::NotFound(_) => ApiError::NotFound(detail.clone()),
        TriageError::Storage(s) => s.into(),
    }
}

/// Body of `PATCH /api/v1/alerts/{id}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AlertPatch {
    /// `acknowledged`, `dismissed` or `open` (reopen). `resolved` is benchtrail's to set.
    pub status: String,
    /// Why; required for `dismissed`. At most 2000 characters.
    #[serde(default)]
    #[schema(max_length = 2000)]
    pub reason: Option<String>,
}

/// `PATCH /api/v1/alerts/{id}`: triage. Needs a `write` token of the alert's project.
#[utoipa::path(patch, path = "/api/v1/alerts/{id}", tag = "alerts",
    extensions(("x-benchtrail-access" = json!({"needs": "write", "of": "alert"}))), params(("id" = Uuid, Path)),
    request_body = AlertPatch,
    responses((status = 200, body = Alert),
        (status = 401, description = "No token, or an unknown one: this needs a token of the project with `write`", body = Problem, content_type = "application/problem+json", headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token lacks `write`, or belongs to another project", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Unknown status, dismissed without a reason, or a reason over 2000 characters", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such alert, or one of a private project the caller may not read (answered alike)", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body over 64 KiB (decompressed, for a gzip body)", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn patch(
    State(state): State<AppState>,
    AlertWriteAccess {
        alert,
        project,
        actor,
    }: AlertWriteAccess,
    ApiJson(body): ApiJson<AlertPatch>,
) -> ApiResult<Json<Alert>> {
    // An unknown word is refused like `resolved`: neither is a person's to set.
    let status =
        AlertStatus::parse(&body.status).ok_or_else(|| triage_error(TriageError::Status))?;
    let updated = crate::triage::triage(
        &state,
        &project,
        alert.id,
        status,
        body.reason.as_deref(),
        &actor,
    )
    .await
    .map_err(triage_error)?;
    Ok(Json(updated))
}

/// `GET /api/v1/runs/{id}/verdict`: `pass`, `warn` or `fail` with reasons, from the run's
/// analysis and the current status of its commit's alerts (a dismissed alert no longer counts).
#[utoipa::path(get, path = "/api/v1/runs/{id}/verdict", tag = "alerts",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "run"}))), params(("id" = Uuid, Path)),
    responses((status = 200, body = Verdict), (status = 404, body = Problem, content_type = "application/problem+json")))]
pub(super) async fn verdict(
    State(state): State<AppState>,
    bearer: Bearer,
    Path(id): Path<String>,
) -> ApiResult<Json<Verdict>> {
    let (run, project) = readable_run_summary(&state, &bearer.caller(&state).await?, &id).await?;
    Ok(Json(
        crate::analysis::verdict_of_run(&state.store, &project, &run).await?,
    ))
}

/// `GET /api/v1/runs/{id}/analysis`: the run's latest analysis: per result (series key and
/// cell), the baseline rule and commits, every series' state (`no_change`, `regression`,
/// `improvement`, `insufficient_data`, `missing`, `descriptive`, ...) with its comparison, the
/// findings, and effect-only findings where data was insufficient.
#[utoipa::path(get, path = "/api/v1/runs/{id}/analysis", tag = "alerts",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "run"}))), params(("id" = Uuid, Path)),
    responses((status = 200, body = StoredAnalysis), (status = 404, description = "No such run, or not analyzed", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn analysis(
    State(state): State<AppState>,
    bearer: Bearer,
    Path(id): Path<String>,
) -> ApiResult<Json<StoredAnalysis>> {
    let (run, _) = readable_run_summary(&state, &bearer.caller(&state).await?, &id).await?;
    state
        .store
        .run_analysis(run.id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::NotFound(format!("run `{id}` has not been analyzed")))
}

/// `GET /api/v1/runs/{id}/alerts`: alerts of the run's commit on its branch.
#[utoipa::path(get, path = "/api/v1/runs/{id}/alerts", tag = "alerts",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "run"}))), params(("id" = Uuid, Path)),
    responses((status = 200, body = Page<Alert>)))]
pub(super) async fn run_alerts(
    State(state): State<AppState>,
    bearer: Bearer,
    Path(id): Path<String>,
) -> ApiResult<Json<Page<Alert>>> {
    let (run, _) = readable_run_summary(&state, &bearer.caller(&state).await?, &id).await?;
    Ok(Json(Page {
        items: state.store.run_alerts(run.id).await?,
        next_cursor: None,
    }))
}

/// `GET /api/v1/projects/{project}/series/{series_id}/alerts`: alerts involving a series.
#[utoipa::path(get, path = "/api/v1/projects/{project}/series/{series_id}/alerts", tag = "alerts",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "project"}))),
    params(("project" = String, Path), ("series_id" = String, Path)),
    responses((status = 200, body = Page<Alert>)))]
pub(super) async fn series_alerts(
    State(state): State<AppState>,
    bearer: Bearer,
    Path((slug, series_id)): Path<(String, String)>,
) -> ApiResult<Json<Page<Alert>>> {
    let project = readable_project(&state, &bearer.caller(&state).await?, &slug).await?;
    let items = state
        .store
        .series_alerts(&series_id)
        .await?
        .into_iter()
        .filter(|a| a.project == project.slug)
        .collect();
    Ok(Json(Page {
        items,
        next_cursor: None,
    }))
}
