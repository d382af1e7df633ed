//! What the detection engine reads and writes besides alerts: the history of series, run
//! exclusions, pinned baselines, and each run's latest analysis (verdict and series states).

use super::codec::*;
use super::commit_graphs::{Fingerprint, FINGERPRINT_SQL};
use super::db::{self, DbRow, Param};
use super::store::{not_held, SqlBuilder};
use super::{CommitRun, SampleColumns, StorageError, Store};
use benchtrail_core::history::{CommitGraph, CommitNode};
use benchtrail_core::report::verdict_basis::VerdictBasis;
pub use benchtrail_core::report::{GroupSeries, HistoryPoint};
use benchtrail_core::report::{RunAnalysis, VerdictLevel, ANALYSIS_SCHEMA};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use uuid::Uuid;

/// A run's exclusion from baselines.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct RunExclusion {
    /// The run.
    pub run_id: Uuid,
    /// Why (as given).
    pub reason: String,
    /// When.
    pub created_at: DateTime<Utc>,
}

/// A run pinned as the baseline of a series.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct BaselinePin {
    /// The series.
    pub series_id: String,
    /// The pinned run; the baseline is its commit's valid runs.
    pub run_id: Uuid,
    /// The pinned run's commit.
    pub commit_sha: String,
    /// When it was pinned.
    pub created_at: DateTime<Utc>,
}

/// The latest analysis of a run.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct StoredAnalysis {
    /// The run.
    pub run_id: Uuid,
    /// `pass`, `warn`, `incomplete` or `fail`, as computed with the analysis (the current
    /// verdict also follows later triage of the commit's alerts: `GET .../verdict`).
    #[schema(value_type = String)]
    pub verdict: VerdictLevel,
    /// Project settings version used.
    pub settings_version: i64,
    /// The analysis (`benchtrail_core::report::RunAnalysis`, serialized; JSON Schema:
    /// `/api/v1/schemas/analysis.json`).
    pub analysis: RunAnalysis,
    /// When it was computed.
    pub analyzed_at: DateTime<Utc>,
}

impl Store {
    /// Every stored value of `series_ids` in the project, on every branch, in commit order
    /// (the project's [`Store::commit_graph`] order; within a commit, run time, upload order,
    /// result id), with the health counts of its result and whether its run is excluded.
    pub async fn series_history(
        &self,
        project_id: i64,
        series_ids: &[String],
    ) -> Result<Vec<HistoryPoint>, StorageError> {
        let graph = self.commit_graph(project_id).await?;
        self.series_history_at(project_id, series_ids, None, &graph)
            .await
    }

    /// [`Store::series_history`] of the runs at `commits` only (every commit when `None`),
    /// ordered by the project's `graph` (read once by the caller for all its groups): what one
    /// group's analysis reads, a window of its history
    /// ([`benchtrail_core::report::window`]), so its cost does not grow with the history.
    pub async fn series_history_at(
        &self,
        project_id: i64,
        series_ids: &[String],
        commits: Option<&[String]>,
        graph: &CommitGraph,
    ) -> Result<Vec<HistoryPoint>, StorageError> {
        let mut runs = WindowRuns::default();
        self.series_history_in(project_id, series_ids, commits, graph, &mut runs)
            .await
    }

    /// [`Store::series_history_at`] for one of several reads of the same analysis: the runs
    /// of a window are read once per analysis, however many of its groups read the same
    /// window (the cells of one configuration mostly do), and kept in `runs`.
    pub async fn series_history_in(
        &self,
        project_id: i64,
        series_ids: &[String],
        commits: Option<&[String]>,
        graph: &CommitGraph,
        runs: &mut WindowRuns,
    ) -> Result<Vec<HistoryPoint>, StorageError> {
        if series_ids.is_empty() || commits.is_some_and(|c| c.is_empty()) {
            return Ok(Vec::new());
        }
        // The analysis of a short history reads all of it (its window is every ancestor):
        // through the runs kept in memory too, or every upload of a young project would read
        // its whole history from the database (600 ms at 50 commits of 18 cells). A long
        // history read whole (a page, or a group without enough valid baseline commits) is
        // read from the database: it would only push the windows out of memory.
        let every_commit: Vec<String>;
        let commits = match commits {
            None if graph.order().nth(WHOLE_HISTORY_FROM_MEMORY).is_none() => {
                every_commit = graph.order().map(str::to_owned).collect();
                Some(every_commit.as_slice())
            }
            commits => commits,
        };
        match commits {
            Some(commits) => {
                self.window_history(project_id, series_ids, commits, graph, runs)
                    .await
            }
            None => {
                let mut points = self.whole_history(project_id, series_ids).await?;
                // Stable: within a commit, the read order (run time, upload order, result id)
                // stays. Cached: one look-up of the commit per point, not two per comparison.
                points.sort_by_cached_key(|p| graph.position(&p.commit_sha).unwrap_or(usize::MAX));
                Ok(points)
            }
        }
    }

    /// The history points of `series_ids` in the runs of `commits`, in history order, then run
    /// time, upload order and result id order. The runs are read each time (their exclusion can
    /// change); their values come from [`RunValuesCache`](super::run_values::RunValuesCache),
    /// and a run not held there is read whole (every series of it: the other groups of the same
    /// upload read the same runs next) and kept.
    async fn window_history(
        &self,
        project_id: i64,
        series_ids: &[String],
        commits: &[String],
        graph: &CommitGraph,
        memo: &mut WindowRuns,
    ) -> Result<Vec<HistoryPoint>, StorageError> {
        let mut key = commits.to_vec();
        key.sort_unstable();
        let window = match memo.0.get(&key) {
            Some(window) => std::sync::Arc::clone(window),
            None => {
                // In history order (stable: run time and upload order within a commit), so the
                // points come out in order: sorting the window's 60 runs once, not its 37,000
                // points for every group.
                let mut runs = self.window_runs(project_id, commits).await?;
                runs.sort_by_cached_key(|r| graph.position(&r.commit_sha).unwrap_or(usize::MAX));
                let ids: Vec<Uuid> = runs.iter().map(|r| r.id).collect();
                let values = self.run_values_of(&ids).await?;
                let window = std::sync::Arc::new(WindowRead { runs, values });
                memo.0.insert(key, std::sync::Arc::clone(&window));
                window
            }
        };
        let (runs, cached) = (&window.runs, &window.values);
        let mut points = Vec::with_capacity(runs.len() * series_ids.len());
        for (run, values) in runs.iter().zip(cached) {
            let first = points.len();
            for series_id in series_ids {
                for v in values.series(series_id) {
                    let result = values.result(v.result_id);
                    points.push(run.point(
                        std::sync::Arc::clone(&v.series_id),
                        v.result_id,
                        v.value,
                        result,
                    ));
                }
            }
            points[first..].sort_by_key(|p| p.result_id);
        }
        Ok(points)
    }

