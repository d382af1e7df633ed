//! The workload cell: which traffic a result was measured under.
//!
//! # The identity rule (every adapter follows it)
//!
//! A cell identifies **the work a benchmark did**, and nothing else. Its fields, in the order of
//! [`WorkloadCell::key`]:
//!
//! | field | what it is | where it comes from |
//! |---|---|---|
//! | `scenario`, `prefix_mode`, `load_level` | the matrix labels of the validation method | `--cell` only |
//! | `max_concurrency` | at most this many requests in flight | the file |
//! | `request_rate` | offered arrival rate in req/s, or `inf` | the file; fixed concurrency without a rate is `inf` |
//! | `burstiness` | gamma shape of the arrival gaps (1 = Poisson) | the file, only with a finite rate |
//! | `input_len`, `output_len` | the **requested** tokens per request | the file when it records the request |
//! | `dataset` | the dataset name as the tool spells it (`random`, `sharegpt`, `random-ids`) | the file |
//! | `num_prompts` | how many requests the tool was asked to send | the file |
//!
//! Each field is filled, first one wins, from: (1) what the file itself states, read by its
//! adapter; (2) the recorded benchmark command line (`configuration.benchmark.command`, e.g.
//! given with `--config`), read by [`from_command`]: `--max-concurrency`, `--request-rate`,
//! `--burstiness`, `--num-prompts`, `--dataset-name`, and the length flags of the dataset
//! named (`--random-input-len`/`--random-output-len`, `--sonnet-input-len`/`--sonnet-output-len`,
//! `--sharegpt-output-len`, `--hf-output-len`, and the generic `--input-len`/`--output-len`);
//! (3) the upload's `cell` (`benchtrail upload --cell ...`). [`complete`] applies (2), and the
//! upload applies (3) after it. The command's `--model` also names the model when the file
//! does not (a console summary), as the model is part of the series key.
//!
//! Never part of a cell (so never a reason for two series): the output format of one tool
//! (its JSON and its printed console summary are the same benchmark; the *tool*, in
//! `benchmark.name`, is part of the series key because tools define metrics differently),
//! the **measured** lengths (kept as the facts [`MEASURED_INPUT_LEN`] and [`MEASURED_OUTPUT_LEN`],
//! next to the requested ones), seeds, dates, tool versions and client backends.
//!
//! Per tool (what its files state):
//! - `vllm bench serve` JSON: `max_concurrency`, `request_rate`, `burstiness` (finite rate only),
//!   `num_prompts`. No lengths, no dataset: those come from the recorded command or `--cell`.
//! - its console summary: `Maximum request concurrency`; `Request rate configured (RPS)`, and
//!   `inf` when a block that prints `Failed requests:` (a version that prints the rate line
//!   whenever the rate is finite) has none; `num_prompts` = successful + failed requests (vLLM
//!   sends every prompt once).
//! - SGLang `bench_serving` JSON: `max_concurrency`, `request_rate`, `dataset_name`, and the
//!   lengths of that dataset (`random_input_len`/`random_output_len` for the `random*` datasets,
//!   `sharegpt_output_len` for `sharegpt`); SGLang writes the `random_*` defaults for every
//!   dataset, so they are not lengths of a `sharegpt` run. No `num_prompts`.
//! - its console summary: `Max request concurrency`, `Traffic request rate`.
//! - AIPerf, GenAI-Perf: concurrency or rate, request count, the synthetic input and output
//!   token means. guidellm: the strategy as the load shape and the synthetic data's
//!   `prompt_tokens`/`output_tokens`. LLMPerf: concurrency, `mean_input_tokens`,
//!   `mean_output_tokens`, requests started. vLLM offline and PyTorch-format files: their args.
//!
//! A fixed-concurrency test and a fixed-arrival-rate test press a server differently and never
//! share a series, nor do two runs of different requested lengths.

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
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
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
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
    pub input_len: Option<u64>,
    /// Output length in tokens per request, as configured.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
    pub output_len: Option<u64>,
    /// Dataset name (`random`, `sharegpt`, a path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// Number of prompts sent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
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

