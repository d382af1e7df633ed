//! Project settings: one versioned JSON document per project.
//!
//! ```json
//! {"slo_profiles": [{"name": "interactive", "ttft_ms": 2000, "tpot_ms": 50},
//!                   {"name": "batch", "e2el_ms": 60000}]}
//! ```
//! Each top-level key is one concern: `slo_profiles`, `detection` (the regression engine's
//! tunables and the verdict rules, [`DetectionSettings`]; optional, defaults when absent) and
//! `pr_comments` (the server's own PR comments, [`crate::pr_comments`]; optional) and `cost`
//! (the hourly price per accelerator for cost at SLO, [`CostSettings`]; optional).
//! Later work adds its own key beside them, so nothing is ever renamed and a document written
//! today stays valid. A key not known yet is rejected rather than silently dropped.
//!
//! `PUT` replaces the whole document: `slo_profiles` is required (send it as GET returns it),
//! `detection` and each of its fields take the defaults when left out.
//!
//! A fault is named by an RFC 6901 JSON pointer to the very field: a wrong type or an unknown
//! key through [`serde_path_to_error`] (`/detection/engine/min_effect_pct`: "invalid type:
//! string \"five\", expected a number"), a value out of its bounds by the checks below. Every
//! bound is documented on its field with its reason: [`regression::Settings`],
//! [`ChangePointSettings`], [`DetectionSettings`], [`SloProfile`].

use crate::capacity::cost::{CostSettings, MAX_ACCELERATOR_HOUR_USD};
use crate::pr_comments::PrCommentSettings;
use crate::regression::{self, edivisive::ChangePointSettings, SETTINGS_VERSION};
use crate::slo::{SloProfile, TOOL_PROFILE};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The settings of a project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectSettings {
    /// SLO profiles under which goodput and SLO attainment are computed from per-request
    /// samples. Required: PUT replaces the whole document, so send them as GET returns them.
    /// Names are unique. At most 20 profiles: each one adds two series (goodput and
    /// attainment) to every result with samples, all recomputed when the profiles change.
    pub slo_profiles: Vec<SloProfile>,
    /// Regression detection and verdict rules; the defaults when absent.
    #[serde(default)]
    pub detection: DetectionSettings,
    /// The server's own PR/MR comments ([`crate::pr_comments`]); none when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr_comments: Option<PrCommentSettings>,
    /// Cost at SLO in the validation report: `{"accelerator_hour_usd": 2.5}`, the hourly
    /// price of one accelerator in USD, in (0, 1000]; no cost is given when absent
    /// ([`crate::capacity::cost`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostSettings>,
}

impl Default for ProjectSettings {
    /// What every project starts with: the `interactive` profile (TTFT ≤ 2000 ms, TPOT ≤ 50 ms)
    /// and the default detection settings.
    fn default() -> Self {
        ProjectSettings {
            slo_profiles: vec![SloProfile::interactive()],
            detection: DetectionSettings::default(),
            pr_comments: None,
            cost: None,
        }
    }
}

/// Metrics whose significant regression fails a verdict by default: TTFT, TPOT, ITL, E2E
/// latency, request and output throughput, and goodput (request goodput and SLO attainment).
pub const DEFAULT_FAIL_METRICS: &[&str] = &[
    "ttft",
    "tpot",
    "itl",
    "e2el",
    "request_throughput",
    "output_throughput",
    "request_goodput",
    "slo_attainment",
];

