-- Run analyses are stored gzip-compressed (issue 12: they were 80 % of the database, about
-- 1 MB of JSON per 18-cell run). New rows hold `analysis_gz` (gzip of the JSON) and no
-- `analysis_json`; rows written before keep their JSON text, are read as they are, and are
-- replaced in the compressed form at their run's next analysis. Every row holds one of them.
-- Keep in step with migrations/sqlite/0013_compressed_analyses.sql.
ALTER TABLE run_analyses ALTER COLUMN analysis_json DROP NOT NULL;
ALTER TABLE run_analyses ADD COLUMN analysis_gz BYTEA;
ALTER TABLE run_analyses ADD CONSTRAINT run_analyses_holds_an_analysis
    CHECK (analysis_json IS NOT NULL OR analysis_gz IS NOT NULL);