/// Fact name of the measured mean input length: tokens per successful request, from the
/// per-request samples when there are any, else `total_input_tokens / completed`.
pub const MEASURED_INPUT_LEN: &str = "measured_input_len_mean";
/// Fact name of the measured mean output length: tokens per successful request, from the
/// per-request samples when there are any, else `total_output_tokens / completed`.
pub const MEASURED_OUTPUT_LEN: &str = "measured_output_len_mean";

/// Fact name of the range the measured mean input and output lengths of a run fall in when the
/// run did the work its cell requested, for a tool that draws each request's length from a
/// range: `{"input": [lo, hi], "output": [lo, hi]}`, tokens per request
/// ([`requested_mean_range`]). A length it does not name is fixed at the cell's length.
pub const REQUESTED_LEN_RANGE: &str = "requested_len_mean_range";

/// Standard errors of a mean allowed on either side of the mean of lengths drawn from a range
/// ([`requested_mean_range`]): a run of the requested work measures a mean outside them about
/// once in 16 000 runs.
pub const DRAW_STANDARD_ERRORS: f64 = 4.0;

/// The lowest and highest mean length (tokens per request) a run that did its requested work
/// can measure, per length; `None`: the cell's requested length itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LengthRanges {
    /// Input tokens per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<[f64; 2]>,
    /// Output tokens per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<[f64; 2]>,
}

impl LengthRanges {
    /// Both ranges of `self` and `other` (the runs of one commit's cell): the lowest low and
    /// the highest high of each length.
    pub fn union(self, other: LengthRanges) -> LengthRanges {
        fn join(a: Option<[f64; 2]>, b: Option<[f64; 2]>) -> Option<[f64; 2]> {
            match (a, b) {
                (Some(a), Some(b)) => Some([a[0].min(b[0]), a[1].max(b[1])]),
                (a, b) => a.or(b),
            }
        }
        LengthRanges {
            input: join(self.input, other.input),
            output: join(self.output, other.output),
        }
    }
}

/// Mean of `n` lengths drawn uniformly from the integers `lo..=hi`: its expected value ±
/// [`DRAW_STANDARD_ERRORS`] standard errors, within `lo..=hi`.
fn uniform_mean_range(lo: f64, hi: f64, n: f64) -> [f64; 2] {
    let mean = (lo + hi) / 2.0;
    let width = hi - lo + 1.0;
    let se = ((width * width - 1.0) / 12.0 / n).sqrt();
    [
        lo.max(mean - DRAW_STANDARD_ERRORS * se),
        hi.min(mean + DRAW_STANDARD_ERRORS * se),
    ]
}

