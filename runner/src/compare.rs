//! `benchtrail compare OLD NEW`: two sets of result files compared on this machine, with no
//! server, by the same adapters, engine and verdict rules the server uses
//! ([`benchtrail_core::report::compare`]), printed by the same renderer.
//!
//! # What OLD and NEW may be
//! * A result file, or a folder of them (walked as `upload` walks one): one commit. Results
//!   of the same configuration and cell read more than once (three repeat files of one cell)
//!   are that commit's repeats: the k-th of each cell forms run k.
//! * OLD only: a folder holding only folders is a history, each subfolder one commit, oldest
//!   first in natural order of their names (`c2` before `c10`). The candidate is then judged
//!   by the default-branch rule against the last `baseline_window` of them. Unless no cell is
//!   measured in two of them: then the subfolders are one commit's load sweep written a folder
//!   per load (AIPerf's `c1/`, `c4/`, `c16/`), and OLD is that one commit.
//!
//! When either side measured a load sweep (several loads of one cell), or quality results are
//! given (`--base-quality FILE`, `--head-quality FILE`, the formats `upload --quality` reads),
//! the report ends with the validation report under the settings' profiles (the server's
//! compare report of two runs: capacity at SLO, cost at SLO with the settings' `cost`,
//! quality, warnings, the answer); `--format json` carries it as `capacity` (`null`
//! otherwise). A quantization change the candidate's quality results do not cover
//! (`quantization_without_quality`, the server's rule) makes the verdict at least `warn`.
//!
//! Exit status: 0 for `pass` and `warn`, 1 for `fail`, 3 for `incomplete` (a cell of OLD is
//! missing from NEW), 2 on any error; `--no-fail` exits 0 for any verdict.