/// The `detection` section: the engine's tunables and what fails a run's verdict.
///
/// ```json
/// {"detection": {"engine": {"alpha": 0.001, "min_effect_pct": 2},
///                "fail_metrics": ["ttft", "output_throughput"], "fail_severity": "warn",
///                "tradeoff_fails": true, "max_error_rate_pct": 5, "min_completed_pct": 90}}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DetectionSettings {
    /// The engine's settings ([`regression::Settings`], versioned by its `version`); missing
    /// fields take the engine's defaults.
    #[schema(value_type = Object)]
    pub engine: regression::Settings,
    /// Vocabulary metrics whose significant regression fails the verdict (others warn), each
    /// once. Default [`DEFAULT_FAIL_METRICS`].
    pub fail_metrics: Vec<String>,
    /// Lowest severity of such a regression that fails: `warn` (every significant regression,
    /// the default) or `fail` (only those of at least `engine.fail_effect_pct`).
    pub fail_severity: String,
    /// A trade-off (throughput up, TTFT or goodput down) fails the verdict (subject to
    /// `fail_severity`, like a regression). Default true.
    pub tradeoff_fails: bool,
    /// A run whose result has more than this percent of failed requests
    /// (`failed / (completed + failed)`) never enters a baseline. Default 5 %.
    pub max_error_rate_pct: f64,
    /// A run whose result completed fewer than this percent of the cell's `num_prompts`
    /// never enters a baseline. Default 90 %.
    pub min_completed_pct: f64,
    /// A candidate run that is invalid by those two rules (not one a person excluded) fails
    /// the verdict: a commit whose benchmark mostly errored must not pass CI as "not tested".
    /// Default true.
    pub invalid_run_fails: bool,
    /// Runs (repeats) of each commit the project's CI uploads, in [1, [`MAX_REPEATS`]].
    /// Default 1. Until that many runs of a commit are stored on its branch (or the number a
    /// run announced in `run.repeats_expected`, which wins), the commit's verdict is
    /// provisional: a `pending_repeats` reason and no `fail` or `incomplete` (the first repeat
    /// never fails CI on its own), and no alert opens; the last repeat's upload gets the final
    /// verdict, on the commit's mean.
    #[serde(deserialize_with = "crate::serde_int::deserialize")]
    pub repeats: u32,
    /// A cell of the baseline commit that the candidate commit lacks makes the verdict
    /// `incomplete`, which fails CI like `fail` (`true`, the default: a broken harness must not
    /// look like "no news"). `false`: the missing cell is a `warn` reason and the verdict at
    /// most `warn` (never `pass`).
    pub incomplete_fails: bool,
}

impl Default for DetectionSettings {
    fn default() -> Self {
        DetectionSettings {
            engine: regression::Settings::default(),
            fail_metrics: DEFAULT_FAIL_METRICS.iter().map(|m| m.to_string()).collect(),
            fail_severity: "warn".into(),
            tradeoff_fails: true,
            max_error_rate_pct: 5.0,
            min_completed_pct: 90.0,
            invalid_run_fails: true,
            repeats: 1,
            incomplete_fails: true,
        }
    }
}

impl DetectionSettings {
    /// Reads and checks the `detection` section (`at` is its JSON pointer): the type of every
    /// field, unknown keys, and every bound ([`DetectionSettings::check`]).
    pub fn from_json(at: &str, v: &Value) -> Result<DetectionSettings, SettingsError> {
        let d: DetectionSettings = deserialize(at, v)?;
        d.check().map_err(|e| e.under(at))?;
        Ok(d)
    }

    /// The first field out of its documented bounds, the pointer relative to the section.
    pub fn check(&self) -> Result<(), SettingsError> {
        for (i, m) in self.fail_metrics.iter().enumerate() {
            if crate::metric::lookup(m).is_none() {
                return Err(fault(
                    format!("/fail_metrics/{i}"),
                    format!("`{m}` is not a metric of the vocabulary"),
                ));
            }
            if self.fail_metrics[..i].contains(m) {
                return Err(fault(
                    format!("/fail_metrics/{i}"),
                    format!("`{m}` is listed twice"),
                ));
            }
        }
        if !matches!(self.fail_severity.as_str(), "warn" | "fail") {
            return Err(fault("/fail_severity", "expected `warn` or `fail`"));
        }
        for (path, value) in [
            ("/max_error_rate_pct", self.max_error_rate_pct),
            ("/min_completed_pct", self.min_completed_pct),
        ] {
            if !(0.0..=100.0).contains(&value) {
                return Err(fault(
                    path,
                    format!("expected a percentage in [0, 100], found {value}"),
                ));
            }
        }
        if !(1..=MAX_REPEATS).contains(&self.repeats) {
            return Err(fault(
                "/repeats",
                format!(
                    "expected a number of repeats in [1, {MAX_REPEATS}], found {}",
                    self.repeats
                ),
            ));
        }
        check_engine(&self.engine).map_err(|e| e.under("/engine"))
    }

