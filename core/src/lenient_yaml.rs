//! Reading the YAML that Python benchmark tools write (guidellm's `benchmarks.yaml`: PyYAML's
//! serialization of the document its `benchmarks.json` holds) into the very `serde_json::Value`
//! that [`lenient_json`](crate::lenient_json) gives for the JSON twin, so that one adapter reads
//! both and gives the same results:
//! - `.inf`, `-.inf` and `.nan` become the strings `"Infinity"`, `"-Infinity"` and `"NaN"`, as
//!   Python's bare literals do in `lenient_json` (and [`as_f64`](crate::lenient_json::as_f64)
//!   reads them); serde_json would make them `null`;
//! - an integer beyond `i64`/`u64` becomes the nearest `f64`, as serde_json reads it from JSON;
//! - a mapping key that is not a string is written as Python's `json` module writes it
//!   (`1`, `2.5`, `true`, `null`); a list or mapping as a key is an error;
//! - a tag (`!!python/tuple`, `!thing`) is dropped and its value kept;
//! - aliases are expanded, within a budget proportional to the text's length: an "alias bomb"
//!   is an error, not minutes of work and gigabytes of memory.
//!
//! Floats are parsed exactly (`str::parse::<f64>`), as `lenient_json` parses them
//! (`float_roundtrip`). Nesting deeper than 128 levels is an error, as in serde_json. One
//! document only: a stream of several (`---`) is an error.

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::Cell;
use std::fmt;

/// Parses `text` as one YAML document into a JSON value (see the module documentation).
///
/// # Errors
/// The parser's message, with the line and column of the fault when it has them.
pub fn parse_value(text: &str) -> Result<Value, String> {
    let budget = Cell::new(text.len().saturating_mul(3).saturating_add(1024));
    let de = yaml_serde::Deserializer::from_str(text);
    Node { budget: &budget }
        .deserialize(de)
        .map_err(|e| e.to_string())
}

/// A JSON number, or the string `lenient_json` gives a non-finite one.
fn float(f: f64) -> Value {
    match Number::from_f64(f) {
        Some(n) => Value::Number(n),
        None if f.is_nan() => Value::String("NaN".into()),
        None if f > 0.0 => Value::String("Infinity".into()),
        None => Value::String("-Infinity".into()),
    }
}

/// Takes `cost` from the budget (one per node, plus a string's length).
fn spend<E: de::Error>(budget: &Cell<usize>, cost: usize) -> Result<(), E> {
    match budget.get().checked_sub(cost) {
        Some(left) => {
            budget.set(left);
            Ok(())
        }
        None => Err(E::custom(
            "the YAML's aliases expand to far more than its text holds",
        )),
    }
}

