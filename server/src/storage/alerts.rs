//! Alerts: findings of the detection engine that a person may need to look at, with their
//! lifecycle.
//!
//! ```text
//! open ──► acknowledged ──► resolved      (a later commit on the branch returns to the
//!   │            │                          alert's baseline, or a recomputed analysis of the
//!   └────────────┴──► dismissed             alert's commit no longer finds it)
//! ```
//! * `open`: new; `acknowledged`: a person looks into it; `dismissed`: a person decided it is
//!   not a problem (a reason is required); `resolved`: set by benchtrail only, with
//!   `resolved_by` (the commit that returned to the baseline) or without it (the finding
//!   disappeared when the analysis was recomputed, e.g. after an exclusion) and a `reason`.
//! * Improvements are stored as alerts too (so they are explainable and linkable) but are
//!   born `resolved` with the reason "improvement: no triage needed"; they never count in a
//!   verdict.
//! * One alert per (branch, commit, kind, headline series): recomputing a commit's analysis
//!   (another repeat uploaded, a run excluded, a baseline pinned) updates its alerts in place;
//!   a person's `acknowledged`/`dismissed` stays.

use super::codec::*;
use super::db::{self, Conn, DbRow, Param};
use super::store::{page, SqlBuilder};
use super::{Page, StorageError, Store};
use benchtrail_core::Stat;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use uuid::Uuid;

pub use benchtrail_core::wire::{Alert, AlertKind, AlertLinks, AlertStatus};

/// An alert to store (from the analysis of a run).
#[derive(Debug, Clone)]
pub struct NewAlert {
    /// Kind.
    pub kind: AlertKind,
    /// Initial status (`open`; `resolved` for improvements).
    pub status: AlertStatus,
    /// Reason stored with the initial status, if any.
    pub reason: Option<String>,
    /// `warn`/`fail`.
    pub severity: Option<String>,
    /// Every series involved, headline first.
    pub series_ids: Vec<String>,
    /// Headline metric.
    pub metric: String,
    /// Its statistic.
    pub stat: Stat,
    /// SLO profile.
    pub slo_profile: Option<String>,
    /// Series key JSON text.
    pub series_key_json: String,
    /// Cell key.
    pub cell_key: String,
    /// Branch.
    pub branch: String,
    /// Candidate commit.
    pub commit_sha: String,
    /// The run whose analysis produced it.
    pub run_id: Option<Uuid>,
    /// Baseline commits.
    pub baseline_commits: Vec<String>,
    /// Summary sentence.
    pub summary: String,
    /// The finding as JSON.
    pub finding: Value,
    /// Project settings version.
    pub settings_version: i64,
}

impl NewAlert {
    /// The identity that makes a recomputation update rather than add:
    /// `branch|commit|kind|headline series`.
    pub fn dedup_key(&self) -> String {
        format!(
            "{}|{}|{}|{}",
            self.branch,
            self.commit_sha,
            self.kind.as_str(),
            self.series_ids.first().map_or("", String::as_str)
        )
    }
}

/// Filters of [`Store::list_alerts`]; all optional, exact matches.
#[derive(Debug, Clone, Default)]
pub struct AlertFilter {
    /// Status.
    pub status: Option<AlertStatus>,
    /// Kind.
    pub kind: Option<AlertKind>,
    /// Headline metric.
    pub metric: Option<String>,
    /// Branch.
    pub branch: Option<String>,
    /// Candidate commit (full SHA).
    pub commit: Option<String>,
    /// Cell key, exactly.
    pub cell: Option<String>,
    /// Every branch but this one (the alerts page's pull-request section: all but the
    /// project's default branch).
    pub not_branch: Option<String>,
}

const ALERT_COLUMNS: &str = "a.seq, a.id, p.slug, p.repository_url, a.run_id, a.kind, a.status, a.severity, \
     a.series_id, a.metric, a.stat, a.slo_profile, a.series_key_json, a.cell_key, a.branch, a.commit_sha, \
     a.baseline_commits, a.summary, a.finding_json, a.settings_version, a.reason, a.resolved_by, \
     a.triaged_by, a.triaged_at, a.created_at, a.updated_at";

