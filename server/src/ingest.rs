//! Turning an upload document into the rows of one run.
//!
//! Everything here is computed before the database is touched, so a bad upload fails before
//! anything is written and a good one is written in one transaction by
//! [`crate::storage::Store::insert_run`].

use crate::error::ApiError;
use crate::storage::{
    file_codec, samples_codec, NewFile, NewMetric, NewResult, NewRun, NewSeries, Project,
    ResultSamples,
};
use benchtrail_core::metric::{self, MetricValue};
use benchtrail_core::series::{profile_identity, series_id};
use benchtrail_core::settings::ProjectSettings;
use benchtrail_core::{slo, BenchResult, Configuration, UploadDocument};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

/// [`prepare_with`] under the default project settings.
///
/// # Errors
/// As [`prepare_with`].
pub fn prepare(
    project: &Project,
    doc: &UploadDocument,
    now: DateTime<Utc>,
) -> Result<NewRun, ApiError> {
    prepare_with(project, &ProjectSettings::default(), doc, now)
}

/// Reads and checks `doc` for `project` and returns the run to store, with goodput and SLO
/// attainment computed from each result's samples under every SLO profile of `settings`.
///
/// # Errors
/// [`ApiError::Invalid`] with a JSON pointer into the document when a file does not parse or
/// a result is wrong.
pub fn prepare_with(
    project: &Project,
    settings: &ProjectSettings,
    doc: &UploadDocument,
    now: DateTime<Utc>,
) -> Result<NewRun, ApiError> {
    let invalid = |e: benchtrail_core::upload::UploadError| {
        if let Some(limit) = e.limit {
            ApiError::OverLimit {
                pointer: e.pointer,
                limit,
                detail: e.message,
            }
        } else if e.remedies.is_empty() {
            ApiError::Invalid {
                pointer: e.pointer,
                field: e.field,
                record: e.record,
                detail: e.message,
            }
        } else {
            ApiError::InvalidWithRemedies {
                pointer: e.pointer,
                detail: e.message,
                remedies: e.remedies,
            }
        }
    };
    let read = doc.read().map_err(invalid)?;
    // Two results of one series and cell in one run are ambiguous, never pooled (422).
    doc.check_distinct(&read.results, &project.key_fields)
        .map_err(invalid)?;
    let files = doc
        .files
        .iter()
        .zip(&read.file_formats)
        .enumerate()
        .map(|(index, (file, format))| {
            let references = file_codec::References::of_samples(
                read.results
                    .iter()
                    .filter(|r| r.source.as_ref().is_some_and(|s| s.file == index))
                    .filter_map(|r| r.samples.as_ref()),
            );
            keep_file(&file.name, format, &file.content, &references)
        })
        .collect();
    let run = &doc.run;
    let branch = run
        .branch
        .clone()
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| project.default_branch.clone());
    Ok(NewRun {
        // Without a client id, one derived from the upload: an identical retry finds its
        // stored run (a repeated upload is idempotent).
        id: run
            .id
            .unwrap_or_else(|| doc.derived_run_id(&project.slug, &branch)),
        project_id: project.id,
        commit_sha: run.commit.sha.to_ascii_lowercase(),
        // Lowercase, as the commit's own SHA: parents are matched to stored commits exactly.
        parent_shas: run
            .commit
            .parents
            .iter()
            .map(|p| p.to_ascii_lowercase())
            .collect(),
        commit_time: run.commit.time,
        commit_subject: run.commit.subject.clone(),
        branch,
        pr_number: run.pull_request.as_ref().map(|pr| pr.number as i64),
        merge_base_sha: run
            .pull_request
            .as_ref()
            .and_then(|pr| pr.merge_base.clone()),
        run_at: run.run_at.unwrap_or(now),
        ci_job_url: run.ci_job_url.clone(),
        repeat_index: i64::from(run.repeat_index),
        repeats_expected: run.repeats_expected.map(i64::from),
        tags_json: serde_json::to_string(&run.tags).expect("tags serialize"),
        files,
        results: read
            .results
            .iter()
            .map(|r| prepare_result(project, settings, r))
            .collect(),
        quality: doc.quality.clone(),
    })
}

