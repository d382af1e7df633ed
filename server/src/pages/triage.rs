//! Triage from the pages: the forms on each alert card of the alerts and run pages
//! (acknowledge, dismiss as expected with a reason, reopen) and `POST /alerts/{id}/triage`,
//! which calls the very triage of `PATCH /api/v1/alerts/{id}` ([`crate::triage`]) and sends
//! the browser back to the page it came from (303).
//!
//! The checks come in an order that keeps private projects unprobeable: the CSRF token first
//! (403 whatever the address, so a form without one learns nothing), then the alert, which a
//! visitor who may not read it gets as the 404 of a missing one, then the `write` scope (403).

use super::session::Visitor;
use super::PageError;
use crate::app::AppState;
use crate::storage::{AlertStatus, Project};
use crate::triage::TriageError;
use axum::extract::rejection::FormRejection;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Form;
use serde::Deserialize;
use uuid::Uuid;

/// The page a triage form sends the browser back to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReturnTo {
    /// The project's alerts page.
    Alerts,
    /// The page of this run.
    Run(Uuid),
}

impl ReturnTo {
    /// The form field's value: `alerts` or `run:<id>`.
    pub fn field(&self) -> String {
        match self {
            ReturnTo::Alerts => "alerts".into(),
            ReturnTo::Run(id) => format!("run:{id}"),
        }
    }

    /// The field read back; anything else is `None`. Only these two shapes exist, so the
    /// redirect can never leave the site.
    fn parse(field: &str) -> Option<ReturnTo> {
        match field {
            "alerts" => Some(ReturnTo::Alerts),
            _ => field
                .strip_prefix("run:")
                .and_then(|id| Uuid::parse_str(id).ok())
                .map(ReturnTo::Run),
        }
    }

    /// Where the browser goes after triaging alert `alert` of `project`.
    fn location(&self, project: &str, alert: Uuid) -> String {
        match self {
            ReturnTo::Alerts => format!("/projects/{project}/alerts#alert-{alert}"),
            ReturnTo::Run(id) => format!("/runs/{id}#alert-{alert}"),
        }
    }
}

/// What the alert cards of a page need to show their triage forms; a page has them only for a
/// visitor with `write` on its project.
#[derive(Debug, Clone)]
pub struct TriageForms {
    /// The session's CSRF token.
    pub csrf: String,
    /// [`ReturnTo::field`] of the page.
    pub return_to: String,
}

impl TriageForms {
    /// The forms for `visitor` on a page of `project`, if they may triage its alerts.
    pub fn for_visitor(
        visitor: &Visitor,
        project: &Project,
        return_to: ReturnTo,
    ) -> Option<TriageForms> {
        let session = visitor.session.as_ref()?;
        visitor.may_write(project).then(|| TriageForms {
            csrf: session.csrf.clone(),
            return_to: return_to.field(),
        })
    }
}

/// The fields of a triage form.
#[derive(Debug, Deserialize)]
pub struct TriageForm {
    /// The session's CSRF token.
    csrf: Option<String>,
    /// `acknowledged`, `dismissed` or `open`.
    status: Option<String>,
    /// Why (required to dismiss).
    reason: Option<String>,
    /// [`ReturnTo::field`].
    return_to: Option<String>,
}

/// The answer to a refused CSRF token: the same for every address, signed in or not.
pub(crate) fn csrf_refused() -> PageError {
    PageError::Forbidden(
        "This form has expired or was not sent from this site's page: reload the page \
         (signing in again if needed) and send it again. Nothing was changed."
            .into(),
    )
}

/// `POST /alerts/{id}/triage`: acknowledge, dismiss or reopen an alert, then 303 back.
pub async fn triage(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(id): Path<String>,
    form: Result<Form<TriageForm>, FormRejection>,
) -> Result<Response, PageError> {
    let form = form
        .map_err(|e| PageError::BadRequest(format!("The triage form did not parse: {e}.")))?
        .0;
    if !visitor.csrf_matches(form.csrf.as_deref()) {
        return Err(csrf_refused());
    }
    let not_found = || PageError::NotFound(format!("There is no alert “{id}”."));
    let uuid = Uuid::parse_str(&id).map_err(|_| not_found())?;
    let alert = state.store.alert(uuid).await?.ok_or_else(not_found)?;
    let project = match state.store.project(&alert.project).await? {
        Some(p) if visitor.may_read(&p) => p,
        _ => return Err(not_found()),
    };
    if !visitor.may_write(&project) {
        return Err(PageError::Forbidden(format!(
            "Your sign-in may read {} but not triage its alerts: that needs a token with \
             the `write` scope (or the admin token). Nothing was changed.",
            project.name
        )));
    }
    let return_to = form
        .return_to
        .as_deref()
        .and_then(ReturnTo::parse)
        .unwrap_or(ReturnTo::Alerts);
    let status = form
        .status
        .as_deref()
        .and_then(AlertStatus::parse)
        .ok_or_else(|| refused(TriageError::Status))?;
    let actor = visitor
        .caller
        .actor()
        .ok_or_else(|| PageError::Internal("a visitor with write access has no name".into()))?;
    crate::triage::triage(
        &state,
        &project,
        uuid,
        status,
        form.reason.as_deref(),
        actor,
    )
    .await
    .map_err(refused)?;
    Ok((
        StatusCode::SEE_OTHER,
        [(header::LOCATION, return_to.location(&project.slug, uuid))],
    )
        .into_response())
}

/// A refused triage as an error page.
fn refused(e: TriageError) -> PageError {
    let text = e.to_string();
    match e {
        TriageError::Status => PageError::BadRequest(
            "A triage form sets `acknowledged`, `dismissed` or `open`; nothing was changed.".into(),
        ),
        TriageError::ReasonMissing => PageError::Unprocessable(
            "Dismissing an alert needs a reason: go back, say why it is expected, and send \
             the form again. Nothing was changed."
                .into(),
        ),
        TriageError::ReasonTooLong { .. } => PageError::Unprocessable(format!(
            "The {}. Nothing was changed.",
            text.trim_start_matches("the ")
        )),
        TriageError::NotFound(id) => PageError::NotFound(format!("There is no alert “{id}”.")),
        TriageError::Storage(s) => s.into(),
    }
}
