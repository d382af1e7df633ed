//! Who is looking at a page: the browser session behind the `benchtrail_session` cookie, its
//! CSRF token, and the `Set-Cookie` values that start and end one.
//!
//! A session is made at sign-in ([`super::sign_in`]) from a project token or the admin token
//! and grants exactly what that token does ([`Caller`]); pages use it for visibility and
//! triage, the JSON API never does (it takes bearer tokens only, so no API route can be driven
//! by a cross-site form). The cookie holds a random 256-bit id; storage keeps its SHA-256
//! only ([`crate::storage::SessionInfo`]).
//!
//! CSRF: every form a session posts carries [`ActiveSession::csrf`], derived from the secret
//! session id (SHA-256 of a fixed label and the id), so it is bound to the session, needs no
//! storage, and cannot be computed from what the database holds. The sign-in form, before any
//! session exists, uses a double-submit cookie instead (the same random value in a cookie and
//! in the form). `SameSite=Strict` cookies are a second line: a cross-site POST carries none.
//!
//! [`layer`] resolves the visitor once per page request and hands it to handlers through the
//! request's extensions ([`Visitor`] is an extractor); it also renders error pages with the
//! visitor's header, as error pages are made where the visitor is not known.

use crate::app::AppState;
use crate::auth::{hash_token, Caller};
use crate::storage::{Project, Scope, SessionGrant, SessionInfo};
use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The cookie holding the session id.
pub const SESSION_COOKIE: &str = "benchtrail_session";

/// The double-submit cookie of the sign-in form.
pub const SIGN_IN_COOKIE: &str = "benchtrail_sign_in";

/// How long a session lasts unless its token expires sooner: a working day, so a shared or
/// forgotten browser does not stay signed in for long.
pub const DEFAULT_SESSION_LIFETIME: chrono::TimeDelta = chrono::TimeDelta::hours(12);

/// How sessions are made.
#[derive(Debug, Clone)]
pub struct SessionSettings {
    /// How long a session lasts (capped by its token's expiry).
    pub lifetime: chrono::TimeDelta,
    /// Whether cookies get `Secure` (sent over HTTPS only). The server speaks plain HTTP and
    /// trusts no proxy header, so it cannot tell on its own whether the browser used HTTPS:
    /// `--secure-cookies` (`BENCHTRAIL_SECURE_COOKIES`), on by default when `--public-url`
    /// is `https://…`.
    pub secure_cookies: bool,
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            lifetime: DEFAULT_SESSION_LIFETIME,
            secure_cookies: false,
        }
    }
}

/// A live session of the visitor.
#[derive(Debug, Clone)]
pub struct ActiveSession {
    /// SHA-256 of the session id (what storage knows it by).
    pub id_hash: String,
    /// Who signed in (`admin`, or the token's label or prefix).
    pub actor: String,
    /// The CSRF token its forms carry.
    pub csrf: String,
}

/// Who is looking at a page: what their session grants ([`Caller::Anonymous`] without one).
#[derive(Debug, Clone)]
pub struct Visitor {
    /// What the visitor may do.
    pub caller: Caller,
    /// The session, when signed in.
    pub session: Option<ActiveSession>,
}

impl Visitor {
    /// A visitor without a session.
    pub fn anonymous() -> Visitor {
        Visitor {
            caller: Caller::Anonymous,
            session: None,
        }
    }

    /// Whether the visitor may see `project` (public, or readable by the session's token).
    pub fn may_read(&self, project: &Project) -> bool {
        self.caller.require_read(project).is_ok()
    }

    /// Whether the visitor may triage `project`'s alerts (a `write` token or the admin).
    pub fn may_write(&self, project: &Project) -> bool {
        self.caller.require(project, Scope::Write).is_ok()
    }

    /// Whether `given` is this visitor's CSRF token (never, without a session).
    pub fn csrf_matches(&self, given: Option<&str>) -> bool {
        match (&self.session, given) {
            (Some(s), Some(given)) => same_secret(&s.csrf, given),
            _ => false,
        }
    }

