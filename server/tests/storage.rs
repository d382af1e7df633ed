//! The shared storage suite: every test body runs against every database from
//! `common::db::stores()` (SQLite always, Postgres when `BENCHTRAIL_TEST_DATABASE_URL` is set),
//! so the one-SQL-text-for-both design is checked on both engines with exact values.

use crate::common;

use benchtrail_core::{sha256_hex, Direction, Stat, Unit};
use benchtrail_server::storage::*;
use chrono::{DateTime, FixedOffset, Utc};
use common::db::for_each_store;
use serde_json::json;
use std::io::Write;
use uuid::Uuid;

// ---- builders ---------------------------------------------------------------------------------

fn ts(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&Utc)
}

/// A time with its UTC offset, as commit times are stored.
fn tsz(text: &str) -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339(text).unwrap()
}

fn new_project(slug: &str) -> NewProject {
    NewProject {
        slug: slug.to_string(),
        name: format!("Project {slug}"),
        repository_url: Some(format!("https://github.com/example/{slug}")),
        default_branch: "main".to_string(),
        public: true,
        key_fields: vec!["framework".to_string()],
    }
}

async fn project_id(store: &Store, slug: &str) -> i64 {
    store.create_project(&new_project(slug)).await.unwrap().id
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn new_file(name: &str, content: &[u8]) -> NewFile {
    NewFile {
        name: name.to_string(),
        format: "vllm-serve".to_string(),
        content_gz: gzip(content),
        size: content.len() as i64,
        sha256: sha256_hex(content),
    }
}

/// A series of model `model` at cell `cell_key`; the id is derived like the real one.
fn new_series(project: &str, model: &str, cell_key: &str, metric: &str, stat: &str) -> NewSeries {
    let key_json = json!({"accelerator.model": "H100", "model.name": model}).to_string();
    let key: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&key_json).unwrap();
    let def = benchtrail_core::metric::lookup(metric).expect("a vocabulary metric");
    NewSeries {
        series_id: benchtrail_core::series::series_id(project, &key, cell_key, metric, stat, None),
        series_key_json: key_json,
        cell_key: cell_key.to_string(),
        cell_json: json!({"key": cell_key}).to_string(),
        metric: metric.to_string(),
        stat: stat.parse().unwrap(),
        slo_profile: None,
        unit: def.unit,
        direction: def.direction,
        accelerator: Some("H100".to_string()),
        model: Some(model.to_string()),
        weights_quantization: Some("fp8".to_string()),
        kv_cache_dtype: Some("auto".to_string()),
    }
}

fn new_metric(series: NewSeries, value: f64, n: Option<u64>) -> NewMetric {
    NewMetric {
        series,
        value,
        n,
        ci: None,
    }
}

fn new_result(config_json: &str, cell_key: &str, metrics: Vec<NewMetric>) -> NewResult {
    NewResult {
        config_fingerprint: sha256_hex(config_json.as_bytes()),
        config_json: config_json.to_string(),
        cell_key: cell_key.to_string(),
        cell_json: json!({"key": cell_key}).to_string(),
        facts_json: json!({"num_prompts": 100}).to_string(),
        warnings_json: json!([{"code": "w1", "message": "careful"}]).to_string(),
        source_json: json!({"format": "vllm-serve", "file": 0, "record": 0}).to_string(),
        metrics,
        samples: None,
    }
}

fn new_run(
    project_id: i64,
    commit: &str,
    branch: &str,
    commit_time: Option<&str>,
    run_at: &str,
) -> NewRun {
    NewRun {
        id: Uuid::new_v4(),
        project_id,
        commit_sha: commit.to_string(),
        parent_shas: vec![format!("{commit}-parent")],
        commit_time: commit_time.map(tsz),
        commit_subject: Some(format!("subject of {commit}")),
        branch: branch.to_string(),
        pr_number: None,
        merge_base_sha: None,
        run_at: ts(run_at),
        ci_job_url: None,
        repeat_index: 0,
        repeats_expected: None,
        tags_json: "{}".to_string(),
        files: Vec::new(),
        results: Vec::new(),
        quality: Vec::new(),
    }
}

/// A run with one result holding a ttft p50 value on `model` at `max_concurrency=4`.
fn ttft_run(
    project: (&str, i64),
    commit: &str,
    branch: &str,
    time: Option<&str>,
    run_at: &str,
    value: f64,
) -> NewRun {
    let series = new_series(project.0, "m", "max_concurrency=4", "ttft", "p50");
    let mut run = new_run(project.1, commit, branch, time, run_at);
    run.results = vec![new_result(
        r#"{"model":"m"}"#,
        "max_concurrency=4",
        vec![new_metric(series, value, Some(100))],
    )];
    run
}

// ---- projects, tokens, settings -----------------------------------------------------------------

#[tokio::test]
async fn projects_round_trip_and_duplicate_slug_conflicts() {
    for_each_store(|db, store| async move {
        let before = Utc::now();
        let created = store.create_project(&new_project("beta")).await.unwrap();
        let mut private = new_project("alpha");
        private.public = false;
        private.repository_url = None;
        private.key_fields = vec![];
        let alpha = store.create_project(&private).await.unwrap();
        assert!(
            created.created_at >= before - chrono::Duration::seconds(1),
            "{db}"
        );
        assert_ne!(created.id, alpha.id, "{db}");

        let read = store.project("beta").await.unwrap().unwrap();
        assert_eq!(read, created, "{db}");
        assert_eq!(read.key_fields, vec!["framework".to_string()], "{db}");
        assert_eq!(
            read.repository_url.as_deref(),
            Some("https://github.com/example/beta"),
            "{db}"
        );
        let read_alpha = store.project("alpha").await.unwrap().unwrap();
        assert_eq!(read_alpha, alpha, "{db}");
        assert!(!read_alpha.public, "{db}");
        assert_eq!(read_alpha.repository_url, None, "{db}");
        assert_eq!(store.project("gamma").await.unwrap(), None, "{db}");

        let slugs: Vec<String> = store
            .list_projects()
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.slug)
            .collect();
        assert_eq!(slugs, ["alpha", "beta"], "{db}");

        let err = store
            .create_project(&new_project("beta"))
            .await
            .unwrap_err();
        assert!(matches!(err, StorageError::Conflict(_)), "{db}: {err:?}");
        assert_eq!(store.list_projects().await.unwrap().len(), 2, "{db}");
    })
    .await;
}

/// A token to store: `hash` of project `project_id` with `scope`, no label or expiry.
fn new_token(project_id: i64, scope: Scope, hash: &str) -> NewToken<'_> {
    NewToken {
        project_id,
        scope,
        token_hash: hash,
        prefix: "bt_00000000",
        label: None,
        created_at: Utc::now(),
        expires_at: None,
    }
}

#[tokio::test]
async fn tokens_are_found_by_hash_with_their_scope() {
    for_each_store(|db, store| async move {
        let a = project_id(&store, "a").await;
        let b = project_id(&store, "b").await;
        let ta = store
            .create_token(&new_token(a, Scope::Upload, "hash-a"))
            .await
            .unwrap();
        let tb = store
            .create_token(&new_token(b, Scope::Read, "hash-b"))
            .await
            .unwrap();
        let tb2 = store
            .create_token(&new_token(b, Scope::Write, "hash-b2"))
            .await
            .unwrap();

        let grant = |id, project_id, scope| {
            Some(TokenGrant {
                id,
                project_id,
                scope,
                last_used_at: None,
                label: None,
                prefix: Some("bt_00000000".to_string()),
                expires_at: None,
            })
        };
        assert_eq!(
            store.token("hash-a").await.unwrap(),
            grant(ta.id, a, Scope::Upload),
            "{db}"
        );
        assert_eq!(
            store.token("hash-b").await.unwrap(),
            grant(tb.id, b, Scope::Read),
            "{db}"
        );
        assert_eq!(
            store.token("hash-b2").await.unwrap(),
            grant(tb2.id, b, Scope::Write),
            "{db}"
        );
        assert_eq!(
            store.token("HASH-A").await.unwrap(),
            None,
            "{db}: lookups are exact"
        );
        assert_eq!(store.token("nope").await.unwrap(), None, "{db}");

        let err = store
            .create_token(&new_token(b, Scope::Read, "hash-a"))
            .await
            .unwrap_err();
        assert!(matches!(err, StorageError::Conflict(_)), "{db}: {err:?}");
    })
    .await;
}