impl Store {
    /// Alerts of a project matching `filter`, newest first. The cursor is the previous page's
    /// `next_cursor`; one that is not gives an empty page. `limit` below 1 counts as 1.
    pub async fn list_alerts(
        &self,
        project_id: i64,
        filter: &AlertFilter,
        cursor: Option<&str>,
        limit: i64,
    ) -> Result<Page<Alert>, StorageError> {
        let limit = limit.max(1);
        let mut q = SqlBuilder::new(&format!(
            "SELECT {ALERT_COLUMNS} FROM alerts a JOIN projects p ON p.id = a.project_id WHERE a.project_id = "
        ));
        q.bind(Param::int(project_id));
        if let Some(s) = filter.status {
            q.push(" AND a.status = ")
                .bind(Param::text(s.as_str().into()));
        }
        if let Some(k) = filter.kind {
            q.push(" AND a.kind = ")
                .bind(Param::text(k.as_str().into()));
        }
        if let Some(m) = &filter.metric {
            q.push(" AND a.metric = ").bind(Param::text(m.clone()));
        }
        if let Some(b) = &filter.branch {
            q.push(" AND a.branch = ").bind(Param::text(b.clone()));
        }
        if let Some(c) = &filter.commit {
            q.push(" AND a.commit_sha = ")
                .bind(Param::text(c.to_ascii_lowercase()));
        }
        if let Some(c) = &filter.cell {
            q.push(" AND a.cell_key = ").bind(Param::text(c.clone()));
        }
        if let Some(b) = &filter.not_branch {
            q.push(" AND a.branch <> ").bind(Param::text(b.clone()));
        }
        if let Some(cursor) = cursor {
            let Ok(seq) = cursor.parse::<i64>() else {
                return Ok(Page {
                    items: Vec::new(),
                    next_cursor: None,
                });
            };
            q.push(" AND a.seq < ").bind(Param::int(seq));
        }
        q.push(" ORDER BY a.seq DESC LIMIT ")
            .bind(Param::int(limit.saturating_add(1)));
        let rows = q.query(self.backend()).fetch_all(&self.pool).await?;
        let seqs = rows
            .iter()
            .map(|row| row.try_get::<i64, _>("seq"))
            .collect::<Result<Vec<_>, _>>()?;
        let alerts = seqs.into_iter().zip(self.alerts_from_rows(&rows).await?);
        Ok(page(
            alerts.collect(),
            limit,
            |(seq, _)| seq.to_string(),
            |(_, a)| a,
        ))
    }

    /// Alerts of a run's commit on the run's branch (what its analysis found), oldest first.
    pub async fn run_alerts(&self, run_id: Uuid) -> Result<Vec<Alert>, StorageError> {
        Ok(self
            .runs_alerts(&[run_id])
            .await?
            .remove(&run_id)
            .unwrap_or_default())
    }

    /// [`Store::run_alerts`] of several runs in one query: by run id, oldest first; a run
    /// whose commit has no alert is absent.
    pub async fn runs_alerts(
        &self,
        run_ids: &[Uuid],
    ) -> Result<HashMap<Uuid, Vec<Alert>>, StorageError> {
        let mut out: HashMap<Uuid, Vec<Alert>> = HashMap::new();
        if run_ids.is_empty() {
            return Ok(out);
        }
        // Bounded IN lists (as `series_groups`); a run's alerts all come in its chunk, in order.
        for chunk in run_ids.chunks(1000) {
            let mut q = SqlBuilder::new(&format!(
                "SELECT {ALERT_COLUMNS}, r.id AS of_run FROM alerts a JOIN projects p ON p.id = a.project_id \
                 JOIN runs r ON r.project_id = a.project_id AND r.branch = a.branch AND r.commit_sha = a.commit_sha \
                 WHERE r.id IN ("
            ));
            q.bind_list(chunk.iter().map(|id| Param::text(id.to_string())));
            q.push(") ORDER BY a.seq");
            let rows = q.query(self.backend()).fetch_all(&self.pool).await?;
            let alerts = self.alerts_from_rows(&rows).await?;
            for (row, alert) in rows.iter().zip(alerts) {
                let run: String = row.try_get("of_run")?;
                out.entry(parse_uuid("of_run", &run)?)
                    .or_default()
                    .push(alert);
            }
        }
        Ok(out)
    }

