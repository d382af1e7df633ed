//! `GET /api/v1/compare/report?base={run}&head={run}`: the capacity part of the validation
//! report (issue 14): for every load sweep measured in both runs and every SLO profile of the
//! project, capacity at SLO baseline → candidate, the change in requests per hour, the slowest
//! users' wait at a typical load, the finish-time trade-offs and the failed requests
//! ([`benchtrail_core::capacity::capacity_report`]), with both runs' quality results, the
//! warnings (quantization without quality, small samples, failed requests, missing cells of
//! the standard matrix), the cost at SLO when the project sets `cost.accelerator_hour_usd`, and
//! the overall answer. `format=json` (default) answers the typed model with its summary
//! paragraph and answer sentence; `format=markdown` the same rendered as Markdown
//! ([`benchtrail_core::capacity::render::markdown`]); `format=html` a standalone HTML document
//! with the sections the page `/compare/report` shows.
//!
//! Two runs whose configuration is the change (an FP8 KV cache is another series key) are
//! paired cell by cell as the compare page pairs them
//! ([`benchtrail_core::report::pairing::pair_by_cell`]); the quantization change is read from
//! the results as stored.

use super::query::ApiQuery;
use super::run_results::bench_results;
use super::runs::readable_run;
use crate::app::AppState;
use crate::auth::Bearer;
use crate::error::{ApiError, ApiResult, Problem};
use crate::pages::compare_view::CapacityView;
use crate::pages::validation_view::{ReportDocument, ValidationView};
use crate::storage::SampleColumns;
use askama::Template;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use benchtrail_core::capacity::{
    capacity_report, render, render_warnings, CapacityReport, ReportOptions, ReportSide,
    DEFAULT_TARGET,
};
use benchtrail_core::report::pairing::pair_by_cell;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Query of `GET /api/v1/compare/report`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct CompareReportQuery {
    /// The baseline run's id.
    #[param(required = true, value_type = Uuid)]
    base: Option<String>,
    /// The candidate run's id, of the baseline's project.
    #[param(required = true, value_type = Uuid)]
    head: Option<String>,
    /// One SLO profile of the project's settings (`slo_profiles`) by name; default: every one.
    profile: Option<String>,
    /// Attainment target, a share in (0, 1]: the capacity is the highest load at which at
    /// least this share of requests meets every threshold. Default 0.95.
    #[param(exclusive_minimum = 0, maximum = 1)]
    target: Option<f64>,
    /// The load the slowest users' wait is given at, in the sweep's unit (concurrent requests
    /// or req/s), > 0. Default, per profile: the highest load measured in both runs at or below
    /// the baseline's capacity (else the lowest load measured in both).
    #[param(exclusive_minimum = 0)]
    typical_load: Option<f64>,
    /// `json` (default), `markdown` or `html` (a standalone document).
    format: Option<String>,
}

/// The answer of `GET /api/v1/compare/report?format=json`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct CompareReport {
    /// The project both runs belong to.
    pub project: String,
    /// The baseline run.
    pub base: Uuid,
    /// The candidate run.
    pub head: Uuid,
    /// The answer in plain words, written from `report`
    /// ([`benchtrail_core::capacity::render::summary`]).
    pub summary: String,
    /// The overall answer in one sentence, written from `report.answer`
    /// ([`benchtrail_core::capacity::render_warnings::answer_sentence`]).
    pub answer: String,
    /// Each of `report.warnings` in one sentence, in the same order
    /// ([`benchtrail_core::capacity::render_warnings::warning_sentence`]).
    pub warnings: Vec<String>,
    /// The typed model.
    pub report: CapacityReport,
}

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Markdown,
    Html,
}

