//! The points of one series on one branch ([`Store::series_points`]): what the series API and
//! the series page plot.
//!
//! One query reads the series' numbers alone (its values and counts, by the index
//! `metric_values_series_run`), another its confidence intervals (by the partial index
//! `metric_values_series_intervals` over the values that have one: sqlx copies every column
//! of every row, so four mostly-NULL columns in the first query cost a sixth of a long read,
//! BENCHMARKS.md "Session 42"); each point's run (commit, subject, times, repeat index) comes
//! from [`RunMetaCache`](super::run_meta::RunMetaCache), the runs it does not hold read in one
//! query and kept; the project's excluded runs are read each time, since an exclusion can
//! change. So a read of a long history moves its numbers out of the database, not its runs'
//! text again (BENCHMARKS.md "Session 31").

use super::codec::*;
use super::db::{self, DbRow, Param};
use super::run_meta::RunMeta;
use super::store::{stored_interval, SqlBuilder};
use super::{SeriesPoint, StorageError, Store};
use benchtrail_core::metric::Interval;
use rustc_hash::FxHashMap;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Runs read by `seq` per query (bound parameters of an `IN` list).
const RUNS_PER_QUERY: usize = 1000;

/// One stored value of the series, before its run is known.
struct StoredValue {
    run_seq: i64,
    result_id: i64,
    value: f64,
    n: Option<u64>,
    ci: Option<Interval>,
}

impl Store {
    /// The points of a series on a branch, in commit order: the project's commit graph in
    /// ancestry order ([`Store::commit_graph`]: parents first, committer time only between
    /// unrelated commits), then run time, upload order and result; several runs of one commit
    /// give several points. Each point says whether its run is excluded from baselines.
    /// Empty when the series does not exist or has no value on `branch`.
    ///
    /// # Errors
    /// A storage error, or [`StorageError::Corrupt`] for a value whose run is not stored.
    pub async fn series_points(
        &self,
        series_id: &str,
        branch: &str,
    ) -> Result<Vec<SeriesPoint>, StorageError> {
        // Sorted by result (upload order) though the points are sorted again below: on SQLite
        // the sort makes the statement gather every row before it hands over the first, so
        // the rows cross to this task in a burst. Streamed as the index finds them (each a
        // page read), they crossed one at a time, the task woken for each: 1,000–1,300
        // context switches per read of 1,800 points against 460 (BENCHMARKS.md "Session 31").
        //
        // The values and their intervals are read at once, each on a connection of its own:
        // on Postgres every statement is a round trip, and the two overlap.
        let values = async {
            db::query(
                "SELECT mv.run_seq, mv.result_id, mv.value, mv.n \
                 FROM series s JOIN metric_values mv ON mv.series_seq = s.seq \
                 WHERE s.series_id = $1 ORDER BY mv.result_id",
            )
            .bind(series_id)
            .fetch_all(&self.pool)
            .await
            .map_err(StorageError::from)
        };
        let (rows, mut intervals) = tokio::try_join!(values, self.series_intervals(series_id))?;
        let values = rows
            .iter()
            .map(|row| stored_value(row, &mut intervals))
            .collect::<Result<Vec<_>, _>>()?;
        drop(rows);
        let mut seqs: Vec<i64> = values.iter().map(|v| v.run_seq).collect();
        seqs.sort_unstable();
        seqs.dedup();
        let runs = self.runs_meta(&seqs).await?;
        let mut on_branch: Vec<(&StoredValue, &RunMeta)> = Vec::with_capacity(values.len());
        for v in &values {
            let run = runs.get(&v.run_seq).ok_or_else(|| {
                StorageError::Corrupt(format!(
                    "metric value of result {}: no run {}",
                    v.result_id, v.run_seq
                ))
            })?;
            if run.branch == branch {
                on_branch.push((v, run));
            }
        }
        let Some(project_id) = on_branch.first().map(|(_, run)| run.project_id) else {
            return Ok(Vec::new());
        };
        let (graph, excluded) = tokio::try_join!(
            self.commit_graph(project_id),
            self.excluded_run_seqs(project_id)
        )?;
        on_branch.sort_by_cached_key(|(v, run)| {
            (
                graph.position(&run.commit_sha).unwrap_or(usize::MAX),
                run.run_at,
                v.run_seq,
                v.result_id,
            )
        });
        Ok(on_branch
            .into_iter()
            .map(|(v, run)| SeriesPoint {
                commit_sha: run.commit_sha.clone(),
                commit_time: run.commit_time,
                commit_subject: run.commit_subject.clone(),
                run_id: run.id,
                run_at: run.run_at,
                repeat_index: run.repeat_index,
                value: v.value,
                n: v.n,
                ci: v.ci.clone(),
                excluded: excluded.contains(&v.run_seq),
            })
            .collect())
    }

