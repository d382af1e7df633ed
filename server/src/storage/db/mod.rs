//! The two databases behind one query API, on sqlx's native drivers.
//!
//! benchtrail runs one SQL text per query on SQLite and on Postgres ([`super`]'s docs say which
//! SQL both accept). Until session 29 it reached them through sqlx's `Any` driver, which
//! copies every column of every row into values of its own before the caller reads one (a
//! quarter of the series API's time on 1,800 commits, BENCHMARKS.md "Session 27") and cannot
//! send a NULL DOUBLE PRECISION to Postgres. Here a [`Query`] keeps its SQL and its bound
//! values until it is run, and runs them on the native driver of the pool or connection it is
//! given ([`Target`]); its rows are the native rows, decoded in place ([`DbRow`]).
//!
//! What differs between the backends in connecting lives in one module each: [`sqlite`] (the
//! file or memory, the pragmas; [`checkpoint`], its write-ahead log's background checkpoint)
//! and [`postgres`]; [`Pool::begin_write`] begins SQLite's write
//! transactions `IMMEDIATE`. No query outside `storage` runs through sqlx.

mod checkpoint;
mod postgres;
mod query;
mod row;
mod sqlite;

pub(in crate::storage) use query::{query, query_as, query_scalar, Param, Query};
pub(in crate::storage) use row::DbRow;

use super::Backend;
use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgConnection, PgPool};
use sqlx::sqlite::{SqliteConnection, SqlitePool};
use sqlx::{Postgres, Sqlite, Transaction};

pub(in crate::storage) use checkpoint::Checkpointer;
pub(in crate::storage) use postgres::connect as connect_postgres;
pub(in crate::storage) use sqlite::connect as connect_sqlite;
#[cfg(test)]
pub(in crate::storage) use sqlite::split_url as split_sqlite_url;

/// How long a request waits for a pooled connection before it is answered 503 with
/// `Retry-After` (the database is down, or every connection is busy under load). sqlx's
/// default, 30 s, holds a client longer than most CI HTTP clients wait.
const POOL_ACQUIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// A connection pool of either database.
#[derive(Clone, Debug)]
pub(in crate::storage) enum Pool {
    /// Embedded SQLite.
    Sqlite(SqlitePool),
    /// PostgreSQL.
    Postgres(PgPool),
}

impl Pool {
    /// Which database this pool connects to.
    pub(in crate::storage) fn backend(&self) -> Backend {
        match self {
            Pool::Sqlite(_) => Backend::Sqlite,
            Pool::Postgres(_) => Backend::Postgres,
        }
    }

    /// A connection of the pool, for several statements on one connection outside a
    /// transaction.
    pub(in crate::storage) async fn acquire(&self) -> Result<Conn, sqlx::Error> {
        Ok(match self {
            Pool::Sqlite(pool) => Conn::Sqlite(pool.acquire().await?),
            Pool::Postgres(pool) => Conn::Postgres(pool.acquire().await?),
        })
    }

    /// Begins a transaction that will write. On SQLite it takes the write lock at once
    /// (`BEGIN IMMEDIATE`): a deferred transaction that read first and then writes after
    /// another connection committed fails at once with "database is locked"
    /// (`SQLITE_BUSY_SNAPSHOT` in WAL mode, which `busy_timeout` does not retry), and uploads,
    /// analyses and the background change-point scan do write concurrently.
    pub(in crate::storage) async fn begin_write(&self) -> Result<Tx, sqlx::Error> {
        Ok(Tx(match self {
            Pool::Sqlite(pool) => Conn::SqliteTx(pool.begin_with("BEGIN IMMEDIATE").await?),
            Pool::Postgres(pool) => Conn::PostgresTx(pool.begin().await?),
        }))
    }

    /// Closes every connection; later acquisitions fail.
    pub(in crate::storage) async fn close(&self) {
        match self {
            Pool::Sqlite(pool) => pool.close().await,
            Pool::Postgres(pool) => pool.close().await,
        }
    }

    /// Whether [`Pool::close`] was called.
    pub(in crate::storage) fn is_closed(&self) -> bool {
        match self {
            Pool::Sqlite(pool) => pool.is_closed(),
            Pool::Postgres(pool) => pool.is_closed(),
        }
    }

    /// Applies `migrations` (the embedded ones of this pool's database).
    pub(in crate::storage) async fn migrate(
        &self,
        migrations: &sqlx::migrate::Migrator,
    ) -> Result<(), sqlx::migrate::MigrateError> {
        match self {
            Pool::Sqlite(pool) => migrations.run(pool).await,
            Pool::Postgres(pool) => migrations.run(pool).await,
        }
    }
}

