//! HTTP client for the benchtrail API, and readable rendering of its RFC 9457 problems.
//!
//! Every request is a JSON `POST` (or a `GET`, or a `DELETE`) with `Authorization: Bearer TOKEN`; a body of
//! [`GZIP_THRESHOLD`] bytes or more (an upload of result files) is sent gzip-compressed with
//! `Content-Encoding: gzip`. A 2xx answer is decoded into the expected type; anything else
//! becomes a [`ClientError`], an `application/problem+json` body a [`Problem`].
//!
//! Requests that are safe to repeat (every `GET`, and an upload: the server stores one run per
//! run id, and without `--run-id` derives the id from the document, which every attempt sends
//! byte for byte) are retried on transient failures by the client's [`RetryPolicy`]
//! ([`Client::get_json_retrying`], [`Client::post_json_retrying`]); creating a project or a
//! token is not.
use crate::retry::{with_retries, RetryPolicy};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::io::Write;
use std::time::{Duration, SystemTime};

/// Time allowed to open a connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// Time allowed for a whole request: uploads carry whole result files (tens of MiB).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// Request bodies of at least this many bytes are sent gzip-compressed. Smaller ones (project
/// and token creation) gain nothing from it. Detailed result files (per-request arrays of
/// numbers) shrink to about a third.
pub const GZIP_THRESHOLD: usize = 16 * 1024;

pub use benchtrail_core::wire::{FieldProblem, Problem};

/// The hint printed under a problem that names `/run/repeat_index` (two results of one cell in
/// one upload): the API names its JSON field, a CLI user sets it with a flag.
pub const REPEAT_INDEX_HINT: &str = "hint: upload each repeat as its own `benchtrail upload` with \
     its own `--repeat-index N` (0, 1, 2, ...), or tell the workloads apart with `--cell` (e.g. \
     `--cell input_len=8192,output_len=1024`)";

/// Whether `item` of a problem's `errors` restates the problem itself (the same pointer and
/// detail: the server lists a single fault both ways, as RFC 9457's validation example does).
fn restates(problem: &Problem, item: &FieldProblem) -> bool {
    problem.pointer.as_deref() == Some(item.pointer.as_str()) && item.detail == problem.detail
}

/// A problem for people: `TITLE: DETAIL`, then `  at POINTER` (with where in the file, from an
/// error that restates the problem, which is not printed again) and one
/// `  - POINTER: DETAIL` line per other error; then [`REPEAT_INDEX_HINT`] when the problem
/// names `/run/repeat_index`.
pub fn render_problem(p: &Problem) -> String {
    let mut out = match (p.title.as_str(), p.detail.as_str()) {
        ("", "") => "(no detail given)".to_string(),
        (t, "") => t.to_string(),
        ("", d) => d.to_string(),
        (t, d) if t == d => t.to_string(),
        (t, d) => format!("{t}: {d}"),
    };
    if let Some(at) = &p.pointer {
        out.push_str(&format!("\n  at {at}"));
        if let Some(e) = p.errors.iter().find(|e| restates(p, e)) {
            let extra = located(e);
            if !extra.is_empty() {
                out.push_str(&format!(" ({})", extra.join(", ")));
            }
        }
    }
    for e in p.errors.iter().filter(|e| !restates(p, e)) {
        out.push_str(&format!("\n  - {}: {}", e.pointer, e.detail));
        let extra = located(e);
        if !extra.is_empty() {
            out.push_str(&format!(" ({})", extra.join(", ")));
        }
    }
    if p.names(benchtrail_core::upload::REPEAT_INDEX_POINTER) {
        out.push_str(&format!("\n  {REPEAT_INDEX_HINT}"));
    }
    out
}

/// Where inside an uploaded file a fault is: `field=…`, `line=…`, `record=…`.
fn located(e: &FieldProblem) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(f) = &e.field {
        out.push(format!("field={f}"));
    }
    if let Some(l) = e.line {
        out.push(format!("line={l}"));
    }
    if let Some(r) = e.record {
        out.push(format!("record={r}"));
    }
    out
}

