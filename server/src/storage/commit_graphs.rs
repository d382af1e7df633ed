//! The projects' commit graphs kept between reads ([`CommitGraphs`]): every upload's analysis,
//! every series read (page and API), the dashboard and the change-point scan order history by
//! the project's commit graph, and reading it whole (a row per commit, its parents' JSON, the
//! ancestry order built again) grows with the history: at 1,800 commits it was most of a
//! series read. A kept graph is used while the project's commits are unchanged, which one
//! aggregate over `commits` tells ([`Fingerprint`]), so a graph another server process changed
//! is read again: the cache needs no coordination between processes.

use benchtrail_core::history::CommitGraph;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How many projects' graphs are kept (the least recently read goes first): a graph of 1,800
/// commits takes about 0.4 MB.
const KEPT_PROJECTS: usize = 16;

/// What changes whenever a project's `commits` rows do. A row is only ever inserted, or gains
/// its parents (`parent_shas` from `[]`) or its commit time (from NULL), each at most once
/// (`upsert_commit`), and commits are never deleted while their project exists: every change
/// raises one of the three counts, so equal fingerprints mean equal rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Fingerprint {
    /// Commits of the project.
    pub commits: i64,
    /// Commits whose parents are known.
    pub with_parents: i64,
    /// Commits whose commit time is known.
    pub with_time: i64,
}

/// The SQL of a project's [`Fingerprint`] (bind: the project id): one aggregate over its
/// commit rows.
pub(super) const FINGERPRINT_SQL: &str = "SELECT COUNT(*) AS commits, \
     COALESCE(SUM(CASE WHEN parent_shas = '[]' THEN 0 ELSE 1 END), 0) AS with_parents, \
     COUNT(commit_time) AS with_time FROM commits WHERE project_id = $1";

/// Kept commit graphs by project id (shared by a store's clones).
#[derive(Debug, Default)]
pub struct CommitGraphs {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    /// Project id → (fingerprint when read, graph, read tick).
    graphs: HashMap<i64, (Fingerprint, Arc<CommitGraph>, u64)>,
    tick: u64,
}

impl CommitGraphs {
    /// The kept graph of `project_id` and the fingerprint it was read at.
    pub(super) fn get(&self, project_id: i64) -> Option<(Fingerprint, Arc<CommitGraph>)> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.tick += 1;
        let tick = kept.tick;
        let entry = kept.graphs.get_mut(&project_id)?;
        entry.2 = tick;
        Some((entry.0, entry.1.clone()))
    }

    /// Keeps `graph`, read at `fingerprint`, for `project_id`; forgets the least recently
    /// read project's beyond [`KEPT_PROJECTS`].
    pub(super) fn put(&self, project_id: i64, fingerprint: Fingerprint, graph: Arc<CommitGraph>) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.tick += 1;
        let tick = kept.tick;
        kept.graphs.insert(project_id, (fingerprint, graph, tick));
        if kept.graphs.len() > KEPT_PROJECTS {
            let oldest = kept
                .graphs
                .iter()
                .min_by_key(|(_, (_, _, t))| *t)
                .map(|(id, _)| *id);
            if let Some(id) = oldest {
                kept.graphs.remove(&id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(commits: i64) -> Fingerprint {
        Fingerprint {
            commits,
            with_parents: commits,
            with_time: 0,
        }
    }

    #[test]
    fn a_graph_is_kept_with_its_fingerprint_and_the_least_recently_read_goes_first() {
        let graphs = CommitGraphs::default();
        let graph = Arc::new(CommitGraph::new(Vec::new()));
        graphs.put(1, at(3), graph.clone());
        assert_eq!(graphs.get(1).map(|(f, _)| f), Some(at(3)));
        assert!(graphs.get(2).is_none(), "another project");
        for p in 2..=KEPT_PROJECTS as i64 {
            graphs.put(p, at(3), graph.clone());
        }
        // Project 1 read again: project 2 is now the least recently read.
        assert!(graphs.get(1).is_some());
        graphs.put(100, at(3), graph.clone());
        assert!(graphs.get(1).is_some());
        assert!(graphs.get(2).is_none());
        assert!(graphs.get(3).is_some());
    }
}
