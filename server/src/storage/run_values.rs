//! Stored runs' metric values kept in memory between analyses ([`RunValuesCache`]).
//!
//! Why: every upload's analysis reads the baseline window of each of its groups. At 18 cells ×
//! 34 values and a window of about 60 commits that is some 38,000 values, nearly all of them
//! the ones the previous upload read too; reading them took 380–700 ms of a 700–900 ms upload
//! (issue 12, BENCHMARKS.md "Session 20"). A run's values never change once its upload has
//! committed: an upload is one transaction, and nothing updates or deletes rows of `runs`,
//! `results` or `metric_values`. So a run's values, read once, stay right for the life of the
//! process, and another server writing to the same database cannot make them wrong (its runs
//! have other ids). What can change about a stored run, its exclusion from baselines, is not
//! kept here: [`super::Store::series_history_at`] reads it with the window's runs each time.

use super::detection::HistoryResult;
use rustc_hash::FxHashMap;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use uuid::Uuid;

/// How many values the cache holds at most, over all runs (about 32 bytes each and as much
/// again for the series index of each run: about 10 MB). The
/// windows of one upload's groups hold about 38,000, the change-point scan's 200-commit window
/// of one configuration about 122,000.
const MAX_VALUES: usize = 150_000;

/// When the cache is full, it drops its least recently used runs down to this many values,
/// so that eviction (a sort of the entries) is rare.
const EVICT_TO: usize = MAX_VALUES * 3 / 4;

/// Interned series ids beyond this many are forgotten (runs keep their own references).
const MAX_INTERNED: usize = 100_000;

/// One stored value of a cached run.
#[derive(Debug, Clone)]
pub(super) struct CachedValue {
    /// The series (interned: every run of a series shares one allocation).
    pub series_id: Arc<str>,
    /// The value's result (`results.id`).
    pub result_id: i64,
    /// The value, in the series' unit.
    pub value: f64,
}

/// Every metric value of one stored run and what its results add to their history points.
#[derive(Debug, Default)]
pub(super) struct CachedRun {
    /// Sorted by series id, then result id, so each series' values are one slice.
    values: Vec<CachedValue>,
    /// Where each series' slice of `values` starts and ends. A hash lookup rather than a binary
    /// search of `values`: a window reads every series of its group in every run (37,000
    /// look-ups per 18-cell upload), and comparing series ids was 14 % of the process
    /// (BENCHMARKS.md, session 25).
    by_series: FxHashMap<Arc<str>, (usize, usize)>,
    /// By result id.
    results: FxHashMap<i64, HistoryResult>,
}

impl CachedRun {
    /// A run from its values (any order) and its results' details.
    pub fn new(mut values: Vec<CachedValue>, results: HashMap<i64, HistoryResult>) -> CachedRun {
        values.sort_by(|a, b| (&*a.series_id, a.result_id).cmp(&(&*b.series_id, b.result_id)));
        let mut by_series: FxHashMap<Arc<str>, (usize, usize)> = FxHashMap::default();
        for (i, v) in values.iter().enumerate() {
            by_series
                .entry(Arc::clone(&v.series_id))
                .and_modify(|(_, end)| *end = i + 1)
                .or_insert((i, i + 1));
        }
        CachedRun {
            values,
            by_series,
            results: results.into_iter().collect(),
        }
    }

    /// The run's values of `series_id`, by result id.
    pub fn series(&self, series_id: &str) -> &[CachedValue] {
        match self.by_series.get(series_id) {
            Some(&(start, end)) => &self.values[start..end],
            None => &[],
        }
    }

    /// What result `result_id` adds to its points (its health counts, `num_prompts`, lengths).
    pub fn result(&self, result_id: i64) -> Option<&HistoryResult> {
        self.results.get(&result_id)
    }
}

/// Runs' values by run id, least recently used out first, at most [`MAX_VALUES`] values.
#[derive(Default)]
pub(super) struct RunValuesCache {
    inner: Mutex<Inner>,
    /// Results known to have no per-request samples (a result's samples are stored with it, in
    /// its upload's transaction, or never), so an analysis does not ask again for every result
    /// of its window at every upload: 18 queries that found nothing were 7–11 ms of an 18-cell
    /// upload's analysis. At most [`MAX_WITHOUT_SAMPLES`] ids; forgotten all at once beyond.
    without_samples: Mutex<rustc_hash::FxHashSet<i64>>,
}

/// Result ids [`RunValuesCache`] remembers as having no samples (8 bytes each, 800 KB).
const MAX_WITHOUT_SAMPLES: usize = 100_000;