    /// The site header of a page seen by this visitor.
    pub fn header(&self) -> SiteHeader {
        match &self.session {
            Some(s) => SiteHeader {
                signed_in: Some(s.actor.clone()),
                csrf: s.csrf.clone(),
            },
            None => SiteHeader::default(),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Visitor {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts
            .extensions
            .get::<Visitor>()
            .cloned()
            .unwrap_or_else(Visitor::anonymous))
    }
}

/// What the header of every page shows: "Sign in", or "Signed in as … · Sign out".
#[derive(Debug, Clone, Default)]
pub struct SiteHeader {
    /// Who is signed in, if anyone.
    pub signed_in: Option<String>,
    /// The CSRF token of the sign-out form (empty when signed out).
    pub csrf: String,
}

/// The error page's text, attached to its response so [`layer`] can render it again with the
/// visitor's header.
#[derive(Debug, Clone)]
pub(crate) struct ErrorPageText {
    /// Heading.
    pub title: &'static str,
    /// One sentence.
    pub message: String,
}

/// A new random secret (256 bits from the OS) in hex: session ids and sign-in form tokens.
pub(crate) fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source works");
    hex::encode(bytes)
}

/// The CSRF token of the session with this id.
pub(crate) fn csrf_of(session_id: &str) -> String {
    benchtrail_core::sha256_hex(format!("benchtrail csrf\n{session_id}").as_bytes())
}

/// Compares two secrets in time that depends on their length only.
pub(crate) fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub(crate) fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
}

/// A `Set-Cookie` value: `name=value; HttpOnly; SameSite=Strict; Path=path; Max-Age=secs`,
/// and `; Secure` when configured. `max_age` 0 removes the cookie.
pub(crate) fn set_cookie(
    settings: &SessionSettings,
    name: &str,
    value: &str,
    path: &str,
    max_age: i64,
) -> String {
    let secure = if settings.secure_cookies {
        "; Secure"
    } else {
        ""
    };
    format!("{name}={value}; HttpOnly; SameSite=Strict; Path={path}; Max-Age={max_age}{secure}")
}

/// What a stored session lets its visitor do.
fn caller_of(info: &SessionInfo) -> Caller {
    match &info.grant {
        SessionGrant::Admin => Caller::Admin,
        SessionGrant::Project {
            project_id, scope, ..
        } => Caller::Project {
            project_id: *project_id,
            scope: *scope,
            actor: info.actor.clone(),
        },
    }
}

/// The visitor of a request: its session cookie's live session, or anonymous (no cookie, or
/// one that names no live session: expired, signed out, its token revoked).
///
/// # Errors
/// A storage error.
pub async fn visitor(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Visitor, crate::storage::StorageError> {
    let Some(id) = cookie(headers, SESSION_COOKIE).filter(|v| !v.is_empty()) else {
        return Ok(Visitor::anonymous());
    };
    let id_hash = hash_token(id);
    match state
        .store
        .session(&id_hash, &state.admin_token_hash)
        .await?
    {
        Some(info) => Ok(Visitor {
            caller: caller_of(&info),
            session: Some(ActiveSession {
                id_hash,
                actor: info.actor,
                csrf: csrf_of(id),
            }),
        }),
        None => Ok(Visitor::anonymous()),
    }
}

/// Middleware of every address outside `/api/` and `/static/`: resolves the [`Visitor`] into
/// the request's extensions, and renders an error page again with the visitor's header.
pub async fn layer(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if path.starts_with("/api/") || path.starts_with("/static/") {
        return next.run(request).await;
    }
    let visitor = match visitor(&state, request.headers()).await {
        Ok(v) => v,
        Err(e) => return super::PageError::from(e).into_response(),
    };
    request.extensions_mut().insert(visitor.clone());
    let response = next.run(request).await;
    if visitor.session.is_none() {
        return response;
    }
    match response.extensions().get::<ErrorPageText>().cloned() {
        Some(text) => super::error_page(response, text, visitor.header()),
        None => response,
    }
}
