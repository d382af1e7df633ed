//! Durable analysis (issue 13, finding 4) and recovery from store faults (findings 2, 5), on
//! the real server binary: every acknowledged upload ends with a verdict, whether the server
//! is killed while analyzing or the disk fills up, and the server recovers without a restart.

use crate::common;

use common::db::stores;
use common::polling::{drained, readyz, settled};
use common::process::{ServerProcess, Spawn};
use common::server::upload_doc;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use uuid::Uuid;

/// What the server logs when a job's attempt fails and is retried later.
const FAILED_ATTEMPT: &str = "job failed; retried";
/// One real vLLM result file, uploaded as every commit's run.
const FILE: &str = "examples/history/baseline_completions_c4_isl512_osl128.json";

/// Short leases, so a killed server's jobs are taken up within seconds.
fn quick_jobs() -> Vec<String> {
    ["--analysis-lease-secs", "3", "--analysis-workers", "2"]
        .map(String::from)
        .to_vec()
}

/// Commit `i`'s upload document with a client-chosen run id.
fn commit_doc(i: usize) -> (Uuid, Value) {
    let id = Uuid::new_v4();
    let sha = format!("{:040x}", 0xc0ffee_0000u64 + i as u64);
    let mut doc = upload_doc(
        &sha,
        &format!("2026-11-{:02}T10:00:00Z", 1 + i % 28),
        &[FILE],
    );
    doc["run"]["id"] = Value::String(id.to_string());
    (id, doc)
}

/// POSTs an upload; `None` when no answer came (the server died).
async fn post(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    doc: &Value,
) -> Option<(u16, Option<String>, Value)> {
    let r = http
        .post(format!("{base}/api/v1/projects/durable/runs"))
        .bearer_auth(token)
        .json(doc)
        .send()
        .await
        .ok()?;
    let status = r.status().as_u16();
    let retry_after = r
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    Some((status, retry_after, r.json().await.ok()?))
}

/// The HTTP client of these tests: a minute per request (analyses run inline).
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// Uploads commits `range` one after another, each answered 201; returns their run ids.
async fn upload_commits(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    range: std::ops::Range<usize>,
) -> BTreeSet<Uuid> {
    let mut ids = BTreeSet::new();
    for i in range {
        let (id, doc) = commit_doc(i);
        let (status, _, receipt) = post(http, base, token, &doc).await.unwrap();
        assert_eq!(status, 201, "commit {i}: {receipt}");
        ids.insert(id);
    }
    ids
}

/// Sends every upload of `docs` at once; each answer (or `None`: no answer) arrives on the
/// returned channel with its run id, in the order they come.
fn burst(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    docs: &[(Uuid, Value)],
) -> tokio::sync::mpsc::UnboundedReceiver<(Uuid, Option<(u16, Option<String>, Value)>)> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    for (id, doc) in docs.iter().cloned() {
        let (http, base, token, tx) = (
            http.clone(),
            base.to_string(),
            token.to_string(),
            tx.clone(),
        );
        tokio::spawn(async move {
            let _ = tx.send((id, post(&http, &base, &token, &doc).await));
        });
    }
    rx
}

