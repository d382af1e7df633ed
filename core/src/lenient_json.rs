//! Reading the JSON that Python benchmark tools really write.
//!
//! Python's `json` module writes the bare literals `NaN`, `Infinity` and `-Infinity`, which strict
//! JSON parsers reject; vLLM's `--append-result` and SGLang write several objects into one file
//! (JSON Lines, often under a `.json` name and without a trailing newline). This module turns
//! such text into a list of `serde_json::Value`s, with every float parsed exactly
//! (`float_roundtrip`), so stored values equal the file's digits.

use crate::deferred_arrays::Record;
use serde_json::Value;

/// Where and why the text is not JSON.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct JsonSyntaxError {
    /// 1-based line of the fault.
    pub line: usize,
    /// 1-based column of the fault (in the original text).
    pub column: usize,
    /// What serde_json reported.
    pub message: String,
}

/// Parses `text` as one or more JSON values (a single document, JSON Lines, or values simply
/// concatenated), accepting Python's bare `NaN`, `Infinity` and `-Infinity`, which are read as
/// the strings `"NaN"`, `"Infinity"` and `"-Infinity"`. Empty text gives an empty list.
///
/// # Errors
/// [`JsonSyntaxError`] with the line and column of the first fault (a truncated file reports
/// its last line).
pub fn parse_values(text: &str) -> Result<Vec<Value>, JsonSyntaxError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Most files have no bare literal: parsed in place, not copied (a 25 MiB
    // `--save-detailed` file was copied whole here, a quarter of its upload's peak memory).
    let quoted: std::borrow::Cow<'_, str> = if has_non_finite_literal(text) {
        quote_non_finite_literals(text).into()
    } else {
        text.into()
    };
    parse_stream(&quoted, text)
}

/// As [`parse_values`], but each top-level object's per-request arrays
/// ([`crate::deferred_arrays::DEFERRED`]) are kept as slices of `text` instead of being built
/// into the tree, for the adapter that reads them as numbers. Text holding `NaN` or `Infinity`
/// anywhere may have bare literals to rewrite before it is parsed, so nothing can borrow from
/// it: its records come whole, with no deferred arrays, exactly as [`parse_values`] reads them.
///
/// # Errors
/// As [`parse_values`], the same faults at the same positions, with two exceptions: a text with
/// a fault outside the kept arrays and an earlier one inside them reports the one outside; and
/// nesting past `serde_json`'s limit inside a kept array is found one bracket later (the array
/// is checked alone, without the record around it).
pub fn parse_records(text: &str) -> Result<Vec<Record<'_>>, JsonSyntaxError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if has_non_finite_literal(text) {
        let whole = parse_values(text)?;
        return Ok(whole
            .into_iter()
            .map(|value| Record {
                value,
                arrays: Default::default(),
            })
            .collect());
    }
    let records: Vec<Record> = parse_stream(text, text)?;
    // The deferred values were only scanned: checked now as a tree would have been, each fault
    // positioned in the file. (A file with a fault both outside and, earlier, inside a deferred
    // array reports the one outside: either is a fault at its true place.)
    for raw in records.iter().flat_map(|r| r.arrays.texts()) {
        crate::deferred_arrays::validate(raw).map_err(|e| error_inside(text, raw.get(), &e))?;
    }
    Ok(records)
}

/// A fault `serde_json` found while reading `inside`, a slice of `text` (a deferred array, see
/// [`crate::deferred_arrays`]), positioned in `text`: line and column as [`parse_values`]
/// would report them for the whole file.
pub fn error_inside(text: &str, inside: &str, error: &serde_json::Error) -> JsonSyntaxError {
    // `inside` borrows from `text`; a slice from elsewhere is placed at the start.
    let offset = (inside.as_ptr() as usize)
        .checked_sub(text.as_ptr() as usize)
        .filter(|o| o + inside.len() <= text.len())
        .unwrap_or(0);
    let before = &text.as_bytes()[..offset];
    let start_line = 1 + before.iter().filter(|b| **b == b'\n').count();
    let start_column = 1 + before.iter().rev().take_while(|b| **b != b'\n').count();
    let (line, column) = if error.line() <= 1 {
        (start_line, start_column - 1 + error.column())
    } else {
        (start_line + error.line() - 1, error.column())
    };
    JsonSyntaxError {
        line,
        column,
        message: strip_position(&error.to_string()),
    }
}

fn has_non_finite_literal(text: &str) -> bool {
    text.contains("NaN") || text.contains("Infinity")
}

/// Reads every top-level value of `quoted` (the text with its bare literals quoted), reporting a
/// fault at its position in `original`.
fn parse_stream<'de, T: serde::Deserialize<'de>>(
    quoted: &'de str,
    original: &str,
) -> Result<Vec<T>, JsonSyntaxError> {
    let mut values = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(quoted).into_iter::<T>();
    for item in &mut stream {
        match item {
            Ok(v) => values.push(v),
            Err(e) => {
                return Err(JsonSyntaxError {
                    line: e.line(),
                    column: original_column(quoted, original, e.line(), e.column()),
                    message: strip_position(&e.to_string()),
                })
            }
        }
    }
    Ok(values)
}

