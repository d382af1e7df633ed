//! Ingest of benchtrail side by side with the peer, Conbench 2023.4.10 (issue 12's "ingest
//! ≥ 10× Conbench", "8 clients ≥ 4× one client on Postgres" and "server RSS ≤ 150 MB under the
//! 8-client load"), on the very data the peer's harness sends.
//!
//! ```sh
//! # the peer harness's data set: 2,000 results = 100 commits × 5 cells × 4 metrics, 3 values each
//! python3 ../shared/tools/perf/conbench_ingest.py --dump-bodies /tmp/bodies.jsonl -n 2000 -c 100
//! BENCHTRAIL_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
//!     cargo bench -p benchtrail-server --bench peer_ingest -- --bodies /tmp/bodies.jsonl
//! ```
//! `server/benches/peer_side_by_side.sh` runs it in turn with the peer harness (A B A B).
//!
//! **The data.** Each line of `--bodies` is one Conbench `POST /api/benchmarks/` body: one
//! (commit, cell, metric) with `stats.data` holding the values of 3 repeated runs. benchtrail
//! gets the same values as one upload per (commit, repetition), holding the commit's cells
//! (model, ISL/OSL, concurrency) as results in benchtrail's own format with the 4 metrics each:
//! `ttft` p50, `itl` p50 and `e2el` p99 (seconds × 1000 → ms) and `output_throughput` (tok/s).
//! So 2,000 results × 3 values = 300 uploads × 20 values = 6,000 values for both services.
//! Each upload names its commit's parent (the harness seeds Conbench's commit table with the same
//! linear history before its clock starts; benchtrail takes the commit in the upload, inside the
//! timed window) and its `repeat_index`, as `benchtrail upload --repeat-index` does.
//!
//! **The server** is the release `benchtrail-server` binary in its own process, with its
//! defaults (inline analyses, analysis workers, queue bound), on a new SQLite file and, with
//! `BENCHTRAIL_BENCH_DATABASE_URL`, on a new Postgres database dropped afterwards. Each
//! repetition uploads into a new project, so every repetition starts from an empty history as
//! the harness's repetitions start from emptied tables.
//!
//! **The clients**, as the peer harness's: `--clients` tasks, each with its own keep-alive
//! connection, take whole commits from a shared queue and upload that commit's repetitions one
//! after the other; bodies are encoded before the clock starts. A 503 is retried after its
//! `Retry-After`, as `benchtrail upload` does.
//!
//! **Printed per repetition**: values stored per second (values acknowledged ÷ wall time from
//! the clients' start to the last answer), the upload round trip's p50/p99, 503s and errors,
//! the time until every acknowledged run has its verdict (uploads analysed after the queue took
//! them), and the server process's CPU seconds, RSS after the repetition and peak RSS
//! (`VmHWM`), from `/proc/<pid>/`.

mod support;

use clap::Parser;
use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{create_postgres, drop_postgres, post_retrying, Bench, Outcome};
use uuid::Uuid;

