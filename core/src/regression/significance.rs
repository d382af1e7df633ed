//! Significance tests of one candidate commit against its baseline, and the per-request shift.
//!
//! Every function takes plain slices of values in the metric's unit and returns a [`TestOutcome`]
//! whose numbers are all finite: a degenerate input (zero spread, too few values) gives an
//! outcome that says so in `note` instead of a NaN or an infinity.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The test (or decision rule) behind an outcome, a finding or one side of a trade-off.
/// Serialized in snake_case (`welch_t`, `prediction_interval`, ...), the names the stored
/// analysis and the API have always used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// Welch's unequal-variance t test on run values (Welch 1947).
    WelchT,
    /// The candidate commit's mean against the prediction interval of the baseline commits'
    /// means ([`commit_mean_prediction`]).
    PredictionInterval,
    /// Student's t of the candidate against a pinned level, with the run-to-run spread of the
    /// runs the baseline would otherwise be.
    PinnedT,
    /// No run-to-run spread in the baseline: decided on the effect alone.
    ZeroSpread,
    /// One value per side: described, never tested.
    EffectOnly,
    /// The prediction interval on a metric family's index (mean log value of its statistics,
    /// [`super::family`]).
    FamilyIndex,
    /// E-Divisive change-point detection (Matteson & James 2014).
    EDivisive,
    /// A trade-off: throughput better while latency or goodput worse.
    Tradeoff,
    /// A series of the baseline absent from the candidate.
    Missing,
    /// Mann–Whitney U on per-request values (Mann & Whitney 1947): description only.
    MannWhitneyU,
}

impl Test {
    /// Decided without a significance test (zero spread, or one value per side).
    pub fn is_untested(self) -> bool {
        matches!(self, Test::ZeroSpread | Test::EffectOnly)
    }

    /// The snake_case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Test::WelchT => "welch_t",
            Test::PredictionInterval => "prediction_interval",
            Test::PinnedT => "pinned_t",
            Test::ZeroSpread => "zero_spread",
            Test::EffectOnly => "effect_only",
            Test::FamilyIndex => "family_index",
            Test::EDivisive => "e_divisive",
            Test::Tradeoff => "tradeoff",
            Test::Missing => "missing",
            Test::MannWhitneyU => "mann_whitney_u",
        }
    }
}

/// The result of one test of "candidate differs from baseline".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TestOutcome {
    /// `welch_t`, `prediction_interval`, `pinned_t`, `zero_spread` or `effect_only`.
    pub test: Test,
    /// Mean of the baseline values, in the metric's unit.
    pub baseline_mean: f64,
    /// Mean of the candidate values, in the metric's unit.
    pub candidate_mean: f64,
    /// `candidate_mean − baseline_mean`, in the metric's unit.
    pub delta_abs: f64,
    /// Confidence interval of `delta_abs` at `level` (metric's unit); `None` when the test has
    /// no spread to build one from.
    pub delta_ci: Option<(f64, f64)>,
    /// The test statistic (t), when there is one.
    pub statistic: Option<f64>,
    /// Degrees of freedom of the statistic's reference distribution.
    pub df: Option<f64>,
    /// Two-sided p-value, when the test has one.
    pub p_value: Option<f64>,
    /// For `prediction_interval`: the interval at `level` a new baseline-like value falls in.
    pub prediction_interval: Option<(f64, f64)>,
    /// Confidence level of `delta_ci` and `prediction_interval`.
    pub level: f64,
    /// Number of baseline and candidate values used.
    pub n_baseline: usize,
    /// Number of candidate values used.
    pub n_candidate: usize,
    /// Why the outcome is degenerate, when it is.
    pub note: Option<String>,
    /// The scale the statistic was computed on: `log` for a prediction interval on the
    /// natural logarithms of a positive metric (latencies, throughputs, goodput), whose
    /// interval is then multiplicative around the level; `linear` otherwise, and for analyses
    /// stored before the field existed.
    #[serde(default)]
    pub scale: Scale,
}

