-- Job ids are never given again (see migrations/sqlite/0014_job_ids_never_reused.sql, which
-- rebuilds the SQLite table with AUTOINCREMENT). `analysis_jobs.id` is BIGSERIAL here, and a
-- sequence never hands out a number twice: nothing to change. The file exists so both
-- backends hold the same migrations.
-- Keep in step with migrations/sqlite/0014_job_ids_never_reused.sql.
SELECT 1;
