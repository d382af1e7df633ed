//! Browser sessions (`sessions`, migration 0012): created at sign-in with the SHA-256 of their
//! random id only, looked up by it while the token they were made with still works, deleted at
//! sign-out, with their token (revocation) and once expired.

use super::codec::{now, parse_scope};
use super::db;
use super::{Scope, StorageError, Store};
use chrono::{DateTime, SubsecRound, Utc};

/// What a session grants: the admin token's rights, or a project token's.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionGrant {
    /// Signed in with the admin token.
    Admin,
    /// Signed in with a project token.
    Project {
        /// The token's id (its sessions end when it is revoked).
        token_id: i64,
        /// The token's project.
        project_id: i64,
        /// Its scope.
        scope: Scope,
    },
}

/// A session to store.
#[derive(Debug, Clone)]
pub struct NewSession<'a> {
    /// SHA-256 (hex) of the session id the cookie carries.
    pub id_hash: &'a str,
    /// SHA-256 (hex) of the token signed in with.
    pub token_hash: &'a str,
    /// What it grants.
    pub grant: SessionGrant,
    /// Who signed in, as triage records it: the token's label or prefix, or `admin`.
    pub actor: &'a str,
    /// When it ends (stored to the microsecond).
    pub expires_at: DateTime<Utc>,
}

/// A live session, as looked up by its id's hash.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    /// What it grants.
    pub grant: SessionGrant,
    /// Who signed in.
    pub actor: String,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it ends.
    pub expires_at: DateTime<Utc>,
}

impl Store {
    /// Stores a new session (created now).
    ///
    /// # Errors
    /// A storage error (a hash collision of two random 256-bit ids is a `Conflict`).
    pub async fn create_session(&self, s: &NewSession<'_>) -> Result<SessionInfo, StorageError> {
        let created_at = now();
        let expires_at = s.expires_at.trunc_subsecs(6);
        let (token_id, project_id, scope) = match &s.grant {
            SessionGrant::Admin => (None, None, None),
            SessionGrant::Project {
                token_id,
                project_id,
                scope,
            } => (Some(*token_id), Some(*project_id), Some(scope.as_str())),
        };
        db::query(
            "INSERT INTO sessions (id_hash, token_hash, token_id, project_id, scope, actor, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(s.id_hash)
        .bind(s.token_hash)
        .bind(token_id)
        .bind(project_id)
        .bind(scope)
        .bind(s.actor)
        .bind(created_at)
        .bind(expires_at)
        .execute(&self.pool)
        .await
        .map_err(|e| {
            super::store::unique_as_conflict(e, || "a session with this id exists".to_string())
        })?;
        Ok(SessionInfo {
            grant: s.grant.clone(),
            actor: s.actor.to_string(),
            created_at,
            expires_at,
        })
    }

    /// The session whose id hashes to `id_hash`, if it has not expired and the token it was
    /// made with still works: a project token that still exists (not revoked) and has not
    /// expired, or the admin token whose hash is `admin_token_hash` (a replaced admin token
    /// ends its sessions). An expired session is deleted on the way.
    ///
    /// # Errors
    /// A storage error.
    pub async fn session(
        &self,
        id_hash: &str,
        admin_token_hash: &str,
    ) -> Result<Option<SessionInfo>, StorageError> {
        let row = db::query(
            "SELECT s.token_hash, s.token_id, s.project_id, s.scope, s.actor, s.created_at, \
             s.expires_at, t.token_hash AS live_hash, t.expires_at AS token_expires_at \
             FROM sessions s LEFT JOIN api_tokens t ON t.id = s.token_id WHERE s.id_hash = $1",
        )
        .bind(id_hash)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let expires_at: DateTime<Utc> = row.try_get("expires_at")?;
        let now = Utc::now();
        if expires_at <= now {
            self.delete_session(id_hash).await?;
            return Ok(None);
        }
        let token_hash: String = row.try_get("token_hash")?;
        let token_id: Option<i64> = row.try_get("token_id")?;
        let grant = match token_id {
            None => {
                if token_hash != admin_token_hash {
                    return Ok(None);
                }
                SessionGrant::Admin
            }
            Some(token_id) => {
                let live_hash: Option<String> = row.try_get("live_hash")?;
                if live_hash.as_deref() != Some(token_hash.as_str()) {
                    return Ok(None);
                }
                let token_expires: Option<DateTime<Utc>> = row.try_get("token_expires_at")?;
                if token_expires.is_some_and(|t| t <= now) {
                    return Ok(None);
                }
                let project_id: Option<i64> = row.try_get("project_id")?;
                let scope: Option<String> = row.try_get("scope")?;
                let (Some(project_id), Some(scope)) = (project_id, scope) else {
                    return Err(StorageError::Corrupt(
                        "a project token's session without its project or scope".into(),
                    ));
                };
                SessionGrant::Project {
                    token_id,
                    project_id,
                    scope: parse_scope(&scope)?,
                }
            }
        };
        Ok(Some(SessionInfo {
            grant,
            actor: row.try_get("actor")?,
            created_at: row.try_get("created_at")?,
            expires_at,
        }))
    }

    /// Deletes the session whose id hashes to `id_hash` (sign-out): `false` if there was none.
    ///
    /// # Errors
    /// A storage error.
    pub async fn delete_session(&self, id_hash: &str) -> Result<bool, StorageError> {
        let done = db::query("DELETE FROM sessions WHERE id_hash = $1")
            .bind(id_hash)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Deletes every expired session; returns how many (called at each sign-in, so the table
    /// holds live sessions and the few that expired since).
    ///
    /// # Errors
    /// A storage error.
    pub async fn delete_expired_sessions(&self) -> Result<u64, StorageError> {
        let done = db::query("DELETE FROM sessions WHERE expires_at <= $1")
            .bind(now())
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }

    /// How many sessions are stored for project token `token_id` (expired ones included).
    ///
    /// # Errors
    /// A storage error.
    pub async fn token_session_count(&self, token_id: i64) -> Result<i64, StorageError> {
        Ok(
            db::query_scalar("SELECT COUNT(*) FROM sessions WHERE token_id = $1")
                .bind(token_id)
                .fetch_one(&self.pool)
                .await?,
        )
    }
}