/// The scale of a test's values.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// The metric's own unit: a symmetric interval `level ± q · s`.
    #[default]
    Linear,
    /// Natural logarithms of the values: the interval is `exp(mean ln ± q · s_ln)`, always
    /// positive and wider above than below, as the spread of latencies and throughputs is.
    Log,
}

/// Arithmetic mean (callers guarantee a non-empty slice).
pub(crate) fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance with n − 1 in the denominator (0 for fewer than 2 values).
pub(crate) fn sample_var(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64
}

fn t_dist(df: f64) -> StudentsT {
    StudentsT::new(0.0, 1.0, df).expect("df > 0 is checked by the callers")
}

/// Two-sided p-value of `t` under Student's t with `df` degrees of freedom.
fn two_sided_p(t: f64, df: f64) -> f64 {
    (2.0 * t_dist(df).sf(t.abs())).clamp(0.0, 1.0)
}

/// The `1 − (1 − level)/2` quantile of Student's t with `df` degrees of freedom.
fn t_quantile(level: f64, df: f64) -> f64 {
    t_dist(df).inverse_cdf(1.0 - (1.0 - level) / 2.0)
}

fn zero_spread(base: &[f64], cand: &[f64], level: f64) -> TestOutcome {
    let (b, c) = (mean(base), mean(cand));
    TestOutcome {
        test: Test::ZeroSpread,
        baseline_mean: b,
        candidate_mean: c,
        delta_abs: c - b,
        delta_ci: Some((c - b, c - b)),
        statistic: None,
        df: None,
        p_value: None,
        prediction_interval: None,
        level,
        n_baseline: base.len(),
        n_candidate: cand.len(),
        scale: Scale::Linear,
        note: Some(if b == c {
            "every baseline and candidate value is identical: no change".to_string()
        } else {
            "baseline and candidate values have zero run-to-run spread, so the difference is exact \
             and a significance test is not defined; decided on the size of the effect alone"
                .to_string()
        }),
    }
}

/// Welch's unequal-variances t-test (Welch 1947, "The generalization of Student's problem when
/// several different population variances are involved", Biometrika 34) of the candidate's
/// repeated runs against the baseline's runs.
///
/// `t = (mean_c − mean_b) / sqrt(s_b²/n_b + s_c²/n_c)`, with Welch–Satterthwaite degrees of
/// freedom `(s_b²/n_b + s_c²/n_c)² / ((s_b²/n_b)²/(n_b−1) + (s_c²/n_c)²/(n_c−1))`; the interval
/// of the difference is `delta ± t_{df, 1−(1−level)/2} · se`. Needs ≥ 2 values per side.
/// When both sides have zero spread the outcome is `zero_spread`.
///
/// `cand_var_floor`: the candidate's sample variance is raised to at least this (benchtrail
/// passes the baseline's pooled within-commit run-to-run variance). A spread estimated from a
/// handful of repeats is often far too small by chance, and Welch's approximation is liberal in
/// the far tail exactly then; with 5 repeats this floor is what keeps noise-only histories
/// quiet (see `core/tests/regression_rates.rs`). 0 disables it (plain Welch).
pub fn welch(base: &[f64], cand: &[f64], level: f64, cand_var_floor: f64) -> TestOutcome {
    assert!(
        base.len() >= 2 && cand.len() >= 2,
        "Welch needs two values per side"
    );
    let (nb, nc) = (base.len() as f64, cand.len() as f64);
    let raw_vc = sample_var(cand);
    let floored = raw_vc < cand_var_floor;
    let (vb, vc) = (sample_var(base) / nb, raw_vc.max(cand_var_floor) / nc);
    let se2 = vb + vc;
    if se2 <= 0.0 {
        return zero_spread(base, cand, level);
    }
    let se = se2.sqrt();
    let df = se2 * se2 / (vb * vb / (nb - 1.0) + vc * vc / (nc - 1.0));
    let (b, c) = (mean(base), mean(cand));
    let t = (c - b) / se;
    let q = t_quantile(level, df);
    TestOutcome {
        test: Test::WelchT,
        baseline_mean: b,
        candidate_mean: c,
        delta_abs: c - b,
        delta_ci: Some((c - b - q * se, c - b + q * se)),
        statistic: Some(t),
        df: Some(df),
        p_value: Some(two_sided_p(t, df)),
        prediction_interval: None,
        level,
        n_baseline: base.len(),
        n_candidate: cand.len(),
        scale: Scale::Linear,
        note: floored.then(|| {
            "the candidate's run-to-run variance was below the baseline's within-commit variance \
             and was raised to it"
                .to_string()
        }),
    }
}

