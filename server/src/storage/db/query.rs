//! A statement with its bound values, run on whichever native driver its [`Target`] is.
//!
//! The shapes follow sqlx's own (`query(sql).bind(v).fetch_all(&pool)`, `query_scalar`,
//! `query_as` into tuples), so the store's code reads as sqlx code does; the values are kept
//! as [`Param`]s until the target is known, then bound to a native query of that database.

use super::row::{Col, DbRow, FromDbRow};
use super::Target;
use chrono::{DateTime, Utc};
use sqlx::postgres::PgArguments;
use sqlx::sqlite::SqliteArguments;
use sqlx::{Postgres, Sqlite};
use std::borrow::Cow;

/// A value bound to a statement, as both databases take it: BIGINT, DOUBLE PRECISION, TEXT,
/// BLOB/BYTEA or a timestamp, each possibly NULL (a typed NULL: Postgres infers nothing from an
/// untyped one).
#[derive(Clone, Debug, PartialEq)]
pub(in crate::storage) enum Param<'q> {
    /// BIGINT.
    Int(Option<i64>),
    /// DOUBLE PRECISION.
    Real(Option<f64>),
    /// TEXT, borrowed or owned.
    Text(Option<Cow<'q, str>>),
    /// BLOB/BYTEA, borrowed.
    Bytes(Option<&'q [u8]>),
    /// BLOB/BYTEA, owned.
    OwnedBytes(Option<Vec<u8>>),
    /// A UTC instant: `TIMESTAMPTZ` on Postgres, fixed-width RFC 3339 text on SQLite
    /// ([`crate::storage::codec::timestamp_text`], so text order is time order).
    Time(Option<DateTime<Utc>>),
}

impl Param<'static> {
    /// BIGINT.
    pub(in crate::storage) fn int(v: i64) -> Self {
        Param::Int(Some(v))
    }
    /// BIGINT or NULL.
    pub(in crate::storage) fn opt_int(v: Option<i64>) -> Self {
        Param::Int(v)
    }
    /// DOUBLE PRECISION.
    pub(in crate::storage) fn real(v: f64) -> Self {
        Param::Real(Some(v))
    }
    /// TEXT.
    pub(in crate::storage) fn text(v: String) -> Self {
        Param::Text(Some(Cow::Owned(v)))
    }
    /// TEXT or NULL.
    pub(in crate::storage) fn opt_text(v: Option<String>) -> Self {
        Param::Text(v.map(Cow::Owned))
    }
    /// A timestamp ([`Param::Time`]).
    pub(in crate::storage) fn time(v: DateTime<Utc>) -> Self {
        Param::Time(Some(v))
    }
}

impl Param<'_> {
    /// The same value, borrowed from this one (text and bytes are not copied).
    pub(in crate::storage) fn borrowed(&self) -> Param<'_> {
        match self {
            Param::Int(v) => Param::Int(*v),
            Param::Real(v) => Param::Real(*v),
            Param::Text(v) => Param::Text(v.as_deref().map(Cow::Borrowed)),
            Param::Bytes(v) => Param::Bytes(*v),
            Param::OwnedBytes(v) => Param::Bytes(v.as_deref()),
            Param::Time(v) => Param::Time(*v),
        }
    }

    /// The value as SQLite stores it: a timestamp as its fixed-width text, anything else as
    /// it is.
    fn for_sqlite(self) -> Self {
        match self {
            Param::Time(t) => {
                Param::Text(t.map(|t| Cow::Owned(crate::storage::codec::timestamp_text(&t))))
            }
            other => other,
        }
    }
}

/// A Rust value that binds as a [`Param`].
pub(in crate::storage) trait Bind<'q> {
    /// The value as a parameter.
    fn param(self) -> Param<'q>;
}

impl<'q> Bind<'q> for Param<'q> {
    fn param(self) -> Param<'q> {
        self
    }
}

macro_rules! bind_as {
    ($($t:ty => |$v:ident| $param:expr;)*) => {
        $(impl<'q> Bind<'q> for $t {
            fn param(self) -> Param<'q> {
                let $v = self;
                $param
            }
        })*
    };
}

