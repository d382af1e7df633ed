//! A seeded generator of realistic `vllm bench serve --save-result` files, for measuring the
//! detection engine the way users meet it: whole result files with every summary key, uploaded
//! commit after commit (the `detection_rates` benchmark of `benchtrail-server` drives them
//! through the HTTP API; `core/tests/detection_rates.rs` runs a bounded instance in CI).
//!
//! # Noise model
//! Each history is a sequence of commits; each commit has `repeats` CI jobs; each job runs
//! every workload cell (a `max_concurrency`) once, with `num_prompts` requests of
//! `input_len` prompt tokens and exactly `output_len` output tokens (`ignore_eos`).
//!
//! * **Run-level factors** move every statistic of a run together, as a slow machine, a
//!   thermally throttled GPU or a noisy neighbour does. A job draws one standard normal `J`;
//!   each cell of the job draws `E`; the cell's common factor is `g = √ρ·J + √(1−ρ)·E`, so
//!   cells of one job are correlated with `ρ` ([`HistorySpec::cell_correlation`], default 0.5).
//!   The prefill (TTFT) factor is `exp(cv·(0.8·g + 0.6·u_p))` and the decode (TPOT/ITL) factor
//!   `exp(cv·(0.8·g + 0.6·u_d))` with `u_p`, `u_d` independent standard normals: each has
//!   log-standard deviation `cv` ([`HistorySpec::cv`], the run-to-run CV), and they are
//!   correlated 0.64 within a run. Repeats are separate jobs (independent `J`).
//! * **Per-request noise**: a request's TTFT is the cell's median TTFT × prefill factor ×
//!   `exp(σ_ttft·z)` (queueing makes `σ_ttft` grow with concurrency); its TPOT level is the
//!   cell's TPOT × decode factor × `exp(0.04·z)`; each of its `output_len − 1` chunk gaps is
//!   that level × `exp(0.2·z − 0.02)`. So the tail statistics (p99 of 200 requests) carry
//!   their own sampling noise on top of the run-level factor, as in real files.
//! * **Derived exactly as vLLM does** (`vllm/benchmarks/serve.py`, `calculate_metrics`):
//!   every time is the difference of two readings of a monotonic clock that has run for days
//!   (as `time.perf_counter()` gives them; `CLOCK_START_S`): TTFT, each chunk gap, and E2E
//!   latency = last token − start; TPOT = (E2E − TTFT) / (output_len − 1); ITL statistics
//!   over all gaps; percentiles with numpy's linear interpolation; mean/median/std/p50/p90/p95/p99 of
//!   TTFT, TPOT, ITL and E2E latency in ms.
//! * **Throughput is coupled to latency**: under fixed concurrency the run lasts
//!   `Σ E2E / max_concurrency` (× the change's duration factor), and request, output and total
//!   token throughput are the requests and tokens over that duration. A slow run therefore
//!   raises every latency and lowers every throughput together.
//!
//! A [`Change`] multiplies the cells' TTFT and TPOT from its commit on (a step), and may set the
//! throughput change directly (the FP8 KV-cache case, whose reported throughput and E2E
//! changes are not exact reciprocals).
//!
//! Same spec and seed → the same files on every platform (ChaCha8 is value-stable).

use crate::stats::{numpy_sum, percentile_sorted, population_std};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

/// One workload cell: its concurrency and its noise-free levels.
#[derive(Debug, Clone, PartialEq)]
pub struct CellShape {
    /// `max_concurrency` of the run (closed loop, `request_rate=inf`).
    pub max_concurrency: u64,
    /// Median TTFT without any run-level factor, ms.
    pub ttft_ms: f64,
    /// Per-request TPOT level without any run-level factor, ms.
    pub tpot_ms: f64,
    /// Log-standard deviation of a request's TTFT around the cell's median (queueing spread).
    pub ttft_sigma: f64,
}

