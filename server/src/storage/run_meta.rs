//! What a series point shows of its run, kept in memory between reads ([`RunMetaCache`]).
//!
//! Why: a series' points ([`super::Store::series_points`], the series API and page) carry their
//! run's commit, subject, times and repeat index. Read with the values, those columns crossed
//! from SQLite for every point of every read (1,800 points of 15 columns at 1,800 commits: the
//! series API took 21 ms where the hand-written 3-column SQL took 5; issue 12, BENCHMARKS.md
//! "Session 31"). The columns kept here never change once a run's upload has committed (only
//! `upload_count` is updated, and it is not kept), so a run read once stays right for the life
//! of the process, and another server writing to the same database cannot make it wrong. What
//! can change about a run, its exclusion from baselines, is not kept: the reader reads it each
//! time.

use chrono::{DateTime, FixedOffset, Utc};
use lru::LruCache;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use uuid::Uuid;

/// How many runs the cache holds at most (about 250 bytes each: 12 MB). Five years of
/// nightly runs of one project with 2 configurations and 3 repeats is about 11,000.
const MAX_RUNS: usize = 50_000;

/// The immutable columns of one stored run that a series point shows.
#[derive(Debug)]
pub(super) struct RunMeta {
    /// `runs.project_id`.
    pub project_id: i64,
    /// `runs.id`.
    pub id: Uuid,
    /// `runs.commit_sha`.
    pub commit_sha: String,
    /// `runs.commit_time` with `commit_time_offset`.
    pub commit_time: Option<DateTime<FixedOffset>>,
    /// `runs.commit_subject`.
    pub commit_subject: Option<String>,
    /// `runs.branch`.
    pub branch: String,
    /// `runs.run_at`.
    pub run_at: DateTime<Utc>,
    /// `runs.repeat_index`.
    pub repeat_index: i64,
}

/// Stored runs' [`RunMeta`] by `runs.seq`, least recently used out first.
pub(super) struct RunMetaCache {
    inner: Mutex<LruCache<i64, Arc<RunMeta>>>,
}

impl Default for RunMetaCache {
    fn default() -> RunMetaCache {
        let cap = NonZeroUsize::new(MAX_RUNS).expect("MAX_RUNS is not zero");
        RunMetaCache {
            inner: Mutex::new(LruCache::new(cap)),
        }
    }
}

impl RunMetaCache {
    /// The cached runs of `seqs`, in that order (`None` where a run is not held).
    pub fn get_many(&self, seqs: &[i64]) -> Vec<Option<Arc<RunMeta>>> {
        let mut inner = self.inner.lock().expect("run meta cache lock");
        seqs.iter().map(|s| inner.get(s).cloned()).collect()
    }

    /// Keeps `run` under its `seq`.
    pub fn insert(&self, seq: i64, run: Arc<RunMeta>) {
        self.inner
            .lock()
            .expect("run meta cache lock")
            .put(seq, run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(n: i64) -> Arc<RunMeta> {
        Arc::new(RunMeta {
            project_id: 1,
            id: Uuid::from_u128(n as u128),
            commit_sha: format!("{n:040x}"),
            commit_time: None,
            commit_subject: None,
            branch: "main".into(),
            run_at: DateTime::<Utc>::from_timestamp(n, 0).unwrap(),
            repeat_index: 0,
        })
    }

    #[test]
    fn holds_what_was_put_and_answers_none_for_the_rest_in_order() {
        let cache = RunMetaCache::default();
        cache.insert(7, meta(7));
        cache.insert(9, meta(9));
        let got = cache.get_many(&[9, 8, 7]);
        assert_eq!(got[0].as_ref().unwrap().id, Uuid::from_u128(9));
        assert!(got[1].is_none());
        assert_eq!(got[2].as_ref().unwrap().id, Uuid::from_u128(7));
    }
}
