//! Runs: upload, list, read, and the files they were read from.

use super::access::{readable_project, UploadAccess};
use super::json::ApiJson;
use super::query::ApiQuery;
use super::{page_limit, project_or_404};
use crate::app::AppState;
use crate::auth::{Bearer, Caller};
use crate::error::{ApiError, ApiResult, Problem};
use crate::storage::{Inserted, Page, Project, RunSummary, StoredRun};
use crate::{analysis, ingest};
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use benchtrail_core::UploadDocument;
use serde::Deserialize;
use uuid::Uuid;

pub use benchtrail_core::wire::UploadReceipt;

/// `POST /api/v1/projects/{project}/runs`: stores one run in one transaction. 201 when stored,
/// 200 when a run with the same id was already stored (idempotent retry), 422 with a pointer
/// to the fault when a file or result is wrong. The body may be sent with
/// `Content-Encoding: gzip`; the 64 MiB limit counts its decompressed bytes.
#[utoipa::path(post, path = "/api/v1/projects/{project}/runs", tag = "runs",
    extensions(("x-benchtrail-access" = json!({"needs": "upload", "of": "project"}))),
    request_body = benchtrail_core::UploadDocument,
    params(("project" = String, Path, description = "Project slug")),
    responses((status = 201, description = "Stored", body = UploadReceipt), (status = 200, description = "Already stored (same run id)", body = UploadReceipt),
        (status = 401, description = "No token, or an unknown one: this needs a token of the project with `upload`", body = Problem, content_type = "application/problem+json", headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token lacks `upload`, or belongs to another project", body = Problem, content_type = "application/problem+json"),
        (status = 400, description = "Malformed body; `pointer` names the field. Also a `Content-Encoding: gzip` body that is not valid gzip", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body over 64 MiB (decompressed, for a gzip body), a file over 48 MiB, or a file whose JSON would take over 512 MiB once parsed; `limit` is the bound, `pointer` the file", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "A `Content-Encoding` other than `gzip`", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "A file or result is wrong, or a field over its bound (`limit`: too many tags, a branch too long, ...); `pointer` names it", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such project, or a private one the caller may not read (answered alike)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The run id is taken: stored with other content, or by another project (which is not named)", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn upload(
    State(state): State<AppState>,
    UploadAccess(project): UploadAccess,
    headers: axum::http::HeaderMap,
    ApiJson(doc): ApiJson<UploadDocument>,
) -> ApiResult<(StatusCode, Json<UploadReceipt>)> {
    let started = std::time::Instant::now();
    // Checked first, so a retry of a bad upload is refused like the first attempt.
    let stored_settings = state.store.settings(&project).await?;
    let settings = &stored_settings.settings;
    let run = ingest::prepare_with(&project, settings, &doc, chrono::Utc::now())?;
    let prepared = started.elapsed();
    // The run holds what is stored; the document (every file's text: 25 MiB for a large
    // `--save-detailed` file) is not kept through the insert and the analysis.
    let client_run_id = doc.run.id;
    drop(doc);
    if let Some(id) = client_run_id {
        if let Some(existing) = state.store.run(id).await? {
            if existing.summary.project != project.slug {
                return Err(ApiError::Conflict(crate::storage::run_id_taken(id)));
            }
            if !same_upload(&existing, &run) {
                return Err(ApiError::Conflict(format!(
                    "run {id} is already stored with another commit, other files or other \
                     quality results; \
                     a retry must resend the same upload (or use a new run id)"
                )));
            }
            // Stored nothing, but counted (`upload_count`).
            state.store.count_reupload(id).await?;
            let verdict = stored_verdict(&state, &project, id).await;
            return Ok((
                StatusCode::OK,
                Json(receipt(id, false, existing.results.len(), verdict)),
            ));
        }
    }
    let count = run.results.len();
    // Backpressure: while the analysis queue is full, a new run waits (briefly here, then its
    // client retries), so an acknowledged upload is analyzed within seconds, not hours later.
    // (A retry of a stored run was answered above.)
    let counts = state.analyzer.wait_for_room(&state.store).await?;
    let queued = counts.jobs;
    if state.analyzer.is_full(queued) {
        let retry_after_secs = state.analyzer.retry_after_secs(queued);
        return Err(ApiError::Overloaded {
            retry_after_secs,
            detail: format!(
                "{queued} analyses are queued; this upload was not stored: retry in \
                 {retry_after_secs} s"
            ),
        });
    }
    // Other uploads' analyses queued or running: then this one's is left to the workers
    // (`Analyzer::after_upload` says why).
    let others_queued = counts.commit_jobs > 0;
    // The commit's analysis job is stored with the run; this upload holds its lease and
    // analyzes it before answering when it can (see `analysis::jobs`).
    let (inserted, ticket) = state
        .store
        .insert_run_leased(&run, Some(state.analyzer.lease()))
        .await?;
    let stored = started.elapsed();
    let status = match inserted {
        Inserted::Created => StatusCode::CREATED,
        Inserted::AlreadyStored => StatusCode::OK,
    };
    tracing::info!(project = %project.slug, run = %run.id, results = count, "run uploaded");
    let base = super::report::base_url(&state, &headers);
    state.analyzer.note_base_url(&base);
    if let Some(ticket) = ticket {
        // The PR comment follows the analysis as a job of its own (posted by a worker).
        let comments = run.pr_number.is_some() && settings.pr_comments.is_some();
        state
            .analyzer
            .after_upload(
                &state.store,
                &project,
                &run,
                ticket,
                comments,
                others_queued,
            )
            .await;
    }
    let analyzed = started.elapsed();
    let verdict = match inserted {
        // The run as stored is this request's: its summary need not be read back.
        Inserted::Created => logged(
            run.id,
            analysis::verdict_of_new_run(&state.store, &project, &run, &stored_settings)
                .await
                .map(Some),
        ),
        Inserted::AlreadyStored => stored_verdict(&state, &project, run.id).await,
    };
    // Where an upload's time goes (cumulative milliseconds), for `history_growth`.
    tracing::debug!(
        run = %run.id,
        prepared_ms = prepared.as_secs_f64() * 1e3,
        stored_ms = stored.as_secs_f64() * 1e3,
        analyzed_ms = analyzed.as_secs_f64() * 1e3,
        answered_ms = started.elapsed().as_secs_f64() * 1e3,
        "upload timed"
    );
    Ok((
        status,
        Json(receipt(
            run.id,
            status == StatusCode::CREATED,
            count,
            verdict,
        )),
    ))
}

/// The verdict of a run's stored analysis, so that a retried (or concurrent) upload of a stored
/// run answers with it too: `pending` while its analysis is queued; `None` only when it cannot
/// be read.
async fn stored_verdict(
    state: &AppState,
    project: &Project,
    run_id: Uuid,
) -> Option<analysis::Verdict> {
    logged(
        run_id,
        analysis::current_verdict(&state.store, project, run_id).await,
    )
}

/// A verdict read for a receipt; a failed read is logged and answered with none (the upload
/// itself is stored).
fn logged(
    run_id: Uuid,
    read: Result<Option<analysis::Verdict>, crate::storage::StorageError>,
) -> Option<analysis::Verdict> {
    read.unwrap_or_else(|e| {
        tracing::warn!(run = %run_id, error = %e, "reading a run's analysis failed");
        None
    })
}

/// `Content-Disposition: attachment` for a stored file name (which may hold folders, quotes, control or
/// non-ASCII characters): an ASCII fallback `filename` and the exact name as RFC 5987/6266
/// `filename*`, so the header is always valid.
fn content_disposition(name: &str) -> String {
    let base = name.rsplit('/').next().unwrap_or(name);
    let ascii: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut encoded = String::new();
    for b in base.bytes() {
        if b.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&b) {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    // `attachment`: an uploaded file is data to save, never a page to render in the site's
    // origin (a console log may well start with `<html><script>`).
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

/// True when a stored run and a new upload with its id are the same upload: same commit and
/// byte-identical files in the same order, and the same quality results. (Metadata such as tags may differ on a retry
/// without changing what was measured.)
fn same_upload(existing: &StoredRun, new: &crate::storage::NewRun) -> bool {
    existing.summary.commit_sha == new.commit_sha
        && existing.files.len() == new.files.len()
        && existing
            .files
            .iter()
            .zip(&new.files)
            .all(|(a, b)| a.sha256 == b.sha256)
        && existing.quality == new.quality
}

fn receipt(
    run_id: Uuid,
    created: bool,
    results: usize,
    verdict: Option<analysis::Verdict>,
) -> UploadReceipt {
    UploadReceipt {
        run_id,
        created,
        results,
        path: format!("/runs/{run_id}"),
        verdict: verdict.as_ref().map(|v| v.verdict),
        verdict_detail: verdict,
    }
}

/// Query of `GET /api/v1/projects/{project}/runs`.
#[derive(Debug, Deserialize)]
pub(super) struct ListRuns {
    branch: Option<String>,
    commit: Option<String>,
    cursor: Option<String>,
    limit: Option<i64>,
}

#[utoipa::path(get, path = "/api/v1/projects/{project}/runs", tag = "runs",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "project"}))),
    params(("project" = String, Path, description = "Project slug"), ("branch" = Option<String>, Query),
        ("commit" = Option<String>, Query, description = "Full commit SHA: that commit's runs on `branch` (default: the project's default branch), oldest first, in one page"),
        ("cursor" = Option<String>, Query), ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "1–500, default 50")),
    responses((status = 200, body = Page<RunSummary>)))]
pub(super) async fn list(
    State(state): State<AppState>,
    bearer: Bearer,
    Path(slug): Path<String>,
    ApiQuery(q): ApiQuery<ListRuns>,
) -> ApiResult<Json<Page<RunSummary>>> {
    let project = readable_project(&state, &bearer.caller(&state).await?, &slug).await?;
    let limit = page_limit(q.limit)?;
    super::check_cursor(q.cursor.as_deref(), super::CursorKind::Sequence)?;
    if let Some(commit) = &q.commit {
        // One commit's runs (its repeats) on one branch: what `benchtrail check --commit` and a
        // CI gate read; few enough for one page.
        let branch = q.branch.as_deref().unwrap_or(&project.default_branch);
        let ids = state
            .store
            .commit_runs(project.id, branch, &commit.to_ascii_lowercase())
            .await?;
        let mut items = Vec::with_capacity(ids.len());
        for id in ids.into_iter().take(limit as usize) {
            items.extend(state.store.run(id).await?.map(|r| r.summary));
        }
        return Ok(Json(Page {
            items,
            next_cursor: None,
        }));
    }
    Ok(Json(
        state
            .store
            .list_runs(project.id, q.branch.as_deref(), q.cursor.as_deref(), limit)
            .await?,
    ))
}

/// The summary of a run the caller may read, and its project, or 404 (also for a run of a
/// private project the caller may not read: answered alike).
pub(super) async fn readable_run_summary(
    state: &AppState,
    caller: &Caller,
    id: &str,
) -> ApiResult<(RunSummary, Project)> {
    let not_found = || ApiError::NotFound(format!("no run `{id}`"));
    let id: Uuid = id.parse().map_err(|_| not_found())?;
    let run = state.store.run_summary(id).await?.ok_or_else(not_found)?;
    let project = project_or_404(state, &run.project).await?;
    caller.require_read(&project).map_err(|_| not_found())?;
    Ok((run, project))
}

/// [`readable_run_summary`] with the run's files and results (the run's values: 612 rows at
/// 18 cells), for the endpoints that answer with them.
pub(super) async fn readable_run(
    state: &AppState,
    caller: &Caller,
    id: &str,
) -> ApiResult<StoredRun> {
    let (summary, _) = readable_run_summary(state, caller, id).await?;
    let run = state.store.run(summary.id).await?;
    run.ok_or_else(|| ApiError::NotFound(format!("no run `{id}`")))
}

#[utoipa::path(get, path = "/api/v1/runs/{id}", tag = "runs",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "run"}))), params(("id" = Uuid, Path)),
    responses((status = 200, body = StoredRun), (status = 404, body = Problem, content_type = "application/problem+json")))]
