//! What goes into a baseline: pinning a run as a series' baseline, and excluding a run from
//! every baseline, and undoing either. Changes need a `write` token and recompute the
//! project's analyses before answering ([`crate::analysis::recompute_project`]); the list of
//! pins is readable like the project.

use super::access::{readable_project, RunWriteAccess, WriteAccess};
use super::json::ApiJson;
use crate::app::AppState;
use crate::auth::Bearer;
use crate::error::{ApiError, ApiResult, Problem};
use crate::storage::{BaselinePin, Page, RunExclusion};
use axum::extract::{Path, State};
use axum::http::StatusCode;
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
/// run's commit only, instead of the default-branch window. The run must be a valid baseline:
/// not excluded, and not invalid by its own health (too many failed or too few completed
/// requests under the project's detection settings): such a run is no baseline, so pinning
/// it is refused (422).
#[utoipa::path(put, path = "/api/v1/projects/{project}/baselines/{series_id}", tag = "alerts",
    extensions(("x-benchtrail-access" = json!({"needs": "write", "of": "project"}))),
    params(("project" = String, Path), ("series_id" = String, Path)), request_body = PinBody,

    responses((status = 200, body = BaselinePin),
        (status = 401, description = "No token, or an unknown one: this needs a token of the project with `write`", body = Problem, content_type = "application/problem+json", headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token lacks `write`, or belongs to another project", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "The run is not of this project, lacks the series, is excluded from baselines, or is not valid by its own health (`pointer` `/run_id`)", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such project or series, or a private project the caller may not read (answered alike)", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body over 64 KiB (decompressed, for a gzip body)", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn pin(
    State(state): State<AppState>,
    WriteAccess(project): WriteAccess,
    Path((slug, series_id)): Path<(String, String)>,
    ApiJson(body): ApiJson<PinBody>,
) -> ApiResult<Json<BaselinePin>> {
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
    if let Some(exclusion) = &run.exclusion {
        return Err(invalid(format!(
            "run {} is excluded from baselines ({}), so it cannot be one; remove its exclusion \
             first (DELETE /api/v1/runs/{}/exclusion) or pin another run",
            body.run_id, exclusion.reason, body.run_id
        )));
    }
    // The run's health in this group (the counts of its results of the series' cell); a pin
    // needs at least one valid value.
    let det = state.store.settings(&project).await?.settings.detection;
    // The run's own commit is all it needs: reading the series' whole history here would
    // make pinning cost more the longer the project runs.
    let history = state
        .store
        .series_history_at(
            project.id,
            std::slice::from_ref(&series_id),
            Some(std::slice::from_ref(&run.summary.commit_sha)),
            &Default::default(),
        )
        .await?;
    let verdicts: Vec<Option<String>> = history
        .iter()
        .filter(|p| p.run_id == body.run_id)
        .map(|p| det.invalid_run(p.completed, p.failed, p.num_prompts))
        .collect();
    if !verdicts.is_empty() && verdicts.iter().all(Option::is_some) {
        let why = verdicts[0].clone().unwrap_or_default();
        return Err(invalid(format!(
            "run {} is not valid ({why}), so it cannot be a baseline; pin another run",
            body.run_id
        )));
    }
    let pin = state
        .analyzer
        .recompute_after(
            &state.store,
            &project,
            state
                .store
                .pin_baseline(project.id, &series_id, body.run_id),
        )
        .await?;
    tracing::info!(project = %slug, series = %series_id, run = %body.run_id, "baseline pinned");
    Ok(Json(pin))
}

/// Body of `POST /api/v1/runs/{id}/exclusion`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExclusionBody {
    /// Why the run must not be a baseline (e.g. "noisy neighbour on the node"); 1–2000
    /// characters, not only spaces.
    #[schema(pattern = "\\S", max_length = 2000)]
    pub reason: String,
}

