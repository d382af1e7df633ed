//! The query layer on both drivers: SQLite in memory always, Postgres when
//! `BENCHTRAIL_TEST_DATABASE_URL` names a server (then it must answer: CI sets it).

use super::*;

/// One pool per backend under test.
async fn pools() -> Vec<Pool> {
    let mut pools = vec![connect_sqlite("sqlite::memory:").await.unwrap().0];
    if let Ok(url) = std::env::var("BENCHTRAIL_TEST_DATABASE_URL") {
        let pool = connect_postgres(&url)
            .await
            .unwrap_or_else(|e| panic!("BENCHTRAIL_TEST_DATABASE_URL={url}: {e}"));
        pools.push(pool);
    }
    pools
}

/// A new table of `columns` (SQL column definitions) under a name no other test uses.
async fn scratch_table(pool: &Pool, columns: &str) -> String {
    let table = format!("db_layer_{}", uuid::Uuid::new_v4().simple());
    query(&format!("CREATE TABLE {table} ({columns})"))
        .execute(pool)
        .await
        .unwrap();
    table
}

async fn drop_table(pool: &Pool, table: &str) {
    query(&format!("DROP TABLE {table}"))
        .execute(pool)
        .await
        .unwrap();
}

#[tokio::test]
async fn integers_of_every_width_read_as_i64() {
    for pool in pools().await {
        let backend = pool.backend();
        // SMALLINT and INTEGER are INT2 and INT4 on Postgres, one INTEGER on SQLite.
        let row = query(
            "SELECT CAST(7 AS SMALLINT) AS a, 8 AS b, CAST(9 AS BIGINT) AS c, \
             CAST(NULL AS INTEGER) AS d",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        let read: (i64, i64, i64, Option<i64>) = (
            row.try_get("a").unwrap(),
            row.try_get("b").unwrap(),
            row.try_get("c").unwrap(),
            row.try_get("d").unwrap(),
        );
        assert_eq!(read, (7, 8, 9, None), "{backend:?}");
        // A NULL where a value is expected is an error on both (sqlx's own SQLite driver
        // read it as 0).
        let null_as_i64 = row.try_get::<i64, _>("d");
        assert!(
            matches!(null_as_i64, Err(sqlx::Error::ColumnDecode { .. })),
            "{backend:?}: {null_as_i64:?}"
        );
        let row = query("SELECT CAST(NULL AS TEXT) AS t, CAST(NULL AS DOUBLE PRECISION) AS f")
            .fetch_one(&pool)
            .await
            .unwrap();
        let null_as_text = row.try_get::<String, _>("t");
        assert!(
            matches!(null_as_text, Err(sqlx::Error::ColumnDecode { .. })),
            "{backend:?}: {null_as_text:?}"
        );
        let null_as_f64 = row.try_get::<f64, _>("f");
        assert!(
            matches!(null_as_f64, Err(sqlx::Error::ColumnDecode { .. })),
            "{backend:?}: {null_as_f64:?}"
        );
    }
}

#[tokio::test]
async fn nulls_of_every_type_bind_and_read_back() {
    for pool in pools().await {
        let backend = pool.backend();
        // A NULL DOUBLE PRECISION is what sqlx's Any driver could not send to Postgres.
        let row: (Option<f64>, Option<String>, Option<i64>, Option<Vec<u8>>) = query_as(
            "SELECT CAST($1 AS DOUBLE PRECISION), CAST($2 AS TEXT), CAST($3 AS BIGINT), $4",
        )
        .bind(None::<f64>)
        .bind(None::<String>)
        .bind(None::<i64>)
        .bind(None::<Vec<u8>>)
        .fetch_optional(&pool)
        .await
        .unwrap()
        .unwrap();
        assert_eq!(row, (None, None, None, None), "{backend:?}");
        let row: (f64, String, i64, Vec<u8>) =
            query_as("SELECT CAST($1 AS DOUBLE PRECISION), CAST($2 AS TEXT), $3, $4")
                .bind(0.1 + 0.2)
                .bind("ttft")
                .bind(i64::MIN)
                .bind(&b"\x00\xff"[..])
                .fetch_optional(&pool)
                .await
                .unwrap()
                .unwrap();
        assert_eq!(
            row,
            (0.1 + 0.2, "ttft".to_string(), i64::MIN, vec![0, 255]),
            "{backend:?}"
        );
    }
}

#[tokio::test]
async fn scalars_read_column_zero_and_no_row_is_none() {
    for pool in pools().await {
        let backend = pool.backend();
        let none: Option<i64> = query_scalar("SELECT 1 WHERE 1 = 0")
            .fetch_optional(&pool)
            .await
            .unwrap();
        assert_eq!(none, None, "{backend:?}");
        let missing = query_scalar::<i64>("SELECT 1 WHERE 1 = 0")
            .fetch_one(&pool)
            .await;
        assert!(
            matches!(missing, Err(sqlx::Error::RowNotFound)),
            "{backend:?}"
        );
        let mut conn = pool.acquire().await.unwrap();
        let all: Vec<String> = query_scalar("SELECT 'b' AS x UNION ALL SELECT 'a' ORDER BY x")
            .fetch_all(&mut conn)
            .await
            .unwrap();
        assert_eq!(all, ["a", "b"], "{backend:?}");
    }
}

#[tokio::test]
async fn a_transaction_dropped_uncommitted_writes_nothing() {
    for pool in pools().await {
        let backend = pool.backend();
        let table = scratch_table(&pool, "x BIGINT").await;
        let insert = format!("INSERT INTO {table} (x) VALUES ($1)");
        let mut tx = pool.begin_write().await.unwrap();
        query(&insert).bind(1i64).execute(&mut tx).await.unwrap();
        tx.rollback().await.unwrap();
        let mut tx = pool.begin_write().await.unwrap();
        let done = query(&insert).bind(2i64).execute(&mut *tx).await.unwrap();
        assert_eq!(done.rows_affected(), 1, "{backend:?}");
        tx.commit().await.unwrap();
        let count = format!("SELECT x FROM {table}");
        let stored: Vec<i64> = query_scalar(&count).fetch_all(&pool).await.unwrap();
        assert_eq!(stored, [2], "{backend:?}");
        drop_table(&pool, &table).await;
    }
}

#[tokio::test]
async fn timestamps_bind_and_read_as_each_database_stores_them() {
    use chrono::{DateTime, Utc};
    let utc = |text: &str| text.parse::<DateTime<Utc>>().unwrap();
    for pool in pools().await {
        let backend = pool.backend();
        // A column as the migrations declare timestamps: TEXT on SQLite, TIMESTAMPTZ on
        // Postgres (0022).
        let column = match backend {
            Backend::Sqlite => "TEXT",
            Backend::Postgres => "TIMESTAMPTZ",
        };
        let table = scratch_table(&pool, &format!("k BIGINT, at {column}")).await;
        let insert = format!("INSERT INTO {table} (k, at) VALUES ($1, $2)");
        // Nanoseconds are dropped (both keep microseconds), not rounded.
        let stamps = [
            (1, Some(utc("2024-05-01T08:09:10.123456789Z"))),
            (2, Some(utc("1999-12-31T23:59:59Z"))),
            (3, None),
        ];
        for (k, at) in stamps {
            query(&insert)
                .bind(k)
                .bind(at)
                .execute(&pool)
                .await
                .unwrap();
        }
        let read: Vec<(i64, Option<DateTime<Utc>>)> =
            query_as(&format!("SELECT k, at FROM {table} ORDER BY k"))
                .fetch_all(&pool)
                .await
                .unwrap();
        assert_eq!(
            read,
            [
                (1, Some(utc("2024-05-01T08:09:10.123456Z"))),
                (2, Some(utc("1999-12-31T23:59:59Z"))),
                (3, None)
            ],
            "{backend:?}"
        );
        // Compared and ordered as times on both (SQLite's fixed-width text orders as time).
        let after: Vec<i64> = query_scalar(&format!(
            "SELECT k FROM {table} WHERE at > $1 ORDER BY at DESC"
        ))
        .bind(utc("2000-01-01T00:00:00.000001Z"))
        .fetch_all(&pool)
        .await
        .unwrap();
        assert_eq!(after, [1], "{backend:?}");
        // A NULL read as a time is refused, as for every type.
        let null = query(&format!("SELECT at FROM {table} WHERE k = 3"))
            .fetch_one(&pool)
            .await
            .unwrap()
            .try_get::<DateTime<Utc>, _>("at");
        assert!(
            matches!(null, Err(sqlx::Error::ColumnDecode { .. })),
            "{backend:?}: {null:?}"
        );
        drop_table(&pool, &table).await;
    }
}

#[tokio::test]
async fn text_that_is_not_a_timestamp_fails_naming_its_column() {
    let pool = connect_sqlite("sqlite::memory:").await.unwrap().0;
    let row = query("SELECT 'yesterday' AS run_at")
        .fetch_one(&pool)
        .await
        .unwrap();
    let err = row
        .try_get::<chrono::DateTime<chrono::Utc>, _>("run_at")
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("run_at") && message.contains("`yesterday` is not an RFC 3339 timestamp"),
        "{message}"
    );
}
