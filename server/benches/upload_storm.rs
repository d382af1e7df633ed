//! Many uploaders at once (issue 13): `--clients` CI jobs upload for `--seconds` as fast as the
//! server answers, over real HTTP on a loopback port, on a temporary SQLite file and (when
//! `BENCHTRAIL_BENCH_DATABASE_URL` names a Postgres admin connection) a fresh Postgres
//! database. Each client behaves as `benchtrail upload` does: a 503 is retried after its
//! `Retry-After`; anything else but 200/201 is an error.
//!
//! ```sh
//! cargo bench -p benchtrail-server --bench upload_storm
//! BENCHTRAIL_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
//!     cargo bench -p benchtrail-server --bench upload_storm -- --clients 200 --seconds 60
//! ```
//!
//! The work: each client is one CI pipeline; each of its uploads is a new commit of the
//! default branch (a real vLLM `bench serve` result file, 4 cells' worth of values spread over
//! the clients), so every upload asks for an analysis of its own. Printed per store: uploads
//! acknowledged, 503s (all with `Retry-After`), errors, lost runs (acknowledged but not
//! stored), latency p50/p90/p99/max of the acknowledged round trips (including the waits of
//! retried 503s), and how long after the storm every acknowledged run had a verdict other
//! than `pending` (`--settle` seconds at most).

mod support;

use benchtrail_server::storage::Store;
use clap::Parser;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{create_postgres, drop_postgres, post_retrying, Bench, Outcome};
use uuid::Uuid;

/// The files the uploads carry, one per workload cell (real vLLM `bench serve` outputs).
const FILES: &[&str] = &[
    "examples/history/baseline_completions_c1_isl512_osl128.json",
    "examples/history/baseline_completions_c4_isl512_osl128.json",
];

#[derive(Parser, Debug, Clone)]
#[command(about = "Many concurrent uploaders: errors, 503s, latency, and analysis catch-up")]
struct Args {
    /// Concurrent uploaders.
    #[arg(long, default_value_t = 200)]
    clients: usize,
    /// How long they upload.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// Longest wait, after the storm, for every acknowledged run to be analyzed.
    #[arg(long, default_value_t = 60)]
    settle: u64,
    /// Skip SQLite.
    #[arg(long)]
    no_sqlite: bool,
    /// Postgres admin URL (a fresh database is created and dropped).
    #[arg(long, env = "BENCHTRAIL_BENCH_DATABASE_URL")]
    database_url: Option<String>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// What the clients saw.
#[derive(Default)]
struct Tally {
    acknowledged: Vec<Uuid>,
    latencies_ms: Vec<f64>,
    unavailable: usize,
    unavailable_without_retry_after: usize,
    errors: Vec<String>,
}

fn doc(client: usize, k: usize, content: &str, name: &str) -> (Uuid, Vec<u8>) {
    let id = Uuid::new_v4();
    let sha = format!("{:016x}{:024x}", client, k);
    let body = json!({
        "run": {"id": id, "commit": {"sha": sha, "time": "2026-11-20T10:00:00Z", "subject": format!("storm {client}/{k}")},
                "branch": "main"},
        "files": [{"name": name, "content": content}],
    });
    (id, serde_json::to_vec(&body).unwrap())
}

async fn storm(args: &Args, name: &str, store: Store) {
    let bench = Bench::start(store.clone()).await;
    let token = bench.project("storm").await;
    let files: Vec<(String, String)> = FILES
        .iter()
        .map(|f| {
            let text =
                std::fs::read_to_string(format!("{}/../{f}", env!("CARGO_MANIFEST_DIR"))).unwrap();
            (f.rsplit('/').next().unwrap().to_string(), text)
        })
        .collect();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(300))
        .pool_max_idle_per_host(args.clients)
        .build()
        .unwrap();
    let tally = Arc::new(Mutex::new(Tally::default()));
    let until = Instant::now() + Duration::from_secs(args.seconds);
    let started = Instant::now();
    let mut clients = Vec::new();
    for c in 0..args.clients {
        let (http, tally, files, token) =
            (http.clone(), tally.clone(), files.clone(), token.clone());
        let url = format!("{}/api/v1/projects/storm/runs", bench.base);
        clients.push(tokio::spawn(async move {
            let mut k = 0;
            while Instant::now() < until {
                let (file_name, content) = &files[(c + k) % files.len()];
                let (id, body) = doc(c, k, content, file_name);
                k += 1;
                let t = Instant::now();
                let (outcome, refusals) = post_retrying(&http, &url, &token, &body).await;
                let mut t_ = tally.lock().unwrap();
                t_.unavailable += refusals.len();
                match outcome {
                    Outcome::Acknowledged(_) => {
                        t_.acknowledged.push(id);
                        t_.latencies_ms.push(t.elapsed().as_secs_f64() * 1e3);
                    }
                    Outcome::RefusedForGood => t_.unavailable_without_retry_after += 1,
                    Outcome::Failed(e) => t_.errors.push(e),
                }
            }
        }));
    }
    for c in clients {
        c.await.unwrap();
    }
    let storm_s = started.elapsed().as_secs_f64();
    let tally = std::mem::take(&mut *tally.lock().unwrap());