    /// Alerts that involve a series (as headline or as a trade-off's part), oldest first.
    pub async fn series_alerts(&self, series_id: &str) -> Result<Vec<Alert>, StorageError> {
        let sql = format!(
            "SELECT {ALERT_COLUMNS} FROM alerts a JOIN projects p ON p.id = a.project_id \
             WHERE a.id IN (SELECT s.alert_id FROM alert_series s WHERE s.series_id = $1) ORDER BY a.seq"
        );
        let rows = db::query(&sql)
            .bind(series_id)
            .fetch_all(&self.pool)
            .await?;
        self.alerts_from_rows(&rows).await
    }

    /// One alert.
    pub async fn alert(&self, id: Uuid) -> Result<Option<Alert>, StorageError> {
        let sql = format!(
            "SELECT {ALERT_COLUMNS} FROM alerts a JOIN projects p ON p.id = a.project_id WHERE a.id = $1"
        );
        let row = db::query(&sql)
            .bind(id.to_string())
            .fetch_optional(&self.pool)
            .await?;
        match row {
            Some(row) => Ok(Some(self.alert_from_row(&row).await?)),
            None => Ok(None),
        }
    }

    /// Sets an alert's status and reason (triage, or resolution by benchtrail with
    /// `resolved_by`). Returns the updated alert, or `None` if there is none with `id`.
    pub async fn set_alert_status(
        &self,
        id: Uuid,
        status: AlertStatus,
        reason: Option<&str>,
        resolved_by: Option<&str>,
    ) -> Result<Option<Alert>, StorageError> {
        let mut conn = self.pool.acquire().await?;
        set_status(&mut conn, &id.to_string(), status, reason, resolved_by).await?;
        drop(conn);
        self.alert(id).await
    }

    /// A person's triage: sets an alert's status and reason, clears `resolved_by`, and
    /// records who (`by`) and when. Returns the updated alert, or `None` if there is none
    /// with `id`. Callers go through [`crate::triage`], which checks the status and reason.
    pub async fn triage_alert(
        &self,
        id: Uuid,
        status: AlertStatus,
        reason: Option<&str>,
        by: &str,
    ) -> Result<Option<Alert>, StorageError> {
        let at = now();
        db::query(
            "UPDATE alerts SET status = $1, reason = $2, resolved_by = NULL, triaged_by = $3, \
             triaged_at = $4, updated_at = $5 WHERE id = $6",
        )
        .bind(status.as_str())
        .bind(reason)
        .bind(by)
        .bind(at)
        .bind(at)
        .bind(id.to_string())
        .execute(&self.pool)
        .await?;
        self.alert(id).await
    }

    /// Stores the alerts of one analysis of `commit_sha` on `branch`, in one transaction:
    /// alerts with a known identity ([`NewAlert::dedup_key`]) are updated (finding, summary,
    /// run, settings version; the status is kept, except that a `resolved` one found again is
    /// reopened), new ones are inserted, and active alerts of that commit of the `kinds` given
    /// (and, when `configs` is given, of those configurations: series key JSON; an analysis
    /// of one configuration leaves the others' alerts alone) that this analysis no longer
    /// finds are resolved with `superseded_reason`.
    #[allow(clippy::too_many_arguments)]
    pub async fn save_commit_alerts(
        &self,
        project_id: i64,
        branch: &str,
        commit_sha: &str,
        kinds: &[AlertKind],
        configs: Option<&BTreeSet<String>>,
        alerts: &[NewAlert],
        superseded_reason: &str,
    ) -> Result<(), StorageError> {
        let mut tx = self.begin_write().await?;
        let outcome = write_commit_alerts(
            &mut tx,
            project_id,
            branch,
            commit_sha,
            kinds,
            configs,
            alerts,
            superseded_reason,
        )
        .await;
        match outcome {
            Ok(()) => {
                tx.commit().await?;
                Ok(())
            }
            Err(e) => {
                if let Err(e) = tx.rollback().await {
                    tracing::warn!(error = %e, "rolling back alerts failed");
                }
                Err(e)
            }
        }
    }

