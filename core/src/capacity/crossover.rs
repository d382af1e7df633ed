//! The finish-time crossover of a trade-off: a candidate that starts later (higher TTFT) but
//! streams faster (lower TPOT) finishes an answer of `N` output tokens at
//! `TTFT + (N − 1)·TPOT`; it ties with its baseline at
//!
//! `N* = 1 + (TTFT_cand − TTFT_base) / (TPOT_base − TPOT_cand)`
//!
//! and finishes sooner for every longer answer (`shared/notes/validation-method.md`, "A
//! configuration that starts sooner can finish later"). From the medians (`p50`) of TTFT and
//! TPOT, ms.

use crate::metric::Stat;
use crate::result::BenchResult;
use serde::{Deserialize, Serialize};

/// Median TTFT and TPOT of one side, ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Medians {
    /// Median time to first token, ms.
    pub ttft_ms: f64,
    /// Median time per output token (excl. the first), ms.
    pub tpot_ms: f64,
}

/// A later-start, faster-stream trade-off and the length above which the candidate wins.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Crossover {
    /// Baseline medians.
    pub baseline: Medians,
    /// Candidate medians.
    pub candidate: Medians,
    /// `TTFT_cand − TTFT_base`, ms, > 0.
    pub starts_later_ms: f64,
    /// `TPOT_base − TPOT_cand`, ms per token, > 0.
    pub streams_faster_ms: f64,
    /// `N*`, output tokens (> 1): both finish together at this length.
    pub n_star: f64,
    /// `⌈N*⌉`: the candidate finishes sooner for every answer of more than this many output
    /// tokens (see [`sentence`]).
    pub longer_than_tokens: u64,
}

/// The stored medians (`p50`) of `ttft` and `tpot` of `result`.
pub fn medians_of(result: &BenchResult) -> Option<Medians> {
    let p50 = Stat::from_percentile(50.0);
    let median = |name: &str| {
        result
            .metrics
            .iter()
            .find(|m| m.name == name && m.stat == p50 && m.slo_profile.is_none())
            .map(|m| m.value)
    };
    Some(Medians {
        ttft_ms: median("ttft")?,
        tpot_ms: median("tpot")?,
    })
}

/// The crossover of `candidate` against `baseline`; `None` unless the candidate starts later
/// (`TTFT` higher) and streams faster (`TPOT` lower): otherwise one side is at least as fast
/// at every length, or the other way round, and there is no trade-off.
pub fn crossover(baseline: Medians, candidate: Medians) -> Option<Crossover> {
    let starts_later_ms = candidate.ttft_ms - baseline.ttft_ms;
    let streams_faster_ms = baseline.tpot_ms - candidate.tpot_ms;
    if !(starts_later_ms > 0.0 && streams_faster_ms > 0.0) {
        return None;
    }
    let n_star = 1.0 + starts_later_ms / streams_faster_ms;
    if !n_star.is_finite() {
        return None;
    }
    Some(Crossover {
        baseline,
        candidate,
        starts_later_ms,
        streams_faster_ms,
        n_star,
        longer_than_tokens: whole_tokens_up(n_star),
    })
}

/// `⌈n⌉`, but a value within 1e-9 (relative) above a whole number is that number: medians of
/// 48 ms and 1.6 ms/token give `N* = 31.000000000000007` in binary floating point, and the
/// rounding error must not add a token to a tie at 31.
fn whole_tokens_up(n: f64) -> u64 {
    (n - 1e-9 * n.abs()).ceil() as u64
}

/// The trade-off in one sentence: `starts 48 ms later, finishes sooner for answers longer than
/// 31 tokens`.
///
/// "Longer than K tokens" is strict: answers of K + 1 tokens or more. K is `N*` rounded up to a
/// whole token, so the sentence is always true: every answer of more than K ≥ N* tokens finishes
/// sooner. When `N*` is whole, an answer of exactly K tokens ties; when it is not, an answer of
/// exactly K tokens (K > N*) already finishes sooner too, and the sentence errs by at most that
/// one length on the safe side.
pub fn sentence(c: &Crossover) -> String {
    format!(
        "starts {} ms later, finishes sooner for answers longer than {} tokens",
        ms(c.starts_later_ms),
        c.longer_than_tokens
    )
}

/// A duration in ms for a sentence: whole ms from 10 ms, one decimal below.
fn ms(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(ttft_ms: f64, tpot_ms: f64) -> Medians {
        Medians { ttft_ms, tpot_ms }
    }

    #[test]
    fn the_issue_example() {
        // 48 ms later, 1.6 ms/token faster: N* = 1 + 48/1.6 = 31 (whole: 31 tokens tie).
        let c = crossover(m(100.0, 11.6), m(148.0, 10.0)).unwrap();
        // 11.6 − 10.0 is 1.5999999999999996 in floats: N* is a hair above 31.
        assert_eq!(c.n_star, 1.0 + 48.0 / (11.6 - 10.0));
        assert!(c.n_star > 31.0);
        assert_eq!(c.longer_than_tokens, 31);
        assert_eq!(
            sentence(&c),
            "starts 48 ms later, finishes sooner for answers longer than 31 tokens"
        );
        let c = crossover(m(100.0, 12.0), m(148.0, 10.0)).unwrap();
        assert_eq!((c.n_star, c.longer_than_tokens), (25.0, 25));
        assert_eq!(
            sentence(&c),
            "starts 48 ms later, finishes sooner for answers longer than 25 tokens"
        );
        let c = crossover(m(30.0, 12.0), m(35.5, 10.0)).unwrap();
        assert_eq!((c.n_star, c.longer_than_tokens), (3.75, 4));
        assert_eq!(
            sentence(&c),
            "starts 5.5 ms later, finishes sooner for answers longer than 4 tokens"
        );
    }

    #[test]
    fn no_trade_off_no_crossover() {
        assert_eq!(crossover(m(100.0, 12.0), m(90.0, 10.0)), None);
        assert_eq!(crossover(m(100.0, 12.0), m(110.0, 12.0)), None);
        assert_eq!(crossover(m(100.0, 12.0), m(110.0, 13.0)), None);
    }
}
