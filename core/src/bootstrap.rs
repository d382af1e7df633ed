//! 95 % percentile-bootstrap confidence intervals for p50 and p99 of `ttft`, `tpot`, `itl` and
//! `e2el`, from per-request samples; [`percentile_intervals`] gives the same bootstrap at any
//! percentile of one value per request (the capacity report's p95/p99 TTFT and E2E latency).
//!
//! **Resampling unit.** Requests are resampled, not individual values: the chunk gaps (`itl`)
//! of one request share its prompt, batch and moment in the run, so they are not independent;
//! resampling gaps would pretend there are thousands of independent observations and give
//! intervals that are too narrow. Each replicate draws as many successful requests as there
//! are, with replacement, and pools their values (a cluster bootstrap); for `ttft`, `tpot` and
//! `e2el` (one value per request) this is the ordinary bootstrap.
//!
//! **Estimator.** The statistic of a replicate is numpy's `linear` percentile of the pooled
//! values, computed without sorting: the original values are sorted once with their request,
//! and a replicate only sets how many copies of each request it holds, so the k-th smallest
//! pooled value is found in one pass over the sorted values. The interval is the 2.5th and
//! 97.5th (numpy `linear`) percentile of the replicate statistics.
//!
//! **Reproducibility and cost.** [`RESAMPLES`] = 1000 replicates per metric, each metric from
//! its own ChaCha8 stream seeded with [`SEED`], so a result's intervals never change between
//! uploads. Cost (measured by `core/tests/summaries.rs`, `bootstrap_cost_of_one_result`, a 60-request file
//! with 7,620 chunk gaps, all four metrics): see [`RESAMPLES`].

use crate::metric::{Interval, Stat};
use crate::samples::RequestSamples;
use crate::stats;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Replicates per interval. 1000 keeps the Monte-Carlo error of the 2.5/97.5 % bounds small
/// against the interval width, and costs ≈ 54 ms for one 60-request result (7,620 ITL gaps,
/// eight intervals) in an optimized build, ≈ 0.68 s unoptimized (`cargo test --release -p
/// benchtrail-core --test integration -- --nocapture summaries::bootstrap`, 2-core build
/// machine). The ITL walk over all pooled gaps dominates; cost grows linearly with requests ×
/// gaps.
pub const RESAMPLES: usize = 1000;

/// Seed of every bootstrap stream (ASCII "bench").
pub const SEED: u64 = 0x62656e6368;

/// Confidence level.
pub const LEVEL: f64 = 0.95;

/// The percentiles that get intervals.
pub const PERCENTILES: [f64; 2] = [50.0, 99.0];

/// The `method` text of every interval computed here.
pub fn method() -> String {
    format!("bootstrap-percentile, {RESAMPLES} resamples of requests, seed {SEED:#x}")
}

/// Intervals `(metric, stat, interval)` for p50 and p99 of each of `ttft`, `tpot`, `itl`,
/// `e2el` that has samples from at least two successful requests.
pub fn intervals(samples: &RequestSamples) -> Vec<(&'static str, Stat, Interval)> {
    let mut out = Vec::new();
    for metric in ["ttft", "tpot", "itl", "e2el"] {
        let Some(clusters) = clusters(samples, metric) else {
            continue;
        };
        let Some(bounds) = bootstrap(&clusters, &PERCENTILES) else {
            continue;
        };
        for (p, (low, high)) in PERCENTILES.iter().zip(bounds) {
            out.push((
                metric,
                Stat::from_percentile(*p),
                Interval {
                    low,
                    high,
                    level: LEVEL,
                    method: method(),
                },
            ));
        }
    }
    out
}

/// The values of each successful request (ms); `None` without the column or with fewer than
/// two requests holding values.
fn clusters(samples: &RequestSamples, metric: &str) -> Option<Vec<Vec<f64>>> {
    let ok = |i: usize| samples.success.get(i).copied().unwrap_or(false);
    let single = |col: &Option<Vec<Option<f64>>>| -> Option<Vec<Vec<f64>>> {
        Some(
            col.as_ref()?
                .iter()
                .enumerate()
                .filter(|(i, _)| ok(*i))
                .map(|(_, v)| v.iter().copied().collect())
                .collect(),
        )
    };
    let clusters: Vec<Vec<f64>> = match metric {
        "ttft" => single(&samples.ttft_ms)?,
        "tpot" => single(&samples.tpot_ms)?,
        "e2el" => single(&samples.e2el_ms)?,
        _ => samples
            .itl_ms
            .as_ref()?
            .iter()
            .enumerate()
            .filter(|(i, _)| ok(*i))
            .map(|(_, g)| g.clone())
            .collect(),
    };
    (clusters.iter().filter(|c| !c.is_empty()).count() >= 2).then_some(clusters)
}

