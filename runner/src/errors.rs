//! What kind of error ended a command, and the JSON object `--json` (and `--format json`,
//! `--report-format json`) prints for it on stdout, besides the `error: ...` line on stderr.
//!
//! The kind is read from the error's types, never from its text: a [`ClientError`] anywhere in
//! the chain (the server's problem document, no connection, ...), else a [`UsageError`], an
//! [`InputError`] or a [`BenchmarkFailed`], else `other`. The object is
//!
//! ```json
//! {"error": {"kind": "problem", "message": "the server answered HTTP 422 to POST ...",
//!            "method": "POST", "url": "https://…/api/v1/projects/p/runs", "status": 422},
//!  "problem": {"type": "about:blank", "title": "...", "status": 422, "detail": "...",
//!              "pointer": "/files/0/content", "errors": [{"pointer": "...", "detail": "..."}]}}
//! ```
//!
//! with `problem` (the server's `application/problem+json` fields as sent) only for kind
//! `problem`. Kinds and their extra fields: `problem` and `http` (`method`, `url`, `status`;
//! `http`: `body`, the start of a body that is no problem document), `connection` (`url`),
//! `response` (a 2xx answer that is not the expected JSON: `method`, `url`, `status`), `usage`
//! (a missing or invalid flag, server or token), `input` (a result file, folder, git or
//! configuration file the command cannot use), `benchmark` (the command of `benchtrail run`
//! failed), `other`.

use crate::cli::{Cli, Command, ReportFormat, TokenCommand};
use crate::client::ClientError;
use serde_json::{json, Value};

/// A command line that cannot work as given (a flag missing or invalid), outside what clap
/// checks.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The benchmark command of `benchtrail run` exited non-zero (or by a signal); nothing was
/// uploaded. The text is its exit status as the OS reports it, e.g. `exit status: 1`.
#[derive(Debug, thiserror::Error)]
#[error("the benchmark command failed ({0}): nothing uploaded")]
pub struct BenchmarkFailed(pub String);

/// An input the command cannot use (result files, folders, git, `--config`, ...): the wrapped
/// error's text and causes, unchanged.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct InputError(Box<dyn std::error::Error + Send + Sync>);

impl InputError {
    /// `e`, marked as an input error (its message and causes unchanged).
    pub fn wrap(e: anyhow::Error) -> anyhow::Error {
        // Already typed (e.g. a usage error found while reading inputs): keep that kind.
        if e.downcast_ref::<UsageError>().is_some() || e.downcast_ref::<ClientError>().is_some() {
            return e;
        }
        InputError(e.into()).into()
    }
}

/// Whether the command line asks for JSON output, so errors are printed as JSON too: `upload
/// --json` (also `run --json`), `check --format json`, `run --report-format json`, `compare
/// --format json`, `token list --json`.
pub fn wants_json(cli: &Cli) -> bool {
    match &cli.command {
        Command::Upload(a) => a.json,
        Command::Run(a) => a.upload.json || a.output == ReportFormat::Json,
        Command::Check(a) => a.output == ReportFormat::Json,
        Command::Compare(a) => a.output == ReportFormat::Json,
        Command::Token(TokenCommand::List(a)) => a.json,
        _ => false,
    }
}

/// [`wants_json`] for a command line clap refused (so there is no [`Cli`]): whether `args`
/// hold `--json`, or `--format`/`--report-format` with the value `json`.
pub fn argv_wants_json(args: &[String]) -> bool {
    args.iter().enumerate().any(|(i, a)| {
        a == "--json"
            || a == "--format=json"
            || a == "--report-format=json"
            || ((a == "--format" || a == "--report-format")
                && args.get(i + 1).is_some_and(|v| v == "json"))
    })
}

/// The JSON object of `e` (see the module documentation); `message` is the text of the
/// `error:` line, causes included.
pub fn error_json(e: &anyhow::Error) -> Value {
    let message = format!("{e:#}");
    let client = e.chain().find_map(|c| c.downcast_ref::<ClientError>());
    if let Some(c) = client {
        return client_json(c, message);
    }
    let kind = e
        .chain()
        .find_map(|c| {
            if c.is::<UsageError>() {
                Some("usage")
            } else if c.is::<InputError>() {
                Some("input")
            } else if c.is::<BenchmarkFailed>() {
                Some("benchmark")
            } else {
                None
            }
        })
        .unwrap_or("other");
    json!({"error": {"kind": kind, "message": message}})
}

/// The JSON of a usage error clap found: `message` is clap's first line without `error: `.
pub fn usage_json(clap_message: &str) -> Value {
    let first = clap_message.lines().next().unwrap_or_default();
    let message = first.strip_prefix("error: ").unwrap_or(first).trim();
    json!({"error": {"kind": "usage", "message": message}})
}

fn client_json(e: &ClientError, message: String) -> Value {
    match e {
        ClientError::Problem {
            method,
            url,
            status,
            problem,
            ..
        } => json!({
            "error": {"kind": "problem", "message": message, "method": method, "url": url, "status": status},
            "problem": problem,
        }),
        ClientError::Http {
            method,
            url,
            status,
            body,
            ..
        } => json!({
            "error": {"kind": "http", "message": message, "method": method, "url": url, "status": status, "body": body},
        }),
        ClientError::Unreachable { url, .. } => json!({
            "error": {"kind": "connection", "message": message, "url": url},
        }),
        ClientError::BadResponse {
            method,
            url,
            status,
            ..
        } => json!({
            "error": {"kind": "response", "message": message, "method": method, "url": url, "status": status},
        }),
        ClientError::InvalidServer(_) => json!({"error": {"kind": "usage", "message": message}}),
        ClientError::Encode { .. } => json!({"error": {"kind": "other", "message": message}}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn kinds_come_from_types_through_context() {
        let e = anyhow::Error::from(UsageError("no server".into())).context("cannot upload");
        assert_eq!(
            error_json(&e),
            json!({"error": {"kind": "usage", "message": "cannot upload: no server"}})
        );
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = InputError::wrap(
            Err::<(), _>(io)
                .context("cannot read result file `r.json`")
                .unwrap_err(),
        );
        assert_eq!(
            error_json(&e),
            json!({"error": {"kind": "input", "message": "cannot read result file `r.json`: No such file"}})
        );
        let e = anyhow::anyhow!("something else");
        assert_eq!(error_json(&e)["error"]["kind"], "other");
        let e = anyhow::Error::from(BenchmarkFailed("exit status: 3".into()));
        assert_eq!(
            error_json(&e),
            json!({"error": {"kind": "benchmark", "message": "the benchmark command failed (exit status: 3): nothing uploaded"}})
        );
    }

    #[test]
    fn json_is_asked_for_by_flags() {
        let args = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
        assert!(argv_wants_json(&args("benchtrail upload --json x")));
        assert!(argv_wants_json(&args("benchtrail check --format json")));
        assert!(argv_wants_json(&args(
            "benchtrail run --report-format=json"
        )));
        assert!(!argv_wants_json(&args(
            "benchtrail upload --format vllm-bench-serve"
        )));
        assert_eq!(
            usage_json("error: unexpected argument '--nope' found\n\nUsage: ..."),
            json!({"error": {"kind": "usage", "message": "unexpected argument '--nope' found"}})
        );
    }
}
