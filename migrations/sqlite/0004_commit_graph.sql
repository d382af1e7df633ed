-- The commit graph of each project (history in ancestry order), commit times with their
-- UTC offset, and the count of identical re-uploads. Keep in step with
-- migrations/postgres/0004_commit_graph.sql.

-- One row per commit a run of the project measured. `parent_shas`: JSON array, first parent
-- first, from the first upload that sent any (an upload from a shallow clone sends none).
-- `commit_time`: UTC, fixed-width text; `first_run_at` and `first_seq` (the first run's time
-- and upload sequence number) are the tie-breaks of the order between unrelated commits.
CREATE TABLE commits (
    project_id   BIGINT NOT NULL REFERENCES projects (id),
    sha          TEXT NOT NULL,
    parent_shas  TEXT NOT NULL,
    commit_time  TEXT,
    first_run_at TEXT NOT NULL,
    first_seq    BIGINT NOT NULL,
    PRIMARY KEY (project_id, sha)
);

INSERT INTO commits (project_id, sha, parent_shas, commit_time, first_run_at, first_seq)
SELECT r.project_id, r.commit_sha,
       COALESCE((SELECT p.parent_shas FROM runs p WHERE p.project_id = r.project_id
                 AND p.commit_sha = r.commit_sha AND p.parent_shas <> '[]' ORDER BY p.seq LIMIT 1), '[]'),
       (SELECT t.commit_time FROM runs t WHERE t.project_id = r.project_id
        AND t.commit_sha = r.commit_sha AND t.commit_time IS NOT NULL ORDER BY t.seq LIMIT 1),
       (SELECT f.run_at FROM runs f WHERE f.project_id = r.project_id
        AND f.commit_sha = r.commit_sha ORDER BY f.seq LIMIT 1),
       MIN(r.seq)
FROM runs r GROUP BY r.project_id, r.commit_sha;

-- The committer's UTC offset in seconds east (NULL: not known, shown as UTC); `commit_time`
-- stays the UTC instant, so text order is still time order.
ALTER TABLE runs ADD COLUMN commit_time_offset BIGINT;

-- How many times this run was uploaded: an identical re-upload stores nothing and adds one.
ALTER TABLE runs ADD COLUMN upload_count BIGINT NOT NULL DEFAULT 1;