    /// Every metric value of the runs `ids`, in that order (a run without values has none):
    /// from [`RunValuesCache`](super::run_values::RunValuesCache), the runs it does not hold
    /// read in one query and kept there.
    pub(super) async fn run_values_of(
        &self,
        ids: &[Uuid],
    ) -> Result<Vec<std::sync::Arc<super::run_values::CachedRun>>, StorageError> {
        let (mut cached, ticks) = self.run_values.get_many(ids);
        let missing = not_held(ids, &cached);
        let mut loaded = if missing.is_empty() {
            HashMap::new()
        } else {
            self.load_run_values(&missing).await?
        };
        Ok(cached
            .iter_mut()
            .zip(ids)
            .enumerate()
            .map(|(i, (slot, id))| match slot.take() {
                Some(run) => run,
                None => {
                    let run = std::sync::Arc::new(loaded.remove(id).unwrap_or_default());
                    self.run_values
                        .insert(*id, std::sync::Arc::clone(&run), ticks.of(i));
                    run
                }
            })
            .collect())
    }

    /// The runs of the project at `commits` (any branch) in run time and upload order, with
    /// their exclusion as it is now.
    async fn window_runs(
        &self,
        project_id: i64,
        commits: &[String],
    ) -> Result<Vec<HistoryRun>, StorageError> {
        let mut q = SqlBuilder::new(&format!("{HISTORY_RUNS} r.project_id = "));
        q.bind(Param::int(project_id));
        q.push(" AND r.commit_sha IN (");
        q.bind_list(commits.iter().map(|c| Param::text(c.clone())));
        q.push(") ORDER BY r.run_at, r.seq");
        q.query(self.backend())
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(history_run)
            .collect()
    }

    /// Every metric value of the runs `ids`, with their results' details, by run (a run
    /// without values is absent).
    async fn load_run_values(
        &self,
        ids: &[Uuid],
    ) -> Result<HashMap<Uuid, super::run_values::CachedRun>, StorageError> {
        use super::run_values::{CachedRun, CachedValue};
        let mut by_run: HashMap<Uuid, Vec<CachedValue>> = HashMap::new();
        let mut result_run: HashMap<i64, Uuid> = HashMap::new();
        let mut health = ResultHealth::default();
        for chunk in ids.chunks(500) {
            // From each run's results (index of `UNIQUE (run_id, idx)`) to their values
            // (primary key `(result_id, series_seq)`) and each value's series id;
            // `CROSS JOIN` fixes that order on SQLite.
            // `health` names the values `HistoryResult` takes (else NULL): read here, they
            // need no query of their own.
            let mut q = SqlBuilder::new(&format!(
                "SELECT res.run_id, s.series_id, mv.result_id, mv.value, \
                 CASE WHEN s.stat = 'value' AND s.metric IN {HEALTH_METRICS} THEN s.metric END \
                 AS health \
                 FROM results res CROSS JOIN metric_values mv CROSS JOIN series s \
                 WHERE mv.result_id = res.id AND s.seq = mv.series_seq AND res.run_id IN ("
            ));
            q.bind_list(chunk.iter().map(|id| Param::text(id.to_string())));
            q.push(")");
            for row in q.query(self.backend()).fetch_all(&self.pool).await? {
                let run: String = row.try_get("run_id")?;
                let run = parse_uuid("run_id", &run)?;
                let series: String = row.try_get("series_id")?;
                let result_id: i64 = row.try_get("result_id")?;
                let value: f64 = row.try_get("value")?;
                if let Some(metric) = row.try_get::<Option<String>, _>("health")? {
                    health.note(result_id, &metric, value);
                }
                result_run.insert(result_id, run);
                by_run.entry(run).or_default().push(CachedValue {
                    series_id: self.run_values.intern(&series),
                    result_id,
                    value,
                });
            }
        }
        let result_ids: Vec<i64> = result_run.keys().copied().collect();
        let mut results: HashMap<Uuid, HashMap<i64, HistoryResult>> = HashMap::new();
        for (id, result) in self.result_details(&result_ids, health).await? {
            if let Some(run) = result_run.get(&id) {
                results.entry(*run).or_default().insert(id, result);
            }
        }
        Ok(by_run
            .into_iter()
            .map(|(run, values)| {
                let details = results.remove(&run).unwrap_or_default();
                (run, CachedRun::new(values, details))
            })
            .collect())
    }