    /// The confidence intervals of the series' values that have one, by result id (the
    /// partial index `metric_values_series_intervals`).
    async fn series_intervals(
        &self,
        series_id: &str,
    ) -> Result<FxHashMap<i64, Interval>, StorageError> {
        let rows = db::query(
            "SELECT mv.result_id, mv.ci_low, mv.ci_high, mv.ci_level, mv.ci_method \
             FROM series s JOIN metric_values mv ON mv.series_seq = s.seq \
             WHERE s.series_id = $1 AND mv.ci_low IS NOT NULL",
        )
        .bind(series_id)
        .fetch_all(&self.pool)
        .await?;
        let mut out = FxHashMap::default();
        for row in &rows {
            if let Some(ci) = stored_interval(row)? {
                out.insert(row.try_get("result_id")?, ci);
            }
        }
        Ok(out)
    }

    /// The runs `seqs` (sorted, without repeats) by seq: from the
    /// [`RunMetaCache`](super::run_meta::RunMetaCache), those it does not hold read and kept.
    async fn runs_meta(&self, seqs: &[i64]) -> Result<HashMap<i64, Arc<RunMeta>>, StorageError> {
        let cached = self.run_meta.get_many(seqs);
        let mut out = HashMap::with_capacity(seqs.len());
        let mut missing = Vec::new();
        for (seq, run) in seqs.iter().zip(cached) {
            match run {
                Some(run) => {
                    out.insert(*seq, run);
                }
                None => missing.push(*seq),
            }
        }
        for chunk in missing.chunks(RUNS_PER_QUERY) {
            let mut q = SqlBuilder::new(
                "SELECT seq, project_id, id, commit_sha, commit_time, commit_time_offset, \
                 commit_subject, branch, run_at, repeat_index FROM runs WHERE seq IN (",
            );
            q.bind_list(chunk.iter().map(|s| Param::int(*s)));
            q.push(")");
            for row in q.query(self.backend()).fetch_all(&self.pool).await? {
                let seq: i64 = row.try_get("seq")?;
                let run = Arc::new(run_meta(&row)?);
                self.run_meta.insert(seq, Arc::clone(&run));
                out.insert(seq, run);
            }
        }
        Ok(out)
    }

    /// The seqs of the project's runs excluded from baselines now. SQLite keeps a `CROSS
    /// JOIN`'s order: from the exclusions (mostly none) to their runs by key, where the inner
    /// join was planned from the project's runs (0.7 ms for no rows at 3,600 runs, every
    /// series read); Postgres plans it as the inner join it is.
    async fn excluded_run_seqs(&self, project_id: i64) -> Result<HashSet<i64>, StorageError> {
        db::query(
            "SELECT r.seq FROM run_exclusions x CROSS JOIN runs r \
             WHERE r.id = x.run_id AND r.project_id = $1",
        )
        .bind(project_id)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|row| Ok(row.try_get("seq")?))
        .collect()
    }
}

/// A row of the values query of [`Store::series_points`], with its interval taken from
/// `intervals` (by result id).
fn stored_value(
    row: &DbRow,
    intervals: &mut FxHashMap<i64, Interval>,
) -> Result<StoredValue, StorageError> {
    let result_id = row.try_get("result_id")?;
    Ok(StoredValue {
        run_seq: row.try_get("run_seq")?,
        result_id,
        value: row.try_get("value")?,
        n: count_from_db(row.try_get("n")?)?,
        ci: intervals.remove(&result_id),
    })
}

/// A row of `runs` as [`RunMeta`].
fn run_meta(row: &DbRow) -> Result<RunMeta, StorageError> {
    let id: String = row.try_get("id")?;
    Ok(RunMeta {
        project_id: row.try_get("project_id")?,
        id: parse_uuid("id", &id)?,
        commit_sha: row.try_get("commit_sha")?,
        commit_time: parse_offset_time(
            "commit_time",
            row.try_get("commit_time")?,
            row.try_get("commit_time_offset")?,
        )?,
        commit_subject: row.try_get("commit_subject")?,
        branch: row.try_get("branch")?,
        run_at: row.try_get("run_at")?,
        repeat_index: row.try_get("repeat_index")?,
    })
}
