//! Change points over a series' history: E-Divisive means (Matteson & James 2014, "A
//! nonparametric approach for multiple change point analysis of multivariate data", JASA 109),
//! the method of MongoDB's signal-processing-algorithms and of Apache Otava (formerly Hunter).
//!
//! Input: one value per commit, oldest first (the mean of the commit's valid runs), in the
//! metric's unit. Output: the indices where a new regime starts (index `i` = the first commit of
//! the new regime), each with the permutation p-value that admitted it.
//!
//! The divergence between a left segment `X = x[s..τ)` and a right segment `Y = x[τ..κ)` is
//! `Q = (n·m/(n+m)) · (2/(n·m) Σ|x−y|^a − 1/C(n,2) Σ|x−x'|^a − 1/C(m,2) Σ|y−y'|^a)` with exponent
//! `a` ∈ (0, 2) (`a = 1` by default). For one segment the best split maximizes `Q` over every
//! `τ` **and** every `κ` (the fix of Otava PR #96: the older code held `κ` fixed at the segment
//! end, which misses a change followed by another). Significance: the values of the segment are
//! permuted `permutations` times with a ChaCha8 generator seeded with `seed`; the p-value is
//! `(1 + #{permuted max Q ≥ observed max Q}) / (1 + permutations)`. The permutation loop stops as
//! soon as the p-value can no longer reach `alpha` (Besag & Clifford 1991 sequential Monte Carlo
//! test: the decision is the same as with every permutation). Segments are split hierarchically,
//! the strongest candidate first, until the test fails.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Parameters of [`e_divisive`]. Defaults in [`ChangePointSettings::default`]. Each field is
/// bounded in project settings (`crate::settings`), with the reason on the field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ChangePointSettings {
    /// Run the change-point scan at all.
    pub enabled: bool,
    /// Significance level of the permutation test. Default 0.001, the `max_pvalue` Otava uses by
    /// default: one false change point per thousand noise-only segments tested. In (0, 0.1],
    /// and at least `1 / (1 + permutations)`, the smallest p-value the test can give: a
    /// smaller level could never be met and no change point would ever be found.
    pub alpha: f64,
    /// Permutations per test. Default 999, so the smallest attainable p-value is 1/1000 =
    /// `alpha`. In [99, 9999]: each permutation is a full best-split scan of the segment
    /// (quadratic in its length), so 9999 keeps a scan of a long history within seconds, and
    /// fewer than 99 cannot resolve a p-value below 0.01.
    #[serde(deserialize_with = "crate::serde_int::deserialize")]
    pub permutations: u32,
    /// Seed of the ChaCha8 generator that draws the permutations (fixed: results reproduce).
    #[serde(deserialize_with = "crate::serde_int::deserialize")]
    pub seed: u64,
    /// Fewest commits on each side of a change point. Default 5: the downstream Orion reports
    /// (cloud-bulldozer/orion #263, #269) show change points flagged at the 2nd sample of a short
    /// window; about 5 commits on each side keeps a single outlier from being a "regime". In
    /// [2, 50]: a segment needs two values for a within-segment distance (a smaller value is
    /// read as 2), and above 50 no change could be found before 100 commits of history.
    #[serde(deserialize_with = "crate::serde_int::deserialize")]
    pub min_segment: usize,
    /// Exponent `a` of the distance `|x − y|^a`, in (0, 2) (Matteson & James: at 2 the
    /// divergence only compares means and the test loses its power; at 0 it is constant).
    /// Default 1.
    pub exponent: f64,
}

impl Default for ChangePointSettings {
    fn default() -> Self {
        ChangePointSettings {
            enabled: true,
            alpha: 0.001,
            permutations: 999,
            seed: 0x6265_6e63_6874_7261, // "benchtra"
            min_segment: 5,
            exponent: 1.0,
        }
    }
}

/// One change point found by [`e_divisive`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangePoint {
    /// Index of the first value of the new regime.
    pub index: usize,
    /// The divergence `Q` of the split.
    pub q: f64,
    /// Permutation p-value (an upper bound when the loop stopped early, which never happens for
    /// an accepted change point).
    pub p_value: f64,
    /// Permutations actually drawn.
    pub permutations: u32,
}

/// `W[a][b]` = Σ_{a ≤ i < j < b} |x_i − x_j|^e, for 0 ≤ a ≤ b ≤ n, flattened row-major.
fn within_sums(x: &[f64], e: f64) -> Vec<f64> {
    let n = x.len();
    let d = |i: usize, j: usize| {
        let v = (x[i] - x[j]).abs();
        if e == 1.0 {
            v
        } else {
            v.powf(e)
        }
    };
    let w = n + 1;
    let mut out = vec![0.0; w * w];
    for b in 1..=n {
        // col = Σ_{a ≤ i < b−1} d(i, b−1), built for a from b−1 down to 0.
        let mut col = 0.0;
        for a in (0..b).rev() {
            if a < b - 1 {
                col += d(a, b - 1);
            }
            out[a * w + b] = out[a * w + b - 1] + col;
        }
    }
    out
}

