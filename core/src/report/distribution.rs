//! Per-request distributions of a result for a reader: the empirical cumulative distribution
//! (CDF) of a per-request metric (TTFT, TPOT of each successful request), thinned to a bounded
//! number of exact order statistics so a page can draw both sides of a comparison.

use crate::samples::RequestSamples;

/// The per-request metrics a distribution is drawn for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerRequest {
    /// Time to first token, ms.
    Ttft,
    /// Time per output token after the first, ms.
    Tpot,
}

impl PerRequest {
    /// The metric's name in the vocabulary (`ttft`, `tpot`).
    pub fn metric(self) -> &'static str {
        match self {
            PerRequest::Ttft => "ttft",
            PerRequest::Tpot => "tpot",
        }
    }

    /// The values of the successful requests of `s` that have this metric, ms; `None` when the
    /// tool wrote no per-request values of it.
    pub fn values(self, s: &RequestSamples) -> Option<Vec<f64>> {
        let column = match self {
            PerRequest::Ttft => s.ttft_ms.as_ref()?,
            PerRequest::Tpot => s.tpot_ms.as_ref()?,
        };
        Some(
            column
                .iter()
                .zip(&s.success)
                .filter_map(|(v, ok)| v.filter(|v| *ok && v.is_finite()))
                .collect(),
        )
    }
}

/// One point of an empirical CDF: the value of an order statistic and the share of requests
/// at or below it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CdfPoint {
    /// The value, in the metric's unit.
    pub value: f64,
    /// Share of requests with a value at or below it, in (0, 1].
    pub share: f64,
}

/// The empirical CDF of `values` as at most `max_points` exact order statistics: all of them
/// when there are few, else evenly spaced ranks from the smallest to the largest (both always
/// included). Empty for no values; `max_points` below 2 counts as 2.
pub fn empirical_cdf(values: &[f64], max_points: usize) -> Vec<CdfPoint> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n == 0 {
        return Vec::new();
    }
    let m = max_points.max(2).min(n);
    let mut ranks: Vec<usize> = (0..m)
        .map(|k| {
            if m == 1 {
                n - 1
            } else {
                ((k as f64) * (n - 1) as f64 / (m - 1) as f64).round() as usize
            }
        })
        .collect();
    ranks.dedup();
    ranks
        .into_iter()
        .map(|i| CdfPoint {
            value: sorted[i],
            share: (i + 1) as f64 / n as f64,
        })
        .collect()
}

/// The nearest-rank `q` quantile of `values` (`q` in (0, 1]: the smallest value with at least
/// that share of values at or below it); `None` for no values.
pub fn nearest_rank(values: &[f64], q: f64) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_when_few_and_the_extremes_always() {
        let cdf = empirical_cdf(&[3.0, 1.0, 2.0], 100);
        assert_eq!(
            cdf,
            [
                CdfPoint {
                    value: 1.0,
                    share: 1.0 / 3.0
                },
                CdfPoint {
                    value: 2.0,
                    share: 2.0 / 3.0
                },
                CdfPoint {
                    value: 3.0,
                    share: 1.0
                },
            ]
        );
        let many: Vec<f64> = (0..1000).map(f64::from).collect();
        let cdf = empirical_cdf(&many, 11);
        assert_eq!(cdf.len(), 11);
        assert_eq!(
            cdf[0],
            CdfPoint {
                value: 0.0,
                share: 0.001
            }
        );
        assert_eq!(
            cdf[5],
            CdfPoint {
                value: 500.0,
                share: 0.501
            }
        );
        assert_eq!(
            cdf[10],
            CdfPoint {
                value: 999.0,
                share: 1.0
            }
        );
        assert!(empirical_cdf(&[], 10).is_empty());
        assert_eq!(
            empirical_cdf(&[f64::NAN, 4.0], 10),
            [CdfPoint {
                value: 4.0,
                share: 1.0
            }]
        );
    }

    #[test]
    fn nearest_rank_quantiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(nearest_rank(&v, 0.5), Some(50.0));
        assert_eq!(nearest_rank(&v, 0.99), Some(99.0));
        assert_eq!(nearest_rank(&v, 1.0), Some(100.0));
        assert_eq!(nearest_rank(&[7.0], 0.01), Some(7.0));
        assert_eq!(nearest_rank(&[], 0.5), None);
    }

    #[test]
    fn failed_requests_and_missing_values_are_left_out() {
        let s = RequestSamples {
            success: vec![true, false, true, true],
            ttft_ms: Some(vec![Some(10.0), Some(1.0), None, Some(30.0)]),
            ..RequestSamples::default()
        };
        assert_eq!(PerRequest::Ttft.values(&s), Some(vec![10.0, 30.0]));
        assert_eq!(PerRequest::Tpot.values(&s), None);
    }
}