/// A single candidate value against the spread of the baseline history: the prediction
/// interval of one new observation, `mean_b ± t_{n−1, 1−(1−level)/2} · s_b · sqrt(1 + 1/n)`,
/// and the matching statistic `t = (x − mean_b) / (s_b · sqrt(1 + 1/n))` with `n − 1` degrees
/// of freedom. This is the z-score test of Conbench's lookback z-score and Bencher's `t_test`
/// threshold (a t rather than a normal reference, because the spread is estimated from few
/// values). Needs ≥ 2 baseline values; zero spread gives `zero_spread`.
pub fn prediction(base: &[f64], cand: f64, level: f64) -> TestOutcome {
    assert!(
        base.len() >= 2,
        "a prediction interval needs two baseline values"
    );
    let n = base.len() as f64;
    let s = sample_var(base).sqrt();
    if s <= 0.0 {
        return zero_spread(base, &[cand], level);
    }
    let b = mean(base);
    let scale = s * (1.0 + 1.0 / n).sqrt();
    let df = n - 1.0;
    let t = (cand - b) / scale;
    let q = t_quantile(level, df);
    // The interval of the difference: the candidate is one draw, the baseline mean is estimated.
    let se_diff = s * (1.0 + 1.0 / n).sqrt();
    TestOutcome {
        test: Test::PredictionInterval,
        baseline_mean: b,
        candidate_mean: cand,
        delta_abs: cand - b,
        delta_ci: Some((cand - b - q * se_diff, cand - b + q * se_diff)),
        statistic: Some(t),
        df: Some(df),
        p_value: Some(two_sided_p(t, df)),
        prediction_interval: Some((b - q * scale, b + q * scale)),
        level,
        n_baseline: base.len(),
        n_candidate: 1,
        scale: Scale::Linear,
        note: None,
    }
}

