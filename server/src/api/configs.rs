//! Configurations by fingerprint.

use crate::app::AppState;
use crate::auth::Bearer;
use crate::error::{ApiError, ApiResult, Problem};
use crate::storage::StoredConfig;
use axum::extract::{Path, State};
use axum::Json;

/// `GET /api/v1/configs/{fingerprint}`: readable by whoever may read a project whose runs use
/// it (recorded command lines can hold private paths or flags); 404 for everyone else.
#[utoipa::path(get, path = "/api/v1/configs/{fingerprint}", tag = "configs",
    extensions(("x-benchtrail-access" = json!({"needs": "read", "of": "config"}))), params(("fingerprint" = String, Path, description = "SHA-256 of the canonical JSON")),
    responses((status = 200, body = StoredConfig), (status = 404, body = Problem, content_type = "application/problem+json")))]
pub(super) async fn get_one(
    State(state): State<AppState>,
    bearer: Bearer,
    Path(fingerprint): Path<String>,
) -> ApiResult<Json<StoredConfig>> {
    // The token first, as on every route: an unknown one is a 401 whether or not the
    // configuration exists.
    let caller = bearer.caller(&state).await?;
    let not_found = || ApiError::NotFound(format!("no configuration `{fingerprint}`"));
    let config = state
        .store
        .config(&fingerprint)
        .await?
        .ok_or_else(not_found)?;
    let projects = state.store.config_projects(&fingerprint).await?;
    if !projects.iter().any(|p| caller.require_read(p).is_ok()) {
        return Err(not_found());
    }
    Ok(Json(config))
}
