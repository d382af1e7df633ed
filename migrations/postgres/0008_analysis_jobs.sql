-- Durable analysis: what still has to be analyzed. A run's upload inserts (or re-arms) the job
-- of its commit in the same transaction as the run, so an acknowledged upload is never left
-- unanalyzed: a job leaves this table only when its analysis has been stored.
--   kind         `commit` (one commit of one branch: branch and commit_sha set) or `project`
--                (every commit again, in order: branch and commit_sha are '').
--   generation   bumped whenever the job is asked for again (another repeat, an exclusion);
--                a worker deletes the job only if the generation it analyzed is still current.
--   attempts     analyses started and not finished; not_before the earliest next attempt
--                (back-off after a failure); lease_until the time until which one worker
--                holds it (renewed while it works; a crashed worker's lease runs out).
--   last_error   why the last attempt failed (server log detail; never shown to clients).
-- Timestamps are fixed-width RFC 3339 UTC text, so text order is time order.
-- Keep in step with migrations/sqlite/0008_analysis_jobs.sql.
CREATE TABLE analysis_jobs (
    id          BIGSERIAL PRIMARY KEY,
    project_id  BIGINT NOT NULL REFERENCES projects (id),
    kind        TEXT COLLATE "C" NOT NULL,
    branch      TEXT COLLATE "C" NOT NULL,
    commit_sha  TEXT COLLATE "C" NOT NULL,
    generation  BIGINT NOT NULL,
    attempts    BIGINT NOT NULL,
    queued_at   TEXT COLLATE "C" NOT NULL,
    not_before  TEXT COLLATE "C" NOT NULL,
    lease_until TEXT COLLATE "C",
    last_error  TEXT,
    UNIQUE (project_id, kind, branch, commit_sha)
);
CREATE INDEX analysis_jobs_due ON analysis_jobs (not_before);

-- Runs stored before this table existed and never analyzed (their analysis failed) get their
-- commit's job now, so an upgraded server analyzes them.
INSERT INTO analysis_jobs (project_id, kind, branch, commit_sha, generation, attempts, queued_at, not_before)
SELECT r.project_id, 'commit', r.branch, r.commit_sha, 1, 0, MIN(r.uploaded_at), MIN(r.uploaded_at)
FROM runs r
WHERE NOT EXISTS (SELECT 1 FROM run_analyses a WHERE a.run_id = r.id)
GROUP BY r.project_id, r.branch, r.commit_sha;
