//! The server's PR/MR comment posts (`pr_comment_posts`): a run is claimed before its report
//! is posted, so no run is ever posted twice, whatever retries or second servers do.

use super::{StorageError, Store};
use sqlx::Row;
use uuid::Uuid;

/// What the server did with one run's PR comment.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct PrCommentPost {
    /// The run.
    pub run_id: Uuid,
    /// `github` or `gitlab`.
    pub provider: String,
    /// The pull (merge) request.
    pub pr_number: i64,
    /// `created`, `updated`, `unchanged`, `skipped` or `failed`; `None` while posting.
    pub outcome: Option<String>,
    /// The forge's comment id.
    pub comment_id: Option<String>,
    /// Why it failed, for `failed`.
    pub detail: Option<String>,
}

impl Store {
    /// Claims run `run_id`'s PR comment: `true` for the first caller only.
    ///
    /// # Errors
    /// A storage error.
    pub async fn claim_pr_comment(
        &self,
        run_id: Uuid,
        project_id: i64,
        provider: &str,
        pr_number: i64,
    ) -> Result<bool, StorageError> {
        let mut tx = self.begin_write().await?;
        let done = sqlx::query(
            "INSERT INTO pr_comment_posts (run_id, project_id, provider, pr_number, claimed_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (run_id) DO NOTHING",
        )
        .bind(run_id.to_string())
        .bind(project_id)
        .bind(provider)
        .bind(pr_number)
        .bind(chrono::Utc::now().to_rfc3339())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records how run `run_id`'s claimed PR comment ended.
    ///
    /// # Errors
    /// A storage error.
    pub async fn finish_pr_comment(
        &self,
        run_id: Uuid,
        outcome: &str,
        comment_id: Option<&str>,
        detail: Option<&str>,
    ) -> Result<(), StorageError> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "UPDATE pr_comment_posts SET outcome = $1, comment_id = $2, detail = $3 WHERE run_id = $4",
        )
        .bind(outcome)
        .bind(comment_id)
        .bind(detail)
        .bind(run_id.to_string())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The PR comment post of run `run_id`, if the server made one.
    ///
    /// # Errors
    /// A storage error.
    pub async fn pr_comment_post(
        &self,
        run_id: Uuid,
    ) -> Result<Option<PrCommentPost>, StorageError> {
        let row = sqlx::query(
            "SELECT provider, pr_number, outcome, comment_id, detail FROM pr_comment_posts WHERE run_id = $1",
        )
        .bind(run_id.to_string())
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| {
            Ok(PrCommentPost {
                run_id,
                provider: r.try_get("provider")?,
                pr_number: r.try_get("pr_number")?,
                outcome: r.try_get("outcome")?,
                comment_id: r.try_get("comment_id")?,
                detail: r.try_get("detail")?,
            })
        })
        .transpose()
    }
}