bind_as! {
    i64 => |v| Param::Int(Some(v));
    Option<i64> => |v| Param::Int(v);
    &'q i64 => |v| Param::Int(Some(*v));
    &'q Option<i64> => |v| Param::Int(*v);
    i32 => |v| Param::Int(Some(i64::from(v)));
    f64 => |v| Param::Real(Some(v));
    Option<f64> => |v| Param::Real(v);
    &'q Option<f64> => |v| Param::Real(*v);
    &'q str => |v| Param::Text(Some(Cow::Borrowed(v)));
    &'q String => |v| Param::Text(Some(Cow::Borrowed(v.as_str())));
    String => |v| Param::Text(Some(Cow::Owned(v)));
    Option<String> => |v| Param::Text(v.map(Cow::Owned));
    Option<&'q str> => |v| Param::Text(v.map(Cow::Borrowed));
    Option<&'q String> => |v| Param::Text(v.map(|s| Cow::Borrowed(s.as_str())));
    &'q Option<String> => |v| Param::Text(v.as_deref().map(Cow::Borrowed));
    &'q [u8] => |v| Param::Bytes(Some(v));
    &'q Vec<u8> => |v| Param::Bytes(Some(v.as_slice()));
    Vec<u8> => |v| Param::OwnedBytes(Some(v));
    Option<Vec<u8>> => |v| Param::OwnedBytes(v);
    Option<&'q [u8]> => |v| Param::Bytes(v);
    DateTime<Utc> => |v| Param::Time(Some(v));
    &'q DateTime<Utc> => |v| Param::Time(Some(*v));
    Option<DateTime<Utc>> => |v| Param::Time(v);
    Option<&'q DateTime<Utc>> => |v| Param::Time(v.copied());
}

/// A statement and its values. SQL placeholders are `$1, $2, ...` in order of appearance (both
/// databases read them; see [`crate::storage`]), or `?` from a builder for SQLite.
#[must_use = "a query does nothing until it is run"]
pub(in crate::storage) struct Query<'q> {
    sql: &'q str,
    params: Vec<Param<'q>>,
}

/// A statement whose rows are read as they come (`sqlx::query`).
pub(in crate::storage) fn query(sql: &str) -> Query<'_> {
    Query {
        sql,
        params: Vec::new(),
    }
}

/// A statement whose rows are each one value, column 0 (`sqlx::query_scalar`).
pub(in crate::storage) fn query_scalar<T: Col>(sql: &str) -> Mapped<'_, T> {
    Mapped {
        query: query(sql),
        decode: |row| row.try_get(0usize),
    }
}

/// A statement whose rows are each a tuple of its columns (`sqlx::query_as`).
pub(in crate::storage) fn query_as<T: FromDbRow>(sql: &str) -> Mapped<'_, T> {
    Mapped {
        query: query(sql),
        decode: T::from_row,
    }
}

/// What a statement that returns no rows did.
#[derive(Debug, Clone, Copy)]
pub(in crate::storage) struct Done {
    rows_affected: u64,
}

impl Done {
    /// Rows the statement inserted, updated or deleted.
    pub(in crate::storage) fn rows_affected(&self) -> u64 {
        self.rows_affected
    }
}

