//! The printed "Serving Benchmark Result" block of `vllm bench serve` and of SGLang's
//! `python -m sglang.bench_serving`: what people paste into pull requests and issues.
//!
//! ```text
//! ============ Serving Benchmark Result ============
//! Successful requests:                     60
//! Benchmark duration (s):                  20.43
//! ---------------Time to First Token----------------
//! Mean TTFT (ms):                          35.56
//! ==================================================
//! ```
//!
//! Each line is `label: value` printed with `{:<40} {:<10.2f}`, so values carry two decimals:
//! every result gets the fact `"precision": 0.01` and the warning `rounded_console_values`.
//! Labels map to the vocabulary (`Median TTFT (ms)` → `ttft` p50, `Peak concurrent requests` →
//! `max_concurrent_requests`, `Maximum request concurrency` → the cell's max_concurrency, ...);
//! a line this adapter does not know is kept as a fact under its label, never an error. A text
//! may hold several blocks (one per run); each is one result. The two tools' blocks differ
//! (SGLang prints `Backend:`, `Traffic request rate:`, `E2E Latency`; vLLM prints
//! `Failed requests:`, `E2EL`), which is how the format is told, by content only.
//!
//! `benchmark.name` is the format name: the block holds fewer statistics, rounded, and (for
//! vLLM) no client backend, so its results form series of their own.

use super::fields::{as_count, finish_metrics, has, push_value, stat_label};
use super::{AdapterError, FieldError, InputFile};
use crate::cell::{is_infinity_word, RequestRate};
use crate::metric::Stat;
use crate::result::{BenchResult, Source, Warning};
use serde_json::Value;

/// `vllm bench serve` console summary.
pub const VLLM_FORMAT: &str = "vllm-bench-serve-console";
/// `python -m sglang.bench_serving` console summary.
pub const SGLANG_FORMAT: &str = "sglang-bench-serving-console";

/// The words of the header line.
const HEADER: &str = "Serving Benchmark Result";

/// Decimal places the tools print: values are rounded to this precision.
const PRECISION: f64 = 0.01;

/// Which tool printed a block.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Tool {
    Vllm,
    Sglang,
}

/// Lines only SGLang prints.
const SGLANG_MARKS: &[&str] = &[
    "backend:",
    "traffic request rate:",
    "max request concurrency:",
    "e2e latency",
    "(retokenized)",
];

/// Aggregate line labels (lower case, without the colon) and their vocabulary names.
const AGGREGATES: &[(&str, &str)] = &[
    ("successful requests", "completed"),
    ("failed requests", "failed"),
    ("benchmark duration (s)", "duration"),
    ("total input tokens", "total_input_tokens"),
    ("total generated tokens", "total_output_tokens"),
    ("request throughput (req/s)", "request_throughput"),
    ("request goodput (req/s)", "request_goodput"),
    ("output token throughput (tok/s)", "output_throughput"),
    (
        "peak output token throughput (tok/s)",
        "max_output_tokens_per_s",
    ),
    ("peak concurrent requests", "max_concurrent_requests"),
    ("total token throughput (tok/s)", "total_token_throughput"),
    // Older SGLang.
    ("total throughput (tok/s)", "total_token_throughput"),
];

/// Metric words of `<Stat> <METRIC> (ms)` lines and their vocabulary names.
const DISTRIBUTIONS: &[(&str, &str)] = &[
    ("ttft", "ttft"),
    ("tpot", "tpot"),
    ("itl", "itl"),
    ("e2el", "e2el"),
    ("e2e latency", "e2el"),
];

/// One summary block: its lines and the 1-based line of its header.
struct Block<'a> {
    line: usize,
    lines: Vec<&'a str>,
}

fn is_header(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('=') && t.contains(HEADER)
}

fn blocks(text: &str) -> Vec<Block<'_>> {
    let mut out: Vec<Block> = Vec::new();
    let mut open = false;
    for (i, line) in text.lines().enumerate() {
        if is_header(line) {
            out.push(Block {
                line: i + 1,
                lines: Vec::new(),
            });
            open = true;
            continue;
        }
        if !open {
            continue;
        }
        let t = line.trim();
        if t.len() >= 10 && t.chars().all(|c| c == '=') {
            open = false;
        } else if let Some(block) = out.last_mut() {
            block.lines.push(line);
        }
    }
    out
}

fn tool_of(block: &Block) -> Tool {
    let sglang = block.lines.iter().any(|l| {
        let l = l.trim().to_ascii_lowercase();
        SGLANG_MARKS.iter().any(|m| {
            if m.ends_with(':') {
                l.starts_with(m)
            } else {
                l.contains(m)
            }
        })
    });
    if sglang {
        Tool::Sglang
    } else {
        Tool::Vllm
    }
}

fn detect(input: &InputFile, tool: Tool) -> Result<(), String> {
    let all = blocks(input.text);
    let Some(first) = all.first() else {
        return Err(format!("no \"{HEADER}\" header line"));
    };
    if tool_of(first) == tool {
        Ok(())
    } else {
        Err(match tool {
            Tool::Vllm => "a summary block printed by SGLang, not vLLM".into(),
            Tool::Sglang => "a summary block printed by vLLM, not SGLang".into(),
        })
    }
}

pub(super) fn detect_vllm(input: &InputFile) -> Result<(), String> {
    detect(input, Tool::Vllm)
}

