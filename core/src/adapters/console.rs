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
//! A block is complete when it ends with its closing `=====` line and holds the lines both tools
//! always print ([`ALWAYS_PRINTED`]; SGLang also always prints its E2E latency, TTFT and ITL
//! sections, while vLLM prints the sections `--percentile-metrics` asks for, so none is
//! required of it) and no section rule without lines under it. An incomplete block is **stored,
//! with a warning** naming what is missing (`truncated` when the closing line is missing,
//! `incomplete_summary` when lines are missing from a closed block), not refused: a console
//! block is most often pasted from someone else's pull request or issue, so the user cannot
//! re-run or re-copy the tool's output, and every value that is there is a real, whole printed
//! value (a missing metric is simply absent, never a zero). The warning travels with the
//! result to the receipt and the pages, so a cut paste is never silently taken as complete.
//! The one value that may be wrong is a last line cut in the middle (`40.0` of `40.09`): when
//! an unclosed block is the end of a text that does not end with a newline, its last line is
//! dropped and the warning says so.
//!
//! `benchmark.name` is the **tool** (`vllm-bench-serve`, `sglang-bench-serving`), not the
//! format: a pasted summary is the same benchmark as the tool's JSON and lands in the same
//! series ([`crate::cell`]); its values are rounded (the fact `precision` and the warning say
//! so). The cell: `Maximum request concurrency` / `Max request concurrency`, the rate
//! (`Traffic request rate`, or vLLM's `Request rate configured (RPS)`, which vLLM prints
//! whenever the rate is finite in every version that prints `Failed requests:`, so such a block
//! without it ran at `inf`), and for vLLM `num_prompts` = successful + failed requests (vLLM
//! sends each prompt once).

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

/// Lines both tools print in every version (lower-case labels, without the colon).
const ALWAYS_PRINTED: &[&str] = &[
    "successful requests",
    "benchmark duration (s)",
    "total input tokens",
    "total generated tokens",
    "request throughput (req/s)",
    "output token throughput (tok/s)",
];

/// Sections SGLang always prints (lower-case titles of the `----Title----` rules).
const SGLANG_SECTIONS: &[&str] = &[
    "end-to-end latency",
    "time to first token",
    "inter-token latency",
];

/// One summary block: its lines and the 1-based line of its header.
struct Block<'a> {
    line: usize,
    lines: Vec<&'a str>,
    /// Whether its closing `=====` line was seen.
    closed: bool,
    /// The last line of an unclosed block at the end of a text without a final newline: maybe
    /// cut in the middle of its value, so not read.
    dropped: Option<&'a str>,
}

fn is_header(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('=') && t.contains(HEADER)
}

fn blocks(text: &str) -> Vec<Block<'_>> {
    let mut out: Vec<Block> = Vec::new();
    let mut open = false;
    let mut last_in_block = false;
    for (i, line) in text.lines().enumerate() {
        last_in_block = false;
        if is_header(line) {
            out.push(Block {
                line: i + 1,
                lines: Vec::new(),
                closed: false,
                dropped: None,
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
            if let Some(block) = out.last_mut() {
                block.closed = true;
            }
        } else if let Some(block) = out.last_mut() {
            block.lines.push(line);
            last_in_block = true;
        }
    }
    if last_in_block && !text.ends_with('\n') {
        if let Some(block) = out.last_mut() {
            block.dropped = block.lines.pop();
        }
    }
    out
}

/// What an incomplete block lacks, as a warning; `None` for a complete block.
fn incompleteness(block: &Block, tool: Tool) -> Option<Warning> {
    let mut missing: Vec<String> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    // (title, lines under it) of each section rule.
    let mut sections: Vec<(String, usize)> = Vec::new();
    for line in &block.lines {
        let t = line.trim();
        if t.starts_with('-') {
            let title = t.trim_matches('-').trim();
            if !title.is_empty() {
                sections.push((title.to_string(), 0));
            }
        } else if let Some((label, _)) = t.split_once(':') {
            labels.push(label.trim().to_ascii_lowercase());
            if let Some(section) = sections.last_mut() {
                section.1 += 1;
            }
        }
    }
    for label in ALWAYS_PRINTED {
        if !labels.iter().any(|l| l == label) {
            missing.push(format!("the `{}` line", capitalized(label)));
        }
    }
    if tool == Tool::Sglang {
        for title in SGLANG_SECTIONS {
            if !sections.iter().any(|(t, _)| t.eq_ignore_ascii_case(title)) {
                missing.push(format!("the `{}` section", capitalized(title)));
            }
        }
    }
    for (title, n) in &sections {
        if *n == 0 {
            missing.push(format!("the lines of the `{title}` section"));
        }
    }
    if let Some(cut) = block.dropped {
        missing.push(format!(
            "the whole last line (`{}`, not read: the text ends inside it)",
            cut.trim()
        ));
    }
    if !block.closed {
        missing.insert(0, "the closing `=====` line".to_string());
    } else if missing.is_empty() {
        return None;
    }
    let after = sections
        .last()
        .map(|(t, _)| format!(", after the `{t}` section"))
        .unwrap_or_default();
    Some(if block.closed {
        Warning {
            code: "incomplete_summary".into(),
            message: format!(
                "The summary block lacks {}: lines were removed from it; what it shows is stored.",
                missing.join(", ")
            ),
        }
    } else {
        Warning {
            code: "truncated".into(),
            message: format!(
                "The summary block is cut short{after}: it lacks {}; the lines before the cut are stored, the metrics after it are missing.",
                missing.join(", ")
            ),
        }
    })
}

/// `successful requests` → `Successful requests`.
fn capitalized(label: &str) -> String {
    let mut c = label.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
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
        r.warnings.extend(incompleteness(block, tool_of(block)));
        if r.metrics.is_empty() {
            return Err(AdapterError::Field {
                record,
                line: block.line,
                error: FieldError::new(
                    "",
                    if block.closed {
                        "the summary block holds no metric line"
                    } else {
                        "the summary block holds no metric line: it is cut short (no closing `=====` line)"
                    },
                ),
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
    let tool = if format == VLLM_FORMAT {
        super::vllm_serve::FORMAT
    } else {
        super::sglang_serving::FORMAT
    };
    r.configuration.benchmark.name = Some(tool.to_string());
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
    if format == VLLM_FORMAT {
        if let (Some(c), Some(f)) = (completed, failed) {
            // `Failed requests:` is printed by the versions that print the configured rate
            // whenever it is finite: without that line, the rate was `inf`.
            r.cell
                .load
                .request_rate
                .get_or_insert(RequestRate::Infinite);
            r.cell.num_prompts = c.checked_add(f);
        }
    }
    finish_metrics(&mut r);
    r.facts.insert("precision".into(), Value::from(PRECISION));
    r.warnings.push(Warning {
        code: "rounded_console_values".into(),
        message: "Values come from a printed summary, rounded to 2 decimals (precision 0.01 in the unit shown).".into(),
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