    /// Every stored value of `series_ids` in the project, in run time, upload order and
    /// result id order (what [`Store::series_history`] reads; not cached, the analysis reads
    /// windows).
    async fn whole_history(
        &self,
        project_id: i64,
        series_ids: &[String],
    ) -> Result<Vec<HistoryPoint>, StorageError> {
        let mut q = SqlBuilder::new(
            "SELECT s.series_id, mv.result_id, r.seq, mv.value \
             FROM series s JOIN metric_values mv ON mv.series_seq = s.seq \
             JOIN runs r ON r.seq = mv.run_seq WHERE r.project_id = ",
        );
        q.bind(Param::int(project_id));
        q.push(" AND s.series_id IN (");
        q.bind_list(series_ids.iter().map(|s| Param::text(s.clone())));
        q.push(") ORDER BY r.run_at, r.seq, mv.result_id");
        let values: Vec<(String, i64, i64, f64)> = q
            .query(self.backend())
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| {
                Ok((
                    row.try_get("series_id")?,
                    row.try_get("result_id")?,
                    row.try_get("seq")?,
                    row.try_get("value")?,
                ))
            })
            .collect::<Result<_, StorageError>>()?;
        let runs = self.history_runs(&values).await?;
        let mut result_ids: Vec<i64> = values.iter().map(|v| v.1).collect();
        result_ids.sort_unstable();
        result_ids.dedup();
        let results = self.history_results(&result_ids).await?;
        values
            .into_iter()
            .map(|(series_id, result_id, seq, value)| {
                let run = runs.get(&seq).ok_or_else(|| {
                    StorageError::Corrupt(format!(
                        "metric value of result {result_id}: no run {seq}"
                    ))
                })?;
                Ok(run.point(series_id.into(), result_id, value, results.get(&result_id)))
            })
            .collect()
    }

    /// The runs of history value rows (`(series, result, run seq, value)`), by `seq`.
    async fn history_runs(
        &self,
        values: &[(String, i64, i64, f64)],
    ) -> Result<HashMap<i64, HistoryRun>, StorageError> {
        let mut seqs: Vec<i64> = values.iter().map(|v| v.2).collect();
        seqs.sort_unstable();
        seqs.dedup();
        let mut runs = HashMap::with_capacity(seqs.len());
        for chunk in seqs.chunks(1000) {
            let mut q = SqlBuilder::new(&format!("{HISTORY_RUNS} r.seq IN ("));
            q.bind_list(chunk.iter().map(|s| Param::int(*s)));
            q.push(")");
            for row in q.query(self.backend()).fetch_all(&self.pool).await? {
                let run = history_run(&row)?;
                runs.insert(run.seq, run);
            }
        }
        Ok(runs)
    }

    /// What the results of history value rows add to their points, by result id: health
    /// counts (`completed`, `failed`), the requests asked for (`num_prompts` of the cell) and
    /// the measured lengths (facts, with the result's total output tokens), for the workload
    /// checks. Counts are read in a query of their own (a correlated subquery per row scanned
    /// `series` once per row on Postgres).
    async fn history_results(
        &self,
        result_ids: &[i64],
    ) -> Result<HashMap<i64, HistoryResult>, StorageError> {
        let mut health = ResultHealth::default();
        for chunk in result_ids.chunks(1000) {
            let mut q = SqlBuilder::new(&format!(
                "SELECT v.result_id, s.metric, v.value FROM metric_values v \
                 JOIN series s ON s.seq = v.series_seq \
                 WHERE s.stat = 'value' AND s.metric IN {HEALTH_METRICS} AND v.result_id IN ("
            ));
            q.bind_list(chunk.iter().map(|id| Param::int(*id)));
            q.push(")");
            for row in q.query(self.backend()).fetch_all(&self.pool).await? {
                health.note(
                    row.try_get("result_id")?,
                    &row.try_get::<String, _>("metric")?,
                    row.try_get("value")?,
                );
            }
        }
        self.result_details(result_ids, health).await
    }

    /// [`Store::history_results`] with the health values known already (read with the
    /// values of their runs): the results' cells and facts.
    async fn result_details(
        &self,
        result_ids: &[i64],
        health: ResultHealth,
    ) -> Result<HashMap<i64, HistoryResult>, StorageError> {
        let ResultHealth {
            mut results,
            output_tokens,
        } = health;
        results.reserve(result_ids.len());
        for chunk in result_ids.chunks(1000) {
            let mut q =
                SqlBuilder::new("SELECT id, cell_json, facts_json FROM results WHERE id IN (");
            q.bind_list(chunk.iter().map(|id| Param::int(*id)));
            q.push(")");
            for row in q.query(self.backend()).fetch_all(&self.pool).await? {
                let id: i64 = row.try_get("id")?;
                let cell: String = row.try_get("cell_json")?;
                let cell: Value = parse_json("cell_json", &cell)?;
                let facts: String = row.try_get("facts_json")?;
                let facts: serde_json::Map<String, Value> =
                    serde_json::from_str(&facts).unwrap_or_default();
                let entry = results.entry(id).or_default();
                entry.num_prompts = cell["num_prompts"].as_f64();
                entry.lengths = benchtrail_core::regression::confounds::RunLengths::from_facts(
                    &facts,
                    output_tokens.get(&id).copied(),
                );
            }
        }
        Ok(results)
    }

    /// Excludes a run from baselines (again: the reason is replaced).
    pub async fn exclude_run(
        &self,
        run_id: Uuid,
        reason: &str,
    ) -> Result<RunExclusion, StorageError> {
        let at = now();
        let id = run_id.to_string();
        let mut tx = self.begin_write().await?;
        db::query("DELETE FROM run_exclusions WHERE run_id = $1")
            .bind(&id)
            .execute(&mut *tx)
            .await?;
        db::query("INSERT INTO run_exclusions (run_id, reason, created_at) VALUES ($1, $2, $3)")
            .bind(&id)
            .bind(reason)
            .bind(at)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(RunExclusion {
            run_id,
            reason: reason.to_string(),
            created_at: at,
        })
    }

    /// Ends a run's exclusion from baselines; false when it was not excluded.
    pub async fn unexclude_run(&self, run_id: Uuid) -> Result<bool, StorageError> {
        let done = db::query("DELETE FROM run_exclusions WHERE run_id = $1")
            .bind(run_id.to_string())
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// A run's exclusion, if it is excluded.
    pub async fn run_exclusion(&self, run_id: Uuid) -> Result<Option<RunExclusion>, StorageError> {
        let row: Option<(String, DateTime<Utc>)> =
            db::query_as("SELECT reason, created_at FROM run_exclusions WHERE run_id = $1")
                .bind(run_id.to_string())
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.map(|(reason, created_at)| RunExclusion {
            run_id,
            reason,
            created_at,
        }))
    }

    /// Pins `run_id` as the baseline of `series_id`'s group, replacing an earlier pin of any
    /// series of that group.
    pub async fn pin_baseline(
        &self,
        project_id: i64,
        series_id: &str,
        run_id: Uuid,
    ) -> Result<BaselinePin, StorageError> {
        let at = now();
        let mut tx = self.begin_write().await?;
        // A group (series key and cell) has one baseline: a pin made through another of its
        // series is replaced.
        db::query(
            "DELETE FROM baseline_pins WHERE project_id = $1 AND series_id IN \
             (SELECT s.series_id FROM series s JOIN series o ON o.project_id = s.project_id \
              AND o.series_key_json = s.series_key_json AND o.cell_key = s.cell_key \
              WHERE o.series_id = $2)",
        )
        .bind(project_id)
        .bind(series_id)
        .execute(&mut *tx)
        .await?;
        db::query(
            "INSERT INTO baseline_pins (project_id, series_id, run_id, created_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(project_id)
        .bind(series_id)
        .bind(run_id.to_string())
        .bind(at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        let commit_sha: String = db::query_scalar("SELECT commit_sha FROM runs WHERE id = $1")
            .bind(run_id.to_string())
            .fetch_one(&self.pool)
            .await?;
        Ok(BaselinePin {
            series_id: series_id.to_string(),
            run_id,
            commit_sha,
            created_at: at,
        })
    }

    /// Removes the pin of `series_id`; false when it had none.
    pub async fn unpin_baseline(
        &self,
        project_id: i64,
        series_id: &str,
    ) -> Result<bool, StorageError> {
        let done = db::query("DELETE FROM baseline_pins WHERE project_id = $1 AND series_id = $2")
            .bind(project_id)
            .bind(series_id)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// The pinned baselines of a project, by series id.
    pub async fn baseline_pins(
        &self,
        project_id: i64,
    ) -> Result<HashMap<String, BaselinePin>, StorageError> {
        let rows = db::query(
            "SELECT b.series_id, b.run_id, r.commit_sha, b.created_at FROM baseline_pins b \
             JOIN runs r ON r.id = b.run_id WHERE b.project_id = $1",
        )
        .bind(project_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let run_id: String = row.try_get("run_id")?;
                let pin = BaselinePin {
                    series_id: row.try_get("series_id")?,
                    run_id: parse_uuid("run_id", &run_id)?,
                    commit_sha: row.try_get("commit_sha")?,
                    created_at: row.try_get("created_at")?,
                };
                Ok((pin.series_id.clone(), pin))
            })
            .collect()
    }

    /// Stores (replaces) a run's analysis ([`Store::put_run_analyses`] of one).
    pub async fn put_run_analysis(
        &self,
        verdict: VerdictLevel,
        analysis: &RunAnalysis,
    ) -> Result<(), StorageError> {
        self.put_run_analyses(&[(verdict, analysis)]).await
    }

    /// Stores (replaces) the analyses of several runs, each with its verdict, in one statement:
    /// an analysis of a commit writes every run of it, and a statement per run (a transaction
    /// deleting and inserting its row) was a fifth of an upload's round trips to the database
    /// (BENCHMARKS.md "Session 38"). A row written before migration 0013 loses its
    /// `analysis_json` with its replacement.
    ///
    /// # Errors
    /// [`StorageError::Corrupt`] when an analysis does not serialize; a database error.
    pub async fn put_run_analyses(
        &self,
        analyses: &[(VerdictLevel, &RunAnalysis)],
    ) -> Result<(), StorageError> {
        // Seven values a row: far below either database's limit on bound values for any
        // commit's runs, but bounded all the same.
        for chunk in analyses.chunks(1000) {
            let at = now();
            let mut q = SqlBuilder::new(
                "INSERT INTO run_analyses (run_id, verdict, settings_version, analysis_gz, \
                 verdict_basis_gz, analyzed_at, analysis_schema) VALUES ",
            );
            for (i, (verdict, analysis)) in chunk.iter().enumerate() {
                let id = analysis.run_id.to_string();
                let json = serde_json::to_vec(analysis)
                    .map_err(|e| StorageError::Corrupt(format!("analysis of run {id}: {e}")))?;
                let basis = serde_json::to_vec(&VerdictBasis::of(analysis)).map_err(|e| {
                    StorageError::Corrupt(format!("verdict basis of run {id}: {e}"))
                })?;
                q.push(if i == 0 { "(" } else { ", (" });
                q.bind(Param::text(id)).push(", ");
                q.bind(Param::text(verdict.as_str().to_string())).push(", ");
                q.bind(Param::int(analysis.settings_version)).push(", ");
                q.bind(Param::OwnedBytes(Some(compress_json(&json))))
                    .push(", ");
                q.bind(Param::OwnedBytes(Some(compress_json(&basis))))
                    .push(", ");
                q.bind(Param::time(at)).push(", ");
                q.bind(Param::int(i64::from(analysis.schema))).push(")");
            }
            q.push(
                " ON CONFLICT (run_id) DO UPDATE SET verdict = excluded.verdict, \
                 settings_version = excluded.settings_version, analysis_json = NULL, \
                 analysis_gz = excluded.analysis_gz, verdict_basis_gz = excluded.verdict_basis_gz, \
                 analyzed_at = excluded.analyzed_at, analysis_schema = excluded.analysis_schema",
            );
            q.query(self.backend()).execute(&self.pool).await?;
        }
        Ok(())
    }

    /// A run's latest analysis, if it was analyzed with the current
    /// [`ANALYSIS_SCHEMA`]. An analysis of an older schema counts as none: the server
    /// recomputes those at start-up ([`Store::projects_with_stale_analyses`]).
    pub async fn run_analysis(&self, run_id: Uuid) -> Result<Option<StoredAnalysis>, StorageError> {
        let row = db::query(
            "SELECT verdict, settings_version, analysis_json, analysis_gz, analyzed_at FROM run_analyses \
             WHERE run_id = $1 AND analysis_schema = $2",
        )
        .bind(run_id.to_string())
        .bind(i64::from(ANALYSIS_SCHEMA))
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let verdict: String = row.try_get("verdict")?;
        let analysis: RunAnalysis = decode_analysis_json(run_id, &row)?;
        Ok(Some(StoredAnalysis {
            run_id,
            verdict: serde_json::from_value(Value::String(verdict.clone())).map_err(|_| {
                StorageError::Corrupt(format!("verdict {verdict:?} of run {run_id}"))
            })?,
            settings_version: row.try_get("settings_version")?,
            analysis,
            analyzed_at: row.try_get("analyzed_at")?,
        }))
    }

    /// What the verdict of a run reads of its latest analysis ([`VerdictBasis`]), if it was
    /// analyzed with the current [`ANALYSIS_SCHEMA`]: the stored basis (10–12 KB gzip at 18
    /// cells), or, for a row written before migration 0018, the basis decoded from the whole
    /// analysis.
    pub async fn run_verdict_basis(
        &self,
        run_id: Uuid,
    ) -> Result<Option<Arc<VerdictBasis>>, StorageError> {
        Ok(self.run_verdict_bases(&[run_id]).await?.remove(&run_id))
    }

    /// [`Store::run_verdict_basis`] of several runs in one query: by run id, absent for a run
    /// without an analysis of the current schema. For pages that list many runs' verdicts.
    /// A basis whose stored bytes were decoded before is not decoded again
    /// ([`super::verdict_bases::VerdictBasisCache`]).
    pub async fn run_verdict_bases(
        &self,
        run_ids: &[Uuid],
    ) -> Result<HashMap<Uuid, Arc<VerdictBasis>>, StorageError> {
        let mut out = HashMap::with_capacity(run_ids.len());
        if run_ids.is_empty() {
            return Ok(out);
        }
        // Bounded IN lists: SQLite allows 32766 parameters, Postgres 65535.
        for chunk in run_ids.chunks(1000) {
            let mut q = SqlBuilder::new(
                "SELECT run_id, verdict_basis_gz, \
                 CASE WHEN verdict_basis_gz IS NULL THEN analysis_gz END AS analysis_gz, \
                 CASE WHEN verdict_basis_gz IS NULL AND analysis_gz IS NULL THEN analysis_json END \
                 AS analysis_json FROM run_analyses WHERE analysis_schema = ",
            );
            q.bind(Param::int(i64::from(ANALYSIS_SCHEMA)));
            q.push(" AND run_id IN (");
            q.bind_list(chunk.iter().map(|id| Param::text(id.to_string())));
            q.push(")");
            for row in q.query(self.backend()).fetch_all(&self.pool).await? {
                let run_id: String = row.try_get("run_id")?;
                let run_id = parse_uuid("run_id", &run_id)?;
                let basis = match row.try_get::<Option<Vec<u8>>, _>("verdict_basis_gz")? {
                    Some(gz) => match self.verdict_bases.get(run_id, &gz) {
                        Some(basis) => basis,
                        None => {
                            let basis = Arc::new(decode_verdict_basis(run_id, &gz)?);
                            self.verdict_bases.insert(run_id, gz, Arc::clone(&basis));
                            basis
                        }
                    },
                    // A row written before migration 0018: the basis is part of the analysis.
                    None => Arc::new(decode_analysis_json(run_id, &row)?),
                };
                out.insert(run_id, basis);
            }
        }
        Ok(out)
    }

    /// Slugs of the projects holding a run analysis of a schema other than
    /// [`ANALYSIS_SCHEMA`] (written by an older server): they are recomputed at start-up.
    pub async fn projects_with_stale_analyses(&self) -> Result<Vec<String>, StorageError> {
        let rows = db::query(
            "SELECT DISTINCT p.slug FROM run_analyses a JOIN runs r ON r.id = a.run_id \
             JOIN projects p ON p.id = r.project_id WHERE a.analysis_schema <> $1 ORDER BY p.slug",
        )
        .bind(i64::from(ANALYSIS_SCHEMA))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| Ok(row.try_get::<String, _>("slug")?))
            .collect()
    }

    /// The decoded per-request samples of the results `result_ids` that have any, by result id
    /// (one query for all of them but those already known to have none).
    pub async fn samples_of_results(
        &self,
        result_ids: &[i64],
    ) -> Result<HashMap<i64, benchtrail_core::samples::RequestSamples>, StorageError> {
        let mut out = HashMap::new();
        let unknown = self.run_values.may_have_samples(result_ids);
        // Bounded IN lists: SQLite allows 32766 parameters, Postgres 65535.
        for chunk in unknown.chunks(1000) {
            let mut q = SqlBuilder::new(&format!(
                "SELECT rs.result_id, {} FROM result_samples rs WHERE rs.result_id IN (",
                samples_sql(SampleColumns::All)
            ));
            q.bind_list(chunk.iter().map(|id| Param::int(*id)));
            q.push(")");
            for row in q.query(self.backend()).fetch_all(&self.pool).await? {
                out.insert(
                    row.try_get("result_id")?,
                    samples_of_row(&row, SampleColumns::All)?,
                );
            }
        }
        self.run_values
            .note_without_samples(unknown.iter().copied().filter(|id| !out.contains_key(id)));
        Ok(out)
    }

    /// Ids of the runs of a project on `branch` at `commit_sha`, in upload order.
    pub async fn commit_runs(
        &self,
        project_id: i64,
        branch: &str,
        commit_sha: &str,
    ) -> Result<Vec<Uuid>, StorageError> {
        let ids: Vec<String> = db::query_scalar(
            "SELECT id FROM runs WHERE project_id = $1 AND branch = $2 AND commit_sha = $3 ORDER BY seq",
        )
        .bind(project_id)
        .bind(branch)
        .bind(commit_sha)
        .fetch_all(&self.pool)
        .await?;
        ids.iter().map(|i| parse_uuid("id", i)).collect()
    }

    /// The newest upload (highest `seq`) among the runs of the project on `branch` at any of
    /// `commits`; `None` when none has a run there (or `commits` is empty). One query,
    /// whatever the number of commits.
    pub async fn newest_commit_run(
        &self,
        project_id: i64,
        branch: &str,
        commits: &[&str],
    ) -> Result<Option<Uuid>, StorageError> {
        if commits.is_empty() {
            return Ok(None);
        }
        let mut q = SqlBuilder::new("SELECT id FROM runs WHERE project_id = ");
        q.bind(Param::int(project_id));
        q.push(" AND branch = ")
            .bind(Param::text(branch.to_string()));
        q.push(" AND commit_sha IN (");
        q.bind_list(commits.iter().map(|c| Param::text(c.to_string())));
        q.push(") ORDER BY seq DESC LIMIT 1");
        let row = q.query(self.backend()).fetch_optional(&self.pool).await?;
        row.map(|row| {
            let id: String = row.try_get("id")?;
            parse_uuid("id", &id)
        })
        .transpose()
    }

    /// The runs of `commit_sha` on `branch`, in upload order, each with its results' series
    /// ([`CommitRun`]): two queries, whatever the number of runs and results.
    pub async fn commit_runs_with_series(
        &self,
        project_id: i64,
        branch: &str,
        commit_sha: &str,
    ) -> Result<Vec<CommitRun>, StorageError> {
        let sql = format!(
            "SELECT {} FROM runs r JOIN projects p ON p.id = r.project_id \
             WHERE r.project_id = $1 AND r.branch = $2 AND r.commit_sha = $3 ORDER BY r.seq",
            super::store::RUN_COLUMNS
        );
        let rows = db::query(&sql)
            .bind(project_id)
            .bind(branch)
            .bind(commit_sha)
            .fetch_all(&self.pool)
            .await?;
        let mut runs = rows
            .iter()
            .map(|row| {
                Ok(CommitRun {
                    summary: super::store::run_summary(row)?.1,
                    result_series: Vec::new(),
                })
            })
            .collect::<Result<Vec<_>, StorageError>>()?;
        if runs.is_empty() {
            return Ok(runs);
        }
        let rows = db::query(
            "SELECT res.run_id, res.idx, s.series_id, s.metric, s.stat FROM runs r \
             JOIN results res ON res.run_id = r.id JOIN metric_values mv ON mv.result_id = res.id \
             JOIN series s ON s.seq = mv.series_seq \
             WHERE r.project_id = $1 AND r.branch = $2 AND r.commit_sha = $3",
        )
        .bind(project_id)
        .bind(branch)
        .bind(commit_sha)
        .fetch_all(&self.pool)
        .await?;
        // (run, result index) → (the metric's order key, series id)
        let mut by_result: BTreeMap<(String, i64), Vec<((usize, String, (u8, u64)), String)>> =
            BTreeMap::new();
        for row in &rows {
            let metric: String = row.try_get("metric")?;
            let stat = parse_stat(&row.try_get::<String, _>("stat")?)?;
            let key = (
                benchtrail_core::metric::vocabulary_rank(&metric),
                metric,
                benchtrail_core::metric::stat_rank(&stat),
            );
            by_result
                .entry((row.try_get("run_id")?, row.try_get("idx")?))
                .or_default()
                .push((key, row.try_get("series_id")?));
        }
        for ((run_id, _), mut series) in by_result {
            series.sort();
            if let Some(run) = runs.iter_mut().find(|r| r.summary.id.to_string() == run_id) {
                run.result_series
                    .push(series.into_iter().map(|(_, id)| id).collect());
            }
        }
        Ok(runs)
    }

    /// The (series key JSON, cell key) of every result of `commit_sha`'s runs on `branch`,
    /// runs a person excluded left out, sorted and without duplicates: the cells a later
    /// commit is expected to have.
    pub async fn commit_cells(
        &self,
        project_id: i64,
        branch: &str,
        commit_sha: &str,
    ) -> Result<Vec<(String, String)>, StorageError> {
        let rows = db::query(
            "SELECT DISTINCT s.series_key_json, s.cell_key FROM runs r \
             JOIN results res ON res.run_id = r.id JOIN metric_values mv ON mv.result_id = res.id \
             JOIN series s ON s.seq = mv.series_seq \
             WHERE r.project_id = $1 AND r.branch = $2 AND r.commit_sha = $3 \
             AND NOT EXISTS (SELECT 1 FROM run_exclusions x WHERE x.run_id = r.id) \
             ORDER BY s.series_key_json, s.cell_key",
        )
        .bind(project_id)
        .bind(branch)
        .bind(commit_sha)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| Ok((row.try_get("series_key_json")?, row.try_get("cell_key")?)))
            .collect()
    }
}