    /// Whether a result with these counts is a failed or partial run that must not enter a
    /// baseline, and why.
    pub fn invalid_run(
        &self,
        completed: Option<f64>,
        failed: Option<f64>,
        num_prompts: Option<f64>,
    ) -> Option<String> {
        let (c, f) = (completed.unwrap_or(0.0), failed.unwrap_or(0.0));
        if completed.is_some() && c + f > 0.0 && 100.0 * f / (c + f) > self.max_error_rate_pct {
            return Some(format!(
                "{:.1} % of requests failed (more than {} %)",
                100.0 * f / (c + f),
                self.max_error_rate_pct
            ));
        }
        match (completed, num_prompts) {
            (Some(c), Some(n)) if n > 0.0 && 100.0 * c / n < self.min_completed_pct => {
                Some(format!(
                    "{c} of {n} prompts completed (fewer than {} %)",
                    self.min_completed_pct
                ))
            }
            _ => None,
        }
    }
}

/// A fault in a settings document: a JSON pointer into it and one sentence.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{pointer}: {message}")]
pub struct SettingsError {
    /// JSON pointer (RFC 6901), e.g. `/slo_profiles/1/ttft_ms`.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl SettingsError {
    /// The same fault, its pointer taken as relative to the value at pointer `at`.
    pub fn under(mut self, at: &str) -> SettingsError {
        self.pointer.insert_str(0, at);
        self
    }
}

fn fault(pointer: impl Into<String>, message: impl Into<String>) -> SettingsError {
    SettingsError {
        pointer: pointer.into(),
        message: message.into(),
    }
}

/// Top-level keys of the document that are read-only on output and ignored on input.
pub const READ_ONLY_KEYS: &[&str] = &["version", "updated_at"];

/// Most SLO profiles of a project (see [`ProjectSettings::slo_profiles`]).
pub const MAX_SLO_PROFILES: usize = 20;
/// Largest SLO threshold, ms: 10 000 s, about 2.8 hours (see [`SloProfile`]).
pub const MAX_THRESHOLD_MS: f64 = 1e7;
/// Largest [`regression::Settings::baseline_window`].
pub const MAX_BASELINE_WINDOW: usize = 100;
/// Largest [`regression::Settings::min_effect_pct`] and `fail_effect_pct`, percent.
pub const MAX_EFFECT_PCT: f64 = 1000.0;
/// Largest [`regression::Settings::alpha`].
pub const MAX_ALPHA: f64 = 0.1;
/// Largest [`regression::Settings::confirm_commits`].
pub const MAX_CONFIRM_COMMITS: usize = 10;
/// Most repeats per commit (`detection.repeats`, `run.repeats_expected`): more runs of one
/// commit than this is a load test, not a CI benchmark, and would hold its verdict back that long.
pub const MAX_REPEATS: u32 = 100;
/// Bounds of [`regression::Settings::per_request_max_per_side`].
pub const PER_REQUEST_PER_SIDE: std::ops::RangeInclusive<usize> = 20..=5000;
/// Bounds of [`ChangePointSettings::permutations`].
pub const PERMUTATIONS: std::ops::RangeInclusive<u32> = 99..=9999;
/// Bounds of [`ChangePointSettings::min_segment`].
pub const MIN_SEGMENT: std::ops::RangeInclusive<usize> = 2..=50;

impl ProjectSettings {
    /// Reads and checks a settings document, naming the first fault with a JSON pointer to the
    /// field: a wrong type or an unknown key anywhere, a missing `slo_profiles`, then every
    /// bound (profiles: a name that is malformed, reserved (`tool`) or taken by an earlier
    /// profile, no threshold, a threshold out of (0, 1e7] ms; detection: see
    /// [`DetectionSettings::check`]). `version` and `updated_at` (as GET returns them) are
    /// ignored; `"detection": null` means the defaults.
    pub fn from_json(doc: &Value) -> Result<ProjectSettings, SettingsError> {
        let obj = doc
            .as_object()
            .ok_or_else(|| fault("", "settings are a JSON object"))?;
        let mut obj = obj.clone();
        for key in READ_ONLY_KEYS {
            obj.remove(*key);
        }
        if obj.get("detection").is_some_and(Value::is_null) {
            obj.remove("detection");
        }
        let doc = Value::Object(obj);
        objects_where_expected(&doc)?;
        let settings: ProjectSettings = deserialize("", &doc).map_err(|e| {
            if e.pointer == "/slo_profiles" && e.message.starts_with("missing field") {
                fault(
                    "/slo_profiles",
                    "missing: PUT replaces the whole settings document; send `slo_profiles` as \
                     GET returns them",
                )
            } else {
                e
            }
        })?;
        settings.check()?;
        Ok(settings)
    }