/// The range the measured mean lengths of `result` fall in when it did what its cell requests
/// (`cell.input_len`, `cell.output_len`), for a `random*` dataset whose lengths the tool draws
/// from a range; `None` when both lengths are fixed (or not requested). Each request's length
/// is drawn uniformly, so the mean of the run's `completed` requests is the range's middle ±
/// [`DRAW_STANDARD_ERRORS`] standard errors:
/// - SGLang `bench_serving`: from `[L·r, L]` (input at least 1), `r` its `random_range_ratio`
///   (the file's, else the recorded command's `--random-range-ratio`, else SGLang's default 0):
///   a run of the default ratio measures about half the requested length.
/// - `vllm bench serve`, with `--random-range-ratio r` (0 < r < 1) in the recorded command: from
///   `[L·(1−r), L·(1+r)]` (vLLM since April 2025, vllm-project/vllm#16126) or `[L·r, L]`
///   (before); both are allowed, as the command does not say which version ran. Ratio 0 (the
///   current default) and 1 (the earlier default) are fixed lengths. `--random-prefix-len P`
///   adds `P` fixed tokens to every input.
/// - Every other tool's synthetic lengths are centred on the requested ones.
pub fn requested_mean_range(result: &crate::result::BenchResult) -> Option<LengthRanges> {
    let cell = &result.cell;
    if cell
        .dataset
        .as_deref()
        .is_some_and(|d| !is_random_dataset(d))
    {
        return None;
    }
    let flags = result
        .configuration
        .benchmark
        .command
        .as_deref()
        .map(command_flags)
        .unwrap_or_default();
    let number = |names: &[&str]| {
        flag(&flags, names)
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    let tool = result.configuration.benchmark.name.as_deref().unwrap_or("");
    let n = result
        .metrics
        .iter()
        .find(|m| m.name == "completed" && m.stat == crate::metric::Stat::Value)
        .map(|m| m.value)
        .or(cell.num_prompts.map(|n| n as f64))
        .filter(|n| *n >= 1.0)
        .unwrap_or(1.0);
    let ratio_flag = number(&["random-range-ratio"]);
    // Per length: the draw ranges the tool may have used, and fixed tokens added to each.
    let (ranges, prefix): (Vec<(f64, f64)>, f64) = if tool.starts_with("sglang") {
        let r = result
            .facts
            .get("random_range_ratio")
            .and_then(serde_json::Value::as_f64)
            .or(ratio_flag)
            .unwrap_or(0.0);
        if r >= 1.0 {
            return None;
        }
        (vec![(r, 1.0)], 0.0)
    } else if tool.starts_with("vllm") {
        let prefix = number(&["random-prefix-len"]).unwrap_or(0.0);
        match ratio_flag {
            Some(r) if r > 0.0 && r < 1.0 => (vec![(1.0 - r, 1.0 + r), (r, 1.0)], prefix),
            _ => (vec![(1.0, 1.0)], prefix),
        }
    } else {
        return None;
    };
    let range = |len: Option<u64>, min: f64, prefix: f64| {
        let len = len? as f64;
        let mut out: Option<[f64; 2]> = None;
        for (lo, hi) in &ranges {
            let r = uniform_mean_range((len * lo).floor().max(min), (len * hi).ceil(), n);
            out = Some(match out {
                Some(o) => [o[0].min(r[0]), o[1].max(r[1])],
                None => r,
            });
        }
        out.map(|[lo, hi]| [lo + prefix, hi + prefix])
            .filter(|r| *r != [len, len])
    };
    let found = LengthRanges {
        input: range(cell.input_len, 1.0, prefix),
        output: range(cell.output_len, 0.0, 0.0),
    };
    (found != LengthRanges::default()).then_some(found)
}

/// Records [`requested_mean_range`] as the fact [`REQUESTED_LEN_RANGE`], once the cell is
/// complete (after `--cell`).
pub fn record_requested_range(result: &mut crate::result::BenchResult) {
    if let Some(r) = requested_mean_range(result) {
        result.facts.insert(
            REQUESTED_LEN_RANGE.to_string(),
            serde_json::to_value(r).expect("serializes"),
        );
    }
}

/// Datasets whose requests take their lengths from the `random` length flags (vLLM's `random`,
/// `random-mm`, `random-rerank`; SGLang's `random`, `random-ids`, `random-image`).
pub fn is_random_dataset(name: &str) -> bool {
    name == "random" || name.starts_with("random-") || name.starts_with("random_")
}

/// The requested (input, output) lengths of a benchmark of `dataset` (its name; `None` when
/// the tool did not say), given the tool's length settings by family: `random` (the
/// `random_input_len`/`random_output_len` settings), `sonnet`, `sharegpt` (output only), `hf`
/// (output only). A family's settings count only for its own dataset, or for any when the
/// dataset is not named (tools write the defaults of every family, used or not).
pub fn requested_lengths(dataset: Option<&str>, lengths: &Lengths) -> (Option<u64>, Option<u64>) {
    let applies = |family: &str| match dataset {
        None => true,
        Some(d) if family == "random" => is_random_dataset(d),
        Some(d) => d == family,
    };
    let mut input = None;
    let mut output = None;
    for (family, i, o) in [
        ("random", lengths.random_input, lengths.random_output),
        ("sonnet", lengths.sonnet_input, lengths.sonnet_output),
        ("sharegpt", None, lengths.sharegpt_output),
        ("hf", None, lengths.hf_output),
    ] {
        if applies(family) {
            input = input.or(i);
            output = output.or(o);
        }
    }
    (input.or(lengths.input), output.or(lengths.output))
}

/// A tool's length settings, in tokens per request (see [`requested_lengths`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lengths {
    /// `--random-input-len` (vLLM, SGLang `random_input_len`).
    pub random_input: Option<u64>,
    /// `--random-output-len`.
    pub random_output: Option<u64>,
    /// `--sonnet-input-len`.
    pub sonnet_input: Option<u64>,
    /// `--sonnet-output-len`.
    pub sonnet_output: Option<u64>,
    /// `--sharegpt-output-len` (overrides the dataset's own completion lengths).
    pub sharegpt_output: Option<u64>,
    /// `--hf-output-len`.
    pub hf_output: Option<u64>,
    /// The generic `--input-len` (`vllm bench latency`/`throughput`), for any dataset.
    pub input: Option<u64>,
    /// The generic `--output-len`, for any dataset.
    pub output: Option<u64>,
}