#[derive(Default)]
struct Inner {
    runs: HashMap<Uuid, Entry>,
    /// Values held by `runs`.
    held: usize,
    /// Incremented on every use; an entry's `used` is the tick of its last use.
    tick: u64,
    interned: HashSet<Arc<str>>,
}

struct Entry {
    run: Arc<CachedRun>,
    used: u64,
}

/// The recency one [`RunValuesCache::get_many`] gave its runs: the run at index `i` of the
/// read is as recent as `of(i)`.
#[derive(Debug, Clone, Copy)]
pub(super) struct ReadTicks(u64);

impl ReadTicks {
    /// The recency of the read's run at index `i`.
    pub fn of(self, i: usize) -> u64 {
        self.0 + i as u64
    }
}

impl RunValuesCache {
    /// The cached runs of `ids`, in that order (`None` where a run is not held), and the
    /// recency this read gives each of them ([`ReadTicks`]). Recency follows the order of
    /// `ids`: a read's later runs count as used more recently, held or [`inserted`] after it.
    /// Readers list a window's runs oldest first, so when a read overflows the cache its
    /// window's oldest runs go first and its newest stay, which the next upload's analysis
    /// reads again. (With one tick for the whole read, a change-point scan's 400 runs evicted
    /// exactly the newest runs it found held, the ones it had not just loaded: every upload
    /// after a scan read its windows from the database again.)
    ///
    /// [`inserted`]: RunValuesCache::insert
    pub fn get_many(&self, ids: &[Uuid]) -> (Vec<Option<Arc<CachedRun>>>, ReadTicks) {
        let mut inner = self.lock();
        let ticks = ReadTicks(inner.tick + 1);
        inner.tick += ids.len() as u64;
        let runs = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                inner.runs.get_mut(id).map(|e| {
                    e.used = ticks.of(i);
                    Arc::clone(&e.run)
                })
            })
            .collect();
        (runs, ticks)
    }

    /// Keeps `run` as run `id`'s values, as recently used as `used` (the [`ReadTicks`] of the
    /// read that did not find it, at its place there), dropping the least recently used runs
    /// when full.
    pub fn insert(&self, id: Uuid, run: Arc<CachedRun>, used: u64) {
        let mut inner = self.lock();
        inner.held += run.values.len();
        if let Some(old) = inner.runs.insert(id, Entry { run, used }) {
            inner.held -= old.run.values.len();
        }
        if inner.held > MAX_VALUES {
            inner.evict();
        }
    }

    /// `series_id` as the shared allocation every cached run of the series uses.
    pub fn intern(&self, series_id: &str) -> Arc<str> {
        let mut inner = self.lock();
        if let Some(s) = inner.interned.get(series_id) {
            return Arc::clone(s);
        }
        if inner.interned.len() >= MAX_INTERNED {
            inner.interned.clear();
        }
        let s: Arc<str> = Arc::from(series_id);
        inner.interned.insert(Arc::clone(&s));
        s
    }

    /// Of `result_ids`, those not known to have no samples: the ones to look up.
    pub fn may_have_samples(&self, result_ids: &[i64]) -> Vec<i64> {
        let known = self
            .without_samples
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        result_ids
            .iter()
            .copied()
            .filter(|id| !known.contains(id))
            .collect()
    }

    /// Remembers that the stored results `result_ids` have no samples.
    pub fn note_without_samples(&self, result_ids: impl IntoIterator<Item = i64>) {
        let mut known = self
            .without_samples
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for id in result_ids {
            if known.len() >= MAX_WITHOUT_SAMPLES {
                known.clear();
            }
            known.insert(id);
        }
    }

    /// How many runs and values are held.
    pub fn held(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.runs.len(), inner.held)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves consistent maps (every mutation is complete
        // before the next begins), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Inner {
    /// Drops the least recently used runs until at most [`EVICT_TO`] values are held.
    fn evict(&mut self) {
        let mut by_use: Vec<(u64, Uuid)> = self.runs.iter().map(|(id, e)| (e.used, *id)).collect();
        by_use.sort_unstable();
        for (_, id) in by_use {
            if self.held <= EVICT_TO {
                break;
            }
            if let Some(e) = self.runs.remove(&id) {
                self.held -= e.run.values.len();
            }
        }
    }
}

impl super::Store {
    /// How many runs, and values of theirs, this store keeps in memory for the analyses (at
    /// most 150,000 values); printed by the analysis's debug line.
    pub fn cached_run_values(&self) -> (usize, usize) {
        self.run_values.held()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cache: &RunValuesCache, values: &[(&str, i64, f64)]) -> Arc<CachedRun> {
        let values = values
            .iter()
            .map(|(s, r, v)| CachedValue {
                series_id: cache.intern(s),
                result_id: *r,
                value: *v,
            })
            .collect();
        Arc::new(CachedRun::new(values, HashMap::new()))
    }

