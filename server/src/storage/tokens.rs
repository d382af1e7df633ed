//! Project tokens (`api_tokens`): created with their SHA-256 hash only, looked up by it,
//! listed without secrets, revoked by deleting the row (which ends its browser sessions), and
//! refused once expired.

use super::codec::{now, parse_scope};
use super::db::{self, DbRow};
use super::store::{project_row, PROJECT_COLUMNS};
use super::{Project, Scope, StorageError, Store};
use chrono::{DateTime, SubsecRound, Utc};
use std::sync::LazyLock;

/// [`Store::token_and_project`]'s query, written once (it runs for every authenticated
/// request): the project's columns under their own names (`project_row` reads them), the
/// token's under `token_…`.
static TOKEN_AND_PROJECT_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT t.id AS token_id, t.scope AS token_scope, t.expires_at AS token_expires_at, \
         t.last_used_at AS token_last_used_at, t.label AS token_label, \
         t.prefix AS token_prefix, {} \
         FROM api_tokens t JOIN projects p ON p.id = t.project_id WHERE t.token_hash = $1",
        PROJECT_COLUMNS
            .split(", ")
            .map(|c| format!("p.{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
});

/// How stale `last_used_at` may get before a use writes it again: reads do not write on every
/// request, and a listing is still right to the minute.
pub const LAST_USED_RESOLUTION: chrono::TimeDelta = chrono::TimeDelta::seconds(60);

/// A project token to store.
#[derive(Debug, Clone)]
pub struct NewToken<'a> {
    /// The token's project.
    pub project_id: i64,
    /// What it may do.
    pub scope: Scope,
    /// SHA-256 (hex) of the secret: what is compared on use.
    pub token_hash: &'a str,
    /// The first characters of the secret (`bt_` and 8 hex digits): shown in listings so a
    /// person can tell which token is which; 32 of its 256 bits, so not enough to guess it.
    pub prefix: &'a str,
    /// A free-text label (what the token is for), if any.
    pub label: Option<&'a str>,
    /// When it was created (stored to the microsecond).
    pub created_at: DateTime<Utc>,
    /// When it stops working, if ever (stored to the microsecond).
    pub expires_at: Option<DateTime<Utc>>,
}

/// A project token as listed: everything but its secret and hash.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
pub struct TokenInfo {
    /// Its id (what `DELETE /api/v1/projects/{project}/tokens/{id}` takes).
    pub id: i64,
    /// `read`, `upload` or `write`.
    pub scope: Scope,
    /// The first characters of the secret (`bt_` and 8 hex digits); `null` for tokens created
    /// before benchtrail kept it.
    pub prefix: Option<String>,
    /// The label given at creation, if any.
    pub label: Option<String>,
    /// When it was created (RFC 3339, UTC).
    pub created_at: DateTime<Utc>,
    /// When it stops working (RFC 3339, UTC); `null`: never.
    pub expires_at: Option<DateTime<Utc>>,
    /// When it was last accepted, to the minute ([`LAST_USED_RESOLUTION`]); `null`: never.
    pub last_used_at: Option<DateTime<Utc>>,
}

/// A project token looked up by its hash, not expired.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenGrant {
    /// The token's id.
    pub id: i64,
    /// The project the token belongs to.
    pub project_id: i64,
    /// What it may do.
    pub scope: Scope,
    /// When it was last accepted (see [`LAST_USED_RESOLUTION`]).
    pub last_used_at: Option<DateTime<Utc>>,
    /// The label given at creation, if any.
    pub label: Option<String>,
    /// The first characters of the secret, if kept (tokens made before 0009 have none).
    pub prefix: Option<String>,
    /// When it stops working, if ever (a browser session made with it ends then too).
    pub expires_at: Option<DateTime<Utc>>,
}

impl TokenGrant {
    /// How triage names this token's holder: its label, else its prefix, else `token N`
    /// (never the secret).
    pub fn actor(&self) -> String {
        self.label
            .clone()
            .filter(|l| !l.trim().is_empty())
            .or_else(|| self.prefix.clone())
            .unwrap_or_else(|| format!("token {}", self.id))
    }
}

const TOKEN_COLUMNS: &str = "id, scope, prefix, label, created_at, expires_at, last_used_at";

