-- Token management: a non-secret prefix and an optional label to tell tokens apart in a
-- listing, an optional expiry, and when the token was last used (written at most once a
-- minute per token, so reads do not write on every request). Revoking a token deletes its row.
-- Tokens created before this migration have no prefix (their secret was never stored).
-- Keep in step with migrations/postgres/0009_token_management.sql.
--
-- The table is rebuilt so that `id` is AUTOINCREMENT: revoking deletes rows, and a plain
-- INTEGER PRIMARY KEY would give the next token the id of the newest revoked one, so a
-- repeated `token revoke ID` could revoke a stranger. (Postgres identities never reuse ids.)
CREATE TABLE api_tokens_v9 (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id   BIGINT NOT NULL REFERENCES projects (id),
    token_hash   TEXT NOT NULL UNIQUE,
    scope        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    prefix       TEXT,
    label        TEXT,
    expires_at   TEXT,
    last_used_at TEXT
);
INSERT INTO api_tokens_v9 (id, project_id, token_hash, scope, created_at)
    SELECT id, project_id, token_hash, scope, created_at FROM api_tokens;
DROP TABLE api_tokens;
ALTER TABLE api_tokens_v9 RENAME TO api_tokens;
CREATE INDEX api_tokens_project ON api_tokens (project_id, id);
