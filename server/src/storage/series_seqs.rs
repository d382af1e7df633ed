//! The `seq` of each stored series by its id, kept between uploads ([`SeriesSeqCache`]).
//!
//! Why: every value an upload stores names its series by `series.seq` (migration 0019), so the
//! insert of a run first stored each of its series' definitions (`ON CONFLICT DO NOTHING`) and
//! then read their seqs back: two statements and 14 bound columns per series, 612 series for an
//! 18-cell vLLM upload, though a nightly upload's series are all stored already. On Postgres
//! that was 5–6 ms of an upload's 37 ms of writing (BENCHMARKS.md "Session 35"). A series row
//! is never updated or deleted and its seq never changes, so a seq read once stays right for
//! the life of the process, and another server inserting series cannot make it wrong (its
//! series get other seqs, and the same id keeps the first row's seq). Seqs are kept only after
//! the transaction that stored or read them has committed.

use super::batch_insert::SeriesSeqs;
use super::model::NewSeries;
use rustc_hash::FxHashMap;
use std::sync::Mutex;

/// Series kept at most (about 60 bytes each: 12 MB). Issue 12's data set has 1,296 series
/// per project. Forgotten all at once beyond.
const MAX_SERIES: usize = 200_000;

/// `series.seq` by `series.series_id`, for the series stored by committed transactions.
#[derive(Default)]
pub(super) struct SeriesSeqCache {
    seqs: Mutex<FxHashMap<String, i64>>,
}

impl SeriesSeqCache {
    /// `series` split into the seqs of those kept here and the series not kept (in their
    /// order), which the caller stores and reads.
    pub fn split<'s>(&self, series: &[&'s NewSeries]) -> (SeriesSeqs, Vec<&'s NewSeries>) {
        let kept = self.seqs.lock().expect("series seq cache lock");
        let mut known = SeriesSeqs::with_capacity(series.len());
        let mut unknown = Vec::new();
        for s in series {
            match kept.get(&s.series_id) {
                Some(seq) => {
                    known.insert(s.series_id.clone(), *seq);
                }
                None => unknown.push(*s),
            }
        }
        (known, unknown)
    }

    /// Keeps `seqs` (read or stored by a transaction that has committed).
    pub fn note(&self, seqs: SeriesSeqs) {
        if seqs.is_empty() {
            return;
        }
        let mut kept = self.seqs.lock().expect("series seq cache lock");
        if kept.len() + seqs.len() > MAX_SERIES {
            kept.clear();
        }
        kept.extend(seqs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchtrail_core::{Direction, Stat, Unit};

    fn series(id: &str) -> NewSeries {
        NewSeries {
            series_id: id.to_string(),
            series_key_json: "{}".into(),
            cell_key: "max_concurrency=1".into(),
            cell_json: "{}".into(),
            metric: "ttft".into(),
            stat: Stat::Percentile("p50".into()),
            slo_profile: None,
            unit: Unit::Ms,
            direction: Direction::LowerIsBetter,
            accelerator: None,
            model: None,
            weights_quantization: None,
            kv_cache_dtype: None,
        }
    }

    #[test]
    fn kept_series_are_known_and_the_others_come_back_in_order() {
        let cache = SeriesSeqCache::default();
        let (a, b, c) = (series("a"), series("b"), series("c"));
        let (known, unknown) = cache.split(&[&a, &b, &c]);
        assert!(known.is_empty());
        assert_eq!(unknown.len(), 3);
        cache.note(SeriesSeqs::from([
            ("a".to_string(), 7),
            ("c".to_string(), 9),
        ]));
        let (known, unknown) = cache.split(&[&a, &b, &c]);
        assert_eq!(
            known,
            SeriesSeqs::from([("a".to_string(), 7), ("c".to_string(), 9)])
        );
        let ids: Vec<&str> = unknown.iter().map(|s| s.series_id.as_str()).collect();
        assert_eq!(ids, ["b"]);
    }

    #[test]
    fn a_full_cache_starts_over() {
        let cache = SeriesSeqCache::default();
        cache.note(
            (0..MAX_SERIES as i64)
                .map(|i| (format!("s{i}"), i))
                .collect(),
        );
        let first = series("s0");
        assert_eq!(cache.split(&[&first]).0.len(), 1);
        cache.note(SeriesSeqs::from([("new".to_string(), -1)]));
        let new = series("new");
        let (known, unknown) = cache.split(&[&first, &new]);
        assert_eq!(known, SeriesSeqs::from([("new".to_string(), -1)]));
        assert_eq!(unknown.len(), 1);
    }
}
