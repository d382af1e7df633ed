//! Commit order by ancestry: the order a branch's history is plotted and baselined in.
//!
//! A project's commits form a graph through the `parents` each upload sends. The order is a
//! topological order of that graph (every commit after all of its known ancestors); only
//! between commits the graph does not relate does the time decide (committer time, else the
//! first run's time, then the first upload). So a commit whose committer time is earlier than
//! its parent's (a rebase, a skewed clock) still comes after its parent.
//!
//! The graph has **gaps**: a parent that was never uploaded (the first benchmarked commit's
//! parent, every commit of a nightly benchmark, a shallow clone that sends no parents). Behind
//! a gap, ancestry is unknown; [`CommitGraph::possible_ancestors`] then counts the commits
//! ordered before the gap as possible ancestors, so a history without parents keeps the
//! time order it always had, while a commit reached through the graph only ever takes its
//! ancestors.

use chrono::{DateTime, Utc};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

/// One commit as the graph needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitNode {
    /// Commit SHA.
    pub sha: String,
    /// Parent SHAs as uploaded, first parent first (empty: unknown, or a root commit).
    pub parents: Vec<String>,
    /// The tie-break time between unrelated commits: committer time, else the first run's time.
    pub time: DateTime<Utc>,
    /// The last tie-break: the upload sequence number of the commit's first run.
    pub first_seq: i64,
}

/// A project's commits in ancestry order (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct CommitGraph {
    nodes: Vec<CommitNode>,
    /// Index into `nodes` by SHA. FxHash: an analysis looks up every point's commit here
    /// (`position`), and SipHash of the SHAs was 3 % of an upload's analysis (BENCHMARKS.md
    /// "Session 36").
    index: rustc_hash::FxHashMap<String, usize>,
    /// `nodes` indices in history order.
    order: Vec<usize>,
    /// Position in `order` by `nodes` index.
    position: Vec<usize>,
    /// By `nodes` index: its parents that are nodes (`nodes` indices), so ancestry walks
    /// follow indices instead of hashing SHAs.
    parents: Vec<Vec<usize>>,
    /// By `nodes` index: a gap is behind it (no parents, or a parent that is not a node).
    open: Vec<bool>,
}

/// The commits that may be ancestors of one commit, as one bit per node of its graph
/// ([`CommitGraph::possible_ancestry`]). What every group of an analysis asks (is this commit a
/// possible baseline? which are the newest possible ancestors?) costs a bit per commit this
/// way, not a hashed SHA: at 1,800 commits, the SHA sets of `possible_ancestors` built for each
/// of an upload's 18 groups were a third of its analysis (BENCHMARKS.md "Session 31").
#[derive(Debug, Clone)]
pub struct Ancestry<'g> {
    graph: &'g CommitGraph,
    /// By `nodes` index of `graph`.
    member: Vec<bool>,
}

impl<'g> Ancestry<'g> {
    /// Whether `sha` is in the set (a commit that is not a node never is).
    pub fn contains(&self, sha: &str) -> bool {
        self.graph.index.get(sha).is_some_and(|&i| self.member[i])
    }

    /// Adds `sha` (nothing when it is not a node).
    pub fn insert(&mut self, sha: &str) {
        if let Some(&i) = self.graph.index.get(sha) {
            self.member[i] = true;
        }
    }

    /// Removes `sha`.
    pub fn remove(&mut self, sha: &str) {
        if let Some(&i) = self.graph.index.get(sha) {
            self.member[i] = false;
        }
    }

    /// Adds every commit of `other` (of the same graph).
    pub fn extend(&mut self, other: &Ancestry<'_>) {
        for (m, o) in self.member.iter_mut().zip(&other.member) {
            *m |= *o;
        }
    }

    /// How many commits the set holds.
    pub fn len(&self) -> usize {
        self.member.iter().filter(|&&m| m).count()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        !self.member.contains(&true)
    }

    /// The commits of the set, newest (last in history order) first.
    pub fn newest_first(&self) -> impl Iterator<Item = &'g str> + '_ {
        let graph = self.graph;
        graph
            .order
            .iter()
            .rev()
            .filter(|&&i| self.member[i])
            .map(move |&i| graph.nodes[i].sha.as_str())
    }
}