/// One new commit mean against the history of commit means: the test benchtrail runs on every
/// series and on every metric family's index (see `super::family`).
///
/// * **Level**: the mean `m` of the last `window` values of `history` (oldest first).
/// * **Spread**: the pooled variance of `history` within consecutive blocks of `window` values
///   counted back from the newest, `s² = Σ_blocks Σ (x − block mean)² / Σ_blocks (len − 1)`.
///   Older blocks add degrees of freedom (a spread from 10 commits has 9, a t with 9 degrees of
///   freedom needs 4.3 standard errors for p = 0.001, one from 30 commits in three blocks has
///   27 and needs 3.7), and a step between blocks does not inflate it.
/// * **The new mean's variance** is `s² + extra_var`: a commit mean is one draw of what the
///   baseline's commit means are draws of; `extra_var` adds what its fewer repeats cost
///   (`within-commit variance · (1/r_candidate − 1/r_baseline)`, never negative, computed by
///   the caller), so the first of three announced repeats is not judged as a mean of three.
/// * `t = (x − m) / sqrt(s² (1 + 1/k) + extra_var)` with `k` = values in the level and
///   `Σ (len − 1)` degrees of freedom: the prediction interval of one new observation
///   (Conbench's lookback z-score and Bencher's `t_test`, with a t reference since the spread is
///   estimated), on commit means rather than runs.
///
/// Fewer than 2 history values, or no degrees of freedom: `effect_only`. Zero spread:
/// `zero_spread`.
///
/// The spread is this series' own, on purpose (measured for issue 9, BENCHMARKS.md "Raising
/// the power"): an empirical-Bayes moderated variance over the other families of the
/// configuration (Smyth 2004, limma) was anti-conservative, because those families are about
/// 1.2 independent variance estimates rather than five and TTFT's spread is not theirs; and
/// pooling the within-commit spread of repeats (a one-way random-effects model) adds degrees
/// of freedom only where the between-commit variance is estimated at 0, at up to twice the
/// level when commits really vary.
pub fn commit_mean_prediction(
    history: &[f64],
    window: usize,
    cand: f64,
    extra_var: f64,
    level: f64,
) -> TestOutcome {
    let k = window.max(1).min(history.len());
    let recent = &history[history.len() - k..];
    if history.len() < 2 {
        return effect_only(recent, &[cand], level);
    }
    let (mut ss, mut dof) = (0.0, 0.0);
    let mut end = history.len();
    while end > 0 {
        let start = end.saturating_sub(window.max(1));
        let block = &history[start..end];
        if block.len() >= 2 {
            ss += sample_var(block) * (block.len() - 1) as f64;
            dof += (block.len() - 1) as f64;
        }
        end = start;
    }
    if dof == 0.0 {
        return effect_only(recent, &[cand], level);
    }
    let var = ss / dof;
    let b = mean(recent);
    let scale2 = var * (1.0 + 1.0 / k as f64) + extra_var.max(0.0);
    if scale2 <= 0.0 {
        return zero_spread(recent, &[cand], level);
    }
    let scale = scale2.sqrt();
    let t = (cand - b) / scale;
    let q = t_quantile(level, dof);
    TestOutcome {
        test: Test::PredictionInterval,
        baseline_mean: b,
        candidate_mean: cand,
        delta_abs: cand - b,
        delta_ci: Some((cand - b - q * scale, cand - b + q * scale)),
        statistic: Some(t),
        df: Some(dof),
        p_value: Some(two_sided_p(t, dof)),
        prediction_interval: Some((b - q * scale, b + q * scale)),
        level,
        n_baseline: k,
        n_candidate: 1,
        scale: Scale::Linear,
        note: None,
    }
}

/// [`commit_mean_prediction`] on the natural logarithms of a positive metric's commit means:
/// the test benchtrail runs on every latency and throughput series.
///
/// Run-to-run variation of latencies and throughputs is multiplicative (a slow machine makes a
/// run some percent slower at every statistic: the run-level factors of
/// [`super::realistic`]), and a symmetric interval in the unit can reach below zero on a short
/// noisy history (an E2E p90 of 1,447 ms got `[-252.8, 3147.2]` ms). On the logarithms the interval is
/// `[exp(ln_level − q·s), exp(ln_level + q·s)]`, with `ln_level` the mean logarithm of the last
/// `window` commit means and `s` as in [`commit_mean_prediction`] on the logarithms: always
/// positive, and the same test the metric families already use (`super::family`).
///
/// * `extra_var` is in the unit squared (what the candidate's fewer repeats add); it enters on
///   the log scale divided by the squared level (the delta method, `var ln X ≈ var X / E[X]²`).
/// * `baseline_mean`, `candidate_mean` and `delta_abs` stay arithmetic, in the unit, as every
///   other test reports them. `delta_ci` is the change as a ratio, `[cand / hi − 1, cand / lo −
///   1]`, times the level `m`: as a percentage of the level it never reaches −100 % (a
///   difference `cand − hi` from a wide interval would, e.g. −5,290 % for a TTFT p50 on five
///   commits), and it holds 0 exactly when the candidate is inside the interval, as in the
///   linear test.
///
/// `None` when a value is not positive, or when the test on the logarithms has no spread or no
/// degrees of freedom (the caller then runs the linear test, which says why).
pub fn commit_mean_prediction_log(
    history: &[f64],
    window: usize,
    cand: f64,
    extra_var: f64,
    level: f64,
) -> Option<TestOutcome> {
    let positive = |x: f64| x > 0.0 && x.is_finite();
    // Fewer than two commit means: the linear test's `effect_only` says so.
    if history.len() < 2 || !positive(cand) || !history.iter().all(|&x| positive(x)) {
        return None;
    }
    let k = window.max(1).min(history.len());
    let level_unit = mean(&history[history.len() - k..]);
    let logs: Vec<f64> = history.iter().map(|x| x.ln()).collect();
    let extra_log = extra_var.max(0.0) / (level_unit * level_unit);
    let o = commit_mean_prediction(&logs, window, cand.ln(), extra_log, level);
    if o.test != Test::PredictionInterval {
        return None;
    }
    let (lo, hi) = o.prediction_interval.map(|(l, h)| (l.exp(), h.exp()))?;
    Some(TestOutcome {
        test: Test::PredictionInterval,
        baseline_mean: level_unit,
        candidate_mean: cand,
        delta_abs: cand - level_unit,
        delta_ci: Some((
            level_unit * (cand / hi - 1.0),
            level_unit * (cand / lo - 1.0),
        )),
        statistic: o.statistic,
        df: o.df,
        p_value: o.p_value,
        prediction_interval: Some((lo, hi)),
        level,
        n_baseline: k,
        n_candidate: 1,
        note: None,
        scale: Scale::Log,
    })
}

