//! A [`CapacityReport`] in words: the summary paragraph answering "with our traffic and our
//! SLOs, how many more requests per hour, and how long do the slowest users wait?"
//! ([`summary`]), and the whole report as Markdown ([`markdown`]) for the API, the PR comment
//! and `benchtrail compare`. Pure; every sentence is written here from the typed values.
//!
//! Numbers: requests per hour whole, with thousands separators (`15,731`); loads with at most
//! two decimals (`4.6`); latencies in ms, whole from 10 ms (`1,523 ms`), one decimal below.

use super::change::{ChangeBound, Side};
use super::crossover::sentence;
use super::estimate::Capacity;
use super::report::{
    CapacityReport, ChangeOutcome, FailedRequests, LoadCrossover, ProfileComparison,
    SweepComparison, TypicalBasis, WaitOutcome,
};
use super::shape::SweepShape;
use super::sweep::{SweepKey, SweepRefusal};
use super::wait::{SlowestWait, WaitBasis, WaitEstimate, WaitRefusal};
use crate::slo::SloProfile;
use std::fmt::Write;

/// The answer in one paragraph of plain words.
pub fn summary(report: &CapacityReport) -> String {
    if report.sweeps.is_empty() {
        return "No load sweep was measured on both the baseline and the candidate: there is no capacity to compare.".to_string();
    }
    let labels = sweep_labels(report.sweeps.iter().map(|s| &s.key));
    let mut out: Vec<String> = Vec::new();
    for (s, label) in report.sweeps.iter().zip(&labels) {
        let prefix = if report.sweeps.len() > 1 {
            format!("For {label}: ")
        } else {
            String::new()
        };
        for pc in &s.profiles {
            let profile = report.profiles.iter().find(|p| p.name == pc.profile);
            out.push(format!(
                "{prefix}{}",
                profile_sentence(s, pc, profile, report.target)
            ));
            out.push(wait_sentence(s.baseline_shape, pc));
        }
        for x in &s.crossovers {
            out.push(format!(
                "At {} the candidate {}.",
                load_words(s.baseline_shape, x.load),
                sentence(&x.crossover)
            ));
        }
        out.push(failed_sentence(s.baseline_failed, s.candidate_failed));
    }
    let (one_sided, refused) = (report.unmatched.len(), report.refused.len());
    if one_sided + refused > 0 {
        out.push(format!(
            "Not compared: {one_sided} {} measured on one side only and {refused} refused {}.",
            plural(one_sided, "sweep", "sweeps"),
            plural(refused, "result group", "result groups"),
        ));
    }
    out.join(" ")
}

/// One sweep of a report as text cells, for a renderer to lay out (Markdown here, HTML on the
/// compare page): every cell is written from the typed values by this module.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepTable {
    /// The sweep's name (`max_concurrency sweep of …`, distinguishing its key).
    pub label: String,
    /// `concurrency` or `request-rate`.
    pub shape: &'static str,
    /// `Loads: baseline 1, 4, 16 concurrent requests; candidate …. Target: 95 % of requests
    /// meet every threshold.`
    pub loads: String,
    /// The column headings, [`PROFILE_COLUMNS`] with the capacity's unit.
    pub columns: Vec<String>,
    /// One row per profile, as many cells as `columns`.
    pub rows: Vec<Vec<String>>,
    /// Why a profile's change or wait is not given, one sentence each: (profile, sentence).
    pub notes: Vec<(String, String)>,
    /// The finish-time trade-offs, one list item each.
    pub trade_offs: Vec<String>,
    /// `Failed requests: baseline 0 of 1,500, candidate 2 of 1,500.`
    pub failed: String,
}

/// The headings of a sweep table; the capacity's names its unit.
pub const PROFILE_COLUMNS: [&str; 10] = [
    "Profile",
    "Thresholds",
    "Capacity",
    "Requests/hour",
    "Change/hour",
    "Typical load",
    "p95 TTFT",
    "p99 TTFT",
    "p95 E2E",
    "p99 E2E",
];

/// The sweeps of `report` as tables, in the report's order.
pub fn sweep_tables(report: &CapacityReport) -> Vec<SweepTable> {
    let labels = sweep_labels(report.sweeps.iter().map(|s| &s.key));
    report
        .sweeps
        .iter()
        .zip(labels)
        .map(|(s, label)| sweep_table(report, s, label))
        .collect()
}

