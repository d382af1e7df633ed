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
//!
//! A repeated upload is idempotent: with `run.id`, by that id; without it, by the id
//! [`UploadDocument::derived_run_id`] derives from the upload's content.

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
    /// The file's name on the runner (for people; not interpreted); at most 4096 characters.
    #[schema(max_length = 4096)]
    pub name: String,
    /// The adapter to read it with; detected from the content when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The file's text, unchanged; at most 48 MiB (50331648 bytes of UTF-8,
    /// `upload_limits::MAX_FILE_BYTES`; 413 at
    /// `/files/{i}/content` otherwise).
    // Read without serde_json's scratch copy (`crate::json_string`): a 25 MB file is held once,
    // not twice more, while the body is parsed.
    #[serde(deserialize_with = "crate::json_string::deserialize_unescaped")]
    pub content: String,
}

/// The upload body, within the bounds of `benchtrail_core::upload_limits`: files, results, tags,
/// metadata strings (each refusal a 422 at the field, or 413 for a file's size, naming the
/// bound in `limit`).
///
/// A repeated upload is idempotent. Without `run.id`, the run's id is derived from the upload
/// (a UUID v5 over the project, branch, commit, pull-request number, `run.repeat_index`, every
/// file's name and SHA-256 and the inline `results`): sending the same upload again answers
/// 200 with the same run id and stores nothing, while another `repeat_index` or other files or
/// results make a new run. Files of one upload with identical content (or giving the same
/// results) count once, with a `duplicate_file` warning. Quality results, when given, are part
/// of the derived id too.
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
    /// Raw tool outputs; at most 256 files (`upload_limits::MAX_FILES`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 256)]
    pub files: Vec<UploadFile>,
    /// Results already in benchtrail's own format. An upload gives at most 1024 results
    /// (`upload_limits::MAX_RESULTS`), these and those read from its
    /// files together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 1024)]
    pub results: Vec<BenchResult>,
    /// Quality (accuracy) results of the run's model and configuration on evaluation tasks
    /// (`benchtrail_core::quality::QualityResult`): what `benchtrail upload --quality FILE` reads from
    /// benchtrail's quality document or lm-evaluation-harness's results JSON. At most 1024
    /// (`upload_limits::MAX_QUALITY_RESULTS`), one per task and metric. They make a quantization
    /// change comparable (`quantization_without_quality`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 1024)]
    pub quality: Vec<crate::quality::QualityResult>,
}

/// An upload read into results.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized {
    /// The results to store, with the upload's configuration and cell applied.
    pub results: Vec<BenchResult>,
    /// The format each file was read as, in file order.
    pub file_formats: Vec<&'static str>,
    /// Files counted once because an earlier file of the upload holds the same measurement.
    pub duplicates: Vec<DuplicateFile>,
}

/// A file whose results were not counted: an earlier file of the same upload holds the same
/// measurement (see [`UploadDocument::read`]).
#[derive(Debug, Clone, PartialEq)]
pub struct DuplicateFile {
    /// Index of the file not counted.
    pub index: usize,
    /// Index of the earlier file it repeats, whose results are kept.
    pub same_as: usize,
    /// True when the two files' contents are byte-identical; false when they differ but give
    /// the same results (AIPerf's `phases/profiling/profile_export_aiperf.json` beside the
    /// run folder's `profile_export_aiperf.json`, which adds only `warmup_metrics`).
    pub identical: bool,
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
    /// Other fields of the upload document that would resolve the fault, each a JSON pointer
    /// and one sentence: `/run/repeat_index` for two results of one cell (the problem lists
    /// them in `errors` after the fault itself).
    pub remedies: Vec<(String, String)>,
    /// The bound of [`crate::upload_limits`] the upload exceeds, when that is the fault.
    pub limit: Option<crate::upload_limits::Limit>,
}

/// Where a repeat's index goes in an upload document ([`UploadDocument::check_distinct`]).
pub const REPEAT_INDEX_POINTER: &str = "/run/repeat_index";
/// Where the upload's workload cell goes.
pub const CELL_POINTER: &str = "/cell";

