//! Rows going into and coming out of storage. Plain data, no SQL.

use benchtrail_core::metric::Interval;
use benchtrail_core::settings::ProjectSettings;
use benchtrail_core::{Direction, Stat, Unit};
use chrono::{DateTime, FixedOffset, Utc};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

/// Which database a [`super::Store`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// Embedded SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

/// A project as stored.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Project {
    /// Internal id.
    #[serde(skip)]
    pub id: i64,
    /// URL-safe name, unique.
    pub slug: String,
    /// Display name.
    pub name: String,
    /// Repository URL used to link commits (`{repository_url}/commit/{sha}`), if any.
    pub repository_url: Option<String>,
    /// The base branch plots default to.
    pub default_branch: String,
    /// Public projects are readable without a token.
    pub public: bool,
    /// `--metadata` keys that are part of the series key in this project (e.g. `framework`).
    pub key_fields: Vec<String>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

/// What creating a project needs.
#[derive(Debug, Clone)]
pub struct NewProject {
    /// URL-safe name (validated by the caller: `[a-z0-9][a-z0-9-_]*`).
    pub slug: String,
    /// Display name.
    pub name: String,
    /// Repository URL.
    pub repository_url: Option<String>,
    /// Default branch.
    pub default_branch: String,
    /// Readable without a token.
    pub public: bool,
    /// Metadata key fields.
    pub key_fields: Vec<String>,
}

pub use benchtrail_core::access::Scope;

/// One metric value of a result to insert, with the series it belongs to.
#[derive(Debug, Clone)]
pub struct NewMetric {
    /// The series (inserted if new).
    pub series: NewSeries,
    /// The value in `series.unit`.
    pub value: f64,
    /// Samples behind it.
    pub n: Option<u64>,
    /// Confidence interval, if computed.
    pub ci: Option<Interval>,
}

/// A series definition, stored once per `series_id`.
#[derive(Debug, Clone)]
pub struct NewSeries {
    /// `benchtrail_core::series::series_id(...)`.
    pub series_id: String,
    /// The series key as canonical JSON text (a flat object of dotted config fields).
    pub series_key_json: String,
    /// The cell key string.
    pub cell_key: String,
    /// The cell as JSON text.
    pub cell_json: String,
    /// Metric name.
    pub metric: String,
    /// Statistic.
    pub stat: Stat,
    /// SLO profile of goodput/attainment series (part of the series identity).
    pub slo_profile: Option<String>,
    /// Unit.
    pub unit: Unit,
    /// Direction.
    pub direction: Direction,
    /// Denormalized for filters: accelerator model, model name, weight quantization,
    /// KV-cache dtype (from the series key).
    pub accelerator: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// Weight quantization.
    pub weights_quantization: Option<String>,
    /// KV-cache dtype.
    pub kv_cache_dtype: Option<String>,
}

/// One result to insert.
#[derive(Debug, Clone)]
pub struct NewResult {
    /// SHA-256 fingerprint of the configuration.
    pub config_fingerprint: String,
    /// The configuration's canonical JSON (stored once per fingerprint).
    pub config_json: String,
    /// The cell key.
    pub cell_key: String,
    /// The cell as JSON text.
    pub cell_json: String,
    /// Facts (JSON object text).
    pub facts_json: String,
    /// Warnings (JSON array text of `{code, message}`).
    pub warnings_json: String,
    /// Source (JSON text of `{format, file, record}` or `null`).
    pub source_json: String,
    /// Metric values.
    pub metrics: Vec<NewMetric>,
    /// Per-request samples, encoded by [`super::samples_codec::encode`], with the request count.
    pub samples: Option<(super::samples_codec::EncodedSamples, i64)>,
}

/// One uploaded file to keep.
#[derive(Debug, Clone)]
pub struct NewFile {
    /// Name as sent.
    pub name: String,
    /// Format it was read with.
    pub format: String,
    /// The content, compressed: zstd as the server stores it (gzip is read too: rows stored
    /// before session 32, or a caller's).
    pub content_gz: Vec<u8>,
    /// Uncompressed size in bytes.
    pub size: i64,
    /// SHA-256 of the uncompressed content.
    pub sha256: String,
}

