//! Load benchmark of the upload path and the analyses around it, over real HTTP on a loopback
//! port, on a temporary SQLite file and (when `BENCHTRAIL_BENCH_DATABASE_URL` names a Postgres
//! admin connection) on a fresh Postgres database that is dropped afterwards.
//!
//! ```sh
//! cargo bench -p benchtrail-server --bench upload_analysis
//! cargo bench -p benchtrail-server --bench upload_analysis -- --commits 120 --repeats 3
//! BENCHTRAIL_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
//!     cargo bench -p benchtrail-server --bench upload_analysis
//! ```
//!
//! Scenarios (each upload's wall time is the HTTP round trip: ingest, storage and the analysis
//! that runs before the response):
//! 1. `upload fp8`: a synthetic history in benchtrail's own format, `--commits` commits ×
//!    3 workload cells (one result each per upload) × `--repeats` uploads per commit, with the
//!    metrics and noise of the engine's FP8 KV-cache scenario and a 5 % regression step.
//! 2. `upload goodput`: the real vLLM `--save-detailed` files of `examples/history/` as a
//!    history of `--goodput-commits` commits (per-request samples are decoded for the
//!    baseline window).
//! 3. `exclusion` / `settings`: `POST /api/v1/runs/{id}/exclusion` on an early run and
//!    `PUT /api/v1/projects/{p}/settings` (min_effect_pct): each recomputes the whole project.
//! 4. `GET alerts` / `GET verdict` latencies.
//!
//! Every upload on the default branch also starts a background change-point scan; its CPU time
//! shows up in the `cpu` column (the whole process's CPU time during the scenario: server,
//! background tasks and client) and in the time the process needs to become idle afterwards.
//! Speed targets belong here, never in timed tests.

use benchtrail_core::regression::synthetic::{
    fp8_kv_cache, fp8_result_json, history, Fp8Candidate, Noise, FP8_CONCURRENCY,
};
use benchtrail_core::regression::SeriesInput;
mod support;

use benchtrail_server::storage::Store;
use clap::Parser;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

use support::{cpu_seconds, create_postgres, drain, drop_postgres, Bench, ADMIN_TOKEN};

/// The engine's FP8 scenario seed (`core/tests/regression_engine.rs`).
const FP8_SEED: u64 = 0x0066_7038_6b76;

/// The `--goodput` flags the example files were made with.
const GOODPUT: &str = "--goodput ttft:60 tpot:12 e2el:1800";
const GOODPUT_BASELINES: &[&str] = &[
    "examples/history/goodput_baseline_s11_c4.json",
    "examples/history/goodput_baseline_s12_c4.json",
    "examples/history/goodput_baseline_s13_c4.json",
];
const GOODPUT_CANDIDATE: &str = "examples/history/goodput_candidate_s21_c4.json";

