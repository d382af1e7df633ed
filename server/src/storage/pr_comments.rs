//! The server's PR/MR comment posts (`pr_comment_posts`): a run is claimed with its report's
//! hash before the report is posted, so no report of a run is ever posted twice, whatever
//! retries or second servers do, while a run whose report a recomputation changed is posted
//! again (migration 0011).

use super::codec::parse_uuid;
use super::db;
use super::{StorageError, Store};
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
    /// SHA-256 (hex) of the report posted (the latest one claimed); `None` for posts made
    /// before migration 0011.
    pub report_sha256: Option<String>,
}

impl Store {
    /// Claims run `run_id`'s PR comment for the report whose SHA-256 (hex) is
    /// `report_sha256`: `true` unless that very report was already posted (or skipped, or
    /// failed: an outcome is recorded with that hash). A changed report is claimed again (the
    /// run's row then holds the new hash and no outcome), so a recomputation that changes a
    /// run's report updates its comment, and one that does not sends nothing. An unfinished
    /// claim (a server died while posting) is claimed again: posting runs as a leased job, so
    /// only one poster is ever at it, and a second post of the same report finds the sticky
    /// comment and updates it in place.
    ///
    /// # Errors
    /// A storage error.
    pub async fn claim_pr_comment(
        &self,
        run_id: Uuid,
        project_id: i64,
        provider: &str,
        pr_number: i64,
        report_sha256: &str,
    ) -> Result<bool, StorageError> {
        let mut tx = self.begin_write().await?;
        // `IS NULL OR <>` rather than `IS DISTINCT FROM`: one text for SQLite and Postgres.
        let done = db::query(
            "INSERT INTO pr_comment_posts \
             (run_id, project_id, provider, pr_number, claimed_at, report_sha256) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (run_id) DO UPDATE \
             SET claimed_at = excluded.claimed_at, report_sha256 = excluded.report_sha256, \
             provider = excluded.provider, pr_number = excluded.pr_number, \
             outcome = NULL, comment_id = NULL, detail = NULL \
             WHERE pr_comment_posts.outcome IS NULL OR pr_comment_posts.report_sha256 IS NULL \
             OR pr_comment_posts.report_sha256 <> excluded.report_sha256",
        )
        .bind(run_id.to_string())
        .bind(project_id)
        .bind(provider)
        .bind(pr_number)
        .bind(super::codec::now())
        .bind(report_sha256)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// The newest run (highest upload order) of each pull request of project `project_id`
    /// that the bot has reported on through `provider` (a post of any of its runs is
    /// recorded), by PR number: the runs whose comments a refresh after a recomputation
    /// brings up to date. A PR the bot never handled (its runs predate the project's
    /// `pr_comments`) is left alone.
    ///
    /// # Errors
    /// A storage error.
    pub async fn newest_reported_pr_runs(
        &self,
        project_id: i64,
        provider: &str,
    ) -> Result<Vec<Uuid>, StorageError> {
        let ids: Vec<String> = db::query_scalar(
            "SELECT r.id FROM runs r WHERE r.seq IN (SELECT MAX(n.seq) FROM runs n \
             WHERE n.project_id = $1 AND n.pr_number IN (SELECT DISTINCT p.pr_number \
             FROM pr_comment_posts p WHERE p.project_id = $2 AND p.provider = $3) \
             GROUP BY n.pr_number) ORDER BY r.pr_number",
        )
        .bind(project_id)
        .bind(project_id)
        .bind(provider)
        .fetch_all(&self.pool)
        .await?;
        ids.iter().map(|i| parse_uuid("id", i)).collect()
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
        db::query(
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
        let row = db::query(
            "SELECT provider, pr_number, outcome, comment_id, detail, report_sha256 \
             FROM pr_comment_posts WHERE run_id = $1",
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
                report_sha256: r.try_get("report_sha256")?,
            })
        })
        .transpose()
    }
}
