//! Integer fields read the way JSON Schema counts integers.
//!
//! The OpenAPI document declares request-body integers as JSON Schema `integer`, and JSON
//! Schema counts any number with a zero fractional part as one: `224.0` and `1e2` are valid
//! `integer`s, and API clients generated from the document (and schemathesis) send them.
//! serde's own `u32`/`u64`/`i64` refuse every float, so such a request would answer 400 where
//! the document says it is valid. These functions accept, for an integer type `T`:
//!
//! - a JSON integer that `T` holds (`224`);
//! - a JSON float that is finite, has no fractional part and that `T` holds exactly
//!   (`224.0` → 224, `1e2` → 100, `-0.0` → 0).
//!
//! Anything else is refused in serde's own wording, naming `T`: a fraction, NaN or an infinity
//! is not an integer at all (``invalid type: floating point `224.5`, expected u32``, as serde
//! says of every float), a whole number that `T` does not hold is a value out of range
//! (``invalid value: floating point `-1.0`, expected u32``, as serde says of the integer
//! ``invalid value: integer `-1`, expected u32``), and text is never a number (``invalid type:
//! string "7", expected u32``). The message ends in `expected u32` as serde's does, so
//! [`crate::settings`] still says it in JSON's words.
//!
//! Use on a field:
//! ```
//! # use serde::Deserialize;
//! #[derive(Deserialize)]
//! struct Body {
//!     #[serde(deserialize_with = "benchtrail_core::serde_int::deserialize")]
//!     number: u64,
//!     // `default` keeps the field optional: with `deserialize_with`, serde no longer reads a
//!     // missing `Option` field as `None` by itself.
//!     #[serde(default, deserialize_with = "benchtrail_core::serde_int::option")]
//!     days: Option<i64>,
//! }
//! let b: Body = serde_json::from_str(r#"{"number": 7.0, "days": 1e2}"#).unwrap();
//! assert_eq!((b.number, b.days), (7, Some(100)));
//! ```
//! The OpenAPI schema of the field is unchanged: utoipa reads the field's Rust type.

use serde::de::{Deserializer, Error, Unexpected, Visitor};
use serde::Deserialize;
use std::fmt;
use std::marker::PhantomData;

/// A primitive integer type these functions read. Implemented for every primitive integer.
pub trait Integer: Sized + TryFrom<i64> + TryFrom<u64> {
    /// The type's Rust name (`u32`): what an error says was expected, as serde's own does.
    const NAME: &'static str;
    /// Whether the type is signed: the hint given to the deserializer ([`deserialize`]).
    const SIGNED: bool;
}

macro_rules! integer {
    ($signed:literal: $($t:ty),*) => {
        $(impl Integer for $t {
            const NAME: &'static str = stringify!($t);
            const SIGNED: bool = $signed;
        })*
    };
}
integer!(false: u8, u16, u32, u64, usize);
integer!(true: i8, i16, i32, i64, isize);

/// 2^64 and 2^63 as `f64` (both exact): a whole float in [-2^63, 2^64) converts to `i64` or
/// `u64` exactly.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

struct IntVisitor<T>(PhantomData<T>);

impl<'de, T: Integer> Visitor<'de> for IntVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(T::NAME)
    }

    fn visit_i64<E: Error>(self, v: i64) -> Result<T, E> {
        T::try_from(v).map_err(|_| E::invalid_value(Unexpected::Signed(v), &self))
    }

    fn visit_u64<E: Error>(self, v: u64) -> Result<T, E> {
        T::try_from(v).map_err(|_| E::invalid_value(Unexpected::Unsigned(v), &self))
    }

    fn visit_f64<E: Error>(self, v: f64) -> Result<T, E> {
        if !v.is_finite() || v.fract() != 0.0 {
            return Err(E::invalid_type(Unexpected::Float(v), &self));
        }
        // `v` is whole here, so `as` is exact inside these ranges (it would saturate outside).
        let exact = if v >= 0.0 {
            (v < TWO_POW_64)
                .then(|| T::try_from(v as u64).ok())
                .flatten()
        } else {
            (v >= -TWO_POW_63)
                .then(|| T::try_from(v as i64).ok())
                .flatten()
        };
        exact.ok_or_else(|| E::invalid_value(Unexpected::Float(v), &self))
    }
}

/// One integer read by [`IntVisitor`]: the element type of the `Option` and `Vec` shapes.
struct Whole<T>(T);

