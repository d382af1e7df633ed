-- metric_values names its series by the series' integer `seq` (`series_seq`) instead of its
-- 16-hex-digit text id: issue 12's disk target. The id took 17 bytes in every value's row, in
-- the primary key and again in `metric_values_series_run`; the integer takes 1-8 (SQLite) or 8
-- (Postgres). `series` gets `seq` as its rowid (`INTEGER PRIMARY KEY`, assigned on insert) with
-- `series_id` still unique; both tables are rebuilt, since SQLite can neither add a primary key
-- nor drop a column a foreign key names. Renaming `series_0019` to `series` rewrites
-- `metric_values_0019`'s foreign key to name `series`.
-- Keep in step with migrations/postgres/0019_values_by_series_seq.sql.
CREATE TABLE series_0019 (
    seq                  INTEGER PRIMARY KEY,
    series_id            TEXT NOT NULL UNIQUE,
    project_id           BIGINT NOT NULL REFERENCES projects (id),
    series_key_json      TEXT NOT NULL,
    cell_key             TEXT NOT NULL,
    cell_json            TEXT NOT NULL,
    metric               TEXT NOT NULL,
    stat                 TEXT NOT NULL,
    unit                 TEXT NOT NULL,
    direction            TEXT NOT NULL,
    accelerator          TEXT,
    model                TEXT,
    weights_quantization TEXT,
    kv_cache_dtype       TEXT,
    slo_profile          TEXT
);
INSERT INTO series_0019 (series_id, project_id, series_key_json, cell_key, cell_json, metric, stat, unit,
                         direction, accelerator, model, weights_quantization, kv_cache_dtype, slo_profile)
    SELECT series_id, project_id, series_key_json, cell_key, cell_json, metric, stat, unit,
           direction, accelerator, model, weights_quantization, kv_cache_dtype, slo_profile
    FROM series ORDER BY rowid;
CREATE TABLE metric_values_0019 (
    result_id  BIGINT NOT NULL REFERENCES results (id),
    series_seq BIGINT NOT NULL REFERENCES series_0019 (seq),
    run_seq    BIGINT NOT NULL REFERENCES runs (seq),
    value      DOUBLE PRECISION NOT NULL,
    n          BIGINT,
    ci_low     DOUBLE PRECISION,
    ci_high    DOUBLE PRECISION,
    ci_level   DOUBLE PRECISION,
    ci_method  TEXT,
    PRIMARY KEY (result_id, series_seq)
);
INSERT INTO metric_values_0019 (result_id, series_seq, run_seq, value, n, ci_low, ci_high, ci_level, ci_method)
    SELECT mv.result_id, s.seq, mv.run_seq, mv.value, mv.n, mv.ci_low, mv.ci_high, mv.ci_level, mv.ci_method
    FROM metric_values mv JOIN series_0019 s ON s.series_id = mv.series_id
    ORDER BY mv.result_id, s.seq;
DROP TABLE metric_values;
DROP TABLE series;
ALTER TABLE series_0019 RENAME TO series;
ALTER TABLE metric_values_0019 RENAME TO metric_values;
CREATE INDEX series_project_order ON series (project_id, series_key_json, cell_key, metric, stat, series_id);
CREATE INDEX metric_values_series_run ON metric_values (series_seq, run_seq);
