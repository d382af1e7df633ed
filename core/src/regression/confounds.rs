//! Confounds: what else changed between two results besides the engine.
//!
//! The validation method asks for one factor at a time. [`confounds`] lists every field that
//! differs between two full configurations and their workload cells, and warns where the
//! comparison itself is doubtful.

use crate::cell::{RequestRate, WorkloadCell};
use crate::config::Configuration;
use crate::result::Warning;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Fields that are the change under test, not a confound: the engine's commit and version.
pub const CHANGE_UNDER_TEST: &[&str] = &["engine.commit", "engine.version"];

/// Fields that restate others (command lines carry ports, paths and every flag): listed as
/// differences, never counted as a factor of their own.
pub const RESTATING_FIELDS: &[&str] = &["engine.launch_command", "benchmark.command"];

/// One differing field: dotted path (`quantization.kv_cache_dtype`, `cell.load.max_concurrency`)
/// and both values (`null` when unset on that side).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FieldDiff {
    /// Dotted path.
    pub field: String,
    /// Value on the baseline side.
    pub baseline: Value,
    /// Value on the candidate side.
    pub candidate: Value,
}

/// What [`confounds`] found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfoundReport {
    /// Every differing field, sorted by path.
    pub differences: Vec<FieldDiff>,
    /// The differing fields counted as factors (not the change under test, not restating).
    pub factors: Vec<String>,
    /// Codes: `several_factors_changed`, `load_shape_differs`, `tokenizer_differs`,
    /// `quantization_without_quality`.
    pub warnings: Vec<Warning>,
}

fn flatten(prefix: &str, v: &Value, out: &mut Map<String, Value>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&p, x, out);
            }
        }
        Value::Object(_) => {}
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

fn load_kind(cell: &WorkloadCell) -> &'static str {
    match (cell.load.request_rate, cell.load.max_concurrency) {
        (Some(RequestRate::PerSecond(_)), _) => "request rate",
        (_, Some(_)) => "fixed concurrency",
        (Some(RequestRate::Infinite), None) => "unlimited burst",
        (None, None) => "unknown",
    }
}

