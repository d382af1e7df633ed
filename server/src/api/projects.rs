//! Projects (their tokens: [`super::tokens`]).

use super::access::{readable_project, AdminAccess};
use super::json::ApiJson;
use crate::app::AppState;
use crate::auth::Bearer;
use crate::error::{ApiError, ApiResult, Problem};
use crate::storage::{NewProject, Page, Project};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;

/// `POST /api/v1/projects` body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateProject {
    /// URL-safe name: lower-case letters, digits, `-` and `_`, starting with a letter or digit, at most 64.
    #[schema(pattern = "^[a-z0-9][a-z0-9_-]{0,63}$")]
    pub slug: String,
    /// Display name (defaults to the slug).
    #[serde(default)]
    pub name: Option<String>,
    /// Repository URL for commit links.
    #[serde(default)]
    pub repository_url: Option<String>,
    /// Base branch (default `main`).
    #[serde(default)]
    pub default_branch: Option<String>,
    /// Readable without a token (default true).
    #[serde(default = "yes")]
    pub public: bool,
    /// `--metadata` keys that split series (e.g. `framework`).
    #[serde(default)]
    pub key_fields: Vec<String>,
}

fn yes() -> bool {
    true
}

/// True for a valid slug.
pub fn valid_slug(slug: &str) -> bool {
    let mut chars = slug.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && slug.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

#[utoipa::path(get, path = "/api/v1/projects", tag = "projects",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "none"}))),
    responses((status = 200, description = "Projects the caller may read", body = Page<Project>)))]
pub(super) async fn list(
    State(state): State<AppState>,
    bearer: Bearer,
) -> ApiResult<Json<Page<Project>>> {
    let caller = bearer.caller(&state).await?;
    let items = state
        .store
        .list_projects()
        .await?
        .into_iter()
        .filter(|p| caller.require_read(p).is_ok())
        .collect();
    Ok(Json(Page {
        items,
        next_cursor: None,
    }))
}

#[utoipa::path(get, path = "/api/v1/projects/{project}", tag = "projects",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "project"}))),
    params(("project" = String, Path, description = "Project slug")),
    responses((status = 200, body = Project), (status = 404, description = "No such project, or private", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn get_one(
    State(state): State<AppState>,
    bearer: Bearer,
    Path(slug): Path<String>,
) -> ApiResult<Json<Project>> {
    let project = readable_project(&state, &bearer.caller(&state).await?, &slug).await?;
    Ok(Json(project))
}

#[utoipa::path(post, path = "/api/v1/projects", tag = "projects",
    extensions(("x-benchtrail-access" = json!({"needs": "admin", "of": "none"}))), request_body = CreateProject,

    responses((status = 201, body = Project),
        (status = 401, description = "No token, or an unknown one: this needs the admin token", body = Problem, content_type = "application/problem+json", headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "A project token: this needs the admin token", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Slug taken", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid slug", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body over 64 KiB (decompressed, for a gzip body)", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn create(
    State(state): State<AppState>,
    _: AdminAccess,
    ApiJson(body): ApiJson<CreateProject>,
) -> ApiResult<(StatusCode, Json<Project>)> {
    if !valid_slug(&body.slug) {
        return Err(ApiError::Invalid {
            pointer: "/slug".into(),
            field: None,
            record: None,
            detail: "a slug is 1–64 of a-z, 0-9, `-`, `_`, starting with a letter or digit".into(),
        });
    }
    let project = state
        .store
        .create_project(&NewProject {
            name: body
                .name
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| body.slug.clone()),
            slug: body.slug,
            repository_url: body
                .repository_url
                .map(|u| u.trim_end_matches('/').to_string()),
            default_branch: body.default_branch.unwrap_or_else(|| "main".into()),
            public: body.public,
            key_fields: body.key_fields,
        })
        .await
        .map_err(|e| match e {
            crate::storage::StorageError::Conflict(_) => {
                ApiError::Conflict("a project with this slug exists".into())
            }
            other => other.into(),
        })?;
    Ok((StatusCode::CREATED, Json(project)))
}
