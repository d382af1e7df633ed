//! Types that cross the wire between the server, the `benchtrail` CLI and other clients:
//! alerts, the upload receipt, and (re-exported from [`crate::report`]) the verdict. Defined
//! once here, so the server serializes and the CLI reads the same structs.

use crate::regression::FindingKind;
use crate::Stat;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

pub use crate::report::verdict::{QueuedAnalysis, Reason, ReasonCode, Verdict, VerdictLevel};

/// What an alert is about (the engine's finding kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AlertKind {
    /// The candidate is significantly worse.
    Regression,
    /// The candidate is significantly better (stored resolved: no triage needed).
    Improvement,
    /// Throughput better while TTFT or goodput worse, within one result.
    Tradeoff,
    /// The default branch's history shifted at a commit (E-Divisive means).
    ChangePoint,
    /// A series of the baseline is absent from the candidate run.
    Missing,
}

impl AlertKind {
    /// Every kind.
    pub const ALL: [AlertKind; 5] = [
        AlertKind::Regression,
        AlertKind::Improvement,
        AlertKind::Tradeoff,
        AlertKind::ChangePoint,
        AlertKind::Missing,
    ];

    /// `regression`, `improvement`, `tradeoff`, `change_point`, `missing`.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertKind::Regression => "regression",
            AlertKind::Improvement => "improvement",
            AlertKind::Tradeoff => "tradeoff",
            AlertKind::ChangePoint => "change_point",
            AlertKind::Missing => "missing",
        }
    }

    /// The kind named `s`, if any.
    pub fn parse(s: &str) -> Option<AlertKind> {
        AlertKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl From<FindingKind> for AlertKind {
    /// The alert a finding of `kind` opens: the kinds are one vocabulary.
    fn from(kind: FindingKind) -> AlertKind {
        match kind {
            FindingKind::Regression => AlertKind::Regression,
            FindingKind::Improvement => AlertKind::Improvement,
            FindingKind::Tradeoff => AlertKind::Tradeoff,
            FindingKind::ChangePoint => AlertKind::ChangePoint,
            FindingKind::Missing => AlertKind::Missing,
        }
    }
}

impl From<AlertKind> for FindingKind {
    /// The finding an alert of `kind` holds.
    fn from(kind: AlertKind) -> FindingKind {
        match kind {
            AlertKind::Regression => FindingKind::Regression,
            AlertKind::Improvement => FindingKind::Improvement,
            AlertKind::Tradeoff => FindingKind::Tradeoff,
            AlertKind::ChangePoint => FindingKind::ChangePoint,
            AlertKind::Missing => FindingKind::Missing,
        }
    }
}

/// Where an alert is in its lifecycle (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AlertStatus {
    /// New, nobody looked yet.
    Open,
    /// Someone is looking into it.
    Acknowledged,
    /// Someone decided it is not a problem (with a reason).
    Dismissed,
    /// benchtrail saw it go away.
    Resolved,
}

impl AlertStatus {
    /// Every status.
    pub const ALL: [AlertStatus; 4] = [
        AlertStatus::Open,
        AlertStatus::Acknowledged,
        AlertStatus::Dismissed,
        AlertStatus::Resolved,
    ];

    /// `open`, `acknowledged`, `dismissed`, `resolved`.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertStatus::Open => "open",
            AlertStatus::Acknowledged => "acknowledged",
            AlertStatus::Dismissed => "dismissed",
            AlertStatus::Resolved => "resolved",
        }
    }

    /// The status named `s`, if any.
    pub fn parse(s: &str) -> Option<AlertStatus> {
        AlertStatus::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Open or acknowledged: still a problem.
    pub fn is_active(self) -> bool {
        matches!(self, AlertStatus::Open | AlertStatus::Acknowledged)
    }
}

/// Addresses of what an alert refers to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AlertLinks {
    /// This alert (`/api/v1/alerts/{id}`).
    #[serde(rename = "self")]
    pub self_: String,
    /// The run whose analysis produced it (`/api/v1/runs/{id}`), if any.
    pub run: Option<String>,
    /// The run's verdict (`/api/v1/runs/{id}/verdict`), if any.
    pub verdict: Option<String>,
    /// The headline series' points (`/api/v1/projects/{p}/series/{series_id}`).
    pub series: String,
    /// The commit in the repository (`{repository_url}/commit/{sha}`), when the project has one.
    pub commit: Option<String>,
}