/// The one-sided p-value of `t` with `df` degrees of freedom in the direction `sign` (+1: the
/// candidate is larger): `P(T ≥ t)` for +1, `P(T ≤ t)` for −1.
pub fn one_sided_p(t: f64, df: f64, sign: f64) -> f64 {
    let d = t_dist(df);
    if sign >= 0.0 { d.sf(t) } else { d.cdf(t) }.clamp(0.0, 1.0)
}

/// A pinned baseline with too few runs to show a spread of its own, against the candidate's
/// runs: the level comes from the pinned runs, the run-to-run spread from the base branch's
/// recent history (`spread`: the history's per-run values, ≥ 2 of them).
///
/// `t = (mean_c − mean_p) / (s_h · sqrt(1/n_p + 1/n_c))` with `n_h − 1` degrees of freedom,
/// where `s_h` is the sample standard deviation of the history's values: the difference of two
/// means of independent runs with a common run-to-run variance that the history estimates
/// (the two-sample t with a variance from an external sample). Zero spread in the history gives
/// `zero_spread`.
pub fn pinned(pin: &[f64], cand: &[f64], spread: &[f64], level: f64) -> TestOutcome {
    assert!(
        !pin.is_empty() && !cand.is_empty() && spread.len() >= 2,
        "a pinned test needs pinned and candidate values and two history values"
    );
    let s = sample_var(spread).sqrt();
    if s <= 0.0 {
        return zero_spread(pin, cand, level);
    }
    let (b, c) = (mean(pin), mean(cand));
    let (n_p, n_c) = (pin.len() as f64, cand.len() as f64);
    let se = s * (1.0 / n_p + 1.0 / n_c).sqrt();
    let df = (spread.len() - 1) as f64;
    let t = (c - b) / se;
    let q = t_quantile(level, df);
    TestOutcome {
        test: Test::PinnedT,
        baseline_mean: b,
        candidate_mean: c,
        delta_abs: c - b,
        delta_ci: Some((c - b - q * se, c - b + q * se)),
        statistic: Some(t),
        df: Some(df),
        p_value: Some(two_sided_p(t, df)),
        prediction_interval: None,
        level,
        n_baseline: pin.len(),
        n_candidate: cand.len(),
        scale: Scale::Linear,
        note: Some(format!(
            "the pinned baseline's level, with the run-to-run spread of {} recent base-branch runs",
            spread.len()
        )),
    }
}

/// One value per side and nothing to measure run-to-run variation with: the effect alone.
pub fn effect_only(base: &[f64], cand: &[f64], level: f64) -> TestOutcome {
    let (b, c) = (mean(base), mean(cand));
    TestOutcome {
        test: Test::EffectOnly,
        baseline_mean: b,
        candidate_mean: c,
        delta_abs: c - b,
        delta_ci: None,
        statistic: None,
        df: None,
        p_value: None,
        prediction_interval: None,
        level,
        n_baseline: base.len(),
        n_candidate: cand.len(),
        scale: Scale::Linear,
        note: Some(
            "effect only: one value per side and no history, so run-to-run variation is unknown \
             and no significance test was made"
                .to_string(),
        ),
    }
}

