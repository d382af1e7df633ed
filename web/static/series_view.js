// benchtrail series explorer: the pure parts of the series page's chart, kept apart from the
// drawing (series.js) so each file has one purpose. Exposes window.benchtrailSeriesView:
//
// - readView(search) / writeView(view): the whole chart view in the page's query string
//   (x=commit|time, log=1, from/to = the zoomed x range, overlay=<series id>, @<branch> for
//   this series on another branch, or none), so a view can be shared as a link; `branch` and any other parameter are kept as they are.
// - baselineBand(commits, window): per commit, the rolling baseline the analysis compares
//   against: mean and ±1σ (sample standard deviation) of the per-commit means of the up to
//   `window` latest earlier commits with a mean (null: every run excluded); at least two,
//   else no band there.
(function () {
  "use strict";

  function num(v) {
    if (v === null || v === "") return null;
    var n = Number(v);
    return isFinite(n) ? n : null;
  }

  function readView(search) {
    var q = new URLSearchParams(search);
    var from = num(q.get("from")), to = num(q.get("to"));
    return {
      x: q.get("x") === "time" ? "time" : "commit",
      log: q.get("log") === "1",
      // A range only when both ends are given and ordered.
      from: from != null && to != null && from < to ? from : null,
      to: from != null && to != null && from < to ? to : null,
      overlay: q.get("overlay") || null,
    };
  }

  // Rewrites the query string in place (no history entry: the view is not a navigation).
  function writeView(view) {
    var q = new URLSearchParams(window.location.search);
    function put(k, v) { if (v == null || v === "") q.delete(k); else q.set(k, v); }
    put("x", view.x === "time" ? "time" : null);
    put("log", view.log ? "1" : null);
    put("from", view.from == null ? null : String(view.from));
    put("to", view.to == null ? null : String(view.to));
    put("overlay", view.overlay);
    var s = q.toString();
    history.replaceState(history.state, "", window.location.pathname + (s ? "?" + s : "") + window.location.hash);
  }

  // commits: [{mean | null}] in commit order. Returns [{mean, lo, hi} | null] aligned with them.
  function baselineBand(commits, window) {
    var w = Math.max(1, window || 10);
    return commits.map(function (_, k) {
      // The up to `w` latest earlier commits that have a mean (not wholly excluded).
      var prev = [];
      for (var j = k - 1; j >= 0 && prev.length < w; j--) if (commits[j].mean != null) prev.unshift(commits[j].mean);
      if (prev.length < 2) return null;
      var mean = prev.reduce(function (a, b) { return a + b; }, 0) / prev.length;
      var v = prev.reduce(function (a, b) { return a + (b - mean) * (b - mean); }, 0) / (prev.length - 1);
      var sd = Math.sqrt(v);
      return { mean: mean, lo: mean - sd, hi: mean + sd };
    });
  }

  window.benchtrailSeriesView = { readView: readView, writeView: writeView, baselineBand: baselineBand };
})();
