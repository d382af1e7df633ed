//! Cost at SLO ([`super::cost`]) as text cells, for Markdown here and HTML on the compare
//! page. USD with two decimals from $1, four below (`$0.4630`); `≤` before a cost at an
//! "at least" capacity.

use super::cost::{CostBound, SideCostOutcome};
use super::render::{number, sweep_labels};
use super::report::CapacityReport;
use std::fmt::Write;

/// The headings of a cost table.
pub const COST_COLUMNS: [&str; 4] = [
    "Profile",
    "USD per 1,000 requests",
    "USD per million output tokens",
    "Accelerators per instance",
];

/// One sweep's costs as text.
#[derive(Debug, Clone, PartialEq)]
pub struct CostTable {
    /// The sweep's name, as the capacity tables name it.
    pub label: String,
    /// `At $2.5 per accelerator-hour; …`
    pub basis: String,
    /// One row per profile, as many cells as [`COST_COLUMNS`].
    pub rows: Vec<Vec<String>>,
}

/// The cost tables of `report`, one per sweep with a cost (none when no price was given).
pub fn cost_tables(report: &CapacityReport) -> Vec<CostTable> {
    let labels = sweep_labels(report.sweeps.iter().map(|s| &s.key));
    let mut out = Vec::new();
    for (s, label) in report.sweeps.iter().zip(labels) {
        let mut price = None;
        let rows: Vec<Vec<String>> = s
            .profiles
            .iter()
            .filter_map(|pc| {
                let c = pc.cost.as_ref()?;
                price = Some(c.accelerator_hour_usd);
                let per_1k = |o: &SideCostOutcome| match o {
                    SideCostOutcome::Priced { cost } => usd(cost.usd_per_1k_requests, cost.bound),
                    other => unpriced(other),
                };
                let per_m = |o: &SideCostOutcome| match o {
                    SideCostOutcome::Priced { cost } => cost
                        .usd_per_million_output_tokens
                        .map_or("no output throughput".to_string(), |v| usd(v, cost.bound)),
                    other => unpriced(other),
                };
                let acc = |o: &SideCostOutcome| match o {
                    SideCostOutcome::Priced { cost } => format!(
                        "{}{}",
                        cost.accelerators.accelerators,
                        if cost.accelerators.configured {
                            ""
                        } else {
                            " (unset sizes as 1)"
                        }
                    ),
                    _ => "—".into(),
                };
                Some(vec![
                    pc.profile.clone(),
                    format!("{} → {}", per_1k(&c.baseline), per_1k(&c.candidate)),
                    format!("{} → {}", per_m(&c.baseline), per_m(&c.candidate)),
                    format!("{} → {}", acc(&c.baseline), acc(&c.candidate)),
                ])
            })
            .collect();
        let Some(price) = price else { continue };
        out.push(CostTable {
            label,
            basis: format!(
                "At ${} per accelerator-hour, accelerators per instance = tensor_parallel_size × pipeline_parallel_size (an unset size counts as 1), at each side's SLO capacity; ≤: the capacity is at least the highest load measured, so the cost is at most this.",
                number(price)
            ),
            rows,
        });
    }
    out
}

/// The costs as Markdown (`### Cost at SLO` and a table per sweep); empty without a price.
pub fn cost_markdown(report: &CapacityReport) -> String {
    let tables = cost_tables(report);
    if tables.is_empty() {
        return String::new();
    }
    let mut md = String::from("### Cost at SLO\n\n");
    for t in tables {
        let _ = writeln!(md, "{}: {}\n", t.label, t.basis);
        let _ = writeln!(md, "| {} |", COST_COLUMNS.join(" | "));
        let _ = writeln!(md, "|{}", "---|".repeat(COST_COLUMNS.len()));
        for row in &t.rows {
            let _ = writeln!(md, "| {} |", row.join(" | "));
        }
        md.push('\n');
    }
    md
}

/// `$0.4630`, `$12.35`, `≤ $0.0694`.
pub fn usd(v: f64, bound: CostBound) -> String {
    let amount = if v >= 1.0 {
        format!("${v:.2}")
    } else {
        format!("${v:.4}")
    };
    match bound {
        CostBound::Estimate => amount,
        CostBound::AtMost => format!("≤ {amount}"),
    }
}

fn unpriced(o: &SideCostOutcome) -> String {
    match o {
        SideCostOutcome::BelowLowest => "below the lowest load".into(),
        _ => "—".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_read_as_written() {
        assert_eq!(usd(5000.0 / 10_800.0, CostBound::Estimate), "$0.4630");
        assert_eq!(usd(12.346, CostBound::Estimate), "$12.35");
        assert_eq!(usd(2000.0 / 28_800.0, CostBound::AtMost), "≤ $0.0694");
    }
}
