//! `--cell KEY=VALUE,...`: workload cell fields stated by the runner.

use benchtrail_core::{PrefixMode, RequestRate, WorkloadCell};
use std::collections::BTreeSet;

/// The keys `--cell` accepts, in the order of [`WorkloadCell::key`].
pub const CELL_KEYS: &[&str] = &[
    "scenario",
    "prefix_mode",
    "load_level",
    "max_concurrency",
    "request_rate",
    "burstiness",
    "input_len",
    "output_len",
    "dataset",
    "num_prompts",
];

/// A malformed `--cell` argument.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CellArgError {
    /// A piece without `=`.
    #[error("--cell `{0}`: expected KEY=VALUE")]
    NoEquals(String),
    /// A key not in [`CELL_KEYS`].
    #[error("--cell: unknown key `{0}`; valid keys: {keys}", keys = CELL_KEYS.join(", "))]
    UnknownKey(String),
    /// A value of the wrong kind.
    #[error("--cell {key}={value}: {message}")]
    BadValue {
        /// The key.
        key: String,
        /// The value as given.
        value: String,
        /// What was expected.
        message: &'static str,
    },
    /// The same key twice.
    #[error("--cell: `{0}` given more than once")]
    Duplicate(String),
}

/// Parses every `--cell` argument (each a comma-separated list of `KEY=VALUE`) into one cell.
///
/// Values: `prefix_mode` is `fresh` or `reusable`; `request_rate` a positive number of req/s
/// or `inf`; `burstiness` a positive number; `max_concurrency` and `num_prompts` positive
/// integers; `input_len` and `output_len` integers (tokens); the rest free text.
///
/// # Errors
/// [`CellArgError`] for the first bad piece; an unknown key's error lists the valid keys.
pub fn parse_cells(args: &[String]) -> Result<WorkloadCell, CellArgError> {
    let mut cell = WorkloadCell::default();
    let mut seen = BTreeSet::new();
    for piece in args.iter().flat_map(|a| a.split(',')) {
        let piece = piece.trim();
        if piece.is_empty() {
            continue;
        }
        let (key, value) = piece
            .split_once('=')
            .ok_or_else(|| CellArgError::NoEquals(piece.to_string()))?;
        let (key, value) = (key.trim(), value.trim());
        if !CELL_KEYS.contains(&key) {
            return Err(CellArgError::UnknownKey(key.to_string()));
        }
        if !seen.insert(key.to_string()) {
            return Err(CellArgError::Duplicate(key.to_string()));
        }
        set(&mut cell, key, value)?;
    }
    Ok(cell)
}

fn set(cell: &mut WorkloadCell, key: &str, value: &str) -> Result<(), CellArgError> {
    let bad = |message| CellArgError::BadValue {
        key: key.to_string(),
        value: value.to_string(),
        message,
    };
    if value.is_empty() {
        return Err(bad("empty value"));
    }
    let positive = |v: &str| {
        v.parse::<u64>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| bad("expected a positive integer"))
    };
    let count = |v: &str| {
        v.parse::<u64>()
            .map_err(|_| bad("expected a whole number of tokens"))
    };
    let text = Some(value.to_string());
    match key {
        "scenario" => cell.scenario = text,
        "load_level" => cell.load_level = text,
        "dataset" => cell.dataset = text,
        "prefix_mode" => {
            cell.prefix_mode = Some(
                serde_json::from_value::<PrefixMode>(value.into())
                    .map_err(|_| bad("expected `fresh` or `reusable`"))?,
            )
        }
        "request_rate" => {
            cell.load.request_rate = Some(
                serde_json::from_value::<RequestRate>(value.into()).map_err(|_| {
                    bad("expected a positive number of requests per second or `inf`")
                })?,
            )
        }
        "burstiness" => {
            cell.load.burstiness = Some(
                value
                    .parse::<f64>()
                    .ok()
                    .filter(|b| b.is_finite() && *b > 0.0)
                    .ok_or_else(|| bad("expected a positive number"))?,
            )
        }
        "max_concurrency" => cell.load.max_concurrency = Some(positive(value)?),
        "num_prompts" => cell.num_prompts = Some(positive(value)?),
        "input_len" => cell.input_len = Some(count(value)?),
        "output_len" => cell.output_len = Some(count(value)?),
        _ => return Err(CellArgError::UnknownKey(key.to_string())),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_key() {
        let cell = parse_cells(&[
            "scenario=long-doc-qa,prefix_mode=reusable,load_level=near-capacity,max_concurrency=8".into(),
            "request_rate=inf, burstiness=0.5,input_len=4096,output_len=256,dataset=random,num_prompts=200".into(),
        ])
        .unwrap();
        assert_eq!(
            cell.key(),
            "scenario=long-doc-qa;prefix_mode=reusable;load_level=near-capacity;max_concurrency=8;request_rate=inf;\
             burstiness=0.5;input_len=4096;output_len=256;dataset=random;num_prompts=200"
        );
        let cell = parse_cells(&["request_rate=2.5".into()]).unwrap();
        assert_eq!(cell.load.request_rate, Some(RequestRate::PerSecond(2.5)));
        assert_eq!(parse_cells(&[]).unwrap(), WorkloadCell::default());
    }

    #[test]
    fn unknown_key_lists_valid_ones() {
        let err = parse_cells(&["scenario=a,concurrency=4".into()]).unwrap_err();
        assert_eq!(err, CellArgError::UnknownKey("concurrency".into()));
        assert_eq!(
            err.to_string(),
            "--cell: unknown key `concurrency`; valid keys: scenario, prefix_mode, load_level, max_concurrency, \
             request_rate, burstiness, input_len, output_len, dataset, num_prompts"
        );
    }

    #[test]
    fn bad_values_are_named() {
        for (arg, message) in [
            ("prefix_mode=warm", "expected `fresh` or `reusable`"),
            (
                "request_rate=0",
                "expected a positive number of requests per second or `inf`",
            ),
            ("max_concurrency=0", "expected a positive integer"),
            ("burstiness=nan", "expected a positive number"),
            ("input_len=1k", "expected a whole number of tokens"),
            ("scenario=", "empty value"),
        ] {
            let err = parse_cells(&[arg.into()]).unwrap_err();
            assert!(
                matches!(&err, CellArgError::BadValue { message: m, .. } if *m == message),
                "{arg}: {err}"
            );
        }
        assert_eq!(
            parse_cells(&["scenario".into()]).unwrap_err(),
            CellArgError::NoEquals("scenario".into())
        );
        assert_eq!(
            parse_cells(&["scenario=a".into(), "scenario=b".into()]).unwrap_err(),
            CellArgError::Duplicate("scenario".into())
        );
    }
}
