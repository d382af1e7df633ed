//! Upload + analysis latency as one project's history grows (issue 12's "flat in history
//! length" target), over real HTTP on a loopback port, on a temporary SQLite file and (when
//! `BENCHTRAIL_BENCH_DATABASE_URL` names a Postgres admin connection) on a fresh Postgres
//! database that is dropped afterwards.
//!
//! ```sh
//! cargo bench -p benchtrail-server --bench history_growth                     # 600 commits
//! cargo bench -p benchtrail-server --bench history_growth -- --commits 1800 --every 300
//! BENCHTRAIL_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
//!     cargo bench -p benchtrail-server --bench history_growth -- --no-sqlite
//! ```
//!
//! The data: one nightly history of `--commits` commits (each with its parent), one run per
//! commit holding 18 realistic `vllm bench serve --save-result` files, one per workload cell
//! (`max_concurrency` 1 … 128), with every summary key (TTFT, TPOT, ITL, E2E at mean, median,
//! std, p90, p95, p99; request, output and total token throughput; counts): 34 stored values
//! per cell, 612 per upload. The values come from `benchtrail_core::regression::realistic`
//! (run-level factors shared by every statistic of a run and correlated across cells,
//! per-request sampling noise, throughput coupled to latency; noise model documented there)
//! at run-to-run CV 2 %, noise only. Issue 12's data set adds `--configurations 2` (a second
//! configuration, an FP8 KV cache, uploaded as its own nightly run of every commit) and
//! `--samples-last 200` (the newest 200 commits upload `--save-detailed` files: every cell's
//! 200 requests with their TTFT, 127 chunk gaps and latency, about 4 MB of JSON per upload):
//!
//! ```sh
//! cargo bench -p benchtrail-server --bench history_growth -- --commits 1800 --every 300 \
//!     --configurations 2 --samples-last 200 --quiet --reads 20
//! ```
//!
//! Printed every `--every` commits: the p50 and p95 upload latency (the HTTP round trip:
//! ingest, storage and the analysis that runs before the response) of the last `--window`
//! uploads, the ratio of that p50 to the first checkpoint's, and the process's resident memory
//! (server and client share the process); then (`--reads`) every page kind's and the series
//! API's read latency, and the series API against the hand-written SQL of the same rows; last,
//! per database, issue 12's targets with the figure measured for each and whether it is met
//! (`history_growth_targets`). The
//! change-point scan runs in the background as
//! shipped; its CPU competes with the uploads as it does in production. With
//! `RUST_LOG=benchtrail_server::analysis=debug` every analysis logs its phase times to stderr
//! (`commit analyzed … phases=read=… windows=… decide=… coverage=… alerts=… store=…`).

mod history_growth_targets;
mod support;

use benchtrail_core::regression::realistic::{
    commit_runs, commit_runs_detailed, CellShape, HistorySpec, Workload,
};
use benchtrail_server::storage::Store;
use clap::Parser;
use history_growth_targets::Figures;
use serde_json::{json, Value};
use std::time::Duration;
use support::{create_postgres, drop_postgres, Bench};