impl<'de, T: Integer> Deserialize<'de> for Whole<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // The hint a primitive gives, so a format that reads numbers from text or is not
        // self-describing reads this one as before; JSON visits a float whatever the hint.
        // (serde's buffered `Content`, used by `flatten` and untagged enums, refuses a float
        // for these hints: a field read through those would stay strict.)
        let visitor = IntVisitor(PhantomData);
        if T::SIGNED {
            d.deserialize_i64(visitor).map(Whole)
        } else {
            d.deserialize_u64(visitor).map(Whole)
        }
    }
}

/// Reads an integer `T`: a JSON integer, or a whole float that `T` holds exactly (see the
/// module).
///
/// # Errors
/// The deserializer's error, naming `T`, for any other value (a fraction, a non-finite number,
/// a value out of `T`'s range, a string, ...).
pub fn deserialize<'de, D: Deserializer<'de>, T: Integer>(d: D) -> Result<T, D::Error> {
    Whole::deserialize(d).map(|w| w.0)
}

/// Reads an optional integer: `null` is `None`, anything else as [`deserialize`]. Use with
/// `#[serde(default, deserialize_with = ...)]` so that a missing field is `None` too.
///
/// # Errors
/// As [`deserialize`].
pub fn option<'de, D: Deserializer<'de>, T: Integer>(d: D) -> Result<Option<T>, D::Error> {
    Option::<Whole<T>>::deserialize(d).map(|o| o.map(|w| w.0))
}

/// Reads an optional list of optional integers (a per-request column with gaps, such as
/// [`crate::samples::RequestSamples::input_tokens`]): each element as [`option`].
///
/// # Errors
/// As [`deserialize`], for the first element that is not an integer or `null`.
pub fn option_vec_option<'de, D: Deserializer<'de>, T: Integer>(
    d: D,
) -> Result<Option<Vec<Option<T>>>, D::Error> {
    Option::<Vec<Option<Whole<T>>>>::deserialize(d)
        .map(|o| o.map(|v| v.into_iter().map(|e| e.map(|w| w.0)).collect()))
}

