//! False-alarm and detection rates of the shipped defaults, measured the way users meet them:
//! realistic `vllm bench serve` files (`benchtrail_core::regression::realistic`, noise model
//! documented there) uploaded commit by commit through the HTTP API of a server on a loopback
//! port (temporary SQLite), and alerts and verdicts read back from the API.
//!
//! ```sh
//! cargo bench -p benchtrail-server --bench detection_rates             # full sizes
//! cargo bench -p benchtrail-server --bench detection_rates -- --histories 4 --commits 20
//! ```
//!
//! Each history is one project; each commit's CI job uploads one run holding the files of
//! every cell (`max_concurrency` 1, 4, 16), with the commit's parent, so history is in
//! ancestry order. Repeats are separate uploads with their `repeat_index`. Printed per
//! scenario: the rate with its counts, seeds and CV. Background change-point scans are
//! waited for before alerts are read.

mod support;

use benchtrail_core::regression::realistic::{
    commit_runs, Change, HistorySpec, FP8_BASELINE_COMMITS,
};
use benchtrail_server::storage::Store;
use clap::Parser;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::{drain, Bench};

#[derive(Parser, Debug, Clone)]
#[command(about = "Detection rates of benchtrail through its HTTP API")]
struct Args {
    /// Histories per scenario.
    #[arg(long, default_value_t = 40)]
    histories: u64,
    /// Commits of each noise-only history.
    #[arg(long, default_value_t = 50)]
    commits: usize,
    /// Baseline commits before a step.
    #[arg(long, default_value_t = 30)]
    before_step: usize,
    /// FP8 draws.
    #[arg(long, default_value_t = 10)]
    draws: u64,
    /// Index of the first history (and draw): `--first 35 --histories 1` replays history 35
    /// alone, with the seeds of a full run.
    #[arg(long, default_value_t = 0)]
    first: u64,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn sha(h: u64, i: usize) -> String {
    format!("{h:020x}{i:020x}")
}

/// The upload of commit `i`, repeat `r`: every cell's file, the commit's parent and time.
fn upload(spec: &HistorySpec, h: u64, i: usize, r: usize, runs: &[Value]) -> Vec<u8> {
    let files: Vec<Value> = runs
        .iter()
        .enumerate()
        .map(|(c, f)| json!({"name": format!("c{c}.json"), "content": f.to_string()}))
        .collect();
    let parents: Vec<String> = if i == 0 { vec![] } else { vec![sha(h, i - 1)] };
    let body = json!({
        "run": {
            "commit": {"sha": sha(h, i), "parents": parents,
                       "time": format!("2026-01-01T00:00:00Z").replace("00:00:00", &format!("{:02}:{:02}:00", i / 60, i % 60))},
            "branch": "main",
            "repeat_index": r,
        },
        "configuration": {
            "hardware": {"accelerator": "NVIDIA H100 80GB HBM3", "accelerator_count": 1},
            "engine": {"name": "vllm"},
        },
        "cell": {"input_len": spec.workload.input_len, "output_len": spec.workload.output_len},
        "files": files,
    });
    serde_json::to_vec(&body).unwrap()
}

/// What one history's uploads and alerts showed.
struct Outcome {
    /// Alerts of kind regression, trade-off or change point.
    alarms: Vec<Value>,
    /// Upload receipts' verdicts, per commit (one per repeat).
    verdicts: Vec<Vec<String>>,
}

async fn run_history(bench: &Bench, slug: &str, spec: &HistorySpec, h: u64) -> Outcome {
    let token = bench.project(slug).await;
    let path = format!("/api/v1/projects/{slug}/runs");
    let mut verdicts = Vec::new();
    for i in 0..spec.commits {
        let runs = commit_runs(spec, i);
        let mut at = Vec::new();
        for r in 0..spec.repeats {
            let files: Vec<Value> = runs
                .iter()
                .filter(|g| g.repeat == r)
                .map(|g| g.file.clone())
                .collect();
            let (status, receipt, _) = bench
                .send(
                    reqwest::Method::POST,
                    &path,
                    &token,
                    Some(upload(spec, h, i, r, &files)),
                )
                .await;
            assert_eq!(status, 201, "{slug} commit {i}: {receipt}");
            let mut verdict = receipt["verdict"].as_str().unwrap_or("?").to_string();
            // A receipt answered before the analysis (the server was busy): what CI then does,
            // wait for the verdict.
            let waited = std::time::Instant::now();
            while verdict == "pending" && waited.elapsed() < Duration::from_secs(300) {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let run = receipt["run_id"].as_str().unwrap_or_default();
                let (_, v, _) = bench
                    .send(
                        reqwest::Method::GET,
                        &format!("/api/v1/runs/{run}/verdict"),
                        &token,
                        None,
                    )
                    .await;
                verdict = v["verdict"].as_str().unwrap_or("?").to_string();
            }
            at.push(verdict);
        }
        verdicts.push(at);
    }
    drain(Duration::from_secs(600)).await;
    let (_, alerts, _) = bench
        .send(
            reqwest::Method::GET,
            &format!("/api/v1/projects/{slug}/alerts?limit=500"),
            support::ADMIN_TOKEN,
            None,
        )
        .await;
    let alarms = alerts["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|a| {
            matches!(
                a["kind"].as_str(),
                Some("regression" | "tradeoff" | "change_point")
            )
        })
        .collect();
    Outcome { alarms, verdicts }
}

