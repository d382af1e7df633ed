-- Run analyses are stored gzip-compressed (issue 12: they were 80 % of the database, about
-- 1 MB of JSON per 18-cell run). New rows hold `analysis_gz` (gzip of the JSON) and no
-- `analysis_json`; rows written before keep their JSON text, are read as they are, and are
-- replaced in the compressed form at their run's next analysis. Every row holds one of them.
-- SQLite cannot drop a NOT NULL in place: the table is rebuilt (nothing references it).
-- Keep in step with migrations/postgres/0013_compressed_analyses.sql.
CREATE TABLE run_analyses_0013 (
    run_id           TEXT PRIMARY KEY REFERENCES runs (id),
    verdict          TEXT NOT NULL,
    settings_version BIGINT NOT NULL,
    analysis_json    TEXT,
    analyzed_at      TEXT NOT NULL,
    analysis_schema  BIGINT NOT NULL DEFAULT 1,
    analysis_gz      BLOB,
    CHECK (analysis_json IS NOT NULL OR analysis_gz IS NOT NULL)
);
INSERT INTO run_analyses_0013 (run_id, verdict, settings_version, analysis_json, analyzed_at, analysis_schema)
SELECT run_id, verdict, settings_version, analysis_json, analyzed_at, analysis_schema FROM run_analyses;
DROP TABLE run_analyses;
ALTER TABLE run_analyses_0013 RENAME TO run_analyses;