/// POSTs an upload as a CI client does: a 503 is retried after its `Retry-After` (up to 10
/// times); returns the final status and receipt.
async fn post_retrying(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    doc: &Value,
) -> (u16, Value) {
    for _ in 0..10 {
        let (status, retry_after, body) = post(http, base, token, doc).await.unwrap();
        if status != 503 {
            return (status, body);
        }
        let wait: u64 = retry_after
            .expect("a 503 says when to retry")
            .parse()
            .unwrap();
        tokio::time::sleep(Duration::from_secs(wait)).await;
    }
    panic!("still 503 after 10 retries");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_server_killed_mid_analysis_leaves_no_acknowledged_upload_unanalyzed() {
    for db in stores().await {
        let name = db.name;
        let spawn = Spawn {
            args: quick_jobs(),
            ..Spawn::default()
        };
        let mut server = ServerProcess::spawn(&db.url, &spawn);
        let http = client();
        let token = server.project_with_token(&http, "durable").await;
        let mut all = upload_commits(&http, &server.base, &token, 0..4).await;

        // A burst of uploads; the server is killed once a few are acknowledged, while the
        // others are in flight and the acknowledged ones are still being analyzed.
        let docs: Vec<(Uuid, Value)> = (4..28).map(commit_doc).collect();
        let mut rx = burst(&http, &server.base, &token, &docs);
        let mut acknowledged = BTreeMap::new();
        while let Some((id, answer)) = rx.recv().await {
            if let Some((status, retry_after, receipt)) = answer {
                // A 503 with `Retry-After` (SQLite's one writer busy past its timeout under
                // this burst) acknowledges nothing: the client retries it, as an upload in
                // flight at the kill. Anything else must be an acknowledgement.
                if status == 503 && retry_after.is_some() {
                    continue;
                }
                assert!(status == 201 || status == 200, "{name}: {status} {receipt}");
                acknowledged.insert(id, receipt["verdict"].clone());
            }
            if acknowledged.len() >= 6 {
                break;
            }
        }
        server.kill();
        while let Some((id, answer)) = rx.recv().await {
            if let Some((200 | 201, _, receipt)) = answer {
                acknowledged.insert(id, receipt["verdict"].clone());
            }
        }
        let pending_when_killed = acknowledged
            .values()
            .filter(|v| v.as_str() == Some("pending"))
            .count();
        assert!(
            pending_when_killed >= 1,
            "{name}: the kill must catch acknowledged uploads before their analysis: {acknowledged:?}"
        );

        // Restarted on the same database; CI retries the uploads it got no answer to.
        let server = ServerProcess::spawn(&db.url, &spawn);
        for (id, doc) in &docs {
            all.insert(*id);
            if !acknowledged.contains_key(id) {
                let (status, receipt) = post_retrying(&http, &server.base, &token, doc).await;
                assert!(
                    status == 201 || status == 200,
                    "{name}: retry {status} {receipt}\n{}",
                    server.log().join("\n")
                );
            }
        }
        let still = settled(&http, &server.base, &all, Duration::from_secs(120)).await;
        assert!(
            still.is_empty(),
            "{name}: {} of {} runs never analyzed: {still:?}\n{:?}",
            still.len(),
            all.len(),
            server.log()
        );
        let (status, ready) = drained(&http, &server.base, Duration::from_secs(60)).await;
        assert_eq!(status, 200, "{name}: {ready}");
        assert_eq!(ready["queued_analyses"], 0, "{name}: {ready}");
        eprintln!(
            "{name}: killed with {} of 24 burst uploads acknowledged ({pending_when_killed} of them pending); all {} runs analyzed after the restart",
            acknowledged.len(),
            all.len()
        );
        drop(server);
        db.cleanup().await;
    }
}

/// Empties the SQLite database's write-ahead log (a checkpoint that truncates it), so that a
/// file-size limit set next bounds what the server can still write: a log that had been
/// written and checkpointed before is reused from its start, and the room inside it would
/// make any bound meaningless. Tried again for up to 5 s while it is blocked: the server's
/// own background checkpoint or a change-point scan reading at that moment blocks it (seen
/// once in seven runs of this file).
async fn empty_the_log(db_url: &str) {
    use sqlx::Connection;
    let mut conn = sqlx::SqliteConnection::connect(db_url).await.unwrap();
    let mut busy = 1;
    for _ in 0..50 {
        (busy, _, _) = sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(TRUNCATE)")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        if busy == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(busy, 0, "the checkpoint must not be blocked");
    conn.close().await.unwrap();
}

/// [`empty_the_log`], then a read transaction held open on the emptied log: until it ends,
/// no checkpoint copies the frames written after it into the database file, so the log can
/// never start over and every write appends to it. (The server checkpoints its log in the
/// background every second, `storage::db::checkpoint`; after such a checkpoint, writes reuse
/// the log's room, so a file size limit at the log's size would not fill for them.)
async fn hold_the_log(db_url: &str) -> sqlx::SqliteConnection {
    use sqlx::Connection;
    empty_the_log(db_url).await;
    let mut conn = sqlx::SqliteConnection::connect(db_url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut conn).await.unwrap();
    // A read transaction takes its snapshot at its first read.
    let _: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM runs")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    conn
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_disk_is_a_503_and_the_server_recovers_when_space_returns() {
    let db = common::db::sqlite().await;
    let spawn = Spawn {
        args: quick_jobs(),
        survive_file_limit: true,
        ..Spawn::default()
    };
    let server = ServerProcess::spawn(&db.url, &spawn);
    let http = client();
    let token = server.project_with_token(&http, "durable").await;
    let mut acknowledged = upload_commits(&http, &server.base, &token, 0..3).await;

    // The disk is full: the write-ahead log, emptied, may not grow past 16 KiB.
    empty_the_log(&db.url).await;
    server.limit_file_size(Some(16 * 1024));
    let mut statuses = BTreeMap::<u16, usize>::new();
    for i in 3..15 {
        let (id, doc) = commit_doc(i);
        let (status, retry_after, body) = post(&http, &server.base, &token, &doc).await.unwrap();
        *statuses.entry(status).or_default() += 1;
        match status {
            201 => {
                acknowledged.insert(id);
            }
            503 => {
                assert_eq!(retry_after.as_deref(), Some("5"), "{body}");
                assert_eq!(body["status"], 503, "{body}");
                assert_eq!(body["title"], "Service unavailable", "{body}");
            }
            other => panic!("a full disk answered {other}: {body}\n{:?}", server.log()),
        }
    }
    assert!(
        statuses.get(&503).copied().unwrap_or(0) >= 1,
        "the limit must make uploads fail: {statuses:?}"
    );
    let (status, _) = readyz(&http, &server.base).await;
    assert!(status == 503 || status == 200, "{status}");

    // Space again: the same process serves uploads and analyzes what it acknowledged.
    server.limit_file_size(None);
    for i in 15..18 {
        let (id, doc) = commit_doc(i);
        let (status, _, receipt) = post(&http, &server.base, &token, &doc).await.unwrap();
        assert_eq!(
            status,
            201,
            "after space returned: {receipt}\n{:?}",
            server.log()
        );
        acknowledged.insert(id);
    }
    let still = settled(&http, &server.base, &acknowledged, Duration::from_secs(60)).await;
    assert!(
        still.is_empty(),
        "never analyzed: {still:?}\n{:?}",
        server.log()
    );
    let (status, ready) = drained(&http, &server.base, Duration::from_secs(60)).await;
    assert_eq!(status, 200, "{ready}");
    assert_eq!(ready["queued_analyses"], 0, "{ready}");
    eprintln!("full disk: uploads answered {statuses:?}; all {} acknowledged runs analyzed after space returned", acknowledged.len());
    drop(server);
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_disk_that_fills_during_analysis_leaves_no_acknowledged_upload_unanalyzed() {
    let db = common::db::sqlite().await;
    // Uploads are only stored and acknowledged (`pending`); one worker analyzes them.
    let args = [
        "--analysis-lease-secs",
        "3",
        "--inline-analyses",
        "0",
        "--analysis-workers",
        "1",
    ]
    .map(String::from)
    .to_vec();
    let spawn = Spawn {
        args,
        survive_file_limit: true,
        // Counted from every line: the last-lines log scrolls on a busy server.
        keep: Some(FAILED_ATTEMPT),
        ..Spawn::default()
    };
    let server = ServerProcess::spawn(&db.url, &spawn);
    let http = client();
    let token = server.project_with_token(&http, "durable").await;
    let mut acknowledged = upload_commits(&http, &server.base, &token, 0..3).await;
    assert!(
        settled(&http, &server.base, &acknowledged, Duration::from_secs(60))
            .await
            .is_empty()
    );

    // The log is emptied first (a checkpoint that truncates it) and held (no checkpoint
    // until the end), so that from now on it holds exactly what is written: the uploads
    // below, sent at once, so that they are stored and acknowledged faster than the one
    // worker analyzes them.
    let reader = hold_the_log(&db.url).await;
    let mut during = BTreeSet::new();
    let sent: Vec<_> = (3..9)
        .map(|i| {
            let (http, base, token) = (http.clone(), server.base.clone(), token.clone());
            tokio::spawn(async move {
                let (id, doc) = commit_doc(i);
                (id, post(&http, &base, &token, &doc).await.unwrap())
            })
        })
        .collect();
    for task in sent {
        let (id, (status, _, body)) = task.await.unwrap();
        assert_eq!(status, 201, "{body}");
        assert_eq!(body["verdict"], "pending", "{body}");
        during.insert(id);
    }
    // Then the disk is full: the log may not grow past what it holds, so no analysis the
    // worker has still to store fits. (A bound on the room instead would depend on the size
    // of an analysis, which is compressed and far smaller than a run.)
    let log = format!("{}-wal", db.url.trim_start_matches("sqlite://"));
    let held = std::fs::metadata(&log).map(|m| m.len()).unwrap();
    server.limit_file_size(Some(held));
    // The worker meets the full disk: wait for its first failed attempt. A fixed pause is not
    // enough on a loaded machine (CI once saw no failed attempt 3 s after the uploads).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while server.kept().is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let failed_attempts = server.kept().len();
    assert!(
        failed_attempts >= 1,
        "no analysis failed on the full disk\n{:?}",
        server.log()
    );
    // While the disk stays full, the failed analyses keep failing: their runs stay pending.
    let unanalyzed = settled(&http, &server.base, &during, Duration::ZERO).await;
    assert!(
        !unanalyzed.is_empty(),
        "the disk must fill during an acknowledged upload's analysis\n{:?}",
        server.log()
    );

    server.limit_file_size(None);
    acknowledged.extend(during.iter().copied());
    let still = settled(&http, &server.base, &acknowledged, Duration::from_secs(60)).await;
    assert!(
        still.is_empty(),
        "never analyzed: {still:?}\n{:?}",
        server.log()
    );
    eprintln!(
        "disk full during analysis: {} uploads acknowledged; {} of them unanalyzed while the disk was full ({failed_attempts} failed attempts); all {} analyzed after space returned",
        during.len(),
        unanalyzed.len(),
        acknowledged.len()
    );
    drop(reader);
    drop(server);
    db.cleanup().await;
}

/// A TCP proxy in front of Postgres that can cut every connection and refuse new ones (a
/// database restart or a network partition, as the server meets it).
struct Proxy {
    port: u16,
    up: std::sync::Arc<std::sync::atomic::AtomicBool>,
    links: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
}

impl Proxy {
    async fn start(target: String) -> Proxy {
        use std::sync::atomic::Ordering;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let links = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (up2, links2) = (up.clone(), links.clone());
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if !up2.load(Ordering::SeqCst) {
                    continue; // dropped: the connection is closed at once
                }
                let target = target.clone();
                let link = tokio::spawn(async move {
                    if let Ok(mut db) = tokio::net::TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut db).await;
                    }
                });
                links2.lock().unwrap().push(link.abort_handle());
            }
        });
        Proxy { port, up, links }
    }

    /// Cuts every open connection and refuses new ones.
    fn down(&self) {
        self.up.store(false, std::sync::atomic::Ordering::SeqCst);
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }

    fn restore(&self) {
        self.up.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_postgres_outage_is_a_503_and_every_acknowledged_upload_is_analyzed_after_it() {
    let Some(db) = stores().await.into_iter().find(|d| d.name == "postgres") else {
        eprintln!("Postgres not configured: outage test skipped");
        return;
    };
    // postgres://user@host:port/db → the same through the proxy.
    let rest = db.url.split_once('@').unwrap().1;
    let (authority, database) = rest.split_once('/').unwrap();
    let proxy = Proxy::start(authority.to_string()).await;
    let user = db
        .url
        .split_once("://")
        .unwrap()
        .1
        .split_once('@')
        .unwrap()
        .0;
    let via_proxy = format!("postgres://{user}@127.0.0.1:{}/{database}", proxy.port);
    let spawn = Spawn {
        args: quick_jobs(),
        ..Spawn::default()
    };
    let server = ServerProcess::spawn(&via_proxy, &spawn);
    let http = client();
    let token = server.project_with_token(&http, "durable").await;
    let mut acknowledged = upload_commits(&http, &server.base, &token, 0..3).await;

    // A burst; the database goes away once a few uploads are acknowledged.
    let docs: Vec<(Uuid, Value)> = (3..19).map(commit_doc).collect();
    let mut rx = burst(&http, &server.base, &token, &docs);
    let mut answers = BTreeMap::<u16, usize>::new();
    let mut cut = false;
    while let Some((id, answer)) = rx.recv().await {
        let (status, retry_after, body) = answer.expect("the server answers every request");
        *answers.entry(status).or_default() += 1;
        match status {
            200 | 201 => {
                acknowledged.insert(id);
            }
            503 => assert_eq!(retry_after.as_deref(), Some("5"), "{body}"),
            other => panic!("answered {other} during a database outage: {body}"),
        }
        if !cut && acknowledged.len() >= 6 {
            proxy.down();
            cut = true;
        }
    }
    if !cut {
        proxy.down();
    }
    let (status, ready) = readyz(&http, &server.base).await;
    assert_eq!(status, 503, "readyz during the outage: {ready}");
    let (status, retry_after, body) = post(&http, &server.base, &token, &commit_doc(40).1)
        .await
        .unwrap();
    assert_eq!((status, retry_after.as_deref()), (503, Some("5")), "{body}");

    proxy.restore();
    // CI retries what was not acknowledged.
    for (id, doc) in &docs {
        if !acknowledged.contains(id) {
            let (status, receipt) = post_retrying(&http, &server.base, &token, doc).await;
            assert!(
                status == 201 || status == 200,
                "retry after the outage: {status} {receipt}\n{:?}",
                server.log()
            );
            acknowledged.insert(*id);
        }
    }
    let still = settled(&http, &server.base, &acknowledged, Duration::from_secs(90)).await;
    assert!(
        still.is_empty(),
        "never analyzed: {still:?}\n{:?}",
        server.log()
    );
    let (status, ready) = drained(&http, &server.base, Duration::from_secs(60)).await;
    assert_eq!(status, 200, "{ready}");
    assert_eq!(ready["queued_analyses"], 0, "{ready}");
    eprintln!(
        "postgres outage: burst answered {answers:?}; all {} runs analyzed after it",
        acknowledged.len()
    );
    drop(server);
    db.cleanup().await;
}

#[tokio::test]
async fn a_full_analysis_queue_refuses_new_uploads_with_503_and_stores_nothing() {
    use benchtrail_server::analysis::jobs::AnalyzerOptions;
    common::db::for_each_store(|db, store| async move {
        // No worker and no inline analysis: every upload's job stays queued; and no wait for
        // room (see the next test).
        let options = AnalyzerOptions {
            workers: 0,
            inline: 0,
            max_queued: 2,
            admission_wait: Duration::ZERO,
            ..AnalyzerOptions::default()
        };
        let server = common::server::TestServer::start_with_analyzer(store.clone(), options).await;
        let token = server
            .project_with_token("durable", serde_json::json!({}))
            .await;
        let (first, first_doc) = commit_doc(0);
        for (i, doc) in [first_doc.clone(), commit_doc(1).1].iter().enumerate() {
            let (status, receipt) = server.upload("durable", &token, doc).await;
            assert_eq!(status, 201, "{db}: {receipt}");
            assert_eq!(receipt["verdict"], "pending", "{db}: upload {i}");
            assert_eq!(
                receipt["verdict_detail"]["reasons"][0]["code"], "not_analyzed",
                "{db}"
            );
            assert_eq!(
                receipt["verdict_detail"]["queued_analysis"]["attempts"], 0,
                "{db}"
            );
        }
        let (third, doc) = commit_doc(2);
        let r = server
            .http
            .post(server.url("/api/v1/projects/durable/runs"))
            .bearer_auth(&token)
            .json(&doc)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 503, "{db}");
        assert_eq!(r.headers()["retry-after"], "10", "{db}");
        assert_eq!(
            r.headers()["content-type"],
            "application/problem+json",
            "{db}"
        );
        let problem: Value = r.json().await.unwrap();
        assert_eq!(
            problem["detail"], "2 analyses are queued; this upload was not stored: retry in 10 s",
            "{db}"
        );
        let (status, _) = server.get(&format!("/api/v1/runs/{third}")).await;
        assert_eq!(status, 404, "{db}: nothing stored");
        // A retry of a stored run is answered as before, queue full or not.
        let (status, receipt) = server.upload("durable", &token, &first_doc).await;
        assert_eq!(
            (status, receipt["run_id"].as_str()),
            (200, Some(first.to_string().as_str())),
            "{db}"
        );
        assert_eq!(store.queued_jobs().await.unwrap(), 2, "{db}");
    })
    .await;
}

