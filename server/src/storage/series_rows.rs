//! Stored series rows kept decoded between reads ([`SeriesCache`]).
//!
//! Why: the dashboard lists every series of its project, and on issue 12's data set (1,296
//! series) their rows are 683 KB of text (each row repeats its configuration's and cell's JSON),
//! copied out of the database and decoded on every view: a third of the page's SQL and a tenth
//! of its CPU (BENCHMARKS.md "Session 33"). A series row never changes once inserted (nothing
//! updates or deletes rows of `series`, and a project's slug is fixed), so a row read once stays
//! right for the life of the process, and another server inserting series cannot make it wrong
//! (its series have other seqs). Which series a list shows (those with values, in its filter
//! and order) is still asked of the database each time: only the rows' contents come from here.

use super::model::SeriesInfo;
use rustc_hash::FxHashMap;
use std::sync::{Arc, Mutex};

/// Series kept at most (about 1 KB each decoded: 50 MB would be a project with 50,000 series;
/// the data set has 1,296). Forgotten all at once beyond.
const MAX_SERIES: usize = 50_000;

/// Decoded series rows by `series.seq`.
#[derive(Default)]
pub(super) struct SeriesCache {
    rows: Mutex<FxHashMap<i64, Arc<SeriesInfo>>>,
}

impl SeriesCache {
    /// The kept series of each of `seqs`, in order (`None`: not kept).
    pub fn get_many(&self, seqs: &[i64]) -> Vec<Option<Arc<SeriesInfo>>> {
        let rows = self.rows.lock().expect("series cache lock");
        seqs.iter().map(|seq| rows.get(seq).cloned()).collect()
    }

    /// Keeps `series` as the row of `seq`.
    pub fn insert(&self, seq: i64, series: Arc<SeriesInfo>) {
        let mut rows = self.rows.lock().expect("series cache lock");
        if rows.len() >= MAX_SERIES {
            rows.clear();
        }
        rows.insert(seq, series);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchtrail_core::{Direction, Stat, Unit};

    fn series(id: &str) -> Arc<SeriesInfo> {
        Arc::new(SeriesInfo {
            series_id: id.to_string(),
            project: "p".into(),
            series_key: serde_json::json!({"engine.name": "vllm"}),
            cell_key: "max_concurrency=1".into(),
            cell: serde_json::json!({"max_concurrency": 1}),
            metric: "ttft".into(),
            stat: Stat::Percentile("p50".into()),
            slo_profile: None,
            unit: Unit::Ms,
            direction: Direction::LowerIsBetter,
        })
    }

    #[test]
    fn kept_rows_come_back_in_the_order_asked_and_a_full_cache_starts_over() {
        let cache = SeriesCache::default();
        cache.insert(7, series("a"));
        cache.insert(3, series("b"));
        let ids: Vec<Option<String>> = cache
            .get_many(&[3, 5, 7])
            .into_iter()
            .map(|s| s.map(|s| s.series_id.clone()))
            .collect();
        assert_eq!(ids, [Some("b".to_string()), None, Some("a".to_string())]);
        for seq in 0..MAX_SERIES as i64 {
            cache.insert(100 + seq, series("c"));
        }
        assert_eq!(cache.get_many(&[3, 7]), [None, None]);
        assert!(cache.get_many(&[100 + MAX_SERIES as i64 - 1])[0].is_some());
    }
}
