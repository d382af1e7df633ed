//! A JSON body extractor whose failures are problem details naming the field at fault.
//! Bodies sent with `Content-Encoding: gzip` arrive here already inflated (by
//! `tower_http`'s request decompression in [`crate::app::router`]).
//!
//! axum's own `Json` rejects with a plain-text message; uploads need a JSON pointer to the
//! field (`/run/commit/sha`), which `serde_path_to_error` gives.

use crate::app::GzipBody;
use crate::body_limit::BodyLimit;
use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

/// A JSON request body of type `T`.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let gzip = req.extensions().get::<GzipBody>().is_some();
        let limit = BodyLimit::of(req.extensions());
        let timeout = req
            .extensions()
            .get::<crate::timeouts::BodyTimeout>()
            .map(|t| t.0);
        // A declared length over the limit is refused before a byte is read. (A gzip body has
        // none here: the decompression layer drops its compressed length, and its inflated
        // bytes are counted as they are read.)
        let declared = req
            .headers()
            .get(axum::http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|n| n > limit as u64) {
            return Err(ApiError::PayloadTooLarge {
                limit,
                decompressed: false,
            });
        }
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|rejection| body_error(rejection, gzip, limit, timeout))?;
        parse(&bytes).map(ApiJson)
    }
}

/// The problem for a body that could not be read: larger than the route's `limit` (413,
/// counted after decompression), paused longer than its `timeout` between two chunks (408),
/// a `Content-Encoding: gzip` body that does not inflate (400), or a broken transfer (400).
fn body_error(
    rejection: BytesRejection,
    gzip: bool,
    limit: usize,
    timeout: Option<std::time::Duration>,
) -> ApiError {
    if let Some(timeout) = timeout.filter(|_| crate::timeouts::is_body_timeout(&rejection)) {
        return crate::timeouts::body_timeout_problem(timeout);
    }
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        return ApiError::PayloadTooLarge {
            limit,
            decompressed: gzip,
        };
    }
    let detail = if gzip {
        // The decompressor's own message (e.g. `invalid gzip header`) is the innermost cause.
        let mut cause: &dyn std::error::Error = &rejection;
        while let Some(inner) = cause.source() {
            cause = inner;
        }
        format!("the body is sent with `Content-Encoding: gzip` but is not valid gzip: {cause}")
    } else {
        rejection.body_text()
    };
    ApiError::BadRequest {
        pointer: String::new(),
        detail,
    }
}

/// Deserializes `bytes`, turning the failing path into a JSON pointer.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let pointer = to_pointer(e.path());
        let inner = e.into_inner();
        let detail = if inner.is_syntax() || inner.is_eof() {
            format!("the body is not valid JSON: {inner}")
        } else {
            inner.to_string()
        };
        ApiError::BadRequest { pointer, detail }
    })
}

fn to_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
            Segment::Map { key } => {
                pointer.push_str(&format!("/{}", key.replace('~', "~0").replace('/', "~1")))
            }
            Segment::Enum { variant } => pointer.push_str(&format!("/{variant}")),
            Segment::Unknown => {}
        }
    }
    pointer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Outer {
        items: Vec<Inner>,
    }
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Inner {
        count: u32,
    }

    /// A file's text is read through its raw JSON (`benchtrail_core::json_string`); what is
    /// not a string, or a string serde_json would refuse, still names the file's `content`.
    #[test]
    fn a_files_content_is_read_exactly_and_its_faults_name_it() {
        use benchtrail_core::upload::UploadDocument;
        let file = r#"{"ttfts": [0.0123], "model_id": "m\u00e9 😀"}"#;
        let body = serde_json::json!({
            "run": {"commit": {"sha": "0123456789abcdef0123456789abcdef01234567"}},
            "files": [{"name": "r.json", "content": file}],
        });
        let doc = parse::<UploadDocument>(body.to_string().as_bytes()).unwrap();
        assert_eq!(doc.files[0].content, file);
        let with_content = |content: &str| {
            format!(
                r#"{{"run": {{"commit": {{"sha": "0123456789abcdef0123456789abcdef01234567"}}}},
                    "files": [{{"name": "r.json", "content": {content}}}]}}"#
            )
        };
        for (content, detail) in [
            ("5", "invalid type: integer `5`, expected a string"),
            (
                "-2.5",
                "invalid type: floating point `-2.5`, expected a string",
            ),
            (r#"{"a": 1}"#, "invalid type: map, expected a string"),
            (r#""\ud800 alone""#, "lone leading surrogate in hex escape"),
        ] {
            match parse::<UploadDocument>(with_content(content).as_bytes()).unwrap_err() {
                ApiError::BadRequest {
                    pointer,
                    detail: got,
                } => {
                    assert_eq!(pointer, "/files/0/content", "{content}");
                    assert!(got.starts_with(detail), "{content}: {got}");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn pointer_names_the_field() {
        let err = parse::<Outer>(br#"{"items": [{"count": 1}, {"count": "x"}]}"#).unwrap_err();
        match err {
            ApiError::BadRequest { pointer, detail } => {
                assert_eq!(pointer, "/items/1/count");
                assert!(
                    detail.starts_with("invalid type: string \"x\", expected u32"),
                    "{detail}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
