-- Regression detection: alerts with their lifecycle, per-run analyses (verdict and series
-- states), run exclusions and pinned baselines. Keep in step with
-- migrations/postgres/0003_alerts.sql.

-- One alert per (project, branch, commit, kind, headline series): `dedup_key` holds that
-- identity, so recomputing a commit's analysis updates its alerts instead of adding new ones.
-- `status`: open, acknowledged, dismissed, resolved. `finding_json` is the engine's whole
-- finding (inputs, test, statistic, p-value/interval, thresholds, settings).
CREATE TABLE alerts (
    seq              INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    project_id       BIGINT NOT NULL REFERENCES projects (id),
    dedup_key        TEXT NOT NULL,
    run_id           TEXT REFERENCES runs (id),
    kind             TEXT NOT NULL,
    status           TEXT NOT NULL,
    severity         TEXT,
    series_id        TEXT NOT NULL,
    metric           TEXT NOT NULL,
    stat             TEXT NOT NULL,
    slo_profile      TEXT,
    series_key_json  TEXT NOT NULL,
    cell_key         TEXT NOT NULL,
    branch           TEXT NOT NULL,
    commit_sha       TEXT NOT NULL,
    baseline_commits TEXT NOT NULL,
    summary          TEXT NOT NULL,
    finding_json     TEXT NOT NULL,
    settings_version BIGINT NOT NULL,
    reason           TEXT,
    resolved_by      TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    UNIQUE (project_id, dedup_key)
);
CREATE INDEX alerts_project_seq ON alerts (project_id, seq);
CREATE INDEX alerts_commit ON alerts (project_id, branch, commit_sha);

-- Every series an alert involves (a trade-off names several).
CREATE TABLE alert_series (
    alert_id  TEXT NOT NULL REFERENCES alerts (id),
    series_id TEXT NOT NULL,
    PRIMARY KEY (alert_id, series_id)
);
CREATE INDEX alert_series_series ON alert_series (series_id);

-- The latest analysis of a run: verdict, reasons and every series' state, as JSON.
CREATE TABLE run_analyses (
    run_id           TEXT PRIMARY KEY REFERENCES runs (id),
    verdict          TEXT NOT NULL,
    settings_version BIGINT NOT NULL,
    analysis_json    TEXT NOT NULL,
    analyzed_at      TEXT NOT NULL
);

-- Runs a person excluded from baselines.
CREATE TABLE run_exclusions (
    run_id     TEXT PRIMARY KEY REFERENCES runs (id),
    reason     TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- A run pinned as the baseline of a series: the baseline is that run's commit.
CREATE TABLE baseline_pins (
    project_id BIGINT NOT NULL REFERENCES projects (id),
    series_id  TEXT NOT NULL,
    run_id     TEXT NOT NULL REFERENCES runs (id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (project_id, series_id)
);