/// Intervals of percentiles `percentiles` (0–100) of `values`, one value per request (TTFT or
/// E2E latency of each successful request, ms), by the same bootstrap as [`intervals`] (same
/// seed and resample count); `None` with fewer than two values. In the order of `percentiles`.
pub fn percentile_intervals(values: &[f64], percentiles: &[f64]) -> Option<Vec<Interval>> {
    if values.len() < 2 {
        return None;
    }
    let clusters: Vec<Vec<f64>> = values.iter().map(|v| vec![*v]).collect();
    Some(
        bootstrap(&clusters, percentiles)?
            .into_iter()
            .map(|(low, high)| Interval {
                low,
                high,
                level: LEVEL,
                method: method(),
            })
            .collect(),
    )
}

/// (low, high) for each of `percentiles`.
fn bootstrap(clusters: &[Vec<f64>], percentiles: &[f64]) -> Option<Vec<(f64, f64)>> {
    let m = clusters.len();
    let mut sorted: Vec<(f64, u32)> = clusters
        .iter()
        .enumerate()
        .flat_map(|(c, vs)| vs.iter().map(move |v| (*v, c as u32)))
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let sizes: Vec<usize> = clusters.iter().map(Vec::len).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut weights = vec![0usize; m];
    let mut replicates: Vec<Vec<f64>> = vec![Vec::with_capacity(RESAMPLES); percentiles.len()];
    for _ in 0..RESAMPLES {
        weights.fill(0);
        let mut pooled = 0;
        for _ in 0..m {
            let c = rng.gen_range(0..m as u32) as usize;
            weights[c] += 1;
            pooled += sizes[c];
        }
        if pooled == 0 {
            continue;
        }
        // The pooled order statistics each percentile needs: (lo, hi) ranks.
        let ranks: Vec<(usize, usize, f64)> = percentiles
            .iter()
            .map(|p| stats::rank(pooled, *p))
            .collect();
        let mut wanted: Vec<usize> = ranks.iter().flat_map(|r| [r.0, r.1]).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let values = order_statistics(&sorted, &weights, &wanted);
        let at = |k: usize| values[wanted.binary_search(&k).unwrap()];
        for (slot, (lo, hi, gamma)) in replicates.iter_mut().zip(ranks) {
            slot.push(stats::lerp(at(lo), at(hi), gamma));
        }
    }
    let bound = |xs: &Vec<f64>| -> Option<(f64, f64)> {
        let lo = (1.0 - LEVEL) / 2.0 * 100.0;
        Some((
            stats::percentile(xs, lo)?,
            stats::percentile(xs, 100.0 - lo)?,
        ))
    };
    replicates.iter().map(bound).collect()
}

/// The values at 0-based ranks `wanted` (ascending) of the multiset holding each value of
/// `sorted` `weights[cluster]` times.
fn order_statistics(sorted: &[(f64, u32)], weights: &[usize], wanted: &[usize]) -> Vec<f64> {
    let mut out = Vec::with_capacity(wanted.len());
    let mut seen = 0;
    let mut next = 0;
    for (v, c) in sorted {
        seen += weights[*c as usize];
        while next < wanted.len() && wanted[next] < seen {
            out.push(*v);
            next += 1;
        }
        if next == wanted.len() {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_statistics_equal_sorting_the_pooled_values() {
        let clusters = [vec![3.0, 1.0], vec![2.0], vec![5.0, 4.0, 0.5]];
        let weights = [2, 0, 1];
        let mut sorted: Vec<(f64, u32)> = clusters
            .iter()
            .enumerate()
            .flat_map(|(c, vs)| vs.iter().map(move |v| (*v, c as u32)))
            .collect();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        // Pooled: 3,1,3,1,5,4,0.5 → 0.5,1,1,3,3,4,5.
        assert_eq!(
            order_statistics(&sorted, &weights, &[0, 1, 2, 3, 6]),
            vec![0.5, 1.0, 1.0, 3.0, 5.0]
        );
    }

    #[test]
    fn intervals_are_deterministic_and_bracket_the_estimate() {
        let n = 60;
        let samples = RequestSamples {
            success: vec![true; n],
            ttft_ms: Some((0..n).map(|i| Some(10.0 + (i * 7 % 13) as f64)).collect()),
            itl_ms: Some((0..n).map(|i| vec![5.0 + (i % 5) as f64; 20]).collect()),
            ..Default::default()
        };
        let a = intervals(&samples);
        assert_eq!(a, intervals(&samples));
        assert_eq!(a.len(), 4);
        for (metric, stat, ci) in &a {
            assert!(ci.low <= ci.high, "{metric} {stat}");
            assert_eq!(ci.level, 0.95);
        }
        let p50 = stats::percentile(
            &samples
                .ttft_ms
                .as_ref()
                .unwrap()
                .iter()
                .flatten()
                .copied()
                .collect::<Vec<_>>(),
            50.0,
        )
        .unwrap();
        assert!(a[0].2.low <= p50 && p50 <= a[0].2.high);
    }
}