/// The cell fields a recorded benchmark command line states (vLLM `vllm bench serve|latency|
/// throughput` and `benchmarks/benchmark_serving.py`, SGLang `python -m sglang.bench_serving`):
/// `--max-concurrency`, `--request-rate` (`inf` or a positive number), `--burstiness` (kept
/// only with a finite rate), `--num-prompts`, `--dataset-name`, and the lengths of
/// [`requested_lengths`] (`--random-input-len`, `--random-output-len`, `--sonnet-input-len`,
/// `--sonnet-output-len`, `--sharegpt-output-len`, `--hf-output-len`, `--input-len`,
/// `--output-len`). Flags are read as `--flag value` or `--flag=value`, with `-` or `_` in the
/// name; SGLang's abbreviations `--random-input`/`--random-output` (argparse accepts unique
/// prefixes) are read too. A value that does not parse leaves its field unset.
pub fn from_command(command: &str) -> WorkloadCell {
    let flags = command_flags(command);
    let get = |names: &[&str]| flag(&flags, names);
    let whole = |names: &[&str]| get(names).and_then(|v| v.parse::<u64>().ok());
    let mut cell = WorkloadCell::default();
    cell.load.max_concurrency = whole(&["max-concurrency"]);
    cell.load.request_rate = get(&["request-rate"]).and_then(|v| {
        if is_infinity_word(v) {
            Some(RequestRate::Infinite)
        } else {
            v.parse::<f64>()
                .ok()
                .filter(|r| *r > 0.0 && r.is_finite())
                .map(RequestRate::PerSecond)
        }
    });
    if matches!(cell.load.request_rate, Some(RequestRate::PerSecond(_))) {
        cell.load.burstiness = get(&["burstiness"])
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|b| *b > 0.0 && b.is_finite());
    }
    cell.num_prompts = whole(&["num-prompts"]);
    cell.dataset = get(&["dataset-name"]).map(str::to_string);
    let lengths = Lengths {
        random_input: whole(&["random-input-len", "random-input"]),
        random_output: whole(&["random-output-len", "random-output"]),
        sonnet_input: whole(&["sonnet-input-len"]),
        sonnet_output: whole(&["sonnet-output-len"]),
        sharegpt_output: whole(&["sharegpt-output-len"]),
        hf_output: whole(&["hf-output-len"]),
        input: whole(&["input-len"]),
        output: whole(&["output-len"]),
    };
    (cell.input_len, cell.output_len) = requested_lengths(cell.dataset.as_deref(), &lengths);
    cell
}

/// The `--flag value` and `--flag=value` pairs of a command line, in order, with `_` in a
/// flag's name read as `-` (see [`from_command`]).
fn command_flags(command: &str) -> Vec<(String, String)> {
    let words = split_words(command);
    let mut flags: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        if let Some(flag) = word.strip_prefix("--") {
            let (name, value) = match flag.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (flag.to_string(), None),
            };
            let value = match value {
                Some(v) => Some(v),
                None => match words.get(i + 1).filter(|next| !next.starts_with("--")) {
                    Some(next) => {
                        i += 1;
                        Some(next.clone())
                    }
                    None => None,
                },
            };
            if let Some(v) = value {
                flags.push((name.replace('_', "-"), v));
            }
        }
        i += 1;
    }
    flags
}

