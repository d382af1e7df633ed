//! The k-th smallest of the pairwise differences `c[j] − b[i]` of two samples without
//! building them: what the Hodges–Lehmann shift and its interval
//! ([`super::significance::request_shift`]) read.
//!
//! With 1,000 requests per side (the engine's `per_request_max_per_side`) there are a million
//! differences; building them and selecting four ranks (`select_nth_unstable`) took 8 MB and
//! 5–10 ms per metric, most of the analysis of an upload with per-request samples (issue 12's
//! data set: `decide` 130–185 ms of 18 cells). Here both samples are sorted once, and each rank
//! is found by narrowing, per row `c[j]`, the range of `b` whose differences can still hold
//! it (the matrix is sorted along both axes): each round takes as pivot the weighted median of
//! the rows' middle candidates, counts the differences below and at it in one pass over both
//! samples, and keeps the side that holds the rank (Johnson & Mizoguchi 1978, "Selecting the
//! Kth element in X + Y and X1 + X2 + … + Xm"; Monahan 1984 for the Hodges–Lehmann estimator).
//! About 30 rounds of `O(n_b + n_c)` per rank; the last few thousand candidates are selected
//! directly.
//!
//! **Exact.** Every difference is the same `f64` subtraction `c[j] − b[i]` the direct method
//! makes, and IEEE subtraction is monotone in each operand, so the rows and columns are sorted
//! in the computed values themselves: the result is bit for bit the direct method's (tested
//! below against it, with ties).

/// Candidates left at which the remaining ones are collected and selected directly.
const DIRECT_BELOW: usize = 4_096;

/// Two samples' pairwise differences `c[j] − b[i]`, ready to answer ranks.
pub(crate) struct PairwiseDifferences {
    /// The baseline sample, descending: along a row `c[j] − b[i]` then ascends.
    b_desc: Vec<f64>,
    /// The candidate sample, ascending: along a column the differences ascend.
    c_asc: Vec<f64>,
}

impl PairwiseDifferences {
    /// Sorts `b` and `c` (finite values: NaN has no place in the order).
    pub(crate) fn new(b: &[f64], c: &[f64]) -> PairwiseDifferences {
        let mut b_desc = b.to_vec();
        b_desc.sort_by(|x, y| y.total_cmp(x));
        let mut c_asc = c.to_vec();
        c_asc.sort_by(f64::total_cmp);
        PairwiseDifferences { b_desc, c_asc }
    }

    /// How many differences there are (`n_b · n_c`).
    pub(crate) fn len(&self) -> usize {
        self.b_desc.len() * self.c_asc.len()
    }

    fn at(&self, row: usize, col: usize) -> f64 {
        self.c_asc[row] - self.b_desc[col]
    }

    /// Per row, how many of its differences are below `p` (`strict`) or at most `p`: one pass,
    /// since the count falls as the row's `c` rises.
    fn counts(&self, p: f64, strict: bool, out: &mut [usize]) {
        let n = self.b_desc.len();
        let below = |d: f64| if strict { d < p } else { d <= p };
        let mut col = n;
        for (row, count) in out.iter_mut().enumerate() {
            while col > 0 && !below(self.at(row, col - 1)) {
                col -= 1;
            }
            *count = col;
        }
    }

