//! The subcommands: each takes its arguments, writes its result to `out` (stdout) and notes
//! to `err` (stderr), and returns an error for exit status 2.

use crate::cli::{Cli, Command, ProjectCommand, ProjectCreateArgs, TokenCommand, UploadArgs};
use crate::client::{path_segment, Client};
use crate::document::{build_document, Environment};
use crate::errors::{InputError, UsageError};
use crate::retry::RetryPolicy;
use anyhow::{anyhow, Context, Result};
use serde::Serialize;
use serde_json::json;
use std::io::Write;

/// Runs a parsed command line in `env`.
///
/// # Errors
/// Any failure; the caller prints it and exits 2.
pub fn run(cli: Cli, env: &Environment, out: &mut dyn Write, err: &mut dyn Write) -> Result<()> {
    let connection = Connection {
        server: cli.server,
        token: cli.token,
        retry: RetryPolicy {
            retries: cli.retries,
            min_delay: std::time::Duration::from_millis(cli.retry_delay_ms),
        },
    };
    // The admin commands also read BENCHTRAIL_ADMIN_TOKEN, the variable the server reads.
    let admin = Connection {
        token: connection
            .token
            .clone()
            .or_else(|| env.var("BENCHTRAIL_ADMIN_TOKEN").map(str::to_string)),
        ..connection.clone()
    };
    match cli.command {
        Command::Upload(args) => upload(&args, &connection, env, out, err),
        Command::Project(ProjectCommand::Create(args)) => project_create(&args, &admin, out, err),
        Command::Token(TokenCommand::Create(args)) => {
            crate::token_cmd::create(&args, &admin, out, err)
        }
        Command::Token(TokenCommand::List(args)) => crate::token_cmd::list(&args, &admin, out, err),
        Command::Token(TokenCommand::Revoke(args)) => {
            crate::token_cmd::revoke(&args, &admin, out, err)
        }
        Command::Formats => formats(out),
        Command::Compare(args) => crate::compare::run(&args, &env.cwd, out, err),
        Command::Run(args) => crate::run_cmd::run(&args, &connection, env, out, err),
        Command::Check(args) => crate::check::run(&args, &connection, env, out, err),
    }
}

/// `benchtrail formats`: every format in detection order, with what it is and a command line
/// that produces it.
fn formats(out: &mut dyn Write) -> Result<()> {
    for format in benchtrail_core::adapters::FORMATS {
        writeln!(
            out,
            "{}\n    {}\n    produced by: {}\n",
            format.name, format.description, format.produced_by
        )?;
    }
    Ok(())
}

/// `--server`, `--token` and `--retries` (or their environment variables).
#[derive(Debug, Clone, Default)]
pub struct Connection {
    /// Server base URL.
    pub server: Option<String>,
    /// Bearer token.
    pub token: Option<String>,
    /// How requests that are safe to repeat are retried.
    pub retry: RetryPolicy,
}

impl Connection {
    /// A client with the token; `token_kind` names the expected token in the error when it is
    /// missing.
    ///
    /// # Errors
    /// [`UsageError`] without a server or a token; an invalid server URL.
    pub fn client(&self, token_kind: &str) -> Result<Client> {
        let server = self.server()?;
        let token = self.token.clone().ok_or_else(|| {
            UsageError(format!(
                "no token: pass --token ({token_kind}) or set BENCHTRAIL_TOKEN"
            ))
        })?;
        Ok(Client::new(server, Some(token))?.with_retry(self.retry))
    }

    /// A client with the token if there is one (public projects are read without).
    ///
    /// # Errors
    /// [`UsageError`] without a server; an invalid server URL.
    pub fn reader(&self) -> Result<Client> {
        Ok(Client::new(self.server()?, self.token.clone())?.with_retry(self.retry))
    }

    fn server(&self) -> Result<&str> {
        self.server.as_deref().ok_or_else(|| {
            UsageError("no server: pass --server URL or set BENCHTRAIL_URL".into()).into()
        })
    }
}

/// Reasons of the verdict `upload` prints to stderr, at most.
const UPLOAD_REASONS_SHOWN: usize = 20;

