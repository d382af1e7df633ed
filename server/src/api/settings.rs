//! Project settings: `GET` and `PUT /api/v1/projects/{project}/settings`.
//!
//! The document is versioned: every PUT stores a new version; GET returns the current one with
//! its `version` and `updated_at`. Changing the SLO profiles recomputes goodput and SLO
//! attainment of every stored result of the project that has per-request samples, in the same
//! transaction (values of removed profiles are deleted). Any change then recomputes the
//! project's regression analyses, alerts and verdicts with the new version, before the answer.

use super::access::{readable_project, WriteAccess};
use super::json::ApiJson;
use crate::app::AppState;
use crate::auth::Bearer;
use crate::error::{ApiError, ApiResult, Problem};
use crate::ingest;
use crate::storage::{StorageError, StoredSettings};
use axum::extract::{Path, State};
use axum::Json;
use benchtrail_core::settings::ProjectSettings;
use serde_json::Value;

#[utoipa::path(get, path = "/api/v1/projects/{project}/settings", tag = "projects",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "project"}))),
    params(("project" = String, Path, description = "Project slug")),
    responses((status = 200, description = "The current settings with their version", body = StoredSettings),
        (status = 404, description = "No such project, or private", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn get(
    State(state): State<AppState>,
    bearer: Bearer,
    Path(slug): Path<String>,
) -> ApiResult<Json<StoredSettings>> {
    let project = readable_project(&state, &bearer.caller(&state).await?, &slug).await?;
    Ok(Json(state.store.settings(&project).await?))
}

/// `PUT`: a whole settings document (as GET returns it; `version`, when given, must be the
/// current version, `updated_at` is ignored). It replaces the stored document: `slo_profiles`
/// is required, a `detection` field left out takes its default. A fault (a wrong type, an
/// unknown key, a value out of its documented bounds) answers 422 with the JSON pointer of the
/// field and stores nothing. Needs a `write` token of the project or the admin token.
#[utoipa::path(put, path = "/api/v1/projects/{project}/settings", tag = "projects",
    extensions(("x-benchtrail-access" = json!({"needs": "write", "of": "project"}))),
    request_body(content = ProjectSettings, description = "The whole settings document, as GET returns it: it replaces the stored one, so `slo_profiles` is required and a `detection` field left out takes its default. May carry `version` (the version being replaced) for optimistic concurrency"),
    params(("project" = String, Path, description = "Project slug")),
    responses((status = 200, description = "Stored as a new version", body = StoredSettings),
        (status = 401, description = "No token, or an unknown one: this needs a token of the project with `write`", body = Problem, content_type = "application/problem+json", headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token lacks `write`, or belongs to another project", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`version` is not the current version", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid settings, nothing stored: a wrong type, an unknown key, a missing `slo_profiles` or a value out of its documented bounds; `pointer` is the JSON pointer of the field", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such project, or a private one the caller may not read (answered alike)", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body over 64 KiB (decompressed, for a gzip body)", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn put(
    State(state): State<AppState>,
    WriteAccess(project): WriteAccess,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<Json<StoredSettings>> {
    let settings = ProjectSettings::from_json(&body).map_err(|e| ApiError::Invalid {
        pointer: e.pointer,
        field: None,
        record: None,
        detail: e.message,
    })?;
    let expected_version = match body.get("version") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_i64().ok_or_else(|| ApiError::Invalid {
            pointer: "/version".into(),
            field: None,
            record: None,
            detail: "expected the current version number".into(),
        })?),
    };
    let before = state.store.settings(&project).await?.settings;
    let write = async {
        state
            .store
            .put_settings(&project, &settings, expected_version, |samples| {
                ingest::slo_rows(&project, &settings, samples)
            })
            .await
            .map_err(|e| match e {
                StorageError::Conflict(msg) => ApiError::Conflict(msg),
                other => other.into(),
            })
    };
    // Every stored analysis and alert records the settings that produced it; new rules (or new
    // goodput values) make them stale, so they are computed again before the answer.
    let stored = if before.analyses_differ(&settings) {
        state
            .analyzer
            .recompute_after(&state.store, &project, write)
            .await?
    } else {
        write.await?
    };
    tracing::info!(project = %project.slug, version = stored.version, "settings changed");
    Ok(Json(stored))
}