/// Capacity at SLO of two runs: baseline (`base`) against candidate (`head`).
///
/// Per load sweep measured in both runs and per SLO profile: capacity baseline → candidate,
/// the change in requests per hour, the slowest users' wait at the typical load, the
/// finish-time trade-offs and the failed requests, with a summary paragraph.
#[utoipa::path(get, path = "/api/v1/compare/report", tag = "alerts", operation_id = "compare_report",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "runs"}))),
    params(CompareReportQuery),
    responses(
        (status = 200, description = "The validation report: the typed model with its summary, answer and warnings (`format=json`, the default), Markdown (`markdown`) or a standalone HTML document (`html`)",
            content((CompareReport = "application/json"), (String = "text/markdown"), (String = "text/html"))),
        (status = 400, description = "A missing `base` or `head`, an unknown format, a target outside (0, 1] or a typical load that is not a positive number; `parameter` names it", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such run (`base` or `head`), or one of a private project the caller may not read (answered alike)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`head` belongs to another project than `base`, or `profile` is not a profile of the project; `parameter` names it", body = Problem, content_type = "application/problem+json")))]
pub(super) async fn report(
    State(state): State<AppState>,
    bearer: Bearer,
    ApiQuery(q): ApiQuery<CompareReportQuery>,
) -> ApiResult<Response> {
    let bad = |parameter: &str, detail: String| ApiError::BadParameter {
        parameter: parameter.into(),
        detail,
    };
    let format = match q.format.as_deref().unwrap_or("json") {
        "json" => Format::Json,
        "markdown" | "md" => Format::Markdown,
        "html" => Format::Html,
        other => {
            return Err(bad(
                "format",
                format!("`format`: `{other}` is not a report format: use json, markdown or html"),
            ))
        }
    };
    let target = q.target.unwrap_or(DEFAULT_TARGET);
    if !(target > 0.0 && target <= 1.0) {
        return Err(bad(
            "target",
            format!("`target`: {target} is not a share in (0, 1], e.g. 0.95"),
        ));
    }
    if let Some(l) = q.typical_load.filter(|l| !(*l > 0.0 && l.is_finite())) {
        return Err(bad(
            "typical_load",
            format!("`typical_load`: {l} is not a positive load"),
        ));
    }
    let (Some(base_id), Some(head_id)) = (q.base.as_deref(), q.head.as_deref()) else {
        let missing = if q.base.is_none() { "base" } else { "head" };
        return Err(bad(missing, format!("`{missing}`: a run id is required")));
    };
    let caller = bearer.caller(&state).await?;
    let base = readable_run(&state, &caller, base_id).await?;
    let head = readable_run(&state, &caller, head_id).await?;
    if head.summary.project != base.summary.project {
        return Err(ApiError::UnprocessableParameter {
            parameter: "head".into(),
            detail: format!(
                "`head`: run {} belongs to another project than the baseline run {} (`{}`): \
                 a report compares two runs of one project",
                head.summary.id, base.summary.id, base.summary.project
            ),
        });
    }
    let project = super::project_or_404(&state, &base.summary.project).await?;
    let settings = state.store.settings(&project).await?.settings;
    let profiles = match &q.profile {
        None => settings.slo_profiles.clone(),
        Some(name) => {
            let p = settings
                .slo_profiles
                .iter()
                .find(|p| &p.name == name)
                .ok_or_else(|| ApiError::UnprocessableParameter {
                    parameter: "profile".into(),
                    detail: format!(
                        "`profile`: `{name}` is not an SLO profile of project `{}` (its profiles: {})",
                        project.slug,
                        settings
                            .slo_profiles
                            .iter()
                            .map(|p| format!("`{}`", p.name))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                })?;
            vec![p.clone()]
        }
    };
    let (b, h) = (
        bench_results(&state, &base, SampleColumns::WithoutItl).await?,
        bench_results(&state, &head, SampleColumns::WithoutItl).await?,
    );
    let (paired, _) = pair_by_cell(&b, &h, &project.key_fields);
    let report = capacity_report(
        ReportSide {
            results: &paired,
            quality: &base.quality,
            as_stored: Some(&b),
        },
        ReportSide::new(&h, &head.quality),
        &project.key_fields,
        &profiles,
        ReportOptions {
            target,
            typical_load: q.typical_load,
            ..ReportOptions::of_project(&settings)
        },
    );
    match format {
        Format::Markdown => Ok((
            [(header::CONTENT_TYPE, "text/markdown; charset=utf-8")],
            render::markdown(&report),
        )
            .into_response()),
        Format::Html => {
            let doc = ReportDocument {
                title: format!(
                    "Validation report: {}, {} → {}",
                    project.slug,
                    short(&base.summary.commit_sha),
                    short(&head.summary.commit_sha)
                ),
                capacity: CapacityView::new(&report),
                validation: ValidationView::new(&report),
                answer: render_warnings::answer_sentence(&report.answer),
                summary: render::summary(&report),
            };
            let html = doc
                .render()
                .map_err(|e| ApiError::Internal(format!("report document: {e}")))?;
            Ok(([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response())
        }
        Format::Json => Ok(Json(CompareReport {
            project: project.slug,
            base: base.summary.id,
            head: head.summary.id,
            summary: render::summary(&report),
            answer: render_warnings::answer_sentence(&report.answer),
            warnings: render_warnings::warning_sentences(&report),
            report,
        })
        .into_response()),
    }
}

/// The first 7 characters of a commit SHA.
fn short(sha: &str) -> &str {
    sha.get(..7).unwrap_or(sha)
}