fn spec(seed: u64, commits: usize, repeats: usize, cv: f64) -> HistorySpec {
    HistorySpec::chat(seed, commits, repeats, cv)
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::connect(&format!("sqlite://{}", dir.path().join("b.db").display()))
        .await
        .unwrap();
    let bench = Bench::start(store).await;
    let started = Instant::now();
    println!(
        "detection rates over HTTP: {} histories, seeds 1000+ (noise), 5000+ (steps), 9000+ (FP8)",
        args.histories
    );
    for (cv, repeats) in [(0.02, 1), (0.05, 1), (0.02, 3)] {
        let (mut with, mut total, mut jobs) = (0, 0, 0);
        // Failed CI jobs by repeat index: a first repeat must never fail alone.
        let mut failed_by_repeat = vec![0usize; repeats];
        for h in args.first..args.first + args.histories {
            let s = spec(1000 + h, args.commits, repeats, cv);
            let o = run_history(
                &bench,
                &format!("noise-cv{}-r{repeats}-{h}", (cv * 100.0).round()),
                &s,
                h,
            )
            .await;
            with += usize::from(!o.alarms.is_empty());
            total += o.alarms.len();
            for at in &o.verdicts {
                for (r, v) in at.iter().enumerate() {
                    jobs += 1;
                    failed_by_repeat[r] += usize::from(v == "fail");
                }
            }
            for a in &o.alarms {
                eprintln!("  noise h{h}: {} {} {}", a["kind"], a["cell"], a["summary"]);
            }
        }
        let failed_jobs: usize = failed_by_repeat.iter().sum();
        println!(
            "noise only, {} commits x 3 cells, {repeats} run(s) per commit, CV {:.0} %: {with} of {} histories with a false regression/trade-off/change-point alert ({total} alerts); CI jobs failed: {failed_jobs} of {jobs} (by repeat index: {failed_by_repeat:?})",
            args.commits,
            cv * 100.0,
            args.histories
        );
    }
    for (pct, repeats) in [(10.0, 1), (5.0, 3)] {
        let (mut flagged, mut failed) = (0, 0);
        for h in args.first..args.first + args.histories {
            let at = args.before_step;
            let mut s = spec(5000 + h, at + 1, repeats, 0.02);
            s.step = Some((at, Change::ttft_step(pct, 3)));
            let o = run_history(&bench, &format!("step-{pct}-r{repeats}-{h}"), &s, h).await;
            let step_sha = sha(h, at);
            flagged += usize::from(o.alarms.iter().any(|a| {
                a["commit"] == step_sha.as_str()
                    && matches!(a["kind"].as_str(), Some("regression" | "tradeoff"))
                    && a["summary"].as_str().is_some_and(|s| s.contains("TTFT"))
            }));
            failed += usize::from(o.verdicts[at].last().map(String::as_str) == Some("fail"));
        }
        println!(
            "+{pct} % TTFT step, {repeats} run(s) per commit, CV 2 %, {} baseline commits: flagged at the step commit {flagged} of {}; its verdict (last repeat) fail {failed} of {}",
            args.before_step, args.histories, args.histories
        );
    }
    let mut good_draws = 0;
    let mut per_draw = Vec::new();
    for d in args.first..args.first + args.draws {
        let s = HistorySpec::fp8_case(9000 + d);
        let o = run_history(&bench, &format!("fp8-{d}"), &s, d).await;
        let cells: std::collections::BTreeSet<String> = o
            .alarms
            .iter()
            .filter(|a| {
                a["kind"] == "tradeoff" && a["commit"] == sha(d, FP8_BASELINE_COMMITS).as_str()
            })
            .map(|a| a["cell"].to_string())
            .collect();
        per_draw.push(cells.len());
        good_draws += usize::from(cells.len() >= 2);
    }
    println!(
        "FP8 KV-cache case, 10 baseline commits, single runs, CV 1.2 %: draws with a trade-off in >= 2 of 3 cells: {good_draws} of {} (cells per draw {per_draw:?})",
        args.draws
    );
    println!("took {:.0} s", started.elapsed().as_secs_f64());
}
