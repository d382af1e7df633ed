-- The series' confidence intervals get an index of their own, over the values that have one
-- (those of uploads with per-request samples: a tenth of them in issue 12's data set). A
-- series read takes its values without the four interval columns, which sqlx copies per row
-- even when NULL (a sixth of a 1,800-point read's server CPU, BENCHMARKS.md "Session 42"), and
-- its intervals through this index. The index costs a few bytes per value that has one.
-- Keep in step with migrations/postgres/0023_series_intervals_index.sql.
CREATE INDEX metric_values_series_intervals ON metric_values (series_seq, result_id)
    WHERE ci_low IS NOT NULL;