impl Store {
    /// Every series with the same project, series key and cell as `series_id` (itself
    /// included), ordered by metric, statistic and id.
    pub async fn series_group(&self, series_id: &str) -> Result<Vec<GroupSeries>, StorageError> {
        let groups = self.series_groups(&[series_id.to_string()]).await?;
        Ok(groups.into_values().next().unwrap_or_default())
    }

    /// The groups of `series_ids` ([`Store::series_group`] of each, one query for all): every
    /// series with the same project, series key and cell as one of them, by (series key JSON,
    /// cell key), each group ordered by metric, statistic and id. An analysis asks for the
    /// groups of all results of its commit at once (one query instead of one per cell).
    pub async fn series_groups(
        &self,
        series_ids: &[String],
    ) -> Result<BTreeMap<(String, String), Vec<GroupSeries>>, StorageError> {
        let mut groups: BTreeMap<(String, String), Vec<GroupSeries>> = BTreeMap::new();
        let mut seen: HashSet<String> = HashSet::new();
        // Bounded IN lists: SQLite allows 32766 parameters, Postgres 65535.
        for chunk in series_ids.chunks(1000) {
            let mut q = SqlBuilder::new(
                "SELECT DISTINCT s.series_id, s.metric, s.stat, s.slo_profile, s.series_key_json, s.cell_key \
                 FROM series s JOIN series o ON o.project_id = s.project_id \
                 AND o.series_key_json = s.series_key_json AND o.cell_key = s.cell_key \
                 WHERE o.series_id IN (",
            );
            q.bind_list(chunk.iter().map(|id| Param::text(id.clone())));
            q.push(") ORDER BY s.metric, s.stat, s.series_id");
            for row in q.query(self.backend()).fetch_all(&self.pool).await? {
                let series = group_series(&row)?;
                if seen.insert(series.series_id.clone()) {
                    groups
                        .entry((series.series_key_json.clone(), series.cell_key.clone()))
                        .or_default()
                        .push(series);
                }
            }
        }
        // Any member asked for brings its whole group, in order, in one chunk; a later chunk's
        // copy of it is skipped above. So each group keeps the query's order.
        Ok(groups)
    }