/// Compares two full configurations and cells. `quality_result_attached`: whether the
/// candidate comes with a quality (accuracy) result on the tasks (the server decides it from
/// the stored quality results of both runs with [`crate::quality::covers`]: every task of the
/// baseline's, any when the baseline has none); a quantization change (weights or KV-cache
/// dtype) without one is warned about (`quantization_without_quality`), since speed does not
/// prove correctness.
pub fn confounds(
    baseline: (&Configuration, &WorkloadCell),
    candidate: (&Configuration, &WorkloadCell),
    quality_result_attached: bool,
) -> ConfoundReport {
    let mut a = Map::new();
    let mut b = Map::new();
    flatten(
        "",
        &serde_json::to_value(baseline.0).expect("serializes"),
        &mut a,
    );
    flatten(
        "",
        &serde_json::to_value(candidate.0).expect("serializes"),
        &mut b,
    );
    flatten(
        "cell",
        &serde_json::to_value(baseline.1).expect("serializes"),
        &mut a,
    );
    flatten(
        "cell",
        &serde_json::to_value(candidate.1).expect("serializes"),
        &mut b,
    );
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let differences: Vec<FieldDiff> = keys
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| FieldDiff {
            field: k.clone(),
            baseline: a.get(k).cloned().unwrap_or(Value::Null),
            candidate: b.get(k).cloned().unwrap_or(Value::Null),
        })
        .collect();
    let factors: Vec<String> = differences
        .iter()
        .map(|d| d.field.clone())
        .filter(|f| !CHANGE_UNDER_TEST.contains(&f.as_str()))
        .filter(|f| !RESTATING_FIELDS.contains(&f.as_str()))
        .collect();
    let mut warnings = Vec::new();
    if factors.len() > 1 {
        warnings.push(Warning {
            code: "several_factors_changed".into(),
            message: format!(
                "{} factors changed besides the engine commit/version ({}): a difference cannot be \
                 traced to one cause",
                factors.len(),
                factors.join(", ")
            ),
        });
    }
    let (ka, kb) = (load_kind(baseline.1), load_kind(candidate.1));
    if ka != kb {
        warnings.push(Warning {
            code: "load_shape_differs".into(),
            message: format!(
                "load shapes differ (baseline {ka}, candidate {kb}): a fixed-concurrency test slows \
                 its own arrivals when the server slows, a request-rate test does not"
            ),
        });
    }
    if baseline.0.model.tokenizer != candidate.0.model.tokenizer {
        warnings.push(Warning {
            code: "tokenizer_differs".into(),
            message: "tokenizers differ: tokens/s are not comparable across tokenizers".into(),
        });
    }
    if baseline.0.quantization != candidate.0.quantization && !quality_result_attached {
        warnings.push(Warning {
            code: "quantization_without_quality".into(),
            message: format!(
                "quantization changed ({}) and the candidate has no quality result for the \
                 baseline's tasks: speed does not prove correctness (attach one with \
                 `benchtrail upload --quality FILE`)",
                differences
                    .iter()
                    .filter(|d| d.field.starts_with("quantization."))
                    .map(|d| format!(
                        "{}: {} → {}",
                        d.field,
                        show(&d.baseline),
                        show(&d.candidate)
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    ConfoundReport {
        differences,
        factors,
        warnings,
    }
}

// ---------------------------------------------------------------------------------------------
// No baseline: the nearest series that does exist, and what differs.
// ---------------------------------------------------------------------------------------------

/// The fields of a cell key (`max_concurrency=4;request_rate=inf`) as `cell.<name>` → value
/// (text, percent-escapes decoded).
pub fn cell_fields(cell_key: &str) -> Map<String, Value> {
    let mut out = Map::new();
    for part in cell_key.split(';').filter(|p| !p.is_empty()) {
        let (name, value) = part.split_once('=').unwrap_or((part, ""));
        out.insert(format!("cell.{name}"), Value::String(unescape(value)));
    }
    out
}

fn unescape(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every field of two flat maps (series keys, [`cell_fields`]) whose values differ, sorted by
/// path; `baseline` is `a`'s value, `candidate` is `b`'s.
pub fn key_differences(a: &Map<String, Value>, b: &Map<String, Value>) -> Vec<FieldDiff> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| FieldDiff {
            field: k.clone(),
            baseline: a.get(k).cloned().unwrap_or(Value::Null),
            candidate: b.get(k).cloned().unwrap_or(Value::Null),
        })
        .collect()
}

/// A field's name in a sentence: `hardware` (the accelerator, or a hardware or runner label of
/// the tool's metadata), `runner`, `model`, `max_concurrency`, ...
pub fn field_label(field: &str) -> String {
    if let Some(k) = field.strip_prefix("metadata.") {
        let k = k.to_ascii_lowercase().replace('-', "_");
        return if k.starts_with("runner") {
            "runner".into()
        } else if crate::config::is_hardware_metadata_key(&k) {
            "hardware".into()
        } else {
            format!("metadata `{k}`")
        };
    }
    match field {
        "hardware.accelerator" => "hardware".into(),
        "hardware.accelerator_count" => "accelerator count".into(),
        "model.name" => "model".into(),
        "model.revision" => "model revision".into(),
        "engine.name" => "engine".into(),
        "benchmark.name" => "benchmark tool".into(),
        other => other
            .strip_prefix("cell.")
            .unwrap_or(other)
            .rsplit('.')
            .next()
            .unwrap_or(other)
            .to_string(),
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::Null => "unset".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `hardware differs: NVIDIA L40S vs NVIDIA H100 80GB HBM3`: the candidate's value first.
pub fn describe_difference(d: &FieldDiff) -> String {
    format!(
        "{} differs: {} vs {}",
        field_label(&d.field),
        show(&d.candidate),
        show(&d.baseline)
    )
}

/// The stored series nearest to one that has no baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Nearest {
    /// Its series key (flat, as stored).
    pub series_key: Map<String, Value>,
    /// Its cell key.
    pub cell_key: String,
    /// What differs: `baseline` is the nearest series' value, `candidate` this one's
    /// (configuration fields first, then `cell.*` fields).
    pub differences: Vec<FieldDiff>,
    /// `hardware differs: ci-runner-L40S vs local-docker-H100`, differences joined by `; `.
    pub summary: String,
}

/// The series (of `others`: series key and cell key of every stored group with history) nearest
/// to (`key`, `cell_key`): the fewest differing configuration fields, then the same cell, then
/// the fewest differing cell fields, then the smallest series key text (deterministic).
/// `None` when `others` holds nothing but the series itself.
pub fn nearest(
    key: &Map<String, Value>,
    cell_key: &str,
    others: &[(Map<String, Value>, String)],
) -> Option<Nearest> {
    let cell = cell_fields(cell_key);
    others
        .iter()
        .filter(|(k, c)| !(k == key && c == cell_key))
        .map(|(k, c)| {
            let config = key_differences(k, key);
            let cells = key_differences(&cell_fields(c), &cell);
            let rank = (
                config.len(),
                usize::from(c != cell_key),
                cells.len(),
                Value::Object(k.clone()).to_string(),
                c.clone(),
            );
            (rank, k, c, config, cells)
        })
        .min_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, k, c, mut differences, cells)| {
            differences.extend(cells);
            let summary = differences
                .iter()
                .map(describe_difference)
                .collect::<Vec<_>>()
                .join("; ");
            Nearest {
                series_key: k.clone(),
                cell_key: c.clone(),
                differences,
                summary,
            }
        })
}

// ---------------------------------------------------------------------------------------------
// Workload checks: did baseline and candidate do the same work?
// ---------------------------------------------------------------------------------------------

/// Metrics a different mean **input** length confounds.
pub const INPUT_LENGTH_METRICS: &[&str] = &["ttft"];
/// Metrics a different mean **output** length confounds: per-token and end-to-end latencies,
/// throughputs and what is judged on them (goodput, SLO attainment).
pub const OUTPUT_LENGTH_METRICS: &[&str] = &[
    "tpot",
    "itl",
    "e2el",
    "request_throughput",
    "output_throughput",
    "total_token_throughput",
    "request_goodput",
    "slo_attainment",
];
/// Metrics computed from the output token count a run reports: wrong when that count is.
pub const OUTPUT_COUNT_METRICS: &[&str] = &["tpot", "output_throughput", "total_token_throughput"];
/// Re-tokenized output below this share of the reported output tokens is `output_len_mismatch`.
pub const MIN_RETOKENIZED_SHARE: f64 = 0.9;
/// Tokens a chat template may add to every prompt beyond the requested input length (role
/// markers and a default system header: Llama 3's dated header is about 30 tokens, gpt-oss's
/// harmony header about 60), allowed above the requested length by `requested_len_mismatch`:
/// 32 requested input tokens measured as 72 on a chat endpoint is the template, not other work.
pub const CHAT_TEMPLATE_TOKENS: f64 = 64.0;

/// Measured lengths of one commit's valid runs (means over the runs), from the results' facts
/// [`crate::cell::MEASURED_INPUT_LEN`] and [`crate::cell::MEASURED_OUTPUT_LEN`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunLengths {
    /// Mean input tokens per successful request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<f64>,
    /// Mean output tokens per successful request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<f64>,
    /// SGLang: `total_output_tokens_retokenized / total_output_tokens` (the lowest of the
    /// commit's runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retokenized_share: Option<f64>,
    /// The range the measured means fall in when the runs did what their cell requested, for
    /// lengths a tool draws from a range (the fact [`crate::cell::REQUESTED_LEN_RANGE`]; the
    /// union over the commit's runs); a length it does not name is the cell's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_range: Option<crate::cell::LengthRanges>,
}

impl RunLengths {
    /// What one result's `facts` say of its work: the measured mean lengths, the requested
    /// range, and SGLang's re-tokenized output as a share of the result's
    /// `total_output_tokens` (its value, when stored). Non-finite numbers count as absent.
    pub fn from_facts(facts: &Map<String, Value>, total_output_tokens: Option<f64>) -> RunLengths {
        let f = |k: &str| {
            facts
                .get(k)
                .and_then(Value::as_f64)
                .filter(|v| v.is_finite())
        };
        RunLengths {
            input: f(crate::cell::MEASURED_INPUT_LEN),
            output: f(crate::cell::MEASURED_OUTPUT_LEN),
            retokenized_share: match (f("total_output_tokens_retokenized"), total_output_tokens) {
                (Some(r), Some(t)) if t > 0.0 => Some(r / t),
                _ => None,
            },
            requested_range: facts
                .get(crate::cell::REQUESTED_LEN_RANGE)
                .and_then(|v| serde_json::from_value(v.clone()).ok()),
        }
    }
}

/// One commit's [`RunLengths`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommitLengths {
    /// Commit SHA.
    pub commit: String,
    /// Its measured lengths.
    pub lengths: RunLengths,
}

/// What the engine knows of a group's work besides its values ([`super::analyze_checked`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// Requested input tokens per request (the cell's `input_len`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_input: Option<f64>,
    /// Requested output tokens per request (the cell's `output_len`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_output: Option<f64>,
    /// The baseline commits' lengths (the commits the group's history may come from, oldest
    /// first; only commits with a valid run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<CommitLengths>,
    /// The candidate's lengths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<RunLengths>,
    /// The nearest stored series, for a group without history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nearest: Option<Nearest>,
}

