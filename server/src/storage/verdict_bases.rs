//! Decoded verdict bases kept between reads ([`VerdictBasisCache`]).
//!
//! Why: the dashboard shows the verdict of each branch's newest run and of the 20 newest runs,
//! and each verdict is computed from its run's stored [`VerdictBasis`] (about 9 KB of gzip'd
//! JSON, 50 KB unpacked, at 18 cells): unpacking and parsing some 40 of them was a tenth of the
//! dashboard's CPU on issue 12's data set (BENCHMARKS.md "Session 33"). A run's basis changes
//! when the run is analyzed again, so an entry is keyed by the stored bytes themselves: a read
//! whose row holds other bytes than the entry's decodes them and replaces it. Nothing can
//! serve a stale basis, whichever server wrote the row.

use benchtrail_core::report::verdict_basis::VerdictBasis;
use rustc_hash::FxHashMap;
use std::sync::{Arc, Mutex};
use uuid::Uuid;

/// Bases kept at most: two dashboards' worth of runs (a page lists up to 20 recent runs and
/// 20 branches). At about 60 KB decoded each, 6 MB.
const MAX_ENTRIES: usize = 96;

/// Decoded verdict bases by run id, each with the compressed bytes it was decoded from.
#[derive(Default)]
pub(super) struct VerdictBasisCache {
    entries: Mutex<FxHashMap<Uuid, (Vec<u8>, Arc<VerdictBasis>)>>,
}

impl VerdictBasisCache {
    /// The basis of `run_id` decoded from exactly `stored` (its `verdict_basis_gz`), if kept.
    pub fn get(&self, run_id: Uuid, stored: &[u8]) -> Option<Arc<VerdictBasis>> {
        let entries = self.entries.lock().expect("verdict basis cache lock");
        entries
            .get(&run_id)
            .filter(|(bytes, _)| bytes.as_slice() == stored)
            .map(|(_, basis)| Arc::clone(basis))
    }

    /// Keeps `basis`, decoded from `stored`, for `run_id`. When full, forgets every entry (a
    /// dashboard reads its runs again at once: recency would keep the same ones).
    pub fn insert(&self, run_id: Uuid, stored: Vec<u8>, basis: Arc<VerdictBasis>) {
        let mut entries = self.entries.lock().expect("verdict basis cache lock");
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(&run_id) {
            entries.clear();
        }
        entries.insert(run_id, (stored, basis));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basis(version: i64) -> Arc<VerdictBasis> {
        Arc::new(VerdictBasis {
            settings_version: version,
            groups: Vec::new(),
            coverage: Default::default(),
        })
    }

    #[test]
    fn an_entry_serves_only_the_bytes_it_was_decoded_from() {
        let cache = VerdictBasisCache::default();
        let run = Uuid::from_u128(1);
        cache.insert(run, b"first".to_vec(), basis(1));
        assert_eq!(cache.get(run, b"first").unwrap().settings_version, 1);
        assert!(cache.get(run, b"second").is_none());
        assert!(cache.get(Uuid::from_u128(2), b"first").is_none());
        cache.insert(run, b"second".to_vec(), basis(2));
        assert_eq!(cache.get(run, b"second").unwrap().settings_version, 2);
        assert!(cache.get(run, b"first").is_none());
    }

    #[test]
    fn a_full_cache_starts_over() {
        let cache = VerdictBasisCache::default();
        for i in 0..MAX_ENTRIES as u128 {
            cache.insert(Uuid::from_u128(i), vec![1], basis(1));
        }
        assert!(cache.get(Uuid::from_u128(0), &[1]).is_some());
        cache.insert(Uuid::from_u128(1000), vec![1], basis(1));
        assert!(cache.get(Uuid::from_u128(0), &[1]).is_none());
        assert!(cache.get(Uuid::from_u128(1000), &[1]).is_some());
    }
}
