//! The report's warnings ([`super::warning::ReportWarning`]) and its overall answer
//! ([`super::answer::ReportAnswer`]) in words: one sentence each, written from the typed
//! values only.

use super::answer::ReportAnswer;
use super::matrix::MatrixCell;
use super::render::{count, load_words, number, plural, side_words, sweep_labels};
use super::render_quality::field_value as value;
use super::report::CapacityReport;
use super::sweep::SweepKey;
use super::warning::{ReportWarning, TailPercentile, WarningCode};
use crate::report::verdict::VerdictLevel;
use std::fmt::Write;

/// The small-sample rule and its source, stated once under the warnings.
pub const SMALL_SAMPLE_RULE: &str = "Small samples: the p-th percentile of n requests has n·(1 − p/100) requests beyond it, so it rests on at least one only from n ≥ 1/(1 − p/100): 20 completed requests for p95, 100 for p99. With fewer it is the slowest request, or interpolated between the two slowest, not an estimate of the tail (the validation method, step 4: treat extreme percentiles from small samples with caution).";

/// Each warning of `report` as one sentence, in the report's order.
pub fn warning_sentences(report: &CapacityReport) -> Vec<String> {
    report
        .warnings
        .iter()
        .map(|w| warning_sentence(report, w))
        .collect()
}

/// One warning as a sentence.
pub fn warning_sentence(report: &CapacityReport, w: &ReportWarning) -> String {
    match w {
        ReportWarning::QuantizationWithoutQuality {
            differences,
            missing_tasks,
        } => {
            let fields = differences
                .iter()
                .map(|d| format!("`{}`: {} → {}", d.field, value(&d.baseline), value(&d.candidate)))
                .collect::<Vec<_>>()
                .join(", ");
            let tasks = if missing_tasks.is_empty() {
                String::new()
            } else {
                format!(
                    " ({})",
                    missing_tasks
                        .iter()
                        .map(|t| format!("`{t}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            format!("Quantization changed ({fields}) and the candidate has no quality result for the baseline's tasks{tasks}: speed does not prove correctness (attach one with `benchtrail upload --quality FILE`).")
        }
        ReportWarning::SmallSample {
            side,
            sweep,
            shape,
            load,
            completed,
            unsupported,
        } => {
            let parts = unsupported
                .iter()
                .map(|t| {
                    let beyond = *completed as f64 * t.beyond_pct() as f64 / 100.0;
                    format!(
                        "{}: {} % of them is {} {} beyond it, it needs {}",
                        tail_name(*t),
                        t.beyond_pct(),
                        number(beyond),
                        if beyond == 1.0 { "request" } else { "requests" },
                        t.needs()
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            format!(
                "Small sample: the {} completed {} {} at {} on {}, too few for a trustworthy {parts}.",
                side_words(*side),
                count(*completed as f64),
                plural(*completed as usize, "request", "requests"),
                load_words(*shape, *load),
                label(report, sweep),
            )
        }
        ReportWarning::FailedRequests {
            sweep,
            baseline,
            candidate,
        } => format!(
            "Failed requests on {}: baseline {} of {}, candidate {} of {}; they count against attainment.",
            label(report, sweep),
            count(baseline.failed as f64),
            count(baseline.attempted as f64),
            count(candidate.failed as f64),
            count(candidate.attempted as f64),
        ),
        ReportWarning::MissingMatrixCells { side, missing } => format!(
            "The {}'s cells carry the validation matrix's labels but miss {} of its 18 standard cells (scenario / prefix mode / load level): {}.",
            side_words(*side),
            missing.len(),
            missing.iter().map(matrix_cell).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The warnings as Markdown (`### Warnings`, one item each, then the small-sample rule when
/// a small sample is warned about); empty without warnings.
pub fn warnings_markdown(report: &CapacityReport) -> String {
    if report.warnings.is_empty() {
        return String::new();
    }
    let mut md = String::from("### Warnings\n\n");
    for s in warning_sentences(report) {
        let _ = writeln!(md, "- {s}");
    }
    md.push('\n');
    if has_small_sample(report) {
        let _ = writeln!(md, "{SMALL_SAMPLE_RULE}\n");
    }
    md
}

/// Whether a small sample is among the warnings (the rule is then stated).
pub fn has_small_sample(report: &CapacityReport) -> bool {
    report
        .warnings
        .iter()
        .any(|w| w.code() == WarningCode::SmallSample)
}

/// The answer in one sentence: `Answer: warn: approved only with caveats (1 quantization
/// without quality, 4 small samples).`
pub fn answer_sentence(a: &ReportAnswer) -> String {
    let caveats = caveat_words(&a.caveats);
    let with_caveats = if caveats.is_empty() {
        String::new()
    } else {
        format!("; caveats: {caveats}")
    };
    match a.level {
        VerdictLevel::Fail => format!(
            "Answer: fail: not approved, the candidate completes fewer requests per hour at SLO capacity under {}{with_caveats}.",
            a.fewer_requests
                .iter()
                .map(|f| format!("`{}` on `{}`", f.profile, f.cell))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        VerdictLevel::Incomplete => format!(
            "Answer: incomplete: no capacity was compared, so the report cannot say how many more requests per hour{with_caveats}."
        ),
        VerdictLevel::Warn => format!(
            "Answer: warn: approved only with caveats ({caveats}); read the warnings before approving."
        ),
        _ => format!(
            "Answer: pass: approved; the candidate completes at least as many requests per hour at SLO capacity under every profile compared ({}), with no caveat.",
            a.compared
        ),
    }
}

/// `1 quantization without quality, 4 small samples`, in the order of first occurrence.
fn caveat_words(codes: &[WarningCode]) -> String {
    let mut seen: Vec<(WarningCode, usize)> = Vec::new();
    for c in codes {
        match seen.iter_mut().find(|(k, _)| k == c) {
            Some((_, n)) => *n += 1,
            None => seen.push((*c, 1)),
        }
    }
    seen.into_iter()
        .map(|(c, n)| {
            let (one, many) = match c {
                WarningCode::QuantizationWithoutQuality => (
                    "quantization without quality",
                    "quantization without quality",
                ),
                WarningCode::SmallSample => ("small sample", "small samples"),
                WarningCode::FailedRequests => {
                    ("sweep with failed requests", "sweeps with failed requests")
                }
                WarningCode::MissingMatrixCells => {
                    ("side missing matrix cells", "sides missing matrix cells")
                }
            };
            format!("{n} {}", plural(n, one, many))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn tail_name(t: TailPercentile) -> &'static str {
    match t {
        TailPercentile::P95 => "p95",
        TailPercentile::P99 => "p99",
    }
}

/// The sweep's label as the tables name it, else its cell key.
fn label(report: &CapacityReport, key: &SweepKey) -> String {
    let labels = sweep_labels(report.sweeps.iter().map(|s| &s.key));
    report
        .sweeps
        .iter()
        .position(|s| &s.key == key)
        .map(|i| labels[i].clone())
        .unwrap_or_else(|| format!("`{}`", key.cell))
}

fn matrix_cell(m: &MatrixCell) -> String {
    let prefix = match m.prefix_mode {
        crate::cell::PrefixMode::Fresh => "fresh",
        crate::cell::PrefixMode::Reusable => "reusable",
    };
    format!("{}/{prefix}/{}", m.scenario, m.load_level)
}
