//! One error type for the API, rendered as `application/problem+json` (RFC 9457).
//!
//! Client faults name the field at fault with a JSON pointer (`pointer`, and per-fault
//! entries in `errors`); server faults are logged with their cause and answered with a generic
//! 500, so no database detail leaks to clients.

use crate::storage::StorageError;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// The media type of problem details (RFC 9457 §3).
pub const PROBLEM_JSON: &str = "application/problem+json";

/// An API failure.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The body is not the expected JSON shape (400), at `pointer`.
    #[error("{detail}")]
    BadRequest {
        /// JSON pointer into the request body.
        pointer: String,
        /// What is wrong.
        detail: String,
    },
    /// The body is well-formed but its content is wrong (422): a result file that does not
    /// parse, an unknown metric. `field`/`record`/`line` locate the fault inside an uploaded file.
    #[error("{detail}")]
    Invalid {
        /// JSON pointer into the request body.
        pointer: String,
        /// JSON pointer inside the uploaded file's record, if the fault is inside a file.
        field: Option<String>,
        /// 0-based record (JSON Lines entry) and its 1-based line in the file.
        record: Option<(usize, usize)>,
        /// What is wrong.
        detail: String,
    },
    /// [`ApiError::Invalid`] (422) with the other fields of the request body that would
    /// resolve it (`remedies`: pointer and sentence), listed in `errors` after the fault:
    /// `/run/repeat_index` for two results of one cell in one upload.
    #[error("{detail}")]
    InvalidWithRemedies {
        /// JSON pointer into the request body.
        pointer: String,
        /// What is wrong.
        detail: String,
        /// Pointers of fields that would resolve it, each with one sentence.
        remedies: Vec<(String, String)>,
    },
    /// A query parameter parses but names something unusable here (422): a run of another
    /// project than the one compared, a profile the project does not have.
    #[error("{detail}")]
    UnprocessableParameter {
        /// The parameter's name.
        parameter: String,
        /// What is wrong.
        detail: String,
    },
    /// A query parameter is wrong (400).
    #[error("{detail}")]
    BadParameter {
        /// The parameter's name.
        parameter: String,
        /// What is wrong.
        detail: String,
    },
    /// No or unknown credentials (401).
    #[error("{0}")]
    Unauthorized(String),
    /// Valid credentials that do not allow this (403).
    #[error("{0}")]
    Forbidden(String),
    /// Nothing at this address (404).
    #[error("{0}")]
    NotFound(String),
    /// The request conflicts with stored state (409).
    #[error("{0}")]
    Conflict(String),
    /// The body is larger than the limit (413).
    #[error("the request body is larger than {limit} bytes{}", if *decompressed { " once decompressed" } else { "" })]
    PayloadTooLarge {
        /// The limit in bytes.
        limit: usize,
        /// The body was sent gzip-compressed and the limit was reached while inflating it.
        decompressed: bool,
    },
    /// An upload over one of the bounds of [`benchtrail_core::upload_limits`], at `pointer`:
    /// 413 for a file's size, else 422.
    #[error("{detail}")]
    OverLimit {
        /// JSON pointer into the request body.
        pointer: String,
        /// The bound.
        limit: benchtrail_core::upload_limits::Limit,
        /// What is wrong, naming the bound.
        detail: String,
    },
    /// A framework rejection (a query string or path that does not parse, a wrong method),
    /// re-rendered as a problem with its own status and text.
    #[error("{detail}")]
    Rejected {
        /// The status axum chose.
        status: StatusCode,
        /// Its text.
        detail: String,
    },
    /// The store is unavailable for now (database down or restarting, disk full, pool
    /// exhausted: [`StorageError::is_unavailable`]): 503 with `Retry-After`, the cause logged.
    #[error("the database is unavailable for now; retry in {retry_after_secs} s")]
    Unavailable {
        /// Seconds to wait before retrying (the `Retry-After` header).
        retry_after_secs: u64,
        /// The cause, for the log only.
        cause: String,
    },
    /// The server has more queued work than it takes on (backpressure): 503 with
    /// `Retry-After`; nothing was stored.
    #[error("{detail}")]
    Overloaded {
        /// Seconds to wait before retrying (the `Retry-After` header).
        retry_after_secs: u64,
        /// What is full, for the client.
        detail: String,
    },
    /// Anything else: logged, answered with a generic 500.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<StorageError> for ApiError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::Conflict(msg) => ApiError::Conflict(msg),
            other if other.is_unavailable() => ApiError::Unavailable {
                retry_after_secs: crate::storage::STORE_RETRY_AFTER_SECS,
                cause: other.to_string(),
            },
            other => ApiError::Internal(other.to_string()),
        }
    }
}

pub use benchtrail_core::wire::{FieldProblem, Problem};

