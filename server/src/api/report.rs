//! `GET /api/v1/runs/{id}/report?format=markdown|text|json[&limit=N]`: a run's report, the
//! same one `benchtrail check` prints and posts as the PR comment
//! ([`benchtrail_core::report::render`]): the verdict first, then the findings by importance,
//! missing cells, warnings, per-cell tables, undecided changes, sparklines of the flagged
//! series and links. `limit` (characters) sheds the least important sections to fit, as a PR
//! comment must (GitHub: 65,536); `json` is the typed [`ReportDocument`] the text is written
//! from.

use super::project_or_404;
use super::query::ApiQuery;
use super::runs::readable_run;
use crate::analysis::report::report_document;
use crate::app::AppState;
use crate::auth::Bearer;
use crate::error::{ApiError, ApiResult, Problem};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::Json;
use benchtrail_core::report::extras::ReportDocument;
use benchtrail_core::report::render::{render_report, Format};
use serde::Deserialize;

/// The smallest `limit` accepted: room for the headline and the findings of a small report.
pub const MIN_LIMIT: usize = 1_000;

/// Query of `GET /api/v1/runs/{id}/report`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct ReportQuery {
    /// `markdown` (default), `text` or `json`.
    format: Option<String>,
    /// Longest text in characters (≥ 1000); sections are left out, least important first.
    #[param(minimum = 1000)]
    limit: Option<usize>,
}

/// `GET /api/v1/runs/{id}/report`.
#[utoipa::path(get, path = "/api/v1/runs/{id}/report", tag = "alerts",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "run"}))),
    params(("id" = Uuid, Path), ReportQuery),
    responses(
        (status = 200, description = "The report: Markdown (`format=markdown`, the default), plain text (`text`) or the typed document (`json`)",
            content((String = "text/markdown"), (String = "text/plain"), (ReportDocument = "application/json"))),
        (status = 400, description = "An unknown format or a limit below 1000", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such run", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn report(
    State(state): State<AppState>,
    bearer: Bearer,
    headers: HeaderMap,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<ReportQuery>,
) -> ApiResult<Response> {
    let format = match q.format.as_deref().unwrap_or("markdown") {
        "markdown" | "md" => Some(Format::Markdown),
        "text" => Some(Format::Terminal),
        "json" => None,
        other => {
            return Err(ApiError::BadParameter {
                parameter: "format".into(),
                detail: format!(
                    "`format`: `{other}` is not a report format: use markdown, text or json"
                ),
            })
        }
    };
    if let Some(limit) = q.limit.filter(|l| *l < MIN_LIMIT) {
        return Err(ApiError::BadParameter {
            parameter: "limit".into(),
            detail: format!(
                "`limit`: {limit} is below the smallest report, {MIN_LIMIT} characters"
            ),
        });
    }
    let run = readable_run(&state, &bearer.caller(&state).await?, &id).await?;
    let project = project_or_404(&state, &run.summary.project).await?;
    let base = base_url(&state, &headers);
    let doc = report_document(&state.store, &project, &run, &base).await?;
    let Some(format) = format else {
        return Ok(Json(doc).into_response());
    };
    let text = render_report(
        &doc.verdict,
        doc.analysis.as_ref(),
        &doc.extras,
        format,
        q.limit,
    );
    let content_type = match format {
        Format::Markdown => "text/markdown; charset=utf-8",
        Format::Terminal => "text/plain; charset=utf-8",
    };
    Ok(([(header::CONTENT_TYPE, content_type)], text).into_response())
}

/// The server's address for absolute links: `--public-url`, else `X-Forwarded-Proto` (or
/// `http`) and the request's `X-Forwarded-Host` or `Host`.
pub(crate) fn base_url(state: &AppState, headers: &HeaderMap) -> String {
    if let Some(u) = &state.public_url {
        return u.to_string();
    }
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let proto = get("x-forwarded-proto").unwrap_or("http");
    let host = get("x-forwarded-host")
        .or_else(|| get("host"))
        .unwrap_or("localhost");
    format!("{proto}://{host}")
}
