//! Turning an upload document into the rows of one run.
//!
//! Everything here is computed before the database is touched, so a bad upload fails before
//! anything is written and a good one is written in one transaction by
//! [`crate::storage::Store::insert_run`].

use crate::error::ApiError;
use crate::storage::{NewFile, NewMetric, NewResult, NewRun, NewSeries, Project};
use benchtrail_core::metric;
use benchtrail_core::series::series_id;
use benchtrail_core::{BenchResult, UploadDocument};
use chrono::{DateTime, Utc};
use flate2::{write::GzEncoder, Compression};
use serde_json::{Map, Value};
use std::io::Write;
use uuid::Uuid;

/// Reads and checks `doc` for `project` and returns the run to store.
///
/// # Errors
/// [`ApiError::Invalid`] with a JSON pointer into the document when a file does not parse or
/// a result is wrong.
pub fn prepare(
    project: &Project,
    doc: &UploadDocument,
    now: DateTime<Utc>,
) -> Result<NewRun, ApiError> {
    let read = doc.read().map_err(|e| ApiError::Invalid {
        pointer: e.pointer,
        field: e.field,
        record: e.record,
        detail: e.message,
    })?;
    let files = doc
        .files
        .iter()
        .zip(&read.file_formats)
        .map(|(file, format)| keep_file(&file.name, format, &file.content))
        .collect();
    let run = &doc.run;
    Ok(NewRun {
        id: run.id.unwrap_or_else(Uuid::new_v4),
        project_id: project.id,
        commit_sha: run.commit.sha.to_ascii_lowercase(),
        parent_shas: run.commit.parents.clone(),
        commit_time: run.commit.time,
        commit_subject: run.commit.subject.clone(),
        branch: run
            .branch
            .clone()
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| project.default_branch.clone()),
        pr_number: run.pull_request.as_ref().map(|pr| pr.number as i64),
        merge_base_sha: run
            .pull_request
            .as_ref()
            .and_then(|pr| pr.merge_base.clone()),
        run_at: run.run_at.unwrap_or(now),
        ci_job_url: run.ci_job_url.clone(),
        repeat_index: i64::from(run.repeat_index),
        tags_json: serde_json::to_string(&run.tags).expect("tags serialize"),
        files,
        results: read
            .results
            .iter()
            .map(|r| prepare_result(project, r))
            .collect(),
    })
}

fn keep_file(name: &str, format: &str, content: &str) -> NewFile {
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(content.as_bytes())
        .expect("writing to memory cannot fail");
    NewFile {
        name: name.to_string(),
        format: format.to_string(),
        content_gz: gz.finish().expect("writing to memory cannot fail"),
        size: content.len() as i64,
        sha256: benchtrail_core::sha256_hex(content.as_bytes()),
    }
}

fn prepare_result(project: &Project, result: &BenchResult) -> NewResult {
    let config = &result.configuration;
    let series_key = config.series_key(&project.key_fields);
    let series_key_json = Value::Object(series_key.clone()).to_string();
    let cell_key = result.cell.key();
    // The stored cell object carries its stable key next to its fields, as the API shows it.
    let mut cell = serde_json::to_value(&result.cell).expect("cell serializes");
    cell["key"] = Value::String(cell_key.clone());
    let cell_json = cell.to_string();
    let text = |key: &Map<String, Value>, field: &str| {
        key.get(field).and_then(Value::as_str).map(str::to_string)
    };
    let metrics = result
        .metrics
        .iter()
        .map(|m| {
            let def = metric::lookup(&m.name).expect("normalized results use vocabulary names");
            let stat = m.stat.to_string();
            NewMetric {
                series: NewSeries {
                    series_id: series_id(&project.slug, &series_key, &cell_key, &m.name, &stat),
                    series_key_json: series_key_json.clone(),
                    cell_key: cell_key.clone(),
                    cell_json: cell_json.clone(),
                    metric: m.name.clone(),
                    stat: m.stat.clone(),
                    unit: def.unit,
                    direction: def.direction,
                    accelerator: text(&series_key, "hardware.accelerator"),
                    model: text(&series_key, "model.name"),
                    weights_quantization: text(&series_key, "quantization.weights"),
                    kv_cache_dtype: text(&series_key, "quantization.kv_cache_dtype"),
                },
                value: m.value,
                n: m.n,
            }
        })
        .collect();
    NewResult {
        config_fingerprint: config.fingerprint(),
        config_json: config.canonical_json(),
        cell_key,
        cell_json,
        facts_json: Value::Object(result.facts.clone()).to_string(),
        warnings_json: serde_json::to_string(&result.warnings).expect("warnings serialize"),
        source_json: serde_json::to_string(&result.source).expect("source serializes"),
        metrics,
    }
}
