//! The workload cell: which traffic a result was measured under.
//!
//! The validation method runs a matrix of cells (task type × prefix reuse × load level); a cell
//! also records the load shape exactly, because a fixed-concurrency test and a fixed-arrival-rate
//! test press a server differently and must never share a series.

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Whether prompts share a reusable prefix (prefix caching can help) or are fresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PrefixMode {
    /// No shared prefix between prompts.
    Fresh,
    /// Prompts share a prefix that a prefix cache can reuse.
    Reusable,
}

/// Requests per second offered by the client, or `inf` (send all at once, limited only by
/// max_concurrency). Serialized as a number, or as the string `"inf"` as vLLM writes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RequestRate {
    /// A finite rate in req/s.
    PerSecond(f64),
    /// No rate limit.
    Infinite,
}

impl Serialize for RequestRate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestRate::PerSecond(r) => s.serialize_f64(*r),
            RequestRate::Infinite => s.serialize_str("inf"),
        }
    }
}

impl<'de> Deserialize<'de> for RequestRate {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Number(n) => n
                .as_f64()
                .filter(|r| *r > 0.0)
                .map(RequestRate::PerSecond)
                .ok_or_else(|| {
                    serde::de::Error::custom("request_rate must be a positive number or \"inf\"")
                }),
            serde_json::Value::String(s) if is_infinity_word(&s) => Ok(RequestRate::Infinite),
            serde_json::Value::String(s) => s
                .parse::<f64>()
                .ok()
                .filter(|r| *r > 0.0 && r.is_finite())
                .map(RequestRate::PerSecond)
                .ok_or_else(|| {
                    serde::de::Error::custom("request_rate must be a positive number or \"inf\"")
                }),
            _ => Err(serde::de::Error::custom(
                "request_rate must be a positive number or \"inf\"",
            )),
        }
    }
}

/// Percent-encodes the characters that structure a cell key (`%`, `;`, `=`) and control
/// characters, leaving every other character as it is.
fn escape_key_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '%' | ';' | '=') || c.is_control() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// True for the spellings of infinity that Python tools write: `inf`, `Infinity`.
pub fn is_infinity_word(s: &str) -> bool {
    matches!(
        s.to_ascii_lowercase().as_str(),
        "inf" | "+inf" | "infinity" | "+infinity"
    )
}

/// How load was applied.
///
/// vLLM allows both at once: requests arrive at `request_rate` (gamma-distributed gaps with
/// shape `burstiness`; 1 is Poisson) and at most `max_concurrency` are in flight.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LoadShape {
    /// At most this many requests in flight (fixed concurrency), if limited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u64>,
    /// Offered arrival rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<RequestRate>,
    /// Gamma shape of inter-arrival times (1 = Poisson), when a finite rate is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burstiness: Option<f64>,
}

/// A workload cell. Every field is optional: an adapter fills what its file knows (load shape,
/// number of prompts) and the runner adds the rest (`--cell scenario=long-doc-qa,...`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadCell {
    /// Task type: `short-chat`, `long-doc-qa`, `long-output`, or a user name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// Fresh or reusable prefixes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_mode: Option<PrefixMode>,
    /// Load level label: `low`, `typical`, `near-capacity`, or a user label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_level: Option<String>,
    /// How load was applied.
    #[serde(default)]
    pub load: LoadShape,
    /// Input (prompt) length in tokens per request, as configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_len: Option<u64>,
    /// Output length in tokens per request, as configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_len: Option<u64>,
    /// Dataset name (`random`, `sharegpt`, a path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// Number of prompts sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_prompts: Option<u64>,
}

