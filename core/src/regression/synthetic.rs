//! Seeded synthetic histories for testing and demonstrating the detection engine.
//!
//! Noise model: every run's value is `true_value · (1 + cv · z)` with `z` standard normal (Box–
//! Muller over a ChaCha8 stream seeded by the caller), independent across runs and commits. So
//! `cv` is the run-to-run coefficient of variation; a commit mean of `r` repeats has CV
//! `cv/√r`. Same seed → same values on every platform (ChaCha8 is value-stable).

use super::{CommitRuns, GroupInput, RunValue, SeriesInput};
use crate::metric::Stat;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A seeded generator of noisy values.
pub struct Noise {
    rng: ChaCha8Rng,
}

impl Noise {
    /// A generator with this seed.
    pub fn new(seed: u64) -> Noise {
        Noise {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// A standard normal variate (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1: f64 = 1.0 - self.rng.gen::<f64>(); // (0, 1]
        let u2: f64 = self.rng.gen::<f64>();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// `repeats` runs of `value` with run-to-run CV `cv`.
    pub fn runs(&mut self, value: f64, cv: f64, repeats: usize) -> Vec<f64> {
        (0..repeats)
            .map(|_| value * (1.0 + cv * self.normal()))
            .collect()
    }
}

/// A fake commit SHA for commit `i` of history `h` (40 hex digits).
pub fn sha(h: usize, i: usize) -> String {
    format!("{:020x}{:020x}", h, i)
}

/// A history of `commits` commits with `repeats` runs each around `mean` with run-to-run CV
/// `cv`; from commit `step_at` on (if any) the true value is multiplied by `1 + step_pct/100`.
pub fn history(
    noise: &mut Noise,
    h: usize,
    commits: usize,
    repeats: usize,
    mean: f64,
    cv: f64,
    step: Option<(usize, f64)>,
) -> Vec<CommitRuns> {
    (0..commits)
        .map(|i| {
            let m = match step {
                Some((at, pct)) if i >= at => mean * (1.0 + pct / 100.0),
                _ => mean,
            };
            CommitRuns::new(sha(h, i), &noise.runs(m, cv, repeats))
        })
        .collect()
}

/// One metric of the FP8 KV-cache scenario: its baseline value per cell (c = 1, 4, 16), its
/// change in percent per cell, and its run-to-run CV.
struct Fp8Metric {
    metric: &'static str,
    stat: &'static str,
    base: [f64; 3],
    change_pct: [f64; 3],
    cv: f64,
}

/// Concurrency of the three cells.
pub const FP8_CONCURRENCY: [u64; 3] = [1, 4, 16];
/// Baseline commits in the FP8 scenario.
pub const FP8_BASELINE_COMMITS: usize = 8;
/// Runs per commit in the FP8 scenario (baseline and candidate).
pub const FP8_REPEATS: usize = 5;

/// The scenario: a vLLM change to an FP8 KV cache (contributor-reported; TP4, 8000 input /
/// 1000 output tokens, concurrency 1, 4, 16): throughput +2.3…+5.5 %, median TTFT +6.9…+11.1 %,
/// median E2E latency −3.1…−6.3 %. Baseline values are plausible for a 70B model on four H100s
/// (E2E ≈ TTFT + 999 · TPOT; output throughput ≈ c · 1000 / E2E). Run-to-run CVs, as measured
/// on a dedicated machine with fixed-concurrency runs of many prompts: 0.5 % for throughputs,
/// TPOT and median E2E, 1 % for median TTFT, 2 % for p95 TTFT.
fn fp8_metrics() -> Vec<Fp8Metric> {
    vec![
        Fp8Metric {
            metric: "output_throughput",
            stat: "value",
            base: [63.4, 203.8, 541.0],
            change_pct: [2.3, 3.9, 5.5],
            cv: 0.005,
        },
        Fp8Metric {
            metric: "request_throughput",
            stat: "value",
            base: [0.0634, 0.2038, 0.541],
            change_pct: [2.3, 3.9, 5.5],
            cv: 0.005,
        },
        Fp8Metric {
            metric: "ttft",
            stat: "p50",
            base: [780.0, 1150.0, 2600.0],
            change_pct: [6.9, 9.0, 11.1],
            cv: 0.01,
        },
        Fp8Metric {
            metric: "ttft",
            stat: "p95",
            base: [810.0, 1480.0, 3900.0],
            change_pct: [8.0, 10.5, 12.0],
            cv: 0.02,
        },
        Fp8Metric {
            metric: "tpot",
            stat: "p50",
            base: [15.0, 18.5, 27.0],
            // (E2E_new − TTFT_new) / 999 relative to the old TPOT.
            change_pct: [-3.66, -5.57, -7.64],
            cv: 0.005,
        },
        Fp8Metric {
            metric: "e2el",
            stat: "p50",
            base: [15765.0, 19631.5, 29573.0],
            change_pct: [-3.1, -4.7, -6.3],
            cv: 0.005,
        },
    ]
}

/// Which commit to generate as the candidate of the FP8 scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fp8Candidate {
    /// The FP8 KV-cache change.
    Fp8,
    /// A further commit drawn from the baseline distribution.
    BaselineLike,
}

/// The FP8 KV-cache scenario: one [`GroupInput`] per cell (c = 1, 4, 16), each with
/// [`FP8_BASELINE_COMMITS`] baseline commits of [`FP8_REPEATS`] runs and a candidate of
/// [`FP8_REPEATS`] runs. Series ids are `c{N}/{metric}/{stat}`.
pub fn fp8_kv_cache(seed: u64, candidate: Fp8Candidate) -> Vec<GroupInput> {
    let mut noise = Noise::new(seed);
    FP8_CONCURRENCY
        .iter()
        .enumerate()
        .map(|(cell, c)| {
            let series = fp8_metrics()
                .iter()
                .map(|m| {
                    let base = m.base[cell];
                    let history = (0..FP8_BASELINE_COMMITS)
                        .map(|i| {
                            CommitRuns::new(sha(cell, i), &noise.runs(base, m.cv, FP8_REPEATS))
                        })
                        .collect();
                    let (commit, value) = match candidate {
                        Fp8Candidate::Fp8 => {
                            ("fp8-kv-cache", base * (1.0 + m.change_pct[cell] / 100.0))
                        }
                        Fp8Candidate::BaselineLike => ("baseline-like", base),
                    };
                    SeriesInput {
                        series_id: format!("c{c}/{}/{}", m.metric, m.stat),
                        metric: m.metric.to_string(),
                        stat: m.stat.parse::<Stat>().expect("valid stat"),
                        slo_profile: None,
                        history,
                        candidate: Some(CommitRuns {
                            commit: commit.to_string(),
                            runs: noise
                                .runs(value, m.cv, FP8_REPEATS)
                                .into_iter()
                                .map(RunValue::new)
                                .collect(),
                        }),
                        following: Vec::new(),
                    }
                })
                .collect();
            GroupInput {
                series_key: "tp4-fp8-scenario".into(),
                cell_key: format!(
                    "max_concurrency={c};request_rate=inf;input_len=8000;output_len=1000"
                ),
                pinned_baseline: None,
                series,
            }
        })
        .collect()
}

/// One result of the FP8 scenario's cell `max_concurrency` in benchtrail's own upload format
/// (`results[]` of an upload): the scenario's configuration (H100 × 4, TP 4, Llama 3.3 70B,
/// vLLM), its cell (8000 input / 1000 output tokens, unbounded rate) and one value per series
/// of `group`, `value(k)` for its k-th series. What the server tests and the load benchmark
/// upload, so both send the scenario the engine's own test analyzes.
pub fn fp8_result_json(
    group: &GroupInput,
    max_concurrency: u64,
    value: impl Fn(usize) -> f64,
) -> serde_json::Value {
    let metrics: Vec<serde_json::Value> = group
        .series
        .iter()
        .enumerate()
        .map(|(k, s)| {
            serde_json::to_value(crate::metric::MetricValue::new(
                &s.metric,
                s.stat.clone(),
                value(k),
                None,
            ))
            .expect("a metric value serializes")
        })
        .collect();
    serde_json::json!({
        "cell": {"load": {"max_concurrency": max_concurrency, "request_rate": "inf"}, "input_len": 8000, "output_len": 1000},
        "configuration": {
            "hardware": {"accelerator": "NVIDIA H100 80GB HBM3", "accelerator_count": 4},
            "model": {"name": "meta-llama/Llama-3.3-70B-Instruct"},
            "engine": {"name": "vllm"},
            "parallelism": {"tensor_parallel_size": 4},
        },
        "metrics": metrics,
    })
}
