//! The server as the PR bot: after analysing an upload that names a pull request, in a
//! project whose settings hold `pr_comments` ([`benchtrail_core::pr_comments`]), it posts the
//! run's report as the project's one sticky comment, or updates it
//! ([`benchtrail_core::report::comment::plan`]: the same comment and section rules as
//! `benchtrail check --github-comment`). As a durable job after the commit's analysis
//! (`crate::analysis::jobs`, `JobTarget::Comments`): enqueued in the transaction that ends the
//! analysis, posted by a worker, so a server that dies first still posts after its restart.
//!
//! * Once for one report of a run: the run is claimed in `pr_comment_posts` with its report's
//!   SHA-256 ([`report_sha256`]) before the forge is asked (a retried upload stores nothing and
//!   posts nothing), and the outcome is recorded there; a claim without an outcome (the poster
//!   died) is taken again, and posting the same report twice updates the one sticky comment
//!   in place.
//! * Refreshed when a verdict changes without an upload ([`refresh`]): a recomputation of the
//!   project (an exclusion, a pin, new settings) or a triage is followed by a job that posts
//!   the newest run of each PR the bot reported on again, which claims only a report that
//!   changed: a changed report updates the sticky comment in place, an unchanged one sends
//!   no request.
//! * One at a time per project across every server on the database, so two uploads of one PR
//!   (two pushes, analyzed by two servers) cannot both find no comment and create two: the
//!   comments jobs of a project are claimed one at a time (`Store::claim_due_job`), and posting
//!   happens only inside such a job, under its lease. That is the serialization point; an
//!   in-process lock would add nothing (one process's workers claim through it too) and could
//!   not see another server's poster.
//! * The token is read from the server's environment variable the settings name, when
//!   posting; it is never stored or shown.
//! * Forge faults are retried ([`forge`]: 5xx, 429, rate limits with `Retry-After` or
//!   `x-ratelimit-reset`); a final fault is logged and recorded as `failed` with its reason.

pub mod forge;

