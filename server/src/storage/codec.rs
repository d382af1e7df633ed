//! Conversions between Rust values and the few column types both databases share.
//!
//! Everything that crosses the SQL boundary as TEXT (timestamps, uuids, JSON, enums) or BLOB
//! (gzip content) is encoded and decoded here, so the two databases store byte-identical
//! values and a malformed stored value surfaces as [`StorageError::Corrupt`] with its column.

use super::db::DbRow;
use super::{SampleColumns, Scope, StorageError, StoredMetric};
use benchtrail_core::metric::{stat_rank, vocabulary_rank};
use benchtrail_core::{Direction, Stat, Unit};
use chrono::{DateTime, FixedOffset, SubsecRound, Utc};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::cmp::Ordering;
use std::io::Read;
use uuid::Uuid;

/// The one timestamp format of SQLite's TEXT timestamps: fixed width (microseconds, `Z`), so
/// text order is time order. (Postgres stores `TIMESTAMPTZ`, migration 0022.)
const TIMESTAMP_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.6fZ";

/// A timestamp as SQLite stores it ([`super::db::Param::Time`] binds it so). Sub-microsecond
/// digits are dropped (the format keeps six, as Postgres's `TIMESTAMPTZ` does).
pub(super) fn timestamp_text(t: &DateTime<Utc>) -> String {
    t.format(TIMESTAMP_FORMAT).to_string()
}

/// The current time at the precision storage keeps, so a value returned right after an
/// insert equals the one read back later.
pub(super) fn now() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(6)
}

/// A time with its UTC offset as stored: the UTC instant and the offset in seconds east of
/// UTC.
pub(super) fn offset_time_parts(t: &DateTime<FixedOffset>) -> (DateTime<Utc>, i64) {
    (
        t.with_timezone(&Utc),
        i64::from(t.offset().local_minus_utc()),
    )
}

/// A stored UTC instant with its stored offset (seconds east of UTC; `None`, as stored before
/// offsets were kept, reads as UTC).
///
/// # Errors
/// [`StorageError::Corrupt`] naming `column` when the offset is not one.
pub(super) fn parse_offset_time(
    column: &str,
    utc: Option<DateTime<Utc>>,
    offset: Option<i64>,
) -> Result<Option<DateTime<FixedOffset>>, StorageError> {
    let Some(utc) = utc else {
        return Ok(None);
    };
    let secs = offset.unwrap_or(0);
    let zone = i32::try_from(secs)
        .ok()
        .and_then(FixedOffset::east_opt)
        .ok_or_else(|| {
            StorageError::Corrupt(format!("{column}_offset: `{secs}` is not a UTC offset"))
        })?;
    Ok(Some(utc.with_timezone(&zone)))
}

/// Parses stored JSON text into any deserializable shape.
pub(super) fn parse_json<T: DeserializeOwned>(column: &str, text: &str) -> Result<T, StorageError> {
    serde_json::from_str(text).map_err(|e| corrupt(column, text, e))
}

/// Encodes a value as JSON text (infallible for the plain types stored here).
pub(super) fn json_text<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data serializes to JSON")
}

/// Parses a stored run id.
pub(super) fn parse_uuid(column: &str, text: &str) -> Result<Uuid, StorageError> {
    Uuid::parse_str(text).map_err(|e| corrupt(column, text, e))
}

/// Parses a stored statistic label (`mean`, `p99.9`, ...).
pub(super) fn parse_stat(text: &str) -> Result<Stat, StorageError> {
    text.parse().map_err(|e| corrupt("stat", text, e))
}

/// Parses a stored unit. Units have no `FromStr`; their serde names are the stored text.
pub(super) fn parse_unit(text: &str) -> Result<Unit, StorageError> {
    serde_json::from_value(Value::String(text.to_string())).map_err(|e| corrupt("unit", text, e))
}

/// Parses a stored direction (its serde name).
pub(super) fn parse_direction(text: &str) -> Result<Direction, StorageError> {
    serde_json::from_value(Value::String(text.to_string()))
        .map_err(|e| corrupt("direction", text, e))
}

/// Parses a stored token scope.
pub(super) fn parse_scope(text: &str) -> Result<Scope, StorageError> {
    Scope::parse(text)
        .ok_or_else(|| StorageError::Corrupt(format!("scope: unknown scope `{text}`")))
}

/// Sample counts are `u64` in the model and BIGINT in the database.
pub(super) fn count_to_db(n: Option<u64>) -> Result<Option<i64>, StorageError> {
    n.map(|n| {
        i64::try_from(n).map_err(|_| {
            StorageError::Database(sqlx::Error::Encode(
                format!("sample count {n} exceeds BIGINT").into(),
            ))
        })
    })
    .transpose()
}

/// The reverse of [`count_to_db`].
pub(super) fn count_from_db(n: Option<i64>) -> Result<Option<u64>, StorageError> {
    n.map(|n| u64::try_from(n).map_err(|e| corrupt("n", &n.to_string(), e)))
        .transpose()
}

/// The bytes of a stored file (`run_files.content_gz`), in any form [`super::file_codec`]
/// wrote or writes.
pub(super) fn stored_file(stored: &[u8]) -> Result<Vec<u8>, StorageError> {
    super::file_codec::decode(stored).map_err(|e| StorageError::Corrupt(format!("content_gz: {e}")))
}