/// Why a request did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// `--server` is not an http(s) URL.
    #[error("invalid server URL `{0}`: expected http://HOST[:PORT] or https://...")]
    InvalidServer(String),
    /// The request body could not be encoded.
    #[error("cannot encode the request to {url}: {message}")]
    Encode {
        /// The request URL.
        url: String,
        /// The cause.
        message: String,
    },
    /// No connection or no complete answer.
    #[error("could not reach {url}: {message}")]
    Unreachable {
        /// The request URL.
        url: String,
        /// The transport error with its causes.
        message: String,
    },
    /// The server answered with a problem document.
    #[error("the server answered HTTP {status} to {method} {url}: {}", render_problem(.problem))]
    Problem {
        /// `GET` or `POST`.
        method: &'static str,
        /// The request URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The problem (boxed: it is large).
        problem: Box<Problem>,
        /// The wait the server asked for with `Retry-After` (seconds or an HTTP date; a date
        /// in the past is zero).
        retry_after: Option<Duration>,
    },
    /// The server answered an error without a problem document.
    #[error("the server answered HTTP {status} to {method} {url}: {body}")]
    Http {
        /// `GET` or `POST`.
        method: &'static str,
        /// The request URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The start of the body.
        body: String,
        /// As in [`ClientError::Problem`].
        retry_after: Option<Duration>,
    },
    /// A 2xx answer whose body is not the expected JSON.
    #[error("unexpected answer (HTTP {status}) from {method} {url}: {message}")]
    BadResponse {
        /// `GET` or `POST`.
        method: &'static str,
        /// The request URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The decoding error.
        message: String,
    },
}

impl ClientError {
    /// Whether the same request may succeed later: no connection or no complete answer, HTTP
    /// 429 (rate limited) and the 5xx statuses but 501 (Not Implemented) and 505 (HTTP
    /// Version Not Supported), which a repeat cannot change. Everything else (4xx, an
    /// undecodable 2xx) is final.
    pub fn is_transient(&self) -> bool {
        match self {
            ClientError::Unreachable { .. } => true,
            ClientError::Problem { status, .. } | ClientError::Http { status, .. } => {
                *status == 429 || ((500..600).contains(status) && !matches!(status, 501 | 505))
            }
            _ => false,
        }
    }

    /// The server's `Retry-After` of a 429 or 503 answer (other statuses do not ask for a
    /// wait that a retry should honour).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ClientError::Problem {
                status: 429 | 503,
                retry_after,
                ..
            }
            | ClientError::Http {
                status: 429 | 503,
                retry_after,
                ..
            } => *retry_after,
            _ => None,
        }
    }

    /// Why a transient failure happened, on one line for a retry note: the transport error,
    /// or `HTTP STATUS` with the problem's title.
    pub fn short_reason(&self) -> String {
        match self {
            ClientError::Unreachable { message, .. } => message.clone(),
            ClientError::Problem {
                status, problem, ..
            } if !problem.title.is_empty() => format!("HTTP {status} {}", problem.title),
            ClientError::Problem { status, .. } | ClientError::Http { status, .. } => {
                format!("HTTP {status}")
            }
            other => other.to_string(),
        }
    }
}

/// A client for one server.
#[derive(Debug, Clone)]
pub struct Client {
    base: String,
    token: Option<String>,
    http: reqwest::blocking::Client,
    retry: RetryPolicy,
}

impl Client {
    /// A client for `server` (`http(s)://host[:port][/prefix]`, trailing `/` ignored).
    ///
    /// # Errors
    /// [`ClientError::InvalidServer`] when `server` is not an http(s) URL.
    pub fn new(server: &str, token: Option<String>) -> Result<Client, ClientError> {
        let base = server.trim().trim_end_matches('/').to_string();
        let rest = base
            .strip_prefix("http://")
            .or_else(|| base.strip_prefix("https://"));
        if rest.is_none_or(str::is_empty) {
            return Err(ClientError::InvalidServer(server.to_string()));
        }
        let http = reqwest::blocking::Client::builder()
            .user_agent(concat!("benchtrail/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| ClientError::InvalidServer(format!("{server} ({e})")))?;
        Ok(Client {
            base,
            token,
            http,
            retry: RetryPolicy::NONE,
        })
    }

    /// This client with `policy` for its retrying requests (a new client has
    /// [`RetryPolicy::NONE`]: one attempt).
    pub fn with_retry(mut self, policy: RetryPolicy) -> Client {
        self.retry = policy;
        self
    }

    /// The policy of [`Client::get_json_retrying`] and [`Client::post_json_retrying`].
    pub fn retry_policy(&self) -> RetryPolicy {
        self.retry
    }

    /// The server URL without trailing `/`.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// `base + path`; `path` starts with `/`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// `POST base+path` with `body` as JSON (gzip-compressed from [`GZIP_THRESHOLD`] bytes
    /// on); returns the status and the decoded 2xx body. One attempt.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub fn post_json<B: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<(u16, R), ClientError> {
        let url = self.url(path);
        let encoded = encode(&url, body)?;
        self.send_post(url, &encoded)
    }

    /// [`Client::post_json`] for a request that is safe to repeat (an upload), retried on
    /// transient failures ([`ClientError::is_transient`]) by the client's policy, each retry
    /// noted on `err` (see [`crate::retry::with_retries`]). The body is encoded once, so every
    /// attempt sends the same bytes (the same run id, given or derived by the server).
    ///
    /// # Errors
    /// The last attempt's error, or the first one that is not transient.
    pub fn post_json_retrying<B: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
        err: &mut dyn Write,
    ) -> Result<(u16, R), ClientError> {
        let url = self.url(path);
        let encoded = encode(&url, body)?;
        let what = format!("POST {url}");
        with_retries(&self.retry, &what, err, || {
            self.send_post(url.clone(), &encoded)
        })
    }

