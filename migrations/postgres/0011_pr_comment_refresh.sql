-- PR comments refreshed after a recomputation (an exclusion, a pin, new settings, a triage):
-- the post of a run records the SHA-256 (hex) of the report it posted, so the bot posts a run
-- again only when its report changed, and then updates the one sticky comment in place. The
-- row stays one per run, holding its latest report: a report that changes and changes back is
-- posted again, as the comment then shows the other one. Rows posted before this column have
-- none: the next refresh of such a run claims it once (and finds the comment unchanged when
-- it is).
-- Keep in step with migrations/sqlite/0011_pr_comment_refresh.sql.
ALTER TABLE pr_comment_posts ADD COLUMN report_sha256 TEXT;

-- A refresh reads the threads the bot reported into (project, provider, PR) and the newest run
-- of each PR.
CREATE INDEX pr_comment_posts_thread ON pr_comment_posts (project_id, provider, pr_number);
CREATE INDEX runs_project_pr ON runs (project_id, pr_number, seq);
