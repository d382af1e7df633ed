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
pub mod session;
pub mod sign_in;
pub mod triage;
pub mod validation_view;
mod views;

use crate::app::AppState;
use crate::storage::{Project, StorageError};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use session::{ErrorPageText, SiteHeader, Visitor};
use uuid::Uuid;

pub use views::*;

/// Page and static-asset routes: `/`, `/projects/{project}` ([`dashboard`]), `/projects/{project}/alerts`,
/// `/projects/{project}/series/{series_id}`, `/runs/{id}`, `/compare?head=&base=`,
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
        .route("/projects/{project}/series/{series_id}", get(series_page))
        .route("/runs/{id}", get(run_page))
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

/// Query of the series page.
#[derive(Debug, Deserialize)]
struct SeriesQuery {
    /// Branch to plot; the project's default branch when absent or empty.
    branch: Option<String>,
}

/// `GET /projects/{project}/series/{series_id}?branch=B`: chart and table of one series.
async fn series_page(
    State(state): State<AppState>,
    visitor: Visitor,
    Path((slug, series_id)): Path<(String, String)>,
    Query(query): Query<SeriesQuery>,
) -> PageResult {
    let project = visible_project(&state, &visitor, &slug).await?;
    let not_found = || {
        PageError::NotFound(format!(
            "There is no series “{series_id}” in project “{slug}”."
        ))
    };
    let series = state
        .store
        .series(&series_id)
        .await?
        .filter(|s| s.project == project.slug)
        .ok_or_else(not_found)?;
    let branch = query
        .branch
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| project.default_branch.clone());
    let points = state
        .store
        .series_points(&series.series_id, &branch)
        .await?;
    // Sibling statistics: same configuration, cell and metric. The cell filter is a substring
    // match, so the exact key is checked here.
    let sibling_filter = crate::storage::SeriesFilter {
        metric: Some(series.metric.clone()),
        cell: Some(series.cell_key.clone()),
        ..Default::default()
    };
    let siblings = state
        .store
        .list_series(project.id, &sibling_filter, None, 100)
        .await?
        .items;
    let same_place: Vec<_> = siblings
        .into_iter()
        .filter(|s| s.series_key == series.series_key && s.cell_key == series.cell_key)
        .collect();
    // Statistics under the same SLO profile; the same statistic under the other profiles
    // (goodput under different profiles are different series).
    // (Another series of the same profile and statistic — the tool's goodput under other
    // thresholds — is reached through the profile links instead.)
    let mut stat_links: Vec<_> = same_place
        .iter()
        .filter(|s| s.slo_profile == series.slo_profile)
        .filter(|s| s.series_id == series.series_id || s.stat != series.stat)
        .map(|s| StatLink {
            current: s.series_id == series.series_id,
            stat: s.stat.to_string(),
            series_id: s.series_id.clone(),
        })
        .collect();
    stat_links.sort_by_key(|s| format::stat_order(&s.stat));
    let mut profile_links: Vec<_> = same_place
        .iter()
        .filter(|s| s.stat == series.stat && s.slo_profile.is_some())
        .map(|s| StatLink {
            current: s.series_id == series.series_id,
            stat: s.slo_profile.clone().unwrap_or_default(),
            series_id: s.series_id.clone(),
        })
        .collect();
    profile_links.sort_by_cached_key(|s| format::profile_order(Some(&s.stat)));
    // The tool's own goodput has one series per set of thresholds: name each by them.
    let tool = benchtrail_core::slo::TOOL_PROFILE;
    let mut tool_text = None;
    if series.slo_profile.as_deref() == Some(tool) {
        tool_text = tool_thresholds(&state, &project, &series.series_id).await?;
    }
    if profile_links.iter().filter(|l| l.stat == tool).count() > 1 {
        for l in profile_links.iter_mut().filter(|l| l.stat == tool) {
            let text = tool_thresholds(&state, &project, &l.series_id).await?;
            let text = text.unwrap_or_else(|| "thresholds unknown".into());
            let short = text
                .strip_prefix("the tool's own: ")
                .unwrap_or("thresholds unknown");
            l.stat = format!("tool ({short})");
        }
    }
    let settings = state.store.settings(&project).await?.settings;
    let profiles = settings.slo_profiles;
    let mut page = SeriesPage::new(
        &project,
        &series,
        branch,
        &points,
        SeriesLinks {
            siblings: stat_links,
            other_profiles: profile_links,
        },
        &profiles,
    );
    page.baseline_window = settings.detection.engine.baseline_window;
    baselines::mark_pinned(&state.store, &project, &series.series_id, &mut page.points).await?;
    if let Some(text) = tool_text {
        page.series.profile_thresholds = text;
    }
    page.header = visitor.header();
    // Alerts of this series on the branch shown, each at the x of its commit when plotted.
    let series_alerts: Vec<_> = state
        .store
        .series_alerts(&series.series_id)
        .await?
        .into_iter()
        .filter(|a| a.branch == page.branch)
        .collect();
    page.alerts = alerts::alert_views(&series_alerts, &project, &state.store)
        .await?
        .into_iter()
        .map(|a| {
            let x = page
                .points
                .iter()
                .find(|p| p.commit_sha == a.commit_sha)
                .map(|p| p.x.to_string())
                .unwrap_or_default();
            (x, a)
        })
        .collect();
    Ok(Html(page.render()?))
}

/// The thresholds a series of the tool's own goodput was computed under, as text (from the
/// facts of a result holding it): one profile name (`tool`) covers one series per set of
/// thresholds. `None` when the series has no stored value.
async fn tool_thresholds(
    state: &AppState,
    project: &Project,
    series_id: &str,
) -> Result<Option<String>, PageError> {
    let history = state
        .store
        .series_history(project.id, &[series_id.to_string()])
        .await?;
    let Some(point) = history.first() else {
        return Ok(None);
    };
    let Some(run) = state.store.run(point.run_id).await? else {
        return Ok(None);
    };
    Ok(run
        .results
        .iter()
        .find(|r| r.metrics.iter().any(|m| m.series_id == series_id))
        .map(|r| {
            profile_thresholds(
                benchtrail_core::slo::TOOL_PROFILE,
                &[],
                Some(&r.facts),
                Some(&r.warnings),
            )
        }))
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
    page.verdict = alerts::run_verdict(&state.store, &project, &run, &run_alerts).await?;
    page.acknowledged = alerts::acknowledgement(page.verdict.as_ref(), &run_alerts);
    page.alerts = alerts::alert_views(&run_alerts, &project, &state.store).await?;
    page.triage = triage::TriageForms::for_visitor(&visitor, &project, triage::ReturnTo::Run(uuid));
    page.baselines = baselines::run_baselines(&state.store, &project, &run).await?;
    page.header = visitor.header();
    Ok(Html(page.render()?))
}

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
    page.header = visitor.header();
    Ok(Html(page.render()?))
}