    // Every acknowledged run stored, and analyzed within `--settle` s.
    let settle_start = Instant::now();
    let ids: BTreeSet<Uuid> = tally.acknowledged.iter().copied().collect();
    let mut lost = 0;
    let mut pending: BTreeSet<Uuid> = ids.clone();
    while !pending.is_empty() && settle_start.elapsed() < Duration::from_secs(args.settle) {
        let mut still = BTreeSet::new();
        for id in &pending {
            let r = http
                .get(format!("{}/api/v1/runs/{id}/verdict", bench.base))
                .send()
                .await
                .unwrap();
            if r.status() == 404 {
                lost += 1;
                continue;
            }
            let v: Value = r.json().await.unwrap_or(Value::Null);
            if v["verdict"] == "pending" || v.is_null() {
                still.insert(*id);
            }
        }
        pending = still;
        if !pending.is_empty() {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    let settled_s = settle_start.elapsed().as_secs_f64();
    let mut lat = tally.latencies_ms.clone();
    lat.sort_by(f64::total_cmp);
    let q = |p: f64| {
        if lat.is_empty() {
            0.0
        } else {
            lat[((lat.len() - 1) as f64 * p).round() as usize]
        }
    };
    println!(
        "{name:8} | {:>4} clients {:>4.0} s | acknowledged {:>5} ({:>5.1}/s) | 503 {:>5} (without Retry-After {}) | errors {:>3} | lost {} | ms p50 {:>7.0} p90 {:>7.0} p99 {:>7.0} max {:>7.0} | analyzed: {} of {} within {:.1} s after the storm",
        args.clients,
        storm_s,
        ids.len(),
        ids.len() as f64 / storm_s,
        tally.unavailable,
        tally.unavailable_without_retry_after,
        tally.errors.len(),
        lost,
        q(0.5),
        q(0.9),
        q(0.99),
        lat.last().copied().unwrap_or(0.0),
        ids.len() - pending.len() - lost,
        ids.len(),
        settled_s,
    );
    for e in tally.errors.iter().take(5) {
        println!("  error: {e}");
    }
    println!("{name}: issue 12's targets");
    support::print_target(
        name,
        "backpressure: 503 + Retry-After, none lost",
        &format!(
            "{} refusals ({} without Retry-After), {} lost, {} errors, p99 {:.0} ms, {} of {} \
             acknowledged runs analyzed {:.1} s after {} clients for {:.0} s",
            tally.unavailable,
            tally.unavailable_without_retry_after,
            lost,
            tally.errors.len(),
            q(0.99),
            ids.len() - pending.len() - lost,
            ids.len(),
            settled_s,
            args.clients,
            storm_s,
        ),
        tally.unavailable_without_retry_after == 0
            && lost == 0
            && tally.errors.is_empty()
            && pending.is_empty(),
    );
    drop(bench);
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    println!(
        "benchtrail upload storm: {} CPUs, {} profile, {} clients for {} s (server defaults: 4 inline analyses, 2 workers)",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        if cfg!(debug_assertions) { "debug" } else { "optimized" },
        args.clients,
        args.seconds
    );
    if !args.no_sqlite {
        let dir = tempfile::tempdir().expect("creating a temporary folder");
        let file = dir.path().join("benchtrail.db");
        let store = Store::connect(&format!("sqlite://{}", file.display()))
            .await
            .unwrap();
        storm(&args, "sqlite", store).await;
    }
    match args.database_url.as_deref().filter(|u| !u.is_empty()) {
        Some(admin_url) => {
            let (url, database) = create_postgres(admin_url).await;
            let store = Store::connect(&url).await.unwrap();
            let args2 = args.clone();
            let outcome = tokio::spawn(async move { storm(&args2, "postgres", store).await }).await;
            drop_postgres(admin_url, &database).await;
            if let Err(e) = outcome {
                std::panic::resume_unwind(e.into_panic());
            }
        }
        None => println!("BENCHTRAIL_BENCH_DATABASE_URL is not set: SQLite only"),
    }
}