    /// Active (open or acknowledged) alerts of a project on `branch` of the given kinds, oldest
    /// first: the candidates for resolution by a later commit.
    pub async fn active_alerts(
        &self,
        project_id: i64,
        branch: &str,
        kinds: &[AlertKind],
    ) -> Result<Vec<Alert>, StorageError> {
        self.alerts_with_status(project_id, branch, "('open', 'acknowledged')", kinds)
            .await
    }

    /// Alerts of `kinds` on `branch` that are not resolved (open, acknowledged or dismissed),
    /// oldest first: the changes a later commit may still carry.
    pub async fn standing_alerts(
        &self,
        project_id: i64,
        branch: &str,
        kinds: &[AlertKind],
    ) -> Result<Vec<Alert>, StorageError> {
        self.alerts_with_status(
            project_id,
            branch,
            "('open', 'acknowledged', 'dismissed')",
            kinds,
        )
        .await
    }

    async fn alerts_with_status(
        &self,
        project_id: i64,
        branch: &str,
        statuses: &str,
        kinds: &[AlertKind],
    ) -> Result<Vec<Alert>, StorageError> {
        let mut q = SqlBuilder::new(&format!(
            "SELECT {ALERT_COLUMNS} FROM alerts a JOIN projects p ON p.id = a.project_id WHERE a.project_id = "
        ));
        q.bind(Param::int(project_id))
            .push(" AND a.branch = ")
            .bind(Param::text(branch.into()))
            .push(&format!(" AND a.status IN {statuses} AND a.kind IN ('-'"));
        for k in kinds {
            q.push(", ").bind(Param::text(k.as_str().into()));
        }
        q.push(") ORDER BY a.seq");
        let rows = q.query(self.backend()).fetch_all(&self.pool).await?;
        self.alerts_from_rows(&rows).await
    }

    /// The alerts of `rows`, with their series read in one query for all of them (a page of
    /// alerts costs two queries, not one per alert).
    async fn alerts_from_rows(&self, rows: &[DbRow]) -> Result<Vec<Alert>, StorageError> {
        let ids = rows
            .iter()
            .map(|row| row.try_get::<String, _>("id"))
            .collect::<Result<Vec<_>, _>>()?;
        let mut series: HashMap<String, Vec<String>> = HashMap::new();
        if !ids.is_empty() {
            let mut q =
                SqlBuilder::new("SELECT alert_id, series_id FROM alert_series WHERE alert_id IN (");
            q.bind_list(ids.iter().map(|id| Param::text(id.clone())));
            q.push(") ORDER BY alert_id, series_id");
            for row in q.query(self.backend()).fetch_all(&self.pool).await? {
                series
                    .entry(row.try_get("alert_id")?)
                    .or_default()
                    .push(row.try_get("series_id")?);
            }
        }
        rows.iter()
            .zip(&ids)
            // `get`, not `remove`: one alert may come in several rows (`runs_alerts`: the
            // alerts of a commit, once per run of it).
            .map(|(row, id)| alert_row(row, series.get(id).cloned().unwrap_or_default()))
            .collect()
    }

    async fn alert_from_row(&self, row: &DbRow) -> Result<Alert, StorageError> {
        let mut alerts = self.alerts_from_rows(std::slice::from_ref(row)).await?;
        Ok(alerts.remove(0))
    }
}

