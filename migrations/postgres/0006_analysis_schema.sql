-- The shape version of a stored run analysis (benchtrail_core::report::ANALYSIS_SCHEMA).
-- Existing rows are the untyped documents of schema 1; the server recomputes every project
-- that holds an analysis older than the current schema when it starts.
-- Keep in step with migrations/sqlite/0006_analysis_schema.sql.
ALTER TABLE run_analyses ADD COLUMN analysis_schema BIGINT NOT NULL DEFAULT 1;