/// Decompresses stored JSON in `column`: zstd as [`compress_json`] writes it (RFC 8878 magic
/// `28 B5 2F FD`), or gzip as rows written before session 41 hold it.
pub(super) fn decompress_column(column: &str, stored: &[u8]) -> Result<Vec<u8>, StorageError> {
    if stored.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
        return zstd::stream::decode_all(stored)
            .map_err(|e| StorageError::Corrupt(format!("{column}: not zstd: {e}")));
    }
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(stored)
        .read_to_end(&mut out)
        .map_err(|e| StorageError::Corrupt(format!("{column}: neither zstd nor gzip: {e}")))?;
    Ok(out)
}

/// The `result_samples` columns (table alias `rs`) that [`samples_of_row`] reads for
/// `columns`: without ITL the gaps' column is not even read from the database.
pub(super) fn samples_sql(columns: SampleColumns) -> &'static str {
    match columns {
        SampleColumns::All => "rs.data, rs.itl_data",
        SampleColumns::WithoutItl => "rs.data",
    }
}

/// The per-request samples of a row holding [`samples_sql`]'s columns, decoded with `columns`.
pub(super) fn samples_of_row(
    row: &DbRow,
    columns: SampleColumns,
) -> Result<benchtrail_core::samples::RequestSamples, StorageError> {
    let data: Vec<u8> = row.try_get("data")?;
    let itl: Option<Vec<u8>> = match columns {
        SampleColumns::All => row.try_get("itl_data")?,
        SampleColumns::WithoutItl => None,
    };
    super::samples_codec::decode(&data, itl.as_deref(), columns)
        .map_err(|e| StorageError::Corrupt(format!("result_samples: {e}")))
}

/// Compresses stored JSON (a run analysis, its verdict basis) with zstd at level 1. Analyses
/// repeat their keys, baseline commits and settings on every series. Measured on an 814 KB
/// analysis of an 18-cell run of issue 12's data set (zstd command line, one core): zstd
/// level 1 stores it in 65.5 KB at ≈ 1,350 MB/s (0.6 ms), levels 3–9 in 65.5–71.9 KB, slower;
/// gzip (zlib) level 3, written before session 41, in 112.5 KB in 3.0 ms and level 6 in
/// 94.7 KB in 6.3 ms. Over the 1,800-commit data set's analyses: 132 → about 85 bytes per
/// stored value (BENCHMARKS.md "Session 41").
pub(super) fn compress_json(bytes: &[u8]) -> Vec<u8> {
    zstd::bulk::compress(bytes, 1).expect("compressing to memory")
}

/// The order of [`super::StoredResult::metrics`]: vocabulary position (names outside the
/// vocabulary last, by name), then statistic: mean, percentiles ascending numerically, std,
/// min, max, value ([`benchtrail_core::metric::stat_rank`]).
pub(super) fn metric_order(a: &StoredMetric, b: &StoredMetric) -> Ordering {
    vocabulary_rank(&a.name)
        .cmp(&vocabulary_rank(&b.name))
        .then_with(|| a.name.cmp(&b.name))
        .then_with(|| stat_rank(&a.stat).cmp(&stat_rank(&b.stat)))
}

fn corrupt(column: &str, text: &str, error: impl std::fmt::Display) -> StorageError {
    StorageError::Corrupt(format!("{column}: `{text}`: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_fixed_width_and_round_trip() {
        let t = DateTime::parse_from_rfc3339("2024-05-01T08:09:10.5Z")
            .unwrap()
            .with_timezone(&Utc);
        let text = timestamp_text(&t);
        assert_eq!(text, "2024-05-01T08:09:10.500000Z");
        assert_eq!(DateTime::parse_from_rfc3339(&text).unwrap(), t);
    }

    #[test]
    fn units_and_directions_parse_their_serde_names() {
        assert_eq!(parse_unit("req/s").unwrap(), Unit::ReqPerS);
        assert_eq!(
            parse_direction("lower_is_better").unwrap(),
            Direction::LowerIsBetter
        );
        assert!(parse_unit("parsecs").is_err());
    }

    #[test]
    fn compressed_json_round_trips_and_a_damaged_one_names_its_column() {
        let json = br#"{"series":[{"state":"no_change"},{"state":"no_change"}]}"#;
        assert_eq!(
            decompress_column("analysis_gz", &compress_json(json)).unwrap(),
            json
        );
        // A row written before session 41: gzip.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(3));
        std::io::Write::write_all(&mut gz, json).unwrap();
        assert_eq!(
            decompress_column("analysis_gz", &gz.finish().unwrap()).unwrap(),
            json
        );
        let err = decompress_column("analysis_gz", b"not gzip").unwrap_err();
        assert!(
            matches!(&err, StorageError::Corrupt(m) if m.starts_with("analysis_gz: neither zstd nor gzip")),
            "{err:?}"
        );
        let cut = compress_json(json);
        let err = decompress_column("analysis_gz", &cut[..cut.len() - 2]).unwrap_err();
        assert!(
            matches!(&err, StorageError::Corrupt(m) if m.starts_with("analysis_gz: not zstd")),
            "{err:?}"
        );
    }
}