impl Store {
    /// Stores a project token (its hash, never its secret).
    ///
    /// # Errors
    /// `Conflict` if a token with this hash exists; a storage error.
    pub async fn create_token(&self, token: &NewToken<'_>) -> Result<TokenInfo, StorageError> {
        // At the precision storage keeps, so the answer equals what listings read back.
        let created_at = token.created_at.trunc_subsecs(6);
        let expires_at = token.expires_at.map(|t| t.trunc_subsecs(6));
        let id: i64 = db::query_scalar(
            "INSERT INTO api_tokens (project_id, token_hash, scope, created_at, prefix, label, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        )
        .bind(token.project_id)
        .bind(token.token_hash)
        .bind(token.scope.as_str())
        .bind(created_at)
        .bind(token.prefix)
        .bind(token.label)
        .bind(expires_at)
        .fetch_one(&self.pool)
        .await
        .map_err(|e| {
            super::store::unique_as_conflict(e, || {
                "a token with this hash already exists".to_string()
            })
        })?;
        Ok(TokenInfo {
            id,
            scope: token.scope,
            prefix: Some(token.prefix.to_string()),
            label: token.label.map(str::to_string),
            created_at,
            expires_at,
            last_used_at: None,
        })
    }

    /// The grant of the token with this hash, if there is one and it has not expired (an
    /// expired token is refused exactly like an unknown one).
    ///
    /// # Errors
    /// A storage error.
    pub async fn token(&self, token_hash: &str) -> Result<Option<TokenGrant>, StorageError> {
        Ok(self
            .token_and_project(token_hash)
            .await?
            .map(|(grant, _)| grant))
    }

    /// [`Store::token`] with the token's project, in one query: a project token's request
    /// (an upload) then needs no second read for the project of its address.
    ///
    /// # Errors
    /// A storage error.
    pub async fn token_and_project(
        &self,
        token_hash: &str,
    ) -> Result<Option<(TokenGrant, Project)>, StorageError> {
        let row = db::query(TOKEN_AND_PROJECT_SQL.as_str())
            .bind(token_hash)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else { return Ok(None) };
        let expires_at: Option<DateTime<Utc>> = row.try_get("token_expires_at")?;
        if expires_at.is_some_and(|t| t <= Utc::now()) {
            return Ok(None);
        }
        let scope: String = row.try_get("token_scope")?;
        let project = project_row(&row)?;
        let grant = TokenGrant {
            id: row.try_get("token_id")?,
            project_id: project.id,
            scope: parse_scope(&scope)?,
            last_used_at: row.try_get("token_last_used_at")?,
            label: row.try_get("token_label")?,
            prefix: row.try_get("token_prefix")?,
            expires_at,
        };
        Ok(Some((grant, project)))
    }

    /// Records that token `id` was used now, unless its `last_used_at` is already within
    /// [`LAST_USED_RESOLUTION`] (then nothing is written, even by a concurrent caller).
    ///
    /// # Errors
    /// A storage error.
    pub async fn touch_token(&self, id: i64) -> Result<(), StorageError> {
        let now = now();
        db::query(
            "UPDATE api_tokens SET last_used_at = $1 \
             WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)",
        )
        .bind(now)
        .bind(id)
        .bind(now - LAST_USED_RESOLUTION)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The tokens of a project, oldest first, expired ones included (they can be revoked).
    ///
    /// # Errors
    /// A storage error.
    pub async fn list_tokens(&self, project_id: i64) -> Result<Vec<TokenInfo>, StorageError> {
        let sql =
            format!("SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE project_id = $1 ORDER BY id");
        let rows = db::query(&sql)
            .bind(project_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(token_info).collect()
    }

    /// Revokes token `id` of a project (deletes it, and with it its browser sessions:
    /// `ON DELETE CASCADE`, migration 0012): `false` if the project has no such token.
    ///
    /// # Errors
    /// A storage error.
    pub async fn delete_token(&self, project_id: i64, id: i64) -> Result<bool, StorageError> {
        let done = db::query("DELETE FROM api_tokens WHERE id = $1 AND project_id = $2")
            .bind(id)
            .bind(project_id)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }
}

fn token_info(row: &DbRow) -> Result<TokenInfo, StorageError> {
    let scope: String = row.try_get("scope")?;
    Ok(TokenInfo {
        id: row.try_get("id")?,
        scope: parse_scope(&scope)?,
        prefix: row.try_get("prefix")?,
        label: row.try_get("label")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        last_used_at: row.try_get("last_used_at")?,
    })
}