/// The value of the last of `names` among `flags`.
fn flag<'a>(flags: &'a [(String, String)], names: &[&str]) -> Option<&'a str> {
    flags
        .iter()
        .rev()
        .find(|(n, _)| names.contains(&n.as_str()))
        .map(|(_, v)| v.as_str())
}

/// The `--model` of a recorded benchmark command (vLLM's and SGLang's clients), if any.
pub fn command_model(command: &str) -> Option<String> {
    let words = split_words(command);
    words
        .iter()
        .enumerate()
        .find_map(|(i, w)| match w.strip_prefix("--model") {
            Some("") => words.get(i + 1).filter(|v| !v.starts_with("--")).cloned(),
            Some(rest) => rest.strip_prefix('=').map(str::to_string),
            None => None,
        })
}

/// Splits a command line into words as a POSIX shell would for the simple cases recorded
/// commands hold: whitespace separates, single and double quotes group, a backslash escapes
/// the next character (a backslash-newline continuation is whitespace).
fn split_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => match chars.next() {
                Some('\n') | None => {}
                Some(n) => {
                    word.push(n);
                    in_word = true;
                }
            },
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// Applies step (2) of the identity rule to a read result: fills the cell fields the file left
/// unset from the recorded benchmark command (`configuration.benchmark.command`), and records
/// the measured mean lengths as the facts [`MEASURED_INPUT_LEN`] and [`MEASURED_OUTPUT_LEN`]
/// (a fact the file already holds under that name is kept).
pub fn complete(result: &mut crate::result::BenchResult) {
    if let Some(command) = result.configuration.benchmark.command.as_deref() {
        let mut stated = from_command(command);
        // A burstiness belongs to its rate: never added to a rate the file states.
        if result.cell.load.request_rate.is_some() {
            stated.load.burstiness = None;
        }
        result.cell.fill_from(&stated);
        // The model the command benchmarked (`--model`), when the file does not name it (a
        // console summary): a series-key field, so the summary meets its JSON's series.
        if result.configuration.model.name.is_none() {
            result.configuration.model.name = command_model(command);
        }
    }
    let (input, output) = measured_lengths(result);
    for (name, value) in [(MEASURED_INPUT_LEN, input), (MEASURED_OUTPUT_LEN, output)] {
        if let Some(v) = value.filter(|v| v.is_finite()) {
            result
                .facts
                .entry(name.to_string())
                .or_insert_with(|| serde_json::Value::from(v));
        }
    }
}

/// Mean input and output tokens per successful request: from the per-request samples when they
/// hold the counts, else from `total_input_tokens` / `total_output_tokens` over `completed`.
pub fn measured_lengths(result: &crate::result::BenchResult) -> (Option<f64>, Option<f64>) {
    let value = |name: &str| {
        result
            .metrics
            .iter()
            .find(|m| m.name == name && m.stat == crate::metric::Stat::Value)
            .map(|m| m.value)
    };
    let completed = value("completed").filter(|c| *c > 0.0);
    let from_samples = |tokens: Option<&Vec<Option<u64>>>| {
        let samples = result.samples.as_ref()?;
        let (sum, n) = tokens?
            .iter()
            .zip(&samples.success)
            .filter(|(_, ok)| **ok)
            .filter_map(|(t, _)| *t)
            .fold((0u128, 0u64), |(s, n), t| (s + u128::from(t), n + 1));
        (n > 0).then(|| sum as f64 / n as f64)
    };
    let samples = result.samples.as_ref();
    let input = from_samples(samples.and_then(|s| s.input_tokens.as_ref()))
        .or_else(|| Some(value("total_input_tokens")? / completed?));
    let output = from_samples(samples.and_then(|s| s.output_tokens.as_ref()))
        .or_else(|| Some(value("total_output_tokens")? / completed?));
    (input, output)
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
