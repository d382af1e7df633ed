//! A run's verdict (pass / warn / incomplete / fail, with reasons) from its stored analysis and
//! the current alerts of its commit.
//!
//! # Levels, lowest first
//! * `pass`: every cell of the baseline commit is there and nothing was found or left untested.
//! * `warn`: look at it (a small regression under `fail_severity: fail`, insufficient data, a
//!   new cell, a series not measured, a provisional finding while repeats are pending, ...).
//! * `incomplete`: a cell of the baseline commit is missing from this commit
//!   (`detection.incomplete_fails`, default true; false makes it a `warn`). Fails CI like
//!   `fail`: the values that are there were judged, but not everything was.
//! * `fail`: a regression or trade-off that fails by the detection settings, or an invalid run.
//!
//! While the commit has fewer runs than expected (`detection.repeats`, or the
//! `run.repeats_expected` its uploads announced), the verdict is provisional: a
//! `pending_repeats` reason, every `fail` or `incomplete` reason lowered to `warn` (and no
//! alert opened), so the verdict is at most `warn` until the last repeat is in.

use super::coverage::{CellGap, Coverage, NotMeasured, Repeats};
use crate::storage::{Alert, AlertKind, StoredRun};
use benchtrail_core::settings::DetectionSettings;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use uuid::Uuid;

/// One reason of a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Reason {
    /// `fail`, `incomplete` or `warn`.
    pub level: String,
    /// `regression`, `tradeoff`, `missing`, `change_point`, `insufficient_data`,
    /// `effect_only`, `invalid_run`, `pending_confirmation`, `continuing` (a change an
    /// earlier commit's standing alert already holds), `not_analyzed`, `missing_cell` (a cell
    /// of the baseline commit this commit lacks), `new_cell` (new, no baseline yet),
    /// `not_measured` (series of a present cell absent this time), `pending_repeats` (fewer
    /// runs of the commit than expected: provisional), `no_baseline` (no earlier commit has
    /// the series; names the nearest one), `workload_mismatch`, `prompt_counted_as_output`,
    /// `output_len_mismatch` (the metrics that length confounds get no verdict).
    pub code: String,
    /// One sentence.
    pub message: String,
    /// The alert behind it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alert_id: Option<Uuid>,
    /// The result's cell, where it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell: Option<String>,
}

/// `GET /api/v1/runs/{id}/verdict`.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Verdict {
    /// `pass`, `warn`, `incomplete` or `fail` (lowest first; `incomplete` and `fail` fail CI).
    pub verdict: String,
    /// True while the commit has fewer runs than expected (`repeats`): the verdict is at most
    /// `warn` and becomes final with the last repeat's upload.
    pub provisional: bool,
    /// Why; empty for `pass`.
    pub reasons: Vec<Reason>,
    /// Cells of the baseline commit this commit lacks (they make it `incomplete`).
    pub missing_cells: Vec<CellGap>,
    /// Cells of this run with no baseline yet.
    pub new_cells: Vec<CellGap>,
    /// Series of this run's cells that have a history but were not measured this time.
    pub not_measured: Vec<NotMeasured>,
    /// The commit's runs against those expected; absent for a run analyzed before repeats
    /// were counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
    /// The run.
    pub run_id: Uuid,
    /// Its commit.
    pub commit: String,
    /// Project settings version of the analysis.
    pub settings_version: Option<i64>,
    /// Number of series per state (`no_change`, `regression`, `insufficient_data`, ...).
    pub series_states: BTreeMap<String, usize>,
}

