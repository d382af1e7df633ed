//! Triage of an alert by a person: acknowledge it, dismiss it with a reason, or reopen it.
//!
//! One function for every way in, `PATCH /api/v1/alerts/{id}` ([`crate::api`]) and the forms
//! of the alerts and run pages ([`crate::pages::triage`]), so the rules (which statuses a
//! person may set, that a dismissal needs a reason, how long a reason may be) and what is
//! recorded (status, reason, who and when) cannot drift apart. Callers check access first;
//! failures are typed ([`TriageError`]) so each caller words them in its own medium.

use crate::app::AppState;
use crate::storage::{Alert, AlertStatus, Project, StorageError};
use uuid::Uuid;

/// Most characters (Unicode scalar values, after trimming) of a triage reason: a sentence or a
/// paragraph with a link, not a log. Longer reasons are refused.
pub const MAX_REASON_CHARS: usize = 2000;

/// Why a triage was refused.
#[derive(Debug, thiserror::Error)]
pub enum TriageError {
    /// The status is not one a person sets (`resolved` is benchtrail's).
    #[error("expected `acknowledged`, `dismissed` or `open`; `resolved` is set by benchtrail")]
    Status,
    /// A dismissal without a reason.
    #[error("dismissing an alert needs a reason")]
    ReasonMissing,
    /// A reason over [`MAX_REASON_CHARS`].
    #[error("the reason has {chars} characters; at most {MAX_REASON_CHARS} are accepted")]
    ReasonTooLong {
        /// Its length in characters.
        chars: usize,
    },
    /// The alert went away between the access check and the write.
    #[error("no alert `{0}`")]
    NotFound(Uuid),
    /// Storage failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// Refuses a (trimmed) reason longer than [`MAX_REASON_CHARS`].
pub fn check_reason(reason: &str) -> Result<(), TriageError> {
    let chars = reason.chars().count();
    if chars > MAX_REASON_CHARS {
        return Err(TriageError::ReasonTooLong { chars });
    }
    Ok(())
}

/// Sets alert `id` of `project` to `status` (acknowledged, dismissed or open) with `reason`
/// (trimmed; an empty one counts as none; required to dismiss), recording `actor` and the
/// time, and has the project's PR comments refreshed: a dismissed alert no longer counts in
/// its runs' verdicts, and a reopened one counts again
/// ([`crate::analysis::jobs::Analyzer::refresh_after`]). The caller has checked that whoever
/// `actor` is may write to the project.
///
/// # Errors
/// [`TriageError`]: a status a person may not set, a missing or over-long reason, an alert
/// that no longer exists, a storage failure.
pub async fn triage(
    state: &AppState,
    project: &Project,
    id: Uuid,
    status: AlertStatus,
    reason: Option<&str>,
    actor: &str,
) -> Result<Alert, TriageError> {
    if !matches!(
        status,
        AlertStatus::Acknowledged | AlertStatus::Dismissed | AlertStatus::Open
    ) {
        return Err(TriageError::Status);
    }
    let reason = reason.map(str::trim).filter(|r| !r.is_empty());
    if status == AlertStatus::Dismissed && reason.is_none() {
        return Err(TriageError::ReasonMissing);
    }
    if let Some(r) = reason {
        check_reason(r)?;
    }
    let change = async {
        state
            .store
            .triage_alert(id, status, reason, actor)
            .await
            .map_err(TriageError::from)
    };
    let updated = state
        .analyzer
        .refresh_after(&state.store, project, change)
        .await?
        .ok_or(TriageError::NotFound(id))?;
    tracing::info!(alert = %id, status = status.as_str(), actor = %actor, "alert triaged");
    Ok(updated)
}