    /// The first field out of its documented bounds, with its pointer in the document.
    pub fn check(&self) -> Result<(), SettingsError> {
        if self.slo_profiles.len() > MAX_SLO_PROFILES {
            return Err(fault(
                format!("/slo_profiles/{MAX_SLO_PROFILES}"),
                format!(
                    "at most {MAX_SLO_PROFILES} profiles, found {}: each adds goodput and \
                     attainment series to every result with samples",
                    self.slo_profiles.len()
                ),
            ));
        }
        for (i, profile) in self.slo_profiles.iter().enumerate() {
            let at = format!("/slo_profiles/{i}");
            check_profile(profile).map_err(|e| e.under(&at))?;
            if self.slo_profiles[..i]
                .iter()
                .any(|q| q.name == profile.name)
            {
                return Err(fault(
                    format!("{at}/name"),
                    format!("duplicate profile name `{}`", profile.name),
                ));
            }
        }
        self.detection.check().map_err(|e| e.under("/detection"))?;
        if let Some(c) = &self.cost {
            let v = c.accelerator_hour_usd;
            if !(v > 0.0 && v <= MAX_ACCELERATOR_HOUR_USD) {
                return Err(fault(
                    "/cost/accelerator_hour_usd",
                    format!(
                        "the price of one accelerator-hour is a number of USD in (0, \
                         {MAX_ACCELERATOR_HOUR_USD}], found {v}"
                    ),
                ));
            }
        }
        match &self.pr_comments {
            Some(p) => p.check().map_err(|e| e.under("/pr_comments")),
            None => Ok(()),
        }
    }

    /// Whether `other` analyses differently: its SLO profiles or detection rules differ
    /// (where the server comments does not change any analysis).
    pub fn analyses_differ(&self, other: &ProjectSettings) -> bool {
        self.slo_profiles != other.slo_profiles || self.detection != other.detection
    }
}

/// Deserializes `v` (the value at pointer `at`), naming a wrong type, an unknown key or a
/// missing field by the pointer to that very field.
fn deserialize<T: DeserializeOwned>(at: &str, v: &Value) -> Result<T, SettingsError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let mut pointer = at.to_string();
        for segment in e.path() {
            match segment {
                serde_path_to_error::Segment::Seq { index } => {
                    pointer.push('/');
                    pointer.push_str(&index.to_string());
                }
                serde_path_to_error::Segment::Map { key }
                | serde_path_to_error::Segment::Enum { variant: key } => {
                    pointer.push('/');
                    pointer.push_str(&escape(key));
                }
                serde_path_to_error::Segment::Unknown => break,
            }
        }
        let message = plain_types(&e.inner().to_string());
        // serde points a missing field at the object that lacks it: point at the field.
        if let Some(field) = message
            .strip_prefix("missing field `")
            .and_then(|rest| rest.strip_suffix('`'))
        {
            pointer.push('/');
            pointer.push_str(&escape(field));
        }
        fault(pointer, message)
    })
}

/// serde reads a struct from an array too (its fields by position): every object of the
/// document must be a JSON object, an array there is a fault rather than positional settings.
fn objects_where_expected(doc: &Value) -> Result<(), SettingsError> {
    let mut at: Vec<(String, &Value)> = Vec::new();
    if let Some(Value::Array(profiles)) = doc.get("slo_profiles") {
        for (i, p) in profiles.iter().enumerate() {
            at.push((format!("/slo_profiles/{i}"), p));
        }
    }
    if let Some(c) = doc.get("cost") {
        at.push(("/cost".into(), c));
    }
    if let Some(d) = doc.get("detection") {
        at.push(("/detection".into(), d));
        if let Some(e) = d.get("engine") {
            at.push(("/detection/engine".into(), e));
            if let Some(c) = e.get("change_points") {
                at.push(("/detection/engine/change_points".into(), c));
            }
        }
    }
    match at.into_iter().find(|(_, v)| v.is_array()) {
        Some((pointer, _)) => Err(fault(pointer, "expected an object, found an array")),
        None => Ok(()),
    }
}