#[derive(Parser, Debug, Clone)]
#[command(about = "Upload + analysis latency of benchtrail as a project's history grows")]
struct Args {
    /// Commits of the history (one upload each).
    #[arg(long, default_value_t = 600)]
    commits: usize,
    /// Print a checkpoint every this many commits.
    #[arg(long, default_value_t = 100)]
    every: usize,
    /// Uploads each checkpoint's percentiles are taken over (the last ones before it).
    #[arg(long, default_value_t = 20)]
    window: usize,
    /// Seed of the generated history.
    #[arg(long, default_value_t = 0x6772_6f77)]
    seed: u64,
    /// Postgres admin URL: also run on a fresh database created there and dropped afterwards.
    #[arg(long, env = "BENCHTRAIL_BENCH_DATABASE_URL")]
    database_url: Option<String>,
    /// Skip SQLite (with --database-url: Postgres only).
    #[arg(long)]
    no_sqlite: bool,
    /// Before each upload a checkpoint reports (the last `--window` before it), wait until the
    /// process is idle (the background change-point scan done): the latency of an upload that
    /// meets an idle server, as a nightly job's does. Without it, uploads follow each other at
    /// once and share the cores with the scans the earlier ones asked for.
    #[arg(long)]
    quiet: bool,
    /// Keep the SQLite database at this path (a new file) instead of a temporary one, to
    /// inspect what was stored.
    #[arg(long)]
    keep_sqlite: Option<std::path::PathBuf>,
    /// Keep the Postgres database (its name is printed) instead of dropping it, to inspect
    /// what was stored or serve it with a server of its own.
    #[arg(long)]
    keep_postgres: bool,
    /// After the history is loaded, read every page kind (dashboard, alerts, series, run,
    /// validation matrix, compare) and the series API this many times each, and the series'
    /// rows by hand-written SQL as often: p50 / p95 of each (0: skip).
    #[arg(long, default_value_t = 20)]
    reads: usize,
    /// Load nothing: run the `--reads` on this database as it is (`sqlite://FILE` kept by
    /// `--keep-sqlite`, or the Postgres URL `--keep-postgres` printed), with `--commits` the
    /// number of commits it holds. So two builds' reads can be compared on one history without
    /// loading it again.
    #[arg(long)]
    reads_of: Option<String>,
    /// With `--reads-of`: before the reads, upload this many more commits of the same history
    /// (commits `--commits`, `--commits` + 1, …, each the child of the one before; each
    /// configuration of `--configurations` its own upload), each at an idle server, and print
    /// their p50 / p95 (and each configuration's): the upload latency at that history length,
    /// for any build, without loading the history again. Serve a copy: they are stored.
    #[arg(long, default_value_t = 0)]
    uploads: usize,
    /// Configurations measured at every commit, each its own nightly upload (the first as
    /// before; the second with an FP8 KV cache, its own noise). Issue 12's data set: 2.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=2))]
    configurations: u64,
    /// The newest this many commits upload `vllm bench serve --save-detailed` files (the
    /// per-request arrays of every cell: 200 requests × 127 chunk gaps each), the rest the
    /// summaries alone. Issue 12's data set: 200.
    #[arg(long, default_value_t = 0)]
    samples_last: usize,
    /// Run the server as its own process (the release `benchtrail-server` binary, or the one
    /// `BENCHTRAIL_BENCH_SERVER` names; its log in the system's temporary directory), so the
    /// resident memory printed is the server's alone, not shared with the generator and the
    /// client. Without it the server runs inside this process.
    #[arg(long)]
    server_process: bool,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// The 18 workload cells: concurrency 1 … 128, TTFT and TPOT rising with load as in
/// [`Workload::chat`].
fn workload() -> Workload {
    let cells = [
        1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 96, 128,
    ]
    .into_iter()
    .map(|c: u64| CellShape {
        max_concurrency: c,
        ttft_ms: 60.0 * (1.0 + 0.3 * (c as f64 - 1.0)),
        tpot_ms: 8.0 * (1.0 + 0.06 * (c as f64 - 1.0)),
        ttft_sigma: 0.1 + 0.012 * c as f64,
    })
    .collect();
    Workload {
        cells,
        ..Workload::chat()
    }
}

fn sha(i: usize) -> String {
    format!("{:040x}", 0x6772_6f77_0000_0000_u64 + i as u64)
}

/// The upload of commit `i` of configuration `config` (0 or 1, see `--configurations`): every
/// cell's file (with its per-request arrays when `detailed`), the commit's parent and its
/// nightly time.
fn upload(spec: &HistorySpec, i: usize, config: u64, detailed: bool) -> Vec<u8> {
    let spec = HistorySpec {
        seed: spec.seed.wrapping_add(config),
        ..spec.clone()
    };
    let runs = if detailed {
        commit_runs_detailed(&spec, i)
    } else {
        commit_runs(&spec, i)
    };
    let files: Vec<Value> = runs
        .into_iter()
        .map(|g| json!({"name": format!("c{}.json", g.cell), "content": g.file.to_string()}))
        .collect();
    let parents: Vec<String> = if i == 0 { vec![] } else { vec![sha(i - 1)] };
    let time = chrono::DateTime::parse_from_rfc3339("2021-12-01T02:00:00Z").unwrap()
        + chrono::Duration::days(i as i64);
    let mut configuration = json!({
        "hardware": {"accelerator": "NVIDIA H100 80GB HBM3", "accelerator_count": 1},
        "engine": {"name": "vllm"},
    });
    if config == 1 {
        configuration["quantization"] = json!({"kv_cache_dtype": "fp8"});
    }
    let body = json!({
        "run": {
            "commit": {"sha": sha(i), "parents": parents,
                       "time": time.to_utc().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)},
            "branch": "main",
        },
        "configuration": configuration,
        "cell": {"input_len": spec.workload.input_len, "output_len": spec.workload.output_len},
        "files": files,
    });
    serde_json::to_vec(&body).unwrap()
}