/// Best split `(τ, Q)` of segment `x` (local indices), or `None` when too short.
fn best_split(x: &[f64], min: usize, e: f64) -> Option<(usize, f64)> {
    let n = x.len();
    let min = min.max(2);
    if n < 2 * min {
        return None;
    }
    let w = n + 1;
    let ws = within_sums(x, e);
    let row0 = &ws[..w];
    let mut best: Option<(usize, f64)> = None;
    let mut best_q = f64::MIN;
    for tau in min..=n - min {
        let left = tau as f64;
        let wl = row0[tau] / (left * (left - 1.0) / 2.0);
        let row_tau = &ws[tau * w..(tau + 1) * w];
        for kappa in tau + min..=n {
            let right = (kappa - tau) as f64;
            let w_right = row_tau[kappa];
            let wr = w_right / (right * (right - 1.0) / 2.0);
            let between = row0[kappa] - row0[tau] - w_right;
            // (n·m/(n+m)) · (2·between/(n·m) − wl − wr)
            let q = (2.0 * between - left * right * (wl + wr)) / (left + right);
            if q > best_q {
                best_q = q;
                best = Some((tau, q));
            }
        }
    }
    best
}

/// Hierarchical E-Divisive with a permutation test, see the module documentation. Returns the
/// change points sorted by index. Non-finite values are not allowed (callers drop them).
pub fn e_divisive(values: &[f64], s: &ChangePointSettings) -> Vec<ChangePoint> {
    let mut rng = ChaCha8Rng::seed_from_u64(s.seed);
    let mut found: Vec<ChangePoint> = Vec::new();
    // Stop as soon as `exceed` makes p = (1 + exceed)/(1 + P) exceed alpha.
    let max_exceed = (s.alpha * (s.permutations as f64 + 1.0) - 1.0)
        .floor()
        .max(0.0) as u32;
    loop {
        let mut bounds: Vec<usize> = found.iter().map(|c| c.index).collect();
        bounds.push(0);
        bounds.push(values.len());
        bounds.sort_unstable();
        bounds.dedup();
        // The strongest candidate over all current segments.
        let mut cand: Option<(usize, usize, usize, f64)> = None; // (start, end, tau, q)
        for win in bounds.windows(2) {
            let (a, b) = (win[0], win[1]);
            if let Some((tau, q)) = best_split(&values[a..b], s.min_segment, s.exponent) {
                if cand.is_none_or(|c| q > c.3) {
                    cand = Some((a, b, a + tau, q));
                }
            }
        }
        let Some((a, b, tau, q)) = cand else { break };
        let mut perm = values[a..b].to_vec();
        let (mut exceed, mut drawn) = (0u32, 0u32);
        let mut stopped = false;
        for _ in 0..s.permutations {
            perm.shuffle(&mut rng);
            drawn += 1;
            let pq = best_split(&perm, s.min_segment, s.exponent).map_or(f64::MIN, |x| x.1);
            if pq >= q {
                exceed += 1;
                if exceed > max_exceed {
                    stopped = true;
                    break;
                }
            }
        }
        let p = (1.0 + exceed as f64) / (1.0 + drawn as f64);
        if stopped || p > s.alpha {
            break;
        }
        found.push(ChangePoint {
            index: tau,
            q,
            p_value: p,
            permutations: drawn,
        });
    }
    found.sort_by_key(|c| c.index);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_sums_match_brute_force() {
        let x = [1.0, 4.0, 2.0, 8.0, 5.0];
        let ws = within_sums(&x, 1.0);
        for a in 0..=5 {
            for b in a..=5 {
                let mut s = 0.0;
                for i in a..b {
                    for j in i + 1..b {
                        s += (x[i] - x[j]).abs();
                    }
                }
                assert!((ws[a * 6 + b] - s).abs() < 1e-12, "{a} {b}");
            }
        }
    }

    #[test]
    fn finds_a_clean_step_and_nothing_in_a_constant() {
        let mut x: Vec<f64> = (0..30).map(|i| 10.0 + (i % 3) as f64 * 0.1).collect();
        x.extend((0..20).map(|i| 12.0 + (i % 3) as f64 * 0.1));
        let cps = e_divisive(&x, &ChangePointSettings::default());
        assert_eq!(cps.iter().map(|c| c.index).collect::<Vec<_>>(), vec![30]);
        assert!(e_divisive(&[3.0; 40], &ChangePointSettings::default()).is_empty());
    }
}