#[derive(Parser, Debug, Clone)]
#[command(about = "Load benchmark of benchtrail uploads, recomputations and reads")]
struct Args {
    /// Commits of the synthetic FP8 history.
    #[arg(long, env = "BENCHTRAIL_BENCH_COMMITS", default_value_t = 60)]
    commits: usize,
    /// Uploads (repeats) per commit of the synthetic history; each holds the 3 cells.
    #[arg(long, env = "BENCHTRAIL_BENCH_REPEATS", default_value_t = 3)]
    repeats: usize,
    /// Commit number at which the synthetic history steps (default: two thirds in).
    #[arg(long, env = "BENCHTRAIL_BENCH_STEP_AT")]
    step_at: Option<usize>,
    /// Size of the step, in percent, in the worse direction of each metric.
    #[arg(long, env = "BENCHTRAIL_BENCH_STEP_PCT", default_value_t = 5.0)]
    step_pct: f64,
    /// Commits of the real vLLM goodput history (the last quarter uses the candidate file).
    #[arg(long, env = "BENCHTRAIL_BENCH_GOODPUT_COMMITS", default_value_t = 12)]
    goodput_commits: usize,
    /// Uploads per commit of the goodput history (cycling through the baseline files).
    #[arg(long, env = "BENCHTRAIL_BENCH_GOODPUT_REPEATS", default_value_t = 1)]
    goodput_repeats: usize,
    /// Exclusions and settings changes (each recomputes the project) per project.
    #[arg(long, env = "BENCHTRAIL_BENCH_RECOMPUTES", default_value_t = 3)]
    recomputes: usize,
    /// Requests of each read endpoint.
    #[arg(long, env = "BENCHTRAIL_BENCH_READS", default_value_t = 50)]
    reads: usize,
    /// Seed of the synthetic values.
    #[arg(long, env = "BENCHTRAIL_BENCH_SEED", default_value_t = FP8_SEED)]
    seed: u64,
    /// Postgres admin URL (e.g. postgres://postgres@127.0.0.1:5432/postgres): also run on a
    /// fresh database created there and dropped afterwards.
    #[arg(long, env = "BENCHTRAIL_BENCH_DATABASE_URL")]
    database_url: Option<String>,
    /// Skip SQLite (with --database-url: Postgres only).
    #[arg(long)]
    no_sqlite: bool,
    /// Longest wait, in seconds, for background work (change-point scans) to finish between
    /// scenarios; 0 does not wait.
    #[arg(long, env = "BENCHTRAIL_BENCH_DRAIN_SECS", default_value_t = 120)]
    drain_secs: u64,
    /// Turn the background change-point scan off in both projects (isolates the analysis
    /// that runs before each response from the scans that run after it).
    #[arg(long)]
    no_change_points: bool,
    /// Keep the SQLite file (its path is printed) for inspection with `sqlite3`.
    #[arg(long)]
    keep_sqlite: bool,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// One measured scenario.
struct Measured {
    scenario: String,
    database: &'static str,
    ms: Vec<f64>,
    /// Process CPU seconds while the scenario ran.
    cpu_s: f64,
    /// Wall seconds of the whole scenario.
    wall_s: f64,
}

/// Upload times in history order, for the growth report.
struct Growth {
    scenario: String,
    database: &'static str,
    /// (commit number, ms) per upload.
    uploads: Vec<(usize, f64)>,
    commits: usize,
    /// Seconds until the process was idle after the last upload, and the CPU seconds spent.
    drain: (f64, f64),
}

#[derive(Default)]
struct Report {
    rows: Vec<Measured>,
    growth: Vec<Growth>,
    notes: Vec<String>,
}

impl Bench {
    /// Uploads prepared documents in order; returns (commit number, ms) and the run ids.
    async fn uploads(
        &self,
        slug: &str,
        token: &str,
        docs: Vec<(usize, Vec<u8>)>,
    ) -> (Vec<(usize, f64)>, Vec<(usize, String)>) {
        let mut times = Vec::new();
        let mut runs = Vec::new();
        let path = format!("/api/v1/projects/{slug}/runs");
        for (commit, body) in docs {
            let (status, receipt, ms) = self
                .send(reqwest::Method::POST, &path, token, Some(body))
                .await;
            assert_eq!(status, 201, "upload of commit {commit}: {receipt}");
            times.push((commit, ms));
            runs.push((commit, receipt["run_id"].as_str().unwrap().to_string()));
        }
        (times, runs)
    }
}

/// A realistic-looking SHA for commit `i` (alert messages quote its first 12 digits).
fn commit_sha(i: usize) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(format!("benchtrail bench commit {i}")))[..40].to_string()
}

