-- metric_values names its run by the run's integer `seq` (`run_seq`) instead of the run's uuid
-- text (`run_id`): issue 12's disk target. The uuid took 37 bytes in every value's row and again
-- in `metric_values_series_run`, the index every series read goes through; the integer takes 8.
-- The table is rewritten rather than altered in place: an UPDATE of every row and a dropped
-- column would leave the old bytes behind until a VACUUM FULL. Fixed-width columns first, so
-- the row has no alignment padding.
-- Keep in step with migrations/sqlite/0017_values_by_run_seq.sql.
CREATE TABLE metric_values_0017 (
    result_id BIGINT NOT NULL REFERENCES results (id),
    run_seq   BIGINT NOT NULL REFERENCES runs (seq),
    value     DOUBLE PRECISION NOT NULL,
    n         BIGINT,
    series_id TEXT COLLATE "C" NOT NULL REFERENCES series (series_id),
    ci_low    DOUBLE PRECISION,
    ci_high   DOUBLE PRECISION,
    ci_level  DOUBLE PRECISION,
    ci_method TEXT COLLATE "C",
    PRIMARY KEY (result_id, series_id)
);
INSERT INTO metric_values_0017 (result_id, series_id, run_seq, value, n, ci_low, ci_high, ci_level, ci_method)
    SELECT mv.result_id, mv.series_id, r.seq, mv.value, mv.n, mv.ci_low, mv.ci_high, mv.ci_level, mv.ci_method
    FROM metric_values mv JOIN runs r ON r.id = mv.run_id;
DROP TABLE metric_values;
ALTER TABLE metric_values_0017 RENAME TO metric_values;
ALTER TABLE metric_values RENAME CONSTRAINT metric_values_0017_pkey TO metric_values_pkey;
CREATE INDEX metric_values_series_run ON metric_values (series_id, run_seq);