#[cfg(test)]
mod tests {
    use serde::de::IntoDeserializer;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, PartialEq, Deserialize)]
    struct Unsigned {
        #[serde(deserialize_with = "super::deserialize")]
        v: u32,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Big {
        #[serde(deserialize_with = "super::deserialize")]
        v: u64,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Signed {
        #[serde(deserialize_with = "super::deserialize")]
        v: i64,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Optional {
        #[serde(default, deserialize_with = "super::option")]
        v: Option<usize>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Column {
        #[serde(default, deserialize_with = "super::option_vec_option")]
        v: Option<Vec<Option<u64>>>,
    }

    /// `{"v": <text>}` read as `T`; an error as its message without serde_json's position.
    fn read<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
        serde_json::from_str(&format!(r#"{{"v": {text}}}"#)).map_err(|e| {
            let message = e.to_string();
            match message.rsplit_once(" at line ") {
                Some((head, _)) => head.to_string(),
                None => message,
            }
        })
    }

    fn err(message: &str) -> Result<Unsigned, String> {
        Err(message.to_string())
    }

    #[test]
    fn integers_and_whole_floats_are_accepted() {
        for (text, want) in [
            ("224", 224),
            ("224.0", 224),
            ("2.24e2", 224),
            ("1e2", 100),
            ("0", 0),
            ("0.0", 0),
            ("-0.0", 0),
            ("4294967295", u32::MAX),
            ("4294967295.0", u32::MAX),
        ] {
            assert_eq!(read::<Unsigned>(text), Ok(Unsigned { v: want }), "{text}");
        }
        for (text, want) in [
            ("-3", -3),
            ("-3.0", -3),
            ("7.0", 7),
            ("-9223372036854775808", i64::MIN),
            ("-9.223372036854775808e18", i64::MIN),
            ("9223372036854775807", i64::MAX),
        ] {
            assert_eq!(read::<Signed>(text), Ok(Signed { v: want }), "{text}");
        }
        // The largest whole float below 2^64, exactly; and u64's largest as an integer.
        assert_eq!(
            read::<Big>("18446744073709549568.0"),
            Ok(Big {
                v: 18_446_744_073_709_549_568
            })
        );
        assert_eq!(read::<Big>("18446744073709551615"), Ok(Big { v: u64::MAX }));
    }

    #[test]
    fn fractions_and_non_finite_numbers_are_refused_as_not_integers() {
        assert_eq!(
            read::<Unsigned>("224.5"),
            err("invalid type: floating point `224.5`, expected u32")
        );
        assert_eq!(
            read::<Unsigned>("-0.5"),
            err("invalid type: floating point `-0.5`, expected u32")
        );
        assert_eq!(
            read::<Unsigned>("1e-3"),
            err("invalid type: floating point `0.001`, expected u32")
        );
        // JSON has no NaN or infinity: other formats' floats reach the same visitor.
        let nan = f64::NAN.into_deserializer();
        assert_eq!(
            super::deserialize::<serde::de::value::F64Deserializer<serde::de::value::Error>, u32>(
                nan
            )
            .unwrap_err()
            .to_string(),
            "invalid type: floating point `NaN`, expected u32"
        );
        let inf = f64::NEG_INFINITY.into_deserializer();
        assert_eq!(
            super::deserialize::<serde::de::value::F64Deserializer<serde::de::value::Error>, i64>(
                inf
            )
            .unwrap_err()
            .to_string(),
            "invalid type: floating point `-inf`, expected i64"
        );
    }

    #[test]
    fn whole_numbers_out_of_range_are_refused_naming_the_type() {
        assert_eq!(
            read::<Unsigned>("-1.0"),
            err("invalid value: floating point `-1.0`, expected u32")
        );
        assert_eq!(
            read::<Unsigned>("4294967296.0"),
            err("invalid value: floating point `4294967296.0`, expected u32")
        );
        assert_eq!(
            read::<Unsigned>("1e30"),
            err("invalid value: floating point `1e+30`, expected u32")
        );
        assert_eq!(
            read::<Unsigned>("-1"),
            err("invalid value: integer `-1`, expected u32")
        );
        assert_eq!(
            read::<Unsigned>("4294967296"),
            err("invalid value: integer `4294967296`, expected u32")
        );
        // 2^64 as a float is just past u64; 2^63 as a float just past i64, and the next float
        // below -2^63 just past it on the other side.
        assert_eq!(
            read::<Big>("18446744073709551616.0"),
            Err("invalid value: floating point `1.8446744073709552e+19`, expected u64".into())
        );
        assert_eq!(
            read::<Signed>("9223372036854775808.0"),
            Err("invalid value: floating point `9.223372036854776e+18`, expected i64".into())
        );
        assert_eq!(
            read::<Signed>("-9223372036854777856.0"),
            Err("invalid value: floating point `-9.223372036854778e+18`, expected i64".into())
        );
        // An integer past u64 is a float to serde_json.
        assert_eq!(
            read::<Big>("18446744073709551616"),
            Err("invalid value: floating point `1.8446744073709552e+19`, expected u64".into())
        );
    }

    #[test]
    fn strings_booleans_and_null_are_refused() {
        assert_eq!(
            read::<Unsigned>(r#""7""#),
            err("invalid type: string \"7\", expected u32")
        );
        assert_eq!(
            read::<Signed>("true"),
            Err("invalid type: boolean `true`, expected i64".into())
        );
        assert_eq!(
            read::<Unsigned>("null"),
            err("invalid type: null, expected u32")
        );
    }

    #[test]
    fn an_option_is_none_for_null_or_missing_and_lenient_otherwise() {
        assert_eq!(read::<Optional>("null"), Ok(Optional { v: None }));
        assert_eq!(
            serde_json::from_str::<Optional>("{}").unwrap(),
            Optional { v: None }
        );
        assert_eq!(read::<Optional>("8.0"), Ok(Optional { v: Some(8) }));
        assert_eq!(read::<Optional>("8"), Ok(Optional { v: Some(8) }));
        assert_eq!(
            read::<Optional>("8.5"),
            Err("invalid type: floating point `8.5`, expected usize".into())
        );
    }

    #[test]
    fn a_column_reads_each_element_and_keeps_its_gaps() {
        assert_eq!(
            read::<Column>("[1, 2.0, null, 3e0]"),
            Ok(Column {
                v: Some(vec![Some(1), Some(2), None, Some(3)])
            })
        );
        assert_eq!(read::<Column>("null"), Ok(Column { v: None }));
        assert_eq!(
            read::<Column>("[1, 2.5]"),
            Err("invalid type: floating point `2.5`, expected u64".into())
        );
    }

    #[test]
    fn a_value_document_is_read_alike() {
        // Settings are read from a `serde_json::Value`, which keeps `224.0` a float.
        let v: Unsigned = serde_json::from_value(json!({"v": 224.0})).unwrap();
        assert_eq!(v, Unsigned { v: 224 });
        let e = serde_json::from_value::<Unsigned>(json!({"v": 1.5})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid type: floating point `1.5`, expected u32"
        );
    }
}