    /// A run holding a tenth of what the cache holds at most ([`MAX_VALUES`]).
    fn tenth_of_the_cache(cache: &RunValuesCache) -> Arc<CachedRun> {
        let values: Vec<(String, i64, f64)> = (0..MAX_VALUES / 10)
            .map(|i| (format!("s{i}"), 1, i as f64))
            .collect();
        let refs: Vec<(&str, i64, f64)> = values
            .iter()
            .map(|(s, r, v)| (s.as_str(), *r, *v))
            .collect();
        run(cache, &refs)
    }

    #[test]
    fn results_noted_without_samples_are_not_asked_for_again() {
        let cache = RunValuesCache::default();
        assert_eq!(cache.may_have_samples(&[1, 2, 3]), vec![1, 2, 3]);
        cache.note_without_samples([2, 3]);
        assert_eq!(cache.may_have_samples(&[1, 2, 3, 4]), vec![1, 4]);
    }

    #[test]
    fn a_series_values_are_found_by_series_in_result_order() {
        let cache = RunValuesCache::default();
        let r = run(
            &cache,
            &[
                ("b", 2, 4.0),
                ("a", 2, 2.0),
                ("b", 1, 3.0),
                ("a", 1, 1.0),
                ("c", 1, 5.0),
            ],
        );
        let a: Vec<(i64, f64)> = r
            .series("a")
            .iter()
            .map(|v| (v.result_id, v.value))
            .collect();
        assert_eq!(a, vec![(1, 1.0), (2, 2.0)]);
        let b: Vec<(i64, f64)> = r
            .series("b")
            .iter()
            .map(|v| (v.result_id, v.value))
            .collect();
        assert_eq!(b, vec![(1, 3.0), (2, 4.0)]);
        assert!(r.series("ab").is_empty());
        assert!(r.series("0").is_empty());
        assert!(r.series("d").is_empty());
        // One allocation per series id, shared by every run.
        let again = run(&cache, &[("a", 9, 0.0)]);
        assert!(Arc::ptr_eq(
            &r.series("a")[0].series_id,
            &again.series("a")[0].series_id
        ));
    }

    #[test]
    fn a_full_cache_drops_the_least_recently_used_runs() {
        let cache = RunValuesCache::default();
        let per_run = MAX_VALUES / 10;
        let ids: Vec<Uuid> = (0..11).map(|_| Uuid::new_v4()).collect();
        for id in &ids[..10] {
            let (_, ticks) = cache.get_many(&[*id]);
            cache.insert(*id, tenth_of_the_cache(&cache), ticks.of(0));
        }
        assert_eq!(cache.held(), (10, 10 * per_run));
        // Run 0 used last: it survives the eviction the eleventh run causes.
        assert!(cache.get_many(&ids[..1]).0[0].is_some());
        let (_, ticks) = cache.get_many(&ids[10..]);
        cache.insert(ids[10], tenth_of_the_cache(&cache), ticks.of(0));
        let (runs, held) = cache.held();
        assert_eq!(held, runs * per_run);
        assert!(held <= EVICT_TO, "held {held}");
        let (got, _) = cache.get_many(&ids);
        assert!(got[0].is_some() && got[10].is_some());
        assert!(
            got[1].is_none(),
            "the least recently used run is dropped first"
        );
        assert_eq!(got.iter().filter(|r| r.is_some()).count(), runs);
    }

    #[test]
    fn a_read_that_overflows_the_cache_drops_its_oldest_runs_and_keeps_its_newest() {
        let cache = RunValuesCache::default();
        // Twelve runs, oldest first. An upload's window held the newest six.
        let ids: Vec<Uuid> = (0..12).map(|_| Uuid::new_v4()).collect();
        let (_, ticks) = cache.get_many(&ids[6..]);
        for (i, id) in ids[6..].iter().enumerate() {
            cache.insert(*id, tenth_of_the_cache(&cache), ticks.of(i));
        }
        // A scan reads all twelve, oldest first, and loads the six it does not find: the
        // cache overflows at the fifth of them.
        let (found, ticks) = cache.get_many(&ids);
        assert_eq!(found.iter().filter(|r| r.is_some()).count(), 6);
        for (i, id) in ids[..6].iter().enumerate() {
            cache.insert(*id, tenth_of_the_cache(&cache), ticks.of(i));
        }
        let (held, _) = cache.get_many(&ids);
        let kept: Vec<usize> = (0..12).filter(|i| held[*i].is_some()).collect();
        assert_eq!(kept, [4, 5, 6, 7, 8, 9, 10, 11]);
    }
}
