//! Several servers on one database (issue 12, scale-out), on the real server binary: two
//! `benchtrail-server` processes on one fresh Postgres database take a history's uploads at
//! once (each commit's two repeats go to different servers), and one of them is killed with
//! -9 mid-burst. Every run ends analyzed, no alert is stored twice, the change point of the
//! history's real step is found once, no job is done twice, and the survivor finishes the
//! jobs the killed server held once their leases run out. And the pushes of one pull request,
//! analyzed by both servers at once, make one sticky PR comment, not one per server.
//!
//! Postgres only (a SQLite file is for one process). Like every Postgres test it runs when
//! `BENCHTRAIL_TEST_DATABASE_URL` is set and fails when that server is unreachable.

use crate::common;
#[path = "../../runner/tests/common/forge.rs"]
#[allow(dead_code)]
mod forge;

use benchtrail_core::metric::MetricValue;
use benchtrail_core::Stat;
use common::db::{stores, POSTGRES_ENV};
use common::polling::{drained, settled};
use common::process::{ServerProcess, Spawn, PROCESS_ADMIN_TOKEN};
use forge::FakeForge;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Commits of the history; median TTFT steps from about 100 ms to about 130 ms at [`STEP`].
const COMMITS: usize = 18;
/// The first commit after the step (eight after it: more than the scan's `min_segment`, 5).
const STEP: usize = 10;
/// Runs per commit, announced with `repeats_expected`; repeat 0 goes to server A, 1 to B.
const REPEATS: usize = 2;
/// Run-to-run noise (ms, and tok/s for throughput), by commit and repeat.
const NOISE: [f64; 8] = [0.4, -0.3, 0.1, -0.5, 0.2, 0.0, -0.1, 0.3];

fn sha(i: usize) -> String {
    format!("{:040x}", 0x5ca1e_0000u64 + i as u64)
}

/// One run of `commit` (child of `parent`) on `branch`: one chat cell in benchtrail's own
/// format with median TTFT `ttft` (ms) and throughput 1000 + `noise` tok/s.
fn run_doc(commit: &str, parent: Option<String>, branch: &str, ttft: f64, noise: f64) -> Value {
    let m = |name: &str, stat: Stat, v: f64| {
        serde_json::to_value(MetricValue::new(name, stat, v, None)).unwrap()
    };
    json!({
        "run": {
            "commit": {"sha": commit, "parents": parent.into_iter().collect::<Vec<_>>(), "subject": format!("commit {commit}")},
            "branch": branch,
        },
        "results": [{
            "cell": {"load": {"max_concurrency": 4}, "input_len": 512, "output_len": 128, "num_prompts": 100},
            "configuration": {"engine": {"name": "vllm"}, "model": {"name": "mock-llm"}},
            "metrics": [
                m("ttft", Stat::Percentile("50".into()), ttft),
                m("output_throughput", Stat::Value, 1000.0 + noise),
                m("completed", Stat::Value, 100.0),
                m("failed", Stat::Value, 0.0),
            ],
        }],
    })
}

/// Repeat `repeat` of default-branch commit `i`, with a client-chosen run id; the parent is
/// named so that history order is ancestry whatever order the uploads arrive in.
fn upload(i: usize, repeat: usize) -> (Uuid, Value) {
    let id = Uuid::new_v4();
    let level = if i < STEP { 100.0 } else { 130.0 };
    let noise = NOISE[(3 * i + repeat) % NOISE.len()];
    let mut doc = run_doc(
        &sha(i),
        (i > 0).then(|| sha(i - 1)),
        "main",
        level + noise,
        noise,
    );
    doc["run"]["id"] = json!(id);
    doc["run"]["repeat_index"] = json!(repeat);
    doc["run"]["repeats_expected"] = json!(REPEATS);
    doc["run"]["commit"]["time"] = json!(format!("2026-11-01T10:{i:02}:00Z"));
    (id, doc)
}

