//! Per-request samples are stored with their chunk gaps (ITL) in a column of their own
//! (migration 0021; `bts3-gzip` since session 40), so readers that want no ITL read and
//! inflate none; rows older servers stored (`bts2-gzip`, in milliseconds; `bts1-gzip`,
//! everything in `data`) still read the same. On SQLite, and
//! on Postgres when `BENCHTRAIL_TEST_DATABASE_URL` is set.

use crate::common;

use benchtrail_core::adapters::{read_files, FileSpec};
use benchtrail_core::samples::RequestSamples;
use benchtrail_server::storage::samples_codec;
use benchtrail_server::storage::SampleColumns;
use common::db::stores;
use common::server::{repo_file, upload_doc, TestServer};
use serde_json::json;
use sqlx::Row;

/// A real `vllm bench serve --save-detailed` file: 60 requests with their chunk gaps.
const FILE: &str = "examples/history/goodput_baseline_s11_c4.json";
/// What a server before migration 0021 stored in `result_samples.data` for `FILE` (encoding
/// `bts1-gzip`, every column in one gzip member): the bytes of
/// `benchtrail_server::storage::samples_codec::encode` at commit `c4888a4`, on that file's
/// samples. Kept here, not in `testdata/`, whose files are all tool outputs that upload.
const VERSION_1: &str = "server/tests/fixtures/bts1-goodput_baseline_s11_c4.bin";
/// What a server of sessions 34–39 stored for `FILE` (`bts2-gzip`: `data` and `itl_data`),
/// as version 2's encoder (kept as `encode_v2` in `samples_codec`'s tests) writes them.
const VERSION_2: [&str; 2] = [
    "server/tests/fixtures/bts2-goodput_baseline_s11_c4.data.bin",
    "server/tests/fixtures/bts2-goodput_baseline_s11_c4.itl.bin",
];

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn samples_of_file() -> RequestSamples {
    let text = repo_file(FILE);
    let mut read = read_files(&[FileSpec {
        name: "goodput_baseline_s11_c4.json",
        format: None,
        text: &text,
    }])
    .unwrap();
    read.remove(0).results.remove(0).samples.unwrap()
}

#[tokio::test]
async fn chunk_gaps_are_stored_apart_and_rows_stored_before_still_read() {
    sqlx::any::install_default_drivers();
    let expected = samples_of_file();
    assert_eq!(expected.len(), 60);
    let without_itl = RequestSamples {
        itl_ms: None,
        ..expected.clone()
    };
    let encoded = samples_codec::encode(&expected);
    for db in stores().await {
        let name = db.name;
        let server = TestServer::start(db.store.clone()).await;
        let token = server.project_with_token("itl", json!({})).await;
        let (status, receipt) = server
            .upload(
                "itl",
                &token,
                &upload_doc("c0ffee1", "2025-01-01T00:00:00Z", &[FILE]),
            )
            .await;
        assert_eq!(status, 201, "{name}: {receipt}");
        let run = receipt["run_id"].as_str().unwrap().to_string();

        // The row as stored: version 3, the gaps apart, byte for byte the encoder's.
        let pool = sqlx::AnyPool::connect(&db.url).await.unwrap();
        let row = sqlx::query(
            "SELECT rs.result_id, rs.encoding, rs.requests, rs.data, rs.itl_data \
             FROM result_samples rs JOIN results r ON r.id = rs.result_id WHERE r.run_id = $1",
        )
        .bind(&run)
        .fetch_one(&pool)
        .await
        .unwrap();
        let result_id: i64 = row.get("result_id");
        assert_eq!(row.get::<String, _>("encoding"), "bts3-gzip", "{name}");
        assert_eq!(row.get::<i64, _>("requests"), 60, "{name}");
        assert_eq!(row.get::<Vec<u8>, _>("data"), encoded.data, "{name}");
        assert_eq!(
            row.get::<Option<Vec<u8>>, _>("itl_data"),
            encoded.itl,
            "{name}"
        );
        // The gaps are nearly all of it: what a reader without ITL is spared.
        let itl_len = encoded.itl.as_ref().unwrap().len();
        assert!(
            encoded.data.len() * 5 < itl_len,
            "{name}: {} B and {itl_len} B",
            encoded.data.len()
        );

        let read = |columns| {
            let store = db.store.clone();
            let run = run.parse().unwrap();
            async move { store.run_samples(run, columns).await.unwrap() }
        };
        assert_eq!(read(SampleColumns::All).await[&0], expected, "{name}");
        assert_eq!(
            read(SampleColumns::WithoutItl).await[&0],
            without_itl,
            "{name}"
        );

        // The row as a server of sessions 34–39 wrote it (its exact bytes).
        sqlx::query(
            "UPDATE result_samples SET encoding = 'bts2-gzip', data = $1, itl_data = $2 \
             WHERE result_id = $3",
        )
        .bind(fixture(VERSION_2[0]))
        .bind(fixture(VERSION_2[1]))
        .bind(result_id)
        .execute(&pool)
        .await
        .unwrap();
        assert_eq!(read(SampleColumns::All).await[&0], expected, "{name}");
        assert_eq!(
            read(SampleColumns::WithoutItl).await[&0],
            without_itl,
            "{name}"
        );

        // The row as a server before migration 0021 wrote it (its exact bytes).
        sqlx::query(
            "UPDATE result_samples SET encoding = 'bts1-gzip', data = $1, itl_data = NULL \
             WHERE result_id = $2",
        )
        .bind(fixture(VERSION_1))
        .bind(result_id)
        .execute(&pool)
        .await
        .unwrap();
        pool.close().await;
        assert_eq!(read(SampleColumns::All).await[&0], expected, "{name}");
        assert_eq!(
            read(SampleColumns::WithoutItl).await[&0],
            without_itl,
            "{name}"
        );
        let one = db
            .store
            .result_samples(run.parse().unwrap(), 0)
            .await
            .unwrap();
        assert_eq!(one, Some(expected.clone()), "{name}");

        drop(server);
        db.cleanup().await;
    }
}
