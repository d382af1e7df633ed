//! HTML pages (askama templates from `web/templates`) and embedded static assets.
//!
//! The project page is the project's dashboard ([`dashboard`]): open findings, each branch's
//! newest verdict, sparklines of the key metrics, the filterable series list and recent runs.
//!
//! Pages are rendered on the server from the [`Store`](crate::storage::Store) read methods,
//! so they work without JavaScript and tests can read exact values from them; only the chart
//! on the series page is drawn in the browser (`web/static/series.js` with the vendored
//! uPlot), from the JSON API. Templates are compiled into the binary by askama and assets
//! are embedded with `include_bytes!` (see [`assets`]), so the server needs no files at run
//! time.
//!
//! What the regression analysis stored is read from storage ([`alerts`]): the alerts page by
//! status, a run's alerts and verdict, and the alert markers of a series chart (listed in the
//! page, drawn by `series.js`). Confidence intervals and goodput per SLO profile come from
//! the stored metrics; a result without goodput says "goodput: not computable", never 0.
//!
//! Visibility: a visitor signed in ([`session`], [`sign_in`]) with a token of a private
//! project, or with the admin token, sees that project's pages; to everyone else a project
//! with `public == false` — and its runs, series, alerts and configurations — answers 404
//! exactly like one that does not exist, so that a private project's name cannot be probed.
//! A session with `write` on a project triages its alerts from the alerts and run pages
//! ([`triage`]).

pub mod alerts;
pub mod assets;
pub mod baselines;
mod compare;
pub mod compare_view;
pub mod dashboard;
pub mod format;
pub mod matrix;
pub mod run_deltas;
mod series;
pub mod session;
pub mod sign_in;
pub mod triage;
pub mod validation_view;
mod views;

use crate::app::AppState;
use crate::storage::{Project, StorageError};
use askama::Template;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use session::{ErrorPageText, SiteHeader, Visitor};
use uuid::Uuid;

pub use views::*;

/// Page and static-asset routes: `/`, `/projects/{project}` ([`dashboard`]), `/projects/{project}/alerts`,
/// `/projects/{project}/series/{series_id}`, `/runs/{id}`, `/runs/{id}/matrix` ([`matrix`]),
/// `/compare?head=&base=`,
/// `/configs/{fingerprint}`, `/static/...`; `/sign-in` (GET, POST), `/sign-out` (POST) and
/// `/alerts/{id}/triage` (POST).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(index))
        .route("/sign-in", get(sign_in::form).post(sign_in::sign_in))
        .route("/sign-out", post(sign_in::sign_out))
        .route("/alerts/{id}/triage", post(triage::triage))
        .route("/projects/{project}", get(dashboard::project_page))
        .route("/projects/{project}/alerts", get(alerts::alerts_page))
        .route(
            "/projects/{project}/series/{series_id}",
            get(series::series_page),
        )
        .route("/runs/{id}", get(run_page))
        .route("/runs/{id}/matrix", get(matrix::matrix_page))
        .route("/compare", get(compare::compare_page))
        .route("/compare/report", get(compare::compare_report_page))
        .route("/configs/{fingerprint}", get(config_page))
        .route("/static/{*path}", get(assets::serve))
}

/// Why a page could not be shown; rendered as an HTML error page with the matching status.
#[derive(Debug)]
pub enum PageError {
    /// 404: the thing does not exist or is not visible to the visitor. The text names what
    /// was looked for.
    NotFound(String),
    /// 403: a form without a valid CSRF token, or a visitor whose sign-in does not allow the
    /// change. The text says why and what to do.
    Forbidden(String),
    /// 400: the address lacks what the page needs, or a form does not parse or lacks a field
    /// (the text says what to give).
    BadRequest(String),
    /// 422: a form whose values are refused (a dismissal without a reason). The text says why.
    Unprocessable(String),
    /// 429: too many failed sign-ins from this address; retry after this many seconds.
    TooManyFailures(u64),
    /// 500: storage or rendering failed (details are logged, not shown).
    Internal(String),
}

impl From<StorageError> for PageError {
    fn from(e: StorageError) -> Self {
        PageError::Internal(e.to_string())
    }
}

impl From<askama::Error> for PageError {
    fn from(e: askama::Error) -> Self {
        PageError::Internal(format!("template: {e}"))
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let retry_after = match &self {
            PageError::TooManyFailures(secs) => Some(*secs),
            _ => None,
        };
        let (status, title, message) = match self {
            PageError::NotFound(what) => (StatusCode::NOT_FOUND, "Not found", what),
            PageError::Forbidden(why) => (StatusCode::FORBIDDEN, "Not allowed", why),
            PageError::BadRequest(why) => (StatusCode::BAD_REQUEST, "Bad request", why),
            PageError::Unprocessable(why) => {
                (StatusCode::UNPROCESSABLE_ENTITY, "Not accepted", why)
            }
            PageError::TooManyFailures(secs) => (
                StatusCode::TOO_MANY_REQUESTS,
                "Too many failed sign-ins",
                format!(
                    "Too many unknown tokens were tried from this address; try again in {secs} s."
                ),
            ),
            PageError::Internal(detail) => {
                tracing::error!(%detail, "page failed");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Something went wrong",
                    "The server could not show this page; the error has been logged.".to_string(),
                )
            }
        };
        let text = ErrorPageText { title, message };
        let mut response = render_error(status, &text, SiteHeader::default());
        if let Some(secs) = retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, secs.into());
        }
        // For `session::layer`, which renders it again with the visitor's header.
        response.extensions_mut().insert(text);
        response
    }
}

