//! The baseline windows an analysis reads come from runs kept in memory between uploads
//! (`storage::run_values`): what they return must be what the database holds now, on every
//! database, when another server on the same database stores runs (at new commits and as a
//! repeat at a commit already read) and excludes one. The oracles are a store connected
//! afresh, which holds nothing in memory, and plain SQL.

use crate::common;

use benchtrail_core::history::CommitGraph;
use benchtrail_core::metric::MetricValue;
use benchtrail_core::Stat;
use benchtrail_server::storage::{HistoryPoint, SeriesFilter, Store};
use common::db::stores;
use common::server::TestServer;
use serde_json::{json, Value};

fn sha(i: usize) -> String {
    format!("{:040x}", 0xcac0_0000_u64 + i as u64)
}

/// Commit `i`'s upload (its `repeat`-th run): two cells, three values each, every value
/// different so that a value read at the wrong run, result or series shows.
fn upload(i: usize, repeat: usize) -> Value {
    let results: Vec<Value> = [1, 8]
        .iter()
        .map(|c| {
            let v = (i * 100 + repeat * 10 + c) as f64;
            json!({
                "cell": {"load": {"max_concurrency": c, "request_rate": "inf"},
                         "input_len": 1024, "output_len": 128},
                "configuration": {"hardware": {"accelerator": "NVIDIA H100 80GB HBM3",
                                               "accelerator_count": 1},
                                  "engine": {"name": "vllm"}},
                "metrics": [
                    MetricValue::new("ttft", Stat::Percentile("50".into()), 100.0 + v, None),
                    MetricValue::new("ttft", Stat::Percentile("99".into()), 300.0 + v, None),
                    MetricValue::new("output_throughput", Stat::Value, 2000.0 + v, None),
                ],
            })
        })
        .collect();
    let parents: Vec<String> = if i == 0 { vec![] } else { vec![sha(i - 1)] };
    json!({
        "run": {"commit": {"sha": sha(i), "parents": parents,
                           "time": format!("2026-06-01T{:02}:00:00Z", i)},
                "branch": "main", "run_at": format!("2026-06-02T{:02}:{:02}:00Z", i, repeat)},
        "results": results,
    })
}

/// Every series of project `demo` and its id.
async fn series_of(store: &Store) -> (i64, Vec<String>) {
    let project = store.project("demo").await.unwrap().expect("project demo");
    let page = store
        .list_series(project.id, &SeriesFilter::default(), None, 100)
        .await
        .unwrap();
    let ids = page.items.into_iter().map(|s| s.series_id).collect();
    (project.id, ids)
}

/// The window of `commits` as `store` reads it for an analysis, one group (here: each
/// series on its own, then all together) at a time, as the analysis does.
async fn window(
    store: &Store,
    project: i64,
    ids: &[String],
    commits: &[String],
    graph: &CommitGraph,
) -> Vec<HistoryPoint> {
    let mut points = Vec::new();
    for id in ids {
        let one = std::slice::from_ref(id);
        points.extend(
            store
                .series_history_at(project, one, Some(commits), graph)
                .await
                .unwrap(),
        );
    }
    points.extend(
        store
            .series_history_at(project, ids, Some(commits), graph)
            .await
            .unwrap(),
    );
    points
}