    /// Sends one `POST` of an encoded body.
    fn send_post<R: DeserializeOwned>(
        &self,
        url: String,
        encoded: &Encoded,
    ) -> Result<(u16, R), ClientError> {
        let mut request = self
            .http
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, application/problem+json");
        if encoded.gzip {
            request = request.header("Content-Encoding", "gzip");
        }
        request = request.body(encoded.bytes.clone());
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        finish("POST", url, request)
    }

    /// `GET path` with the token; the 2xx body decoded as `R`. One attempt.
    ///
    /// # Errors
    /// As [`Client::post_json`].
    pub fn get_json<R: DeserializeOwned>(&self, path: &str) -> Result<(u16, R), ClientError> {
        let url = self.url(path);
        let mut request = self
            .http
            .get(&url)
            .header("Accept", "application/json, application/problem+json");
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        finish("GET", url, request)
    }

    /// `DELETE path` with the token; the 2xx status (a 204 has no body). One attempt: like
    /// creating a token, revoking one is not retried.
    ///
    /// # Errors
    /// As [`Client::post_json`].
    pub fn delete(&self, path: &str) -> Result<u16, ClientError> {
        let url = self.url(path);
        let mut request = self
            .http
            .delete(&url)
            .header("Accept", "application/json, application/problem+json");
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        finish::<serde::de::IgnoredAny>("DELETE", url, request).map(|(status, _)| status)
    }

    /// [`Client::get_json`] retried on transient failures by the client's policy, each retry
    /// noted on `err`.
    ///
    /// # Errors
    /// As [`Client::post_json_retrying`].
    pub fn get_json_retrying<R: DeserializeOwned>(
        &self,
        path: &str,
        err: &mut dyn Write,
    ) -> Result<(u16, R), ClientError> {
        let what = format!("GET {}", self.url(path));
        with_retries(&self.retry, &what, err, || self.get_json(path))
    }
}

/// A JSON request body as sent: gzip-compressed from [`GZIP_THRESHOLD`] bytes on.
struct Encoded {
    bytes: Vec<u8>,
    gzip: bool,
}

/// `body` as JSON, compressed when large.
fn encode<B: Serialize + ?Sized>(url: &str, body: &B) -> Result<Encoded, ClientError> {
    let encode_error = |message: String| ClientError::Encode {
        url: url.to_string(),
        message,
    };
    let json = serde_json::to_vec(body).map_err(|e| encode_error(e.to_string()))?;
    if json.len() >= GZIP_THRESHOLD {
        let bytes = gzip(&json).map_err(|e| encode_error(e.to_string()))?;
        Ok(Encoded { bytes, gzip: true })
    } else {
        Ok(Encoded {
            bytes: json,
            gzip: false,
        })
    }
}

/// A `Retry-After` value (RFC 9110 §10.2.3): delay seconds, or an HTTP date (any of its three
/// forms) measured from `now`; a date in the past is zero. `None` when it is neither.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Sends `request` and decodes its answer: a 2xx body as `R`, a problem document as
/// [`ClientError::Problem`], anything else as [`ClientError::Http`].
fn finish<R: DeserializeOwned>(
    method: &'static str,
    url: String,
    request: reqwest::blocking::RequestBuilder,
) -> Result<(u16, R), ClientError> {
    let unreachable = |e: reqwest::Error| ClientError::Unreachable {
        url: url.clone(),
        message: error_chain(&e),
    };
    let response = request.send().map_err(unreachable)?;
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| parse_retry_after(v, SystemTime::now()));
    let text = response.text().map_err(unreachable)?;
    if (200..300).contains(&status) {
        // 204 No Content: decoded as `null`, which a unit or `IgnoredAny` accepts.
        let text = if status == 204 && text.is_empty() {
            "null"
        } else {
            &text
        };
        return serde_json::from_str(text)
            .map(|r| (status, r))
            .map_err(|e| ClientError::BadResponse {
                method,
                url,
                status,
                message: e.to_string(),
            });
    }
    match serde_json::from_str::<Problem>(&text) {
        Ok(problem) if !problem.title.is_empty() || !problem.detail.is_empty() => {
            Err(ClientError::Problem {
                method,
                url,
                status,
                problem: Box::new(problem),
                retry_after,
            })
        }
        _ => {
            let mut body: String = text.trim().chars().take(2000).collect();
            if body.is_empty() {
                body = "(empty body)".to_string();
            }
            Err(ClientError::Http {
                method,
                url,
                status,
                body,
                retry_after,
            })
        }
    }
}

