//! Bounds of an upload document, checked by [`UploadDocument::read`] before any file is read,
//! so one upload cannot make every page that shows it (the run page, the runs list) or the
//! database rows behind it arbitrarily large, nor cost the server memory out of proportion.
//!
//! Each is generous for real use: a real `vllm bench serve --save-detailed` file with
//! per-request samples of a few thousand requests is about 21–25 MB, an upload of a sweep a
//! few dozen files and results, a CI job's tags a dozen. A refusal is an [`UploadError`] at
//! the JSON pointer of the offending field, carrying the [`Limit`] it exceeds. A file's size
//! counts bytes (of UTF-8); a string's length counts characters (Unicode scalar values), as
//! JSON Schema's `maxLength` does, so that the upload schema states the same bounds.

use crate::upload::{UploadDocument, UploadError};

/// Most files in one upload (`/files`).
pub const MAX_FILES: usize = 256;
/// Largest file content, in bytes (`/files/{i}/content`): about twice the largest real
/// `--save-detailed` file; a larger one is refused before it is parsed (413).
pub const MAX_FILE_BYTES: usize = 48 * 1024 * 1024;
/// Largest memory a file's JSON may take once parsed, as estimated by
/// [`parsed_json_bytes`] (`/files/{i}/content`): a real file takes 3–5 times its size (the
/// largest real ones well under 300 MB), while a file of many tiny objects takes over 50
/// times its size; such a file is refused before it is parsed (413).
pub const MAX_PARSED_JSON_BYTES: u64 = 512 * 1024 * 1024;
/// Longest file name, in characters (`/files/{i}/name`): `PATH_MAX` on Linux.
pub const MAX_FILE_NAME_CHARS: usize = 4096;
/// Most results in one upload: those read from its files and its inline `results` together.
pub const MAX_RESULTS: usize = 1024;
/// Most quality results in one upload (`/quality`).
pub const MAX_QUALITY_RESULTS: usize = 1024;
/// Most tags of a run (`/run/tags`).
pub const MAX_TAGS: usize = 128;
/// Longest tag name, in characters.
pub const MAX_TAG_KEY_CHARS: usize = 128;
/// Longest tag value, in characters.
pub const MAX_TAG_VALUE_CHARS: usize = 1024;
/// Longest branch name, in characters (`/run/branch`): a ref name is a file name in git.
pub const MAX_BRANCH_CHARS: usize = 255;
/// Longest commit subject, in characters (`/run/commit/subject`).
pub const MAX_SUBJECT_CHARS: usize = 1024;
/// Longest CI job link, in characters (`/run/ci_job_url`).
pub const MAX_URL_CHARS: usize = 2048;
/// Most parents of a commit (`/run/commit/parents`): the largest octopus merges have dozens.
pub const MAX_PARENTS: usize = 128;
/// Longest string anywhere else outside file contents (configuration, cell, inline results),
/// in characters: a recorded launch command or chat template fits.
pub const MAX_TEXT_CHARS: usize = 16 * 1024;
/// Most entries of any object outside file contents (`configuration.metadata`,
/// `configuration.engine.extra_args`, a result's `facts`, ...).
pub const MAX_OBJECT_ENTRIES: usize = 256;

/// The bound an upload exceeds, as an [`UploadError`] carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// The largest value accepted: a count, a length in characters, or a size in bytes.
    pub max: u64,
    /// Whether the bound is a file's size (the server answers 413) rather than a count or a
    /// string's length (422).
    pub file_size: bool,
}

impl UploadError {
    /// A refusal at `pointer` for exceeding `max`.
    pub(crate) fn over(pointer: impl Into<String>, max: usize, message: String) -> Self {
        UploadError {
            limit: Some(Limit {
                max: max as u64,
                file_size: false,
            }),
            ..UploadError::at(pointer, message)
        }
    }
}

/// A count `n` of `what` at `pointer` over `max`, or nothing.
fn count(pointer: &str, what: &str, n: usize, max: usize) -> Result<(), UploadError> {
    if n <= max {
        return Ok(());
    }
    Err(UploadError::over(
        pointer,
        max,
        format!("has {n} {what}; at most {max} are accepted"),
    ))
}

/// A string at `pointer` longer than `max` characters, or nothing.
pub(crate) fn length(pointer: &str, text: &str, max: usize) -> Result<(), UploadError> {
    let n = chars(text);
    if n <= max {
        return Ok(());
    }
    Err(UploadError::over(
        pointer,
        max,
        format!("is {n} characters long; at most {max} are accepted"),
    ))
}