/// Every stored metric value as `(series, result, run, value)`, sorted, read with sqlx
/// directly (no benchtrail code between the test and the database).
async fn stored_values(url: &str) -> Vec<(String, i64, String, String)> {
    sqlx::any::install_default_drivers();
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(url)
        .await
        .unwrap();
    let rows: Vec<(String, i64, String, f64)> = sqlx::query_as(
        "SELECT s.series_id, mv.result_id, res.run_id, mv.value \
         FROM metric_values mv JOIN results res ON res.id = mv.result_id \
         JOIN series s ON s.seq = mv.series_seq",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let mut rows: Vec<(String, i64, String, String)> = rows
        .into_iter()
        .map(|(s, r, run, v)| (s, r, run, format!("{v}")))
        .collect();
    rows.sort();
    rows
}

#[tokio::test]
async fn a_window_read_from_memory_is_the_database_as_it_is_now() {
    for db in stores().await {
        let name = db.name;
        let url = db.url.clone();
        let a = TestServer::start(db.store.clone()).await;
        let token = a.project_with_token("demo", json!({})).await;
        for i in 0..6 {
            let (status, body) = a.upload("demo", &token, &upload(i, 0)).await;
            assert_eq!(status, 201, "{name}: {body}");
        }
        let (project, ids) = series_of(&a.store).await;
        assert_eq!(ids.len(), 6, "{name}: two cells × three values");
        let commits: Vec<String> = (2..6).map(sha).collect();
        let graph = a.store.commit_graph(project).await.unwrap();
        let before = window(&a.store, project, &ids, &commits, &graph).await;
        // 6 series × 4 runs, read one series at a time and then all together.
        assert_eq!(before.len(), 2 * 24, "{name}");
        let (runs, values) = a.store.cached_run_values();
        assert!(
            runs >= 4 && values >= 4 * 6,
            "{name}: {runs} runs, {values} values held"
        );

        // A second server on the same database: a repeat at commit 4 (in the window A has
        // read), a new commit 6, and an exclusion of commit 3's run.
        let b = TestServer::start(Store::connect(&url).await.unwrap()).await;
        let (status, body) = b.upload("demo", &token, &upload(4, 1)).await;
        assert_eq!(status, 201, "{name}: {body}");
        let (status, body) = b.upload("demo", &token, &upload(6, 0)).await;
        assert_eq!(status, 201, "{name}: {body}");
        let run3 = a.store.commit_runs(project, "main", &sha(3)).await.unwrap();
        b.store
            .exclude_run(run3[0], "noisy neighbour")
            .await
            .unwrap();

        let commits: Vec<String> = (2..7).map(sha).collect();
        let graph = a.store.commit_graph(project).await.unwrap();
        let cached = window(&a.store, project, &ids, &commits, &graph).await;
        let fresh = Store::connect(&url).await.unwrap();
        assert_eq!(fresh.cached_run_values(), (0, 0), "{name}");
        let expected = window(&fresh, project, &ids, &commits, &graph).await;
        assert_eq!(cached, expected, "{name}");
        // 6 series × 6 runs (commits 2–6 and the repeat at 4), twice.
        assert_eq!(cached.len(), 2 * 36, "{name}");
        let repeat: Vec<f64> = cached[36..]
            .iter()
            .filter(|p| *p.commit_sha == *sha(4))
            .map(|p| p.value)
            .collect();
        // Commit 4's two runs in run time order; in each, its results in upload order (cells 1
        // and 8), and in each result the series in the order asked for (`list_series`: metric,
        // then statistic).
        assert_eq!(
            repeat,
            [
                2401.0, 501.0, 701.0, 2408.0, 508.0, 708.0, 2411.0, 511.0, 711.0, 2418.0, 518.0,
                718.0
            ],
            "{name}"
        );
        let excluded: Vec<bool> = cached[36..]
            .iter()
            .filter(|p| *p.commit_sha == *sha(3))
            .map(|p| p.excluded)
            .collect();
        assert_eq!(
            excluded, [true; 6],
            "{name}: the exclusion is read, not kept"
        );

        // The window over every commit holds every stored value, as plain SQL reads them.
        let all: Vec<String> = (0..7).map(sha).collect();
        let windowed = a
            .store
            .series_history_at(project, &ids, Some(&all), &graph)
            .await
            .unwrap();
        let mut got: Vec<(String, i64, String, String)> = windowed
            .iter()
            .map(|p| {
                let value = format!("{}", p.value);
                (
                    p.series_id.to_string(),
                    p.result_id,
                    p.run_id.to_string(),
                    value,
                )
            })
            .collect();
        got.sort();
        assert_eq!(got, stored_values(&url).await, "{name}");
        assert_eq!(got.len(), 6 * 8, "{name}");
        fresh.close().await;
        b.store.close().await;
        db.cleanup().await;
    }
}
