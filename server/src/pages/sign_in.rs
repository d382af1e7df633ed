//! `/sign-in` and `/sign-out`: a visitor pastes a project token or the admin token and gets a
//! browser session ([`super::session`]); signing out deletes it.
//!
//! The token is checked as the API checks a bearer token (the admin token's hash, else a
//! stored, unexpired project token), and an unknown one counts as a failed authentication for
//! the per-address throttle ([`crate::auth::throttle`]), so the form is no faster a way to
//! guess tokens than the API. The session lasts [`SessionSettings::lifetime`], or until its
//! token expires if sooner.
//!
//! [`SessionSettings::lifetime`]: super::session::SessionSettings

use super::session::{
    new_secret, same_secret, set_cookie, SiteHeader, Visitor, SESSION_COOKIE, SIGN_IN_COOKIE,
};
use super::triage::csrf_refused;
use super::PageError;
use crate::app::AppState;
use crate::auth::{hash_token, ADMIN_ACTOR};
use crate::storage::{NewSession, SessionGrant};
use askama::Template;
use axum::extract::rejection::FormRejection;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::Form;
use serde::Deserialize;

/// Seconds the sign-in form's double-submit cookie lives: time enough to find a token.
const SIGN_IN_FORM_SECS: i64 = 3600;

/// The path the sign-in form's cookie is sent to (only there).
const SIGN_IN_PATH: &str = "/sign-in";

/// `/sign-in`.
#[derive(Template)]
#[template(path = "sign_in.html")]
pub struct SignInPage {
    /// The form's double-submit token (also in its cookie).
    pub csrf: String,
    /// Where to go once signed in (a path of this site), or empty.
    pub next: String,
    /// Why the last attempt failed, if it did.
    pub error: Option<String>,
    /// The site header (who is signed in).
    pub header: SiteHeader,
}

/// Query of `GET /sign-in`.
#[derive(Debug, Deserialize)]
pub struct SignInQuery {
    /// Where to go once signed in.
    next: Option<String>,
}

/// Fields of the sign-in form.
#[derive(Debug, Deserialize)]
pub struct SignInForm {
    /// The double-submit token.
    csrf: Option<String>,
    /// The pasted token.
    token: Option<String>,
    /// Where to go once signed in.
    next: Option<String>,
}

/// Fields of the sign-out form.
#[derive(Debug, Deserialize)]
pub struct SignOutForm {
    /// The session's CSRF token.
    csrf: Option<String>,
}

/// `next` if it is a path of this site (`/…`, not `//host` or `/\host`, which browsers read
/// as another site), else `/`.
fn local_path(next: Option<&str>) -> String {
    match next {
        Some(p)
            if p.starts_with('/')
                && !p.starts_with("//")
                && !p.starts_with("/\\")
                && !p.chars().any(char::is_control) =>
        {
            p.to_string()
        }
        _ => "/".to_string(),
    }
}

/// The sign-in page with a fresh form token, its cookie set; `error` and `status` for a failed
/// attempt.
fn form_page(
    state: &AppState,
    visitor: &Visitor,
    next: String,
    error: Option<String>,
    status: StatusCode,
) -> Result<Response, PageError> {
    let csrf = new_secret();
    let page = SignInPage {
        csrf: csrf.clone(),
        next,
        error,
        header: visitor.header(),
    };
    let cookie = set_cookie(
        &state.sessions,
        SIGN_IN_COOKIE,
        &csrf,
        SIGN_IN_PATH,
        SIGN_IN_FORM_SECS,
    );
    Ok((status, [(header::SET_COOKIE, cookie)], Html(page.render()?)).into_response())
}

/// `GET /sign-in`: the form.
pub async fn form(
    State(state): State<AppState>,
    visitor: Visitor,
    Query(q): Query<SignInQuery>,
) -> Result<Response, PageError> {
    let next = q
        .next
        .as_deref()
        .map(|n| local_path(Some(n)))
        .unwrap_or_default();
    form_page(&state, &visitor, next, None, StatusCode::OK)
}

