//! Per-request arrays kept as text until an adapter reads them as numbers.
//!
//! A `vllm bench serve --save-detailed` file is mostly its per-request arrays: at 25 MB, about
//! 900,000 chunk gaps (`itls`) beside 7,000 TTFTs, lengths and generated texts. Read into a
//! `serde_json::Value` tree every number costs 32 bytes plus its list's share (31 MB for that
//! file, more than the text itself), only to be copied into `f64`s by the adapter. So when a
//! file is read ([`crate::lenient_json::parse_records`]), the top-level keys in [`DEFERRED`] are not built into the
//! tree: their values stay slices of the file's text ([`DeferredArrays`]; scanned by that parse,
//! then checked in full by [`validate`], so a fault in them is the file's syntax error as before),
//! and the adapter that reads them deserializes each straight into typed
//! numbers ([`read_typed`]). Every other adapter gets them put back into the tree
//! ([`DeferredArrays::restore_into`]), so it reads the file as before.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};
use std::fmt;

/// The top-level keys whose values are kept as text: the per-request arrays of `vllm bench
/// serve --save-detailed` (serve.py's `save_detailed` keys) that vLLM's adapter reads as
/// numbers or skips (and so knows as its own keys, with `errors`). `errors` is not among them:
/// it is read as strings, and short.
pub const DEFERRED: &[&str] = &[
    "input_lens",
    "output_lens",
    "ttfts",
    "itls",
    "latencies",
    "start_times",
    "queue_times",
    "generated_texts",
];

/// The deferred values of one record: `(key, the value's JSON text)`, in file order, each key
/// at most once (a repeated key keeps its last value, as `serde_json`'s map does).
#[derive(Debug, Clone, Default)]
pub struct DeferredArrays<'a> {
    entries: Vec<(&'static str, &'a RawValue)>,
}

impl PartialEq for DeferredArrays<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.entries.len() == other.entries.len()
            && self
                .entries
                .iter()
                .zip(&other.entries)
                .all(|((k1, v1), (k2, v2))| k1 == k2 && v1.get() == v2.get())
    }
}

impl<'a> DeferredArrays<'a> {
    /// The JSON text of `key`'s value, if the record had that key and it was deferred.
    pub fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.entries
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
    }

    /// No value was deferred.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The deferred values' texts, in file order.
    pub(crate) fn texts(&self) -> impl Iterator<Item = &'a RawValue> + '_ {
        self.entries.iter().map(|(_, raw)| *raw)
    }

    fn insert(&mut self, key: &'static str, value: &'a RawValue) {
        self.entries.retain(|(k, _)| *k != key);
        self.entries.push((key, value));
    }

    /// Builds each deferred value into `map` as a `Value`, as if it had never been deferred.
    ///
    /// # Errors
    /// `serde_json`'s error for a value it cannot build (nesting deeper than its recursion
    /// limit, which the text-only pass does not check), with its position inside the value.
    pub fn restore_into(self, map: &mut Map<String, Value>) -> Result<(), RestoreError<'a>> {
        for (key, raw) in self.entries {
            let value: Value =
                serde_json::from_str(raw.get()).map_err(|error| RestoreError { raw, error })?;
            map.insert(key.to_string(), value);
        }
        Ok(())
    }
}

/// A deferred value that could not be built into a `Value` ([`DeferredArrays::restore_into`]).
#[derive(Debug)]
pub struct RestoreError<'a> {
    /// The value's text: a slice of the file's text, so its position in the file is known.
    pub raw: &'a RawValue,
    /// What `serde_json` reported, positioned inside `raw`.
    pub error: serde_json::Error,
}

/// One top-level JSON value of a file, its [`DEFERRED`] keys (when it is an object) kept apart.
#[derive(Debug, Clone, PartialEq)]
pub struct Record<'a> {
    /// The value, without the deferred keys.
    pub value: Value,
    /// The deferred keys' values, as text.
    pub arrays: DeferredArrays<'a>,
}

impl<'de> Deserialize<'de> for Record<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RecordVisitor)
    }
}

/// Builds a top-level value as `serde_json`'s own `Value` visitor does, except that an object's
/// deferred keys are taken as borrowed text.
struct RecordVisitor;

impl RecordVisitor {
    fn plain<'a>(value: Value) -> Record<'a> {
        Record {
            value,
            arrays: DeferredArrays::default(),
        }
    }
}

