//! The report as the one sticky comment of a GitHub pull request or a GitLab merge request
//! (`--github-comment`, `--gitlab-comment` on `run` and `check`), and as the GitHub Actions job
//! summary. Which comment, which section and whether to write are decided by
//! [`benchtrail_core::report::comment`]; this module lists, creates and updates comments over
//! HTTP ([`http`]: retries on 5xx and rate limits).
//!
//! A failure to comment (a read-only token on a fork's pull request: 403; an unknown
//! repository or PR: 404; a refused body: 422; a forge still failing after the retries) is a
//! warning on stderr: the exit status stays the verdict's, so a comment never hides or fakes
//! a regression.

pub mod github;
pub mod gitlab;
pub mod http;

use benchtrail_core::report::comment::{
    find, forge_message, plan, CommentAction, CommentRequest, ExistingComment,
};
use std::io::Write;

/// Why a comment could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    /// No answer (after the retries).
    #[error("no answer from the forge: {0}")]
    Transport(String),
    /// 401 or 403 that is not a rate limit.
    #[error("HTTP {status} from {what}: the token may not do this ({message}); on GitHub Actions give the job `permissions: pull-requests: write` (a pull request from a fork gets a read-only token)")]
    Forbidden {
        /// The request, e.g. `GET comments`.
        what: String,
        /// 401 or 403.
        status: u16,
        /// The forge's message.
        message: String,
    },
    /// 404.
    #[error("HTTP 404 from {what}: no such repository, pull request or comment, or the token cannot see it ({message})")]
    NotFound {
        /// The request.
        what: String,
        /// The forge's message.
        message: String,
    },
    /// Any other status that is not a success (422: the body was refused; 5xx or a rate
    /// limit still failing after the retries).
    #[error("HTTP {status} from {what}: {message}")]
    Status {
        /// The request.
        what: String,
        /// The HTTP status.
        status: u16,
        /// The forge's message.
        message: String,
    },
    /// A 2xx answer that is not the expected JSON.
    #[error("unexpected answer from {what}: {message}")]
    Decode {
        /// The request.
        what: String,
        /// The decoding error.
        message: String,
    },
    /// The forge cannot be addressed: a missing token, repository or PR number.
    #[error("{0}")]
    Setup(String),
}

/// One forge's comment operations on one pull/merge request.
pub trait Forge {
    /// `GitHub` or `GitLab`, for messages.
    fn name(&self) -> &'static str;
    /// The longest body the forge accepts, in characters.
    fn limit(&self) -> usize;
    /// Every comment of the request, oldest first (all pages).
    ///
    /// # Errors
    /// See [`ForgeError`].
    fn list(&self, err: &mut dyn Write) -> Result<Vec<ExistingComment>, ForgeError>;
    /// Posts a comment; returns its id.
    ///
    /// # Errors
    /// See [`ForgeError`].
    fn create(&self, body: &str, err: &mut dyn Write) -> Result<String, ForgeError>;
    /// Replaces comment `id`'s body.
    ///
    /// # Errors
    /// See [`ForgeError`].
    fn update(&self, id: &str, body: &str, err: &mut dyn Write) -> Result<(), ForgeError>;
}

/// What [`post`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Posted {
    /// A new comment, with its id.
    Created(String),
    /// The comment with this id was edited.
    Updated(String),
    /// The comment with this id already said this.
    Unchanged(String),
    /// No comment exists and the verdict passes: none made.
    Skipped,
}

/// Finds the project's comment on `forge`, and creates, updates or leaves it as
/// [`plan`] decides, with `render(budget)` writing this suite's section.
///
/// # Errors
/// See [`ForgeError`].
pub fn post(
    forge: &dyn Forge,
    req: CommentRequest<'_>,
    render: impl FnOnce(usize) -> String,
    err: &mut dyn Write,
) -> Result<Posted, ForgeError> {
    let comments = forge.list(err)?;
    let req = CommentRequest {
        limit: req.limit.min(forge.limit()),
        ..req
    };
    Ok(match plan(find(&comments, req.project), req, render) {
        CommentAction::Create { body } => Posted::Created(forge.create(&body, err)?),
        CommentAction::Update { id, body } => {
            forge.update(&id, &body, err)?;
            Posted::Updated(id)
        }
        CommentAction::Unchanged { id } => Posted::Unchanged(id),
        CommentAction::Skip => Posted::Skipped,
    })
}

/// The error for a non-success answer to `what`.
pub(crate) fn status_error(what: &str, response: reqwest::blocking::Response) -> ForgeError {
    let status = response.status().as_u16();
    let message = forge_message(&response.text().unwrap_or_default());
    let what = what.to_string();
    match status {
        401 | 403 => ForgeError::Forbidden {
            what,
            status,
            message,
        },
        404 => ForgeError::NotFound { what, message },
        _ => ForgeError::Status {
            what,
            status,
            message,
        },
    }
}

/// Decodes a 2xx JSON answer to `what`, or the error for any other.
pub(crate) fn json<T: serde::de::DeserializeOwned>(
    what: &str,
    response: reqwest::blocking::Response,
) -> Result<T, ForgeError> {
    if !response.status().is_success() {
        return Err(status_error(what, response));
    }
    response.json().map_err(|e| ForgeError::Decode {
        what: what.to_string(),
        message: e.to_string(),
    })
}