use crate::analysis::report::report_document;
use crate::app::AppState;
use crate::storage::{Project, StorageError};
use benchtrail_core::pr_comments::PrCommentSettings;
use benchtrail_core::report::comment::{find, plan, CommentAction, CommentRequest};
use benchtrail_core::report::extras::ReportDocument;
use benchtrail_core::report::render::{render_report, Format};
use benchtrail_core::report::verdict::VerdictLevel;
use forge::Forge;
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// What one post did, as recorded.
enum Outcome {
    Done(&'static str, Option<String>),
    Failed(String),
}

/// Posts run `run_id`'s report (see the module documentation). Called only by a claimed
/// comments job of the project, which is what keeps two posts of one project apart.
///
/// # Errors
/// A storage error; forge faults are recorded, not returned.
pub async fn post(
    state: &AppState,
    project: &Project,
    run_id: Uuid,
    base_url: &str,
) -> Result<(), StorageError> {
    let settings = state.store.settings(project).await?.settings;
    let Some(pc) = settings.pr_comments else {
        return Ok(());
    };
    post_run(state, project, &pc, run_id, base_url).await
}

/// Brings the comment of every PR the bot reported on in `project` up to date after a
/// recomputation or a triage: posts the newest run of each
/// ([`crate::storage::Store::newest_reported_pr_runs`]), which sends nothing for a run whose
/// report did not change. Older runs of a PR are not posted: the comment shows the newest.
/// Called only by a claimed refresh job of the project (see [`post`]).
///
/// # Errors
/// A storage error; forge faults are recorded, not returned.
pub async fn refresh(
    state: &AppState,
    project: &Project,
    base_url: String,
) -> Result<(), StorageError> {
    let settings = state.store.settings(project).await?.settings;
    let Some(pc) = settings.pr_comments else {
        return Ok(());
    };
    let runs = state
        .store
        .newest_reported_pr_runs(project.id, pc.provider.as_str())
        .await?;
    for run_id in runs {
        post_run(state, project, &pc, run_id, &base_url).await?;
    }
    Ok(())
}

/// The SHA-256 (hex) of `doc`'s report as the bot posts it (Markdown within the forge's body
/// limit `limit`): what `pr_comment_posts` keys a post by, so the same report is never posted
/// twice and a changed one is.
pub fn report_sha256(doc: &ReportDocument, limit: usize) -> String {
    let text = render_markdown(doc, limit);
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// [`post`] with the project's `pr_comments` settings read.
async fn post_run(
    state: &AppState,
    project: &Project,
    pc: &PrCommentSettings,
    run_id: Uuid,
    base_url: &str,
) -> Result<(), StorageError> {
    let store = &state.store;
    let Some(run) = store.run(run_id).await? else {
        return Ok(());
    };
    let Some(pr) = run.summary.pr_number.filter(|n| *n > 0) else {
        return Ok(());
    };
    // The report first: the claim is of this report, so an unchanged one is not sent again.
    let doc = report_document(store, project, &run, base_url).await?;
    // Not analyzed yet (a refresh that ran before a new push's analysis): that analysis ends
    // with the run's own comments job, which posts the report then.
    if doc.verdict.verdict == VerdictLevel::Pending {
        return Ok(());
    }
    let hash = report_sha256(&doc, forge::body_limit(pc.provider));
    if !store
        .claim_pr_comment(run_id, project.id, pc.provider.as_str(), pr, &hash)
        .await?
    {
        return Ok(());
    }
    let outcome = match std::env::var(&pc.token_env).ok().filter(|t| !t.is_empty()) {
        None => Outcome::Failed(format!(
            "the server's environment has no {} (pr_comments.token_env)",
            pc.token_env
        )),
        Some(token) => {
            let http = reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(30))
                .user_agent(concat!("benchtrail-server/", env!("CARGO_PKG_VERSION")))
                .build();
            match http {
                Err(e) => Outcome::Failed(format!("cannot start an HTTP client: {e}")),
                Ok(http) => {
                    let forge = Forge::new(http, pc.clone(), token, pr as u64);
                    match comment(&forge, &doc, &pc.suite, pc.always).await {
                        Ok(done) => done,
                        Err(e) => Outcome::Failed(e.to_string()),
                    }
                }
            }
        }
    };
    match outcome {
        Outcome::Done(what, id) => {
            tracing::info!(run = %run_id, pr, outcome = what, comment = ?id, "PR comment");
            store
                .finish_pr_comment(run_id, what, id.as_deref(), None)
                .await
        }
        Outcome::Failed(why) => {
            tracing::warn!(run = %run_id, pr, error = %why, "PR comment failed");
            store
                .finish_pr_comment(run_id, "failed", None, Some(&why))
                .await
        }
    }
}

/// `doc`'s report in Markdown, in at most `budget` characters.
fn render_markdown(doc: &ReportDocument, budget: usize) -> String {
    render_report(
        &doc.verdict,
        doc.analysis.as_ref(),
        &doc.extras,
        Format::Markdown,
        Some(budget),
    )
}

async fn comment(
    forge: &Forge,
    doc: &ReportDocument,
    suite: &str,
    always: bool,
) -> Result<Outcome, forge::ForgeError> {
    let comments = forge.list().await?;
    let req = CommentRequest {
        project: &doc.project,
        suite,
        level: doc.verdict.verdict,
        always,
        limit: forge.limit(),
    };
    let render = |budget| render_markdown(doc, budget);
    Ok(match plan(find(&comments, &doc.project), req, render) {
        CommentAction::Create { body } => {
            Outcome::Done("created", Some(forge.create(&body).await?))
        }
        CommentAction::Update { id, body } => {
            forge.update(&id, &body).await?;
            Outcome::Done("updated", Some(id))
        }
        CommentAction::Unchanged { id } => Outcome::Done("unchanged", Some(id)),
        CommentAction::Skip => Outcome::Done("skipped", None),
    })
}