/// The answer to `POST /api/v1/projects/{project}/runs` (the server's own type).
pub use benchtrail_core::wire::UploadReceipt as UploadResponse;

/// What `upload --dry-run` prints: the files chosen, the run metadata, then the results as
/// the server would store them.
#[derive(Serialize)]
struct DryRun<'a> {
    files: &'a [DryRunFile<'a>],
    run: &'a benchtrail_core::RunMeta,
    results: &'a [benchtrail_core::BenchResult],
    /// `--quality`'s results, when given.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    quality: &'a [benchtrail_core::quality::QualityResult],
}

/// A file of the upload as `--dry-run` lists it: its name and the format it was read as.
#[derive(Serialize)]
struct DryRunFile<'a> {
    name: &'a str,
    format: &'a str,
}

/// `benchtrail upload`: builds the document (listing on `err` the files chosen from and
/// skipped in folders); with `--dry-run` prints `{"files": [...], "run": ..., "results": [...]}`
/// (and `"quality": [...]` with `--quality`)
/// normalized, else uploads it and prints the run URL (or,
/// with `--json`, `{"run_id", "url", "created", "results", "status"}`).
///
/// # Errors
/// Building the document, normalizing it (dry run), or the upload fails.
pub fn upload(
    args: &UploadArgs,
    connection: &Connection,
    env: &Environment,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    upload_with(args, None, connection, env, out, err).map(|_| ())
}