/// An upload that finds the queue full waits for room (up to `--admission-wait`) instead of
/// being refused at once, and is stored as soon as a job leaves the queue.
#[tokio::test]
async fn an_upload_that_finds_the_queue_full_waits_for_room() {
    use benchtrail_server::analysis::jobs::AnalyzerOptions;
    common::db::for_each_store(|db, store| async move {
        let options = AnalyzerOptions {
            workers: 0,
            inline: 0,
            max_queued: 2,
            admission_wait: Duration::from_secs(60),
            ..AnalyzerOptions::default()
        };
        let server = common::server::TestServer::start_with_analyzer(store.clone(), options).await;
        let token = server
            .project_with_token("durable", serde_json::json!({}))
            .await;
        for i in 0..2 {
            let (status, receipt) = server.upload("durable", &token, &commit_doc(i).1).await;
            assert_eq!(status, 201, "{db}: {receipt}");
        }
        assert_eq!(store.queued_jobs().await.unwrap(), 2, "{db}");
        let (third, doc) = commit_doc(2);
        let waiting = tokio::spawn({
            let request = server
                .http
                .post(server.url("/api/v1/projects/durable/runs"))
                .bearer_auth(&token)
                .json(&doc);
            async move { request.send().await.unwrap().status().as_u16() }
        });
        // The queue stays full: the upload waits, unanswered and unstored.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(
            !waiting.is_finished(),
            "{db}: answered while the queue was full"
        );
        let (status, _) = server.get(&format!("/api/v1/runs/{third}")).await;
        assert_eq!(status, 404, "{db}: stored while the queue was full");
        // One job leaves the queue (as a worker of another server would finish it): the
        // waiting upload is stored.
        let job = store
            .claim_due_job(chrono::Duration::seconds(30))
            .await
            .unwrap()
            .expect("a queued job");
        assert!(
            store.finish_job(job.id, job.generation).await.unwrap(),
            "{db}"
        );
        assert_eq!(waiting.await.unwrap(), 201, "{db}");
        let (status, _) = server.get(&format!("/api/v1/runs/{third}")).await;
        assert_eq!(status, 200, "{db}");
        assert_eq!(store.queued_jobs().await.unwrap(), 2, "{db}");
    })
    .await;
}

