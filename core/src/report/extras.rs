//! What a report shows besides the typed model: links (the run page, the compare page, the
//! configurations, the full report) and the recent history of the series a finding flagged,
//! drawn as a unicode sparkline. The server fills them from storage, `benchtrail compare` from
//! the files it read; [`super::render`] words them.

use super::{RunAnalysis, Verdict};
use crate::metric::{lookup, Stat};
use crate::regression::{
    describe_series, fmt_num, CommitRuns, FindingKind, GroupInput, GroupReport, PartChange,
};
use serde::{Deserialize, Serialize};

/// Links and histories a report shows besides the verdict and the analysis. Every field is
/// optional: a report without extras is complete, only shorter.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReportExtras {
    /// The benchmark suite the report is about, shown in its heading; a PR comment holds one
    /// section per suite of a project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    /// Links, in the order shown (run page, compare page, configurations, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<Link>,
    /// The address of the whole report, named when a report was shortened to fit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_report: Option<String>,
    /// Recent history of flagged series, one per series.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sparklines: Vec<Sparkline>,
    /// Capacity at SLO against the baseline run, when the run's load sweeps pair with the
    /// baseline's ([`CapacitySection`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacitySection>,
}

/// The capacity summary of a report (the PR comment's capacity section): the validation
/// report of the run against its baseline run ([`crate::capacity::capacity_report`]), and
/// where the whole report is. Rendered by [`super::render`] from the same model the page
/// and `GET /api/v1/compare/report` render: the answer, then the change in requests per hour
/// and the slowest users' wait ([`crate::capacity::render::summary`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CapacitySection {
    /// The baseline run's id.
    pub base_run: uuid::Uuid,
    /// The validation report page of the two runs (`/compare/report?base=&head=`), absolute.
    pub url: String,
    /// The report.
    pub report: crate::capacity::CapacityReport,
}

/// `GET /api/v1/runs/{id}/report?format=json`: everything a report shows, typed: the CLI
/// renders it (within a PR comment's size limit) with [`super::render::render_report`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReportDocument {
    /// The run's project (slug): the key of its PR comment.
    pub project: String,
    /// The pull (merge) request the run was uploaded with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<u64>,
    /// The verdict.
    pub verdict: Verdict,
    /// The analysis, once the run has one.
    pub analysis: Option<RunAnalysis>,
    /// Links and sparklines.
    pub extras: ReportExtras,
}

/// A labelled address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Link {
    /// What it opens, e.g. `run`, `compare with baseline`.
    pub label: String,
    /// Absolute URL.
    pub url: String,
}

/// The recent history of one series: commit means, oldest first, the candidate's last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Sparkline {
    /// The series id.
    pub series_id: String,
    /// Its cell key.
    pub cell: String,
    /// Metric (vocabulary name, e.g. `ttft`).
    pub metric: String,
    /// Statistic (`p50`, `mean`, `value`, ...).
    #[schema(value_type = String)]
    pub stat: Stat,
    /// SLO profile of a goodput series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_profile: Option<String>,
    /// Commit means in the metric's unit, oldest first; the last is the candidate's.
    pub values: Vec<f64>,
}

/// At most this many points of a sparkline are drawn (the most recent ones).
pub const SPARKLINE_POINTS: usize = 30;

impl Sparkline {
    /// `median TTFT ▁▂▁▃▂▁▂█ 812 → 893 ms`: the series, its last [`SPARKLINE_POINTS`] commit
    /// means as bars scaled between their minimum and maximum, and the last baseline value
    /// against the candidate's. `None` with fewer than two values.
    pub fn line(&self) -> Option<String> {
        let values = &self.values[self.values.len().saturating_sub(SPARKLINE_POINTS)..];
        let (last, before) = values.split_last()?;
        let previous = before.last()?;
        let unit = lookup(&self.metric).map_or("", |m| m.unit.as_str());
        Some(format!(
            "{} {} {} → {} {unit}",
            describe_series(&self.metric, &self.stat, self.slo_profile.as_deref()),
            bars(values),
            fmt_num(*previous),
            fmt_num(*last)
        ))
    }
}

