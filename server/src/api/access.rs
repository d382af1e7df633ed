//! Who may call a route: for a write, decided from the request head alone.
//!
//! Every extractor here implements `FromRequestParts`, so axum runs it before the body
//! extractor ([`super::json::ApiJson`]): a request without a valid token, or with one that does
//! not allow the route, is answered 401/403/404 before a byte of its body is read or inflated
//! (a gzip bomb sent without a token costs nothing).
//!
//! The order of the checks is the one rule that keeps private projects unprobeable: the token
//! is resolved first (an unknown token is a 401 whatever the address), then the thing is
//! looked up, and one the caller may not read answers the very 404 of a missing one; only a
//! caller who may read it learns that its scope is short (401/403).

use super::alerts::readable_alert;
use super::runs::readable_run;
use crate::app::AppState;
use crate::auth::{Bearer, Caller};
use crate::error::{ApiError, ApiResult};
use crate::storage::{Alert, Project, Scope, StoredRun};
use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::request::Parts;

/// The caller of a request, its token resolved (401 for an unknown or malformed one).
async fn caller(parts: &mut Parts, state: &AppState) -> ApiResult<Caller> {
    Bearer::from_request_parts(parts, state)
        .await?
        .caller(state)
        .await
}

/// The value of the path parameter `name` (`{project}`, `{id}`) of the matched route.
async fn path_param(parts: &mut Parts, state: &AppState, name: &str) -> ApiResult<String> {
    let params = RawPathParams::from_request_parts(parts, state)
        .await
        .map_err(|e| ApiError::NotFound(e.body_text()))?;
    params
        .iter()
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_string())
        .ok_or_else(|| ApiError::Internal(format!("the route has no `{{{name}}}` parameter")))
}

/// The project `slug` if `caller` may read it; a private one it may not read is the same 404
/// as a missing one.
pub(crate) async fn readable_project(
    state: &AppState,
    caller: &Caller,
    slug: &str,
) -> ApiResult<Project> {
    let project = super::project_or_404(state, slug).await?;
    caller.require_read(&project)?;
    Ok(project)
}

/// The `{project}` of the route, once the caller may do `scope` on it. A project token's own
/// project came with the token; another is looked up (and may be a 404 like a missing one).
async fn project_access(parts: &mut Parts, state: &AppState, scope: Scope) -> ApiResult<Project> {
    let (caller, own) = Bearer::from_request_parts(parts, state)
        .await?
        .caller_and_project(state)
        .await?;
    let slug = path_param(parts, state, "project").await?;
    let project = match own {
        Some(own) if own.slug == slug => own,
        _ => readable_project(state, &caller, &slug).await?,
    };
    caller.require(&project, scope)?;
    Ok(project)
}

/// The `{project}` of an upload, once the caller's token has `upload` on it.
pub(crate) struct UploadAccess(pub Project);

impl FromRequestParts<AppState> for UploadAccess {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        project_access(parts, state, Scope::Upload)
            .await
            .map(UploadAccess)
    }
}

/// The `{project}` of a change to its settings or baselines, once the caller's token has
/// `write` on it (or is the admin token).
pub(crate) struct WriteAccess(pub Project);

impl FromRequestParts<AppState> for WriteAccess {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        project_access(parts, state, Scope::Write)
            .await
            .map(WriteAccess)
    }
}

/// The run `{id}` and its project, once the caller's token has `write` on the project.
pub(crate) struct RunWriteAccess {
    /// The run.
    pub run: StoredRun,
    /// Its project.
    pub project: Project,
}

impl FromRequestParts<AppState> for RunWriteAccess {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        let caller = caller(parts, state).await?;
        let id = path_param(parts, state, "id").await?;
        let run = readable_run(state, &caller, &id).await?;
        let project = super::project_or_404(state, &run.summary.project).await?;
        caller.require(&project, Scope::Write)?;
        Ok(RunWriteAccess { run, project })
    }
}

/// The alert `{id}` and its project, once the caller's token has `write` on the project, and
/// who the caller is (what triage records).
pub(crate) struct AlertWriteAccess {
    /// The alert.
    pub alert: Alert,
    /// Its project.
    pub project: Project,
    /// `admin` or the token's label (or prefix).
    pub actor: String,
}

impl FromRequestParts<AppState> for AlertWriteAccess {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        let caller = caller(parts, state).await?;
        let id = path_param(parts, state, "id").await?;
        let alert = readable_alert(state, &caller, &id).await?;
        let project = super::project_or_404(state, &alert.project).await?;
        caller.require(&project, Scope::Write)?;
        let actor = caller
            .actor()
            .ok_or_else(|| ApiError::Internal("a caller with write access has no name".into()))?
            .to_string();
        Ok(AlertWriteAccess {
            alert,
            project,
            actor,
        })
    }
}

/// The admin token (creating projects and tokens).
pub(crate) struct AdminAccess;

impl FromRequestParts<AppState> for AdminAccess {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        caller(parts, state).await?.require_admin()?;
        Ok(AdminAccess)
    }
}
