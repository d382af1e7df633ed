//! An upload's results, series definitions and metric values in multi-row INSERTs: one
//! statement per few hundred rows instead of one round trip per row. An 18-cell vLLM upload
//! holds 18 results and 612 values, and each value used to be two statements (the series'
//! `ON CONFLICT DO NOTHING` and the value), so ingest was bound by round trips, most of all on
//! Postgres.

use super::codec::count_to_db;
use super::db::{Conn, Param};
use super::model::{NewMetric, NewResult, NewSeries};
use super::store::SqlBuilder;
use super::StorageError;
use std::collections::{HashMap, HashSet};

/// Rows per statement: far below SQLite's 32,766 parameters (14 columns × 200 = 2,800) and
/// Postgres's 65,535, large enough that a big upload takes a handful of statements.
const ROWS: usize = 200;

/// Stores the rows of the results of run `run_id` (number `i` of `results` as `idx` i) and
/// returns their `results.id`s in the order of `results`. One statement for up to [`ROWS`]
/// results: on Postgres each statement is a round trip, and one per result was a third of an
/// 18-cell upload's insert.
pub(super) async fn insert_results(
    conn: &mut Conn,
    run_id: &str,
    results: &[NewResult],
) -> Result<Vec<i64>, StorageError> {
    let backend = conn.backend();
    let mut ids = vec![None; results.len()];
    for (chunk_index, chunk) in results.chunks(ROWS).enumerate() {
        let mut q = SqlBuilder::new(
            "INSERT INTO results (run_id, idx, config_fingerprint, cell_key, cell_json, facts_json, \
             warnings_json, source_json) VALUES ",
        );
        for (i, r) in chunk.iter().enumerate() {
            let idx = (chunk_index * ROWS + i) as i64;
            q.push(if i == 0 { "(" } else { ", (" });
            q.bind_list([
                Param::text(run_id.to_string()),
                Param::int(idx),
                Param::text(r.config_fingerprint.clone()),
                Param::text(r.cell_key.clone()),
                Param::text(r.cell_json.clone()),
                Param::text(r.facts_json.clone()),
                Param::text(r.warnings_json.clone()),
                Param::text(r.source_json.clone()),
            ]);
            q.push(")");
        }
        // RETURNING gives no row order on SQLite: each id is placed by its `idx`.
        q.push(" RETURNING id, idx");
        let rows = q.query(backend).fetch_all(&mut *conn).await.map_err(|e| {
            super::store::unique_as_conflict(e, || {
                format!("a result of run {run_id} is stored twice")
            })
        })?;
        for row in rows {
            let idx: i64 = row.try_get("idx")?;
            let slot = usize::try_from(idx)
                .ok()
                .and_then(|i| ids.get_mut(i))
                .ok_or_else(|| StorageError::Corrupt(format!("results.idx {idx} returned")))?;
            *slot = Some(row.try_get::<i64, _>("id")?);
        }
    }
    ids.into_iter()
        .enumerate()
        .map(|(i, id)| {
            id.ok_or_else(|| StorageError::Corrupt(format!("no id returned for result {i}")))
        })
        .collect()
}

/// Each series' `series.seq` by its `series_id`: what `metric_values.series_seq` holds
/// (migration 0019).
pub(super) type SeriesSeqs = HashMap<String, i64>;

/// Stores the definitions of `series` unless their id is stored (`ON CONFLICT DO NOTHING`), and
/// returns the `seq` of each of them (new or stored before), by series id: one more statement
/// per 500 series, since `RETURNING` names only the rows an insert wrote.
pub(super) async fn insert_series(
    conn: &mut Conn,
    project_id: i64,
    series: &[&NewSeries],
) -> Result<SeriesSeqs, StorageError> {
    let rows = series.iter().map(|s| {
        vec![
            Param::text(s.series_id.clone()),
            Param::int(project_id),
            Param::text(s.series_key_json.clone()),
            Param::text(s.cell_key.clone()),
            Param::text(s.cell_json.clone()),
            Param::text(s.metric.clone()),
            Param::text(s.stat.to_string()),
            Param::opt_text(s.slo_profile.clone()),
            Param::text(s.unit.as_str().to_string()),
            Param::text(s.direction.as_str().to_string()),
            Param::opt_text(s.accelerator.clone()),
            Param::opt_text(s.model.clone()),
            Param::opt_text(s.weights_quantization.clone()),
            Param::opt_text(s.kv_cache_dtype.clone()),
        ]
    });
    insert_rows(
        conn,
        "INSERT INTO series (series_id, project_id, series_key_json, cell_key, cell_json, metric, stat, \
         slo_profile, unit, direction, accelerator, model, weights_quantization, kv_cache_dtype) VALUES ",
        " ON CONFLICT (series_id) DO NOTHING",
        rows.collect(),
    )
    .await?;
    let backend = conn.backend();
    let mut seqs = SeriesSeqs::with_capacity(series.len());
    for chunk in series.chunks(500) {
        let mut q = SqlBuilder::new("SELECT series_id, seq FROM series WHERE series_id IN (");
        q.bind_list(chunk.iter().map(|s| Param::text(s.series_id.clone())));
        q.push(")");
        for row in q.query(backend).fetch_all(&mut *conn).await? {
            seqs.insert(row.try_get("series_id")?, row.try_get("seq")?);
        }
    }
    Ok(seqs)
}