/// A shift between the per-request values of the baseline runs and of the candidate runs.
///
/// Requests within one run share the server's state (batch composition, cache, clocks): they
/// are not independent samples, so this p-value is optimistic. It describes a shift and is
/// attached to a finding; it never opens one by itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RequestShift {
    /// Always `mann_whitney_u` (Mann & Whitney 1947), normal approximation with tie correction.
    pub test: Test,
    /// U of the candidate sample.
    pub u: f64,
    /// Standardized U.
    pub z: f64,
    /// Two-sided p-value of the normal approximation (optimistic, see above).
    pub p_value: f64,
    /// Hodges–Lehmann estimate of the shift (candidate − baseline), metric's unit: the median of
    /// all pairwise differences.
    pub shift: f64,
    /// Distribution-free interval of the shift at `level` (Moses/Lehmann: order statistics of
    /// the pairwise differences at ranks from the normal approximation of U).
    pub shift_ci: (f64, f64),
    /// Shift in percent of the baseline median.
    pub shift_pct: Option<f64>,
    /// Confidence level.
    pub level: f64,
    /// Requests used per side (after the deterministic thinning to `max_per_side`).
    pub n_baseline: usize,
    /// Requests used on the candidate side.
    pub n_candidate: usize,
    /// The caveat, in one sentence.
    pub note: String,
    /// The shift in one sentence ([`RequestShift::describe`]); empty until the caller, which
    /// knows the metric, sets it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub summary: String,
}

impl RequestShift {
    /// One sentence for people, e.g. `per request, median TTFT shift +43.2 ms (95 % interval
    /// +41.0 to +45.5 ms, +121 % of the baseline median; Hodges–Lehmann over 180 baseline and
    /// 60 candidate requests, which are not independent)`. `name` is the metric's short name
    /// (`TTFT`), `unit` its unit (`ms`).
    pub fn describe(&self, name: &str, unit: &str) -> String {
        let pct = self.shift_pct.map_or(String::new(), |p| {
            format!(", {p:+.0} % of the baseline median")
        });
        format!(
            "per request, {name} shift {:+.1} {unit} ({:.0} % interval {:+.1} to {:+.1} {unit}{pct}; \
             Hodges–Lehmann over {} baseline and {} candidate requests, which are not independent)",
            self.shift,
            self.level * 100.0,
            self.shift_ci.0,
            self.shift_ci.1,
            self.n_baseline,
            self.n_candidate
        )
    }
}

/// Keeps at most `max` values by taking every k-th (deterministic, order-preserving).
pub(crate) fn thin(xs: &[f64], max: usize) -> Vec<f64> {
    if xs.len() <= max {
        return xs.to_vec();
    }
    let step = xs.len() as f64 / max as f64;
    (0..max).map(|i| xs[(i as f64 * step) as usize]).collect()
}