/// `POST`: excludes a run from every baseline (and from being tested as a candidate).
#[utoipa::path(post, path = "/api/v1/runs/{id}/exclusion", tag = "alerts",
    extensions(("x-benchtrail-access" = json!({"needs": "write", "of": "run"}))), params(("id" = Uuid, Path)),
    request_body = ExclusionBody,
    responses((status = 200, body = RunExclusion),
        (status = 401, description = "No token, or an unknown one: this needs a token of the project with `write`", body = Problem, content_type = "application/problem+json", headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token lacks `write`, or belongs to another project", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The run is a pinned baseline: unpin it first", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Empty reason, or one over 2000 characters", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such run, or one of a private project the caller may not read (answered alike)", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body over 64 KiB (decompressed, for a gzip body)", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn exclude(
    State(state): State<AppState>,
    RunWriteAccess { run, project }: RunWriteAccess,
    ApiJson(body): ApiJson<ExclusionBody>,
) -> ApiResult<Json<RunExclusion>> {
    let reason = body.reason.trim();
    if reason.is_empty() {
        return Err(ApiError::Invalid {
            pointer: "/reason".into(),
            field: None,
            record: None,
            detail: "an exclusion needs a reason".into(),
        });
    }
    super::alerts::check_reason_length(reason)?;
    // An excluded run cannot be a baseline, so a pinned one would leave its group with none.
    let pins = state.store.baseline_pins(project.id).await?;
    if let Some(pin) = pins.values().find(|p| p.run_id == run.summary.id) {
        return Err(ApiError::Conflict(format!(
            "run {} is the pinned baseline of series {}: unpin it first \
             (DELETE /api/v1/projects/{}/baselines/{})",
            run.summary.id, pin.series_id, project.slug, pin.series_id
        )));
    }
    let exclusion = state
        .analyzer
        .recompute_after(
            &state.store,
            &project,
            state.store.exclude_run(run.summary.id, reason),
        )
        .await?;
    tracing::info!(run = %run.summary.id, "run excluded from baselines");
    Ok(Json(exclusion))
}

/// `DELETE`: removes the pin of a series, so its group is compared against the default
/// branch again. 404 when the series has no pin (the detail names the series of its group
/// that holds one, if any: a pin is removed through the series it was made on).
#[utoipa::path(delete, path = "/api/v1/projects/{project}/baselines/{series_id}", tag = "alerts",
    extensions(("x-benchtrail-access" = json!({"needs": "write", "of": "project"}))),
    params(("project" = String, Path), ("series_id" = String, Path)),
    responses((status = 204, description = "Removed; the analyses were recomputed"),
        (status = 401, description = "No token, or an unknown one: this needs a token of the project with `write`", body = Problem, content_type = "application/problem+json", headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token lacks `write`, or belongs to another project", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such project (or a private one the caller may not read, answered alike), or the series has no pinned baseline", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn unpin(
    State(state): State<AppState>,
    WriteAccess(project): WriteAccess,
    Path((slug, series_id)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    let unpin = async {
        if state.store.unpin_baseline(project.id, &series_id).await? {
            return Ok(());
        }
        let pins = state.store.baseline_pins(project.id).await?;
        let holder = state
            .store
            .series_group(&series_id)
            .await?
            .into_iter()
            .find(|s| pins.contains_key(&s.series_id));
        let mut detail = format!("series `{series_id}` of `{slug}` has no pinned baseline");
        if let Some(h) = holder {
            detail.push_str(&format!(
                "; its group is pinned through series `{}`: remove that pin",
                h.series_id
            ));
        }
        Err(ApiError::NotFound(detail))
    };
    state
        .analyzer
        .recompute_after(&state.store, &project, unpin)
        .await?;
    tracing::info!(project = %slug, series = %series_id, "baseline pin removed");
    Ok(StatusCode::NO_CONTENT)
}

/// `GET`: the pinned baselines of a project, by series id (one page: a project has few).
#[utoipa::path(get, path = "/api/v1/projects/{project}/baselines", tag = "alerts",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "project"}))),
    params(("project" = String, Path)),
    responses((status = 200, body = Page<BaselinePin>), (status = 404, body = Problem, content_type = "application/problem+json")))]
pub(super) async fn list(
    State(state): State<AppState>,
    bearer: Bearer,
    Path(slug): Path<String>,
) -> ApiResult<Json<Page<BaselinePin>>> {
    let project = readable_project(&state, &bearer.caller(&state).await?, &slug).await?;
    let mut items: Vec<BaselinePin> = state
        .store
        .baseline_pins(project.id)
        .await?
        .into_values()
        .collect();
    items.sort_by(|a, b| a.series_id.cmp(&b.series_id));
    Ok(Json(Page {
        items,
        next_cursor: None,
    }))
}

/// `DELETE`: ends a run's exclusion from baselines. 404 when the run is not excluded.
#[utoipa::path(delete, path = "/api/v1/runs/{id}/exclusion", tag = "alerts",
    extensions(("x-benchtrail-access" = json!({"needs": "write", "of": "run"}))), params(("id" = Uuid, Path)),

    responses((status = 204, description = "Removed; the analyses were recomputed"),
        (status = 401, description = "No token, or an unknown one: this needs a token of the project with `write`", body = Problem, content_type = "application/problem+json", headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token lacks `write`, or belongs to another project", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such run (or one of a private project the caller may not read, answered alike), or it is not excluded", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn unexclude(
    State(state): State<AppState>,
    RunWriteAccess { run, project }: RunWriteAccess,
) -> ApiResult<StatusCode> {
    let unexclude = async {
        if state.store.unexclude_run(run.summary.id).await? {
            Ok(())
        } else {
            Err(ApiError::NotFound(format!(
                "run {} is not excluded from baselines",
                run.summary.id
            )))
        }
    };
    state
        .analyzer
        .recompute_after(&state.store, &project, unexclude)
        .await?;
    tracing::info!(run = %run.summary.id, "run exclusion removed");
    Ok(StatusCode::NO_CONTENT)
}