#[tokio::test]
async fn admin_token_hash_is_set_then_replaced() {
    for_each_store(|db, store| async move {
        assert_eq!(store.admin_token_hash().await.unwrap(), None, "{db}");
        store.set_admin_token_hash("first").await.unwrap();
        assert_eq!(
            store.admin_token_hash().await.unwrap().as_deref(),
            Some("first"),
            "{db}"
        );
        store.set_admin_token_hash("second").await.unwrap();
        assert_eq!(
            store.admin_token_hash().await.unwrap().as_deref(),
            Some("second"),
            "{db}"
        );
    })
    .await;
}

// ---- runs ---------------------------------------------------------------------------------------

/// A run exercising every column: two files, two results sharing one configuration, metrics
/// given out of display order.
fn full_run(project: (&str, i64)) -> NewRun {
    let (slug, pid) = project;
    let config = r#"{"model":{"name":"m"},"serve":{"tp":1}}"#;
    let cell = "max_concurrency=4";
    let mut run = new_run(
        pid,
        "abc123",
        "feature/x",
        Some("2024-03-01T15:30:00.123456+05:30"),
        "2024-03-01T11:00:00Z",
    );
    run.parent_shas = vec!["p1".into(), "p2".into()];
    run.pr_number = Some(42);
    run.merge_base_sha = Some("base9".into());
    run.ci_job_url = Some("https://ci.example/job/1".into());
    run.repeat_index = 2;
    run.tags_json = json!({"framework": "vllm", "gpu": "H100"}).to_string();
    run.files = vec![
        new_file("bench.json", b"{\"ttft\": [1, 2, 3]}\n"),
        new_file("empty.txt", b""),
    ];
    run.results = vec![
        new_result(
            config,
            cell,
            vec![
                new_metric(
                    new_series(slug, "m", cell, "request_throughput", "value"),
                    12.5,
                    None,
                ),
                new_metric(new_series(slug, "m", cell, "ttft", "std"), 3.25, Some(100)),
                new_metric(
                    new_series(slug, "m", cell, "ttft", "p99.9"),
                    80.0,
                    Some(100),
                ),
                new_metric(
                    new_series(slug, "m", cell, "ttft", "p50"),
                    34.59466175000898,
                    Some(100),
                ),
                new_metric(new_series(slug, "m", cell, "ttft", "p99"), 70.0, Some(100)),
                new_metric(new_series(slug, "m", cell, "ttft", "mean"), 35.0, Some(100)),
                new_metric(
                    new_series(slug, "m", cell, "itl", "max"),
                    9.0,
                    Some(u64::from(u32::MAX) + 7),
                ),
            ],
        ),
        new_result(
            config,
            "max_concurrency=8",
            vec![new_metric(
                new_series(slug, "m", "max_concurrency=8", "ttft", "p50"),
                0.1 + 0.2,
                Some(5),
            )],
        ),
    ];
    run
}

#[tokio::test]
async fn insert_run_round_trips_every_field() {
    for_each_store(|db, store| async move {
        let pid = project_id(&store, "demo").await;
        let run = full_run(("demo", pid));
        let before = Utc::now();
        assert_eq!(
            store.insert_run(&run).await.unwrap(),
            Inserted::Created,
            "{db}"
        );
        let stored = store.run(run.id).await.unwrap().expect("stored run");

        let s = &stored.summary;
        assert!(
            s.uploaded_at >= before - chrono::Duration::seconds(1) && s.uploaded_at <= Utc::now(),
            "{db}"
        );
        let expected_summary = RunSummary {
            id: run.id,
            project: "demo".into(),
            commit_sha: "abc123".into(),
            parent_shas: vec!["p1".into(), "p2".into()],
            // The committer's offset is kept (+05:30), the instant is the same.
            commit_time: Some(tsz("2024-03-01T15:30:00.123456+05:30")),
            commit_subject: Some("subject of abc123".into()),
            branch: "feature/x".into(),
            pr_number: Some(42),
            merge_base_sha: Some("base9".into()),
            run_at: ts("2024-03-01T11:00:00Z"),
            uploaded_at: s.uploaded_at,
            ci_job_url: Some("https://ci.example/job/1".into()),
            repeat_index: 2,
            repeats_expected: None,
            tags: json!({"framework": "vllm", "gpu": "H100"}),
            result_count: 2,
            upload_count: 1,
        };
        assert_eq!(*s, expected_summary, "{db}");
        assert_eq!(
            s.commit_time.unwrap().to_rfc3339(),
            "2024-03-01T15:30:00.123456+05:30",
            "{db}"
        );
        assert_eq!(
            serde_json::to_value(s).unwrap()["commit_time"],
            "2024-03-01T15:30:00.123456+05:30",
            "{db}"
        );

        // Files: metadata in upload order, content decompressed to the exact bytes.
        let infos: Vec<(i64, &str, &str, i64)> = stored
            .files
            .iter()
            .map(|f| (f.index, f.name.as_str(), f.format.as_str(), f.size))
            .collect();
        assert_eq!(
            infos,
            [
                (0, "bench.json", "vllm-serve", 20),
                (1, "empty.txt", "vllm-serve", 0)
            ],
            "{db}"
        );
        let (info, content) = store.run_file(run.id, 0).await.unwrap().unwrap();
        assert_eq!(content, b"{\"ttft\": [1, 2, 3]}\n", "{db}");
        assert_eq!(info, stored.files[0], "{db}");
        assert_eq!(info.sha256, sha256_hex(&content), "{db}");
        assert_eq!(
            store.run_file(run.id, 1).await.unwrap().unwrap().1,
            b"",
            "{db}"
        );
        assert_eq!(store.run_file(run.id, 2).await.unwrap(), None, "{db}");

        // Results in upload order with their JSON.
        assert_eq!(stored.results.len(), 2, "{db}");
        let r0 = &stored.results[0];
        assert_eq!(r0.index, 0, "{db}");
        assert_eq!(
            r0.config_fingerprint, run.results[0].config_fingerprint,
            "{db}"
        );
        assert_eq!(r0.cell_key, "max_concurrency=4", "{db}");
        assert_eq!(r0.cell, json!({"key": "max_concurrency=4"}), "{db}");
        assert_eq!(r0.facts, json!({"num_prompts": 100}), "{db}");
        assert_eq!(
            r0.warnings,
            json!([{"code": "w1", "message": "careful"}]),
            "{db}"
        );
        assert_eq!(
            r0.source,
            json!({"format": "vllm-serve", "file": 0, "record": 0}),
            "{db}"
        );
        assert_eq!(stored.results[1].index, 1, "{db}");
        assert_eq!(stored.results[1].cell_key, "max_concurrency=8", "{db}");

        // Metrics in vocabulary order then mean, percentiles ascending, std, ..., value;
        // values bit-exact.
        let got: Vec<(String, String, Unit, u64, Option<u64>)> = r0
            .metrics
            .iter()
            .map(|m| {
                (
                    m.name.clone(),
                    m.stat.to_string(),
                    m.unit,
                    m.value.to_bits(),
                    m.n,
                )
            })
            .collect();
        let want = [
            ("ttft", "mean", Unit::Ms, 35.0, Some(100)),
            ("ttft", "p50", Unit::Ms, 34.59466175000898, Some(100)),
            ("ttft", "p99", Unit::Ms, 70.0, Some(100)),
            ("ttft", "p99.9", Unit::Ms, 80.0, Some(100)),
            ("ttft", "std", Unit::Ms, 3.25, Some(100)),
            ("itl", "max", Unit::Ms, 9.0, Some(u64::from(u32::MAX) + 7)),
            ("request_throughput", "value", Unit::ReqPerS, 12.5, None),
        ]
        .map(|(n, s, u, v, c): (&str, &str, Unit, f64, Option<u64>)| {
            (n.to_string(), s.to_string(), u, v.to_bits(), c)
        });
        assert_eq!(got, want, "{db}");
        assert_eq!(
            r0.metrics[1].series_id, run.results[0].metrics[3].series.series_id,
            "{db}"
        );
        assert_eq!(
            stored.results[1].metrics[0].value.to_bits(),
            (0.1f64 + 0.2).to_bits(),
            "{db}"
        );

        // The shared configuration is stored once, canonical JSON parsed.
        let config = store.config(&r0.config_fingerprint).await.unwrap().unwrap();
        assert_eq!(
            config.configuration,
            json!({"model": {"name": "m"}, "serve": {"tp": 1}}),
            "{db}"
        );
        assert_eq!(store.config("0000").await.unwrap(), None, "{db}");

        // Series definitions are stored with the project's slug.
        let series = store
            .series(&r0.metrics[1].series_id)
            .await
            .unwrap()
            .unwrap();
        let expected_series = SeriesInfo {
            series_id: r0.metrics[1].series_id.clone(),
            project: "demo".into(),
            series_key: json!({"accelerator.model": "H100", "model.name": "m"}),
            cell_key: "max_concurrency=4".into(),
            cell: json!({"key": "max_concurrency=4"}),
            metric: "ttft".into(),
            stat: Stat::Percentile("50".into()),
            slo_profile: None,
            unit: Unit::Ms,
            direction: Direction::LowerIsBetter,
        };
        assert_eq!(series, expected_series, "{db}");
        assert_eq!(store.series("nope").await.unwrap(), None, "{db}");
        assert_eq!(store.run(Uuid::new_v4()).await.unwrap(), None, "{db}");
    })
    .await;
}

