//! The verdict and the findings behind it as text: for a terminal (`benchtrail check`,
//! `benchtrail compare`) or as Markdown (a PR comment, a CI job summary,
//! `GET /api/v1/runs/{id}/report`). One function over the same typed model ([`Verdict`],
//! [`RunAnalysis`], [`ReportExtras`]) for every surface, so they all say the same thing;
//! nothing here decides, it only words what the rules decided.
//!
//! Sections, most important first (the order a reader and a size limit both need):
//! 1. the headline: the verdict, the commit (`no regressions at <sha>` when it passes), and
//!    `provisional (1 of 3 repeats in)` when it is;
//! 2. the findings that need a person (trade-offs, regressions, missing series, change
//!    points), one sentence each with its cells ([`super::grouped`]);
//! 3. the cells missing from this commit (a report never says "no regressions" while one is);
//! 4. warnings: confounds, workload mismatches, invalid runs, provisional repeats, ...;
//! 5. improvements, one sentence each;
//! 6. per finding a table of the cells' numbers: baseline → candidate, change, the interval
//!    the decision used, the test and its p-value (a trade-off lists its sides);
//! 7. changes of at least the minimum effect the test could not decide, with the repeats that
//!    would;
//! 8. the recent history of each flagged series as a sparkline;
//! 9. links (the run, the compare page, the full report).
//!
//! With a size limit ([`render_report`]'s `limit`, e.g. a GitHub comment's 65,536 characters)
//! whole sections are left out, least important first (sparklines, undecided changes, the
//! improvements' tables, the findings' tables, improvements, warnings), and the report says
//! which and links the full report. Sections 1–3 and the links are never left out: no
//! regression is ever dropped from the list.

use super::extras::ReportExtras;
use super::grouped::{cell_label, grouped_findings, GroupedFinding};
use super::model::RunAnalysis;
use super::verdict::{ReasonCode, Verdict, VerdictLevel};
use crate::metric::lookup;
use crate::regression::{
    describe, describe_series, fmt_num, p_phrase, pct, Finding, FindingKind, PartChange,
};
use std::fmt::Write as _;

/// Output format of [`render`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Plain text for a terminal, 2-space indents, no markup.
    Terminal,
    /// GitHub-flavoured Markdown (tables, headings), for PR comments and job summaries.
    Markdown,
}

/// The verdict (and, when given, the findings of `analysis`) as text in `format`, with no
/// extras and no size limit.
pub fn render(verdict: &Verdict, analysis: Option<&RunAnalysis>, format: Format) -> String {
    render_report(verdict, analysis, &ReportExtras::default(), format, None)
}

/// The whole report: [`render`] plus the links and sparklines of `extras`, at most `limit`
/// characters (Unicode scalar values, as GitHub counts a comment body) when given. Sections
/// are shed whole, least important first (see the module documentation); the ones that are
/// never shed can in theory exceed `limit` on their own, and are then cut at the limit with a
/// closing `…`.
pub fn render_report(
    verdict: &Verdict,
    analysis: Option<&RunAnalysis>,
    extras: &ReportExtras,
    format: Format,
    limit: Option<usize>,
) -> String {
    let grouped = analysis.map(grouped_findings).unwrap_or_default();
    let (attention, improvements): (Vec<&GroupedFinding>, Vec<&GroupedFinding>) = grouped
        .iter()
        .partition(|g| g.kind != FindingKind::Improvement);
    let w = Writer { format };
    let mut sections = vec![
        Section::kept(w.headline(verdict, extras, &attention)),
        Section::kept(w.attention(verdict, analysis, &attention)),
        Section::kept(w.missing_cells(verdict)),
        Section::shed(Shed::Warnings, w.warnings(verdict)),
        Section::shed(Shed::Capacity, w.capacity(extras)),
        Section::shed(Shed::Improvements, w.improvements(&improvements)),
        Section::shed(Shed::FindingTables, w.tables(&attention)),
        Section::shed(Shed::ImprovementTables, w.tables(&improvements)),
    ];
    if let Some(a) = analysis {
        sections.push(Section::shed(Shed::Undecided, w.undecided(a)));
    }
    sections.push(Section::shed(
        Shed::Sparklines,
        w.sparklines(extras, analysis),
    ));
    let shed = fit(&mut sections, extras, limit, w);
    let mut out: String = sections.iter().map(|s| s.text.as_str()).collect();
    out.push_str(&w.links(extras, &shed));
    match limit {
        Some(limit) if out.chars().count() > limit => {
            let mut cut: String = out.chars().take(limit.saturating_sub(2)).collect();
            cut.push_str("…\n");
            cut
        }
        _ => out,
    }
}

/// The sections that may be left out, in the order they are: least important first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Shed {
    Sparklines,
    Undecided,
    ImprovementTables,
    FindingTables,
    Capacity,
    Improvements,
    Warnings,
}