/// One value of the document.
#[derive(Clone, Copy)]
struct Node<'b> {
    budget: &'b Cell<usize>,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        spend(self.budget, 1)?;
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        spend(self.budget, 1)?;
        Ok(v.into())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        spend(self.budget, 1)?;
        Ok(v.into())
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        spend(self.budget, 1)?;
        Ok(i64::try_from(v).map_or_else(|_| float(v as f64), Value::from))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        spend(self.budget, 1)?;
        Ok(u64::try_from(v).map_or_else(|_| float(v as f64), Value::from))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        spend(self.budget, 1)?;
        Ok(float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        spend(self.budget, 1 + v.len())?;
        Ok(Value::String(v.to_string()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        spend(self.budget, 1)?;
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        spend(self.budget, 1)?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        spend(self.budget, 1)?;
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(Key {
            budget: self.budget,
        })? {
            let value = map.next_value_seed(self)?;
            // A repeated key: the last one wins, as in Python and serde_json.
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        // A tagged value: the tag is dropped.
        let (_tag, value) = data.variant::<String>()?;
        de::VariantAccess::newtype_variant_seed(value, self)
    }
}

/// A mapping key, as the string Python's `json` module would write for it.
struct Key<'b> {
    budget: &'b Cell<usize>,
}

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<String, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string, number, boolean or null as a mapping key")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
        self.visit_str(if v { "true" } else { "false" })
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        self.visit_str(&v.to_string())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        self.visit_str(&v.to_string())
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<String, E> {
        self.visit_str(&v.to_string())
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<String, E> {
        self.visit_str(&v.to_string())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        match float(v) {
            Value::String(s) => self.visit_str(&s),
            number => self.visit_str(&number.to_string()),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        spend(self.budget, 1 + v.len())?;
        Ok(v.to_string())
    }

    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        self.visit_str("null")
    }

    fn visit_none<E: de::Error>(self) -> Result<String, E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<String, D::Error> {
        de.deserialize_any(self)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<String, A::Error> {
        let (_tag, value) = data.variant::<String>()?;
        de::VariantAccess::newtype_variant_seed(value, self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn non_finite_floats_read_as_lenient_json_reads_them() {
        let v = parse_value("a: .inf\nb: -.inf\nc: .nan\nd: .NaN\ne: +.inf\nf: 1.5\n").unwrap();
        assert_eq!(
            v,
            json!({"a": "Infinity", "b": "-Infinity", "c": "NaN", "d": "NaN", "e": "Infinity", "f": 1.5})
        );
        let j = &crate::lenient_json::parse_values(
            r#"{"a": Infinity, "b": -Infinity, "c": NaN, "d": NaN, "e": Infinity, "f": 1.5}"#,
        )
        .unwrap()[0];
        assert_eq!(&v, j);
    }

    #[test]
    fn large_integers_read_as_serde_json_reads_them() {
        for n in [
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "340282366920938463463374607431768211456", // beyond u128
            "123456789012345678901234567890123456789012345678901234567890",
            "-123456789012345678901234567890123456789012345678901234567890",
        ] {
            let y = parse_value(&format!("x: {n}")).unwrap();
            let j = &crate::lenient_json::parse_values(&format!("{{\"x\": {n}}}")).unwrap()[0];
            assert_eq!(&y, j, "{n}");
        }
    }

    #[test]
    fn floats_keep_their_digits() {
        let v = parse_value("x: 34.59466175000898\ny: 0.1\nz: 1.0e-05\nw: 1.0e+16\n").unwrap();
        assert_eq!(v["x"].as_f64().unwrap().to_string(), "34.59466175000898");
        assert_eq!(v["y"].as_f64(), Some(0.1));
        assert_eq!(v["z"].as_f64(), Some(1e-5));
        assert_eq!(v["w"].as_f64(), Some(1e16));
    }

    #[test]
    fn keys_tags_nulls_and_aliases() {
        let v = parse_value(
            "1: a\n2.5: b\ntrue: c\nnull: d\n~: e\nt: !!python/tuple [1, 2]\nu: !thing {k: v}\n\
             base: &b {x: 1}\ncopy: *b\nempty:\n",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({
                "1": "a", "2.5": "b", "true": "c", "null": "e", "t": [1, 2], "u": {"k": "v"},
                "base": {"x": 1}, "copy": {"x": 1}, "empty": null
            })
        );
        assert!(parse_value("[1]: a\n").is_err());
        assert!(parse_value("{a: 1}: b\n").is_err());
    }

    #[test]
    fn errors_instead_of_panics_or_blowups() {
        // Several documents, bad syntax, nesting deeper than 128.
        assert!(parse_value("a: 1\n---\nb: 2\n").is_err());
        assert!(parse_value("a: [1, 2\n").unwrap_err().contains("line"));
        assert!(parse_value(&"[".repeat(200)).is_err());
        assert!(parse_value(&format!("{}1{}", "[".repeat(200), "]".repeat(200))).is_err());
        // Nine levels of ten aliases: 10^9 nodes if expanded.
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            bomb.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let err = parse_value(&bomb).unwrap_err();
        assert!(err.contains("aliases"), "{err}");
    }

    #[test]
    fn plain_text_is_yaml_too() {
        // A YAML parser reads almost any text: callers check the structure they expect.
        assert_eq!(
            parse_value("Mean TTFT (ms): 3.0").unwrap(),
            json!({"Mean TTFT (ms)": 3.0})
        );
        assert_eq!(parse_value("hello").unwrap(), json!("hello"));
        assert_eq!(parse_value("").unwrap(), Value::Null);
    }
}
