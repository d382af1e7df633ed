//! Summary statistics computed the way the benchmark tools compute them, so that statistics
//! benchtrail derives from per-request samples equal the tool's own summary.

/// The arithmetic mean; `None` for no samples.
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Population standard deviation (numpy's `np.std`, ddof = 0), as vLLM, SGLang, AIPerf and
/// GenAI-Perf report it; `None` for no samples.
pub fn population_std(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    Some((xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64).sqrt())
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
    let rank = p / 100.0 * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let frac = rank - lo as f64;
    // numpy computes lo + (hi - lo) * frac.
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
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
}