    /// The (series key, cell key) of every group of the project with a value at a commit other
    /// than `except_commit`: where the nearest series of a group without a baseline is looked
    /// for.
    pub async fn groups_with_history(
        &self,
        project_id: i64,
        except_commit: &str,
    ) -> Result<Vec<(String, String)>, StorageError> {
        let rows: Vec<(String, String)> = db::query_as(
            "SELECT DISTINCT s.series_key_json, s.cell_key FROM series s WHERE s.project_id = $1 \
             AND EXISTS (SELECT 1 FROM metric_values mv JOIN runs r ON r.seq = mv.run_seq \
             WHERE mv.series_seq = s.seq AND r.commit_sha <> $2) \
             ORDER BY s.series_key_json, s.cell_key",
        )
        .bind(project_id)
        .bind(except_commit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows)
    }

    /// Distinct (branch, commit) pairs of a project's runs, in commit order (the
    /// [`Store::commit_graph`] order; a commit on several branches, by its first upload).
    pub async fn project_commits(
        &self,
        project_id: i64,
    ) -> Result<Vec<(String, String)>, StorageError> {
        let mut rows: Vec<(String, String)> = db::query_as(
            "SELECT branch, commit_sha FROM runs WHERE project_id = $1 \
             GROUP BY branch, commit_sha ORDER BY MIN(seq)",
        )
        .bind(project_id)
        .fetch_all(&self.pool)
        .await?;
        let graph = self.commit_graph(project_id).await?;
        rows.sort_by_key(|(_, sha)| graph.position(sha).unwrap_or(usize::MAX));
        Ok(rows)
    }

