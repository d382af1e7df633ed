//! One large `vllm bench serve --save-detailed` upload: issue 12's "a 25 MB `--save-detailed`
//! file in ≤ 1 s of server CPU and ≤ 100 MB above rest".
//!
//! ```sh
//! cargo bench -p benchtrail-server --bench large_upload                 # 25 MiB, SQLite
//! BENCHTRAIL_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
//!     cargo bench -p benchtrail-server --bench large_upload -- --mib 25 --reps 3
//! ```
//!
//! **The file** is the real `vllm bench serve --save-detailed` result of the mock server in
//! `examples/history/baseline_completions_c4_isl512_osl128.json` (60 requests, 229 KB: per
//! request its input and output length, TTFT, 127 inter-token latencies, latency, start and
//! queue time, generated text and error), its per-request arrays repeated until the file holds
//! `--mib` MiB (about 6,900 requests at 25 MiB), with `num_prompts` and `completed` set to the
//! requests it holds. The summary statistics stay the file's own: what the server reads from
//! them is the same either way, and it decodes and stores every request's samples.
//!
//! **The server** is the release `benchtrail-server` binary in its own process (a new one per
//! repetition, so its peak memory is this upload's), with its defaults, on a new SQLite file
//! and, with `BENCHTRAIL_BENCH_DATABASE_URL`, on a new Postgres database dropped afterwards.
//! Before the large upload, two commits of the original file give its cell a history (so the
//! analysis compares, as it would in a project), and the server is left to go idle.
//!
//! **The upload** is sent as `benchtrail upload` sends it: the file inside the JSON upload
//! body, gzip-compressed with `Content-Encoding: gzip`.
//!
//! **Printed per repetition**: the file's and the body's size, the round trip, the server
//! process's CPU seconds from just before the upload until it is idle again (the upload, its
//! analysis, and any background work it asked for), its resident memory at rest before the
//! upload (`VmRSS`), its peak (`VmHWM`) and the peak above rest, and its RSS once idle.

mod support;

use clap::Parser;
use serde_json::{json, Value};
use std::io::Write;
use std::time::{Duration, Instant};
use support::{create_postgres, drop_postgres, Bench};

#[derive(Parser)]
#[command(about = "CPU and memory of one large vLLM --save-detailed upload")]
struct Args {
    /// Size of the result file to upload, MiB.
    #[arg(long, default_value_t = 25.0)]
    mib: f64,
    /// Repetitions, each with a new server process.
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Postgres admin URL: also run on a fresh database created there and dropped afterwards.
    #[arg(long, env = "BENCHTRAIL_BENCH_DATABASE_URL")]
    database_url: Option<String>,
    /// Skip SQLite (with --database-url: Postgres only).
    #[arg(long)]
    no_sqlite: bool,
    /// Cargo passes `--bench` to benchmark binaries.
    #[arg(long, hide = true)]
    bench: bool,
}

const SOURCE: &str = "examples/history/baseline_completions_c4_isl512_osl128.json";

