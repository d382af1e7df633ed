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
//! pooled value is found by a walk over the sorted values. The walk starts where the
//! percentile lies in the original sample (a `Pivot`: how many values of each request lie
//! below it, counted once), since a replicate's percentile lies near it: a 7,000-request
//! `--save-detailed` file pools 900,000 chunk gaps, and its ITL p50 is a few thousand steps from
//! its pivot instead of 450,000 from the smallest gap. The interval is the 2.5th and 97.5th
//! (numpy `linear`) percentile of the replicate statistics. The search is exact: the same
//! replicates give the same intervals as sorting each pooled sample.
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
/// against the interval width, and costs ≈ 1.6 ms for one 60-request result (7,620 ITL gaps,
/// eight intervals) in an optimized build (`cargo test --release -p benchtrail-core --test
/// integration -- --nocapture summaries::bootstrap`, 2-core build machine; 54 ms when every
/// walk started at the smallest value). A replicate costs one draw and, per percentile, one
/// multiply-add per request (`Pivot::below`) plus its walk from the pivot, so the cost grows
/// with the requests and barely with their gaps: the bootstrap of a 7,111-request file
/// (903,000 gaps) takes about 0.1 s of a 0.8 s upload (BENCHMARKS.md "Large uploads").
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

/// The values of each successful request (ms), borrowed from `samples`; `None` without the
/// column or with fewer than two requests holding values.
fn clusters<'s>(samples: &'s RequestSamples, metric: &str) -> Option<Vec<&'s [f64]>> {
    let ok = |i: usize| samples.success.get(i).copied().unwrap_or(false);
    let single = |col: &'s Option<Vec<Option<f64>>>| -> Option<Vec<&'s [f64]>> {
        Some(
            col.as_ref()?
                .iter()
                .enumerate()
                .filter(|(i, _)| ok(*i))
                .map(|(_, v)| v.as_slice())
                .collect(),
        )
    };
    let clusters: Vec<&[f64]> = match metric {
        "ttft" => single(&samples.ttft_ms)?,
        "tpot" => single(&samples.tpot_ms)?,
        "e2el" => single(&samples.e2el_ms)?,
        _ => samples
            .itl_ms
            .as_ref()?
            .iter()
            .enumerate()
            .filter(|(i, _)| ok(*i))
            .map(|(_, g)| g.as_slice())
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
    let clusters: Vec<&[f64]> = values.chunks(1).collect();
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
fn bootstrap(clusters: &[&[f64]], percentiles: &[f64]) -> Option<Vec<(f64, f64)>> {
    let m = clusters.len();
    let (values, owners) = sorted_with_owners(clusters);
    let pivots: Vec<Pivot> = percentiles
        .iter()
        .map(|p| Pivot::new(&owners, m, stats::rank(values.len(), *p).0))
        .collect();
    let sizes: Vec<usize> = clusters.iter().map(|c| c.len()).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut weights = vec![0u32; m];
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
        for ((slot, p), pivot) in replicates.iter_mut().zip(percentiles).zip(&pivots) {
            // The pooled order statistics the percentile needs: (lo, hi) ranks.
            let (lo, hi, gamma) = stats::rank(pooled, *p);
            let below = pivot.below(&weights);
            let at = |k| pivot.value_at_rank(&values, &owners, &weights, below, k);
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

/// Every value of `clusters` in ascending order (`f64::total_cmp`; equal values in cluster
/// order), and the cluster each came from. Sorted as `(value, cluster)` pairs, which become
/// the values in place: the peak is 20 bytes per value (16 of the pairs, 4 of the owners),
/// 9 MB for the 903,000 chunk gaps of a 25 MB `--save-detailed` file; apart, so that a walk
/// reads 4 bytes per pooled value, not 16.
fn sorted_with_owners(clusters: &[&[f64]]) -> (Vec<f64>, Vec<u32>) {
    let mut sorted: Vec<(f64, u32)> = Vec::with_capacity(clusters.iter().map(|c| c.len()).sum());
    for (c, vs) in clusters.iter().enumerate() {
        sorted.extend(vs.iter().map(|v| (*v, c as u32)));
    }
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let owners = sorted.iter().map(|(_, c)| *c).collect();
    // Collected into the pairs' own buffer (same alignment), then shrunk to fit.
    let mut values: Vec<f64> = sorted.into_iter().map(|(v, _)| v).collect();
    values.shrink_to_fit();
    (values, owners)
}

/// Where a walk over the sorted pooled values starts: index `at` of the sorted values, and
/// how many values of each request lie before it (`counts[request]`), counted once per
/// bootstrap.
struct Pivot {
    at: usize,
    counts: Vec<u32>,
}

impl Pivot {
    /// The pivot at index `at` of the sorted values (`owners[i]`: the request of sorted value
    /// `i`, one of `m`).
    fn new(owners: &[u32], m: usize, at: usize) -> Pivot {
        let mut counts = vec![0u32; m];
        for owner in &owners[..at] {
            counts[*owner as usize] += 1;
        }
        Pivot { at, counts }
    }

    /// How many pooled values lie before the pivot when request `c` is drawn `weights[c]`
    /// times.
    fn below(&self, weights: &[u32]) -> usize {
        self.counts
            .iter()
            .zip(weights)
            .map(|(n, w)| *n as usize * *w as usize)
            .sum()
    }

    /// The value at 0-based rank `k` of the pooled multiset that holds each of `values`
    /// (sorted ascending; value `i` of request `owners[i]`) `weights[owners[i]]` times, where
    /// `below` ([`Pivot::below`]) of them lie before the pivot: found walking up or down from
    /// the pivot. `k` must be below the pooled count (else the largest value).
    fn value_at_rank(
        &self,
        values: &[f64],
        owners: &[u32],
        weights: &[u32],
        below: usize,
        k: usize,
    ) -> f64 {
        let mut below = below;
        if k >= below {
            // Up: the first value whose pooled copies reach past rank k.
            for i in self.at..values.len() {
                below += weights[owners[i] as usize] as usize;
                if k < below {
                    return values[i];
                }
            }
            values[values.len() - 1]
        } else {
            // Down: the first value (from the pivot) with at most k pooled values before it.
            for i in (0..self.at).rev() {
                below -= weights[owners[i] as usize] as usize;
                if k >= below {
                    return values[i];
                }
            }
            values[0]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sorted values of `clusters` and their owners, as [`bootstrap`] keeps them.
    fn sorted(clusters: &[Vec<f64>]) -> (Vec<f64>, Vec<u32>) {
        let slices: Vec<&[f64]> = clusters.iter().map(Vec::as_slice).collect();
        sorted_with_owners(&slices)
    }

    #[test]
    fn values_sort_with_their_owners_equal_values_in_cluster_order() {
        let clusters = [
            vec![3.0, 1.0],
            vec![],
            vec![1.0, -0.0, 0.0],
            vec![f64::NAN, 1.0],
        ];
        let (values, owners) = sorted(&clusters);
        assert_eq!(values[..6], [-0.0, 0.0, 1.0, 1.0, 1.0, 3.0]);
        assert!(values[0].is_sign_negative() && values[6].is_nan());
        assert_eq!(owners, [2, 2, 0, 2, 3, 0, 3]);
    }

    /// The value at every rank from every pivot, by [`Pivot::value_at_rank`].
    fn from_every_pivot(clusters: &[Vec<f64>], weights: &[u32], pooled: usize) -> Vec<Vec<f64>> {
        let (values, owners) = sorted(clusters);
        (0..values.len())
            .map(|at| {
                let pivot = Pivot::new(&owners, clusters.len(), at);
                let below = pivot.below(weights);
                (0..pooled)
                    .map(|k| pivot.value_at_rank(&values, &owners, weights, below, k))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_walk_from_any_pivot_finds_the_pooled_order_statistic() {
        let clusters = [vec![3.0, 1.0], vec![2.0], vec![5.0, 4.0, 0.5]];
        // Pooled: 3,1,3,1,5,4,0.5 → 0.5,1,1,3,3,4,5.
        let pooled = vec![0.5, 1.0, 1.0, 3.0, 3.0, 4.0, 5.0];
        for (at, found) in from_every_pivot(&clusters, &[2, 0, 1], 7)
            .into_iter()
            .enumerate()
        {
            assert_eq!(found, pooled, "walked from sorted index {at}");
        }
    }

    #[test]
    fn walks_equal_sorting_at_every_rank_of_random_replicates() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..50 {
            let m = rng.gen_range(2..12);
            let clusters: Vec<Vec<f64>> = (0..m)
                .map(|_| {
                    (0..rng.gen_range(0..6))
                        .map(|_| f64::from(rng.gen_range(0..20u32)))
                        .collect()
                })
                .collect();
            let weights: Vec<u32> = (0..m).map(|_| rng.gen_range(0..4)).collect();
            let mut pooled: Vec<f64> = clusters
                .iter()
                .zip(&weights)
                .flat_map(|(vs, w)| (0..*w).flat_map(move |_| vs.iter().copied()))
                .collect();
            pooled.sort_by(f64::total_cmp);
            for found in from_every_pivot(&clusters, &weights, pooled.len()) {
                assert_eq!(found, pooled);
            }
        }
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
