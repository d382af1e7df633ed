-- Job ids are never given again. A job's row is deleted when it is done, and a plain INTEGER
-- PRIMARY KEY gives the next job the id of the newest deleted one. A worker whose lease ran
-- out while it worked then finishes "job 5, generation 1", and `finish_job` (which deletes by
-- id and generation) would delete the new job 5, another commit's, at its generation 1: an
-- acknowledged upload left without its analysis. AUTOINCREMENT never reuses an id (as 0009
-- made it for tokens). Postgres sequences never reuse ids; its 0014 changes nothing.
-- Keep in step with migrations/postgres/0014_job_ids_never_reused.sql.
CREATE TABLE analysis_jobs_0014 (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id  BIGINT NOT NULL REFERENCES projects (id),
    kind        TEXT NOT NULL,
    branch      TEXT NOT NULL,
    commit_sha  TEXT NOT NULL,
    generation  BIGINT NOT NULL,
    attempts    BIGINT NOT NULL,
    queued_at   TEXT NOT NULL,
    not_before  TEXT NOT NULL,
    lease_until TEXT,
    last_error  TEXT,
    UNIQUE (project_id, kind, branch, commit_sha)
);
INSERT INTO analysis_jobs_0014
    (id, project_id, kind, branch, commit_sha, generation, attempts, queued_at, not_before, lease_until, last_error)
SELECT id, project_id, kind, branch, commit_sha, generation, attempts, queued_at, not_before, lease_until, last_error
FROM analysis_jobs;
DROP TABLE analysis_jobs;
ALTER TABLE analysis_jobs_0014 RENAME TO analysis_jobs;
CREATE INDEX analysis_jobs_due ON analysis_jobs (not_before);
