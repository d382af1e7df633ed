-- benchtrail schema, SQLite flavour. Keep in step with migrations/postgres/0001_init.sql:
-- same tables, columns and indexes; only the id/identity syntax and BLOB vs BYTEA differ.
-- Types crossing the boundary: BIGINT, DOUBLE PRECISION, TEXT, BLOB. Booleans are BIGINT 0/1,
-- timestamps fixed-width RFC 3339 UTC text, uuids and JSON text.

CREATE TABLE projects (
    id             INTEGER PRIMARY KEY,
    slug           TEXT NOT NULL UNIQUE,
    name           TEXT NOT NULL,
    repository_url TEXT,
    default_branch TEXT NOT NULL,
    is_public      BIGINT NOT NULL,
    key_fields     TEXT NOT NULL,
    created_at     TEXT NOT NULL
);

CREATE TABLE api_tokens (
    id         INTEGER PRIMARY KEY,
    project_id BIGINT NOT NULL REFERENCES projects (id),
    token_hash TEXT NOT NULL UNIQUE,
    scope      TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE configurations (
    fingerprint    TEXT PRIMARY KEY,
    canonical_json TEXT NOT NULL,
    created_at     TEXT NOT NULL
);

-- seq is the upload order: stable pagination and the last tie-breaker of plots.
CREATE TABLE runs (
    seq            INTEGER PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    project_id     BIGINT NOT NULL REFERENCES projects (id),
    commit_sha     TEXT NOT NULL,
    parent_shas    TEXT NOT NULL,
    commit_time    TEXT,
    commit_subject TEXT,
    branch         TEXT NOT NULL,
    pr_number      BIGINT,
    merge_base_sha TEXT,
    run_at         TEXT NOT NULL,
    uploaded_at    TEXT NOT NULL,
    ci_job_url     TEXT,
    repeat_index   BIGINT NOT NULL,
    tags           TEXT NOT NULL
);
CREATE INDEX runs_project_branch_seq ON runs (project_id, branch, seq);

CREATE TABLE run_files (
    run_id     TEXT NOT NULL REFERENCES runs (id),
    idx        BIGINT NOT NULL,
    name       TEXT NOT NULL,
    format     TEXT NOT NULL,
    content_gz BLOB NOT NULL,
    size       BIGINT NOT NULL,
    sha256     TEXT NOT NULL,
    PRIMARY KEY (run_id, idx)
);

CREATE TABLE results (
    id                 INTEGER PRIMARY KEY,
    run_id             TEXT NOT NULL REFERENCES runs (id),
    idx                BIGINT NOT NULL,
    config_fingerprint TEXT NOT NULL REFERENCES configurations (fingerprint),
    cell_key           TEXT NOT NULL,
    cell_json          TEXT NOT NULL,
    facts_json         TEXT NOT NULL,
    warnings_json      TEXT NOT NULL,
    source_json        TEXT NOT NULL,
    UNIQUE (run_id, idx)
);

CREATE TABLE series (
    series_id            TEXT PRIMARY KEY,
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
    kv_cache_dtype       TEXT
);
CREATE INDEX series_project_order ON series (project_id, series_key_json, cell_key, metric, stat, series_id);

-- One value per (result, series): a result cannot hold two numbers for one series.
CREATE TABLE metric_values (
    result_id BIGINT NOT NULL REFERENCES results (id),
    series_id TEXT NOT NULL REFERENCES series (series_id),
    run_id    TEXT NOT NULL REFERENCES runs (id),
    value     DOUBLE PRECISION NOT NULL,
    n         BIGINT,
    PRIMARY KEY (result_id, series_id)
);
CREATE INDEX metric_values_series_run ON metric_values (series_id, run_id);
CREATE INDEX metric_values_run ON metric_values (run_id);
