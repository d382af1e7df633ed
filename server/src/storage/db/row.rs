//! A row of either database, read in place from the native driver's row.

use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use sqlx::{ColumnIndex, Decode, Postgres, Row, TypeInfo, ValueRef};

/// A result row of a [`super::Query`].
pub(in crate::storage) enum DbRow {
    /// A row of SQLite's driver (its values copied out of the statement, as sqlx does).
    Sqlite(SqliteRow),
    /// A row of Postgres's driver (the bytes it received, decoded on read).
    Postgres(PgRow),
}

impl From<SqliteRow> for DbRow {
    fn from(row: SqliteRow) -> DbRow {
        DbRow::Sqlite(row)
    }
}

impl From<PgRow> for DbRow {
    fn from(row: PgRow) -> DbRow {
        DbRow::Postgres(row)
    }
}

impl DbRow {
    /// The column `index` (its name, or its position from 0) as a `T`.
    ///
    /// # Errors
    /// `ColumnNotFound`/`ColumnIndexOutOfBounds`, or `ColumnDecode` when the stored value is
    /// not a `T` (NULL into a non-`Option`, text into a number, ...).
    pub(in crate::storage) fn try_get<T: Col, I: Idx>(&self, index: I) -> Result<T, sqlx::Error> {
        match self {
            DbRow::Sqlite(row) => T::sqlite(row, index),
            DbRow::Postgres(row) => T::postgres(row, index),
        }
    }
}

/// A column index both rows take: a name (`&str`) or a position (`usize`).
pub(in crate::storage) trait Idx:
    ColumnIndex<SqliteRow> + ColumnIndex<PgRow> + Copy + std::fmt::Debug
{
}

impl Idx for &str {}
impl Idx for usize {}

/// A Rust type a column decodes into on both databases.
pub(in crate::storage) trait Col: Sized {
    /// From a SQLite row.
    fn sqlite(row: &SqliteRow, index: impl Idx) -> Result<Self, sqlx::Error>;
    /// From a Postgres row.
    fn postgres(row: &PgRow, index: impl Idx) -> Result<Self, sqlx::Error>;
}

/// Fails on a SQL NULL: sqlx's SQLite driver skips its type check for NULL and decoded one into
/// an `i64` as 0 (found by `tests::integers_of_every_width_read_as_i64`) where the `Any` driver,
/// and Postgres, refuse it; a NULL where the store expects a value is corrupt data, not a zero.
fn sqlite_not_null(row: &SqliteRow, index: impl Idx) -> Result<(), sqlx::Error> {
    if row.try_get_raw(index)?.is_null() {
        return Err(unexpected_null(index));
    }
    Ok(())
}

fn unexpected_null(index: impl Idx) -> sqlx::Error {
    sqlx::Error::ColumnDecode {
        index: format!("{index:?}"),
        source: Box::new(sqlx::error::UnexpectedNullError),
    }
}

/// Types each driver decodes as they are, a NULL refused.
macro_rules! native_col {
    ($($t:ty),*) => {
        $(impl Col for $t {
            fn sqlite(row: &SqliteRow, index: impl Idx) -> Result<Self, sqlx::Error> {
                sqlite_not_null(row, index)?;
                row.try_get(index)
            }
            fn postgres(row: &PgRow, index: impl Idx) -> Result<Self, sqlx::Error> {
                row.try_get(index)
            }
        })*
    };
}

/// The `Option` of a [`native_col`] type: NULL is `None`.
macro_rules! native_opt_col {
    ($($t:ty),*) => {
        $(impl Col for Option<$t> {
            fn sqlite(row: &SqliteRow, index: impl Idx) -> Result<Self, sqlx::Error> {
                row.try_get(index)
            }
            fn postgres(row: &PgRow, index: impl Idx) -> Result<Self, sqlx::Error> {
                row.try_get(index)
            }
        })*
    };
}

native_col!(String, f64, Vec<u8>);
native_opt_col!(String, f64, Vec<u8>);