#[derive(Parser, Debug, Clone)]
#[command(about = "Ingest of benchtrail on the peer harness's data set")]
struct Args {
    /// The peer harness's request bodies (JSON Lines, `conbench_ingest.py --dump-bodies`).
    #[arg(long)]
    bodies: std::path::PathBuf,
    /// Concurrent clients, one measurement each, in this order (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "8")]
    clients: Vec<usize>,
    /// Repetitions of each measurement (each into a new project).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Postgres admin URL: also run on a new database created there and dropped afterwards.
    #[arg(long, env = "BENCHTRAIL_BENCH_DATABASE_URL")]
    database_url: Option<String>,
    /// Skip SQLite (with --database-url: Postgres only).
    #[arg(long)]
    no_sqlite: bool,
    /// Also write every repetition's figures here, as a JSON list.
    #[arg(long)]
    json_out: Option<std::path::PathBuf>,
    /// Seconds to wait for every acknowledged run's verdict after a repetition.
    #[arg(long, default_value_t = 120)]
    settle: u64,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// One (commit, repetition) upload, encoded.
struct Upload {
    body: Vec<u8>,
    values: usize,
}

/// The peer's bodies as benchtrail uploads: per commit (in the order of the file), one upload
/// per repetition (`stats.data[r]`).
fn uploads_by_commit(path: &std::path::Path) -> Vec<Vec<Upload>> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("--bodies {}: {e}", path.display()));
    // commit sha → (first timestamp, cell key → (cell tags, metric name → stats.data))
    type Cells = BTreeMap<String, (Value, BTreeMap<String, Vec<f64>>)>;
    let mut commits: Vec<(String, String, Cells)> = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let body: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        let sha = body["github"]["commit"].as_str().expect("github.commit");
        if commits.last().is_none_or(|c| c.0 != sha) {
            let time = body["timestamp"].as_str().expect("timestamp").to_string();
            commits.push((sha.to_string(), time, BTreeMap::new()));
        }
        let mut tags = body["tags"].clone();
        let metric = tags["name"].as_str().expect("tags.name").to_string();
        tags.as_object_mut().unwrap().remove("name");
        let data: Vec<f64> = serde_json::from_value(body["stats"]["data"].clone()).unwrap();
        let cells = &mut commits.last_mut().unwrap().2;
        cells
            .entry(tags.to_string())
            .or_insert_with(|| (tags, BTreeMap::new()))
            .1
            .insert(metric, data);
    }
    let mut out = Vec::new();
    for (k, (sha, time, cells)) in commits.iter().enumerate() {
        let parents: Vec<&str> = if k == 0 {
            vec![]
        } else {
            vec![&commits[k - 1].0]
        };
        let repetitions = cells
            .values()
            .map(|c| c.1.values().map(Vec::len).min().unwrap_or(0))
            .min()
            .unwrap_or(0);
        let mut per_commit = Vec::new();
        for r in 0..repetitions {
            let mut values = 0;
            let results: Vec<Value> = cells
                .values()
                .map(|(tags, metrics)| {
                    // The harness writes ISL, OSL and concurrency as strings.
                    let number = |key: &str| -> u64 {
                        tags[key].as_str().and_then(|v| v.parse().ok()).expect(key)
                    };
                    let metrics: Vec<Value> = metrics
                        .iter()
                        .map(|(name, data)| {
                            values += 1;
                            metric(name, data[r])
                        })
                        .collect();
                    json!({
                        "cell": {
                            "input_len": number("isl"),
                            "output_len": number("osl"),
                            "load": {"max_concurrency": number("concurrency")},
                            "dataset": "random-ids",
                        },
                        "configuration": {"model": {"name": tags["model"]}},
                        "metrics": metrics,
                    })
                })
                .collect();
            let body = json!({
                "run": {
                    "commit": {"sha": sha, "parents": parents, "time": time},
                    "branch": "main",
                    "repeat_index": r,
                    "repeats_expected": repetitions,
                },
                "configuration": {
                    "hardware": {"accelerator": "NVIDIA H100 80GB HBM3", "accelerator_count": 1},
                    "engine": {"name": "vllm"},
                    "parallelism": {"tensor_parallel_size": 1},
                },
                "results": results,
            });
            per_commit.push(Upload {
                body: serde_json::to_vec(&body).unwrap(),
                values,
            });
        }
        out.push(per_commit);
    }
    out
}

/// A Conbench metric (`tags.name`, seconds or `i/s`) as a benchtrail metric value.
fn metric(name: &str, value: f64) -> Value {
    let (name, stat, unit, value) = match name {
        "ttft_p50" => ("ttft", "p50", "ms", value * 1e3),
        "itl_p50" => ("itl", "p50", "ms", value * 1e3),
        "e2e_latency_p99" => ("e2el", "p99", "ms", value * 1e3),
        "output_throughput" => ("output_throughput", "value", "tok/s", value),
        other => panic!("no benchtrail metric for the peer's `{other}`"),
    };
    json!({"name": name, "stat": stat, "unit": unit, "value": value, "n": 200})
}

