//! An uploaded file's text read out of the upload body without a second copy.
//!
//! `benchtrail upload` sends each file's text as a JSON string inside the JSON upload body, so
//! a 25 MB `vllm bench serve --save-detailed` file arrives as 27 MB of escaped text (every `"`
//! of the file is `\"`). serde_json reads an escaped string into its scratch buffer, grown by
//! doubling (40 MB of capacity for that file), and then copies it into the `String`: with the
//! body itself, 96 MB were live at once (valgrind `massif`, BENCHMARKS.md "Large uploads"),
//! issue 12's bound is 100 MB above rest. [`deserialize_unescaped`] instead takes the string's
//! raw JSON text (one copy of exactly its length, which serde_json has already checked but for
//! surrogate pairs) and unescapes it in place ([`unescape_in_place`]): the decoded text is never
//! longer than its escaped form, so it is written over it from the front.

use serde::de::{Deserializer, Error as _, Unexpected};
use serde_json::value::RawValue;

/// Deserializes a JSON string into a `String` through its raw text ([`unescape_in_place`]),
/// without serde_json's scratch buffer: for `#[serde(deserialize_with = ...)]` on fields that
/// hold whole files. Any serde_json deserializer (slice, reader, `Value`) works; the result is
/// what deserializing a `String` gives.
///
/// # Errors
/// The deserializer's error when the value is not a JSON string ("invalid type: ..., expected
/// a string"), or when it holds a lone UTF-16 surrogate (`\ud800` unpaired): the same inputs
/// serde_json refuses for a `String`.
pub fn deserialize_unescaped<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<String, D::Error> {
    let raw: Box<RawValue> = serde::Deserialize::deserialize(deserializer)?;
    let text = String::from(Box::<str>::from(raw));
    if !text.starts_with('"') {
        let unexpected = match text.as_bytes().first() {
            Some(b'{') => Unexpected::Map,
            Some(b'[') => Unexpected::Seq,
            Some(b'n') => Unexpected::Unit,
            Some(b't') => Unexpected::Bool(true),
            Some(b'f') => Unexpected::Bool(false),
            // A number: worded as serde_json words it for a `String` field.
            _ => match (
                text.parse::<u64>(),
                text.parse::<i64>(),
                text.parse::<f64>(),
            ) {
                (Ok(n), _, _) => Unexpected::Unsigned(n),
                (_, Ok(n), _) => Unexpected::Signed(n),
                (_, _, Ok(x)) => Unexpected::Float(x),
                _ => Unexpected::Other("number"),
            },
        };
        return Err(D::Error::invalid_type(unexpected, &"a string"));
    }
    unescape_in_place(text).map_err(|e| D::Error::custom(e.message()))
}

/// Why a JSON string literal could not be unescaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnescapeError {
    /// Not a string literal: no opening or closing `"`, or text after the closing one.
    NotAString,
    /// A backslash followed by something other than `"\/bfnrtu`, or `\u` without four hex
    /// digits.
    InvalidEscape,
    /// A UTF-16 surrogate escape (`\uD800`–`\uDFFF`) not part of a high-low pair.
    LoneSurrogate,
    /// A control character (U+0000–U+001F) not escaped, which JSON forbids in strings.
    ControlCharacter,
}

impl UnescapeError {
    /// The error as serde_json words it for the same input.
    pub fn message(self) -> &'static str {
        match self {
            UnescapeError::NotAString => "expected a JSON string",
            UnescapeError::InvalidEscape => "invalid escape",
            UnescapeError::LoneSurrogate => "lone leading surrogate in hex escape",
            UnescapeError::ControlCharacter => {
                "control character (\\u0000-\\u001F) found while parsing a string"
            }
        }
    }
}

/// Decodes the JSON string literal `literal` (its quotes included, as in the JSON text) into
/// the string it denotes, reusing `literal`'s buffer: the result's capacity is the literal's
/// length. Escapes follow RFC 8259 §7; a `\u` pair of UTF-16 surrogates is one character, an
/// unpaired surrogate an error, as serde_json decides for a `String`.
///
/// # Errors
/// [`UnescapeError`] for anything that is not one valid JSON string literal.
pub fn unescape_in_place(literal: String) -> Result<String, UnescapeError> {
    let mut bytes = literal.into_bytes();
    let len = bytes.len();
    if len < 2 || bytes[0] != b'"' || bytes[len - 1] != b'"' {
        return Err(UnescapeError::NotAString);
    }
    // `read` runs ahead of `write`: every escape is at least as long as what it denotes
    // (`\n` 2 → 1, `\u00e9` 6 → 2, a surrogate pair 12 → 4), so a write never overtakes the
    // bytes still to be read.
    let mut read = 1;
    let mut write = 0;
    let end = len - 1;
    while read < end {
        // Copy the run up to the next backslash or quote in one move.
        let run = bytes[read..end]
            .iter()
            .position(|&b| b == b'\\' || b == b'"' || b < 0x20)
            .unwrap_or(end - read);
        bytes.copy_within(read..read + run, write);
        read += run;
        write += run;
        if read == end {
            break;
        }
        match bytes[read] {
            b'"' => return Err(UnescapeError::NotAString),
            b'\\' => {}
            _ => return Err(UnescapeError::ControlCharacter),
        }
        // A backslash just before the closing quote escapes it: the literal never ends.
        let escape = *bytes[..end]
            .get(read + 1)
            .ok_or(UnescapeError::NotAString)?;
        read += 2;
        let simple = match escape {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            b'/' => Some(b'/'),
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'u' => None,
            _ => return Err(UnescapeError::InvalidEscape),
        };
        if let Some(byte) = simple {
            bytes[write] = byte;
            write += 1;
            continue;
        }
        let high = hex4(&bytes[..end], read)?;
        read += 4;
        let code = match high {
            0xDC00..=0xDFFF => return Err(UnescapeError::LoneSurrogate),
            0xD800..=0xDBFF => {
                if bytes[..end].get(read..read + 2) != Some(b"\\u") {
                    return Err(UnescapeError::LoneSurrogate);
                }
                let low = hex4(&bytes[..end], read + 2)?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(UnescapeError::LoneSurrogate);
                }
                read += 6;
                0x1_0000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(low) - 0xDC00)
            }
            other => u32::from(other),
        };
        let c = char::from_u32(code).ok_or(UnescapeError::LoneSurrogate)?;
        let mut utf8 = [0u8; 4];
        let encoded = c.encode_utf8(&mut utf8).as_bytes();
        bytes[write..write + encoded.len()].copy_from_slice(encoded);
        write += encoded.len();
    }
    bytes.truncate(write);
    // Unescaped text between valid UTF-8 runs and whole encoded characters is valid UTF-8; the
    // check is kept because a cut inside a character would be a bug here, not bad input.
    String::from_utf8(bytes).map_err(|_| UnescapeError::InvalidEscape)
}

