//! The verdict and the findings behind it as text: for a terminal (`benchtrail check`,
//! `benchtrail compare`) or as Markdown (a PR comment, a CI job summary). One function per
//! format over the same typed model ([`Verdict`], [`RunAnalysis`]), so every surface says the
//! same thing; nothing here decides, it only words what the rules decided.
//!
//! Layout, both formats:
//! 1. the headline: the verdict, the commit, and `provisional (1 of 3 repeats)` when it is;
//! 2. the reasons, highest level first, each with its cell;
//! 3. the findings, grouped across the cells where they hold ([`super::grouped`]): trade-offs,
//!    regressions, missing series, improvements; per cell the baseline and candidate values,
//!    the change, and the test with its p-value; a trade-off lists its sides;
//! 4. changes at least the minimum effect that the test could not decide, with what more
//!    repeats would detect.

use super::grouped::grouped_findings;
use super::model::RunAnalysis;
use super::verdict::{Verdict, VerdictLevel};
use crate::metric::lookup;
use crate::regression::{describe, describe_series, fmt_num, p_phrase, pct, Finding, PartChange};
use std::fmt::Write as _;

/// Output format of [`render`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Plain text for a terminal, 2-space indents, no markup.
    Terminal,
    /// GitHub-flavoured Markdown (tables, headings), for PR comments and job summaries.
    Markdown,
}

/// The verdict (and, when given, the findings of `analysis`) as text in `format`.
pub fn render(verdict: &Verdict, analysis: Option<&RunAnalysis>, format: Format) -> String {
    let mut out = String::new();
    headline(&mut out, verdict, format);
    reasons(&mut out, verdict, format);
    if let Some(a) = analysis {
        findings(&mut out, a, format);
        undecided(&mut out, a, format);
    }
    out
}

fn headline(out: &mut String, v: &Verdict, format: Format) {
    let level = v.verdict.as_str().to_uppercase();
    let provisional = match (&v.repeats, v.provisional) {
        (Some(r), true) => format!(
            " (provisional: {} of {} repeats in)",
            r.received, r.expected
        ),
        _ => String::new(),
    };
    // A SHA is shortened; another name (a folder compared offline) is shown whole.
    let commit = if v.commit.chars().all(|c| c.is_ascii_hexdigit()) {
        super::short(&v.commit)
    } else {
        v.commit.as_str()
    };
    match format {
        Format::Terminal => {
            let _ = writeln!(
                out,
                "benchtrail verdict: {level}{provisional} at commit {commit}"
            );
        }
        Format::Markdown => {
            let _ = writeln!(
                out,
                "### benchtrail: {} **{level}**{provisional} at `{commit}`\n",
                icon(v.verdict)
            );
        }
    }
}

fn icon(level: VerdictLevel) -> &'static str {
    match level {
        VerdictLevel::Pass => "✅",
        VerdictLevel::Warn => "⚠️",
        VerdictLevel::Incomplete => "🧩",
        VerdictLevel::Fail => "❌",
    }
}

fn reasons(out: &mut String, v: &Verdict, format: Format) {
    let mut sorted: Vec<_> = v.reasons.iter().collect();
    // Highest level first; within a level, the order the rules gave.
    sorted.sort_by_key(|r| std::cmp::Reverse(r.level));
    if sorted.is_empty() {
        return;
    }
    if format == Format::Terminal {
        out.push_str("reasons:\n");
    }
    for r in sorted {
        let cell = r
            .cell
            .as_deref()
            .filter(|c| !c.is_empty())
            .map(|c| match format {
                Format::Terminal => format!(" [{c}]"),
                Format::Markdown => format!(" `{c}`"),
            })
            .unwrap_or_default();
        let _ = match format {
            Format::Terminal => writeln!(
                out,
                "  {:<10} {}{cell}: {}",
                r.level.as_str(),
                r.code.as_str(),
                r.message
            ),
            Format::Markdown => writeln!(
                out,
                "- **{}** {}{cell}: {}",
                r.level.as_str(),
                r.code.as_str(),
                escape(&r.message)
            ),
        };
    }
    if format == Format::Markdown {
        out.push('\n');
    }
}

fn findings(out: &mut String, a: &RunAnalysis, format: Format) {
    let grouped = grouped_findings(a);
    if grouped.is_empty() {
        return;
    }
    match format {
        Format::Terminal => out.push_str("findings:\n"),
        Format::Markdown => out.push_str("#### Findings\n\n"),
    }
    for g in &grouped {
        match format {
            Format::Terminal => {
                let _ = writeln!(out, "  {}", g.summary);
            }
            Format::Markdown => {
                let _ = writeln!(out, "**{}**\n", escape(&g.summary));
                out.push_str("| cell | metric | baseline | candidate | change | test |\n");
                out.push_str("|---|---|---:|---:|---:|---|\n");
            }
        }
        for c in &g.cells {
            cell_row(out, &c.cell, &c.finding, format);
        }
        if format == Format::Markdown {
            out.push('\n');
        }
    }
}

/// One cell's finding: baseline and candidate values, the change, the test; a trade-off's
/// sides below it (terminal) or in its metric column (Markdown).
fn cell_row(out: &mut String, cell: &str, f: &Finding, format: Format) {
    let unit = lookup(&f.metric).map_or("", |m| m.unit.as_str());
    let value = |x: Option<f64>| x.map_or("–".to_string(), |x| format!("{} {unit}", fmt_num(x)));
    let change = f.delta_pct.map_or("–".to_string(), pct);
    let test = match f.p_value {
        Some(p) => format!("{}, {}", f.test.as_str(), p_phrase(p)),
        None => f.test.as_str().to_string(),
    };
    let name = describe_series(&f.metric, &f.stat, f.slo_profile.as_deref());
    match format {
        Format::Terminal => {
            let _ = writeln!(
                out,
                "    [{cell}] {name}: {} → {} ({change}; {test})",
                value(f.baseline_value),
                value(f.candidate_value)
            );
            for p in &f.parts {
                let _ = writeln!(
                    out,
                    "      {} {} {}",
                    match p.change {
                        PartChange::Improved => "better:",
                        PartChange::Worsened => "worse: ",
                    },
                    describe(&p.metric, &p.stat),
                    pct(p.delta_pct)
                );
            }
        }
        Format::Markdown => {
            let sides = if f.parts.is_empty() {
                String::new()
            } else {
                let list: Vec<String> = f
                    .parts
                    .iter()
                    .map(|p| format!("{} {}", describe(&p.metric, &p.stat), pct(p.delta_pct)))
                    .collect();
                format!(" ({})", list.join(", "))
            };
            let _ = writeln!(
                out,
                "| `{cell}` | {name}{sides} | {} | {} | {change} | {test} |",
                value(f.baseline_value),
                value(f.candidate_value)
            );
        }
    }
}

fn undecided(out: &mut String, a: &RunAnalysis, format: Format) {
    let rows: Vec<(&str, &str)> = a
        .groups
        .iter()
        .flat_map(|g| {
            g.report
                .undecided
                .iter()
                .map(move |u| (g.cell.as_str(), u.summary.as_str()))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    match format {
        Format::Terminal => out.push_str("not decided (more repeats would decide):\n"),
        Format::Markdown => out.push_str("**Not decided** (more repeats would decide):\n\n"),
    }
    for (cell, summary) in rows {
        let _ = match format {
            Format::Terminal => writeln!(out, "  [{cell}] {summary}"),
            Format::Markdown => writeln!(out, "- `{cell}`: {}", escape(summary)),
        };
    }
}

/// A message made safe inside a Markdown list item or table cell.
fn escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}