    /// The `k`-th smallest difference (0-based), as sorting all of them would give it.
    ///
    /// # Panics
    /// When `k` is not below [`Self::len`].
    pub(crate) fn kth(&self, k: usize) -> f64 {
        assert!(k < self.len(), "rank {k} of {} differences", self.len());
        let rows = self.c_asc.len();
        // Per row, the columns still holding candidates: [lo, hi). Everything left of `lo`
        // ranks before `k`, everything from `hi` on after it.
        let mut lo = vec![0usize; rows];
        let mut hi = vec![self.b_desc.len(); rows];
        let (mut lt, mut le) = (vec![0usize; rows], vec![0usize; rows]);
        let mut middles: Vec<(f64, usize)> = Vec::with_capacity(rows);
        loop {
            let left: usize = lo.iter().zip(&hi).map(|(l, h)| h - l).sum();
            if left <= DIRECT_BELOW {
                let below: usize = lo.iter().sum();
                let mut rest: Vec<f64> = Vec::with_capacity(left);
                for row in 0..rows {
                    rest.extend((lo[row]..hi[row]).map(|col| self.at(row, col)));
                }
                return *rest.select_nth_unstable_by(k - below, f64::total_cmp).1;
            }
            // The weighted median of the rows' middle candidates: at least a quarter of the
            // candidates lie on each side of it.
            middles.clear();
            middles.extend(
                (0..rows)
                    .filter(|&row| hi[row] > lo[row])
                    .map(|row| (self.at(row, (lo[row] + hi[row]) / 2), hi[row] - lo[row])),
            );
            middles.sort_by(|x, y| x.0.total_cmp(&y.0));
            let mut weight = 0;
            let pivot = middles
                .iter()
                .find(|(_, w)| {
                    weight += w;
                    2 * weight >= left
                })
                .map(|m| m.0)
                .expect("candidates are left");
            self.counts(pivot, true, &mut lt);
            self.counts(pivot, false, &mut le);
            let (below, at_most): (usize, usize) = (lt.iter().sum(), le.iter().sum());
            if k < below {
                for (h, l) in hi.iter_mut().zip(&lt) {
                    *h = (*h).min(*l);
                }
            } else if k >= at_most {
                for (l, e) in lo.iter_mut().zip(&le) {
                    *l = (*l).max(*e);
                }
            } else {
                return pivot;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The direct method: every difference built and sorted.
    fn direct(b: &[f64], c: &[f64]) -> Vec<f64> {
        let mut d: Vec<f64> = c
            .iter()
            .flat_map(|y| b.iter().map(move |x| y - x))
            .collect();
        d.sort_by(f64::total_cmp);
        d
    }

    #[test]
    fn every_rank_is_the_direct_methods_with_ties_and_uneven_sides() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for case in 0..40 {
            let (nb, nc) = (rng.gen_range(1..120), rng.gen_range(1..120));
            // Latency-like values, half the cases rounded to a coarse grid: many ties.
            let coarse = case % 2 == 0;
            let mut draw = |n: usize| -> Vec<f64> {
                (0..n)
                    .map(|_| {
                        let x: f64 = rng.gen_range(5.0..50.0);
                        if coarse {
                            x.round()
                        } else {
                            x
                        }
                    })
                    .collect()
            };
            let (b, c) = (draw(nb), draw(nc));
            let all = direct(&b, &c);
            let diffs = PairwiseDifferences::new(&b, &c);
            assert_eq!(diffs.len(), all.len());
            for (k, want) in all.iter().enumerate() {
                assert_eq!(
                    diffs.kth(k).to_bits(),
                    want.to_bits(),
                    "case {case}, rank {k}"
                );
            }
        }
    }

    #[test]
    fn large_samples_narrow_before_selecting_and_agree_at_the_hodges_lehmann_ranks() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let b: Vec<f64> = (0..1000).map(|_| rng.gen_range(10.0..40.0)).collect();
        let c: Vec<f64> = (0..900).map(|_| rng.gen_range(12.0..45.0)).collect();
        let all = direct(&b, &c);
        let diffs = PairwiseDifferences::new(&b, &c);
        let m = all.len();
        for k in [0, 1, m / 2 - 1, m / 2, m / 3, 2 * m / 3, m - 2, m - 1] {
            assert_eq!(diffs.kth(k).to_bits(), all[k].to_bits(), "rank {k}");
        }
    }

    #[test]
    #[should_panic(expected = "rank 6 of 6 differences")]
    fn a_rank_past_the_end_is_a_bug() {
        PairwiseDifferences::new(&[1.0, 2.0], &[3.0, 4.0, 5.0]).kth(6);
    }
}