/// `POST /sign-in`: checks the form token and the pasted token, makes the session, sets its
/// cookie and sends the browser on (303). An unknown token shows the form again (401).
pub async fn sign_in(
    State(state): State<AppState>,
    visitor: Visitor,
    headers: HeaderMap,
    form: Result<Form<SignInForm>, FormRejection>,
) -> Result<Response, PageError> {
    let form = form
        .map_err(|e| PageError::BadRequest(format!("The sign-in form did not parse: {e}.")))?
        .0;
    let cookie = super::session::cookie(&headers, SIGN_IN_COOKIE);
    let double_submitted = matches!(
        (cookie, form.csrf.as_deref()),
        (Some(c), Some(f)) if !c.is_empty() && same_secret(c, f)
    );
    if !double_submitted {
        return Err(csrf_refused());
    }
    let next = local_path(form.next.as_deref().filter(|n| !n.is_empty()));
    let token = form.token.as_deref().map(str::trim).unwrap_or_default();
    let token_hash = hash_token(token);
    let (grant, actor, token_expires) =
        if !token.is_empty() && token_hash == *state.admin_token_hash {
            (SessionGrant::Admin, ADMIN_ACTOR.to_string(), None)
        } else {
            match state.store.token(&token_hash).await? {
                Some(grant) if !token.is_empty() => {
                    let expires = grant.expires_at;
                    (
                        SessionGrant::Project {
                            token_id: grant.id,
                            project_id: grant.project_id,
                            scope: grant.scope,
                        },
                        grant.actor(),
                        expires,
                    )
                }
                _ => {
                    return form_page(
                        &state,
                        &visitor,
                        next,
                        Some(
                            "That token is not known: it may be mistyped, expired or revoked. \
                         Paste a project token or the admin token."
                                .into(),
                        ),
                        StatusCode::UNAUTHORIZED,
                    );
                }
            }
        };
    // The table keeps live sessions only (and those that expired since the last sign-in).
    if let Err(e) = state.store.delete_expired_sessions().await {
        tracing::warn!("deleting expired sessions failed: {e}");
    }
    let now = chrono::Utc::now();
    let expires_at = match token_expires {
        Some(t) => t.min(now + state.sessions.lifetime),
        None => now + state.sessions.lifetime,
    };
    let session_id = new_secret();
    state
        .store
        .create_session(&NewSession {
            id_hash: &hash_token(&session_id),
            token_hash: &token_hash,
            grant,
            actor: &actor,
            expires_at,
        })
        .await?;
    tracing::info!(actor = %actor, "signed in");
    let max_age = (expires_at - now).num_seconds().max(1);
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, next)]).into_response();
    let cookies = [
        set_cookie(&state.sessions, SESSION_COOKIE, &session_id, "/", max_age),
        set_cookie(&state.sessions, SIGN_IN_COOKIE, "", SIGN_IN_PATH, 0),
    ];
    for c in cookies {
        let value = HeaderValue::try_from(c)
            .map_err(|e| PageError::Internal(format!("a cookie is not a header value: {e}")))?;
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    Ok(response)
}

/// `POST /sign-out`: deletes the session and its cookie, then 303 to `/`. Without the
/// session's CSRF token, 403 and the session stays.
pub async fn sign_out(
    State(state): State<AppState>,
    visitor: Visitor,
    form: Result<Form<SignOutForm>, FormRejection>,
) -> Result<Response, PageError> {
    let form = form
        .map_err(|e| PageError::BadRequest(format!("The sign-out form did not parse: {e}.")))?
        .0;
    let Some(session) = visitor
        .session
        .as_ref()
        .filter(|_| visitor.csrf_matches(form.csrf.as_deref()))
    else {
        return Err(csrf_refused());
    };
    state.store.delete_session(&session.id_hash).await?;
    Ok((
        StatusCode::SEE_OTHER,
        [
            (header::LOCATION, "/".to_string()),
            (
                header::SET_COOKIE,
                set_cookie(&state.sessions, SESSION_COOKIE, "", "/", 0),
            ),
        ],
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::local_path;

    #[test]
    fn only_paths_of_this_site_are_followed_after_sign_in() {
        assert_eq!(local_path(Some("/projects/secret")), "/projects/secret");
        assert_eq!(local_path(Some("//evil.example/x")), "/");
        assert_eq!(local_path(Some("/\\evil.example")), "/");
        assert_eq!(local_path(Some("https://evil.example")), "/");
        assert_eq!(local_path(None), "/");
    }
}