/// A Postgres database that stops accepting connections (`ALTER DATABASE … ALLOW_CONNECTIONS
/// false`, SQLSTATE 55000 on connect) is a 503 with `Retry-After`, like any outage, and the
/// same server serves again once it accepts them.
#[tokio::test]
async fn a_postgres_database_refusing_connections_is_a_503() {
    use sqlx::Connection;
    let Some(db) = stores().await.into_iter().find(|d| d.name == "postgres") else {
        eprintln!("Postgres not configured: skipped");
        return;
    };
    let server = common::server::TestServer::start(db.store.clone()).await;
    server
        .project_with_token("p", serde_json::json!({"public": true}))
        .await;
    let database = db.url.rsplit('/').next().unwrap().to_string();
    let admin_url = std::env::var(common::db::POSTGRES_ENV).unwrap();
    let mut admin = sqlx::PgConnection::connect(&admin_url).await.unwrap();
    let set = |allow: bool| format!("ALTER DATABASE \"{database}\" ALLOW_CONNECTIONS {allow}");
    sqlx::query(&set(false)).execute(&mut admin).await.unwrap();
    sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1")
        .bind(&database)
        .execute(&mut admin)
        .await
        .unwrap();
    let r = server
        .http
        .get(server.url("/api/v1/projects/p"))
        .send()
        .await
        .unwrap();
    let (status, retry_after) = (r.status().as_u16(), r.headers().get("retry-after").cloned());
    let (ready, _) = readyz(&server.http, &server.base).await;
    sqlx::query(&set(true)).execute(&mut admin).await.unwrap();
    assert_eq!(status, 503);
    assert_eq!(retry_after.unwrap(), "5");
    assert_eq!(ready, 503);
    let (status, body) = server.get("/api/v1/projects/p").await;
    assert_eq!(status, 200, "{body}");
    drop(server);
    db.cleanup().await;
}