/// The series of `report` a report draws: per trade-off or regression finding (in the
/// engine's order), its headline series and, for a trade-off, the series that got worse.
pub fn flagged_series(report: &GroupReport) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in &report.findings {
        if !matches!(f.kind, FindingKind::Tradeoff | FindingKind::Regression) {
            continue;
        }
        // The headline: the finding's own series of its metric and statistic (its SLO
        // profile's, for goodput); then each worse side's series.
        let headline = report
            .series
            .iter()
            .find(|s| {
                f.series_ids.contains(&s.series_id) && s.metric == f.metric && s.stat == f.stat
            })
            .map(|s| s.series_id.clone());
        let worse = f
            .parts
            .iter()
            .filter(|p| p.change == PartChange::Worsened)
            .map(|p| p.series_id.clone());
        for id in headline.into_iter().chain(worse) {
            if !out.contains(&id) {
                out.push(id);
            }
        }
    }
    out
}

/// The sparklines of `input`'s flagged series ([`flagged_series`] of `report`): each
/// history commit's mean over its valid runs, then the candidate's. For a report made from
/// the engine's input (`benchtrail compare`); the server reads the same from storage.
pub fn sparklines_of(input: &GroupInput, report: &GroupReport) -> Vec<Sparkline> {
    let mean = |c: &CommitRuns| {
        let valid: Vec<f64> = c
            .runs
            .iter()
            .filter(|r| !r.excluded)
            .map(|r| r.value)
            .collect();
        (!valid.is_empty()).then(|| valid.iter().sum::<f64>() / valid.len() as f64)
    };
    flagged_series(report)
        .into_iter()
        .filter_map(|id| {
            let s = input.series.iter().find(|s| s.series_id == id)?;
            let values: Vec<f64> = s
                .history
                .iter()
                .chain(s.candidate.iter())
                .filter_map(mean)
                .collect();
            Some(Sparkline {
                series_id: id.clone(),
                cell: input.cell_key.clone(),
                metric: s.metric.clone(),
                stat: s.stat.clone(),
                slo_profile: s.slo_profile.clone(),
                values,
            })
        })
        .collect()
}

/// The eight block characters, lowest first.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// `values` as block characters scaled from their minimum (▁) to their maximum (█); all
/// equal (or non-finite spread) draws the middle bar throughout.
pub fn bars(values: &[f64]) -> String {
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let lo = finite.clone().fold(f64::INFINITY, f64::min);
    let hi = finite.fold(f64::NEG_INFINITY, f64::max);
    let span = hi - lo;
    values
        .iter()
        .map(|v| {
            if !v.is_finite() {
                ' '
            } else if span.is_finite() && span > 0.0 {
                let i = ((v - lo) / span * (BARS.len() - 1) as f64).round() as usize;
                BARS[i.min(BARS.len() - 1)]
            } else {
                BARS[3]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_from_min_to_max() {
        assert_eq!(bars(&[1.0, 2.0, 8.0, 4.5]), "▁▂█▅");
        assert_eq!(bars(&[3.0, 3.0]), "▄▄");
        assert_eq!(bars(&[1.0, f64::NAN, 2.0]), "▁ █");
    }

    #[test]
    fn a_line_names_the_series_and_the_last_two_values() {
        let s = Sparkline {
            series_id: "s".into(),
            cell: "max_concurrency=16".into(),
            metric: "ttft".into(),
            stat: Stat::Percentile("50".into()),
            slo_profile: None,
            values: vec![800.0, 810.0, 805.0, 893.0],
        };
        assert_eq!(s.line().unwrap(), "median TTFT ▁▂▁█ 805.0 → 893.0 ms");
        let one = Sparkline {
            values: vec![1.0],
            ..s
        };
        assert_eq!(one.line(), None);
    }
}