impl UploadError {
    pub(crate) fn at(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        UploadError {
            pointer: pointer.into(),
            field: None,
            record: None,
            message: message.into(),
            remedies: Vec::new(),
            limit: None,
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
    /// One measurement counts once: a file whose content is byte-identical to an earlier
    /// file's (the same file twice, a copy in another folder), or whose results equal an
    /// earlier file's in everything but where they were read from, adds no result; the
    /// earlier file's results are kept, under its name, with a `duplicate_file` warning naming
    /// both files, and the repeat is listed in [`Normalized::duplicates`]. Every file is still
    /// read (a repeated per-request file may be the companion of another folder's summary) and
    /// kept as sent. Deduplicating is right for every format: two files of one upload are
    /// one run, so the same numbers twice are never two independent repeats (repeats are
    /// separate runs, told apart by `run.repeat_index`).
    ///
    /// # Errors
    /// As [`Self::normalize`].
    pub fn read(&self) -> Result<Normalized, UploadError> {
        // Bounds first: they are cheap, and an over-size file is refused before it is hashed
        // or parsed.
        self.check_bounds()?;
        self.check_run()?;
        self.check_text()?;
        self.check_quality()?;
        if self.files.is_empty() && self.results.is_empty() {
            return Err(UploadError::at(
                "/files",
                "an upload needs at least one file or result",
            ));
        }
        // A file byte-identical to an earlier one is not read at all (a per-request file twice
        // in one folder would otherwise be paired twice with its summary).
        let hashes: Vec<String> = self
            .files
            .iter()
            .map(|f| crate::sha256_hex(f.content.as_bytes()))
            .collect();
        let first_of: Vec<usize> = (0..self.files.len())
            .map(|i| (0..i).find(|&j| hashes[j] == hashes[i]).unwrap_or(i))
            .collect();
        let unique: Vec<usize> = (0..self.files.len())
            .filter(|&i| first_of[i] == i)
            .collect();
        let specs: Vec<FileSpec> = unique
            .iter()
            .map(|&i| &self.files[i])
            .map(|f| FileSpec {
                name: &f.name,
                format: f.format.as_deref(),
                text: &f.content,
            })
            .collect();
        let read = adapters::read_files(&specs).map_err(|(k, e)| file_error(unique[k], e))?;
        let mut per_file: Vec<Vec<BenchResult>> = vec![Vec::new(); self.files.len()];
        let mut formats: Vec<&'static str> = vec![""; self.files.len()];
        for (k, mut file) in read.into_iter().enumerate() {
            let i = unique[k];
            for r in &mut file.results {
                if let Some(source) = &mut r.source {
                    source.file = i;
                }
            }
            formats[i] = file.format;
            per_file[i] = file.results;
        }
        self.check_result_count(&per_file.iter().map(Vec::len).collect::<Vec<_>>())?;
        let file_formats = (0..self.files.len())
            .map(|i| formats[first_of[i]])
            .collect();
        let duplicates = self.count_once(&first_of, &mut per_file);
        let mut out: Vec<BenchResult> = per_file.into_iter().flatten().collect();
        for (i, result) in self.results.iter().enumerate() {
            adapters::validate_native(result).map_err(|e| UploadError {
                pointer: format!("/results/{i}{}", e.field),
                field: None,
                record: None,
                message: e.message,
                remedies: Vec::new(),
                limit: None,
            })?;
            out.push(result.clone());
        }
        for result in &mut out {
            result.configuration.overlay(&self.configuration);
            // The identity rule (crate::cell): the file, then the recorded command, then `cell`.
            crate::cell::complete(result);
            result.cell.fill_from(&self.cell);
            crate::cell::record_requested_range(result);
            crate::derived::derive(result);
            crate::checks::annotate(result);
        }
        Ok(Normalized {
            results: out,
            file_formats,
            duplicates,
        })
    }

    /// Empties the results of every file that repeats an earlier one (see [`Self::read`]) and
    /// warns on the kept results.
    /// `first_of[i]` is the first file with file `i`'s content (`i` itself when none before).
    fn count_once(
        &self,
        first_of: &[usize],
        per_file: &mut [Vec<BenchResult>],
    ) -> Vec<DuplicateFile> {
        let mut duplicates = Vec::new();
        for i in 0..per_file.len() {
            let found = Some(first_of[i])
                .filter(|&j| j != i)
                .map(|j| (j, true))
                .or_else(|| {
                    (0..i)
                        .find(|&j| same_measurements(&per_file[j], &per_file[i]))
                        .map(|j| (j, false))
                });
            let Some((earlier, identical)) = found else {
                continue;
            };
            // Keep the copy that carries per-request samples (the summary read beside its
            // per-request file), whichever comes first: sorted paths put AIPerf's
            // `phases/profiling/` copy before the run folder's own summary.
            let with_samples = |r: &[BenchResult]| r.iter().any(|r| r.samples.is_some());
            let (j, i) = if with_samples(&per_file[i]) && !with_samples(&per_file[earlier]) {
                (i, earlier)
            } else {
                (earlier, i)
            };
            per_file[i].clear();
            duplicates.push(DuplicateFile {
                index: i,
                same_as: j,
                identical,
            });
            let how = if identical {
                "the same content as"
            } else {
                "the same results as"
            };
            let message = format!(
                "`/files/{i}` ({:?}) has {how} `/files/{j}` ({:?}): one measurement, counted once, as {:?}.",
                self.files[i].name, self.files[j].name, self.files[j].name
            );
            // On the kept file's results; for a per-request file (no result of its own), on
            // every result of the upload.
            let targets: Vec<usize> = if per_file[j].is_empty() {
                (0..per_file.len()).collect()
            } else {
                vec![j]
            };
            for t in targets {
                for r in &mut per_file[t] {
                    r.warnings.push(crate::result::Warning {
                        code: "duplicate_file".into(),
                        message: message.clone(),
                    });
                }
            }
        }
        duplicates
    }
}

impl UploadDocument {
    /// Refuses an upload in which two results have the same series key (under the project's
    /// declared metadata `key_fields`) and the same cell: one upload is one run, so two such
    /// results are two measurements of one workload that nothing tells apart, and they are
    /// never pooled as if they were repeats. Repeats are explicit: each its own upload with
    /// its own `run.repeat_index`. `results` are those [`Self::read`] gives (files counted
    /// once already, so an identical copy of a file is no conflict).
    ///
    /// # Errors
    /// An [`UploadError`] at the later of the two results (`/files/{i}`, or `/results/{i}` for
    /// an inline result) naming both files (and records, for two records of one file), the
    /// cell and the series key.
    pub fn check_distinct(
        &self,
        results: &[BenchResult],
        key_fields: &[String],
    ) -> Result<(), UploadError> {
        let mut inline = 0usize;
        let mut seen: Vec<(String, String, String, Option<usize>)> =
            Vec::with_capacity(results.len());
        for result in results {
            let (pointer, name) = match &result.source {
                Some(source) => (
                    format!("/files/{}", source.file),
                    format!(
                        "`/files/{}` ({:?}, record {})",
                        source.file,
                        self.files.get(source.file).map_or("", |f| f.name.as_str()),
                        source.record
                    ),
                ),
                None => {
                    inline += 1;
                    let i = inline - 1;
                    (format!("/results/{i}"), format!("`/results/{i}`"))
                }
            };
            let key =
                serde_json::Value::Object(result.configuration.series_key(key_fields)).to_string();
            let cell = result.cell.key();
            let file = result.source.as_ref().map(|s| s.file);
            if let Some((_, _, earlier, earlier_file)) =
                seen.iter().find(|(k, c, _, _)| *k == key && *c == cell)
            {
                if file.is_some() && *earlier_file == file {
                    // Two records of one file (an SGLang JSON Lines file appended to by two
                    // runs): no flag of this upload tells them apart, the file must be split.
                    let mut e = UploadError::at(
                        pointer,
                        format!(
                            "{name} and {earlier} are two records of one file with one series key ({key}) and one cell (`{cell}`): one upload is one run, so they are ambiguous and are not pooled. Split the file and upload each record as its own run (its own repeat index), or remove the record that is not wanted."
                        ),
                    );
                    e.remedies = vec![(
                        CELL_POINTER.to_string(),
                        "another workload: give the cell fields that tell it apart (fields the file states win)".to_string(),
                    )];
                    return Err(e);
                }
                let mut e = UploadError::at(
                    pointer,
                    format!(
                        "{name} and {earlier} are two results of one series key ({key}) in one cell (`{cell}`): one upload is one run, so they are ambiguous and are not pooled. Upload each repeat as its own run with its own `run.repeat_index`, or tell the workloads apart (the file's settings, the recorded `benchmark.command`, or `cell`)."
                    ),
                );
                e.remedies = vec![
                    (
                        REPEAT_INDEX_POINTER.to_string(),
                        "a repeat of the cell: upload it as its own run with its own repeat index"
                            .to_string(),
                    ),
                    (
                        CELL_POINTER.to_string(),
                        "another workload: give the cell fields that tell it apart".to_string(),
                    ),
                ];
                return Err(e);
            }
            seen.push((key, cell, name, file));
        }
        Ok(())
    }
}

/// Whether two files' results are the same measurement: as many, each equal in everything
/// but its source (file index) and per-request samples (a summary read beside its per-request
/// file has them, the same summary elsewhere does not). Files without results never match.
fn same_measurements(a: &[BenchResult], b: &[BenchResult]) -> bool {
    let bare = |r: &BenchResult| {
        let mut r = r.clone();
        r.source = None;
        r.samples = None;
        r.warnings.retain(|w| w.code != "duplicate_file");
        r
    };
    !a.is_empty() && a.len() == b.len() && a.iter().zip(b).all(|(x, y)| bare(x) == bare(y))
}

/// Namespace of derived run ids (UUID v5). Fixed: changing it would give a retry of an upload
/// stored before the change a new id.
const RUN_ID_NAMESPACE: uuid::Uuid =
    uuid::Uuid::from_u128(0x5d0c_7a3e_41b2_4f6a_9e18_c2b7_0a4d_93f1);

impl UploadDocument {
    /// The id of a run uploaded without `run.id`: a UUID v5 over what tells one measurement
    /// from another: the project, the branch the run is stored on (the project's default
    /// branch when none is given), the commit (lower case), the pull-request number,
    /// `run.repeat_index`, every file's name and SHA-256 in order, the inline results, and the
    /// quality results when there are any. So
    /// an identical retry gets the same id (and is answered "already stored"), while another
    /// repeat (another `repeat_index`) or another measurement (other file content, other
    /// results) is a new run. Not part of it, as they describe a run rather than tell it
    /// apart: `configuration`, `cell`, `tags`, `run_at`, `ci_job_url`, the commit's time,
    /// parents and subject, and the files' `format`.
    pub fn derived_run_id(&self, project: &str, branch: &str) -> uuid::Uuid {
        let files: Vec<serde_json::Value> = self
            .files
            .iter()
            .map(|f| serde_json::json!([f.name, crate::sha256_hex(f.content.as_bytes())]))
            .collect();
        let results = serde_json::to_value(&self.results).expect("results serialize");
        let mut name = serde_json::json!([
            "benchtrail-run-id/1",
            project,
            branch,
            self.run.commit.sha.to_ascii_lowercase(),
            self.run.pull_request.as_ref().map(|pr| pr.number),
            self.run.repeat_index,
            files,
            results,
        ]);
        // Quality results count only when there are any, so that the ids of uploads without
        // them (every upload before they existed) stay what they were.
        if !self.quality.is_empty() {
            let quality = serde_json::to_value(&self.quality).expect("quality serializes");
            name.as_array_mut().expect("an array").push(quality);
        }
        let name = name.to_string();
        uuid::Uuid::new_v5(&RUN_ID_NAMESPACE, name.as_bytes())
    }
}

/// Shortest commit id accepted: git's default abbreviation. Shorter ones are ambiguous in any
/// real repository.
const MIN_SHA_LEN: usize = 7;

use crate::settings::MAX_REPEATS;

fn is_sha(s: &str) -> bool {
    (MIN_SHA_LEN..=64).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit())
}

impl UploadDocument {
    /// Commit ids are hex of 7 to 64 digits; a pull-request number fits the database.
    fn check_run(&self) -> Result<(), UploadError> {
        let sha_message = "must be a hex commit SHA (7–64 hex digits)";
        if !is_sha(&self.run.commit.sha) {
            return Err(UploadError::at("/run/commit/sha", sha_message));
        }
        if let Some(i) = self.run.commit.parents.iter().position(|p| !is_sha(p)) {
            return Err(UploadError::at(
                format!("/run/commit/parents/{i}"),
                sha_message,
            ));
        }
        if let Some(n) = self.run.repeats_expected {
            if !(1..=MAX_REPEATS).contains(&n) {
                return Err(UploadError::at(
                    "/run/repeats_expected",
                    format!("expected a number of repeats in [1, {MAX_REPEATS}], found {n}"),
                ));
            }
        }
        if let Some(branch) = &self.run.branch {
            if let Some(why) = branch_fault(branch) {
                return Err(UploadError::at("/run/branch", why));
            }
        }
        if let Some(pr) = &self.run.pull_request {
            if pr.number == 0 || pr.number > i64::MAX as u64 {
                return Err(UploadError::at(
                    "/run/pull_request/number",
                    "must be a pull-request number from 1 to 2^63 − 1",
                ));
            }
            if pr.merge_base.as_deref().is_some_and(|m| !is_sha(m)) {
                return Err(UploadError::at("/run/pull_request/merge_base", sha_message));
            }
        }
        Ok(())
    }
}

/// Why `branch` is not a branch name git would accept (the rules of `git check-ref-format
/// --branch` that matter for a name shown and linked everywhere), or `None`.
fn branch_fault(branch: &str) -> Option<String> {
    const FORBIDDEN: [char; 8] = [' ', '~', '^', ':', '?', '*', '[', '\\'];
    let why = if branch.is_empty() {
        "must not be empty".to_string()
    } else if let Some(c) = branch
        .chars()
        .find(|c| c.is_control() || FORBIDDEN.contains(c))
    {
        format!(
            "{c:?} is not allowed in a branch name (git refuses control characters, spaces and ~ ^ : ? * [ \\)"
        )
    } else if branch.contains("..") || branch.contains("@{") || branch.contains("//") {
        "must not contain `..`, `@{` or `//` (git refuses them)".to_string()
    } else if branch.starts_with(['/', '.', '-'])
        || branch.ends_with(['/', '.'])
        || branch.ends_with(".lock")
    {
        "must not start with `/`, `.` or `-`, nor end with `/`, `.` or `.lock` (git refuses them)"
            .to_string()
    } else {
        return None;
    };
    Some(why)
}

impl UploadDocument {
    /// Every string and object outside file contents (kept as compressed bytes, never shown
    /// as text): no NUL character (PostgreSQL text cannot hold it, and no benchmark metadata
    /// needs it), strings within [`crate::upload_limits::MAX_TEXT_BYTES`], objects within
    /// [`crate::upload_limits::MAX_OBJECT_ENTRIES`].
    fn check_text(&self) -> Result<(), UploadError> {
        // The document as JSON without the file contents, which may be tens of MiB: copying
        // them only to skip them would double the memory of a large upload.
        let files: Vec<serde_json::Value> = self
            .files
            .iter()
            .map(|f| serde_json::json!({"name": f.name, "format": f.format}))
            .collect();
        let value = serde_json::json!({
            "run": self.run,
            "configuration": self.configuration,
            "cell": self.cell,
            "files": files,
            "results": self.results,
            "quality": self.quality,
        });
        match crate::upload_limits::text_fault(&value, &mut String::new()) {
            Some(fault) => Err(fault),
            None => Ok(()),
        }
    }
}

impl UploadDocument {
    /// Each quality result well formed ([`crate::quality::fault`]) and one per task and metric.
    fn check_quality(&self) -> Result<(), UploadError> {
        for (i, q) in self.quality.iter().enumerate() {
            if let Some((field, message)) = crate::quality::fault(q) {
                return Err(UploadError::at(format!("/quality/{i}{field}"), message));
            }
        }
        if let Some(i) = crate::quality::first_duplicate(&self.quality) {
            let q = &self.quality[i];
            return Err(UploadError::at(
                format!("/quality/{i}/metric"),
                format!(
                    "task {:?} has metric {:?} twice: give each task's metric once",
                    q.task, q.metric
                ),
            ));
        }
        Ok(())
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
            remedies: Vec::new(),
            limit: None,
        },
        _ => UploadError::at(format!("/files/{index}/content"), error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(value: serde_json::Value) -> UploadDocument {
        serde_json::from_value(value).unwrap()
    }

    fn pointer_of(value: serde_json::Value) -> String {
        doc(value).read().unwrap_err().pointer
    }

    const FILE: &str =
        r#"{"model_id": "m", "duration": 1.0, "completed": 1, "request_throughput": 1.0}"#;

    #[test]
    fn run_metadata_is_checked_field_by_field() {
        let files = json!([{"name": "r.json", "content": FILE}]);
        assert!(
            doc(json!({"run": {"commit": {"sha": "abcdef1"}}, "files": files}))
                .read()
                .is_ok()
        );
        assert_eq!(
            pointer_of(json!({"run": {"commit": {"sha": "0"}}, "files": files})),
            "/run/commit/sha"
        );
        for bad in [
            "",
            "a b",
            "new\nline",
            "tab\there",
            "a..b",
            "x:y",
            "-f",
            "x.lock",
            "a//b",
        ] {
            let d = json!({"run": {"commit": {"sha": "abcdef1"}, "branch": bad}, "files": files});
            assert_eq!(pointer_of(d), "/run/branch", "{bad:?}");
        }
        for good in [
            "main",
            "feature/fp8-kv",
            "release-1.2",
            "user@host/x",
            "ünïcode",
        ] {
            let d = json!({"run": {"commit": {"sha": "abcdef1"}, "branch": good}, "files": files});
            assert!(doc(d).read().is_ok(), "{good:?}");
        }
        assert_eq!(
            pointer_of(
                json!({"run": {"commit": {"sha": "abcdef1", "parents": ["abcdef2", "not a sha"]}}, "files": files})
            ),
            "/run/commit/parents/1"
        );
        assert_eq!(
            pointer_of(
                json!({"run": {"commit": {"sha": "abcdef1"}, "pull_request": {"number": 18446744073709551615u64}}, "files": files})
            ),
            "/run/pull_request/number"
        );
        assert_eq!(
            pointer_of(
                json!({"run": {"commit": {"sha": "abcdef1"}, "pull_request": {"number": 3, "merge_base": "<script>"}}, "files": files})
            ),
            "/run/pull_request/merge_base"
        );
    }

    #[test]
    fn derived_run_id_tells_measurements_and_repeats_apart_only() {
        let base = json!({"run": {"commit": {"sha": "ABCDEF1"}, "tags": {"a": "1"}},
            "files": [{"name": "r.json", "content": FILE}]});
        let id = |v: serde_json::Value| doc(v).derived_run_id("demo", "main");
        let first = id(base.clone());
        assert_eq!(first.get_version_num(), 5);
        assert_eq!(first, id(base.clone()), "deterministic");
        // Not part of it: tags, run time, CI link, configuration, cell, a file's format, the
        // commit's case.
        for (pointer, value) in [
            ("/run/tags", json!({"a": "2"})),
            ("/run/commit/sha", json!("abcdef1")),
        ] {
            let mut v = base.clone();
            *v.pointer_mut(pointer).unwrap() = value;
            assert_eq!(id(v), first, "{pointer}");
        }
        let mut v = base.clone();
        v["run"]["run_at"] = json!("2026-11-01T00:00:00Z");
        v["run"]["ci_job_url"] = json!("https://ci/1");
        v["configuration"] = json!({"hardware": {"accelerator": "H100"}});
        v["cell"] = json!({"scenario": "chat"});
        v["files"][0]["format"] = json!("vllm-bench-serve");
        assert_eq!(id(v), first);
        // Part of it: repeat index, commit, pull request, a file's name or content, the
        // inline results, the project and the branch.
        let mut changed = Vec::new();
        for (pointer, value) in [
            ("/run/commit/sha", json!("abcdef2")),
            ("/files/0/name", json!("s.json")),
            ("/files/0/content", json!(FILE.replace("1.0}", "2.0}"))),
        ] {
            let mut v = base.clone();
            *v.pointer_mut(pointer).unwrap() = value;
            changed.push(id(v));
        }
        let mut v = base.clone();
        v["run"]["repeat_index"] = json!(1);
        changed.push(id(v));
        let mut v = base.clone();
        v["run"]["pull_request"] = json!({"number": 3});
        changed.push(id(v));
        let mut v = base.clone();
        v["results"] =
            json!([{"metrics": [{"name": "ttft", "stat": "p50", "unit": "ms", "value": 1.0}]}]);
        changed.push(id(v));
        changed.push(doc(base.clone()).derived_run_id("other", "main"));
        changed.push(doc(base.clone()).derived_run_id("demo", "feature"));
        for (i, c) in changed.iter().enumerate() {
            assert_ne!(*c, first, "change {i}");
            assert!(!changed[..i].contains(c), "change {i}");
        }
    }

    #[test]
    fn quality_results_are_checked_and_count_in_the_derived_id() {
        let base = json!({"run": {"commit": {"sha": "abcdef1"}},
            "files": [{"name": "r.json", "content": FILE}]});
        let mut v = base.clone();
        v["quality"] = json!([{"task": "gsm8k", "metric": "exact_match", "value": 0.76,
            "stderr": 0.01, "samples": 1319}]);
        let d = doc(v.clone());
        assert!(d.read().is_ok());
        assert_eq!(d.quality[0].samples, Some(1319));
        assert_ne!(
            d.derived_run_id("demo", "main"),
            doc(base.clone()).derived_run_id("demo", "main")
        );
        let mut bad = v.clone();
        bad["quality"][0]["stderr"] = json!(-0.5);
        assert_eq!(pointer_of(bad), "/quality/0/stderr");
        let mut bad = v.clone();
        bad["quality"][0]["task"] = json!("");
        assert_eq!(pointer_of(bad), "/quality/0/task");
        let mut twice = v.clone();
        twice["quality"] = json!([v["quality"][0], v["quality"][0]]);
        assert_eq!(pointer_of(twice), "/quality/1/metric");
        let mut nul = v.clone();
        nul["quality"][0]["metric"] = json!("a\u{0}");
        assert_eq!(pointer_of(nul), "/quality/0/metric");
    }

    #[test]
    fn nul_characters_are_refused_outside_file_contents() {
        let files = json!([{"name": "r.json", "content": FILE}]);
        assert_eq!(
            pointer_of(
                json!({"run": {"commit": {"sha": "abcdef1", "subject": "a\u{0}b"}}, "files": files})
            ),
            "/run/commit/subject"
        );
        assert_eq!(
            pointer_of(
                json!({"run": {"commit": {"sha": "abcdef1"}}, "files": [{"name": "a\u{0}.json", "content": FILE}]})
            ),
            "/files/0/name"
        );
        assert_eq!(
            pointer_of(
                json!({"run": {"commit": {"sha": "abcdef1"}}, "cell": {"scenario": "x\u{0}"}, "files": files})
            ),
            "/cell/scenario"
        );
    }

    /// `v` with every integer written as a float: `4` as `4.0`.
    fn as_floats(v: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match v {
            Value::Number(n) if n.is_u64() => json!(n.as_u64().unwrap() as f64),
            Value::Array(items) => Value::Array(items.iter().map(as_floats).collect()),
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(k, x)| (k.clone(), as_floats(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    #[test]
    fn every_integer_field_takes_a_whole_float() {
        // Every integer field of the document (the OpenAPI document's `integer`s), each with
        // its own value, so that a field read wrong or left out cannot go unnoticed.
        let ints = json!({
            "run": {"commit": {"sha": "abcdef1"}, "repeat_index": 1, "repeats_expected": 2,
                    "pull_request": {"number": 3}},
            "configuration": {
                "hardware": {"accelerator_count": 4, "accelerator_memory_mib": 81559},
                "parallelism": {"tensor_parallel_size": 5, "pipeline_parallel_size": 6,
                                "data_parallel_size": 7, "expert_parallel_size": 8},
                "speculative_decoding": {"num_speculative_tokens": 9},
                "scheduler": {"max_num_batched_tokens": 10, "max_num_seqs": 11},
                "sampling": {"max_tokens": 12}
            },
            "cell": {"load": {"max_concurrency": 13}, "input_len": 14, "output_len": 15,
                     "num_prompts": 16},
            "results": [{
                "metrics": [{"name": "ttft", "stat": "mean", "unit": "ms", "value": 1.5, "n": 17}],
                "samples": {"success": [true, true], "input_tokens": [18, null],
                            "output_tokens": [null, 19]},
                "source": {"format": "benchtrail", "file": 20, "record": 21}
            }]
        });
        let text = serde_json::to_string(&as_floats(&ints)).unwrap();
        assert!(text.contains(r#""repeat_index":1.0"#), "{text}");
        let from_floats: UploadDocument = serde_json::from_str(&text).unwrap();
        let from_ints: UploadDocument = serde_json::from_value(ints).unwrap();
        assert_eq!(from_floats, from_ints);
        let run = &from_floats.run;
        assert_eq!(
            (
                run.repeat_index,
                run.repeats_expected,
                run.pull_request.as_ref().map(|p| p.number)
            ),
            (1, Some(2), Some(3))
        );
        let c = &from_floats.configuration;
        assert_eq!(
            [
                c.hardware.accelerator_count,
                c.hardware.accelerator_memory_mib,
                c.parallelism.tensor_parallel_size,
                c.parallelism.pipeline_parallel_size,
                c.parallelism.data_parallel_size,
                c.parallelism.expert_parallel_size,
                c.speculative_decoding.num_speculative_tokens,
                c.scheduler.max_num_batched_tokens,
                c.scheduler.max_num_seqs,
                c.sampling.max_tokens,
            ],
            [4, 81559, 5, 6, 7, 8, 9, 10, 11, 12].map(Some)
        );
        let cell = &from_floats.cell;
        assert_eq!(
            [
                cell.load.max_concurrency,
                cell.input_len,
                cell.output_len,
                cell.num_prompts
            ],
            [13, 14, 15, 16].map(Some)
        );
        let result = &from_floats.results[0];
        let samples = result.samples.as_ref().unwrap();
        let source = result.source.as_ref().unwrap();
        assert_eq!(
            (
                result.metrics[0].n,
                samples.input_tokens.clone(),
                samples.output_tokens.clone(),
                (source.file, source.record)
            ),
            (
                Some(17),
                Some(vec![Some(18), None]),
                Some(vec![None, Some(19)]),
                (20, 21)
            )
        );

        // A fraction anywhere is refused, naming the field's type.
        let mut half = json!({"run": {"commit": {"sha": "abcdef1"}}});
        half["cell"] = json!({"input_len": 14.5});
        let e = serde_json::from_value::<UploadDocument>(half).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid type: floating point `14.5`, expected u64"
        );
    }
}
