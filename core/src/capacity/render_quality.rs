//! The report's quality section ([`super::quality::QualitySection`]) as text cells, for
//! Markdown here and HTML on the compare page. Values are in the evaluation tool's scale,
//! written with four decimals at most (`0.7566`), the change signed (`-0.0075`) with its
//! standard error when both sides have one (`± 0.0168`).

use super::change::Side;
use super::quality::QualitySection;
use super::render::{count, side_words};
use serde_json::Value;
use std::fmt::Write;

/// The headings of the quality table.
pub const QUALITY_COLUMNS: [&str; 5] = [
    "Task",
    "Metric",
    "Baseline → candidate",
    "Change",
    "Samples",
];

/// The quality section as text.
#[derive(Debug, Clone, PartialEq)]
pub struct QualityTable {
    /// One row per (task, metric) on both sides, as many cells as [`QUALITY_COLUMNS`].
    pub rows: Vec<Vec<String>>,
    /// Pairs on one side only, one sentence each (`` `mmlu` / `acc`: no candidate result ``).
    pub missing: Vec<String>,
    /// The quantization change and whether quality vouches for it; `None` without a change.
    pub quantization: Option<String>,
}

/// The quality section of a report; `None` when there is nothing to show
/// ([`QualitySection::is_empty`]).
pub fn quality_table(q: &QualitySection) -> Option<QualityTable> {
    if q.is_empty() {
        return None;
    }
    let rows = q
        .rows
        .iter()
        .map(|r| {
            let change = match r.delta_stderr {
                Some(se) => format!("{} ± {}", signed(r.delta), score(se)),
                None => signed(r.delta),
            };
            let with_se = |v: f64, se: Option<f64>| match se {
                Some(se) => format!("{} ± {}", score(v), score(se)),
                None => score(v),
            };
            let samples = |n: Option<u64>| n.map_or("—".to_string(), |n| count(n as f64));
            vec![
                r.task.clone(),
                r.metric.clone(),
                format!(
                    "{} → {}",
                    with_se(r.baseline, r.baseline_stderr),
                    with_se(r.candidate, r.candidate_stderr)
                ),
                change,
                format!(
                    "{} → {}",
                    samples(r.baseline_samples),
                    samples(r.candidate_samples)
                ),
            ]
        })
        .collect();
    let missing = q
        .missing
        .iter()
        .map(|m| {
            format!(
                "`{}` / `{}`: no {} result (the {} has one)",
                m.task,
                m.metric,
                side_words(m.missing_on),
                side_words(match m.missing_on {
                    Side::Baseline => Side::Candidate,
                    Side::Candidate => Side::Baseline,
                })
            )
        })
        .collect();
    let quantization = (!q.quantization.is_empty()).then(|| {
        let fields = q
            .quantization
            .iter()
            .map(|d| format!("`{}`: {} → {}", d.field, field_value(&d.baseline), field_value(&d.candidate)))
            .collect::<Vec<_>>()
            .join(", ");
        if q.covered {
            format!("Quantization changed ({fields}); the candidate's quality results cover the baseline's tasks.")
        } else {
            format!("Quantization changed ({fields}) and the candidate has no quality result for the baseline's tasks: speed does not prove correctness.")
        }
    });
    Some(QualityTable {
        rows,
        missing,
        quantization,
    })
}

/// The quality section as Markdown (`### Quality` and its table), empty when there is
/// nothing to show.
pub fn quality_markdown(q: &QualitySection) -> String {
    let Some(t) = quality_table(q) else {
        return String::new();
    };
    let mut md = String::from("### Quality\n\n");
    if let Some(s) = &t.quantization {
        let _ = writeln!(md, "{s}\n");
    }
    if !t.rows.is_empty() {
        let _ = writeln!(md, "| {} |", QUALITY_COLUMNS.join(" | "));
        let _ = writeln!(md, "|{}", "---|".repeat(QUALITY_COLUMNS.len()));
        for row in &t.rows {
            let _ = writeln!(md, "| {} |", row.join(" | "));
        }
        md.push('\n');
    }
    for m in &t.missing {
        let _ = writeln!(md, "- {m}");
    }
    if !t.missing.is_empty() {
        md.push('\n');
    }
    md
}

/// A score with four decimals at most, trailing zeros dropped (`0.7566`, `0.5`, `12`).
pub fn score(v: f64) -> String {
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// A change with its sign (`+0.0075`, `-0.0075`, `0`).
pub fn signed(v: f64) -> String {
    let s = score(v);
    if s != "0" && !s.starts_with('-') {
        format!("+{s}")
    } else {
        s
    }
}

/// A configuration value as the report writes it: `unset` for null, strings bare.
pub fn field_value(v: &Value) -> String {
    match v {
        Value::Null => "unset".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_read_as_written() {
        assert_eq!(score(0.7566), "0.7566");
        assert_eq!(score(0.5), "0.5");
        assert_eq!(signed(0.7491 - 0.7566), "-0.0075");
        assert_eq!(signed(0.01), "+0.01");
        assert_eq!(signed(0.00001), "0");
    }
}