/// A whole run to insert in one transaction.
#[derive(Debug, Clone)]
pub struct NewRun {
    /// Run id.
    pub id: Uuid,
    /// Owning project.
    pub project_id: i64,
    /// Commit SHA.
    pub commit_sha: String,
    /// Parent SHAs.
    pub parent_shas: Vec<String>,
    /// Commit time with the committer's UTC offset (stored as the UTC instant and the offset).
    pub commit_time: Option<DateTime<FixedOffset>>,
    /// Commit subject line.
    pub commit_subject: Option<String>,
    /// Branch (resolved: never empty).
    pub branch: String,
    /// Pull-request number.
    pub pr_number: Option<i64>,
    /// Merge base of the pull request.
    pub merge_base_sha: Option<String>,
    /// When the benchmark ran (upload time when the runner did not say).
    pub run_at: DateTime<Utc>,
    /// CI job URL.
    pub ci_job_url: Option<String>,
    /// Repeat index.
    pub repeat_index: i64,
    /// Runs of the commit the uploader announced (`run.repeats_expected`).
    pub repeats_expected: Option<i64>,
    /// Tags as JSON object text.
    pub tags_json: String,
    /// Files, in upload order (`files/{n}`).
    pub files: Vec<NewFile>,
    /// Results, in upload order.
    pub results: Vec<NewResult>,
    /// Quality results, in upload order (`quality/{n}`; table `quality_results`).
    pub quality: Vec<benchtrail_core::quality::QualityResult>,
}

/// The outcome of [`super::Store::insert_run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    /// The run was stored now.
    Created,
    /// A run with this id already existed in this project; nothing was stored.
    AlreadyStored,
}

/// A run of a commit as its analysis reads it (`Store::commit_runs_with_series`): the summary
/// and, per result with metric values in upload order, the ids of the result's series in the
/// order the run's page lists its metrics (the first names the result's group). No values:
/// the analysis reads those from the window of each group.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitRun {
    /// The run's metadata.
    pub summary: RunSummary,
    /// Each result's series ids (16 hex digits), in the result's metric order; a result
    /// without values has no entry.
    pub result_series: Vec<Vec<String>>,
}

impl CommitRun {
    /// Whether a result of the run has series `id`.
    pub fn has_series(&self, id: &str) -> bool {
        self.result_series.iter().flatten().any(|s| s == id)
    }
}

/// A stored run without its results (for lists).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct RunSummary {
    /// Run id.
    pub id: Uuid,
    /// Project slug.
    pub project: String,
    /// Commit SHA.
    pub commit_sha: String,
    /// Parent SHAs.
    pub parent_shas: Vec<String>,
    /// Commit time with the committer's UTC offset as uploaded (`Z` for a zero offset).
    #[serde(with = "benchtrail_core::run::rfc3339_with_offset")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub commit_time: Option<DateTime<FixedOffset>>,
    /// Commit subject.
    pub commit_subject: Option<String>,
    /// Branch.
    pub branch: String,
    /// Pull-request number.
    pub pr_number: Option<i64>,
    /// Merge base.
    pub merge_base_sha: Option<String>,
    /// When the benchmark ran.
    pub run_at: DateTime<Utc>,
    /// When it was uploaded.
    pub uploaded_at: DateTime<Utc>,
    /// CI job URL.
    pub ci_job_url: Option<String>,
    /// Repeat index.
    pub repeat_index: i64,
    /// How many runs of its commit the uploader announced (`run.repeats_expected`, `benchtrail
    /// upload --repeats N`); absent: not announced (the project's `detection.repeats` applies).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeats_expected: Option<i64>,
    /// Tags.
    pub tags: Value,
    /// Number of results.
    pub result_count: i64,
    /// How many times this run was uploaded: 1, plus one per identical re-upload (answered
    /// 200, nothing stored again).
    pub upload_count: i64,
}

/// A stored metric value.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct StoredMetric {
    /// Metric name.
    pub name: String,
    /// Statistic.
    pub stat: Stat,
    /// Unit.
    pub unit: Unit,
    /// Value.
    pub value: f64,
    /// Samples behind it.
    pub n: Option<u64>,
    /// For `request_goodput` and `slo_attainment`: the SLO profile (`tool` for the tool's own
    /// thresholds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slo_profile: Option<String>,
    /// A confidence interval of the statistic (bootstrap over requests), where computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci: Option<Interval>,
    /// The series it belongs to.
    pub series_id: String,
}

/// A stored result.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct StoredResult {
    /// 0-based position in the run.
    pub index: i64,
    /// Configuration fingerprint.
    pub config_fingerprint: String,
    /// Cell key.
    pub cell_key: String,
    /// Cell object.
    pub cell: Value,
    /// Facts object.
    pub facts: Value,
    /// Warnings array.
    pub warnings: Value,
    /// Source object or null.
    pub source: Value,
    /// Metrics in vocabulary order (names outside the vocabulary last, by name), then by
    /// statistic: mean, percentiles ascending numerically, std, min, max, value.
    pub metrics: Vec<StoredMetric>,
}