pub(super) fn detect_sglang(input: &InputFile) -> Result<(), String> {
    detect(input, Tool::Sglang)
}

pub(super) fn parse_vllm(
    input: &InputFile,
    _companions: &[&InputFile],
) -> Result<Vec<BenchResult>, AdapterError> {
    parse(input, VLLM_FORMAT)
}

pub(super) fn parse_sglang(
    input: &InputFile,
    _companions: &[&InputFile],
) -> Result<Vec<BenchResult>, AdapterError> {
    parse(input, SGLANG_FORMAT)
}

fn parse(input: &InputFile, format: &str) -> Result<Vec<BenchResult>, AdapterError> {
    let all = blocks(input.text);
    if all.is_empty() {
        return Err(AdapterError::Field {
            record: 0,
            line: 1,
            error: FieldError::new("", format!("no \"{HEADER}\" header line")),
        });
    }
    let mut results = Vec::with_capacity(all.len());
    for (record, block) in all.iter().enumerate() {
        let mut r = read_block(block, format);
        if r.metrics.is_empty() {
            return Err(AdapterError::Field {
                record,
                line: block.line,
                error: FieldError::new("", "the summary block holds no metric line"),
            });
        }
        r.source = Some(Source {
            format: String::new(),
            file: input.index,
            record,
        });
        results.push(r);
    }
    Ok(results)
}

/// A printed number; `None` for anything else (`N/A`, `None`, text).
fn printed_number(value: &str) -> Option<f64> {
    value.parse::<f64>().ok().filter(|v| v.is_finite())
}

fn read_block(block: &Block, format: &str) -> BenchResult {
    let mut r = BenchResult::default();
    r.configuration.benchmark.name = Some(format.to_string());
    let mut distributions: Vec<(Stat, &str, f64, String)> = Vec::new();
    let mut completed = None;
    let mut failed = None;
    for line in &block.lines {
        let t = line.trim();
        if t.is_empty() || t.starts_with('-') {
            continue; // a section rule such as `----Time to First Token----`
        }
        let Some((label, value)) = t.split_once(':') else {
            r.facts.insert(t.to_string(), Value::Null);
            continue;
        };
        let (label, value) = (label.trim(), value.trim());
        let key = label.to_ascii_lowercase();
        let number = printed_number(value);
        if let (Some(name), Some(v)) = (
            AGGREGATES.iter().find(|(k, _)| *k == key).map(|(_, n)| *n),
            number,
        ) {
            match name {
                "completed" => completed = as_count(v),
                "failed" => failed = as_count(v),
                _ => {}
            }
            if !has(&r, name, &Stat::Value) {
                push_value(&mut r, name, Stat::Value, v, None, label);
            }
            continue;
        }
        match key.as_str() {
            "maximum request concurrency" | "max request concurrency" => {
                if let Some(c) = number.and_then(as_count) {
                    r.cell.load.max_concurrency = Some(c);
                    continue;
                }
            }
            "traffic request rate" | "request rate configured (rps)" => {
                if is_infinity_word(value) {
                    r.cell.load.request_rate = Some(RequestRate::Infinite);
                    continue;
                }
                if let Some(rate) = number.filter(|v| *v > 0.0) {
                    r.cell.load.request_rate = Some(RequestRate::PerSecond(rate));
                    continue;
                }
            }
            "backend" if !value.is_empty() => {
                r.configuration.benchmark.backend = Some(value.to_string());
                continue;
            }
            _ => {}
        }
        if let (Some((stat, name)), Some(v)) = (distribution_label(&key), number) {
            distributions.push((stat, name, v, label.to_string()));
            continue;
        }
        let fact = number.map_or_else(|| Value::String(value.to_string()), Value::from);
        r.facts.insert(label.to_string(), fact);
    }
    if completed != Some(0) {
        for (stat, name, v, label) in distributions {
            if has(&r, name, &stat) {
                continue; // `Median` and `P50` are one statistic
            }
            let n = match name {
                "ttft" | "e2el" => completed,
                _ => None,
            };
            push_value(&mut r, name, stat, v, n, &label);
        }
    }
    finish_metrics(&mut r);
    r.facts.insert("precision".into(), Value::from(PRECISION));
    r.warnings.push(Warning {
        code: "rounded_console_values".into(),
        message: "Values come from a printed summary, rounded to 2 decimals (precision 0.01 in the unit shown); compare them with results of the same format.".into(),
    });
    if completed == Some(0) {
        r.warnings.push(Warning {
            code: "nothing_completed".into(),
            message: "No request completed: the tool's latency statistics are placeholders and were not stored.".into(),
        });
    }
    if let (Some(f), Some(c)) = (failed.filter(|f| *f > 0), completed) {
        r.warnings.push(Warning {
            code: "failed_requests".into(),
            message: format!("{f} of {} requests failed.", f + c),
        });
    }
    r
}

/// `mean ttft (ms)` → (mean, `ttft`); `p99 e2e latency (ms)` → (p99, `e2el`).
fn distribution_label(key: &str) -> Option<(Stat, &'static str)> {
    let body = key.strip_suffix("(ms)")?.trim_end();
    let (stat, metric) = body.split_once(' ')?;
    let name = DISTRIBUTIONS.iter().find(|(k, _)| *k == metric.trim())?.1;
    Some((stat_label(stat)?, name))
}
