-- The part of a run's analysis its verdict reads (`benchtrail_core::report::verdict_basis`),
-- gzip-compressed JSON, beside the whole analysis: pages listing many runs' verdicts (the
-- dashboard) and the verdict endpoint CI polls decode 10–12 KB instead of 66 KB gzip
-- (550 KB of JSON) per 18-cell run. NULL in rows written before 0018: readers then decode the
-- basis from `analysis_gz` / `analysis_json`, whose JSON holds it.
-- Keep in step with migrations/postgres/0018_verdict_basis.sql.
ALTER TABLE run_analyses ADD COLUMN verdict_basis_gz BLOB;
