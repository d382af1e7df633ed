-- Per-request samples, SLO profiles (project settings, versioned), goodput series per profile,
-- and confidence intervals. Keep in step with migrations/postgres/0002_samples_slo_ci.sql.

-- The SLO profile of goodput/attainment series; NULL for every other series (and for every
-- series stored before this migration, whose ids do not change).
ALTER TABLE series ADD COLUMN slo_profile TEXT;

-- A confidence interval of the value, where computed (all NULL otherwise).
ALTER TABLE metric_values ADD COLUMN ci_low DOUBLE PRECISION;
ALTER TABLE metric_values ADD COLUMN ci_high DOUBLE PRECISION;
ALTER TABLE metric_values ADD COLUMN ci_level DOUBLE PRECISION;
ALTER TABLE metric_values ADD COLUMN ci_method TEXT;

-- One blob per result with samples; the encoding is described in
-- server/src/storage/samples_codec.rs (`encoding` names it, `requests` is for people).
CREATE TABLE result_samples (
    result_id BIGINT PRIMARY KEY REFERENCES results (id),
    encoding  TEXT NOT NULL,
    requests  BIGINT NOT NULL,
    data      BLOB NOT NULL
);

-- Every stored version of a project's settings. Version 1 (the defaults) is implicit: a
-- project without rows has it. Each change stores the next version.
CREATE TABLE project_settings (
    project_id    BIGINT NOT NULL REFERENCES projects (id),
    version       BIGINT NOT NULL,
    settings_json TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (project_id, version)
);