/// What a [`WorkloadConfound`] found; serialized in snake_case (`workload_mismatch`, ...), the
/// code of the verdict reason it becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConfoundCode {
    /// Baseline and candidate measured different mean lengths.
    WorkloadMismatch,
    /// The measured output ≈ input + requested output: the prompt was counted as output.
    PromptCountedAsOutput,
    /// SGLang's re-tokenized output well below its reported output.
    OutputLenMismatch,
    /// The candidate's measured mean length is outside what its cell requested.
    RequestedLenMismatch,
}

impl ConfoundCode {
    /// The code as serialized: `workload_mismatch`, `prompt_counted_as_output`,
    /// `output_len_mismatch`, `requested_len_mismatch`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConfoundCode::WorkloadMismatch => "workload_mismatch",
            ConfoundCode::PromptCountedAsOutput => "prompt_counted_as_output",
            ConfoundCode::OutputLenMismatch => "output_len_mismatch",
            ConfoundCode::RequestedLenMismatch => "requested_len_mismatch",
        }
    }
}

impl std::fmt::Display for ConfoundCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which length a [`WorkloadConfound`] is about; serialized `input` or `output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LengthKind {
    /// Input (prompt) tokens per request.
    Input,
    /// Output (generated) tokens per request.
    Output,
}

impl LengthKind {
    /// `input` or `output`.
    pub fn as_str(self) -> &'static str {
        match self {
            LengthKind::Input => "input",
            LengthKind::Output => "output",
        }
    }

    /// The metrics a different mean length of this kind confounds.
    pub fn metrics(self) -> &'static [&'static str] {
        match self {
            LengthKind::Input => INPUT_LENGTH_METRICS,
            LengthKind::Output => OUTPUT_LENGTH_METRICS,
        }
    }
}

impl std::fmt::Display for LengthKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A reason the candidate's work differs from its baseline's, or from its own request. Read
/// back from a stored analysis (the report's `workload`) as it was written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WorkloadConfound {
    /// `workload_mismatch` (baseline and candidate measured different mean lengths),
    /// `prompt_counted_as_output` (the measured output ≈ input + requested output),
    /// `output_len_mismatch` (SGLang's re-tokenized output well below its reported output),
    /// `requested_len_mismatch` (the measured mean length is outside what the cell requested).
    pub code: ConfoundCode,
    /// `input` or `output`.
    pub length: LengthKind,
    /// The baseline's mean length (`workload_mismatch`), the input + requested output
    /// (`prompt_counted_as_output`), the reported output tokens per request
    /// (`output_len_mismatch`: the share is in the message) or the cell's requested length
    /// (`requested_len_mismatch`).
    pub baseline: Option<f64>,
    /// The candidate's measured mean length (`output_len_mismatch`: the re-tokenized share).
    pub candidate: f64,
    /// Relative difference, percent of `baseline`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_pct: Option<f64>,
    /// The baseline commits the baseline length is the mean of.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baseline_commits: Vec<String>,
    /// Metrics given no regression or improvement verdict because of it.
    pub metrics: Vec<String>,
    /// One sentence, with both numbers.
    pub message: String,
}

impl WorkloadConfound {
    /// Whether it leaves `metric` without a verdict.
    pub fn affects(&self, metric: &str) -> bool {
        self.metrics.iter().any(|m| m == metric)
    }
}

fn names(metrics: &[&str]) -> Vec<String> {
    metrics.iter().map(|m| m.to_string()).collect()
}

fn tokens(x: f64) -> String {
    if (x - x.round()).abs() < 0.05 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// The workload confounds of a candidate against its baseline (`pinned`: the baseline is that
/// commit): measured mean input or output length differing by more than `tolerance_pct`
/// between the baseline (the mean of the last `window` commits of `workload.history` that
/// measured it) and the candidate, and the candidate's own flags: `prompt_counted_as_output`,
/// `output_len_mismatch`, and `requested_len_mismatch` for a length no other confound names,
/// when the candidate's measured mean is outside what its cell requested (`requested_input`,
/// `requested_output`; the drawn range of [`RunLengths::requested_range`] when the tool draws
/// lengths from one) by more than `tolerance_pct`, plus [`CHAT_TEMPLATE_TOKENS`] above an
/// input length. No requested length (a `sharegpt` input, a file that records none): no check.
pub fn workload_confounds(
    workload: &Workload,
    pinned: Option<&str>,
    window: usize,
    tolerance_pct: f64,
) -> Vec<WorkloadConfound> {
    let mut out = Vec::new();
    let Some(cand) = &workload.candidate else {
        return out;
    };
    let tol = tolerance_pct / 100.0;
    for length in [LengthKind::Input, LengthKind::Output] {
        let metrics = length.metrics();
        let pick = |l: &RunLengths| match length {
            LengthKind::Input => l.input,
            LengthKind::Output => l.output,
        };
        let Some(c) = pick(cand) else {
            continue;
        };
        let mut base: Vec<(&str, f64)> = workload
            .history
            .iter()
            .filter(|h| pinned.is_none_or(|p| h.commit == p))
            .filter_map(|h| pick(&h.lengths).map(|v| (h.commit.as_str(), v)))
            .collect();
        if base.len() > window {
            base.drain(..base.len() - window);
        }
        if base.is_empty() {
            continue;
        }
        let b = base.iter().map(|x| x.1).sum::<f64>() / base.len() as f64;
        if b <= 0.0 || ((c - b) / b).abs() <= tol {
            continue;
        }
        let delta = (c - b) / b * 100.0;
        let affected = metrics
            .iter()
            .map(|m| super::describe(m, &crate::metric::Stat::Value))
            .collect::<Vec<_>>();
        out.push(WorkloadConfound {
            code: ConfoundCode::WorkloadMismatch,
            length,
            baseline: Some(b),
            candidate: c,
            delta_pct: Some(delta),
            baseline_commits: base.iter().map(|x| x.0.to_string()).collect(),
            metrics: names(metrics),
            message: format!(
                "workload mismatch: measured mean {length} length {} tokens vs {} in the baseline \
                 ({delta:+.1} %, {} baseline commit(s); tolerance {tolerance_pct} %): no \
                 regression or improvement verdict on {}",
                tokens(c),
                tokens(b),
                base.len(),
                affected.join(", ")
            ),
        });
    }
    if let (Some(i), Some(o), Some(req)) = (cand.input, cand.output, workload.requested_output) {
        let expected = i + req;
        if req > 0.0 && ((o - expected) / expected).abs() <= tol && ((o - req) / req).abs() > tol {
            out.push(WorkloadConfound {
                code: ConfoundCode::PromptCountedAsOutput,
                length: LengthKind::Output,
                baseline: Some(expected),
                candidate: o,
                delta_pct: Some((o - expected) / expected * 100.0),
                baseline_commits: Vec::new(),
                metrics: names(OUTPUT_COUNT_METRICS),
                message: format!(
                    "prompt counted as output: measured mean output length {} tokens ≈ input {} + \
                     requested output {} = {}: TPOT, output throughput and total token throughput \
                     are not tested",
                    tokens(o),
                    tokens(i),
                    tokens(req),
                    tokens(expected)
                ),
            });
        }
    }
    if let Some(share) = cand.retokenized_share {
        if share < MIN_RETOKENIZED_SHARE {
            out.push(WorkloadConfound {
                code: ConfoundCode::OutputLenMismatch,
                length: LengthKind::Output,
                baseline: cand.output,
                candidate: share,
                delta_pct: None,
                baseline_commits: Vec::new(),
                metrics: names(OUTPUT_COUNT_METRICS),
                message: format!(
                    "output length mismatch: the re-tokenized output is {:.1} % of the reported \
                     output tokens (below {:.0} %: the output length was taken from the request, \
                     not from usage): TPOT, output throughput and total token throughput are not \
                     tested",
                    share * 100.0,
                    MIN_RETOKENIZED_SHARE * 100.0
                ),
            });
        }
    }
    // The candidate against its own request, for each length no confound above explains
    // (a baseline of other lengths, the prompt counted as output, a wrong output count).
    for length in [LengthKind::Input, LengthKind::Output] {
        if out.iter().any(|c| c.length == length) {
            continue;
        }
        let (requested, measured, range) = match length {
            LengthKind::Input => (
                workload.requested_input,
                cand.input,
                cand.requested_range.and_then(|r| r.input),
            ),
            LengthKind::Output => (
                workload.requested_output,
                cand.output,
                cand.requested_range.and_then(|r| r.output),
            ),
        };
        let (Some(req), Some(m)) = (requested.filter(|r| *r > 0.0), measured) else {
            continue;
        };
        let [lo, hi] = range.unwrap_or([req, req]);
        let template = match length {
            LengthKind::Input => CHAT_TEMPLATE_TOKENS,
            LengthKind::Output => 0.0,
        };
        let above = m > hi * (1.0 + tol) + template;
        if !above && m >= lo * (1.0 - tol) {
            continue;
        }
        let delta = (m - req) / req * 100.0;
        let expected = if range.is_some() {
            format!(
                "a mean of {}–{} expected of its drawn lengths, ",
                tokens(lo),
                tokens(hi)
            )
        } else {
            String::new()
        };
        let allowance = if above && template > 0.0 {
            format!(" plus {} chat-template tokens", tokens(template))
        } else {
            String::new()
        };
        let metrics = length.metrics();
        let affected = metrics
            .iter()
            .map(|m| super::describe(m, &crate::metric::Stat::Value))
            .collect::<Vec<_>>();
        out.push(WorkloadConfound {
            code: ConfoundCode::RequestedLenMismatch,
            length,
            baseline: Some(req),
            candidate: m,
            delta_pct: Some(delta),
            baseline_commits: Vec::new(),
            metrics: names(metrics),
            message: format!(
                "requested length mismatch: measured mean {length} length {} tokens, the cell \
                 requested {} ({delta:+.1} %; {expected}tolerance {tolerance_pct} %{allowance}): \
                 no regression or improvement verdict on {}",
                tokens(m),
                tokens(req),
                affected.join(", ")
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn nearest_prefers_fewest_configuration_differences_then_the_same_cell() {
        let me = map(
            json!({"benchmark.name": "vllm-bench-serve", "metadata.hardware": "ci-runner-L40S"}),
        );
        let others = vec![
            (
                map(
                    json!({"benchmark.name": "vllm-bench-serve", "metadata.hardware": "local-docker-H100"}),
                ),
                "max_concurrency=8".to_string(),
            ),
            (
                map(
                    json!({"benchmark.name": "vllm-bench-serve", "metadata.hardware": "local-docker-H100"}),
                ),
                "max_concurrency=4".to_string(),
            ),
            (
                map(json!({"benchmark.name": "sglang-bench-serving"})),
                "max_concurrency=4".to_string(),
            ),
        ];
        let n = nearest(&me, "max_concurrency=4", &others).unwrap();
        assert_eq!(n.cell_key, "max_concurrency=4");
        assert_eq!(
            n.summary,
            "hardware differs: ci-runner-L40S vs local-docker-H100"
        );
        assert_eq!(
            nearest(
                &me,
                "max_concurrency=4",
                &[(me.clone(), "max_concurrency=4".into())]
            ),
            None
        );
    }

    #[test]
    fn lengths_beyond_the_tolerance_and_the_candidates_own_flags() {
        let lengths = |output| RunLengths {
            input: Some(512.0),
            output: Some(output),
            ..RunLengths::default()
        };
        let w = Workload {
            requested_output: Some(1024.0),
            history: vec![CommitLengths {
                commit: "a".into(),
                lengths: lengths(1023.0),
            }],
            candidate: Some(lengths(300.0)),
            ..Workload::default()
        };
        let found = workload_confounds(&w, None, 10, 5.0);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, ConfoundCode::WorkloadMismatch);
        assert_eq!(
            found[0].message,
            "workload mismatch: measured mean output length 300 tokens vs 1023 in the baseline \
             (-70.7 %, 1 baseline commit(s); tolerance 5 %): no regression or improvement verdict \
             on TPOT, ITL, E2E latency, request throughput, output throughput, total token \
             throughput, request goodput, SLO attainment"
        );
        // 512 in, 128 requested, 640 measured: the prompt was counted as output.
        let w = Workload {
            requested_output: Some(128.0),
            candidate: Some(RunLengths {
                input: Some(512.0),
                output: Some(640.0),
                retokenized_share: Some(0.38),
                ..RunLengths::default()
            }),
            ..Workload::default()
        };
        let codes: Vec<ConfoundCode> = workload_confounds(&w, None, 10, 5.0)
            .iter()
            .map(|c| c.code)
            .collect();
        assert_eq!(
            codes,
            [
                ConfoundCode::PromptCountedAsOutput,
                ConfoundCode::OutputLenMismatch
            ]
        );
    }

    #[test]
    fn a_measured_length_outside_the_request_is_requested_len_mismatch_once_per_length() {
        let run = |input, output| RunLengths {
            input: Some(input),
            output: Some(output),
            ..RunLengths::default()
        };
        let requested = |candidate| Workload {
            requested_input: Some(8192.0),
            requested_output: Some(128.0),
            candidate: Some(candidate),
            ..Workload::default()
        };
        let found = workload_confounds(&requested(run(512.0, 128.0)), None, 10, 5.0);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, ConfoundCode::RequestedLenMismatch);
        assert_eq!(found[0].length, LengthKind::Input);
        assert_eq!(
            (found[0].baseline, found[0].candidate),
            (Some(8192.0), 512.0)
        );
        assert_eq!(found[0].metrics, ["ttft"]);
        assert_eq!(
            found[0].message,
            "requested length mismatch: measured mean input length 512 tokens, the cell requested \
             8192 (-93.8 %; tolerance 5 %): no regression or improvement verdict on TTFT"
        );
        // Within the tolerance below, and up to the tolerance plus a chat template above.
        for input in [7782.5, 8192.0 * 1.05 + 64.0] {
            assert_eq!(
                workload_confounds(&requested(run(input, 128.0)), None, 10, 5.0),
                []
            );
        }
        let above = workload_confounds(&requested(run(8666.0, 128.0)), None, 10, 5.0);
        assert_eq!(
            above[0].message,
            "requested length mismatch: measured mean input length 8666 tokens, the cell requested \
             8192 (+5.8 %; tolerance 5 % plus 64 chat-template tokens): no regression or \
             improvement verdict on TTFT"
        );
        // The output: no template allowance.
        let out = workload_confounds(&requested(run(8192.0, 135.0)), None, 10, 5.0);
        assert_eq!(
            (out[0].code, out[0].length, out[0].metrics.len()),
            (ConfoundCode::RequestedLenMismatch, LengthKind::Output, 8)
        );
        // A drawn range: its mean range, not the requested length.
        let mut ranged = run(509.0, 61.0);
        ranged.requested_range = Some(crate::cell::LengthRanges {
            input: Some([394.0, 631.0]),
            output: Some([49.0, 79.0]),
        });
        let mut w = requested(ranged.clone());
        w.requested_input = Some(1024.0);
        assert_eq!(workload_confounds(&w, None, 10, 5.0), []);
        ranged.input = Some(100.0);
        w.candidate = Some(ranged);
        assert_eq!(
            workload_confounds(&w, None, 10, 5.0)[0].message,
            "requested length mismatch: measured mean input length 100 tokens, the cell requested \
             1024 (-90.2 %; a mean of 394–631 expected of its drawn lengths, tolerance 5 %): no \
             regression or improvement verdict on TTFT"
        );
        // Nothing requested: nothing checked.
        let w = Workload {
            candidate: Some(run(512.0, 128.0)),
            ..Workload::default()
        };
        assert_eq!(workload_confounds(&w, None, 10, 5.0), []);
        // An output the prompt was counted in is reported once, as that.
        let w = Workload {
            requested_output: Some(128.0),
            candidate: Some(run(512.0, 640.0)),
            ..Workload::default()
        };
        let codes: Vec<ConfoundCode> = workload_confounds(&w, None, 10, 5.0)
            .iter()
            .map(|c| c.code)
            .collect();
        assert_eq!(codes, [ConfoundCode::PromptCountedAsOutput]);
    }

    #[test]
    fn a_confound_reads_back_from_its_json() {
        let w = Workload {
            history: vec![CommitLengths {
                commit: "a".into(),
                lengths: RunLengths {
                    output: Some(1023.0),
                    ..RunLengths::default()
                },
            }],
            candidate: Some(RunLengths {
                output: Some(300.0),
                ..RunLengths::default()
            }),
            ..Workload::default()
        };
        let found = workload_confounds(&w, None, 10, 5.0);
        let text = serde_json::to_string(&found[0]).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({
                "code": "workload_mismatch",
                "length": "output",
                "baseline": 1023.0,
                "candidate": 300.0,
                "delta_pct": (300.0 - 1023.0) / 1023.0 * 100.0,
                "baseline_commits": ["a"],
                "metrics": ["tpot", "itl", "e2el", "request_throughput", "output_throughput",
                            "total_token_throughput", "request_goodput", "slo_attainment"],
                "message": found[0].message,
            })
        );
        assert_eq!(
            serde_json::from_str::<WorkloadConfound>(&text).unwrap(),
            found[0]
        );
        // Without the fields a confound of its own run leaves out.
        let own = json!({"code": "output_len_mismatch", "length": "output", "baseline": null,
                         "candidate": 0.38, "metrics": ["tpot"], "message": "m"});
        let c: WorkloadConfound = serde_json::from_value(own.clone()).unwrap();
        assert_eq!(
            (c.code, c.length, c.baseline),
            (ConfoundCode::OutputLenMismatch, LengthKind::Output, None)
        );
        assert_eq!(serde_json::to_value(&c).unwrap(), own);
        assert_eq!(
            ConfoundCode::RequestedLenMismatch.to_string(),
            "requested_len_mismatch"
        );
    }
}