/// The four hex digits at `at` of `bytes` as a UTF-16 code unit.
fn hex4(bytes: &[u8], at: usize) -> Result<u16, UnescapeError> {
    let digits = bytes.get(at..at + 4).ok_or(UnescapeError::InvalidEscape)?;
    let text = std::str::from_utf8(digits).map_err(|_| UnescapeError::InvalidEscape)?;
    if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(UnescapeError::InvalidEscape);
    }
    u16::from_str_radix(text, 16).map_err(|_| UnescapeError::InvalidEscape)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unescape(literal: &str) -> Result<String, UnescapeError> {
        unescape_in_place(literal.to_string())
    }

    #[test]
    fn every_escape_decodes_as_rfc_8259_says() {
        assert_eq!(
            unescape(r#""a\"b\\c\/d\be\ff\ng\rh\ti""#).unwrap(),
            "a\"b\\c/d\u{8}e\u{c}f\ng\rh\ti"
        );
        assert_eq!(unescape(r#""\u00e9\u20AC""#).unwrap(), "é€");
        assert_eq!(unescape(r#""\ud83d\ude00!""#).unwrap(), "😀!");
        assert_eq!(unescape(r#""plain é 😀""#).unwrap(), "plain é 😀");
        assert_eq!(unescape(r#""""#).unwrap(), "");
    }

    #[test]
    fn the_result_keeps_the_literals_buffer() {
        let literal = format!("\"{}\"", r#"{\"ttfts\": [0.1]}"#.repeat(1000));
        let capacity = literal.capacity();
        let text = unescape_in_place(literal).unwrap();
        assert_eq!(text, r#"{"ttfts": [0.1]}"#.repeat(1000));
        assert_eq!(text.capacity(), capacity);
    }

    #[test]
    fn what_is_not_one_valid_string_literal_is_refused() {
        use UnescapeError::*;
        for (literal, error) in [
            ("", NotAString),
            ("\"", NotAString),
            ("abc", NotAString),
            (r#""a"b""#, NotAString),
            (r#""\x""#, InvalidEscape),
            (r#""\""#, NotAString),
            (r#""\u12""#, InvalidEscape),
            (r#""\u12g4""#, InvalidEscape),
            (r#""\ud800""#, LoneSurrogate),
            (r#""\ud800x""#, LoneSurrogate),
            (r#""\ud800\u0041""#, LoneSurrogate),
            (r#""\udc00""#, LoneSurrogate),
            ("\"a\nb\"", ControlCharacter),
        ] {
            assert_eq!(unescape(literal), Err(error), "{literal:?}");
        }
    }

    /// Random strings of every kind of character, written by serde_json (which escapes only
    /// `"`, `\` and control characters) and by hand with `\u` escapes for everything (surrogate
    /// pairs for characters beyond the BMP), read back exactly.
    #[test]
    fn random_strings_read_back_as_serde_json_reads_them() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..500 {
            let len = (next() % 40) as usize;
            let text: String = (0..len)
                .map(|_| match next() % 5 {
                    0 => char::from_u32((next() % 0x20) as u32).unwrap(),
                    1 => ['"', '\\', '/'][(next() % 3) as usize],
                    2 => char::from_u32((0x20 + next() % 0x5f) as u32).unwrap(),
                    3 => char::from_u32((0xa0 + next() % 0xd000) as u32).unwrap_or('x'),
                    _ => char::from_u32((0x1_0000 + next() % 0xf_0000) as u32).unwrap_or('y'),
                })
                .collect();
            let written = serde_json::to_string(&text).unwrap();
            assert_eq!(unescape(&written).unwrap(), text, "{written}");
            let mut all_escaped = String::from("\"");
            for unit in text.encode_utf16() {
                all_escaped.push_str(&format!("\\u{unit:04x}"));
            }
            all_escaped.push('"');
            assert_eq!(unescape(&all_escaped).unwrap(), text);
            assert_eq!(
                serde_json::from_str::<String>(&all_escaped).unwrap(),
                text,
                "serde_json agrees"
            );
        }
    }
}