/// A server with a short lease (a killed server's jobs are taken up within seconds) that
/// keeps every job line of its log.
fn spawn(url: &str, inline: &str) -> ServerProcess {
    spawn_with(url, inline, Vec::new())
}

/// [`spawn`] with extra environment variables.
fn spawn_with(url: &str, inline: &str, env: Vec<(&'static str, String)>) -> ServerProcess {
    let args = [
        "--analysis-lease-secs",
        "4",
        "--analysis-workers",
        "2",
        "--inline-analyses",
        inline,
    ];
    let how = Spawn {
        args: args.map(String::from).to_vec(),
        keep: Some("job "),
        env,
        ..Spawn::default()
    };
    ServerProcess::spawn(url, &how)
}

/// POSTs an upload; `None` when no answer came (the server died or was dead).
async fn post(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    doc: &Value,
) -> Option<(u16, Value)> {
    let r = http
        .post(format!("{base}/api/v1/projects/fleet/runs"))
        .bearer_auth(token)
        .json(doc)
        .send()
        .await
        .ok()?;
    let status = r.status().as_u16();
    Some((status, r.json().await.ok()?))
}

/// One job line of a server's log: what happened to which (job id, generation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Started,
    Finished,
    Failed,
}

/// The job lines of `log`: (event, job id, generation, kind for a start).
fn events(log: &[String]) -> Vec<(Event, i64, i64, String)> {
    log.iter()
        .filter_map(|line| {
            let event = if line.contains("job started") {
                Event::Started
            } else if line.contains("job finished") {
                Event::Finished
            } else if line.contains("job failed; retried") {
                Event::Failed
            } else {
                return None;
            };
            let field = |name: &str| {
                line.split_whitespace()
                    .find_map(|t| t.strip_prefix(&format!("{name}=")))
                    .map(|v| v.trim_matches('"').to_string())
            };
            let id = field("job")?.parse().ok()?;
            let generation = field("generation")?.parse().ok()?;
            Some((event, id, generation, field("kind").unwrap_or_default()))
        })
        .collect()
}

/// The queued jobs of the database at `url`: id → generation.
async fn queued_jobs(url: &str) -> BTreeMap<i64, i64> {
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    let rows: Vec<(i64, i64)> = sqlx::query_as("SELECT id, generation FROM analysis_jobs")
        .fetch_all(&pool)
        .await
        .unwrap();
    pool.close().await;
    rows.into_iter().collect()
}

