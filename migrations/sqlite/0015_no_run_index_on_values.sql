-- metric_values loses its index on run_id (issue 12's disk target: 52 of 442 bytes per stored
-- value on an 18-cell SQLite history, the run's uuid text stored once more per value). A run's
-- values are reached through its results instead (`results (run_id, idx)`, then the primary
-- key `(result_id, series_id)`), and a series' values through `metric_values_series_run`,
-- which every other query uses.
-- Keep in step with migrations/postgres/0015_no_run_index_on_values.sql.
DROP INDEX metric_values_run;