/// Mann–Whitney U and the Hodges–Lehmann shift with its interval. Each side is thinned to
/// `max_per_side` values (pairwise differences are `n_b · n_c`). `None` when a side has fewer
/// than 2 finite values.
pub fn request_shift(
    base: &[f64],
    cand: &[f64],
    level: f64,
    max_per_side: usize,
) -> Option<RequestShift> {
    let b: Vec<f64> = base.iter().copied().filter(|x| x.is_finite()).collect();
    let c: Vec<f64> = cand.iter().copied().filter(|x| x.is_finite()).collect();
    let (b, c) = (thin(&b, max_per_side), thin(&c, max_per_side));
    if b.len() < 2 || c.len() < 2 {
        return None;
    }
    let (n1, n2) = (b.len() as f64, c.len() as f64);
    // Ranks over the pooled sample, ties get their mean rank.
    let mut pooled: Vec<(f64, bool)> = b
        .iter()
        .map(|&x| (x, false))
        .chain(c.iter().map(|&x| (x, true)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = pooled.len();
    let (mut rank_sum_c, mut tie_term, mut i) = (0.0, 0.0, 0);
    while i < n {
        let mut j = i + 1;
        while j < n && pooled[j].0 == pooled[i].0 {
            j += 1;
        }
        let r = (i + 1 + j) as f64 / 2.0;
        let t = (j - i) as f64;
        tie_term += t * t * t - t;
        rank_sum_c += r * pooled[i..j].iter().filter(|p| p.1).count() as f64;
        i = j;
    }
    let u = rank_sum_c - n2 * (n2 + 1.0) / 2.0;
    let nn = n1 + n2;
    let var_u = n1 * n2 / 12.0 * ((nn + 1.0) - tie_term / (nn * (nn - 1.0)));
    let z = if var_u > 0.0 {
        (u - n1 * n2 / 2.0) / var_u.sqrt()
    } else {
        0.0
    };
    let normal = Normal::new(0.0, 1.0).expect("standard normal");
    let p = (2.0 * normal.sf(z.abs())).clamp(0.0, 1.0);
    // The pairwise differences c − b, read at four ranks without being built.
    let diffs = super::pairwise::PairwiseDifferences::new(&b, &c);
    let m = diffs.len();
    let q = normal.inverse_cdf(1.0 - (1.0 - level) / 2.0);
    let half = q * (n1 * n2 * (nn + 1.0) / 12.0).sqrt();
    let lo_rank = ((n1 * n2 / 2.0 - half).floor().max(0.0) as usize).min(m - 1);
    let hi_rank = ((n1 * n2 / 2.0 + half).ceil() as usize).clamp(lo_rank, m - 1);
    let nth = |k: usize| -> f64 { diffs.kth(k) };
    let shift = if m % 2 == 1 {
        nth(m / 2)
    } else {
        (nth(m / 2 - 1) + nth(m / 2)) / 2.0
    };
    let (lo, hi) = (nth(lo_rank), nth(hi_rank));
    let median_b = crate::stats::percentile(&b, 50.0).expect("non-empty");
    Some(RequestShift {
        test: Test::MannWhitneyU,
        u,
        z,
        p_value: p,
        shift,
        shift_ci: (lo, hi),
        shift_pct: (median_b != 0.0).then(|| shift / median_b.abs() * 100.0),
        level,
        n_baseline: b.len(),
        n_candidate: c.len(),
        note: "requests within one run are not independent: this describes a shift and never \
               opens an alert by itself"
            .to_string(),
        summary: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_matches_a_hand_computation() {
        // b: mean 10, s² = 1 (n 4); c: mean 12, s² = 4 (n 4).
        let b = [9.0, 10.0, 11.0, 10.0 + 0.0];
        let b_var = sample_var(&b);
        let c = [10.0, 12.0, 14.0, 12.0];
        let o = welch(&b, &c, 0.95, 0.0);
        let se = (b_var / 4.0 + sample_var(&c) / 4.0).sqrt();
        assert!((o.statistic.unwrap() - 2.0 / se).abs() < 1e-12);
        assert!(o.p_value.unwrap() > 0.0 && o.p_value.unwrap() < 0.2);
        assert!(o.delta_ci.unwrap().0 < 2.0 && o.delta_ci.unwrap().1 > 2.0);
    }

    #[test]
    fn pinned_uses_the_historys_spread_around_the_pinned_level() {
        // Pinned 100, candidate 110, history spread s = 2 (values 98, 100, 102; df 2):
        // t = 10 / (2 · sqrt(1 + 1)) = 3.5355...
        let o = pinned(&[100.0], &[110.0], &[98.0, 100.0, 102.0], 0.95);
        assert_eq!(o.test, Test::PinnedT);
        assert_eq!(
            (o.baseline_mean, o.delta_abs, o.df),
            (100.0, 10.0, Some(2.0))
        );
        assert!((o.statistic.unwrap() - 10.0 / (2.0 * 2f64.sqrt())).abs() < 1e-12);
        let p = o.p_value.unwrap();
        // Student's t, df 2: P(|T| > 3.5355) = 1 − t/sqrt(t² + 2) = 0.0714...
        let t = o.statistic.unwrap();
        assert!((p - (1.0 - t / (t * t + 2.0).sqrt())).abs() < 1e-9, "{p}");
        assert_eq!(
            pinned(&[5.0], &[6.0], &[3.0, 3.0], 0.95).test,
            Test::ZeroSpread
        );
    }

    #[test]
    fn the_log_scale_interval_of_a_short_noisy_history_stays_positive() {
        // Five commit means of an E2E p90 in ms, as on a short CI history. Expected values from
        // an independent computation (Python, Student's t with 4 df by bisection on its
        // closed-form CDF): q = 10.306254681807658, ln-level = mean ln, s_ln·√(1 + 1/5).
        let history = [1100.0, 1447.0, 1800.0, 1250.0, 1650.0];
        let linear = commit_mean_prediction(&history, 10, 1500.0, 0.0, 0.9995);
        let (lin_lo, _) = linear.prediction_interval.unwrap();
        assert!((lin_lo - -1768.762639691373).abs() < 1e-6, "{lin_lo}");
        let o = commit_mean_prediction_log(&history, 10, 1500.0, 0.0, 0.9995).unwrap();
        assert_eq!((o.test, o.scale), (Test::PredictionInterval, Scale::Log));
        let (lo, hi) = o.prediction_interval.unwrap();
        assert!((lo - 148.66916456007155).abs() < 1e-6, "{lo}");
        assert!((hi - 13689.581463813092).abs() < 1e-4, "{hi}");
        assert!((o.statistic.unwrap() - 0.2286251155623535).abs() < 1e-12);
        assert!((o.p_value.unwrap() - 0.8303731019760616).abs() < 1e-9);
        assert_eq!((o.df, o.n_baseline), (Some(4.0), 5));
        // Level, candidate and change stay arithmetic, in the unit.
        assert!((o.baseline_mean - 1449.4).abs() < 1e-9);
        assert!((o.delta_abs - 50.6).abs() < 1e-9);
        // The change's interval as a ratio to a baseline-like value, times the level: above
        // −100 % of the level however wide the interval, 0 inside it.
        let (ci_lo, ci_hi) = o.delta_ci.unwrap();
        assert!(
            (ci_lo - 1449.4 * (1500.0 / hi - 1.0)).abs() < 1e-9,
            "{ci_lo}"
        );
        assert!(
            (ci_hi - 1449.4 * (1500.0 / lo - 1.0)).abs() < 1e-9,
            "{ci_hi}"
        );
        assert!(ci_lo > -1449.4 && ci_lo < 0.0 && ci_hi > 0.0);
        // Not positive, or no spread on the logarithms: the caller's linear test decides.
        assert!(commit_mean_prediction_log(&[0.0, 1.0, 2.0], 10, 1.0, 0.0, 0.9995).is_none());
        assert!(commit_mean_prediction_log(&history, 10, -1.0, 0.0, 0.9995).is_none());
        assert!(commit_mean_prediction_log(&[3.0, 3.0], 10, 4.0, 0.0, 0.9995).is_none());
        assert_eq!(linear.scale, Scale::Linear);
    }

    #[test]
    fn zero_spread_is_finite_and_explained() {
        let o = welch(&[5.0, 5.0, 5.0], &[6.0, 6.0], 0.95, 0.0);
        assert_eq!(o.test, Test::ZeroSpread);
        assert_eq!(o.delta_abs, 1.0);
        assert!(o.p_value.is_none() && o.statistic.is_none());
        assert!(o.note.unwrap().contains("zero run-to-run spread"));
    }

    #[test]
    fn mann_whitney_sees_a_shift() {
        let b: Vec<f64> = (0..50).map(|i| 100.0 + i as f64).collect();
        let c: Vec<f64> = (0..50).map(|i| 120.0 + i as f64).collect();
        let s = request_shift(&b, &c, 0.95, 1000).unwrap();
        assert_eq!(s.shift, 20.0);
        assert!(s.shift_ci.0 <= 20.0 && s.shift_ci.1 >= 20.0);
        assert!(s.p_value < 0.01);
    }
}