/// [`upload`], recording `command` as the benchmark command when the files do not state one;
/// the server's receipt (`None` for `--dry-run`).
///
/// # Errors
/// As [`upload`].
pub fn upload_with(
    args: &UploadArgs,
    command: Option<&str>,
    connection: &Connection,
    env: &Environment,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Option<UploadResponse>> {
    if args.files.is_empty() {
        return Err(UsageError(
            "no result file given: benchtrail upload [OPTIONS] FILE|FOLDER|-...".into(),
        )
        .into());
    }
    let mut built = build_document(args, env, err).map_err(InputError::wrap)?;
    if let Some(c) = command {
        let benchmark = &mut built.document.configuration.benchmark;
        if benchmark.command.is_none() {
            benchmark.command = Some(c.to_string());
        }
    }
    for note in &built.notes {
        writeln!(err, "note: {note}")?;
    }
    for (name, format) in &built.chosen {
        writeln!(err, "using {name} ({format})")?;
    }
    for (name, reason) in &built.skipped {
        writeln!(err, "skipped {name}: {reason}")?;
    }
    let document = built.document;
    if args.dry_run {
        let read = document.read().map_err(|e| {
            let mut message = format!("invalid upload at {}: {}", e.pointer, e.message);
            if let Some(index) = e
                .pointer
                .strip_prefix("/files/")
                .and_then(|p| p.split('/').next()?.parse::<usize>().ok())
            {
                if let Some(file) = document.files.get(index) {
                    message.push_str(&format!(" (file `{}`)", file.name));
                }
            }
            InputError::wrap(anyhow!(message))
        })?;
        let files: Vec<DryRunFile> = document
            .files
            .iter()
            .zip(&read.file_formats)
            .map(|(file, format)| DryRunFile {
                name: &file.name,
                format,
            })
            .collect();
        let results = read.results;
        let printed = DryRun {
            files: &files,
            run: &document.run,
            results: &results,
            quality: &document.quality,
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&printed)?)?;
        return Ok(None);
    }
    let project = args
        .project
        .as_deref()
        .ok_or_else(|| UsageError("--project is required to upload".into()))?;
    let client = connection.client("a project upload token")?;
    let path = format!("/api/v1/projects/{}/runs", path_segment(project));
    // Safe to repeat: one body, so one run id (`run.id`, or the one the server derives from
    // the document), and the server stores a run id once.
    let (status, response): (u16, UploadResponse) =
        client.post_json_retrying(&path, &document, err)?;
    let url = client.url(&response.path);
    writeln!(
        err,
        "{} run {} with {} result(s) for commit {}",
        if response.created {
            "stored"
        } else {
            "already stored:"
        },
        response.run_id,
        response.results,
        document.run.commit.sha
    )?;
    let detail = response.verdict_detail.as_ref();
    if let Some(verdict) = response.verdict {
        let waiting_hint = format!(
            " (analysis queued: `benchtrail check --run {}` waits for it)",
            response.run_id
        );
        let provisional = if verdict == benchtrail_core::report::VerdictLevel::Pending {
            waiting_hint.as_str()
        } else if detail.is_some_and(|d| d.provisional) {
            " (provisional: waiting for more repeats)"
        } else {
            ""
        };
        writeln!(
            err,
            "verdict: {}{provisional} (details: {})",
            verdict.as_str(),
            client.url(&format!("/api/v1/runs/{}/verdict", response.run_id))
        )?;
        if let Some(d) = detail {
            let gaps = d.missing_cells.iter().map(|g| ("missing cell", &g.message));
            let new = d.new_cells.iter().map(|g| ("new cell", &g.message));
            let unmeasured = d.not_measured.iter().map(|n| ("not measured", &n.message));
            for (label, message) in gaps.chain(new).chain(unmeasured) {
                writeln!(err, "  {label}: {message}")?;
            }
            // The other reasons (findings, workload checks, invalid runs), highest level first,
            // as many as a CI log can take; the verdict URL has them all.
            use benchtrail_core::report::ReasonCode;
            let mut others: Vec<_> = d
                .reasons
                .iter()
                .filter(|r| {
                    !matches!(
                        r.code,
                        ReasonCode::MissingCell | ReasonCode::NewCell | ReasonCode::NotMeasured
                    )
                })
                .collect();
            others.sort_by_key(|r| std::cmp::Reverse(r.level));
            for r in others.iter().take(UPLOAD_REASONS_SHOWN) {
                writeln!(
                    err,
                    "  {} {}: {}",
                    r.level.as_str(),
                    r.code.as_str(),
                    r.message
                )?;
            }
            if others.len() > UPLOAD_REASONS_SHOWN {
                writeln!(
                    err,
                    "  ... and {} more reason(s) at the verdict URL",
                    others.len() - UPLOAD_REASONS_SHOWN
                )?;
            }
        }
    }
    if args.json {
        let line = json!({
            "run_id": response.run_id,
            "url": url,
            "created": response.created,
            "results": response.results,
            "status": status,
            "verdict": response.verdict,
            "provisional": detail.is_some_and(|d| d.provisional),
            "repeats": detail.and_then(|d| d.repeats.as_ref()),
            "reasons": detail.map(|d| d.reasons.as_slice()).unwrap_or_default(),
            "missing_cells": detail.map(|d| d.missing_cells.as_slice()).unwrap_or_default(),
            "new_cells": detail.map(|d| d.new_cells.as_slice()).unwrap_or_default(),
            "not_measured": detail.map(|d| d.not_measured.as_slice()).unwrap_or_default(),
        });
        writeln!(out, "{line}")?;
    } else {
        writeln!(out, "{url}")?;
    }
    Ok(Some(response))
}

/// `benchtrail project create`: prints the project's URL (the answer's `path`, else
/// `/projects/{slug}`).
///
/// # Errors
/// The request fails (409 when the project exists).
pub fn project_create(
    args: &ProjectCreateArgs,
    connection: &Connection,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let client = connection.client("the admin token, or BENCHTRAIL_ADMIN_TOKEN")?;
    let mut body = json!({
        "slug": args.slug,
        "name": args.name.as_deref().unwrap_or(&args.slug),
        "default_branch": args.default_branch,
        "public": !args.private,
        "key_fields": args.key_fields,
    });
    if let Some(url) = &args.repository_url {
        body["repository_url"] = json!(url);
    }
    let (_, response): (u16, serde_json::Value) = client
        .post_json("/api/v1/projects", &body)
        .with_context(|| format!("cannot create project `{}`", args.slug))?;
    let page = response.get("path").and_then(|p| p.as_str()).map_or_else(
        || format!("/projects/{}", path_segment(&args.slug)),
        str::to_string,
    );
    writeln!(err, "created project {}", args.slug)?;
    writeln!(out, "{}", client.url(&page))?;
    Ok(())
}
