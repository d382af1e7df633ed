//! Configurations by fingerprint.

use crate::app::AppState;
use crate::error::{ApiError, ApiResult};
use crate::storage::StoredConfig;
use axum::extract::{Path, State};
use axum::Json;

/// `GET /api/v1/configs/{fingerprint}`. A configuration holds no results, so it is readable
/// by anyone who knows its 256-bit fingerprint.
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
