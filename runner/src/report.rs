//! What `compare`, `check` and `run` end with: the report of a verdict in the chosen format,
//! and the exit status the verdict asks for.

use crate::cli::ReportFormat;
use anyhow::Result;
use benchtrail_core::report::render::{render, Format};
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

/// Prints the report of `verdict` (with the findings of `analysis`, when there is one) to
/// `out` in `format`; JSON is `{"verdict": ..., "analysis": ...}`, the typed model as the
/// server serves it.
///
/// # Errors
/// Writing to `out` fails.
pub fn print(
    out: &mut dyn Write,
    verdict: &Verdict,
    analysis: Option<&RunAnalysis>,
    format: ReportFormat,
) -> Result<()> {
    let text = match format {
        ReportFormat::Json => {
            let doc = serde_json::json!({"verdict": verdict, "analysis": analysis});
            format!("{}\n", serde_json::to_string_pretty(&doc)?)
        }
        ReportFormat::Terminal => render(verdict, analysis, Format::Terminal),
        ReportFormat::Markdown => render(verdict, analysis, Format::Markdown),
    };
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// `Ok` for `pass` and `warn` (and for any verdict with `no_fail`); else [`ExitWith`]
/// [`EXIT_FAIL`] or [`EXIT_INCOMPLETE`].
///
/// # Errors
/// The verdict fails CI.
pub fn exit_for(level: VerdictLevel, no_fail: bool) -> Result<()> {
    let code = match level {
        _ if no_fail => return Ok(()),
        VerdictLevel::Fail => EXIT_FAIL,
        VerdictLevel::Incomplete => EXIT_INCOMPLETE,
        VerdictLevel::Pass | VerdictLevel::Warn => return Ok(()),
    };
    Err(ExitWith(code).into())
}
