//! The validation report's sections around capacity, as the compare page (`/compare/report`)
//! and `GET /api/v1/compare/report?format=html` show them: the overall answer, cost at SLO,
//! the quality results and the warnings. Every text is written by core's renderers
//! ([`benchtrail_core::capacity::render_warnings`], [`render_cost`], [`render_quality`]) from
//! the typed report; nothing here decides anything.

use askama::Template;
use benchtrail_core::capacity::render_cost::{self, CostTable, COST_COLUMNS};
use benchtrail_core::capacity::render_quality::{self, QualityTable, QUALITY_COLUMNS};
use benchtrail_core::capacity::render_warnings::{self, SMALL_SAMPLE_RULE};
use benchtrail_core::capacity::CapacityReport;

/// The answer, cost, quality and warnings of one report.
#[derive(Debug, Clone)]
pub struct ValidationView {
    /// `pass`, `warn`, `incomplete` or `fail`.
    pub level: &'static str,
    /// The answer in one sentence ([`render_warnings::answer_sentence`]).
    pub answer: String,
    /// One cost table per sweep, when the project sets a price.
    pub costs: Vec<CostTable>,
    /// [`COST_COLUMNS`].
    pub cost_columns: [&'static str; 4],
    /// The quality section, when either side has quality results or quantization changed.
    pub quality: Option<QualityTable>,
    /// [`QUALITY_COLUMNS`].
    pub quality_columns: [&'static str; 5],
    /// (code, sentence) per warning, in the report's order.
    pub warnings: Vec<(String, String)>,
    /// The small-sample rule, when a small sample is warned about.
    pub small_sample_rule: Option<&'static str>,
}

impl ValidationView {
    /// The view of `report`; `None` when it measured no sweep and has neither quality results
    /// nor a quantization change (single loads on both sides: the compare table says it all).
    pub fn new(report: &CapacityReport) -> Option<ValidationView> {
        if !report.has_sweep() && report.quality.is_empty() {
            return None;
        }
        let warnings = report
            .warnings
            .iter()
            .map(|w| {
                let code = serde_json::to_value(w.code())
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                (code, render_warnings::warning_sentence(report, w))
            })
            .collect();
        Some(ValidationView {
            level: report.answer.level.as_str(),
            answer: render_warnings::answer_sentence(&report.answer),
            costs: render_cost::cost_tables(report),
            cost_columns: COST_COLUMNS,
            quality: render_quality::quality_table(&report.quality),
            quality_columns: QUALITY_COLUMNS,
            warnings,
            small_sample_rule: render_warnings::has_small_sample(report)
                .then_some(SMALL_SAMPLE_RULE),
        })
    }
}

/// `GET /api/v1/compare/report?format=html`: the report as a standalone HTML document (the
/// page's capacity and validation sections, no site navigation).
#[derive(Template)]
#[template(path = "compare_report.html")]
pub struct ReportDocument {
    /// `Validation report: project, baseline → candidate`.
    pub title: String,
    /// The capacity section, when a sweep was measured on either side.
    pub capacity: Option<super::compare_view::CapacityView>,
    /// The answer, cost, quality and warnings.
    pub validation: Option<ValidationView>,
    /// The answer sentence (given even when there is no section to show).
    pub answer: String,
    /// The summary paragraph.
    pub summary: String,
}