/// A stored file's metadata.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct StoredFileInfo {
    /// Position in the upload (`files/{n}`).
    pub index: i64,
    /// Name as sent.
    pub name: String,
    /// Format it was read with.
    pub format: String,
    /// Uncompressed size in bytes.
    pub size: i64,
    /// SHA-256 of the content.
    pub sha256: String,
}

/// A stored run with everything in it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct StoredRun {
    /// The run's metadata.
    #[serde(flatten)]
    pub summary: RunSummary,
    /// Its files.
    pub files: Vec<StoredFileInfo>,
    /// Its results.
    pub results: Vec<StoredResult>,
    /// Its quality (accuracy) results on evaluation tasks, in upload order: one per task and
    /// metric, each `{task, metric, value, stderr?, samples?}` in the evaluation tool's scale.
    /// Empty when the upload had none.
    pub quality: Vec<benchtrail_core::quality::QualityResult>,
    /// Its exclusion from baselines (`POST /api/v1/runs/{id}/exclusion`), or `null` when it
    /// is not excluded.
    pub exclusion: Option<super::RunExclusion>,
}

/// A stored configuration.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct StoredConfig {
    /// Fingerprint.
    pub fingerprint: String,
    /// The configuration object (canonical).
    pub configuration: Value,
    /// First time it was stored.
    pub created_at: DateTime<Utc>,
}

/// A series definition as stored.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct SeriesInfo {
    /// Stable id.
    pub series_id: String,
    /// Project slug.
    pub project: String,
    /// Series key object.
    pub series_key: Value,
    /// Cell key.
    pub cell_key: String,
    /// Cell object.
    pub cell: Value,
    /// Metric.
    pub metric: String,
    /// Statistic.
    pub stat: Stat,
    /// SLO profile, for goodput and attainment series.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slo_profile: Option<String>,
    /// Unit.
    pub unit: Unit,
    /// Direction.
    pub direction: Direction,
}

/// A version of a project's settings.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct StoredSettings {
    /// 1 for the defaults every project starts with; each change stores the next number.
    pub version: i64,
    /// When this version was stored (the project's creation for version 1).
    pub updated_at: DateTime<Utc>,
    /// The settings document.
    #[serde(flatten)]
    pub settings: ProjectSettings,
}

/// A stored result's samples, for recomputing what depends on project settings.
#[derive(Debug, Clone)]
pub struct ResultSamples {
    /// Internal result id.
    pub result_id: i64,
    /// Its run.
    pub run_id: String,
    /// The configuration's canonical JSON.
    pub config_json: String,
    /// The cell as JSON text.
    pub cell_json: String,
    /// Cell key.
    pub cell_key: String,
    /// The samples.
    pub samples: benchtrail_core::samples::RequestSamples,
}

/// Filters for listing series; all optional, all exact matches except `cell` (substring of
/// the cell key).
#[derive(Debug, Clone, Default)]
pub struct SeriesFilter {
    /// Accelerator model.
    pub accelerator: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// Matches weight quantization or KV-cache dtype.
    pub quantization: Option<String>,
    /// Substring of the cell key, e.g. `max_concurrency=4`.
    pub cell: Option<String>,
    /// Metric name.
    pub metric: Option<String>,
    /// Statistic label.
    pub stat: Option<String>,
}

/// One point of a series: one result's value at one commit.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct SeriesPoint {
    /// Commit SHA.
    pub commit_sha: String,
    /// Commit time with the committer's UTC offset as uploaded (`Z` for a zero offset).
    #[serde(with = "benchtrail_core::run::rfc3339_with_offset")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub commit_time: Option<DateTime<FixedOffset>>,
    /// Commit subject.
    pub commit_subject: Option<String>,
    /// The run.
    pub run_id: Uuid,
    /// When it ran.
    pub run_at: DateTime<Utc>,
    /// Repeat index.
    pub repeat_index: i64,
    /// Value.
    pub value: f64,
    /// Samples behind it.
    pub n: Option<u64>,
    /// The value's confidence interval (bounds in the value's unit, level, method), when the
    /// upload had per-request samples to compute one from (percentiles); null otherwise.
    pub ci: Option<Interval>,
    /// The run is excluded from baselines (`POST /api/v1/runs/{id}/exclusion`).
    pub excluded: bool,
}

/// A page of a list: items plus the cursor of the next page (opaque text), if any.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Page<T> {
    /// The items.
    pub items: Vec<T>,
    /// Pass as `cursor` to get the next page; `None` on the last page.
    pub next_cursor: Option<String>,
}