/// The verdict of a run from its stored analysis document and the current alerts of its
/// commit (so a dismissal changes it). `None` analysis: the run was never analyzed.
pub fn verdict_of(
    run: &StoredRun,
    doc: &Value,
    alerts: &[Alert],
    det: &DetectionSettings,
    settings_version: Option<i64>,
) -> Verdict {
    let mut reasons = Vec::new();
    let cov: Coverage = serde_json::from_value(doc["coverage"].clone()).unwrap_or_default();
    let groups = doc["groups"].as_array().cloned().unwrap_or_default();
    let mut mine: HashSet<String> = HashSet::new();
    let mut states: BTreeMap<String, usize> = BTreeMap::new();
    for g in &groups {
        for s in g["report"]["series"].as_array().into_iter().flatten() {
            mine.insert(s["series_id"].as_str().unwrap_or_default().to_string());
            *states
                .entry(s["state"].as_str().unwrap_or("unknown").to_string())
                .or_default() += 1;
        }
    }
    for a in alerts {
        if !a.status.is_active() || !a.series_ids.iter().any(|s| mine.contains(s)) {
            continue;
        }
        let severe_enough = det.fail_severity == "warn" || a.severity.as_deref() == Some("fail");
        let fails = match a.kind {
            AlertKind::Tradeoff => det.tradeoff_fails && severe_enough,
            AlertKind::Regression => det.fail_metrics.contains(&a.metric) && severe_enough,
            _ => false,
        };
        reasons.push(Reason {
            level: if fails { "fail" } else { "warn" }.into(),
            code: a.kind.as_str().into(),
            message: a.summary.clone(),
            alert_id: Some(a.id),
            cell: Some(a.cell.clone()),
        });
    }
    for g in &groups {
        let cell = g["cell"].as_str().map(str::to_string);
        for w in g["invalid_runs"].as_array().into_iter().flatten() {
            // A run that failed by its own health (too many failed or too few completed
            // requests) fails CI when the project says so; one a person excluded only warns.
            let by_person = w["excluded_by_person"].as_bool().unwrap_or(false);
            let fails = det.invalid_run_fails && !by_person;
            reasons.push(Reason {
                level: if fails { "fail" } else { "warn" }.into(),
                code: "invalid_run".into(),
                message: w["message"].as_str().unwrap_or_default().to_string(),
                alert_id: None,
                cell: cell.clone(),
            });
        }
        for c in g["continuing"].as_array().into_iter().flatten() {
            let commit = c["commit"].as_str().unwrap_or_default();
            reasons.push(Reason {
                level: "warn".into(),
                code: "continuing".into(),
                message: format!(
                    "still there, from commit {} ({} alert): {}",
                    &commit[..commit.len().min(12)],
                    c["status"].as_str().unwrap_or_default(),
                    c["summary"].as_str().unwrap_or_default()
                ),
                alert_id: c["alert_id"].as_str().and_then(|id| id.parse().ok()),
                cell: cell.clone(),
            });
        }
        let pending = g["report"]["series"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["state"] == "pending_confirmation")
            .count();
        if pending > 0 {
            reasons.push(Reason {
                level: "warn".into(),
                code: "pending_confirmation".into(),
                message: format!(
                    "{pending} series changed significantly and wait for the next {} commit(s) to confirm it before an alert opens",
                    det.engine.confirm_commits
                ),
                alert_id: None,
                cell: cell.clone(),
            });
        }
        reasons.extend(workload_reasons(g, cell.as_ref()));
        let insufficient: Vec<&Value> = g["report"]["series"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["state"] == "insufficient_data")
            .collect();
        let is_new = cov.new_cells.iter().any(|n| {
            Some(n.cell.as_str()) == g["cell"].as_str() && n.series_key == g["series_key"]
        });
        if let Some(first) = insufficient.first().filter(|_| !is_new) {
            reasons.push(Reason {
                level: "warn".into(),
                code: "insufficient_data".into(),
                message: format!(
                    "insufficient data: {} series not tested ({})",
                    insufficient.len(),
                    first["reason"].as_str().unwrap_or("too little history")
                ),
                alert_id: None,
                cell: cell.clone(),
            });
        }
        for f in g["effect_only"].as_array().into_iter().flatten() {
            if f["kind"] == "improvement" {
                continue;
            }
            reasons.push(Reason {
                level: "warn".into(),
                code: "effect_only".into(),
                message: format!(
                    "effect only, not tested (insufficient data): {}",
                    f["summary"].as_str().unwrap_or_default()
                ),
                alert_id: None,
                cell: cell.clone(),
            });
        }
    }
    if doc.is_null() {
        reasons.push(Reason {
            level: "warn".into(),
            code: "not_analyzed".into(),
            message: "this run has not been analyzed".into(),
            alert_id: None,
            cell: None,
        });
    }
    coverage_reasons(&cov, det, &mut reasons);
    let provisional = cov.repeats.as_ref().is_some_and(Repeats::pending);
    let verdict = level_of(&reasons);
    Verdict {
        verdict: verdict.into(),
        provisional,
        reasons,
        missing_cells: cov.missing_cells,
        new_cells: cov.new_cells,
        not_measured: cov.not_measured,
        repeats: cov.repeats,
        run_id: run.summary.id,
        commit: run.summary.commit_sha.clone(),
        settings_version,
        series_states: states,
    }
}