fn sweep_table(report: &CapacityReport, s: &SweepComparison, label: String) -> SweepTable {
    let shape = s.baseline_shape;
    let loads = format!(
        "Loads: baseline {} {}; candidate {} {}. Target: {} of requests meet every threshold.",
        list(&s.baseline_loads),
        unit_words(shape),
        list(&s.candidate_loads),
        unit_words(s.candidate_shape),
        percent(report.target)
    );
    let columns = PROFILE_COLUMNS
        .iter()
        .map(|c| match *c {
            "Capacity" => format!("Capacity ({})", unit_words(shape)),
            other => other.to_string(),
        })
        .collect();
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for pc in &s.profiles {
        let thresholds = report
            .profiles
            .iter()
            .find(|p| p.name == pc.profile)
            .map(thresholds)
            .unwrap_or_default();
        // Across shapes each side's capacity is in its own unit: named then.
        let capacity = if shape == s.candidate_shape {
            format!(
                "{} → {}",
                capacity_cell(pc.baseline.capacity),
                capacity_cell(pc.candidate.capacity)
            )
        } else {
            format!(
                "{} {} → {} {}",
                capacity_cell(pc.baseline.capacity),
                unit_words(shape),
                capacity_cell(pc.candidate.capacity),
                unit_words(s.candidate_shape)
            )
        };
        let (rph, change) = match &pc.change {
            ChangeOutcome::Compared { change } => (
                format!(
                    "{} → {}",
                    count(change.baseline_requests_per_hour),
                    count(change.candidate_requests_per_hour)
                ),
                change_cell(
                    change.change_requests_per_hour,
                    change.change_pct,
                    change.bound,
                ),
            ),
            ChangeOutcome::Refused { explanation, .. } => {
                notes.push((pc.profile.clone(), explanation.clone()));
                ("—".to_string(), "not compared".to_string())
            }
        };
        let typical = pc
            .typical_load
            .map(|t| load(t.load))
            .unwrap_or_else(|| "—".to_string());
        let waits: [String; 4] = match &pc.wait {
            WaitOutcome::Compared { wait } => [
                |w: &SlowestWait| w.ttft_p95.clone(),
                |w: &SlowestWait| w.ttft_p99.clone(),
                |w: &SlowestWait| w.e2el_p95.clone(),
                |w: &SlowestWait| w.e2el_p99.clone(),
            ]
            .map(|pick| {
                format!(
                    "{} → {}",
                    estimate(pick(&wait.baseline).as_ref()),
                    estimate(pick(&wait.candidate).as_ref())
                )
            }),
            _ => {
                notes.push((pc.profile.clone(), wait_sentence(shape, pc)));
                ["—".to_string(), "—".into(), "—".into(), "—".into()]
            }
        };
        let [w0, w1, w2, w3] = waits;
        rows.push(vec![
            pc.profile.clone(),
            thresholds,
            capacity,
            rph,
            change,
            typical,
            w0,
            w1,
            w2,
            w3,
        ]);
    }
    SweepTable {
        label,
        shape: shape_words(shape),
        loads,
        columns,
        rows,
        notes,
        trade_offs: s.crossovers.iter().map(|x| trade_off(shape, x)).collect(),
        failed: format!(
            "Failed requests: baseline {} of {}, candidate {} of {}.",
            count(s.baseline_failed.failed as f64),
            count(s.baseline_failed.attempted as f64),
            count(s.candidate_failed.failed as f64),
            count(s.candidate_failed.attempted as f64)
        ),
    }
}

/// What the report did not compare, one list item each: sweeps on one side only, then the
/// refused result groups.
pub fn not_compared(report: &CapacityReport) -> Vec<String> {
    let mut out = Vec::new();
    let unmatched = sweep_labels(report.unmatched.iter().map(|u| &u.key));
    for (u, label) in report.unmatched.iter().zip(&unmatched) {
        out.push(format!(
            "{} only: {label} ({} sweep, loads {} {})",
            side_words(u.side),
            shape_words(u.shape),
            list(&u.loads),
            unit_words(u.shape)
        ));
    }
    let refused = sweep_labels(report.refused.iter().map(|r| &r.refused.key));
    for (r, label) in report.refused.iter().zip(&refused) {
        let what = match &r.refused.reason {
            SweepRefusal::Load { result, .. } => format!("result {result}"),
            SweepRefusal::MixedShapes { .. } => "mixed load shapes".to_string(),
        };
        out.push(format!(
            "refused ({}, {what}): {label}: {}",
            side_words(r.side),
            r.explanation
        ));
    }
    out
}

