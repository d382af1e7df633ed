//! Summary statistics recomputed from per-request samples the way `vllm bench serve` computes
//! them (`calculate_metrics` in vllm/benchmarks/serve.py), so that benchtrail can check a
//! file's own summary and summarize samples that come without one.
//!
//! vLLM collects, over successful requests, the lists `ttfts`, `tpots` (requests with more
//! than one output token), `itls` (all chunk gaps pooled) and `e2els` in **seconds**, and writes
//! `np.mean(x) * 1000`, `np.median(x) * 1000`, `np.std(x) * 1000` and
//! `np.percentile(x, p) * 1000`. Samples are stored in ms (`s * 1000`), so this module first
//! divides by 1000 to get seconds back, then follows numpy's operations ([`crate::stats`]) and
//! multiplies by 1000 last. On the example files the result is bit-identical to the file's
//! summary for every metric and statistic (`core/tests/summaries.rs`). TPOT is recomputed from
//! e2el and ttft in seconds ([`tpot_seconds`]): the stored `tpot_ms / 1000` is not always the
//! tool's value to the last bit, which left `std_tpot_ms` 1–3 ulp off (rel. < 1e-15) in 5 of 9
//! files. Where `ms / 1000` does not give the tool's seconds back exactly (not seen in the
//! example files) results stay within about 1e-15 relative.

use crate::samples::RequestSamples;
use crate::stats;

/// One metric's summary, in ms.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// `ttft`, `tpot`, `itl` or `e2el`.
    pub metric: &'static str,
    /// Number of samples (requests, or chunk gaps for `itl`).
    pub n: u64,
    /// `np.mean × 1000`.
    pub mean: f64,
    /// `np.median × 1000` (vLLM's `median_*_ms`).
    pub median: f64,
    /// `np.std × 1000` (population).
    pub std: f64,
    /// `(p, np.percentile(x, p) × 1000)` for each requested p.
    pub percentiles: Vec<(f64, f64)>,
}

/// The samples of one metric vLLM summarizes, in seconds, over successful requests.
/// `None` when the column is missing.
pub fn seconds(samples: &RequestSamples, metric: &str) -> Option<Vec<f64>> {
    let ok = |i: usize| samples.success.get(i).copied().unwrap_or(false);
    let per_request = |col: &Option<Vec<Option<f64>>>| {
        col.as_ref().map(|c| {
            c.iter()
                .enumerate()
                .filter(|(i, _)| ok(*i))
                .filter_map(|(_, v)| v.map(|ms| ms / 1000.0))
                .collect()
        })
    };
    match metric {
        "ttft" => per_request(&samples.ttft_ms),
        "tpot" => samples.tpot_ms.as_ref().map(|c| {
            (0..c.len())
                .filter(|i| ok(*i))
                .filter_map(|i| tpot_seconds(samples, i))
                .collect()
        }),
        "e2el" => per_request(&samples.e2el_ms),
        "itl" => samples.itl_ms.as_ref().map(|lists| {
            lists
                .iter()
                .enumerate()
                .filter(|(i, _)| ok(*i))
                .flat_map(|(_, gaps)| gaps.iter().map(|ms| ms / 1000.0))
                .collect()
        }),
        _ => None,
    }
}

/// TPOT of request `i` in seconds as vLLM computes it, `(latency − ttft) / (output_len − 1)`
/// from the seconds `e2el_ms / 1000` and `ttft_ms / 1000` when those and the output length are
/// known (then it is bit-identical to vLLM's), else `tpot_ms / 1000`. `None` where the request
/// has no TPOT (at most one output token).
pub fn tpot_seconds(samples: &RequestSamples, i: usize) -> Option<f64> {
    let stored = samples.tpot_ms.as_ref()?.get(i).copied().flatten()?;
    let at = |c: &Option<Vec<Option<f64>>>| c.as_ref().and_then(|c| c.get(i).copied().flatten());
    let len = samples
        .output_tokens
        .as_ref()
        .and_then(|c| c.get(i).copied().flatten());
    match (at(&samples.e2el_ms), at(&samples.ttft_ms), len) {
        (Some(e2el), Some(ttft), Some(len)) if len > 1 => {
            Some((e2el / 1000.0 - ttft / 1000.0) / (len - 1) as f64)
        }
        _ => Some(stored / 1000.0),
    }
}

/// vLLM's summary of `ttft`, `tpot`, `itl`, `e2el` (those with samples) at `percentiles`.
/// With no sample vLLM writes 0.0 placeholders; here the metric is left out instead.
pub fn vllm_summaries(samples: &RequestSamples, percentiles: &[f64]) -> Vec<Summary> {
    ["ttft", "tpot", "itl", "e2el"]
        .into_iter()
        .filter_map(|metric| {
            let xs = seconds(samples, metric).filter(|xs| !xs.is_empty())?;
            let mut sorted = xs.clone();
            sorted.sort_by(f64::total_cmp);
            Some(Summary {
                metric,
                n: xs.len() as u64,
                mean: stats::mean(&xs)? * 1000.0,
                median: stats::median(&xs)? * 1000.0,
                std: stats::population_std(&xs)? * 1000.0,
                percentiles: percentiles
                    .iter()
                    .map(|&p| (p, stats::percentile_sorted(&sorted, p).unwrap() * 1000.0))
                    .collect(),
            })
        })
        .collect()
}