impl<'de> Visitor<'de> for RecordVisitor {
    type Value = Record<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Self::plain(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Self::plain(Value::Number(v.into())))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Self::plain(Value::Number(v.into())))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Self::plain(
            Number::from_f64(v).map_or(Value::Null, Value::Number),
        ))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Self::plain(Value::String(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Self::plain(Value::String(v)))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Self::plain(Value::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok(Self::plain(Value::Array(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        let mut map = Map::new();
        let mut arrays = DeferredArrays::default();
        while let Some(key) = access.next_key::<String>()? {
            match DEFERRED.iter().find(|k| **k == key) {
                Some(deferred) => {
                    map.remove(&key);
                    arrays.insert(deferred, access.next_value::<&'de RawValue>()?);
                }
                None => {
                    let value = access.next_value::<Value>()?;
                    map.insert(key, value);
                }
            }
        }
        Ok(Record {
            value: Value::Object(map),
            arrays,
        })
    }
}

/// Checks `raw` as `serde_json` checks a value it builds, building nothing: every number in
/// range, every string's escapes (no lone surrogate), nesting within its recursion limit. The
/// pass that kept the value as text checks its syntax only.
///
/// # Errors
/// `serde_json`'s error, positioned inside `raw`.
pub fn validate(raw: &RawValue) -> Result<(), serde_json::Error> {
    serde_json::from_str::<Checked>(raw.get()).map(|_| ())
}

/// Any JSON value, read in full and dropped ([`validate`]).
struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CheckedVisitor;
        impl<'de> Visitor<'de> for CheckedVisitor {
            type Value = Checked;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_unit<E>(self) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok(Checked)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
                while map.next_entry::<Checked, Checked>()?.is_some() {}
                Ok(Checked)
            }
        }
        deserializer.deserialize_any(CheckedVisitor)
    }
}

/// Deserializes a deferred value into `T` (typed numbers: `Vec<Seconds>`, `Vec<Vec<Seconds>>`,
/// `Vec<u64>`, ...) without building a `Value` tree. `None` when `T` does not fit the text:
/// the caller then reads the value as a `Value` to say exactly which element is wrong.
pub fn read_typed<T: de::DeserializeOwned>(raw: &RawValue) -> Option<T> {
    serde_json::from_str(raw.get()).ok()
}

/// A number of seconds as the adapters read one ([`crate::lenient_json::as_f64`]): a JSON
/// number, or a string holding one (`"12.5"`) or a non-finite value (`"NaN"`, `"Infinity"`,
/// `"-Infinity"`, `"inf"`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(transparent)]
pub struct Seconds(pub f64);

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SecondsVisitor;
        impl Visitor<'_> for SecondsVisitor {
            type Value = Seconds;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number of seconds")
            }
            fn visit_f64<E>(self, v: f64) -> Result<Seconds, E> {
                Ok(Seconds(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Seconds, E> {
                Ok(Seconds(v as f64))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Seconds, E> {
                Ok(Seconds(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Seconds, E> {
                crate::lenient_json::f64_from_str(v)
                    .map(Seconds)
                    .ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self))
            }
        }
        deserializer.deserialize_any(SecondsVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(text: &str) -> Record<'_> {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn deferred_keys_stay_text_and_the_rest_is_the_same_tree() {
        let text = r#"{"completed": 2, "itls": [[0.5, 0.25], []], "ttfts": [1, 2.5], "errors": ["", "x"], "nested": {"itls": [1]}}"#;
        let r = record(text);
        assert_eq!(
            r.value,
            serde_json::json!({"completed": 2, "errors": ["", "x"], "nested": {"itls": [1]}})
        );
        assert_eq!(r.arrays.get("itls").unwrap().get(), "[[0.5, 0.25], []]");
        assert_eq!(r.arrays.get("ttfts").unwrap().get(), "[1, 2.5]");
        assert!(r.arrays.get("errors").is_none());
        let itls: Vec<Vec<Seconds>> = read_typed(r.arrays.get("itls").unwrap()).unwrap();
        assert_eq!(itls, vec![vec![Seconds(0.5), Seconds(0.25)], vec![]]);

        let mut restored = r.value.as_object().unwrap().clone();
        r.arrays.restore_into(&mut restored).unwrap();
        assert_eq!(
            Value::Object(restored),
            serde_json::from_str::<Value>(text).unwrap()
        );
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value_as_serde_json_does() {
        let r = record(r#"{"ttfts": [1], "a": 1, "ttfts": [2, 3]}"#);
        assert_eq!(r.arrays.get("ttfts").unwrap().get(), "[2, 3]");
        let mut map = r.value.as_object().unwrap().clone();
        r.arrays.restore_into(&mut map).unwrap();
        assert_eq!(
            Value::Object(map),
            serde_json::json!({"a": 1, "ttfts": [2, 3]})
        );
    }

    #[test]
    fn values_other_than_objects_are_built_whole() {
        for text in [
            "[1, {\"itls\": [2]}]",
            "3",
            "-4",
            "2.5",
            "\"s\"",
            "null",
            "true",
        ] {
            let r = record(text);
            assert!(r.arrays.is_empty(), "{text}");
            assert_eq!(
                r.value,
                serde_json::from_str::<Value>(text).unwrap(),
                "{text}"
            );
        }
    }

    #[test]
    fn seconds_read_numbers_and_the_strings_python_writes() {
        let s: Vec<Seconds> =
            serde_json::from_str(r#"[1, -2, 0.125, "12.5", "NaN", "Infinity", "-inf"]"#).unwrap();
        assert_eq!(
            &s[..4],
            &[Seconds(1.0), Seconds(-2.0), Seconds(0.125), Seconds(12.5)]
        );
        assert!(s[4].0.is_nan());
        assert_eq!(s[5].0, f64::INFINITY);
        assert_eq!(s[6].0, f64::NEG_INFINITY);
        for bad in ["[null]", "[\"fast\"]", "[[1]]", "[true]", "{}"] {
            assert!(
                read_typed::<Vec<Seconds>>(&RawValue::from_string(bad.into()).unwrap()).is_none(),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_value_too_deep_to_build_is_an_error_with_its_text() {
        let deep = format!("{{\"itls\": {}{}}}", "[".repeat(200), "]".repeat(200));
        let r = record(&deep);
        let mut map = Map::new();
        let err = r.arrays.restore_into(&mut map).unwrap_err();
        assert!(
            err.error.to_string().contains("recursion limit"),
            "{}",
            err.error
        );
        assert_eq!(err.raw.get().len(), 400);
    }
}