/// One connection taken from a [`Pool`]: alone, or inside a transaction ([`Tx`]). Helpers that
/// must run several statements on one connection take `&mut Conn`.
pub(in crate::storage) enum Conn {
    /// A SQLite connection outside a transaction.
    Sqlite(PoolConnection<Sqlite>),
    /// A Postgres connection outside a transaction.
    Postgres(PoolConnection<Postgres>),
    /// A SQLite transaction (only a [`Tx`] holds one).
    SqliteTx(Transaction<'static, Sqlite>),
    /// A Postgres transaction (only a [`Tx`] holds one).
    PostgresTx(Transaction<'static, Postgres>),
}

impl Conn {
    /// Which database this connection talks to.
    pub(in crate::storage) fn backend(&self) -> Backend {
        match self {
            Conn::Sqlite(_) | Conn::SqliteTx(_) => Backend::Sqlite,
            Conn::Postgres(_) | Conn::PostgresTx(_) => Backend::Postgres,
        }
    }
}

/// A transaction begun by [`Pool::begin_write`]; dereferences to its [`Conn`]. Dropped without
/// [`Tx::commit`], it rolls back (sqlx's transactions do).
pub(in crate::storage) struct Tx(Conn);

impl Tx {
    /// Commits the transaction.
    pub(in crate::storage) async fn commit(self) -> Result<(), sqlx::Error> {
        match self.0 {
            Conn::SqliteTx(tx) => tx.commit().await,
            Conn::PostgresTx(tx) => tx.commit().await,
            Conn::Sqlite(_) | Conn::Postgres(_) => unreachable!("a Tx holds a transaction"),
        }
    }

    /// Rolls the transaction back.
    pub(in crate::storage) async fn rollback(self) -> Result<(), sqlx::Error> {
        match self.0 {
            Conn::SqliteTx(tx) => tx.rollback().await,
            Conn::PostgresTx(tx) => tx.rollback().await,
            Conn::Sqlite(_) | Conn::Postgres(_) => unreachable!("a Tx holds a transaction"),
        }
    }
}

impl std::ops::Deref for Tx {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        &self.0
    }
}

impl std::ops::DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut Conn {
        &mut self.0
    }
}

/// Where a [`Query`] runs: a pool (each statement on whichever connection is free) or one
/// connection (a [`Conn`] or [`Tx`]).
pub(in crate::storage) enum Target<'e> {
    /// Any free connection of a SQLite pool.
    SqlitePool(&'e SqlitePool),
    /// Any free connection of a Postgres pool.
    PostgresPool(&'e PgPool),
    /// This SQLite connection (maybe inside a transaction).
    Sqlite(&'e mut SqliteConnection),
    /// This Postgres connection (maybe inside a transaction).
    Postgres(&'e mut PgConnection),
}

/// Whether a pooled connection may be handed out: not when it is still inside a transaction.
/// That happens after a store fault: when a `COMMIT` fails because the disk is full, SQLite
/// has already rolled the transaction back, so the `ROLLBACK` sqlx sends next fails too and
/// sqlx's transaction depth for the connection stays at 1; every later `BEGIN` on it then
/// fails ("attempted to call begin_with at non-zero transaction depth") until a restart. A
/// connection refused here is closed and the pool opens a fresh one. (Not used for the
/// in-memory SQLite database, whose single connection is the database.)
fn outside_transaction(conn: &impl sqlx::Connection) -> bool {
    let clean = !conn.is_in_transaction();
    if !clean {
        tracing::warn!("a database connection left inside a failed transaction was closed");
    }
    clean
}

impl<'e> From<&'e Pool> for Target<'e> {
    fn from(pool: &'e Pool) -> Target<'e> {
        match pool {
            Pool::Sqlite(pool) => Target::SqlitePool(pool),
            Pool::Postgres(pool) => Target::PostgresPool(pool),
        }
    }
}

impl<'e> From<&'e mut Conn> for Target<'e> {
    fn from(conn: &'e mut Conn) -> Target<'e> {
        match conn {
            Conn::Sqlite(c) => Target::Sqlite(c),
            Conn::Postgres(c) => Target::Postgres(c),
            Conn::SqliteTx(tx) => Target::Sqlite(tx),
            Conn::PostgresTx(tx) => Target::Postgres(tx),
        }
    }
}

impl<'e> From<&'e mut Tx> for Target<'e> {
    fn from(tx: &'e mut Tx) -> Target<'e> {
        Target::from(&mut tx.0)
    }
}

#[cfg(test)]
mod tests;
