-- Runs by commit: an analysis reads a window of its history, the runs of the newest commits
-- (benchtrail_core::report::window), and finds them here instead of scanning every run of
-- the branch; the runs of one commit (upload analysis, verdicts) come from the same index.
-- Keep in step with migrations/sqlite/0010_runs_by_commit.sql.
CREATE INDEX runs_project_commit ON runs (project_id, commit_sha, branch);
