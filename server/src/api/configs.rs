//! Configurations by fingerprint.

use crate::app::AppState;
use crate::error::{ApiError, ApiResult};
use crate::storage::StoredConfig;
use axum::extract::{Path, State};
use axum::Json;

/// `GET /api/v1/configs/{fingerprint}`. A configuration holds no results, so it is readable
/// by anyone who knows its 256-bit fingerprint.
#[utoipa::path(get, path = "/api/v1/configs/{fingerprint}", tag = "configs", params(("fingerprint" = String, Path, description = "SHA-256 of the canonical JSON")),
    responses((status = 200, body = StoredConfig), (status = 404, content_type = "application/problem+json")))]
pub(super) async fn get_one(
    State(state): State<AppState>,
    Path(fingerprint): Path<String>,
) -> ApiResult<Json<StoredConfig>> {
    state
        .store
        .config(&fingerprint)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::NotFound(format!("no configuration `{fingerprint}`")))
}
