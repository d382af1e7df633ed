-- Timestamps as Postgres's own type. Until now every timestamp was fixed-width RFC 3339 text
-- (`2026-12-06T20:29:52.123456Z`), the one type SQLite and sqlx's `Any` driver shared; since
-- the server runs on each database's native driver (session 29) Postgres can hold them as
-- TIMESTAMPTZ: 8 bytes instead of 28 (plus the header), compared and indexed as times, and
-- usable by an operator's SQL (`run_at > now() - interval '7 days'`, `date_trunc`) without a
-- cast. Both keep microseconds, so every value converts exactly. SQLite keeps its text
-- (it has no time type; its no-op migration of the same number keeps the two in step).
-- `pr_comment_posts.claimed_at` was written with `+00:00` and up to nanoseconds; Postgres
-- parses that too (rounding to microseconds; the server never reads it).
-- Keep in step with migrations/sqlite/0022_typed_timestamps.sql.
ALTER TABLE projects ALTER COLUMN created_at TYPE TIMESTAMPTZ USING created_at::timestamptz;
ALTER TABLE api_tokens
    ALTER COLUMN created_at TYPE TIMESTAMPTZ USING created_at::timestamptz,
    ALTER COLUMN expires_at TYPE TIMESTAMPTZ USING expires_at::timestamptz,
    ALTER COLUMN last_used_at TYPE TIMESTAMPTZ USING last_used_at::timestamptz;
ALTER TABLE sessions
    ALTER COLUMN created_at TYPE TIMESTAMPTZ USING created_at::timestamptz,
    ALTER COLUMN expires_at TYPE TIMESTAMPTZ USING expires_at::timestamptz;
ALTER TABLE project_settings ALTER COLUMN created_at TYPE TIMESTAMPTZ USING created_at::timestamptz;
ALTER TABLE runs
    ALTER COLUMN commit_time TYPE TIMESTAMPTZ USING commit_time::timestamptz,
    ALTER COLUMN run_at TYPE TIMESTAMPTZ USING run_at::timestamptz,
    ALTER COLUMN uploaded_at TYPE TIMESTAMPTZ USING uploaded_at::timestamptz;
ALTER TABLE commits
    ALTER COLUMN commit_time TYPE TIMESTAMPTZ USING commit_time::timestamptz,
    ALTER COLUMN first_run_at TYPE TIMESTAMPTZ USING first_run_at::timestamptz;
ALTER TABLE configurations ALTER COLUMN created_at TYPE TIMESTAMPTZ USING created_at::timestamptz;
ALTER TABLE run_analyses ALTER COLUMN analyzed_at TYPE TIMESTAMPTZ USING analyzed_at::timestamptz;
ALTER TABLE alerts
    ALTER COLUMN created_at TYPE TIMESTAMPTZ USING created_at::timestamptz,
    ALTER COLUMN updated_at TYPE TIMESTAMPTZ USING updated_at::timestamptz,
    ALTER COLUMN triaged_at TYPE TIMESTAMPTZ USING triaged_at::timestamptz;
ALTER TABLE run_exclusions ALTER COLUMN created_at TYPE TIMESTAMPTZ USING created_at::timestamptz;
ALTER TABLE baseline_pins ALTER COLUMN created_at TYPE TIMESTAMPTZ USING created_at::timestamptz;
ALTER TABLE analysis_jobs
    ALTER COLUMN queued_at TYPE TIMESTAMPTZ USING queued_at::timestamptz,
    ALTER COLUMN not_before TYPE TIMESTAMPTZ USING not_before::timestamptz,
    ALTER COLUMN lease_until TYPE TIMESTAMPTZ USING lease_until::timestamptz;
ALTER TABLE pr_comment_posts ALTER COLUMN claimed_at TYPE TIMESTAMPTZ USING claimed_at::timestamptz;
