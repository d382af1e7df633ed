-- The server's own PR/MR comments (project setting `pr_comments`): one row per run it
-- reported on, written before the forge is asked, so a run is never posted twice (a retried
-- upload, two servers on one database). `outcome` is created, updated, unchanged, skipped or
-- failed; `comment_id` the forge's id of the comment.
-- Keep in step with migrations/sqlite/0007_pr_comments.sql.
CREATE TABLE pr_comment_posts (
    run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    project_id BIGINT NOT NULL,
    provider TEXT NOT NULL,
    pr_number BIGINT NOT NULL,
    outcome TEXT,
    comment_id TEXT,
    detail TEXT,
    claimed_at TEXT NOT NULL
);