fn commit_time(i: usize) -> String {
    let t = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap()
        + chrono::Duration::hours(i as i64);
    t.to_utc()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Mean and run-to-run CV of a series' baseline runs in the engine's FP8 scenario.
fn mean_cv(s: &SeriesInput) -> (f64, f64) {
    let v: Vec<f64> = s
        .history
        .iter()
        .flat_map(|c| c.runs.iter().map(|r| r.value))
        .collect();
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
    (mean, var.sqrt() / mean)
}

/// The synthetic history's uploads, in order: (commit number, JSON body). Each series is the
/// FP8 scenario's baseline (its mean and run-to-run CV) over `commits` commits of `repeats`
/// runs, stepping by `step_pct` in its worse direction from commit `step_at` on.
fn fp8_uploads(args: &Args) -> Vec<(usize, Vec<u8>)> {
    let groups = fp8_kv_cache(args.seed, Fp8Candidate::BaselineLike);
    let step_at = args.step_at.unwrap_or(args.commits * 2 / 3);
    let mut noise = Noise::new(args.seed ^ 0x5eed);
    // values[cell][series][commit][repeat]
    let values: Vec<Vec<Vec<Vec<f64>>>> = groups
        .iter()
        .enumerate()
        .map(|(cell, g)| {
            g.series
                .iter()
                .map(|s| {
                    let (mean, cv) = mean_cv(s);
                    let worse = if s.metric.contains("throughput") {
                        -args.step_pct
                    } else {
                        args.step_pct
                    };
                    history(
                        &mut noise,
                        cell,
                        args.commits,
                        args.repeats,
                        mean,
                        cv,
                        Some((step_at, worse)),
                    )
                    .into_iter()
                    .map(|c| c.runs.iter().map(|r| r.value).collect())
                    .collect()
                })
                .collect()
        })
        .collect();
    // One upload per (commit, repeat), each with the three cells.
    (0..args.commits)
        .flat_map(|i| (0..args.repeats).map(move |r| (i, r)))
        .map(|(i, r)| {
            let results: Vec<Value> = groups
                .iter()
                .zip(FP8_CONCURRENCY)
                .enumerate()
                .map(|(cell, (g, c))| fp8_result_json(g, c, |k| values[cell][k][i][r]))
                .collect();
            let doc = json!({
                "run": {"commit": {"sha": commit_sha(i), "time": commit_time(i)}, "branch": "main"},
                "results": results,
            });
            (i, serde_json::to_vec(&doc).unwrap())
        })
        .collect()
}

fn repo_file(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// The goodput history's uploads: the baseline files cycled, the candidate file for the last
/// quarter of the commits.
fn goodput_uploads(args: &Args) -> Vec<(usize, Vec<u8>)> {
    let files: Vec<(&str, String)> = GOODPUT_BASELINES
        .iter()
        .chain([&GOODPUT_CANDIDATE])
        .map(|p| (*p, repo_file(p)))
        .collect();
    let candidate_from = args.goodput_commits - args.goodput_commits / 4;
    let mut out = Vec::new();
    for i in 0..args.goodput_commits {
        for r in 0..args.goodput_repeats {
            let (path, content) = if i >= candidate_from {
                &files[3]
            } else {
                &files[(i * args.goodput_repeats + r) % GOODPUT_BASELINES.len()]
            };
            let doc = json!({
                "run": {"commit": {"sha": commit_sha(1000 + i), "time": commit_time(i)}, "branch": "main"},
                "configuration": {"benchmark": {"command": format!("vllm bench serve --model mock-llm {GOODPUT} --save-detailed")}},
                "files": [{"name": path.rsplit('/').next().unwrap(), "content": content}],
            });
            out.push((i, serde_json::to_vec(&doc).unwrap()));
        }
    }
    out
}

/// Alerts of a project by kind and status, as one line.
async fn alert_counts(bench: &Bench, slug: &str) -> String {
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    let mut cursor = String::new();
    loop {
        let page = bench
            .admin(
                reqwest::Method::GET,
                &format!("/api/v1/projects/{slug}/alerts?limit=500{cursor}"),
                None,
            )
            .await;
        for a in page["items"].as_array().unwrap() {
            *counts
                .entry(format!(
                    "{}/{}",
                    a["kind"].as_str().unwrap_or("?"),
                    a["status"].as_str().unwrap_or("?")
                ))
                .or_default() += 1;
        }
        match page["next_cursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => break,
        }
    }
    let total: usize = counts.values().sum();
    let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!("{total} alerts ({})", parts.join(", "))
}

/// Process CPU and wall time since a scenario started.
struct Clock {
    cpu: f64,
    wall: Instant,
}

impl Clock {
    fn start() -> Clock {
        Clock {
            cpu: cpu_seconds(),
            wall: Instant::now(),
        }
    }

    fn row(self, scenario: &str, database: &'static str, ms: Vec<f64>) -> Measured {
        Measured {
            scenario: scenario.to_string(),
            database,
            ms,
            cpu_s: cpu_seconds() - self.cpu,
            wall_s: self.wall.elapsed().as_secs_f64(),
        }
    }
}

/// Every scenario on one store.
async fn scenarios(args: &Args, database: &'static str, store: Store, report: &mut Report) {
    let bench = Bench::start(store).await;
    let limit = Duration::from_secs(args.drain_secs);
    let get = reqwest::Method::GET;

    // 1. The synthetic FP8 history.
    let fp8_token = bench.project("fp8").await;
    let change_points = !args.no_change_points;
    if !change_points {
        bench
            .configure("fp8", |s| {
                s["detection"]["engine"]["change_points"]["enabled"] = json!(false)
            })
            .await;
    }
    let docs = fp8_uploads(args);
    let label = format!(
        "upload fp8 ({} commits x {} repeats, 3 cells)",
        args.commits, args.repeats
    );
    let clock = Clock::start();
    let fp8 = bench.uploads("fp8", &fp8_token, docs).await;
    report
        .rows
        .push(clock.row(&label, database, fp8.0.iter().map(|t| t.1).collect()));
    eprintln!("{database}: fp8 uploads done");
    let drained = drain(limit).await;
    report.growth.push(Growth {
        scenario: label,
        database,
        uploads: fp8.0.clone(),
        commits: args.commits,
        drain: drained,
    });
    report.notes.push(format!(
        "{database}: fp8 project after uploads: {}",
        alert_counts(&bench, "fp8").await
    ));

    // 2. The real per-request history.
    let gp_token = bench.project("goodput").await;
    bench
        .configure("goodput", |s| {
            s["slo_profiles"] =
                json!([{"name": "file", "ttft_ms": 60, "tpot_ms": 12, "e2el_ms": 1800}]);
            s["detection"]["engine"]["change_points"]["enabled"] = json!(change_points);
        })
        .await;
    let docs = goodput_uploads(args);
    let label = format!(
        "upload goodput ({} commits x {}, vLLM --save-detailed)",
        args.goodput_commits, args.goodput_repeats
    );
    let clock = Clock::start();
    let gp = bench.uploads("goodput", &gp_token, docs).await;
    report
        .rows
        .push(clock.row(&label, database, gp.0.iter().map(|t| t.1).collect()));
    eprintln!("{database}: goodput uploads done");
    let drained = drain(limit).await;
    report.growth.push(Growth {
        scenario: label,
        database,
        uploads: gp.0.clone(),
        commits: args.goodput_commits,
        drain: drained,
    });
    report.notes.push(format!(
        "{database}: goodput project after uploads: {}",
        alert_counts(&bench, "goodput").await
    ));

    // 3. Recomputations: exclusions of early runs and settings changes.
    for (slug, runs) in [("fp8", &fp8.1), ("goodput", &gp.1)] {
        let label = format!("exclusion -> recompute {slug} ({} runs)", runs.len());
        let mut ms = Vec::new();
        let clock = Clock::start();
        for k in 0..args.recomputes {
            // The first run of commit 1 + k: early, so most baselines change.
            let run = &runs.iter().find(|(c, _)| *c == 1 + k).unwrap().1;
            let body = serde_json::to_vec(&json!({"reason": "benchmark"})).unwrap();
            let (status, value, took) = bench
                .send(
                    reqwest::Method::POST,
                    &format!("/api/v1/runs/{run}/exclusion"),
                    ADMIN_TOKEN,
                    Some(body),
                )
                .await;
            assert_eq!(status, 200, "exclusion: {value}");
            ms.push(took);
            drain(limit).await;
        }
        report.rows.push(clock.row(&label, database, ms));

        let label = format!("settings -> recompute {slug} ({} runs)", runs.len());
        let path = format!("/api/v1/projects/{slug}/settings");
        let mut ms = Vec::new();
        let clock = Clock::start();
        for k in 0..args.recomputes {
            let mut settings = bench.admin(get.clone(), &path, None).await;
            settings["detection"]["engine"]["min_effect_pct"] =
                json!(if k % 2 == 0 { 3.0 } else { 2.0 });
            let body = serde_json::to_vec(&settings).unwrap();
            let (status, value, took) = bench
                .send(reqwest::Method::PUT, &path, ADMIN_TOKEN, Some(body))
                .await;
            assert_eq!(status, 200, "settings: {value}");
            ms.push(took);
            drain(limit).await;
        }
        report.rows.push(clock.row(&label, database, ms));
    }

    eprintln!("{database}: recomputations done");

    // 4. Reads.
    for (slug, runs) in [("fp8", &fp8.1), ("goodput", &gp.1)] {
        let path = format!("/api/v1/projects/{slug}/alerts?limit=100");
        let label = format!("GET alerts?limit=100 {slug}");
        let clock = Clock::start();
        let mut ms = Vec::new();
        for _ in 0..args.reads {
            let (status, _, took) = bench.send(get.clone(), &path, ADMIN_TOKEN, None).await;
            assert_eq!(status, 200);
            ms.push(took);
        }
        report.rows.push(clock.row(&label, database, ms));
        let label = format!("GET runs/{{id}}/verdict {slug}");
        let clock = Clock::start();
        let mut ms = Vec::new();
        for k in 0..args.reads {
            let run = &runs[(k * 7919) % runs.len()].1;
            let (status, body, took) = bench
                .send(
                    get.clone(),
                    &format!("/api/v1/runs/{run}/verdict"),
                    ADMIN_TOKEN,
                    None,
                )
                .await;
            assert_eq!(status, 200, "{body}");
            ms.push(took);
        }
        report.rows.push(clock.row(&label, database, ms));
    }
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn print_report(report: &Report) {
    let width = report
        .rows
        .iter()
        .map(|r| r.scenario.len())
        .max()
        .unwrap_or(8)
        .max(8);
    println!();
    println!(
        "{:<width$}  {:<8}  {:>4}  {:>9}  {:>9}  {:>9}  {:>9}  {:>8}  {:>8}",
        "scenario", "database", "n", "p50 ms", "p95 ms", "max ms", "mean ms", "wall s", "cpu s"
    );
    for r in &report.rows {
        let mut s = r.ms.clone();
        s.sort_by(f64::total_cmp);
        println!(
            "{:<width$}  {:<8}  {:>4}  {:>9.1}  {:>9.1}  {:>9.1}  {:>9.1}  {:>8.1}  {:>8.1}",
            r.scenario,
            r.database,
            s.len(),
            percentile(&s, 50.0),
            percentile(&s, 95.0),
            s.last().copied().unwrap_or(f64::NAN),
            mean(&s),
            r.wall_s,
            r.cpu_s,
        );
    }
    println!();
    println!("Growth with history length (mean upload ms by position in the history):");
    for g in &report.growth {
        let ms: Vec<f64> = g.uploads.iter().map(|u| u.1).collect();
        let k = 10.min(ms.len());
        let first = mean(&ms[..k]);
        let last = mean(&ms[ms.len() - k..]);
        println!(
            "  {} [{}]: first {k} uploads {first:.1} ms, last {k} {last:.1} ms (x{:.2}); \
             idle {:.1} s after the last upload ({:.1} s CPU meanwhile)",
            g.scenario,
            g.database,
            last / first,
            g.drain.0,
            g.drain.1
        );
        // Fifths of the history by commit number.
        let buckets = 5.min(g.commits.max(1));
        let parts: Vec<String> = (0..buckets)
            .map(|b| {
                let lo = b * g.commits / buckets;
                let hi = (b + 1) * g.commits / buckets;
                let v: Vec<f64> = g
                    .uploads
                    .iter()
                    .filter(|u| u.0 >= lo && u.0 < hi)
                    .map(|u| u.1)
                    .collect();
                format!("commits {lo}-{}: {:.1}", hi - 1, mean(&v))
            })
            .collect();
        println!("    {}", parts.join(" | "));
    }
    println!(
        "(ms: HTTP round trip per request; wall s / cpu s: the whole scenario, cpu being this \
         process's CPU time (client, server, background scans; not the Postgres server's))"
    );
    println!();
    for n in &report.notes {
        println!("{n}");
    }
}

/// Runs every scenario on `store` in a task (so a panic still lets the caller clean up).
async fn run_on(args: &Args, database: &'static str, store: Store) -> Report {
    let args = args.clone();
    let handle = tokio::spawn(async move {
        let mut report = Report::default();
        scenarios(&args, database, store.clone(), &mut report).await;
        // Background scans may still hold connections; closing waits for them.
        store.close().await;
        report
    });
    match handle.await {
        Ok(report) => report,
        Err(e) => match e.try_into_panic() {
            Ok(panic) => {
                eprintln!("benchmark failed on {database}");
                std::panic::resume_unwind(panic)
            }
            Err(e) => panic!("benchmark on {database} did not finish: {e}"),
        },
    }
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    // `RUST_LOG` shows the server's logs (e.g. `sqlx::query=debug`: every statement and its
    // time) on stderr.
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    assert!(args.commits >= 4 && args.repeats >= 1 && args.goodput_commits >= 4);
    assert!(args.recomputes + 1 < args.commits.min(args.goodput_commits));
    println!(
        "benchtrail upload/analysis benchmark: {} CPUs, {} profile",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "optimized"
        }
    );
    println!(
        "fp8: {} commits x {} uploads x 3 cells, {} % step at commit {}; goodput: {} commits x {}; \
         {} recomputations and {} reads each; change-point scans {}",
        args.commits,
        args.repeats,
        args.step_pct,
        args.step_at.unwrap_or(args.commits * 2 / 3),
        args.goodput_commits,
        args.goodput_repeats,
        args.recomputes,
        args.reads,
        if args.no_change_points { "off" } else { "on" },
    );
    let mut report = Report::default();
    let mut merge = |r: Report| {
        report.rows.extend(r.rows);
        report.growth.extend(r.growth);
        report.notes.extend(r.notes);
    };
    if !args.no_sqlite {
        let dir = tempfile::tempdir().expect("creating a temporary folder");
        let file = dir.path().join("benchtrail.db");
        let store = Store::connect(&format!("sqlite://{}", file.display()))
            .await
            .unwrap();
        println!("sqlite: running...");
        merge(run_on(&args, "sqlite", store).await);
        if args.keep_sqlite {
            let _ = dir.keep();
            println!("sqlite: kept {}", file.display());
        }
    }
    match args.database_url.as_deref().filter(|u| !u.is_empty()) {
        Some(admin_url) => {
            let (url, database) = create_postgres(admin_url).await;
            let store = Store::connect(&url).await.unwrap();
            println!("postgres: running on {database}...");
            let outcome = tokio::spawn({
                let args = args.clone();
                async move { run_on(&args, "postgres", store).await }
            })
            .await;
            drop_postgres(admin_url, &database).await;
            match outcome {
                Ok(r) => merge(r),
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            }
        }
        None => println!("BENCHTRAIL_BENCH_DATABASE_URL is not set: SQLite only"),
    }
    print_report(&report);
}