impl WorkloadCell {
    /// The stable key string of the cell: its set fields as `name=value` joined by `;`, in a
    /// fixed order, e.g. `scenario=short-chat;max_concurrency=4;request_rate=inf;num_prompts=60`.
    /// Two cells have the same key exactly when they are equal.
    pub fn key(&self) -> String {
        let mut key = String::new();
        let mut push = |name: &str, value: &dyn std::fmt::Display| {
            if !key.is_empty() {
                key.push(';');
            }
            // Free-text values are escaped so that no value can forge another field:
            // `scenario=chat;load_level=high` must not equal scenario `chat;load_level=high`.
            let _ = write!(key, "{name}={}", escape_key_value(&value.to_string()));
        };
        if let Some(v) = &self.scenario {
            push("scenario", v);
        }
        if let Some(v) = self.prefix_mode {
            push(
                "prefix_mode",
                &serde_json::to_value(v)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string(),
            );
        }
        if let Some(v) = &self.load_level {
            push("load_level", v);
        }
        if let Some(v) = self.load.max_concurrency {
            push("max_concurrency", &v);
        }
        match self.load.request_rate {
            Some(RequestRate::PerSecond(r)) => push("request_rate", &r),
            Some(RequestRate::Infinite) => push("request_rate", &"inf"),
            None => {}
        }
        if let Some(v) = self.load.burstiness {
            push("burstiness", &v);
        }
        if let Some(v) = self.input_len {
            push("input_len", &v);
        }
        if let Some(v) = self.output_len {
            push("output_len", &v);
        }
        if let Some(v) = &self.dataset {
            push("dataset", v);
        }
        if let Some(v) = self.num_prompts {
            push("num_prompts", &v);
        }
        key
    }

    /// Fills every field of `self` that is unset from `defaults` (the runner's `--cell`).
    /// Fields the file states are kept: a file knows its own load shape.
    pub fn fill_from(&mut self, defaults: &WorkloadCell) {
        fn fill<T: Clone>(a: &mut Option<T>, b: &Option<T>) {
            if a.is_none() {
                a.clone_from(b);
            }
        }
        fill(&mut self.scenario, &defaults.scenario);
        fill(&mut self.prefix_mode, &defaults.prefix_mode);
        fill(&mut self.load_level, &defaults.load_level);
        fill(
            &mut self.load.max_concurrency,
            &defaults.load.max_concurrency,
        );
        fill(&mut self.load.request_rate, &defaults.load.request_rate);
        fill(&mut self.load.burstiness, &defaults.load.burstiness);
        fill(&mut self.input_len, &defaults.input_len);
        fill(&mut self.output_len, &defaults.output_len);
        fill(&mut self.dataset, &defaults.dataset);
        fill(&mut self.num_prompts, &defaults.num_prompts);
    }
}

impl utoipa::PartialSchema for RequestRate {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
        OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::Number)
                    .exclusive_minimum(Some(0.0)),
            )
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(["inf"])),
            )
            .description(Some(
                "Offered arrival rate in req/s, or \"inf\" for no rate limit (as vLLM writes it).",
            ))
            .into()
    }
}

impl utoipa::ToSchema for RequestRate {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_values_cannot_forge_fields() {
        let forged = WorkloadCell {
            scenario: Some("chat;load_level=high".into()),
            ..Default::default()
        };
        let real = WorkloadCell {
            scenario: Some("chat".into()),
            load_level: Some("high".into()),
            ..Default::default()
        };
        assert_eq!(forged.key(), "scenario=chat%3Bload_level%3Dhigh");
        assert_eq!(real.key(), "scenario=chat;load_level=high");
        let odd = WorkloadCell {
            dataset: Some("a%b\u{1}ü".into()),
            ..Default::default()
        };
        assert_eq!(odd.key(), "dataset=a%25b%01ü");
    }

    #[test]
    fn key_lists_set_fields_in_fixed_order() {
        let cell = WorkloadCell {
            scenario: Some("short-chat".into()),
            prefix_mode: Some(PrefixMode::Reusable),
            load: LoadShape {
                max_concurrency: Some(4),
                request_rate: Some(RequestRate::Infinite),
                burstiness: Some(1.0),
            },
            num_prompts: Some(60),
            ..Default::default()
        };
        assert_eq!(
            cell.key(),
            "scenario=short-chat;prefix_mode=reusable;max_concurrency=4;request_rate=inf;burstiness=1;num_prompts=60"
        );
    }

    #[test]
    fn request_rate_reads_python_spellings() {
        let r: RequestRate = serde_json::from_str("\"inf\"").unwrap();
        assert_eq!(r, RequestRate::Infinite);
        let r: RequestRate = serde_json::from_str("\"Infinity\"").unwrap();
        assert_eq!(r, RequestRate::Infinite);
        let r: RequestRate = serde_json::from_str("2.5").unwrap();
        assert_eq!(r, RequestRate::PerSecond(2.5));
        assert!(serde_json::from_str::<RequestRate>("-1").is_err());
    }
}
