-- Token management: a non-secret prefix and an optional label to tell tokens apart in a
-- listing, an optional expiry, and when the token was last used (written at most once a
-- minute per token, so reads do not write on every request). Revoking a token deletes its row.
-- Tokens created before this migration have no prefix (their secret was never stored).
-- Keep in step with migrations/sqlite/0009_token_management.sql.
ALTER TABLE api_tokens ADD COLUMN prefix TEXT COLLATE "C";
ALTER TABLE api_tokens ADD COLUMN label TEXT COLLATE "C";
ALTER TABLE api_tokens ADD COLUMN expires_at TEXT COLLATE "C";
ALTER TABLE api_tokens ADD COLUMN last_used_at TEXT COLLATE "C";
CREATE INDEX api_tokens_project ON api_tokens (project_id, id);
