//! What `compare`, `check` and `run` end with: the report of a verdict in the chosen format
//! on stdout, the same report as the PR/MR comment and the GitHub Actions job summary when
//! asked ([`deliver`]), and the exit status the verdict asks for ([`exit_for`]).

use crate::cli::{CommentArgs, ReportFormat};
use crate::document::Environment;
use crate::forge::{self, Forge, Posted};
use anyhow::Result;
use benchtrail_core::report::comment::CommentRequest;
use benchtrail_core::report::extras::{ReportDocument, ReportExtras};
use benchtrail_core::report::render::{render_report, Format};
use benchtrail_core::report::{RunAnalysis, Verdict, VerdictLevel};
use std::io::Write;

/// The exit status a verdict asks for, carried as an error so `main` exits with it without
/// printing an error line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitWith(pub u8);

impl std::fmt::Display for ExitWith {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit status {}", self.0)
    }
}

impl std::error::Error for ExitWith {}

/// Exit status of a `fail` verdict.
pub const EXIT_FAIL: u8 = 1;
/// Exit status of an `incomplete` verdict.
pub const EXIT_INCOMPLETE: u8 = 3;

/// GitHub's limit on a job summary (1 MiB; characters here, which is at most as many bytes
/// for the report's mostly ASCII text, so the byte limit is kept with room to spare).
const STEP_SUMMARY_LIMIT: usize = 512 * 1024;

/// Prints the report of `verdict` (with the findings of `analysis`, when there is one, and
/// the links and sparklines of `extras`) to `out` in `format`; JSON is `{"verdict": ...,
/// "analysis": ...}`, the typed model as the server serves it.
///
/// # Errors
/// Writing to `out` fails.
pub fn print(
    out: &mut dyn Write,
    verdict: &Verdict,
    analysis: Option<&RunAnalysis>,
    extras: &ReportExtras,
    format: ReportFormat,
) -> Result<()> {
    let text = match format {
        ReportFormat::Json => {
            let doc = serde_json::json!({"verdict": verdict, "analysis": analysis});
            format!("{}\n", serde_json::to_string_pretty(&doc)?)
        }
        ReportFormat::Terminal => render_report(verdict, analysis, extras, Format::Terminal, None),
        ReportFormat::Markdown => render_report(verdict, analysis, extras, Format::Markdown, None),
    };
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// How `check` and `run` deliver a stored run's report.
pub struct Delivery<'a> {
    /// The stdout format.
    pub format: ReportFormat,
    /// Exit 0 whatever the verdict.
    pub no_fail: bool,
    /// The PR comment to write, if any.
    pub comment: &'a CommentArgs,
    /// The pull request, overriding the one the run was uploaded with.
    pub pr: Option<u64>,
    /// The process environment (forge tokens, `GITHUB_STEP_SUMMARY`).
    pub env: &'a Environment,
}

/// Prints `doc`'s report to `out`, appends it to the GitHub Actions job summary when
/// `GITHUB_STEP_SUMMARY` names a file, writes the PR/MR comment when asked (a failure to is a
/// warning on `err`), then exits with the verdict.
///
/// # Errors
/// Writing to `out` fails; [`ExitWith`] for a verdict that fails CI (unless `no_fail`).
pub fn deliver(
    doc: &ReportDocument,
    how: &Delivery<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    if how.format == ReportFormat::Json {
        writeln!(out, "{}", serde_json::to_string_pretty(doc)?)?;
    } else {
        print(
            out,
            &doc.verdict,
            doc.analysis.as_ref(),
            &doc.extras,
            how.format,
        )?;
    }
    let markdown = |limit: usize| {
        render_report(
            &doc.verdict,
            doc.analysis.as_ref(),
            &doc.extras,
            Format::Markdown,
            Some(limit),
        )
    };
    if let Some(path) = how.env.var("GITHUB_STEP_SUMMARY") {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(markdown(STEP_SUMMARY_LIMIT).as_bytes()));
        if let Err(e) = appended {
            writeln!(err, "warning: cannot write the job summary {path}: {e}")?;
        }
    }
    let pr = how.pr.or(doc.pr);
    let c = how.comment;
    let mut forges: Vec<Result<Box<dyn Forge>, forge::ForgeError>> = Vec::new();
    if c.github_comment {
        forges.push(forge::github::GitHub::from_env(how.env, pr).map(|f| Box::new(f) as _));
    }
    if c.gitlab_comment {
        forges.push(forge::gitlab::GitLab::from_env(how.env, pr).map(|f| Box::new(f) as _));
    }
    for f in forges {
        let posted = f.and_then(|f| {
            let req = CommentRequest {
                project: &doc.project,
                suite: &c.suite,
                level: doc.verdict.verdict,
                always: c.comment_always,
                limit: f.limit(),
            };
            forge::post(f.as_ref(), req, markdown, err).map(|p| (f.name(), p))
        });
        match posted {
            Ok((name, Posted::Created(id))) => writeln!(err, "{name}: comment {id} created")?,
            Ok((name, Posted::Updated(id))) => writeln!(err, "{name}: comment {id} updated")?,
            Ok((name, Posted::Unchanged(id))) => {
                writeln!(err, "{name}: comment {id} already says this")?
            }
            Ok((name, Posted::Skipped)) => writeln!(
                err,
                "{name}: no comment: the verdict passes and none exists yet (--comment-always posts one)"
            )?,
            Err(e) => writeln!(err, "warning: the PR comment was not written: {e}")?,
        }
    }
    exit_for(doc.verdict.verdict, how.no_fail)
}

/// `Ok` for `pass` and `warn` (and for any verdict with `no_fail`); else [`ExitWith`]
/// [`EXIT_FAIL`], [`EXIT_INCOMPLETE`], or [`crate::EXIT_ERROR`] for `pending` (the analysis did
/// not finish within `--wait`: nothing was decided, so the gate neither passes nor fails it).
///
/// # Errors
/// The verdict fails CI.
pub fn exit_for(level: VerdictLevel, no_fail: bool) -> Result<()> {
    let code = match level {
        _ if no_fail => return Ok(()),
        VerdictLevel::Fail => EXIT_FAIL,
        VerdictLevel::Incomplete => EXIT_INCOMPLETE,
        VerdictLevel::Pending => crate::EXIT_ERROR,
        VerdictLevel::Pass | VerdictLevel::Warn => return Ok(()),
    };
    Err(ExitWith(code).into())
}