/// serde's message with Rust's type names said in JSON's words (`expected f64` → `expected a
/// number`).
fn plain_types(message: &str) -> String {
    for (rust, json) in [
        ("f64", "a number"),
        ("usize", "a whole number ≥ 0"),
        ("u32", "a whole number ≥ 0"),
        ("u64", "a whole number ≥ 0"),
    ] {
        if let Some(head) = message.strip_suffix(&format!("expected {rust}")) {
            return format!("{head}expected {json}");
        }
    }
    message.to_string()
}

/// The first bound [`SloProfile`] documents that `p` breaks, relative to the profile.
fn check_profile(p: &SloProfile) -> Result<(), SettingsError> {
    if !valid_name(&p.name) {
        return Err(fault(
            "/name",
            "a profile name is 1–64 of a-z, 0-9, `-`, `_`, starting with a letter or digit",
        ));
    }
    if p.name == TOOL_PROFILE {
        return Err(fault(
            "/name",
            "`tool` is reserved for the benchmark tool's own goodput",
        ));
    }
    for (key, value) in [
        ("ttft_ms", p.ttft_ms),
        ("tpot_ms", p.tpot_ms),
        ("e2el_ms", p.e2el_ms),
    ] {
        match value {
            Some(v) if !(v > 0.0 && v <= MAX_THRESHOLD_MS) => {
                return Err(fault(
                    format!("/{key}"),
                    format!(
                        "a threshold is a number of ms in (0, {MAX_THRESHOLD_MS:e}], found {v}: \
                         no request runs longer"
                    ),
                ))
            }
            _ => {}
        }
    }
    if p.thresholds().is_empty() {
        return Err(fault(
            "",
            "a profile needs at least one of ttft_ms, tpot_ms, e2el_ms",
        ));
    }
    Ok(())
}

/// The first bound [`regression::Settings`] documents that `e` breaks, relative to `engine`.
fn check_engine(e: &regression::Settings) -> Result<(), SettingsError> {
    if e.version != SETTINGS_VERSION {
        return Err(fault(
            "/version",
            format!(
                "settings version {} is not supported: this server reads version \
                 {SETTINGS_VERSION} (leave `version` out to mean it)",
                e.version
            ),
        ));
    }
    let checks: [(&str, bool, String); 11] = [
        (
            "/workload_tolerance_pct",
            e.workload_tolerance_pct > 0.0 && e.workload_tolerance_pct <= 100.0,
            format!(
                "expected a percentage in (0, 100], found {}: at 0 every pair would be a \
                 workload mismatch, beyond 100 none",
                e.workload_tolerance_pct
            ),
        ),
        (
            "/baseline_window",
            (1..=MAX_BASELINE_WINDOW).contains(&e.baseline_window),
            format!(
                "expected 1 to {MAX_BASELINE_WINDOW} commits, found {}: a longer baseline mixes \
                 old regimes into the normal",
                e.baseline_window
            ),
        ),
        (
            "/min_baseline_commits",
            (1..=e.baseline_window).contains(&e.min_baseline_commits),
            format!(
                "expected 1 to baseline_window ({}) commits, found {}: otherwise no series could \
                 ever be tested",
                e.baseline_window, e.min_baseline_commits
            ),
        ),
        (
            "/min_effect_pct",
            (0.0..=MAX_EFFECT_PCT).contains(&e.min_effect_pct),
            format!(
                "expected a percentage in [0, {MAX_EFFECT_PCT}], found {}",
                e.min_effect_pct
            ),
        ),
        (
            "/fail_effect_pct",
            (e.min_effect_pct..=MAX_EFFECT_PCT).contains(&e.fail_effect_pct),
            format!(
                "expected a percentage in [min_effect_pct ({}), {MAX_EFFECT_PCT}], found {}: \
                 below min_effect_pct every finding would fail",
                e.min_effect_pct, e.fail_effect_pct
            ),
        ),
        (
            "/alpha",
            e.alpha > 0.0 && e.alpha <= MAX_ALPHA,
            format!(
                "expected a level in (0, {MAX_ALPHA}], found {}: every commit is a test, so a \
                 larger level alerts on noise",
                e.alpha
            ),
        ),
        (
            "/spread_window",
            (1..=200).contains(&e.spread_window),
            format!(
                "expected 1 to 200 commits, found {}: every upload reads this many",
                e.spread_window
            ),
        ),
        (
            "/support_alpha",
            e.support_alpha > 0.0 && e.support_alpha <= 0.2,
            format!(
                "expected a level in (0, 0.2], found {}: a weaker support accepts cells that do \
                 not show the change",
                e.support_alpha
            ),
        ),
        (
            "/confidence_level",
            e.confidence_level >= 0.5 && e.confidence_level < 1.0,
            format!("expected a level in [0.5, 1), found {}", e.confidence_level),
        ),
        (
            "/confirm_commits",
            e.confirm_commits <= MAX_CONFIRM_COMMITS,
            format!(
                "expected at most {MAX_CONFIRM_COMMITS} commits, found {}: each one holds a real \
                 regression back one more commit",
                e.confirm_commits
            ),
        ),
        (
            "/per_request_max_per_side",
            PER_REQUEST_PER_SIDE.contains(&e.per_request_max_per_side),
            format!(
                "expected {} to {} requests, found {}: the pairwise differences grow with its \
                 square",
                PER_REQUEST_PER_SIDE.start(),
                PER_REQUEST_PER_SIDE.end(),
                e.per_request_max_per_side
            ),
        ),
    ];
    for (pointer, ok, message) in checks {
        if !ok {
            return Err(fault(pointer, message));
        }
    }
    for (i, name) in e.tested_stats.iter().enumerate() {
        // As series name them: `p50`, not `median` or `p50.0`.
        let canonical = name
            .parse::<crate::metric::Stat>()
            .map(|s| s.to_string())
            .ok();
        if canonical.as_deref() != Some(name.as_str()) {
            return Err(fault(
                format!("/tested_stats/{i}"),
                format!(
                    "`{name}` is not a statistic as series name them (`value`, `mean`, `std`, \
                     `min`, `max`, `p50`, `p99.9`, ...)"
                ),
            ));
        }
        if e.tested_stats[..i].contains(name) {
            return Err(fault(
                format!("/tested_stats/{i}"),
                format!("`{name}` is listed twice"),
            ));
        }
    }
    check_change_points(&e.change_points).map_err(|err| err.under("/change_points"))
}