/// `bytes` gzip-compressed at flate2's default level.
fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(bytes.len() / 4),
        flate2::Compression::default(),
    );
    encoder.write_all(bytes)?;
    encoder.finish()
}

/// An error and its causes joined by `: ` (reqwest's own message rarely says why).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

/// Percent-encodes one URL path segment (everything but `A-Za-z0-9-._~`).
pub fn path_segment(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problem_renders_title_detail_pointer_and_errors() {
        let problem: Problem = serde_json::from_str(
            r#"{"type":"about:blank","title":"Invalid upload","status":422,
                "detail":"record 0 (line 1): field `/completed`: must be a non-negative integer",
                "pointer":"/files/0/content",
                "errors":[{"pointer":"/files/0/content","detail":"bad","field":"/completed"},
                          {"pointer":"/cell","detail":"or set the cell"}]}"#,
        )
        .unwrap();
        assert_eq!(
            render_problem(&problem),
            "Invalid upload: record 0 (line 1): field `/completed`: must be a non-negative integer\n  \
             at /files/0/content\n  - /files/0/content: bad (field=/completed)\n  - /cell: or set the cell"
        );
    }

    #[test]
    fn a_single_fault_listed_both_ways_is_printed_once() {
        // As the server answers a file that does not parse: the fault as the problem and as
        // its one `errors` item, which adds where in the file.
        let problem: Problem = serde_json::from_str(
            r#"{"title":"Unprocessable content","status":422,"detail":"bad count",
                "pointer":"/files/0/content",
                "errors":[{"detail":"bad count","pointer":"/files/0/content","field":"/completed","record":0,"line":1}]}"#,
        )
        .unwrap();
        assert_eq!(
            render_problem(&problem),
            "Unprocessable content: bad count\n  at /files/0/content (field=/completed, line=1, record=0)"
        );
        assert!(problem.names("/files/0/content"));
        assert!(!problem.names("/run/repeat_index"));
    }

    #[test]
    fn server_urls_are_checked() {
        assert!(matches!(
            Client::new("localhost:8080", None),
            Err(ClientError::InvalidServer(_))
        ));
        assert!(matches!(
            Client::new("http://", None),
            Err(ClientError::InvalidServer(_))
        ));
        let c = Client::new("http://127.0.0.1:8080/", None).unwrap();
        assert_eq!(
            c.url("/api/v1/projects"),
            "http://127.0.0.1:8080/api/v1/projects"
        );
    }

    #[test]
    fn gzip_round_trips() {
        use std::io::Read;
        let text = "x".repeat(GZIP_THRESHOLD);
        let compressed = gzip(text.as_bytes()).unwrap();
        assert_eq!(&compressed[..2], &[0x1f, 0x8b]);
        let mut back = String::new();
        flate2::read::GzDecoder::new(&compressed[..])
            .read_to_string(&mut back)
            .unwrap();
        assert_eq!(back, text);
    }

    #[test]
    fn retry_after_is_seconds_or_an_http_date() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777); // 1994-11-06T08:49:37Z
        assert_eq!(parse_retry_after("1", now), Some(Duration::from_secs(1)));
        assert_eq!(
            parse_retry_after(" 120 ", now),
            Some(Duration::from_secs(120))
        );
        // The three HTTP-date forms of RFC 9110, 30 s after `now`.
        for date in [
            "Sun, 06 Nov 1994 08:50:07 GMT",
            "Sunday, 06-Nov-94 08:50:07 GMT",
            "Sun Nov  6 08:50:07 1994",
        ] {
            assert_eq!(
                parse_retry_after(date, now),
                Some(Duration::from_secs(30)),
                "{date}"
            );
        }
        // A date already past asks for no wait; junk is ignored.
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-1", now), None);
    }

    #[test]
    fn path_segments_are_encoded() {
        assert_eq!(path_segment("my-proj_1"), "my-proj_1");
        assert_eq!(path_segment("a/b c"), "a%2Fb%20c");
    }
}
