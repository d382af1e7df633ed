-- Browser sessions (`/sign-in`): a visitor who pasted a project token or the admin token gets
-- a random session id in a cookie; only its SHA-256 is kept here (`id_hash`), so a copy of the
-- database signs nobody in. A session carries what its token grants (project, scope) and who
-- signed in (`actor`: the token's label or prefix, or `admin`), and ends at `expires_at`.
-- `token_hash` is the SHA-256 of the token signed in with: a session is accepted only while
-- that token still is (a project token's row exists and has not expired; the admin token has
-- not been replaced), so revoking a token ends its sessions even before the cascade below.
-- `token_id` is NULL for the admin token; deleting (revoking) a project token deletes its
-- sessions. Token ids are never reused (0009: AUTOINCREMENT).
--
-- Triage records who and when: `alerts.triaged_by` (the actor, as above) and `triaged_at`,
-- set by the last acknowledge/dismiss/reopen, through the API or a page.
--
-- Numbered 0012 on purpose (0011 belongs to another change); it assumes nothing of 0011, and
-- sqlx applies any migration not applied yet whatever its number.
-- Keep in step with migrations/postgres/0012_sessions.sql.
CREATE TABLE sessions (
    id_hash    TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL,
    token_id   BIGINT REFERENCES api_tokens (id) ON DELETE CASCADE,
    project_id BIGINT REFERENCES projects (id),
    scope      TEXT,
    actor      TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX sessions_token ON sessions (token_id);
CREATE INDEX sessions_expires ON sessions (expires_at);
ALTER TABLE alerts ADD COLUMN triaged_by TEXT;
ALTER TABLE alerts ADD COLUMN triaged_at TEXT;