/// The first bound [`ChangePointSettings`] documents that `c` breaks, relative to it.
fn check_change_points(c: &ChangePointSettings) -> Result<(), SettingsError> {
    if !PERMUTATIONS.contains(&c.permutations) {
        return Err(fault(
            "/permutations",
            format!(
                "expected {} to {} permutations, found {}: each one is a full scan of the \
                 history",
                PERMUTATIONS.start(),
                PERMUTATIONS.end(),
                c.permutations
            ),
        ));
    }
    let smallest_p = 1.0 / (1.0 + c.permutations as f64);
    if !(c.alpha > 0.0 && c.alpha <= MAX_ALPHA) {
        return Err(fault(
            "/alpha",
            format!("expected a level in (0, {MAX_ALPHA}], found {}", c.alpha),
        ));
    }
    // 1e-9: alpha 0.001 with 999 permutations is exactly reachable.
    if c.alpha < smallest_p * (1.0 - 1e-9) {
        return Err(fault(
            "/alpha",
            format!(
                "{} can never be reached with {} permutations (the smallest p-value is \
                 1/(1 + permutations) = {smallest_p}): no change point could ever be found",
                c.alpha, c.permutations
            ),
        ));
    }
    if !MIN_SEGMENT.contains(&c.min_segment) {
        return Err(fault(
            "/min_segment",
            format!(
                "expected {} to {} commits, found {}",
                MIN_SEGMENT.start(),
                MIN_SEGMENT.end(),
                c.min_segment
            ),
        ));
    }
    if !(c.exponent > 0.0 && c.exponent < 2.0) {
        return Err(fault(
            "/exponent",
            format!(
                "expected an exponent in (0, 2), found {}: the energy distance needs it",
                c.exponent
            ),
        ));
    }
    Ok(())
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// A key as one reference token of a JSON pointer (RFC 6901: `~` → `~0`, `/` → `~1`).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(doc: Value) -> (String, String) {
        let e = ProjectSettings::from_json(&doc).unwrap_err();
        (e.pointer, e.message)
    }

    #[test]
    fn reads_profiles_and_ignores_read_only_keys() {
        let s = ProjectSettings::from_json(&json!({"version": 3, "updated_at": "x",
            "slo_profiles": [{"name": "interactive", "ttft_ms": 2000, "tpot_ms": 50},
                             {"name": "batch", "e2el_ms": 60000}]}))
        .unwrap();
        assert_eq!(s.slo_profiles[0], SloProfile::interactive());
        assert_eq!(s.slo_profiles[1].e2el_ms, Some(60000.0));
        let doc = serde_json::to_value(ProjectSettings::default()).unwrap();
        assert_eq!(
            doc["slo_profiles"],
            json!([{"name": "interactive", "ttft_ms": 2000.0, "tpot_ms": 50.0}])
        );
        assert_eq!(doc["detection"]["tradeoff_fails"], true);
        assert_eq!(
            ProjectSettings::from_json(&doc).unwrap(),
            ProjectSettings::default()
        );
    }

    #[test]
    fn the_price_per_accelerator_hour_is_checked() {
        let doc =
            |cost: Value| json!({"slo_profiles": [{"name": "a", "ttft_ms": 1}], "cost": cost});
        let s = ProjectSettings::from_json(&doc(json!({"accelerator_hour_usd": 2.5}))).unwrap();
        assert_eq!(
            s.cost,
            Some(CostSettings {
                accelerator_hour_usd: 2.5
            })
        );
        for bad in [json!(0), json!(-1), json!(1000.5)] {
            let (pointer, message) = err(doc(json!({ "accelerator_hour_usd": bad })));
            assert_eq!(pointer, "/cost/accelerator_hour_usd");
            assert!(message.contains("(0, 1000]"), "{message}");
        }
        assert_eq!(
            err(doc(json!({"accelerator_hour_usd": "2.5"}))).0,
            "/cost/accelerator_hour_usd"
        );
        assert_eq!(err(doc(json!({"usd": 2.5}))).0, "/cost/usd");
        assert_eq!(err(doc(json!([2.5]))).0, "/cost");
        assert_eq!(
            ProjectSettings::from_json(&doc(Value::Null)).unwrap().cost,
            None
        );
    }

    #[test]
    fn faults_are_located() {
        let p = |v: Value| json!({"slo_profiles": [{"name": "a", "ttft_ms": 1}, v]});
        assert_eq!(
            err(p(json!({"name": "b", "itl_ms": 5}))).0,
            "/slo_profiles/1/itl_ms"
        );
        assert_eq!(
            err(p(json!({"name": "b", "ttft_ms": 0}))).0,
            "/slo_profiles/1/ttft_ms"
        );
        assert_eq!(
            err(p(json!({"name": "b", "ttft_ms": "5"}))).0,
            "/slo_profiles/1/ttft_ms"
        );
        assert_eq!(
            err(p(json!({"name": "a", "ttft_ms": 5}))).0,
            "/slo_profiles/1/name"
        );
        assert_eq!(err(p(json!({"name": "b"}))).0, "/slo_profiles/1");
        assert_eq!(
            err(p(json!({"name": "tool", "ttft_ms": 5}))).0,
            "/slo_profiles/1/name"
        );
        assert_eq!(err(p(json!({"ttft_ms": 5}))).0, "/slo_profiles/1/name");
        assert_eq!(err(json!({"slo_profiles": [], "other": {}})).0, "/other");
        assert_eq!(
            err(json!({"slo_profiles": [], "detection": {"nope": 1}})).0,
            "/detection/nope"
        );
        assert_eq!(
            err(json!({"slo_profiles": [], "detection": {"fail_metrics": ["ttft", "x"]}})).0,
            "/detection/fail_metrics/1"
        );
        assert_eq!(
            err(json!({"slo_profiles": [], "detection": {"engine": {"alpha": 2}}})).0,
            "/detection/engine/alpha"
        );
        let s = ProjectSettings::from_json(
            &json!({"slo_profiles": [], "detection": {"engine": {"alpha": 0.01}}}),
        )
        .unwrap();
        assert_eq!(s.detection.engine.alpha, 0.01);
        assert_eq!(s.detection.engine.min_baseline_commits, 3);
        assert_eq!(err(json!({})).0, "/slo_profiles");
    }
}