impl Shed {
    fn label(self) -> &'static str {
        match self {
            Shed::Sparklines => "history sparklines",
            Shed::Undecided => "undecided changes",
            Shed::ImprovementTables => "improvement tables",
            Shed::FindingTables => "per-cell tables",
            Shed::Capacity => "capacity at SLO",
            Shed::Improvements => "improvements",
            Shed::Warnings => "warnings",
        }
    }
}

struct Section {
    shed: Option<Shed>,
    text: String,
}

impl Section {
    fn kept(text: String) -> Section {
        Section { shed: None, text }
    }
    fn shed(kind: Shed, text: String) -> Section {
        Section {
            shed: Some(kind),
            text,
        }
    }
}

/// Drops sections, least important first, until the report (with its links and the note of
/// what was left out) fits `limit`; returns what was left out.
fn fit(
    sections: &mut Vec<Section>,
    extras: &ReportExtras,
    limit: Option<usize>,
    w: Writer,
) -> Vec<Shed> {
    let Some(limit) = limit else {
        return Vec::new();
    };
    let mut shed: Vec<Shed> = Vec::new();
    loop {
        let body: usize = sections.iter().map(|s| s.text.chars().count()).sum();
        if body + w.links(extras, &shed).chars().count() <= limit {
            return shed;
        }
        let next = sections
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.text.is_empty())
            .filter_map(|(i, s)| s.shed.map(|k| (k, i)))
            .min();
        let Some((kind, i)) = next else {
            return shed;
        };
        sections.remove(i);
        shed.push(kind);
    }
}

/// Writes each section in one format.
#[derive(Clone, Copy)]
struct Writer {
    format: Format,
}

impl Writer {
    fn md(self) -> bool {
        self.format == Format::Markdown
    }

    fn code(self, s: &str) -> String {
        if self.md() {
            format!("`{s}`")
        } else {
            s.to_string()
        }
    }

    /// A heading of a section: `#### Title` or `title:`.
    fn heading(self, out: &mut String, title: &str) {
        if self.md() {
            let _ = writeln!(out, "#### {title}\n");
        } else {
            let _ = writeln!(out, "{}:", title.to_lowercase());
        }
    }

    /// The end of a section: a blank line in Markdown (lists and tables need it).
    fn end(self, out: &mut String) {
        if self.md() {
            out.push('\n');
        }
    }

    fn headline(self, v: &Verdict, extras: &ReportExtras, attention: &[&GroupedFinding]) -> String {
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
        let at = if self.md() {
            format!("`{commit}`")
        } else {
            format!("commit {commit}")
        };
        let what = match v.verdict {
            _ if !v.missing_cells.is_empty() => format!(
                "— {} cell{} missing at {at}",
                v.missing_cells.len(),
                plural(v.missing_cells.len()),
            ),
            VerdictLevel::Pass if attention.is_empty() => format!("— no regressions at {at}"),
            VerdictLevel::Pending => format!("— not analyzed yet at {at}"),
            _ => format!("at {at}"),
        };
        let suite = extras
            .suite
            .as_deref()
            .map(|s| format!(" · {}", self.code(s)))
            .unwrap_or_default();
        if self.md() {
            format!(
                "### benchtrail{suite}: {} **{level}**{provisional} {what}\n\n",
                icon(v.verdict)
            )
        } else {
            format!("benchtrail{suite} verdict: {level}{provisional} {what}\n")
        }
    }

    /// The findings that need a person, one line each; with no analysis, the verdict's
    /// reasons about findings (a change point found by the background scan is a reason only).
    fn attention(
        self,
        v: &Verdict,
        analysis: Option<&RunAnalysis>,
        list: &[&GroupedFinding],
    ) -> String {
        let mut lines: Vec<String> = list
            .iter()
            .map(|g| {
                format!(
                    "{} {}",
                    level_icon(self.format, finding_level(v, g)),
                    self.text(&g.summary)
                )
            })
            .collect();
        let finding_code = |c: ReasonCode| {
            matches!(
                c,
                ReasonCode::Regression | ReasonCode::Tradeoff | ReasonCode::Missing
            )
        };
        for r in &v.reasons {
            let listed = analysis.is_some() && finding_code(r.code);
            if (finding_code(r.code) || r.code == ReasonCode::ChangePoint) && !listed {
                lines.push(format!(
                    "{} {}{}",
                    level_icon(self.format, r.level),
                    self.text(&r.message),
                    self.cell_suffix(r.cell.as_deref())
                ));
            }
        }
        let mut out = String::new();
        if lines.is_empty() {
            return out;
        }
        self.heading(&mut out, "Regressions and trade-offs");
        for l in lines {
            let _ = writeln!(out, "{}{l}", self.bullet());
        }
        self.end(&mut out);
        out
    }