use crate::cell_arg::parse_cells;
use crate::cli::{CompareArgs, ReportFormat};
use crate::errors::InputError;
use crate::inputs;
use anyhow::{bail, Context, Result};
use benchtrail_core::adapters::lm_eval::read_quality_file;
use benchtrail_core::capacity;
use benchtrail_core::quality::QualityResult;
use benchtrail_core::report::compare::{compare, CompareCommit};
use benchtrail_core::report::extras::ReportExtras;
use benchtrail_core::report::grouped::natural_key;
use benchtrail_core::report::pairing::pair_by_cell;
use benchtrail_core::report::verdict::ReasonCode;
use benchtrail_core::settings::ProjectSettings;
use benchtrail_core::{BenchResult, UploadDocument, WorkloadCell};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Runs `benchtrail compare` in `cwd`, printing the report to `out` and what was read to
/// `err`.
///
/// # Errors
/// A path that cannot be read or holds no result file, a file that does not parse, a bad
/// `--cell` or `--settings` file; [`crate::report::ExitWith`] for a verdict that fails (unless `--no-fail`).
pub fn run(args: &CompareArgs, cwd: &Path, out: &mut dyn Write, err: &mut dyn Write) -> Result<()> {
    let cell = parse_cells(&args.cell)?;
    let settings = match &args.settings {
        Some(p) => {
            let text = std::fs::read_to_string(cwd.join(p))
                .with_context(|| format!("cannot read --settings file `{}`", p.display()))?;
            let doc: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("--settings `{}` is not JSON", p.display()))?;
            ProjectSettings::from_json(&doc)
                .map_err(|e| anyhow::anyhow!("--settings `{}`: {e}", p.display()))?
        }
        None => ProjectSettings::default(),
    };
    let baseline = side(&args.old, cwd, &cell, true, err).map_err(InputError::wrap)?;
    let mut candidate = side(&args.new, cwd, &cell, false, err).map_err(InputError::wrap)?;
    let candidate = candidate.pop().context("NEW holds no results")?;
    for c in baseline.iter().chain([&candidate]) {
        writeln!(
            err,
            "{}: {} run(s), {} result(s)",
            c.commit,
            c.runs.len(),
            c.runs.iter().map(Vec::len).sum::<usize>()
        )?;
    }
    let quality = |p: &Option<PathBuf>, flag: &str| -> Result<Vec<QualityResult>> {
        let Some(p) = p else { return Ok(Vec::new()) };
        let text = std::fs::read_to_string(cwd.join(p))
            .with_context(|| format!("{flag}: cannot read `{}`", p.display()))?;
        read_quality_file(&text).map_err(|e| anyhow::anyhow!("{flag} `{}`: {e}", p.display()))
    };
    let qualities = (
        quality(&args.base_quality, "--base-quality")?,
        quality(&args.head_quality, "--head-quality")?,
    );
    let mut outcome = compare(&baseline, &candidate, &settings, &args.key_field);
    let report = capacity_of(
        baseline.last(),
        &candidate,
        &qualities,
        &settings,
        &args.key_field,
    );
    // The server's rule: a quantization change without the candidate's quality results is
    // at least `warn`.
    for w in &report.warnings {
        if let capacity::ReportWarning::QuantizationWithoutQuality { .. } = w {
            outcome.verdict.add_warning(
                ReasonCode::QuantizationWithoutQuality,
                capacity::render_warnings::warning_sentence(&report, w),
                None,
            );
        }
    }
    let capacity = (report.has_sweep() || !report.quality.is_empty()).then_some(report);
    if args.output == ReportFormat::Json {
        let doc = serde_json::json!({
            "verdict": outcome.verdict,
            "analysis": outcome.analysis,
            "capacity": capacity,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    } else {
        crate::report::print(
            out,
            &outcome.verdict,
            Some(&outcome.analysis),
            &ReportExtras {
                sparklines: outcome.sparklines.clone(),
                ..ReportExtras::default()
            },
            args.output,
        )?;
        if let Some(report) = &capacity {
            writeln!(out)?;
            out.write_all(capacity::render::markdown(report).as_bytes())?;
        }
    }
    crate::report::exit_for(outcome.verdict.verdict, args.no_fail)
}

/// The validation report of the last baseline commit's first run against the candidate's
/// first run (the server's `GET /api/v1/compare/report` of two runs: paired cell by cell,
/// with both sides' quality results and the settings' cost), at the default 95 % target.
/// Its answer is informational; the exit status is the verdict's.
fn capacity_of(
    baseline: Option<&CompareCommit>,
    candidate: &CompareCommit,
    quality: &(Vec<QualityResult>, Vec<QualityResult>),
    settings: &ProjectSettings,
    key_fields: &[String],
) -> capacity::CapacityReport {
    let first = |c: &CompareCommit| c.runs.first().cloned().unwrap_or_default();
    let base = baseline.map(first).unwrap_or_default();
    let head = first(candidate);
    let (paired, _) = pair_by_cell(&base, &head, key_fields);
    capacity::capacity_report(
        capacity::ReportSide {
            results: &paired,
            quality: &quality.0,
            as_stored: Some(&base),
        },
        capacity::ReportSide::new(&head, &quality.1),
        key_fields,
        &settings.slo_profiles,
        capacity::ReportOptions {
            target: capacity::DEFAULT_TARGET,
            typical_load: None,
            accelerator_hour_usd: settings.cost.map(|c| c.accelerator_hour_usd),
        },
    )
}

/// Whether subfolder commits are one commit's load sweep written a folder per load (AIPerf's
/// `c1/`, `c4/`, `c16/`): several subfolders, none measuring a cell (configuration and
/// workload, load included) another one measures. A history measures the same cells again
/// in every commit.
fn is_one_sweep(commits: &[CompareCommit]) -> bool {
    let cells = |c: &CompareCommit| -> std::collections::BTreeSet<String> {
        c.runs
            .iter()
            .flatten()
            .map(|r| format!("{}|{}", r.configuration.fingerprint(), r.cell.key()))
            .collect()
    };
    let mut seen = std::collections::BTreeSet::new();
    commits.len() > 1
        && commits
            .iter()
            .all(|c| cells(c).into_iter().all(|k| seen.insert(k)))
}

/// The commits of one side (see the module documentation); `history`: a folder of folders is
/// one commit per subfolder.
fn side(
    path: &Path,
    cwd: &Path,
    cell: &WorkloadCell,
    history: bool,
    err: &mut dyn Write,
) -> Result<Vec<CompareCommit>> {
    let full = cwd.join(path);
    if full.is_dir() {
        let mut subfolders: Vec<PathBuf> = Vec::new();
        let mut files = false;
        for entry in std::fs::read_dir(&full)
            .with_context(|| format!("cannot read folder `{}`", path.display()))?
        {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                subfolders.push(path.join(entry.file_name()));
            } else {
                files = true;
            }
        }
        if history && !files && !subfolders.is_empty() {
            subfolders.sort_by_cached_key(|p| natural_key(&p.display().to_string()));
            let commits = subfolders
                .iter()
                .map(|p| commit_of(p, cwd, cell, err))
                .collect::<Result<Vec<_>>>()?;
            if !is_one_sweep(&commits) {
                return Ok(commits);
            }
        }
    }
    Ok(vec![commit_of(path, cwd, cell, err)?])
}

/// One commit: every result file under `path`, its repeats split into runs.
fn commit_of(
    path: &Path,
    cwd: &Path,
    cell: &WorkloadCell,
    progress: &mut dyn Write,
) -> Result<CompareCommit> {
    let gathered = inputs::gather(
        &[path.to_path_buf()],
        None,
        None,
        cwd,
        &mut std::io::empty(),
        progress,
    )?;
    if gathered.files.is_empty() {
        bail!("`{}` holds no result file", path.display());
    }
    let mut doc = UploadDocument {
        cell: cell.clone(),
        files: gathered.files,
        ..UploadDocument::default()
    };
    // Read as an upload is; the commit is named by the path, not checked.
    doc.run.commit.sha = "0000000".into();
    let read = doc
        .read()
        .map_err(|e| anyhow::anyhow!("`{}`: {} (at {})", path.display(), e.message, e.pointer))?;
    Ok(CompareCommit {
        commit: path.display().to_string(),
        runs: split_repeats(read.results),
    })
}

/// Results of one (configuration, cell) read k times are k repeats: the k-th of each cell
/// goes to run k.
fn split_repeats(results: Vec<BenchResult>) -> Vec<Vec<BenchResult>> {
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    let mut runs: Vec<Vec<BenchResult>> = Vec::new();
    for r in results {
        let key = (r.configuration.canonical_json(), r.cell.key());
        let k = seen.entry(key).or_default();
        if runs.len() <= *k {
            runs.push(Vec::new());
        }
        runs[*k].push(r);
        *k += 1;
    }
    runs
}
