//! How many analyses this process runs at once, so that one analysis spreads its pure-CPU
//! phases over every core only when it runs alone.
//!
//! Spread over the cores (rayon), an 18-cell upload's analysis at an idle server decides in
//! 18–20 ms instead of 24–26 (BENCHMARKS.md "Session 36"). While other analyses run, the cores
//! are busy with them already, and the spread only costs: rayon's threads spin while they wait
//! for work and wake each other: with 8 clients uploading the peer's data set, 7 % of the
//! server's samples (`perf record`), and one thread per analysis stored 8 % more values per
//! second (BENCHMARKS.md "Session 38").

use std::sync::atomic::{AtomicUsize, Ordering};

/// Analyses (upload analyses, recomputations, change-point scans) running in this process.
pub(super) static ANALYSES: Analyses = Analyses::new();

/// A count of running analyses ([`ANALYSES`]).
pub(super) struct Analyses(AtomicUsize);

impl Analyses {
    const fn new() -> Analyses {
        Analyses(AtomicUsize::new(0))
    }

    /// Counts an analysis as running until the returned value is dropped.
    pub(super) fn start(&self) -> Running<'_> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Running(self)
    }
}

/// One running analysis of an [`Analyses`], counted until dropped.
pub(super) struct Running<'a>(&'a Analyses);

impl Running<'_> {
    /// Whether this analysis runs alone now: then its pure-CPU phases may use every core.
    pub(super) fn alone(&self) -> bool {
        self.0 .0.load(Ordering::Relaxed) <= 1
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0 .0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::Analyses;

    #[test]
    fn an_analysis_is_alone_until_a_second_starts_and_again_once_it_ends() {
        let analyses = Analyses::new();
        let first = analyses.start();
        assert!(first.alone());
        let second = analyses.start();
        assert!(!first.alone());
        assert!(!second.alone());
        drop(second);
        assert!(first.alone());
    }
}