/// The error page of `status` with `text` under `header`.
fn render_error(status: StatusCode, text: &ErrorPageText, header: SiteHeader) -> Response {
    let page = ErrorPage {
        status: status.as_u16(),
        title: text.title,
        message: text.message.clone(),
        header,
    };
    match page.render() {
        Ok(body) => (status, Html(body)).into_response(),
        // The error template is static; if even it fails, answer in plain text.
        Err(_) => (
            status,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            text.title,
        )
            .into_response(),
    }
}

/// `response` (an error page) rendered again under `header`, keeping its status and headers.
pub(crate) fn error_page(response: Response, text: ErrorPageText, header: SiteHeader) -> Response {
    let (parts, _) = response.into_parts();
    let mut again = render_error(parts.status, &text, header);
    for (name, value) in &parts.headers {
        if *name != header::CONTENT_LENGTH {
            again.headers_mut().insert(name.clone(), value.clone());
        }
    }
    again
}

/// A rendered page, or the error page.
pub(crate) type PageResult = Result<Html<String>, PageError>;

/// The project with this slug if `visitor` may see it; one they may not see is the 404 of a
/// missing one.
pub(crate) async fn visible_project(
    state: &AppState,
    visitor: &Visitor,
    slug: &str,
) -> Result<Project, PageError> {
    match state.store.project(slug).await? {
        Some(p) if visitor.may_read(&p) => Ok(p),
        _ => Err(PageError::NotFound(format!(
            "There is no project “{slug}”."
        ))),
    }
}

/// `GET /`: the projects the visitor may see (the public ones, and their session's).
async fn index(State(state): State<AppState>, visitor: Visitor) -> PageResult {
    let projects = state.store.list_projects().await?;
    let page = IndexPage {
        projects: projects
            .iter()
            .filter(|p| visitor.may_read(p))
            .map(ProjectView::new)
            .collect(),
        header: visitor.header(),
    };
    Ok(Html(page.render()?))
}

/// `GET /runs/{id}`: run metadata, files and results.
async fn run_page(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(id): Path<String>,
) -> PageResult {
    let not_found = || PageError::NotFound(format!("There is no run “{id}”."));
    let uuid = Uuid::parse_str(&id).map_err(|_| not_found())?;
    let run = state.store.run(uuid).await?.ok_or_else(not_found)?;
    let project = match state.store.project(&run.summary.project).await? {
        Some(p) if visitor.may_read(&p) => p,
        _ => return Err(not_found()),
    };
    let profiles = state.store.settings(&project).await?.settings.slo_profiles;
    let mut page = RunPage::new(&project, &run, &profiles);
    let run_alerts = state.store.run_alerts(run.summary.id).await?;
    // One read of the stored analysis serves both the verdict and the deltas.
    let deltas = run_deltas::run_deltas(&state, &project, &run).await?;
    let analysis = deltas.as_ref().map(|d| &d.analysis);
    page.verdict = alerts::run_verdict(&state.store, &project, &run, analysis, &run_alerts).await?;
    page.acknowledged = alerts::acknowledgement(page.verdict.as_ref(), &run_alerts);
    page.alerts = alerts::alert_views(&run_alerts, &project, &state.store).await?;
    page.triage = triage::TriageForms::for_visitor(&visitor, &project, triage::ReturnTo::Run(uuid));
    page.baselines = baselines::run_baselines(&state.store, &project, &run).await?;
    if let Some(deltas) = &deltas {
        page.set_deltas(deltas);
    }
    page.header = visitor.header();
    Ok(Html(page.render()?))
}

/// Runs the configuration page lists (newest first); the rest are on the project pages.
const CONFIG_RUNS: i64 = 50;

/// `GET /configs/{fingerprint}`: a whole configuration and how to reproduce it.
async fn config_page(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(fingerprint): Path<String>,
) -> PageResult {
    let not_found = || PageError::NotFound(format!("There is no configuration “{fingerprint}”."));
    // Fingerprints are lower-case SHA-256 hex; anything else cannot exist.
    if fingerprint.len() != 64
        || !fingerprint
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(not_found());
    }
    let config = state
        .store
        .config(&fingerprint)
        .await?
        .ok_or_else(not_found)?;
    // Shown only if a project the visitor may see uses it.
    let projects = state.store.config_projects(&fingerprint).await?;
    if !projects.iter().any(|p| visitor.may_read(p)) {
        return Err(not_found());
    }
    let mut page = ConfigPage::new(&config);
    let visible: Vec<&Project> = projects.iter().filter(|p| visitor.may_read(p)).collect();
    page.projects = visible.iter().map(|p| ProjectView::new(p)).collect();
    let ids: Vec<i64> = visible.iter().map(|p| p.id).collect();
    let runs = state
        .store
        .config_runs(&fingerprint, &ids, CONFIG_RUNS + 1)
        .await?;
    page.runs_truncated = runs.len() as i64 > CONFIG_RUNS;
    page.runs = runs
        .iter()
        .take(CONFIG_RUNS as usize)
        .filter_map(|r| {
            let project = visible.iter().find(|p| p.slug == r.project)?;
            Some(ConfigRunRow::new(project, r))
        })
        .collect();
    page.header = visitor.header();
    Ok(Html(page.render()?))
}