    fn missing_cells(self, v: &Verdict) -> String {
        let mut out = String::new();
        if v.missing_cells.is_empty() {
            return out;
        }
        self.heading(&mut out, "Missing cells");
        for c in &v.missing_cells {
            let _ = writeln!(out, "{}{}", self.bullet(), self.text(&c.message));
        }
        self.end(&mut out);
        out
    }

    /// Reasons that are not findings nor missing cells: confounds, workload, invalid runs,
    /// pending repeats, continuing alerts, too little history, ...
    /// Capacity at SLO against the baseline run: the answer, the change in requests per hour
    /// and the slowest users' wait (the validation report's own sentences), and its link.
    fn capacity(self, extras: &ReportExtras) -> String {
        let mut out = String::new();
        let Some(c) = &extras.capacity else {
            return out;
        };
        self.heading(&mut out, "Capacity at SLO");
        let plain = |s: String| if self.md() { s } else { s.replace('`', "") };
        let _ = writeln!(
            out,
            "{}",
            plain(crate::capacity::render_warnings::answer_sentence(
                &c.report.answer
            ))
        );
        self.end(&mut out);
        let _ = writeln!(
            out,
            "{}",
            plain(crate::capacity::render::summary(&c.report))
        );
        self.end(&mut out);
        if self.md() {
            let _ = writeln!(out, "[Validation report]({})", c.url);
        } else {
            let _ = writeln!(out, "validation report: {}", c.url);
        }
        self.end(&mut out);
        out
    }

    fn warnings(self, v: &Verdict) -> String {
        let mut sorted: Vec<_> = v
            .reasons
            .iter()
            .filter(|r| {
                !matches!(
                    r.code,
                    ReasonCode::Regression
                        | ReasonCode::Tradeoff
                        | ReasonCode::Missing
                        | ReasonCode::ChangePoint
                        | ReasonCode::Improvement
                        | ReasonCode::MissingCell
                        | ReasonCode::Undecided
                )
            })
            .collect();
        let mut out = String::new();
        if sorted.is_empty() {
            return out;
        }
        // Highest level first; within a level, the order the rules gave.
        sorted.sort_by_key(|r| std::cmp::Reverse(r.level));
        self.heading(&mut out, "Warnings");
        for r in sorted {
            let _ = writeln!(
                out,
                "{}{} {}{}: {}",
                self.bullet(),
                r.level.as_str(),
                self.code(r.code.as_str()),
                self.cell_suffix(r.cell.as_deref()),
                self.text(&r.message)
            );
        }
        self.end(&mut out);
        out
    }

    fn improvements(self, list: &[&GroupedFinding]) -> String {
        let mut out = String::new();
        if list.is_empty() {
            return out;
        }
        self.heading(&mut out, "Improvements");
        for g in list {
            let _ = writeln!(out, "{}{}", self.bullet(), self.text(&g.summary));
        }
        self.end(&mut out);
        out
    }

    /// Per grouped finding, its cells' numbers.
    fn tables(self, list: &[&GroupedFinding]) -> String {
        let mut out = String::new();
        for g in list {
            if self.md() {
                let _ = writeln!(out, "<details><summary>{}</summary>\n", html(&g.summary));
                out.push_str(
                    "| cell | metric | baseline | candidate | change | interval | test |\n",
                );
                out.push_str("|---|---|---:|---:|---:|---|---|\n");
            } else {
                let _ = writeln!(out, "{}:", g.summary);
            }
            for c in &g.cells {
                self.cell_row(&mut out, &c.label, &c.finding);
            }
            if self.md() {
                out.push_str("\n</details>\n\n");
            }
        }
        out
    }