    /// The project's commit graph: every commit a run measured, with the parents and time it
    /// was uploaded with, in ancestry order (see [`benchtrail_core::history`]). The tie-break
    /// time is the commit time, else the first run's time. Kept between calls while the
    /// project's commits are unchanged ([`super::commit_graphs`]): one aggregate query then.
    pub async fn commit_graph(&self, project_id: i64) -> Result<Arc<CommitGraph>, StorageError> {
        let fingerprint = self.commits_fingerprint(project_id).await?;
        let kept = match self.commit_graphs.get(project_id) {
            Some((at, graph)) if at == fingerprint => return Ok(graph),
            kept => kept,
        };
        // Read after the fingerprint: a commit stored in between makes the kept graph newer
        // than its fingerprint, so the next call reads it again; never older.
        let mut nodes = None;
        if let Some((at, graph)) = kept {
            nodes = self
                .commits_after(project_id, at, &graph, fingerprint)
                .await?;
        }
        let nodes = match nodes {
            Some(nodes) => nodes,
            None => self.commit_nodes(project_id, None).await?.0,
        };
        let graph = Arc::new(CommitGraph::new(nodes));
        self.commit_graphs
            .put(project_id, fingerprint, graph.clone());
        Ok(graph)
    }

    /// The counts that change whenever the project's commits do ([`Fingerprint`]).
    async fn commits_fingerprint(&self, project_id: i64) -> Result<Fingerprint, StorageError> {
        let row = db::query(FINGERPRINT_SQL)
            .bind(project_id)
            .fetch_one(&self.pool)
            .await?;
        Ok(Fingerprint {
            commits: row.try_get("commits")?,
            with_parents: row.try_get("with_parents")?,
            with_time: row.try_get("with_time")?,
        })
    }