impl ApiError {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest { .. } | ApiError::BadParameter { .. } => StatusCode::BAD_REQUEST,
            ApiError::Invalid { .. }
            | ApiError::InvalidWithRemedies { .. }
            | ApiError::UnprocessableParameter { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::OverLimit { limit, .. } if limit.file_size => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::OverLimit { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Rejected { status, .. } => *status,
            ApiError::Unavailable { .. } | ApiError::Overloaded { .. } => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn title(&self) -> &'static str {
        match self {
            ApiError::BadRequest { .. } => "Malformed request body",
            ApiError::Invalid { .. } | ApiError::InvalidWithRemedies { .. } => {
                "Unprocessable content"
            }
            ApiError::BadParameter { .. } => "Invalid query parameter",
            ApiError::UnprocessableParameter { .. } => "Unprocessable query parameter",
            ApiError::Unauthorized(_) => "Unauthorized",
            ApiError::Forbidden(_) => "Forbidden",
            ApiError::NotFound(_) => "Not found",
            ApiError::Conflict(_) => "Conflict",
            ApiError::PayloadTooLarge { .. } => "Payload too large",
            ApiError::OverLimit { limit, .. } if limit.file_size => "Payload too large",
            ApiError::OverLimit { .. } => "Unprocessable content",
            ApiError::Rejected { status, .. } => status.canonical_reason().unwrap_or("Error"),
            ApiError::Unavailable { .. } | ApiError::Overloaded { .. } => "Service unavailable",
            ApiError::Internal(_) => "Internal server error",
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let detail = match &self {
            ApiError::Internal(cause) => {
                tracing::error!(%cause, "internal error");
                "The server failed; the cause is in its log.".to_string()
            }
            ApiError::Unavailable { cause, .. } => {
                tracing::warn!(%cause, "store unavailable");
                self.to_string()
            }
            other => other.to_string(),
        };
        let (pointer, parameter, errors) = match &self {
            ApiError::BadRequest { pointer, detail } => (
                Some(pointer.as_str()),
                None,
                vec![FieldProblem {
                    detail: detail.clone(),
                    pointer: pointer.clone(),
                    ..FieldProblem::default()
                }],
            ),
            ApiError::Invalid {
                pointer,
                field,
                record,
                detail,
            } => (
                Some(pointer.as_str()),
                None,
                vec![FieldProblem {
                    detail: detail.clone(),
                    pointer: pointer.clone(),
                    field: field.clone(),
                    record: record.map(|r| r.0),
                    line: record.map(|r| r.1),
                }],
            ),
            ApiError::InvalidWithRemedies {
                pointer,
                detail,
                remedies,
            } => (
                Some(pointer.as_str()),
                None,
                std::iter::once((pointer.as_str(), detail.clone()))
                    .chain(remedies.iter().map(|(p, d)| (p.as_str(), d.clone())))
                    .map(|(pointer, detail)| FieldProblem {
                        detail,
                        pointer: pointer.to_string(),
                        ..FieldProblem::default()
                    })
                    .collect(),
            ),
            ApiError::OverLimit {
                pointer, detail, ..
            } => (
                Some(pointer.as_str()),
                None,
                vec![FieldProblem {
                    detail: detail.clone(),
                    pointer: pointer.clone(),
                    ..FieldProblem::default()
                }],
            ),
            ApiError::BadParameter { parameter, .. }
            | ApiError::UnprocessableParameter { parameter, .. } => {
                (None, Some(parameter.as_str()), vec![])
            }
            _ => (None, None, vec![]),
        };
        let problem = Problem {
            kind: "about:blank".into(),
            title: self.title().into(),
            status: status.as_u16(),
            detail,
            pointer: pointer.map(str::to_string),
            parameter: parameter.map(str::to_string),
            limit: match &self {
                ApiError::PayloadTooLarge { limit, .. } => Some(*limit as u64),
                ApiError::OverLimit { limit, .. } => Some(limit.max),
                _ => None,
            },
            errors,
        };
        let mut response = (status, axum::Json(problem)).into_response();
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if let ApiError::Unavailable {
            retry_after_secs, ..
        }
        | ApiError::Overloaded {
            retry_after_secs, ..
        } = &self
        {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
            // The client comes back after `Retry-After`, often as late as the idle keep-alive
            // timeout (`serve::DEFAULT_HEADER_TIMEOUT`), when the server closes the connection
            // it kept: a request sent on it just then gets no answer (1 of 1,177 uploads of
            // `upload_storm`, 200 clients). Closed now, the retry opens a fresh one.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        if status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// Result type of API handlers.
pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    /// A 503 tells the client when to come back and closes the connection, so the retry does
    /// not meet a kept-alive connection the server is closing; other answers keep it.
    #[test]
    fn a_503_says_when_to_retry_and_closes_the_connection() {
        let header = |e: ApiError, name: header::HeaderName| {
            let response = e.into_response();
            (
                response.status().as_u16(),
                response
                    .headers()
                    .get(name)
                    .map(|v| v.to_str().unwrap().to_string()),
            )
        };
        let refusals: [(fn() -> ApiError, &str); 2] = [
            (
                || ApiError::Overloaded {
                    retry_after_secs: 7,
                    detail: "70 analyses are queued".into(),
                },
                "7",
            ),
            (
                || ApiError::Unavailable {
                    retry_after_secs: 5,
                    cause: "disk full".into(),
                },
                "5",
            ),
        ];
        for (refusal, retry_after) in refusals {
            assert_eq!(
                header(refusal(), header::RETRY_AFTER),
                (503, Some(retry_after.into()))
            );
            assert_eq!(
                header(refusal(), header::CONNECTION),
                (503, Some("close".into()))
            );
        }
        assert_eq!(
            header(ApiError::NotFound("no run".into()), header::CONNECTION),
            (404, None)
        );
    }
}