/// Whether commit `i` of `args`' history uploads per-request arrays (`--samples-last`).
fn detailed(args: &Args, i: usize) -> bool {
    // `--uploads` continue past `--commits`: without `--samples-last` they are summaries too.
    args.samples_last > 0 && i + args.samples_last >= args.commits
}

/// Metric values stored by `args`' history: 18 cells × 34 values per upload.
fn stored_values(args: &Args) -> f64 {
    (args.commits * 18 * 34) as f64 * args.configurations as f64
}

/// Resident memory of the server's process, MiB (this process's when the server runs in it).
fn rss_mib(bench: &Bench) -> f64 {
    bench.rss_mib().0
}

/// Waits until the server's process is idle (the analyses and the change-point scan done), at
/// most `limit`: the wait and the server's CPU seconds meanwhile.
async fn drain(bench: &Bench, limit: Duration) -> (f64, f64) {
    let cpu = bench.cpu_seconds();
    let wait = bench.wait_idle(limit).await;
    (wait, bench.cpu_seconds() - cpu)
}

/// The server of `database_url`, in this process or (`--server-process`) its own.
async fn server(args: &Args, database_url: &str) -> Bench {
    if args.server_process {
        let log =
            std::env::temp_dir().join(format!("history-growth-server-{}.log", std::process::id()));
        println!("server: its own process, log {}", log.display());
        Bench::spawn_binary(database_url, &log)
    } else {
        Bench::start(Store::connect(database_url).await.unwrap()).await
    }
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    let rank = (q / 100.0 * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Gives the Postgres planner its statistics, as autovacuum does in a deployment (it is off on
/// this machine class's Postgres: without it every join plan assumes an empty table and reads
/// `metric_values` whole, 27 ms for one run's 612 values at 300 commits against 1.3 ms).
async fn analyze_postgres(url: &str) {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::query("ANALYZE").execute(&mut conn).await.unwrap();
    let _ = conn.close().await;
}

/// Uploads the history; `postgres`: the database's URL, analyzed at every checkpoint (and
/// after the last upload) as autovacuum would ([`analyze_postgres`]).
async fn grow(
    bench: &Bench,
    args: &Args,
    database: &str,
    postgres: Option<&str>,
    figures: &mut Figures,
) -> String {
    let spec = HistorySpec {
        workload: workload(),
        ..HistorySpec::chat(args.seed, args.commits, 1, 0.02)
    };
    let token = bench.project("growth").await;
    let path = "/api/v1/projects/growth/runs";
    let mut latencies = Vec::with_capacity(args.commits);
    let mut first_p50: Option<f64> = None;
    println!(
        "{database}: commits | p50 ms | p95 ms | p50 / first | pending receipts | RSS MiB (last {} uploads{})",
        args.window,
        if args.quiet { ", each at an idle server" } else { "" }
    );
    let mut pending = 0usize;
    let mut last_run = String::new();
    for i in 0..args.commits {
        let until_checkpoint = args.every - 1 - i % args.every;
        for config in 0..args.configurations {
            let body = upload(&spec, i, config, detailed(args, i));
            if args.quiet && (until_checkpoint < args.window || args.commits - 1 - i < args.window)
            {
                drain(bench, Duration::from_secs(120)).await;
            }
            let (status, receipt, ms) = bench
                .send(reqwest::Method::POST, path, &token, Some(body))
                .await;
            assert_eq!(status, 201, "commit {i}: {receipt}");
            if config == 0 {
                last_run = receipt["run_id"].as_str().unwrap_or_default().to_string();
            }
            if receipt["verdict"] == "pending" {
                pending += 1;
            }
            latencies.push(ms);
        }
        let n = i + 1;
        if n % args.every == 0 || n == args.commits {
            let from = latencies.len().saturating_sub(args.window);
            let mut last = latencies[from..].to_vec();
            last.sort_by(f64::total_cmp);
            let p50 = percentile(&last, 50.0);
            let first = *first_p50.get_or_insert(p50);
            // The window's commits (each configuration an upload): summary uploads only count
            // for the latency targets; a detailed upload carries every request.
            let window_commits = args.window.div_ceil(args.configurations as usize);
            if !(n.saturating_sub(window_commits)..n).any(|c| detailed(args, c)) {
                figures.upload_p50s.push((n, p50));
            }
            println!(
                "{database}: {n:>7} | {p50:>6.0} | {:>6.0} | {:>11.2} | {pending:>16} | {:>7.0}",
                percentile(&last, 95.0),
                p50 / first,
                rss_mib(bench)
            );
            if let Some(url) = postgres {
                analyze_postgres(url).await;
            }
        }
    }
    let (wait, cpu) = drain(bench, Duration::from_secs(600)).await;
    let idle = rss_mib(bench);
    // The server returns freed memory once no analysis finished for 2 s (server/src/memory.rs),
    // and the change-point scan the last uploads asked for starts a few seconds after them: at
    // rest is after 5 s in which the server did nothing.
    let rest_from = std::time::Instant::now();
    loop {
        let cpu = bench.cpu_seconds();
        tokio::time::sleep(Duration::from_secs(5)).await;
        if bench.cpu_seconds() - cpu < 0.05 || rest_from.elapsed() > Duration::from_secs(600) {
            break;
        }
    }
    let rest = rss_mib(bench);
    figures.rest_rss_mib = Some((rest, args.server_process));
    println!(
        "{database}: idle {wait:.1} s after the last upload ({cpu:.1} CPU s meanwhile); RSS when \
         idle {idle:.0} MiB, at rest (5 s without work, {:.0} s later) {rest:.0} MiB",
        rest_from.elapsed().as_secs_f64(),
    );
    last_run
}

/// `--uploads` more commits onto a loaded history (`--reads-of`), each at an idle server, as
/// the admin (the project's upload token is not kept): their p50 / p95 round trip.
async fn continue_history(bench: &Bench, args: &Args, database: &str) {
    let spec = HistorySpec {
        workload: workload(),
        ..HistorySpec::chat(args.seed, args.commits + args.uploads, 1, 0.02)
    };
    // Per configuration: the second one's upload finds the first's run of its commit stored.
    let mut ms = vec![Vec::with_capacity(args.uploads); args.configurations as usize];
    for i in args.commits..args.commits + args.uploads {
        for (config, times) in ms.iter_mut().enumerate() {
            drain(bench, Duration::from_secs(120)).await;
            let (status, receipt, took) = bench
                .send(
                    reqwest::Method::POST,
                    "/api/v1/projects/growth/runs",
                    support::ADMIN_TOKEN,
                    Some(upload(&spec, i, config as u64, detailed(args, i))),
                )
                .await;
            assert_eq!(status, 201, "commit {i}: {receipt}");
            times.push(took);
        }
    }
    // The reads that follow meet an idle server, as after loading.
    drain(bench, Duration::from_secs(120)).await;
    let mut all: Vec<f64> = ms.concat();
    all.sort_by(f64::total_cmp);
    let mut line = format!(
        "{database}: {} more uploads at commit {} | ms p50 {:>7.1} p95 {:>7.1}",
        all.len(),
        args.commits,
        percentile(&all, 50.0),
        percentile(&all, 95.0)
    );
    if ms.len() > 1 {
        for (config, times) in ms.iter_mut().enumerate() {
            times.sort_by(f64::total_cmp);
            line += &format!(
                " | configuration {config}: p50 {:.1} p95 {:.1}",
                percentile(times, 50.0),
                percentile(times, 95.0)
            );
        }
    }
    println!("{line}");
}

/// p50 and p95 (ms) of `n` timed calls of `call` (after one untimed call), and its status.
async fn timed<F, Fut>(n: usize, mut call: F) -> (f64, f64, u16)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = (u16, f64)>,
{
    let (status, _) = call().await;
    let mut ms = Vec::with_capacity(n);
    for _ in 0..n {
        ms.push(call().await.1);
    }
    ms.sort_by(f64::total_cmp);
    (percentile(&ms, 50.0), percentile(&ms, 95.0), status)
}

/// The reads of issue 12's targets on the loaded history (`--reads`): every page kind's
/// round trip (server render, loopback HTTP) and the series API, against the hand-written SQL
/// of the series' rows on `url` (a pool of its own, no HTTP).
async fn read_pages(
    bench: &Bench,
    url: &str,
    run: &str,
    args: &Args,
    database: &str,
    figures: &mut Figures,
) {
    let list = bench
        .admin(
            reqwest::Method::GET,
            "/api/v1/projects/growth/series?metric=ttft&stat=p50&limit=500",
            None,
        )
        .await;
    let series = list["items"]
        .as_array()
        .and_then(|items| {
            items.iter().find(|i| {
                i["cell_key"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("max_concurrency=1;")
            })
        })
        .and_then(|i| i["series_id"].as_str())
        .expect("the ttft p50 series at max_concurrency=1")
        .to_string();
    let reads = [
        ("dashboard", "/projects/growth".to_string()),
        ("alerts", "/projects/growth/alerts".to_string()),
        ("series page", format!("/projects/growth/series/{series}")),
        ("run", format!("/runs/{run}")),
        ("matrix", format!("/runs/{run}/matrix")),
        ("compare", format!("/compare?head={run}")),
        (
            "series API",
            format!("/api/v1/projects/growth/series/{series}"),
        ),
    ];
    let mut api_p50 = 0.0;
    for (name, path) in &reads {
        let (p50, p95, status) = timed(args.reads, || async {
            let (status, _, ms) = bench
                .send(reqwest::Method::GET, path, support::ADMIN_TOKEN, None)
                .await;
            (status, ms)
        })
        .await;
        if *name == "series API" {
            api_p50 = p50;
        } else {
            figures.pages_p95_ms.push((name, p95));
        }
        println!(
            "{database}: {name:<12} {status} | ms p50 {p50:>7.1} p95 {p95:>7.1} ({} reads)",
            args.reads
        );
    }
    // The rows the series API returns, as one would write them by hand, on the database's own
    // sqlx driver (before session 29 this ran through sqlx's `Any` driver, as the server did
    // then; BENCHMARKS.md "Session 29" has both).
    let sql = "SELECT r.commit_sha, r.run_at, mv.value FROM series s \
               JOIN metric_values mv ON mv.series_seq = s.seq JOIN runs r ON r.seq = mv.run_seq \
               WHERE s.series_id = $1 AND r.branch = 'main' ORDER BY r.run_at";
    // One body for both drivers' pools (their types differ).
    macro_rules! time_sql {
        ($pool:expr) => {{
            let pool = $pool;
            let times = timed(args.reads, || async {
                let t = std::time::Instant::now();
                let rows = sqlx::query(sql)
                    .bind(&series)
                    .fetch_all(&pool)
                    .await
                    .unwrap();
                assert_eq!(rows.len(), args.commits);
                (200, t.elapsed().as_secs_f64() * 1e3)
            })
            .await;
            pool.close().await;
            times
        }};
    }
    let (p50, p95, _) = if url.starts_with("sqlite:") {
        time_sql!(sqlx::SqlitePool::connect(url).await.unwrap())
    } else {
        time_sql!(sqlx::PgPool::connect(url).await.unwrap())
    };
    figures.series_api_ratio = Some(api_p50 / p50);
    println!(
        "{database}: series SQL   | ms p50 {p50:>7.1} p95 {p95:>7.1}: the series API is {:.1}× the hand-written SQL",
        api_p50 / p50
    );
}

/// Prints the bytes per stored metric value of the database at `url`, in all and of its five
/// largest tables or indexes (`sizes`: a query of (name, bytes) rows).
async fn print_disk(database: &str, url: &str, sizes: &str, args: &Args) -> f64 {
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    let mut rows: Vec<(String, i64)> = sqlx::query_as(sizes).fetch_all(&pool).await.unwrap();
    pool.close().await;
    rows.sort_by(|a, b| b.1.cmp(&a.1));
    let values = stored_values(args);
    let total: i64 = rows.iter().map(|r| r.1).sum();
    let largest: Vec<String> = rows
        .iter()
        .take(5)
        .map(|(name, bytes)| format!("{name} {:.0}", *bytes as f64 / values))
        .collect();
    println!(
        "{database}: tables and indexes {:.1} MiB, {:.0} B per stored value; largest (B per value): {}",
        total as f64 / 1048576.0,
        total as f64 / values,
        largest.join(", ")
    );
    total as f64 / values
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    // `RUST_LOG=benchtrail_server::analysis=debug` prints each analysis's phase times.
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    println!(
        "history growth: {} commits × {} configuration(s) × 18 cells × 34 values, one run per \
         commit and configuration, per-request arrays in the newest {}, CV 2 %, seed {:#x}",
        args.commits, args.configurations, args.samples_last, args.seed
    );
    if let Some(url) = &args.reads_of {
        let bench = server(&args, url).await;
        let runs = bench
            .admin(
                reqwest::Method::GET,
                "/api/v1/projects/growth/runs?limit=1",
                None,
            )
            .await;
        let run = runs["items"][0]["id"]
            .as_str()
            .expect("a run of project `growth`")
            .to_string();
        let database = if url.starts_with("sqlite:") {
            "sqlite"
        } else {
            "postgres"
        };
        if args.uploads > 0 {
            continue_history(&bench, &args, database).await;
        }
        if args.reads > 0 {
            let mut figures = Figures::default();
            read_pages(&bench, url, &run, &args, database, &mut figures).await;
            figures.print(database);
        }
        return;
    }
    if !args.no_sqlite {
        let dir = tempfile::tempdir().unwrap();
        let file = args
            .keep_sqlite
            .clone()
            .unwrap_or_else(|| dir.path().join("growth.db"));
        let url = format!("sqlite://{}", file.display());
        let bench = server(&args, &url).await;
        let mut figures = Figures::default();
        let run = grow(&bench, &args, "sqlite", None, &mut figures).await;
        if args.reads > 0 {
            read_pages(&bench, &url, &run, &args, "sqlite", &mut figures).await;
        }
        let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
        println!(
            "sqlite: database file {:.1} MiB, {:.0} B per stored value",
            size as f64 / 1048576.0,
            size as f64 / stored_values(&args)
        );
        // SQLite's `dbstat` table (compiled into the bundled library) gives each table's and
        // index's pages.
        figures.bytes_per_value = Some(
            print_disk(
                "sqlite",
                &url,
                "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name",
                &args,
            )
            .await,
        );
        figures.print("sqlite");
    }
    if let Some(admin) = &args.database_url {
        let (url, name) = create_postgres(admin).await;
        let mut figures = Figures::default();
        {
            let bench = server(&args, &url).await;
            let run = grow(&bench, &args, "postgres", Some(&url), &mut figures).await;
            if args.reads > 0 {
                read_pages(&bench, &url, &run, &args, "postgres", &mut figures).await;
            }
        }
        // Tables with their indexes and TOAST (where compressed JSON of large rows goes).
        figures.bytes_per_value = Some(
            print_disk(
                "postgres",
                &url,
                "SELECT relname::text, pg_total_relation_size(relid) FROM pg_catalog.pg_statio_user_tables",
                &args,
            )
            .await,
        );
        figures.print("postgres");
        if args.keep_postgres {
            println!("postgres: kept database {name}: {url}");
        } else {
            drop_postgres(admin, &name).await;
        }
    }
}