/// The uploaded file as stored: zstd, or `BTJ1` when its Python-printed floats make that
/// smaller, or `BTJ2` when its results' samples (`references`) hold those floats already
/// ([`file_codec`]; [`crate::storage::Store::run_file`] reads every form).
fn keep_file(
    name: &str,
    format: &str,
    content: &str,
    references: &file_codec::References,
) -> NewFile {
    NewFile {
        name: name.to_string(),
        format: format.to_string(),
        content_gz: file_codec::encode_referring(content.as_bytes(), references),
        size: content.len() as i64,
        sha256: benchtrail_core::sha256_hex(content.as_bytes()),
    }
}

fn prepare_result(
    project: &Project,
    settings: &ProjectSettings,
    result: &BenchResult,
) -> NewResult {
    let config = &result.configuration;
    let mut series = SeriesContext::new(project, config, &result.cell.key(), {
        // The stored cell object carries its stable key next to its fields, as the API shows it.
        let mut cell = serde_json::to_value(&result.cell).expect("cell serializes");
        cell["key"] = Value::String(result.cell.key());
        cell.to_string()
    });
    series.tool_slo = result.facts.get("goodput_slo").map(Value::to_string);
    let values = slo::stored_values(result, &settings.slo_profiles);
    NewResult {
        config_fingerprint: config.fingerprint(),
        config_json: config.canonical_json(),
        cell_key: series.cell_key.clone(),
        cell_json: series.cell_json.clone(),
        facts_json: Value::Object(result.facts.clone()).to_string(),
        warnings_json: serde_json::to_string(&result.warnings).expect("warnings serialize"),
        source_json: serde_json::to_string(&result.source).expect("source serializes"),
        metrics: values.iter().map(|m| series.metric(m)).collect(),
        samples: result
            .samples
            .as_ref()
            .map(|s| (samples_codec::encode(s), s.len() as i64)),
    }
}

/// Goodput and SLO attainment of a stored result under `settings`, as rows to store (what
/// [`crate::storage::Store::put_settings`] writes when a project's profiles change).
pub fn slo_rows(
    project: &Project,
    settings: &ProjectSettings,
    stored: &ResultSamples,
) -> Result<Vec<NewMetric>, String> {
    let config: Configuration = serde_json::from_str(&stored.config_json)
        .map_err(|e| format!("configuration of result {}: {e}", stored.result_id))?;
    let series = SeriesContext::new(project, &config, &stored.cell_key, stored.cell_json.clone());
    Ok(slo::slo_values(&stored.samples, &settings.slo_profiles)
        .iter()
        .map(|m| series.metric(m))
        .collect())
}

/// What the series of one result's values share: project, series key and cell.
struct SeriesContext {
    slug: String,
    series_key: Map<String, Value>,
    series_key_json: String,
    cell_key: String,
    cell_json: String,
    /// The tool's own goodput thresholds (`facts.goodput_slo`, canonical JSON), when known:
    /// part of the identity of the tool's goodput series, because goodput under other
    /// thresholds is another quantity.
    tool_slo: Option<String>,
}

impl SeriesContext {
    fn new(project: &Project, config: &Configuration, cell_key: &str, cell_json: String) -> Self {
        let series_key = config.series_key(&project.key_fields);
        SeriesContext {
            slug: project.slug.clone(),
            series_key_json: Value::Object(series_key.clone()).to_string(),
            series_key,
            cell_key: cell_key.to_string(),
            cell_json,
            tool_slo: None,
        }
    }

    /// The row of one value, with the definition of its series.
    fn metric(&self, m: &MetricValue) -> NewMetric {
        let def = metric::lookup(&m.name).expect("normalized results use vocabulary names");
        let stat = m.stat.to_string();
        let text = |field: &str| {
            self.series_key
                .get(field)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        NewMetric {
            series: NewSeries {
                series_id: series_id(
                    &self.slug,
                    &self.series_key,
                    &self.cell_key,
                    &m.name,
                    &stat,
                    profile_identity(m.slo_profile.as_deref(), self.tool_slo.as_deref()).as_deref(),
                ),
                series_key_json: self.series_key_json.clone(),
                cell_key: self.cell_key.clone(),
                cell_json: self.cell_json.clone(),
                metric: m.name.clone(),
                stat: m.stat.clone(),
                slo_profile: m.slo_profile.clone(),
                unit: def.unit,
                direction: def.direction,
                accelerator: text("hardware.accelerator"),
                model: text("model.name"),
                weights_quantization: text("quantization.weights"),
                kv_cache_dtype: text("quantization.kv_cache_dtype"),
            },
            value: m.value,
            n: m.n,
            ci: m.ci.clone(),
        }
    }
}
