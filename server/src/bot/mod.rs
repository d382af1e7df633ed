//! The server as the PR bot: after analysing an upload that names a pull request, in a
//! project whose settings hold `pr_comments` ([`benchtrail_core::pr_comments`]), it posts the
//! run's report as the project's one sticky comment, or updates it
//! ([`benchtrail_core::report::comment::plan`]: the same comment and section rules as
//! `benchtrail check --github-comment`). In the background, after the upload's response.
//!
//! * Never twice for one run: the run is claimed in `pr_comment_posts` before the forge is
//!   asked (a retried upload stores nothing and posts nothing; two servers on one database
//!   claim once), and the outcome is recorded there.
//! * One at a time per project in this process, so two uploads of one PR cannot both find no
//!   comment and create two.
//! * The token is read from the server's environment variable the settings name, when
//!   posting; it is never stored or shown.
//! * Forge faults are retried ([`forge`]: 5xx, 429, rate limits with `Retry-After` or
//!   `x-ratelimit-reset`); a final fault is logged and recorded as `failed` with its reason.

pub mod forge;

use crate::analysis::report::report_document;
use crate::app::AppState;
use crate::storage::{Project, StorageError};
use benchtrail_core::report::comment::{find, plan, CommentAction, CommentRequest};
use benchtrail_core::report::render::{render_report, Format};
use forge::Forge;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use uuid::Uuid;

/// Reports run `run_id` to its pull request in the background, if the project's settings ask
/// for it and the run names one. `base_url`: the server's address for the report's links.
pub fn spawn(state: AppState, project: Project, run_id: Uuid, base_url: String) {
    tokio::spawn(async move {
        if let Err(e) = post(&state, &project, run_id, &base_url).await {
            tracing::warn!(run = %run_id, error = %e, "PR comment: storage error");
        }
    });
}

/// What one post did, as recorded.
enum Outcome {
    Done(&'static str, Option<String>),
    Failed(String),
}

/// The project's lock: one post at a time per project in this process.
fn project_lock(project_id: i64) -> Arc<tokio::sync::Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<i64, Arc<tokio::sync::Mutex<()>>>>> = OnceLock::new();
    let mut map = LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    map.entry(project_id).or_default().clone()
}

/// Posts run `run_id`'s report (see the module documentation).
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
    let Some(run) = state.store.run(run_id).await? else {
        return Ok(());
    };
    let Some(pr) = run.summary.pr_number.filter(|n| *n > 0) else {
        return Ok(());
    };
    let store = &state.store;
    if !store
        .claim_pr_comment(run_id, project.id, pc.provider.as_str(), pr)
        .await?
    {
        return Ok(());
    }
    let lock = project_lock(project.id);
    let _one_at_a_time = lock.lock().await;
    let outcome = match std::env::var(&pc.token_env).ok().filter(|t| !t.is_empty()) {
        None => Outcome::Failed(format!(
            "the server's environment has no {} (pr_comments.token_env)",
            pc.token_env
        )),
        Some(token) => {
            let doc = report_document(store, project, &run, base_url).await?;
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

async fn comment(
    forge: &Forge,
    doc: &benchtrail_core::report::extras::ReportDocument,
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
    let render = |budget| {
        render_report(
            &doc.verdict,
            doc.analysis.as_ref(),
            &doc.extras,
            Format::Markdown,
            Some(budget),
        )
    };
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
