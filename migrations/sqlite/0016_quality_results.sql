-- quality_results: a run's quality (accuracy) results on evaluation tasks (issue 14), uploaded
-- with it in the same transaction (the upload's `quality` field, `benchtrail upload --quality`).
-- One row per task and metric of a run; they decide whether a quantization change between two
-- runs comes with a quality result (`quantization_without_quality`).
-- Keep in step with migrations/postgres/0016_quality_results.sql.
CREATE TABLE quality_results (
    run_id  TEXT NOT NULL REFERENCES runs (id),
    idx     BIGINT NOT NULL,
    task    TEXT NOT NULL,
    metric  TEXT NOT NULL,
    value   DOUBLE PRECISION NOT NULL,
    stderr  DOUBLE PRECISION,
    samples BIGINT,
    PRIMARY KEY (run_id, idx),
    UNIQUE (run_id, task, metric)
);