impl CommitGraph {
    /// Builds the order of `nodes` (a SHA given twice keeps its first node). Edges to SHAs
    /// that are not nodes are gaps; a cycle (impossible in git, possible in uploads) is broken
    /// by placing the earliest unplaced commit (by time) as if its parents were placed.
    pub fn new(nodes: Vec<CommitNode>) -> CommitGraph {
        let mut index =
            rustc_hash::FxHashMap::with_capacity_and_hasher(nodes.len(), Default::default());
        let mut kept = Vec::with_capacity(nodes.len());
        for node in nodes {
            if !index.contains_key(&node.sha) {
                index.insert(node.sha.clone(), kept.len());
                kept.push(node);
            }
        }
        let nodes = kept;
        let n = nodes.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut pending = vec![0usize; n];
        for (i, node) in nodes.iter().enumerate() {
            let mut seen = HashSet::new();
            for p in &node.parents {
                if let Some(&j) = index.get(p) {
                    if j != i && seen.insert(j) {
                        children[j].push(i);
                        pending[i] += 1;
                    }
                }
            }
        }
        // Every node by tie-break key (time, first run, SHA): the order among commits that are
        // ready at once, and where a cycle is broken when none is. Ranked once, so the heap
        // holds numbers, not copies of SHAs (a read of the graph at every upload built it).
        let mut by_key: Vec<usize> = (0..n).collect();
        by_key.sort_by(|&a, &b| {
            let key = |i: usize| (nodes[i].time, nodes[i].first_seq, &nodes[i].sha, i);
            key(a).cmp(&key(b))
        });
        let mut rank = vec![0usize; n];
        for (r, &i) in by_key.iter().enumerate() {
            rank[i] = r;
        }
        let mut ready: BinaryHeap<Reverse<usize>> = (0..n)
            .filter(|&i| pending[i] == 0)
            .map(|i| Reverse(rank[i]))
            .collect();
        let mut next_forced = 0;
        let mut placed = vec![false; n];
        let mut order = Vec::with_capacity(n);
        while order.len() < n {
            let i = match ready.pop() {
                Some(Reverse(r)) if !placed[by_key[r]] => by_key[r],
                Some(_) => continue,
                None => {
                    while placed[by_key[next_forced]] {
                        next_forced += 1;
                    }
                    by_key[next_forced]
                }
            };
            placed[i] = true;
            order.push(i);
            for &c in &children[i] {
                pending[c] = pending[c].saturating_sub(1);
                if pending[c] == 0 && !placed[c] {
                    ready.push(Reverse(rank[c]));
                }
            }
        }
        let mut position = vec![0; n];
        for (pos, &i) in order.iter().enumerate() {
            position[i] = pos;
        }
        let parents = nodes
            .iter()
            .map(|node| {
                node.parents
                    .iter()
                    .filter_map(|p| index.get(p).copied())
                    .collect()
            })
            .collect();
        let open = nodes
            .iter()
            .map(|node| {
                node.parents.is_empty() || node.parents.iter().any(|p| !index.contains_key(p))
            })
            .collect();
        CommitGraph {
            nodes,
            index,
            order,
            position,
            parents,
            open,
        }
    }

    /// The nodes as given to [`CommitGraph::new`] (a SHA given twice: its first node).
    pub fn nodes(&self) -> &[CommitNode] {
        &self.nodes
    }

    /// The commits in history order.
    pub fn order(&self) -> impl Iterator<Item = &str> {
        self.order.iter().map(|&i| self.nodes[i].sha.as_str())
    }

    /// A commit's place in the history order (`None` for a commit that is not a node).
    pub fn position(&self, sha: &str) -> Option<usize> {
        self.index.get(sha).map(|&i| self.position[i])
    }

    /// The node of a commit.
    pub fn node(&self, sha: &str) -> Option<&CommitNode> {
        self.index.get(sha).map(|&i| &self.nodes[i])
    }

    /// The known ancestors of `sha` (itself excluded), reached through parents that are nodes.
    pub fn ancestors(&self, sha: &str) -> HashSet<&str> {
        let Some(&start) = self.index.get(sha) else {
            return HashSet::new();
        };
        let (found, _) = self.walk(start);
        self.shas(&found)
    }

    /// The commits that may be ancestors of `sha` (itself excluded): its known ancestors, and,
    /// when the walk through its parents reaches a gap (a parent that is not a node, or a
    /// commit without parents), every commit ordered before the last such gap. A commit not
    /// in the graph has no known ancestry: every node may be its ancestor.
    pub fn possible_ancestors(&self, sha: &str) -> HashSet<&str> {
        self.shas(&self.possible_ancestry(sha).member)
    }

