-- The number of runs (repeats) of its commit that a run announced (`run.repeats_expected`,
-- `benchtrail upload --repeats N`); NULL: not announced (the project's `detection.repeats`).
-- Keep in step with migrations/postgres/0005_repeats_expected.sql.
ALTER TABLE runs ADD COLUMN repeats_expected BIGINT;
