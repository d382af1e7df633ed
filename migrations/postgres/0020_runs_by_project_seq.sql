-- The newest runs of a project over all its branches (the dashboard's recent runs, the runs
-- API without a branch): `ORDER BY seq DESC LIMIT n` with only `project_id` known. No index
-- had (project_id, seq): SQLite took every run of the project through `runs_project_pr` and
-- sorted them (9 ms of a 50 ms dashboard at 1,800 runs, 0.2 ms with this index).
-- Keep in step with migrations/sqlite/0020_runs_by_project_seq.sql.
CREATE INDEX runs_project_seq ON runs (project_id, seq);