/// Reads a JSON number, or one of the strings that stand for a non-finite number
/// (`"NaN"`, `"Infinity"`, `"-Infinity"`, `"inf"`), or a number written as a string
/// (`"12.5"`, as LLMPerf does), as an `f64`.
pub fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => f64_from_str(s),
        _ => None,
    }
}

/// The string half of [`as_f64`]: `"12.5"`, `"NaN"`, `"nan"`, `"Infinity"`, `"inf"`,
/// `"-Infinity"`, ... (surrounding blanks allowed) as an `f64`.
pub fn f64_from_str(s: &str) -> Option<f64> {
    match s.trim() {
        "NaN" | "nan" => Some(f64::NAN),
        "Infinity" | "inf" | "+inf" | "+Infinity" => Some(f64::INFINITY),
        "-Infinity" | "-inf" => Some(f64::NEG_INFINITY),
        other => other.parse::<f64>().ok(),
    }
}

/// Replaces the bare literals outside strings by quoted strings, leaving everything else,
/// including every newline, exactly in place.
fn quote_non_finite_literals(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    let mut in_string = false;
    let mut last = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        // Bytes, not `&text[i..]`: outside strings `i` may sit inside a multi-byte character.
        let rest = &bytes[i..];
        let literal = ["-Infinity", "Infinity", "NaN"].into_iter().find(|lit| {
            rest.starts_with(lit.as_bytes()) && !is_ident_byte(bytes.get(i + lit.len()))
        });
        if let Some(lit) = literal {
            out.push_str(&text[last..i]);
            out.push('"');
            out.push_str(lit);
            out.push('"');
            i += lit.len();
            last = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[last..]);
    out
}

fn is_ident_byte(b: Option<&u8>) -> bool {
    matches!(b, Some(c) if c.is_ascii_alphanumeric() || *c == b'_')
}

/// Maps a column in the quoted text back to the original: every replaced literal added two quotes.
fn original_column(quoted: &str, original: &str, line: usize, column: usize) -> usize {
    let q = quoted.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let o = original.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let added = q.len().saturating_sub(o.len());
    if added == 0 {
        return column;
    }
    // Bytes, not `&q[..column]`: the column may fall inside a multi-byte character.
    let prefix = &q.as_bytes()[..column.min(q.len())];
    let quotes_before = ["\"NaN\"", "\"Infinity\"", "\"-Infinity\""]
        .iter()
        .map(|lit| {
            prefix
                .windows(lit.len())
                .filter(|w| *w == lit.as_bytes())
                .count()
                * 2
        })
        .sum::<usize>();
    column.saturating_sub(quotes_before)
}

fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_python_literals_outside_strings_only() {
        let v = parse_values(
            r#"{"a": NaN, "b": Infinity, "c": -Infinity, "d": "NaN Infinity", "e": 1.5}"#,
        )
        .unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0]["a"], "NaN");
        assert_eq!(v[0]["b"], "Infinity");
        assert_eq!(v[0]["c"], "-Infinity");
        assert_eq!(v[0]["d"], "NaN Infinity");
        assert!(as_f64(&v[0]["a"]).unwrap().is_nan());
        assert_eq!(as_f64(&v[0]["b"]), Some(f64::INFINITY));
        assert_eq!(as_f64(&v[0]["e"]), Some(1.5));
    }

    #[test]
    fn reads_json_lines_without_trailing_newline() {
        let v = parse_values("{\"a\": 1}\n{\"a\": 2}").unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[1]["a"], 2);
        let v = parse_values("\n{\"a\": 1}\n\n{\"a\": 2}\n").unwrap();
        assert_eq!(v.len(), 2);
    }

    #[test]
    fn floats_keep_their_digits() {
        let v = parse_values(r#"{"x": 34.59466175000898, "y": 0.1}"#).unwrap();
        assert_eq!(v[0]["x"].as_f64().unwrap().to_string(), "34.59466175000898");
        assert_eq!(v[0]["y"].as_f64().unwrap(), 0.1);
    }

    #[test]
    fn non_ascii_input_is_an_error_not_a_panic() {
        for text in [
            "{\"a\": NaN, \"é\": é}",
            "é NaN",
            "{\"x\": Infinity}ü",
            "NaNé",
            "{\"a\":\"ü\", NaN",
        ] {
            let _ = parse_values(text);
        }
        let err = parse_values("{\"a\": NaN, \"b\": ü}").unwrap_err();
        assert_eq!(err.line, 1);
    }

    #[test]
    fn truncated_file_reports_position() {
        let err = parse_values("{\"a\": 1}\n{\"a\": NaN, \"b\": [1, 2").unwrap_err();
        assert_eq!(err.line, 2);
        assert_eq!(err.column, 21); // just after the last character of the line
        assert!(err.message.contains("EOF"), "{}", err.message);
    }
}
