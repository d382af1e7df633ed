//! A project's tokens: create (the secret shown once), list (never the secret or its hash),
//! revoke. All need the admin token, checked before the project is looked up, so these
//! routes tell no one else whether a project exists.

use super::access::AdminAccess;
use super::json::ApiJson;
use super::project_or_404;
use crate::app::AppState;
use crate::auth::{hash_token, new_token, TOKEN_PREFIX};
use crate::error::{ApiError, ApiResult, Problem};
use crate::storage::{NewToken, Page, Scope, TokenInfo};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Hex digits of the secret kept as the listed prefix, after `bt_`: 32 of 256 bits.
const PREFIX_HEX_DIGITS: usize = 8;

/// Longest label, in characters.
pub const MAX_LABEL_CHARS: usize = 100;

/// Longest `expires_in_days`: ten years.
pub const MAX_EXPIRES_IN_DAYS: i64 = 3650;

/// `POST /api/v1/projects/{project}/tokens` body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateToken {
    /// `read`, `upload` (default) or `write`.
    #[serde(default)]
    #[schema(pattern = "^(read|upload|write)$")]
    pub scope: Option<String>,
    /// What the token is for (shown in listings), at most 100 characters, no control characters.
    #[serde(default)]
    pub label: Option<String>,
    /// When it stops working: an RFC 3339 time in the future. Not with `expires_in_days`.
    #[serde(default)]
    #[schema(format = DateTime)]
    pub expires_at: Option<String>,
    /// Days from now until it stops working, 1 to 3650. Not with `expires_at`.
    #[serde(default, deserialize_with = "benchtrail_core::serde_int::option")]
    #[schema(minimum = 1, maximum = 3650)]
    pub expires_in_days: Option<i64>,
}

/// The answer to `POST /api/v1/projects/{project}/tokens`: the secret, shown only here, and
/// what a listing shows of it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct CreatedToken {
    /// The secret (`bt_` and 64 hex digits). Only its hash is stored: it cannot be shown again.
    pub token: String,
    /// The project's slug.
    pub project: String,
    /// Its id (for `DELETE .../tokens/{id}`).
    pub id: i64,
    /// `read`, `upload` or `write`.
    pub scope: Scope,
    /// The first characters of the secret, as listings show them.
    pub prefix: String,
    /// The label, if any.
    pub label: Option<String>,
    /// When it was created (RFC 3339, UTC).
    pub created_at: DateTime<Utc>,
    /// When it stops working (RFC 3339, UTC); `null`: never.
    pub expires_at: Option<DateTime<Utc>>,
}

/// A 422 naming the body field at fault.
fn invalid(field: &str, detail: String) -> ApiError {
    ApiError::Invalid {
        pointer: format!("/{field}"),
        field: None,
        record: None,
        detail,
    }
}

/// The expiry asked for: `expires_at`, or `expires_in_days` from `now`, or none.
fn expiry(body: &CreateToken, now: DateTime<Utc>) -> ApiResult<Option<DateTime<Utc>>> {
    match (&body.expires_at, body.expires_in_days) {
        (Some(_), Some(_)) => Err(invalid(
            "expires_in_days",
            "give `expires_at` or `expires_in_days`, not both".into(),
        )),
        (Some(text), None) => {
            let at = DateTime::parse_from_rfc3339(text)
                .map_err(|e| {
                    invalid(
                        "expires_at",
                        format!(
                            "`{text}` is not an RFC 3339 time such as 2027-01-31T00:00:00Z: {e}"
                        ),
                    )
                })?
                .with_timezone(&Utc);
            if at <= now {
                return Err(invalid(
                    "expires_at",
                    format!("{text} is not in the future"),
                ));
            }
            Ok(Some(at))
        }
        (None, Some(days)) if (1..=MAX_EXPIRES_IN_DAYS).contains(&days) => {
            Ok(Some(now + chrono::TimeDelta::days(days)))
        }
        (None, Some(days)) => Err(invalid(
            "expires_in_days",
            format!("{days} is not between 1 and {MAX_EXPIRES_IN_DAYS} days"),
        )),
        (None, None) => Ok(None),
    }
}