/// Stores the values of a run's results, each given as its `results.id`, its index in the run
/// and its metrics, in as few statements as [`ROWS`] allows (an 18-cell upload's 612 values in
/// 4, where one statement per result made 18–36). `run_seq` is the run's `seq`; `seqs` holds
/// every metric's series (from [`insert_series`]). Two values of
/// one series in one result are refused as a conflict naming the result and the series, before
/// anything is written: a multi-row statement's unique violation cannot say which row it was.
pub(super) async fn insert_values(
    conn: &mut Conn,
    run_seq: i64,
    seqs: &SeriesSeqs,
    results: &[(i64, i64, &[NewMetric])],
) -> Result<(), StorageError> {
    for (_, idx, metrics) in results {
        let mut seen = HashSet::new();
        if let Some(m) = metrics
            .iter()
            .find(|m| !seen.insert(m.series.series_id.as_str()))
        {
            return Err(StorageError::Conflict(format!(
                "result {idx} has two values of {} {} (series {})",
                m.series.metric, m.series.stat, m.series.series_id
            )));
        }
    }
    // Values without an interval and with one in separate statements: most values have none,
    // and their rows bind 5 parameters instead of 9 with four NULLs.
    // In primary-key order, so each statement appends to the key's rightmost page: inserted in
    // any order, a full page splits in the middle and the index ends about a tenth larger.
    let mut all: Vec<(i64, i64, &NewMetric)> = results
        .iter()
        .flat_map(|(result_id, _, metrics)| metrics.iter().map(move |m| (*result_id, m)))
        .map(|(result_id, m)| {
            let seq = seqs.get(&m.series.series_id).copied().ok_or_else(|| {
                StorageError::Corrupt(format!("series {} was not stored", m.series.series_id))
            })?;
            Ok((result_id, seq, m))
        })
        .collect::<Result<_, StorageError>>()?;
    all.sort_by_key(|(result_id, seq, _)| (*result_id, *seq));
    let (plain, with_ci): (Vec<_>, Vec<_>) = all.into_iter().partition(|(_, _, m)| m.ci.is_none());
    let value_of =
        |result_id: i64, seq: i64, m: &NewMetric| -> Result<Vec<Param<'static>>, StorageError> {
            Ok(vec![
                Param::int(result_id),
                Param::int(seq),
                Param::int(run_seq),
                Param::real(m.value),
                Param::opt_int(count_to_db(m.n)?),
            ])
        };
    let plain_rows = plain
        .iter()
        .map(|(id, seq, m)| value_of(*id, *seq, m))
        .collect::<Result<_, _>>()?;
    insert_rows(
        conn,
        "INSERT INTO metric_values (result_id, series_seq, run_seq, value, n) VALUES ",
        "",
        plain_rows,
    )
    .await?;
    let ci_rows = with_ci
        .iter()
        .filter_map(|(id, seq, m)| m.ci.as_ref().map(|ci| (*id, *seq, *m, ci)))
        .map(|(id, seq, m, ci)| {
            let mut row = value_of(id, seq, m)?;
            row.extend([
                Param::real(ci.low),
                Param::real(ci.high),
                Param::real(ci.level),
                Param::text(ci.method.as_str().to_string()),
            ]);
            Ok(row)
        })
        .collect::<Result<_, StorageError>>()?;
    insert_rows(
        conn,
        "INSERT INTO metric_values (result_id, series_seq, run_seq, value, n, ci_low, ci_high, ci_level, ci_method) VALUES ",
        "",
        ci_rows,
    )
    .await
}

/// `head` followed by `rows` as `(…), (…)` and `tail`, in statements of at most [`ROWS`]
/// rows; nothing when there are none.
async fn insert_rows(
    conn: &mut Conn,
    head: &str,
    tail: &str,
    rows: Vec<Vec<Param<'static>>>,
) -> Result<(), StorageError> {
    let backend = conn.backend();
    for chunk in rows.chunks(ROWS) {
        let mut q = SqlBuilder::new(head);
        for (i, row) in chunk.iter().enumerate() {
            q.push(if i == 0 { "(" } else { ", (" });
            q.bind_list(row.iter().cloned());
            q.push(")");
        }
        q.push(tail);
        q.query(backend).execute(&mut *conn).await?;
    }
    Ok(())
}