    /// [`CommitGraph::possible_ancestors`] as an [`Ancestry`]: linear in the commits, without
    /// hashing them.
    pub fn possible_ancestry(&self, sha: &str) -> Ancestry<'_> {
        let Some(&start) = self.index.get(sha) else {
            return Ancestry {
                graph: self,
                member: vec![true; self.nodes.len()],
            };
        };
        let (mut member, gap) = self.walk(start);
        if let Some(limit) = gap {
            for &i in &self.order[..limit] {
                member[i] = true;
            }
        }
        member[start] = false;
        Ancestry {
            graph: self,
            member,
        }
    }

    /// The SHAs of the nodes set in `member` (by `nodes` index).
    fn shas(&self, member: &[bool]) -> HashSet<&str> {
        member
            .iter()
            .enumerate()
            .filter(|(_, &m)| m)
            .map(|(i, _)| self.nodes[i].sha.as_str())
            .collect()
    }

    /// The commits other than `sha` whose history `sha` changes: those that may have it as an
    /// ancestor, and those whose possible ancestors ([`CommitGraph::possible_ancestors`]) are
    /// others with `sha` in the graph than without it (its arrival closed a gap: a commit
    /// uploaded before its parent took unrelated commits as possible ancestors until then). In
    /// history order. Empty for the newest commit of the order, or one not in the graph.
    ///
    /// What an upload of `sha` must have analyzed again, besides `sha` itself. O(n²) in the
    /// commits (a walk per commit in both graphs); only called when `sha` is not the newest.
    pub fn affected_by(&self, sha: &str) -> Vec<&str> {
        let Some(&at) = self.index.get(sha) else {
            return Vec::new();
        };
        if self.order.last() == Some(&at) {
            return Vec::new();
        }
        let without = CommitGraph::new(
            self.order
                .iter()
                .filter(|&&i| i != at)
                .map(|&i| self.nodes[i].clone())
                .collect(),
        );
        self.order()
            .filter(|&c| c != sha)
            .filter(|&c| {
                let mut now = self.possible_ancestors(c);
                now.remove(sha) || now != without.possible_ancestors(c)
            })
            .collect()
    }

    /// Known ancestors of node `start` (by `nodes` index; itself not set), and the order
    /// position of the latest gap its walk reached.
    fn walk(&self, start: usize) -> (Vec<bool>, Option<usize>) {
        let mut found = vec![false; self.nodes.len()];
        let mut visited = vec![false; self.nodes.len()];
        visited[start] = true;
        let mut gap: Option<usize> = None;
        let mut stack = vec![start];
        while let Some(i) = stack.pop() {
            for &j in &self.parents[i] {
                if !visited[j] {
                    visited[j] = true;
                    found[j] = true;
                    stack.push(j);
                }
            }
            if self.open[i] {
                let pos = self.position[i];
                gap = Some(gap.map_or(pos, |g| g.max(pos)));
            }
        }
        (found, gap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(sha: &str, parents: &[&str], hour: u32, seq: i64) -> CommitNode {
        CommitNode {
            sha: sha.into(),
            parents: parents.iter().map(|p| p.to_string()).collect(),
            time: format!("2026-01-01T{hour:02}:00:00Z").parse().unwrap(),
            first_seq: seq,
        }
    }

    fn order(g: &CommitGraph) -> Vec<&str> {
        g.order().collect()
    }

    fn sorted<'a>(set: HashSet<&'a str>) -> Vec<&'a str> {
        let mut v: Vec<&str> = set.into_iter().collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn a_parent_uploaded_after_its_children_affects_them_and_the_commits_it_reordered() {
        // 1 ← 2 ← 3 ← 4 ← 5, committer times running backwards; 4 and 5 uploaded first, then
        // 1 (a root, the latest time: ordered after 4 and 5, taking them as possible
        // ancestors), 2, and last 3, which joins the two lines.
        let g = CommitGraph::new(vec![
            node("4", &["3"], 6, 1),
            node("5", &["4"], 5, 2),
            node("1", &[], 9, 3),
            node("2", &["1"], 8, 4),
            node("3", &["2"], 7, 5),
        ]);
        assert_eq!(order(&g), ["1", "2", "3", "4", "5"]);
        // 4 and 5 now descend from 3; 1 and 2 lost 4 and 5 as possible ancestors.
        assert_eq!(g.affected_by("3"), ["1", "2", "4", "5"]);
        // 5 is the newest: nothing reads it.
        assert!(g.affected_by("5").is_empty());
        assert!(g.affected_by("nope").is_empty());
    }

    #[test]
    fn another_run_of_a_commit_affects_only_the_commits_after_it() {
        // A linear history with parents: a run of b arrives after c and d are stored.
        let g = CommitGraph::new(vec![
            node("a", &[], 1, 1),
            node("b", &["a"], 2, 2),
            node("c", &["b"], 3, 3),
            node("d", &["c"], 4, 4),
        ]);
        assert_eq!(g.affected_by("b"), ["c", "d"]);
        // Without parents (a nightly job that sends none), time orders, and a gap makes every
        // earlier commit a possible ancestor: the same commits.
        let g = CommitGraph::new(vec![
            node("a", &[], 1, 1),
            node("b", &[], 2, 2),
            node("c", &[], 3, 3),
            node("d", &[], 4, 4),
        ]);
        assert_eq!(g.affected_by("b"), ["c", "d"]);
        assert!(g.affected_by("d").is_empty());
    }

    #[test]
    fn a_child_with_an_earlier_time_still_follows_its_parent() {
        // c's committer time (01:00) is before its parent b's (05:00), uploaded first.
        let g = CommitGraph::new(vec![
            node("c", &["b"], 1, 1),
            node("a", &["root"], 3, 2),
            node("b", &["a"], 5, 3),
        ]);
        assert_eq!(order(&g), ["a", "b", "c"]);
        assert_eq!(g.position("c"), Some(2));
        assert_eq!(g.position("x"), None);
    }

    #[test]
    fn time_orders_only_unrelated_commits() {
        let g = CommitGraph::new(vec![
            node("x", &[], 4, 1),
            node("a", &[], 2, 2),
            node("b", &["a"], 1, 3),
            node("y", &[], 3, 4),
        ]);
        // a (02:00) first; then b (its child) is ready at 01:00, before y (03:00) and x (04:00).
        assert_eq!(order(&g), ["a", "b", "y", "x"]);
    }

    #[test]
    fn equal_times_fall_back_to_upload_order() {
        let g = CommitGraph::new(vec![node("b", &[], 1, 1), node("a", &[], 1, 2)]);
        assert_eq!(order(&g), ["b", "a"]);
    }

    #[test]
    fn cycles_are_broken_and_every_commit_is_placed() {
        let g = CommitGraph::new(vec![
            node("a", &["b"], 1, 1),
            node("b", &["a"], 2, 2),
            node("c", &["b"], 9, 3),
        ]);
        assert_eq!(order(&g), ["a", "b", "c"]);
    }

    /// a ← b ← c ← d, a ← s (a sibling line), d a merge of c and s; e after d; a's parent was
    /// never uploaded.
    fn merged_sibling_line() -> CommitGraph {
        CommitGraph::new(vec![
            node("a", &["gone"], 1, 1),
            node("b", &["a"], 2, 2),
            node("s", &["a"], 3, 3),
            node("c", &["b"], 4, 4),
            node("d", &["c", "s"], 5, 5),
            node("e", &["d"], 6, 6),
        ])
    }

    #[test]
    fn ancestors_exclude_siblings_and_descendants() {
        let g = merged_sibling_line();
        assert_eq!(sorted(g.ancestors("c")), ["a", "b"]);
        // The walk of c reaches a gap only at a (its parent was never uploaded): nothing is
        // before a, so s stays out.
        assert_eq!(sorted(g.possible_ancestors("c")), ["a", "b"]);
        assert_eq!(sorted(g.possible_ancestors("d")), ["a", "b", "c", "s"]);
        assert_eq!(sorted(g.possible_ancestors("a")), Vec::<&str>::new());
    }

    #[test]
    fn a_gap_admits_what_is_ordered_before_it() {
        // n1, n2, n3: nightly commits whose parents were never uploaded; m's parent is n3.
        let g = CommitGraph::new(vec![
            node("n1", &["p1"], 1, 1),
            node("n2", &["p2"], 2, 2),
            node("n3", &["p3"], 3, 3),
            node("m", &["n3"], 4, 4),
            node("late", &[], 9, 5),
        ]);
        assert_eq!(sorted(g.possible_ancestors("n3")), ["n1", "n2"]);
        assert_eq!(sorted(g.possible_ancestors("m")), ["n1", "n2", "n3"]);
        // A commit without parents (shallow clone) is a gap itself: the time order.
        assert_eq!(
            sorted(g.possible_ancestors("late")),
            ["m", "n1", "n2", "n3"]
        );
        // A commit outside the graph may follow anything.
        assert_eq!(g.possible_ancestors("zz").len(), 5);
    }

    #[test]
    fn an_ancestry_lists_its_commits_newest_first_and_answers_membership() {
        let g = merged_sibling_line();
        let d = g.possible_ancestry("d");
        assert_eq!(d.newest_first().collect::<Vec<_>>(), ["c", "s", "b", "a"]);
        assert_eq!(d.len(), 4);
        assert!(d.contains("s") && !d.contains("d") && !d.contains("e") && !d.contains("zz"));
        let mut c = g.possible_ancestry("c");
        assert_eq!(c.newest_first().collect::<Vec<_>>(), ["b", "a"]);
        c.insert("c");
        c.extend(&g.possible_ancestry("s"));
        c.remove("b");
        assert_eq!(c.newest_first().collect::<Vec<_>>(), ["c", "a"]);
        assert!(g.possible_ancestry("a").is_empty());
        // Outside the graph: every commit, newest first.
        assert_eq!(
            g.possible_ancestry("zz").newest_first().collect::<Vec<_>>(),
            ["e", "d", "c", "s", "b", "a"]
        );
    }
}
