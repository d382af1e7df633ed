//! Uploaded files are stored in their smaller form (`storage::file_codec`): the per-request
//! files of real tools as `BTJ2` (their Python-printed floats kept as doubles, those the
//! results' samples hold as references to them), a summary file as zstd, and every one reads
//! back through `GET /api/v1/runs/{id}/files/{n}` byte for byte, with the size and SHA-256 of
//! what was sent. On SQLite, and on Postgres when `BENCHTRAIL_TEST_DATABASE_URL` is set.

use crate::common;

use common::db::stores;
use common::server::{repo_file, upload_doc, TestServer};
use serde_json::json;
use sqlx::Row;

/// (file, the first bytes its stored form starts with, its stored size in bytes).
const FILES: [(&str, &[u8], usize); 4] = [
    // vLLM `bench serve --save-detailed` against the mock server (60 requests).
    (
        "examples/history/baseline_completions_c4_isl512_osl128.json",
        b"BTJ2",
        22_926,
    ),
    // SGLang `bench_serving --output-details` from a public repository (100 requests).
    (
        "testdata/sglang/llm-benchmaxxing-sglang-bench_serving-2026-03-output-details-server_info-gpt-oss-120b-h100.jsonl",
        b"BTJ2",
        15_743,
    ),
    // SGLang 0.5.23 against the mock server, per-request arrays.
    (
        "testdata/sglang/sglang-0.5.23-mock-baseline_completions_c4_isl512_osl128.jsonl",
        b"BTJ2",
        22_038,
    ),
    // A summary: too few numbers to gain, zstd (RFC 8878 magic).
    (
        "testdata/vllm/llm-benchmaxxing-vllm-bench-serve-2026-01-glm47-fp8-h100-tp8.json",
        &[0x28, 0xB5, 0x2F, 0xFD],
        568,
    ),
];

#[tokio::test]
async fn files_are_stored_small_and_read_back_as_sent() {
    sqlx::any::install_default_drivers();
    for db in stores().await {
        let name = db.name;
        let server = TestServer::start(db.store.clone()).await;
        let token = server.project_with_token("files", json!({})).await;
        let pool = sqlx::AnyPool::connect(&db.url).await.unwrap();
        for (i, (path, magic, stored_size)) in FILES.iter().enumerate() {
            let sent = repo_file(path);
            let doc = upload_doc(&format!("{:040x}", i + 1), "2026-12-01T00:00:00Z", &[path]);
            let (status, receipt) = server.upload("files", &token, &doc).await;
            assert_eq!(status, 201, "{name} {path}: {receipt}");
            let run = receipt["run_id"].as_str().unwrap();

            let row = sqlx::query(
                "SELECT content_gz, size, sha256 FROM run_files WHERE run_id = $1 AND idx = 0",
            )
            .bind(run)
            .fetch_one(&pool)
            .await
            .unwrap();
            let stored: Vec<u8> = row.get("content_gz");
            assert!(stored.starts_with(magic), "{name} {path}");
            assert_eq!(stored.len(), *stored_size, "{name} {path}");
            assert_eq!(
                row.get::<i64, _>("size"),
                sent.len() as i64,
                "{name} {path}"
            );
            assert_eq!(
                row.get::<String, _>("sha256"),
                benchtrail_core::sha256_hex(sent.as_bytes()),
                "{name} {path}"
            );

            let r = server
                .http
                .get(server.url(&format!("/api/v1/runs/{run}/files/0")))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200, "{name} {path}");
            assert_eq!(r.bytes().await.unwrap(), sent.as_bytes(), "{name} {path}");
        }
        pool.close().await;
        drop(server);
        db.cleanup().await;
    }
}

/// Two detailed files in one run: each refers to the samples of its own result, and a file
/// whose samples are gone is an error (500), never a download with other numbers in it.
#[tokio::test]
async fn each_file_refers_to_its_own_results_samples() {
    sqlx::any::install_default_drivers();
    const C1: &str = "examples/history/candidate_completions_c1_isl512_osl128.json";
    const C4: &str = "examples/history/candidate_completions_c4_isl512_osl128.json";
    for db in stores().await {
        let name = db.name;
        let server = TestServer::start(db.store.clone()).await;
        let token = server.project_with_token("two-files", json!({})).await;
        let pool = sqlx::AnyPool::connect(&db.url).await.unwrap();
        let doc = upload_doc(&format!("{:040x}", 7), "2026-12-01T00:00:00Z", &[C1, C4]);
        let (status, receipt) = server.upload("two-files", &token, &doc).await;
        assert_eq!(status, 201, "{name}: {receipt}");
        let run = receipt["run_id"].as_str().unwrap();
        let download = |n: usize| {
            let request = server
                .http
                .get(server.url(&format!("/api/v1/runs/{run}/files/{n}")))
                .bearer_auth(&token);
            async move {
                let r = request.send().await.unwrap();
                (r.status().as_u16(), r.bytes().await.unwrap())
            }
        };
        for (n, path) in [C1, C4].into_iter().enumerate() {
            let stored: Vec<u8> =
                sqlx::query("SELECT content_gz FROM run_files WHERE run_id = $1 AND idx = $2")
                    .bind(run)
                    .bind(n as i64)
                    .fetch_one(&pool)
                    .await
                    .unwrap()
                    .get("content_gz");
            assert!(stored.starts_with(b"BTJ2"), "{name} {path}");
            let (status, bytes) = download(n).await;
            assert_eq!(status, 200, "{name} {path}");
            assert_eq!(bytes, repo_file(path).as_bytes(), "{name} {path}");
        }

        sqlx::query(
            "DELETE FROM result_samples WHERE result_id IN \
             (SELECT id FROM results WHERE run_id = $1 AND idx = 1)",
        )
        .bind(run)
        .execute(&pool)
        .await
        .unwrap();
        assert_eq!(download(1).await.0, 500, "{name}");
        let (status, bytes) = download(0).await;
        assert_eq!(
            (status, &bytes[..]),
            (200, repo_file(C1).as_bytes()),
            "{name}"
        );
        pool.close().await;
        drop(server);
        db.cleanup().await;
    }
}