/// What the clients of one repetition saw.
#[derive(Default)]
struct Tally {
    acknowledged: Vec<Uuid>,
    values: usize,
    latencies_ms: Vec<f64>,
    unavailable: usize,
    /// The first 503's problem detail (why the server refused).
    unavailable_detail: Option<String>,
    errors: Vec<String>,
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// One repetition: `clients` clients upload every commit into project `slug`.
async fn repetition(
    server: &Bench,
    commits: Arc<Vec<Vec<Upload>>>,
    slug: &str,
    clients: usize,
    settle: u64,
) -> (String, Value) {
    let token = server.project(slug).await;
    // Every repetition meets an idle server: the background work (change-point scans) the
    // previous one asked for is done, so its CPU is not counted here.
    server.wait_idle(Duration::from_secs(120)).await;
    let queue = Arc::new(Mutex::new((0..commits.len()).collect::<VecDeque<_>>()));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let url = format!("{}/api/v1/projects/{slug}/runs", server.base);
    let cpu0 = server.cpu_seconds();
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (queue, tally, commits, url, token) = (
            queue.clone(),
            tally.clone(),
            commits.clone(),
            url.clone(),
            token.clone(),
        );
        tasks.push(tokio::spawn(async move {
            // Its own connection, kept alive, as each of the peer harness's threads has.
            let http = reqwest::Client::builder()
                .pool_max_idle_per_host(1)
                .timeout(Duration::from_secs(300))
                .build()
                .unwrap();
            loop {
                let Some(k) = queue.lock().unwrap().pop_front() else {
                    break;
                };
                for upload in &commits[k] {
                    let t = Instant::now();
                    let (outcome, refusals) =
                        post_retrying(&http, &url, &token, &upload.body).await;
                    let mut t_ = tally.lock().unwrap();
                    t_.unavailable += refusals.len();
                    if let Some(first) = refusals.first() {
                        t_.unavailable_detail
                            .get_or_insert_with(|| first["detail"].to_string());
                    }
                    match outcome {
                        Outcome::Acknowledged(receipt) => {
                            let id = receipt["run_id"]
                                .as_str()
                                .and_then(|s| s.parse().ok())
                                .expect("the receipt's run_id");
                            t_.acknowledged.push(id);
                            t_.values += upload.values;
                            t_.latencies_ms.push(t.elapsed().as_secs_f64() * 1e3);
                        }
                        Outcome::RefusedForGood => {
                            t_.errors.push("503 without Retry-After".into());
                        }
                        Outcome::Failed(e) => t_.errors.push(e),
                    }
                }
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let wall = started.elapsed().as_secs_f64();
    let tally = std::mem::take(&mut *tally.lock().unwrap());
    let settled = server.verdicts_settled(&tally.acknowledged, settle).await;
    let cpu = server.cpu_seconds() - cpu0;
    let mut lat = tally.latencies_ms;
    lat.sort_by(f64::total_cmp);
    let (rss, peak) = server.rss_mib();
    let mut line = format!(
        "{clients:>2} clients | {:>5} values in {wall:>6.2} s = {:>6.0} values/s | upload ms p50 {:>6.1} p99 {:>6.1} | 503 {:>3} | errors {} | all verdicts {} | server CPU {cpu:>5.1} s | RSS {rss:>4.0} MiB (peak {peak:.0})",
        tally.values,
        tally.values as f64 / wall,
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        tally.unavailable,
        tally.errors.len(),
        match settled {
            Some(s) => format!("{s:>4.1} s later"),
            None => format!("not within {settle} s"),
        },
    );
    for e in tally.errors.iter().take(3) {
        line.push_str(&format!("\n    error: {e}"));
    }
    if let Some(detail) = &tally.unavailable_detail {
        line.push_str(&format!("\n    first 503: {detail}"));
    }
    let figures = json!({
        "clients": clients, "values": tally.values, "wall_s": wall,
        "values_per_s": tally.values as f64 / wall,
        "upload_ms_p50": percentile(&lat, 0.5), "upload_ms_p99": percentile(&lat, 0.99),
        "unavailable": tally.unavailable, "errors": tally.errors.len(),
        "verdicts_settled_s": settled, "server_cpu_s": cpu,
        "server_rss_mib": rss, "server_peak_rss_mib": peak,
    });
    (line, figures)
}

/// Every repetition on one store, against one server process; appends the figures to `out`.
async fn measure(
    args: &Args,
    store: &str,
    database_url: &str,
    commits: Arc<Vec<Vec<Upload>>>,
    out: &mut Vec<Value>,
) {
    let log = std::env::temp_dir().join(format!("benchtrail-peer-ingest-{store}.log"));
    let server = Bench::spawn_binary(database_url, &log);
    println!(
        "{store}: server pid {}, {}, log {}",
        server.pid(),
        server.base,
        log.display()
    );
    for (k, &clients) in args.clients.iter().enumerate() {
        for rep in 0..args.reps {
            let slug = format!("peer-{k}-c{clients}-r{rep}");
            let (line, mut figures) =
                repetition(&server, commits.clone(), &slug, clients, args.settle).await;
            println!("{store}: rep {} | {line}", rep + 1);
            figures["store"] = json!(store);
            figures["rep"] = json!(rep + 1);
            out.push(figures);
        }
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    let (rss, peak) = server.rss_mib();
    println!("{store}: at rest 5 s after the last repetition: RSS {rss:.0} MiB (peak {peak:.0})");
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let commits = Arc::new(uploads_by_commit(&args.bodies));
    let uploads: usize = commits.iter().map(Vec::len).sum();
    let values: usize = commits.iter().flatten().map(|u| u.values).sum();
    println!(
        "peer ingest: {} commits, {uploads} uploads, {values} values per repetition; {} CPUs; {} build",
        commits.len(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        if cfg!(debug_assertions) { "debug" } else { "release" },
    );
    let mut out = Vec::new();
    if !args.no_sqlite {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/peer.db", dir.path().display());
        measure(&args, "sqlite", &url, commits.clone(), &mut out).await;
    }
    if let Some(admin) = args.database_url.as_deref().filter(|u| !u.is_empty()) {
        let (url, name) = create_postgres(admin).await;
        measure(&args, "postgres", &url, commits.clone(), &mut out).await;
        drop_postgres(admin, &name).await;
    }
    if let Some(path) = &args.json_out {
        std::fs::write(path, serde_json::to_vec_pretty(&out).unwrap())
            .unwrap_or_else(|e| panic!("--json-out {}: {e}", path.display()));
    }
}