/// The workload every cell runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// Prompt tokens per request (`--random-input-len`).
    pub input_len: u64,
    /// Output tokens per request (`--random-output-len`, with `ignore_eos`).
    pub output_len: u64,
    /// Requests per run (`--num-prompts`).
    pub num_prompts: usize,
    /// The cells, in upload order.
    pub cells: Vec<CellShape>,
}

impl Workload {
    /// A chat-like workload of a mid-size model: 1024 prompt / 128 output tokens, 200 prompts,
    /// concurrency 1, 4 and 16 (median TTFT 60 / 114 / 330 ms, TPOT 8 / 9.4 / 15.2 ms).
    pub fn chat() -> Workload {
        let cell = |c: u64| CellShape {
            max_concurrency: c,
            ttft_ms: 60.0 * (1.0 + 0.3 * (c as f64 - 1.0)),
            tpot_ms: 8.0 * (1.0 + 0.06 * (c as f64 - 1.0)),
            ttft_sigma: 0.1 + 0.012 * c as f64,
        };
        Workload {
            input_len: 1024,
            output_len: 128,
            num_prompts: 200,
            cells: vec![cell(1), cell(4), cell(16)],
        }
    }

    /// The FP8 KV-cache case's workload: Llama-3.3-70B on four H100s, 8000 prompt / 1000
    /// output tokens, concurrency 1, 4 and 16 (median TTFT 780 / 1150 / 2600 ms, TPOT 15 /
    /// 18.5 / 27 ms, so E2E ≈ TTFT + 999 · TPOT), 500 prompts per cell: enough that the
    /// medians' per-request sampling noise (≈ 0.7 % at c = 16) stays below the case's stated
    /// run-to-run CV of 1.2 %.
    pub fn fp8_case() -> Workload {
        let cell = |c, ttft_ms, tpot_ms, ttft_sigma| CellShape {
            max_concurrency: c,
            ttft_ms,
            tpot_ms,
            ttft_sigma,
        };
        Workload {
            input_len: 8000,
            output_len: 1000,
            num_prompts: 500,
            cells: vec![
                cell(1, 780.0, 15.0, 0.04),
                cell(4, 1150.0, 18.5, 0.08),
                cell(16, 2600.0, 27.0, 0.12),
            ],
        }
    }
}

/// A change of the engine: per-cell multipliers, in percent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Change {
    /// TTFT change per cell (same order as [`Workload::cells`]), percent.
    pub ttft_pct: Vec<f64>,
    /// TPOT (and so ITL) change per cell, percent.
    pub tpot_pct: Vec<f64>,
    /// When set: the expected throughput change per cell, percent; the run's duration is
    /// scaled so that throughput changes by this much on top of what the latencies imply.
    pub throughput_pct: Option<Vec<f64>>,
}

impl Change {
    /// TTFT × (1 + pct/100) in every one of `cells` cells.
    pub fn ttft_step(pct: f64, cells: usize) -> Change {
        Change {
            ttft_pct: vec![pct; cells],
            tpot_pct: vec![0.0; cells],
            throughput_pct: None,
        }
    }

    /// The FP8 KV-cache change (a real vLLM change, contributor-reported, TP4, 8000/1000
    /// tokens, concurrency 1, 4, 16): median TTFT +6.9 / +9.0 / +11.1 %, throughput +2.3 /
    /// +3.9 / +5.5 %, median E2E latency −3.1 / −4.7 / −6.3 % (TPOT chosen so that
    /// TTFT + 999 · TPOT gives that E2E change on [`Workload::fp8_case`]).
    pub fn fp8_kv_cache() -> Change {
        let w = Workload::fp8_case();
        let ttft = [6.9, 9.0, 11.1];
        let e2e = [-3.1, -4.7, -6.3];
        let tpot = w
            .cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let e2e0 = c.ttft_ms + 999.0 * c.tpot_ms;
                let e2e1 = e2e0 * (1.0 + e2e[i] / 100.0);
                let tpot1 = (e2e1 - c.ttft_ms * (1.0 + ttft[i] / 100.0)) / 999.0;
                (tpot1 / c.tpot_ms - 1.0) * 100.0
            })
            .collect();
        Change {
            ttft_pct: ttft.to_vec(),
            tpot_pct: tpot,
            throughput_pct: Some(vec![2.3, 3.9, 5.5]),
        }
    }
}