/// The report as Markdown: the answer ([`super::render_warnings::answer_sentence`]), the
/// summary, then per sweep a table of every profile (capacity baseline → candidate, requests
/// per hour, the change per hour, the slowest users' wait at the typical load), the
/// trade-offs, the failed requests; then the cost at SLO, the quality results, the warnings
/// and what was not compared ([`sweep_tables`], [`super::render_cost`],
/// [`super::render_quality`], [`super::render_warnings`], [`not_compared`]).
pub fn markdown(report: &CapacityReport) -> String {
    let mut md = String::new();
    md.push_str("## Capacity at SLO\n\n");
    let _ = writeln!(
        md,
        "**{}**\n",
        super::render_warnings::answer_sentence(&report.answer)
    );
    md.push_str(&summary(report));
    md.push_str("\n\n");
    for t in sweep_tables(report) {
        let _ = writeln!(md, "### {} ({} sweep)\n", t.label, t.shape);
        let _ = writeln!(md, "{}\n", t.loads);
        let _ = writeln!(md, "| {} |", t.columns.join(" | "));
        let _ = writeln!(md, "|{}", "---|".repeat(t.columns.len()));
        for row in &t.rows {
            let _ = writeln!(md, "| {} |", row.join(" | "));
        }
        md.push('\n');
        for (profile, note) in &t.notes {
            let _ = writeln!(md, "- `{profile}`: {note}");
        }
        if !t.notes.is_empty() {
            md.push('\n');
        }
        if !t.trade_offs.is_empty() {
            md.push_str("Trade-offs (from the medians):\n\n");
            for x in &t.trade_offs {
                let _ = writeln!(md, "- {x}");
            }
            md.push('\n');
        }
        let _ = writeln!(md, "{}\n", t.failed);
    }
    md.push_str(&super::render_cost::cost_markdown(report));
    md.push_str(&super::render_quality::quality_markdown(&report.quality));
    md.push_str(&super::render_warnings::warnings_markdown(report));
    let missing = not_compared(report);
    if !missing.is_empty() {
        md.push_str("### Not compared\n\n");
        for m in &missing {
            let _ = writeln!(md, "- {m}");
        }
        md.push('\n');
    }
    md
}

/// One trade-off as a list item: `at 4 concurrent requests: starts 48 ms later, finishes
/// sooner for answers longer than 31 tokens`.
pub fn trade_off(shape: SweepShape, x: &LoadCrossover) -> String {
    format!(
        "at {}: {}",
        load_words(shape, x.load),
        sentence(&x.crossover)
    )
}

/// The capacity sentence of one profile.
fn profile_sentence(
    s: &SweepComparison,
    pc: &ProfileComparison,
    profile: Option<&SloProfile>,
    target: f64,
) -> String {
    let under = format!(
        "Under `{}` ({}, met by {} of requests)",
        pc.profile,
        profile.map(thresholds).unwrap_or_default(),
        percent(target)
    );
    let shape = s.baseline_shape;
    match &pc.change {
        ChangeOutcome::Refused { explanation, .. } => {
            // The explanation is a sentence of its own elsewhere; after the colon it goes on
            // this one, so its first letter is lowercase ("one side has no SLO attainment").
            let mut chars = explanation.chars();
            let explanation: String = chars
                .next()
                .map(|c| c.to_lowercase().chain(chars).collect())
                .unwrap_or_default();
            format!("{under}, capacity is not compared: {explanation}")
        }
        ChangeOutcome::Compared { change } => {
            let v = change.change_requests_per_hour;
            let how = match (change.bound, v.round() >= 0.0) {
                (ChangeBound::Unknown, _) => {
                    return format!(
                        "{under}, both capacities are bounds in the same direction ({} and {}), so the change in requests per hour is unknown.",
                        capacity_words(shape, change.baseline),
                        capacity_words(shape, change.candidate)
                    );
                }
                _ if v.round() == 0.0 => "as many requests per hour as".to_string(),
                (ChangeBound::Estimate, true) => {
                    format!("{} more requests per hour than", count(v))
                }
                (ChangeBound::Estimate, false) => {
                    format!("{} fewer requests per hour than", count(-v))
                }
                (ChangeBound::AtLeast, true) => {
                    format!("at least {} more requests per hour than", count(v))
                }
                (ChangeBound::AtLeast, false) => {
                    format!("at most {} fewer requests per hour than", count(-v))
                }
                (ChangeBound::AtMost, true) => {
                    format!("at most {} more requests per hour than", count(v))
                }
                (ChangeBound::AtMost, false) => {
                    format!("at least {} fewer requests per hour than", count(-v))
                }
            };
            format!(
                "{under}, the candidate completes {how} the baseline at SLO capacity ({} instead of {} per hour, at {} instead of {} {}).",
                count(change.candidate_requests_per_hour),
                count(change.baseline_requests_per_hour),
                capacity_number(change.candidate),
                capacity_number(change.baseline),
                unit_words(shape),
            )
        }
    }
}