/// An upload that finds another upload's analysis queued or running (here: held by another
/// server) leaves its own to the workers: its receipt says `pending` and a worker stores the
/// verdict soon after. Once nothing else is queued, an upload is analyzed before its answer.
#[tokio::test]
async fn an_upload_to_a_busy_server_is_analyzed_by_a_worker_and_one_to_an_idle_server_inline() {
    use benchtrail_server::analysis::jobs::AnalyzerOptions;
    for db in stores().await {
        let name = db.name;
        let options = AnalyzerOptions {
            workers: 1,
            poll: Duration::from_millis(100),
            ..AnalyzerOptions::default()
        };
        let server =
            common::server::TestServer::start_with_analyzer(db.store.clone(), options).await;
        let token = server
            .project_with_token("busy", serde_json::json!({}))
            .await;
        // Another server's upload of commit `elsewhere`, analyzing there: leased far ahead.
        sqlx::any::install_default_drivers();
        let pool = sqlx::AnyPool::connect(&db.url).await.unwrap();
        sqlx::query(
            "INSERT INTO analysis_jobs (project_id, kind, branch, commit_sha, generation, attempts, \
             queued_at, not_before, lease_until) SELECT id, 'commit', 'main', 'elsewhere', 1, 1, \
             '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z', \
             '2999-01-01T00:00:00.000000Z' FROM projects WHERE slug = 'busy'",
        )
        .execute(&pool)
        .await
        .unwrap();
        let (first, doc) = commit_doc(0);
        let (status, receipt) = server.upload("busy", &token, &doc).await;
        assert_eq!(status, 201, "{name}: {receipt}");
        assert_eq!(receipt["verdict"], "pending", "{name}: {receipt}");
        assert_eq!(
            receipt["verdict_detail"]["reasons"][0]["code"], "not_analyzed",
            "{name}"
        );
        let ids = BTreeSet::from([first]);
        let still = settled(&server.http, &server.base, &ids, Duration::from_secs(30)).await;
        assert!(
            still.is_empty(),
            "{name}: the worker analyzed it: {still:?}"
        );
        // The other server is done; this one's worker has finished too.
        sqlx::query("DELETE FROM analysis_jobs WHERE commit_sha = 'elsewhere'")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while db.store.queue_counts().await.unwrap().commit_jobs > 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "{name}: commit jobs still queued after 30 s"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let (_, doc) = commit_doc(1);
        let (status, receipt) = server.upload("busy", &token, &doc).await;
        assert_eq!(status, 201, "{name}: {receipt}");
        assert_ne!(receipt["verdict"], "pending", "{name}: {receipt}");
        drop(server);
        db.cleanup().await;
    }
}
