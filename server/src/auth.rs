//! Tokens and who may do what.
//!
//! Tokens are random 256-bit secrets shown once; only their SHA-256 is stored. The admin token
//! (env `BENCHTRAIL_ADMIN_TOKEN` or `--admin-token-file`, at least 32 characters, or generated
//! and printed once on first start) creates projects
//! and tokens. Project tokens carry a scope: `read` < `upload` < `write`. Public projects are
//! readable without a token.
//!
//! A caller who may not read a private project gets the 404 of a missing one from every route,
//! writes included ([`Caller::require_read`] comes before [`Caller::require`]); write routes
//! check all of this from the request head (`api::access`), before reading the body.
//!
//! Project tokens may expire (refused like unknown ones), are revoked by deleting them, and
//! record when they were last used. Failed authentication is throttled per client address
//! ([`throttle`]).
//!
//! Pages never read the `Authorization` header: a browser signs in once with a token
//! (`/sign-in`) and its session grants what that token does, as a [`Caller`]
//! ([`crate::pages::session`]); revoking the token ends the session.

pub mod throttle;

use crate::app::AppState;
use crate::error::{ApiError, ApiResult};
use crate::storage::{Project, Scope, TokenGrant, LAST_USED_RESOLUTION};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;

/// Prefix of every token benchtrail makes, so secret scanners and people can recognise one.
pub const TOKEN_PREFIX: &str = "bt_";

/// SHA-256 (hex) of a token: what is stored and compared.
pub fn hash_token(token: &str) -> String {
    benchtrail_core::sha256_hex(token.as_bytes())
}

/// A new random token: `bt_` followed by 64 hex digits (256 bits from the OS).
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source works");
    format!("{TOKEN_PREFIX}{}", hex::encode(bytes))
}

/// The bearer token of a request, if any. Never printed by `Debug`.
pub struct Bearer(Option<String>);

impl std::fmt::Debug for Bearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Bearer(<redacted>)"
        } else {
            "Bearer(None)"
        })
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Bearer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let Some(value) = parts.headers.get(axum::http::header::AUTHORIZATION) else {
            return Ok(Bearer(None));
        };
        let token = value
            .to_str()
            .ok()
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                ApiError::Unauthorized("the Authorization header must be `Bearer <token>`".into())
            })?;
        Ok(Bearer(Some(token.to_string())))
    }
}

/// What a request's token grants.
#[derive(Debug, Clone, PartialEq)]
pub enum Caller {
    /// No token.
    Anonymous,
    /// The admin token.
    Admin,
    /// A project token.
    Project {
        /// The token's project.
        project_id: i64,
        /// Its scope.
        scope: Scope,
        /// Who holds it, as triage records it ([`TokenGrant::actor`]).
        actor: String,
    },
}

impl Bearer {
    /// Resolves the token. An unknown token is a 401, not anonymous: a typo must not silently
    /// read public data only.
    pub async fn caller(&self, state: &AppState) -> ApiResult<Caller> {
        Ok(self.caller_and_project(state).await?.0)
    }

    /// [`Bearer::caller`] and, for a project token, its project, read in the same query as the
    /// token (so a route of the token's own project, an upload, needs no read of its own).
    pub async fn caller_and_project(
        &self,
        state: &AppState,
    ) -> ApiResult<(Caller, Option<crate::storage::Project>)> {
        let Some(token) = &self.0 else {
            return Ok((Caller::Anonymous, None));
        };
        let hash = hash_token(token);
        if hash == *state.admin_token_hash {
            return Ok((Caller::Admin, None));
        }
        match state.store.token_and_project(&hash).await? {
            Some((grant, project)) => {
                record_use(state, &grant);
                let caller = Caller::Project {
                    project_id: grant.project_id,
                    scope: grant.scope,
                    actor: grant.actor(),
                };
                Ok((caller, Some(project)))
            }
            // Expired or revoked tokens get this very answer: nothing tells them apart.
            None => Err(ApiError::Unauthorized("unknown token".into())),
        }
    }
}