    /// One cell's finding: baseline and candidate values, the change, the prediction interval
    /// of the baseline at the decision's level, the test; a trade-off's sides below it
    /// (terminal) or in its metric column (Markdown).
    fn cell_row(self, out: &mut String, cell: &str, f: &Finding) {
        let unit = lookup(&f.metric).map_or("", |m| m.unit.as_str());
        let value =
            |x: Option<f64>| x.map_or("–".to_string(), |x| format!("{} {unit}", fmt_num(x)));
        let change = f.delta_pct.map_or("–".to_string(), pct);
        let test = match f.p_value {
            Some(p) => format!("{}, {}", f.test.as_str(), p_phrase(p)),
            None => f.test.as_str().to_string(),
        };
        let interval = f
            .prediction_interval
            .map(|(lo, hi)| format!("{} … {} {unit}", fmt_num(lo), fmt_num(hi)))
            .unwrap_or_else(|| "–".into());
        let name = describe_series(&f.metric, &f.stat, f.slo_profile.as_deref());
        if self.md() {
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
                "| `{cell}` | {name}{sides} | {} | {} | {change} | {interval} | {test} |",
                value(f.baseline_value),
                value(f.candidate_value)
            );
            return;
        }
        let _ = writeln!(
            out,
            "  [{cell}] {name}: {} → {} ({change}; {test})",
            value(f.baseline_value),
            value(f.candidate_value)
        );
        for p in &f.parts {
            let _ = writeln!(
                out,
                "    {} {} {}",
                match p.change {
                    PartChange::Improved => "better:",
                    PartChange::Worsened => "worse: ",
                },
                describe(&p.metric, &p.stat),
                pct(p.delta_pct)
            );
        }
    }

    fn undecided(self, a: &RunAnalysis) -> String {
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
        let mut out = String::new();
        if rows.is_empty() {
            return out;
        }
        self.heading(
            &mut out,
            "Not decided (more runs or more history would decide)",
        );
        for (cell, summary) in rows {
            let _ = writeln!(
                out,
                "{}[{}] {}",
                self.bullet(),
                self.code(cell),
                self.text(summary)
            );
        }
        self.end(&mut out);
        out
    }

    fn sparklines(self, extras: &ReportExtras, analysis: Option<&RunAnalysis>) -> String {
        let all: Vec<&str> = analysis
            .map(|a| a.groups.iter().map(|g| g.cell.as_str()).collect())
            .unwrap_or_default();
        let lines: Vec<String> = extras
            .sparklines
            .iter()
            .filter_map(|s| {
                let label = cell_label(&s.cell, &all);
                Some(format!("[{}] {}", self.code(&label), s.line()?))
            })
            .collect();
        let mut out = String::new();
        if lines.is_empty() {
            return out;
        }
        self.heading(&mut out, "Recent history of the flagged series");
        for l in lines {
            let _ = writeln!(out, "{}{l}", self.bullet());
        }
        self.end(&mut out);
        out
    }

    /// The links, and what a size limit left out (with the full report's address).
    fn links(self, extras: &ReportExtras, shed: &[Shed]) -> String {
        let mut out = String::new();
        if !shed.is_empty() {
            let names: Vec<&str> = shed.iter().map(|s| s.label()).collect();
            let full = extras
                .full_report
                .as_deref()
                .map(|u| {
                    if self.md() {
                        format!(" — [the full report]({u})")
                    } else {
                        format!(" (full report: {u})")
                    }
                })
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "Shortened to fit: left out {}{full}.",
                names.join(", ")
            );
            self.end(&mut out);
        }
        if extras.links.is_empty() {
            return out;
        }
        let list: Vec<String> = extras
            .links
            .iter()
            .map(|l| {
                if self.md() {
                    format!("[{}]({})", l.label, l.url)
                } else {
                    format!("{}: {}", l.label, l.url)
                }
            })
            .collect();
        if self.md() {
            let _ = writeln!(out, "{}", list.join(" · "));
        } else {
            for l in list {
                let _ = writeln!(out, "  {l}");
            }
        }
        out
    }

    fn bullet(self) -> &'static str {
        if self.md() {
            "- "
        } else {
            "  "
        }
    }

    fn cell_suffix(self, cell: Option<&str>) -> String {
        cell.filter(|c| !c.is_empty())
            .map(|c| format!(" [{}]", self.code(c)))
            .unwrap_or_default()
    }

    /// A sentence made safe inside a Markdown list item or table cell.
    fn text(self, s: &str) -> String {
        if self.md() {
            s.replace('|', "\\|").replace('\n', " ")
        } else {
            s.to_string()
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn icon(level: VerdictLevel) -> &'static str {
    match level {
        VerdictLevel::Pass => "✅",
        VerdictLevel::Warn => "⚠️",
        VerdictLevel::Incomplete => "🧩",
        VerdictLevel::Fail => "❌",
        VerdictLevel::Pending => "⏳",
    }
}

/// The level the verdict gave a grouped finding: the highest of its reasons (same kind, one
/// of its cells), else `warn` (a finding the settings do not fail on).
fn finding_level(v: &Verdict, g: &GroupedFinding) -> VerdictLevel {
    let code = ReasonCode::of_finding(g.kind);
    v.reasons
        .iter()
        .filter(|r| r.code == code)
        .filter(|r| {
            r.cell
                .as_deref()
                .is_none_or(|c| g.cells.iter().any(|x| x.cell == c))
        })
        .map(|r| r.level)
        .max()
        .unwrap_or(VerdictLevel::Warn)
        .max(VerdictLevel::Warn)
}

/// ❌ / ⚠️ (Markdown); `fail` / `warn` (terminal).
fn level_icon(format: Format, level: VerdictLevel) -> String {
    match format {
        Format::Markdown => icon(level).to_string(),
        Format::Terminal => format!("{:<4}", level.as_str()),
    }
}

/// Text safe inside an HTML element (a `<summary>`).
fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