/// A Postgres integer of any width as an `i64`. Postgres types every expression strictly
/// (`1`, `CASE … THEN 1`, `COUNT(*)::int` are INT4, `COUNT(*)` INT8) while every stored
/// integer of benchtrail's is BIGINT, and SQLite has one integer type: the store reads them all
/// as `i64`, as the `Any` driver it used before did.
///
/// The value is decoded from the raw column found once (`try_get` would look the column up by
/// name again: the series API reads three integers of each of 1,800 rows); a column of any
/// other type goes through `try_get`, which refuses it with sqlx's own mismatch error.
fn postgres_int(row: &PgRow, index: impl Idx) -> Result<Option<i64>, sqlx::Error> {
    let raw = row.try_get_raw(index)?;
    if raw.is_null() {
        return Ok(None);
    }
    let decoded = match raw.type_info().name() {
        "INT8" => <i64 as Decode<Postgres>>::decode(raw),
        "INT4" => <i32 as Decode<Postgres>>::decode(raw).map(i64::from),
        "INT2" => <i16 as Decode<Postgres>>::decode(raw).map(i64::from),
        _ => return row.try_get::<i64, _>(index).map(Some),
    };
    decoded
        .map(Some)
        .map_err(|source| sqlx::Error::ColumnDecode {
            index: format!("{index:?}"),
            source,
        })
}

impl Col for i64 {
    fn sqlite(row: &SqliteRow, index: impl Idx) -> Result<Self, sqlx::Error> {
        sqlite_not_null(row, index)?;
        row.try_get(index)
    }
    fn postgres(row: &PgRow, index: impl Idx) -> Result<Self, sqlx::Error> {
        postgres_int(row, index)?.ok_or_else(|| unexpected_null(index))
    }
}

impl Col for Option<i64> {
    fn sqlite(row: &SqliteRow, index: impl Idx) -> Result<Self, sqlx::Error> {
        row.try_get(index)
    }
    fn postgres(row: &PgRow, index: impl Idx) -> Result<Self, sqlx::Error> {
        postgres_int(row, index)
    }
}

/// A timestamp column: `TIMESTAMPTZ` on Postgres, decoded by its driver; fixed-width RFC 3339
/// text on SQLite ([`crate::storage::codec::timestamp_text`]), parsed here. Text that is not a
/// timestamp fails as `ColumnDecode` naming the column.
fn sqlite_time(row: &SqliteRow, index: impl Idx) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    let Some(text) = row.try_get::<Option<&str>, _>(index)? else {
        return Ok(None);
    };
    DateTime::parse_from_rfc3339(text)
        .map(|t| Some(t.with_timezone(&Utc)))
        .map_err(|e| sqlx::Error::ColumnDecode {
            index: format!("{index:?}"),
            source: format!("`{text}` is not an RFC 3339 timestamp: {e}").into(),
        })
}

impl Col for DateTime<Utc> {
    fn sqlite(row: &SqliteRow, index: impl Idx) -> Result<Self, sqlx::Error> {
        sqlite_time(row, index)?.ok_or_else(|| unexpected_null(index))
    }
    fn postgres(row: &PgRow, index: impl Idx) -> Result<Self, sqlx::Error> {
        row.try_get(index)
    }
}

impl Col for Option<DateTime<Utc>> {
    fn sqlite(row: &SqliteRow, index: impl Idx) -> Result<Self, sqlx::Error> {
        sqlite_time(row, index)
    }
    fn postgres(row: &PgRow, index: impl Idx) -> Result<Self, sqlx::Error> {
        row.try_get(index)
    }
}

/// A row read as a tuple of its first columns ([`super::query_as`]).
pub(in crate::storage) trait FromDbRow: Sized {
    /// The tuple of columns 0, 1, ….
    fn from_row(row: &DbRow) -> Result<Self, sqlx::Error>;
}

macro_rules! tuple_row {
    ($($t:ident $i:tt),+) => {
        impl<$($t: Col),+> FromDbRow for ($($t,)+) {
            fn from_row(row: &DbRow) -> Result<Self, sqlx::Error> {
                Ok(($(row.try_get::<$t, usize>($i)?,)+))
            }
        }
    };
}

tuple_row!(A 0);
tuple_row!(A 0, B 1);
tuple_row!(A 0, B 1, C 2);
tuple_row!(A 0, B 1, C 2, D 3);
tuple_row!(A 0, B 1, C 2, D 3, E 4);
tuple_row!(A 0, B 1, C 2, D 3, E 4, F 5);