/// The slowest users' wait of one profile, or why it is not given.
fn wait_sentence(shape: SweepShape, pc: &ProfileComparison) -> String {
    match &pc.wait {
        WaitOutcome::NoTypicalLoad => {
            "The slowest users' wait is not given: no load was measured on both sides.".into()
        }
        WaitOutcome::Refused { refusal } => match refusal {
            WaitRefusal::OutsideMeasured { lowest, highest } => format!(
                "The slowest users' wait is not given: the typical load, {}, lies outside the loads measured ({} to {}).",
                load_words(shape, pc.typical_load.map_or(f64::NAN, |t| t.load)),
                load(*lowest),
                load(*highest)
            ),
            WaitRefusal::Empty => {
                "The slowest users' wait is not given: a sweep has no load.".into()
            }
            WaitRefusal::DifferentShapes { .. } => "The slowest users' wait is not given: the two sides were swept along different load shapes.".into(),
        },
        WaitOutcome::Compared { wait } => {
            let Some(t) = pc.typical_load else {
                return String::new();
            };
            let why = match t.basis {
                TypicalBasis::Given => String::new(),
                TypicalBasis::BaselineCapacity => {
                    ", the heaviest load measured on both sides within the baseline's capacity"
                        .into()
                }
                TypicalBasis::LowestMeasured => ", the lowest load measured on both sides".into(),
            };
            let how = match wait.baseline.basis {
                WaitBasis::Measured { .. } => String::new(),
                WaitBasis::Interpolated { between } => format!(
                    " (interpolated between {} and {})",
                    load(between[0]),
                    load(between[1])
                ),
            };
            format!(
                "At the typical load of {}{why}{how}, the slowest 1 % of users wait {} for their first token (baseline {}) and {} for the whole answer (baseline {}).",
                load_words(shape, t.load),
                estimate(wait.candidate.ttft_p99.as_ref()),
                estimate(wait.baseline.ttft_p99.as_ref()),
                estimate(wait.candidate.e2el_p99.as_ref()),
                estimate(wait.baseline.e2el_p99.as_ref()),
            )
        }
    }
}

fn failed_sentence(b: FailedRequests, c: FailedRequests) -> String {
    if b.failed == 0 && c.failed == 0 {
        return format!(
            "No request failed ({} baseline and {} candidate requests).",
            count(b.attempted as f64),
            count(c.attempted as f64)
        );
    }
    format!(
        "{} of {} baseline and {} of {} candidate requests failed or timed out; they count against attainment.",
        count(b.failed as f64),
        count(b.attempted as f64),
        count(c.failed as f64),
        count(c.attempted as f64)
    )
}

/// A label per sweep key: its cell key (`every workload` when empty); keys sharing a cell get
/// the series-key fields that tell them apart.
pub(super) fn sweep_labels<'a>(keys: impl Iterator<Item = &'a SweepKey>) -> Vec<String> {
    let keys: Vec<&SweepKey> = keys.collect();
    keys.iter()
        .map(|k| {
            let cell = if k.cell.is_empty() {
                "every workload".to_string()
            } else {
                format!("`{}`", k.cell)
            };
            let same_cell: Vec<&&SweepKey> = keys.iter().filter(|o| o.cell == k.cell).collect();
            if same_cell.len() < 2 {
                return cell;
            }
            let differing: Vec<String> = k
                .series_key
                .iter()
                .filter(|(f, v)| same_cell.iter().any(|o| o.series_key.get(*f) != Some(*v)))
                .map(|(f, v)| match v.as_str() {
                    Some(s) => format!("{f}={s}"),
                    None => format!("{f}={v}"),
                })
                .collect();
            if differing.is_empty() {
                cell
            } else {
                format!("{cell} ({})", differing.join(", "))
            }
        })
        .collect()
}