    /// The nodes of `kept` (read at fingerprint `at`) and the commits stored since, when those
    /// are all that changed: the rows after its newest first run are the new commits, and they
    /// account for every commit, parent list and commit time `now` counts more than `at` (a
    /// stored commit only ever gains its parents or its time, each counted, and never changes
    /// its first run), and the fingerprint read again after them is still `now` (the counts
    /// only grow, so nothing was stored while they were read: the new rows and `now` are of
    /// one moment). `None` otherwise (a commit stored with an earlier first run by a
    /// concurrent upload, say): the caller reads every commit. So an upload of a new commit
    /// reads one row, not the whole history (BENCHMARKS.md "Session 31").
    async fn commits_after(
        &self,
        project_id: i64,
        at: Fingerprint,
        kept: &CommitGraph,
        now: Fingerprint,
    ) -> Result<Option<Vec<CommitNode>>, StorageError> {
        if now.commits <= at.commits {
            return Ok(None);
        }
        let newest = kept
            .nodes()
            .iter()
            .map(|n| n.first_seq)
            .max()
            .unwrap_or(i64::MIN);
        let (new, with_time) = self.commit_nodes(project_id, Some(newest)).await?;
        let with_parents = new.iter().filter(|n| !n.parents.is_empty()).count() as i64;
        let explains = new.len() as i64 == now.commits - at.commits
            && with_parents == now.with_parents - at.with_parents
            && with_time == now.with_time - at.with_time
            && self.commits_fingerprint(project_id).await? == now;
        Ok(explains.then(|| kept.nodes().iter().cloned().chain(new).collect()))
    }

    /// The project's commits as graph nodes, in first-run order, and how many of them have a
    /// commit time; `after`: only those whose first run is after that run sequence number.
    async fn commit_nodes(
        &self,
        project_id: i64,
        after: Option<i64>,
    ) -> Result<(Vec<CommitNode>, i64), StorageError> {
        let rows = db::query(
            "SELECT sha, parent_shas, commit_time, first_run_at, first_seq FROM commits \
             WHERE project_id = $1 AND first_seq > $2 ORDER BY first_seq",
        )
        .bind(project_id)
        .bind(after.unwrap_or(i64::MIN))
        .fetch_all(&self.pool)
        .await?;
        let mut with_time = 0;
        let nodes = rows
            .iter()
            .map(|row| {
                let parents: String = row.try_get("parent_shas")?;
                let time = match row.try_get::<Option<DateTime<Utc>>, _>("commit_time")? {
                    Some(t) => {
                        with_time += 1;
                        t
                    }
                    None => row.try_get("first_run_at")?,
                };
                Ok(CommitNode {
                    sha: row.try_get("sha")?,
                    parents: parse_json("parent_shas", &parents)?,
                    time,
                    first_seq: row.try_get("first_seq")?,
                })
            })
            .collect::<Result<Vec<_>, StorageError>>()?;
        Ok((nodes, with_time))
    }
}

/// The verdict basis of run `run_id` from its `verdict_basis_gz` bytes.
fn decode_verdict_basis(run_id: Uuid, gz: &[u8]) -> Result<VerdictBasis, StorageError> {
    let json = decompress_column("verdict_basis_gz", gz)?;
    serde_json::from_slice(&json)
        .map_err(|e| StorageError::Corrupt(format!("verdict_basis_gz of run {run_id}: {e}")))
}

