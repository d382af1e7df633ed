//! Format adapters: each reads one benchmark tool's output file into [`BenchResult`]s in the
//! benchtrail vocabulary, converting units once, here at the edge.
//!
//! A file is named by its `format` or detected from its content. Detection tries every adapter
//! and, when none matches, the error lists each format tried and why it did not match.

mod native;
mod vllm_serve;

use crate::lenient_json::{self, JsonSyntaxError};
use crate::result::{BenchResult, Source};
use serde_json::Value;

/// One supported format.
pub struct Format {
    /// The name used in uploads and on the CLI, e.g. `vllm-bench-serve`.
    pub name: &'static str,
    /// What the format is, for `--help` and errors.
    pub description: &'static str,
    /// `Ok(())` when a record looks like this format, else why not.
    detect: fn(&Value) -> Result<(), String>,
    /// Reads one record (one JSON value of the file) into results.
    parse: fn(&Value) -> Result<Vec<BenchResult>, FieldError>,
}

/// Every format benchtrail reads, in detection order.
pub const FORMATS: &[Format] = &[
    Format {
        name: vllm_serve::FORMAT,
        description: "`vllm bench serve --save-result` JSON (and benchmarks/benchmark_serving.py), with or without --save-detailed; JSON Lines from --append-result",
        detect: vllm_serve::detect,
        parse: vllm_serve::parse,
    },
    Format {
        name: native::FORMAT,
        description: "benchtrail's own result JSON (see /api/v1/schemas/result.json)",
        detect: native::detect,
        parse: native::parse,
    },
];

pub use native::validate as validate_native;

/// Looks a format up by name.
pub fn format(name: &str) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.name == name)
}

/// A fault at one field of one record: `field` is a JSON pointer within the record (`/completed`).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// JSON pointer within the record, e.g. `/completed` or `/ttfts/3`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl FieldError {
    pub(crate) fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AdapterError {
    /// The text is not JSON (or JSON Lines), even allowing Python's NaN/Infinity.
    #[error("not valid JSON: {0}")]
    Syntax(#[from] JsonSyntaxError),
    /// The file holds no record.
    #[error("the file is empty")]
    Empty,
    /// `format` names no adapter.
    #[error("unknown format `{0}`; known formats: {known}", known = known_formats())]
    UnknownFormat(String),
    /// No adapter recognised the content; one reason per format tried.
    #[error("could not detect the format; tried {}", .tried.iter().map(|(f, why)| format!("{f} ({why})")).collect::<Vec<_>>().join("; "))]
    Undetected {
        /// `(format, why it did not match)` for every format tried.
        tried: Vec<(&'static str, String)>,
    },
    /// A record was recognised but a field is wrong.
    #[error("record {record} (line {line}): field `{field}`: {message}", field = .error.field, message = .error.message)]
    Field {
        /// 0-based index of the record (the JSON Lines line, counting only non-empty lines).
        record: usize,
        /// 1-based line where the record starts.
        line: usize,
        /// The field at fault.
        error: FieldError,
    },
}

fn known_formats() -> String {
    FORMATS
        .iter()
        .map(|f| f.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads one uploaded file.
///
/// `format`: the adapter to use, or `None` to detect it from the first record. `file_index` is
/// recorded in each result's [`Source`].
///
/// # Errors
/// [`AdapterError`] naming the record and field at fault; nothing is returned partially.
pub fn parse_file(
    format_name: Option<&str>,
    content: &str,
    file_index: usize,
) -> Result<(&'static str, Vec<BenchResult>), AdapterError> {
    let records = lenient_json::parse_values(content)?;
    let first = records.first().ok_or(AdapterError::Empty)?;
    let format = match format_name {
        Some(name) => format(name).ok_or_else(|| AdapterError::UnknownFormat(name.to_string()))?,
        None => detect(first)?,
    };
    let lines = record_start_lines(content);
    let mut results = Vec::new();
    for (record, value) in records.iter().enumerate() {
        let parsed = (format.parse)(value).map_err(|error| AdapterError::Field {
            record,
            line: lines.get(record).copied().unwrap_or(1),
            error,
        })?;
        for mut r in parsed {
            r.source = Some(Source {
                format: format.name.to_string(),
                file: file_index,
                record,
            });
            results.push(r);
        }
    }
    Ok((format.name, results))
}

fn detect(record: &Value) -> Result<&'static Format, AdapterError> {
    let mut tried = Vec::new();
    for f in FORMATS {
        match (f.detect)(record) {
            Ok(()) => return Ok(f),
            Err(why) => tried.push((f.name, why)),
        }
    }
    Err(AdapterError::Undetected { tried })
}

/// 1-based line on which each top-level value starts (best effort: a value starts on a line
/// whose first non-blank character opens an object or array at depth 0).
fn record_start_lines(content: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut depth = 0i64;
    let mut in_string = false;
    let mut escaped = false;
    let mut line = 1;
    for c in content.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            if c == '\n' {
                line += 1;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => {
                if depth == 0 {
                    lines.push(line);
                }
                depth += 1;
            }
            '}' | ']' => depth -= 1,
            '\n' => line += 1,
            _ => {}
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undetected_lists_each_format_and_why() {
        let err = parse_file(None, r#"{"hello": 1}"#, 0).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("could not detect the format; tried vllm-bench-serve ("),
            "{text}"
        );
        assert!(text.contains("benchtrail ("), "{text}");
    }

    #[test]
    fn unknown_format_lists_known_ones() {
        let err = parse_file(Some("nope"), "{}", 0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown format `nope`; known formats: vllm-bench-serve, benchtrail"
        );
    }

    #[test]
    fn record_lines() {
        assert_eq!(
            record_start_lines("{\"a\": \"{\\\"\"}\n\n{\n}\n{}"),
            vec![1, 3, 5]
        );
    }
}