/// The label asked for (an empty one is none).
fn label(body: &CreateToken) -> ApiResult<Option<&str>> {
    let Some(label) = body.label.as_deref().filter(|l| !l.is_empty()) else {
        return Ok(None);
    };
    if label.chars().count() > MAX_LABEL_CHARS {
        return Err(invalid(
            "label",
            format!("a label is at most {MAX_LABEL_CHARS} characters"),
        ));
    }
    if label.chars().any(char::is_control) {
        return Err(invalid(
            "label",
            "a label has no control characters (line breaks, tabs, ...)".into(),
        ));
    }
    Ok(Some(label))
}

#[utoipa::path(post, path = "/api/v1/projects/{project}/tokens", tag = "projects", operation_id = "create_token",
    extensions(("x-benchtrail-access" = json!({"needs": "admin", "of": "project"}))), request_body = CreateToken,
    params(("project" = String, Path, description = "Project slug")), security(("bearer" = [])),
    responses((status = 201, description = "The new token; its secret is shown only here", body = CreatedToken),
        (status = 401, description = "No token, or an unknown one: this needs the admin token", body = Problem, content_type = "application/problem+json", headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "A project token: this needs the admin token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such project", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Unknown scope, a label too long or with control characters, an expiry not in the future or out of range, or both expiry fields; `pointer` names the field", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body over 64 KiB (decompressed, for a gzip body)", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn create(
    State(state): State<AppState>,
    _: AdminAccess,
    Path(slug): Path<String>,
    ApiJson(body): ApiJson<CreateToken>,
) -> ApiResult<(StatusCode, Json<CreatedToken>)> {
    let project = project_or_404(&state, &slug).await?;
    let scope_text = body.scope.as_deref().unwrap_or("upload");
    let scope = Scope::parse(scope_text).ok_or_else(|| {
        invalid(
            "scope",
            format!("unknown scope `{scope_text}`: use read, upload or write"),
        )
    })?;
    let label = label(&body)?;
    let now = Utc::now();
    let expires_at = expiry(&body, now)?;
    let token = new_token();
    let prefix = &token[..TOKEN_PREFIX.len() + PREFIX_HEX_DIGITS];
    let info = state
        .store
        .create_token(&NewToken {
            project_id: project.id,
            scope,
            token_hash: &hash_token(&token),
            prefix,
            label,
            created_at: now,
            expires_at,
        })
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(CreatedToken {
            project: project.slug,
            id: info.id,
            scope: info.scope,
            prefix: prefix.to_string(),
            label: info.label,
            created_at: info.created_at,
            expires_at: info.expires_at,
            token,
        }),
    ))
}

#[utoipa::path(get, path = "/api/v1/projects/{project}/tokens", tag = "projects", operation_id = "list_tokens",
    extensions(("x-benchtrail-access" = json!({"needs": "admin", "of": "project"}))),
    params(("project" = String, Path, description = "Project slug")), security(("bearer" = [])),
    responses((status = 200, description = "The project's tokens, oldest first, expired ones included; never a secret or a hash", body = Page<TokenInfo>),
        (status = 401, description = "No token, or an unknown one: this needs the admin token", body = Problem, content_type = "application/problem+json", headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "A project token: this needs the admin token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such project", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn list(
    State(state): State<AppState>,
    _: AdminAccess,
    Path(slug): Path<String>,
) -> ApiResult<Json<Page<TokenInfo>>> {
    let project = project_or_404(&state, &slug).await?;
    Ok(Json(Page {
        items: state.store.list_tokens(project.id).await?,
        next_cursor: None,
    }))
}

#[utoipa::path(delete, path = "/api/v1/projects/{project}/tokens/{id}", tag = "projects", operation_id = "revoke_token",
    extensions(("x-benchtrail-access" = json!({"needs": "admin", "of": "project"}))),
    params(("project" = String, Path, description = "Project slug"), ("id" = i64, Path, description = "The token's id, from the listing")),
    security(("bearer" = [])),
    responses((status = 204, description = "Revoked: the token is refused from now on, like an unknown one"),
        (status = 401, description = "No token, or an unknown one: this needs the admin token", body = Problem, content_type = "application/problem+json", headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "A project token: this needs the admin token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such project, or no token with this id in it", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn revoke(
    State(state): State<AppState>,
    _: AdminAccess,
    Path((slug, id)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    let project = project_or_404(&state, &slug).await?;
    let missing = || ApiError::NotFound(format!("no token `{id}` in project `{slug}`"));
    let token_id: i64 = id.parse().map_err(|_| missing())?;
    if state.store.delete_token(project.id, token_id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(missing())
    }
}
