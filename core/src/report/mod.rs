//! The typed analysis model every report renders, and the pure rules that build it.
//!
//! The server loads history, calls this module, stores [`model::RunAnalysis`] (serialized)
//! and renders it; the CLI renders the same [`verdict::Verdict`]; `benchtrail compare` runs
//! [`compare::compare`] on two uploads with no server. Nothing here does I/O.
//!
//! * [`history`]: what an analysis reads of stored history (series of a group, values of
//!   runs).
//! * [`group`]: the baseline rules ([`group::CommitContext::plan`]), the engine input built
//!   from history, and one group's analysis.
//! * [`coverage`]: missing and new cells, series not measured, repeats.
//! * [`config_parts`]: a commit's runs split into the configurations analyzed apart.
//! * [`distribution`]: per-request CDFs (TTFT, TPOT) for a reader.
//! * [`model`]: the stored analysis of one run.
//! * [`verdict`]: the verdict rules: levels, reason codes, what fails CI.
//! * [`verdict_basis`]: the part of an analysis the verdict reads, stored beside it.
//! * [`grouped`]: the findings of a run grouped across the cells where they hold.
//! * [`render`]: the verdict and analysis as terminal text or Markdown, within a size limit.
//! * [`extras`]: links and sparklines a report shows besides the model.
//! * [`comment`]: the one sticky PR/MR comment: its marker, one section per suite, and
//!   whether to create, update or leave it.
//! * [`compare`]: two uploads compared offline, with the same engine and rules.
//! * [`compare_table`]: an analysis as the compare page's table (baseline → candidate per
//!   series, with the interval and test the decision used).
//!
//! # Baseline
//! * A commit on the project's default branch: the last `detection.engine.baseline_window`
//!   (default 10) commits *before it* on the default branch that have a valid run of the series
//!   and are its ancestors (commit order: ancestry through the uploaded `parents`, committer
//!   time, else run time, then upload order, only between unrelated commits; behind a parent
//!   that was never uploaded, the commits ordered before it count as possible ancestors:
//!   [`crate::history`]).
//! * A pull request (another branch with a `merge_base`): the default branch's commits that
//!   are the merge base or its ancestors, the same window.
//! * Another branch without a merge base: the default branch's commits that are ancestors of
//!   the candidate, the same window.
//! * A pinned run (`PUT .../baselines/{series_id}`): for the default branch's commits after
//!   the pinned one and for every other branch, the baseline of that series' whole group (every
//!   metric of the same series key and cell) is the pinned commit's level; when it has fewer
//!   than two valid runs, the run-to-run spread comes from the window the baseline would
//!   otherwise be (a t test with the pinned level, `pinned_t`), and with no such spread the
//!   comparison is effect only (described, never an alert).
//! * Never in a baseline (nor a valid candidate): runs excluded by a person, and results with
//!   more than `detection.max_error_rate_pct` (5 %) failed requests or fewer than
//!   `detection.min_completed_pct` (90 %) of the cell's `num_prompts` completed.
//! * Per-request samples (TTFT, TPOT, ITL, E2E latency of each request) of the candidate and
//!   of the baseline window's runs are given to the engine, thinned to
//!   `per_request_max_per_side` per run: they describe the shift (Mann–Whitney U,
//!   Hodges–Lehmann interval) in each finding and never open an alert by themselves.
//!
//! # Insufficient data
//! A group with fewer than `min_baseline_commits` (3) baseline commits is not tested: its
//! series are in state `insufficient_data`, no alert is opened, and the verdict is at best
//! `warn`. The effect is still described: the baseline mean against the candidate mean as an
//! effect-only comparison (no significance test), with the engine's wording, in the run's
//! analysis and verdict reasons.

pub mod comment;
pub mod compare;
pub mod compare_table;
pub mod config_parts;
pub mod coverage;
pub mod distribution;
pub mod extras;
pub mod group;
pub mod grouped;
pub mod history;
pub mod model;
pub mod pairing;
pub mod render;
pub mod verdict;
pub mod verdict_basis;
pub mod window;

pub use history::{GroupSeries, HistoryPoint};
pub use model::{CellAnalysis, Continuing, InvalidRun, RunAnalysis, ANALYSIS_SCHEMA};
pub use verdict::{verdict_of, Reason, ReasonCode, Verdict, VerdictLevel};

/// `abc123def456`: the first 12 characters of a SHA.
pub fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}