/// One history to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct HistorySpec {
    /// Seed of the whole history.
    pub seed: u64,
    /// Commits.
    pub commits: usize,
    /// CI jobs (repeats) per commit.
    pub repeats: usize,
    /// Run-to-run coefficient of variation of the run-level factors (0.02 = 2 %).
    pub cv: f64,
    /// Correlation of the run-level factor between the cells of one job.
    pub cell_correlation: f64,
    /// From this commit index on, the change applies.
    pub step: Option<(usize, Change)>,
    /// The workload.
    pub workload: Workload,
}

impl HistorySpec {
    /// A noise-only history of [`Workload::chat`] with cells correlated 0.5.
    pub fn chat(seed: u64, commits: usize, repeats: usize, cv: f64) -> HistorySpec {
        HistorySpec {
            seed,
            commits,
            repeats,
            cv,
            cell_correlation: 0.5,
            step: None,
            workload: Workload::chat(),
        }
    }

    /// The FP8 KV-cache case as its targets state it: [`FP8_BASELINE_COMMITS`] single-run
    /// baseline commits at run-to-run CV 1.2 %, then the change ([`Change::fp8_kv_cache`]) at
    /// the last commit.
    pub fn fp8_case(seed: u64) -> HistorySpec {
        HistorySpec {
            seed,
            commits: FP8_BASELINE_COMMITS + 1,
            repeats: 1,
            cv: 0.012,
            cell_correlation: 0.5,
            step: Some((FP8_BASELINE_COMMITS, Change::fp8_kv_cache())),
            workload: Workload::fp8_case(),
        }
    }
}

/// Baseline commits of [`HistorySpec::fp8_case`].
pub const FP8_BASELINE_COMMITS: usize = 10;

/// One generated result file.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedRun {
    /// Commit index in the history.
    pub commit: usize,
    /// Repeat (CI job) index within the commit.
    pub repeat: usize,
    /// Index of the cell in [`Workload::cells`].
    pub cell: usize,
    /// The `vllm bench serve --save-result` JSON.
    pub file: Value,
}

struct Rand(ChaCha8Rng);