/// The (job id, generation) pairs `events` started and did not finish.
fn unfinished(events: &[(Event, i64, i64, String)]) -> BTreeSet<(i64, i64)> {
    let mut open = BTreeSet::new();
    for (event, id, generation, _) in events {
        match event {
            Event::Started => {
                open.insert((*id, *generation));
            }
            Event::Finished | Event::Failed => {
                open.remove(&(*id, *generation));
            }
        }
    }
    open
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_on_one_postgres_analyze_everything_once_and_survive_one_killed() {
    let Some(db) = stores().await.into_iter().find(|d| d.name == "postgres") else {
        eprintln!("{POSTGRES_ENV} is not set: the two-server test needs Postgres; skipped");
        return;
    };
    // A only stores uploads (every one answered `pending`); its workers analyze. B analyzes
    // up to four uploads inline and has workers too. Both claim from the one queue.
    let mut a = spawn(&db.url, "0");
    let b = spawn(&db.url, "4");
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let token = a.project_with_token(&http, "fleet").await;

    // The burst: commit after commit, a tenth of a second apart, each commit's repeats at
    // once to both servers.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut docs = BTreeMap::new();
    for i in 0..COMMITS {
        for repeat in 0..REPEATS {
            let (id, doc) = upload(i, repeat);
            docs.insert(id, doc.clone());
            let base = if repeat == 0 {
                a.base.clone()
            } else {
                b.base.clone()
            };
            let (http, token, tx) = (http.clone(), token.clone(), tx.clone());
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(100 * i as u64)).await;
                let _ = tx.send((id, repeat, post(&http, &base, &token, &doc).await));
            });
        }
    }
    drop(tx);

    // A is killed once it acknowledged a few uploads and holds a job it has not finished: the
    // kill catches it mid-analysis, with leases held.
    let mut acknowledged = BTreeSet::new();
    let mut by_a = 0;
    let mut killed = false;
    let mut open = true;
    let deadline = Instant::now() + Duration::from_secs(120);
    while open || !killed {
        let got = tokio::select! {
            answer = rx.recv(), if open => Some(answer),
            () = tokio::time::sleep(Duration::from_millis(20)) => None,
        };
        match got {
            Some(None) => open = false,
            Some(Some((id, repeat, Some((status, receipt))))) => {
                assert!(
                    status == 201 || status == 200 || status == 503,
                    "upload {id}: {status} {receipt}"
                );
                if status != 503 {
                    acknowledged.insert(id);
                    by_a += usize::from(repeat == 0);
                }
            }
            // No answer (A was killed), or nothing arrived yet.
            Some(Some((_, _, None))) | None => {}
        }
        if !killed && by_a >= 6 && !unfinished(&events(&a.kept())).is_empty() {
            a.kill();
            killed = true;
        }
        if !killed && Instant::now() > deadline {
            break;
        }
    }
    assert!(killed, "A never held an unfinished job: {:?}", a.kept());
    // The queue as A left it, read at once (its leases run 4 s, so B holds none of A's jobs
    // yet): a job A's log shows unfinished but that is no longer queued at that generation
    // was finished by A, the kill falling between its commit and its `job finished` line.
    let queued_at_kill = queued_jobs(&db.url).await;
    let a_events = events(&a.kept());
    let left_by_a: BTreeSet<(i64, i64)> = unfinished(&a_events)
        .into_iter()
        .filter(|(id, generation)| queued_at_kill.get(id).is_some_and(|g| g >= generation))
        .collect();
    assert!(
        !left_by_a.is_empty(),
        "the kill must catch A mid-job: {a_events:?}, queued {queued_at_kill:?}"
    );

    // CI retries, on B, every upload that got no answer or a 503.
    for (id, doc) in &docs {
        if acknowledged.contains(id) {
            continue;
        }
        let mut answer = None;
        for _ in 0..10 {
            answer = post(&http, &b.base, &token, doc).await;
            if matches!(answer, Some((200 | 201, _))) {
                break;
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
        let (status, receipt) = answer.expect("B answers");
        assert!(
            status == 201 || status == 200,
            "retry on B: {status} {receipt}"
        );
    }
    let all: BTreeSet<Uuid> = docs.keys().copied().collect();

    // Every run analyzed, and nothing queued (the scans and A's leased jobs done too).
    let still = settled(&http, &b.base, &all, Duration::from_secs(180)).await;
    assert!(
        still.is_empty(),
        "{} of {} runs never analyzed: {still:?}\n{:?}",
        still.len(),
        all.len(),
        b.log()
    );
    let (status, ready) = drained(&http, &b.base, Duration::from_secs(180)).await;
    assert_eq!(status, 200, "{ready}");
    assert_eq!(ready["queued_analyses"], 0, "{ready}\n{:?}", b.log());

    // No alert twice: one per (headline series, commit, kind).
    let r = http
        .get(b.url("/api/v1/projects/fleet/alerts?limit=500"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let page: Value = r.json().await.unwrap();
    let alerts = page["items"].as_array().unwrap();
    assert!(
        page["next_cursor"].is_null(),
        "more than one page of alerts"
    );
    let mut per_key = BTreeMap::<(String, String, String), usize>::new();
    for alert in alerts {
        let key = |f: &str| alert[f].as_str().unwrap().to_string();
        *per_key
            .entry((key("series_id"), key("commit"), key("kind")))
            .or_default() += 1;
    }
    let twice: Vec<_> = per_key.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "alerts stored twice: {twice:?}");

    // The step: its regression opened at the step commit, its change point found there once
    // (earlier scans of a shorter history may have placed it elsewhere: superseded, resolved),
    // and nothing open before it.
    let of = |kind: &str, status: Option<&str>| -> Vec<String> {
        alerts
            .iter()
            .filter(|a| a["metric"] == "ttft" && a["kind"] == kind)
            .filter(|a| status.is_none_or(|s| a["status"] == s))
            .map(|a| a["commit"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(of("change_point", Some("open")), [sha(STEP)], "{alerts:#?}");
    let at_step = of("change_point", None)
        .iter()
        .filter(|c| **c == sha(STEP))
        .count();
    assert_eq!(at_step, 1, "{alerts:#?}");
    assert!(
        of("regression", Some("open")).contains(&sha(STEP)),
        "{alerts:#?}"
    );
    let before: BTreeSet<String> = (0..STEP).map(sha).collect();
    let open_before: Vec<&Value> = alerts
        .iter()
        .filter(|a| a["status"] == "open" && before.contains(a["commit"].as_str().unwrap()))
        .collect();
    assert!(open_before.is_empty(), "{open_before:#?}");

    // No job done twice: each (job, generation) finished once at most, and started again only
    // after a failed attempt or after A died holding it; every job A held, B finished once its
    // lease ran out (at that generation or a later one: asked for again meanwhile).
    let b_events = events(&b.kept());
    let mut started = BTreeMap::<(i64, i64), usize>::new();
    let mut finished = BTreeMap::<(i64, i64), usize>::new();
    let mut failed = BTreeMap::<(i64, i64), usize>::new();
    for (event, id, generation, _) in a_events.iter().chain(&b_events) {
        let count = match event {
            Event::Started => &mut started,
            Event::Finished => &mut finished,
            Event::Failed => &mut failed,
        };
        *count.entry((*id, *generation)).or_default() += 1;
    }
    let finished_twice: Vec<_> = finished.iter().filter(|(_, n)| **n > 1).collect();
    assert!(finished_twice.is_empty(), "{finished_twice:?}");
    for (job, n) in &started {
        let again = failed.get(job).copied().unwrap_or(0) + usize::from(left_by_a.contains(job));
        assert!(
            *n <= 1 + again,
            "job {job:?} started {n} times with {again} explained\nA: {a_events:?}\nB: {b_events:?}"
        );
    }
    for (id, generation) in &left_by_a {
        let taken_up = b_events
            .iter()
            .any(|(e, i, g, _)| *e == Event::Finished && i == id && g >= generation);
        assert!(
            taken_up,
            "A's job {id} (generation {generation}) was not finished by B: {b_events:?}"
        );
    }
    let scans_done = a_events
        .iter()
        .chain(&b_events)
        .filter(|(e, _, _, kind)| *e == Event::Started && kind == "scan")
        .count();
    assert!(scans_done >= 1, "no scan job ran");
    eprintln!(
        "two servers: {} runs, {} acknowledged in the burst ({by_a} by A before it was killed); A left {} jobs unfinished, all finished by B; {} job attempts in all ({} by A), {} scans; {} alerts",
        all.len(),
        acknowledged.len(),
        left_by_a.len(),
        started.values().sum::<usize>(),
        a_events.iter().filter(|e| e.0 == Event::Started).count(),
        scans_done,
        alerts.len()
    );
    drop(a);
    drop(b);
    db.cleanup().await;
}

/// The servers' forge token variable (given to the processes only).
const FORGE_TOKEN_ENV: &str = "BENCHTRAIL_FORGE_FLEET_GITHUB_TOKEN";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_post_one_sticky_comment_for_the_pushes_of_one_pull_request() {
    let Some(db) = stores().await.into_iter().find(|d| d.name == "postgres") else {
        eprintln!("{POSTGRES_ENV} is not set: the two-server test needs Postgres; skipped");
        return;
    };
    let forge = FakeForge::start();
    // Each forge request takes a second, as a real API's may: two posters of one
    // project at once would both list no comment and both create one.
    forge.slow(Duration::from_secs(1));
    let env = || vec![(FORGE_TOKEN_ENV, "ghs_fleet".to_string())];
    let a = spawn_with(&db.url, "4", env());
    let b = spawn_with(&db.url, "4", env());
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let token = a.project_with_token(&http, "fleet").await;
    let settings = json!({
        "slo_profiles": [{"name": "interactive", "ttft_ms": 2000, "tpot_ms": 50}],
        "pr_comments": {"provider": "github", "repository": "acme/engine", "api_url": forge.base,
                        "token_env": FORGE_TOKEN_ENV, "always": true},
    });
    let r = http
        .put(b.url("/api/v1/projects/fleet/settings"))
        .bearer_auth(PROCESS_ADMIN_TOKEN)
        .json(&settings)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    for i in 0..6 {
        let doc = run_doc(
            &sha(i),
            (i > 0).then(|| sha(i - 1)),
            "main",
            100.0 + NOISE[i],
            NOISE[i],
        );
        let (status, receipt) = post(&http, &a.base, &token, &doc).await.unwrap();
        assert_eq!(status, 201, "{receipt}");
    }

    // Four pushes of pull request 7 at once, alternately to A and B: every analysis ends with
    // a comments job, and the workers of both servers are free to take them together.
    let push = |n: usize| format!("{:040x}", 0xfeed_0000u64 + n as u64);
    let mut sent = Vec::new();
    for n in 0..4 {
        let parent = if n == 0 { sha(5) } else { push(n - 1) };
        let mut doc = run_doc(&push(n), Some(parent), "feature", 130.0 + n as f64, 0.0);
        doc["run"]["pull_request"] = json!({"number": 7, "merge_base": sha(5)});
        let base = if n % 2 == 0 {
            a.base.clone()
        } else {
            b.base.clone()
        };
        let (http, token) = (http.clone(), token.clone());
        sent.push(tokio::spawn(async move {
            post(&http, &base, &token, &doc).await
        }));
    }
    let mut runs = Vec::new();
    for task in sent {
        let (status, receipt) = task.await.unwrap().expect("an answer");
        assert_eq!(status, 201, "{receipt}");
        runs.push(receipt["run_id"].as_str().unwrap().parse::<Uuid>().unwrap());
    }

    // Every push's comment recorded; one comment on the PR, created once, then updated.
    let deadline = Instant::now() + Duration::from_secs(120);
    let outcomes = loop {
        let mut outcomes = Vec::new();
        for run in &runs {
            let post = db.store.pr_comment_post(*run).await.unwrap();
            outcomes.extend(post.and_then(|p| p.outcome));
        }
        if outcomes.len() == runs.len() || Instant::now() > deadline {
            break outcomes;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(
        outcomes.len(),
        runs.len(),
        "{outcomes:?}\nA: {:?}\nB: {:?}",
        a.log(),
        b.log()
    );
    let seen = forge.take_seen();
    let posts = seen.iter().filter(|s| s.method == "POST").count();
    assert_eq!(posts, 1, "{seen:#?}");
    assert_eq!(forge.ours(7).len(), 1, "{seen:#?}");
    let created = outcomes.iter().filter(|o| *o == "created").count();
    assert_eq!(created, 1, "{outcomes:?}");
    assert!(
        outcomes
            .iter()
            .all(|o| ["created", "updated", "unchanged"].contains(&o.as_str())),
        "{outcomes:?}"
    );
    let posted_by = |s: &ServerProcess| {
        events(&s.kept())
            .iter()
            .filter(|(e, _, _, kind)| *e == Event::Started && kind == "comments")
            .count()
    };
    eprintln!(
        "two servers, one PR: outcomes {outcomes:?}; comments jobs started by A {}, by B {}",
        posted_by(&a),
        posted_by(&b)
    );
    drop(a);
    drop(b);
    db.cleanup().await;
}
