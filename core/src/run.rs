//! Run metadata: one upload from one runner at one commit.

use chrono::{DateTime, FixedOffset, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uuid::Uuid;

/// The commit a run measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CommitInfo {
    /// Full commit SHA (hex, 7–64 digits). Required.
    #[schema(pattern = "^[0-9a-fA-F]{7,64}$")]
    pub sha: String,
    /// Parent SHAs (hex, 7–64 digits each), first parent first; at most 128
    /// (`upload_limits::MAX_PARENTS`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 128, inline, value_type = Vec<ShaText>)]
    pub parents: Vec<String>,
    /// Committer time, RFC 3339 with its UTC offset (kept as sent: `2026-01-02T03:04:05+01:00`;
    /// a zero offset is written `Z`). Only the tie-break of the history order between commits
    /// that `parents` do not relate.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "rfc3339_with_offset"
    )]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub time: Option<DateTime<FixedOffset>>,
    /// First line of the commit message; at most 1024 characters
    /// (`upload_limits::MAX_SUBJECT_CHARS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 1024)]
    pub subject: Option<String>,
}

/// A commit SHA as the upload schema states it: 7–64 hex digits.
#[derive(utoipa::ToSchema)]
#[schema(pattern = "^[0-9a-fA-F]{7,64}$")]
#[allow(dead_code)] // a schema only
struct ShaText(String);

/// The pull request a run belongs to, if any.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PullRequest {
    /// The pull-request number (1 to 2^63 − 1).
    #[schema(minimum = 1, maximum = 9223372036854775807_u64)]
    #[serde(deserialize_with = "crate::serde_int::deserialize")]
    pub number: u64,
    /// The merge base with the base branch (hex SHA, 7–64 digits): what the PR is compared
    /// with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^[0-9a-fA-F]{7,64}$")]
    pub merge_base: Option<String>,
}

/// Metadata of one run.
///
/// Several runs of one commit are **repeats** (distinguished by `repeat_index` and id), never
/// duplicates: the regression engine uses them as independent samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunMeta {
    /// Client-chosen id; re-sending the same id returns the stored run and stores nothing.
    /// When absent, derived from the upload (UUID v5 over the project, branch, commit,
    /// pull-request number, `repeat_index`, the files' names and SHA-256 and the inline
    /// results), so re-sending the same upload also returns the stored run: give another
    /// `repeat_index` (or an id) to store a genuine repeat of identical files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Uuid>,
    /// The commit measured.
    pub commit: CommitInfo,
    /// Branch name, as git accepts it (no control characters, spaces, `~ ^ : ? * [ \`, `..`,
    /// `@{` or `//`; 422 at `/run/branch` otherwise), at most 255 characters
    /// (`upload_limits::MAX_BRANCH_CHARS`). Defaults to the
    /// project's default branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 255)]
    pub branch: Option<String>,
    /// The pull request, if the run is for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<PullRequest>,
    /// When the benchmark ran. Defaults to the upload time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_at: Option<DateTime<Utc>>,
    /// Link to the CI job that produced the run; at most 2048 characters
    /// (`upload_limits::MAX_URL_CHARS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 2048)]
    pub ci_job_url: Option<String>,
    /// 0-based index among repeated runs of the same commit and configuration. Part of the
    /// derived run id: repeats must differ in it (or in their files) to be stored as repeats.
    #[serde(default, deserialize_with = "crate::serde_int::deserialize")]
    pub repeat_index: u32,
    /// How many runs (repeats) of this commit the job uploads in all (`benchtrail upload
    /// --repeats N`), in [1, 100]. Until that many runs of the commit are stored on its branch,
    /// the commit's verdict is provisional (`pending_repeats`: nothing fails CI yet); the last
    /// repeat's upload gets the final verdict. Absent: the project's `detection.repeats`
    /// (default 1). Not part of the derived run id.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
    #[schema(minimum = 1, maximum = 100)]
    pub repeats_expected: Option<u32>,
    /// Free tags: at most 128 (`upload_limits::MAX_TAGS`), names of at
    /// most 128 characters, values of at most 1024 (422 at the tag otherwise).
    // (utoipa has no `max_properties` on a field: the bound is in the description only.)
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
}

/// Serde of an optional time with its UTC offset as RFC 3339 text: the offset as given, `Z`
/// for a zero offset, seconds with their fraction only when there is one. Use with
/// `#[serde(with = "benchtrail_core::run::rfc3339_with_offset")]`.
pub mod rfc3339_with_offset {
    use chrono::{DateTime, FixedOffset, SecondsFormat};
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes `Some(t)` as RFC 3339 text and `None` as null.
    pub fn serialize<S: Serializer>(
        t: &Option<DateTime<FixedOffset>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_str(&t.to_rfc3339_opts(SecondsFormat::AutoSi, true)),
            None => s.serialize_none(),
        }
    }

    /// Reads RFC 3339 text (any offset, `Z` included) or null.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<DateTime<FixedOffset>>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|text| {
                text.parse::<DateTime<FixedOffset>>().map_err(|e| {
                    serde::de::Error::custom(format!(
                        "`{text}` is not an RFC 3339 time with an offset (e.g. 2026-11-02T10:00:00+01:00): {e}"
                    ))
                })
            })
            .transpose()
    }
}
