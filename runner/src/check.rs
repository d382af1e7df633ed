//! `benchtrail check --run ID`: the verdict of a stored run and the findings behind it, by the
//! same renderer as `compare` and the server's pages ([`benchtrail_core::report::render`]),
//! exiting with the verdict. Waits (up to `--wait` seconds, polling every 2 s) while the run
//! is not analyzed yet or its verdict is provisional (repeats announced but not all in). Each
//! read is retried on transient failures (`--retries`), each retry noted on stderr.

use crate::cli::CheckArgs;
use crate::client::{path_segment, Client};
use crate::commands::Connection;
use crate::document::Environment;
use crate::report::Delivery;
use anyhow::{anyhow, Result};
use benchtrail_core::report::extras::ReportDocument;
use benchtrail_core::report::{ReasonCode, Verdict, VerdictLevel};
use serde::Deserialize;
use std::io::Write;
use std::time::{Duration, Instant};

/// How often a waiting `check` asks again.
const POLL: Duration = Duration::from_secs(2);

/// Runs `benchtrail check` against the connection's server (token optional: public projects
/// read without one).
///
/// # Errors
/// No server ([`crate::errors::UsageError`]), the server unreachable or answering an error (an
/// unknown run: 404); [`crate::report::ExitWith`] for a verdict that fails (unless `--no-fail`).
pub fn run(
    args: &CheckArgs,
    connection: &Connection,
    env: &Environment,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let client = connection.reader()?;
    let run = match (&args.run, &args.commit) {
        (Some(run), _) => run.clone(),
        (None, Some(commit)) => worst_run(&client, args, commit, err)?,
        (None, None) => anyhow::bail!("pass --run ID or --commit SHA"),
    };
    let how = Delivery {
        format: args.output,
        no_fail: args.no_fail,
        comment: &args.comment,
        pr: args.pr,
        env,
    };
    report(&client, &run, args.wait, &how, out, err)
}

/// A run summary as `GET .../runs?commit=` lists it, the part `check` reads.
#[derive(Deserialize)]
struct RunItem {
    id: String,
}

/// The page of `GET .../runs`.
#[derive(Deserialize)]
struct RunPage {
    items: Vec<RunItem>,
}

/// The run of `commit` (on `--branch`) with the worst verdict (the first such, in upload
/// order); each run's verdict is listed on `err`.
fn worst_run(
    client: &Client,
    args: &CheckArgs,
    commit: &str,
    err: &mut dyn Write,
) -> Result<String> {
    let project = args.project.as_deref().unwrap_or_default();
    let mut query = format!("commit={}", path_segment(commit));
    if let Some(b) = &args.branch {
        query.push_str(&format!("&branch={}", path_segment(b)));
    }
    let (_, page): (u16, RunPage) = client.get_json_retrying(
        &format!("/api/v1/projects/{}/runs?{query}", path_segment(project)),
        err,
    )?;
    let mut worst: Option<(VerdictLevel, String)> = None;
    for item in &page.items {
        let (_, v): (u16, Verdict) = client.get_json_retrying(
            &format!("/api/v1/runs/{}/verdict", path_segment(&item.id)),
            err,
        )?;
        writeln!(err, "run {}: {}", item.id, v.verdict.as_str())?;
        if worst.as_ref().is_none_or(|(w, _)| v.verdict > *w) {
            worst = Some((v.verdict, item.id.clone()));
        }
    }
    let on = match args.branch.as_deref() {
        Some(b) => format!(" on branch `{b}`"),
        None => " on its default branch (pass --branch B for another branch's runs, e.g. a \
                  pull request's)"
            .to_string(),
    };
    worst
        .map(|(_, id)| id)
        .ok_or_else(|| anyhow!("commit {commit} has no run in project `{project}`{on}"))
}

/// Waits up to `wait` seconds for run `run_id`'s analysis to be settled, then reads its
/// report (`GET /api/v1/runs/{id}/report?format=json`) and delivers it as `how` says
/// ([`crate::report::deliver`]: stdout, job summary, PR comment), failing with the verdict's
/// [`crate::report::ExitWith`] unless `no_fail`.
///
/// # Errors
/// The server unreachable or answering an error; [`crate::report::ExitWith`] for a failing verdict.
pub fn report(
    client: &Client,
    run_id: &str,
    wait: u64,
    how: &Delivery<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let run = path_segment(run_id);
    let started = Instant::now();
    let deadline = Duration::from_secs(wait);
    loop {
        let (_, verdict): (u16, Verdict) =
            client.get_json_retrying(&format!("/api/v1/runs/{run}/verdict"), err)?;
        let analyzed = !verdict
            .reasons
            .iter()
            .any(|r| r.code == ReasonCode::NotAnalyzed);
        let settled = analyzed && !verdict.provisional;
        if settled || started.elapsed() >= deadline {
            if !settled {
                writeln!(
                    err,
                    "still {} after {} s (--wait): reporting it as it is",
                    if analyzed {
                        "provisional"
                    } else {
                        "not analyzed"
                    },
                    wait
                )?;
            }
            break;
        }
        writeln!(
            err,
            "waiting: {}",
            if analyzed {
                "the verdict is provisional (repeats pending)"
            } else {
                "not analyzed yet"
            }
        )?;
        std::thread::sleep(POLL.min(deadline.saturating_sub(started.elapsed())));
    }
    let (_, doc): (u16, ReportDocument) =
        client.get_json_retrying(&format!("/api/v1/runs/{run}/report?format=json"), err)?;
    crate::report::deliver(&doc, how, out, err)
}