/// A stored alert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Alert {
    /// Id.
    pub id: Uuid,
    /// Project slug.
    pub project: String,
    /// Kind.
    pub kind: AlertKind,
    /// Lifecycle status.
    pub status: AlertStatus,
    /// `warn` or `fail` (none for improvements).
    pub severity: Option<String>,
    /// The headline series (for a trade-off: the throughput that improved).
    pub series_id: String,
    /// Every series involved (a trade-off's parts).
    pub series_ids: Vec<String>,
    /// Headline metric (vocabulary name).
    pub metric: String,
    /// Its statistic.
    #[schema(value_type = String)]
    pub stat: Stat,
    /// SLO profile, for goodput and attainment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_profile: Option<String>,
    /// Series key object of the result.
    pub series_key: Value,
    /// Cell key of the result.
    pub cell: String,
    /// The finding this alert is one cell of ([`alert_group`]): alerts with the same `group`
    /// are one finding across the cells of a configuration (same branch, commit, kind,
    /// headline metric and SLO profile). `GET .../alerts?commit=SHA&kind=K&metric=M` lists
    /// a group's alerts.
    pub group: String,
    /// Branch of the candidate commit.
    pub branch: String,
    /// The candidate commit (for a change point: the first commit of the new regime).
    pub commit: String,
    /// The run whose analysis produced or last updated it.
    pub run_id: Option<Uuid>,
    /// The baseline commits compared against (for a change point: the previous regime).
    pub baseline_commits: Vec<String>,
    /// Percent change of the headline metric, of the baseline mean.
    pub delta_pct: Option<f64>,
    /// One sentence for people.
    pub summary: String,
    /// The engine's finding: inputs, test, statistic, p-value and intervals, thresholds and
    /// the detection settings.
    #[schema(value_type = Object)]
    pub finding: Value,
    /// Version of the project settings that produced it (`GET .../settings`).
    pub settings_version: i64,
    /// The reason given when dismissed or acknowledged, or benchtrail's when resolved.
    pub reason: Option<String>,
    /// The commit that returned to the baseline, when resolved by one.
    pub resolved_by: Option<String>,
    /// Who triaged it last (acknowledged, dismissed or reopened it): the label of the token
    /// used (else its first characters), or `admin`. Absent until someone triages it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triaged_by: Option<String>,
    /// When it was last triaged. Absent until someone triages it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triaged_at: Option<DateTime<Utc>>,
    /// When it was first stored.
    pub created_at: DateTime<Utc>,
    /// Last change (status or recomputed finding).
    pub updated_at: DateTime<Utc>,
    /// Related addresses.
    pub links: AlertLinks,
}

/// Answer to an upload (`POST /api/v1/projects/{project}/runs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct UploadReceipt {
    /// The run's id.
    pub run_id: Uuid,
    /// False when the run id was already stored (nothing was stored again).
    pub created: bool,
    /// Number of results in the run.
    pub results: usize,
    /// Path of the run's page (`/runs/{id}`).
    pub path: String,
    /// The run's verdict right after its analysis; for a run that was already stored, its
    /// current verdict. `pending` when the analysis is queued (the server was busy with other
    /// uploads' analyses, another upload of the commit is being analyzed, or the analysis
    /// failed and is retried): poll `GET /api/v1/runs/{id}/verdict`. `null` only when the
    /// verdict could not be read.
    pub verdict: Option<VerdictLevel>,
    /// The verdict with its reasons, missing and new cells, series not measured and repeats,
    /// as `GET /api/v1/runs/{id}/verdict` answers it; `null` with `verdict`.
    pub verdict_detail: Option<Verdict>,
}

/// A problem document (RFC 9457): the body of every API error, sent as
/// `application/problem+json`. The server always sends `type`, `title`, `status` and `detail`;
/// a client reads a problem missing any of them with its default (an older or newer server).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Problem {
    /// Always `about:blank`: the status says what kind of problem it is.
    #[schema(required = true)]
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The status's short name, e.g. `Unprocessable Entity`.
    #[schema(required = true)]
    #[serde(default)]
    pub title: String,
    /// The HTTP status.
    #[schema(required = true)]
    #[serde(default)]
    pub status: u16,
    /// What is wrong with this request.
    #[schema(required = true)]
    #[serde(default)]
    pub detail: String,
    /// JSON pointer into the request body at fault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// The query parameter at fault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    /// The bound the request exceeds (413, and 422 for an upload over one of its bounds): a
    /// size in bytes, a length in characters or a count, as `detail` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// Each fault, located (RFC 9457 §3.1's validation example); the first restates the problem
    /// with its location inside a file, the others name fields that would resolve it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldProblem>,
}

/// One fault of a [`Problem`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FieldProblem {
    /// What is wrong.
    #[schema(required = true)]
    #[serde(default)]
    pub detail: String,
    /// JSON pointer into the request body.
    #[schema(required = true)]
    #[serde(default)]
    pub pointer: String,
    /// JSON pointer inside the uploaded file's record, if the fault is inside a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// 0-based record (JSON Lines entry) of the uploaded file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<usize>,
    /// 1-based line of that record in the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

impl Problem {
    /// Whether the problem locates a fault, or a field that resolves it, at `pointer`: its own
    /// `pointer` or one of its `errors`' pointers.
    pub fn names(&self, pointer: &str) -> bool {
        self.pointer.as_deref() == Some(pointer) || self.errors.iter().any(|e| e.pointer == pointer)
    }
}

/// The group of an alert: the first 16 hex digits of SHA-256 over the canonical JSON array
/// `[branch, commit, series_key, kind, metric, slo_profile]`: one finding across the cells of
/// one configuration (`crate::report::grouped` groups a run's findings the same way).
pub fn alert_group(
    branch: &str,
    commit: &str,
    series_key: &Value,
    kind: AlertKind,
    metric: &str,
    slo_profile: Option<&str>,
) -> String {
    let canonical = serde_json::json!([
        branch,
        commit,
        series_key,
        kind.as_str(),
        metric,
        slo_profile
    ])
    .to_string();
    crate::sha256_hex(canonical.as_bytes())[..16].to_string()
}