/// About how many bytes `text` takes once parsed into `serde_json::Value`s, from one scan of
/// its bytes outside strings: 48 per value or member (one per `,`, `[` and `{`, plus one; a
/// `Value` is 32 bytes, a member's key a `String` besides) and 160 more per object (its map's
/// node allocations). Within a factor of two of the measured peak for real files and for a
/// pathological one (a 40 MiB array of `{"a":1}` objects peaked at 2.1 GB; estimated 1.3 GB).
/// 0 for text that does not start like JSON (a console summary, YAML): it is not parsed as JSON.
pub fn parsed_json_bytes(text: &str) -> u64 {
    let bytes = text.trim_start_matches('\u{feff}').trim_start().as_bytes();
    if !matches!(bytes.first(), Some(b'{' | b'[')) {
        return 0;
    }
    let (mut values, mut objects) = (1u64, 0u64);
    let (mut in_string, mut escaped) = (false, false);
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b',' | b'[' => values += 1,
            b'{' => {
                values += 1;
                objects += 1;
            }
            _ => {}
        }
    }
    values * 48 + objects * 160
}

/// The length of `text` in characters (no more than its length in bytes, which is cheaper).
fn chars(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().count()
    }
}

/// The JSON pointer segment of an object key (RFC 6901 escapes).
pub(crate) fn segment(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

impl UploadDocument {
    /// The bounds of this module on the run metadata, the files and the inline results,
    /// checked before anything is read. (The number of results read from files is checked
    /// once they are read; strings and objects elsewhere in [`Self::check_text`].)
    pub(crate) fn check_bounds(&self) -> Result<(), UploadError> {
        let run = &self.run;
        count(
            "/run/commit/parents",
            "parents",
            run.commit.parents.len(),
            MAX_PARENTS,
        )?;
        if let Some(subject) = &run.commit.subject {
            length("/run/commit/subject", subject, MAX_SUBJECT_CHARS)?;
        }
        if let Some(branch) = &run.branch {
            length("/run/branch", branch, MAX_BRANCH_CHARS)?;
        }
        if let Some(url) = &run.ci_job_url {
            length("/run/ci_job_url", url, MAX_URL_CHARS)?;
        }
        count("/run/tags", "tags", run.tags.len(), MAX_TAGS)?;
        for (key, value) in &run.tags {
            let pointer = format!("/run/tags/{}", segment(key));
            if chars(key) > MAX_TAG_KEY_CHARS {
                return Err(UploadError::over(
                    pointer,
                    MAX_TAG_KEY_CHARS,
                    format!(
                        "is a tag name of {} characters; at most {MAX_TAG_KEY_CHARS} are accepted",
                        chars(key)
                    ),
                ));
            }
            length(&pointer, value, MAX_TAG_VALUE_CHARS)?;
        }
        count("/files", "files", self.files.len(), MAX_FILES)?;
        count(
            "/quality",
            "quality results",
            self.quality.len(),
            MAX_QUALITY_RESULTS,
        )?;
        for (i, file) in self.files.iter().enumerate() {
            length(&format!("/files/{i}/name"), &file.name, MAX_FILE_NAME_CHARS)?;
            if file.content.len() > MAX_FILE_BYTES {
                return Err(UploadError {
                    limit: Some(Limit {
                        max: MAX_FILE_BYTES as u64,
                        file_size: true,
                    }),
                    ..UploadError::at(
                        format!("/files/{i}/content"),
                        format!(
                            "is a file of {} bytes; files of at most {MAX_FILE_BYTES} bytes are accepted",
                            file.content.len()
                        ),
                    )
                });
            }
            let parsed = parsed_json_bytes(&file.content);
            if parsed > MAX_PARSED_JSON_BYTES {
                return Err(UploadError {
                    limit: Some(Limit {
                        max: MAX_PARSED_JSON_BYTES,
                        file_size: true,
                    }),
                    ..UploadError::at(
                        format!("/files/{i}/content"),
                        format!(
                            "is JSON that would take about {} MiB of memory once parsed; files \
                             of at most {} MiB parsed are accepted (many tiny objects cost \
                             much more than their text)",
                            parsed >> 20,
                            MAX_PARSED_JSON_BYTES >> 20
                        ),
                    )
                });
            }
        }
        count("/results", "results", self.results.len(), MAX_RESULTS)
    }

    /// The number of results an upload gives once its files are read: at most
    /// [`MAX_RESULTS`]. `file_results[i]` is how many file `i` gave; inline results come after.
    pub(crate) fn check_result_count(&self, file_results: &[usize]) -> Result<(), UploadError> {
        let mut total = 0usize;
        for (i, n) in file_results.iter().enumerate() {
            total += n;
            if total > MAX_RESULTS {
                return Err(UploadError::over(
                    format!("/files/{i}"),
                    MAX_RESULTS,
                    format!(
                        "brings the upload's results to {total} (with the files before it); at most {MAX_RESULTS} results are accepted in one upload, inline results included"
                    ),
                ));
            }
        }
        if total + self.results.len() > MAX_RESULTS {
            let i = MAX_RESULTS - total;
            return Err(UploadError::over(
                format!("/results/{i}"),
                MAX_RESULTS,
                format!(
                    "is result {} of the upload ({total} read from its files); at most {MAX_RESULTS} results are accepted in one upload",
                    MAX_RESULTS + 1
                ),
            ));
        }
        Ok(())
    }
}

/// The first fault of `value` (the upload document without file contents) located by its
/// JSON pointer: a string or object key holding U+0000 (PostgreSQL text cannot hold it), a
/// string longer than [`MAX_TEXT_CHARS`], or an object with more than [`MAX_OBJECT_ENTRIES`].
pub(crate) fn text_fault(value: &serde_json::Value, pointer: &mut String) -> Option<UploadError> {
    use serde_json::Value;
    const NUL: &str = "must not contain the NUL character (U+0000)";
    match value {
        Value::String(s) if s.contains('\0') => Some(UploadError::at(pointer.clone(), NUL)),
        Value::String(s) => length(pointer, s, MAX_TEXT_CHARS).err(),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| {
            let len = pointer.len();
            pointer.push_str(&format!("/{i}"));
            let found = text_fault(v, pointer);
            pointer.truncate(len);
            found
        }),
        Value::Object(map) => {
            if let Err(e) = count(pointer, "entries", map.len(), MAX_OBJECT_ENTRIES) {
                return Some(e);
            }
            map.iter().find_map(|(k, v)| {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&segment(k));
                let found = if k.contains('\0') {
                    Some(UploadError::at(pointer.clone(), NUL))
                } else if chars(k) > MAX_TEXT_CHARS {
                    Some(UploadError::over(
                        pointer.clone(),
                        MAX_TEXT_CHARS,
                        format!(
                            "is a key of {} characters; at most {MAX_TEXT_CHARS} are accepted",
                            chars(k)
                        ),
                    ))
                } else {
                    text_fault(v, pointer)
                };
                pointer.truncate(len);
                found
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn schema<T: utoipa::PartialSchema>() -> Value {
        serde_json::to_value(T::schema()).unwrap()
    }

    /// utoipa takes only literals: the schema must state the constants' values.
    #[test]
    fn the_upload_schema_states_the_bounds() {
        let run = schema::<crate::run::RunMeta>();
        assert_eq!(
            run["properties"]["branch"]["maxLength"],
            json!(MAX_BRANCH_CHARS)
        );
        assert_eq!(
            run["properties"]["ci_job_url"]["maxLength"],
            json!(MAX_URL_CHARS)
        );
        let commit = schema::<crate::run::CommitInfo>();
        assert_eq!(
            commit["properties"]["parents"]["maxItems"],
            json!(MAX_PARENTS)
        );
        assert_eq!(
            commit["properties"]["subject"]["maxLength"],
            json!(MAX_SUBJECT_CHARS)
        );
        let doc = schema::<UploadDocument>();
        assert_eq!(doc["properties"]["files"]["maxItems"], json!(MAX_FILES));
        assert_eq!(doc["properties"]["results"]["maxItems"], json!(MAX_RESULTS));
        let file = schema::<crate::upload::UploadFile>();
        assert_eq!(
            file["properties"]["name"]["maxLength"],
            json!(MAX_FILE_NAME_CHARS)
        );
    }

    #[test]
    fn lengths_count_characters_and_pointers_escape_keys() {
        let ok = "é".repeat(MAX_TAG_VALUE_CHARS);
        assert!(length("/x", &ok, MAX_TAG_VALUE_CHARS).is_ok());
        let e = length("/x", &format!("{ok}é"), MAX_TAG_VALUE_CHARS).unwrap_err();
        assert_eq!(
            e.limit,
            Some(Limit {
                max: MAX_TAG_VALUE_CHARS as u64,
                file_size: false
            })
        );
        assert_eq!(segment("a/b~c"), "a~1b~0c");
    }
}

#[cfg(test)]
mod parsed_json_tests {
    use super::parsed_json_bytes;

    #[test]
    fn the_estimate_counts_values_and_objects_outside_strings() {
        // 1 + 2 commas + 2 `[` + 3 `{` = 8 values, 3 objects; the brackets inside the string
        // and its escaped quote count nothing.
        let text = r#"[{"a":1},{"b":"x,[{\"y"},{"c":[]}]"#;
        assert_eq!(parsed_json_bytes(text), 8 * 48 + 3 * 160);
        assert_eq!(parsed_json_bytes("Successful requests: 10, failed: 0"), 0);
        assert_eq!(parsed_json_bytes("\u{feff} {}"), 2 * 48 + 160);
    }

    #[test]
    fn real_files_fit_and_many_tiny_objects_do_not() {
        let real = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/history/goodput_baseline_s11_c4.json"
        ))
        .unwrap();
        // A real --save-detailed file: a few times its size.
        let ratio = parsed_json_bytes(&real) as f64 / real.len() as f64;
        assert!((0.5..8.0).contains(&ratio), "{ratio}");
        // 24 MiB of `{"a":1},`: refused (about 768 MiB parsed).
        let tiny = format!("[{}]", r#"{"a":1},"#.repeat(3 * 1024 * 1024));
        assert!(parsed_json_bytes(&tiny) > super::MAX_PARSED_JSON_BYTES);
    }
}