fn alert_row(row: &DbRow, mut series_ids: Vec<String>) -> Result<Alert, StorageError> {
    let id: String = row.try_get("id")?;
    let slug: String = row.try_get("slug")?;
    let repository_url: Option<String> = row.try_get("repository_url")?;
    let kind: String = row.try_get("kind")?;
    let status: String = row.try_get("status")?;
    let stat: String = row.try_get("stat")?;
    let series_id: String = row.try_get("series_id")?;
    let run_id: Option<String> = row.try_get("run_id")?;
    let run_id = run_id.map(|r| parse_uuid("run_id", &r)).transpose()?;
    let commit: String = row.try_get("commit_sha")?;
    let finding_text: String = row.try_get("finding_json")?;
    let finding: Value = parse_json("finding_json", &finding_text)?;
    // The finding's own order (headline first) where it has one.
    if let Some(ids) = finding["series_ids"].as_array() {
        let ordered: Vec<String> = ids
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        if ordered.len() == series_ids.len() {
            series_ids = ordered;
        }
    }
    let baseline: String = row.try_get("baseline_commits")?;
    let key: String = row.try_get("series_key_json")?;
    let series_key: Value = parse_json("series_key_json", &key)?;
    let kind = AlertKind::parse(&kind)
        .ok_or_else(|| StorageError::Corrupt(format!("alerts.kind `{kind}`")))?;
    let branch: String = row.try_get("branch")?;
    let metric: String = row.try_get("metric")?;
    let slo_profile: Option<String> = row.try_get("slo_profile")?;
    Ok(Alert {
        group: benchtrail_core::wire::alert_group(
            &branch,
            &commit,
            &series_key,
            kind,
            &metric,
            slo_profile.as_deref(),
        ),
        links: AlertLinks {
            self_: format!("/api/v1/alerts/{id}"),
            run: run_id.map(|r| format!("/api/v1/runs/{r}")),
            verdict: run_id.map(|r| format!("/api/v1/runs/{r}/verdict")),
            series: format!("/api/v1/projects/{slug}/series/{series_id}"),
            commit: repository_url
                .filter(|u| !u.is_empty())
                .map(|u| format!("{}/commit/{commit}", u.trim_end_matches('/'))),
        },
        id: parse_uuid("id", &id)?,
        project: slug,
        kind,
        status: AlertStatus::parse(&status)
            .ok_or_else(|| StorageError::Corrupt(format!("alerts.status `{status}`")))?,
        severity: row.try_get("severity")?,
        series_id,
        series_ids,
        metric,
        stat: parse_stat(&stat)?,
        slo_profile,
        series_key,
        cell: row.try_get("cell_key")?,
        branch,
        commit,
        run_id,
        baseline_commits: parse_json("baseline_commits", &baseline)?,
        delta_pct: finding["delta_pct"].as_f64(),
        summary: row.try_get("summary")?,
        finding,
        settings_version: row.try_get("settings_version")?,
        reason: row.try_get("reason")?,
        resolved_by: row.try_get("resolved_by")?,
        triaged_by: row.try_get("triaged_by")?,
        triaged_at: row.try_get("triaged_at")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

async fn set_status(
    conn: &mut Conn,
    id: &str,
    status: AlertStatus,
    reason: Option<&str>,
    resolved_by: Option<&str>,
) -> Result<(), StorageError> {
    db::query(
        "UPDATE alerts SET status = $1, reason = $2, resolved_by = $3, updated_at = $4 WHERE id = $5",
    )
    .bind(status.as_str())
    .bind(reason)
    .bind(resolved_by)
    .bind(now())
    .bind(id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn write_commit_alerts(
    conn: &mut Conn,
    project_id: i64,
    branch: &str,
    commit_sha: &str,
    kinds: &[AlertKind],
    configs: Option<&BTreeSet<String>>,
    alerts: &[NewAlert],
    superseded_reason: &str,
) -> Result<(), StorageError> {
    let now = now();
    let mut keys = Vec::with_capacity(alerts.len());
    for a in alerts {
        let key = a.dedup_key();
        keys.push(key.clone());
        let existing: Option<(String, String)> =
            db::query_as("SELECT id, status FROM alerts WHERE project_id = $1 AND dedup_key = $2")
                .bind(project_id)
                .bind(&key)
                .fetch_optional(&mut *conn)
                .await?;
        let run_id = a.run_id.map(|r| r.to_string());
        match existing {
            Some((id, status)) => {
                // A person's triage stays; benchtrail's own resolution is undone when the
                // finding is back.
                let (status, reason) = if status == AlertStatus::Resolved.as_str() {
                    (a.status.as_str().to_string(), a.reason.clone())
                } else {
                    let reason: Option<String> =
                        db::query_scalar("SELECT reason FROM alerts WHERE id = $1")
                            .bind(&id)
                            .fetch_one(&mut *conn)
                            .await?;
                    (status, reason)
                };
                db::query(
                    "UPDATE alerts SET run_id = $1, status = $2, reason = $3, severity = $4, summary = $5, \
                     finding_json = $6, baseline_commits = $7, settings_version = $8, resolved_by = NULL, \
                     updated_at = $9 WHERE id = $10",
                )
                .bind(run_id)
                .bind(status)
                .bind(reason)
                .bind(a.severity.clone())
                .bind(&a.summary)
                .bind(a.finding.to_string())
                .bind(json_text(&a.baseline_commits))
                .bind(a.settings_version)
                .bind(now)
                .bind(&id)
                .execute(&mut *conn)
                .await?;
            }
            None => {
                let id = Uuid::new_v4().to_string();
                db::query(
                    "INSERT INTO alerts (id, project_id, dedup_key, run_id, kind, status, severity, series_id, \
                     metric, stat, slo_profile, series_key_json, cell_key, branch, commit_sha, baseline_commits, \
                     summary, finding_json, settings_version, reason, resolved_by, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, NULL, $21, $22)",
                )
                .bind(&id)
                .bind(project_id)
                .bind(&key)
                .bind(run_id)
                .bind(a.kind.as_str())
                .bind(a.status.as_str())
                .bind(a.severity.clone())
                .bind(a.series_ids.first().cloned().unwrap_or_default())
                .bind(&a.metric)
                .bind(a.stat.to_string())
                .bind(a.slo_profile.clone())
                .bind(&a.series_key_json)
                .bind(&a.cell_key)
                .bind(&a.branch)
                .bind(&a.commit_sha)
                .bind(json_text(&a.baseline_commits))
                .bind(&a.summary)
                .bind(a.finding.to_string())
                .bind(a.settings_version)
                .bind(a.reason.clone())
                .bind(now)
                .bind(now)
                .execute(&mut *conn)
                .await?;
                let mut ids = a.series_ids.clone();
                ids.sort();
                ids.dedup();
                for s in ids {
                    db::query("INSERT INTO alert_series (alert_id, series_id) VALUES ($1, $2)")
                        .bind(&id)
                        .bind(s)
                        .execute(&mut *conn)
                        .await?;
                }
            }
        }
    }
    // Active alerts of this commit that the analysis no longer finds.
    let stale: Vec<(String, String, String, String)> = db::query_as(
        "SELECT id, dedup_key, kind, series_key_json FROM alerts WHERE project_id = $1 AND branch = $2 \
         AND commit_sha = $3 AND status IN ('open', 'acknowledged')",
    )
    .bind(project_id)
    .bind(branch)
    .bind(commit_sha)
    .fetch_all(&mut *conn)
    .await?;
    for (id, key, kind, config) in stale {
        let in_scope = AlertKind::parse(&kind).is_some_and(|k| kinds.contains(&k))
            && configs.is_none_or(|c| c.contains(&config));
        if in_scope && !keys.contains(&key) {
            set_status(
                conn,
                &id,
                AlertStatus::Resolved,
                Some(superseded_reason),
                None,
            )
            .await?;
        }
    }
    Ok(())
}