pub(super) async fn get_one(
    State(state): State<AppState>,
    bearer: Bearer,
    Path(id): Path<String>,
) -> ApiResult<Json<StoredRun>> {
    Ok(Json(
        readable_run(&state, &bearer.caller(&state).await?, &id).await?,
    ))
}

/// `GET /api/v1/runs/{id}/files/{n}`: the n-th uploaded file, byte for byte, as a download.
#[utoipa::path(get, path = "/api/v1/runs/{id}/files/{n}", tag = "runs",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "run"}))), params(("id" = Uuid, Path), ("n" = i64, Path)),
    responses((status = 200, description = "The file as uploaded, as an attachment (never rendered by a browser)", content_type = "text/plain",
            headers(("Content-Disposition" = String, description = "`attachment` with the file's name"), ("X-Content-Type-Options" = String, description = "`nosniff`"))),
        (status = 404, description = "No such run or file, or a run of a private project the caller may not read (answered alike)", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn file(
    State(state): State<AppState>,
    bearer: Bearer,
    Path((id, n)): Path<(String, i64)>,
) -> ApiResult<impl IntoResponse> {
    let (run, _) = readable_run_summary(&state, &bearer.caller(&state).await?, &id).await?;
    let (info, content) = state
        .store
        .run_file(run.id, n)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("run `{id}` has no file {n}")))?;
    let disposition = content_disposition(&info.name);
    Ok((
        [
            (
                header::CONTENT_TYPE,
                "text/plain; charset=utf-8".to_string(),
            ),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        content,
    ))
}
