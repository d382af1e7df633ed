//! The upload document: the body of `POST /api/v1/projects/{project}/runs` and what
//! `benchtrail upload --dry-run` prints.
//!
//! ```json
//! {
//!   "run": {"commit": {"sha": "…"}, "branch": "main"},
//!   "configuration": {"hardware": {"accelerator": "NVIDIA H100 80GB HBM3"}},
//!   "cell": {"scenario": "short-chat"},
//!   "files": [{"name": "result.json", "format": "vllm-bench-serve", "content": "{…}"}],
//!   "results": []
//! }
//! ```
//! `configuration` and `cell` apply to every result: configuration fields given here win over
//! what a file says; cell fields fill only what a file leaves unset. A run needs at least one
//! file or result.

use crate::adapters::{self, AdapterError, FileSpec};
use crate::cell::WorkloadCell;
use crate::config::Configuration;
use crate::result::BenchResult;
use crate::run::RunMeta;
use serde::{Deserialize, Serialize};

/// One uploaded file, kept as sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UploadFile {
    /// The file's name on the runner (for people; not interpreted).
    pub name: String,
    /// The adapter to read it with; detected from the content when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The file's text, unchanged.
    pub content: String,
}

/// The upload body.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UploadDocument {
    /// Run metadata.
    pub run: RunMeta,
    /// Configuration applied over every result's configuration.
    #[serde(default)]
    pub configuration: Configuration,
    /// Cell fields that fill every result's unset cell fields.
    #[serde(default)]
    pub cell: WorkloadCell,
    /// Raw tool outputs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<UploadFile>,
    /// Results already in benchtrail's own format.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<BenchResult>,
}

/// An upload read into results.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized {
    /// The results to store, with the upload's configuration and cell applied.
    pub results: Vec<BenchResult>,
    /// The format each file was read as, in file order.
    pub file_formats: Vec<&'static str>,
}

/// A fault in an upload, located by a JSON pointer into the upload document.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{pointer}: {message}")]
pub struct UploadError {
    /// JSON pointer into the upload document, e.g. `/files/0/content` or `/run/commit/sha`.
    pub pointer: String,
    /// For a fault inside a file: a JSON pointer within the faulty record (`/completed`).
    pub field: Option<String>,
    /// For a fault inside a file: the 0-based record and its 1-based line.
    pub record: Option<(usize, usize)>,
    /// What is wrong, in one sentence.
    pub message: String,
}

impl UploadError {
    fn at(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        UploadError {
            pointer: pointer.into(),
            field: None,
            record: None,
            message: message.into(),
        }
    }
}

impl UploadDocument {
    /// Checks the run metadata and reads every file and result into the list of results to
    /// store, with the upload's `configuration` and `cell` applied. Pure: the same document
    /// always gives the same results.
    ///
    /// # Errors
    /// The first [`UploadError`] found; nothing is returned partially.
    pub fn normalize(&self) -> Result<Vec<BenchResult>, UploadError> {
        self.read().map(|n| n.results)
    }

    /// [`Self::normalize`], also telling the format each file was read as.
    ///
    /// # Errors
    /// As [`Self::normalize`].
    pub fn read(&self) -> Result<Normalized, UploadError> {
        let sha = &self.run.commit.sha;
        if sha.is_empty() || sha.len() > 64 || !sha.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(UploadError::at(
                "/run/commit/sha",
                "must be a hex commit SHA (1–64 hex digits)",
            ));
        }
        if self.files.is_empty() && self.results.is_empty() {
            return Err(UploadError::at(
                "/files",
                "an upload needs at least one file or result",
            ));
        }
        let specs: Vec<FileSpec> = self
            .files
            .iter()
            .map(|f| FileSpec {
                name: &f.name,
                format: f.format.as_deref(),
                text: &f.content,
            })
            .collect();
        let read = adapters::read_files(&specs).map_err(|(i, e)| file_error(i, e))?;
        let file_formats = read.iter().map(|f| f.format).collect();
        let mut out: Vec<BenchResult> = read.into_iter().flat_map(|f| f.results).collect();
        for (i, result) in self.results.iter().enumerate() {
            adapters::validate_native(result).map_err(|e| UploadError {
                pointer: format!("/results/{i}{}", e.field),
                field: None,
                record: None,
                message: e.message,
            })?;
            out.push(result.clone());
        }
        for result in &mut out {
            result.configuration.overlay(&self.configuration);
            result.cell.fill_from(&self.cell);
            crate::derived::derive(result);
        }
        Ok(Normalized {
            results: out,
            file_formats,
        })
    }
}

fn file_error(index: usize, error: AdapterError) -> UploadError {
    match &error {
        AdapterError::UnknownFormat(_) => {
            UploadError::at(format!("/files/{index}/format"), error.to_string())
        }
        AdapterError::Field {
            record,
            line,
            error: field,
        } => UploadError {
            pointer: format!("/files/{index}/content"),
            field: Some(field.field.clone()),
            record: Some((*record, *line)),
            message: error.to_string(),
        },
        _ => UploadError::at(format!("/files/{index}/content"), error.to_string()),
    }
}