impl Rand {
    fn normal(&mut self) -> f64 {
        let u1: f64 = 1.0 - self.0.gen::<f64>();
        let u2: f64 = self.0.gen::<f64>();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// The runs of commit `commit` (all repeats, all cells), deterministic in (spec, commit): a
/// history can be generated commit by commit, in any order.
pub fn commit_runs(spec: &HistorySpec, commit: usize) -> Vec<GeneratedRun> {
    runs_of(spec, commit, false)
}

/// [`commit_runs`] as `vllm bench serve --save-detailed` writes them: the same summaries (the
/// same random draws), each file with its per-request arrays too (`input_lens`,
/// `output_lens`, `ttfts`, `itls`, `latencies` in seconds, `errors`), in request order.
pub fn commit_runs_detailed(spec: &HistorySpec, commit: usize) -> Vec<GeneratedRun> {
    runs_of(spec, commit, true)
}

fn runs_of(spec: &HistorySpec, commit: usize, detailed: bool) -> Vec<GeneratedRun> {
    let mut rng = Rand(ChaCha8Rng::seed_from_u64(
        spec.seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(commit as u64),
    ));
    let change = spec
        .step
        .as_ref()
        .filter(|(at, _)| commit >= *at)
        .map(|(_, c)| c);
    let rho = spec.cell_correlation.clamp(0.0, 1.0);
    let mut out = Vec::new();
    for repeat in 0..spec.repeats {
        let job = rng.normal();
        for (ci, cell) in spec.workload.cells.iter().enumerate() {
            let g = rho.sqrt() * job + (1.0 - rho).sqrt() * rng.normal();
            let prefill = (spec.cv * (0.8 * g + 0.6 * rng.normal())).exp();
            let decode = (spec.cv * (0.8 * g + 0.6 * rng.normal())).exp();
            let pct = |v: Option<&Vec<f64>>| v.and_then(|v| v.get(ci)).copied().unwrap_or(0.0);
            let ttft_mult = 1.0 + pct(change.map(|c| &c.ttft_pct)) / 100.0;
            let tpot_mult = 1.0 + pct(change.map(|c| &c.tpot_pct)) / 100.0;
            let file = run_file(
                &spec.workload,
                cell,
                &mut rng,
                cell.ttft_ms * prefill * ttft_mult,
                cell.tpot_ms * decode * tpot_mult,
                change.and_then(|c| c.throughput_pct.as_ref().map(|t| (c, t[ci], ci))),
                detailed,
            );
            out.push(GeneratedRun {
                commit,
                repeat,
                cell: ci,
                file,
            });
        }
    }
    out
}

/// The monotonic clock's reading when a run's first request starts, seconds: 35 days after
/// boot. The tools time requests with `time.perf_counter()` (`CLOCK_MONOTONIC`, seconds since
/// boot), so a TTFT or chunk gap is the difference of two doubles near this value and is a
/// multiple of its spacing (2^-31 s ≈ 0.47 ns here): its low mantissa bits are zeros, 28.5 of
/// 52 on average in the chunk gaps of the real SGLang file
/// `testdata/sglang/...gpt-oss-120b-h100.jsonl`, 29.4 here. A generator drawing full-precision
/// doubles would write per-request arrays no real tool writes (and that compress worse).
const CLOCK_START_S: f64 = 3.0e6;

/// One run's file: per-request values from the run's levels, then vLLM's summary of them;
/// `detailed`: with the per-request arrays of `--save-detailed` too.
fn run_file(
    w: &Workload,
    cell: &CellShape,
    rng: &mut Rand,
    ttft_level: f64,
    tpot_level: f64,
    throughput: Option<(&Change, f64, usize)>,
    detailed: bool,
) -> Value {
    let n = w.num_prompts;
    let gaps_per = (w.output_len - 1) as usize;
    let mut ttfts = Vec::with_capacity(n);
    let mut tpots = Vec::with_capacity(n);
    let mut e2els = Vec::with_capacity(n);
    let mut itls = Vec::with_capacity(n * gaps_per);
    // What the file holds, in seconds, as read off the clock.
    let (mut ttfts_s, mut itls_s, mut e2els_s) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n * gaps_per),
        Vec::with_capacity(n),
    );
    for request in 0..n {
        let ttft = ttft_level * (cell.ttft_sigma * rng.normal()).exp();
        let level = tpot_level * (0.04 * rng.normal()).exp();
        let start = CLOCK_START_S + request as f64;
        let mut now = start + ttft / 1000.0;
        let ttft_s = now - start;
        for _ in 0..gaps_per {
            let gap = level * (0.2 * rng.normal() - 0.02).exp();
            let next = now + gap / 1000.0;
            itls_s.push(next - now);
            itls.push((next - now) * 1000.0);
            now = next;
        }
        let e2el_s = now - start;
        ttfts_s.push(ttft_s);
        ttfts.push(ttft_s * 1000.0);
        // vLLM: tpot = (latency − ttft) / (output_len − 1).
        tpots.push((e2el_s - ttft_s) / gaps_per.max(1) as f64 * 1000.0);
        e2els_s.push(e2el_s);
        e2els.push(e2el_s * 1000.0);
    }
    let mut duration_s = numpy_sum(&e2els) / 1000.0 / cell.max_concurrency as f64;
    if let Some((change, thr_pct, ci)) = throughput {
        // The latencies' own effect on throughput is ≈ 1/E2E ratio; scale the duration so the
        // expected throughput change is the one reported.
        let c = &w.cells[ci];
        let e2e0 = c.ttft_ms + gaps_per as f64 * c.tpot_ms;
        let e2e1 = c.ttft_ms * (1.0 + change.ttft_pct[ci] / 100.0)
            + gaps_per as f64 * c.tpot_ms * (1.0 + change.tpot_pct[ci] / 100.0);
        duration_s *= (e2e0 / e2e1) / (1.0 + thr_pct / 100.0);
    }
    let total_in = w.input_len as usize * n;
    let total_out = w.output_len as usize * n;
    let mut doc = json!({
        "date": "20261201-000000",
        "endpoint_type": "openai",
        "backend": "vllm",
        "label": null,
        "model_id": "meta-llama/Llama-3.1-8B-Instruct",
        "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct",
        "num_prompts": n,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": cell.max_concurrency,
        "duration": duration_s,
        "completed": n,
        "failed": 0,
        "total_input_tokens": total_in,
        "total_output_tokens": total_out,
        "request_throughput": n as f64 / duration_s,
        "request_goodput": null,
        "output_throughput": total_out as f64 / duration_s,
        "total_token_throughput": (total_in + total_out) as f64 / duration_s,
        "max_output_tokens_per_s": cell.max_concurrency as f64 * 1000.0 / tpot_level,
        "max_concurrent_requests": cell.max_concurrency,
    });
    let obj = doc.as_object_mut().expect("an object");
    if detailed {
        obj.insert("input_lens".into(), json!(vec![w.input_len; n]));
        obj.insert("output_lens".into(), json!(vec![w.output_len; n]));
        obj.insert("ttfts".into(), json!(ttfts_s));
        let per_request: Vec<&[f64]> = itls_s.chunks(gaps_per.max(1)).collect();
        obj.insert("itls".into(), json!(per_request));
        obj.insert("latencies".into(), json!(e2els_s));
        obj.insert("errors".into(), json!(vec![""; n]));
    }
    for (name, values) in [
        ("ttft", &mut ttfts),
        ("tpot", &mut tpots),
        ("itl", &mut itls),
        ("e2el", &mut e2els),
    ] {
        let mean = numpy_sum(values) / values.len() as f64;
        let std = population_std(values).unwrap_or(0.0);
        values.sort_by(f64::total_cmp);
        let p = |q: f64| percentile_sorted(values, q).unwrap_or(0.0);
        obj.insert(format!("mean_{name}_ms"), json!(mean));
        obj.insert(format!("median_{name}_ms"), json!(p(50.0)));
        obj.insert(format!("std_{name}_ms"), json!(std));
        for q in [50.0, 90.0, 95.0, 99.0] {
            obj.insert(format!("p{q}_{name}_ms"), json!(p(q)));
        }
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(cv: f64) -> HistorySpec {
        HistorySpec {
            seed: 7,
            commits: 3,
            repeats: 2,
            cv,
            cell_correlation: 0.5,
            step: None,
            workload: Workload::chat(),
        }
    }

    #[test]
    fn a_commit_is_the_same_whenever_it_is_generated() {
        let s = spec(0.02);
        assert_eq!(commit_runs(&s, 1), commit_runs(&s, 1));
        assert_ne!(commit_runs(&s, 1), commit_runs(&s, 2));
        assert_eq!(commit_runs(&s, 0).len(), 2 * 3);
    }

    #[test]
    fn the_file_reads_as_vllm_with_every_summary_key() {
        let run = &commit_runs(&spec(0.02), 0)[1];
        let text = run.file.to_string();
        let (format, results) =
            crate::adapters::parse_file(None, &text, 0).expect("a vllm bench serve file");
        assert_eq!(format, "vllm-bench-serve");
        let r = &results[0];
        let names: std::collections::BTreeSet<String> = r
            .metrics
            .iter()
            .map(|m| format!("{}/{}", m.name, m.stat))
            .collect();
        for m in ["ttft", "tpot", "itl", "e2el"] {
            for s in ["mean", "p50", "p90", "p95", "p99", "std"] {
                assert!(names.contains(&format!("{m}/{s}")), "{m}/{s} in {names:?}");
            }
        }
        assert!(names.contains("output_throughput/value"));
        assert_eq!(run.file["max_concurrency"], 4);
        // Closed loop: request throughput = concurrency / mean E2E.
        let e2e = run.file["mean_e2el_ms"].as_f64().unwrap() / 1000.0;
        let rps = run.file["request_throughput"].as_f64().unwrap();
        assert!((rps * e2e - 4.0).abs() < 1e-9, "{rps} × {e2e}");
    }

    #[test]
    fn every_time_in_a_detailed_file_is_a_tick_of_the_clock() {
        let run = &commit_runs_detailed(&spec(0.02), 0)[0];
        let tick = 2f64.powi(-31); // the spacing of doubles in [2^21, 2^22) s
        let times: Vec<f64> = ["ttfts", "latencies"]
            .iter()
            .flat_map(|k| run.file[*k].as_array().unwrap().clone())
            .chain(
                run.file["itls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|r| r.as_array().unwrap().clone()),
            )
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(times.len(), 200 + 200 + 200 * 127);
        assert!(times.iter().all(|t| (t / tick).fract() == 0.0));
        // Zero low mantissa bits, on average (28.5 in the real SGLang file's chunk gaps).
        let zero_bits: u32 = times
            .iter()
            .map(|t| (t.to_bits() & ((1 << 52) - 1)).trailing_zeros())
            .sum();
        assert_eq!(
            format!("{:.2}", zero_bits as f64 / times.len() as f64),
            "29.38"
        );
    }

    #[test]
    fn a_detailed_file_is_the_summary_file_with_its_requests() {
        let s = spec(0.02);
        let plain = &commit_runs(&s, 1)[2];
        let detailed = &commit_runs_detailed(&s, 1)[2];
        let mut summaries = detailed.file.clone();
        let arrays = [
            "input_lens",
            "output_lens",
            "ttfts",
            "itls",
            "latencies",
            "errors",
        ];
        for key in arrays {
            summaries.as_object_mut().unwrap().remove(key);
        }
        assert_eq!(summaries, plain.file);
        let (_, results) = crate::adapters::parse_file(None, &detailed.file.to_string(), 0)
            .expect("a vllm bench serve --save-detailed file");
        let samples = results[0].samples.as_ref().expect("per-request samples");
        assert_eq!(samples.success, vec![true; 200]);
        let ttft = samples.ttft_ms.as_ref().unwrap();
        let itl = samples.itl_ms.as_ref().unwrap();
        assert_eq!((ttft.len(), itl.len(), itl[0].len()), (200, 200, 127));
        // The requests' own median is the file's p50 (vLLM's percentile: numpy's linear one).
        let mut sorted: Vec<f64> = ttft.iter().map(|v| v.unwrap()).collect();
        sorted.sort_by(f64::total_cmp);
        let median = (sorted[99] + sorted[100]) / 2.0;
        let p50 = detailed.file["p50_ttft_ms"].as_f64().unwrap();
        assert!((median - p50).abs() < 1e-9 * p50, "{median} against {p50}");
    }

    #[test]
    fn the_run_level_factor_has_the_stated_cv() {
        let s = HistorySpec {
            commits: 400,
            repeats: 1,
            ..spec(0.02)
        };
        let logs: Vec<f64> = (0..400)
            .map(|i| {
                commit_runs(&s, i)[0].file["median_ttft_ms"]
                    .as_f64()
                    .unwrap()
                    .ln()
            })
            .collect();
        let m = logs.iter().sum::<f64>() / logs.len() as f64;
        let sd = (logs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 399.0).sqrt();
        // Run-level 2 % plus the sampling noise of a median of 200 requests at σ = 0.112
        // (≈ 1.2533 · 0.112 / √200 ≈ 1.0 %): √(2² + 1²) ≈ 2.2 %.
        assert!((0.019..0.026).contains(&sd), "log sd {sd}");
    }
}