fn thresholds(p: &SloProfile) -> String {
    p.thresholds()
        .iter()
        .map(|(m, t)| format!("{} ≤ {} ms", metric_label(m), number(*t)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn metric_label(m: &str) -> &'static str {
    match m {
        "ttft" => "TTFT",
        "tpot" => "TPOT",
        _ => "E2E",
    }
}

fn capacity_cell(c: Option<Capacity>) -> String {
    match c {
        None => "—".into(),
        Some(Capacity::Within { load: l, .. }) => load(l),
        Some(Capacity::AtLeast { load: l, .. }) => format!("≥ {}", load(l)),
        Some(Capacity::BelowLowest { load: l, .. }) => format!("< {}", load(l)),
    }
}

/// `4.6`, `at least 16`, `below 1`.
fn capacity_number(c: Capacity) -> String {
    match c {
        Capacity::Within { load: l, .. } => load(l),
        Capacity::AtLeast { load: l, .. } => format!("at least {}", load(l)),
        Capacity::BelowLowest { load: l, .. } => format!("below {}", load(l)),
    }
}

fn capacity_words(shape: SweepShape, c: Capacity) -> String {
    match c {
        Capacity::Within { load: l, .. } => load_words(shape, l),
        Capacity::AtLeast { load: l, .. } => format!("at least {}", load_words(shape, l)),
        Capacity::BelowLowest { load: l, .. } => format!("below {}", load_words(shape, l)),
    }
}

fn change_cell(v: f64, pct: Option<f64>, bound: ChangeBound) -> String {
    let value = format!("{}{}", if v.round() > 0.0 { "+" } else { "" }, count(v));
    let value = match pct {
        Some(p) => format!("{value} ({}{p:.1} %)", if p > 0.0 { "+" } else { "" }),
        None => value,
    };
    match bound {
        ChangeBound::Estimate => value,
        ChangeBound::AtLeast => format!("≥ {value}"),
        ChangeBound::AtMost => format!("≤ {value}"),
        ChangeBound::Unknown => "unknown".into(),
    }
}

fn estimate(e: Option<&WaitEstimate>) -> String {
    match e {
        Some(e) => ms(e.value_ms),
        None => "not measured".into(),
    }
}

fn shape_words(shape: SweepShape) -> &'static str {
    match shape {
        SweepShape::Concurrency => "concurrency",
        SweepShape::RequestRate => "request-rate",
    }
}

pub(super) fn unit_words(shape: SweepShape) -> &'static str {
    match shape {
        SweepShape::Concurrency => "concurrent requests",
        SweepShape::RequestRate => "req/s",
    }
}

pub(super) fn side_words(side: Side) -> &'static str {
    match side {
        Side::Baseline => "baseline",
        Side::Candidate => "candidate",
    }
}

/// `4.6 concurrent requests`, `1 concurrent request`, `2.5 req/s`.
pub(super) fn load_words(shape: SweepShape, l: f64) -> String {
    match shape {
        SweepShape::Concurrency if load(l) == "1" => "1 concurrent request".into(),
        SweepShape::Concurrency => format!("{} concurrent requests", load(l)),
        SweepShape::RequestRate => format!("{} req/s", load(l)),
    }
}

pub(super) fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

fn list(loads: &[f64]) -> String {
    loads
        .iter()
        .map(|l| load(*l))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A load: at most two decimals, trailing zeros dropped (`4.6`, `10`).
fn load(v: f64) -> String {
    number(v)
}

pub(super) fn number(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// A share as a percentage: `95 %`, `97.5 %`.
pub(super) fn percent(share: f64) -> String {
    format!("{} %", number(share * 100.0))
}

/// A latency: whole ms with separators from 10 ms, one decimal below.
pub(super) fn ms(v: f64) -> String {
    if v.abs() >= 10.0 {
        format!("{} ms", count(v))
    } else {
        format!("{v:.1} ms")
    }
}

/// A whole, non-negative count with thousands separators: `15,731`.
pub(super) fn count(v: f64) -> String {
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if v.round() < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_written() {
        assert_eq!(count(15731.4), "15,731");
        assert_eq!(count(-1234567.0), "-1,234,567");
        assert_eq!(count(999.0), "999");
        assert_eq!(load(4.6000000000000005), "4.6");
        assert_eq!(load(10.000000000001), "10");
        assert_eq!(ms(1523.2), "1,523 ms");
        assert_eq!(ms(9.44), "9.4 ms");
        assert_eq!(percent(0.95), "95 %");
        assert_eq!(
            change_cell(15731.0, Some(146.37), ChangeBound::Estimate),
            "+15,731 (+146.4 %)"
        );
        assert_eq!(
            change_cell(-200.0, Some(-2.0), ChangeBound::AtMost),
            "≤ -200 (-2.0 %)"
        );
        assert_eq!(
            load_words(SweepShape::Concurrency, 1.0),
            "1 concurrent request"
        );
    }
}