/// The source file with its per-request arrays (every array as long as `ttfts`) repeated until
/// it holds at least `mib` MiB, and the requests it then holds.
fn large_file(source: &Value, mib: f64) -> (String, usize) {
    let requests = source["ttfts"].as_array().unwrap().len();
    let per_request = serde_json::to_string(source).unwrap().len() as f64 / requests as f64;
    let n = ((mib * 1024.0 * 1024.0) / per_request).ceil() as usize;
    let mut doc = source.clone();
    for (key, value) in source.as_object().unwrap() {
        if let Some(values) = value.as_array().filter(|a| a.len() == requests) {
            doc[key] = Value::Array(values.iter().cycle().take(n).cloned().collect());
        }
    }
    doc["num_prompts"] = json!(n);
    doc["completed"] = json!(n);
    (serde_json::to_string(&doc).unwrap(), n)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn upload_body(commit: usize, file: &str) -> Vec<u8> {
    let parents: Vec<String> = if commit == 0 {
        vec![]
    } else {
        vec![format!("{:040x}", commit - 1)]
    };
    serde_json::to_vec(&json!({
        "run": {"commit": {"sha": format!("{commit:040x}"), "parents": parents}, "branch": "main"},
        "configuration": {"benchmark": {"command": "vllm bench serve --model mock-llm --save-detailed"}},
        "files": [{"name": "baseline_completions_c4_isl512_osl128.json", "content": file}],
    }))
    .unwrap()
}

/// Posts `body` gzip-compressed, as `benchtrail upload` does; returns status, answer and ms.
async fn post_gzip(bench: &Bench, token: &str, body: Vec<u8>) -> (u16, Value, f64) {
    let t = Instant::now();
    let response = bench
        .http
        .post(format!("{}/api/v1/projects/big/runs", bench.base))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("content-encoding", "gzip")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let answer = response.json().await.unwrap_or(Value::Null);
    (status, answer, t.elapsed().as_secs_f64() * 1e3)
}

/// One repetition's server CPU seconds and peak resident memory above rest, MiB.
async fn one(database: &str, url: &str, small: &str, large: &str, large_gz: &[u8]) -> (f64, f64) {
    let log = std::env::temp_dir().join(format!("bt-large-upload-{}.log", std::process::id()));
    let bench = Bench::spawn_binary(url, &log);
    let token = bench.project("big").await;
    for commit in 0..2 {
        let (status, answer, _) =
            post_gzip(&bench, &token, gzip(&upload_body(commit, small))).await;
        assert_eq!(status, 201, "{answer}");
    }
    bench.wait_idle(Duration::from_secs(60)).await;
    let (rest, _) = bench.rss_mib();
    let cpu = bench.cpu_seconds();
    let (status, answer, ms) = post_gzip(&bench, &token, large_gz.to_vec()).await;
    assert_eq!(status, 201, "{answer}");
    let (_, peak_at_answer) = bench.rss_mib();
    bench.wait_idle(Duration::from_secs(120)).await;
    let cpu = bench.cpu_seconds() - cpu;
    let (idle, peak) = bench.rss_mib();
    // The samples were decoded: the ttft p50 counts every request, with its bootstrap interval.
    let run = bench
        .admin(
            reqwest::Method::GET,
            &format!("/api/v1/runs/{}", answer["run_id"].as_str().unwrap()),
            None,
        )
        .await;
    let ttft = run["results"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "ttft" && m["stat"] == "p50")
        .cloned()
        .unwrap_or(Value::Null);
    let requests = ttft["n"].as_u64().unwrap_or(0);
    let interval = if ttft["ci"].is_object() {
        "with"
    } else {
        "without"
    };
    println!(
        "{database}: file {:.1} MiB, body {:.1} MiB gzip | answered in {ms:.0} ms (verdict {}) | \
         server CPU {cpu:.2} s | RSS at rest {rest:.0} MiB, peak {peak:.0} MiB ({peak_at_answer:.0} at the answer), \
         peak above rest {:.0} MiB, idle after {idle:.0} MiB | ttft p50 of {requests} requests, {interval} interval",
        large.len() as f64 / 1048576.0,
        large_gz.len() as f64 / 1048576.0,
        answer["verdict"].as_str().unwrap_or("?"),
        peak - rest,
    );
    drop(bench);
    let _ = std::fs::remove_file(&log);
    (cpu, peak - rest)
}

/// Issue 12's large-upload targets against the worst repetition on `database`.
fn print_targets(database: &str, figures: &[(f64, f64)]) {
    let reps = figures.len();
    let cpu = figures.iter().map(|f| f.0).fold(0.0, f64::max);
    let above_mib = figures.iter().map(|f| f.1).fold(0.0, f64::max);
    let above_mb = above_mib * 1.048_576;
    println!("{database}: issue 12's targets");
    support::print_target(
        database,
        "25 MB upload in <= 1 s of server CPU",
        &format!("worst {cpu:.2} s of {reps} repetition(s)"),
        cpu <= 1.0,
    );
    support::print_target(
        database,
        "25 MB upload <= 100 MB above rest",
        &format!("worst {above_mb:.1} MB ({above_mib:.1} MiB) of {reps} repetition(s)"),
        above_mb <= 100.0,
    );
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let source: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{}/../{SOURCE}", env!("CARGO_MANIFEST_DIR"))).unwrap(),
    )
    .unwrap();
    let small = serde_json::to_string(&source).unwrap();
    let (large, requests) = large_file(&source, args.mib);
    let large_gz = gzip(&upload_body(2, &large));
    println!(
        "large_upload: {SOURCE} repeated to {} requests; {} repetitions, a new server each",
        requests, args.reps
    );
    let (mut sqlite, mut postgres) = (Vec::new(), Vec::new());
    for _ in 0..args.reps {
        if !args.no_sqlite {
            let dir = tempfile::tempdir().unwrap();
            let url = format!("sqlite://{}/bench.db?mode=rwc", dir.path().display());
            sqlite.push(one("sqlite", &url, &small, &large, &large_gz).await);
        }
        if let Some(admin) = &args.database_url {
            let (url, name) = create_postgres(admin).await;
            postgres.push(one("postgres", &url, &small, &large, &large_gz).await);
            drop_postgres(admin, &name).await;
        }
    }
    for (database, figures) in [("sqlite", &sqlite), ("postgres", &postgres)] {
        if !figures.is_empty() {
            print_targets(database, figures);
        }
    }
}
