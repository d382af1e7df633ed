-- Nothing changes on SQLite: it has no time type, and its timestamps stay fixed-width RFC 3339
-- text (`2026-12-06T20:29:52.123456Z`, so text order is time order). The Postgres migration of
-- this number makes its timestamps TIMESTAMPTZ; this file keeps the two backends' migration
-- numbers in step (`GET /readyz` compares the newest applied with the newest embedded).
-- Keep in step with migrations/postgres/0022_typed_timestamps.sql.
SELECT 1;
