//! Summary statistics computed the way the benchmark tools compute them, so that statistics
//! benchtrail derives from per-request samples equal the tool's own summary.
//!
//! vLLM, SGLang, AIPerf and GenAI-Perf use numpy. To reproduce their numbers bit for bit this
//! module follows numpy's order of floating-point operations (numpy 1.22+ / 2.x):
//! sums are pairwise ([`numpy_sum`]), `np.mean` is that sum divided by the count, `np.std`
//! is `sqrt(sum((x - mean)²) / n)`, `np.median` averages the two middle values with `np.mean`,
//! and `np.percentile` (method `linear`) interpolates with numpy's two-sided `_lerp`.

/// `np.add.reduce` over a contiguous float64 array: numpy's pairwise summation
/// (`DOUBLE_pairwise_sum` in `loops_utils.h.src`): below 8 values a plain loop, up to 128
/// values eight interleaved accumulators combined as `((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))`
/// plus the remainder, above that the two halves (split at a multiple of 8) recursively.
/// The reduction's initial value is the identity `-0.0`, which changes no non-zero sum.
pub fn numpy_sum(xs: &[f64]) -> f64 {
    -0.0 + pairwise(xs)
}

fn pairwise(a: &[f64]) -> f64 {
    const BLOCK: usize = 128;
    let n = a.len();
    if n < 8 {
        let mut res = -0.0;
        for x in a {
            res += x;
        }
        res
    } else if n <= BLOCK {
        let mut r = [0.0; 8];
        r.copy_from_slice(&a[..8]);
        let whole = n - n % 8;
        let mut i = 8;
        while i < whole {
            for (j, acc) in r.iter_mut().enumerate() {
                *acc += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for x in &a[whole..] {
            res += x;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise(&a[..n2]) + pairwise(&a[n2..])
    }
}

/// The arithmetic mean as `np.mean` computes it ([`numpy_sum`] ÷ n); `None` for no samples.
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| numpy_sum(xs) / xs.len() as f64)
}

/// Population standard deviation as `np.std` computes it (ddof = 0), as vLLM, SGLang, AIPerf
/// and GenAI-Perf report it; `None` for no samples.
pub fn population_std(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    let squares: Vec<f64> = xs.iter().map(|x| (x - m) * (x - m)).collect();
    Some((numpy_sum(&squares) / xs.len() as f64).sqrt())
}

/// `np.median`: the middle value, or `np.mean` of the two middle values; `None` for no samples.
/// It can differ from [`percentile`] at 50 in the last bit (vLLM writes both).
pub fn median(xs: &[f64]) -> Option<f64> {
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => mean(&sorted[n / 2 - 1..=n / 2]),
    }
}

/// Percentile `p` (0–100) by linear interpolation between closest ranks: numpy's default
/// `np.percentile(xs, p)` (method `linear`), which vLLM and SGLang use. `None` for no samples.
pub fn percentile(xs: &[f64], p: f64) -> Option<f64> {
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    percentile_sorted(&sorted, p)
}

/// [`percentile`] on samples already sorted ascending.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let (lo, hi, gamma) = rank(sorted.len(), p);
    Some(lerp(sorted[lo], sorted[hi], gamma))
}

/// numpy's `linear` virtual index `(n − 1)·(p / 100)`, split into the neighbouring ranks and
/// the fraction between them.
pub(crate) fn rank(n: usize, p: f64) -> (usize, usize, f64) {
    let virtual_index = (n - 1) as f64 * (p / 100.0);
    let lo = virtual_index.floor();
    let gamma = virtual_index - lo;
    let lo = lo as usize;
    (lo, (lo + 1).min(n - 1), gamma)
}

/// numpy's `_lerp(a, b, t)`: `a + (b − a)·t`, but `b − (b − a)·(1 − t)` when `t ≥ 0.5`.
pub(crate) fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_matches_numpy_linear() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&xs, 50.0), Some(2.5));
        assert_eq!(percentile(&xs, 0.0), Some(1.0));
        assert_eq!(percentile(&xs, 100.0), Some(4.0));
        assert_eq!(percentile(&[5.0], 99.0), Some(5.0));
        assert_eq!(percentile(&[], 99.0), None);
    }

    #[test]
    fn std_is_population() {
        assert_eq!(population_std(&[1.0, 3.0]), Some(1.0));
    }

    #[test]
    fn median_averages_the_middle_pair() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn pairwise_sum_groups_like_numpy() {
        // 9 values: eight accumulators combined pairwise, then the remainder.
        let xs: Vec<f64> = (1..=9).map(|i| f64::from(i) * 0.1).collect();
        let r = &xs;
        let expected = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])) + r[8];
        assert_eq!(numpy_sum(&xs), expected);
        let big: Vec<f64> = (0..300).map(|i| f64::from(i) * 0.37).collect();
        assert_eq!(
            numpy_sum(&big),
            pairwise(&big[..144]) + pairwise(&big[144..])
        );
    }
}