/// The analysis a `run_analyses` row holds, decoded as `T`: the whole [`RunAnalysis`], or a
/// part of it whose JSON is a subset ([`VerdictBasis`]). Gzip-compressed JSON in `analysis_gz`,
/// or plain JSON in `analysis_json` as servers before migration 0013 wrote it (such a row is
/// replaced, in the compressed form, at the run's next analysis).
fn decode_analysis_json<T: serde::de::DeserializeOwned>(
    run_id: Uuid,
    row: &DbRow,
) -> Result<T, StorageError> {
    let (column, json) = match row.try_get::<Option<Vec<u8>>, _>("analysis_gz")? {
        Some(gz) => ("analysis_gz", decompress_column("analysis_gz", &gz)?),
        None => {
            let text: Option<String> = row.try_get("analysis_json")?;
            let text = text.ok_or_else(|| {
                StorageError::Corrupt(format!("run_analyses of run {run_id}: no analysis"))
            })?;
            ("analysis_json", text.into_bytes())
        }
    };
    serde_json::from_slice(&json)
        .map_err(|e| StorageError::Corrupt(format!("{column} of run {run_id}: {e}")))
}

/// Up to how many commits a whole history ([`Store::series_history_at`] without `commits`) is
/// read through the runs kept in memory: at 18 cells × 34 values, 128 commits are 78,000 of
/// the 150,000 values held at most.
const WHOLE_HISTORY_FROM_MEMORY: usize = 128;

/// What [`history_run`] decodes, up to the condition that picks the runs: a run's columns its
/// history points carry, with its exclusion as it is now.
const HISTORY_RUNS: &str = "SELECT r.seq, r.id, r.commit_sha, r.branch, \
     (SELECT COUNT(*) FROM run_exclusions x WHERE x.run_id = r.id) AS excluded \
     FROM runs r WHERE";

/// The runs of the windows one analysis has read ([`Store::series_history_in`]), by the
/// window's commits (sorted): read once per analysis, with their exclusion as it was then.
/// Start one per analysis or change-point scan; never keep it across them (an exclusion
/// changes runs).
#[derive(Debug, Default)]
pub struct WindowRuns(HashMap<Vec<String>, std::sync::Arc<WindowRead>>);

/// One window of [`WindowRuns`]: its runs in history order and their values, held for every
/// group that reads the same window. Held here rather than looked up in the
/// [`RunValuesCache`](super::run_values::RunValuesCache) again for each group: a change-point
/// scan's window of 200 commits × 2 configurations (245,000 values) does not fit the cache,
/// so each of its 36 groups loaded again from the database the runs the group before it had
/// pushed out (an 11 s scan at 1,800 commits of issue 12's data set).
#[derive(Debug)]
struct WindowRead {
    runs: Vec<HistoryRun>,
    values: Vec<std::sync::Arc<super::run_values::CachedRun>>,
}

/// What a run adds to each of its history points ([`Store::series_history_at`]).
#[derive(Debug)]
struct HistoryRun {
    seq: i64,
    id: Uuid,
    /// Shared by every point of the run.
    commit_sha: std::sync::Arc<str>,
    /// Shared by every point of the run.
    branch: std::sync::Arc<str>,
    excluded: bool,
}

impl HistoryRun {
    /// The point of `value` of `series_id` in result `result_id` of this run, with what the
    /// result adds (`None`: nothing stored for it).
    fn point(
        &self,
        series_id: std::sync::Arc<str>,
        result_id: i64,
        value: f64,
        result: Option<&HistoryResult>,
    ) -> HistoryPoint {
        let none = HistoryResult::default();
        let result = result.unwrap_or(&none);
        HistoryPoint {
            series_id,
            result_id,
            run_id: self.id,
            commit_sha: std::sync::Arc::clone(&self.commit_sha),
            branch: std::sync::Arc::clone(&self.branch),
            seq: self.seq,
            value,
            completed: result.completed,
            failed: result.failed,
            num_prompts: result.num_prompts,
            excluded: self.excluded,
            lengths: result.lengths.clone(),
        }
    }
}

/// A row of `series` as one series of its group.
fn group_series(row: &DbRow) -> Result<GroupSeries, StorageError> {
    let stat: String = row.try_get("stat")?;
    Ok(GroupSeries {
        series_id: row.try_get("series_id")?,
        metric: row.try_get("metric")?,
        stat: parse_stat(&stat)?,
        slo_profile: row.try_get("slo_profile")?,
        series_key_json: row.try_get("series_key_json")?,
        cell_key: row.try_get("cell_key")?,
    })
}

/// A row of [`HISTORY_RUNS`].
fn history_run(row: &DbRow) -> Result<HistoryRun, StorageError> {
    let id: String = row.try_get("id")?;
    Ok(HistoryRun {
        seq: row.try_get("seq")?,
        id: parse_uuid("id", &id)?,
        commit_sha: row.try_get::<String, _>("commit_sha")?.into(),
        branch: row.try_get::<String, _>("branch")?.into(),
        excluded: row.try_get::<i64, _>("excluded")? > 0,
    })
}

/// What a result adds to each of its history points ([`Store::series_history_at`]).
#[derive(Debug, Clone, Default)]
pub(super) struct HistoryResult {
    pub(super) completed: Option<f64>,
    pub(super) failed: Option<f64>,
    pub(super) num_prompts: Option<f64>,
    pub(super) lengths: benchtrail_core::regression::confounds::RunLengths,
}

/// The `stat = 'value'` series whose values [`HistoryResult`] takes from a result's values
/// (an SQL list).
const HEALTH_METRICS: &str = "('completed', 'failed', 'total_output_tokens')";

/// The health values of results as read ([`ResultHealth::note`]), before their details.
#[derive(Default)]
struct ResultHealth {
    /// `completed` and `failed` by result id.
    results: HashMap<i64, HistoryResult>,
    /// `total_output_tokens` by result id.
    output_tokens: HashMap<i64, f64>,
}

impl ResultHealth {
    /// Notes `value` of result `result_id`'s series `metric` (one of [`HEALTH_METRICS`]).
    fn note(&mut self, result_id: i64, metric: &str, value: f64) {
        match metric {
            "completed" => self.results.entry(result_id).or_default().completed = Some(value),
            "failed" => self.results.entry(result_id).or_default().failed = Some(value),
            _ => {
                self.output_tokens.insert(result_id, value);
            }
        }
    }
}