impl<'q> Query<'q> {
    /// A statement with these values already bound (a builder's).
    pub(in crate::storage) fn with_params(sql: &'q str, params: Vec<Param<'q>>) -> Query<'q> {
        Query { sql, params }
    }

    /// Binds the next placeholder.
    pub(in crate::storage) fn bind(mut self, value: impl Bind<'q>) -> Query<'q> {
        self.params.push(value.param());
        self
    }

    fn on_sqlite(self) -> sqlx::query::Query<'q, Sqlite, SqliteArguments<'q>> {
        bound(self.sql, self.params.into_iter().map(Param::for_sqlite))
    }

    fn on_postgres(self) -> sqlx::query::Query<'q, Postgres, PgArguments> {
        bound(self.sql, self.params)
    }

    /// Every row.
    pub(in crate::storage) async fn fetch_all<'e>(
        self,
        target: impl Into<Target<'e>>,
    ) -> Result<Vec<DbRow>, sqlx::Error> {
        Ok(match target.into() {
            Target::SqlitePool(pool) => rows(self.on_sqlite().fetch_all(pool).await?),
            Target::Sqlite(conn) => rows(self.on_sqlite().fetch_all(conn).await?),
            Target::PostgresPool(pool) => rows(self.on_postgres().fetch_all(pool).await?),
            Target::Postgres(conn) => rows(self.on_postgres().fetch_all(conn).await?),
        })
    }

    /// The first row, if there is one.
    pub(in crate::storage) async fn fetch_optional<'e>(
        self,
        target: impl Into<Target<'e>>,
    ) -> Result<Option<DbRow>, sqlx::Error> {
        Ok(match target.into() {
            Target::SqlitePool(pool) => self
                .on_sqlite()
                .fetch_optional(pool)
                .await?
                .map(DbRow::from),
            Target::Sqlite(conn) => self
                .on_sqlite()
                .fetch_optional(conn)
                .await?
                .map(DbRow::from),
            Target::PostgresPool(pool) => self
                .on_postgres()
                .fetch_optional(pool)
                .await?
                .map(DbRow::from),
            Target::Postgres(conn) => self
                .on_postgres()
                .fetch_optional(conn)
                .await?
                .map(DbRow::from),
        })
    }

    /// The first row; `RowNotFound` when there is none.
    pub(in crate::storage) async fn fetch_one<'e>(
        self,
        target: impl Into<Target<'e>>,
    ) -> Result<DbRow, sqlx::Error> {
        self.fetch_optional(target)
            .await?
            .ok_or(sqlx::Error::RowNotFound)
    }

    /// Runs a statement for what it changes.
    pub(in crate::storage) async fn execute<'e>(
        self,
        target: impl Into<Target<'e>>,
    ) -> Result<Done, sqlx::Error> {
        let rows_affected = match target.into() {
            Target::SqlitePool(pool) => self.on_sqlite().execute(pool).await?.rows_affected(),
            Target::Sqlite(conn) => self.on_sqlite().execute(conn).await?.rows_affected(),
            Target::PostgresPool(pool) => self.on_postgres().execute(pool).await?.rows_affected(),
            Target::Postgres(conn) => self.on_postgres().execute(conn).await?.rows_affected(),
        };
        Ok(Done { rows_affected })
    }
}

/// `sql` with `params` bound, as a query of database `DB`'s own driver (a [`Param::Time`] as
/// the driver's own timestamp: SQLite's queries map theirs to text first,
/// [`Param::for_sqlite`]).
fn bound<'q, DB>(
    sql: &'q str,
    params: impl IntoIterator<Item = Param<'q>>,
) -> sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>
where
    DB: sqlx::Database,
    Option<i64>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<f64>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<Cow<'q, str>>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<&'q [u8]>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<Vec<u8>>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<DateTime<Utc>>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    params
        .into_iter()
        .fold(sqlx::query(sql), |q, param| match param {
            Param::Int(v) => q.bind(v),
            Param::Real(v) => q.bind(v),
            Param::Text(v) => q.bind(v),
            Param::Bytes(v) => q.bind(v),
            Param::OwnedBytes(v) => q.bind(v),
            Param::Time(v) => q.bind(v),
        })
}

fn rows<R: Into<DbRow>>(native: Vec<R>) -> Vec<DbRow> {
    native.into_iter().map(Into::into).collect()
}

/// A [`query_scalar`] or [`query_as`] statement: each row decoded into a `T`.
#[must_use = "a query does nothing until it is run"]
pub(in crate::storage) struct Mapped<'q, T> {
    query: Query<'q>,
    decode: fn(&DbRow) -> Result<T, sqlx::Error>,
}

impl<'q, T> Mapped<'q, T> {
    /// Binds the next placeholder.
    pub(in crate::storage) fn bind(mut self, value: impl Bind<'q>) -> Mapped<'q, T> {
        self.query = self.query.bind(value);
        self
    }

    /// Every row.
    pub(in crate::storage) async fn fetch_all<'e>(
        self,
        target: impl Into<Target<'e>>,
    ) -> Result<Vec<T>, sqlx::Error> {
        let rows = self.query.fetch_all(target).await?;
        rows.iter().map(self.decode).collect()
    }

    /// The first row, if there is one.
    pub(in crate::storage) async fn fetch_optional<'e>(
        self,
        target: impl Into<Target<'e>>,
    ) -> Result<Option<T>, sqlx::Error> {
        let row = self.query.fetch_optional(target).await?;
        row.as_ref().map(self.decode).transpose()
    }

    /// The first row; `RowNotFound` when there is none.
    pub(in crate::storage) async fn fetch_one<'e>(
        self,
        target: impl Into<Target<'e>>,
    ) -> Result<T, sqlx::Error> {
        (self.decode)(&self.query.fetch_one(target).await?)
    }
}