/// The verdict of `reasons`: the highest level among them (`pass` when there is none).
fn level_of(reasons: &[Reason]) -> &'static str {
    ["fail", "incomplete", "warn"]
        .into_iter()
        .find(|l| reasons.iter().any(|r| r.level == *l))
        .unwrap_or(if reasons.is_empty() { "pass" } else { "warn" })
}

/// The reasons of what the commit covers: missing cells (`incomplete`), new cells and
/// series not measured (`warn`), and, while repeats are pending, the held findings and
/// `pending_repeats`, with every `fail` or `incomplete` reason lowered to `warn`.
fn coverage_reasons(cov: &Coverage, det: &DetectionSettings, reasons: &mut Vec<Reason>) {
    let reason = |level: &str, code: &str, message: String, cell: &str| Reason {
        level: level.into(),
        code: code.into(),
        message,
        alert_id: None,
        cell: Some(cell.to_string()),
    };
    let missing_level = if det.incomplete_fails {
        "incomplete"
    } else {
        "warn"
    };
    // Missing cells first: what was not judged comes before what was.
    let missing = cov
        .missing_cells
        .iter()
        .map(|g| reason(missing_level, "missing_cell", g.message.clone(), &g.cell));
    reasons.splice(0..0, missing);
    for g in &cov.new_cells {
        // A `no_baseline` reason of the cell already says it, naming the nearest series.
        let said = reasons
            .iter()
            .any(|r| r.code == "no_baseline" && r.cell.as_deref() == Some(g.cell.as_str()));
        if !said {
            reasons.push(reason("warn", "new_cell", g.message.clone(), &g.cell));
        }
    }
    for n in &cov.not_measured {
        reasons.push(reason("warn", "not_measured", n.message.clone(), &n.cell));
    }
    let Some(r) = cov.repeats.as_ref().filter(|r| r.pending()) else {
        return;
    };
    let of = format!("{} of {} repeats", r.received, r.expected);
    for h in &cov.held {
        let severe_enough = det.fail_severity == "warn" || h.severity.as_deref() == Some("fail");
        let would_fail = severe_enough
            && match h.kind.as_str() {
                "tradeoff" => det.tradeoff_fails,
                "regression" => det.fail_metrics.contains(&h.metric),
                _ => false,
            };
        let would = if would_fail {
            "would be fail"
        } else {
            "would be warn"
        };
        reasons.push(reason(
            "warn",
            &h.kind,
            format!(
                "provisional ({of} in, {would}, no alert yet): {}",
                h.summary
            ),
            &h.cell,
        ));
    }
    for x in reasons.iter_mut() {
        if x.level == "fail" || x.level == "incomplete" {
            x.message = format!("provisional ({of} in, would be {}): {}", x.level, x.message);
            x.level = "warn".into();
        }
    }
    reasons.push(Reason {
        level: "warn".into(),
        code: "pending_repeats".into(),
        message: format!(
            "{of} of this commit are in ({}): the verdict is provisional and becomes final with the last repeat's upload",
            if r.source == "run" {
                "as its uploads announced"
            } else {
                "detection.repeats"
            }
        ),
        alert_id: None,
        cell: None,
    });
}

/// A group's `no_baseline` reason (naming the nearest stored series and what differs) and one
/// `workload_mismatch`, `prompt_counted_as_output` or `output_len_mismatch` reason per workload
/// confound (with both numbers): `warn`, never a pass.
fn workload_reasons(g: &Value, cell: Option<&String>) -> Vec<Reason> {
    let series = g["report"]["series"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    let none: Vec<&Value> = series
        .iter()
        .filter(|s| s["state"] == "no_baseline")
        .collect();
    if let Some(first) = none.first() {
        out.push(Reason {
            level: "warn".into(),
            code: "no_baseline".into(),
            message: format!(
                "{} series not tested ({})",
                none.len(),
                first["reason"].as_str().unwrap_or("no baseline")
            ),
            alert_id: None,
            cell: cell.cloned(),
        });
    }
    for c in g["report"]["workload"].as_array().into_iter().flatten() {
        out.push(Reason {
            level: "warn".into(),
            code: c["code"].as_str().unwrap_or("workload_mismatch").into(),
            message: c["message"].as_str().unwrap_or_default().into(),
            alert_id: None,
            cell: cell.cloned(),
        });
    }
    out
}