#[tokio::test]
async fn a_configuration_shared_by_runs_is_stored_once() {
    for_each_store(|db, store| async move {
        let pid = project_id(&store, "demo").await;
        let first = full_run(("demo", pid));
        store.insert_run(&first).await.unwrap();
        let fingerprint = first.results[0].config_fingerprint.clone();
        let created_at = store
            .config(&fingerprint)
            .await
            .unwrap()
            .unwrap()
            .created_at;

        // A later run sends the same fingerprint: the first copy stays.
        let mut second = full_run(("demo", pid));
        second.results.truncate(1);
        store.insert_run(&second).await.unwrap();
        let config = store.config(&fingerprint).await.unwrap().unwrap();
        assert_eq!(config.created_at, created_at, "{db}");
        assert_eq!(config.fingerprint, fingerprint, "{db}");
        let stored = store.run(second.id).await.unwrap().unwrap();
        assert_eq!(stored.results[0].config_fingerprint, fingerprint, "{db}");
        assert_eq!(store.count_runs(pid).await.unwrap(), 2, "{db}");
    })
    .await;
}

#[tokio::test]
async fn reinserting_a_run_is_already_stored_and_writes_nothing() {
    for_each_store(|db, store| async move {
        let pid = project_id(&store, "demo").await;
        let run = full_run(("demo", pid));
        assert_eq!(
            store.insert_run(&run).await.unwrap(),
            Inserted::Created,
            "{db}"
        );
        let before = store.run(run.id).await.unwrap().unwrap();

        // Same id, different content: nothing of it is stored.
        let mut again = full_run(("demo", pid));
        again.id = run.id;
        again.commit_sha = "other".into();
        again.results.push(again.results[0].clone());
        assert_eq!(
            store.insert_run(&again).await.unwrap(),
            Inserted::AlreadyStored,
            "{db}"
        );
        // Nothing but its upload count.
        let mut expected = before.clone();
        expected.summary.upload_count = 2;
        assert_eq!(store.run(run.id).await.unwrap().unwrap(), expected, "{db}");
        assert_eq!(store.count_runs(pid).await.unwrap(), 1, "{db}");
        let page = store.list_runs(pid, None, None, 10).await.unwrap();
        assert_eq!(page.items.len(), 1, "{db}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_uploads_store_each_run_once() {
    for_each_store(|db, store| async move {
        let pid = project_id(&store, "demo").await;
        // The same run sent four times at once, alongside four distinct runs.
        let same = full_run(("demo", pid));
        let mut tasks = Vec::new();
        for i in 0..8 {
            let store = store.clone();
            let run = if i % 2 == 0 {
                same.clone()
            } else {
                full_run(("demo", pid))
            };
            tasks.push(tokio::spawn(async move { store.insert_run(&run).await }));
        }
        let mut outcomes = Vec::new();
        for task in tasks {
            outcomes.push(task.await.unwrap().unwrap_or_else(|e| panic!("{db}: {e}")));
        }
        let created = outcomes.iter().filter(|o| **o == Inserted::Created).count();
        let already = outcomes
            .iter()
            .filter(|o| **o == Inserted::AlreadyStored)
            .count();
        assert_eq!((created, already), (5, 3), "{db}");
        assert_eq!(store.count_runs(pid).await.unwrap(), 5, "{db}");
        let same_stored = store.run(same.id).await.unwrap().unwrap();
        assert_eq!(same_stored.summary.upload_count, 4, "{db}: sent four times");
        assert_eq!(
            store.run(same.id).await.unwrap().unwrap().results.len(),
            2,
            "{db}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_run_id_of_another_project_conflicts() {
    for_each_store(|db, store| async move {
        let a = project_id(&store, "a").await;
        let b = project_id(&store, "b").await;
        let run = ttft_run(("a", a), "c1", "main", None, "2024-01-01T00:00:00Z", 1.0);
        store.insert_run(&run).await.unwrap();
        let mut stolen = ttft_run(("b", b), "c1", "main", None, "2024-01-01T00:00:00Z", 1.0);
        stolen.id = run.id;
        let err = store.insert_run(&stolen).await.unwrap_err();
        assert!(matches!(err, StorageError::Conflict(_)), "{db}: {err:?}");
        assert_eq!(store.count_runs(a).await.unwrap(), 1, "{db}");
        assert_eq!(store.count_runs(b).await.unwrap(), 0, "{db}");
        assert_eq!(
            store.run(run.id).await.unwrap().unwrap().summary.project,
            "a",
            "{db}"
        );
    })
    .await;
}

#[tokio::test]
async fn the_newest_run_of_some_commits_is_the_last_uploaded_on_the_branch() {
    for_each_store(|db, store| async move {
        let p = project_id(&store, "newest").await;
        let at = "2024-01-01T00:00:00Z";
        // Upload order: c2 (main), c1 (main), c1 again, c3 (main), c1 on a branch.
        let runs = [
            ("c2", "main"),
            ("c1", "main"),
            ("c1", "main"),
            ("c3", "main"),
            ("c1", "pr"),
        ]
        .map(|(commit, branch)| ttft_run(("newest", p), commit, branch, None, at, 1.0));
        for run in &runs {
            store.insert_run(run).await.unwrap();
        }
        let newest = |commits: &'static [&'static str]| {
            let store = store.clone();
            async move { store.newest_commit_run(p, "main", commits).await.unwrap() }
        };
        assert_eq!(newest(&["c1", "c2"]).await, Some(runs[2].id), "{db}");
        assert_eq!(newest(&["c2"]).await, Some(runs[0].id), "{db}");
        assert_eq!(newest(&["c3", "c1", "c2"]).await, Some(runs[3].id), "{db}");
        assert_eq!(newest(&["c9"]).await, None, "{db}");
        assert_eq!(newest(&[]).await, None, "{db}");
        let pr = store
            .newest_commit_run(p, "pr", &["c1", "c2"])
            .await
            .unwrap();
        assert_eq!(pr, Some(runs[4].id), "{db}");
    })
    .await;
}

/// The commit graph a store keeps between reads follows what another store (another server
/// process on the same database) writes: a new commit, and parents filled in later.
#[tokio::test]
async fn a_kept_commit_graph_follows_commits_another_process_stores() {
    for db in common::db::stores().await {
        let name = db.name;
        let reader = db.store.clone();
        let writer = Store::connect(&db.url).await.unwrap();
        let p = project_id(&writer, "graph").await;
        let at = "2024-01-01T00:00:00Z";
        let order = |graph: &benchtrail_core::history::CommitGraph| -> Vec<String> {
            graph.order().map(str::to_string).collect()
        };
        // b is uploaded first without parents (a shallow clone), then a with a later time.
        let mut b = ttft_run(
            ("graph", p),
            "b",
            "main",
            Some("2024-01-02T00:00:00Z"),
            at,
            1.0,
        );
        b.parent_shas = Vec::new();
        writer.insert_run(&b).await.unwrap();
        let mut a = ttft_run(
            ("graph", p),
            "a",
            "main",
            Some("2024-01-03T00:00:00Z"),
            at,
            1.0,
        );
        a.parent_shas = Vec::new();
        writer.insert_run(&a).await.unwrap();
        assert_eq!(
            order(&reader.commit_graph(p).await.unwrap()),
            ["b", "a"],
            "{name}"
        );
        assert_eq!(
            order(&reader.commit_graph(p).await.unwrap()),
            ["b", "a"],
            "{name}"
        );
        // Another run of b now names a as its parent: a comes first, whatever the times.
        let mut b_again = ttft_run(("graph", p), "b", "main", None, at, 1.0);
        b_again.parent_shas = vec!["a".to_string()];
        writer.insert_run(&b_again).await.unwrap();
        assert_eq!(
            order(&reader.commit_graph(p).await.unwrap()),
            ["a", "b"],
            "{name}"
        );
        // A new commit c after b.
        let mut c = ttft_run(("graph", p), "c", "main", None, at, 1.0);
        c.parent_shas = vec!["b".to_string()];
        writer.insert_run(&c).await.unwrap();
        assert_eq!(
            order(&reader.commit_graph(p).await.unwrap()),
            ["a", "b", "c"],
            "{name}"
        );
        // x arrives without parents and the earliest time: first in the order.
        let mut x = ttft_run(
            ("graph", p),
            "x",
            "main",
            Some("2023-01-01T00:00:00Z"),
            at,
            1.0,
        );
        x.parent_shas = Vec::new();
        writer.insert_run(&x).await.unwrap();
        assert_eq!(
            order(&reader.commit_graph(p).await.unwrap()),
            ["x", "a", "b", "c"],
            "{name}"
        );
        // Between two reads, a new commit d after c, and another run of x naming d as its
        // parent: the new row alone does not account for x's parents, so the graph is read
        // whole, and x follows d.
        let mut d = ttft_run(("graph", p), "d", "main", None, at, 1.0);
        d.parent_shas = vec!["c".to_string()];
        writer.insert_run(&d).await.unwrap();
        let mut x_again = ttft_run(("graph", p), "x", "main", None, at, 1.0);
        x_again.parent_shas = vec!["d".to_string()];
        writer.insert_run(&x_again).await.unwrap();
        assert_eq!(
            order(&reader.commit_graph(p).await.unwrap()),
            ["a", "b", "c", "d", "x"],
            "{name}"
        );
        writer.close().await;
        db.cleanup().await;
    }
}

#[tokio::test]
async fn a_failing_insert_leaves_nothing_behind() {
    for_each_store(|db, store| async move {
        let pid = project_id(&store, "demo").await;
        // The first result, its configuration, series and the files are written before the
        // second result breaks `metric_values`' key with two values of one series.
        let mut run = full_run(("demo", pid));
        let fresh_config = r#"{"model":{"name":"fresh"}}"#;
        run.results[0].config_fingerprint = sha256_hex(fresh_config.as_bytes());
        run.results[0].config_json = fresh_config.into();
        let duplicate = run.results[1].metrics[0].clone();
        run.results[1].metrics.push(duplicate);
        let err = store.insert_run(&run).await.unwrap_err();
        assert!(matches!(err, StorageError::Conflict(_)), "{db}: {err:?}");

        assert_eq!(store.run(run.id).await.unwrap(), None, "{db}");
        assert_eq!(store.run_file(run.id, 0).await.unwrap(), None, "{db}");
        assert_eq!(store.count_runs(pid).await.unwrap(), 0, "{db}");
        assert_eq!(
            store
                .config(&run.results[0].config_fingerprint)
                .await
                .unwrap(),
            None,
            "{db}"
        );
        let series_id = &run.results[0].metrics[0].series.series_id;
        assert_eq!(store.series(series_id).await.unwrap(), None, "{db}");
        let page = store
            .list_series(pid, &SeriesFilter::default(), None, 100)
            .await
            .unwrap();
        assert!(page.items.is_empty(), "{db}");

        // A run in a project that does not exist fails on its first row, also leaving nothing.
        let orphan = ttft_run(
            ("ghost", pid + 1000),
            "c",
            "main",
            None,
            "2024-01-01T00:00:00Z",
            1.0,
        );
        assert!(store.insert_run(&orphan).await.is_err(), "{db}");
        assert_eq!(store.run(orphan.id).await.unwrap(), None, "{db}");

        // The store still works and the same run, fixed, goes in.
        run.results[1].metrics.pop();
        assert_eq!(
            store.insert_run(&run).await.unwrap(),
            Inserted::Created,
            "{db}"
        );
        assert_eq!(store.count_runs(pid).await.unwrap(), 1, "{db}");
    })
    .await;
}

#[tokio::test]
async fn list_runs_pages_newest_first_and_filters_by_branch() {
    for_each_store(|db, store| async move {
        let pid = project_id(&store, "demo").await;
        let other = project_id(&store, "other").await;
        let mut ids = Vec::new();
        for i in 0..5 {
            let branch = if i % 2 == 0 { "main" } else { "dev" };
            let run = ttft_run(
                ("demo", pid),
                &format!("c{i}"),
                branch,
                None,
                "2024-01-01T00:00:00Z",
                1.0,
            );
            store.insert_run(&run).await.unwrap();
            ids.push(run.id);
        }
        store
            .insert_run(&ttft_run(
                ("other", other),
                "x",
                "main",
                None,
                "2024-01-01T00:00:00Z",
                1.0,
            ))
            .await
            .unwrap();
        assert_eq!(store.count_runs(pid).await.unwrap(), 5, "{db}");
        assert_eq!(store.count_runs(other).await.unwrap(), 1, "{db}");

        let first = store.list_runs(pid, None, None, 2).await.unwrap();
        assert_eq!(
            first.items.iter().map(|r| r.id).collect::<Vec<_>>(),
            [ids[4], ids[3]],
            "{db}"
        );
        assert_eq!(first.items[0].result_count, 1, "{db}");
        assert_eq!(first.items[0].project, "demo", "{db}");
        let second = store
            .list_runs(pid, None, first.next_cursor.as_deref(), 2)
            .await
            .unwrap();
        assert_eq!(
            second.items.iter().map(|r| r.id).collect::<Vec<_>>(),
            [ids[2], ids[1]],
            "{db}"
        );
        let third = store
            .list_runs(pid, None, second.next_cursor.as_deref(), 2)
            .await
            .unwrap();
        assert_eq!(
            third.items.iter().map(|r| r.id).collect::<Vec<_>>(),
            [ids[0]],
            "{db}"
        );
        assert_eq!(third.next_cursor, None, "{db}");

        // Exactly a page full: no next page.
        let all = store.list_runs(pid, None, None, 5).await.unwrap();
        assert_eq!(all.items.len(), 5, "{db}");
        assert_eq!(all.next_cursor, None, "{db}");

        let main = store.list_runs(pid, Some("main"), None, 2).await.unwrap();
        assert_eq!(
            main.items.iter().map(|r| r.id).collect::<Vec<_>>(),
            [ids[4], ids[2]],
            "{db}"
        );
        let main2 = store
            .list_runs(pid, Some("main"), main.next_cursor.as_deref(), 2)
            .await
            .unwrap();
        assert_eq!(
            main2.items.iter().map(|r| r.id).collect::<Vec<_>>(),
            [ids[0]],
            "{db}"
        );
        assert_eq!(main2.next_cursor, None, "{db}");
        let dev = store.list_runs(pid, Some("dev"), None, 10).await.unwrap();
        assert_eq!(
            dev.items.iter().map(|r| r.id).collect::<Vec<_>>(),
            [ids[3], ids[1]],
            "{db}"
        );
        assert!(
            store
                .list_runs(pid, Some("nope"), None, 10)
                .await
                .unwrap()
                .items
                .is_empty(),
            "{db}"
        );
        assert!(
            store
                .list_runs(pid, None, Some("garbage"), 10)
                .await
                .unwrap()
                .items
                .is_empty(),
            "{db}"
        );
    })
    .await;
}

#[tokio::test]
async fn list_series_filters_and_pages_in_key_order() {
    for_each_store(|db, store| async move {
        let pid = project_id(&store, "demo").await;
        let other = project_id(&store, "other").await;
        let mut run = new_run(pid, "c1", "main", None, "2024-01-01T00:00:00Z");
        let metrics = |model: &str, cell: &str| {
            ["p50", "mean"]
                .iter()
                .flat_map(|stat| {
                    ["ttft", "tpot"]
                        .map(|m| new_metric(new_series("demo", model, cell, m, stat), 1.0, None))
                })
                .collect::<Vec<_>>()
        };
        let mut awq = new_series("demo", "m-awq", "max_concurrency=16", "ttft", "p50");
        awq.weights_quantization = Some("awq".into());
        awq.kv_cache_dtype = Some("fp8_e5m2".into());
        awq.accelerator = Some("MI300X".into());
        run.results = vec![
            new_result(
                "{}",
                "max_concurrency=4",
                metrics("m-b", "max_concurrency=4"),
            ),
            new_result(
                "{}",
                "max_concurrency=16",
                metrics("m-a", "max_concurrency=16"),
            ),
            new_result(
                "{}",
                "max_concurrency=16",
                vec![new_metric(awq.clone(), 2.0, None)],
            ),
        ];
        store.insert_run(&run).await.unwrap();
        let mut foreign = new_run(other, "c1", "main", None, "2024-01-01T00:00:00Z");
        foreign.results = vec![new_result(
            "{}",
            "x",
            vec![new_metric(
                new_series("other", "m-a", "x", "ttft", "p50"),
                1.0,
                None,
            )],
        )];
        store.insert_run(&foreign).await.unwrap();

        let describe = |s: &SeriesInfo| {
            format!(
                "{}|{}|{}|{}",
                s.series_key["model.name"].as_str().unwrap(),
                s.cell_key,
                s.metric,
                s.stat
            )
        };
        let all = store
            .list_series(pid, &SeriesFilter::default(), None, 100)
            .await
            .unwrap();
        let names: Vec<String> = all.items.iter().map(describe).collect();
        assert_eq!(
            names,
            [
                "m-a|max_concurrency=16|tpot|mean",
                "m-a|max_concurrency=16|tpot|p50",
                "m-a|max_concurrency=16|ttft|mean",
                "m-a|max_concurrency=16|ttft|p50",
                "m-awq|max_concurrency=16|ttft|p50",
                "m-b|max_concurrency=4|tpot|mean",
                "m-b|max_concurrency=4|tpot|p50",
                "m-b|max_concurrency=4|ttft|mean",
                "m-b|max_concurrency=4|ttft|p50",
            ],
            "{db}"
        );
        assert_eq!(all.next_cursor, None, "{db}");
        assert!(all.items.iter().all(|s| s.project == "demo"), "{db}");

        // Pages of 4 walk the same order.
        let mut walked = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = store
                .list_series(pid, &SeriesFilter::default(), cursor.as_deref(), 4)
                .await
                .unwrap();
            walked.extend(page.items.iter().map(describe));
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(walked, names, "{db}");

        let filtered = |filter: SeriesFilter| {
            let store = store.clone();
            async move {
                let page = store.list_series(pid, &filter, None, 100).await.unwrap();
                page.items.iter().map(describe).collect::<Vec<_>>()
            }
        };
        let f = SeriesFilter {
            model: Some("m-b".into()),
            metric: Some("ttft".into()),
            ..Default::default()
        };
        assert_eq!(
            filtered(f).await,
            [
                "m-b|max_concurrency=4|ttft|mean",
                "m-b|max_concurrency=4|ttft|p50"
            ],
            "{db}"
        );
        let f = SeriesFilter {
            accelerator: Some("MI300X".into()),
            ..Default::default()
        };
        assert_eq!(
            filtered(f).await,
            ["m-awq|max_concurrency=16|ttft|p50"],
            "{db}"
        );
        let f = SeriesFilter {
            quantization: Some("fp8_e5m2".into()),
            ..Default::default()
        };
        assert_eq!(
            filtered(f).await,
            ["m-awq|max_concurrency=16|ttft|p50"],
            "{db}"
        );
        let f = SeriesFilter {
            quantization: Some("awq".into()),
            ..Default::default()
        };
        assert_eq!(
            filtered(f).await,
            ["m-awq|max_concurrency=16|ttft|p50"],
            "{db}"
        );
        let f = SeriesFilter {
            quantization: Some("fp8".into()),
            stat: Some("median".into()),
            metric: Some("tpot".into()),
            ..Default::default()
        };
        assert_eq!(
            filtered(f).await,
            [
                "m-a|max_concurrency=16|tpot|p50",
                "m-b|max_concurrency=4|tpot|p50"
            ],
            "{db}"
        );
        let f = SeriesFilter {
            cell: Some("concurrency=1".into()),
            stat: Some("mean".into()),
            ..Default::default()
        };
        assert_eq!(
            filtered(f).await,
            [
                "m-a|max_concurrency=16|tpot|mean",
                "m-a|max_concurrency=16|ttft|mean"
            ],
            "{db}"
        );
        let f = SeriesFilter {
            cell: Some("CONCURRENCY".into()),
            ..Default::default()
        };
        assert!(
            filtered(f).await.is_empty(),
            "{db}: the cell filter is case-sensitive"
        );
        let f = SeriesFilter {
            cell: Some("%".into()),
            ..Default::default()
        };
        assert!(
            filtered(f).await.is_empty(),
            "{db}: the cell filter has no wildcards"
        );
        let f = SeriesFilter {
            stat: Some("p99".into()),
            ..Default::default()
        };
        assert!(filtered(f).await.is_empty(), "{db}");
    })
    .await;
}

#[tokio::test]
async fn series_points_follow_commit_order_with_repeats() {
    for_each_store(|db, store| async move {
        let pid = project_id(&store, "demo").await;
        let p = ("demo", pid);
        // Uploaded out of order; c2 has two repeats run at different times; c0 has no commit
        // time and sorts by its run time; a dev-branch run is not on main.
        let runs = [
            ttft_run(
                p,
                "c3",
                "main",
                Some("2024-01-03T00:00:00Z"),
                "2024-01-03T01:00:00Z",
                3.0,
            ),
            ttft_run(
                p,
                "c2",
                "main",
                Some("2024-01-02T00:00:00Z"),
                "2024-01-02T02:00:00Z",
                2.2,
            ),
            ttft_run(
                p,
                "c1",
                "main",
                Some("2024-01-01T00:00:00Z"),
                "2024-01-05T00:00:00Z",
                1.0,
            ),
            ttft_run(
                p,
                "c2",
                "main",
                Some("2024-01-02T00:00:00Z"),
                "2024-01-02T01:00:00Z",
                2.1,
            ),
            ttft_run(p, "c0", "main", None, "2023-12-31T00:00:00Z", 0.5),
            ttft_run(
                p,
                "d1",
                "dev",
                Some("2024-01-02T12:00:00Z"),
                "2024-01-02T12:00:00Z",
                9.0,
            ),
            // Same commit and run time as the c3 run: upload order decides.
            ttft_run(
                p,
                "c3",
                "main",
                Some("2024-01-03T00:00:00Z"),
                "2024-01-03T01:00:00Z",
                3.5,
            ),
        ];
        let mut runs = runs;
        runs[3].repeat_index = 1;
        for run in &runs {
            store.insert_run(run).await.unwrap();
        }
        let series_id = runs[0].results[0].metrics[0].series.series_id.clone();
        let points = store.series_points(&series_id, "main").await.unwrap();
        let got: Vec<(&str, f64, Uuid, i64)> = points
            .iter()
            .map(|p| (p.commit_sha.as_str(), p.value, p.run_id, p.repeat_index))
            .collect();
        assert_eq!(
            got,
            [
                ("c0", 0.5, runs[4].id, 0),
                ("c1", 1.0, runs[2].id, 0),
                ("c2", 2.1, runs[3].id, 1),
                ("c2", 2.2, runs[1].id, 0),
                ("c3", 3.0, runs[0].id, 0),
                ("c3", 3.5, runs[6].id, 0),
            ],
            "{db}"
        );
        let c2 = &points[2];
        assert_eq!(c2.commit_time, Some(tsz("2024-01-02T00:00:00Z")), "{db}");
        assert_eq!(c2.commit_subject.as_deref(), Some("subject of c2"), "{db}");
        assert_eq!(c2.run_at, ts("2024-01-02T01:00:00Z"), "{db}");
        assert_eq!(c2.n, Some(100), "{db}");
        assert_eq!(points[0].commit_time, None, "{db}");
        assert!(points.iter().all(|p| !p.excluded), "{db}");

        // The runs are kept in memory after the first read; an exclusion made since shows at
        // the next read, and its end at the one after.
        store.exclude_run(runs[1].id, "noisy host").await.unwrap();
        let excluded: Vec<(f64, bool)> = store
            .series_points(&series_id, "main")
            .await
            .unwrap()
            .iter()
            .map(|p| (p.value, p.excluded))
            .collect();
        assert_eq!(
            excluded,
            [
                (0.5, false),
                (1.0, false),
                (2.1, false),
                (2.2, true),
                (3.0, false),
                (3.5, false)
            ],
            "{db}"
        );
        store.unexclude_run(runs[1].id).await.unwrap();
        let again = store.series_points(&series_id, "main").await.unwrap();
        assert!(again.iter().all(|p| !p.excluded), "{db}");

        let dev = store.series_points(&series_id, "dev").await.unwrap();
        assert_eq!(
            dev.iter().map(|p| p.value).collect::<Vec<_>>(),
            [9.0],
            "{db}"
        );
        assert!(
            store
                .series_points(&series_id, "nope")
                .await
                .unwrap()
                .is_empty(),
            "{db}"
        );
        assert!(
            store
                .series_points("nope", "main")
                .await
                .unwrap()
                .is_empty(),
            "{db}"
        );
    })
    .await;
}

// ---- connecting -----------------------------------------------------------------------------

#[tokio::test]
async fn in_memory_sqlite_keeps_one_database() {
    let store = Store::connect("sqlite::memory:").await.unwrap();
    assert_eq!(store.backend(), Backend::Sqlite);
    let pid = project_id(&store, "mem").await;
    let run = ttft_run(("mem", pid), "c", "main", None, "2024-01-01T00:00:00Z", 1.0);
    store.insert_run(&run).await.unwrap();
    // Several sequential and concurrent reads see the same database.
    let (a, b) = tokio::join!(store.count_runs(pid), store.project("mem"));
    assert_eq!(a.unwrap(), 1);
    assert_eq!(b.unwrap().unwrap().id, pid);
    assert_eq!(
        store.insert_run(&run).await.unwrap(),
        Inserted::AlreadyStored
    );
    store.close().await;
}

#[tokio::test]
async fn backends_report_their_kind() {
    for_each_store(|db, store| async move {
        let expected = if db == "sqlite" {
            Backend::Sqlite
        } else {
            Backend::Postgres
        };
        assert_eq!(store.backend(), expected);
    })
    .await;
}

#[tokio::test]
async fn an_unreachable_postgres_is_reported_with_its_cause() {
    // Port 9 (discard) on loopback: nothing listens there on a test machine.
    let refused = Store::connect("postgres://postgres@127.0.0.1:9/x")
        .await
        .err()
        .expect("no server there");
    assert!(
        refused.to_string().contains("Connection refused"),
        "{refused}"
    );
    if let Ok(admin) = std::env::var("BENCHTRAIL_TEST_DATABASE_URL") {
        let base = admin.rsplit_once('/').unwrap().0;
        let missing = Store::connect(&format!("{base}/benchtrail_no_such_database"))
            .await
            .err()
            .expect("no such database");
        assert!(
            missing
                .to_string()
                .contains("database \"benchtrail_no_such_database\" does not exist"),
            "{missing}"
        );
    }
}

#[tokio::test]
async fn a_run_uploaded_again_counts_each_upload() {
    for_each_store(|db, store| async move {
        let pid = project_id(&store, "demo").await;
        let other = project_id(&store, "other").await;
        let run = ttft_run(
            ("demo", pid),
            "c1",
            "main",
            None,
            "2024-01-01T00:00:00Z",
            1.0,
        );
        let count = |store: Store, id: Uuid| async move {
            store.run(id).await.unwrap().unwrap().summary.upload_count
        };
        assert_eq!(
            store.insert_run(&run).await.unwrap(),
            Inserted::Created,
            "{db}"
        );
        assert_eq!(count(store.clone(), run.id).await, 1, "{db}");
        assert_eq!(
            store.insert_run(&run).await.unwrap(),
            Inserted::AlreadyStored,
            "{db}"
        );
        assert_eq!(count(store.clone(), run.id).await, 2, "{db}");
        assert_eq!(store.count_reupload(run.id).await.unwrap(), Some(3), "{db}");
        assert_eq!(count(store.clone(), run.id).await, 3, "{db}");
        assert_eq!(
            store.count_reupload(Uuid::new_v4()).await.unwrap(),
            None,
            "{db}"
        );
        // The same id in another project is a conflict and counts nothing.
        let mut stolen = run.clone();
        stolen.project_id = other;
        assert!(
            matches!(
                store.insert_run(&stolen).await,
                Err(StorageError::Conflict(_))
            ),
            "{db}"
        );
        assert_eq!(count(store.clone(), run.id).await, 3, "{db}");
        // Listed runs carry it too.
        let page = store.list_runs(pid, None, None, 10).await.unwrap();
        assert_eq!(page.items[0].upload_count, 3, "{db}");
    })
    .await;
}

/// `ttft_run` with `parents`.
fn child_run(
    project: (&str, i64),
    commit: &str,
    parents: &[&str],
    time: &str,
    run_at: &str,
    value: f64,
) -> NewRun {
    let mut run = ttft_run(project, commit, "main", Some(time), run_at, value);
    run.parent_shas = parents.iter().map(|p| p.to_string()).collect();
    run
}

#[tokio::test]
async fn history_is_ordered_by_ancestry_with_time_only_between_unrelated_commits() {
    for_each_store(|db, store| async move {
        let pid = project_id(&store, "demo").await;
        let p = ("demo", pid);
        // a ← b ← c ← d, uploaded d, c, b, a. d was committed (2024-01-01T22:00Z, written with
        // its +02:00 offset) before its parent c and even before a; b's first upload comes from
        // a shallow clone (no parents) and is dated before a; its repeat sends the parents.
        let mut runs = vec![
            child_run(
                p,
                "d",
                &["c"],
                "2024-01-02T00:00:00+02:00",
                "2024-01-09T00:00:00Z",
                4.0,
            ),
            child_run(
                p,
                "c",
                &["b"],
                "2024-01-04T00:00:00Z",
                "2024-01-08T00:00:00Z",
                3.0,
            ),
            child_run(
                p,
                "b",
                &[],
                "2023-12-31T00:00:00Z",
                "2024-01-07T00:00:00Z",
                2.0,
            ),
            child_run(
                p,
                "a",
                &["a-parent"],
                "2024-01-01T00:00:00Z",
                "2024-01-06T00:00:00Z",
                1.0,
            ),
            child_run(
                p,
                "b",
                &["a"],
                "2023-12-31T00:00:00Z",
                "2024-01-06T12:00:00Z",
                2.5,
            ),
        ];
        runs[4].repeat_index = 1;
        for run in &runs[..4] {
            store.insert_run(run).await.unwrap();
        }
        let order = |g: &benchtrail_core::history::CommitGraph| {
            g.order().map(str::to_string).collect::<Vec<_>>()
        };
        // Before b's parents are known, b is unrelated to a and comes first by time.
        let graph = store.commit_graph(pid).await.unwrap();
        assert_eq!(order(&graph), ["b", "a", "c", "d"], "{db}");
        store.insert_run(&runs[4]).await.unwrap();
        let graph = store.commit_graph(pid).await.unwrap();
        assert_eq!(order(&graph), ["a", "b", "c", "d"], "{db}");
        let b = graph.node("b").unwrap();
        assert_eq!(
            b.parents,
            ["a"],
            "{db}: parents filled in by the later upload"
        );
        assert_eq!(b.time, ts("2023-12-31T00:00:00Z"), "{db}");
        assert_eq!(b.first_seq, 3, "{db}: the third run stored");
        let mut anc: Vec<&str> = graph.possible_ancestors("c").into_iter().collect();
        anc.sort_unstable();
        assert_eq!(
            anc,
            ["a", "b"],
            "{db}: d, its child, is not a baseline of c"
        );

        let series_id = runs[0].results[0].metrics[0].series.series_id.clone();
        let points = store.series_points(&series_id, "main").await.unwrap();
        let got: Vec<(&str, f64)> = points
            .iter()
            .map(|p| (p.commit_sha.as_str(), p.value))
            .collect();
        // Within b, run time decides (the repeat ran first).
        assert_eq!(
            got,
            [("a", 1.0), ("b", 2.5), ("b", 2.0), ("c", 3.0), ("d", 4.0)],
            "{db}"
        );
        assert_eq!(
            points[4].commit_time.unwrap().to_rfc3339(),
            "2024-01-02T00:00:00+02:00",
            "{db}"
        );
        let history = store.series_history(pid, &[series_id]).await.unwrap();
        let got: Vec<(&str, f64)> = history.iter().map(|p| (&*p.commit_sha, p.value)).collect();
        assert_eq!(
            got,
            [("a", 1.0), ("b", 2.5), ("b", 2.0), ("c", 3.0), ("d", 4.0)],
            "{db}"
        );
        let commits = store.project_commits(pid).await.unwrap();
        let got: Vec<&str> = commits.iter().map(|(_, c)| c.as_str()).collect();
        assert_eq!(got, ["a", "b", "c", "d"], "{db}");
    })
    .await;
}

// ---- the job queue and the change-point scan's reads ---------------------------------------------

#[tokio::test]
async fn the_scan_reads_the_newest_commits_of_its_branch_in_commit_order() {
    for_each_store(|db, store| async move {
        let pid = project_id(&store, "demo").await;
        let p = ("demo", pid);
        // a ← b ← c ← d on main, uploaded last commit first; e on a feature branch.
        let runs = [
            child_run(
                p,
                "d",
                &["c"],
                "2024-01-04T00:00:00Z",
                "2024-01-09T00:00:00Z",
                4.0,
            ),
            child_run(
                p,
                "c",
                &["b"],
                "2024-01-03T00:00:00Z",
                "2024-01-08T00:00:00Z",
                3.0,
            ),
            child_run(
                p,
                "b",
                &["a"],
                "2024-01-02T00:00:00Z",
                "2024-01-07T00:00:00Z",
                2.0,
            ),
            child_run(
                p,
                "a",
                &[],
                "2024-01-01T00:00:00Z",
                "2024-01-06T00:00:00Z",
                1.0,
            ),
        ];
        for run in &runs {
            store.insert_run(run).await.unwrap();
        }
        let mut feature = child_run(
            p,
            "e",
            &["d"],
            "2024-01-05T00:00:00Z",
            "2024-01-10T00:00:00Z",
            9.0,
        );
        feature.branch = "feature".into();
        store.insert_run(&feature).await.unwrap();
        // d measured on the feature branch too: not main's history.
        let mut d_elsewhere = child_run(
            p,
            "d",
            &["c"],
            "2024-01-04T00:00:00Z",
            "2024-01-11T00:00:00Z",
            8.0,
        );
        d_elsewhere.branch = "feature".into();
        store.insert_run(&d_elsewhere).await.unwrap();

        let graph = store.commit_graph(pid).await.unwrap();
        let window = store.newest_commits(pid, "main", 2, &graph).await.unwrap();
        assert_eq!(window.commits, ["c", "d"], "{db}");
        assert!(window.truncated, "{db}");
        let whole = store.newest_commits(pid, "main", 10, &graph).await.unwrap();
        assert_eq!(whole.commits, ["a", "b", "c", "d"], "{db}");
        assert!(!whole.truncated, "{db}");

        let groups = store.project_groups(pid).await.unwrap();
        let ids: Vec<String> = groups
            .values()
            .flatten()
            .map(|s| s.series_id.clone())
            .collect();
        let points = store
            .branch_history(
                pid,
                "main",
                &ids,
                &window.commits,
                &graph,
                &mut benchtrail_server::storage::WindowRuns::default(),
            )
            .await
            .unwrap();
        let got: Vec<(&str, &str, f64)> = points
            .iter()
            .map(|p| (&*p.commit_sha, &*p.branch, p.value))
            .collect();
        assert_eq!(got, [("c", "main", 3.0), ("d", "main", 4.0)], "{db}");
        let series: Vec<Vec<&str>> = groups
            .values()
            .map(|g| g.iter().map(|s| s.series_id.as_str()).collect())
            .collect();
        assert_eq!(series, [vec![&*points[0].series_id]], "{db}");
    })
    .await;
}

#[tokio::test]
async fn a_finished_jobs_id_is_never_given_to_a_later_job() {
    for_each_store(|db, store| async move {
        let p = project_id(&store, "p").await;
        let commit = |c: &str| JobTarget::Commit {
            branch: "main".into(),
            commit_sha: c.into(),
        };
        let first = store.enqueue_job(p, &commit("c1"), None).await.unwrap();
        assert!(store.finish_job(first.id, first.generation).await.unwrap());
        let second = store.enqueue_job(p, &commit("c2"), None).await.unwrap();
        assert_eq!(second.generation, first.generation, "{db}");
        assert!(
            second.id > first.id,
            "{db}: job {} was given the id of finished job {}",
            second.id,
            first.id
        );
        // The first job's worker, late (its lease ran out and another worker finished it),
        // finishes it again: the later job stays queued.
        assert!(!store.finish_job(first.id, first.generation).await.unwrap());
        assert_eq!(store.queued_jobs().await.unwrap(), 1, "{db}");
    })
    .await;
}

#[tokio::test]
async fn a_job_asked_for_again_while_it_ran_waits_until_its_again_at() {
    for_each_store(|db, store| async move {
        let p = project_id(&store, "p").await;
        let scan = JobTarget::Scan {
            branch: "main".into(),
        };
        store.enqueue_job(p, &scan, None).await.unwrap();
        let lease = chrono::Duration::seconds(30);
        let claimed = store.claim_due_job(lease).await.unwrap().expect("due");
        // Asked for again while it runs: one more generation.
        store.enqueue_job(p, &scan, None).await.unwrap();
        let again_at = chrono::Utc::now() + chrono::Duration::seconds(3600);
        let deleted = store
            .finish_job_again_at(claimed.id, claimed.generation, None, Some(again_at))
            .await
            .unwrap();
        assert!(!deleted, "{db}: the newer generation stays queued");
        assert_eq!(store.queued_jobs().await.unwrap(), 1, "{db}");
        // Released but not due before `again_at`.
        assert!(store.claim_due_job(lease).await.unwrap().is_none(), "{db}");
    })
    .await;
}

/// The analyses of a branch that wait ask for its change-point scan when they end, so an
/// analysis ending meanwhile leaves the scan to them; one running or waiting out a back-off
/// does not count, a scan spaced out after the last does.
#[tokio::test]
async fn a_branchs_scan_is_left_to_its_analyses_that_wait() {
    for_each_store(|db, store| async move {
        let p = project_id(&store, "p").await;
        let q = project_id(&store, "q").await;
        let lease = chrono::Duration::seconds(30);
        let commit = |sha: &str, branch: &str| JobTarget::Commit {
            branch: branch.into(),
            commit_sha: sha.into(),
        };
        let again = |sha: &str| JobTarget::Reanalysis {
            branch: "main".into(),
            commit_sha: sha.into(),
        };
        assert!(!store.scan_will_be_asked(p, "main").await.unwrap(), "{db}");
        for (project, target) in [
            (p, commit("c1", "main")),
            (p, again("c0")),
            (p, commit("c2", "feature")),
            (q, commit("c9", "main")),
        ] {
            store.enqueue_job(project, &target, None).await.unwrap();
        }
        assert!(store.scan_will_be_asked(p, "main").await.unwrap(), "{db}");
        assert!(!store.scan_will_be_asked(p, "other").await.unwrap(), "{db}");
        assert_eq!(
            store.commit_jobs_waiting(p).await.unwrap(),
            std::collections::HashSet::from([
                commit("c1", "main"),
                again("c0"),
                commit("c2", "feature")
            ]),
            "{db}"
        );
        // Both of main's analyses claimed (running): nothing of main waits.
        let first = store.claim_due_job(lease).await.unwrap().expect("due");
        let second = store.claim_due_job(lease).await.unwrap().expect("due");
        assert_eq!(
            (&first.target, &second.target),
            (&commit("c1", "main"), &again("c0")),
            "{db}"
        );
        assert!(!store.scan_will_be_asked(p, "main").await.unwrap(), "{db}");
        assert_eq!(
            store.commit_jobs_waiting(p).await.unwrap(),
            std::collections::HashSet::from([commit("c2", "feature")]),
            "{db}"
        );
        // One failed and waits out its back-off: it may fail again, so it does not count.
        let retry_at = chrono::Utc::now() + chrono::Duration::seconds(3600);
        store.fail_job(first.id, "failed", retry_at).await.unwrap();
        assert!(!store.scan_will_be_asked(p, "main").await.unwrap(), "{db}");
        // A scan spaced out after the last one counts (asking again would make it due now).
        for _ in 0..2 {
            store.claim_due_job(lease).await.unwrap().expect("due");
        }
        let scan = JobTarget::Scan {
            branch: "main".into(),
        };
        store.enqueue_job(p, &scan, None).await.unwrap();
        let scanning = store.claim_due_job(lease).await.unwrap().expect("the scan");
        assert_eq!(scanning.target, scan, "{db}");
        store.enqueue_job(p, &scan, None).await.unwrap();
        assert!(!store
            .finish_job_again_at(scanning.id, scanning.generation, None, Some(retry_at))
            .await
            .unwrap());
        assert!(store.scan_will_be_asked(p, "main").await.unwrap(), "{db}");
    })
    .await;
}

#[tokio::test]
async fn a_projects_comments_jobs_are_claimed_one_at_a_time_and_scans_after_analyses() {
    for_each_store(|db, store| async move {
        let p = project_id(&store, "p").await;
        let q = project_id(&store, "q").await;
        let main = || "main".to_string();
        let comments = |c: &str| JobTarget::Comments {
            branch: main(),
            commit_sha: c.to_string(),
        };
        let commit = JobTarget::Commit {
            branch: main(),
            commit_sha: "c4".into(),
        };
        let scan = JobTarget::Scan { branch: main() };
        // Queued in this order: the scan first.
        for (project, target) in [
            (p, &scan),
            (p, &comments("c1")),
            (p, &comments("c2")),
            (q, &comments("c3")),
            (p, &commit),
        ] {
            store.enqueue_job(project, target, None).await.unwrap();
        }
        let lease = chrono::Duration::seconds(60);
        let mut claimed = Vec::new();
        while let Some(job) = store.claim_due_job(lease).await.unwrap() {
            claimed.push(job);
        }
        let got: Vec<(i64, &JobTarget)> =
            claimed.iter().map(|j| (j.project_id, &j.target)).collect();
        // p's second comments job waits while its first is leased; q's does not; the scan
        // comes after the analysis queued after it.
        assert_eq!(
            got,
            [
                (p, &comments("c1")),
                (q, &comments("c3")),
                (p, &commit),
                (p, &scan)
            ],
            "{db}"
        );
        assert!(store
            .finish_job(claimed[0].id, claimed[0].generation)
            .await
            .unwrap());
        let next = store.claim_due_job(lease).await.unwrap().expect("due now");
        assert_eq!(
            (next.project_id, &next.target),
            (p, &comments("c2")),
            "{db}"
        );
        assert!(store.claim_due_job(lease).await.unwrap().is_none(), "{db}");
        // A scan asked for again while it runs is kept for one more scan, with a new generation.
        let scan_job = &claimed[3];
        // (p's commit job is claimed too: nothing of p's branch waits.)
        assert!(
            !store.scan_will_be_asked(p, "main").await.unwrap(),
            "{db}: it runs"
        );
        assert!(
            !store.scan_will_be_asked(q, "main").await.unwrap(),
            "{db}: none queued"
        );
        let again = store.enqueue_job(p, &scan, None).await.unwrap();
        assert_eq!(
            (again.id, again.generation, again.leased),
            (scan_job.id, 2, false),
            "{db}"
        );
        assert!(
            !store
                .finish_job(scan_job.id, scan_job.generation)
                .await
                .unwrap(),
            "{db}"
        );
        assert!(
            store.scan_will_be_asked(p, "main").await.unwrap(),
            "{db}: released, waiting"
        );
        let rerun = store
            .claim_due_job(lease)
            .await
            .unwrap()
            .expect("the scan again");
        assert_eq!(
            (rerun.id, rerun.generation, &rerun.target),
            (scan_job.id, 2, &scan),
            "{db}"
        );
    })
    .await;
}

#[tokio::test]
async fn dashboard_reads_match_the_series_points_and_each_branch_s_newest_run() {
    for_each_store(|db, store| async move {
        let pid = project_id(&store, "demo").await;
        let p = ("demo", pid);
        // Out of order, with repeats of c2 run at different times and a dev-branch run.
        let mut runs = vec![
            ttft_run(
                p,
                "c3",
                "main",
                Some("2024-01-03T00:00:00Z"),
                "2024-01-03T01:00:00Z",
                3.0,
            ),
            ttft_run(
                p,
                "c2",
                "main",
                Some("2024-01-02T00:00:00Z"),
                "2024-01-02T02:00:00Z",
                2.2,
            ),
            ttft_run(
                p,
                "c1",
                "main",
                Some("2024-01-01T00:00:00Z"),
                "2024-01-05T00:00:00Z",
                1.0,
            ),
            ttft_run(
                p,
                "c2",
                "main",
                Some("2024-01-02T00:00:00Z"),
                "2024-01-02T01:00:00Z",
                2.1,
            ),
            ttft_run(
                p,
                "d1",
                "dev",
                Some("2024-01-02T12:00:00Z"),
                "2024-01-02T12:00:00Z",
                9.0,
            ),
            ttft_run(p, "c0", "main", None, "2023-12-31T00:00:00Z", 0.5),
        ];
        runs[3].repeat_index = 1;
        for run in &runs {
            store.insert_run(run).await.unwrap();
        }
        let series_id = runs[0].results[0].metrics[0].series.series_id.clone();
        let ids = [series_id.clone(), "no-such-series".to_string()];
        let graph = store.commit_graph(pid).await.unwrap();

        // The newest 3 commits of main: their values in the series page's order.
        let window = store.newest_commits(pid, "main", 3, &graph).await.unwrap();
        assert_eq!(window.commits, ["c1", "c2", "c3"], "{db}");
        let mut by_series = store
            .recent_values(pid, "main", &ids, &window.commits, &graph)
            .await
            .unwrap();
        assert_eq!(by_series.len(), 2, "{db}: one list per series id");
        assert_eq!(by_series[1], [], "{db}: a series with no values");
        let got: Vec<(String, f64)> = by_series
            .swap_remove(0)
            .into_iter()
            .map(|v| (v.commit_sha.to_string(), v.value))
            .collect();
        let points: Vec<(String, f64)> = store
            .series_points(&series_id, "main")
            .await
            .unwrap()
            .into_iter()
            .filter(|p| p.commit_sha != "c0")
            .map(|p| (p.commit_sha, p.value))
            .collect();
        assert_eq!(got, points, "{db}");
        assert_eq!(
            got,
            [
                ("c1".to_string(), 1.0),
                ("c2".to_string(), 2.1),
                ("c2".to_string(), 2.2),
                ("c3".to_string(), 3.0)
            ],
            "{db}"
        );
        // A commit of another branch named in the window adds nothing; empty lists read nothing.
        let with_dev = ["c3".to_string(), "d1".to_string()];
        let got = store
            .recent_values(pid, "main", &ids, &with_dev, &graph)
            .await
            .unwrap();
        assert_eq!(got.len(), 2, "{db}: {got:?}");
        assert_eq!(got[0].len(), 1, "{db}: {got:?}");
        assert_eq!(got[1], [], "{db}: {got:?}");
        assert!(store
            .recent_values(pid, "main", &[], &with_dev, &graph)
            .await
            .unwrap()
            .is_empty());
        let none = store
            .recent_values(pid, "main", &ids, &[], &graph)
            .await
            .unwrap();
        assert_eq!(none, [vec![], vec![]], "{db}: no commits, no values");

        // The newest upload of each branch, newest first.
        let latest: Vec<(String, Uuid)> = store
            .latest_run_per_branch(pid, 10)
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.branch, r.id))
            .collect();
        assert_eq!(
            latest,
            [
                ("main".to_string(), runs[5].id),
                ("dev".to_string(), runs[4].id)
            ],
            "{db}"
        );
        let one = store.latest_run_per_branch(pid, 1).await.unwrap();
        assert_eq!(one.len(), 1, "{db}");
        assert_eq!(one[0].id, runs[5].id, "{db}");
        assert_eq!(one[0].result_count, 1, "{db}");
    })
    .await;
}

/// A SQLite store's write-ahead log reaches the database file without a request paying for
/// it: the background checkpoint (`storage/db/checkpoint.rs`) copies a committed run into the
/// file within seconds, long before the 10,000 pages past which a committing connection would
/// (and before SQLite's own default of 1,000 pages: the run is about 500).
#[tokio::test]
async fn a_sqlite_stores_log_is_checkpointed_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wal.db");
    let store = Store::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let id = project_id(&store, "wal").await;
    let file_size = || std::fs::metadata(&path).unwrap().len();
    let before = file_size();
    let mut run = new_run(id, "c1", "main", None, "2024-03-01T10:00:00Z");
    // 2 MB that gzip cannot shrink: about 500 pages of log.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let content: Vec<u8> = (0..2_000_000)
        .map(|_| {
            // xorshift64
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u8
        })
        .collect();
    run.files = vec![new_file("large.bin", &content)];
    assert!(run.files[0].content_gz.len() > 1_900_000);
    store.insert_run(&run).await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while file_size() < before + 1_500_000 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        file_size() >= before + 1_500_000,
        "the database file stayed at {} bytes (before the run: {before})",
        file_size()
    );
    let (_, read) = store.run_file(run.id, 0).await.unwrap().unwrap();
    assert_eq!(read, content);
}