/// Records a token's use when its `last_used_at` is older than [`LAST_USED_RESOLUTION`], in
/// the background: the request does not wait for a write (SQLite has one writer, and an
/// upload may hold it), and a failed write costs the listing one minute of accuracy, never
/// the request. Concurrent requests with the same stale token start one write, not one each
/// ([`claim_touch`]).
fn record_use(state: &AppState, grant: &TokenGrant) {
    let stale = grant
        .last_used_at
        .is_none_or(|t| chrono::Utc::now() - t >= LAST_USED_RESOLUTION);
    if !stale || !claim_touch(state.store.instance(), grant.id) {
        return;
    }
    let store = state.store.clone();
    let id = grant.id;
    tokio::spawn(async move {
        if let Err(e) = store.touch_token(id).await {
            tracing::warn!(token_id = id, "recording the use of a token failed: {e}");
        }
    });
}

/// Whether this process should write token `id`'s use now: `false` when it started that
/// write less than [`LAST_USED_RESOLUTION`] ago (keyed by store too: tests hold several).
fn claim_touch(store: u64, id: i64) -> bool {
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::time::{Duration, Instant};
    /// Tokens are few; past this many the memory is simply cleared.
    const MAX_REMEMBERED: usize = 10_000;
    static STARTED: Mutex<Option<HashMap<(u64, i64), Instant>>> = Mutex::new(None);
    let resolution = Duration::from_secs(LAST_USED_RESOLUTION.num_seconds().unsigned_abs());
    let now = Instant::now();
    let mut started = STARTED.lock().unwrap_or_else(|e| e.into_inner());
    let started = started.get_or_insert_with(HashMap::new);
    if started
        .get(&(store, id))
        .is_some_and(|at| now.duration_since(*at) < resolution)
    {
        return false;
    }
    if started.len() >= MAX_REMEMBERED {
        started.clear();
    }
    started.insert((store, id), now);
    true
}

/// What triage records as its author when the admin token is used.
pub const ADMIN_ACTOR: &str = "admin";

impl Caller {
    /// Who this is, as triage records it: `admin`, a project token's label (or prefix), or
    /// `None` for an anonymous caller.
    pub fn actor(&self) -> Option<&str> {
        match self {
            Caller::Anonymous => None,
            Caller::Admin => Some(ADMIN_ACTOR),
            Caller::Project { actor, .. } => Some(actor),
        }
    }

    /// Admin only.
    pub fn require_admin(&self) -> ApiResult<()> {
        match self {
            Caller::Admin => Ok(()),
            Caller::Anonymous => Err(ApiError::Unauthorized("this needs the admin token".into())),
            Caller::Project { .. } => Err(ApiError::Forbidden(
                "this needs the admin token, not a project token".into(),
            )),
        }
    }

    /// The admin, or a token of `project` with at least `scope`.
    pub fn require(&self, project: &Project, scope: Scope) -> ApiResult<()> {
        match self {
            Caller::Admin => Ok(()),
            Caller::Project {
                project_id,
                scope: have,
                ..
            } if *project_id == project.id && *have >= scope => Ok(()),
            Caller::Project { project_id, .. } if *project_id == project.id => {
                Err(ApiError::Forbidden(format!(
                    "this token's scope does not allow this; it needs `{}`",
                    scope.as_str()
                )))
            }
            Caller::Project { .. } => Err(ApiError::Forbidden(format!(
                "this token belongs to another project than `{}`",
                project.slug
            ))),
            Caller::Anonymous => Err(ApiError::Unauthorized(format!(
                "this needs a token of project `{}` with scope `{}`",
                project.slug,
                scope.as_str()
            ))),
        }
    }

    /// Reading: anyone for a public project, else [`Self::require`] with `read`. A private
    /// project is reported as not found to callers who may not read it, so its name leaks nothing.
    pub fn require_read(&self, project: &Project) -> ApiResult<()> {
        if project.public || self.require(project, Scope::Read).is_ok() {
            Ok(())
        } else {
            Err(ApiError::NotFound(format!("no project `{}`", project.slug)))
        }
    }
}
